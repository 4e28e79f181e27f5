/*
 * cpu.c - backend "cpu": init (ISA level, thread pool, BLAS report), 64-byte
 * aligned host tensors, the helpers every family's file shares, and the op
 * wrappers of conv1d, dense, max_pooling1d, the activations, dropout, flatten,
 * crossentropy, adam, accuracy and gather (the table: cpu_backend.c). A
 * wrapper sizes the grow-only scratch of the context, packs weights, splits
 * the batch over the pool's threads (small work stays on the calling thread)
 * and calls the ISA level's micro-kernels (cpu_kernels.inc) chosen once at
 * init.
 *
 * Which kernel serves which shape:
 *   conv1d / dense fwd   gemm_nn with bias and relu/sigmoid fused; valid,
 *                        dilation-1 convolutions read the input windows in place
 *                        (implicit im2col), others go through an im2col copy of
 *                        up to ~64k floats at a time; softmax after the GEMM.
 *   conv2d               the same scheme on two axes, in cpu_conv2d.c.
 *   conv1d / dense bwd   d(activation) into a padded dz, db as column sums,
 *                        dw by gemm_tn per thread then summed over threads,
 *                        dx by gemm_nn against the packed transposed kernel
 *                        (straight into dx for dense, col2im for conv1d).
 *   large dense          cblas_sgemm (single-threaded inside each of our threads)
 *                        when m, n, k are all >= XO_CPU_BLAS_MIN.
 *   pooling, relu, sigmoid, softmax, dropout  vector kernels, threads over rows;
 *                        average and global pooling in cpu_pool.c.
 *   crossentropy, adam, accuracy, gather      scalar loops (O(batch * classes)).
 */
#include <cblas.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu.h"

/* OpenBLAS's pthread build starts its server threads when the library loads
 * (one per core) and leaves each spinning on sched_yield for ~2^28 TSC ticks
 * (OPENBLAS_THREAD_TIMEOUT's default: ~0.1 s here) after start and after
 * every threaded call before it sleeps. With one BLAS thread (below) no call
 * ever wakes them again, but the first spin takes a core from our own worker
 * for the first ~0.1 s of every process (`xo predict` of the lstm
 * model at batch 32 lasts ~0.1 s, so its worker ran 9% of the chunks). This
 * stops them; OpenBLAS restarts them by itself if a threaded call ever comes.
 * Weak: other BLAS builds (serial, OpenMP) have no such symbol. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

/* GEMM dimensions from which OpenBLAS beats the register-tile kernels. */
#define XO_CPU_BLAS_MIN 256
/* Floats of im2col / dx-column scratch per thread and sub-batch. */
#define XO_CPU_SUB_FLOATS 65536
/* Floats of dz per step of the backward pass's dz -> db, dw loop (L1-sized). */
#define XO_CPU_DZ_FLOATS 4096


static inline struct xo_cpu_ctx *ctx_of(struct xo_backend *be)
{
	return be->ctx;
}

static inline int64_t round_up(int64_t v, int64_t m)
{
	return (v + m - 1) / m * m;
}

static inline int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* ---- ISA level and BLAS ----------------------------------------------------------- */

static const char *const isa_names[] = {"scalar", "avx2", "avx512"};

/* The level named e (isa_names), -1 for none. */
static int isa_parse(const char *e)
{
	for (int i = 0; i < XO_CPU_ISA_COUNT; i++)
		if (!strcmp(e, isa_names[i]))
			return i;
	return -1;
}

static enum xo_cpu_isa isa_supported(void)
{
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("fma"))
		return XO_CPU_ISA_AVX512;
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return XO_CPU_ISA_AVX2;
	return XO_CPU_ISA_SCALAR;
}

enum xo_cpu_isa xo_cpu_isa_detect(void)
{
	enum xo_cpu_isa best = isa_supported();
	const char *e = getenv("XO_CPU_ISA");

	int i = e && *e ? isa_parse(e) : -1;

	if (i >= 0 && i <= (int)best)
		return (enum xo_cpu_isa)i;
	return best;
}

const struct xo_cpu_kernels *xo_cpu_kernels_for(enum xo_cpu_isa isa)
{
	switch (isa) {
	case XO_CPU_ISA_AVX512:
		return &xo_cpu_kernels__avx512;
	case XO_CPU_ISA_AVX2:
		return &xo_cpu_kernels__avx2;
	default:
		return &xo_cpu_kernels__scalar;
	}
}

/* OpenBLAS core types whose sgemm kernels use AVX2+FMA or better; anything
 * else (Prescott, Nehalem, Sandybridge, ...) on an AVX2 CPU is a 4-5x slower
 * sgemm, the misdetection of Debian's 0.3.21 on new Xeon/EPYC parts. */
static bool blas_core_modern(const char *core)
{
	static const char *const modern[] = {"haswell", "skylakex", "cooperlake",
					     "sapphirerapids", "zen", "excavator"};

	for (size_t i = 0; i < sizeof(modern) / sizeof(modern[0]); i++)
		if (!strncasecmp(core, modern[i], strlen(modern[i])))
			return true;
	return false;
}

static pthread_once_t blas_warn_once = PTHREAD_ONCE_INIT;
static char blas_core[64];

static void blas_warn(void)
{
	fprintf(stderr,
		"xo: warning: OpenBLAS runs core type '%s', older than this CPU supports "
		"(sgemm several times slower); set OPENBLAS_CORETYPE=%s before starting. "
		"The cpu backend's seed-model kernels do not use BLAS.\n",
		blas_core, isa_supported() == XO_CPU_ISA_AVX512 ? "SkylakeX" : "Haswell");
}

/* ---- init / free / memory ---------------------------------------------------------- */

enum xo_status xo_cpu_init(struct xo_backend *be, const char *spec)
{
	struct xo_cpu_ctx *c;
	enum xo_status st;
	const char *e;
	char *cfg, *core;
	int nt = 2;

	if (spec && *spec)
		return xo_error(XO_ENODEV, "cpu: takes no device argument (got '%s')", spec);
	e = getenv("XO_THREADS");
	if (e && *e) {
		char *end;
		long v = strtol(e, &end, 10);

		if (*end || v < 1 || v > XO_CPU_MAX_THREADS)
			return xo_error(XO_EINVAL, "cpu: XO_THREADS='%s' must be 1..%d", e,
					XO_CPU_MAX_THREADS);
		nt = (int)v;
	}
	e = getenv("XO_CPU_ISA");
	if (e && *e) {
		int i = isa_parse(e);

		if (i < 0)
			return xo_error(XO_EINVAL, "cpu: XO_CPU_ISA='%s' must be scalar, avx2 or avx512",
					e);
		if (i > (int)isa_supported())
			return xo_error(XO_ENODEV, "cpu: XO_CPU_ISA=%s but this CPU supports at most %s",
					e, isa_names[isa_supported()]);
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return xo_error(XO_ENOMEM, "cpu: out of memory");
	c->isa = xo_cpu_isa_detect();
	c->k = xo_cpu_kernels_for(c->isa);
	c->nthreads = nt;
	st = xo_cpu_threads_init(nt, &c->tp);
	if (st)
		goto out_free_ctx;
	/* Our threads split the batch; BLAS must not start its own inside them. */
	openblas_set_num_threads(1);
	if (blas_thread_shutdown_)
		blas_thread_shutdown_();
	cfg = openblas_get_config();
	core = openblas_get_corename();
	snprintf(blas_core, sizeof(blas_core), "%s", core ? core : "?");
	snprintf(be->desc, sizeof(be->desc),
		 "cpu: isa=%s (vector %d floats), threads=%d, blas=OpenBLAS [%s] core=%s%s",
		 c->k->isa, c->k->vw, nt, cfg ? cfg : "?", blas_core,
		 blas_core_modern(blas_core) ? "" : " (older than this CPU: slow sgemm)");
	if (isa_supported() >= XO_CPU_ISA_AVX2 && !blas_core_modern(blas_core))
		pthread_once(&blas_warn_once, blas_warn);
	be->ctx = c;
	return XO_OK;

out_free_ctx:
	free(c);
	return st;
}

void xo_cpu_free(struct xo_backend *be)
{
	struct xo_cpu_ctx *c = ctx_of(be);

	if (!c)
		return;
	xo_cpu_threads_free(c->tp);
	free(c->shared.p);
	free(c->mask);
	for (int i = 0; i < XO_CPU_MAX_THREADS; i++)
		free(c->thr[i].p);
	free(c);
	be->ctx = NULL;
}

enum xo_status xo_cpu_alloc(struct xo_backend *be, struct xo_tensor *t)
{
	size_t bytes = round_up(t->capacity * 4, 64);

