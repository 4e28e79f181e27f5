/*
 * probe.c - `xo probe [--device D ...] [--json] [--budget S]`: what one
 * step's cost is made of on each device (struct xo_probe, like clpeak):
 * launch latency of an empty kernel, host enqueue cost, sync, transfer
 * latency and bandwidth, the FMA peak and the streaming memory bandwidth;
 * for cpu the pool round and the thread hand-off. docs/perf.md ("Probe")
 * says how each figure is measured.
 *
 * Default devices: cpu and every OpenCL device found (a device that does not
 * open is skipped with a line on stderr); a device named with --device that
 * does not open, or has no probe (ref), is bad input: exit 2 before anything
 * is measured. A probe that fails (an OpenCL error, a kernel whose checked
 * result is wrong) exits 1 with one line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd.h"
#include "jsonout.h"
#include "xo.h"
#include "xo/backend.h"

#ifdef XO_HAVE_CL
#include "xo/cl.h"
#endif

#define PROBE_MAX_DEVICES 16
#define PROBE_DEFAULT_BUDGET 3.0
#define PROBE_MAX_BUDGET 60.0

static const char usage[] =
    "usage: xo probe [--device D ...] [--json] [--budget S]\n"
    "  D: cpu, cl or cl:PLATFORM:DEVICE (default: cpu and every OpenCL device found)\n"
    "  S: seconds per device, in (0, 60] (default 3)\n"
    "  per device: kernel launch latency, host enqueue cost, sync, host<->device\n"
    "  transfer latency and bandwidth, FMA peak (GFLOP/s), streaming memory\n"
    "  bandwidth; for cpu the thread-pool round and hand-off (docs/perf.md)\n";

struct probe_dev {
	char spec[32];      /* what opens it: "cpu", "cl", "cl:0:1" */
	bool named;         /* given with --device */
	struct xo_backend *be;
	struct xo_probe p;
};

/* The default list: cpu, then every OpenCL device ("cl" when there is one,
 * "cl:P:D" each when there are several). */
static int default_devices(struct probe_dev *d)
{
	int n = 0;

	snprintf(d[n++].spec, sizeof(d->spec), "cpu");
#ifdef XO_HAVE_CL
	{
		struct xo_cl_candidate *cand = NULL;
		size_t ncand = 0;
		int first = n;

		/* the records the backend chooses from: devices it skips
		 * (not available, a platform's error) are not probed */
		if (xo_cl_candidates(&cand, &ncand) != XO_OK)
			ncand = 0;
		for (size_t i = 0; i < ncand && n < PROBE_MAX_DEVICES; i++)
			if (cand[i].err == CL_SUCCESS && cand[i].available)
				snprintf(d[n++].spec, sizeof(d->spec), "cl:%u:%u", cand[i].platform,
				         cand[i].device);
		free(cand);
		if (n == first + 1)
			snprintf(d[first].spec, sizeof(d->spec), "cl");
	}
#endif
	return n;
}

/* "12.3 us" for seconds. */
static void print_time(FILE *f, const char *what, double s, const char *how)
{
	if (isnan(s))
		return;
	fprintf(f, "  %-13s %10.2f %-8s %s\n", what, s * 1e6, "us", how);
}

static void print_rate(FILE *f, const char *what, double v, double scale, const char *unit,
		       const char *how)
{
	if (isnan(v))
		return;
	fprintf(f, "  %-13s %10.2f %-8s %s\n", what, v / scale, unit, how);
}

static void print_text(FILE *f, const struct probe_dev *d)
{
	const struct xo_probe *p = &d->p;
	bool cl = strcmp(xo_backend_name(d->be), "cpu") != 0;

	fprintf(f, "== %s\n  %s\n", d->spec, xo_backend_describe(d->be));
	fprintf(f, "  %-13s %10d %s\n", "units", p->units, cl ? "compute units" : "threads");
	print_time(f, "launch", p->launch_s,
		   cl ? "empty kernel, enqueue to completion" : "pool round, empty task");
	print_time(f, "handoff", p->handoff_s, "one part to one worker and back");
	print_time(f, "enqueue", p->enqueue_s, "host cost per launch, back to back");
	print_time(f, "sync", p->sync_s, "clFinish on an idle queue");
	print_time(f, "h2d latency", p->h2d_lat_s, "4-byte blocking write");
	print_rate(f, "h2d bandwidth", p->h2d_bw, 1e9, "GB/s", "large blocking write");
	print_time(f, "d2h latency", p->d2h_lat_s, "4-byte blocking read");
	print_rate(f, "d2h bandwidth", p->d2h_bw, 1e9, "GB/s", "large blocking read");
	print_rate(f, "flops", p->flops, 1e9, "GFLOP/s", "FP32 FMA peak, whole device");
	print_rate(f, "mem bandwidth", p->mem_bw, 1e9, "GB/s",
		   cl ? "copy kernel, read + written" : "triad, read + written");
	print_time(f, "serial step", p->step_s,
		   cl ? "one work-group, barrier + 16-term dot from global memory"
		      : "GEMM call 1 x 32 -> 64 + gate pass, one thread");
	if (isfinite(p->lane_mac_s))
		fprintf(f, "  %-13s %10.2f %-8s %s\n", "lane chain", p->lane_mac_s * 1e9, "ns",
			"one multiply-add of one work-item's dependent chain");
	fprintf(f, "  %-13s %10.2f s\n", "probe took", p->wall_s);
}

