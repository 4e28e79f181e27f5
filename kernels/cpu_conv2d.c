/*
 * cpu_conv2d.c - backend "cpu": conv2d forward and backward (ops.def), the
 * conv1d scheme of cpu.c on two axes. Not ISA-specific itself: the GEMMs are
 * the chosen level's micro-kernels (c->k->gemm_nn, gemm_tn), so this file is
 * built once.
 *
 *   fwd  im2col of a few samples at a time (~64k floats of columns per
 *        thread: rows (oh, ow), columns (i, j, c), the Keras kernel's
 *        [kh][kw][ch] order) then gemm_nn against the kernel packed to
 *        [kh*kw*ch][fp] with bias and relu/sigmoid fused; softmax after. A
 *        1x1 kernel with stride 1 reads x in place (no copy).
 *   bwd  dz = d act(y) * dy (xo_cpu_act_dz) per thread's samples, db as
 *        column sums, dw by gemm_tn of the im2col columns against dz, dx by
 *        gemm_nn of dz against the packed transposed kernel into columns,
 *        then col2im (adds each column's taps into dx); dw and db are summed
 *        over threads in thread order (xo_cpu_parts_sum).
 * Threads split the batch (xo_cpu_threads_for). Sums of products only: on
 * integer fills every order is exact, so the comparison class is exact.
 */
#include <string.h>

#include "cpu.h"
#include "cpu_conv2d.h"

/* Floats of im2col / dx-column scratch per thread and sub-batch (cpu.c's). */
#define C2D_SUB_FLOATS 65536
/* Runs of taps (kw * ch floats) shorter than this: dw by c2d->direct_tn. */
#define C2D_TN_RUN 16

static inline int64_t round_up(int64_t v, int64_t m)
{
	return (v + m - 1) / m * m;
}

static inline int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* One conv2d call, described once for the task functions. */
struct c2d_job {
	const struct xo_cpu_ctx *c;
	const struct xo_cpu_kernels *k;
	int64_t batch, h, w, ch, f;  /* input rows, columns, channels; filters */
	int64_t kh, kw, sh, sw, dh, dw; /* kernel, strides, dilations per axis */
	int64_t oh, ow, pt, pl;      /* output rows, columns; padding above, left */
	int64_t pix;                 /* oh * ow: output rows of one sample */
	int64_t kc, fp, kcp;         /* kh * kw * ch; padded filters; padded kc */
	int64_t sub;                 /* samples per column sub-batch */
	bool in_place;               /* 1x1 kernel, stride 1: x rows are the columns */
	bool direct;                 /* fwd reads the windows in place (c2d->direct) */
	bool direct_tn;              /* so does bwd's dw (c2d->direct_tn): short runs */
	const struct xo_cpu_c2d_kernels *c2d; /* the ISA level's 2-D kernels */
	int act;
	const float *x, *wgt, *b, *y, *dy;
	float *yo, *dx, *dwo, *db;
	const float *bp, *biasp, *wt; /* packed kernel [kc][fp], bias [fp], kernel^T [f][kcp] */
	int64_t off_col, off_dz, off_dw, off_db; /* per-thread scratch layout (floats) */
};

const struct xo_cpu_c2d_kernels *xo_cpu_c2d_kernels_for(const struct xo_cpu_ctx *c)
{
	switch (c->isa) {
	case XO_CPU_ISA_AVX512:
		return &xo_cpu_c2d_kernels__avx512;
	case XO_CPU_ISA_AVX2:
		return &xo_cpu_c2d_kernels__avx2;
	default:
		return &xo_cpu_c2d_kernels__scalar;
	}
}

static enum xo_status c2d_setup(const struct xo_cpu_ctx *c, const struct xo_params *p,
				struct c2d_job *j)
{
	struct xo_params q = xo_params_width_axis(p);
	enum xo_status st;

