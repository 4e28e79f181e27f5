/*
 * bisect.c - `xo perf bisect --good G --bad B`: the first
 * commit on B's first-parent line after G whose change against G is a
 * confirmed slowdown by compare's statistics. Each commit tested is built by
 * continuous.c (xo_perf_rev_build) and recorded in alternating rounds with
 * G (xo_perf_ab_rounds: more rounds while a benchmark is too close to call,
 * up to the budget); every run lands in the store. A commit that does not
 * build or stays UNKNOWN is skipped with its reason, as `git bisect skip`,
 * and the search goes on around it.
 *
 * The search (xo_perf_bisect_search) is a pure function of the number of
 * commits and a verdict callback, so the suites check it on synthetic
 * histories with planted answers.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "perfdb.h"
#include "jsonout.h"
#include "proc.h"

double xo_perf_bisect_threshold(double change, double threshold)
{
	double half = change > 0.0 ? expm1(0.5 * log1p(change)) : 0.0;

	return half > threshold ? half : threshold;
}

double xo_perf_bisect_hunt(const struct xo_perf_tally *bad, double threshold)
{
	if (!bad->slower || !isfinite(bad->change_lo) || !(bad->change_lo > 0.0))
		return threshold;
	return xo_perf_bisect_threshold(bad->change_lo, threshold);
}

const char *xo_perf_bisect_word(enum xo_bisect_verdict v)
{
	switch (v) {
	case XO_BISECT_GOOD:
		return "good";
	case XO_BISECT_BAD:
		return "bad";
	case XO_BISECT_SKIP:
		return "skip";
	default:
		return "untested";
	}
}

/*
 * Invariant: lo is good (0 at first, the --good revision), hi is bad (n once
 * it is confirmed). The next commit tested is the untested one in (lo, hi)
 * nearest the middle (the lower of two as near), so skips cost one step each
 * and the rest stays a binary search. When every commit in (lo, hi) is
 * skipped the answer is the range lo+1..hi.
 */
bool xo_perf_bisect_search(size_t n, xo_bisect_fn fn, void *ctx, enum xo_bisect_verdict *seen,
                           struct xo_bisect_result *r)
{
	size_t lo = 0, hi = n;
	enum xo_bisect_verdict v;

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i <= n; i++)
		seen[i] = XO_BISECT_UNTESTED;
	seen[0] = XO_BISECT_GOOD;
	if (!n) {
		r->outcome = XO_BISECT_NONE;
		return true;
	}
	/* the bad end first: without a confirmed slowdown there nothing is sought */
	r->tests++;
	if ((v = fn(ctx, n)) == XO_BISECT_ABORT)
		return false;
	seen[n] = v;
	if (v == XO_BISECT_GOOD) {
		r->outcome = XO_BISECT_NONE;
		return true;
	}
	if (v == XO_BISECT_SKIP) {
		r->outcome = XO_BISECT_UNDECIDED;
		r->lo = 0;
		r->hi = n;
		return true;
	}
	for (;;) {
		size_t mid = lo + (hi - lo) / 2, pick = 0;

		for (size_t d = 0; d <= hi - lo && !pick; d++) {
			if (mid >= lo + 1 + d && seen[mid - d] == XO_BISECT_UNTESTED)
				pick = mid - d;
			else if (mid + d < hi && mid + d > lo && seen[mid + d] == XO_BISECT_UNTESTED)
				pick = mid + d;
		}
		if (!pick)
			break;
		r->tests++;
		if ((v = fn(ctx, pick)) == XO_BISECT_ABORT)
			return false;
		seen[pick] = v;
		if (v == XO_BISECT_GOOD)
			lo = pick;
		else if (v == XO_BISECT_BAD)
			hi = pick;
	}
	r->lo = lo;
	r->hi = hi;
	r->first = hi;
	r->outcome = hi == lo + 1 ? XO_BISECT_FOUND : XO_BISECT_RANGE;
	return true;
}

