/*
 * test_badinput.c - bad input never crashes (DESIGN section 10): invalid
 * shapes and parameters, NULL tensors and arguments, tensors of another
 * backend, wrong dtypes, views outside their parent, unknown keys and values
 * each return the right XO_E* status with a non-empty one-line message from
 * xo_last_error(). Also runs under the sanitizer build (-DXO_SANITIZE=ON).
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

/* call must return `expected` and leave a one-line message. */
#define EXPECT(expected, call)                                                                     \
	do {                                                                                       \
		enum xo_status st_;                                                                \
		const char *msg_;                                                                  \
		xo_error_clear();                                                                  \
		st_ = (call);                                                                      \
		msg_ = xo_last_error();                                                            \
		if (st_ != (expected))                                                             \
			fail_msg("%s: returned '%s', expected '%s' (message: %s)", #call,          \
			         xo_status_str(st_), xo_status_str(expected), msg_);               \
		if (!msg_[0] || strchr(msg_, '\n'))                                                \
			fail_msg("%s: message must be one non-empty line, got '%s'", #call, msg_); \
		print_message("  %-20s %s\n", xo_status_str(st_), msg_);                           \
	} while (0)

static struct xo_backend *g_ref, *g_cpu;

/* Parameters from a "key=value ..." string (each pair must parse; nothing
 * is validated here). */
static struct xo_params params(const char *kv)
{
	struct xo_params p = xo_params_default();
	char buf[512], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", kv);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		assert_non_null(eq);
		*eq = '\0';
		if (xo_params_set(&p, tok, eq + 1) != XO_OK)
			fail_msg("params '%s': %s", kv, xo_last_error());
	}
	return p;
}

static enum xo_status shapes(enum xo_op op, enum xo_dir dir, struct xo_params p)
{
	struct xo_slot_shape s[XO_MAX_SRC], d[XO_MAX_DST];

	return xo_op_shapes(op, dir, &p, s, d);
}

static void bad_keys_and_values(void **state)
{
	struct xo_params p = xo_params_default();

	(void)state;
	EXPECT(XO_EINVAL, xo_params_set(&p, "kernel", "3"));
	EXPECT(XO_EINVAL, xo_params_set(&p, "", "3"));
	EXPECT(XO_EINVAL, xo_params_set(&p, "kernel_size", "three"));
	EXPECT(XO_EINVAL, xo_params_set(&p, "kernel_size", ""));
	EXPECT(XO_EINVAL, xo_params_set(&p, "kernel_size", "99999999999999999999999"));
	EXPECT(XO_EINVAL, xo_params_set(&p, "padding", "diagonal"));
	EXPECT(XO_EINVAL, xo_params_set(&p, "activation", "swish"));
	EXPECT(XO_EINVAL, xo_params_set(&p, "use_bias", "maybe"));
	EXPECT(XO_EINVAL, xo_params_set(&p, "rate", "nan"));
	EXPECT(XO_EINVAL, xo_params_set(&p, "rate", "0.5x"));
	EXPECT(XO_EINVAL, xo_params_set(&p, "seed", "-1"));
	EXPECT(XO_EINVAL, xo_params_set(&p, "layer", "4294967296"));
}

static void bad_shape_lines(void **state)
{
	struct xo_params p;
	enum xo_op op;

	(void)state;
	EXPECT(XO_EINVAL, xo_case_parse("convolution len=3", &op, &p));
	EXPECT(XO_EINVAL, xo_case_parse("conv1d len", &op, &p));
	EXPECT(XO_EINVAL, xo_case_parse("conv1d =3", &op, &p));
	EXPECT(XO_EINVAL, xo_case_parse("conv1d len=3 colour=blue", &op, &p));
	EXPECT(XO_EINVAL, xo_case_parse("conv1d len=29 ch=1 filters=16 kernel_size=0", &op, &p));
	assert_int_equal(op, XO_OP_COUNT);
	assert_string_equal(xo_last_error(), "conv1d: kernel_size=0 must be >= 1");
	assert_int_equal(xo_case_parse("  # a comment", &op, &p), XO_OK);
	assert_int_equal(op, XO_OP_COUNT);
}

/* The recurrent ops: sizes, the activations they implement, refusals by
 * name; the default activation of a shapes line is tanh (xo_params_default_op). */
static void bad_rnn(void **state)
{
	struct xo_params p;
	enum xo_op op;

	(void)state;
	EXPECT(XO_EINVAL, shapes(XO_OP_lstm, XO_DIR_FWD, params("len=5 units=0 activation=tanh")));
	EXPECT(XO_EINVAL, shapes(XO_OP_gru, XO_DIR_BWD, params("len=0 units=3 activation=tanh")));
	EXPECT(XO_EINVAL, shapes(XO_OP_simple_rnn, XO_DIR_FWD, params("len=5 units=3 batch=0 "
	                                                               "activation=tanh")));
	/* linear is the struct's default, not these ops' */
	EXPECT(XO_EINVAL, shapes(XO_OP_lstm, XO_DIR_FWD, params("len=5 units=3")));
	EXPECT(XO_EINVAL, shapes(XO_OP_lstm, XO_DIR_FWD, params("len=5 units=3 activation=relu")));
	assert_string_equal(xo_last_error(), "lstm: activation=relu is not supported (tanh)");
	EXPECT(XO_EINVAL, shapes(XO_OP_gru, XO_DIR_FWD,
	                         params("len=5 units=3 activation=tanh recurrent_activation=tanh")));
	assert_string_equal(xo_last_error(),
	                    "gru: recurrent_activation=tanh is not supported (sigmoid)");
	EXPECT(XO_EINVAL, shapes(XO_OP_simple_rnn, XO_DIR_FWD,
	                         params("len=5 units=3 activation=sigmoid")));
	assert_string_equal(xo_last_error(),
	                    "simple_rnn: activation=sigmoid is not supported (tanh or relu)");
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_lstm, XO_DIR_FWD,
	                            params("len=5 units=4294967296 activation=tanh")));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_gru, XO_DIR_FWD,
	                            params("batch=4294967296 len=4294967296 units=3 "
	                                   "activation=tanh")));
	assert_int_equal(xo_case_parse("lstm len=5 units=3", &op, &p), XO_OK);
	assert_int_equal(op, XO_OP_lstm);
	assert_int_equal(p.activation, XO_ACTIVATION_TANH);
	assert_int_equal(p.recurrent_activation, XO_ACTIVATION_SIGMOID);
	assert_true(p.reset_after);
}

