/*
 * cl_net.c - the cl backend's fused whole-network path (struct xo_net,
 * include/xo/backend.h; kernels in cl/kernels/net.cl): a small network's
 * (a chain, or a graph: each layer's sources in the table) training step
 * in 2 launches and its inference batch in 1 (2 with
 * metrics), instead of one launch or more per layer and op. Launch count is
 * what makes small nets slow on a GPU, so this is the path the model runtime
 * takes on cl whenever xo_cl_net_fits says yes; everything else runs op by
 * op (cl_ops.c).
 *
 *   predict / evaluate: xo_cl_net_fwd (+ xo_cl_net_metrics with labels)
 *   training step:      xo_cl_net_train, xo_cl_net_update
 *
 * The host describes the net as a table of XO_NET_NF ints per layer
 * (net.cl's XO_ND_* offsets) and after them the model inputs'
 * (NET_INPUT_INTS: their count, then each one's offset and size), kept on
 * the device per mode (inference, training) and written again only when it
 * changes, so a warm step enqueues kernels and nothing else: no transfer, no
 * allocation, no wait. Per-sample
 * activations and gradients live in local memory; each sample's parameter
 * gradients (a row laid out like params), loss and correctness go to one
 * device scratch buffer, grown as needed and kept, which the second launch
 * sums over the batch (a fixed order: results do not depend on timing).
 *
 * Limits (xo_cl_net_fits): up to XO_NET_MAX_LAYERS layers; conv1d with
 * linear/relu/sigmoid activation and any padding, strides, dilation; dense
 * with those, or softmax as the last layer (required with labels or
 * training); max pooling, flatten, dropout, the unmasked global average
 * pooling, the elementwise merges and Concatenate on the last axis;
 * per-sample activations plus two gradient buffers within
 * CL_DEVICE_LOCAL_MEM_SIZE; the [n][params] gradient rows within int
 * indexing and CL_DEVICE_MAX_MEM_ALLOC_SIZE. Bigger nets run op by op.
 *
 * Stats: the launches count in stats.launches like every op's, and in
 * stats.net_launches; their kernel time goes to stats.kernel_ns and
 * stats.net_ns, never to an op's op_ns (per-layer profiling runs op by op).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_internal.h"

/* The layer table: must match net.cl. */
#define XO_NET_NF 28
enum {
	ND_KIND = 0,
	ND_IN_LEN = 1,
	ND_IN_CH = 2,
	ND_OUT_LEN = 3,
	ND_OUT_CH = 4,
	ND_ACT = 5,
	ND_K = 6,
	ND_STRIDE = 7,
	ND_DIL = 8,
	ND_PAD = 9,
	ND_W = 10,
	ND_B = 11,
	ND_LIN = 12,
	ND_LOUT = 13,
	ND_LAYER = 14,
	ND_RATE = 15,
	ND_SCALE = 16,
	ND_NEED_DX = 17,
	ND_HAS_GRAD = 18,
	ND_IN_SIZE = 19,
	ND_OUT_SIZE = 20,
	ND_LIN2 = 21,
	ND_MODE = 22,
	ND_G = 23,
	ND_DX0 = 24,
	ND_DX1 = 25,
	ND_ACC0 = 26,
	ND_ACC1 = 27,
};
/* net.cl's kind code of the elementwise merges (ND_MODE says which), of
 * the (unmasked) global average pooling and of Concatenate on the last axis
 * (ND_IN_CH the first source's channels, ND_OUT_CH both sources'); the
 * other kinds are their enum xo_net_kind values, all below
 * XO_NET_ACTIVATION (5) */
#define NK_MERGE 5
#define NK_GAP 6
#define NK_CAT 7

/* Most layers the fused path takes (a small net; the table is a few KB). */
#define XO_NET_MAX_LAYERS 64
/* Largest per-sample tensor it takes, so every product below fits int64 and
 * the kernels' int indexing is checked once. */
#define XO_NET_MAX_SIZE (INT64_C(1) << 24)

/* The table's ints after the layers': the inputs' count, then each one's
 * offset in units of x's rows and floats per sample (struct xo_net in_off,
 * in_sizes; net.cl xo_net_load). */
#define NET_INPUT_INTS (1 + 2 * XO_NET_INPUTS_MAX)
#define NET_TABLE_INTS (XO_NET_MAX_LAYERS * XO_NET_NF + NET_INPUT_INTS)

