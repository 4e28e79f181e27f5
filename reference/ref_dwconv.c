/*
 * ref_dwconv.c - reference depthwise_conv2d, forward and backward, with the
 * fused activation (conv2d's rules, ref_conv2d.c, with each input channel
 * convolved by its own depth_multiplier filters). Naive loops in the
 * mathematical order, double accumulation, one rounding per output
 * (ref_internal.h).
 *
 * Layouts (ops.def): x[batch][len][width][ch], w[kh][kw][ch][dm],
 * b[ch*dm], y[batch][out_h][out_w][ch*dm] with output channel o = c*dm + m.
 * Output (oh, ow) tap (i, j) reads input row oh*sh + i - pad_top and column
 * ow*sw + j - pad_left (dilation 1); taps outside the input read zero.
 */
#include <math.h>

#include "ref_internal.h"

/* Sizes and geometry of one depthwise_conv2d call. */
struct dwconv {
	int64_t n, h, w, ch, dm, co; /* batch, rows, columns, channels, multiplier, ch*dm */
	int64_t kh, kw, oh, ow;      /* kernel rows, columns; output rows, columns */
	int64_t pt, pl, sh, sw;      /* padding above, left; strides */
	enum xo_activation act;      /* fused activation */
	bool bias;                   /* b present */
};

static enum xo_status dwconv_init(const struct xo_params *p, struct dwconv *c)
{
	struct xo_params q = xo_params_width_axis(p);
	enum xo_status st = xo_depthwise_conv2d_geometry(p, &c->oh, &c->ow, &c->pt, &c->pl);

	if (st)
		return st;
	c->n = p->batch;
	c->h = p->len;
	c->w = p->width;
	c->ch = p->ch;
	c->dm = p->depth_multiplier;
	c->co = p->ch * p->depth_multiplier;
	c->kh = p->kernel_size;
	c->kw = q.kernel_size;
	c->sh = xo_conv1d_stride(p);
	c->sw = xo_conv1d_stride(&q);
	c->act = p->activation;
	c->bias = p->use_bias;
	return XO_OK;
}

static int64_t x_at(const struct dwconv *c, int64_t n, int64_t r, int64_t s, int64_t ci)
{
	return ((n * c->h + r) * c->w + s) * c->ch + ci;
}

/* w[i][j][ci][m] */
static int64_t w_at(const struct dwconv *c, int64_t i, int64_t j, int64_t ci, int64_t m)
{
	return ((i * c->kw + j) * c->ch + ci) * c->dm + m;
}

/* y[n][oh][ow][o] */
static int64_t y_at(const struct dwconv *c, int64_t n, int64_t oh, int64_t ow, int64_t o)
{
	return ((n * c->oh + oh) * c->ow + ow) * c->co + o;
}

/*
 * Pre-activation of output (n, oh, ow, o = ci*dm + m): the in-bounds taps
 * (i, j) in row-major order of x[..][ci] * w[i][j][ci][m], plus b[o] last.
 * *mag gets the sum of |terms| plus |b[o]|.
 */
static double dwconv_pre(const struct dwconv *c, const struct xo_ref_src *src, int64_t n,
			 int64_t oh, int64_t ow, int64_t o, double *mag)
{
	int64_t ci = o / c->dm, m = o % c->dm;
	double acc = 0.0, mg = 0.0;

	for (int64_t i = 0; i < c->kh; i++) {
		int64_t r = oh * c->sh + i - c->pt;

		if (r < 0 || r >= c->h)
			continue;
		for (int64_t j = 0; j < c->kw; j++) {
			int64_t s = ow * c->sw + j - c->pl;
			double t;

			if (s < 0 || s >= c->w)
				continue;
			t = xo_ref_ld(src[0], x_at(c, n, r, s, ci)) *
			    xo_ref_ld(src[1], w_at(c, i, j, ci, m));
			acc += t;
			mg += fabs(t);
		}
	}
	if (c->bias) {
		acc += xo_ref_ld(src[2], o);
		mg += fabs(xo_ref_ld(src[2], o));
	}
	*mag = mg;
	return xo_ref_f32_sat(acc); /* Keras's float32 overflow */
}

/*
 * Forward: y = act(pre) per output; softmax over the co outputs of each
 * (n, oh, ow) as conv2d's (max-subtracted, first maximum under `>`).
 * mag[0]: sum |x*w| + |b| of each output, before the activation.
 */
static enum xo_status dwconv_fwd(const struct dwconv *c, const struct xo_ref_src *src,
				 const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	XO_ASSERT(xo_ref_src_has(src[0]) && xo_ref_src_has(src[1]) && xo_ref_dst_has(dst[0]));
	XO_ASSERT(!c->bias || xo_ref_src_has(src[2]));
	for (int64_t n = 0; n < c->n; n++)
		for (int64_t oh = 0; oh < c->oh; oh++)
			for (int64_t ow = 0; ow < c->ow; ow++) {
				double mx = 0.0, se = 0.0, unused;

				if (c->act == XO_ACTIVATION_SOFTMAX) {
					mx = dwconv_pre(c, src, n, oh, ow, 0, &unused);
					for (int64_t o = 1; o < c->co; o++) {
						double v = dwconv_pre(c, src, n, oh, ow, o, &unused);

						if (v > mx)
							mx = v;
					}
					for (int64_t o = 0; o < c->co; o++)
						se += exp(dwconv_pre(c, src, n, oh, ow, o, &unused) - mx);
				}
				for (int64_t o = 0; o < c->co; o++) {
					double mg, v = dwconv_pre(c, src, n, oh, ow, o, &mg);

					xo_ref_st(dst[0], y_at(c, n, oh, ow, o), xo_ref_act_fused(c->act, v, mx, se));
					xo_ref_st(mag[0], y_at(c, n, oh, ow, o), mg);
				}
			}
	return XO_OK;
}

