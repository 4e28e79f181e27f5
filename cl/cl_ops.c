/*
 * cl_ops.c - every op of include/xo/ops.def on OpenCL, forward and backward:
 * argument marshalling and launches only, no host compute (the suites check
 * it). Ops return right after enqueueing; reads and sync wait.
 *
 * Launches per call: conv1d/dense fwd 1 (a softmax activation adds an
 * in-place row softmax launch, except on a dense head of few units); bwd 2
 * (dx, dw+db; no dx: 1), +1 when the dw sums are split into chunks, +1 dpre
 * launch for a softmax activation; every other op 1.
 * Where two kernels do one job, the fast one runs only when its
 * preconditions hold (STYLE rule 10): dense fwd tiled when batch and units
 * fill a tile; conv1d/dense dw+db one work-group per output when the
 * tuning row asks for it (GPUs) and the sums are at least a work-group long,
 * or (CPUs, dw_chunk) in chunks of samples then a sum of the chunks (+1
 * launch) when the batch is longer than a chunk.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "cl_internal.h"

static const char *const kernel_names[] = {
#define XO_CL_K(name) "xo_cl_" #name,
	XO_CL_KERNELS(XO_CL_K)
#undef XO_CL_K
};

static struct xo_cl_ctx *ctx_of(struct xo_backend *be)
{
	return be->ctx;
}

/* ---- launch helpers ------------------------------------------------------ */

static struct xo_cl_launch la_begin(struct xo_cl_ctx *c, enum xo_cl_kid kid)
{
	return (struct xo_cl_launch){.c = c, .kid = kid};
}

static void la_arg(struct xo_cl_launch *l, size_t size, const void *v)
{
	cl_int err = clSetKernelArg(l->c->kernel[l->kid], l->narg, size, v);

	if (err != CL_SUCCESS && l->err == CL_SUCCESS) {
		l->err = err;
		l->bad_arg = l->narg;
	}
	l->narg++;
}

static void la_int(struct xo_cl_launch *l, int64_t v)
{
	cl_int i = (cl_int)v;

	XO_ASSERT(v >= INT_MIN && v <= INT_MAX); /* alloc caps tensors at INT_MAX */
	la_arg(l, sizeof(i), &i);
}

static void la_uint(struct xo_cl_launch *l, uint32_t v)
{
	cl_uint u = v;

	la_arg(l, sizeof(u), &u);
}

static void la_float(struct xo_cl_launch *l, float v)
{
	cl_float f = v;

	la_arg(l, sizeof(f), &f);
}

static void la_mem(struct xo_cl_launch *l, cl_mem m)
{
	la_arg(l, sizeof(m), &m);
}

/* A tensor as (buffer, element offset); a NULL tensor passes `fallback` (never
 * dereferenced by the kernel) so every argument is a valid buffer. */
static void la_tensor(struct xo_cl_launch *l, const struct xo_tensor *t,
		      const struct xo_tensor *fallback)
{
	if (!t)
		t = fallback;
	la_mem(l, (cl_mem)t->data);
	la_int(l, t ? t->offset : 0);
}

/* Runs the kernel over `items` work-items (dims 1) or a gx x gy grid of
 * local lx x ly (dims 2), recording its event for op/dir. */
static enum xo_status la_run2(struct xo_cl_launch *l, cl_uint dims, const size_t *global,
			      const size_t *local, enum xo_op op, enum xo_dir dir)
{
	struct xo_cl_ctx *c = l->c;
	char what[128];
	cl_event ev;
	cl_int err;
	uint64_t t0;

	if (l->err != CL_SUCCESS) {
		snprintf(what, sizeof(what), "clSetKernelArg(%s, arg %u)", kernel_names[l->kid],
			 l->bad_arg);
		return xo_cl_fail(what, l->err);
	}
	t0 = xo_cl_now_ns();
	err = clEnqueueNDRangeKernel(c->queue, c->kernel[l->kid], dims, NULL, global, local, 0,
				     NULL, &ev);
	c->stats.enqueue_ns += xo_cl_now_ns() - t0;
	if (err != CL_SUCCESS) {
		snprintf(what, sizeof(what), "clEnqueueNDRangeKernel(%s)", kernel_names[l->kid]);
		return xo_cl_fail(what, err);
	}
	c->stats.launches++;
	c->stats.op_launches[op][dir]++;
	return xo_cl_track(c, ev, XO_CL_EV_KERNEL, (int)op, (int)dir);
}

