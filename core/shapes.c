/*
 * shapes.c - what every op call must look like: the slot shapes derived from
 * the parameters (xo_op_shapes) and the checks every call passes before it
 * reaches a backend (xo_op_validate). One place, so no kernel re-checks and
 * no backend can disagree about a shape.
 */
#include <math.h>
#include <inttypes.h>
#include <string.h>

#include "xo/backend.h"

/* Largest tensor: elements * 4 bytes must fit in int64 and size_t. */
#define XO_MAX_ELEMS (INT64_MAX / 8)

static void slot(struct xo_slot_shape *s, int ndim, const int64_t *d, bool optional)
{
	s->ndim = ndim;
	s->dtype = XO_DTYPE_F32;
	s->optional = optional;
	for (int i = 0; i < ndim; i++)
		s->dim[i] = d[i];
}

#define SLOT(s, opt, ...)                                                          \
	slot(&(s), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),      \
	     (int64_t[]){__VA_ARGS__}, opt)

static enum xo_status positive(const char *op, const char *key, int64_t v)
{
	if (v < 1)
		return xo_error(XO_EINVAL, "%s: %s=%" PRId64 " must be >= 1", op, key, v);
	return XO_OK;
}

#define NEED(key)                                                               \
	do {                                                                    \
		enum xo_status st_ = positive(name, #key, p->key);              \
		if (st_)                                                        \
			return st_;                                             \
	} while (0)

/* Product of a slot's dims, overflow-checked. */
static enum xo_status slot_elems(const char *name, const struct xo_slot_shape *s, int64_t *out)
{
	int64_t n = 1;

	for (int i = 0; i < s->ndim; i++)
		if (!xo_mul_ok(n, s->dim[i], &n) || n > XO_MAX_ELEMS)
			return xo_error(XO_EOVERFLOW, "%s: tensor size overflows", name);
	*out = n;
	return XO_OK;
}

/*
 * The recurrent ops' own rules: sizes small enough that every derived size
 * (7 * units, len, ch) fits a 32-bit int as the OpenCL kernels take them,
 * and the activations the ops implement (ops.def): activation tanh (relu
 * too for simple_rnn), recurrent_activation sigmoid (Keras's defaults, and
 * SimpleRNN's common relu variant). Anything else is refused by name.
 */
static enum xo_status rnn_check(const char *name, enum xo_op op, const struct xo_params *p)
{
	const int64_t umax = INT64_C(2147483647) / 8;
	const struct {
		const char *key;
		int64_t v, max;
	} lim[] = {{"units", p->units, umax},
		   {"len", p->len, XO_GEOMETRY_MAX},
		   {"ch", p->ch, XO_GEOMETRY_MAX},
		   {"batch", p->batch, XO_GEOMETRY_MAX}};

	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++)
		if (lim[i].v > lim[i].max)
			return xo_error(XO_EOVERFLOW, "%s: %s=%" PRId64 " is above the limit %" PRId64,
					name, lim[i].key, lim[i].v, lim[i].max);
	if (p->activation != XO_ACTIVATION_TANH &&
	    !(op == XO_OP_simple_rnn && p->activation == XO_ACTIVATION_RELU))
		return xo_error(XO_EINVAL, "%s: activation=%s is not supported (%s)", name,
				(unsigned)p->activation <= XO_ACTIVATION_LAST
				    ? xo_activation_name(p->activation)
				    : "?",
				op == XO_OP_simple_rnn ? "tanh or relu" : "tanh");
	if (op != XO_OP_simple_rnn && p->recurrent_activation != XO_ACTIVATION_SIGMOID)
		return xo_error(XO_EINVAL,
				"%s: recurrent_activation=%s is not supported (sigmoid)", name,
				(unsigned)p->recurrent_activation <= XO_ACTIVATION_LAST
				    ? xo_activation_name(p->recurrent_activation)
				    : "?");
	return XO_OK;
}

/* conv1d */
static enum xo_status shapes_conv1d(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                    struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	int64_t out = 0, pad = 0;
	enum xo_status st;

	NEED(batch);
	NEED(ch);
	NEED(filters);
	st = xo_conv1d_geometry(p, &out, &pad);
	if (st)
		return st;
	if ((unsigned)p->activation > XO_ACTIVATION_FUSED_LAST)
		return xo_error(XO_EINVAL,
		                "conv1d: activation=%s is not fused (linear, relu, sigmoid or "
		                "softmax); apply it as its own op",
		                (unsigned)p->activation <= XO_ACTIVATION_LAST
		                    ? xo_activation_name(p->activation)
		                    : "?");
	SLOT(src[0], false, p->batch, p->len, p->ch);
	SLOT(src[1], false, p->kernel_size, p->ch, p->filters);
	if (p->use_bias)
		SLOT(src[2], false, p->filters);
	if (dir == XO_DIR_FWD) {
		SLOT(dst[0], false, p->batch, out, p->filters);
	} else {
		SLOT(src[2], false, p->batch, out, p->filters);
		SLOT(src[3], false, p->batch, out, p->filters);
		SLOT(dst[0], true, p->batch, p->len, p->ch);
		SLOT(dst[1], false, p->kernel_size, p->ch, p->filters);
		if (p->use_bias)
			SLOT(dst[2], false, p->filters);
	}
	return XO_OK;
}
#define SHAPES_conv1d shapes_conv1d

