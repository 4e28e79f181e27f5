/*
 * check.c - `xo check` (DESIGN section 8): correctness cases of one backend
 * against ref, judged by the suites' harness (suites/harness.h), the same
 * code that runs under ctest.
 *
 *   xo check --op OP [--dir fwd|bwd|both] [--mode M] [key=value ...]
 *            [--backend B] [--seed S]
 *   xo check --shapes FILE [--backend B] [--seed S]
 *   xo check --list                  every op, its keys and their defaults
 *
 * --json (any form) prints one JSON object (an array for --list) instead.
 *
 * One PASSED/FAILED line per case with the command line that reruns it, the
 * failure report under a FAILED line, then "N passed, M failed". Exit 0 when
 * all passed, 1 when any failed, 2 on bad usage or bad input (one line on
 * stderr).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "harness.h"
#include "xo/cpu.h"

#define DIR_BOTH XO_DIR_COUNT

struct check_totals {
	int passed;
	int failed;
	bool json;  /* --json: cases as JSON objects */
	FILE *out;  /* where case lines go (a memory stream with --json, so a
	             * run that stops on bad input prints no partial JSON) */
};

/* One case's verdict: a PASSED/FAILED line (and the report), or with
 * --json an object of the cases array. */
static void emit(struct check_totals *t, const struct xo_case *c, const char *backend,
                 const struct xo_case_result *r, const char *could_not_run)
{
	bool pass = !could_not_run && r->fail == XO_FAIL_NONE;
	struct xo_params p;
	char params[512];

	if (pass)
		t->passed++;
	else
		t->failed++;
	if (!t->json) {
		if (could_not_run)
			fprintf(t->out, "FAILED  %s\n  could not run: %s\n", r->repro, could_not_run);
		else
			fprintf(t->out, "%s  %s\n%s", pass ? "PASSED" : "FAILED", r->repro,
			        pass ? "" : r->report);
		fflush(t->out);
		return;
	}
	/* the stride the op uses, as the repro line prints it */
	p = xo_params_resolved(c->op, &c->p);
	xo_params_format(c->op, c->dir, &p, params, sizeof(params));
	fprintf(t->out, "%s\n    {\"op\": \"%s\", \"dir\": \"%s\", \"mode\": \"%s\", \"backend\": ",
	        t->passed + t->failed > 1 ? "," : "", xo_op_name(c->op), xo_dir_name(c->dir),
	        xo_hmode_name(c->mode));
	xo_cli_json_fstring(t->out, backend);
	fprintf(t->out, ", \"seed\": %" PRIu64 ", \"params\": ", c->seed);
	xo_cli_json_params(t->out, params);
	fprintf(t->out, ", \"result\": \"%s\", \"reason\": ", pass ? "pass" : "fail");
	if (pass)
		fputs("null", t->out);
	else
		xo_cli_json_fstring(t->out, could_not_run ? could_not_run : xo_fail_name(r->fail));
	if (could_not_run)
		fputs(", \"max_error\": null, \"bound\": null, \"bad_elements\": null", t->out);
	else
		/* bound 0: the case is exact (bit for bit) */
		fprintf(t->out, ", \"max_error\": %.9g, \"bound\": %.9g, \"worst_ratio\": %.6g, "
		        "\"bad_elements\": %" PRId64,
		        r->max_err, r->max_bound, r->worst, r->nbad);
	fputs(", \"repro\": ", t->out);
	xo_cli_json_fstring(t->out, r->repro);
	if (!pass && !could_not_run) {
		fputs(", \"report\": ", t->out);
		xo_cli_json_fstring(t->out, r->report);
	}
	fputc('}', t->out);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: xo check --op OP [--dir fwd|bwd|both] [--mode exact|real|nonfinite]\n"
	           "                [key=value ...] [--backend B] [--seed S] [--json]\n"
	           "       xo check --shapes FILE [--backend B] [--seed S] [--json]\n"
	           "       xo check --list [--json]\n"
	           "\n"
	           "Runs correctness cases of backend B (default cpu) against the reference\n"
	           "backend ref and prints one PASSED/FAILED line per case with the command\n"
	           "that reruns it (with the cpu backend's XO_CPU_ISA), then a summary.\n"
	           "--json prints one object: the backend, the CPU ISA, and per case op, dir,\n"
	           "mode, params, result, max_error and the bound there (0 = bit-exact).\n"
	           "Modes (default: every one that applies):\n"
	           "  exact      small-integer inputs, result must equal ref bit for bit\n"
	           "  real       real inputs, error within a bound derived per op\n"
	           "  nonfinite  NaN/Inf in the inputs of elementwise ops must propagate alike\n"
	           "Keys are the op's Keras arguments plus the input shape (batch len ch);\n"
	           "--list prints every op's keys with their defaults, which are Keras's\n"
	           "(strides 1, pooling strides = pool_size, pool_size 2, padding valid, ...).\n"
	           "Keras's required arguments are required here too: conv1d filters and\n"
	           "kernel_size, dense units, dropout rate. A shapes file has one\n"
	           "`op key=value ...` case a line. Exit: 0 all passed, 1 a case failed,\n"
	           "2 bad usage or input.\n");
}

