/*
 * test_perf_workflow.c - the everyday regression loop: compare by
 * commit pools the commit's own record runs and keeps peer imports apart,
 * any git revision names a commit, verdicts on code that did not change are
 * lowered and ref/peers never raise the alarm, Pinpoint's rule for more
 * rounds holds, and --json output parses. Synthetic stores: the statistics are
 * exercised on data whose answer is known.
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
#include "perf_fixture.h"

/* One benchmark of a synthetic run. */
struct fake {
	const char *name, *device, *version;
	double level;
};

/* A run at commit sha with n samples of level*(1 + 1% N(0,1)) per benchmark. */
static int64_t record(struct xo_perfdb *db, const char *sha, int64_t date, const struct fake *fk,
                      size_t nres, const char *note)
{
	struct xo_perf_commit c = {0};
	struct xo_perf_testbed t = {0};
	struct xo_perf_result *r = calloc(nres, sizeof(*r));
	int64_t run;
	const size_t n = 15;

	assert_non_null(r);
	snprintf(c.sha, sizeof(c.sha), "%s", sha);
	snprintf(c.subject, sizeof(c.subject), "commit %s", sha);
	c.date = date;
	snprintf(t.hostname, sizeof(t.hostname), "testhost");
	snprintf(t.cpu_model, sizeof(t.cpu_model), "Test CPU");
	t.cores = 2;
	for (size_t k = 0; k < nres; k++) {
		snprintf(r[k].b.name, sizeof(r[k].b.name), "%s", fk[k].name);
		snprintf(r[k].b.kind, sizeof(r[k].b.kind), "op");
		snprintf(r[k].b.device, sizeof(r[k].b.device), "%s", fk[k].device);
		snprintf(r[k].b.version, sizeof(r[k].b.version), "%s", fk[k].version);
		r[k].reps = 1;
		r[k].n = n;
		r[k].samples = calloc(n, sizeof(*r[k].samples));
		assert_non_null(r[k].samples);
		for (size_t i = 0; i < n; i++)
			r[k].samples[i].wall_s = fk[k].level * (1.0 + 0.01 * gauss());
	}
	assert_int_equal(xo_perfdb_run_write(db, &c, &t, note, r, nres, &run), XO_OK);
	for (size_t k = 0; k < nres; k++)
		free(r[k].samples);
	free(r);
	return run;
}

static void set_others(struct xo_perfdb *db, int64_t run, double cores)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "UPDATE runs SET others_cpu = %g WHERE id = %lld", cores,
	         (long long)run);
	assert_int_equal(xo_sql_exec(xo_perfdb_sql(db), sql), XO_SQL_OK);
}

/* compare into a string (caller frees). */
static char *compare_text(struct xo_perfdb *db, const char *base, const char *head,
                          const struct xo_perf_compare_opts *o, bool *failed, enum xo_status *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*st = xo_perf_compare(db, base, head, o, f, failed);
	fclose(f);
	return buf;
}

static void open_db(const char *name, struct xo_perfdb **db)
{
	char path[512];

	fixture_store(name, path, sizeof(path));
	assert_int_equal(xo_perfdb_open(path, db), XO_OK);
}

#define SHA_A "aaaa000000000000000000000000000000000001"
#define SHA_B "bbbb000000000000000000000000000000000002"

/*
 * Compare by commit: a commit holds a record run and then a peer import (the
 * nightly's order). Compare by commit must use the record runs (here two,
 * pooled), not the latest run (the import), find the +77% predict regression,
 * name the runs it used, and show the peer in its own section. Taking the
 * latest run as the head would compare the import: "0 slower".
 */
