/*
 * cl_ops.c - every op of include/xo/ops.def on OpenCL, forward and backward:
 * argument marshalling and launches only, no host compute (the suites check
 * it). Ops return right after enqueueing; reads and sync wait.
 *
 * Launches per call: conv1d/dense fwd 1 (a softmax activation adds an
 * in-place row softmax launch, except on a dense head of few units); bwd 2
 * (dx, dw+db; no dx: 1), +1 when the dw sums are split into chunks, +1 dpre
 * launch for a softmax activation; simple_rnn, lstm, gru fwd 1 and bwd 2 (3 when
 * the tiled path splits the weight gradients) for any len (the loop over time
 * steps is inside the kernels); attention fwd 1, bwd 2 (query rows, then key
 * rows); every other op 1.
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

static struct xo_cl_ctx *ctx_of(struct xo_backend *be)
{
	return be->ctx;
}

/* ---- launch helpers ------------------------------------------------------ */

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
	return xo_cl_launch_run(l, 1, &global, &wg, op, dir);
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
	return xo_cl_launch_run(l, dims, global, local, op, dir);
}

/* One work-group of XO_RED_WG work-items (the reductions). */
static enum xo_status la_run_reduce(struct xo_cl_launch *l, enum xo_op op, enum xo_dir dir)
{
	size_t n = l->c->tune.red_wg;

	return xo_cl_launch_run(l, 1, &n, &n, op, dir);
}

/* groups work-groups of XO_RED_WG work-items (one per output). */
static enum xo_status la_run_groups(struct xo_cl_launch *l, int64_t groups, enum xo_op op,
				    enum xo_dir dir)
{
	size_t local = l->c->tune.red_wg;
	size_t global = (size_t)groups * local;

	return xo_cl_launch_run(l, 1, &global, &local, op, dir);
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
	struct xo_cl_launch l = xo_cl_launch_begin(c, XO_CL_K_softmax_fwd);

	xo_cl_arg_tensor(&l, y, NULL);
	xo_cl_arg_tensor(&l, y, NULL);
	xo_cl_arg_int(&l, rows);
	xo_cl_arg_int(&l, cols);
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
	l = xo_cl_launch_begin(c, XO_CL_K_softmax_bwd);
	xo_cl_arg_tensor(&l, y, NULL);
	xo_cl_arg_tensor(&l, dy, NULL);
	xo_cl_arg_mem(&l, s);
	xo_cl_arg_int(&l, 0);
	xo_cl_arg_int(&l, rows);
	xo_cl_arg_int(&l, cols);
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
	struct xo_cl_launch l = xo_cl_launch_begin(c, XO_CL_K_sum_chunks);

	xo_cl_arg_mem(&l, part);
	xo_cl_arg_int(&l, nchunks);
	xo_cl_arg_int(&l, nout);
	xo_cl_arg_int(&l, nw);
	xo_cl_arg_tensor(&l, dw, NULL);
	xo_cl_arg_tensor(&l, db, dw);
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
		xo_cl_arg_int(l, g->v[i]);
}

static void la_dpre(struct xo_cl_launch *l, const struct dpre *d)
{
	xo_cl_arg_mem(l, d->y);
	xo_cl_arg_int(l, d->yo);
	xo_cl_arg_mem(l, d->dy);
	xo_cl_arg_int(l, d->dyo);
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
		l = xo_cl_launch_begin(c, k->split);
		xo_cl_arg_tensor(&l, a->src[0], NULL);
		la_dpre(&l, d);
		xo_cl_arg_mem(&l, part);
		xo_cl_arg_int(&l, nout);
		xo_cl_arg_int(&l, c->tune.dw_chunk);
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
	l = xo_cl_launch_begin(c, wg ? k->wg : k->plain);
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	la_dpre(&l, d);
	xo_cl_arg_tensor(&l, a->dst[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[2], a->dst[1]);
	xo_cl_arg_int(&l, a->dst[2] != NULL);
	la_geo(&l, g);
	return wg ? la_run_groups(&l, nout, op, XO_DIR_BWD) : la_run(&l, nout, op, XO_DIR_BWD);
}

/* dx of conv1d/dense backward over a dims-D range of items. */
static enum xo_status dx_run(struct xo_cl_ctx *c, const struct xo_op_args *a,
			     const struct dpre *d, const struct geo *g, enum xo_cl_kid kid,
			     cl_uint dims, const int64_t *items, enum xo_op op)
{
	struct xo_cl_launch l = xo_cl_launch_begin(c, kid);

	xo_cl_arg_tensor(&l, a->src[1], NULL);
	la_dpre(&l, d);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
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
	struct xo_cl_launch l = xo_cl_launch_begin(c, XO_CL_K_conv1d_fwd);
	struct geo g;
	int64_t out, pad;
	bool softmax = p->activation == XO_ACTIVATION_SOFTMAX;
	enum xo_status st = xo_conv1d_geometry(p, &out, &pad);

	if (st)
		return st;
	g = conv1d_geo(p, pad, out, softmax ? XO_ACTIVATION_LINEAR : (int)p->activation);
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->src[2], a->src[0]);
	xo_cl_arg_int(&l, a->src[2] != NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
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

/* ---- conv2d (conv2d.cl) --------------------------------------------------- */

/* conv2d's geometry: the ints every conv2d kernel takes last (XO_G2D_ARGS). */
struct conv2d_geo {
	int64_t v[16];
	int64_t oh, ow;
};

static enum xo_status conv2d_geo_of(const struct xo_params *p, int act, struct conv2d_geo *g)
{
	struct xo_params q = xo_params_width_axis(p);
	int64_t pt, pl;
	enum xo_status st = xo_conv2d_geometry(p, &g->oh, &g->ow, &pt, &pl);

	if (st)
		return st;
	*g = (struct conv2d_geo){
	    .v = {p->batch, p->len, p->width, p->ch, p->filters, p->kernel_size, q.kernel_size,
		  xo_conv1d_stride(p), xo_conv1d_stride(&q), p->dilation_rate, q.dilation_rate, pt,
		  pl, g->oh, g->ow, act},
	    .oh = g->oh,
	    .ow = g->ow};
	return XO_OK;
}

static void la_geo2d(struct xo_cl_launch *l, const struct conv2d_geo *g)
{
	for (int i = 0; i < 16; i++)
		xo_cl_arg_int(l, g->v[i]);
}

enum xo_status xo_cl_conv2d_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(c, XO_CL_K_conv2d_fwd);
	bool softmax = p->activation == XO_ACTIVATION_SOFTMAX;
	struct conv2d_geo g;
	enum xo_status st =
	    conv2d_geo_of(p, softmax ? XO_ACTIVATION_LINEAR : (int)p->activation, &g);

	if (st)
		return st;
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->src[2], a->src[0]);
	xo_cl_arg_int(&l, a->src[2] != NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	la_geo2d(&l, &g);
	st = la_run_nd(&l, 3, (int64_t[]){p->filters, g.oh * g.ow, p->batch}, XO_OP_conv2d,
		       XO_DIR_FWD);
	if (st || !softmax)
		return st;
	return softmax_rows(c, a->dst[0], p->batch * g.oh * g.ow, p->filters, XO_OP_conv2d);
}

/* conv2d bwd: dx (when asked) gathers over (c, h*w, n); dw+db one work-item
 * per output. */
enum xo_status xo_cl_conv2d_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	struct xo_params q = xo_params_width_axis(p);
	struct conv2d_geo g;
	struct xo_cl_launch l;
	struct dpre d;
	int64_t nw = p->kernel_size * q.kernel_size * p->ch * p->filters;
	enum xo_status st = conv2d_geo_of(p, 0, &g);

	if (st)
		return st;
	st = dpre_prepare(c, a, p->batch * g.oh * g.ow, p->filters, XO_OP_conv2d, &d);
	if (st)
		return st;
	g.v[15] = d.act;
	if (a->dst[0]) {
		l = xo_cl_launch_begin(c, XO_CL_K_conv2d_bwd_dx);
		xo_cl_arg_tensor(&l, a->src[1], NULL);
		la_dpre(&l, &d);
		xo_cl_arg_tensor(&l, a->dst[0], NULL);
		la_geo2d(&l, &g);
		st = la_run_nd(&l, 3, (int64_t[]){p->ch, p->len * p->width, p->batch},
			       XO_OP_conv2d, XO_DIR_BWD);
		if (st)
			return st;
	}
	l = xo_cl_launch_begin(c, XO_CL_K_conv2d_bwd_dw);
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	la_dpre(&l, &d);
	xo_cl_arg_tensor(&l, a->dst[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[2], a->dst[1]);
	xo_cl_arg_int(&l, a->dst[2] != NULL);
	la_geo2d(&l, &g);
	return la_run(&l, nw + (a->dst[2] ? p->filters : 0), XO_OP_conv2d, XO_DIR_BWD);
}

/* ---- depthwise_conv2d (dwconv.cl) ---------------------------------------- */

/* depthwise_conv2d's geometry ints, as every dwconv.cl kernel takes them
 * last (XO_GDW_ARGS). */
static enum xo_status dwconv_geo_of(const struct xo_params *p, int act, struct conv2d_geo *g)
{
	struct xo_params q = xo_params_width_axis(p);
	int64_t pt, pl;
	enum xo_status st = xo_depthwise_conv2d_geometry(p, &g->oh, &g->ow, &pt, &pl);

	if (st)
		return st;
	*g = (struct conv2d_geo){
	    .v = {p->batch, p->len, p->width, p->ch, p->depth_multiplier, p->kernel_size,
		  q.kernel_size, xo_conv1d_stride(p), xo_conv1d_stride(&q), pt, pl, g->oh, g->ow,
		  act},
	    .oh = g->oh,
	    .ow = g->ow};
	return XO_OK;
}

static void la_geo_dw(struct xo_cl_launch *l, const struct conv2d_geo *g)
{
	for (int i = 0; i < 14; i++)
		xo_cl_arg_int(l, g->v[i]);
}

enum xo_status xo_cl_depthwise_conv2d_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(c, XO_CL_K_depthwise_conv2d_fwd);
	bool softmax = p->activation == XO_ACTIVATION_SOFTMAX;
	int64_t co = p->ch * p->depth_multiplier;
	struct conv2d_geo g;
	enum xo_status st =
	    dwconv_geo_of(p, softmax ? XO_ACTIVATION_LINEAR : (int)p->activation, &g);

	if (st)
		return st;
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->src[2], a->src[0]);
	xo_cl_arg_int(&l, a->src[2] != NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	la_geo_dw(&l, &g);
	st = la_run_nd(&l, 3, (int64_t[]){co, g.oh * g.ow, p->batch}, XO_OP_depthwise_conv2d,
		       XO_DIR_FWD);
	if (st || !softmax)
		return st;
	return softmax_rows(c, a->dst[0], p->batch * g.oh * g.ow, co, XO_OP_depthwise_conv2d);
}

