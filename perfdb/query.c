/*
 * query.c - reads of the store (query.h says which): compare, detect, the
 * report and advise call these instead of preparing their own SELECTs.
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

/* qsort order of rows led by a struct xo_perf_hist_key: history order. */
int xo_perf_hist_key_cmp(const void *pa, const void *pb)
{
	const struct xo_perf_hist_key *a = pa, *b = pb;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->run < b->run ? -1 : a->run > b->run;
}

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

/* The latest complete run that measured our own devices (not a peer import). */
enum xo_status xo_perf_query_latest_own_run(struct xo_perfdb *db, int64_t testbed, int64_t *run)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;

	if (xo_sql_prepare(
	        xo_perfdb_sql(db),
	        "SELECT max(ru.id) FROM runs ru JOIN results res ON res.run_id = ru.id"
	        " JOIN benchmarks b ON b.id = res.benchmark_id"
	        " WHERE ru.state = 'complete' AND (b.device IN ('ref','cpu')"
	        " OR b.device LIKE 'cl%') AND b.metric = 'time' AND (? = 0 OR ru.testbed_id = ?)",
	        &s))
		return xo_perf_query_err(db, "finding the latest run");
	xo_sql_bind_int64(s, 1, testbed);
	xo_sql_bind_int64(s, 2, testbed);
	if (xo_sql_step(s) != XO_SQL_ROW || xo_sql_column_null(s, 0))
		st = xo_error(XO_EINVAL,
		              "no complete run of ref/cpu/cl recorded yet%s: run `xo perf "
		              "record` first",
		              testbed ? " on that testbed" : "");
	else
		*run = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	return st;
}

/* The number of complete runs with results (on testbed only; 0: all). */
int64_t xo_perf_query_count_runs(struct xo_perfdb *db, int64_t only)
{
	struct xo_sql_stmt *s = NULL;
	int64_t n = 0;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT count(*) FROM runs ru WHERE ru.state = 'complete' AND"
	                       " (? = 0 OR ru.testbed_id = ?) AND EXISTS (SELECT 1 FROM results"
	                       " res WHERE res.run_id = ru.id)", &s))
		return -1;
	xo_sql_bind_int64(s, 1, only);
	xo_sql_bind_int64(s, 2, only);
	if (xo_sql_step(s) == XO_SQL_ROW)
		n = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	return n;
}

enum xo_status xo_perf_query_run(struct xo_perfdb *db, int64_t id, struct xo_perf_run_info *r)
{
	char sql[1024] = "SELECT c.sha, c.subject, c.dirty, r.started, r.note, r.testbed_id,"
	                 " coalesce(r.load_start, -1), coalesce(r.load_end, -1),"
	                 " coalesce(r.others_cpu, -1), r.commit_id";
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;

	for (size_t i = 0; i < XO_PERF_NFIELDS; i++)
		snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql), ", t.%s",
		         xo_perf_testbed_fields[i]);
	snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql),
	         " FROM runs r JOIN commits c ON c.id = r.commit_id"
	         " JOIN testbeds t ON t.id = r.testbed_id WHERE r.id = ?");
	if (xo_sql_prepare(xo_perfdb_sql(db), sql, &s))
		return xo_perf_query_err(db, "reading a run");
	xo_sql_bind_int64(s, 1, id);
	if (xo_sql_step(s) != XO_SQL_ROW) {
		st = xo_error(XO_EINVAL, "no run %lld", (long long)id);
		goto out;
	}
	memset(r, 0, sizeof(*r));
	r->id = id;
	snprintf(r->sha, sizeof(r->sha), "%s", xo_perf_query_text(s, 0));
	snprintf(r->subject, sizeof(r->subject), "%s",
	         xo_sql_column_text(s, 1) ? xo_perf_query_text(s, 1) : "");
	r->dirty = xo_sql_column_int(s, 2);
	r->started = xo_sql_column_int64(s, 3);
	snprintf(r->note, sizeof(r->note), "%s",
	         xo_sql_column_text(s, 4) ? xo_perf_query_text(s, 4) : "");
	r->testbed_id = xo_sql_column_int64(s, 5);
	r->load_start = xo_sql_column_double(s, 6);
	r->load_end = xo_sql_column_double(s, 7);
	r->others = xo_sql_column_double(s, 8);
	r->commit_id = xo_sql_column_int64(s, 9);
	for (size_t i = 0; i < XO_PERF_NFIELDS; i++) {
		const char *t = xo_sql_column_text(s, 10 + (int)i);

		snprintf(r->field[i], sizeof(r->field[i]), "%s", t ? (const char *)t : "");
	}