/* ---- the command ----------------------------------------------------------------- */

struct bctx {
	struct xo_perf_continuous_opts *o;
	const char *root;
	FILE *msg;
	char (*sha)[48]; /* sha[0] good, sha[1..n] the commits, sha[n] bad */
	size_t n;
	struct xo_perf_rev *good, *rev; /* rev: scratch for the commit tested */
	char rlog[4200];
	char (*why)[256];    /* per commit: the reason of its verdict */
	int *rounds;         /* per commit: rounds recorded */
	struct xo_perf_tally *tally; /* per commit: the last comparison */
	enum xo_status st;   /* the error that aborted the search */
	bool keep;
};

static enum xo_bisect_verdict test_commit(void *p, size_t i)
{
	struct bctx *c = p;
	struct xo_perf_rev pair[2];
	struct xo_perf_tally *t = &c->tally[i];
	enum xo_status st;
	bool keep = false;
	int64_t after;

	fprintf(c->msg, "bisect: testing %.12s (%zu of %zu after good)\n", c->sha[i], i, c->n);
	if ((st = xo_perf_rev_build(c->sha[i], c->root, c->sha[i], c->o, c->msg, c->rev, &keep))) {
		snprintf(c->why[i], sizeof(c->why[i]), "does not build: %s", xo_last_error());
		fprintf(c->msg, "bisect: skip %.12s: %s\n", c->sha[i], c->why[i]);
		return XO_BISECT_SKIP;
	}
	pair[0] = *c->good;
	pair[1] = *c->rev;
	if ((st = xo_perf_ab_rounds(pair, c->o, c->rlog, true, c->msg, t, &c->rounds[i],
	                            &after))) {
		c->st = st;
		c->keep = true;
		return XO_BISECT_ABORT;
	}
	if (t->slower) {
		snprintf(c->why[i], sizeof(c->why[i]), "SLOWER: %s %+.1f%% (%d rounds)", t->worst,
		         100.0 * t->change, c->rounds[i]);
		fprintf(c->msg, "bisect: bad %.12s: %s\n", c->sha[i], c->why[i]);
		if (i == c->n && t->change > 0.0) {
			/*
			 * The change hunted is the one --bad shows. From here on a
			 * commit counts as without it (SAME) when its ratio to good
			 * is within half of it on the log scale, i.e. nearer good than
			 * bad (+90% at bad: SAME within -+38%), and as with it
			 * (SLOWER) beyond that; never tighter than --threshold. On a
			 * noisy machine run offsets of tens of percent would leave
			 * every unchanged commit UNKNOWN against a 10% threshold.
			 * "It" is the least change --bad's interval allows, not its
			 * estimate, which busy runs can inflate (xo_perf_bisect_hunt).
			 */
			double half = xo_perf_bisect_hunt(t, c->o->cmp.threshold);

			if (half > c->o->cmp.threshold) {
				c->o->cmp.threshold = half;
				fprintf(c->msg,
				        "bisect: hunting %+.1f%% (95%% interval from %+.1f%%): threshold "
				        "%.1f%% from here on (half the interval's lower end, log scale)\n",
				        100.0 * t->change, 100.0 * t->change_lo, 100.0 * half);
			} else
				fprintf(c->msg,
				        "bisect: hunting %+.1f%% (95%% interval from %s): threshold stays "
				        "%.1f%%\n",
				        100.0 * t->change, isfinite(t->change_lo) ? "below it" : "unbounded",
				        100.0 * c->o->cmp.threshold);
		}
		return XO_BISECT_BAD;
	}
	/*
	 * Good is "not slower": no benchmark SLOWER and none whose interval
	 * reaches above +threshold. An UNKNOWN whose interval reaches only down
	 * (the commit may be faster, its rounds too noisy to say SAME) excludes
	 * the slowdown hunted as well as SAME does; asking for SAME there skipped
	 * unchanged commits whose good-side rounds were busy (run medians of one
	 * build spread 10x at load 10-19).
	 */
	if (t->unknown_up) {
		snprintf(c->why[i], sizeof(c->why[i]),
		         "too close to call: %d benchmark(s) UNKNOWN (a slowdown beyond %+.1f%% "
		         "not excluded) after %d rounds",
		         t->unknown_up, 100.0 * c->o->cmp.threshold, c->rounds[i]);
		fprintf(c->msg, "bisect: skip %.12s: %s\n", c->sha[i], c->why[i]);
		return XO_BISECT_SKIP;
	}
	if (t->unknown)
		snprintf(c->why[i], sizeof(c->why[i]),
		         "%d SAME, %d FASTER, %d lowered, %d UNKNOWN but not slower (%+.1f%% "
		         "excluded) (%d rounds)",
		         t->same, t->faster, t->lowered, t->unknown, 100.0 * c->o->cmp.threshold,
		         c->rounds[i]);
	else
		snprintf(c->why[i], sizeof(c->why[i]), "%d SAME, %d FASTER, %d lowered (%d rounds)",
		         t->same, t->faster, t->lowered, c->rounds[i]);
	fprintf(c->msg, "bisect: good %.12s: %s\n", c->sha[i], c->why[i]);
	return XO_BISECT_GOOD;
}