static void test_compare_by_commit_pools_record_runs(void **state)
{
	(void)state;
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	const struct fake base[] = {{"model/seed/predict/b32/cpu", "cpu", "v1", 1e-3},
	                            {"op/relu/fwd/x/cpu", "cpu", "v1", 2e-4}};
	const struct fake head[] = {{"model/seed/predict/b32/cpu", "cpu", "v2", 1.77e-3},
	                            {"op/relu/fwd/x/cpu", "cpu", "v2", 2e-4}};
	const struct fake peer[] = {
	    {"model/seed/predict/b32/pytorch-cpu", "pytorch-cpu", "", 5e-3}};
	bool failed = false;
	enum xo_status st;
	char *text;

	open_db("pool.sqlite", &db);
	rng_state = 11;
	record(db, SHA_A, 1000, base, 2, "record");
	record(db, SHA_A, 1000, peer, 1, "import --peer pytorch-cpu");
	record(db, SHA_B, 2000, head, 2, "record");
	record(db, SHA_B, 2000, head, 2, "record");
	record(db, SHA_B, 2000, peer, 1, "import --peer pytorch-cpu");
	text = compare_text(db, "aaaa", "bbbb", &o, &failed, &st);
	assert_int_equal(st, XO_OK);
	if (!failed || !strstr(text, "1 slower, 0 faster, 1 same"))
		fail_msg("the predict regression was missed:\n%s", text);
	/* the runs used are named: base run 1, head runs 3 and 4, peers apart */
	assert_non_null(
	    strstr(text, "record runs pooled: run:1; peer imports (own section): run:2"));
	assert_non_null(strstr(text, "record runs pooled: run:3 run:4; peer imports"));
	assert_non_null(strstr(text, "== peers"));
	assert_true(strstr(text, "== peers") < strstr(text, "model/seed/predict/b32/pytorch-cpu"));
	assert_true(strstr(text, "== backends under test") < strstr(text, "== peers"));
	free(text);
	/* HEAD defaults to the latest record run's commit, not to the import */
	text = compare_text(db, "aaaa", NULL, &o, &failed, &st);
	assert_int_equal(st, XO_OK);
	assert_true(failed);
	assert_non_null(strstr(text, "run:3 run:4"));
	free(text);
	xo_perfdb_close(db);
}

/*
 * Lowered verdicts: a slowdown of a benchmark whose kernel-source hash did not
 * change is lowered ("unchanged code", or "environment" when the other
 * processes' load differed between the sides); a ref or peer slowdown is
 * reported in its own section and never fails the comparison.
 */
static void test_compare_lowers_unchanged_code(void **state)
{
	(void)state;
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	const struct fake base[] = {{"op/conv1d/fwd/x/cpu", "cpu", "k1", 1e-3},
	                            {"op/relu/fwd/x/cpu", "cpu", "k1", 1e-3},
	                            {"op/relu/fwd/x/ref", "ref", "r1", 1e-3}};
	/* everything +40%; only conv1d's source changed */
	const struct fake head[] = {{"op/conv1d/fwd/x/cpu", "cpu", "k2", 1.4e-3},
	                            {"op/relu/fwd/x/cpu", "cpu", "k1", 1.4e-3},
	                            {"op/relu/fwd/x/ref", "ref", "r2", 1.4e-3}};
	const struct fake ref_only[] = {{"op/relu/fwd/x/ref", "ref", "r3", 3e-3}};
	bool failed = false;
	enum xo_status st;
	char *text, *line;
	int64_t hb;

	open_db("lower.sqlite", &db);
	rng_state = 12;
	record(db, SHA_A, 1000, base, 3, "record");
	hb = record(db, SHA_B, 2000, head, 3, "record");
	set_others(db, 1, 0.0);
	set_others(db, hb, 0.0);
	text = compare_text(db, "run:1", "run:2", &o, &failed, &st);
	assert_int_equal(st, XO_OK);
	assert_true(failed);
	line = strstr(text, "op/conv1d/fwd/x/cpu");
	assert_non_null(line);
	assert_non_null(strstr(line, "SLOWER"));
	line = strstr(text, "op/relu/fwd/x/cpu");
	assert_non_null(line);
	if (!strstr(line, "unchanged code") || strstr(line, "unchanged code") > strchr(line, '\n'))
		fail_msg("relu/cpu not lowered:\n%s", text);
	assert_non_null(strstr(text, "1 slower, 0 faster, 0 same, 1 lowered"));
	/* ref is in its own section, after the backends under test */
	assert_true(strstr(text, "== reference backend") < strstr(text, "op/relu/fwd/x/ref"));
	free(text);

	/* the same with the head run's machine busy: "environment" */
	set_others(db, hb, 1.0);
	text = compare_text(db, "run:1", "run:2", &o, &failed, &st);
	assert_int_equal(st, XO_OK);
	line = strstr(text, "op/relu/fwd/x/cpu");
	if (!strstr(line, "environment") || strstr(line, "environment") > strchr(line, '\n'))
		fail_msg("relu/cpu not marked environment:\n%s", text);
	assert_non_null(strstr(text, "warning: other work on the machine"));
	free(text);

	/* only ref slower: reported, no alarm */
	record(db, "cccc000000000000000000000000000000000003", 3000, ref_only, 1, "record");
	text = compare_text(db, "run:2", "run:3", &o, &failed, &st);
	assert_int_equal(st, XO_OK);
	assert_non_null(strstr(text, "ref: 1 slower"));
	if (failed)
		fail_msg("a ref slowdown raised the alarm:\n%s", text);
	free(text);
	xo_perfdb_close(db);
}