out:
	xo_sql_finalize(s);
	return st;
}

/* The testbed's description of its devices ("" when not there). */
void xo_perf_query_testbed_describe(struct xo_perfdb *db, int64_t testbed, char *buf, size_t size)
{
	struct xo_sql_stmt *s = NULL;

	buf[0] = '\0';
	if (xo_sql_prepare(xo_perfdb_sql(db), "SELECT describe FROM testbeds WHERE id = ?", &s))
		return;
	xo_sql_bind_int64(s, 1, testbed);
	if (xo_sql_step(s) == XO_SQL_ROW && xo_sql_column_text(s, 0))
		snprintf(buf, size, "%s", xo_perf_query_text(s, 0));
	xo_sql_finalize(s);
}

/*
 * Each side must hold series of the metric compared: runs recorded with
 * --metric instructions only, compared for time, have nothing to compare,
 * and "0 slower, 0 faster" would read as a pass. XO_EINVAL naming the side
 * and what it holds instead.
 */
enum xo_status xo_perf_query_has_metric(struct xo_perfdb *db, const char *what, const char *spec,
                                        const char *ids, const char *metric)
{
	struct xo_sql_stmt *s = NULL;
	char sql[9000];
	int64_t mine = 0, other = 0;

	snprintf(sql, sizeof(sql),
	         "SELECT count(CASE WHEN b.metric = ? THEN 1 END),"
	         " count(CASE WHEN b.metric != ? THEN 1 END) FROM results r"
	         " JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.run_id IN (%s)",
	         ids);
	if (xo_sql_prepare(xo_perfdb_sql(db), sql, &s))
		return xo_perf_query_err(db, "reading the metrics of a run");
	xo_sql_bind_text(s, 1, metric);
	xo_sql_bind_text(s, 2, metric);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		mine = xo_sql_column_int64(s, 0);
		other = xo_sql_column_int64(s, 1);
	}
	xo_sql_finalize(s);
	if (mine || !other)
		return XO_OK;
	return xo_error(XO_EINVAL,
	                "%s %s holds no %s series, only %s: compare --metric %s (or record "
	                "--metric %s)",
	                what, spec ? spec : "(the latest run)", metric,
	                strcmp(metric, "time") ? "times" : "instruction counts",
	                strcmp(metric, "time") ? "time" : "instructions", metric);
}

/*
 * The points of one (benchmark, testbed) history from its results: one per
 * commit, in history order (the commit graph's: order.c), each with the
 * kernel-source version of its latest run, and its median and standard
 * error from the stored summary when the commit has one run with one (the
 * store computes it from the same samples with xo_perf_summarize, so it is
 * what the samples give). *need_samples when some commit pools several runs
 * or lacks a summary: then only the samples tell.
 */
