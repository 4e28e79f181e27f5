/*
 * cpu_dwconv.c - backend "cpu": depthwise_conv2d forward and backward
 * (ops.def). A depthwise product has no reduction over channels, so there is
 * no GEMM to hand it to: each output position is a few taps of one
 * multiply-add per output channel, over rows of ch*dm contiguous floats
 * (the kernel's [kh][kw][ch][dm] is [taps][co] with o = c*dm + m, the
 * output's order), which the compiler vectorises.
 *
 *   fwd  per sample: each output row starts from the bias, then adds its
 *        in-bounds taps; relu/sigmoid over the sample's outputs, softmax per
 *        row, after.
 *   bwd  per sample: dz = d act(y) * dy (xo_cpu_act_dz) into scratch, then
 *        for each output position and in-bounds tap: dx row += dz * w,
 *        dw tap row += x * dz, db += dz. dw and db are per-thread parts
 *        summed in thread order (xo_cpu_parts_sum).
 * Threads split the batch (xo_cpu_threads_for). Sums of products only: on
 * integer fills every order is exact, so the comparison class is exact.
 */
#include <string.h>

#include "cpu.h"

/* One depthwise_conv2d call, described once for the task functions. */
struct dw_job {
	const struct xo_cpu_ctx *c;
	int64_t batch, h, w, ch, dm, co; /* rows, columns, channels, multiplier, ch*dm */
	int64_t kh, kw, sh, sw;          /* kernel, strides */
	int64_t oh, ow, pt, pl;          /* output rows, columns; padding above, left */
	int act;
	const float *x, *wgt, *b, *y, *dy;
	float *yo, *dx, *dwo, *db;
	int64_t off_dw, off_db, off_dz; /* per-thread scratch layout (floats) */
};

static enum xo_status dw_setup(const struct xo_cpu_ctx *c, const struct xo_params *p,
			       struct dw_job *j)
{
	struct xo_params q = xo_params_width_axis(p);
	enum xo_status st;

	memset(j, 0, sizeof(*j));
	st = xo_depthwise_conv2d_geometry(p, &j->oh, &j->ow, &j->pt, &j->pl);
	if (st)
		return st;
	j->c = c;
	j->batch = p->batch;
	j->h = p->len;
	j->w = p->width;
	j->ch = p->ch;
	j->dm = p->depth_multiplier;
	j->co = p->ch * p->depth_multiplier;
	j->kh = p->kernel_size;
	j->kw = q.kernel_size;
	j->sh = xo_conv1d_stride(p);
	j->sw = xo_conv1d_stride(&q);
	j->act = (int)p->activation;
	return XO_OK;
}

/* The in-bounds taps of output (oh, ow): rows [*i0, *i1), columns [*j0, *j1). */
static void dw_taps(const struct dw_job *j, int64_t oh, int64_t ow, int64_t *i0, int64_t *i1,
		    int64_t *j0, int64_t *j1)
{
	int64_t r = oh * j->sh - j->pt, s = ow * j->sw - j->pl;

	*i0 = r < 0 ? -r : 0;
	*i1 = j->h - r < j->kh ? j->h - r : j->kh;
	*j0 = s < 0 ? -s : 0;
	*j1 = j->w - s < j->kw ? j->w - s : j->kw;
}

/* yr[c*dm + m] += xr[c] * wr[c*dm + m] over the co outputs of a row. */
static void dw_row_fma(float *restrict yr, const float *restrict xr, const float *restrict wr,
		       int64_t ch, int64_t dm)
{
	if (dm == 1) {
		for (int64_t c = 0; c < ch; c++)
			yr[c] += xr[c] * wr[c];
		return;
	}
	for (int64_t c = 0; c < ch; c++)
		for (int64_t m = 0; m < dm; m++)
			yr[c * dm + m] += xr[c] * wr[c * dm + m];
}

static void dw_fwd_task(void *arg, int t, int nt)
{
	const struct dw_job *j = arg;
	const struct xo_cpu_kernels *k = j->c->k;
	int64_t lo = j->batch * t / nt, hi = j->batch * (t + 1) / nt, pix = j->oh * j->ow;

	for (int64_t n = lo; n < hi; n++) {
		float *ys = j->yo + n * pix * j->co;

		for (int64_t oh = 0; oh < j->oh; oh++)
			for (int64_t ow = 0; ow < j->ow; ow++) {
				float *yr = ys + (oh * j->ow + ow) * j->co;
				int64_t i0, i1, j0, j1;

				if (j->b)
					memcpy(yr, j->b, (size_t)j->co * sizeof(float));
				else
					memset(yr, 0, (size_t)j->co * sizeof(float));
				dw_taps(j, oh, ow, &i0, &i1, &j0, &j1);
				for (int64_t i = i0; i < i1; i++)
					for (int64_t q = j0; q < j1; q++) {
						int64_t r = oh * j->sh - j->pt + i;
						int64_t s = ow * j->sw - j->pl + q;

						dw_row_fma(yr, j->x + ((n * j->h + r) * j->w + s) * j->ch,
							   j->wgt + (i * j->kw + q) * j->co, j->ch, j->dm);
					}
			}
		if (j->act == XO_ACTIVATION_RELU)
			k->relu_fwd(ys, ys, pix * j->co);
		else if (j->act == XO_ACTIVATION_SIGMOID)
			k->sigmoid_fwd(ys, ys, pix * j->co);
		else if (j->act == XO_ACTIVATION_SOFTMAX)
			k->softmax_fwd(ys, ys, pix, j->co);
	}
}

