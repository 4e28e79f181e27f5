/*
 * spec.c - the model spec parser (DESIGN section 7): one Keras layer a line,
 * Keras layer and argument names with Keras defaults, '#' comments. Every
 * rejection names the file and line: "models/x.model:4: reason".
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

/* The seed model of DESIGN section 1, byte for byte models/seed.model. */
const char xo_model_seed_spec[] = "# The seed model (DESIGN section 1): the reference workload.\n"
                                  "input 29 1\n"
                                  "conv1d filters=16 kernel_size=3 activation=relu\n"
                                  "max_pooling1d pool_size=3\n"
                                  "conv1d filters=32 kernel_size=3 activation=relu\n"
                                  "max_pooling1d pool_size=3\n"
                                  "flatten\n"
                                  "dropout rate=0.5\n"
                                  "dense units=32 activation=sigmoid\n"
                                  "dense units=12 activation=softmax\n";

#define MAX_TOKENS 16
#define MAX_LINE   1024

const struct xo_layer_kind_info xo_layer_kinds[XO_LAYER_COUNT] = {
#define XO_LAYER(kind, spec, keras, op, net, family) [XO_LAYER_##kind] = {spec, keras, op, net},
#include "xo/layers.def"
#undef XO_LAYER
};

const char *xo_spec_kind_name(enum xo_layer_kind kind)
{
	return (unsigned)kind < XO_LAYER_COUNT ? xo_layer_kinds[kind].spec : "?";
}

const char *xo_layer_keras_class(enum xo_layer_kind kind)
{
	return (unsigned)kind < XO_LAYER_COUNT ? xo_layer_kinds[kind].keras : "?";
}

/* Arguments each layer accepts (Keras names). */
static const char *const conv_args[] = {"filters",  "kernel_size",   "strides",
                                        "padding",  "dilation_rate", "activation",
                                        "use_bias", "name",          NULL};
/* conv2d: kernel_size, strides and dilation_rate are the height's;
 * kernel_w, strides_w and dilation_w the width's (absent: as the height's,
 * Keras's int form) */
static const char *const conv2d_args[] = {"filters",    "kernel_size", "kernel_w",
                                          "strides",    "strides_w",   "padding",
                                          "dilation_rate", "dilation_w", "activation",
                                          "use_bias",   "name",        NULL};
/* depthwise_conv2d: conv2d's geometry keys, depth_multiplier for filters
 * (dilation 1 only: the op refuses other rates) */
static const char *const depthwise2d_args[] = {
    "depth_multiplier", "kernel_size",   "kernel_w",   "strides",    "strides_w", "padding",
    "dilation_rate",    "dilation_w",    "activation", "use_bias",   "name",      NULL};
/* separable_conv2d: depthwise_conv2d's keys and the pointwise filters */
static const char *const separable2d_args[] = {
    "filters",       "depth_multiplier", "kernel_size", "kernel_w",   "strides",  "strides_w",
    "padding",       "dilation_rate",    "dilation_w",  "activation", "use_bias", "name",
    NULL};
/* separable_conv1d: separable_conv2d's keys of one axis */
static const char *const separable1d_args[] = {
    "filters",       "depth_multiplier", "kernel_size", "strides", "padding",
    "dilation_rate", "activation",       "use_bias",    "name",    NULL};
/* depthwise_conv1d: depthwise_conv2d's keys of one axis */
static const char *const depthwise1d_args[] = {"depth_multiplier", "kernel_size", "strides",
                                               "padding",          "dilation_rate", "activation",
                                               "use_bias",         "name",          NULL};
/* conv2d_transpose: conv2d's keys and output_padding / output_padding_w
 * (absent or None: Keras's None) */
static const char *const conv2d_transpose_args[] = {
    "filters",    "kernel_size", "kernel_w", "strides",        "strides_w",
    "padding",    "output_padding", "output_padding_w", "dilation_rate", "dilation_w",
    "activation", "use_bias",    "name",     NULL};
/* conv1d_transpose: the keys of one axis */
static const char *const conv1d_transpose_args[] = {
    "filters", "kernel_size", "strides", "padding", "output_padding", "dilation_rate",
    "activation", "use_bias", "name", NULL};
static const char *const pool_args[] = {"pool_size", "strides", "padding", "name", NULL};
/* 2-D pooling: pool_size and strides are the height's; pool_w and strides_w
 * the width's (absent: as the height's, Keras's int form) */
static const char *const pool2d_args[] = {"pool_size", "pool_w",  "strides",
                                          "strides_w", "padding", "name",
                                          NULL};
static const char *const flatten_args[] = {"name", NULL};
/* the global poolings: keepdims (Keras's default False; True keeps the
 * pooled axes as 1s, the same values in a [1][ch] or [1][1][ch] sample) */
static const char *const global_pool_args[] = {"keepdims", "name", NULL};
static const char *const dropout_args[] = {"rate", "name", NULL};
static const char *const dense_args[] = {"units", "activation", "use_bias", "name", NULL};
static const char *const activation_args[] = {"activation", "name", NULL};
/* batch_normalization: axis the last (-1, or its positive index), the only
 * axis supported */
static const char *const bn_args[] = {"momentum", "epsilon", "center", "scale",
                                      "axis",     "name",    NULL};
/* layer_normalization: axis the last only (as batch_normalization's),
 * rms_scaling False */
static const char *const ln_args[] = {"epsilon", "center", "scale", "axis", "name", NULL};
/* the recurrent layers (Keras defaults: activation tanh, recurrent_activation
 * sigmoid, use_bias True, return_sequences, go_backwards and
 * zero_output_for_mask False, GRU reset_after True); the op refuses the
 * activations it lacks */
static const char *const rnn_args[] = {"units",          "activation",      "recurrent_activation",
                                       "use_bias",       "return_sequences", "go_backwards",
                                       "zero_output_for_mask", "name",     NULL};
static const char *const gru_args[] = {"units",          "activation",       "recurrent_activation",
                                       "use_bias",       "return_sequences", "go_backwards",
                                       "reset_after",    "zero_output_for_mask", "name", NULL};
/* embedding: mask_zero=True makes Keras's mask, its ids != 0, which the layers
 * after it pass on, drop or use (mask_rules) */
static const char *const embedding_args[] = {"input_dim", "output_dim", "mask_zero", "name", NULL};
/* zero padding: padding=N (both ends) or padding=BEGIN,END (Keras's int or
 * tuple; the layer's Keras default 1) */
static const char *const zero_padding_args[] = {"padding", "name", NULL};
/* cropping: cropping=N or cropping=BEGIN,END (Keras's default (1, 1)) */
static const char *const cropping_args[] = {"cropping", "name", NULL};
/* up_sampling1d: size (Keras's default 2) */
static const char *const up_sampling_args[] = {"size", "name", NULL};
/* up_sampling2d: size the height's (2), size_w the width's (as size);
 * interpolation nearest only */
static const char *const up_sampling2d_args[] = {"size", "size_w", "interpolation", "name", NULL};
/* reshape: target_shape=A[,B[,C]] (required; one entry may be -1) */
static const char *const reshape_args[] = {"target_shape", "name", NULL};
/* repeat_vector: n (required, Keras's RepeatVector(n)) */
static const char *const repeat_vector_args[] = {"n", "name", NULL};
/* the merge layers: their inputs= (any layer's argument) and a name */
static const char *const merge_args[] = {"name", NULL};
/* concatenate: axis the last (-1, or its positive index) */
static const char *const concatenate_args[] = {"axis", "name", NULL};
/* permute: dims=A,B or dims=A,B,C (Keras's dims: a permutation of 1..rank) */
static const char *const permute_args[] = {"dims", "name", NULL};
/* Keras MultiHeadAttention's arguments (use_causal_mask: a call argument in
 * Keras, recorded in the functional node) */
static const char *const mha_args[] = {"num_heads", "key_dim",         "value_dim",
                                       "output_shape", "dropout", "use_causal_mask",
                                       "use_bias",  "name",    NULL};
/* re_lu: Keras ReLU's arguments (max_value None or 6; negative_slope and
 * threshold 0): set_relu_arg picks the relu or relu6 op */
static const char *const relu_args[] = {"max_value", "negative_slope", "threshold", "name",
                                        NULL};
/* rescaling: Keras Rescaling's scale (required) and offset (0), numbers
 * (Keras's per-channel lists refused) */
static const char *const rescaling_args[] = {"scale", "offset", "name", NULL};
/* normalization: Keras Normalization's axis (the last only), mean and
 * variance (numbers, both or neither: one for every channel), invert (True:
 * the inverse, mean + x * den) */
static const char *const normalization_args[] = {"axis", "mean", "variance", "invert", "name",
                                                 NULL};
/* softmax: Keras Softmax's axis, the last only (as the normalizations') */
static const char *const softmax_args[] = {"axis", "name", NULL};
/* leaky_re_lu: Keras LeakyReLU's negative_slope (0.3), and alpha, the name
 * Keras's constructor still takes for it (Keras 2's files write it) */
static const char *const leaky_relu_args[] = {"negative_slope", "alpha", "name", NULL};
/* elu: Keras ELU's alpha (1.0) */
static const char *const elu_args[] = {"alpha", "name", NULL};
/* masking: Keras Masking's mask_value (default 0.0) */
static const char *const masking_args[] = {"mask_value", "name", NULL};
/* time_distributed: layer= (the wrapped kind) and the wrapped kind's own
 * arguments (layer_check refuses those of the other kind) */
static const char *const time_distributed_args[] = {
    "layer",         "units",      "filters",  "kernel_size", "strides", "padding",
    "dilation_rate", "activation", "use_bias", "name",        NULL};

/* bidirectional: layer= (the wrapped recurrent kind), merge_mode, and the
 * wrapped kind's own arguments (layer_check refuses reset_after unless
 * over gru; zero_output_for_mask is read and, as Keras, replaced by
 * return_sequences: shape_bidirectional) */
static const char *const bidirectional_args[] = {
    "layer",            "merge_mode",   "units",       "activation", "recurrent_activation",
    "use_bias",         "return_sequences", "go_backwards", "reset_after",
    "zero_output_for_mask", "name", NULL};

/* Records "origin:line: message" and returns st. */
static enum xo_status __attribute__((format(printf, 4, 5)))
spec_error(enum xo_status st, const char *origin, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return xo_error(st, "%s:%d: %s", origin, line, msg);
}

static bool parse_pos_int(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 1 || v > (INT64_C(1) << 40))
		return false;
	*out = v;
	return true;
}

static bool parse_bool_value(const char *s, bool *out)
{
	if (!strcmp(s, "True") || !strcmp(s, "true") || !strcmp(s, "1")) {
		*out = true;
		return true;
	}
	if (!strcmp(s, "False") || !strcmp(s, "false") || !strcmp(s, "0")) {
		*out = false;
		return true;
	}
	return false;
}

static bool valid_name(const char *s)
{
	if (!*s || strlen(s) >= XO_LAYER_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
			return false;
	return true;
}

/* The positive integer arguments of set_arg (strides and strides_w also
 * take None, kept as 0: the default). */
static enum xo_status set_int_arg(struct xo_params *p, const char *key, const char *val,
                                  const char *origin, int line)
{
	int64_t v;

	if (!strcmp(val, "None") && !strcmp(key, "strides")) {
		p->strides = 0;
		return XO_OK;
	}
	if (!strcmp(val, "None") && !strcmp(key, "strides_w")) {
		p->strides_w = 0;
		return XO_OK;
	}
	if (!parse_pos_int(val, &v))
		return spec_error(XO_EINVAL, origin, line,
		                  "%s=%s: expected a positive integer", key, val);
	if (!strcmp(key, "filters"))
		p->filters = v;
	else if (!strcmp(key, "kernel_size"))
		p->kernel_size = v;
	else if (!strcmp(key, "strides"))
		p->strides = v;
	else if (!strcmp(key, "dilation_rate"))
		p->dilation_rate = v;
	else if (!strcmp(key, "pool_size"))
		p->pool_size = v;
	else if (!strcmp(key, "pool_w"))
		p->pool_w = v;
	else if (!strcmp(key, "strides_w"))
		p->strides_w = v;
	else if (!strcmp(key, "kernel_w"))
		p->kernel_w = v;
	else if (!strcmp(key, "dilation_w"))
		p->dilation_w = v;
	else if (!strcmp(key, "size") || !strcmp(key, "n"))
		p->repeats = v;
	else if (!strcmp(key, "size_w"))
		p->repeats_w = v;
	else if (!strcmp(key, "depth_multiplier"))
		p->depth_multiplier = v;
	else
		p->units = v;
	return XO_OK;
}

/* conv2d_transpose's output_padding / output_padding_w: None (-1), or 0
 * and up (the op checks it against the stride). */
static enum xo_status set_output_padding(struct xo_params *p, const char *key, const char *val,
                                         const char *origin, int line)
{
	int64_t v = 0;

	if (!strcmp(val, "None"))
		v = -1;
	else if (strcmp(val, "0") && !parse_pos_int(val, &v))
		return spec_error(XO_EINVAL, origin, line,
		                  "%s=%s: expected None or an integer >= 0", key, val);
	if (!strcmp(key, "output_padding"))
		p->output_padding = v;
	else
		p->output_padding_w = v;
	return XO_OK;
}

/*
 * The margins of a pad layer (ops.def's pad), each in [0, 2^31 - 1], stored
 * as the op's signed margins, negated for cropping. 1-D: N or B,E (Keras's
 * int or (begin, end)); 2-D: N (all four), H,W (Keras's symmetric (height,
 * width)) or T,B,L,R (Keras's ((top, bottom), (left, right))).
 */
static enum xo_status set_margins(struct xo_layer_spec *l, const char *key, const char *val,
                                  const char *origin, int line)
{
	bool two_d = l->kind == XO_LAYER_ZERO_PADDING2D || l->kind == XO_LAYER_CROPPING2D;
	int64_t v[4], sign = !strcmp(key, "cropping") ? -1 : 1;
	int n = 0;
	const char *s = val;

	while (n < (two_d ? 4 : 2)) {
		char *end;
		long long x;

		if (*s < '0' || *s > '9')
			break;
		errno = 0;
		x = strtoll(s, &end, 10);
		if (errno || x > XO_GEOMETRY_MAX)
			break;
		v[n++] = x;
		s = end;
		if (*s != ',')
			break;
		s++;
	}
	if (!n || *s || (two_d && n == 3))
		return spec_error(XO_EINVAL, origin, line,
		                  two_d ? "%s=%s: expected a non-negative integer, two "
		                          "(height,width) or four (top,bottom,left,right)"
		                        : "%s=%s: expected a non-negative integer or two (begin,end)",
		                  key, val);
	if (n == 1)
		v[1] = v[2] = v[3] = v[0];
	else if (n == 2 && two_d) {
		v[2] = v[3] = v[1];
		v[1] = v[0];
	}
	l->p.pad_begin = sign * v[0];
	l->p.pad_end = sign * v[1];
	l->p.pad_begin_w = two_d ? sign * v[2] : 0;
	l->p.pad_end_w = two_d ? sign * v[3] : 0;
	return XO_OK;
}

/* permute's dims: Keras's tuple, 2 or 3 entries, each a permutation index,
 * kept as their digits (op permute takes them so: 21, 312). Keras's own
 * check: the entries must be 1..len(dims), each once. */
static enum xo_status set_dims(struct xo_params *p, const char *val, const char *origin, int line)
{
	int64_t d = 0;
	int n = 0, seen = 0;
	const char *s = val;

	for (;;) {
		if (*s < '0' || *s > '9' || (s[1] >= '0' && s[1] <= '9') || n == 3)
			goto bad;
		seen |= 1 << (*s - '0');
		d = d * 10 + (*s - '0');
		n++;
		if (!*++s)
			break;
		if (*s++ != ',')
			goto bad;
	}
	if (n < 2 || seen != ((1 << (n + 1)) - 2))
		return spec_error(XO_EINVAL, origin, line,
		                  "Invalid permutation argument `dims` for Permute Layer: the "
		                  "indices in dims=%s must be consecutive and start from 1 (a "
		                  "permutation of 1,2 or 1,2,3)", val);
	p->dims = d;
	return XO_OK;
bad:
	return spec_error(XO_EINVAL, origin, line,
	                  "dims=%s: expected 2 or 3 axis indices, e.g. dims=2,1 or dims=3,1,2", val);
}

/* reshape's target_shape: 1 to 3 entries, each a positive integer up to
 * 2^31 - 1 or -1 (Keras's tuple; the rank and the -1 are checked by
 * shape_reshape against the input) */
static enum xo_status set_target(struct xo_layer_spec *l, const char *val, const char *origin,
                                 int line)
{
	const char *s = val;
	int n = 0;

	for (;;) {
		char *end;
		long long x;

		errno = 0;
		x = strtoll(s, &end, 10);
		if (end == s || errno || n == 4 || (x < 1 && x != -1) || x > XO_GEOMETRY_MAX)
			goto bad;
		if (n < 3)
			l->target[n] = x;
		n++;
		s = end;
		if (!*s)
			break;
		if (*s++ != ',')
			goto bad;
	}
	if (n > 3)
		return spec_error(XO_EINVAL, origin, line,
		                  "reshape: target_shape=%s has rank %d; a sample has rank 1 to 3", val,
		                  n);
	l->target_rank = n;
	return XO_OK;
bad:
	return spec_error(XO_EINVAL, origin, line,
	                  "target_shape=%s: expected 1 to 3 positive integers or -1, e.g. "
	                  "target_shape=4,-1", val);
}

/* Applies one key=value argument of layer l. */
/* The wrappers' keys: layer= (the wrapped kind: time_distributed's Dense
 * or Conv1D, bidirectional's recurrent kinds) and bidirectional's
 * merge_mode= (Keras's names; None, two outputs, refused) */
static enum xo_status set_wrapper_arg(struct xo_layer_spec *l, const char *key, const char *val,
                                      const char *origin, int line)
{
	static const char *const modes[] = {"concat", "sum", "mul", "ave"};
	static const enum xo_merge as[] = {XO_MERGE_CONCATENATE, XO_MERGE_ADD, XO_MERGE_MULTIPLY,
	                                   XO_MERGE_AVERAGE};

	if (!strcmp(key, "layer") && l->kind != XO_LAYER_BIDIRECTIONAL) {
		if (!strcmp(val, "dense") || !strcmp(val, "Dense"))
			l->inner = XO_LAYER_DENSE;
		else if (!strcmp(val, "conv1d") || !strcmp(val, "Conv1D"))
			l->inner = XO_LAYER_CONV1D;
		else
			return spec_error(XO_EINVAL, origin, line,
			                  "layer=%s: TimeDistributed over %s is not supported "
			                  "(Dense or Conv1D)", val, val);
		return XO_OK;
	}
	if (!strcmp(key, "layer")) {
		for (int k = XO_LAYER_SIMPLE_RNN; k <= XO_LAYER_GRU; k++)
			if (!strcmp(val, xo_layer_kinds[k].spec) || !strcmp(val, xo_layer_kinds[k].keras))
				l->inner = k;
		if (l->inner < 0)
			return spec_error(XO_EINVAL, origin, line,
			                  "layer=%s: Bidirectional over %s is not supported "
			                  "(SimpleRNN, LSTM or GRU)", val, val);
		return XO_OK;
	}
	for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++)
		if (!strcmp(val, modes[k])) {
			l->p.mode = as[k];
			return XO_OK;
		}
	if (!strcmp(val, "None") || !strcmp(val, "none"))
		return spec_error(XO_EINVAL, origin, line,
		                  "merge_mode=None is not supported (Bidirectional then returns two "
		                  "tensors; concat, sum, mul or ave)");
	return spec_error(XO_EINVAL, origin, line, "merge_mode=%s: expected concat, sum, mul or ave",
	                  val);
}

