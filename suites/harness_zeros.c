/*
 * harness_zeros.c - mistrust: the structural zeros an op must produce (geometry
 * that reads only padding, recurrent rows never reached), and the test of
 * whether a slot's reference is trusted.
 */
#include "harness_internal.h"

/* ---- mistrust -------------------------------------------------------------- */

/*
 * conv1d bwd zeros fixed by the geometry: dw taps k that see only padding
 * (no output o has 0 <= o*stride + k*dilation - pad < len), and dx steps no
 * window covers (stride longer than the receptive field).
 */
static int64_t conv_geometry_zeros(const struct xo_params *p, int slot)
{
	int64_t out, pad, s = xo_conv1d_stride(p), d = p->dilation_rate, z = 0;

	if (xo_conv1d_geometry(p, &out, &pad))
		return 0;
	if (slot == 1) {
		for (int64_t k = 0; k < p->kernel_size; k++) {
			bool seen = false;

			for (int64_t o = 0; o < out && !seen; o++) {
				int64_t t = o * s + k * d - pad;

				seen = t >= 0 && t < p->len;
			}
			z += seen ? 0 : p->ch * p->filters;
		}
	} else if (slot == 0) {
		for (int64_t t = 0; t < p->len; t++) {
			bool seen = false;

			for (int64_t o = 0; o < out && !seen; o++)
				for (int64_t k = 0; k < p->kernel_size && !seen; k++)
					seen = o * s + k * d - pad == t;
			z += seen ? 0 : p->batch * p->ch;
		}
	}
	return z;
}

/* One axis of a conv2d (q: xo_params_width_axis for the width): *taps gets
 * the count of taps some output reads inside [0, len), *cells the count of
 * input positions some (output, tap) pair reads. */
static void conv_axis_seen(const struct xo_params *q, int64_t out, int64_t pad, int64_t *taps,
			   int64_t *cells)
{
	int64_t s = xo_conv1d_stride(q), d = q->dilation_rate;

	*taps = *cells = 0;
	for (int64_t k = 0; k < q->kernel_size; k++) {
		bool seen = false;

		for (int64_t o = 0; o < out && !seen; o++) {
			int64_t t = o * s + k * d - pad;

			seen = t >= 0 && t < q->len;
		}
		*taps += seen;
	}
	for (int64_t t = 0; t < q->len; t++) {
		bool seen = false;

		for (int64_t o = 0; o < out && !seen; o++)
			for (int64_t k = 0; k < q->kernel_size && !seen; k++)
				seen = o * s + k * d - pad == t;
		*cells += seen;
	}
}

/* conv2d (and depthwise_conv2d: the same geometry with dilation 1) bwd
 * zeros fixed by the geometry: dw taps (i, j) of which either axis sees only
 * padding (per_tap values each: ch * filters, or ch * depth_multiplier), dx
 * cells of which either axis is in no window. */
static int64_t conv2d_geometry_zeros(const struct xo_params *p, int slot, int64_t per_tap)
{
	struct xo_params q = xo_params_width_axis(p);
	int64_t oh, ow, pt, pl, th, tw, ch, cw;

	if (xo_conv2d_geometry(p, &oh, &ow, &pt, &pl))
		return 0;
	conv_axis_seen(p, oh, pt, &th, &ch);
	conv_axis_seen(&q, ow, pl, &tw, &cw);
	if (slot == 1)
		return (p->kernel_size * q.kernel_size - th * tw) * per_tap;
	if (slot == 0)
		return (p->len * p->width - ch * cw) * p->batch * p->ch;
	return 0;
}

/* One axis of a conv2d_transpose (q: xo_params_width_axis for the width):
 * the count of outputs some (input position, tap) pair lands on. */
static int64_t convt_axis_reached(const struct xo_params *q, int64_t out, int64_t pad)
{
	int64_t s = xo_conv1d_stride(q), n = 0;

	for (int64_t o = 0; o < out; o++) {
		bool seen = false;

		for (int64_t l = 0; l < q->len && !seen; l++)
			for (int64_t k = 0; k < q->kernel_size && !seen; k++)
				seen = l * s + k - pad == o;
		n += seen;
	}
	return n;
}

