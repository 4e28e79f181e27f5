/*
 * cpu_norm.c - cpu kernels of batch_normalization (ops.def), forward
 * (training and inference) and backward. Plain C at the baseline ISA; the
 * inner loops run over a block of channels, contiguous in memory, which the
 * compiler vectorizes. Threads over blocks of channels: every channel's
 * statistics are a reduction over all batch*len rows, so a channel belongs
 * to one thread and no reduction crosses threads (small work stays on the
 * calling thread).
 *
 * Arithmetic, float throughout, per channel over the N = batch*len rows in
 * row order (the bounds are in suites/harness.c, tol_batch_normalization):
 *   mean = (sum x) / N, var = (sum (x - mean)^2) / N, r = 1 / sqrt(var + eps),
 *   y = gamma * ((x - mean) * r) + beta; moving = moving * momentum + stat *
 *   (1 - momentum); inference uses the moving statistics for mean and var;
 *   bwd: dbeta = sum dy, dgamma = sum dy xhat, dx = (gamma r / N) (N dy -
 *   dbeta - xhat dgamma) with xhat = (x - mean) r recomputed from x.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

#define XO_CPU_NORM_PAR_MIN 300000

struct bn_job {
	struct xo_params p;
	bool bwd;
	const float *x, *gamma, *beta, *dy;
	float *y, *mm, *mv;        /* fwd: y, state; bwd: dx, dgamma, dbeta */
	float *mean, *r, *s1, *s2; /* scratch [ch] */
};

/* mean[c] and r[c] = 1 / sqrt(var + eps) of channels [c0, c1) from the batch
 * (var returned in s1) */
static void bn_moments(const struct bn_job *j, int64_t c0, int64_t c1)
{
	int64_t rows = j->p.batch * j->p.len, ch = j->p.ch;
	float n = (float)rows;

	for (int64_t c = c0; c < c1; c++)
		j->s1[c] = 0.0f;
	for (int64_t k = 0; k < rows; k++)
		for (int64_t c = c0; c < c1; c++)
			j->s1[c] += j->x[k * ch + c];
	for (int64_t c = c0; c < c1; c++) {
		j->mean[c] = j->s1[c] / n;
		j->s1[c] = 0.0f;
	}
	for (int64_t k = 0; k < rows; k++)
		for (int64_t c = c0; c < c1; c++) {
			float d = j->x[k * ch + c] - j->mean[c];

			j->s1[c] += d * d;
		}
	for (int64_t c = c0; c < c1; c++) {
		j->s1[c] = j->s1[c] / n;
		j->r[c] = 1.0f / sqrtf(j->s1[c] + j->p.epsilon);
	}
}

static void bn_fwd(const struct bn_job *j, int64_t c0, int64_t c1)
{
	int64_t rows = j->p.batch * j->p.len, ch = j->p.ch;
	float mom = j->p.momentum;

	if (j->p.training) {
		bn_moments(j, c0, c1);
		for (int64_t c = c0; c < c1; c++) {
			j->mm[c] = j->mm[c] * mom + j->mean[c] * (1.0f - mom);
			j->mv[c] = j->mv[c] * mom + j->s1[c] * (1.0f - mom);
		}
	} else {
		for (int64_t c = c0; c < c1; c++) {
			j->mean[c] = j->mm[c];
			j->r[c] = 1.0f / sqrtf(j->mv[c] + j->p.epsilon);
		}
	}
	for (int64_t k = 0; k < rows; k++)
		for (int64_t c = c0; c < c1; c++) {
			float g = j->gamma ? j->gamma[c] : 1.0f, b = j->beta ? j->beta[c] : 0.0f;

			j->y[k * ch + c] = g * ((j->x[k * ch + c] - j->mean[c]) * j->r[c]) + b;
		}
}