/* The normalizations' axis, momentum and epsilon. */
static enum xo_status set_norm_arg(struct xo_layer_spec *l, const char *key, const char *val,
                                   const char *origin, int line)
{
	bool mom = !strcmp(key, "momentum");
	char *end;
	double r;
	int64_t v;

	if (!strcmp(key, "axis") && l->kind == XO_LAYER_CONCATENATE) {
		/* any axis of the sample, negative from the last (Keras's
		 * ops.concatenate); resolved against the rank when the shapes
		 * are known (shape_concatenate); 0 is the batch axis */
		if (!strcmp(val, "-1"))
			l->axis = 0;
		else if (!strcmp(val, "0"))
			return spec_error(XO_EINVAL, origin, line,
			                  "axis=0: the batch axis (Concatenate joins the samples' "
			                  "tensors along an axis of the sample)");
		else if (parse_pos_int(val, &v) && v <= 3)
			l->axis = (int)v;
		else if (val[0] == '-' && parse_pos_int(val + 1, &v) && v <= 4)
			l->axis = -(int)v;
		else
			return spec_error(XO_EINVAL, origin, line,
			                  "axis=%s: expected an axis of the sample (1 to 3, or -1 to "
			                  "-3 counting from the last)",
			                  val);
		return XO_OK;
	}
	if (!strcmp(key, "axis")) {
		/* -1, or a positive index checked against the input's rank
		 * when the shapes are known (axis_check) */
		if (!strcmp(val, "-1"))
			l->axis = 0;
		else if (parse_pos_int(val, &v) && v <= 3)
			l->axis = (int)v;
		else
			return spec_error(XO_EINVAL, origin, line,
			                  "axis=%s: only the last axis (-1, or its index) is supported",
			                  val);
		return XO_OK;
	}
	errno = 0;
	r = strtod(val, &end);
	/* Keras takes any positive epsilon; it is used as a float32, so one
	 * that rounds to 0 or to inf there is refused */
	if (errno == ERANGE && !mom && r == 0.0)
		errno = 0; /* an underflow: refused below as 0 in float32 */
	if (errno || end == val || *end || (mom && !(r >= 0.0 && r <= 1.0)))
		return spec_error(XO_EINVAL, origin, line, "%s=%s: expected a number in %s", key,
		                  val, mom ? "[0, 1]" : "(0, inf)");
	if (!mom && !((float)r > 0.0f && isfinite((float)r)))
		return spec_error(XO_EINVAL, origin, line,
		                  "%s=%s: expected a positive number, finite and not 0 as a float32",
		                  key, val);
	if (mom)
		l->p.momentum = (float)r;
	else
		l->p.epsilon = (float)r;
	return XO_OK;
}

static bool mha_key(const char *key)
{
	for (int i = 0; i < 6; i++) /* mha_args before use_bias: its own */
		if (!strcmp(key, mha_args[i]))
			return true;
	return false;
}

/* multi_head_attention's arguments: value_dim and output_shape None for
 * their defaults (key_dim; the query's features); dropout a rate in [0, 1)
 * (the attention op's, in training) */
static enum xo_status set_mha_arg(struct xo_params *p, const char *key, const char *val,
                                  const char *origin, int line)
{
	bool none = !strcmp(val, "None");
	int64_t v;

	if (!strcmp(key, "use_causal_mask")) {
		if (!parse_bool_value(val, &p->causal))
			return spec_error(XO_EINVAL, origin, line,
			                  "use_causal_mask=%s: expected True or False", val);
		return XO_OK;
	}
	if (!strcmp(key, "dropout")) {
		char *end;
		double r;

		errno = 0;
		r = strtod(val, &end);
		if (errno || end == val || *end || !(r >= 0.0 && r < 1.0))
			return spec_error(XO_EINVAL, origin, line,
			                  "dropout=%s: expected a number in [0, 1)", val);
		p->dropout = (float)r;
		return XO_OK;
	}
	if (none && (!strcmp(key, "value_dim") || !strcmp(key, "output_shape")))
		v = 0;
	else if (!parse_pos_int(val, &v) || v > XO_GEOMETRY_MAX)
		return spec_error(XO_EINVAL, origin, line, "%s=%s: expected a positive integer%s",
		                  key, val,
		                  !strcmp(key, "value_dim") || !strcmp(key, "output_shape")
		                      ? " or None"
		                      : "");
	if (!strcmp(key, "num_heads"))
		p->heads = v;
	else if (!strcmp(key, "key_dim"))
		p->key_dim = v;
	else if (!strcmp(key, "value_dim"))
		p->value_dim = v;
	else
		p->units = v; /* output_shape: the output's features */
	return XO_OK;
}

/* re_lu's arguments: Keras's relu(x, negative_slope, max_value, threshold)
 * is the relu op for max_value None and the relu6 op for 6 (Keras runs
 * its relu6 then), when negative_slope and threshold are 0; any other
 * value is a clip, a leak or a threshold no op implements: refused. */
static enum xo_status set_relu_arg(struct xo_params *p, const char *key, const char *val,
                                   const char *origin, int line)
{
	bool max = !strcmp(key, "max_value");
	char *end;
	double r;

	if (max && !strcmp(val, "None")) {
		p->activation = XO_ACTIVATION_RELU;
		return XO_OK;
	}
	errno = 0;
	r = strtod(val, &end);
	if (errno || end == val || *end || !(r >= 0.0) || !isfinite(r))
		return spec_error(XO_EINVAL, origin, line, "%s=%s: expected a number >= 0%s", key,
		                  val, max ? " or None" : "");
	if (max && r == 6.0)
		p->activation = XO_ACTIVATION_RELU6;
	else if (max)
		return spec_error(XO_EINVAL, origin, line,
		                  "re_lu: max_value=%s is not supported (None: relu, 6: relu6)",
		                  val);
	else if (r != 0.0)
		return spec_error(XO_EINVAL, origin, line,
		                  "re_lu: %s=%s is not supported (only 0)", key, val);
	return XO_OK;
}

/* masking's mask_value: a finite float32 (Keras compares the input with it
 * in float32; NaN would keep every step, an infinity is refused too) */
static enum xo_status set_mask_value(struct xo_params *p, const char *val, const char *origin,
                                     int line)
{
	char *end;
	double mv;

	errno = 0;
	mv = strtod(val, &end);
	if (errno || end == val || *end || !isfinite(mv) || fabs(mv) > FLT_MAX)
		return spec_error(XO_EINVAL, origin, line,
		                  "mask_value=%s: expected a finite number (float32)", val);
	p->mask_value = (float)mv;
	return XO_OK;
}

/* A layer's float argument: one whole number whose float32 value (Keras
 * casts it so) is finite; *r the number as written, *f its float32. */
static bool parse_finite_f32(const char *val, double *r, float *f)
{
	char *end;

	errno = 0;
	*r = strtod(val, &end);
	*f = (float)*r;
	return !errno && end != val && !*end && isfinite(*r) && isfinite(*f);
}

/* rescaling's scale and offset: finite numbers, kept as the float32 values
 * Keras casts them to; one for every channel (Keras's per-channel lists
 * refused) */
static enum xo_status set_rescaling_arg(struct xo_params *p, const char *key, const char *val,
                                        const char *origin, int line)
{
	double r;
	float f;

	if (!parse_finite_f32(val, &r, &f))
		return spec_error(XO_EINVAL, origin, line,
		                  "%s=%s: expected a finite number (one for every channel: "
		                  "per-channel lists are not supported)",
		                  key, val);
	if (!strcmp(key, "scale"))
		p->multiplier = f;
	else
		p->offset = f;
	return XO_OK;
}

/* normalization's mean= and variance= (finite numbers, kept as the float32
 * values Keras casts them to; a negative variance is refused: Keras's root
 * of it is NaN) and invert= (True: the op's inverse, y = mean + x * den) */
static enum xo_status set_normalization_arg(struct xo_layer_spec *l, const char *key,
                                            const char *val, const char *origin, int line)
{
	double r;
	float f;

	if (!strcmp(key, "invert")) {
		if (!parse_bool_value(val, &l->p.invert))
			return spec_error(XO_EINVAL, origin, line, "invert=%s: expected True or False",
			                  val);
		return XO_OK;
	}
	if (!parse_finite_f32(val, &r, &f))
		return spec_error(XO_EINVAL, origin, line,
		                  "%s=%s: expected a finite number (one for every channel: "
		                  "per-channel lists are not supported)",
		                  key, val);
	if (!strcmp(key, "mean")) {
		l->norm_mean = f;
		l->norm_given = true;
	} else {
		if (r < 0.0)
			return spec_error(XO_EINVAL, origin, line,
			                  "variance=%s: a variance must be >= 0 (Keras's root of a "
			                  "negative one is NaN)",
			                  val);
		l->norm_var = f;
	}
	return XO_OK;
}

/* leaky_re_lu's negative_slope (or alpha): a finite number >= 0, as Keras's
 * LeakyReLU requires (it refuses a negative slope; xo a non-finite one,
 * which would make every negative input NaN or infinite), kept as the
 * float32 value Keras computes with */
static enum xo_status set_leaky_relu_arg(struct xo_params *p, const char *key, const char *val,
                                         const char *origin, int line)
{
	double r;
	float f;

	if (!parse_finite_f32(val, &r, &f) || !(r >= 0.0))
		return spec_error(XO_EINVAL, origin, line,
		                  "leaky_re_lu: %s=%s: expected a finite number >= 0", key, val);
	p->negative_slope = f;
	return XO_OK;
}

/* elu's alpha: any finite number as float32, as Keras takes it (a negative
 * alpha makes y > 0 on both sides of 0; the elu op's backward takes x). */
static enum xo_status set_elu_arg(struct xo_params *p, const char *val, const char *origin,
                                  int line)
{
	double r;
	float f;

	if (!parse_finite_f32(val, &r, &f))
		return spec_error(XO_EINVAL, origin, line, "elu: alpha=%s: expected a finite number",
		                  val);
	p->alpha = f;
	return XO_OK;
}

/* The arguments of a kind whose names other kinds read otherwise (scale,
 * the normalizations' flag; negative_slope, re_lu's refusal) or that only
 * it takes (Normalization's mean, variance and invert: all but axis; the
 * global poolings' keepdims). */
static bool own_arg(enum xo_layer_kind kind, const char *key)
{
	if (kind == XO_LAYER_RESCALING)
		return !strcmp(key, "scale") || !strcmp(key, "offset");
	if (kind == XO_LAYER_LEAKY_RE_LU)
		return !strcmp(key, "negative_slope") || !strcmp(key, "alpha");
	if (kind == XO_LAYER_ELU)
		return !strcmp(key, "alpha");
	if (kind == XO_LAYER_NORMALIZATION)
		return strcmp(key, "axis") != 0;
	if (kind == XO_LAYER_GLOBAL_AVERAGE_POOLING1D || kind == XO_LAYER_GLOBAL_MAX_POOLING1D ||
	    kind == XO_LAYER_GLOBAL_AVERAGE_POOLING2D || kind == XO_LAYER_GLOBAL_MAX_POOLING2D)
		return !strcmp(key, "keepdims");
	return false;
}

/* An argument own_arg says is the kind's own, set by the kind's parser. */
static enum xo_status set_own_arg(struct xo_layer_spec *l, const char *key, const char *val,
                                  const char *origin, int line)
{
	if (!strcmp(key, "keepdims")) {
		if (!parse_bool_value(val, &l->keepdims))
			return spec_error(XO_EINVAL, origin, line, "keepdims=%s: expected True or False",
			                  val);
		return XO_OK;
	}
	if (l->kind == XO_LAYER_RESCALING)
		return set_rescaling_arg(&l->p, key, val, origin, line);
	if (l->kind == XO_LAYER_ELU)
		return set_elu_arg(&l->p, val, origin, line);
	if (l->kind == XO_LAYER_NORMALIZATION)
		return set_normalization_arg(l, key, val, origin, line);
	return set_leaky_relu_arg(&l->p, key, val, origin, line);
}

static enum xo_status set_arg(struct xo_layer_spec *l, const char *key, const char *val,
                              const char *origin, int line, bool *named)
{
	struct xo_params *p = &l->p;
	int64_t v;

	if (!strcmp(key, "name")) {
		if (!valid_name(val))
			return spec_error(XO_EINVAL, origin, line,
			                  "bad layer name '%s' (letters, digits, _ - . only)", val);
		if (!strcmp(val, "input"))
			return spec_error(XO_EINVAL, origin, line,
			                  "name=input: 'input' names the model input in inputs= "
			                  "(pick another layer name)");
		snprintf(l->name, sizeof(l->name), "%s", val);
		*named = true;
		return XO_OK;
	}
	if (!strcmp(key, "filters") || !strcmp(key, "kernel_size") || !strcmp(key, "strides") ||
	    !strcmp(key, "dilation_rate") || !strcmp(key, "pool_size") || !strcmp(key, "units") ||
	    !strcmp(key, "pool_w") || !strcmp(key, "strides_w") || !strcmp(key, "kernel_w") ||
	    !strcmp(key, "dilation_w") || !strcmp(key, "size") || !strcmp(key, "size_w") ||
	    !strcmp(key, "n") || !strcmp(key, "depth_multiplier"))
		return set_int_arg(p, key, val, origin, line);
	if (!strcmp(key, "output_padding") || !strcmp(key, "output_padding_w"))
		return set_output_padding(p, key, val, origin, line);
	if (!strcmp(key, "input_dim") || !strcmp(key, "output_dim")) {
		/* ids travel as float values through the model's x arrays
		 * (exact up to 2^24) and as int32 on the device */
		if (!parse_pos_int(val, &v) || v > (INT64_C(1) << 24))
			return spec_error(XO_EINVAL, origin, line,
			                  "%s=%s: expected a positive integer up to 2^24 = 16777216",
			                  key, val);
		if (!strcmp(key, "input_dim"))
			p->rows = v;
		else
			p->ch = v;
		return XO_OK;
	}
	if (!strcmp(key, "mask_value"))
		return set_mask_value(p, val, origin, line);
	if (!strcmp(key, "interpolation")) {
		if (strcmp(val, "nearest"))
			return spec_error(XO_EINVAL, origin, line,
			                  "interpolation=%s is not supported (only nearest)", val);
		return XO_OK;
	}
	if (!strcmp(key, "mask_zero")) {
		bool on;

		if (!parse_bool_value(val, &on))
			return spec_error(XO_EINVAL, origin, line,
			                  "mask_zero=%s: expected True or False", val);
		p->mask_zero = on;
		return XO_OK;
	}
	if (!strcmp(key, "layer") || !strcmp(key, "merge_mode"))
		return set_wrapper_arg(l, key, val, origin, line);
	if (!strcmp(key, "dims"))
		return set_dims(p, val, origin, line);
	if (!strcmp(key, "target_shape"))
		return set_target(l, val, origin, line);
	if ((!strcmp(key, "padding") && xo_layer_kinds[l->kind].op == XO_OP_pad) ||
	    !strcmp(key, "cropping"))
		return set_margins(l, key, val, origin, line);
	if (!strcmp(key, "padding")) {
		if (!strcmp(val, "valid"))
			p->padding = XO_PADDING_VALID;
		else if (!strcmp(val, "same"))
			p->padding = XO_PADDING_SAME;
		else if (!strcmp(val, "causal") && l->kind == XO_LAYER_CONV1D)
			p->padding = XO_PADDING_CAUSAL;
		else if (!strcmp(val, "causal") && l->kind == XO_LAYER_TIME_DISTRIBUTED)
			return spec_error(XO_EINVAL, origin, line,
			                  "padding=causal is not supported for time_distributed over "
			                  "conv1d (valid or same)");
		else
			return spec_error(XO_EINVAL, origin, line, "padding=%s: expected %s", val,
			                  l->kind == XO_LAYER_CONV1D ? "valid, same or causal"
			                                             : "valid or same");
		return XO_OK;
	}
	if (!strcmp(key, "activation") || !strcmp(key, "recurrent_activation")) {
		if (!strcmp(val, "None") || !strcmp(val, "none"))
			val = "linear";
		if (!strcmp(val, "swish")) /* Keras 3's alias; it writes "silu" */
			val = "silu";
		for (int a = 0; a <= XO_ACTIVATION_LAST; a++)
			if (!strcmp(val, xo_activation_name((enum xo_activation)a))) {
				if (!strcmp(key, "activation"))
					p->activation = (enum xo_activation)a;
				else
					p->recurrent_activation = (enum xo_activation)a;
				return XO_OK;
			}
		return spec_error(XO_EINVAL, origin, line,
		                  "activation=%s: expected None, linear, relu, sigmoid, softmax, "
		                  "tanh, elu, gelu, softplus, relu6, hard_sigmoid, silu (swish), "
		                  "log_softmax or leaky_relu",
		                  val);
	}
	if (!strcmp(key, "use_bias")) {
		if (!parse_bool_value(val, &p->use_bias))
			return spec_error(XO_EINVAL, origin, line,
			                  "use_bias=%s: expected True or False", val);
		return XO_OK;
	}
	if (!strcmp(key, "return_sequences") || !strcmp(key, "go_backwards") ||
	    !strcmp(key, "reset_after") || !strcmp(key, "zero_output_for_mask")) {
		bool *b = !strcmp(key, "return_sequences") ? &p->return_sequences
		          : !strcmp(key, "go_backwards")   ? &p->go_backwards
		          : !strcmp(key, "reset_after")    ? &p->reset_after
		                                           : &p->zero_output_for_mask;

		if (!parse_bool_value(val, b))
			return spec_error(XO_EINVAL, origin, line, "%s=%s: expected True or False",
			                  key, val);
		return XO_OK;
	}
	if (own_arg(l->kind, key))
		return set_own_arg(l, key, val, origin, line);
	if (!strcmp(key, "center") || !strcmp(key, "scale")) {
		if (!parse_bool_value(val, !strcmp(key, "center") ? &p->center : &p->scale))
			return spec_error(XO_EINVAL, origin, line, "%s=%s: expected True or False",
			                  key, val);
		return XO_OK;
	}
	if (!strcmp(key, "axis") || !strcmp(key, "momentum") || !strcmp(key, "epsilon"))
		return set_norm_arg(l, key, val, origin, line);
	if (!strcmp(key, "max_value") || !strcmp(key, "negative_slope") ||
	    !strcmp(key, "threshold"))
		return set_relu_arg(p, key, val, origin, line);
	if (mha_key(key))
		return set_mha_arg(p, key, val, origin, line);
	if (!strcmp(key, "rate")) {
		char *end;
		double r;

		errno = 0;
		r = strtod(val, &end);
		if (errno || end == val || *end || !(r >= 0.0 && r < 1.0))
			return spec_error(XO_EINVAL, origin, line,
			                  "rate=%s: expected a number in [0, 1)", val);
		p->rate = (float)r;
		return XO_OK;
	}
	return spec_error(XO_EFORMAT, origin, line, "unknown argument '%s'", key);
}

/* The input shape of l as "[h][w][ch]", "[len][ch]" or "[ch]" (messages). */
static const char *in_shape_text(const struct xo_layer_spec *l, char *buf, size_t size)
{
	if (l->in_rank == 3)
		snprintf(buf, size, "[%" PRId64 "][%" PRId64 "][%" PRId64 "]", l->in_len, l->in_w,
		         l->in_ch);
	else if (l->in_rank == 2)
		snprintf(buf, size, "[%" PRId64 "][%" PRId64 "]", l->in_len, l->in_ch);
	else
		snprintf(buf, size, "a flat [%" PRId64 "]", l->in_ch);
	return buf;
}

