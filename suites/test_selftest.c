/*
 * test_selftest.c - the checker is tested (STYLE rule 14, DESIGN section 5):
 * backends built from a copy of the reference table with one entry replaced
 * by a deliberately wrong kernel must each be FAILED by the harness, for the
 * expected reason; the unmodified copy must pass the same cases.
 *
 * The fake backends are assembled here from backend.h (struct xo_backend
 * and the table's init), so no public API exists for them.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

static struct xo_backend *g_ref;

/* ---- faulty kernels -------------------------------------------------------- */

/* dense fwd reading the kernel as w[units][ch] (transposed), linear. */
static enum xo_status dense_fwd_transposed(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]), *w = xo_tensor_f32(a->src[1]);
	const float *b = xo_tensor_f32(a->src[2]);
	float *y = xo_tensor_f32(a->dst[0]);
	int64_t ch = a->p.ch, units = a->p.units;

	(void)be;
	for (int64_t n = 0; n < a->p.batch; n++)
		for (int64_t u = 0; u < units; u++) {
			double s = b ? b[u] : 0.0;

			for (int64_t c = 0; c < ch; c++)
				s += (double)x[n * ch + c] * w[u * ch + c];
			y[n * units + u] = (float)s;
		}
	return XO_OK;
}

/* conv1d fwd that forgets the bias. */
static enum xo_status conv1d_fwd_no_bias(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_op_args b = *a;

	b.p.use_bias = false;
	b.src[2] = NULL;
	return xo_ref_iface.fwd[XO_OP_conv1d](be, &b);
}

/* conv1d fwd (valid, stride 1, no dilation, linear) whose window starts one
 * step late; the step past the input reads as zero. */
static enum xo_status conv1d_fwd_off_by_one(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]), *w = xo_tensor_f32(a->src[1]);
	const float *b = xo_tensor_f32(a->src[2]);
	float *y = xo_tensor_f32(a->dst[0]);
	int64_t out = p->len - p->kernel_size + 1;

	(void)be;
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t o = 0; o < out; o++)
			for (int64_t f = 0; f < p->filters; f++) {
				double s = b ? b[f] : 0.0;

				for (int64_t k = 0; k < p->kernel_size; k++) {
					int64_t t = o + k + 1;

					if (t >= p->len)
						continue;
					for (int64_t c = 0; c < p->ch; c++)
						s += (double)x[(n * p->len + t) * p->ch + c] *
						     w[(k * p->ch + c) * p->filters + f];
				}
				y[(n * out + o) * p->filters + f] = (float)s;
			}
	return XO_OK;
}

/* max_pooling1d bwd (valid padding) routing dy to the LAST maximum. */
static enum xo_status pool_bwd_last_max(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]), *dy = xo_tensor_f32(a->src[1]);
	float *dx = xo_tensor_f32(a->dst[0]);
	int64_t s = xo_pool1d_stride(p), out = (p->len - p->pool_size) / s + 1;

	(void)be;
	memset(dx, 0, sizeof(float) * (size_t)(p->batch * p->len * p->ch));
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t o = 0; o < out; o++)
			for (int64_t c = 0; c < p->ch; c++) {
				int64_t best = o * s;

				for (int64_t j = o * s; j < o * s + p->pool_size; j++)
					if (x[(n * p->len + j) * p->ch + c] >=
					    x[(n * p->len + best) * p->ch + c])
						best = j;
				dx[(n * p->len + best) * p->ch + c] +=
				    dy[(n * out + o) * p->ch + c];
			}
	return XO_OK;
}

/* average_pooling1d fwd dividing every window by pool_size, also a
 * same-padded edge window with fewer valid steps (Keras divides by those). */
static enum xo_status avgpool_fwd_full_window(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]);
	float *y = xo_tensor_f32(a->dst[0]);
	int64_t out, pad, lo, hi;

	(void)be;
	if (xo_pool1d_geometry_of(XO_OP_average_pooling1d, p, &out, &pad))
		return XO_EINVAL;
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t o = 0; o < out; o++) {
			xo_pool1d_window(p, o, pad, &lo, &hi);
			for (int64_t c = 0; c < p->ch; c++) {
				double s = 0.0;

				for (int64_t l = lo; l < hi; l++)
					s += x[(n * p->len + l) * p->ch + c];
				y[(n * out + o) * p->ch + c] = (float)(s / (double)p->pool_size);
			}
		}
	return XO_OK;
}

/* average_pooling1d fwd off by a relative 2^-16 (256 u): beyond the derived
 * bound 2 (K + 5) u mag for K = 3 (16 u), so the bound is not loose. */
static enum xo_status avgpool_fwd_2_16(struct xo_backend *be, const struct xo_op_args *a)
{
	enum xo_status st = xo_ref_iface.fwd[XO_OP_average_pooling1d](be, a);
	float *y = xo_tensor_f32(a->dst[0]);

	for (int64_t i = 0; i < a->dst[0]->nelem; i++)
		y[i] *= 1.0f + 0x1p-16f;
	return st;
}

/* global_max_pooling1d bwd routing dy to the LAST maximum of each column. */
/* average_pooling2d fwd off by a relative 2^-16 (256 u): beyond the derived
 * bound 2 (K + 5) u mag for a 2x2 window, K = 4 (18 u). */
static enum xo_status avgpool2d_fwd_2_16(struct xo_backend *be, const struct xo_op_args *a)
{
	enum xo_status st = xo_ref_iface.fwd[XO_OP_average_pooling2d](be, a);
	float *y = xo_tensor_f32(a->dst[0]);

	for (int64_t i = 0; i < a->dst[0]->nelem; i++)
		y[i] *= 1.0f + 0x1p-16f;
	return st;
}

/* max_pooling2d bwd routing dy to the LAST maximum (>=, row-major) of each
 * window instead of the first. */
static enum xo_status maxpool2d_bwd_last_max(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]), *dy = xo_tensor_f32(a->src[1]);
	float *dx = xo_tensor_f32(a->dst[0]);
	struct xo_params wp = xo_params_width_axis(p);
	struct xo_pool2d_geom g;
	int64_t hw = p->len * p->width;

	(void)be;
	if (xo_pool2d_geometry_of(XO_OP_max_pooling2d, p, &g))
		return XO_EINVAL;
	memset(dx, 0, sizeof(float) * (size_t)(p->batch * hw * p->ch));
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t oh = 0; oh < g.out_h; oh++)
			for (int64_t ow = 0; ow < g.out_w; ow++)
				for (int64_t c = 0; c < p->ch; c++) {
					int64_t r0, r1, s0, s1, best = -1;

					xo_pool1d_window(p, oh, g.pad_h, &r0, &r1);
					xo_pool1d_window(&wp, ow, g.pad_w, &s0, &s1);
					for (int64_t r = r0; r < r1; r++)
						for (int64_t t = s0; t < s1; t++) {
							int64_t e = (n * hw + r * p->width + t) * p->ch + c;

							if (best < 0 || x[e] >= x[best])
								best = e;
						}
					dx[best] += dy[((n * g.out_h + oh) * g.out_w + ow) * p->ch + c];
				}
	return XO_OK;
}

static enum xo_status gmax_bwd_last_max(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]), *dy = xo_tensor_f32(a->src[1]);
	float *dx = xo_tensor_f32(a->dst[0]);

	(void)be;
	memset(dx, 0, sizeof(float) * (size_t)(p->batch * p->len * p->ch));
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t c = 0; c < p->ch; c++) {
			int64_t best = 0;

			for (int64_t l = 1; l < p->len; l++)
				if (x[(n * p->len + l) * p->ch + c] >= x[(n * p->len + best) * p->ch + c])
					best = l;
			dx[(n * p->len + best) * p->ch + c] = dy[n * p->ch + c];
		}
	return XO_OK;
}

/* relu fwd that also writes one element past the end of dst. */
static enum xo_status relu_fwd_past_end(struct xo_backend *be, const struct xo_op_args *a)
{
	enum xo_status st = xo_ref_iface.fwd[XO_OP_relu](be, a);

	xo_tensor_f32(a->dst[0])[a->dst[0]->nelem] = 1.0f;
	return st;
}

/* relu fwd that also writes one element before the start of dst. */
static enum xo_status relu_fwd_before_start(struct xo_backend *be, const struct xo_op_args *a)
{
	enum xo_status st = xo_ref_iface.fwd[XO_OP_relu](be, a);

	xo_tensor_f32(a->dst[0])[-1] = 1.0f;
	return st;
}

/* dense fwd that leaves a NaN in one output. */
static enum xo_status dense_fwd_nan(struct xo_backend *be, const struct xo_op_args *a)
{
	enum xo_status st = xo_ref_iface.fwd[XO_OP_dense](be, a);

	xo_tensor_f32(a->dst[0])[a->dst[0]->nelem / 2] = NAN;
	return st;
}

/* sigmoid fwd 300 ulps off everywhere. */
static enum xo_status sigmoid_fwd_300ulp(struct xo_backend *be, const struct xo_op_args *a)
{
	enum xo_status st = xo_ref_iface.fwd[XO_OP_sigmoid](be, a);
	float *y = xo_tensor_f32(a->dst[0]);

	for (int64_t i = 0; i < a->dst[0]->nelem; i++) {
		uint32_t u;

		memcpy(&u, &y[i], 4);
		u += 300;
		memcpy(&y[i], &u, 4);
	}
	return st;
}

/* gelu fwd with the tanh approximation (Keras's approximate=True) instead of
 * the exact erf form: up to ~5e-4 off near |x| = 2. */
static enum xo_status gelu_fwd_tanh_approx(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]);
	float *y = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t i = 0; i < a->dst[0]->nelem; i++) {
		double v = x[i];

		y[i] = (float)(0.5 * v *
		               (1.0 + tanh(sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))));
	}
	return XO_OK;
}

