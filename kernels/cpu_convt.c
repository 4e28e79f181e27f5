/*
 * cpu_convt.c - backend "cpu": conv2d_transpose forward and backward
 * (ops.def). A transposed convolution is conv2d's input gradient used
 * forward, so the scheme is conv2d's dx path (cpu_conv2d.c) around the
 * chosen ISA's GEMMs (c->k->gemm_nn, gemm_tn); not ISA-specific itself.
 * With K = kh*kw*filters and Kp it rounded up to the vector width:
 *
 *   fwd  per sample: columns [h*w][Kp] = x [h*w][ch] times the kernel
 *        packed transposed to [ch][Kp] (gemm_nn), then col2im: y starts
 *        from the bias and each input position adds its taps' filter rows
 *        where they land; relu/sigmoid over the sample after, softmax per
 *        row.
 *   bwd  per sample: dz = d act(y) * dy (xo_cpu_act_dz); db += dz's column
 *        sums; im2col of dz: row (r, s) holds, per tap (i, j), dz's row at
 *        the output the tap lands on (zero where it lands outside y); dx =
 *        those rows times the kernel packed [K][cp] (gemm_nn); dw [K][cp] +=
 *        the rows^T times x padded to cp (gemm_tn). dw and db are per-thread
 *        parts summed in thread order (xo_cpu_parts_sum).
 * Threads split the batch (xo_cpu_threads_for). The im2col rows cost
 * h*w*K floats of scratch per thread (and its zeros cost GEMM work where
 * taps land outside y). Sums of products only: on integer fills every order
 * is exact, so the comparison class is exact.
 */
#include <string.h>

#include "cpu.h"

static inline int64_t round_up(int64_t v, int64_t m)
{
	return (v + m - 1) / m * m;
}

/* One conv2d_transpose call, described once for the task functions. */
struct ct_job {
	const struct xo_cpu_ctx *c;
	int64_t batch, h, w, ch, f; /* rows, columns, channels, filters */
	int64_t kh, kw, sh, sw;     /* kernel, strides */
	int64_t oh, ow, pt, pl;     /* output rows, columns; offsets above, left */
	int64_t kk, kp, cp;         /* K = kh*kw*f, K and ch rounded up to vw */
	int act;
	const float *x, *wgt, *b, *y, *dy;
	const float *wp; /* packed kernel: fwd [ch][kp], bwd [K][cp] (shared) */
	float *yo, *dx, *dwo, *db;
	int64_t off_dw, off_db, off_dz, off_col, off_xp; /* per-thread scratch (floats) */
};

static enum xo_status ct_setup(const struct xo_cpu_ctx *c, const struct xo_params *p,
			       struct ct_job *j)
{
	struct xo_params q = xo_params_width_axis(p);
	enum xo_status st;

	memset(j, 0, sizeof(*j));
	st = xo_conv2d_transpose_geometry(p, &j->oh, &j->ow, &j->pt, &j->pl);
	if (st)
		return st;
	j->c = c;
	j->batch = p->batch;
	j->h = p->len;
	j->w = p->width;
	j->ch = p->ch;
	j->f = p->filters;
	j->kh = p->kernel_size;
	j->kw = q.kernel_size;
	j->sh = xo_conv1d_stride(p);
	j->sw = xo_conv1d_stride(&q);
	j->kk = j->kh * j->kw * j->f;
	j->kp = round_up(j->kk, c->k->vw);
	j->cp = round_up(j->ch, c->k->vw);
	j->act = (int)p->activation;
	return XO_OK;
}

/* The output index input position l's tap k lands on, or -1 outside [0, out). */
static inline int64_t ct_lands(int64_t l, int64_t k, int64_t stride, int64_t pad, int64_t out)
{
	int64_t o = l * stride + k - pad;

	return o >= 0 && o < out ? o : -1;
}

