/*
 * ref_conv.c - reference conv1d and dense, forward and backward, with the
 * fused activation. Naive loops in the mathematical order, double
 * accumulation, one rounding per output (ref_internal.h).
 *
 * Dense is conv1d with len = 1 and kernel_size = 1: x[batch][ch] is
 * x[batch][1][ch], w[ch][units] is w[1][ch][units], so both share one
 * implementation and therefore one set of rules.
 */
#include <math.h>

#include "ref_internal.h"

/* Sizes and geometry of one conv1d call. */
struct conv {
	int64_t n, len, ch, f, k; /* batch, input steps, input channels, filters, kernel */
	int64_t out, pad;         /* output steps, left zero padding */
	int64_t stride, dil;      /* stride, dilation */
	enum xo_activation act;   /* fused activation */
	bool bias;                /* b present */
};

static enum xo_status conv_init(const struct xo_params *p, struct conv *c)
{
	enum xo_status st = xo_conv1d_geometry(p, &c->out, &c->pad);

	if (st)
		return st;
	c->n = p->batch;
	c->len = p->len;
	c->ch = p->ch;
	c->f = p->filters;
	c->k = p->kernel_size;
	c->stride = xo_conv1d_stride(p);
	c->dil = p->dilation_rate;
	c->act = p->activation;
	c->bias = p->use_bias;
	return XO_OK;
}

/*
 * Pre-activation of output (n, o, f): sum over k, then over input channels,
 * of x[n][o*stride + k*dil - pad][c] * w[k][c][f], positions outside
 * [0, len) reading zero (they are skipped), plus b[f] last. *mag gets the
 * sum of |x*w| terms plus |b[f]|.
 */
static double conv_pre(const struct conv *c, struct xo_ref_src x, struct xo_ref_src w,
		       struct xo_ref_src b, int64_t n, int64_t o, int64_t f, double *mag)
{
	double acc = 0.0, m = 0.0;

	for (int64_t k = 0; k < c->k; k++) {
		int64_t pos = o * c->stride + k * c->dil - c->pad;

		if (pos < 0 || pos >= c->len)
			continue;
		for (int64_t ci = 0; ci < c->ch; ci++) {
			double t = xo_ref_ld(x, (n * c->len + pos) * c->ch + ci) *
				   xo_ref_ld(w, (k * c->ch + ci) * c->f + f);

			acc += t;
			m += fabs(t);
		}
	}
	if (c->bias) {
		acc += xo_ref_ld(b, f);
		m += fabs(xo_ref_ld(b, f));
	}
	*mag = m;
	return xo_ref_f32_sat(acc); /* Keras's float32 overflow */
}

/*
 * conv1d forward: y[n][o][f] = act(pre(n, o, f)). Softmax is over the
 * filters of each (n, o) row, max-subtracted: m = the first maximum under
 * `>` (a NaN anywhere makes the row NaN through exp), y = exp(pre - m) /
 * sum_j exp(pre_j - m); the pre-activations are recomputed rather than
 * stored (no scratch), which is the same double value every time.
 * mag[0]: sum |x*w| + |b| of each output, before the activation.
 */
static enum xo_status conv_fwd(const struct conv *c, const struct xo_ref_src *src,
			       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	struct xo_ref_src x = src[0], w = src[1], b = src[2];
	struct xo_ref_dst y = dst[0];

	XO_ASSERT(xo_ref_src_has(x) && xo_ref_src_has(w) && xo_ref_dst_has(y));
	XO_ASSERT(!c->bias || xo_ref_src_has(b));
	for (int64_t n = 0; n < c->n; n++) {
		for (int64_t o = 0; o < c->out; o++) {
			int64_t row = (n * c->out + o) * c->f;
			double m = 0.0, s = 0.0, unused;

			if (c->act == XO_ACTIVATION_SOFTMAX) {
				m = conv_pre(c, x, w, b, n, o, 0, &unused);
				for (int64_t f = 1; f < c->f; f++) {
					double v = conv_pre(c, x, w, b, n, o, f, &unused);

					if (v > m)
						m = v;
				}
				for (int64_t f = 0; f < c->f; f++)
					s += exp(conv_pre(c, x, w, b, n, o, f, &unused) - m);
			}
			for (int64_t f = 0; f < c->f; f++) {
				double mg, v = conv_pre(c, x, w, b, n, o, f, &mg);

				v = xo_ref_act_fused(c->act, v, m, s);
				xo_ref_st(y, row + f, v);
				xo_ref_st(mag[0], row + f, mg);
			}
		}
	}
	return XO_OK;
}

/* d loss / d pre-activation of output (n, o, f), from y and dy. */
static double conv_dpre(const struct conv *c, struct xo_ref_src y, struct xo_ref_src dy,
			int64_t n, int64_t o, int64_t f)
{
	return xo_ref_act_grad(c->act, y, dy, (n * c->out + o) * c->f, f, c->f);
}

/*
 * conv1d backward. src {x, w, y, dy}, dst {dx|NULL, dw, db|NULL}, all
 * overwritten. With dpre = dy * act'(from y) (xo_ref_act_grad):
 *   dx[n][l][c] = sum over k (then f) of dpre[n][o][f] * w[k][c][f], for the
 *                 o with o*stride + k*dil - pad == l, 0 <= o < out
 *   dw[k][c][f] = sum over n, o of x[n][o*stride + k*dil - pad][c] * dpre[n][o][f]
 *                 (padded positions contribute nothing)
 *   db[f]       = sum over n, o of dpre[n][o][f]
 * mag: dx sum |dpre*w|, dw sum |x*dpre|, db sum |dpre|.
 */
