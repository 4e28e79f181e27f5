/*
 * test_perf_detect.c - `xo perf detect` at the size of a fleet and in the
 * order of the commit graph.
 *
 * - The fast step fit (steps.c xo_perf_steps) against its definition, the
 *   exhaustive programme (stats.c xo_perf_steps_exhaustive), on many random
 *   series up to the window: the same steps, index for index.
 * - A 20 000-point history is fitted (no clock: that it finishes, and that the
 *   planted steps come out where they were planted).
 * - History order: commits with one committer date recorded out of their
 *   graph order; detect must put the step on the commit that made it.
 * - Attribution: a step the fit puts between two commits of one known
 *   kernel-source version (a docs-only commit) moves to the commit where the
 *   version changed; the docs-only commit is never blamed.
 * - The report's history plot puts its points in the same order.
 * - Incremental: a second detect fits only the series with new runs.
 *
 * Runs on SQLite, and on PostgreSQL under suites/pg_cluster.sh (XO_TEST_PG).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfdb.h"
#include "proc.h"
#include "perf_fixture.h"

/* ---- the fit against its definition ------------------------------------------ */

/*
 * Random series of 2 .. XO_PERF_STEP_WINDOW points (inside the window, where the fast fit
 * is exact): flat, one step, several steps, spikes, with Gaussian noise of
 * a random size against the fit's scale 1, so that the penalty decides
 * close cases too. Both fits must give the same starts. Equal criterion
 * values (ties) need exactly repeated values, which Gaussian noise does not
 * give; the costs are computed differently (a running median against a
 * fresh one), so only ties could separate them.
 */
static void test_fast_equals_exhaustive(void **state)
{
	(void)state;
	enum { NSER = 400, NMAX = XO_PERF_STEP_WINDOW };
	double y[NMAX];
	size_t a[NMAX], b[NMAX];
	int nsteps_seen = 0;

	assert_true(NMAX <= XO_PERF_STEP_WINDOW);
	rng_state = 20260;
	for (int t = 0; t < NSER; t++) {
		size_t n = 2 + (size_t)(uniform() * (NMAX - 1)), na, nb;
		int kind = t % 4;
		double noise = 0.2 + 3.0 * uniform(), level = 100.0;

		for (size_t i = 0; i < n; i++) {
			if (kind == 1 && i == n / 2)
				level += 2.0 + 10.0 * uniform();
			if (kind == 2 && uniform() < 0.05)
				level += (uniform() - 0.5) * 20.0;
			y[i] = level + noise * gauss() + (kind == 3 && uniform() < 0.03 ? 15.0 : 0.0);
		}
		na = xo_perf_steps(y, n, 1.0, a);
		nb = xo_perf_steps_exhaustive(y, n, 1.0, b);
		if (na != nb || memcmp(a, b, na * sizeof(*a)))
			fail_msg("series %d (n %zu, kind %d): fast fit %zu steps, exhaustive %zu", t, n,
			         kind, na, nb);
		nsteps_seen += (int)na;
	}
	print_message("%d random series agree (%d steps among them)\n", NSER, nsteps_seen);
	assert_true(nsteps_seen > NSER / 4); /* the comparison saw steps, not only flat fits */
}

/* Beyond the window the fit is bounded: on series with clear steps it still
 * finds the exhaustive fit's steps (each 8 scale units: far above noise). */
static void test_fast_beyond_window(void **state)
{
	(void)state;
	enum { N = 400 };
	double y[N];
	size_t a[N], b[N], na, nb;

	assert_true(N > XO_PERF_STEP_WINDOW);
	rng_state = 99;
	for (int t = 0; t < 2; t++) {
		for (size_t i = 0; i < N; i++)
			y[i] = 100.0 + (i >= 100 ? 8.0 : 0.0) + (i >= 300 + 20 * (size_t)t ? -8.0 : 0.0) +
			       0.5 * gauss();
		na = xo_perf_steps(y, N, 1.0, a);
		nb = xo_perf_steps_exhaustive(y, N, 1.0, b);
		assert_int_equal(na, nb);
		assert_memory_equal(a, b, na * sizeof(*a));
		assert_int_equal(na, 2);
		assert_int_equal(a[0], 100);
		assert_int_equal(a[1], 300 + 20 * (size_t)t);
	}
}