/* 1-D launch over items, rounded up to the tuned work-group size. */
static enum xo_status la_run(struct xo_cl_launch *l, int64_t items, enum xo_op op,
			     enum xo_dir dir)
{
	size_t wg = l->c->tune.wg;
	size_t global;

	if (wg > l->c->kernel_wg[l->kid])
		wg = l->c->kernel_wg[l->kid];
	if (wg < 1)
		wg = 1;
	global = ((size_t)items + wg - 1) / wg * wg;
	return la_run2(l, 1, &global, &wg, op, dir);
}

/* A 2-D or 3-D range of items[0] x items[1] (x items[2]), dim 0 fastest:
 * the work-group takes the tuned size, split power-of-two-wise from dim 0
 * up (within the device's per-dimension limits), and each dim is rounded up
 * to its local size; kernels return for ids past their sizes. */
static enum xo_status la_run_nd(struct xo_cl_launch *l, cl_uint dims, const int64_t *items,
				enum xo_op op, enum xo_dir dir)
{
	size_t left = l->c->tune.wg, global[3], local[3];

	if (left > l->c->kernel_wg[l->kid])
		left = l->c->kernel_wg[l->kid];
	for (cl_uint d = 0; d < dims; d++) {
		size_t want = 1;

		while (want < (size_t)items[d] && want < left)
			want *= 2;
		if (want > left)
			want = left;
		if (want > l->c->max_item[d])
			want = l->c->max_item[d];
		if (want < 1)
			want = 1;
		local[d] = want;
		left /= want;
		global[d] = ((size_t)items[d] + want - 1) / want * want;
	}
	return la_run2(l, dims, global, local, op, dir);
}

/* One work-group of XO_RED_WG work-items (the reductions). */
static enum xo_status la_run_reduce(struct xo_cl_launch *l, enum xo_op op, enum xo_dir dir)
{
	size_t n = l->c->tune.red_wg;

	return la_run2(l, 1, &n, &n, op, dir);
}

/* groups work-groups of XO_RED_WG work-items (one per output). */
static enum xo_status la_run_groups(struct xo_cl_launch *l, int64_t groups, enum xo_op op,
				    enum xo_dir dir)
{
	size_t local = l->c->tune.red_wg;
	size_t global = (size_t)groups * local;

	return la_run2(l, 1, &global, &local, op, dir);
}

static cl_mem mem_of(const struct xo_tensor *t)
{
	return (cl_mem)t->data;
}

/* In-place row softmax of a (buffer, offset): the softmax activation of
 * conv1d/dense forward. */
static enum xo_status softmax_rows(struct xo_cl_ctx *c, struct xo_tensor *y, int64_t rows,
				   int64_t cols, enum xo_op op)
{
	struct xo_cl_launch l = la_begin(c, XO_CL_K_softmax_fwd);

	la_tensor(&l, y, NULL);
	la_tensor(&l, y, NULL);
	la_int(&l, rows);
	la_int(&l, cols);
	return la_run(&l, rows, op, XO_DIR_FWD);
}

/*
 * d loss / d pre-activation source of conv1d/dense backward. Elementwise
 * activations are recomputed inside the dx/dw kernels from (y, dy), so this
 * just passes them through; softmax needs the row dot product, so a dpre
 * buffer is made first and the kernels then see a linear activation.
 */
struct dpre {
	cl_mem y, dy;
	int64_t yo, dyo;
	int act;
};

