/*
 * harness_fill.c - the case's inputs (DESIGN section 5): deterministic fills
 * per op from Philox streams (exact integer fills, real fills, probabilities,
 * one-hot and label targets, activation outputs), and the nonfinite mode's
 * planted NaN and Inf.
 */
#include "harness_internal.h"

/* ---- the case's host data ------------------------------------------------ */

/* Integer in [lo, hi]. */
static float int_in(const struct hcase *h, uint32_t stream, uint64_t i, int lo, int hi)
{
	int v = lo + (int)(unif(h, stream, i) * (float)(hi - lo + 1));

	return (float)(v > hi ? hi : v);
}

/* Nonzero integer in [lo, hi] (lo < 0 < hi). */
static float int_nz(const struct hcase *h, uint32_t stream, uint64_t i, int lo, int hi)
{
	float v = int_in(h, stream, i, lo, hi - 1);

	return v >= 0.0f ? v + 1.0f : v;
}

/* Rows of softmax probabilities over the last dim (n), from logits in [-2, 2). */
void xo_hcase_fill_probs(const struct hcase *h, uint32_t stream, float *y, int64_t count, int64_t n)
{
	for (int64_t r = 0; r < count / n; r++) {
		double sum = 0.0, e[4096];
		double *ex = n <= 4096 ? e : malloc(sizeof(double) * (size_t)n);

		XO_ASSERT(ex);
		for (int64_t j = 0; j < n; j++) {
			ex[j] = exp((double)real_in(h, stream, (uint64_t)(r * n + j), -2.0f, 2.0f));
			sum += ex[j];
		}
		for (int64_t j = 0; j < n; j++)
			y[r * n + j] = (float)(ex[j] / sum);
		if (ex != e)
			free(ex);
	}
}

/* One-hot targets; even rows take the first argmax of p (so accuracy counts
 * something), odd rows a random class. p may be NULL (all random). */
static void fill_onehot(const struct hcase *h, uint32_t stream, float *t, const float *p,
                        int64_t count, int64_t n)
{
	memset(t, 0, sizeof(float) * (size_t)count);
	for (int64_t r = 0; r < count / n; r++) {
		int64_t label = (int64_t)(unif(h, stream, (uint64_t)r) * (float)n);

		if (label >= n)
			label = n - 1;
		if (p && r % 2 == 0) {
			label = 0;
			for (int64_t j = 1; j < n; j++)
				if (p[r * n + j] > p[r * n + label])
					label = j;
		}
		t[r * n + label] = 1.0f;
	}
}

/* Integer class ids (int32 in the float slot's bytes), as fill_onehot: even
 * rows take the first argmax of p when p is given (informative accuracy). */
static void fill_labels(const struct hcase *h, uint32_t stream, float *t, const float *p,
                        int64_t rows, int64_t n)
{
	for (int64_t r = 0; r < rows; r++) {
		int32_t label = (int32_t)(unif(h, stream, (uint64_t)r) * (float)n);

		if (label >= n)
			label = (int32_t)n - 1;
		if (p && r % 2 == 0) {
			label = 0;
			for (int32_t j = 1; j < n; j++)
				if (p[r * n + j] > p[r * n + label])
					label = j;
		}
		memcpy(&t[r], &label, 4);
	}
}

/* The derivative factor's input y of an activation's backward pass. */
static void fill_act_y(const struct hcase *h, float *y, int64_t count, int64_t last,
                       enum xo_activation act, bool exact)
{
	for (int64_t i = 0; i < count; i++) {
		switch (act) {
		case XO_ACTIVATION_LINEAR:
			y[i] = exact ? int_nz(h, 2, (uint64_t)i, -4, 4)
			             : real_in(h, 2, (uint64_t)i, -1.0f, 1.0f);
			break;
		case XO_ACTIVATION_RELU:
			/* A fixed eighth of the outputs is clipped: d relu = 0 there. */
			if (i % 8 == 5)
				y[i] = 0.0f;
			else
				y[i] = exact ? int_in(h, 2, (uint64_t)i, 1, 4)
				             : real_in(h, 2, (uint64_t)i, 0.01f, 1.0f);
			break;
		case XO_ACTIVATION_SIGMOID:
			y[i] = real_in(h, 2, (uint64_t)i, 0.02f, 0.98f);
			break;
		case XO_ACTIVATION_SOFTMAX:
			break;
		case XO_ACTIVATION_TANH: /* the range of tanh, away from +-1 */
			y[i] = real_in(h, 2, (uint64_t)i, -0.98f, 0.98f);
			break;
		case XO_ACTIVATION_ELU: /* bwd from x: not used */
		case XO_ACTIVATION_GELU:
		case XO_ACTIVATION_SOFTPLUS:
		case XO_ACTIVATION_RELU6:
		case XO_ACTIVATION_HARD_SIGMOID:
		case XO_ACTIVATION_SILU:
		case XO_ACTIVATION_LOG_SOFTMAX:
		case XO_ACTIVATION_LEAKY_RELU:
			XO_ASSERT(!"fill_act_y: not a fused activation's bwd");
		}
	}
	if (act == XO_ACTIVATION_SOFTMAX)
		xo_hcase_fill_probs(h, 2, y, count, last);
}

/* Input i of slot s: small integers in exact mode, reals otherwise. */
static void fill_plain(const struct hcase *h, int s, bool nonzero, float lo, float hi)
{
	bool exact = h->c->mode == XO_HMODE_EXACT;
	int a = (int)h->amp;

	for (int64_t i = 0; i < h->sn[s]; i++) {
		if (!exact)
			h->src[s][i] = real_in(h, (uint32_t)s, (uint64_t)i, lo, hi);
		else if (nonzero)
			h->src[s][i] = int_nz(h, (uint32_t)s, (uint64_t)i, -a, a);
		else
			h->src[s][i] = int_in(h, (uint32_t)s, (uint64_t)i, -a, a);
	}
}

