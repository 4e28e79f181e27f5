/*
 * test_perfdb.c - reliability of the perf store and its statistics (DESIGN
 * sections 9 and 10): migration from schema version 1, summaries and the
 * Mann-Whitney U test against known answers, step detection (a planted step
 * found at its commit, nothing found in pure noise), a writer killed with
 * SIGKILL at random points, two concurrent writers, and files that are not
 * ours.
 *
 * The same tests run on both engines of the store: SQLite files by default,
 * and a PostgreSQL server when XO_TEST_PG holds its URI (suites/pg_cluster.sh
 * starts a throwaway one): each store is then a schema of that database,
 * named for the file. The few checks of SQLite's file format (foreign
 * files, PRAGMA versions, read-only files) run on SQLite only.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "perfdb.h"
#include "proc.h"
#include "sql.h"
#include "case_pick.h"
#include "perf_fixture.h"

/* A call that must succeed; on failure the message says why. */
#define assert_ok(call)                                                                \
	do {                                                                           \
		enum xo_status st_ = (call);                                           \
		if (st_ != XO_OK)                                                      \
			fail_msg("%s: status %d: %s", #call, (int)st_, xo_last_error()); \
	} while (0)

/* The PostgreSQL database the stores live in, or NULL: SQLite files. */
static const char *pg_base(void)
{
	const char *u = getenv("XO_TEST_PG");

	return u && *u ? u : NULL;
}

/* name "kill.sqlite" -> schema "t_kill_sqlite" */
static void schema_of(const char *name, char *out, size_t size)
{
	size_t n = (size_t)snprintf(out, size, "t_");

	for (const char *p = name; *p && n + 1 < size; p++)
		out[n++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ? *p : '_');
	out[n] = '\0';
}

static void db_path(char *out, size_t size, const char *name)
{
	char schema[128];

	if (!pg_base()) {
		snprintf(out, size, "%s/%s", tmpdir, name);
		return;
	}
	/* a URI whose connections see only this store's schema */
	schema_of(name, schema, sizeof(schema));
	snprintf(out, size, "%s&options=-csearch_path%%3D%s", pg_base(), schema);
}

static void exec_sql(const char *path, const char *sql)
{
	struct xo_sql *h = NULL;
	char why[512];

	if (xo_sql_open(path, false, true, false, &h, why, sizeof(why)))
		fail_msg("%s: %s", path, why);
	if (xo_sql_exec(h, sql) != XO_SQL_OK)
		fail_msg("%s: %s", sql, xo_sql_errmsg(h));
	xo_sql_close(h);
}

static void remove_db(const char *path)
{
	char p[600];

	if (pg_base()) {
		char sql[400];
		/* the schema named at the end of the URI: %3D then the name */
		const char *eq = strstr(path, "search_path%3D");

		assert_non_null(eq);
		snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s",
		         eq + 14, eq + 14);
		exec_sql(pg_base(), sql);
		return;
	}
	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

/* The store at path (either engine): one statement, one integer result. */
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

/* The schema version, as the store keeps it on either engine. */
static int64_t store_version(const char *path)
{
	return pg_base() ? query_int(path, "SELECT value FROM xo_meta WHERE key = 'user_version'")
	                 : query_int(path, "PRAGMA user_version");
}

/* Tests of SQLite's file format only. */
#define SQLITE_ONLY()                                                                  \
	do {                                                                           \
		if (pg_base()) {                                                       \
			print_message("(SQLite only: skipped on PostgreSQL)\n");      \
			return;                                                        \
		}                                                                      \
	} while (0)

/* ---- fixtures: synthetic commits, testbeds and results ---------------------- */

static void fake_commit(struct xo_perf_commit *c, int i)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->sha, sizeof(c->sha), "%040x", 0xc0ffee00u + (unsigned)i);
	snprintf(c->subject, sizeof(c->subject), "commit %d", i);
	c->date = 1700000000 + 3600 * (int64_t)i;
}

static void fake_testbed(struct xo_perf_testbed *t, const char *coretype)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->hostname, sizeof(t->hostname), "testhost");
	snprintf(t->cpu_model, sizeof(t->cpu_model), "Test CPU");
	t->cores = 2;
	snprintf(t->blas_name, sizeof(t->blas_name), "OpenBLAS");
	snprintf(t->blas_coretype, sizeof(t->blas_coretype), "%s", coretype);
}

/* nres results named bench<k> with n samples of level*(1 + rel*N(0,1)). */
static struct xo_perf_result *fake_results(size_t nres, size_t n, const double *level, double rel)
{
	struct xo_perf_result *r = calloc(nres, sizeof(*r));

	assert_non_null(r);
	for (size_t k = 0; k < nres; k++) {
		snprintf(r[k].b.name, sizeof(r[k].b.name), "op/test/fwd/bench%03zu/cpu", k);
		snprintf(r[k].b.kind, sizeof(r[k].b.kind), "op");
		snprintf(r[k].b.device, sizeof(r[k].b.device), "cpu");
		r[k].reps = 1;
		r[k].n = n;
		r[k].samples = calloc(n, sizeof(*r[k].samples));
		assert_non_null(r[k].samples);
		for (size_t i = 0; i < n; i++)
			r[k].samples[i].wall_s = level[k] * (1.0 + rel * gauss());
	}
	return r;
}

static void free_results(struct xo_perf_result *r, size_t nres)
{
	for (size_t k = 0; k < nres; k++)
		free(r[k].samples);
	free(r);
}

static void record_fake(struct xo_perfdb *db, int commit, const char *coretype, size_t nres,
                        size_t n, const double *level, double rel)
{
	struct xo_perf_commit c;
	struct xo_perf_testbed t;
	struct xo_perf_result *r = fake_results(nres, n, level, rel);
	int64_t run;

	fake_commit(&c, commit);
	fake_testbed(&t, coretype);
	assert_int_equal(xo_perfdb_run_write(db, &c, &t, "test", r, nres, &run), XO_OK);
	free_results(r, nres);
}

/* ---- statistics against known answers --------------------------------------- */

/*
 * Expected values computed independently with SciPy 1.17.1 / NumPy:
 *   scipy.stats.mannwhitneyu(a, b, alternative='two-sided', method='exact')
 *   scipy.stats.mannwhitneyu(a, b, alternative='two-sided',
 *                            method='asymptotic', use_continuity=True)
 *   numpy.percentile(x, [0, 25, 50, 75, 100]) (linear), numpy.mean(x)
 *   the median CI indices: largest j with 1 - 2*binom.cdf(j-1, n, 0.5) >= 0.95
 * The exact p-values are ratios of integer counts, the asymptotic ones a
 * normal tail; both agree with SciPy to double rounding, so 1e-9 relative.
 */
static void check_p(double got, double want)
{
	if (fabs(got - want) > 1e-9 * want)
		fail_msg("p = %.17g, expected %.17g", got, want);
}

static void test_mann_whitney_known(void **state)
{
	(void)state;
	double u;
	/* case 1: exact, no ties, 5 vs 6 */
	const double a1[] = {1.1, 2.3, 3.0, 4.2, 5.5}, b1[] = {2.0, 6.1, 7.3, 8.4, 9.0, 10.2};
	/* case 2: exact, 10 vs 10 */
	const double a2[] = {10.3, 11.2, 9.8, 10.9, 12.4, 10.1, 11.8, 10.6, 9.5, 11.0};
	const double b2[] = {11.5, 12.9, 10.7, 12.2, 13.4, 11.9, 12.6, 13.1, 10.4, 12.0};
	/* case 3: ties -> normal approximation with tie and continuity corrections */
	const double a3[] = {1, 2, 2, 3, 3, 3, 4, 5, 5, 6};
	const double b3[] = {3, 4, 4, 5, 6, 6, 7, 7, 8, 9, 9, 10};
	/* case 5: complete separation, exact: 2 / C(20, 10) */
	double a5[10], b5[10], a4[40], b4[40];

	check_p(xo_perf_mann_whitney(a1, 5, b1, 6, &u), 0.05194805194805195);
	assert_true(u == 4.0);
	check_p(xo_perf_mann_whitney(a2, 10, b2, 10, &u), 0.00893069778518695);
	assert_true(u == 16.0);
	check_p(xo_perf_mann_whitney(a3, 10, b3, 12, &u), 0.003478237891742154);
	assert_true(u == 15.5);
	/* case 4: 40 vs 40 without ties, beyond the exact limit -> normal */
	for (int i = 0; i < 40; i++) {
		a4[i] = (double)((i * 37) % 101) + 0.5;
		b4[i] = (double)((i * 53) % 103) + 0.25 + 8;
	}
	check_p(xo_perf_mann_whitney(a4, 40, b4, 40, &u), 0.49144706923651504);
	assert_true(u == 728.0);
	for (int i = 0; i < 10; i++) {
		a5[i] = i;
		b5[i] = i + 10.5;
	}
	check_p(xo_perf_mann_whitney(a5, 10, b5, 10, &u), 1.082508822446903e-05);
	/* symmetric in its arguments, 1 for identical or empty samples */
	check_p(xo_perf_mann_whitney(b2, 10, a2, 10, NULL), 0.00893069778518695);
	assert_true(xo_perf_mann_whitney(a3, 10, a3, 10, NULL) == 1.0);
	assert_true(xo_perf_mann_whitney(a3, 0, b3, 12, NULL) == 1.0);
}

static void test_summary_known(void **state)
{
	(void)state;
	double x[] = {3.1, 0.4, 2.2, 9.7, 5.5, 1.8, 7.3, 4.4, 6.6, 8.0, 2.9};
	struct xo_perf_summary s;
	size_t lo, hi;
	static const struct {
		size_t n, lo, hi;
	} ci[] = {{5, 0, 4}, {6, 0, 5}, {10, 1, 8}, {15, 3, 11}, {20, 5, 14}, {50, 17, 32}};

	xo_perf_summarize(x, 11, &s);
	assert_true(s.n == 11);
	assert_true(fabs(s.min - 0.4) < 1e-12 && fabs(s.max - 9.7) < 1e-12);
	assert_true(fabs(s.q1 - 2.55) < 1e-12);
	assert_true(fabs(s.median - 4.4) < 1e-12);
	assert_true(fabs(s.q3 - 6.95) < 1e-12);
	assert_true(fabs(s.mean - 4.718181818181818) < 1e-12);
	/* n = 11: j = 2 (coverage 0.988; j = 3 gives 0.935) -> x(2), x(10) */
	assert_true(s.ci_lo == 1.8 && s.ci_hi == 8.0);
	for (size_t i = 0; i < sizeof(ci) / sizeof(ci[0]); i++) {
		xo_perf_median_ci_index(ci[i].n, 0.95, &lo, &hi);
		assert_int_equal(lo, ci[i].lo);
		assert_int_equal(hi, ci[i].hi);
	}
}