static enum xo_status dpre_prepare(struct xo_cl_ctx *c, const struct xo_op_args *a,
				   int64_t rows, int64_t cols, enum xo_op op, struct dpre *d)
{
	const struct xo_tensor *y = a->src[2], *dy = a->src[3];
	struct xo_cl_launch l;
	enum xo_status st;
	cl_mem s;

	d->y = mem_of(y);
	d->yo = y->offset;
	d->dy = mem_of(dy);
	d->dyo = dy->offset;
	d->act = (int)a->p.activation;
	if (a->p.activation != XO_ACTIVATION_SOFTMAX)
		return XO_OK;
	st = xo_cl_scratch(c, 0, (size_t)(rows * cols) * 4, &s);
	if (st)
		return st;
	l = la_begin(c, XO_CL_K_softmax_bwd);
	la_tensor(&l, y, NULL);
	la_tensor(&l, dy, NULL);
	la_mem(&l, s);
	la_int(&l, 0);
	la_int(&l, rows);
	la_int(&l, cols);
	st = la_run(&l, rows, op, XO_DIR_BWD);
	d->dy = s;
	d->dyo = 0;
	d->act = XO_ACTIVATION_LINEAR;
	return st;
}

/* Second launch of a split dw: sums the nchunks partials of each of nout
 * outputs into dw (j < nw) and db. */
static enum xo_status sum_chunks(struct xo_cl_ctx *c, cl_mem part, int64_t nchunks, int64_t nout,
				 int64_t nw, struct xo_tensor *dw, struct xo_tensor *db,
				 enum xo_op op)
{
	struct xo_cl_launch l = la_begin(c, XO_CL_K_sum_chunks);

	la_mem(&l, part);
	la_int(&l, nchunks);
	la_int(&l, nout);
	la_int(&l, nw);
	la_tensor(&l, dw, NULL);
	la_tensor(&l, db, dw);
	return la_run(&l, nout, op, XO_DIR_BWD);
}

/* Chunks of the split dw kernels for nout outputs, 0 when the single-pass
 * kernels run (also when the partials would not fit int indexing). */
static int64_t dw_chunks(const struct xo_cl_ctx *c, int64_t batch, int64_t nout)
{
	int64_t chunk = c->tune.dw_chunk, n;

	if (c->tune.dw_wg || chunk < 1 || batch <= chunk)
		return 0;
	n = (batch + chunk - 1) / chunk;
	return n * nout <= INT_MAX ? n : 0;
}

/*
 * Launch pieces shared by conv1d and dense backward. Their dx, dw and split
 * dw kernels take the same arguments in the same order: a weight or input
 * tensor, the dpre source, the outputs, then the op's geometry ints with the
 * activation last (struct geo).
 */
struct geo {
	int64_t v[10];
	int n;
};

static void la_geo(struct xo_cl_launch *l, const struct geo *g)
{
	for (int i = 0; i < g->n; i++)
		la_int(l, g->v[i]);
}

static void la_dpre(struct xo_cl_launch *l, const struct dpre *d)
{
	la_mem(l, d->y);
	la_int(l, d->yo);
	la_mem(l, d->dy);
	la_int(l, d->dyo);
}

/* The dw kernels of one op: single pass, work-group per output, split. */
struct dw_kids {
	enum xo_cl_kid plain, wg, split;
};

/*
 * dw (j < nw) and db (nbias more outputs when dst[2] is set) of conv1d/dense
 * backward; terms is the length of each sum (the work-group variant's
 * precondition).
 */
static enum xo_status dw_run(struct xo_cl_ctx *c, const struct xo_op_args *a,
			     const struct dpre *d, const struct geo *g,
			     const struct dw_kids *k, int64_t nw, int64_t nbias, int64_t terms,
			     enum xo_op op)
{
	int64_t nout = nw + (a->dst[2] ? nbias : 0);
	/* CPUs: partial sums per chunk of samples, then their sum. */
	int64_t nchunks = dw_chunks(c, a->p.batch, nout);
	struct xo_cl_launch l;
	enum xo_status st;
	bool wg;