/* Longest exact accumulation of a conv1d/dense case (for the exact fills). */
static int64_t acc_len_max(const struct xo_case *c)
{
	const struct xo_params *p = &c->p;
	int64_t out = 1, pad, k = 0;

	if (c->op == XO_OP_conv1d) {
		if (xo_conv1d_geometry(p, &out, &pad))
			return 0;
		k = p->kernel_size * p->ch + 1;
		if (c->dir == XO_DIR_BWD) {
			k = p->kernel_size * p->filters;
			if (p->batch * out > k)
				k = p->batch * out;
		}
	} else if (c->op == XO_OP_conv2d) {
		int64_t ow, pt, pl, kw = xo_params_width_axis(p).kernel_size;

		if (xo_conv2d_geometry(p, &out, &ow, &pt, &pl))
			return 0;
		k = p->kernel_size * kw * p->ch + 1;
		if (c->dir == XO_DIR_BWD) {
			k = p->kernel_size * kw * p->filters;
			if (p->batch * out * ow > k)
				k = p->batch * out * ow;
		}
	} else if (c->op == XO_OP_depthwise_conv2d) {
		/* one channel's taps forward; dx over taps and multipliers, dw
		 * and db over the batch's output positions */
		int64_t ow, pt, pl, kw = xo_params_width_axis(p).kernel_size;

		if (xo_depthwise_conv2d_geometry(p, &out, &ow, &pt, &pl))
			return 0;
		k = p->kernel_size * kw + 1;
		if (c->dir == XO_DIR_BWD) {
			k = p->kernel_size * kw * p->depth_multiplier;
			if (p->batch * out * ow > k)
				k = p->batch * out * ow;
		}
	} else if (c->op == XO_OP_conv2d_transpose) {
		/* as acc_lengths in harness_bounds.c */
		int64_t ow, pt, pl, kw = xo_params_width_axis(p).kernel_size;

		if (xo_conv2d_transpose_geometry(p, &out, &ow, &pt, &pl))
			return 0;
		k = p->kernel_size * kw * p->ch + 1;
		if (c->dir == XO_DIR_BWD) {
			k = p->kernel_size * kw * p->filters;
			if (p->batch * p->len * p->width > k)
				k = p->batch * p->len * p->width;
			if (p->batch * out * ow > k)
				k = p->batch * out * ow;
		}
	} else if (c->op == XO_OP_dense) {
		k = c->dir == XO_DIR_FWD ? p->ch + 1 : (p->units > p->batch ? p->units : p->batch);
	}
	return k;
}

/* The integer amplitude of exact fills: every partial sum of K products of
 * integers up to amp, plus a bias, must stay below 2^24 to be exact in
 * float32. */
enum xo_status xo_hcase_exact_amplitude(const struct xo_case *c, float *amp)
{
	double k = (double)acc_len_max(c);

	*amp = 4.0f;
	if (c->mode != XO_HMODE_EXACT || !has_activation(c->op))
		return XO_OK;
	while (*amp >= 1.0f && k * *amp * *amp + *amp >= 0x1p24)
		*amp /= 2.0f;
	if (*amp < 1.0f)
		return xo_error(
		    XO_EINVAL,
		    "%s: exact mode impossible: %.0f accumulated terms exceed float32's "
		    "24 bits",
		    xo_op_name(c->op), k);
	return XO_OK;
}

/* conv1d, conv2d, dense */
static void fill_conv_dense(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool exact = c->mode == XO_HMODE_EXACT;
	bool bwd = c->dir == XO_DIR_BWD;
	/* relu forward: x and w skewed positive so most outputs are
	 * not clipped. */
	bool skew = p->activation == XO_ACTIVATION_RELU && !bwd;
	int a = (int)h->amp, lo = skew ? -(a + 1) / 2 : -a;

	for (int s = 0; s < 2; s++)
		for (int64_t i = 0; i < h->sn[s]; i++) {
			if (exact)
				h->src[s][i] = int_nz(h, (uint32_t)s, (uint64_t)i, lo, a);
			else
				h->src[s][i] = real_in(h, (uint32_t)s, (uint64_t)i,
				                       skew ? -0.5f : -1.0f, 1.0f);
		}
	if (!bwd) {
		if (h->sn[2])
			fill_plain(h, 2, true, -1.0f, 1.0f);
	} else {
		fill_act_y(h, h->src[2], h->sn[2], h->ss[2].dim[h->ss[2].ndim - 1],
		           p->activation, exact);
		fill_plain(h, 3, true, -1.0f, 1.0f);
	}
}
#define FILL_conv1d fill_conv_dense
#define FILL_conv2d fill_conv_dense
#define FILL_dense fill_conv_dense
#define FILL_depthwise_conv2d fill_conv_dense
#define FILL_conv2d_transpose fill_conv_dense

/* max_pooling1d, max_pooling2d */
static void fill_max_pool(struct hcase *h)
{
	const struct xo_case *c = h->c;
	bool bwd = c->dir == XO_DIR_BWD;

	/* Exact mode keeps zeros and repeats: ties test the first-maximum rule. */
	fill_plain(h, 0, false, -1.0f, 1.0f);
	if (bwd) /* Positive gradients: |dx| is then its own magnitude. */
		fill_plain(h, 1, true, 0.25f, 1.0f);
}
#define FILL_max_pooling1d fill_max_pool
#define FILL_max_pooling2d fill_max_pool

/* global_max_pooling1d, global_max_pooling2d */
static void fill_global_max_pool(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool exact = c->mode == XO_HMODE_EXACT;
	bool bwd = c->dir == XO_DIR_BWD;

	/* exact mode: nonzero integers in +-(cells + 4), cells = len
	 * (times width for 2-D), so maxima vary across channels while
	 * long rows still repeat values (ties test the first-maximum
	 * rule) */
	for (int64_t i = 0; i < h->sn[0]; i++) {
		int64_t cells = c->op == XO_OP_global_max_pooling2d ? p->len * p->width
		                                                    : p->len;
		int a = (int)(cells < 1000 ? cells + 4 : 1004);

		h->src[0][i] = exact ? int_nz(h, 0, (uint64_t)i, -a, a)
		                     : real_in(h, 0, (uint64_t)i, -1.0f, 1.0f);
	}
	if (bwd)
		fill_plain(h, 1, true, 0.25f, 1.0f);
}
#define FILL_global_max_pooling1d fill_global_max_pool
#define FILL_global_max_pooling2d fill_global_max_pool

