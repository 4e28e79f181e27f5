/*
 * embed.cl - the embedding op (ops.def): forward row lookup, backward the
 * scatter-add of dy into the table rows used.
 *
 * An id outside [0, rows) never reads or writes out of bounds: the forward
 * writes that position's row as zeros, the backward adds nothing for it, and
 * both set flag[0] = 1; the host reports XO_EINVAL at the next read or sync
 * (the gather op's clamp-and-flag).
 */

/* y[i][c] = table[ids[i]][c], 2-D range (c, i) over i < n = batch * len. */
__kernel void xo_cl_embedding_fwd(__global const int *ids, int io, __global const float *table,
				  int to, __global float *y, int yo, __global int *flag, int n,
				  int ch, int rows)
{
	int c = get_global_id(0), i = get_global_id(1);
	int r;

	if (c >= ch || i >= n)
		return;
	r = ids[io + i];
	if (r < 0 || r >= rows) {
		flag[0] = 1;
		y[yo + i * ch + c] = 0.0f;
		return;
	}
	y[yo + i * ch + c] = table[to + r * ch + c];
}

/* dtable[r][c] = sum over i < n with ids[i] == r, in increasing i, of
 * dy[i][c]; 2-D range (c, r). One work-item owns one output and scans every
 * id in order: deterministic (the same float sum in the same order as the
 * cpu kernel; no atomics), O(rows * ch * n) work in all. Work-item (0, 0)
 * raises the flag for an id out of range. */
__kernel void xo_cl_embedding_bwd(__global const int *ids, int io, __global const float *dy,
				  int dyo, __global float *dtable, int dto, __global int *flag,
				  int n, int ch, int rows)
{
	int c = get_global_id(0), r = get_global_id(1);
	float s = 0.0f;

	if (c >= ch || r >= rows)
		return;
	for (int i = 0; i < n; i++) {
		int id = ids[io + i];

		if (id == r)
			s += dy[dyo + i * ch + c];
		else if (c == 0 && r == 0 && (id < 0 || id >= rows))
			flag[0] = 1;
	}
	dtable[dto + r * ch + c] = s;
}
