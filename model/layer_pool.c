/*
 * layer_pool.c - the pooling kinds, 1-D and 2-D, windowed and global: no
 * variables, one op each way (the kind's op in layers.def). Max pooling's
 * backward reads x again to find each window's argmax; average pooling's
 * needs the output gradient alone, and with Keras's mask (a masked
 * global_average_pooling1d, p.mask_zero) the ids too, both ways.
 */
#include "model_run.h"

static int pool_forward(const struct layer *l, const struct layer_ctx *c,
                        struct layer_call out[LAYER_CALLS_MAX])
{
	XO_ASSERT(xo_layer_kinds[l->s.kind].op != XO_OP_COUNT);
	out[0].op = xo_layer_kinds[l->s.kind].op;
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = l->in;
	if (c->p.mask_zero)
		out[0].a.src[1] = l->ids;
	out[0].a.dst[0] = l->out;
	return 1;
}

static int max_pool_backward(const struct layer *l, const struct layer_ctx *c,
                             struct layer_call out[LAYER_CALLS_MAX])
{
	if (!l->need_dx)
		return 0;
	out[0].op = xo_layer_kinds[l->s.kind].op;
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = l->in;
	out[0].a.src[1] = l->gout;
	out[0].a.dst[0] = l->gin;
	return 1;
}

static int average_pool_backward(const struct layer *l, const struct layer_ctx *c,
                                 struct layer_call out[LAYER_CALLS_MAX])
{
	if (!l->need_dx)
		return 0;
	out[0].op = xo_layer_kinds[l->s.kind].op;
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = l->gout;
	if (c->p.mask_zero)
		out[0].a.src[1] = l->ids;
	out[0].a.dst[0] = l->gin;
	return 1;
}

/* max_pooling1d, global_max_pooling1d, max_pooling2d, global_max_pooling2d */
static void max_pool_cost(const struct layer *l, const struct cost_bytes *b,
                          struct xo_layer_cost *out)
{
	double in = b->in, outb = b->out;

	out->act_bytes_fwd = in + outb;
	out->ops_train_fwd = out->ops_predict = 1;
	if (l->need_dx) { /* reads x (argmax again) and dy, writes dx */
		out->act_bytes_bwd = 2 * in + outb;
		out->ops_bwd = 1;
	}
}

/* average_pooling1d, global_average_pooling1d, average_pooling2d,
 * global_average_pooling2d; the masked mean also reads the int32 ids each way */
static void average_pool_cost(const struct layer *l, const struct cost_bytes *b,
                              struct xo_layer_cost *out)
{
	double in = b->in, outb = b->out;
	double ids = l->s.p.mask_zero ? 4.0 * (double)l->s.in_len : 0.0;

	out->act_bytes_fwd = in + outb + ids;
	out->ops_train_fwd = out->ops_predict = 1;
	if (l->need_dx) { /* reads dy, writes dx */
		out->act_bytes_bwd = in + outb + ids;
		out->ops_bwd = 1;
	}
}

const struct xo_layer_family xo_family_max_pool = {
    .forward = pool_forward,
    .backward = max_pool_backward,
    .cost = max_pool_cost,
};

const struct xo_layer_family xo_family_average_pool = {
    .forward = pool_forward,
    .backward = average_pool_backward,
    .cost = average_pool_cost,
};