/*
 * 20 000 points (beyond what the exhaustive fit finishes in hours): three
 * steps of 10% on 2% noise, at scale = the noise's Laplace scale as detect
 * sets it (sd / sqrt 2). The planted steps come out at their indices; a flat
 * 20 000-point series of the same noise gets no step. No clock is read:
 * the old fit did not finish this, and a timing would only measure the load.
 */
static void test_fit_20000_points(void **state)
{
	(void)state;
	enum { N = 20000 };
	double *y = malloc(N * sizeof(*y));
	size_t *st = malloc(N * sizeof(*st)), k;
	const size_t at[3] = {4000, 11111, 17500};

	assert_non_null(y);
	assert_non_null(st);
	rng_state = 4242;
	for (size_t i = 0; i < N; i++) {
		double level = 1e-3 * (i >= at[0] ? 1.1 : 1.0) * (i >= at[1] ? 1.1 : 1.0) *
		               (i >= at[2] ? 1.0 / 1.1 : 1.0);

		y[i] = level * (1.0 + 0.02 * gauss());
	}
	k = xo_perf_steps(y, N, 0.02e-3 / sqrt(2.0), st);
	assert_int_equal(k, 3);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(st[i], at[i]);
	for (size_t i = 0; i < N; i++)
		y[i] = 1e-3 * (1.0 + 0.02 * gauss());
	assert_int_equal(xo_perf_steps(y, N, 0.02e-3 / sqrt(2.0), st), 0);
	free(st);
	free(y);
}

/* ---- stores --------------------------------------------------------------------- */

static int64_t query_int(const char *path, const char *sql)
{
	struct xo_sql *h = NULL;
	struct xo_sql_stmt *s = NULL;
	int64_t v = -1;
	char why[512];

	if (xo_sql_open(path, false, true, false, &h, why, sizeof(why)))
		fail_msg("%s: %s", path, why);
	if (xo_sql_prepare(h, sql, &s) != XO_SQL_OK)
		fail_msg("%s: %s", sql, xo_sql_errmsg(h));
	if (xo_sql_step(s) == XO_SQL_ROW)
		v = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	xo_sql_close(h);
	return v;
}

#define NCOMMITS 16

static void sha_of(char *out, size_t size, int i)
{
	snprintf(out, size, "%040x", 0xd0c5ab00u + (unsigned)i);
}

/* Commit i of a linear history: its parent is commit i - 1, and every commit
 * has the same committer date (a scripted series, a rebase). */
static void chain_commit(struct xo_perf_commit *c, int i)
{
	memset(c, 0, sizeof(*c));
	sha_of(c->sha, sizeof(c->sha), i);
	if (i)
		sha_of(c->parent, sizeof(c->parent), i - 1);
	snprintf(c->subject, sizeof(c->subject), "commit %d", i);
	c->date = 1700000000;
}

/* One run of commit i: one cpu benchmark at level (15 samples, 3% noise),
 * with the kernel-source version ver. */
static void record_commit(struct xo_perfdb *db, const struct xo_perf_commit *c, double level,
                          const char *ver, double noise, double floor);

static void record(struct xo_perfdb *db, int i, double level, const char *ver)
{
	struct xo_perf_commit c;

	chain_commit(&c, i);
	record_commit(db, &c, level, ver, 0.03, 0.0);
}

/* One run of commit c: the benchmark at level, 15 samples of relative noise
 * noise (Gaussian); with floor > 0 the first sample is floor (the run's
 * fastest call). */