/* One device as a JSON object: device, desc, and every struct xo_probe field
 * under its own name (xo_probe_json_set: null where not finite). */
static json_t *probe_json(const struct probe_dev *d)
{
	const struct xo_probe *p = &d->p;
	json_t *o = json_object();

	json_object_set_new(o, "device", json_string(d->spec));
	json_object_set_new(o, "desc", json_string(xo_backend_describe(d->be)));
	xo_probe_json_set(o, p);
	return o;
}

static bool parse_budget(const char *s, double *out)
{
	char *end;
	double v;

	if (!*s)
		return false;
	v = strtod(s, &end);
	if (*end || !(v > 0) || v > PROBE_MAX_BUDGET)
		return false;
	*out = v;
	return true;
}

int xo_cmd_probe(int argc, char **argv)
{
	struct probe_dev dev[PROBE_MAX_DEVICES];
	double budget = PROBE_DEFAULT_BUDGET;
	bool json = false;
	int ndev = 0, nok = 0, rc = 0;

	memset(dev, 0, sizeof(dev));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!strcmp(a, "--json")) {
			json = true;
			continue;
		}
		if (!strcmp(a, "--device") || !strcmp(a, "--budget")) {
			if (!val)
				return xo_usage_error("probe", "%s: missing value", a);
		} else {
			return xo_usage_error("probe", "unknown option '%s'", a);
		}
		if (!strcmp(a, "--device")) {
			if (ndev == PROBE_MAX_DEVICES)
				return xo_usage_error("probe", "at most %d devices", PROBE_MAX_DEVICES);
			if (strlen(val) >= sizeof(dev[0].spec))
				return xo_usage_error("probe", "--device '%.40s...': too long", val);
			snprintf(dev[ndev].spec, sizeof(dev[0].spec), "%s", val);
			dev[ndev++].named = true;
		} else if (!parse_budget(val, &budget)) {
			return xo_usage_error("probe", "--budget %s: expected seconds in (0, %g]", val,
					      PROBE_MAX_BUDGET);
		}
		i++;
	}
	/* Named devices are opened (and so validated) before anything runs. */
	for (int i = 0; i < ndev; i++) {
		if (xo_backend_open(dev[i].spec, &dev[i].be)) {
			rc = xo_usage_error("probe", "--device %s: %s", dev[i].spec, xo_last_error());
			goto out_close;
		}
		if (!dev[i].be->iface->probe) {
			rc = xo_usage_error("probe", "no probe for backend %s",
					    xo_backend_name(dev[i].be));
			goto out_close;
		}
	}
	if (!ndev) {
		ndev = default_devices(dev);
		for (int i = 0; i < ndev; i++)
			if (xo_backend_open(dev[i].spec, &dev[i].be)) {
				fprintf(stderr, "xo probe: %s skipped: %s\n", dev[i].spec,
					xo_last_error());
				dev[i].be = NULL;
			}
	}
	for (int i = 0; i < ndev; i++) {
		if (!dev[i].be)
			continue;
		if (xo_backend_probe(dev[i].be, budget, &dev[i].p)) {
			fprintf(stderr, "xo probe: %s: %s\n", dev[i].spec, xo_last_error());
			rc = 1;
			goto out_close;
		}
		if (!json)
			print_text(stdout, &dev[i]);
		nok++;
	}
	if (json) {
		json_t *arr = json_array();

		for (int i = 0; i < ndev; i++)
			if (dev[i].be)
				json_array_append_new(arr, probe_json(&dev[i]));
		xo_perf_json_print(arr, stdout);
		json_decref(arr);
	} else if (!nok) {
		fprintf(stderr, "xo probe: no device opened\n");
	}

out_close:
	for (int i = 0; i < ndev; i++)
		xo_backend_close(dev[i].be);
	return rc;
}
