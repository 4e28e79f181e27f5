/*
 * ref_pool.c - reference 1-D pooling, forward and backward: max_pooling1d,
 * average_pooling1d, global_average_pooling1d, global_max_pooling1d.
 *
 * Window o of a row covers input steps o*stride - pad .. o*stride - pad +
 * pool_size - 1 (Keras geometry from the core; stride defaults to
 * pool_size). Padded positions never win. Max, as Keras on JAX/XLA:
 * the value is NaN when any in-bounds step is NaN, else the maximum; the
 * gradient goes to the winner of XLA's select scan (pool_takes): from the
 * first in-bounds step, v takes over unless winner >= v, so ties go to the
 * first maximum and, with a NaN, the winner is the first maximum of the
 * steps after the last NaN (that NaN itself when it is the last step).
 * Every window holds at least one in-bounds step (valid: by construction;
 * same: pad_left < pool_size and (out-1)*stride < len).
 */
#include <math.h>

#include "ref_internal.h"

struct pool {
	int64_t n, len, ch, size; /* batch, input steps, channels, pool_size */
	int64_t out, pad, stride; /* output steps, left padding, stride */
};

static enum xo_status pool_init_of(enum xo_op op, const struct xo_params *p, struct pool *q)
{
	enum xo_status st = xo_pool1d_geometry_of(op, p, &q->out, &q->pad);

	if (st)
		return st;
	q->n = p->batch;
	q->len = p->len;
	q->ch = p->ch;
	q->size = p->pool_size;
	q->stride = xo_pool1d_stride(p);
	return XO_OK;
}

static enum xo_status pool_init(const struct xo_params *p, struct pool *q)
{
	return pool_init_of(XO_OP_max_pooling1d, p, q);
}

/* Whether v takes over from the winner best in a max scan: XLA's select
 * (`best >= v` keeps best), so a NaN takes over and is taken over by the
 * next step. Without NaN: the first maximum. */
static bool pool_takes(double best, double v)
{
	return !(best >= v);
}

/* Input step of the winner of window o, channel c, sample n; *nan set when
 * the window holds a NaN. */
static int64_t pool_argmax(const struct pool *q, struct xo_ref_src x, int64_t n, int64_t o,
			   int64_t c, bool *nan)
{
	int64_t start = o * q->stride - q->pad, best_at = -1;
	double best = 0.0;

	for (int64_t j = 0; j < q->size; j++) {
		int64_t pos = start + j;
		double v;

		if (pos < 0 || pos >= q->len)
			continue;
		v = xo_ref_ld(x, (n * q->len + pos) * q->ch + c);
		*nan |= isnan(v);
		if (best_at < 0 || pool_takes(best, v)) {
			best = v;
			best_at = pos;
		}
	}
	XO_ASSERT(best_at >= 0);
	return best_at;
}

/* max_pooling1d fwd: src {x[batch][len][ch]}, dst {y[batch][out][ch]},
 * y = NaN when the window holds one, else x at its winner (a copy: exact).
 * mag |y|. */
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
				bool nan = false;
				int64_t at = pool_argmax(&q, src[0], n, o, c, &nan);
				double v = xo_ref_ld(src[0], (n * q.len + at) * q.ch + c);

				v = nan ? NAN : v;
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
 * winner (pool_takes) is step l (windows overlap when strides < pool_size), in increasing
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
					bool nan = false;
					double g;

					if (pool_argmax(&q, src[0], n, o, c, &nan) != l)
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

/*
 * average_pooling1d fwd: src {x[batch][len][ch]}, dst {y[batch][out][ch]},
 * y = (sum of the window's in-bounds steps) / count, count the number of
 * those steps (pool_size inside, fewer at a same-padded edge: Keras averages
 * the valid elements only). mag: (sum of |x| over the window) / count.
 */
