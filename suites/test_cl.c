/*
 * test_cl.c - the cl backend's own promises, beyond numerics (the op suites
 * compare its results with ref): no op falls back to host code, device
 * memory limits are errors not crashes, device choice errors name the
 * reason, a program build failure is a status, OpenCL errors are translated
 * by name, the time split is sane and counts events it could not time,
 * views at odd element offsets work (the model's flat parameter buffer),
 * and an out-of-range gather index is reported, never written out of bounds.
 *
 * Without an OpenCL platform the suite is skipped (exit 77, the reason
 * printed) unless XO_REQUIRE_OPENCL=1, which CI sets: then it fails; with
 * XO_REQUIRE_OPENCL=gpu (ci/gpu.sh) a chosen device that is not a GPU fails
 * too (the backend refuses to open).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cl_internal.h"

#define SKIP_CODE 77

static struct xo_backend *cl_be, *ref_be;

static struct xo_params params_of(const char *line)
{
	struct xo_params p = xo_params_default();
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		assert_non_null(eq);
		*eq = '\0';
		assert_int_equal(xo_params_set(&p, tok, eq + 1), XO_OK);
	}
	return p;
}

/* One small case per op and direction (every slot filled, optional ones too). */
static const struct {
	enum xo_op op;
	enum xo_dir dir;
	const char *params;
} cases[] = {
	{XO_OP_conv1d, XO_DIR_FWD, "batch=2 len=9 ch=2 filters=3 kernel_size=3 activation=relu"},
	{XO_OP_conv1d, XO_DIR_BWD, "batch=2 len=9 ch=2 filters=3 kernel_size=3 activation=relu"},
	{XO_OP_conv2d, XO_DIR_FWD,
	 "batch=2 len=5 width=4 ch=2 filters=3 kernel_size=3 kernel_w=2 padding=same activation=relu"},
	{XO_OP_conv2d, XO_DIR_BWD,
	 "batch=2 len=5 width=4 ch=2 filters=3 kernel_size=3 kernel_w=2 padding=same activation=relu"},
	{XO_OP_max_pooling1d, XO_DIR_FWD, "batch=2 len=9 ch=2 pool_size=3"},
	{XO_OP_max_pooling1d, XO_DIR_BWD, "batch=2 len=9 ch=2 pool_size=3"},
	{XO_OP_average_pooling1d, XO_DIR_FWD, "batch=2 len=9 ch=2 pool_size=3 padding=same"},
	{XO_OP_average_pooling1d, XO_DIR_BWD, "batch=2 len=9 ch=2 pool_size=3 padding=same"},
	{XO_OP_global_average_pooling1d, XO_DIR_FWD, "batch=2 len=9 ch=2"},
	{XO_OP_global_average_pooling1d, XO_DIR_BWD, "batch=2 len=9 ch=2"},
	{XO_OP_global_max_pooling1d, XO_DIR_FWD, "batch=2 len=9 ch=2"},
	{XO_OP_global_max_pooling1d, XO_DIR_BWD, "batch=2 len=9 ch=2"},
	{XO_OP_batch_normalization, XO_DIR_FWD, "batch=2 len=3 ch=4 epsilon=0.001"},
	{XO_OP_batch_normalization, XO_DIR_BWD, "batch=2 len=3 ch=4 epsilon=0.001"},
	{XO_OP_simple_rnn, XO_DIR_FWD, "batch=2 len=3 ch=2 units=3 activation=tanh"},
	{XO_OP_simple_rnn, XO_DIR_BWD, "batch=2 len=3 ch=2 units=3 activation=tanh"},
	{XO_OP_lstm, XO_DIR_FWD, "batch=2 len=3 ch=2 units=3 activation=tanh"},
	{XO_OP_lstm, XO_DIR_BWD, "batch=2 len=3 ch=2 units=3 activation=tanh"},
	{XO_OP_gru, XO_DIR_FWD, "batch=2 len=3 ch=2 units=3 activation=tanh"},
	{XO_OP_gru, XO_DIR_BWD, "batch=2 len=3 ch=2 units=3 activation=tanh"},
	{XO_OP_max_pooling2d, XO_DIR_FWD, "batch=2 len=5 width=4 ch=2 pool_size=2 padding=same"},
	{XO_OP_max_pooling2d, XO_DIR_BWD, "batch=2 len=5 width=4 ch=2 pool_size=2 padding=same"},
	{XO_OP_average_pooling2d, XO_DIR_FWD, "batch=2 len=5 width=4 ch=2 pool_size=2 padding=same"},
	{XO_OP_average_pooling2d, XO_DIR_BWD, "batch=2 len=5 width=4 ch=2 pool_size=2 padding=same"},
	{XO_OP_global_average_pooling2d, XO_DIR_FWD, "batch=2 len=3 width=4 ch=2"},
	{XO_OP_global_average_pooling2d, XO_DIR_BWD, "batch=2 len=3 width=4 ch=2"},
	{XO_OP_global_max_pooling2d, XO_DIR_FWD, "batch=2 len=3 width=4 ch=2"},
	{XO_OP_global_max_pooling2d, XO_DIR_BWD, "batch=2 len=3 width=4 ch=2"},
	{XO_OP_dense, XO_DIR_FWD, "batch=3 ch=5 units=4 activation=sigmoid"},
	{XO_OP_dense, XO_DIR_BWD, "batch=3 ch=5 units=4 activation=sigmoid"},
	{XO_OP_relu, XO_DIR_FWD, "batch=2 len=3 ch=4"},
	{XO_OP_relu, XO_DIR_BWD, "batch=2 len=3 ch=4"},
	{XO_OP_sigmoid, XO_DIR_FWD, "batch=2 len=3 ch=4"},
	{XO_OP_sigmoid, XO_DIR_BWD, "batch=2 len=3 ch=4"},
	{XO_OP_softmax, XO_DIR_FWD, "batch=2 len=3 ch=4"},
	{XO_OP_softmax, XO_DIR_BWD, "batch=2 len=3 ch=4"},
	{XO_OP_tanh, XO_DIR_FWD, "batch=2 len=3 ch=4"},
	{XO_OP_tanh, XO_DIR_BWD, "batch=2 len=3 ch=4"},
	{XO_OP_elu, XO_DIR_FWD, "batch=2 len=3 ch=4"},
	{XO_OP_elu, XO_DIR_BWD, "batch=2 len=3 ch=4"},
	{XO_OP_gelu, XO_DIR_FWD, "batch=2 len=3 ch=4"},
	{XO_OP_gelu, XO_DIR_BWD, "batch=2 len=3 ch=4"},
	{XO_OP_softplus, XO_DIR_FWD, "batch=2 len=3 ch=4"},
	{XO_OP_softplus, XO_DIR_BWD, "batch=2 len=3 ch=4"},
	{XO_OP_flatten, XO_DIR_FWD, "batch=2 len=3 ch=4"},
	{XO_OP_flatten, XO_DIR_BWD, "batch=2 len=3 ch=4"},
	{XO_OP_dropout, XO_DIR_FWD, "batch=2 len=3 ch=4 rate=0.5 seed=5"},
	{XO_OP_dropout, XO_DIR_BWD, "batch=2 len=3 ch=4 rate=0.5 seed=5"},
	{XO_OP_categorical_crossentropy, XO_DIR_FWD, "batch=3 ch=4"},
	{XO_OP_categorical_crossentropy, XO_DIR_BWD, "batch=3 ch=4"},
	{XO_OP_adam, XO_DIR_FWD, "size=10"},
	{XO_OP_sgd, XO_DIR_FWD, "size=10 momentum=0.9 nesterov=true"},
	{XO_OP_rmsprop, XO_DIR_FWD, "size=10 momentum=0.5"},
	{XO_OP_accuracy, XO_DIR_FWD, "batch=3 ch=4"},
	{XO_OP_binary_crossentropy, XO_DIR_FWD, "batch=3 ch=4"},
	{XO_OP_binary_crossentropy, XO_DIR_BWD, "batch=3 ch=4"},
	{XO_OP_mean_squared_error, XO_DIR_FWD, "batch=3 ch=4"},
	{XO_OP_mean_squared_error, XO_DIR_BWD, "batch=3 ch=4"},
	{XO_OP_binary_accuracy, XO_DIR_FWD, "batch=3 ch=4"},
	{XO_OP_sparse_categorical_crossentropy, XO_DIR_FWD, "batch=3 ch=4"},
	{XO_OP_sparse_categorical_crossentropy, XO_DIR_BWD, "batch=3 ch=4"},
	{XO_OP_sparse_categorical_accuracy, XO_DIR_FWD, "batch=3 ch=4"},
	{XO_OP_categorical_crossentropy, XO_DIR_FWD, "batch=3 ch=4 from_logits=1"},
	{XO_OP_categorical_crossentropy, XO_DIR_BWD, "batch=3 ch=4 from_logits=1"},
	{XO_OP_binary_crossentropy, XO_DIR_FWD, "batch=3 ch=4 from_logits=1"},
	{XO_OP_binary_crossentropy, XO_DIR_BWD, "batch=3 ch=4 from_logits=1"},
	{XO_OP_sparse_categorical_crossentropy, XO_DIR_FWD, "batch=3 ch=4 from_logits=1"},
	{XO_OP_sparse_categorical_crossentropy, XO_DIR_BWD, "batch=3 ch=4 from_logits=1"},
	{XO_OP_gather, XO_DIR_FWD, "batch=3 ch=4 rows=5"},
	{XO_OP_embedding, XO_DIR_FWD, "batch=3 len=2 ch=4 rows=5"},
	{XO_OP_embedding, XO_DIR_BWD, "batch=3 len=2 ch=4 rows=5"},
	{XO_OP_relu6, XO_DIR_FWD, "batch=2 len=3 ch=4"},
	{XO_OP_relu6, XO_DIR_BWD, "batch=2 len=3 ch=4"},
	{XO_OP_hard_sigmoid, XO_DIR_FWD, "batch=2 len=3 ch=4"},
	{XO_OP_hard_sigmoid, XO_DIR_BWD, "batch=2 len=3 ch=4"},
	{XO_OP_silu, XO_DIR_FWD, "batch=2 len=3 ch=4"},
	{XO_OP_silu, XO_DIR_BWD, "batch=2 len=3 ch=4"},
	{XO_OP_log_softmax, XO_DIR_FWD, "batch=2 len=3 ch=4"},
	{XO_OP_log_softmax, XO_DIR_BWD, "batch=2 len=3 ch=4"},
	{XO_OP_pad, XO_DIR_FWD, "batch=2 len=5 width=3 ch=2 pad_begin=1 pad_end=2 pad_end_w=-1"},
	{XO_OP_pad, XO_DIR_BWD, "batch=2 len=5 width=3 ch=2 pad_begin=1 pad_end=2 pad_end_w=-1"},
	{XO_OP_up_sampling, XO_DIR_FWD, "batch=2 len=3 width=2 ch=3 repeats=2 repeats_w=3"},
	{XO_OP_up_sampling, XO_DIR_BWD, "batch=2 len=3 width=2 ch=3 repeats=2 repeats_w=3"},
	{XO_OP_layer_normalization, XO_DIR_FWD, "batch=2 len=3 ch=4 epsilon=0.001"},
	{XO_OP_layer_normalization, XO_DIR_BWD, "batch=2 len=3 ch=4 epsilon=0.001"},
	{XO_OP_permute, XO_DIR_FWD, "batch=2 len=3 width=4 ch=5 dims=231"},
	{XO_OP_permute, XO_DIR_BWD, "batch=2 len=3 width=4 ch=5 dims=231"},
	{XO_OP_merge, XO_DIR_FWD, "batch=2 len=3 ch=4 mode=maximum"},
	{XO_OP_merge, XO_DIR_BWD, "batch=2 len=3 ch=4 mode=concatenate ch_b=3"},
	{XO_OP_merge, XO_DIR_FWD, "batch=2 len=3 ch=4 mode=multiply mask_a=1 mask_b=1"},
	{XO_OP_merge, XO_DIR_BWD, "batch=2 len=3 ch=4 mode=maximum mask_b=1"},
	{XO_OP_depthwise_conv2d, XO_DIR_FWD,
	 "batch=2 len=5 width=4 ch=3 depth_multiplier=2 kernel_size=3 kernel_w=2 padding=same "
	 "activation=relu"},
	{XO_OP_depthwise_conv2d, XO_DIR_BWD,
	 "batch=2 len=5 width=4 ch=3 depth_multiplier=2 kernel_size=3 kernel_w=2 padding=same "
	 "activation=relu"},
	{XO_OP_flip, XO_DIR_FWD, "batch=2 len=5 ch=3"},
	{XO_OP_flip, XO_DIR_BWD, "batch=2 len=5 ch=3"},
	{XO_OP_rescaling, XO_DIR_FWD, "batch=2 len=3 ch=4 multiplier=0.5 offset=1"},
	{XO_OP_rescaling, XO_DIR_BWD, "batch=2 len=3 ch=4 multiplier=0.5 offset=1"},
	{XO_OP_normalization, XO_DIR_FWD, "batch=2 len=3 ch=4"},
	{XO_OP_normalization, XO_DIR_BWD, "batch=2 len=3 ch=4"},
	{XO_OP_normalization, XO_DIR_FWD, "batch=2 len=3 ch=4 invert=1"},
	{XO_OP_normalization, XO_DIR_BWD, "batch=2 len=3 ch=4 invert=1"},
	{XO_OP_leaky_relu, XO_DIR_FWD, "batch=2 len=3 ch=4 negative_slope=0.2"},
	{XO_OP_leaky_relu, XO_DIR_BWD, "batch=2 len=3 ch=4 negative_slope=0.2"},
	{XO_OP_elu, XO_DIR_FWD, "batch=2 len=3 ch=4 alpha=0.7"},
	{XO_OP_elu, XO_DIR_BWD, "batch=2 len=3 ch=4 alpha=0.7"},
	{XO_OP_elu, XO_DIR_FWD, "batch=2 len=3 ch=4 alpha=-0.6"},
	{XO_OP_elu, XO_DIR_BWD, "batch=2 len=3 ch=4 alpha=-0.6"},
	{XO_OP_conv2d_transpose, XO_DIR_FWD,
	 "batch=2 len=3 width=4 ch=3 filters=2 kernel_size=3 kernel_w=2 strides=2 padding=same "
	 "output_padding=1 activation=relu"},
	{XO_OP_conv2d_transpose, XO_DIR_BWD,
	 "batch=2 len=3 width=4 ch=3 filters=2 kernel_size=3 kernel_w=2 strides=2 padding=same "
	 "output_padding=1 activation=relu"},
	{XO_OP_attention, XO_DIR_FWD, "batch=2 len=3 len_kv=4 heads=2 key_dim=3 value_dim=2"},
	{XO_OP_attention, XO_DIR_BWD, "batch=2 len=3 heads=2 key_dim=3 causal=1"},
	{XO_OP_attention, XO_DIR_FWD, "batch=2 len=3 heads=2 key_dim=3 dropout=0.3 seed=4 step=2"},
	{XO_OP_attention, XO_DIR_BWD, "batch=2 len=3 heads=2 key_dim=3 dropout=0.3 seed=4 step=2"},
	{XO_OP_global_average_pooling1d, XO_DIR_FWD, "batch=2 len=9 ch=2 mask_zero=1"},
	{XO_OP_global_average_pooling1d, XO_DIR_BWD, "batch=2 len=9 ch=2 mask_zero=1"},
	{XO_OP_attention, XO_DIR_FWD, "batch=2 len=3 len_kv=4 heads=2 key_dim=3 attention_mask=1"},
	{XO_OP_attention, XO_DIR_BWD, "batch=2 len=3 len_kv=4 heads=2 key_dim=3 attention_mask=1"},
	{XO_OP_simple_rnn, XO_DIR_FWD, "batch=2 len=3 ch=2 units=3 activation=tanh mask_zero=1"},
	{XO_OP_simple_rnn, XO_DIR_BWD, "batch=2 len=3 ch=2 units=3 activation=tanh mask_zero=1"},
	{XO_OP_lstm, XO_DIR_FWD,
	 "batch=2 len=3 ch=2 units=3 activation=tanh mask_zero=1 zero_output_for_mask=1"},
	{XO_OP_lstm, XO_DIR_BWD,
	 "batch=2 len=3 ch=2 units=3 activation=tanh mask_zero=1 zero_output_for_mask=1"},
	{XO_OP_gru, XO_DIR_FWD, "batch=2 len=3 ch=2 units=3 activation=tanh mask_zero=1"},
	{XO_OP_gru, XO_DIR_BWD, "batch=2 len=3 ch=2 units=3 activation=tanh mask_zero=1"},
	{XO_OP_mask_outer, XO_DIR_FWD, "batch=2 len=3 len_kv=4 query_mask=1 attention_mask=1"},
	{XO_OP_mask_outer, XO_DIR_FWD, "batch=2 len=3 query_mask=1 value_mask=1"},
	{XO_OP_masking, XO_DIR_FWD, "batch=4 len=3 ch=2"},
	{XO_OP_masking, XO_DIR_BWD, "batch=4 len=3 ch=2 mask_value=1"},
};