enum xo_status xo_perf_query_points(struct xo_perfdb *db, const struct xo_perf_order *ord,
                                    int64_t bench, int64_t testbed, struct xo_perf_series *se,
                                    bool *need_samples)
{
	struct xo_sql_stmt *s = NULL;
	struct xo_perf_rrow *r = NULL;
	size_t nr = 0, cap = 0;
	enum xo_status st = XO_OK;
	int rc;

	se->samples.n = 0;
	se->npt = 0;
	*need_samples = false;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT ru.commit_id, ru.id, res.version, res.median, res.q1, res.q3,"
	                   " res.n, res.median IS NOT NULL AND res.q1 IS NOT NULL AND"
	                   " res.q3 IS NOT NULL AND res.n > 0"
	                   " FROM results res JOIN runs ru ON ru.id = res.run_id"
	                   " WHERE res.benchmark_id = ?1 AND ru.testbed_id = ?2"
	                   " AND ru.state = 'complete'", &s))
		return xo_perf_query_err(db, "reading a history");
	xo_sql_bind_int64(s, 1, bench);
	xo_sql_bind_int64(s, 2, testbed);
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW) {
		const char *v = xo_perf_query_text(s, 2);

		if (nr == cap) {
			size_t c2 = cap ? 2 * cap : 256;
			struct xo_perf_rrow *p = realloc(r, c2 * sizeof(*p));

			if (!p) {
				st = xo_error(XO_ENOMEM, "perf: out of memory");
				goto out;
			}
			r = p;
			cap = c2;
		}
		r[nr].commit = xo_sql_column_int64(s, 0);
		if (!xo_perf_order_main(ord, r[nr].commit))
			continue; /* a side branch: compared against its base only */
		r[nr].k.rank = xo_perf_order_rank(ord, r[nr].commit);
		r[nr].k.run = xo_sql_column_int64(s, 1);
		r[nr].known = xo_perf_version_known(v);
		r[nr].ver = xo_perf_fnv(0xcbf29ce484222325ULL, v, strlen(v));
		r[nr].med = xo_sql_column_double(s, 3);
		r[nr].q1 = xo_sql_column_double(s, 4);
		r[nr].q3 = xo_sql_column_double(s, 5);
		r[nr].n = xo_sql_column_int64(s, 6);
		r[nr].summary = xo_sql_column_int(s, 7) != 0;
		nr++;
	}
	if (rc != XO_SQL_DONE) {
		st = xo_perf_query_err(db, "reading a history");
		goto out;
	}
	if (nr)
		qsort(r, nr, sizeof(*r), xo_perf_hist_key_cmp);
	for (size_t i = 0; i < nr; i++) {
		struct xo_perf_point *p;

		if (se->npt && se->pt[se->npt - 1].commit_id == r[i].commit) {
			*need_samples = true; /* a point pools several runs */
			p = &se->pt[se->npt - 1];
		} else {
			if (se->npt == se->cap) {
				size_t c2 = se->cap ? 2 * se->cap : 32;
				struct xo_perf_point *np = realloc(se->pt, c2 * sizeof(*np));

				if (!np) {
					st = xo_error(XO_ENOMEM, "perf: out of memory");
					goto out;
				}
				se->pt = np;
				se->cap = c2;
			}
			p = &se->pt[se->npt++];
			*p = (struct xo_perf_point){.commit_id = r[i].commit, .rank = r[i].k.rank};
			p->y = r[i].med;
			p->se = 1.2533 * ((r[i].q3 - r[i].q1) / 1.349) / sqrt((double)r[i].n);
		}
		if (!r[i].summary)
			*need_samples = true;
		p->ver_run = r[i].k.run; /* ascending within a commit: the latest wins */
		p->ver_known = r[i].known;
		p->ver = r[i].ver;
	}
out:
	xo_sql_finalize(s);
	free(r);
	return st;
}

/* Take a run's others into a load (least < 0: none yet); unknown (< 0) is
 * left out, as compare's sides leave such runs out. */
void xo_perf_load_widen(struct xo_perf_load *l, double others)
{
	if (others >= 0)
		l->least = l->least < 0 ? others : fmin(l->least, others);
}

/*
 * The raw samples of the history's points (xo_perf_query_points first), each point's
 * samples contiguous and the points' in history order. One read of the
 * samples, unordered (the order is the graph's, which SQL does not know),
 * sorted here. With resummarize each point's median and standard error are
 * computed from them (a point that pools runs, a result with no summary).
 */
enum xo_status xo_perf_query_series_samples(struct xo_perfdb *db, const struct xo_perf_order *ord,
                                            int64_t bench, int64_t testbed,
                                            struct xo_perf_series *se, bool resummarize)
{
	struct xo_sql_stmt *s = NULL;
	size_t nrows = 0, k = 0;
	int rc;

