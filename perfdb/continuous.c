/*
 * continuous.c - `xo perf continuous BASE [HEAD]` (asv continuous): build
 * each revision in its own temporary clone of the source tree, record both
 * in alternating rounds (base, head, base, head, ...) so that drift on the
 * machine hits both sides alike, then compare them by commit (which pools
 * each side's rounds). Each revision's xo records into a store of its own in
 * the temporary tree (that xo may know an older schema than the user's store
 * has); its runs are merged into the user's store after every record. Every
 * program runs from an argument vector through xo_proc_run, never a shell.
 * The temporary tree is removed afterwards; a failed build keeps it and
 * names its log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sql.h"

#include "perfdb.h"
#include "query.h"
#include "proc.h"

/* argv[0..] run in cwd; output appended to log. XO_OK only for exit 0. */
static enum xo_status run_logged(const char *const *argv, const char *log, const char *what)
{
	struct xo_proc p = {.argv = argv, .log_path = log};
	int code = 1;
	enum xo_status st = xo_proc_run(&p, &code, NULL, NULL);

	if (st)
		return st;
	if (code)
		return xo_error(XO_EIO, "%s failed (exit %d; log: %s)", what, code, log);
	return XO_OK;
}

static void remove_tree(const char *dir)
{
	const char *argv[] = {"rm", "-rf", "--", dir, NULL};
	struct xo_proc p = {.argv = argv};
	int code;

	xo_proc_run(&p, &code, NULL, NULL);
}

/* A clone of the source tree at sha in dir, built (target xo) into dir/build. */
static enum xo_status build_rev(const char *src, const char *sha, const char *dir, const char *log,
                                int jobs, FILE *msg)
{
	char bdir[4200], j[16], what[128];
	enum xo_status st;

	snprintf(bdir, sizeof(bdir), "%s/build", dir);
	snprintf(j, sizeof(j), "%d", jobs > 0 ? jobs : 2);
	snprintf(what, sizeof(what), "building %.12s", sha);
	fprintf(msg, "perf: building %.12s in %s (log: %s)\n", sha, dir, log);
	{
		const char *clone[] = {"git",           "clone", "--quiet", "--shared",
		                       "--no-checkout", src,     dir,       NULL};
		const char *co[] = {"git", "-C", dir, "checkout", "--quiet", "--detach", sha, NULL};
		const char *conf[] = {"cmake", "-S", dir, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release",
		                      NULL};
		const char *build[] = {"cmake", "--build", bdir, "--target", "xo", "-j", j, NULL};

		if ((st = run_logged(clone, log, what)) || (st = run_logged(co, log, what)) ||
		    (st = run_logged(conf, log, what)) || (st = run_logged(build, log, what)))
			return st;
	}
	return XO_OK;
}

bool xo_perf_more_rounds(const struct xo_perf_tally *t, int done, int max_rounds, double elapsed_s,
                         double budget_s, bool stop_on_slower)
{
	if (!(stop_on_slower ? t->unknown_up : t->unknown) || done >= max_rounds)
		return false;
	if (stop_on_slower && t->slower)
		return false;
	/* one more round costs about what a round cost so far */
	if (budget_s > 0.0 && done > 0 && elapsed_s + elapsed_s / done > budget_s)
		return false;
	return true;
}

enum xo_status xo_perf_rev_build(const char *sha, const char *root, const char *name,
                                 const struct xo_perf_continuous_opts *o, FILE *msg,
                                 struct xo_perf_rev *r, bool *keep)
{
	const char *src = xo_perf_source_dir();
	enum xo_status st;

	snprintf(r->sha, sizeof(r->sha), "%s", sha);
	if (o->build_dir) {
		/* asv's kept environments: a revision built before is reused */
		snprintf(r->dir, sizeof(r->dir), "%s/%s", o->build_dir, sha);
		snprintf(r->log, sizeof(r->log), "%s/%s.log", o->build_dir, sha);
	} else {
		snprintf(r->dir, sizeof(r->dir), "%s/%s", root, name);
		snprintf(r->log, sizeof(r->log), "%s/build-%s.log", root, name);
	}
	snprintf(r->xo, sizeof(r->xo), "%s/build/cli/xo", r->dir);
	snprintf(r->store, sizeof(r->store), "%s/%s.sqlite", root, name);
	if (o->build_dir && !access(r->xo, X_OK)) {
		fprintf(msg, "perf: reusing %s\n", r->xo);
		return XO_OK;
	}
	if (o->build_dir && mkdir(o->build_dir, 0777) && errno != EEXIST)
		return xo_error(XO_EIO, "--build-dir %s: %s", o->build_dir, strerror(errno));
	if (o->build_dir)
		remove_tree(r->dir); /* a half-built tree from an interrupted run */
	if ((st = build_rev(src, sha, r->dir, r->log, o->jobs, msg))) {
		/* the log is the answer; a failed tree in --build-dir would be
		 * taken for a build next time (the log stays beside it) */
		if (o->build_dir)
			remove_tree(r->dir);
		else
			*keep = true;
	}
	return st;
}