/* The first line of sha's message, "" when git cannot say. */
static void subject_of(const char *sha, char *buf, size_t size)
{
	const char *argv[] = {"git", "-C", xo_perf_source_dir(), "log", "-1", "--format=%s", sha,
	                      NULL};
	struct xo_proc p = {.argv = argv, .capture = true, .capture_max = 65536};
	char *text = NULL;
	int code = 1;

	buf[0] = '\0';
	if (!xo_proc_run(&p, &code, &text, NULL) && !code && text)
		snprintf(buf, size, "%.*s", (int)strcspn(text, "\r\n"), text);
	free(text);
}

/*
 * The commits after good up to bad on bad's first-parent line, oldest first,
 * into *out (index 0 = good). XO_EINVAL when good is not on that line.
 */
static enum xo_status first_parent_line(const char *good, const char *bad, char (**out)[48],
                                        size_t *n)
{
	char range[128];
	const char *argv[] = {"git",       "-C",    xo_perf_source_dir(), "rev-list",
	                      "--first-parent", "--reverse", "--parents", range, NULL};
	struct xo_proc p = {.argv = argv, .capture = true, .capture_max = 64 << 20};
	char *text = NULL, (*sha)[48] = NULL, first_parent[48] = "";
	size_t cnt = 0, cap = 0;
	enum xo_status st;
	int code = 1;

	snprintf(range, sizeof(range), "%s..%s", good, bad);
	if ((st = xo_proc_run(&p, &code, &text, NULL)))
		return st;
	if (code) {
		free(text);
		return xo_error(XO_EINVAL, "git rev-list %s failed (exit %d)", range, code);
	}
	for (char *line = text; line && *line;) {
		char *end = strchr(line, '\n');
		size_t len = strspn(line, "0123456789abcdef");

		if (end)
			*end = '\0';
		if (len != 40 || (line[40] != ' ' && line[40] != '\0')) {
			free(text);
			free(sha);
			return xo_error(XO_EIO, "git rev-list: unexpected output '%.60s'", line);
		}
		if (cnt + 2 > cap) {
			size_t nc = cap ? 2 * cap : 64;
			char(*ns)[48] = realloc(sha, nc * sizeof(*ns));

			if (!ns) {
				free(text);
				free(sha);
				return xo_error(XO_ENOMEM, "perf: out of memory");
			}
			sha = ns;
			cap = nc;
		}
		if (!cnt && line[40] == ' ')
			snprintf(first_parent, sizeof(first_parent), "%.40s", line + 41);
		snprintf(sha[++cnt], sizeof(sha[0]), "%.40s", line);
		line = end ? end + 1 : NULL;
	}
	free(text);
	if (!cnt || strcmp(first_parent, good)) {
		free(sha);
		return xo_error(XO_EINVAL,
		                "--good %.12s is not on the first-parent line of --bad %.12s "
		                "(it must be an older commit that --bad descends from)",
		                good, bad);
	}
	snprintf(sha[0], sizeof(sha[0]), "%s", good);
	*out = sha;
	*n = cnt;
	return XO_OK;
}

