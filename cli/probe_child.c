/*
 * probe_child.c - a device's probe (xo_backend_probe) run in a child process,
 * `xo probe --device D --json --budget S`, started through perfdb/proc.h's
 * xo_proc_run (an argument vector, no shell) from this executable's own path.
 *
 * Why: `xo seed` closes with the cost model's diagnosis, which needs the
 * machine's memory bandwidth; the cpu probe's STREAM triad must stream arrays
 * larger than the last-level cache (STREAM's rule: each array at least 4x
 * the caches; here 2x the LLC per array, three arrays: 192 MiB for a 32 MiB
 * L3). Run in the experiment's process, those arrays became its peak RSS
 * (241 MB for a 49 MB experiment, against a 64 MB target). In a child they
 * are the child's: the experiment's process keeps its own peak, and the
 * child's peak is reported beside it.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd.h"
#include "jsonout.h"
#include "proc.h"
#include "xo.h"


enum xo_status xo_cli_probe_child(const char *device, double budget_s, struct xo_probe *out,
                                  double *child_rss_mb)
{
	char self[PATH_MAX], budget[32];
	const char *argv[] = {self, "probe", "--device", device, "--json", "--budget", budget,
	                      NULL};
	struct xo_proc p = {.argv = argv, .capture = true};
	struct rusage ru;
	enum xo_status st;
	json_error_t jerr;
	json_t *root, *o;
	char *text = NULL;
	ssize_t len;
	int code = -1;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0 || len >= (ssize_t)sizeof(self) - 1)
		return xo_error(XO_EIO, "probe child: cannot read /proc/self/exe");
	self[len] = 0;
	snprintf(budget, sizeof(budget), "%g", budget_s);
	st = xo_proc_run(&p, &code, &text, NULL);
	if (st)
		goto out_free;
	if (code) {
		st = xo_error(XO_EIO, "probe child: `xo probe --device %s` exited %d", device, code);
		goto out_free;
	}
	root = json_loads(text, 0, &jerr);
	o = json_is_array(root) && json_array_size(root) == 1 ? json_array_get(root, 0) : NULL;
	if (!json_is_object(o)) {
		st = xo_error(XO_EFORMAT, "probe child: `xo probe --json` printed no device object");
		json_decref(root);
		goto out_free;
	}
	xo_probe_json_get(o, out);
	json_decref(root);
	if (!(out->flops > 0) || !(out->mem_bw > 0)) {
		st = xo_error(XO_EFORMAT, "probe child: no flops or mem_bw in `xo probe --json`");
		goto out_free;
	}
	/* The largest peak among this process's waited-for children: the probe
	 * is the only child of `xo seed` that holds more than a few MB. */
	getrusage(RUSAGE_CHILDREN, &ru);
	if (child_rss_mb)
		*child_rss_mb = (double)ru.ru_maxrss / 1024.0;
out_free:
	free(text);
	return st;
}
