/*
 * misc.cl - data movement: the copy behind flatten (and dropout outside
 * training), and gather, how a model picks a shuffled batch on the device.
 */

__kernel void xo_cl_copy(__global const float *src, int so, __global float *dst, int dso, int n)
{
	int i = get_global_id(0);

	if (i < n)
		dst[dso + i] = src[so + i];
}

/* y[i][c] = x[index[i]][c], 2-D range (c, i). An index outside [0, rows) never reads or writes
 * out of bounds: that row of y is written as zeros and flag[0] is set to 1;
 * the host reports XO_EINVAL at the next read or sync (clamp-and-flag). */
__kernel void xo_cl_gather_fwd(__global const float *x, int xo, __global const int *index, int io,
			       __global float *y, int yo, __global int *flag, int batch, int ch,
			       int rows)
{
	int c = get_global_id(0), i = get_global_id(1);
	int r;

	if (c >= ch || i >= batch)
		return;
	r = index[io + i];
	if (r < 0 || r >= rows) {
		flag[0] = 1;
		y[yo + i * ch + c] = 0.0f;
		return;
	}
	y[yo + i * ch + c] = x[xo + r * ch + c];
}

/* Second half of the split dw kernels: out j = sum over chunks q (in order)
 * of part[q * nout + j], stored to dw[j] for j < nw, else db[j - nw]. */
__kernel void xo_cl_sum_chunks(__global const float *part, int nchunks, int nout, int nw,
			       __global float *dw, int dwo, __global float *db, int dbo)
{
	int j = get_global_id(0);
	float acc = 0.0f;

	if (j >= nout)
		return;
	for (int q = 0; q < nchunks; q++)
		acc += part[q * nout + j];
	if (j < nw)
		dw[dwo + j] = acc;
	else
		db[dbo + j - nw] = acc;
}
