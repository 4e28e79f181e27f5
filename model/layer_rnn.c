/*
 * layer_rnn.c - the recurrent kinds (simple_rnn, lstm, gru): kernel,
 * recurrent_kernel and bias in Keras's layouts (ops.def), and a workspace
 * the training forward writes and the backward reads back through time.
 */
#include <math.h>
#include <string.h>

#include "model_run.h"

static enum xo_status rnn_views(struct layer *l, struct xo_tensor *params, struct xo_tensor *grads)
{
	enum xo_status st;
	/* recurrent_kernel [units][g*units] */
	int64_t rd[2] = {l->s.p.units, l->s.rk_count / l->s.p.units};

	st = xo_tensor_view(params, l->w_off, l->s.w_ndim, l->s.w_dim, &l->w);
	if (!st)
		st = xo_tensor_view(grads, l->w_off, l->s.w_ndim, l->s.w_dim, &l->dw);
	if (!st)
		st = xo_tensor_view(params, l->rk_off, 2, rd, &l->rk);
	if (!st)
		st = xo_tensor_view(grads, l->rk_off, 2, rd, &l->drk);
	if (!st && l->s.b_count) {
		/* gru reset_after: [2][3u] (ops.def) */
		int64_t bd[2] = {2, l->s.b_count / 2};
		bool two = l->s.kind == XO_LAYER_GRU && l->s.p.reset_after;

		st = two ? xo_tensor_view(params, l->b_off, 2, bd, &l->b)
		         : xo_tensor_view(params, l->b_off, 1, &l->s.b_count, &l->b);
		if (!st)
			st = two ? xo_tensor_view(grads, l->b_off, 2, bd, &l->db)
			         : xo_tensor_view(grads, l->b_off, 1, &l->s.b_count, &l->db);
	}
	return st;
}

static void rnn_init(const struct layer *l, int i, uint64_t seed, float *w)
{
	/* kernel glorot-uniform over (in_ch, g*u) as Keras; recurrent_kernel
	 * glorot-uniform over (u, g*u) (Keras draws an orthogonal matrix:
	 * not matched, a trained or loaded model does not depend on it);
	 * LSTM's forget-gate bias 1 (unit_forget_bias=True) */
	double lk = sqrt(6.0 / (double)(l->s.w_dim[0] + l->s.w_dim[1]));
	double lr = sqrt(6.0 / (double)(l->s.p.units + l->s.w_dim[1]));

	for (int64_t e = 0; e < l->s.w_count + l->s.rk_count; e++) {
		double u = xo_philox_uniform(seed, XO_STREAM_INIT, (uint32_t)i, (uint64_t)e);

		w[l->w_off + e] = (float)((2.0 * u - 1.0) * (e < l->s.w_count ? lk : lr));
	}
	if (l->s.kind == XO_LAYER_LSTM && l->s.b_count)
		for (int64_t e = 0; e < l->s.p.units; e++)
			w[l->b_off + l->s.p.units + e] = 1.0f;
}

static int rnn_vars(const struct layer *l, struct xo_layer_var out[XO_LAYER_VARS_MAX])
{
	int n = 0;

	out[n] = (struct xo_layer_var){.name = "kernel", .ndim = l->s.w_ndim,
	                               .off = l->w_off, .count = l->s.w_count};
	memcpy(out[n].dim, l->s.w_dim, sizeof(out[n].dim));
	n++;
	out[n++] = (struct xo_layer_var){.name = "recurrent_kernel", .ndim = 2,
	                                 .dim = {l->s.p.units, l->s.rk_count / l->s.p.units},
	                                 .off = l->rk_off, .count = l->s.rk_count};
	if (l->s.b_count && l->s.kind == XO_LAYER_GRU && l->s.p.reset_after)
		out[n++] = (struct xo_layer_var){.name = "bias", .ndim = 2,
		                                 .dim = {2, l->s.b_count / 2},
		                                 .off = l->b_off, .count = l->s.b_count};
	else if (l->s.b_count)
		out[n++] = (struct xo_layer_var){.name = "bias", .ndim = 1,
		                                 .dim = {l->s.b_count},
		                                 .off = l->b_off, .count = l->s.b_count};
	return n;
}

