/*
 * test_rnn_infer.c - the inference form of the recurrent ops
 * (include/xo/ops.def: fwd dst {y, ws|NULL}): a forward without a ws must
 * give y bit for bit as the forward with one, on every backend and every
 * path through it: ref; cpu at each ISA level the machine has (its lstm, gru
 * and simple_rnn keep a ring of 2 steps x a chunk of samples instead of the
 * ws rows); cl's general kernel and, with
 * XO_CL_TUNE=rnn_nb=4,wg=32, its tiled one (both write the rows to a
 * scratch buffer instead). simple_rnn (tanh and relu), lstm, gru
 * (reset_after both ways), with and without return_sequences and
 * go_backwards, at batch 1, 13 and 77 (cpu: 2 threads, each claiming
 * several chunks of the size xo_cpu_rnn_fwd_chunk picks), each without and,
 * at batch 13 and 77, with a step mask (mask_zero=1: samples n % 3 == 0 the
 * last two steps masked, n % 3 == 1 the first two; zero_output_for_mask
 * with go_backwards and return_sequences), whose masked rows the ring must
 * carry as the ws does.
 *
 * The comparison is exact: the same kernels run on the same inputs, only
 * the place where the state rows are kept differs, so any difference is a
 * ring slot read at the wrong step, a chunk's rows mixed, or y copied from
 * the wrong row. y is filled with different garbage before each run, so a
 * forward that leaves y unwritten cannot pass.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xo.h"
#include "xo/cpu.h"

struct variant {
	enum xo_op op;
	bool relu, ra;
	const char *name;
};

static const struct variant variants[] = {
    {XO_OP_simple_rnn, false, false, "simple_rnn"},
    {XO_OP_simple_rnn, true, false, "simple_rnn relu"},
    {XO_OP_lstm, false, false, "lstm"},
    {XO_OP_gru, false, true, "gru reset_after=1"},
    {XO_OP_gru, false, false, "gru reset_after=0"},
};

#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

static const int64_t batches[] = {1, 13, 77};

/* Inputs in [-0.5, 0.5) (weights a quarter of that, so relu's state stays
 * bounded over the steps), a stream per slot. */
static float val(int slot, int64_t i)
{
	float v = xo_philox_uniform(11, (uint32_t)slot, 0, (uint64_t)i) - 0.5f;

	return slot == 0 ? v : 0.25f * v;
}

static struct xo_tensor *tensor(struct xo_backend *be, const struct xo_slot_shape *s, float *host,
                                int64_t *count)
{
	struct xo_tensor *t;
	int64_t n = 1;

	for (int d = 0; d < s->ndim; d++)
		n *= s->dim[d];
	assert_int_equal(xo_tensor_create(be, s->dtype, s->ndim, s->dim, &t), XO_OK);
	if (host)
		assert_int_equal(xo_tensor_write(t, host, 0, n), XO_OK);
	*count = n;
	return t;
}

/* The ids of mask_zero (test_rnn_infer.c's header): 0 at masked steps. */
static int32_t id_at(const struct xo_params *p, int64_t k)
{
	int64_t n = k / p->len, t = k % p->len;
	bool m = n % 3 == 0 ? t >= p->len - 2 : n % 3 == 1 && t < 2;

	return m ? 0 : (int32_t)(1 + k % 5);
}

/* y of one forward, with a ws (with_ws) or without; y filled with fill first. */
static float *forward(struct xo_backend *be, const struct xo_params *p, enum xo_op op,
                      bool with_ws, float fill, int64_t *ny)
{
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
	struct xo_op_args a = {.p = *p};
	struct xo_tensor *ws = NULL, *y;
	float *h;
	int64_t n;

	assert_int_equal(xo_op_shapes(op, XO_DIR_FWD, p, ss, ds), XO_OK);
	assert_true(ds[1].optional);
	for (int i = 0; i < XO_MAX_SRC; i++) {
		if (!ss[i].ndim)
			continue;
		n = 1;
		for (int d = 0; d < ss[i].ndim; d++)
			n *= ss[i].dim[d];
		h = malloc((size_t)n * sizeof(float));
		assert_non_null(h);
		for (int64_t k = 0; k < n; k++) {
			int32_t id = id_at(p, k);

			h[k] = val(i, k);
			if (ss[i].dtype == XO_DTYPE_I32) /* the ids */
				memcpy(&h[k], &id, sizeof(id));
		}
		a.src[i] = tensor(be, &ss[i], h, &n);
		free(h);
	}
	n = 1;
	for (int d = 0; d < ds[0].ndim; d++)
		n *= ds[0].dim[d];
	h = malloc((size_t)n * sizeof(float));
	assert_non_null(h);
	for (int64_t k = 0; k < n; k++)
		h[k] = fill;
	y = tensor(be, &ds[0], h, ny);
	if (with_ws)
		ws = tensor(be, &ds[1], NULL, &n);
	a.dst[0] = y;
	a.dst[1] = ws;
	if (xo_op_run(be, op, XO_DIR_FWD, &a))
		fail_msg("%s: %s", xo_backend_name(be), xo_last_error());
	assert_int_equal(xo_tensor_read(y, h, 0, *ny), XO_OK);
	for (int i = 0; i < XO_MAX_SRC; i++)
		xo_tensor_free((struct xo_tensor *)a.src[i]);
	xo_tensor_free(y);
	xo_tensor_free(ws);
	return h;
}

