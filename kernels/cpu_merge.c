/*
 * cpu_merge.c - the cpu merge op (ops.def): Keras's merge layers on two
 * inputs. The elementwise modes run one loop per mode over the rows
 * (vectorizable: no branch on the mode inside it); concatenate copies each
 * row's two parts with memcpy. Every value is the reference's one rounding
 * (float + - * and /2 round the exact value once; the choices and copies
 * are exact), and rows are split between threads in contiguous ranges, so
 * the results do not depend on the thread count.
 */
#include <math.h>
#include <string.h>

#include "cpu.h"

struct merge_job {
	const float *a, *b, *dy;
	float *y, *da, *db; /* y: forward; da, db (either may be NULL): backward */
	enum xo_merge mode;
	int64_t rows, ca, cb;
};

/* y[k] for k in [lo, hi) of an elementwise mode. */
static void merge_fwd_span(const struct merge_job *j, int64_t lo, int64_t hi)
{
	const float *a = j->a, *b = j->b;
	float *y = j->y;

	switch (j->mode) {
	case XO_MERGE_ADD:
		for (int64_t k = lo; k < hi; k++)
			y[k] = a[k] + b[k];
		return;
	case XO_MERGE_SUBTRACT:
		for (int64_t k = lo; k < hi; k++)
			y[k] = a[k] - b[k];
		return;
	case XO_MERGE_MULTIPLY:
		for (int64_t k = lo; k < hi; k++)
			y[k] = a[k] * b[k];
		return;
	case XO_MERGE_AVERAGE:
		for (int64_t k = lo; k < hi; k++)
			y[k] = (a[k] + b[k]) * 0.5f;
		return;
	case XO_MERGE_MAXIMUM:
		for (int64_t k = lo; k < hi; k++)
			y[k] = a[k] > b[k] || isnan(a[k]) ? a[k] : b[k]; /* NaN if either */
		return;
	case XO_MERGE_MINIMUM:
		for (int64_t k = lo; k < hi; k++)
			y[k] = a[k] < b[k] || isnan(a[k]) ? a[k] : b[k];
		return;
	case XO_MERGE_CONCATENATE:
		break;
	}
	XO_ASSERT(!"merge_fwd_span: not an elementwise mode");
}

/* The gradient of input w (0: a, 1: b) for k in [lo, hi). */
static void merge_bwd_span(const struct merge_job *j, int w, float *d, int64_t lo, int64_t hi)
{
	const float *a = j->a, *b = j->b, *dy = j->dy;
	const float *mine = w ? b : a, *other = w ? a : b;
	bool max = j->mode == XO_MERGE_MAXIMUM;

	switch (j->mode) {
	case XO_MERGE_ADD:
		memcpy(d + lo, dy + lo, (size_t)(hi - lo) * sizeof(float));
		return;
	case XO_MERGE_SUBTRACT:
		for (int64_t k = lo; k < hi; k++)
			d[k] = w ? -dy[k] : dy[k];
		return;
	case XO_MERGE_MULTIPLY:
		for (int64_t k = lo; k < hi; k++)
			d[k] = dy[k] * other[k];
		return;
	case XO_MERGE_AVERAGE:
		for (int64_t k = lo; k < hi; k++)
			d[k] = dy[k] * 0.5f;
		return;
	case XO_MERGE_MAXIMUM:
	case XO_MERGE_MINIMUM:
		for (int64_t k = lo; k < hi; k++) {
			bool wins = max ? mine[k] > other[k] : mine[k] < other[k];

			d[k] = mine[k] == other[k] ? dy[k] * 0.5f : wins ? dy[k] : 0.0f;
		}
		return;
	case XO_MERGE_CONCATENATE:
		break;
	}
	XO_ASSERT(!"merge_bwd_span: not an elementwise mode");
}

/* Concatenate's rows [lo, hi): forward y[r] = a[r] b[r], backward the parts of dy. */
static void merge_cat_rows(const struct merge_job *j, bool bwd, int64_t lo, int64_t hi)
{
	int64_t ca = j->ca, cb = j->cb, cy = ca + cb;

	for (int64_t r = lo; r < hi; r++) {
		if (!bwd) {
			memcpy(j->y + r * cy, j->a + r * ca, (size_t)ca * sizeof(float));
			memcpy(j->y + r * cy + ca, j->b + r * cb, (size_t)cb * sizeof(float));
			continue;
		}
		if (j->da)
			memcpy(j->da + r * ca, j->dy + r * cy, (size_t)ca * sizeof(float));
		if (j->db)
			memcpy(j->db + r * cb, j->dy + r * cy + ca, (size_t)cb * sizeof(float));
	}
}

static void merge_task(void *arg, int t, int nt, bool bwd)
{
	const struct merge_job *j = arg;
	int64_t lo = j->rows * t / nt, hi = j->rows * (t + 1) / nt;

	if (j->mode == XO_MERGE_CONCATENATE) {
		merge_cat_rows(j, bwd, lo, hi);
		return;
	}
	if (!bwd) {
		merge_fwd_span(j, lo * j->ca, hi * j->ca);
		return;
	}
	if (j->da)
		merge_bwd_span(j, 0, j->da, lo * j->ca, hi * j->ca);
	if (j->db)
		merge_bwd_span(j, 1, j->db, lo * j->ca, hi * j->ca);
}

static void merge_fwd_task(void *arg, int t, int nt)
{
	merge_task(arg, t, nt, false);
}

static void merge_bwd_task(void *arg, int t, int nt)
{
	merge_task(arg, t, nt, true);
}

static enum xo_status cpu_merge(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	const struct xo_params *p = &a->p;
	struct xo_cpu_ctx *c = be->ctx;
	struct merge_job j = {
	    .a = xo_tensor_f32(a->src[0]),
	    .b = xo_tensor_f32(a->src[1]),
	    .mode = p->mode,
	    .rows = p->batch * p->len,
	    .ca = p->ch,
	    .cb = p->mode == XO_MERGE_CONCATENATE ? p->ch_b : p->ch,
	};
	int nt;

	if (bwd) {
		j.dy = xo_tensor_f32(a->src[2]);
		j.da = a->dst[0] ? xo_tensor_f32(a->dst[0]) : NULL;
		j.db = a->dst[1] ? xo_tensor_f32(a->dst[1]) : NULL;
	} else {
		j.y = xo_tensor_f32(a->dst[0]);
	}
	nt = xo_cpu_threads_for(c, j.rows * (j.ca + j.cb), j.rows);
	xo_cpu_threads_run(c->tp, nt, bwd ? merge_bwd_task : merge_fwd_task, &j);
	return XO_OK;
}

enum xo_status xo_cpu_merge_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_merge(be, a, false);
}

enum xo_status xo_cpu_merge_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_merge(be, a, true);
}
