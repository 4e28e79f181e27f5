/*
 * layer_norm.c - Keras BatchNormalization and LayerNormalization (axis -1),
 * the kind's op in layers.def: gamma and beta trainable (each absent when
 * scale / center is off). BatchNormalization also has state (state_count):
 * moving_mean and moving_variance in the flat parameters' non-trainable
 * tail, updated in place by the training forward. LayerNormalization has
 * none: its statistics are each position's own, in training and inference.
 * Normalization (Keras's preprocessing layer) has state only, its mean and
 * variance in the moving statistics' places (mm, mv), never updated: the
 * normalization op forward, dy / den backward.
 */
#include "model_run.h"

static enum xo_status norm_views(struct layer *l, struct xo_tensor *params,
                                 struct xo_tensor *grads)
{
	enum xo_status st = XO_OK;
	int64_t ch = l->s.in_ch;

	if (l->s.gamma_count) {
		st = xo_tensor_view(params, l->g_off, 1, &ch, &l->gamma);
		if (!st)
			st = xo_tensor_view(grads, l->g_off, 1, &ch, &l->dgamma);
	}
	if (!st && l->s.beta_count) {
		st = xo_tensor_view(params, l->beta_off, 1, &ch, &l->beta);
		if (!st)
			st = xo_tensor_view(grads, l->beta_off, 1, &ch, &l->dbeta);
	}
	if (!st && l->s.state_count)
		st = xo_tensor_view(params, l->mm_off, 1, &ch, &l->mm);
	if (!st && l->s.state_count)
		st = xo_tensor_view(params, l->mv_off, 1, &ch, &l->mv);
	return st;
}

/* Keras: gamma ones, beta zeros, moving_mean zeros, moving_variance ones;
 * Normalization's mean and variance as given in its config, else Keras's
 * initial zeros and ones (an adapted layer's come from its weights) */
static void norm_init(const struct layer *l, int i, uint64_t seed, float *w)
{
	(void)i;
	if (l->s.kind == XO_LAYER_NORMALIZATION && l->s.norm_given) {
		for (int64_t e = 0; e < l->s.in_ch; e++) {
			w[l->mm_off + e] = l->s.norm_mean;
			w[l->mv_off + e] = l->s.norm_var;
		}
		return;
	}
	(void)seed;
	for (int64_t e = 0; e < l->s.gamma_count; e++)
		w[l->g_off + e] = 1.0f;
	for (int64_t e = 0; l->s.state_count && e < l->s.in_ch; e++)
		w[l->mv_off + e] = 1.0f;
}

/* Keras's order: gamma, beta, moving_mean, moving_variance. Normalization:
 * mean, variance and count (an int32 scalar Keras 3 keeps for old files and
 * never updates: written 0, read for its presence only), or none when the
 * config gives mean and variance (Keras builds them as constants) */
static int norm_vars(const struct layer *l, struct xo_layer_var out[XO_LAYER_VARS_MAX])
{
	int n = 0;
	int64_t ch = l->s.in_ch;

	if (l->s.kind == XO_LAYER_NORMALIZATION) {
		if (l->s.norm_given)
			return 0;
		out[n++] = (struct xo_layer_var){.name = "mean", .ndim = 1, .dim = {ch},
		                                 .off = l->mm_off, .count = ch};
		out[n++] = (struct xo_layer_var){.name = "variance", .ndim = 1, .dim = {ch},
		                                 .off = l->mv_off, .count = ch, .nonneg = true};
		out[n++] = (struct xo_layer_var){.name = "count", .keras_int = true};
		return n;
	}

	if (l->s.gamma_count)
		out[n++] = (struct xo_layer_var){.name = "gamma", .ndim = 1, .dim = {ch},
		                                 .off = l->g_off, .count = ch};
	if (l->s.beta_count)
		out[n++] = (struct xo_layer_var){.name = "beta", .ndim = 1, .dim = {ch},
		                                 .off = l->beta_off, .count = ch};
	if (!l->s.state_count)
		return n;
	out[n++] = (struct xo_layer_var){.name = "moving_mean", .ndim = 1, .dim = {ch},
	                                 .off = l->mm_off, .count = ch};
	out[n++] = (struct xo_layer_var){.name = "moving_variance", .ndim = 1,
	                                 .dim = {ch}, .off = l->mv_off, .count = ch};
	return n;
}

/* BatchNormalization: in training batch statistics, and the moving
 * statistics updated in place; in inference the moving statistics.
 * LayerNormalization: each position's statistics (no dst[1], dst[2]) */
static int norm_forward(const struct layer *l, const struct layer_ctx *c,
                        struct layer_call out[LAYER_CALLS_MAX])
{
	struct xo_op_args *a = &out[0].a;