/* The outcome of the search res, as text or (json) into root_js; true when
 * it names a first bad commit or a range holding one. */
static bool print_outcome(FILE *out, bool json, json_t *root_js, const struct xo_bisect_result *res,
                          const struct bctx *c, char (*sha)[48], size_t n, const char *gsha,
                          const char *bsha)
{
	char subject[256];
	bool found = false;

	switch (res->outcome) {
	case XO_BISECT_FOUND: {
		const struct xo_perf_tally *t = &c->tally[res->first];

		found = true;
		subject_of(sha[res->first], subject, sizeof(subject));
		if (!json)
			fprintf(out,
			        "first bad commit: %s\n  %s\n  change: %s %+.1f%% against good "
			        "%.12s\n",
			        sha[res->first], subject, t->worst, 100.0 * t->change, gsha);
		else {
			json_object_set_new(root_js, "outcome", json_string("found"));
			json_object_set_new(
			    root_js, "first_bad",
			    json_pack("{s:s, s:s, s:s, s:f}", "sha", sha[res->first], "subject", subject,
			              "benchmark", t->worst,
			              "change", isfinite(t->change) ? t->change : 0.0));
		}
		break;
	}
	case XO_BISECT_RANGE: {
		json_t *cand = json ? json_array() : NULL;

		found = true;
		if (!json)
			fprintf(out,
			        "first bad commit: one of these %zu (skipped commits leave it open):\n",
			        res->hi - res->lo);
		for (size_t i = res->lo + 1; i <= res->hi; i++) {
			subject_of(sha[i], subject, sizeof(subject));
			if (!json)
				fprintf(out, "  %.12s %s%s\n", sha[i], subject,
				        i == res->hi ? "  (bad)" : "  (skipped)");
			else if (cand)
				json_array_append_new(cand, json_string(sha[i]));
		}
		if (root_js) {
			json_object_set_new(root_js, "outcome", json_string("range"));
			json_object_set_new(root_js, "candidates", cand ? cand : json_array());
		}
		break;
	}
	case XO_BISECT_NONE:
		if (!json)
			fprintf(out, "no confirmed slowdown: bad %.12s is not SLOWER than good %.12s "
			             "(%s)\n",
			        bsha, gsha, n ? c->why[n] : "no commit between them");
		else
			json_object_set_new(root_js, "outcome", json_string("none"));
		break;
	case XO_BISECT_UNDECIDED:
		if (!json)
			fprintf(out, "undecided: bad %.12s itself was skipped (%s)\n", bsha, c->why[n]);
		else
			json_object_set_new(root_js, "outcome", json_string("undecided"));
		break;
	}
	return found;
}

