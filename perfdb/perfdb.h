/*
 * perfdb.h - the perf runner, its store (a SQLite file, or a PostgreSQL
 * server a fleet shares: sql.h), statistics, regression
 * detection and report data (DESIGN sections 9 and 10). Used by cli/perf.c and
 * suites/test_perfdb.c; not part of the public xo.h.
 *
 * A run is measured first, its results held in memory, and then written in
 * one transaction: commit, testbed, the run row, every result, raw sample, op
 * breakdown and probe (xo_perfdb_run_store). No transaction is open while a
 * run measures, and a run killed at any point is absent, never partial;
 * every earlier run is intact. Readers still only look at complete runs
 * (state 'complete'): stores written before schema 6 may hold 'incomplete'
 * rows of killed two-transaction writers.
 */
#ifndef XO_PERFDB_H
#define XO_PERFDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "xo.h"

#define XO_PERFDB_SCHEMA_VERSION 7
#define XO_PERFDB_APP_ID         0x786f7064 /* "xopd" in PRAGMA application_id */

struct xo_perfdb; /* opaque: an open store */
struct sqlite3;
struct xo_sql;

/* ---- identity ------------------------------------------------------------ */

struct xo_perf_commit {
	char sha[48];        /* full sha of HEAD; "nogit" outside a repository */
	char parent[48];     /* first parent's sha, "" when none */
	char subject[256];   /* first line of the commit message */
	int64_t date;        /* committer date, unix seconds; 0 when unknown */
	bool dirty;          /* `git status --porcelain` listed tracked changes */
	char dirty_hash[24]; /* hash of `git diff HEAD` when dirty, else "" */
};

struct xo_perf_testbed {
	char hostname[128];
	char cpu_model[128]; /* /proc/cpuinfo "model name" */
	int64_t cores;       /* online CPUs */
	char os[128];        /* uname sysname release machine */
	char compiler[128];  /* compiler id and version of this build */
	char cflags[512];    /* C flags of this build */
	char blas_name[64];  /* "OpenBLAS" */
	char blas_version[64];
	char blas_coretype[64]; /* the kernel set OpenBLAS chose (openblas_get_corename) */
	char blas_config[256];  /* openblas_get_config() */
	char cl_platform[128];  /* from the cl backend's description, "" without OpenCL */
	char cl_device[256];
	char cl_driver[128];
	char env[512];       /* performance-relevant environment variables */
	char describe[1024]; /* every device's xo_backend_describe, one per line */
};

/* HEAD of the git work tree at dir (git run by xo_proc_run); "nogit" when it is none. */
void xo_perf_commit_probe(const char *dir, struct xo_perf_commit *c);
/* The commit the running binary was built from: sha (40 hex digits; "" or
 * anything else: unknown) and, for a build from a dirty tree, the hash of its
 * diff at build time ("" when clean). Copied; the xo binary sets it at start. */
void xo_perf_build_commit_set(const char *sha, const char *dirty_hash);
/* The commit a run recorded now belongs to: the build's (set above), with
 * parent, subject and date from git in xo_perf_source_dir() when that repository
 * has the commit (else "" and 0). When the build's commit is unknown (built
 * outside git, or never set), the source tree's HEAD (xo_perf_commit_probe),
 * said once on stderr. */
void xo_perf_commit_of_build(struct xo_perf_commit *c);
/* This machine and build; opens each backend once to read its description. */
void xo_perf_testbed_probe(struct xo_perf_testbed *t);

/* ---- store ----------------------------------------------------------------- */

/* Opens (creating or migrating) the store at path. XO_EDB with a reason for a
 * file that is not SQLite, a SQLite file of another program, or a schema newer
 * than this build knows. WAL mode, busy timeout for concurrent writers. */
enum xo_status xo_perfdb_open(const char *path, struct xo_perfdb **out);
/* The same for readers (compare, report, advise, record --list): opened
 * SQLITE_OPEN_READONLY, so a store in a read-only directory or mount works;
 * never creates the file (XO_EINVAL "no such database"). A store older than
 * this xo is migrated first when the file is writable, else refused. Both
 * refuse a path that is a directory, FIFO or device (XO_EINVAL). */
