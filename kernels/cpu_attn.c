/*
 * cpu_attn.c - the cpu attention op (ops.def): per (sample, head) the three
 * GEMM-shaped products of scaled dot-product attention through cblas_sgemm
 * on the strided head views of the [batch * T][H * d] rows (no copies):
 *   forward   S = (Q K^T) / sqrt(dk), P = row softmax of S (causal: the keys
 *             after the query's position 0), O = P V
 *   backward  P again, dP = dY V^T, dS = P (dP - rowsum(P dP)),
 *             dQ = dS K / sqrt(dk), dK = dS^T Q / sqrt(dk), dV = P^T dY
 * The scale is sgemm's alpha (one rounding after the sum instead of one per
 * query element: within the bound's dk + 2 roundings of a score). The row
 * softmax is the ISA level's softmax kernel (vector exp; the causal mask's
 * keys enter it as -Inf, whose exp is 0, and are set to 0 after), within
 * the same softmax_ulps bound as the softmax op. Each (sample, head) is one
 * thread's, its P and dS in that thread's scratch, so the results do not
 * depend on the thread count (OpenBLAS runs one thread inside each of ours,
 * cpu.c). xo_cpu_attention_part runs one of the forward's three steps
 * alone over every pair, with the forward's thread split, for `xo bench
 * --layers` (xo/cpu.h).
 */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "cpu.h"
#include "xo/cpu.h"

struct attn_job {
	const struct xo_cpu_ctx *c;
	const float *q, *k, *v, *dy;
	float *o, *dq, *dk, *dv;
	int64_t b, tq, tk, h, dkw, dvw;
	bool causal;
	float scale;
	int part; /* enum xo_cpu_attn_part, or -1: the whole forward or backward */
};

/* Row i's keys: [0, count); causal keeps j <= i. */
static int64_t attn_keys(const struct attn_job *j, int64_t i)
{
	return j->causal && i + 1 < j->tk ? i + 1 : j->tk;
}

/* s [tq][tk] = (q k^T) * scale. */
static void attn_scores(const struct attn_job *j, const float *q, const float *k, float *s)
{
	int ldq = (int)(j->h * j->dkw);

	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)j->tq, (int)j->tk, (int)j->dkw,
		    j->scale, q, ldq, k, ldq, 0.0f, s, (int)j->tk);
}

/* s [tq][tk] = softmax per row over each row's keys, the masked ones 0. */
static void attn_softmax(const struct attn_job *j, float *s)
{
	if (j->causal)
		for (int64_t i = 0; i < j->tq; i++)
			for (int64_t t = attn_keys(j, i); t < j->tk; t++)
				s[i * j->tk + t] = -INFINITY;
	j->c->k->softmax_fwd(s, s, j->tq, j->tk);
	if (j->causal) /* exp(-Inf - max) is 0 already; exact 0 whatever the kernel */
		for (int64_t i = 0; i < j->tq; i++)
			for (int64_t t = attn_keys(j, i); t < j->tk; t++)
				s[i * j->tk + t] = 0.0f;
}

static void attn_probs(const struct attn_job *j, const float *q, const float *k, float *s)
{
	attn_scores(j, q, k, s);
	attn_softmax(j, s);
}

/* The forward of (sample n, head hd), P in s. */
static void attn_fwd_one(const struct attn_job *j, int64_t n, int64_t hd, float *s)
{
	int64_t qo = n * j->tq * j->h * j->dkw + hd * j->dkw;
	int64_t ko = n * j->tk * j->h * j->dkw + hd * j->dkw;
	int64_t vo = n * j->tk * j->h * j->dvw + hd * j->dvw;
	int64_t oo = n * j->tq * j->h * j->dvw + hd * j->dvw;
	int ldv = (int)(j->h * j->dvw);

	if (j->part < 0 || j->part == XO_CPU_ATTN_SCORES)
		attn_scores(j, j->q + qo, j->k + ko, s);
	if (j->part < 0 || j->part == XO_CPU_ATTN_SOFTMAX)
		attn_softmax(j, s);
	if (j->part < 0 || j->part == XO_CPU_ATTN_WSUM)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)j->tq, (int)j->dvw,
			    (int)j->tk, 1.0f, s, (int)j->tk, j->v + vo, ldv, 0.0f, j->o + oo, ldv);
}

