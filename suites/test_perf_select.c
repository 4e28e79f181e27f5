/*
 * test_perf_select.c - which runs each reader of the perf store takes, and
 * verdicts over a noisy base.
 *
 * Run selection (docs/perf.md): a commit names every complete run recorded
 * at it. compare pools them (continuous and bisect: only those after the
 * rounds began, after_run); detect makes one point of them; the report's
 * answer and advise read the latest complete run; compare's default HEAD is
 * the latest complete run; the history order breaks a tie between two
 * children of one commit by each one's newest complete run. An incomplete
 * run (a killed writer's row, with results) is never read by any of them.
 * Each test builds a real store where a commit holds three complete runs
 * that differ (1.6x, 2.0x, 2.4x the base) and an incomplete one among them
 * (0.25x, with more samples than the three together), and its child commit
 * only an incomplete run, so taking the newest, the oldest or an incomplete
 * run instead gives another number or another run than the rule.
 *
 * Noisy base: the base side's samples spread (a loaded machine's tail, or
 * runs 1.5x apart) and the head is the base's code again:
 * compare, continuous's and bisect's comparisons (xo_perf_compare_tally with
 * their options) and detect never say SLOWER or FASTER; a head 3x slower
 * than every base sample is SLOWER for all of them.
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
#include <jansson.h>

#include "perfdb.h"
#include "proc.h"

/* after proc.h: it uses struct xo_proc */
#include "perf_fixture.h"

#define SHA_P "1111000000000000000000000000000000000001"
#define SHA_A "aaaa000000000000000000000000000000000002"
#define SHA_B "bbbb000000000000000000000000000000000003"
#define SHA_X "cccc000000000000000000000000000000000004"
#define SHA_Y "dddd000000000000000000000000000000000005"
#define SHA_C "eeee000000000000000000000000000000000006"

#define OP_NAME "op/softmax/fwd/x/cpu"
#define LEVEL   1e-4 /* the base's op time, s */

/* One run of the op series at sha (first parent parent) and, with model, a
 * predict sweep of the model "seed" on cpu and cl (batches 1..16, cl flat
 * at 4x cpu's batch-1 time) scaled by level too; samples level x (1 + 0.3%
 * N(0,1)), and a fraction hit of them (the first) level x U(1.5, 6), a
 * loaded machine's tail. complete false leaves the run as a killed writer
 * does ('incomplete', its results written). Returns the run id. */