/* conv2d */
static enum xo_status shapes_conv2d(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                    struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	int64_t oh, ow, pt, pl;
	struct xo_params q = xo_params_width_axis(p);
	enum xo_status st;

	NEED(batch);
	NEED(ch);
	NEED(filters);
	st = xo_conv2d_geometry(p, &oh, &ow, &pt, &pl);
	if (st)
		return st;
	if ((unsigned)p->activation > XO_ACTIVATION_FUSED_LAST)
		return xo_error(XO_EINVAL,
		                "conv2d: activation=%s is not fused (linear, relu, sigmoid or "
		                "softmax); apply it as its own op",
		                (unsigned)p->activation <= XO_ACTIVATION_LAST
		                    ? xo_activation_name(p->activation)
		                    : "?");
	SLOT(src[0], false, p->batch, p->len, p->width, p->ch);
	SLOT(src[1], false, p->kernel_size, q.kernel_size, p->ch, p->filters);
	if (p->use_bias)
		SLOT(src[2], false, p->filters);
	if (dir == XO_DIR_FWD) {
		SLOT(dst[0], false, p->batch, oh, ow, p->filters);
	} else {
		SLOT(src[2], false, p->batch, oh, ow, p->filters);
		SLOT(src[3], false, p->batch, oh, ow, p->filters);
		SLOT(dst[0], true, p->batch, p->len, p->width, p->ch);
		SLOT(dst[1], false, p->kernel_size, q.kernel_size, p->ch, p->filters);
		if (p->use_bias)
			SLOT(dst[2], false, p->filters);
	}
	return XO_OK;
}
#define SHAPES_conv2d shapes_conv2d

/* max_pooling1d */
static enum xo_status shapes_max_pooling1d(enum xo_op op, enum xo_dir dir,
                                           const struct xo_params *p, struct xo_slot_shape *src,
                                           struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	int64_t out = 0, pad = 0;
	enum xo_status st;

	NEED(batch);
	NEED(ch);
	st = xo_pool1d_geometry(p, &out, &pad);
	if (st)
		return st;
	SLOT(src[0], false, p->batch, p->len, p->ch);
	if (dir == XO_DIR_FWD) {
		SLOT(dst[0], false, p->batch, out, p->ch);
	} else {
		SLOT(src[1], false, p->batch, out, p->ch);
		SLOT(dst[0], false, p->batch, p->len, p->ch);
	}
	return XO_OK;
}
#define SHAPES_max_pooling1d shapes_max_pooling1d

/* average_pooling1d */
static enum xo_status shapes_average_pooling1d(enum xo_op op, enum xo_dir dir,
                                               const struct xo_params *p, struct xo_slot_shape *src,
                                               struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	int64_t out = 0, pad = 0;
	enum xo_status st;

	NEED(batch);
	NEED(ch);
	st = xo_pool1d_geometry_of(op, p, &out, &pad);
	if (st)
		return st;
	if (dir == XO_DIR_FWD) {
		SLOT(src[0], false, p->batch, p->len, p->ch);
		SLOT(dst[0], false, p->batch, out, p->ch);
	} else {
		SLOT(src[0], false, p->batch, out, p->ch);
		SLOT(dst[0], false, p->batch, p->len, p->ch);
	}
	return XO_OK;
}
#define SHAPES_average_pooling1d shapes_average_pooling1d

/* global_average_pooling1d, global_max_pooling1d */
static enum xo_status shapes_global_pooling1d(enum xo_op op, enum xo_dir dir,
                                              const struct xo_params *p, struct xo_slot_shape *src,
                                              struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	NEED(batch);
	NEED(len);
	NEED(ch);
	if (p->mask_zero && op == XO_OP_global_average_pooling1d) {
		/* the ids whose zeros mask steps out, after x (fwd) or dy (bwd) */
		SLOT(src[1], false, p->batch, p->len);
		src[1].dtype = XO_DTYPE_I32;
	}
	if (dir == XO_DIR_FWD) {
		SLOT(src[0], false, p->batch, p->len, p->ch);
		SLOT(dst[0], false, p->batch, p->ch);
	} else if (op == XO_OP_global_max_pooling1d) {
		SLOT(src[0], false, p->batch, p->len, p->ch);
		SLOT(src[1], false, p->batch, p->ch);
		SLOT(dst[0], false, p->batch, p->len, p->ch);
	} else {
		SLOT(src[0], false, p->batch, p->ch);
		SLOT(dst[0], false, p->batch, p->len, p->ch);
	}
	return XO_OK;
}
#define SHAPES_global_average_pooling1d shapes_global_pooling1d
#define SHAPES_global_max_pooling1d     shapes_global_pooling1d

/* max_pooling2d, average_pooling2d */
static enum xo_status shapes_pooling2d(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                       struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	struct xo_pool2d_geom g;
	enum xo_status st;

	NEED(batch);
	NEED(ch);
	st = xo_pool2d_geometry_of(op, p, &g);
	if (st)
		return st;
	if (dir == XO_DIR_FWD) {
		SLOT(src[0], false, p->batch, p->len, p->width, p->ch);
		SLOT(dst[0], false, p->batch, g.out_h, g.out_w, p->ch);
	} else if (op == XO_OP_max_pooling2d) {
		SLOT(src[0], false, p->batch, p->len, p->width, p->ch);
		SLOT(src[1], false, p->batch, g.out_h, g.out_w, p->ch);
		SLOT(dst[0], false, p->batch, p->len, p->width, p->ch);
	} else {
		SLOT(src[0], false, p->batch, g.out_h, g.out_w, p->ch);
		SLOT(dst[0], false, p->batch, p->len, p->width, p->ch);
	}
	return XO_OK;
}
#define SHAPES_max_pooling2d     shapes_pooling2d
#define SHAPES_average_pooling2d shapes_pooling2d

/* global_average_pooling2d, global_max_pooling2d */
static enum xo_status shapes_global_pooling2d(enum xo_op op, enum xo_dir dir,
                                              const struct xo_params *p, struct xo_slot_shape *src,
                                              struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	NEED(batch);
	NEED(len);
	NEED(width);
	NEED(ch);
	if (dir == XO_DIR_FWD) {
		SLOT(src[0], false, p->batch, p->len, p->width, p->ch);
		SLOT(dst[0], false, p->batch, p->ch);
	} else if (op == XO_OP_global_max_pooling2d) {
		SLOT(src[0], false, p->batch, p->len, p->width, p->ch);
		SLOT(src[1], false, p->batch, p->ch);
		SLOT(dst[0], false, p->batch, p->len, p->width, p->ch);
	} else {
		SLOT(src[0], false, p->batch, p->ch);
		SLOT(dst[0], false, p->batch, p->len, p->width, p->ch);
	}
	return XO_OK;
}
#define SHAPES_global_average_pooling2d shapes_global_pooling2d
#define SHAPES_global_max_pooling2d     shapes_global_pooling2d

