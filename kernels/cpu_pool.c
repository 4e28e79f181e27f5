/*
 * cpu_pool.c - cpu kernels of the pooling family beyond max_pooling1d (whose
 * vector kernels live with the ISA levels in cpu_kernels.inc):
 * average_pooling1d, global_average_pooling1d, global_max_pooling1d, forward
 * and backward. Plain C at the baseline ISA (the loops run over channels,
 * contiguous in memory, which the compiler vectorizes); threads over the
 * batch (small work stays on the calling thread).
 *
 * Contracts (shapes as ops.def; x, dy, y, dx dense, no aliasing between
 * sources and destinations; every destination element is overwritten):
 *   average_pooling1d fwd   y = (float sum of the window's in-bounds steps
 *                           in step order) / count, an IEEE division by the
 *                           count of those steps (exact on integer fills
 *                           when the count is a power of 2).
 *   average_pooling1d bwd   dx = 0, then for each window o in order,
 *                           dx[l] += dy[o] / count[o] for its steps l.
 *   global_average_pooling1d fwd  y = (sum over steps in order) / len;
 *                           bwd dx = dy / len at every step. With mask_zero
 *                           (src ids[batch][len]) the steps whose id is 0
 *                           are skipped, never read: y = (sum of the kept
 *                           steps in order) / their count (0 / 0 = NaN when
 *                           none is), dx = dy / count at a kept step, 0 at a
 *                           masked one.
 *   global_max_pooling1d    fwd y = NaN when a step is NaN, else the maximum;
 *                           bwd dy to XLA's select winner (the first maximum
 *                           without NaN), 0 elsewhere; NaN at every step of
 *                           a column holding a NaN (Keras's jnp.max gradient).
 *   max_pooling2d           as max_pooling1d over each window's in-bounds
 *                           cells in row-major order (height, then width);
 *                           bwd dx = 0, then for each window in row-major
 *                           order dx[first max] += dy.
 *   average_pooling2d       as average_pooling1d over the window's in-bounds
 *                           cells in row-major order, divided by their count.
 *   global_*_pooling2d      the 1-D global kernels over len*width steps.
 * The 2-D window loops use 4-float GCC vectors over channel groups (see
 * pool2d_fwd_rows); the others rely on the compiler.
 */
#include <math.h>
#include <string.h>

#include "cpu.h"
#include "cpu_conv2d.h"

/* Same threshold and split as cpu.c: below this many operations an op
 * stays on the calling thread. */
#define XO_CPU_POOL_PAR_MIN XO_CPU_PAR_MIN

static int pool_threads(const struct xo_cpu_ctx *c, double ops, int64_t items)
{
	int64_t nt = c->nthreads;

	if (ops < (double)XO_CPU_POOL_PAR_MIN)
		return 1;
	if (nt > items)
		nt = items;
	return nt < 1 ? 1 : (int)nt;
}

struct gpool_job {
	enum xo_op op;
	bool bwd;
	struct xo_params p;
	int64_t out, pad;   /* average_pooling1d geometry */
	struct xo_pool2d_geom g; /* max/average_pooling2d geometry */
	/* max_pooling2d fwd whose windows tile the input (strides == pool, no
	 * padding, every window inside): the ISA level's kernel */
	const struct xo_cpu_c2d_kernels *tiled;
	const float *x, *dy;
	const int32_t *ids; /* global_average_pooling1d with mask_zero; else NULL */
	float *y;           /* y (fwd) or dx (bwd) */
};

/* y[c] = (x[lo][c] + ... + x[hi-1][c]) / cnt, summed in step order (hi > lo):
 * one window of average_pooling1d, or the whole length for the global op. */
static void window_mean(float *y, const float *x, int64_t lo, int64_t hi, int64_t ch, float cnt)
{
	memcpy(y, x + lo * ch, (size_t)ch * sizeof(float));
	for (int64_t l = lo + 1; l < hi; l++)
		for (int64_t c = 0; c < ch; c++)
			y[c] += x[l * ch + c];
	for (int64_t c = 0; c < ch; c++)
		y[c] = y[c] / cnt;
}

static void avg_fwd_rows(const struct gpool_job *j, int64_t n0, int64_t n1)
{
	const struct xo_params *p = &j->p;
	int64_t ch = p->ch;

	for (int64_t n = n0; n < n1; n++) {
		const float *x = j->x + n * p->len * ch;
		float *y = j->y + n * j->out * ch;

		for (int64_t o = 0; o < j->out; o++) {
			int64_t lo, hi;
			float cnt = (float)xo_pool1d_window(p, o, j->pad, &lo, &hi);
			float *yo = y + o * ch;

			window_mean(yo, x, lo, hi, ch, cnt);
		}
	}
}

