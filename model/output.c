/*
 * output.c - every file the model commands write goes through here, so a
 * path from the user can never destroy something that is not a file of
 * ours (DESIGN section 10):
 *  - a symlink is followed to its final target, and the target is replaced
 *    (the link stays a link);
 *  - a target that exists and is not a regular file (a directory, device
 *    node, FIFO or socket) is refused before anything is created, so
 *    `--output /dev/null` leaves /dev/null a character device;
 *  - the data goes to an unnamed file (O_TMPFILE) in the target's own
 *    directory, is fsync'd (unless XO_FSYNC=0), then gets a hidden name and
 *    is renamed over the target: readers see the old file or the whole new
 *    one, and a kill before the commit leaves nothing behind;
 *  - every message names the path as the user gave it, never a temporary.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "xo.h"

/* Longest symlink chain followed (Linux's own limit). */
#define OUTPUT_MAX_LINKS 40

/* "dir/.base.xo-<16 random hex digits>": a name nobody can predict, so
 * none can be planted before it is created (with O_EXCL or linkat, which
 * never follow or replace what is there). */
static bool random_name(char *out, size_t size, const char *dir, const char *base)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		/* no getrandom: the clock and pid still vary per attempt */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
	}
	return (size_t)snprintf(out, size, "%s/.%s.xo-%016" PRIx64, dir, base, r) < size;
}

const char *xo_file_kind(unsigned mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symlink";
	if (S_ISREG(mode))
		return "a regular file";
	return "not a regular file";
}

enum xo_status xo_input_open(const char *path, const char *what, FILE **out, struct stat *sb)
{
	struct stat st_buf, *st = sb ? sb : &st_buf;
	int fd, flags;

	*out = NULL;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return xo_error(XO_EIO, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		if (S_ISDIR(st->st_mode))
			return xo_error(XO_EIO, "%s: is a directory, not %s", path, what);
		return xo_error(XO_EIO, "%s: not a regular file (%s), not %s", path,
		                xo_file_kind(st->st_mode), what);
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ||
	    !(*out = fdopen(fd, "rb"))) {
		enum xo_status e = xo_error(XO_EIO, "%s: cannot open: %s", path, strerror(errno));

		close(fd);
		return e;
	}
	return XO_OK;
}

/* dir part of path ("." when none) into out. */
static bool dir_of(const char *path, char *out, size_t size)
{
	const char *slash = strrchr(path, '/');
	int n;

	if (!slash)
		n = snprintf(out, size, ".");
	else if (slash == path)
		n = snprintf(out, size, "/");
	else
		n = snprintf(out, size, "%.*s", (int)(slash - path), path);
	return n >= 0 && (size_t)n < size;
}

unsigned xo_output_dir_mode(void)
{
	char line[128];
	unsigned mask = 022;
	FILE *f = fopen("/proc/self/status", "r");

	/* read, not umask(): umask() sets it too, racing other threads */
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &mask) == 1)
			break;
	if (f)
		fclose(f);
	return 0777u & ~mask;
}

enum xo_status xo_output_target(const char *path, bool want_dir, char *target, size_t size,
                                bool *exists)
{
	char cur[PATH_MAX], link[PATH_MAX], dir[PATH_MAX];
	struct stat sb;

	if (!path || !*path || !target)
		return xo_error(XO_EINVAL, "output: empty path");
	if ((size_t)snprintf(cur, sizeof(cur), "%s", path) >= sizeof(cur))
		return xo_error(XO_EINVAL, "%s: path too long", path);
	/* "dir/" names dir itself: without the slash, lstat sees a symlink
	 * as a symlink rather than following it. */
	for (size_t n = strlen(cur); n > 1 && cur[n - 1] == '/'; n--)
		cur[n - 1] = '\0';
	for (int hops = 0;; hops++) {
		ssize_t n;

		if (lstat(cur, &sb)) {
			if (errno != ENOENT)
				return xo_error(XO_EIO, "%s: cannot stat: %s", path,
				                strerror(errno));
			*exists = false;
			if (!dir_of(cur, dir, sizeof(dir)) || stat(dir, &sb) ||
			    !S_ISDIR(sb.st_mode))
				return xo_error(XO_EIO,
				                "%s: cannot create: directory %s does not exist",
				                path, dir);
			break;
		}
		if (!S_ISLNK(sb.st_mode)) {
			*exists = true;
			if (want_dir ? !S_ISDIR(sb.st_mode) : !S_ISREG(sb.st_mode))
				return xo_error(XO_EINVAL,
				                "%s: is %s, not %s: refusing to replace it", path,
				                xo_file_kind(sb.st_mode),
				                want_dir ? "a directory" : "a regular file");
			break;
		}
		if (hops == OUTPUT_MAX_LINKS)
			return xo_error(XO_EINVAL, "%s: too many levels of symlinks", path);
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return xo_error(XO_EIO, "%s: cannot read the symlink: %s", path,
			                strerror(errno));
		link[n] = '\0';
		if (link[0] == '/') {
			memcpy(cur, link, (size_t)n + 1);
		} else {
			if (!dir_of(cur, dir, sizeof(dir)) ||
			    (size_t)snprintf(cur, sizeof(cur), "%s/%s", dir, link) >= sizeof(cur))
				return xo_error(XO_EINVAL, "%s: symlink target path too long",
				                path);
		}
	}
	if ((size_t)snprintf(target, size, "%s", cur) >= size)
		return xo_error(XO_EINVAL, "%s: path too long", path);
	return XO_OK;
}