/* One axis of a conv2d_transpose: *taps gets the count of taps that land
 * inside [0, out) from some input position, *cells the count of input
 * positions with some tap landing inside. */
static void convt_axis_seen(const struct xo_params *q, int64_t out, int64_t pad, int64_t *taps,
			    int64_t *cells)
{
	int64_t s = xo_conv1d_stride(q);

	*taps = *cells = 0;
	for (int64_t k = 0; k < q->kernel_size; k++) {
		bool seen = false;

		for (int64_t l = 0; l < q->len && !seen; l++)
			seen = l * s + k - pad >= 0 && l * s + k - pad < out;
		*taps += seen;
	}
	for (int64_t l = 0; l < q->len; l++) {
		bool seen = false;

		for (int64_t k = 0; k < q->kernel_size && !seen; k++)
			seen = l * s + k - pad >= 0 && l * s + k - pad < out;
		*cells += seen;
	}
}

/* conv2d_transpose bwd zeros fixed by the geometry: dw taps (i, j) of which
 * either axis lands outside y from every input position, dx cells of which
 * either axis has no tap landing inside y. */
static int64_t convt_geometry_zeros(const struct xo_params *p, int slot)
{
	struct xo_params q = xo_params_width_axis(p);
	int64_t oh, ow, pt, pl, th, tw, ch, cw;

	if (xo_conv2d_transpose_geometry(p, &oh, &ow, &pt, &pl))
		return 0;
	convt_axis_seen(p, oh, pt, &th, &ch);
	convt_axis_seen(&q, ow, pl, &tw, &cw);
	if (slot == 1)
		return (p->kernel_size * q.kernel_size - th * tw) * p->filters * p->ch;
	if (slot == 0)
		return (p->len * p->width - ch * cw) * p->batch * p->ch;
	return 0;
}

/*
 * Zeros an op must produce whatever the kernel (structural zeros), counted
 * from the inputs and the geometry: relu fwd where x <= 0 (or conv1d/dense
 * with relu where the pre-activation z <= 0), relu bwd where y <= 0, dropout
 * where the mask drops, max_pooling1d bwd at inputs that are the first
 * maximum of no window, conv1d bwd where padding or strides leave a dw tap
 * or a dx step out of every window.
 */
/* With mask_zero, the zeros of ref at masked steps: y (zero_output_for_mask,
 * or the zero state carried from step 0), the ws rows' non-state blocks,
 * dx's masked input steps. */
static int64_t rnn_mask_zeros(const struct hcase *h, int slot)
{
	const struct xo_params *p = &h->c->p;
	int64_t T = p->len, z = 0, w, steps;
	bool bwd = h->c->dir == XO_DIR_BWD;

	if (!p->mask_zero || slot > (bwd ? 0 : 1))
		return 0;
	if (!bwd && slot == 0 && !p->return_sequences) { /* the last step's */
		for (int64_t n = 0; n < p->batch; n++)
			for (int64_t k = 0; k < p->units; k++)
				z += xo_hcase_rnn_masked(h, n, p->go_backwards ? 0 : T - 1) &&
				     h->ref[0][n * p->units + k] == 0.0f;
		return z;
	}
	steps = p->batch * T;
	w = h->dn[slot] / steps;
	for (int64_t r = 0; r < steps; r++) {
		int64_t n = r / T, s = r % T;
		/* dx is in input order; y and ws in processing order */
		int64_t t = bwd || !p->go_backwards ? s : T - 1 - s;

		if (!xo_hcase_rnn_masked(h, n, t))
			continue;
		for (int64_t k = 0; k < w; k++)
			z += h->ref[slot][r * w + k] == 0.0f;
	}
	return z;
}

