/*
 * ref_convt.c - reference conv2d_transpose, forward and backward, with the
 * fused activation (conv2d's rules, ref_conv2d.c). Naive loops in the
 * mathematical order, double accumulation, one rounding per output
 * (ref_internal.h).
 *
 * Layouts (ops.def): x[batch][len][width][ch], w[kh][kw][filters][ch],
 * b[filters], y[batch][out_h][out_w][filters]. Input position (r, s) tap
 * (i, j) lands on output (r*sh + i - pad_top, s*sw + j - pad_left)
 * (xo_conv2d_transpose_geometry); taps landing outside y are dropped.
 */
#include <math.h>

#include "ref_internal.h"

/* Sizes and geometry of one conv2d_transpose call. */
struct convt {
	int64_t n, h, w, ch, f;  /* batch, rows, columns, channels, filters */
	int64_t kh, kw, oh, ow;  /* kernel rows, columns; output rows, columns */
	int64_t pt, pl, sh, sw;  /* offsets above, left; strides */
	enum xo_activation act;  /* fused activation */
	bool bias;               /* b present */
};

static enum xo_status convt_init(const struct xo_params *p, struct convt *c)
{
	struct xo_params q = xo_params_width_axis(p);
	enum xo_status st = xo_conv2d_transpose_geometry(p, &c->oh, &c->ow, &c->pt, &c->pl);

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
	c->act = p->activation;
	c->bias = p->use_bias;
	return XO_OK;
}

static int64_t x_at(const struct convt *c, int64_t n, int64_t r, int64_t s, int64_t ci)
{
	return ((n * c->h + r) * c->w + s) * c->ch + ci;
}

/* w[i][j][f][ci] */
static int64_t w_at(const struct convt *c, int64_t i, int64_t j, int64_t f, int64_t ci)
{
	return ((i * c->kw + j) * c->f + f) * c->ch + ci;
}

/* y[n][oh][ow][f] */
static int64_t y_at(const struct convt *c, int64_t n, int64_t oh, int64_t ow, int64_t f)
{
	return ((n * c->oh + oh) * c->ow + ow) * c->f + f;
}

/*
 * Pre-activation of output (n, oh, ow, f): over input rows r ascending whose
 * tap i = oh + pt - r*sh is in the kernel, columns s likewise, channels ci,
 * the terms x[n][r][s][ci] * w[i][j][f][ci]; b[f] last. *mag gets the sum of
 * |terms| plus |b[f]|.
 */
static double convt_pre(const struct convt *c, const struct xo_ref_src *src, int64_t n,
			int64_t oh, int64_t ow, int64_t f, double *mag)
{
	double acc = 0.0, mg = 0.0;

	for (int64_t r = 0; r < c->h; r++) {
		int64_t i = oh + c->pt - r * c->sh;

		if (i < 0 || i >= c->kh)
			continue;
		for (int64_t s = 0; s < c->w; s++) {
			int64_t j = ow + c->pl - s * c->sw;

			if (j < 0 || j >= c->kw)
				continue;
			for (int64_t ci = 0; ci < c->ch; ci++) {
				double t = xo_ref_ld(src[0], x_at(c, n, r, s, ci)) *
					   xo_ref_ld(src[1], w_at(c, i, j, f, ci));

				acc += t;
				mg += fabs(t);
			}
		}
	}
	if (c->bias) {
		acc += xo_ref_ld(src[2], f);
		mg += fabs(xo_ref_ld(src[2], f));
	}
	*mag = mg;
	return xo_ref_f32_sat(acc); /* Keras's float32 overflow */
}

/*
 * Forward: y = act(pre) per output; softmax over the filters of each
 * (n, oh, ow) as conv2d's (max-subtracted, first maximum under `>`).
 * mag[0]: sum |x*w| + |b| of each output, before the activation.
 */
static enum xo_status convt_fwd(const struct convt *c, const struct xo_ref_src *src,
				const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	XO_ASSERT(xo_ref_src_has(src[0]) && xo_ref_src_has(src[1]) && xo_ref_dst_has(dst[0]));
	XO_ASSERT(!c->bias || xo_ref_src_has(src[2]));
	for (int64_t n = 0; n < c->n; n++)
		for (int64_t oh = 0; oh < c->oh; oh++)
			for (int64_t ow = 0; ow < c->ow; ow++) {
				double mx = 0.0, se = 0.0, unused;

				if (c->act == XO_ACTIVATION_SOFTMAX) {
					mx = convt_pre(c, src, n, oh, ow, 0, &unused);
					for (int64_t f = 1; f < c->f; f++) {
						double v = convt_pre(c, src, n, oh, ow, f, &unused);

						if (v > mx)
							mx = v;
					}
					for (int64_t f = 0; f < c->f; f++)
						se += exp(convt_pre(c, src, n, oh, ow, f, &unused) - mx);
				}
				for (int64_t f = 0; f < c->f; f++) {
					double mg, v = convt_pre(c, src, n, oh, ow, f, &mg);

					xo_ref_st(dst[0], y_at(c, n, oh, ow, f), xo_ref_act_fused(c->act, v, mx, se));
					xo_ref_st(mag[0], y_at(c, n, oh, ow, f), mg);
				}
			}
	return XO_OK;
}

