/*
 * layer_merge.c - Keras's merge layers (Add, Subtract, Multiply, Average,
 * Maximum, Minimum, Concatenate on the last axis): no variables, two
 * inputs (l->in, l->in2), one merge op each way in the mode spec.c set
 * from the kind. The backward gives each input its gradient (gin, gin2:
 * NULL where none is needed; the graph plumbing sums fan-out).
 */
#include "model_run.h"

static int merge_forward(const struct layer *l, const struct layer_ctx *c,
                         struct layer_call out[LAYER_CALLS_MAX])
{
	out[0].op = XO_OP_merge;
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = l->in;
	out[0].a.src[1] = l->in2;
	out[0].a.dst[0] = l->out;
	return 1;
}

static int merge_backward(const struct layer *l, const struct layer_ctx *c,
                          struct layer_call out[LAYER_CALLS_MAX])
{
	if (!l->gin && !l->gin2)
		return 0;
	out[0].op = XO_OP_merge;
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = l->in;
	out[0].a.src[1] = l->in2;
	out[0].a.src[2] = l->gout;
	out[0].a.dst[0] = l->gin;
	out[0].a.dst[1] = l->gin2;
	return 1;
}

/* Reads both inputs, writes y; back: reads both and dy, writes da and db.
 * The second input's bytes: the output's less the first's for
 * concatenate, else the first's. */
static void merge_cost(const struct layer *l, const struct cost_bytes *b,
                       struct xo_layer_cost *out)
{
	double in2 = l->s.p.mode == XO_MERGE_CONCATENATE ? b->out - b->in : b->in;

	out->flops_fwd = l->s.p.mode == XO_MERGE_CONCATENATE ? 0.0 : b->out / 4.0;
	out->act_bytes_fwd = b->in + in2 + b->out;
	out->ops_train_fwd = out->ops_predict = 1;
	if (l->need_dx) {
		out->act_bytes_bwd = 2 * (b->in + in2) + b->out;
		out->ops_bwd = 1;
	}
}

const struct xo_layer_family xo_family_merge = {
    .forward = merge_forward,
    .backward = merge_backward,
    .cost = merge_cost,
};