static int64_t rnn_structural_zeros(const struct hcase *h, int slot)
{
	const struct xo_params *p = &h->c->p;
	int64_t z = rnn_mask_zeros(h, slot);

	if (h->c->dir == XO_DIR_BWD) /* h' = 0 before step 0: no recurrent gradient at len 1 */
		return slot == 2 && p->len == 1 ? h->dn[2] : z;
	if (h->c->op == XO_OP_gru && !p->reset_after && slot == 1) {
		/* the hz_h block: 0 by definition (a masked row's counted above) */
		for (int64_t r = 0; r < p->batch * p->len; r++) {
			int64_t s = r % p->len, t = p->go_backwards ? p->len - 1 - s : s;

			z += xo_hcase_rnn_masked(h, r / p->len, t) ? 0 : p->units;
		}
		return z;
	}
	if (h->c->op == XO_OP_simple_rnn && p->activation == XO_ACTIVATION_RELU) {
		z = 0; /* relu's clipped states, the masked steps' zeros among them */
		for (int64_t e = 0; e < h->dn[slot]; e++)
			z += h->ref[slot][e] == 0.0f;
	}
	return z;
}

/* conv1d, conv2d, dense */
static int64_t zeros_conv_dense_relu(const struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	int64_t z = 0;

	if (c->dir == XO_DIR_FWD && p->activation == XO_ACTIVATION_RELU)
		for (int64_t e = 0; e < h->dn[0]; e++)
			z += !(h->z[e] > 0.0f);
	return z;
}
#define ZEROS_conv1d zeros_conv_dense_relu
#define ZEROS_conv2d zeros_conv_dense_relu
#define ZEROS_dense zeros_conv_dense_relu
#define ZEROS_depthwise_conv2d zeros_conv_dense_relu

/* conv2d_transpose fwd: relu's clipped outputs, and without a bias the
 * linear outputs no tap lands on (a stride longer than the kernel) */
static int64_t zeros_conv2d_transpose(const struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	struct xo_params q = xo_params_width_axis(p);
	int64_t oh, ow, pt, pl, rh, rw;

	if (h->c->dir != XO_DIR_FWD || p->use_bias || p->activation != XO_ACTIVATION_LINEAR)
		return zeros_conv_dense_relu(h);
	if (xo_conv2d_transpose_geometry(p, &oh, &ow, &pt, &pl))
		return 0;
	rh = convt_axis_reached(p, oh, pt);
	rw = convt_axis_reached(&q, ow, pl);
	return (oh * ow - rh * rw) * p->batch * p->filters;
}
#define ZEROS_conv2d_transpose zeros_conv2d_transpose

/* relu */
static int64_t zeros_relu(const struct hcase *h)
{
	int64_t z = 0;

	for (int64_t e = 0; e < h->dn[0]; e++)
		z += !(h->src[0][e] > 0.0f);
	return z;
}
#define ZEROS_relu zeros_relu

/* dropout */
static int64_t zeros_dropout(const struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	int64_t z = 0;

	for (int64_t e = 0; p->training && e < h->dn[0]; e++)
		z += !xo_dropout_keep(p->seed, p->step, p->layer, (uint64_t)e, p->rate);
	return z;
}
#define ZEROS_dropout zeros_dropout

/* embedding: bwd: the rows no id names */
static int64_t zeros_embedding(const struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	int64_t z = 0;

	if (c->dir == XO_DIR_BWD) {
		char *used = calloc((size_t)p->rows, 1);

		if (!used)
			return 0;
		for (int64_t i = 0; i < p->batch * p->len; i++) {
			int32_t r;

			memcpy(&r, &h->src[0][i], 4);
			used[r] = 1;
		}
		for (int64_t r = 0; r < p->rows; r++)
			z += used[r] ? 0 : p->ch;
		free(used);
	}
	return z;
}
#define ZEROS_embedding zeros_embedding

/* global_max_pooling1d: one first maximum per (sample, channel) */
static int64_t zeros_global_max_pool1d(const struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;

	return c->dir == XO_DIR_BWD ? p->batch * p->ch * (p->len - 1) : 0;
}
#define ZEROS_global_max_pooling1d zeros_global_max_pool1d

