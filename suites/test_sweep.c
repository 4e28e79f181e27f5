/*
 * test_sweep.c - every small geometry of the windowed ops, against ref.
 *
 *   test_sweep --backend B --op OP --dir fwd|bwd --padding P
 *
 * The shapes files hold chosen cases; a geometry bug (an off-by-one in a
 * same-padding split, a window end clipped on one axis only, a stride read
 * as the pool size, a tail loop that never runs at an odd size) hides in the
 * combinations nobody wrote down. This suite generates them from one table:
 * for each windowed op, every input size, window, stride and dilation in a
 * small range is crossed with every other (the "geometry" axes); channels,
 * batch, filters and use_bias take each of their values in turn (the
 * "turning" axes: value number i % span for the i-th valid case, so every
 * value appears and no case count multiplies). Combinations the op refuses
 * (xo_op_shapes: a valid window longer than the input, strides > 1 with
 * dilation > 1) are counted and left out. Each case runs in every mode the
 * harness applies to it, judged by xo_case_run with the per-op bounds
 * written in harness.c (none is changed here).
 *
 * One CMocka test per value of the table's first axis (the input length), so
 * a failure names its block; each failing case prints its repro line (up to
 * a few per block, then the count). A case whose reference output is
 * uninformative (XO_FAIL_MISTRUST: a fill that happens to make too many
 * zeros at these tiny sizes) is run again with the next fill seeds; one
 * uninformative under every seed is a degenerate geometry (every tap in
 * padding, one window over the whole input: a constant output whatever the
 * fill), compared all the same (xo_case.uninformative_ok) and counted in
 * the block's line: leaving it out would leave exactly the edge windows
 * untested.
 *
 * cl without an OpenCL platform exits 77 (SKIPPED) unless XO_REQUIRE_OPENCL=1.
 * suites/sweep.cmake makes one ctest test per backend x op x dir x padding.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define SKIP_CODE      77
#define SWEEP_MAX_AXES 12
#define SWEEP_REPORTED 4 /* failing cases printed in full per block */
#define SWEEP_SEEDS    4 /* fill seeds tried on a mistrusted reference */

/* One parameter and its values lo..hi; turning axes advance per valid case. */
struct sweep_axis {
	const char *key;
	int lo, hi;
	bool turning;
};

/* One op's sweep; the first axis is the block axis (one CMocka test each). */
struct sweep_op {
	const char *op;
	const char *paddings; /* the paddings swept, space-separated */
	struct sweep_axis ax[SWEEP_MAX_AXES];
};

/* The bounds: sizes 1..7 (odd and even, below, at and above every window),
 * windows 1..3, strides 1..3 (pooling: 0, its default = the pool size, too),
 * dilation 1..3 (conv1d) or 1..2 per axis (conv2d), channels 1..3, batch 1..2;
 * pad's margins -2..2, up_sampling's repeats 1..3 per axis, depthwise_conv2d's
 * depth_multiplier 1..3, conv2d_transpose's output_padding -1 (None) and 0. */
