/*
 * cpu_net.c - backend "cpu": the fused whole-network path (struct xo_net in
 * xo/backend.h). Instead of one op at a time over the whole batch (every
 * activation written to memory and read back, a thread hand-off per op),
 * the batch is cut into tiles of a few samples and each tile runs through
 * every layer with its activations in a per-thread scratch that stays in
 * L1/L2; the tiles are spread over the thread pool with one hand-off per
 * call. Per layer:
 *
 *   conv1d + max_pooling1d  the ISA level's conv_pool kernel (cpu_net.inc):
 *                        bias, activation and the maximum of each pooling
 *                        window in registers; only the pooled rows are
 *                        stored (valid padding, dilation 1, pool windows
 *                        that tile their input; others as below).
 *   conv1d               without padding, linear/relu: the ISA level's
 *                        direct kernel (cpu_net.inc conv): input rows read
 *                        in place at any stride and dilation, a
 *                        global_average_pooling1d after it summed in its
 *                        epilogue; in training its dW per tap (conv_dw)
 *                        and, at stride 1, its dx as a direct conv over the
 *                        zero-padded dz with the taps reversed.
 *   conv1d, dense        otherwise gemm_nn (cpu_kernels.inc) over the tile's
 *                        rows, bias and relu/sigmoid fused; convolutions
 *                        read their input windows in place or through an
 *                        im2col copy of the tile; softmax after the last
 *                        GEMM.
 *   max_pooling1d        pool_fwd over the tile.
 *   flatten, dropout     nothing (the same bytes; dropout is the identity
 *                        at inference).
 *
 * Only the rows a later layer reads are computed: the seed model's second
 * pooling drops the second convolution's 7th row (2 windows of 3), so that
 * convolution computes 6 rows from 8 of the first pooling's 9, and the
 * first convolution 24 of its 27 rows.
 *
 * A graph (struct xo_net's graph: layers that read earlier outputs or the
 * input, the elementwise merges, Concatenate on the last axis) runs the
 * same tiles, but each output stays in the tile until its last reader
 * (graph_layout places the buffers by lifetime), a layer computes the most
 * rows any reader reads, the merges are the merge op's arithmetic (a
 * concatenate copies each row's two parts; its backward hands each source
 * its channels of the gradient), and a tensor read by several layers gets
 * the sum of their gradients in the op path's order (graph_deliver); a
 * conv fuses with the pooling after it only when that is its one reader.
 *
 * net_train_step (at the end of this file) runs the same tiles forward,
 * keeping every layer's output, then backward, with the weight gradients
 * summed per part and Adam as the backend's op.
 *
 * Every kernel computes a sample's outputs with the same arithmetic
 * whatever the tile, the sample's place in it and the thread count (rows
 * are independent; a tail tile duplicates rows, never mixes them), so a
 * sample's probabilities are bit-identical at any batch size. The loss is
 * summed in sample order after the tiles, as the categorical_crossentropy
 * op does.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* Layers of a net the fused path takes. */
#define NET_MAX_LAYERS 32
/* Samples per tile, and floats of activations per sample beyond which the
 * tile shrinks (two ping-pong buffers of a tile stay within ~128 KB). */
#define NET_TILE        16
#define NET_TILE_FLOATS 16384
/* Floats per sample beyond which the net is not taken (the op path then
 * runs it; such layers are not "tiny" and the tiles would not fit cache). */
#define NET_MAX_SAMPLE_FLOATS (1 << 20)
/* Dense layers with both sides at least this large go to BLAS on the op
 * path; the fused path declines them. */
#define NET_BLAS_MIN 256
/* Multiply-adds of a call below which it runs on the calling thread only
 * (as XO_CPU_PAR_MIN of the op wrappers: a hand-off costs about as much). */
#define NET_PAR_MIN XO_CPU_PAR_MIN

/* One layer as the tiles run it. */
struct net_step {
	enum xo_net_kind kind;
	int act;                 /* conv1d / dense */
	int64_t in_len, in_ch;   /* per sample (a concatenate's: its first source's) */
	int64_t in_ch2;          /* merge: the second source's channels (concatenate:
	                          * out_ch - in_ch; elementwise: in_ch) */
	int64_t need_in;         /* input rows read (<= in_len) */
	int64_t out_len, out_ch; /* per sample, as the layer's shape */
	int64_t need_out;        /* output rows computed (<= out_len) */
	int64_t ks, s, dil, pad; /* conv1d; pooling: ks = pool_size */
	int64_t kc, np;          /* conv1d / dense: ks * in_ch; padded out_ch */
	bool windows;            /* conv1d: input windows read in place */
	bool pool_fused;         /* conv1d: the next layer's pooling done here */
	int64_t pool;            /* the fused pooling's window (= its stride) */
	int64_t pooled;          /* rows after the fused pooling */
	bool direct;             /* conv1d: the direct kernel (no padding, linear/relu) */
	bool gap_fused;          /* direct conv1d: the next layer's global average
	                          * pooling done in its epilogue */
	bool tdx;                /* training: dx by the direct kernel over a padded dz
	                          * (stride 1; needs dx) */
	int64_t zpad;            /* training: zero rows before and after each sample's
	                          * dz ((ks - 1) * dil where tdx, else 0) */
	const float *w, *b;      /* packed (or in place) kernel [kc][np], bias [np] */
	int64_t pack_off;        /* offset of the packed kernel in shared scratch; -1 */
	int src[XO_NET_SRC_MAX]; /* the tensors read: a layer's index, -1 - k input k */
	int nsrc;
	int mode;                /* merge, concatenate: enum xo_merge */
	int64_t stride;          /* graph: floats per sample of its output in a tile
	                          * (a view's: its source's; the last: classes) */
	int end;                 /* graph: its output's last reader (views followed) */
	int readers;             /* graph: the sources of later steps that are it */
	bool grad;               /* training: the gradient w.r.t. its output is used */
};

struct net_plan {
	int nsteps;
	struct net_step st[NET_MAX_LAYERS];
	int64_t tile;    /* samples per tile */
	int64_t act_max; /* floats per sample of the largest activation (and input) */
	int64_t col_max; /* floats per sample of the largest im2col copy */
	int64_t pack;    /* floats of packed kernels and biases */
	int64_t macs;    /* multiply-adds per sample */
	int64_t classes;
	/* A graph (struct xo_net graph): every step reads its sources' outputs,
	 * each kept alive in the tile until its last reader; a conv and
	 * pooling fused only where the pooling is the conv's one reader.
	 * Inference's per-sample layout: the input copy at a_in, step i's
	 * output at aoff[i], a_tot in all (graph_layout). */
	bool graph;
	int in_end; /* the input's last reader */
	int64_t aoff[NET_MAX_LAYERS], a_in, a_tot;
};

struct net_job {
	const struct xo_cpu_ctx *c;
	const struct xo_cpu_kernels *k;
	const struct xo_cpu_net_kernels *nk;
	const struct net_plan *plan;
	const struct xo_net *net;
	const float *x, *t;
	const int32_t *index;
	float *probs;
	double *rows; /* [n] loss terms, or NULL without metrics */
	int64_t n, ntiles;
	_Atomic int64_t next; /* next tile to claim */
	int64_t correct[XO_CPU_MAX_THREADS];
};

static const struct xo_cpu_net_kernels *net_kernels(const struct xo_cpu_ctx *c)
{
	switch (c->isa) {
	case XO_CPU_ISA_AVX512:
		return &xo_cpu_net_kernels__avx512;
	case XO_CPU_ISA_AVX2:
		return &xo_cpu_net_kernels__avx2;
	default:
		return &xo_cpu_net_kernels__scalar;
	}
}

static inline int64_t round_up(int64_t v, int64_t m)
{
	return (v + m - 1) / m * m;
}

static inline int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static inline int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* Activations the GEMM epilogue applies (softmax runs after the GEMM). */
static bool act_fused(int act)
{
	return act == XO_ACTIVATION_LINEAR || act == XO_ACTIVATION_RELU ||
	       act == XO_ACTIVATION_SIGMOID;
}

/* ---- graphs ---------------------------------------------------------------------------- */

/* Whether layer i's sources are ones the fused path reads (a merge or a
 * concatenate two, any other kind one; each input k, -1 - k, or an earlier
 * layer: topological order), into step i (its in_ch2 set); a chain's layer
 * reads the previous one, a graph's each source of the reader's input
 * shape: in_len rows of in_ch, a merge's second in_len rows of in_ch2. */
static bool sources_ok(const struct xo_net *net, struct net_plan *pl, int i)
{
	const struct xo_net_layer *l = &net->layers[i];
	struct net_step *s = &pl->st[i];

	if (l->nsrc != xo_net_kind_nsrc(l->kind))
		return false;
	s->nsrc = l->nsrc;
	for (int k = 0; k < l->nsrc; k++) {
		int j = l->src[k];
		int64_t ch = k ? s->in_ch2 : l->in_ch, off;

		if (j < -xo_net_ninputs(net) || j >= i || (!pl->graph && j != i - 1))
			return false;
		if (pl->graph && (j < 0 ? l->in_len * ch != xo_net_input(net, -1 - j, &off)
		                        : pl->st[j].out_len != l->in_len ||
		                              pl->st[j].out_ch != ch))
			return false;
		s->src[k] = j;
	}
	return true;
}

/* A graph's rows per step, from the last back: a step computes (need_out)
 * the most rows any of its readers reads (need_in), the last step every
 * row. false: a step no later one reads (the runtime's graphs have none). */
