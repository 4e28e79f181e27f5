/*
 * explain.c - `xo explain`: why a device is fast or slow for a model, per
 * batch size (perfdb/explain.c does the work; docs/explain.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "explain.h"
#include "xo.h"

static const char usage[] =
    "usage: xo explain [--model M] [--device D ...] [--batch N ...] [--json] [--repeat N]\n"
    "                  [--budget S] [--no-progress]\n"
    "  per device and batch size: a training step and a predict call measured and\n"
    "  predicted from the device's probe (launches x latency + bytes / bandwidth +\n"
    "  per-layer roofline), the split of each (launch/transfer/compute/other) and a\n"
    "  one-sentence diagnosis; then the crossover batch (measured, with an interval,\n"
    "  and predicted) and what would move it.\n"
    "  --model M    a model spec file (default: the seed model)\n"
    "  --device D   cpu, cl or cl:PLATFORM:DEVICE (default: cpu, and cl when present)\n"
    "  --batch N    1..1048576 (default: 1, 2, 4 .. 8192)\n"
    "  --repeat N   timed repetitions per point, at least (1..50, default 5)\n"
    "  --budget S   seconds of probing per device (0.05..30, default 1)\n"
    "  --json       one JSON object on stdout (measured_*, predicted_*, diagnosis)\n"
    "  --no-progress  no progress lines on stderr (a line per device and batch)\n";

int xo_cmd_explain(int argc, char **argv)
{
	struct xo_explain_options o = {
	    .repeat = 5, .probe_budget_s = 1.0, .out = stdout, .err = stderr, .progress = stderr};
	int64_t v;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!strcmp(a, "--json")) {
			o.json = true;
			continue;
		}
		if (!strcmp(a, "--no-progress")) {
			o.progress = NULL;
			continue;
		}
		if (!val)
			return xo_usage_error("explain", "unknown option or missing value: '%s'",
			                      a);
		if (!strcmp(a, "--device")) {
			if (o.ndevices == XO_EXPLAIN_MAX_DEVICES)
				return xo_usage_error("explain", "at most %d devices",
				                      XO_EXPLAIN_MAX_DEVICES);
			if (xo_cli_gpu_requested("explain", val))
				return 2;
			o.devices[o.ndevices++] = val;
		} else if (!strcmp(a, "--batch")) {
			if (o.nbatches == XO_EXPLAIN_MAX_BATCHES)
				return xo_usage_error("explain", "at most %d batch sizes",
				                      XO_EXPLAIN_MAX_BATCHES);
			if (!xo_cli_parse_i64(val, 1, 1 << 20, &v))
				return xo_usage_error(
				    "explain", "--batch %s: expected an integer in 1..1048576",
				    val);
			for (int k = 0; k < o.nbatches; k++)
				if (o.batches[k] >= v)
					return xo_usage_error(
					    "explain", "--batch %s: batch sizes must increase",
					    val);
			o.batches[o.nbatches++] = v;
		} else if (!strcmp(a, "--repeat")) {
			if (!xo_cli_parse_i64(val, 1, 50, &v))
				return xo_usage_error(
				    "explain", "--repeat %s: expected an integer in 1..50", val);
			o.repeat = (int)v;
		} else if (!strcmp(a, "--budget")) {
			char *end = NULL;
			double b = strtod(val, &end);

			if (!end || *end || end == val || !(b >= 0.05 && b <= 30))
				return xo_usage_error(
				    "explain", "--budget %s: expected seconds in 0.05..30", val);
			o.probe_budget_s = b;
		} else if (!strcmp(a, "--model")) {
			o.model_path = val;
		} else {
			return xo_usage_error("explain", "unknown option '%s'", a);
		}
		i++;
	}
	if (!o.nbatches)
		for (int64_t b = 1; b <= 8192; b *= 2)
			o.batches[o.nbatches++] = b;
	/* A named device or model that does not open is bad input: refuse it
	 * before anything is measured. */
	for (int i = 0; i < o.ndevices; i++) {
		struct xo_backend *be;
		struct xo_model *m = NULL;

		if (!strcmp(o.devices[i], "ref") || !strncmp(o.devices[i], "ref:", 4))
			return xo_usage_error("explain",
			                      "--device %s: the reference backend is not a device "
			                      "to explain (cpu, cl or cl:PLATFORM:DEVICE)",
			                      o.devices[i]);
		if (xo_backend_open(o.devices[i], &be))
			return xo_usage_error("explain", "%s", xo_last_error());
		if (o.model_path && xo_model_open(o.model_path, be, 1, &m)) {
			xo_backend_close(be);
			return xo_usage_error("explain", "%s", xo_last_error());
		}
		xo_model_close(m);
		xo_backend_close(be);
	}
	if (!o.ndevices) {
		struct xo_backend *be;

		o.devices[o.ndevices++] = "cpu";
		if (!xo_backend_open("cl", &be)) {
			o.devices[o.ndevices++] = "cl";
			xo_backend_close(be);
		} else {
			fprintf(o.json ? stderr : stdout, "== cl: skipped (%s)\n", xo_last_error());
		}
		if (o.model_path) {
			struct xo_model *m = NULL;

			if (xo_backend_open("cpu", &be))
				return xo_usage_error("explain", "%s", xo_last_error());
			if (xo_model_open(o.model_path, be, 1, &m)) {
				xo_backend_close(be);
				return xo_usage_error("explain", "%s", xo_last_error());
			}
			xo_model_close(m);
			xo_backend_close(be);
		}
	}
	return xo_explain_run(&o);
}
