/*
 * resize.cl - the ops that change the spatial extent of a channels-last
 * tensor by moving values (ops.def): pad (zero padding and cropping with
 * signed margins), up_sampling (nearest), permute and flip (the time axis
 * reversed). Copies, but for up_sampling's
 * backward: a sum per dx cell in ops.def's order.
 */

/* dst[n][i][j][c] = src[n][i - bh][j - bw][c] inside src [sh][sw], else 0;
 * dst is [rows = batch * dh][dw][ch]. 3-D range (c, j, r). pad's forward
 * (bh, bw = the begin margins) and backward (their negations). */
__kernel void xo_cl_pad_shift(__global const float *src, int so, __global float *dst, int dof,
			      int rows, int sh, int sw, int dh, int dw, int ch, int bh, int bw)
{
	int c = get_global_id(0), j = get_global_id(1), r = get_global_id(2);
	int n, si, sj;
	float v = 0.0f;

	if (c >= ch || j >= dw || r >= rows)
		return;
	n = r / dh;
	si = r % dh - bh;
	sj = j - bw;
	if (si >= 0 && si < sh && sj >= 0 && sj < sw)
		v = src[so + (((long)n * sh + si) * sw + sj) * ch + c];
	dst[dof + ((long)r * dw + j) * ch + c] = v;
}

/* y[n][i][j] = x[n][i / r][j / rw], y [rows = batch * len * r][width * rw][ch];
 * 3-D range (c, j, row of y). */
__kernel void xo_cl_up_sampling_fwd(__global const float *x, int xo, __global float *y, int yo,
				    int rows, int len, int width, int ch, int r, int rw)
{
	int c = get_global_id(0), j = get_global_id(1), row = get_global_id(2);
	int oh = len * r, ow = width * rw, n, i;

	if (c >= ch || j >= ow || row >= rows)
		return;
	n = row / oh;
	i = row % oh;
	y[yo + ((long)row * ow + j) * ch + c] =
	    x[xo + (((long)n * len + i / r) * width + j / rw) * ch + c];
}

/* dx[n][i][j] = sum over a < r, b < rw (a outer) of dy[n][i * r + a][j * rw + b],
 * dx [rows = batch * len][width][ch]; 3-D range (c, j, row of dx). */
__kernel void xo_cl_up_sampling_bwd(__global const float *dy, int dyo, __global float *dx, int dxo,
				    int rows, int len, int width, int ch, int r, int rw)
{
	int c = get_global_id(0), j = get_global_id(1), row = get_global_id(2);
	int oh = len * r, ow = width * rw, n, i;
	float s = 0.0f;

	if (c >= ch || j >= width || row >= rows)
		return;
	n = row / len;
	i = row % len;
	for (int a = 0; a < r; a++)
		for (int b = 0; b < rw; b++) {
			float v = dy[dyo + (((long)n * oh + i * r + a) * ow + j * rw + b) * ch + c];

			s = a == 0 && b == 0 ? v : s + v;
		}
	dx[dxo + ((long)row * width + j) * ch + c] = s;
}

/* permute: dst[n][i0][i1][i2] = src[n * per + i0 * s0 + i1 * s1 + i2 * s2]
 * (s_k the src stride of the axis dst's axis k comes from), dst [rows = batch
 * * o0][o1][o2]; 3-D range (i2, i1, row of dst). Both directions of permute. */
__kernel void xo_cl_permute_move(__global const float *src, int so, __global float *dst, int dof,
				 int rows, int o0, int o1, int o2, int per, int s0, int s1, int s2)
{
	int i2 = get_global_id(0), i1 = get_global_id(1), r = get_global_id(2);
	int n, i0;

	if (i2 >= o2 || i1 >= o1 || r >= rows)
		return;
	n = r / o0;
	i0 = r % o0;
	dst[dof + ((long)r * o1 + i1) * o2 + i2] =
	    src[so + (long)n * per + (long)i0 * s0 + (long)i1 * s1 + (long)i2 * s2];
}

/* flip: dst[n][t][c] = src[n][len - 1 - t][c], dst [rows = batch * len][ch];
 * 2-D range (c, row of dst). Both directions of flip (its own inverse). */
__kernel void xo_cl_flip_move(__global const float *src, int so, __global float *dst, int dof,
			      int rows, int len, int ch)
{
	int c = get_global_id(0), r = get_global_id(1);
	int n, t;

	if (c >= ch || r >= rows)
		return;
	n = r / len;
	t = r % len;
	dst[dof + (long)r * ch + c] = src[so + ((long)n * len + (len - 1 - t)) * ch + c];
}