	se->samples.n = 0;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT ru.commit_id, ru.id, sm.wall_s, coalesce(ru.others_cpu, -1)"
	                   " FROM samples sm"
	                   " JOIN results res ON res.id = sm.result_id"
	                   " JOIN runs ru ON ru.id = res.run_id"
	                   " WHERE res.benchmark_id = ?1 AND ru.testbed_id = ?2"
	                   " AND ru.state = 'complete'", &s))
		return xo_perf_query_err(db, "reading a history");
	xo_sql_bind_int64(s, 1, bench);
	xo_sql_bind_int64(s, 2, testbed);
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW) {
		int64_t commit = xo_sql_column_int64(s, 0);

		if (nrows == se->caprows) {
			size_t cap = se->caprows ? 2 * se->caprows : 1024;
			struct xo_perf_srow *p = realloc(se->rows, cap * sizeof(*p));

			if (!p) {
				xo_sql_finalize(s);
				return xo_error(XO_ENOMEM, "perf: out of memory");
			}
			se->rows = p;
			se->caprows = cap;
		}
		se->rows[nrows++] = (struct xo_perf_srow){{xo_perf_order_rank(ord, commit),
		                                   xo_sql_column_int64(s, 1)},
		                                  commit,
		                                  xo_sql_column_double(s, 2),
		                                  xo_sql_column_double(s, 3)};
	}
	xo_sql_finalize(s);
	if (rc != XO_SQL_DONE)
		return xo_perf_query_err(db, "reading a history");
	qsort(se->rows, nrows, sizeof(*se->rows), xo_perf_hist_key_cmp);
	/* rows of a commit xo_perf_query_points did not see (written since) are left out */
	for (size_t r = 0, i = 0; i < se->npt; i++) {
		struct xo_perf_point *p = &se->pt[i];

		p->first = se->samples.n;
		p->n = 0;
		p->load = (struct xo_perf_load){-1.0};
		while (r < nrows && se->rows[r].k.rank < p->rank)
			r++;
		for (; r < nrows && se->rows[r].k.rank == p->rank; r++, p->n++) {
			xo_perf_load_widen(&p->load, se->rows[r].others);
			if (!xo_perf_vec_push(&se->samples, se->rows[r].v))
				return xo_error(XO_ENOMEM, "perf: out of memory");
		}
		if (p->n || !resummarize)
			se->pt[k++] = *p; /* a point with no samples is no point */
	}
	if (resummarize)
		se->npt = k;
	for (size_t i = 0; resummarize && i < se->npt; i++) {
		struct xo_perf_point *p = &se->pt[i];
		struct xo_perf_summary sum;
		double *x = malloc((p->n ? p->n : 1) * sizeof(*x));

		if (!x)
			return xo_error(XO_ENOMEM, "perf: out of memory");
		memcpy(x, se->samples.v + p->first, p->n * sizeof(*x));
		xo_perf_summarize(x, p->n, &sum);
		free(x);
		p->y = sum.median;
		p->se = 1.2533 * ((sum.q3 - sum.q1) / 1.349) / sqrt((double)p->n);
	}
	return XO_OK;
}

/* Index of the first point after the last accepted change: the baseline. */
size_t xo_perf_query_baseline_start(struct xo_perfdb *db, int64_t bench, int64_t testbed,
                                    const struct xo_perf_series *se)
{
	struct xo_sql_stmt *s = NULL;
	size_t start = 0;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT commit_id FROM changes WHERE benchmark_id = ? AND"
	                       " testbed_id = ? AND state = 'accepted'", &s))
		return 0;
	xo_sql_bind_int64(s, 1, bench);
	xo_sql_bind_int64(s, 2, testbed);
	while (xo_sql_step(s) == XO_SQL_ROW) {
		int64_t c = xo_sql_column_int64(s, 0);

		for (size_t i = 0; i < se->npt; i++)
			if (se->pt[i].commit_id == c && i > start)
				start = i;
	}
	xo_sql_finalize(s);
	return start;
}

enum xo_status xo_perf_query_side(struct xo_perfdb *db, struct xo_perf_side *sd)
{
	struct xo_sql *h = xo_perfdb_sql(db);
	struct xo_sql_stmt *s = NULL;
	enum xo_status st;
	int64_t latest_own = 0;

