/*
 * checkpoint.c - a weights directory is replaced as a whole or not at all,
 * and a mixed or partial one is refused on load.
 *
 * Saving DIR: the files go to a hidden sibling directory
 * ".<name>.xo-ckpt-<pid>.XXXXXX" (a new directory of a random name) beside
 * DIR's final target (symlinks followed),
 * each written and fsync'd, then the manifest "xo-checkpoint.txt" is written
 * last, naming every file with its size and CRC-32; the sibling is then
 * exchanged with DIR in one renameat2(RENAME_EXCHANGE) (a plain rename when
 * DIR does not exist yet) and the old files are removed. A kill at any
 * point leaves DIR as it was (old manifest, old files) or wholly new; the
 * only trace is the hidden sibling, which the next save beside it removes
 * (its pid is gone). A DIR holding anything but checkpoint files (*.npy,
 * the manifest) is refused before training starts, so no user file is ever
 * swapped away.
 *
 * Loading DIR with a manifest: every listed file must be there with its size
 * and checksum, and every *.npy there must be listed; anything else is a
 * checkpoint mixed from two saves (or hand-edited) and is refused. A
 * directory without a manifest is plain NumPy/Keras weights (what
 * scripts/make_golden.py and Keras exports write) and loads as before: the
 * .npy reader still refuses a truncated or malformed file.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "model_internal.h"

#define MANIFEST       "xo-checkpoint.txt"
#define MANIFEST_MAGIC "xo-checkpoint 1"
#define SIBLING_TAG    ".xo-ckpt-"

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of n bytes, continuing crc. */
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

/* Size and CRC-32 of a file. */
static enum xo_status file_sum(const char *path, const char *shown, int64_t *size, uint32_t *crc)
{
	unsigned char buf[65536];
	FILE *f;
	size_t n;

	if (xo_input_open(path, "a weights file", &f, NULL))
		return XO_EFORMAT; /* the line names path */
	*size = 0;
	*crc = 0;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		*crc = crc32_update(*crc, buf, n);
		*size += (int64_t)n;
	}
	if (ferror(f)) {
		fclose(f);
		return xo_error(XO_EIO, "%s: read failed", shown);
	}
	fclose(f);
	return XO_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* A file a checkpoint directory may hold: weights, the manifest, or the
 * ".npy.tmp" leftovers of the writer before this one. */
static bool checkpoint_entry(const char *name)
{
	return !strcmp(name, MANIFEST) || ends_with(name, ".npy") || ends_with(name, ".npy.tmp");
}

/* Removes a directory holding only regular files (never recursing). A
 * symlink at dir is not followed: only a real directory's entries go. */
static void remove_flat_dir(const char *dir)
{
	struct dirent *e;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		unlinkat(dirfd(d), e->d_name, 0); /* a link itself, never its target */
	}
	closedir(d);
	rmdir(dir);
}

/* dir and base name of path. */
static bool split_path(const char *path, char *dir, size_t dsize, char *base, size_t bsize)
{
	const char *slash = strrchr(path, '/');
	int a, b;

	if (!slash) {
		a = snprintf(dir, dsize, ".");
		b = snprintf(base, bsize, "%s", path);
	} else {
		a = slash == path ? snprintf(dir, dsize, "/")
		                  : snprintf(dir, dsize, "%.*s", (int)(slash - path), path);
		b = snprintf(base, bsize, "%s", slash + 1);
	}
	return a >= 0 && (size_t)a < dsize && b > 0 && (size_t)b < bsize;
}

enum xo_status xo_checkpoint_check(const char *dir)
{
	char target[PATH_MAX], parent[PATH_MAX], base[NAME_MAX + 1];
	bool exists = false;
	struct stat sb;
	struct dirent *e;
	enum xo_status st;
	DIR *d;