/* Tensors for every slot of a call on be, filled with small positive
 * values (indices in range for gather). */
static void make_args(struct xo_backend *be, enum xo_op op, enum xo_dir dir,
		      const struct xo_params *p, struct xo_op_args *a)
{
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];

	memset(a, 0, sizeof(*a));
	a->p = *p;
	assert_int_equal(xo_op_shapes(op, dir, p, ss, ds), XO_OK);
	for (int k = 0; k < XO_MAX_SRC + XO_MAX_DST; k++) {
		const struct xo_slot_shape *s = k < XO_MAX_SRC ? &ss[k] : &ds[k - XO_MAX_SRC];
		struct xo_tensor *t;
		int64_t n = 1;
		float *h;

		if (!s->ndim)
			continue;
		for (int d = 0; d < s->ndim; d++)
			n *= s->dim[d];
		h = malloc((size_t)n * 4);
		assert_non_null(h);
		for (int64_t i = 0; i < n; i++) {
			if (s->dtype == XO_DTYPE_I32)
				((int32_t *)h)[i] = (int32_t)(i % p->rows);
			else
				h[i] = (float)(i % 5 + 1) * 0.125f;
		}
		assert_int_equal(xo_tensor_create(be, s->dtype, s->ndim, s->dim, &t), XO_OK);
		assert_int_equal(xo_tensor_write(t, h, 0, n), XO_OK);
		free(h);
		if (k < XO_MAX_SRC)
			a->src[k] = t;
		else
			a->dst[k - XO_MAX_SRC] = t;
	}
}

