/*
 * pool.cl - max_pooling1d forward and backward, x[batch][len][ch],
 * y[batch][out][ch]. Window o covers l = o*stride - pad .. + pool - 1; taps
 * outside [0, len) are skipped (Keras "same" pads with -inf). Ties go to the
 * first maximum (strict >), so forward and backward agree on the winner.
 */

/* Position of the first maximum of window o (channel c of sample n). */
inline int xo_pool_argmax(__global const float *xr, int len, int ch, int pool, int stride,
			  int pad, int o)
{
	int l0 = o * stride - pad;
	int best = -1;
	float m = 0.0f;

	for (int j = 0; j < pool; j++) {
		int l = l0 + j;

		if (l < 0 || l >= len)
			continue;
		if (best < 0 || xr[l * ch] > m) {
			m = xr[l * ch];
			best = l;
		}
	}
	return best;
}

/* One work-item per y[n][o][c], 3-D range (c, o, n). */
__kernel void xo_cl_max_pooling1d_fwd(__global const float *x, int xo, __global float *y, int yo,
				      int batch, int len, int ch, int pool, int stride, int pad,
				      int out)
{
	int c = get_global_id(0), o = get_global_id(1), n = get_global_id(2);
	__global const float *xr;

	if (c >= ch || o >= out || n >= batch)
		return;
	xr = x + xo + n * len * ch + c;
	y[yo + (n * out + o) * ch + c] = xr[xo_pool_argmax(xr, len, ch, pool, stride, pad, o) * ch];
}

/* One work-item per dx[n][l][c], 3-D range (c, l, n): the sum of dy over the windows that contain
 * l and whose first maximum is l (a gather, so overlapping windows need no
 * atomics and dx is overwritten). */
__kernel void xo_cl_max_pooling1d_bwd(__global const float *x, int xo, __global const float *dy,
				      int dyo, __global float *dx, int dxo, int batch, int len,
				      int ch, int pool, int stride, int pad, int out)
{
	int c = get_global_id(0), l = get_global_id(1), n = get_global_id(2);
	int o_lo, o_hi;
	__global const float *xr;
	float acc = 0.0f;

	if (c >= ch || l >= len || n >= batch)
		return;
	xr = x + xo + n * len * ch + c;
	/* Windows o with o*stride - pad <= l <= o*stride - pad + pool - 1:
	 * o_hi by one division, o_lo by stepping down (few steps). */
	o_hi = (l + pad) / stride;
	if (o_hi > out - 1)
		o_hi = out - 1;
	o_lo = o_hi;
	while (o_lo > 0 && (o_lo - 1) * stride - pad + pool - 1 >= l)
		o_lo--;
	for (int o = o_lo; o <= o_hi; o++)
		if (o * stride - pad + pool - 1 >= l &&
		    xo_pool_argmax(xr, len, ch, pool, stride, pad, o) == l)
			acc += dy[dyo + (n * out + o) * ch + c];
	dx[dxo + (n * len + l) * ch + c] = acc;
}