/* global_max_pooling2d */
static int64_t zeros_global_max_pool2d(const struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;

	return c->dir == XO_DIR_BWD ? p->batch * p->ch * (p->len * p->width - 1) : 0;
}
#define ZEROS_global_max_pooling2d zeros_global_max_pool2d

/* average_pooling2d, max_pooling2d bwd: cells no window holds (average), or
 * the first maximum of no window (max) */
static int64_t zeros_pool2d(const struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	int64_t z = 0;
	struct xo_pool2d_geom g;
	bool max = c->op == XO_OP_max_pooling2d;
	int64_t hw = p->len * p->width;
	char *hit;

	if (c->dir != XO_DIR_BWD || xo_pool2d_geometry_of(c->op, p, &g))
		return 0;
	hit = calloc((size_t)h->dn[0], 1);
	if (!hit)
		return 0;
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t oh = 0; oh < g.out_h; oh++)
			for (int64_t ow = 0; ow < g.out_w; ow++)
				for (int64_t ch = 0; ch < p->ch; ch++) {
					int64_t r[4], best = -1;

					pool2d_window(p, &g, oh, ow, r);
					for (int64_t i = r[0]; i < r[1]; i++)
						for (int64_t j = r[2]; j < r[3]; j++) {
							int64_t e = ((n * hw) + i * p->width + j) *
							                p->ch + ch;

							if (!max)
								hit[e] = 1;
							else if (best < 0 ||
							         h->src[0][e] > h->src[0][best])
								best = e;
						}
					if (max && best >= 0)
						hit[best] = 1;
				}
	for (int64_t e = 0; e < h->dn[0]; e++)
		z += !hit[e];
	free(hit);
	return z;
}
#define ZEROS_average_pooling2d zeros_pool2d
#define ZEROS_max_pooling2d zeros_pool2d

/* average_pooling1d bwd: steps no window holds */
static int64_t zeros_avg_pool1d(const struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	int64_t z = 0;
	int64_t out, pad, lo, hi;

	if (c->dir != XO_DIR_BWD || xo_pool1d_geometry_of(c->op, p, &out, &pad))
		return 0;
	for (int64_t t = 0; t < p->len; t++) {
		bool seen = false;

		for (int64_t o = 0; o < out && !seen; o++) {
			xo_pool1d_window(p, o, pad, &lo, &hi);
			seen = t >= lo && t < hi;
		}
		z += seen ? 0 : p->batch * p->ch;
	}
	return z;
}
#define ZEROS_average_pooling1d zeros_avg_pool1d

/* max_pooling1d */
static int64_t zeros_max_pool1d(const struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	int64_t z = 0;
	int64_t out, pad;
	char *hit;

	if (c->dir != XO_DIR_BWD || xo_pool1d_geometry(p, &out, &pad))
		return 0;
	hit = calloc((size_t)h->dn[0], 1);
	if (!hit)
		return 0;
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t o = 0; o < out; o++)
			for (int64_t ch = 0; ch < p->ch; ch++) {
				int64_t lo, hi, best;

				pool_window(p, o, pad, &lo, &hi);
				best = lo;
				for (int64_t j = lo + 1; j < hi; j++)
					if (h->src[0][(n * p->len + j) * p->ch + ch] >
					    h->src[0][(n * p->len + best) * p->ch + ch])
						best = j;
				if (lo < hi)
					hit[(n * p->len + best) * p->ch + ch] = 1;
			}
	for (int64_t e = 0; e < h->dn[0]; e++)
		z += !hit[e];
	free(hit);
	return z;
}
#define ZEROS_max_pooling1d zeros_max_pool1d

/* pad: the destination cells no source cell lands in (fwd: the padding;
 * bwd: the cropped cells), per axis the cells outside [begin, begin + n) */
static int64_t pad_axis_inside(int64_t dn, int64_t sn, int64_t begin)
{
	int64_t lo = begin > 0 ? begin : 0, hi = begin + sn < dn ? begin + sn : dn;

	return hi > lo ? hi - lo : 0;
}

