/*
 * test_perf_versions.c - a code version that cannot be known never lowers an
 * alarm. "Unchanged code" (compare, and through it continuous and bisect) and
 * detect's lowering of a step to "detected" may only follow from two versions
 * that are both known and equal; an xo without its xo.versions manifest
 * records XO_PERF_VERSION_UNKNOWN, and runs recorded before versions were kept
 * hold "". Synthetic stores, a +40% slowdown whose answer is known.
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

#define SHA_A "aaaa000000000000000000000000000000000001"
#define SHA_B "bbbb000000000000000000000000000000000002"

/* A run at sha of one cpu benchmark: 15 samples of level*(1 + noise N(0,1)). */
static int64_t record_noisy(struct xo_perfdb *db, const char *sha, int64_t date,
                            const char *name, const char *version, double level, double noise)
{
	struct xo_perf_commit c = {0};
	struct xo_perf_testbed t = {0};
	struct xo_perf_result r = {0};
	struct xo_perf_sample s[15];
	int64_t run;

	snprintf(c.sha, sizeof(c.sha), "%s", sha);
	snprintf(c.subject, sizeof(c.subject), "commit %s", sha);
	c.date = date;
	snprintf(t.hostname, sizeof(t.hostname), "testhost");
	snprintf(t.cpu_model, sizeof(t.cpu_model), "Test CPU");
	t.cores = 2;
	snprintf(r.b.name, sizeof(r.b.name), "%s", name);
	snprintf(r.b.kind, sizeof(r.b.kind), "op");
	snprintf(r.b.device, sizeof(r.b.device), "cpu");
	snprintf(r.b.version, sizeof(r.b.version), "%s", version);
	r.reps = 1;
	r.n = 15;
	r.samples = s;
	memset(s, 0, sizeof(s));
	for (size_t i = 0; i < 15; i++)
		s[i].wall_s = level * fmax(0.05, 1.0 + noise * gauss());
	assert_int_equal(xo_perfdb_run_write(db, &c, &t, "record", &r, 1, &run), XO_OK);
	assert_int_equal(
	    xo_sql_exec(xo_perfdb_sql(db), "UPDATE runs SET others_cpu = 0"), XO_SQL_OK);
	return run;
}

static int64_t record(struct xo_perfdb *db, const char *sha, int64_t date, const char *name,
                      const char *version, double level)
{
	return record_noisy(db, sha, date, name, version, level, 0.01);
}

static void test_version_helpers(void **state)
{
	(void)state;
	assert_false(xo_perf_version_known(""));
	assert_false(xo_perf_version_known(NULL));
	assert_false(xo_perf_version_known(XO_PERF_VERSION_UNKNOWN));
	assert_true(xo_perf_version_known("0123456789abcdef"));
	assert_false(xo_perf_same_code(XO_PERF_VERSION_UNKNOWN, XO_PERF_VERSION_UNKNOWN));
	assert_false(xo_perf_same_code("", ""));
	assert_false(xo_perf_same_code("0123456789abcdef", XO_PERF_VERSION_UNKNOWN));
	assert_false(xo_perf_same_code("0123456789abcdef", "0123456789abcdee"));
	assert_true(xo_perf_same_code("0123456789abcdef", "0123456789abcdef"));
}

/* compare of run:1 and run:2 on a store whose benchmark has version vb at the
 * base and vh at the head, level 1 ms then head_level, with noise: the verdict
 * word of its line. */
static void compare_word2(const char *store, const char *vb, const char *vh, double head_level,
                          double noise, char *word, size_t n)
{
	static const char *const words[] = {"SLOWER", "unchanged code", "UNKNOWN", "SAME"};
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	char path[512], *buf = NULL, *line, *eol;
	size_t len = 0;
	bool failed = false;
	FILE *f;

	fixture_store(store, path, sizeof(path));
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 26;
	record_noisy(db, SHA_A, 1000, "op/relu/fwd/x/cpu", vb, 1e-3, noise);
	record_noisy(db, SHA_B, 2000, "op/relu/fwd/x/cpu", vh, head_level, noise);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(xo_perf_compare(db, "run:1", "run:2", &o, f, &failed), XO_OK);
	fclose(f);
	line = strstr(buf, "op/relu/fwd/x/cpu");
	assert_non_null(line);
	eol = strchr(line, '\n');
	word[0] = '\0';
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]) && !word[0]; i++)
		if (strstr(line, words[i]) && (!eol || strstr(line, words[i]) < eol))
			snprintf(word, n, "%s%s", words[i], i == 0 && !failed ? " (but exit 0)" : "");
	if (!word[0])
		fail_msg("no verdict for versions '%s' '%s':\n%s", vb, vh, buf);
	free(buf);
	xo_perfdb_close(db);
}