/* average_pooling1d, global_average_pooling1d, average_pooling2d, global_average_pooling2d */
static void fill_avg_pool(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;

	/* x (fwd) or dy (bwd), nonzero; averages of mixed signs may still
	 * cancel to 0 in exact mode, rarely enough for the 30% rule */
	fill_plain(h, 0, true, -1.0f, 1.0f);
	if (!p->mask_zero)
		return;
	/* global_average_pooling1d's ids: about a third 0 (masked), the rest
	 * in [1, 5]; a row with none kept (y NaN, as Keras) gets one kept step
	 * at n % len, so every output is informative */
	for (int64_t n = 0; n < p->batch; n++) {
		bool any = false;

		for (int64_t l = 0; l < p->len; l++) {
			int64_t i = n * p->len + l;
			int32_t id = (int32_t)(unif(h, 1, (uint64_t)i) * 15.0f) / 3;

			id = id > 5 ? 5 : id;
			any = any || id != 0;
			memcpy(&h->src[1][i], &id, 4);
		}
		if (!any) {
			int32_t one = 1;

			memcpy(&h->src[1][n * p->len + n % p->len], &one, 4);
		}
	}
}
#define FILL_average_pooling1d fill_avg_pool
#define FILL_global_average_pooling1d fill_avg_pool
#define FILL_average_pooling2d fill_avg_pool
#define FILL_global_average_pooling2d fill_avg_pool

/* relu */
static void fill_relu(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool exact = c->mode == XO_HMODE_EXACT;
	bool bwd = c->dir == XO_DIR_BWD;

	if (!bwd) {
		/* A fixed quarter negative (element 0 positive): clipped
		 * outputs are structural zeros, and some always remain. */
		for (int64_t i = 0; i < h->sn[0]; i++) {
			float v = exact ? int_in(h, 0, (uint64_t)i, 1, 6)
			                : real_in(h, 0, (uint64_t)i, 0.01f, 1.5f);

			h->src[0][i] = i % 4 == 3 ? -v : v;
		}
	} else {
		fill_act_y(h, h->src[0], h->sn[0], p->ch, XO_ACTIVATION_RELU, exact);
		fill_plain(h, 1, true, -1.0f, 1.0f);
	}
}
#define FILL_relu fill_relu

/* sigmoid */
static void fill_sigmoid(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool bwd = c->dir == XO_DIR_BWD;

	if (!bwd) {
		fill_plain(h, 0, true, -8.0f, 8.0f);
	} else {
		fill_act_y(h, h->src[0], h->sn[0], p->ch, XO_ACTIVATION_SIGMOID, false);
		fill_plain(h, 1, true, -1.0f, 1.0f);
	}
}
#define FILL_sigmoid fill_sigmoid

/* tanh, elu */
static void fill_tanh_elu(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool bwd = c->dir == XO_DIR_BWD;

	/* fwd, and elu's bwd (from x): both sides of 0 and tanh's
	 * saturation begins (|x| = 4: tanh = 1 - 7e-4); tanh's bwd: y over
	 * its range */
	if (!bwd || c->op == XO_OP_elu) {
		fill_plain(h, 0, true, -4.0f, 4.0f);
	} else {
		fill_act_y(h, h->src[0], h->sn[0], p->ch, XO_ACTIVATION_TANH, false);
	}
	if (bwd)
		fill_plain(h, 1, true, -1.0f, 1.0f);
}
#define FILL_tanh fill_tanh_elu
#define FILL_elu fill_tanh_elu

/* gelu */
static void fill_gelu(struct hcase *h)
{
	const struct xo_case *c = h->c;
	bool bwd = c->dir == XO_DIR_BWD;

	/* x in [-5, 5]: gelu's dip (minimum at -0.75, its derivative's
	 * zero there) and the tail where 1 + erf would cancel */
	fill_plain(h, 0, true, -5.0f, 5.0f);
	if (bwd)
		fill_plain(h, 1, true, -1.0f, 1.0f);
}
#define FILL_gelu fill_gelu

/* softplus */
static void fill_softplus(struct hcase *h)
{
	const struct xo_case *c = h->c;
	bool bwd = c->dir == XO_DIR_BWD;

	/* x in [-20, 20]: exp(-|x|) down to 2e-9, log1p's small-argument
	 * range, and the large-x side where max(x, 0) dominates; every
	 * 8th in [89, 100], where exp(x) overflows float (log(1 + exp(x))
	 * would give Inf) */
	fill_plain(h, 0, true, -20.0f, 20.0f);
	for (int64_t i = 7; i < h->sn[0]; i += 8)
		h->src[0][i] = real_in(h, 0, (uint64_t)i, 89.0f, 100.0f);
	if (bwd)
		fill_plain(h, 1, true, -1.0f, 1.0f);
}
#define FILL_softplus fill_softplus

/* Rows 1, 1 + every, 1 + 2 every, ... of n get one element in [720, 760]
 * above the others' [-4, 4]: a range past double's exp (709) and far past
 * float's (88). Softmax and log_softmax are the same for any shift of a
 * row, so only a kernel or reference that shifts by something other than
 * the row's true maximum overflows or underflows exp there. The spike
 * alternates between an inner element (a maximum taken over the wrong
 * elements, or from the first one alone, misses it) and the row's first
 * (a maximum that starts from another element, and a scan of the row
 * before, which runs one past its end, meet it). The other rows keep the
 * plain fill. A spiked row's softmax is one-hot (its other outputs
 * underflow to 0), so softmax spikes every 4th row, keeping the zeros
 * under the harness's 30% of informative outputs; log_softmax's outputs
 * are finite and spike every other row. */
static void fill_spike_rows(struct hcase *h, int64_t n, int64_t every)
{
	if (n < 2)
		return;
	for (int64_t r = 1, k = 0; r < h->sn[0] / n; r += every, k++) {
		int64_t i = r * n + (k % 2 ? 0 : 1 + (r * 7) % (n - 1));

		h->src[0][i] = real_in(h, 0, (uint64_t)i + 0x5eedu, 720.0f, 760.0f);
	}
}

