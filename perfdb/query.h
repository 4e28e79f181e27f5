/*
 * query.h - the reads of the store that the report, advise and the answer
 * share (query.c): the model sweeps (curves), a result's measured split,
 * the models measured. Writes stay in store.c. Internal to perfdb/.
 */
#ifndef XO_PERFDB_QUERY_H
#define XO_PERFDB_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb.h"
#include "split.h"
#include "sql.h"

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

/* XO_EDB naming what was being read, with the engine's message. */
enum xo_status xo_perf_query_err(struct xo_perfdb *db, const char *what);
/* Column i of the current row as text, "" for NULL. */
const char *xo_perf_query_text(struct xo_sql_stmt *s, int i);
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

/* A growable array of doubles. */
struct xo_perf_vec {
	double *v;
	size_t n, cap;
};
bool xo_perf_vec_push(struct xo_perf_vec *a, double x);
enum xo_status xo_perf_query_samples(struct xo_perfdb *db, int64_t result_id,
                                     struct xo_perf_vec *out);

#endif /* XO_PERFDB_QUERY_H */
