/*
 * pool.cl - the 1-D pooling family: max_pooling1d, average_pooling1d,
 * global_average_pooling1d, global_max_pooling1d, forward and backward.
 * max_pooling1d: x[batch][len][ch],
 * y[batch][out][ch]. Window o covers l = o*stride - pad .. + pool - 1; taps
 * outside [0, len) are skipped (Keras "same" pads with -inf). As Keras on
 * JAX/XLA: the value is NaN when a tap is NaN, else the maximum
 * (xo_pool_value); the gradient goes to the winner of XLA's select scan
 * (xo_pool_argmax: v takes over unless winner >= v), the first maximum when
 * no tap is NaN.
 */

/*
 * Position of the winner of window o of a channel's strided row xr (xr[l *
 * ch] is position l) under XLA's select (a tap takes over unless winner >=
 * tap: ties go to the first, a NaN is taken over by the next tap); -1 when
 * the window has no tap inside [0, len). xo_pool_value_*: the window's
 * value, NaN when a tap is NaN (`v > m` or v NaN takes over, a NaN m
 * stays), 0 when it has no tap.
 * Shared with the fused net (net.cl); OpenCL 1.2 has no generic address
 * space, so it is stamped out for __global rows (_g) and __local rows (_l).
 */
#define XO_POOL_ARGMAX_FN(as, sfx)                                                         \
	static inline int xo_pool_argmax_##sfx(as const float *xr, int len, int ch, int pool,     \
					int stride, int pad, int o)                        \
	{                                                                                  \
		int l0 = o * stride - pad;                                                 \
		int best = -1;                                                             \
		float m = 0.0f;                                                            \
                                                                                           \
		for (int j = 0; j < pool; j++) {                                           \
			int l = l0 + j;                                                    \
                                                                                           \
			if (l < 0 || l >= len)                                             \
				continue;                                                  \
			if (best < 0 || !(m >= xr[l * ch])) {                              \
				m = xr[l * ch];                                            \
				best = l;                                                  \
			}                                                                  \
		}                                                                          \
		return best;                                                               \
	}                                                                                  \
	static inline float xo_pool_value_##sfx(as const float *xr, int len, int ch, int pool,   \
					int stride, int pad, int o)                        \
	{                                                                                  \
		int l0 = o * stride - pad, any = 0;                                        \
		float m = 0.0f;                                                            \
                                                                                           \
		for (int j = 0; j < pool; j++) {                                           \
			int l = l0 + j;                                                    \
                                                                                           \
			if (l < 0 || l >= len)                                             \
				continue;                                                  \
			if (!any || xr[l * ch] > m || isnan(xr[l * ch]))                   \
				m = xr[l * ch];                                            \
			any = 1;                                                           \
		}                                                                          \
		return m;                                                                  \
	}

XO_POOL_ARGMAX_FN(__global, g)
XO_POOL_ARGMAX_FN(__local, l)

/* The windows o that may contain position l: o_hi by one division, o_lo by
 * stepping down (few steps); the caller still checks that window o reaches l
 * (o*stride - pad + pool - 1 >= l). Shared with the fused net (net.cl). */
static inline void xo_pool_windows(int l, int pool, int stride, int pad, int out, int *o_lo, int *o_hi)
{
	int hi = (l + pad) / stride, lo;

	if (hi > out - 1)
		hi = out - 1;
	lo = hi;
	while (lo > 0 && (lo - 1) * stride - pad + pool - 1 >= l)
		lo--;
	*o_lo = lo;
	*o_hi = hi;
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
	y[yo + (n * out + o) * ch + c] = xo_pool_value_g(xr, len, ch, pool, stride, pad, o);
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
	/* Windows o with o*stride - pad <= l <= o*stride - pad + pool - 1. */
	xo_pool_windows(l, pool, stride, pad, out, &o_lo, &o_hi);
	for (int o = o_lo; o <= o_hi; o++)
		if (o * stride - pad + pool - 1 >= l &&
		    xo_pool_argmax_g(xr, len, ch, pool, stride, pad, o) == l)
			acc += dy[dyo + (n * out + o) * ch + c];
	dx[dxo + (n * len + l) * ch + c] = acc;
}

