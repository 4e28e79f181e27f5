/*
 * mask.cl - the masking op (Keras's Masking layer, ops.def): per step,
 * keep = any feature != mask_value (a float compare, subnormals as 0 by
 * xo_daz: -0 == 0 and 1e-40 == 0, NaN keeps);
 * y = x where kept, +0 elsewhere, and the int32 keep flags forward;
 * dx = dy where kept, +0 elsewhere backward. Selects only: bit-exact.
 */

/* One work-item per step r of [rows][ch] (rows = batch * len): x at xo decides
 * the step, v at vo (x forward, dy backward) is selected into d at dof;
 * keep at ko gets the flag when has_keep (any buffer without it). Reads and
 * writes the step's ch elements only. */
__kernel void xo_cl_masking_select(__global const float *x, int xo, __global const float *v,
				   int vo, __global float *d, int dof, __global int *keep, int ko,
				   int has_keep, int rows, int ch, float mv)
{
	int r = get_global_id(0);
	int k = 0;

	if (r >= rows)
		return;
	for (int c = 0; c < ch && !k; c++)
		k = xo_daz(x[xo + (long)r * ch + c]) != xo_daz(mv);
	if (has_keep)
		keep[ko + r] = k;
	for (int c = 0; c < ch; c++)
		d[dof + (long)r * ch + c] = k ? v[vo + (long)r * ch + c] : 0.0f;
}
