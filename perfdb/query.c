/*
 * query.c - the reads of the store the report and advise make: sweeps, a
 * result's measured split, the models measured (query.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "perfdb.h"
#include "jsonout.h"
#include "proc.h"
#include "sql.h"
#include "split.h"
#include "query.h"

enum xo_status xo_perf_query_err(struct xo_perfdb *db, const char *what)
{
	return xo_error(XO_EDB, "%s: %s", what, xo_sql_errmsg(xo_perfdb_sql(db)));
}

const char *xo_perf_query_text(struct xo_sql_stmt *s, int i)
{
	const char *t = xo_sql_column_text(s, i);

	return t ? (const char *)t : "";
}

enum xo_status xo_perf_query_curve(struct xo_perfdb *db, int64_t run_id, const char *model,
                                   const char *what, const char *device, struct xo_perf_curve *c)
{
	struct xo_sql_stmt *s = NULL;

	memset(c, 0, sizeof(*c));
	snprintf(c->device, sizeof(c->device), "%s", device);
	c->run_id = run_id;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT b.batch, res.median, coalesce(res.ci_lo, res.median),"
	                       " coalesce(res.ci_hi, res.median) FROM results res"
	                       " JOIN benchmarks b ON b.id = res.benchmark_id"
	                       " WHERE res.run_id = ? AND b.kind = 'model' AND b.model = ?"
	                       " AND b.what = ? AND b.device = ? AND b.metric = 'time'"
	                       " ORDER BY b.batch", &s))
		return xo_perf_query_err(db, "reading a sweep");
	xo_sql_bind_int64(s, 1, run_id);
	xo_sql_bind_text(s, 2, model);
	xo_sql_bind_text(s, 3, what);
	xo_sql_bind_text(s, 4, device);
	while (xo_sql_step(s) == XO_SQL_ROW && c->n < XO_PERF_MAX_BATCH) {
		c->batch[c->n] = xo_sql_column_int64(s, 0);
		c->med[c->n] = xo_sql_column_double(s, 1);
		c->lo[c->n] = xo_sql_column_double(s, 2);
		c->hi[c->n] = xo_sql_column_double(s, 3);
		c->n++;
	}
	xo_sql_finalize(s);
	return XO_OK;
}

/* The curves of one model and workload: every device of the latest run that
 * measured the model, and each peer's latest run. */
enum xo_status xo_perf_query_curves(struct xo_perfdb *db, const char *model, const char *what,
                                    struct xo_perf_curve *cv, int *ncv, int64_t *main_run)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;

	*ncv = 0;
	*main_run = 0;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT b.device, max(res.run_id),"
	                       " b.device IN ('ref','cpu') OR b.device LIKE 'cl%'"
	                       " FROM results res JOIN benchmarks b ON b.id = res.benchmark_id"
	                       " JOIN runs ru ON ru.id = res.run_id"
	                       " WHERE ru.state = 'complete' AND b.kind = 'model' AND b.model = ?"
	                       " AND b.what = ? AND b.metric = 'time'"
	                       " GROUP BY b.device ORDER BY 3 DESC, 2 DESC", &s))
		return xo_perf_query_err(db, "finding sweeps");
	xo_sql_bind_text(s, 1, model);
	xo_sql_bind_text(s, 2, what);
	/* the first own device row has the latest own run: every own device
	 * is then taken from that run, so the curves are one measurement */
	while (xo_sql_step(s) == XO_SQL_ROW && *ncv < XO_PERF_MAX_DEV) {
		bool own = xo_sql_column_int(s, 2);
		int64_t run = xo_sql_column_int64(s, 1);

		if (own && !*main_run)
			*main_run = run;
		if (own)
			run = *main_run;
		if ((st = xo_perf_query_curve(db, run, model, what, xo_perf_query_text(s, 0),
		                              &cv[*ncv])))
			break;
		if (cv[*ncv].n)
			(*ncv)++;
	}
	xo_sql_finalize(s);
	return st;
}

/*
 * The split of a stored result: each sample's event totals are decomposed
 * (xo_split_from_events, parts adding up to that sample's wall time), the
 * share of each part is averaged over the samples, and the shares are applied
 * to the result's median wall time, so the parts add up to the median the
 * report shows (the samples' shares are scale-free: a slow sample weighs as
 * much as a fast one). Launches: the mean per call.
 */
enum xo_status xo_perf_query_meas(struct xo_perfdb *db, int64_t result_id, struct xo_perf_meas *m)
{
	struct xo_sql_stmt *s = NULL;
	double share[XO_SPLIT_COUNT] = {0}, launches = 0.0;
	size_t n = 0;

