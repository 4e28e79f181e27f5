/*
 * query.h - reads of the store (query.c), with the row types they fill:
 * samples, the model sweeps (curves), a result's measured split, the models
 * measured, runs and testbeds as compare shows them, a series' points and
 * samples in history order. Writes stay in store.c. Internal to perfdb/.
 */
#ifndef XO_PERFDB_QUERY_H
#define XO_PERFDB_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb.h"
#include "split.h"
#include "sql.h"
#include "verdict.h"

/* ---- rows and helpers ---- */
/* XO_EDB naming what was being read, with the engine's message. */
enum xo_status xo_perf_query_err(struct xo_perfdb *db, const char *what);
/* Column i of the current row as text, "" for NULL. */
const char *xo_perf_query_text(struct xo_sql_stmt *s, int i);

/* A growable array of doubles. */
struct xo_perf_vec {
	double *v;
	size_t n, cap;
};
bool xo_perf_vec_push(struct xo_perf_vec *a, double x);
enum xo_status xo_perf_query_samples(struct xo_perfdb *db, int64_t result_id,
                                     struct xo_perf_vec *out);

/* Where a stored row stands in history: the commit's place in the graph
 * (order.c), then its run. Every row type sorted into history order begins
 * with one, so one comparator sorts them all. */
struct xo_perf_hist_key {
	int64_t rank, run;
};
int xo_perf_hist_key_cmp(const void *pa, const void *pb);

/* A run measured one of our devices (ref, cpu, cl...) rather than a peer. */
#define XO_PERF_OWN_RUN_SQL                                                                        \
	"EXISTS (SELECT 1 FROM results res JOIN benchmarks b ON b.id = res.benchmark_id"           \
	" WHERE res.run_id = ru.id AND (b.device IN ('ref','cpu') OR b.device LIKE 'cl%'))"

/* The largest run id in the store (0: none), for continuous's rounds;
 * XO_EDB naming db_path when it cannot be read. */
enum xo_status xo_perf_query_last_run(struct xo_perfdb *db, const char *db_path, int64_t *id);

/* ---- runs, sides, testbeds (compare) ---- */
/* The testbed columns compare shows, in order. */
static const char *const xo_perf_testbed_fields[] = {
    "hostname",  "cpu_model",    "cores",         "os",          "compiler",    "cflags",
    "blas_name", "blas_version", "blas_coretype", "blas_config", "cl_platform", "cl_device",
    "cl_driver", "env",
};

#define XO_PERF_NFIELDS (sizeof(xo_perf_testbed_fields) / sizeof(xo_perf_testbed_fields[0]))

/* One run as compare prints it: its commit, load and testbed columns. */
struct xo_perf_run_info {
	int64_t id, testbed_id, started, commit_id;
	double load_start, load_end; /* 1-minute load average, -1 unknown */
	double others;               /* cores other processes used, -1 unknown */
	char sha[48], subject[256], note[256];
	bool dirty;
	char field[XO_PERF_NFIELDS][1024];
};

/*
 * One side of a comparison. "run:N" is that run alone. Anything else names a
 * commit (a sha prefix the store knows, or any git revision of the source
 * tree, resolved with `git rev-parse --verify REV^{commit}`), and the side is
 * every complete run recorded at that commit on one testbed: the runs of our
 * own devices (`record`, possibly several, e.g. the rounds of `perf
 * continuous`) pooled, and the peers' imports kept apart.
 * The testbed is the head's where the base has runs there too.
 */
#define XO_PERF_MAX_SIDE_RUNS 256

struct xo_perf_side {
	int64_t commit_id; /* 0 for a single run:N */
	int64_t after_run; /* a commit pools only runs with a larger id */
	int64_t testbed_id;
	int64_t runs[XO_PERF_MAX_SIDE_RUNS]; /* ascending ids */
	bool peer[XO_PERF_MAX_SIDE_RUNS];    /* the run measured only peers (an import) */
	size_t nruns;
	double others;    /* most CPU other processes used over the own runs, -1 unknown */
	double others_lo; /* the least of it, -1 unknown */
	double load;      /* highest 1-minute load average seen, -1 unknown */
	struct xo_perf_run_info info; /* the latest own run of the side */
};

/* A run's row (commit, load, testbed columns); a testbed's description
 * (empty when unknown); XO_EINVAL naming the side when the runs ids hold no
 * series of metric. */
