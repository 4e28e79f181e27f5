/*
 * check.c - `xo check` (DESIGN section 8): correctness cases of one backend
 * against ref, judged by the suites' harness (suites/harness.h), the same
 * code that runs under ctest.
 *
 *   xo check --op OP [--dir fwd|bwd|both] [--mode M] [key=value ...]
 *            [--backend B] [--seed S]
 *   xo check --shapes FILE [--backend B] [--seed S]
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

#define DIR_BOTH XO_DIR_COUNT

struct check_totals {
	int passed;
	int failed;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: xo check --op OP [--dir fwd|bwd|both] [--mode exact|real|nonfinite]\n"
	           "                [key=value ...] [--backend B] [--seed S]\n"
	           "       xo check --shapes FILE [--backend B] [--seed S]\n"
	           "\n"
	           "Runs correctness cases of backend B (default cpu) against the reference\n"
	           "backend ref and prints one PASSED/FAILED line per case with the command\n"
	           "that reruns it, then a summary. Modes (default: every one that applies):\n"
	           "  exact      small-integer inputs, result must equal ref bit for bit\n"
	           "  real       real inputs, error within a bound derived per op\n"
	           "  nonfinite  NaN/Inf in the inputs of elementwise ops must propagate alike\n"
	           "Keys are the op's parameters (batch len ch filters kernel_size strides\n"
	           "dilation_rate padding use_bias activation pool_size units rate training seed\n"
	           "step layer lr beta_1 beta_2 epsilon iteration size rows). A shapes file has\n"
	           "one `op key=value ...` case a line. Exit: 0 all passed, 1 a case failed,\n"
	           "2 bad usage or input.\n");
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
			if (st) {
				printf("FAILED  %s\n  could not run: %s\n", r.repro,
				       xo_last_error());
				t->failed++;
				continue;
			}
			if (r.fail == XO_FAIL_NONE) {
				printf("PASSED  %s\n", r.repro);
				t->passed++;
			} else {
				printf("FAILED  %s\n%s", r.repro, r.report);
				t->failed++;
			}
			fflush(stdout);
		}
	}
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
	FILE *f = fopen(path, "r");

	if (!f)
		return xo_usage_error("check", "cannot open %s: %s", path, strerror(errno));
	while (fgets(buf, sizeof(buf), f)) {
		struct xo_params p;
		enum xo_op op;

		lineno++;
		if (!strchr(buf, '\n') && !feof(f)) {
			rc = xo_usage_error("check", "%s:%d: line too long", path, lineno);
			goto out;
		}
		if (xo_case_parse(buf, &op, &p)) {
			rc = xo_usage_error("check", "%s:%d: %s", path, lineno, xo_last_error());
			goto out;
		}
		if (op == XO_OP_COUNT)
			continue;
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

int xo_cmd_check(int argc, char **argv)
{
	const char *backend = "cpu", *shapes = NULL, *opname = NULL;
	struct xo_backend *ref = NULL, *be = NULL;
	struct xo_params p = xo_params_default();
	struct check_totals t = {0, 0};
	int dirsel = DIR_BOTH, modesel = XO_HMODE_COUNT, rc;
	uint64_t seed = XO_CASE_SEED_DEFAULT;
	enum xo_op op = XO_OP_COUNT;
	bool have_params = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (a[0] == '-' && a[1] == '-') {
			if (!is_option(a))
				return xo_usage_error("check", "unknown option '%s' (try --help)",
				                      a);
			if (!v)
				return xo_usage_error("check", "%s needs a value", a);
			i++;
			if (!strcmp(a, "--op")) {
				/* a second --op would silently drop the first */
				if (opname)
					return xo_usage_error("check", "--op given twice");
				opname = v;
			} else if (!strcmp(a, "--dir")) {
				if (!strcmp(v, "fwd"))
					dirsel = XO_DIR_FWD;
				else if (!strcmp(v, "bwd"))
					dirsel = XO_DIR_BWD;
				else if (!strcmp(v, "both"))
					dirsel = DIR_BOTH;
				else
					return xo_usage_error(
					    "check", "--dir must be fwd, bwd or both, not '%s'", v);
			} else if (!strcmp(a, "--mode")) {
				modesel = (int)xo_hmode_from_name(v);
				if (modesel == XO_HMODE_COUNT)
					return xo_usage_error(
					    "check",
					    "--mode must be exact, real or nonfinite, not '%s'", v);
			} else if (!strcmp(a, "--backend")) {
				backend = v;
			} else if (!strcmp(a, "--seed")) {
				char *end;

				errno = 0;
				seed = strtoull(v, &end, 0);
				if (errno || end == v || *end || v[0] == '-')
					return xo_usage_error(
					    "check", "--seed must be an unsigned integer, not '%s'",
					    v);
			} else if (!strcmp(a, "--shapes")) {
				if (shapes)
					return xo_usage_error("check", "--shapes given twice");
				shapes = v;
			}
			continue;
		}
		{
			char key[64];
			const char *eq = strchr(a, '=');

			if (!eq || eq == a || (size_t)(eq - a) >= sizeof(key))
				return xo_usage_error(
				    "check", "expected key=value or an option, got '%s'", a);
			memcpy(key, a, (size_t)(eq - a));
			key[eq - a] = '\0';
			if (xo_params_set(&p, key, eq + 1))
				return xo_usage_error("check", "%s", xo_last_error());
			have_params = true;
		}
	}
	if ((opname == NULL) == (shapes == NULL))
		return xo_usage_error("check",
		                      "give exactly one of --op OP or --shapes FILE (try --help)");
	if (shapes && (have_params || dirsel != DIR_BOTH || modesel != XO_HMODE_COUNT))
		return xo_usage_error("check", "--shapes takes no key=value, --dir or --mode");
	if (opname) {
		struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];

		op = xo_op_from_name(opname);
		if (op == XO_OP_COUNT)
			return xo_usage_error("check", "unknown op '%s'", opname);
		if (dirsel == XO_DIR_BWD && !xo_op_has_bwd(op))
			return xo_usage_error("check", "%s has no backward pass", opname);
		if (xo_op_shapes(op, XO_DIR_FWD, &p, ss, ds))
			return xo_usage_error("check", "%s", xo_last_error());
		if (modesel != XO_HMODE_COUNT) {
			bool any = false;

			for (int d = 0; d < XO_DIR_COUNT; d++)
				if ((dirsel == DIR_BOTH || d == dirsel) &&
				    (d == XO_DIR_FWD || xo_op_has_bwd(op)) &&
				    xo_hmode_applies(op, (enum xo_dir)d, &p,
				                     (enum xo_hmode)modesel))
					any = true;
			if (!any)
				return xo_usage_error(
				    "check", "mode %s does not apply to %s with these parameters",
				    xo_hmode_name((enum xo_hmode)modesel), opname);
		}
	}

	if (xo_backend_open(backend, &be))
		return xo_usage_error("check", "backend '%s': %s", backend, xo_last_error());
	if (xo_backend_open("ref", &ref)) {
		rc = xo_usage_error("check", "ref: %s", xo_last_error());
		goto out_close;
	}
	if (shapes)
		rc = run_shapes(ref, be, shapes, seed, &t);
	else
		rc = run_line(ref, be, "", op, &p, dirsel, modesel, seed, &t);
	if (!rc) {
		printf("%d passed, %d failed\n", t.passed, t.failed);
		rc = t.failed ? 1 : 0;
	}
out_close:
	xo_backend_close(ref);
	xo_backend_close(be);
	return rc;
}