static void ct_fwd_task(void *arg, int t, int nt)
{
	const struct ct_job *j = arg;
	const struct xo_cpu_kernels *k = j->c->k;
	float *col = j->c->thr[t].p;
	int64_t lo = j->batch * t / nt, hi = j->batch * (t + 1) / nt, pix = j->oh * j->ow;
	int64_t hw = j->h * j->w;

	for (int64_t n = lo; n < hi; n++) {
		float *ys = j->yo + n * pix * j->f;
		struct xo_cpu_gemm g = {
		    .a = {j->x + n * hw * j->ch, j->ch, hw, 0},
		    .m = hw, .k = j->ch, .n = j->kk, .np = j->kp,
		    .b = j->wp, .bias = NULL, .c = col, .ldc = j->kp,
		    .act = XO_ACTIVATION_LINEAR,
		};

		k->gemm_nn(&g);
		for (int64_t e = 0; e < pix; e++) {
			if (j->b)
				memcpy(ys + e * j->f, j->b, (size_t)j->f * sizeof(float));
			else
				memset(ys + e * j->f, 0, (size_t)j->f * sizeof(float));
		}
		for (int64_t r = 0; r < j->h; r++)
			for (int64_t s = 0; s < j->w; s++)
				for (int64_t i = 0; i < j->kh; i++) {
					int64_t oh = ct_lands(r, i, j->sh, j->pt, j->oh);

					if (oh < 0)
						continue;
					for (int64_t q = 0; q < j->kw; q++) {
						int64_t ow = ct_lands(s, q, j->sw, j->pl, j->ow);

						if (ow < 0)
							continue;
						k->add(ys + (oh * j->ow + ow) * j->f,
						       col + (r * j->w + s) * j->kp + (i * j->kw + q) * j->f,
						       j->f);
					}
				}
		if (j->act == XO_ACTIVATION_RELU)
			k->relu_fwd(ys, ys, pix * j->f);
		else if (j->act == XO_ACTIVATION_SIGMOID)
			k->sigmoid_fwd(ys, ys, pix * j->f);
		else if (j->act == XO_ACTIVATION_SOFTMAX)
			k->softmax_fwd(ys, ys, pix, j->f);
	}
}

static enum xo_status cpu_conv2d_transpose_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *c = be->ctx;
	struct ct_job j;
	enum xo_status st = ct_setup(c, &a->p, &j);
	int nt;

	if (st)
		return st;
	j.x = xo_tensor_f32(a->src[0]);
	j.wgt = xo_tensor_f32(a->src[1]);
	j.b = a->p.use_bias ? xo_tensor_f32(a->src[2]) : NULL;
	j.yo = xo_tensor_f32(a->dst[0]);
	nt = xo_cpu_threads_for(c, j.batch * j.h * j.w * j.ch * j.kk, j.batch);
	st = xo_cpu_scratch_reserve(c, j.ch * j.kp, j.h * j.w * j.kp, nt);
	if (st)
		return st;
	/* the kernel as [K][ch], transposed to [ch][kp] */
	xo_cpu_pack_t(j.wgt, j.kk, j.ch, j.kp, c->shared.p);
	j.wp = c->shared.p;
	xo_cpu_threads_run(c->tp, nt, ct_fwd_task, &j);
	return XO_OK;
}

/* im2col of dz: col[(r, s)][(i, j, f)] = dz at the output tap (i, j) of
 * input position (r, s) lands on, or zero. */
static void ct_dz_cols(const struct ct_job *j, const float *dz, float *col)
{
	for (int64_t r = 0; r < j->h; r++)
		for (int64_t s = 0; s < j->w; s++)
			for (int64_t i = 0; i < j->kh; i++) {
				int64_t oh = ct_lands(r, i, j->sh, j->pt, j->oh);

				for (int64_t q = 0; q < j->kw; q++) {
					int64_t ow = ct_lands(s, q, j->sw, j->pl, j->ow);
					float *d = col + (r * j->w + s) * j->kk + (i * j->kw + q) * j->f;

					if (oh < 0 || ow < 0)
						memset(d, 0, (size_t)j->f * sizeof(float));
					else
						memcpy(d, dz + (oh * j->ow + ow) * j->f,
						       (size_t)j->f * sizeof(float));
				}
			}
}