/* tanh bwd that takes its src for x (dy (1 - tanh(s)^2)), not for y. */
static enum xo_status tanh_bwd_from_x(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *s = xo_tensor_f32(a->src[0]), *dy = xo_tensor_f32(a->src[1]);
	float *dx = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t i = 0; i < a->dst[0]->nelem; i++) {
		double t = tanh((double)s[i]);

		dx[i] = (float)((double)dy[i] * (1.0 - t * t));
	}
	return XO_OK;
}

/* elu fwd 20 ulps off everywhere: more than its bound of 7 allows. */
static enum xo_status elu_fwd_20ulp(struct xo_backend *be, const struct xo_op_args *a)
{
	enum xo_status st = xo_ref_iface.fwd[XO_OP_elu](be, a);
	float *y = xo_tensor_f32(a->dst[0]);

	for (int64_t i = 0; i < a->dst[0]->nelem; i++) {
		uint32_t u;

		memcpy(&u, &y[i], 4);
		u += 20;
		memcpy(&y[i], &u, 4);
	}
	return st;
}

/*
 * conv2d fwd, naive, linear activation, with one of two convention errors:
 * transposed reads the kernel as w[kw][kh][ch][f] (taps i and j swapped;
 * equal sizes on a square kernel, so only the values are wrong); ceil_left
 * splits a same padding on the width with the larger half on the left
 * (Keras puts the smaller half there).
 */
static enum xo_status conv2d_fwd_naive(const struct xo_op_args *a, bool transposed,
				       bool ceil_left)
{
	const struct xo_params *p = &a->p;
	struct xo_params q = xo_params_width_axis(p);
	const float *x = xo_tensor_f32(a->src[0]), *w = xo_tensor_f32(a->src[1]);
	const float *b = p->use_bias ? xo_tensor_f32(a->src[2]) : NULL;
	float *y = xo_tensor_f32(a->dst[0]);
	int64_t oh, ow, pt, pl, kh = p->kernel_size, kw = q.kernel_size;
	int64_t sh = xo_conv1d_stride(p), sw = xo_conv1d_stride(&q);
	int64_t dh = p->dilation_rate, dw = q.dilation_rate;
	enum xo_status st = xo_conv2d_geometry(p, &oh, &ow, &pt, &pl);

	if (st)
		return st;
	if (ceil_left && p->padding == XO_PADDING_SAME) {
		int64_t total = (ow - 1) * sw + (kw - 1) * dw + 1 - p->width;

		pl = total > 0 ? total - total / 2 : 0;
	}
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t r = 0; r < oh; r++)
			for (int64_t c = 0; c < ow; c++)
				for (int64_t f = 0; f < p->filters; f++) {
					double acc = b ? b[f] : 0.0;

					for (int64_t i = 0; i < kh; i++)
						for (int64_t j = 0; j < kw; j++) {
							int64_t xr = r * sh + i * dh - pt;
							int64_t xc = c * sw + j * dw - pl;
							int64_t tap = transposed ? j * kh + i : i * kw + j;

							if (xr < 0 || xr >= p->len || xc < 0 ||
							    xc >= p->width)
								continue;
							for (int64_t ci = 0; ci < p->ch; ci++)
								acc += (double)x[((n * p->len + xr) *
										      p->width +
										  xc) *
										     p->ch +
										 ci] *
								       w[(tap * p->ch + ci) *
									     p->filters +
									 f];
						}
					y[((n * oh + r) * ow + c) * p->filters + f] = (float)acc;
				}
	return XO_OK;
}

static enum xo_status conv2d_fwd_transposed(struct xo_backend *be, const struct xo_op_args *a)
{
	(void)be;
	return conv2d_fwd_naive(a, true, false);
}

static enum xo_status conv2d_fwd_same_ceil_left(struct xo_backend *be,
						const struct xo_op_args *a)
{
	(void)be;
	return conv2d_fwd_naive(a, false, true);
}

/* conv1d bwd that never writes one element of dw. */
static enum xo_status conv1d_bwd_skip_one(struct xo_backend *be, const struct xo_op_args *a)
{
	float *dw = xo_tensor_f32(a->dst[1]), keep = dw[1];
	enum xo_status st = xo_ref_iface.bwd[XO_OP_conv1d](be, a);

	dw[1] = keep;
	return st;
}

/* dense bwd whose dw is 2^-12 relative off: small, but far beyond the
 * accumulation bound of a short sum. */
static enum xo_status dense_bwd_dw_off(struct xo_backend *be, const struct xo_op_args *a)
{
	enum xo_status st = xo_ref_iface.bwd[XO_OP_dense](be, a);
	float *dw = xo_tensor_f32(a->dst[1]);

	for (int64_t i = 0; i < a->dst[1]->nelem; i++)
		dw[i] *= 1.0f + 0x1p-12f;
	return st;
}

/* max_pooling1d fwd (valid) with fmaxf from -Inf: a NaN is dropped instead of
 * propagating from the window's first element. */
static enum xo_status pool_fwd_drops_nan(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]);
	float *y = xo_tensor_f32(a->dst[0]);
	int64_t s = xo_pool1d_stride(p), out = (p->len - p->pool_size) / s + 1;

	(void)be;
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t o = 0; o < out; o++)
			for (int64_t c = 0; c < p->ch; c++) {
				float best = -INFINITY;

				for (int64_t j = o * s; j < o * s + p->pool_size; j++)
					best = fmaxf(best, x[(n * p->len + j) * p->ch + c]);
				y[(n * out + o) * p->ch + c] = best;
			}
	return XO_OK;
}

/* max_pooling1d fwd by `v > best` from the window's first step: a NaN first
 * step stays, a later one is dropped (Keras gives NaN for both). */
static enum xo_status pool_fwd_first_nan_only(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]);
	float *y = xo_tensor_f32(a->dst[0]);
	int64_t s = xo_pool1d_stride(p), out = (p->len - p->pool_size) / s + 1;

	(void)be;
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t o = 0; o < out; o++)
			for (int64_t c = 0; c < p->ch; c++) {
				const float *w = x + (n * p->len + o * s) * p->ch + c;
				float best = w[0];

				for (int64_t j = 1; j < p->pool_size; j++)
					best = w[j * p->ch] > best ? w[j * p->ch] : best;
				y[(n * out + o) * p->ch + c] = best;
			}
	return XO_OK;
}

/* merge fwd whose maximum is a > b ? a : b: NaN in a gives b (jnp.maximum
 * gives NaN); the other modes as ref. */
static enum xo_status merge_fwd_max_drops_nan(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]), *z = xo_tensor_f32(a->src[1]);
	float *y = xo_tensor_f32(a->dst[0]);

	if (a->p.mode != XO_MERGE_MAXIMUM)
		return xo_ref_iface.fwd[XO_OP_merge](be, a);
	for (int64_t k = 0; k < a->p.batch * a->p.len * a->p.ch; k++)
		y[k] = x[k] > z[k] ? x[k] : z[k];
	return XO_OK;
}

/* flatten fwd that scribbles over its source. */
static enum xo_status flatten_fwd_writes_src(struct xo_backend *be, const struct xo_op_args *a)
{
	enum xo_status st = xo_ref_iface.fwd[XO_OP_flatten](be, a);

	xo_tensor_f32(a->src[0])[0] += 1.0f;
	return st;
}

/* pad fwd with the margins of each axis swapped (begin for end): the
 * output has the right shape, the values sit in the wrong place. */
static enum xo_status pad_fwd_margins_swapped(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_op_args b = *a;

	b.p.pad_begin = a->p.pad_end;
	b.p.pad_end = a->p.pad_begin;
	b.p.pad_begin_w = a->p.pad_end_w;
	b.p.pad_end_w = a->p.pad_begin_w;
	return xo_ref_iface.fwd[XO_OP_pad](be, &b);
}

/* up_sampling bwd that keeps only the first of the repeated gradients
 * (the copy's gradient, not the sum). */
static enum xo_status up_sampling_bwd_first_only(struct xo_backend *be,
						 const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *dy = xo_tensor_f32(a->src[0]);
	float *dx = xo_tensor_f32(a->dst[0]);
	int64_t oh = p->len * p->repeats, ow = p->width * p->repeats_w;

	(void)be;
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t i = 0; i < p->len; i++)
			for (int64_t j = 0; j < p->width; j++)
				for (int64_t c = 0; c < p->ch; c++)
					dx[((n * p->len + i) * p->width + j) * p->ch + c] =
					    dy[((n * oh + i * p->repeats) * ow + j * p->repeats_w) *
						   p->ch +
					       c];
	return XO_OK;
}

/* permute bwd that forgets to move: dx = dy's bytes as they are (right size,
 * values in the wrong places for any order but the identity). */
static enum xo_status permute_bwd_no_move(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *dy = xo_tensor_f32(a->src[0]);
	float *dx = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t k = 0; k < p->batch * p->len * p->width * p->ch; k++)
		dx[k] = dy[k];
	return XO_OK;
}

/* flip fwd that reverses the batch's rows as one sequence, not each
 * sample's steps: right for one sample, the samples swapped for more. */
static enum xo_status flip_fwd_across_batch(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]);
	float *y = xo_tensor_f32(a->dst[0]);
	int64_t rows = p->batch * p->len;

	(void)be;
	for (int64_t r = 0; r < rows; r++)
		for (int64_t c = 0; c < p->ch; c++)
			y[r * p->ch + c] = x[(rows - 1 - r) * p->ch + c];
	return XO_OK;
}

/* rescaling fwd that adds the offset before scaling, (x + offset) * multiplier,
 * not Keras's x * scale + offset: right only for offset 0 or multiplier 1. */