static const struct sweep_op sweep_table[] = {
    {"conv1d",
     "valid same causal",
     {{"len", 1, 7, false},
      {"kernel_size", 1, 3, false},
      {"strides", 1, 3, false},
      {"dilation_rate", 1, 3, false},
      {"ch", 1, 3, true},
      {"batch", 1, 2, true},
      {"filters", 1, 3, true},
      {"use_bias", 0, 1, true}}},
    {"conv2d",
     "valid same",
     {{"len", 1, 7, false},
      {"width", 1, 7, false},
      {"kernel_size", 1, 3, false},
      {"kernel_w", 1, 3, false},
      {"strides", 1, 3, false},
      {"strides_w", 1, 3, false},
      {"dilation_rate", 1, 2, false},
      {"dilation_w", 1, 2, false},
      {"ch", 1, 3, true},
      {"batch", 1, 2, true},
      {"filters", 1, 3, true},
      {"use_bias", 0, 1, true}}},
    {"max_pooling1d",
     "valid same",
     {{"len", 1, 7, false},
      {"pool_size", 1, 3, false},
      {"strides", 0, 3, false},
      {"ch", 1, 3, true},
      {"batch", 1, 2, true}}},
    {"average_pooling1d",
     "valid same",
     {{"len", 1, 7, false},
      {"pool_size", 1, 3, false},
      {"strides", 0, 3, false},
      {"ch", 1, 3, true},
      {"batch", 1, 2, true}}},
    {"max_pooling2d",
     "valid same",
     {{"len", 1, 7, false},
      {"width", 1, 7, false},
      {"pool_size", 1, 3, false},
      {"pool_w", 1, 3, false},
      {"strides", 0, 3, false},
      {"strides_w", 0, 3, false},
      {"ch", 1, 3, true},
      {"batch", 1, 2, true}}},
    {"average_pooling2d",
     "valid same",
     {{"len", 1, 7, false},
      {"width", 1, 7, false},
      {"pool_size", 1, 3, false},
      {"pool_w", 1, 3, false},
      {"strides", 0, 3, false},
      {"strides_w", 0, 3, false},
      {"ch", 1, 3, true},
      {"batch", 1, 2, true}}},
    /* pad reads no padding key: one row, the name's "valid" only a label;
     * every margin -2..2 (crops and pads) on the height; the width's
     * turning, from -1 (turning axes advance on valid cases only, so their
     * first values must leave some geometry valid: width 3 here) */
    {"pad",
     "valid",
     {{"len", 1, 7, false},
      {"width", 1, 4, false},
      {"pad_begin", -2, 2, false},
      {"pad_end", -2, 2, false},
      {"pad_begin_w", -1, 2, true},
      {"pad_end_w", -1, 1, true},
      {"ch", 1, 3, true},
      {"batch", 1, 2, true}}},
    /* up_sampling reads no padding key either */
    {"up_sampling",
     "valid",
     {{"len", 1, 7, false},
      {"width", 1, 3, false},
      {"repeats", 1, 3, false},
      {"repeats_w", 1, 3, false},
      {"ch", 1, 3, true},
      {"batch", 1, 2, true}}},
    /* depthwise_conv2d: conv2d's geometry without dilation, the multiplier
     * turning with the channels */
    {"depthwise_conv2d",
     "valid same",
     {{"len", 1, 7, false},
      {"width", 1, 7, false},
      {"kernel_size", 1, 3, false},
      {"kernel_w", 1, 3, false},
      {"strides", 1, 3, false},
      {"strides_w", 1, 3, false},
      {"ch", 1, 3, true},
      {"batch", 1, 2, true},
      {"depth_multiplier", 1, 3, true},
      {"use_bias", 0, 1, true}}},
    /* conv2d_transpose: strides shorter than, equal to and longer than the
     * kernel on each axis; output_padding None (-1) and 0 turning (every
     * larger value needs a larger stride) */
    {"conv2d_transpose",
     "valid same",
     {{"len", 1, 4, false},
      {"width", 1, 4, false},
      {"kernel_size", 1, 3, false},
      {"kernel_w", 1, 3, false},
      {"strides", 1, 3, false},
      {"strides_w", 1, 3, false},
      {"ch", 1, 3, true},
      {"filters", 1, 2, true},
      {"batch", 1, 2, true},
      {"output_padding", -1, 0, true},
      {"output_padding_w", -1, 0, true},
      {"use_bias", 0, 1, true}}},
};

/* One block: the sweep of one value of the first axis. */
struct sweep_block {
	const struct sweep_op *s;
	enum xo_op op;
	enum xo_dir dir;
	const char *padding;
	int first; /* the first axis's value */
	char name[128];
};

static struct xo_backend *g_ref, *g_be;
static const char *g_backend;
static uint64_t g_turn; /* valid cases so far: the turning axes' position */

static int axis_count(const struct sweep_op *s)
{
	int n = 0;

	while (n < SWEEP_MAX_AXES && s->ax[n].key)
		n++;
	return n;
}

static void set_int(struct xo_params *p, const char *key, int v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", v);
	if (xo_params_set(p, key, buf))
		fail_msg("sweep table: %s=%d: %s", key, v, xo_last_error());
}

/* The case of odometer position val[] (geometry axes; turning axes from
 * g_turn); false when the op refuses the combination. */