enum xo_status xo_perfdb_open_readonly(const char *path, struct xo_perfdb **out);
void xo_perfdb_close(struct xo_perfdb *db); /* accepts NULL */
/* The store's connection (sql.h): every perfdb query goes through it. */
struct xo_sql *xo_perfdb_sql(struct xo_perfdb *db);
/* The raw handle of a SQLite store, for tests that inspect the file; NULL
 * when the store is on another engine. */
struct sqlite3 *xo_perfdb_sqlite(struct xo_perfdb *db);

/* What a benchmark is: its name is unique and carries device and shape. */
struct xo_perf_bench {
	char
	    name[192]; /* "op/conv1d/fwd/n512_l29_c1_f16_k3/cpu", "model/seed/train_step/b512/cl" */
	char kind[8];  /* "op" or "model" */
	char device[48]; /* "ref", "cpu", "cl", or a peer ("pytorch-cpu") */
	char what[48];   /* op name, or "train_step" / "predict" */
	char dir[8];     /* "fwd", "bwd", "" for models */
	char model[64];  /* "seed" for model benchmarks, "" for ops */
	int64_t batch;
	char params[256]; /* canonical parameters (xo_params_format) */
	char version[24]; /* hash of the kernel sources and sampling settings */
	char metric[16];  /* "time" (also ""), "instructions" (schema 5) */
	char unit[16];    /* "s" (also ""), "instructions": of one call */
};

#define XO_PERF_MAX_LAYERS 32

/* One sample: per-call times of `reps` back-to-back calls. */
struct xo_perf_sample {
	double wall_s;    /* wall time per call */
	double enqueue_s; /* OpenCL split per call (zeros for host backends) */
	double h2d_s;
	double kernel_s;
	double d2h_s;
	double wait_s;
	double launches; /* kernel launches per call */
};

struct xo_perf_result {
	struct xo_perf_bench b;
	int64_t reps;                                  /* calls per sample */
	size_t n;                                      /* samples */
	struct xo_perf_sample *samples;                /* n of them */
	bool has_split;                                /* OpenCL event times recorded */
	double op_kernel_s[XO_OP_COUNT][XO_DIR_COUNT]; /* mean kernel time per call, per op */
	double op_launches[XO_OP_COUNT][XO_DIR_COUNT]; /* mean launches per call, per op */
	int nlayers;                               /* model train_step on OpenCL: time per layer */
	char layer_name[XO_PERF_MAX_LAYERS][64];   /* "conv1d", ..., "loss+adam" */
	double layer_kernel_s[XO_PERF_MAX_LAYERS]; /* device kernel time in one step */
	double layer_launches[XO_PERF_MAX_LAYERS];
};

/* A run being measured: what it is and the figures of its start, held in
 * memory until xo_perfdb_run_store writes it whole. */
struct xo_perf_run {
	struct xo_perf_commit commit;
	struct xo_perf_testbed testbed;
	char note[1024];            /* the command, runs.note (longer is cut) */
	int64_t started;            /* unix seconds */
	double load_start;          /* 1-minute load average at the start, -1 unknown */
	double busy0, self0, wall0; /* machine busy, own CPU and monotonic seconds at the
	                               start: the CPU other processes take during the run */
};
/* Starts run: copies the identity, reads the clock and the load. Writes nothing. */
void xo_perf_run_start(struct xo_perf_run *run, const struct xo_perf_commit *c,
                       const struct xo_perf_testbed *t, const char *note);

/* One device's probe in a run (table probes, schema version 4). */
struct xo_perf_probe {
	char device[48];   /* benchmark device label: "cpu", "cl", as benchmarks.device */
	struct xo_probe p; /* NAN figures are stored as NULL */
};
/*
 * Writes run in ONE transaction: its commit and testbed (when new), the run
 * row (state 'complete', finished now, the load at the end and the CPU other
 * processes took since xo_perf_run_start), the n results with their samples
 * and op/layer times, and nprobes device probes (one per device). *run_id is
 * the new run's id. On any failure the transaction rolls back: nothing of
 * the run is stored (no run row either) and *run_id is left as it was.
 */
enum xo_status xo_perfdb_run_store(struct xo_perfdb *db, const struct xo_perf_run *run,
                                   const struct xo_perf_result *r, size_t n,
                                   const struct xo_perf_probe *probes, size_t nprobes,
                                   int64_t *run_id);
/* xo_perf_run_start and xo_perfdb_run_store at once, without probes: results
 * measured elsewhere (peer imports, xo seed, synthetic stores). */