static int64_t put_run(struct xo_perfdb *db, const char *sha, const char *parent, double level,
                       size_t n, double hit, bool model, bool complete)
{
	struct xo_perf_commit c = {0};
	struct xo_perf_testbed t = {0};
	struct xo_perf_result r[1 + 2 * 5];
	size_t nr = 0, nhit = (size_t)lround(hit * (double)n);
	int64_t run;
	char sql[128];

	snprintf(c.sha, sizeof(c.sha), "%s", sha);
	snprintf(c.parent, sizeof(c.parent), "%s", parent);
	snprintf(c.subject, sizeof(c.subject), "commit %.4s", sha);
	c.date = 1700000000;
	snprintf(t.hostname, sizeof(t.hostname), "testhost");
	snprintf(t.cpu_model, sizeof(t.cpu_model), "Test CPU");
	t.cores = 2;
	memset(r, 0, sizeof(r));
	snprintf(r[0].b.name, sizeof(r[0].b.name), OP_NAME);
	snprintf(r[0].b.kind, sizeof(r[0].b.kind), "op");
	snprintf(r[0].b.device, sizeof(r[0].b.device), "cpu");
	snprintf(r[0].b.version, sizeof(r[0].b.version), "%.4s", sha);
	nr = 1;
	for (int d = 0; model && d < 2; d++)
		for (int64_t b = 1; b <= 16; b *= 2, nr++) {
			const char *dev = d ? "cl" : "cpu";

			snprintf(r[nr].b.name, sizeof(r[nr].b.name), "model/seed/predict/b%lld/%s",
			         (long long)b, dev);
			snprintf(r[nr].b.kind, sizeof(r[nr].b.kind), "model");
			snprintf(r[nr].b.device, sizeof(r[nr].b.device), "%s", dev);
			snprintf(r[nr].b.what, sizeof(r[nr].b.what), "predict");
			snprintf(r[nr].b.model, sizeof(r[nr].b.model), "seed");
			snprintf(r[nr].b.version, sizeof(r[nr].b.version), "v1");
			r[nr].b.batch = b;
		}
	for (size_t k = 0; k < nr; k++) {
		/* the op at level; the sweep at level x batch (cpu), 4 level (cl) */
		double m = k == 0   ? level
		           : k <= 5 ? level * (double)((int64_t)1 << (k - 1))
		                    : 4.0 * level;

		r[k].reps = 1;
		r[k].n = n;
		r[k].samples = calloc(n, sizeof(*r[k].samples));
		assert_non_null(r[k].samples);
		for (size_t i = 0; i < n; i++)
			r[k].samples[i].wall_s =
			    m * (i < nhit ? 1.5 + 4.5 * uniform() : 1.0 + 0.003 * gauss());
	}
	assert_int_equal(xo_perfdb_run_write(db, &c, &t, "record", r, nr, &run), XO_OK);
	for (size_t k = 0; k < nr; k++)
		free(r[k].samples);
	if (!complete) {
		snprintf(sql, sizeof(sql), "UPDATE runs SET state = 'incomplete' WHERE id = %lld",
		         (long long)run);
		assert_int_equal(xo_sql_exec(xo_perfdb_sql(db), sql), XO_SQL_OK);
	}
	return run;
}

/* The several-runs store: P and A one run each at LEVEL; B (A's child)
 * three complete runs at 1.6, 2.0 and 2.4 LEVEL (pooled median 2.0), with
 * an incomplete one at 0.25 LEVEL and 60 samples (pooled with them: median
 * 0.25) between the second and the third; last C, B's child, whose only run
 * is incomplete (8 LEVEL). With model, every run also holds the predict
 * sweep. run[] gets the ids: P, A, B1, B2, B's incomplete one, B3, C's. */
static struct xo_perfdb *several_runs_store(const char *name, bool model, int64_t run[7])
{
	struct xo_perfdb *db = fixture_open(name);

	run[0] = put_run(db, SHA_P, "", LEVEL, 15, 0.0, model, true);
	run[1] = put_run(db, SHA_A, SHA_P, LEVEL, 15, 0.0, model, true);
	run[2] = put_run(db, SHA_B, SHA_A, 1.6 * LEVEL, 15, 0.0, model, true);
	run[3] = put_run(db, SHA_B, SHA_A, 2.0 * LEVEL, 15, 0.0, model, true);
	run[4] = put_run(db, SHA_B, SHA_A, 0.25 * LEVEL, 60, 0.0, model, false);
	run[5] = put_run(db, SHA_B, SHA_A, 2.4 * LEVEL, 15, 0.0, model, true);
	run[6] = put_run(db, SHA_C, SHA_B, 8.0 * LEVEL, 15, 0.0, model, false);
	return db;
}

/* compare's JSON into a parsed document (the caller frees it). */
static json_t *compare_json(struct xo_perfdb *db, const char *base, const char *head,
                            const struct xo_perf_compare_opts *opts)
{
	struct xo_perf_compare_opts o = *opts;
	char *buf = NULL;
	size_t len = 0;
	bool failed = false;
	FILE *f = open_memstream(&buf, &len);
	json_t *root;

	assert_non_null(f);
	o.json = true;
	if (xo_perf_compare(db, base, head, &o, f, &failed) != XO_OK)
		fail_msg("compare %s %s: %s", base, head ? head : "(default)", xo_last_error());
	fclose(f);
	root = json_loads(buf, 0, NULL);
	if (!root)
		fail_msg("compare --json is not JSON:\n%s", buf);
	free(buf);
	return root;
}