/*
 * Keras's required arguments (Conv1D(filters, kernel_size), Dense(units),
 * Dropout(rate), ...) come from the op's keys (xo_op_required_key). Every
 * other key has Keras's default (xo_params_default; strides 1 for conv1d and
 * pool_size for max_pooling1d, pool_size 2, padding valid, use_bias 1,
 * activation linear, dilation_rate 1, Adam 1e-3 / 0.9 / 0.999 / 1e-7);
 * batch, len and ch are the case's input shape (default 1).
 *
 * missing_key: the first required key of op that is not among the keys of
 * the "key=value" words words[0..n-1], or NULL.
 */
static const char *missing_key(enum xo_op op, char *const *words, int n)
{
	const char *key;

	for (int k = 0; (key = xo_op_required_key(op, k)); k++) {
		size_t len = strlen(key);
		bool found = false;

		for (int i = 0; i < n && !found; i++)
			found = !strncmp(words[i], key, len) && words[i][len] == '=';
		if (!found)
			return key;
	}
	return NULL;
}

/* The keys op reads, " batch len ch ... " (space before and after each). */
static void op_keys(enum xo_op op, char *buf, size_t size)
{
	struct xo_params d = xo_params_default();
	char line[512], *tok, *save = NULL;
	size_t used = 0;

	xo_params_format(op, XO_DIR_FWD, &d, line, sizeof(line));
	buf[0] = '\0';
	for (tok = strtok_r(line, " ", &save); tok && used + 1 < size;
	     tok = strtok_r(NULL, " ", &save))
		used += (size_t)snprintf(buf + used, size - used, " %.*s", (int)strcspn(tok, "="),
		                         tok);
	if (used + 1 < size)
		snprintf(buf + used, size - used, " ");
}

/* Checks a parsed case for missing required keys: 0, or 2 after printing
 * the reason (where: "FILE:LINE: " or ""). strides=0 stays accepted as
 * "Keras's default" (the shapes files use it); the repro line prints the
 * stride the op uses. */
static int keys_ok(const char *where, enum xo_op op, char *const *words, int n)
{
	const char *miss = missing_key(op, words, n);
	char keys[512];

	if (miss)
		return xo_usage_error("check", "%s%s needs %s=N (a required argument in Keras; "
		                      "`xo check --list` shows every op's keys)",
		                      where, xo_op_name(op), miss);
	/* A key the op does not read would be ignored without a word. */
	op_keys(op, keys, sizeof(keys));
	for (int i = 0; i < n; i++) {
		char key[64], padded[80];
		size_t len = strcspn(words[i], "=");

		snprintf(key, sizeof(key), "%.*s", (int)(len < 63 ? len : 63), words[i]);
		if (!strcmp(key, "n"))
			snprintf(key, sizeof(key), "batch");
		else if (!strcmp(key, "features"))
			snprintf(key, sizeof(key), "ch");
		snprintf(padded, sizeof(padded), " %s ", key);
		if (!strstr(keys, padded))
		{
			keys[strlen(keys) - 1] = '\0'; /* the trailing space */
			return xo_usage_error("check", "%s%s takes no key '%s' (its keys:%s)", where,
			                      xo_op_name(op), key, keys);
		}
	}
	return 0;
}

