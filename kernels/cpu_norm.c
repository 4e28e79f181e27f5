/*
 * cpu_norm.c - cpu kernels of batch_normalization (ops.def), forward
 * (training and inference) and backward. Plain C at the baseline ISA; the
 * rows are cut into fixed blocks of BN_BLOCK rows, threads take runs of
 * blocks, and within a block the channels go in groups of BN_W whose
 * accumulators stay in registers (a constant trip count, which GCC's -O2
 * vectorizes; the stores of y and dx as explicit 4-float vectors). Each
 * statistic is one phase: per block partial sums in row order, then the
 * partials added in block order on the calling thread, so results do not
 * depend on the thread count (small work stays on the calling thread).
 * Splitting the channels among the threads instead would give cnn_bn's 16
 * channels 8 per thread at a stride of 16 floats, scalar (about 3x the cpu time
 * of this form).
 *
 * Arithmetic, float throughout, per channel over the N = batch*len rows
 * (sums blocked as above; the bounds hold for any order; the bounds are in suites/harness.c, tol_batch_normalization):
 *   mean = (sum x) / N, var = (sum (x - mean)^2) / N, r = 1 / sqrt(var + eps),
 *   y = gamma * ((x - mean) * r) + beta; moving = moving * momentum + stat *
 *   (1 - momentum); inference uses the moving statistics for mean and var;
 *   bwd: dbeta = sum dy, dgamma = sum dy xhat, dx = (gamma r / N) (N dy -
 *   dbeta - xhat dgamma) with xhat = (x - mean) r recomputed from x.
 * At the end normalization (Keras's Normalization: fixed statistics), an
 * element-wise op over rows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

#define XO_CPU_NORM_PAR_MIN XO_CPU_PAR_MIN

/* Rows per block of the per-channel sums: each block's partial sums are
 * formed in row order, then the blocks' partials are added in block order
 * (the same bits whatever the thread count; blocked summation is also
 * more accurate than one long recursive sum, and the harness bound holds
 * for any order). */
#define BN_BLOCK 256

enum bn_phase { BN_SUM, BN_DEV, BN_DYXH, BN_Y, BN_DX };

struct bn_job {
	struct xo_params p;
	enum bn_phase phase;
	int64_t nblk;
	const float *x, *dy;
	float *y;                  /* fwd: y; bwd: dx */
	/* per channel [ch]: mean, r, gamma (1 if none), beta (0 if none) */
	const float *mean, *r, *g, *b, *s1, *s2;
	float *part1, *part2;      /* [nblk][ch] partial sums */
};

/* The phases over rows [k0, k1) and the w <= BN_W channels at c of each
 * row. Called with w = BN_W (a constant after inlining: GCC's -O2 cost
 * model vectorizes only loops of a known trip count) or with the tail;
 * the accumulators are locals, in registers, so each row costs loads of
 * x (and dy) only. Per channel the order of the sums is the row order. */
#define BN_W 8
#define BN_INLINE static inline __attribute__((always_inline))

/* 4 floats as one GCC vector (an SSE register at the baseline ISA; 16
 * bytes, so no ABI question), loaded and stored unaligned: the loops that
 * store y and dx, which -O2 leaves scalar, written out over BN_W / 4
 * vectors; lane by lane the same operations as the scalar tail. */
#define BN_V 4
typedef float bn_v __attribute__((vector_size(BN_V * 4)));
typedef float bn_vu __attribute__((vector_size(BN_V * 4), aligned(4), may_alias));

BN_INLINE bn_v bn_ld(const float *p)
{
	return *(const bn_vu *)p;
}

BN_INLINE void bn_st(float *p, bn_v v)
{
	*(bn_vu *)p = v;
}

BN_INLINE void bn_sum_w(const struct bn_job *j, float *restrict a1, int64_t k0, int64_t k1,
			int64_t c, int64_t w)
{
	int64_t ch = j->p.ch;
	float acc[BN_W] = {0};

	for (int64_t k = k0; k < k1; k++) {
		const float *restrict x = j->x + k * ch + c;

		for (int64_t i = 0; i < w; i++)
			acc[i] += x[i];
	}
	for (int64_t i = 0; i < w; i++)
		a1[c + i] = acc[i];
}