static int64_t zeros_pad(const struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	bool bwd = h->c->dir == XO_DIR_BWD;
	int64_t oh = p->len + p->pad_begin + p->pad_end;
	int64_t ow = p->width + p->pad_begin_w + p->pad_end_w;
	int64_t ih = bwd ? pad_axis_inside(p->len, oh, -p->pad_begin)
			 : pad_axis_inside(oh, p->len, p->pad_begin);
	int64_t iw = bwd ? pad_axis_inside(p->width, ow, -p->pad_begin_w)
			 : pad_axis_inside(ow, p->width, p->pad_begin_w);

	return h->dn[0] - p->batch * p->ch * ih * iw;
}
#define ZEROS_pad zeros_pad

/* log_softmax over rows of one value: every output is 0 (fwd: x - x; bwd:
 * dy - 1 dy), exactly */
static int64_t zeros_log_softmax(const struct hcase *h)
{
	return h->c->p.ch == 1 ? h->dn[0] : 0;
}
#define ZEROS_log_softmax zeros_log_softmax

/* The rows of x whose values are all equal: their x - mean is 0 exactly. */
static int64_t ln_constant_rows(const struct hcase *h)
{
	int64_t rows = h->c->p.batch * h->c->p.len, ch = h->c->p.ch, n = 0;

	for (int64_t k = 0; k < rows; k++) {
		const float *x = h->src[0] + k * ch;
		int64_t c = 1;

		while (c < ch && x[c] == x[0])
			c++;
		n += c == ch;
	}
	return n;
}

/* layer_normalization: a constant row is normalized to beta, 0 without
 * centre (fwd); at ch = 1 every row is constant and dx = r (g - g - 0) = 0
 * (bwd); dgamma = sum dy xhat is 0 when every row is constant. */
static int64_t zeros_layer_normalization(const struct hcase *h, int slot)
{
	const struct xo_params *p = &h->c->p;
	int64_t rows = p->batch * p->len, k = ln_constant_rows(h);

	if (h->c->dir == XO_DIR_FWD)
		return slot == 0 && !h->sn[2] ? k * p->ch : 0;
	if (slot == 0)
		return p->ch == 1 ? h->dn[0] : 0;
	return slot == 1 && k == rows ? h->dn[1] : 0;
}
#define ZEROS_layer_normalization zeros_none /* dispatched above, per slot */

/* merge with Keras's mask (ops.def), element e: whether ref gives a
 * structural 0 in slot (fwd y; bwd 0 da, 1 db). Multiply: y where both
 * flags are set and both inputs masked; a masked input's gradient.
 * Maximum, minimum: the op runs on (o, x); a gradient is 0 where its input
 * feeds neither (da where a is masked and b kept, db where b is masked) or
 * where both are kept and it loses strictly. */
static bool merge_masked_zero(const struct hcase *h, int slot, int64_t e)
{
	const struct xo_params *p = &h->c->p;
	bool bwd = h->c->dir == XO_DIR_BWD;
	int32_t id;

	memcpy(&id, &h->src[bwd ? 3 : 2][e / p->ch], 4);
	bool ma = !p->mask_a || id != 0, mb = !p->mask_b || id != 0;

	if (!bwd)
		return p->mode == XO_MERGE_MULTIPLY && p->mask_a && p->mask_b && !ma && !mb;
	if (p->mode == XO_MERGE_MULTIPLY)
		return slot ? !mb : !ma;
	if (slot ? !mb : !ma && mb)
		return true;
	if (!ma || !mb)
		return false;
	float mine = h->src[slot][e], other = h->src[1 - slot][e];

	return p->mode == XO_MERGE_MAXIMUM ? mine < other : mine > other;
}

/* merge: maximum's and minimum's backward gives the input that loses
 * (strictly: a tie splits dy) no gradient, in slot 0 (da) or 1 (db); with
 * Keras's mask, merge_masked_zero's */