/* Device state of the fused path, made on first use (xo_cl_ctx::net). */
struct xo_cl_net {
	cl_mem desc[2];              /* layer tables: [0] inference, [1] training */
	int host[2][NET_TABLE_INTS]; /* what each holds */
	int nints[2];                /* ints in each, 0: never written */
	cl_mem scratch;              /* per-sample gradient rows and metrics */
	size_t scratch_bytes;        /* its size */
};

/* A net turned into launch parameters (plan_make). */
struct plan {
	int desc[NET_TABLE_INTS]; /* nl layers' XO_NET_NF ints, then the inputs' */
	int nl;
	int64_t lm_floats;   /* local memory per work-group */
	int64_t out_loc;     /* local offset of the last layer's output */
	int64_t t_loc;       /* local offset of the label row */
	int64_t g0, g1;      /* local offsets of the gradient buffers (training) */
	int64_t met;         /* scratch offset of the per-sample loss [n], then correct [n] */
	int64_t scratch;     /* scratch floats */
	uint64_t seed, step; /* dropout key of this batch */
};

static bool act_elementwise(enum xo_activation a)
{
	return a == XO_ACTIVATION_LINEAR || a == XO_ACTIVATION_RELU || a == XO_ACTIVATION_SIGMOID;
}

static bool size_ok(int64_t v)
{
	return v >= 1 && v <= XO_NET_MAX_SIZE;
}

static int32_t float_bits(float f)
{
	int32_t i;

	memcpy(&i, &f, sizeof(i));
	return i;
}

/*
 * Layer li's geometry into d (conv1d, pooling: out length must be the net's;
 * dense: conv1d of length 1 and kernel 1). False where the fused kernels do
 * not run it. Checks the geometry functions' preconditions first, so they
 * never report an error from here.
 */
static bool layer_geometry(const struct xo_net *net, int li, int *d)
{
	const struct xo_net_layer *l = &net->layers[li];
	struct xo_params p = l->p;
	int64_t out = 0, pad = 0, stride;

	p.len = l->in_len;
	p.ch = l->in_ch;
	d[ND_K] = 1;
	d[ND_STRIDE] = 1;
	d[ND_DIL] = 1;
	d[ND_PAD] = 0;
	/* a merge: the merge op's mode of the kind's name, shape kept */
	if (xo_net_kind_merge(l->kind))
		return l->out_len == l->in_len && l->out_ch == l->in_ch &&
		       (int)p.mode == (int)(l->kind - XO_NET_ADD) + XO_MERGE_ADD;
	/* a concatenate on the last axis: the op's rows are the sample's (an
	 * earlier axis joins longer row parts, op by op); the second source
	 * in_len rows of p.ch_b */
	if (l->kind == XO_NET_CONCATENATE)
		return p.mode == XO_MERGE_CONCATENATE && !p.mask_a && !p.mask_b &&
		       l->p.len == l->in_len && l->p.ch == l->in_ch && size_ok(l->p.ch_b) &&
		       l->out_len == l->in_len && l->out_ch == l->in_ch + l->p.ch_b;
	/* the channels' means over every row; the masked mean (the ids) runs
	 * op by op */
	if (l->kind == XO_NET_GLOBAL_AVERAGE_POOLING1D)
		return l->out_len == 1 && l->out_ch == l->in_ch && !p.mask_zero;
	if (!xo_net_kind_fusable(l->kind))
		return false;
	switch (l->kind) {
	case XO_NET_CONV1D:
		stride = xo_conv1d_stride(&p);
		if (!act_elementwise(p.activation) || !size_ok(p.kernel_size) || !size_ok(stride) ||
		    !size_ok(p.dilation_rate) || (stride > 1 && p.dilation_rate > 1) ||
		    p.filters != l->out_ch || l->w_off < 0)
			return false;
		if (p.padding == XO_PADDING_VALID &&
		    p.dilation_rate * (p.kernel_size - 1) + 1 > p.len)
			return false;
		if (xo_conv1d_geometry(&p, &out, &pad) || out != l->out_len)
			return false;
		d[ND_K] = (int)p.kernel_size;
		d[ND_STRIDE] = (int)stride;
		d[ND_DIL] = (int)p.dilation_rate;
		d[ND_PAD] = (int)pad;
		return true;
	case XO_NET_MAX_POOLING1D:
		stride = xo_pool1d_stride(&p);
		if (!size_ok(p.pool_size) || !size_ok(stride) || l->out_ch != l->in_ch ||
		    (p.padding != XO_PADDING_VALID && p.padding != XO_PADDING_SAME) ||
		    (p.padding == XO_PADDING_VALID && p.pool_size > p.len))
			return false;
		if (xo_pool1d_geometry(&p, &out, &pad) || out != l->out_len)
			return false;
		d[ND_K] = (int)p.pool_size;
		d[ND_STRIDE] = (int)stride;
		d[ND_PAD] = (int)pad;
		return true;
	case XO_NET_FLATTEN:
		return true;
	case XO_NET_DROPOUT:
		return p.rate >= 0.0f && p.rate < 1.0f;
	case XO_NET_DENSE:
		if (l->in_len != 1 || l->out_len != 1 || p.units != l->out_ch || l->w_off < 0)
			return false;
		/* softmax only as the last layer (the head) */
		return act_elementwise(p.activation) ||
		       (p.activation == XO_ACTIVATION_SOFTMAX && li == net->nlayers - 1);
	default: /* XO_NET_ACTIVATION: not in net.cl, op by op */
		return false;
	}
}