/* The same for one shapes-file line "op key=value ...". */
static int line_keys_ok(const char *where, enum xo_op op, const char *line)
{
	char buf[1024], *words[128], *save = NULL, *tok, *hash;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	hash = strchr(buf, '#');
	if (hash)
		*hash = '\0';
	tok = strtok_r(buf, " \t\r\n", &save); /* the op */
	while (tok && n < 128 && (tok = strtok_r(NULL, " \t\r\n", &save))) {
		/* not key=value: xo_case_parse names the word */
		if (!strchr(tok, '=') || *tok == '=')
			return 0;
		words[n++] = tok;
	}
	return keys_ok(where, op, words, n);
}

/* `xo check --list [--json]`: every op, its directions, and its keys with
 * their defaults (Keras's), the required ones marked. */
static void list_ops(bool json)
{
	if (json)
		printf("[");
	for (int o = 0; o < XO_OP_COUNT; o++) {
		enum xo_op op = (enum xo_op)o;
		struct xo_params d = xo_params_default_op(op);
		char line[512], *tok, *save = NULL;
		int n = 0;

		/* the default stride as the op reads it */
		d.strides = op == XO_OP_conv1d || op == XO_OP_conv2d        ? 1
			    : xo_op_is_pool1d(op) || xo_op_is_pool2d(op) ? d.pool_size
								     : 0;
		xo_params_format(op, XO_DIR_FWD, &d, line, sizeof(line));
		if (json) {
			printf("%s\n  {\"op\": \"%s\", \"backward\": %s, \"keys\": [", o ? "," : "",
			       xo_op_name(op), xo_op_has_bwd(op) ? "true" : "false");
		} else {
			printf("%-25s %-8s", xo_op_name(op), xo_op_has_bwd(op) ? "fwd,bwd" : "fwd");
		}
		for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			char *eq = strchr(tok, '=');
			const char *def = eq + 1;
			char num[32];
			bool req;

			*eq = '\0';
			req = false;
			for (int k = 0; xo_op_required_key(op, k); k++)
				req = req || !strcmp(xo_op_required_key(op, k), tok);
			if ((xo_op_is_pool1d(op) || xo_op_is_pool2d(op)) && !strcmp(tok, "strides"))
				def = "pool_size";
			else if (xo_op_is_pool2d(op) && !strcmp(tok, "strides_w"))
				def = "strides";
			else if (xo_op_is_pool2d(op) && !strcmp(tok, "pool_w"))
				def = "pool_size";
			else if (op == XO_OP_conv2d && !strcmp(tok, "strides_w"))
				def = "strides";
			else if (op == XO_OP_conv2d && !strcmp(tok, "kernel_w"))
				def = "kernel_size";
			else if (op == XO_OP_conv2d && !strcmp(tok, "dilation_w"))
				def = "dilation_rate";
			else if (strchr(def, '.') || strchr(def, 'e')) {
				/* a float field printed to float's 7 digits, not the
				 * 9 that round-trip it: lr=0.001, not 0.00100000005 */
				snprintf(num, sizeof(num), "%.7g", strtod(def, NULL));
				def = num;
			}
			if (json) {
				printf("%s{\"key\": \"%s\", \"required\": %s, \"default\": ",
				       n ? ", " : "", tok, req ? "true" : "false");
				if (req)
					printf("null}");
				else {
					xo_cli_json_value(stdout, def);
					printf("}");
				}
			} else {
				printf(" %s=%s", tok, req ? "REQUIRED" : def);
			}
			n++;
		}
		printf(json ? "]}" : "\n");
	}
	if (json)
		printf("\n]\n");
	else
		printf("\nREQUIRED: Keras has no default (Conv1D filters and kernel_size, Dense "
		       "units, Dropout rate);\nthe other values are Keras's defaults; batch, len "
		       "and ch are the case's input shape.\n");
}

/* The options that take a value (every option but --help). */
static bool is_option(const char *a)
{
	static const char *const opts[] = {"--op",      "--dir",  "--mode",
	                                   "--backend", "--seed", "--shapes"};

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (!strcmp(a, opts[i]))
			return true;
	return false;
}

/* Runs every applicable (dir, mode) of one op line; 0, or 2 after printing
 * the reason when the case cannot run. */