	memset(j, 0, sizeof(*j));
	st = xo_conv2d_geometry(p, &j->oh, &j->ow, &j->pt, &j->pl);
	if (st)
		return st;
	j->c = c;
	j->k = c->k;
	j->batch = p->batch;
	j->h = p->len;
	j->w = p->width;
	j->ch = p->ch;
	j->f = p->filters;
	j->kh = p->kernel_size;
	j->kw = q.kernel_size;
	j->sh = xo_conv1d_stride(p);
	j->sw = xo_conv1d_stride(&q);
	j->dh = p->dilation_rate;
	j->dw = q.dilation_rate;
	j->act = (int)p->activation;
	j->pix = j->oh * j->ow;
	j->kc = j->kh * j->kw * j->ch;
	j->fp = round_up(j->f, c->k->vw);
	j->kcp = round_up(j->kc, c->k->vw);
	/* a 1x1 kernel has no padding under either rule (its span is 1) */
	j->in_place = j->kh == 1 && j->kw == 1 && j->sh == 1 && j->sw == 1;
	/* every window inside the input (valid padding, or a "same" one that
	 * pads nothing) with its kernel-row taps contiguous: no im2col copy */
	j->direct = !j->in_place && j->pt == 0 && j->pl == 0 &&
		    (j->oh - 1) * j->sh + (j->kh - 1) * j->dh < j->h &&
		    (j->ow - 1) * j->sw + (j->kw - 1) * j->dw < j->w && (j->dw == 1 || j->kw == 1);
	/* dw from the windows in place only where a kernel row's run of taps
	 * is short (im2col's copies cost most there: 3 floats a run for 3x3
	 * over one channel, dw 2.3x faster at batch 512); for longer runs
	 * im2col + gemm_tn was faster (cnn2d's second conv, 48-float runs:
	 * 3.26-3.33 ms vs 3.55-3.62 ms, one thread, CPU time) */
	j->direct_tn = j->direct && j->kw * j->ch < C2D_TN_RUN;
	j->c2d = xo_cpu_c2d_kernels_for(c);
	j->sub = C2D_SUB_FLOATS / (j->pix * j->kcp);
	if (j->sub < 1)
		j->sub = 1;
	return XO_OK;
}

/* 4 floats as one GCC vector, unaligned (an SSE register at the baseline
 * ISA) */
typedef float c2d_v4 __attribute__((vector_size(16), aligned(4), may_alias));

/* GCC only (clang has no such optimize attribute and no such pass) */
#if defined(__GNUC__) && !defined(__clang__)
#define C2D_NO_MEMCPY_IDIOM __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define C2D_NO_MEMCPY_IDIOM
#endif

/* d[0, n) = s[0, n): the short runs of im2col (n = kw * ch floats, 3 for a
 * 3x3 kernel over one channel) copied inline; a libc memcpy call per run
 * cost more than the copy (perf: __memmove was ~8% of cnn2d's cpu time).
 * im2col is compiled without GCC's loop-distribute-patterns, which would
 * turn these loops back into memmove calls. */
static inline void copy_run(float *restrict d, const float *restrict s, int64_t n)
{
	int64_t q = 0;

	for (; q + 4 <= n; q += 4)
		*(c2d_v4 *)(d + q) = *(const c2d_v4 *)(s + q);
	if (q + 2 <= n) {
		d[q] = s[q];
		d[q + 1] = s[q + 1];
		q += 2;
	}
	if (q < n)
		d[q] = s[q];
}

/*
 * col [cnt * pix][kc] from samples [n0, n0 + cnt): row (oh, ow) of a sample,
 * column block (i, j) holds the ch floats of x[oh*sh + i*dh - pt][ow*sw +
 * j*dw - pl], zeros where that is outside the input.
 */
