/*
 * ref_opt.c - reference SGD and RMSprop updates (Keras 3), in place.
 *
 * Keras 3 keras/src/optimizers/sgd.py and rmsprop.py (update_step): the
 * variables are float32, so each assigned state (m, v, mom, w) is rounded to
 * float; here every value is widened to double, each step computed in double
 * and the state rounded to float when stored, and later steps read the rounded
 * state back (as a float backend does).
 */
#include <math.h>

#include "ref_internal.h"

/*
 * sgd fwd: src {g[size]}, dst {w[size], m[size]}, with lr and mu = momentum:
 *
 *   momentum == 0:  w' = w - g lr                (m is left as it is)
 *   otherwise:      m' = m mu - g lr             rounded to float
 *                   w' = w + m'                  (nesterov False)
 *                   w' = w + (m' mu - g lr)      (nesterov True)
 *
 * mag: |w'| and |m'| (|m| when untouched).
 */
enum xo_status xo_ref_sgd_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
                                   const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	double lr = (double)p->lr, mu = (double)p->momentum;

	for (int64_t k = 0; k < p->size; k++) {
		double g = xo_ref_ld(src[0], k);
		double w = xo_ref_ld(xo_ref_as_src(dst[0]), k);
		double m = xo_ref_ld(xo_ref_as_src(dst[1]), k);

		if (p->momentum != 0.0f) {
			xo_ref_st(dst[1], k, m * mu - g * lr);
			m = xo_ref_ld(xo_ref_as_src(dst[1]), k); /* the rounded m' */
			w = p->nesterov ? w + (m * mu - g * lr) : w + m;
		} else {
			w = w - g * lr;
		}
		xo_ref_st(dst[0], k, w);
		xo_ref_st(mag[0], k, fabs(w));
		xo_ref_st(mag[1], k, fabs(m));
	}
	return XO_OK;
}

/*
 * rmsprop fwd: src {g[size]}, dst {w[size], v[size], mom[size]}, centered
 * False, with lr, rho, mu = momentum, eps = epsilon:
 *
 *   v'   = rho v + (1 - rho) g^2                 rounded to float
 *   inc  = lr g / sqrt(v' + eps)
 *   momentum == 0:  w' = w - inc                 (mom is left as it is)
 *   otherwise:      mom' = mu mom + inc          rounded to float
 *                   w' = w - mom'
 *
 * mag: |w'|, |v'|, |mom'| (|mom| when untouched).
 */
enum xo_status xo_ref_rmsprop_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
                                       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	double lr = (double)p->lr, rho = (double)p->rho, mu = (double)p->momentum;
	double eps = (double)p->epsilon;

	for (int64_t k = 0; k < p->size; k++) {
		double g = xo_ref_ld(src[0], k);
		double w = xo_ref_ld(xo_ref_as_src(dst[0]), k);
		double v = xo_ref_ld(xo_ref_as_src(dst[1]), k);
		double mom = xo_ref_ld(xo_ref_as_src(dst[2]), k);
		double inc;

		xo_ref_st(dst[1], k, rho * v + (1.0 - rho) * (g * g));
		v = xo_ref_ld(xo_ref_as_src(dst[1]), k); /* the rounded v' */
		inc = lr * g / sqrt(v + eps);
		if (p->momentum > 0.0f) {
			xo_ref_st(dst[2], k, mu * mom + inc);
			mom = xo_ref_ld(xo_ref_as_src(dst[2]), k);
			w = w - mom;
		} else {
			w = w - inc;
		}
		xo_ref_st(dst[0], k, w);
		xo_ref_st(mag[0], k, fabs(w));
		xo_ref_st(mag[1], k, fabs(v));
		xo_ref_st(mag[2], k, fabs(mom));
	}
	return XO_OK;
}