static void free_args(struct xo_op_args *a)
{
	for (int k = 0; k < XO_MAX_SRC; k++)
		xo_tensor_free((struct xo_tensor *)a->src[k]);
	for (int k = 0; k < XO_MAX_DST; k++)
		xo_tensor_free(a->dst[k]);
}

/* Every table entry is the cl backend's own function, never ref's. */
static void test_table_is_native(void **state)
{
	const struct xo_backend_iface *cl = xo_cl_backend();

	(void)state;
	for (int op = 0; op < XO_OP_COUNT; op++) {
		assert_non_null(cl->fwd[op]);
		assert_true(cl->fwd[op] != xo_ref_iface.fwd[op]);
		if (xo_op_has_bwd((enum xo_op)op)) {
			assert_non_null(cl->bwd[op]);
			assert_true(cl->bwd[op] != xo_ref_iface.bwd[op]);
		}
	}
	assert_non_null(cl->stats_get);
	assert_non_null(cl->sync);
}

/* The kernel list (generated from the cl/kernels sources) is every kernel of
 * the built program: one it missed would never be created, and its launch
 * would fail only when an op first needs it. */
static void test_kernel_list_complete(void **state)
{
	struct xo_cl_ctx *c = cl_be->ctx;
	char names[8192];
	size_t n = 0, len = 0;
	int found = 0;

	(void)state;
	assert_int_equal(clGetProgramInfo(c->program, CL_PROGRAM_NUM_KERNELS, sizeof(n), &n, NULL),
			 CL_SUCCESS);
	assert_int_equal(clGetProgramInfo(c->program, CL_PROGRAM_KERNEL_NAMES, sizeof(names),
					  names, &len),
			 CL_SUCCESS);
	for (char *save = NULL, *k = strtok_r(names, ";", &save); k;
	     k = strtok_r(NULL, ";", &save)) {
		int kid = 0;

		while (kid < XO_CL_K_COUNT && strcmp(xo_cl_kernel_name((enum xo_cl_kid)kid), k))
			kid++;
		if (kid == XO_CL_K_COUNT)
			fail_msg("kernel %s of the program is not on XO_CL_KERNELS", k);
		assert_non_null(c->kernel[kid]);
		found++;
	}
	assert_int_equal(n, XO_CL_K_COUNT);
	assert_int_equal(found, XO_CL_K_COUNT);
}