static void C2D_NO_MEMCPY_IDIOM
c2d_im2col(const struct c2d_job *j, int64_t n0, int64_t cnt, float *col)
{
	size_t run = (size_t)j->ch * sizeof(float);

	for (int64_t n = 0; n < cnt; n++) {
		const float *xs = j->x + (n0 + n) * j->h * j->w * j->ch;

		for (int64_t oh = 0; oh < j->oh; oh++)
			for (int64_t ow = 0; ow < j->ow; ow++) {
				float *row = col + ((n * j->oh + oh) * j->ow + ow) * j->kc;
				int64_t s0 = ow * j->sw - j->pl;

				for (int64_t i = 0; i < j->kh; i++) {
					int64_t r = oh * j->sh + i * j->dh - j->pt;
					float *blk = row + i * j->kw * j->ch;

					if (r < 0 || r >= j->h) {
						memset(blk, 0, run * (size_t)j->kw);
						continue;
					}
					if (j->dw == 1 && s0 >= 0 && s0 + j->kw <= j->w) {
						/* the row's taps are one contiguous run of x */
						copy_run(blk, xs + (r * j->w + s0) * j->ch,
							 j->kw * j->ch);
						continue;
					}
					for (int64_t t = 0; t < j->kw; t++) {
						int64_t s = ow * j->sw + t * j->dw - j->pl;

						if (s >= 0 && s < j->w)
							copy_run(blk + t * j->ch,
								 xs + (r * j->w + s) * j->ch, j->ch);
						else
							memset(blk + t * j->ch, 0, run);
					}
				}
			}
	}
}

/* Adds the columns g [cnt * pix][kc] of samples [n0, n0 + cnt) into dx
 * (zeroed first): the inverse scatter of c2d_im2col. */
static void c2d_col2im(const struct c2d_job *j, int64_t n0, int64_t cnt, const float *g)
{
	for (int64_t n = 0; n < cnt; n++) {
		float *dxs = j->dx + (n0 + n) * j->h * j->w * j->ch;

		memset(dxs, 0, (size_t)(j->h * j->w * j->ch) * sizeof(float));
		for (int64_t oh = 0; oh < j->oh; oh++)
			for (int64_t ow = 0; ow < j->ow; ow++) {
				const float *row = g + ((n * j->oh + oh) * j->ow + ow) * j->kc;
				int64_t s0 = ow * j->sw - j->pl;

				for (int64_t i = 0; i < j->kh; i++) {
					int64_t r = oh * j->sh + i * j->dh - j->pt;

					if (r < 0 || r >= j->h)
						continue;
					if (j->dw == 1 && s0 >= 0 && s0 + j->kw <= j->w) {
						/* the row's taps are one contiguous run of dx */
						j->k->add(dxs + (r * j->w + s0) * j->ch,
							  row + i * j->kw * j->ch, j->kw * j->ch);
						continue;
					}
					for (int64_t t = 0; t < j->kw; t++) {
						int64_t s = ow * j->sw + t * j->dw - j->pl;

						if (s >= 0 && s < j->w)
							j->k->add(dxs + (r * j->w + s) * j->ch,
								  row + (i * j->kw + t) * j->ch,
								  j->ch);
					}
				}
			}
	}
}

/* The direct kernels' view of samples [n0, n0 + cnt) (fwd: y, w, bias set
 * by the caller). */
static struct xo_cpu_c2d_direct c2d_direct_args(const struct c2d_job *j, int64_t n0, int64_t cnt)
{
	return (struct xo_cpu_c2d_direct){
	    .x = j->x + n0 * j->h * j->w * j->ch, .x_stride = j->h * j->w * j->ch,
	    .samples = cnt, .oh = j->oh, .ow = j->ow,
	    .row_step = j->sh * j->w * j->ch, .col_step = j->sw * j->ch,
	    .seg_step = j->dh * j->w * j->ch, .kh = j->kh, .seg = j->kw * j->ch,
	};
}