/* The backward of (sample n, head hd): P in s, dP then dS in g. */
static void attn_bwd_one(const struct attn_job *j, int64_t n, int64_t hd, float *s, float *g)
{
	int64_t qo = n * j->tq * j->h * j->dkw + hd * j->dkw;
	int64_t ko = n * j->tk * j->h * j->dkw + hd * j->dkw;
	int64_t vo = n * j->tk * j->h * j->dvw + hd * j->dvw;
	int64_t yo = n * j->tq * j->h * j->dvw + hd * j->dvw;
	int ldk = (int)(j->h * j->dkw), ldv = (int)(j->h * j->dvw);
	int tq = (int)j->tq, tk = (int)j->tk;

	attn_probs(j, j->q + qo, j->k + ko, s);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, tq, tk, (int)j->dvw, 1.0f, j->dy + yo,
		    ldv, j->v + vo, ldv, 0.0f, g, tk);
	for (int64_t i = 0; i < j->tq; i++) {
		float *pr = s + i * j->tk, *gr = g + i * j->tk, d = 0.0f;
		int64_t nk = attn_keys(j, i);

		for (int64_t t = 0; t < nk; t++)
			d += pr[t] * gr[t];
		for (int64_t t = 0; t < nk; t++)
			gr[t] = pr[t] * (gr[t] - d);
		for (int64_t t = nk; t < j->tk; t++)
			gr[t] = 0.0f;
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, tq, (int)j->dkw, tk, j->scale, g, tk,
		    j->k + ko, ldk, 0.0f, j->dq + qo, ldk);
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, tk, (int)j->dkw, tq, j->scale, g, tk,
		    j->q + qo, ldk, 0.0f, j->dk + ko, ldk);
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, tk, (int)j->dvw, tq, 1.0f, s, tk,
		    j->dy + yo, ldv, 0.0f, j->dv + vo, ldv);
}

/* Part t of nt: the (sample, head) pairs [lo, hi) of b * h, in order. */
static void attn_task(void *arg, int t, int nt)
{
	const struct attn_job *j = arg;
	int64_t pairs = j->b * j->h, lo = pairs * t / nt, hi = pairs * (t + 1) / nt;
	float *s = j->c->thr[t].p, *g = s + j->tq * j->tk;

	for (int64_t e = lo; e < hi; e++) {
		if (j->dy)
			attn_bwd_one(j, e / j->h, e % j->h, s, g);
		else
			attn_fwd_one(j, e / j->h, e % j->h, s);
	}
}

/* The op forward (bwd false, part -1), backward, or one forward part. */
static enum xo_status cpu_attention(struct xo_backend *be, const struct xo_op_args *a, bool bwd,
				    int part)
{
	const struct xo_params *p = &a->p;
	struct xo_cpu_ctx *c = be->ctx;
	struct attn_job j = {
	    .c = c,
	    .q = xo_tensor_f32(a->src[0]),
	    .k = xo_tensor_f32(a->src[1]),
	    .v = xo_tensor_f32(a->src[2]),
	    .b = p->batch,
	    .tq = p->len,
	    .tk = xo_attention_len_kv(p),
	    .h = p->heads,
	    .dkw = p->key_dim,
	    .dvw = xo_attention_value_dim(p),
	    .causal = p->causal,
	    .scale = (float)(1.0 / sqrt((double)p->key_dim)),
	    .part = part,
	};
	int64_t macs = j.b * j.h * j.tq * j.tk * (j.dkw + j.dvw) * (bwd ? 3 : 1);
	enum xo_status st;
	int nt;

	if (bwd) {
		j.dy = xo_tensor_f32(a->src[3]);
		j.dq = xo_tensor_f32(a->dst[0]);
		j.dk = xo_tensor_f32(a->dst[1]);
		j.dv = xo_tensor_f32(a->dst[2]);
	} else {
		j.o = xo_tensor_f32(a->dst[0]);
	}
	nt = xo_cpu_threads_for(c, macs, j.b * j.h);
	st = xo_cpu_scratch_reserve(c, 0, (bwd ? 2 : 1) * j.tq * j.tk, nt);
	if (st)
		return st;
	xo_cpu_threads_run(c->tp, nt, attn_task, &j);
	return XO_OK;
}

enum xo_status xo_cpu_attention_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_attention(be, a, false, -1);
}

enum xo_status xo_cpu_attention_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_attention(be, a, true, -1);
}

enum xo_status xo_cpu_attention_part(struct xo_backend *be, const struct xo_op_args *a,
				     enum xo_cpu_attn_part part)
{
	enum xo_status st;

	if (strcmp(xo_backend_name(be), "cpu"))
		return xo_error(XO_EINVAL, "attention part: backend %s is not cpu",
				xo_backend_name(be));
	if (part < 0 || part >= XO_CPU_ATTN_PART_COUNT)
		return xo_error(XO_EINVAL, "attention part: %d is not a part", (int)part);
	st = xo_op_validate(be, XO_OP_attention, XO_DIR_FWD, a);
	if (st)
		return st;
	return cpu_attention(be, a, false, (int)part);
}
