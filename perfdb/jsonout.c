/*
 * jsonout.c - the text sink and the JSON writer of the --json outputs
 * (jsonout.h). The sink is an in-memory stream that discards, so a command
 * prints its text the same way with or without --json and depends on no
 * device file.
 */
#define _GNU_SOURCE
#include "jsonout.h"

#include <math.h>
#include <stddef.h>
#include <sys/types.h>

#include "xo.h"

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

/* struct xo_probe's figures in `xo probe --json`'s order; units is the one
 * int */
static const struct {
	const char *key;
	size_t off;
} probe_keys[] = {
    {"launch_s", offsetof(struct xo_probe, launch_s)},
    {"enqueue_s", offsetof(struct xo_probe, enqueue_s)},
    {"sync_s", offsetof(struct xo_probe, sync_s)},
    {"h2d_lat_s", offsetof(struct xo_probe, h2d_lat_s)},
    {"h2d_bw", offsetof(struct xo_probe, h2d_bw)},
    {"d2h_lat_s", offsetof(struct xo_probe, d2h_lat_s)},
    {"d2h_bw", offsetof(struct xo_probe, d2h_bw)},
    {"flops", offsetof(struct xo_probe, flops)},
    {"mem_bw", offsetof(struct xo_probe, mem_bw)},
    {"handoff_s", offsetof(struct xo_probe, handoff_s)},
    {"units", offsetof(struct xo_probe, units)},
    {"wall_s", offsetof(struct xo_probe, wall_s)},
    {"step_s", offsetof(struct xo_probe, step_s)},
    {"lane_mac_s", offsetof(struct xo_probe, lane_mac_s)},
};

#define PROBE_UNITS offsetof(struct xo_probe, units)

void xo_probe_json_set(json_t *o, const struct xo_probe *p)
{
	for (size_t i = 0; i < sizeof(probe_keys) / sizeof(probe_keys[0]); i++) {
		const char *at = (const char *)p + probe_keys[i].off;
		double v;

		if (probe_keys[i].off == PROBE_UNITS) {
			json_object_set_new(o, probe_keys[i].key, json_integer(p->units));
			continue;
		}
		v = *(const double *)at;
		json_object_set_new(o, probe_keys[i].key, isfinite(v) ? json_real(v) : json_null());
	}
}

void xo_probe_json_get(json_t *o, struct xo_probe *p)
{
	for (size_t i = 0; i < sizeof(probe_keys) / sizeof(probe_keys[0]); i++) {
		json_t *v = json_object_get(o, probe_keys[i].key);

		if (probe_keys[i].off == PROBE_UNITS)
			p->units = (int)json_integer_value(v);
		else
			*(double *)((char *)p + probe_keys[i].off) =
			    json_is_number(v) ? json_number_value(v) : NAN;
	}
}