	if (!dir)
		return xo_error(XO_EINVAL, "checkpoint: NULL directory");
	/* A Keras file (model/keras.c): a regular file or nothing, in an
	 * existing directory. */
	if (xo_keras_save_kind(dir) == XO_SAVE_BAD)
		return xo_error(XO_EINVAL, "%s: xo writes .weights.h5 (Keras 3 save_weights) or "
		                           ".keras, not a legacy .h5", dir);
	if (xo_keras_save_kind(dir) != XO_SAVE_DIR) {
		st = xo_output_target(dir, false, target, sizeof(target), &exists);
		if (st)
			return st;
		if (!split_path(target, parent, sizeof(parent), base, sizeof(base)) ||
		    stat(parent, &sb) || !S_ISDIR(sb.st_mode))
			return xo_error(XO_EIO, "%s: cannot create: its directory does not exist",
			                dir);
		return XO_OK;
	}
	st = xo_output_target(dir, true, target, sizeof(target), &exists);
	if (st)
		return st;
	/* trailing slashes ("out/") name the directory itself */
	for (size_t n = strlen(target); n > 1 && target[n - 1] == '/'; n--)
		target[n - 1] = '\0';
	if (!split_path(target, parent, sizeof(parent), base, sizeof(base)) || !strcmp(base, ".") ||
	    !strcmp(base, ".."))
		return xo_error(XO_EINVAL, "%s: name a directory by its name, not '.' or '..'",
		                dir);
	if (!exists) {
		if (stat(parent, &sb) || !S_ISDIR(sb.st_mode))
			return xo_error(XO_EIO, "%s: cannot create: %s does not exist", dir,
			                parent);
		return XO_OK;
	}
	d = opendir(target);
	if (!d)
		return xo_error(XO_EIO, "%s: cannot read: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char path[2 * PATH_MAX];
		struct stat eb;

		snprintf(path, sizeof(path), "%s/%s", target, e->d_name);
		if (!checkpoint_entry(e->d_name) || lstat(path, &eb) || !S_ISREG(eb.st_mode)) {
			st = xo_error(
			    XO_EINVAL,
			    "%s: holds '%s', which is not a checkpoint file: refusing to "
			    "replace the directory (save to a new or checkpoint directory)",
			    dir, e->d_name);
			break;
		}
	}
	closedir(d);
	return st;
}

/* Removes hidden siblings ".<base>.xo-ckpt-<pid>.XXXXXX" left by a save
 * that was killed (its pid no longer runs): only real directories of this
 * user, never what a symlink of that name points to. */
static void remove_stale_siblings(const char *parent, const char *base)
{
	char prefix[NAME_MAX + 32], path[PATH_MAX];
	struct dirent *e;
	struct stat sb;
	DIR *d = opendir(parent);
	size_t plen;

	if (!d)
		return;
	snprintf(prefix, sizeof(prefix), ".%s" SIBLING_TAG, base);
	plen = strlen(prefix);
	while ((e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, prefix, plen))
			continue;
		errno = 0;
		pid = strtol(e->d_name + plen, &end, 10);
		if (errno || *end != '.' || strlen(end) != 7 || pid <= 0 || pid == (long)getpid())
			continue;
		if (!kill((pid_t)pid, 0) || errno != ESRCH)
			continue; /* its writer may still run */
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", parent, e->d_name) < sizeof(path) &&
		    !lstat(path, &sb) && S_ISDIR(sb.st_mode) && sb.st_uid == geteuid())
			remove_flat_dir(path);
	}
	closedir(d);
}

/* XO_TEST_CRASH_AFTER=N (tests only): the process _exit()s after the Nth
 * checkpoint file written, as a kill mid-save would stop it. */
static void crash_hook(void)
{
	static long left = -2;

	if (left == -2) {
		const char *v = getenv("XO_TEST_CRASH_AFTER");

		left = v && *v ? strtol(v, NULL, 10) : -1;
	}
	if (left > 0 && --left == 0)
		_exit(86);
}

enum xo_status xo_ckpt_begin(struct xo_ckpt_writer *w, const char *dir)
{
	char parent[PATH_MAX], base[NAME_MAX + 1];
	enum xo_status st;
	bool exists;

