/*
 * ref_pool2d.c - reference 2-D pooling, forward and backward: max_pooling2d,
 * average_pooling2d, global_average_pooling2d, global_max_pooling2d, on
 * x[batch][len][width][ch] (len is the height).
 *
 * Window (oh, ow) covers rows oh*stride_h - pad_h + 0..pool_h-1 and columns
 * ow*stride_w - pad_w + 0..pool_w-1 (each axis the Keras 1-D geometry from
 * the core). Max: the scan runs over the in-bounds cells in row-major order
 * (height, then width) and replaces the best only when `v > best`, so ties
 * go to the first maximum in that order, a NaN first cell stays the result
 * and a later NaN never wins (as ref_pool.c). Average: the sum over the
 * in-bounds cells divided by their count (same padding averages the valid
 * cells only, as Keras). The global ops are the 1-D global ops over the
 * len*width cells of a sample in row-major order.
 */
#include <math.h>

#include "ref_internal.h"

struct pool2d {
	int64_t n, h, w, ch;
	struct xo_pool2d_geom g;
};

static enum xo_status pool2d_init(enum xo_op op, const struct xo_params *p, struct pool2d *q)
{
	q->n = p->batch;
	q->h = p->len;
	q->w = p->width;
	q->ch = p->ch;
	return xo_pool2d_geometry_of(op, p, &q->g);
}

static int64_t xi(const struct pool2d *q, int64_t n, int64_t r, int64_t s, int64_t c)
{
	return ((n * q->h + r) * q->w + s) * q->ch + c;
}

static int64_t yi(const struct pool2d *q, int64_t n, int64_t oh, int64_t ow, int64_t c)
{
	return ((n * q->g.out_h + oh) * q->g.out_w + ow) * q->ch + c;
}

/* The in-bounds rows [*r0, *r1) and columns [*s0, *s1) of window (oh, ow). */
static void window(const struct pool2d *q, int64_t oh, int64_t ow, int64_t *r0, int64_t *r1,
		   int64_t *s0, int64_t *s1)
{
	int64_t rs = oh * q->g.stride_h - q->g.pad_h, ss = ow * q->g.stride_w - q->g.pad_w;

	*r0 = rs < 0 ? 0 : rs;
	*r1 = rs + q->g.pool_h > q->h ? q->h : rs + q->g.pool_h;
	*s0 = ss < 0 ? 0 : ss;
	*s1 = ss + q->g.pool_w > q->w ? q->w : ss + q->g.pool_w;
}

/* Flat cell index r * width + s of the winner of window (oh, ow); *nan set
 * when the window holds a NaN. */
static int64_t pool2d_argmax(const struct pool2d *q, struct xo_ref_src x, int64_t n, int64_t oh,
			     int64_t ow, int64_t c, bool *nan)
{
	int64_t r0, r1, s0, s1, best_at = -1;
	double best = 0.0;

	window(q, oh, ow, &r0, &r1, &s0, &s1);
	for (int64_t r = r0; r < r1; r++)
		for (int64_t s = s0; s < s1; s++) {
			double v = xo_ref_ld(x, xi(q, n, r, s, c));

			*nan |= isnan(v);
			if (best_at < 0 || !(best >= v)) {
				best = v;
				best_at = r * q->w + s;
			}
		}
	XO_ASSERT(best_at >= 0);
	return best_at;
}

/* max_pooling2d fwd: y = NaN when the window holds one, else x at its first
 * maximum (a copy). mag |y|. */
enum xo_status xo_ref_max_pooling2d_fwd_math(const struct xo_params *p,
					     const struct xo_ref_src *src,
					     const struct xo_ref_dst *dst,
					     const struct xo_ref_dst *mag)
{
	struct pool2d q;
	enum xo_status st = pool2d_init(XO_OP_max_pooling2d, p, &q);

	if (st)
		return st;
	for (int64_t n = 0; n < q.n; n++)
		for (int64_t oh = 0; oh < q.g.out_h; oh++)
			for (int64_t ow = 0; ow < q.g.out_w; ow++)
				for (int64_t c = 0; c < q.ch; c++) {
					bool nan = false;
					int64_t at = pool2d_argmax(&q, src[0], n, oh, ow, c, &nan);
					double v = xo_ref_ld(src[0], (n * q.h * q.w + at) * q.ch + c);

					v = nan ? NAN : v;

					xo_ref_st(dst[0], yi(&q, n, oh, ow, c), v);
					xo_ref_st(mag[0], yi(&q, n, oh, ow, c), fabs(v));
				}
	return XO_OK;
}

/*
 * max_pooling2d bwd: src {x, dy}, dst {dx} overwritten: dx at a cell = the
 * sum of dy over the windows whose winner it is, in row-major window
 * order; 0 elsewhere. Naive: every window is visited for every cell. mag:
 * the sum of |dy| over those windows.
 */
