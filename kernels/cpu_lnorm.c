/*
 * cpu_lnorm.c - cpu kernels of layer_normalization (ops.def), forward and
 * backward. Plain C at the baseline ISA. Rows are short (the normalized
 * axis: 8 to a few hundred values) and independent, so the forward and the
 * backward's dx are threaded over runs of rows; each row's mean and
 * variance are two passes over the row (the deviation pass keeps the
 * variance free of cancellation), summed in float in 8 lanes of two 4-float
 * vectors and then the tail, so a row costs a few dependent adds per 8
 * values, not one per value.
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

/* 4 floats as one GCC vector (an SSE register at the baseline ISA, as
 * cpu_norm.c's), loaded and stored unaligned: -O2 leaves loops of an
 * unknown trip count scalar, so the row loops are written over vectors, two
 * accumulators of 4 lanes for the sums (8 chains in flight), then a scalar
 * tail; lane by lane the same operations as the tail. */
#define LN_V 4
#define LN_INLINE static inline __attribute__((always_inline))
typedef float ln_v __attribute__((vector_size(LN_V * 4)));
typedef float ln_vu __attribute__((vector_size(LN_V * 4), aligned(4), may_alias));

LN_INLINE ln_v ln_ld(const float *p)
{
	return *(const ln_vu *)p;
}

LN_INLINE void ln_st(float *p, ln_v v)
{
	*(ln_vu *)p = v;
}

LN_INLINE ln_v ln_splat(float f)
{
	return (ln_v){f, f, f, f};
}

/* p[c .. c + 3], or 4 copies of dflt where the tensor is absent */
LN_INLINE ln_v ln_ld_or(const float *p, int64_t c, float dflt)
{
	return p ? ln_ld(p + c) : ln_splat(dflt);
}

/* The lanes of a + b added in a fixed order, then the tail's sum. */
LN_INLINE float ln_hsum(ln_v a, ln_v b, float tail)
{
	ln_v t = a + b;

	return ((t[0] + t[1]) + (t[2] + t[3])) + tail;
}

/* mean and r of the row at x: the sums in 8 lanes, then the tail */
static void ln_moments(const float *x, int64_t ch, float eps, float *mean, float *r)
{
	ln_v a = ln_splat(0.0f), b = a, mv;
	float n = (float)ch, tail = 0.0f, m;
	int64_t c = 0;

	for (; c + 2 * LN_V <= ch; c += 2 * LN_V) {
		a += ln_ld(x + c);
		b += ln_ld(x + c + LN_V);
	}
	for (int64_t i = c; i < ch; i++)
		tail += x[i];
	m = ln_hsum(a, b, tail) / n;
	mv = ln_splat(m);
	a = b = ln_splat(0.0f);
	tail = 0.0f;
	for (c = 0; c + 2 * LN_V <= ch; c += 2 * LN_V) {
		ln_v d0 = ln_ld(x + c) - mv, d1 = ln_ld(x + c + LN_V) - mv;

		a += d0 * d0;
		b += d1 * d1;
	}
	for (int64_t i = c; i < ch; i++)
		tail += (x[i] - m) * (x[i] - m);
	*mean = m;
	*r = 1.0f / sqrtf(ln_hsum(a, b, tail) / n + eps);
}

static void ln_fwd_rows(const struct ln_job *j, int64_t k0, int64_t k1)
{
	int64_t ch = j->ch;

	for (int64_t k = k0; k < k1; k++) {
		const float *x = j->x + k * ch;
		float *y = j->y + k * ch, mean, r;
		int64_t c = 0;

		ln_moments(x, ch, j->eps, &mean, &r);
		for (; c + LN_V <= ch; c += LN_V)
			ln_st(y + c, ln_ld_or(j->gamma, c, 1.0f) *
			                 ((ln_ld(x + c) - ln_splat(mean)) * ln_splat(r)) +
			                 ln_ld_or(j->beta, c, 0.0f));
		for (; c < ch; c++)
			y[c] = (j->gamma ? j->gamma[c] : 1.0f) * ((x[c] - mean) * r) +
			       (j->beta ? j->beta[c] : 0.0f);
	}
}

/* dx of row k from its statistics: g = gamma dy, sums of g and g xhat */
static void ln_dx_row(const struct ln_job *j, int64_t k, float mean, float r)
{
	int64_t ch = j->ch, c = 0;
	const float *x = j->x + k * ch, *dy = j->dy + k * ch;
	float *dx = j->y + k * ch, n = (float)ch, t1 = 0.0f, t2 = 0.0f, sg, sgx, f;
	ln_v a = ln_splat(0.0f), b = a, mv = ln_splat(mean), rv = ln_splat(r);

	for (; c + LN_V <= ch; c += LN_V) {
		ln_v g = ln_ld_or(j->gamma, c, 1.0f) * ln_ld(dy + c);

		a += g;
		b += g * ((ln_ld(x + c) - mv) * rv);
	}
	for (int64_t i = c; i < ch; i++) {
		float g = (j->gamma ? j->gamma[i] : 1.0f) * dy[i];

		t1 += g;
		t2 += g * ((x[i] - mean) * r);
	}
	sg = ((a[0] + a[1]) + (a[2] + a[3])) + t1;
	sgx = ((b[0] + b[1]) + (b[2] + b[3])) + t2;
	f = r / n;
	for (c = 0; c + LN_V <= ch; c += LN_V) {
		ln_v g = ln_ld_or(j->gamma, c, 1.0f) * ln_ld(dy + c);
		ln_v xh = (ln_ld(x + c) - mv) * rv;

		ln_st(dx + c, ln_splat(f) * (ln_splat(n) * g - ln_splat(sg) - xh * ln_splat(sgx)));
	}
	for (; c < ch; c++) {
		float g = (j->gamma ? j->gamma[c] : 1.0f) * dy[c];

		dx[c] = f * (n * g - sg - ((x[c] - mean) * r) * sgx);
	}
}

static void ln_bwd_rows(const struct ln_job *j, int64_t k0, int64_t k1)
{
	for (int64_t k = k0; k < k1; k++) {
		float mean, r;

		ln_moments(j->x + k * j->ch, j->ch, j->eps, &mean, &r);
		j->stats[2 * k] = mean;
		j->stats[2 * k + 1] = r;
		if (j->y)
			ln_dx_row(j, k, mean, r);
	}
}

/* dgamma, dbeta of channels [c0, c1): per channel a sum over the rows in
 * row order, 4 channels to a vector */
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
		int64_t c = c0;

		for (; c + LN_V <= c1; c += LN_V) {
			ln_v d = ln_ld(dy + c);

			if (j->dg)
				ln_st(j->dg + c, ln_ld(j->dg + c) +
				                     d * ((ln_ld(x + c) - ln_splat(mean)) * ln_splat(r)));
			if (j->db)
				ln_st(j->db + c, ln_ld(j->db + c) + d);
		}
		for (; c < c1; c++) {
			if (j->dg)
				j->dg[c] += dy[c] * ((x[c] - mean) * r);
			if (j->db)
				j->db[c] += dy[c];
		}
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