/* The layer's input rank is not the one its kind needs: the error naming
 * both (rank 2: [steps][channels], rank 3: [height][width][channels]). */
static enum xo_status rank_error(const struct xo_layer_spec *l, const char *origin, int rank)
{
	char shp[96];

	return spec_error(XO_EINVAL, origin, l->line, "%s needs a %s input, got %s",
	                  xo_spec_kind_name(l->kind),
	                  rank == 3 ? "[height][width][channels]" : "[steps][channels]",
	                  in_shape_text(l, shp, sizeof(shp)));
}

/* embedding: ids [T] of an int32 input (checked by the caller) -> [T][dim] */
static enum xo_status shape_embedding(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;
	char shp[96];

	if (l->in_rank != 1)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "embedding needs a flat [T] input of ids, got %s",
		                  in_shape_text(l, shp, sizeof(shp)));
	p->len = l->in_ch;
	l->out_w = 1;
	l->out_rank = 2;
	l->out_len = l->in_ch;
	l->out_ch = p->ch;
	l->w_ndim = 2;
	l->w_dim[0] = p->rows;
	l->w_dim[1] = p->ch;
	return XO_OK;
}

/* conv1d */
static enum xo_status shape_conv1d(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;
	enum xo_status st;
	int64_t out = 0, pad = 0;
	char shp[96];

	if (l->in_rank != 2)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "conv1d needs a [steps][channels] input, got %s (input "
		                  "LEN CH, or no flatten before)",
		                  in_shape_text(l, shp, sizeof(shp)));
	st = xo_conv1d_geometry(p, &out, &pad);
	if (st)
		return spec_error(st, origin, l->line, "%s", xo_last_error());
	l->out_rank = 2;
	l->out_len = out;
	l->out_ch = p->filters;
	l->w_ndim = 3;
	l->w_dim[0] = p->kernel_size;
	l->w_dim[1] = l->in_ch;
	l->w_dim[2] = p->filters;
	l->b_count = p->use_bias ? p->filters : 0;
	return XO_OK;
}

/* conv2d */
static enum xo_status shape_conv2d(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;
	enum xo_status st;
	int64_t oh, ow, pt, pl;

	if (l->in_rank != 3)
		return rank_error(l, origin, 3);
	p->width = l->in_w;
	st = xo_conv2d_geometry(p, &oh, &ow, &pt, &pl);
	if (st)
		return spec_error(st, origin, l->line, "%s", xo_last_error());
	l->out_rank = 3;
	l->out_len = oh;
	l->out_w = ow;
	l->out_ch = p->filters;
	l->w_ndim = 4; /* Keras's [kh][kw][in_ch][filters] */
	l->w_dim[0] = p->kernel_size;
	l->w_dim[1] = xo_params_width_axis(p).kernel_size;
	l->w_dim[2] = l->in_ch;
	l->w_dim[3] = p->filters;
	l->b_count = p->use_bias ? p->filters : 0;
	return XO_OK;
}

/* conv2d_transpose: its own geometry (xo_conv2d_transpose_geometry: Keras's
 * output rule, dilation 1); Keras's kernel [kh][kw][filters][in_ch].
 * conv1d_transpose: the same op on one column (width, kernel_w, strides_w
 * 1, its output_padding 0 or None), Keras's kernel [k][filters][in_ch] */
static enum xo_status shape_conv2d_transpose(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;
	bool one_d = l->kind == XO_LAYER_CONV1D_TRANSPOSE;
	enum xo_status st;
	int64_t oh, ow, pt, pl;

	if (l->in_rank != (one_d ? 2 : 3))
		return rank_error(l, origin, one_d ? 2 : 3);
	if (one_d) {
		p->kernel_w = p->strides_w = p->dilation_w = 1;
		p->output_padding_w = p->output_padding >= 0 ? 0 : -1;
	}
	/* Keras's output_padding is None or a pair (an int is both axes) */
	if (p->output_padding >= 0 && p->output_padding_w < 0)
		p->output_padding_w = p->output_padding;
	else if (p->output_padding < 0 && p->output_padding_w >= 0)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "conv2d_transpose: output_padding_w=%" PRId64
		                  " without output_padding (Keras's output_padding is None or "
		                  "a pair)",
		                  p->output_padding_w);
	p->width = l->in_w;
	/* a 1-D layer's refusals name its own kind and keys, not the 2-D op's
	 * it runs as */
	if (one_d && p->dilation_rate != 1)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "conv1d_transpose: dilation_rate=%" PRId64
		                  " is not supported (1 only)",
		                  p->dilation_rate);
	st = xo_conv2d_transpose_geometry(p, &oh, &ow, &pt, &pl);
	if (st && one_d && !strncmp(xo_last_error(), "conv2d_transpose: ", 18))
		return spec_error(st, origin, l->line, "conv1d_transpose: %s", xo_last_error() + 18);
	if (st)
		return spec_error(st, origin, l->line, "%s", xo_last_error());
	l->out_rank = one_d ? 2 : 3;
	l->out_len = oh;
	l->out_w = ow;
	l->out_ch = p->filters;
	l->w_ndim = one_d ? 3 : 4;
	l->w_dim[0] = p->kernel_size;
	l->w_dim[one_d ? 1 : 2] = p->filters;
	l->w_dim[one_d ? 2 : 3] = l->in_ch;
	if (!one_d)
		l->w_dim[1] = xo_params_width_axis(p).kernel_size;
	l->b_count = p->use_bias ? p->filters : 0;
	return XO_OK;
}

/* depthwise_conv2d: conv2d's geometry (dilation 1), ch * depth_multiplier
 * outputs; Keras's kernel [kh][kw][in_ch][depth_multiplier].
 * depthwise_conv1d: the same op on one column (width, kernel_w and
 * strides_w 1), Keras's kernel [k][in_ch][depth_multiplier] */
static enum xo_status shape_depthwise(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;
	bool one_d = l->kind == XO_LAYER_DEPTHWISE_CONV1D || l->kind == XO_LAYER_SEPARABLE_CONV1D;
	enum xo_status st;
	int64_t oh, ow, pt, pl, co;

	if (l->in_rank != (one_d ? 2 : 3))
		return rank_error(l, origin, one_d ? 2 : 3);
	p->width = l->in_w;
	if (one_d)
		p->kernel_w = p->strides_w = p->dilation_w = 1;
	/* the refusals name the layer's own kind (and a 1-D layer's own keys),
	 * not the depthwise_conv2d op it runs as */
	if (one_d && p->dilation_rate != 1)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s: dilation_rate=%" PRId64 " is not supported (1 only)",
		                  xo_spec_kind_name(l->kind), p->dilation_rate);
	st = xo_depthwise_conv2d_geometry(p, &oh, &ow, &pt, &pl);
	if (st && !strncmp(xo_last_error(), "depthwise_conv2d: ", 18))
		return spec_error(st, origin, l->line, "%s: %s", xo_spec_kind_name(l->kind),
		                  xo_last_error() + 18);
	if (st)
		return spec_error(st, origin, l->line, "%s", xo_last_error());
	if (!xo_mul_ok(l->in_ch, p->depth_multiplier, &co) || co > XO_GEOMETRY_MAX)
		return spec_error(XO_EOVERFLOW, origin, l->line,
		                  "%s: channels * depth_multiplier is above %" PRId64,
		                  xo_spec_kind_name(l->kind), XO_GEOMETRY_MAX);
	l->out_rank = one_d ? 2 : 3;
	l->out_len = oh;
	l->out_w = ow;
	l->out_ch = co;
	l->w_ndim = one_d ? 3 : 4;
	l->w_dim[0] = p->kernel_size;
	l->w_dim[1] = xo_params_width_axis(p).kernel_size;
	l->w_dim[one_d ? 1 : 2] = l->in_ch;
	l->w_dim[one_d ? 2 : 3] = p->depth_multiplier;
	l->b_count = p->use_bias ? co : 0;
	return XO_OK;
}

/* separable_conv2d (and separable_conv1d on one column):
 * depthwise_conv2d's shape rule for its depthwise kernel,
 * then a 1x1 pointwise kernel [in_ch * dm][filters] (rk_count) to filters
 * outputs, the bias [filters]; its activation runs fused into the pointwise
 * op (linear, relu, sigmoid, softmax: the others are refused) */
static enum xo_status shape_separable(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;
	enum xo_status st = shape_depthwise(l, origin);

	if (st)
		return st;
	if ((unsigned)p->activation > XO_ACTIVATION_FUSED_LAST)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s: activation=%s is not supported (linear, relu, sigmoid or "
		                  "softmax)",
		                  xo_spec_kind_name(l->kind), xo_activation_name(p->activation));
	if (!xo_mul_ok(l->out_ch, p->filters, &l->rk_count) || l->rk_count > (INT64_C(1) << 40))
		return spec_error(XO_EOVERFLOW, origin, l->line, "kernel size overflows");
	l->out_ch = p->filters;
	l->b_count = p->use_bias ? p->filters : 0;
	return XO_OK;
}

/* max_pooling1d, average_pooling1d */
static enum xo_status shape_pool1d(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;
	enum xo_status st;
	int64_t out = 0, pad = 0;

	if (l->in_rank != 2)
		return rank_error(l, origin, 2);
	st = xo_pool1d_geometry_of(l->kind == XO_LAYER_MAX_POOLING1D
	                               ? XO_OP_max_pooling1d
	                               : XO_OP_average_pooling1d,
	                           p, &out, &pad);
	if (st)
		return spec_error(st, origin, l->line, "%s", xo_last_error());
	l->out_rank = 2;
	l->out_len = out;
	l->out_ch = l->in_ch;
	return XO_OK;
}

/* global_average_pooling1d, global_max_pooling1d */
static enum xo_status shape_global_pool1d(struct xo_layer_spec *l, const char *origin)
{
	if (l->in_rank != 2)
		return rank_error(l, origin, 2);
	l->out_rank = l->keepdims ? 2 : 1; /* [1][ch] or [ch]: the same values */
	l->out_len = 1;
	l->out_ch = l->in_ch;
	return XO_OK;
}

/* max_pooling2d, average_pooling2d */
static enum xo_status shape_pool2d(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;
	enum xo_status st;
	struct xo_pool2d_geom g;

	if (l->in_rank != 3)
		return rank_error(l, origin, 3);
	p->width = l->in_w;
	st = xo_pool2d_geometry_of(l->kind == XO_LAYER_MAX_POOLING2D
	                               ? XO_OP_max_pooling2d
	                               : XO_OP_average_pooling2d,
	                           p, &g);
	if (st)
		return spec_error(st, origin, l->line, "%s", xo_last_error());
	l->out_rank = 3;
	l->out_len = g.out_h;
	l->out_w = g.out_w;
	l->out_ch = l->in_ch;
	return XO_OK;
}

/* global_average_pooling2d, global_max_pooling2d */
static enum xo_status shape_global_pool2d(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;

	if (l->in_rank != 3)
		return rank_error(l, origin, 3);
	p->width = l->in_w;
	l->out_rank = l->keepdims ? 3 : 1; /* [1][1][ch] or [ch]: the same values */
	l->out_len = 1;
	l->out_ch = l->in_ch;
	return XO_OK;
}

/* flatten */
static enum xo_status shape_flatten(struct xo_layer_spec *l, const char *origin)
{
	int64_t n;

	l->out_rank = 1;
	l->out_len = 1;
	if (!xo_mul_ok(l->in_len, l->in_w, &n) || !xo_mul_ok(n, l->in_ch, &l->out_ch))
		return spec_error(XO_EOVERFLOW, origin, l->line, "flatten: size overflows");
	return XO_OK;
}

/* dropout, activation */
static enum xo_status shape_elementwise(struct xo_layer_spec *l, const char *origin)
{
	(void)origin; /* elementwise: any rank, the shape kept; nothing to refuse */
	l->out_rank = l->in_rank;
	l->out_len = l->in_len;
	l->out_w = l->in_w;
	l->out_ch = l->in_ch;
	return XO_OK;
}

/* batch_normalization: statistics per channel (the last axis) */
/* A normalization's axis given as a positive index (Keras normalizes it
 * against the input's rank, the batch axis counted): the last axis only. */
static enum xo_status axis_check(const struct xo_layer_spec *l, const char *origin)
{
	if (l->axis == 0 || l->axis == l->in_rank)
		return XO_OK;
	return spec_error(XO_EINVAL, origin, l->line,
	                  "axis=%d: only the last axis (-1, or %d for this rank-%d input) is "
	                  "supported",
	                  l->axis, l->in_rank, l->in_rank + 1);
}

/* masking: a float sequence [T][F], the shape kept (its keep flags are per
 * step: Keras's mask of a rank-2 sample) */
static enum xo_status shape_masking(struct xo_layer_spec *l, const char *origin)
{
	if (l->in_rank != 2)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "masking needs a [steps][features] input (got rank %d)",
		                  l->in_rank);
	return shape_elementwise(l, origin);
}

/* softmax: over the last axis, the shape kept */
static enum xo_status shape_softmax(struct xo_layer_spec *l, const char *origin)
{
	if (axis_check(l, origin))
		return XO_EINVAL;
	return shape_elementwise(l, origin);
}

static enum xo_status shape_batch_normalization(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;

	if (axis_check(l, origin))
		return XO_EINVAL; /* any rank: nothing else to refuse */
	l->out_rank = l->in_rank;
	l->out_len = l->in_len;
	l->out_w = l->in_w;
	l->out_ch = l->in_ch;
	l->gamma_count = p->scale ? l->in_ch : 0;
	l->beta_count = p->center ? l->in_ch : 0;
	l->state_count = 2 * l->in_ch;
	return XO_OK;
}

/* normalization: per channel (the last axis), any rank; mean and variance
 * the state (ch each), given in the config (both: Keras's rule) or adapted */
static enum xo_status shape_normalization(struct xo_layer_spec *l, const char *origin)
{
	if (axis_check(l, origin))
		return XO_EINVAL;
	if (l->norm_given != (l->norm_var >= 0.0f))
		return spec_error(XO_EINVAL, origin, l->line,
		                  "normalization: mean and variance must be given together "
		                  "(or neither: adapted, read from its weights)");
	l->out_rank = l->in_rank;
	l->out_len = l->in_len;
	l->out_w = l->in_w;
	l->out_ch = l->in_ch;
	l->state_count = 2 * l->in_ch;
	return XO_OK;
}

/* layer_normalization: statistics per position over the last axis; any
 * rank (a Dense's [units] too); gamma and beta per channel, no state */
static enum xo_status shape_layer_normalization(struct xo_layer_spec *l, const char *origin)
{
	if (axis_check(l, origin))
		return XO_EINVAL; /* nothing else to refuse */
	l->out_rank = l->in_rank;
	l->out_len = l->in_len;
	l->out_w = l->in_w;
	l->out_ch = l->in_ch;
	l->gamma_count = l->p.scale ? l->in_ch : 0;
	l->beta_count = l->p.center ? l->in_ch : 0;
	return XO_OK;
}

/* dense: Keras's Dense acts on the last axis of a sample of any rank
 * (y[..., u] = sum_f x[..., f] W[f][u] + b[u]), keeping the leading axes;
 * the kernel is [F][units] whatever the rank */
static enum xo_status shape_dense(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;

	(void)origin; /* units >= 1 is needs_units' check; nothing else to refuse */
	l->out_rank = l->in_rank;
	l->out_len = l->in_len;
	l->out_w = l->in_w;
	l->out_ch = p->units;
	l->w_ndim = 2;
	l->w_dim[0] = l->in_ch;
	l->w_dim[1] = p->units;
	l->b_count = p->use_bias ? p->units : 0;
	return XO_OK;
}

/* simple_rnn, lstm, gru */
static enum xo_status shape_rnn(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;
	enum xo_status st;
	enum xo_op op = xo_layer_rnn_op(l->kind);
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
	int64_t gu;

	if (l->in_rank != 2)
		return rank_error(l, origin, 2);
	p->batch = 1;
	/* the op's own checks (activations, sizes), with its message */
	st = xo_op_shapes(op, XO_DIR_FWD, p, ss, ds);
	if (st)
		return spec_error(st, origin, l->line, "%s", xo_last_error());
	gu = xo_rnn_gates(op) * p->units;
	l->out_rank = p->return_sequences ? 2 : 1;
	l->out_len = p->return_sequences ? l->in_len : 1;
	l->out_ch = p->units;
	l->w_ndim = 2;
	l->w_dim[0] = l->in_ch;
	l->w_dim[1] = gu;
	if (!xo_mul_ok(p->units, gu, &l->rk_count))
		return spec_error(XO_EOVERFLOW, origin, l->line, "recurrent kernel overflows");
	l->b_count = !p->use_bias ? 0 : op == XO_OP_gru && p->reset_after ? 2 * gu : gu;
	return XO_OK;
}

/* time_distributed: Keras applies the wrapped layer to each step of the
 * sample's first axis. Over Dense that is Dense on the last axis (any
 * rank >= 2); over Conv1D on [T][len][ch] it is a conv2d with a (1, k)
 * kernel, stride (1, s) and dilation (1, d): the Conv1D's geometry moves to
 * the width axis (the conv1d check first, so its errors name Conv1D's
 * keys), and the kernel is [1][k][in][filters], the Conv1D's bytes */
static enum xo_status shape_time_distributed(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p, q;
	enum xo_status st;
	int64_t out = 0, pad = 0;
	char shp[96];

	if (l->in_rank < 2)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "time_distributed needs a sample with a time axis ([T][features] "
		                  "or [T][len][channels]), got %s",
		                  in_shape_text(l, shp, sizeof(shp)));
	if (l->inner == XO_LAYER_DENSE)
		return shape_dense(l, origin);
	if (l->in_rank != 3)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "time_distributed over conv1d needs a [T][len][channels] input, "
		                  "got %s",
		                  in_shape_text(l, shp, sizeof(shp)));
	q = *p;
	q.len = l->in_w;
	st = xo_conv1d_geometry(&q, &out, &pad);
	if (st)
		return spec_error(st, origin, l->line, "%s", xo_last_error());
	p->kernel_w = p->kernel_size;
	p->strides_w = xo_conv1d_stride(p);
	p->dilation_w = p->dilation_rate;
	p->kernel_size = p->strides = p->dilation_rate = 1;
	return shape_conv2d(l, origin);
}

/* bidirectional: the wrapped kind's shape rule (its checks and messages)
 * for one direction; the variables are two sets of its own (kernel
 * [2][ch][g*u]: the forward direction's, then the backward's; the
 * recurrent kernels and biases likewise), the output the merge's: 2 units
 * per step for concat, units for the others */
static enum xo_status shape_bidirectional(struct xo_layer_spec *l, const char *origin)
{
	enum xo_layer_kind kind = l->kind;
	enum xo_status st;

	/* Keras builds the backward layer with go_backwards=True: a wrapped
	 * layer going backwards too is refused there (bidirectional.py,
	 * _verify_layer_config) */
	if (l->p.go_backwards)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "go_backwards=True is not supported for bidirectional (its "
		                  "backward layer goes backwards; both would)");
	if (l->in_rank != 2)
		return rank_error(l, origin, 2);
	/* bidirectional.py force_zero_output_for_mask: both directions' masked
	 * steps output 0 when returning sequences, whatever the wrapped
	 * layer's config says */
	l->p.zero_output_for_mask = l->p.return_sequences;
	l->kind = (enum xo_layer_kind)l->inner;
	st = shape_rnn(l, origin);
	l->kind = kind;
	if (st)
		return st;
	l->w_ndim = 3;
	l->w_dim[2] = l->w_dim[1];
	l->w_dim[1] = l->w_dim[0];
	l->w_dim[0] = 2;
	l->rk_count *= 2;
	l->b_count *= 2;
	if (l->p.mode == XO_MERGE_CONCATENATE)
		l->out_ch *= 2;
	return XO_OK;
}