static void test_steps_direct(void **state)
{
	(void)state;
	double y[30];
	size_t starts[30], n;

	/* a clean step of 10 scale units at index 17 */
	for (int i = 0; i < 30; i++)
		y[i] = (i < 17 ? 100.0 : 110.0) + ((i * 7) % 5 - 2) * 0.2;
	n = xo_perf_steps(y, 30, 1.0, starts);
	assert_int_equal(n, 1);
	assert_int_equal(starts[0], 17);
	/* flat: nothing */
	for (int i = 0; i < 30; i++)
		y[i] = 100.0 + ((i * 7) % 5 - 2) * 0.2;
	assert_int_equal(xo_perf_steps(y, 30, 1.0, starts), 0);
}

/* ---- detection over stored histories ------------------------------------------ */

/*
 * 16 commits; series 0 steps up 20% at commit 10 (a regression), series 1
 * steps down 15% at commit 6 (an improvement); series 2..41 are pure noise,
 * 40 independent seeds of the null hypothesis. Both planted steps must be
 * found at their commits and confirmed, and no noise series may get a
 * confirmed change.
 *
 * With run_sd = 0 every sample of a series comes from one distribution (3%
 * Gaussian). A one-run spike can still pass the corrected U test while being
 * below the 5% threshold ("detected"; a spike is two rows, up and down):
 * over 40 generator seeds x 40 series (1600 pure-noise histories, XO_TEST_SEED
 * 1..40) 3 such rows appeared and no confirmed one, so the expected count
 * here is 40 * 3/1600 = 0.075 rows and at most one spike (2 rows) is
 * allowed. With run_sd = 1% each run also gets its own offset, as real runs
 * do: the U test then rightly sees runs that differ and small "detected" rows
 * are expected (40 in the same 1600 histories; printed); 1 of the 1600 was
 * confirmed (a 5.3% one-run dip), so this check fails for about 1 generator
 * seed in 40: the default seeds are fixed, the rate is what docs/perf.md
 * states.
 */
#define NSERIES  42
#define NCOMMITS 16

static void detect_history(const char *name, double run_sd, uint64_t seed, bool *failed)
{
	char path[512];
	struct xo_perfdb *db;
	double level[NSERIES];
	FILE *devnull = fopen("/dev/null", "w");
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};

	db_path(path, sizeof(path), name);
	remove_db(path);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = seed;
	for (int c = 0; c < NCOMMITS; c++) {
		struct xo_perf_commit cm;
		struct xo_perf_testbed tb;
		struct xo_perf_result *r;
		int64_t run;

		for (int k = 0; k < NSERIES; k++)
			level[k] = 1e-3 * (1.0 + run_sd * gauss());
		level[0] *= c >= 10 ? 1.20 : 1.0;
		level[1] *= c >= 6 ? 0.85 : 1.0;
		r = fake_results(NSERIES, 15, level, 0.03);
		fake_commit(&cm, c);
		fake_testbed(&tb, "Haswell");
		assert_int_equal(xo_perfdb_run_write(db, &cm, &tb, "t", r, NSERIES, &run), XO_OK);
		free_results(r, NSERIES);
	}
	assert_ok(xo_perf_detect(db, &o, devnull, failed));
	xo_perfdb_close(db);
	fclose(devnull);

	assert_int_equal(query_int(path,
	                           "SELECT count(*) FROM changes ch JOIN benchmarks b ON"
	                           " b.id = ch.benchmark_id JOIN commits c ON c.id = ch.commit_id"
	                           " WHERE b.name = 'op/test/fwd/bench000/cpu' AND"
	                           " c.subject = 'commit 10' AND ch.state = 'confirmed' AND"
	                           " ch.direction = 'regression'"),
	                 1);
	assert_int_equal(query_int(path,
	                           "SELECT count(*) FROM changes ch JOIN benchmarks b ON"
	                           " b.id = ch.benchmark_id JOIN commits c ON c.id = ch.commit_id"
	                           " WHERE b.name = 'op/test/fwd/bench001/cpu' AND"
	                           " c.subject = 'commit 6' AND ch.state = 'confirmed' AND"
	                           " ch.direction = 'improvement'"),
	                 1);
	/* nothing confirmed in the noise series */
	assert_int_equal(query_int(path, "SELECT count(*) FROM changes ch JOIN benchmarks b ON"
	                                 " b.id = ch.benchmark_id WHERE ch.state = 'confirmed' AND"
	                                 " b.name NOT IN ('op/test/fwd/bench000/cpu',"
	                                 " 'op/test/fwd/bench001/cpu')"),
	                 0);
}

static uint64_t test_seed(uint64_t dflt)
{
	const char *s = getenv("XO_TEST_SEED"); /* to explore other seeds by hand */

	return s ? strtoull(s, NULL, 0) : dflt;
}

static void test_detect_planted_and_noise(void **state)
{
	(void)state;
	char path[512];
	bool failed = false;

	detect_history("detect.sqlite", 0.0, test_seed(12345), &failed);
	assert_true(failed); /* a confirmed regression */
	db_path(path, sizeof(path), "detect.sqlite");
	/* the planted series: exactly their one step each */
	assert_int_equal(query_int(path,
	                           "SELECT count(*) FROM changes ch JOIN benchmarks b ON"
	                           " b.id = ch.benchmark_id WHERE b.name IN"
	                           " ('op/test/fwd/bench000/cpu', 'op/test/fwd/bench001/cpu')"),
	                 2);
	assert_true(query_int(path, "SELECT count(*) FROM changes") <= 2 + 2);
}

static void test_detect_run_to_run_noise(void **state)
{
	(void)state;
	char path[512];
	bool failed = false;

	detect_history("detect_runs.sqlite", 0.01, test_seed(777), &failed);
	assert_true(failed);
	db_path(path, sizeof(path), "detect_runs.sqlite");
	print_message("run-to-run noise: %lld changes below the threshold (detected)\n",
	              (long long)query_int(path, "SELECT count(*) FROM changes WHERE"
	                                         " state = 'detected'"));
}

static void test_accept_starts_baseline(void **state)
{
	(void)state;
	char path[512];
	struct xo_perfdb *db;
	bool failed = true;
	FILE *devnull = fopen("/dev/null", "w");
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	int64_t id;

	/* the history of the previous test: accept the regression */
	db_path(path, sizeof(path), "detect.sqlite");
	id = query_int(path, "SELECT id FROM changes WHERE direction = 'regression'");
	assert_true(id > 0);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	assert_ok(xo_perf_change_set(db, id, "accepted", devnull));
	assert_int_equal(xo_perf_change_set(db, 999999, "accepted", devnull), XO_EINVAL);
	assert_ok(xo_perf_detect(db, &o, devnull, &failed));
	assert_false(failed);
	xo_perfdb_close(db);
	fclose(devnull);
	assert_int_equal(query_int(path, "SELECT count(*) FROM changes WHERE state = 'accepted'"),
	                 1);
}

/*
 * The Hodges-Lehmann shift and Moses' interval, against an
 * independent computation in Python: the null distribution of U by
 * enumerating all C(m+n, m) arrangements in exact fractions, k the largest
 * with 2 P(U <= k-1) <= 0.05, the interval [d_(k), d_(N+1-k)] of the sorted
 * differences; for 40 vs 41 (beyond the exact limit) k = floor(N/2 - z
 * sqrt(N (m+n+1)/12)) with z from statistics.NormalDist. The differences
 * are exact in doubles up to one rounding of a subtraction: 1e-12.
 */
static void test_shift_ci_known(void **state)
{
	(void)state;
	const double a1[] = {1.1, 2.3, 3.0, 4.2, 5.5}, b1[] = {2.0, 6.1, 7.3, 8.4, 9.0, 10.2};
	const double a2[] = {1, 2, 3, 4}, b2[] = {5, 6, 7, 8};
	const double a3[] = {1, 2, 3}, b3[] = {4, 5, 6};
	double a4[40], b4[41];
	struct xo_perf_shift sh;

	xo_perf_shift_ci(a1, 5, b1, 6, 0.95, &sh); /* k = 4 */
	assert_true(fabs(sh.est - 4.5) < 1e-12);
	assert_true(fabs(sh.lo - -0.3) < 1e-12);
	assert_true(fabs(sh.hi - 7.3) < 1e-12);
	xo_perf_shift_ci(a2, 4, b2, 4, 0.95, &sh); /* k = 1: the whole range */
	assert_true(sh.est == 4.0 && sh.lo == 1.0 && sh.hi == 7.0);
	/* 3 and 3: 2 P(U = 0) = 0.1 > 0.05, no 95% interval exists */
	xo_perf_shift_ci(a3, 3, b3, 3, 0.95, &sh);
	assert_true(sh.lo == -INFINITY && sh.hi == INFINITY);
	for (int i = 0; i < 40; i++)
		a4[i] = i;
	for (int i = 0; i < 41; i++)
		b4[i] = 0.5 * i + 3.0;
	xo_perf_shift_ci(a4, 40, b4, 41, 0.95, &sh); /* normal: k = 612 of 1640 */
	assert_true(sh.est == -6.5 && sh.lo == -11.5 && sh.hi == -1.5);
	xo_perf_shift_ci(a1, 0, b1, 6, 0.95, &sh);
	assert_true(sh.lo == -INFINITY && sh.hi == INFINITY);
}

/* compare --json's verdict of one benchmark between two fresh runs of n
 * samples each at the given levels, rel relative noise (caller frees). */
static char *verdict_of(const char *file, double lb, double lh, size_t n, double rel,
                        bool *failed)
{
	char path[512], *buf = NULL, *v;
	size_t len = 0;
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002, .json = true};
	FILE *f = open_memstream(&buf, &len);
	json_t *root, *r;

	assert_non_null(f);
	db_path(path, sizeof(path), file);
	remove_db(path);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	record_fake(db, 1, "Haswell", 1, n, &lb, rel);
	record_fake(db, 2, "Haswell", 1, n, &lh, rel);
	assert_ok(xo_perf_compare(db, "run:1", "run:2", &o, f, failed));
	xo_perfdb_close(db);
	fclose(f);
	root = json_loads(buf, 0, NULL);
	assert_non_null(root);
	r = json_array_get(json_object_get(root, "results"), 0);
	assert_non_null(r);
	v = strdup(json_string_value(json_object_get(r, "verdict")));
	json_decref(root);
	free(buf);
	return v;
}

