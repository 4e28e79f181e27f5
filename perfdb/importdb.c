/*
 * importdb.c - `xo perf import-db SOURCE --db TARGET`: merges every complete
 * run of one store into another (a testbed's local SQLite file into the
 * fleet's PostgreSQL store, or any engine into any other), without
 * duplicates: importing the same file twice adds nothing.
 *
 * A run is the same run when its commit (sha, dirty hash), testbed (hash),
 * start and finish times, note and its first result's benchmark and median
 * time are; commits, testbeds and benchmarks are
 * matched on their unique keys. Each run is copied in one transaction of the
 * target with its results, samples, op times and device probes; detected
 * changes are not copied (`xo perf detect` finds them again on the merged
 * history). Incomplete runs (killed writers) are left behind.
 *
 * The source is never changed: one of an older schema is read through a
 * migrated temporary copy (open_source).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb.h"
#include "sql.h"

/* Copies the current row of src (columns 0..n-1, types as in types: i
 * integer, d double, t text) into binds first..first+n-1 of dst. NULL stays
 * NULL. */
static void copy_binds(struct xo_sql_stmt *src, struct xo_sql_stmt *dst, const char *types,
                       int first)
{
	for (int i = 0; types[i]; i++) {
		if (xo_sql_column_null(src, i))
			xo_sql_bind_null(dst, first + i);
		else if (types[i] == 'i')
			xo_sql_bind_int64(dst, first + i, xo_sql_column_int64(src, i));
		else if (types[i] == 'd')
			xo_sql_bind_double(dst, first + i, xo_sql_column_double(src, i));
		else
			xo_sql_bind_text(dst, first + i, xo_sql_column_text(src, i));
	}
}

#define COMMIT_COLS  "sha, parent, subject, date, dirty, dirty_hash"
#define COMMIT_TYPES "tttiit"
#define TESTBED_COLS                                                                               \
	"hash, hostname, cpu_model, cores, os, compiler, cflags, blas_name, blas_version,"         \
	" blas_coretype, blas_config, cl_platform, cl_device, cl_driver, env, describe"
#define TESTBED_TYPES "tttitttttttttttt"
#define RUN_COLS      "started, finished, state, note, load_start, load_end, others_cpu"
#define RUN_TYPES     "iittddd"
#define BENCH_COLS    "name, params, kind, device, what, dir, model, batch, version, metric, unit"
#define BENCH_TYPES   "tttttttittt"
/* (the SELECT in copy_results names the same columns, qualified) */
#define RESULT_COLS "n, min, median, max, version, reps, q1, q3, mean, ci_lo, ci_hi, has_split"
#define RESULT_TYPES "idddtidddddi"
#define SAMPLE_COLS  "idx, wall_s, enqueue_s, h2d_s, kernel_s, d2h_s, wait_s, launches"
#define SAMPLE_TYPES "iddddddd"
#define OP_COLS      "op, dir, kernel_s, launches"
#define OP_TYPES     "ttdd"
#define PROBE_COLS                                                                                 \
	"device, launch_s, enqueue_s, sync_s, h2d_lat_s, h2d_bw, d2h_lat_s, d2h_bw, flops,"        \
	" mem_bw, handoff_s, units, wall_s"
#define PROBE_TYPES "tddddddddddid"

/* "?,?,...,?" for n values after a leading k (k "?"s already written). */
static void marks(char *out, size_t size, int n)
{
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; i < n && len + 3 < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s?", i ? "," : "");
}

struct ctx {
	struct xo_sql *src, *dst;
	const char *src_name, *dst_name;
};

static enum xo_status err(struct xo_sql *h, const char *name, const char *what)
{
	return xo_error(XO_EDB, "%s: %s: %s", name, what, xo_sql_errmsg(h));
}

/*
 * Inserts the row src holds into table (cols, types) unless its unique key
 * is there, then returns the target's id for it (select_sql with the key
 * columns bound from src columns key_cols).
 */