	(void)be;
	t->data = aligned_alloc(64, bytes);
	if (!t->data)
		return xo_error(XO_ENOMEM, "cpu: cannot allocate %zu bytes", bytes);
	memset(t->data, 0, bytes);
	return XO_OK;
}

void xo_cpu_release(struct xo_backend *be, struct xo_tensor *t)
{
	(void)be;
	free(t->data);
}

static enum xo_status buf_reserve(struct xo_cpu_buf *b, size_t floats)
{
	float *p;
	size_t bytes;

	if (floats <= b->cap)
		return XO_OK;
	floats = (floats + 15) & ~(size_t)15;
	if (floats > SIZE_MAX / 4)
		return xo_error(XO_EOVERFLOW, "cpu: scratch size overflows");
	bytes = floats * 4;
	p = aligned_alloc(64, bytes);
	if (!p)
		return xo_error(XO_ENOMEM, "cpu: cannot allocate %zu bytes of scratch", bytes);
	free(b->p);
	b->p = p;
	b->cap = floats;
	return XO_OK;
}

/* Grows the shared scratch to shared floats and the first nt per-thread
 * buffers to per_thread floats each. */
static enum xo_status scratch_reserve(struct xo_cpu_ctx *c, int64_t shared, int64_t per_thread,
				      int nt)
{
	enum xo_status st = buf_reserve(&c->shared, (size_t)shared);

	for (int t = 0; !st && t < nt; t++)
		st = buf_reserve(&c->thr[t], (size_t)per_thread);
	return st;
}

enum xo_status xo_cpu_scratch_reserve(struct xo_cpu_ctx *c, int64_t shared, int64_t per_thread,
				      int nt)
{
	return scratch_reserve(c, shared, per_thread, nt);
}

/* Threads for work of macs multiply-adds over items independent parts. */
static int threads_for(const struct xo_cpu_ctx *c, int64_t macs, int64_t items)
{
	int64_t nt = c->nthreads;

	if (macs < XO_CPU_PAR_MIN)
		return 1;
	if (nt > items)
		nt = items;
	return nt < 1 ? 1 : (int)nt;
}

int xo_cpu_threads_for(const struct xo_cpu_ctx *c, int64_t macs, int64_t items)
{
	return threads_for(c, macs, items);
}

/* Share t of n of [0, total): [*lo, *hi). */
static void share(int64_t total, int t, int n, int64_t *lo, int64_t *hi)
{
	*lo = total * t / n;
	*hi = total * (t + 1) / n;
}

/* ---- conv1d and dense --------------------------------------------------------------- */

/* A conv1d (dense: len 1, kernel 1) described once for the task functions. */
struct conv_job {
	const struct xo_cpu_ctx *c;
	const struct xo_cpu_kernels *k;
	int64_t batch, len, ch, f, ks, s, dil, pad, out;
	int64_t kc, fp, kcp;   /* kernel_size * ch; padded filters; padded kc */
	int64_t sub;           /* samples per im2col / column sub-batch */
	bool windows;          /* input windows are contiguous rows in place */
	int act;
	const float *x, *w, *b, *y, *dy;
	float *yo, *dx, *dw, *db;
	const float *bp, *biasp, *wt; /* packed kernel [kc][fp], bias [fp], kernel^T [f][kcp] */
	/* per-thread scratch layout (floats) */
	int64_t off_col, off_dz, off_dw, off_db;
	int nt;
};

void xo_cpu_im2col(const struct xo_cpu_im2col *g, const float *x, int64_t cnt, float *col)
{
	for (int64_t n = 0; n < cnt; n++) {
		const float *xs = x + n * g->x_stride;

		for (int64_t o = 0; o < g->out; o++) {
			float *row = col + (n * g->out + o) * g->ks * g->ch;

			for (int64_t q = 0; q < g->ks; q++) {
				int64_t i = o * g->s + q * g->dil - g->pad;

				if (i >= 0 && i < g->len)
					memcpy(row + q * g->ch, xs + i * g->ch,
					       (size_t)g->ch * sizeof(float));
				else
					memset(row + q * g->ch, 0, (size_t)g->ch * sizeof(float));
			}
		}
	}
}

/* im2col of samples [n0, n0 + cnt) into col [cnt * out][kc], zeros for padding. */
static void im2col(const struct conv_job *j, int64_t n0, int64_t cnt, float *col)
{
	const struct xo_cpu_im2col g = {.x_stride = j->len * j->ch, .len = j->len, .ch = j->ch,
					.out = j->out, .ks = j->ks, .s = j->s, .dil = j->dil,
					.pad = j->pad};

	xo_cpu_im2col(&g, j->x + n0 * j->len * j->ch, cnt, col);
}

static void conv_softmax(const struct conv_job *j, float *y, int64_t rows)
{
	j->k->softmax_fwd(y, y, rows, j->f);
}

static void conv_fwd_task(void *arg, int t, int nt)
{
	const struct conv_job *j = arg;
	struct xo_cpu_gemm g = {
		.k = j->kc, .n = j->f, .np = j->fp, .b = j->bp, .bias = j->biasp, .ldc = j->f,
		.act = j->act == XO_ACTIVATION_SOFTMAX ? XO_ACTIVATION_LINEAR : j->act,
	};
	int64_t lo, hi;

	share(j->batch, t, nt, &lo, &hi);
	if (hi <= lo)
		return;
	if (j->windows) {
		g.a = (struct xo_cpu_rows){j->x + lo * j->len * j->ch, j->s * j->ch, j->out,
					   j->len * j->ch};
		g.m = (hi - lo) * j->out;
		g.c = j->yo + lo * j->out * j->f;
		j->k->gemm_nn(&g);
		if (j->act == XO_ACTIVATION_SOFTMAX)
			conv_softmax(j, g.c, g.m);
		return;
	}
	for (int64_t n0 = lo; n0 < hi; n0 += j->sub) {
		int64_t cnt = min64(j->sub, hi - n0);
		float *col = j->c->thr[t].p + j->off_col;

		im2col(j, n0, cnt, col);
		g.a = (struct xo_cpu_rows){col, j->kc, cnt * j->out, 0};
		g.m = cnt * j->out;
		g.c = j->yo + n0 * j->out * j->f;
		j->k->gemm_nn(&g);
		if (j->act == XO_ACTIVATION_SOFTMAX)
			conv_softmax(j, g.c, g.m);
	}
}

void xo_cpu_act_dz(const struct xo_cpu_kernels *k, int act, const float *y, const float *dy,
		   float *dz, int64_t rows, int64_t f, int64_t fp)
{
	if (fp == f && act != XO_ACTIVATION_SOFTMAX) {
		/* unpadded rows: one element-wise call over the whole block */
		int64_t cnt = rows * f;

		if (act == XO_ACTIVATION_RELU)
			k->relu_bwd(y, dy, dz, cnt);
		else if (act == XO_ACTIVATION_SIGMOID)
			k->sigmoid_bwd(y, dy, dz, cnt);
		else
			memcpy(dz, dy, (size_t)cnt * sizeof(float));
		return;
	}
	for (int64_t r = 0; r < rows; r++) {
		const float *yr = y + r * f, *dyr = dy + r * f;
		float *d = dz + r * fp;

		switch (act) {
		case XO_ACTIVATION_RELU:
			k->relu_bwd(yr, dyr, d, f);
			break;
		case XO_ACTIVATION_SIGMOID:
			k->sigmoid_bwd(yr, dyr, d, f);
			break;
		case XO_ACTIVATION_SOFTMAX: {
			double dot = 0.0;

			for (int64_t q = 0; q < f; q++)
				dot += (double)dyr[q] * (double)yr[q];
			for (int64_t q = 0; q < f; q++)
				d[q] = (float)((double)yr[q] * ((double)dyr[q] - dot));
			break;
		}
		default:
			memcpy(d, dyr, (size_t)f * sizeof(float));
			break;
		}
		for (int64_t q = f; q < fp; q++)
			d[q] = 0.0f;
	}
}

/* dz = d act(y) * dy for rows [r0, r1) into dz [rows][fp], zero padded. */
static void conv_dz(const struct conv_job *j, int64_t r0, int64_t r1, float *dz)
{
	xo_cpu_act_dz(j->k, j->act, j->y + r0 * j->f, j->dy + r0 * j->f, dz, r1 - r0, j->f, j->fp);
}

/* Adds the columns g [cnt * out][kc] of samples [n0, n0 + cnt) into dx
 * (zeroed first): with dilation 1 a column row is one contiguous run of dx. */
static void col2im(const struct conv_job *j, int64_t n0, int64_t cnt, const float *g)
{
	for (int64_t n = 0; n < cnt; n++) {
		float *dxs = j->dx + (n0 + n) * j->len * j->ch;

		memset(dxs, 0, (size_t)(j->len * j->ch) * sizeof(float));
		for (int64_t o = 0; o < j->out; o++) {
			const float *row = g + (n * j->out + o) * j->kc;
			int64_t i0 = o * j->s - j->pad;

			if (j->dil == 1) {
				int64_t q0 = i0 < 0 ? -i0 : 0;
				int64_t q1 = i0 + j->ks > j->len ? j->len - i0 : j->ks;

				if (q1 > q0)
					j->k->add(dxs + (i0 + q0) * j->ch, row + q0 * j->ch,
						  (q1 - q0) * j->ch);
				continue;
			}
			for (int64_t q = 0; q < j->ks; q++) {
				int64_t i = i0 + q * j->dil;

				if (i >= 0 && i < j->len)
					j->k->add(dxs + i * j->ch, row + q * j->ch, j->ch);
			}
		}
	}
}

static void conv_bwd_task(void *arg, int t, int nt)
{
	const struct conv_job *j = arg;
	float *scr = j->c->thr[t].p;
	float *dz = scr + j->off_dz, *dwp = scr + j->off_dw, *dbp = scr + j->off_db;
	float *col = scr + j->off_col;
	int64_t lo, hi, rows;

	share(j->batch, t, nt, &lo, &hi);
	memset(dwp, 0, (size_t)(j->kc * j->fp) * sizeof(float));
	memset(dbp, 0, (size_t)j->fp * sizeof(float));
	if (hi <= lo)
		return;
	rows = (hi - lo) * j->out;
	if (j->windows) {
		/* d(activation), db and dw a few samples (~16 KB of dz) at a
		 * time, so that dz is read back from L1; dz still ends up whole
		 * for the dx pass */
		int64_t step = XO_CPU_DZ_FLOATS / (j->out * j->fp);

		step = step < 1 ? 1 : step;
		for (int64_t n0 = lo; n0 < hi; n0 += step) {
			int64_t cnt = min64(step, hi - n0);
			float *dzc = dz + (n0 - lo) * j->out * j->fp;
			struct xo_cpu_gemm_tn g = {
				.a = {j->x + n0 * j->len * j->ch, j->s * j->ch, j->out,
				      j->len * j->ch},
				.m = cnt * j->out, .k = j->kc, .np = j->fp, .z = dzc, .d = dwp,
			};

			conv_dz(j, n0 * j->out, (n0 + cnt) * j->out, dzc);
			if (j->db)
				j->k->colsum(dzc, cnt * j->out, j->fp, dbp);
			j->k->gemm_tn(&g);
		}
	} else {
		conv_dz(j, lo * j->out, hi * j->out, dz);
		if (j->db)
			j->k->colsum(dz, rows, j->fp, dbp);
		for (int64_t n0 = lo; n0 < hi; n0 += j->sub) {
			int64_t cnt = min64(j->sub, hi - n0);
			struct xo_cpu_gemm_tn g = {
				.a = {col, j->kc, cnt * j->out, 0},
				.m = cnt * j->out, .k = j->kc, .np = j->fp,
				.z = dz + (n0 - lo) * j->out * j->fp, .d = dwp,
			};

			im2col(j, n0, cnt, col);
			j->k->gemm_tn(&g);
		}
	}
	if (!j->dx)
		return;
	if (j->ks == 1 && j->s == 1 && j->pad == 0) {
		/* columns are dx itself (dense, pointwise conv) */
		struct xo_cpu_gemm g = {
			.a = {dz, j->fp, rows, 0}, .m = rows, .k = j->f, .n = j->kc,
			.np = j->kcp, .b = j->wt, .c = j->dx + lo * j->len * j->ch, .ldc = j->kc,
			.act = XO_ACTIVATION_LINEAR,
		};

		j->k->gemm_nn(&g);
		return;
	}
	for (int64_t n0 = lo; n0 < hi; n0 += j->sub) {
		int64_t cnt = min64(j->sub, hi - n0);
		struct xo_cpu_gemm g = {
			.a = {dz + (n0 - lo) * j->out * j->fp, j->fp, cnt * j->out, 0},
			.m = cnt * j->out, .k = j->f, .n = j->kc, .np = j->kcp, .b = j->wt,
			.c = col, .ldc = j->kc, .act = XO_ACTIVATION_LINEAR,
		};

		j->k->gemm_nn(&g);
		col2im(j, n0, cnt, col);
	}
}

/* Fills the geometry of j from p (dense when is_dense). */
static enum xo_status conv_setup(struct xo_cpu_ctx *c, const struct xo_params *p, bool is_dense,
				 struct conv_job *j)
{
	enum xo_status st;