/* depthwise_conv2d bwd: dx (when asked) gathers over (c, h*w, n); dw+db one
 * work-item per output. */
enum xo_status xo_cl_depthwise_conv2d_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	struct xo_params q = xo_params_width_axis(p);
	int64_t co = p->ch * p->depth_multiplier, nw = p->kernel_size * q.kernel_size * co;
	struct conv2d_geo g;
	struct xo_cl_launch l;
	struct dpre d;
	enum xo_status st = dwconv_geo_of(p, 0, &g);

	if (st)
		return st;
	st = dpre_prepare(c, a, p->batch * g.oh * g.ow, co, XO_OP_depthwise_conv2d, &d);
	if (st)
		return st;
	g.v[13] = d.act;
	if (a->dst[0]) {
		l = xo_cl_launch_begin(c, XO_CL_K_depthwise_conv2d_bwd_dx);
		xo_cl_arg_tensor(&l, a->src[1], NULL);
		la_dpre(&l, &d);
		xo_cl_arg_tensor(&l, a->dst[0], NULL);
		la_geo_dw(&l, &g);
		st = la_run_nd(&l, 3, (int64_t[]){p->ch, p->len * p->width, p->batch},
			       XO_OP_depthwise_conv2d, XO_DIR_BWD);
		if (st)
			return st;
	}
	l = xo_cl_launch_begin(c, XO_CL_K_depthwise_conv2d_bwd_dw);
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	la_dpre(&l, &d);
	xo_cl_arg_tensor(&l, a->dst[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[2], a->dst[1]);
	xo_cl_arg_int(&l, a->dst[2] != NULL);
	la_geo_dw(&l, &g);
	return la_run(&l, nw + (a->dst[2] ? co : 0), XO_OP_depthwise_conv2d, XO_DIR_BWD);
}

/* ---- conv2d_transpose (convt.cl) ----------------------------------------- */

/* conv2d_transpose's geometry ints, as every convt.cl kernel takes them last
 * (XO_GCT_ARGS). */
static enum xo_status convt_geo_of(const struct xo_params *p, int act, struct conv2d_geo *g)
{
	struct xo_params q = xo_params_width_axis(p);
	int64_t pt, pl;
	enum xo_status st = xo_conv2d_transpose_geometry(p, &g->oh, &g->ow, &pt, &pl);

	if (st)
		return st;
	*g = (struct conv2d_geo){
	    .v = {p->batch, p->len, p->width, p->ch, p->filters, p->kernel_size, q.kernel_size,
		  xo_conv1d_stride(p), xo_conv1d_stride(&q), pt, pl, g->oh, g->ow, act},
	    .oh = g->oh,
	    .ow = g->ow};
	return XO_OK;
}

enum xo_status xo_cl_conv2d_transpose_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(c, XO_CL_K_conv2d_transpose_fwd);
	bool softmax = p->activation == XO_ACTIVATION_SOFTMAX;
	struct conv2d_geo g;
	enum xo_status st =
	    convt_geo_of(p, softmax ? XO_ACTIVATION_LINEAR : (int)p->activation, &g);

	if (st)
		return st;
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->src[2], a->src[0]);
	xo_cl_arg_int(&l, a->src[2] != NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	la_geo_dw(&l, &g);
	st = la_run_nd(&l, 3, (int64_t[]){p->filters, g.oh * g.ow, p->batch},
		       XO_OP_conv2d_transpose, XO_DIR_FWD);
	if (st || !softmax)
		return st;
	return softmax_rows(c, a->dst[0], p->batch * g.oh * g.ow, p->filters,
			    XO_OP_conv2d_transpose);
}

/* conv2d_transpose bwd: dx (when asked) gathers over (c, h*w, n); dw+db one
 * work-item per output. */
enum xo_status xo_cl_conv2d_transpose_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	struct xo_params q = xo_params_width_axis(p);
	int64_t nw = p->kernel_size * q.kernel_size * p->filters * p->ch;
	struct conv2d_geo g;
	struct xo_cl_launch l;
	struct dpre d;
	enum xo_status st = convt_geo_of(p, 0, &g);

	if (st)
		return st;
	st = dpre_prepare(c, a, p->batch * g.oh * g.ow, p->filters, XO_OP_conv2d_transpose, &d);
	if (st)
		return st;
	g.v[13] = d.act;
	if (a->dst[0]) {
		l = xo_cl_launch_begin(c, XO_CL_K_conv2d_transpose_bwd_dx);
		xo_cl_arg_tensor(&l, a->src[1], NULL);
		la_dpre(&l, &d);
		xo_cl_arg_tensor(&l, a->dst[0], NULL);
		la_geo_dw(&l, &g);
		st = la_run_nd(&l, 3, (int64_t[]){p->ch, p->len * p->width, p->batch},
			       XO_OP_conv2d_transpose, XO_DIR_BWD);
		if (st)
			return st;
	}
	l = xo_cl_launch_begin(c, XO_CL_K_conv2d_transpose_bwd_dw);
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	la_dpre(&l, &d);
	xo_cl_arg_tensor(&l, a->dst[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[2], a->dst[1]);
	xo_cl_arg_int(&l, a->dst[2] != NULL);
	la_geo_dw(&l, &g);
	return la_run(&l, nw + (a->dst[2] ? p->filters : 0), XO_OP_conv2d_transpose, XO_DIR_BWD);
}

/* ---- max_pooling1d and average_pooling1d ---------------------------------- */

/* The windowed poolings. fwd: src {x}, over the output steps; bwd over the
 * input steps (each dx gathers from the windows holding it): max_pooling1d
 * takes src {x, dy} (the windows it wins), average_pooling1d src {dy} (dy /
 * count from each window). */
static enum xo_status window_pool_run(struct xo_backend *be, const struct xo_op_args *a,
				      enum xo_op op, enum xo_dir dir)
{
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	bool bwd = dir == XO_DIR_BWD, max = op == XO_OP_max_pooling1d;
	struct xo_cl_launch l = xo_cl_launch_begin(
	    c, max ? (bwd ? XO_CL_K_max_pooling1d_bwd : XO_CL_K_max_pooling1d_fwd)
		   : (bwd ? XO_CL_K_average_pooling1d_bwd : XO_CL_K_average_pooling1d_fwd));
	int64_t out, pad;
	enum xo_status st = xo_pool1d_geometry_of(op, p, &out, &pad);

