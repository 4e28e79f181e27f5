/*
 * query_rows.c - the reads whose rows their caller prints as they come (the
 * report's sections, detect's change listing, advise's evidence line) or
 * folds as it steps (compare's benchmark list, answer's layer times). Each
 * prepares its SELECT and binds its parameters; query.h lists the columns
 * each row holds. The caller steps the statement and finalizes it, and on a
 * failed prepare reads the engine's message (xo_perf_query_err) itself.
 */
#include <stdio.h>

#include "perfdb.h"
#include "query.h"
#include "sql.h"

static struct xo_sql *sql_of(struct xo_perfdb *db)
{
	return xo_perfdb_sql(db);
}

/* ---- runs and testbeds ---- */

int xo_perf_rows_run_evidence(struct xo_perfdb *db, int64_t run, struct xo_sql_stmt **s)
{
	int rc = xo_sql_prepare(sql_of(db),
	                        "SELECT c.sha, c.dirty, ru.started, t.hostname,"
	                        " t.cpu_model, t.cl_device FROM runs ru"
	                        " JOIN commits c ON c.id = ru.commit_id"
	                        " JOIN testbeds t ON t.id = ru.testbed_id WHERE ru.id = ?",
	                        s);

	if (rc == XO_SQL_OK)
		xo_sql_bind_int64(*s, 1, run);
	return rc;
}

int xo_perf_rows_run_latest(struct xo_perfdb *db, int64_t run, struct xo_sql_stmt **s)
{
	int rc = xo_sql_prepare(sql_of(db),
	                        "SELECT ru.testbed_id, c.sha, c.dirty, c.subject, ru.started,"
	                        " t.hostname, t.cpu_model, t.cores, t.blas_config, t.blas_coretype,"
	                        " t.cl_device, t.compiler, t.cflags, t.env"
	                        " FROM runs ru JOIN commits c ON c.id = ru.commit_id"
	                        " JOIN testbeds t ON t.id = ru.testbed_id WHERE ru.id = ?",
	                        s);

	if (rc == XO_SQL_OK)
		xo_sql_bind_int64(*s, 1, run);
	return rc;
}

int xo_perf_rows_run_testbed(struct xo_perfdb *db, int64_t run, struct xo_sql_stmt **s)
{
	int rc = xo_sql_prepare(sql_of(db),
	                        "SELECT t.hostname, t.cpu_model, t.cores, t.blas_config,"
	                        " t.blas_coretype, t.cl_device, t.compiler, t.cflags, t.env"
	                        " FROM runs ru JOIN testbeds t ON t.id = ru.testbed_id"
	                        " WHERE ru.id = ?",
	                        s);

	if (rc == XO_SQL_OK)
		xo_sql_bind_int64(*s, 1, run);
	return rc;
}

int xo_perf_rows_run_before(struct xo_perfdb *db, int64_t testbed, int64_t run,
                            struct xo_sql_stmt **s)
{
	int rc = xo_sql_prepare(sql_of(db),
	                        "SELECT max(ru.id) FROM runs ru WHERE ru.state = 'complete' AND"
	                        " ru.testbed_id = ? AND ru.id < ? AND EXISTS (SELECT 1 FROM results"
	                        " res JOIN benchmarks b ON b.id = res.benchmark_id WHERE"
	                        " res.run_id = ru.id AND b.metric = 'time' AND"
	                        " (b.device IN ('ref','cpu') OR b.device LIKE 'cl%'))",
	                        s);

	if (rc == XO_SQL_OK) {
		xo_sql_bind_int64(*s, 1, testbed);
		xo_sql_bind_int64(*s, 2, run);
	}
	return rc;
}

int xo_perf_rows_side_commit(struct xo_perfdb *db, int64_t run, int64_t want_testbed,
                             struct xo_sql_stmt **s)
{
	int rc = xo_sql_prepare(
	    sql_of(db),
	    "SELECT ru.commit_id, ru.testbed_id FROM runs ru"
	    " WHERE ru.commit_id IN (SELECT c2.id FROM commits c2 WHERE c2.sha ="
	    " (SELECT c.sha FROM runs r JOIN commits c ON c.id = r.commit_id"
	    " WHERE r.id = ?1)) AND ru.state = 'complete'"
	    " ORDER BY " XO_PERF_OWN_RUN_SQL " DESC, ru.testbed_id = ?2 DESC, ru.id DESC"
	    " LIMIT 1",
	    s);