static bool sweep_params(const struct sweep_block *b, const int *val, struct xo_params *p)
{
	struct xo_slot_shape src[XO_MAX_SRC], dst[XO_MAX_DST];
	int n = axis_count(b->s);
	uint64_t turn = g_turn;

	*p = xo_params_default_op(b->op);
	if (xo_params_set(p, "padding", b->padding))
		fail_msg("sweep table: padding=%s: %s", b->padding, xo_last_error());
	for (int a = 0; a < n; a++) {
		const struct sweep_axis *x = &b->s->ax[a];
		int span = x->hi - x->lo + 1;

		set_int(p, x->key, x->turning ? x->lo + (int)(turn % (uint64_t)span) : val[a]);
	}
	return xo_op_shapes(b->op, b->dir, p, src, dst) == XO_OK;
}

/* Runs one case in every mode; returns the failures it counted (0 or more),
 * printing the first SWEEP_REPORTED of the block in full. */
static int sweep_case(const struct sweep_block *b, const struct xo_params *p, int *failed,
                      int64_t *runs, int64_t *degenerate)
{
	int bad = 0;

	for (int m = 0; m < XO_HMODE_COUNT; m++) {
		struct xo_case c = {.op = b->op, .dir = b->dir, .mode = (enum xo_hmode)m, .p = *p};
		struct xo_case_result r;
		enum xo_status st = XO_OK;

		if (!xo_hmode_applies(b->op, b->dir, p, (enum xo_hmode)m))
			continue;
		for (uint64_t seed = XO_CASE_SEED_DEFAULT;
		     seed < XO_CASE_SEED_DEFAULT + SWEEP_SEEDS; seed++) {
			c.seed = seed;
			st = xo_case_run(g_ref, g_be, &c, &r);
			if (st || r.fail != XO_FAIL_MISTRUST)
				break;
		}
		if (!st && r.fail == XO_FAIL_MISTRUST) {
			/* uninformative under every fill: the geometry itself
			 * (every tap in padding, one window over the whole
			 * input): compared all the same, and counted */
			c.seed = XO_CASE_SEED_DEFAULT;
			c.uninformative_ok = true;
			st = xo_case_run(g_ref, g_be, &c, &r);
			(*degenerate)++;
		}
		(*runs)++;
		if (!st && r.fail == XO_FAIL_NONE)
			continue;
		bad++;
		if (*failed + bad <= SWEEP_REPORTED) {
			if (st)
				print_error("could not run: %s\n  repro: %s\n", xo_last_error(),
				            r.repro);
			else
				print_error("%s: %s\n%s\n", xo_fail_name(r.fail), r.repro,
				            r.report);
		}
	}
	return bad;
}

static void run_block(void **state)
{
	const struct sweep_block *b = *state;
	int n = axis_count(b->s), val[SWEEP_MAX_AXES], failed = 0;
	int64_t valid = 0, refused = 0, runs = 0, degenerate = 0;

	for (int a = 0; a < n; a++)
		val[a] = b->s->ax[a].lo;
	val[0] = b->first;
	for (;;) {
		struct xo_params p;
		int a;

		if (sweep_params(b, val, &p)) {
			valid++;
			g_turn++;
			failed += sweep_case(b, &p, &failed, &runs, &degenerate);
		} else {
			refused++;
		}
		/* the next odometer position over the geometry axes after the first */
		for (a = n - 1; a > 0; a--) {
			if (b->s->ax[a].turning)
				continue;
			if (val[a] < b->s->ax[a].hi) {
				val[a]++;
				break;
			}
			val[a] = b->s->ax[a].lo;
		}
		if (a == 0)
			break;
	}
	print_message("  %s: %" PRId64 " geometries, %" PRId64 " refused, %" PRId64
	              " runs (%" PRId64 " uninformative under every fill), %d failed\n",
	              b->name, valid, refused, runs, degenerate, failed);
	if (failed)
		fail_msg("%s: %d of %" PRId64 " runs failed", b->name, failed, runs);
	/* a block of only refusals would pass while testing nothing */
	if (!valid)
		fail_msg("%s: every geometry refused: the table is wrong", b->name);
}