/* The resize family's ops (pad, up_sampling, permute) on one sample of
 * p.len x p.width x p.ch: the output shape by the op's own shape rule (its
 * limits and messages), as a sample of rank 2 ([len][ch]) or 3. */
static enum xo_status resize_out(struct xo_layer_spec *l, const char *origin, enum xo_op op,
                                 int rank)
{
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
	enum xo_status st;

	l->p.batch = 1;
	st = xo_op_shapes(op, XO_DIR_FWD, &l->p, ss, ds);
	if (st)
		return spec_error(st, origin, l->line, "%s", xo_last_error());
	l->out_rank = rank;
	l->out_len = ds[0].dim[1];
	l->out_w = rank == 3 ? ds[0].dim[2] : 1;
	l->out_ch = ds[0].dim[3];
	return XO_OK;
}

/* zero_padding1d, cropping1d: [T][ch] -> [T + begin + end][ch] (cropping's
 * margins negative); a crop that leaves no step refused as Keras words it;
 * the op's own limits */
static enum xo_status shape_pad1d(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;

	if (l->in_rank != 2)
		return rank_error(l, origin, 2);
	if (p->pad_begin <= 0 && p->pad_end <= 0 && l->in_len + p->pad_begin + p->pad_end < 1)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s: cropping (%" PRId64 ", %" PRId64 ") must be smaller than the "
		                  "input length %" PRId64,
		                  xo_spec_kind_name(l->kind), -p->pad_begin, -p->pad_end,
		                  l->in_len);
	p->width = 1;
	return resize_out(l, origin, XO_OP_pad, 2);
}

/* up_sampling1d: [T][ch] -> [T * size][ch]; the op's own limits */
static enum xo_status shape_up1d(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;

	if (l->in_rank != 2)
		return rank_error(l, origin, 2);
	p->width = 1;
	p->repeats_w = 1;
	return resize_out(l, origin, XO_OP_up_sampling, 2);
}

/* zero_padding2d, cropping2d: [h][w][ch] -> [h + top + bottom][w + left +
 * right][ch] (cropping's margins negative); a crop that leaves no row or
 * column refused as Keras words it; the op's own limits */
static enum xo_status shape_pad2d(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;

	if (l->in_rank != 3)
		return rank_error(l, origin, 3);
	if (p->pad_begin <= 0 && p->pad_end <= 0 && p->pad_begin_w <= 0 && p->pad_end_w <= 0 &&
	    (l->in_len + p->pad_begin + p->pad_end < 1 ||
	     l->in_w + p->pad_begin_w + p->pad_end_w < 1))
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s: cropping ((%" PRId64 ", %" PRId64 "), (%" PRId64 ", %" PRId64
		                  ")) must be smaller than the input's height %" PRId64
		                  " and width %" PRId64,
		                  xo_spec_kind_name(l->kind), -p->pad_begin, -p->pad_end,
		                  -p->pad_begin_w, -p->pad_end_w, l->in_len, l->in_w);
	p->batch = 1;
	p->width = l->in_w;
	return resize_out(l, origin, XO_OP_pad, 3);
}

/* up_sampling2d: [h][w][ch] -> [h * size][w * size_w][ch] (size_w 0: as size) */
static enum xo_status shape_up2d(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;

	if (l->in_rank != 3)
		return rank_error(l, origin, 3);
	p->batch = 1;
	p->width = l->in_w;
	if (!p->repeats_w)
		p->repeats_w = p->repeats;
	return resize_out(l, origin, XO_OP_up_sampling, 3);
}

/* permute: the sample's axes reordered; dims as many entries as the input's
 * rank (2: [T][ch], 3: [h][w][ch]); the op's own limits */
static enum xo_status shape_permute(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;
	int rank = p->dims < 100 ? 2 : 3;
	char shp[96];

	if (l->in_rank != rank)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "permute: dims=%" PRId64 " orders %d axes; the input %s has %d",
		                  p->dims, rank, in_shape_text(l, shp, sizeof(shp)), l->in_rank);
	p->batch = 1;
	p->len = l->in_len;
	p->width = l->in_w;
	p->ch = l->in_ch;
	return resize_out(l, origin, XO_OP_permute, rank);
}

/* reshape: the input's elements in target_shape's sample shape, one -1
 * inferred (Keras's Reshape and its two errors); a view of the input */
static enum xo_status shape_reshape(struct xo_layer_spec *l, const char *origin)
{
	int64_t in, known = 1, d[3];
	int unknown = -1;

	if (!l->target_rank)
		return spec_error(XO_EINVAL, origin, l->line, "reshape needs target_shape=");
	if (!xo_mul_ok(l->in_len, l->in_w, &in) || !xo_mul_ok(in, l->in_ch, &in))
		return spec_error(XO_EOVERFLOW, origin, l->line, "reshape: size overflows");
	for (int k = 0; k < l->target_rank; k++) {
		d[k] = l->target[k];
		if (d[k] == -1 && unknown >= 0)
			return spec_error(XO_EINVAL, origin, l->line,
			                  "reshape: there must be at most one unknown dimension (-1) "
			                  "in target_shape");
		if (d[k] == -1)
			unknown = k;
		else if (!xo_mul_ok(known, d[k], &known))
			return spec_error(XO_EOVERFLOW, origin, l->line, "reshape: size overflows");
	}
	if (unknown >= 0 && in % known == 0)
		d[unknown] = in / known;
	if ((unknown >= 0 && in % known) || (unknown < 0 && known != in))
		return spec_error(XO_EINVAL, origin, l->line,
		                  "reshape: the total size of target_shape is different from the "
		                  "input's size %" PRId64, in);
	l->out_rank = l->target_rank;
	l->out_len = l->target_rank > 1 ? d[0] : 1;
	l->out_w = l->target_rank == 3 ? d[1] : 1;
	l->out_ch = d[l->target_rank - 1];
	return XO_OK;
}

/* repeat_vector: [F] -> [n][F] (Keras: a (batch, features) input only); the
 * up_sampling op's own limits */
static enum xo_status shape_repeat_vector(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;
	char shp[96];

	if (l->in_rank != 1)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "repeat_vector needs a flat [features] input, got %s",
		                  in_shape_text(l, shp, sizeof(shp)));
	p->batch = 1;
	p->len = 1;
	p->width = 1;
	p->ch = l->in_ch;
	p->repeats_w = 1;
	return resize_out(l, origin, XO_OP_up_sampling, 2);
}

/* The merge layers: the first input's shape; the elementwise ones take
 * two inputs of one shape (Keras's merge layers do not broadcast here). */
static enum xo_status shape_merge(struct xo_layer_spec *l, const char *origin, enum xo_merge mode)
{
	l->p.mode = mode;
	l->out_rank = l->in_rank;
	l->out_len = l->in_len;
	l->out_w = l->in_w;
	l->out_ch = l->in_ch;
	if (l->in2_len == l->in_len && l->in2_w == l->in_w && l->p.ch_b != l->in_ch)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s: inputs of incompatible shapes: the last axis %" PRId64
		                  " and %" PRId64 " (a %s layer takes tensors of one shape)",
		                  l->name, l->in_ch, l->p.ch_b, xo_layer_kinds[l->kind].keras);
	if (l->p.ch_b != l->in_ch || l->in2_len != l->in_len || l->in2_w != l->in_w)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s: inputs of incompatible shapes: [%" PRId64 "][%" PRId64
		                  "][%" PRId64 "] and [%" PRId64 "][%" PRId64 "][%" PRId64
		                  "] (a %s layer takes tensors of one shape)",
		                  l->name, l->in_len, l->in_w, l->in_ch, l->in2_len, l->in2_w,
		                  l->p.ch_b, xo_layer_kinds[l->kind].keras);
	return XO_OK;
}

static enum xo_status shape_add(struct xo_layer_spec *l, const char *origin)
{
	return shape_merge(l, origin, XO_MERGE_ADD);
}

static enum xo_status shape_subtract(struct xo_layer_spec *l, const char *origin)
{
	return shape_merge(l, origin, XO_MERGE_SUBTRACT);
}

static enum xo_status shape_multiply(struct xo_layer_spec *l, const char *origin)
{
	return shape_merge(l, origin, XO_MERGE_MULTIPLY);
}

static enum xo_status shape_average(struct xo_layer_spec *l, const char *origin)
{
	return shape_merge(l, origin, XO_MERGE_AVERAGE);
}

static enum xo_status shape_maximum(struct xo_layer_spec *l, const char *origin)
{
	return shape_merge(l, origin, XO_MERGE_MAXIMUM);
}

static enum xo_status shape_minimum(struct xo_layer_spec *l, const char *origin)
{
	return shape_merge(l, origin, XO_MERGE_MINIMUM);
}

/* The sample's axes of a rank-r shape [len][w][ch] as Keras counts them
 * (axis 1 first; w is an axis at rank 3 only). */
static int sample_axes(int rank, int64_t len, int64_t w, int64_t ch, int64_t d[3])
{
	int n = 0;

	if (rank >= 2)
		d[n++] = len;
	if (rank == 3)
		d[n++] = w;
	d[n++] = ch;
	return n;
}

/* concatenate: tensors of one rank and shape but along the joined axis
 * (Keras's axis, the batch axis 0 refused; negative counts from the last).
 * The merge op joins rows: the axes before the joined one are its rows
 * (p.len), the joined axis and those after it each row's elements (p.ch,
 * p.ch_b), so one op serves every axis, the bytes in Keras's layout. */
static enum xo_status shape_concatenate(struct xo_layer_spec *l, const char *origin)
{
	int64_t a[3], b[3], o[3], rows = 1, ca = 1, cb = 1;
	int r = sample_axes(l->in_rank, l->in_len, l->in_w, l->in_ch, a);
	int ax = l->axis == 0 ? r : l->axis > 0 ? l->axis : r + 1 + l->axis;

	sample_axes(l->in_rank, l->in2_len, l->in2_w, l->p.ch_b, b);
	if (l->axis > r || ax < 0)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s: axis=%d is out of range for a rank-%d input (1 to %d, or "
		                  "-1 to -%d)",
		                  l->name, l->axis ? l->axis : -1, r + 1, r, r);
	if (ax == 0)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s: axis=%d: the batch axis (Concatenate joins the samples' "
		                  "tensors along an axis of the sample)",
		                  l->name, l->axis);
	for (int k = 0; k < r; k++) {
		if (k + 1 != ax && a[k] != b[k])
			return spec_error(XO_EINVAL, origin, l->line,
			                  "%s: a Concatenate layer requires inputs with matching "
			                  "shapes except for the concatenation axis %d: axis %d is "
			                  "%" PRId64 " and %" PRId64,
			                  l->name, ax, k + 1, a[k], b[k]);
		o[k] = a[k];
		if (k + 1 < ax)
			rows *= a[k];
		else if (!xo_mul_ok(ca, a[k], &ca) || !xo_mul_ok(cb, b[k], &cb))
			return spec_error(XO_EOVERFLOW, origin, l->line, "%s: size overflows",
			                  l->name);
	}
	if (!xo_add_ok(a[ax - 1], b[ax - 1], &o[ax - 1]))
		return spec_error(XO_EOVERFLOW, origin, l->line, "%s: size overflows", l->name);
	l->axis = ax == r ? 0 : ax;
	l->p.mode = XO_MERGE_CONCATENATE;
	l->p.len = rows;
	l->p.ch = ca;
	l->p.ch_b = cb;
	l->out_rank = l->in_rank;
	l->out_len = r >= 2 ? o[0] : 1;
	l->out_w = r == 3 ? o[1] : 1;
	l->out_ch = o[r - 1];
	return XO_OK;
}

/* multi_head_attention: query [Tq][d_q] and value [Tk][d_v] (rank 2 each,
 * layer_wire), output [Tq][output_shape or d_q]; the four projections'
 * kernels and biases (layer_attn.c), each bounded as layer_counts bounds a
 * kernel */
static enum xo_status shape_mha(struct xo_layer_spec *l, const char *origin)
{
	struct xo_params *p = &l->p;
	int64_t dv = xo_attention_value_dim(p), dout = p->units ? p->units : l->in_ch;
	int64_t hk, hv, terms[4], rk = 0, b = 0;

	if (l->in_rank != 2)
		return rank_error(l, origin, 2);
	if (!xo_mul_ok(p->heads, p->key_dim, &hk) || !xo_mul_ok(p->heads, dv, &hv) ||
	    hk > XO_GEOMETRY_MAX || hv > XO_GEOMETRY_MAX || !xo_mul_ok(l->p.ch_b, hk, &terms[0]) ||
	    !xo_mul_ok(l->p.ch_b, hv, &terms[1]) || !xo_mul_ok(hv, dout, &terms[2]) ||
	    !xo_add_ok(terms[0], terms[1], &rk) || !xo_add_ok(rk, terms[2], &rk) ||
	    rk > (INT64_C(1) << 40))
		return spec_error(XO_EOVERFLOW, origin, l->line, "%s: size overflows", l->name);
	terms[3] = 2 * hk + hv + dout;
	b = p->use_bias ? terms[3] : 0;
	l->out_rank = 2;
	l->out_len = l->in_len;
	l->out_w = 1;
	l->out_ch = dout;
	l->w_ndim = 3;
	l->w_dim[0] = l->in_ch;
	l->w_dim[1] = p->heads;
	l->w_dim[2] = p->key_dim;
	l->rk_count = rk;
	l->b_count = b;
	return XO_OK;
}

/* Required arguments (Keras's layers have no default for them). */
static const char *needs_filters(const struct xo_params *p)
{
	return !p->filters || !p->kernel_size ? "filters= and kernel_size=" : NULL;
}

static const char *needs_kernel_size(const struct xo_params *p)
{
	return !p->kernel_size ? "kernel_size=" : NULL;
}

static const char *needs_heads(const struct xo_params *p)
{
	return !p->heads || !p->key_dim ? "num_heads= and key_dim=" : NULL;
}

static const char *needs_units(const struct xo_params *p)
{
	return !p->units ? "units=" : NULL;
}

static const char *needs_n(const struct xo_params *p)
{
	return !p->repeats ? "n=" : NULL;
}

static const char *needs_dims(const struct xo_params *p)
{
	return !p->dims ? "dims=" : NULL;
}

static const char *needs_scale(const struct xo_params *p)
{
	return isnan(p->multiplier) ? "scale=" : NULL;
}

static const char *needs_rate(const struct xo_params *p)
{
	return p->rate < 0.0f ? "rate=" : NULL;
}

/* Each kind's arguments (Keras names; the global poolings take Keras's
 * channels_last alone) and its output shape
 * and variables from its input shape (Keras's rules); p.len and p.ch
 * already hold the input's, but for an embedding. */
static const struct {
	const char *const *args;
	enum xo_status (*shape)(struct xo_layer_spec *l, const char *origin);
	/* the required arguments a layer line left out, as "<kind> needs"
	 * names them; NULL: none required, or none missing */
	const char *(*needs)(const struct xo_params *p);
} spec_kinds[XO_LAYER_COUNT] = {
    [XO_LAYER_CONV1D] = {conv_args, shape_conv1d, needs_filters},
    [XO_LAYER_MAX_POOLING1D] = {pool_args, shape_pool1d},
    [XO_LAYER_FLATTEN] = {flatten_args, shape_flatten},
    [XO_LAYER_DROPOUT] = {dropout_args, shape_elementwise, needs_rate},
    [XO_LAYER_DENSE] = {dense_args, shape_dense, needs_units},
    [XO_LAYER_ACTIVATION] = {activation_args, shape_elementwise},
    [XO_LAYER_AVERAGE_POOLING1D] = {pool_args, shape_pool1d},
    [XO_LAYER_GLOBAL_AVERAGE_POOLING1D] = {global_pool_args, shape_global_pool1d},
    [XO_LAYER_GLOBAL_MAX_POOLING1D] = {global_pool_args, shape_global_pool1d},
    [XO_LAYER_BATCH_NORMALIZATION] = {bn_args, shape_batch_normalization},
    [XO_LAYER_MAX_POOLING2D] = {pool2d_args, shape_pool2d},
    [XO_LAYER_AVERAGE_POOLING2D] = {pool2d_args, shape_pool2d},
    [XO_LAYER_GLOBAL_AVERAGE_POOLING2D] = {global_pool_args, shape_global_pool2d},
    [XO_LAYER_GLOBAL_MAX_POOLING2D] = {global_pool_args, shape_global_pool2d},
    [XO_LAYER_EMBEDDING] = {embedding_args, shape_embedding},
    [XO_LAYER_SIMPLE_RNN] = {rnn_args, shape_rnn, needs_units},
    [XO_LAYER_LSTM] = {rnn_args, shape_rnn, needs_units},
    [XO_LAYER_GRU] = {gru_args, shape_rnn, needs_units},
    [XO_LAYER_CONV2D] = {conv2d_args, shape_conv2d, needs_filters},
    [XO_LAYER_ZERO_PADDING1D] = {zero_padding_args, shape_pad1d},
    [XO_LAYER_CROPPING1D] = {cropping_args, shape_pad1d},
    [XO_LAYER_UP_SAMPLING1D] = {up_sampling_args, shape_up1d},
    [XO_LAYER_ZERO_PADDING2D] = {zero_padding_args, shape_pad2d},
    [XO_LAYER_CROPPING2D] = {cropping_args, shape_pad2d},
    [XO_LAYER_UP_SAMPLING2D] = {up_sampling2d_args, shape_up2d},
    [XO_LAYER_LAYER_NORMALIZATION] = {ln_args, shape_layer_normalization},
    [XO_LAYER_PERMUTE] = {permute_args, shape_permute, needs_dims},
    [XO_LAYER_REPEAT_VECTOR] = {repeat_vector_args, shape_repeat_vector, needs_n},
    [XO_LAYER_RESHAPE] = {reshape_args, shape_reshape},
    [XO_LAYER_ADD] = {merge_args, shape_add},
    [XO_LAYER_SUBTRACT] = {merge_args, shape_subtract},
    [XO_LAYER_MULTIPLY] = {merge_args, shape_multiply},
    [XO_LAYER_AVERAGE] = {merge_args, shape_average},
    [XO_LAYER_MAXIMUM] = {merge_args, shape_maximum},
    [XO_LAYER_MINIMUM] = {merge_args, shape_minimum},
    [XO_LAYER_CONCATENATE] = {concatenate_args, shape_concatenate},
    [XO_LAYER_DEPTHWISE_CONV2D] = {depthwise2d_args, shape_depthwise, needs_kernel_size},
    [XO_LAYER_DEPTHWISE_CONV1D] = {depthwise1d_args, shape_depthwise, needs_kernel_size},
    [XO_LAYER_SEPARABLE_CONV2D] = {separable2d_args, shape_separable, needs_filters},
    [XO_LAYER_SEPARABLE_CONV1D] = {separable1d_args, shape_separable, needs_filters},
    [XO_LAYER_TIME_DISTRIBUTED] = {time_distributed_args, shape_time_distributed},
    [XO_LAYER_BIDIRECTIONAL] = {bidirectional_args, shape_bidirectional},
    [XO_LAYER_CONV2D_TRANSPOSE] = {conv2d_transpose_args, shape_conv2d_transpose, needs_filters},
    [XO_LAYER_CONV1D_TRANSPOSE] = {conv1d_transpose_args, shape_conv2d_transpose, needs_filters},
    [XO_LAYER_MULTI_HEAD_ATTENTION] = {mha_args, shape_mha, needs_heads},
    [XO_LAYER_RE_LU] = {relu_args, shape_elementwise},
    [XO_LAYER_SOFTMAX] = {softmax_args, shape_softmax},
    [XO_LAYER_MASKING] = {masking_args, shape_masking},
    [XO_LAYER_RESCALING] = {rescaling_args, shape_elementwise, needs_scale},
    [XO_LAYER_NORMALIZATION] = {normalization_args, shape_normalization},
    [XO_LAYER_LEAKY_RE_LU] = {leaky_relu_args, shape_elementwise},
    [XO_LAYER_ELU] = {elu_args, shape_elementwise},
};

