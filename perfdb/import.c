/*
 * import.c - `xo perf import --peer NAME --json FILE`: stores another
 * framework's timings of the same workloads (scripts/peer_pytorch.py via
 * scripts/peer_store.py) as model benchmarks of device NAME, so the crossover
 * plots show crossover's cpu and cl curves beside e.g. PyTorch. The file:
 *
 *   {"device": "pytorch-cpu", "model": "seed", "note": "torch 2.3, 2 threads",
 *    "results": [{"benchmark": "train_step", "batch": 512,
 *                 "samples_s": [0.0031, 0.0030, ...]}, ...]}
 *
 * samples_s are per-call wall times in seconds.
 *
 * The file comes from another program, possibly another machine: it is
 * untrusted input. It is parsed by jansson (a maintained, fuzzed
 * JSON library; see docs/perf.md for why not a hand-written reader), then
 * every value is checked before it is used: names are restricted to a safe
 * set of bytes (they become benchmark names, file names of plots and text in
 * gnuplot scripts and HTML), the note may not hold control bytes, batch sizes
 * are integers in [1, XO_PERF_IMPORT_MAX_BATCH], and times are finite and in
 * [XO_PERF_IMPORT_MIN_S, XO_PERF_IMPORT_MAX_S]. Nothing is stored unless the
 * whole file is valid.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfdb.h"

/* Bytes a peer or model name may hold: they end up in benchmark names, plot
 * file names, gnuplot strings and HTML, so nothing any of those quote. */
static const char name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "0123456789._+-";

static bool safe_name(const char *s, size_t max)
{
	size_t n = strlen(s);

	return n > 0 && n <= max && strspn(s, name_chars) == n && s[0] != '.' && s[0] != '-';
}

static bool has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

/*
 * A JSON number that is an integer in [lo, hi]: 512 or 512.0, not 512.5,
 * 1e300, or a string.
 */
static bool json_int_in(const json_t *v, int64_t lo, int64_t hi, int64_t *out)
{
	double d;

	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);

		if (i < lo || i > hi)
			return false;
		*out = (int64_t)i;
		return true;
	}
	if (!json_is_real(v))
		return false;
	d = json_real_value(v);
	/* the range test first: only then is the cast defined */
	if (!(d >= (double)lo && d <= (double)hi) || d != floor(d))
		return false;
	*out = (int64_t)d;
	return true;
}

const char *xo_perf_sample_check(const char *metric, double v)
{
	bool instr = metric && !strcmp(metric, "instructions");

	if (!metric || (!instr && strcmp(metric, "time")))
		return "belongs to a series of an unknown metric";
	if (isnan(v))
		return "is NaN";
	if (isinf(v))
		return v > 0 ? "is Inf" : "is -Inf";
	if (v < 0)
		return "is negative";
	if (instr)
		return v >= 1.0 && v <= XO_PERF_IMPORT_MAX_INSTR
		           ? NULL
		           : "is outside 1..8.64e14 instructions per call";
	return v >= XO_PERF_IMPORT_MIN_S && v <= XO_PERF_IMPORT_MAX_S
	           ? NULL
	           : "is outside 1e-9..86400 seconds per call";
}

static bool json_time(const json_t *v, double *out)
{
	double d;

	if (!json_is_number(v))
		return false;
	d = json_number_value(v);
	if (xo_perf_sample_check("time", d))
		return false;
	*out = d;
	return true;
}

void xo_perf_import_free(struct xo_perf_import *imp)
{
	if (!imp)
		return;
	for (size_t i = 0; i < imp->n; i++)
		free(imp->res[i].samples);
	free(imp->res);
	imp->res = NULL;
	imp->n = 0;
}