static enum xo_status rescaling_fwd_offset_first(struct xo_backend *be,
						  const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]);
	float *y = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t i = 0; i < a->dst[0]->nelem; i++)
		y[i] = (x[i] + a->p.offset) * a->p.multiplier;
	return XO_OK;
}

/* normalization fwd that divides by sqrt(variance + 1e-7), the epsilon
 * where BatchNormalization puts it, not Keras's max(sqrt(variance), 1e-7):
 * wrong wherever the variance is small (the fill's variance-0 channels
 * give 1/sqrt(1e-7) in place of 1e7). */
static enum xo_status normalization_fwd_eps_inside(struct xo_backend *be,
						   const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]), *m = xo_tensor_f32(a->src[1]);
	const float *v = xo_tensor_f32(a->src[2]);
	float *y = xo_tensor_f32(a->dst[0]);
	int64_t ch = a->p.ch;

	(void)be;
	for (int64_t i = 0; i < a->dst[0]->nelem; i++)
		y[i] = (x[i] - m[i % ch]) / sqrtf(v[i % ch] + 1e-7f);
	return XO_OK;
}

/* normalization fwd with invert=1 as the forward's algebraic inverse
 * mean + x * sqrt(variance), without Keras's floor max(., 1e-7f): wrong on
 * the variance-0 channels (the fill's means 0 there give 0 for x * 1e-7f). */
static enum xo_status normalization_fwd_invert_no_floor(struct xo_backend *be,
							const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]), *m = xo_tensor_f32(a->src[1]);
	const float *v = xo_tensor_f32(a->src[2]);
	float *y = xo_tensor_f32(a->dst[0]);
	int64_t ch = a->p.ch;

	(void)be;
	for (int64_t i = 0; i < a->dst[0]->nelem; i++)
		y[i] = m[i % ch] + x[i] * sqrtf(v[i % ch]);
	return XO_OK;
}

/* merge bwd of maximum that gives a tie's whole gradient to a (TensorFlow's
 * rule, not the halves JAX's Keras computes): wrong at every tie. */
static enum xo_status merge_bwd_tie_to_a(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]), *y = xo_tensor_f32(a->src[1]);
	const float *dy = xo_tensor_f32(a->src[2]);
	float *da = xo_tensor_f32(a->dst[0]), *db = xo_tensor_f32(a->dst[1]);

	(void)be;
	for (int64_t k = 0; k < p->batch * p->len * p->ch; k++) {
		da[k] = x[k] >= y[k] ? dy[k] : 0.0f;
		db[k] = x[k] >= y[k] ? 0.0f : dy[k];
	}
	return XO_OK;
}

/* merge fwd of masked multiply that reads a masked step as 1 but does not
 * zero the output where both inputs are masked (1 there, not Keras's 0). */
static enum xo_status merge_fwd_mask_no_zero(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]), *z = xo_tensor_f32(a->src[1]);
	const int32_t *ids = xo_tensor_i32(a->src[2]);
	float *y = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t k = 0; k < p->batch * p->len * p->ch; k++) {
		bool kept = ids[k / p->ch] != 0;

		y[k] = (!p->mask_a || kept ? x[k] : 1.0f) * (!p->mask_b || kept ? z[k] : 1.0f);
	}
	return XO_OK;
}

/* merge bwd that ignores Keras's mask (the unmasked op's gradient at the
 * raw inputs): wrong wherever a step is masked. */
static enum xo_status merge_bwd_mask_ignored(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_op_args b = *a;

	b.p.mask_a = b.p.mask_b = false;
	b.src[3] = NULL;
	return xo_ref_iface.bwd[XO_OP_merge](be, &b);
}

/* categorical_crossentropy bwd as (p - t) / batch, without Keras's clip: a
 * row whose true class is clipped (below 1e-7 or above 1 - 1e-7) still
 * passes its gradient, and a row at a bound passes it whole where JAX's clip
 * passes half (the fill's clip rows, harness_fill.c). */
static enum xo_status ce_bwd_no_clip(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *p = xo_tensor_f32(a->src[0]), *t = xo_tensor_f32(a->src[1]);
	float *dz = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t k = 0; k < a->p.batch * a->p.ch; k++)
		dz[k] = (float)(((double)p[k] - (double)t[k]) / (double)a->p.batch);
	return XO_OK;
}

/* binary_crossentropy bwd passing the whole gradient at a clip bound (p ==
 * 1e-7f or (float)(1 - 1e-7)), where JAX's clip passes half. */
static enum xo_status bce_bwd_whole_at_bound(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *p = xo_tensor_f32(a->src[0]), *t = xo_tensor_f32(a->src[1]);
	float *dp = xo_tensor_f32(a->dst[0]);
	int64_t total = a->p.batch * a->p.ch;

	(void)be;
	for (int64_t k = 0; k < total; k++) {
		double q = p[k], tk = t[k];

		dp[k] = q >= (double)1e-7f && q <= (double)(float)(1.0 - 1e-7)
		            ? (float)((-tk / q + (1.0 - tk) / (1.0 - q)) / (double)total)
		        : q != q ? p[k]
		                 : 0.0f;
	}
	return XO_OK;
}

/* categorical_crossentropy bwd from logits as (softmax(x) - t) / batch:
 * right for a one-hot row, wrong for a soft row whose targets do not sum to
 * 1 (the gradient is softmax(x) T - t; the fill's every third row). */
static enum xo_status ce_logits_bwd_no_target_sum(struct xo_backend *be,
						  const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]), *t = xo_tensor_f32(a->src[1]);
	float *dz = xo_tensor_f32(a->dst[0]);
	int64_t ch = a->p.ch;

	(void)be;
	for (int64_t r = 0; r < a->p.batch; r++) {
		double m = x[r * ch], s = 0.0;

		for (int64_t c = 1; c < ch; c++)
			m = x[r * ch + c] > m ? x[r * ch + c] : m;
		for (int64_t c = 0; c < ch; c++)
			s += exp((double)x[r * ch + c] - m);
		for (int64_t c = 0; c < ch; c++)
			dz[r * ch + c] = (float)((exp((double)x[r * ch + c] - m) / s -
			                          (double)t[r * ch + c]) /
			                         (double)a->p.batch);
	}
	return XO_OK;
}

/* binary_crossentropy bwd from logits divided by the batch only, not by
 * batch * ch (Keras's mean over the last axis dropped). */
static enum xo_status bce_logits_bwd_batch_mean(struct xo_backend *be,
						const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]), *t = xo_tensor_f32(a->src[1]);
	float *dp = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t k = 0; k < a->p.batch * a->p.ch; k++)
		dp[k] = (float)((1.0 / (1.0 + exp(-(double)x[k])) - (double)t[k]) /
		                (double)a->p.batch);
	return XO_OK;
}

/* depthwise_conv2d fwd writing its outputs multiplier-major (o = m*ch + c)
 * where Keras orders them channel-major (o = c*dm + m): the right values in
 * the wrong channels whenever ch > 1 and dm > 1. */
static enum xo_status dwconv_fwd_multiplier_major(struct xo_backend *be,
						  const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	int64_t ch = p->ch, dm = p->depth_multiplier, co = ch * dm;
	enum xo_status st = xo_ref_iface.fwd[XO_OP_depthwise_conv2d](be, a);
	float *y = xo_tensor_f32(a->dst[0]), row[64];

	XO_ASSERT(co <= 64);
	for (int64_t r = 0; !st && r < a->dst[0]->nelem / co; r++) {
		memcpy(row, y + r * co, (size_t)co * sizeof(float));
		for (int64_t c = 0; c < ch; c++)
			for (int64_t m = 0; m < dm; m++)
				y[r * co + m * ch + c] = row[c * dm + m];
	}
	return st;
}

/* depthwise_conv2d bwd whose dw drops the last sample's terms: dw as the
 * reference's on the first batch - 1 samples (a per-thread partial sum
 * left out). */
static enum xo_status dwconv_bwd_drops_last_sample(struct xo_backend *be,
						   const struct xo_op_args *a)
{
	struct xo_op_args b = *a;
	int64_t n = a->p.batch, per_x = a->src[0]->nelem / n;
	float *dx = a->dst[0] ? xo_tensor_f32(a->dst[0]) : NULL;
	enum xo_status st;

	/* the reference on the first n - 1 samples: dw and db from them;
	 * dx of the last sample written as zeros */
	b.p.batch = n - 1;
	st = xo_ref_iface.bwd[XO_OP_depthwise_conv2d](be, &b);
	if (dx)
		memset(dx + (n - 1) * per_x, 0, (size_t)per_x * sizeof(float));
	return st;
}

/* Reverses the taps of a conv2d_transpose kernel [kh][kw][filters][ch] in
 * place (tap (i, j) swapped with (kh-1-i, kw-1-j)); its own inverse. */
static void convt_flip_taps(float *w, int64_t taps, int64_t per_tap)
{
	for (int64_t t = 0; t < taps / 2; t++)
		for (int64_t e = 0; e < per_tap; e++) {
			float v = w[t * per_tap + e];

			w[t * per_tap + e] = w[(taps - 1 - t) * per_tap + e];
			w[(taps - 1 - t) * per_tap + e] = v;
		}
}

/* conv2d_transpose fwd with the kernel flipped (the correlation a
 * dilate-and-pad formulation computes when it forgets the flip): the
 * reference on the tap-reversed kernel, restored after. */
static enum xo_status convt_fwd_flipped_kernel(struct xo_backend *be, const struct xo_op_args *a)
{
	float *w = xo_tensor_f32(a->src[1]);
	int64_t per_tap = a->p.filters * a->p.ch, taps = a->src[1]->nelem / per_tap;
	enum xo_status st;

	convt_flip_taps(w, taps, per_tap);
	st = xo_ref_iface.fwd[XO_OP_conv2d_transpose](be, a);
	convt_flip_taps(w, taps, per_tap);
	return st;
}