static void record_commit(struct xo_perfdb *db, const struct xo_perf_commit *c, double level,
                          const char *ver, double noise, double floor)
{
	struct xo_perf_testbed tb = {0};
	struct xo_perf_result r = {0};
	struct xo_perf_sample smp[15] = {{0}};
	int64_t run;

	snprintf(tb.hostname, sizeof(tb.hostname), "testhost");
	snprintf(tb.cpu_model, sizeof(tb.cpu_model), "Test CPU");
	tb.cores = 2;
	snprintf(r.b.name, sizeof(r.b.name), "op/test/fwd/bench000/cpu");
	snprintf(r.b.kind, sizeof(r.b.kind), "op");
	snprintf(r.b.device, sizeof(r.b.device), "cpu");
	snprintf(r.b.version, sizeof(r.b.version), "%s", ver);
	r.reps = 1;
	r.n = 15;
	r.samples = smp;
	for (size_t k = 0; k < 15; k++)
		smp[k].wall_s = level * (1.0 + noise * gauss());
	if (floor > 0.0)
		smp[0].wall_s = floor;
	assert_int_equal(xo_perfdb_run_write(db, c, &tb, "t", &r, 1, &run), XO_OK);
}

/* The changes detect stored at commit i: how many, and how many confirmed
 * regressions. */
static int64_t changes_at(const char *path, int i, bool confirmed_regression)
{
	char sql[512], sha[48];

	sha_of(sha, sizeof(sha), i);
	snprintf(sql, sizeof(sql),
	         "SELECT count(*) FROM changes ch JOIN commits c ON c.id = ch.commit_id"
	         " WHERE c.sha = '%s'%s",
	         sha, confirmed_regression
	                  ? " AND ch.state = 'confirmed' AND ch.direction = 'regression'"
	                  : "");
	return query_int(path, sql);
}

static void detect(const char *path)
{
	struct xo_perfdb *db;
	FILE *sink = fopen("/dev/null", "w");
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	bool failed = false;

	assert_non_null(sink);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	assert_int_equal(xo_perf_detect(db, &o, sink, &failed), XO_OK);
	xo_perfdb_close(db);
	fclose(sink);
	assert_true(failed);
}

/*
 * The report's history plot of the one benchmark draws its points in the
 * same order as detect: the change marker (column 6 of data/hist_*_1.dat,
 * not NaN) sits at x = want, the commit's place in the graph's order, among
 * want_lines points.
 */
static void report_marker_at(const char *path, int want, int want_lines)
{
	char out[600], dat[700], line[256];
	struct xo_perfdb *db;
	FILE *sink = fopen("/dev/null", "w"), *f;
	int marked = -1, lines = 0;

	assert_non_null(sink);
	snprintf(out, sizeof(out), "%s/report_order", tmpdir);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	assert_int_equal(xo_perf_report(db, out, XO_TEST_SCRIPTS_DIR, NULL, sink), XO_OK);
	xo_perfdb_close(db);
	fclose(sink);
	snprintf(dat, sizeof(dat), "%s/data/hist_op_test_fwd_bench000_1.dat", out);
	f = fopen(dat, "r");
	if (!f)
		fail_msg("%s: not written", dat);
	while (fgets(line, sizeof(line), f)) {
		int x;
		char mark[32];

		if (line[0] == '#' || sscanf(line, "%d %*s %*s %*s %*s %31s", &x, mark) != 2)
			continue;
		lines++;
		if (strcmp(mark, "NaN"))
			marked = x;
	}
	fclose(f);
	assert_int_equal(lines, want_lines);
	assert_int_equal(marked, want);
}

/*
 * Commits 0..15 of one date, parent links a straight line; commit 10 changes
 * the kernel (version v2) and makes it 20% slower, commits 11..15 change only
 * the docs (v2 still). They are recorded 0..9, 11..15 and 10 last (a bisect
 * filling in, a slow runner), so insertion order and date agree with each
 * other and not with the graph. Ordered by date then insertion, the step
 * fell on commit 11, a docs-only commit, and commit 10, last, sat level with
 * the slow ones. In graph order it is commit 10's, confirmed, and nothing is
 * stored at commit 11.
 */
