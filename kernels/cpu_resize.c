/*
 * cpu_resize.c - cpu kernels of the ops that change the spatial extent of a
 * channels-last tensor by moving values (ops.def): pad (zero padding and
 * cropping with signed margins), up_sampling (nearest), permute and flip
 * (the time axis reversed).
 *
 * pad: each destination row (n, i) of [dw][ch] floats is one zero run, one
 * memcpy of the source cells that land in it and one more zero run.
 * up_sampling: forward a memcpy per destination cell; backward each dx cell
 * the float sum of its repeats * repeats_w gradients in ops.def's order.
 * Destination rows are split between threads in contiguous ranges, so the
 * results do not depend on the thread count (the copies are the
 * reference's bits).
 */
#include <string.h>

#include "cpu.h"

/* dst[n][i][j][c] = src[n][i - bh][j - bw][c] inside src [sh][sw], else 0. */
struct shift_job {
	const float *src;
	float *dst;
	int64_t rows; /* batch * dh */
	int64_t sh, sw, dh, dw, bh, bw, ch;
};

static void shift_task(void *arg, int t, int nt)
{
	const struct shift_job *j = arg;
	int64_t lo = j->rows * t / nt, hi = j->rows * (t + 1) / nt;
	/* The destination columns [j0, j1) that read a source column. */
	int64_t j0 = j->bw > 0 ? j->bw : 0;
	int64_t j1 = j->sw + j->bw < j->dw ? j->sw + j->bw : j->dw;
	size_t cell = (size_t)j->ch * sizeof(float);

	if (j1 < j0)
		j1 = j0;
	for (int64_t r = lo; r < hi; r++) {
		int64_t n = r / j->dh, i = r % j->dh, si = i - j->bh;
		float *d = j->dst + r * j->dw * j->ch;

		if (si < 0 || si >= j->sh || j1 == j0) {
			memset(d, 0, (size_t)j->dw * cell);
			continue;
		}
		memset(d, 0, (size_t)j0 * cell);
		memcpy(d + j0 * j->ch, j->src + ((n * j->sh + si) * j->sw + j0 - j->bw) * j->ch,
		       (size_t)(j1 - j0) * cell);
		memset(d + j1 * j->ch, 0, (size_t)(j->dw - j1) * cell);
	}
}

/* Threads by xo_cpu_threads_for, one float move counted as one unit of work. */
static void shift_run(struct xo_cpu_ctx *c, struct shift_job *j)
{
	int nt = xo_cpu_threads_for(c, j->rows * j->dw * j->ch, j->rows);

	xo_cpu_threads_run(c->tp, nt, shift_task, j);
}

static enum xo_status cpu_pad(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	const struct xo_params *p = &a->p;
	int64_t oh = p->len + p->pad_begin + p->pad_end;
	int64_t ow = p->width + p->pad_begin_w + p->pad_end_w;
	struct shift_job j = {.src = xo_tensor_f32(a->src[0]),
			      .dst = xo_tensor_f32(a->dst[0]),
			      .sh = bwd ? oh : p->len,
			      .sw = bwd ? ow : p->width,
			      .dh = bwd ? p->len : oh,
			      .dw = bwd ? p->width : ow,
			      .bh = bwd ? -p->pad_begin : p->pad_begin,
			      .bw = bwd ? -p->pad_begin_w : p->pad_begin_w,
			      .ch = p->ch};

	j.rows = p->batch * j.dh;
	shift_run(be->ctx, &j);
	return XO_OK;
}

enum xo_status xo_cpu_pad_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_pad(be, a, false);
}

enum xo_status xo_cpu_pad_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_pad(be, a, true);
}

/* up_sampling: dst rows [rows * t / nt, ...) of the direction's destination */
struct up_job {
	const float *src;
	float *dst;
	int64_t batch, len, width, ch, r, rw;
};

/* y[n][i][j] = x[n][i / r][j / rw]: rows (n, i) of y */
static void up_fwd_task(void *arg, int t, int nt)
{
	const struct up_job *u = arg;
	int64_t oh = u->len * u->r, ow = u->width * u->rw, rows = u->batch * oh;
	int64_t lo = rows * t / nt, hi = rows * (t + 1) / nt;

	for (int64_t row = lo; row < hi; row++) {
		int64_t n = row / oh, i = row % oh;
		const float *s = u->src + (n * u->len + i / u->r) * u->width * u->ch;
		float *d = u->dst + row * ow * u->ch;

		for (int64_t j = 0; j < ow; j++)
			memcpy(d + j * u->ch, s + (j / u->rw) * u->ch, (size_t)u->ch * sizeof(float));
	}
}

/* dx[n][i][j] = sum over a, b (a outer) of dy[n][i * r + a][j * rw + b]: rows (n, i) of dx */
static void up_bwd_task(void *arg, int t, int nt)
{
	const struct up_job *u = arg;
	int64_t oh = u->len * u->r, ow = u->width * u->rw, rows = u->batch * u->len;
	int64_t lo = rows * t / nt, hi = rows * (t + 1) / nt, ch = u->ch;

	for (int64_t row = lo; row < hi; row++) {
		int64_t n = row / u->len, i = row % u->len;
		float *d = u->dst + row * u->width * ch;

		for (int64_t j = 0; j < u->width; j++) {
			float *dj = d + j * ch;

			for (int64_t a = 0; a < u->r; a++)
				for (int64_t b = 0; b < u->rw; b++) {
					const float *s =
					    u->src + ((n * oh + i * u->r + a) * ow + j * u->rw + b) * ch;

					if (a == 0 && b == 0)
						memcpy(dj, s, (size_t)ch * sizeof(float));
					else
						for (int64_t c = 0; c < ch; c++)
							dj[c] += s[c];
				}
		}
	}
}