	memset(j, 0, sizeof(*j));
	j->c = c;
	j->k = c->k;
	j->batch = p->batch;
	j->act = p->activation;
	if (is_dense) {
		j->len = 1;
		j->ch = p->ch;
		j->f = p->units;
		j->ks = 1;
		j->s = 1;
		j->dil = 1;
		j->out = 1;
	} else {
		j->len = p->len;
		j->ch = p->ch;
		j->f = p->filters;
		j->ks = p->kernel_size;
		j->s = xo_conv1d_stride(p);
		j->dil = p->dilation_rate;
		st = xo_conv1d_geometry(p, &j->out, &j->pad);
		if (st)
			return st;
	}
	j->kc = j->ks * j->ch;
	j->fp = round_up(j->f, c->k->vw);
	j->kcp = round_up(j->kc, c->k->vw);
	j->windows = j->pad == 0 && (j->dil == 1 || j->ks == 1) &&
		     (j->out - 1) * j->s + j->ks <= j->len;
	j->sub = XO_CPU_SUB_FLOATS / (j->out * j->kc);
	if (j->sub < 1)
		j->sub = 1;
	return XO_OK;
}

void xo_cpu_pack(const float *w, const float *b, int64_t kc, int64_t f, int64_t fp, float *wp,
		 float *bp)
{
	for (int64_t r = 0; r < kc; r++) {
		memcpy(wp + r * fp, w + r * f, (size_t)f * sizeof(float));
		memset(wp + r * fp + f, 0, (size_t)(fp - f) * sizeof(float));
	}
	if (!b)
		return;
	memcpy(bp, b, (size_t)f * sizeof(float));
	memset(bp + f, 0, (size_t)(fp - f) * sizeof(float));
}

void xo_cpu_pack_t(const float *w, int64_t kc, int64_t f, int64_t kcp, float *wt)
{
	for (int64_t q = 0; q < f; q++) {
		for (int64_t r = 0; r < kc; r++)
			wt[q * kcp + r] = w[r * f + q];
		for (int64_t r = kc; r < kcp; r++)
			wt[q * kcp + r] = 0.0f;
	}
}

void xo_cpu_parts_sum(const struct xo_cpu_ctx *c, int nt, int64_t off, int64_t rows, int64_t f,
		      int64_t fp, float *dst)
{
	for (int64_t r = 0; r < rows; r++)
		for (int64_t q = 0; q < f; q++) {
			float s = c->thr[0].p[off + r * fp + q];

			for (int t = 1; t < nt; t++)
				s += c->thr[t].p[off + r * fp + q];
			dst[r * f + q] = s;
		}
}

static bool use_blas(const struct conv_job *j, int64_t m)
{
	return j->windows && j->ks == 1 && j->s == 1 && m >= XO_CPU_BLAS_MIN &&
	       j->f >= XO_CPU_BLAS_MIN && j->kc >= XO_CPU_BLAS_MIN;
}

static void blas_fwd_task(void *arg, int t, int nt)
{
	const struct conv_job *j = arg;
	int64_t lo, hi;
	float *y;

	share(j->batch * j->out, t, nt, &lo, &hi);
	if (hi <= lo)
		return;
	y = j->yo + lo * j->f;
	for (int64_t r = lo; r < hi; r++) {
		if (j->b)
			memcpy(y + (r - lo) * j->f, j->b, (size_t)j->f * sizeof(float));
		else
			memset(y + (r - lo) * j->f, 0, (size_t)j->f * sizeof(float));
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(hi - lo), (int)j->f,
		    (int)j->kc, 1.0f, j->x + lo * j->kc, (int)j->kc, j->w, (int)j->f, 1.0f, y,
		    (int)j->f);
	if (j->act == XO_ACTIVATION_RELU)
		j->k->relu_fwd(y, y, (hi - lo) * j->f);
	else if (j->act == XO_ACTIVATION_SIGMOID)
		j->k->sigmoid_fwd(y, y, (hi - lo) * j->f);
	else if (j->act == XO_ACTIVATION_SOFTMAX)
		conv_softmax(j, y, hi - lo);
}

static enum xo_status conv_fwd_common(struct xo_backend *be, const struct xo_op_args *a,
				      bool is_dense)
{
	struct xo_cpu_ctx *c = ctx_of(be);
	struct conv_job j;
	enum xo_status st;
	int64_t m;
	int nt;

	st = conv_setup(c, &a->p, is_dense, &j);
	if (st)
		return st;
	j.x = xo_tensor_f32(a->src[0]);
	j.w = xo_tensor_f32(a->src[1]);
	j.b = a->p.use_bias ? xo_tensor_f32(a->src[2]) : NULL;
	j.yo = xo_tensor_f32(a->dst[0]);
	m = j.batch * j.out;
	/* a fused softmax costs about 20 multiply-adds per output (the exp) */
	nt = threads_for(c, m * j.kc * j.f + (j.act == XO_ACTIVATION_SOFTMAX ? m * j.f * 20 : 0),
			 j.batch);
	if (use_blas(&j, m)) {
		xo_cpu_threads_run(c->tp, threads_for(c, m * j.kc * j.f, m), blas_fwd_task, &j);
		return XO_OK;
	}
	j.off_col = 0;
	st = scratch_reserve(c, j.kc * j.fp + j.fp, j.windows ? 0 : j.sub * j.out * j.kc, nt);
	if (st)
		return st;
	if (j.fp == j.f) {
		/* filters a multiple of the vector width: w and b are already the
		 * packed layout */
		j.bp = j.w;
		j.biasp = j.b;
	} else {
		xo_cpu_pack(j.w, j.b, j.kc, j.f, j.fp, c->shared.p, c->shared.p + j.kc * j.fp);
		j.bp = c->shared.p;
		j.biasp = j.b ? c->shared.p + j.kc * j.fp : NULL;
	}
	xo_cpu_threads_run(c->tp, nt, conv_fwd_task, &j);
	return XO_OK;
}

static enum xo_status conv_bwd_common(struct xo_backend *be, const struct xo_op_args *a,
				      bool is_dense)
{
	struct xo_cpu_ctx *c = ctx_of(be);
	struct conv_job j;
	enum xo_status st;
	int64_t m, chunk, per;
	int nt;

	st = conv_setup(c, &a->p, is_dense, &j);
	if (st)
		return st;
	j.x = xo_tensor_f32(a->src[0]);
	j.w = xo_tensor_f32(a->src[1]);
	j.y = xo_tensor_f32(a->src[2]);
	j.dy = xo_tensor_f32(a->src[3]);
	j.dx = xo_tensor_f32(a->dst[0]);
	j.dw = xo_tensor_f32(a->dst[1]);
	j.db = a->p.use_bias ? xo_tensor_f32(a->dst[2]) : NULL;
	m = j.batch * j.out;
	nt = threads_for(c, m * j.kc * j.f * (j.dx ? 2 : 1), j.batch);
	j.nt = nt;
	chunk = (j.batch + nt - 1) / nt;
	/* per thread: [dw kc*fp][db fp][dz chunk*out*fp][col sub*out*max(kc, kcp)] */
	j.off_dw = 0;
	j.off_db = j.kc * j.fp;
	j.off_dz = j.off_db + j.fp;
	j.off_col = round_up(j.off_dz + chunk * j.out * j.fp, 16);
	per = j.off_col + j.sub * j.out * j.kcp;
	st = scratch_reserve(c, j.dx ? j.f * j.kcp : 0, per, nt);
	if (st)
		return st;
	if (j.dx) {
		xo_cpu_pack_t(j.w, j.kc, j.f, j.kcp, c->shared.p);
		j.wt = c->shared.p;
	}
	xo_cpu_threads_run(c->tp, nt, conv_bwd_task, &j);
	xo_cpu_parts_sum(c, nt, j.off_dw, j.kc, j.f, j.fp, j.dw);
	if (j.db)
		xo_cpu_parts_sum(c, nt, j.off_db, 1, j.f, j.fp, j.db);
	return XO_OK;
}

static enum xo_status cpu_conv1d_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return conv_fwd_common(be, a, false);
}

