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

/* Keras's mask on a merge's inputs (ops.def): whether input w (0 a, 1 b) is
 * kept at row r, from the ids source ids (fwd src 2, bwd src 3). An input
 * without its flag is kept everywhere. */
static bool merge_kept(const struct xo_params *p, struct xo_ref_src ids, int w, int64_t r)
{
	if (!(w ? p->mask_b : p->mask_a))
		return true;
	return xo_ref_ld(ids, r) != 0.0;
}

/* The masked forward's value at one element: multiply reads a masked input
 * as 1 and gives 0 where both flags are set and both inputs are masked;
 * maximum and minimum run on (o, x) = (ma ? a : x, mb ? b : a). */
static double merge_masked_value(enum xo_merge mode, bool flags2, bool ma, bool mb, double a,
				 double b)
{
	if (mode == XO_MERGE_MULTIPLY) {
		if (flags2 && !ma && !mb)
			return 0.0;
		return (ma ? a : 1.0) * (mb ? b : 1.0);
	}
	double x = mb ? b : a, o = ma ? a : x;

	return merge_value(mode, o, x);
}

/* The masked backward at one element into g[0] (da) and g[1] (db): each
 * part of the unmasked op's gradient rounded to float, as a backend holds
 * it, then routed to the input it came from and summed. */
static void merge_masked_grads(enum xo_merge mode, bool ma, bool mb, double a, double b,
			       double dy, double g[2])
{
	if (mode == XO_MERGE_MULTIPLY) {
		g[0] = ma ? dy * (mb ? b : 1.0) : 0.0;
		g[1] = mb ? dy * (ma ? a : 1.0) : 0.0;
		return;
	}
	double x = mb ? b : a, o = ma ? a : x;
	double d_o = (float)(dy * merge_slope(mode, 0, o, x));
	double d_x = (float)(dy * merge_slope(mode, 1, o, x));

	/* o is a where ma, else x; x is b where mb, else a */
	if (!ma)
		d_x = (float)(d_x + d_o);
	g[0] = (ma ? d_o : 0.0) + (mb ? 0.0 : d_x);
	g[1] = mb ? d_x : 0.0;
}

/* merge fwd: src {a[batch][len][ch], b[batch][len][cb], ids|NULL}, dst {y} (ops.def). */
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
	if (p->mask_a || p->mask_b) {
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = 0; c < ca; c++) {
				int64_t k = r * ca + c;
				double v = merge_masked_value(
				    p->mode, p->mask_a && p->mask_b, merge_kept(p, src[2], 0, r),
				    merge_kept(p, src[2], 1, r), xo_ref_ld(src[0], k),
				    xo_ref_ld(src[1], k));

				xo_ref_st(dst[0], k, v);
				xo_ref_st(mag[0], k, fabs(v));
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

/* merge bwd: src {a, b, dy, ids|NULL}, dst {da|NULL, db|NULL} (ops.def). */
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
	if (p->mask_a || p->mask_b) {
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = 0; c < ca; c++) {
				int64_t k = r * ca + c;
				double g[2];

				merge_masked_grads(p->mode, merge_kept(p, src[3], 0, r),
						   merge_kept(p, src[3], 1, r), xo_ref_ld(src[0], k),
						   xo_ref_ld(src[1], k), xo_ref_ld(src[2], k), g);
				for (int w = 0; w < 2; w++) {
					xo_ref_st(dst[w], k, g[w]);
					xo_ref_st(mag[w], k, fabs(g[w]));
				}
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