/* dense */
static enum xo_status shapes_dense(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                   struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	NEED(batch);
	NEED(ch);
	NEED(units);
	if ((unsigned)p->activation > XO_ACTIVATION_FUSED_LAST)
		return xo_error(XO_EINVAL,
		                "dense: activation=%s is not fused (linear, relu, sigmoid or "
		                "softmax); apply it as its own op",
		                (unsigned)p->activation <= XO_ACTIVATION_LAST
		                    ? xo_activation_name(p->activation)
		                    : "?");
	SLOT(src[0], false, p->batch, p->ch);
	SLOT(src[1], false, p->ch, p->units);
	if (p->use_bias)
		SLOT(src[2], false, p->units);
	if (dir == XO_DIR_FWD) {
		SLOT(dst[0], false, p->batch, p->units);
	} else {
		SLOT(src[2], false, p->batch, p->units);
		SLOT(src[3], false, p->batch, p->units);
		SLOT(dst[0], true, p->batch, p->ch);
		SLOT(dst[1], false, p->ch, p->units);
		if (p->use_bias)
			SLOT(dst[2], false, p->units);
	}
	return XO_OK;
}
#define SHAPES_dense shapes_dense

/* simple_rnn, lstm, gru */
static enum xo_status shapes_rnn(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                 struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	int64_t g = xo_rnn_gates(op), gu, su;
	int64_t ydim_len = p->return_sequences ? p->len : 0;
	enum xo_status st;

	NEED(batch);
	NEED(len);
	NEED(ch);
	NEED(units);
	st = rnn_check(name, op, p);
	if (st)
		return st;
	gu = g * p->units;
	su = xo_rnn_ws_blocks(op) * p->units;
	SLOT(src[0], false, p->batch, p->len, p->ch);
	SLOT(src[1], false, p->ch, gu);
	SLOT(src[2], false, p->units, gu);
	if (dir == XO_DIR_FWD) {
		if (p->use_bias && op == XO_OP_gru && p->reset_after)
			SLOT(src[3], false, 2, gu);
		else if (p->use_bias)
			SLOT(src[3], false, gu);
		if (ydim_len)
			SLOT(dst[0], false, p->batch, p->len, p->units);
		else
			SLOT(dst[0], false, p->batch, p->units);
		/* ws optional: NULL is the inference form (ops.def) */
		SLOT(dst[1], true, p->batch, p->len, su);
		if (p->mask_zero) { /* the ids whose zeros mask steps, after bias */
			SLOT(src[4], false, p->batch, p->len);
			src[4].dtype = XO_DTYPE_I32;
		}
	} else {
		SLOT(src[3], false, p->batch, p->len, su);
		if (ydim_len)
			SLOT(src[4], false, p->batch, p->len, p->units);
		else
			SLOT(src[4], false, p->batch, p->units);
		SLOT(dst[0], true, p->batch, p->len, p->ch);
		SLOT(dst[1], false, p->ch, gu);
		SLOT(dst[2], false, p->units, gu);
		if (p->use_bias && op == XO_OP_gru && p->reset_after)
			SLOT(dst[3], false, 2, gu);
		else if (p->use_bias)
			SLOT(dst[3], false, gu);
		if (p->mask_zero) { /* the ids, after dy */
			SLOT(src[5], false, p->batch, p->len);
			src[5].dtype = XO_DTYPE_I32;
		}
	}
	return XO_OK;
}
#define SHAPES_simple_rnn shapes_rnn
#define SHAPES_lstm       shapes_rnn
#define SHAPES_gru        shapes_rnn

/* relu, sigmoid, softmax, tanh, elu, gelu, softplus, dropout, relu6,
 * hard_sigmoid, silu, log_softmax, leaky_relu */
static enum xo_status shapes_elementwise(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                         struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	NEED(batch);
	NEED(len);
	NEED(ch);
	if (op == XO_OP_dropout && !(p->rate >= 0.0f && p->rate < 1.0f))
		return xo_error(XO_EINVAL, "dropout: rate=%g must be in [0, 1)", (double)p->rate);
	if (op == XO_OP_elu && !isfinite(p->alpha))
		return xo_error(XO_EINVAL, "elu: alpha=%g must be finite", (double)p->alpha);
	if (op == XO_OP_leaky_relu && !isfinite(p->negative_slope))
		return xo_error(XO_EINVAL, "leaky_relu: negative_slope=%g must be finite",
		                (double)p->negative_slope);
	SLOT(src[0], false, p->batch, p->len, p->ch);
	SLOT(dst[0], false, p->batch, p->len, p->ch);
	if (dir == XO_DIR_BWD && op != XO_OP_dropout)
		SLOT(src[1], false, p->batch, p->len, p->ch);
	return XO_OK;
}
#define SHAPES_relu     shapes_elementwise
#define SHAPES_sigmoid  shapes_elementwise
#define SHAPES_softmax  shapes_elementwise
#define SHAPES_tanh     shapes_elementwise
#define SHAPES_elu      shapes_elementwise
#define SHAPES_gelu     shapes_elementwise
#define SHAPES_softplus shapes_elementwise
#define SHAPES_dropout  shapes_elementwise
#define SHAPES_relu6    shapes_elementwise
#define SHAPES_leaky_relu shapes_elementwise
#define SHAPES_hard_sigmoid shapes_elementwise
#define SHAPES_silu     shapes_elementwise
#define SHAPES_log_softmax shapes_elementwise

/* flatten */
static enum xo_status shapes_flatten(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                     struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	int64_t flat = 0;

	NEED(batch);
	NEED(len);
	NEED(ch);
	if (!xo_mul_ok(p->len, p->ch, &flat))
		return xo_error(XO_EOVERFLOW, "flatten: len * ch overflows");
	if (dir == XO_DIR_FWD) {
		SLOT(src[0], false, p->batch, p->len, p->ch);
		SLOT(dst[0], false, p->batch, flat);
	} else {
		SLOT(src[0], false, p->batch, flat);
		SLOT(dst[0], false, p->batch, p->len, p->ch);
	}
	return XO_OK;
}
#define SHAPES_flatten shapes_flatten