static enum xo_status upsert_id(struct ctx *c, struct xo_sql_stmt *src, const char *table,
                                const char *cols, const char *types, const char *select_sql,
                                const int *key_cols, int nkeys,
                                void (*fix)(struct xo_sql_stmt *src, struct xo_sql_stmt *dst),
                                int64_t *id)
{
	char sql[1024], q[256];
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;

	marks(q, sizeof(q), (int)strlen(types));
	snprintf(sql, sizeof(sql), "INSERT INTO %s(%s) VALUES (%s) ON CONFLICT DO NOTHING", table,
	         cols, q);
	if (xo_sql_prepare(c->dst, sql, &s))
		return err(c->dst, c->dst_name, table);
	copy_binds(src, s, types, 1);
	if (fix)
		fix(src, s);
	if (xo_sql_step(s) != XO_SQL_DONE) {
		st = err(c->dst, c->dst_name, table);
		goto out;
	}
	xo_sql_finalize(s);
	s = NULL;
	if (xo_sql_prepare(c->dst, select_sql, &s))
		return err(c->dst, c->dst_name, table);
	for (int k = 0; k < nkeys; k++)
		xo_sql_bind_text(s, k + 1, xo_sql_column_text(src, key_cols[k]));
	if (xo_sql_step(s) != XO_SQL_ROW)
		st = err(c->dst, c->dst_name, table);
	else
		*id = xo_sql_column_int64(s, 0);
out:
	xo_sql_finalize(s);
	return st;
}

/*
 * A benchmark of a store from before schema version 2 has no device (the
 * migration's default ''); the device is the name's last part, as compare
 * reads such rows. Written out here so that the merged runs count as the
 * runs of our devices (compare's "record runs pooled"), not as peer imports.
 */
static void bench_device(struct xo_sql_stmt *src, struct xo_sql_stmt *dst)
{
	const char *name = xo_sql_column_text(src, 0), *dev = xo_sql_column_text(src, 3);
	const char *slash = name ? strrchr(name, '/') : NULL;

	if ((!dev || !dev[0]) && slash && slash[1])
		xo_sql_bind_text(dst, 4, slash + 1);
}

/*
 * A series is one metric: the benchmark the source row names (its columns
 * current in src, metric at column 9) must not exist in the target under
 * another metric, or its results would join a series of another unit.
 * XO_EINVAL naming both.
 */
static enum xo_status bench_metric_check(struct ctx *c, struct xo_sql_stmt *src)
{
	const char *name = xo_sql_column_text(src, 0), *m = xo_sql_column_text(src, 9);
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;

	if (xo_sql_prepare(c->dst, "SELECT metric FROM benchmarks WHERE name = ?", &s))
		return err(c->dst, c->dst_name, "benchmarks");
	xo_sql_bind_text(s, 1, name);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		const char *have = xo_sql_column_text(s, 0);

		if (strcmp(have ? have : "time", m && m[0] ? m : "time"))
			st = xo_error(XO_EINVAL,
			              "%s: benchmark %s measures %s there but %s in %s: a series "
			              "never mixes metrics",
			              c->dst_name, name ? name : "?", have ? have : "time",
			              m && m[0] ? m : "time", c->src_name);
	}
	xo_sql_finalize(s);
	return st;
}