/* permute: dims a permutation of 1 2 3, or of 1 2 with width 1; the sizes
 * at least 1 and within the OpenCL kernel's int range */
static void bad_permute(void **state)
{
	(void)state;
	EXPECT(XO_EINVAL, shapes(XO_OP_permute, XO_DIR_FWD,
	                         params("batch=2 len=3 width=2 ch=4 dims=122")));
	assert_non_null(strstr(xo_last_error(), "dims=122 must be a permutation"));
	EXPECT(XO_EINVAL, shapes(XO_OP_permute, XO_DIR_BWD,
	                         params("batch=2 len=3 width=2 ch=4 dims=1234")));
	EXPECT(XO_EINVAL, shapes(XO_OP_permute, XO_DIR_FWD,
	                         params("batch=2 len=3 width=2 ch=4 dims=0")));
	EXPECT(XO_EINVAL, shapes(XO_OP_permute, XO_DIR_FWD,
	                         params("batch=2 len=3 width=2 ch=4 dims=21")));
	assert_non_null(strstr(xo_last_error(), "width=2 must be 1"));
	EXPECT(XO_EINVAL, shapes(XO_OP_permute, XO_DIR_FWD,
	                         params("batch=2 len=3 width=2 ch=0 dims=321")));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_permute, XO_DIR_FWD,
	                            params("batch=2 len=4294967296 width=1 ch=4 dims=321")));
}

/* layer_normalization: epsilon must be positive (the normalization divides
 * by sqrt(var + epsilon): a row of equal values has var 0), the sizes at
 * least 1 and their product in range. Its
 * slots follow center and scale: absent gamma / beta (and their gradients)
 * have no shape. */
static void bad_layer_normalization(void **state)
{
	struct xo_slot_shape s[XO_MAX_SRC], d[XO_MAX_DST];
	struct xo_params p;

	(void)state;
	EXPECT(XO_EINVAL, shapes(XO_OP_layer_normalization, XO_DIR_FWD,
	                         params("batch=2 len=3 ch=4 epsilon=0")));
	assert_string_equal(xo_last_error(), "layer_normalization: need epsilon > 0");
	EXPECT(XO_EINVAL, shapes(XO_OP_layer_normalization, XO_DIR_BWD,
	                         params("batch=2 len=3 ch=4 epsilon=-0.001")));
	EXPECT(XO_EINVAL, shapes(XO_OP_layer_normalization, XO_DIR_FWD,
	                         params("batch=2 len=3 ch=0 epsilon=0.001")));
	EXPECT(XO_EINVAL, shapes(XO_OP_layer_normalization, XO_DIR_BWD,
	                         params("batch=0 len=3 ch=4 epsilon=0.001")));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_layer_normalization, XO_DIR_FWD,
	                            params("batch=4294967296 len=4294967296 ch=4 epsilon=0.001")));
	p = params("batch=2 len=3 ch=4 epsilon=0.001 center=0 scale=0");
	assert_int_equal(xo_op_shapes(XO_OP_layer_normalization, XO_DIR_BWD, &p, s, d), XO_OK);
	assert_int_equal(s[1].ndim, 0);
	assert_int_equal(d[1].ndim, 0);
	assert_int_equal(d[2].ndim, 0);
	assert_int_equal(s[2].ndim, 3); /* dy */
}

static void bad_conv1d(void **state)
{
	(void)state;
	EXPECT(XO_EINVAL, shapes(XO_OP_conv1d, XO_DIR_FWD, params("len=29 kernel_size=0")));
	EXPECT(XO_EINVAL, shapes(XO_OP_conv1d, XO_DIR_FWD, params("len=29 kernel_size=-3")));
	EXPECT(XO_EINVAL, shapes(XO_OP_conv1d, XO_DIR_FWD, params("len=0 kernel_size=1")));
	EXPECT(XO_EINVAL, shapes(XO_OP_conv1d, XO_DIR_BWD, params("batch=0 len=5")));
	EXPECT(XO_EINVAL, shapes(XO_OP_conv1d, XO_DIR_FWD, params("ch=-1 len=5")));
	EXPECT(XO_EINVAL, shapes(XO_OP_conv1d, XO_DIR_FWD, params("filters=0 len=5")));
	EXPECT(XO_EINVAL, shapes(XO_OP_conv1d, XO_DIR_FWD, params("len=5 strides=-2")));
	EXPECT(XO_EINVAL, shapes(XO_OP_conv1d, XO_DIR_FWD, params("len=5 dilation_rate=0")));
	/* kernel longer than a valid input; dilation stretches it further */
	EXPECT(XO_EINVAL, shapes(XO_OP_conv1d, XO_DIR_FWD, params("len=3 kernel_size=5")));
	EXPECT(XO_EINVAL,
	       shapes(XO_OP_conv1d, XO_DIR_FWD, params("len=9 kernel_size=3 dilation_rate=5")));
	EXPECT(XO_EINVAL, shapes(XO_OP_conv1d, XO_DIR_FWD,
	                         params("len=9 kernel_size=3 dilation_rate=2 strides=2")));
	/* dilation_rate * (kernel_size - 1) overflows */
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_conv1d, XO_DIR_FWD,
	                            params("len=9 kernel_size=4 dilation_rate=4611686018427387904 "
	                                   "padding=same")));
	/* element counts overflow int64 */
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_conv1d, XO_DIR_FWD,
	                            params("batch=4294967296 len=4294967296 ch=16 kernel_size=1")));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_conv1d, XO_DIR_FWD,
	                            params("len=4 kernel_size=4294967296 ch=4294967296 "
	                                   "filters=4294967296 padding=same")));
	{
		struct xo_params p = params("len=5");

		p.activation = (enum xo_activation)17;
		EXPECT(XO_EINVAL, shapes(XO_OP_conv1d, XO_DIR_FWD, p));
		/* the activations conv1d and dense do not fuse are refused by
		 * name (a model runs them as their own op) */
		p = params("len=5 activation=gelu");
		EXPECT(XO_EINVAL, shapes(XO_OP_conv1d, XO_DIR_FWD, p));
		assert_non_null(strstr(xo_last_error(), "activation=gelu is not fused"));
		p = params("ch=3 units=2 activation=tanh");
		EXPECT(XO_EINVAL, shapes(XO_OP_dense, XO_DIR_BWD, p));
		assert_non_null(strstr(xo_last_error(), "activation=tanh is not fused"));
		p = params("len=5");
		p.padding = (enum xo_padding)9;
		EXPECT(XO_EINVAL, shapes(XO_OP_conv1d, XO_DIR_FWD, p));
	}
}

