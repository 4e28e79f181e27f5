/*
 * convt.cl - conv2d_transpose forward and backward, channels-last, Keras
 * layouts: x[batch][h][w][ch], w[kh][kw][filters][ch], b[filters],
 * y[batch][oh][ow][filters]. Geometry from the host
 * (xo_conv2d_transpose_geometry): input position r's tap i lands on output
 * r*sh + i - pt (columns likewise); taps landing outside y are dropped.
 *
 * As conv2d.cl: forward is one launch with bias and elementwise activation
 * fused (softmax by a second row launch); backward is a dx launch and a
 * dw+db launch, d loss / d pre-activation recomputed from y and dy (or read
 * from a dpre buffer, then act = linear). Every sum runs in a fixed order
 * per output, so integer fills are exact. No local memory, no barriers.
 */
#define XO_GCT_ARGS                                                                        \
	int batch, int h, int wd, int ch, int filters, int kh, int kw, int sh, int sw, int pt, \
	    int pl, int oh_n, int ow_n, int act

/* The input position whose tap k lands on output o of an axis (l*stride +
 * k - pad == o), or -1 when there is none in [0, len). */
static inline int xo_convt_src(int o, int k, int stride, int pad, int len)
{
	int t = o + pad - k;

	if (t < 0 || t % stride)
		return -1;
	t /= stride;
	return t < len ? t : -1;
}

/* One work-item per y[n][oh][ow][f]: a 3-D range (f, oh*ow_n + ow, n); a
 * gather over the taps (i, j) row-major that land on (oh, ow), then c; bias
 * last. */
__kernel void xo_cl_conv2d_transpose_fwd(__global const float *x, int xo,
					 __global const float *w, int wo,
					 __global const float *b, int bo, int has_bias,
					 __global float *y, int yo, XO_GCT_ARGS)
{
	int f = get_global_id(0), pix = get_global_id(1), n = get_global_id(2);
	int oh, ow;
	float acc = 0.0f;

	if (f >= filters || pix >= oh_n * ow_n || n >= batch)
		return;
	oh = pix / ow_n;
	ow = pix - oh * ow_n;
	for (int i = 0; i < kh; i++) {
		int r = xo_convt_src(oh, i, sh, pt, h);

		if (r < 0)
			continue;
		for (int j = 0; j < kw; j++) {
			int s = xo_convt_src(ow, j, sw, pl, wd);
			int xr, wr;

			if (s < 0)
				continue;
			xr = xo + ((n * h + r) * wd + s) * ch;
			wr = wo + ((i * kw + j) * filters + f) * ch;
			for (int c = 0; c < ch; c++)
				acc += x[xr + c] * w[wr + c];
		}
	}
	if (has_bias)
		acc += b[bo + f];
	y[yo + (n * oh_n * ow_n + pix) * filters + f] = xo_act(acc, act);
}

/* The output input position l's tap k lands on, or -1 outside [0, out). */
static inline int xo_convt_dst(int l, int k, int stride, int pad, int out)
{
	int o = l * stride + k - pad;

	return o >= 0 && o < out ? o : -1;
}

/* One work-item per dx[n][r][s][c], 3-D range (c, r*wd + s, n): over the
 * taps (i, j) row-major landing inside y, then f. */
__kernel void xo_cl_conv2d_transpose_bwd_dx(__global const float *w, int wo,
					    __global const float *y, int yo,
					    __global const float *dy, int dyo, __global float *dx,
					    int dxo, XO_GCT_ARGS)
{
	int c = get_global_id(0), pix = get_global_id(1), n = get_global_id(2);
	int r, s;
	float acc = 0.0f;

	if (c >= ch || pix >= h * wd || n >= batch)
		return;
	r = pix / wd;
	s = pix - r * wd;
	for (int i = 0; i < kh; i++) {
		int oh = xo_convt_dst(r, i, sh, pt, oh_n);

		if (oh < 0)
			continue;
		for (int j = 0; j < kw; j++) {
			int ow = xo_convt_dst(s, j, sw, pl, ow_n);
			int row;

			if (ow < 0)
				continue;
			row = ((n * oh_n + oh) * ow_n + ow) * filters;
			for (int f = 0; f < filters; f++)
				acc += xo_act_grad(y[yo + row + f], dy[dyo + row + f], act) *
				       w[wo + ((i * kw + j) * filters + f) * ch + c];
		}
	}
	dx[dxo + (n * h * wd + pix) * ch + c] = acc;
}

/* Work-items [0, kh*kw*filters*ch) make dw[i][j][f][c]; the next `filters`
 * work-items (when has_db) make db[f]. dw sums over n, then r, then s (the
 * positions whose tap lands inside y); db over n, oh, ow. */
__kernel void xo_cl_conv2d_transpose_bwd_dw(__global const float *x, int xo,
					    __global const float *y, int yo,
					    __global const float *dy, int dyo, __global float *dw,
					    int dwo, __global float *db, int dbo, int has_db,
					    XO_GCT_ARGS)
{
	int gid = get_global_id(0);
	int nw = kh * kw * filters * ch;
	float acc = 0.0f;

	if (gid < nw) {
		int c = gid % ch, f = (gid / ch) % filters, tap = gid / (ch * filters);
		int i = tap / kw, j = tap - (tap / kw) * kw;

		for (int n = 0; n < batch; n++)
			for (int r = 0; r < h; r++) {
				int oh = xo_convt_dst(r, i, sh, pt, oh_n);

				if (oh < 0)
					continue;
				for (int s = 0; s < wd; s++) {
					int ow = xo_convt_dst(s, j, sw, pl, ow_n);
					int k;

					if (ow < 0)
						continue;
					k = ((n * oh_n + oh) * ow_n + ow) * filters + f;
					acc += x[xo + ((n * h + r) * wd + s) * ch + c] *
					       xo_act_grad(y[yo + k], dy[dyo + k], act);
				}
			}
		dw[dwo + gid] = acc;
	} else if (has_db && gid < nw + filters) {
		int f = gid - nw;

		for (int k = f; k < batch * oh_n * ow_n * filters; k += filters)
			acc += xo_act_grad(y[yo + k], dy[dyo + k], act);
		db[dbo + f] = acc;
	}
}