/* d loss / d pre-activation of output (n, oh, ow, o), from y and dy. */
static double dwconv_dpre(const struct dwconv *c, struct xo_ref_src y, struct xo_ref_src dy,
			  int64_t n, int64_t oh, int64_t ow, int64_t o)
{
	return xo_ref_act_grad(c->act, y, dy, y_at(c, n, oh, ow, 0), o, c->co);
}

/* The output index o whose tap k lands on input position l of an axis
 * (o*stride + k - pad == l), or -1 when there is none in [0, out). */
static int64_t tap_out(int64_t l, int64_t k, int64_t stride, int64_t pad, int64_t out)
{
	int64_t t = l + pad - k;

	if (t < 0 || t % stride)
		return -1;
	return t / stride < out ? t / stride : -1;
}

/* dx[n][r][s][ci] = sum over taps (i, j) row-major, then m, of dpre * w. */
static void dwconv_bwd_dx(const struct dwconv *c, const struct xo_ref_src *src,
			  const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	for (int64_t n = 0; n < c->n; n++)
		for (int64_t r = 0; r < c->h; r++)
			for (int64_t s = 0; s < c->w; s++)
				for (int64_t ci = 0; ci < c->ch; ci++) {
					double acc = 0.0, mg = 0.0;

					for (int64_t i = 0; i < c->kh; i++) {
						int64_t oh = tap_out(r, i, c->sh, c->pt, c->oh);

						if (oh < 0)
							continue;
						for (int64_t j = 0; j < c->kw; j++) {
							int64_t ow = tap_out(s, j, c->sw, c->pl, c->ow);

							if (ow < 0)
								continue;
							for (int64_t m = 0; m < c->dm; m++) {
								double v = dwconv_dpre(c, src[2], src[3], n, oh, ow,
										       ci * c->dm + m) *
									   xo_ref_ld(src[1], w_at(c, i, j, ci, m));

								acc += v;
								mg += fabs(v);
							}
						}
					}
					xo_ref_st(dst[0], x_at(c, n, r, s, ci), acc);
					xo_ref_st(mag[0], x_at(c, n, r, s, ci), mg);
				}
}

/* dw[i][j][ci][m] = sum over n, oh, ow of x * dpre (padding adds nothing). */
static void dwconv_bwd_dw(const struct dwconv *c, const struct xo_ref_src *src,
			  const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	for (int64_t i = 0; i < c->kh; i++)
		for (int64_t j = 0; j < c->kw; j++)
			for (int64_t ci = 0; ci < c->ch; ci++)
				for (int64_t m = 0; m < c->dm; m++) {
					double acc = 0.0, mg = 0.0;

					for (int64_t n = 0; n < c->n; n++)
						for (int64_t oh = 0; oh < c->oh; oh++) {
							int64_t r = oh * c->sh + i - c->pt;

							if (r < 0 || r >= c->h)
								continue;
							for (int64_t ow = 0; ow < c->ow; ow++) {
								int64_t s = ow * c->sw + j - c->pl;
								double v;

								if (s < 0 || s >= c->w)
									continue;
								v = xo_ref_ld(src[0], x_at(c, n, r, s, ci)) *
								    dwconv_dpre(c, src[2], src[3], n, oh, ow,
										ci * c->dm + m);
								acc += v;
								mg += fabs(v);
							}
						}
					xo_ref_st(dst[1], w_at(c, i, j, ci, m), acc);
					xo_ref_st(mag[1], w_at(c, i, j, ci, m), mg);
				}
}

/*
 * Backward. src {x, w, y, dy}, dst {dx|NULL, dw, db|NULL}, all overwritten
 * (ops.def). mag: dx sum |dpre*w|, dw sum |x*dpre|, db sum |dpre|.
 */
static enum xo_status dwconv_bwd(const struct dwconv *c, const struct xo_ref_src *src,
				 const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	XO_ASSERT(xo_ref_src_has(src[0]) && xo_ref_src_has(src[1]) && xo_ref_src_has(src[2]) &&
		  xo_ref_src_has(src[3]) && xo_ref_dst_has(dst[1]));
	if (xo_ref_dst_has(dst[0]))
		dwconv_bwd_dx(c, src, dst, mag);
	dwconv_bwd_dw(c, src, dst, mag);
	if (!xo_ref_dst_has(dst[2]))
		return XO_OK;
	for (int64_t o = 0; o < c->co; o++) {
		double acc = 0.0, mg = 0.0;

		for (int64_t n = 0; n < c->n; n++)
			for (int64_t oh = 0; oh < c->oh; oh++)
				for (int64_t ow = 0; ow < c->ow; ow++) {
					double v = dwconv_dpre(c, src[2], src[3], n, oh, ow, o);

					acc += v;
					mg += fabs(v);
				}
		xo_ref_st(dst[2], o, acc);
		xo_ref_st(mag[2], o, mg);
	}
	return XO_OK;
}

enum xo_status xo_ref_depthwise_conv2d_fwd_math(const struct xo_params *p,
						const struct xo_ref_src *src,
						const struct xo_ref_dst *dst,
						const struct xo_ref_dst *mag)
{
	struct dwconv c;
	enum xo_status st = dwconv_init(p, &c);

	return st ? st : dwconv_fwd(&c, src, dst, mag);
}

enum xo_status xo_ref_depthwise_conv2d_bwd_math(const struct xo_params *p,
						const struct xo_ref_src *src,
						const struct xo_ref_dst *dst,
						const struct xo_ref_dst *mag)
{
	struct dwconv c;
	enum xo_status st = dwconv_init(p, &c);

	return st ? st : dwconv_bwd(&c, src, dst, mag);
}