static int64_t zeros_merge(const struct hcase *h, int slot)
{
	const struct xo_params *p = &h->c->p;
	bool max = p->mode == XO_MERGE_MAXIMUM;
	int64_t z = 0;

	if (p->mask_a || p->mask_b) {
		for (int64_t e = 0; e < h->dn[slot]; e++)
			z += merge_masked_zero(h, slot, e);
		return z;
	}
	if (h->c->dir != XO_DIR_BWD || (!max && p->mode != XO_MERGE_MINIMUM))
		return 0;
	for (int64_t e = 0; e < h->dn[slot]; e++) {
		float mine = h->src[slot][e], other = h->src[1 - slot][e];

		z += max ? mine < other : mine > other;
	}
	return z;
}
#define ZEROS_merge zeros_none /* dispatched below, per slot */

/* attention, per sample (the mask m is one per sample; causal alone the
 * same for all): a query row that keeps one key has p = 1 there and
 * ds = 0, a row that keeps none ds = 0 by definition (ops.def), so its dq
 * is 0 (slot 0); a key that no row keeps gets dk = dv = 0 (slots 1, 2) -
 * unless a row keeps none without dropout, whose uniform p reaches every
 * dv - and a key kept only by rows of one key dk = 0. Forward: with
 * dropout, a row that keeps no key has o = 0. */
static bool attn_zkeep(const struct xo_params *p, const float *m, int64_t n, int64_t i,
                       int64_t j)
{
	int64_t tk = xo_attention_len_kv(p);

	if (p->causal && j > i)
		return false;
	return !m || m[(n * p->len + i) * tk + j] != 0.0f;
}

static int64_t attn_zrow_keys(const struct xo_params *p, const float *m, int64_t n, int64_t i)
{
	int64_t nk = 0;

	for (int64_t j = 0; j < xo_attention_len_kv(p); j++)
		nk += attn_zkeep(p, m, n, i, j);
	return nk;
}

static int64_t attn_zeros_sample(const struct xo_params *p, const float *m, int64_t n, int slot,
                                 bool bwd)
{
	int64_t tk = xo_attention_len_kv(p), rows = 0;
	bool uniform = false;

	for (int64_t i = 0; i < p->len; i++)
		uniform |= attn_zrow_keys(p, m, n, i) == 0 && p->dropout == 0.0f;
	if (!bwd) {
		for (int64_t i = 0; i < p->len && p->dropout > 0.0f; i++)
			rows += attn_zrow_keys(p, m, n, i) == 0;
		return rows;
	}
	for (int64_t j = 0; j < (slot ? tk : p->len); j++) {
		bool seen = uniform, moves = false;

		for (int64_t i = 0; i < p->len && slot; i++) {
			bool kept = attn_zkeep(p, m, n, i, j);

			seen |= kept;
			moves |= kept && attn_zrow_keys(p, m, n, i) > 1;
		}
		if (slot == 0)
			rows += attn_zrow_keys(p, m, n, j) <= 1;
		else
			rows += slot == 1 ? !moves : !seen;
	}
	return rows;
}

static int64_t zeros_attention(const struct hcase *h, int slot)
{
	const struct xo_params *p = &h->c->p;
	bool bwd = h->c->dir == XO_DIR_BWD;
	const float *m = p->attention_mask ? h->src[bwd ? 4 : 3] : NULL;
	int64_t rows = 0;

	for (int64_t n = 0; n < p->batch; n++)
		rows += attn_zeros_sample(p, m, n, slot, bwd);
	return p->heads * rows *
	       (slot == 2 || !bwd ? xo_attention_value_dim(p) : p->key_dim);
}
#define ZEROS_attention zeros_none /* dispatched below, per slot */

