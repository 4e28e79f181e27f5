/*
 * layer_separable.c - the separable_conv2d and separable_conv1d kinds (Keras
 * SeparableConv2D, SeparableConv1D: the 1-D one on a one-column sample): a
 * depthwise_conv2d op (the depthwise kernel, no bias, linear) into z, then a
 * 1x1 conv2d op (the pointwise kernel and the bias, the activation fused)
 * from z to the output. Its variables in Keras's order: depthwise_kernel
 * [kh][kw][in_ch][dm] (the spec's w_dim; 1-D [k][in_ch][dm]), pointwise_kernel
 * [1][1][in_ch*dm][filters] (1-D [1][in_ch*dm][filters]; in the recurrent
 * kernel's place, between kernel and bias: rk_off, rk_count) and bias
 * [filters].
 */
#include <math.h>
#include <string.h>

#include "model_run.h"

/* The pointwise kernel's dims, Keras's (1, 1, in_ch * dm, filters), or
 * (1, in_ch * dm, filters) for the 1-D kind (a 3-D depthwise kernel);
 * returns their count. */
static int pointwise_dims(const struct layer *l, int64_t d[4])
{
	int nd = l->s.w_ndim;

	d[0] = d[1] = 1;
	d[nd - 2] = l->s.in_ch * l->s.p.depth_multiplier;
	d[nd - 1] = l->s.p.filters;
	return nd;
}

static enum xo_status separable_views(struct layer *l, struct xo_tensor *params,
                                      struct xo_tensor *grads)
{
	int64_t pd[4];
	int pn = pointwise_dims(l, pd);
	enum xo_status st;

	st = xo_tensor_view(params, l->w_off, l->s.w_ndim, l->s.w_dim, &l->w);
	if (!st)
		st = xo_tensor_view(grads, l->w_off, l->s.w_ndim, l->s.w_dim, &l->dw);
	if (!st)
		st = xo_tensor_view(params, l->rk_off, pn, pd, &l->rk);
	if (!st)
		st = xo_tensor_view(grads, l->rk_off, pn, pd, &l->drk);
	if (!st && l->s.b_count) {
		st = xo_tensor_view(params, l->b_off, 1, &l->s.b_count, &l->b);
		if (!st)
			st = xo_tensor_view(grads, l->b_off, 1, &l->s.b_count, &l->db);
	}
	return st;
}

/* Keras's glorot_uniform for both kernels, each by its own fans
 * (initializers compute_fans: receptive field kh * kw, or 1 for the
 * pointwise kernel), the pointwise kernel's draws after the depthwise
 * kernel's elements; the bias stays zero. */
static void separable_init(const struct layer *l, int i, uint64_t seed, float *w)
{
	int nd = l->s.w_ndim;
	double rf = (double)(nd == 4 ? l->s.w_dim[0] * l->s.w_dim[1] : l->s.w_dim[0]);
	double lim_d =
	    sqrt(6.0 / ((double)l->s.w_dim[nd - 2] * rf + (double)l->s.w_dim[nd - 1] * rf));
	double lim_p = sqrt(6.0 / ((double)(l->s.in_ch * l->s.p.depth_multiplier) +
	                           (double)l->s.p.filters));

	for (int64_t e = 0; e < l->s.w_count + l->s.rk_count; e++) {
		double u = xo_philox_uniform(seed, XO_STREAM_INIT, (uint32_t)i, (uint64_t)e);
		double lim = e < l->s.w_count ? lim_d : lim_p;

		w[l->w_off + e] = (float)((2.0 * u - 1.0) * lim);
	}
}

static int separable_vars(const struct layer *l, struct xo_layer_var out[XO_LAYER_VARS_MAX])
{
	int n = 0;

	out[n] = (struct xo_layer_var){.name = "depthwise_kernel", .ndim = l->s.w_ndim,
	                               .off = l->w_off, .count = l->s.w_count};
	memcpy(out[n].dim, l->s.w_dim, sizeof(out[n].dim));
	n++;
	out[n] = (struct xo_layer_var){.name = "pointwise_kernel", .off = l->rk_off,
	                               .count = l->s.rk_count};
	out[n].ndim = pointwise_dims(l, out[n].dim);
	n++;
	if (l->s.b_count)
		out[n++] = (struct xo_layer_var){.name = "bias", .ndim = 1, .dim = {l->s.b_count},
		                                 .off = l->b_off, .count = l->s.b_count};
	return n;
}

