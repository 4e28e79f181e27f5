/*
 * layer_attn.c - the multi_head_attention kind (Keras MultiHeadAttention,
 * called as mha(query, value): the key is the value): three projections
 * by the dense op on the inputs' rows (query -> Q [Tq][H*dk], value -> K
 * [Tk][H*dk] and V [Tk][H*dv]), the attention op, then the output
 * projection O [Tq][H*dv] -> [Tq][d_out]. Its variables in Keras's order,
 * each EinsumDense's kernel then bias: query [d_q][H][dk] (the spec's
 * w_dim), key [d_v][H][dk], value [d_v][H][dv], attention_output
 * [H][dv][d_out]; the query kernel is the kernel, the other three kernels
 * sit in the recurrent kernel's place (rk_off, rk_count) in that order and
 * the four biases in the bias's (b_count), so model_open lays them out
 * unchanged. The intermediates are plan views of the layer's z (Q, K, V,
 * O) and gz (their gradients and the key projection's input gradient,
 * which is added to the value's: both read the second input). The
 * attention op gets the layer's dropout with the seed, step and layer index
 * of xo_model_layer_params (the dropout layer's key, so forward and backward
 * draw one mask); at inference its training flag is false, and the op then
 * ignores the rate (Keras's dropout is the identity there). Called with
 * attention_mask= (a model input [Tq][Tk], spec.c), the op takes that input
 * as its mask source (att_m); the mask gets no gradient. Fed Keras's
 * implicit masks (an input carrying the mask of Embedding(mask_zero=True):
 * spec.c's p.query_mask, p.value_mask), the forward first runs the
 * mask_outer op on the model's ids (and att_m) into the plan's view
 * att_t[4], which the attention op then reads as its mask source both ways.
 */
#include <math.h>
#include <string.h>

#include "model_run.h"

/* The sizes of the layer: query and value features, key/query and value
 * widths per head, heads, output features. */
struct mha_dims {
	int64_t dq, dvin, dk, dv, h, dout;
};

static struct mha_dims mha_dims_of(const struct xo_layer_spec *s)
{
	return (struct mha_dims){
	    .dq = s->in_ch,
	    .dvin = s->p.ch_b,
	    .dk = s->p.key_dim,
	    .dv = xo_attention_value_dim(&s->p),
	    .h = s->p.heads,
	    .dout = s->out_ch,
	};
}

/* Variable k (0 query, 1 key, 2 value, 3 attention_output): its kernel's
 * rows and columns as the dense op sees them, and its offsets. */
static void mha_var(const struct layer *l, int k, int64_t *rows, int64_t *cols, int64_t *w_off,
                    int64_t *b_off)
{
	struct mha_dims d = mha_dims_of(&l->s);
	const int64_t r[4] = {d.dq, d.dvin, d.dvin, d.h * d.dv};
	const int64_t c[4] = {d.h * d.dk, d.h * d.dk, d.h * d.dv, d.dout};
	int64_t wo = l->w_off, bo = l->b_off;

	for (int j = 0; j < k; j++) {
		wo += r[j] * c[j];
		bo += c[j];
	}
	*rows = r[k];
	*cols = c[k];
	*w_off = wo;
	*b_off = bo;
}

static enum xo_status mha_views(struct layer *l, struct xo_tensor *params,
                                struct xo_tensor *grads)
{
	enum xo_status st = XO_OK;

	for (int k = 0; k < 4 && !st; k++) {
		int64_t rows, cols, wo, bo;

		mha_var(l, k, &rows, &cols, &wo, &bo);
		st = xo_tensor_view(params, wo, 2, (int64_t[]){rows, cols}, &l->att_w[2 * k]);
		if (!st)
			st = xo_tensor_view(grads, wo, 2, (int64_t[]){rows, cols}, &l->att_dw[2 * k]);
		if (!st && l->s.b_count)
			st = xo_tensor_view(params, bo, 1, &cols, &l->att_w[2 * k + 1]);
		if (!st && l->s.b_count)
			st = xo_tensor_view(grads, bo, 1, &cols, &l->att_dw[2 * k + 1]);
	}
	return st;
}

/* Keras's glorot_uniform for each EinsumDense kernel by its 3-D shape's
 * fans (initializers compute_fans: the receptive field is the leading
 * axis, so [a][b][c] has fan_in b * a, fan_out c * a); the biases stay
 * zero. Draws by element of the layer's kernels in order. */