/* Every op call launches at least one kernel for its own op/dir and moves no
 * data between host and device (so nothing is computed on the host). */
static void test_every_op_launches(void **state)
{
	int covered[XO_OP_COUNT][XO_DIR_COUNT] = {{0}};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xo_params p = params_of(cases[i].params);
		struct xo_backend_stats s0, s1;
		struct xo_op_args a;

		make_args(cl_be, cases[i].op, cases[i].dir, &p, &a);
		assert_int_equal(xo_backend_sync(cl_be), XO_OK);
		xo_backend_stats_get(cl_be, &s0);
		assert_int_equal(xo_op_run(cl_be, cases[i].op, cases[i].dir, &a), XO_OK);
		assert_int_equal(xo_backend_sync(cl_be), XO_OK);
		xo_backend_stats_get(cl_be, &s1);
		if (s1.launches <= s0.launches)
			fail_msg("%s %s: no kernel launch", xo_op_name(cases[i].op),
				 xo_dir_name(cases[i].dir));
		assert_true(s1.op_launches[cases[i].op][cases[i].dir] >
			    s0.op_launches[cases[i].op][cases[i].dir]);
		assert_true(s1.h2d_ns == s0.h2d_ns);
		assert_true(s1.d2h_ns == s0.d2h_ns);
		covered[cases[i].op][cases[i].dir] = 1;
		free_args(&a);
	}
	for (int op = 0; op < XO_OP_COUNT; op++) {
		assert_true(covered[op][XO_DIR_FWD]);
		if (xo_op_has_bwd((enum xo_op)op))
			assert_true(covered[op][XO_DIR_BWD]);
	}
}

/* Launch counts of the fused paths: conv1d/dense forward 1, backward 2; the
 * recurrent ops forward 1, backward 2 at any sequence length (3 on a row
 * with rnn_nb > 0, whose weight gradients are split sums: test_rnn_tiles). */