static void c2d_fwd_task(void *arg, int t, int nt)
{
	const struct c2d_job *j = arg;
	struct xo_cpu_gemm g = {
	    .k = j->kc, .n = j->f, .np = j->fp, .b = j->bp, .bias = j->biasp, .ldc = j->f,
	    .act = j->act == XO_ACTIVATION_SOFTMAX ? XO_ACTIVATION_LINEAR : j->act,
	};
	int64_t lo = j->batch * t / nt, hi = j->batch * (t + 1) / nt;

	if (hi <= lo)
		return;
	if (j->in_place) {
		g.a = (struct xo_cpu_rows){j->x + lo * j->pix * j->ch, j->ch, (hi - lo) * j->pix, 0};
		g.m = (hi - lo) * j->pix;
		g.c = j->yo + lo * j->pix * j->f;
		j->k->gemm_nn(&g);
		if (j->act == XO_ACTIVATION_SOFTMAX)
			j->k->softmax_fwd(g.c, g.c, g.m, j->f);
		return;
	}
	if (j->direct) {
		struct xo_cpu_c2d_direct d = c2d_direct_args(j, lo, hi - lo);

		d.w = j->bp;
		d.bias = j->biasp;
		d.f = j->f;
		d.fp = j->fp;
		d.act = g.act == XO_ACTIVATION_RELU ? XO_ACTIVATION_RELU : XO_ACTIVATION_LINEAR;
		d.y = j->yo + lo * j->pix * j->f;

		j->c2d->direct(&d);
		/* a sigmoid through the same vector sigmoid as gemm_nn's epilogue */
		if (g.act == XO_ACTIVATION_SIGMOID)
			j->k->sigmoid_fwd(d.y, d.y, (hi - lo) * j->pix * j->f);
		if (j->act == XO_ACTIVATION_SOFTMAX)
			j->k->softmax_fwd(d.y, d.y, (hi - lo) * j->pix, j->f);
		return;
	}
	for (int64_t n0 = lo; n0 < hi; n0 += j->sub) {
		int64_t cnt = min64(j->sub, hi - n0);
		float *col = j->c->thr[t].p + j->off_col;

		c2d_im2col(j, n0, cnt, col);
		g.a = (struct xo_cpu_rows){col, j->kc, cnt * j->pix, 0};
		g.m = cnt * j->pix;
		g.c = j->yo + n0 * j->pix * j->f;
		j->k->gemm_nn(&g);
		if (j->act == XO_ACTIVATION_SOFTMAX)
			j->k->softmax_fwd(g.c, g.c, g.m, j->f);
	}
}

static enum xo_status cpu_conv2d_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *c = be->ctx;
	struct c2d_job j;
	enum xo_status st;
	int64_t m;
	int nt;

	st = c2d_setup(c, &a->p, &j);
	if (st)
		return st;
	j.x = xo_tensor_f32(a->src[0]);
	j.wgt = xo_tensor_f32(a->src[1]);
	j.b = a->p.use_bias ? xo_tensor_f32(a->src[2]) : NULL;
	j.yo = xo_tensor_f32(a->dst[0]);
	m = j.batch * j.pix;
	/* a fused softmax costs about 20 multiply-adds per output (the exp) */
	nt = xo_cpu_threads_for(
	    c, m * j.kc * j.f + (j.act == XO_ACTIVATION_SOFTMAX ? m * j.f * 20 : 0), j.batch);
	j.off_col = 0;
	st = xo_cpu_scratch_reserve(c, j.kc * j.fp + j.fp,
				    j.in_place || j.direct ? 0 : j.sub * j.pix * j.kc, nt);
	if (st)
		return st;
	if (j.fp == j.f) {
		/* filters a multiple of the vector width: w and b are already the
		 * packed layout */
		j.bp = j.wgt;
		j.biasp = j.b;
	} else {
		xo_cpu_pack(j.wgt, j.b, j.kc, j.f, j.fp, c->shared.p, c->shared.p + j.kc * j.fp);
		j.bp = c->shared.p;
		j.biasp = j.b ? c->shared.p + j.kc * j.fp : NULL;
	}
	xo_cpu_threads_run(c->tp, nt, c2d_fwd_task, &j);
	return XO_OK;
}

/*
 * A part's samples in sub-batches of j->sub: d(activation) of the
 * sub-batch's rows into dz (a few hundred KB at most, so colsum, the dw
 * GEMM and the dx GEMM read it from cache), db by colsum, dw by gemm_tn over
 * the im2col columns (or the windows read in place: c2d->direct_tn, the
 * same bits), dx by gemm_nn against the transposed kernel into columns and
 * col2im (or straight into dx for a 1x1 stride-1 kernel).
 */