/* Several runs a side: a change must show in the run medians. Base runs at
 * 1.0 and 1.1 ms, head runs at 1.08 and 1.3 ms: the pooled medians differ by
 * ~13%, beyond the pooled base IQR/median (~9.5%), and the U test separates
 * them (U = 675 of 900, p ~ 1e-3; alpha 0.5 here so that only the run rule
 * decides), yet Welch's t on the 2 + 2 log run medians gives t = 1.2, p =
 * 0.39: not SLOWER (UNKNOWN). */
static void test_compare_runs_must_separate(void **state)
{
	(void)state;
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.5};
	const struct fake b1[] = {{"op/a/fwd/x/cpu", "cpu", "k1", 1.0e-3}};
	const struct fake b2[] = {{"op/a/fwd/x/cpu", "cpu", "k1", 1.1e-3}};
	const struct fake h1[] = {{"op/a/fwd/x/cpu", "cpu", "k2", 1.08e-3}};
	const struct fake h2[] = {{"op/a/fwd/x/cpu", "cpu", "k2", 1.3e-3}};
	bool failed = true;
	enum xo_status st;
	char *text;

	open_db("separate.sqlite", &db);
	rng_state = 13;
	record(db, SHA_A, 1000, b1, 1, "record");
	record(db, SHA_B, 2000, h1, 1, "record");
	record(db, SHA_A, 1000, b2, 1, "record");
	record(db, SHA_B, 2000, h2, 1, "record");
	text = compare_text(db, SHA_A, SHA_B, &o, &failed, &st);
	assert_int_equal(st, XO_OK);
	if (failed || !strstr(text, "[runs cannot show it: Welch p 0.39 on 2+2 run medians"))
		fail_msg("overlapping runs raised the alarm:\n%s", text);
	free(text);
	xo_perfdb_close(db);
}

/*
 * Several runs a side must show the change over the series compared: two
 * series, both +50% with changed source, runs wobbling by 3%. The rule before
 * (every head run beyond every base run, by a chance below 0.05 / m) could
 * not pass 3 rounds a side over 2 series (1/C(6,3) = 0.05 > 0.025); Welch's
 * t on the log run medians (t ~ 20 on ~3 degrees of freedom, p ~ 3e-4 <
 * 0.025) can: both SLOWER at 3 rounds and at 6. The family correction itself
 * is checked on synthetic runs (test_perfdb.c test_runs_rule_synthetic).
 */
static void test_compare_rounds_family(void **state)
{
	(void)state;
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = 0.10, .alpha = 0.002};
	static const double wobble[6] = {1.0, 1.05, 0.97, 1.02, 0.99, 1.03};
	bool failed = true;
	enum xo_status st;
	char *text;

	open_db("rounds.sqlite", &db);
	rng_state = 16;
	for (int r = 0; r < 6; r++) {
		const struct fake b[] = {{"op/a/fwd/x/cpu", "cpu", "k1", 1e-3 * wobble[r]},
		                         {"op/b/fwd/x/cpu", "cpu", "k1", 2e-3 * wobble[r]}};
		const struct fake h[] = {{"op/a/fwd/x/cpu", "cpu", "k2", 1.5e-3 * wobble[5 - r]},
		                         {"op/b/fwd/x/cpu", "cpu", "k2", 3e-3 * wobble[5 - r]}};

		record(db, SHA_A, 1000, b, 2, "record");
		record(db, SHA_B, 2000, h, 2, "record");
		if (r == 2) {
			text = compare_text(db, SHA_A, SHA_B, &o, &failed, &st);
			assert_int_equal(st, XO_OK);
			if (!failed || !strstr(text, "2 slower, 0 faster, 0 same"))
				fail_msg("3 clean rounds missed the change:\n%s", text);
			free(text);
			/* the same data looked at 1000 times (continuous's extra
			 * rounds): the level 0.05 / (2 x 1000) is beyond what 3 + 3
			 * runs show */
			o.looks = 1000;
			text = compare_text(db, SHA_A, SHA_B, &o, &failed, &st);
			assert_int_equal(st, XO_OK);
			if (failed || !strstr(text, "over 2000 series x looks"))
				fail_msg("1000 looks still confirmed:\n%s", text);
			free(text);
			o.looks = 0;
		}
	}
	text = compare_text(db, SHA_A, SHA_B, &o, &failed, &st);
	assert_int_equal(st, XO_OK);
	if (!failed || !strstr(text, "2 slower, 0 faster, 0 same"))
		fail_msg("6 rounds missed the change:\n%s", text);
	free(text);
	xo_perfdb_close(db);
}

/*
 * Lowered verdicts in detect: a step in a series whose kernel source did not
 * change is kept "detected", never "confirmed"; ref's step is listed apart and
 * is no alarm; runs under load are flagged and warned about; --json parses. Six
 * commits, a +50% step at commit 4 in three series (1% noise, 15 samples: the U
 * test on 45 vs 45 samples gives p ~ 1e-16).
 */
