/*
 * cpu_attn.c - the cpu attention op (ops.def): per (sample, head) the three
 * GEMM-shaped products of scaled dot-product attention through cblas_sgemm
 * on the strided head views of the [batch * T][H * d] rows (no copies),
 * with the scores held key-major, S^T [Tk][Tq], so that the softmax over
 * the keys runs down columns with vectors across the queries (the ISA
 * level's softmax_cols: no transposition, no horizontal reductions):
 *   forward   S^T = K (Q / sqrt(dk))^T, P^T = its column softmax (causal:
 *             the keys after the query's position 0), O = (P^T)^T V
 *   backward  P^T again, dP^T = V dY^T, D = column sums of P^T o dP^T,
 *             dS^T = P^T o (dP^T - D), dQ = (dS^T)^T K / sqrt(dk),
 *             dK = dS^T Q / sqrt(dk), dV = P^T dY
 * The two products that contract both operands' contiguous axis (S^T and
 * dP^T) copy the query's (or dY's) head slice transposed into the
 * thread's scratch first (cblas_somatcopy, OpenBLAS's), so that every call
 * is one OpenBLAS's small-matrix kernels take (row-major A B^T is its
 * internal "tn", which they do not; `perf` showed its general path, packing
 * included, at ~40% of the FMA peak for 32x16x32). The scores' scale
 * multiplies the copy (one rounding per query element, as cl's kernel:
 * within the bound's dk + 2 roundings of a score); dQ's and dK's is
 * sgemm's alpha (one rounding after the sum). The softmax has
 * softmax_fwd's forms (the softmax op's softmax_ulps bound); the keys the
 * causal mask or the mask source drop enter it as -Inf, whose exp is 0,
 * and are set to 0 after; a query that keeps no key gets 1/Tk (0 with
 * dropout) on every key and no gradient into its scores (ops.def).
 * Dropout (training, rate > 0) multiplies P^T by the mask's weights
 * keep / (1 - rate) after the softmax (forward: before the weighted sum;
 * backward: dP^T by them before D and dS^T, and P^T by them before dV),
 * the mask drawn again by xo_dropout_keep. Each (sample, head) is one
 * thread's, its P^T, dS^T, D and the transposed copy in that thread's
 * scratch, so the results do not depend on the thread count (OpenBLAS runs
 * one thread inside each of ours, cpu.c).
 * xo_cpu_attention_part runs one of the forward's three steps alone over
 * every pair, with the forward's thread split, for `xo bench --layers`
 * (xo/cpu.h).
 */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "cpu.h"
#include "xo/cpu.h"

struct attn_job {
	const struct xo_cpu_ctx *c;
	const float *q, *k, *v, *dy;
	const float *m; /* the mask [b][tq][tk], or NULL */
	float *o, *dq, *dk, *dv;
	int64_t b, tq, tk, h, dkw, dvw;
	bool causal;
	float scale;
	const struct xo_params *p; /* the dropout's key: seed, step, layer, rate */
	bool drop;                 /* training with dropout > 0 */
	float dscale;              /* 1 / (1 - dropout) in float, every backend's bits */
	float empty;               /* p of a row that keeps no key without dropout: 1/Tk */
	int part; /* enum xo_cpu_attn_part, or -1: the whole forward or backward */
};

/* Whether query i of sample n keeps key t (ops.def): causal keeps t <= i,
 * the mask m != 0 (Keras's cast to bool). */
static bool attn_keep(const struct attn_job *j, int64_t n, int64_t i, int64_t t)
{
	if (j->causal && t > i)
		return false;
	return !j->m || xo_daz(j->m[(n * j->tq + i) * j->tk + t]) != 0.0f;
}

/* st [tk][tq] = k (q scale)^T: the scores key-major, (q scale)^T in qt. */
static void attn_scores(const struct attn_job *j, const float *q, const float *k, float *st,
			float *qt)
{
	int ldq = (int)(j->h * j->dkw);

	cblas_somatcopy(CblasRowMajor, CblasTrans, (int)j->tq, (int)j->dkw, j->scale, q, ldq, qt,
			(int)j->tq);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)j->tk, (int)j->tq, (int)j->dkw,
		    1.0f, k, ldq, qt, (int)j->tq, 0.0f, st, (int)j->tq);
}

/* The masks of sample n on st [tk][tq], per query column i: its masked
 * rows set to `masked`, and, when it keeps no key, every row to `empty`. */
static void attn_mask(const struct attn_job *j, int64_t n, float *st, float masked, float empty)
{
	for (int64_t i = 0; i < j->tq; i++) {
		bool any = false;

		for (int64_t t = 0; t < j->tk; t++) {
			if (attn_keep(j, n, i, t))
				any = true;
			else
				st[t * j->tq + i] = masked;
		}
		for (int64_t t = 0; t < j->tk && !any; t++)
			st[t * j->tq + i] = empty;
	}
}