/* every other op: none */
static int64_t zeros_none(const struct hcase *h)
{
	(void)h;
	return 0;
}
#define ZEROS_global_average_pooling1d zeros_none
#define ZEROS_global_average_pooling2d zeros_none
#define ZEROS_sigmoid zeros_none
#define ZEROS_softmax zeros_none
#define ZEROS_tanh zeros_none
#define ZEROS_elu zeros_none
#define ZEROS_gelu zeros_none
#define ZEROS_softplus zeros_none
#define ZEROS_silu zeros_none
#define ZEROS_flatten zeros_none
#define ZEROS_categorical_crossentropy zeros_none
#define ZEROS_adam zeros_none
#define ZEROS_accuracy zeros_none
#define ZEROS_gather zeros_none
#define ZEROS_batch_normalization zeros_none
#define ZEROS_sgd zeros_none
#define ZEROS_rmsprop zeros_none
#define ZEROS_up_sampling zeros_none
#define ZEROS_permute zeros_none
#define ZEROS_flip zeros_none
#define ZEROS_rescaling zeros_none
#define ZEROS_normalization zeros_none
#define ZEROS_binary_crossentropy zeros_none
#define ZEROS_mean_squared_error zeros_none
#define ZEROS_binary_accuracy zeros_none
#define ZEROS_sparse_categorical_crossentropy zeros_none
#define ZEROS_sparse_categorical_accuracy zeros_none
#define ZEROS_simple_rnn zeros_none
#define ZEROS_lstm zeros_none
#define ZEROS_gru zeros_none

/* mask_outer: every dropped (i, j) is 0, read from the inputs as ops.def
 * says (the query's id, the key's id, m == 0) */
static int64_t zeros_mask_outer(const struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	int64_t tk = xo_attention_len_kv(p), t = p->query_mask ? p->len : tk, z = 0;

	for (int64_t e = 0; e < h->dn[0]; e++) {
		int64_t n = e / (p->len * tk), i = e / tk % p->len, j = e % tk;
		int32_t qi = 1, kj = 1;

		if (p->query_mask)
			memcpy(&qi, &h->src[0][n * t + i], 4);
		if (p->value_mask)
			memcpy(&kj, &h->src[0][n * t + j], 4);
		z += qi == 0 || kj == 0 || (p->attention_mask && h->src[1][e] == 0.0f);
	}
	return z;
}
#define ZEROS_mask_outer zeros_mask_outer

/* masking: every element of a masked step is +0 (y forward, dx backward),
 * the steps read from x as ops.def says (every feature == mask_value, a
 * subnormal as 0: xo_daz) */
static int64_t zeros_masking(const struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	int64_t z = 0;

	for (int64_t r = 0; r < p->batch * p->len; r++) {
		bool keep = false;

		for (int64_t c = 0; c < p->ch; c++)
			keep = keep || xo_daz(h->src[0][r * p->ch + c]) != xo_daz(p->mask_value);
		z += keep ? 0 : p->ch;
	}
	return z;
}
#define ZEROS_masking zeros_masking

/* The clipped activations: forward zero where x <= k0 (and NaN, which is
 * not counted as a zero), backward zero outside the open interval (k0, k1),
 * the kinks included (ops.def). */
static int64_t zeros_clip(const struct hcase *h, float k0, float k1)
{
	bool bwd = h->c->dir == XO_DIR_BWD;
	int64_t z = 0;

	for (int64_t e = 0; e < h->dn[0]; e++) {
		float x = h->src[0][e];

		z += !(x > k0 && (!bwd || x < k1));
	}
	return z;
}

/* relu6 */
static int64_t zeros_relu6(const struct hcase *h)
{
	return zeros_clip(h, 0.0f, 6.0f);
}
#define ZEROS_relu6 zeros_relu6

/* hard_sigmoid */
static int64_t zeros_hard_sigmoid(const struct hcase *h)
{
	return zeros_clip(h, -3.0f, 3.0f);
}
#define ZEROS_hard_sigmoid zeros_hard_sigmoid

/* leaky_relu: forward zero at the kink x = 0 (either sign); with a slope of
 * 0, every negative x's output and gradient too (ops.def) */
static int64_t zeros_leaky_relu(const struct hcase *h)
{
	bool bwd = h->c->dir == XO_DIR_BWD;
	bool flat = h->c->p.negative_slope == 0.0f;
	int64_t z = 0;

	for (int64_t e = 0; e < h->dn[0]; e++) {
		float x = h->src[0][e];

		z += (!bwd && x == 0.0f) || (flat && x < 0.0f);
	}
	return z;
}
#define ZEROS_leaky_relu zeros_leaky_relu