static bool graph_needs(struct net_plan *pl)
{
	int nl = pl->nsteps;
	int64_t need[NET_MAX_LAYERS] = {0};

	need[nl - 1] = pl->st[nl - 1].out_len;
	for (int i = nl - 1; i >= 0; i--) {
		struct net_step *s = &pl->st[i];

		if (need[i] < 1)
			return false;
		s->need_out = need[i];
		switch (s->kind) {
		case XO_NET_CONV1D:
			s->need_in = min64(s->in_len, (s->need_out - 1) * s->s - s->pad +
			                                  (s->ks - 1) * s->dil + 1);
			break;
		case XO_NET_MAX_POOLING1D:
			s->need_in = min64(s->in_len, (s->need_out - 1) * s->s - s->pad + s->ks);
			break;
		case XO_NET_DROPOUT:
		case XO_NET_ADD:
		case XO_NET_SUBTRACT:
		case XO_NET_MULTIPLY:
		case XO_NET_AVERAGE:
		case XO_NET_MAXIMUM:
		case XO_NET_MINIMUM:
		case XO_NET_CONCATENATE: /* row r of each source makes row r */
			s->need_in = s->need_out;
			break;
		default: /* flatten, dense, global average pooling: every row */
			s->need_out = s->out_len;
			s->need_in = s->in_len;
			break;
		}
		for (int k = 0; k < s->nsrc; k++)
			if (s->src[k] >= 0) {
				need[s->src[k]] = max64(need[s->src[k]], s->need_in);
				pl->st[s->src[k]].readers++;
			}
	}
	return true;
}

/* Whether step i's output goes to step i + 1 alone (a chain's always): only
 * then may the two run fused (conv + pooling), the output of i never stored
 * for another reader; in a graph i + 1 is not the last step either (the
 * forward that runs a graph's fused pair writes the pooling to the tile). */
static bool sole_reader_next(const struct net_plan *pl, int i)
{
	return !pl->graph || (i + 2 < pl->nsteps && pl->st[i].readers == 1 &&
	                      pl->st[i + 1].nsrc == 1 && pl->st[i + 1].src[0] == i);
}

/* A buffer of a tile's layout: its offset and floats per sample, alive from
 * step from to step to (both included; the input copy from -1). */
struct net_buf {
	int64_t off, size;
	int from, to;
};

/* Places a buffer alive over [from, to] at the lowest offset, bumped past
 * every placed buffer alive at the same time that it would overlap. */
static int64_t buf_place(struct net_buf *b, int *nb, int from, int to, int64_t size)
{
	int64_t off = 0;
	bool moved = true;

	while (moved) {
		moved = false;
		for (int k = 0; k < *nb; k++)
			if (b[k].from <= to && from <= b[k].to && off < b[k].off + b[k].size &&
			    b[k].off < off + size) {
				off = b[k].off + b[k].size;
				moved = true;
			}
	}
	b[(*nb)++] = (struct net_buf){off, size, from, to};
	return off;
}

/*
 * A graph's strides (a flatten's or dropout's output lies as its source's:
 * the same bytes at inference, its source's layout when training draws a
 * mask), each output's last reader (a view's readers read its source's
 * buffer) and inference's tile layout: the input copy and each stored
 * output kept from its writer to its last reader, at offsets that no buffer
 * alive at the same time overlaps. Returns the layout's floats per sample.
 */
static int64_t graph_layout(struct net_plan *pl, const struct xo_net *net)
{
	const int nl = pl->nsteps;
	int root[NET_MAX_LAYERS]; /* the step whose buffer holds i's output; -1 the input */
	struct net_buf b[NET_MAX_LAYERS + 1];
	int nb = 0;

	pl->in_end = -1;
	for (int i = 0; i < nl; i++) {
		struct net_step *s = &pl->st[i];
		bool view = s->kind == XO_NET_FLATTEN || s->kind == XO_NET_DROPOUT;
		int j0 = s->src[0];

		s->end = i;
		for (int k = 0; k < s->nsrc; k++) {
			int r = s->src[k] < 0 ? -1 : root[s->src[k]];

			if (r < 0)
				pl->in_end = i;
			else
				pl->st[r].end = i;
		}
		root[i] = !view ? i : j0 < 0 ? -1 : root[j0];
		s->stride = i == nl - 1 ? pl->classes
		            : view      ? (j0 < 0 ? net->in_size : pl->st[j0].stride)
		                        : s->need_out * s->out_ch;
	}
	pl->a_in = buf_place(b, &nb, -1, pl->in_end, net->in_size);
	/* a pooling fused into the conv before it is written at the conv's step */
	for (int i = 0; i + 1 < nl; i++)
		if (root[i] == i && !pl->st[i].pool_fused) /* whose rows are never stored */
			pl->aoff[i] = buf_place(b, &nb,
			                        i > 0 && (pl->st[i - 1].pool_fused ||
			                                  pl->st[i - 1].gap_fused) ? i - 1 : i,
			                        pl->st[i].end, pl->st[i].stride);
	pl->a_tot = 0;
	for (int k = 0; k < nb; k++)
		pl->a_tot = max64(pl->a_tot, b[k].off + b[k].size);
	return pl->a_tot;
}

/* ---- plan ---------------------------------------------------------------------------- */

/*
 * Fills the plan of net for ISA level c, without side effects or messages.
 * false: the fused path does not take this net.
 */
