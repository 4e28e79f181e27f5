/*
 * cpu_merge.c - the cpu merge op (ops.def): Keras's merge layers on two
 * inputs. The elementwise modes run one loop per mode over the rows
 * (vectorizable: no branch on the mode inside it); concatenate copies each
 * row's two parts with memcpy. Every value is the reference's one rounding
 * (float + - * and /2 round the exact value once; the choices and copies
 * are exact), and rows are split between threads in contiguous ranges, so
 * the results do not depend on the thread count. Keras's mask (mask_a,
 * mask_b: the ids a last source) runs a row loop of its own.
 */
#include <math.h>
#include <string.h>

#include "cpu.h"

struct merge_job {
	const float *a, *b, *dy;
	float *y, *da, *db; /* y: forward; da, db (either may be NULL): backward */
	const int32_t *ids; /* Keras's mask (mask_a / mask_b), else NULL */
	bool mask_a, mask_b;
	enum xo_merge mode;
	int64_t rows, ca, cb;
};

void xo_cpu_merge_values(enum xo_merge mode, const float *a, const float *b, float *y, int64_t n)
{
	switch (mode) {
	case XO_MERGE_ADD:
		for (int64_t k = 0; k < n; k++)
			y[k] = a[k] + b[k];
		return;
	case XO_MERGE_SUBTRACT:
		for (int64_t k = 0; k < n; k++)
			y[k] = a[k] - b[k];
		return;
	case XO_MERGE_MULTIPLY:
		for (int64_t k = 0; k < n; k++)
			y[k] = a[k] * b[k];
		return;
	case XO_MERGE_AVERAGE:
		for (int64_t k = 0; k < n; k++)
			y[k] = (a[k] + b[k]) * 0.5f;
		return;
	case XO_MERGE_MAXIMUM:
		for (int64_t k = 0; k < n; k++)
			y[k] = a[k] > b[k] || isnan(a[k]) ? a[k] : b[k]; /* NaN if either */
		return;
	case XO_MERGE_MINIMUM:
		for (int64_t k = 0; k < n; k++)
			y[k] = a[k] < b[k] || isnan(a[k]) ? a[k] : b[k];
		return;
	case XO_MERGE_CONCATENATE:
		break;
	}
	XO_ASSERT(!"xo_cpu_merge_values: not an elementwise mode");
}

void xo_cpu_merge_grads(enum xo_merge mode, int w, const float *a, const float *b,
                      const float *dy, float *d, int64_t n)
{
	const float *mine = w ? b : a, *other = w ? a : b;
	bool max = mode == XO_MERGE_MAXIMUM;

	switch (mode) {
	case XO_MERGE_ADD:
		memcpy(d, dy, (size_t)n * sizeof(float));
		return;
	case XO_MERGE_SUBTRACT:
		for (int64_t k = 0; k < n; k++)
			d[k] = w ? -dy[k] : dy[k];
		return;
	case XO_MERGE_MULTIPLY:
		for (int64_t k = 0; k < n; k++)
			d[k] = dy[k] * other[k];
		return;
	case XO_MERGE_AVERAGE:
		for (int64_t k = 0; k < n; k++)
			d[k] = dy[k] * 0.5f;
		return;
	case XO_MERGE_MAXIMUM:
	case XO_MERGE_MINIMUM:
		for (int64_t k = 0; k < n; k++) {
			bool wins = max ? mine[k] > other[k] : mine[k] < other[k];

			d[k] = mine[k] == other[k] ? dy[k] * 0.5f : wins ? dy[k] : 0.0f;
		}
		return;
	case XO_MERGE_CONCATENATE:
		break;
	}
	XO_ASSERT(!"xo_cpu_merge_grads: not an elementwise mode");
}

void xo_cpu_concat_rows(const float *a, const float *b, float *y, int64_t rows, int64_t ca,
                        int64_t cb)
{
	for (int64_t r = 0; r < rows; r++) {
		memcpy(y + r * (ca + cb), a + r * ca, (size_t)ca * sizeof(float));
		memcpy(y + r * (ca + cb) + ca, b + r * cb, (size_t)cb * sizeof(float));
	}
}

void xo_cpu_concat_grads(int w, const float *dy, float *d, int64_t rows, int64_t ca, int64_t cb)
{
	const int64_t cw = w ? cb : ca, off = w ? ca : 0;

	for (int64_t r = 0; r < rows; r++)
		memcpy(d + r * cw, dy + r * (ca + cb) + off, (size_t)cw * sizeof(float));
}

