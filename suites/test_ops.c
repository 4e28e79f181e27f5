/*
 * test_ops.c - the table-generated op suites (STYLE rule 13): for one backend,
 * one shapes file and one (op, direction[, padding]) group, every matching
 * line of the file becomes one CMocka test per applicable mode, named after
 * its file and line, judged by the harness against ref.
 *
 *   test_ops --backend B --shapes FILE --op OP --dir fwd|bwd [--padding P]
 *   test_ops --tables     every backend table has every slot (backend.h)
 *
 * A backend that is not there (cl without an OpenCL platform: XO_ENODEV)
 * makes the test exit 77, which ctest reports as SKIPPED, unless
 * XO_REQUIRE_OPENCL=1 (or gpu), where it is a failure. suites/ops.cmake generates one
 * ctest test per backend x op x dir (x padding) from the shapes files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define SKIP_CODE 77

struct tcase {
	struct xo_case c;
	char name[640];
};

static struct xo_backend *g_ref, *g_be;

static void run_case(void **state)
{
	const struct tcase *t = *state;
	struct xo_case_result r;
	enum xo_status st = xo_case_run(g_ref, g_be, &t->c, &r);

	if (st)
		fail_msg("%s: could not run: %s (repro: %s)", t->name, xo_last_error(), r.repro);
	if (r.fail != XO_FAIL_NONE) {
		print_error("%s", r.report);
		fail_msg("%s: %s", t->name, xo_fail_name(r.fail));
	}
	if (r.worst > 0.0)
		print_message("  worst |got - ref| / bound = %.3g\n", r.worst);
}

static int usage(void)
{
	fprintf(stderr, "usage: test_ops --backend B --shapes FILE --op OP --dir fwd|bwd "
	                "[--padding P]\n       test_ops --tables\n");
	return 2;
}

/* Every backend's table has every forward slot and every has_bwd backward
 * slot (the cpu table starts from ref's; cl implements all natively). */
static void check_table(const struct xo_backend_iface *t)
{
	assert_non_null(t);
	assert_non_null(t->name);
	assert_non_null(t->init);
	assert_non_null(t->free);
	assert_non_null(t->alloc);
	assert_non_null(t->release);
	assert_non_null(t->write);
	assert_non_null(t->read);
	for (int op = 0; op < XO_OP_COUNT; op++) {
		if (!t->fwd[op])
			fail_msg("backend '%s' has no %s fwd", t->name, xo_op_name((enum xo_op)op));
		if (xo_op_has_bwd((enum xo_op)op) && !t->bwd[op])
			fail_msg("backend '%s' has no %s bwd", t->name, xo_op_name((enum xo_op)op));
	}
}

static void table_ref(void **state)
{
	(void)state;
	check_table(xo_ref_backend());
}

static void table_cpu(void **state)
{
	(void)state;
	check_table(xo_cpu_backend());
}

#ifdef XO_HAVE_CL
static void table_cl(void **state)
{
	(void)state;
	check_table(xo_cl_backend());
}
#endif

static int run_tables(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(table_ref),
	    cmocka_unit_test(table_cpu),
#ifdef XO_HAVE_CL
	    cmocka_unit_test(table_cl),
#endif
	};

	return cmocka_run_group_tests_name("backend tables", tests, NULL, NULL);
}