static enum xo_status cpu_conv1d_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return conv_bwd_common(be, a, false);
}

static enum xo_status cpu_dense_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return conv_fwd_common(be, a, true);
}

static enum xo_status cpu_dense_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return conv_bwd_common(be, a, true);
}

/* ---- max pooling ---------------------------------------------------------------------- */

struct pool_job {
	const struct xo_cpu_kernels *k;
	struct xo_cpu_pool p; /* one sample's geometry; pointers of sample 0 */
	int64_t batch;
	bool bwd;
};

static void pool_task(void *arg, int t, int nt)
{
	const struct pool_job *j = arg;
	struct xo_cpu_pool p = j->p;
	int64_t lo, hi;

	share(j->batch, t, nt, &lo, &hi);
	if (hi <= lo)
		return;
	p.batch = hi - lo;
	p.x += lo * p.len * p.ch;
	if (j->bwd) {
		p.dy += lo * p.out * p.ch;
		p.y += lo * p.len * p.ch;
		j->k->pool_bwd(&p);
	} else {
		p.y += lo * p.out * p.ch;
		j->k->pool_fwd(&p);
	}
}

static enum xo_status pool_common(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	struct xo_cpu_ctx *c = ctx_of(be);
	struct pool_job j = {.k = c->k, .batch = a->p.batch, .bwd = bwd};
	enum xo_status st;

	st = xo_pool1d_geometry(&a->p, &j.p.out, &j.p.pad);
	if (st)
		return st;
	j.p.len = a->p.len;
	j.p.ch = a->p.ch;
	j.p.pool = a->p.pool_size;
	j.p.stride = xo_pool1d_stride(&a->p);
	j.p.x = xo_tensor_f32(a->src[0]);
	j.p.dy = bwd ? xo_tensor_f32(a->src[1]) : NULL;
	j.p.y = xo_tensor_f32(a->dst[0]);
	xo_cpu_threads_run(c->tp,
			   threads_for(c, j.batch * j.p.len * j.p.ch * (bwd ? 4 : 3), j.batch),
			   pool_task, &j);
	return XO_OK;
}

static enum xo_status cpu_pool_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return pool_common(be, a, false);
}

static enum xo_status cpu_pool_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return pool_common(be, a, true);
}

/* ---- element-wise ----------------------------------------------------------------------- */

enum ew_kind {
	EW_RELU_FWD,
	EW_RELU_BWD,
	EW_SIGMOID_FWD,
	EW_SIGMOID_BWD,
	EW_ACT_FWD, /* k->act_fwd: tanh, elu, gelu, softplus */
	EW_ACT_BWD,
	EW_DROPOUT,
	EW_FN, /* j->fn: the plain-C element-wise loops below */
	EW_AFFINE, /* rescaling: y = x * scale + offset forward, dx = dy * scale backward (apply false) */
	EW_LEAKY, /* leaky_relu: scale the negative slope; dy NULL forward */
	EW_ELU    /* elu: scale alpha; dy NULL forward */
};

struct ew_job {
	const struct xo_cpu_kernels *k;
	enum ew_kind kind;
	const float *x, *dy;
	float *y;
	int64_t count;
	uint64_t seed;
	uint32_t sa, sb, thr;
	float scale;  /* dropout, EW_AFFINE, EW_LEAKY, EW_ELU */
	float offset; /* EW_AFFINE */
	int32_t *mask;   /* dropout: mask to fill, or to apply when apply */
	bool apply;      /* dropout: apply the mask; EW_AFFINE: add the offset (forward) */
	enum xo_activation act; /* EW_ACT_*: which one */
	/* EW_FN: out[i] from x[i] (and dy[i] backward; NULL forward) */
	void (*fn)(const float *restrict x, const float *restrict dy, float *out, int64_t n);
};

/* leaky_relu (ops.def): forward (dy NULL) out[i] = x[i] where x[i] >= 0, else
 * s * x[i]; backward out[i] = dy[i] where x[i] >= 0, else s * dy[i]. One
 * correctly rounded product: the reference's bits. NaN x fails the test.
 * out may equal x or dy (each element is read first). */
static void leaky_loop(const float *x, const float *dy, float *out, int64_t n, float s)
{
	if (!dy) {
		for (int64_t i = 0; i < n; i++)
			out[i] = x[i] >= 0.0f ? x[i] : s * x[i];
		return;
	}
	for (int64_t i = 0; i < n; i++)
		out[i] = x[i] >= 0.0f ? dy[i] : s * dy[i];
}

/* elu with any alpha (ops.def), the plain-C form of the vector kernels'
 * alpha-1 forward: forward (dy NULL) out[i] = s[i] where s[i] > 0, else
 * alpha * expm1f(s[i]) (libm's, under an ulp, then one product: inside
 * the bound of 7 ulps); backward from s = x, out[i] = dy[i] where x > 0,
 * else dy[i] (alpha expf(x)) (libm's expf, under an ulp, two products).
 * out may equal s or dy. */
static void elu_loop(const float *s, const float *dy, float *out, int64_t n, float alpha)
{
	if (!dy) {
		for (int64_t i = 0; i < n; i++)
			out[i] = s[i] > 0.0f ? s[i] : alpha * expm1f(s[i]);
		return;
	}
	for (int64_t i = 0; i < n; i++)
		out[i] = s[i] > 0.0f ? dy[i] : dy[i] * (alpha * expf(s[i]));
}