	if (st)
		return st;
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	if (bwd && max)
		xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, p->batch);
	xo_cl_arg_int(&l, p->len);
	xo_cl_arg_int(&l, p->ch);
	xo_cl_arg_int(&l, p->pool_size);
	xo_cl_arg_int(&l, xo_pool1d_stride(p));
	xo_cl_arg_int(&l, pad);
	xo_cl_arg_int(&l, out);
	return la_run_nd(&l, 3, (int64_t[]){p->ch, bwd ? p->len : out, p->batch}, op, dir);
}

enum xo_status xo_cl_max_pooling1d_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return window_pool_run(be, a, XO_OP_max_pooling1d, XO_DIR_FWD);
}

enum xo_status xo_cl_max_pooling1d_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return window_pool_run(be, a, XO_OP_max_pooling1d, XO_DIR_BWD);
}

enum xo_status xo_cl_average_pooling1d_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return window_pool_run(be, a, XO_OP_average_pooling1d, XO_DIR_FWD);
}

enum xo_status xo_cl_average_pooling1d_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return window_pool_run(be, a, XO_OP_average_pooling1d, XO_DIR_BWD);
}

/* ---- the global poolings ----------------------------------------------------- */

/* Global poolings (1-D, and 2-D over len*width steps): fwd over (c, n); global average bwd over every dx
 * (c, l, n), masked (mask_zero) over columns (c, n), src {dy, ids}; global max bwd over columns
 * (c, n), src {x, dy}. */
static enum xo_status global_pool_run(struct xo_backend *be, const struct xo_op_args *a,
				      enum xo_op op, enum xo_dir dir, enum xo_cl_kid kid)
{
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(c, kid);
	bool two_d = op == XO_OP_global_average_pooling2d || op == XO_OP_global_max_pooling2d;
	bool all_dx = (op == XO_OP_global_average_pooling1d ||
		       op == XO_OP_global_average_pooling2d) && dir == XO_DIR_BWD && !p->mask_zero;
	/* 2-D: the len*width cells as steps (the slot sizes were validated, so
	 * the product fits) */
	int64_t len = two_d ? p->len * p->width : p->len;

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	if ((op == XO_OP_global_max_pooling1d || op == XO_OP_global_max_pooling2d) &&
	    dir == XO_DIR_BWD)
		xo_cl_arg_tensor(&l, a->src[1], NULL);
	if (op == XO_OP_global_average_pooling1d && p->mask_zero) /* ids (the _masked kernels) */
		xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, p->batch);
	xo_cl_arg_int(&l, len);
	xo_cl_arg_int(&l, p->ch);
	if (all_dx)
		return la_run_nd(&l, 3, (int64_t[]){p->ch, len, p->batch}, op, dir);
	return la_run_nd(&l, 2, (int64_t[]){p->ch, p->batch}, op, dir);
}

enum xo_status xo_cl_global_average_pooling1d_fwd(struct xo_backend *be,
						  const struct xo_op_args *a)
{
	return global_pool_run(be, a, XO_OP_global_average_pooling1d, XO_DIR_FWD,
			       a->p.mask_zero ? XO_CL_K_global_average_pooling1d_masked_fwd
					      : XO_CL_K_global_average_pooling1d_fwd);
}

enum xo_status xo_cl_global_average_pooling1d_bwd(struct xo_backend *be,
						  const struct xo_op_args *a)
{
	return global_pool_run(be, a, XO_OP_global_average_pooling1d, XO_DIR_BWD,
			       a->p.mask_zero ? XO_CL_K_global_average_pooling1d_masked_bwd
					      : XO_CL_K_global_average_pooling1d_bwd);
}

enum xo_status xo_cl_global_max_pooling1d_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return global_pool_run(be, a, XO_OP_global_max_pooling1d, XO_DIR_FWD,
			       XO_CL_K_global_max_pooling1d_fwd);
}

enum xo_status xo_cl_global_max_pooling1d_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return global_pool_run(be, a, XO_OP_global_max_pooling1d, XO_DIR_BWD,
			       XO_CL_K_global_max_pooling1d_bwd);
}

/* ---- the 2-D poolings (pool2d.cl; the global ones are pool.cl's over h*w) -- */

/* The windowed 2-D poolings: fwd over (c, out_h*out_w, n); bwd a gather over
 * (c, h*w, n), src {x, dy} (max) or {dy} (average). */
static enum xo_status window_pool2d_run(struct xo_backend *be, const struct xo_op_args *a,
					enum xo_op op, enum xo_dir dir)
{
	struct xo_cl_ctx *c = ctx_of(be);
	const struct xo_params *p = &a->p;
	bool bwd = dir == XO_DIR_BWD, max = op == XO_OP_max_pooling2d;
	struct xo_cl_launch l = xo_cl_launch_begin(
	    c, max ? (bwd ? XO_CL_K_max_pooling2d_bwd : XO_CL_K_max_pooling2d_fwd)
		   : (bwd ? XO_CL_K_average_pooling2d_bwd : XO_CL_K_average_pooling2d_fwd));
	struct xo_pool2d_geom g;
	enum xo_status st = xo_pool2d_geometry_of(op, p, &g);

	if (st)
		return st;
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	if (bwd && max)
		xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, p->batch);
	xo_cl_arg_int(&l, p->len);
	xo_cl_arg_int(&l, p->width);
	xo_cl_arg_int(&l, p->ch);
	xo_cl_arg_int(&l, g.pool_h);
	xo_cl_arg_int(&l, g.pool_w);
	xo_cl_arg_int(&l, g.stride_h);
	xo_cl_arg_int(&l, g.stride_w);
	xo_cl_arg_int(&l, g.pad_h);
	xo_cl_arg_int(&l, g.pad_w);
	xo_cl_arg_int(&l, g.out_h);
	xo_cl_arg_int(&l, g.out_w);
	return la_run_nd(&l, 3,
			 (int64_t[]){p->ch, bwd ? p->len * p->width : g.out_h * g.out_w,
				     p->batch},
			 op, dir);
}

enum xo_status xo_cl_max_pooling2d_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return window_pool2d_run(be, a, XO_OP_max_pooling2d, XO_DIR_FWD);
}

enum xo_status xo_cl_max_pooling2d_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return window_pool2d_run(be, a, XO_OP_max_pooling2d, XO_DIR_BWD);
}

enum xo_status xo_cl_average_pooling2d_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return window_pool2d_run(be, a, XO_OP_average_pooling2d, XO_DIR_FWD);
}

enum xo_status xo_cl_average_pooling2d_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return window_pool2d_run(be, a, XO_OP_average_pooling2d, XO_DIR_BWD);
}

/* Global 2-D: pool.cl's global kernels over the len*width cells of a
 * sample (row-major, as the 1-D steps), through global_pool_run. */
enum xo_status xo_cl_global_average_pooling2d_fwd(struct xo_backend *be,
						  const struct xo_op_args *a)
{
	return global_pool_run(be, a, XO_OP_global_average_pooling2d, XO_DIR_FWD,
				 XO_CL_K_global_average_pooling1d_fwd);
}

enum xo_status xo_cl_global_average_pooling2d_bwd(struct xo_backend *be,
						  const struct xo_op_args *a)
{
	return global_pool_run(be, a, XO_OP_global_average_pooling2d, XO_DIR_BWD,
				 XO_CL_K_global_average_pooling1d_bwd);
}

enum xo_status xo_cl_global_max_pooling2d_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return global_pool_run(be, a, XO_OP_global_max_pooling2d, XO_DIR_FWD,
				 XO_CL_K_global_max_pooling1d_fwd);
}

enum xo_status xo_cl_global_max_pooling2d_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return global_pool_run(be, a, XO_OP_global_max_pooling2d, XO_DIR_BWD,
				 XO_CL_K_global_max_pooling1d_bwd);
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
	struct xo_cl_launch l = xo_cl_launch_begin(c, row     ? XO_CL_K_dense_fwd__softmax
					    : tiled ? XO_CL_K_dense_fwd__tiled
						    : XO_CL_K_dense_fwd);
	enum xo_status st;

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->src[2], a->src[0]);
	xo_cl_arg_int(&l, a->src[2] != NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, p->batch);
	xo_cl_arg_int(&l, p->ch);
	xo_cl_arg_int(&l, p->units);
	if (row)
		return la_run(&l, p->batch, XO_OP_dense, XO_DIR_FWD);
	xo_cl_arg_int(&l, softmax ? XO_ACTIVATION_LINEAR : p->activation);
	if (tiled) {
		size_t global[2] = {((size_t)p->units + tile - 1) / tile * tile,
				    ((size_t)p->batch + tile - 1) / tile * tile};
		size_t local[2] = {tile, tile};

		st = xo_cl_launch_run(&l, 2, global, local, XO_OP_dense, XO_DIR_FWD);
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
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), kid);
	int64_t n = a->dst[0]->nelem;

	for (int i = 0; i < nsrc; i++)
		xo_cl_arg_tensor(&l, a->src[i], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, n);
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