static void test_detect_graph_order(void **state)
{
	(void)state;
	char path[512];
	struct xo_perfdb *db;
	struct xo_perf_order ord;

	fixture_store("graph_order.sqlite", path, sizeof(path));
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 1010;
	for (int k = 0; k < NCOMMITS; k++) {
		int i = k < 10 ? k : k < NCOMMITS - 1 ? k + 1 : 10;

		record(db, i, i >= 10 ? 1.2e-3 : 1e-3, i >= 10 ? "v2" : "v1");
	}
	/* the order itself: a straight line, nothing left to the dates */
	assert_int_equal(xo_perf_order_load(db, &ord), XO_OK);
	assert_int_equal(ord.n, NCOMMITS);
	assert_int_equal(ord.by_date, 0);
	xo_perf_order_free(&ord);
	xo_perfdb_close(db);

	detect(path);
	assert_int_equal(changes_at(path, 10, true), 1);
	assert_int_equal(changes_at(path, 11, false), 0);
	assert_int_equal(query_int(path, "SELECT count(*) FROM changes"), 1);
	report_marker_at(path, 10, NCOMMITS);
}

/*
 * Commit 10 changes the kernel (v1 -> v2) yet its own run measured the old
 * level; from commit 11 on (docs only: v2 still) the kernel is 20% slower.
 * The fit puts the step between 10 and 11, two commits of one known version:
 * the measured code did not change there, so the step is put on commit 10,
 * where it did; commit 11 is never blamed. With every version equal (the
 * step is the machine's, not the code's) it stays where the fit put it and
 * is not confirmed.
 */
static void test_detect_same_version_not_blamed(void **state)
{
	(void)state;
	char path[512];
	struct xo_perfdb *db;

	fixture_store("same_version.sqlite", path, sizeof(path));
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 2020;
	/* the code and the time change at commit 11 (commits 12..15 change
	 * nothing measured: docs, tests): the step is confirmed there alone */
	for (int i = 0; i < NCOMMITS; i++)
		record(db, i, i >= 11 ? 1.2e-3 : 1e-3, i >= 11 ? "v2" : "v1");
	xo_perfdb_close(db);
	detect(path);
	assert_int_equal(changes_at(path, 11, true), 1);
	for (int i = 1; i < NCOMMITS; i++)
		if (i != 11)
			assert_int_equal(changes_at(path, i, false), 0);

	/* the code changes at commit 10, the time at 11: commit 10 measured
	 * unchanged, so it is not blamed, and 11 changed no measured code, so
	 * no regression is confirmed at either */
	fixture_store("same_version_off.sqlite", path, sizeof(path));
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	for (int i = 0; i < NCOMMITS; i++)
		record(db, i, i >= 11 ? 1.2e-3 : 1e-3, i >= 10 ? "v2" : "v1");
	xo_perfdb_close(db);
	{
		struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
		FILE *sink = fopen("/dev/null", "w");
		bool failed = true;

		assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
		assert_int_equal(xo_perf_detect(db, &o, sink, &failed), XO_OK);
		xo_perfdb_close(db);
		fclose(sink);
		assert_false(failed);
	}
	assert_int_equal(changes_at(path, 10, true), 0);
	assert_int_equal(changes_at(path, 11, true), 0);

	fixture_store("env_step.sqlite", path, sizeof(path));
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	for (int i = 0; i < NCOMMITS; i++)
		record(db, i, i >= 11 ? 1.2e-3 : 1e-3, "v1");
	xo_perfdb_close(db);
	{
		struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
		FILE *sink = fopen("/dev/null", "w");
		bool failed = true;

		assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
		assert_int_equal(xo_perf_detect(db, &o, sink, &failed), XO_OK);
		xo_perfdb_close(db);
		fclose(sink);
		assert_false(failed);
	}
	assert_int_equal(changes_at(path, 11, false), 1);
	assert_int_equal(changes_at(path, 11, true), 0);
}