/* Reads each tap's [filters][ch] block of w as conv2d's [ch][filters] (a
 * kernel layout mix-up), in place; inverse true undoes it. */
static void convt_swap_layout(float *w, int64_t taps, int64_t f, int64_t ch, bool inverse)
{
	float blk[64];

	XO_ASSERT(f * ch <= 64);
	for (int64_t t = 0; t < taps; t++) {
		float *b = w + t * f * ch;

		memcpy(blk, b, (size_t)(f * ch) * sizeof(float));
		for (int64_t o = 0; o < f; o++)
			for (int64_t c = 0; c < ch; c++) {
				if (inverse)
					b[c * f + o] = blk[o * ch + c];
				else
					b[o * ch + c] = blk[c * f + o];
			}
	}
}

/* conv2d_transpose bwd whose dx reads the kernel in conv2d's layout
 * [kh][kw][ch][filters] (dw, db right: they do not read w). */
static enum xo_status convt_bwd_conv2d_layout(struct xo_backend *be, const struct xo_op_args *a)
{
	float *w = xo_tensor_f32(a->src[1]);
	int64_t f = a->p.filters, ch = a->p.ch, taps = a->src[1]->nelem / (f * ch);
	enum xo_status st;

	convt_swap_layout(w, taps, f, ch, false);
	st = xo_ref_iface.bwd[XO_OP_conv2d_transpose](be, a);
	convt_swap_layout(w, taps, f, ch, true);
	return st;
}

/* embedding fwd reading the row after the id's (row offset by one, wrapping
 * at the end of the table). */
static enum xo_status embedding_fwd_row_off_by_one(struct xo_backend *be,
						   const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const int32_t *ids = xo_tensor_i32(a->src[0]);
	const float *table = xo_tensor_f32(a->src[1]);
	float *y = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t i = 0; i < p->batch * p->len; i++)
		for (int64_t c = 0; c < p->ch; c++)
			y[i * p->ch + c] = table[((ids[i] + 1) % p->rows) * p->ch + c];
	return XO_OK;
}

/* embedding bwd storing each dy row over its table row instead of adding:
 * a duplicated id keeps only its last position's gradient. */
static enum xo_status embedding_bwd_overwrite(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const int32_t *ids = xo_tensor_i32(a->src[0]);
	const float *dy = xo_tensor_f32(a->src[1]);
	float *dt = xo_tensor_f32(a->dst[0]);

	(void)be;
	memset(dt, 0, (size_t)(p->rows * p->ch) * sizeof(float));
	for (int64_t i = 0; i < p->batch * p->len; i++)
		for (int64_t c = 0; c < p->ch; c++)
			dt[ids[i] * p->ch + c] = dy[i * p->ch + c];
	return XO_OK;
}

/* gather fwd that reports a failure. */
static enum xo_status gather_fwd_fails(struct xo_backend *be, const struct xo_op_args *a)
{
	(void)be;
	(void)a;
	return xo_error(XO_ERESOURCE, "fault: injected failure");
}

/* batch_normalization fwd (training) normalising with the unbiased variance
 * (sum (x - mean)^2 / (N - 1), Bessel's correction, which Keras does not
 * apply) and updating the moving variance with it. */
static enum xo_status bn_fwd_unbiased(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]);
	const float *g = a->src[1] ? xo_tensor_f32(a->src[1]) : NULL;
	const float *b = a->src[2] ? xo_tensor_f32(a->src[2]) : NULL;
	float *y = xo_tensor_f32(a->dst[0]), *mm = xo_tensor_f32(a->dst[1]);
	float *mv = xo_tensor_f32(a->dst[2]);
	int64_t rows = p->batch * p->len;

	(void)be;
	for (int64_t c = 0; c < p->ch; c++) {
		double mean = 0.0, var = 0.0, r;

		for (int64_t k = 0; k < rows; k++)
			mean += x[k * p->ch + c];
		mean /= (double)rows;
		for (int64_t k = 0; k < rows; k++)
			var += (x[k * p->ch + c] - mean) * (x[k * p->ch + c] - mean);
		var /= (double)(rows - 1);
		r = 1.0 / sqrt(var + p->epsilon);
		for (int64_t k = 0; k < rows; k++)
			y[k * p->ch + c] = (float)((g ? g[c] : 1.0) * (x[k * p->ch + c] - mean) * r +
						   (b ? b[c] : 0.0));
		mm[c] = (float)(mm[c] * p->momentum + mean * (1.0 - p->momentum));
		mv[c] = (float)(mv[c] * p->momentum + var * (1.0 - p->momentum));
	}
	return XO_OK;
}

/* batch_normalization fwd (training) that never updates the moving
 * statistics: y is right, the state keeps its old values. */
static enum xo_status bn_fwd_state_frozen(struct xo_backend *be, const struct xo_op_args *a)
{
	int64_t ch = a->p.ch;
	float *mm = xo_tensor_f32(a->dst[1]), *mv = xo_tensor_f32(a->dst[2]);
	float *keep = malloc(sizeof(float) * (size_t)ch * 2);
	enum xo_status st;

	if (!keep)
		return xo_error(XO_ENOMEM, "fault: out of memory");
	memcpy(keep, mm, sizeof(float) * (size_t)ch);
	memcpy(keep + ch, mv, sizeof(float) * (size_t)ch);
	st = xo_ref_iface.fwd[XO_OP_batch_normalization](be, a);
	memcpy(mm, keep, sizeof(float) * (size_t)ch);
	memcpy(mv, keep + ch, sizeof(float) * (size_t)ch);
	free(keep);
	return st;
}

/* batch_normalization fwd in inference that normalises with the batch's
 * statistics (and so updates the state) instead of the moving ones. */
static enum xo_status bn_fwd_infer_batch_stats(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_op_args b = *a;

	b.p.training = true;
	return xo_ref_iface.fwd[XO_OP_batch_normalization](be, &b);
}

/* layer_normalization fwd normalising each row with the unbiased variance
 * (sum (x - mean)^2 / (ch - 1), which Keras does not apply). */
static enum xo_status ln_fwd_unbiased(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]);
	const float *g = a->src[1] ? xo_tensor_f32(a->src[1]) : NULL;
	const float *b = a->src[2] ? xo_tensor_f32(a->src[2]) : NULL;
	float *y = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t k = 0; k < p->batch * p->len; k++) {
		const float *xr = x + k * p->ch;
		double mean = 0.0, var = 0.0, r;

		for (int64_t c = 0; c < p->ch; c++)
			mean += xr[c];
		mean /= (double)p->ch;
		for (int64_t c = 0; c < p->ch; c++)
			var += (xr[c] - mean) * (xr[c] - mean);
		r = 1.0 / sqrt(var / (double)(p->ch - 1) + p->epsilon);
		for (int64_t c = 0; c < p->ch; c++)
			y[k * p->ch + c] =
			    (float)((g ? g[c] : 1.0) * (xr[c] - mean) * r + (b ? b[c] : 0.0));
	}
	return XO_OK;
}

/* layer_normalization bwd whose dx drops the third term of its three-term
 * form (- xhat sum gamma dy xhat): dgamma and dbeta are right. */
static enum xo_status ln_bwd_drops_xhat_term(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]), *dy = xo_tensor_f32(a->src[2]);
	const float *g = a->src[1] ? xo_tensor_f32(a->src[1]) : NULL;
	float *dx = xo_tensor_f32(a->dst[0]);
	enum xo_status st = xo_ref_iface.bwd[XO_OP_layer_normalization](be, a);

	for (int64_t k = 0; st == XO_OK && k < p->batch * p->len; k++) {
		const float *xr = x + k * p->ch, *dr = dy + k * p->ch;
		double mean = 0.0, var = 0.0, sg = 0.0, r, n = (double)p->ch;

		for (int64_t c = 0; c < p->ch; c++)
			mean += xr[c];
		mean /= n;
		for (int64_t c = 0; c < p->ch; c++) {
			var += (xr[c] - mean) * (xr[c] - mean);
			sg += (g ? g[c] : 1.0) * dr[c];
		}
		r = 1.0 / sqrt(var / n + p->epsilon);
		for (int64_t c = 0; c < p->ch; c++)
			dx[k * p->ch + c] = (float)(r / n * (n * (g ? g[c] : 1.0) * dr[c] - sg));
	}
	return st;
}

/* ---- the recurrent ops' faults (sources changed in place around ref's
 * kernel and put back before returning: the harness reads them back) ------- */

/* swaps column blocks a and b (u columns each) of every row of m[rows][cols] */
static void swap_blocks(float *m, int64_t rows, int64_t cols, int64_t u, int64_t a, int64_t b)
{
	for (int64_t r = 0; r < rows; r++)
		for (int64_t k = 0; k < u; k++) {
			float t = m[r * cols + a * u + k];

			m[r * cols + a * u + k] = m[r * cols + b * u + k];
			m[r * cols + b * u + k] = t;
		}
}

/* lstm fwd with the gate order f, i, c, o (the first two of Keras's i, f,
 * c, o swapped in kernel, recurrent_kernel and bias). */
static enum xo_status lstm_fwd_gates_swapped(struct xo_backend *be, const struct xo_op_args *a)
{
	int64_t u = a->p.units, G = 4 * u;
	float *w = (float *)xo_tensor_f32(a->src[1]), *r = (float *)xo_tensor_f32(a->src[2]);
	float *b = a->src[3] ? (float *)xo_tensor_f32(a->src[3]) : NULL;
	enum xo_status st = XO_OK;

	for (int pass = 0; pass < 2; pass++) {
		swap_blocks(w, a->p.ch, G, u, 0, 1);
		swap_blocks(r, u, G, u, 0, 1);
		if (b)
			swap_blocks(b, 1, G, u, 0, 1);
		if (pass == 0)
			st = xo_ref_iface.fwd[XO_OP_lstm](be, a);
	}
	return st;
}