	if (nchunks) {
		cl_mem part;

		st = xo_cl_scratch(c, 1, (size_t)(nchunks * nout) * 4, &part);
		if (st)
			return st;
		l = la_begin(c, k->split);
		la_tensor(&l, a->src[0], NULL);
		la_dpre(&l, d);
		la_mem(&l, part);
		la_int(&l, nout);
		la_int(&l, c->tune.dw_chunk);
		la_geo(&l, g);
		st = la_run(&l, nchunks * nout, op, XO_DIR_BWD);
		if (st)
			return st;
		return sum_chunks(c, part, nchunks, nout, nw, a->dst[1], a->dst[2], op);
	}
	/* Work-group-per-output variant when each sum has a group's worth of
	 * terms and the device runs the group (STYLE rule 10). */
	wg = c->tune.dw_wg && terms >= (int64_t)c->tune.red_wg &&
	     c->kernel_wg[k->wg] >= c->tune.red_wg;
	l = la_begin(c, wg ? k->wg : k->plain);
	la_tensor(&l, a->src[0], NULL);
	la_dpre(&l, d);
	la_tensor(&l, a->dst[1], NULL);
	la_tensor(&l, a->dst[2], a->dst[1]);
	la_int(&l, a->dst[2] != NULL);
	la_geo(&l, g);
	return wg ? la_run_groups(&l, nout, op, XO_DIR_BWD) : la_run(&l, nout, op, XO_DIR_BWD);
}

/* dx of conv1d/dense backward over a dims-D range of items. */
static enum xo_status dx_run(struct xo_cl_ctx *c, const struct xo_op_args *a,
			     const struct dpre *d, const struct geo *g, enum xo_cl_kid kid,
			     cl_uint dims, const int64_t *items, enum xo_op op)
{
	struct xo_cl_launch l = la_begin(c, kid);

	la_tensor(&l, a->src[1], NULL);
	la_dpre(&l, d);
	la_tensor(&l, a->dst[0], NULL);
	la_geo(&l, g);
	return la_run_nd(&l, dims, items, op, XO_DIR_BWD);
}

/* ---- conv1d -------------------------------------------------------------- */

/* conv1d's geometry ints, as every conv1d kernel takes them. */
static struct geo conv1d_geo(const struct xo_params *p, int64_t pad, int64_t out, int act)
{
	return (struct geo){.v = {p->batch, p->len, p->ch, p->filters, p->kernel_size,
				  xo_conv1d_stride(p), p->dilation_rate, pad, out, act},
			    .n = 10};
}

enum xo_status xo_cl_conv1d_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = la_begin(c, XO_CL_K_conv1d_fwd);
	struct geo g;
	int64_t out, pad;
	bool softmax = p->activation == XO_ACTIVATION_SOFTMAX;
	enum xo_status st = xo_conv1d_geometry(p, &out, &pad);

	if (st)
		return st;
	g = conv1d_geo(p, pad, out, softmax ? XO_ACTIVATION_LINEAR : (int)p->activation);
	la_tensor(&l, a->src[0], NULL);
	la_tensor(&l, a->src[1], NULL);
	la_tensor(&l, a->src[2], a->src[0]);
	la_int(&l, a->src[2] != NULL);
	la_tensor(&l, a->dst[0], NULL);
	la_geo(&l, &g);
	st = la_run_nd(&l, 3, (int64_t[]){p->filters, out, p->batch}, XO_OP_conv1d, XO_DIR_FWD);
	if (st || !softmax)
		return st;
	return softmax_rows(c, a->dst[0], p->batch * out, p->filters, XO_OP_conv1d);
}

enum xo_status xo_cl_conv1d_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	static const struct dw_kids kids = {XO_CL_K_conv1d_bwd_dw, XO_CL_K_conv1d_bwd_dw__wg,
					    XO_CL_K_conv1d_bwd_dw__split};
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	struct dpre d;
	struct geo g;
	int64_t out, pad;
	enum xo_status st = xo_conv1d_geometry(p, &out, &pad);

	if (st)
		return st;
	st = dpre_prepare(c, a, p->batch * out, p->filters, XO_OP_conv1d, &d);
	if (st)
		return st;
	g = conv1d_geo(p, pad, out, d.act);
	if (a->dst[0]) {
		st = dx_run(c, a, &d, &g, XO_CL_K_conv1d_bwd_dx, 3,
			    (int64_t[]){p->ch, p->len, p->batch}, XO_OP_conv1d);
		if (st)
			return st;
	}
	return dw_run(c, a, &d, &g, &kids, p->kernel_size * p->ch * p->filters, p->filters,
		      p->batch * out, XO_OP_conv1d);
}