BN_INLINE void bn_dev_w(const struct bn_job *j, float *restrict a1, int64_t k0, int64_t k1,
			int64_t c, int64_t w)
{
	int64_t ch = j->p.ch;
	float acc[BN_W] = {0}, m[BN_W] = {0};

	for (int64_t i = 0; i < w; i++)
		m[i] = j->mean[c + i];
	for (int64_t k = k0; k < k1; k++) {
		const float *restrict x = j->x + k * ch + c;

		for (int64_t i = 0; i < w; i++) {
			float d = x[i] - m[i];

			acc[i] += d * d;
		}
	}
	for (int64_t i = 0; i < w; i++)
		a1[c + i] = acc[i];
}

BN_INLINE void bn_dyxh_w(const struct bn_job *j, float *restrict a1, float *restrict a2,
			 int64_t k0, int64_t k1, int64_t c, int64_t w)
{
	int64_t ch = j->p.ch;
	float db[BN_W] = {0}, dg[BN_W] = {0}, m[BN_W] = {0}, r[BN_W] = {0};

	for (int64_t i = 0; i < w; i++) {
		m[i] = j->mean[c + i];
		r[i] = j->r[c + i];
	}
	for (int64_t k = k0; k < k1; k++) {
		const float *restrict x = j->x + k * ch + c, *restrict dy = j->dy + k * ch + c;

		for (int64_t i = 0; i < w; i++) {
			float xh = (x[i] - m[i]) * r[i];

			db[i] += dy[i];
			dg[i] += dy[i] * xh;
		}
	}
	for (int64_t i = 0; i < w; i++) {
		a1[c + i] = db[i];
		a2[c + i] = dg[i];
	}
}

BN_INLINE void bn_y_w(const struct bn_job *j, int64_t k0, int64_t k1, int64_t c, int64_t w)
{
	int64_t ch = j->p.ch;
	float m[BN_W] = {0}, r[BN_W] = {0}, g[BN_W] = {0}, b[BN_W] = {0};

	for (int64_t i = 0; i < w; i++) {
		m[i] = j->mean[c + i];
		r[i] = j->r[c + i];
		g[i] = j->g[c + i];
		b[i] = j->b[c + i];
	}
	if (w == BN_W) {
		bn_v vm[2] = {bn_ld(m), bn_ld(m + BN_V)}, vr[2] = {bn_ld(r), bn_ld(r + BN_V)};
		bn_v vg[2] = {bn_ld(g), bn_ld(g + BN_V)}, vb[2] = {bn_ld(b), bn_ld(b + BN_V)};

		for (int64_t k = k0; k < k1; k++)
			for (int h = 0; h < 2; h++) {
				int64_t o = k * ch + c + h * BN_V;

				bn_st(j->y + o, vg[h] * ((bn_ld(j->x + o) - vm[h]) * vr[h]) + vb[h]);
			}
		return;
	}
	for (int64_t k = k0; k < k1; k++) {
		const float *restrict x = j->x + k * ch + c;
		float *restrict y = j->y + k * ch + c;

		for (int64_t i = 0; i < w; i++)
			y[i] = g[i] * ((x[i] - m[i]) * r[i]) + b[i];
	}
}

