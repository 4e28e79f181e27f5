/*
 * cpu_lnorm.c - cpu kernels of layer_normalization (ops.def), forward and
 * backward. Plain C at the baseline ISA. Rows are short (the normalized
 * axis: 8 to a few hundred values) and independent, so the forward and the
 * backward's dx are threaded over runs of rows; each row's mean and
 * variance are two passes over the row with double accumulators (the
 * deviation pass keeps the variance free of cancellation; double sums of a
 * few hundred floats are exact to well under the float result's rounding).
 * The backward's dgamma and dbeta are sums over all the rows per channel:
 * a second phase threaded over runs of channels, each channel summed in
 * row order in float, so the bits do not depend on the thread count. The
 * rows' statistics pass between the phases in the shared scratch (mean and
 * r per row).
 *
 * Arithmetic per row of ch values (the bounds are in suites/harness_bounds.c,
 * tol_layer_normalization, for float sums in any order):
 *   mean = (sum x) / ch, var = (sum (x - mean)^2) / ch, r = 1 / sqrt(var + eps),
 *   y = gamma ((x - mean) r) + beta;
 *   bwd: g = gamma dy, dx = (r / ch) (ch g - sum g - xhat sum g xhat);
 *   per channel over the rows: dgamma = sum dy xhat, dbeta = sum dy.
 */
#include <math.h>

#include "cpu.h"

struct ln_job {
	int64_t rows, ch;
	float eps;
	const float *x, *gamma, *beta, *dy;
	float *y;      /* fwd: y; bwd: dx (NULL: not wanted) */
	float *dg, *db;
	float *stats;  /* bwd: [rows][2] mean, r */
};

/* mean and r of the row at x */
static void ln_moments(const float *x, int64_t ch, float eps, float *mean, float *r)
{
	double s = 0.0, q = 0.0, m;

	for (int64_t c = 0; c < ch; c++)
		s += x[c];
	m = s / (double)ch;
	for (int64_t c = 0; c < ch; c++) {
		double d = (double)x[c] - m;

		q += d * d;
	}
	*mean = (float)m;
	*r = 1.0f / sqrtf((float)(q / (double)ch) + eps);
}

static void ln_fwd_rows(const struct ln_job *j, int64_t k0, int64_t k1)
{
	for (int64_t k = k0; k < k1; k++) {
		const float *x = j->x + k * j->ch;
		float *y = j->y + k * j->ch, mean, r;

		ln_moments(x, j->ch, j->eps, &mean, &r);
		for (int64_t c = 0; c < j->ch; c++) {
			float g = j->gamma ? j->gamma[c] : 1.0f, b = j->beta ? j->beta[c] : 0.0f;

			y[c] = g * ((x[c] - mean) * r) + b;
		}
	}
}

static void ln_bwd_rows(const struct ln_job *j, int64_t k0, int64_t k1)
{
	float n = (float)j->ch;

	for (int64_t k = k0; k < k1; k++) {
		const float *x = j->x + k * j->ch, *dy = j->dy + k * j->ch;
		float mean, r, f;
		double sg = 0.0, sgx = 0.0;

		ln_moments(x, j->ch, j->eps, &mean, &r);
		j->stats[2 * k] = mean;
		j->stats[2 * k + 1] = r;
		if (!j->y)
			continue;
		for (int64_t c = 0; c < j->ch; c++) {
			float g = (j->gamma ? j->gamma[c] : 1.0f) * dy[c];

			sg += g;
			sgx += g * ((x[c] - mean) * r);
		}
		f = r / n;
		for (int64_t c = 0; c < j->ch; c++) {
			float g = (j->gamma ? j->gamma[c] : 1.0f) * dy[c];
			float xh = (x[c] - mean) * r;

			j->y[k * j->ch + c] = f * (n * g - (float)sg - xh * (float)sgx);
		}
	}
}

/* dgamma, dbeta of channels [c0, c1): sums over the rows in row order */
static void ln_bwd_channels(const struct ln_job *j, int64_t c0, int64_t c1)
{
	for (int64_t c = c0; c < c1; c++) {
		if (j->dg)
			j->dg[c] = 0.0f;
		if (j->db)
			j->db[c] = 0.0f;
	}
	for (int64_t k = 0; k < j->rows; k++) {
		const float *x = j->x + k * j->ch, *dy = j->dy + k * j->ch;
		float mean = j->stats[2 * k], r = j->stats[2 * k + 1];

		for (int64_t c = c0; c < c1 && j->dg; c++)
			j->dg[c] += dy[c] * ((x[c] - mean) * r);
		for (int64_t c = c0; c < c1 && j->db; c++)
			j->db[c] += dy[c];
	}
}

static void ln_fwd_task(void *arg, int t, int nt)
{
	const struct ln_job *j = arg;

	ln_fwd_rows(j, j->rows * t / nt, j->rows * (t + 1) / nt);
}

static void ln_bwd_rows_task(void *arg, int t, int nt)
{
	const struct ln_job *j = arg;

	ln_bwd_rows(j, j->rows * t / nt, j->rows * (t + 1) / nt);
}

static void ln_bwd_channels_task(void *arg, int t, int nt)
{
	const struct ln_job *j = arg;

	ln_bwd_channels(j, j->ch * t / nt, j->ch * (t + 1) / nt);
}

static struct ln_job ln_job_of(const struct xo_op_args *a)
{
	struct ln_job j = {
	    .rows = a->p.batch * a->p.len,
	    .ch = a->p.ch,
	    .eps = a->p.epsilon,
	    .x = xo_tensor_f32(a->src[0]),
	    .gamma = a->src[1] ? xo_tensor_f32(a->src[1]) : NULL,
	    .y = a->dst[0] ? xo_tensor_f32(a->dst[0]) : NULL,
	};

	return j;
}

enum xo_status xo_cpu_layer_normalization_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *cx = be->ctx;
	struct ln_job j = ln_job_of(a);
	int nt = xo_cpu_threads_for(cx, j.rows * j.ch * 3, j.rows);

	j.beta = a->src[2] ? xo_tensor_f32(a->src[2]) : NULL;
	xo_cpu_threads_run(cx->tp, nt, ln_fwd_task, &j);
	return XO_OK;
}

enum xo_status xo_cpu_layer_normalization_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *cx = be->ctx;
	struct ln_job j = ln_job_of(a);
	int nt = xo_cpu_threads_for(cx, j.rows * j.ch * 5, j.rows);
	enum xo_status st = xo_cpu_scratch_reserve(cx, 2 * j.rows, 0, 0);

	if (st)
		return st;
	j.dy = xo_tensor_f32(a->src[2]);
	j.dg = a->dst[1] ? xo_tensor_f32(a->dst[1]) : NULL;
	j.db = a->dst[2] ? xo_tensor_f32(a->dst[2]) : NULL;
	j.stats = cx->shared.p;
	xo_cpu_threads_run(cx->tp, nt, ln_bwd_rows_task, &j);
	if (j.dg || j.db)
		xo_cpu_threads_run(cx->tp, nt > j.ch ? (int)j.ch : nt, ln_bwd_channels_task, &j);
	return XO_OK;
}
