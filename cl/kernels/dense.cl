/*
 * dense.cl - dense forward and backward: x[batch][ch], w[ch][units] (Keras
 * layout), b[units], y[batch][units]. Same fusion as conv.cl: forward is one
 * launch with bias and elementwise activation; backward is dx and dw+db
 * launches that recompute d loss / d pre-activation from y and dy (or read a
 * dpre buffer with act = linear for softmax). Every output sums over its
 * reduction index in increasing order, so integer fills are exact.
 */

/* General forward: one work-item per y[n][u], 2-D range (u, n). */
__kernel void xo_cl_dense_fwd(__global const float *x, int xo, __global const float *w, int wo,
			      __global const float *b, int bo, int has_bias, __global float *y,
			      int yo, int batch, int ch, int units, int act)
{
	int u = get_global_id(0), n = get_global_id(1);
	float acc = 0.0f;

	if (u >= units || n >= batch)
		return;
	for (int c = 0; c < ch; c++)
		acc += x[xo + n * ch + c] * w[wo + c * units + u];
	if (has_bias)
		acc += b[bo + u];
	y[yo + n * units + u] = xo_act(acc, act);
}

/*
 * Tiled forward: a 2-D launch of XO_TILE x XO_TILE work-groups, dim 0 over
 * units, dim 1 over batch, both rounded up to XO_TILE; x and w tiles staged in
 * local memory. Tails are zero-filled in local memory and not stored, so any
 * shape works; the host uses it when batch and units are at least XO_TILE and
 * the device allows XO_TILE^2 work-items (STYLE rule 10). The sum over c runs
 * in increasing order like the general kernel, so both give the same bits.
 */
__kernel __attribute__((reqd_work_group_size(XO_TILE, XO_TILE, 1))) void
xo_cl_dense_fwd__tiled(__global const float *x, int xo, __global const float *w, int wo,
		       __global const float *b, int bo, int has_bias, __global float *y, int yo,
		       int batch, int ch, int units, int act)
{
	__local float xs[XO_TILE][XO_TILE];
	__local float ws[XO_TILE][XO_TILE];
	int tu = get_local_id(0), tn = get_local_id(1);
	int u = get_global_id(0), n = get_global_id(1);
	float acc = 0.0f;

	for (int c0 = 0; c0 < ch; c0 += XO_TILE) {
		int cx = c0 + tu, cw = c0 + tn;

		xs[tn][tu] = (n < batch && cx < ch) ? x[xo + n * ch + cx] : 0.0f;
		ws[tn][tu] = (cw < ch && u < units) ? w[wo + cw * units + u] : 0.0f;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int c = 0; c < XO_TILE && c0 + c < ch; c++)
			acc += xs[tn][c] * ws[c][tu];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (n < batch && u < units) {
		if (has_bias)
			acc += b[bo + u];
		y[yo + n * units + u] = xo_act(acc, act);
	}
}

/*
 * Forward with softmax activation in one launch: one work-item per row n
 * makes all `units` pre-activations into y[n], then the row softmax in place
 * (the same operations, in the same order, as xo_cl_dense_fwd followed by
 * xo_cl_softmax_fwd). The host uses it when units <= XO_SOFTMAX_ROW_MAX
 * (a classifier head), else the two launches (STYLE rule 10).
 */
__kernel void xo_cl_dense_fwd__softmax(__global const float *x, int xo, __global const float *w,
				       int wo, __global const float *b, int bo, int has_bias,
				       __global float *y, int yo, int batch, int ch, int units)
{
	int n = get_global_id(0);

	if (n >= batch)
		return;
	for (int u = 0; u < units; u++) {
		float acc = 0.0f;

		for (int c = 0; c < ch; c++)
			acc += x[xo + n * ch + c] * w[wo + c * units + u];
		if (has_bias)
			acc += b[bo + u];
		y[yo + n * units + u] = acc;
	}
	xo_softmax_row(y + yo + n * units, units);
}

