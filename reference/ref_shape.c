/*
 * ref_shape.c - reference ops that move or mask values without arithmetic
 * beyond one multiply: flatten, dropout, gather. Their outputs are exact
 * (copies, or one correctly rounded float product), so every backend must
 * match them bit for bit. mag of every element is |y| (no accumulation).
 */
#include <math.h>

#include "ref_internal.h"

/* Copies total elements; element k is read before it is written, so dst may
 * be the same array as src. */
static void copy(struct xo_ref_src s, struct xo_ref_dst d, struct xo_ref_dst mag, int64_t total)
{
	for (int64_t k = 0; k < total; k++) {
		double v = xo_ref_ld(s, k);

		xo_ref_st(d, k, v);
		xo_ref_st(mag, k, fabs(v));
	}
}

/* flatten fwd: src {x[batch][len][ch]}, dst {y[batch][len*ch]}: the same
 * row-major elements, copied (NaN stays NaN). */
enum xo_status xo_ref_flatten_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	copy(src[0], dst[0], mag[0], p->batch * p->len * p->ch);
	return XO_OK;
}

/* flatten bwd: src {dy[batch][len*ch]}, dst {dx[batch][len][ch]}: a copy. */
enum xo_status xo_ref_flatten_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	copy(src[0], dst[0], mag[0], p->batch * p->len * p->ch);
	return XO_OK;
}

/*
 * The dropout mask applied to src[0] into dst[0], over the flat element
 * index i in [0, batch*len*ch): when training, y_i = x_i * scale if
 * xo_dropout_keep(seed, step, layer, i, rate) else +0 (also for a NaN or
 * Inf x_i: a dropped element is 0); when not training, y = x. scale =
 * 1.0f / (1.0f - rate) is computed in float so every backend holds the same
 * bits; the product of two floats is exact in double, so the one rounding to
 * float equals a float multiply. dst may be the same array as src.
 */
static void dropout_apply(const struct xo_params *p, struct xo_ref_src s, struct xo_ref_dst d,
			  struct xo_ref_dst mag)
{
	int64_t total = p->batch * p->len * p->ch;
	float scale = 1.0f / (1.0f - p->rate);

	if (!p->training) {
		copy(s, d, mag, total);
		return;
	}
	for (int64_t i = 0; i < total; i++) {
		double v = 0.0;

		if (xo_dropout_keep(p->seed, p->step, p->layer, (uint64_t)i, p->rate))
			v = xo_ref_ld(s, i) * (double)scale;
		xo_ref_st(d, i, v);
		xo_ref_st(mag, i, fabs(v));
	}
}

/* dropout fwd: src {x[batch][len][ch]}, dst {y}; see dropout_apply. */
enum xo_status xo_ref_dropout_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	dropout_apply(p, src[0], dst[0], mag[0]);
	return XO_OK;
}

/* dropout bwd: src {dy}, dst {dx}: the same mask and scale applied to dy. */
enum xo_status xo_ref_dropout_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	dropout_apply(p, src[0], dst[0], mag[0]);
	return XO_OK;
}

/*
 * gather fwd: src {x[rows][ch], index[batch] (i32)}, dst {y[batch][ch]},
 * y[i][:] = x[index[i]][:]. Every index is checked before anything is
 * written: one outside [0, rows) is XO_EINVAL and y is untouched. y must not
 * alias x.
 */
enum xo_status xo_ref_gather_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				      const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t ch = p->ch;

	for (int64_t i = 0; i < p->batch; i++) {
		double r = xo_ref_ld(src[1], i);

		if (!(r >= 0.0 && r < (double)p->rows))
			return xo_error(XO_EINVAL,
					"gather: index[%lld]=%.0f is outside [0, rows=%lld)",
					(long long)i, r, (long long)p->rows);
	}
	for (int64_t i = 0; i < p->batch; i++) {
		int64_t r = (int64_t)xo_ref_ld(src[1], i);

		for (int64_t c = 0; c < ch; c++) {
			double v = xo_ref_ld(src[0], r * ch + c);

			xo_ref_st(dst[0], i * ch + c, v);
			xo_ref_st(mag[0], i * ch + c, fabs(v));
		}
	}
	return XO_OK;
}