static void avg_bwd_rows(const struct gpool_job *j, int64_t n0, int64_t n1)
{
	const struct xo_params *p = &j->p;
	int64_t ch = p->ch;

	for (int64_t n = n0; n < n1; n++) {
		const float *dy = j->dy + n * j->out * ch;
		float *dx = j->y + n * p->len * ch;

		memset(dx, 0, (size_t)(p->len * ch) * sizeof(float));
		for (int64_t o = 0; o < j->out; o++) {
			int64_t lo, hi;
			float cnt = (float)xo_pool1d_window(p, o, j->pad, &lo, &hi);

			for (int64_t l = lo; l < hi; l++)
				for (int64_t c = 0; c < ch; c++)
					dx[l * ch + c] += dy[o * ch + c] / cnt;
		}
	}
}

/* The kept steps of sample n's ids (mask_zero): the ids not 0. */
static int64_t ids_kept(const int32_t *ids, int64_t len)
{
	int64_t k = 0;

	for (int64_t l = 0; l < len; l++)
		k += ids[l] != 0;
	return k;
}

/* The masked mean of one sample: the kept steps summed in order into y,
 * then divided by their count (0 / 0 = NaN with none kept). */
static void masked_mean(float *y, const float *x, const int32_t *ids, int64_t len, int64_t ch)
{
	float cnt = (float)ids_kept(ids, len);

	memset(y, 0, (size_t)ch * sizeof(float));
	for (int64_t l = 0; l < len; l++)
		if (ids[l] != 0)
			for (int64_t c = 0; c < ch; c++)
				y[c] += x[l * ch + c];
	for (int64_t c = 0; c < ch; c++)
		y[c] = y[c] / cnt;
}

static void gavg_fwd_rows(const struct gpool_job *j, int64_t n0, int64_t n1)
{
	const struct xo_params *p = &j->p;
	int64_t ch = p->ch;
	float len = (float)p->len;

	for (int64_t n = n0; n < n1; n++) {
		const float *x = j->x + n * p->len * ch;
		float *y = j->y + n * ch;

		if (j->ids)
			masked_mean(y, x, j->ids + n * p->len, p->len, ch);
		else
			window_mean(y, x, 0, p->len, ch, len);
	}
}

static void gavg_bwd_rows(const struct gpool_job *j, int64_t n0, int64_t n1)
{
	const struct xo_params *p = &j->p;
	int64_t ch = p->ch;
	float len = (float)p->len;

	for (int64_t n = n0; n < n1; n++) {
		const float *dy = j->dy + n * ch;
		float *dx = j->y + n * p->len * ch;

		if (j->ids) {
			const int32_t *ids = j->ids + n * p->len;
			float cnt = (float)ids_kept(ids, p->len);

			for (int64_t l = 0; l < p->len; l++)
				for (int64_t c = 0; c < ch; c++)
					dx[l * ch + c] = ids[l] != 0 ? dy[c] / cnt : 0.0f;
			continue;
		}
		for (int64_t c = 0; c < ch; c++)
			dx[c] = dy[c] / len;
		for (int64_t l = 1; l < p->len; l++)
			memcpy(dx + l * ch, dx, (size_t)ch * sizeof(float));
	}
}

static void gmax_fwd_rows(const struct gpool_job *j, int64_t n0, int64_t n1)
{
	const struct xo_params *p = &j->p;
	int64_t ch = p->ch;

	for (int64_t n = n0; n < n1; n++) {
		const float *x = j->x + n * p->len * ch;
		float *y = j->y + n * ch;

		memcpy(y, x, (size_t)ch * sizeof(float));
		for (int64_t l = 1; l < p->len; l++)
			for (int64_t c = 0; c < ch; c++) {
				float v = x[l * ch + c];

				y[c] = v > y[c] || isnan(v) ? v : y[c]; /* a NaN stays */
			}
	}
}