	if (sd->commit_id) {
		if (xo_sql_prepare(h,
		                   "SELECT ru.id, " XO_PERF_OWN_RUN_SQL " FROM runs ru"
		                   " WHERE ru.commit_id = ? AND ru.testbed_id = ?"
		                   " AND ru.state = 'complete' AND ru.id > ? ORDER BY ru.id",
		                   &s))
			return xo_perf_query_err(db, "finding the runs of a commit");
		xo_sql_bind_int64(s, 1, sd->commit_id);
		xo_sql_bind_int64(s, 2, sd->testbed_id);
		xo_sql_bind_int64(s, 3, sd->after_run);
		while (xo_sql_step(s) == XO_SQL_ROW && sd->nruns < XO_PERF_MAX_SIDE_RUNS) {
			sd->runs[sd->nruns] = xo_sql_column_int64(s, 0);
			sd->peer[sd->nruns] = !xo_sql_column_int(s, 1);
			if (!sd->peer[sd->nruns])
				latest_own = sd->runs[sd->nruns];
			sd->nruns++;
		}
		xo_sql_finalize(s);
		if (!sd->nruns)
			return xo_error(XO_EINVAL, "no complete run of the commit");
	}
	if (!latest_own)
		latest_own = sd->runs[sd->nruns - 1];
	if ((st = xo_perf_query_run(db, latest_own, &sd->info)))
		return st;
	sd->others = sd->others_lo = sd->load = -1.0;
	for (size_t i = 0; i < sd->nruns; i++) {
		struct xo_perf_run_info *r = malloc(sizeof(*r));

		if (!r)
			return xo_error(XO_ENOMEM, "perf: out of memory");
		if (!sd->peer[i] && !xo_perf_query_run(db, sd->runs[i], r)) {
			sd->others = fmax(sd->others, r->others);
			if (r->others >= 0 && (sd->others_lo < 0 || r->others < sd->others_lo))
				sd->others_lo = r->others;
			sd->load = fmax(sd->load, fmax(r->load_start, r->load_end));
		}
		free(r);
	}
	return XO_OK;
}

/*
 * The samples of benchmark bench over the side's runs (own and peer: a
 * benchmark belongs to one or the other), run after run, in all, and the
 * number each run gave in per_run; the kernel-source version of the latest
 * run measuring it in version.
 */
enum xo_status xo_perf_query_pooled(struct xo_perfdb *db, const struct xo_perf_side *sd, int64_t bench,
                                    struct xo_perf_vec *all, size_t *per_run, size_t *nruns,
                                    char *version, size_t vsize)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;

	all->n = 0;
	*nruns = 0;
	version[0] = '\0';
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT id, version FROM results WHERE benchmark_id = ? AND run_id = ?",
	                   &s))
		return xo_perf_query_err(db, "reading results");
	for (size_t i = 0; i < sd->nruns; i++) {
		xo_sql_bind_int64(s, 1, bench);
		xo_sql_bind_int64(s, 2, sd->runs[i]);
		if (xo_sql_step(s) == XO_SQL_ROW) {
			const char *v = xo_sql_column_text(s, 1);
			size_t before = all->n;
			struct xo_perf_vec one = {0};

			snprintf(version, vsize, "%s", v ? (const char *)v : "");
			if ((st = xo_perf_query_samples(db, xo_sql_column_int64(s, 0), &one)))
				break;
			for (size_t k = 0; k < one.n; k++)
				if (!xo_perf_vec_push(all, one.v[k])) {
					free(one.v);
					st = xo_error(XO_ENOMEM, "perf: out of memory");
					goto out;
				}
			free(one.v);
			if (all->n > before)
				per_run[(*nruns)++] = all->n - before;
		}
		xo_sql_reset(s);
	}
out:
	xo_sql_finalize(s);
	return st;
}

/*
 * The legend of the cl curve: what kind of device the run's OpenCL device is.
 * PoCL (and any CPU device) is OpenCL on the CPU, never "the GPU"; the testbed keeps the platform
 * and device the cl backend reported.
 */