static void test_fused_launch_counts(void **state)
{
	static const struct {
		enum xo_op op;
		enum xo_dir dir;
		const char *params;
		uint64_t launches;
	} want[] = {
		{XO_OP_conv1d, XO_DIR_FWD, "batch=2 len=9 ch=2 filters=3 kernel_size=3 activation=relu", 1},
		{XO_OP_conv1d, XO_DIR_BWD, "batch=2 len=9 ch=2 filters=3 kernel_size=3 activation=relu", 2},
		{XO_OP_conv2d, XO_DIR_FWD, "batch=2 len=5 width=4 ch=2 filters=3 kernel_size=3 activation=relu", 1},
		{XO_OP_conv2d, XO_DIR_BWD, "batch=2 len=5 width=4 ch=2 filters=3 kernel_size=3 activation=relu", 2},
		{XO_OP_dense, XO_DIR_FWD, "batch=3 ch=5 units=4 activation=sigmoid", 1},
		{XO_OP_dense, XO_DIR_BWD, "batch=3 ch=5 units=4 activation=sigmoid", 2},
		{XO_OP_adam, XO_DIR_FWD, "size=1000", 1},
		/* the recurrent ops: the same count at any len */
		{XO_OP_lstm, XO_DIR_FWD, "batch=2 len=3 ch=2 units=4 activation=tanh", 1},
		{XO_OP_lstm, XO_DIR_FWD, "batch=2 len=40 ch=2 units=4 activation=tanh", 1},
		{XO_OP_lstm, XO_DIR_BWD, "batch=2 len=3 ch=2 units=4 activation=tanh", 2},
		{XO_OP_lstm, XO_DIR_BWD, "batch=2 len=40 ch=2 units=4 activation=tanh", 2},
		{XO_OP_gru, XO_DIR_BWD, "batch=2 len=40 ch=2 units=4 activation=tanh", 2},
		{XO_OP_simple_rnn, XO_DIR_FWD, "batch=2 len=40 ch=2 units=4 activation=tanh", 1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct xo_params p = params_of(want[i].params);
		struct xo_backend_stats s0, s1;
		struct xo_op_args a;

		make_args(cl_be, want[i].op, want[i].dir, &p, &a);
		xo_backend_stats_get(cl_be, &s0);
		assert_int_equal(xo_op_run(cl_be, want[i].op, want[i].dir, &a), XO_OK);
		xo_backend_stats_get(cl_be, &s1);
		if (xo_op_is_rnn(want[i].op) && want[i].dir == XO_DIR_BWD &&
		    strstr(xo_backend_describe(cl_be), "rnn_nb 0)") == NULL)
			assert_int_equal(s1.launches - s0.launches, 3);
		else
			assert_int_equal(s1.launches - s0.launches, want[i].launches);
		free_args(&a);
	}
}

/* A tensor beyond CL_DEVICE_MAX_MEM_ALLOC_SIZE is XO_ERESOURCE, and the
 * backend keeps working. */
static void test_memory_limit(void **state)
{
	uint64_t max_alloc, global_mem;
	struct xo_tensor *t = NULL;
	int64_t dims[1];

	(void)state;
	xo_cl_limits(cl_be, &max_alloc, &global_mem);
	assert_true(max_alloc > 0 && global_mem >= max_alloc);
	dims[0] = (int64_t)(max_alloc / 4 + 1024);
	assert_int_equal(xo_tensor_create(cl_be, XO_DTYPE_F32, 1, dims, &t), XO_ERESOURCE);
	assert_null(t);
	assert_non_null(strstr(xo_last_error(), "CL_DEVICE_MAX_MEM_ALLOC_SIZE"));
	dims[0] = 16;
	assert_int_equal(xo_tensor_create(cl_be, XO_DTYPE_F32, 1, dims, &t), XO_OK);
	xo_tensor_free(t);
}

/* Device choice errors: XO_ENODEV naming what was asked for. */
static void test_bad_device(void **state)
{
	struct xo_backend *be = NULL;
	char *old = getenv("XO_CL_DEVICE") ? strdup(getenv("XO_CL_DEVICE")) : NULL;
	char *req = getenv("XO_REQUIRE_OPENCL") ? strdup(getenv("XO_REQUIRE_OPENCL")) : NULL;

	(void)state;
	/* cl:0:0 below may be PoCL's CPU device beside a GPU (ci/gpu.sh):
	 * whether a GPU is required is not what this test checks. */
	unsetenv("XO_REQUIRE_OPENCL");
	setenv("XO_CL_DEVICE", "no-such-platform-xyz", 1);
	assert_int_equal(xo_backend_open("cl", &be), XO_ENODEV);
	assert_null(be);
	assert_non_null(strstr(xo_last_error(), "no-such-platform-xyz"));
	assert_int_equal(xo_backend_open("cl:0:no-such-device-xyz", &be), XO_ENODEV);
	assert_non_null(strstr(xo_last_error(), "no-such-device-xyz"));
	assert_int_equal(xo_backend_open("cl:99:0", &be), XO_ENODEV);
	/* The spec string wins over the environment. */
	assert_int_equal(xo_backend_open("cl:0:0", &be), XO_OK);
	xo_backend_close(be);
	if (old)
		setenv("XO_CL_DEVICE", old, 1);
	else
		unsetenv("XO_CL_DEVICE");
	if (req)
		setenv("XO_REQUIRE_OPENCL", req, 1);
	free(old);
	free(req);
}

/* A program that does not compile: XO_EOPENCL naming clBuildProgram (the
 * build log goes to stderr), no crash, nothing left open. */
static void test_build_failure(void **state)
{
	struct xo_backend *be = NULL;

	(void)state;
	setenv("XO_CL_BUILD_OPTIONS", "-DXO_TILE=", 1); /* empty array bounds */
	assert_int_equal(xo_backend_open("cl", &be), XO_EOPENCL);
	unsetenv("XO_CL_BUILD_OPTIONS");
	assert_null(be);
	assert_non_null(strstr(xo_last_error(), "clBuildProgram: CL_BUILD_PROGRAM_FAILURE (-11)"));
}

static void test_error_names(void **state)
{
	(void)state;
	assert_string_equal(xo_cl_error_name(-54), "CL_INVALID_WORK_GROUP_SIZE");
	assert_string_equal(xo_cl_error_name(-11), "CL_BUILD_PROGRAM_FAILURE");
	assert_string_equal(xo_cl_error_name(-4), "CL_MEM_OBJECT_ALLOCATION_FAILURE");
	assert_string_equal(xo_cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
	assert_string_equal(xo_cl_error_name(-12345), "CL_UNKNOWN_ERROR");
	assert_int_equal(xo_cl_fail("clEnqueueNDRangeKernel(xo_cl_conv1d_fwd)", -54), XO_EOPENCL);
	assert_string_equal(xo_last_error(),
			    "clEnqueueNDRangeKernel(xo_cl_conv1d_fwd): CL_INVALID_WORK_GROUP_SIZE (-54)");
}

/* After a write, a launch and a read every event was timed: the counts of
 * launches and timed events are exact and none is untimed; reset zeroes
 * everything. No "took more than 0 ns": a GPU's event timer ticks in
 * microseconds or coarser, so a 32-byte copy may honestly read 0 ns. */
static void test_stats_split(void **state)
{
	struct xo_params p = params_of("batch=64 len=32 ch=16");
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
	struct xo_backend_stats s;
	struct xo_op_args a;
	uint64_t writes = 0;
	float out[8];

	(void)state;
	xo_backend_stats_reset(cl_be);
	xo_backend_stats_get(cl_be, &s);
	assert_true(s.launches == 0 && s.kernel_ns == 0 && s.h2d_ns == 0 && s.wait_ns == 0);
	assert_true(s.timed_events == 0 && s.untimed_events == 0);
	/* make_args writes every source and destination slot once */
	assert_int_equal(xo_op_shapes(XO_OP_sigmoid, XO_DIR_FWD, &p, ss, ds), XO_OK);
	for (int k = 0; k < XO_MAX_SRC; k++)
		writes += ss[k].ndim > 0;
	for (int k = 0; k < XO_MAX_DST; k++)
		writes += ds[k].ndim > 0;
	make_args(cl_be, XO_OP_sigmoid, XO_DIR_FWD, &p, &a);
	assert_int_equal(xo_op_run(cl_be, XO_OP_sigmoid, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], out, 0, 8), XO_OK);
	xo_backend_stats_get(cl_be, &s);
	assert_int_equal(s.launches, 1);
	assert_int_equal(s.op_launches[XO_OP_sigmoid][XO_DIR_FWD], 1);
	/* writes h2d events, 1 kernel, 1 d2h: all resolved after the blocking read */
	assert_int_equal(s.timed_events, writes + 1 + 1);
	assert_int_equal(s.untimed_events, 0);
	assert_true(s.op_ns[XO_OP_sigmoid][XO_DIR_FWD] == s.kernel_ns);
	assert_true(s.enqueue_ns > 0); /* host clock_gettime, ns resolution */
	free_args(&a);
	xo_backend_stats_reset(cl_be);
	xo_backend_stats_get(cl_be, &s);
	assert_true(s.launches == 0 && s.kernel_ns == 0 && s.d2h_ns == 0);
	assert_true(s.timed_events == 0 && s.untimed_events == 0);
}

/* Events whose times cannot be read count as untimed and add 0 ns: a user
 * event (no profiling info: CL_PROFILING_INFO_NOT_AVAILABLE) completed, and
 * one set to a negative status (a failed command), tracked as a kernel and a
 * transfer. */
/* The rule itself, on every case a driver can produce: a failed command
 * (negative status) whose profile happens to be readable is still not timed
 * (PoCL answers the profiling query of a failed user event with an error, so
 * test_untimed_events alone cannot tell the status check from the query's). */
static void test_event_timed_rule(void **state)
{
	(void)state;
	assert_true(xo_cl_event_timed(CL_COMPLETE, CL_SUCCESS, CL_SUCCESS, 10, 20));
	assert_true(xo_cl_event_timed(CL_COMPLETE, CL_SUCCESS, CL_SUCCESS, 10, 10));
	assert_false(xo_cl_event_timed(-5 /* CL_OUT_OF_RESOURCES */, CL_SUCCESS, CL_SUCCESS, 10,
				       20));
	assert_false(xo_cl_event_timed(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, CL_SUCCESS,
				       CL_SUCCESS, 10, 20));
	assert_false(xo_cl_event_timed(CL_RUNNING, CL_SUCCESS, CL_SUCCESS, 10, 20));
	assert_false(xo_cl_event_timed(CL_COMPLETE, CL_PROFILING_INFO_NOT_AVAILABLE, CL_SUCCESS,
				       10, 20));
	assert_false(xo_cl_event_timed(CL_COMPLETE, CL_SUCCESS, CL_PROFILING_INFO_NOT_AVAILABLE,
				       10, 20));
	assert_false(xo_cl_event_timed(CL_COMPLETE, CL_SUCCESS, CL_SUCCESS, 20, 10));
}

static void test_untimed_events(void **state)
{
	struct xo_cl_ctx *c = cl_be->ctx;
	struct xo_backend_stats s0, s1;
	cl_int err, status[2] = {CL_COMPLETE, CL_OUT_OF_RESOURCES};

	(void)state;
	assert_int_equal(xo_backend_sync(cl_be), XO_OK);
	xo_backend_stats_get(cl_be, &s0);
	for (int i = 0; i < 2; i++) {
		cl_event ev = clCreateUserEvent(c->context, &err);

		assert_int_equal(err, CL_SUCCESS);
		assert_int_equal(clSetUserEventStatus(ev, status[i]), CL_SUCCESS);
		assert_int_equal(xo_cl_track(c, ev, i ? XO_CL_EV_H2D : XO_CL_EV_KERNEL,
					     XO_OP_relu, XO_DIR_FWD),
				 XO_OK);
	}
	assert_int_equal(xo_backend_sync(cl_be), XO_OK);
	xo_backend_stats_get(cl_be, &s1);
	assert_int_equal(s1.untimed_events - s0.untimed_events, 2);
	assert_int_equal(s1.timed_events, s0.timed_events);
	assert_true(s1.kernel_ns == s0.kernel_ns && s1.h2d_ns == s0.h2d_ns);
	assert_true(s1.op_ns[XO_OP_relu][XO_DIR_FWD] == s0.op_ns[XO_OP_relu][XO_DIR_FWD]);
	xo_backend_stats_reset(cl_be);
	xo_backend_stats_get(cl_be, &s1);
	assert_int_equal(s1.untimed_events, 0);
}

/* Runs one call on ref with fresh tensors and on cl with views at odd
 * offsets of a shared flat buffer, and requires the same bits (small-integer
 * inputs, so every sum is exact). */
static void check_views_on(struct xo_backend *be, enum xo_op op, enum xo_dir dir,
			   const char *line)
{
	struct xo_params p = params_of(line);
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
	struct xo_op_args ar, ac;
	struct xo_tensor *flat, *views[XO_MAX_SRC + XO_MAX_DST] = {0};
	int64_t total = 1, off = 1;

	make_args(ref_be, op, dir, &p, &ar);
	ac = ar;
	assert_int_equal(xo_op_shapes(op, dir, &p, ss, ds), XO_OK);
	for (int k = 0; k < XO_MAX_SRC + XO_MAX_DST; k++) {
		const struct xo_slot_shape *s = k < XO_MAX_SRC ? &ss[k] : &ds[k - XO_MAX_SRC];
		int64_t n = 1;

		for (int d = 0; d < s->ndim; d++)
			n *= s->dim[d];
		if (s->ndim)
			total += n + 3;
	}
	assert_int_equal(xo_tensor_create(be, XO_DTYPE_F32, 1, &total, &flat), XO_OK);
	for (int k = 0; k < XO_MAX_SRC + XO_MAX_DST; k++) {
		const struct xo_slot_shape *s = k < XO_MAX_SRC ? &ss[k] : &ds[k - XO_MAX_SRC];
		const struct xo_tensor *rt = k < XO_MAX_SRC ? ar.src[k] : ar.dst[k - XO_MAX_SRC];
		int64_t n = 1;
		float *h;

		if (!s->ndim)
			continue;
		for (int d = 0; d < s->ndim; d++)
			n *= s->dim[d];
		h = malloc((size_t)n * 4);
		assert_non_null(h);
		assert_int_equal(xo_tensor_read(rt, h, 0, n), XO_OK);
		/* Odd offsets: 1, then each slot 3 elements after the last. */
		assert_int_equal(xo_tensor_view(flat, off, s->ndim, s->dim, &views[k]), XO_OK);
		views[k]->dtype = s->dtype; /* same 4-byte storage; i32 index slots */
		assert_int_equal(xo_tensor_write(views[k], h, 0, n), XO_OK);
		free(h);
		if (k < XO_MAX_SRC)
			ac.src[k] = views[k];
		else
			ac.dst[k - XO_MAX_SRC] = views[k];
		off += n + 3;
	}
	assert_int_equal(xo_op_run(ref_be, op, dir, &ar), XO_OK);
	assert_int_equal(xo_op_run(be, op, dir, &ac), XO_OK);
	for (int k = 0; k < XO_MAX_DST; k++) {
		int64_t n;
		float *r, *c;

		if (!ar.dst[k])
			continue;
		n = xo_tensor_nelem(ar.dst[k]);
		r = malloc((size_t)n * 4);
		c = malloc((size_t)n * 4);
		assert_non_null(r);
		assert_non_null(c);
		assert_int_equal(xo_tensor_read(ar.dst[k], r, 0, n), XO_OK);
		assert_int_equal(xo_tensor_read(ac.dst[k], c, 0, n), XO_OK);
		if (memcmp(r, c, (size_t)n * 4))
			fail_msg("%s %s %s: dst[%d] differs from ref through views", xo_op_name(op),
				 xo_dir_name(dir), line, k);
		free(r);
		free(c);
	}
	for (int k = 0; k < XO_MAX_SRC + XO_MAX_DST; k++)
		xo_tensor_free(views[k]);
	xo_tensor_free(flat);
	free_args(&ar);
}

static void check_views(enum xo_op op, enum xo_dir dir, const char *line)
{
	check_views_on(cl_be, op, dir, line);
}

static void test_views_odd_offsets(void **state)
{
	(void)state;
	check_views(XO_OP_conv1d, XO_DIR_FWD,
		    "batch=2 len=9 ch=3 filters=5 kernel_size=3 padding=same activation=relu");
	check_views(XO_OP_conv1d, XO_DIR_BWD, "batch=2 len=9 ch=3 filters=5 kernel_size=3");
	check_views(XO_OP_conv2d, XO_DIR_FWD,
		    "batch=2 len=6 width=5 ch=3 filters=5 kernel_size=3 kernel_w=2 padding=same "
		    "activation=relu");
	check_views(XO_OP_conv2d, XO_DIR_BWD,
		    "batch=3 len=7 width=6 ch=3 filters=5 kernel_size=2 strides=2 activation=relu");
	check_views(XO_OP_dense, XO_DIR_FWD, "batch=9 ch=11 units=10");
	check_views(XO_OP_dense, XO_DIR_BWD, "batch=3 ch=5 units=4 activation=relu");
	/* Batches past a dw chunk (PoCL's row splits the dw sums) or a
	 * reduction work-group (GPU rows' one-group-per-output kernels). */
	check_views(XO_OP_conv1d, XO_DIR_BWD,
		    "batch=37 len=9 ch=3 filters=5 kernel_size=3 strides=2 activation=relu");
	check_views(XO_OP_dense, XO_DIR_BWD, "batch=70 ch=6 units=5 activation=relu");
	check_views(XO_OP_dense, XO_DIR_BWD, "batch=70 ch=6 units=5 use_bias=false");
	check_views(XO_OP_max_pooling1d, XO_DIR_BWD, "batch=2 len=9 ch=3 pool_size=3 strides=2");
	check_views(XO_OP_max_pooling1d, XO_DIR_BWD, "batch=2 len=10 ch=3 pool_size=4 padding=same strides=1");
	check_views(XO_OP_dropout, XO_DIR_FWD, "batch=2 len=5 ch=3 rate=0.5 seed=9 step=3");
	check_views(XO_OP_flatten, XO_DIR_FWD, "batch=2 len=5 ch=3");
	check_views(XO_OP_accuracy, XO_DIR_FWD, "batch=7 ch=4");
	check_views(XO_OP_gather, XO_DIR_FWD, "batch=4 ch=3 rows=5");
}

/* Runs op on be and returns dst[0] on the host (caller frees). */
static float *run_dst0(struct xo_backend *be, enum xo_op op, enum xo_dir dir, const char *line,
		       uint64_t *launches)
{
	struct xo_params p = params_of(line);
	struct xo_backend_stats s0, s1;
	struct xo_op_args a;
	int64_t n;
	float *h;

	make_args(be, op, dir, &p, &a);
	xo_backend_stats_get(be, &s0);
	assert_int_equal(xo_op_run(be, op, dir, &a), XO_OK);
	xo_backend_stats_get(be, &s1);
	*launches = s1.launches - s0.launches;
	n = xo_tensor_nelem(a.dst[0]);
	h = malloc((size_t)n * 4);
	assert_non_null(h);
	assert_int_equal(xo_tensor_read(a.dst[0], h, 0, n), XO_OK);
	free_args(&a);
	return h;
}

/*
 * The kernel variants the device's tuning row does not pick, forced through
 * XO_CL_TUNE: tiled dense at tile 4, dw+db one work-group per output, dense
 * softmax as two launches. Integer cases must match ref bit for bit; the
 * one-launch and two-launch dense softmax must give the same bits.
 */
static void test_tuning_variants(void **state)
{
	static const char *const sm = "batch=6 ch=5 units=7 activation=softmax";
	struct xo_backend *alt = NULL;
	uint64_t l_def, l_alt;
	float *a, *b;

	(void)state;
	setenv("XO_CL_TUNE", "nonsense", 1);
	assert_int_equal(xo_backend_open("cl", &alt), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "XO_CL_TUNE"));
	setenv("XO_CL_TUNE", "wg=32,red_wg=32,tile=4,softmax_row_max=0,dw_wg=1", 1);
	assert_int_equal(xo_backend_open("cl", &alt), XO_OK);
	unsetenv("XO_CL_TUNE");
	assert_non_null(strstr(xo_backend_describe(alt), "red 32, tile 4"));

	check_views_on(alt, XO_OP_dense, XO_DIR_FWD, "batch=9 ch=11 units=10");
	check_views_on(alt, XO_OP_dense, XO_DIR_BWD, "batch=40 ch=5 units=6 activation=relu");
	check_views_on(alt, XO_OP_dense, XO_DIR_BWD, "batch=33 ch=3 units=4 use_bias=false");
	check_views_on(alt, XO_OP_conv1d, XO_DIR_BWD,
		       "batch=5 len=9 ch=3 filters=4 kernel_size=3 padding=same activation=relu");
	check_views_on(alt, XO_OP_conv1d, XO_DIR_BWD,
		       "batch=6 len=11 ch=2 filters=3 kernel_size=2 strides=2 use_bias=false");
	check_views_on(alt, XO_OP_accuracy, XO_DIR_FWD, "batch=70 ch=5");

	a = run_dst0(cl_be, XO_OP_dense, XO_DIR_FWD, sm, &l_def);
	b = run_dst0(alt, XO_OP_dense, XO_DIR_FWD, sm, &l_alt);
	assert_int_equal(l_def, 1);
	assert_int_equal(l_alt, 2);
	assert_memory_equal(a, b, 6 * 7 * 4);
	free(a);
	free(b);
	xo_backend_close(alt);
}