/*
 * The four verdicts on samples whose answer is known. A clear 2x
 * (15 samples, 1% noise) is SLOWER, exit 1; its inverse FASTER. 200 samples
 * a side of one distribution (1% noise): the 95% interval of the ratio is
 * about -+2 * 1.25 * 1% / sqrt(100) = -+0.25% (the median's standard error
 * ~ 1.25 sd / sqrt n, two samples), far inside -+5%: SAME. 5 samples a side
 * with 20% noise and +5% between them: the U test cannot reach 0.002 with
 * 5 and 5 (its least p is 2/252 = 0.008) and the interval spans about -+35%:
 * neither shown, UNKNOWN, and no alarm.
 */
static void test_compare_four_verdicts(void **state)
{
	(void)state;
	bool failed;
	char *v;

	rng_state = 99;
	v = verdict_of("v-slower.sqlite", 1e-3, 2e-3, 15, 0.01, &failed);
	assert_string_equal(v, "SLOWER");
	assert_true(failed);
	free(v);
	v = verdict_of("v-faster.sqlite", 2e-3, 1e-3, 15, 0.01, &failed);
	assert_string_equal(v, "FASTER");
	assert_false(failed);
	free(v);
	v = verdict_of("v-same.sqlite", 1e-3, 1e-3, 200, 0.01, &failed);
	assert_string_equal(v, "SAME");
	assert_false(failed);
	free(v);
	v = verdict_of("v-unknown.sqlite", 1e-3, 1.05e-3, 5, 0.20, &failed);
	assert_string_equal(v, "UNKNOWN");
	assert_false(failed);
	free(v);
	/* SAME needs the samples: 4 a side of one distribution leave the
	 * interval the whole range of differences, 20% noise: not within 5% */
	v = verdict_of("v-few.sqlite", 1e-3, 1e-3, 4, 0.20, &failed);
	assert_string_equal(v, "UNKNOWN");
	free(v);
	/* 30% faster beyond doubt in its samples, yet 5 and 5 cannot pass the
	 * U test at 0.002: UNKNOWN, and above all never SAME (the interval,
	 * about -31..-29%, is outside on the faster side) */
	v = verdict_of("v-fast-few.sqlite", 1e-3, 0.7e-3, 5, 0.01, &failed);
	assert_string_equal(v, "UNKNOWN");
	free(v);
}

/* ---- compare ----------------------------------------------------------------- */

static void test_compare_and_testbed_diff(void **state)
{
	(void)state;
	char path[512], out[512];
	struct xo_perfdb *db;
	double base[3] = {1e-3, 2e-3, 3e-3}, head[3] = {1e-3, 2.4e-3, 3e-3};
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	bool failed = false;
	FILE *f;
	char *text;
	long len;

	db_path(path, sizeof(path), "compare.sqlite");
	snprintf(out, sizeof(out), "%s/compare.txt", tmpdir);
	remove_db(path);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 777;
	record_fake(db, 1, "Haswell", 3, 15, base, 0.01);
	record_fake(db, 2, "Prescott", 3, 15, head, 0.01);
	f = fopen(out, "w+");
	assert_ok(xo_perf_compare(db, "run:1", "run:2", &o, f, &failed));
	assert_true(failed);
	/* by sha prefix too; and a bad spec is bad input */
	assert_int_equal(
	    xo_perf_compare(db, "00000000000000000000000000000000c0ffee01", NULL, &o, f, &failed),
	    XO_OK);
	assert_int_equal(xo_perf_compare(db, "0000", NULL, &o, f, &failed),
	                 XO_EINVAL); /* ambiguous */
	assert_int_equal(xo_perf_compare(db, "run:99", NULL, &o, f, &failed), XO_EINVAL);
	assert_int_equal(xo_perf_compare(db, "zz", NULL, &o, f, &failed), XO_EINVAL);
	xo_perfdb_close(db);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + 1);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	/* exactly the slowed benchmark, and the core type change */
	assert_non_null(strstr(text, "bench001/cpu"));
	assert_non_null(strstr(strstr(text, "bench001/cpu"), "SLOWER"));
	assert_non_null(strstr(text, "1 slower, 0 faster, 2 same"));
	assert_non_null(strstr(text, "blas_coretype"));
	assert_non_null(strstr(text, "Prescott"));
	free(text);
}

/*
 * compare with a history: run-to-run offsets the samples of one run cannot
 * show. Runs at commits 1..4 sit at 1.00, 1.10, 0.95, 1.05 ms (0.01% sample
 * noise, so the medians are the levels to ~3e-5), commit 5 at 1.3125 ms
 * (+25% on run 4). Expected bar, by hand (and Python's
 * statistics.NormalDist): log differences 0.0953, 0.1466, 0.1001,
 * median 0.1001; sigma = 1.4826 * 0.1001 / sqrt 2 = 0.1049; z(0.002) =
 * 3.0902; bar = expm1(3.0902 * sqrt 2 * 0.1049) = 0.582. The U test separates
 * run 4 and run 5 completely (p = 2 / C(30, 15) = 1.3e-8) and +25% is beyond
 * 5%, yet within 58%: "same", no failure. Without the history (run 1 against
 * run 2, +10%) the same data is SLOWER: the bar needs 4 runs.
 */
static void test_compare_run_noise(void **state)
{
	(void)state;
	char path[512], out[512];
	struct xo_perfdb *db;
	static const double lv[5] = {1.00e-3, 1.10e-3, 0.95e-3, 1.05e-3, 1.3125e-3};
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	bool failed = true;
	FILE *f;
	char *text;
	long len;

	db_path(path, sizeof(path), "runnoise.sqlite");
	snprintf(out, sizeof(out), "%s/runnoise.txt", tmpdir);
	remove_db(path);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 4242;
	for (int c = 0; c < 5; c++)
		record_fake(db, c + 1, "Haswell", 1, 15, &lv[c], 1e-4);
	f = fopen(out, "w+");
	assert_non_null(f);
	assert_ok(xo_perf_compare(db, "run:4", "run:5", &o, f, &failed));
	assert_false(failed);
	assert_ok(xo_perf_compare(db, "run:1", "run:2", &o, f, &failed));
	assert_true(failed);
	xo_perfdb_close(db);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	/* the first report says why; the bar moves by about 7 times the error
	 * of median |d| (d bar / d median|d| = (1 + bar) z 1.4826 = 7.2), here
	 * ~3e-4: 58% give or take the rounding */
	if (!strstr(text, "[within run-to-run noise 58%]"))
		fail_msg("no 58%% run-to-run bar in:\n%s", text);
	assert_non_null(strstr(text, "SLOWER"));
	free(text);
}

/* ---- compare's run-level rule on synthetic runs ---------------- */

/*
 * One run's median under load: the level times the run's offset (uniform in
 * [1 - drift, 1 + drift]: the +-30% the shared VM shows between runs of one
 * tree), times, with probability spike, a busy moment of 1.3-2.2x (seen:
 * one base run at 2.2x during a bisect), times the error of a median of 10
 * samples with 3% noise.
 */
static double loaded_run(double level, double drift, double spike)
{
	double r = level * (1.0 - drift + 2.0 * drift * uniform());

	if (uniform() < spike)
		r *= 1.3 + 0.9 * uniform();
	return r * (1.0 + 0.03 / sqrt(10.0) * gauss());
}

static void test_welch_known(void **state)
{
	(void)state;
	static const double a[] = {1.0, 2.0, 3.0, 4.0}, b[] = {2.0, 4.0, 6.0, 8.0, 10.0};
	double t, df, p;

	/* SciPy 1.17 ttest_ind(b, a, equal_var=False): t = 2.2514363231593695,
	 * df = 5.520787746170677, p = 0.06913359319239237; agreement to 1e-9
	 * (the continued fraction converges to 1e-15) */
	p = xo_perf_welch(a, 4, b, 5, &t, &df);
	assert_true(fabs(t - 2.2514363231593695) < 1e-9);
	assert_true(fabs(df - 5.520787746170677) < 1e-9);
	assert_true(fabs(p - 0.06913359319239237) < 1e-9);
	/* I_x(a, b) at known points: I_0.5(2, 3) = 11/16, I_0.3(1, 1) = 0.3 */
	assert_true(fabs(xo_perf_beta_inc(2.0, 3.0, 0.5) - 11.0 / 16.0) < 1e-12);
	assert_true(fabs(xo_perf_beta_inc(1.0, 1.0, 0.3) - 0.3) < 1e-12);
	assert_true(xo_perf_welch(a, 1, b, 5, NULL, NULL) == 1.0);
}

/*
 * The run-level rule that replaced "every head run beyond every base run":
 * 6 runs a side (continuous's default), 2000 seeds each.
 *  - a 2x step with +-30% run drift is confirmed in every seed, and with a
 *    busy moment (1.3-2.2x) in a quarter of the runs in >= 90% (measured
 *    93%); the old rule, every head run beyond every base run, confirmed
 *    that one in about 39%: one busy base run blocked it;
 *  - a null change (the same distribution both sides) is confirmed as a
 *    slowdown in at most 3% of the seeds at m = 1 (expected: half of the
 *    two-sided family level 0.05, the t test being near exact for these
 *    offsets), and in none over the seeds with m = 46 series;
 *  - the family correction bites: a +20% step with +-30% drift, which one
 *    series (m = 1) shows in about a third of the seeds, is confirmed in
 *    under 5% over m = 200.
 * The counts print, for docs/perf.md.
 */
