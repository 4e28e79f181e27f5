/*
 * conv2d.cl - conv2d forward and backward, channels-last, Keras layouts:
 * x[batch][h][w][ch] (h is the spec's len), w[kh][kw][ch][filters],
 * b[filters], y[batch][oh][ow][filters]. Geometry (out sizes, padding above
 * and left, strides, dilations per axis) comes from the host
 * (xo_conv2d_geometry); taps outside the input read as zero.
 *
 * As conv.cl: forward is one launch with bias and elementwise activation
 * fused (softmax by a second row launch); backward is a dx launch and a dw+db
 * launch, d loss / d pre-activation recomputed from y and dy (or read from a
 * dpre buffer, then act = linear). Every sum runs in a fixed order per
 * output, so integer fills are exact. No local memory, no barriers.
 *
 * Every kernel takes the geometry ints in one order (G2D below).
 */
#define XO_G2D_ARGS                                                                      \
	int batch, int h, int wd, int ch, int filters, int kh, int kw, int sh, int sw, int dh, \
	    int dw_, int pt, int pl, int oh_n, int ow_n, int act

/* One work-item per y[n][oh][ow][f]: a 3-D range (f, oh*ow_n + ow, n). Taps
 * in row-major (i, j) order, then channels, bias last. */
__kernel void xo_cl_conv2d_fwd(__global const float *x, int xo, __global const float *w, int wo,
			       __global const float *b, int bo, int has_bias, __global float *y,
			       int yo, XO_G2D_ARGS)
{
	int f = get_global_id(0), pix = get_global_id(1), n = get_global_id(2);
	float acc = 0.0f;
	int oh, ow;

	if (f >= filters || pix >= oh_n * ow_n || n >= batch)
		return;
	oh = pix / ow_n;
	ow = pix - oh * ow_n;
	for (int i = 0; i < kh; i++) {
		int r = oh * sh - pt + i * dh;

		if (r < 0 || r >= h)
			continue;
		for (int j = 0; j < kw; j++) {
			int s = ow * sw - pl + j * dw_;
			__global const float *xr, *wr;

			if (s < 0 || s >= wd)
				continue;
			xr = x + xo + ((n * h + r) * wd + s) * ch;
			wr = w + wo + (i * kw + j) * ch * filters + f;
			for (int c = 0; c < ch; c++)
				acc += xr[c] * wr[c * filters];
		}
	}
	if (has_bias)
		acc += b[bo + f];
	y[yo + (n * oh_n * ow_n + pix) * filters + f] = xo_act(acc, act);
}

/* The output index whose tap k lands on input position l of one axis
 * (o*stride - pad + k*dil == l), or -1 when there is none in [0, out). */
static inline int xo_conv2d_tap_out(int l, int k, int stride, int dil, int pad, int out)
{
	int t = l + pad - k * dil;

	if (t < 0)
		return -1;
	if (stride != 1) {
		if (t % stride)
			return -1;
		t /= stride;
	}
	return t < out ? t : -1;
}

/* One work-item per dx[n][r][s][c], 3-D range (c, r*wd + s, n): a gather over
 * the taps (i, j), row-major, whose output lands on (r, s), then filters. */
__kernel void xo_cl_conv2d_bwd_dx(__global const float *w, int wo, __global const float *y,
				  int yo, __global const float *dy, int dyo, __global float *dx,
				  int dxo, XO_G2D_ARGS)
{
	int c = get_global_id(0), pix = get_global_id(1), n = get_global_id(2);
	float acc = 0.0f;
	int r, s;

	if (c >= ch || pix >= h * wd || n >= batch)
		return;
	r = pix / wd;
	s = pix - r * wd;
	for (int i = 0; i < kh; i++) {
		int oh = xo_conv2d_tap_out(r, i, sh, dh, pt, oh_n);

		if (oh < 0)
			continue;
		for (int j = 0; j < kw; j++) {
			int ow = xo_conv2d_tap_out(s, j, sw, dw_, pl, ow_n);
			int row;

			if (ow < 0)
				continue;
			row = ((n * oh_n + oh) * ow_n + ow) * filters;
			for (int f = 0; f < filters; f++)
				acc += xo_act_grad(y[yo + row + f], dy[dyo + row + f], act) *
				       w[wo + ((i * kw + j) * ch + c) * filters + f];
		}
	}
	dx[dxo + (n * h * wd + pix) * ch + c] = acc;
}

/* The outputs [*lo, *hi] of one axis whose tap at offset base = k*dil - pad
 * reads inside [0, len): o*stride + base in [0, len). Empty when *hi < *lo. */
static inline void xo_conv2d_tap_range(int base, int len, int stride, int out, int *lo, int *hi)
{
	int r = len - 1 - base;

	*lo = base >= 0 ? 0 : (stride - 1 - base) / stride;
	*hi = r < 0 ? -1 : min(r / stride, out - 1);
}

/* Work-items [0, kh*kw*ch*filters) make dw[i][j][c][f]; the next `filters`
 * work-items (when has_db) make db[f]. Each sums over n, then oh, then ow. */
__kernel void xo_cl_conv2d_bwd_dw(__global const float *x, int xo, __global const float *y,
				  int yo, __global const float *dy, int dyo, __global float *dw,
				  int dwo, __global float *db, int dbo, int has_db, XO_G2D_ARGS)
{
	int gid = get_global_id(0);
	int nw = kh * kw * ch * filters;
	float acc = 0.0f;

	if (gid < nw) {
		int f = gid % filters;
		int c = (gid / filters) % ch;
		int tap = gid / (filters * ch);
		int i = tap / kw, j = tap - (tap / kw) * kw;
		int bh = i * dh - pt, bw = j * dw_ - pl;
		int oh_lo, oh_hi, ow_lo, ow_hi;

		xo_conv2d_tap_range(bh, h, sh, oh_n, &oh_lo, &oh_hi);
		xo_conv2d_tap_range(bw, wd, sw, ow_n, &ow_lo, &ow_hi);
		for (int n = 0; n < batch; n++)
			for (int oh = oh_lo; oh <= oh_hi; oh++)
				for (int ow = ow_lo; ow <= ow_hi; ow++) {
					int k = ((n * oh_n + oh) * ow_n + ow) * filters + f;
					int r = oh * sh + bh, s = ow * sw + bw;

					acc += x[xo + ((n * h + r) * wd + s) * ch + c] *
					       xo_act_grad(y[yo + k], dy[dyo + k], act);
				}
		dw[dwo + gid] = acc;
	} else if (has_db && gid < nw + filters) {
		int f = gid - nw;

		for (int k = f; k < batch * oh_n * ow_n * filters; k += filters)
			acc += xo_act_grad(y[yo + k], dy[dyo + k], act);
		db[dbo + f] = acc;
	}
}