/* The layers' kernel and bias ranges cover [0, size) without overlap (their
 * total is size, checked by the caller): no element is owned twice. */
static bool ranges_tile(const struct xo_net *net, int64_t size)
{
	int64_t owned = 0;

	for (int64_t j = 0; j < size;) {
		int64_t next = -1;

		for (int i = 0; i < net->nlayers && next < 0; i++) {
			const struct xo_net_layer *l = &net->layers[i];
			int64_t nw;

			if (l->kind != XO_NET_CONV1D && l->kind != XO_NET_DENSE)
				continue;
			nw = (l->kind == XO_NET_CONV1D ? l->p.kernel_size : l->in_len) * l->in_ch *
			     l->out_ch;
			if (l->w_off == j)
				next = j + nw;
			else if (l->b_off == j)
				next = j + l->out_ch;
		}
		if (next < 0)
			return false;
		owned += next - j;
		j = next;
	}
	return owned == size;
}

/* net.cl's kind code of a layer kind layer_geometry takes. */
static int kind_code(enum xo_net_kind k)
{
	if (xo_net_kind_merge(k))
		return NK_MERGE;
	if (k == XO_NET_GLOBAL_AVERAGE_POOLING1D)
		return NK_GAP;
	return k == XO_NET_CONCATENATE ? NK_CAT : (int)k;
}

/* The floats per sample layer l reads from its source k: a concatenate's
 * second source the rest of its output (layer_geometry checked its shape),
 * every other its input's. */
static int64_t source_size(const struct xo_net_layer *l, int k)
{
	int64_t isz = l->in_len * l->in_ch;

	return k && l->kind == XO_NET_CONCATENATE ? l->out_len * l->out_ch - isz : isz;
}

/* A tensor holds at least count elements. */
static bool holds(const struct xo_tensor *t, int64_t count)
{
	return t && t->nelem >= count;
}

/*
 * Whether net's layers read what net.cl runs (a merge or a concatenate two
 * sources, other kinds one; each the input, -1, or an earlier layer; a chain's the
 * previous one), into *graph (a graph, or a chain holding a merge) and
 * has_grad (training: the layer has parameters or reads a tensor that has
 * a gradient).
 */
static bool sources_check(const struct xo_net *net, bool training, bool *has_grad, bool *graph)
{
	const int nl = net->nlayers;

	/* several inputs make a graph (a chain's layer reads the whole row) */
	*graph = net->graph || xo_net_ninputs(net) > 1;
	for (int i = 0; i < nl; i++)
		*graph = *graph || xo_net_kind_nsrc(net->layers[i].kind) > 1;
	for (int i = 0; i < nl; i++) {
		const struct xo_net_layer *l = &net->layers[i];

		if (l->nsrc != xo_net_kind_nsrc(l->kind))
			return false;
		has_grad[i] = training && l->w_off >= 0;
		for (int k = 0; k < l->nsrc; k++) {
			if (l->src[k] < -xo_net_ninputs(net) || l->src[k] >= i ||
			    (!*graph && l->src[k] != i - 1))
				return false;
			if (l->src[k] >= 0 && has_grad[l->src[k]])
				has_grad[i] = true;
		}
	}
	return true;
}