const char *xo_perf_query_cl_label(struct xo_perfdb *db, int64_t run)
{
	struct xo_sql_stmt *s = NULL;
	const char *label = "cl (OpenCL)";

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT t.cl_platform || ' ' || t.cl_device || ' ' || t.describe"
	                   " FROM runs ru JOIN testbeds t ON t.id = ru.testbed_id WHERE ru.id = ?",
	                   &s))
		return label;
	xo_sql_bind_int64(s, 1, run);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		const char *d = xo_perf_query_text(s, 0);

		if (strstr(d, "PoCL") || strstr(d, "Portable Computing Language"))
			label = "cl: OpenCL on the CPU (PoCL)";
		else if (xo_perf_cl_on_cpu(d))
			label = "cl: OpenCL on the CPU";
		else if (strstr(d, "type GPU"))
			label = "cl: OpenCL on the GPU";
	}
	xo_sql_finalize(s);
	return label;
}

/* The load bound's cores and threads for a series (verdict.c, step 7), as
 * compare takes them; none when the testbed is not read. */
void xo_perf_query_threads(struct xo_perfdb *db, int64_t bench, int64_t testbed,
                           struct xo_perf_rule *rule)
{
	struct xo_sql_stmt *s = NULL;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT t.cores, t.describe, b.device, b.name FROM testbeds t,"
	                   " benchmarks b WHERE t.id = ? AND b.id = ?", &s))
		return;
	xo_sql_bind_int64(s, 1, testbed);
	xo_sql_bind_int64(s, 2, bench);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		const char *dev = xo_sql_column_text(s, 2) ? xo_perf_query_text(s, 2) : "";
		const char *name = xo_perf_query_text(s, 3), *slash = strrchr(name, '/');

		rule->cores = xo_sql_column_double(s, 0) > 0 ? xo_sql_column_double(s, 0) : 1.0;
		/* older stores: the device ends the name */
		rule->threads = xo_perf_bench_threads(
		    dev[0]  ? dev
		    : slash ? slash + 1
		            : name,
		    xo_sql_column_text(s, 1) ? xo_perf_query_text(s, 1) : "", rule->cores);
	}
	xo_sql_finalize(s);
}

/* The log medians of a series' complete runs on testbed up to run upto_run,
 * but those of commit skip_commit and of side branches, each placed in
 * history order o (unsorted) into *out (n of them, malloc'ed; what could be
 * read when memory runs out, nothing when the store cannot be read). */
void xo_perf_query_run_medians(struct xo_perfdb *db, const struct xo_perf_order *o, int64_t bench,
                               int64_t testbed, int64_t upto_run, int64_t skip_commit,
                               struct xo_perf_placed **out, size_t *nout)
{
	struct xo_sql_stmt *s = NULL;
	struct xo_perf_placed *m = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	*nout = 0;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT ru.commit_id, ru.id, res.median FROM results res"
	                   " JOIN runs ru ON ru.id = res.run_id"
	                   " WHERE res.benchmark_id = ? AND ru.testbed_id = ? AND ru.id <= ?"
	                   " AND ru.commit_id != ? AND ru.state = 'complete'"
	                   " AND res.median > 0",
	                   &s))
		return;
	xo_sql_bind_int64(s, 1, bench);
	xo_sql_bind_int64(s, 2, testbed);
	xo_sql_bind_int64(s, 3, upto_run);
	xo_sql_bind_int64(s, 4, skip_commit);
	while (xo_sql_step(s) == XO_SQL_ROW) {
		if (!xo_perf_order_main(o, xo_sql_column_int64(s, 0)))
			continue; /* a side branch is not in the history */
		if (n == cap) {
			size_t c2 = cap ? 2 * cap : 64;
			struct xo_perf_placed *p = realloc(m, c2 * sizeof(*p));

			if (!p)
				break;
			*out = m = p;
			cap = c2;
		}
		m[n++] = (struct xo_perf_placed){
		    {xo_perf_order_rank(o, xo_sql_column_int64(s, 0)), xo_sql_column_int64(s, 1)},
		    log(xo_sql_column_double(s, 2))};
	}
	xo_sql_finalize(s);
	*nout = n;
}