/* categorical_crossentropy, binary_crossentropy, mean_squared_error, binary_accuracy */
static enum xo_status shapes_loss(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                  struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	/* p, t [batch][ch]; fwd a scalar (loss or count), bwd d / d p */
	NEED(batch);
	NEED(ch);
	SLOT(src[0], false, p->batch, p->ch);
	SLOT(src[1], false, p->batch, p->ch);
	if (dir == XO_DIR_FWD)
		SLOT(dst[0], false, 1);
	else
		SLOT(dst[0], false, p->batch, p->ch);
	return XO_OK;
}
#define SHAPES_categorical_crossentropy shapes_loss
#define SHAPES_binary_crossentropy      shapes_loss
#define SHAPES_mean_squared_error       shapes_loss
#define SHAPES_binary_accuracy          shapes_loss

/* batch_normalization */
static enum xo_status shapes_batch_normalization(enum xo_op op, enum xo_dir dir,
                                                 const struct xo_params *p,
                                                 struct xo_slot_shape *src,
                                                 struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	NEED(batch);
	NEED(len);
	NEED(ch);
	if (!(p->epsilon > 0.0f) || !(p->momentum >= 0.0f && p->momentum <= 1.0f))
		return xo_error(XO_EINVAL,
		                "batch_normalization: need epsilon > 0 and 0 <= momentum <= 1");
	SLOT(src[0], false, p->batch, p->len, p->ch);
	/* bwd: dx optional (a first layer's input needs no gradient) */
	SLOT(dst[0], dir == XO_DIR_BWD, p->batch, p->len, p->ch);
	if (dir == XO_DIR_FWD) {
		if (p->scale)
			SLOT(src[1], false, p->ch);
		if (p->center)
			SLOT(src[2], false, p->ch);
		SLOT(dst[1], false, p->ch);
		SLOT(dst[2], false, p->ch);
	} else {
		if (p->scale) {
			SLOT(src[1], false, p->ch);
			SLOT(dst[1], false, p->ch);
		}
		SLOT(src[2], false, p->batch, p->len, p->ch);
		if (p->center)
			SLOT(dst[2], false, p->ch);
	}
	return XO_OK;
}
#define SHAPES_batch_normalization shapes_batch_normalization

/* normalization: per-channel mean and variance beside x (ops.def); the
 * backward reads the variance (its denominators) and dy */
static enum xo_status shapes_normalization(enum xo_op op, enum xo_dir dir,
                                           const struct xo_params *p,
                                           struct xo_slot_shape *src,
                                           struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	NEED(batch);
	NEED(len);
	NEED(ch);
	SLOT(dst[0], false, p->batch, p->len, p->ch);
	if (dir == XO_DIR_FWD) {
		SLOT(src[0], false, p->batch, p->len, p->ch);
		SLOT(src[1], false, p->ch);
		SLOT(src[2], false, p->ch);
	} else {
		SLOT(src[0], false, p->ch);
		SLOT(src[1], false, p->batch, p->len, p->ch);
	}
	return XO_OK;
}
#define SHAPES_normalization shapes_normalization

/* layer_normalization: the statistics are per row (over ch), so no state */
static enum xo_status shapes_layer_normalization(enum xo_op op, enum xo_dir dir,
                                                 const struct xo_params *p,
                                                 struct xo_slot_shape *src,
                                                 struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	NEED(batch);
	NEED(len);
	NEED(ch);
	if (!(p->epsilon > 0.0f))
		return xo_error(XO_EINVAL, "layer_normalization: need epsilon > 0");
	SLOT(src[0], false, p->batch, p->len, p->ch);
	/* bwd: dx optional (a first layer's input needs no gradient) */
	SLOT(dst[0], dir == XO_DIR_BWD, p->batch, p->len, p->ch);
	if (p->scale)
		SLOT(src[1], false, p->ch);
	if (dir == XO_DIR_FWD) {
		if (p->center)
			SLOT(src[2], false, p->ch);
		return XO_OK;
	}
	SLOT(src[2], false, p->batch, p->len, p->ch);
	if (p->scale)
		SLOT(dst[1], false, p->ch);
	if (p->center)
		SLOT(dst[2], false, p->ch);
	return XO_OK;
}
#define SHAPES_layer_normalization shapes_layer_normalization

/* adam */
static enum xo_status shapes_adam(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                  struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	(void)dir;
	NEED(size);
	NEED(iteration);
	if (!(p->lr > 0.0f) || !(p->beta_1 >= 0.0f && p->beta_1 < 1.0f) ||
	    !(p->beta_2 >= 0.0f && p->beta_2 < 1.0f) || !(p->epsilon >= 0.0f))
		return xo_error(XO_EINVAL,
		                "adam: need lr > 0, 0 <= beta_1, beta_2 < 1, epsilon >= 0");
	SLOT(src[0], false, p->size);
	SLOT(dst[0], false, p->size);
	SLOT(dst[1], false, p->size);
	SLOT(dst[2], false, p->size);
	return XO_OK;
}
#define SHAPES_adam shapes_adam

/* sparse_categorical_crossentropy, sparse_categorical_accuracy */
static enum xo_status shapes_sparse_loss(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                         struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	NEED(batch);
	NEED(ch);
	SLOT(src[0], false, p->batch, p->ch);
	SLOT(src[1], false, p->batch);
	src[1].dtype = XO_DTYPE_I32;
	if (op == XO_OP_sparse_categorical_crossentropy && dir == XO_DIR_BWD)
		SLOT(dst[0], false, p->batch, p->ch);
	else
		SLOT(dst[0], false, 1);
	return XO_OK;
}
#define SHAPES_sparse_categorical_crossentropy shapes_sparse_loss
#define SHAPES_sparse_categorical_accuracy     shapes_sparse_loss