/* y[i] = x[i] * s + o, the product rounded before the sum (Keras's float32
 * order; a contracted fma rounds once, inside the bound of ops.def's two
 * roundings). x and y may be the same array. */
static void affine_loop(const float *x, float *y, int64_t n, float s, float o, bool add)
{
	if (!add) { /* no + 0: -0 * s stays -0, as the reference's product */
		for (int64_t i = 0; i < n; i++)
			y[i] = x[i] * s;
		return;
	}
	for (int64_t i = 0; i < n; i++)
		y[i] = x[i] * s + o;
}

static void ew_task(void *arg, int t, int nt)
{
	const struct ew_job *j = arg;
	int64_t lo, hi;

	share(j->count / 64, t, nt, &lo, &hi);
	lo *= 64;
	hi = t == nt - 1 ? j->count : hi * 64;
	if (hi <= lo)
		return;
	switch (j->kind) {
	case EW_RELU_FWD:
		j->k->relu_fwd(j->x + lo, j->y + lo, hi - lo);
		break;
	case EW_RELU_BWD:
		j->k->relu_bwd(j->x + lo, j->dy + lo, j->y + lo, hi - lo);
		break;
	case EW_SIGMOID_FWD:
		j->k->sigmoid_fwd(j->x + lo, j->y + lo, hi - lo);
		break;
	case EW_SIGMOID_BWD:
		j->k->sigmoid_bwd(j->x + lo, j->dy + lo, j->y + lo, hi - lo);
		break;
	case EW_ACT_FWD: {
		bool done = j->k->act_fwd((int)j->act, j->x + lo, j->y + lo, hi - lo);

		XO_ASSERT(done); /* every ISA level has all four */
		break;
	}
	case EW_ACT_BWD: {
		bool done = j->k->act_bwd((int)j->act, j->x + lo, j->dy + lo, j->y + lo, hi - lo);

		XO_ASSERT(done);
		break;
	}
	case EW_DROPOUT:
		if (j->apply)
			j->k->dropout_apply(j->x + lo, j->y + lo, hi - lo, j->mask + lo, j->scale);
		else
			j->k->dropout(j->x + lo, j->y + lo, hi - lo, (uint64_t)lo, j->seed, j->sa,
				      j->sb, j->thr, j->scale, j->mask ? j->mask + lo : NULL);
		break;
	case EW_FN:
		j->fn(j->x + lo, j->dy ? j->dy + lo : NULL, j->y + lo, hi - lo);
		break;
	case EW_AFFINE:
		affine_loop(j->x + lo, j->y + lo, hi - lo, j->scale, j->offset, j->apply);
		break;
	case EW_LEAKY:
		leaky_loop(j->x + lo, j->dy ? j->dy + lo : NULL, j->y + lo, hi - lo, j->scale);
		break;
	case EW_ELU:
		elu_loop(j->x + lo, j->dy ? j->dy + lo : NULL, j->y + lo, hi - lo, j->scale);
		break;
	}
}

static enum xo_status ew_run(struct xo_backend *be, struct ew_job *j, int64_t cost)
{
	struct xo_cpu_ctx *c = ctx_of(be);

	j->k = c->k;
	xo_cpu_threads_run(c->tp, threads_for(c, j->count * cost, j->count / 64 + 1), ew_task, j);
	return XO_OK;
}

/* relu/sigmoid: fwd src {x}, bwd src {x, dy}; dst {y} elementwise, cost
 * per element for the thread split. */
static enum xo_status ew_act(struct xo_backend *be, const struct xo_op_args *a,
			     enum ew_kind kind, bool bwd, int64_t cost)
{
	struct ew_job j = {.kind = kind, .x = xo_tensor_f32(a->src[0]),
			   .dy = bwd ? xo_tensor_f32(a->src[1]) : NULL,
			   .y = xo_tensor_f32(a->dst[0]), .count = a->dst[0]->nelem};

	return ew_run(be, &j, cost);
}

static enum xo_status cpu_relu_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return ew_act(be, a, EW_RELU_FWD, false, 1);
}

static enum xo_status cpu_relu_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return ew_act(be, a, EW_RELU_BWD, true, 1);
}

static enum xo_status cpu_sigmoid_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return ew_act(be, a, EW_SIGMOID_FWD, false, 20);
}

static enum xo_status cpu_sigmoid_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return ew_act(be, a, EW_SIGMOID_BWD, true, 1);
}

/* tanh, elu, gelu, softplus: cost ~20 per element (a vector exp or more) */
static enum xo_status act_common(struct xo_backend *be, const struct xo_op_args *a,
				 enum xo_activation act, bool bwd)
{
	struct ew_job j = {.kind = bwd ? EW_ACT_BWD : EW_ACT_FWD, .act = act,
			   .x = xo_tensor_f32(a->src[0]),
			   .dy = bwd ? xo_tensor_f32(a->src[1]) : NULL,
			   .y = xo_tensor_f32(a->dst[0]), .count = a->dst[0]->nelem};

	return ew_run(be, &j, 20);
}

/* elu: forward with alpha 1 on the vector kernels (k->act_fwd), any other
 * alpha on elu_loop; backward (from x, any alpha) on elu_loop */
static enum xo_status cpu_elu(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	struct ew_job j = {.kind = EW_ELU, .x = xo_tensor_f32(a->src[0]),
			   .dy = bwd ? xo_tensor_f32(a->src[1]) : NULL,
			   .y = xo_tensor_f32(a->dst[0]), .count = a->dst[0]->nelem,
			   .scale = a->p.alpha};

	if (a->p.alpha == 1.0f && !bwd)
		return act_common(be, a, XO_ACTIVATION_ELU, bwd);
	return ew_run(be, &j, 20);
}

static enum xo_status cpu_elu_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_elu(be, a, false);
}

static enum xo_status cpu_elu_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_elu(be, a, true);
}

#define CPU_ACT(name, ACT)                                                                 \
	static enum xo_status cpu_##name##_fwd(struct xo_backend *be,                      \
					       const struct xo_op_args *a)                  \
	{                                                                                  \
		return act_common(be, a, ACT, false);                                      \
	}                                                                                  \
	static enum xo_status cpu_##name##_bwd(struct xo_backend *be,                      \
					       const struct xo_op_args *a)                  \
	{                                                                                  \
		return act_common(be, a, ACT, true);                                       \
	}
CPU_ACT(tanh, XO_ACTIVATION_TANH)
CPU_ACT(gelu, XO_ACTIVATION_GELU)
CPU_ACT(softplus, XO_ACTIVATION_SOFTPLUS)
#undef CPU_ACT

/*
 * The clipped activations: plain loops of compares and selects (and, for
 * those that scale, one correctly rounded operation), which the compiler
 * vectorizes at the baseline ISA; forms and kinks as the reference
 * (reference/ref_act.c). out may equal x (each element is read first).
 */
static void relu6_fwd_loop(const float *restrict x, const float *restrict dy, float *out,
			   int64_t n)
{
	(void)dy;
	for (int64_t i = 0; i < n; i++) {
		float v = x[i];

		out[i] = v >= 6.0f ? 6.0f : v > 0.0f || v != v ? v : 0.0f;
	}
}

static void relu6_bwd_loop(const float *restrict x, const float *restrict dy, float *out,
			   int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		out[i] = x[i] > 0.0f && x[i] < 6.0f ? dy[i] : 0.0f;
}

/* fwd src {x}, bwd src {x, dy}; dst {y}: fn over the elements, cost per
 * element for the thread split */
static enum xo_status ew_fn(struct xo_backend *be, const struct xo_op_args *a,
			    void (*fn)(const float *restrict, const float *restrict, float *,
				       int64_t),
			    bool bwd, int64_t cost)
{
	struct ew_job j = {.kind = EW_FN, .fn = fn, .x = xo_tensor_f32(a->src[0]),
			   .dy = bwd ? xo_tensor_f32(a->src[1]) : NULL,
			   .y = xo_tensor_f32(a->dst[0]), .count = a->dst[0]->nelem};

	return ew_run(be, &j, cost);
}

static enum xo_status cpu_relu6_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return ew_fn(be, a, relu6_fwd_loop, false, 1);
}

static enum xo_status cpu_relu6_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return ew_fn(be, a, relu6_bwd_loop, true, 1);
}

/* relu6(x + 3) / 6: x + 3 and the division round once each (the bound:
 * suites/harness_internal.h); x + 3 is exact near the lower kink */
static void hard_sigmoid_fwd_loop(const float *restrict x, const float *restrict dy, float *out,
				  int64_t n)
{
	(void)dy;
	for (int64_t i = 0; i < n; i++) {
		float t = x[i] + 3.0f;

		out[i] = t >= 6.0f ? 1.0f : t > 0.0f || t != t ? t / 6.0f : 0.0f;
	}
}

