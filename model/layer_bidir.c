/*
 * layer_bidir.c - Keras Bidirectional over SimpleRNN, LSTM or GRU (the
 * wrapped kind is the spec's inner): two sets of the wrapped kind's
 * variables, and four ops a pass.
 *
 * Forward (Keras 3 layers/rnn/bidirectional.py): the recurrent op over x as
 * configured (yf) and again with go_backwards flipped (yb, in its
 * processing order, as Keras's backward layer returns it); with
 * return_sequences yb is flipped back in time (the flip op: Keras's
 * ops.flip(y_rev, axis=1)), so step t of both holds the state after input
 * step t; then the merge op joins them (concat: yf's units first; sum,
 * mul, ave). Backward: the merge's gradients, the flip's, back through
 * time in each direction, and the two input gradients added (the merge op
 * forward, mode add, in place), since both directions read the same x.
 * Keras's mask of Embedding(mask_zero=True) (p.mask_zero, the ids in
 * l->ids) goes to both directions (the backward one reads it reversed, as
 * its inputs); zero_output_for_mask is return_sequences for both, as
 * Keras forces (shape_bidirectional), so a masked step's merged output is
 * the merge of two zeros.
 *
 * Flat parameters (model_open lays out the spec's counts): kernel
 * [2][ch][g*u], recurrent_kernel [2][u][g*u], bias [2][bias]: each the
 * forward direction's half, then the backward direction's. The variables
 * are listed in Keras's order: the forward layer's kernel,
 * recurrent_kernel, bias, then the backward layer's.
 */
#include <math.h>
#include <string.h>

#include "model_run.h"

/* The backward direction's variables in pv[] */
enum { PV_W, PV_RK, PV_B, PV_DW, PV_DRK, PV_DB };
/* The plan's scratch views in sv[]: in z the two directions' outputs and
 * yb flipped back (yr); in gz their gradients; in the workspace buffer the
 * two directions' workspaces and the backward direction's dx */
enum { SV_YF, SV_YB, SV_YR, SV_GYF, SV_GYB, SV_GYR, SV_WSF, SV_WSB, SV_GXB };

/* One direction's element counts: kernel, recurrent kernel, bias. */
static void half_counts(const struct layer *l, int64_t *kc, int64_t *rc, int64_t *bc)
{
	*kc = l->s.w_count / 2;
	*rc = l->s.rk_count / 2;
	*bc = l->s.b_count / 2;
}

/* GRU with reset_after: its bias is [2][3u] (ops.def) */
static bool two_row_bias(const struct layer *l)
{
	return l->s.inner == XO_LAYER_GRU && l->s.p.reset_after;
}

/* The views of one direction (d = 0 forward, 1 backward) in t (params or
 * grads): kernel, recurrent kernel, bias (NULL without bias). */
static enum xo_status half_views(const struct layer *l, struct xo_tensor *t, int d,
                                 struct xo_tensor **w, struct xo_tensor **rk, struct xo_tensor **b)
{
	int64_t kc, rc, bc;
	int64_t wd[2] = {l->s.w_dim[1], l->s.w_dim[2]};
	int64_t rd[2] = {l->s.p.units, l->s.w_dim[2]};
	int64_t bd[2] = {2, 0};
	enum xo_status st;

	half_counts(l, &kc, &rc, &bc);
	bd[1] = bc / 2;
	st = xo_tensor_view(t, l->w_off + d * kc, 2, wd, w);
	if (!st)
		st = xo_tensor_view(t, l->rk_off + d * rc, 2, rd, rk);
	if (!st && bc)
		st = two_row_bias(l) ? xo_tensor_view(t, l->b_off + d * bc, 2, bd, b)
		                     : xo_tensor_view(t, l->b_off + d * bc, 1, &bc, b);
	return st;
}

static enum xo_status bidir_views(struct layer *l, struct xo_tensor *params,
                                  struct xo_tensor *grads)
{
	enum xo_status st = half_views(l, params, 0, &l->w, &l->rk, &l->b);

	if (!st)
		st = half_views(l, grads, 0, &l->dw, &l->drk, &l->db);
	if (!st)
		st = half_views(l, params, 1, &l->pv[PV_W], &l->pv[PV_RK], &l->pv[PV_B]);
	if (!st)
		st = half_views(l, grads, 1, &l->pv[PV_DW], &l->pv[PV_DRK], &l->pv[PV_DB]);
	return st;
}

/* The plan's scratch for n samples, laid one after another in the
 * buffers model.c sized for it (layer_z_ch: 3 units a step in z and gz;
 * layer_ws_per: the workspace buffer) */