/* tanh, elu (bwd from y), gelu, softplus, the clipped activations
 * (relu6, hard_sigmoid) and silu (bwd from x): act.cl, one work-item per element. */
#define CL_ACT(name)                                                                        \
	enum xo_status xo_cl_##name##_fwd(struct xo_backend *be, const struct xo_op_args *a) \
	{                                                                                   \
		return eltwise(be, a, XO_CL_K_##name##_fwd, XO_OP_##name, XO_DIR_FWD, 1);  \
	}                                                                                   \
	enum xo_status xo_cl_##name##_bwd(struct xo_backend *be, const struct xo_op_args *a) \
	{                                                                                   \
		return eltwise(be, a, XO_CL_K_##name##_bwd, XO_OP_##name, XO_DIR_BWD, 2);  \
	}
CL_ACT(tanh)
CL_ACT(gelu)
CL_ACT(softplus)
CL_ACT(relu6)
CL_ACT(hard_sigmoid)
CL_ACT(silu)
#undef CL_ACT

/* rescaling (act.cl): one work-item per element, the keys as kernel arguments */
static enum xo_status la_rescaling(struct xo_backend *be, const struct xo_op_args *a,
				   enum xo_dir dir)
{
	struct xo_cl_launch l = xo_cl_launch_begin(
		ctx_of(be), dir == XO_DIR_FWD ? XO_CL_K_rescaling_fwd : XO_CL_K_rescaling_bwd);
	int64_t n = a->dst[0]->nelem;

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, n);
	xo_cl_arg_float(&l, a->p.multiplier);
	if (dir == XO_DIR_FWD)
		xo_cl_arg_float(&l, a->p.offset);
	return la_run(&l, n, XO_OP_rescaling, dir);
}

enum xo_status xo_cl_rescaling_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_rescaling(be, a, XO_DIR_FWD);
}

enum xo_status xo_cl_rescaling_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_rescaling(be, a, XO_DIR_BWD);
}

/* elu and leaky_relu (act.cl): one work-item per element, the op's float
 * key (alpha, negative_slope) as the kernel's last argument; backward src
 * {s, dy} as ops.def says */
static enum xo_status la_scalar_act(struct xo_backend *be, const struct xo_op_args *a,
				    enum xo_op op, enum xo_dir dir, enum xo_cl_kid fwd,
				    enum xo_cl_kid bwd, float key)
{
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), dir == XO_DIR_FWD ? fwd : bwd);
	int64_t n = a->dst[0]->nelem;

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	if (dir == XO_DIR_BWD)
		xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, n);
	xo_cl_arg_float(&l, key);
	return la_run(&l, n, op, dir);
}

enum xo_status xo_cl_elu_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_scalar_act(be, a, XO_OP_elu, XO_DIR_FWD, XO_CL_K_elu_fwd, XO_CL_K_elu_bwd,
			     a->p.alpha);
}

enum xo_status xo_cl_elu_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_scalar_act(be, a, XO_OP_elu, XO_DIR_BWD, XO_CL_K_elu_fwd, XO_CL_K_elu_bwd,
			     a->p.alpha);
}

enum xo_status xo_cl_leaky_relu_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_scalar_act(be, a, XO_OP_leaky_relu, XO_DIR_FWD, XO_CL_K_leaky_relu_fwd,
			     XO_CL_K_leaky_relu_bwd, a->p.negative_slope);
}

enum xo_status xo_cl_leaky_relu_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_scalar_act(be, a, XO_OP_leaky_relu, XO_DIR_BWD, XO_CL_K_leaky_relu_fwd,
			     XO_CL_K_leaky_relu_bwd, a->p.negative_slope);
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
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), dir == XO_DIR_FWD ? XO_CL_K_softmax_fwd
								      : XO_CL_K_softmax_bwd);
	int64_t rows = p->batch * p->len;

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	if (dir == XO_DIR_BWD)
		xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, rows);
	xo_cl_arg_int(&l, p->ch);
	return la_run(&l, rows, XO_OP_softmax, dir);
}

/* log_softmax: act.cl, one work-item per row, as softmax */
static enum xo_status log_softmax_run(struct xo_backend *be, const struct xo_op_args *a,
				      enum xo_dir dir)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(
	    ctx_of(be), dir == XO_DIR_FWD ? XO_CL_K_log_softmax_fwd : XO_CL_K_log_softmax_bwd);
	int64_t rows = p->batch * p->len;

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	if (dir == XO_DIR_BWD)
		xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, rows);
	xo_cl_arg_int(&l, p->ch);
	return la_run(&l, rows, XO_OP_log_softmax, dir);
}

enum xo_status xo_cl_log_softmax_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return log_softmax_run(be, a, XO_DIR_FWD);
}

enum xo_status xo_cl_log_softmax_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return log_softmax_run(be, a, XO_DIR_BWD);
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
	l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_dropout_apply);
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, n);
	xo_cl_arg_uint(&l, (uint32_t)p->seed);
	xo_cl_arg_uint(&l, (uint32_t)(p->seed >> 32));
	xo_cl_arg_uint(&l, (uint32_t)p->step);
	xo_cl_arg_uint(&l, p->layer);
	xo_cl_arg_float(&l, p->rate);
	xo_cl_arg_float(&l, scale);
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
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_categorical_crossentropy_fwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, a->p.batch);
	xo_cl_arg_int(&l, a->p.ch);
	xo_cl_arg_int(&l, a->p.from_logits);
	return la_run_reduce(&l, XO_OP_categorical_crossentropy, XO_DIR_FWD);
}

enum xo_status xo_cl_categorical_crossentropy_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_categorical_crossentropy_bwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, a->p.batch);
	xo_cl_arg_int(&l, a->p.ch);
	xo_cl_arg_int(&l, a->p.from_logits);
	return la_run(&l, a->p.batch * a->p.ch, XO_OP_categorical_crossentropy, XO_DIR_BWD);
}

enum xo_status xo_cl_accuracy_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_accuracy_fwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[1], NULL);
	xo_cl_arg_int(&l, a->p.batch);
	xo_cl_arg_int(&l, a->p.ch);
	return la_run_reduce(&l, XO_OP_accuracy, XO_DIR_FWD);
}

/* ---- binary_crossentropy, mean_squared_error, binary_accuracy (loss.cl) -- */

/* src {p, t}, dst {one}: a one-work-group reduction over batch * ch (fwd),
 * or one item per element (bwd). */
static enum xo_status la_loss(struct xo_backend *be, const struct xo_op_args *a,
			      enum xo_cl_kid kid, enum xo_op op, enum xo_dir dir)
{
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), kid);
	int64_t total = a->p.batch * a->p.ch;

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, total);
	return dir == XO_DIR_BWD ? la_run(&l, total, op, dir) : la_run_reduce(&l, op, dir);
}

/* binary_crossentropy: la_loss's arguments and from_logits */
static enum xo_status la_bce(struct xo_backend *be, const struct xo_op_args *a,
			     enum xo_cl_kid kid, enum xo_dir dir)
{
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), kid);
	int64_t total = a->p.batch * a->p.ch;

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, total);
	xo_cl_arg_int(&l, a->p.from_logits);
	return dir == XO_DIR_BWD ? la_run(&l, total, XO_OP_binary_crossentropy, dir)
				 : la_run_reduce(&l, XO_OP_binary_crossentropy, dir);
}

enum xo_status xo_cl_binary_crossentropy_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_bce(be, a, XO_CL_K_binary_crossentropy_fwd, XO_DIR_FWD);
}

enum xo_status xo_cl_binary_crossentropy_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_bce(be, a, XO_CL_K_binary_crossentropy_bwd, XO_DIR_BWD);
}

enum xo_status xo_cl_mean_squared_error_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_mean_squared_error_fwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, a->p.batch * a->p.ch);
	xo_cl_arg_int(&l, a->p.ch); /* rows first, as Keras (loss.cl) */
	return la_run_reduce(&l, XO_OP_mean_squared_error, XO_DIR_FWD);
}

enum xo_status xo_cl_mean_squared_error_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_loss(be, a, XO_CL_K_mean_squared_error_bwd, XO_OP_mean_squared_error,
		       XO_DIR_BWD);
}

enum xo_status xo_cl_binary_accuracy_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_loss(be, a, XO_CL_K_binary_accuracy_fwd, XO_OP_binary_accuracy, XO_DIR_FWD);
}

/* sparse forms: src {p[batch][ch], t[batch] (i32)}, dst {one}; the
 * cross-entropy's kernels also take from_logits. */
static enum xo_status la_sparse(struct xo_backend *be, const struct xo_op_args *a,
				enum xo_cl_kid kid, enum xo_op op, enum xo_dir dir)
{
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), kid);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, a->p.batch);
	xo_cl_arg_int(&l, a->p.ch);
	if (op == XO_OP_sparse_categorical_crossentropy)
		xo_cl_arg_int(&l, a->p.from_logits);
	return dir == XO_DIR_BWD ? la_run(&l, a->p.batch * a->p.ch, op, dir)
				 : la_run_reduce(&l, op, dir);
}