/*
 * What each kind does with Keras's mask of an Embedding(mask_zero=True)
 * on its input (keras/src/layers/layer.py __call__: a layer with
 * supports_masking gets compute_mask(inputs, mask) onto its output, the
 * default one passing its first input's mask; a layer without it drops
 * the mask with a warning, so the layers after it see none). The rule of
 * a kind missing here is MASK_REFUSE: a new kind refuses a mask until its
 * rule is read from Keras's source and written here.
 */
enum mask_rule {
	MASK_REFUSE, /* Keras's call uses the mask and xo does not: refused */
	MASK_DROP,   /* no supports_masking: the output carries no mask */
	MASK_VIEW,   /* as MASK_DROP, but an output that is the input array
	              * itself (layer_is_identity) shares its attached mask
	              * (mask_runtime) */
	MASK_PASS,   /* supports_masking, the default compute_mask: passed on */
	MASK_PASS_ARG, /* as MASK_PASS, its call taking mask= (the mask it gets) */
	MASK_MERGE,  /* merging/base_merge.py: the OR of the inputs' masks, none
	              * when an input has none (one mask here, the ids': OR = it) */
	MASK_MEAN,   /* global_average_pooling1d: the masked mean (p.mask_zero),
	              * its output unmasked (compute_mask returns None) */
	MASK_RNN,    /* rnn.py, bidirectional.py: the recurrent ops' step mask
	              * (p.mask_zero); the output masked iff return_sequences */
	MASK_MERGE_USE, /* multiply.py, base_merge.py: the call reads each input's
	                 * mask (p.mask_a, p.mask_b: the merge op's ids source),
	                 * the output's as MASK_MERGE */
	MASK_ATTN,   /* multi_head_attention: the query's mask over the keys, the
	              * value's over the queries (p.query_mask, p.value_mask: the
	              * mask_outer op), its output masked by the query's */
};
static const enum mask_rule mask_rules[XO_LAYER_COUNT] = {
    [XO_LAYER_CONV1D] = MASK_DROP,
    [XO_LAYER_MAX_POOLING1D] = MASK_DROP,
    [XO_LAYER_FLATTEN] = MASK_DROP,
    [XO_LAYER_DROPOUT] = MASK_PASS,
    [XO_LAYER_DENSE] = MASK_PASS,
    [XO_LAYER_ACTIVATION] = MASK_PASS,
    [XO_LAYER_AVERAGE_POOLING1D] = MASK_DROP,
    [XO_LAYER_GLOBAL_AVERAGE_POOLING1D] = MASK_MEAN,
    [XO_LAYER_GLOBAL_MAX_POOLING1D] = MASK_DROP, /* Keras's max ignores it */
    [XO_LAYER_BATCH_NORMALIZATION] = MASK_REFUSE, /* masked moments in training */
    [XO_LAYER_MAX_POOLING2D] = MASK_DROP,
    [XO_LAYER_AVERAGE_POOLING2D] = MASK_DROP,
    [XO_LAYER_GLOBAL_AVERAGE_POOLING2D] = MASK_DROP,
    [XO_LAYER_GLOBAL_MAX_POOLING2D] = MASK_DROP,
    [XO_LAYER_EMBEDDING] = MASK_DROP, /* the first layer: its mask is its own (layer_mask) */
    [XO_LAYER_SIMPLE_RNN] = MASK_RNN,
    [XO_LAYER_LSTM] = MASK_RNN,
    [XO_LAYER_GRU] = MASK_RNN,
    [XO_LAYER_CONV2D] = MASK_DROP,
    [XO_LAYER_ZERO_PADDING1D] = MASK_DROP,
    [XO_LAYER_CROPPING1D] = MASK_VIEW,
    [XO_LAYER_UP_SAMPLING1D] = MASK_DROP,
    [XO_LAYER_ZERO_PADDING2D] = MASK_DROP,
    [XO_LAYER_CROPPING2D] = MASK_VIEW,
    [XO_LAYER_UP_SAMPLING2D] = MASK_DROP,
    [XO_LAYER_LAYER_NORMALIZATION] = MASK_PASS,
    [XO_LAYER_PERMUTE] = MASK_VIEW,
    [XO_LAYER_REPEAT_VECTOR] = MASK_DROP,
    [XO_LAYER_RESHAPE] = MASK_VIEW,
    [XO_LAYER_ADD] = MASK_MERGE,
    [XO_LAYER_SUBTRACT] = MASK_MERGE,
    [XO_LAYER_MULTIPLY] = MASK_MERGE_USE,
    [XO_LAYER_AVERAGE] = MASK_MERGE,
    [XO_LAYER_MAXIMUM] = MASK_MERGE_USE,
    [XO_LAYER_MINIMUM] = MASK_MERGE_USE,
    /* concatenate.py compute_mask: each input's mask (all true where it
     * has none) joined along the axis, then any() over the last: on the
     * last axis the OR of the inputs' masks per step (one source: masked
     * when every input is, else all true, as unmasked); on another axis
     * a mask of the joined steps, refused in layer_mask */
    [XO_LAYER_CONCATENATE] = MASK_MERGE,
    [XO_LAYER_DEPTHWISE_CONV2D] = MASK_DROP,
    [XO_LAYER_DEPTHWISE_CONV1D] = MASK_DROP,
    [XO_LAYER_SEPARABLE_CONV2D] = MASK_DROP,
    [XO_LAYER_SEPARABLE_CONV1D] = MASK_DROP,
    /* Keras passes the mask to the wrapped layer's call where it takes one:
     * Dense's does not (a masked input is [T][F], so never Conv1D's
     * [T][len][ch]), and the output keeps it */
    [XO_LAYER_TIME_DISTRIBUTED] = MASK_PASS_ARG,
    [XO_LAYER_BIDIRECTIONAL] = MASK_RNN,
    [XO_LAYER_CONV2D_TRANSPOSE] = MASK_DROP,
    [XO_LAYER_CONV1D_TRANSPOSE] = MASK_DROP,
    /* query_mask and value_mask from the inputs' masks (Keras's layer.py
     * passes each tensor argument's mask as <arg>_mask; key is value, so
     * no key_mask), the output masked by the query's (its call sets it) */
    [XO_LAYER_MULTI_HEAD_ATTENTION] = MASK_ATTN,
    [XO_LAYER_RE_LU] = MASK_PASS,
    [XO_LAYER_SOFTMAX] = MASK_REFUSE, /* masked positions to -1e9, outputs zeroed */
    [XO_LAYER_MASKING] = MASK_DROP, /* the first layer: its mask is its own (layer_mask) */
    [XO_LAYER_RESCALING] = MASK_PASS, /* supports_masking, the default compute_mask */
    [XO_LAYER_NORMALIZATION] = MASK_PASS, /* supports_masking, the default compute_mask */
    [XO_LAYER_LEAKY_RE_LU] = MASK_PASS, /* supports_masking, the default compute_mask */
    [XO_LAYER_ELU] = MASK_PASS,         /* supports_masking, the default compute_mask */
};

/* The Keras layer the model's mask comes from, for messages: a Masking
 * (the first layer) or Embedding(mask_zero=True). */
static const char *mask_source(const struct xo_model_spec *out)
{
	return out->nlayers && out->layers[0].kind == XO_LAYER_MASKING ? "Masking"
	                                                               : "Embedding(mask_zero=True)";
}

/* Whether l returns its input as it is: the output's shape the input's,
 * and no axis moved (a Permute's axes in their order; the other kinds keep
 * dims 0). A MASK_VIEW kind's output then shares its input's attached mask
 * (mask_runtime), as in Keras 3.15.1 (JAX): jnp.reshape, transpose and a
 * full slice return the input array itself, which carries its mask through
 * the layer that has no supports_masking
 * (Keras's own GlobalAveragePooling1D after Reshape((T, F)) of a masked
 * [T][F] takes the masked mean; after Reshape((T / 2, 2 F)), the plain one). */
static bool layer_is_identity(const struct xo_layer_spec *l)
{
	int q[3];

	return l->out_rank == l->in_rank && l->out_len == l->in_len && l->out_w == l->in_w &&
	       l->out_ch == l->in_ch &&
	       (l->p.dims == 0 ||
	        (!xo_permute_axes(l->p.dims, q) && q[0] == 0 && q[1] == 1 && q[2] == 2));
}

/* The refusal of a mask that reaches a kind whose Keras call uses it while
 * xo does not (MASK_REFUSE; a Concatenate on another axis than the last). */
static enum xo_status mask_refused(const struct xo_model_spec *out,
                                   const struct xo_layer_spec *l, const char *origin)
{
	if (l->kind == XO_LAYER_CONCATENATE)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "layer '%s': the mask of %s reaches "
		                  "this Concatenate on axis %d: Keras joins the inputs' masks "
		                  "along that axis, a mask xo does not carry (masked inputs "
		                  "are supported on the last axis)",
		                  l->name, mask_source(out), l->axis);
	return spec_error(XO_EINVAL, origin, l->line,
	                  "layer '%s': the mask of %s reaches this %s "
	                  "layer, which uses it in Keras; masks are not supported for %s",
	                  l->name, mask_source(out), xo_layer_kinds[l->kind].keras,
	                  xo_layer_kinds[l->kind].keras);
}

/* The mask Keras records for l's output when it builds the model (the
 * symbolic pass, l->masked), by its kind's rule from its inputs' recorded
 * masks. The masks layers read at run time, which may differ, are
 * mask_runtime's. A recorded mask reaching a kind that would use it while
 * xo does not is refused, never ignored. */
static enum xo_status layer_mask(const struct xo_model_spec *out, struct xo_layer_spec *l,
                                 const char *origin)
{
	bool first = false, any = false, all = true;

	for (int k = 0; k < l->ninputs; k++) {
		bool m = l->inputs[k] >= 0 && out->layers[l->inputs[k]].masked;

		first = first || (k == 0 && m);
		any = any || m;
		all = all && m;
	}
	l->masked = (l->kind == XO_LAYER_EMBEDDING && l->p.mask_zero) || l->kind == XO_LAYER_MASKING;
	if (!any)
		return XO_OK;
	switch (mask_rules[l->kind]) {
	case MASK_DROP:
	case MASK_VIEW:
	case MASK_MEAN:
		return XO_OK;
	case MASK_PASS:
	case MASK_PASS_ARG:
	case MASK_ATTN:
		l->masked = first;
		return XO_OK;
	case MASK_MERGE:
		if (l->kind == XO_LAYER_CONCATENATE && l->axis != 0) /* shape_concatenate: 0 last */
			return mask_refused(out, l, origin);
		l->masked = all;
		return XO_OK;
	case MASK_MERGE_USE:
		l->masked = all;
		return XO_OK;
	case MASK_RNN:
		l->masked = first && l->p.return_sequences;
		return XO_OK;
	case MASK_REFUSE:
		break;
	}
	return mask_refused(out, l, origin);
}

/*
 * What each layer's call reads of Keras's mask at run time, and so what xo
 * computes (p.mask_zero, p.query_mask, p.value_mask, p.mask_a, p.mask_b,
 * mask_in).
 *
 * Keras 3.15.1 carries a mask two ways (keras/src/layers/layer.py __call__,
 * backend/common/masking.py):
 *  - recorded: while building, a call taking mask= (pooling, recurrent,
 *    TimeDistributed) is given its input's mask then, and the functional
 *    model replays that tensor (the config's "mask" in the call's kwargs;
 *    l->masked, layer_mask);
 *  - attached: at run time each output array carries a mask in a table
 *    keyed by the array (supports_masking: compute_mask of the mask the
 *    call got, or of its first input's attached one; none without
 *    supports_masking). A mask= call whose recorded mask is None takes the
 *    attached one; MultiHeadAttention's query and value masks and the
 *    masked merges' (Multiply, Maximum, Minimum) are always attached ones.
 * MultiHeadAttention.call erases the attached masks of its query, value and
 * key arrays. A layer that returns its input array itself (an identity
 * Reshape, Permute or Cropping; Dropout in inference, or of rate 0;
 * Activation("linear")) shares that array's attached mask, erasures
 * included.
 *
 * So a reader of an array's attached mask sees none when an attention that
 * erases it ran first, in Keras's execution order (keras_order), which the
 * pass follows. Where a masked Concatenate's mask ops may move a layer in
 * that order, the pass takes the layers' own order instead: an erasure
 * counts where the attention is the reader's ancestor, and a mask used
 * where neither needs the other's output is refused. So is a model whose
 * masks differ between training and inference (a Dropout then shares its
 * input's array in one and not the other).
 */
enum { MASK_MODES = 2 };          /* inference, training */
enum { ATT_NO, ATT_YES, ATT_ORDER }; /* an attached mask: none, one, Keras's order decides */

struct mask_sim {
	const struct xo_model_spec *out;
	int n;
	int *obj;         /* [n]: the layer whose array layer i's output is */
	unsigned char *att; /* [n]: the attached mask of the array layer i made */
	int *blame;       /* [n]: the attention behind an ATT_ORDER in att */
	int *erasers;     /* [n]: how many attentions take the array layer i made */
	int *anc;         /* [n]: stamp r + 1 on the ancestors of layer r */
	bool *desc;       /* [n]: the descendants of layer reader */
	int reader;       /* whose relatives anc and desc hold (-1: none) */
	int *order;       /* [n]: the layers in the order the pass takes them */
	bool exact;       /* order is Keras's execution order (keras_order) */
};

/* Whether l returns its input array itself in Keras in the mode (0
 * inference, 1 training). */
static bool layer_aliases(const struct xo_layer_spec *l, int mode)
{
	if (l->ninputs < 1 || l->inputs[0] < 0)
		return false;
	if (mask_rules[l->kind] == MASK_VIEW)
		return layer_is_identity(l);
	if (l->kind == XO_LAYER_DROPOUT)
		return mode == 0 || l->p.rate == 0.0f;
	return l->kind == XO_LAYER_ACTIVATION && l->p.activation == XO_ACTIVATION_LINEAR;
}

/* Marks layer r's ancestors in ms->anc and its descendants in ms->desc
 * (each layer follows its inputs). */
static void mask_sim_relatives(struct mask_sim *ms, int r)
{
	const struct xo_layer_spec *L = ms->out->layers;

	if (ms->reader == r)
		return;
	ms->reader = r;
	for (int i = r; i >= 0; i--)
		if (i == r || ms->anc[i] == r + 1)
			for (int k = 0; k < L[i].ninputs; k++)
				if (L[i].inputs[k] >= 0)
					ms->anc[L[i].inputs[k]] = r + 1;
	for (int i = 0; i < ms->n; i++) {
		bool d = false;

		for (int k = 0; i > r && k < L[i].ninputs && !d; k++)
			d = L[i].inputs[k] == r || (L[i].inputs[k] > r && ms->desc[L[i].inputs[k]]);
		ms->desc[i] = d;
	}
}

/* The attached mask layer r reads of its input k: the array's, unless an
 * attention other than r that erases it is r's ancestor (it ran before);
 * ATT_ORDER when one is neither r's ancestor nor its descendant. */
static unsigned char mask_sim_read(struct mask_sim *ms, int r, int k, int *blame)
{
	const struct xo_layer_spec *L = ms->out->layers;
	int src = L[r].inputs[k], o, open = -1;

	if (src < 0 || ms->att[o = ms->obj[src]] == ATT_NO)
		return ATT_NO;
	if (ms->att[o] == ATT_ORDER) {
		*blame = ms->blame[o];
		return ATT_ORDER;
	}
	if (ms->exact || !ms->erasers[o])
		return ATT_YES; /* exact: erasures already applied in Keras's order */
	mask_sim_relatives(ms, r);
	for (int j = 0; j < ms->n; j++) {
		bool erases = false;

		if (j == r || mask_rules[L[j].kind] != MASK_ATTN)
			continue;
		for (int q = 0; q < L[j].ninputs; q++)
			erases = erases || (L[j].inputs[q] >= 0 && ms->obj[L[j].inputs[q]] == o);
		if (erases && ms->anc[j] == r + 1)
			return ATT_NO;
		if (erases && !ms->desc[j] && open < 0)
			open = j;
	}
	if (open < 0)
		return ATT_YES;
	*blame = open;
	return ATT_ORDER;
}

/* The refusal of a use of a mask Keras's order decides. */
static enum xo_status mask_order_refused(const struct mask_sim *ms, int r, int blame,
                                         const char *origin)
{
	const struct xo_layer_spec *l = &ms->out->layers[r];

	return spec_error(XO_EINVAL, origin, l->line,
	                  "layer '%s': this %s reads the mask of %s at run time, which "
	                  "MultiHeadAttention '%s' erases from its input tensors in its call; "
	                  "neither layer needs the other's output, so whether this one sees "
	                  "the mask depends on Keras's execution order: not supported",
	                  l->name, xo_layer_kinds[l->kind].keras, mask_source(ms->out),
	                  ms->out->layers[blame].name);
}

/* One mode's pass over the layers in their order: each layer's mask uses
 * into use[i] (bit 0 the first, bit 1 the second: the fields mask_runtime
 * sets), mask_in[i], and the attached mask of the array it makes. */
static enum xo_status mask_sim_mode(struct mask_sim *ms, unsigned char *use, bool *mask_in,
                                    const char *origin)
{
	const struct xo_layer_spec *L = ms->out->layers;

	for (int q = 0; q < ms->n; q++) {
		const int i = ms->order[q];
		const struct xo_layer_spec *l = &L[i];
		unsigned char a[XO_LAYER_INPUTS_MAX] = {ATT_NO}, all = l->ninputs ? ATT_YES : ATT_NO,
		              any = ATT_NO, in, v;
		int blame = -1;
		enum mask_rule rule = mask_rules[l->kind];

		use[i] = 0;
		mask_in[i] = false;
		if (ms->obj[i] != i)
			continue; /* its input's array, attached mask and all */
		for (int k = 0; k < l->ninputs; k++) {
			a[k] = mask_sim_read(ms, i, k, &blame);
			all = a[k] == ATT_NO || all == ATT_NO ? ATT_NO
			      : a[k] == ATT_ORDER             ? ATT_ORDER
			                                      : all;
			any = a[k] > any ? a[k] : any;
		}
		/* a call's mask=: the recorded one, else the attached one */
		in = l->ninputs && l->inputs[0] >= 0 && L[l->inputs[0]].masked ? ATT_YES : a[0];
		/* what the call uses */
		if (rule == MASK_MERGE_USE || rule == MASK_ATTN) {
			v = a[1];
			if (a[0] == ATT_ORDER || v == ATT_ORDER)
				return mask_order_refused(ms, i, blame, origin);
			use[i] = (unsigned char)((a[0] == ATT_YES) | (v == ATT_YES) << 1);
		}
		if (rule == MASK_MEAN || rule == MASK_RNN || rule == MASK_PASS_ARG ||
		    rule == MASK_REFUSE) {
			if (in == ATT_ORDER)
				return mask_order_refused(ms, i, blame, origin);
			use[i] = mask_in[i] = in == ATT_YES;
		}
		if ((rule == MASK_REFUSE && in == ATT_YES) ||
		    (l->kind == XO_LAYER_CONCATENATE && l->axis != 0 && any != ATT_NO))
			return mask_refused(ms->out, l, origin);
		/* the attached mask of its output (compute_mask, or the call's) */
		ms->blame[i] = blame;
		ms->att[i] = l->masked && (l->kind == XO_LAYER_EMBEDDING || l->kind == XO_LAYER_MASKING)
		                 ? ATT_YES
		             : rule == MASK_PASS || rule == MASK_ATTN ? a[0]
		             : rule == MASK_PASS_ARG                  ? in
		             : rule == MASK_MERGE || rule == MASK_MERGE_USE ? all
		             : rule == MASK_RNN && l->p.return_sequences    ? in
		                                                            : ATT_NO;
		/* the attention's call erases its inputs' attached masks */
		for (int k = 0; ms->exact && rule == MASK_ATTN && k < l->ninputs; k++)
			if (l->inputs[k] >= 0)
				ms->att[ms->obj[l->inputs[k]]] = ATT_NO;
	}
	return XO_OK;
}