/* gru fwd reading each gate's block of recurrent_kernel transposed
 * (U[j][k] for U[k][j]). */
static enum xo_status gru_fwd_recurrent_transposed(struct xo_backend *be,
						   const struct xo_op_args *a)
{
	int64_t u = a->p.units, G = 3 * u;
	float *r = (float *)xo_tensor_f32(a->src[2]);
	enum xo_status st = XO_OK;

	for (int pass = 0; pass < 2; pass++) {
		for (int64_t g = 0; g < 3; g++)
			for (int64_t k = 0; k < u; k++)
				for (int64_t j = k + 1; j < u; j++) {
					float t = r[k * G + g * u + j];

					r[k * G + g * u + j] = r[j * G + g * u + k];
					r[j * G + g * u + k] = t;
				}
		if (pass == 0)
			st = xo_ref_iface.fwd[XO_OP_gru](be, a);
	}
	return st;
}

/* simple_rnn fwd (tanh) that skips step 1: its state stays the state of
 * step 0 (its input never read). */
static enum xo_status simple_rnn_fwd_step_skipped(struct xo_backend *be,
						  const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]), *w = xo_tensor_f32(a->src[1]);
	const float *r = xo_tensor_f32(a->src[2]);
	const float *b = a->src[3] ? xo_tensor_f32(a->src[3]) : NULL;
	float *y = xo_tensor_f32(a->dst[0]), *ws = xo_tensor_f32(a->dst[1]);
	int64_t u = p->units, T = p->len;

	(void)be;
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t s = 0; s < T; s++) {
			int64_t t = p->go_backwards ? T - 1 - s : s;
			float *row = ws + (n * T + s) * u;

			for (int64_t j = 0; j < u; j++) {
				double v = b ? b[j] : 0.0;

				if (s == 1) {
					row[j] = row[j - u];
					continue;
				}
				for (int64_t i = 0; i < p->ch; i++)
					v += (double)x[(n * T + t) * p->ch + i] * w[i * u + j];
				for (int64_t k = 0; s > 0 && k < u; k++)
					v += (double)row[k - u] * r[k * u + j];
				row[j] = (float)tanh(v);
			}
			if (p->return_sequences || s == T - 1)
				memcpy(y + (p->return_sequences ? (n * T + s) * u : n * u), row,
				       (size_t)u * sizeof(float));
		}
	return XO_OK;
}

/* lstm bwd reading every forget gate as 0: no cell gradient carried to the
 * step before (dc' = dcc f = 0), and none for the forget gate itself. */
static enum xo_status lstm_bwd_no_cell_carry(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	int64_t u = p->units, S = 7 * u, rows = p->batch * p->len;
	float *ws = (float *)xo_tensor_f32(a->src[3]);
	float *keep = malloc(sizeof(float) * (size_t)(rows * u));
	enum xo_status st;

	if (!keep)
		return xo_error(XO_ENOMEM, "fault: out of memory");
	for (int64_t r = 0; r < rows; r++)
		for (int64_t k = 0; k < u; k++) {
			keep[r * u + k] = ws[r * S + u + k];
			ws[r * S + u + k] = 0.0f;
		}
	st = xo_ref_iface.bwd[XO_OP_lstm](be, a);
	for (int64_t r = 0; r < rows; r++)
		for (int64_t k = 0; k < u; k++)
			ws[r * S + u + k] = keep[r * u + k];
	free(keep);
	return st;
}

/* ---- cases and the check ------------------------------------------------------ */

/* global_average_pooling1d fwd with mask_zero that forgets the mask: every
 * step averaged, as the unmasked op. */
static enum xo_status gap_fwd_mask_ignored(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_op_args b = *a;

	b.p.mask_zero = false;
	b.src[1] = NULL;
	return xo_ref_iface.fwd[XO_OP_global_average_pooling1d](be, &b);
}

struct fault {
	const char *name; /* fake backend name, shown in reports */
	enum xo_op op;
	enum xo_dir dir;
	xo_op_fn fn; /* replaces the table entry */
	enum xo_hmode mode;
	const char *params;  /* case parameters */
	enum xo_fail expect; /* the reason the harness must give */
};

/* relu6 bwd that passes dy at the kinks x = 0 and x = 6 (a closed interval
 * where Keras's JAX backend takes the derivative 0). */
static enum xo_status relu6_bwd_closed(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]), *dy = xo_tensor_f32(a->src[1]);
	float *dx = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t i = 0; i < a->dst[0]->nelem; i++)
		dx[i] = x[i] >= 0.0f && x[i] <= 6.0f ? dy[i] : 0.0f;
	return XO_OK;
}

/* leaky_relu bwd that takes the slope at the kink x = 0 (x > 0 for the
 * identity branch), where Keras's JAX select gives the derivative 1. */
static enum xo_status leaky_relu_bwd_kink_slope(struct xo_backend *be,
						const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]), *dy = xo_tensor_f32(a->src[1]);
	float *dx = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t i = 0; i < a->dst[0]->nelem; i++)
		dx[i] = x[i] > 0.0f ? dy[i] : a->p.negative_slope * dy[i];
	return XO_OK;
}

/* elu fwd that ignores alpha (expm1(x) on the negative side, the activation
 * string's alpha 1): wrong for every ELU layer with an alpha of its own. */
static enum xo_status elu_fwd_alpha_one(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]);
	float *y = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t i = 0; i < a->dst[0]->nelem; i++)
		y[i] = x[i] > 0.0f ? x[i] : expm1f(x[i]);
	return XO_OK;
}

/* elu bwd taken from y as it once was, dy where y > 0, else dy (y + alpha),
 * y recomputed from x: right for alpha >= 0, wrong under a negative alpha,
 * whose y is > 0 on the negative side too (ops.def). */
static enum xo_status elu_bwd_from_y(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]), *dy = xo_tensor_f32(a->src[1]);
	float *dx = xo_tensor_f32(a->dst[0]), alpha = a->p.alpha;

	(void)be;
	for (int64_t i = 0; i < a->dst[0]->nelem; i++) {
		float y = x[i] > 0.0f ? x[i] : alpha * expm1f(x[i]);

		dx[i] = y > 0.0f ? dy[i] : dy[i] * (y + alpha);
	}
	return XO_OK;
}

/* hard_sigmoid fwd in Keras 2's form, clip(0.2 x + 0.5, 0, 1), not Keras 3's
 * relu6(x + 3) / 6: the slopes differ (0.2 against 1/6). */
static enum xo_status hard_sigmoid_fwd_keras2(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]);
	float *y = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t i = 0; i < a->dst[0]->nelem; i++)
		y[i] = fminf(fmaxf(0.2f * x[i] + 0.5f, 0.0f), 1.0f);
	return XO_OK;
}

/* silu bwd without the x s (1 - s) term (dy sigmoid(x), the derivative as
 * if sigmoid(x) were a constant factor). */
static enum xo_status silu_bwd_no_x_term(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]), *dy = xo_tensor_f32(a->src[1]);
	float *dx = xo_tensor_f32(a->dst[0]);

	(void)be;
	for (int64_t i = 0; i < a->dst[0]->nelem; i++)
		dx[i] = (float)(dy[i] / (1.0 + exp(-(double)x[i])));
	return XO_OK;
}

/* log_softmax fwd that subtracts the row's sum of exp(x), not its log. */
static enum xo_status log_softmax_fwd_no_log(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *x = xo_tensor_f32(a->src[0]);
	float *y = xo_tensor_f32(a->dst[0]);
	int64_t n = a->p.ch;

	(void)be;
	for (int64_t r = 0; r < a->dst[0]->nelem / n; r++) {
		double s = 0.0;

		for (int64_t j = 0; j < n; j++)
			s += exp((double)x[r * n + j]);
		for (int64_t j = 0; j < n; j++)
			y[r * n + j] = (float)(x[r * n + j] - s);
	}
	return XO_OK;
}

/* attention fwd whose causal mask lets row i see key i + 1 too (the
 * mask's bound off by one: j <= i + 1), in double: wrong in every causal
 * row but the last ones. */
static enum xo_status attention_fwd_mask_off_by_one(struct xo_backend *be,
                                                    const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *q = xo_tensor_f32(a->src[0]), *k = xo_tensor_f32(a->src[1]);
	const float *v = xo_tensor_f32(a->src[2]);
	float *o = xo_tensor_f32(a->dst[0]);
	int64_t tk = xo_attention_len_kv(p), h = p->heads, dk = p->key_dim;
	int64_t dv = xo_attention_value_dim(p);
	double s[64];

	(void)be;
	XO_ASSERT(tk <= 64);
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t i = 0; i < p->len; i++)
			for (int64_t hd = 0; hd < h; hd++) {
				int64_t nk = p->causal && i + 2 < tk ? i + 2 : tk, r = (n * p->len + i) * h + hd;
				double m = -INFINITY, l = 0.0;

				for (int64_t j = 0; j < nk; j++) {
					s[j] = 0.0;
					for (int64_t c = 0; c < dk; c++)
						s[j] += (double)q[r * dk + c] *
						        k[((n * tk + j) * h + hd) * dk + c] / sqrt((double)dk);
					m = fmax(m, s[j]);
				}
				for (int64_t j = 0; j < nk; j++)
					l += (s[j] = exp(s[j] - m));
				for (int64_t e = 0; e < dv; e++) {
					double acc = 0.0;

					for (int64_t j = 0; j < nk; j++)
						acc += s[j] / l * v[((n * tk + j) * h + hd) * dv + e];
					o[r * dv + e] = (float)acc;
				}
			}
	return XO_OK;
}

/* attention bwd that ignores the mask source (reads attention_mask=1 as
 * 0): ref's own backward without it, wrong in every row that drops a key
 * and in the rows that keep none. */