/*
 * Chains the graph cannot join (a commit whose first parent was never
 * recorded) are ordered by date, and counted: commits 0..4, then 6..9 with
 * commit 5 missing, the second chain dated before the first (a clock that
 * went back). Within each chain the graph orders; between them the date.
 */
static void test_order_gaps_by_date(void **state)
{
	(void)state;
	char path[512];
	struct xo_perfdb *db;
	struct xo_perf_order ord;
	int64_t rank[10];

	fixture_store("order_gaps.sqlite", path, sizeof(path));
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 3030;
	for (int i = 9; i >= 0; i--) /* inserted newest first */
		if (i != 5) {
			struct xo_perf_commit c;
			struct xo_perf_testbed tb = {0};
			struct xo_perf_result r = {0};
			struct xo_perf_sample smp[2] = {{.wall_s = 1e-3}, {.wall_s = 1e-3}};
			int64_t run;

			chain_commit(&c, i);
			c.date = i >= 6 ? 1600000000 : 1700000000;
			snprintf(tb.hostname, sizeof(tb.hostname), "testhost");
			snprintf(r.b.name, sizeof(r.b.name), "op/test/fwd/bench000/cpu");
			r.reps = 1;
			r.n = 2;
			r.samples = smp;
			assert_int_equal(xo_perfdb_run_write(db, &c, &tb, "t", &r, 1, &run), XO_OK);
		}
	assert_int_equal(xo_perf_order_load(db, &ord), XO_OK);
	assert_int_equal(ord.by_date, 1);
	for (int i = 0; i < 10; i++) {
		char sql[200], sha[48];

		if (i == 5)
			continue;
		sha_of(sha, sizeof(sha), i);
		snprintf(sql, sizeof(sql), "SELECT id FROM commits WHERE sha = '%s'", sha);
		rank[i] = xo_perf_order_rank(&ord, query_int(path, sql));
	}
	xo_perf_order_free(&ord);
	xo_perfdb_close(db);
	/* 6..9 (the older date) first, then 0..4, each chain in graph order */
	for (int i = 7; i <= 9; i++)
		assert_true(rank[i] == rank[i - 1] + 1);
	assert_true(rank[0] == rank[9] + 1);
	for (int i = 1; i <= 4; i++)
		assert_true(rank[i] == rank[i - 1] + 1);
}

/*
 * Incremental: a detect fits only the series with runs it has not fitted.
 * After a first detect the stored change is altered by hand (a ratio no fit
 * gives); a second detect over the same runs leaves it (it did not fit the
 * series again); a detect after a new run of the series fits it again and
 * stores the fit's ratio. (Other settings, or an accept/ignore/fix of one
 * of the series' changes, also make it fit again: analyze.c detect_state.)
 */
static void test_detect_incremental(void **state)
{
	(void)state;
	char path[512];
	struct xo_perfdb *db;
	const char *ratio = "SELECT CAST(round(ratio * 100) AS INTEGER) FROM changes";

	fixture_store("incremental.sqlite", path, sizeof(path));
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 4040;
	for (int i = 0; i < NCOMMITS; i++)
		record(db, i, i >= 10 ? 1.2e-3 : 1e-3, i >= 10 ? "v2" : "v1");
	xo_perfdb_close(db);
	detect(path);
	assert_int_equal(query_int(path, "SELECT count(*) FROM detect_state"), 1);
	assert_int_equal(changes_at(path, 10, true), 1);
	{
		struct xo_sql *h = NULL;
		char why[256];

		assert_int_equal(xo_sql_open(path, false, true, false, &h, why, sizeof(why)), 0);
		assert_int_equal(xo_sql_exec(h, "UPDATE changes SET ratio = 9"), XO_SQL_OK);
		xo_sql_close(h);
	}
	detect(path); /* same runs, same settings: not fitted again */
	assert_int_equal(query_int(path, ratio), 900);

	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	record(db, NCOMMITS, 1.2e-3, "v2"); /* a new run of the series */
	xo_perfdb_close(db);
	detect(path);
	assert_true(query_int(path, ratio) >= 115 && query_int(path, ratio) <= 125);
	assert_int_equal(changes_at(path, 10, true), 1);
}

