/*
 * test_util.c - the utilities every command relies on: xo_error keeps a
 * message on one printable line (control bytes from a file name or a file's
 * contents are escaped) and may quote the previous message; xo_proc_run runs
 * a program from an argument vector, so shell syntax in an argument is data.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc.h"
#include "xo.h"

/* The keys an op requires come from its keys entry (xo check refuses a case
 * without them): Keras's arguments without a default, in canonical-line
 * order, and every one is a key the op reads (on its canonical line). */
static void test_params_required_keys(void **state)
{
	(void)state;
	assert_string_equal(xo_op_required_key(XO_OP_conv1d, 0), "filters");
	assert_string_equal(xo_op_required_key(XO_OP_conv1d, 1), "kernel_size");
	assert_null(xo_op_required_key(XO_OP_conv1d, 2));
	assert_string_equal(xo_op_required_key(XO_OP_conv2d, 0), "filters");
	assert_string_equal(xo_op_required_key(XO_OP_conv2d, 1), "kernel_size");
	assert_string_equal(xo_op_required_key(XO_OP_dense, 0), "units");
	assert_null(xo_op_required_key(XO_OP_dense, 1));
	assert_string_equal(xo_op_required_key(XO_OP_dropout, 0), "rate");
	assert_null(xo_op_required_key(XO_OP_relu, 0));
	assert_null(xo_op_required_key(XO_OP_max_pooling1d, 0));
	for (int o = 0; o < XO_OP_COUNT; o++) {
		struct xo_params d = xo_params_default();
		const char *key;
		char line[512] = " ";

		xo_params_format((enum xo_op)o, XO_DIR_FWD, &d, line + 1, sizeof(line) - 1);
		for (int k = 0; (key = xo_op_required_key((enum xo_op)o, k)); k++) {
			char word[80];

			snprintf(word, sizeof(word), " %s=", key);
			if (!strstr(line, word))
				fail_msg("%s requires %s, not on its line '%s'",
				         xo_op_name((enum xo_op)o), key, line);
		}
	}
}

/* The width axis of a 2-D op: *_w keys win, 0 means "as the height", and a
 * default stride (0) stays the axis's own default (its pool size). */
static void test_params_width_axis(void **state)
{
	(void)state;
	struct xo_params p = xo_params_default();
	struct xo_params q;

	assert_int_equal(xo_params_set(&p, "len", "7"), XO_OK);
	assert_int_equal(xo_params_set(&p, "width", "5"), XO_OK);
	assert_int_equal(xo_params_set(&p, "kernel_size", "3"), XO_OK);
	assert_int_equal(xo_params_set(&p, "pool_size", "3"), XO_OK);
	assert_int_equal(xo_params_set(&p, "dilation_rate", "2"), XO_OK);
	q = xo_params_width_axis(&p);
	assert_int_equal(q.len, 5);
	assert_int_equal(q.kernel_size, 3);
	assert_int_equal(q.dilation_rate, 2);
	assert_int_equal(q.pool_size, 3);
	assert_int_equal(xo_pool1d_stride(&q), 3);
	assert_int_equal(xo_params_set(&p, "kernel_w", "1"), XO_OK);
	assert_int_equal(xo_params_set(&p, "pool_w", "2"), XO_OK);
	assert_int_equal(xo_params_set(&p, "dilation_w", "4"), XO_OK);
	q = xo_params_width_axis(&p);
	assert_int_equal(q.kernel_size, 1);
	assert_int_equal(q.pool_size, 2);
	assert_int_equal(q.dilation_rate, 4);
	assert_int_equal(xo_pool1d_stride(&q), 2);
	assert_int_equal(xo_params_set(&p, "strides", "2"), XO_OK);
	q = xo_params_width_axis(&p);
	assert_int_equal(xo_pool1d_stride(&q), 2);
	assert_int_equal(xo_params_set(&p, "strides_w", "1"), XO_OK);
	q = xo_params_width_axis(&p);
	assert_int_equal(xo_conv1d_stride(&q), 1);
	assert_int_equal(q.len, 5);
	assert_int_equal(p.len, 7); /* p untouched */
}