enum xo_status xo_perfdb_run_write(struct xo_perfdb *db, const struct xo_perf_commit *c,
                                   const struct xo_perf_testbed *t, const char *note,
                                   const struct xo_perf_result *r, size_t n, int64_t *run_id);
/* The probe of device (its label, "cpu", "cl") stored with run_id, NULL
 * columns read as NAN. XO_ENODEV (with a message) when that run has no probe
 * of that device (older runs, --no-probe, a device without a probe); XO_EDB
 * when the store cannot be read. */
enum xo_status xo_perfdb_probe_get(struct xo_perfdb *db, int64_t run_id, const char *device,
                                   struct xo_probe *out);

/* The reps (calls per sample) the latest complete run on testbed t used for
 * benchmark name; 0 when there is none. */
int64_t xo_perfdb_prev_reps(struct xo_perfdb *db, const struct xo_perf_testbed *t,
                            const char *name);

/* ---- statistics (stats.c) ---------------------------------------------------- */

struct xo_perf_summary {
	size_t n;
	double min, q1, median, q3, max, mean;
	double ci_lo, ci_hi; /* distribution-free 95% CI of the median (order statistics) */
};

/* Sorts x in place and summarizes it; quantiles are linear interpolation
 * between order statistics (numpy's default, Hyndman-Fan type 7). */
void xo_perf_summarize(double *x, size_t n, struct xo_perf_summary *s);
double xo_perf_quantile(const double *sorted, size_t n, double q);
double xo_perf_median(double *x, size_t n); /* sorts x */
/* Indices (0-based) of the order statistics bounding a `level` CI of the median. */
void xo_perf_median_ci_index(size_t n, double level, size_t *lo, size_t *hi);

/* Two-sided Mann-Whitney U test of a vs b. Exact null distribution when there
 * are no ties and na + nb <= XO_PERF_MWU_EXACT_MAX; otherwise the normal
 * approximation with tie and continuity corrections. *u (may be NULL) gets U
 * of a. Returns the p-value (1 when either sample is empty). */
#define XO_PERF_MWU_EXACT_MAX 60
double xo_perf_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u);

/* The Hodges-Lehmann shift from a to b and its distribution-free `level`
 * interval (Moses; see stats.c): lo = -inf, hi = +inf when the samples are
 * too few for the level or na nb > XO_PERF_SHIFT_MAX_PAIRS. On log times it
 * is the log of the ratio head/base of the medians. */
#define XO_PERF_SHIFT_MAX_PAIRS (1u << 22)
struct xo_perf_shift {
	double est, lo, hi;
};
void xo_perf_shift_ci(const double *a, size_t na, const double *b, size_t nb, double level,
                      struct xo_perf_shift *s);

/* The regularized incomplete beta function I_x(a, b) (a, b > 0; 0 for x <= 0,
 * 1 for x >= 1). */
double xo_perf_beta_inc(double a, double b, double x);
/* Welch's two-sided t test of the means of a and b (b - a): the p-value, *t
 * and the Welch-Satterthwaite *df (either may be NULL). 1 when a side has
 * fewer than 2 values; 0 when both sides are constant and differ. */
double xo_perf_welch(const double *a, size_t na, const double *b, size_t nb, double *t,
                     double *df);
/* The run-level step of the one rule (verdict.c) for a
 * change of direction sign (+1 slower, -1 faster) found in the pooled
 * samples: the log run values (medians; minima under load) of base
 * (nb) and head (nh), both >= 2, must differ by Welch's t test at p < 0.05 / m
 * (m: the series of the section compared this way times the looks, Bonferroni), in the same
 * direction, and so must their Hodges-Lehmann shift (beyond 65536 pairs,
 * detect's long segments: the difference of their medians). true: confirmed; else
 * why (one bracketed note) says what failed. p_out (may be NULL) gets p. */
bool xo_perf_runs_confirm(const double *base_runs, size_t nb, const double *head_runs, size_t nh,
                          int sign, int m, double *p_out, char *why, size_t why_size);
/*
 * The verdict on a deterministic metric (instruction counts):
 * *sign = +1 (more instructions) when every head sample exceeds every base
 * sample by more than threshold (min h / max b - 1 > threshold), -1 when
 * every one is below by more (max h / min b - 1 < -threshold), else 0; *lo and
 * *hi the extremes of those pairwise changes (the "interval" compare prints;
 * SAME when both lie within -+threshold, UNKNOWN otherwise: the samples
 * disagree by more than the threshold, so the count is not deterministic).
 */
