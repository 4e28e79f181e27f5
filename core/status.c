/*
 * status.c - status names, the per-thread error message, XO_ASSERT's abort,
 * and overflow-checked size arithmetic.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "xo.h"

static _Thread_local char last_error[1024];

static const char *const status_names[XO_STATUS_COUNT] = {
	[XO_OK] = "ok",
	[XO_EINVAL] = "invalid argument",
	[XO_ENOMEM] = "out of memory",
	[XO_EOVERFLOW] = "size overflow",
	[XO_EBACKEND] = "wrong backend",
	[XO_EIO] = "I/O error",
	[XO_EFORMAT] = "malformed file",
	[XO_EOPENCL] = "OpenCL error",
	[XO_ENODEV] = "no such device",
	[XO_ERESOURCE] = "out of device resources",
	[XO_EDB] = "database error",
};

const char *xo_status_str(enum xo_status s)
{
	if ((unsigned)s >= XO_STATUS_COUNT)
		return "unknown status";
	return status_names[s];
}

const char *xo_last_error(void)
{
	return last_error;
}

/*
 * Formats into a scratch buffer first, so a message may quote the previous
 * one (xo_error(s, "%s: %s", path, xo_last_error())) without vsnprintf
 * reading the buffer it writes. Then every control byte (a newline or ESC
 * from a file name or a file's contents) is written as \xHH: a message is
 * always one printable line, whatever it quotes.
 */
enum xo_status xo_error(enum xo_status s, const char *fmt, ...)
{
	char raw[sizeof(last_error)];
	size_t n = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	for (const unsigned char *p = (const unsigned char *)raw; *p; p++) {
		if (*p >= 0x20 && *p != 0x7f) {
			if (n + 1 >= sizeof(last_error))
				break;
			last_error[n++] = (char)*p;
		} else {
			if (n + 4 >= sizeof(last_error))
				break;
			snprintf(last_error + n, 5, "\\x%02x", *p);
			n += 4;
		}
	}
	last_error[n] = '\0';
	return s;
}

void xo_error_clear(void)
{
	last_error[0] = '\0';
}

void xo_assert_fail(const char *file, int line, const char *expr)
{
	fprintf(stderr, "%s:%d: XO_ASSERT(%s) failed\n", file, line, expr);
	fflush(stderr);
	abort();
}

bool xo_mul_ok(int64_t a, int64_t b, int64_t *out)
{
	int64_t r;

	if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r))
		return false;
	*out = r;
	return true;
}

bool xo_add_ok(int64_t a, int64_t b, int64_t *out)
{
	int64_t r;

	if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r))
		return false;
	*out = r;
	return true;
}