static void mha_init(const struct layer *l, int i, uint64_t seed, float *w)
{
	struct mha_dims d = mha_dims_of(&l->s);
	const int64_t sh[4][3] = {{d.dq, d.h, d.dk},
	                          {d.dvin, d.h, d.dk},
	                          {d.dvin, d.h, d.dv},
	                          {d.h, d.dv, d.dout}};
	int64_t e = 0;

	for (int k = 0; k < 4; k++) {
		int64_t rows, cols, wo, bo;
		double lim = sqrt(6.0 / ((double)(sh[k][1] * sh[k][0]) + (double)(sh[k][2] * sh[k][0])));

		mha_var(l, k, &rows, &cols, &wo, &bo);
		for (int64_t t = 0; t < rows * cols; t++, e++) {
			double u = xo_philox_uniform(seed, XO_STREAM_INIT, (uint32_t)i, (uint64_t)e);

			w[wo + t] = (float)((2.0 * u - 1.0) * lim);
		}
	}
}

static int mha_vars(const struct layer *l, struct xo_layer_var out[XO_LAYER_VARS_MAX])
{
	/* Keras's query/kernel ...: '/' joined by '_' (a checkpoint's file
	 * names are layer.name.npy) */
	static const char *const names[8] = {
	    "query_kernel", "query_bias", "key_kernel", "key_bias",
	    "value_kernel", "value_bias", "attention_output_kernel", "attention_output_bias"};
	static const char *const subs[4] = {"query_dense", "key_dense", "value_dense",
	                                    "output_dense"};
	struct mha_dims d = mha_dims_of(&l->s);
	const int64_t sh[4][3] = {{d.dq, d.h, d.dk},
	                          {d.dvin, d.h, d.dk},
	                          {d.dvin, d.h, d.dv},
	                          {d.h, d.dv, d.dout}};
	const int64_t bs[4][2] = {{d.h, d.dk}, {d.h, d.dk}, {d.h, d.dv}, {d.dout, 0}};
	int n = 0;

	for (int k = 0; k < 4; k++) {
		int64_t rows, cols, wo, bo;

		mha_var(l, k, &rows, &cols, &wo, &bo);
		out[n++] = (struct xo_layer_var){.name = names[2 * k], .ndim = 3,
		                                 .dim = {sh[k][0], sh[k][1], sh[k][2]},
		                                 .off = wo, .count = rows * cols, .sub = subs[k]};
		if (l->s.b_count)
			out[n++] = (struct xo_layer_var){.name = names[2 * k + 1],
			                                 .ndim = k < 3 ? 2 : 1,
			                                 .dim = {bs[k][0], bs[k][1]},
			                                 .off = bo, .count = cols, .sub = subs[k],
			                                 .sub_index = 1};
	}
	return n;
}

/* The dense op of projection k on rows n * t of the layer's batch. */
static struct layer_call mha_dense(const struct layer *l, const struct layer_ctx *c, int k,
                                   int64_t t)
{
	struct layer_call call = {.op = XO_OP_dense};
	int64_t rows, cols, wo, bo;

	mha_var(l, k, &rows, &cols, &wo, &bo);
	call.a.p = xo_params_default();
	call.a.p.batch = c->p.batch * t;
	call.a.p.ch = rows;
	call.a.p.units = cols;
	call.a.p.use_bias = l->s.p.use_bias;
	call.a.src[1] = l->att_w[2 * k];
	call.a.src[2] = l->att_w[2 * k + 1];
	return call;
}

/* The attention op's call (its sources q, k, v and the mask; the caller
 * sets the rest): the implicit masks' att_t[4] as the mask source when the
 * layer has them, else the mask input or NULL (attention_mask 0). */
static struct layer_call mha_attention(const struct layer *l, const struct layer_ctx *c, bool bwd)
{
	struct layer_call call = {.op = XO_OP_attention, .a = {.p = c->p}};
	bool implicit = layer_mha_implicit_mask(&l->s);

	call.a.p.len_kv = xo_attention_len_kv(&l->s.p);
	call.a.p.attention_mask = implicit || l->att_m;
	call.a.p.query_mask = call.a.p.value_mask = false; /* mask_outer's keys */
	for (int s = 0; s < 3; s++)
		call.a.src[s] = l->att_t[s];
	call.a.src[bwd ? 4 : 3] = implicit ? l->att_t[4] : l->att_m;
	return call;
}