static void test_runs_rule_synthetic(void **state)
{
	(void)state;
	enum { SEEDS = 2000, R = 6 };
	double b[R], h[R];
	int step_clean = 0, step_spiky = 0, null_1 = 0, null_46 = 0, null_spiky = 0;
	int small_1 = 0, small_200 = 0, old_spiky = 0;
	char why[160];

	rng_state = 2718;
	for (int seed = 0; seed < SEEDS; seed++) {
		for (int i = 0; i < R; i++) {
			b[i] = loaded_run(1e-3, 0.3, 0.0);
			h[i] = loaded_run(2e-3, 0.3, 0.0);
		}
		step_clean += xo_perf_runs_confirm(b, R, h, R, 1, 1, NULL, why, sizeof(why));
		for (int i = 0; i < R; i++) {
			b[i] = loaded_run(1e-3, 0.3, 0.25);
			h[i] = loaded_run(2e-3, 0.3, 0.25);
		}
		step_spiky += xo_perf_runs_confirm(b, R, h, R, 1, 1, NULL, why, sizeof(why));
		{ /* the rule before: every head run beyond every base run */
			double bmax = 0.0, hmin = INFINITY;

			for (int i = 0; i < R; i++) {
				bmax = fmax(bmax, b[i]);
				hmin = fmin(hmin, h[i]);
			}
			old_spiky += hmin > bmax;
		}
		for (int i = 0; i < R; i++) {
			b[i] = loaded_run(1e-3, 0.3, 0.0);
			h[i] = loaded_run(1e-3, 0.3, 0.0);
		}
		null_1 += xo_perf_runs_confirm(b, R, h, R, 1, 1, NULL, why, sizeof(why));
		null_46 += xo_perf_runs_confirm(b, R, h, R, 1, 46, NULL, why, sizeof(why));
		for (int i = 0; i < R; i++) {
			b[i] = loaded_run(1e-3, 0.3, 0.25);
			h[i] = loaded_run(1e-3, 0.3, 0.25);
		}
		null_spiky += xo_perf_runs_confirm(b, R, h, R, 1, 1, NULL, why, sizeof(why));
		for (int i = 0; i < R; i++) {
			b[i] = loaded_run(1e-3, 0.3, 0.0);
			h[i] = loaded_run(1.2e-3, 0.3, 0.0);
		}
		small_1 += xo_perf_runs_confirm(b, R, h, R, 1, 1, NULL, why, sizeof(why));
		small_200 += xo_perf_runs_confirm(b, R, h, R, 1, 200, NULL, why, sizeof(why));
	}
	printf("runs rule, %d seeds of 6+6 runs: 2x step confirmed %d (+-30%% drift), %d (and "
	       "busy runs; the old rule %d); null confirmed %d (m=1), %d (m=46), %d (busy runs, "
	       "m=1); +20%%: %d (m=1), %d (m=200)\n",
	       SEEDS, step_clean, step_spiky, old_spiky, null_1, null_46, null_spiky, small_1, small_200);
	assert_int_equal(step_clean, SEEDS);
	assert_true(step_spiky >= SEEDS * 90 / 100);
	assert_true(old_spiky < step_spiky);
	assert_true(null_1 <= SEEDS * 3 / 100);
	assert_true(null_spiky <= SEEDS * 3 / 100);
	assert_int_equal(null_46, 0);
	assert_true(small_1 > SEEDS / 4);
	assert_true(small_200 < SEEDS / 20);
	/* the sign must agree: a head faster by 2x is no slowdown */
	for (int i = 0; i < R; i++) {
		b[i] = 2e-3 * (1.0 + 0.01 * i);
		h[i] = 1e-3 * (1.0 + 0.01 * i);
	}
	assert_false(xo_perf_runs_confirm(b, R, h, R, 1, 1, NULL, why, sizeof(why)));
	assert_non_null(strstr(why, "runs disagree"));
	assert_true(xo_perf_runs_confirm(b, R, h, R, -1, 1, NULL, why, sizeof(why)));
}

/* ---- instruction counts: a deterministic metric ----------------- */

/* One run at commit i: a time series and an instruction series of the same
 * benchmark; the counts are level * (1 + jitter * U(-1, 1)) (callgrind counts
 * of one binary differ by at most a few instructions between processes), the
 * kernel-source version "v<version>". */
static void record_counts(struct xo_perfdb *db, int commit, double level, double jitter,
                          int version)
{
	struct xo_perf_result r[2];
	struct xo_perf_sample ts[10], cs[XO_PERF_COUNT_SAMPLES];
	struct xo_perf_commit c;
	struct xo_perf_testbed t;
	int64_t run;

	memset(r, 0, sizeof(r));
	memset(ts, 0, sizeof(ts));
	memset(cs, 0, sizeof(cs));
	for (int k = 0; k < 2; k++) {
		snprintf(r[k].b.name, sizeof(r[k].b.name),
		         k ? "op/relu/fwd/x/instructions/cpu" : "op/relu/fwd/x/cpu");
		snprintf(r[k].b.kind, sizeof(r[k].b.kind), "op");
		snprintf(r[k].b.device, sizeof(r[k].b.device), "cpu");
		snprintf(r[k].b.version, sizeof(r[k].b.version), "v%d", version);
		r[k].reps = 1;
	}
	snprintf(r[1].b.metric, sizeof(r[1].b.metric), "instructions");
	snprintf(r[1].b.unit, sizeof(r[1].b.unit), "instructions");
	for (int i = 0; i < 10; i++)
		ts[i].wall_s = 1e-4 * (1.0 + 0.2 * uniform());
	for (int i = 0; i < XO_PERF_COUNT_SAMPLES; i++)
		cs[i].wall_s = round(level * (1.0 + jitter * (2.0 * uniform() - 1.0)));
	r[0].n = 10;
	r[0].samples = ts;
	r[1].n = XO_PERF_COUNT_SAMPLES;
	r[1].samples = cs;
	fake_commit(&c, commit);
	fake_testbed(&t, "Haswell");
	assert_int_equal(xo_perfdb_run_write(db, &c, &t, "test", r, 2, &run), XO_OK);
}

static void test_count_rule_and_parsing(void **state)
{
	(void)state;
	static const double b[] = {1000000, 1000010, 999990};
	static const double same[] = {1004000, 1003990, 1004010};  /* +0.4% */
	static const double more[] = {1050000, 1050010, 1049990};  /* +5% */
	static const double split[] = {1000000, 1010000, 1020000}; /* samples disagree */
	static const double less[] = {990000, 990010, 989990};     /* -1% */
	double lo, hi, c = 0;
	int sign;
	char name[192], path[600];
	FILE *f;

	xo_perf_judge_counts(b, 3, same, 3, 0.005, &sign, &lo, &hi);
	assert_int_equal(sign, 0);
	assert_true(expm1(lo) >= -0.005 && expm1(hi) <= 0.005); /* SAME */
	xo_perf_judge_counts(b, 3, more, 3, 0.005, &sign, &lo, &hi);
	assert_int_equal(sign, 1);
	xo_perf_judge_counts(b, 3, less, 3, 0.005, &sign, &lo, &hi);
	assert_int_equal(sign, -1);
	xo_perf_judge_counts(b, 3, split, 3, 0.005, &sign, &lo, &hi);
	assert_int_equal(sign, 0);
	assert_true(expm1(hi) > 0.005); /* neither: UNKNOWN */
	/* the interval pairs each side's extremes crosswise: the smallest
	 * ratio is head's least over base's most, the largest head's most over
	 * base's least */
	xo_perf_judge_counts(b, 3, same, 3, 0.005, &sign, &lo, &hi);
	assert_true(fabs(lo - log(1003990.0 / 1000010.0)) < 1e-12);
	assert_true(fabs(hi - log(1004010.0 / 999990.0)) < 1e-12);
	{
		/* ranges that overlap: some pair says slower, some faster, so
		 * not every pair agrees and the verdict is no change of sign */
		static const double ob[] = {100, 120}, oh[] = {115, 140};

		xo_perf_judge_counts(ob, 2, oh, 2, 0.005, &sign, &lo, &hi);
		assert_int_equal(sign, 0);
		assert_true(lo < 0.0 && hi > 0.0);
		xo_perf_judge_counts(oh, 2, ob, 2, 0.005, &sign, &lo, &hi);
		assert_int_equal(sign, 0);
	}
	xo_perf_count_name("op/relu/fwd/n512_l27_c16/cpu", name, sizeof(name));
	assert_string_equal(name, "op/relu/fwd/n512_l27_c16/instructions/cpu");
	xo_perf_count_name("model/seed/predict/b8/cl:0:1", name, sizeof(name));
	assert_string_equal(name, "model/seed/predict/b8/instructions/cl:0:1");
	/* a callgrind dump as callgrind 3.19 writes it (abridged) */
	snprintf(path, sizeof(path), "%s/cg.out.1", tmpdir); /* a file, whatever the engine */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 17156\n"
	      "part: 1\ndesc: Trigger: Client Request: op/relu/fwd/x/cpu\npositions: line\n"
	      "events: Ir\nsummary: 194400\nob=(3) /usr/lib/libc.so.6\n",
	      f);
	fclose(f);
	assert_true(xo_perf_callgrind_total(path, &c));
	assert_true(c == 194400.0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("events: Ir\nsummary: -3\n", f); /* not a count */
	fclose(f);
	assert_false(xo_perf_callgrind_total(path, &c));
	unlink(path);
	assert_false(xo_perf_callgrind_total(path, &c));
}

/* compare --metric instructions: the count rule, and each metric only sees
 * its own series. */
static void test_compare_counts(void **state)
{
	(void)state;
	char path[512], *text;
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = XO_PERF_COUNT_THRESHOLD, .alpha = 0.002,
	                                 .metric = "instructions"};
	struct xo_perf_tally tally;
	bool failed = true;
	size_t len;
	FILE *f;

	db_path(path, sizeof(path), "counts.sqlite");
	remove_db(path);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 77;
	record_counts(db, 1, 1e6, 1e-5, 1); /* run 1 */
	record_counts(db, 2, 1e6, 1e-5, 1); /* run 2: the same commit's code again */
	record_counts(db, 3, 1.05e6, 1e-5, 2); /* run 3: 5% more work */
	f = open_memstream(&text, &len);
	assert_int_equal(xo_perf_compare_tally(db, "run:1", "run:2", &o, f, &failed, &tally), XO_OK);
	fclose(f);
	assert_false(failed);
	assert_int_equal(tally.same, 1);
	assert_int_equal(tally.slower + tally.faster + tally.unknown, 0);
	if (!strstr(text, "op/relu/fwd/x/instructions/cpu") || strstr(text, "op/relu/fwd/x/cpu "))
		fail_msg("the instruction series alone expected:\n%s", text);
	free(text);
	f = open_memstream(&text, &len);
	assert_int_equal(xo_perf_compare_tally(db, "run:2", "run:3", &o, f, &failed, &tally), XO_OK);
	fclose(f);
	assert_true(failed);
	assert_int_equal(tally.slower, 1);
	assert_true(fabs(tally.change - 0.05) < 1e-3);
	if (!strstr(text, "1.050 M") && !strstr(text, "1050.00 k"))
		fail_msg("counts not printed as counts:\n%s", text);
	free(text);
	/* the default metric compares the times only */
	o.metric = NULL;
	o.threshold = 0.05;
	f = open_memstream(&text, &len);
	assert_int_equal(xo_perf_compare(db, "run:2", "run:3", &o, f, &failed), XO_OK);
	fclose(f);
	if (strstr(text, "instructions/cpu"))
		fail_msg("time compare listed an instruction series:\n%s", text);
	free(text);
	xo_perfdb_close(db);
}