/* The depthwise op's parameters: no bias, linear. */
static struct xo_params depthwise_params(const struct layer_ctx *c)
{
	struct xo_params p = c->p;

	p.use_bias = false;
	p.activation = XO_ACTIVATION_LINEAR;
	return p;
}

/* The pointwise op's: a 1x1 conv2d over z [out_h][out_w][in_ch * dm]. */
static struct xo_params pointwise_params(const struct layer *l, const struct layer_ctx *c)
{
	struct xo_params p = c->p;

	p.len = l->s.out_len;
	p.width = l->s.out_w;
	p.ch = l->s.in_ch * l->s.p.depth_multiplier;
	p.kernel_size = p.kernel_w = 1;
	p.strides = p.strides_w = 1;
	p.dilation_rate = p.dilation_w = 1;
	p.padding = XO_PADDING_VALID;
	return p;
}

static int separable_forward(const struct layer *l, const struct layer_ctx *c,
                             struct layer_call out[LAYER_CALLS_MAX])
{
	out[0].op = XO_OP_depthwise_conv2d;
	out[0].a = (struct xo_op_args){.p = depthwise_params(c)};
	out[0].a.src[0] = l->in;
	out[0].a.src[1] = l->w;
	out[0].a.dst[0] = l->z;
	out[1].op = XO_OP_conv2d;
	out[1].a = (struct xo_op_args){.p = pointwise_params(l, c)};
	out[1].a.src[0] = l->z;
	out[1].a.src[1] = l->rk;
	out[1].a.src[2] = l->b;
	out[1].a.dst[0] = l->out;
	return 2;
}

/* The pointwise op back (dz, its kernel's and the bias's gradients), then
 * the depthwise op back from dz (dx and its kernel's gradient). */
static int separable_backward(const struct layer *l, const struct layer_ctx *c,
                              struct layer_call out[LAYER_CALLS_MAX])
{
	out[0].op = XO_OP_conv2d;
	out[0].a = (struct xo_op_args){.p = pointwise_params(l, c)};
	/* the last layer's gout is already w.r.t. the softmax's input */
	if (c->ce_logits)
		out[0].a.p.activation = XO_ACTIVATION_LINEAR;
	out[0].a.src[0] = l->z;
	out[0].a.src[1] = l->rk;
	out[0].a.src[2] = l->out;
	out[0].a.src[3] = l->gout;
	out[0].a.dst[0] = l->gz;
	out[0].a.dst[1] = l->drk;
	out[0].a.dst[2] = l->db;
	out[1].op = XO_OP_depthwise_conv2d;
	out[1].a = (struct xo_op_args){.p = depthwise_params(c)};
	out[1].a.src[0] = l->in;
	out[1].a.src[1] = l->w;
	out[1].a.src[2] = l->z;
	out[1].a.src[3] = l->gz;
	out[1].a.dst[0] = l->gin;
	out[1].a.dst[1] = l->dw;
	return 2;
}

static void separable_cost(const struct layer *l, const struct cost_bytes *b,
                           struct xo_layer_cost *out)
{
	/* depthwise: kh * kw terms for each of the out_h * out_w * in_ch * dm
	 * values of z (its w_count per position); pointwise: in_ch * dm terms
	 * for each output (its rk_count per position) */
	double pos = (double)l->s.out_len * (double)l->s.out_w;
	double zb = 4.0 * pos * (double)(l->s.in_ch * l->s.p.depth_multiplier);
	double macs = pos * (double)(l->s.w_count + l->s.rk_count);

	out->flops_fwd = 2 * macs;
	out->act_bytes_fwd = b->in + 2 * zb + b->out; /* x in, z out and in, y out */
	out->w_bytes_fwd = b->w + 4.0 * (double)l->s.rk_count;
	out->ops_train_fwd = out->ops_predict = 2;
	if (l->has_grad) {
		/* dW always, dX unless first: reads z, y, dy, writes dz; reads
		 * x, z, dz, writes dx */
		out->flops_bwd = 2 * macs * (l->need_dx ? 2 : 1);
		out->act_bytes_bwd = 4 * zb + 2 * b->out + b->in + (l->need_dx ? b->in : 0);
		out->w_bytes_bwd = 2 * (b->w + 4.0 * (double)l->s.rk_count);
		out->ops_bwd = 2;
	}
}

const struct xo_layer_family xo_family_separable = {
    .views = separable_views,
    .init = separable_init,
    .vars = separable_vars,
    .forward = separable_forward,
    .backward = separable_backward,
    .cost = separable_cost,
};
