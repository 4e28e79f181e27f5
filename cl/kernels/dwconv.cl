/*
 * dwconv.cl - depthwise_conv2d forward and backward, channels-last, Keras
 * layouts: x[batch][h][w][ch], w[kh][kw][ch][dm], b[ch*dm],
 * y[batch][oh][ow][ch*dm] with output channel o = c*dm + m. Geometry from
 * the host (xo_depthwise_conv2d_geometry, dilation 1); taps outside the
 * input read as zero. Uses conv2d.cl's tap helpers (an earlier file of the
 * program).
 *
 * As conv2d.cl: forward is one launch with bias and elementwise activation
 * fused (softmax by a second row launch); backward is a dx launch and a
 * dw+db launch, d loss / d pre-activation recomputed from y and dy (or read
 * from a dpre buffer, then act = linear). Every sum runs in a fixed order
 * per output, so integer fills are exact. No local memory, no barriers.
 */
#define XO_GDW_ARGS                                                                      \
	int batch, int h, int wd, int ch, int dm, int kh, int kw, int sh, int sw, int pt,    \
	    int pl, int oh_n, int ow_n, int act

/* One work-item per y[n][oh][ow][o]: a 3-D range (o, oh*ow_n + ow, n). Taps
 * in row-major (i, j) order, bias last. */
__kernel void xo_cl_depthwise_conv2d_fwd(__global const float *x, int xo,
					 __global const float *w, int wo,
					 __global const float *b, int bo, int has_bias,
					 __global float *y, int yo, XO_GDW_ARGS)
{
	int o = get_global_id(0), pix = get_global_id(1), n = get_global_id(2);
	int co = ch * dm, c, oh, ow;
	float acc = 0.0f;

	if (o >= co || pix >= oh_n * ow_n || n >= batch)
		return;
	c = o / dm;
	oh = pix / ow_n;
	ow = pix - oh * ow_n;
	for (int i = 0; i < kh; i++) {
		int r = oh * sh - pt + i;

		if (r < 0 || r >= h)
			continue;
		for (int j = 0; j < kw; j++) {
			int s = ow * sw - pl + j;

			if (s < 0 || s >= wd)
				continue;
			acc += x[xo + ((n * h + r) * wd + s) * ch + c] *
			       w[wo + (i * kw + j) * co + o];
		}
	}
	if (has_bias)
		acc += b[bo + o];
	y[yo + (n * oh_n * ow_n + pix) * co + o] = xo_act(acc, act);
}

/* One work-item per dx[n][r][s][c], 3-D range (c, r*wd + s, n): a gather
 * over the taps (i, j), row-major, whose output lands on (r, s), then m. */
__kernel void xo_cl_depthwise_conv2d_bwd_dx(__global const float *w, int wo,
					    __global const float *y, int yo,
					    __global const float *dy, int dyo, __global float *dx,
					    int dxo, XO_GDW_ARGS)
{
	int c = get_global_id(0), pix = get_global_id(1), n = get_global_id(2);
	int co = ch * dm, r, s;
	float acc = 0.0f;

	if (c >= ch || pix >= h * wd || n >= batch)
		return;
	r = pix / wd;
	s = pix - r * wd;
	for (int i = 0; i < kh; i++) {
		int oh = xo_conv2d_tap_out(r, i, sh, 1, pt, oh_n);

		if (oh < 0)
			continue;
		for (int j = 0; j < kw; j++) {
			int ow = xo_conv2d_tap_out(s, j, sw, 1, pl, ow_n);
			int row;

			if (ow < 0)
				continue;
			row = ((n * oh_n + oh) * ow_n + ow) * co + c * dm;
			for (int m = 0; m < dm; m++)
				acc += xo_act_grad(y[yo + row + m], dy[dyo + row + m], act) *
				       w[wo + (i * kw + j) * co + c * dm + m];
		}
	}
	dx[dxo + (n * h * wd + pix) * ch + c] = acc;
}

/* Work-items [0, kh*kw*ch*dm) make dw[i][j][c][m]; the next ch*dm
 * work-items (when has_db) make db[o]. Each sums over n, then oh, then ow. */
__kernel void xo_cl_depthwise_conv2d_bwd_dw(__global const float *x, int xo,
					    __global const float *y, int yo,
					    __global const float *dy, int dyo, __global float *dw,
					    int dwo, __global float *db, int dbo, int has_db,
					    XO_GDW_ARGS)
{
	int gid = get_global_id(0);
	int co = ch * dm, nw = kh * kw * co;
	float acc = 0.0f;

	if (gid < nw) {
		int o = gid % co, c = o / dm, tap = gid / co;
		int i = tap / kw, j = tap - (tap / kw) * kw;
		int oh_lo, oh_hi, ow_lo, ow_hi;

		xo_conv2d_tap_range(i - pt, h, sh, oh_n, &oh_lo, &oh_hi);
		xo_conv2d_tap_range(j - pl, wd, sw, ow_n, &ow_lo, &ow_hi);
		for (int n = 0; n < batch; n++)
			for (int oh = oh_lo; oh <= oh_hi; oh++)
				for (int ow = ow_lo; ow <= ow_hi; ow++) {
					int k = ((n * oh_n + oh) * ow_n + ow) * co + o;
					int r = oh * sh + i - pt, s = ow * sw + j - pl;

					acc += x[xo + ((n * h + r) * wd + s) * ch + c] *
					       xo_act_grad(y[yo + k], dy[dyo + k], act);
				}
		dw[dwo + gid] = acc;
	} else if (has_db && gid < nw + co) {
		int o = gid - nw;

		for (int k = o; k < batch * oh_n * ow_n * co; k += co)
			acc += xo_act_grad(y[yo + k], dy[dyo + k], act);
		db[dbo + o] = acc;
	}
}