/*
 * detect --metric instructions over 20 records of one commit's code
 * (counts jittering by 1e-4, ten times what callgrind shows between
 * processes): no change at all; a planted +5% at the 11th commit: exactly
 * one confirmed regression, at that commit; the time series alongside is
 * not looked at.
 */
static void test_detect_counts(void **state)
{
	(void)state;
	char path[512];
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = XO_PERF_COUNT_THRESHOLD, .alpha = 0.002,
	                                 .metric = "instructions"};
	bool failed = true;
	FILE *sink = fopen("/dev/null", "w");

	assert_non_null(sink);
	db_path(path, sizeof(path), "detect_counts.sqlite");
	remove_db(path);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 99;
	for (int i = 1; i <= 20; i++)
		record_counts(db, i, 2.5e6, 1e-4, 1);
	assert_int_equal(xo_perf_detect(db, &o, sink, &failed), XO_OK);
	assert_false(failed);
	assert_int_equal(query_int(path, "SELECT count(*) FROM changes"), 0);
	for (int i = 21; i <= 30; i++)
		record_counts(db, i, i >= 26 ? 2.625e6 : 2.5e6, 1e-4, i >= 26 ? 2 : 1);
	assert_int_equal(xo_perf_detect(db, &o, sink, &failed), XO_OK);
	assert_true(failed);
	assert_int_equal(query_int(path, "SELECT count(*) FROM changes"), 1);
	assert_int_equal(query_int(path, "SELECT count(*) FROM changes ch JOIN commits c ON"
	                                 " c.id = ch.commit_id WHERE ch.state = 'confirmed' AND"
	                                 " c.subject = 'commit 26'"),
	                 1);
	xo_perfdb_close(db);
	fclose(sink);
}

/* ---- detect's reads at scale (PostgreSQL) ----------------------------------------- */

/* The server's counters of table runs of the store at h: scans (sequential
 * plus index) and rows read by them (seq_tup_read plus idx_tup_fetch). Read
 * once two reads 300 ms apart agree: a closed connection's counts arrive when
 * its server process exits, shortly after the client let go. */
static void runs_reads(struct xo_sql *h, int64_t *scans, int64_t *rows)
{
	int64_t prev[2] = {-2, -2};

	*scans = *rows = -1;
	for (int i = 0; i < 40 && (*scans != prev[0] || *rows != prev[1]); i++) {
		struct xo_sql_stmt *s = NULL;

		prev[0] = *scans;
		prev[1] = *rows;
		usleep(300000);
		assert_int_equal(xo_sql_prepare(h,
		                                "SELECT seq_scan + coalesce(idx_scan, 0),"
		                                " seq_tup_read + coalesce(idx_tup_fetch, 0)"
		                                " FROM pg_stat_user_tables"
		                                " WHERE relid = 'runs'::regclass",
		                                &s),
		                 XO_SQL_OK);
		if (xo_sql_step(s) == XO_SQL_ROW) {
			*scans = xo_sql_column_int64(s, 0);
			*rows = xo_sql_column_int64(s, 1);
		}
		xo_sql_finalize(s);
	}
}

/*
 * Detect at 10 000 runs on PostgreSQL: detect's history
 * read ordered its samples by each commit's first run, a scalar subquery on
 * table runs per sample row, which PostgreSQL ran once per row: with the
 * index on runs(commit_id, testbed_id) an index scan per sample, without it
 * a whole scan of runs per sample (O(samples x runs)). Its reads of runs must
 * grow with the runs, not with the samples: R = 120 runs of one series, 20
 * samples each (2400 sample rows). Measured: 247 scans of runs (a primary-key
 * lookup per point in each of detect's two reads of the series, the samples
 * and the run-to-run history, and the one grouped read of the first runs)
 * and 485 rows read, about 2 R and 4 R; the old query took 2646 scans and
 * 2765 rows (22 R, 23 R: one lookup per sample). Bounds 4 R scans and 8 R
 * rows: room for a plan with twice the lookups, and 5x below the old query.
 * PostgreSQL only (the server's per-table counters; perfdb.pg runs it).
 */
static void test_detect_scans_bounded(void **state)
{
	enum { R = 120 };
	char path[512], why[512];
	struct xo_perfdb *db;
	struct xo_sql *h = NULL;
	double level[1];
	FILE *devnull = fopen("/dev/null", "w");
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	int64_t scans0, rows0, scans1, rows1;
	bool failed;

	(void)state;
	assert_non_null(devnull);
	if (!pg_base()) {
		print_message("(PostgreSQL only: its per-table scan counters)\n");
		fclose(devnull);
		return;
	}
	db_path(path, sizeof(path), "detect_scans.sqlite");
	remove_db(path);
	assert_ok(xo_perfdb_open(path, &db));
	rng_state = 23;
	for (int c = 0; c < R; c++) {
		level[0] = c >= R / 2 ? 1.3e-3 : 1e-3; /* a step for detect to find */
		record_fake(db, c, "Haswell", 1, 20, level, 0.01);
	}
	xo_perfdb_close(db);
	if (xo_sql_open(path, true, false, false, &h, why, sizeof(why)))
		fail_msg("%s", why);
	runs_reads(h, &scans0, &rows0);
	assert_ok(xo_perfdb_open(path, &db));
	assert_ok(xo_perf_detect(db, &o, devnull, &failed));
	xo_perfdb_close(db);
	runs_reads(h, &scans1, &rows1);
	xo_sql_close(h);
	fclose(devnull);
	print_message("detect: %lld scans of runs, %lld rows read (%d runs of 20 samples)\n",
	              (long long)(scans1 - scans0), (long long)(rows1 - rows0), R);
	assert_true(failed); /* it found the step */
	if (scans0 < 0 || scans1 - scans0 > 4 * R || rows1 - rows0 > 8 * R)
		fail_msg("detect scanned table runs %lld times and read %lld rows for %d runs"
		         " (at most %d and %d)",
		         (long long)(scans1 - scans0), (long long)(rows1 - rows0), R, 4 * R, 8 * R);
}

/* ---- migration ------------------------------------------------------------------ */

/* The version-1 schema as it was shipped, written here independently of
 * store.c, with one run of data. */
static const char v1_schema[] =
    "PRAGMA application_id = 2020569188;"
    "CREATE TABLE commits(id INTEGER PRIMARY KEY, sha TEXT NOT NULL, subject TEXT, date INTEGER);"
    "CREATE UNIQUE INDEX commits_sha ON commits(sha);"
    "CREATE TABLE testbeds(id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, cpu_model TEXT,"
    " cores INTEGER);"
    "CREATE TABLE benchmarks(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, params TEXT);"
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, commit_id INTEGER NOT NULL REFERENCES commits(id),"
    " testbed_id INTEGER NOT NULL REFERENCES testbeds(id), started INTEGER);"
    "CREATE TABLE results(id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
    " benchmark_id INTEGER NOT NULL REFERENCES benchmarks(id), n INTEGER, min REAL,"
    " median REAL, max REAL);"
    "CREATE TABLE samples(result_id INTEGER NOT NULL REFERENCES results(id), idx INTEGER,"
    " wall_s REAL);"
    "INSERT INTO commits VALUES (1, '00000000000000000000000000000000c0ffee01', 'old', 1600000000);"
    "INSERT INTO testbeds VALUES (1, 'oldhash', 'Old CPU', 4);"
    "INSERT INTO benchmarks VALUES (1, 'op/test/fwd/bench000/cpu', 'batch=1');"
    "INSERT INTO runs VALUES (1, 1, 1, 1600000000);"
    "INSERT INTO results VALUES (1, 1, 1, 3, 1.0, 2.0, 3.0);"
    "INSERT INTO samples VALUES (1, 0, 1.0), (1, 1, 2.0), (1, 2, 3.0);"
    "PRAGMA user_version = 1;";

static void test_migration_from_v1(void **state)
{
	(void)state;
	char path[512];
	struct xo_perfdb *db;
	double level[1] = {2.0};
	FILE *devnull = fopen("/dev/null", "w");
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	bool failed;

	SQLITE_ONLY(); /* the v1 schema is a SQLite file's */
	db_path(path, sizeof(path), "v1.sqlite");
	remove_db(path);
	exec_sql(path, v1_schema);
	assert_int_equal(query_int(path, "PRAGMA user_version"), 1);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	/* old data intact and readable through the new code; new rows fit */
	rng_state = 1;
	record_fake(db, 1, "Haswell", 1, 12, level, 0.01); /* the same sha as the v1 commit */
	assert_ok(xo_perf_compare(db, "run:1", "run:2", &o, devnull, &failed));
	xo_perfdb_close(db);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK); /* reopening is a no-op */
	xo_perfdb_close(db);
	fclose(devnull);
	assert_int_equal(query_int(path, "PRAGMA user_version"), XO_PERFDB_SCHEMA_VERSION);
	assert_int_equal(query_int(path, "SELECT count(*) FROM runs WHERE state = 'complete'"), 2);
	assert_int_equal(query_int(path, "SELECT count(*) FROM samples WHERE result_id = 1"), 3);
	assert_int_equal(query_int(path, "SELECT count(*) FROM commits"), 1);
	assert_int_equal(query_int(path, "SELECT count(*) FROM changes"), 0);
	assert_int_equal(query_int(path, "SELECT count(*) FROM pragma_table_info('testbeds')"
	                                 " WHERE name = 'blas_coretype'"),
	                 1);
	/* version 3: others' CPU per run, unknown (NULL) for the v1 run */
	assert_int_equal(query_int(path, "SELECT count(*) FROM pragma_table_info('runs')"
	                                 " WHERE name = 'others_cpu'"),
	                 1);
	assert_int_equal(query_int(path, "SELECT others_cpu IS NULL FROM runs WHERE id = 1"), 1);
}

/* An index of the store at path by name: 1 when there, else 0 (either engine). */
static int64_t index_exists(const char *path, const char *name)
{
	char sql[256];

	snprintf(sql, sizeof(sql),
	         pg_base() ? "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema()"
	                     " AND indexname = '%s'"
	                   : "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = '%s'",
	         name);
	return query_int(path, sql);
}