enum xo_status xo_cl_sparse_categorical_crossentropy_fwd(struct xo_backend *be,
							 const struct xo_op_args *a)
{
	return la_sparse(be, a, XO_CL_K_sparse_categorical_crossentropy_fwd,
			 XO_OP_sparse_categorical_crossentropy, XO_DIR_FWD);
}

enum xo_status xo_cl_sparse_categorical_crossentropy_bwd(struct xo_backend *be,
							 const struct xo_op_args *a)
{
	return la_sparse(be, a, XO_CL_K_sparse_categorical_crossentropy_bwd,
			 XO_OP_sparse_categorical_crossentropy, XO_DIR_BWD);
}

enum xo_status xo_cl_sparse_categorical_accuracy_fwd(struct xo_backend *be,
						     const struct xo_op_args *a)
{
	return la_sparse(be, a, XO_CL_K_sparse_categorical_accuracy_fwd,
			 XO_OP_sparse_categorical_accuracy, XO_DIR_FWD);
}

/* ---- adam, gather -------------------------------------------------------- */

enum xo_status xo_cl_adam_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_adam_fwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[2], NULL);
	xo_cl_arg_int(&l, p->size);
	xo_cl_arg_float(&l, xo_adam_complement(p->beta_1));
	xo_cl_arg_float(&l, xo_adam_complement(p->beta_2));
	xo_cl_arg_float(&l, p->epsilon);
	xo_cl_arg_float(&l, xo_cl_adam_lr_t(p));
	return la_run(&l, p->size, XO_OP_adam, XO_DIR_FWD);
}

/* ---- sgd, rmsprop (opt.cl) ------------------------------------------------ */

enum xo_status xo_cl_sgd_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_sgd_fwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[1], NULL);
	xo_cl_arg_int(&l, p->size);
	xo_cl_arg_float(&l, p->lr);
	xo_cl_arg_float(&l, p->momentum);
	xo_cl_arg_int(&l, p->nesterov ? 1 : 0);
	return la_run(&l, p->size, XO_OP_sgd, XO_DIR_FWD);
}

/* mask_outer (attn.cl): one work-item per mask element; an absent source
 * passes the output's buffer, which the kernel does not read */
enum xo_status xo_cl_mask_outer_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_mask_outer_fwd);
	int64_t tk = xo_attention_len_kv(p);

	xo_cl_arg_tensor(&l, p->query_mask || p->value_mask ? a->src[0] : NULL, a->dst[0]);
	xo_cl_arg_tensor(&l, p->attention_mask ? a->src[1] : NULL, a->dst[0]);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, p->batch * p->len);
	xo_cl_arg_int(&l, p->len);
	xo_cl_arg_int(&l, tk);
	xo_cl_arg_int(&l, p->query_mask ? p->len : tk);
	xo_cl_arg_int(&l, p->query_mask);
	xo_cl_arg_int(&l, p->value_mask);
	xo_cl_arg_int(&l, p->attention_mask);
	return la_run_nd(&l, 2, (int64_t[]){tk, p->batch * p->len}, XO_OP_mask_outer, XO_DIR_FWD);
}

enum xo_status xo_cl_rmsprop_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_rmsprop_fwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[2], NULL);
	xo_cl_arg_int(&l, p->size);
	xo_cl_arg_float(&l, p->lr);
	xo_cl_arg_float(&l, p->rho);
	xo_cl_arg_float(&l, p->momentum);
	xo_cl_arg_float(&l, p->epsilon);
	return la_run(&l, p->size, XO_OP_rmsprop, XO_DIR_FWD);
}

enum xo_status xo_cl_gather_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	struct xo_cl_ctx *c = ctx_of(be);
	struct xo_cl_launch l = xo_cl_launch_begin(c, XO_CL_K_gather_fwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_mem(&l, c->flag);
	xo_cl_arg_int(&l, a->p.batch);
	xo_cl_arg_int(&l, a->p.ch);
	xo_cl_arg_int(&l, a->p.rows);
	c->gather_pending = true;
	return la_run_nd(&l, 2, (int64_t[]){a->p.ch, a->p.batch}, XO_OP_gather, XO_DIR_FWD);
}

/* ---- embedding (embed.cl): ids checked on the device, clamp-and-flag --------- */

static enum xo_status la_embedding(struct xo_backend *be, const struct xo_op_args *a,
				   enum xo_dir dir)
{
	struct xo_cl_ctx *c = ctx_of(be);
	bool bwd = dir == XO_DIR_BWD;
	struct xo_cl_launch l =
	    xo_cl_launch_begin(c, bwd ? XO_CL_K_embedding_bwd : XO_CL_K_embedding_fwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_mem(&l, c->flag);
	xo_cl_arg_int(&l, a->p.batch * a->p.len);
	xo_cl_arg_int(&l, a->p.ch);
	xo_cl_arg_int(&l, a->p.rows);
	c->gather_pending = true;
	return la_run_nd(&l, 2, (int64_t[]){a->p.ch, bwd ? a->p.rows : a->p.batch * a->p.len},
			 XO_OP_embedding, dir);
}

enum xo_status xo_cl_embedding_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_embedding(be, a, XO_DIR_FWD);
}

enum xo_status xo_cl_embedding_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_embedding(be, a, XO_DIR_BWD);
}

/* ---- batch_normalization (norm.cl): one work-item per channel --------------- */

enum xo_status xo_cl_batch_normalization_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_batch_normalization_fwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], a->src[0]);
	xo_cl_arg_int(&l, a->src[1] != NULL);
	xo_cl_arg_tensor(&l, a->src[2], a->src[0]);
	xo_cl_arg_int(&l, a->src[2] != NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[2], NULL);
	xo_cl_arg_int(&l, p->batch * p->len);
	xo_cl_arg_int(&l, p->ch);
	xo_cl_arg_int(&l, p->training);
	xo_cl_arg_float(&l, p->momentum);
	xo_cl_arg_float(&l, p->epsilon);
	return la_run(&l, p->ch, XO_OP_batch_normalization, XO_DIR_FWD);
}

enum xo_status xo_cl_batch_normalization_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_batch_normalization_bwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], a->src[0]);
	xo_cl_arg_int(&l, a->src[1] != NULL);
	xo_cl_arg_tensor(&l, a->src[2], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], a->src[0]);
	xo_cl_arg_int(&l, a->dst[0] != NULL);
	xo_cl_arg_tensor(&l, a->dst[1], a->src[0]);
	xo_cl_arg_int(&l, a->dst[1] != NULL);
	xo_cl_arg_tensor(&l, a->dst[2], a->src[0]);
	xo_cl_arg_int(&l, a->dst[2] != NULL);
	xo_cl_arg_int(&l, p->batch * p->len);
	xo_cl_arg_int(&l, p->ch);
	xo_cl_arg_float(&l, p->epsilon);
	return la_run(&l, p->ch, XO_OP_batch_normalization, XO_DIR_BWD);
}

/* ---- normalization (norm.cl): one work-item per element -------------------- */

static enum xo_status la_normalization(struct xo_backend *be, const struct xo_op_args *a,
				       enum xo_dir dir)
{
	struct xo_cl_launch l = xo_cl_launch_begin(
		ctx_of(be), dir == XO_DIR_FWD ? XO_CL_K_normalization_fwd : XO_CL_K_normalization_bwd);
	int64_t n = a->dst[0]->nelem;
	int ns = dir == XO_DIR_FWD ? 3 : 2;

	for (int s = 0; s < ns; s++)
		xo_cl_arg_tensor(&l, a->src[s], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, n);
	xo_cl_arg_int(&l, a->p.ch);
	xo_cl_arg_int(&l, a->p.invert);
	return la_run(&l, n, XO_OP_normalization, dir);
}

enum xo_status xo_cl_normalization_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_normalization(be, a, XO_DIR_FWD);
}

enum xo_status xo_cl_normalization_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_normalization(be, a, XO_DIR_BWD);
}

/* ---- simple_rnn, lstm, gru (rnn.cl) ----------------------------------------
 * The loop over time steps is inside the kernels: launches per call do not
 * grow with len. Two shapes (STYLE rule 10):
 * - tiles (the row's rnn_nb > 0, GPUs): one work-group per tile of nb
 *   samples, the state in local memory. fwd 1 launch; bwd 2 or 3: back
 *   through time per tile into scratch slot 0 (2 * units * gates floats per
 *   sample and step), then the weight gradients split over chunks of the
 *   batch * len (sample, step) rows into slot 1 and those partials summed
 *   in chunk order (or in one pass, 2 launches, when one pass already has
 *   enough work-items);
 * - one work-item per sample (rnn_nb = 0, PoCL's row, or when not even one
 *   sample's tile fits the local memory): fwd 1, bwd 2 (one work-item per
 *   weight gradient element summing every row).
 * Each sum has a fixed order (no atomics): results do not depend on timing. */