/* d loss / d pre-activation of output (n, oh, ow, f), from y and dy. */
static double convt_dpre(const struct convt *c, struct xo_ref_src y, struct xo_ref_src dy,
			 int64_t n, int64_t oh, int64_t ow, int64_t f)
{
	return xo_ref_act_grad(c->act, y, dy, y_at(c, n, oh, ow, 0), f, c->f);
}

/* The output position input position l's tap k lands on, or -1 outside
 * [0, out). */
static int64_t tap_lands(int64_t l, int64_t k, int64_t stride, int64_t pad, int64_t out)
{
	int64_t o = l * stride + k - pad;

	return o >= 0 && o < out ? o : -1;
}

/* dx[n][r][s][ci] = sum over taps (i, j) row-major landing in y, then f, of
 * dpre * w. */
static void convt_bwd_dx(const struct convt *c, const struct xo_ref_src *src,
			 const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	for (int64_t n = 0; n < c->n; n++)
		for (int64_t r = 0; r < c->h; r++)
			for (int64_t s = 0; s < c->w; s++)
				for (int64_t ci = 0; ci < c->ch; ci++) {
					double acc = 0.0, mg = 0.0;

					for (int64_t i = 0; i < c->kh; i++) {
						int64_t oh = tap_lands(r, i, c->sh, c->pt, c->oh);

						if (oh < 0)
							continue;
						for (int64_t j = 0; j < c->kw; j++) {
							int64_t ow = tap_lands(s, j, c->sw, c->pl, c->ow);

							if (ow < 0)
								continue;
							for (int64_t f = 0; f < c->f; f++) {
								double v = convt_dpre(c, src[2], src[3], n, oh, ow, f) *
									   xo_ref_ld(src[1], w_at(c, i, j, f, ci));

								acc += v;
								mg += fabs(v);
							}
						}
					}
					xo_ref_st(dst[0], x_at(c, n, r, s, ci), acc);
					xo_ref_st(mag[0], x_at(c, n, r, s, ci), mg);
				}
}

/* dw[i][j][f][ci] = sum over n, r, s (taps landing in y) of x * dpre. */
static void convt_bwd_dw(const struct convt *c, const struct xo_ref_src *src,
			 const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	for (int64_t i = 0; i < c->kh; i++)
		for (int64_t j = 0; j < c->kw; j++)
			for (int64_t f = 0; f < c->f; f++)
				for (int64_t ci = 0; ci < c->ch; ci++) {
					double acc = 0.0, mg = 0.0;

					for (int64_t n = 0; n < c->n; n++)
						for (int64_t r = 0; r < c->h; r++) {
							int64_t oh = tap_lands(r, i, c->sh, c->pt, c->oh);

							if (oh < 0)
								continue;
							for (int64_t s = 0; s < c->w; s++) {
								int64_t ow = tap_lands(s, j, c->sw, c->pl, c->ow);
								double v;

								if (ow < 0)
									continue;
								v = xo_ref_ld(src[0], x_at(c, n, r, s, ci)) *
								    convt_dpre(c, src[2], src[3], n, oh, ow, f);
								acc += v;
								mg += fabs(v);
							}
						}
					xo_ref_st(dst[1], w_at(c, i, j, f, ci), acc);
					xo_ref_st(mag[1], w_at(c, i, j, f, ci), mg);
				}
}

/*
 * Backward. src {x, w, y, dy}, dst {dx|NULL, dw, db|NULL}, all overwritten
 * (ops.def). mag: dx sum |dpre*w|, dw sum |x*dpre|, db sum |dpre|.
 */
static enum xo_status convt_bwd(const struct convt *c, const struct xo_ref_src *src,
				const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	XO_ASSERT(xo_ref_src_has(src[0]) && xo_ref_src_has(src[1]) && xo_ref_src_has(src[2]) &&
		  xo_ref_src_has(src[3]) && xo_ref_dst_has(dst[1]));
	if (xo_ref_dst_has(dst[0]))
		convt_bwd_dx(c, src, dst, mag);
	convt_bwd_dw(c, src, dst, mag);
	if (!xo_ref_dst_has(dst[2]))
		return XO_OK;
	for (int64_t f = 0; f < c->f; f++) {
		double acc = 0.0, mg = 0.0;

		for (int64_t n = 0; n < c->n; n++)
			for (int64_t oh = 0; oh < c->oh; oh++)
				for (int64_t ow = 0; ow < c->ow; ow++) {
					double v = convt_dpre(c, src[2], src[3], n, oh, ow, f);

					acc += v;
					mg += fabs(v);
				}
		xo_ref_st(dst[2], f, acc);
		xo_ref_st(mag[2], f, mg);
	}
	return XO_OK;
}

enum xo_status xo_ref_conv2d_transpose_fwd_math(const struct xo_params *p,
						const struct xo_ref_src *src,
						const struct xo_ref_dst *dst,
						const struct xo_ref_dst *mag)
{
	struct convt c;
	enum xo_status st = convt_init(p, &c);

	return st ? st : convt_fwd(&c, src, dst, mag);
}

enum xo_status xo_ref_conv2d_transpose_bwd_math(const struct xo_params *p,
						const struct xo_ref_src *src,
						const struct xo_ref_dst *dst,
						const struct xo_ref_dst *mag)
{
	struct convt c;
	enum xo_status st = convt_init(p, &c);

	return st ? st : convt_bwd(&c, src, dst, mag);
}
