/*
 * pool2d.cl - the windowed 2-D poolings, max_pooling2d and average_pooling2d,
 * forward and backward, on x[batch][h][w][ch] (h is the spec's len),
 * y[batch][out_h][out_w][ch]. Window (oh, ow) covers rows oh*sh - ph .. + kh - 1
 * and columns ow*sw - pw .. + kw - 1; cells outside the input are skipped.
 * Max: NaN when a cell is NaN, else the maximum; the gradient to the winner
 * of XLA's select scan in row-major order (pool.cl). Average: (sum of the in-bounds cells in
 * row-major order) / their count (Keras averages the valid cells only). The
 * global 2-D poolings run pool.cl's global kernels over h*w steps.
 * Uses xo_pool_windows from pool.cl (the programs are built as one source).
 */

/* In-bounds rows [*r0, *r1) and columns [*s0, *s1) of window (oh, ow);
 * returns the cell count. */
static inline int xo_pool2d_window(int oh, int ow, int h, int w, int kh, int kw, int sh,
				   int sw, int ph, int pw, int *r0, int *r1, int *s0, int *s1)
{
	int rs = oh * sh - ph, ss = ow * sw - pw;

	*r0 = rs < 0 ? 0 : rs;
	*r1 = rs + kh > h ? h : rs + kh;
	*s0 = ss < 0 ? 0 : ss;
	*s1 = ss + kw > w ? w : ss + kw;
	return (*r1 - *r0) * (*s1 - *s0);
}

/* Cell r * w + s of the winner of window (oh, ow) of a channel's strided
 * plane xr (xr[(r * w + s) * ch] is cell (r, s)) under XLA's select, in
 * row-major order (pool.cl); *val the window's value: NaN when a cell is
 * NaN, else the maximum. */
static inline int xo_pool2d_argmax(__global const float *xr, int oh, int ow, int h, int w,
				   int ch, int kh, int kw, int sh, int sw, int ph, int pw,
				   float *val)
{
	int r0, r1, s0, s1, best;
	float m, v;

	xo_pool2d_window(oh, ow, h, w, kh, kw, sh, sw, ph, pw, &r0, &r1, &s0, &s1);
	best = r0 * w + s0;
	m = v = xr[best * ch];
	for (int r = r0; r < r1; r++)
		for (int s = s0; s < s1; s++) {
			float x = xr[(r * w + s) * ch];

			if (!(m >= x)) {
				m = x;
				best = r * w + s;
			}
			v = x > v || isnan(x) ? x : v;
		}
	*val = v;
	return best;
}

/* One work-item per y[n][oh][ow][c], 3-D range (c, oh*out_w + ow, n). */
__kernel void xo_cl_max_pooling2d_fwd(__global const float *x, int xo, __global float *y, int yo,
				      int batch, int h, int w, int ch, int kh, int kw, int sh,
				      int sw, int ph, int pw, int out_h, int out_w)
{
	int c = get_global_id(0), o = get_global_id(1), n = get_global_id(2);
	__global const float *xr;
	float v;

	if (c >= ch || o >= out_h * out_w || n >= batch)
		return;
	xr = x + xo + n * h * w * ch + c;
	xo_pool2d_argmax(xr, o / out_w, o % out_w, h, w, ch, kh, kw, sh, sw, ph, pw, &v);
	y[yo + (n * out_h * out_w + o) * ch + c] = v;
}

/* One work-item per dx[n][r][s][c], 3-D range (c, r*w + s, n): the sum of dy
 * over the windows (row-major order) that hold (r, s) and whose winner
 * it is (a gather: no atomics, dx overwritten). */