static bool plan_make(const struct xo_cpu_ctx *c, const struct xo_net *net, struct net_plan *pl)
{
	const int64_t vw = c->k->vw;
	int nl = net->nlayers;
	int64_t need, sample;

	memset(pl, 0, sizeof(*pl));
	if (nl < 1 || nl > NET_MAX_LAYERS || !net->x || !net->probs || net->n < 1)
		return false;
	if (net->x->dtype != XO_DTYPE_F32 || (net->index && net->index->dtype != XO_DTYPE_I32))
		return false;
	/* rows of in_size floats (and of classes labels), n of them or indexed */
	if (net->x->ndim != 2 || net->x->dim[1] != net->in_size ||
	    (!net->index && net->x->dim[0] < net->n) ||
	    (net->index && net->index->nelem < net->n) ||
	    (net->t && (net->t->ndim != 2 || net->t->dim[1] != net->classes ||
	                net->t->dim[0] != net->x->dim[0])) ||
	    net->probs->nelem < net->n * net->classes)
		return false;
	pl->nsteps = nl;
	pl->classes = net->classes;
	/* the inputs' blocks tile each row of x in order (xo_net in_off) */
	if (xo_net_ninputs(net) > XO_NET_INPUTS_MAX)
		return false;
	need = 0;
	for (int k = 0; k < xo_net_ninputs(net); k++) {
		int64_t o, size = xo_net_input(net, k, &o);

		if (size < 1 || o != need || size > net->in_size - need)
			return false;
		need += size;
	}
	if (need != net->in_size)
		return false;
	/* a merge or concatenate makes a graph of the net even when its
	 * sources are both the previous layer; several inputs do (the chain's
	 * tiles read one) */
	pl->graph = net->graph || xo_net_ninputs(net) > 1;
	for (int i = 0; i < nl; i++)
		pl->graph = pl->graph || xo_net_kind_nsrc(net->layers[i].kind) > 1;
	for (int i = 0; i < nl; i++) {
		const struct xo_net_layer *l = &net->layers[i];
		struct net_step *s = &pl->st[i];
		const struct xo_params *p = &l->p;
		int64_t out, pad;

		s->kind = l->kind;
		s->in_len = l->in_len;
		s->in_ch = l->in_ch;
		s->out_len = l->out_len;
		s->out_ch = l->out_ch;
		s->in_ch2 = l->kind == XO_NET_CONCATENATE ? p->ch_b : l->in_ch;
		s->pack_off = -1;
		s->grad = net->training && (l->w_off >= 0 || l->need_dx);
		if (!(xo_net_kind_fusable(l->kind) || l->kind == XO_NET_GLOBAL_AVERAGE_POOLING1D ||
		      xo_net_kind_nsrc(l->kind) > 1) ||
		    l->in_len < 1 || l->in_ch < 1 ||
		    l->out_len < 1 || l->out_ch < 1)
			return false;
		if (l->in_len > NET_MAX_SAMPLE_FLOATS / l->in_ch ||
		    l->out_len > NET_MAX_SAMPLE_FLOATS / l->out_ch || s->in_ch2 < 1 ||
		    l->in_len > NET_MAX_SAMPLE_FLOATS / s->in_ch2)
			return false;
		if (!sources_ok(net, pl, i))
			return false;
		if ((l->kind == XO_NET_CONV1D || l->kind == XO_NET_MAX_POOLING1D ||
		     l->kind == XO_NET_GLOBAL_AVERAGE_POOLING1D) &&
		    (p->len != l->in_len || p->ch != l->in_ch))
			return false;
		switch (l->kind) {
		case XO_NET_CONV1D:
			if (xo_conv1d_geometry(p, &out, &pad) || out != l->out_len ||
			    p->filters != l->out_ch || l->w_off < 0)
				return false;
			if (!act_fused(p->activation))
				return false;
			s->act = p->activation;
			s->ks = p->kernel_size;
			s->s = xo_conv1d_stride(p);
			s->dil = p->dilation_rate;
			s->pad = pad;
			s->kc = s->ks * s->in_ch;
			if (s->kc > NET_MAX_SAMPLE_FLOATS)
				return false;
			break;
		case XO_NET_DENSE:
			if (l->in_len != 1 || l->out_len != 1 || p->units != l->out_ch ||
			    l->w_off < 0)
				return false;
			if (l->in_ch >= NET_BLAS_MIN && l->out_ch >= NET_BLAS_MIN)
				return false;
			/* softmax only as the last layer (the probabilities) */
			if (p->activation == XO_ACTIVATION_SOFTMAX ? i != nl - 1
			                                           : !act_fused(p->activation))
				return false;
			s->act = p->activation;
			s->ks = s->s = s->dil = 1;
			s->kc = s->in_ch;
			break;
		case XO_NET_MAX_POOLING1D:
			if (xo_pool1d_geometry(p, &out, &pad) || out != l->out_len ||
			    l->out_ch != l->in_ch)
				return false;
			s->ks = p->pool_size;
			s->s = xo_pool1d_stride(p);
			s->pad = pad;
			break;
		case XO_NET_GLOBAL_AVERAGE_POOLING1D:
			/* one row of the channels' means (reads every input row) */
			if (l->out_len != 1 || l->out_ch != l->in_ch)
				return false;
			break;
		case XO_NET_FLATTEN:
			if (l->out_len * l->out_ch != l->in_len * l->in_ch)
				return false;
			break;
		case XO_NET_DROPOUT:
			if (l->out_len != l->in_len || l->out_ch != l->in_ch)
				return false;
			break;
		case XO_NET_ADD:
		case XO_NET_SUBTRACT:
		case XO_NET_MULTIPLY:
		case XO_NET_AVERAGE:
		case XO_NET_MAXIMUM:
		case XO_NET_MINIMUM:
			/* the merge op's mode of the kind's name (enum orders alike) */
			s->mode = (int)(l->kind - XO_NET_ADD) + XO_MERGE_ADD;
			if (l->out_len != l->in_len || l->out_ch != l->in_ch ||
			    (int)p->mode != s->mode)
				return false;
			break;
		case XO_NET_CONCATENATE:
			/* the last axis only: the op's rows are the sample's rows
			 * (an earlier axis joins longer row parts: op by op) */
			s->mode = XO_MERGE_CONCATENATE;
			if (p->mode != XO_MERGE_CONCATENATE || p->mask_a || p->mask_b ||
			    p->len != l->in_len || p->ch != l->in_ch ||
			    l->out_len != l->in_len || l->out_ch != l->in_ch + p->ch_b)
				return false;
			break;
		default: /* XO_NET_ACTIVATION: op by op */
			return false;
		}
		if (!pl->graph && i > 0 &&
		    (pl->st[i - 1].out_len * pl->st[i - 1].out_ch != l->in_len * l->in_ch))
			return false;
	}
	if ((!pl->graph && pl->st[0].in_len * pl->st[0].in_ch != net->in_size) ||
	    pl->st[nl - 1].out_len * pl->st[nl - 1].out_ch != net->classes)
		return false;

	/* Rows each layer must produce, from the last layer back: a graph's
	 * layer the most rows any of its readers reads. */
	if (pl->graph && !graph_needs(pl))
		return false;
	need = pl->st[nl - 1].out_len;
	for (int i = nl - 1; i >= 0 && !pl->graph; i--) {
		struct net_step *s = &pl->st[i];
		int64_t last;

		s->need_out = need;
		switch (s->kind) {
		case XO_NET_CONV1D:
			last = (need - 1) * s->s - s->pad + (s->ks - 1) * s->dil;
			s->need_in = min64(s->in_len, last + 1);
			break;
		case XO_NET_MAX_POOLING1D:
			last = (need - 1) * s->s - s->pad + s->ks - 1;
			s->need_in = min64(s->in_len, last + 1);
			break;
		case XO_NET_DROPOUT:
			s->need_in = need;
			break;
		default: /* flatten, dense, global average pooling: every input row */
			s->need_out = s->out_len;
			s->need_in = s->in_len;
			break;
		}
		need = s->need_in;
	}

	/* Kernels, fusion, scratch. */
	pl->act_max = net->in_size;
	for (int i = 0; i < nl; i++) {
		struct net_step *s = &pl->st[i];

		if (s->kind != XO_NET_CONV1D && s->kind != XO_NET_DENSE)
			continue;
		s->np = round_up(s->out_ch, vw);
		if (s->np != s->out_ch) {
			s->pack_off = pl->pack;
			pl->pack += round_up((s->kc + 1) * s->np, 16);
		}
		pl->macs += s->need_out * s->kc * s->out_ch;
		if (s->kind == XO_NET_DENSE)
			continue;
		s->windows = s->pad == 0 && (s->dil == 1 || s->ks == 1) &&
		             (s->need_out - 1) * s->s + s->ks <= s->need_in;
		/* every tap row of every output row computed is a row read */
		s->direct = s->pad == 0 &&
		            (s->act == XO_ACTIVATION_LINEAR || s->act == XO_ACTIVATION_RELU) &&
		            (s->need_out - 1) * s->s + (s->ks - 1) * s->dil < s->need_in;
		s->gap_fused = sole_reader_next(pl, i) && s->direct && i + 1 < nl &&
		               pl->st[i + 1].kind == XO_NET_GLOBAL_AVERAGE_POOLING1D &&
		               s->need_out == s->out_len;
		if (!s->windows && !s->direct)
			pl->col_max = max64(pl->col_max, s->need_out * s->kc);
		if (sole_reader_next(pl, i) && i + 1 < nl &&
		    pl->st[i + 1].kind == XO_NET_MAX_POOLING1D && s->windows &&
		    s->s == 1 && s->np == s->out_ch &&
		    net_kernels(c)->conv_pool_fits(s->out_ch, pl->st[i + 1].ks, s->act)) {
			const struct net_step *q = &pl->st[i + 1];

			/* windows that tile the rows computed, no padding */
			if (q->pad == 0 && q->s == q->ks && q->need_in == q->need_out * q->ks) {
				s->pool_fused = true;
				s->pool = q->ks;
				s->pooled = q->need_out;
				s->direct = s->gap_fused = false;
			}
		}
	}
	/* a fused convolution's rows are never stored: its pooling's are */
	for (int i = 0; i < nl; i++)
		if (!pl->st[i].pool_fused)
			pl->act_max = max64(pl->act_max, pl->st[i].need_out * pl->st[i].out_ch);
	/* two ping-pong buffers, or a graph's outputs alive at once */
	sample = pl->graph ? graph_layout(pl, net) : 2 * pl->act_max;
	pl->tile = NET_TILE;
	while (pl->tile > 1 && pl->tile * (sample + pl->col_max) > NET_TILE_FLOATS * 2)
		pl->tile /= 2;
	return true;
}

/* ---- tiles --------------------------------------------------------------------------- */

/* A tile's activation: cnt samples of rows x ch, sample stride floats apart. */
struct act {
	const float *p;
	int64_t stride, rows, ch;
};

/* im2col of the tile's samples into col [cnt * need_out][kc], zeros for
 * padding and for rows past the ones computed (never read, see plan_make). */
static void tile_im2col(const struct net_step *s, const struct act *in, int64_t cnt, float *col)
{
	const struct xo_cpu_im2col g = {.x_stride = in->stride, .len = in->rows, .ch = s->in_ch,
					.out = s->need_out, .ks = s->ks, .s = s->s, .dil = s->dil,
					.pad = s->pad};

	xo_cpu_im2col(&g, in->p, cnt, col);
}

/* act(x W + b) of conv1d/dense step s over cnt samples of in, into y (rows
 * of out_ch floats, a sample's rows back to back; softmax in place); col is
 * the im2col scratch for convolutions whose rows are not plain windows of
 * the input. */
static void step_gemm(const struct xo_cpu_kernels *k, const struct net_step *s,
                      const struct act *in, int64_t cnt, float *col, float *y)
{
	struct xo_cpu_gemm g = {
	    .k = s->kc,
	    .n = s->out_ch,
	    .np = s->np,
	    .b = s->w,
	    .bias = s->b,
	    .c = y,
	    .ldc = s->out_ch,
	    .act = s->act == XO_ACTIVATION_SOFTMAX ? XO_ACTIVATION_LINEAR : s->act,
	};

	if (s->kind == XO_NET_DENSE) {
		g.a = (struct xo_cpu_rows){in->p, in->stride, cnt, 0};
		g.m = cnt;
	} else if (s->windows) {
		g.a = (struct xo_cpu_rows){in->p, s->s * s->in_ch, s->need_out, in->stride};
		g.m = cnt * s->need_out;
	} else {
		tile_im2col(s, in, cnt, col);
		g.a = (struct xo_cpu_rows){col, s->kc, cnt * s->need_out, 0};
		g.m = cnt * s->need_out;
	}
	k->gemm_nn(&g);
	if (s->act == XO_ACTIVATION_SOFTMAX)
		k->softmax_fwd(y, y, g.m, s->out_ch);
}

/* The fused conv + max pooling of step s over cnt samples of in: pooled
 * rows into y, the window argmax into arg (NULL: not kept). */
static struct xo_cpu_net_conv_pool conv_pool_of(const struct net_step *s, const struct act *in,
                                                int64_t cnt, float *y, int32_t *arg)
{
	return (struct xo_cpu_net_conv_pool){
	    .x = in->p,
	    .x_stride = in->stride,
	    .samples = cnt,
	    .kc = s->kc,
	    .ch = s->in_ch,
	    .f = s->out_ch,
	    .pool = s->pool,
	    .pooled = s->pooled,
	    .w = s->w,
	    .bias = s->b,
	    .act = s->act,
	    .y = y,
	    .arg = arg,
	    .y_stride = s->pooled * s->out_ch,
	};
}

/* The direct conv of step s over cnt samples of in: rows into y (NULL: not
 * stored; sample stride need_out * out_ch), the fused global average
 * pooling into gap (NULL: none; sample stride out_ch). */
static struct xo_cpu_net_conv conv_of(const struct net_step *s, const struct act *in, int64_t cnt,
                                      float *y, float *gap)
{
	return (struct xo_cpu_net_conv){
	    .x = in->p,
	    .x_stride = in->stride,
	    .ldx = s->in_ch,
	    .samples = cnt,
	    .out = s->need_out,
	    .s = s->s,
	    .dil = s->dil,
	    .ks = s->ks,
	    .ch = s->in_ch,
	    .w = s->w,
	    .bias = s->b,
	    .f = s->out_ch,
	    .np = s->np,
	    .act = s->act,
	    .y = y,
	    .y_stride = s->need_out * s->out_ch,
	    .ldy = s->out_ch,
	    .gap = gap,
	    .gap_stride = s->out_ch,
	};
}

/* The pooling of one sample of step s, as the pool kernels take it (x and y
 * set per sample). */
static struct xo_cpu_pool pool_of(const struct net_step *s)
{
	return (struct xo_cpu_pool){
	    .batch = 1,
	    .len = s->need_in,
	    .ch = s->in_ch,
	    .out = s->need_out,
	    .pool = s->ks,
	    .stride = s->s,
	    .pad = s->pad,
	};
}

/* Loss terms and correct predictions of samples [s0, s0 + cnt), whose
 * probabilities are in place, for part part. */