static int mha_forward(const struct layer *l, const struct layer_ctx *c,
                       struct layer_call out[LAYER_CALLS_MAX])
{
	int64_t tq = l->s.in_len, tk = xo_attention_len_kv(&l->s.p);
	const struct xo_tensor *in[4] = {l->in, l->in2, l->in2, l->att_t[3]};
	struct xo_tensor *res[4] = {l->att_t[0], l->att_t[1], l->att_t[2], l->out};
	int n = 0;

	if (layer_mha_implicit_mask(&l->s)) {
		/* the ids' masks (and the mask input) ANDed into att_t[4] */
		out[n] = (struct layer_call){.op = XO_OP_mask_outer, .a = {.p = xo_params_default()}};
		out[n].a.p.batch = c->p.batch;
		out[n].a.p.len = tq;
		out[n].a.p.len_kv = tk;
		out[n].a.p.query_mask = l->s.p.query_mask;
		out[n].a.p.value_mask = l->s.p.value_mask;
		out[n].a.p.attention_mask = l->att_m != NULL;
		out[n].a.src[0] = l->ids;
		out[n].a.src[1] = l->att_m;
		out[n].a.dst[0] = l->att_t[4];
		n++;
	}
	for (int k = 0; k < 4; k++) {
		int j = n + (k < 3 ? k : 4); /* the attention op runs fourth */

		out[j] = mha_dense(l, c, k, k == 1 || k == 2 ? tk : tq);
		out[j].a.src[0] = in[k];
		out[j].a.dst[0] = res[k];
	}
	out[n + 3] = mha_attention(l, c, false);
	out[n + 3].a.dst[0] = l->att_t[3];
	return n + 5;
}

/* The output projection back (gO, its variables' gradients), the attention
 * op back (gQ, gK, gV), the three projections back (the query's input
 * gradient into gin, the value's into gin2, the key's into the scratch),
 * then the key's added into gin2. */
static int mha_backward(const struct layer *l, const struct layer_ctx *c,
                        struct layer_call out[LAYER_CALLS_MAX])
{
	int64_t tq = l->s.in_len, tk = xo_attention_len_kv(&l->s.p);
	const struct xo_tensor *x[4] = {l->in, l->in2, l->in2, l->att_t[3]};
	const struct xo_tensor *y[4] = {l->att_t[0], l->att_t[1], l->att_t[2], l->out};
	const struct xo_tensor *dy[4] = {l->att_g[0], l->att_g[1], l->att_g[2], l->gout};
	struct xo_tensor *dx[4] = {l->gin, l->gin2 ? l->att_g[4] : NULL, l->gin2, l->att_g[3]};
	const int order[4] = {3, 0, 2, 1};
	int n = 0;

	for (int o = 0; o < 4; o++) {
		int k = order[o];

		out[n] = mha_dense(l, c, k, k == 1 || k == 2 ? tk : tq);
		out[n].a.src[0] = x[k];
		out[n].a.src[2] = y[k];
		out[n].a.src[3] = dy[k];
		out[n].a.dst[0] = dx[k];
		out[n].a.dst[1] = l->att_dw[2 * k];
		/* the key's bias adds q . b to every score of a query row, which
		 * the softmax cancels: its gradient is identically 0 (Keras's is
		 * rounding noise, which Adam would turn into steps), so no op
		 * writes it and it stays the 0 model.c gives the gradients */
		out[n].a.dst[2] = k == 1 ? NULL : l->att_dw[2 * k + 1];
		if (k == 1)
			out[n].a.p.use_bias = false;
		n++;
		if (k != 3)
			continue;
		out[n] = mha_attention(l, c, true);
		out[n].a.src[3] = l->att_g[3];
		for (int s = 0; s < 3; s++)
			out[n].a.dst[s] = l->att_g[s];
		n++;
	}
	if (!l->gin2)
		return n;
	out[n] = (struct layer_call){.op = XO_OP_merge, .a = {.p = xo_params_default()}, .fwd = true};
	out[n].a.p.batch = c->p.batch * tk;
	out[n].a.p.len = 1;
	out[n].a.p.ch = l->s.p.ch_b;
	out[n].a.src[0] = l->gin2;
	out[n].a.src[1] = l->att_g[4];
	out[n].a.dst[0] = l->gin2;
	return n + 1;
}