/* One element of "results" into x (x->samples allocated here). */
static enum xo_status parse_result(const json_t *r, const char *origin, size_t i,
                                   const struct xo_perf_import *imp, struct xo_perf_result *x)
{
	const json_t *name = json_object_get(r, "benchmark"), *samples = json_object_get(r,
	                                                                                 "samples_s");
	const char *what;
	int64_t batch;
	size_t ns;

	if (!json_is_object(r))
		return xo_error(XO_EFORMAT, "%s: results[%zu] is not an object", origin, i);
	what = json_string_value(name);
	if (!what || (strcmp(what, "train_step") && strcmp(what, "predict")))
		return xo_error(XO_EFORMAT,
		                "%s: results[%zu].benchmark must be \"train_step\" or \"predict\"",
		                origin, i);
	if (!json_int_in(json_object_get(r, "batch"), 1, XO_PERF_IMPORT_MAX_BATCH, &batch))
		return xo_error(XO_EFORMAT,
		                "%s: results[%zu].batch must be an integer from 1 to %d", origin, i,
		                XO_PERF_IMPORT_MAX_BATCH);
	ns = json_array_size(samples);
	if (!json_is_array(samples) || ns == 0 || ns > XO_PERF_IMPORT_MAX_SAMPLES)
		return xo_error(XO_EFORMAT,
		                "%s: results[%zu].samples_s must be an array of 1 to %d times",
		                origin, i, XO_PERF_IMPORT_MAX_SAMPLES);
	x->samples = calloc(ns, sizeof(*x->samples));
	if (!x->samples)
		return xo_error(XO_ENOMEM, "%s: out of memory", origin);
	for (size_t k = 0; k < ns; k++)
		if (!json_time(json_array_get(samples, k), &x->samples[k].wall_s))
			return xo_error(XO_EFORMAT,
			                "%s: results[%zu].samples_s[%zu] must be a number of seconds "
			                "from %g to %g",
			                origin, i, k, XO_PERF_IMPORT_MIN_S, XO_PERF_IMPORT_MAX_S);
	x->n = ns;
	x->reps = 1;
	x->b.batch = batch;
	snprintf(x->b.name, sizeof(x->b.name), "model/%s/%s/b%lld/%s", imp->model, what,
	         (long long)batch, imp->device);
	snprintf(x->b.kind, sizeof(x->b.kind), "model");
	snprintf(x->b.device, sizeof(x->b.device), "%s", imp->device);
	snprintf(x->b.what, sizeof(x->b.what), "%s", what);
	snprintf(x->b.model, sizeof(x->b.model), "%s", imp->model);
	snprintf(x->b.params, sizeof(x->b.params), "model=%s batch=%lld peer=%s", imp->model,
	         (long long)batch, imp->device);
	snprintf(x->b.version, sizeof(x->b.version), "peer");
	return XO_OK;
}

enum xo_status xo_perf_import_parse(const char *text, size_t len, const char *origin,
                                    const char *peer, struct xo_perf_import *imp)
{
	json_error_t jerr;
	json_t *root, *results;
	const char *s;
	enum xo_status st = XO_OK;
	size_t nres;

	memset(imp, 0, sizeof(*imp));
	/* duplicate keys are refused: which one counts would be a guess */
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return xo_error(XO_EFORMAT, "%s: not valid JSON: %s (line %d, column %d)", origin,
		                jerr.text, jerr.line, jerr.column);
	if (!json_is_object(root)) {
		st = xo_error(XO_EFORMAT, "%s: expected a JSON object at the top", origin);
		goto out;
	}

	s = peer ? peer : json_string_value(json_object_get(root, "device"));
	if (!s || !safe_name(s, sizeof(imp->device) - 1) || !strcmp(s, "ref") ||
	    !strcmp(s, "cpu") || !strncmp(s, "cl", 2)) {
		st = xo_error(XO_EINVAL,
		              "%s: peer name '%.64s' must be 1 to %zu of [A-Za-z0-9._+-] (not "
		              "starting with '.' or '-') and not ref, cpu or cl*",
		              peer ? "--peer" : origin, s ? s : "", sizeof(imp->device) - 1);
		goto out;
	}
	snprintf(imp->device, sizeof(imp->device), "%s", s);

	snprintf(imp->model, sizeof(imp->model), "seed");
	if (json_object_get(root, "model")) {
		s = json_string_value(json_object_get(root, "model"));
		if (!s || !safe_name(s, sizeof(imp->model) - 1)) {
			st = xo_error(XO_EFORMAT,
			              "%s: \"model\" must be a string of 1 to %zu of [A-Za-z0-9._+-]",
			              origin, sizeof(imp->model) - 1);
			goto out;
		}
		snprintf(imp->model, sizeof(imp->model), "%s", s);
	}

	if (json_object_get(root, "note")) {
		s = json_string_value(json_object_get(root, "note"));
		if (!s || has_control(s) || strlen(s) >= sizeof(imp->note)) {
			st = xo_error(XO_EFORMAT,
			              "%s: \"note\" must be a string of at most %zu bytes without "
			              "control characters",
			              origin, sizeof(imp->note) - 1);
			goto out;
		}
		snprintf(imp->note, sizeof(imp->note), "%s", s);
	}

	results = json_object_get(root, "results");
	nres = json_array_size(results);
	if (!json_is_array(results) || nres == 0 || nres > XO_PERF_IMPORT_MAX_RESULTS) {
		st = xo_error(XO_EFORMAT, "%s: \"results\" must be an array of 1 to %d results",
		              origin, XO_PERF_IMPORT_MAX_RESULTS);
		goto out;
	}
	imp->res = calloc(nres, sizeof(*imp->res));
	if (!imp->res) {
		st = xo_error(XO_ENOMEM, "%s: out of memory", origin);
		goto out;
	}
	for (size_t i = 0; i < nres; i++) {
		struct xo_perf_result *x = &imp->res[imp->n];

		imp->n++; /* owns x->samples from here, for xo_perf_import_free */
		if ((st = parse_result(json_array_get(results, i), origin, i, imp, x)))
			goto out;
		/* one result per benchmark and batch: the store keeps one per run */
		for (size_t k = 0; k < i; k++)
			if (!strcmp(imp->res[k].b.name, x->b.name)) {
				st = xo_error(XO_EFORMAT, "%s: results[%zu] repeats results[%zu] (%s)",
				              origin, i, k, x->b.name);
				goto out;
			}
	}

out:
	if (st)
		xo_perf_import_free(imp);
	json_decref(root);
	return st;
}

