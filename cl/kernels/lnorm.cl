/*
 * lnorm.cl - layer_normalization (ops.def), forward and backward. The
 * statistics are per row over its ch values: one work-item per row (rows
 * are short, 8 to a few hundred values, and there are batch*len of them),
 * each summed in channel order in float (kernels/cpu_lnorm.c has the
 * formulas; the bounds are in suites/harness_bounds.c,
 * tol_layer_normalization). The backward is two launches: per row, its
 * statistics (into a scratch of [rows][2]: mean, r) and dx; then per
 * channel, dgamma and dbeta summed over the rows in row order. A tensor
 * that is absent (gamma when scale=0, beta when center=0, dx, dgamma,
 * dbeta) is passed with its has_ flag 0 and a stand-in pointer.
 */

/* Mean and r = 1 / sqrt(var + eps) (var biased) of the row at x. */
static inline void xo_ln_moments(__global const float *x, int ch, float eps, float *mean,
				 float *r)
{
	float n = (float)ch, s = 0.0f, q = 0.0f, m;

	for (int c = 0; c < ch; c++)
		s += x[c];
	m = s / n;
	for (int c = 0; c < ch; c++) {
		float d = x[c] - m;

		q += d * d;
	}
	*mean = m;
	*r = 1.0f / sqrt(q / n + eps);
}

__kernel void xo_cl_layer_normalization_fwd(__global const float *x, int xo,
					    __global const float *gamma, int go, int has_g,
					    __global const float *beta, int bo, int has_b,
					    __global float *y, int yo, int rows, int ch, float eps)
{
	int k = get_global_id(0);
	float mean, r;

	if (k >= rows)
		return;
	x += xo + (long)k * ch;
	y += yo + (long)k * ch;
	xo_ln_moments(x, ch, eps, &mean, &r);
	for (int c = 0; c < ch; c++) {
		float g = has_g ? gamma[go + c] : 1.0f, b = has_b ? beta[bo + c] : 0.0f;

		y[c] = g * ((x[c] - mean) * r) + b;
	}
}

/* Per row: its statistics into st[2k], st[2k + 1], and dx when has_dx. */
__kernel void xo_cl_layer_normalization_bwd(__global const float *x, int xo,
					    __global const float *gamma, int go, int has_g,
					    __global const float *dy, int dyo, __global float *dx,
					    int dxo, int has_dx, __global float *st, int rows, int ch,
					    float eps)
{
	int k = get_global_id(0);
	float n = (float)ch, mean, r, f, sg = 0.0f, sgx = 0.0f;

	if (k >= rows)
		return;
	x += xo + (long)k * ch;
	dy += dyo + (long)k * ch;
	dx += dxo + (long)k * ch;
	xo_ln_moments(x, ch, eps, &mean, &r);
	st[2 * k] = mean;
	st[2 * k + 1] = r;
	if (!has_dx)
		return;
	for (int c = 0; c < ch; c++) {
		float g = (has_g ? gamma[go + c] : 1.0f) * dy[c];

		sg += g;
		sgx += g * ((x[c] - mean) * r);
	}
	f = r / n;
	for (int c = 0; c < ch; c++) {
		float g = (has_g ? gamma[go + c] : 1.0f) * dy[c];

		dx[c] = f * (n * g - sg - ((x[c] - mean) * r) * sgx);
	}
}

/* Per channel: dgamma = sum dy xhat, dbeta = sum dy over the rows, from the
 * statistics the row launch left in st. */
__kernel void xo_cl_layer_normalization_bwd_params(__global const float *x, int xo,
						   __global const float *dy, int dyo,
						   __global const float *st, __global float *dg,
						   int dgo, int has_dg, __global float *db, int dbo,
						   int has_db, int rows, int ch)
{
	int c = get_global_id(0);
	float sg = 0.0f, sb = 0.0f;

	if (c >= ch)
		return;
	x += xo;
	dy += dyo;
	for (int k = 0; k < rows; k++) {
		float d = dy[(long)k * ch + c];

		sb += d;
		sg += d * ((x[(long)k * ch + c] - st[2 * k]) * st[2 * k + 1]);
	}
	if (has_dg)
		dg[dgo + c] = sg;
	if (has_db)
		db[dbo + c] = sb;
}