/* Runs op on be; dst[k] back on the host in *out (caller frees), its
 * element count in *n; the launches of the call in *launches. */
static float *run_dst(struct xo_backend *be, enum xo_op op, enum xo_dir dir, const char *line,
		      int k, int64_t *n, uint64_t *launches)
{
	struct xo_params p = params_of(line);
	struct xo_backend_stats s0, s1;
	struct xo_op_args a;
	float *h;

	make_args(be, op, dir, &p, &a);
	xo_backend_stats_get(be, &s0);
	assert_int_equal(xo_op_run(be, op, dir, &a), XO_OK);
	xo_backend_stats_get(be, &s1);
	*launches = s1.launches - s0.launches;
	*n = xo_tensor_nelem(a.dst[k]);
	h = malloc((size_t)*n * 4);
	assert_non_null(h);
	assert_int_equal(xo_tensor_read(a.dst[k], h, 0, *n), XO_OK);
	free_args(&a);
	return h;
}

/*
 * The recurrent ops' two shapes (cl_ops.c): one work-group per tile of
 * samples (rnn_nb > 0, the GPU rows) against one work-item per sample
 * (rnn_nb = 0, PoCL's row). The tiled forward sums the same terms in the
 * same order per output, and the backward's dx and step gradients too, so
 * y, ws and dx are the same bits (only the weight gradients' split sums
 * differ in order; their bound is the suites'). Launches: forward 1,
 * backward 3 (the split weight sums; 2 when one pass over the weights
 * already has compute units * wg * 8 work-items: a 1-unit device such as
 * Oclgrind at 264 weights), the same at len 3 and 40.
 */
