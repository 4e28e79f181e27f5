/*
 * status.c - status names, the per-thread error message, XO_ASSERT's abort,
 * and overflow-checked size arithmetic.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Length of the valid UTF-8 sequence at p (1-4), or 0 when the bytes there
 * are not one (overlong forms, surrogates and values past U+10FFFF are
 * not), or when it encodes a C1 control (U+0080-U+009F, which terminals
 * act on as they do on ESC) or the line and paragraph separators U+2028 and
 * U+2029 (Unicode-aware readers split a line there, as at U+0085). */
static size_t utf8_len(const unsigned char *p)
{
	size_t n;
	uint32_t c;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1fu;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0fu;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07u;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3fu);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff) || (c >= 0x80 && c <= 0x9f) || c == 0x2028 ||
	    c == 0x2029)
		return 0;
	return n;
}

char *xo_escape_line(char *out, size_t size, const char *in)
{
	const unsigned char *p = (const unsigned char *)(in ? in : "(null)");
	size_t n = 0;

	if (!size)
		return out;
	while (*p) {
		size_t k = utf8_len(p);

		if (k == 1 && (*p < 0x20 || *p == 0x7f))
			k = 0;
		if (k) {
			if (n + k >= size)
				break;
			memcpy(out + n, p, k);
			n += k;
			p += k;
		} else {
			if (n + 4 >= size)
				break;
			snprintf(out + n, 5, "\\x%02x", *p);
			n += 4;
			p++;
		}
	}
	out[n] = '\0';
	return out;
}

/*
 * Formats into a scratch buffer first, so a message may quote the previous
 * one (xo_error(s, "%s: %s", path, xo_last_error())) without vsnprintf
 * reading the buffer it writes. Then xo_escape_line: a message is always
 * one printable line, whatever it quotes (a newline or ESC from a file
 * name or a file's contents).
 */
enum xo_status xo_error(enum xo_status s, const char *fmt, ...)
{
	char raw[sizeof(last_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	xo_escape_line(last_error, sizeof(last_error), raw);
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