/* ---- average_pooling1d --------------------------------------------------
 * Window o's in-bounds taps [max(0, l0), min(len, l0 + pool)), l0 = o*stride
 * - pad; y = (sum of the taps in order) / (their count): Keras averages the
 * valid taps only at a same-padded edge. The division is OpenCL's (2.5 ulp in
 * OpenCL C 1.2's table; exact for a power-of-2 count). */

static inline int xo_pool_count(int o, int len, int pool, int stride, int pad, int *lo, int *hi)
{
	int l0 = o * stride - pad;

	*lo = l0 < 0 ? 0 : l0;
	*hi = l0 + pool > len ? len : l0 + pool;
	return *hi - *lo;
}

/* One work-item per y[n][o][c], 3-D range (c, o, n). */
__kernel void xo_cl_average_pooling1d_fwd(__global const float *x, int xo, __global float *y,
					  int yo, int batch, int len, int ch, int pool, int stride,
					  int pad, int out)
{
	int c = get_global_id(0), o = get_global_id(1), n = get_global_id(2);
	int lo, hi, cnt;
	__global const float *xr;
	float acc = 0.0f;

	if (c >= ch || o >= out || n >= batch)
		return;
	xr = x + xo + n * len * ch + c;
	cnt = xo_pool_count(o, len, pool, stride, pad, &lo, &hi);
	for (int l = lo; l < hi; l++)
		acc += xr[l * ch];
	y[yo + (n * out + o) * ch + c] = acc / (float)cnt;
}

/* One work-item per dx[n][l][c], 3-D range (c, l, n): the sum over the
 * windows o holding l, in increasing o, of dy[o] / count[o] (a gather: no
 * atomics, dx overwritten, 0 where no window holds l). */
__kernel void xo_cl_average_pooling1d_bwd(__global const float *dy, int dyo, __global float *dx,
					  int dxo, int batch, int len, int ch, int pool,
					  int stride, int pad, int out)
{
	int c = get_global_id(0), l = get_global_id(1), n = get_global_id(2);
	int o_lo, o_hi, lo, hi;
	float acc = 0.0f;

	if (c >= ch || l >= len || n >= batch)
		return;
	xo_pool_windows(l, pool, stride, pad, out, &o_lo, &o_hi);
	for (int o = o_lo; o <= o_hi; o++) {
		int cnt = xo_pool_count(o, len, pool, stride, pad, &lo, &hi);

		if (l >= lo && l < hi)
			acc += dy[dyo + (n * out + o) * ch + c] / (float)cnt;
	}
	dx[dxo + (n * len + l) * ch + c] = acc;
}

/* ---- global pooling over the steps: x[batch][len][ch] -> y[batch][ch] ---- */

/* One work-item per y[n][c], 2-D range (c, n): (sum in step order) / len. */
__kernel void xo_cl_global_average_pooling1d_fwd(__global const float *x, int xo,
						 __global float *y, int yo, int batch, int len,
						 int ch)
{
	int c = get_global_id(0), n = get_global_id(1);
	__global const float *xr;
	float acc = 0.0f;

	if (c >= ch || n >= batch)
		return;
	xr = x + xo + n * len * ch + c;
	for (int l = 0; l < len; l++)
		acc += xr[l * ch];
	y[yo + n * ch + c] = acc / (float)len;
}

/* One work-item per dx[n][l][c], 3-D range (c, l, n): dy[n][c] / len. */
__kernel void xo_cl_global_average_pooling1d_bwd(__global const float *dy, int dyo,
						 __global float *dx, int dxo, int batch, int len,
						 int ch)
{
	int c = get_global_id(0), l = get_global_id(1), n = get_global_id(2);

	if (c >= ch || l >= len || n >= batch)
		return;
	dx[dxo + (n * len + l) * ch + c] = dy[dyo + n * ch + c] / (float)len;
}