BN_INLINE void bn_dx_w(const struct bn_job *j, int64_t k0, int64_t k1, int64_t c, int64_t w)
{
	int64_t ch = j->p.ch;
	float n = (float)(j->p.batch * j->p.len);
	float m[BN_W] = {0}, r[BN_W] = {0}, f[BN_W] = {0}, s1[BN_W] = {0}, s2[BN_W] = {0};

	for (int64_t i = 0; i < w; i++) {
		m[i] = j->mean[c + i];
		r[i] = j->r[c + i];
		f[i] = j->g[c + i] * j->r[c + i] / n; /* as g * r / n, left to right */
		s1[i] = j->s1[c + i];
		s2[i] = j->s2[c + i];
	}
	if (w == BN_W) {
		bn_v vm[2] = {bn_ld(m), bn_ld(m + BN_V)}, vr[2] = {bn_ld(r), bn_ld(r + BN_V)};
		bn_v vf[2] = {bn_ld(f), bn_ld(f + BN_V)}, v1[2] = {bn_ld(s1), bn_ld(s1 + BN_V)};
		bn_v v2[2] = {bn_ld(s2), bn_ld(s2 + BN_V)};

		for (int64_t k = k0; k < k1; k++)
			for (int h = 0; h < 2; h++) {
				int64_t o = k * ch + c + h * BN_V;
				bn_v xh = (bn_ld(j->x + o) - vm[h]) * vr[h];

				bn_st(j->y + o, vf[h] * (n * bn_ld(j->dy + o) - v1[h] - xh * v2[h]));
			}
		return;
	}
	for (int64_t k = k0; k < k1; k++) {
		const float *restrict x = j->x + k * ch + c, *restrict dy = j->dy + k * ch + c;
		float *restrict dx = j->y + k * ch + c;

		for (int64_t i = 0; i < w; i++) {
			float xh = (x[i] - m[i]) * r[i];

			dx[i] = f[i] * (n * dy[i] - s1[i] - xh * s2[i]);
		}
	}
}

/* One phase over blocks [b0, b1) of BN_BLOCK rows, channels in groups of
 * BN_W within each block (a block of rows stays in L1 across the groups). */
static void bn_blocks(const struct bn_job *j, int64_t b0, int64_t b1)
{
	int64_t rows = j->p.batch * j->p.len, ch = j->p.ch;

	for (int64_t blk = b0; blk < b1; blk++) {
		int64_t k0 = blk * BN_BLOCK, k1 = k0 + BN_BLOCK < rows ? k0 + BN_BLOCK : rows;
		float *a1 = j->part1 + blk * ch, *a2 = j->part2 + blk * ch;

		for (int64_t c = 0; c < ch; c += BN_W) {
			bool full = ch - c >= BN_W;
			int64_t w = full ? BN_W : ch - c;

			switch (j->phase) {
			case BN_SUM:
				if (full)
					bn_sum_w(j, a1, k0, k1, c, BN_W);
				else
					bn_sum_w(j, a1, k0, k1, c, w);
				break;
			case BN_DEV:
				if (full)
					bn_dev_w(j, a1, k0, k1, c, BN_W);
				else
					bn_dev_w(j, a1, k0, k1, c, w);
				break;
			case BN_DYXH:
				if (full)
					bn_dyxh_w(j, a1, a2, k0, k1, c, BN_W);
				else
					bn_dyxh_w(j, a1, a2, k0, k1, c, w);
				break;
			case BN_Y:
				if (full)
					bn_y_w(j, k0, k1, c, BN_W);
				else
					bn_y_w(j, k0, k1, c, w);
				break;
			case BN_DX:
				if (full)
					bn_dx_w(j, k0, k1, c, BN_W);
				else
					bn_dx_w(j, k0, k1, c, w);
				break;
			}
		}
	}
}

static void bn_task(void *arg, int t, int nt)
{
	const struct bn_job *j = arg;
	int64_t b0 = j->nblk * t / nt, b1 = j->nblk * (t + 1) / nt;

	if (b1 > b0)
		bn_blocks(j, b0, b1);
}

static void bn_phase(struct xo_cpu_ctx *cx, int nt, struct bn_job *j, enum bn_phase ph)
{
	j->phase = ph;
	xo_cpu_threads_run(cx->tp, nt, bn_task, j);
}

/* out[c] = sum over blocks, in block order, of part[blk][c] */
static void bn_reduce(float *out, const float *part, int64_t nblk, int64_t ch)
{
	for (int64_t c = 0; c < ch; c++)
		out[c] = nblk > 0 ? part[c] : 0.0f;
	for (int64_t blk = 1; blk < nblk; blk++)
		for (int64_t c = 0; c < ch; c++)
			out[c] += part[blk * ch + c];
}