static int run_line(struct xo_backend *ref, struct xo_backend *be, const char *where, enum xo_op op,
                    const struct xo_params *p, int dirsel, int modesel, uint64_t seed,
                    struct check_totals *t)
{
	for (int d = 0; d < XO_DIR_COUNT; d++) {
		if (dirsel != DIR_BOTH && d != dirsel)
			continue;
		if (d == XO_DIR_BWD && !xo_op_has_bwd(op))
			continue;
		for (int m = 0; m < XO_HMODE_COUNT; m++) {
			struct xo_case c = {.op = op,
			                    .dir = (enum xo_dir)d,
			                    .mode = (enum xo_hmode)m,
			                    .p = *p,
			                    .seed = seed};
			struct xo_case_result r;
			enum xo_status st;

			if (modesel != XO_HMODE_COUNT && m != modesel)
				continue;
			if (!xo_hmode_applies(op, c.dir, p, c.mode))
				continue;
			st = xo_case_run(ref, be, &c, &r);
			/* A case that cannot be set up (invalid, or too large to
			 * allocate on the host or the device) is bad input, not
			 * a failed check. */
			if (st == XO_EINVAL || st == XO_ENOMEM || st == XO_EOVERFLOW ||
			    st == XO_ERESOURCE)
				return xo_usage_error("check", "%s%s%s", where, *where ? ": " : "",
				                      xo_last_error());
			emit(t, &c, xo_backend_name(be), &r, st ? xo_last_error() : NULL);
		}
	}
	return 0;
}

/* A categorical cross-entropy over one class has loss and gradient 0
 * whatever its input (the one class's probability is 1): such a case
 * checks nothing and the harness fails it as uninformative, so it is
 * refused here as bad input instead. 0, or 2 after printing why. */
static int ce_classes_ok(const char *where, enum xo_op op, const struct xo_params *p)
{
	if ((op == XO_OP_categorical_crossentropy || op == XO_OP_sparse_categorical_crossentropy) &&
	    p->ch < 2)
		return xo_usage_error("check",
		                      "%sch=%" PRId64 ": %s over one class has loss and gradient 0 "
		                      "whatever the input (nothing to check): give ch=2 or more",
		                      where, p->ch, xo_op_name(op));
	return 0;
}