/*
 * Keras's execution order of the layers into order (keras/src/ops/
 * function.py): map_graph's depth-first walk from the output (each node's
 * input tensors in call order, a node listed after its inputs), then, over
 * that list from the output back, each node's depth (0 for the output, a
 * parent's the largest of its children's + 1), the nodes numbered as they
 * are first met; _run_through_graph runs the depths from the largest, a
 * depth's nodes in that numbering. The walk and the numbering also meet
 * the InputLayers and the op layers of the recorded masks, which hang off
 * the model inputs only (their depths move no layer's) except a masked
 * Concatenate's ZerosLike / OnesLike of its inputs (mask_runtime does not
 * take this order then). scratch: 4 n + 1 ints. Each layer follows its
 * inputs. Returns how many layers it ordered: n when every one is the
 * output's ancestor (graph_check).
 */
static int keras_order(const struct xo_model_spec *out, int *order, int *scratch)
{
	const struct xo_layer_spec *L = out->layers;
	int n = out->nlayers, npost = 0, nmet = 0;
	int *post = scratch, *depth = scratch + n, *met = scratch + 2 * n;

	/* the walk, iteratively: order holds the stack of (layer, next input) */
	for (int i = 0; i < n; i++)
		depth[i] = -1; /* -1 not met, -2 on the walk's stack, else done */
	{
		int sp = 0;

		order[sp++] = n - 1;
		met[n - 1] = 0; /* the next input of the stacked layer */
		depth[n - 1] = -2;
		while (sp) {
			int l = order[sp - 1], k = met[l];

			if (k < L[l].ninputs) {
				int j = L[l].inputs[k];

				met[l] = k + 1;
				if (j >= 0 && depth[j] == -1) {
					depth[j] = -2;
					met[j] = 0;
					order[sp++] = j;
				}
				continue;
			}
			depth[l] = 0;
			post[npost++] = l;
			sp--;
		}
	}
	/* depths and first-met numbers, from the output back */
	for (int i = 0; i < n; i++) {
		depth[i] = -1;
		met[i] = -1;
	}
	for (int q = npost - 1; q >= 0; q--) {
		int l = post[q];

		if (met[l] < 0) {
			met[l] = nmet++;
			depth[l] = 0;
		}
		for (int k = 0; k < L[l].ninputs; k++) {
			int j = L[l].inputs[k];

			if (j < 0)
				continue;
			if (met[j] < 0)
				met[j] = nmet++;
			if (depth[j] < depth[l] + 1)
				depth[j] = depth[l] + 1;
		}
	}
	/* by depth, the largest first, a depth's layers by number: by number
	 * first (each its own), then a stable counting sort on the depth */
	{
		int *by_met = post, *count = scratch + 3 * n, maxd = 0;

		for (int i = 0; i < n; i++)
			maxd = depth[i] > maxd ? depth[i] : maxd;
		for (int i = 0; i < n; i++)
			if (met[i] >= 0)
				by_met[met[i]] = i;
		for (int d = 0; d <= maxd + 1; d++)
			count[d] = 0;
		for (int q = 0; q < nmet; q++)
			count[maxd - depth[by_met[q]] + 1]++;
		for (int d = 1; d <= maxd + 1; d++)
			count[d] += count[d - 1];
		for (int q = 0; q < nmet; q++)
			order[count[maxd - depth[by_met[q]]]++] = by_met[q];
	}
	return nmet;
}

/* Sets each layer's mask uses from Keras's run-time masks (see above);
 * refuses a model whose masks Keras's order or mode decides. */
static enum xo_status mask_runtime(struct xo_model_spec *out, const char *origin)
{
	struct mask_sim ms = {.out = out, .n = out->nlayers, .reader = -1};
	unsigned char *use;
	bool *mask_in, any = false;
	enum xo_status st = XO_OK;
	int n = out->nlayers;

	for (int i = 0; i < n; i++)
		any = any || out->layers[i].masked;
	if (!any)
		return XO_OK;
	ms.obj = calloc((size_t)n, sizeof(*ms.obj));
	ms.att = calloc((size_t)n, sizeof(*ms.att));
	ms.blame = calloc((size_t)n, sizeof(*ms.blame));
	ms.erasers = calloc((size_t)n, sizeof(*ms.erasers));
	ms.anc = calloc((size_t)n, sizeof(*ms.anc));
	ms.desc = calloc((size_t)n, sizeof(*ms.desc));
	ms.order = calloc((size_t)n * 5 + 1, sizeof(*ms.order)); /* and keras_order's scratch */
	use = calloc((size_t)n * MASK_MODES, sizeof(*use));
	mask_in = calloc((size_t)n * MASK_MODES, sizeof(*mask_in));
	if (!ms.obj || !ms.att || !ms.blame || !ms.erasers || !ms.anc || !ms.desc || !ms.order ||
	    !use || !mask_in) {
		st = xo_error(XO_ENOMEM, "%s: out of memory", origin);
		goto out;
	}
	/* Keras's order, unless a masked Concatenate's mask ops may move a
	 * layer's depth: then the layers' own order, and a mask whose reading
	 * the order decides is refused (mask_sim_read) */
	ms.exact = true;
	for (int i = 0; i < n; i++)
		for (int k = 0; out->layers[i].kind == XO_LAYER_CONCATENATE && k < out->layers[i].ninputs;
		     k++)
			ms.exact = ms.exact && !(out->layers[i].inputs[k] >= 0 &&
			                         out->layers[out->layers[i].inputs[k]].masked);
	ms.exact = ms.exact && keras_order(out, ms.order, ms.order + n) == n;
	for (int i = 0; !ms.exact && i < n; i++)
		ms.order[i] = i;
	for (int mode = 0; mode < MASK_MODES && !st; mode++) {
		/* the arrays first, since a reader needs its later erasers too */
		for (int i = 0; i < n; i++)
			ms.obj[i] = layer_aliases(&out->layers[i], mode) ? ms.obj[out->layers[i].inputs[0]]
			                                                 : i;
		memset(ms.erasers, 0, (size_t)n * sizeof(*ms.erasers));
		memset(ms.att, 0, (size_t)n * sizeof(*ms.att));
		for (int j = 0; j < n; j++)
			for (int q = 0; mask_rules[out->layers[j].kind] == MASK_ATTN &&
			                q < out->layers[j].ninputs;
			     q++)
				if (out->layers[j].inputs[q] >= 0)
					ms.erasers[ms.obj[out->layers[j].inputs[q]]]++;
		st = mask_sim_mode(&ms, use + (size_t)mode * (size_t)n,
		                   mask_in + (size_t)mode * (size_t)n, origin);
	}
	for (int i = 0; i < n && !st; i++) {
		struct xo_layer_spec *l = &out->layers[i];
		enum mask_rule rule = mask_rules[l->kind];

		if (use[i] != use[n + i] || mask_in[i] != mask_in[n + i]) {
			st = spec_error(XO_EINVAL, origin, l->line,
			                "layer '%s': this %s's mask in Keras differs between training "
			                "and inference (a Dropout returns its input tensor itself in "
			                "inference only, and a MultiHeadAttention erases that "
			                "tensor's mask): not supported",
			                l->name, xo_layer_kinds[l->kind].keras);
			break;
		}
		l->mask_in = mask_in[i];
		if (rule == MASK_MEAN || rule == MASK_RNN)
			l->p.mask_zero = use[i] & 1;
		if (rule == MASK_MERGE_USE) {
			l->p.mask_a = use[i] & 1;
			l->p.mask_b = (use[i] >> 1) & 1;
		}
		if (rule == MASK_ATTN) {
			l->p.query_mask = use[i] & 1;
			l->p.value_mask = (use[i] >> 1) & 1;
		}
	}
out:
	free(ms.obj);
	free(ms.att);
	free(ms.blame);
	free(ms.erasers);
	free(ms.anc);
	free(ms.desc);
	free(ms.order);
	free(use);
	free(mask_in);
	return st;
}

/* The kernel's and the output's element counts of a shaped layer, bounded
 * (2^40) so that every later product of them stays in range. */
static enum xo_status layer_counts(struct xo_layer_spec *l, const char *origin)
{
	int64_t n;

	l->w_count = 0;
	if (l->w_ndim) {
		n = 1;
		for (int i = 0; i < l->w_ndim; i++)
			if (!xo_mul_ok(n, l->w_dim[i], &n) || n > (INT64_C(1) << 40))
				return spec_error(XO_EOVERFLOW, origin, l->line,
				                  "kernel size overflows");
		l->w_count = n;
	}
	if (!xo_mul_ok(l->out_len, l->out_w, &n) || !xo_mul_ok(n, l->out_ch, &n) ||
	    n > (INT64_C(1) << 40))
		return spec_error(XO_EOVERFLOW, origin, l->line, "output size overflows");
	return XO_OK;
}

/* Resolves the output shape of l from its input shape; Keras's rules. */
static enum xo_status layer_shape(struct xo_layer_spec *l, const char *origin)
{
	enum xo_status st;

	if (l->kind != XO_LAYER_EMBEDDING) { /* its p.ch is output_dim */
		l->p.len = l->in_len;
		l->p.ch = l->in_ch;
	}
	l->out_w = 1;
	XO_ASSERT(spec_kinds[l->kind].shape); /* every layers.def row has one */
	st = spec_kinds[l->kind].shape(l, origin);
	return st ? st : layer_counts(l, origin);
}

/* Splits a line (comment already cut) into whitespace-separated tokens. */
static int tokenize(char *s, char **tok)
{
	int n = 0;

	for (char *t = strtok(s, " \t\r"); t; t = strtok(NULL, " \t\r")) {
		if (n == MAX_TOKENS)
			return -1;
		tok[n++] = t;
	}
	return n;
}

/* ---- compile(loss, optimizer, metrics) --------------------------------------- */

/*
 * Keras 3 defaults (keras/src/optimizers/adam.py, sgd.py, rmsprop.py
 * __init__): Adam lr 1e-3, beta_1 0.9, beta_2 0.999, epsilon 1e-7; SGD lr
 * 0.01, momentum 0.0, nesterov False; RMSprop lr 1e-3, rho 0.9, momentum 0.0,
 * epsilon 1e-7. SGD's and RMSprop's momentum 0 must be set here: the params
 * default (0.99) is BatchNormalization's.
 */
void xo_compile_set_optimizer(struct xo_compile *c, enum xo_optimizer o)
{
	struct xo_params p = xo_params_default();

	c->optimizer = o;
	p.lr = o == XO_OPTIMIZER_SGD ? 0.01f : 1e-3f;
	p.beta_1 = 0.9f;
	p.beta_2 = 0.999f;
	p.epsilon = 1e-7f;
	p.momentum = 0.0f;
	p.nesterov = false;
	p.rho = 0.9f;
	c->opt = p;
}

struct xo_compile xo_compile_default(void)
{
	struct xo_compile c = {.loss = XO_LOSS_CATEGORICAL_CROSSENTROPY, .accuracy = true};

	xo_compile_set_optimizer(&c, XO_OPTIMIZER_ADAM);
	return c;
}

static const char *const loss_names[] = {
    [XO_LOSS_CATEGORICAL_CROSSENTROPY] = "categorical_crossentropy",
    [XO_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY] = "sparse_categorical_crossentropy",
    [XO_LOSS_BINARY_CROSSENTROPY] = "binary_crossentropy",
    [XO_LOSS_MEAN_SQUARED_ERROR] = "mean_squared_error",
};
static const char *const optimizer_names[] = {
    [XO_OPTIMIZER_ADAM] = "adam",
    [XO_OPTIMIZER_SGD] = "sgd",
    [XO_OPTIMIZER_RMSPROP] = "rmsprop",
};

const char *xo_loss_name(enum xo_loss l)
{
	return (unsigned)l < sizeof(loss_names) / sizeof(*loss_names) ? loss_names[l] : "?";
}

const char *xo_optimizer_name(enum xo_optimizer o)
{
	return (unsigned)o < sizeof(optimizer_names) / sizeof(*optimizer_names)
	           ? optimizer_names[o]
	           : "?";
}

enum xo_op xo_compile_metric_op(const struct xo_compile *c, int64_t classes)
{
	if (!c->accuracy)
		return XO_OP_COUNT;
	/* compile_utils.py is_binary_or_sparse_categorical: a 1-unit output is
	 * binary whatever the loss; labels of lower rank are sparse. */
	if (classes == 1)
		return XO_OP_binary_accuracy;
	if (c->loss == XO_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY)
		return XO_OP_sparse_categorical_accuracy;
	return XO_OP_accuracy;
}

int xo_compile_format(const struct xo_compile *c, char *buf, size_t size)
{
	const struct xo_params *p = &c->opt;
	char opt[192];

	switch (c->optimizer) {
	case XO_OPTIMIZER_ADAM:
		snprintf(opt, sizeof(opt), "learning_rate=%.9g beta_1=%.9g beta_2=%.9g epsilon=%.9g",
		         (double)p->lr, (double)p->beta_1, (double)p->beta_2, (double)p->epsilon);
		break;
	case XO_OPTIMIZER_SGD:
		snprintf(opt, sizeof(opt), "learning_rate=%.9g momentum=%.9g nesterov=%s",
		         (double)p->lr, (double)p->momentum, p->nesterov ? "True" : "False");
		break;
	case XO_OPTIMIZER_RMSPROP:
		snprintf(opt, sizeof(opt), "learning_rate=%.9g rho=%.9g momentum=%.9g epsilon=%.9g",
		         (double)p->lr, (double)p->rho, (double)p->momentum, (double)p->epsilon);
		break;
	}
	return snprintf(buf, size, "compile loss=%s%s optimizer=%s %s metrics=%s",
	                xo_loss_name(c->loss), c->from_logits ? " from_logits=True" : "",
	                xo_optimizer_name(c->optimizer), opt,
	                c->accuracy ? "accuracy" : "none");
}

/* The keys each optimizer takes besides learning_rate. */
static bool optimizer_has_key(enum xo_optimizer o, const char *key)
{
	static const char *const adam[] = {"beta_1", "beta_2", "epsilon", NULL};
	static const char *const sgd[] = {"momentum", "nesterov", NULL};
	static const char *const rmsprop[] = {"rho", "momentum", "epsilon", NULL};
	const char *const *k = o == XO_OPTIMIZER_ADAM ? adam : o == XO_OPTIMIZER_SGD ? sgd : rmsprop;

	if (!strcmp(key, "learning_rate"))
		return true;
	for (; *k; k++)
		if (!strcmp(*k, key))
			return true;
	return false;
}

/* A float key of the compile line: finite, and in Keras's range. */
static enum xo_status compile_float(const char *key, const char *val, float *out,
                                    const char *origin, int line)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (end == val || *end || errno || !isfinite(v) || !isfinite((float)v))
		return spec_error(XO_EINVAL, origin, line, "compile: %s=%s is not a finite number",
		                  key, val);
	if (!strcmp(key, "learning_rate") ? !(v > 0.0)
	    : !strcmp(key, "epsilon")      ? !(v >= 0.0)
	    : !strcmp(key, "beta_1") || !strcmp(key, "beta_2") ? !(v >= 0.0 && v < 1.0)
	                                                         : !(v >= 0.0 && v <= 1.0))
		return spec_error(XO_EINVAL, origin, line,
		                  "compile: %s=%s is out of range (%s)", key, val,
		                  !strcmp(key, "learning_rate") ? "must be > 0"
		                  : !strcmp(key, "epsilon")      ? "must be >= 0"
		                  : !strcmp(key, "beta_1") || !strcmp(key, "beta_2")
		                      ? "must be in [0, 1)"
		                      : "must be in [0, 1]");
	*out = (float)v;
	return XO_OK;
}

/* Strips one pair of matching Python quotes (loss="mse"). */
static char *unquote(char *val)
{
	size_t n = strlen(val);

	if (n >= 3 && (val[0] == '"' || val[0] == '\'') && val[n - 1] == val[0]) {
		val[n - 1] = '\0';
		val++;
	}
	return val;
}

/*
 * "compile loss=NAME [from_logits=True|False] optimizer=NAME
 * [learning_rate=..] [momentum=..] [nesterov=..] [rho=..] [epsilon=..]
 * [beta_1=..] [beta_2=..] [metrics=accuracy|none]": loss and optimizer are
 * required; from_logits (Keras's Loss argument) only with a cross-entropy;
 * a key that the
 * chosen optimizer does not take is refused (XO_EFORMAT), as an unknown
 * layer argument is. metrics defaults to accuracy for the cross-entropies,
 * none for mean_squared_error (Keras compiles no metric by default; the seed
 * asked for accuracy).
 */