void xo_perf_judge_counts(const double *b, size_t nb, const double *h, size_t nh,
                          double threshold, int *sign, double *lo, double *hi);
/* The default threshold of the instruction metric: 0.5%. */
#define XO_PERF_COUNT_THRESHOLD 0.005
/* Piecewise-constant L1 fit of y[0..n) minimizing
 *	sum over segments S of sum_{i in S} |y_i - median(S)| / scale  +  beta * K * ln(n)
 * (K segments, beta = XO_PERF_STEP_BETA; see stats.c for why 2). Writes the first index of each
 *segment after the first to starts (room for n) and returns how many there are. */
#define XO_PERF_STEP_BETA 2.0
size_t xo_perf_steps(const double *y, size_t n, double scale, size_t *starts);
/* The same criterion minimized over every segmentation by the plain O(n^3 log n)
 * programme: the definition xo_perf_steps is tested against. xo_perf_steps is
 * exact up to XO_PERF_STEP_WINDOW points and bounded beyond (steps.c). */
size_t xo_perf_steps_exhaustive(const double *y, size_t n, double scale, size_t *starts);
/* The segment starts from a fit's back pointers (stats.c), shared by both fits. */
size_t xo_perf_steps_walk(const size_t *from, size_t n, size_t *starts);
#define XO_PERF_STEP_WINDOW 128

/* ---- the order of a history (order.c) -------------------------------------------- */

/* Every commit of a store placed in first-parent order of the commit graph
 * (commits.parent), never by date: rank[i] is the place of commit id[i]
 * (ids ascending). by_date counts the chains after the first whose start's
 * first parent is not in the store: the graph cannot place those against
 * each other, so their first commits' dates do. */
struct xo_perf_order {
	int64_t *id, *rank;
	bool *main; /* main[i]: commit id[i] is on the main line */
	size_t n;
	size_t by_date;
	size_t off_main; /* commits off the main line */
	bool loaded;     /* set by xo_perf_order_load */
};
enum xo_status xo_perf_order_load(struct xo_perfdb *db, struct xo_perf_order *o);
/* The place of a commit; one the order does not hold (recorded after the
 * load) comes after all that it does. */
int64_t xo_perf_order_rank(const struct xo_perf_order *o, int64_t commit_id);
void xo_perf_order_free(struct xo_perf_order *o); /* accepts NULL */
/* Whether a commit is on the main line of its chain: from the chain's first
 * commit, always the child with the longest first-parent path below it
 * (ties: the newest complete run, then the first recorded); a dirty tree
 * goes with its clean commit. A side branch (a commit whose first parent
 * has a child on the main line) is compared against its base only, never
 * laid into the history. true for a commit the order does not hold. */
bool xo_perf_order_main(const struct xo_perf_order *o, int64_t commit_id);
/* A hash of the order of the commits with id <= upto (never 0 unless out of
 * memory): equal while no commit recorded later came in between them. */
uint64_t xo_perf_order_hash(const struct xo_perf_order *o, int64_t upto);

/* ---- commands (each prints to out; *failed set when a regression is confirmed) -- */

struct xo_perf_record_opts {
	const char *filter;   /* POSIX extended regex on the benchmark name, or NULL */
	const char **devices; /* NULL: ref, cpu, cl */
	int ndevices;
	bool quick;             /* seed shapes, a short sweep, short samples */
	int samples;            /* samples per benchmark (>= 10 enforced unless test) */
	const char *model_path; /* NULL: models/seed.model of the source tree, else the
	                           built-in copy (xo_model_seed_spec) */
	bool progress;          /* draw a progress bar on stderr */
	bool list_only;         /* print the benchmark names and stop */
	bool json;              /* with list_only: a JSON array of the benchmarks */
	bool no_probe;          /* skip the device probes (table probes) */
	unsigned metrics;       /* XO_PERF_METRIC_* bits; 0: time */
	const char *xo_exe;     /* the xo run under valgrind to count instructions;
	                           NULL: this process's own executable */
	const char *count_dir;  /* internal (`record --count-child DIR`): this process is
	                           the counting child under callgrind; it writes
	                           DIR/counts.tsv and stores nothing (db may be NULL) */
};
/* What `record` measures (--metric time,instructions). */
#define XO_PERF_METRIC_TIME         1u
#define XO_PERF_METRIC_INSTRUCTIONS 2u
/* Samples of an instruction series (each one call under callgrind): the count
 * is deterministic, so three show whether it is, at a fraction of the cost. */
