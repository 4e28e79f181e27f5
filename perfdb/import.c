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
 * samples_s are per-call wall times in seconds. A small JSON reader is
 * enough for that: objects, arrays, strings (\" \\ \/ \n \t \uXXXX as '?'),
 * numbers, true/false/null.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb.h"

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
	enum jtype t;
	double num;
	char *str;        /* J_STR */
	size_t n;         /* elements of J_ARR / members of J_OBJ */
	struct jv *items; /* n values */
	char **keys;      /* n keys (J_OBJ) */
};

struct jparser {
	const char *p, *start;
	int depth;
};

static void jv_free(struct jv *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		jv_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
}

static void skip_ws(struct jparser *j)
{
	while (isspace((unsigned char)*j->p))
		j->p++;
}

static enum xo_status jerr(struct jparser *j, const char *what)
{
	return xo_error(XO_EFORMAT, "JSON: %s at offset %ld", what, (long)(j->p - j->start));
}

static enum xo_status parse_value(struct jparser *j, struct jv *v);

static enum xo_status parse_string(struct jparser *j, char **out)
{
	size_t cap = 16, n = 0;
	char *s = malloc(cap);

	if (!s)
		return xo_error(XO_ENOMEM, "JSON: out of memory");
	j->p++; /* opening quote */
	while (*j->p != '"') {
		char c = *j->p++;

		if (!c || (unsigned char)c < 0x20) {
			free(s);
			j->p--;
			return jerr(j, "unterminated string");
		}
		if (c == '\\') {
			char e = *j->p++;

			switch (e) {
			case '"':
			case '\\':
			case '/':
				c = e;
				break;
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'u':
				for (int k = 0; k < 4; k++)
					if (!isxdigit((unsigned char)*j->p++)) {
						free(s);
						return jerr(j, "bad \\u escape");
					}
				c = '?';
				break;
			default:
				free(s);
				return jerr(j, "bad escape");
			}
		}
		if (n + 2 > cap) {
			char *t = realloc(s, cap *= 2);

			if (!t) {
				free(s);
				return xo_error(XO_ENOMEM, "JSON: out of memory");
			}
			s = t;
		}
		s[n++] = c;
	}
	j->p++;
	s[n] = '\0';
	*out = s;
	return XO_OK;
}

static enum xo_status push(struct jv *v, struct jv *item, char *key)
{
	struct jv *items = realloc(v->items, (v->n + 1) * sizeof(*items));

	if (!items)
		return xo_error(XO_ENOMEM, "JSON: out of memory");
	v->items = items;
	if (v->t == J_OBJ) {
		char **keys = realloc(v->keys, (v->n + 1) * sizeof(*keys));

		if (!keys)
			return xo_error(XO_ENOMEM, "JSON: out of memory");
		v->keys = keys;
		v->keys[v->n] = key;
	}
	v->items[v->n++] = *item;
	return XO_OK;
}

static enum xo_status parse_container(struct jparser *j, struct jv *v, char close)
{
	enum xo_status st;

	if (++j->depth > 32)
		return jerr(j, "nested too deep");
	j->p++;
	skip_ws(j);
	if (*j->p == close) {
		j->p++;
		j->depth--;
		return XO_OK;
	}
	for (;;) {
		struct jv item = {0};
		char *key = NULL;

		skip_ws(j);
		if (v->t == J_OBJ) {
			if (*j->p != '"')
				return jerr(j, "expected a key");
			if ((st = parse_string(j, &key)))
				return st;
			skip_ws(j);
			if (*j->p++ != ':') {
				free(key);
				return jerr(j, "expected ':'");
			}
		}
		if ((st = parse_value(j, &item)) || (st = push(v, &item, key))) {
			jv_free(&item);
			free(key);
			return st;
		}
		skip_ws(j);
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		if (*j->p == close) {
			j->p++;
			j->depth--;
			return XO_OK;
		}
		return jerr(j, "expected ',' or a closing bracket");
	}
}

static enum xo_status parse_value(struct jparser *j, struct jv *v)
{
	char *end;

	memset(v, 0, sizeof(*v));
	skip_ws(j);
	switch (*j->p) {
	case '{':
		v->t = J_OBJ;
		return parse_container(j, v, '}');
	case '[':
		v->t = J_ARR;
		return parse_container(j, v, ']');
	case '"':
		v->t = J_STR;
		return parse_string(j, &v->str);
	case 't':
	case 'f':
	case 'n':
		if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) {
			v->t = *j->p == 't' ? J_BOOL : J_NULL;
			v->num = *j->p == 't';
			j->p += 4;
			return XO_OK;
		}
		if (!strncmp(j->p, "false", 5)) {
			v->t = J_BOOL;
			j->p += 5;
			return XO_OK;
		}
		return jerr(j, "unknown literal");
	default:
		errno = 0;
		v->num = strtod(j->p, &end);
		if (end == j->p || errno)
			return jerr(j, "expected a value");
		v->t = J_NUM;
		j->p = end;
		return XO_OK;
	}
}