static void test_detect_lowers_and_separates(void **state)
{
	(void)state;
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	bool failed = false;
	char *buf = NULL, sha[48], *line;
	size_t len = 0;
	FILE *f;
	json_t *root;
	json_error_t err;

	open_db("detect.sqlite", &db);
	rng_state = 17;
	for (int c = 1; c <= 6; c++) {
		double k = c >= 4 ? 1.5 : 1.0;
		const struct fake fk[] = {
		    {"op/changed/fwd/x/cpu", "cpu", c >= 4 ? "k2" : "k1", 1e-3 * k},
		    {"op/untouched/fwd/x/cpu", "cpu", "u1", 1e-3 * k},
		    {"op/oracle/fwd/x/ref", "ref", c >= 4 ? "r2" : "r1", 1e-3 * k}};
		int64_t run;

		snprintf(sha, sizeof(sha), "%040d", c);
		run = record(db, sha, 1000 * c, fk, 3, "record");
		set_others(db, run, c == 4 ? 1.5 : 0.0);
	}
	f = open_memstream(&buf, &len);
	assert_int_equal(xo_perf_detect(db, &o, f, &failed), XO_OK);
	fclose(f);
	assert_true(failed);
	line = strstr(buf, "op/changed/fwd/x/cpu");
	assert_non_null(line);
	if (strncmp(line - 23, "confirmed  regression", 21))
		fail_msg("changed/cpu not a confirmed regression:\n%s", buf);
	line = strstr(buf, "op/untouched/fwd/x/cpu");
	if (!line || strncmp(line - 23, "detected   regression", 21) ||
	    !strstr(line, "[kernel source unchanged]"))
		fail_msg("untouched/cpu not lowered:\n%s", buf);
	line = strstr(buf, "op/oracle/fwd/x/ref");
	if (!line || !strstr(line, "[ref: not an alarm]") ||
	    strstr(buf, "op/oracle") < strstr(buf, "op/untouched"))
		fail_msg("ref not apart:\n%s", buf);
	assert_non_null(strstr(buf, "[load: other processes used 1.50 cores]"));
	assert_non_null(strstr(buf, "warning: 1 confirmed changes sit on runs"));
	assert_non_null(strstr(buf, "in the table: 1 confirmed regressions, 0 confirmed"));
	free(buf);
	buf = NULL;
	o.json = true;
	f = open_memstream(&buf, &len);
	assert_int_equal(xo_perf_detect(db, &o, f, &failed), XO_OK);
	fclose(f);
	root = json_loads(buf, 0, &err);
	if (!root)
		fail_msg("not JSON (%s):\n%s", err.text, buf);
	assert_true(json_is_true(json_object_get(root, "regression")));
	assert_true(json_is_true(json_object_get(root, "load_warning")));
	assert_int_equal(json_array_size(json_object_get(root, "changes")), 3);
	json_decref(root);
	free(buf);
	xo_perfdb_close(db);
}

/*
 * The loop check's second run: on a loaded machine the base's six run medians
 * spread 4x (0.3 .. 1.2 ms), the head's six sit at 3-4 ms. The single-pair
 * run-to-run bar of that history is ~5000%, yet every head run is beyond
 * every base run (chance 1/924): SLOWER. Before, the bar hid it.
 */
static void test_compare_rounds_noisy_base(void **state)
{
	(void)state;
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = 0.10, .alpha = 0.002};
	static const double bl[6] = {1.0, 0.3, 1.2, 0.5, 0.9, 0.35};
	static const double hl[6] = {3.0, 3.5, 4.0, 3.2, 3.8, 3.1};
	bool failed = false;
	enum xo_status st;
	char *text;

	open_db("noisybase.sqlite", &db);
	rng_state = 18;
	for (int r = 0; r < 6; r++) {
		const struct fake b[] = {{"op/a/fwd/x/cpu", "cpu", "k1", 1e-3 * bl[r]}};
		const struct fake h[] = {{"op/a/fwd/x/cpu", "cpu", "k2", 1e-3 * hl[r]}};

		record(db, SHA_A, 1000, b, 1, "record");
		record(db, SHA_B, 2000, h, 1, "record");
	}
	text = compare_text(db, SHA_A, SHA_B, &o, &failed, &st);
	assert_int_equal(st, XO_OK);
	if (!failed || !strstr(text, "1 slower, 0 faster, 0 same"))
		fail_msg("a separated slowdown over a noisy base was missed:\n%s", text);
	free(text);
	xo_perfdb_close(db);
}