#define XO_PERF_COUNT_SAMPLES 3
/* "op/relu/fwd/SHAPE/cpu" -> "op/relu/fwd/SHAPE/instructions/cpu": the name of
 * a benchmark's instruction series. */
void xo_perf_count_name(const char *name, char *out, size_t size);
/* "summary:" (or "totals:") of a callgrind dump file: the events (Ir) of the
 * dump; false when the file has none or cannot be read. */
bool xo_perf_callgrind_total(const char *path, double *count);
enum xo_status xo_perf_record(struct xo_perfdb *db, const struct xo_perf_record_opts *o, FILE *out,
                              int64_t *run_id);

struct xo_perf_compare_opts {
	double threshold; /* relative change of medians that matters (0.05) */
	double alpha;     /* Mann-Whitney significance (0.002) */
	const char *filter;
	bool json; /* one JSON object on out instead of the text */
	int64_t after_run; /* a commit pools only its runs with a larger id (continuous and
	                      bisect: the rounds they recorded); 0: every run */
	int64_t testbed;   /* compare and detect on this testbed id only; 0: any
	                      (xo_perfdb_testbed_find) */
	const char *metric; /* the series compared: "time" (also NULL) or "instructions"
	                       (see xo_perf_judge_counts) */
	int looks;         /* how many times these rounds have been compared, this time
	                      included (continuous and bisect's extra rounds on UNKNOWN); the
	                      run rule's family level 0.05 / m is divided by it (Bonferroni
	                      over the looks); 0 or 1: one look */
	bool run_min;      /* ignored (kept for callers): the one rule (verdict.h)
	                      judges every command's samples alike, on each run's
	                      minimum and faster half where it sees load */
};
/* The testbed a fleet member is called by: its hostname (the testbed of that
 * host's latest complete run, as a host's build or BLAS may change) or its
 * hash. XO_EINVAL naming the known hostnames when there is none. */
enum xo_status xo_perfdb_testbed_find(struct xo_perfdb *db, const char *name, int64_t *id);
enum xo_status xo_perf_compare(struct xo_perfdb *db, const char *base, const char *head,
                               const struct xo_perf_compare_opts *o, FILE *out, bool *failed);
/* What a comparison found under test (cpu, cl; ref and peers never count):
 * counts per verdict and the largest confirmed slowdown. */
struct xo_perf_tally {
	int slower, faster, same, lowered, unknown;
	int unknown_up;  /* of unknown: those whose 95% interval reaches above +threshold
	                    (a slowdown not excluded; bisect asks only this) */
	char worst[192]; /* benchmark of the largest SLOWER change, "" when none */
	double change;   /* its relative change of medians; NAN when none */
	double change_lo; /* the lower end of that change's 95% interval (the one SAME
	                     reads); NAN when none or unbounded */
};
/* xo_perf_compare, also filling *tally (may be NULL). */
enum xo_status xo_perf_compare_tally(struct xo_perfdb *db, const char *base, const char *head,
                                     const struct xo_perf_compare_opts *o, FILE *out,
                                     bool *failed, struct xo_perf_tally *tally);
enum xo_status xo_perf_detect(struct xo_perfdb *db, const struct xo_perf_compare_opts *o, FILE *out,
                              bool *failed);
/* `xo perf continuous`: BASE and HEAD (NULL: HEAD) are git revisions of the
 * source tree; each is built in a temporary clone, both are recorded in
 * alternating rounds into db_path, then compared by commit. Progress and
 * build/record logs' paths go to msg, the comparison to out. */
struct xo_perf_continuous_opts {
	const char *db_path;
	const char *filter;
	const char **devices; /* NULL: the recorder's default devices */
	int ndevices;
	bool quick;
	int rounds;  /* records of each side, alternating (6: see compare) */
	int samples; /* 0: the recorder's default */
	const char *model;
	int jobs;              /* build parallelism */
	const char *build_dir; /* keep builds in build_dir/SHA and reuse them; NULL:
	                          a temporary tree removed afterwards */
	int max_rounds;        /* rounds while a benchmark is UNKNOWN (<= rounds: none extra) */
	double budget_s;       /* and while the rounds so far took less (0: no limit) */
	unsigned metrics;      /* record's --metric (XO_PERF_METRIC_*; 0: time); cmp.metric
	                          is the one compared */
	struct xo_perf_compare_opts cmp;
};
enum xo_status xo_perf_continuous(const char *base, const char *head,
                                  const struct xo_perf_continuous_opts *o, FILE *out,
                                  FILE *msg, bool *failed);
