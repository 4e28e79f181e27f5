/*
 * jsonout.h - what every `xo perf ... --json` command shares: the text it
 * would print goes nowhere, the JSON document goes to out.
 */
#ifndef XO_PERFDB_JSONOUT_H
#define XO_PERFDB_JSONOUT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

/* Where a command's text goes: out, or (json) a stream that discards it.
 * NULL only when the stream cannot be made (out of memory). */
FILE *xo_perf_text_out(bool json, FILE *out);
/* Closes a stream xo_perf_text_out made (not out itself). */
void xo_perf_text_done(FILE *t, FILE *out);
/* root as indented ASCII JSON and a newline. */
void xo_perf_json_print(json_t *root, FILE *out);

struct xo_probe;
/* Every struct xo_probe field into object o under its own name, null where
 * not finite (`xo probe --json`, `xo explain --json`), and back: the figures
 * of such an object into *p, NAN where absent or null (the probe child of
 * `xo seed`). One table (jsonout.c), so a new figure is named once. */
void xo_probe_json_set(json_t *o, const struct xo_probe *p);
void xo_probe_json_get(json_t *o, struct xo_probe *p);

#endif