/*
 * Where the training kernel keeps each layer's gradient (ND_G) and writes
 * the gradient w.r.t. each of its inputs (ND_DX0/1; -1: none needed), in
 * local memory from loc; returns the end. A chain: two buffers of gmax
 * floats used in turn (a flatten's gradient stays where it is). A graph:
 * one buffer per layer with a gradient (the last layer's holds dz) and a
 * term scratch: going from the last layer back (the op path's order), a
 * tensor's first gradient term is written into its buffer, each later one
 * into the scratch and then added in (ND_ACC0/1 the buffer; -1: in place).
 */
static int64_t grad_layout(const struct xo_net *net, struct plan *pl, const bool *has_grad,
                           bool graph, int64_t loc, int64_t gmax)
{
	const int nl = net->nlayers;
	bool written[XO_NET_MAX_LAYERS] = {false};
	int64_t cur = loc, nxt = loc + gmax, term = 0;

	for (int i = 0; i < nl; i++) {
		int *d = pl->desc + i * XO_NET_NF;

		d[ND_G] = d[ND_DX0] = d[ND_DX1] = d[ND_ACC0] = d[ND_ACC1] = -1;
		if (graph && has_grad[i]) {
			d[ND_G] = (int)loc;
			loc += d[ND_OUT_SIZE];
			term = term > d[ND_OUT_SIZE] ? term : d[ND_OUT_SIZE];
		}
	}
	if (!graph)
		loc += 2 * gmax;
	for (int i = nl - 1; i >= 0; i--) {
		const struct xo_net_layer *l = &net->layers[i];
		int *d = pl->desc + i * XO_NET_NF;

		if (!has_grad[i])
			continue;
		for (int k = 0; k < l->nsrc; k++) {
			int j = l->src[k];

			if (j < 0 || !has_grad[j])
				continue;
			if (!graph) {
				d[ND_DX0] = (int)(l->kind == XO_NET_FLATTEN ? cur : nxt);
			} else if (!written[j]) {
				d[ND_DX0 + k] = pl->desc[j * XO_NET_NF + ND_G];
				written[j] = true;
			} else {
				d[ND_DX0 + k] = (int)loc;
				d[ND_ACC0 + k] = pl->desc[j * XO_NET_NF + ND_G];
			}
		}
		if (graph)
			continue;
		d[ND_G] = (int)cur;
		if (l->kind != XO_NET_FLATTEN) {
			int64_t t = cur;

			cur = nxt;
			nxt = t;
		}
	}
	pl->g0 = graph ? pl->desc[(nl - 1) * XO_NET_NF + ND_G] : loc - 2 * gmax;
	pl->g1 = graph ? loc : loc - gmax;
	return graph ? loc + term : loc;
}

/*
 * The model inputs' places in the sample's local row (input k's values at
 * *inloc[k], insize[k] of them: one after another from 0, as struct xo_net
 * in_off lays each input's block of x) and the table's ints after the
 * layers' (tab: the count, then each input's offset and size; net.cl
 * xo_net_load). false: a layout struct xo_net does not describe.
 */
static bool inputs_place(const struct xo_net *net, int *tab, int64_t *inloc, int64_t *insize)
{
	const int ni = xo_net_ninputs(net);
	int64_t at = 0;

	if (ni > XO_NET_INPUTS_MAX)
		return false;
	tab[0] = ni;
	for (int k = 0; k < ni; k++) {
		int64_t off, isz = xo_net_input(net, k, &off);

		if (isz < 1 || off != at || isz > net->in_size - at)
			return false;
		inloc[k] = at;
		insize[k] = isz;
		tab[1 + 2 * k] = (int)at;
		tab[2 + 2 * k] = (int)isz;
		at += isz;
	}
	return at == net->in_size;
}

/* Source j's entry: of[j] for an earlier layer, in[k] for model input k
 * (j = -1 - k). */
static int64_t src_of(const int64_t *in, const int64_t *of, int j)
{
	return j < 0 ? in[-1 - j] : of[j];
}

/*
 * The plan of net in its mode, or false where the fused kernels do not run
 * it (layer kinds, activations, shapes, local memory, int indexing). No
 * side effects, no error messages.
 */
