/*
 * verdict.h - the one decision rule of perfdb: whether a change between two
 * sets of timing samples is real (docs/perf.md, "The decision rule"). compare
 * (and so continuous, bisect and the report, which judge through it) and
 * detect's step confirmation all call xo_perf_verdict_judge, so the same
 * samples get the same verdict whichever command asks.
 */
#ifndef XO_PERFDB_VERDICT_H
#define XO_PERFDB_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

/* One side of a comparison: its samples run after run (a "run" is a group
 * measured together: a recorded run for compare, a commit's point for
 * detect). */
struct xo_perf_sample_set {
	const double *x; /* every sample, in run order */
	const size_t *n; /* samples of each run; NULL: one run of nx samples */
	size_t nruns;
	size_t nx; /* total samples */
};

struct xo_perf_rule {
	double threshold; /* relative change that matters (0.05; counts 0.005) */
	double alpha;     /* Mann-Whitney level (0.002; a caller that tests many
	                     places divides it) */
	double noise;     /* run-to-run noise bar of the series (series_noise), 0:
	                     unknown; used only when a side has a single run */
	int family;       /* series x looks the run-level test is corrected for (>= 1) */
	bool counts;      /* a deterministic metric (instruction counts) */
	bool interval;    /* compute the 95% interval (SAME needs it; detect's long
	                     segments skip it) */
};

struct xo_perf_verdict {
	int sign;          /* confirmed change: +1 slower, -1 faster; 0 none */
	bool same;         /* the 95% interval lies within -+threshold */
	bool loaded;       /* load seen in the samples: judged on the fast part */
	double base, head; /* the statistic each side is judged on: the median of
	                      the samples, or under load of the runs' faster halves */
	double change;     /* head / base - 1 */
	double p;          /* Mann-Whitney p (NAN for counts) */
	double bar;        /* max(threshold, base spread, noise) the change must pass */
	double lo, hi;     /* 95% interval of log(head / base); -inf/+inf when unknown */
	double min_change; /* the run minima's change (min head / min base - 1) */
	char why[160];     /* "  [reason]" when sign is 0 for a reason worth saying */
};

/*
 * A side is loaded when, in one of its runs, a tenth of the samples lie more
 * than threshold above the run's fastest one (q90 > (1 + threshold) min): the
 * spread within a run is then as large as a change worth reporting, and
 * other work on the machine, which only ever adds time, can move a median
 * and quartiles by that much alone. (Offsets between runs are not load of
 * this kind: the run-level test judges them.)
 */
bool xo_perf_side_loaded(const struct xo_perf_sample_set *s, double threshold);

/* The rule (verdict.c's file comment); v is filled whole. */
void xo_perf_verdict_judge(const struct xo_perf_sample_set *base,
                           const struct xo_perf_sample_set *head, const struct xo_perf_rule *r,
                           struct xo_perf_verdict *v);

/* "SLOWER", "FASTER", "SAME" or "UNKNOWN" (before any "unchanged code"
 * lowering, which is the caller's: it knows the kernel versions). */
const char *xo_perf_verdict_word(const struct xo_perf_verdict *v);

#endif /* XO_PERFDB_VERDICT_H */
