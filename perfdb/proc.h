/*
 * proc.h - running another program (git, gnuplot, cmake) without a shell.
 *
 * Every external program crossover runs goes through xo_proc_run: the program
 * and its arguments are an argument vector handed to posix_spawnp, so no byte
 * of a path, a benchmark name or a file's contents is ever parsed by a shell.
 * Used by perfdb (git identity, gnuplot) and cli (perf bisect and
 * continuous builds).
 */
#ifndef XO_PROC_H
#define XO_PROC_H

#include <stdbool.h>
#include <stddef.h>

#include "xo.h"

struct xo_proc {
	const char *const *argv; /* argv[0] is looked up in PATH; NULL-terminated */
	const char *cwd;         /* working directory of the child; NULL: the caller's */
	const char *stdin_path;  /* file read as stdin; NULL: /dev/null */
	const char *log_path;    /* stdout (unless captured) and stderr appended here;
	                            NULL: both discarded */
	bool capture;            /* stdout into *out (NUL-terminated, caller frees) */
	size_t capture_max;      /* capture limit in bytes; 0: 1 MiB. Beyond it: XO_EIO */
};

/*
 * Runs p->argv[0] and waits for it. XO_OK when it ran: *exit_code is its exit
 * status (128 + signal number when a signal ended it). XO_ENODEV when the
 * program is not found in PATH, XO_EIO when it could not be started or its
 * output could not be read; the message names the program. When p->capture,
 * *out receives stdout (also on a non-zero exit) and out_len, when not NULL,
 * its length.
 */
enum xo_status xo_proc_run(const struct xo_proc *p, int *exit_code, char **out,
                           size_t *out_len);

/* True when the program name resolves to an executable in PATH (or is a path
 * to one): what `command -v` answers, without a shell. */
bool xo_proc_found(const char *name);

#endif