static void bn_bwd(const struct bn_job *j, int64_t c0, int64_t c1)
{
	int64_t rows = j->p.batch * j->p.len, ch = j->p.ch;
	float n = (float)rows;

	bn_moments(j, c0, c1);
	for (int64_t c = c0; c < c1; c++) {
		j->s1[c] = 0.0f; /* dbeta */
		j->s2[c] = 0.0f; /* dgamma */
	}
	for (int64_t k = 0; k < rows; k++)
		for (int64_t c = c0; c < c1; c++) {
			float dy = j->dy[k * ch + c];
			float xh = (j->x[k * ch + c] - j->mean[c]) * j->r[c];

			j->s1[c] += dy;
			j->s2[c] += dy * xh;
		}
	for (int64_t k = 0; j->y && k < rows; k++)
		for (int64_t c = c0; c < c1; c++) {
			float g = j->gamma ? j->gamma[c] : 1.0f;
			float dy = j->dy[k * ch + c];
			float xh = (j->x[k * ch + c] - j->mean[c]) * j->r[c];

			j->y[k * ch + c] = g * j->r[c] / n * (n * dy - j->s1[c] - xh * j->s2[c]);
		}
	if (j->mm)
		memcpy(j->mm + c0, j->s2 + c0, (size_t)(c1 - c0) * sizeof(float));
	if (j->mv)
		memcpy(j->mv + c0, j->s1 + c0, (size_t)(c1 - c0) * sizeof(float));
}

static void bn_task(void *arg, int t, int nt)
{
	const struct bn_job *j = arg;
	int64_t c0 = j->p.ch * t / nt, c1 = j->p.ch * (t + 1) / nt;

	if (c1 <= c0)
		return;
	(j->bwd ? bn_bwd : bn_fwd)(j, c0, c1);
}

static enum xo_status bn_run(struct xo_backend *be, bool bwd, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *cx = be->ctx;
	struct bn_job j = {.p = a->p, .bwd = bwd};
	double work = (double)a->p.batch * (double)a->p.len * (double)a->p.ch * 3.0;
	int64_t nt = cx->nthreads;
	float *scratch;

	scratch = malloc((size_t)a->p.ch * 4 * sizeof(float));
	if (!scratch)
		return xo_error(XO_ENOMEM, "cpu: batch_normalization: cannot allocate %lld bytes",
				(long long)a->p.ch * 16);
	j.mean = scratch;
	j.r = scratch + a->p.ch;
	j.s1 = scratch + 2 * a->p.ch;
	j.s2 = scratch + 3 * a->p.ch;
	j.x = xo_tensor_f32(a->src[0]);
	j.gamma = a->src[1] ? xo_tensor_f32(a->src[1]) : NULL;
	j.y = a->dst[0] ? xo_tensor_f32(a->dst[0]) : NULL; /* bwd: dx optional */
	if (!bwd) {
		j.beta = a->src[2] ? xo_tensor_f32(a->src[2]) : NULL;
		j.mm = xo_tensor_f32(a->dst[1]);
		j.mv = xo_tensor_f32(a->dst[2]);
	} else {
		j.dy = xo_tensor_f32(a->src[2]);
		j.mm = a->dst[1] ? xo_tensor_f32(a->dst[1]) : NULL;
		j.mv = a->dst[2] ? xo_tensor_f32(a->dst[2]) : NULL;
	}
	if (work < (double)XO_CPU_NORM_PAR_MIN || nt < 1)
		nt = 1;
	if (nt > a->p.ch)
		nt = a->p.ch;
	xo_cpu_threads_run(cx->tp, (int)nt, bn_task, &j);
	free(scratch);
	return XO_OK;
}

static enum xo_status xo_cpu_batch_normalization_fwd(struct xo_backend *be,
						     const struct xo_op_args *a)
{
	return bn_run(be, false, a);
}

static enum xo_status xo_cpu_batch_normalization_bwd(struct xo_backend *be,
						     const struct xo_op_args *a)
{
	return bn_run(be, true, a);
}

void xo_cpu_norm_register(struct xo_backend_iface *iface)
{
	iface->fwd[XO_OP_batch_normalization] = xo_cpu_batch_normalization_fwd;
	iface->bwd[XO_OP_batch_normalization] = xo_cpu_batch_normalization_bwd;
}