static void c2d_bwd_task(void *arg, int t, int nt)
{
	const struct c2d_job *j = arg;
	float *scr = j->c->thr[t].p;
	float *dz = scr + j->off_dz, *dwp = scr + j->off_dw, *dbp = scr + j->off_db;
	float *col = scr + j->off_col;
	int64_t lo = j->batch * t / nt, hi = j->batch * (t + 1) / nt;

	memset(dwp, 0, (size_t)(j->kc * j->fp) * sizeof(float));
	memset(dbp, 0, (size_t)j->fp * sizeof(float));
	for (int64_t n0 = lo; n0 < hi; n0 += j->sub) {
		int64_t cnt = min64(j->sub, hi - n0), rows = cnt * j->pix;
		struct xo_cpu_gemm_tn g = {
		    .a = {col, j->kc, rows, 0}, .m = rows, .k = j->kc, .np = j->fp,
		    .z = dz, .d = dwp,
		};

		xo_cpu_act_dz(j->k, j->act, j->y + n0 * j->pix * j->f, j->dy + n0 * j->pix * j->f,
			      dz, rows, j->f, j->fp);
		if (j->db)
			j->k->colsum(dz, rows, j->fp, dbp);
		if (j->direct_tn) {
			struct xo_cpu_c2d_direct_tn d = {
			    .a = c2d_direct_args(j, n0, cnt), .z = dz, .np = j->fp, .d = dwp,
			};

			j->c2d->direct_tn(&d);
		} else {
			if (j->in_place)
				g.a = (struct xo_cpu_rows){j->x + n0 * j->pix * j->ch, j->ch, rows, 0};
			else
				c2d_im2col(j, n0, cnt, col);
			j->k->gemm_tn(&g);
		}
		if (!j->dx)
			continue;
		{
			/* the columns are dx itself for a 1x1 stride-1 kernel */
			struct xo_cpu_gemm gd = {
			    .a = {dz, j->fp, rows, 0}, .m = rows, .k = j->f, .n = j->kc,
			    .np = j->kcp, .b = j->wt,
			    .c = j->in_place ? j->dx + n0 * j->pix * j->ch : col, .ldc = j->kc,
			    .act = XO_ACTIVATION_LINEAR,
			};

			j->k->gemm_nn(&gd);
			if (!j->in_place)
				c2d_col2im(j, n0, cnt, col);
		}
	}
}

static enum xo_status cpu_conv2d_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *c = be->ctx;
	struct c2d_job j;
	enum xo_status st;
	int64_t m, per;
	int nt;

	st = c2d_setup(c, &a->p, &j);
	if (st)
		return st;
	j.x = xo_tensor_f32(a->src[0]);
	j.wgt = xo_tensor_f32(a->src[1]);
	j.y = xo_tensor_f32(a->src[2]);
	j.dy = xo_tensor_f32(a->src[3]);
	j.dx = a->dst[0] ? xo_tensor_f32(a->dst[0]) : NULL;
	j.dwo = xo_tensor_f32(a->dst[1]);
	j.db = a->p.use_bias && a->dst[2] ? xo_tensor_f32(a->dst[2]) : NULL;
	m = j.batch * j.pix;
	nt = xo_cpu_threads_for(c, m * j.kc * j.f * (j.dx ? 2 : 1), j.batch);
	/* per thread: [dw kc*fp][db fp][dz sub*pix*fp][col sub*pix*kcp] (no
	 * columns when the windows are read in place and no dx is wanted) */
	j.off_dw = 0;
	j.off_db = j.kc * j.fp;
	j.off_dz = j.off_db + j.fp;
	j.off_col = round_up(j.off_dz + j.sub * j.pix * j.fp, 16);
	per = j.off_col + (j.in_place || (j.direct_tn && !j.dx) ? 0 : j.sub * j.pix * j.kcp);
	st = xo_cpu_scratch_reserve(c, j.dx ? j.f * j.kcp : 0, per, nt);
	if (st)
		return st;
	if (j.dx) {
		xo_cpu_pack_t(j.wgt, j.kc, j.f, j.kcp, c->shared.p);
		j.wt = c->shared.p;
	}
	xo_cpu_threads_run(c->tp, nt, c2d_bwd_task, &j);
	xo_cpu_parts_sum(c, nt, j.off_dw, j.kc, j.f, j.fp, j.dwo);
	if (j.db)
		xo_cpu_parts_sum(c, nt, j.off_db, 1, j.f, j.fp, j.db);
	return XO_OK;
}

XO_CPU_ENTRY(conv2d, fwd, cpu_conv2d_fwd)
XO_CPU_ENTRY(conv2d, bwd, cpu_conv2d_bwd)