/* Copies rows "SELECT cols FROM table WHERE key = src_id" under dst_id. */
static enum xo_status copy_children(struct ctx *c, const char *table, const char *key,
                                    const char *cols, const char *types, int64_t src_id,
                                    int64_t dst_id)
{
	char sql[1024], q[256];
	struct xo_sql_stmt *r = NULL, *w = NULL;
	enum xo_status st = XO_OK;
	int rc;

	snprintf(sql, sizeof(sql), "SELECT %s FROM %s WHERE %s = ?", cols, table, key);
	if (xo_sql_prepare(c->src, sql, &r))
		return err(c->src, c->src_name, table);
	marks(q, sizeof(q), (int)strlen(types));
	snprintf(sql, sizeof(sql), "INSERT INTO %s(%s, %s) VALUES (?,%s)", table, key, cols, q);
	if (xo_sql_prepare(c->dst, sql, &w)) {
		st = err(c->dst, c->dst_name, table);
		goto out;
	}
	xo_sql_bind_int64(r, 1, src_id);
	while ((rc = xo_sql_step(r)) == XO_SQL_ROW) {
		xo_sql_bind_int64(w, 1, dst_id);
		copy_binds(r, w, types, 2);
		if (xo_sql_step(w) != XO_SQL_DONE) {
			st = err(c->dst, c->dst_name, table);
			goto out;
		}
		xo_sql_reset(w);
	}
	if (rc != XO_SQL_DONE)
		st = err(c->src, c->src_name, table);
out:
	xo_sql_finalize(r);
	xo_sql_finalize(w);
	return st;
}

/* The results of one run with their samples and op times. */
static enum xo_status copy_results(struct ctx *c, int64_t src_run, int64_t dst_run)
{
	static const int name_key[] = {0};
	struct xo_sql_stmt *r = NULL, *w = NULL;
	enum xo_status st = XO_OK;
	char q[256], sql[1024];
	int rc;

	if (xo_sql_prepare(c->src,
	                   "SELECT b.name, b.params, b.kind, b.device, b.what, b.dir, b.model,"
	                   " b.batch, b.version, b.metric, b.unit, res.id, res.n, res.min, res.median, res.max,"
	                   " res.version, res.reps, res.q1, res.q3, res.mean, res.ci_lo, res.ci_hi,"
	                   " res.has_split FROM results res JOIN benchmarks b"
	                   " ON b.id = res.benchmark_id"
	                   " WHERE res.run_id = ? ORDER BY res.id",
	                   &r))
		return err(c->src, c->src_name, "results");
	marks(q, sizeof(q), (int)strlen(RESULT_TYPES));
	snprintf(sql, sizeof(sql),
	         "INSERT INTO results(run_id, benchmark_id, " RESULT_COLS ") VALUES (?,?,%s)"
	         " RETURNING id",
	         q);
	if (xo_sql_prepare(c->dst, sql, &w)) {
		st = err(c->dst, c->dst_name, "results");
		goto out;
	}
	xo_sql_bind_int64(r, 1, src_run);
	while ((rc = xo_sql_step(r)) == XO_SQL_ROW) {
		int64_t bench = 0, src_res = xo_sql_column_int64(r, 11), dst_res;

		if ((st = bench_metric_check(c, r)) ||
		    (st = upsert_id(c, r, "benchmarks", BENCH_COLS, BENCH_TYPES,
		                    "SELECT id FROM benchmarks WHERE name = ?", name_key, 1,
		                    bench_device, &bench)))
			goto out;
		xo_sql_bind_int64(w, 1, dst_run);
		xo_sql_bind_int64(w, 2, bench);
		/* the result's columns follow the benchmark's 11 and its id */
		for (int i = 0; RESULT_TYPES[i]; i++) {
			int col = 12 + i;

			if (xo_sql_column_null(r, col))
				xo_sql_bind_null(w, 3 + i);
			else if (RESULT_TYPES[i] == 'i')
				xo_sql_bind_int64(w, 3 + i, xo_sql_column_int64(r, col));
			else if (RESULT_TYPES[i] == 'd')
				xo_sql_bind_double(w, 3 + i, xo_sql_column_double(r, col));
			else
				xo_sql_bind_text(w, 3 + i, xo_sql_column_text(r, col));
		}
		if (xo_sql_step(w) != XO_SQL_ROW) {
			st = err(c->dst, c->dst_name, "results");
			goto out;
		}
		dst_res = xo_sql_column_int64(w, 0);
		xo_sql_reset(w);
		if ((st = copy_children(c, "samples", "result_id", SAMPLE_COLS, SAMPLE_TYPES,
		                        src_res, dst_res)) ||
		    (st = copy_children(c, "result_ops", "result_id", OP_COLS, OP_TYPES, src_res,
		                        dst_res)))
			goto out;
	}
	if (rc != XO_SQL_DONE)
		st = err(c->src, c->src_name, "results");
out:
	xo_sql_finalize(r);
	xo_sql_finalize(w);
	return st;
}