enum xo_status xo_perf_query_run(struct xo_perfdb *db, int64_t id, struct xo_perf_run_info *r);
void xo_perf_query_testbed_describe(struct xo_perfdb *db, int64_t testbed, char *buf, size_t size);
enum xo_status xo_perf_query_has_metric(struct xo_perfdb *db, const char *what, const char *spec,
                                        const char *ids, const char *metric);
/* The runs of a side (a commit's on its testbed, or run:N), and one
 * benchmark's samples pooled over them, per run counts in per_run. */
enum xo_status xo_perf_query_side(struct xo_perfdb *db, struct xo_perf_side *sd);
enum xo_status xo_perf_query_pooled(struct xo_perfdb *db, const struct xo_perf_side *sd,
                                    int64_t bench, struct xo_perf_vec *all, size_t *per_run,
                                    size_t *nruns, char *version, size_t vsize);
/* Benchmarks of metric measured by one side's runs only. */
void xo_perf_query_only_counts(struct xo_perfdb *db, const char *ib, const char *ih,
                               const char *metric, int64_t *only_base, int64_t *only_head);

/* ---- a series in history order (detect, and compare's noise) ---- */
struct xo_perf_point {
	int64_t commit_id, rank;  /* rank: the commit's place in history (order.c) */
	size_t first, n;          /* samples[first .. first+n) of the series */
	double y;                 /* median */
	double se;                /* standard error of the median, from the IQR */
	uint64_t ver;             /* hash of the kernel-source version of the latest run */
	int64_t ver_run;          /* that run; 0 before any */
	bool ver_known;           /* the version was derived ("" is not) */
	struct xo_perf_load load; /* the least of its runs' others_cpu (< 0:
	                             unknown); set with the raw samples */
};

/* One stored sample as read, before it is put in history order. */
struct xo_perf_srow {
	struct xo_perf_hist_key k;
	int64_t commit;
	double v;
	double others; /* its run's runs.others_cpu, -1 unknown */
};

struct xo_perf_series {
	struct xo_perf_vec samples;
	struct xo_perf_point *pt;
	size_t npt, cap;
	struct xo_perf_srow *rows;
	size_t caprows;
};

/* One stored result as read, before it is put in history order. */
struct xo_perf_rrow {
	struct xo_perf_hist_key k;
	int64_t commit, n;
	double med, q1, q3;
	bool summary; /* median, quartiles and n were stored */
	bool known;   /* a version was derived ("" is not) */
	uint64_t ver;
};

/* The points of a (benchmark, testbed) history; its raw samples; the point
 * its baseline starts at (after the latest accepted change). */
enum xo_status xo_perf_query_points(struct xo_perfdb *db, const struct xo_perf_order *ord,
                                    int64_t bench, int64_t testbed, struct xo_perf_series *se,
                                    bool *need_samples);
void xo_perf_load_widen(struct xo_perf_load *l, double others);
enum xo_status xo_perf_query_series_samples(struct xo_perfdb *db, const struct xo_perf_order *ord,
                                            int64_t bench, int64_t testbed,
                                            struct xo_perf_series *se, bool resummarize);
size_t xo_perf_query_baseline_start(struct xo_perfdb *db, int64_t bench, int64_t testbed,
                                    const struct xo_perf_series *se);
/* The cores and the threads a benchmark's series runs on, into the rule. */
void xo_perf_query_threads(struct xo_perfdb *db, int64_t bench, int64_t testbed,
                           struct xo_perf_rule *rule);
/* A stored value placed in history order. */
struct xo_perf_placed {
	struct xo_perf_hist_key k;
	double v;
};

void xo_perf_query_run_medians(struct xo_perfdb *db, const struct xo_perf_order *o, int64_t bench,
                               int64_t testbed, int64_t upto_run, int64_t skip_commit,
                               struct xo_perf_placed **out, size_t *nout);
/* What detect fitted for one series, as detect_state keeps it. */
struct xo_perf_fitted {
	int64_t bench, testbed, results, last_run, upto;
	char settings[160], hash[24];
};

enum xo_status xo_perf_query_fitted(struct xo_perfdb *db, struct xo_perf_fitted **out, size_t *n);

/* ---- the model sweeps and their split (the report's answer, advise) ---- */
#define XO_PERF_MAX_DEV   16
#define XO_PERF_MAX_BATCH 32

/* One curve: time per sample (s) against batch for one device and workload. */
struct xo_perf_curve {
	char device[48];
	int64_t run_id;
	size_t n;
	int64_t batch[XO_PERF_MAX_BATCH];
	double med[XO_PERF_MAX_BATCH], lo[XO_PERF_MAX_BATCH], hi[XO_PERF_MAX_BATCH]; /* per call */
};