static void hard_sigmoid_bwd_loop(const float *restrict x, const float *restrict dy, float *out,
				  int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		out[i] = x[i] > -3.0f && x[i] < 3.0f ? dy[i] / 6.0f : 0.0f;
}

static enum xo_status cpu_hard_sigmoid_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return ew_fn(be, a, hard_sigmoid_fwd_loop, false, 2);
}

static enum xo_status cpu_hard_sigmoid_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return ew_fn(be, a, hard_sigmoid_bwd_loop, true, 2);
}

/* silu: the reference's forms (e = exp(-|x|): s = 1/(1 + e) or e/(1 + e)
 * by the sign, 1 - s the other), libm's expf; bounds in
 * suites/harness_internal.h */
static void silu_fwd_loop(const float *restrict x, const float *restrict dy, float *out,
			  int64_t n)
{
	(void)dy;
	for (int64_t i = 0; i < n; i++) {
		float v = x[i], e = expf(-fabsf(v)), d = 1.0f + e;

		out[i] = v >= 0.0f ? v / d : v * e / d;
	}
}

static void silu_bwd_loop(const float *restrict x, const float *restrict dy, float *out,
			  int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		float v = x[i], e = expf(-fabsf(v)), d = 1.0f + e;
		float s = v >= 0.0f ? 1.0f / d : e / d, c = v >= 0.0f ? e / d : 1.0f / d;

		out[i] = dy[i] * (s + v * s * c);
	}
}

static enum xo_status cpu_silu_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return ew_fn(be, a, silu_fwd_loop, false, 20);
}

static enum xo_status cpu_silu_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return ew_fn(be, a, silu_bwd_loop, true, 24);
}

/* rescaling: fwd src {x} dst {y}, y = x * multiplier + offset; bwd src {dy}
 * dst {dx}, dx = dy * multiplier (ops.def) */
static enum xo_status cpu_rescaling(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	struct ew_job j = {.kind = EW_AFFINE, .x = xo_tensor_f32(a->src[0]),
			   .y = xo_tensor_f32(a->dst[0]), .count = a->dst[0]->nelem,
			   .scale = a->p.multiplier, .offset = a->p.offset, .apply = !bwd};

	return ew_run(be, &j, 1);
}

static enum xo_status cpu_rescaling_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_rescaling(be, a, false);
}

static enum xo_status cpu_rescaling_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_rescaling(be, a, true);
}

/* leaky_relu: fwd src {x} dst {y}; bwd src {x, dy} dst {dx} (ops.def) */
static enum xo_status cpu_leaky_relu(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	struct ew_job j = {.kind = EW_LEAKY, .x = xo_tensor_f32(a->src[0]),
			   .dy = bwd ? xo_tensor_f32(a->src[1]) : NULL,
			   .y = xo_tensor_f32(a->dst[0]), .count = a->dst[0]->nelem,
			   .scale = a->p.negative_slope};

	return ew_run(be, &j, 1);
}

static enum xo_status cpu_leaky_relu_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_leaky_relu(be, a, false);
}

static enum xo_status cpu_leaky_relu_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_leaky_relu(be, a, true);
}

static enum xo_status dropout_common(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	enum xo_status st;
	struct ew_job j = {.kind = EW_DROPOUT, .x = xo_tensor_f32(a->src[0]),
			   .y = xo_tensor_f32(a->dst[0]), .count = a->dst[0]->nelem};

	if (!p->training || p->rate == 0.0f) {
		/* rate 0 keeps everything (uniform >= 0) and scales by 1 */
		if (j.y != j.x)
			memmove(j.y, j.x, (size_t)j.count * sizeof(float));
		return XO_OK;
	}
	j.seed = p->seed;
	j.sa = (uint32_t)p->step;
	j.sb = p->layer;
	j.thr = (uint32_t)ceil((double)p->rate * 16777216.0);
	j.scale = 1.0f / (1.0f - p->rate);
	if (c->mask_valid && c->mask_seed == j.seed && c->mask_a == j.sa && c->mask_b == j.sb &&
	    c->mask_thr == j.thr && c->mask_count == j.count) {
		j.mask = c->mask;
		j.apply = true;
		return ew_run(be, &j, 2);
	}
	c->mask_valid = false;
	if (j.count > c->mask_cap) {
		int32_t *m = aligned_alloc(64, (size_t)round_up(j.count * 4, 64));

		if (m) {
			free(c->mask);
			c->mask = m;
			c->mask_cap = j.count;
		}
	}
	if (j.count <= c->mask_cap) {
		/* without room (allocation failed) the mask is drawn, not kept */
		j.mask = c->mask;
		c->mask_seed = j.seed;
		c->mask_a = j.sa;
		c->mask_b = j.sb;
		c->mask_thr = j.thr;
		c->mask_count = j.count;
	}
	st = ew_run(be, &j, 40);
	c->mask_valid = j.mask != NULL;
	return st;
}

struct softmax_job {
	const struct xo_cpu_kernels *k;
	const float *x, *y, *dy;
	float *out;
	int64_t rows, ch;
	bool bwd;
};

static void softmax_task(void *arg, int t, int nt)
{
	const struct softmax_job *j = arg;
	int64_t lo, hi;

	share(j->rows, t, nt, &lo, &hi);
	if (hi <= lo)
		return;
	if (!j->bwd) {
		j->k->softmax_fwd(j->x + lo * j->ch, j->out + lo * j->ch, hi - lo, j->ch);
		return;
	}
	for (int64_t r = lo; r < hi; r++) {
		const float *y = j->y + r * j->ch, *dy = j->dy + r * j->ch;
		float *dx = j->out + r * j->ch;
		double dot = 0.0;

		for (int64_t q = 0; q < j->ch; q++)
			dot += (double)dy[q] * (double)y[q];
		for (int64_t q = 0; q < j->ch; q++)
			dx[q] = (float)((double)y[q] * ((double)dy[q] - dot));
	}
}

static enum xo_status softmax_common(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	struct xo_cpu_ctx *c = ctx_of(be);
	struct softmax_job j = {
		.k = c->k, .rows = a->p.batch * a->p.len, .ch = a->p.ch, .bwd = bwd,
		.out = xo_tensor_f32(a->dst[0]),
	};

	if (bwd) {
		j.y = xo_tensor_f32(a->src[0]);
		j.dy = xo_tensor_f32(a->src[1]);
	} else {
		j.x = xo_tensor_f32(a->src[0]);
	}
	xo_cpu_threads_run(c->tp, threads_for(c, j.rows * j.ch * 20, j.rows), softmax_task, &j);
	return XO_OK;
}

static enum xo_status cpu_softmax_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return softmax_common(be, a, false);
}

static enum xo_status cpu_softmax_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return softmax_common(be, a, true);
}

/* log_softmax: rows split over the threads; per row the reference's steps
 * in float (a float sum of the row's exp: the bound grows with the row,
 * suites/harness_internal.h). out may equal x forward, never dy backward. */
static void log_softmax_task(void *arg, int t, int nt)
{
	const struct softmax_job *j = arg;
	int64_t lo, hi, n = j->ch;

	share(j->rows, t, nt, &lo, &hi);
	for (int64_t r = lo; r < hi; r++) {
		float *o = j->out + r * n, s = 0.0f, l;

		if (j->bwd) {
			const float *y = j->y + r * n, *dy = j->dy + r * n;

			for (int64_t q = 0; q < n; q++)
				s += dy[q];
			for (int64_t q = 0; q < n; q++)
				o[q] = dy[q] - expf(y[q]) * s;
			continue;
		}
		const float *x = j->x + r * n;
		float m = x[0];

		for (int64_t q = 1; q < n; q++)
			m = x[q] > m ? x[q] : m;
		for (int64_t q = 0; q < n; q++)
			s += expf(x[q] - m);
		l = logf(s);
		for (int64_t q = 0; q < n; q++)
			o[q] = (x[q] - m) - l;
	}
}

static enum xo_status log_softmax_common(struct xo_backend *be, const struct xo_op_args *a,
					 bool bwd)
{
	struct xo_cpu_ctx *c = ctx_of(be);
	struct softmax_job j = {
		.rows = a->p.batch * a->p.len, .ch = a->p.ch, .bwd = bwd,
		.out = xo_tensor_f32(a->dst[0]),
	};

	if (bwd) {
		j.y = xo_tensor_f32(a->src[0]);
		j.dy = xo_tensor_f32(a->src[1]);
	} else {
		j.x = xo_tensor_f32(a->src[0]);
	}
	xo_cpu_threads_run(c->tp, threads_for(c, j.rows * j.ch * 20, j.rows), log_softmax_task,
			   &j);
	return XO_OK;
}

static enum xo_status cpu_log_softmax_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return log_softmax_common(be, a, false);
}