/* Every variant, direction and batch on one backend. */
static void check_backend(struct xo_backend *be, const char *what)
{
	int cases = 0;

	/* each variant unmasked, then masked */
	for (size_t v = 0; v < 2 * NVARIANTS; v++)
		for (int seq = 0; seq < 2; seq++)
			for (int back = 0; back < 2; back++)
				for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
					const struct variant *w = &variants[v % NVARIANTS];
					struct xo_params p = xo_params_default_op(w->op);
					bool mask = v >= NVARIANTS;
					float *y0, *y1;
					int64_t n0, n1, zeros = 0;

					p.batch = batches[b];
					p.len = 7;
					p.ch = 5;
					p.units = 33; /* not a multiple of any vector width */
					p.return_sequences = seq;
					p.go_backwards = back;
					p.use_bias = !(seq && back); /* both ways */
					p.reset_after = w->ra;
					if (w->relu)
						p.activation = XO_ACTIVATION_RELU;
					/* masked: batch 13 and 77 (at batch 1 the masked
					 * zeros of its one sample are 2 of 7 steps) */
					if (mask && p.batch == 1)
						continue;
					p.mask_zero = mask;
					p.zero_output_for_mask = mask && back && seq;
					y0 = forward(be, &p, w->op, true, 0.0f, &n0);
					y1 = forward(be, &p, w->op, false, NAN, &n1);
					assert_int_equal(n0, n1);
					for (int64_t k = 0; k < n0; k++)
						zeros += y0[k] == 0.0f;
					/* mistrust (DESIGN section 5): an informative y;
					 * relu zeroes about half of its symmetric
					 * pre-activations, so 70% there */
					if (zeros * 10 > n0 * (w->relu ? 7 : 3))
						fail_msg("%s %s: y is %d%% zeros", what, w->name,
						         (int)(zeros * 100 / n0));
					if (memcmp(y0, y1, (size_t)n0 * sizeof(float))) {
						int64_t k = 0;

						while (!memcmp(y0 + k, y1 + k, sizeof(float)))
							k++;
						fail_msg("%s %s return_sequences=%d go_backwards=%d "
						         "batch=%d mask_zero=%d: y without ws differs at "
						         "%d (%a vs %a)",
						         what, w->name, seq, back, (int)p.batch, mask,
						         (int)k, (double)y1[k], (double)y0[k]);
					}
					free(y0);
					free(y1);
					cases++;
				}
	print_message("[          ] %s: %d cases, y the same bits without ws\n", what, cases);
}

static void test_ref(void **state)
{
	struct xo_backend *be;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	check_backend(be, "ref");
	xo_backend_close(be);
}

/* Each ISA level this CPU has (XO_CPU_ISA is read at open, and the backend
 * refuses a level the CPU lacks: an AVX2-only machine runs scalar and avx2), on 2 threads. */
static void test_cpu(void **state)
{
	static const char *const isa[] = {"scalar", "avx2", "avx512"};
	enum xo_cpu_isa best;

	(void)state;
	assert_int_equal(setenv("XO_THREADS", "2", 1), 0);
	unsetenv("XO_CPU_ISA");
	best = xo_cpu_isa_detect();
	for (size_t i = 0; i <= (size_t)best; i++) {
		struct xo_backend *be;
		char what[64];

		assert_int_equal(setenv("XO_CPU_ISA", isa[i], 1), 0);
		assert_int_equal(xo_backend_open("cpu", &be), XO_OK);
		snprintf(what, sizeof(what), "cpu %s", isa[i]);
		check_backend(be, what);
		xo_backend_close(be);
	}
	unsetenv("XO_CPU_ISA");
}

/* The general kernel (the device's row) and the tiled one. */
static void test_cl(void **state)
{
	static const char *const tune[] = {NULL, "rnn_nb=4,wg=32"};

	bool built = false;

	(void)state;
	for (int i = 0; i < xo_backend_count(); i++)
		built |= !strcmp(xo_backend_kind(i), "cl");
	if (!built) {
		print_message("[  SKIP    ] cl: not built (XO_OPENCL=OFF)\n");
		skip();
	}
	for (size_t i = 0; i < sizeof(tune) / sizeof(tune[0]); i++) {
		struct xo_backend *be;
		enum xo_status st;

		if (tune[i])
			assert_int_equal(setenv("XO_CL_TUNE", tune[i], 1), 0);
		else
			unsetenv("XO_CL_TUNE");
		st = xo_backend_open("cl", &be);
		if (st == XO_ENODEV && !xo_opencl_required()) {
			print_message("[  SKIP    ] cl: %s\n", xo_last_error());
			skip();
		}
		if (st)
			fail_msg("cl: %s", xo_last_error());
		check_backend(be, tune[i] ? "cl tiles" : "cl");
		xo_backend_close(be);
	}
	unsetenv("XO_CL_TUNE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ref),
	    cmocka_unit_test(test_cpu),
	    cmocka_unit_test(test_cl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
