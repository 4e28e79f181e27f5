/* merge (ops.def): Keras's merge layers on two inputs. Modes as enum
 * xo_merge: 0 add, 1 subtract, 2 multiply, 3 average, 4 maximum, 5 minimum,
 * 6 concatenate. One work-item per element of y (forward) or of dy
 * (backward); a[rows][ca], b[rows][cb], y / dy [rows][cy]. Each value is one
 * rounding of the exact result, as the reference. */

float xo_merge_value(int mode, float a, float b)
{
	switch (mode) {
	case 0: return a + b;
	case 1: return a - b;
	case 2: return a * b;
	case 3: return (a + b) * 0.5f;
	case 4: return a > b || isnan(a) ? a : b; /* NaN if either is */
	default: return a < b || isnan(a) ? a : b;
	}
}

/* d y / d mine of an elementwise mode, mine the input whose gradient this is */
float xo_merge_slope(int mode, int which, float mine, float other)
{
	switch (mode) {
	case 0: return 1.0f;
	case 1: return which ? -1.0f : 1.0f;
	case 2: return other;
	case 3: return 0.5f;
	default:
		if (mine == other)
			return 0.5f;
		/* NaN: 0 to both sides, as jax.grad (every comparison false) */
		return (mode == 4 ? mine > other : mine < other) ? 1.0f : 0.0f;
	}
}

/* Keras's mask (multiply 2, maximum 4, minimum 5 with mask_a / mask_b,
 * ops.def): ids[rows] (i32) give the kept flags of row k / ca; an input
 * without its flag is kept. Multiply reads a masked input as 1 and is 0
 * where both flags are set and both are masked; maximum and minimum run
 * on (o, x) = (ma ? a : x, mb ? b : a). */
float xo_merge_masked_value(int mode, int both, int ma, int mb, float a, float b)
{
	float x = mb ? b : a, o = ma ? a : x;

	if (mode == 2)
		return both && !ma && !mb ? 0.0f : (ma ? a : 1.0f) * (mb ? b : 1.0f);
	return xo_merge_value(mode, o, x);
}

__kernel void xo_cl_merge_fwd(__global const float *a, int ao, __global const float *b, int bo,
			      __global float *y, int yo, int mode, int rows, int ca, int cb,
			      __global const int *ids, int io, int mask_a, int mask_b)
{
	long k = get_global_id(0);
	int cy = mode == 6 ? ca + cb : ca;
	long r;
	int c;

	if (k >= (long)rows * cy)
		return;
	if (mask_a || mask_b) {
		int kept = ids[io + k / ca] != 0;

		y[yo + k] = xo_merge_masked_value(mode, mask_a && mask_b, !mask_a || kept,
						  !mask_b || kept, a[ao + k], b[bo + k]);
		return;
	}
	if (mode != 6) {
		y[yo + k] = xo_merge_value(mode, a[ao + k], b[bo + k]);
		return;
	}
	r = k / cy;
	c = (int)(k % cy);
	y[yo + k] = c < ca ? a[ao + r * ca + c] : b[bo + r * cb + c - ca];
}

__kernel void xo_cl_merge_bwd(__global const float *a, int ao, __global const float *b, int bo,
			      __global const float *dy, int dyo, __global float *da, int dao,
			      int has_da, __global float *db, int dbo, int has_db, int mode,
			      int rows, int ca, int cb, __global const int *ids, int io,
			      int mask_a, int mask_b)
{
	long k = get_global_id(0);
	int cy = mode == 6 ? ca + cb : ca;
	long r;
	int c;

	if (k >= (long)rows * cy)
		return;
	if (mask_a || mask_b) {
		/* the unmasked op's two gradient parts at (o, x), routed back to
		 * the input each came from and summed in float (the reference's) */
		int kept = ids[io + k / ca] != 0;
		int ma = !mask_a || kept, mb = !mask_b || kept;
		float av = a[ao + k], bv = b[bo + k], g = dy[dyo + k], ga, gb;

		if (mode == 2) {
			ga = ma ? g * (mb ? bv : 1.0f) : 0.0f;
			gb = mb ? g * (ma ? av : 1.0f) : 0.0f;
		} else {
			float x = mb ? bv : av, o = ma ? av : x;
			float d_o = g * xo_merge_slope(mode, 0, o, x);
			float d_x = g * xo_merge_slope(mode, 1, x, o);

			if (!ma)
				d_x += d_o;
			ga = ma ? (mb ? d_o : d_o + d_x) : (mb ? 0.0f : d_x);
			gb = mb ? d_x : 0.0f;
		}
		if (has_da)
			da[dao + k] = ga;
		if (has_db)
			db[dbo + k] = gb;
		return;
	}
	if (mode != 6) {
		float av = a[ao + k], bv = b[bo + k], g = dy[dyo + k];

		if (has_da)
			da[dao + k] = g * xo_merge_slope(mode, 0, av, bv);
		if (has_db)
			db[dbo + k] = g * xo_merge_slope(mode, 1, bv, av);
		return;
	}
	r = k / cy;
	c = (int)(k % cy);
	if (c < ca) {
		if (has_da)
			da[dao + r * ca + c] = dy[dyo + k];
	} else if (has_db) {
		db[dbo + r * cb + c - ca] = dy[dyo + k];
	}
}
