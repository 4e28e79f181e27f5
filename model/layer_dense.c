/*
 * layer_dense.c - the conv1d, conv2d, dense and time_distributed kinds: one
 * op on x, kernel and bias, with its activation fused into the op or, for an activation
 * the ops do not fuse (act_separate), run as a second op on z.
 */
#include <math.h>
#include <string.h>

#include "model_run.h"

static enum xo_status dense_views(struct layer *l, struct xo_tensor *params,
                                  struct xo_tensor *grads)
{
	enum xo_status st;

	st = xo_tensor_view(params, l->w_off, l->s.w_ndim, l->s.w_dim, &l->w);
	if (!st)
		st = xo_tensor_view(grads, l->w_off, l->s.w_ndim, l->s.w_dim, &l->dw);
	if (!st && l->s.b_count) {
		st = xo_tensor_view(params, l->b_off, 1, &l->s.b_count, &l->b);
		if (!st)
			st = xo_tensor_view(grads, l->b_off, 1, &l->s.b_count, &l->db);
	}
	return st;
}

/* Keras's glorot_uniform kernel; the bias stays zero. */
static void dense_init(const struct layer *l, int i, uint64_t seed, float *w)
{
	double fan_in, fan_out, limit;

	/* Keras's fans (initializers compute_fans): the receptive
	 * field is the product of the kernel's leading axes (conv1d
	 * [k][cin][cout]: k; conv2d [kh][kw][cin][cout]: kh * kw;
	 * dense [in][out]: 1), fan_in = cin * rf, fan_out = cout * rf */
	{
		double rf = 1.0;

		for (int d = 0; d < l->s.w_ndim - 2; d++)
			rf *= (double)l->s.w_dim[d];
		fan_in = (double)l->s.w_dim[l->s.w_ndim - 2] * rf;
		fan_out = (double)l->s.w_dim[l->s.w_ndim - 1] * rf;
	}
	limit = sqrt(6.0 / (fan_in + fan_out));
	for (int64_t e = 0; e < l->s.w_count; e++) {
		double u =
		    xo_philox_uniform(seed, XO_STREAM_INIT, (uint32_t)i, (uint64_t)e);

		w[l->w_off + e] = (float)((2.0 * u - 1.0) * limit);
	}
}

static int dense_vars(const struct layer *l, struct xo_layer_var out[XO_LAYER_VARS_MAX])
{
	int n = 0;

	out[n] = (struct xo_layer_var){.name = "kernel", .ndim = l->s.w_ndim,
	                               .off = l->w_off, .count = l->s.w_count};
	memcpy(out[n].dim, l->s.w_dim, sizeof(out[n].dim));
	if (l->s.kind == XO_LAYER_TIME_DISTRIBUTED && l->s.inner == XO_LAYER_CONV1D) {
		/* the wrapped Conv1D's [k][in][filters]: the op's
		 * [1][k][in][filters] without its leading 1, the same bytes */
		out[n].ndim = 3;
		memmove(out[n].dim, l->s.w_dim + 1, 3 * sizeof(out[n].dim[0]));
	}
	n++;
	if (l->s.b_count)
		out[n++] = (struct xo_layer_var){.name = "bias", .ndim = 1,
		                                 .dim = {l->s.b_count},
		                                 .off = l->b_off, .count = l->s.b_count};
	return n;
}

/* The activation op of a separate activation sees the output as
 * [out_h * out_w][ch]. */
static struct xo_params act_params(const struct layer *l, const struct layer_ctx *c)
{
	struct xo_params p = c->p;

	p.len = l->s.out_len * l->s.out_w;
	p.width = 1;
	p.ch = l->s.out_ch;
	return p;
}

static int dense_forward(const struct layer *l, const struct layer_ctx *c,
                         struct layer_call out[LAYER_CALLS_MAX])
{
	struct xo_op_args *a = &out[0].a;