/* Geometry sizes beyond XO_GEOMETRY_MAX (2^31 - 1) are refused before any
 * arithmetic, naming the key; the old same/causal arithmetic formed
 * len + stride - 1 and overflowed int64 (UB; a "dim[1]=0" reason in release). */
static void geometry_limits(void **state)
{
	struct xo_params p;
	int64_t out = -1, pad = -1;

	(void)state;
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_conv1d, XO_DIR_FWD,
	                            params("len=29 kernel_size=3 strides=9223372036854775807 "
	                                   "padding=same")));
	assert_non_null(strstr(xo_last_error(), "strides=9223372036854775807"));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_conv1d, XO_DIR_BWD,
	                            params("len=29 kernel_size=3 strides=9223372036854775807 "
	                                   "padding=causal")));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_conv1d, XO_DIR_FWD,
	                            params("len=29 kernel_size=9223372036854775807 padding=same")));
	EXPECT(XO_EOVERFLOW,
	       shapes(XO_OP_conv1d, XO_DIR_FWD, params("len=9223372036854775807 kernel_size=3")));
	/* each size fits, the receptive field 2^31 + 1 does not */
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_conv1d, XO_DIR_FWD,
	                            params("len=29 kernel_size=3 dilation_rate=1073741824 "
	                                   "padding=causal")));
	assert_non_null(strstr(xo_last_error(), "receptive field"));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_max_pooling1d, XO_DIR_FWD,
	                            params("len=29 pool_size=9223372036854775807 padding=same")));
	assert_non_null(strstr(xo_last_error(), "pool_size=9223372036854775807"));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_max_pooling1d, XO_DIR_BWD,
	                            params("len=29 pool_size=3 strides=9223372036854775807 "
	                                   "padding=same")));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_max_pooling1d, XO_DIR_FWD,
	                            params("len=29 pool_size=2147483648 padding=same")));
	/* at the limit: Keras geometry, one output step */
	p = params("len=29 kernel_size=3 strides=2147483647 padding=same");
	assert_int_equal(xo_conv1d_geometry(&p, &out, &pad), XO_OK);
	assert_int_equal(out, 1);
	assert_int_equal(pad, 0);
	p = params("len=29 kernel_size=1073741824 padding=causal");
	assert_int_equal(xo_conv1d_geometry(&p, &out, &pad), XO_OK);
	assert_int_equal(out, 29);
	assert_int_equal(pad, 1073741823);
	p = params("len=29 pool_size=2147483647 padding=same");
	assert_int_equal(xo_pool1d_geometry(&p, &out, &pad), XO_OK);
	assert_int_equal(out, 1);
	assert_int_equal(pad, (2147483647 - 29) / 2);
}