/* One run of the source (its row current in r), in one target transaction;
 * *added false when the target has it already. */
static enum xo_status copy_run(struct ctx *c, struct xo_sql_stmt *r, bool *added)
{
	static const int commit_key[] = {0, 5}, testbed_key[] = {0};
	struct xo_sql_stmt *cm = NULL, *tb = NULL, *s = NULL, *sig = NULL;
	bool has_sig;
	int64_t src_run = xo_sql_column_int64(r, 0), commit_id = 0, testbed_id = 0, run_id;
	enum xo_status st = XO_OK;
	char sql[1024], q[64];

	*added = false;
	if (xo_sql_exec(c->dst, xo_sql_dialect(c->dst)->begin_write))
		return err(c->dst, c->dst_name, "starting a transaction");
	if (xo_sql_prepare(c->src, "SELECT " COMMIT_COLS " FROM commits WHERE id = ?", &cm) ||
	    xo_sql_prepare(c->src, "SELECT " TESTBED_COLS " FROM testbeds WHERE id = ?", &tb)) {
		st = err(c->src, c->src_name, "reading a run");
		goto out;
	}
	xo_sql_bind_int64(cm, 1, xo_sql_column_int64(r, 1));
	xo_sql_bind_int64(tb, 1, xo_sql_column_int64(r, 2));
	if (xo_sql_step(cm) != XO_SQL_ROW || xo_sql_step(tb) != XO_SQL_ROW) {
		st = xo_error(XO_EDB, "%s: run %" PRId64 " has no commit or testbed row",
		              c->src_name, src_run);
		goto out;
	}
	if ((st = upsert_id(c, cm, "commits", COMMIT_COLS, COMMIT_TYPES,
	                    "SELECT id FROM commits WHERE sha = ? AND dirty_hash = ?", commit_key,
	                    2, NULL, &commit_id)) ||
	    (st = upsert_id(c, tb, "testbeds", TESTBED_COLS, TESTBED_TYPES,
	                    "SELECT id FROM testbeds WHERE hash = ?", testbed_key, 1, NULL,
	                    &testbed_id)))
		goto out;

	/* the same run already there: nothing to do. Times are whole seconds
	 * and two quick runs can share them: the first result's median (a
	 * measured time, copied exactly) tells them apart */
	if (xo_sql_prepare(c->src,
	                   "SELECT b.name, res.median FROM results res JOIN benchmarks b"
	                   " ON b.id = res.benchmark_id WHERE res.run_id = ? ORDER BY res.id"
	                   " LIMIT 1",
	                   &sig)) {
		st = err(c->src, c->src_name, "reading a run");
		goto out;
	}
	xo_sql_bind_int64(sig, 1, src_run);
	has_sig = xo_sql_step(sig) == XO_SQL_ROW && !xo_sql_column_null(sig, 1);
	snprintf(sql, sizeof(sql),
	         "SELECT count(*) FROM runs ru WHERE commit_id = ? AND testbed_id = ? AND"
	         " started = ? AND coalesce(finished, -1) = coalesce(?, -1) AND note = ?"
	         " AND state = 'complete'%s",
	         has_sig ? " AND EXISTS (SELECT 1 FROM results res JOIN benchmarks b"
	                   " ON b.id = res.benchmark_id WHERE res.run_id = ru.id AND b.name = ?"
	                   " AND res.median = ?)"
	                 : "");
	if (xo_sql_prepare(c->dst, sql, &s)) {
		st = err(c->dst, c->dst_name, "runs");
		goto out;
	}
	if (has_sig) {
		xo_sql_bind_text(s, 6, xo_sql_column_text(sig, 0));
		xo_sql_bind_double(s, 7, xo_sql_column_double(sig, 1));
	}
	xo_sql_bind_int64(s, 1, commit_id);
	xo_sql_bind_int64(s, 2, testbed_id);
	xo_sql_bind_int64(s, 3, xo_sql_column_int64(r, 3));
	if (xo_sql_column_null(r, 4))
		xo_sql_bind_null(s, 4);
	else
		xo_sql_bind_int64(s, 4, xo_sql_column_int64(r, 4));
	xo_sql_bind_text(s, 5, xo_sql_column_text(r, 6) ? xo_sql_column_text(r, 6) : "");
	if (xo_sql_step(s) != XO_SQL_ROW) {
		st = err(c->dst, c->dst_name, "runs");
		goto out;
	}
	if (xo_sql_column_int64(s, 0) > 0)
		goto out; /* committed below: the commit and testbed rows are harmless */
	xo_sql_finalize(s);
	s = NULL;

