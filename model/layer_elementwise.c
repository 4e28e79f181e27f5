/*
 * layer_elementwise.c - the kinds without variables that keep their
 * input's element count: flatten (a view of its input: no op), dropout
 * (an op in training, the identity at inference) and Activation (its
 * activation's op; linear is a view, as flatten) and Masking (the masking
 * op: its output and the model's keep flags, l->ids).
 */
#include "model_run.h"

static int none(const struct layer *l, const struct layer_ctx *c,
                struct layer_call out[LAYER_CALLS_MAX])
{
	(void)l;
	(void)c;
	(void)out;
	return 0;
}

/* flatten: a view: no op, no bytes */
static void flatten_cost(const struct layer *l, const struct cost_bytes *b,
                         struct xo_layer_cost *out)
{
	(void)l;
	(void)b;
	(void)out;
}

const struct xo_layer_family xo_family_flatten = {
    .forward = none,
    .backward = none, /* gout is a view of the previous layer's gout */
    .cost = flatten_cost,
};

static int dropout_forward(const struct layer *l, const struct layer_ctx *c,
                           struct layer_call out[LAYER_CALLS_MAX])
{
	if (!c->training)
		return 0;
	out[0].op = XO_OP_dropout;
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = l->in;
	out[0].a.dst[0] = l->out;
	return 1;
}

static int dropout_backward(const struct layer *l, const struct layer_ctx *c,
                            struct layer_call out[LAYER_CALLS_MAX])
{
	if (!l->need_dx)
		return 0;
	out[0].op = XO_OP_dropout;
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = l->gout;
	out[0].a.dst[0] = l->gin;
	return 1;
}

/* dropout: training only: the identity at inference */
static void dropout_cost(const struct layer *l, const struct cost_bytes *b,
                         struct xo_layer_cost *out)
{
	double in = b->in, outb = b->out;

	out->act_bytes_fwd = in + outb;
	out->ops_train_fwd = 1;
	if (l->need_dx) {
		out->act_bytes_bwd = in + outb;
		out->ops_bwd = 1;
	}
}

const struct xo_layer_family xo_family_dropout = {
    .forward = dropout_forward,
    .backward = dropout_backward,
    .cost = dropout_cost,
};

static int activation_forward(const struct layer *l, const struct layer_ctx *c,
                              struct layer_call out[LAYER_CALLS_MAX])
{
	if (layer_is_view(&l->s))
		return 0;
	out[0].op = act_op(l->s.p.activation);
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = l->in;
	out[0].a.dst[0] = l->out;
	return 1;
}

static int activation_backward(const struct layer *l, const struct layer_ctx *c,
                               struct layer_call out[LAYER_CALLS_MAX])
{
	if (!l->need_dx || layer_is_view(&l->s))
		return 0; /* linear: gout is a view, as flatten's */
	out[0].op = act_op(l->s.p.activation);
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = act_bwd_from_x(l->s.p.activation) ? l->in : l->out;
	out[0].a.src[1] = l->gout;
	out[0].a.dst[0] = l->gin;
	return 1;
}

static void activation_cost(const struct layer *l, const struct cost_bytes *b,
                            struct xo_layer_cost *out)
{
	double in = b->in, outb = b->out;

	if (layer_is_view(&l->s))
		return; /* linear: a view, as flatten */
	out->act_bytes_fwd = in + outb;
	out->ops_train_fwd = out->ops_predict = 1;
	if (l->need_dx) { /* reads x or y and dy, writes dx */
		out->act_bytes_bwd = in + 2 * outb;
		out->ops_bwd = 1;
	}
}

const struct xo_layer_family xo_family_activation = {
    .forward = activation_forward,
    .backward = activation_backward,
    .cost = activation_cost,
};

/* masking: the first layer; writes its output and the keep flags the mask
 * users read as their ids (plan_wire points every layer's ids at them) */
static int masking_forward(const struct layer *l, const struct layer_ctx *c,
                           struct layer_call out[LAYER_CALLS_MAX])
{
	out[0].op = XO_OP_masking;
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = l->in;
	out[0].a.dst[0] = l->out;
	out[0].a.dst[1] = (struct xo_tensor *)l->ids;
	return 1;
}

/* its input is the model's: no gradient to pass on, unless a graph asks */
static int masking_backward(const struct layer *l, const struct layer_ctx *c,
                            struct layer_call out[LAYER_CALLS_MAX])
{
	if (!l->need_dx)
		return 0;
	out[0].op = XO_OP_masking;
	out[0].a = (struct xo_op_args){.p = c->p};
	out[0].a.src[0] = l->in;
	out[0].a.src[1] = l->gout;
	out[0].a.dst[0] = l->gin;
	return 1;
}

/* reads x, writes y and one int32 flag per step */
static void masking_cost(const struct layer *l, const struct cost_bytes *b,
                         struct xo_layer_cost *out)
{
	double in = b->in, outb = b->out, keep = 4.0 * (double)l->s.in_len;

	out->act_bytes_fwd = in + outb + keep;
	out->ops_train_fwd = out->ops_predict = 1;
	if (l->need_dx) {
		out->act_bytes_bwd = in + 2 * outb;
		out->ops_bwd = 1;
	}
}

const struct xo_layer_family xo_family_masking = {
    .forward = masking_forward,
    .backward = masking_backward,
    .cost = masking_cost,
};