/* How many benchmarks of metric the runs ib (a list of run ids) measured
 * that the runs ih did not, and the other way round; left as they are when
 * the store cannot say. */
void xo_perf_query_only_counts(struct xo_perfdb *db, const char *ib, const char *ih,
                               const char *metric, int64_t *only_base, int64_t *only_head)
{
	struct xo_sql_stmt *s = NULL;
	char sql[17000];

	snprintf(sql, sizeof(sql),
	         "SELECT (SELECT count(DISTINCT benchmark_id) FROM results WHERE run_id IN (%s) AND"
	         " benchmark_id NOT IN (SELECT benchmark_id FROM results WHERE run_id IN (%s))"
	         " AND benchmark_id IN (SELECT id FROM benchmarks WHERE metric = ?1)),"
	         " (SELECT count(DISTINCT benchmark_id) FROM results WHERE run_id IN (%s) AND"
	         " benchmark_id NOT IN (SELECT benchmark_id FROM results WHERE run_id IN (%s))"
	         " AND benchmark_id IN (SELECT id FROM benchmarks WHERE metric = ?1))",
	         ib, ih, ih, ib);
	if (xo_sql_prepare(xo_perfdb_sql(db), sql, &s) == XO_SQL_OK &&
	    (xo_sql_bind_text(s, 1, metric), xo_sql_step(s) == XO_SQL_ROW)) {
		*only_base = xo_sql_column_int64(s, 0);
		*only_head = xo_sql_column_int64(s, 1);
	}
	xo_sql_finalize(s);
}

/* The rows of detect_state (what the last detect fitted per series), in
 * (benchmark, testbed) order, appended to *out (*n of them, malloc'ed; the
 * caller frees it, also on an error). */
enum xo_status xo_perf_query_fitted(struct xo_perfdb *db, struct xo_perf_fitted **out, size_t *n)
{
	struct xo_sql_stmt *s = NULL;
	size_t cap = *n;
	int rc;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT benchmark_id, testbed_id, results, last_run, settings,"
	                   " order_upto, order_hash FROM detect_state"
	                   " ORDER BY benchmark_id, testbed_id", &s))
		return xo_perf_query_err(db, "reading detect_state");
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW) {
		struct xo_perf_fitted *f;

		if (*n == cap) {
			size_t c2 = cap ? 2 * cap : 64;
			struct xo_perf_fitted *p = realloc(*out, c2 * sizeof(*p));

			if (!p) {
				xo_sql_finalize(s);
				return xo_error(XO_ENOMEM, "perf: out of memory");
			}
			*out = p;
			cap = c2;
		}
		f = &(*out)[(*n)++];
		f->bench = xo_sql_column_int64(s, 0);
		f->testbed = xo_sql_column_int64(s, 1);
		f->results = xo_sql_column_int64(s, 2);
		f->last_run = xo_sql_column_int64(s, 3);
		snprintf(f->settings, sizeof(f->settings), "%s", xo_perf_query_text(s, 4));
		f->upto = xo_sql_column_int64(s, 5);
		snprintf(f->hash, sizeof(f->hash), "%s", xo_perf_query_text(s, 6));
	}
	xo_sql_finalize(s);
	if (rc != XO_SQL_DONE)
		return xo_perf_query_err(db, "reading detect_state");
	return XO_OK;
}

/* The largest run id in the store (0: none); XO_EDB naming db_path when it
 * cannot be read. */
enum xo_status xo_perf_query_last_run(struct xo_perfdb *db, const char *db_path, int64_t *id)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;

	if (xo_sql_prepare(xo_perfdb_sql(db), "SELECT coalesce(max(id), 0) FROM runs", &s) ==
	        XO_SQL_OK &&
	    xo_sql_step(s) == XO_SQL_ROW)
		*id = xo_sql_column_int64(s, 0);
	else
		st = xo_error(XO_EDB, "%s: reading the runs: %s", db_path,
		              xo_sql_errmsg(xo_perfdb_sql(db)));
	xo_sql_finalize(s);
	return st;
}