static enum xo_status bidir_scratch(struct layer *l, int64_t n, bool training)
{
	bool seq = l->s.p.return_sequences;
	int64_t T = l->s.in_len, u = l->s.p.units, ch = l->s.in_ch;
	int64_t y = l->s.out_len * u; /* one direction's output of a sample */
	int64_t yd[3] = {n, seq ? T : u, u};
	int nd = seq ? 3 : 2;
	int64_t wsd = T * xo_rnn_ws_blocks(xo_layer_rnn_op((enum xo_layer_kind)l->s.inner)) * u;
	enum xo_status st;

	st = xo_tensor_view(l->zbuf, 0, nd, yd, &l->sv[SV_YF]);
	if (!st)
		st = xo_tensor_view(l->zbuf, n * y, nd, yd, &l->sv[SV_YB]);
	if (!st && seq)
		st = xo_tensor_view(l->zbuf, 2 * n * y, nd, yd, &l->sv[SV_YR]);
	if (st || !training || !l->has_grad)
		return st;
	st = xo_tensor_view(l->gzbuf, 0, nd, yd, &l->sv[SV_GYF]);
	if (!st)
		st = xo_tensor_view(l->gzbuf, n * y, nd, yd, &l->sv[SV_GYB]);
	if (!st && seq)
		st = xo_tensor_view(l->gzbuf, 2 * n * y, nd, yd, &l->sv[SV_GYR]);
	if (!st)
		st = xo_tensor_view(l->wsbuf, 0, 3, (int64_t[]){n, T, wsd / T}, &l->sv[SV_WSF]);
	if (!st)
		st = xo_tensor_view(l->wsbuf, n * wsd, 3, (int64_t[]){n, T, wsd / T},
		                    &l->sv[SV_WSB]);
	if (!st && l->need_dx)
		st = xo_tensor_view(l->wsbuf, 2 * n * wsd, 3, (int64_t[]){n, T, ch},
		                    &l->sv[SV_GXB]);
	return st;
}

static void bidir_init(const struct layer *l, int i, uint64_t seed, float *w)
{
	/* as layer_rnn.c's, for each direction: kernels glorot-uniform over
	 * (in_ch, g*u), recurrent kernels over (u, g*u) (Keras's orthogonal
	 * draw not matched), LSTM's forget-gate bias 1 */
	double lk = sqrt(6.0 / (double)(l->s.w_dim[1] + l->s.w_dim[2]));
	double lr = sqrt(6.0 / (double)(l->s.p.units + l->s.w_dim[2]));
	int64_t kc, rc, bc;

	half_counts(l, &kc, &rc, &bc);
	for (int64_t e = 0; e < l->s.w_count + l->s.rk_count; e++) {
		double u = xo_philox_uniform(seed, XO_STREAM_INIT, (uint32_t)i, (uint64_t)e);

		w[l->w_off + e] = (float)((2.0 * u - 1.0) * (e < l->s.w_count ? lk : lr));
	}
	if (l->s.inner == XO_LAYER_LSTM && bc)
		for (int d = 0; d < 2; d++)
			for (int64_t e = 0; e < l->s.p.units; e++)
				w[l->b_off + d * bc + l->s.p.units + e] = 1.0f;
}

/* Keras's order: the forward layer's kernel, recurrent_kernel, bias, then
 * the backward layer's (keras.c finds each half under forward_layer/ and
 * backward_layer/); checkpoint names prefixed by the direction */
static int bidir_vars(const struct layer *l, struct xo_layer_var out[XO_LAYER_VARS_MAX])
{
	static const char *const names[2][3] = {
	    {"forward_kernel", "forward_recurrent_kernel", "forward_bias"},
	    {"backward_kernel", "backward_recurrent_kernel", "backward_bias"}};
	int64_t kc, rc, bc;
	int n = 0;

	half_counts(l, &kc, &rc, &bc);
	for (int d = 0; d < 2; d++) {
		out[n++] = (struct xo_layer_var){.name = names[d][0], .ndim = 2,
		                                 .dim = {l->s.w_dim[1], l->s.w_dim[2]},
		                                 .off = l->w_off + d * kc, .count = kc};
		out[n++] = (struct xo_layer_var){.name = names[d][1], .ndim = 2,
		                                 .dim = {l->s.p.units, l->s.w_dim[2]},
		                                 .off = l->rk_off + d * rc, .count = rc};
		if (bc && two_row_bias(l))
			out[n++] = (struct xo_layer_var){.name = names[d][2], .ndim = 2,
			                                 .dim = {2, bc / 2},
			                                 .off = l->b_off + d * bc, .count = bc};
		else if (bc)
			out[n++] = (struct xo_layer_var){.name = names[d][2], .ndim = 1,
			                                 .dim = {bc},
			                                 .off = l->b_off + d * bc, .count = bc};
	}
	return n;
}