static enum xo_status cpu_depthwise_conv2d_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *c = be->ctx;
	struct dw_job j;
	enum xo_status st = dw_setup(c, &a->p, &j);
	int64_t macs;

	if (st)
		return st;
	j.x = xo_tensor_f32(a->src[0]);
	j.wgt = xo_tensor_f32(a->src[1]);
	j.b = a->p.use_bias ? xo_tensor_f32(a->src[2]) : NULL;
	j.yo = xo_tensor_f32(a->dst[0]);
	/* a fused softmax costs about 20 multiply-adds per output (the exp) */
	macs = j.batch * j.oh * j.ow * j.co * (j.kh * j.kw + (j.act == XO_ACTIVATION_SOFTMAX ? 20 : 0));
	xo_cpu_threads_run(c->tp, xo_cpu_threads_for(c, macs, j.batch), dw_fwd_task, &j);
	return XO_OK;
}

/* dx row (as x's [ch]) += sum over m of dz row * w tap row; dw tap row +=
 * x row * dz row (each [co]). */
static void dw_row_bwd(const struct dw_job *j, const float *restrict dzr,
		       const float *restrict xr, const float *restrict wr, float *restrict dxr,
		       float *restrict dwr)
{
	if (j->dm == 1) { /* the common case: rows of ch, vectorised */
		for (int64_t c = 0; c < j->ch; c++)
			dwr[c] += xr[c] * dzr[c];
		if (dxr)
			for (int64_t c = 0; c < j->ch; c++)
				dxr[c] += dzr[c] * wr[c];
		return;
	}
	for (int64_t c = 0; c < j->ch; c++)
		for (int64_t m = 0; m < j->dm; m++)
			dwr[c * j->dm + m] += xr[c] * dzr[c * j->dm + m];
	if (!dxr)
		return;
	for (int64_t c = 0; c < j->ch; c++) {
		float s = dxr[c];

		for (int64_t m = 0; m < j->dm; m++)
			s += dzr[c * j->dm + m] * wr[c * j->dm + m];
		dxr[c] = s;
	}
}

static void dw_bwd_task(void *arg, int t, int nt)
{
	const struct dw_job *j = arg;
	float *scr = j->c->thr[t].p;
	float *dz = scr + j->off_dz, *dwp = scr + j->off_dw, *dbp = scr + j->off_db;
	int64_t lo = j->batch * t / nt, hi = j->batch * (t + 1) / nt, pix = j->oh * j->ow;

	memset(dwp, 0, (size_t)(j->kh * j->kw * j->co) * sizeof(float));
	memset(dbp, 0, (size_t)j->co * sizeof(float));
	for (int64_t n = lo; n < hi; n++) {
		const float *xs = j->x + n * j->h * j->w * j->ch;
		float *dxs = j->dx ? j->dx + n * j->h * j->w * j->ch : NULL;

		xo_cpu_act_dz(j->c->k, j->act, j->y + n * pix * j->co, j->dy + n * pix * j->co, dz,
			      pix, j->co, j->co);
		if (dxs)
			memset(dxs, 0, (size_t)(j->h * j->w * j->ch) * sizeof(float));
		for (int64_t e = 0; e < pix; e++) {
			int64_t oh = e / j->ow, ow = e % j->ow, i0, i1, j0, j1;
			const float *dzr = dz + e * j->co;

			for (int64_t o = 0; o < j->co; o++)
				dbp[o] += dzr[o];
			dw_taps(j, oh, ow, &i0, &i1, &j0, &j1);
			for (int64_t i = i0; i < i1; i++)
				for (int64_t q = j0; q < j1; q++) {
					int64_t at = (oh * j->sh - j->pt + i) * j->w + ow * j->sw - j->pl + q;
					int64_t tap = (i * j->kw + q) * j->co;

					dw_row_bwd(j, dzr, xs + at * j->ch, j->wgt + tap,
						   dxs ? dxs + at * j->ch : NULL, dwp + tap);
				}
		}
	}
}

static enum xo_status cpu_depthwise_conv2d_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *c = be->ctx;
	struct dw_job j;
	enum xo_status st = dw_setup(c, &a->p, &j);
	int64_t taps;
	int nt;

	if (st)
		return st;
	j.x = xo_tensor_f32(a->src[0]);
	j.wgt = xo_tensor_f32(a->src[1]);
	j.y = xo_tensor_f32(a->src[2]);
	j.dy = xo_tensor_f32(a->src[3]);
	j.dx = a->dst[0] ? xo_tensor_f32(a->dst[0]) : NULL;
	j.dwo = xo_tensor_f32(a->dst[1]);
	j.db = a->p.use_bias && a->dst[2] ? xo_tensor_f32(a->dst[2]) : NULL;
	taps = j.kh * j.kw;
	nt = xo_cpu_threads_for(c, j.batch * j.oh * j.ow * j.co * taps * (j.dx ? 2 : 1), j.batch);
	/* per thread: [dw taps*co][db co][dz oh*ow*co] */
	j.off_dw = 0;
	j.off_db = taps * j.co;
	j.off_dz = j.off_db + j.co;
	st = xo_cpu_scratch_reserve(c, 0, j.off_dz + j.oh * j.ow * j.co, nt);
	if (st)
		return st;
	xo_cpu_threads_run(c->tp, nt, dw_bwd_task, &j);
	xo_cpu_parts_sum(c, nt, j.off_dw, taps, j.co, j.co, j.dwo);
	if (j.db)
		xo_cpu_parts_sum(c, nt, j.off_db, 1, j.co, j.co, j.db);
	return XO_OK;
}

XO_CPU_ENTRY(depthwise_conv2d, fwd, cpu_depthwise_conv2d_fwd)
XO_CPU_ENTRY(depthwise_conv2d, bwd, cpu_depthwise_conv2d_bwd)