/* One benchmark result of a run and the decomposition of its wall time. */
struct xo_perf_meas {
	bool found;         /* the run measured it */
	bool has_split;     /* OpenCL event times were stored with its samples */
	double med, lo, hi; /* wall time per call: median and its 95% CI */
	struct xo_split sp; /* parts that add up to med (has_split only) */
};

/* The sweep (batch against time per call) of model's workload what on device
 * in run run_id; time series only. */
enum xo_status xo_perf_query_curve(struct xo_perfdb *db, int64_t run_id, const char *model,
                                   const char *what, const char *device, struct xo_perf_curve *c);
enum xo_status xo_perf_query_curves(struct xo_perfdb *db, const char *model, const char *what,
                                    struct xo_perf_curve *cv, int *ncv, int64_t *main_run);
enum xo_status xo_perf_query_meas(struct xo_perfdb *db, int64_t result_id, struct xo_perf_meas *m);
enum xo_status xo_perf_query_meas_find(struct xo_perfdb *db, int64_t run, const char *model,
                                       const char *what, const char *device, int64_t batch,
                                       struct xo_perf_meas *m);
int xo_perf_query_models(struct xo_perfdb *db, char (*names)[64], int max);
/* The cl column's label from the testbed of run (GPU, CPU, PoCL). */
const char *xo_perf_query_cl_label(struct xo_perfdb *db, int64_t run);
/* The latest complete run of our own devices' time series (on testbed; 0:
 * any), XO_EINVAL when there is none; the complete runs with results (on
 * testbed only; 0: all), -1 when the store cannot say. */
enum xo_status xo_perf_query_latest_own_run(struct xo_perfdb *db, int64_t testbed, int64_t *run);
int64_t xo_perf_query_count_runs(struct xo_perfdb *db, int64_t only);

/* ---- row readers (query_rows.c) ----
 * Each prepares one read and binds its parameters; the caller steps *s,
 * reads the columns listed (in order) and finalizes it. They return
 * xo_sql_prepare's code: on failure the engine's message is still there for
 * xo_perf_query_err. */

/* The kernel-source version a change's benchmark had at a commit (col: the
 * changes column holding the commit): the latest complete run's. */
#define XO_PERF_CHANGE_VERSION_SQL(col)                                                            \
	"(SELECT res.version FROM results res JOIN runs ru ON ru.id = res.run_id"                  \
	" WHERE res.benchmark_id = ch.benchmark_id AND ru.testbed_id = ch.testbed_id"              \
	" AND ru.commit_id = ch." col " AND ru.state = 'complete' ORDER BY ru.id DESC LIMIT 1)"

/* Run run: sha, dirty, started, hostname, cpu_model, cl_device. */
int xo_perf_rows_run_evidence(struct xo_perfdb *db, int64_t run, struct xo_sql_stmt **s);
/* Run run: testbed id, sha, dirty, subject, started, hostname, cpu_model,
 * cores, blas_config, blas_coretype, cl_device, compiler, cflags, env. */
int xo_perf_rows_run_latest(struct xo_perfdb *db, int64_t run, struct xo_sql_stmt **s);
/* Run run's testbed: hostname, cpu_model, cores, blas_config, blas_coretype,
 * cl_device, compiler, cflags, env. */
int xo_perf_rows_run_testbed(struct xo_perfdb *db, int64_t run, struct xo_sql_stmt **s);
/* One row: the latest complete run of our own devices' time series on
 * testbed before run (NULL: none). */
int xo_perf_rows_run_before(struct xo_perfdb *db, int64_t testbed, int64_t run,
                            struct xo_sql_stmt **s);
/* At most one row: commit id and testbed of the complete run that stands
 * for run's commit (same sha; own runs first, then want_testbed's, then
 * the latest). */
int xo_perf_rows_side_commit(struct xo_perfdb *db, int64_t run, int64_t want_testbed,
                             struct xo_sql_stmt **s);
/* Testbeds with complete runs (only one when only != 0), by host and hash:
 * id, hostname, hash, cpu_model, complete runs, latest run. */
int xo_perf_rows_testbeds(struct xo_perfdb *db, int64_t only, struct xo_sql_stmt **s);
/* Benchmarks of metric that both id lists ("1,2,3") measured, by name: id,
 * name, device, metric. */
