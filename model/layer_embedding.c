/*
 * layer_embedding.c - Keras Embedding: int32 ids [T] -> rows of its table
 * [input_dim][output_dim]; the first layer, so its backward writes the
 * table's gradient alone (ids have none).
 */
#include <string.h>

#include "model_run.h"

static enum xo_status embedding_views(struct layer *l, struct xo_tensor *params,
                                      struct xo_tensor *grads)
{
	enum xo_status st;

	st = xo_tensor_view(params, l->w_off, l->s.w_ndim, l->s.w_dim, &l->w);
	if (!st)
		st = xo_tensor_view(grads, l->w_off, l->s.w_ndim, l->s.w_dim, &l->dw);
	return st;
}

/* Keras Embedding: embeddings_initializer "uniform", RandomUniform(-0.05, 0.05) */
static void embedding_init(const struct layer *l, int i, uint64_t seed, float *w)
{
	for (int64_t e = 0; e < l->s.w_count; e++)
		w[l->w_off + e] = (float)((2.0 * xo_philox_uniform(seed, XO_STREAM_INIT, (uint32_t)i,
		                                                    (uint64_t)e) -
		                           1.0) *
		                          0.05);
}

static int embedding_vars(const struct layer *l, struct xo_layer_var out[XO_LAYER_VARS_MAX])
{
	out[0] = (struct xo_layer_var){.name = "embeddings", .ndim = l->s.w_ndim,
	                               .off = l->w_off, .count = l->s.w_count};
	memcpy(out[0].dim, l->s.w_dim, sizeof(out[0].dim));
	return 1;
}

static int embedding_forward(const struct layer *l, const struct layer_ctx *c,
                             struct layer_call out[LAYER_CALLS_MAX])
{
	out[0].op = XO_OP_embedding;
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = l->in;
	out[0].a.src[1] = l->w;
	out[0].a.dst[0] = l->out;
	return 1;
}

/* the first layer: no dx (ids) */
static int embedding_backward(const struct layer *l, const struct layer_ctx *c,
                              struct layer_call out[LAYER_CALLS_MAX])
{
	out[0].op = XO_OP_embedding;
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = l->in;
	out[0].a.src[1] = l->gout;
	out[0].a.dst[0] = l->dw;
	return 1;
}

static void embedding_cost(const struct layer *l, const struct cost_bytes *b,
                           struct xo_layer_cost *out)
{
	double in = b->in, outb = b->out, w = b->w;

	/* fwd: T ids read, T table rows read, [T][dim] written; bwd
	 * (the table trainable): ids and dy read, the table's
	 * gradient written whole (unused rows are zeros) */
	out->act_bytes_fwd = in + outb;
	out->w_bytes_fwd = outb; /* the rows read */
	out->ops_train_fwd = out->ops_predict = 1;
	if (l->has_grad) {
		out->flops_bwd = (double)(l->s.out_len * l->s.out_ch); /* one add each */
		out->act_bytes_bwd = in + outb;
		out->w_bytes_bwd = w;
		out->ops_bwd = 1;
	}
}

const struct xo_layer_family xo_family_embedding = {
    .views = embedding_views,
    .init = embedding_init,
    .vars = embedding_vars,
    .forward = embedding_forward,
    .backward = embedding_backward,
    .cost = embedding_cost,
};