/*
 * The whole file, at most max bytes. A directory is refused by name; a pipe
 * (`--json <(...)`, /dev/stdin) is read like a file, and anything endless
 * (/dev/zero) stops at max.
 */
static enum xo_status read_file(const char *path, size_t max, char **out, size_t *len)
{
	size_t cap = 65536, n = 0, got;
	struct stat sb;
	char *buf, *grown;
	FILE *f;

	*out = NULL;
	if (!stat(path, &sb) && S_ISDIR(sb.st_mode))
		return xo_error(XO_EINVAL, "%s: is a directory, not a JSON file", path);
	f = fopen(path, "rb");
	if (!f)
		return xo_error(XO_EIO, "%s: %s", path, strerror(errno));
	buf = malloc(cap);
	if (!buf)
		goto out_nomem;
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n > max) {
			fclose(f);
			free(buf);
			return xo_error(XO_EFORMAT, "%s: more than the %zu bytes a peer file may have",
			                path, max);
		}
		if (n == cap) {
			grown = realloc(buf, cap *= 2);
			if (!grown)
				goto out_nomem;
			buf = grown;
		}
	}
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return xo_error(XO_EIO, "%s: read error", path);
	}
	fclose(f);
	*out = buf;
	*len = n;
	return XO_OK;

out_nomem:
	fclose(f);
	free(buf);
	return xo_error(XO_ENOMEM, "%s: out of memory", path);
}

enum xo_status xo_perf_import(struct xo_perfdb *db, const char *peer, const char *json_path,
                              FILE *out)
{
	struct xo_perf_import imp;
	struct xo_perf_commit commit;
	struct xo_perf_testbed tb;
	char *text = NULL, note[640];
	enum xo_status st;
	int64_t run_id;
	size_t len = 0;

	if ((st = read_file(json_path, XO_PERF_IMPORT_MAX_BYTES, &text, &len)))
		return st;
	st = xo_perf_import_parse(text, len, json_path, peer, &imp);
	free(text);
	if (st)
		return st;
	xo_perf_commit_probe(xo_perf_source_dir(), &commit);
	xo_perf_testbed_probe(&tb);
	snprintf(note, sizeof(note), "import --peer %s%s%s", imp.device, imp.note[0] ? ": " : "",
	         imp.note);
	if (!(st = xo_perfdb_run_write(db, &commit, &tb, note, imp.res, imp.n, &run_id)))
		fprintf(out, "run %lld: imported %zu results of peer %s\n", (long long)run_id,
		        imp.n, imp.device);
	xo_perf_import_free(&imp);
	return st;
}