static bool plan_make(struct xo_cl_ctx *c, const struct xo_net *net, struct plan *pl)
{
	bool training = net->training, metrics = net->t != NULL;
	int64_t loc, prev_loc = 0, prev_size, covered = 0, gmax = 0, rows, wcount;
	const struct xo_net_layer *last;
	int64_t size;
	cl_ulong local_mem = 0;
	bool has_grad[XO_NET_MAX_LAYERS], graph;
	int64_t outloc[XO_NET_MAX_LAYERS], osize[XO_NET_MAX_LAYERS];
	int64_t inloc[XO_NET_INPUTS_MAX], insize[XO_NET_INPUTS_MAX];
	int nl = net->nlayers;

	memset(pl, 0, sizeof(*pl));
	if (nl < 1 || nl > XO_NET_MAX_LAYERS || !net->layers || !size_ok(net->n) ||
	    !size_ok(net->in_size) || !size_ok(net->classes) || !net->x || !net->probs ||
	    !net->params)
		return false;
	last = &net->layers[nl - 1];
	/* Labels and training need the dense(softmax) head. */
	if ((metrics || training) &&
	    (last->kind != XO_NET_DENSE || last->p.activation != XO_ACTIVATION_SOFTMAX))
		return false;
	/* The runtime fills loss, correct and adam after asking (model.c
	 * net_describe), so they are checked by the run functions, not here;
	 * size is the parameter count, the Adam size to come. */
	size = net->params->nelem;
	if (training &&
	    (!metrics || !net->grads || !net->adam_m || !net->adam_v || !holds(net->grads, size) ||
	     !holds(net->adam_m, size) || !holds(net->adam_v, size)))
		return false;
	if (!sources_check(net, training, has_grad, &graph) ||
	    !inputs_place(net, pl->desc + nl * XO_NET_NF, inloc, insize))
		return false;

	loc = net->in_size; /* the input sample at 0 */
	prev_size = net->in_size;
	for (int i = 0; i < nl; i++) {
		const struct xo_net_layer *l = &net->layers[i];
		int *d = pl->desc + i * XO_NET_NF;
		int64_t isz, osz;
		bool alias;

		if (!size_ok(l->in_len) || !size_ok(l->in_ch) || !size_ok(l->out_len) ||
		    !size_ok(l->out_ch))
			return false;
		isz = l->in_len * l->in_ch;
		osz = l->out_len * l->out_ch;
		if (!size_ok(isz) || !size_ok(osz) || !layer_geometry(net, i, d))
			return false;
		for (int k = 0; k < l->nsrc; k++)
			if (src_of(insize, osize, l->src[k]) != source_size(l, k))
				return false;
		/* a graph reads each source where it lies (input k at its offset) */
		prev_loc = src_of(inloc, outloc, l->src[0]);
		alias = l->kind == XO_NET_FLATTEN || (l->kind == XO_NET_DROPOUT && !training);
		if ((l->kind == XO_NET_FLATTEN || l->kind == XO_NET_DROPOUT) && osz != isz)
			return false;
		/* Dropout's element index i * osz + e is an int (as the op's). */
		if (l->kind == XO_NET_DROPOUT && osz > INT_MAX / net->n)
			return false;
		d[ND_KIND] = kind_code(l->kind);
		d[ND_MODE] = (int)l->p.mode;
		d[ND_LIN2] = l->nsrc > 1 ? (int)src_of(inloc, outloc, l->src[1]) : 0;
		d[ND_IN_LEN] = (int)(l->kind == XO_NET_DENSE ? 1 : l->in_len);
		d[ND_IN_CH] = (int)(l->kind == XO_NET_DENSE ? isz : l->in_ch);
		d[ND_OUT_LEN] = (int)l->out_len;
		d[ND_OUT_CH] = (int)l->out_ch;
		d[ND_ACT] = (int)l->p.activation;
		d[ND_W] = -1;
		d[ND_B] = -1;
		d[ND_LAYER] = (int)l->p.layer;
		d[ND_RATE] = float_bits(l->p.rate);
		d[ND_SCALE] =
		    float_bits(l->kind == XO_NET_DROPOUT ? 1.0f / (1.0f - l->p.rate) : 1.0f);
		d[ND_NEED_DX] = training && l->need_dx;
		d[ND_HAS_GRAD] = has_grad[i];
		d[ND_IN_SIZE] = (int)isz;
		d[ND_OUT_SIZE] = (int)osz;
		d[ND_LIN] = (int)prev_loc;
		d[ND_LOUT] = (int)(alias ? prev_loc : loc);
		if (l->kind == XO_NET_CONV1D || l->kind == XO_NET_DENSE) {
			wcount = (int64_t)d[ND_K] * d[ND_IN_CH] * l->out_ch;
			if (l->w_off < 0 || (training && l->w_off + wcount > size) ||
			    !holds(net->params, l->w_off + wcount) ||
			    (l->b_off >= 0 && (!holds(net->params, l->b_off + l->out_ch) ||
			                       (training && l->b_off + l->out_ch > size))))
				return false;
			d[ND_W] = (int)l->w_off;
			d[ND_B] = l->b_off >= 0 ? (int)l->b_off : -1;
			covered += wcount + (l->b_off >= 0 ? l->out_ch : 0);
		}
		if (has_grad[i]) {
			gmax = gmax > isz ? gmax : isz;
			gmax = gmax > osz ? gmax : osz;
		}
		if (!alias)
			loc += osz;
		prev_loc = d[ND_LOUT];
		prev_size = osz;
		outloc[i] = d[ND_LOUT];
		osize[i] = osz;
		if (l->kind == XO_NET_DROPOUT) {
			pl->seed = l->p.seed;
			pl->step = l->p.step;
		}
		if (loc > XO_NET_MAX_SIZE)
			return false;
	}
	if (prev_size != net->classes)
		return false;
	pl->nl = nl;
	pl->out_loc = prev_loc;
	pl->t_loc = loc;
	loc += net->classes;
	if (training)
		loc = grad_layout(net, pl, has_grad, graph, loc, gmax);
	pl->lm_floats = loc;
	/* Local memory of one work-group. */
	if (clGetDeviceInfo(c->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(local_mem), &local_mem,
	                    NULL) != CL_SUCCESS ||
	    (cl_ulong)loc * 4u > local_mem)
		return false;
	/* Training: every parameter element belongs to exactly one layer's
	 * kernel or bias (each sample's gradient row is written whole), and the
	 * per-sample rows [n][size] fit the kernels' int indexing. */
	if (training && (covered != size || !ranges_tile(net, size)))
		return false;
	pl->met = training ? net->n * size : 0;
	pl->scratch = pl->met + 2 * net->n;
	if ((training && size > (INT_MAX - 2 * net->n) / net->n) || pl->scratch > INT_MAX ||
	    (cl_ulong)pl->scratch * 4u > c->max_alloc)
		return false;
	rows = net->x->nelem / net->in_size;
	if (net->index) {
		if (net->index->dtype != XO_DTYPE_I32 || !holds(net->index, net->n))
			return false;
	} else if (rows < net->n) {
		return false;
	}
	if (net->x->dtype != XO_DTYPE_F32 || rows < 1 ||
	    (metrics && !holds(net->t, rows * net->classes)) ||
	    !holds(net->probs, net->n * net->classes))
		return false;
	/* The launch sizes the device runs (the per-sample kernels take any
	 * work-group size: sample_wg clamps it). */
	if (c->kernel_wg[XO_CL_K_net_update] < c->tune.red_wg ||
	    c->kernel_wg[XO_CL_K_net_metrics] < c->tune.red_wg)
		return false;
	return true;
}