static void bad_other_ops(void **state)
{
	(void)state;
	EXPECT(XO_EINVAL, shapes(XO_OP_max_pooling1d, XO_DIR_FWD, params("len=2 pool_size=3")));
	EXPECT(XO_EINVAL, shapes(XO_OP_max_pooling1d, XO_DIR_FWD, params("len=9 pool_size=0")));
	EXPECT(XO_EINVAL,
	       shapes(XO_OP_max_pooling1d, XO_DIR_FWD, params("len=9 pool_size=3 padding=causal")));
	EXPECT(XO_EINVAL,
	       shapes(XO_OP_max_pooling1d, XO_DIR_BWD, params("len=9 pool_size=3 strides=-1")));
	/* average pooling: the same geometry, its errors naming the op */
	EXPECT(XO_EINVAL, shapes(XO_OP_average_pooling1d, XO_DIR_FWD, params("len=2 pool_size=3")));
	assert_non_null(strstr(xo_last_error(), "average_pooling1d: pool_size=3"));
	EXPECT(XO_EINVAL, shapes(XO_OP_average_pooling1d, XO_DIR_BWD, params("len=9 pool_size=0")));
	EXPECT(XO_EINVAL, shapes(XO_OP_average_pooling1d, XO_DIR_FWD,
	                         params("len=9 pool_size=3 padding=causal")));
	assert_non_null(strstr(xo_last_error(), "average_pooling1d: padding"));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_average_pooling1d, XO_DIR_FWD,
	                            params("len=29 pool_size=2147483648 padding=same")));
	/* global pooling: sizes >= 1, len * ch within the tensor limit */
	EXPECT(XO_EINVAL, shapes(XO_OP_global_average_pooling1d, XO_DIR_FWD, params("len=0")));
	EXPECT(XO_EINVAL, shapes(XO_OP_global_max_pooling1d, XO_DIR_BWD, params("ch=0")));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_global_max_pooling1d, XO_DIR_FWD,
	                            params("len=4294967296 ch=4294967296")));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_global_average_pooling1d, XO_DIR_BWD,
	                            params("len=4294967296 ch=4294967296")));
	/* 2-D pooling: each axis's geometry, its errors naming the op and the
	 * axis's own keys (width/pool_w/strides_w for the width) */
	EXPECT(XO_EINVAL, shapes(XO_OP_max_pooling2d, XO_DIR_FWD,
	                         params("len=2 width=9 pool_size=3 pool_w=2")));
	assert_non_null(strstr(xo_last_error(), "max_pooling2d: pool_size=3 is longer than len=2"));
	EXPECT(XO_EINVAL, shapes(XO_OP_average_pooling2d, XO_DIR_BWD,
	                         params("len=9 width=2 pool_size=2 pool_w=3")));
	assert_non_null(
	    strstr(xo_last_error(), "average_pooling2d: pool_w=3 is longer than width=2"));
	EXPECT(XO_EINVAL, shapes(XO_OP_max_pooling2d, XO_DIR_BWD, params("len=4 width=0")));
	assert_non_null(strstr(xo_last_error(), "max_pooling2d: width=0 must be >= 1"));
	EXPECT(XO_EINVAL, shapes(XO_OP_average_pooling2d, XO_DIR_FWD,
	                         params("len=4 width=4 strides_w=-1")));
	assert_non_null(strstr(xo_last_error(), "average_pooling2d: strides_w=-1"));
	EXPECT(XO_EINVAL, shapes(XO_OP_max_pooling2d, XO_DIR_FWD,
	                         params("len=4 width=4 padding=causal")));
	assert_non_null(strstr(xo_last_error(), "max_pooling2d: padding must be valid or same"));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_average_pooling2d, XO_DIR_FWD,
	                            params("len=29 width=3 pool_w=2147483648 padding=same")));
	assert_non_null(strstr(xo_last_error(), "average_pooling2d: pool_w=2147483648"));
	EXPECT(XO_EINVAL, shapes(XO_OP_global_max_pooling2d, XO_DIR_FWD, params("width=0")));
	assert_non_null(strstr(xo_last_error(), "global_max_pooling2d: width=0"));
	EXPECT(XO_EOVERFLOW, shapes(XO_OP_global_average_pooling2d, XO_DIR_BWD,
	                            params("len=65536 width=65536 ch=4294967296")));
	EXPECT(XO_EINVAL, shapes(XO_OP_dense, XO_DIR_FWD, params("units=0")));
	EXPECT(XO_EOVERFLOW,
	       shapes(XO_OP_dense, XO_DIR_FWD, params("ch=4294967296 units=4294967296")));
	EXPECT(XO_EINVAL, shapes(XO_OP_relu, XO_DIR_FWD, params("len=0")));
	EXPECT(XO_EOVERFLOW,
	       shapes(XO_OP_flatten, XO_DIR_FWD, params("len=4294967296 ch=4294967296")));
	EXPECT(XO_EINVAL, shapes(XO_OP_dropout, XO_DIR_FWD, params("rate=1")));
	EXPECT(XO_EINVAL, shapes(XO_OP_dropout, XO_DIR_FWD, params("rate=-0.5")));
	EXPECT(XO_EINVAL, shapes(XO_OP_categorical_crossentropy, XO_DIR_FWD, params("ch=0")));
	EXPECT(XO_EINVAL, shapes(XO_OP_adam, XO_DIR_FWD, params("size=0")));
	EXPECT(XO_EINVAL, shapes(XO_OP_adam, XO_DIR_FWD, params("size=4 lr=0")));
	EXPECT(XO_EINVAL, shapes(XO_OP_adam, XO_DIR_FWD, params("size=4 beta_1=1")));
	EXPECT(XO_EINVAL, shapes(XO_OP_adam, XO_DIR_FWD, params("size=4 iteration=0")));
	EXPECT(XO_EINVAL, shapes(XO_OP_adam, XO_DIR_BWD, params("size=4")));
	/* the optimizers' hyperparameters (Keras 3 refuses them too) */
	EXPECT(XO_EINVAL, shapes(XO_OP_sgd, XO_DIR_FWD, params("size=0")));
	EXPECT(XO_EINVAL, shapes(XO_OP_sgd, XO_DIR_FWD, params("size=4 lr=0")));
	EXPECT(XO_EINVAL, shapes(XO_OP_sgd, XO_DIR_FWD, params("size=4 momentum=-0.5")));
	EXPECT(XO_EINVAL, shapes(XO_OP_sgd, XO_DIR_FWD, params("size=4 momentum=1.5")));
	EXPECT(XO_EINVAL, shapes(XO_OP_sgd, XO_DIR_BWD, params("size=4")));
	EXPECT(XO_EINVAL, shapes(XO_OP_rmsprop, XO_DIR_FWD, params("size=4 rho=1.5")));
	EXPECT(XO_EINVAL, shapes(XO_OP_rmsprop, XO_DIR_FWD, params("size=4 rho=-1")));
	EXPECT(XO_EINVAL, shapes(XO_OP_rmsprop, XO_DIR_FWD, params("size=4 epsilon=-1")));
	EXPECT(XO_EINVAL, shapes(XO_OP_rmsprop, XO_DIR_FWD, params("size=4 momentum=2")));
	EXPECT(XO_EINVAL, xo_params_set(&(struct xo_params){0}, "nesterov", "maybe"));
	/* the new losses need batch and ch; the metrics have no backward */
	EXPECT(XO_EINVAL, shapes(XO_OP_binary_crossentropy, XO_DIR_FWD, params("batch=0 ch=2")));
	EXPECT(XO_EINVAL, shapes(XO_OP_mean_squared_error, XO_DIR_BWD, params("batch=2 ch=0")));
	EXPECT(XO_EINVAL,
	       shapes(XO_OP_sparse_categorical_crossentropy, XO_DIR_FWD, params("batch=0 ch=3")));
	EXPECT(XO_EINVAL, shapes(XO_OP_binary_accuracy, XO_DIR_BWD, params("batch=2 ch=2")));
	EXPECT(XO_EINVAL,
	       shapes(XO_OP_sparse_categorical_accuracy, XO_DIR_BWD, params("batch=2 ch=2")));
	EXPECT(XO_EINVAL, shapes(XO_OP_gather, XO_DIR_FWD, params("rows=0")));
}