/* Pinpoint's rule for `continuous` and `bisect`: after `done` rounds (>=
 * the configured rounds) whose comparison gave t, one more round a side when
 * a benchmark is UNKNOWN, fewer than max_rounds were made and, with a budget
 * (> 0), the rounds so far took less than budget_s minus one round's average;
 * with stop_on_slower (bisect) not once a slowdown is confirmed, and only
 * while an UNKNOWN one may be slower (t->unknown_up): bisect asks "slower or
 * not", and an interval that reaches down only (looks faster) answers "not". */
bool xo_perf_more_rounds(const struct xo_perf_tally *t, int done, int max_rounds, double elapsed_s,
                         double budget_s, bool stop_on_slower);
/* A revision built for `continuous` or `bisect`: a clone at sha with its
 * build (o->build_dir/SHA, reused when built before; else root/name), and
 * the store its own xo records into (root/name.sqlite: that xo may know an
 * older schema than the user's store has; its runs are merged from there). */
struct xo_perf_rev {
	char sha[48];
	char dir[4200];
	char xo[4300];
	char log[4200];
	char store[4300];
};
/* Builds it (git clone --shared, cmake; every program through xo_proc_run).
 * On failure *keep is set when the tree under root holds the log. */
enum xo_status xo_perf_rev_build(const char *sha, const char *root, const char *name,
                                 const struct xo_perf_continuous_opts *o, FILE *msg,
                                 struct xo_perf_rev *r, bool *keep);
/* Records rev[0] and rev[1] alternately, each with its own xo into its own
 * store (rev[k].store), every run merged into o->db_path right after it is
 * recorded (xo_perfdb_import_db, which reads an older schema through a
 * migrated copy): o->rounds rounds,
 * then more by xo_perf_more_rounds; *tally is the last comparison of the two
 * commits (o->cmp) over the runs these rounds made (*after_run: the store's
 * last run id before them, for xo_perf_compare_opts.after_run), *rounds_done
 * the rounds made. Record output goes to rlog. */
enum xo_status xo_perf_ab_rounds(const struct xo_perf_rev rev[2],
                                 const struct xo_perf_continuous_opts *o, const char *rlog,
                                 bool stop_on_slower, FILE *msg, struct xo_perf_tally *tally,
                                 int *rounds_done, int64_t *after_run);
/* ---- bisect (bisect.c) ---- */
enum xo_bisect_verdict {
	XO_BISECT_UNTESTED,
	XO_BISECT_GOOD,  /* not slower than --good: SAME, FASTER or lowered */
	XO_BISECT_BAD,   /* a slowdown against --good is confirmed (SLOWER) */
	XO_BISECT_SKIP,  /* does not build, or UNKNOWN after its budget */
	XO_BISECT_ABORT, /* an error (the store, recording): stop the search */
};
enum xo_bisect_outcome {
	XO_BISECT_FOUND,    /* first: the first bad commit */
	XO_BISECT_RANGE,    /* skips leave it open: one of lo+1 .. hi */
	XO_BISECT_NONE,     /* the bad end is not slower than good */
	XO_BISECT_UNDECIDED /* the bad end itself was skipped */
};
struct xo_bisect_result {
	enum xo_bisect_outcome outcome;
	size_t first, lo, hi; /* lo: last good, hi: first bad known */
	size_t tests;         /* verdicts asked for */
};
/* The verdict of commit i (1..n) against commit 0, the good one. */
typedef enum xo_bisect_verdict (*xo_bisect_fn)(void *ctx, size_t i);
/* Binary search over commits 0 (good) .. n (bad), oldest first, for the
 * first bad one; commit n is tested first. seen (n + 1 entries) gets every
 * verdict. false when fn answered XO_BISECT_ABORT. */
bool xo_perf_bisect_search(size_t n, xo_bisect_fn fn, void *ctx, enum xo_bisect_verdict *seen,
                           struct xo_bisect_result *r);