/* git in dir, output captured (NULL on failure). */
static char *git(const char *dir, const char *a, const char *b, const char *c, const char *d)
{
	const char *argv[] = {"git", "-C", dir, a, b, c, d, NULL};
	struct xo_proc p = {.argv = argv, .capture = true};
	char *out = NULL;
	int code = 1;

	if (xo_proc_run(&p, &code, &out, NULL) || code) {
		free(out);
		return NULL;
	}
	out[strcspn(out, "\n")] = '\0';
	return out;
}

/*
 * Git revisions: HEAD~1 and HEAD are accepted (git rev-parse in the source
 * tree); a revision git does not know, or one that looks like an option, is bad
 * input; a known commit without runs says so.
 */
static void test_compare_git_revisions(void **state)
{
	(void)state;
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	char repo[512], *s1, *s2, *s3;
	const struct fake f1[] = {{"op/a/fwd/x/cpu", "cpu", "k1", 1e-3}};
	const struct fake f2[] = {{"op/a/fwd/x/cpu", "cpu", "k2", 2e-3}};
	bool failed = false;
	enum xo_status st;
	char *text;

	if (!xo_proc_found("git"))
		skip();
	snprintf(repo, sizeof(repo), "%s/repo", tmpdir);
	{
		const char *argv[] = {"git", "init", "-q", repo, NULL};
		struct xo_proc p = {.argv = argv};
		int code = 1;

		assert_int_equal(xo_proc_run(&p, &code, NULL, NULL), XO_OK);
		assert_int_equal(code, 0);
	}
	for (int i = 0; i < 3; i++) {
		const char *argv[] = {"git",
		                      "-C",
		                      repo,
		                      "-c",
		                      "user.name=t",
		                      "-c",
		                      "user.email=t@t",
		                      "commit",
		                      "-q",
		                      "--allow-empty",
		                      "-m",
		                      "c",
		                      NULL};
		struct xo_proc p = {.argv = argv};
		int code = 1;

		assert_int_equal(xo_proc_run(&p, &code, NULL, NULL), XO_OK);
		assert_int_equal(code, 0);
	}
	s1 = git(repo, "rev-parse", "HEAD~2", NULL, NULL);
	s2 = git(repo, "rev-parse", "HEAD~1", NULL, NULL);
	s3 = git(repo, "rev-parse", "HEAD", NULL, NULL);
	assert_non_null(s1);
	assert_non_null(s2);
	assert_non_null(s3);
	setenv("XO_SOURCE_DIR", repo, 1);
	open_db("git.sqlite", &db);
	rng_state = 14;
	record(db, s2, 1000, f1, 1, "record");
	record(db, s3, 2000, f2, 1, "record");
	text = compare_text(db, "HEAD~1", "HEAD", &o, &failed, &st);
	if (st != XO_OK)
		fail_msg("HEAD~1 HEAD refused: %s", xo_last_error());
	assert_true(failed);
	free(text);
	text = compare_text(db, "HEAD~2", "HEAD", &o, &failed, &st);
	assert_int_equal(st, XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "no complete run"));
	free(text);
	text = compare_text(db, "no-such-branch", "HEAD", &o, &failed, &st);
	assert_int_equal(st, XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "no-such-branch"));
	free(text);
	text = compare_text(db, "--output=/tmp/x", "HEAD", &o, &failed, &st);
	assert_int_equal(st, XO_EINVAL);
	free(text);
	unsetenv("XO_SOURCE_DIR");
	free(s1);
	free(s2);
	free(s3);
	xo_perfdb_close(db);
}

/* ---- bisect: the search on synthetic histories ---------------- */

/* A planted history: commits >= first are bad, those in skip (a bit mask)
 * are skipped, abort_at (when not 0) aborts; every call is counted. */
struct planted {
	size_t first;
	unsigned skip;
	size_t abort_at;
	size_t calls;
	unsigned asked; /* bit mask of the commits asked */
};

static enum xo_bisect_verdict planted_verdict(void *p, size_t i)
{
	struct planted *h = p;

	h->calls++;
	if (h->asked & (1u << i))
		fail_msg("commit %zu asked twice", i);
	h->asked |= 1u << i;
	if (i == 0)
		fail_msg("the good commit was tested");
	if (h->abort_at && i == h->abort_at)
		return XO_BISECT_ABORT;
	if (h->skip & (1u << i))
		return XO_BISECT_SKIP;
	return i >= h->first ? XO_BISECT_BAD : XO_BISECT_GOOD;
}

/*
 * Every history of up to 9 commits with every planted first bad commit, no
 * skips: the answer is that commit, in at most 1 + ceil(log2 n) tests (the
 * bad end, then halving). first = 1 is "all bad", first = n + 1 (the bad end
 * good) "all good": no slowdown.
 */
