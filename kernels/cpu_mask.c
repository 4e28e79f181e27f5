/*
 * cpu_mask.c - the masking op on the cpu backend (Keras's Masking layer,
 * ops.def): per step (n, t), keep = any x[n][t][c] != mask_value (subnormals
 * as 0, xo_daz); forward
 * y = x where kept, +0 elsewhere, and the keep flags (int32 0/1); backward
 * dx = dy where kept, +0 elsewhere. Selects only, so the result matches the
 * reference bit for bit. Steps split between threads in contiguous ranges.
 */
#include <string.h>

#include "cpu.h"
#include "xo/cpu.h"

struct masking_job {
	const float *x;   /* [rows][ch]: decides the keep flags */
	const float *v;   /* [rows][ch]: x forward, dy backward */
	float *d;         /* [rows][ch]: y or dx */
	int32_t *keep;    /* [rows] or NULL (backward) */
	int64_t rows, ch;
	float mv;         /* mask_value */
};

static void masking_task(void *arg, int t, int nt)
{
	const struct masking_job *j = arg;
	int64_t lo = j->rows * t / nt, hi = j->rows * (t + 1) / nt;

	for (int64_t r = lo; r < hi; r++) {
		const float *x = j->x + r * j->ch;
		bool k = false;

		for (int64_t c = 0; c < j->ch && !k; c++)
			k = xo_daz(x[c]) != xo_daz(j->mv);
		if (j->keep)
			j->keep[r] = k ? 1 : 0;
		if (k)
			memcpy(j->d + r * j->ch, j->v + r * j->ch, sizeof(float) * (size_t)j->ch);
		else
			memset(j->d + r * j->ch, 0, sizeof(float) * (size_t)j->ch);
	}
}

static enum xo_status cpu_masking(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	const struct xo_params *p = &a->p;
	struct xo_cpu_ctx *c = be->ctx;
	struct masking_job j = {.x = xo_tensor_f32(a->src[0]),
				.v = xo_tensor_f32(a->src[bwd ? 1 : 0]),
				.d = xo_tensor_f32(a->dst[0]),
				.keep = bwd ? NULL : xo_tensor_i32(a->dst[1]),
				.rows = p->batch * p->len,
				.ch = p->ch,
				.mv = p->mask_value};

	xo_cpu_threads_run(c->tp, xo_cpu_threads_for(c, j.rows * j.ch, j.rows), masking_task, &j);
	return XO_OK;
}

enum xo_status xo_cpu_masking_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_masking(be, a, false);
}

enum xo_status xo_cpu_masking_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_masking(be, a, true);
}
