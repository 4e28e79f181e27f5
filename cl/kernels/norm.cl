/*
 * norm.cl - batch_normalization (ops.def), forward (training and inference)
 * and backward. One work-item per channel: every channel's statistics are a
 * reduction over all batch*len rows, summed in row order as the cpu backend
 * does (kernels/cpu_norm.c has the formulas; the bounds are in
 * suites/harness.c, tol_batch_normalization). A tensor that is absent
 * (gamma when scale=0, beta when center=0, dgamma, dbeta) is passed with
 * its has_ flag 0 and a stand-in pointer. At the end normalization (Keras's
 * Normalization: fixed statistics), one work-item per element.
 */

/* Batch mean and r = 1 / sqrt(var + eps) of channel c; var through *var. */
static inline void xo_bn_moments(__global const float *x, int rows, int ch, int c, float eps,
				 float *mean, float *var, float *r)
{
	float n = (float)rows, s = 0.0f, q = 0.0f, m;

	for (int k = 0; k < rows; k++)
		s += x[k * ch + c];
	m = s / n;
	for (int k = 0; k < rows; k++) {
		float d = x[k * ch + c] - m;

		q += d * d;
	}
	*mean = m;
	*var = q / n;
	*r = 1.0f / sqrt(*var + eps);
}

__kernel void xo_cl_batch_normalization_fwd(__global const float *x, int xo,
					    __global const float *gamma, int go, int has_g,
					    __global const float *beta, int bo, int has_b,
					    __global float *y, int yo, __global float *mm, int mmo,
					    __global float *mv, int mvo, int rows, int ch,
					    int training, float momentum, float eps)
{
	int c = get_global_id(0);
	float mean, var, r, g, b;

	if (c >= ch)
		return;
	x += xo;
	y += yo;
	if (training) {
		xo_bn_moments(x, rows, ch, c, eps, &mean, &var, &r);
		mm[mmo + c] = mm[mmo + c] * momentum + mean * (1.0f - momentum);
		mv[mvo + c] = mv[mvo + c] * momentum + var * (1.0f - momentum);
	} else {
		mean = mm[mmo + c];
		r = 1.0f / sqrt(mv[mvo + c] + eps);
	}
	g = has_g ? gamma[go + c] : 1.0f;
	b = has_b ? beta[bo + c] : 0.0f;
	for (int k = 0; k < rows; k++)
		y[k * ch + c] = g * ((x[k * ch + c] - mean) * r) + b;
}

__kernel void xo_cl_batch_normalization_bwd(__global const float *x, int xo,
					    __global const float *gamma, int go, int has_g,
					    __global const float *dy, int dyo, __global float *dx,
					    int dxo, int has_dx, __global float *dg, int dgo, int has_dg,
					    __global float *db, int dbo, int has_db, int rows, int ch,
					    float eps)
{
	int c = get_global_id(0);
	float n = (float)rows, mean, var, r, g, sb = 0.0f, sg = 0.0f;

	if (c >= ch)
		return;
	x += xo;
	dy += dyo;
	dx += dxo;
	xo_bn_moments(x, rows, ch, c, eps, &mean, &var, &r);
	for (int k = 0; k < rows; k++) {
		float d = dy[k * ch + c];

		sb += d;
		sg += d * ((x[k * ch + c] - mean) * r);
	}
	g = has_g ? gamma[go + c] : 1.0f;
	for (int k = 0; has_dx && k < rows; k++) {
		float xh = (x[k * ch + c] - mean) * r;

		dx[k * ch + c] = g * r / n * (n * dy[k * ch + c] - sb - xh * sg);
	}
	if (has_dg)
		dg[dgo + c] = sg;
	if (has_db)
		db[dbo + c] = sb;
}

/* normalization (ops.def): den = max(sqrt(variance), 1e-7f), a NaN root kept
 * (jnp.maximum); one work-item per element of the n = rows * ch, channel
 * i % ch. The root and the quotient are OpenCL C's (3 and 2.5 ulp; the
 * bound in suites/harness_bounds.c, bound_normalization). invert (Keras's
 * invert=True): y = mean + x * den, dx = dy * den. */
static inline float xo_normz_den(float v)
{
	float s = sqrt(v);

	return s < 1e-7f ? 1e-7f : s;
}

__kernel void xo_cl_normalization_fwd(__global const float *x, int xo, __global const float *mean,
				      int mo, __global const float *var, int vo,
				      __global float *y, int yo, int n, int ch, int invert)
{
	int i = get_global_id(0);

	if (i < n) {
		int c = i % ch;
		float den = xo_normz_den(var[vo + c]);

		y[yo + i] = invert ? mean[mo + c] + x[xo + i] * den : (x[xo + i] - mean[mo + c]) / den;
	}
}

__kernel void xo_cl_normalization_bwd(__global const float *var, int vo, __global const float *dy,
				      int dyo, __global float *dx, int dxo, int n, int ch,
				      int invert)
{
	int i = get_global_id(0);

	if (i < n) {
		float den = xo_normz_den(var[vo + i % ch]);

		dx[dxo + i] = invert ? dy[dyo + i] * den : dy[dyo + i] / den;
	}
}