/*
 * Merges the runs of rev's own store that o->db_path lacks into it (import-db's
 * code: a run already there is skipped, so the earlier rounds' runs are not
 * copied twice); its summary line goes to rlog.
 */
static enum xo_status merge_rev(const struct xo_perf_rev *rev,
                                const struct xo_perf_continuous_opts *o, const char *rlog)
{
	struct xo_perfdb *db = NULL;
	char name[1024];
	FILE *log = fopen(rlog, "a");
	enum xo_status st;

	if (!log)
		return xo_error(XO_EIO, "%s: %s", rlog, strerror(errno));
	xo_sql_redact(o->db_path, name, sizeof(name));
	if (!(st = xo_perfdb_open(o->db_path, &db)))
		st = xo_perfdb_import_db(db, rev->store, name, log);
	xo_perfdb_close(db);
	fclose(log);
	if (st)
		return xo_error(st, "merging %.12s's runs from %s into %s: %s", rev->sha, rev->store,
		                name, xo_last_error());
	return XO_OK;
}

/*
 * One `xo perf record` of rev into its own store rev->store (output appended
 * to rlog), then merged into o->db_path. The revision's xo never opens the
 * user's store: an older xo refuses a store of a newer schema than it knows
 * ("schema version 5 is newer than this xo knows (4)"), which made
 * continuous and bisect fail across every schema bump.
 */