bool xo_cl_net_fits(struct xo_backend *be, const struct xo_net *net)
{
	struct plan *pl;
	bool ok;

	/* Only categorical_crossentropy + Adam + categorical accuracy run
	 * fused (model.c net_describe); any other compile runs op by op. */
	if (!net || (net->unfused_compile && (net->training || net->t)))
		return false;
	pl = malloc(sizeof(*pl));
	if (!pl)
		return false;
	ok = plan_make(be->ctx, net, pl);
	free(pl);
	return ok;
}

/* The context's destructor hook for c->net (set with it in net_prepare). */
static void net_free(struct xo_cl_ctx *c)
{
	struct xo_cl_net *s = c->net;

	if (!s)
		return;
	for (int i = 0; i < 2; i++)
		if (s->desc[i])
			clReleaseMemObject(s->desc[i]);
	if (s->scratch) {
		clReleaseMemObject(s->scratch);
		c->used -= s->scratch_bytes;
	}
	free(s);
	c->net = NULL;
}

/*
 * The device state for a plan: the mode's layer table (written, blocking,
 * only when it changed: a model's first batch of each mode) and a scratch of
 * at least the plan's floats (grown, never shrunk).
 */
static enum xo_status net_prepare(struct xo_cl_ctx *c, const struct plan *pl, int mode)
{
	struct xo_cl_net *s = c->net;
	int nints = pl->nl * XO_NET_NF + NET_INPUT_INTS;
	size_t bytes = (size_t)pl->scratch * 4;
	enum xo_status st;
	cl_int err;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return xo_error(XO_ENOMEM, "cl: out of memory");
		c->net = s;
		c->net_free = net_free;
	}
	if (!s->desc[mode]) {
		s->desc[mode] = clCreateBuffer(c->context, CL_MEM_READ_ONLY,
		                               sizeof(int) * NET_TABLE_INTS, NULL, &err);
		if (err != CL_SUCCESS) {
			s->desc[mode] = NULL;
			return xo_cl_fail("clCreateBuffer(net layer table)", err);
		}
	}
	if (s->nints[mode] != nints ||
	    memcmp(s->host[mode], pl->desc, sizeof(int) * (size_t)nints)) {
		memcpy(s->host[mode], pl->desc, sizeof(int) * (size_t)nints);
		s->nints[mode] = 0;
		st = xo_cl_write_mem(c, s->desc[mode], 0, sizeof(int) * (size_t)nints,
		                     s->host[mode], "clEnqueueWriteBuffer(net layer table)");
		if (st)
			return st;
		s->nints[mode] = nints;
	}
	if (s->scratch_bytes < bytes) {
		if (bytes > c->max_alloc || c->used - s->scratch_bytes + bytes > c->global_mem)
			return xo_error(
			    XO_ERESOURCE,
			    "cl: the fused network's %zu-byte scratch exceeds the device "
			    "memory limits",
			    bytes);
		/* In-order queue: commands still using the old one keep it alive. */
		if (s->scratch)
			clReleaseMemObject(s->scratch);
		c->used -= s->scratch_bytes;
		s->scratch_bytes = 0;
		s->scratch = clCreateBuffer(c->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
		if (err != CL_SUCCESS) {
			s->scratch = NULL;
			return xo_cl_fail("clCreateBuffer(net scratch)", err);
		}
		s->scratch_bytes = bytes;
		c->used += bytes;
	}
	return XO_OK;
}