/*
 * Version 5 -> 6 (on both engines): a store written before
 * the index on runs(commit_id, testbed_id) gets it, and its data stays: two
 * complete runs and the 'incomplete' row a killed two-transaction writer of
 * that time left, which is still skipped. The v5 store is this store with
 * version 6's one change undone (the schema text of v5 is store.c's chain up
 * to 5). On SQLite the query planner then finds a commit's runs on a
 * testbed (compare's pooling) through the index, not by a scan of runs.
 */
static void test_migration_from_v5(void **state)
{
	(void)state;
	char path[512];
	struct xo_perfdb *db;
	double level[2] = {1e-3, 2e-3};
	FILE *devnull = fopen("/dev/null", "w");
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	bool failed;
	int64_t run = 0;

	assert_non_null(devnull);
	db_path(path, sizeof(path), "v5.sqlite");
	remove_db(path);
	assert_ok(xo_perfdb_open(path, &db));
	rng_state = 17;
	record_fake(db, 1, "Haswell", 2, 10, level, 0.01);
	record_fake(db, 2, "Haswell", 2, 10, level, 0.01);
	xo_perfdb_close(db);
	assert_true(XO_PERFDB_SCHEMA_VERSION >= 6);
	assert_int_equal(index_exists(path, "runs_commit_testbed"), 1);
	exec_sql(path, "DROP INDEX runs_commit_testbed;"
	               " INSERT INTO runs(commit_id, testbed_id, started, state, note)"
	               " VALUES (1, 1, 1700000000, 'incomplete', 'killed')");
	exec_sql(path, pg_base() ? "UPDATE xo_meta SET value = 5 WHERE key = 'user_version'"
	                         : "PRAGMA user_version = 5");
	assert_int_equal(store_version(path), 5);
	assert_int_equal(index_exists(path, "runs_commit_testbed"), 0);

	assert_ok(xo_perfdb_open(path, &db));
	assert_int_equal(store_version(path), XO_PERFDB_SCHEMA_VERSION);
	assert_int_equal(index_exists(path, "runs_commit_testbed"), 1);
	assert_int_equal(query_int(path, "SELECT count(*) FROM runs"), 3);
	assert_int_equal(query_int(path, "SELECT count(*) FROM results"), 4);
	assert_ok(xo_perf_compare(db, "run:1", "run:2", &o, devnull, &failed));
	assert_int_equal(xo_perf_resolve_run(db, "run:3", &run), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "incomplete"));
	/* the latest complete run of commit 1 is run 1, not the killed row */
	assert_ok(xo_perf_resolve_run(db, "00000000000000000000000000000000c0ffee01", &run));
	assert_int_equal(run, 1);
	xo_perfdb_close(db);
	fclose(devnull);
	if (!pg_base()) {
		/* compare's pooling (both columns) and a commit's first run
		 * (commit_id alone: detect, the report, the changes list) */
		static const char *const q[][2] = {
		    {"SELECT ru.id FROM runs ru WHERE ru.commit_id = 1 AND ru.testbed_id = 1"
		     " AND ru.state = 'complete' AND ru.id > 0",
		     "INDEX runs_commit_testbed (commit_id=? AND testbed_id=?"},
		    {"SELECT min(r2.id) FROM runs r2 WHERE r2.commit_id = 1",
		     "INDEX runs_commit_testbed (commit_id=?"},
		};
		sqlite3 *h;

		assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
		for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
			sqlite3_stmt *s;
			char sql[256], plan[1024] = "";

			snprintf(sql, sizeof(sql), "EXPLAIN QUERY PLAN %s", q[i][0]);
			assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK);
			while (sqlite3_step(s) == SQLITE_ROW)
				snprintf(plan + strlen(plan), sizeof(plan) - strlen(plan), "%s; ",
				         (const char *)sqlite3_column_text(s, 3));
			sqlite3_finalize(s);
			print_message("plan: %s\n", plan);
			if (!strstr(plan, q[i][1]))
				fail_msg("%s: plan '%s' lacks '%s'", q[i][0], plan, q[i][1]);
		}
		sqlite3_close(h);
	}
}

/* ---- messages never show a password ------------------------------------------------ */

/* xo_sql_redact on every form libpq takes: the password in the authority
 * (up to its last '@' before the path), in a parameter whose decoded name
 * holds "password", or a conninfo password keyword, becomes ***; the rest,
 * and a path, are kept so the message still names the store. */
static void test_redact_password(void **state)
{
	static const char *const cases[][2] = {
	    {"postgresql://u:pw@h/db", "postgresql://u:***@h/db"},
	    {"postgres://u:p@ss@h:5432/db?sslmode=require", "postgres://u:***@h:5432/db?sslmode=require"},
	    {"postgresql://h/db?user=u&password=pw&x=1", "postgresql://h/db?user=u&password=***&x=1"},
	    {"postgresql://u@h/db?password=pw", "postgresql://u@h/db?password=***"},
	    {"postgresql:///xo?host=/tmp/s", "postgresql:///xo?host=/tmp/s"},
	    {"/tmp/u:pw@h/perf.sqlite", "/tmp/u:pw@h/perf.sqlite"},
	    /* '?', '#', '@' and %xx inside the password */
	    {"postgresql://u:pa?ss@h/db", "postgresql://u:***@h/db"},
	    {"postgresql://u:pa#ss@h/db?x=1", "postgresql://u:***@h/db?x=1"},
	    {"postgresql://u:p%40s%3Fs@h/db", "postgresql://u:***@h/db"},
	    {"postgresql://u:pa?ss@h", "postgresql://u:***@h"},
	    /* parameters: percent-encoded keys, any case, sslpassword, no fragment */
	    {"postgresql://h/db?pass%77ord=pw&x=1", "postgresql://h/db?pass%77ord=***&x=1"},
	    {"postgresql://h/db?PassWord=pw", "postgresql://h/db?PassWord=***"},
	    {"postgresql://h/db?password=p#w&y=2", "postgresql://h/db?password=***&y=2"},
	    {"postgresql://h/db?sslpassword=pw", "postgresql://h/db?sslpassword=***"},
	    /* conninfo keyword=value, quoted (with escapes) or not */
	    {"host=h password='a b\\' c' dbname=x", "host=h password=*** dbname=x"},
	    {"host=h password = pw port=1", "host=h password = *** port=1"},
	    {"host=h PASSWORD=pw", "host=h PASSWORD=***"},
	    /* a URI as a conninfo value (libpq expands dbname=URI), quoted or
	     * not, and a scheme in any case */
	    {"dbname=postgresql://u:PWa13@127.0.0.1:1/db", "dbname=postgresql://u:***@127.0.0.1:1/db"},
	    {"dbname='postgresql://u:p w\\'x@h/db' port=1", "dbname='postgresql://u:***@h/db' port=1"},
	    {"port=1 dbname = postgres://u:pw@h/db?sslpassword=q&x=1 user=v",
	     "port=1 dbname = postgres://u:***@h/db?sslpassword=*** user=v"},
	    {"POSTGRESQL://u:pw@h/db", "POSTGRESQL://u:***@h/db"},
	    {"x PostGres://u:pw@h/db?password=q", "x PostGres://u:***@h/db?password=***"},
	};
	char out[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		xo_sql_redact(cases[i][0], out, sizeof(out));
		assert_string_equal(out, cases[i][1]);
	}
	assert_true(xo_sql_is_uri("postgres://h/db") && xo_sql_is_uri("postgresql://h/db"));
	assert_false(xo_sql_is_uri("perf.sqlite") || xo_sql_is_uri("postgresql:/x"));
	/* a conninfo string is PostgreSQL too; a path with '=' that libpq
	 * does not parse (unknown keyword, no value) stays a path */
	assert_true(xo_sql_is_uri("host=h port=1 dbname=d") && xo_sql_is_uri(" dbname = 'a b'"));
	assert_false(xo_sql_is_uri("runs=1.sqlite") || xo_sql_is_uri("file:/x?immutable=1") ||
	             xo_sql_is_uri("/tmp/host=h.sqlite") || xo_sql_is_uri("host=h x"));
	/* more passwords than the spans tracked: the rest is hidden whole */
	{
		char many[400] = "", more[256];
		size_t k = 0;

		for (int i = 0; i < 20; i++)
			k += (size_t)snprintf(many + k, sizeof(many) - k, "password=Zq%d ", i);
		xo_sql_redact(many, more, sizeof(more));
		assert_null(strstr(more, "Zq"));
	}
	/* a message that holds a password in any form libpq reads it in */
	assert_true(xo_sql_quotes_secret("postgresql://u:server@h/db", "connection to server at"));
	assert_true(xo_sql_quotes_secret("postgresql://u:p%41ss@h/db", "bad pAss here"));
	assert_true(xo_sql_quotes_secret("host=h password='a\\'b c'", "got a'b c"));
	assert_true(xo_sql_quotes_secret("dbname='postgresql://u:a\\'b@h/db'", "at a'b"));
	assert_false(xo_sql_quotes_secret("postgresql://u:Zq9@h/db", "connection refused"));
	assert_false(xo_sql_quotes_secret("postgresql://u@h/db", "u h db"));
}

/* ---- a fleet: two testbeds in one store ------------------------------------------ */

static void record_on(struct xo_perfdb *db, const char *host, int commit, double level)
{
	struct xo_perf_commit c;
	struct xo_perf_testbed t;
	struct xo_perf_result *r = fake_results(1, 15, &level, 0.01);
	int64_t run;

	fake_commit(&c, commit);
	fake_testbed(&t, "Haswell");
	snprintf(t.hostname, sizeof(t.hostname), "%s", host);
	assert_ok(xo_perfdb_run_write(db, &c, &t, "test", r, 1, &run));
	free_results(r, 1);
}

/*
 * --testbed: host-a got 2x slower from commit 1 to 2, host-b did not. compare
 * of the two commits on each host gives each host's answer (a commit has
 * runs on both: without the picker the head's latest run decides which);
 * an unknown name is refused with the hosts there are.
 */
