/*
 * proc.c - running another program without a shell (see proc.h): posix_spawnp
 * with an argument vector, stdin from a file or /dev/null, stdout captured
 * through a pipe or sent with stderr to a log file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

extern char **environ;

bool xo_proc_found(const char *name)
{
	const char *path = getenv("PATH");
	struct stat sb;
	char buf[4096];

	if (!name || !*name)
		return false;
	if (strchr(name, '/'))
		return !stat(name, &sb) && S_ISREG(sb.st_mode) && !access(name, X_OK);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		int len = snprintf(buf, sizeof(buf), "%.*s/%s", (int)(n ? n : 1), n ? path : ".",
		                   name);

		if (len > 0 && (size_t)len < sizeof(buf) && !stat(buf, &sb) &&
		    S_ISREG(sb.st_mode) && !access(buf, X_OK))
			return true;
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

/* Reads fd to EOF into a growing buffer of at most max bytes (the rest is
 * drained so the child never blocks on a full pipe). */
static enum xo_status read_all(int fd, const char *prog, size_t max, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap), *grown;
	bool over = false;
	char sink[4096];

	if (!buf)
		return xo_error(XO_ENOMEM, "%s: out of memory reading its output", prog);
	for (;;) {
		ssize_t r;

		if (!over && n + 1 == cap) {
			if (cap > max) {
				over = true;
			} else {
				grown = realloc(buf, cap * 2);
				if (!grown) {
					free(buf);
					return xo_error(XO_ENOMEM, "%s: out of memory reading its output",
					                prog);
				}
				buf = grown;
				cap *= 2;
			}
		}
		if (over)
			r = read(fd, sink, sizeof(sink));
		else
			r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			return xo_error(XO_EIO, "%s: reading its output: %s", prog, strerror(e));
		}
		if (r == 0)
			break;
		if (!over)
			n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	if (over || n > max)
		return xo_error(XO_EIO, "%s: output longer than %zu bytes", prog, max);
	return XO_OK;
}

enum xo_status xo_proc_run(const struct xo_proc *p, int *exit_code, char **out,
                           size_t *out_len)
{
	const char *prog = p->argv[0];
	const char *sink = p->log_path ? p->log_path : "/dev/null";
	int log_flags = p->log_path ? O_WRONLY | O_CREAT | O_APPEND : O_WRONLY;
	posix_spawn_file_actions_t fa;
	int pipefd[2] = {-1, -1};
	enum xo_status st = XO_OK;
	char *buf = NULL;
	size_t len = 0;
	pid_t pid;
	int rc, wst;

	XO_ASSERT(p && p->argv && p->argv[0] && exit_code);
	XO_ASSERT(!p->capture || out);
	*exit_code = -1;
	if (out)
		*out = NULL;
	if (p->capture && pipe2(pipefd, O_CLOEXEC))
		return xo_error(XO_EIO, "%s: cannot create a pipe: %s", prog, strerror(errno));
	if ((rc = posix_spawn_file_actions_init(&fa))) {
		st = xo_error(XO_ENOMEM, "%s: cannot prepare to start it: %s", prog, strerror(rc));
		goto out_close_pipe;
	}
	/* Paths are opened before the chdir, so they are relative to the caller. */
	rc = posix_spawn_file_actions_addopen(&fa, 0, p->stdin_path ? p->stdin_path : "/dev/null",
	                                      O_RDONLY, 0);
	if (!rc && p->capture)
		rc = posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	else if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 1, sink, log_flags, 0644);
	if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 2, sink, log_flags, 0644);
	if (!rc && p->cwd)
		rc = posix_spawn_file_actions_addchdir_np(&fa, p->cwd);
	if (rc) {
		st = xo_error(XO_ENOMEM, "%s: cannot prepare to start it: %s", prog, strerror(rc));
		goto out_destroy;
	}
	rc = posix_spawnp(&pid, prog, &fa, NULL, (char *const *)p->argv, environ);
	if (rc == ENOENT) {
		st = xo_error(XO_ENODEV, "%s: not found in PATH", prog);
		goto out_destroy;
	}
	if (rc) {
		st = xo_error(XO_EIO, "%s: cannot start it: %s", prog, strerror(rc));
		goto out_destroy;
	}
	if (p->capture) {
		close(pipefd[1]);
		pipefd[1] = -1;
		st = read_all(pipefd[0], prog, p->capture_max ? p->capture_max : (size_t)1 << 20, &buf,
		              &len);
	}
	while (waitpid(pid, &wst, 0) < 0) {
		if (errno != EINTR) {
			if (!st)
				st = xo_error(XO_EIO, "%s: waiting for it: %s", prog, strerror(errno));
			goto out_destroy;
		}
	}
	if (WIFEXITED(wst))
		*exit_code = WEXITSTATUS(wst);
	else if (WIFSIGNALED(wst))
		*exit_code = 128 + WTERMSIG(wst);
	if (!st && p->capture) {
		*out = buf;
		buf = NULL;
		if (out_len)
			*out_len = len;
	}
out_destroy:
	posix_spawn_file_actions_destroy(&fa);
out_close_pipe:
	free(buf);
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	return st;
}
