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
 * rows' statistics pass between the phases in the shared scratch (s, m and
 * r per row).
 *
 * Arithmetic per row of ch values (the bounds are in suites/harness_bounds.c,
 * tol_layer_normalization, for float sums in any order). The moments are
 * shifted by the row's first value s: x - s is exact for values within a
 * factor 2 of s, so a constant row gives d = 0 exactly (y = beta) and a large
 * common offset costs no precision (a plain float mean would carry the
 * rounding of sum x, |x| u per value, into every x - mean, times r):
 *   m = (sum (x - s)) / ch, d = (x - s) - m, var = (sum d^2) / ch,
 *   r = 1 / sqrt(var + eps), y = gamma (d r) + beta;
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
	float *stats;  /* bwd: [rows][LN_STATS] s, m, r */
};

/* 4 floats as one GCC vector (an SSE register at the baseline ISA, as
 * cpu_norm.c's), loaded and stored unaligned: -O2 leaves loops of an
 * unknown trip count scalar, so the row loops are written over vectors, two
 * accumulators of 4 lanes for the sums (8 chains in flight), then a scalar
 * tail; lane by lane the same operations as the tail. */
#define LN_V 4
#define LN_STATS 3
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

/* The row's statistics: the shift s (its first value), m the mean of x - s,
 * r = 1 / sqrt(var + eps); d_c = (x_c - s) - m. */
struct ln_stat {
	float s, m, r;
};

LN_INLINE ln_v ln_dev(const float *x, int64_t c, struct ln_stat st)
{
	return (ln_ld(x + c) - ln_splat(st.s)) - ln_splat(st.m);
}

LN_INLINE float ln_dev1(const float *x, int64_t c, struct ln_stat st)
{
	return (x[c] - st.s) - st.m;
}

/* s, m and r of the row at x: the sums in 8 lanes, then the tail */
static struct ln_stat ln_moments(const float *x, int64_t ch, float eps)
{
	struct ln_stat st = {.s = x[0], .m = 0.0f, .r = 0.0f};
	ln_v a = ln_splat(0.0f), b = a, sv = ln_splat(st.s);
	float n = (float)ch, tail = 0.0f;
	int64_t c = 0;

	for (; c + 2 * LN_V <= ch; c += 2 * LN_V) {
		a += ln_ld(x + c) - sv;
		b += ln_ld(x + c + LN_V) - sv;
	}
	for (int64_t i = c; i < ch; i++)
		tail += x[i] - st.s;
	st.m = ln_hsum(a, b, tail) / n;
	a = b = ln_splat(0.0f);
	tail = 0.0f;
	for (c = 0; c + 2 * LN_V <= ch; c += 2 * LN_V) {
		ln_v d0 = ln_dev(x, c, st), d1 = ln_dev(x, c + LN_V, st);

		a += d0 * d0;
		b += d1 * d1;
	}
	for (int64_t i = c; i < ch; i++)
		tail += ln_dev1(x, i, st) * ln_dev1(x, i, st);
	st.r = 1.0f / sqrtf(ln_hsum(a, b, tail) / n + eps);
	return st;
}

static void ln_fwd_rows(const struct ln_job *j, int64_t k0, int64_t k1)
{
	int64_t ch = j->ch;

	for (int64_t k = k0; k < k1; k++) {
		const float *x = j->x + k * ch;
		float *y = j->y + k * ch;
		struct ln_stat st = ln_moments(x, ch, j->eps);
		int64_t c = 0;

		for (; c + LN_V <= ch; c += LN_V)
			ln_st(y + c, ln_ld_or(j->gamma, c, 1.0f) * (ln_dev(x, c, st) * ln_splat(st.r)) +
			                 ln_ld_or(j->beta, c, 0.0f));
		for (; c < ch; c++)
			y[c] = (j->gamma ? j->gamma[c] : 1.0f) * (ln_dev1(x, c, st) * st.r) +
			       (j->beta ? j->beta[c] : 0.0f);
	}
}

/* dx of row k from its statistics: g = gamma dy, sums of g and g xhat */
static void ln_dx_row(const struct ln_job *j, int64_t k, struct ln_stat st)
{
	int64_t ch = j->ch, c = 0;
	const float *x = j->x + k * ch, *dy = j->dy + k * ch;
	float *dx = j->y + k * ch, n = (float)ch, t1 = 0.0f, t2 = 0.0f, sg, sgx, f, r = st.r;
	ln_v a = ln_splat(0.0f), b = a, rv = ln_splat(r);

	for (; c + LN_V <= ch; c += LN_V) {
		ln_v g = ln_ld_or(j->gamma, c, 1.0f) * ln_ld(dy + c);

		a += g;
		b += g * (ln_dev(x, c, st) * rv);
	}
	for (int64_t i = c; i < ch; i++) {
		float g = (j->gamma ? j->gamma[i] : 1.0f) * dy[i];

		t1 += g;
		t2 += g * (ln_dev1(x, i, st) * r);
	}
	sg = ((a[0] + a[1]) + (a[2] + a[3])) + t1;
	sgx = ((b[0] + b[1]) + (b[2] + b[3])) + t2;
	f = r / n;
	for (c = 0; c + LN_V <= ch; c += LN_V) {
		ln_v g = ln_ld_or(j->gamma, c, 1.0f) * ln_ld(dy + c);
		ln_v xh = ln_dev(x, c, st) * rv;

		ln_st(dx + c, ln_splat(f) * (ln_splat(n) * g - ln_splat(sg) - xh * ln_splat(sgx)));
	}
	for (; c < ch; c++) {
		float g = (j->gamma ? j->gamma[c] : 1.0f) * dy[c];

		dx[c] = f * (n * g - sg - (ln_dev1(x, c, st) * r) * sgx);
	}
}

static void ln_bwd_rows(const struct ln_job *j, int64_t k0, int64_t k1)
{
	for (int64_t k = k0; k < k1; k++) {
		struct ln_stat st = ln_moments(j->x + k * j->ch, j->ch, j->eps);

		j->stats[LN_STATS * k] = st.s;
		j->stats[LN_STATS * k + 1] = st.m;
		j->stats[LN_STATS * k + 2] = st.r;
		if (j->y)
			ln_dx_row(j, k, st);
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
		const float *sp = j->stats + LN_STATS * k;
		struct ln_stat st = {.s = sp[0], .m = sp[1], .r = sp[2]};
		int64_t c = c0;

		for (; c + LN_V <= c1; c += LN_V) {
			ln_v d = ln_ld(dy + c);

			if (j->dg)
				ln_st(j->dg + c, ln_ld(j->dg + c) +
				                     d * (ln_dev(x, c, st) * ln_splat(st.r)));
			if (j->db)
				ln_st(j->db + c, ln_ld(j->db + c) + d);
		}
		for (; c < c1; c++) {
			if (j->dg)
				j->dg[c] += dy[c] * (ln_dev1(x, c, st) * st.r);
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
	enum xo_status st = xo_cpu_scratch_reserve(cx, LN_STATS * j.rows, 0, 0);

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
