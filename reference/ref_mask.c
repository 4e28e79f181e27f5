/*
 * ref_mask.c - reference of the masking op (Keras's Masking layer, ops.def):
 * a step is kept when some feature differs from mask_value; the output is
 * the input on kept steps and +0 elsewhere, the keep flags (0/1, int32) are
 * the mask later layers read. Selects and compares only: every backend must
 * match bit for bit; mag is |y|.
 */
#include <math.h>

#include "ref_internal.h"

/* Whether step t of sample n keeps: any x[n][t][c] != mask_value, a float
 * compare with subnormals as 0 (xo_daz: Keras's XLA), so -0 == 0 and 1e-40
 * == 0 mask, NaN != anything keeps. */
static bool masking_keep(const struct xo_params *p, struct xo_ref_src x, int64_t n, int64_t t)
{
	for (int64_t c = 0; c < p->ch; c++)
		if (xo_daz((float)xo_ref_ld(x, (n * p->len + t) * p->ch + c)) != xo_daz(p->mask_value))
			return true;
	return false;
}

/* Both directions: d[n][t][c] = v[n][t][c] where step (n, t) of x keeps,
 * else +0 (v is x forward, dy backward). */
static void masking_select(const struct xo_params *p, struct xo_ref_src x, struct xo_ref_src v,
                           struct xo_ref_dst d, struct xo_ref_dst mag, struct xo_ref_dst keep)
{
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t t = 0; t < p->len; t++) {
			bool k = masking_keep(p, x, n, t);

			if (xo_ref_dst_has(keep))
				xo_ref_st(keep, n * p->len + t, k ? 1.0 : 0.0);
			for (int64_t c = 0; c < p->ch; c++) {
				int64_t e = (n * p->len + t) * p->ch + c;
				double y = k ? xo_ref_ld(v, e) : 0.0;

				xo_ref_st(d, e, y);
				xo_ref_st(mag, e, fabs(y));
			}
		}
}

/* masking fwd: src {x}, dst {y, keep (i32)} (ops.def). */
enum xo_status xo_ref_masking_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
                                       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	masking_select(p, src[0], src[0], dst[0], mag[0], dst[1]);
	return XO_OK;
}

/* masking bwd: src {x, dy}, dst {dx}: dy where x's step keeps, else +0. */
enum xo_status xo_ref_masking_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
                                       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	masking_select(p, src[0], src[1], dst[0], mag[0], (struct xo_ref_dst){0});
	return XO_OK;
}