static void tile_metrics(struct net_job *j, int part, int64_t s0, int64_t cnt)
{
	const int64_t classes = j->plan->classes;

	for (int64_t n = 0; n < cnt; n++) {
		const float *pr = j->probs + (s0 + n) * classes;
		int64_t r = j->index ? j->index[s0 + n] : s0 + n;
		const float *tr = j->t + r * classes;

		j->rows[s0 + n] = xo_cpu_ce_row(pr, tr, classes);
		j->correct[part] += xo_cpu_argmax_row(pr, classes) == xo_cpu_argmax_row(tr, classes);
	}
}

/* global_average_pooling1d of cnt samples (x: len rows of ch, samples xs
 * floats apart) into y (ch floats, samples ys apart): each channel summed in
 * row order in float, then divided by len (an IEEE division), the op's
 * arithmetic (cpu_pool.c window_mean), so the result is bit-identical; the
 * row additions are the ISA level's vector add (one float addition per
 * element, as the scalar loop). */
static void tile_gap(const struct xo_cpu_kernels *k, const float *x, int64_t xs, int64_t len,
                     int64_t ch, int64_t cnt, float *y, int64_t ys)
{
	const float cntf = (float)len;

	for (int64_t n = 0; n < cnt; n++) {
		const float *xn = x + n * xs;
		float *yn = y + n * ys;

		memcpy(yn, xn, (size_t)ch * sizeof(float));
		for (int64_t l = 1; l < len; l++)
			k->add(yn, xn + l * ch, ch);
		for (int64_t c = 0; c < ch; c++)
			yn[c] = yn[c] / cntf;
	}
}

/* The merge op's elementwise forward of one sample's count floats (mode:
 * enum xo_merge): the op kernel's own function, so bit-identical to it,
 * NaN rule included. */
static void merge_fwd(int mode, const float *a, const float *b, float *y, int64_t count)
{
	xo_cpu_merge_values((enum xo_merge)mode, a, b, y, count);
}

/* The gradient d of one sample's count floats w.r.t. input which (0: the
 * first, mine; other the second): the op kernel's backward. */
static void merge_bwd(int mode, int which, const float *mine, const float *other,
                      const float *dy, float *d, int64_t count)
{
	xo_cpu_merge_grads((enum xo_merge)mode, which, which ? other : mine, which ? mine : other, dy,
	                 d, count);
}

/* Runs samples [s0, s0 + cnt) through every layer with scratch scr. */
static void run_tile(struct net_job *j, int part, int64_t s0, int64_t cnt, float *scr)
{
	const struct net_plan *pl = j->plan;
	const struct xo_cpu_kernels *k = j->k;
	const int64_t tile = pl->tile;
	float *buf[2] = {scr, scr + tile * pl->act_max};
	float *col = scr + 2 * tile * pl->act_max;
	struct act cur;
	int cb = -1; /* buffer holding cur, -1: the input tensor */
	int64_t classes = pl->classes;

	if (j->index) {
		for (int64_t n = 0; n < cnt; n++)
			memcpy(buf[0] + n * j->net->in_size,
			       j->x + (int64_t)j->index[s0 + n] * j->net->in_size,
			       (size_t)j->net->in_size * sizeof(float));
		cur = (struct act){buf[0], j->net->in_size, pl->st[0].in_len, pl->st[0].in_ch};
		cb = 0;
	} else {
		cur = (struct act){j->x + s0 * j->net->in_size, j->net->in_size, pl->st[0].in_len,
		                   pl->st[0].in_ch};
	}
	for (int i = 0; i < pl->nsteps; i++) {
		const struct net_step *s = &pl->st[i];
		/* a fused pooling makes the next layer this one's end */
		bool last = i + (s->pool_fused || s->gap_fused ? 1 : 0) == pl->nsteps - 1;
		int db = cb == 0 ? 1 : 0;
		float *dst = last ? j->probs + s0 * classes : buf[db];
		struct act out = {dst, s->need_out * s->out_ch, s->need_out, s->out_ch};

		switch (s->kind) {
		default: /* !xo_net_kind_fusable: refused by plan_make */
			XO_ASSERT(!"cpu net: a layer kind plan_make refuses");
			break;
		case XO_NET_CONV1D:
		case XO_NET_DENSE:
			if (s->pool_fused) {
				struct xo_cpu_net_conv_pool cp = conv_pool_of(s, &cur, cnt, dst, NULL);

				j->nk->conv_pool(&cp);
				/* the next layer (the pooling) is done */
				out =
				    (struct act){dst, s->pooled * s->out_ch, s->pooled, s->out_ch};
				i++;
				break;
			}
			if (s->gap_fused) {
				/* the conv's rows are not stored: their means are */
				struct xo_cpu_net_conv cv = conv_of(s, &cur, cnt, NULL, dst);

				j->nk->conv(&cv);
				out = (struct act){dst, s->out_ch, 1, s->out_ch};
				i++;
				break;
			}
			if (s->direct) {
				struct xo_cpu_net_conv cv = conv_of(s, &cur, cnt, dst, NULL);

				j->nk->conv(&cv);
				break;
			}
			if (s->kind == XO_NET_DENSE && last)
				out.stride = classes;
			step_gemm(k, s, &cur, cnt, col, dst);
			break;
		case XO_NET_MAX_POOLING1D: {
			struct xo_cpu_pool p = pool_of(s);

			if (cur.stride == s->need_in * s->in_ch) {
				/* samples back to back: one call */
				p.batch = cnt;
				p.x = cur.p;
				p.y = dst;
				k->pool_fwd(&p);
				break;
			}
			for (int64_t n = 0; n < cnt; n++) {
				p.x = cur.p + n * cur.stride;
				p.y = dst + n * out.stride;
				k->pool_fwd(&p);
			}
			break;
		}
		case XO_NET_GLOBAL_AVERAGE_POOLING1D:
			tile_gap(k, cur.p, cur.stride, s->in_len, s->in_ch, cnt, dst, out.stride);
			break;
		case XO_NET_ACTIVATION: /* refused by xo_cpu_net_fits */
			XO_ASSERT(!"cpu_net: activation layer");
			/* fall through */
		case XO_NET_FLATTEN:
		case XO_NET_DROPOUT:
			/* the same bytes: cur stays, seen with the new shape */
			out = (struct act){cur.p, cur.stride, s->need_out, s->out_ch};
			if (!last)
				break;
			for (int64_t n = 0; n < cnt; n++)
				memcpy(dst + n * classes, cur.p + n * cur.stride,
				       (size_t)classes * sizeof(float));
			out = (struct act){dst, classes, 1, classes};
			break;
		}
		if (out.p == buf[db])
			cb = db;
		else if (out.p != cur.p)
			cb = -1;
		cur = out;
	}
	if (j->rows)
		tile_metrics(j, part, s0, cnt);
}

static void net_task(void *arg, int t, int nt)
{
	struct net_job *j = arg;
	float *scr = j->c->thr[t].p;

	(void)nt;
	for (;;) {
		int64_t tile = atomic_fetch_add(&j->next, 1), s0;

		if (tile >= j->ntiles)
			return;
		s0 = tile * j->plan->tile;
		run_tile(j, t, s0, min64(j->plan->tile, j->n - s0), scr);
	}
}

static bool train_fits(const struct net_plan *pl, const struct xo_net *net);
static enum xo_status graph_forward(struct xo_cpu_ctx *c, const struct net_plan *pl,
                                    const struct xo_net *net);
static void bind_weights(struct net_plan *pl, const struct xo_net *net, float *base);

/*
 * Fills the fields of j that a forward call and a training step share, for
 * net with plan pl (tiles already sized), and *nt, the threads to run: one
 * when the call's multiply-adds (the forward's times work) are too few to
 * split. An index outside x's rows is the gather op's error.
 */
static enum xo_status job_init(struct net_job *j, struct xo_cpu_ctx *c, const struct net_plan *pl,
			       const struct xo_net *net, int64_t work, int *nt)
{
	enum xo_status st;

	memset(j, 0, sizeof(*j));
	if (net->index) {
		st = xo_cpu_index_check(xo_tensor_i32(net->index), net->n,
					xo_tensor_dim(net->x, 0));
		if (st)
			return st;
	}
	j->c = c;
	j->k = c->k;
	j->nk = net_kernels(c);
	j->plan = pl;
	j->net = net;
	j->x = xo_tensor_f32(net->x);
	j->t = net->t ? xo_tensor_f32(net->t) : NULL;
	j->index = net->index ? xo_tensor_i32(net->index) : NULL;
	j->probs = xo_tensor_f32(net->probs);
	j->n = net->n;
	j->ntiles = (net->n + pl->tile - 1) / pl->tile;
	atomic_init(&j->next, 0);
	*nt = c->nthreads;
	if (*nt > j->ntiles)
		*nt = (int)j->ntiles;
	if (net->n * pl->macs * work < NET_PAR_MIN)
		*nt = 1;
	return XO_OK;
}

/* The mean loss and the count of correct predictions of j's nt parts, in
 * sample order (as the categorical_crossentropy op sums them). */
static void job_metrics(const struct net_job *j, int nt)
{
	double total = 0.0;
	int64_t correct = 0;

	for (int64_t r = 0; r < j->n; r++)
		total += j->rows[r];
	for (int t = 0; t < nt; t++)
		correct += j->correct[t];
	xo_tensor_f32(j->net->loss)[0] = (float)(-total / (double)j->n);
	xo_tensor_f32(j->net->correct)[0] = (float)correct;
}

/* ---- the hooks ----------------------------------------------------------------------- */

bool xo_cpu_net_fits(struct xo_backend *be, const struct xo_net *net)
{
	struct net_plan pl;

	if (!be || !be->ctx || !net)
		return false;
	/* Only categorical_crossentropy + Adam + categorical accuracy run
	 * fused (model.c net_describe); any other compile runs op by op. */
	if (net->unfused_compile && (net->training || net->t))
		return false;
	return plan_make(be->ctx, net, &pl) && (!net->training || train_fits(&pl, net));
}

/* Points each conv1d/dense step's w and b at the parameters, or at their
 * padded copy in the shared scratch (base) where the step packs them. */