static enum xo_status parse_compile(struct xo_compile *c, char **tok, int ntok,
                                    const char *origin, int line)
{
	const char *loss = NULL, *opt = NULL, *metrics = NULL, *logits = NULL;
	static const char *const keys[] = {"loss",     "optimizer", "metrics",     "learning_rate",
	                                   "beta_1",   "beta_2",    "epsilon",     "momentum",
	                                   "nesterov", "rho",       "from_logits", NULL};
	enum xo_status st;

	*c = xo_compile_default();
	for (int i = 1; i < ntok; i++) {
		char *eq = strchr(tok[i], '=');
		bool known = false;

		if (!eq || eq == tok[i] || !eq[1])
			return spec_error(XO_EFORMAT, origin, line, "expected key=value, got '%s'",
			                  tok[i]);
		*eq = '\0';
		for (int k = 0; keys[k]; k++)
			known |= !strcmp(keys[k], tok[i]);
		if (!known)
			return spec_error(XO_EFORMAT, origin, line,
			                  "unknown argument '%s' for compile (expected loss, "
			                  "from_logits, optimizer, metrics or an optimizer's key)",
			                  tok[i]);
		for (int j = 1; j < i; j++)
			if (!strcmp(tok[j], tok[i]))
				return spec_error(XO_EFORMAT, origin, line,
				                  "argument '%s' given twice", tok[i]);
		if (!strcmp(tok[i], "loss"))
			loss = unquote(eq + 1);
		else if (!strcmp(tok[i], "optimizer"))
			opt = unquote(eq + 1);
		else if (!strcmp(tok[i], "metrics"))
			metrics = unquote(eq + 1);
		else if (!strcmp(tok[i], "from_logits"))
			logits = eq + 1;
	}
	if (!loss || !opt)
		return spec_error(XO_EFORMAT, origin, line,
		                  "compile needs loss= and optimizer=");
	if (!strcmp(loss, "categorical_crossentropy"))
		c->loss = XO_LOSS_CATEGORICAL_CROSSENTROPY;
	else if (!strcmp(loss, "sparse_categorical_crossentropy"))
		c->loss = XO_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY;
	else if (!strcmp(loss, "binary_crossentropy"))
		c->loss = XO_LOSS_BINARY_CROSSENTROPY;
	else if (!strcmp(loss, "mean_squared_error") || !strcmp(loss, "mse"))
		c->loss = XO_LOSS_MEAN_SQUARED_ERROR;
	else
		return spec_error(XO_EINVAL, origin, line,
		                  "compile: unknown loss '%s' (expected categorical_crossentropy, "
		                  "sparse_categorical_crossentropy, binary_crossentropy or "
		                  "mean_squared_error)",
		                  loss);
	if (!strcmp(opt, "adam") || !strcmp(opt, "Adam"))
		xo_compile_set_optimizer(c, XO_OPTIMIZER_ADAM);
	else if (!strcmp(opt, "sgd") || !strcmp(opt, "SGD"))
		xo_compile_set_optimizer(c, XO_OPTIMIZER_SGD);
	else if (!strcmp(opt, "rmsprop") || !strcmp(opt, "RMSprop"))
		xo_compile_set_optimizer(c, XO_OPTIMIZER_RMSPROP);
	else
		return spec_error(XO_EINVAL, origin, line,
		                  "compile: unknown optimizer '%s' (expected adam, sgd or rmsprop)",
		                  opt);
	if (logits && !parse_bool_value(logits, &c->from_logits))
		return spec_error(XO_EINVAL, origin, line,
		                  "compile: from_logits=%s: expected True or False", logits);
	if (c->from_logits && c->loss == XO_LOSS_MEAN_SQUARED_ERROR)
		return spec_error(XO_EINVAL, origin, line,
		                  "compile: from_logits=True needs a cross-entropy loss, not "
		                  "mean_squared_error");
	c->accuracy = c->loss != XO_LOSS_MEAN_SQUARED_ERROR;
	if (metrics) {
		if (!strcmp(metrics, "accuracy") || !strcmp(metrics, "acc") ||
		    !strcmp(metrics, "[accuracy]") || !strcmp(metrics, "['accuracy']"))
			c->accuracy = true;
		else if (!strcmp(metrics, "none") || !strcmp(metrics, "None") ||
		         !strcmp(metrics, "[]"))
			c->accuracy = false;
		else
			return spec_error(XO_EINVAL, origin, line,
			                  "compile: metrics=%s is not supported (expected accuracy "
			                  "or none)",
			                  metrics);
	}
	for (int i = 1; i < ntok; i++) {
		const char *key = tok[i], *val = key + strlen(key) + 1;

		if (!strcmp(key, "loss") || !strcmp(key, "optimizer") || !strcmp(key, "metrics") ||
		    !strcmp(key, "from_logits"))
			continue;
		if (!optimizer_has_key(c->optimizer, key))
			return spec_error(XO_EFORMAT, origin, line,
			                  "compile: %s is not an argument of optimizer %s", key,
			                  xo_optimizer_name(c->optimizer));
		if (!strcmp(key, "nesterov")) {
			if (!parse_bool_value(val, &c->opt.nesterov))
				return spec_error(XO_EINVAL, origin, line,
				                  "compile: nesterov=%s: expected True or False", val);
			continue;
		}
		st = compile_float(key, val, !strcmp(key, "learning_rate") ? &c->opt.lr
		                             : !strcmp(key, "beta_1")      ? &c->opt.beta_1
		                             : !strcmp(key, "beta_2")      ? &c->opt.beta_2
		                             : !strcmp(key, "epsilon")     ? &c->opt.epsilon
		                             : !strcmp(key, "momentum")    ? &c->opt.momentum
		                                                           : &c->opt.rho,
		                   origin, line);
		if (st)
			return st;
	}
	return XO_OK;
}

/* An input line's name=: the first input's is "input" unless given; every
 * later one needs its own (a layer names it in inputs=). */
static enum xo_status input_name(struct xo_model_spec *s, const char *val, const char *origin,
                                 int line)
{
	struct xo_input_spec *in = &s->input[s->ninputs];

	if (!valid_name(val))
		return spec_error(XO_EINVAL, origin, line,
		                  "input: bad name '%s' (letters, digits, _ - . only)", val);
	for (int k = 0; k < s->ninputs; k++)
		if (!strcmp(s->input[k].name, val))
			return spec_error(XO_EINVAL, origin, line,
			                  "input: duplicate input name '%s' (line %d)", val,
			                  s->input[k].line);
	snprintf(in->name, sizeof(in->name), "%s", val);
	return XO_OK;
}

static enum xo_status parse_input(struct xo_model_spec *s, char **tok, int ntok, const char *origin,
                                  int line)
{
	struct xo_input_spec *in = &s->input[s->ninputs];
	int64_t v[3], n;
	int nv = 0;
	bool is_int = false;
	enum xo_status st;

	if (s->ninputs == XO_MODEL_INPUTS_MAX)
		return spec_error(XO_EINVAL, origin, line,
		                  "input: the model has more than %d inputs; xo supports at most %d",
		                  XO_MODEL_INPUTS_MAX, XO_MODEL_INPUTS_MAX);
	memset(in, 0, sizeof(*in));
	in->line = line;
	if (!s->ninputs)
		snprintf(in->name, sizeof(in->name), "input");
	for (int i = 1; i < ntok; i++) {
		const char *t = tok[i];

		if (!strncmp(t, "name=", 5)) {
			if ((st = input_name(s, t + 5, origin, line)))
				return st;
			continue;
		}

		/* dtype=int32: the samples are integer ids (an embedding's);
		 * float32 is the default */
		if (!strncmp(t, "dtype=", 6)) {
			t += 6;
			if (*t == '"' || *t == '\'')
				t++;
			if (!strncmp(t, "int32", 5) && strspn(t + 5, "\"'") == strlen(t + 5))
				is_int = true;
			else if (!strncmp(t, "bool", 4) && strspn(t + 4, "\"'") == strlen(t + 4))
				in->is_bool = true;
			else if (!(!strncmp(t, "float32", 7) && strspn(t + 7, "\"'") == strlen(t + 7)))
				return spec_error(XO_EINVAL, origin, line,
				                  "input: dtype=%s: expected int32, float32 or bool",
				                  tok[i] + 6);
			continue;
		}
		/* "input 29 1", "input 12 12 1", or Keras's shape=(29,1) / shape=29,1. */
		if (!strncmp(t, "shape=", 6))
			t += 6;
		while (*t) {
			char buf[32];
			size_t k;

			t += strspn(t, "(),");
			if (!*t)
				break;
			k = strcspn(t, "(),");
			if (k >= sizeof(buf) || nv == 3)
				return spec_error(XO_EINVAL, origin, line,
				                  "input: expected 'input H W CH', 'input LEN CH' "
				                  "or 'input FEATURES'");
			memcpy(buf, t, k);
			buf[k] = '\0';
			if (!parse_pos_int(buf, &v[nv]))
				return spec_error(XO_EINVAL, origin, line,
				                  "input: '%s' is not a positive integer", buf);
			nv++;
			t += k;
		}
	}
	if (nv == 0)
		return spec_error(XO_EINVAL, origin, line,
		                  "input: expected 'input H W CH', 'input LEN CH' or 'input "
		                  "FEATURES'");
	if (!in->name[0])
		return spec_error(XO_EINVAL, origin, line,
		                  "input: a second input needs name=NAME (the layers that take "
		                  "it say inputs=NAME)");
	in->rank = nv;
	in->len = nv >= 2 ? v[0] : 1;
	in->w = nv == 3 ? v[1] : 1;
	in->ch = v[nv - 1];
	if (!xo_mul_ok(in->len, in->w, &n) || !xo_mul_ok(n, in->ch, &n) ||
	    n > (INT64_C(1) << 40))
		return spec_error(XO_EINVAL, origin, line, "input: size overflows");
	/* ids feed the first layer, an embedding (layer_check); one input
	 * of ids, and beside it only attention masks (input_uses) */
	if (is_int && s->in_int)
		return spec_error(XO_EINVAL, origin, line,
		                  "input '%s': a second dtype=int32 input (ids of an embedding) is "
		                  "not supported yet",
		                  in->name);
	in->is_int = is_int;
	if (is_int) {
		s->in_int = true;
		s->in_ids = s->ninputs;
	}
	if (!s->ninputs) {
		s->in_rank = nv;
		s->in_len = in->len;
		s->in_w = in->w;
		s->in_ch = in->ch;
	}
	s->ninputs++;
	return XO_OK;
}

/* Names seen so far (model_internal.h): open addressing over indices into
 * the caller's items (0 is empty, i + 1 is item i), sized for
 * XO_SPEC_LAYERS_MAX + 1 at half load, so a duplicate or a name is found in
 * O(1) a layer, not by a pass over the earlier ones. */
_Static_assert(XO_NAMESET_SIZE >= 2 * (XO_SPEC_LAYERS_MAX + 1), "name set below half load");

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

int xo_nameset_add(int *set, xo_name_of_fn *name_of, const void *items, int i)
{
	const char *name = name_of(items, i);
	uint32_t k = name_hash(name) & (XO_NAMESET_SIZE - 1);

	for (; set[k]; k = (k + 1) & (XO_NAMESET_SIZE - 1))
		if (!strcmp(name_of(items, set[k] - 1), name))
			return set[k] - 1;
	set[k] = i + 1;
	return -1;
}

int xo_nameset_find(const int *set, xo_name_of_fn *name_of, const void *items, const char *name)
{
	uint32_t k = name_hash(name) & (XO_NAMESET_SIZE - 1);

	for (; set[k]; k = (k + 1) & (XO_NAMESET_SIZE - 1))
		if (!strcmp(name_of(items, set[k] - 1), name))
			return set[k] - 1;
	return -1;
}

static const char *spec_layer_name(const void *layers, int i)
{
	return ((const struct xo_layer_spec *)layers)[i].name;
}

/* The state of one xo_spec_parse across its lines. */
struct spec_parse {
	const char *origin;
	struct xo_model_spec *out;
	int counters[XO_LAYER_COUNT]; /* unnamed layers of each kind so far */
	bool have_input;
	int line, cap, *names;
};

/* -1 - k for the model input named name, else 0. */
static int model_input_find(const struct xo_model_spec *s, const char *name)
{
	for (int k = 0; k < s->ninputs; k++)
		if (!strcmp(s->input[k].name, name))
			return -1 - k;
	return 0;
}

/* Takes the attention_mask=NAME argument out of tok into l->att_mask: a
 * model input by name (a mask computed by layers is refused, as is a
 * second one); layer_wire checks the kind and the shape. */
static enum xo_status layer_att_mask(struct spec_parse *ps, struct xo_layer_spec *l, char **tok,
                                     int *ntok)
{
	const char *origin = ps->origin, *name;
	int line = ps->line;

	for (int i = 1; i < *ntok; i++) {
		if (strncmp(tok[i], "attention_mask=", 15))
			continue;
		name = tok[i] + 15;
		if (l->att_mask)
			return spec_error(XO_EFORMAT, origin, line,
			                  "argument 'attention_mask' given twice");
		l->att_mask = model_input_find(ps->out, name);
		if (!l->att_mask)
			return spec_error(XO_EINVAL, origin, line,
			                  "attention_mask=%s: '%s' is not a model input (the mask "
			                  "must be a model input; a mask computed by layers is not "
			                  "supported yet)",
			                  name, name);
		for (int j = i; j + 1 < *ntok; j++)
			tok[j] = tok[j + 1];
		(*ntok)--;
		i--;
	}
	return XO_OK;
}

/* Takes the inputs=A[,B] argument out of tok (any kind may have one) into
 * l->inputs: earlier layers by name, "input" for the model input. Without
 * one a layer takes the previous layer's output (or the input). */
static enum xo_status layer_inputs(struct spec_parse *ps, struct xo_layer_spec *l, char **tok,
                                   int *ntok)
{
	const char *origin = ps->origin;
	int line = ps->line, at = -1;
	char *val, *save = NULL;
	enum xo_status st = layer_att_mask(ps, l, tok, ntok);

	if (st)
		return st;

	for (int i = 1; i < *ntok; i++)
		if (!strncmp(tok[i], "inputs=", 7)) {
			if (at >= 0)
				return spec_error(XO_EFORMAT, origin, line,
				                  "argument 'inputs' given twice");
			at = i;
		}
	l->ninputs = 1;
	l->inputs[0] = ps->out->nlayers - 1;
	if (at < 0)
		return XO_OK;
	val = tok[at] + 7;
	for (int i = at; i + 1 < *ntok; i++)
		tok[i] = tok[i + 1];
	(*ntok)--;
	l->ninputs = 0;
	for (char *t = strtok_r(val, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int j = model_input_find(ps->out, t);

		if (!j && (j = xo_nameset_find(ps->names, spec_layer_name, ps->out->layers, t)) < 0)
			return spec_error(XO_EINVAL, origin, line,
			                  "inputs=%s: no earlier layer is named '%s' (a layer takes "
			                  "the outputs of layers above it, or '%s')",
			                  t, t, ps->out->input[0].name);
		if (l->ninputs == XO_LAYER_INPUTS_MAX)
			return spec_error(XO_EINVAL, origin, line,
			                  "inputs=: more than %d inputs (merging more tensors in one "
			                  "layer is not supported yet)",
			                  XO_LAYER_INPUTS_MAX);
		l->inputs[l->ninputs++] = j;
	}
	if (!l->ninputs)
		return spec_error(XO_EINVAL, origin, line, "inputs=: expected layer names");
	return XO_OK;
}

/* multi_head_attention's mask input: one sample [Tq][Tk] (Keras's (B, T, S)
 * attention_mask; Keras would broadcast a (1, S) or (T, 1) one, not
 * supported here), float (an int32 input feeds an embedding only). */
static enum xo_status mha_mask_wire(const struct xo_model_spec *out, struct xo_layer_spec *l,
                                    const char *origin)
{
	const struct xo_input_spec *in;

	l->p.attention_mask = l->att_mask != 0;
	if (!l->att_mask)
		return XO_OK;
	in = &out->input[-1 - l->att_mask];
	if (in->is_int)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s: attention_mask=%s is the dtype=int32 ids of an embedding (a "
		                  "mask input is float32 or bool)",
		                  l->name, in->name);
	if (in->rank != 2 || in->len != l->in_len || in->ch != l->p.len_kv)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s: attention_mask=%s must be [%" PRId64 "][%" PRId64
		                  "] (query steps, value steps; got rank %d [%" PRId64 "][%" PRId64
		                  "]): a mask Keras would broadcast is not supported yet",
		                  l->name, in->name, l->in_len, l->p.len_kv, in->rank, in->len,
		                  in->ch);
	return XO_OK;
}

/* l's input shapes from the tensors it takes: the first one's as in_*, and
 * for a merge the second one's checked against it (Keras's merge layers
 * take same-shape tensors; Concatenate's may differ in the last axis,
 * whose size goes to p.ch_b). */
static enum xo_status layer_wire(const struct xo_model_spec *out, struct xo_layer_spec *l,
                                 const char *origin)
{
	bool merge = xo_layer_kinds[l->kind].op == XO_OP_merge;
	bool mha = l->kind == XO_LAYER_MULTI_HEAD_ATTENTION;
	int64_t sh[XO_LAYER_INPUTS_MAX][4];

	if (mha && l->ninputs != 2)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s needs 2 inputs (inputs=query,value; a key other than the "
		                  "value is not supported yet)",
		                  xo_layer_kinds[l->kind].spec);
	if (!mha && l->att_mask)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s: attention_mask= is an argument of multi_head_attention only",
		                  xo_layer_kinds[l->kind].spec);
	if (!mha && l->ninputs != (merge ? 2 : 1))
		return spec_error(XO_EINVAL, origin, l->line,
		                  merge ? "%s needs 2 inputs (inputs=A,B; merging more is not "
		                          "supported yet)"
		                        : "%s takes one input (got %d in inputs=)",
		                  xo_layer_kinds[l->kind].spec, l->ninputs);
	for (int k = 0; k < l->ninputs; k++) {
		const struct xo_layer_spec *q = l->inputs[k] >= 0 ? &out->layers[l->inputs[k]] : NULL;
		const struct xo_input_spec *in = q ? NULL : &out->input[-1 - l->inputs[k]];

		sh[k][0] = q ? q->out_rank : in->rank;
		sh[k][1] = q ? q->out_len : in->len;
		sh[k][2] = q ? q->out_w : in->w;
		sh[k][3] = q ? q->out_ch : in->ch;
	}
	for (int k = 0; k < l->ninputs; k++)
		if (out->in_int && (l->inputs[k] == -1 - out->in_ids) !=
		                       (l->kind == XO_LAYER_EMBEDDING))
			return spec_error(XO_EINVAL, origin, l->line,
			                  l->kind == XO_LAYER_EMBEDDING
			                      ? "an embedding takes the dtype=int32 input '%s' (got "
			                        "another)"
			                      : "an input of dtype=int32 feeds only an embedding layer "
			                        "(got %s)",
			                  l->kind == XO_LAYER_EMBEDDING ? out->input[out->in_ids].name
			                                                : xo_layer_kinds[l->kind].spec);
	l->in_rank = (int)sh[0][0];
	l->in_len = sh[0][1];
	l->in_w = sh[0][2];
	l->in_ch = sh[0][3];
	if (mha && sh[1][0] != 2)
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s: the value must be [steps][features] (rank %d given)", l->name,
		                  (int)sh[1][0]);
	if (mha) { /* the value's steps and features: any */
		l->p.len_kv = sh[1][1];
		l->p.ch_b = sh[1][3];
		return mha_mask_wire(out, l, origin);
	}
	if (!merge)
		return XO_OK;
	if (sh[1][0] != sh[0][0])
		return spec_error(XO_EINVAL, origin, l->line,
		                  "%s: inputs of incompatible shapes: [%" PRId64 "][%" PRId64
		                  "][%" PRId64 "] (rank %d) and [%" PRId64 "][%" PRId64 "][%" PRId64
		                  "] (rank %d)",
		                  l->name, sh[0][1], sh[0][2], sh[0][3], (int)sh[0][0], sh[1][1],
		                  sh[1][2], sh[1][3], (int)sh[1][0]);
	/* the second's shape, checked against the first's by the shape rule
	 * (Concatenate's may differ along its axis) */
	l->in2_len = sh[1][1];
	l->in2_w = sh[1][2];
	l->p.ch_b = sh[1][3];
	return XO_OK;
}

/* Marks the inputs some layer takes as attention_mask= (is_mask), and
 * refuses a dtype=bool input that a layer takes as a tensor: Keras's bool
 * Input feeds a MultiHeadAttention's attention_mask here, nothing else. */