static int rnn_code(enum xo_op op)
{
	return op == XO_OP_lstm ? 1 : op == XO_OP_gru ? 2 : 0;
}

/* CL_DEVICE_MAX_COMPUTE_UNITS, at least 1. */
static int64_t rnn_compute_units(const struct xo_cl_ctx *c)
{
	cl_uint cu = 0;

	if (clGetDeviceInfo(c->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cu), &cu, NULL) !=
	        CL_SUCCESS ||
	    !cu)
		cu = 1;
	return cu;
}

/* Samples per work-group of a __wg kernel whose tile needs per_sample
 * floats of local memory each, 0 = run the general kernel: at most the
 * row's rnn_nb, at most batch / compute units rounded up (so that the
 * groups spread over the device: batch 32 on 132 SMs is 32 groups of one
 * sample), and what CL_DEVICE_LOCAL_MEM_SIZE holds. */
static int64_t rnn_tile(const struct xo_cl_ctx *c, int64_t batch, int64_t per_sample)
{
	cl_ulong local = 0;
	int64_t nb = c->tune.rnn_nb, cu = rnn_compute_units(c), fit;

	if (!nb)
		return 0;
	if (clGetDeviceInfo(c->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(local), &local, NULL) !=
	    CL_SUCCESS)
		return 0;
	fit = (int64_t)(local / 4) / per_sample;
	if (nb > (batch + cu - 1) / cu)
		nb = (batch + cu - 1) / cu;
	if (nb > fit)
		nb = fit;
	return nb < 1 ? 0 : nb;
}

/* The work-group size of a __wg kernel over items work-items' worth of
 * work per step: the row's wg within the kernel's limit, halved while half
 * of it still covers the items (not below 32, a warp). */
static size_t rnn_group(const struct xo_cl_ctx *c, enum xo_cl_kid kid, int64_t items)
{
	size_t wl = c->tune.wg;

	if (wl > c->kernel_wg[kid])
		wl = c->kernel_wg[kid];
	while (wl > 32 && (int64_t)(wl / 2) >= items)
		wl /= 2;
	return wl < 1 ? 1 : wl;
}

double xo_cl_rnn_lanes(struct xo_backend *be, enum xo_op op, const struct xo_params *p)
{
	struct xo_cl_ctx *c = ctx_of(be);
	int64_t G = xo_rnn_gates(op) * p->units, nb = rnn_tile(c, p->batch, G + 4 * p->units);
	double lanes;

	if (!nb)
		return 1; /* the general kernel: one work-item per sample */
	/* as rnn_fwd launches it: nb samples' G gate columns over the group */
	lanes = (double)rnn_group(c, XO_CL_K_rnn_fwd__wg, nb * G) / (double)nb;
	return lanes < (double)G ? lanes : (double)G;
}

/* The common arguments after the tensors: op, N, T, in, u, (seq,) back,
 * ra (, relu). */
static void rnn_args(struct xo_cl_launch *l, enum xo_op op, const struct xo_params *p,
		     bool seq_relu)
{
	xo_cl_arg_int(l, rnn_code(op));
	xo_cl_arg_int(l, p->batch);
	xo_cl_arg_int(l, p->len);
	xo_cl_arg_int(l, p->ch);
	xo_cl_arg_int(l, p->units);
	if (seq_relu)
		xo_cl_arg_int(l, p->return_sequences);
	xo_cl_arg_int(l, p->go_backwards);
	xo_cl_arg_int(l, op == XO_OP_gru && p->reset_after);
	if (seq_relu)
		xo_cl_arg_int(l, p->activation == XO_ACTIVATION_RELU);
}

/* The step mask's arguments (the ids of mask_zero=1 at src[slot], src[0]
 * standing in when absent), after rnn_args of the fwd and bwd_seq kernels. */
static void rnn_mask_args(struct xo_cl_launch *l, const struct xo_op_args *a, int slot)
{
	xo_cl_arg_tensor(l, a->p.mask_zero ? a->src[slot] : NULL, a->src[0]);
	xo_cl_arg_int(l, a->p.mask_zero);
	xo_cl_arg_int(l, a->p.zero_output_for_mask);
}

/* Runs a __wg kernel: groups of wl work-items, nb samples each, with
 * per_sample floats of local memory per sample as its last argument. */
static enum xo_status rnn_run_tiles(struct xo_cl_launch *l, const struct xo_params *p,
				    int64_t nb, int64_t per_sample, size_t wl, enum xo_op op,
				    enum xo_dir dir)
{
	size_t global = (size_t)((p->batch + nb - 1) / nb) * wl;

	xo_cl_arg_int(l, nb);
	xo_cl_arg(l, (size_t)(nb * per_sample) * 4, NULL);
	return xo_cl_launch_run(l, 1, &global, &wl, op, dir);
}

static enum xo_status rnn_fwd(struct xo_backend *be, enum xo_op op, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_ctx *c = ctx_of(be);
	int64_t G = xo_rnn_gates(op) * p->units, per = G + 4 * p->units;
	int64_t nb = rnn_tile(c, p->batch, per);
	struct xo_cl_launch l;
	cl_mem ws = NULL;

	/* The inference form (ws NULL, ops.def): the rows go to scratch slot
	 * 0 instead. The general kernel reads each step's state back from the
	 * row of the step before, so they are written either way; the model
	 * passes NULL on every backend alike, and host memory (the model's ws
	 * buffer) is what it saves. */
	if (!a->dst[1]) {
		enum xo_status st = xo_cl_scratch(
		    c, 0, (size_t)(p->batch * p->len * xo_rnn_ws_blocks(op) * p->units) * 4, &ws);

		if (st)
			return st;
	}
	l = xo_cl_launch_begin(c, nb ? XO_CL_K_rnn_fwd__wg : XO_CL_K_rnn_fwd);
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->src[2], NULL);
	xo_cl_arg_tensor(&l, a->src[3], a->src[0]);
	xo_cl_arg_int(&l, a->src[3] != NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	if (ws) {
		xo_cl_arg_mem(&l, ws);
		xo_cl_arg_int(&l, 0);
	} else {
		xo_cl_arg_tensor(&l, a->dst[1], NULL);
	}
	rnn_args(&l, op, p, true);
	rnn_mask_args(&l, a, 4);
	if (!nb)
		return la_run(&l, p->batch, op, XO_DIR_FWD);
	return rnn_run_tiles(&l, p, nb, per,
			     rnn_group(c, XO_CL_K_rnn_fwd__wg, nb * G), op, XO_DIR_FWD);
}

/* The weight gradients of the tiled path: chunks of the batch * len rows
 * so that about compute units * wg * 8 work-items run (a GPU's resident
 * threads), partials in scratch slot 1, then their sum in chunk order; one
 * pass (the general kernel) when a single chunk already has that many. */
static enum xo_status rnn_bwd_w_split(struct xo_cl_ctx *c, enum xo_op op,
				      const struct xo_op_args *a, cl_mem P, int64_t nbias,
				      bool *done)
{
	const struct xo_params *p = &a->p;
	int64_t G = xo_rnn_gates(op) * p->units, nw = p->ch * G, nu = p->units * G;
	int64_t ne = nw + nu + nbias, R = p->batch * p->len;
	int64_t want = rnn_compute_units(c) * (int64_t)c->tune.wg * 8;
	int64_t nq = (want + ne - 1) / ne, rows, items[2];
	struct xo_cl_launch l;
	enum xo_status st;
	cl_mem part;

	if (nq > R)
		nq = R;
	rows = nq > 0 ? (R + nq - 1) / nq : R;
	nq = rows > 0 ? (R + rows - 1) / rows : 1;
	*done = false;
	if (nq <= 1 || nq * ne > INT_MAX)
		return XO_OK;
	*done = true;
	st = xo_cl_scratch(c, 1, (size_t)(nq * ne) * 4, &part);
	if (st)
		return st;
	l = xo_cl_launch_begin(c, XO_CL_K_rnn_bwd_w__part);
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[3], NULL);
	xo_cl_arg_mem(&l, P);
	xo_cl_arg_mem(&l, part);
	xo_cl_arg_int(&l, rows);
	xo_cl_arg_int(&l, nbias);
	rnn_args(&l, op, p, false);
	items[0] = ne;
	items[1] = nq;
	st = la_run_nd(&l, 2, items, op, XO_DIR_BWD);
	if (st)
		return st;
	l = xo_cl_launch_begin(c, XO_CL_K_rnn_bwd_w__sum);
	xo_cl_arg_mem(&l, part);
	xo_cl_arg_int(&l, nq);
	xo_cl_arg_int(&l, nw);
	xo_cl_arg_int(&l, nu);
	xo_cl_arg_int(&l, nbias);
	xo_cl_arg_tensor(&l, a->dst[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[2], NULL);
	xo_cl_arg_tensor(&l, a->dst[3], a->dst[1]);
	return la_run(&l, ne, op, XO_DIR_BWD);
}