/* How many changes detect stored, and how many confirmed regressions. */
static int64_t changes_all(const char *path, bool confirmed_regression)
{
	return query_int(path, confirmed_regression
	                           ? "SELECT count(*) FROM changes WHERE state = 'confirmed'"
	                             " AND direction = 'regression'"
	                           : "SELECT count(*) FROM changes");
}

/* detect over the store; true when it confirmed a regression. Its text goes
 * to text (room for size) when text is not NULL. */
static bool detect_text(const char *path, char *text, size_t size)
{
	struct xo_perfdb *db;
	FILE *sink = text ? fmemopen(text, size, "w") : fopen("/dev/null", "w");
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	bool failed = false;

	assert_non_null(sink);
	if (text)
		memset(text, 0, size);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	assert_int_equal(xo_perf_detect(db, &o, sink, &failed), XO_OK);
	xo_perfdb_close(db);
	fclose(sink);
	return failed;
}

/*
 * A side branch is not history. C0..C3 on the main line (first parents a
 * straight line), C2 makes the kernel 30x slower (v1 -> v2); H1, a pull
 * request off C0, makes it 30x slower its own way and is recorded last, as a
 * PR check is. Two runs each. Slotted by depth next to C1, H1 took the step
 * and the real one at C2 was lost. The main line is C0..C3 (the child with
 * the longest first-parent path below it), H1 is left out of the series
 * (noted), the step is confirmed at C2 and nothing is stored at H1; the
 * report's history plots C0..C3 only.
 */
static void test_detect_side_branch(void **state)
{
	(void)state;
	char path[512], text[8192], sha[48], sql[200];
	struct xo_perfdb *db;
	struct xo_perf_order ord;
	struct xo_perf_commit h1;

	fixture_store("side_branch.sqlite", path, sizeof(path));
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 5050;
	for (int i = 0; i < 4; i++)
		for (int run = 0; run < 2; run++)
			record(db, i, i >= 2 ? 30e-3 : 1e-3, i >= 2 ? "v2" : "v1");
	memset(&h1, 0, sizeof(h1));
	sha_of(h1.sha, sizeof(h1.sha), 100);
	sha_of(h1.parent, sizeof(h1.parent), 0);
	snprintf(h1.subject, sizeof(h1.subject), "side branch");
	h1.date = 1700000000;
	for (int run = 0; run < 2; run++)
		record_commit(db, &h1, 30e-3, "vh", 0.03, 0.0);
	assert_int_equal(xo_perf_order_load(db, &ord), XO_OK);
	assert_int_equal(ord.off_main, 1);
	for (int i = 0; i <= 100; i += i == 3 ? 97 : 1) {
		sha_of(sha, sizeof(sha), i);
		snprintf(sql, sizeof(sql), "SELECT id FROM commits WHERE sha = '%s'", sha);
		assert_int_equal(xo_perf_order_main(&ord, query_int(path, sql)), i != 100);
	}
	xo_perf_order_free(&ord);
	xo_perfdb_close(db);

	assert_true(detect_text(path, text, sizeof(text)));
	assert_non_null(strstr(text, "note: 1 commits off the main line"));
	assert_int_equal(changes_at(path, 2, true), 1);
	assert_int_equal(changes_at(path, 100, false), 0);
	assert_int_equal(changes_all(path, false), 1);
	report_marker_at(path, 4, 8); /* C0..C3 two runs each: C2 first at 4 */
}