/* sgd */
static enum xo_status shapes_sgd(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                 struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	(void)dir;
	NEED(size);
	if (!(p->lr > 0.0f) || !(p->momentum >= 0.0f && p->momentum <= 1.0f))
		return xo_error(XO_EINVAL, "sgd: need lr > 0, 0 <= momentum <= 1");
	SLOT(src[0], false, p->size);
	SLOT(dst[0], false, p->size);
	SLOT(dst[1], false, p->size);
	return XO_OK;
}
#define SHAPES_sgd shapes_sgd

/* rmsprop */
static enum xo_status shapes_rmsprop(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                     struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	(void)dir;
	NEED(size);
	if (!(p->lr > 0.0f) || !(p->rho >= 0.0f && p->rho <= 1.0f) ||
	    !(p->momentum >= 0.0f && p->momentum <= 1.0f) || !(p->epsilon >= 0.0f))
		return xo_error(XO_EINVAL, "rmsprop: need lr > 0, 0 <= rho <= 1, "
		                           "0 <= momentum <= 1, epsilon >= 0");
	SLOT(src[0], false, p->size);
	SLOT(dst[0], false, p->size);
	SLOT(dst[1], false, p->size);
	SLOT(dst[2], false, p->size);
	return XO_OK;
}
#define SHAPES_rmsprop shapes_rmsprop

/* accuracy */
static enum xo_status shapes_accuracy(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                      struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	(void)dir;
	NEED(batch);
	NEED(ch);
	SLOT(src[0], false, p->batch, p->ch);
	SLOT(src[1], false, p->batch, p->ch);
	SLOT(dst[0], false, p->batch);
	dst[0].dtype = XO_DTYPE_I32;
	SLOT(dst[1], false, 1);
	return XO_OK;
}
#define SHAPES_accuracy shapes_accuracy

/* gather */
static enum xo_status shapes_gather(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                    struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	(void)dir;
	NEED(batch);
	NEED(ch);
	NEED(rows);
	SLOT(src[0], false, p->rows, p->ch);
	SLOT(src[1], false, p->batch);
	src[1].dtype = XO_DTYPE_I32;
	SLOT(dst[0], false, p->batch, p->ch);
	return XO_OK;
}
#define SHAPES_gather shapes_gather

/* embedding */
static enum xo_status shapes_embedding(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                       struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	NEED(batch);
	NEED(len);
	NEED(ch);
	NEED(rows);
	SLOT(src[0], false, p->batch, p->len);
	src[0].dtype = XO_DTYPE_I32;
	if (dir == XO_DIR_FWD) {
		SLOT(src[1], false, p->rows, p->ch);
		SLOT(dst[0], false, p->batch, p->len, p->ch);
	} else {
		SLOT(src[1], false, p->batch, p->len, p->ch);
		SLOT(dst[0], false, p->rows, p->ch);
	}
	return XO_OK;
}
#define SHAPES_embedding shapes_embedding

/* One signed margin pair of pad on an axis of n cells: each margin and the
 * output n + begin + end within [-XO_GEOMETRY_MAX, XO_GEOMETRY_MAX] (so the
 * OpenCL kernel's int sizes hold them), the output at least 1 cell (Keras
 * refuses a crop that leaves nothing). */
static enum xo_status pad_axis(const char *axis, int64_t n, int64_t begin, int64_t end,
			       int64_t *out)
{
	const int64_t m = XO_GEOMETRY_MAX;

	if (n > m || begin < -m || begin > m || end < -m || end > m)
		return xo_error(XO_EOVERFLOW, "pad: %s=%" PRId64 " or its margins %" PRId64
				", %" PRId64 " are above the limit %" PRId64, axis, n, begin, end, m);
	*out = n + begin + end;
	if (*out < 1 || *out > m)
		return xo_error(XO_EINVAL,
				"pad: %s=%" PRId64 " with margins %" PRId64 " and %" PRId64
				" gives %" PRId64 " cells; it must be in [1, %" PRId64 "]",
				axis, n, begin, end, *out, m);
	return XO_OK;
}

/* pad: x[batch][len][width][ch] <-> y[batch][out_h][out_w][ch] */
static enum xo_status shapes_pad(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
				 struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	int64_t oh, ow;
	enum xo_status st;

	NEED(batch);
	NEED(len);
	NEED(width);
	NEED(ch);
	if ((st = pad_axis("len", p->len, p->pad_begin, p->pad_end, &oh)) ||
	    (st = pad_axis("width", p->width, p->pad_begin_w, p->pad_end_w, &ow)))
		return st;
	SLOT(src[0], false, p->batch, dir == XO_DIR_FWD ? p->len : oh,
	     dir == XO_DIR_FWD ? p->width : ow, p->ch);
	SLOT(dst[0], false, p->batch, dir == XO_DIR_FWD ? oh : p->len,
	     dir == XO_DIR_FWD ? ow : p->width, p->ch);
	return XO_OK;
}
#define SHAPES_pad shapes_pad

/* up_sampling: x[batch][len][width][ch] <-> y[batch][len * repeats][width * repeats_w][ch];
 * the outputs' sizes within XO_GEOMETRY_MAX (the OpenCL kernel's ints) */
static enum xo_status shapes_up_sampling(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
					 struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	int64_t oh, ow;

	NEED(batch);
	NEED(len);
	NEED(width);
	NEED(ch);
	NEED(repeats);
	NEED(repeats_w);
	if (!xo_mul_ok(p->len, p->repeats, &oh) || oh > XO_GEOMETRY_MAX ||
	    !xo_mul_ok(p->width, p->repeats_w, &ow) || ow > XO_GEOMETRY_MAX)
		return xo_error(XO_EOVERFLOW,
				"up_sampling: len * repeats or width * repeats_w is above the limit "
				"%" PRId64, XO_GEOMETRY_MAX);
	SLOT(src[0], false, p->batch, dir == XO_DIR_FWD ? p->len : oh,
	     dir == XO_DIR_FWD ? p->width : ow, p->ch);
	SLOT(dst[0], false, p->batch, dir == XO_DIR_FWD ? oh : p->len,
	     dir == XO_DIR_FWD ? ow : p->width, p->ch);
	return XO_OK;
}
#define SHAPES_up_sampling shapes_up_sampling