/* softmax */
static void fill_softmax(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool bwd = c->dir == XO_DIR_BWD;

	if (!bwd) {
		fill_plain(h, 0, true, -4.0f, 4.0f);
		fill_spike_rows(h, p->ch, 4);
	} else {
		xo_hcase_fill_probs(h, 0, h->src[0], h->sn[0], p->ch);
		fill_plain(h, 1, true, -1.0f, 1.0f);
	}
}
#define FILL_softmax fill_softmax

/* flatten, dropout */
static void fill_copy(struct hcase *h)
{
	fill_plain(h, 0, true, -1.0f, 1.0f);
}
#define FILL_flatten fill_copy
#define FILL_dropout fill_copy
#define FILL_pad fill_copy
#define FILL_permute fill_copy
#define FILL_flip fill_copy
#define FILL_rescaling fill_copy
#define FILL_up_sampling fill_copy

/* merge: both inputs (and dy) plain; maximum and minimum also get ties
 * (b = a at every fifth element), where the gradient splits in halves.
 * With Keras's mask (mask_a / mask_b) the ids (i32, after dy): the first
 * and last steps of every even sample 0 (masked), the last sample all 0
 * when batch > 1 (a row with every input masked: multiply's 0, maximum's
 * and minimum's first input), the rest about a third 0 and else in [1, 5]
 * (any nonzero id keeps) */
static void fill_merge(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	int ns = h->c->dir == XO_DIR_BWD ? 3 : 2;

	for (int s = 0; s < ns; s++)
		fill_plain(h, s, true, -1.0f, 1.0f);
	if (p->mode == XO_MERGE_MAXIMUM || p->mode == XO_MERGE_MINIMUM)
		for (int64_t i = 2; i < h->sn[1]; i += 5)
			h->src[1][i] = h->src[0][i];
	if (!p->mask_a && !p->mask_b)
		return;
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t l = 0; l < p->len; l++) {
			int64_t i = n * p->len + l;
			int32_t id = (int32_t)(unif(h, (uint32_t)ns, (uint64_t)i) * 15.0f) / 3;

			id = id > 5 ? 5 : id;
			if ((n % 2 == 0 && (l == 0 || l == p->len - 1)) ||
			    (p->batch > 1 && n == p->batch - 1))
				id = 0;
			memcpy(&h->src[ns][i], &id, 4);
		}
}
#define FILL_merge fill_merge

/*
 * Rows of p[rows][ch] (ch >= 2) whose true class Keras's clip takes, its
 * label returned in *label (-1: a plain row), every 8th row from row 1, 3
 * and 5 (so at most three rows in eight, and the rows' zero gradients stay
 * under the harness's 30% of zeros):
 *   r % 8 == 1  the true class clipped: p = 1e-9 (below 1e-7) in even
 *               eighths, p = 1 with every other 1e-9 (q = 1, above 1 - 1e-7)
 *               in odd ones; the row's gradient is 0.
 *   r % 8 == 3  q exactly at 1e-7f: the other classes multiples of 2^-24
 *               summing to (float)(1 - 1e-7) exactly, the last class 1e-7f,
 *               so the row sums to 1 in float32 whatever the order of the
 *               first ch - 1 terms (and 1 - 1.9e-8 in double, 1 rounded to
 *               float), and q = 1e-7f / 1; the true class is the last.
 *   r % 8 == 5  q exactly at (float)(1 - 1e-7): p = {1 - 2^-23, 2^-23, 0, ...},
 *               sum 1 exactly; the true class is the first.
 * At a bound the clip passes half the gradient (ops.def).
 */
static int64_t clip_row(float *pr, int64_t r, int64_t ch)
{
	if (ch < 2)
		return -1;
	if (r % 8 == 1) {
		int64_t k = (r * 5) % ch;

		for (int64_t c = 0; c < ch; c++)
			pr[c] = (r / 8) % 2 ? 1e-9f : pr[c];
		pr[k] = (r / 8) % 2 ? 1.0f : 1e-9f;
		return k;
	}
	if (r % 8 == 3) {
		int64_t units = (1 << 24) - 2, each = units / (ch - 1);

		for (int64_t c = 0; c < ch - 1; c++)
			pr[c] = ldexpf((float)(c ? each : units - each * (ch - 2)), -24);
		pr[ch - 1] = 1e-7f;
		return ch - 1;
	}
	if (r % 8 == 5) {
		for (int64_t c = 0; c < ch; c++)
			pr[c] = 0.0f;
		pr[0] = 1.0f - 0x1p-23f;
		pr[1] = 0x1p-23f;
		return 0;
	}
	return -1;
}

/* categorical_crossentropy: probabilities and one-hot targets, clip_row's
 * rows among them */
static void fill_cce(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;

	if (p->from_logits) {
		/* logits in [-4, 4]; one-hot rows, every third a soft row
		 * (targets in [0, 1], not summing to 1: the gradient's T) */
		for (int64_t e = 0; e < h->sn[0]; e++)
			h->src[0][e] = real_in(h, 0, (uint64_t)e, -4.0f, 4.0f);
		fill_onehot(h, 1, h->src[1], h->src[0], h->sn[1], p->ch);
		for (int64_t r = 2; r < p->batch; r += 3)
			for (int64_t j = 0; j < p->ch; j++)
				h->src[1][r * p->ch + j] =
				    real_in(h, 1, (uint64_t)(r * p->ch + j), 0.0f, 1.0f);
		return;
	}
	xo_hcase_fill_probs(h, 0, h->src[0], h->sn[0], p->ch);
	fill_onehot(h, 1, h->src[1], NULL, h->sn[1], p->ch);
	for (int64_t r = 0; r < p->batch; r++) {
		int64_t k = clip_row(h->src[0] + r * p->ch, r, p->ch);

		if (k < 0)
			continue;
		for (int64_t j = 0; j < p->ch; j++)
			h->src[1][r * p->ch + j] = j == k ? 1.0f : 0.0f;
	}
}
#define FILL_categorical_crossentropy fill_cce

