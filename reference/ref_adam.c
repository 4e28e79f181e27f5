/*
 * ref_adam.c - reference Adam update (Keras 3), in place.
 */
#include <math.h>

#include "ref_internal.h"

/*
 * adam fwd: src {g[size]}, dst {w[size], m[size], v[size]}, each read and
 * then overwritten in place. With t = p.iteration (from 1) and every
 * parameter widened from float to double:
 *
 *   m'   = m + (g - m) * c1                            rounded to float
 *   v'   = v + (g*g - v) * c2                          rounded to float
 *   (c1, c2 = 1 - beta_1, 1 - beta_2 as Keras has them: xo_adam_complement)
 *   lr_t = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)
 *   w'   = w - lr_t * m' / (sqrt(v') + epsilon)       rounded to float
 *
 * all in double, using the float-rounded m' and v' in the w update so that a
 * backend working in float can match. beta^t is pow() in double.
 * mag: |w'|, |m'|, |v'| (no accumulation).
 */
enum xo_status xo_ref_adam_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				    const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	double b1 = (double)p->beta_1, b2 = (double)p->beta_2, t = (double)p->iteration;
	double c1 = (double)xo_adam_complement(p->beta_1), c2 = (double)xo_adam_complement(p->beta_2);
	double lr_t = (double)p->lr * sqrt(1.0 - pow(b2, t)) / (1.0 - pow(b1, t));
	double eps = (double)p->epsilon;

	for (int64_t k = 0; k < p->size; k++) {
		double g = xo_ref_ld(src[0], k);
		double w = xo_ref_ld(xo_ref_as_src(dst[0]), k);
		double m = xo_ref_ld(xo_ref_as_src(dst[1]), k);
		double v = xo_ref_ld(xo_ref_as_src(dst[2]), k);

		xo_ref_st(dst[1], k, m + (g - m) * c1);
		xo_ref_st(dst[2], k, v + (g * g - v) * c2);
		/* the rounded m' and v', read back from their storage */
		m = xo_ref_ld(xo_ref_as_src(dst[1]), k);
		v = xo_ref_ld(xo_ref_as_src(dst[2]), k);
		w = w - lr_t * m / (sqrt(v) + eps);
		xo_ref_st(dst[0], k, w);
		xo_ref_st(mag[0], k, fabs(w));
		xo_ref_st(mag[1], k, fabs(m));
		xo_ref_st(mag[2], k, fabs(v));
	}
	return XO_OK;
}
