/*
 * ref_conv2d.c - reference conv2d, forward and backward, with the fused
 * activation (the rules of conv1d's, ref_conv.c, on two axes). Naive loops in
 * the mathematical order, double accumulation, one rounding per output
 * (ref_internal.h).
 *
 * Layouts (ops.def): x[batch][len][width][ch] (len is the height),
 * w[kh][kw][ch][filters] (Keras 3 Conv2D kernel), b[filters],
 * y[batch][out_h][out_w][filters]. Output (oh, ow) tap (i, j) reads input row
 * oh*sh + i*dh - pad_top and column ow*sw + j*dw - pad_left; taps outside the
 * input read zero (they are skipped). Geometry from xo_conv2d_geometry.
 */
#include <math.h>

#include "ref_internal.h"

/* Sizes and geometry of one conv2d call. */
struct conv2d {
	int64_t n, h, w, ch, f;   /* batch, input rows, input columns, channels, filters */
	int64_t kh, kw;           /* kernel rows, columns */
	int64_t oh, ow;           /* output rows, columns */
	int64_t pt, pl;           /* zero padding above, left */
	int64_t sh, sw, dh, dw;   /* strides, dilations per axis */
	enum xo_activation act;   /* fused activation */
	bool bias;                /* b present */
};

static enum xo_status conv2d_init(const struct xo_params *p, struct conv2d *c)
{
	struct xo_params q = xo_params_width_axis(p);
	enum xo_status st = xo_conv2d_geometry(p, &c->oh, &c->ow, &c->pt, &c->pl);

	if (st)
		return st;
	c->n = p->batch;
	c->h = p->len;
	c->w = p->width;
	c->ch = p->ch;
	c->f = p->filters;
	c->kh = p->kernel_size;
	c->kw = q.kernel_size;
	c->sh = xo_conv1d_stride(p);
	c->sw = xo_conv1d_stride(&q);
	c->dh = p->dilation_rate;
	c->dw = q.dilation_rate;
	c->act = p->activation;
	c->bias = p->use_bias;
	return XO_OK;
}

/* Index of x[n][r][s][ci] and of w[i][j][ci][f]. */
static int64_t x_at(const struct conv2d *c, int64_t n, int64_t r, int64_t s, int64_t ci)
{
	return ((n * c->h + r) * c->w + s) * c->ch + ci;
}

static int64_t w_at(const struct conv2d *c, int64_t i, int64_t j, int64_t ci, int64_t f)
{
	return ((i * c->kw + j) * c->ch + ci) * c->f + f;
}

/* Row (n, oh, ow) of y/dy: the index of its filter 0. */
static int64_t y_row(const struct conv2d *c, int64_t n, int64_t oh, int64_t ow)
{
	return ((n * c->oh + oh) * c->ow + ow) * c->f;
}

/*
 * Pre-activation of output (n, oh, ow, f): sum over taps (i, j) in row-major
 * order, then over input channels, of x * w, in-bounds taps only, plus b[f]
 * last. *mag gets the sum of |x*w| terms plus |b[f]|.
 */