static void gmax_bwd_rows(const struct gpool_job *j, int64_t n0, int64_t n1)
{
	const struct xo_params *p = &j->p;
	int64_t ch = p->ch;

	for (int64_t n = n0; n < n1; n++) {
		const float *x = j->x + n * p->len * ch;
		float *dx = j->y + n * p->len * ch;

		memset(dx, 0, (size_t)(p->len * ch) * sizeof(float));
		for (int64_t c = 0; c < ch; c++) {
			int64_t at = 0;
			float best = x[c];
			bool nan = isnan(best);

			for (int64_t l = 1; l < p->len; l++) {
				nan |= isnan(x[l * ch + c]);
				if (!(best >= x[l * ch + c])) {
					best = x[l * ch + c];
					at = l;
				}
			}
			dx[at * ch + c] = j->dy[n * ch + c];
			for (int64_t l = 0; l < p->len && nan; l++) /* Keras's 0 / 0 */
				dx[l * ch + c] = NAN;
		}
	}
}

/* In-bounds rows [*r0, *r1) and columns [*s0, *s1) of 2-D window (oh, ow);
 * returns the cell count. */
static int64_t window2d(const struct gpool_job *j, int64_t oh, int64_t ow, int64_t *r0,
			int64_t *r1, int64_t *s0, int64_t *s1)
{
	const struct xo_pool2d_geom *g = &j->g;
	int64_t rs = oh * g->stride_h - g->pad_h, ss = ow * g->stride_w - g->pad_w;

	*r0 = rs < 0 ? 0 : rs;
	*r1 = rs + g->pool_h > j->p.len ? j->p.len : rs + g->pool_h;
	*s0 = ss < 0 ? 0 : ss;
	*s1 = ss + g->pool_w > j->p.width ? j->p.width : ss + g->pool_w;
	return (*r1 - *r0) * (*s1 - *s0);
}

/* The 2-D window loops run over channels in groups of PV floats held in
 * one GCC vector (an SSE register at the baseline ISA, where -O2 leaves a
 * loop of runtime length scalar), loaded and stored unaligned; channels
 * past the last full group take the scalar path. Lane by lane the
 * operations are the scalar ones: `v > y` selects (a NaN never replaces,
 * as in the scalar form), sums in cell order, one IEEE division. */
#define PV 4
typedef float pv_f __attribute__((vector_size(PV * 4)));
typedef int32_t pv_i __attribute__((vector_size(PV * 4)));
typedef float pv_fu __attribute__((vector_size(PV * 4), aligned(4), may_alias));

static inline pv_f pv_ld(const float *p)
{
	return *(const pv_fu *)p;
}

static inline void pv_st(float *p, pv_f v)
{
	*(pv_fu *)p = v;
}

/* m lanes (all ones) take a, the others b */
static inline pv_f pv_sel(pv_i m, pv_f a, pv_f b)
{
	return (pv_f)((m & (pv_i)a) | (~m & (pv_i)b));
}

/* fwd of both windowed 2-D ops for samples [n0, n1): y per window over the
 * cells in row-major order, the first cell copied, then `v > y` (max) or a
 * sum divided by the count (average). */
static void pool2d_fwd_rows(const struct gpool_job *j, int64_t n0, int64_t n1)
{
	const struct xo_params *p = &j->p;
	int64_t ch = p->ch, w = p->width, cv = ch - ch % PV;
	bool max = j->op == XO_OP_max_pooling2d;

	for (int64_t n = n0; n < n1; n++) {
		const float *x = j->x + n * p->len * w * ch;

		for (int64_t oh = 0; oh < j->g.out_h; oh++)
			for (int64_t ow = 0; ow < j->g.out_w; ow++) {
				float *y = j->y + ((n * j->g.out_h + oh) * j->g.out_w + ow) * ch;
				int64_t r0, r1, s0, s1;
				float cnt = (float)window2d(j, oh, ow, &r0, &r1, &s0, &s1);
				const float *x0 = x + (r0 * w + s0) * ch;

				for (int64_t c = 0; c < cv; c += PV) {
					pv_f acc = pv_ld(x0 + c);

					for (int64_t r = r0; r < r1; r++)
						for (int64_t s = r == r0 ? s0 + 1 : s0; s < s1; s++) {
							pv_f v = pv_ld(x + (r * w + s) * ch + c);

							if (max)
								acc = pv_sel((v > acc) | (v != v), v,
									     acc);
							else
								acc += v;
						}
					pv_st(y + c, max ? acc : acc / cnt);
				}
				for (int64_t c = cv; c < ch; c++) {
					float acc = x0[c];

					for (int64_t r = r0; r < r1; r++)
						for (int64_t s = r == r0 ? s0 + 1 : s0; s < s1; s++) {
							float v = x[(r * w + s) * ch + c];

							if (max)
								acc = v > acc || isnan(v) ? v : acc;
							else
								acc += v;
						}
					y[c] = max ? acc : acc / cnt;
				}
			}
	}
}