int xo_perf_rows_compared(struct xo_perfdb *db, const char *ib, const char *ih, const char *metric,
                          struct xo_sql_stmt **s);
/* Every (benchmark, testbed) series of complete runs (testbed 0: all), by
 * name and testbed: benchmark id, testbed id, name, metric, results, last run. */
int xo_perf_rows_series_list(struct xo_perfdb *db, int64_t testbed, struct xo_sql_stmt **s);
/* The distinct (benchmark, testbed) pairs of complete runs (only 0: every
 * testbed): benchmark id, name, device, testbed id. */
int xo_perf_rows_series_members(struct xo_perfdb *db, int64_t only, struct xo_sql_stmt **s);
/* Every result of complete runs (only 0: every testbed), by name: name,
 * device, metric, unit, median, ci_lo, ci_hi, min. */
int xo_perf_rows_results(struct xo_perfdb *db, int64_t only, struct xo_sql_stmt **s);
/* A series' results, unordered, once xo_perf_rows_history_bind has named the
 * series: commit id, run id, sha, dirty, median, ci_lo, ci_hi (the median
 * where NULL), min, and the ratio of a change that is not ignored marked on
 * the commit's first complete run (NULL elsewhere). */
int xo_perf_rows_history(struct xo_perfdb *db, struct xo_sql_stmt **s);
void xo_perf_rows_history_bind(struct xo_sql_stmt *s, int64_t bench, int64_t testbed);
/* model's workload what in run, results with a stored split, by device and
 * batch: result id, batch, device, devices of that sweep with a split. */
int xo_perf_rows_split(struct xo_perfdb *db, int64_t run, const char *model, const char *what,
                       struct xo_sql_stmt **s);
/* Run run's device probes, cpu first: device, launch_s, enqueue_s, sync_s,
 * h2d_lat_s, h2d_bw, d2h_lat_s, d2h_bw, flops, mem_bw, handoff_s, units. */
int xo_perf_rows_probes(struct xo_perfdb *db, int64_t run, struct xo_sql_stmt **s);
/* model's train-step layer times in run, by batch then in stored order:
 * batch, layer, kernel_s. */
int xo_perf_rows_layers(struct xo_perfdb *db, int64_t run, const char *model,
                        struct xo_sql_stmt **s);
/* model's train-step layer times on device at batch in run: layer, kernel_s. */
int xo_perf_rows_layer_at(struct xo_perfdb *db, int64_t run, const char *model, const char *device,
                          int64_t batch, struct xo_sql_stmt **s);
/* One layer's train-step times on device over the batches of run, by batch:
 * batch, kernel_s. */
int xo_perf_rows_layer_sweep(struct xo_perfdb *db, int64_t run, const char *model,
                             const char *device, const char *op, struct xo_sql_stmt **s);
/* Every change as detect lists it (the backends under test first, then ref
 * and the peers; confirmed regressions first): id, state, direction, name,
 * sha, dirty, ratio, p_value, testbed id, device, the version at the commit
 * and at the one before ("" unknown), the most CPU others used on either
 * side (NULL unknown), cores, metric. */
int xo_perf_rows_changes(struct xo_perfdb *db, struct xo_sql_stmt **s);
/* Every change as the report lists it (ours, then ref, then peers): id,
 * state, direction, name, sha, ratio, p_value, group ("", ref, peer), device. */
int xo_perf_rows_changes_grouped(struct xo_perfdb *db, struct xo_sql_stmt **s);
/* The latest mutant_results date, counts by result: date, sha, range,
 * result, count. Fails where the store has no such table. */
int xo_perf_rows_mutant_counts(struct xo_perfdb *db, struct xo_sql_stmt **s);
/* Its survivors and equivalents: mutant, file, line, operator, original,
 * mutated, result, reason. */
int xo_perf_rows_mutant_kept(struct xo_perfdb *db, struct xo_sql_stmt **s);
/* The ten newest mutation_runs: date, sha, dirty, caught, total, equivalent,
 * errors, missed, seconds, mutants, mutants_all. */
int xo_perf_rows_mutation_runs(struct xo_perfdb *db, struct xo_sql_stmt **s);
/* Coverage of the 60 latest dates, by date and folder: date, sha, dirty,
 * folder, lines, lines_hit, branches, branches_hit, todo (-1 unknown), the
 * date's rank (1 the oldest). */
int xo_perf_rows_coverage(struct xo_perfdb *db, struct xo_sql_stmt **s);

#endif /* XO_PERFDB_QUERY_H */