/* st: each query column's softmax over its kept keys, the masked ones 0;
 * a column that keeps no key 1/Tk without dropout, 0 with it (ops.def). */
static void attn_softmax(const struct attn_job *j, int64_t n, float *st)
{
	bool masked = j->causal || j->m;

	/* the masked keys -Inf, whose exp is 0; a column of no key 0s, finite
	 * in the softmax and replaced after it */
	if (masked)
		attn_mask(j, n, st, -INFINITY, 0.0f);
	j->c->k->softmax_cols(st, j->tk, j->tq, j->tq);
	if (masked) /* exact 0 whatever the kernel */
		attn_mask(j, n, st, 0.0f, j->p->dropout > 0.0f ? 0.0f : j->empty);
}

/* m [tk][tq] (key-major) times the dropout weights of (sample n, head hd):
 * keep / (1 - rate) or 0, keep by xo_dropout_keep over the flat index
 * ((n * H + hd) * Tq + i) * Tk + t (ops.def). */
static void attn_dropout(const struct attn_job *j, int64_t n, int64_t hd, float *m)
{
	const struct xo_params *p = j->p;
	uint64_t base = (uint64_t)((n * j->h + hd) * j->tq * j->tk);

	for (int64_t i = 0; i < j->tq; i++)
		for (int64_t t = 0; t < j->tk; t++) {
			uint64_t e = base + (uint64_t)(i * j->tk + t);
			float *x = &m[t * j->tq + i];

			*x = xo_dropout_keep(p->seed, p->step, p->layer, e, p->dropout)
			         ? *x * j->dscale
			         : 0.0f;
		}
}

/* Element offsets of (sample n, head hd) in q, k, v and o / dy. */
static void attn_offsets(const struct attn_job *j, int64_t n, int64_t hd, int64_t off[4])
{
	off[0] = n * j->tq * j->h * j->dkw + hd * j->dkw;
	off[1] = n * j->tk * j->h * j->dkw + hd * j->dkw;
	off[2] = n * j->tk * j->h * j->dvw + hd * j->dvw;
	off[3] = n * j->tq * j->h * j->dvw + hd * j->dvw;
}

/* The forward of (sample n, head hd), P^T in st. */
static void attn_fwd_one(const struct attn_job *j, int64_t n, int64_t hd, float *st)
{
	int64_t off[4];
	int ldv = (int)(j->h * j->dvw);

	attn_offsets(j, n, hd, off);
	if (j->part < 0 || j->part == XO_CPU_ATTN_SCORES)
		attn_scores(j, j->q + off[0], j->k + off[1], st, st + j->tq * j->tk);
	if (j->part < 0 || j->part == XO_CPU_ATTN_SOFTMAX) {
		attn_softmax(j, n, st);
		if (j->drop)
			attn_dropout(j, n, hd, st);
	}
	if (j->part < 0 || j->part == XO_CPU_ATTN_WSUM)
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)j->tq, (int)j->dvw,
			    (int)j->tk, 1.0f, st, (int)j->tq, j->v + off[2], ldv, 0.0f,
			    j->o + off[3], ldv);
}

/* dS^T = P^T o (dP^T - D) in g (dP^T there), D [tq] the column sums of
 * P^T o dP^T in key order; the masked keys 0, and every key of a query
 * that keeps none (its scores get no gradient). */
static void attn_dscores(const struct attn_job *j, int64_t n, const float *st, float *g,
			 float *d)
{
	int64_t tq = j->tq;

	memset(d, 0, sizeof(*d) * (size_t)tq);
	for (int64_t t = 0; t < j->tk; t++)
		for (int64_t i = 0; i < tq; i++)
			d[i] += st[t * tq + i] * g[t * tq + i];
	for (int64_t t = 0; t < j->tk; t++)
		for (int64_t i = 0; i < tq; i++)
			g[t * tq + i] = st[t * tq + i] * (g[t * tq + i] - d[i]);
	if (j->causal || j->m)
		attn_mask(j, n, g, 0.0f, 0.0f);
}

/* The backward of (sample n, head hd): P^T in st, dP^T then dS^T in g, D
 * in d. */