__kernel void xo_cl_max_pooling2d_bwd(__global const float *x, int xo, __global const float *dy,
				      int dyo, __global float *dx, int dxo, int batch, int h,
				      int w, int ch, int kh, int kw, int sh, int sw, int ph, int pw,
				      int out_h, int out_w)
{
	int c = get_global_id(0), e = get_global_id(1), n = get_global_id(2);
	int r, s, oh_lo, oh_hi, ow_lo, ow_hi;
	__global const float *xr;
	float acc = 0.0f, v;

	if (c >= ch || e >= h * w || n >= batch)
		return;
	r = e / w;
	s = e % w;
	xr = x + xo + n * h * w * ch + c;
	xo_pool_windows(r, kh, sh, ph, out_h, &oh_lo, &oh_hi);
	xo_pool_windows(s, kw, sw, pw, out_w, &ow_lo, &ow_hi);
	for (int oh = oh_lo; oh <= oh_hi; oh++) {
		if (oh * sh - ph + kh - 1 < r)
			continue;
		for (int ow = ow_lo; ow <= ow_hi; ow++)
			if (ow * sw - pw + kw - 1 >= s &&
			    xo_pool2d_argmax(xr, oh, ow, h, w, ch, kh, kw, sh, sw, ph, pw, &v) == e)
				acc += dy[dyo + ((n * out_h + oh) * out_w + ow) * ch + c];
	}
	dx[dxo + (n * h * w + e) * ch + c] = acc;
}

/* One work-item per y[n][oh][ow][c], 3-D range (c, oh*out_w + ow, n). The
 * division is OpenCL's (2.5 ulp; exact for a power-of-2 count). */
__kernel void xo_cl_average_pooling2d_fwd(__global const float *x, int xo, __global float *y,
					  int yo, int batch, int h, int w, int ch, int kh, int kw,
					  int sh, int sw, int ph, int pw, int out_h, int out_w)
{
	int c = get_global_id(0), o = get_global_id(1), n = get_global_id(2);
	int r0, r1, s0, s1, cnt;
	__global const float *xr;
	float acc = 0.0f;

	if (c >= ch || o >= out_h * out_w || n >= batch)
		return;
	xr = x + xo + n * h * w * ch + c;
	cnt = xo_pool2d_window(o / out_w, o % out_w, h, w, kh, kw, sh, sw, ph, pw, &r0, &r1, &s0,
			       &s1);
	for (int r = r0; r < r1; r++)
		for (int s = s0; s < s1; s++)
			acc += xr[(r * w + s) * ch];
	y[yo + (n * out_h * out_w + o) * ch + c] = acc / (float)cnt;
}

/* One work-item per dx[n][r][s][c], 3-D range (c, r*w + s, n): the sum over
 * the windows holding (r, s), in row-major order, of dy / count (a gather;
 * 0 where no window holds the cell). */
__kernel void xo_cl_average_pooling2d_bwd(__global const float *dy, int dyo, __global float *dx,
					  int dxo, int batch, int h, int w, int ch, int kh, int kw,
					  int sh, int sw, int ph, int pw, int out_h, int out_w)
{
	int c = get_global_id(0), e = get_global_id(1), n = get_global_id(2);
	int r, s, oh_lo, oh_hi, ow_lo, ow_hi, r0, r1, s0, s1;
	float acc = 0.0f;

	if (c >= ch || e >= h * w || n >= batch)
		return;
	r = e / w;
	s = e % w;
	xo_pool_windows(r, kh, sh, ph, out_h, &oh_lo, &oh_hi);
	xo_pool_windows(s, kw, sw, pw, out_w, &ow_lo, &ow_hi);
	for (int oh = oh_lo; oh <= oh_hi; oh++)
		for (int ow = ow_lo; ow <= ow_hi; ow++) {
			int cnt = xo_pool2d_window(oh, ow, h, w, kh, kw, sh, sw, ph, pw, &r0, &r1,
						   &s0, &s1);

			if (r >= r0 && r < r1 && s >= s0 && s < s1)
				acc += dy[dyo + ((n * out_h + oh) * out_w + ow) * ch + c] /
				       (float)cnt;
		}
	dx[dxo + (n * h * w + e) * ch + c] = acc;
}