/* The run ids a compare side names, as "run:3 run:4" in want. */
static void side_runs(json_t *root, const char *side, const char *want)
{
	json_t *runs = json_object_get(json_object_get(root, side), "runs");
	char got[256] = "";
	size_t used = 0;

	assert_true(json_is_array(runs));
	for (size_t i = 0; i < json_array_size(runs); i++) {
		json_t *r = json_array_get(runs, i);
		json_int_t id = json_is_integer(r) ? json_integer_value(r)
		                                   : json_integer_value(json_object_get(r, "id"));

		used += (size_t)snprintf(got + used, sizeof(got) - used, "%srun:%lld", i ? " " : "",
		                         (long long)id);
		if (used >= sizeof(got))
			break;
	}
	if (strcmp(got, want))
		fail_msg("compare's %s pooled '%s', want '%s'", side, got, want);
}

/* The op row's head median of a compare document, s. */
static double head_median(json_t *root)
{
	json_t *rows = json_object_get(root, "results");

	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *r = json_array_get(rows, i);

		if (!strcmp(json_string_value(json_object_get(r, "benchmark")), OP_NAME))
			return json_real_value(json_object_get(r, "head_median_s"));
	}
	fail_msg("compare has no row for %s", OP_NAME);
	return NAN;
}

/*
 * compare by commit pools B's three complete runs (median 2.0 LEVEL: not
 * the newest's 2.4, the oldest's 1.6, nor 0.25 with the incomplete run),
 * names exactly them, and HEAD's default is B's newest complete run's
 * commit; continuous and bisect (after_run: the rounds they recorded) pool
 * only the runs after it.
 */
static void test_select_compare(void **state)
{
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	struct xo_perfdb *db;
	int64_t run[7], rounds[2];
	char want[64];
	json_t *root;
	double m;

	(void)state;
	rng_state = 31;
	db = several_runs_store("select_compare.sqlite", false, run);
	root = compare_json(db, SHA_A, SHA_B, &o);
	snprintf(want, sizeof(want), "run:%lld", (long long)run[1]);
	side_runs(root, "base", want);
	snprintf(want, sizeof(want), "run:%lld run:%lld run:%lld", (long long)run[2],
	         (long long)run[3], (long long)run[5]);
	side_runs(root, "head", want);
	m = head_median(root);
	/* the pooled 45 samples' median is B2's level within its 0.3% noise */
	if (fabs(m / (2.0 * LEVEL) - 1.0) > 0.02)
		fail_msg("head median %g, want the pooled %g", m, 2.0 * LEVEL);
	json_decref(root);

	/* the default HEAD: the newest complete run's commit, pooled */
	root = compare_json(db, SHA_A, NULL, &o);
	snprintf(want, sizeof(want), "run:%lld run:%lld run:%lld", (long long)run[2],
	         (long long)run[3], (long long)run[5]);
	side_runs(root, "head", want);
	json_decref(root);

	/* continuous/bisect: both sides pool only the rounds recorded after
	 * after_run (one more of A at LEVEL, of B at 3 LEVEL) */
	rounds[0] = put_run(db, SHA_A, SHA_P, LEVEL, 15, 0.0, false, true);
	rounds[1] = put_run(db, SHA_B, SHA_A, 3.0 * LEVEL, 15, 0.0, false, true);
	o.after_run = run[6];
	root = compare_json(db, SHA_A, SHA_B, &o);
	snprintf(want, sizeof(want), "run:%lld", (long long)rounds[0]);
	side_runs(root, "base", want);
	snprintf(want, sizeof(want), "run:%lld", (long long)rounds[1]);
	side_runs(root, "head", want);
	m = head_median(root);
	if (fabs(m / (3.0 * LEVEL) - 1.0) > 0.02)
		fail_msg("after_run: head median %g, want the round's %g", m, 3.0 * LEVEL);
	json_decref(root);
	xo_perfdb_close(db);
}

/* The ratio of the regression detect stored at sha in state ("any": in any
 * state), 0 when none; *text (when not NULL) gets detect's table (the caller frees it). */