static enum xo_status attention_bwd_mask_ignored(struct xo_backend *be,
                                                 const struct xo_op_args *a)
{
	struct xo_op_args b = *a;

	b.p.attention_mask = false;
	b.src[4] = NULL;
	return xo_ref_iface.bwd[XO_OP_attention](be, &b);
}

/* gru bwd that ignores the step mask (reads mask_zero=1 as 0): ref's own
 * backward without it, so a masked step's input and weight terms are not
 * 0 and the state gradient goes through its gates instead of past it. */
static enum xo_status gru_bwd_mask_ignored(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_op_args b = *a;

	b.p.mask_zero = false;
	b.src[5] = NULL;
	return xo_ref_iface.bwd[XO_OP_gru](be, &b);
}

/* lstm fwd with zero_output_for_mask read the other way: a masked step's
 * output the carried h where it must be 0 (or 0 where it must be h). */
static enum xo_status lstm_fwd_zero_output_flipped(struct xo_backend *be,
						   const struct xo_op_args *a)
{
	struct xo_op_args b = *a;

	b.p.zero_output_for_mask = !a->p.zero_output_for_mask;
	return xo_ref_iface.fwd[XO_OP_lstm](be, &b);
}

/* mask_outer fwd that reads the query's ids along the keys and the keys'
 * along the queries (the two flags swapped): ref's own, wrong wherever a
 * sample's ids drop a step. */
static enum xo_status mask_outer_fwd_axes_swapped(struct xo_backend *be,
                                                  const struct xo_op_args *a)
{
	struct xo_op_args b = *a;

	b.p.query_mask = a->p.value_mask;
	b.p.value_mask = a->p.query_mask;
	return xo_ref_iface.fwd[XO_OP_mask_outer](be, &b);
}

/* masking with a wrong keep rule: rule 0 decides by feature 0 alone (a
 * step equal to mask_value in feature 0 only is masked), rule 1 compares
 * the bits (-0 under mask_value 0 keeps), rule 2 ignores the mask backward
 * (dx = dy everywhere) */
static void masking_wrong(const struct xo_op_args *a, int rule, bool bwd)
{
	const struct xo_params *p = &a->p;
	const float *x = xo_tensor_f32(a->src[0]), *v = xo_tensor_f32(a->src[bwd ? 1 : 0]);
	float *d = xo_tensor_f32(a->dst[0]);
	int32_t *keep = bwd ? NULL : xo_tensor_i32(a->dst[1]);

	for (int64_t r = 0; r < p->batch * p->len; r++) {
		bool k = rule == 2;

		for (int64_t c = 0; c < p->ch && !k; c++) {
			float e = x[r * p->ch + c];

			k = rule == 1 ? memcmp(&e, &p->mask_value, 4) != 0 : e != p->mask_value;
			if (rule == 0)
				break;
		}
		if (keep)
			keep[r] = k;
		for (int64_t c = 0; c < p->ch; c++)
			d[r * p->ch + c] = k ? v[r * p->ch + c] : 0.0f;
	}
}

static enum xo_status masking_fwd_first_feature(struct xo_backend *be, const struct xo_op_args *a)
{
	(void)be;
	masking_wrong(a, 0, false);
	return XO_OK;
}

static enum xo_status masking_fwd_bits(struct xo_backend *be, const struct xo_op_args *a)
{
	(void)be;
	masking_wrong(a, 1, false);
	return XO_OK;
}

static enum xo_status masking_bwd_unmasked(struct xo_backend *be, const struct xo_op_args *a)
{
	(void)be;
	masking_wrong(a, 2, true);
	return XO_OK;
}