static void bad_tensors(void **state)
{
	struct xo_tensor *t = NULL, *v = NULL;
	float buf[8] = {0};

	(void)state;
	EXPECT(XO_EINVAL, xo_tensor_create(NULL, XO_DTYPE_F32, 1, (int64_t[]){4}, &t));
	EXPECT(XO_EINVAL, xo_tensor_create(g_ref, XO_DTYPE_F32, 1, (int64_t[]){4}, NULL));
	EXPECT(XO_EINVAL, xo_tensor_create(g_ref, XO_DTYPE_F32, 1, NULL, &t));
	EXPECT(XO_EINVAL, xo_tensor_create(g_ref, XO_DTYPE_F32, 0, (int64_t[]){4}, &t));
	EXPECT(XO_EINVAL, xo_tensor_create(g_ref, XO_DTYPE_F32, 5, (int64_t[]){1, 1, 1, 1, 1}, &t));
	EXPECT(XO_EINVAL, xo_tensor_create(g_ref, XO_DTYPE_F32, 2, (int64_t[]){4, 0}, &t));
	EXPECT(XO_EINVAL, xo_tensor_create(g_ref, XO_DTYPE_F32, 2, (int64_t[]){-4, 2}, &t));
	EXPECT(XO_EINVAL, xo_tensor_create(g_ref, (enum xo_dtype)7, 1, (int64_t[]){4}, &t));
	EXPECT(XO_EOVERFLOW,
	       xo_tensor_create(g_ref, XO_DTYPE_F32, 3, (int64_t[]){1LL << 32, 1LL << 32, 2}, &t));
	assert_null(t);

	assert_int_equal(xo_tensor_create(g_ref, XO_DTYPE_F32, 1, (int64_t[]){8}, &t), XO_OK);
	EXPECT(XO_EINVAL, xo_tensor_write(t, NULL, 0, 4));
	EXPECT(XO_EINVAL, xo_tensor_write(t, buf, 6, 4));
	EXPECT(XO_EINVAL, xo_tensor_write(t, buf, -1, 2));
	EXPECT(XO_EINVAL, xo_tensor_write(t, buf, 0, -2));
	EXPECT(XO_EINVAL, xo_tensor_write(NULL, buf, 0, 2));
	EXPECT(XO_EINVAL, xo_tensor_read(t, buf, 9, 0));
	EXPECT(XO_EINVAL, xo_tensor_read(t, NULL, 0, 1));
	/* views outside their parent */
	EXPECT(XO_EINVAL, xo_tensor_view(t, 4, 1, (int64_t[]){5}, &v));
	EXPECT(XO_EINVAL, xo_tensor_view(t, -1, 1, (int64_t[]){2}, &v));
	EXPECT(XO_EINVAL, xo_tensor_view(t, 0, 1, (int64_t[]){0}, &v));
	EXPECT(XO_EINVAL, xo_tensor_view(NULL, 0, 1, (int64_t[]){2}, &v));
	EXPECT(XO_EINVAL, xo_tensor_view(t, 0, 1, (int64_t[]){2}, NULL));
	assert_null(v);
	xo_tensor_free(t);
	xo_tensor_free(NULL);
}

static void bad_backends(void **state)
{
	struct xo_backend *be = NULL;

	(void)state;
	EXPECT(XO_EINVAL, xo_backend_open(NULL, &be));
	EXPECT(XO_EINVAL, xo_backend_open("ref", NULL));
	EXPECT(XO_ENODEV, xo_backend_open("tpu", &be));
	EXPECT(XO_ENODEV, xo_backend_open("", &be));
	EXPECT(XO_ENODEV, xo_backend_open("ref:0:0", &be));
	assert_null(be);
	xo_backend_close(NULL);
}

/* A valid dense call (batch 2, ch 3, units 4, bias) on ref whose slots the
 * tests then break one at a time. */
struct dense_call {
	struct xo_tensor *x, *w, *b, *y;
	struct xo_op_args a;
};