/* Parses and validates every line before running any (bad input: exit 2). */
static int run_shapes(struct xo_backend *ref, struct xo_backend *be, const char *path,
                      uint64_t seed, struct check_totals *t)
{
	struct line {
		enum xo_op op;
		struct xo_params p;
		int lineno;
	} *v = NULL;
	size_t n = 0, cap = 0;
	char buf[1024], where[1100];
	int lineno = 0, rc = 0;
	FILE *f;

	if (xo_input_open(path, "a parameter file", &f, NULL))
		return xo_usage_error("check", "%s", xo_last_error());
	while (fgets(buf, sizeof(buf), f)) {
		struct xo_params p;
		enum xo_op op;

		lineno++;
		if (!strchr(buf, '\n') && !feof(f)) {
			rc = xo_usage_error("check", "%s:%d: line too long", path, lineno);
			goto out;
		}
		{
			/* the op's own keys first: "relu takes no key 'filters'"
			 * says more than "unknown parameter" */
			char first[64] = "";
			enum xo_op lop;

			sscanf(buf, " %63[^ \t\r\n#]", first);
			lop = xo_op_from_name(first);
			snprintf(where, sizeof(where), "%s:%d: ", path, lineno);
			if (lop != XO_OP_COUNT && (rc = line_keys_ok(where, lop, buf)))
				goto out;
		}
		if (xo_case_parse(buf, &op, &p)) {
			rc = xo_usage_error("check", "%s:%d: %s", path, lineno, xo_last_error());
			goto out;
		}
		if (op == XO_OP_COUNT)
			continue;
		if ((rc = ce_classes_ok(where, op, &p)))
			goto out;
		if (n == cap) {
			struct line *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!nv) {
				rc = xo_usage_error("check", "out of memory");
				goto out;
			}
			v = nv;
		}
		v[n++] = (struct line){op, p, lineno};
	}
	if (ferror(f)) {
		rc = xo_usage_error("check", "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	/* A file of comments only checks nothing: not a pass. */
	if (!n) {
		rc = xo_usage_error("check", "%s: no cases (one `op key=value ...` a line)", path);
		goto out;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		snprintf(where, sizeof(where), "%s:%d", path, v[i].lineno);
		rc = run_line(ref, be, where, v[i].op, &v[i].p, DIR_BOTH, XO_HMODE_COUNT, seed, t);
	}
out:
	fclose(f);
	free(v);
	return rc;
}

/* The command line of a check. */
struct check_opts {
	const char *backend, *shapes, *opname;
	bool list, have_params;
	int dirsel, modesel;
	uint64_t seed;
	char *kv[128]; /* the key=value words, for the required-key check */
	int nkv;
};

/* One option a that takes a value, v its value: 0, or 2 after printing why
 * the value is bad. */
static int check_option(struct check_opts *o, const char *a, const char *v)
{
	if (!strcmp(a, "--op")) {
		/* a second --op would silently drop the first */
		if (o->opname)
			return xo_usage_error("check", "--op given twice");
		o->opname = v;
	} else if (!strcmp(a, "--dir")) {
		if (!strcmp(v, "fwd"))
			o->dirsel = XO_DIR_FWD;
		else if (!strcmp(v, "bwd"))
			o->dirsel = XO_DIR_BWD;
		else if (!strcmp(v, "both"))
			o->dirsel = DIR_BOTH;
		else
			return xo_usage_error("check", "--dir must be fwd, bwd or both, not '%s'",
					      v);
	} else if (!strcmp(a, "--mode")) {
		o->modesel = (int)xo_hmode_from_name(v);
		if (o->modesel == XO_HMODE_COUNT)
			return xo_usage_error(
			    "check", "--mode must be exact, real or nonfinite, not '%s'", v);
	} else if (!strcmp(a, "--backend")) {
		o->backend = v;
	} else if (!strcmp(a, "--seed")) {
		char *end;

		errno = 0;
		o->seed = strtoull(v, &end, 0);
		if (errno || end == v || *end || v[0] == '-')
			return xo_usage_error("check",
					      "--seed must be an unsigned integer, not '%s'", v);
	} else if (!strcmp(a, "--shapes")) {
		if (o->shapes)
			return xo_usage_error("check", "--shapes given twice");
		o->shapes = v;
	}
	return 0;
}

/* Reads the arguments into o (--json into t): -1 to go on, else the exit
 * status (0 after --help; 2, the line printed, after a bad argument). */
static int check_args(int argc, char **argv, struct check_opts *o, struct check_totals *t)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char key[64];
		const char *eq;
		int rc;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--json")) {
			t->json = true;
			continue;
		}
		if (!strcmp(a, "--list")) {
			o->list = true;
			continue;
		}
		if (a[0] == '-' && a[1] == '-') {
			if (!is_option(a))
				return xo_usage_error("check", "unknown option '%s' (try --help)",
				                      a);
			if (!v)
				return xo_usage_error("check", "%s needs a value", a);
			i++;
			if ((rc = check_option(o, a, v)))
				return rc;
			continue;
		}
		eq = strchr(a, '=');
		if (!eq || eq == a || (size_t)(eq - a) >= sizeof(key))
			return xo_usage_error("check", "expected key=value or an option, got '%s'",
					      a);
		if (o->nkv == (int)(sizeof(o->kv) / sizeof(o->kv[0])))
			return xo_usage_error("check", "more than %zu key=value arguments",
			                      sizeof(o->kv) / sizeof(o->kv[0]));
		o->have_params = true;
		o->kv[o->nkv++] = argv[i];
	}
	return -1;
}

/* The op of --op with its key=value parameters, validated (keys, shapes,
 * and that --mode applies): 0, or 2 after printing why not. */
static int check_op_params(const struct check_opts *o, enum xo_op *op_out,
			   struct xo_params *p)
{
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
	enum xo_op op = xo_op_from_name(o->opname);
	int rc;