static const struct jv *member(const struct jv *o, const char *key)
{
	if (!o || o->t != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->items[i];
	return NULL;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 65536, n = 0, got;
	char *buf;

	if (!f)
		return NULL;
	buf = malloc(cap);
	while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap) {
			char *t = realloc(buf, cap *= 2);

			if (!t) {
				free(buf);
				buf = NULL;
			}
			buf = t;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

enum xo_status xo_perf_import(struct xo_perfdb *db, const char *peer, const char *json_path,
                              FILE *out)
{
	struct jparser j = {0};
	struct jv root = {0};
	const struct jv *results, *v;
	struct xo_perf_result *res = NULL;
	struct xo_perf_commit commit;
	struct xo_perf_testbed tb;
	char *text, note[512], model[64] = "seed", device[48];
	enum xo_status st;
	size_t nres = 0;
	int64_t run_id;

	text = read_file(json_path);
	if (!text)
		return xo_error(XO_EIO, "%s: %s", json_path, strerror(errno));
	j.p = j.start = text;
	if (!(st = parse_value(&j, &root))) {
		skip_ws(&j);
		if (*j.p)
			st = jerr(&j, "trailing characters");
	}
	if (st) {
		char why[256]; /* xo_error writes the buffer xo_last_error reads */

		snprintf(why, sizeof(why), "%s", xo_last_error());
		st = xo_error(st, "%s: %s", json_path, why);
		goto out;
	}
	v = member(&root, "device");
	snprintf(device, sizeof(device), "%s", peer ? peer : v && v->t == J_STR ? v->str : "");
	if (!device[0] || strchr(device, '/') || !strcmp(device, "ref") || !strcmp(device, "cpu") ||
	    !strncmp(device, "cl", 2)) {
		st = xo_error(XO_EINVAL,
		              "peer name '%s' must be non-empty, without '/', and not "
		              "ref/cpu/cl",
		              device);
		goto out;
	}
	if ((v = member(&root, "model")) && v->t == J_STR)
		snprintf(model, sizeof(model), "%s", v->str);
	results = member(&root, "results");
	if (!results || results->t != J_ARR || !results->n) {
		st = xo_error(XO_EFORMAT, "%s: no \"results\" array", json_path);
		goto out;
	}
	res = calloc(results->n, sizeof(*res));
	if (!res) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out;
	}
	for (size_t i = 0; i < results->n; i++) {
		const struct jv *r = &results->items[i];
		const struct jv *name = member(r, "benchmark"), *batch = member(r, "batch");
		const struct jv *samples = member(r, "samples_s");
		struct xo_perf_result *x = &res[nres];

		if (!name || name->t != J_STR || !batch || batch->t != J_NUM || batch->num < 1 ||
		    !samples || samples->t != J_ARR || !samples->n ||
		    (strcmp(name->str, "train_step") && strcmp(name->str, "predict"))) {
			st = xo_error(
			    XO_EFORMAT,
			    "%s: results[%zu] needs \"benchmark\" (train_step or predict), "
			    "\"batch\" >= 1 and a non-empty \"samples_s\"",
			    json_path, i);
			goto out;
		}
		x->samples = calloc(samples->n, sizeof(*x->samples));
		if (!x->samples) {
			st = xo_error(XO_ENOMEM, "perf: out of memory");
			goto out;
		}
		nres++;
		for (size_t k = 0; k < samples->n; k++) {
			if (samples->items[k].t != J_NUM || !(samples->items[k].num > 0)) {
				st = xo_error(XO_EFORMAT,
				              "%s: results[%zu].samples_s[%zu] is not a "
				              "positive number",
				              json_path, i, k);
				goto out;
			}
			x->samples[k].wall_s = samples->items[k].num;
		}
		x->n = samples->n;
		x->reps = 1;
		x->b.batch = (int64_t)batch->num;
		snprintf(x->b.name, sizeof(x->b.name), "model/%s/%s/b%lld/%s", model, name->str,
		         (long long)x->b.batch, device);
		snprintf(x->b.kind, sizeof(x->b.kind), "model");
		snprintf(x->b.device, sizeof(x->b.device), "%s", device);
		snprintf(x->b.what, sizeof(x->b.what), "%s", name->str);
		snprintf(x->b.model, sizeof(x->b.model), "%s", model);
		snprintf(x->b.params, sizeof(x->b.params), "model=%s batch=%lld peer=%s", model,
		         (long long)x->b.batch, device);
		snprintf(x->b.version, sizeof(x->b.version), "peer");
	}
	xo_perf_commit_probe(xo_perf_source_dir(), &commit);
	xo_perf_testbed_probe(&tb);
	v = member(&root, "note");
	snprintf(note, sizeof(note), "import --peer %s%s%s", device, v && v->t == J_STR ? ": " : "",
	         v && v->t == J_STR ? v->str : "");
	if ((st = xo_perfdb_run_begin(db, &commit, &tb, note, &run_id)) ||
	    (st = xo_perfdb_run_finish(db, run_id, res, nres)))
		goto out;
	fprintf(out, "run %lld: imported %zu results of peer %s\n", (long long)run_id, nres,
	        device);
out:
	for (size_t i = 0; res && i < nres; i++)
		free(res[i].samples);
	free(res);
	jv_free(&root);
	free(text);
	return st;
}