static void dense_call_make(struct dense_call *c, struct xo_backend *be)
{
	float buf[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

	memset(c, 0, sizeof(*c));
	c->a.p = params("batch=2 ch=3 units=4");
	assert_int_equal(xo_tensor_create(be, XO_DTYPE_F32, 2, (int64_t[]){2, 3}, &c->x), XO_OK);
	assert_int_equal(xo_tensor_create(be, XO_DTYPE_F32, 2, (int64_t[]){3, 4}, &c->w), XO_OK);
	assert_int_equal(xo_tensor_create(be, XO_DTYPE_F32, 1, (int64_t[]){4}, &c->b), XO_OK);
	assert_int_equal(xo_tensor_create(be, XO_DTYPE_F32, 2, (int64_t[]){2, 4}, &c->y), XO_OK);
	assert_int_equal(xo_tensor_write(c->x, buf, 0, 6), XO_OK);
	assert_int_equal(xo_tensor_write(c->w, buf, 0, 12), XO_OK);
	assert_int_equal(xo_tensor_write(c->b, buf, 0, 4), XO_OK);
	c->a.src[0] = c->x;
	c->a.src[1] = c->w;
	c->a.src[2] = c->b;
	c->a.dst[0] = c->y;
}

static void dense_call_free(struct dense_call *c)
{
	xo_tensor_free(c->y);
	xo_tensor_free(c->b);
	xo_tensor_free(c->w);
	xo_tensor_free(c->x);
}

static void bad_op_calls(void **state)
{
	struct dense_call c, other;
	struct xo_op_args a;
	struct xo_tensor *i32 = NULL, *wrong = NULL, *mag = NULL;

	(void)state;
	dense_call_make(&c, g_ref);
	assert_int_equal(xo_op_run(g_ref, XO_OP_dense, XO_DIR_FWD, &c.a), XO_OK);

	EXPECT(XO_EINVAL, xo_op_run(NULL, XO_OP_dense, XO_DIR_FWD, &c.a));
	EXPECT(XO_EINVAL, xo_op_run(g_ref, XO_OP_dense, XO_DIR_FWD, NULL));
	EXPECT(XO_EINVAL, xo_op_run(g_ref, XO_OP_COUNT, XO_DIR_FWD, &c.a));
	EXPECT(XO_EINVAL, xo_op_run(g_ref, XO_OP_dense, (enum xo_dir)5, &c.a));
	EXPECT(XO_EINVAL, xo_op_run(g_ref, XO_OP_accuracy, XO_DIR_BWD, &c.a));
	/* NULL where a tensor is required; a tensor where the slot is unused */
	a = c.a;
	a.src[1] = NULL;
	EXPECT(XO_EINVAL, xo_op_run(g_ref, XO_OP_dense, XO_DIR_FWD, &a));
	a = c.a;
	a.dst[0] = NULL;
	EXPECT(XO_EINVAL, xo_op_run(g_ref, XO_OP_dense, XO_DIR_FWD, &a));
	a = c.a;
	a.p.use_bias = false;
	EXPECT(XO_EINVAL, xo_op_run(g_ref, XO_OP_dense, XO_DIR_FWD, &a));
	a = c.a;
	a.src[3] = c.x;
	EXPECT(XO_EINVAL, xo_op_run(g_ref, XO_OP_dense, XO_DIR_FWD, &a));
	/* shapes that do not match the parameters */
	a = c.a;
	a.p.units = 5;
	EXPECT(XO_EINVAL, xo_op_run(g_ref, XO_OP_dense, XO_DIR_FWD, &a));
	a = c.a;
	a.src[1] = c.y; /* 8 elements where 12 are needed */
	EXPECT(XO_EINVAL, xo_op_run(g_ref, XO_OP_dense, XO_DIR_FWD, &a));
	/* wrong dtype */
	assert_int_equal(xo_tensor_create(g_ref, XO_DTYPE_I32, 2, (int64_t[]){2, 3}, &i32), XO_OK);
	a = c.a;
	a.src[0] = i32;
	EXPECT(XO_EINVAL, xo_op_run(g_ref, XO_OP_dense, XO_DIR_FWD, &a));
	/* a magnitude tensor that does not match its dst */
	assert_int_equal(xo_tensor_create(g_ref, XO_DTYPE_F32, 1, (int64_t[]){3}, &wrong), XO_OK);
	a = c.a;
	a.mag[0] = wrong;
	EXPECT(XO_EINVAL, xo_op_run(g_ref, XO_OP_dense, XO_DIR_FWD, &a));
	assert_int_equal(xo_tensor_create(g_ref, XO_DTYPE_I32, 2, (int64_t[]){2, 4}, &mag), XO_OK);
	a.mag[0] = mag;
	EXPECT(XO_EINVAL, xo_op_run(g_ref, XO_OP_dense, XO_DIR_FWD, &a));
	/* tensors of another backend */
	dense_call_make(&other, g_cpu);
	a = c.a;
	a.src[1] = other.w;
	EXPECT(XO_EBACKEND, xo_op_run(g_ref, XO_OP_dense, XO_DIR_FWD, &a));
	a = other.a;
	a.dst[0] = c.y;
	EXPECT(XO_EBACKEND, xo_op_run(g_cpu, XO_OP_dense, XO_DIR_FWD, &a));
	dense_call_free(&other);
	xo_tensor_free(mag);
	xo_tensor_free(wrong);
	xo_tensor_free(i32);
	dense_call_free(&c);
}

/* The harness refuses bad cases with a status, never a crash. */
static void bad_cases(void **state)
{
	struct xo_case c = {
	    .op = XO_OP_conv1d, .dir = XO_DIR_FWD, .mode = XO_HMODE_EXACT, .seed = 1};
	struct xo_case_result r;

	(void)state;
	c.p = params("len=29 kernel_size=0");
	EXPECT(XO_EINVAL, xo_case_run(g_ref, g_cpu, &c, &r));
	c.p = params("len=29 kernel_size=3 activation=sigmoid");
	EXPECT(XO_EINVAL, xo_case_run(g_ref, g_cpu, &c, &r)); /* exact needs a linear op */
	c.p = params("len=29 kernel_size=3");
	c.mode = XO_HMODE_NONFINITE;
	EXPECT(XO_EINVAL, xo_case_run(g_ref, g_cpu, &c, &r));
	c.op = XO_OP_gather;
	c.dir = XO_DIR_BWD;
	c.mode = XO_HMODE_REAL;
	EXPECT(XO_EINVAL, xo_case_run(g_ref, g_cpu, &c, &r));
	/* exact mode cannot hold 2^24 accumulated terms */
	c = (struct xo_case){.op = XO_OP_dense,
	                     .dir = XO_DIR_BWD,
	                     .mode = XO_HMODE_EXACT,
	                     .seed = 1,
	                     .p = params("batch=20000000 ch=1 units=1")};
	EXPECT(XO_EINVAL, xo_case_run(g_ref, g_cpu, &c, &r));
}

/* ---- the model runtime: bad data refused, good checkpoints kept ---------- */

/* A 4-sample model small enough to train in microseconds. */
static const char tiny_spec[] = "input 4 1\nflatten\ndense units=3 activation=softmax\n";
/* Two dense layers: a first layer's output can overflow float (the
 * reference accumulates and activates in double, so one layer cannot). */
static const char deep_spec[] =
    "input 4 1\nflatten\ndense units=3\ndense units=3 activation=softmax\n";

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Removes dir, its files and its subdirectories' files (two levels: all
 * these tests make). */
static void remove_tree(const char *dir)
{
	static const char *const subs[] = {"ck", "plain", NULL};
	static const char *const files[] = {"xo-checkpoint.txt", "dense.kernel.npy",
	                                    "dense.bias.npy",    "dense_1.kernel.npy",
	                                    "dense_1.bias.npy",  NULL};
	char path[512];

	for (int i = 0; subs[i]; i++) {
		for (int j = 0; files[j]; j++) {
			snprintf(path, sizeof(path), "%s/%s/%s", dir, subs[i], files[j]);
			remove(path);
		}
		snprintf(path, sizeof(path), "%s/%s", dir, subs[i]);
		rmdir(path);
	}
	assert_int_equal(rmdir(dir), 0);
}

/* dir/name's bytes equal the copy taken before. */
static void assert_same_file(const char *dir, const char *name, const char *before, size_t blen)
{
	char path[512];
	size_t len;
	char *now;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	now = read_all(path, &len);
	assert_non_null(now);
	if (len != blen || memcmp(now, before, len))
		fail_msg("%s changed", path);
	free(now);
}