/* permute: x[batch][len][width][ch] <-> y[batch][s[q0]][s[q1]][s[q2]], s = {len, width, ch} */
static enum xo_status shapes_permute(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
				     struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	int64_t s[3] = {p->len, p->width, p->ch};
	int q[3];
	enum xo_status st;

	NEED(batch);
	NEED(len);
	NEED(width);
	NEED(ch);
	if ((st = xo_permute_axes(p->dims, q)))
		return st;
	if (p->dims < 100 && p->width != 1)
		return xo_error(XO_EINVAL, "permute: dims=%" PRId64 " orders a rank-2 sample; width=%"
				PRId64 " must be 1", p->dims, p->width);
	if (p->len > XO_GEOMETRY_MAX || p->width > XO_GEOMETRY_MAX || p->ch > XO_GEOMETRY_MAX)
		return xo_error(XO_EOVERFLOW, "permute: len, width or ch is above the limit %" PRId64,
				XO_GEOMETRY_MAX);
	if (dir == XO_DIR_FWD) {
		SLOT(src[0], false, p->batch, p->len, p->width, p->ch);
		SLOT(dst[0], false, p->batch, s[q[0]], s[q[1]], s[q[2]]);
	} else {
		SLOT(src[0], false, p->batch, s[q[0]], s[q[1]], s[q[2]]);
		SLOT(dst[0], false, p->batch, p->len, p->width, p->ch);
	}
	return XO_OK;
}
#define SHAPES_permute shapes_permute

/* merge: a[batch][len][ch], b[batch][len][cb] -> y[batch][len][ch or ch + cb],
 * cb = ch_b for concatenate, else ch */
static enum xo_status shapes_merge(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
				   struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	bool cat = p->mode == XO_MERGE_CONCATENATE;
	int64_t cb = cat ? p->ch_b : p->ch, cy;

	NEED(batch);
	NEED(len);
	NEED(ch);
	if (cat)
		NEED(ch_b);
	if (!xo_add_ok(p->ch, cat ? cb : 0, &cy))
		return xo_error(XO_EOVERFLOW, "merge: ch + ch_b overflows");
	if ((p->mask_a || p->mask_b) && p->mode != XO_MERGE_MULTIPLY &&
	    p->mode != XO_MERGE_MAXIMUM && p->mode != XO_MERGE_MINIMUM)
		return xo_error(XO_EINVAL, "merge: mask_a / mask_b need mode multiply, maximum or "
		                           "minimum (Keras's other merges do not read the mask)");
	if (p->mask_a || p->mask_b) { /* the ids whose zeros mask steps, after dy */
		SLOT(src[dir == XO_DIR_FWD ? 2 : 3], false, p->batch, p->len);
		src[dir == XO_DIR_FWD ? 2 : 3].dtype = XO_DTYPE_I32;
	}
	SLOT(src[0], false, p->batch, p->len, p->ch);
	SLOT(src[1], false, p->batch, p->len, cb);
	if (dir == XO_DIR_FWD) {
		SLOT(dst[0], false, p->batch, p->len, cy);
	} else {
		SLOT(src[2], false, p->batch, p->len, cy);
		SLOT(dst[0], true, p->batch, p->len, p->ch);
		SLOT(dst[1], true, p->batch, p->len, cb);
	}
	return XO_OK;
}
#define SHAPES_merge shapes_merge
/* depthwise_conv2d: conv2d's geometry, ch * depth_multiplier outputs per
 * position (the product checked before any slot is sized from it) */
static enum xo_status shapes_depthwise_conv2d(enum xo_op op, enum xo_dir dir,
                                              const struct xo_params *p,
                                              struct xo_slot_shape *src,
                                              struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	int64_t oh, ow, pt, pl, co;
	struct xo_params q = xo_params_width_axis(p);
	enum xo_status st;

	NEED(batch);
	NEED(ch);
	NEED(depth_multiplier);
	st = xo_depthwise_conv2d_geometry(p, &oh, &ow, &pt, &pl);
	if (st)
		return st;
	if (!xo_mul_ok(p->ch, p->depth_multiplier, &co) || co > XO_GEOMETRY_MAX)
		return xo_error(XO_EOVERFLOW,
		                "%s: ch*depth_multiplier (%" PRId64 "*%" PRId64
		                ") is above the limit %" PRId64,
		                name, p->ch, p->depth_multiplier, XO_GEOMETRY_MAX);
	if ((unsigned)p->activation > XO_ACTIVATION_FUSED_LAST)
		return xo_error(XO_EINVAL,
		                "%s: activation=%s is not fused (linear, relu, sigmoid or "
		                "softmax); apply it as its own op",
		                name,
		                (unsigned)p->activation <= XO_ACTIVATION_LAST
		                    ? xo_activation_name(p->activation)
		                    : "?");
	SLOT(src[0], false, p->batch, p->len, p->width, p->ch);
	SLOT(src[1], false, p->kernel_size, q.kernel_size, p->ch, p->depth_multiplier);
	if (p->use_bias)
		SLOT(src[2], false, co);
	if (dir == XO_DIR_FWD) {
		SLOT(dst[0], false, p->batch, oh, ow, co);
	} else {
		SLOT(src[2], false, p->batch, oh, ow, co);
		SLOT(src[3], false, p->batch, oh, ow, co);
		SLOT(dst[0], true, p->batch, p->len, p->width, p->ch);
		SLOT(dst[1], false, p->kernel_size, q.kernel_size, p->ch, p->depth_multiplier);
		if (p->use_bias)
			SLOT(dst[2], false, co);
	}
	return XO_OK;
}
#define SHAPES_depthwise_conv2d shapes_depthwise_conv2d

/* flip: x[batch][len][ch] <-> y[batch][len][ch], the time axis reversed;
 * rescaling: the same slots, element by element */