enum xo_status xo_ref_average_pooling1d_fwd_math(const struct xo_params *p,
						 const struct xo_ref_src *src,
						 const struct xo_ref_dst *dst,
						 const struct xo_ref_dst *mag)
{
	struct pool q;
	enum xo_status st = pool_init_of(XO_OP_average_pooling1d, p, &q);

	if (st)
		return st;
	for (int64_t n = 0; n < q.n; n++) {
		for (int64_t o = 0; o < q.out; o++) {
			int64_t lo, hi, count = xo_pool1d_window(p, o, q.pad, &lo, &hi);

			XO_ASSERT(count >= 1);
			for (int64_t c = 0; c < q.ch; c++) {
				double acc = 0.0, m = 0.0;

				for (int64_t l = lo; l < hi; l++) {
					double v = xo_ref_ld(src[0], (n * q.len + l) * q.ch + c);

					acc += v;
					m += fabs(v);
				}
				xo_ref_st(dst[0], (n * q.out + o) * q.ch + c, acc / (double)count);
				xo_ref_st(mag[0], (n * q.out + o) * q.ch + c, m / (double)count);
			}
		}
	}
	return XO_OK;
}

/*
 * average_pooling1d bwd: src {dy[batch][out][ch]}, dst {dx[batch][len][ch]},
 * overwritten: dx[l] = sum over the windows o holding l, in increasing o, of
 * dy[o] / count[o]; 0 where no window holds l (strides > pool_size).
 * mag: the same sum of |dy[o]| / count[o].
 */
enum xo_status xo_ref_average_pooling1d_bwd_math(const struct xo_params *p,
						 const struct xo_ref_src *src,
						 const struct xo_ref_dst *dst,
						 const struct xo_ref_dst *mag)
{
	struct pool q;
	enum xo_status st = pool_init_of(XO_OP_average_pooling1d, p, &q);

	if (st)
		return st;
	for (int64_t n = 0; n < q.n; n++) {
		for (int64_t l = 0; l < q.len; l++) {
			for (int64_t c = 0; c < q.ch; c++) {
				double acc = 0.0, m = 0.0;

				/* every window, naively: the oracle does not share the
				 * kernels' window-range arithmetic */
				for (int64_t o = 0; o < q.out; o++) {
					int64_t lo, hi, count = xo_pool1d_window(p, o, q.pad, &lo, &hi);
					double g;

					if (l < lo || l >= hi)
						continue;
					g = xo_ref_ld(src[0], (n * q.out + o) * q.ch + c);
					acc += g / (double)count;
					m += fabs(g) / (double)count;
				}
				xo_ref_st(dst[0], (n * q.len + l) * q.ch + c, acc);
				xo_ref_st(mag[0], (n * q.len + l) * q.ch + c, m);
			}
		}
	}
	return XO_OK;
}

/* Whether step l of sample n counts: always, or with mask_zero where its id
 * (src ids[batch][len]) is not 0. */
static bool gap_kept(const struct xo_params *p, struct xo_ref_src ids, int64_t n, int64_t l)
{
	return !p->mask_zero || xo_ref_ld(ids, n * p->len + l) != 0.0;
}

/* The steps of sample n that count: len, or with mask_zero the ids not 0. */
static double gap_count(const struct xo_params *p, struct xo_ref_src ids, int64_t n)
{
	double k = 0.0;

	for (int64_t l = 0; l < p->len; l++)
		k += gap_kept(p, ids, n, l) ? 1.0 : 0.0;
	return k;
}

/* global_average_pooling1d fwd: src {x[batch][len][ch], ids[batch][len] with
 * mask_zero}, dst {y[batch][ch]}, y = (sum over the kept steps) / their
 * count (every step without mask_zero; 0 / 0 = NaN when none is kept, as
 * Keras). mag: (sum of their |x|) / count. */
enum xo_status xo_ref_global_average_pooling1d_fwd_math(const struct xo_params *p,
							const struct xo_ref_src *src,
							const struct xo_ref_dst *dst,
							const struct xo_ref_dst *mag)
{
	for (int64_t n = 0; n < p->batch; n++) {
		double k = gap_count(p, src[1], n);

		for (int64_t c = 0; c < p->ch; c++) {
			double acc = 0.0, m = 0.0;

			for (int64_t l = 0; l < p->len; l++) {
				double v;

				if (!gap_kept(p, src[1], n, l))
					continue;
				v = xo_ref_ld(src[0], (n * p->len + l) * p->ch + c);
				acc += v;
				m += fabs(v);
			}
			xo_ref_st(dst[0], n * p->ch + c, acc / k);
			xo_ref_st(mag[0], n * p->ch + c, m / k);
		}
	}
	return XO_OK;
}