static void test_bisect_search_planted(void **state)
{
	(void)state;
	enum xo_bisect_verdict seen[16];
	struct xo_bisect_result r;

	for (size_t n = 1; n <= 9; n++)
		for (size_t f = 1; f <= n + 1; f++) {
			struct planted h = {.first = f};
			size_t bound = 1;

			while ((1u << (bound - 1)) < n)
				bound++;
			assert_true(xo_perf_bisect_search(n, planted_verdict, &h, seen, &r));
			if (f == n + 1) {
				assert_int_equal(r.outcome, XO_BISECT_NONE);
				assert_int_equal(h.calls, 1);
				continue;
			}
			if (r.outcome != XO_BISECT_FOUND || r.first != f)
				fail_msg("n %zu, first bad %zu: outcome %d first %zu", n, f, r.outcome,
				         r.first);
			if (h.calls > bound || r.tests != h.calls)
				fail_msg("n %zu, first bad %zu: %zu tests, bound %zu", n, f, h.calls,
				         bound);
			assert_int_equal(seen[f], XO_BISECT_BAD);
			if (f > 1 && seen[f - 1] != XO_BISECT_GOOD)
				fail_msg("n %zu: the commit before the answer %zu was not seen good", n,
				         f);
		}
	/* no commit between good and bad: nothing to test */
	{
		struct planted h = {.first = 1};

		assert_true(xo_perf_bisect_search(0, planted_verdict, &h, seen, &r));
		assert_int_equal(r.outcome, XO_BISECT_NONE);
		assert_int_equal(h.calls, 0);
	}
}

/*
 * Skips, exhaustively for 7 commits: every planted first bad commit with
 * every set of skipped commits. The bad end skipped: undecided. Else the
 * answer is the planted commit, or a range lo+1..hi (lo good, hi bad) that
 * holds it and whose inner commits were all skipped; never a wrong commit. An abort stops the search at once.
 */
static void test_bisect_search_skips(void **state)
{
	(void)state;
	const size_t n = 7;
	enum xo_bisect_verdict seen[16];
	struct xo_bisect_result r;
	size_t found = 0, ranges = 0;

	for (size_t f = 1; f <= n; f++)
		for (unsigned skip = 0; skip < (1u << (n + 1)); skip += 2) { /* bit 0: good */
			struct planted h = {.first = f, .skip = skip};

			assert_true(xo_perf_bisect_search(n, planted_verdict, &h, seen, &r));
			if (skip & (1u << n)) {
				assert_int_equal(r.outcome, XO_BISECT_UNDECIDED);
				continue;
			}
			assert_true(r.lo < f && f <= r.hi);
			assert_true(r.hi == n || seen[r.hi] == XO_BISECT_BAD);
			assert_true(r.lo == 0 || seen[r.lo] == XO_BISECT_GOOD);
			for (size_t i = r.lo + 1; i < r.hi; i++)
				assert_int_equal(seen[i], XO_BISECT_SKIP);
			if (r.outcome == XO_BISECT_FOUND) {
				assert_int_equal(r.first, f);
				found++;
			} else {
				assert_int_equal(r.outcome, XO_BISECT_RANGE);
				/* ambiguous: at least one skipped commit inside */
				assert_true(r.hi > r.lo + 1);
				ranges++;
			}
		}
	/* both kinds of answer occurred: the checks above were exercised */
	assert_true(found > 0 && ranges > 0);
	/* one example by hand: first bad 3 of 5, commit 2 skipped: 1 is good,
	 * 3 bad, 2 unknown: "2 or 3" */
	{
		struct planted h = {.first = 3, .skip = 1u << 2};

		assert_true(xo_perf_bisect_search(5, planted_verdict, &h, seen, &r));
		assert_int_equal(r.outcome, XO_BISECT_RANGE);
		assert_int_equal(r.lo, 1);
		assert_int_equal(r.hi, 3);
	}
	/* skip beside the answer does not hide it: first bad 3, 4 skipped */
	{
		struct planted h = {.first = 3, .skip = 1u << 4};

		assert_true(xo_perf_bisect_search(5, planted_verdict, &h, seen, &r));
		assert_int_equal(r.outcome, XO_BISECT_FOUND);
		assert_int_equal(r.first, 3);
	}
	{
		struct planted h = {.first = 3, .abort_at = 2};

		assert_false(xo_perf_bisect_search(5, planted_verdict, &h, seen, &r));
	}
}