enum xo_status xo_ref_max_pooling2d_bwd_math(const struct xo_params *p,
					     const struct xo_ref_src *src,
					     const struct xo_ref_dst *dst,
					     const struct xo_ref_dst *mag)
{
	struct pool2d q;
	enum xo_status st = pool2d_init(XO_OP_max_pooling2d, p, &q);

	if (st)
		return st;
	for (int64_t e = 0; e < q.n * q.h * q.w * q.ch; e++) {
		xo_ref_st(dst[0], e, 0.0);
		xo_ref_st(mag[0], e, 0.0);
	}
	for (int64_t n = 0; n < q.n; n++)
		for (int64_t r = 0; r < q.h; r++)
			for (int64_t s = 0; s < q.w; s++)
				for (int64_t c = 0; c < q.ch; c++) {
					double acc = 0.0, m = 0.0;

					for (int64_t oh = 0; oh < q.g.out_h; oh++)
						for (int64_t ow = 0; ow < q.g.out_w; ow++) {
							int64_t r0, r1, s0, s1;
							bool nan = false;
							double g;

							window(&q, oh, ow, &r0, &r1, &s0, &s1);
							if (r < r0 || r >= r1 || s < s0 || s >= s1 ||
							    pool2d_argmax(&q, src[0], n, oh, ow, c,
									  &nan) != r * q.w + s)
								continue;
							g = xo_ref_ld(src[1], yi(&q, n, oh, ow, c));
							acc += g;
							m += fabs(g);
						}
					xo_ref_st(dst[0], xi(&q, n, r, s, c), acc);
					xo_ref_st(mag[0], xi(&q, n, r, s, c), m);
				}
	return XO_OK;
}

/* average_pooling2d fwd: y = (sum of the window's in-bounds cells) / their
 * count. mag: (sum of |x| over them) / count. */
enum xo_status xo_ref_average_pooling2d_fwd_math(const struct xo_params *p,
						 const struct xo_ref_src *src,
						 const struct xo_ref_dst *dst,
						 const struct xo_ref_dst *mag)
{
	struct pool2d q;
	enum xo_status st = pool2d_init(XO_OP_average_pooling2d, p, &q);

	if (st)
		return st;
	for (int64_t n = 0; n < q.n; n++)
		for (int64_t oh = 0; oh < q.g.out_h; oh++)
			for (int64_t ow = 0; ow < q.g.out_w; ow++) {
				int64_t r0, r1, s0, s1;

				window(&q, oh, ow, &r0, &r1, &s0, &s1);
				XO_ASSERT(r1 > r0 && s1 > s0);
				for (int64_t c = 0; c < q.ch; c++) {
					double acc = 0.0, m = 0.0, cnt;

					for (int64_t r = r0; r < r1; r++)
						for (int64_t s = s0; s < s1; s++) {
							double v = xo_ref_ld(src[0], xi(&q, n, r, s, c));

							acc += v;
							m += fabs(v);
						}
					cnt = (double)((r1 - r0) * (s1 - s0));
					xo_ref_st(dst[0], yi(&q, n, oh, ow, c), acc / cnt);
					xo_ref_st(mag[0], yi(&q, n, oh, ow, c), m / cnt);
				}
			}
	return XO_OK;
}

/* average_pooling2d bwd: src {dy}, dst {dx} overwritten: dx at a cell = the
 * sum over the windows holding it (row-major window order) of dy / count;
 * 0 where no window holds it. mag: the same sum of |dy| / count. */
enum xo_status xo_ref_average_pooling2d_bwd_math(const struct xo_params *p,
						 const struct xo_ref_src *src,
						 const struct xo_ref_dst *dst,
						 const struct xo_ref_dst *mag)
{
	struct pool2d q;
	enum xo_status st = pool2d_init(XO_OP_average_pooling2d, p, &q);

	if (st)
		return st;
	for (int64_t n = 0; n < q.n; n++)
		for (int64_t r = 0; r < q.h; r++)
			for (int64_t s = 0; s < q.w; s++)
				for (int64_t c = 0; c < q.ch; c++) {
					double acc = 0.0, m = 0.0;

					for (int64_t oh = 0; oh < q.g.out_h; oh++)
						for (int64_t ow = 0; ow < q.g.out_w; ow++) {
							int64_t r0, r1, s0, s1;
							double g, cnt;

							window(&q, oh, ow, &r0, &r1, &s0, &s1);
							if (r < r0 || r >= r1 || s < s0 || s >= s1)
								continue;
							cnt = (double)((r1 - r0) * (s1 - s0));
							g = xo_ref_ld(src[0], yi(&q, n, oh, ow, c));
							acc += g / cnt;
							m += fabs(g) / cnt;
						}
					xo_ref_st(dst[0], xi(&q, n, r, s, c), acc);
					xo_ref_st(mag[0], xi(&q, n, r, s, c), m);
				}
	return XO_OK;
}

/* The global 2-D ops are the 1-D ones over len*width steps (the slot
 * shapes were validated, so the product fits). */
static struct xo_params flat_cells(const struct xo_params *p)
{
	struct xo_params q = *p;

	q.len = p->len * p->width;
	q.width = 1;
	return q;
}

#define REF_GLOBAL2D(name2, name1, dir)                                                      \
	enum xo_status xo_ref_##name2##_##dir##_math(const struct xo_params *p,              \
						     const struct xo_ref_src *src,           \
						     const struct xo_ref_dst *dst,           \
						     const struct xo_ref_dst *mag)           \
	{                                                                                    \
		struct xo_params q = flat_cells(p);                                          \
		return xo_ref_##name1##_##dir##_math(&q, src, dst, mag);                     \
	}
REF_GLOBAL2D(global_average_pooling2d, global_average_pooling1d, fwd)
REF_GLOBAL2D(global_average_pooling2d, global_average_pooling1d, bwd)
REF_GLOBAL2D(global_max_pooling2d, global_max_pooling1d, fwd)
REF_GLOBAL2D(global_max_pooling2d, global_max_pooling1d, bwd)