static void bind_weights(struct net_plan *pl, const struct xo_net *net, float *base)
{
	const float *params = xo_tensor_f32(net->params);

	for (int i = 0; i < pl->nsteps; i++) {
		struct net_step *s = &pl->st[i];
		const struct xo_net_layer *l = &net->layers[i];
		const float *b = l->b_off >= 0 ? params + l->b_off : NULL;

		if (s->kind != XO_NET_CONV1D && s->kind != XO_NET_DENSE)
			continue;
		if (s->pack_off < 0) {
			s->w = params + l->w_off;
			s->b = b;
			continue;
		}
		s->w = base + s->pack_off;
		xo_cpu_pack(params + l->w_off, b, s->kc, s->out_ch, s->np, base + s->pack_off,
			    base + s->pack_off + s->kc * s->np);
		s->b = b ? s->w + s->kc * s->np : NULL;
	}
}

enum xo_status xo_cpu_net_forward(struct xo_backend *be, const struct xo_net *net)
{
	struct xo_cpu_ctx *c = be->ctx;
	struct net_plan pl;
	struct net_job j;
	int64_t per_thread, shared;
	enum xo_status st;
	int nt;

	if (!plan_make(c, net, &pl) || net->training)
		return xo_error(XO_EINVAL, "cpu: net_forward on a net that does not fit");
	if (pl.graph)
		return graph_forward(c, &pl, net);
	st = job_init(&j, c, &pl, net, 1, &nt);
	if (st)
		return st;

	/* shared: packed kernels, then the loss terms (doubles, 64-byte aligned) */
	shared = pl.pack + (net->t ? 2 * net->n : 0);
	per_thread = pl.tile * (2 * pl.act_max + pl.col_max);
	st = xo_cpu_scratch_reserve(c, shared, per_thread, nt);
	if (st)
		return st;
	bind_weights(&pl, net, c->shared.p);
	if (net->t)
		j.rows = (double *)(void *)(c->shared.p + pl.pack);
	xo_cpu_threads_run(c->tp, nt, net_task, &j);
	if (net->t)
		job_metrics(&j, nt);
	return XO_OK;
}

/* ---- training step ------------------------------------------------------------------- */

/*
 * A training step keeps every layer's output of the tile (the backward pass
 * reads them) instead of two ping-pong buffers; a fused conv + pooling keeps
 * the pooled rows and which row of each window won (conv_pool's arg), from
 * which pool_dz writes the convolution's dz directly (pool_bwd and
 * d(relu) in one pass, no rows before pooling stored). The weight gradients
 * of a part's tiles accumulate in a per-part buffer: part t takes a fixed
 * range of tiles in order, and the parts' sums are added in part order, so
 * the step is deterministic for a thread count. Then Adam, the backend's
 * own op.
 */
struct train_job {
	struct net_job f;                /* forward fields (plan, x, t, index, probs, rows) */
	int64_t aoff[NET_MAX_LAYERS];    /* floats per sample before layer i's output */
	int64_t moff[NET_MAX_LAYERS];    /* ... before dropout layer i's mask (i32) */
	int64_t argoff[NET_MAX_LAYERS];  /* ... before fused conv i's window argmax (i32) */
	int64_t a_in, a_tot;             /* ... before the input copy; per sample in all */
	int64_t g_max, dz_max, col_max;  /* per sample: a gradient, a padded dz, dx columns */
	int64_t goff[NET_MAX_LAYERS];    /* offset of layer i's dW [kc][np] in a part's sums */
	int64_t part_floats;             /* floats of a part's dW / db sums */
	const float *wt[NET_MAX_LAYERS]; /* packed kernel^T [f][kcp] (layers with dx) */
	int64_t kcp[NET_MAX_LAYERS];
	uint32_t drop_thr[NET_MAX_LAYERS];
	float drop_scale[NET_MAX_LAYERS];
	double inv_n;
	int nt;
	/* graph: floats per sample before step i's output gradient (each
	 * layer's own, its source's stride) and before the scratch a later
	 * term of a fan-out sum is written to */
	int64_t gboff[NET_MAX_LAYERS], tmoff;
};

/* Layer i's dropout of cnt samples x[n * stride] -> y (same layout) of
 * global samples from s0: element e of sample r is element r * size + e of
 * the layer's [n][size] output, the index the mask is keyed by. The mask
 * ([cnt][count] of -1 / 0) is drawn into mask (forward) or applied from it
 * (backward: the same elements, dy -> dx). */
static void train_dropout(const struct train_job *j, int i, int64_t s0, int64_t cnt, const float *x,
                          float *y, int64_t stride, int32_t *mask, bool bwd)
{
	const struct xo_net_layer *l = &j->f.net->layers[i];
	const struct net_step *s = &j->f.plan->st[i];
	int64_t size = s->out_len * s->out_ch, count = s->need_out * s->out_ch;

	for (int64_t n = 0; n < cnt; n++) {
		if (bwd)
			j->f.k->dropout_apply(x + n * stride, y + n * stride, count,
			                      mask + n * count, j->drop_scale[i]);
		else
			j->f.k->dropout(x + n * stride, y + n * stride, count,
			                (uint64_t)((s0 + n) * size), l->p.seed, (uint32_t)l->p.step,
			                l->p.layer, j->drop_thr[i], j->drop_scale[i],
			                mask + n * count);
	}
}

/* Zeroes the zpad rows before and after each of cnt samples' dz of step s. */
static void dz_pads(const struct net_step *s, float *dz, int64_t cnt)
{
	const int64_t zs = (s->need_out + 2 * s->zpad) * s->np, pad = s->zpad * s->np;

	if (!pad)
		return;
	for (int64_t n = 0; n < cnt; n++) {
		memset(dz + n * zs, 0, (size_t)pad * sizeof(float));
		memset(dz + n * zs + pad + s->need_out * s->np, 0, (size_t)pad * sizeof(float));
	}
}

/* A tile's tensors in a forward pass: each step's input (in2: a merge's
 * second) and output, samples stride floats apart. */
struct tile_io {
	const float *in[NET_MAX_LAYERS], *in2[NET_MAX_LAYERS];
	int64_t in_stride[NET_MAX_LAYERS], in2_stride[NET_MAX_LAYERS];
	float *out[NET_MAX_LAYERS];
	int64_t out_stride[NET_MAX_LAYERS];
};

/*
 * The forward pass of samples [s0, s0 + cnt) in scratch scr (layout of j:
 * the input copy at a_in, step i's output at aoff[i], dropout masks at
 * moff[i]; col the im2col scratch) into io; the last step writes the
 * probabilities. Training keeps every output (a layout of its own); a
 * graph's inference layout reuses a buffer once its last reader is done.
 */
static void tile_forward(struct train_job *j, int64_t s0, int64_t cnt, float *scr, float *col,
                         struct tile_io *io)
{
	const struct net_plan *pl = j->f.plan;
	const struct xo_cpu_kernels *k = j->f.k;
	const int64_t tile = pl->tile, classes = pl->classes, nl = pl->nsteps;
	float *xin = scr + tile * j->a_in;
	const struct xo_net *net = j->f.net;
	const int64_t is = net->in_size, rows = xo_tensor_dim(net->x, 0);
	const int ni = xo_net_ninputs(net);