/*
 * The plan of a fused run and its device state (net_prepare); fits: the
 * run's own checks passed. what ("net_forward", "net_train_step") names the
 * run in the error when the net does not fit.
 */
static enum xo_status net_begin(struct xo_cl_ctx *c, const struct xo_net *net, struct plan *pl,
                                bool fits, const char *what)
{
	if (!fits || !plan_make(c, net, pl))
		return xo_error(XO_EINVAL, "cl: %s: the net does not fit the fused path", what);
	return net_prepare(c, pl, net->training);
}

/* groups work-groups of local work-items, booked as a fused network kernel. */
static enum xo_status launch_run(struct xo_cl_launch *l, size_t groups, size_t local)
{
	size_t global = groups * local;

	return xo_cl_launch_run(l, 1, &global, &local, -1, 0);
}

/* The per-sample kernels' shared leading arguments: layer table, input rows
 * (through index), labels, flag, parameters, outputs, scratch, and the
 * plan's sizes and offsets. */
static void args_samples(struct xo_cl_launch *l, const struct xo_net *net, const struct plan *pl,
                         cl_mem desc, bool with_t)
{
	struct xo_cl_ctx *c = l->c;

	xo_cl_arg_mem(l, desc);
	xo_cl_arg_int(l, pl->nl);
	xo_cl_arg_tensor(l, net->x, NULL);
	xo_cl_arg_tensor(l, net->index, net->x);
	xo_cl_arg_int(l, net->index != NULL);
	xo_cl_arg_int(l, net->x->nelem / net->in_size);
	xo_cl_arg_tensor(l, net->t, net->x);
	if (l->kid == XO_CL_K_net_fwd)
		xo_cl_arg_int(l, with_t);
	xo_cl_arg_mem(l, c->flag);
	xo_cl_arg_tensor(l, net->params, NULL);
	xo_cl_arg_tensor(l, net->probs, NULL);
	xo_cl_arg_mem(l, c->net->scratch);
	xo_cl_arg_int(l, pl->met);
	xo_cl_arg_int(l, net->n);
	xo_cl_arg_int(l, net->in_size);
	xo_cl_arg_int(l, net->classes);
	xo_cl_arg_int(l, pl->out_loc);
	xo_cl_arg_int(l, pl->t_loc);
}

/* The per-sample kernels' local size: the tuned work-items per sample,
 * within what the device runs of kernel kid. */
static size_t sample_wg(const struct xo_cl_ctx *c, enum xo_cl_kid kid)
{
	size_t wg = c->tune.net_wg;

	if (wg > c->kernel_wg[kid])
		wg = c->kernel_wg[kid];
	return wg < 1 ? 1 : wg;
}