/* One work-item per dx[n][c] = sum_u dpre[n][u] * w[c][u], 2-D range (c, n). */
__kernel void xo_cl_dense_bwd_dx(__global const float *w, int wo, __global const float *y,
				 int yo, __global const float *dy, int dyo, __global float *dx,
				 int dxo, int batch, int ch, int units, int act)
{
	int c = get_global_id(0), n = get_global_id(1);
	float acc = 0.0f;

	if (c >= ch || n >= batch)
		return;
	for (int u = 0; u < units; u++)
		acc += xo_act_grad(y[yo + n * units + u], dy[dyo + n * units + u], act) *
		       w[wo + c * units + u];
	dx[dxo + n * ch + c] = acc;
}

/* Work-items [0, ch*units) make dw[c][u] = sum_n x[n][c] * dpre[n][u]; the
 * next `units` (when has_db) make db[u] = sum_n dpre[n][u]. */
__kernel void xo_cl_dense_bwd_dw(__global const float *x, int xo, __global const float *y, int yo,
				 __global const float *dy, int dyo, __global float *dw, int dwo,
				 __global float *db, int dbo, int has_db, int batch, int ch,
				 int units, int act)
{
	int gid = get_global_id(0);
	int nw = ch * units;
	float acc = 0.0f;

	if (gid < nw) {
		int u = gid % units;
		int c = gid / units;

		for (int n = 0; n < batch; n++)
			acc += x[xo + n * ch + c] *
			       xo_act_grad(y[yo + n * units + u], dy[dyo + n * units + u], act);
		dw[dwo + gid] = acc;
	} else if (has_db && gid < nw + units) {
		int u = gid - nw;

		for (int n = 0; n < batch; n++)
			acc += xo_act_grad(y[yo + n * units + u], dy[dyo + n * units + u], act);
		db[dbo + u] = acc;
	}
}

/*
 * Work-group variant of xo_cl_dense_bwd_dw: one work-group of XO_RED_WG
 * work-items per dw[c][u] (groups [0, ch*units)) or db[u] (the next `units`,
 * when has_db); the work-items stride over the batch, then a tree in local
 * memory. Used when batch >= XO_RED_WG (STYLE rule 10); local = XO_RED_WG.
 */
__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_dense_bwd_dw__wg(__global const float *x, int xo, __global const float *y, int yo,
		       __global const float *dy, int dyo, __global float *dw, int dwo,
		       __global float *db, int dbo, int has_db, int batch, int ch, int units,
		       int act)
{
	__local float part[XO_RED_WG];
	int g = get_group_id(0), lid = get_local_id(0);
	int nw = ch * units;
	int u = g < nw ? g % units : g - nw;
	float acc = 0.0f;

	for (int n = lid; n < batch; n += XO_RED_WG) {
		float d = xo_act_grad(y[yo + n * units + u], dy[dyo + n * units + u], act);

		acc += g < nw ? x[xo + n * ch + g / units] * d : d;
	}
	xo_group_store_dw_db(part, lid, acc, g, nw, dw, dwo, db, dbo, has_db);
}

/* Split variant of xo_cl_dense_bwd_dw (see xo_cl_conv1d_bwd_dw__split):
 * work-item (q, j) sums dw[c][u] (j < ch*units) or db[u] over the samples of
 * chunk q into part[q * nout + j]. */
__kernel void xo_cl_dense_bwd_dw__split(__global const float *x, int xo, __global const float *y,
					int yo, __global const float *dy, int dyo,
					__global float *part, int nout, int chunk, int batch, int ch,
					int units, int act)
{
	int gid = get_global_id(0);
	int nw = ch * units;
	int q = gid / nout, j = gid % nout;
	int n0 = q * chunk, n1 = min(batch, n0 + chunk);
	int u = j < nw ? j % units : j - nw;
	float acc = 0.0f;

	if (n0 >= batch)
		return;
	for (int n = n0; n < n1; n++) {
		float d = xo_act_grad(y[yo + n * units + u], dy[dyo + n * units + u], act);

		acc += j < nw ? x[xo + n * ch + j / units] * d : d;
	}
	part[gid] = acc;
}