/* The merge op's parameters: the two directions' outputs, u channels at
 * each of the output's positions */
static struct xo_params merge_params(const struct layer *l, const struct layer_ctx *c)
{
	struct xo_params p = c->p;

	p.len = l->s.out_len;
	p.ch = p.ch_b = l->s.p.units;
	p.mask_zero = p.zero_output_for_mask = false; /* the recurrent ops' only */
	return p;
}

/* The flip op's: the backward direction's [T][u] sequence */
static struct xo_params flip_params(const struct layer *l, const struct layer_ctx *c)
{
	struct xo_params p = c->p;

	p.len = l->s.in_len;
	p.ch = l->s.p.units;
	p.mask_zero = p.zero_output_for_mask = false; /* the recurrent ops' only */
	return p;
}

static int bidir_forward(const struct layer *l, const struct layer_ctx *c,
                         struct layer_call out[LAYER_CALLS_MAX])
{
	enum xo_op op = xo_layer_rnn_op((enum xo_layer_kind)l->s.inner);
	bool seq = l->s.p.return_sequences;
	int n = 0;

	/* the workspaces are NULL but where a backward follows: the
	 * inference form (ops.def) */
	out[n] = (struct layer_call){.op = op, .a = {.p = c->p}};
	out[n].a.src[0] = l->in;
	out[n].a.src[1] = l->w;
	out[n].a.src[2] = l->rk;
	out[n].a.src[3] = l->b;
	out[n].a.src[4] = c->p.mask_zero ? l->ids : NULL; /* the step mask, ops.def */
	out[n].a.dst[0] = l->sv[SV_YF];
	out[n++].a.dst[1] = l->sv[SV_WSF];
	out[n] = (struct layer_call){.op = op, .a = {.p = c->p}};
	out[n].a.p.go_backwards = !c->p.go_backwards;
	out[n].a.src[0] = l->in;
	out[n].a.src[1] = l->pv[PV_W];
	out[n].a.src[2] = l->pv[PV_RK];
	out[n].a.src[3] = l->pv[PV_B];
	/* go_backwards reads the mask reversed, as the inputs (ops.def) */
	out[n].a.src[4] = c->p.mask_zero ? l->ids : NULL;
	out[n].a.dst[0] = l->sv[SV_YB];
	out[n++].a.dst[1] = l->sv[SV_WSB];
	if (seq) {
		out[n] = (struct layer_call){.op = XO_OP_flip, .a = {.p = flip_params(l, c)}};
		out[n].a.src[0] = l->sv[SV_YB];
		out[n++].a.dst[0] = l->sv[SV_YR];
	}
	out[n] = (struct layer_call){.op = XO_OP_merge, .a = {.p = merge_params(l, c)}};
	out[n].a.src[0] = l->sv[SV_YF];
	out[n].a.src[1] = l->sv[seq ? SV_YR : SV_YB];
	out[n++].a.dst[0] = l->out;
	return n;
}

static int bidir_backward(const struct layer *l, const struct layer_ctx *c,
                          struct layer_call out[LAYER_CALLS_MAX])
{
	enum xo_op op = xo_layer_rnn_op((enum xo_layer_kind)l->s.inner);
	bool seq = l->s.p.return_sequences, dx = l->need_dx && l->gin;
	int n = 0;