static int rnn_forward(const struct layer *l, const struct layer_ctx *c,
                       struct layer_call out[LAYER_CALLS_MAX])
{
	struct xo_op_args *a = &out[0].a;

	out[0].op = xo_layer_rnn_op(l->s.kind);
	*a = (struct xo_op_args){.p = c->p};
	a->src[0] = l->in;
	a->src[1] = l->w;
	a->src[2] = l->rk;
	a->src[3] = l->b;
	if (c->p.mask_zero) /* Keras's mask of Embedding(mask_zero=True): its ids */
		a->src[4] = l->ids;
	a->dst[0] = l->out;
	/* NULL unless a backward follows (plan_build): the inference form
	 * (ops.def) */
	a->dst[1] = l->ws;
	return 1;
}

/* back through time from the workspace */
static int rnn_backward(const struct layer *l, const struct layer_ctx *c,
                        struct layer_call out[LAYER_CALLS_MAX])
{
	struct xo_op_args *a = &out[0].a;

	out[0].op = xo_layer_rnn_op(l->s.kind);
	*a = (struct xo_op_args){.p = c->p};
	a->src[0] = l->in;
	a->src[1] = l->w;
	a->src[2] = l->rk;
	a->src[3] = l->ws;
	a->src[4] = l->gout;
	if (c->p.mask_zero)
		a->src[5] = l->ids;
	a->dst[0] = l->gin;
	a->dst[1] = l->dw;
	a->dst[2] = l->drk;
	a->dst[3] = l->db;
	return 1;
}

static void rnn_cost(const struct layer *l, const struct cost_bytes *b, struct xo_layer_cost *out)
{
	double in = b->in, outb = b->out, w = b->w;

	/* per step: the input projection (in_ch x g*u) and the
	 * recurrent one (u x g*u) as multiply-adds; the workspace
	 * (T * S * u) written by the training form's forward and read
	 * backward (the inference form, predict's, writes none) */
	double macs = (double)l->s.in_len * (double)(l->s.w_count + l->s.rk_count);
	double wsb = 4.0 * (double)l->ws_per;
	/* with Keras's mask the op reads the int32 ids, each way */
	double ids = l->s.p.mask_zero ? 4.0 * (double)l->s.in_len : 0.0;

	out->flops_fwd = 2 * macs;
	out->act_bytes_fwd = in + outb + ids;
	out->ws_bytes = l->has_grad ? wsb : 0;
	out->w_bytes_fwd = w + 4.0 * (double)l->s.rk_count;
	out->ops_train_fwd = out->ops_predict = 1;
	if (l->has_grad) {
		/* dW, dU always (and dx unless first): 2 or 3 products */
		out->flops_bwd = 2 * macs * (l->need_dx ? 2 : 1) + 2 * macs;
		out->act_bytes_bwd = in + outb + wsb + (l->need_dx ? in : 0) + ids;
		out->w_bytes_bwd = 2 * (w + 4.0 * (double)l->s.rk_count);
		out->ops_bwd = 1;
	}
	/* the steps run in series (h_t needs h_{t-1}): one step of one
	 * sample is x_t W + h' U forward; back through time dh' = dz
	 * U^T, and dx_t = dz W^T unless first (the weight gradients
	 * are summed over samples and steps apart, in parallel) */
	out->recurrent = xo_layer_keras_class(l->s.kind);
	out->rnn_op = xo_layer_rnn_op(l->s.kind);
	out->units = l->s.p.units;
	out->steps = l->s.in_len;
	out->step_macs_fwd = (double)(l->s.w_count + l->s.rk_count);
	if (l->has_grad)
		out->step_macs_bwd =
		    (double)l->s.rk_count + (l->need_dx ? (double)l->s.w_count : 0);
}

const struct xo_layer_family xo_family_rnn = {
    .views = rnn_views,
    .init = rnn_init,
    .vars = rnn_vars,
    .forward = rnn_forward,
    .backward = rnn_backward,
    .cost = rnn_cost,
};