/* conv2d geometry: the conv1d rule per axis, errors naming the axis's keys. */
static void test_conv2d_geometry(void **state)
{
	struct xo_params p = xo_params_default();
	int64_t oh = 0, ow = 0, pt = -1, pl = -1;

	(void)state;
	assert_int_equal(xo_params_set(&p, "len", "12"), XO_OK);
	assert_int_equal(xo_params_set(&p, "width", "7"), XO_OK);
	assert_int_equal(xo_params_set(&p, "kernel_size", "3"), XO_OK);
	assert_int_equal(xo_conv2d_geometry(&p, &oh, &ow, &pt, &pl), XO_OK);
	assert_true(oh == 10 && ow == 5 && pt == 0 && pl == 0);
	/* same, even kernel on the width, strides (2, 1): out = ceil(len / s);
	 * width padding total 2 - 1 = 1, the smaller half (0) before */
	assert_int_equal(xo_params_set(&p, "padding", "same"), XO_OK);
	assert_int_equal(xo_params_set(&p, "kernel_w", "2"), XO_OK);
	assert_int_equal(xo_params_set(&p, "strides", "2"), XO_OK);
	assert_int_equal(xo_params_set(&p, "strides_w", "1"), XO_OK);
	assert_int_equal(xo_conv2d_geometry(&p, &oh, &ow, &pt, &pl), XO_OK);
	assert_true(oh == 6 && ow == 7 && pt == 0 && pl == 0);
	/* kernel 4 on the width, same: total 3, 1 before */
	assert_int_equal(xo_params_set(&p, "kernel_w", "4"), XO_OK);
	assert_int_equal(xo_conv2d_geometry(&p, &oh, &ow, &pt, &pl), XO_OK);
	assert_true(ow == 7 && pl == 1);
	/* a dilation on the width with a stride on the height: Keras refuses */
	assert_int_equal(xo_params_set(&p, "dilation_w", "2"), XO_OK);
	assert_int_equal(xo_conv2d_geometry(&p, &oh, &ow, &pt, &pl), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "conv2d: strides > 1 with dilation_rate > 1"));
	/* valid with a width receptive field longer than the width: its keys */
	p = xo_params_default();
	assert_int_equal(xo_params_set(&p, "len", "12"), XO_OK);
	assert_int_equal(xo_params_set(&p, "width", "7"), XO_OK);
	assert_int_equal(xo_params_set(&p, "kernel_size", "3"), XO_OK);
	assert_int_equal(xo_params_set(&p, "dilation_w", "4"), XO_OK);
	assert_int_equal(xo_conv2d_geometry(&p, &oh, &ow, &pt, &pl), XO_EINVAL);
	assert_string_equal(xo_last_error(), "conv2d: receptive field 9 (dilation_w*(kernel_w-1)+1) "
	                                     "is longer than width=7 with padding=valid");
	assert_int_equal(xo_params_set(&p, "width", "0"), XO_OK);
	assert_int_equal(xo_conv2d_geometry(&p, &oh, &ow, &pt, &pl), XO_EINVAL);
	assert_string_equal(xo_last_error(), "conv2d: width=0 must be >= 1");
	assert_int_equal(xo_params_set(&p, "padding", "causal"), XO_OK);
	assert_int_equal(xo_conv2d_geometry(&p, &oh, &ow, &pt, &pl), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "conv2d: padding=causal"));
}

static void test_error_one_line(void **state)
{
	(void)state;
	assert_int_equal(xo_error(XO_EFORMAT, "x.npy: descr '%s'", "<f4\n\033[2J"), XO_EFORMAT);
	assert_string_equal(xo_last_error(), "x.npy: descr '<f4\\x0a\\x1b[2J'");
	for (const char *p = xo_last_error(); *p; p++)
		assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
}

/* xo_escape_line: valid UTF-8 is kept; bytes that are not UTF-8 (a lone
 * continuation, an overlong form, a surrogate, a truncated sequence) and C1
 * controls (U+009B, a CSI on many terminals) become \xHH, as xo_error
 * writes them. */
static void test_escape_line_utf8(void **state)
{
	char out[128];

	(void)state;
	assert_string_equal(xo_escape_line(out, sizeof(out), "caf\xc3\xa9 \xe2\x82\xac"),
	                    "caf\xc3\xa9 \xe2\x82\xac");
	assert_string_equal(xo_escape_line(out, sizeof(out), "a\xff\x80" "b"), "a\\xff\\x80b");
	assert_string_equal(xo_escape_line(out, sizeof(out), "\xc0\xaf"), "\\xc0\\xaf");
	assert_string_equal(xo_escape_line(out, sizeof(out), "\xed\xa0\x80"),
	                    "\\xed\\xa0\\x80");
	assert_string_equal(xo_escape_line(out, sizeof(out), "\xc2\x9b" "2J"), "\\xc2\\x9b2J");
	assert_string_equal(xo_escape_line(out, sizeof(out), "x\xe2\x82"), "x\\xe2\\x82");
	/* NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR: line breaks to Unicode-aware
	 * readers; their neighbours U+2027 and U+202A stay */
	assert_string_equal(xo_escape_line(out, sizeof(out),
	                                   "a\xc2\x85" "b\xe2\x80\xa8" "c\xe2\x80\xa9" "d"),
	                    "a\\xc2\\x85b\\xe2\\x80\\xa8c\\xe2\\x80\\xa9d");
	assert_string_equal(xo_escape_line(out, sizeof(out), "\xe2\x80\xa7\xe2\x80\xaa"),
	                    "\xe2\x80\xa7\xe2\x80\xaa");
	assert_string_equal(xo_escape_line(out, sizeof(out), "a\tb\x7f"), "a\\x09b\\x7f");
	/* cut at a whole character: 5 bytes leave "ab" and no half of the euro */
	assert_string_equal(xo_escape_line(out, 5, "ab\xe2\x82\xac"), "ab");
	xo_error(XO_EINVAL, "p: %s", "\xff\n");
	assert_string_equal(xo_last_error(), "p: \\xff\\x0a");
}