static enum xo_status cpu_up_sampling(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	const struct xo_params *p = &a->p;
	struct xo_cpu_ctx *c = be->ctx;
	struct up_job u = {.src = xo_tensor_f32(a->src[0]),
			   .dst = xo_tensor_f32(a->dst[0]),
			   .batch = p->batch,
			   .len = p->len,
			   .width = p->width,
			   .ch = p->ch,
			   .r = p->repeats,
			   .rw = p->repeats_w};
	int64_t rows = p->batch * (bwd ? p->len : p->len * p->repeats);
	int nt = xo_cpu_threads_for(c, (int64_t)a->dst[0]->nelem * p->repeats * p->repeats_w, rows);

	xo_cpu_threads_run(c->tp, nt, bwd ? up_bwd_task : up_fwd_task, &u);
	return XO_OK;
}

enum xo_status xo_cpu_up_sampling_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_up_sampling(be, a, false);
}

enum xo_status xo_cpu_up_sampling_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_up_sampling(be, a, true);
}

/* permute: src [batch][s0][s1][s2], dst axis k is src axis q[k]; dst rows
 * (n, i0) of [o1][o2] floats split between threads in contiguous ranges.
 * The innermost loop walks dst contiguously and src by its stride on axis
 * q[2] (a memcpy when that axis is src's last). */
struct perm_job {
	const float *src;
	float *dst;
	int64_t rows, o0, o1, o2, per, st0, st1, st2;
};

static void perm_task(void *arg, int t, int nt)
{
	const struct perm_job *j = arg;
	int64_t lo = j->rows * t / nt, hi = j->rows * (t + 1) / nt;

	for (int64_t r = lo; r < hi; r++) {
		int64_t n = r / j->o0, i0 = r % j->o0;
		const float *s0 = j->src + n * j->per + i0 * j->st0;
		float *d = j->dst + r * j->o1 * j->o2;

		for (int64_t i1 = 0; i1 < j->o1; i1++, d += j->o2) {
			const float *s = s0 + i1 * j->st1;

			if (j->st2 == 1) {
				memcpy(d, s, (size_t)j->o2 * sizeof(float));
				continue;
			}
			for (int64_t i2 = 0; i2 < j->o2; i2++)
				d[i2] = s[i2 * j->st2];
		}
	}
}

static enum xo_status cpu_permute(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	const struct xo_params *p = &a->p;
	struct xo_cpu_ctx *c = be->ctx;
	int64_t x[3] = {p->len, p->width, p->ch}, sz[3], stride[3];
	int q[3], m[3];
	enum xo_status st = xo_permute_axes(p->dims, q);
	struct perm_job j;
	int nt;

	if (st)
		return st;
	for (int k = 0; k < 3; k++) {
		sz[k] = bwd ? x[q[k]] : x[k];
		if (bwd)
			m[q[k]] = k;
		else
			m[k] = q[k];
	}
	stride[0] = sz[1] * sz[2];
	stride[1] = sz[2];
	stride[2] = 1;
	j = (struct perm_job){.src = xo_tensor_f32(a->src[0]),
			      .dst = xo_tensor_f32(a->dst[0]),
			      .o0 = sz[m[0]],
			      .o1 = sz[m[1]],
			      .o2 = sz[m[2]],
			      .per = sz[0] * sz[1] * sz[2],
			      .st0 = stride[m[0]],
			      .st1 = stride[m[1]],
			      .st2 = stride[m[2]]};
	j.rows = p->batch * j.o0;
	nt = xo_cpu_threads_for(c, p->batch * j.per, j.rows);
	xo_cpu_threads_run(c->tp, nt, perm_task, &j);
	return XO_OK;
}

enum xo_status xo_cpu_permute_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_permute(be, a, false);
}

enum xo_status xo_cpu_permute_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_permute(be, a, true);
}

/* flip: dst[n][t] = src[n][len - 1 - t], one memcpy of ch floats per
 * destination row; rows (n, t) split between threads in contiguous ranges.
 * The same move serves both directions (the flip is its own inverse). */
struct flip_job {
	const float *src;
	float *dst;
	int64_t rows, len, ch;
};

static void flip_task(void *arg, int t, int nt)
{
	const struct flip_job *j = arg;
	int64_t lo = j->rows * t / nt, hi = j->rows * (t + 1) / nt;
	size_t row = (size_t)j->ch * sizeof(float);

	for (int64_t r = lo; r < hi; r++) {
		int64_t n = r / j->len, i = r % j->len;

		memcpy(j->dst + r * j->ch, j->src + (n * j->len + (j->len - 1 - i)) * j->ch, row);
	}
}

static enum xo_status cpu_flip(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cpu_ctx *c = be->ctx;
	struct flip_job j = {.src = xo_tensor_f32(a->src[0]),
			     .dst = xo_tensor_f32(a->dst[0]),
			     .rows = p->batch * p->len,
			     .len = p->len,
			     .ch = p->ch};
	int nt = xo_cpu_threads_for(c, j.rows * p->ch, j.rows);

	xo_cpu_threads_run(c->tp, nt, flip_task, &j);
	return XO_OK;
}

enum xo_status xo_cpu_flip_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_flip(be, a);
}

enum xo_status xo_cpu_flip_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_flip(be, a);
}