static enum xo_status record_rev(const struct xo_perf_rev *rev,
                                 const struct xo_perf_continuous_opts *o, const char *rlog)
{
	const char *argv[64];
	char samples[16], *saved = NULL;
	const char *prev;
	int n = 0;
	enum xo_status st;

	snprintf(samples, sizeof(samples), "%d", o->samples);
	argv[n++] = rev->xo;
	argv[n++] = "perf";
	argv[n++] = "record";
	argv[n++] = "--db";
	argv[n++] = rev->store;
	argv[n++] = "--no-progress";
	if (o->metrics & XO_PERF_METRIC_INSTRUCTIONS) {
		argv[n++] = "--metric";
		argv[n++] = o->metrics & XO_PERF_METRIC_TIME ? "time,instructions" : "instructions";
	}
	if (o->quick)
		argv[n++] = "--quick";
	if (o->filter) {
		argv[n++] = "--filter";
		argv[n++] = o->filter;
	}
	if (o->samples) {
		argv[n++] = "--samples";
		argv[n++] = samples;
	}
	if (o->model) {
		argv[n++] = "--model";
		argv[n++] = o->model;
	}
	for (int d = 0; d < o->ndevices && n < 60; d++) {
		argv[n++] = "--device";
		argv[n++] = o->devices[d];
	}
	argv[n] = NULL;
	/* the clone is the source tree of that binary: its commit and
	 * kernel-source hashes are what the run records. The caller's own
	 * XO_SOURCE_DIR comes back afterwards: unsetting it made every later
	 * clone (bisect's next commit) come from the built-in tree instead */
	prev = getenv("XO_SOURCE_DIR");
	if (prev && !(saved = strdup(prev)))
		return xo_error(XO_ENOMEM, "perf: out of memory");
	setenv("XO_SOURCE_DIR", rev->dir, 1);
	st = run_logged(argv, rlog, "recording");
	if (saved)
		setenv("XO_SOURCE_DIR", saved, 1);
	else
		unsetenv("XO_SOURCE_DIR");
	free(saved);
	if (!st)
		st = merge_rev(rev, o, rlog);
	return st;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum xo_status xo_perf_ab_rounds(const struct xo_perf_rev rev[2],
                                 const struct xo_perf_continuous_opts *o, const char *rlog,
                                 bool stop_on_slower, FILE *msg, struct xo_perf_tally *tally,
                                 int *rounds_done, int64_t *after_run)
{
	static const char *const name[2] = {"base", "head"};
	int max_rounds = o->max_rounds > o->rounds ? o->max_rounds : o->rounds;
	double t0 = now_s();
	enum xo_status st = XO_OK;
	struct xo_perfdb *db = NULL;
	FILE *sink = NULL;
	int r = 0;

	memset(tally, 0, sizeof(*tally));
	*after_run = 0;
	/*
	 * The comparison pools only the runs these rounds make: earlier runs of
	 * the same commits (bisect's good, recorded against every commit it
	 * tests) were not alternated with these, and every extra base run is one
	 * more that a head run must clear (one slow outlier among 24 runs of
	 * good left a planted 2x UNKNOWN).
	 */
	if ((st = xo_perfdb_open(o->db_path, &db)))
		goto out;
	st = xo_perf_query_last_run(db, o->db_path, after_run);
	xo_perfdb_close(db);
	db = NULL;
	if (st)
		goto out;
	while (r < max_rounds) {
		for (int k = 0; k < 2; k++) {
			if ((st = record_rev(&rev[k], o, rlog)))
				goto out;
			fprintf(msg, "perf: round %d/%d%s: %s %.12s recorded\n", r + 1, o->rounds,
			        r >= o->rounds ? " (extra: too close to call)" : "", name[k],
			        rev[k].sha);
		}
		r++;
		if (r < o->rounds)
			continue;
		/* the verdicts so far decide whether to go on (Pinpoint's rule) */
		if (!sink && !(sink = fopen("/dev/null", "w"))) {
			st = xo_error(XO_EIO, "/dev/null: %s", strerror(errno));
			goto out;
		}
		{
			struct xo_perf_compare_opts c = o->cmp;
			bool failed;

			c.json = false;
			c.after_run = *after_run;
			c.looks = r - o->rounds + 1; /* the run rule divides its level by it */
			if ((st = xo_perfdb_open(o->db_path, &db)))
				goto out;
			st = xo_perf_compare_tally(db, rev[0].sha, rev[1].sha, &c, sink, &failed,
			                           tally);
			xo_perfdb_close(db);
			db = NULL;
			if (st)
				goto out;
		}
		if (!xo_perf_more_rounds(tally, r, max_rounds, now_s() - t0, o->budget_s,
		                         stop_on_slower))
			break;
		fprintf(msg, "perf: %d benchmark(s) too close to call after %d rounds: one more\n",
		        stop_on_slower ? tally->unknown_up : tally->unknown, r);
	}
out:
	if (sink)
		fclose(sink);
	*rounds_done = r;
	return st;
}

enum xo_status xo_perf_continuous(const char *base, const char *head,
                                  const struct xo_perf_continuous_opts *o, FILE *out, FILE *msg,
                                  bool *failed)
{
	const char *tmp = getenv("TMPDIR");
	char root[4096], rlog[4200], sha[2][48];
	const char *spec[2] = {base, head ? head : "HEAD"}, *name[2] = {"base", "head"};
	struct xo_perf_rev *rev = NULL;
	struct xo_perf_tally tally;
	struct xo_perfdb *db = NULL;
	enum xo_status st = XO_OK;
	bool keep = false;
	int rounds = 0;
	int64_t after = 0;
	struct xo_perf_compare_opts cmp = o->cmp;

	*failed = false;
	for (int k = 0; k < 2; k++)
		if ((st = xo_perf_git_commit(spec[k], sha[k], sizeof(sha[k]))))
			return st;
	if (!strcmp(sha[0], sha[1]))
		return xo_error(XO_EINVAL, "'%s' and '%s' are the same commit %.12s", spec[0],
		                spec[1], sha[0]);
	if (!(rev = calloc(2, sizeof(*rev))))
		return xo_error(XO_ENOMEM, "perf: out of memory");
	snprintf(root, sizeof(root), "%s/xo-continuous-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		free(rev);
		return xo_error(XO_EIO, "%s: cannot create a temporary directory: %s", root,
		                strerror(errno));
	}
	for (int k = 0; k < 2; k++)
		if ((st = xo_perf_rev_build(sha[k], root, name[k], o, msg, &rev[k], &keep)))
			goto out;
	snprintf(rlog, sizeof(rlog), "%s/record.log", root);
	if ((st = xo_perf_ab_rounds(rev, o, rlog, false, msg, &tally, &rounds, &after))) {
		keep = true;
		goto out;
	}
	if (tally.unknown)
		fprintf(msg, "continuous: %d benchmark(s) still too close to call after %d rounds "
		             "(--max-rounds %d%s)\n",
		        tally.unknown, rounds, o->max_rounds > o->rounds ? o->max_rounds : o->rounds,
		        o->budget_s > 0 ? ", or --budget" : "");
	if ((st = xo_perfdb_open(o->db_path, &db)))
		goto out;
	cmp.after_run = after; /* this invocation's rounds */
	cmp.looks = rounds > o->rounds ? rounds - o->rounds + 1 : 1; /* the last look again */
	st = xo_perf_compare(db, sha[0], sha[1], &cmp, out, failed);
	xo_perfdb_close(db);
out:
	if (keep)
		fprintf(msg, "continuous: kept %s for its logs\n", root);
	else
		remove_tree(root);
	free(rev);
	return st;
}