enum xo_status xo_output_open(struct xo_output *o, const char *path)
{
	char dir[PATH_MAX];
	bool exists = false;
	struct stat sb;
	enum xo_status st;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!path)
		return xo_error(XO_EINVAL, "output: NULL path");
	snprintf(o->path, sizeof(o->path), "%s", path);
	st = xo_output_target(path, false, o->target, sizeof(o->target), &exists);
	if (st)
		return st;
	o->keep_mode = exists && stat(o->target, &sb) == 0;
	o->mode = o->keep_mode ? (unsigned)(sb.st_mode & 07777) : 0;
	if (!dir_of(o->target, dir, sizeof(dir)))
		return xo_error(XO_EINVAL, "%s: path too long", path);
#ifdef O_TMPFILE
	o->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
#endif
	if (o->fd < 0) {
		/* No O_TMPFILE on this file system: a hidden named temporary. */
		const char *base = strrchr(o->target, '/');

		base = base ? base + 1 : o->target;
		for (int i = 0; o->fd < 0 && i < 100; i++) {
			if (!random_name(o->tmp, sizeof(o->tmp), dir, base))
				return xo_error(XO_EINVAL, "%s: path too long", path);
			o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			             0666);
			if (o->fd < 0 && errno != EEXIST)
				break;
		}
		if (o->fd < 0) {
			o->tmp[0] = '\0';
			return xo_error(XO_EIO, "%s: cannot create: %s", path, strerror(errno));
		}
	}
	return XO_OK;
}

enum xo_status xo_output_write(struct xo_output *o, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(o->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return xo_error(XO_EIO, "%s: write failed: %s", o->path,
			                w < 0 ? strerror(errno) : "no progress");
		p += w;
		n -= (size_t)w;
	}
	return XO_OK;
}

int xo_output_sync(int fd)
{
	static int skip = -1;

	if (skip < 0) {
		const char *e = getenv("XO_FSYNC");

		skip = e && !strcmp(e, "0");
	}
	return skip ? 0 : fsync(fd);
}

/* fsync of a directory, so a rename in it is durable. */
static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		xo_output_sync(fd);
		close(fd);
	}
}

enum xo_status xo_output_commit(struct xo_output *o)
{
	char dir[PATH_MAX], proc[64];
	enum xo_status st = XO_OK;
	bool exists = false;
	char target[PATH_MAX];

	if (o->keep_mode && fchmod(o->fd, o->mode & 07777)) {
		st = xo_error(XO_EIO, "%s: cannot set the mode: %s", o->path, strerror(errno));
		goto out_abort;
	}
	if (xo_output_sync(o->fd)) {
		st = xo_error(XO_EIO, "%s: write failed: %s", o->path, strerror(errno));
		goto out_abort;
	}
	/* The target may have changed since open: check it again. */
	st = xo_output_target(o->path, false, target, sizeof(target), &exists);
	if (st)
		goto out_abort;
	if (strcmp(target, o->target)) {
		st = xo_error(XO_EIO, "%s: changed while it was being written", o->path);
		goto out_abort;
	}
	dir_of(o->target, dir, sizeof(dir));
	if (!o->tmp[0]) {
		const char *base = strrchr(o->target, '/');

		base = base ? base + 1 : o->target;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
		for (int i = 0; i < 100; i++) {
			if (!random_name(o->tmp, sizeof(o->tmp), dir, base)) {
				st = xo_error(XO_EINVAL, "%s: path too long", o->path);
				o->tmp[0] = '\0';
				goto out_abort;
			}
			if (!linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW))
				break;
			/* no /proc: AT_EMPTY_PATH (needs CAP_DAC_READ_SEARCH) */
			if (errno == ENOENT && !linkat(o->fd, "", AT_FDCWD, o->tmp, AT_EMPTY_PATH))
				break;
			if (errno != EEXIST || i == 99) {
				st = xo_error(XO_EIO, "%s: cannot create: %s", o->path,
				              strerror(errno));
				o->tmp[0] = '\0';
				goto out_abort;
			}
		}
	}
	close(o->fd);
	o->fd = -1;
	if (rename(o->tmp, o->target)) {
		st = xo_error(XO_EIO, "%s: cannot replace: %s", o->path, strerror(errno));
		goto out_abort;
	}
	o->tmp[0] = '\0';
	sync_dir(dir);
	return XO_OK;
out_abort:
	xo_output_abort(o);
	return st;
}

void xo_output_abort(struct xo_output *o)
{
	if (!o)
		return;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = '\0';
}

enum xo_status xo_output_file(const char *path, const void *buf, size_t n)
{
	struct xo_output o;
	enum xo_status st = xo_output_open(&o, path);

	if (!st)
		st = xo_output_write(&o, buf, n);
	if (!st)
		return xo_output_commit(&o);
	xo_output_abort(&o);
	return st;
}
