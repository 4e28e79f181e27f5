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
/* The cores other processes took during a side's runs (runs.others_cpu):
 * the least over its runs, the one its fastest sample can have run under. */
struct xo_perf_load {
	double least;
};

struct xo_perf_sample_set {
	const double *x; /* every sample, in run order */
	const size_t *n; /* samples of each run; NULL: one run of nx samples */
	size_t nruns;
	size_t nx;                        /* total samples */
	const struct xo_perf_load *load;  /* NULL: not known (no load bound) */
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
	double cores;     /* the testbed's cores N; 0: unknown (no load bound) */
	double threads;   /* threads T the benchmark runs on (xo_perf_bench_threads) */
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

/*
 * The load bound. A benchmark that wants T threads on N cores of which other
 * processes take c gets at most min(T, N - c) cores' time (floored at
 * XO_PERF_LOAD_FLOOR cores, so that the bound stays finite), so its wall time
 * can grow by up to T / min(T, max(N - c, floor)) from that load alone. This
 * is that factor (1 when T, N or c is not known).
 */
#define XO_PERF_LOAD_FLOOR 0.1
double xo_perf_load_factor(double others, double threads, double cores);

/*
 * The ratio head/base (sign > 0) or base/head (sign < 0) that the difference
 * in load between the sides can explain: the slower side's factor over the
 * other's, each at the least load its runs saw (a side's fastest sample is at
 * best from its least loaded run). 1 where a side's load is not known.
 */
double xo_perf_load_explains(const struct xo_perf_load *base, const struct xo_perf_load *head,
                             int sign, double threads, double cores);

/* The threads T a benchmark of device dev runs on: ref 1; cpu the backend's
 * thread count, read from the testbed's description ("threads=N" on its cpu
 * line), else the cores; any other device (OpenCL on the host, a peer) the
 * cores. */
double xo_perf_bench_threads(const char *dev, const char *describe, double cores);

/* The rule (verdict.c's file comment); v is filled whole. */
void xo_perf_verdict_judge(const struct xo_perf_sample_set *base,
                           const struct xo_perf_sample_set *head, const struct xo_perf_rule *r,
                           struct xo_perf_verdict *v);

/* "SLOWER", "FASTER", "SAME" or "UNKNOWN" (before any "unchanged code"
 * lowering, which is the caller's: it knows the kernel versions). */
const char *xo_perf_verdict_word(const struct xo_perf_verdict *v);

#endif /* XO_PERFDB_VERDICT_H */