static enum xo_status conv_bwd(const struct conv *c, const struct xo_ref_src *src,
			       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	struct xo_ref_src x = src[0], w = src[1], y = src[2], dy = src[3];
	struct xo_ref_dst dx = dst[0], dw = dst[1], db = dst[2];

	XO_ASSERT(xo_ref_src_has(x) && xo_ref_src_has(w) && xo_ref_src_has(y) &&
		  xo_ref_src_has(dy) && xo_ref_dst_has(dw));
	if (xo_ref_dst_has(dx)) {
		for (int64_t n = 0; n < c->n; n++) {
			for (int64_t l = 0; l < c->len; l++) {
				for (int64_t ci = 0; ci < c->ch; ci++) {
					double acc = 0.0, m = 0.0;

					for (int64_t k = 0; k < c->k; k++) {
						int64_t t = l + c->pad - k * c->dil, o;

						if (t < 0 || t % c->stride)
							continue;
						o = t / c->stride;
						if (o >= c->out)
							continue;
						for (int64_t f = 0; f < c->f; f++) {
							int64_t wi = (k * c->ch + ci) * c->f + f;
							double v = conv_dpre(c, y, dy, n, o, f) *
								   xo_ref_ld(w, wi);

							acc += v;
							m += fabs(v);
						}
					}
					xo_ref_st(dx, (n * c->len + l) * c->ch + ci, acc);
					xo_ref_st(mag[0], (n * c->len + l) * c->ch + ci, m);
				}
			}
		}
	}
	for (int64_t k = 0; k < c->k; k++) {
		for (int64_t ci = 0; ci < c->ch; ci++) {
			for (int64_t f = 0; f < c->f; f++) {
				double acc = 0.0, m = 0.0;

				for (int64_t n = 0; n < c->n; n++) {
					for (int64_t o = 0; o < c->out; o++) {
						int64_t pos = o * c->stride + k * c->dil - c->pad;
						double v;

						if (pos < 0 || pos >= c->len)
							continue;
						v = xo_ref_ld(x, (n * c->len + pos) * c->ch + ci) *
						    conv_dpre(c, y, dy, n, o, f);
						acc += v;
						m += fabs(v);
					}
				}
				xo_ref_st(dw, (k * c->ch + ci) * c->f + f, acc);
				xo_ref_st(mag[1], (k * c->ch + ci) * c->f + f, m);
			}
		}
	}
	if (xo_ref_dst_has(db)) {
		for (int64_t f = 0; f < c->f; f++) {
			double acc = 0.0, m = 0.0;

			for (int64_t n = 0; n < c->n; n++) {
				for (int64_t o = 0; o < c->out; o++) {
					double v = conv_dpre(c, y, dy, n, o, f);

					acc += v;
					m += fabs(v);
				}
			}
			xo_ref_st(db, f, acc);
			xo_ref_st(mag[2], f, m);
		}
	}
	return XO_OK;
}

/* conv_fwd or conv_bwd over the geometry of p, a conv1d's or (is_dense)
 * a dense layer's, which is conv1d over one step with a kernel of one. */
static enum xo_status conv_run(const struct xo_params *p, bool is_dense,
			       enum xo_status (*fn)(const struct conv *, const struct xo_ref_src *,
						    const struct xo_ref_dst *,
						    const struct xo_ref_dst *),
			       const struct xo_ref_src *src, const struct xo_ref_dst *dst,
			       const struct xo_ref_dst *mag)
{
	struct xo_params q = *p;
	struct conv c;
	enum xo_status st;

	if (is_dense) {
		q.len = 1;
		q.kernel_size = 1;
		q.strides = 1;
		q.dilation_rate = 1;
		q.padding = XO_PADDING_VALID;
		q.filters = p->units;
	}
	st = conv_init(&q, &c);
	if (st)
		return st;
	return fn(&c, src, dst, mag);
}

/* conv1d fwd: src {x[batch][len][ch], w[kernel_size][ch][filters], b[filters]|NULL},
 * dst {y[batch][out][filters]}; out and padding by Keras rules (core geometry). */
enum xo_status xo_ref_conv1d_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				      const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return conv_run(p, false, conv_fwd, src, dst, mag);
}

/* conv1d bwd: see conv_bwd. */
enum xo_status xo_ref_conv1d_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				      const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return conv_run(p, false, conv_bwd, src, dst, mag);
}

/* dense fwd: src {x[batch][ch], w[ch][units], b[units]|NULL}, dst {y[batch][units]};
 * y[n][u] = act(sum_c x[n][c] * w[c][u] + b[u]); mag sum |x*w| + |b|. */
enum xo_status xo_ref_dense_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				     const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return conv_run(p, true, conv_fwd, src, dst, mag);
}

/* dense bwd: src {x, w, y, dy}, dst {dx|NULL, dw, db|NULL}, overwritten:
 * dx[n][c] = sum_u dpre[n][u] w[c][u], dw[c][u] = sum_n x[n][c] dpre[n][u],
 * db[u] = sum_n dpre[n][u]; mag as conv1d. */
enum xo_status xo_ref_dense_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				     const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return conv_run(p, true, conv_bwd, src, dst, mag);
}