	marks(q, sizeof(q), (int)strlen(RUN_TYPES));
	snprintf(sql, sizeof(sql),
	         "INSERT INTO runs(commit_id, testbed_id, " RUN_COLS
	         ") VALUES (?,?,%s) RETURNING id",
	         q);
	if (xo_sql_prepare(c->dst, sql, &s)) {
		st = err(c->dst, c->dst_name, "runs");
		goto out;
	}
	xo_sql_bind_int64(s, 1, commit_id);
	xo_sql_bind_int64(s, 2, testbed_id);
	/* the run's columns follow id, commit_id, testbed_id in r */
	for (int i = 0; RUN_TYPES[i]; i++) {
		int col = 3 + i;

		if (xo_sql_column_null(r, col))
			xo_sql_bind_null(s, 3 + i);
		else if (RUN_TYPES[i] == 'i')
			xo_sql_bind_int64(s, 3 + i, xo_sql_column_int64(r, col));
		else if (RUN_TYPES[i] == 'd')
			xo_sql_bind_double(s, 3 + i, xo_sql_column_double(r, col));
		else
			xo_sql_bind_text(s, 3 + i, xo_sql_column_text(r, col));
	}
	if (xo_sql_step(s) != XO_SQL_ROW) {
		st = err(c->dst, c->dst_name, "runs");
		goto out;
	}
	run_id = xo_sql_column_int64(s, 0);
	if ((st = copy_results(c, src_run, run_id)) ||
	    (st = copy_children(c, "probes", "run_id", PROBE_COLS, PROBE_TYPES, src_run, run_id)))
		goto out;
	*added = true;
out:
	xo_sql_finalize(cm);
	xo_sql_finalize(tb);
	xo_sql_finalize(s);
	xo_sql_finalize(sig);
	if (st) {
		xo_sql_exec(c->dst, "ROLLBACK");
		*added = false;
		return st;
	}
	if (xo_sql_exec(c->dst, "COMMIT")) {
		st = err(c->dst, c->dst_name, "committing a run");
		xo_sql_exec(c->dst, "ROLLBACK");
		*added = false;
	}
	return st;
}

