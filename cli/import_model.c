/*
 * import_model.c - `xo import MODEL --out DIR`: a Keras
 * .keras or legacy .h5 model (or a spec) as text: DIR/model.spec, the spec
 * its config maps to, and DIR/weights/, its weights as <layer>.<variable>.npy
 * (Keras's variable names). Then `xo predict --model DIR/model.spec
 * --weights DIR/weights ...` runs the same model. A top-level command, not
 * `xo perf import` (which imports a peer's timings).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cmd.h"
#include "xo.h"
#include "xo/model_spec.h"

/* What an import writes into DIR; a DIR holding anything else is refused,
 * since the whole directory is swapped. */
static bool import_entry(const char *name)
{
	return !strcmp(name, "model.spec") || !strcmp(name, "weights");
}

/* Removes what an import wrote (model.spec, weights/ and its files) and
 * the directory itself, following no symlink. */
static void remove_import_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int wfd = fd >= 0 ? openat(fd, "weights", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
	                  : -1;
	DIR *w = wfd >= 0 ? fdopendir(wfd) : NULL;
	struct dirent *e;

	if (w) {
		while ((e = readdir(w)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(w), e->d_name, 0);
		closedir(w);
	} else if (wfd >= 0) {
		close(wfd);
	}
	if (fd >= 0) {
		unlinkat(fd, "weights", AT_REMOVEDIR);
		unlinkat(fd, "model.spec", 0);
		close(fd);
	}
	rmdir(dir);
}

/* DIR (the final target, symlinks followed) may be replaced: a directory
 * holding only what an import writes. */
static int check_out(const char *out, const char *target, bool exists)
{
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (!exists)
		return 0;
	if (!(d = opendir(target)))
		return xo_usage_error("import", "%s: cannot read: %s", out, strerror(errno));
	while ((e = readdir(d))) {
		char path[PATH_MAX + NAME_MAX + 2];
		struct stat sb;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", target, e->d_name);
		if (!import_entry(e->d_name) || lstat(path, &sb) ||
		    !(strcmp(e->d_name, "weights") ? S_ISREG(sb.st_mode) : S_ISDIR(sb.st_mode))) {
			rc = xo_usage_error("import", "%s: holds '%s', which xo import did not "
			                    "write: refusing to replace the directory (import to a new "
			                    "directory)", out, e->d_name);
			break;
		}
		/* weights/: a checkpoint directory (flat, *.npy and its manifest) */
		if (!strcmp(e->d_name, "weights") && xo_checkpoint_check(path)) {
			rc = xo_usage_error("import", "%s", xo_last_error());
			break;
		}
	}
	closedir(d);
	return rc;
}

/* Swaps the finished staging directory in for target: one
 * renameat2(RENAME_EXCHANGE) where the file system has it, else the old
 * one aside, the new one in (put back on failure), the old one removed. */
static int swap_in(const char *out, const char *stage, const char *target, bool exists)
{
	char old[PATH_MAX];

	if (!exists) {
		if (rename(stage, target))
			return xo_usage_error("import", "%s: cannot create: %s", out, strerror(errno));
		return 0;
	}
#ifdef SYS_renameat2
	if (!syscall(SYS_renameat2, AT_FDCWD, stage, AT_FDCWD, target, 2 /* RENAME_EXCHANGE */)) {
		remove_import_dir(stage); /* now the old import */
		return 0;
	}
#endif
	if ((size_t)snprintf(old, sizeof(old), "%s.old", stage) >= sizeof(old) ||
	    rename(target, old))
		return xo_usage_error("import", "%s: cannot replace: %s", out, strerror(errno));
	if (rename(stage, target)) {
		int rc = xo_usage_error("import", "%s: cannot replace: %s", out, strerror(errno));

		rename(old, target);
		return rc;
	}
	remove_import_dir(old);
	return 0;
}

/*
 * The import lands whole or not at all: model.spec and weights/ are written
 * into a new hidden directory of a random name beside DIR's final target,
 * then swapped in for DIR. A failure (or a kill) at any point before the
 * swap leaves DIR as it was.
 */
int xo_cmd_import(int argc, char **argv)
{
	const char *model = NULL, *out = NULL;
	char target[PATH_MAX], stage[PATH_MAX + 64], spec_path[PATH_MAX + 80],
	    weights[PATH_MAX + 80], *slash;
	struct xo_backend *be = NULL;
	struct xo_model *m = NULL;
	char *text = NULL;
	bool exists = false;
	struct stat sb;
	int rc = 2, n;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--out")) {
			if (i + 1 == argc)
				return xo_usage_error("import", "--out needs a value");
			out = argv[++i];
		} else if (argv[i][0] == '-' || model) {
			return xo_usage_error("import", "unexpected argument '%s' (usage: xo import "
			                      "MODEL --out DIR)", argv[i]);
		} else {
			model = argv[i];
		}
	}
	if (!model || !out)
		return xo_usage_error("import", "MODEL and --out DIR are required (usage: xo import "
		                      "MODEL --out DIR)");
	if (xo_output_target(out, true, target, sizeof(target), &exists)) {
		if (!stat(out, &sb) && !S_ISDIR(sb.st_mode))
			return xo_usage_error("import", "%s: exists and is not a directory", out);
		return xo_usage_error("import", "%s", xo_last_error());
	}
	for (size_t k = strlen(target); k > 1 && target[k - 1] == '/'; k--)
		target[k - 1] = '\0';
	slash = strrchr(target, '/');
	if (!slash)
		n = snprintf(stage, sizeof(stage), "./.%s.xo-import-XXXXXX", target);
	else
		n = snprintf(stage, sizeof(stage), "%.*s/.%s.xo-import-XXXXXX",
		             (int)(slash - target), target, slash + 1);
	if (n < 0 || (size_t)n >= sizeof(stage) || !strcmp(slash ? slash + 1 : target, "..") ||
	    !strcmp(slash ? slash + 1 : target, "."))
		return xo_usage_error("import", "%s: name a directory by its name, not '.' or "
		                      "'..' (or path too long)", out);
	if ((rc = check_out(out, target, exists)))
		return rc;
	rc = 2;
	/* Everything is read and checked before anything is written. */
	if (xo_spec_read_file(model, &text) || xo_backend_open("ref", &be) ||
	    xo_model_open(model, be, 1, &m)) {
		rc = xo_usage_error("import", "%s", xo_last_error());
		goto out_free;
	}
	if (!mkdtemp(stage) || chmod(stage, exists && !stat(target, &sb)
	                                        ? (unsigned)(sb.st_mode & 07777)
	                                        : xo_output_dir_mode())) {
		rc = xo_usage_error("import", "%s: cannot create a directory beside it: %s", out,
		                    strerror(errno));
		goto out_free;
	}
	snprintf(spec_path, sizeof(spec_path), "%s/model.spec", stage);
	snprintf(weights, sizeof(weights), "%s/weights", stage);
	if (xo_output_file(spec_path, text, strlen(text)) || xo_model_save_weights(m, weights)) {
		/* name DIR, never the hidden staging directory */
		const char *msg = xo_last_error();
		size_t sl = strlen(stage);

		rc = !strncmp(msg, stage, sl)
		         ? xo_usage_error("import", "%s%s", out, msg + sl)
		         : xo_usage_error("import", "%s: %s", out, msg);
		goto out_stage;
	}
	if ((rc = swap_in(out, stage, target, exists)))
		goto out_stage;
	printf("Wrote %s/model.spec and %s/weights/ (%" PRId64 " parameters)\n", out, out,
	       xo_model_param_count(m));
	rc = 0;
	goto out_free;
out_stage:
	remove_import_dir(stage);
out_free:
	free(text);
	xo_model_close(m);
	xo_backend_close(be);
	return rc;
}
