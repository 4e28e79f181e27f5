/*
 * ref_attn.c - the reference attention op (ops.def): scaled dot-product
 * attention per (sample, head), Keras's MultiHeadAttention between its
 * projections. Plain loops in double: the query scaled by 1/sqrt(key_dim)
 * first (Keras's order), the scores' softmax shifted by the row's maximum,
 * then the weighted sum of the values. The backward recomputes the
 * probabilities from q and k. mag of each output is the sum of the absolute
 * values of its terms (sum_j p_j |v_j| forward; the same sums of |ds k|,
 * |ds q| and p |dy| backward), the harness's accumulation magnitude.
 * Dropout (training, rate r > 0) weighs p_ij by w_ij = keep_ij / (1 - r)
 * (attn_weight): pd = p w enters the weighted sum and dv, dp = (dy . v) w
 * the softmax's backward; the magnitudes are those of the same terms.
 * The keys a row keeps (causal, and the mask source m != 0) enter its
 * softmax; a row that keeps none is uniform 1/Tk over every key without
 * dropout and 0 with it, its scores outside the gradient (ops.def).
 */
#include <math.h>
#include <stdlib.h>

#include "ref_internal.h"

/* The sizes of a call ([batch][T][H * d] rows, head h at column h * d). */
struct attn_dims {
	int64_t b, tq, tk, h, dk, dv;
	double scale;
	bool drop;     /* training with dropout > 0 */
	double dscale; /* 1 / (1 - dropout), rounded to float as every backend's */
};

static struct attn_dims attn_dims_of(const struct xo_params *p)
{
	return (struct attn_dims){
	    .b = p->batch,
	    .tq = p->len,
	    .tk = xo_attention_len_kv(p),
	    .h = p->heads,
	    .dk = p->key_dim,
	    .dv = xo_attention_value_dim(p),
	    .scale = 1.0 / sqrt((double)p->key_dim),
	    .drop = p->training && p->dropout > 0.0f,
	    .dscale = (double)(1.0f / (1.0f - p->dropout)),
	};
}

/* The dropout weight of p_ij in sample n, head hd: 1 without dropout, else
 * dscale or 0 from xo_dropout_keep over the flat index
 * ((n * H + hd) * Tq + i) * Tk + j (ops.def). */
static double attn_weight(const struct xo_params *p, const struct attn_dims *d, int64_t n,
                          int64_t hd, int64_t i, int64_t j)
{
	uint64_t e = (uint64_t)(((n * d->h + hd) * d->tq + i) * d->tk + j);

	if (!d->drop)
		return 1.0;
	return xo_dropout_keep(p->seed, p->step, p->layer, e, p->dropout) ? d->dscale : 0.0;
}

/* Whether row i of sample n keeps key j: causal keeps j <= i, the mask m
 * (when given) m != 0, Keras's cast to bool (ops.def). */
static bool attn_keep(const struct xo_params *p, const struct attn_dims *d,
                      const struct xo_ref_src *m, int64_t n, int64_t i, int64_t j)
{
	if (p->causal && j > i)
		return false;
	return !p->attention_mask || xo_daz((float)xo_ref_ld(*m, (n * d->tq + i) * d->tk + j)) != 0.0f;
}

/* Row i of sample n, head h: pr[j] = softmax over the kept j of
 * (q_i scale) . k_j, 0 for the others; a row that keeps no key gets
 * 1/Tk everywhere without dropout, 0 with it. Returns whether the scores
 * get a gradient (the row keeps a key). */
static bool attn_probs(const struct xo_params *p, const struct attn_dims *d,
                       const struct xo_ref_src *src, const struct xo_ref_src *m, int64_t n,
                       int64_t hd, int64_t i, double *pr)
{
	int64_t qo = ((n * d->tq + i) * d->h + hd) * d->dk;
	double mx = -INFINITY, l = 0.0;
	bool any = false;

	for (int64_t j = 0; j < d->tk; j++) {
		int64_t ko = ((n * d->tk + j) * d->h + hd) * d->dk;
		double s = 0.0;

		pr[j] = 0.0;
		if (!attn_keep(p, d, m, n, i, j))
			continue;
		for (int64_t c = 0; c < d->dk; c++)
			s += xo_ref_ld(src[0], qo + c) * d->scale * xo_ref_ld(src[1], ko + c);
		pr[j] = s;
		if (s > mx)
			mx = s;
		any = true;
	}
	for (int64_t j = 0; j < d->tk; j++) {
		if (!any)
			pr[j] = p->dropout > 0.0f ? 0.0 : 1.0 / (double)d->tk;
		else if (attn_keep(p, d, m, n, i, j))
			l += pr[j] = exp(pr[j] - mx);
	}
	for (int64_t j = 0; j < d->tk && any; j++)
		pr[j] /= l;
	return any;
}

