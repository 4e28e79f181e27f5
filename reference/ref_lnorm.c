/*
 * ref_lnorm.c - reference layer_normalization (Keras 3 LayerNormalization,
 * axis -1, rms_scaling=False), forward and backward.
 *
 * Semantics read from keras/src/layers/normalization/layer_normalization.py
 * (keras-team/keras, Keras 3): call() takes
 * `mean, variance = ops.moments(inputs, axes=self.axis, keepdims=True)` over
 * the normalized axis (the biased, population variance), then
 * inv = rsqrt(variance + epsilon) * gamma and y = inputs * inv + (beta -
 * mean * inv): algebraically gamma (x - mean) / sqrt(variance + epsilon) +
 * beta, the form computed here; gamma absent when scale=False, beta absent
 * when center=False. Training and inference are the same (no state).
 *
 * As every ref op: the math runs in double whatever the storage, each output
 * rounded once (ref_internal.h). The backward recomputes each row's
 * statistics from x (the op pair carries no saved statistics, ops.def).
 */
#include <math.h>
#include <stdlib.h>

#include "ref_internal.h"

/* Mean and r = 1 / sqrt(var + eps) (var biased) of the ch values of row k. */
static void row_moments(const struct xo_params *p, struct xo_ref_src x, int64_t k, double *mean,
			double *r)
{
	double s = 0.0, q = 0.0, m;

	for (int64_t c = 0; c < p->ch; c++)
		s += xo_ref_ld(x, k * p->ch + c);
	m = s / (double)p->ch;
	for (int64_t c = 0; c < p->ch; c++) {
		double d = xo_ref_ld(x, k * p->ch + c) - m;

		q += d * d;
	}
	*mean = m;
	*r = 1.0 / sqrt(q / (double)p->ch + (double)p->epsilon);
}

/* layer_normalization fwd: src {x, gamma|NULL, beta|NULL}, dst {y}. mag: |y|. */
enum xo_status xo_ref_layer_normalization_fwd_math(const struct xo_params *p,
						   const struct xo_ref_src *src,
						   const struct xo_ref_dst *dst,
						   const struct xo_ref_dst *mag)
{
	int64_t rows = p->batch * p->len;

	for (int64_t k = 0; k < rows; k++) {
		double mean, r;

		row_moments(p, src[0], k, &mean, &r);
		for (int64_t c = 0; c < p->ch; c++) {
			double g = xo_ref_src_has(src[1]) ? xo_ref_ld(src[1], c) : 1.0;
			double b = xo_ref_src_has(src[2]) ? xo_ref_ld(src[2], c) : 0.0;
			double y = g * ((xo_ref_ld(src[0], k * p->ch + c) - mean) * r) + b;

			xo_ref_st(dst[0], k * p->ch + c, y);
			xo_ref_st(mag[0], k * p->ch + c, fabs(y));
		}
	}
	return XO_OK;
}

/* dx of row k (ops.def): g = gamma dy, dx = r / ch (ch g - sum g - xh sum g xh). */
static void row_dx(const struct xo_params *p, const struct xo_ref_src *src,
		   const struct xo_ref_dst *dst, const struct xo_ref_dst *mag, int64_t k,
		   double mean, double r)
{
	double n = (double)p->ch, sg = 0.0, sgx = 0.0;

	for (int64_t c = 0; c < p->ch; c++) {
		double gm = xo_ref_src_has(src[1]) ? xo_ref_ld(src[1], c) : 1.0;
		double g = gm * xo_ref_ld(src[2], k * p->ch + c);

		sg += g;
		sgx += g * ((xo_ref_ld(src[0], k * p->ch + c) - mean) * r);
	}
	for (int64_t c = 0; c < p->ch; c++) {
		double gm = xo_ref_src_has(src[1]) ? xo_ref_ld(src[1], c) : 1.0;
		double g = gm * xo_ref_ld(src[2], k * p->ch + c);
		double xh = (xo_ref_ld(src[0], k * p->ch + c) - mean) * r;
		double dx = r / n * (n * g - sg - xh * sgx);

		xo_ref_st(dst[0], k * p->ch + c, dx);
		xo_ref_st(mag[0], k * p->ch + c, fabs(dx));
	}
}

/* layer_normalization bwd: src {x, gamma|NULL, dy}, dst {dx, dgamma|NULL,
 * dbeta|NULL} (ops.def). mag: |dx|, sum |dy xhat|, sum |dy|. The per-channel
 * sums run over the rows in row order, in double. */
enum xo_status xo_ref_layer_normalization_bwd_math(const struct xo_params *p,
						   const struct xo_ref_src *src,
						   const struct xo_ref_dst *dst,
						   const struct xo_ref_dst *mag)
{
	int64_t rows = p->batch * p->len, ch = p->ch;
	/* per channel: dgamma, dbeta and their magnitudes */
	double *acc = calloc((size_t)(4 * ch), sizeof(*acc));

	if (!acc)
		return xo_error(XO_ENOMEM, "ref: layer_normalization: out of memory");
	for (int64_t k = 0; k < rows; k++) {
		double mean, r;

		row_moments(p, src[0], k, &mean, &r);
		row_dx(p, src, dst, mag, k, mean, r);
		for (int64_t c = 0; c < ch; c++) {
			double dy = xo_ref_ld(src[2], k * ch + c);
			double xh = (xo_ref_ld(src[0], k * ch + c) - mean) * r;

			acc[c] += dy * xh;
			acc[ch + c] += dy;
			acc[2 * ch + c] += fabs(dy * xh);
			acc[3 * ch + c] += fabs(dy);
		}
	}
	for (int64_t c = 0; c < ch; c++) {
		xo_ref_st(dst[1], c, acc[c]);
		xo_ref_st(dst[2], c, acc[ch + c]);
		xo_ref_st(mag[1], c, acc[2 * ch + c]);
		xo_ref_st(mag[2], c, acc[3 * ch + c]);
	}
	free(acc);
	return XO_OK;
}