/* adam */
static void fill_adam(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;

	fill_plain(h, 0, true, -1.0f, 1.0f);
	for (int64_t i = 0; i < p->size; i++) {
		h->init[0][i] = real_in(h, 4, (uint64_t)i, -1.0f, 1.0f);
		h->init[1][i] = real_in(h, 5, (uint64_t)i, -0.1f, 0.1f);
		h->init[2][i] = real_in(h, 6, (uint64_t)i, 0.0f, 0.01f);
	}
}
#define FILL_adam fill_adam

/* batch_normalization */
static void fill_batch_normalization(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool bwd = c->dir == XO_DIR_BWD;

	/* x off centre (mean about 0.5) so that the mean's error enters
	 * x - mean; gamma of both signs away from 0; the state (fwd) a
	 * moving mean near 0 and a moving variance in [0.5, 1.5] */
	fill_plain(h, 0, true, -0.5f, 1.5f);
	if (h->sn[1])
		for (int64_t i = 0; i < h->sn[1]; i++) {
			float v = real_in(h, 1, (uint64_t)i, 0.5f, 1.5f);

			h->src[1][i] = i % 3 == 1 ? -v : v;
		}
	if (bwd) {
		fill_plain(h, 2, true, -1.0f, 1.0f);
	} else {
		if (h->sn[2])
			fill_plain(h, 2, true, -1.0f, 1.0f);
		for (int64_t i = 0; i < p->ch; i++) {
			h->init[1][i] = real_in(h, 5, (uint64_t)i, -0.5f, 0.5f);
			h->init[2][i] = real_in(h, 6, (uint64_t)i, 0.5f, 1.5f);
		}
	}
}
#define FILL_batch_normalization fill_batch_normalization

/* layer_normalization */
static void fill_layer_normalization(struct hcase *h)
{
	/* x off centre (mean about 0.5) so that the mean's error enters
	 * x - mean; gamma of both signs away from 0; beta and dy in [-1, 1).
	 * Every 4th row (from row 1) constant: x - mean must be 0 exactly, y
	 * beta; every 4th row from row 3 a large common offset on a small
	 * spread (1e4 + [-0.05, 0.15)): the offset must cost no precision.
	 * Both are within the bound only for moments that are exact on such
	 * rows (the shifted moments of the kernels). */
	int64_t rows = h->c->p.batch * h->c->p.len, ch = h->c->p.ch;

	fill_plain(h, 0, true, -0.5f, 1.5f);
	for (int64_t k = 1; k < rows; k += 2) {
		float *x = h->src[0] + k * ch;

		for (int64_t c = 0; c < ch; c++)
			x[c] = k % 4 == 1 ? x[0] : 1.0e4f + 0.1f * x[c];
	}
	for (int64_t i = 0; i < h->sn[1]; i++) {
		float v = real_in(h, 1, (uint64_t)i, 0.5f, 1.5f);

		h->src[1][i] = i % 3 == 1 ? -v : v;
	}
	if (h->sn[2])
		fill_plain(h, 2, true, -1.0f, 1.0f);
}
#define FILL_layer_normalization fill_layer_normalization

/* normalization: x in [-0.5, 1.5), the means in [-0.5, 0.5) (x - mean of
 * both signs), variances in [0.25, 4) but every 5th channel from 3 with
 * variance 0 and every 7th from 5 with 1e-16 (roots 0 and 1e-8, both
 * below Keras's epsilon: den is 1e-7f there); dy in [-1, 1). invert=1:
 * the variance-0 channels' means 0, so y = x * 1e-7f there shows the floor
 * (beside a mean the term x * 1e-7f would be below the bound) */
static void fill_normalization(struct hcase *h)
{
	bool bwd = h->c->dir == XO_DIR_BWD;
	int vs = bwd ? 0 : 2;

	if (bwd) {
		fill_plain(h, 1, true, -1.0f, 1.0f);
	} else {
		fill_plain(h, 0, true, -0.5f, 1.5f);
		for (int64_t c = 0; c < h->sn[1]; c++)
			h->src[1][c] = h->c->p.invert && c % 5 == 3
			                       ? 0.0f
			                       : real_in(h, 1, (uint64_t)c, -0.5f, 0.5f);
	}
	for (int64_t c = 0; c < h->sn[vs]; c++)
		h->src[vs][c] = c % 5 == 3   ? 0.0f
		                : c % 7 == 5 ? 1e-16f
		                             : real_in(h, 2, (uint64_t)c, 0.25f, 4.0f);
}
#define FILL_normalization fill_normalization

/* attention: q and k in [-1.5, 1.5) (scores up to 2.25 sqrt(key_dim), rows
 * neither flat nor one-hot), v and dy in [-1, 1). The mask m (attention_mask=1):
 * query row i = 2 mod 4 keeps no key (every row 2 of a len >= 3: the
 * uniform or zero row of ops.def), the others drop about a third of their
 * keys at random (a 0, or every fifth a subnormal +-1e-40, which drops as
 * 0 under Keras's XLA: xo_daz) and keep the rest with 1, 0.25 or -2 (any
 * nonzero keeps: a rule of > 0 or > 0.5 fails) */
static void fill_attention(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	int ns = h->c->dir == XO_DIR_BWD ? 4 : 3, ms = ns;
	static const float keep[3] = {1.0f, 0.25f, -2.0f};
	int64_t tk = xo_attention_len_kv(p);

	for (int s = 0; s < ns; s++)
		fill_plain(h, s, true, s < 2 ? -1.5f : -1.0f, s < 2 ? 1.5f : 1.0f);
	for (int64_t e = 0; p->attention_mask && e < h->sn[ms]; e++) {
		int64_t i = e / tk % p->len;
		bool drop = i % 4 == 2 || real_in(h, (uint32_t)ms, (uint64_t)e, 0.0f, 1.0f) < 0.33f;

		h->src[ms][e] = !drop ? keep[e % 3] : e % 5 ? 0.0f : e % 2 ? 1e-40f : -1e-40f;
	}
}
#define FILL_attention fill_attention

/* mask_outer: ids (i32) about a third 0, the rest in [1, 5] (any nonzero id
 * keeps: a rule of == 1 fails); m about a third 0 (every fifth of those a
 * subnormal, 0 to Keras's XLA: xo_daz), the rest 1, 0.25, -2 or NaN
 * (Keras's cast to bool keeps any nonzero and NaN: a rule of > 0 or of
 * m == m fails). Query row 1 of sample 0 has id 0 wherever ids are given,
 * so every case drops a whole row (query_mask) or column (value_mask) */