/* ---- max_pooling1d ------------------------------------------------------- */

/* fwd: src {x}, over the output steps; bwd: src {x, dy}, over the input
 * steps (each dx gathers from the windows it wins). */
static enum xo_status pool_run(struct xo_backend *be, const struct xo_op_args *a,
			       enum xo_dir dir)
{
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	bool bwd = dir == XO_DIR_BWD;
	struct xo_cl_launch l = la_begin(c, bwd ? XO_CL_K_max_pooling1d_bwd
						: XO_CL_K_max_pooling1d_fwd);
	int64_t out, pad;
	enum xo_status st = xo_pool1d_geometry(p, &out, &pad);

	if (st)
		return st;
	la_tensor(&l, a->src[0], NULL);
	if (bwd)
		la_tensor(&l, a->src[1], NULL);
	la_tensor(&l, a->dst[0], NULL);
	la_int(&l, p->batch);
	la_int(&l, p->len);
	la_int(&l, p->ch);
	la_int(&l, p->pool_size);
	la_int(&l, xo_pool1d_stride(p));
	la_int(&l, pad);
	la_int(&l, out);
	return la_run_nd(&l, 3, (int64_t[]){p->ch, bwd ? p->len : out, p->batch},
			 XO_OP_max_pooling1d, dir);
}

enum xo_status xo_cl_max_pooling1d_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return pool_run(be, a, XO_DIR_FWD);
}

enum xo_status xo_cl_max_pooling1d_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return pool_run(be, a, XO_DIR_BWD);
}

/* ---- dense --------------------------------------------------------------- */

enum xo_status xo_cl_dense_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	bool softmax = p->activation == XO_ACTIVATION_SOFTMAX;
	size_t tile = c->tune.tile;
	/* Tiled kernel preconditions: at least one full tile each way, and the
	 * device runs tile^2 work-items of it. */
	bool tiled = tile > 1 && p->batch >= (int64_t)tile && p->units >= (int64_t)tile &&
		     c->kernel_wg[XO_CL_K_dense_fwd__tiled] >= tile * tile;
	/* A small softmax head: matmul and softmax in one launch per row. */
	bool row = softmax && p->units <= (int64_t)c->tune.softmax_row_max;
	struct xo_cl_launch l = la_begin(c, row     ? XO_CL_K_dense_fwd__softmax
					    : tiled ? XO_CL_K_dense_fwd__tiled
						    : XO_CL_K_dense_fwd);
	enum xo_status st;

	la_tensor(&l, a->src[0], NULL);
	la_tensor(&l, a->src[1], NULL);
	la_tensor(&l, a->src[2], a->src[0]);
	la_int(&l, a->src[2] != NULL);
	la_tensor(&l, a->dst[0], NULL);
	la_int(&l, p->batch);
	la_int(&l, p->ch);
	la_int(&l, p->units);
	if (row)
		return la_run(&l, p->batch, XO_OP_dense, XO_DIR_FWD);
	la_int(&l, softmax ? XO_ACTIVATION_LINEAR : p->activation);
	if (tiled) {
		size_t global[2] = {((size_t)p->units + tile - 1) / tile * tile,
				    ((size_t)p->batch + tile - 1) / tile * tile};
		size_t local[2] = {tile, tile};

		st = la_run2(&l, 2, global, local, XO_OP_dense, XO_DIR_FWD);
	} else {
		st = la_run_nd(&l, 2, (int64_t[]){p->units, p->batch}, XO_OP_dense, XO_DIR_FWD);
	}
	if (st || !softmax)
		return st;
	return softmax_rows(c, a->dst[0], p->batch, p->units, XO_OP_dense);
}

