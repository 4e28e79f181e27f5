/*
 * ref_resize.c - reference ops that change the spatial extent of a
 * channels-last tensor by moving values: pad (zero padding and cropping,
 * signed margins), up_sampling (nearest: repeated rows and columns),
 * permute and flip (the time axis reversed).
 * Their forwards and pad's backward are copies: every backend must match
 * them bit for bit, and mag of every element is |y|. up_sampling's
 * backward sums repeats * repeats_w gradients in double; its mag is the sum
 * of their magnitudes.
 */
#include <math.h>

#include "ref_internal.h"

/*
 * The shift both directions of pad are: dst[n][i][j][c] = src[n][i - bh][j - bw][c]
 * where that cell is inside src ([sh][sw]), else +0. dst is [batch][dh][dw][ch].
 */
static void pad_shift(const struct xo_params *p, struct xo_ref_src s, struct xo_ref_dst d,
		      struct xo_ref_dst mag, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
		      int64_t bh, int64_t bw)
{
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t i = 0; i < dh; i++)
			for (int64_t j = 0; j < dw; j++)
				for (int64_t c = 0; c < p->ch; c++) {
					int64_t si = i - bh, sj = j - bw, k;
					double v = 0.0;

					if (si >= 0 && si < sh && sj >= 0 && sj < sw)
						v = xo_ref_ld(s, ((n * sh + si) * sw + sj) * p->ch + c);
					k = ((n * dh + i) * dw + j) * p->ch + c;
					xo_ref_st(d, k, v);
					xo_ref_st(mag, k, fabs(v));
				}
}

/* pad fwd: src {x[batch][len][width][ch]}, dst {y[batch][out_h][out_w][ch]},
 * y[i][j] = x[i - pad_begin][j - pad_begin_w] inside x, else 0. */
enum xo_status xo_ref_pad_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				   const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t oh = p->len + p->pad_begin + p->pad_end;
	int64_t ow = p->width + p->pad_begin_w + p->pad_end_w;

	pad_shift(p, src[0], dst[0], mag[0], p->len, p->width, oh, ow, p->pad_begin,
		  p->pad_begin_w);
	return XO_OK;
}

/* pad bwd: src {dy[batch][out_h][out_w][ch]}, dst {dx[batch][len][width][ch]},
 * dx[i][j] = dy[i + pad_begin][j + pad_begin_w] inside dy, else 0. */
enum xo_status xo_ref_pad_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				   const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t oh = p->len + p->pad_begin + p->pad_end;
	int64_t ow = p->width + p->pad_begin_w + p->pad_end_w;

	pad_shift(p, src[0], dst[0], mag[0], oh, ow, p->len, p->width, -p->pad_begin,
		  -p->pad_begin_w);
	return XO_OK;
}

/* up_sampling fwd: src {x[batch][len][width][ch]},
 * dst {y[batch][len * repeats][width * repeats_w][ch]}, y[i][j] = x[i / r][j / rw]. */
enum xo_status xo_ref_up_sampling_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
					   const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t r = p->repeats, rw = p->repeats_w, oh = p->len * r, ow = p->width * rw;

	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t i = 0; i < oh; i++)
			for (int64_t j = 0; j < ow; j++)
				for (int64_t c = 0; c < p->ch; c++) {
					int64_t k = ((n * oh + i) * ow + j) * p->ch + c;
					double v = xo_ref_ld(
					    src[0], ((n * p->len + i / r) * p->width + j / rw) * p->ch + c);

					xo_ref_st(dst[0], k, v);
					xo_ref_st(mag[0], k, fabs(v));
				}
	return XO_OK;
}

/* up_sampling bwd: src {dy[batch][len * repeats][width * repeats_w][ch]},
 * dst {dx[batch][len][width][ch]}, dx[i][j] = the sum of the r * rw
 * gradients of the cells y[i * r + a][j * rw + b] it was copied to. */