/* attention fwd: src {q, k, v, m|NULL}, dst {o} (ops.def). */
enum xo_status xo_ref_attention_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
                                         const struct xo_ref_dst *dst,
                                         const struct xo_ref_dst *mag)
{
	struct attn_dims d = attn_dims_of(p);
	double *pr = malloc(sizeof(double) * (size_t)d.tk);

	if (!pr)
		return xo_error(XO_ENOMEM, "attention: out of memory");
	for (int64_t n = 0; n < d.b; n++)
		for (int64_t i = 0; i < d.tq; i++)
			for (int64_t hd = 0; hd < d.h; hd++) {
				int64_t oo = ((n * d.tq + i) * d.h + hd) * d.dv;

				attn_probs(p, &d, src, &src[3], n, hd, i, pr);
				for (int64_t j = 0; j < d.tk; j++)
					pr[j] *= attn_weight(p, &d, n, hd, i, j);
				for (int64_t e = 0; e < d.dv; e++) {
					double o = 0.0, a = 0.0;

					for (int64_t j = 0; j < d.tk; j++) {
						double v = xo_ref_ld(
						    src[2], ((n * d.tk + j) * d.h + hd) * d.dv + e);

						o += pr[j] * v;
						a += pr[j] * fabs(v);
					}
					xo_ref_st(dst[0], oo + e, o);
					xo_ref_st(mag[0], oo + e, a);
				}
			}
	free(pr);
	return XO_OK;
}

/* Per (sample, head) accumulators of the backward: dk, dv and their mags. */
struct attn_acc {
	double *pr, *ds, *dk, *dv, *mk, *mv;
};

/* Query row i's part of the backward of sample n, head hd: dq_i written,
 * its terms added to a's dk and dv. */
static void attn_bwd_row(const struct xo_params *p, const struct attn_dims *d,
                         const struct xo_ref_src *src, const struct xo_ref_dst *dst,
                         const struct xo_ref_dst *mag, int64_t n, int64_t hd, int64_t i,
                         struct attn_acc *a)
{
	int64_t qo = ((n * d->tq + i) * d->h + hd) * d->dk;
	int64_t yo = ((n * d->tq + i) * d->h + hd) * d->dv;
	double dsum = 0.0;
	bool grad = attn_probs(p, d, src, &src[4], n, hd, i, a->pr);

	for (int64_t j = 0; j < d->tk; j++) {
		int64_t vo = ((n * d->tk + j) * d->h + hd) * d->dv;
		double dp = 0.0, w = attn_weight(p, d, n, hd, i, j);

		for (int64_t e = 0; e < d->dv; e++) {
			double g = xo_ref_ld(src[3], yo + e);

			dp += g * xo_ref_ld(src[2], vo + e);
			a->dv[j * d->dv + e] += a->pr[j] * w * g;
			a->mv[j * d->dv + e] += a->pr[j] * w * fabs(g);
		}
		a->ds[j] = dp * w;
		dsum += a->pr[j] * a->ds[j];
	}
	for (int64_t j = 0; j < d->tk; j++) /* masked p is 0: so is its ds */
		a->ds[j] = grad ? a->pr[j] * (a->ds[j] - dsum) : 0.0;
	for (int64_t c = 0; c < d->dk; c++) {
		double g = 0.0, m = 0.0, q = xo_ref_ld(src[0], qo + c);

		for (int64_t j = 0; j < d->tk; j++) {
			double k = xo_ref_ld(src[1], ((n * d->tk + j) * d->h + hd) * d->dk + c);

			g += a->ds[j] * k;
			m += fabs(a->ds[j] * k);
			a->dk[j * d->dk + c] += a->ds[j] * q * d->scale;
			a->mk[j * d->dk + c] += fabs(a->ds[j] * q) * d->scale;
		}
		xo_ref_st(dst[0], qo + c, g * d->scale);
		xo_ref_st(mag[0], qo + c, m * d->scale);
	}
}