static void test_rnn_tiles(void **state)
{
	static const char *const lines[] = {
		"batch=7 len=9 ch=3 units=5 activation=tanh",
		"batch=5 len=6 ch=4 units=6 activation=tanh return_sequences=1 go_backwards=1",
	};
	static const enum xo_op ops[] = {XO_OP_simple_rnn, XO_OP_lstm, XO_OP_gru};
	struct xo_backend *one = NULL, *tiles = NULL;

	(void)state;
	setenv("XO_CL_TUNE", "rnn_nb=0", 1);
	assert_int_equal(xo_backend_open("cl", &one), XO_OK);
	setenv("XO_CL_TUNE", "rnn_nb=4,wg=32", 1);
	assert_int_equal(xo_backend_open("cl", &tiles), XO_OK);
	unsetenv("XO_CL_TUNE");
	assert_non_null(strstr(xo_backend_describe(tiles), "rnn_nb 4"));
	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
		for (size_t i = 0; i < 2 * sizeof(lines) / sizeof(lines[0]); i++) {
			char line[160];
			enum xo_dir dir = i % 2 ? XO_DIR_BWD : XO_DIR_FWD;
			int ndst = dir == XO_DIR_FWD ? 2 : 1;

			snprintf(line, sizeof(line), "%s%s", lines[i / 2],
				 ops[o] == XO_OP_gru && i / 2 ? " reset_after=0" : "");
			for (int k = 0; k < ndst; k++) {
				uint64_t l1, lt;
				int64_t n1, nt;
				float *a = run_dst(one, ops[o], dir, line, k, &n1, &l1);
				float *b = run_dst(tiles, ops[o], dir, line, k, &nt, &lt);

				assert_int_equal(n1, nt);
				assert_memory_equal(a, b, (size_t)n1 * 4);
				assert_int_equal(l1, dir == XO_DIR_FWD ? 1 : 2);
				if (dir == XO_DIR_FWD)
					assert_int_equal(lt, 1);
				else
					assert_true(lt == 2 || lt == 3);
				free(a);
				free(b);
			}
		}
	/* 112 weights: split on any device (at least 1 * 32 * 8 work-items) */
	for (int len = 3; len <= 40; len += 37) {
		char line[80];
		uint64_t l;
		int64_t n;

		snprintf(line, sizeof(line), "batch=2 len=%d ch=2 units=4 activation=tanh", len);
		free(run_dst(tiles, XO_OP_lstm, XO_DIR_FWD, line, 0, &n, &l));
		assert_int_equal(l, 1);
		free(run_dst(tiles, XO_OP_lstm, XO_DIR_BWD, line, 0, &n, &l));
		assert_int_equal(l, 3);
	}
	/* the cost model's lanes (xo_backend_rnn_lanes, perfdb/explain.c): the
	 * general kernel runs a sample's step in 1 work-item; a tile of batch 1
	 * (nb 1 on any device) spreads its G = 96 gate columns over the group's
	 * wg = 32 work-items. The cost model once assumed 1 lane for both: an
	 * H200's LSTM(64) step predicted at 262 us against 39 us measured. */
	{
		struct xo_params p = xo_params_default();

		p.batch = 1;
		p.units = 24;
		assert_true(xo_backend_rnn_lanes(one, XO_OP_lstm, &p) == 1);
		assert_true(xo_backend_rnn_lanes(tiles, XO_OP_lstm, &p) == 32);
		p.units = 4; /* G = 16 < wg: one lane per gate column */
		assert_true(xo_backend_rnn_lanes(tiles, XO_OP_lstm, &p) == 16);
	}
	xo_backend_close(one);
	xo_backend_close(tiles);
}