static void fill_mask_outer(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	static const float keep[4] = {1.0f, 0.25f, -2.0f, NAN};

	for (int64_t e = 0; e < h->sn[0]; e++) {
		int32_t id = (int32_t)(unif(h, 0, (uint64_t)e) * 15.0f) / 3;

		id = e == 1 ? 0 : id > 5 ? 5 : id;
		memcpy(&h->src[0][e], &id, 4);
	}
	for (int64_t e = 0; e < h->sn[1]; e++)
		h->src[1][e] = real_in(h, 1, (uint64_t)e, 0.0f, 1.0f) >= 0.33f ? keep[e % 4]
		               : e % 5                                     ? 0.0f
		                                                           : 1e-40f;
	(void)p;
}
#define FILL_mask_outer fill_mask_outer

/* masking: x plain, then whole steps set to mask_value by the sample's
 * pattern (n mod 4): 0 every step t = 2 mod 3 and a fifth of the others at
 * random, 1 every step,
 * 2 none, 3 the first and the last; so a line of batch >= 4 has rows with
 * all, none, and first/last steps masked. With ch > 1 every kept step t = 1
 * mod 3 has its feature 0 at mask_value (a step equal in some features only
 * stays kept: a rule of "feature 0 == mask_value" fails), and with
 * mask_value 0 the masked steps of pattern 3 hold -0 and those of pattern
 * 0 +-1e-40 in odd features (masked: a float compare, not the bits, with
 * subnormals as 0 as Keras's XLA: xo_daz). dy (backward) plain. */
static void fill_masking(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	float mv = p->mask_value;

	fill_plain(h, 0, true, -1.0f, 1.0f);
	if (h->c->dir == XO_DIR_BWD)
		fill_plain(h, 1, true, -1.0f, 1.0f);
	for (int64_t r = 0; r < p->batch * p->len; r++) {
		int64_t n = r / p->len, t = r % p->len;
		int pat = (int)(n % 4);
		bool masked = pat == 1 || (pat == 3 && (t == 0 || t == p->len - 1)) ||
		              (pat == 0 && (t % 3 == 2 || real_in(h, 7, (uint64_t)r, 0.0f, 1.0f) < 0.2f));
		float *x = h->src[0] + r * p->ch;

		if (masked) {
			for (int64_t c = 0; c < p->ch; c++)
				x[c] = mv != 0.0f ? mv
				       : pat == 3 ? -0.0f
				       : pat == 0 && c % 2 ? (t % 2 ? 1e-40f : -1e-40f)
				                           : 0.0f;
		} else {
			for (int64_t c = 0; c < p->ch; c++) /* a fill value equal to mv */
				if (x[c] == mv)
					x[c] = mv + 1.0f;
			if (p->ch > 1 && t % 3 == 1)
				x[0] = mv;
		}
	}
}
#define FILL_masking fill_masking

/* binary_crossentropy */
static void fill_bce(struct hcase *h)
{
	/* p over [0, 1] (a few land outside the clip, a few on its bounds,
	 * where half the gradient passes), soft targets in [0, 1]; from
	 * logits, x over [-8, 8] (both softplus branches, no clip) */
	for (int64_t i = 0; i < h->sn[0]; i++) {
		if (h->c->p.from_logits) {
			h->src[0][i] = real_in(h, 0, (uint64_t)i, -8.0f, 8.0f);
			h->src[1][i] = i % 3 ? (float)int_in(h, 1, (uint64_t)i, 0, 1)
			                     : real_in(h, 1, (uint64_t)i, 0.0f, 1.0f);
			continue;
		}
		h->src[0][i] = real_in(h, 0, (uint64_t)i, 0.0f, 1.0f);
		if (i % 17 == 3)
			h->src[0][i] = i % 2 ? 0.0f : 1.0f; /* clipped */
		if (i % 17 == 7)
			h->src[0][i] = i % 2 ? 1e-7f : 1.0f - 0x1p-23f; /* on a bound */
		h->src[1][i] = i % 3 ? (float)int_in(h, 1, (uint64_t)i, 0, 1)
		                     : real_in(h, 1, (uint64_t)i, 0.0f, 1.0f);
	}
}
#define FILL_binary_crossentropy fill_bce

/* sparse_categorical_crossentropy */
static void fill_scce(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;

	if (p->from_logits) { /* logits in [-4, 4], plain labels */
		for (int64_t e = 0; e < h->sn[0]; e++)
			h->src[0][e] = real_in(h, 0, (uint64_t)e, -4.0f, 4.0f);
		fill_labels(h, 1, h->src[1], h->src[0], p->batch, p->ch);
		return;
	}
	xo_hcase_fill_probs(h, 0, h->src[0], h->sn[0], p->ch);
	fill_labels(h, 1, h->src[1], NULL, p->batch, p->ch);
	for (int64_t r = 0; r < p->batch; r++) {
		int32_t k = (int32_t)clip_row(h->src[0] + r * p->ch, r, p->ch);

		if (k >= 0)
			memcpy(&h->src[1][r], &k, 4);
	}
}
#define FILL_sparse_categorical_crossentropy fill_scce

/* sparse_categorical_accuracy */
static void fill_sparse_accuracy(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool exact = c->mode == XO_HMODE_EXACT;

	for (int64_t i = 0; i < h->sn[0]; i++)
		h->src[0][i] = exact ? int_in(h, 0, (uint64_t)i, 0, 3)
		                     : real_in(h, 0, (uint64_t)i, 0.0f, 1.0f);
	fill_labels(h, 1, h->src[1], h->src[0], p->batch, p->ch);
}
#define FILL_sparse_categorical_accuracy fill_sparse_accuracy

/* mean_squared_error */
static void fill_mse(struct hcase *h)
{
	fill_plain(h, 0, false, -2.0f, 2.0f);
	fill_plain(h, 1, false, -2.0f, 2.0f);
}
#define FILL_mean_squared_error fill_mse