/* Removes the migrated copy of open_source and its directory (tmp "" : none). */
static void remove_copy(const char *tmp)
{
	static const char *const file[] = {"copy.sqlite", "copy.sqlite-wal", "copy.sqlite-shm"};
	char path[4200];

	if (!tmp[0])
		return;
	for (size_t i = 0; i < sizeof(file) / sizeof(file[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, file[i]);
		unlink(path);
	}
	rmdir(tmp);
}

/*
 * The source, opened without changing it. A store at this xo's schema
 * version is read as it is (read-only). An older SQLite store (the one a
 * revision's own, older xo recorded into for `continuous` or `bisect`, or a
 * testbed's file not yet migrated) is copied with VACUUM INTO into a new
 * directory tmp (under TMPDIR) and the copy is migrated and read: migrating
 * the source itself would make it unreadable to the xo that writes it (that
 * xo refuses a schema newer than it knows). An older PostgreSQL store cannot
 * be copied here and is refused with the reason. Anything else (not a
 * store, another program's database, a newer schema, a file that does not
 * open) takes xo_perfdb_open_readonly's path and its messages.
 */
static enum xo_status open_source(const char *path, const char *name, struct xo_perfdb **src,
                                  char *tmp, size_t tmp_size)
{
	const char *tdir = getenv("TMPDIR");
	struct xo_sql *h = NULL;
	struct xo_sql_stmt *s = NULL;
	int64_t tables = -1, app_id = -1, version = -1;
	char why[512], copy[4300];
	enum xo_status st;

	tmp[0] = '\0';
	if (xo_sql_open(path, true, false, false, &h, why, sizeof(why)) == XO_SQL_OK) {
		if (xo_sql_prepare(h, xo_sql_dialect(h)->count_objects, &s) == XO_SQL_OK &&
		    xo_sql_step(s) == XO_SQL_ROW)
			tables = xo_sql_column_int64(s, 0);
		xo_sql_finalize(s);
		s = NULL;
		if (tables >= 0 && (xo_sql_meta_get(h, "application_id", &app_id) ||
		                    xo_sql_meta_get(h, "user_version", &version)))
			version = -1;
	}
	/* older than this xo, and ours (or a new, empty file) */
	if (version < 0 || version >= XO_PERFDB_SCHEMA_VERSION ||
	    (tables > 0 && app_id != XO_PERFDB_APP_ID)) {
		xo_sql_close(h);
		return xo_perfdb_open_readonly(path, src);
	}
	if (xo_sql_is_uri(path)) {
		xo_sql_close(h);
		return xo_error(XO_EDB,
		                "%s: schema version %" PRId64 " is older than this xo's (%d), and "
		                "import-db does not change its source: migrate it first (any "
		                "`xo perf` writer of this version does, e.g. `xo perf detect --db "
		                "%s`)",
		                name, version, XO_PERFDB_SCHEMA_VERSION, name);
	}
	snprintf(tmp, tmp_size, "%s/xo-import-XXXXXX", tdir && *tdir ? tdir : "/tmp");
	if (!mkdtemp(tmp)) {
		st = xo_error(XO_EIO, "%s: cannot create a temporary directory for a migrated copy "
		              "of %s: %s", tmp, name, strerror(errno));
		tmp[0] = '\0';
		xo_sql_close(h);
		return st;
	}
	snprintf(copy, sizeof(copy), "%s/copy.sqlite", tmp);
	/* a consistent snapshot of the source, which is only read */
	if (xo_sql_prepare(h, "VACUUM INTO ?", &s) != XO_SQL_OK ||
	    xo_sql_bind_text(s, 1, copy) != XO_SQL_OK || xo_sql_step(s) != XO_SQL_DONE) {
		st = xo_error(XO_EDB, "%s: copying the store (schema version %" PRId64
		              ") to migrate it in %s: %s", name, version, tmp, xo_sql_errmsg(h));
		goto out;
	}
	xo_sql_finalize(s);
	s = NULL;
	xo_sql_close(h);
	h = NULL;
	if ((st = xo_perfdb_open(copy, src)))
		goto out_named;
	xo_perfdb_close(*src);
	*src = NULL;
	if ((st = xo_perfdb_open_readonly(copy, src)))
		goto out_named;
	return XO_OK;

out_named:
	st = xo_error(st, "%s (a copy migrated from schema version %" PRId64 "): %s", name, version,
	              xo_last_error());
out:
	xo_sql_finalize(s);
	xo_sql_close(h);
	remove_copy(tmp);
	tmp[0] = '\0';
	return st;
}

/*
 * Every sample of every complete run of the source, checked as `perf
 * import` checks a peer's (xo_perf_sample_check) before any run is copied:
 * a source with one bad value (NULL, text, NaN, Inf, negative, out of
 * range) is refused whole, naming the row, and the target is unchanged.
 */
static enum xo_status check_samples(struct xo_sql *src, const char *name)
{
	/* a REAL column keeps text that is no number as text (SQLite): typeof
	 * tells it; a PostgreSQL column holds numbers only */
	const char *sql =
	    xo_sql_engine(src) == XO_SQL_SQLITE
	        ? "SELECT ru.id, b.name, b.metric, s.idx, s.wall_s, typeof(s.wall_s) FROM samples s"
	          " JOIN results res ON res.id = s.result_id JOIN runs ru ON ru.id = res.run_id"
	          " JOIN benchmarks b ON b.id = res.benchmark_id WHERE ru.state = 'complete'"
	        : "SELECT ru.id, b.name, b.metric, s.idx, s.wall_s, 'real' FROM samples s"
	          " JOIN results res ON res.id = s.result_id JOIN runs ru ON ru.id = res.run_id"
	          " JOIN benchmarks b ON b.id = res.benchmark_id WHERE ru.state = 'complete'";
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;
	int rc;

	if (xo_sql_prepare(src, sql, &s))
		return err(src, name, "reading the samples");
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW) {
		const char *type = xo_sql_column_text(s, 5), *why;

		if (xo_sql_column_null(s, 4))
			why = "is NULL";
		else if (type && strcmp(type, "real") && strcmp(type, "integer"))
			why = "is not a number";
		else
			why = xo_perf_sample_check(xo_sql_column_text(s, 2),
			                           xo_sql_column_double(s, 4));
		if (why) {
			st = xo_error(XO_EINVAL, "%s: run %" PRId64 ", benchmark %s, sample %" PRId64
			              ": the value %s; nothing imported",
			              name, xo_sql_column_int64(s, 0),
			              xo_sql_column_text(s, 1) ? xo_sql_column_text(s, 1) : "?",
			              xo_sql_column_int64(s, 3), why);
			break;
		}
	}
	if (!st && rc != XO_SQL_DONE)
		st = err(src, name, "reading the samples");
	xo_sql_finalize(s);
	return st;
}

