/*
 * ref_merge.c - the reference merge op (ops.def): Keras's merge layers on
 * two inputs, elementwise or concatenated along the channels. Every result
 * is one rounding of an exact double value (a sum, difference, product or
 * half of two floats, a choice, a copy), so every backend matches it bit
 * for bit; mag of each element is |y|.
 */
#include <math.h>

#include "ref_internal.h"

/* The elementwise modes' value of a and b. */
static double merge_value(enum xo_merge mode, double a, double b)
{
	switch (mode) {
	case XO_MERGE_ADD:
		return a + b;
	case XO_MERGE_SUBTRACT:
		return a - b;
	case XO_MERGE_MULTIPLY:
		return a * b;
	case XO_MERGE_AVERAGE:
		return (a + b) / 2.0;
	case XO_MERGE_MAXIMUM: /* NaN when either is (jnp.maximum, jnp.minimum) */
		return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
	case XO_MERGE_MINIMUM:
		return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
	case XO_MERGE_CONCATENATE:
		break;
	}
	XO_ASSERT(!"merge_value: not an elementwise mode");
	return 0.0;
}

/* d y / d a (which 0) or d y / d b (which 1) of an elementwise mode at (a, b). */
static double merge_slope(enum xo_merge mode, int which, double a, double b)
{
	switch (mode) {
	case XO_MERGE_ADD:
		return 1.0;
	case XO_MERGE_SUBTRACT:
		return which ? -1.0 : 1.0;
	case XO_MERGE_MULTIPLY:
		return which ? a : b;
	case XO_MERGE_AVERAGE:
		return 0.5;
	case XO_MERGE_MAXIMUM:
	case XO_MERGE_MINIMUM: {
		double mine = which ? b : a, other = which ? a : b;

		/* a NaN on either side: 0 to both, every comparison false (as
		 * jax.grad of jnp.maximum and jnp.minimum) */
		if (mine == other)
			return 0.5;
		return (mode == XO_MERGE_MAXIMUM ? mine > other : mine < other) ? 1.0 : 0.0;
	}
	case XO_MERGE_CONCATENATE:
		break;
	}
	XO_ASSERT(!"merge_slope: not an elementwise mode");
	return 0.0;
}

/* merge fwd: src {a[batch][len][ch], b[batch][len][cb]}, dst {y} (ops.def). */
enum xo_status xo_ref_merge_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				     const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t rows = p->batch * p->len, ca = p->ch;

	if (p->mode == XO_MERGE_CONCATENATE) {
		int64_t cb = p->ch_b, cy = ca + cb;

		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = 0; c < cy; c++) {
				double v = c < ca ? xo_ref_ld(src[0], r * ca + c)
						  : xo_ref_ld(src[1], r * cb + c - ca);

				xo_ref_st(dst[0], r * cy + c, v);
				xo_ref_st(mag[0], r * cy + c, fabs(v));
			}
		return XO_OK;
	}
	for (int64_t k = 0; k < rows * ca; k++) {
		double v = merge_value(p->mode, xo_ref_ld(src[0], k), xo_ref_ld(src[1], k));

		xo_ref_st(dst[0], k, v);
		xo_ref_st(mag[0], k, fabs(v));
	}
	return XO_OK;
}

/* merge bwd: src {a, b, dy}, dst {da|NULL, db|NULL} (ops.def). */
enum xo_status xo_ref_merge_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				     const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t rows = p->batch * p->len, ca = p->ch;

	if (p->mode == XO_MERGE_CONCATENATE) {
		int64_t cb = p->ch_b, cy = ca + cb;

		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = 0; c < cy; c++) {
				double v = xo_ref_ld(src[2], r * cy + c);
				int w = c < ca ? 0 : 1;
				int64_t k = w ? r * cb + c - ca : r * ca + c;

				xo_ref_st(dst[w], k, v);
				xo_ref_st(mag[w], k, fabs(v));
			}
		return XO_OK;
	}
	for (int64_t k = 0; k < rows * ca; k++) {
		double a = xo_ref_ld(src[0], k), b = xo_ref_ld(src[1], k);
		double dy = xo_ref_ld(src[2], k);

		for (int w = 0; w < 2; w++) {
			double v = dy * merge_slope(p->mode, w, a, b);

			xo_ref_st(dst[w], k, v);
			xo_ref_st(mag[w], k, fabs(v));
		}
	}
	return XO_OK;
}