static void ct_bwd_task(void *arg, int t, int nt)
{
	const struct ct_job *j = arg;
	const struct xo_cpu_kernels *k = j->c->k;
	float *scr = j->c->thr[t].p;
	float *dz = scr + j->off_dz, *col = scr + j->off_col, *xp = scr + j->off_xp;
	float *dwp = scr + j->off_dw, *dbp = scr + j->off_db;
	int64_t lo = j->batch * t / nt, hi = j->batch * (t + 1) / nt, pix = j->oh * j->ow;
	int64_t hw = j->h * j->w;

	memset(dwp, 0, (size_t)(j->kk * j->cp) * sizeof(float));
	memset(dbp, 0, (size_t)j->f * sizeof(float));
	memset(xp, 0, (size_t)(hw * j->cp) * sizeof(float));
	for (int64_t n = lo; n < hi; n++) {
		const float *xs = j->x + n * hw * j->ch;

		xo_cpu_act_dz(k, j->act, j->y + n * pix * j->f, j->dy + n * pix * j->f, dz, pix,
			      j->f, j->f);
		for (int64_t e = 0; e < pix; e++)
			k->add(dbp, dz + e * j->f, j->f);
		ct_dz_cols(j, dz, col);
		if (j->dx) {
			struct xo_cpu_gemm g = {
			    .a = {col, j->kk, hw, 0},
			    .m = hw, .k = j->kk, .n = j->ch, .np = j->cp,
			    .b = j->wp, .bias = NULL, .c = j->dx + n * hw * j->ch, .ldc = j->ch,
			    .act = XO_ACTIVATION_LINEAR,
			};

			k->gemm_nn(&g);
		}
		for (int64_t e = 0; e < hw; e++)
			memcpy(xp + e * j->cp, xs + e * j->ch, (size_t)j->ch * sizeof(float));
		k->gemm_tn(&(struct xo_cpu_gemm_tn){
		    .a = {col, j->kk, hw, 0}, .m = hw, .k = j->kk, .np = j->cp, .z = xp, .d = dwp});
	}
}

static enum xo_status cpu_conv2d_transpose_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *c = be->ctx;
	struct ct_job j;
	enum xo_status st = ct_setup(c, &a->p, &j);
	int64_t hw;
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
	hw = j.h * j.w;
	nt = xo_cpu_threads_for(c, j.batch * hw * j.ch * j.kk * (j.dx ? 2 : 1), j.batch);
	/* per thread: [dw K*cp][db f][dz oh*ow*f][col h*w*K][x h*w*cp] */
	j.off_dw = 0;
	j.off_db = j.kk * j.cp;
	j.off_dz = j.off_db + j.f;
	j.off_col = round_up(j.off_dz + j.oh * j.ow * j.f, 16);
	j.off_xp = round_up(j.off_col + hw * j.kk, 16);
	st = xo_cpu_scratch_reserve(c, j.dx ? j.kk * j.cp : 0, j.off_xp + hw * j.cp, nt);
	if (st)
		return st;
	if (j.dx) {
		xo_cpu_pack(j.wgt, NULL, j.kk, j.ch, j.cp, c->shared.p, NULL);
		j.wp = c->shared.p;
	}
	xo_cpu_threads_run(c->tp, nt, ct_bwd_task, &j);
	xo_cpu_parts_sum(c, nt, j.off_dw, j.kk, j.ch, j.cp, j.dwo);
	if (j.db)
		xo_cpu_parts_sum(c, nt, j.off_db, 1, j.f, j.f, j.db);
	return XO_OK;
}

XO_CPU_ENTRY(conv2d_transpose, fwd, cpu_conv2d_transpose_fwd)
XO_CPU_ENTRY(conv2d_transpose, bwd, cpu_conv2d_transpose_bwd)