enum xo_status xo_perfdb_import_db(struct xo_perfdb *dst, const char *src_path,
                                   const char *dst_name, FILE *out)
{
	struct xo_perfdb *src = NULL;
	struct xo_sql_stmt *r = NULL;
	struct ctx c = {.dst = xo_perfdb_sql(dst), .dst_name = dst_name};
	char src_name[1024], tmp[4096];
	int64_t added = 0, present = 0;
	enum xo_status st;
	int rc;

	xo_sql_redact(src_path, src_name, sizeof(src_name));
	c.src_name = src_name;
	if ((st = open_source(src_path, src_name, &src, tmp, sizeof(tmp))))
		return st;
	c.src = xo_perfdb_sql(src);
	if ((st = check_samples(c.src, src_name)))
		goto out;
	if (xo_sql_prepare(c.src,
	                   "SELECT id, commit_id, testbed_id, " RUN_COLS " FROM runs"
	                   " WHERE state = 'complete' ORDER BY id",
	                   &r)) {
		st = err(c.src, src_name, "reading the runs");
		goto out;
	}
	while ((rc = xo_sql_step(r)) == XO_SQL_ROW) {
		bool was_added;

		if ((st = copy_run(&c, r, &was_added)))
			goto out;
		added += was_added;
		present += !was_added;
	}
	if (rc != XO_SQL_DONE) {
		st = err(c.src, src_name, "reading the runs");
		goto out;
	}
	fprintf(out, "import-db: %s: %" PRId64 " runs added, %" PRId64 " already in %s\n", src_name,
	        added, present, dst_name);
out:
	xo_sql_finalize(r);
	xo_perfdb_close(src);
	remove_copy(tmp);
	return st;
}