static void compare_word(const char *store, const char *v, char *word, size_t n)
{
	compare_word2(store, v, v, 1.4e-3, 0.01, word, n);
}

/* The same +40% is lowered when the known versions are equal, and stands as
 * SLOWER when they are unknown on both sides (which once compared equal). */
static void test_compare_unknown_never_lowers(void **state)
{
	char w[64];

	(void)state;
	compare_word("known.sqlite", "0123456789abcdef", w, sizeof(w));
	assert_string_equal(w, "unchanged code");
	compare_word("unknown.sqlite", XO_PERF_VERSION_UNKNOWN, w, sizeof(w));
	assert_string_equal(w, "SLOWER");
	compare_word("empty.sqlite", "", w, sizeof(w));
	assert_string_equal(w, "SLOWER");
}

/* Same known version, samples too noisy to call (30% noise, no change: not
 * significant, the interval wider than -+5%): lowered as unchanged code, not
 * left UNKNOWN (bisect skipped a docs-only commit on exactly that); with
 * versions that differ, or are unknown, it stays UNKNOWN. */
static void test_compare_same_code_unclear_is_lowered(void **state)
{
	char w[64];

	(void)state;
	compare_word2("unclear1.sqlite", "0123456789abcdef", "0123456789abcdee", 1e-3, 0.3, w,
	              sizeof(w));
	assert_string_equal(w, "UNKNOWN");
	compare_word2("unclear2.sqlite", "0123456789abcdef", "0123456789abcdef", 1e-3, 0.3, w,
	              sizeof(w));
	assert_string_equal(w, "unchanged code");
	compare_word2("unclear3.sqlite", XO_PERF_VERSION_UNKNOWN, XO_PERF_VERSION_UNKNOWN, 1e-3,
	              0.3, w, sizeof(w));
	assert_string_equal(w, "UNKNOWN");
}

/* detect: a +50% step at commit 4 of 6 in a series whose versions are all
 * unknown stays "confirmed"; the same with one known version is lowered. */
static void detect_state(const char *store, const char *v, char *out, size_t n)
{
	struct xo_perfdb *db;
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002};
	char path[512], sha[48], *buf = NULL, *line;
	size_t len = 0;
	bool failed = false;
	FILE *f;

	fixture_store(store, path, sizeof(path));
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	rng_state = 27;
	for (int c = 1; c <= 6; c++) {
		snprintf(sha, sizeof(sha), "%040d", c);
		record(db, sha, 1000 * c, "op/relu/fwd/x/cpu", v, c >= 4 ? 1.5e-3 : 1e-3);
	}
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(xo_perf_detect(db, &o, f, &failed), XO_OK);
	fclose(f);
	line = strstr(buf, "op/relu/fwd/x/cpu");
	if (!line)
		fail_msg("no step found for version '%s':\n%s", v, buf);
	snprintf(out, n, "%.9s", line - 23);
	free(buf);
	xo_perfdb_close(db);
}

static void test_detect_unknown_never_lowers(void **state)
{
	char s[16];

	(void)state;
	detect_state("dknown.sqlite", "0123456789abcdef", s, sizeof(s));
	assert_string_equal(s, "detected ");
	detect_state("dunknown.sqlite", XO_PERF_VERSION_UNKNOWN, s, sizeof(s));
	assert_string_equal(s, "confirmed");
	detect_state("dempty.sqlite", "", s, sizeof(s));
	assert_string_equal(s, "confirmed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_version_helpers),
	    cmocka_unit_test(test_compare_unknown_never_lowers),
	    cmocka_unit_test(test_compare_same_code_unclear_is_lowered),
	    cmocka_unit_test(test_detect_unknown_never_lowers),
	};

	return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