static double detect_ratio(struct xo_perfdb *db, const char *sha, const char *state, char **text)
{
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	struct xo_sql_stmt *s = NULL;
	bool failed = false;
	double ratio = 0.0;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(xo_perf_detect(db, &o, f, &failed), XO_OK);
	fclose(f);
	if (text)
		*text = buf;
	else
		free(buf);
	assert_int_equal(xo_sql_prepare(xo_perfdb_sql(db),
	                                "SELECT ch.ratio FROM changes ch JOIN commits c ON"
	                                " c.id = ch.commit_id WHERE c.sha = ? AND"
	                                " (ch.state = ? OR ? = 'any') AND"
	                                " ch.direction = 'regression'",
	                                &s),
	                 XO_SQL_OK);
	xo_sql_bind_text(s, 1, sha);
	xo_sql_bind_text(s, 2, state);
	xo_sql_bind_text(s, 3, state);
	if (xo_sql_step(s) == XO_SQL_ROW)
		ratio = xo_sql_column_double(s, 0);
	xo_sql_finalize(s);
	return ratio;
}

/* detect's point at B pools its three complete runs: the step P, A -> B is
 * 2.0x (the newest run alone: 2.4x; with the incomplete run the point's
 * median is 0.25x: an improvement); C, whose one run is incomplete, is no
 * point of the history. */
static void test_select_detect(void **state)
{
	struct xo_perfdb *db;
	int64_t run[7];
	double ratio;
	char *text = NULL;

	(void)state;
	rng_state = 32;
	db = several_runs_store("select_detect.sqlite", false, run);
	ratio = detect_ratio(db, SHA_B, "any", &text);
	if (fabs(ratio - 2.0) > 0.04)
		fail_msg("detect's step at B: ratio %g, want the pooled 2.0\n%s", ratio, text);
	/* C has no complete run: no point, no step */
	if (strstr(text, "eeee"))
		fail_msg("detect made a point of C's incomplete run:\n%s", text);
	free(text);
	xo_perfdb_close(db);
}

/* advise (and the report's answer, one function) read the latest complete
 * run: B3, whose cpu predict at batch 1 is 2.4 LEVEL (not the incomplete
 * run's 0.25, not B1's 1.6). */
static void test_select_advise(void **state)
{
	struct xo_perfdb *db;
	int64_t run[7];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	json_t *root, *m;

	(void)state;
	rng_state = 33;
	db = several_runs_store("select_advise.sqlite", true, run);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(xo_perf_advise(db, "seed", true, f), XO_OK);
	fclose(f);
	root = json_loads(buf, 0, NULL);
	if (!root)
		fail_msg("advise --json is not JSON:\n%s", buf);
	m = json_array_get(json_object_get(root, "models"), 0);
	if (json_integer_value(json_object_get(m, "run")) != run[5])
		fail_msg("advise read run %lld, want the latest complete run %lld:\n%s",
		         (long long)json_integer_value(json_object_get(m, "run")),
		         (long long)run[5], buf);
	assert_string_equal(json_string_value(json_object_get(m, "commit")), SHA_B);
	json_decref(root);
	free(buf);
	xo_perfdb_close(db);
}

/* The report's "latest run against the one before" is B3 against B2: the
 * latest complete run and the complete one before it, never an incomplete
 * run (B's between them, C's after). */