	memset(m, 0, sizeof(*m));
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT median, coalesce(ci_lo, median), coalesce(ci_hi, median),"
	                       " has_split FROM results WHERE id = ?", &s))
		return xo_perf_query_err(db, "reading a result");
	xo_sql_bind_int64(s, 1, result_id);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		m->found = true;
		m->med = xo_sql_column_double(s, 0);
		m->lo = xo_sql_column_double(s, 1);
		m->hi = xo_sql_column_double(s, 2);
		m->has_split = xo_sql_column_int(s, 3) != 0;
	}
	xo_sql_finalize(s);
	s = NULL;
	if (!m->has_split)
		return XO_OK;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT wall_s, enqueue_s, h2d_s, kernel_s, d2h_s, wait_s, launches"
	                       " FROM samples WHERE result_id = ?", &s))
		return xo_perf_query_err(db, "reading samples");
	xo_sql_bind_int64(s, 1, result_id);
	while (xo_sql_step(s) == XO_SQL_ROW) {
		struct xo_split one;
		double v[7];

		for (int i = 0; i < 7; i++)
			v[i] = xo_sql_column_double(s, i);
		xo_split_from_events(v[0], v[1], v[2], v[3], v[4], v[5], v[6], &one);
		if (!(one.wall_s > 0))
			continue;
		for (int p = 0; p < XO_SPLIT_COUNT; p++)
			share[p] += one.part_s[p] / one.wall_s;
		launches += one.launches;
		n++;
	}
	xo_sql_finalize(s);
	if (!n || !(m->med > 0)) {
		m->has_split = false;
		return XO_OK;
	}
	m->sp.wall_s = 0.0;
	for (int p = 0; p < XO_SPLIT_COUNT; p++) {
		m->sp.part_s[p] = m->med * share[p] / (double)n;
		m->sp.wall_s += m->sp.part_s[p];
	}
	m->sp.launches = launches / (double)n;
	return XO_OK;
}

/* The result of (run, model, what, device, batch), or found = false. */
enum xo_status xo_perf_query_meas_find(struct xo_perfdb *db, int64_t run, const char *model,
                                       const char *what, const char *device, int64_t batch,
                                       struct xo_perf_meas *m)
{
	struct xo_sql_stmt *s = NULL;
	int64_t id = 0;

	memset(m, 0, sizeof(*m));
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT res.id FROM results res JOIN benchmarks b"
	                       " ON b.id = res.benchmark_id WHERE res.run_id = ? AND"
	                       " b.kind = 'model' AND b.model = ? AND b.what = ? AND b.device = ?"
	                       " AND b.batch = ? AND b.metric = 'time'", &s))
		return xo_perf_query_err(db, "finding a result");
	xo_sql_bind_int64(s, 1, run);
	xo_sql_bind_text(s, 2, model);
	xo_sql_bind_text(s, 3, what);
	xo_sql_bind_text(s, 4, device);
	xo_sql_bind_int64(s, 5, batch);
	if (xo_sql_step(s) == XO_SQL_ROW)
		id = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	return id ? xo_perf_query_meas(db, id, m) : XO_OK;
}

/* The models the store holds model benchmarks of (ours or peers'), by name. */
int xo_perf_query_models(struct xo_perfdb *db, char (*names)[64], int max)
{
	struct xo_sql_stmt *s = NULL;
	int n = 0;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   /* GROUP BY, not DISTINCT: PostgreSQL orders DISTINCT rows
	                    * only by what they select */
	                   "SELECT b.model FROM benchmarks b WHERE b.kind = 'model'"
	                   " AND b.model != '' AND b.metric = 'time' AND EXISTS (SELECT 1 FROM "
	                   "results res JOIN runs"
	                   " ru ON ru.id = res.run_id WHERE res.benchmark_id = b.id AND"
	                   " ru.state = 'complete') GROUP BY b.model"
	                   " ORDER BY b.model = 'seed' DESC, b.model",
	                   &s))
		return 0;
	while (n < max && xo_sql_step(s) == XO_SQL_ROW)
		snprintf(names[n++], 64, "%s", xo_perf_query_text(s, 0));
	xo_sql_finalize(s);
	return n;
}

bool xo_perf_vec_push(struct xo_perf_vec *a, double x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		double *v = realloc(a->v, cap * sizeof(*v));

		if (!v)
			return false;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return true;
}

enum xo_status xo_perf_query_samples(struct xo_perfdb *db, int64_t result_id,
                                     struct xo_perf_vec *out)
{
	struct xo_sql_stmt *s = NULL;
	int rc;

	out->n = 0;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT wall_s FROM samples WHERE result_id = ? ORDER BY idx", &s))
		return xo_perf_query_err(db, "reading samples");
	xo_sql_bind_int64(s, 1, result_id);
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW)
		if (!xo_perf_vec_push(out, xo_sql_column_double(s, 0))) {
			xo_sql_finalize(s);
			return xo_error(XO_ENOMEM, "perf: out of memory");
		}
	xo_sql_finalize(s);
	return rc == XO_SQL_DONE ? XO_OK : xo_perf_query_err(db, "reading samples");
}