	if (rc == XO_SQL_OK) {
		xo_sql_bind_int64(*s, 1, run);
		xo_sql_bind_int64(*s, 2, want_testbed);
	}
	return rc;
}

int xo_perf_rows_testbeds(struct xo_perfdb *db, int64_t only, struct xo_sql_stmt **s)
{
	int rc = xo_sql_prepare(sql_of(db),
	                        "SELECT t.id, t.hostname, t.hash, t.cpu_model, count(*), max(ru.id)"
	                        " FROM testbeds t JOIN runs ru ON ru.testbed_id = t.id"
	                        " WHERE ru.state = 'complete' AND (? = 0 OR t.id = ?)"
	                        " GROUP BY t.id, t.hostname, t.hash, t.cpu_model"
	                        " ORDER BY t.hostname, t.hash",
	                        s);

	if (rc == XO_SQL_OK) {
		xo_sql_bind_int64(*s, 1, only);
		xo_sql_bind_int64(*s, 2, only);
	}
	return rc;
}

/* ---- benchmarks and their results ---- */

int xo_perf_rows_compared(struct xo_perfdb *db, const char *ib, const char *ih, const char *metric,
                          struct xo_sql_stmt **s)
{
	char sql[17000];
	int rc;

	snprintf(sql, sizeof(sql),
	         "SELECT b.id, b.name, b.device, b.metric FROM benchmarks b"
	         " WHERE b.metric = ? AND EXISTS (SELECT 1 FROM results r WHERE"
	         " r.benchmark_id = b.id AND r.run_id IN (%s)) AND EXISTS (SELECT 1 FROM"
	         " results r WHERE r.benchmark_id = b.id AND r.run_id IN (%s)) ORDER BY b.name",
	         ib, ih);
	rc = xo_sql_prepare(sql_of(db), sql, s);
	if (rc == XO_SQL_OK)
		xo_sql_bind_text(*s, 1, metric);
	return rc;
}

int xo_perf_rows_series_list(struct xo_perfdb *db, int64_t testbed, struct xo_sql_stmt **s)
{
	int rc = xo_sql_prepare(sql_of(db),
	                        "SELECT res.benchmark_id, ru.testbed_id, b.name, b.metric,"
	                        " count(*), max(ru.id)"
	                        " FROM results res JOIN runs ru ON ru.id = res.run_id"
	                        " JOIN benchmarks b ON b.id = res.benchmark_id"
	                        " WHERE ru.state = 'complete' AND (?1 = 0 OR ru.testbed_id = ?1)"
	                        " GROUP BY res.benchmark_id, ru.testbed_id, b.name, b.metric"
	                        " ORDER BY b.name, ru.testbed_id",
	                        s);

	if (rc == XO_SQL_OK)
		xo_sql_bind_int64(*s, 1, testbed);
	return rc;
}

int xo_perf_rows_series_members(struct xo_perfdb *db, int64_t only, struct xo_sql_stmt **s)
{
	int rc = xo_sql_prepare(sql_of(db),
	                        "SELECT DISTINCT b.id, b.name, b.device, ru.testbed_id FROM results"
	                        " res JOIN benchmarks b ON b.id = res.benchmark_id JOIN runs ru ON"
	                        " ru.id = res.run_id WHERE (? = 0 OR ru.testbed_id = ?) AND"
	                        " ru.state = 'complete'",
	                        s);

	if (rc == XO_SQL_OK) {
		xo_sql_bind_int64(*s, 1, only);
		xo_sql_bind_int64(*s, 2, only);
	}
	return rc;
}

