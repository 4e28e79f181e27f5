/*
 * layer_merge.c - Keras's merge layers (Add, Subtract, Multiply, Average,
 * Maximum, Minimum, Concatenate on any axis): no variables, two inputs
 * (l->in, l->in2), one merge op each way in the mode spec.c set from the
 * kind (a Concatenate on an axis before the last runs on the op's views
 * of its tensors, l->op_*: model_run.h). Multiply, Maximum and Minimum read
 * Keras's mask (p.mask_a, p.mask_b set by spec.c): the ids are then the
 * op's last source. The backward gives each input its gradient (gin, gin2:
 * NULL where none is needed; the graph plumbing sums fan-out).
 */
#include "model_run.h"

/* t, or its op view v where the plan made one */
static const struct xo_tensor *opv(const struct xo_tensor *v, const struct xo_tensor *t)
{
	return v ? v : t;
}

static struct xo_tensor *opv_dst(struct xo_tensor *v, struct xo_tensor *t)
{
	return v ? v : t;
}

static int merge_forward(const struct layer *l, const struct layer_ctx *c,
                         struct layer_call out[LAYER_CALLS_MAX])
{
	out[0].op = XO_OP_merge;
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = opv(l->op_in, l->in);
	out[0].a.src[1] = opv(l->op_in2, l->in2);
	out[0].a.dst[0] = opv_dst(l->op_out, l->out);
	if (c->p.mask_a || c->p.mask_b) /* Keras's mask of Embedding(mask_zero=True): its ids */
		out[0].a.src[2] = l->ids;
	return 1;
}

static int merge_backward(const struct layer *l, const struct layer_ctx *c,
                          struct layer_call out[LAYER_CALLS_MAX])
{
	if (!l->gin && !l->gin2)
		return 0;
	out[0].op = XO_OP_merge;
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = opv(l->op_in, l->in);
	out[0].a.src[1] = opv(l->op_in2, l->in2);
	out[0].a.src[2] = opv(l->op_gout, l->gout);
	out[0].a.dst[0] = opv_dst(l->op_gin, l->gin);
	out[0].a.dst[1] = opv_dst(l->op_gin2, l->gin2);
	if (c->p.mask_a || c->p.mask_b)
		out[0].a.src[3] = l->ids;
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
	double ids = l->s.p.mask_a || l->s.p.mask_b ? 4.0 * (double)l->s.in_len : 0.0;

	out->act_bytes_fwd = b->in + in2 + b->out + ids;
	out->ops_train_fwd = out->ops_predict = 1;
	if (l->need_dx) {
		out->act_bytes_bwd = 2 * (b->in + in2) + b->out + ids;
		out->ops_bwd = 1;
	}
}

const struct xo_layer_family xo_family_merge = {
    .forward = merge_forward,
    .backward = merge_backward,
    .cost = merge_cost,
};