	{
		/* shuffled rows are cache misses: ask for this tile's label rows
		 * (read by the metrics after the forward pass) and for the next
		 * tile's input and label rows (train_task runs a part's tiles in
		 * order) while this tile computes */
		for (int64_t n = s0; n < min64(s0 + 2 * tile, j->f.n); n++) {
			int64_t r = j->f.index ? j->f.index[n] : n;

			if (j->f.t)
				__builtin_prefetch(j->f.t + r * classes);
			if (n < s0 + cnt)
				continue;
			for (int q = 0; q < ni; q++) {
				int64_t off, size = xo_net_input(net, q, &off);

				for (int64_t e = 0; e < size; e += 16)
					__builtin_prefetch(j->f.x + off * rows + r * size + e);
			}
		}
		/* sample r's row: each input's values at its in_off (struct
		 * xo_net: input k's rows are a block of x) */
		for (int64_t n = 0; n < cnt; n++) {
			int64_t r = j->f.index ? j->f.index[s0 + n] : s0 + n;

			for (int q = 0; q < ni; q++) {
				int64_t off, size = xo_net_input(net, q, &off);

				memcpy(xin + n * is + off, j->f.x + off * rows + r * size,
				       (size_t)size * sizeof(float));
			}
		}
	}
	for (int i = 0; i < nl; i++) {
		const struct net_step *s = &pl->st[i];
		bool last = i == nl - 1;
		int j0 = s->src[0], j1 = s->nsrc > 1 ? s->src[1] : 0;
		int64_t o0 = 0, o1 = 0; /* input -1 - j's offset in the row */

		if (j0 < 0)
			xo_net_input(net, -1 - j0, &o0);
		if (j1 < 0)
			xo_net_input(net, -1 - j1, &o1);
		io->in[i] = j0 < 0 ? xin + o0 : io->out[j0];
		io->in_stride[i] = j0 < 0 ? is : io->out_stride[j0];
		if (s->nsrc > 1) {
			io->in2[i] = j1 < 0 ? xin + o1 : io->out[j1];
			io->in2_stride[i] = j1 < 0 ? is : io->out_stride[j1];
		}
		io->out[i] = last ? j->f.probs + s0 * classes : scr + tile * j->aoff[i];
		io->out_stride[i] = last ? classes : s->need_out * s->out_ch;
		if (s->pool_fused) {
			/* conv + pooling: only the pooled rows (layer i + 1's output)
			 * and the window argmax are kept; i + 1 < nl - 1 (the last
			 * layer is dense) */
			const struct net_step *q = &pl->st[i + 1];
			const struct act x = {io->in[i], io->in_stride[i], s->need_in, s->in_ch};
			/* the window argmax only for training's backward */
			struct xo_cpu_net_conv_pool cp = conv_pool_of(
			    s, &x, cnt, scr + tile * j->aoff[i + 1],
			    j->f.net->training ? (int32_t *)(void *)(scr + tile * j->argoff[i]) : NULL);

			j->f.nk->conv_pool(&cp);
			io->out[i] = NULL;
			io->in[i + 1] = NULL;
			io->in_stride[i + 1] = 0;
			io->out[i + 1] = cp.y;
			io->out_stride[i + 1] = q->need_out * q->out_ch;
			i++;
			continue;
		}
		switch (s->kind) {
		default: /* !xo_net_kind_fusable: refused by plan_make */
			XO_ASSERT(!"cpu net: a layer kind plan_make refuses");
			break;
		case XO_NET_CONV1D:
		case XO_NET_DENSE: {
			const struct act x = {io->in[i], io->in_stride[i], s->need_in, s->in_ch};

			if (s->gap_fused) {
				/* rows kept (the backward pass reads them) and
				 * the global average pooling (layer i + 1 < nl - 1:
				 * the last layer is dense) in one pass */
				struct xo_cpu_net_conv cv =
				    conv_of(s, &x, cnt, io->out[i], scr + tile * j->aoff[i + 1]);

				j->f.nk->conv(&cv);
				io->in[i + 1] = io->out[i];
				io->in_stride[i + 1] = io->out_stride[i];
				io->out[i + 1] = cv.gap;
				io->out_stride[i + 1] = s->out_ch;
				i++;
				break;
			}
			if (s->direct) {
				struct xo_cpu_net_conv cv = conv_of(s, &x, cnt, io->out[i], NULL);

				cv.y_stride = io->out_stride[i];
				j->f.nk->conv(&cv);
				break;
			}
			step_gemm(k, s, &x, cnt, col, io->out[i]);
			break;
		}
		case XO_NET_MAX_POOLING1D: {
			struct xo_cpu_pool p = pool_of(s);

			for (int64_t n = 0; n < cnt; n++) {
				p.x = io->in[i] + n * io->in_stride[i];
				p.y = io->out[i] + n * io->out_stride[i];
				k->pool_fwd(&p);
			}
			break;
		}
		case XO_NET_GLOBAL_AVERAGE_POOLING1D:
			tile_gap(k, io->in[i], io->in_stride[i], s->in_len, s->in_ch, cnt, io->out[i],
			         io->out_stride[i]);
			break;
		case XO_NET_DROPOUT:
			if (j->drop_thr[i]) {
				train_dropout(j, i, s0, cnt, io->in[i], io->out[i], io->in_stride[i],
				              (int32_t *)(void *)(scr + tile * j->moff[i]), false);
				io->out_stride[i] = io->in_stride[i];
				break;
			}
			/* rate 0 keeps everything, scale 1 */
			/* fall through */
		case XO_NET_ACTIVATION: /* refused by xo_cpu_net_fits */
			XO_ASSERT(s->kind != XO_NET_ACTIVATION);
			/* fall through */
		case XO_NET_FLATTEN:
			if (last) { /* a graph's output (inference): the bytes, copied */
				for (int64_t n = 0; n < cnt; n++)
					memcpy(io->out[i] + n * classes,
					       io->in[i] + n * io->in_stride[i],
					       (size_t)classes * sizeof(float));
				break;
			}
			io->out[i] = (float *)io->in[i];
			io->out_stride[i] = io->in_stride[i];
			break;
		case XO_NET_ADD:
		case XO_NET_SUBTRACT:
		case XO_NET_MULTIPLY:
		case XO_NET_AVERAGE:
		case XO_NET_MAXIMUM:
		case XO_NET_MINIMUM:
			for (int64_t n = 0; n < cnt; n++)
				merge_fwd(s->mode, io->in[i] + n * io->in_stride[i],
				          io->in2[i] + n * io->in2_stride[i],
				          io->out[i] + n * io->out_stride[i], s->need_out * s->out_ch);
			break;
		case XO_NET_CONCATENATE:
			for (int64_t n = 0; n < cnt; n++)
				xo_cpu_concat_rows(io->in[i] + n * io->in_stride[i],
				                   io->in2[i] + n * io->in2_stride[i],
				                   io->out[i] + n * io->out_stride[i], s->need_out,
				                   s->in_ch, s->in_ch2);
			break;
		}
	}
}


/* Where step i writes its gradient w.r.t. source k (stride: that source's
 * output's, into *stride): the source's gradient buffer when this is its
 * first term (readers run from the last back, as the op path's backward),
 * else the term scratch that graph_deliver adds in. NULL: the source needs
 * no gradient (the input, or a part of the graph without parameters). */
static float *graph_target(const struct train_job *j, int i, int k, float *scr,
                           const bool *written, int64_t *stride)
{
	const struct net_plan *pl = j->f.plan;
	int src = pl->st[i].src[k];

	if (src < 0 || !pl->st[src].grad)
		return NULL;
	*stride = pl->st[src].stride;
	return scr + pl->tile * (written[src] ? j->tmoff : j->gboff[src]);
}

/* Step i's term d (graph_target's) of source k's gradient for cnt samples:
 * the first term's rows past those step i reads are zero (it reads fewer
 * rows than another reader); a later term is added, one float addition an
 * element as the op path's fan-out sum (merge mode add). */
static void graph_deliver(const struct train_job *j, int i, int k, int64_t cnt, const float *d,
                          float *scr, bool *written)
{
	const struct net_plan *pl = j->f.plan;
	const struct net_step *s = &pl->st[i], *p = &pl->st[s->src[k]];
	float *g = scr + pl->tile * j->gboff[s->src[k]];
	const int64_t w = s->need_in * (k ? s->in_ch2 : s->in_ch), v = p->need_out * p->out_ch;
	const int64_t st = p->stride;

	for (int64_t n = 0; n < cnt; n++) {
		if (!written[s->src[k]])
			memset(g + n * st + w, 0, (size_t)(v - w) * sizeof(float));
		else
			j->f.k->add(g + n * st, d + n * st, w);
	}
	written[s->src[k]] = true;
}

/* A merge or concatenate step i's backward: each source's gradient term
 * from gout (the first source's first, as the merge op writes da then the
 * fan-out sums add db), each delivered before the next is made. */
static void graph_merge_bwd(const struct train_job *j, int i, int64_t cnt,
                            const struct tile_io *io, const float *gout, float *scr,
                            bool *written)
{
	const struct net_step *s = &j->f.plan->st[i];
	const float *x[2] = {io->in[i], io->in2[i]};
	const int64_t xs[2] = {io->in_stride[i], io->in2_stride[i]};
	const int64_t count = s->need_out * s->out_ch;

	for (int k = 0; k < 2; k++) {
		int64_t ds = 0;
		float *d = graph_target(j, i, k, scr, written, &ds);

		if (!d)
			continue;
		for (int64_t n = 0; n < cnt; n++)
			if (s->kind == XO_NET_CONCATENATE)
				xo_cpu_concat_grads(k, gout + n * s->stride, d + n * ds, s->need_out,
				                    s->in_ch, s->in_ch2);
			else
				merge_bwd(s->mode, k, x[k] + n * xs[k], x[1 - k] + n * xs[1 - k],
				          gout + n * s->stride, d + n * ds, count);
		graph_deliver(j, i, k, cnt, d, scr, written);
	}
}