static enum xo_status shapes_flip(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                  struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	(void)dir;
	NEED(batch);
	NEED(len);
	NEED(ch);
	SLOT(src[0], false, p->batch, p->len, p->ch);
	SLOT(dst[0], false, p->batch, p->len, p->ch);
	return XO_OK;
}
#define SHAPES_flip shapes_flip
#define SHAPES_rescaling shapes_flip
/* conv2d_transpose: its own geometry (xo_conv2d_transpose_geometry), the
 * kernel [kh][kw][filters][ch] */
static enum xo_status shapes_conv2d_transpose(enum xo_op op, enum xo_dir dir,
                                              const struct xo_params *p,
                                              struct xo_slot_shape *src,
                                              struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	int64_t oh, ow, pt, pl;
	struct xo_params q = xo_params_width_axis(p);
	enum xo_status st;

	NEED(batch);
	NEED(ch);
	NEED(filters);
	st = xo_conv2d_transpose_geometry(p, &oh, &ow, &pt, &pl);
	if (st)
		return st;
	if ((unsigned)p->activation > XO_ACTIVATION_FUSED_LAST)
		return xo_error(XO_EINVAL,
		                "%s: activation=%s is not fused (linear, relu, sigmoid or "
		                "softmax); apply it as its own op",
		                name,
		                (unsigned)p->activation <= XO_ACTIVATION_LAST
		                    ? xo_activation_name(p->activation)
		                    : "?");
	SLOT(src[0], false, p->batch, p->len, p->width, p->ch);
	SLOT(src[1], false, p->kernel_size, q.kernel_size, p->filters, p->ch);
	if (p->use_bias)
		SLOT(src[2], false, p->filters);
	if (dir == XO_DIR_FWD) {
		SLOT(dst[0], false, p->batch, oh, ow, p->filters);
	} else {
		SLOT(src[2], false, p->batch, oh, ow, p->filters);
		SLOT(src[3], false, p->batch, oh, ow, p->filters);
		SLOT(dst[0], true, p->batch, p->len, p->width, p->ch);
		SLOT(dst[1], false, p->kernel_size, q.kernel_size, p->filters, p->ch);
		if (p->use_bias)
			SLOT(dst[2], false, p->filters);
	}
	return XO_OK;
}
#define SHAPES_conv2d_transpose shapes_conv2d_transpose
/* attention: q[batch][len][heads * key_dim], k[batch][len_kv][heads * key_dim],
 * v[batch][len_kv][heads * value_dim] and, with attention_mask=1, the mask
 * m[batch][len][len_kv] -> o[batch][len][heads * value_dim] (the
 * rows of a dense product: head h's part of a row is its d values at column
 * h * d); every size below 2^31 (the OpenCL kernels index with int within a
 * row), and a row's heads * d columns too; dropout in [0, 1) */
static enum xo_status shapes_attention(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                       struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	int64_t tk = xo_attention_len_kv(p), dv = xo_attention_value_dim(p), w;
	const struct {
		const char *key;
		int64_t v;
	} lim[] = {{"len_kv", p->len_kv}, {"value_dim", p->value_dim}};

	NEED(batch);
	NEED(len);
	NEED(heads);
	NEED(key_dim);
	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++)
		if (lim[i].v < 0)
			return xo_error(XO_EINVAL, "%s: %s=%" PRId64 " must be >= 0 (0: the default)",
			                name, lim[i].key, lim[i].v);
	if (!(p->dropout >= 0.0f && p->dropout < 1.0f))
		return xo_error(XO_EINVAL, "%s: dropout=%g must be in [0, 1)", name,
		                (double)p->dropout);
	if (p->batch > XO_GEOMETRY_MAX || p->len > XO_GEOMETRY_MAX || tk > XO_GEOMETRY_MAX ||
	    !xo_mul_ok(p->heads, p->key_dim > dv ? p->key_dim : dv, &w) || w > XO_GEOMETRY_MAX)
		return xo_error(XO_EOVERFLOW, "%s: a size is above the limit %" PRId64, name,
		                XO_GEOMETRY_MAX);
	SLOT(src[0], false, p->batch, p->len, p->heads * p->key_dim);
	SLOT(src[1], false, p->batch, tk, p->heads * p->key_dim);
	SLOT(src[2], false, p->batch, tk, p->heads * dv);
	if (p->attention_mask) /* m: after the inputs, forward and backward */
		SLOT(src[dir == XO_DIR_FWD ? 3 : 4], false, p->batch, p->len, tk);
	if (dir == XO_DIR_FWD) {
		SLOT(dst[0], false, p->batch, p->len, p->heads * dv);
	} else {
		SLOT(src[3], false, p->batch, p->len, p->heads * dv);
		SLOT(dst[0], false, p->batch, p->len, p->heads * p->key_dim);
		SLOT(dst[1], false, p->batch, tk, p->heads * p->key_dim);
		SLOT(dst[2], false, p->batch, tk, p->heads * dv);
	}
	return XO_OK;
}
#define SHAPES_attention shapes_attention
/* mask_outer: ids[batch][T] (i32, T = len with query_mask, else len_kv;
 * declared only with a flag), m[batch][len][len_kv] (attention_mask=1) ->
 * y[batch][len][len_kv]; both flags read one ids row as queries and keys,
 * so len_kv must be len; every size below 2^31, len * len_kv too (the
 * OpenCL kernel indexes a sample's mask with int) */
static enum xo_status shapes_mask_outer(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                        struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);
	int64_t tk = xo_attention_len_kv(p), per;

	(void)dir; /* forward only */
	NEED(batch);
	NEED(len);
	if (p->len_kv < 0)
		return xo_error(XO_EINVAL, "%s: len_kv=%" PRId64 " must be >= 0 (0: len)", name,
		                p->len_kv);
	if (p->query_mask && p->value_mask && tk != p->len)
		return xo_error(XO_EINVAL,
		                "%s: query_mask=1 and value_mask=1 read one ids row, so len_kv=%" PRId64
		                " must be len=%" PRId64,
		                name, tk, p->len);
	if (p->batch > XO_GEOMETRY_MAX || !xo_mul_ok(p->len, tk, &per) || per > XO_GEOMETRY_MAX)
		return xo_error(XO_EOVERFLOW, "%s: a size is above the limit %" PRId64, name,
		                XO_GEOMETRY_MAX);
	if (p->query_mask || p->value_mask) {
		SLOT(src[0], false, p->batch, p->query_mask ? p->len : tk);
		src[0].dtype = XO_DTYPE_I32;
	}
	if (p->attention_mask)
		SLOT(src[1], false, p->batch, p->len, tk);
	SLOT(dst[0], false, p->batch, p->len, tk);
	return XO_OK;
}
#define SHAPES_mask_outer shapes_mask_outer

