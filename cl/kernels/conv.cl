/*
 * conv.cl - conv1d forward and backward, channels-last, Keras layouts:
 * x[batch][len][ch], w[kernel_size][ch][filters], b[filters],
 * y[batch][out][filters]. Geometry (out, pad, stride, dilation) comes from the
 * host (xo_conv1d_geometry); taps outside [0, len) read as zero.
 *
 * Forward is one launch with bias and elementwise activation fused; softmax
 * activation is applied by a second row launch (act.cl). Backward is two
 * launches, d loss / d pre-activation recomputed on the fly from y and dy
 * (or read from a dpre buffer made by xo_cl_softmax_bwd, then act = linear).
 * Every sum runs in a fixed order per output, so integer fills are exact.
 */

/* One work-item per y[n][o][f]: a 3-D range (f, o, n), rounded up to the
 * work-group (ids past the end return), so no integer division per item. */
__kernel void xo_cl_conv1d_fwd(__global const float *x, int xo, __global const float *w, int wo,
			       __global const float *b, int bo, int has_bias, __global float *y,
			       int yo, int batch, int len, int ch, int filters, int ksize,
			       int stride, int dil, int pad, int out, int act)
{
	int f = get_global_id(0), o = get_global_id(1), n = get_global_id(2);
	float acc = 0.0f;

	if (f >= filters || o >= out || n >= batch)
		return;
	for (int k = 0; k < ksize; k++) {
		int l = o * stride - pad + k * dil;
		__global const float *xr, *wr;

		if (l < 0 || l >= len)
			continue;
		xr = x + xo + (n * len + l) * ch;
		wr = w + wo + k * ch * filters + f;
		for (int c = 0; c < ch; c++)
			acc += xr[c] * wr[c * filters];
	}
	if (has_bias)
		acc += b[bo + f];
	y[yo + (n * out + o) * filters + f] = xo_act(acc, act);
}

/* The output o whose tap k lands on input position l (o*stride - pad + k*dil
 * == l), or -1 when there is none in [0, out). Shared with the fused net
 * (net.cl). */
static inline int xo_conv_tap_out(int l, int k, int stride, int dil, int pad, int out)
{
	int t = l + pad - k * dil;

	if (t < 0)
		return -1;
	if (stride != 1) { /* stride 1, the common case, needs no division */
		if (t % stride)
			return -1;
		t /= stride;
	}
	return t < out ? t : -1;
}

/* One work-item per dx[n][l][c], 3-D range (c, l, n): a gather over the
 * (k, o) pairs whose tap lands on l, so no atomics. */
__kernel void xo_cl_conv1d_bwd_dx(__global const float *w, int wo, __global const float *y,
				  int yo, __global const float *dy, int dyo, __global float *dx,
				  int dxo, int batch, int len, int ch, int filters, int ksize,
				  int stride, int dil, int pad, int out, int act)
{
	int c = get_global_id(0), l = get_global_id(1), n = get_global_id(2);
	float acc = 0.0f;

	if (c >= ch || l >= len || n >= batch)
		return;
	for (int k = 0; k < ksize; k++) {
		int o = xo_conv_tap_out(l, k, stride, dil, pad, out);
		int row;

		if (o < 0)
			continue;
		row = (n * out + o) * filters;
		for (int f = 0; f < filters; f++)
			acc += xo_act_grad(y[yo + row + f], dy[dyo + row + f], act) *
			       w[wo + (k * ch + c) * filters + f];
	}
	dx[dxo + (n * len + l) * ch + c] = acc;
}

/* Work-items [0, ksize*ch*filters) make dw[k][c][f]; the next `filters`
 * work-items (when has_db) make db[f]. Each sums over batch and out. */
__kernel void xo_cl_conv1d_bwd_dw(__global const float *x, int xo, __global const float *y,
				  int yo, __global const float *dy, int dyo, __global float *dw,
				  int dwo, __global float *db, int dbo, int has_db, int batch,
				  int len, int ch, int filters, int ksize, int stride, int dil,
				  int pad, int out, int act)
{
	int gid = get_global_id(0);
	int nw = ksize * ch * filters;
	float acc = 0.0f;

	if (gid < nw) {
		int f = gid % filters;
		int c = (gid / filters) % ch;
		int k = gid / (filters * ch);
		/* Tap k reads l = o*stride + base: the o whose l is in [0, len). */
		int base = k * dil - pad, r = len - 1 - base;
		int o_lo = base >= 0 ? 0 : (stride - 1 - base) / stride;
		int o_hi = r < 0 ? -1 : min(r / stride, out - 1);

		for (int n = 0; n < batch; n++)
			for (int o = o_lo; o <= o_hi; o++) {
				int i = (n * out + o) * filters + f;

				acc += x[xo + (n * len + o * stride + base) * ch + c] *
				       xo_act_grad(y[yo + i], dy[dyo + i], act);
			}
		dw[dwo + gid] = acc;
	} else if (has_db && gid < nw + filters) {
		int f = gid - nw;

		for (int i = f; i < batch * out * filters; i += filters)
			acc += xo_act_grad(y[yo + i], dy[dyo + i], act);
		db[dbo + f] = acc;
	}
}