/*
 * Short histories: four commits, one run each (then two), 15 samples of 3%
 * noise, the kernel 16x slower from commit 2 (v1 -> v2), and commit 1's run
 * slower by 1.75x (a loaded run, as measured: 20 and 35 us before, 560 us
 * after). Each side of the step has two points; Welch on two run values a
 * side has as little as one degree of freedom and never confirmed it, while
 * compare of commits 1 and 2 (one run each) says SLOWER. Judged as compare
 * judges single runs, detect confirms it at commit 2 and nowhere else. The
 * same histories with no step (every run at one level, 3% noise) confirm
 * nothing.
 */
static void test_detect_short_history(void **state)
{
	(void)state;
	char path[512], name[64];

	for (int runs = 1; runs <= 2; runs++) {
		for (int step = 0; step <= 1; step++) {
			struct xo_perfdb *db;
			bool failed;

			snprintf(name, sizeof(name), "short_%d_%d.sqlite", runs, step);
			fixture_store(name, path, sizeof(path));
			assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
			rng_state = 6060 + (uint64_t)(10 * runs + step);
			for (int i = 0; i < 4; i++)
				for (int k = 0; k < runs; k++) {
					struct xo_perf_commit c;
					double level = 20e-6;

					if (step)
						level = i >= 2 ? 560e-6 : i == 1 ? 35e-6 : 20e-6;
					chain_commit(&c, i);
					record_commit(db, &c, level, step && i >= 2 ? "v2" : "v1", 0.03, 0.0);
				}
			xo_perfdb_close(db);
			failed = detect_text(path, NULL, 0);
			print_message("%d run(s) a commit, %s: %lld confirmed regressions\n", runs,
			              step ? "16x step at commit 2" : "no step",
			              (long long)changes_all(path, true));
			if (step) {
				assert_true(failed);
				assert_int_equal(changes_at(path, 2, true), 1);
				assert_int_equal(changes_all(path, true), 1);
			} else {
				assert_false(failed);
				assert_int_equal(query_int(path, "SELECT count(*) FROM changes"
				                                 " WHERE state = 'confirmed'"),
				                 0);
			}
		}
	}
}

/*
 * A step that is the machine's: 16 commits of one known kernel-source
 * version (docs, tests), every run's fastest call at 1 ms, the rest of the
 * samples at 1.3 ms from commit 8 on (other work on the machine: the
 * medians moved, the floor did not). No row is stored against commit 8 (it
 * was listed as a "detected regression" against a tests-only commit), and
 * detect says why. The same step with the floor moving too (the version
 * still equal) stays a detected, unconfirmed row (test_detect_same_version_
 * not_blamed's env_step).
 */
static void test_detect_machine_step_not_stored(void **state)
{
	(void)state;
	char path[512], text[8192];
	struct xo_perfdb *db;

	fixture_store("machine_step.sqlite", path, sizeof(path));
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 7070;
	for (int i = 0; i < NCOMMITS; i++) {
		struct xo_perf_commit c;

		chain_commit(&c, i);
		record_commit(db, &c, i >= 8 ? 1.3e-3 : 1.02e-3, "v1", 0.01, 1e-3);
	}
	xo_perfdb_close(db);
	assert_false(detect_text(path, text, sizeof(text)));
	assert_non_null(strstr(text, "the machine's, not stored"));
	assert_int_equal(changes_all(path, false), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fast_equals_exhaustive),
	    cmocka_unit_test(test_fast_beyond_window),
	    cmocka_unit_test(test_fit_20000_points),
	    cmocka_unit_test(test_detect_graph_order),
	    cmocka_unit_test(test_detect_same_version_not_blamed),
	    cmocka_unit_test(test_order_gaps_by_date),
	    cmocka_unit_test(test_detect_incremental),
	    cmocka_unit_test(test_detect_side_branch),
	    cmocka_unit_test(test_detect_short_history),
	    cmocka_unit_test(test_detect_machine_step_not_stored),
	};

	return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