/* A message that quotes the previous one keeps it (vsnprintf into its own
 * source buffer is undefined and lost the reason). */
static void test_error_quotes_previous(void **state)
{
	(void)state;
	xo_error(XO_EDB, "disk I/O error");
	xo_error(XO_EDB, "store.sqlite: %s", xo_last_error());
	assert_string_equal(xo_last_error(), "store.sqlite: disk I/O error");
}

/* An over-long message is cut, never overrun, and an escape is never cut in
 * half. */
static void test_error_truncates(void **state)
{
	char big[3000];

	(void)state;
	memset(big, '\n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	xo_error(XO_EINVAL, "%s", big);
	assert_true(strlen(xo_last_error()) < 1024);
	assert_int_equal(strlen(xo_last_error()) % 4, 0);
}

static void test_proc_no_shell(void **state)
{
	char dir[] = "/tmp/xo_util_XXXXXX", flag[64], arg[256];
	const char *argv[] = {"printf", "%s", arg, NULL};
	struct xo_proc p = {.argv = argv, .capture = true};
	char *out = NULL;
	int code;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(flag, sizeof(flag), "%s/pwned", dir);
	snprintf(arg, sizeof(arg), "a'; touch %s; echo '$(touch %s)`touch %s`", flag, flag, flag);
	assert_int_equal(xo_proc_run(&p, &code, &out, NULL), XO_OK);
	assert_int_equal(code, 0);
	assert_string_equal(out, arg);
	assert_int_equal(access(flag, F_OK), -1);
	free(out);
	rmdir(dir);
}

static void test_proc_exit_and_missing(void **state)
{
	const char *f[] = {"false", NULL};
	const char *missing[] = {"xo-no-such-program-here", NULL};
	const char *pwd[] = {"pwd", NULL};
	struct xo_proc p = {.argv = f};
	char *out = NULL;
	int code;

	(void)state;
	assert_int_equal(xo_proc_run(&p, &code, NULL, NULL), XO_OK);
	assert_int_equal(code, 1);
	p.argv = missing;
	assert_int_equal(xo_proc_run(&p, &code, NULL, NULL), XO_ENODEV);
	assert_non_null(strstr(xo_last_error(), "xo-no-such-program-here"));
	assert_false(xo_proc_found("xo-no-such-program-here"));
	assert_true(xo_proc_found("sh"));
	p.argv = pwd;
	p.cwd = "/";
	p.capture = true;
	assert_int_equal(xo_proc_run(&p, &code, &out, NULL), XO_OK);
	assert_string_equal(out, "/\n");
	free(out);
}

/* Output beyond the capture limit is an error, and the child is not left
 * blocked on a full pipe. */
static void test_proc_capture_limit(void **state)
{
	const char *argv[] = {"head", "-c", "300000", "/dev/zero", NULL};
	struct xo_proc p = {.argv = argv, .capture = true, .capture_max = 1000};
	char *out = NULL;
	int code;

	(void)state;
	assert_int_equal(xo_proc_run(&p, &code, &out, NULL), XO_EIO);
	assert_null(out);
	assert_non_null(strstr(xo_last_error(), "longer than 1000"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_params_required_keys),
	    cmocka_unit_test(test_params_width_axis),
	    cmocka_unit_test(test_conv2d_geometry),
	    cmocka_unit_test(test_error_one_line),
	    cmocka_unit_test(test_escape_line_utf8),
	    cmocka_unit_test(test_error_quotes_previous),
	    cmocka_unit_test(test_error_truncates),
	    cmocka_unit_test(test_proc_no_shell),
	    cmocka_unit_test(test_proc_exit_and_missing),
	    cmocka_unit_test(test_proc_capture_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