/* global_average_pooling1d bwd: src {dy[batch][ch], ids with mask_zero},
 * dst {dx[batch][len][ch]}, dx = dy / count at every kept step, 0 at a
 * masked one. mag |dx|. */
enum xo_status xo_ref_global_average_pooling1d_bwd_math(const struct xo_params *p,
							const struct xo_ref_src *src,
							const struct xo_ref_dst *dst,
							const struct xo_ref_dst *mag)
{
	for (int64_t n = 0; n < p->batch; n++) {
		double k = gap_count(p, src[1], n);

		for (int64_t l = 0; l < p->len; l++) {
			bool kept = gap_kept(p, src[1], n, l);

			for (int64_t c = 0; c < p->ch; c++) {
				double g = kept ? xo_ref_ld(src[0], n * p->ch + c) / k : 0.0;

				xo_ref_st(dst[0], (n * p->len + l) * p->ch + c, g);
				xo_ref_st(mag[0], (n * p->len + l) * p->ch + c, fabs(g));
			}
		}
	}
	return XO_OK;
}

/* Step of the winner of row n, channel c over all len steps (the
 * max_pooling1d rule, pool_takes); *nan set when the row holds a NaN. */
static int64_t global_argmax(const struct xo_params *p, struct xo_ref_src x, int64_t n, int64_t c,
			     bool *nan)
{
	int64_t best_at = 0;
	double best = xo_ref_ld(x, n * p->len * p->ch + c);

	*nan = isnan(best);
	for (int64_t l = 1; l < p->len; l++) {
		double v = xo_ref_ld(x, (n * p->len + l) * p->ch + c);

		*nan |= isnan(v);
		if (pool_takes(best, v)) {
			best = v;
			best_at = l;
		}
	}
	return best_at;
}

/* global_max_pooling1d fwd: src {x[batch][len][ch]}, dst {y[batch][ch]},
 * y = NaN when the row holds one, else x at the first maximum over the
 * steps (a copy: exact). mag |y|. */
enum xo_status xo_ref_global_max_pooling1d_fwd_math(const struct xo_params *p,
						    const struct xo_ref_src *src,
						    const struct xo_ref_dst *dst,
						    const struct xo_ref_dst *mag)
{
	for (int64_t n = 0; n < p->batch; n++) {
		for (int64_t c = 0; c < p->ch; c++) {
			bool nan;
			int64_t at = global_argmax(p, src[0], n, c, &nan);
			double v = nan ? NAN : xo_ref_ld(src[0], (n * p->len + at) * p->ch + c);

			xo_ref_st(dst[0], n * p->ch + c, v);
			xo_ref_st(mag[0], n * p->ch + c, fabs(v));
		}
	}
	return XO_OK;
}

/* global_max_pooling1d bwd: src {x, dy[batch][ch]}, dst {dx[batch][len][ch]},
 * overwritten: dy at the winner (pool_takes) of each (sample, channel), 0
 * elsewhere; a column holding a NaN is NaN at every step (Keras's jnp.max
 * gradient, dy (x == max) / count(x == max), is 0 / 0 there). mag |dx|. */
enum xo_status xo_ref_global_max_pooling1d_bwd_math(const struct xo_params *p,
						    const struct xo_ref_src *src,
						    const struct xo_ref_dst *dst,
						    const struct xo_ref_dst *mag)
{
	for (int64_t n = 0; n < p->batch; n++) {
		for (int64_t c = 0; c < p->ch; c++) {
			bool nan;
			int64_t at = global_argmax(p, src[0], n, c, &nan);

			for (int64_t l = 0; l < p->len; l++) {
				double g = l == at ? xo_ref_ld(src[1], n * p->ch + c) : 0.0;

				g = nan ? NAN : g;

				xo_ref_st(dst[0], (n * p->len + l) * p->ch + c, g);
				xo_ref_st(mag[0], (n * p->len + l) * p->ch + c, fabs(g));
			}
		}
	}
	return XO_OK;
}