static void test_testbed_picker(void **state)
{
	(void)state;
	char path[512], base[48], head[48];
	struct xo_perfdb *db;
	FILE *devnull = fopen("/dev/null", "w");
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	struct xo_perf_commit c;
	bool failed = false;
	int64_t a, b;

	db_path(path, sizeof(path), "picker.sqlite");
	remove_db(path);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 31;
	record_on(db, "host-a", 1, 1e-3);
	record_on(db, "host-b", 1, 1e-3);
	record_on(db, "host-a", 2, 2e-3);
	record_on(db, "host-b", 2, 1e-3);
	fake_commit(&c, 1);
	snprintf(base, sizeof(base), "%s", c.sha);
	fake_commit(&c, 2);
	snprintf(head, sizeof(head), "%s", c.sha);
	assert_ok(xo_perfdb_testbed_find(db, "host-a", &a));
	assert_ok(xo_perfdb_testbed_find(db, "host-b", &b));
	assert_true(a != b);
	o.testbed = a;
	assert_ok(xo_perf_compare(db, base, head, &o, devnull, &failed));
	assert_true(failed); /* host-a: SLOWER */
	o.testbed = b;
	failed = true;
	assert_ok(xo_perf_compare(db, base, head, &o, devnull, &failed));
	assert_false(failed); /* host-b: SAME */
	/* a run of another testbed does not meet the picker */
	assert_int_equal(xo_perf_compare(db, "run:1", "run:3", &o, devnull, &failed), XO_EINVAL);
	assert_int_equal(xo_perfdb_testbed_find(db, "host-c", &a), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "host-a, host-b"));
	assert_ok(xo_perf_detect(db, &o, devnull, &failed));
	xo_perfdb_close(db);
	fclose(devnull);
}

/* ---- files that are not ours ---------------------------------------------------- */

static void expect_refused(const char *path, const char *reason)
{
	struct xo_perfdb *db = NULL;

	assert_int_equal(xo_perfdb_open(path, &db), XO_EDB);
	assert_null(db);
	if (!strstr(xo_last_error(), reason))
		fail_msg("message '%s' lacks '%s'", xo_last_error(), reason);
}

static void test_refuses_foreign_files(void **state)
{
	(void)state;
	char path[512];
	FILE *f;

	if (pg_base()) {
		/* a schema with another program's tables, and a newer store */
		db_path(path, sizeof(path), "foreign.sqlite");
		remove_db(path);
		exec_sql(path, "CREATE TABLE t(x BIGINT); INSERT INTO t VALUES (1);");
		expect_refused(path, "another program");
		assert_int_equal(query_int(path, "SELECT count(*) FROM t"), 1); /* untouched */
		db_path(path, sizeof(path), "newer.sqlite");
		remove_db(path);
		exec_sql(path, "CREATE TABLE xo_meta(key TEXT PRIMARY KEY, value BIGINT NOT NULL);"
		               " INSERT INTO xo_meta VALUES ('application_id', 2020569188),"
		               " ('user_version', 99); CREATE TABLE runs(id BIGINT);");
		expect_refused(path, "newer");
		return;
	}
	db_path(path, sizeof(path), "garbage.sqlite");
	remove_db(path);
	f = fopen(path, "w");
	for (int i = 0; i < 200; i++)
		fputs("this is not a database at all; ", f);
	fclose(f);
	expect_refused(path, "not a SQLite database");

	db_path(path, sizeof(path), "foreign.sqlite");
	remove_db(path);
	exec_sql(path, "CREATE TABLE t(x); INSERT INTO t VALUES (1);");
	expect_refused(path, "another program");
	assert_int_equal(query_int(path, "SELECT count(*) FROM t"), 1); /* untouched */

	db_path(path, sizeof(path), "newer.sqlite");
	remove_db(path);
	exec_sql(path, "PRAGMA application_id = 2020569188; CREATE TABLE runs(id);"
	               " PRAGMA user_version = 99;");
	expect_refused(path, "newer");
}

/*
 * Schema versions outside the migration table (a negative user_version used
 * to index before it), and version 0 on a populated store: one message with
 * the file and SQLite's reason, the store unchanged. Readers open read-only:
 * the connection cannot write, a missing file is not created, and a store
 * that needs migrating is migrated only when it can be written.
 */
static void test_schema_versions_and_readers(void **state)
{
	(void)state;
	struct xo_perfdb *db = NULL;
	char path[512], msg[512];
	double level[2] = {1e-3, 2e-3};

	SQLITE_ONLY(); /* PRAGMA versions, read-only files, paths */
	db_path(path, sizeof(path), "versions.sqlite");
	remove_db(path);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	record_fake(db, 1, "Haswell", 2, 10, level, 0.01);
	xo_perfdb_close(db);

	exec_sql(path, "PRAGMA user_version = -1");
	expect_refused(path, "schema version -1");
	assert_int_equal(xo_perfdb_open_readonly(path, &db), XO_EDB);
	assert_null(db);
	assert_int_equal(query_int(path, "PRAGMA user_version"), -1); /* untouched */

	exec_sql(path, "PRAGMA user_version = 0");
	expect_refused(path, "table commits already exists");
	snprintf(msg, sizeof(msg), "%s", xo_last_error());
	if (!strstr(msg, path) || strstr(strstr(msg, path) + strlen(path), path) ||
	    strstr(msg, "CREATE"))
		fail_msg("message '%s' should name the file once and quote no SQL", msg);
	assert_int_equal(query_int(path, "SELECT count(*) FROM runs"), 1);

	/* back at the current version: opens read-only, nothing to migrate */
	snprintf(msg, sizeof(msg), "PRAGMA user_version = %d", XO_PERFDB_SCHEMA_VERSION);
	exec_sql(path, msg);
	assert_int_equal(xo_perfdb_open_readonly(path, &db), XO_OK);
	assert_int_equal(sqlite3_db_readonly(xo_perfdb_sqlite(db), "main"), 1);
	xo_perfdb_close(db);

	/* a migration the reader needs runs when the file is writable */
	exec_sql(path, "PRAGMA user_version = 2; ALTER TABLE runs DROP COLUMN others_cpu;"
	               " DROP TABLE probes; ALTER TABLE benchmarks DROP COLUMN metric;"
	               " ALTER TABLE benchmarks DROP COLUMN unit; DROP INDEX runs_commit_testbed");
	assert_int_equal(xo_perfdb_open_readonly(path, &db), XO_OK);
	assert_int_equal(sqlite3_db_readonly(xo_perfdb_sqlite(db), "main"), 1);
	xo_perfdb_close(db);
	assert_int_equal(query_int(path, "PRAGMA user_version"), XO_PERFDB_SCHEMA_VERSION);

	db_path(path, sizeof(path), "absent.sqlite");
	remove_db(path);
	assert_int_equal(xo_perfdb_open_readonly(path, &db), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "no such database"));
	assert_int_equal(access(path, F_OK), -1);

	assert_int_equal(xo_perfdb_open(tmpdir, &db), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "is a directory"));
	assert_int_equal(xo_perfdb_open("/dev/null", &db), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "not a regular file"));
}

/* ---- one transaction per run ----------------------------------- */

/*
 * A write that fails in the middle of a run: a trigger on table results of
 * the store at path aborts every result insert once the table holds `after`
 * rows (SQLite RAISE(ABORT); PostgreSQL a PL/pgSQL trigger function that
 * raises), as a full disk or a lost connection would mid-run.
 */
static void plant_result_failure(const char *path, int after)
{
	char sql[640];

	if (pg_base())
		snprintf(sql, sizeof(sql),
		         "CREATE FUNCTION xo_planted() RETURNS trigger LANGUAGE plpgsql AS $$"
		         " BEGIN IF (SELECT count(*) FROM results) >= %d THEN"
		         " RAISE EXCEPTION 'planted failure'; END IF; RETURN NEW; END $$;"
		         " CREATE TRIGGER xo_planted BEFORE INSERT ON results"
		         " FOR EACH ROW EXECUTE FUNCTION xo_planted()",
		         after);
	else
		snprintf(sql, sizeof(sql),
		         "CREATE TRIGGER xo_planted BEFORE INSERT ON results"
		         " WHEN (SELECT count(*) FROM results) >= %d"
		         " BEGIN SELECT RAISE(ABORT, 'planted failure'); END",
		         after);
	exec_sql(path, sql);
}

static void remove_result_failure(const char *path)
{
	exec_sql(path, pg_base() ? "DROP TRIGGER xo_planted ON results; DROP FUNCTION xo_planted()"
	                         : "DROP TRIGGER xo_planted");
}

/*
 * A result insert that fails mid-run leaves nothing of that run: no run row
 * (complete or not), no result, no sample, and not even its new commit's
 * row; the run before it is whole, *run_id is untouched, and the message
 * names the store. Failed while runs were written in two transactions (the
 * run row first, 'incomplete', then the results): the run row stayed.
 */
