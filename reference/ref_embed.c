/*
 * ref_embed.c - the oracle of the embedding op (Keras Embedding, ops.def):
 * a row lookup forward, and backward the scatter-add of dy into the table
 * rows that were used. Naive loops in the mathematical order; the backward
 * sums each row's contributions in double in increasing position
 * n * len + t, rounded once.
 *
 * Magnitudes (ref.c): fwd |y|; bwd dtable[r][c] gets sum |dy[n][t][c]| over
 * the positions with ids[n][t] == r (the Higham bound's sum of |terms|).
 */
#include <math.h>
#include <stdlib.h>

#include "ref_internal.h"

/* Every id in [0, rows), checked before anything is written (an id is an
 * int32, exact in double). */
static enum xo_status check_ids(const struct xo_params *p, struct xo_ref_src ids)
{
	int64_t n = p->batch * p->len;

	for (int64_t i = 0; i < n; i++) {
		double r = xo_ref_ld(ids, i);

		if (!(r >= 0.0 && r < (double)p->rows))
			return xo_error(XO_EINVAL,
					"embedding: id %.0f at sample %lld, step %lld is outside [0, "
					"input_dim=%lld)",
					r, (long long)(i / p->len), (long long)(i % p->len),
					(long long)p->rows);
	}
	return XO_OK;
}

/* fwd: src {ids[batch][len] (i32), table[rows][ch]}, dst {y[batch][len][ch]}. */
enum xo_status xo_ref_embedding_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
					 const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t n = p->batch * p->len, ch = p->ch;
	enum xo_status st = check_ids(p, src[0]);

	if (st)
		return st;
	for (int64_t i = 0; i < n; i++) {
		int64_t r = (int64_t)xo_ref_ld(src[0], i);

		for (int64_t c = 0; c < ch; c++) {
			double v = xo_ref_ld(src[1], r * ch + c);

			xo_ref_st(dst[0], i * ch + c, v);
			xo_ref_st(mag[0], i * ch + c, fabs(v));
		}
	}
	return XO_OK;
}

/* bwd: src {ids, dy[batch][len][ch]}, dst {dtable[rows][ch]}, overwritten:
 * dtable[r][c] = sum over positions i with ids[i] == r, in increasing i, of
 * dy[i][c]; 0 for a row no id names. The sums run in double (exact on
 * integer fills; one rounding each).  */
enum xo_status xo_ref_embedding_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
					 const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t n = p->batch * p->len, ch = p->ch, size = p->rows * ch;
	enum xo_status st = check_ids(p, src[0]);
	double *s, *m;

	if (st)
		return st;
	s = calloc((size_t)size, sizeof(*s));
	m = calloc((size_t)size, sizeof(*m));
	if (!s || !m) {
		free(s);
		free(m);
		return xo_error(XO_ENOMEM, "embedding: cannot allocate %lld doubles",
				(long long)size * 2);
	}
	for (int64_t i = 0; i < n; i++) {
		int64_t r = (int64_t)xo_ref_ld(src[0], i);

		for (int64_t c = 0; c < ch; c++) {
			double v = xo_ref_ld(src[1], i * ch + c);

			s[r * ch + c] += v;
			m[r * ch + c] += fabs(v);
		}
	}
	for (int64_t k = 0; k < size; k++) {
		xo_ref_st(dst[0], k, s[k]);
		xo_ref_st(mag[0], k, m[k]);
	}
	free(s);
	free(m);
	return XO_OK;
}
