/*
 * split.h - one decomposition of a step's wall time whose parts add up, and
 * the sentence that names the dominant part. Shared by `xo explain` (the
 * measured and the predicted split), `xo seed` and the perf report, so that
 * all three say the same thing about the same numbers.
 *
 * The OpenCL event totals overlap: the host waits (wait_ns) while kernels run
 * (kernel_ns), so their sum exceeds the wall time and "wait 50%" would read as
 * if half the step were wasted. Here the wall time W of a step is split as
 *   compute  = kernel time (device busy computing)
 *   transfer = H2D + D2H time (device busy copying)
 *   launch   = the rest of W during which the device was idle because of
 *              launch latency, host enqueue and synchronisation
 *   other    = the rest of W spent in host work outside enqueue and wait
 * On an in-order queue the device commands do not overlap each other, so
 * compute + transfer <= W; when clock skew makes them exceed W they are
 * scaled down to W. other is the host time outside enqueue and wait, capped
 * at the idle rest. The four parts are >= 0 and add up to W exactly.
 */
#ifndef XO_PERFDB_SPLIT_H
#define XO_PERFDB_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum xo_split_part { XO_SPLIT_LAUNCH, XO_SPLIT_TRANSFER, XO_SPLIT_COMPUTE, XO_SPLIT_OTHER,
	             XO_SPLIT_COUNT };

/* "launch", "transfer", "compute", "other" (JSON field suffixes) */
const char *xo_split_part_name(enum xo_split_part p);

struct xo_split {
	double part_s[XO_SPLIT_COUNT]; /* seconds, >= 0, sum == wall_s */
	double wall_s;
	double launches;               /* launches in the step (0 for a host backend) */
	/* Of part_s[XO_SPLIT_COMPUTE]: the recurrent layers' time steps run in
	 * series, each waiting for the last (perfdb/cost.h), where they and not
	 * the FLOP or byte rate set a layer's time; 0 where none do. The
	 * leading such layer (the largest serial time) names the sentence. */
	double serial_s;
	double serial_passes;  /* the leading layer: 1 (forward) or 2 (and back through time) */
	double serial_steps;   /* its time steps per pass */
	double serial_step_s;  /* its time per step: its serial time / passes / steps */
	char serial_layer[24]; /* "LSTM(64)" */
	int serial_more;       /* other recurrent layers counted in serial_s */
};

/* The split of one step of wall_s seconds from per-step event totals (all in
 * seconds: enqueue, h2d, kernel, d2h, wait) and launch count. */
void xo_split_from_events(double wall_s, double enqueue_s, double h2d_s, double kernel_s,
                          double d2h_s, double wait_s, double launches, struct xo_split *out);
/* A host backend's step: all compute (the host runs the kernels inline). */
void xo_split_host(double wall_s, struct xo_split *out);

/* A duration with 3 significant digits in us, ms or s ("40 us", "1.23 ms",
 * "3.1 s"); "-" when not finite. Returns buf. Every sentence and table of
 * the diagnosis, explain and the report writes times with it. */
char *xo_fmt_seconds(double s, char *buf, size_t size);

/* The part with the largest share (ties: the first in enum order). */
enum xo_split_part xo_split_dominant(const struct xo_split *s);

/* One sentence, no trailing newline, into buf: "at batch 32 the cl train step
 * is 70% launch and sync latency: 2 launches x 40 us" / "... is
 * compute-bound (81% in kernels)" / "... is transfer-bound (55% in
 * host-device copies)" / "... is 60% host work outside the device" / "... is
 * 85% serial time steps: 2 x 50 steps x 9 us (LSTM(64))" when compute
 * dominates and serial_s is at least the rest of compute and every other
 * part (xo_split_serial_dominates). what is "train step" or "predict call".
 * Returns buf. */
bool xo_split_serial_dominates(const struct xo_split *s);
char *xo_split_diagnose(const struct xo_split *s, const char *device, const char *what,
                        int64_t batch, char *buf, size_t size);

#endif /* XO_PERFDB_SPLIT_H */
