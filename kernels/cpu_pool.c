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
 *                           bwd dx = dy / len at every step.
 *   global_max_pooling1d    fwd y = first maximum under `v > best` from the
 *                           first step (a NaN first step stays); bwd dy to
 *                           that step, 0 elsewhere.
 */
#include <string.h>

#include "cpu.h"

/* Same threshold and split as cpu.c: below this many operations an op
 * stays on the calling thread. */
#define XO_CPU_POOL_PAR_MIN 300000

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
	const float *x, *dy;
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

static void gavg_fwd_rows(const struct gpool_job *j, int64_t n0, int64_t n1)
{
	const struct xo_params *p = &j->p;
	int64_t ch = p->ch;
	float len = (float)p->len;

	for (int64_t n = n0; n < n1; n++) {
		const float *x = j->x + n * p->len * ch;
		float *y = j->y + n * ch;

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
			for (int64_t c = 0; c < ch; c++)
				y[c] = x[l * ch + c] > y[c] ? x[l * ch + c] : y[c];
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

			for (int64_t l = 1; l < p->len; l++)
				if (x[l * ch + c] > best) {
					best = x[l * ch + c];
					at = l;
				}
			dx[at * ch + c] = j->dy[n * ch + c];
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
		(j->bwd ? gavg_bwd_rows : gavg_fwd_rows)(j, n0, n1);
		break;
	case XO_OP_global_max_pooling1d:
		(j->bwd ? gmax_bwd_rows : gmax_fwd_rows)(j, n0, n1);
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
	}
	/* slots (ops.def): the gradient is src[0] except for global max (src[1]) */
	if (!bwd || op == XO_OP_global_max_pooling1d)
		j.x = xo_tensor_f32(a->src[0]);
	if (bwd)
		j.dy = xo_tensor_f32(a->src[op == XO_OP_global_max_pooling1d ? 1 : 0]);
	j.y = xo_tensor_f32(a->dst[0]);
	xo_cpu_threads_run(c->tp, pool_threads(c, work, a->p.batch), gpool_task, &j);
	return XO_OK;
}

#define GPOOL_KERNELS(name, op)                                                              \
	static enum xo_status xo_cpu_##name##_fwd(struct xo_backend *be,                     \
						  const struct xo_op_args *a)                \
	{                                                                                    \
		return gpool_run(be, op, false, a);                                          \
	}                                                                                    \
	static enum xo_status xo_cpu_##name##_bwd(struct xo_backend *be,                     \
						  const struct xo_op_args *a)                \
	{                                                                                    \
		return gpool_run(be, op, true, a);                                           \
	}
GPOOL_KERNELS(average_pooling1d, XO_OP_average_pooling1d)
GPOOL_KERNELS(global_average_pooling1d, XO_OP_global_average_pooling1d)
GPOOL_KERNELS(global_max_pooling1d, XO_OP_global_max_pooling1d)

void xo_cpu_pool_register(struct xo_backend_iface *iface)
{
	iface->fwd[XO_OP_average_pooling1d] = xo_cpu_average_pooling1d_fwd;
	iface->bwd[XO_OP_average_pooling1d] = xo_cpu_average_pooling1d_bwd;
	iface->fwd[XO_OP_global_average_pooling1d] = xo_cpu_global_average_pooling1d_fwd;
	iface->bwd[XO_OP_global_average_pooling1d] = xo_cpu_global_average_pooling1d_bwd;
	iface->fwd[XO_OP_global_max_pooling1d] = xo_cpu_global_max_pooling1d_fwd;
	iface->bwd[XO_OP_global_max_pooling1d] = xo_cpu_global_max_pooling1d_bwd;
}