/* binary_accuracy */
static void fill_binary_accuracy(struct hcase *h)
{
	/* p on quarters (0.5 itself is "not above"), t 0 or 1, now and then 0.5 */
	for (int64_t i = 0; i < h->sn[0]; i++) {
		h->src[0][i] = 0.25f * (float)int_in(h, 0, (uint64_t)i, 0, 4);
		h->src[1][i] = i % 11 == 5 ? 0.5f : (float)int_in(h, 1, (uint64_t)i, 0, 1);
	}
	/* element 0 a hit, so that no case counts zero (uninformative) */
	h->src[1][0] = h->src[0][0] > 0.5f ? 1.0f : 0.0f;
}
#define FILL_binary_accuracy fill_binary_accuracy

/* sgd */
static void fill_sgd(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;

	fill_plain(h, 0, true, -1.0f, 1.0f);
	for (int64_t i = 0; i < p->size; i++) {
		h->init[0][i] = real_in(h, 4, (uint64_t)i, -1.0f, 1.0f);
		h->init[1][i] = real_in(h, 5, (uint64_t)i, -0.1f, 0.1f);
	}
}
#define FILL_sgd fill_sgd

/* rmsprop */
static void fill_rmsprop(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;

	fill_plain(h, 0, true, -1.0f, 1.0f);
	for (int64_t i = 0; i < p->size; i++) {
		h->init[0][i] = real_in(h, 4, (uint64_t)i, -1.0f, 1.0f);
		h->init[1][i] = real_in(h, 5, (uint64_t)i, 0.0f, 0.01f);
		h->init[2][i] = real_in(h, 6, (uint64_t)i, -0.1f, 0.1f);
	}
}
#define FILL_rmsprop fill_rmsprop

/* accuracy */
static void fill_accuracy(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool exact = c->mode == XO_HMODE_EXACT;

	for (int64_t i = 0; i < h->sn[0]; i++)
		h->src[0][i] = exact ? int_in(h, 0, (uint64_t)i, 0, 3)
		                     : real_in(h, 0, (uint64_t)i, 0.0f, 1.0f);
	fill_onehot(h, 1, h->src[1], h->src[0], h->sn[1], p->ch);
}
#define FILL_accuracy fill_accuracy

/* gather */
static void fill_gather(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;

	fill_plain(h, 0, true, -1.0f, 1.0f);
	for (int64_t i = 0; i < h->sn[1]; i++) {
		int32_t r = (int32_t)(unif(h, 1, (uint64_t)i) * (float)p->rows);

		r = r >= p->rows ? (int32_t)p->rows - 1 : r;
		memcpy(&h->src[1][i], &r, 4);
	}
}
#define FILL_gather fill_gather

/* embedding */
static void fill_embedding(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;

	/* ids uniform in [0, rows): with batch * len > rows rows repeat
	 * (the backward's duplicates) and some may go unused (structural
	 * zeros of dtable); table / dy nonzero */
	for (int64_t i = 0; i < h->sn[0]; i++) {
		int32_t r = (int32_t)(unif(h, 0, (uint64_t)i) * (float)p->rows);

		r = r >= p->rows ? (int32_t)p->rows - 1 : r;
		memcpy(&h->src[0][i], &r, 4);
	}
	fill_plain(h, 1, true, -1.0f, 1.0f);
}
#define FILL_embedding fill_embedding

/* simple_rnn, lstm, gru */
static void fill_rnn(struct hcase *h)
{
	xo_hcase_fill_rnn(h);
}
#define FILL_simple_rnn fill_rnn
#define FILL_lstm fill_rnn
#define FILL_gru fill_rnn

/*
 * The clipped activations (kinks k0 < k1: relu6 0 and 6): per 8 elements,
 * five strictly inside (k0, k1) (element 0 among them, so a one-element
 * case is informative), one below k0, one above k1 (every other one of
 * them exactly k1) and one exactly k0 (hard_sigmoid: -3 and 3): both clipped sides, and the kinks
 * themselves, where the derivative is 0 (ops.def). Exact fills are
 * integers (relu6's results are then its inputs, 0 or 6).
 */
static float clip_x(const struct hcase *h, int64_t i, float k0, float k1, bool exact)
{
	uint64_t e = (uint64_t)i;

	switch (i % 8) {
	case 3:
		return k0 - (exact ? int_in(h, 0, e, 1, 3) : real_in(h, 0, e, 0.01f, 3.0f));
	case 6:
		if (i % 16 == 14)
			return k1;
		return k1 + (exact ? int_in(h, 0, e, 1, 3) : real_in(h, 0, e, 0.01f, 3.0f));
	case 7:
		return k0;
	default:
		return exact ? int_in(h, 0, e, (int)k0 + 1, (int)k1 - 1)
		             : real_in(h, 0, e, k0 + 0.01f, k1 - 0.01f);
	}
}

static void fill_clip(struct hcase *h, float k0, float k1)
{
	bool exact = h->c->mode == XO_HMODE_EXACT;

	for (int64_t i = 0; i < h->sn[0]; i++)
		h->src[0][i] = clip_x(h, i, k0, k1, exact);
	if (h->c->dir == XO_DIR_BWD)
		fill_plain(h, 1, true, -1.0f, 1.0f);
}

/* relu6 */
static void fill_relu6(struct hcase *h)
{
	fill_clip(h, 0.0f, 6.0f);
}
#define FILL_relu6 fill_relu6

/* hard_sigmoid */
static void fill_hard_sigmoid(struct hcase *h)
{
	fill_clip(h, -3.0f, 3.0f);
}
#define FILL_hard_sigmoid fill_hard_sigmoid

/*
 * leaky_relu: both signs, nonzero, and per 8 elements one at the kink, +0
 * (i % 16 == 7) or -0 (i % 16 == 15), where x >= 0 takes the identity
 * branch and dx = dy (ops.def). Exact fills are nonzero integers; real ones
 * in [-4, 4], with some above 1e30 in size (i % 32 == 5: s * x near
 * float's range) so a slope applied in another precision or order shows.
 */