static void test_failed_write_leaves_no_run(void **state)
{
	(void)state;
	char path[512];
	struct xo_perfdb *db;
	struct xo_perf_commit c;
	struct xo_perf_testbed t;
	struct xo_perf_result *r;
	double level[3] = {1e-3, 2e-3, 3e-3};
	int64_t run = -7;

	db_path(path, sizeof(path), "planted.sqlite");
	remove_db(path);
	assert_ok(xo_perfdb_open(path, &db));
	rng_state = 11;
	record_fake(db, 1, "Haswell", 3, 10, level, 0.01);
	/* the next run's second result fails */
	plant_result_failure(path, 4);
	fake_commit(&c, 2);
	fake_testbed(&t, "Haswell");
	r = fake_results(3, 10, level, 0.01);
	assert_int_equal(xo_perfdb_run_write(db, &c, &t, "test", r, 3, &run), XO_EDB);
	assert_non_null(strstr(xo_last_error(), "planted failure"));
	assert_int_equal(run, -7);
	free_results(r, 3);
	xo_perfdb_close(db);
	assert_int_equal(query_int(path, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(query_int(path, "SELECT count(*) FROM runs WHERE state = 'complete'"), 1);
	assert_int_equal(query_int(path, "SELECT count(*) FROM results"), 3);
	assert_int_equal(query_int(path, "SELECT count(*) FROM samples"), 30);
	assert_int_equal(query_int(path, "SELECT count(*) FROM commits"), 1);
	/* and the store takes the next run once the fault is gone */
	remove_result_failure(path);
	assert_ok(xo_perfdb_open(path, &db));
	record_fake(db, 2, "Haswell", 3, 10, level, 0.01);
	xo_perfdb_close(db);
	assert_int_equal(query_int(path, "SELECT count(*) FROM runs WHERE state = 'complete'"), 2);
	assert_int_equal(query_int(path, "SELECT count(*) FROM results"), 6);
}

/*
 * import-db copies one run per transaction: when the target fails on the
 * second run's second result, the first run is there whole and nothing of
 * the second; importing again once the fault is gone adds exactly the
 * second (the first is recognised and skipped). The source is a SQLite file;
 * the target either engine.
 */
static void test_import_db_failure_per_run(void **state)
{
	(void)state;
	char src[512], dst[512];
	struct xo_perfdb *db;
	double level[2] = {1e-3, 2e-3};
	FILE *sink = fopen("/dev/null", "w");

	assert_non_null(sink);
	snprintf(src, sizeof(src), "%s/import_src.sqlite", tmpdir);
	unlink(src);
	assert_ok(xo_perfdb_open(src, &db));
	rng_state = 13;
	record_fake(db, 1, "Haswell", 2, 10, level, 0.01);
	record_fake(db, 2, "Haswell", 2, 10, level, 0.01);
	xo_perfdb_close(db);

	db_path(dst, sizeof(dst), "import_dst.sqlite");
	remove_db(dst);
	assert_ok(xo_perfdb_open(dst, &db));
	xo_perfdb_close(db);
	plant_result_failure(dst, 3);
	assert_ok(xo_perfdb_open(dst, &db));
	assert_int_equal(xo_perfdb_import_db(db, src, "target", sink), XO_EDB);
	xo_perfdb_close(db);
	assert_int_equal(query_int(dst, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(query_int(dst, "SELECT count(*) FROM results"), 2);
	assert_int_equal(query_int(dst, "SELECT count(*) FROM samples"), 20);
	remove_result_failure(dst);
	assert_ok(xo_perfdb_open(dst, &db));
	assert_ok(xo_perfdb_import_db(db, src, "target", sink));
	xo_perfdb_close(db);
	assert_int_equal(query_int(dst, "SELECT count(*) FROM runs WHERE state = 'complete'"), 2);
	assert_int_equal(query_int(dst, "SELECT count(*) FROM results"), 4);
	fclose(sink);
}

/* ---- kill -9 mid-write ---------------------------------------------------------- */

#define KILL_RESULTS 200
#define KILL_SAMPLES 20

static void writer_loop(const char *path, int tag)
{
	struct xo_perfdb *db;
	double level[KILL_RESULTS];

	for (int k = 0; k < KILL_RESULTS; k++)
		level[k] = 1e-3 * (k + 1);
	if (xo_perfdb_open(path, &db))
		_exit(3);
	rng_state = (uint64_t)tag;
	for (int i = 0;; i++)
		record_fake(db, 100 + tag * 1000 + i, "Haswell", KILL_RESULTS, KILL_SAMPLES, level,
		            0.01);
}

/*
 * A writer killed with SIGKILL at 12 random points (opening, inside a run's
 * transaction, between runs) leaves a consistent store: the earlier runs
 * intact, every run complete and whole, none 'incomplete' (one
 * transaction per run; with the run row written first in a transaction
 * of its own, kills inside the second left 'incomplete' rows), on either
 * engine.
 */
static void test_kill_mid_write(void **state)
{
	(void)state;
	char path[512];
	struct xo_perfdb *db;
	double level[3] = {1e-3, 2e-3, 3e-3};
	struct timespec ts;
	int kills = 0;

	db_path(path, sizeof(path), "kill.sqlite");
	remove_db(path);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 5;
	record_fake(db, 1, "Haswell", 3, 10, level, 0.01);
	record_fake(db, 2, "Haswell", 3, 10, level, 0.01);
	xo_perfdb_close(db);
	srand((unsigned)time(NULL));
	for (int round = 0; round < 12; round++) {
		pid_t pid = fork();
		int status;

		assert_true(pid >= 0);
		if (pid == 0)
			writer_loop(path, round + 1);
		/* lands in open, in a run's transaction or between runs: 0..250 ms
		 * on SQLite (a run of 200 x 20 samples takes tens of ms), 0..1500 ms on
		 * PostgreSQL (~1.1 s a run over the local socket, so some kills
		 * come after a run has committed) */
		{
			long ms = rand() % (pg_base() ? 1500 : 250);

			ts.tv_sec = ms / 1000;
			ts.tv_nsec = (ms % 1000) * 1000000L;
		}
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		kills += WIFSIGNALED(status);

		/* consistent after every kill */
		assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
		xo_perfdb_close(db);
		if (!pg_base()) {
			sqlite3 *h;
			sqlite3_stmt *s;

			assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
			assert_int_equal(
			    sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &s, NULL),
			    SQLITE_OK);
			assert_int_equal(sqlite3_step(s), SQLITE_ROW);
			assert_string_equal((const char *)sqlite3_column_text(s, 0), "ok");
			sqlite3_finalize(s);
			sqlite3_close(h);
		}
		/* earlier runs intact */
		assert_int_equal(
		    query_int(path, "SELECT count(*) FROM results WHERE run_id IN (1, 2)"), 6);
		assert_int_equal(query_int(path, "SELECT count(*) FROM samples s JOIN results r ON"
		                                 " r.id = s.result_id WHERE r.run_id IN (1, 2)"),
		                 60);
		/* one transaction per run: no run that is not complete (a NULL
		 * state counts as not complete), and every later run whole */
		assert_int_equal(query_int(path, "SELECT count(*) FROM runs WHERE"
		                                 " coalesce(state, '') != 'complete'"),
		                 0);
		assert_int_equal(
		    query_int(path, "SELECT count(*) FROM runs ru WHERE ru.id > 2 AND"
		                    " (SELECT count(*) FROM results WHERE run_id = ru.id) != 200"),
		    0);
		assert_int_equal(query_int(path,
		                           "SELECT count(*) FROM results r WHERE"
		                           " (SELECT count(*) FROM samples WHERE result_id = r.id)"
		                           " != r.n"),
		                 0);
	}
	assert_true(kills > 0);
	print_message("kill -9: %d kills, %lld runs complete, none partial\n", kills,
	              (long long)query_int(path, "SELECT count(*) FROM runs"));
}

/* ---- two writers at once ---------------------------------------------------------- */

static void test_concurrent_writers(void **state)
{
	(void)state;
	char path[512];
	pid_t pid[2];

	db_path(path, sizeof(path), "concurrent.sqlite");
	remove_db(path);
	for (int w = 0; w < 2; w++) {
		pid[w] = fork();
		assert_true(pid[w] >= 0);
		if (pid[w] == 0) {
			struct xo_perfdb *db;
			double level[50];

			for (int k = 0; k < 50; k++)
				level[k] = 1e-3;
			/* both open the fresh file at once: creation races too */
			if (xo_perfdb_open(path, &db)) {
				fprintf(stderr, "writer %d: %s\n", w, xo_last_error());
				_exit(3);
			}
			rng_state = (uint64_t)w + 1;
			for (int i = 0; i < 15; i++)
				record_fake(db, 10 + w * 100 + i, "Haswell", 50, 10, level, 0.01);
			xo_perfdb_close(db);
			_exit(0);
		}
	}
	for (int w = 0; w < 2; w++) {
		int status;

		assert_int_equal(waitpid(pid[w], &status, 0), pid[w]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(query_int(path, "SELECT count(*) FROM runs WHERE state = 'complete'"), 30);
	assert_int_equal(query_int(path, "SELECT count(*) FROM results"), 30 * 50);
	assert_int_equal(query_int(path, "SELECT count(*) FROM samples"), 30 * 50 * 10);
	assert_int_equal(query_int(path, "SELECT count(*) FROM commits"), 30);
}

/*
 * Two processes setting up the same fresh file at once: SQLite answers one of
 * them SQLITE_BUSY without waiting when their locks would deadlock (before
 * the retry in xo_perfdb_open, 89 of 600 such opens failed with "database is
 * locked": about 15% a pair, so 20 pairs miss it with probability
 * 0.85^20 = 4%). Every open must now succeed.
 */
static void test_concurrent_fresh_open(void **state)
{
	(void)state;
	char path[512];

	db_path(path, sizeof(path), "fresh.sqlite");
	for (int round = 0; round < 20; round++) {
		pid_t pid[2];

		remove_db(path);
		for (int w = 0; w < 2; w++) {
			pid[w] = fork();
			assert_true(pid[w] >= 0);
			if (pid[w] == 0) {
				struct xo_perfdb *db;

				if (xo_perfdb_open(path, &db)) {
					fprintf(stderr, "opener %d: %s\n", w, xo_last_error());
					_exit(3);
				}
				xo_perfdb_close(db);
				_exit(0);
			}
		}
		for (int w = 0; w < 2; w++) {
			int status;

			assert_int_equal(waitpid(pid[w], &status, 0), pid[w]);
			assert_true(WIFEXITED(status));
			assert_int_equal(WEXITSTATUS(status), 0);
		}
		assert_int_equal(store_version(path), XO_PERFDB_SCHEMA_VERSION);
	}
}

int main(void)
{
	struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mann_whitney_known),
	    cmocka_unit_test(test_shift_ci_known),
	    cmocka_unit_test(test_compare_four_verdicts),
	    cmocka_unit_test(test_summary_known),
	    cmocka_unit_test(test_steps_direct),
	    cmocka_unit_test(test_detect_planted_and_noise),
	    cmocka_unit_test(test_accept_starts_baseline),
	    cmocka_unit_test(test_detect_run_to_run_noise),
	    cmocka_unit_test(test_compare_and_testbed_diff),
	    cmocka_unit_test(test_compare_run_noise),
	    cmocka_unit_test(test_redact_password),
	    cmocka_unit_test(test_testbed_picker),
	    cmocka_unit_test(test_welch_known),
	    cmocka_unit_test(test_runs_rule_synthetic),
	    cmocka_unit_test(test_count_rule_and_parsing),
	    cmocka_unit_test(test_compare_counts),
	    cmocka_unit_test(test_detect_counts),
	    cmocka_unit_test(test_detect_scans_bounded),
	    cmocka_unit_test(test_migration_from_v1),
	    cmocka_unit_test(test_migration_from_v5),
	    cmocka_unit_test(test_refuses_foreign_files),
	    cmocka_unit_test(test_schema_versions_and_readers),
	    cmocka_unit_test(test_failed_write_leaves_no_run),
	    cmocka_unit_test(test_import_db_failure_per_run),
	    cmocka_unit_test(test_kill_mid_write),
	    cmocka_unit_test(test_concurrent_writers),
	    cmocka_unit_test(test_concurrent_fresh_open),
	};

	/* a group of cases (XO_TEST_CASES, suites/case_pick.h): the PostgreSQL
	 * runs are split into a few ctest entries */
	return _cmocka_run_group_tests("tests", tests,
				       case_pick(tests, sizeof(tests) / sizeof(tests[0])), setup_tmp,
				       teardown_tmp);
}