/* Pinpoint's rule for more rounds (continuous, bisect). */
static void test_more_rounds_rule(void **state)
{
	(void)state;
	struct xo_perf_tally t = {.unknown = 1, .unknown_up = 1};

	assert_true(xo_perf_more_rounds(&t, 6, 12, 60.0, 0.0, false));
	assert_false(xo_perf_more_rounds(&t, 12, 12, 60.0, 0.0, false)); /* rounds spent */
	/* 6 rounds in 60 s: one more costs ~10 s; a 65 s budget has no room */
	assert_false(xo_perf_more_rounds(&t, 6, 12, 60.0, 65.0, false));
	assert_true(xo_perf_more_rounds(&t, 6, 12, 60.0, 70.0, false));
	t.slower = 1;
	assert_true(xo_perf_more_rounds(&t, 6, 12, 60.0, 0.0, false));
	assert_false(xo_perf_more_rounds(&t, 6, 12, 60.0, 0.0, true)); /* bisect: decided */
	t.unknown = 0;
	assert_false(xo_perf_more_rounds(&t, 6, 12, 60.0, 0.0, false)); /* nothing open */
	/* bisect asks "slower or not": an UNKNOWN whose interval reaches only
	 * down (maybe faster) needs no more rounds there; continuous still asks */
	t.slower = 0;
	t.unknown = 1;
	t.unknown_up = 0;
	assert_false(xo_perf_more_rounds(&t, 6, 12, 60.0, 0.0, true));
	assert_true(xo_perf_more_rounds(&t, 6, 12, 60.0, 0.0, false));
	t.unknown_up = 1;
	assert_true(xo_perf_more_rounds(&t, 6, 12, 60.0, 0.0, true));
	/* bisect's threshold: half the hunted change on the log scale: 2x ->
	 * sqrt 2 - 1; +21% -> +10% (1.1^2 = 1.21); never below the user's */
	assert_true(fabs(xo_perf_bisect_threshold(1.0, 0.1) - (sqrt(2.0) - 1.0)) < 1e-15);
	assert_true(fabs(xo_perf_bisect_threshold(0.21, 0.05) - 0.1) < 1e-15);
	assert_true(xo_perf_bisect_threshold(0.21, 0.25) == 0.25);
	assert_true(xo_perf_bisect_threshold(-0.5, 0.1) == 0.1);
	/*
	 * What bisect hunts is the least change --bad's 95% interval allows: a
	 * planted 2x measured +300% (busy runs at --bad) with the interval from
	 * +90% is hunted at sqrt(1.9) - 1 = 37.8%, not at sqrt(4) - 1 = 100%,
	 * where a commit with the same 2x (interval 1.9..2.1x) would be SAME
	 * within -+100% and called good: a false step (nightly check, run 1).
	 */
	{
		struct xo_perf_tally bad = {.slower = 1, .change = 3.0, .change_lo = 0.9};

		assert_true(fabs(xo_perf_bisect_hunt(&bad, 0.25) - (sqrt(1.9) - 1.0)) < 1e-15);
		assert_true(xo_perf_bisect_hunt(&bad, 0.25) < 0.9); /* the 2x stays SLOWER */
		bad.change_lo = 0.2; /* the interval allows less than the user's 25% x 2 */
		assert_true(xo_perf_bisect_hunt(&bad, 0.25) == 0.25);
		bad.change_lo = NAN; /* unbounded (fewer than 4 runs a side) */
		assert_true(xo_perf_bisect_hunt(&bad, 0.25) == 0.25);
		bad.change_lo = 0.9;
		bad.slower = 0; /* nothing confirmed: nothing hunted */
		assert_true(xo_perf_bisect_hunt(&bad, 0.25) == 0.25);
	}
}

/*
 * Recording a built revision points XO_SOURCE_DIR at its clone for the child
 * and must give the caller's value back: it was unset, so bisect's next
 * commit was cloned from the built-in tree, which lacks the commits (every
 * one "did not build", exit 128). A fake binary (true) records nothing; the
 * comparison afterwards fails, which is beside the point.
 */
static void test_rounds_keep_source_dir(void **state)
{
	(void)state;
	struct xo_perf_rev rev[2];
	struct xo_perf_continuous_opts o = {0};
	struct xo_perf_tally t;
	char db[512];
	int done = 0;
	int64_t after;

	memset(rev, 0, sizeof(rev));
	for (int k = 0; k < 2; k++) {
		snprintf(rev[k].sha, sizeof(rev[k].sha), "%s", k ? SHA_B : SHA_A);
		snprintf(rev[k].dir, sizeof(rev[k].dir), "/nonexistent/clone%d", k);
		snprintf(rev[k].xo, sizeof(rev[k].xo), "true");
	}
	snprintf(db, sizeof(db), "%s/rounds-env.sqlite", tmpdir);
	unlink(db);
	o.db_path = db;
	o.rounds = 1;
	o.cmp = (struct xo_perf_compare_opts){.threshold = 0.05, .alpha = 0.002};
	setenv("XO_SOURCE_DIR", "/the/callers/tree", 1);
	(void)xo_perf_ab_rounds(rev, &o, "/dev/null", true, stderr, &t, &done, &after);
	assert_int_equal(done, 1);
	assert_non_null(getenv("XO_SOURCE_DIR"));
	assert_string_equal(getenv("XO_SOURCE_DIR"), "/the/callers/tree");
	unsetenv("XO_SOURCE_DIR");
	(void)xo_perf_ab_rounds(rev, &o, "/dev/null", true, stderr, &t, &done, &after);
	assert_null(getenv("XO_SOURCE_DIR"));
}