	memset(w, 0, sizeof(*w));
	st = xo_checkpoint_check(dir);
	if (st)
		return st;
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	xo_output_target(dir, true, w->target, sizeof(w->target), &exists);
	for (size_t n = strlen(w->target); n > 1 && w->target[n - 1] == '/'; n--)
		w->target[n - 1] = '\0';
	split_path(w->target, parent, sizeof(parent), base, sizeof(base));
	remove_stale_siblings(parent, base);
	/* mkdtemp: a new directory of a random name (created with O_EXCL
	 * semantics), so nothing planted beside DIR is ever written through */
	if ((size_t)snprintf(w->tmp, sizeof(w->tmp), "%s/.%s" SIBLING_TAG "%ld.XXXXXX", parent,
	                     base, (long)getpid()) >= sizeof(w->tmp))
		return xo_error(XO_EINVAL, "%s: path too long", dir);
	if (!mkdtemp(w->tmp) || chmod(w->tmp, xo_output_dir_mode())) {
		st = xo_error(XO_EIO, "%s: cannot create a directory beside it: %s", dir,
		              strerror(errno));
		w->tmp[0] = '\0';
		return st;
	}
	w->manifest = malloc(4096);
	w->msize = 4096;
	if (!w->manifest) {
		xo_ckpt_abort(w);
		return xo_error(XO_ENOMEM, "%s: out of memory", dir);
	}
	w->mlen = 0;
	return XO_OK;
}

/* Appends printf output to the manifest buffer. */
static enum xo_status manifest_add(struct xo_ckpt_writer *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static enum xo_status manifest_add(struct xo_ckpt_writer *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(w->manifest + w->mlen, w->msize - w->mlen, fmt, ap);
		va_end(ap);
		if (n < 0)
			return xo_error(XO_EINVAL, "%s: manifest formatting failed", w->dir);
		if ((size_t)n < w->msize - w->mlen)
			break;
		char *grown = realloc(w->manifest, w->msize * 2 + (size_t)n);

		if (!grown)
			return xo_error(XO_ENOMEM, "%s: out of memory", w->dir);
		w->manifest = grown;
		w->msize = w->msize * 2 + (size_t)n;
	}
	w->mlen += (size_t)n;
	return XO_OK;
}

enum xo_status xo_ckpt_add(struct xo_ckpt_writer *w, const char *name, int ndim,
                           const int64_t *dims, const float *data)
{
	char path[PATH_MAX], shown[2 * PATH_MAX];
	int64_t size;
	uint32_t crc;
	enum xo_status st;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", w->tmp, name) >= sizeof(path))
		return xo_error(XO_EINVAL, "%s: path too long", w->dir);
	snprintf(shown, sizeof(shown), "%s/%s", w->dir, name);
	st = xo_npy_write(path, ndim, dims, data);
	if (st) {
		/* name the user's directory, not the hidden sibling */
		const char *m = xo_last_error();
		size_t tl = strlen(w->tmp);

		if (!strncmp(m, w->tmp, tl))
			return xo_error(st, "%s%s", w->dir, m + tl);
		return st;
	}
	st = file_sum(path, shown, &size, &crc);
	if (!st)
		st = manifest_add(w, "file %s %" PRId64 " %08" PRIx32 "\n", name, size, crc);
	crash_hook();
	return st;
}

/* renameat2(RENAME_EXCHANGE): both names must exist; swaps them atomically. */
static int exchange(const char *a, const char *b)
{
#ifdef SYS_renameat2
	return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */);
#else
	errno = ENOSYS;
	return -1;
#endif
}

static void sync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		xo_output_sync(fd);
		close(fd);
	}
}

enum xo_status xo_ckpt_commit(struct xo_ckpt_writer *w, int64_t step)
{
	char path[PATH_MAX], parent[PATH_MAX], base[NAME_MAX + 1];
	struct stat sb;
	enum xo_status st;
	char *body;
	size_t blen;