static enum xo_status cpu_log_softmax_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return log_softmax_common(be, a, true);
}

static enum xo_status cpu_flatten(struct xo_backend *be, const struct xo_op_args *a)
{
	float *y = xo_tensor_f32(a->dst[0]);
	const float *x = xo_tensor_f32(a->src[0]);

	(void)be;
	if (y != x)
		memmove(y, x, (size_t)a->dst[0]->nelem * sizeof(float));
	return XO_OK;
}

/* ---- loss, optimizer, metrics, gather ------------------------------------------------------ */

/* Keras 3 categorical crossentropy on probabilities, as the reference: q =
 * p / row sum, clipped to [1e-7f, (float)(1 - 1e-7)], loss = -sum t log q /
 * batch, in double. A term with t == 0 and q not NaN is exactly 0 and is
 * skipped (no log, and no division where q cannot be NaN); NaN passes the
 * clip as in the reference. The parts compute the rows' sums into scratch
 * and the caller adds them in row order, so the total's rounding does not
 * depend on the threads. */
struct ce_job {
	const float *p, *t;
	double *rows; /* [batch] */
	int64_t batch, ch;
	bool logits; /* p holds logits (from_logits): ce_logits_row */
};

double xo_cpu_row_lse(const float *x, int64_t ch)
{
	double m = x[0], s = 0.0;

	for (int64_t c = 1; c < ch; c++)
		if ((double)x[c] > m || isnan(x[c]))
			m = x[c];
	for (int64_t c = 0; c < ch; c++)
		s += exp((double)x[c] - m);
	return m + log(s);
}

/* From logits (Keras's from_logits=True): the row's sum t (x - lse), the
 * log_softmax of the reference, in double; no clip. */
static double ce_logits_row(const float *xr, const float *tr, int64_t ch)
{
	double lse = xo_cpu_row_lse(xr, ch), row = 0.0;

	for (int64_t c = 0; c < ch; c++)
		row += (double)tr[c] * ((double)xr[c] - lse);
	return row;
}

/* From logits: dz = (softmax(x) T - t) / batch, T the row's target sum. */
static void ce_logits_bwd_row(const float *xr, const float *tr, int64_t ch, double inv_n,
			      float *d)
{
	double lse = xo_cpu_row_lse(xr, ch), tsum = 0.0;

	for (int64_t c = 0; c < ch; c++)
		tsum += (double)tr[c];
	for (int64_t c = 0; c < ch; c++)
		d[c] = (float)((exp((double)xr[c] - lse) * tsum - (double)tr[c]) * inv_n);
}

/* One row's sum t log q (see above), shared with the fused path. s finite
 * and nonzero: every p of the row is finite (a NaN or an infinity would make
 * s NaN or infinite; a sum past the float32 range is +Inf, as Keras's
 * float32 sum: xo_cpu_f32_sat), so no q = p / s is NaN and the t == 0
 * terms are skipped without dividing. Otherwise q is computed to decide. */
double xo_cpu_ce_row(const float *pr, const float *tr, int64_t ch)
{
	const double lo = (double)1e-7f, hi = (double)(float)(1.0 - 1e-7);
	double s = 0.0, row = 0.0;
	bool plain;

	for (int64_t c = 0; c < ch; c++)
		s = xo_cpu_f32_sat(s + (double)pr[c]);
	plain = isfinite(s) && s != 0.0;
	for (int64_t c = 0; c < ch; c++) {
		double q;

		if (tr[c] == 0.0f && plain)
			continue;
		q = (double)pr[c] / s;
		if (tr[c] == 0.0f && q == q)
			continue;
		if (q < lo)
			q = lo;
		else if (q > hi)
			q = hi;
		row += (double)tr[c] * log(q);
	}
	return row;
}

static void ce_task(void *arg, int t, int nt)
{
	const struct ce_job *j = arg;
	int64_t r0, r1;

	share(j->batch, t, nt, &r0, &r1);
	for (int64_t r = r0; r < r1; r++)
		j->rows[r] = j->logits ? ce_logits_row(j->p + r * j->ch, j->t + r * j->ch, j->ch)
		                       : xo_cpu_ce_row(j->p + r * j->ch, j->t + r * j->ch, j->ch);
}

static enum xo_status cpu_ce_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *c = ctx_of(be);
	struct ce_job j = {.p = xo_tensor_f32(a->src[0]), .t = xo_tensor_f32(a->src[1]),
			   .batch = a->p.batch, .ch = a->p.ch, .logits = a->p.from_logits};
	double total = 0.0;
	enum xo_status st;

	/* doubles in the shared scratch (64-byte aligned) */
	st = scratch_reserve(c, 2 * j.batch, 0, 0);
	if (st)
		return st;
	j.rows = (double *)(void *)c->shared.p;
	/* a log per row, ~ 50 multiply-adds' time per element */
	xo_cpu_threads_run(c->tp, threads_for(c, j.batch * j.ch * 50, j.batch), ce_task, &j);
	for (int64_t r = 0; r < j.batch; r++)
		total += j.rows[r];
	xo_tensor_f32(a->dst[0])[0] = (float)(-total / (double)a->p.batch);
	return XO_OK;
}

/* q_c = p_c / row sum as Keras's float32 holds it: the sum (f32-saturated
 * double) and the quotient rounded to float, so a q at a clip bound is the
 * one Keras sees. */
static double ce_q_f32(float pc, double s)
{
	return (double)(float)((double)pc / (double)(float)s);
}

void xo_cpu_ce_bwd_row(const float *pr, const float *tr, int64_t ch, double inv_n, float *d)
{
	double s = 0.0, w_sum = 0.0;

	for (int64_t c = 0; c < ch; c++)
		s = xo_cpu_f32_sat(s + (double)pr[c]);
	/* one division and compare per nonzero target: per row when one-hot */
	for (int64_t c = 0; c < ch; c++)
		if (tr[c] != 0.0f)
			w_sum += xo_cpu_clip_weight(ce_q_f32(pr[c], s)) * (double)tr[c];
	for (int64_t c = 0; c < ch; c++) {
		double w = tr[c] != 0.0f ? xo_cpu_clip_weight(ce_q_f32(pr[c], s)) : 0.0;

		d[c] = (float)(((double)pr[c] * w_sum - w * (double)tr[c]) * inv_n);
	}
}

/* dz row by row (xo_cpu_ce_bwd_row; parts change no bit). */
struct ce_bwd_job {
	const float *p, *t;
	float *dz;
	int64_t batch, ch;
	double inv;
	bool logits; /* p holds logits: ce_logits_bwd_row */
};

static void ce_bwd_task(void *arg, int t, int nt)
{
	const struct ce_bwd_job *j = arg;
	int64_t lo, hi;

	share(j->batch, t, nt, &lo, &hi);
	for (int64_t r = lo; r < hi; r++)
		if (j->logits)
			ce_logits_bwd_row(j->p + r * j->ch, j->t + r * j->ch, j->ch, j->inv,
					  j->dz + r * j->ch);
		else
			xo_cpu_ce_bwd_row(j->p + r * j->ch, j->t + r * j->ch, j->ch, j->inv,
					  j->dz + r * j->ch);
}

static enum xo_status cpu_ce_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *c = ctx_of(be);
	struct ce_bwd_job j = {.p = xo_tensor_f32(a->src[0]), .t = xo_tensor_f32(a->src[1]),
			       .dz = xo_tensor_f32(a->dst[0]), .batch = a->p.batch,
			       .ch = a->p.ch, .inv = 1.0 / (double)a->p.batch,
			       .logits = a->p.from_logits};

	/* ~0.5 ns per element on one core: weighted like 50 multiply-adds */
	xo_cpu_threads_run(c->tp, threads_for(c, j.batch * j.ch * 50, j.batch / 256 + 1),
			   ce_bwd_task, &j);
	return XO_OK;
}

/* Keras 3 Adam, as the reference: m' = m + (g - m)(1 - b1) and v' = v +
 * (g^2 - v)(1 - b2) rounded to float, then w' = w - lr_t m' / (sqrt(v') +
 * eps) with lr_t = lr sqrt(1 - b2^t) / (1 - b1^t), in double. Each parameter
 * is independent, so the parts (threads) do not change any bit. */
struct adam_job {
	const struct xo_cpu_kernels *k;
	const float *g;
	float *w, *m, *v;
	int64_t size;
	double lr_t, eps, c1, c2;
};

static void adam_task(void *arg, int t, int nt)
{
	const struct adam_job *j = arg;
	int64_t lo, hi;

	share(j->size, t, nt, &lo, &hi);
	if (hi > lo)
		j->k->adam(j->g + lo, j->w + lo, j->m + lo, j->v + lo, hi - lo, j->lr_t, j->eps,
			   j->c1, j->c2);
}