enum xo_status xo_cl_dense_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	static const struct dw_kids kids = {XO_CL_K_dense_bwd_dw, XO_CL_K_dense_bwd_dw__wg,
					    XO_CL_K_dense_bwd_dw__split};
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	struct dpre d;
	struct geo g;
	enum xo_status st;

	st = dpre_prepare(c, a, p->batch, p->units, XO_OP_dense, &d);
	if (st)
		return st;
	g = (struct geo){.v = {p->batch, p->ch, p->units, d.act}, .n = 4};
	if (a->dst[0]) {
		st = dx_run(c, a, &d, &g, XO_CL_K_dense_bwd_dx, 2, (int64_t[]){p->ch, p->batch},
			    XO_OP_dense);
		if (st)
			return st;
	}
	return dw_run(c, a, &d, &g, &kids, p->ch * p->units, p->units, p->batch, XO_OP_dense);
}

/* ---- activations, flatten ------------------------------------------------ */

/* dst[0][i] = f(src[0][i]) (fwd) or f'(src[0], src[1]) (bwd), elementwise. */
static enum xo_status eltwise(struct xo_backend *be, const struct xo_op_args *a,
			      enum xo_cl_kid kid, enum xo_op op, enum xo_dir dir, int nsrc)
{
	struct xo_cl_launch l = la_begin(ctx_of(be), kid);
	int64_t n = a->dst[0]->nelem;

	for (int i = 0; i < nsrc; i++)
		la_tensor(&l, a->src[i], NULL);
	la_tensor(&l, a->dst[0], NULL);
	la_int(&l, n);
	return la_run(&l, n, op, dir);
}

enum xo_status xo_cl_relu_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return eltwise(be, a, XO_CL_K_relu_fwd, XO_OP_relu, XO_DIR_FWD, 1);
}

enum xo_status xo_cl_relu_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return eltwise(be, a, XO_CL_K_relu_bwd, XO_OP_relu, XO_DIR_BWD, 2);
}

enum xo_status xo_cl_sigmoid_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return eltwise(be, a, XO_CL_K_sigmoid_fwd, XO_OP_sigmoid, XO_DIR_FWD, 1);
}

enum xo_status xo_cl_sigmoid_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return eltwise(be, a, XO_CL_K_sigmoid_bwd, XO_OP_sigmoid, XO_DIR_BWD, 2);
}

enum xo_status xo_cl_flatten_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return eltwise(be, a, XO_CL_K_copy, XO_OP_flatten, XO_DIR_FWD, 1);
}

enum xo_status xo_cl_flatten_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return eltwise(be, a, XO_CL_K_copy, XO_OP_flatten, XO_DIR_BWD, 1);
}

static enum xo_status softmax_run(struct xo_backend *be, const struct xo_op_args *a,
				  enum xo_dir dir)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = la_begin(ctx_of(be), dir == XO_DIR_FWD ? XO_CL_K_softmax_fwd
								      : XO_CL_K_softmax_bwd);
	int64_t rows = p->batch * p->len;

	la_tensor(&l, a->src[0], NULL);
	if (dir == XO_DIR_BWD)
		la_tensor(&l, a->src[1], NULL);
	la_tensor(&l, a->dst[0], NULL);
	la_int(&l, rows);
	la_int(&l, p->ch);
	return la_run(&l, rows, XO_OP_softmax, dir);
}

enum xo_status xo_cl_softmax_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return softmax_run(be, a, XO_DIR_FWD);
}

enum xo_status xo_cl_softmax_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return softmax_run(be, a, XO_DIR_BWD);
}

/* ---- dropout ------------------------------------------------------------- */