	/* header first, then the file lines gathered so far, then "end" */
	blen = w->mlen;
	body = malloc(blen + 1);
	if (!body) {
		xo_ckpt_abort(w);
		return xo_error(XO_ENOMEM, "%s: out of memory", w->dir);
	}
	memcpy(body, w->manifest, blen);
	body[blen] = '\0';
	w->mlen = 0;
	st = manifest_add(w, MANIFEST_MAGIC "\nstep %" PRId64 "\n%send\n", step, body);
	free(body);
	if ((size_t)snprintf(path, sizeof(path), "%s/" MANIFEST, w->tmp) >= sizeof(path))
		st = xo_error(XO_EINVAL, "%s: path too long", w->dir);
	if (!st)
		st = xo_output_file(path, w->manifest, w->mlen);
	if (st) {
		xo_ckpt_abort(w);
		return st;
	}
	crash_hook();
	sync_path(w->tmp);
	if (lstat(w->target, &sb) == 0) {
		chmod(w->tmp, sb.st_mode & 07777); /* the directory keeps its mode */
		if (exchange(w->tmp, w->target)) {
			/* No RENAME_EXCHANGE on this file system: move the old one
			 * aside, the new one in (a kill between leaves DIR absent,
			 * never mixed), then drop the old. */
			char old[PATH_MAX];

			if ((size_t)snprintf(old, sizeof(old), "%s.old", w->tmp) >= sizeof(old) ||
			    rename(w->target, old)) {
				st = xo_error(XO_EIO, "%s: cannot replace: %s", w->dir,
				              strerror(errno));
				xo_ckpt_abort(w);
				return st;
			}
			if (rename(w->tmp, w->target)) {
				st = xo_error(XO_EIO, "%s: cannot replace: %s", w->dir,
				              strerror(errno));
				rename(old, w->target);
				xo_ckpt_abort(w);
				return st;
			}
			remove_flat_dir(old);
		} else {
			remove_flat_dir(w->tmp); /* now the old checkpoint */
		}
	} else if (rename(w->tmp, w->target)) {
		st = xo_error(XO_EIO, "%s: cannot create: %s", w->dir, strerror(errno));
		xo_ckpt_abort(w);
		return st;
	}
	w->tmp[0] = '\0';
	split_path(w->target, parent, sizeof(parent), base, sizeof(base));
	sync_path(parent);
	free(w->manifest);
	w->manifest = NULL;
	return XO_OK;
}

void xo_ckpt_abort(struct xo_ckpt_writer *w)
{
	if (!w)
		return;
	if (w->tmp[0])
		remove_flat_dir(w->tmp);
	w->tmp[0] = '\0';
	free(w->manifest);
	w->manifest = NULL;
}

/* One manifest line "file NAME SIZE CRC" checked against dir. */
static enum xo_status verify_line(const char *dir, char *line, int lineno)
{
	char name[NAME_MAX + 1], path[2 * PATH_MAX], shown[2 * PATH_MAX];
	long long want_size;
	unsigned want_crc;
	int64_t size;
	uint32_t crc;
	int used = 0;
	enum xo_status st;

	if (sscanf(line, "file %255s %lld %8x%n", name, &want_size, &want_crc, &used) != 3 ||
	    line[used] || strchr(name, '/') || name[0] == '.' || !ends_with(name, ".npy"))
		return xo_error(XO_EFORMAT, "%s: " MANIFEST " line %d is malformed", dir, lineno);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(shown, sizeof(shown), "%s/%s", dir, name);
	if (access(path, F_OK))
		return xo_error(XO_EFORMAT,
		                "%s: partial checkpoint: %s named by " MANIFEST " is missing", dir,
		                name);
	st = file_sum(path, shown, &size, &crc);
	if (st)
		return st;
	if (size != want_size || crc != want_crc)
		return xo_error(XO_EFORMAT,
		                "%s: mixed or partial checkpoint: %s (%" PRId64
		                " bytes, crc %08" PRIx32 ") is not the file " MANIFEST
		                " names (%lld bytes, crc %08x)",
		                dir, name, size, crc, want_size, want_crc);
	return XO_OK;
}

