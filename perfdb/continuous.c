/*
 * continuous.c - `xo perf continuous BASE [HEAD]` (asv continuous): build
 * each revision in its own temporary clone of the source tree, record both
 * in alternating rounds (base, head, base, head, ...) so that drift on the
 * machine hits both sides alike, then compare them by commit (which pools
 * each side's rounds). Every program runs from an argument vector through
 * xo_proc_run, never a shell. The temporary tree is removed afterwards; a
 * failed build keeps it and names its log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdb.h"
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
	fprintf(msg, "continuous: building %.12s in %s (log: %s)\n", sha, dir, log);
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

enum xo_status xo_perf_continuous(const char *base, const char *head,
                                  const struct xo_perf_continuous_opts *o, FILE *out, FILE *msg,
                                  bool *failed)
{
	const char *src = xo_perf_source_dir();
	const char *tmp = getenv("TMPDIR");
	char root[4096], dir[2][4200], xo[2][4300], log[2][4200], rlog[4200];
	char sha[2][48], samples[16];
	const char *spec[2] = {base, head ? head : "HEAD"}, *name[2] = {"base", "head"};
	struct xo_perfdb *db = NULL;
	enum xo_status st = XO_OK;
	bool keep = false;

	*failed = false;
	for (int k = 0; k < 2; k++)
		if ((st = xo_perf_git_commit(spec[k], sha[k], sizeof(sha[k]))))
			return st;
	if (!strcmp(sha[0], sha[1]))
		return xo_error(XO_EINVAL, "'%s' and '%s' are the same commit %.12s", spec[0],
		                spec[1], sha[0]);
	snprintf(root, sizeof(root), "%s/xo-continuous-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root))
		return xo_error(XO_EIO, "%s: cannot create a temporary directory: %s", root,
		                strerror(errno));
	for (int k = 0; k < 2; k++) {
		if (o->build_dir) {
			/* asv's kept environments: a revision built before is reused */
			snprintf(dir[k], sizeof(dir[k]), "%s/%s", o->build_dir, sha[k]);
			snprintf(log[k], sizeof(log[k]), "%s/%s.log", o->build_dir, sha[k]);
		} else {
			snprintf(dir[k], sizeof(dir[k]), "%s/%s", root, name[k]);
			snprintf(log[k], sizeof(log[k]), "%s/build-%s.log", root, name[k]);
		}
		snprintf(xo[k], sizeof(xo[k]), "%s/build/cli/xo", dir[k]);
		if (o->build_dir && !access(xo[k], X_OK)) {
			fprintf(msg, "continuous: reusing %s\n", xo[k]);
			continue;
		}
		if (o->build_dir && mkdir(o->build_dir, 0777) && errno != EEXIST) {
			st = xo_error(XO_EIO, "--build-dir %s: %s", o->build_dir, strerror(errno));
			goto out;
		}
		if (o->build_dir)
			remove_tree(dir[k]); /* a half-built tree from an interrupted run */
		if ((st = build_rev(src, sha[k], dir[k], log[k], o->jobs, msg))) {
			/* the log is the answer; a failed tree in --build-dir would be
			 * taken for a build next time */
			if (o->build_dir)
				remove_tree(dir[k]);
			else
				keep = true;
			goto out;
		}
	}
	snprintf(rlog, sizeof(rlog), "%s/record.log", root);
	snprintf(samples, sizeof(samples), "%d", o->samples);
	for (int r = 0; r < o->rounds; r++) {
		for (int k = 0; k < 2; k++) {
			const char *argv[64];
			int n = 0;

			argv[n++] = xo[k];
			argv[n++] = "perf";
			argv[n++] = "record";
			argv[n++] = "--db";
			argv[n++] = o->db_path;
			argv[n++] = "--no-progress";
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
			 * kernel-source hashes are what the run records */
			setenv("XO_SOURCE_DIR", dir[k], 1);
			st = run_logged(argv, rlog, "recording");
			unsetenv("XO_SOURCE_DIR");
			if (st) {
				keep = true;
				goto out;
			}
			fprintf(msg, "continuous: round %d/%d: %s %.12s recorded\n", r + 1,
			        o->rounds, name[k], sha[k]);
		}
	}
	if ((st = xo_perfdb_open(o->db_path, &db)))
		goto out;
	st = xo_perf_compare(db, sha[0], sha[1], &o->cmp, out, failed);
	xo_perfdb_close(db);
out:
	if (keep)
		fprintf(msg, "continuous: kept %s for its logs\n", root);
	else
		remove_tree(root);
	return st;
}
