/*
 * lnorm.cl - layer_normalization (ops.def), forward and backward. The
 * statistics are per row over its ch values: one work-item per row (rows
 * are short, 8 to a few hundred values, and there are batch*len of them),
 * each summed in channel order in float (kernels/cpu_lnorm.c has the
 * formulas; the bounds are in suites/harness_bounds.c,
 * tol_layer_normalization). The backward is two launches: per row, its
 * statistics (into a scratch of [rows][3]: s, m, r) and dx; then per
 * channel, dgamma and dbeta summed over the rows in row order. A tensor
 * that is absent (gamma when scale=0, beta when center=0, dx, dgamma,
 * dbeta) is passed with its has_ flag 0 and a stand-in pointer.
 */

/* The statistics of the row at x, shifted by its first value (the cpu
 * kernel's reasons): *s = x[0], *m = mean of x - s, *r = 1 / sqrt(var + eps)
 * (var biased); the deviation is (x - s) - m, exactly 0 on a constant row. */
static inline void xo_ln_moments(__global const float *x, int ch, float eps, float *s, float *m,
				 float *r)
{
	float n = (float)ch, sh = x[0], t = 0.0f, q = 0.0f, mm;

	for (int c = 0; c < ch; c++)
		t += x[c] - sh;
	mm = t / n;
	for (int c = 0; c < ch; c++) {
		float d = (x[c] - sh) - mm;

		q += d * d;
	}
	*s = sh;
	*m = mm;
	*r = 1.0f / sqrt(q / n + eps);
}

__kernel void xo_cl_layer_normalization_fwd(__global const float *x, int xo,
					    __global const float *gamma, int go, int has_g,
					    __global const float *beta, int bo, int has_b,
					    __global float *y, int yo, int rows, int ch, float eps)
{
	int k = get_global_id(0);
	float s, m, r;

	if (k >= rows)
		return;
	x += xo + (long)k * ch;
	y += yo + (long)k * ch;
	xo_ln_moments(x, ch, eps, &s, &m, &r);
	for (int c = 0; c < ch; c++) {
		float g = has_g ? gamma[go + c] : 1.0f, b = has_b ? beta[bo + c] : 0.0f;

		y[c] = g * (((x[c] - s) - m) * r) + b;
	}
}

/* Per row: its statistics into st[3k .. 3k + 2], and dx when has_dx. */
__kernel void xo_cl_layer_normalization_bwd(__global const float *x, int xo,
					    __global const float *gamma, int go, int has_g,
					    __global const float *dy, int dyo, __global float *dx,
					    int dxo, int has_dx, __global float *st, int rows, int ch,
					    float eps)
{
	int k = get_global_id(0);
	float n = (float)ch, s, m, r, f, sg = 0.0f, sgx = 0.0f;

	if (k >= rows)
		return;
	x += xo + (long)k * ch;
	dy += dyo + (long)k * ch;
	dx += dxo + (long)k * ch;
	xo_ln_moments(x, ch, eps, &s, &m, &r);
	st[3 * k] = s;
	st[3 * k + 1] = m;
	st[3 * k + 2] = r;
	if (!has_dx)
		return;
	for (int c = 0; c < ch; c++) {
		float g = (has_g ? gamma[go + c] : 1.0f) * dy[c];

		sg += g;
		sgx += g * (((x[c] - s) - m) * r);
	}
	f = r / n;
	for (int c = 0; c < ch; c++) {
		float g = (has_g ? gamma[go + c] : 1.0f) * dy[c];

		dx[c] = f * (n * g - sg - (((x[c] - s) - m) * r) * sgx);
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
		sg += d * (((x[(long)k * ch + c] - st[3 * k]) - st[3 * k + 1]) * st[3 * k + 2]);
	}
	if (has_dg)
		dg[dgo + c] = sg;
	if (has_db)
		db[dbo + c] = sb;
}