static void model_bad_data(void **state)
{
	float x[16], y[12] = {0}, probs[12];
	struct xo_fit_options o = xo_fit_options_default();
	struct xo_model *m = NULL;
	double loss, acc;

	(void)state;
	for (int i = 0; i < 16; i++)
		x[i] = (float)i / 16.0f;
	for (int i = 0; i < 4; i++)
		y[i * 3 + i % 3] = 1.0f;
	assert_int_equal(xo_model_open_string(tiny_spec, "tiny", g_ref, 4, &m), XO_OK);
	assert_int_equal(xo_model_init(m, 1), XO_OK);
	o.epochs = 1;
	o.batch_size = 4;
	assert_int_equal(xo_model_fit(m, x, y, 4, &o, NULL, NULL), XO_OK);

	x[6] = NAN;
	EXPECT(XO_EINVAL, xo_model_predict(m, x, 4, 4, probs));
	assert_non_null(strstr(xo_last_error(), "sample 1 holds NaN at element 2"));
	EXPECT(XO_EINVAL, xo_model_evaluate(m, x, y, 4, 4, &loss, &acc));
	EXPECT(XO_EINVAL, xo_model_fit(m, x, y, 4, &o, NULL, NULL));
	x[6] = -INFINITY;
	EXPECT(XO_EINVAL, xo_model_fit(m, x, y, 4, &o, NULL, NULL));
	assert_non_null(strstr(xo_last_error(), "-Inf"));
	x[6] = 0.5f;
	y[3] = NAN; /* sample 1 */
	EXPECT(XO_EINVAL, xo_model_fit(m, x, y, 4, &o, NULL, NULL));
	EXPECT(XO_EINVAL, xo_model_evaluate(m, x, y, 4, 4, &loss, &acc));
	y[3] = -1.0f;
	EXPECT(XO_EINVAL, xo_model_fit(m, x, y, 4, &o, NULL, NULL));
	y[3] = 0.0f;
	y[4] = 0.5f; /* two halves: a distribution, not one-hot */
	y[5] = 0.5f;
	EXPECT(XO_EINVAL, xo_model_fit(m, x, y, 4, &o, NULL, NULL));
	assert_non_null(strstr(xo_last_error(), "sample 1 is not one-hot"));
	y[4] = 1.0f;
	y[5] = 0.0f;
	assert_int_equal(xo_model_fit(m, x, y, 4, &o, NULL, NULL), XO_OK);
	xo_model_close(m);
}

/* The finiteness check over large inputs (model/model.c tests blocks of
 * 1024 floats on their exponent bits, then names the first bad element):
 * every kind of non-finite value is found at a block's first and last
 * element, the next block's first and in the tail, and the largest finite
 * values, -0 and subnormals pass. */
static void data_check_finite_blocks(void **state)
{
	enum { PER = 30, N = 100 }; /* 3000 floats: two full blocks and a tail */
	static float v[N * PER];
	const float bad[] = {NAN, -NAN, INFINITY, -INFINITY};
	const char *name[] = {"NaN", "NaN", "+Inf", "-Inf"};
	const int64_t at[] = {0, 1023, 1024, 2047, 2048, 2999};
	char want[96];

	(void)state;
	for (int64_t i = 0; i < N * PER; i++)
		v[i] = (float)(i % 7) - 3.0f;
	v[5] = 3.4028235e38f;
	v[1500] = -3.4028235e38f;
	v[2500] = -0.0f;
	v[2990] = 1e-45f;
	assert_int_equal(xo_data_check_finite(v, N, PER, "x"), XO_OK);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		for (size_t a = 0; a < sizeof(at) / sizeof(at[0]); a++) {
			float keep = v[at[a]];

			v[at[a]] = bad[k];
			EXPECT(XO_EINVAL, xo_data_check_finite(v, N, PER, "x"));
			snprintf(want, sizeof(want), "sample %d holds %s at element %d",
			         (int)(at[a] / PER), name[k], (int)(at[a] % PER));
			assert_non_null(strstr(xo_last_error(), want));
			v[at[a]] = keep;
		}
}

/* A diverging fit and NaN weights never replace a good checkpoint. */
static void model_keeps_good_checkpoint(void **state)
{
	char tmp[] = "/tmp/xo-badinput-XXXXXX", ck[256], plain[256], path[512];
	float x[16], y[12] = {0}, w[12], w1[9];
	struct xo_fit_options o = xo_fit_options_default();
	struct xo_model *m = NULL;
	char *manifest, *kernel;
	size_t mlen, klen;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	snprintf(ck, sizeof(ck), "%s/ck", tmp);
	snprintf(plain, sizeof(plain), "%s/plain", tmp);
	for (int i = 0; i < 4; i++)
		y[i * 3 + i % 3] = 1.0f;
	for (int i = 0; i < 16; i++)
		x[i] = (float)i / 16.0f;
	assert_int_equal(xo_model_open_string(deep_spec, "deep", g_ref, 4, &m), XO_OK);
	assert_int_equal(xo_model_init(m, 1), XO_OK);
	o.epochs = 1;
	o.batch_size = 4;
	o.checkpoint_dir = ck;
	assert_int_equal(xo_model_fit(m, x, y, 4, &o, NULL, NULL), XO_OK);
	snprintf(path, sizeof(path), "%s/xo-checkpoint.txt", ck);
	manifest = read_all(path, &mlen);
	assert_non_null(manifest);
	snprintf(path, sizeof(path), "%s/dense.kernel.npy", ck);
	kernel = read_all(path, &klen);
	assert_non_null(kernel);

	/* finite weights (from a plain NumPy directory) and finite inputs:
	 * the first layer's sums (4 * 10 * 3e38) overflow float to +Inf, so
	 * every logit is +Inf, softmax's Inf - Inf is NaN, so is the loss */
	assert_int_equal(mkdir(plain, 0777), 0);
	for (int i = 0; i < 12; i++)
		w[i] = 10.0f;
	snprintf(path, sizeof(path), "%s/dense.kernel.npy", plain);
	assert_int_equal(xo_npy_write(path, 2, (int64_t[]){4, 3}, w), XO_OK);
	snprintf(path, sizeof(path), "%s/dense.bias.npy", plain);
	assert_int_equal(xo_npy_write(path, 1, (int64_t[]){3}, w), XO_OK);
	for (int i = 0; i < 9; i++)
		w1[i] = 1.0f;
	snprintf(path, sizeof(path), "%s/dense_1.kernel.npy", plain);
	assert_int_equal(xo_npy_write(path, 2, (int64_t[]){3, 3}, w1), XO_OK);
	snprintf(path, sizeof(path), "%s/dense_1.bias.npy", plain);
	assert_int_equal(xo_npy_write(path, 1, (int64_t[]){3}, w1), XO_OK);
	for (int i = 0; i < 16; i++)
		x[i] = 3e38f;
	assert_int_equal(xo_model_load_weights(m, plain), XO_OK);
	EXPECT(XO_EINVAL, xo_model_fit(m, x, y, 4, &o, NULL, NULL));
	assert_non_null(strstr(xo_last_error(), "loss became"));
	assert_same_file(ck, "xo-checkpoint.txt", manifest, mlen);
	assert_same_file(ck, "dense.kernel.npy", kernel, klen);

	/* NaN weights are loaded (plain NumPy weights), never saved */
	w[7] = NAN;
	snprintf(path, sizeof(path), "%s/dense.kernel.npy", plain);
	assert_int_equal(xo_npy_write(path, 2, (int64_t[]){4, 3}, w), XO_OK);
	assert_int_equal(xo_model_load_weights(m, plain), XO_OK);
	EXPECT(XO_EINVAL, xo_model_save_weights(m, ck));
	assert_non_null(strstr(xo_last_error(), "weight 7 is NaN"));
	assert_same_file(ck, "xo-checkpoint.txt", manifest, mlen);
	assert_same_file(ck, "dense.kernel.npy", kernel, klen);
	/* nothing left beside ck by the refused saves */
	{
		DIR *d = opendir(tmp);
		struct dirent *e;

		assert_non_null(d);
		while ((e = readdir(d)))
			assert_true(strncmp(e->d_name, ".ck.xo-ckpt-", 12) != 0);
		closedir(d);
	}
	xo_model_close(m);
	free(manifest);
	free(kernel);
	remove_tree(tmp);
}