/* A directory without a manifest is plain NumPy/Keras weights, unless it
 * holds a "*.npy.tmp" file: the trace of a save by the writer before this
 * one that was killed, whose other files may come from two epochs. */
static enum xo_status plain_weights_check(const char *dir)
{
	enum xo_status st = XO_OK;
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return xo_error(XO_EIO, "%s: cannot read: %s", dir, strerror(errno));
	while ((e = readdir(d)))
		if (ends_with(e->d_name, ".npy.tmp")) {
			st = xo_error(XO_EFORMAT,
			              "%s: partial checkpoint: %s is left from an interrupted save "
			              "(no manifest)",
			              dir, e->d_name);
			break;
		}
	closedir(d);
	return st;
}

enum xo_status xo_checkpoint_verify(const char *dir)
{
	char path[PATH_MAX], line[1024];
	struct dirent *e;
	enum xo_status st = XO_OK;
	bool ended = false;
	int lineno = 0;
	char *listed = NULL;
	size_t llen = 0, lcap = 0;
	FILE *f;
	DIR *d;

	if ((size_t)snprintf(path, sizeof(path), "%s/" MANIFEST, dir) >= sizeof(path))
		return xo_error(XO_EINVAL, "%s: path too long", dir);
	if (access(path, F_OK) && errno == ENOENT)
		return plain_weights_check(dir);
	if ((st = xo_input_open(path, "a manifest", &f, NULL)))
		return st;
	while (!st && fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		lineno++;
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		else if (!feof(f))
			st = xo_error(XO_EFORMAT, "%s: " MANIFEST " line %d is too long", dir,
			              lineno);
		if (st)
			break;
		if (ended) {
			st = xo_error(XO_EFORMAT, "%s: " MANIFEST " has text after 'end'", dir);
		} else if (lineno == 1) {
			if (strcmp(line, MANIFEST_MAGIC))
				st = xo_error(XO_EFORMAT,
				              "%s: " MANIFEST " is not an xo checkpoint manifest",
				              dir);
		} else if (lineno == 2) {
			long long step;
			int used = 0;

			if (sscanf(line, "step %lld%n", &step, &used) != 1 || line[used] ||
			    step < 0)
				st = xo_error(XO_EFORMAT, "%s: " MANIFEST " line 2 is malformed",
				              dir);
		} else if (!strcmp(line, "end")) {
			ended = true;
		} else {
			st = verify_line(dir, line, lineno);
			if (!st) {
				/* remember the name: "\nNAME\n" search keys */
				size_t need = llen + n + 2;

				if (need + 1 > lcap) {
					char *g = realloc(listed, need * 2 + 1);

					if (!g) {
						st = xo_error(XO_ENOMEM, "%s: out of memory", dir);
						break;
					}
					listed = g;
					lcap = need * 2 + 1;
				}
				if (!llen)
					listed[llen++] = '\n';
				/* the name: after "file ", up to the next space
				 * (verify_line checked the line's form) */
				size_t k = strcspn(line + 5, " ");

				memcpy(listed + llen, line + 5, k);
				llen += k;
				listed[llen++] = '\n';
				listed[llen] = '\0';
			}
		}
	}
	fclose(f);
	if (!st && !ended)
		st = xo_error(XO_EFORMAT, "%s: " MANIFEST " is truncated (no 'end' line)", dir);
	if (st)
		goto out_free;
	d = opendir(dir);
	if (!d) {
		st = xo_error(XO_EIO, "%s: cannot read: %s", dir, strerror(errno));
		goto out_free;
	}
	while ((e = readdir(d))) {
		char key[NAME_MAX + 3];

		if (!ends_with(e->d_name, ".npy"))
			continue;
		snprintf(key, sizeof(key), "\n%s\n", e->d_name);
		if (!listed || !strstr(listed, key)) {
			st = xo_error(XO_EFORMAT,
			              "%s: mixed checkpoint: %s is not named by " MANIFEST
			              " (a file from another save)",
			              dir, e->d_name);
			break;
		}
	}
	closedir(d);
out_free:
	free(listed);
	return st;
}