/* Reads the lines of one group; *out gets n cases (one per line and mode). */
static int load_cases(const char *path, enum xo_op op, enum xo_dir dir, int padding,
                      struct tcase **out, size_t *n)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct tcase *v = NULL;
	size_t cap = 0;
	char line[1024];
	int lineno = 0;
	FILE *f = fopen(path, "r");

	*n = 0;
	if (!f) {
		fprintf(stderr, "test_ops: cannot open %s\n", path);
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		struct xo_params p;
		enum xo_op lop;
		char params[512];

		lineno++;
		if (xo_case_parse(line, &lop, &p)) {
			fprintf(stderr, "test_ops: %s:%d: %s\n", path, lineno, xo_last_error());
			fclose(f);
			free(v);
			return 2;
		}
		if (lop != op || (padding >= 0 && (int)p.padding != padding))
			continue;
		xo_params_format(op, dir, &p, params, sizeof(params));
		for (int m = 0; m < XO_HMODE_COUNT; m++) {
			struct tcase *t;

			if (!xo_hmode_applies(op, dir, &p, (enum xo_hmode)m))
				continue;
			if (*n == cap) {
				struct tcase *nv;

				cap = cap ? 2 * cap : 16;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					fclose(f);
					free(v);
					fprintf(stderr, "test_ops: out of memory\n");
					return 2;
				}
				v = nv;
			}
			t = &v[(*n)++];
			t->c = (struct xo_case){.op = op,
			                        .dir = dir,
			                        .mode = (enum xo_hmode)m,
			                        .p = p,
			                        .seed = XO_CASE_SEED_DEFAULT};
			snprintf(t->name, sizeof(t->name), "%s:%d %s %s %s %s", base, lineno,
			         xo_op_name(op), xo_dir_name(dir), xo_hmode_name((enum xo_hmode)m),
			         params);
		}
	}
	fclose(f);
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	const char *backend = NULL, *shapes = NULL, *opname = NULL, *dirname = NULL;
	int padding = -1, rc;
	enum xo_op op;
	enum xo_dir dir;
	struct tcase *cases = NULL;
	struct CMUnitTest *tests = NULL;
	size_t n = 0;
	char group[256];
	enum xo_status st;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--tables"))
			return run_tables();
		if (!v)
			return usage();
		if (!strcmp(argv[i], "--backend"))
			backend = v;
		else if (!strcmp(argv[i], "--shapes"))
			shapes = v;
		else if (!strcmp(argv[i], "--op"))
			opname = v;
		else if (!strcmp(argv[i], "--dir"))
			dirname = v;
		else if (!strcmp(argv[i], "--padding")) {
			struct xo_params p = xo_params_default();

			if (xo_params_set(&p, "padding", v)) {
				fprintf(stderr, "test_ops: %s\n", xo_last_error());
				return 2;
			}
			padding = (int)p.padding;
		} else
			return usage();
		i++;
	}
	if (!backend || !shapes || !opname || !dirname)
		return usage();
	op = xo_op_from_name(opname);
	if (op == XO_OP_COUNT) {
		fprintf(stderr, "test_ops: unknown op '%s'\n", opname);
		return 2;
	}
	if (strcmp(dirname, "fwd") && strcmp(dirname, "bwd"))
		return usage();
	dir = strcmp(dirname, "fwd") ? XO_DIR_BWD : XO_DIR_FWD;

	st = xo_backend_open(backend, &g_be);
	if (st) {
		bool require = xo_opencl_required();

		if (st == XO_ENODEV && !require) {
			printf("SKIPPED: backend '%s' is not available here: %s\n", backend,
			       xo_last_error());
			return SKIP_CODE;
		}
		fprintf(stderr, "test_ops: cannot open backend '%s': %s%s\n", backend,
		        xo_last_error(), require ? " (XO_REQUIRE_OPENCL set)" : "");
		return 1;
	}
	st = xo_backend_open("ref", &g_ref);
	if (st) {
		fprintf(stderr, "test_ops: cannot open ref: %s\n", xo_last_error());
		xo_backend_close(g_be);
		return 1;
	}
	printf("backend: %s\n", xo_backend_describe(g_be));

	rc = load_cases(shapes, op, dir, padding, &cases, &n);
	if (rc)
		goto out_close;
	if (!n) {
		fprintf(stderr, "test_ops: no %s %s lines in %s\n", opname, dirname, shapes);
		rc = 1;
		goto out_close;
	}
	tests = calloc(n, sizeof(*tests));
	if (!tests) {
		rc = 2;
		goto out_close;
	}
	for (size_t i = 0; i < n; i++) {
		tests[i].name = cases[i].name;
		tests[i].test_func = run_case;
		tests[i].initial_state = &cases[i];
	}
	snprintf(group, sizeof(group), "ops.%s.%s.%s%s%s", backend, opname, dirname,
	         padding >= 0 ? "." : "",
	         padding >= 0 ? xo_padding_name((enum xo_padding)padding) : "");
	rc = _cmocka_run_group_tests(group, tests, n, NULL, NULL);
	free(tests);
out_close:
	free(cases);
	xo_backend_close(g_ref);
	xo_backend_close(g_be);
	return rc;
}