/*
 * after_run (continuous, bisect): a commit pools only the runs of this
 * invocation's rounds. Commit A has 6 old runs, one of them 2x slow (a busy
 * moment), then 6 rounds of A and B alternate, B at 2x A. Pooling every run
 * of A, the slow old run overlapped B's runs and the old rule (every head run
 * beyond every base run) did not confirm it (what left bisect's planted 2x
 * UNKNOWN once good had piled up runs); Welch's t on the log run medians
 * confirms it either way (one busy run widens the spread, it does not veto),
 * and over the rounds alone the runs named are those of the rounds.
 */
static void test_compare_after_run(void **state)
{
	(void)state;
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	const struct fake a[] = {{"op/relu/fwd/x/cpu", "cpu", "v1", 1e-4}};
	const struct fake slow[] = {{"op/relu/fwd/x/cpu", "cpu", "v1", 2.2e-4}};
	const struct fake b[] = {{"op/relu/fwd/x/cpu", "cpu", "v2", 2e-4}};
	bool failed = false;
	enum xo_status st;
	char *text;

	open_db("after.sqlite", &db);
	rng_state = 31;
	for (int i = 0; i < 6; i++)
		record(db, SHA_A, 1000, i == 3 ? slow : a, 1, "record");
	for (int i = 0; i < 6; i++) {
		record(db, SHA_A, 1000, a, 1, "record");
		record(db, SHA_B, 2000, b, 1, "record");
	}
	text = compare_text(db, "aaaa", "bbbb", &o, &failed, &st);
	assert_int_equal(st, XO_OK);
	if (!failed || !strstr(text, "run:1 run:2 run:3 run:4 run:5 run:6 run:7"))
		fail_msg("pooling every run, one of them slow, should still confirm:\n%s", text);
	free(text);
	o.after_run = 6;
	text = compare_text(db, "aaaa", "bbbb", &o, &failed, &st);
	assert_int_equal(st, XO_OK);
	if (!failed || !strstr(text, "record runs pooled: run:7 run:9 run:11 run:13 run:15 run:17"))
		fail_msg("the rounds alone should show the slowdown:\n%s", text);
	free(text);
	xo_perfdb_close(db);
}

/* compare --json is one JSON object with the verdicts. */
static void test_compare_json(void **state)
{
	(void)state;
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002, .json = true};
	const struct fake f1[] = {{"op/a/fwd/x/cpu", "cpu", "k1", 1e-3}};
	const struct fake f2[] = {{"op/a/fwd/x/cpu", "cpu", "k2", 2e-3}};
	bool failed = false;
	enum xo_status st;
	json_error_t err;
	json_t *root, *r0;
	char *text;

	open_db("json.sqlite", &db);
	rng_state = 15;
	record(db, SHA_A, 1000, f1, 1, "record");
	record(db, SHA_B, 2000, f2, 1, "record");
	text = compare_text(db, "aaaa", "bbbb", &o, &failed, &st);
	assert_int_equal(st, XO_OK);
	root = json_loads(text, 0, &err);
	if (!root)
		fail_msg("not JSON (%s):\n%s", err.text, text);
	assert_true(json_is_true(json_object_get(root, "regression")));
	r0 = json_array_get(json_object_get(root, "results"), 0);
	assert_string_equal(json_string_value(json_object_get(r0, "verdict")), "SLOWER");
	assert_string_equal(json_string_value(json_object_get(r0, "section")), "test");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(root, "head"), "commit")), SHA_B);
	json_decref(root);
	free(text);
	xo_perfdb_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_compare_by_commit_pools_record_runs),
	    cmocka_unit_test(test_compare_lowers_unchanged_code),
	    cmocka_unit_test(test_compare_runs_must_separate),
	    cmocka_unit_test(test_compare_rounds_family),
	    cmocka_unit_test(test_compare_rounds_noisy_base),
	    cmocka_unit_test(test_detect_lowers_and_separates),
	    cmocka_unit_test(test_compare_git_revisions),
	    cmocka_unit_test(test_compare_json),
	    cmocka_unit_test(test_bisect_search_planted),
	    cmocka_unit_test(test_bisect_search_skips),
	    cmocka_unit_test(test_more_rounds_rule),
	    cmocka_unit_test(test_rounds_keep_source_dir),
	    cmocka_unit_test(test_compare_after_run),
	};

	return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