/* Concatenate's rows [lo, hi): forward y[r] = a[r] b[r], backward the parts of dy. */
static void merge_cat_rows(const struct merge_job *j, bool bwd, int64_t lo, int64_t hi)
{
	int64_t ca = j->ca, cb = j->cb, cy = ca + cb;

	if (!bwd) {
		xo_cpu_concat_rows(j->a + lo * ca, j->b + lo * cb, j->y + lo * cy, hi - lo, ca, cb);
		return;
	}
	if (j->da)
		xo_cpu_concat_grads(0, j->dy + lo * cy, j->da + lo * ca, hi - lo, ca, cb);
	if (j->db)
		xo_cpu_concat_grads(1, j->dy + lo * cy, j->db + lo * cb, hi - lo, ca, cb);
}

/* The masked merge's rows [lo, hi) (ops.def: multiply, maximum, minimum
 * with mask_a / mask_b): per row the two inputs' kept flags from the ids,
 * then per element the reference's formula in float. Maximum and minimum
 * run the unmasked op on (o, x) = (ma ? a : x, mb ? b : a) and route its
 * two gradient parts back, summed in float. Each element is read before
 * it is written (y may be a). */
static void merge_masked_rows(const struct merge_job *j, bool bwd, int64_t lo, int64_t hi)
{
	bool mul = j->mode == XO_MERGE_MULTIPLY, both = j->mask_a && j->mask_b;

	for (int64_t r = lo; r < hi; r++) {
		bool kept = j->ids[r] != 0;
		bool ma = !j->mask_a || kept, mb = !j->mask_b || kept;

		for (int64_t c = 0; c < j->ca; c++) {
			int64_t k = r * j->ca + c;
			float a = j->a[k], b = j->b[k];
			float x = mb ? b : a, o = ma ? a : x;

			if (!bwd) {
				if (mul)
					j->y[k] = both && !ma && !mb ? 0.0f
					                             : (ma ? a : 1.0f) * (mb ? b : 1.0f);
				else
					xo_cpu_merge_values(j->mode, &o, &x, &j->y[k], 1);
				continue;
			}
			float g = j->dy[k], ga, gb;

			if (mul) {
				ga = ma ? g * (mb ? b : 1.0f) : 0.0f;
				gb = mb ? g * (ma ? a : 1.0f) : 0.0f;
			} else {
				float d_o, d_x;

				xo_cpu_merge_grads(j->mode, 0, &o, &x, &g, &d_o, 1);
				xo_cpu_merge_grads(j->mode, 1, &o, &x, &g, &d_x, 1);
				if (!ma)
					d_x += d_o;
				ga = ma ? (mb ? d_o : d_o + d_x) : (mb ? 0.0f : d_x);
				gb = mb ? d_x : 0.0f;
			}
			if (j->da)
				j->da[k] = ga;
			if (j->db)
				j->db[k] = gb;
		}
	}
}

static void merge_task(void *arg, int t, int nt, bool bwd)
{
	const struct merge_job *j = arg;
	int64_t lo = j->rows * t / nt, hi = j->rows * (t + 1) / nt;

	if (j->ids) {
		merge_masked_rows(j, bwd, lo, hi);
		return;
	}
	if (j->mode == XO_MERGE_CONCATENATE) {
		merge_cat_rows(j, bwd, lo, hi);
		return;
	}
	if (!bwd) {
		xo_cpu_merge_values(j->mode, j->a + lo * j->ca, j->b + lo * j->ca, j->y + lo * j->ca,
		                 (hi - lo) * j->ca);
		return;
	}
	if (j->da)
		xo_cpu_merge_grads(j->mode, 0, j->a + lo * j->ca, j->b + lo * j->ca, j->dy + lo * j->ca,
		                 j->da + lo * j->ca, (hi - lo) * j->ca);
	if (j->db)
		xo_cpu_merge_grads(j->mode, 1, j->a + lo * j->ca, j->b + lo * j->ca, j->dy + lo * j->ca,
		                 j->db + lo * j->ca, (hi - lo) * j->ca);
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
	    .mask_a = p->mask_a,
	    .mask_b = p->mask_b,
	};
	int nt;

	if (p->mask_a || p->mask_b)
		j.ids = xo_tensor_i32(a->src[bwd ? 3 : 2]);

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