const char *xo_perf_bisect_word(enum xo_bisect_verdict v); /* "good", "bad", "skip" */
/* The threshold bisect uses once --bad is SLOWER by change: half of it on
 * the log scale, sqrt(1 + change) - 1, and never below threshold. */
double xo_perf_bisect_threshold(double change, double threshold);
/* The threshold bisect hunts with once --bad's comparison gave *bad (SLOWER):
 * xo_perf_bisect_threshold of the lower end of the 95% interval of its
 * change (bad->change_lo), not of the change itself: one measurement of
 * --bad inflated by busy runs (a planted 2x read as +307% under load) put
 * the midpoint above what the commits with the same code show, which were
 * then SAME (good) or UNKNOWN. threshold (the user's) when that interval is
 * unbounded or not above zero. */
double xo_perf_bisect_hunt(const struct xo_perf_tally *bad, double threshold);
/* `xo perf bisect`: the commits after good up to bad on bad's first-parent
 * line, each built and recorded against good (o: rounds, budget, filter,
 * devices, comparison), searched by xo_perf_bisect_search. The answer on out
 * (json: one object), progress on msg; *found when a commit or a range is
 * named. */
enum xo_status xo_perf_bisect(const char *good, const char *bad,
                              const struct xo_perf_continuous_opts *o, bool json, FILE *out,
                              FILE *msg, bool *found);
/* The full sha of a git revision of the source tree (`git rev-parse --verify
 * REV^{commit}` without a shell); XO_EINVAL for what git does not know or
 * what looks like an option. */
enum xo_status xo_perf_git_commit(const char *rev, char *sha, size_t size);
/* Sets a change's state: "accepted", "ignored", "fixed", "confirmed". */
enum xo_status xo_perf_change_set(struct xo_perfdb *db, int64_t id, const char *state, FILE *out);
/* gnuplot plots and index.html in outdir (replaced as a whole, see report.c);
 * model: that model's crossover and GPU split, NULL: every model in the store. */
enum xo_status xo_perf_report(struct xo_perfdb *db, const char *outdir, const char *scripts_dir,
                              const char *model, FILE *out);
/* The same on one testbed (id from xo_perfdb_testbed_find; 0: every testbed,
 * each history plot one line per device and testbed). */
enum xo_status xo_perf_report_testbed(struct xo_perfdb *db, const char *outdir,
                                      const char *scripts_dir, const char *model,
                                      int64_t testbed, FILE *out);
/* True when a cl backend's description (xo_backend_describe, or a testbed's
 * cl platform and device) is OpenCL on the host's CPU: PoCL or another CPU
 * device, never a GPU. */
bool xo_perf_cl_on_cpu(const char *describe);
/* The sentence seed, explain, advise and the report print then. */
#define XO_PERF_NO_GPU "no GPU here: cl is OpenCL on this machine's CPU"
/* What to install for a GPU (one line, no newline). */
#define XO_PERF_GPU_INSTALL                                                                 \
	"install the GPU vendor's OpenCL driver (NVIDIA: nvidia-opencl-icd; AMD: "          \
	"rocm-opencl-runtime or mesa-opencl-icd; Intel: intel-opencl-icd), then `xo "       \
	"devices` lists it and --device cl measures it"
/* The faster device per batch for model (a name or a spec path), or for every
 * model in the store when NULL (listed first); json: one object on out. */
enum xo_status xo_perf_advise(struct xo_perfdb *db, const char *model, bool json, FILE *out);
/* Stores a peer's timings (JSON, see docs/perf.md) as a run of the current commit. */
enum xo_status xo_perf_import(struct xo_perfdb *db, const char *peer, const char *json_path,
                              FILE *out);

/* Limits on a peer file (import.c): what is outside is refused, not clipped. */
#define XO_PERF_IMPORT_MAX_BYTES   (64 << 20)
#define XO_PERF_IMPORT_MAX_RESULTS 4096
#define XO_PERF_IMPORT_MAX_SAMPLES 100000
#define XO_PERF_IMPORT_MAX_BATCH   (1 << 24)
#define XO_PERF_IMPORT_MIN_S       1e-9  /* 1 ns: no clock measures a call faster */
#define XO_PERF_IMPORT_MAX_S       86400.0 /* one day per call */
/* Instructions one call may execute: a day (XO_PERF_IMPORT_MAX_S) at 1e10
 * instructions a second, more than any core retires. */
