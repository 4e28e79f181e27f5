/*
 * ref_norm.c - reference batch_normalization (Keras 3 BatchNormalization,
 * axis -1), forward (training and inference) and backward; and
 * normalization (Keras 3 Normalization: fixed statistics, at the end).
 *
 * Semantics read from keras/src/layers/normalization/batch_normalization.py
 * (keras-team/keras, Keras 3): call() in training takes
 * `mean, variance = ops.moments(inputs, axes=reduction_axes)` over every axis
 * but the last (so the biased, population variance: the mean of the squared
 * deviations) and assigns
 *   moving_mean     = moving_mean * momentum + mean * (1 - momentum)
 *   moving_variance = moving_variance * momentum + variance * (1 - momentum)
 * with that same biased variance; inference (training false) normalises with
 * the moving statistics instead. The output is ops.batch_normalization:
 * (x - mean) / sqrt(variance + epsilon) * gamma + beta, gamma absent when
 * scale=False and beta absent when center=False.
 *
 * As every ref op: the math runs in double whatever the storage, each output
 * rounded once (ref_internal.h). The backward recomputes the batch statistics
 * from x (the op pair carries no saved statistics, ops.def).
 */
#include <math.h>

#include "ref_internal.h"

/* Batch mean and biased variance of channel c over the N = batch*len rows. */
static void moments(const struct xo_params *p, struct xo_ref_src x, int64_t c, double *mean,
		    double *var)
{
	int64_t rows = p->batch * p->len;
	double s = 0.0, q = 0.0, m;

	for (int64_t r = 0; r < rows; r++)
		s += xo_ref_ld(x, r * p->ch + c);
	m = s / (double)rows;
	for (int64_t r = 0; r < rows; r++) {
		double d = xo_ref_ld(x, r * p->ch + c) - m;

		q += d * d;
	}
	*mean = m;
	*var = q / (double)rows;
}

/* batch_normalization fwd: src {x, gamma|NULL, beta|NULL}, dst {y,
 * moving_mean, moving_variance} (state, in place). mag: |y|, |moving_mean'|,
 * |moving_variance'|. */
enum xo_status xo_ref_batch_normalization_fwd_math(const struct xo_params *p,
						   const struct xo_ref_src *src,
						   const struct xo_ref_dst *dst,
						   const struct xo_ref_dst *mag)
{
	int64_t rows = p->batch * p->len;
	double eps = (double)p->epsilon, mom = (double)p->momentum;

	for (int64_t c = 0; c < p->ch; c++) {
		/* the state; the gradient check's double forward (training) passes none */
		double mm = xo_ref_dst_has(dst[1]) ? xo_ref_ld(xo_ref_as_src(dst[1]), c) : 0.0;
		double mv = xo_ref_dst_has(dst[2]) ? xo_ref_ld(xo_ref_as_src(dst[2]), c) : 1.0;
		double g = xo_ref_src_has(src[1]) ? xo_ref_ld(src[1], c) : 1.0;
		double b = xo_ref_src_has(src[2]) ? xo_ref_ld(src[2], c) : 0.0;
		double mean, var, r;

		if (p->training) {
			moments(p, src[0], c, &mean, &var);
			mm = mm * mom + mean * (1.0 - mom);
			mv = mv * mom + var * (1.0 - mom);
		} else {
			mean = mm;
			var = mv;
		}
		r = 1.0 / sqrt(var + eps);
		for (int64_t k = 0; k < rows; k++) {
			double y = g * ((xo_ref_ld(src[0], k * p->ch + c) - mean) * r) + b;

			xo_ref_st(dst[0], k * p->ch + c, y);
			xo_ref_st(mag[0], k * p->ch + c, fabs(y));
		}
		xo_ref_st(dst[1], c, mm);
		xo_ref_st(dst[2], c, mv);
		xo_ref_st(mag[1], c, fabs(mm));
		xo_ref_st(mag[2], c, fabs(mv));
	}
	return XO_OK;
}

/* batch_normalization bwd: src {x, gamma|NULL, dy}, dst {dx, dgamma|NULL,
 * dbeta|NULL}, the gradient of the training form (ops.def). mag: |dx|,
 * sum |dy xhat|, sum |dy|. */