static enum xo_status cpu_adam(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	double t = (double)p->iteration, b1 = p->beta_1, b2 = p->beta_2;
	struct adam_job j = {
		.k = c->k, .g = xo_tensor_f32(a->src[0]), .w = xo_tensor_f32(a->dst[0]),
		.m = xo_tensor_f32(a->dst[1]), .v = xo_tensor_f32(a->dst[2]), .size = p->size,
		.lr_t = (double)p->lr * sqrt(1.0 - pow(b2, t)) / (1.0 - pow(b1, t)),
		.eps = (double)p->epsilon, .c1 = xo_adam_complement(p->beta_1),
		.c2 = xo_adam_complement(p->beta_2),
	};

	/* a square root and a division in double (vectorized: k->adam):
	 * ~100 multiply-adds' time */
	xo_cpu_threads_run(c->tp, threads_for(c, j.size * 100, j.size / 256 + 1), adam_task, &j);
	return XO_OK;
}

/* First maximum under `>`: a NaN first element wins, a later NaN never does. */
int64_t xo_cpu_argmax_row(const float *r, int64_t n)
{
	int64_t at = 0;
	float best = r[0];

	for (int64_t i = 1; i < n; i++) {
		bool gt = r[i] > best;

		at = gt ? i : at;
		best = gt ? r[i] : best;
	}
	return at;
}

/* Accuracy: idx[n] = argmax of row n of p; the parts count their correct
 * rows (integers: the total does not depend on the split). */
struct acc_job {
	const float *p, *t;
	int32_t *idx;
	int64_t batch, ch;
	int64_t correct[XO_CPU_MAX_THREADS];
};

static void acc_task(void *arg, int t, int nt)
{
	struct acc_job *j = arg;
	int64_t lo, hi, correct = 0;

	share(j->batch, t, nt, &lo, &hi);
	for (int64_t n = lo; n < hi; n++) {
		int64_t i = xo_cpu_argmax_row(j->p + n * j->ch, j->ch);

		j->idx[n] = (int32_t)i;
		correct += i == xo_cpu_argmax_row(j->t + n * j->ch, j->ch);
	}
	j->correct[t] = correct;
}

static enum xo_status cpu_accuracy(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *c = ctx_of(be);
	struct acc_job j = {.p = xo_tensor_f32(a->src[0]), .t = xo_tensor_f32(a->src[1]),
			    .idx = xo_tensor_i32(a->dst[0]), .batch = a->p.batch, .ch = a->p.ch};
	int64_t correct = 0;
	int nt = threads_for(c, j.batch * j.ch * 30, j.batch);

	xo_cpu_threads_run(c->tp, nt, acc_task, &j);
	for (int t = 0; t < nt; t++)
		correct += j.correct[t];
	xo_tensor_f32(a->dst[1])[0] = (float)correct;
	return XO_OK;
}

/* Gather: rows idx[n] of x into row n of y (indices checked first). */
struct gather_job {
	const float *x;
	const int32_t *idx;
	float *y;
	int64_t batch, ch;
};

static void gather_task(void *arg, int t, int nt)
{
	const struct gather_job *j = arg;
	int64_t lo, hi;

	share(j->batch, t, nt, &lo, &hi);
	for (int64_t n = lo; n < hi; n++)
		memcpy(j->y + n * j->ch, j->x + (int64_t)j->idx[n] * j->ch,
		       (size_t)j->ch * sizeof(float));
}

enum xo_status xo_cpu_index_check(const int32_t *idx, int64_t n, int64_t rows)
{
	for (int64_t i = 0; i < n; i++)
		if (idx[i] < 0 || idx[i] >= rows)
			return xo_error(XO_EINVAL, "gather: index[%" PRId64 "]=%d outside 0..%" PRId64,
					i, idx[i], rows - 1);
	return XO_OK;
}

static enum xo_status cpu_gather(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *c = ctx_of(be);
	struct gather_job j = {.x = xo_tensor_f32(a->src[0]), .idx = xo_tensor_i32(a->src[1]),
			       .y = xo_tensor_f32(a->dst[0]), .batch = a->p.batch, .ch = a->p.ch};

	enum xo_status st = xo_cpu_index_check(j.idx, j.batch, a->p.rows);

	if (st)
		return st;
	/* random rows from a large table: weighted like 32 multiply-adds a float */
	xo_cpu_threads_run(c->tp, threads_for(c, j.batch * j.ch * 32, j.batch), gather_task, &j);
	return XO_OK;
}

/* ---- the table's entries (cpu_backend.c) ------------------------------------------------------ */

XO_CPU_ENTRY(conv1d, fwd, cpu_conv1d_fwd)
XO_CPU_ENTRY(conv1d, bwd, cpu_conv1d_bwd)
XO_CPU_ENTRY(max_pooling1d, fwd, cpu_pool_fwd)
XO_CPU_ENTRY(max_pooling1d, bwd, cpu_pool_bwd)
XO_CPU_ENTRY(dense, fwd, cpu_dense_fwd)
XO_CPU_ENTRY(dense, bwd, cpu_dense_bwd)
XO_CPU_ENTRY(relu, fwd, cpu_relu_fwd)
XO_CPU_ENTRY(relu, bwd, cpu_relu_bwd)
XO_CPU_ENTRY(sigmoid, fwd, cpu_sigmoid_fwd)
XO_CPU_ENTRY(sigmoid, bwd, cpu_sigmoid_bwd)
XO_CPU_ENTRY(softmax, fwd, cpu_softmax_fwd)
XO_CPU_ENTRY(softmax, bwd, cpu_softmax_bwd)
XO_CPU_ENTRY(tanh, fwd, cpu_tanh_fwd)
XO_CPU_ENTRY(tanh, bwd, cpu_tanh_bwd)
XO_CPU_ENTRY(elu, fwd, cpu_elu_fwd)
XO_CPU_ENTRY(elu, bwd, cpu_elu_bwd)
XO_CPU_ENTRY(gelu, fwd, cpu_gelu_fwd)
XO_CPU_ENTRY(gelu, bwd, cpu_gelu_bwd)
XO_CPU_ENTRY(softplus, fwd, cpu_softplus_fwd)
XO_CPU_ENTRY(softplus, bwd, cpu_softplus_bwd)
XO_CPU_ENTRY(flatten, fwd, cpu_flatten)
XO_CPU_ENTRY(flatten, bwd, cpu_flatten)
XO_CPU_ENTRY(dropout, fwd, dropout_common)
XO_CPU_ENTRY(dropout, bwd, dropout_common)
XO_CPU_ENTRY(categorical_crossentropy, fwd, cpu_ce_fwd)
XO_CPU_ENTRY(categorical_crossentropy, bwd, cpu_ce_bwd)
XO_CPU_ENTRY(adam, fwd, cpu_adam)
XO_CPU_ENTRY(accuracy, fwd, cpu_accuracy)
XO_CPU_ENTRY(gather, fwd, cpu_gather)
XO_CPU_ENTRY(relu6, fwd, cpu_relu6_fwd)
XO_CPU_ENTRY(relu6, bwd, cpu_relu6_bwd)
XO_CPU_ENTRY(hard_sigmoid, fwd, cpu_hard_sigmoid_fwd)
XO_CPU_ENTRY(hard_sigmoid, bwd, cpu_hard_sigmoid_bwd)
XO_CPU_ENTRY(rescaling, fwd, cpu_rescaling_fwd)
XO_CPU_ENTRY(rescaling, bwd, cpu_rescaling_bwd)
XO_CPU_ENTRY(leaky_relu, fwd, cpu_leaky_relu_fwd)
XO_CPU_ENTRY(leaky_relu, bwd, cpu_leaky_relu_bwd)
XO_CPU_ENTRY(silu, fwd, cpu_silu_fwd)
XO_CPU_ENTRY(silu, bwd, cpu_silu_bwd)
XO_CPU_ENTRY(log_softmax, fwd, cpu_log_softmax_fwd)
XO_CPU_ENTRY(log_softmax, bwd, cpu_log_softmax_bwd)

/* ---- FMA peak --------------------------------------------------------------------------------- */

/* Timed in the thread's own CPU time: time the scheduler gives another
 * process is not time the core was slow, and on a shared machine wall time
 * under-measured the peak (the kernels then showed above 100% of it). */
double xo_cpu_fma_peak(enum xo_cpu_isa isa, double seconds)
{
	const struct xo_cpu_kernels *k = xo_cpu_kernels_for(isa);
	struct timespec t0, t1;
	volatile float sink;
	int64_t iters = 1000;
	double dt = 0.0;

	for (;;) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		sink = k->fma_loop(iters);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
		dt = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
		if (dt >= seconds || iters > ((int64_t)1 << 40))
			break;
		iters *= dt > 0.0 && seconds / dt < 100.0 ? 2 : 10;
	}
	(void)sink;
	return 2.0 * XO_CPU_FMA_CHAINS * (double)k->vw * (double)iters / dt;
}