/*
 * Work-group variant of xo_cl_conv1d_bwd_dw: one work-group of XO_RED_WG
 * work-items per output (groups [0, ksize*ch*filters) make dw, the next
 * `filters` make db when has_db); the work-items stride over the batch*out
 * terms, then a tree in local memory. For the few-outputs, long-sum shapes
 * of small CNNs (the seed model's first dw has 48 outputs of 13824 terms),
 * where one work-item per output leaves a GPU idle. The host uses it when
 * batch*out >= XO_RED_WG (STYLE rule 10); launched with local = XO_RED_WG.
 */
__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_conv1d_bwd_dw__wg(__global const float *x, int xo, __global const float *y, int yo,
			__global const float *dy, int dyo, __global float *dw, int dwo,
			__global float *db, int dbo, int has_db, int batch, int len, int ch,
			int filters, int ksize, int stride, int dil, int pad, int out, int act)
{
	__local float part[XO_RED_WG];
	int g = get_group_id(0), lid = get_local_id(0);
	int nw = ksize * ch * filters, terms = batch * out;
	float acc = 0.0f;

	if (g < nw) {
		int f = g % filters;
		int c = (g / filters) % ch;
		int k = g / (filters * ch);

		for (int t = lid; t < terms; t += XO_RED_WG) {
			int n = t / out, o = t % out;
			int l = o * stride - pad + k * dil;
			int i = t * filters + f;

			if (l < 0 || l >= len)
				continue;
			acc += x[xo + (n * len + l) * ch + c] *
			       xo_act_grad(y[yo + i], dy[dyo + i], act);
		}
	} else {
		int f = g - nw;

		for (int t = lid; t < terms; t += XO_RED_WG)
			acc += xo_act_grad(y[yo + t * filters + f], dy[dyo + t * filters + f], act);
	}
	xo_group_store_dw_db(part, lid, acc, g, nw, dw, dwo, db, dbo, has_db);
}

/*
 * Split variant of xo_cl_conv1d_bwd_dw for CPUs (PoCL): the batch is cut
 * into chunks of `chunk` samples; work-item (q, j) sums output j (dw as in
 * xo_cl_conv1d_bwd_dw for j < ksize*ch*filters, else db[j - that]) over the
 * samples of chunk q into part[q * nout + j]; xo_cl_sum_chunks then adds the
 * chunks in order. A chunk's x/y/dy stay in cache while all outputs sweep
 * it, instead of every output streaming the whole batch.
 */
__kernel void xo_cl_conv1d_bwd_dw__split(__global const float *x, int xo, __global const float *y,
					 int yo, __global const float *dy, int dyo,
					 __global float *part, int nout, int chunk, int batch,
					 int len, int ch, int filters, int ksize, int stride,
					 int dil, int pad, int out, int act)
{
	int gid = get_global_id(0);
	int nw = ksize * ch * filters;
	int q = gid / nout, j = gid % nout;
	int n0 = q * chunk, n1 = min(batch, n0 + chunk);
	float acc = 0.0f;

	if (n0 >= batch)
		return;
	if (j < nw) {
		int f = j % filters;
		int c = (j / filters) % ch;
		int k = j / (filters * ch);
		int base = k * dil - pad, r = len - 1 - base;
		int o_lo = base >= 0 ? 0 : (stride - 1 - base) / stride;
		int o_hi = r < 0 ? -1 : min(r / stride, out - 1);

		for (int n = n0; n < n1; n++)
			for (int o = o_lo; o <= o_hi; o++) {
				int i = (n * out + o) * filters + f;

				acc += x[xo + (n * len + o * stride + base) * ch + c] *
				       xo_act_grad(y[yo + i], dy[dyo + i], act);
			}
	} else {
		int f = j - nw;

		for (int i = n0 * out * filters + f; i < n1 * out * filters; i += filters)
			acc += xo_act_grad(y[yo + i], dy[dyo + i], act);
	}
	part[gid] = acc;
}