enum xo_status xo_ref_batch_normalization_bwd_math(const struct xo_params *p,
						   const struct xo_ref_src *src,
						   const struct xo_ref_dst *dst,
						   const struct xo_ref_dst *mag)
{
	int64_t rows = p->batch * p->len;
	double eps = (double)p->epsilon, n = (double)rows;

	for (int64_t c = 0; c < p->ch; c++) {
		double g = xo_ref_src_has(src[1]) ? xo_ref_ld(src[1], c) : 1.0;
		double mean, var, r, db = 0.0, dg = 0.0, mdb = 0.0, mdg = 0.0;

		moments(p, src[0], c, &mean, &var);
		r = 1.0 / sqrt(var + eps);
		for (int64_t k = 0; k < rows; k++) {
			double dy = xo_ref_ld(src[2], k * p->ch + c);
			double xh = (xo_ref_ld(src[0], k * p->ch + c) - mean) * r;

			db += dy;
			dg += dy * xh;
			mdb += fabs(dy);
			mdg += fabs(dy * xh);
		}
		for (int64_t k = 0; k < rows; k++) {
			double dy = xo_ref_ld(src[2], k * p->ch + c);
			double xh = (xo_ref_ld(src[0], k * p->ch + c) - mean) * r;
			double dx = g * r / n * (n * dy - db - xh * dg);

			xo_ref_st(dst[0], k * p->ch + c, dx);
			xo_ref_st(mag[0], k * p->ch + c, fabs(dx));
		}
		xo_ref_st(dst[1], c, dg);
		xo_ref_st(dst[2], c, db);
		xo_ref_st(mag[1], c, mdg);
		xo_ref_st(mag[2], c, mdb);
	}
	return XO_OK;
}

/*
 * normalization (Keras 3 Normalization, axis -1, and invert), read from
 * keras/src/layers/preprocessing/normalization.py: call() returns
 * (inputs - mean) / maximum(sqrt(variance), backend.epsilon()), epsilon
 * 1e-7 taken as float32 (a weak Python scalar against float32 tensors).
 * The math in double, y rounded once. maximum propagates a NaN root (a
 * negative or NaN variance) as jnp.maximum does: written as a compare that
 * keeps the root unless it is below epsilon. Backward: the quotient's
 * derivative in x, dy / den; mean and variance are constants (no gradient).
 * mag: |y| (|dx|), one rounding's scale.
 * invert (Keras's invert=True): call() returns add(mean, multiply(inputs,
 * den)), y = mean + x * den; backward dy * den. mag: |mean| + |x den| (the
 * sum may cancel: its rounding errors scale with its terms, not with y),
 * |dx| backward.
 */
static double norm_den(double v)
{
	double s = sqrt(v), eps = (double)1e-7f;

	return s < eps ? eps : s;
}

enum xo_status xo_ref_normalization_fwd_math(const struct xo_params *p,
					     const struct xo_ref_src *src,
					     const struct xo_ref_dst *dst,
					     const struct xo_ref_dst *mag)
{
	int64_t rows = p->batch * p->len, ch = p->ch;

	for (int64_t r = 0; r < rows; r++)
		for (int64_t c = 0; c < ch; c++) {
			double x = xo_ref_ld(src[0], r * ch + c), m = xo_ref_ld(src[1], c);
			double den = norm_den(xo_ref_ld(src[2], c));

			if (p->invert) {
				xo_ref_st(dst[0], r * ch + c, m + x * den);
				xo_ref_st(mag[0], r * ch + c, fabs(m) + fabs(x * den));
			} else {
				double y = (x - m) / den;

				xo_ref_st(dst[0], r * ch + c, y);
				xo_ref_st(mag[0], r * ch + c, fabs(y));
			}
		}
	return XO_OK;
}

enum xo_status xo_ref_normalization_bwd_math(const struct xo_params *p,
					     const struct xo_ref_src *src,
					     const struct xo_ref_dst *dst,
					     const struct xo_ref_dst *mag)
{
	int64_t rows = p->batch * p->len, ch = p->ch;

	for (int64_t r = 0; r < rows; r++)
		for (int64_t c = 0; c < ch; c++) {
			double dy = xo_ref_ld(src[1], r * ch + c), den = norm_den(xo_ref_ld(src[0], c));
			double dx = p->invert ? dy * den : dy / den;

			xo_ref_st(dst[0], r * ch + c, dx);
			xo_ref_st(mag[0], r * ch + c, fabs(dx));
		}
	return XO_OK;
}