int xo_perf_rows_results(struct xo_perfdb *db, int64_t only, struct xo_sql_stmt **s)
{
	int rc = xo_sql_prepare(sql_of(db),
	                        "SELECT b.name, b.device, b.metric, b.unit, res.median, res.ci_lo,"
	                        " res.ci_hi, res.min FROM results res JOIN benchmarks b ON b.id ="
	                        " res.benchmark_id JOIN runs ru ON ru.id = res.run_id WHERE"
	                        " ru.state = 'complete' AND (? = 0 OR ru.testbed_id = ?)"
	                        " ORDER BY b.name",
	                        s);

	if (rc == XO_SQL_OK) {
		xo_sql_bind_int64(*s, 1, only);
		xo_sql_bind_int64(*s, 2, only);
	}
	return rc;
}

int xo_perf_rows_history(struct xo_perfdb *db, struct xo_sql_stmt **s)
{
	return xo_sql_prepare(
	    sql_of(db),
	    /* the change (changes is unique per benchmark, testbed and
	     * commit) is marked on the commit's first complete run. A join,
	     * and the first run looked up from the change's row (ch.*, not
	     * ru.*): written as a scalar subquery on ru, PostgreSQL hoisted
	     * the min() into a one-time filter evaluated for every point, a
	     * scan of runs each (O(runs^2): 3.2 s a line at 10 000 runs, and
	     * a cost estimate that made it JIT-compile the query as well);
	     * now it runs once per stored change, 33 ms a line */
	    "SELECT ru.commit_id, ru.id, c.sha, c.dirty, res.median, coalesce(res.ci_lo, "
	    "res.median),"
	    " coalesce(res.ci_hi, res.median), res.min, ch.ratio"
	    " FROM results res JOIN runs ru ON ru.id = res.run_id"
	    " JOIN commits c ON c.id = ru.commit_id"
	    " LEFT JOIN changes ch ON ch.benchmark_id = res.benchmark_id"
	    "  AND ch.testbed_id = ru.testbed_id AND ch.commit_id = ru.commit_id"
	    "  AND ch.state != 'ignored'"
	    "  AND ru.id = (SELECT min(r2.id) FROM runs r2 WHERE"
	    "   r2.commit_id = ch.commit_id AND r2.testbed_id = ch.testbed_id"
	    "   AND r2.state = 'complete')"
	    " WHERE res.benchmark_id = ? AND ru.testbed_id = ? AND ru.state = 'complete'",
	    s);
}

void xo_perf_rows_history_bind(struct xo_sql_stmt *s, int64_t bench, int64_t testbed)
{
	xo_sql_reset(s);
	xo_sql_bind_int64(s, 1, bench);
	xo_sql_bind_int64(s, 2, testbed);
}

/* ---- the model sweeps: split, probes, layers ---- */

int xo_perf_rows_split(struct xo_perfdb *db, int64_t run, const char *model, const char *what,
                       struct xo_sql_stmt **s)
{
	int rc =
	    xo_sql_prepare(sql_of(db),
	                   "SELECT res.id, b.batch, b.device, (SELECT count(DISTINCT b2.device)"
	                   "  FROM results r2 JOIN benchmarks b2 ON b2.id = r2.benchmark_id"
	                   "  WHERE r2.run_id = res.run_id AND r2.has_split != 0 AND"
	                   "  b2.kind = 'model' AND b2.model = b.model AND b2.what = b.what"
	                   "  AND b2.metric = 'time')"
	                   " FROM results res JOIN benchmarks b ON b.id = res.benchmark_id"
	                   " WHERE res.run_id = ? AND res.has_split != 0 AND b.kind = 'model'"
	                   " AND b.model = ? AND b.what = ? AND b.metric = 'time'"
	                   " ORDER BY b.device, b.batch",
	                   s);

	if (rc == XO_SQL_OK) {
		xo_sql_bind_int64(*s, 1, run);
		xo_sql_bind_text(*s, 2, model);
		xo_sql_bind_text(*s, 3, what);
	}
	return rc;
}