/* attention bwd: src {q, k, v, dy, m|NULL}, dst {dq, dk, dv} (ops.def). */
enum xo_status xo_ref_attention_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
                                         const struct xo_ref_dst *dst,
                                         const struct xo_ref_dst *mag)
{
	struct attn_dims d = attn_dims_of(p);
	size_t nkd = (size_t)(d.tk * d.dk), nvd = (size_t)(d.tk * d.dv);
	double *buf = malloc(sizeof(double) * (2 * (size_t)d.tk + 2 * nkd + 2 * nvd));
	struct attn_acc a;

	if (!buf)
		return xo_error(XO_ENOMEM, "attention: out of memory");
	a = (struct attn_acc){.pr = buf, .ds = buf + d.tk, .dk = buf + 2 * d.tk};
	a.mk = a.dk + nkd;
	a.dv = a.mk + nkd;
	a.mv = a.dv + nvd;
	for (int64_t n = 0; n < d.b; n++)
		for (int64_t hd = 0; hd < d.h; hd++) {
			for (size_t e = 0; e < 2 * nkd + 2 * nvd; e++)
				a.dk[e] = 0.0;
			for (int64_t i = 0; i < d.tq; i++)
				attn_bwd_row(p, &d, src, dst, mag, n, hd, i, &a);
			for (int64_t j = 0; j < d.tk; j++) {
				int64_t ko = ((n * d.tk + j) * d.h + hd) * d.dk;
				int64_t vo = ((n * d.tk + j) * d.h + hd) * d.dv;

				for (int64_t c = 0; c < d.dk; c++) {
					xo_ref_st(dst[1], ko + c, a.dk[j * d.dk + c]);
					xo_ref_st(mag[1], ko + c, a.mk[j * d.dk + c]);
				}
				for (int64_t e = 0; e < d.dv; e++) {
					xo_ref_st(dst[2], vo + e, a.dv[j * d.dv + e]);
					xo_ref_st(mag[2], vo + e, a.mv[j * d.dv + e]);
				}
			}
		}
	free(buf);
	return XO_OK;
}

/* Whether Keras's implicit masks and the attention_mask keep key j of query
 * row i of sample n (mask_outer, ops.def): ids[n][i] for the query, ids[n][j]
 * for the key, m[n][i][j] != 0 (NaN keeps, Keras's cast to bool). */
static bool mask_outer_keep(const struct xo_params *p, const struct xo_ref_src *src, int64_t n,
                            int64_t i, int64_t j)
{
	int64_t tk = xo_attention_len_kv(p), t = p->query_mask ? p->len : tk;

	if (p->query_mask && xo_ref_ld(src[0], n * t + i) == 0.0)
		return false;
	if (p->value_mask && xo_ref_ld(src[0], n * t + j) == 0.0)
		return false;
	return !p->attention_mask || xo_daz((float)xo_ref_ld(src[1], (n * p->len + i) * tk + j)) != 0.0f;
}

/* mask_outer fwd: src {ids|NULL, m|NULL}, dst {y[batch][Tq][Tk]}, 1 where
 * kept, else 0 (ops.def). mag: y itself (no accumulation). */
enum xo_status xo_ref_mask_outer_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
                                          const struct xo_ref_dst *dst,
                                          const struct xo_ref_dst *mag)
{
	int64_t tk = xo_attention_len_kv(p);

	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t i = 0; i < p->len; i++)
			for (int64_t j = 0; j < tk; j++) {
				int64_t e = (n * p->len + i) * tk + j;
				double y = mask_outer_keep(p, src, n, i, j) ? 1.0 : 0.0;

				xo_ref_st(dst[0], e, y);
				xo_ref_st(mag[0], e, y);
			}
	return XO_OK;
}