/* masking: x[batch][len][ch] -> y[batch][len][ch] and the keep flags
 * keep[batch][len] (i32); backward {x, dy} -> dx. mask_value is finite
 * (the key parser refuses others; Keras's NaN would keep every step) */
static enum xo_status shapes_masking(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                     struct xo_slot_shape *src, struct xo_slot_shape *dst)
{
	const char *name = xo_op_name(op);

	NEED(batch);
	NEED(len);
	NEED(ch);
	if (!isfinite(p->mask_value))
		return xo_error(XO_EINVAL, "%s: mask_value=%g must be finite", name,
		                (double)p->mask_value);
	SLOT(src[0], false, p->batch, p->len, p->ch);
	SLOT(dst[0], false, p->batch, p->len, p->ch);
	if (dir == XO_DIR_FWD) {
		SLOT(dst[1], false, p->batch, p->len);
		dst[1].dtype = XO_DTYPE_I32;
	} else {
		SLOT(src[1], false, p->batch, p->len, p->ch);
	}
	return XO_OK;
}
#define SHAPES_masking shapes_masking

typedef enum xo_status (*shapes_fn)(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                                    struct xo_slot_shape *src, struct xo_slot_shape *dst);

/* One entry per op of ops.def: an op without its SHAPES_ entry does not compile. */
static const shapes_fn shapes_of[XO_OP_COUNT] = {
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) [XO_OP_##name] = SHAPES_##name,
#include "xo/ops.def"
#undef XO_OP
};

enum xo_status xo_op_shapes(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
                            struct xo_slot_shape src[XO_MAX_SRC],
                            struct xo_slot_shape dst[XO_MAX_DST])
{
	const char *name = xo_op_name(op);
	enum xo_status st;

	memset(src, 0, sizeof(*src) * XO_MAX_SRC);
	memset(dst, 0, sizeof(*dst) * XO_MAX_DST);
	if (dir == XO_DIR_BWD && !xo_op_has_bwd(op))
		return xo_error(XO_EINVAL, "%s has no backward pass", name);
	st = shapes_of[op](op, dir, p, src, dst);
	if (st)
		return st;

	for (int i = 0; i < XO_MAX_SRC; i++) {
		int64_t n;

		if (src[i].ndim && (st = slot_elems(name, &src[i], &n)))
			return st;
	}
	for (int i = 0; i < XO_MAX_DST; i++) {
		int64_t n;

		if (dst[i].ndim && (st = slot_elems(name, &dst[i], &n)))
			return st;
	}
	return XO_OK;
}

/* A tensor fits a slot when dtype, element count and last (channel) dim agree:
 * channels-last views and flattened views of the same bytes are accepted. */
static enum xo_status check_slot(const struct xo_backend *be, const char *name, const char *kind,
				 int i, const struct xo_tensor *t, const struct xo_slot_shape *s)
{
	int64_t n = 1;

	if (!s->ndim) {
		if (t)
			return xo_error(XO_EINVAL, "%s: %s[%d] must be NULL for these parameters",
					name, kind, i);
		return XO_OK;
	}
	if (!t) {
		if (s->optional)
			return XO_OK;
		return xo_error(XO_EINVAL, "%s: %s[%d] is NULL", name, kind, i);
	}
	if (be && t->be != be)
		return xo_error(XO_EBACKEND, "%s: %s[%d] belongs to backend '%s', not '%s'", name,
				kind, i, t->be ? t->be->iface->name : "?", be->iface->name);
	for (int d = 0; d < s->ndim; d++)
		n *= s->dim[d];
	if (t->dtype != s->dtype)
		return xo_error(XO_EINVAL, "%s: %s[%d] has the wrong dtype", name, kind, i);
	if (t->nelem != n || t->dim[t->ndim - 1] != s->dim[s->ndim - 1])
		return xo_error(XO_EINVAL,
				"%s: %s[%d] has %" PRId64 " elements (last dim %" PRId64
				"), expected %" PRId64 " (last dim %" PRId64 ")",
				name, kind, i, t->nelem, t->dim[t->ndim - 1], n,
				s->dim[s->ndim - 1]);
	return XO_OK;
}

enum xo_status xo_op_validate(const struct xo_backend *be, enum xo_op op, enum xo_dir dir,
			      const struct xo_op_args *a)
{
	struct xo_slot_shape src[XO_MAX_SRC], dst[XO_MAX_DST];
	enum xo_status st;
	const char *name;

	if ((unsigned)op >= XO_OP_COUNT || (unsigned)dir >= XO_DIR_COUNT)
		return xo_error(XO_EINVAL, "unknown op or direction");
	if (!a)
		return xo_error(XO_EINVAL, "%s: NULL arguments", xo_op_name(op));
	name = xo_op_name(op);
	st = xo_op_shapes(op, dir, &a->p, src, dst);
	if (st)
		return st;
	for (int i = 0; i < XO_MAX_SRC; i++)
		if ((st = check_slot(be, name, "src", i, a->src[i], &src[i])))
			return st;
	for (int i = 0; i < XO_MAX_DST; i++) {
		if ((st = check_slot(be, name, "dst", i, a->dst[i], &dst[i])))
			return st;
		if (a->mag[i] && (!a->dst[i] || a->mag[i]->nelem != a->dst[i]->nelem ||
				  a->mag[i]->dtype != XO_DTYPE_F32))
			return xo_error(XO_EINVAL, "%s: mag[%d] does not match dst[%d]", name, i, i);
	}
	return XO_OK;
}