int xo_perf_rows_probes(struct xo_perfdb *db, int64_t run, struct xo_sql_stmt **s)
{
	int rc = xo_sql_prepare(sql_of(db),
	                        "SELECT device, launch_s, enqueue_s, sync_s, h2d_lat_s, h2d_bw,"
	                        " d2h_lat_s, d2h_bw, flops, mem_bw, handoff_s, units FROM probes"
	                        " WHERE run_id = ? ORDER BY device = 'cpu' DESC, device",
	                        s);

	if (rc == XO_SQL_OK)
		xo_sql_bind_int64(*s, 1, run);
	return rc;
}

int xo_perf_rows_layers(struct xo_perfdb *db, int64_t run, const char *model,
                        struct xo_sql_stmt **s)
{
	char sql[1024];
	int rc;

	/* layers in the order they were stored: the engine's row order */
	snprintf(sql, sizeof(sql),
	         "SELECT b.batch, o.op, o.kernel_s FROM result_ops o"
	         " JOIN results res ON res.id = o.result_id"
	         " JOIN benchmarks b ON b.id = res.benchmark_id"
	         " WHERE res.run_id = ? AND o.dir = 'layer' AND b.kind = 'model'"
	         " AND b.model = ? AND b.what = 'train_step' AND b.metric = 'time'"
	         " ORDER BY b.batch, o.%s",
	         xo_sql_dialect(sql_of(db))->row_order);
	rc = xo_sql_prepare(sql_of(db), sql, s);
	if (rc == XO_SQL_OK) {
		xo_sql_bind_int64(*s, 1, run);
		xo_sql_bind_text(*s, 2, model);
	}
	return rc;
}

int xo_perf_rows_layer_at(struct xo_perfdb *db, int64_t run, const char *model, const char *device,
                          int64_t batch, struct xo_sql_stmt **s)
{
	int rc = xo_sql_prepare(sql_of(db),
	                        "SELECT o.op, o.kernel_s FROM result_ops o"
	                        " JOIN results res ON res.id = o.result_id"
	                        " JOIN benchmarks b ON b.id = res.benchmark_id"
	                        " WHERE res.run_id = ? AND o.dir = 'layer' AND b.kind = 'model'"
	                        " AND b.model = ? AND b.what = 'train_step' AND b.device = ?"
	                        " AND b.batch = ? AND b.metric = 'time'",
	                        s);

	if (rc == XO_SQL_OK) {
		xo_sql_bind_int64(*s, 1, run);
		xo_sql_bind_text(*s, 2, model);
		xo_sql_bind_text(*s, 3, device);
		xo_sql_bind_int64(*s, 4, batch);
	}
	return rc;
}

int xo_perf_rows_layer_sweep(struct xo_perfdb *db, int64_t run, const char *model,
                             const char *device, const char *op, struct xo_sql_stmt **s)
{
	int rc = xo_sql_prepare(sql_of(db),
	                        "SELECT b.batch, o.kernel_s FROM result_ops o"
	                        " JOIN results res ON res.id = o.result_id"
	                        " JOIN benchmarks b ON b.id = res.benchmark_id"
	                        " WHERE res.run_id = ? AND o.dir = 'layer' AND b.kind = 'model'"
	                        " AND b.model = ? AND b.what = 'train_step' AND b.device = ?"
	                        " AND o.op = ? AND b.metric = 'time' ORDER BY b.batch",
	                        s);

	if (rc == XO_SQL_OK) {
		xo_sql_bind_int64(*s, 1, run);
		xo_sql_bind_text(*s, 2, model);
		xo_sql_bind_text(*s, 3, device);
		xo_sql_bind_text(*s, 4, op);
	}
	return rc;
}

/* ---- changes (detect, the report) ---- */