/* Forward: the four projections' and the attention's multiply-adds
 * (scores and the weighted sum: Tq * Tk * H * (dk + dv)); backward twice
 * that. Bytes: the inputs, the four intermediates and the output, once. */
static void mha_cost(const struct layer *l, const struct cost_bytes *b, struct xo_layer_cost *out)
{
	struct mha_dims d = mha_dims_of(&l->s);
	double tq = (double)l->s.in_len, tk = (double)xo_attention_len_kv(&l->s.p);
	double proj = tq * (double)(d.dq * d.h * d.dk + d.h * d.dv * d.dout) +
	              tk * (double)(d.dvin * d.h * (d.dk + d.dv));
	double att = tq * tk * (double)(d.h * (d.dk + d.dv));
	double mid = 4.0 * (2.0 * tq * (double)(d.h * d.dk) + tk * (double)(d.h * (d.dk + d.dv)));

	out->flops_fwd = 2.0 * (proj + att);
	out->act_bytes_fwd = b->in + 4.0 * tk * (double)d.dvin + mid + b->out;
	out->w_bytes_fwd = 4.0 * (double)xo_layer_trainable(&l->s); /* b->w: no rk */
	out->ops_train_fwd = out->ops_predict = layer_mha_implicit_mask(&l->s) ? 6 : 5;
	out->flops_bwd = 2.0 * out->flops_fwd;
	out->act_bytes_bwd = 2.0 * out->act_bytes_fwd;
	out->w_bytes_bwd = 2.0 * out->w_bytes_fwd;
	out->ops_bwd = l->need_dx ? 6 : 5;
	out->heads = d.h;
	out->len_q = l->s.in_len;
	out->len_kv = xo_attention_len_kv(&l->s.p);
	out->key_dim = d.dk;
	out->value_dim = d.dv;
}

bool xo_model_layer_attention(const struct xo_model *m, int i, int64_t batch,
                              struct xo_layer_attention *out)
{
	const struct layer *l;
	struct mha_dims d;

	XO_ASSERT(m && out && i >= 0 && i < m->nlayers && batch >= 1);
	l = &m->layers[i];
	if (l->s.kind != XO_LAYER_MULTI_HEAD_ATTENTION)
		return false;
	d = mha_dims_of(&l->s);
	*out = (struct xo_layer_attention){
	    .att_fwd = xo_model_layer_params(m, i, false),
	    .att_bwd = xo_model_layer_params(m, i, true),
	    .heads = d.h,
	    .len_q = l->s.in_len,
	    .len_kv = xo_attention_len_kv(&l->s.p),
	    .key_dim = d.dk,
	    .value_dim = d.dv,
	};
	out->att_fwd.batch = out->att_bwd.batch = batch;
	/* mask_outer's keys, not the attention op's (the bench runs the op
	 * without the implicit masks' source) */
	out->att_fwd.query_mask = out->att_fwd.value_mask = false;
	out->att_bwd.query_mask = out->att_bwd.value_mask = false;
	out->att_fwd.len_kv = out->att_bwd.len_kv = out->len_kv;
	for (int k = 0; k < 4; k++) {
		struct xo_layer_gemm *g = &out->proj[k];
		int64_t rows, cols, wo, bo, t = k == 1 || k == 2 ? out->len_kv : out->len_q;

		mha_var(l, k, &rows, &cols, &wo, &bo);
		g->op = XO_OP_dense;
		g->fwd = xo_params_default();
		g->fwd.batch = batch * t;
		g->fwd.ch = rows;
		g->fwd.units = cols;
		g->fwd.use_bias = l->s.p.use_bias;
		g->bwd = g->fwd;
		g->bwd.training = true;
		g->has_grad = l->has_grad;
		/* the output projection's dx feeds the attention's backward */
		g->need_dx = k == 3 || l->need_dx;
		g->rows = t; /* per sample; the op's batch is batch x t rows */
		g->k = g->k_dw = g->k_dx = rows;
		g->n = cols;
	}
	return true;
}

const struct xo_layer_family xo_family_attn = {
    .views = mha_views,
    .init = mha_init,
    .vars = mha_vars,
    .forward = mha_forward,
    .backward = mha_backward,
    .cost = mha_cost,
};