static enum xo_status input_uses(struct xo_model_spec *out, const char *origin)
{
	for (int i = 0; i < out->nlayers; i++) {
		const struct xo_layer_spec *l = &out->layers[i];

		if (l->att_mask)
			out->input[-1 - l->att_mask].is_mask = true;
	}
	/* beside the ids, attention masks only: the ids' rows are the
	 * embedding's, a mask's the attention's (model.c plan_wire) */
	for (int k = 0; out->in_int && k < out->ninputs; k++)
		if (k != out->in_ids && !out->input[k].is_mask)
			return spec_error(XO_EINVAL, origin, out->input[k].line,
			                  "input '%s': a second input beside the dtype=int32 ids of an "
			                  "embedding is not supported yet",
			                  out->input[k].name);
	for (int i = 0; i < out->nlayers; i++) {
		const struct xo_layer_spec *l = &out->layers[i];

		for (int k = 0; k < l->ninputs; k++)
			if (l->inputs[k] < 0 && out->input[-1 - l->inputs[k]].is_bool)
				return spec_error(XO_EINVAL, origin, l->line,
				                  "layer '%s': input '%s' is dtype=bool: a bool input "
				                  "is a multi_head_attention's attention_mask only",
				                  l->name, out->input[-1 - l->inputs[k]].name);
	}
	return XO_OK;
}

/* A functional model holds only the layers its output depends on: every
 * layer but the last feeds a later one. */
static enum xo_status graph_check(const struct xo_model_spec *out, const char *origin)
{
	char *used = calloc((size_t)out->nlayers, 1);

	if (!used)
		return xo_error(XO_ENOMEM, "%s: out of memory", origin);
	bool fed[XO_MODEL_INPUTS_MAX] = {false};

	for (int i = 0; i < out->nlayers; i++)
		for (int k = 0; k < out->layers[i].ninputs; k++)
			if (out->layers[i].inputs[k] >= 0)
				used[out->layers[i].inputs[k]] = 1;
			else
				fed[-1 - out->layers[i].inputs[k]] = true;
	for (int i = 0; i < out->nlayers; i++) /* a mask input feeds its layer */
		if (out->layers[i].att_mask)
			fed[-1 - out->layers[i].att_mask] = true;
	for (int k = 0; k < out->ninputs; k++)
		if (!fed[k]) {
			free(used);
			return spec_error(XO_EINVAL, origin, out->input[k].line,
			                  "input '%s' feeds no layer (every model input must be "
			                  "taken by some layer's inputs=)",
			                  out->input[k].name);
		}
	for (int i = 0; i + 1 < out->nlayers; i++)
		if (!used[i]) {
			const struct xo_layer_spec *l = &out->layers[i];

			free(used);
			return spec_error(XO_EINVAL, origin, l->line,
			                  "layer '%s': its output feeds no later layer (the model's "
			                  "output is its last layer; a model with several outputs is "
			                  "not supported yet)",
			                  l->name);
		}
	free(used);
	return XO_OK;
}

/* The kind a layer keyword names (spec name or Keras class); -1: none. */
static int kind_find(const char *word)
{
	int found = -1;

	for (int i = 0; i < XO_LAYER_COUNT; i++)
		if (!strcmp(word, xo_layer_kinds[i].spec) || !strcmp(word, xo_layer_kinds[i].keras))
			found = i;
	return found;
}

/* A new layer's parameters before its arguments: the params defaults with
 * the layers' own (Keras's) where they differ. */
static void layer_defaults(struct xo_layer_spec *l)
{
	l->p = xo_params_default();
	l->p.strides = 0;
	l->p.pool_size = 2;
	l->p.rate = -1.0f;
	l->p.filters = 0;
	l->p.kernel_size = 0;
	l->p.units = 0;
	l->p.epsilon = 1e-3f; /* batch_normalization's Keras default (the */
	l->p.momentum = 0.99f; /* params default is Adam's 1e-7) */
	l->p.rows = 0;         /* embedding: input_dim= and output_dim= required */
	if (l->kind == XO_LAYER_EMBEDDING)
		l->p.ch = 0;
	if (xo_layer_rnn_op(l->kind) != XO_OP_COUNT)
		l->p.activation = XO_ACTIVATION_TANH; /* Keras's default */
	if (l->kind == XO_LAYER_ZERO_PADDING1D)
		l->p.pad_begin = l->p.pad_end = 1; /* Keras's padding=1 */
	if (l->kind == XO_LAYER_CROPPING1D)
		l->p.pad_begin = l->p.pad_end = -1; /* Keras's cropping=(1, 1) */
	if (l->kind == XO_LAYER_ZERO_PADDING2D) /* Keras's padding=(1, 1) */
		l->p.pad_begin = l->p.pad_end = l->p.pad_begin_w = l->p.pad_end_w = 1;
	if (l->kind == XO_LAYER_UP_SAMPLING2D)
		l->p.repeats_w = 0; /* as size (Keras's int form; default (2, 2)) */
	if (l->kind == XO_LAYER_PERMUTE)
		l->p.dims = 0; /* Keras's dims has no default */
	if (l->kind == XO_LAYER_REPEAT_VECTOR)
		l->p.repeats = 0; /* Keras's n has no default */
	l->inner = -1; /* time_distributed, bidirectional: layer= required */
	if (l->kind == XO_LAYER_BIDIRECTIONAL) {
		l->p.activation = XO_ACTIVATION_TANH; /* the wrapped RNN's default */
		l->p.mode = XO_MERGE_CONCATENATE;     /* Keras's merge_mode="concat" */
	}
	if (l->kind == XO_LAYER_MULTI_HEAD_ATTENTION)
		l->p.heads = 0; /* Keras's num_heads has no default */
	if (l->kind == XO_LAYER_RE_LU)
		l->p.activation = XO_ACTIVATION_RELU; /* Keras's max_value=None */
	if (l->kind == XO_LAYER_SOFTMAX)
		l->p.activation = XO_ACTIVATION_SOFTMAX;
	if (l->kind == XO_LAYER_RESCALING)
		l->p.multiplier = NAN; /* Keras's scale has no default */
	if (l->kind == XO_LAYER_NORMALIZATION)
		l->norm_var = -1.0f; /* not given (mean= and variance= go together) */
	/* leaky_relu's slope: the LeakyReLU layer's default 0.3; the
	 * activation string's (Dense(activation="leaky_relu") ...) 0.2 */
	if (l->kind == XO_LAYER_LEAKY_RE_LU)
		l->p.activation = XO_ACTIVATION_LEAKY_RELU;
	else
		l->p.negative_slope = 0.2f;
	if (l->kind == XO_LAYER_ELU) /* alpha 1.0, Keras's default, as "elu"'s */
		l->p.activation = XO_ACTIVATION_ELU;
}

/* The key=value arguments of a layer line (tok[1..ntok-1]), each checked
 * against the kind's argument list and set. */
static enum xo_status layer_args(struct xo_layer_spec *l, char **tok, int ntok,
                                 const char *origin, int line, bool *named)
{
	enum xo_status st;
	const char *kname = xo_layer_kinds[l->kind].spec;

	for (int i = 1; i < ntok; i++) {
		const char *const *allowed = spec_kinds[l->kind].args;
		char *eq = strchr(tok[i], '='), *val;
		bool ok = false;
		size_t vlen;

		if (!eq || eq == tok[i] || !eq[1])
			return spec_error(XO_EFORMAT, origin, line,
			                  "expected key=value, got '%s'", tok[i]);
		*eq = '\0';
		for (int a = 0; allowed[a]; a++)
			ok |= !strcmp(allowed[a], tok[i]);
		if (!ok)
			return spec_error(XO_EFORMAT, origin, line,
			                  "unknown argument '%s' for %s", tok[i], kname);
		for (int j = 1; j < i; j++)
			if (!strcmp(tok[j], tok[i]))
				return spec_error(XO_EFORMAT, origin, line,
				                  "argument '%s' given twice", tok[i]);
		/* Keras writes strings quoted (activation="relu",
		 * padding='same'): one pair of matching quotes is dropped. */
		val = eq + 1;
		vlen = strlen(val);
		if (vlen >= 3 && (val[0] == '"' || val[0] == '\'') &&
		    val[vlen - 1] == val[0]) {
			val[vlen - 1] = '\0';
			val++;
		}
		st = set_arg(l, tok[i], val, origin, line, named);
		if (st)
			return st;
	}
	return XO_OK;
}

/* What a layer line must hold beyond its arguments' own checks: the
 * required arguments, and an embedding exactly where integer ids are. */
static enum xo_status layer_check(const struct xo_model_spec *out, const struct xo_layer_spec *l,
                                  char **tok, int ntok, const char *origin, int line)
{
	const char *kname = xo_layer_kinds[l->kind].spec, *needs;

	if (l->kind == XO_LAYER_ACTIVATION) {
		bool given = false;

		for (int i = 1; i < ntok; i++)
			given |= !strcmp(tok[i], "activation");
		if (!given)
			return spec_error(XO_EINVAL, origin, line,
			                  "activation needs activation= (Keras's Activation "
			                  "has no default)");
	}
	if (l->kind == XO_LAYER_EMBEDDING && (!l->p.rows || !l->p.ch))
		return spec_error(XO_EINVAL, origin, line,
		                  "embedding needs input_dim= and output_dim=");
	/* ids come from the input alone: an embedding is the first layer,
	 * on an int32 input, and an int32 input feeds an embedding */
	if (l->kind == XO_LAYER_EMBEDDING && (out->nlayers || !out->in_int))
		return spec_error(XO_EINVAL, origin, line,
		                  out->nlayers ? "embedding must be the first layer, the model's "
		                                 "only one (it reads the int32 ids input; a "
		                                 "second embedding is not supported yet)"
		                               : "embedding needs integer ids: the input line "
		                                 "must say dtype=int32 (float inputs are "
		                                 "refused)");
	/* the model's mask comes from one source: a Masking is the first
	 * layer, on the model's only input (a float sequence) */
	if (l->kind == XO_LAYER_MASKING && (out->nlayers || out->ninputs > 1 || out->in_int))
		return spec_error(XO_EINVAL, origin, line,
		                  out->in_int ? "masking needs a float input (the input line says "
		                                "dtype=int32)"
		                  : out->nlayers
		                      ? "masking must be the first layer, on the model's input (a "
		                        "Masking elsewhere is not supported)"
		                      : "masking on a model of several inputs is not supported");
	if (l->kind != XO_LAYER_EMBEDDING && !out->nlayers && out->in_int)
		return spec_error(XO_EINVAL, origin, line,
		                  "an input of dtype=int32 feeds only an embedding layer (got "
		                  "%s)",
		                  kname);
	if (l->kind == XO_LAYER_TIME_DISTRIBUTED || l->kind == XO_LAYER_BIDIRECTIONAL) {
		const char *const *own;
		bool bi = l->kind == XO_LAYER_BIDIRECTIONAL;

		if (l->inner < 0)
			return spec_error(XO_EINVAL, origin, line, "%s needs layer= (%s)", kname,
			                  bi ? "simple_rnn, lstm or gru" : "dense or conv1d");
		/* the wrapped kind's arguments only */
		for (int i = 1; i < ntok; i++) {
			bool ok = !strcmp(tok[i], "layer") || (bi && !strcmp(tok[i], "merge_mode"));

			for (own = spec_kinds[l->inner].args; *own; own++)
				ok |= !strcmp(*own, tok[i]);
			if (!ok)
				return spec_error(XO_EFORMAT, origin, line,
				                  "unknown argument '%s' for %s over %s", tok[i], kname,
				                  xo_layer_kinds[l->inner].spec);
		}
		needs = spec_kinds[l->inner].needs(&l->p);
		if (needs)
			return spec_error(XO_EINVAL, origin, line, "%s needs %s", kname, needs);
	}
	needs = spec_kinds[l->kind].needs ? spec_kinds[l->kind].needs(&l->p) : NULL;
	if (needs)
		return spec_error(XO_EINVAL, origin, line, "%s needs %s", kname, needs);
	return XO_OK;
}

/* A layer line of no kind: the error lists every kind, from the kind
 * table (so a new kind is named there with no edit here). */
static enum xo_status unknown_kind(const char *word, const char *origin, int line)
{
	char kinds[XO_LAYER_COUNT * 32];
	size_t used = 0;

	kinds[0] = '\0';
	for (int k = 0; k < XO_LAYER_COUNT && used < sizeof(kinds); k++) {
		int w = snprintf(kinds + used, sizeof(kinds) - used, "%s%s",
		                 k == XO_LAYER_COUNT - 1 ? " or " : ", ", xo_layer_kinds[k].spec);

		used += w > 0 ? (size_t)w : 0;
	}
	/* xo_error directly: the list is longer than spec_error's buffer */
	return xo_error(XO_EFORMAT, "%s:%d: unknown layer '%s' (expected input%s)", origin, line,
	                word, kinds);
}

/* One layer line (tok[0] names its kind): the layer appended to ps->out
 * with its arguments, name and shapes resolved. */
static enum xo_status layer_line(struct spec_parse *ps, char **tok, int ntok)
{
	struct xo_model_spec *out = ps->out;
	const char *origin = ps->origin, *kname;
	int line = ps->line, kind = kind_find(tok[0]);
	struct xo_layer_spec *l;
	bool named = false;
	enum xo_status st;

	if (kind < 0)
		return unknown_kind(tok[0], origin, line);
	kname = xo_layer_kinds[kind].spec;
	if (!ps->have_input)
		return spec_error(XO_EFORMAT, origin, line,
		                  "missing input line: the first layer line must be "
		                  "'input LEN CH'");
	if (out->nlayers == XO_SPEC_LAYERS_MAX)
		return spec_error(XO_EINVAL, origin, line, "more than %d layers, the limit for a model",
		                  XO_SPEC_LAYERS_MAX);
	if (!ps->names && !(ps->names = calloc(XO_NAMESET_SIZE, sizeof(*ps->names))))
		return xo_error(XO_ENOMEM, "%s: out of memory", origin);
	if (out->nlayers == ps->cap) {
		int ncap = ps->cap ? ps->cap * 2 : 8;
		struct xo_layer_spec *nl = realloc(out->layers, sizeof(*nl) * (size_t)ncap);

		if (!nl)
			return xo_error(XO_ENOMEM, "%s: out of memory", origin);
		out->layers = nl;
		ps->cap = ncap;
	}
	l = &out->layers[out->nlayers];
	memset(l, 0, sizeof(*l));
	l->kind = (enum xo_layer_kind)kind;
	l->line = line;
	layer_defaults(l);
	if ((st = layer_inputs(ps, l, tok, &ntok)) ||
	    (st = layer_args(l, tok, ntok, origin, line, &named)) ||
	    (st = layer_check(out, l, tok, ntok, origin, line)))
		return st;
	if (!named) {
		/* Keras: the first unnamed layer of a kind is "dense",
		 * the next "dense_1", ... */
		int *c = &ps->counters[kind];

		if (*c)
			snprintf(l->name, sizeof(l->name), "%s_%d", kname, *c);
		else
			snprintf(l->name, sizeof(l->name), "%s", kname);
		(*c)++;
	}
	if (model_input_find(out, l->name))
		return spec_error(XO_EINVAL, origin, line,
		                  "layer name '%s' names a model input (line %d)", l->name,
		                  out->input[-1 - model_input_find(out, l->name)].line);
	{
		int j = xo_nameset_add(ps->names, spec_layer_name, out->layers, out->nlayers);

		if (j >= 0)
			return spec_error(XO_EINVAL, origin, line, "duplicate layer name '%s' (line %d)",
			                  l->name, out->layers[j].line);
	}
	if (l->ninputs != 1 || l->inputs[0] != out->nlayers - 1)
		out->graph = true;
	st = layer_wire(out, l, origin);
	if (!st)
		st = layer_shape(l, origin);
	if (!st)
		st = layer_mask(out, l, origin);
	if (st)
		return st;
	out->nlayers++;
	return XO_OK;
}

/* One line that is not a layer: the compile line or the input line.
 * *done: it was one of them. */
static enum xo_status header_line(struct spec_parse *ps, char **tok, int ntok, bool *done)
{
	struct xo_model_spec *out = ps->out;
	const char *origin = ps->origin;
	int line = ps->line;
	enum xo_status st;

	*done = true;
	if (!strcmp(tok[0], "compile")) {
		if (out->compile_line)
			return spec_error(XO_EFORMAT, origin, line,
			                  "a second compile line (line %d has one)", out->compile_line);
		st = parse_compile(&out->compile, tok, ntok, origin, line);
		if (!st)
			out->compile_line = line;
		return st;
	}
	if (!strcmp(tok[0], "input") || !strcmp(tok[0], "Input")) {
		/* several input lines: a multi-input model, the inputs in
		 * Keras's order; all of them above the first layer */
		if (out->nlayers)
			return spec_error(XO_EFORMAT, origin, line,
			                  "an input line after a layer (the input lines come "
			                  "first)");
		st = parse_input(out, tok, ntok, origin, line);
		if (!st && out->ninputs > 1)
			out->graph = true;
		if (!st)
			ps->have_input = true;
		return st;
	}
	*done = false;
	return XO_OK;
}

enum xo_status xo_spec_parse(const char *text, const char *origin, struct xo_model_spec *out)
{
	struct spec_parse ps = {.origin = origin, .out = out};
	const char *cur = text;
	enum xo_status st = XO_OK;

	memset(out, 0, sizeof(*out));
	out->compile = xo_compile_default();
	if (!text)
		return xo_error(XO_EINVAL, "%s: no spec text", origin);
	while (*cur) {
		char buf[MAX_LINE], *tok[MAX_TOKENS], *hash;
		size_t len = strcspn(cur, "\n");
		bool done;
		int ntok;

		ps.line++;
		if (len >= sizeof(buf)) {
			st = spec_error(XO_EFORMAT, origin, ps.line, "line longer than %d characters",
			                MAX_LINE - 1);
			goto out_free;
		}
		memcpy(buf, cur, len);
		buf[len] = '\0';
		cur += len;
		if (*cur == '\n')
			cur++;
		hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		ntok = tokenize(buf, tok);
		if (ntok < 0) {
			st = spec_error(XO_EFORMAT, origin, ps.line, "too many arguments");
			goto out_free;
		}
		if (ntok == 0)
			continue;
		st = header_line(&ps, tok, ntok, &done);
		if (!st && !done)
			st = layer_line(&ps, tok, ntok);
		if (st)
			goto out_free;
	}
	if (!ps.have_input) {
		st = spec_error(XO_EFORMAT, origin, ps.line ? ps.line : 1,
		                "missing input line ('input LEN CH')");
		goto out_free;
	}
	if (!out->nlayers) {
		st = spec_error(XO_EFORMAT, origin, ps.line, "no layers after the input line");
		goto out_free;
	}
	if ((st = input_uses(out, origin)) || (out->graph && (st = graph_check(out, origin))) ||
	    (st = mask_runtime(out, origin)))
		goto out_free;
	free(ps.names);
	return XO_OK;

out_free:
	xo_spec_free(out);
	free(ps.names);
	return st;
}

void xo_spec_free(struct xo_model_spec *s)
{
	if (!s)
		return;
	free(s->layers);
	s->layers = NULL;
	s->nlayers = 0;
}

/* ---- Philox helpers ------------------------------------------------------ */


void xo_philox_shuffle(int32_t *idx, int64_t n, uint64_t seed, uint32_t a, uint32_t b)
{
	for (int64_t i = 0; i < n; i++)
		idx[i] = (int32_t)i;
	/* Fisher-Yates from the top; j = floor(u32 * (i + 1) / 2^32) is uniform
	 * on 0..i up to a bias below (i + 1) / 2^32. */
	for (int64_t i = n - 1; i > 0; i--) {
		uint64_t r = xo_philox_u32(seed, a, b, (uint64_t)i);
		int64_t j = (int64_t)((r * (uint64_t)(i + 1)) >> 32);
		int32_t t = idx[i];

		idx[i] = idx[j];
		idx[j] = t;
	}
}