/* An index outside [0, rows) writes no memory out of bounds, zeroes its row
 * and is reported as XO_EINVAL at the next sync; the flag is then clear. */
static void test_gather_out_of_range(void **state)
{
	struct xo_params p = params_of("batch=3 ch=2 rows=4");
	const int32_t idx[3] = {1, 7, -1};
	const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	float y[6];
	struct xo_op_args a;

	(void)state;
	make_args(cl_be, XO_OP_gather, XO_DIR_FWD, &p, &a);
	assert_int_equal(xo_tensor_write((struct xo_tensor *)a.src[0], x, 0, 8), XO_OK);
	assert_int_equal(xo_tensor_write((struct xo_tensor *)a.src[1], idx, 0, 3), XO_OK);
	assert_int_equal(xo_op_run(cl_be, XO_OP_gather, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_backend_sync(cl_be), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "outside [0, rows)"));
	assert_int_equal(xo_tensor_read(a.dst[0], y, 0, 6), XO_OK);
	assert_true(y[0] == 3 && y[1] == 4 && y[2] == 0 && y[3] == 0 && y[4] == 0 && y[5] == 0);
	assert_int_equal(xo_backend_sync(cl_be), XO_OK);
	free_args(&a);
}

/* embedding: an id outside [0, rows) reads and writes nothing out of bounds
 * in either direction (fwd: that position's row is zeros; bwd: it adds
 * nothing) and is XO_EINVAL at the next sync; the rows in range are right. */
static void test_embedding_out_of_range(void **state)
{
	struct xo_params p = params_of("batch=1 len=3 ch=2 rows=4");
	const int32_t ids[3] = {1, 4, -1}, ids_ok[3] = {1, 1, 3};
	const float table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	const float dy[6] = {1, 2, 4, 8, 16, 32};
	float y[8];
	struct xo_op_args a;

	(void)state;
	make_args(cl_be, XO_OP_embedding, XO_DIR_FWD, &p, &a);
	assert_int_equal(xo_tensor_write((struct xo_tensor *)a.src[0], ids, 0, 3), XO_OK);
	assert_int_equal(xo_tensor_write((struct xo_tensor *)a.src[1], table, 0, 8), XO_OK);
	assert_int_equal(xo_op_run(cl_be, XO_OP_embedding, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_backend_sync(cl_be), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "outside [0, rows)"));
	assert_int_equal(xo_tensor_read(a.dst[0], y, 0, 6), XO_OK);
	assert_true(y[0] == 3 && y[1] == 4 && y[2] == 0 && y[3] == 0 && y[4] == 0 && y[5] == 0);
	assert_int_equal(xo_backend_sync(cl_be), XO_OK);
	free_args(&a);

	make_args(cl_be, XO_OP_embedding, XO_DIR_BWD, &p, &a);
	assert_int_equal(xo_tensor_write((struct xo_tensor *)a.src[0], ids, 0, 3), XO_OK);
	assert_int_equal(xo_tensor_write((struct xo_tensor *)a.src[1], dy, 0, 6), XO_OK);
	assert_int_equal(xo_op_run(cl_be, XO_OP_embedding, XO_DIR_BWD, &a), XO_OK);
	assert_int_equal(xo_backend_sync(cl_be), XO_EINVAL);
	assert_int_equal(xo_tensor_read(a.dst[0], y, 0, 8), XO_OK);
	assert_true(y[0] == 0 && y[1] == 0 && y[2] == 1 && y[3] == 2);
	assert_true(y[4] == 0 && y[5] == 0 && y[6] == 0 && y[7] == 0);
	/* in range: the duplicates of row 1 add up, nothing flagged */
	assert_int_equal(xo_tensor_write((struct xo_tensor *)a.src[0], ids_ok, 0, 3), XO_OK);
	assert_int_equal(xo_op_run(cl_be, XO_OP_embedding, XO_DIR_BWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], y, 0, 8), XO_OK);
	assert_true(y[2] == 5 && y[3] == 10 && y[6] == 16 && y[7] == 32 && y[0] == 0);
	free_args(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_is_native),
		cmocka_unit_test(test_kernel_list_complete),
		cmocka_unit_test(test_every_op_launches),
		cmocka_unit_test(test_fused_launch_counts),
		cmocka_unit_test(test_memory_limit),
		cmocka_unit_test(test_bad_device),
		cmocka_unit_test(test_build_failure),
		cmocka_unit_test(test_error_names),
		cmocka_unit_test(test_stats_split),
		cmocka_unit_test(test_untimed_events),
		cmocka_unit_test(test_event_timed_rule),
		cmocka_unit_test(test_views_odd_offsets),
		cmocka_unit_test(test_tuning_variants),
		cmocka_unit_test(test_rnn_tiles),
		cmocka_unit_test(test_gather_out_of_range),
		cmocka_unit_test(test_embedding_out_of_range),
	};
	enum xo_status st;
	int rc;

	st = xo_backend_open("cl", &cl_be);
	if (st) {
		bool required = xo_opencl_required();

		fprintf(stderr, "test_cl: %s: %s\n", required ? "FAIL" : "SKIP", xo_last_error());
		return required ? 1 : SKIP_CODE;
	}
	if (xo_backend_open("ref", &ref_be)) {
		fprintf(stderr, "test_cl: ref: %s\n", xo_last_error());
		return 1;
	}
	printf("test_cl: %s\n", xo_backend_describe(cl_be));
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	xo_backend_close(ref_be);
	xo_backend_close(cl_be);
	return rc;
}