static void train_tile(struct train_job *j, int part, int64_t s0, int64_t cnt, float *scr,
                       float *sums)
{
	const struct net_plan *pl = j->f.plan;
	const struct xo_cpu_kernels *k = j->f.k;
	const int64_t tile = pl->tile, classes = pl->classes, nl = pl->nsteps;
	struct tile_io iob, *io = &iob;
	float *g[2], *dz, *col;
	float *gout;
	int gb = 0;
	bool written[NET_MAX_LAYERS] = {false}; /* graph: a gradient's first term is in */

	g[0] = scr + tile * j->a_tot;
	g[1] = g[0] + tile * j->g_max;
	dz = g[1] + tile * j->g_max;
	col = dz + tile * j->dz_max;

	/* forward, every output kept */
	tile_forward(j, s0, cnt, scr, col, io);

	/* loss terms, accuracy, and dz of the last layer (the op's, through the clip) */
	tile_metrics(&j->f, part, s0, cnt);
	for (int64_t n = 0; n < cnt; n++) {
		const float *pr = j->f.probs + (s0 + n) * classes;
		int64_t r = j->f.index ? j->f.index[s0 + n] : s0 + n;
		const float *tr = j->f.t + r * classes;
		const struct net_step *s = &pl->st[nl - 1];
		float *d = dz + n * s->np;

		xo_cpu_ce_bwd_row(pr, tr, classes, j->inv_n, d);
		for (int64_t c = classes; c < s->np; c++)
			d[c] = 0.0f;
	}

	/* backward: gout is d loss / d out[i] (the last layer's dz is ready) */
	gout = NULL;
	for (int i = (int)nl - 1; i >= 0; i--) {
		const struct net_step *s = &pl->st[i];
		const struct xo_net_layer *l = &j->f.net->layers[i];
		float *gin = l->need_dx ? g[gb] : NULL;
		/* floats per sample of gin: its source's output's */
		int64_t gin_stride = s->need_in * s->in_ch;

		if (pl->graph) {
			/* a graph's gradients: one buffer per output, the
			 * first term written in place, later ones added */
			if (!s->grad)
				continue;
			gout = i == nl - 1 ? NULL : scr + tile * j->gboff[i];
			if (s->nsrc > 1) {
				graph_merge_bwd(j, i, cnt, io, gout, scr, written);
				continue;
			}
			gin = graph_target(j, i, 0, scr, written, &gin_stride);
		}
		switch (s->kind) {
		default: /* !xo_net_kind_fusable: refused by plan_make */
			XO_ASSERT(!"cpu net: a layer kind plan_make refuses");
			break;
		case XO_NET_CONV1D:
		case XO_NET_DENSE: {
			int64_t m = s->kind == XO_NET_DENSE ? cnt : cnt * s->need_out;
			struct xo_cpu_gemm_tn tn = {
			    .m = m,
			    .k = s->kc,
			    .np = s->np,
			    .z = dz,
			    .d = sums + j->goff[i],
			};

			/* dz: sample n's row o at dz + n * zs + (zpad + o) * np */
			const int64_t zs = (s->need_out + 2 * s->zpad) * s->np;

			if (i != nl - 1 && !s->pool_fused && !s->gap_fused) {
				if (s->zpad == 0) {
					xo_cpu_act_dz(k, s->act, io->out[i], gout, dz, m, s->out_ch,
					              s->np);
				} else {
					dz_pads(s, dz, cnt);
					for (int64_t n = 0; n < cnt; n++)
						xo_cpu_act_dz(k, s->act, io->out[i] + n * io->out_stride[i],
						              gout + n * io->out_stride[i],
						              dz + n * zs + s->zpad * s->np, s->need_out,
						              s->out_ch, s->np);
				}
			}
			if (l->b_off >= 0) /* zero pad rows add +0 */
				k->colsum(dz, s->zpad ? cnt * (s->need_out + 2 * s->zpad) : m, s->np,
				          sums + j->goff[i] + s->kc * s->np);
			if (s->direct) {
				const struct xo_cpu_net_conv_dw dw = {
				    .x = io->in[i],
				    .x_stride = io->in_stride[i],
				    .ldx = s->in_ch,
				    .samples = cnt,
				    .out = s->need_out,
				    .s = s->s,
				    .dil = s->dil,
				    .ks = s->ks,
				    .ch = s->in_ch,
				    .z = dz + s->zpad * s->np,
				    .z_stride = zs,
				    .np = s->np,
				    .d = sums + j->goff[i],
				};

				j->f.nk->conv_dw(&dw);
			} else if (s->kind == XO_NET_DENSE) {
				tn.a = (struct xo_cpu_rows){io->in[i], io->in_stride[i], cnt, 0};
			} else if (s->windows) {
				tn.a = (struct xo_cpu_rows){io->in[i], s->s * s->in_ch, s->need_out,
				                            io->in_stride[i]};
			} else {
				/* padding or dilation: the forward pass's im2col
				 * rows again (col is overwritten by dx below) */
				const struct act x = {io->in[i], io->in_stride[i], s->need_in, s->in_ch};

				tile_im2col(s, &x, cnt, col);
				tn.a = (struct xo_cpu_rows){col, s->kc, m, 0};
			}
			if (!s->direct)
				k->gemm_tn(&tn);
			if (!gin)
				break;
			if (s->tdx) {
				/* dx[r] = sum over taps q of dz[r - q * dil] W_q^T: a
				 * direct conv over the padded dz with the taps
				 * reversed */
				const struct xo_cpu_net_conv cv = {
				    .x = dz,
				    .x_stride = zs,
				    .ldx = s->np,
				    .samples = cnt,
				    .out = s->need_in,
				    .s = 1,
				    .dil = s->dil,
				    .ks = s->ks,
				    .ch = s->out_ch,
				    .w = j->wt[i],
				    .f = s->in_ch,
				    .np = j->kcp[i],
				    .act = XO_ACTIVATION_LINEAR,
				    .y = gin,
				    .y_stride = gin_stride,
				    .ldy = s->in_ch,
				};

				j->f.nk->conv(&cv);
				break;
			}
			{
				struct xo_cpu_gemm gm = {
				    .a = {dz, s->np, m, 0},
				    .m = m,
				    .k = s->out_ch,
				    .n = s->kc,
				    .np = j->kcp[i],
				    .b = j->wt[i],
				    .act = XO_ACTIVATION_LINEAR,
				};

				if (s->kind == XO_NET_DENSE) {
					gm.c = gin;
					gm.ldc = gin_stride;
					k->gemm_nn(&gm);
					break;
				}
				gm.c = col;
				gm.ldc = s->kc;
				k->gemm_nn(&gm);
				for (int64_t n = 0; n < cnt; n++) {
					float *dxs = gin + n * gin_stride;

					memset(dxs, 0, (size_t)gin_stride * sizeof(float));
					for (int64_t o = 0; o < s->need_out; o++) {
						const float *cr = col + (n * s->need_out + o) * s->kc;

						if (s->windows) {
							k->add(dxs + o * s->s * s->in_ch, cr, s->kc);
							continue;
						}
						/* col2im: tap q of row o is input row
						 * o * s + q * dil - pad (none outside) */
						for (int64_t q = 0; q < s->ks; q++) {
							int64_t r = o * s->s + q * s->dil - s->pad;

							if (r >= 0 && r < s->need_in)
								k->add(dxs + r * s->in_ch,
								       cr + q * s->in_ch, s->in_ch);
						}
					}
				}
			}
			break;
		}
		case XO_NET_MAX_POOLING1D: {
			struct xo_cpu_pool p = pool_of(s);

			if (i > 0 && pl->st[i - 1].pool_fused) {
				/* pool_bwd + d(relu): the convolution's dz, straight */
				const struct net_step *cv = &pl->st[i - 1];

				j->f.nk->pool_dz(
				    io->out[i],
				    (const int32_t *)(const void *)(scr + tile * j->argoff[i - 1]),
				    gout, dz, cnt * cv->pooled, cv->out_ch, cv->pool, cv->act);
				gin = NULL;
				break;
			}
			if (!gin)
				break;
			for (int64_t n = 0; n < cnt; n++) {
				p.x = io->in[i] + n * io->in_stride[i];
				p.dy = gout + n * io->out_stride[i];
				p.y = gin + n * gin_stride;
				k->pool_bwd(&p);
			}
			break;
		}
		case XO_NET_GLOBAL_AVERAGE_POOLING1D:
			if (i > 0 && pl->st[i - 1].gap_fused) {
				/* dy / len and d(act): the convolution's dz, straight */
				const struct net_step *cv = &pl->st[i - 1];
				const int64_t zs = (cv->need_out + 2 * cv->zpad) * cv->np;

				dz_pads(cv, dz, cnt);
				j->f.nk->gap_dz(io->out[i - 1], gout, dz + cv->zpad * cv->np, cnt,
				                cv->need_out, cv->out_ch, cv->np, zs, cv->act);
				gin = NULL;
				break;
			}
			if (!gin)
				break;
			/* dx[l][c] = dy[c] / len for every row l (cpu_pool.c) */
			for (int64_t n = 0; n < cnt; n++) {
				float *dxs = gin + n * gin_stride;
				const float *dys = gout + n * io->out_stride[i];

				for (int64_t c = 0; c < s->in_ch; c++)
					dxs[c] = dys[c] / (float)s->in_len;
				for (int64_t r = 1; r < s->in_len; r++)
					memcpy(dxs + r * s->in_ch, dxs,
					       (size_t)s->in_ch * sizeof(float));
			}
			break;
		case XO_NET_DROPOUT:
			if (!gin)
				break;
			if (j->drop_thr[i]) {
				train_dropout(j, i, s0, cnt, gout, gin, io->out_stride[i],
				              (int32_t *)(void *)(scr + tile * j->moff[i]), true);
				break;
			}
			/* fall through */
		case XO_NET_ACTIVATION: /* refused by xo_cpu_net_fits */
			XO_ASSERT(s->kind != XO_NET_ACTIVATION);
			/* fall through */
		case XO_NET_FLATTEN:
			/* the same bytes: the gradient passes unchanged (a
			 * graph's into its source's buffer or term) */
			if (!pl->graph) {
				gin = gout;
				break;
			}
			for (int64_t n = 0; gin && n < cnt; n++)
				memcpy(gin + n * gin_stride, gout + n * gin_stride,
				       (size_t)(s->need_in * s->in_ch) * sizeof(float));
			break;
		}
		if (pl->graph) {
			if (gin)
				graph_deliver(j, i, 0, cnt, gin, scr, written);
			continue;
		}
		if (!l->need_dx)
			break;
		if (gin == g[gb])
			gb ^= 1;
		gout = gin;
	}
}

/*
 * A graph's gradient buffers (each step's but the last's, of its output's
 * stride, where the training step uses it) placed from base as the
 * inference layout places outputs: each kept from its first term (its last
 * reader, the backward pass running from the last step) to its own step,
 * clear of every other alive then, into goff. Returns their floats per
 * sample.
 */
static int64_t graph_grad_layout(const struct net_plan *pl, int64_t *goff, int64_t base)
{
	const int nl = pl->nsteps;
	int rd[NET_MAX_LAYERS]; /* the last reader of each step's output */
	struct net_buf b[NET_MAX_LAYERS];
	int64_t tot = 0;
	int nb = 0;

	for (int i = 0; i < nl; i++) {
		rd[i] = i;
		for (int k = 0; k < pl->st[i].nsrc; k++)
			if (pl->st[i].src[k] >= 0)
				rd[pl->st[i].src[k]] = i;
	}
	/* backward time: step i runs at nl - 1 - i */
	for (int i = nl - 2; i >= 0; i--) {
		if (!pl->st[i].grad)
			continue;
		goff[i] = base + buf_place(b, &nb, nl - 1 - rd[i], nl - 1 - i, pl->st[i].stride);
		tot = max64(tot, goff[i] - base + pl->st[i].stride);
	}
	return tot;
}

/* A graph's inference tiles (tile_forward in the plan's layout), claimed
 * in turn as net_task's. */
static void graph_task(void *arg, int t, int nt)
{
	struct train_job *j = arg;
	const struct net_plan *pl = j->f.plan;
	float *scr = j->f.c->thr[t].p;
	struct tile_io io;

	(void)nt;
	for (;;) {
		int64_t tile = atomic_fetch_add(&j->f.next, 1), s0, cnt;

		if (tile >= j->f.ntiles)
			return;
		s0 = tile * pl->tile;
		cnt = min64(pl->tile, j->f.n - s0);
		tile_forward(j, s0, cnt, scr, scr + pl->tile * pl->a_tot, &io);
		if (j->f.rows)
			tile_metrics(&j->f, t, s0, cnt);
	}
}

/* net_forward of a graph: as the chain's, with each thread's scratch the
 * plan's layout (outputs alive until their last reader) and the im2col
 * rows after it; dropout is the identity (no masks). */
