/*
 * ref_pool.c - reference max_pooling1d, forward and backward.
 *
 * Window o of a row covers input steps o*stride - pad .. o*stride - pad +
 * pool_size - 1 (Keras geometry from the core; stride defaults to
 * pool_size). Padded positions never win: the scan starts at the first
 * in-bounds step and replaces the best only when `v > best`, so ties go to
 * the first maximum, a NaN first element stays the result, and a later NaN
 * never wins. Every window holds at least one in-bounds step (valid: by
 * construction; same: pad_left < pool_size and (out-1)*stride < len).
 */
#include <math.h>

#include "ref_internal.h"

struct pool {
	int64_t n, len, ch, size; /* batch, input steps, channels, pool_size */
	int64_t out, pad, stride; /* output steps, left padding, stride */
};

static enum xo_status pool_init(const struct xo_params *p, struct pool *q)
{
	enum xo_status st = xo_pool1d_geometry(p, &q->out, &q->pad);

	if (st)
		return st;
	q->n = p->batch;
	q->len = p->len;
	q->ch = p->ch;
	q->size = p->pool_size;
	q->stride = xo_pool1d_stride(p);
	return XO_OK;
}

/* Input step of the winner of window o, channel c, sample n. */
static int64_t pool_argmax(const struct pool *q, struct xo_ref_src x, int64_t n, int64_t o,
			   int64_t c)
{
	int64_t start = o * q->stride - q->pad, best_at = -1;
	double best = 0.0;

	for (int64_t j = 0; j < q->size; j++) {
		int64_t pos = start + j;
		double v;

		if (pos < 0 || pos >= q->len)
			continue;
		v = xo_ref_ld(x, (n * q->len + pos) * q->ch + c);
		if (best_at < 0 || v > best) {
			best = v;
			best_at = pos;
		}
	}
	XO_ASSERT(best_at >= 0);
	return best_at;
}

/* max_pooling1d fwd: src {x[batch][len][ch]}, dst {y[batch][out][ch]},
 * y = x at the window's winner (a copy: exact). mag |y|. */
enum xo_status xo_ref_max_pooling1d_fwd_math(const struct xo_params *p,
					     const struct xo_ref_src *src,
					     const struct xo_ref_dst *dst,
					     const struct xo_ref_dst *mag)
{
	struct pool q;
	enum xo_status st = pool_init(p, &q);

	if (st)
		return st;
	for (int64_t n = 0; n < q.n; n++) {
		for (int64_t o = 0; o < q.out; o++) {
			for (int64_t c = 0; c < q.ch; c++) {
				int64_t at = pool_argmax(&q, src[0], n, o, c);
				double v = xo_ref_ld(src[0], (n * q.len + at) * q.ch + c);

				xo_ref_st(dst[0], (n * q.out + o) * q.ch + c, v);
				xo_ref_st(mag[0], (n * q.out + o) * q.ch + c, fabs(v));
			}
		}
	}
	return XO_OK;
}

/*
 * max_pooling1d bwd: src {x, dy[batch][out][ch]}, dst {dx[batch][len][ch]},
 * overwritten: dx[n][l][c] = sum of dy[n][o][c] over the windows o whose
 * winner is step l (windows overlap when strides < pool_size), in increasing
 * o, 0 where l wins no window. mag: sum of |dy| over those windows.
 */
enum xo_status xo_ref_max_pooling1d_bwd_math(const struct xo_params *p,
					     const struct xo_ref_src *src,
					     const struct xo_ref_dst *dst,
					     const struct xo_ref_dst *mag)
{
	struct pool q;
	enum xo_status st = pool_init(p, &q);

	if (st)
		return st;
	for (int64_t n = 0; n < q.n; n++) {
		for (int64_t l = 0; l < q.len; l++) {
			/* windows containing l: o*stride - pad <= l <= o*stride - pad + size - 1 */
			int64_t lo_num = l + q.pad - q.size + 1;
			int64_t o_lo = lo_num <= 0 ? 0 : (lo_num + q.stride - 1) / q.stride;
			int64_t o_hi = (l + q.pad) / q.stride;

			if (o_hi > q.out - 1)
				o_hi = q.out - 1;
			for (int64_t c = 0; c < q.ch; c++) {
				double acc = 0.0, m = 0.0;

				for (int64_t o = o_lo; o <= o_hi; o++) {
					double g;

					if (pool_argmax(&q, src[0], n, o, c) != l)
						continue;
					g = xo_ref_ld(src[1], (n * q.out + o) * q.ch + c);
					acc += g;
					m += fabs(g);
				}
				xo_ref_st(dst[0], (n * q.len + l) * q.ch + c, acc);
				xo_ref_st(mag[0], (n * q.len + l) * q.ch + c, m);
			}
		}
	}
	return XO_OK;
}