#define XO_PERF_IMPORT_MAX_INSTR   8.64e14

/* NULL when v is a sample a store may hold for a series of metric ("time":
 * seconds per call in XO_PERF_IMPORT_MIN_S..MAX_S; "instructions": a count
 * per call, a mean over calls, in 1..XO_PERF_IMPORT_MAX_INSTR), else what is wrong with it ("is
 * Inf", ...). The one check of `perf import` and `perf import-db`. */
const char *xo_perf_sample_check(const char *metric, double v);

/* Merges every complete run of the store at src_path (a file or a
 * PostgreSQL URI) into dst with its results, samples, op times and probes,
 * one transaction per run; a run dst already has (same commit, testbed,
 * start, finish and note) is skipped, so importing twice adds nothing.
 * dst_name names the target in messages. Prints one summary line. */
enum xo_status xo_perfdb_import_db(struct xo_perfdb *dst, const char *src_path,
                                   const char *dst_name, FILE *out);

/* A peer file, parsed and checked: what xo_perf_import stores. */
struct xo_perf_import {
	char device[48];             /* the peer's name, restricted to [A-Za-z0-9._+-] */
	char model[64];              /* "seed" unless the file says, same set */
	char note[512];              /* free text without control bytes, or "" */
	struct xo_perf_result *res;  /* n results, each with its samples */
	size_t n;
};
/* Parses len bytes of peer JSON (origin names it in messages; peer, when not
 * NULL, overrides its "device"). XO_EFORMAT/XO_EINVAL with one line naming
 * origin and the value at fault; on success free with xo_perf_import_free. */
enum xo_status xo_perf_import_parse(const char *text, size_t len, const char *origin,
                                    const char *peer, struct xo_perf_import *imp);
void xo_perf_import_free(struct xo_perf_import *imp); /* accepts NULL */

/* ---- model identity (modelid.c) ------------------------------------------------- */

/* The name (the file's stem; "seed" for path NULL, the built-in seed) and the
 * architecture fingerprint (16 hex digits of the parsed spec: shapes, kinds
 * and work parameters, not weights or names) a model's benchmarks are stored
 * under. Errors are the spec parser's. */
enum xo_status xo_perf_model_ident(const char *path, char *name, size_t name_size, char *arch,
                                   size_t arch_size);
/* XO_EINVAL with one line when the store holds model benchmarks named name
 * with an arch= other than arch (a different model of the same name). */
enum xo_status xo_perfdb_model_claim(struct xo_perfdb *db, const char *name, const char *arch,
                                     const char *path);

/* ---- helpers shared inside perfdb ------------------------------------------------ */

/* 64-bit FNV-1a, continued from h (start with XO_FNV_OFFSET). */
#define XO_FNV_OFFSET 0xcbf29ce484222325ULL
uint64_t xo_perf_fnv(uint64_t h, const void *data, size_t n);
/* The source tree this binary was built from (XO_SOURCE_DIR env overrides). */
const char *xo_perf_source_dir(void);
/*
 * Code versions (docs/perf.md "Kernel versions"): a benchmark's version hashes
 * what the build compiled into the code it measures, read from the manifest
 * xo.versions that the build writes beside the binary. Where that cannot be
 * known (no manifest, a unit it marks unknown) the version is
 * XO_PERF_VERSION_UNKNOWN; an empty version (runs recorded before versions
 * were kept) is unknown too. Two versions name the same code only when both
 * are known and equal: only then may "unchanged code" lower an alarm.
 */
#define XO_PERF_VERSION_UNKNOWN "unknown"
bool xo_perf_version_known(const char *v);
bool xo_perf_same_code(const char *a, const char *b);
/* The version of unit ("core", "ref", "cpu", "cl", "model") in the manifest
 * beside this binary, as 16 hex digits in out; XO_PERF_VERSION_UNKNOWN when
 * the manifest or the unit is missing or marked unknown. */
void xo_perf_unit_version(const char *unit, char *out, size_t n);
/* Resolves "run:N", a commit sha prefix, or NULL (the latest complete run that
 * measured ref/cpu/cl, i.e. not a peer import). */
enum xo_status xo_perf_resolve_run(struct xo_perfdb *db, const char *spec, int64_t *run_id);

#endif /* XO_PERFDB_H */