static enum xo_status rnn_bwd(struct xo_backend *be, enum xo_op op, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_ctx *c = ctx_of(be);
	int64_t G = xo_rnn_gates(op) * p->units, per = 3 * p->units + 2 * G;
	int64_t nb = !p->use_bias ? 0 : op == XO_OP_gru && p->reset_after ? 2 * G : G;
	int64_t items = p->ch * G + p->units * G + nb;
	int64_t floats = p->batch * p->len * 2 * G + p->batch * 3 * p->units;
	int64_t tile = rnn_tile(c, p->batch, per);
	struct xo_cl_launch l;
	enum xo_status st;
	cl_mem P;

	if (floats > INT_MAX || items > INT_MAX)
		return xo_error(XO_ERESOURCE, "cl: %s backward: %lld scratch floats exceed the "
				"kernels' int indexing", xo_op_name(op), (long long)floats);
	st = xo_cl_scratch(c, 0, (size_t)floats * 4, &P);
	if (st)
		return st;
	l = xo_cl_launch_begin(c, tile ? XO_CL_K_rnn_bwd_seq__wg : XO_CL_K_rnn_bwd_seq);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	xo_cl_arg_tensor(&l, a->src[2], NULL);
	xo_cl_arg_tensor(&l, a->src[3], NULL);
	xo_cl_arg_tensor(&l, a->src[4], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], a->dst[1]);
	xo_cl_arg_int(&l, a->dst[0] != NULL);
	xo_cl_arg_mem(&l, P);
	rnn_args(&l, op, p, true);
	rnn_mask_args(&l, a, 5);
	if (tile) {
		int64_t work = tile * (p->ch > G ? p->ch : G);
		bool done;

		st = rnn_run_tiles(&l, p, tile, per, rnn_group(c, XO_CL_K_rnn_bwd_seq__wg, work),
				   op, XO_DIR_BWD);
		if (st)
			return st;
		st = rnn_bwd_w_split(c, op, a, P, nb, &done);
		if (st || done)
			return st;
	} else {
		st = la_run(&l, p->batch, op, XO_DIR_BWD);
		if (st)
			return st;
	}
	l = xo_cl_launch_begin(c, XO_CL_K_rnn_bwd_w);
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[3], NULL);
	xo_cl_arg_mem(&l, P);
	xo_cl_arg_tensor(&l, a->dst[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[2], NULL);
	xo_cl_arg_tensor(&l, a->dst[3], a->dst[1]);
	xo_cl_arg_int(&l, nb);
	rnn_args(&l, op, p, false);
	return la_run(&l, items, op, XO_DIR_BWD);
}

#define CL_RNN(name)                                                                      \
	enum xo_status xo_cl_##name##_fwd(struct xo_backend *be, const struct xo_op_args *a) \
	{                                                                                 \
		return rnn_fwd(be, XO_OP_##name, a);                                      \
	}                                                                                 \
	enum xo_status xo_cl_##name##_bwd(struct xo_backend *be, const struct xo_op_args *a) \
	{                                                                                 \
		return rnn_bwd(be, XO_OP_##name, a);                                      \
	}
CL_RNN(simple_rnn)
CL_RNN(lstm)
CL_RNN(gru)

/* ---- pad (resize.cl): one work-item per destination element ------------------- */

static enum xo_status la_pad(struct xo_backend *be, const struct xo_op_args *a, enum xo_dir dir)
{
	const struct xo_params *p = &a->p;
	bool bwd = dir == XO_DIR_BWD;
	int64_t oh = p->len + p->pad_begin + p->pad_end;
	int64_t ow = p->width + p->pad_begin_w + p->pad_end_w;
	int64_t dh = bwd ? p->len : oh, dw = bwd ? p->width : ow;
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_pad_shift);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, p->batch * dh);
	xo_cl_arg_int(&l, bwd ? oh : p->len);
	xo_cl_arg_int(&l, bwd ? ow : p->width);
	xo_cl_arg_int(&l, dh);
	xo_cl_arg_int(&l, dw);
	xo_cl_arg_int(&l, p->ch);
	xo_cl_arg_int(&l, bwd ? -p->pad_begin : p->pad_begin);
	xo_cl_arg_int(&l, bwd ? -p->pad_begin_w : p->pad_begin_w);
	return la_run_nd(&l, 3, (int64_t[]){p->ch, dw, p->batch * dh}, XO_OP_pad, dir);
}

enum xo_status xo_cl_pad_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_pad(be, a, XO_DIR_FWD);
}

enum xo_status xo_cl_pad_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_pad(be, a, XO_DIR_BWD);
}

/* ---- up_sampling (resize.cl): one work-item per destination element ----------- */

static enum xo_status la_up_sampling(struct xo_backend *be, const struct xo_op_args *a,
				     enum xo_dir dir)
{
	const struct xo_params *p = &a->p;
	bool bwd = dir == XO_DIR_BWD;
	int64_t rows = p->batch * (bwd ? p->len : p->len * p->repeats);
	int64_t dw = bwd ? p->width : p->width * p->repeats_w;
	struct xo_cl_launch l = xo_cl_launch_begin(
	    ctx_of(be), bwd ? XO_CL_K_up_sampling_bwd : XO_CL_K_up_sampling_fwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, rows);
	xo_cl_arg_int(&l, p->len);
	xo_cl_arg_int(&l, p->width);
	xo_cl_arg_int(&l, p->ch);
	xo_cl_arg_int(&l, p->repeats);
	xo_cl_arg_int(&l, p->repeats_w);
	return la_run_nd(&l, 3, (int64_t[]){p->ch, dw, rows}, XO_OP_up_sampling, dir);
}

enum xo_status xo_cl_up_sampling_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_up_sampling(be, a, XO_DIR_FWD);
}

enum xo_status xo_cl_up_sampling_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_up_sampling(be, a, XO_DIR_BWD);
}

/* ---- layer_normalization (lnorm.cl): one work-item per row ------------------
 * The backward: per row its statistics into scratch slot 0 and dx; then,
 * where dgamma or dbeta is wanted, one work-item per channel sums them over
 * the rows in row order from those statistics. */

enum xo_status xo_cl_layer_normalization_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_layer_normalization_fwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], a->src[0]);
	xo_cl_arg_int(&l, a->src[1] != NULL);
	xo_cl_arg_tensor(&l, a->src[2], a->src[0]);
	xo_cl_arg_int(&l, a->src[2] != NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, p->batch * p->len);
	xo_cl_arg_int(&l, p->ch);
	xo_cl_arg_float(&l, p->epsilon);
	return la_run(&l, p->batch * p->len, XO_OP_layer_normalization, XO_DIR_FWD);
}

enum xo_status xo_cl_layer_normalization_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_ctx *c = ctx_of(be);
	int64_t rows = p->batch * p->len;
	struct xo_cl_launch l;
	cl_mem st;
	enum xo_status s = xo_cl_scratch(c, 0, (size_t)(3 * rows) * 4, &st);

	if (s)
		return s;
	l = xo_cl_launch_begin(c, XO_CL_K_layer_normalization_bwd);
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], a->src[0]);
	xo_cl_arg_int(&l, a->src[1] != NULL);
	xo_cl_arg_tensor(&l, a->src[2], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], a->src[0]);
	xo_cl_arg_int(&l, a->dst[0] != NULL);
	xo_cl_arg_mem(&l, st);
	xo_cl_arg_int(&l, rows);
	xo_cl_arg_int(&l, p->ch);
	xo_cl_arg_float(&l, p->epsilon);
	s = la_run(&l, rows, XO_OP_layer_normalization, XO_DIR_BWD);
	if (s || (!a->dst[1] && !a->dst[2]))
		return s;
	l = xo_cl_launch_begin(c, XO_CL_K_layer_normalization_bwd_params);
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[2], NULL);
	xo_cl_arg_mem(&l, st);
	xo_cl_arg_tensor(&l, a->dst[1], a->src[0]);
	xo_cl_arg_int(&l, a->dst[1] != NULL);
	xo_cl_arg_tensor(&l, a->dst[2], a->src[0]);
	xo_cl_arg_int(&l, a->dst[2] != NULL);
	xo_cl_arg_int(&l, rows);
	xo_cl_arg_int(&l, p->ch);
	return la_run(&l, p->ch, XO_OP_layer_normalization, XO_DIR_BWD);
}