	if (op == XO_OP_COUNT) {
		char ops[512];
		size_t used = 0;

		ops[0] = '\0';
		for (int k = 0; k < XO_OP_COUNT && used < sizeof(ops); k++)
			used += (size_t)snprintf(ops + used, sizeof(ops) - used, "%s%s",
			                         k ? ", " : "", xo_op_name((enum xo_op)k));
		return xo_usage_error("check", "unknown op '%s' (ops: %s)", o->opname, ops);
	}
	if (o->dirsel == XO_DIR_BWD && !xo_op_has_bwd(op))
		return xo_usage_error("check", "%s has no backward pass", o->opname);
	rc = keys_ok("", op, o->kv, o->nkv);
	if (rc)
		return rc;
	*p = xo_params_default_op(op); /* the recurrent ops' tanh */
	for (int k = 0; k < o->nkv; k++) {
		char key[64];
		const char *eq = strchr(o->kv[k], '=');

		memcpy(key, o->kv[k], (size_t)(eq - o->kv[k]));
		key[eq - o->kv[k]] = '\0';
		if (xo_params_set(p, key, eq + 1))
			return xo_usage_error("check", "%s", xo_last_error());
	}
	if (xo_op_shapes(op, XO_DIR_FWD, p, ss, ds))
		return xo_usage_error("check", "%s", xo_last_error());
	if ((rc = ce_classes_ok("", op, p)))
		return rc;
	if (o->modesel != XO_HMODE_COUNT) {
		bool any = false;

		for (int d = 0; d < XO_DIR_COUNT; d++)
			if ((o->dirsel == DIR_BOTH || d == o->dirsel) &&
			    (d == XO_DIR_FWD || xo_op_has_bwd(op)) &&
			    xo_hmode_applies(op, (enum xo_dir)d, p, (enum xo_hmode)o->modesel))
				any = true;
		if (!any)
			return xo_usage_error(
			    "check", "mode %s does not apply to %s with these parameters",
			    xo_hmode_name((enum xo_hmode)o->modesel), o->opname);
	}
	*op_out = op;
	return 0;
}

/* Runs the cases on the backend against ref and prints them and the totals:
 * 0 all passed, 1 some failed, 2 bad input. */
static int check_run(const struct check_opts *o, enum xo_op op, const struct xo_params *p,
		     struct check_totals *t)
{
	struct xo_backend *ref = NULL, *be = NULL;
	char *jbuf = NULL;
	size_t jlen = 0;
	int rc;

	if (xo_backend_open(o->backend, &be))
		return xo_usage_error("check", "backend '%s': %s", o->backend, xo_last_error());
	if (xo_backend_open("ref", &ref)) {
		rc = xo_usage_error("check", "ref: %s", xo_last_error());
		goto out_close;
	}
	if (t->json && !(t->out = open_memstream(&jbuf, &jlen))) {
		rc = xo_usage_error("check", "out of memory");
		goto out_close;
	}
	if (o->shapes)
		rc = run_shapes(ref, be, o->shapes, o->seed, t);
	else
		rc = run_line(ref, be, "", op, p, o->dirsel, o->modesel, o->seed, t);
	if (t->json) {
		fclose(t->out);
		if (!rc) {
			printf("{\"backend\": ");
			xo_cli_json_string(xo_backend_name(be));
			printf(", \"describe\": ");
			xo_cli_json_string(xo_backend_describe(be));
			printf(", \"cpu_isa\": \"%s\", \"cases\": [%s\n  ], \"passed\": %d, "
			       "\"failed\": %d}\n",
			       xo_cpu_isa_name(xo_cpu_isa_detect()), jbuf ? jbuf : "",
			       t->passed, t->failed);
		}
		free(jbuf);
	} else if (!rc) {
		printf("%d passed, %d failed\n", t->passed, t->failed);
	}
	if (!rc)
		rc = t->failed ? 1 : 0;
out_close:
	xo_backend_close(ref);
	xo_backend_close(be);
	return rc;
}

int xo_cmd_check(int argc, char **argv)
{
	struct check_opts o = {.backend = "cpu",
	                       .dirsel = DIR_BOTH,
	                       .modesel = XO_HMODE_COUNT,
	                       .seed = XO_CASE_SEED_DEFAULT};
	struct xo_params p = xo_params_default();
	struct check_totals t = {.out = stdout};
	enum xo_op op = XO_OP_COUNT;
	int rc = check_args(argc, argv, &o, &t);

	if (rc >= 0)
		return rc;
	if (o.list) {
		if (o.opname || o.shapes || o.have_params)
			return xo_usage_error("check",
			                      "--list takes no --op, --shapes or key=value");
		list_ops(t.json);
		return 0;
	}
	if ((o.opname == NULL) == (o.shapes == NULL))
		return xo_usage_error("check",
		                      "give exactly one of --op OP or --shapes FILE (try --help)");
	if (o.shapes && (o.have_params || o.dirsel != DIR_BOTH || o.modesel != XO_HMODE_COUNT))
		return xo_usage_error("check", "--shapes takes no key=value, --dir or --mode");
	if (o.opname && (rc = check_op_params(&o, &op, &p)))
		return rc;
	return check_run(&o, op, &p, &t);
}
