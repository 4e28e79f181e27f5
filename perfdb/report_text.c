/*
 * report_text.c - the strings the report's parts write: file names from
 * benchmark names, gnuplot string literals and HTML text, each safe for
 * where it goes whatever the store holds.
 */
#include <stdio.h>
#include <string.h>

#include "report.h"

/* A file name from a benchmark name: [A-Za-z0-9._-] kept, the rest '_'. */
void xo_perf_safe_name(const char *name, char *out, size_t size)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < size; i++) {
		char c = name[i];

		out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		                 (c >= '0' && c <= '9') || c == '.' || c == '-'
		             ? c
		             : '_';
	}
	out[i] = '\0';
}

/*
 * A string that reaches gnuplot: only [A-Za-z0-9 ._/:+=,()-] kept, the rest
 * '_'. Inside gnuplot's single quotes none of these is special: no quote to
 * end the string, no backquote (command substitution), no '@' (macros), no
 * newline or ';' to start a command. Benchmark and peer
 * names come from the store, which an import fills from another program.
 */
void xo_perf_gp_safe(const char *in, char *out, size_t size)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < size; i++) {
		char c = in[i];

		out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		                 (c >= '0' && c <= '9') || strchr(" ._/:+=,()-", c)
		             ? c
		             : '_';
	}
	out[i] = '\0';
}

void xo_perf_html_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else if (*s == '\'')
			fputs("&#39;", f);
		else
			fputc(*s, f);
	}
}