/* ---- permute (resize.cl): one work-item per destination element --------------- */

static enum xo_status la_permute(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	const struct xo_params *p = &a->p;
	int64_t x[3] = {p->len, p->width, p->ch}, sz[3], stride[3];
	int q[3], m[3];
	enum xo_status st = xo_permute_axes(p->dims, q);
	struct xo_cl_launch l;

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
	l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_permute_move);
	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, p->batch * sz[m[0]]);
	xo_cl_arg_int(&l, sz[m[0]]);
	xo_cl_arg_int(&l, sz[m[1]]);
	xo_cl_arg_int(&l, sz[m[2]]);
	xo_cl_arg_int(&l, sz[0] * sz[1] * sz[2]);
	xo_cl_arg_int(&l, stride[m[0]]);
	xo_cl_arg_int(&l, stride[m[1]]);
	xo_cl_arg_int(&l, stride[m[2]]);
	return la_run_nd(&l, 3, (int64_t[]){sz[m[2]], sz[m[1]], p->batch * sz[m[0]]}, XO_OP_permute,
			 bwd ? XO_DIR_BWD : XO_DIR_FWD);
}

enum xo_status xo_cl_permute_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_permute(be, a, false);
}

enum xo_status xo_cl_permute_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_permute(be, a, true);
}

/* ---- merge (merge.cl): one work-item per element of y / dy ------------------- */

static enum xo_status la_merge(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	const struct xo_params *p = &a->p;
	bool cat = p->mode == XO_MERGE_CONCATENATE, masked = p->mask_a || p->mask_b;
	int64_t rows = p->batch * p->len, cb = cat ? p->ch_b : p->ch;
	struct xo_cl_launch l =
	    xo_cl_launch_begin(ctx_of(be), bwd ? XO_CL_K_merge_bwd : XO_CL_K_merge_fwd);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[1], NULL);
	if (bwd) {
		xo_cl_arg_tensor(&l, a->src[2], NULL);
		xo_cl_arg_tensor(&l, a->dst[0], a->src[0]);
		xo_cl_arg_int(&l, a->dst[0] != NULL);
		xo_cl_arg_tensor(&l, a->dst[1], a->src[1]);
		xo_cl_arg_int(&l, a->dst[1] != NULL);
	} else {
		xo_cl_arg_tensor(&l, a->dst[0], NULL);
	}
	xo_cl_arg_int(&l, p->mode);
	xo_cl_arg_int(&l, rows);
	xo_cl_arg_int(&l, p->ch);
	xo_cl_arg_int(&l, cb);
	/* Keras's mask: the ids after the op's sources, src[0] standing in
	 * when absent */
	xo_cl_arg_tensor(&l, masked ? a->src[bwd ? 3 : 2] : NULL, a->src[0]);
	xo_cl_arg_int(&l, p->mask_a);
	xo_cl_arg_int(&l, p->mask_b);
	return la_run(&l, rows * (cat ? p->ch + cb : p->ch), XO_OP_merge,
		      bwd ? XO_DIR_BWD : XO_DIR_FWD);
}

enum xo_status xo_cl_merge_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_merge(be, a, false);
}

enum xo_status xo_cl_merge_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_merge(be, a, true);
}

/* ---- flip (resize.cl): one work-item per destination element -------------------- */

static enum xo_status la_flip(struct xo_backend *be, const struct xo_op_args *a, enum xo_dir dir)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_flip_move);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_int(&l, p->batch * p->len);
	xo_cl_arg_int(&l, p->len);
	xo_cl_arg_int(&l, p->ch);
	return la_run_nd(&l, 2, (int64_t[]){p->ch, p->batch * p->len}, XO_OP_flip, dir);
}

enum xo_status xo_cl_flip_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_flip(be, a, XO_DIR_FWD);
}

enum xo_status xo_cl_flip_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_flip(be, a, XO_DIR_BWD);
}

/* ---- attention (attn.cl): one work-item per (sample, row, head) ------------- */

/* The mask's arguments (XO_ATTN_MASK_ARGS): m (any buffer, `fallback`,
 * without one), whether there is one, and p of a row that keeps no key:
 * 1/Tk without dropout, 0 with it (ops.def) */
static void la_attention_mask(struct xo_cl_launch *l, const struct xo_op_args *a, int slot)
{
	const struct xo_params *p = &a->p;

	xo_cl_arg_tensor(l, p->attention_mask ? a->src[slot] : NULL, a->src[0]);
	xo_cl_arg_int(l, p->attention_mask);
	xo_cl_arg_float(l, p->dropout > 0.0f ? 0.0f : (float)(1.0 / (double)xo_attention_len_kv(p)));
}

static void la_attention_dims(struct xo_cl_launch *l, const struct xo_params *p)
{
	xo_cl_arg_int(l, p->batch);
	xo_cl_arg_int(l, p->len);
	xo_cl_arg_int(l, xo_attention_len_kv(p));
	xo_cl_arg_int(l, p->heads);
	xo_cl_arg_int(l, p->key_dim);
	xo_cl_arg_int(l, xo_attention_value_dim(p));
	xo_cl_arg_int(l, p->causal);
	xo_cl_arg_float(l, (float)(1.0 / sqrt((double)p->key_dim)));
	/* the dropout: rate 0 (no mask) unless training with dropout > 0 */
	xo_cl_arg_float(l, p->training ? p->dropout : 0.0f);
	xo_cl_arg_float(l, 1.0f / (1.0f - p->dropout));
	xo_cl_arg_uint(l, (uint32_t)p->seed);
	xo_cl_arg_uint(l, (uint32_t)(p->seed >> 32));
	xo_cl_arg_uint(l, (uint32_t)p->step);
	xo_cl_arg_uint(l, p->layer);
}

enum xo_status xo_cl_attention_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_attention_fwd);

	for (int s = 0; s < 3; s++)
		xo_cl_arg_tensor(&l, a->src[s], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	la_attention_mask(&l, a, 3);
	la_attention_dims(&l, p);
	return la_run(&l, p->batch * p->len * p->heads, XO_OP_attention, XO_DIR_FWD);
}

/* Two launches: the query rows (dq, and each row's softmax statistics and
 * D_i into scratch), then the key rows (dk, dv) from those statistics. */
enum xo_status xo_cl_attention_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_ctx *c = ctx_of(be);
	int64_t rows = p->batch * p->len * p->heads;
	struct xo_cl_launch l;
	enum xo_status st;
	cl_mem s;

	st = xo_cl_scratch(c, 0, (size_t)(rows * 3) * 4, &s);
	if (st)
		return st;
	l = xo_cl_launch_begin(c, XO_CL_K_attention_bwd);
	for (int i = 0; i < 4; i++)
		xo_cl_arg_tensor(&l, a->src[i], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_mem(&l, s);
	la_attention_mask(&l, a, 4);
	la_attention_dims(&l, p);
	st = la_run(&l, rows, XO_OP_attention, XO_DIR_BWD);
	if (st)
		return st;
	l = xo_cl_launch_begin(c, XO_CL_K_attention_bwd_kv);
	for (int i = 0; i < 4; i++)
		xo_cl_arg_tensor(&l, a->src[i], NULL);
	xo_cl_arg_tensor(&l, a->dst[1], NULL);
	xo_cl_arg_tensor(&l, a->dst[2], NULL);
	xo_cl_arg_mem(&l, s);
	la_attention_mask(&l, a, 4);
	la_attention_dims(&l, p);
	return la_run(&l, p->batch * xo_attention_len_kv(p) * p->heads, XO_OP_attention,
		      XO_DIR_BWD);
}

/* ---- masking (mask.cl): one work-item per step ------------------------------------ */

static enum xo_status la_masking(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	const struct xo_params *p = &a->p;
	struct xo_cl_launch l = xo_cl_launch_begin(ctx_of(be), XO_CL_K_masking_select);

	xo_cl_arg_tensor(&l, a->src[0], NULL);
	xo_cl_arg_tensor(&l, a->src[bwd ? 1 : 0], NULL);
	xo_cl_arg_tensor(&l, a->dst[0], NULL);
	xo_cl_arg_tensor(&l, bwd ? NULL : a->dst[1], a->dst[0]);
	xo_cl_arg_int(&l, bwd ? 0 : 1);
	xo_cl_arg_int(&l, p->batch * p->len);
	xo_cl_arg_int(&l, p->ch);
	xo_cl_arg_float(&l, p->mask_value);
	return la_run(&l, p->batch * p->len, XO_OP_masking, bwd ? XO_DIR_BWD : XO_DIR_FWD);
}

enum xo_status xo_cl_masking_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_masking(be, a, false);
}

enum xo_status xo_cl_masking_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return la_masking(be, a, true);
}
