/*
 * resize.cl - the ops that change the spatial extent of a channels-last
 * tensor by moving values (ops.def): pad (zero padding and cropping with
 * signed margins). Copies only: the same bits as the reference.
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