static enum xo_status graph_forward(struct xo_cpu_ctx *c, const struct net_plan *plan,
                                    const struct xo_net *net)
{
	struct net_plan pl = *plan;
	struct train_job *j = calloc(1, sizeof(*j));
	enum xo_status st;
	int nt;

	if (!j)
		return xo_error(XO_ENOMEM, "cpu: out of memory");
	st = job_init(&j->f, c, &pl, net, 1, &nt);
	if (!st)
		st = xo_cpu_scratch_reserve(c, pl.pack + (net->t ? 2 * net->n : 0),
		                            pl.tile * (pl.a_tot + pl.col_max), nt);
	if (st)
		goto out_free;
	bind_weights(&pl, net, c->shared.p);
	j->a_in = pl.a_in;
	memcpy(j->aoff, pl.aoff, sizeof(j->aoff));
	if (net->t)
		j->f.rows = (double *)(void *)(c->shared.p + pl.pack);
	xo_cpu_threads_run(c->tp, nt, graph_task, j);
	if (net->t)
		job_metrics(&j->f, nt);
out_free:
	free(j);
	return st;
}

static void train_task(void *arg, int t, int nt)
{
	struct train_job *j = arg;
	float *scr = j->f.c->thr[t].p, *sums = scr;
	int64_t lo = j->f.ntiles * t / nt, hi = j->f.ntiles * (t + 1) / nt;

	memset(sums, 0, (size_t)j->part_floats * sizeof(float));
	for (int64_t tile = lo; tile < hi; tile++) {
		int64_t s0 = tile * j->f.plan->tile;

		train_tile(j, t, s0, min64(j->f.plan->tile, j->f.n - s0), scr + j->part_floats,
		           sums);
	}
}

/* Whether the training step takes a net the plan fits: the last layer is
 * dense(softmax), the first needs no input gradient, and the step's tensors
 * are there (convolutions that do not read their windows in place redo the
 * tile's im2col for dW and add dx back tap by tap). */
static bool train_fits(const struct net_plan *pl, const struct xo_net *net)
{
	const struct net_step *last = &pl->st[pl->nsteps - 1];

	/* (loss, correct and adam are filled in after net_fits) */
	if (!net->t || !net->params || !net->grads || !net->adam_m || !net->adam_v)
		return false;
	if (last->kind != XO_NET_DENSE || last->act != XO_ACTIVATION_SOFTMAX ||
	    net->layers[0].need_dx)
		return false;
	return true;
}

/* The kernel w [ks][in_ch][f] of step s with its taps reversed and
 * transposed, [ks][f][cp] (cp >= in_ch, zero padded): row (q, o) column c is
 * w[ks - 1 - q][c][o], the weights of dx = a direct conv over dz. */
static void pack_flip(const float *w, const struct net_step *s, int64_t cp, float *wf)
{
	for (int64_t q = 0; q < s->ks; q++)
		for (int64_t o = 0; o < s->out_ch; o++) {
			float *d = wf + (q * s->out_ch + o) * cp;

			for (int64_t c = 0; c < s->in_ch; c++)
				d[c] = w[((s->ks - 1 - q) * s->in_ch + c) * s->out_ch + o];
			for (int64_t c = s->in_ch; c < cp; c++)
				d[c] = 0.0f;
		}
}

enum xo_status xo_cpu_net_train_step(struct xo_backend *be, const struct xo_net *net)
{
	struct xo_cpu_ctx *c = be->ctx;
	const int64_t vw = c->k->vw;
	struct net_plan pl;
	struct train_job jb, *j = &jb;
	struct xo_op_args adam = {0};
	const float *params;
	float *grads;
	int64_t shared, per_thread, off, wt_off, per_sample, tm = 0;
	enum xo_status st;
	int nt;

	if (!plan_make(c, net, &pl) || !net->training || !train_fits(&pl, net) || !net->loss ||
	    !net->correct)
		return xo_error(XO_EINVAL, "cpu: net_train_step on a net that does not fit");
	memset(j, 0, sizeof(*j));

	/* per-sample layout of a tile's scratch, the parts' sums, packed kernels */
	off = 0;
	j->a_in = off;
	off += net->in_size;
	for (int i = 0; i < pl.nsteps; i++) {
		struct net_step *s = &pl.st[i];
		const struct xo_net_layer *l = &net->layers[i];

		j->aoff[i] = off;
		if (s->pool_fused) {
			/* rows before pooling are not kept: the argmax of each window */
			j->argoff[i] = off;
			off += s->pooled * s->out_ch;
		} else if (i < pl.nsteps - 1 && s->kind != XO_NET_FLATTEN &&
		           !(s->kind == XO_NET_DROPOUT && l->p.rate == 0.0f)) {
			/* a graph's dropout output lies as its source's */
			off += pl.graph ? s->stride : s->need_out * s->out_ch;
		}
		if (pl.graph && i < pl.nsteps - 1 && s->grad) {
			tm = max64(tm, s->stride); /* the term scratch */
		} else if (!pl.graph) {
			j->g_max = max64(j->g_max,
			                 max64(s->need_in * s->in_ch, s->need_out * s->out_ch));
		}
		if (s->kind == XO_NET_DROPOUT && l->p.rate > 0.0f) {
			j->drop_thr[i] = (uint32_t)ceil((double)l->p.rate * 16777216.0);
			j->drop_scale[i] = 1.0f / (1.0f - l->p.rate);
			j->moff[i] = off;
			off += s->need_out * s->out_ch;
		}
		if (s->kind != XO_NET_CONV1D && s->kind != XO_NET_DENSE)
			continue;
		/* dx by the direct kernel over a zero-padded dz (the padded
		 * rows are exactly the input rows: stride 1, no padding) */
		s->tdx = s->direct && l->need_dx && s->s == 1 &&
		         s->need_in == s->need_out + (s->ks - 1) * s->dil;
		s->zpad = s->tdx ? (s->ks - 1) * s->dil : 0;
		j->dz_max = max64(j->dz_max, (s->need_out + 2 * s->zpad) * s->np);
		/* im2col rows, or dx columns */
		if (s->kind == XO_NET_CONV1D && (!s->direct || (l->need_dx && !s->tdx)))
			j->col_max = max64(j->col_max, s->need_out * s->kc);
		j->goff[i] = j->part_floats;
		j->part_floats += (s->kc + 1) * s->np;
		/* dx's packed kernel: [f][kcp] transposed, or for tdx the taps
		 * reversed, [ks * f][kcp] with kcp the input channels padded */
		j->kcp[i] = s->tdx ? round_up(s->in_ch, vw) : round_up(s->kc, vw);
	}
	if (pl.graph) {
		j->tmoff = off;
		off += tm;
		off += graph_grad_layout(&pl, j->gboff, off);
	}
	j->a_tot = off;
	j->part_floats = round_up(j->part_floats, 16);
	per_sample = j->a_tot + 2 * j->g_max + j->dz_max + j->col_max;
	while (pl.tile > 1 && pl.tile * per_sample > NET_TILE_FLOATS * 4)
		pl.tile /= 2;
	wt_off = pl.pack;
	shared = wt_off;
	for (int i = 0; i < pl.nsteps; i++)
		if (net->layers[i].need_dx && pl.st[i].kind != XO_NET_MAX_POOLING1D &&
		    (pl.st[i].kind == XO_NET_CONV1D || pl.st[i].kind == XO_NET_DENSE))
			shared += round_up(pl.st[i].out_ch * j->kcp[i] *
			                       (pl.st[i].tdx ? pl.st[i].ks : 1), 16);
	shared += 2 * net->n;

	/* forward, dx and dw: about three times the forward's multiply-adds */
	st = job_init(&j->f, c, &pl, net, 3, &nt);
	if (st)
		return st;
	j->inv_n = 1.0 / (double)net->n;
	j->nt = nt;
	per_thread = j->part_floats + pl.tile * per_sample;
	st = xo_cpu_scratch_reserve(c, shared, per_thread, nt);
	if (st)
		return st;

	bind_weights(&pl, net, c->shared.p);
	params = xo_tensor_f32(net->params);
	for (int i = 0; i < pl.nsteps; i++) {
		const struct net_step *s = &pl.st[i];
		const struct xo_net_layer *l = &net->layers[i];

		if (s->kind != XO_NET_CONV1D && s->kind != XO_NET_DENSE)
			continue;
		if (l->need_dx && s->tdx) {
			pack_flip(params + l->w_off, s, j->kcp[i], c->shared.p + wt_off);
			j->wt[i] = c->shared.p + wt_off;
			wt_off += round_up(s->out_ch * j->kcp[i] * s->ks, 16);
		} else if (l->need_dx) {
			xo_cpu_pack_t(params + l->w_off, s->kc, s->out_ch, j->kcp[i],
				      c->shared.p + wt_off);
			j->wt[i] = c->shared.p + wt_off;
			wt_off += round_up(s->out_ch * j->kcp[i], 16);
		}
	}
	j->f.rows = (double *)(void *)(c->shared.p + wt_off);
	xo_cpu_threads_run(c->tp, nt, train_task, j);

	/* the parts' sums, in part order, into the flat gradients */
	grads = xo_tensor_f32(net->grads);
	for (int i = 0; i < pl.nsteps; i++) {
		const struct net_step *s = &pl.st[i];
		const struct xo_net_layer *l = &net->layers[i];

		if (s->kind != XO_NET_CONV1D && s->kind != XO_NET_DENSE)
			continue;
		xo_cpu_parts_sum(c, nt, j->goff[i], s->kc, s->out_ch, s->np, grads + l->w_off);
		if (l->b_off >= 0)
			xo_cpu_parts_sum(c, nt, j->goff[i] + s->kc * s->np, 1, s->out_ch, s->np,
					 grads + l->b_off);
	}
	job_metrics(&j->f, nt);

	/* Adam over every parameter: the backend's op */
	adam.p = net->adam;
	adam.src[0] = net->grads;
	adam.dst[0] = net->params;
	adam.dst[1] = net->adam_m;
	adam.dst[2] = net->adam_v;
	return be->iface->fwd[XO_OP_adam](be, &adam);
}