/* bwd of both windowed 2-D ops: dx = 0, then for each window in row-major
 * order dx[its first maximum] += dy (max) or dx[each cell] += dy / count. */
static void pool2d_bwd_rows(const struct gpool_job *j, int64_t n0, int64_t n1)
{
	const struct xo_params *p = &j->p;
	int64_t ch = p->ch, w = p->width, cv = ch - ch % PV;
	bool max = j->op == XO_OP_max_pooling2d;
	/* the vector max path keeps cell indices in int32 lanes */
	int64_t cvm = p->len * w > INT32_MAX ? 0 : cv;

	for (int64_t n = n0; n < n1; n++) {
		const float *x = max ? j->x + n * p->len * w * ch : NULL;
		float *dx = j->y + n * p->len * w * ch;

		memset(dx, 0, (size_t)(p->len * w * ch) * sizeof(float));
		for (int64_t oh = 0; oh < j->g.out_h; oh++)
			for (int64_t ow = 0; ow < j->g.out_w; ow++) {
				const float *dy =
				    j->dy + ((n * j->g.out_h + oh) * j->g.out_w + ow) * ch;
				int64_t r0, r1, s0, s1;
				float cnt = (float)window2d(j, oh, ow, &r0, &r1, &s0, &s1);

				for (int64_t c = 0; c < cvm && max; c += PV) {
					int32_t first = (int32_t)(r0 * w + s0);
					pv_i at = {first, first, first, first};
					pv_f best = pv_ld(x + first * ch + c);

					for (int64_t r = r0; r < r1; r++)
						for (int64_t s = s0; s < s1; s++) {
							int32_t cell = (int32_t)(r * w + s);
							pv_f v = pv_ld(x + cell * ch + c);
							pv_i m = ~(best >= v);
							pv_i vc = {cell, cell, cell, cell};

							best = pv_sel(m, v, best);
							at = (m & vc) | (~m & at);
						}
					for (int i = 0; i < PV; i++)
						dx[(int64_t)at[i] * ch + c + i] += dy[c + i];
				}
				for (int64_t c = max ? cvm : ch; c < ch; c++) {
					int64_t at = r0 * w + s0;
					float best = x[at * ch + c];

					for (int64_t r = r0; r < r1; r++)
						for (int64_t s = s0; s < s1; s++)
							if (!(best >= x[(r * w + s) * ch + c])) {
								best = x[(r * w + s) * ch + c];
								at = r * w + s;
							}
					dx[at * ch + c] += dy[c];
				}
				for (int64_t r = r0; r < r1 && !max; r++)
					for (int64_t s = s0; s < s1; s++) {
						float *d = dx + (r * w + s) * ch;

						for (int64_t c = 0; c < cv; c += PV)
							pv_st(d + c, pv_ld(d + c) + pv_ld(dy + c) / cnt);
						for (int64_t c = cv; c < ch; c++)
							d[c] += dy[c] / cnt;
					}
			}
	}
}

static void gpool_task(void *arg, int t, int nt)
{
	const struct gpool_job *j = arg;
	int64_t n0 = j->p.batch * t / nt, n1 = j->p.batch * (t + 1) / nt;

	if (n1 <= n0)
		return;
	switch (j->op) {
	case XO_OP_average_pooling1d:
		(j->bwd ? avg_bwd_rows : avg_fwd_rows)(j, n0, n1);
		break;
	case XO_OP_global_average_pooling1d:
	case XO_OP_global_average_pooling2d: /* p.len = len * width (gpool_run) */
		(j->bwd ? gavg_bwd_rows : gavg_fwd_rows)(j, n0, n1);
		break;
	case XO_OP_global_max_pooling1d:
	case XO_OP_global_max_pooling2d:
		(j->bwd ? gmax_bwd_rows : gmax_fwd_rows)(j, n0, n1);
		break;
	case XO_OP_max_pooling2d:
	case XO_OP_average_pooling2d:
		if (j->tiled) {
			int64_t in = j->p.len * j->p.width * j->p.ch;
			struct xo_cpu_c2d_maxpool mp = {
			    .x = j->x + n0 * in, .x_stride = in, .samples = n1 - n0,
			    .w = j->p.width, .ch = j->p.ch, .oh = j->g.out_h, .ow = j->g.out_w,
			    .ph = j->g.pool_h, .pw = j->g.pool_w,
			    .y = j->y + n0 * j->g.out_h * j->g.out_w * j->p.ch,
			};

			j->tiled->maxpool(&mp);
			break;
		}
		(j->bwd ? pool2d_bwd_rows : pool2d_fwd_rows)(j, n0, n1);
		break;
	default:
		XO_ASSERT(0 && "gpool_task: not a pooling op of this file");
	}
}