enum xo_status xo_perf_bisect(const char *good, const char *bad,
                              const struct xo_perf_continuous_opts *o, bool json, FILE *out,
                              FILE *msg, bool *found)
{
	const char *tmp = getenv("TMPDIR");
	char gsha[48], bsha[48], root[4096], bdir[4200], subject[256];
	char(*sha)[48] = NULL;
	size_t n = 0;
	struct xo_perf_continuous_opts oo = *o;
	struct bctx c = {0};
	struct xo_bisect_result res;
	enum xo_bisect_verdict *seen = NULL;
	enum xo_status st;
	json_t *root_js = NULL;
	bool keep = false;

	*found = false;
	if ((st = xo_perf_git_commit(good, gsha, sizeof(gsha))) ||
	    (st = xo_perf_git_commit(bad, bsha, sizeof(bsha))))
		return st;
	if (!strcmp(gsha, bsha))
		return xo_error(XO_EINVAL, "--good '%s' and --bad '%s' are the same commit %.12s",
		                good, bad, gsha);
	if ((st = first_parent_line(gsha, bsha, &sha, &n)))
		return st;
	snprintf(root, sizeof(root), "%s/xo-bisect-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		free(sha);
		return xo_error(XO_EIO, "%s: cannot create a temporary directory: %s", root,
		                strerror(errno));
	}
	/* builds are kept per sha for the whole search (good is built once) */
	if (!oo.build_dir) {
		snprintf(bdir, sizeof(bdir), "%s/builds", root);
		oo.build_dir = bdir;
	}
	/*
	 * No rule of its own: each commit is judged by compare's, which under
	 * load reads each run's fastest sample and faster half (verdict.c), so
	 * a commit gets the verdict compare and continuous give on its runs.
	 */
	c.o = &oo;
	c.root = root;
	c.msg = msg;
	c.sha = sha;
	c.n = n;
	c.good = calloc(1, sizeof(*c.good));
	c.rev = calloc(1, sizeof(*c.rev));
	c.why = calloc(n + 1, sizeof(*c.why));
	c.rounds = calloc(n + 1, sizeof(*c.rounds));
	c.tally = calloc(n + 1, sizeof(*c.tally));
	seen = calloc(n + 1, sizeof(*seen));
	if (!c.good || !c.rev || !c.why || !c.rounds || !c.tally || !seen) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out;
	}
	snprintf(c.rlog, sizeof(c.rlog), "%s/record.log", root);
	fprintf(msg, "bisect: %zu commit(s) after good %.12s up to bad %.12s (first parents)\n", n,
	        gsha, bsha);
	if ((st = xo_perf_rev_build(gsha, root, "good", &oo, msg, c.good, &keep))) {
		st = xo_error(st, "--good %.12s does not build: %s", gsha, xo_last_error());
		goto out;
	}
	if (!xo_perf_bisect_search(n, test_commit, &c, seen, &res)) {
		st = c.st;
		keep = c.keep;
		goto out;
	}

	if (json && !(root_js = json_object())) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out;
	}
	if (!json)
		fprintf(out, "bisect %.12s..%.12s: %zu commit(s), %zu tested\n", gsha, bsha, n,
		        res.tests);
	{
		json_t *jc = json ? json_array() : NULL;

		for (size_t i = 1; i <= n; i++) {
			if (seen[i] == XO_BISECT_UNTESTED)
				continue;
			subject_of(sha[i], subject, sizeof(subject));
			if (!json)
				fprintf(out, "  %-5s %.12s %s\n        %s\n", xo_perf_bisect_word(seen[i]),
				        sha[i], subject, c.why[i]);
			else if (jc)
				json_array_append_new(
				    jc, json_pack("{s:s, s:s, s:s, s:s, s:i}", "sha", sha[i], "subject",
				                  subject, "verdict", xo_perf_bisect_word(seen[i]), "why",
				                  c.why[i], "rounds", c.rounds[i]));
		}
		if (root_js) {
			json_object_set_new(root_js, "good", json_string(gsha));
			json_object_set_new(root_js, "threshold", json_real(oo.cmp.threshold));
			json_object_set_new(root_js, "bad", json_string(bsha));
			json_object_set_new(root_js, "tested", jc ? jc : json_array());
		}
	}
	*found = print_outcome(out, json, root_js, &res, &c, sha, n, gsha, bsha);
	if (root_js)
		xo_perf_json_print(root_js, out);
out:
	json_decref(root_js);
	if (keep)
		fprintf(msg, "bisect: kept %s for its logs\n", root);
	else {
		const char *argv[] = {"rm", "-rf", "--", root, NULL};
		struct xo_proc p = {.argv = argv};
		int code;

		xo_proc_run(&p, &code, NULL, NULL);
	}
	free(seen);
	free(c.good);
	free(c.rev);
	free(c.why);
	free(c.rounds);
	free(c.tally);
	free(sha);
	return st;
}