	out[n] = (struct layer_call){.op = XO_OP_merge, .a = {.p = merge_params(l, c)}};
	out[n].a.src[0] = l->sv[SV_YF];
	out[n].a.src[1] = l->sv[seq ? SV_YR : SV_YB];
	out[n].a.src[2] = l->gout;
	out[n].a.dst[0] = l->sv[SV_GYF];
	out[n++].a.dst[1] = l->sv[seq ? SV_GYR : SV_GYB];
	if (seq) {
		out[n] = (struct layer_call){.op = XO_OP_flip, .a = {.p = flip_params(l, c)}};
		out[n].a.src[0] = l->sv[SV_GYR];
		out[n++].a.dst[0] = l->sv[SV_GYB];
	}
	out[n] = (struct layer_call){.op = op, .a = {.p = c->p}};
	out[n].a.p.go_backwards = !c->p.go_backwards;
	out[n].a.src[0] = l->in;
	out[n].a.src[1] = l->pv[PV_W];
	out[n].a.src[2] = l->pv[PV_RK];
	out[n].a.src[3] = l->sv[SV_WSB];
	out[n].a.src[4] = l->sv[SV_GYB];
	out[n].a.src[5] = c->p.mask_zero ? l->ids : NULL;
	out[n].a.dst[0] = dx ? l->sv[SV_GXB] : NULL;
	out[n].a.dst[1] = l->pv[PV_DW];
	out[n].a.dst[2] = l->pv[PV_DRK];
	out[n++].a.dst[3] = l->pv[PV_DB];
	out[n] = (struct layer_call){.op = op, .a = {.p = c->p}};
	out[n].a.src[0] = l->in;
	out[n].a.src[1] = l->w;
	out[n].a.src[2] = l->rk;
	out[n].a.src[3] = l->sv[SV_WSF];
	out[n].a.src[4] = l->sv[SV_GYF];
	out[n].a.src[5] = c->p.mask_zero ? l->ids : NULL;
	out[n].a.dst[0] = dx ? l->gin : NULL;
	out[n].a.dst[1] = l->dw;
	out[n].a.dst[2] = l->drk;
	out[n++].a.dst[3] = l->db;
	if (dx) {
		/* both directions read x: dx is the sum of their terms (the
		 * merge op forward, mode add, in place: ops.def allows it) */
		out[n] = (struct layer_call){.op = XO_OP_merge, .fwd = true, .a = {.p = c->p}};
		out[n].a.p.mode = XO_MERGE_ADD;
		out[n].a.p.ch_b = l->s.in_ch;
		out[n].a.p.mask_zero = out[n].a.p.zero_output_for_mask = false;
		out[n].a.src[0] = l->gin;
		out[n].a.src[1] = l->sv[SV_GXB];
		out[n++].a.dst[0] = l->gin;
	}
	return n;
}

static void bidir_cost(const struct layer *l, const struct cost_bytes *b, struct xo_layer_cost *out)
{
	double in = b->in, outb = b->out, w = b->w;
	int64_t kc, rc, bc;
	bool seq = l->s.p.return_sequences;
	/* one direction's output: the merge reads two, writes one */
	double y = 4.0 * (double)(l->s.out_len * l->s.p.units);
	double macs, wsb = 4.0 * (double)l->ws_per;
	/* with Keras's mask each direction reads the int32 ids, each way */
	double ids = l->s.p.mask_zero ? 8.0 * (double)l->s.in_len : 0.0;

	half_counts(l, &kc, &rc, &bc);
	/* per direction and step, the input and recurrent projections; two
	 * directions */
	macs = 2.0 * (double)l->s.in_len * (double)(kc + rc);
	out->flops_fwd = 2 * macs;
	/* each direction reads x and writes its y; the flip moves yb; the
	 * merge reads both and writes the output */
	out->act_bytes_fwd = 2 * (in + y) + (seq ? 2 * y : 0) + 2 * y + outb + ids;
	out->ws_bytes = l->has_grad ? wsb : 0;
	out->w_bytes_fwd = w + 4.0 * (double)l->s.rk_count;
	out->ops_train_fwd = out->ops_predict = seq ? 4 : 3;
	if (l->has_grad) {
		out->flops_bwd = 2 * macs * (l->need_dx ? 2 : 1) + 2 * macs;
		out->act_bytes_bwd = outb + 4 * y + (seq ? 2 * y : 0) + 2 * (in + y) + wsb +
		                     (l->need_dx ? 4 * in : 0) + ids;
		out->w_bytes_bwd = 2 * (w + 4.0 * (double)l->s.rk_count);
		out->ops_bwd = 3 + (seq ? 1 : 0) + (l->need_dx ? 1 : 0);
	}
	/* the directions run one after the other, each T steps in series:
	 * 2T serial steps of one direction's step cost */
	out->recurrent = xo_layer_keras_class((enum xo_layer_kind)l->s.inner);
	out->rnn_op = xo_layer_rnn_op((enum xo_layer_kind)l->s.inner);
	out->units = l->s.p.units;
	out->steps = 2 * l->s.in_len;
	out->step_macs_fwd = (double)(kc + rc);
	if (l->has_grad)
		out->step_macs_bwd = (double)rc + (l->need_dx ? (double)kc : 0);
}

const struct xo_layer_family xo_family_bidir = {
    .views = bidir_views,
    .scratch = bidir_scratch,
    .init = bidir_init,
    .vars = bidir_vars,
    .forward = bidir_forward,
    .backward = bidir_backward,
    .cost = bidir_cost,
};