static int usage(void)
{
	fprintf(stderr, "usage: test_sweep --backend B --op OP --dir fwd|bwd --padding P\n");
	return 2;
}

static const struct sweep_op *sweep_find(const char *op, const char *padding)
{
	for (size_t i = 0; i < sizeof(sweep_table) / sizeof(sweep_table[0]); i++) {
		const struct sweep_op *s = &sweep_table[i];
		size_t lp = strlen(padding);
		const char *at;

		if (strcmp(s->op, op))
			continue;
		for (at = strstr(s->paddings, padding); at; at = strstr(at + 1, padding))
			if ((at == s->paddings || at[-1] == ' ') && (at[lp] == ' ' || !at[lp]))
				return s;
		return NULL;
	}
	return NULL;
}

static int sweep_run(const struct sweep_op *s, enum xo_op op, enum xo_dir dir, const char *padding)
{
	const struct sweep_axis *x = &s->ax[0];
	struct sweep_block blocks[16];
	struct CMUnitTest tests[16];
	int nb = x->hi - x->lo + 1;
	char group[128];

	if (nb > 16) {
		fprintf(stderr, "test_sweep: %s: more than 16 blocks\n", s->op);
		return 2;
	}
	for (int i = 0; i < nb; i++) {
		blocks[i] = (struct sweep_block){
		    .s = s, .op = op, .dir = dir, .padding = padding, .first = x->lo + i};
		snprintf(blocks[i].name, sizeof(blocks[i].name), "%s %s %s %s=%d", s->op,
		         xo_dir_name(dir), padding, x->key, x->lo + i);
		tests[i] = (struct CMUnitTest){
		    .name = blocks[i].name, .test_func = run_block, .initial_state = &blocks[i]};
	}
	snprintf(group, sizeof(group), "sweep.%s.%s.%s.%s", g_backend, s->op, xo_dir_name(dir),
	         padding);
	return _cmocka_run_group_tests(group, tests, (size_t)nb, NULL, NULL);
}

int main(int argc, char **argv)
{
	const char *opname = NULL, *dirname = NULL, *padding = NULL;
	const struct sweep_op *s;
	enum xo_op op;
	enum xo_status st;
	int rc;

	for (int i = 1; i < argc; i += 2) {
		if (i + 1 == argc)
			return usage();
		if (!strcmp(argv[i], "--backend"))
			g_backend = argv[i + 1];
		else if (!strcmp(argv[i], "--op"))
			opname = argv[i + 1];
		else if (!strcmp(argv[i], "--dir"))
			dirname = argv[i + 1];
		else if (!strcmp(argv[i], "--padding"))
			padding = argv[i + 1];
		else
			return usage();
	}
	if (!g_backend || !opname || !dirname || !padding ||
	    (strcmp(dirname, "fwd") && strcmp(dirname, "bwd")))
		return usage();
	op = xo_op_from_name(opname);
	s = sweep_find(opname, padding);
	if (op == XO_OP_COUNT || !s) {
		fprintf(stderr, "test_sweep: no sweep of op '%s' with padding '%s'\n", opname,
		        padding);
		return 2;
	}
	st = xo_backend_open(g_backend, &g_be);
	if (st) {
		bool require = xo_opencl_required();

		if (st == XO_ENODEV && !require) {
			printf("SKIPPED: backend '%s' is not available here: %s\n", g_backend,
			       xo_last_error());
			return SKIP_CODE;
		}
		fprintf(stderr, "test_sweep: cannot open backend '%s': %s%s\n", g_backend,
		        xo_last_error(), require ? " (XO_REQUIRE_OPENCL set)" : "");
		return 1;
	}
	st = xo_backend_open("ref", &g_ref);
	if (st) {
		fprintf(stderr, "test_sweep: cannot open ref: %s\n", xo_last_error());
		xo_backend_close(g_be);
		return 1;
	}
	printf("backend: %s\n", xo_backend_describe(g_be));
	rc = sweep_run(s, op, strcmp(dirname, "fwd") ? XO_DIR_BWD : XO_DIR_FWD, padding);
	xo_backend_close(g_ref);
	xo_backend_close(g_be);
	return rc;
}