/* mean and r = 1 / sqrt(var + eps) from the batch into mean, r; var into var */
static void bn_moments(struct xo_cpu_ctx *cx, int nt, struct bn_job *j, float *mean, float *r,
		       float *var)
{
	int64_t ch = j->p.ch;
	float n = (float)(j->p.batch * j->p.len);

	bn_phase(cx, nt, j, BN_SUM);
	bn_reduce(mean, j->part1, j->nblk, ch);
	for (int64_t c = 0; c < ch; c++)
		mean[c] = mean[c] / n;
	bn_phase(cx, nt, j, BN_DEV);
	bn_reduce(var, j->part1, j->nblk, ch);
	for (int64_t c = 0; c < ch; c++) {
		var[c] = var[c] / n;
		r[c] = 1.0f / sqrtf(var[c] + j->p.epsilon);
	}
}

static enum xo_status bn_run(struct xo_backend *be, bool bwd, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *cx = be->ctx;
	struct bn_job j = {.p = a->p};
	int64_t ch = a->p.ch, rows = a->p.batch * a->p.len;
	double work = (double)rows * (double)ch * 3.0;
	int64_t nt = cx->nthreads, nblk = (rows + BN_BLOCK - 1) / BN_BLOCK;
	float *scratch, *mean, *r, *g, *b, *s1, *s2;
	const float *gamma = a->src[1] ? xo_tensor_f32(a->src[1]) : NULL;
	float *mm, *mv;
	/* 6 per-channel arrays and two [nblk][ch] partials (sizes validated:
	 * rows * ch fits, and nblk <= rows) */
	double bytes = ((double)ch * 6.0 + 2.0 * (double)nblk * (double)ch) * sizeof(float);

	scratch = malloc((size_t)bytes);
	if (!scratch)
		return xo_error(XO_ENOMEM, "cpu: batch_normalization: cannot allocate %.0f bytes",
				bytes);
	mean = scratch;
	r = mean + ch;
	g = r + ch;
	b = g + ch;
	s1 = b + ch;
	s2 = s1 + ch;
	j.part1 = s2 + ch;
	j.part2 = j.part1 + nblk * ch;
	j.nblk = nblk;
	j.mean = mean;
	j.r = r;
	j.g = g;
	j.b = b;
	j.s1 = s1;
	j.s2 = s2;
	for (int64_t c = 0; c < ch; c++) {
		g[c] = gamma ? gamma[c] : 1.0f;
		b[c] = 0.0f;
	}
	j.x = xo_tensor_f32(a->src[0]);
	j.y = a->dst[0] ? xo_tensor_f32(a->dst[0]) : NULL; /* bwd: dx optional */
	if (work < (double)XO_CPU_NORM_PAR_MIN || nt < 1)
		nt = 1;
	if (nt > nblk)
		nt = nblk > 0 ? nblk : 1;
	if (!bwd) {
		const float *beta = a->src[2] ? xo_tensor_f32(a->src[2]) : NULL;
		float mom = a->p.momentum;

		mm = xo_tensor_f32(a->dst[1]);
		mv = xo_tensor_f32(a->dst[2]);
		for (int64_t c = 0; c < ch && beta; c++)
			b[c] = beta[c];
		if (a->p.training) {
			bn_moments(cx, (int)nt, &j, mean, r, s1);
			for (int64_t c = 0; c < ch; c++) {
				mm[c] = mm[c] * mom + mean[c] * (1.0f - mom);
				mv[c] = mv[c] * mom + s1[c] * (1.0f - mom);
			}
		} else {
			for (int64_t c = 0; c < ch; c++) {
				mean[c] = mm[c];
				r[c] = 1.0f / sqrtf(mv[c] + a->p.epsilon);
			}
		}
		bn_phase(cx, (int)nt, &j, BN_Y);
	} else {
		j.dy = xo_tensor_f32(a->src[2]);
		mm = a->dst[1] ? xo_tensor_f32(a->dst[1]) : NULL;
		mv = a->dst[2] ? xo_tensor_f32(a->dst[2]) : NULL;
		bn_moments(cx, (int)nt, &j, mean, r, s1);
		bn_phase(cx, (int)nt, &j, BN_DYXH);
		bn_reduce(s1, j.part1, nblk, ch); /* dbeta */
		bn_reduce(s2, j.part2, nblk, ch); /* dgamma */
		if (j.y)
			bn_phase(cx, (int)nt, &j, BN_DX);
		if (mm)
			memcpy(mm, s2, (size_t)ch * sizeof(float));
		if (mv)
			memcpy(mv, s1, (size_t)ch * sizeof(float));
	}
	free(scratch);
	return XO_OK;
}