static const struct fault faults[] = {
    {"fault-dense-transposed", XO_OP_dense, XO_DIR_FWD, dense_fwd_transposed, XO_HMODE_EXACT,
     "batch=3 ch=5 units=4 activation=linear", XO_FAIL_MISMATCH},
    {"fault-conv-no-bias", XO_OP_conv1d, XO_DIR_FWD, conv1d_fwd_no_bias, XO_HMODE_EXACT,
     "batch=2 len=9 ch=2 filters=3 kernel_size=3 use_bias=1", XO_FAIL_MISMATCH},
    {"fault-conv-off-by-one", XO_OP_conv1d, XO_DIR_FWD, conv1d_fwd_off_by_one, XO_HMODE_REAL,
     "batch=2 len=9 ch=2 filters=3 kernel_size=3 use_bias=0", XO_FAIL_MISMATCH},
    {"fault-conv2d-kernel-transposed", XO_OP_conv2d, XO_DIR_FWD, conv2d_fwd_transposed,
     XO_HMODE_EXACT, "batch=2 len=6 width=5 ch=2 filters=3 kernel_size=3", XO_FAIL_MISMATCH},
    {"fault-conv2d-same-split-width", XO_OP_conv2d, XO_DIR_FWD, conv2d_fwd_same_ceil_left,
     XO_HMODE_EXACT, "batch=2 len=6 width=7 ch=2 filters=3 kernel_size=3 kernel_w=2 padding=same",
     XO_FAIL_MISMATCH},
    {"fault-pool-last-max", XO_OP_max_pooling1d, XO_DIR_BWD, pool_bwd_last_max, XO_HMODE_EXACT,
     "batch=4 len=12 ch=3 pool_size=3", XO_FAIL_MISMATCH},
    {"fault-avgpool-full-window", XO_OP_average_pooling1d, XO_DIR_FWD, avgpool_fwd_full_window,
     XO_HMODE_REAL, "batch=2 len=10 ch=3 pool_size=3 strides=1 padding=same", XO_FAIL_MISMATCH},
    {"fault-avgpool-2^-16", XO_OP_average_pooling1d, XO_DIR_FWD, avgpool_fwd_2_16, XO_HMODE_REAL,
     "batch=2 len=10 ch=3 pool_size=3 strides=1 padding=same", XO_FAIL_MISMATCH},
    {"fault-gmax-last-max", XO_OP_global_max_pooling1d, XO_DIR_BWD, gmax_bwd_last_max,
     XO_HMODE_EXACT, "batch=8 len=16 ch=8", XO_FAIL_MISMATCH},
    {"fault-avgpool2d-2^-16", XO_OP_average_pooling2d, XO_DIR_FWD, avgpool2d_fwd_2_16,
     XO_HMODE_REAL, "batch=2 len=6 width=7 ch=3 pool_size=2 strides=1 padding=same",
     XO_FAIL_MISMATCH},
    {"fault-maxpool2d-last-max", XO_OP_max_pooling2d, XO_DIR_BWD, maxpool2d_bwd_last_max,
     XO_HMODE_EXACT, "batch=2 len=6 width=7 ch=3 pool_size=2 pool_w=3 strides=1 padding=same",
     XO_FAIL_MISMATCH},
    {"fault-past-end", XO_OP_relu, XO_DIR_FWD, relu_fwd_past_end, XO_HMODE_EXACT,
     "batch=2 len=5 ch=3", XO_FAIL_GUARD},
    {"fault-before-start", XO_OP_relu, XO_DIR_FWD, relu_fwd_before_start, XO_HMODE_REAL,
     "batch=2 len=5 ch=3", XO_FAIL_GUARD},
    {"fault-nan", XO_OP_dense, XO_DIR_FWD, dense_fwd_nan, XO_HMODE_REAL,
     "batch=3 ch=7 units=5 activation=sigmoid", XO_FAIL_NONFINITE},
    {"fault-sigmoid-300ulp", XO_OP_sigmoid, XO_DIR_FWD, sigmoid_fwd_300ulp, XO_HMODE_REAL,
     "batch=2 len=3 ch=8", XO_FAIL_MISMATCH},
    {"fault-gelu-tanh-approx", XO_OP_gelu, XO_DIR_FWD, gelu_fwd_tanh_approx, XO_HMODE_REAL,
     "batch=2 len=3 ch=8", XO_FAIL_MISMATCH},
    {"fault-tanh-bwd-from-x", XO_OP_tanh, XO_DIR_BWD, tanh_bwd_from_x, XO_HMODE_REAL,
     "batch=2 len=3 ch=8", XO_FAIL_MISMATCH},
    {"fault-elu-20ulp", XO_OP_elu, XO_DIR_FWD, elu_fwd_20ulp, XO_HMODE_REAL,
     "batch=2 len=3 ch=8", XO_FAIL_MISMATCH},
    {"fault-unwritten", XO_OP_conv1d, XO_DIR_BWD, conv1d_bwd_skip_one, XO_HMODE_EXACT,
     "batch=2 len=9 ch=2 filters=3 kernel_size=3", XO_FAIL_UNWRITTEN},
    {"fault-dense-dw-2^-12", XO_OP_dense, XO_DIR_BWD, dense_bwd_dw_off, XO_HMODE_REAL,
     "batch=4 ch=6 units=5", XO_FAIL_MISMATCH},
    {"fault-pool-drops-nan", XO_OP_max_pooling1d, XO_DIR_FWD, pool_fwd_drops_nan,
     XO_HMODE_NONFINITE, "batch=2 len=12 ch=3 pool_size=3", XO_FAIL_NONFINITE},
    {"fault-pool-first-nan-only", XO_OP_max_pooling1d, XO_DIR_FWD, pool_fwd_first_nan_only,
     XO_HMODE_NONFINITE, "batch=2 len=12 ch=3 pool_size=3", XO_FAIL_NONFINITE},
    {"fault-merge-max-drops-nan", XO_OP_merge, XO_DIR_FWD, merge_fwd_max_drops_nan,
     XO_HMODE_NONFINITE, "batch=2 len=3 ch=5 mode=maximum", XO_FAIL_NONFINITE},
    {"fault-writes-src", XO_OP_flatten, XO_DIR_FWD, flatten_fwd_writes_src, XO_HMODE_EXACT,
     "batch=2 len=3 ch=4", XO_FAIL_SRC_CHANGED},
    {"fault-error", XO_OP_gather, XO_DIR_FWD, gather_fwd_fails, XO_HMODE_REAL,
     "rows=10 batch=4 ch=3", XO_FAIL_RUN},
    {"fault-embedding-row-off-by-one", XO_OP_embedding, XO_DIR_FWD, embedding_fwd_row_off_by_one,
     XO_HMODE_EXACT, "batch=3 len=5 ch=4 rows=7", XO_FAIL_MISMATCH},
    {"fault-embedding-bwd-overwrite", XO_OP_embedding, XO_DIR_BWD, embedding_bwd_overwrite,
     XO_HMODE_EXACT, "batch=3 len=5 ch=4 rows=4", XO_FAIL_MISMATCH},
    {"fault-bn-unbiased-variance", XO_OP_batch_normalization, XO_DIR_FWD, bn_fwd_unbiased,
     XO_HMODE_REAL, "batch=16 len=4 ch=5 epsilon=0.001", XO_FAIL_MISMATCH},
    {"fault-bn-state-frozen", XO_OP_batch_normalization, XO_DIR_FWD, bn_fwd_state_frozen,
     XO_HMODE_REAL, "batch=4 len=3 ch=5 epsilon=0.001", XO_FAIL_MISMATCH},
    {"fault-bn-infer-batch-stats", XO_OP_batch_normalization, XO_DIR_FWD,
     bn_fwd_infer_batch_stats, XO_HMODE_REAL, "batch=4 len=3 ch=5 epsilon=0.001 training=0",
     XO_FAIL_MISMATCH},
    {"fault-lstm-gates-f-i-c-o", XO_OP_lstm, XO_DIR_FWD, lstm_fwd_gates_swapped, XO_HMODE_REAL,
     "batch=3 len=5 ch=4 units=6 return_sequences=1", XO_FAIL_MISMATCH},
    {"fault-gru-recurrent-transposed", XO_OP_gru, XO_DIR_FWD, gru_fwd_recurrent_transposed,
     XO_HMODE_REAL, "batch=3 len=5 ch=4 units=6", XO_FAIL_MISMATCH},
    {"fault-rnn-step-skipped", XO_OP_simple_rnn, XO_DIR_FWD, simple_rnn_fwd_step_skipped,
     XO_HMODE_REAL, "batch=3 len=5 ch=4 units=6 return_sequences=1", XO_FAIL_MISMATCH},
    {"fault-lstm-bwd-no-cell-carry", XO_OP_lstm, XO_DIR_BWD, lstm_bwd_no_cell_carry,
     XO_HMODE_REAL, "batch=3 len=5 ch=4 units=6", XO_FAIL_MISMATCH},
    {"fault-relu6-kinks-pass", XO_OP_relu6, XO_DIR_BWD, relu6_bwd_closed, XO_HMODE_EXACT,
     "batch=2 len=3 ch=8", XO_FAIL_MISMATCH},
    {"fault-elu-alpha-one", XO_OP_elu, XO_DIR_FWD, elu_fwd_alpha_one, XO_HMODE_REAL,
     "batch=2 len=3 ch=8 alpha=0.7", XO_FAIL_MISMATCH},
    {"fault-elu-bwd-from-y", XO_OP_elu, XO_DIR_BWD, elu_bwd_from_y, XO_HMODE_REAL,
     "batch=2 len=3 ch=8 alpha=-0.6", XO_FAIL_MISMATCH},
    {"fault-leaky-relu-kink-slope", XO_OP_leaky_relu, XO_DIR_BWD, leaky_relu_bwd_kink_slope,
     XO_HMODE_EXACT, "batch=2 len=3 ch=8 negative_slope=0.25", XO_FAIL_MISMATCH},
    {"fault-hard-sigmoid-keras2", XO_OP_hard_sigmoid, XO_DIR_FWD, hard_sigmoid_fwd_keras2,
     XO_HMODE_REAL, "batch=2 len=3 ch=8", XO_FAIL_MISMATCH},
    {"fault-silu-bwd-no-x-term", XO_OP_silu, XO_DIR_BWD, silu_bwd_no_x_term, XO_HMODE_REAL,
     "batch=2 len=3 ch=8", XO_FAIL_MISMATCH},
    {"fault-log-softmax-no-log", XO_OP_log_softmax, XO_DIR_FWD, log_softmax_fwd_no_log,
     XO_HMODE_REAL, "batch=2 len=3 ch=8", XO_FAIL_MISMATCH},
    {"fault-up-sampling-bwd-first-only", XO_OP_up_sampling, XO_DIR_BWD,
     up_sampling_bwd_first_only, XO_HMODE_EXACT, "batch=2 len=3 width=2 ch=3 repeats=2 repeats_w=2",
     XO_FAIL_MISMATCH},
    {"fault-pad-margins-swapped", XO_OP_pad, XO_DIR_FWD, pad_fwd_margins_swapped, XO_HMODE_EXACT,
     "batch=2 len=5 width=4 ch=3 pad_begin=2 pad_end=1 pad_begin_w=-1", XO_FAIL_MISMATCH},
    {"fault-ln-unbiased-variance", XO_OP_layer_normalization, XO_DIR_FWD, ln_fwd_unbiased,
     XO_HMODE_REAL, "batch=3 len=4 ch=16 epsilon=0.001", XO_FAIL_MISMATCH},
    {"fault-ln-bwd-drops-xhat-term", XO_OP_layer_normalization, XO_DIR_BWD,
     ln_bwd_drops_xhat_term, XO_HMODE_REAL, "batch=3 len=4 ch=8 epsilon=0.001", XO_FAIL_MISMATCH},
    {"fault-permute-bwd-no-move", XO_OP_permute, XO_DIR_BWD, permute_bwd_no_move, XO_HMODE_EXACT,
     "batch=2 len=3 width=4 ch=5 dims=231", XO_FAIL_MISMATCH},
    {"fault-merge-max-bwd-tie-to-a", XO_OP_merge, XO_DIR_BWD, merge_bwd_tie_to_a,
     XO_HMODE_REAL, "batch=2 len=3 ch=5 mode=maximum", XO_FAIL_MISMATCH},
    {"fault-merge-mask-no-zero", XO_OP_merge, XO_DIR_FWD, merge_fwd_mask_no_zero, XO_HMODE_EXACT,
     "batch=3 len=4 ch=3 mode=multiply mask_a=1 mask_b=1", XO_FAIL_MISMATCH},
    {"fault-merge-bwd-mask-ignored", XO_OP_merge, XO_DIR_BWD, merge_bwd_mask_ignored,
     XO_HMODE_REAL, "batch=3 len=4 ch=3 mode=maximum mask_a=1 mask_b=1", XO_FAIL_MISMATCH},
    {"fault-ce-bwd-no-clip", XO_OP_categorical_crossentropy, XO_DIR_BWD, ce_bwd_no_clip,
     XO_HMODE_REAL, "batch=8 ch=12", XO_FAIL_MISMATCH},
    {"fault-bce-bwd-whole-at-bound", XO_OP_binary_crossentropy, XO_DIR_BWD,
     bce_bwd_whole_at_bound, XO_HMODE_REAL, "batch=3 ch=12", XO_FAIL_MISMATCH},
    {"fault-dwconv-multiplier-major", XO_OP_depthwise_conv2d, XO_DIR_FWD,
     dwconv_fwd_multiplier_major, XO_HMODE_EXACT,
     "batch=2 len=6 width=5 ch=3 depth_multiplier=2 kernel_size=3 padding=same", XO_FAIL_MISMATCH},
    {"fault-dwconv-bwd-drops-last-sample", XO_OP_depthwise_conv2d, XO_DIR_BWD,
     dwconv_bwd_drops_last_sample, XO_HMODE_EXACT,
     "batch=3 len=6 width=5 ch=3 depth_multiplier=2 kernel_size=3 padding=same", XO_FAIL_MISMATCH},
    {"fault-flip-fwd-across-batch", XO_OP_flip, XO_DIR_FWD, flip_fwd_across_batch, XO_HMODE_EXACT,
     "batch=3 len=4 ch=5", XO_FAIL_MISMATCH},
    {"fault-rescaling-offset-first", XO_OP_rescaling, XO_DIR_FWD, rescaling_fwd_offset_first,
     XO_HMODE_REAL, "batch=2 len=3 ch=8 multiplier=0.00392156886 offset=-1", XO_FAIL_MISMATCH},
    {"fault-normalization-eps-inside", XO_OP_normalization, XO_DIR_FWD,
     normalization_fwd_eps_inside, XO_HMODE_REAL, "batch=2 len=3 ch=8", XO_FAIL_MISMATCH},
    {"fault-convt-flipped-kernel", XO_OP_conv2d_transpose, XO_DIR_FWD, convt_fwd_flipped_kernel,
     XO_HMODE_EXACT, "batch=2 len=3 width=4 ch=3 filters=2 kernel_size=3 strides=2 padding=same",
     XO_FAIL_MISMATCH},
    {"fault-convt-bwd-conv2d-layout", XO_OP_conv2d_transpose, XO_DIR_BWD, convt_bwd_conv2d_layout,
     XO_HMODE_EXACT, "batch=3 len=3 width=4 ch=2 filters=3 kernel_size=3 strides=2 padding=same",
     XO_FAIL_MISMATCH},
    {"fault-attention-causal-off-by-one", XO_OP_attention, XO_DIR_FWD,
     attention_fwd_mask_off_by_one, XO_HMODE_REAL, "batch=2 len=5 heads=2 key_dim=3 causal=1",
     XO_FAIL_MISMATCH},
    {"fault-gap-mask-ignored", XO_OP_global_average_pooling1d, XO_DIR_FWD,
     gap_fwd_mask_ignored, XO_HMODE_REAL, "batch=3 len=7 ch=4 mask_zero=1", XO_FAIL_MISMATCH},
    {"fault-attention-bwd-mask-ignored", XO_OP_attention, XO_DIR_BWD,
     attention_bwd_mask_ignored, XO_HMODE_REAL,
     "batch=2 len=5 heads=2 key_dim=3 attention_mask=1", XO_FAIL_MISMATCH},
    {"fault-rnn-bwd-mask-ignored", XO_OP_gru, XO_DIR_BWD, gru_bwd_mask_ignored, XO_HMODE_REAL,
     "batch=4 len=6 ch=3 units=5 return_sequences=1 mask_zero=1", XO_FAIL_MISMATCH},
    {"fault-lstm-zero-output-flipped", XO_OP_lstm, XO_DIR_FWD, lstm_fwd_zero_output_flipped,
     XO_HMODE_REAL, "batch=4 len=6 ch=3 units=5 return_sequences=1 mask_zero=1 "
     "zero_output_for_mask=1", XO_FAIL_MISMATCH},
    {"fault-mask-outer-axes-swapped", XO_OP_mask_outer, XO_DIR_FWD, mask_outer_fwd_axes_swapped,
     XO_HMODE_EXACT, "batch=2 len=5 query_mask=1", XO_FAIL_MISMATCH},
    {"fault-masking-first-feature", XO_OP_masking, XO_DIR_FWD, masking_fwd_first_feature,
     XO_HMODE_EXACT, "batch=4 len=5 ch=3", XO_FAIL_MISMATCH},
    {"fault-masking-bits", XO_OP_masking, XO_DIR_FWD, masking_fwd_bits, XO_HMODE_EXACT,
     "batch=4 len=5 ch=3", XO_FAIL_MISMATCH},
    {"fault-masking-bwd-unmasked", XO_OP_masking, XO_DIR_BWD, masking_bwd_unmasked,
     XO_HMODE_REAL, "batch=4 len=5 ch=3 mask_value=1", XO_FAIL_MISMATCH},
    {"fault-ce-logits-bwd-no-target-sum", XO_OP_categorical_crossentropy, XO_DIR_BWD,
     ce_logits_bwd_no_target_sum, XO_HMODE_REAL, "batch=8 ch=12 from_logits=1", XO_FAIL_MISMATCH},
    {"fault-bce-logits-bwd-batch-mean", XO_OP_binary_crossentropy, XO_DIR_BWD,
     bce_logits_bwd_batch_mean, XO_HMODE_REAL, "batch=3 ch=4 from_logits=1", XO_FAIL_MISMATCH},
    {"fault-normalization-invert-no-floor", XO_OP_normalization, XO_DIR_FWD,
     normalization_fwd_invert_no_floor, XO_HMODE_REAL, "batch=2 len=3 ch=8 invert=1",
     XO_FAIL_MISMATCH},
};
#define NFAULTS (sizeof(faults) / sizeof(faults[0]))