/* Parameter tiles of xo_cl_net_update (net.cl's XO_NET_TP per group). */
static size_t update_groups(const struct xo_cl_ctx *c, int64_t size)
{
	size_t tp = c->tune.red_wg < 32 ? c->tune.red_wg : 32;

	return ((size_t)size + tp - 1) / tp;
}

enum xo_status xo_cl_net_forward(struct xo_backend *be, const struct xo_net *net)
{
	struct xo_cl_ctx *c = be->ctx;
	struct plan *pl = malloc(sizeof(*pl));
	struct xo_cl_launch l;
	enum xo_status st;
	bool with_t = net->t != NULL;

	if (!pl)
		return xo_error(XO_ENOMEM, "cl: out of memory");
	st = net_begin(c, net, pl,
	               !net->training &&
	                   (!with_t || (holds(net->loss, 1) && holds(net->correct, 1))),
	               "net_forward");
	if (st)
		goto out_free;
	l = xo_cl_launch_begin(c, XO_CL_K_net_fwd);
	args_samples(&l, net, pl, c->net->desc[0], with_t);
	xo_cl_arg(&l, (size_t)pl->lm_floats * 4, NULL);
	if (net->index)
		c->gather_pending = true;
	st = launch_run(&l, (size_t)net->n, sample_wg(c, XO_CL_K_net_fwd));
	if (st || !with_t)
		goto out_free;
	l = xo_cl_launch_begin(c, XO_CL_K_net_metrics);
	xo_cl_arg_mem(&l, c->net->scratch);
	xo_cl_arg_int(&l, pl->met);
	xo_cl_arg_int(&l, net->n);
	xo_cl_arg_tensor(&l, net->loss, NULL);
	xo_cl_arg_tensor(&l, net->correct, NULL);
	st = launch_run(&l, 1, c->tune.red_wg);
out_free:
	free(pl);
	return st;
}

enum xo_status xo_cl_net_train_step(struct xo_backend *be, const struct xo_net *net)
{
	struct xo_cl_ctx *c = be->ctx;
	struct plan *pl = malloc(sizeof(*pl));
	const struct xo_params *a = &net->adam;
	struct xo_cl_launch l;
	enum xo_status st;

	if (!pl)
		return xo_error(XO_ENOMEM, "cl: out of memory");
	st = net_begin(c, net, pl,
	               net->training && holds(net->loss, 1) && holds(net->correct, 1) &&
	                   net->params && a->size == net->params->nelem &&
	                   holds(net->grads, a->size) && holds(net->adam_m, a->size) &&
	                   holds(net->adam_v, a->size),
	               "net_train_step");
	if (st)
		goto out_free;
	l = xo_cl_launch_begin(c, XO_CL_K_net_train);
	args_samples(&l, net, pl, c->net->desc[1], true);
	xo_cl_arg_int(&l, pl->g0);
	xo_cl_arg_int(&l, pl->g1);
	xo_cl_arg_int(&l, a->size);
	xo_cl_arg_uint(&l, (uint32_t)pl->seed);
	xo_cl_arg_uint(&l, (uint32_t)(pl->seed >> 32));
	xo_cl_arg_uint(&l, (uint32_t)pl->step);
	xo_cl_arg(&l, (size_t)pl->lm_floats * 4, NULL);
	if (net->index)
		c->gather_pending = true;
	st = launch_run(&l, (size_t)net->n, sample_wg(c, XO_CL_K_net_train));
	if (st)
		goto out_free;
	l = xo_cl_launch_begin(c, XO_CL_K_net_update);
	xo_cl_arg_mem(&l, c->net->scratch);
	xo_cl_arg_int(&l, pl->met);
	xo_cl_arg_int(&l, net->n);
	xo_cl_arg_int(&l, a->size);
	xo_cl_arg_tensor(&l, net->grads, NULL);
	xo_cl_arg_tensor(&l, net->params, NULL);
	xo_cl_arg_tensor(&l, net->adam_m, NULL);
	xo_cl_arg_tensor(&l, net->adam_v, NULL);
	xo_cl_arg_float(&l, xo_adam_complement(a->beta_1));
	xo_cl_arg_float(&l, xo_adam_complement(a->beta_2));
	xo_cl_arg_float(&l, a->epsilon);
	xo_cl_arg_float(&l, xo_cl_adam_lr_t(a));
	xo_cl_arg_tensor(&l, net->loss, NULL);
	xo_cl_arg_tensor(&l, net->correct, NULL);
	st = launch_run(&l, update_groups(c, a->size) + 1, c->tune.red_wg);
out_free:
	free(pl);
	return st;
}