	*a = (struct xo_op_args){.p = c->p};
	a->p.batch = layer_op_batch(&l->s, c->p.batch);
	out[0].op = layer_conv_dense_op(&l->s);
	a->src[0] = l->in;
	a->src[1] = l->w;
	a->src[2] = l->b;
	a->dst[0] = act_separate(&l->s) ? l->z : l->out;
	if (!act_separate(&l->s))
		return 1;
	a->p.activation = XO_ACTIVATION_LINEAR;
	out[1].op = act_op(l->s.p.activation);
	out[1].a = (struct xo_op_args){.p = act_params(l, c)};
	out[1].a.src[0] = l->z;
	out[1].a.dst[0] = l->out;
	return 2;
}

static int dense_backward(const struct layer *l, const struct layer_ctx *c,
                          struct layer_call out[LAYER_CALLS_MAX])
{
	int n = 0;
	struct xo_op_args *a;

	if (act_separate(&l->s)) {
		/* the activation's op first: gz = d loss / d z */
		struct xo_op_args *b = &out[n].a;

		out[n++].op = act_op(l->s.p.activation);
		*b = (struct xo_op_args){.p = act_params(l, c)};
		b->src[0] = act_bwd_from_x(l->s.p.activation) ? l->z : l->out;
		b->src[1] = l->gout;
		b->dst[0] = l->gz;
	}
	a = &out[n].a;
	out[n++].op = layer_conv_dense_op(&l->s);
	*a = (struct xo_op_args){.p = c->p};
	a->p.batch = layer_op_batch(&l->s, c->p.batch);
	/* The last layer's gout is already w.r.t. the softmax's input
	 * (fused CE gradient): differentiate it as linear; so too when the
	 * activation ran as its own op above. */
	if (c->ce_logits || act_separate(&l->s))
		a->p.activation = XO_ACTIVATION_LINEAR;
	a->src[0] = l->in;
	a->src[1] = l->w;
	a->src[2] = act_separate(&l->s) ? l->z : l->out;
	a->src[3] = act_separate(&l->s) ? l->gz : l->gout;
	a->dst[0] = l->gin;
	a->dst[1] = l->dw;
	a->dst[2] = l->db;
	return n;
}

static void dense_cost(const struct layer *l, const struct cost_bytes *b,
                       struct xo_layer_cost *out)
{
	double in = b->in, outb = b->out, w = b->w;

	/* every output element is one dot product of w_count / out_ch
	 * terms: out_len * out_w * w_count multiply-adds per sample
	 * (conv2d: kh * kw * in_ch terms for each of its out_h * out_w
	 * * filters outputs); conv2d_transpose multiplies each input
	 * position by the whole kernel instead (in_len * in_w * w_count,
	 * the taps landing outside y included) */
	bool tr = l->s.kind == XO_LAYER_CONV2D_TRANSPOSE || l->s.kind == XO_LAYER_CONV1D_TRANSPOSE;
	double macs = (double)(tr ? l->s.in_len : l->s.out_len) * (double)(tr ? l->s.in_w : l->s.out_w) *
	              (double)l->s.w_count;

	out->flops_fwd = 2 * macs;
	out->act_bytes_fwd = in + outb;
	out->w_bytes_fwd = w;
	out->ops_train_fwd = out->ops_predict = 1;
	if (l->has_grad) {
		/* dW always, dX unless first: reads x, y (activation
		 * derivative), dy; writes dx; reads w for dX, writes dW, db */
		out->flops_bwd = 2 * macs * (l->need_dx ? 2 : 1);
		out->act_bytes_bwd = in + 2 * outb + (l->need_dx ? in : 0);
		out->w_bytes_bwd = w + (l->need_dx ? 4.0 * (double)l->s.w_count : 0);
		out->ops_bwd = 1;
	}
	if (act_separate(&l->s)) { /* the activation's op: z in, y out */
		out->act_bytes_fwd += 2 * outb;
		out->ops_train_fwd = out->ops_predict = 2;
		if (l->has_grad) { /* reads z or y and dy, writes dz */
			out->act_bytes_bwd += 3 * outb;
			out->ops_bwd = 2;
		}
	}
}

const struct xo_layer_family xo_family_dense = {
    .views = dense_views,
    .init = dense_init,
    .vars = dense_vars,
    .forward = dense_forward,
    .backward = dense_backward,
    .cost = dense_cost,
};