static void attn_bwd_one(const struct attn_job *j, int64_t n, int64_t hd, float *st, float *g,
			 float *d)
{
	int64_t off[4];
	int ldk = (int)(j->h * j->dkw), ldv = (int)(j->h * j->dvw);
	int tq = (int)j->tq, tk = (int)j->tk;

	attn_offsets(j, n, hd, off);
	attn_scores(j, j->q + off[0], j->k + off[1], st, d + j->tq);
	attn_softmax(j, n, st);
	cblas_somatcopy(CblasRowMajor, CblasTrans, tq, (int)j->dvw, 1.0f, j->dy + off[3], ldv,
			d + j->tq, tq);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, tk, tq, (int)j->dvw, 1.0f,
		    j->v + off[2], ldv, d + j->tq, tq, 0.0f, g, tq);
	if (j->drop) /* dPd^T into dP^T */
		attn_dropout(j, n, hd, g);
	attn_dscores(j, n, st, g, d);
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, tq, (int)j->dkw, tk, j->scale, g, tq,
		    j->k + off[1], ldk, 0.0f, j->dq + off[0], ldk);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, tk, (int)j->dkw, tq, j->scale, g, tq,
		    j->q + off[0], ldk, 0.0f, j->dk + off[1], ldk);
	if (j->drop) /* P^T into Pd^T, dV's */
		attn_dropout(j, n, hd, st);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, tk, (int)j->dvw, tq, 1.0f, st, tq,
		    j->dy + off[3], ldv, 0.0f, j->dv + off[2], ldv);
}

/* Part t of nt: the (sample, head) pairs [lo, hi) of b * h, in order. */
static void attn_task(void *arg, int t, int nt)
{
	const struct attn_job *j = arg;
	int64_t pairs = j->b * j->h, lo = pairs * t / nt, hi = pairs * (t + 1) / nt;
	float *s = j->c->thr[t].p, *g = s + j->tq * j->tk, *d = g + j->tq * j->tk;

	for (int64_t e = lo; e < hi; e++) {
		if (j->dy)
			attn_bwd_one(j, e / j->h, e % j->h, s, g, d);
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
	    .p = p,
	    .drop = p->training && p->dropout > 0.0f,
	    .dscale = 1.0f / (1.0f - p->dropout),
	    .empty = (float)(1.0 / (double)xo_attention_len_kv(p)),
	    .part = part,
	};
	int64_t macs = j.b * j.h * j.tq * j.tk * (j.dkw + j.dvw) * (bwd ? 3 : 1);
	enum xo_status st;
	int nt;

	if (p->attention_mask)
		j.m = xo_tensor_f32(a->src[bwd ? 4 : 3]);
	if (bwd) {
		j.dy = xo_tensor_f32(a->src[3]);
		j.dq = xo_tensor_f32(a->dst[0]);
		j.dk = xo_tensor_f32(a->dst[1]);
		j.dv = xo_tensor_f32(a->dst[2]);
	} else {
		j.o = xo_tensor_f32(a->dst[0]);
	}
	nt = xo_cpu_threads_for(c, macs, j.b * j.h);
	st = xo_cpu_scratch_reserve(c, 0, (bwd ? 2 * j.tq * j.tk + j.tq : j.tq * j.tk) +
					      j.tq * (j.dkw > j.dvw ? j.dkw : j.dvw), nt);
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

/* mask_outer (ops.def): y[n][i][j] = 1 where the query's ids (query_mask),
 * the key's ids (value_mask) and m (attention_mask) all keep, else 0; rows
 * (n, i) split between threads in contiguous ranges. */
struct mask_outer_job {
	const int32_t *ids; /* [b][t]: t = tq with query_mask, else tk */
	const float *m;     /* [b][tq][tk] or NULL */
	float *y;
	int64_t tq, tk, t;
	int64_t rows;
	bool qm, vm;
};

static void mask_outer_task(void *arg, int t, int nt)
{
	const struct mask_outer_job *j = arg;
	int64_t lo = j->rows * t / nt, hi = j->rows * (t + 1) / nt;

	for (int64_t r = lo; r < hi; r++) {
		int64_t n = r / j->tq, i = r % j->tq;
		const int32_t *id = j->ids ? j->ids + n * j->t : NULL;
		bool row = !j->qm || id[i] != 0;
		float *y = j->y + r * j->tk;

		for (int64_t k = 0; k < j->tk; k++) {
			bool keep = row && (!j->vm || id[k] != 0) &&
				    (!j->m || xo_daz(j->m[r * j->tk + k]) != 0.0f);

			y[k] = keep ? 1.0f : 0.0f;
		}
	}
}

enum xo_status xo_cpu_mask_outer_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cpu_ctx *c = be->ctx;
	bool ids = p->query_mask || p->value_mask;
	struct mask_outer_job j = {.ids = ids ? xo_tensor_i32(a->src[0]) : NULL,
				   .m = p->attention_mask ? xo_tensor_f32(a->src[1]) : NULL,
				   .y = xo_tensor_f32(a->dst[0]),
				   .tq = p->len,
				   .tk = xo_attention_len_kv(p),
				   .rows = p->batch * p->len,
				   .qm = p->query_mask,
				   .vm = p->value_mask};

	j.t = p->query_mask ? j.tq : j.tk;
	xo_cpu_threads_run(c->tp, xo_cpu_threads_for(c, j.rows * j.tk, j.rows), mask_outer_task,
			   &j);
	return XO_OK;
}