	out[0].op = xo_layer_kinds[l->s.kind].op;
	*a = (struct xo_op_args){.p = c->p};
	if (l->s.kind == XO_LAYER_NORMALIZATION) { /* {x, mean, variance} -> {y} */
		a->src[0] = l->in;
		a->src[1] = l->mm;
		a->src[2] = l->mv;
		a->dst[0] = l->out;
		return 1;
	}
	a->src[0] = l->in;
	a->src[1] = l->gamma;
	a->src[2] = l->beta;
	a->dst[0] = l->out;
	if (l->s.state_count) {
		a->dst[1] = l->mm;
		a->dst[2] = l->mv;
	}
	return 1;
}

static int norm_backward(const struct layer *l, const struct layer_ctx *c,
                         struct layer_call out[LAYER_CALLS_MAX])
{
	struct xo_op_args *a = &out[0].a;

	if (!l->need_dx && !l->gamma && !l->beta)
		return 0;
	out[0].op = xo_layer_kinds[l->s.kind].op;
	*a = (struct xo_op_args){.p = c->p};
	if (l->s.kind == XO_LAYER_NORMALIZATION) { /* {variance, dy} -> {dx} */
		a->src[0] = l->mv;
		a->src[1] = l->gout;
		a->dst[0] = l->gin;
		return 1;
	}
	a->src[0] = l->in;
	a->src[1] = l->gamma;
	a->src[2] = l->gout;
	a->dst[0] = l->gin;
	a->dst[1] = l->dgamma;
	a->dst[2] = l->dbeta;
	return 1;
}

/* LayerNormalization */
static void lnorm_cost(const struct layer *l, const struct cost_bytes *b,
                       struct xo_layer_cost *out)
{
	double n = (double)(l->s.in_len * l->s.in_w * l->s.in_ch);
	/* its variables, gamma and beta (b->w counts kernels and biases) */
	double w = 4.0 * (double)(l->s.gamma_count + l->s.beta_count);

	/* fwd: each row read once from memory (its two statistics passes and
	 * y's from cache: rows are short), y written; 8 FLOP a value (sum;
	 * deviation, square, sum; deviation, scale, gamma, beta). bwd: x and
	 * dy read for the rows (dx) and again for dgamma / dbeta over the
	 * rows; 12 FLOP a value */
	out->act_bytes_fwd = b->in + b->out;
	out->w_bytes_fwd = w;
	out->flops_fwd = 8.0 * n;
	out->ops_train_fwd = out->ops_predict = 1;
	if (l->has_grad) {
		out->act_bytes_bwd = 2 * b->in + 2 * b->out + (l->need_dx ? b->in : 0);
		out->w_bytes_bwd = w;
		out->flops_bwd = 12.0 * n;
		out->ops_bwd = 1;
	}
}

/* Normalization: x read and y written once, mean and variance read (its
 * variables: b->w counts kernels and biases only); 3 FLOP a value (the
 * difference, the quotient; the root per channel, counted as one more).
 * bwd: dy read, dx written, 1 FLOP a value */
static void normz_cost(const struct layer *l, const struct cost_bytes *b,
                       struct xo_layer_cost *out)
{
	double n = (double)(l->s.in_len * l->s.in_w * l->s.in_ch);
	double w = 4.0 * (double)l->s.state_count;

	out->act_bytes_fwd = b->in + b->out;
	out->w_bytes_fwd = w;
	out->flops_fwd = 3.0 * n;
	out->ops_train_fwd = out->ops_predict = 1;
	if (l->has_grad && l->need_dx) {
		out->act_bytes_bwd = b->out + b->in;
		out->w_bytes_bwd = w / 2.0;
		out->flops_bwd = n;
		out->ops_bwd = 1;
	}
}

static void norm_cost(const struct layer *l, const struct cost_bytes *b,
                      struct xo_layer_cost *out)
{
	double in = b->in, outb = b->out, w = b->w;

	if (l->s.kind == XO_LAYER_NORMALIZATION) {
		normz_cost(l, b, out);
		return;
	}

	if (!l->s.state_count) {
		lnorm_cost(l, b, out);
		return;
	}

	/* fwd: x read twice for the statistics in training, once more
	 * for y; bwd: x and dy read twice, dx written */
	out->act_bytes_fwd = 3 * in + outb;
	out->w_bytes_fwd = w;
	out->flops_fwd = 8.0 * (double)(l->s.in_len * l->s.in_w * l->s.in_ch);
	out->ops_train_fwd = out->ops_predict = 1;
	if (l->has_grad) {
		out->act_bytes_bwd = 4 * in + 2 * outb + (l->need_dx ? in : 0);
		out->w_bytes_bwd = w;
		out->flops_bwd = 12.0 * (double)(l->s.in_len * l->s.in_w * l->s.in_ch);
		out->ops_bwd = 1;
	}
}

const struct xo_layer_family xo_family_norm = {
    .views = norm_views,
    .init = norm_init,
    .vars = norm_vars,
    .forward = norm_forward,
    .backward = norm_backward,
    .cost = norm_cost,
};