/* A failed write names the user's path, never a temporary:
 * /proc takes no new files, whatever the user. */
static void write_error_names_user_path(void **state)
{
	const float v[2] = {1.0f, 2.0f};

	(void)state;
	EXPECT(XO_EIO, xo_npy_write("/proc/xo-badinput.npy", 1, (int64_t[]){2}, v));
	assert_true(!strncmp(xo_last_error(), "/proc/xo-badinput.npy: ", 23));
	assert_null(strstr(xo_last_error(), ".tmp"));
	assert_null(strstr(xo_last_error(), ".xo-"));
	/* a FIFO (never /dev/null: old code would replace it) is refused
	 * before anything is opened, and stays a FIFO */
	{
		char tmp[] = "/tmp/xo-badinput-fifo-XXXXXX", path[256];
		struct stat sb;

		assert_non_null(mkdtemp(tmp));
		snprintf(path, sizeof(path), "%s/fifo", tmp);
		assert_int_equal(mkfifo(path, 0600), 0);
		EXPECT(XO_EINVAL, xo_npy_write(path, 1, (int64_t[]){2}, v));
		assert_non_null(strstr(xo_last_error(), "is a FIFO"));
		assert_int_equal(lstat(path, &sb), 0);
		assert_true(S_ISFIFO(sb.st_mode));
		assert_int_equal(remove(path), 0);
		assert_int_equal(rmdir(tmp), 0);
	}
}

/* int32/int64 .npy files are class ids for xo_npy_read_labels only. */
static void npy_integer_labels(void **state)
{
	char tmp[] = "/tmp/xo-badinput-npy-XXXXXX", path[512];
	static const unsigned char i32[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0};
	const char *h = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
	const int32_t v[3] = {2, -1, 7};
	struct xo_npy a;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	snprintf(path, sizeof(path), "%s/y.npy", tmp);
	f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(i32, 1, sizeof(i32), f);
	fprintf(f, "%-117s\n", h); /* 10 + 118 bytes: 64-aligned */
	fwrite(v, 4, 3, f);        /* little-endian host (x86, arm64) */
	fclose(f);
	EXPECT(XO_EFORMAT, xo_npy_read(path, &a));
	assert_non_null(strstr(xo_last_error(), "'<i4'"));
	assert_int_equal(xo_npy_read_labels(path, &a), XO_OK);
	assert_true(a.is_int);
	assert_null(a.data);
	assert_int_equal(a.ints[0], 2);
	assert_int_equal(a.ints[1], -1);
	assert_int_equal(a.ints[2], 7);
	xo_npy_free(&a);
	remove(path);
	rmdir(tmp);
}

/* Outside files that are no regular file (a FIFO: a .npy in a weights
 * directory, an --input) are refused at once, never waited on; a .npy header
 * naming a key twice (NumPy takes the last) is refused. */
static void npy_fifo_and_dup_keys(void **state)
{
	char tmp[] = "/tmp/xo-badinput-npy2-XXXXXX", path[512];
	static const unsigned char pre[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0};
	const char *h = "{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
	const float v[4] = {1, 2, 3, 4};
	struct xo_npy a;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	snprintf(path, sizeof(path), "%s/fifo.npy", tmp);
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(20); /* a reader waiting on the FIFO fails the test, not hangs it */
	EXPECT(XO_EIO, xo_npy_read(path, &a));
	assert_non_null(strstr(xo_last_error(), "a FIFO"));
	assert_non_null(strstr(xo_last_error(), path));
	EXPECT(XO_EIO, xo_npy_read_labels(path, &a));
	alarm(0);
	remove(path);
	snprintf(path, sizeof(path), "%s/dup.npy", tmp);
	f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(pre, 1, sizeof(pre), f);
	fprintf(f, "%-117s\n", h);
	fwrite(v, 4, 4, f);
	fclose(f);
	EXPECT(XO_EFORMAT, xo_npy_read(path, &a));
	assert_non_null(strstr(xo_last_error(), "'descr' twice"));
	remove(path);
	rmdir(tmp);
}

static int group_setup(void **state)
{
	(void)state;
	if (xo_backend_open("ref", &g_ref) || xo_backend_open("cpu", &g_cpu))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	xo_backend_close(g_cpu);
	xo_backend_close(g_ref);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(bad_keys_and_values),
	    cmocka_unit_test(bad_shape_lines),
	    cmocka_unit_test(bad_conv1d),
	    cmocka_unit_test(bad_rnn),
	    cmocka_unit_test(bad_layer_normalization),
	    cmocka_unit_test(bad_permute),
	    cmocka_unit_test(bad_other_ops),
	    cmocka_unit_test(geometry_limits),
	    cmocka_unit_test(bad_tensors),
	    cmocka_unit_test(bad_backends),
	    cmocka_unit_test(bad_op_calls),
	    cmocka_unit_test(bad_cases),
	    cmocka_unit_test(model_bad_data),
	    cmocka_unit_test(data_check_finite_blocks),
	    cmocka_unit_test(model_keeps_good_checkpoint),
	    cmocka_unit_test(npy_integer_labels),  cmocka_unit_test(write_error_names_user_path),
	    cmocka_unit_test(npy_fifo_and_dup_keys),
	};

	return cmocka_run_group_tests_name("badinput", tests, group_setup, group_teardown);
}