/* The structural zeros of dst slot 0 (those of the other slots, of the convolutions' backward and
 * of the recurrent ops: above). One entry per op of ops.def: an op without its ZEROS_ entry does
 * not compile. */
static int64_t (*const zeros_of[XO_OP_COUNT])(const struct hcase *h) = {
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) [XO_OP_##name] = ZEROS_##name,
#include "xo/ops.def"
#undef XO_OP
};

int64_t xo_hcase_structural_zeros(const struct hcase *h, int slot)
{
	const struct xo_case *c = h->c;

	if (c->op == XO_OP_conv1d && c->dir == XO_DIR_BWD)
		return conv_geometry_zeros(&c->p, slot);
	if (xo_op_is_rnn(c->op))
		return rnn_structural_zeros(h, slot);
	if (c->op == XO_OP_conv2d && c->dir == XO_DIR_BWD)
		return conv2d_geometry_zeros(&c->p, slot, c->p.ch * c->p.filters);
	if (c->op == XO_OP_depthwise_conv2d && c->dir == XO_DIR_BWD)
		return conv2d_geometry_zeros(&c->p, slot, c->p.ch * c->p.depth_multiplier);
	if (c->op == XO_OP_conv2d_transpose && c->dir == XO_DIR_BWD)
		return convt_geometry_zeros(&c->p, slot);
	if (c->op == XO_OP_layer_normalization)
		return zeros_layer_normalization(h, slot);
	if (c->op == XO_OP_merge)
		return zeros_merge(h, slot);
	if (c->op == XO_OP_attention)
		return zeros_attention(h, slot);
	if (slot != 0)
		return 0;
	return zeros_of[c->op](h);
}

/*
 * A reference output is uninformative, and the case fails, when among its n
 * elements, after setting aside the s structural zeros, more than 30% of the
 * remaining n - s are zero ((zeros - s) > 0.3 (n - s)), or none remain, or
 * when it has at least 4 finite elements and they are all the same value.
 * Index outputs (accuracy's idx, I32) skip the zero rule: 0 is a class.
 */
bool xo_hcase_mistrusted(struct hcase *h, int slot, char *why, size_t size)
{
	int64_t n = h->dn[slot], s = h->structural[slot], zeros = 0, finite = 0;
	bool constant = true, i32 = h->ds[slot].dtype == XO_DTYPE_I32;
	uint32_t first = 0;

	for (int64_t e = 0; e < n; e++) {
		float v = h->ref[slot][e];

		if (!i32 && !isfinite(v))
			continue;
		if (!i32 && v == 0.0f)
			zeros++;
		if (finite++ == 0)
			first = f2u(v);
		else if (f2u(v) != first && !(!i32 && v == 0.0f && u2f(first) == 0.0f))
			constant = false;
	}
	/* a slot that is all structural zeros (the recurrent ops' recurrent
	 * kernel gradient at len 1, where h' = 0; log_softmax and
	 * layer_normalization over rows of one value; attention's dq and dk
	 * where every query sees one key) must be exactly 0 and carries no
	 * other information: allowed */
	if (n > 0 && s == n && zeros == n &&
	    (xo_op_is_rnn(h->c->op) || h->c->op == XO_OP_log_softmax ||
	     h->c->op == XO_OP_layer_normalization || h->c->op == XO_OP_attention))
		return false;
	if (!i32 && (n - s <= 0 || (double)(zeros - s) > 0.3 * (double)(n - s))) {
		snprintf(why, size,
		         "%" PRId64 " of %" PRId64 " reference outputs are zero (%" PRId64
		         " of them structural): more than 30%% of the rest",
		         zeros, n, s);
		return true;
	}
	/* layer_normalization over rows of one value: every y is beta, the
	 * same value by the math, compared within u |beta| */
	if (finite >= 4 && constant &&
	    !(h->c->op == XO_OP_layer_normalization && h->c->p.ch == 1)) {
		snprintf(why, size, "all %" PRId64 " reference outputs are the same value (%g)",
		         finite, i32 ? (double)(int32_t)first : (double)u2f(first));
		return true;
	}
	return false;
}