static void test_select_report(void **state)
{
	struct xo_perfdb *db;
	int64_t run[7];
	char dir[512], path[600], want[64], *buf = NULL, *html = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	if (!xo_proc_found("gnuplot"))
		skip();
	rng_state = 34;
	db = several_runs_store("select_report.sqlite", true, run);
	snprintf(dir, sizeof(dir), "%s/select_report", tmpdir);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	if (xo_perf_report(db, dir, XO_TEST_SCRIPTS_DIR, "seed", f) != XO_OK)
		fail_msg("report: %s", xo_last_error());
	fclose(f);
	free(buf);
	snprintf(path, sizeof(path), "%s/index.html", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	html = calloc(1, 1 << 22);
	assert_non_null(html);
	len = fread(html, 1, (1 << 22) - 1, f);
	fclose(f);
	html[len] = '\0';
	snprintf(want, sizeof(want), "run:%lld run:%lld</code>", (long long)run[3],
	         (long long)run[5]);
	if (!strstr(html, want))
		fail_msg("the report's latest-run comparison is not '%s'", want);
	free(html);
	xo_perfdb_close(db);
}

/* The commit id of sha. */
static int64_t commit_id(struct xo_perfdb *db, const char *sha)
{
	struct xo_sql_stmt *s = NULL;
	int64_t id = 0;

	assert_int_equal(
	    xo_sql_prepare(xo_perfdb_sql(db), "SELECT id FROM commits WHERE sha = ?", &s),
	    XO_SQL_OK);
	xo_sql_bind_text(s, 1, sha);
	assert_int_equal(xo_sql_step(s), XO_SQL_ROW);
	id = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	return id;
}

/*
 * The history's main line at a fork of two leaves X and Y (children of P,
 * equal heights) is the one whose newest complete run is newest: X (runs 2
 * and 4, complete) over Y (run 3 complete, run 5 incomplete). Reading the
 * oldest run (X 2 < Y 3) or any run (Y's 5) puts Y on the main line.
 */
static void test_select_order(void **state)
{
	struct xo_perf_order ord = {0};
	struct xo_perfdb *db;

	(void)state;
	rng_state = 35;
	db = fixture_open("select_order.sqlite");
	put_run(db, SHA_P, "", LEVEL, 10, 0.0, false, true);
	put_run(db, SHA_X, SHA_P, LEVEL, 10, 0.0, false, true);
	put_run(db, SHA_Y, SHA_P, LEVEL, 10, 0.0, false, true);
	put_run(db, SHA_X, SHA_P, LEVEL, 10, 0.0, false, true);
	put_run(db, SHA_Y, SHA_P, LEVEL, 10, 0.0, false, false);
	assert_int_equal(xo_perf_order_load(db, &ord), XO_OK);
	assert_true(xo_perf_order_main(&ord, commit_id(db, SHA_P)));
	if (!xo_perf_order_main(&ord, commit_id(db, SHA_X)) ||
	    xo_perf_order_main(&ord, commit_id(db, SHA_Y)))
		fail_msg("the main line took Y (newest run incomplete) over X (newest complete)");
	xo_perf_order_free(&ord);
	xo_perfdb_close(db);
}

/* ---- a noisy base ---------------------------------------------------------- */

/* The verdict of the op row: compare, continuous's first look and bisect's
 * options through xo_perf_compare_tally, each one word; *why the row. */
static const char *tally_word(struct xo_perfdb *db, const struct xo_perf_compare_opts *o, char *why,
                              size_t size)
{
	struct xo_perf_tally t;
	char *buf = NULL, *line;
	size_t len = 0;
	bool failed = false;
	FILE *f = open_memstream(&buf, &len);
	const char *word;

	assert_non_null(f);
	assert_int_equal(xo_perf_compare_tally(db, SHA_A, SHA_B, o, f, &failed, &t), XO_OK);
	fclose(f);
	word = t.slower ? "SLOWER" : t.faster ? "FASTER" : t.same ? "SAME" : "UNKNOWN";
	/* exit status: failed (exit 1) exactly for a confirmed slowdown */
	if (failed != (t.slower > 0))
		fail_msg("compare failed=%d with %d slower", failed, t.slower);
	line = strstr(buf, OP_NAME);
	assert_non_null(line);
	snprintf(why, size, "%.*s", (int)strcspn(line, "\n"), line);
	free(buf);
	return word;
}

struct noisy {
	const char *what;
	double base_hit;      /* share of each base run's samples in the tail */
	const double *levels; /* per base run (NULL: LEVEL each) */
	size_t runs;          /* runs a side */
	double head;          /* head level over LEVEL */
	bool slower;          /* want SLOWER (else neither SLOWER nor FASTER) */
};

/*
 * compare, continuous, bisect and detect over a noisy base: P and A (the
 * base, with the same noise) then B.
 *  - base loaded (40% of its samples 1.5-6x), head unchanged and quiet: the
 *    medians say -40% or more; not FASTER (the floors are equal).
 *  - base runs at 0.8, 1.2, 1.0 LEVEL (run-to-run spread of 1.5x), head
 *    three runs at LEVEL: within the base's own spread, neither.
 *  - the same two bases, the head 3x: beyond every base sample: SLOWER.
 * (With base runs 2.3x apart, 0.6..1.4, compare still confirms the 3x head
 * but detect stores it only as detected: its sides of fewer than 3 points
 * are each judged as one run of the pooled samples, so the base's spread
 * reads as load.)
 */
static void test_noisy_base(void **state)
{
	static const double spread[3] = {0.8, 1.2, 1.0};
	static const struct noisy sc[] = {
	    {"loaded base, head same", 0.4, NULL, 1, 1.0, false},
	    {"loaded base, 3 runs, head same", 0.4, NULL, 3, 1.0, false},
	    {"spread base, head same", 0.0, spread, 3, 1.0, false},
	    {"loaded base, head 3x", 0.4, NULL, 1, 3.0, true},
	    {"spread base, head 3x", 0.0, spread, 3, 3.0, true},
	};

	(void)state;
	for (size_t k = 0; k < sizeof(sc) / sizeof(sc[0]); k++) {
		struct xo_perf_compare_opts cmp = {.threshold = 0.05, .alpha = 0.002};
		struct xo_perf_compare_opts cont = cmp, bis = cmp;
		const char *w[3], *names[3] = {"compare", "continuous", "bisect"};
		struct xo_perfdb *db;
		char name[64], why[512], *text = NULL;
		double ratio;

		cont.looks = 1;
		bis.run_min = true;
		rng_state = 200 + k;
		snprintf(name, sizeof(name), "noisy%zu.sqlite", k);
		db = fixture_open(name);
		for (size_t r = 0; r < sc[k].runs; r++) {
			double lv = LEVEL * (sc[k].levels ? sc[k].levels[r] : 1.0);

			put_run(db, SHA_P, "", lv, 20, sc[k].base_hit, false, true);
			put_run(db, SHA_A, SHA_P, lv, 20, sc[k].base_hit, false, true);
		}
		for (size_t r = 0; r < sc[k].runs; r++)
			put_run(db, SHA_B, SHA_A, sc[k].head * LEVEL, 20, 0.0, false, true);
		w[0] = tally_word(db, &cmp, why, sizeof(why));
		w[1] = tally_word(db, &cont, why, sizeof(why));
		w[2] = tally_word(db, &bis, why, sizeof(why));
		for (int i = 0; i < 3; i++) {
			bool called = !strcmp(w[i], "SLOWER") || !strcmp(w[i], "FASTER");

			if (sc[k].slower ? strcmp(w[i], "SLOWER") != 0 : called)
				fail_msg("%s: %s says %s\n%s", sc[k].what, names[i], w[i], why);
		}
		/* UNKNOWN says why */
		if (!strcmp(w[0], "UNKNOWN") && !strchr(why, '['))
			fail_msg("%s: UNKNOWN without its reason: %s", sc[k].what, why);
		ratio = detect_ratio(db, SHA_B, "confirmed", &text);
		if (sc[k].slower ? ratio < 2.0 : ratio != 0.0)
			fail_msg("%s: detect's confirmed regression at B: ratio %g\n%s", sc[k].what,
			         ratio, text);
		free(text);
		xo_perfdb_close(db);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_select_compare), cmocka_unit_test(test_select_detect),
	    cmocka_unit_test(test_select_advise),  cmocka_unit_test(test_select_report),
	    cmocka_unit_test(test_select_order),   cmocka_unit_test(test_noisy_base),
	};

	return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
