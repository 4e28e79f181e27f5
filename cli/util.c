/*
 * util.c - helpers shared by the `xo` subcommands: whole-number option
 * values and JSON string output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

bool xo_cli_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !((*s >= '0' && *s <= '9') || *s == '-'))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool xo_cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

void xo_cli_json_fstring(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void xo_cli_json_string(const char *s)
{
	xo_cli_json_fstring(stdout, s);
}

void xo_cli_json_params(FILE *f, const char *line)
{
	char buf[1024], *tok, *save = NULL;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	fputc('{', f);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = '\0';
		fprintf(f, "%s", n++ ? ", " : "");
		xo_cli_json_fstring(f, tok);
		fputs(": ", f);
		xo_cli_json_value(f, eq + 1);
	}
	fputc('}', f);
}

void xo_cli_json_value(FILE *f, const char *v)
{
	char *end;

	errno = 0;
	(void)strtod(v, &end);
	/* JSON numbers have no leading '+', no hex, no inf/nan: only digits,
	 * sign, point and exponent pass, and a leading '.' or '-.' does not */
	if (*v && !*end && !errno && strspn(v, "0123456789+-.eE") == strlen(v) && *v != '+' &&
	    *v != '.' && strncmp(v, "-.", 2))
		fputs(v, f);
	else
		xo_cli_json_fstring(f, v);
}

void xo_cli_cpu_model(char *buf, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, size, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			c++;
			while (*c == ' ')
				c++;
			c[strcspn(c, "\n")] = 0;
			snprintf(buf, size, "%s", c);
			break;
		}
	}
	fclose(f);
}