int xo_perf_rows_changes(struct xo_perfdb *db, struct xo_sql_stmt **s)
{
	return xo_sql_prepare(
	    sql_of(db),
	    "SELECT ch.id, ch.state, ch.direction, b.name, c.sha, c.dirty,"
	    " ch.ratio, ch.p_value, ch.testbed_id, b.device,"
	    " coalesce(" XO_PERF_CHANGE_VERSION_SQL(
	        "commit_id") ", ''),"
	                     " coalesce(" XO_PERF_CHANGE_VERSION_SQL(
	                         "prev_commit_id") ", ''),"
	                                           " (SELECT max(ru.others_cpu) FROM runs ru WHERE "
	                                           "ru.testbed_id = ch.testbed_id"
	                                           "  AND ru.state = 'complete' AND ru.commit_id "
	                                           "IN (ch.commit_id, ch.prev_commit_id)),"
	                                           " t.cores, b.metric"
	                                           " FROM changes ch JOIN benchmarks b ON b.id = "
	                                           "ch.benchmark_id"
	                                           " JOIN commits c ON c.id = ch.commit_id JOIN "
	                                           "testbeds t ON t.id = ch.testbed_id"
	                                           " ORDER BY b.device = 'ref' OR NOT (b.device = "
	                                           "'cpu' OR b.device LIKE 'cl%'),"
	                                           " b.device = 'ref' DESC, ch.state != "
	                                           "'confirmed', ch.direction != 'regression',"
	                                           " b.name, ch.id",
	    s);
}

int xo_perf_rows_changes_grouped(struct xo_perfdb *db, struct xo_sql_stmt **s)
{
	return xo_sql_prepare(
	    sql_of(db),
	    /* a subquery: PostgreSQL orders by an alias only when it stands alone */
	    "SELECT * FROM (SELECT ch.id, ch.state, ch.direction, b.name, c.sha, ch.ratio,"
	    " ch.p_value, CASE WHEN b.device = 'ref' THEN 'ref' WHEN b.device = 'cpu' OR"
	    " b.device LIKE 'cl%' THEN '' ELSE 'peer' END AS apart, b.device"
	    " FROM changes ch JOIN benchmarks b ON b.id = ch.benchmark_id"
	    " JOIN commits c ON c.id = ch.commit_id) q"
	    " ORDER BY apart != '', apart, state != 'confirmed', name",
	    s);
}

/* ---- the suite's power and coverage (tables CI writes) ---- */

int xo_perf_rows_mutant_counts(struct xo_perfdb *db, struct xo_sql_stmt **s)
{
	return xo_sql_prepare(sql_of(db),
	                      "SELECT date, sha, range, result, COUNT(*) FROM mutant_results"
	                      " WHERE date = (SELECT MAX(date) FROM mutant_results)"
	                      " GROUP BY date, sha, range, result ORDER BY result",
	                      s);
}

int xo_perf_rows_mutant_kept(struct xo_perfdb *db, struct xo_sql_stmt **s)
{
	return xo_sql_prepare(
	    sql_of(db),
	    "SELECT mutant, file, line, operator, original, mutated, result, reason"
	    " FROM mutant_results"
	    " WHERE date = (SELECT MAX(date) FROM mutant_results)"
	    " AND result IN ('survived', 'equivalent', 'caught-equivalent')"
	    " ORDER BY result DESC, file, line",
	    s);
}

int xo_perf_rows_mutation_runs(struct xo_perfdb *db, struct xo_sql_stmt **s)
{
	return xo_sql_prepare(sql_of(db),
	                      "SELECT date, sha, dirty, caught, total, equivalent, errors, missed,"
	                      " seconds, mutants, mutants_all FROM mutation_runs"
	                      " ORDER BY id DESC LIMIT 10",
	                      s);
}

int xo_perf_rows_coverage(struct xo_perfdb *db, struct xo_sql_stmt **s)
{
	return xo_sql_prepare(sql_of(db),
	                      "SELECT q.date, q.sha, q.dirty, q.folder, q.lines, q.lines_hit,"
	                      " q.branches, q.branches_hit, coalesce(q.todo, -1),"
	                      " dense_rank() OVER (ORDER BY q.date) FROM coverage q"
	                      " WHERE q.date IN (SELECT date FROM (SELECT DISTINCT date FROM"
	                      " coverage ORDER BY date DESC LIMIT 60) r)" /* COV_RUNS */
	                      " ORDER BY q.date, q.folder",
	                      s);
}