static void fill_leaky_relu(struct hcase *h)
{
	bool exact = h->c->mode == XO_HMODE_EXACT;

	for (int64_t i = 0; i < h->sn[0]; i++) {
		uint64_t e = (uint64_t)i;
		float v = exact ? int_nz(h, 0, e, -(int)h->amp, (int)h->amp)
		                : real_in(h, 0, e, -4.0f, 4.0f);

		if (i % 8 == 7)
			v = i % 16 == 7 ? 0.0f : -0.0f;
		else if (!exact && i % 32 == 5)
			v *= 1e30f;
		h->src[0][i] = v;
	}
	if (h->c->dir == XO_DIR_BWD)
		fill_plain(h, 1, true, -1.0f, 1.0f);
}
#define FILL_leaky_relu fill_leaky_relu

/* silu */
static void fill_silu(struct hcase *h)
{
	/* x in [-12, 12]: both signs' forms, the minimum near -1.28 where the
	 * derivative's two terms cancel, and saturation; every 8th in [-87,
	 * -80], the far tail where silu is ~x e^x (down to 1.4e-36, still
	 * normal, as exp(-87) is) */
	fill_plain(h, 0, true, -12.0f, 12.0f);
	for (int64_t i = 7; i < h->sn[0]; i += 8)
		h->src[0][i] = real_in(h, 0, (uint64_t)i, -87.0f, -80.0f);
	if (h->c->dir == XO_DIR_BWD)
		fill_plain(h, 1, true, -1.0f, 1.0f);
}
#define FILL_silu fill_silu

/* log_softmax: fwd x in [-4, 4] with spiked rows (as softmax); bwd y the
 * logs of softmax rows (log-probabilities, as the forward gives), dy in
 * [-1, 1] */
static void fill_log_softmax(struct hcase *h)
{
	const struct xo_case *c = h->c;

	if (c->dir == XO_DIR_FWD) {
		fill_plain(h, 0, true, -4.0f, 4.0f);
		fill_spike_rows(h, c->p.ch, 2);
		return;
	}
	xo_hcase_fill_probs(h, 0, h->src[0], h->sn[0], c->p.ch);
	for (int64_t i = 0; i < h->sn[0]; i++)
		h->src[0][i] = logf(h->src[0][i]);
	fill_plain(h, 1, true, -1.0f, 1.0f);
}
#define FILL_log_softmax fill_log_softmax

/* The fill of every op's inputs. One entry per op of ops.def: an op without its FILL_ entry
 * does not compile. */
static void (*const fill_of[XO_OP_COUNT])(struct hcase *h) = {
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) [XO_OP_##name] = FILL_##name,
#include "xo/ops.def"
#undef XO_OP
};

enum xo_status xo_hcase_fill(struct hcase *h)
{
	fill_of[h->c->op](h);
	return XO_OK;
}

/* Nonfinite mode: NaN and Inf planted in the inputs of elementwise ops. */
void xo_hcase_plant_nonfinite(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	static const uint32_t special[3] = {0x7fc00000u, 0x7f800000u, 0xff800000u};
	float *x = h->src[0];

	if (xo_op_is_rnn(h->c->op)) {
		/* The recurrent ops: a NaN in sample 0's input at the last step
		 * processed (its last state and ws row NaN, the earlier ones
		 * finite), +Inf in sample 1's at the middle step (every gate
		 * pre-activation it reaches is +-Inf: the gates saturate to
		 * exact 0, 1 or +-1, so the states stay finite; their bounds are
		 * then infinite, and only a NaN or Inf where ref is finite fails)
		 * and -Inf in sample 2's at its first processed step. The other
		 * samples stay finite (the bounds are informative there). */
		int64_t T = p->len, last = p->go_backwards ? 0 : T - 1;
		int64_t first = p->go_backwards ? T - 1 : 0;

		x[(0 * T + last) * p->ch] = u2f(special[0]);
		if (T == 1) /* one step: the other samples stay finite */
			return;
		if (p->batch > 1)
			x[(1 * T + T / 2) * p->ch + (p->ch > 1)] = u2f(special[1]);
		if (p->batch > 2)
			x[(2 * T + first) * p->ch] = u2f(special[2]);
		return;
	}

	if (h->c->op == XO_OP_max_pooling1d) {
		int64_t out, pad;

		if (xo_pool1d_geometry(p, &out, &pad))
			return;
		/* Every window (sample n, channel ch) gets, by (o + ch + n) % 6:
		 * a NaN at its first, middle or last step (y is NaN there,
		 * wherever it is), +Inf in the middle, -Inf first, or nothing. */
		for (int64_t n = 0; n < p->batch; n++)
			for (int64_t o = 0; o < out; o++)
				for (int64_t ch = 0; ch < p->ch; ch++) {
					int64_t lo, hi, k = (o + ch + n) % 6, at;

					pool_window(p, o, pad, &lo, &hi);
					if (lo >= hi || k == 5)
						continue;
					at = k == 0 || k == 4 ? lo
					     : k == 2         ? hi - 1
							      : (lo + hi) / 2;
					x[(n * p->len + at) * p->ch + ch] =
					    u2f(special[k < 3 ? 0 : k == 3 ? 1 : 2]);
				}
		return;
	}
	if (h->c->op == XO_OP_normalization) {
		/* the variances too: a NaN one and a negative one (its root NaN)
		 * give den NaN and a NaN channel, as Keras's maximum(sqrt(v),
		 * epsilon); a floor that catches the NaN gives 1e-7f there */
		h->src[2][0] = u2f(special[0]);
		if (h->sn[2] > 1)
			h->src[2][1] = -1.0f;
	}
	if (h->c->op == XO_OP_merge && h->sn[1]) {
		/* b too, at other elements than a's below (every pairing of a
		 * special with a finite value, both ways, and some of two
		 * specials): maximum and minimum give NaN when either is NaN */
		for (int64_t i = 1; i < h->sn[1]; i += 3)
			h->src[1][i] = u2f(special[(i / 3) % 3]);
	}
	for (int64_t i = 2; i < h->sn[0]; i += 5) {
		/* Dropout: only kept elements, since 0 * Inf's kind is not part
		 * of the dropout contract. */
		if (h->c->op == XO_OP_dropout && p->training &&
		    !xo_dropout_keep(p->seed, p->step, p->layer, (uint64_t)i, p->rate))
			continue;
		x[i] = u2f(special[(i / 5) % 3]);
	}
}