static double conv2d_pre(const struct conv2d *c, struct xo_ref_src x, struct xo_ref_src w,
			 struct xo_ref_src b, int64_t n, int64_t oh, int64_t ow, int64_t f,
			 double *mag)
{
	double acc = 0.0, m = 0.0;

	for (int64_t i = 0; i < c->kh; i++) {
		int64_t r = oh * c->sh + i * c->dh - c->pt;

		if (r < 0 || r >= c->h)
			continue;
		for (int64_t j = 0; j < c->kw; j++) {
			int64_t s = ow * c->sw + j * c->dw - c->pl;

			if (s < 0 || s >= c->w)
				continue;
			for (int64_t ci = 0; ci < c->ch; ci++) {
				double t = xo_ref_ld(x, x_at(c, n, r, s, ci)) *
					   xo_ref_ld(w, w_at(c, i, j, ci, f));

				acc += t;
				m += fabs(t);
			}
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
 * conv2d forward: y[n][oh][ow][f] = act(pre(n, oh, ow, f)); softmax over the
 * filters of each (n, oh, ow) row exactly as conv1d's (max-subtracted, first
 * maximum under `>`, pre-activations recomputed). mag[0]: sum |x*w| + |b| of
 * each output, before the activation.
 */
static enum xo_status conv2d_fwd(const struct conv2d *c, const struct xo_ref_src *src,
				 const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	struct xo_ref_src x = src[0], w = src[1], b = src[2];
	struct xo_ref_dst y = dst[0];

	XO_ASSERT(xo_ref_src_has(x) && xo_ref_src_has(w) && xo_ref_dst_has(y));
	XO_ASSERT(!c->bias || xo_ref_src_has(b));
	for (int64_t n = 0; n < c->n; n++) {
		for (int64_t oh = 0; oh < c->oh; oh++) {
			for (int64_t ow = 0; ow < c->ow; ow++) {
				int64_t row = y_row(c, n, oh, ow);
				double m = 0.0, s = 0.0, unused;

				if (c->act == XO_ACTIVATION_SOFTMAX) {
					m = conv2d_pre(c, x, w, b, n, oh, ow, 0, &unused);
					for (int64_t f = 1; f < c->f; f++) {
						double v = conv2d_pre(c, x, w, b, n, oh, ow, f,
								      &unused);

						if (v > m)
							m = v;
					}
					for (int64_t f = 0; f < c->f; f++)
						s += exp(conv2d_pre(c, x, w, b, n, oh, ow, f,
								    &unused) -
							 m);
				}
				for (int64_t f = 0; f < c->f; f++) {
					double mg, v = conv2d_pre(c, x, w, b, n, oh, ow, f, &mg);

					v = xo_ref_act_fused(c->act, v, m, s);
					xo_ref_st(y, row + f, v);
					xo_ref_st(mag[0], row + f, mg);
				}
			}
		}
	}
	return XO_OK;
}

/* d loss / d pre-activation of output (n, oh, ow, f), from y and dy. */
static double conv2d_dpre(const struct conv2d *c, struct xo_ref_src y, struct xo_ref_src dy,
			  int64_t n, int64_t oh, int64_t ow, int64_t f)
{
	return xo_ref_act_grad(c->act, y, dy, y_row(c, n, oh, ow), f, c->f);
}

/* The output index o whose tap k lands on input position l of an axis
 * (o*stride + k*dil - pad == l), or -1 when there is none in [0, out). */
static int64_t tap_out(int64_t l, int64_t k, int64_t stride, int64_t dil, int64_t pad,
		       int64_t out)
{
	int64_t t = l + pad - k * dil;

	if (t < 0 || t % stride)
		return -1;
	return t / stride < out ? t / stride : -1;
}

/*
 * conv2d backward. src {x, w, y, dy}, dst {dx|NULL, dw, db|NULL}, all
 * overwritten. With dpre = dy * act'(from y) (xo_ref_act_grad):
 *   dx[n][r][s][c] = sum over taps (i, j) row-major, then f, of
 *                    dpre[n][oh][ow][f] * w[i][j][c][f] for the (oh, ow)
 *                    whose tap (i, j) lands on (r, s)
 *   dw[i][j][c][f] = sum over n, oh, ow of x[n][r][s][c] * dpre[n][oh][ow][f]
 *                    (padded positions contribute nothing)
 *   db[f]          = sum over n, oh, ow of dpre[n][oh][ow][f]
 * mag: dx sum |dpre*w|, dw sum |x*dpre|, db sum |dpre|.
 */
static enum xo_status conv2d_bwd(const struct conv2d *c, const struct xo_ref_src *src,
				 const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	struct xo_ref_src x = src[0], w = src[1], y = src[2], dy = src[3];
	struct xo_ref_dst dx = dst[0], dw = dst[1], db = dst[2];

	XO_ASSERT(xo_ref_src_has(x) && xo_ref_src_has(w) && xo_ref_src_has(y) &&
		  xo_ref_src_has(dy) && xo_ref_dst_has(dw));
	if (xo_ref_dst_has(dx)) {
		for (int64_t n = 0; n < c->n; n++)
			for (int64_t r = 0; r < c->h; r++)
				for (int64_t s = 0; s < c->w; s++)
					for (int64_t ci = 0; ci < c->ch; ci++) {
						double acc = 0.0, m = 0.0;

						for (int64_t i = 0; i < c->kh; i++) {
							int64_t oh = tap_out(r, i, c->sh, c->dh,
									     c->pt, c->oh);

							if (oh < 0)
								continue;
							for (int64_t j = 0; j < c->kw; j++) {
								int64_t ow = tap_out(s, j, c->sw, c->dw,
										     c->pl, c->ow);

								if (ow < 0)
									continue;
								for (int64_t f = 0; f < c->f; f++) {
									double v =
									    conv2d_dpre(c, y, dy, n, oh,
											ow, f) *
									    xo_ref_ld(w, w_at(c, i, j, ci, f));

									acc += v;
									m += fabs(v);
								}
							}
						}
						xo_ref_st(dx, x_at(c, n, r, s, ci), acc);
						xo_ref_st(mag[0], x_at(c, n, r, s, ci), m);
					}
	}
	for (int64_t i = 0; i < c->kh; i++)
		for (int64_t j = 0; j < c->kw; j++)
			for (int64_t ci = 0; ci < c->ch; ci++)
				for (int64_t f = 0; f < c->f; f++) {
					double acc = 0.0, m = 0.0;

					for (int64_t n = 0; n < c->n; n++)
						for (int64_t oh = 0; oh < c->oh; oh++) {
							int64_t r = oh * c->sh + i * c->dh - c->pt;

							if (r < 0 || r >= c->h)
								continue;
							for (int64_t ow = 0; ow < c->ow; ow++) {
								int64_t s = ow * c->sw + j * c->dw - c->pl;
								double v;

								if (s < 0 || s >= c->w)
									continue;
								v = xo_ref_ld(x, x_at(c, n, r, s, ci)) *
								    conv2d_dpre(c, y, dy, n, oh, ow, f);
								acc += v;
								m += fabs(v);
							}
						}
					xo_ref_st(dw, w_at(c, i, j, ci, f), acc);
					xo_ref_st(mag[1], w_at(c, i, j, ci, f), m);
				}
	if (xo_ref_dst_has(db)) {
		for (int64_t f = 0; f < c->f; f++) {
			double acc = 0.0, m = 0.0;

			for (int64_t n = 0; n < c->n; n++)
				for (int64_t oh = 0; oh < c->oh; oh++)
					for (int64_t ow = 0; ow < c->ow; ow++) {
						double v = conv2d_dpre(c, y, dy, n, oh, ow, f);

						acc += v;
						m += fabs(v);
					}
			xo_ref_st(db, f, acc);
			xo_ref_st(mag[2], f, m);
		}
	}
	return XO_OK;
}

/* conv2d fwd: src {x[batch][len][width][ch], w[kh][kw][ch][filters],
 * b[filters]|NULL}, dst {y[batch][out_h][out_w][filters]}. */
enum xo_status xo_ref_conv2d_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				      const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	struct conv2d c;
	enum xo_status st = conv2d_init(p, &c);

	return st ? st : conv2d_fwd(&c, src, dst, mag);
}

/* conv2d bwd: see conv2d_bwd. */
enum xo_status xo_ref_conv2d_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				      const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	struct conv2d c;
	enum xo_status st = conv2d_init(p, &c);

	return st ? st : conv2d_bwd(&c, src, dst, mag);
}
