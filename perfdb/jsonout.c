/*
 * jsonout.c - the text sink and the JSON writer of the --json outputs
 * (jsonout.h). The sink is an in-memory stream that discards, so a command
 * prints its text the same way with or without --json and depends on no
 * device file.
 */
#define _GNU_SOURCE
#include "jsonout.h"

#include <sys/types.h>

static ssize_t discard(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	(void)buf;
	return (ssize_t)n;
}

FILE *xo_perf_text_out(bool json, FILE *out)
{
	if (!json)
		return out;
	return fopencookie(NULL, "w", (cookie_io_functions_t){.write = discard});
}

void xo_perf_text_done(FILE *t, FILE *out)
{
	if (t && t != out)
		fclose(t);
}

void xo_perf_json_print(json_t *root, FILE *out)
{
	json_dumpf(root, out, JSON_INDENT(1) | JSON_ENSURE_ASCII);
	fputc('\n', out);
}