static enum xo_status gpool_run(struct xo_backend *be, enum xo_op op, bool bwd,
				const struct xo_op_args *a)
{
	struct xo_cpu_ctx *c = be->ctx;
	struct gpool_job j = {.op = op, .bwd = bwd, .p = a->p};
	/* in double: out * pool_size may pass int64 for a huge same-padded pool */
	double work = (double)a->p.batch * (double)a->p.len * (double)a->p.ch;

	if (op == XO_OP_average_pooling1d) {
		enum xo_status st = xo_pool1d_geometry_of(op, &a->p, &j.out, &j.pad);

		if (st)
			return st;
		work = (double)a->p.batch *
		       ((double)j.out * (double)a->p.pool_size + (double)a->p.len) *
		       (double)a->p.ch;
	} else if (xo_op_is_pool2d(op)) {
		enum xo_status st = xo_pool2d_geometry_of(op, &a->p, &j.g);

		if (st)
			return st;
		work = (double)a->p.batch * (double)a->p.ch *
		       ((double)j.g.out_h * (double)j.g.out_w * (double)j.g.pool_h *
			    (double)j.g.pool_w +
			(double)a->p.len * (double)a->p.width);
		if (op == XO_OP_max_pooling2d && !bwd && j.g.pad_h == 0 && j.g.pad_w == 0 &&
		    j.g.stride_h == j.g.pool_h && j.g.stride_w == j.g.pool_w &&
		    j.g.out_h * j.g.pool_h <= a->p.len && j.g.out_w * j.g.pool_w <= a->p.width)
			j.tiled = xo_cpu_c2d_kernels_for(c);
	} else if (op == XO_OP_global_average_pooling2d || op == XO_OP_global_max_pooling2d) {
		/* the 1-D global kernels over the len*width cells (sizes
		 * validated: the product fits) */
		j.p.len = a->p.len * a->p.width;
		j.p.width = 1;
		work = (double)a->p.batch * (double)j.p.len * (double)a->p.ch;
	}
	/* slots (ops.def): the gradient is src[0] except for the max ops (src[1]) */
	bool xin = op == XO_OP_global_max_pooling1d || op == XO_OP_global_max_pooling2d ||
		   op == XO_OP_max_pooling2d;
	if (!bwd || xin)
		j.x = xo_tensor_f32(a->src[0]);
	if (bwd)
		j.dy = xo_tensor_f32(a->src[xin ? 1 : 0]);
	if (op == XO_OP_global_average_pooling1d && a->p.mask_zero)
		j.ids = xo_tensor_i32(a->src[1]);
	j.y = xo_tensor_f32(a->dst[0]);
	xo_cpu_threads_run(c->tp, pool_threads(c, work, a->p.batch), gpool_task, &j);
	return XO_OK;
}

#define GPOOL_KERNELS(name, op)                                                              \
	enum xo_status xo_cpu_##name##_fwd(struct xo_backend *be,                     \
						  const struct xo_op_args *a)                \
	{                                                                                    \
		return gpool_run(be, op, false, a);                                          \
	}                                                                                    \
	enum xo_status xo_cpu_##name##_bwd(struct xo_backend *be,                     \
						  const struct xo_op_args *a)                \
	{                                                                                    \
		return gpool_run(be, op, true, a);                                           \
	}
GPOOL_KERNELS(average_pooling1d, XO_OP_average_pooling1d)
GPOOL_KERNELS(global_average_pooling1d, XO_OP_global_average_pooling1d)
GPOOL_KERNELS(global_max_pooling1d, XO_OP_global_max_pooling1d)
GPOOL_KERNELS(max_pooling2d, XO_OP_max_pooling2d)
GPOOL_KERNELS(average_pooling2d, XO_OP_average_pooling2d)
GPOOL_KERNELS(global_average_pooling2d, XO_OP_global_average_pooling2d)
GPOOL_KERNELS(global_max_pooling2d, XO_OP_global_max_pooling2d)