static struct xo_backend *fake_open(const struct xo_backend_iface *iface)
{
	struct xo_backend *be = calloc(1, sizeof(*be));

	assert_non_null(be);
	be->iface = iface;
	assert_int_equal(iface->init(be, ""), XO_OK);
	return be;
}

static struct xo_case make_case(const struct fault *f)
{
	struct xo_case c = {
	    .op = f->op, .dir = f->dir, .mode = f->mode, .seed = XO_CASE_SEED_DEFAULT};
	char line[512];
	enum xo_op op;

	snprintf(line, sizeof(line), "%s %s", xo_op_name(f->op), f->params);
	assert_int_equal(xo_case_parse(line, &op, &c.p), XO_OK);
	assert_int_equal(op, f->op);
	return c;
}

/* Each fault is caught, for its reason; the same case passes on ref's table. */
static void fault_caught(void **state)
{
	const struct fault *f = *state;
	struct xo_backend_iface good = xo_ref_iface, bad = xo_ref_iface;
	struct xo_backend *be_good, *be_bad;
	struct xo_case c = make_case(f);
	struct xo_case_result r;

	good.name = "ref-copy";
	bad.name = f->name;
	if (f->dir == XO_DIR_FWD)
		bad.fwd[f->op] = f->fn;
	else
		bad.bwd[f->op] = f->fn;
	be_good = fake_open(&good);
	be_bad = fake_open(&bad);

	assert_int_equal(xo_case_run(g_ref, be_good, &c, &r), XO_OK);
	if (r.fail != XO_FAIL_NONE)
		print_error("%s", r.report);
	assert_int_equal(r.fail, XO_FAIL_NONE);

	assert_int_equal(xo_case_run(g_ref, be_bad, &c, &r), XO_OK);
	print_message("%s: caught as '%s' (%lld bad elements)\n%s", f->name, xo_fail_name(r.fail),
	              (long long)r.nbad, r.report);
	if (!(r.fails & (1u << f->expect)))
		fail_msg("%s: expected '%s', harness said '%s'", f->name, xo_fail_name(f->expect),
		         xo_fail_name(r.fail));
	assert_non_null(strstr(r.report, "repro: xo check --op"));
	xo_backend_close(be_bad);
	xo_backend_close(be_good);
}

/* An uninformative case (softmax over one class: every output is 1) fails
 * even on a correct backend. */
static void mistrust_caught(void **state)
{
	struct xo_case c = {.op = XO_OP_softmax,
	                    .dir = XO_DIR_FWD,
	                    .mode = XO_HMODE_REAL,
	                    .seed = XO_CASE_SEED_DEFAULT};
	struct xo_case_result r;
	enum xo_op op;

	(void)state;
	assert_int_equal(xo_case_parse("softmax batch=4 len=2 ch=1", &op, &c.p), XO_OK);
	assert_int_equal(xo_case_run(g_ref, g_ref, &c, &r), XO_OK);
	print_message("%s", r.report);
	assert_int_equal(r.fail, XO_FAIL_MISTRUST);
	assert_non_null(strstr(r.report, "fill"));
}

/* softmax fwd that writes one output halved (an uninformative case's one
 * constant value, 1, turned into 0.5). */
static enum xo_status softmax_fwd_one_halved(struct xo_backend *be, const struct xo_op_args *a)
{
	enum xo_status st = xo_ref_iface.fwd[XO_OP_softmax](be, a);

	xo_tensor_f32(a->dst[0])[a->dst[0]->nelem - 1] *= 0.5f;
	return st;
}

/* The same uninformative case with uninformative_ok (the geometry sweep's
 * degenerate windows): it passes on a correct backend, flagged, and is still
 * compared: a wrong output fails it. */
static void uninformative_compared(void **state)
{
	struct xo_case c = {.op = XO_OP_softmax,
	                    .dir = XO_DIR_FWD,
	                    .mode = XO_HMODE_REAL,
	                    .seed = XO_CASE_SEED_DEFAULT,
	                    .uninformative_ok = true};
	struct xo_backend_iface bad = xo_ref_iface;
	struct xo_backend *be_bad;
	struct xo_case_result r;
	enum xo_op op;

	(void)state;
	assert_int_equal(xo_case_parse("softmax batch=4 len=2 ch=1", &op, &c.p), XO_OK);
	assert_int_equal(xo_case_run(g_ref, g_ref, &c, &r), XO_OK);
	assert_int_equal(r.fail, XO_FAIL_NONE);
	assert_true(r.uninformative);
	bad.name = "fault-softmax-one-halved";
	bad.fwd[XO_OP_softmax] = softmax_fwd_one_halved;
	be_bad = fake_open(&bad);
	assert_int_equal(xo_case_run(g_ref, be_bad, &c, &r), XO_OK);
	print_message("%s", r.report);
	assert_int_equal(r.fail, XO_FAIL_MISMATCH);
	xo_backend_close(be_bad);
}

/* The repro line names op, dir, mode, backend, seed and every parameter. */
static void repro_line(void **state)
{
	struct xo_case c = {
	    .op = XO_OP_conv1d, .dir = XO_DIR_BWD, .mode = XO_HMODE_REAL, .seed = 42};
	char buf[1024];
	enum xo_op op;

	(void)state;
	assert_int_equal(xo_case_parse("conv1d batch=2 len=9 ch=2 filters=3 kernel_size=3 "
	                               "padding=causal dilation_rate=2",
	                               &op, &c.p),
	                 XO_OK);
	xo_case_repro(&c, "cpu", buf, sizeof(buf));
	print_message("%s\n", buf);
	assert_non_null(strstr(buf, "xo check --op conv1d --dir bwd --mode real --backend cpu "
	                            "--seed 42 "));
	assert_non_null(strstr(buf, "padding=causal"));
	assert_non_null(strstr(buf, "dilation_rate=2"));
}

static int group_setup(void **state)
{
	(void)state;
	return xo_backend_open("ref", &g_ref) == XO_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	xo_backend_close(g_ref);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[NFAULTS + 3];
	static char names[NFAULTS][96];

	for (size_t i = 0; i < NFAULTS; i++) {
		snprintf(names[i], sizeof(names[i]), "%s is caught as '%s'", faults[i].name,
		         xo_fail_name(faults[i].expect));
		tests[i] = (struct CMUnitTest){.name = names[i],
		                               .test_func = fault_caught,
		                               .initial_state = (void *)&faults[i]};
	}
	tests[NFAULTS] = (struct CMUnitTest){.name = "uninformative case is mistrusted",
	                                     .test_func = mistrust_caught};
	tests[NFAULTS + 1] = (struct CMUnitTest){.name = "repro line", .test_func = repro_line};
	tests[NFAULTS + 2] = (struct CMUnitTest){.name = "uninformative_ok still compares",
	                                         .test_func = uninformative_compared};
	return _cmocka_run_group_tests("selftest", tests, NFAULTS + 3, group_setup, group_teardown);
}