enum xo_status xo_ref_up_sampling_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
					   const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t r = p->repeats, rw = p->repeats_w, oh = p->len * r, ow = p->width * rw;

	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t i = 0; i < p->len; i++)
			for (int64_t j = 0; j < p->width; j++)
				for (int64_t c = 0; c < p->ch; c++) {
					int64_t k = ((n * p->len + i) * p->width + j) * p->ch + c;
					double s = 0.0, m = 0.0;

					for (int64_t a = 0; a < r; a++)
						for (int64_t b = 0; b < rw; b++) {
							double v = xo_ref_ld(
							    src[0],
							    ((n * oh + i * r + a) * ow + j * rw + b) * p->ch + c);

							s += v;
							m += fabs(v);
						}
					xo_ref_st(dst[0], k, s);
					xo_ref_st(mag[0], k, m);
				}
	return XO_OK;
}

/* The move both directions of permute are: src [batch][s0][s1][s2], dst axis k
 * is src axis q[k]; dst[n][i0][i1][i2] = src[n] at index i_k on axis q[k]. */
static void permute_move(const struct xo_params *p, struct xo_ref_src s, struct xo_ref_dst d,
			 struct xo_ref_dst mag, const int64_t sz[3], const int q[3])
{
	int64_t stride[3] = {sz[1] * sz[2], sz[2], 1};
	int64_t o0 = sz[q[0]], o1 = sz[q[1]], o2 = sz[q[2]], per = sz[0] * sz[1] * sz[2];

	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t i0 = 0; i0 < o0; i0++)
			for (int64_t i1 = 0; i1 < o1; i1++)
				for (int64_t i2 = 0; i2 < o2; i2++) {
					int64_t si = n * per + i0 * stride[q[0]] + i1 * stride[q[1]] +
						     i2 * stride[q[2]];
					int64_t k = ((n * o0 + i0) * o1 + i1) * o2 + i2;
					double v = xo_ref_ld(s, si);

					xo_ref_st(d, k, v);
					xo_ref_st(mag, k, fabs(v));
				}
}

/* permute fwd: src {x[batch][len][width][ch]}, dst {y}, y's axis k is x's axis
 * dims digit k (ops.def). */
enum xo_status xo_ref_permute_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t sz[3] = {p->len, p->width, p->ch};
	int q[3];
	enum xo_status st = xo_permute_axes(p->dims, q);

	if (st)
		return st;
	permute_move(p, src[0], dst[0], mag[0], sz, q);
	return XO_OK;
}

/* permute bwd: src {dy}, dst {dx[batch][len][width][ch]}: dy moved by the
 * inverse permutation (dx's axis q[k] is dy's axis k). */
enum xo_status xo_ref_permute_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t x[3] = {p->len, p->width, p->ch}, sz[3];
	int q[3], inv[3];
	enum xo_status st = xo_permute_axes(p->dims, q);

	if (st)
		return st;
	for (int k = 0; k < 3; k++) {
		sz[k] = x[q[k]];
		inv[q[k]] = k;
	}
	permute_move(p, src[0], dst[0], mag[0], sz, inv);
	return XO_OK;
}

/* The move both directions of flip are: dst[n][t][c] = src[n][len - 1 - t][c]. */
static void flip_move(const struct xo_params *p, struct xo_ref_src s, struct xo_ref_dst d,
		      struct xo_ref_dst mag)
{
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t t = 0; t < p->len; t++)
			for (int64_t c = 0; c < p->ch; c++) {
				int64_t k = (n * p->len + t) * p->ch + c;
				double v = xo_ref_ld(s, (n * p->len + (p->len - 1 - t)) * p->ch + c);

				xo_ref_st(d, k, v);
				xo_ref_st(mag, k, fabs(v));
			}
}

/* flip fwd: src {x[batch][len][ch]}, dst {y}, y[n][t] = x[n][len - 1 - t] (ops.def). */
enum xo_status xo_ref_flip_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				    const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	flip_move(p, src[0], dst[0], mag[0]);
	return XO_OK;
}

/* flip bwd: src {dy}, dst {dx}: the flip is its own inverse. */
enum xo_status xo_ref_flip_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				    const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	flip_move(p, src[0], dst[0], mag[0]);
	return XO_OK;
}