static enum xo_status dropout_run(struct xo_backend *be, const struct xo_op_args *a,
				  enum xo_dir dir)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l;
	int64_t n = a->dst[0]->nelem;
	float scale;

	if (!p->training)
		return eltwise(be, a, XO_CL_K_copy, XO_OP_dropout, dir, 1);
	scale = 1.0f / (1.0f - p->rate);
	l = la_begin(ctx_of(be), XO_CL_K_dropout_apply);
	la_tensor(&l, a->src[0], NULL);
	la_tensor(&l, a->dst[0], NULL);
	la_int(&l, n);
	la_uint(&l, (uint32_t)p->seed);
	la_uint(&l, (uint32_t)(p->seed >> 32));
	la_uint(&l, (uint32_t)p->step);
	la_uint(&l, p->layer);
	la_float(&l, p->rate);
	la_float(&l, scale);
	return la_run(&l, (n + 3) / 4, XO_OP_dropout, dir);
}

enum xo_status xo_cl_dropout_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return dropout_run(be, a, XO_DIR_FWD);
}

enum xo_status xo_cl_dropout_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return dropout_run(be, a, XO_DIR_BWD);
}

/* ---- loss, accuracy ------------------------------------------------------ */

enum xo_status xo_cl_categorical_crossentropy_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_launch l = la_begin(ctx_of(be), XO_CL_K_categorical_crossentropy_fwd);

	la_tensor(&l, a->src[0], NULL);
	la_tensor(&l, a->src[1], NULL);
	la_tensor(&l, a->dst[0], NULL);
	la_int(&l, a->p.batch);
	la_int(&l, a->p.ch);
	return la_run_reduce(&l, XO_OP_categorical_crossentropy, XO_DIR_FWD);
}

enum xo_status xo_cl_categorical_crossentropy_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_launch l = la_begin(ctx_of(be), XO_CL_K_categorical_crossentropy_bwd);

	la_tensor(&l, a->src[0], NULL);
	la_tensor(&l, a->src[1], NULL);
	la_tensor(&l, a->dst[0], NULL);
	la_int(&l, a->p.batch);
	la_int(&l, a->p.ch);
	return la_run(&l, a->p.batch * a->p.ch, XO_OP_categorical_crossentropy, XO_DIR_BWD);
}

enum xo_status xo_cl_accuracy_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_launch l = la_begin(ctx_of(be), XO_CL_K_accuracy_fwd);

	la_tensor(&l, a->src[0], NULL);
	la_tensor(&l, a->src[1], NULL);
	la_tensor(&l, a->dst[0], NULL);
	la_tensor(&l, a->dst[1], NULL);
	la_int(&l, a->p.batch);
	la_int(&l, a->p.ch);
	return la_run_reduce(&l, XO_OP_accuracy, XO_DIR_FWD);
}

/* ---- adam, gather -------------------------------------------------------- */

enum xo_status xo_cl_adam_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = la_begin(ctx_of(be), XO_CL_K_adam_fwd);
	double t = (double)p->iteration;
	/* Keras 3: lr_t = lr * sqrt(1 - b2^t) / (1 - b1^t), in double, then float. */
	double lr_t = (double)p->lr * sqrt(1.0 - pow((double)p->beta_2, t)) /
		      (1.0 - pow((double)p->beta_1, t));

	la_tensor(&l, a->src[0], NULL);
	la_tensor(&l, a->dst[0], NULL);
	la_tensor(&l, a->dst[1], NULL);
	la_tensor(&l, a->dst[2], NULL);
	la_int(&l, p->size);
	la_float(&l, p->beta_1);
	la_float(&l, p->beta_2);
	la_float(&l, p->epsilon);
	la_float(&l, (float)lr_t);
	return la_run(&l, p->size, XO_OP_adam, XO_DIR_FWD);
}

enum xo_status xo_cl_gather_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_ctx *c = ctx_of(be);
	struct xo_cl_launch l = la_begin(c, XO_CL_K_gather_fwd);

	la_tensor(&l, a->src[0], NULL);
	la_tensor(&l, a->src[1], NULL);
	la_tensor(&l, a->dst[0], NULL);
	la_mem(&l, c->flag);
	la_int(&l, a->p.batch);
	la_int(&l, a->p.ch);
	la_int(&l, a->p.rows);
	c->gather_pending = true;
	return la_run_nd(&l, 2, (int64_t[]){a->p.ch, a->p.batch}, XO_OP_gather, XO_DIR_FWD);
}