/* The masked forms (mask_zero, ops.def): ids[batch][len] (i32) after x or
 * dy; a step whose id is 0 is skipped, never read. One work-item per
 * y[n][c], 2-D range (c, n): (sum of the kept steps in order) / their count,
 * 0 / 0 = NaN with none kept. */
__kernel void xo_cl_global_average_pooling1d_masked_fwd(__global const float *x, int xo,
							__global const int *ids, int io,
							__global float *y, int yo, int batch,
							int len, int ch)
{
	int c = get_global_id(0), n = get_global_id(1);
	__global const float *xr;
	__global const int *ir;
	float acc = 0.0f;
	int k = 0;

	if (c >= ch || n >= batch)
		return;
	xr = x + xo + n * len * ch + c;
	ir = ids + io + n * len;
	for (int l = 0; l < len; l++)
		if (ir[l] != 0) {
			acc += xr[l * ch];
			k++;
		}
	y[yo + n * ch + c] = acc / (float)k;
}

/* One work-item per column dx[n][.][c], 2-D range (c, n): the kept count
 * once, then dy[n][c] / count at each kept step, 0 at a masked one. */
__kernel void xo_cl_global_average_pooling1d_masked_bwd(__global const float *dy, int dyo,
							__global const int *ids, int io,
							__global float *dx, int dxo, int batch,
							int len, int ch)
{
	int c = get_global_id(0), n = get_global_id(1);
	__global const int *ir;
	float g;
	int k = 0;

	if (c >= ch || n >= batch)
		return;
	ir = ids + io + n * len;
	for (int l = 0; l < len; l++)
		k += ir[l] != 0;
	g = dy[dyo + n * ch + c] / (float)k;
	for (int l = 0; l < len; l++)
		dx[dxo + (n * len + l) * ch + c] = ir[l] != 0 ? g : 0.0f;
}

/* Winner of a channel's strided row over all len steps (XLA's select from
 * step 0, as the windowed kernels); its value, NaN when a step is NaN. */
static inline float xo_gpool_value(__global const float *xr, int len, int ch)
{
	float m = xr[0];

	for (int l = 1; l < len; l++)
		if (xr[l * ch] > m || isnan(xr[l * ch]))
			m = xr[l * ch];
	return m;
}

static inline int xo_gpool_argmax(__global const float *xr, int len, int ch)
{
	int best = 0;
	float m = xr[0];

	for (int l = 1; l < len; l++)
		if (!(m >= xr[l * ch])) {
			m = xr[l * ch];
			best = l;
		}
	return best;
}

/* One work-item per y[n][c], 2-D range (c, n). */
__kernel void xo_cl_global_max_pooling1d_fwd(__global const float *x, int xo, __global float *y,
					     int yo, int batch, int len, int ch)
{
	int c = get_global_id(0), n = get_global_id(1);
	__global const float *xr;

	if (c >= ch || n >= batch)
		return;
	xr = x + xo + n * len * ch + c;
	y[yo + n * ch + c] = xo_gpool_value(xr, len, ch);
}

/* One work-item per column dx[n][.][c], 2-D range (c, n): dy[n][c] at the
 * winner (NaN at every step of a column holding a NaN), 0 at every other step (the whole column is written). */
__kernel void xo_cl_global_max_pooling1d_bwd(__global const float *x, int xo,
					     __global const float *dy, int dyo, __global float *dx,
					     int dxo, int batch, int len, int ch)
{
	int c = get_global_id(0), n = get_global_id(1);
	__global const float *xr;
	int at, nan;

	if (c >= ch || n >= batch)
		return;
	xr = x + xo + n * len * ch + c;
	at = xo_gpool_argmax(xr, len, ch);
	nan = isnan(xo_gpool_value(xr, len, ch)); /* Keras: 0 / 0 at every step */
	for (int l = 0; l < len; l++)
		dx[dxo + (n * len + l) * ch + c] = nan ? NAN : l == at ? dy[dyo + n * ch + c] : 0.0f;
}