enum xo_status xo_cpu_batch_normalization_fwd(struct xo_backend *be,
						     const struct xo_op_args *a)
{
	return bn_run(be, false, a);
}

enum xo_status xo_cpu_batch_normalization_bwd(struct xo_backend *be,
						     const struct xo_op_args *a)
{
	return bn_run(be, true, a);
}


/*
 * normalization (ops.def): y = (x - mean) / den, dx = dy / den, den =
 * max(sqrtf(variance), 1e-7f) per channel, computed once per call into the
 * context's shared scratch (ch floats) by the calling thread. Float as
 * Keras: the difference, the root and the quotient each rounded once (a
 * division, not a product by 1/den: Keras divides). Threads take whole
 * rows, [rows * t / nt, rows * (t + 1) / nt); x and y (dy and dx) may be
 * the same array. invert (Keras's invert=True): y = mean + x * den, dx =
 * dy * den, the product and the sum rounded once each (Keras's order; a
 * contracted fma rounds once, within the op's bound).
 */
struct normz_job {
	const float *x, *mean, *den; /* bwd: x is dy, mean unused */
	float *y;
	int64_t rows, ch;
	bool invert;
};

static void normz_task(void *arg, int t, int nt)
{
	const struct normz_job *j = arg;
	int64_t lo = j->rows * t / nt, hi = j->rows * (t + 1) / nt, ch = j->ch;

	for (int64_t r = lo; r < hi; r++) {
		const float *x = j->x + r * ch;
		float *y = j->y + r * ch;

		if (j->invert && j->mean)
			for (int64_t c = 0; c < ch; c++)
				y[c] = j->mean[c] + x[c] * j->den[c];
		else if (j->invert)
			for (int64_t c = 0; c < ch; c++)
				y[c] = x[c] * j->den[c];
		else if (j->mean)
			for (int64_t c = 0; c < ch; c++)
				y[c] = (x[c] - j->mean[c]) / j->den[c];
		else
			for (int64_t c = 0; c < ch; c++)
				y[c] = x[c] / j->den[c];
	}
}

static enum xo_status normz_run(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	struct xo_cpu_ctx *cx = be->ctx;
	const float *var = xo_tensor_f32(a->src[bwd ? 0 : 2]);
	int64_t ch = a->p.ch, rows = a->p.batch * a->p.len;
	struct normz_job j = {.x = xo_tensor_f32(a->src[bwd ? 1 : 0]),
	                      .mean = bwd ? NULL : xo_tensor_f32(a->src[1]),
	                      .y = xo_tensor_f32(a->dst[0]), .rows = rows, .ch = ch,
	                      .invert = a->p.invert};
	enum xo_status st = xo_cpu_scratch_reserve(cx, ch, 0, 0);
	float *den;

	if (st)
		return st;
	den = cx->shared.p;
	for (int64_t c = 0; c < ch; c++) {
		float s = sqrtf(var[c]);

		den[c] = s < 1e-7f ? 1e-7f : s; /* a NaN root stays NaN (jnp.maximum) */
	}
	j.den = den;
	xo_cpu_threads_run(cx->tp, xo_cpu_threads_for(cx, rows * ch * 4, rows), normz_task, &j);
	return XO_OK;
}

enum xo_status xo_cpu_normalization_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return normz_run(be, a, false);
}

enum xo_status xo_cpu_normalization_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return normz_run(be, a, true);
}
