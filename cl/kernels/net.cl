/*
 * net.cl - a whole network (a chain or a graph) in a few launches (struct xo_net,
 * cl/cl_net.c): the fused path that takes the seed model's training step
 * from ~23 launches op by op to 2, and its predict batch to 1.
 *
 *   xo_cl_net_fwd      inference: one work-group per sample runs the gather
 *                      (through index), every layer and the softmax in local
 *                      memory, writes probs, and (with labels) the sample's
 *                      cross-entropy and correctness into the scratch;
 *   xo_cl_net_metrics  one work-group: the batch's mean loss and correct count;
 *   xo_cl_net_train    training: per sample as xo_cl_net_fwd (dropout masks
 *                      drawn inside), then dz (the categorical_crossentropy
 *                      op's, through the clip) and the backward
 *                      chain through every layer with a gradient, making the
 *                      sample's own parameter gradients (summed over positions)
 *                      into its row of the scratch;
 *   xo_cl_net_update   sums those rows over the batch, a tile of parameters
 *                      per work-group, stores grads and takes the Adam step in
 *                      place; one more group writes the batch's loss and
 *                      correct count.
 *
 * Semantics are those of the ops one by one (same sums in the same order per
 * output: conv over k then c, bias last; softmax, cross-entropy, dropout mask
 * and Adam as act.cl, loss.cl, random.cl and adam.cl), so forward results are
 * bit-identical to the op path; gradients sum in another order.
 *
 * The network comes as a table of XO_NET_NF ints per layer (desc, made by the
 * host, offsets below), then the model inputs' (their count, then each
 * input's offset and size: xo_net_load). Dense layers are described as conv1d with length 1 and
 * kernel 1, so one code path runs both. Local memory per work-group (lm, sized
 * by the host): the input sample at 0, then each layer's output (flatten, and
 * dropout outside training, alias their input), the label row, and the
 * gradient buffers (training): a chain's two, used in turn, or a graph's one
 * per layer with a gradient and a term scratch (each layer's sources are
 * local offsets, so a graph's outputs all stay until the sample is done). Scratch (global): training, the per-sample
 * parameter gradients [n][np] (np = the flat parameter count, each row laid
 * out like params) at 0; then, at met, the per-sample loss [n] and correct [n].
 */

#define XO_NET_NF 28
#define XO_ND_KIND 0    /* enum xo_net_kind */
#define XO_ND_IN_LEN 1  /* input per sample: len, ch */
#define XO_ND_IN_CH 2
#define XO_ND_OUT_LEN 3 /* output per sample: len, ch */
#define XO_ND_OUT_CH 4
#define XO_ND_ACT 5     /* activation (conv1d, dense) */
#define XO_ND_K 6       /* kernel_size / pool_size (dense 1) */
#define XO_ND_STRIDE 7  /* resolved stride */
#define XO_ND_DIL 8     /* dilation (pool, dense 1) */
#define XO_ND_PAD 9     /* left padding */
#define XO_ND_W 10      /* kernel offset in params, -1 none */
#define XO_ND_B 11      /* bias offset in params, -1 none */
#define XO_ND_LIN 12    /* local offset of the input */
#define XO_ND_LOUT 13   /* local offset of the output */
#define XO_ND_LAYER 14  /* dropout key: layer index */
#define XO_ND_RATE 15   /* dropout rate, float bits */
#define XO_ND_SCALE 16  /* dropout 1 / (1 - rate), float bits (host float division) */
#define XO_ND_NEED_DX 17 /* training: the gradient w.r.t. the input is used */
#define XO_ND_HAS_GRAD 18 /* training: the gradient w.r.t. the output is used */
#define XO_ND_IN_SIZE 19 /* in_len * in_ch */
#define XO_ND_OUT_SIZE 20 /* out_len * out_ch */
#define XO_ND_LIN2 21   /* merge, concatenate: local offset of the second input */
#define XO_ND_MODE 22   /* merge: enum xo_merge (elementwise modes) */
#define XO_ND_G 23      /* training: local offset of the gradient w.r.t. the output */
#define XO_ND_DX0 24    /* ... where the gradient w.r.t. input k goes (-1: none), */
#define XO_ND_DX1 25
#define XO_ND_ACC0 26   /* ... and, when that is a later term of a fan-out sum, */
#define XO_ND_ACC1 27   /* the gradient it is added into (-1: written in place) */

#define XO_NK_CONV1D 0
#define XO_NK_POOL 1
#define XO_NK_FLATTEN 2
#define XO_NK_DROPOUT 3
#define XO_NK_DENSE 4
#define XO_NK_MERGE 5 /* the host's code for every elementwise merge kind (mode apart) */
#define XO_NK_GAP 6   /* global_average_pooling1d, unmasked: [len][ch] -> [1][ch] */
#define XO_NK_CAT 7   /* concatenate, last axis: [len][ch] and [len][oc - ch] -> [len][oc] */

/* merge.cl (after this file in the program) */
float xo_merge_value(int mode, float a, float b);
float xo_merge_slope(int mode, int which, float mine, float other);

/*
 * dst[e] = keep ? src[e] * scale : 0 for the osz elements of sample i of a
 * dropout layer: element i * osz + e of the layer's [n][osz] output uses
 * word (i * osz + e) % 4 of Philox block (i * osz + e) / 4, exactly as
 * xo_cl_dropout_apply draws it; one work-item per block, so each block is
 * drawn once per sample (a block on the boundary of two samples is drawn by
 * both). src and dst may be the same.
 */
static inline void xo_net_dropout(__local const float *src, __local float *dst, int i, int osz,
			   uint seed_lo, uint seed_hi, uint step_lo, uint layer, float rate,
			   float scale, int lid, int wg)
{
	int first = i * osz, b0 = first >> 2, b1 = (first + osz - 1) >> 2;

	for (int b = b0 + lid; b <= b1; b += wg) {
		uint4 r = xo_philox4x32_10((uint)b, 0u, step_lo, layer, seed_lo, seed_hi);

		for (int q = 0; q < 4; q++) {
			int e = b * 4 + q - first;
			uint word = q == 0 ? r.x : q == 1 ? r.y : q == 2 ? r.z : r.w;
			float u = (float)(word >> 8) * (1.0f / 16777216.0f);

			if (e >= 0 && e < osz)
				dst[e] = u >= rate ? src[e] * scale : 0.0f;
		}
	}
}

/*
 * The loops over a layer's [len][ch] elements e = a * B + b step e by the
 * work-group size wg; (a, b) follow without an integer division per element
 * (one costs more than the element's work on a CPU): XO_NET_STEP adds
 * (da, db) = (wg / B, wg % B), carrying b into a.
 */
#define XO_NET_STEP(a, b, B, da, db)                                                        \
	do {                                                                                \
		(a) += (da);                                                                \
		(b) += (db);                                                                \
		if ((b) >= (B)) {                                                           \
			(b) -= (B);                                                         \
			(a)++;                                                              \
		}                                                                           \
	} while (0)

/*
 * Row e / lid..: loads sample i's input row (through index when has_index)
 * into lm[0, in_size) and its label row into lm[t_loc, + classes) when t is
 * set. inp: the table's inputs (after the layers'): their count, then each
 * input's offset and size; input k's rows are a block [rows][size] of x
 * from offset * rows, its values go to lm[offset, + size). A row index
 * outside [0, rows) reads as zeros and sets flag[0] (the gather op's
 * clamp-and-flag).
 */
static inline void xo_net_load(__constant int *inp, __global const float *x, int xo,
			__global const int *index, int io, int has_index, int rows,
			__global const float *t, int to, int has_t, __global int *flag,
			__local float *lm, int classes, int t_loc, int i, int lid, int wg)
{
	int r = has_index ? index[io + i] : i;
	bool ok = r >= 0 && r < rows;

	if (!ok && lid == 0)
		flag[0] = 1;
	for (int k = 0; k < inp[0]; k++) {
		int off = inp[1 + 2 * k], size = inp[2 + 2 * k];

		for (int e = lid; e < size; e += wg)
			lm[off + e] = ok ? x[xo + off * rows + r * size + e] : 0.0f;
	}
	if (has_t)
		for (int e = lid; e < classes; e += wg)
			lm[t_loc + e] = ok ? t[to + r * classes + e] : 0.0f;
	barrier(CLK_LOCAL_MEM_FENCE);
}

/*
 * Forward of sample i through every layer, in local memory (lm as the file
 * comment says); every work-item of the group calls it (barriers). With
 * training, dropout layers draw their masks; the last layer's softmax
 * (dense, activation softmax) is max-subtracted as xo_softmax_row.
 */
static inline void xo_net_forward(__constant int *desc, int nl, __global const float *w, int wo,
			   __local float *lm, int i, int training, uint seed_lo, uint seed_hi,
			   uint step_lo, int lid, int wg)
{
	for (int li = 0; li < nl; li++) {
		__constant int *d = desc + li * XO_NET_NF;
		int kind = d[XO_ND_KIND];
		__local const float *in = lm + d[XO_ND_LIN];
		__local float *out = lm + d[XO_ND_LOUT];
		int osz = d[XO_ND_OUT_SIZE];
		int len = d[XO_ND_IN_LEN], ch = d[XO_ND_IN_CH], oc = d[XO_ND_OUT_CH];
		int k = d[XO_ND_K], stride = d[XO_ND_STRIDE], dil = d[XO_ND_DIL], pad = d[XO_ND_PAD];
		int act = d[XO_ND_ACT];

		if (kind == XO_NK_FLATTEN || (kind == XO_NK_DROPOUT && !training))
			continue; /* output aliases input */
		if (kind == XO_NK_CONV1D || kind == XO_NK_DENSE) {
			__global const float *wk = w + wo + d[XO_ND_W];
			int bo = d[XO_ND_B], d_o = wg / oc, d_f = wg - d_o * oc;

			int o = lid / oc, f = lid - o * oc; /* e = o * oc + f, stepped */

			for (int e = lid; e < osz; e += wg) {
				float acc = 0.0f;

				for (int kk = 0; kk < k; kk++) {
					int l = o * stride - pad + kk * dil;
					__local const float *xr;
					__global const float *wr;

					if (l < 0 || l >= len)
						continue;
					xr = in + l * ch;
					wr = wk + kk * ch * oc + f;
					for (int c = 0; c < ch; c++)
						acc += xr[c] * wr[c * oc];
				}
				if (bo >= 0)
					acc += w[wo + bo + f];
				out[e] = act == XO_ACT_SOFTMAX ? acc : xo_act(acc, act);
				XO_NET_STEP(o, f, oc, d_o, d_f);
			}
		} else if (kind == XO_NK_POOL) {
			int o = lid / oc, c = lid - o * oc, d_o = wg / oc, d_c = wg - d_o * oc;

			for (int e = lid; e < osz; e += wg) {
				out[e] = xo_pool_value_l(in + c, len, ch, k, stride, pad, o);
				XO_NET_STEP(o, c, oc, d_o, d_c);
			}
		} else if (kind == XO_NK_MERGE) {
			__local const float *in2 = lm + d[XO_ND_LIN2];
			int mode = d[XO_ND_MODE];

			for (int e = lid; e < osz; e += wg)
				out[e] = xo_merge_value(mode, in[e], in2[e]);
		} else if (kind == XO_NK_CAT) {
			/* row o: the first source's ch floats, then the second's
			 * oc - ch (merge.cl's copies) */
			__local const float *in2 = lm + d[XO_ND_LIN2];
			int o = lid / oc, c = lid - o * oc, d_o = wg / oc, d_c = wg - d_o * oc;

			for (int e = lid; e < osz; e += wg) {
				out[e] = c < ch ? in[o * ch + c] : in2[o * (oc - ch) + c - ch];
				XO_NET_STEP(o, c, oc, d_o, d_c);
			}
		} else if (kind == XO_NK_GAP) {
			/* xo_cl_global_average_pooling1d_fwd: the rows in order, / len */
			for (int c = lid; c < oc; c += wg) {
				float acc = 0.0f;

				for (int l = 0; l < len; l++)
					acc += in[l * ch + c];
				out[c] = acc / (float)len;
			}
		} else { /* dropout, training */
			float rate = as_float(d[XO_ND_RATE]), scale = as_float(d[XO_ND_SCALE]);
			uint layer = (uint)d[XO_ND_LAYER];

			xo_net_dropout(in, out, i, osz, seed_lo, seed_hi, step_lo, layer, rate, scale,
				       lid, wg);
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		if (act == XO_ACT_SOFTMAX && kind == XO_NK_DENSE) {
			/* Every work-item takes the row's max and sum in order (as
			 * xo_softmax_row), then writes its own elements. */
			float m = out[0], s = 0.0f;

			for (int j = 1; j < osz; j++)
				m = out[j] > m ? out[j] : m;
			for (int j = 0; j < osz; j++)
				s += exp(out[j] - m);
			barrier(CLK_LOCAL_MEM_FENCE);
			for (int e = lid; e < osz; e += wg)
				out[e] = exp(out[e] - m) / s;
			barrier(CLK_LOCAL_MEM_FENCE);
		}
	}
}

/* Sample i's cross-entropy and correctness (loss.cl's row helpers, as the
 * ops compute them) into loss[i] and correct[i]; one work-item calls it. */
static inline void xo_net_sample_metrics(__local const float *p, __local const float *t, int classes,
				  __global float *loss, __global float *correct, int i)
{
	loss[i] = xo_row_ce_l(p, t, classes);
	correct[i] = xo_row_argmax_l(p, classes) == xo_row_argmax_l(t, classes) ? 1.0f : 0.0f;
}

/*
 * Inference forward, one work-group per sample (global n * wg, any wg):
 * probs[i] = the last layer's output of sample i; with has_t, the sample's
 * loss and correctness go to scratch[met + i] and scratch[met + n + i].
 * lm: the host-sized local buffer (file comment).
 */
__kernel void xo_cl_net_fwd(__constant int *desc, int nl, __global const float *x, int xo,
			    __global const int *index, int io, int has_index, int rows,
			    __global const float *t, int to, int has_t, __global int *flag,
			    __global const float *w, int wo, __global float *probs, int po,
			    __global float *scratch, int met, int n, int in_size, int classes,
			    int out_loc, int t_loc, __local float *lm)
{
	int i = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);

	if (i >= n)
		return;
	(void)in_size; /* the inputs' sizes are in the table */
	xo_net_load(desc + nl * XO_NET_NF, x, xo, index, io, has_index, rows, t, to, has_t, flag,
		    lm, classes, t_loc, i, lid, wg);
	xo_net_forward(desc, nl, w, wo, lm, i, 0, 0u, 0u, 0u, lid, wg);
	for (int e = lid; e < classes; e += wg)
		probs[po + i * classes + e] = lm[out_loc + e];
	if (has_t && lid == 0)
		xo_net_sample_metrics(lm + out_loc, lm + t_loc, classes, scratch + met,
				      scratch + met + n, i);
}

/* mean of the n per-sample losses and sum of the n correct flags at
 * scratch[met..] into loss[lo], correct[co] (XO_RED_WG work-items; the loss
 * sum runs in xo_cl_categorical_crossentropy_fwd's order). */
static inline void xo_net_batch_metrics(__global const float *scratch, int met, int n,
				 __global float *loss, int lo, __global float *correct, int co,
				 __local float *pl, __local float *pc, int lid)
{
	float a = 0.0f, h = 0.0f;

	for (int j = lid; j < n; j += XO_RED_WG) {
		a += scratch[met + j];
		h += scratch[met + n + j];
	}
	a = xo_group_sum(pl, lid, a);
	h = xo_group_sum(pc, lid, h); /* integers below 2^24: exact */
	if (lid == 0) {
		loss[lo] = a / (float)n;
		correct[co] = h;
	}
}

__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_net_metrics(__global const float *scratch, int met, int n, __global float *loss, int lo,
		  __global float *correct, int co)
{
	__local float pl[XO_RED_WG], pc[XO_RED_WG];

	xo_net_batch_metrics(scratch, met, n, loss, lo, correct, co, pl, pc, get_local_id(0));
}

/*
 * A later term of a fan-out sum (at local offset dxo, size floats) added
 * into the gradient at acc (the merge op's add, one rounding an element);
 * nothing when acc < 0 (the term was written in place). Then a barrier.
 */
static inline void xo_net_acc(__local float *lm, int acc, int dxo, int size, int lid, int wg)
{
	if (acc >= 0)
		for (int e = lid; e < size; e += wg)
			lm[acc + e] = lm[acc + e] + lm[dxo + e];
	barrier(CLK_LOCAL_MEM_FENCE);
}

/*
 * Training, one work-group per sample (global n * wg, any wg): the forward
 * in training mode as xo_cl_net_fwd (probs and per-sample metrics written),
 * then dz (the categorical_crossentropy op's, through Keras's clip: (p - t)
 * / n for a row inside it) and the backward pass, from the last layer back,
 * through every layer with a gradient (the table's G, DX and ACC offsets
 * say where each reads and writes it, a later term of a fan-out sum added
 * after it is made): conv1d/dense d pre-activation (the last layer's is dz
 * itself), the sample's kernel and bias gradients from it
 * (xo_cl_conv1d_bwd_dw's sums over the positions o) into scratch[i * np +
 * offset], then its dx; pooling to the first maximum of each window;
 * dropout through the same mask; the global average pooling's dy / len to
 * every row; a merge's two inputs in turn, a concatenate's each its
 * channels of every row. g0: local
 * offset of the last layer's gradient (dz); g1 unused.
 */
__kernel void xo_cl_net_train(__constant int *desc, int nl, __global const float *x, int xo,
			      __global const int *index, int io, int has_index, int rows,
			      __global const float *t, int to, __global int *flag,
			      __global const float *w, int wo, __global float *probs, int po,
			      __global float *scratch, int met, int n, int in_size, int classes,
			      int out_loc, int t_loc, int g0, int g1, int np, uint seed_lo,
			      uint seed_hi, uint step_lo, __local float *lm)
{
	int i = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
	__global float *gs = scratch + i * np;
	float w_sum;

	(void)g1;

	if (i >= n)
		return;
	(void)in_size; /* the inputs' sizes are in the table */
	xo_net_load(desc + nl * XO_NET_NF, x, xo, index, io, has_index, rows, t, to, 1, flag, lm,
		    classes, t_loc, i, lid, wg);
	xo_net_forward(desc, nl, w, wo, lm, i, 1, seed_lo, seed_hi, step_lo, lid, wg);
	w_sum = xo_row_ce_w_l(lm + out_loc, lm + t_loc, classes);
	for (int e = lid; e < classes; e += wg) {
		probs[po + i * classes + e] = lm[out_loc + e];
		lm[g0 + e] = xo_row_ce_dz_l(lm + out_loc, lm + t_loc, classes, e, w_sum, n);
	}
	if (lid == 0)
		xo_net_sample_metrics(lm + out_loc, lm + t_loc, classes, scratch + met,
				      scratch + met + n, i);
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int li = nl - 1; li >= 0; li--) {
		__constant int *d = desc + li * XO_NET_NF;
		int kind = d[XO_ND_KIND];
		int isz = d[XO_ND_IN_SIZE], osz = d[XO_ND_OUT_SIZE];
		int len = d[XO_ND_IN_LEN], ch = d[XO_ND_IN_CH], oc = d[XO_ND_OUT_CH];
		int out = d[XO_ND_OUT_LEN];
		int k = d[XO_ND_K], stride = d[XO_ND_STRIDE], dil = d[XO_ND_DIL], pad = d[XO_ND_PAD];
		__local const float *in = lm + d[XO_ND_LIN];
		__local const float *y = lm + d[XO_ND_LOUT];
		int dxo = d[XO_ND_DX0];
		__local float *g = lm + d[XO_ND_G], *dx = lm + (dxo >= 0 ? dxo : 0);
		bool need_dx = dxo >= 0;

		if (!d[XO_ND_HAS_GRAD])
			continue;
		if (kind == XO_NK_FLATTEN) {
			/* the same bytes: a chain's gradient stays where it is, a
			 * graph's is copied to its source's */
			if (need_dx && dxo != d[XO_ND_G])
				for (int e = lid; e < isz; e += wg)
					dx[e] = g[e];
		} else if (kind == XO_NK_MERGE) {
			__local const float *in2 = lm + d[XO_ND_LIN2];
			int mode = d[XO_ND_MODE];

			/* da then db, each added in before the next is made (they
			 * may share the term scratch) */
			for (int q = 0; q < 2; q++) {
				int to = d[XO_ND_DX0 + q];

				if (to < 0)
					continue;
				for (int e = lid; e < osz; e += wg)
					lm[to + e] = g[e] * xo_merge_slope(mode, q, q ? in2[e] : in[e],
									   q ? in[e] : in2[e]);
				barrier(CLK_LOCAL_MEM_FENCE);
				xo_net_acc(lm, d[XO_ND_ACC0 + q], to, osz, lid, wg);
			}
			continue;
		} else if (kind == XO_NK_CAT) {
			/* each source its channels of every row of g: the first's
			 * ch, then the second's oc - ch, each added in before the
			 * next is made (as a merge's) */
			for (int q = 0; q < 2; q++) {
				int to = d[XO_ND_DX0 + q], cw = q ? oc - ch : ch, off = q ? ch : 0;
				int o = lid / cw, c = lid - o * cw, d_o = wg / cw, d_c = wg - d_o * cw;

				if (to < 0)
					continue;
				for (int e = lid; e < len * cw; e += wg) {
					lm[to + e] = g[o * oc + off + c];
					XO_NET_STEP(o, c, cw, d_o, d_c);
				}
				barrier(CLK_LOCAL_MEM_FENCE);
				xo_net_acc(lm, d[XO_ND_ACC0 + q], to, len * cw, lid, wg);
			}
			continue;
		} else if (kind == XO_NK_CONV1D || kind == XO_NK_DENSE) {
			/* The last layer's gradient is already w.r.t. its
			 * pre-activation (fused softmax + cross-entropy). */
			int act = li == nl - 1 ? XO_ACT_LINEAR : d[XO_ND_ACT];
			int wof = d[XO_ND_W], bof = d[XO_ND_B];
			__global const float *wk = w + wo + wof;

			for (int e = lid; e < osz; e += wg)
				g[e] = xo_act_grad(y[e], g[e], act);
			barrier(CLK_LOCAL_MEM_FENCE);
			/* This sample's dw[kk][c][f] (xo_cl_conv1d_bwd_dw's sum over
			 * o, one tap kk at a time) and db[f]. */
			for (int kk = 0; kk < k; kk++) {
				/* Tap kk reads l = o*stride + base: the o whose l is in [0, len). */
				int base = kk * dil - pad, r = len - 1 - base;
				int o_lo = base >= 0 ? 0 : (stride - 1 - base) / stride;
				int o_hi = r < 0 ? -1 : min(r / stride, out - 1);
				int c = lid / oc, f = lid - c * oc, d_c = wg / oc, d_f = wg - d_c * oc;

				for (int j = lid; j < ch * oc; j += wg) {
					float acc = 0.0f;

					for (int o = o_lo; o <= o_hi; o++)
						acc += in[(o * stride + base) * ch + c] * g[o * oc + f];
					gs[wof + kk * ch * oc + j] = acc;
					XO_NET_STEP(c, f, oc, d_c, d_f);
				}
			}
			if (bof >= 0) {
				for (int f = lid; f < oc; f += wg) {
					float acc = 0.0f;

					for (int o = 0; o < out; o++)
						acc += g[o * oc + f];
					gs[bof + f] = acc;
				}
			}
			/* dx[l][c]: the (kk, o) taps landing on l (xo_cl_conv1d_bwd_dx). */
			int l = lid / ch, c = lid - l * ch, d_l = wg / ch, d_c = wg - d_l * ch;

			for (int e = lid; need_dx && e < isz; e += wg) {
				float acc = 0.0f;

				for (int kk = 0; kk < k; kk++) {
					int o = xo_conv_tap_out(l, kk, stride, dil, pad, out);

					if (o < 0)
						continue;
					for (int f = 0; f < oc; f++)
						acc += g[o * oc + f] * wk[(kk * ch + c) * oc + f];
				}
				dx[e] = acc;
				XO_NET_STEP(l, c, ch, d_l, d_c);
			}
		} else if (kind == XO_NK_POOL) {
			/* xo_cl_max_pooling1d_bwd's gather. */
			int l = lid / ch, c = lid - l * ch, d_l = wg / ch, d_c = wg - d_l * ch;

			for (int e = lid; need_dx && e < isz; e += wg) {
				int o_lo, o_hi;
				float acc = 0.0f;

				xo_pool_windows(l, k, stride, pad, out, &o_lo, &o_hi);
				for (int o = o_lo; o <= o_hi; o++)
					if (o * stride - pad + k - 1 >= l &&
					    xo_pool_argmax_l(in + c, len, ch, k, stride, pad, o) == l)
						acc += g[o * oc + c];
				dx[e] = acc;
				XO_NET_STEP(l, c, ch, d_l, d_c);
			}
		} else if (kind == XO_NK_GAP) {
			/* xo_cl_global_average_pooling1d_bwd: dy[c] / len at every row */
			int l = lid / ch, c = lid - l * ch, d_l = wg / ch, d_c = wg - d_l * ch;

			for (int e = lid; need_dx && e < isz; e += wg) {
				dx[e] = g[c] / (float)len;
				XO_NET_STEP(l, c, ch, d_l, d_c);
			}
		} else { /* dropout: the same mask as forward */
			float rate = as_float(d[XO_ND_RATE]), scale = as_float(d[XO_ND_SCALE]);
			uint layer = (uint)d[XO_ND_LAYER];

			if (need_dx)
				xo_net_dropout(g, dx, i, osz, seed_lo, seed_hi, step_lo, layer, rate,
					       scale, lid, wg);
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		if (need_dx)
			xo_net_acc(lm, d[XO_ND_ACC0], dxo, isz, lid, wg);
	}
}

/* Parameters per work-group of xo_cl_net_update: lanes (p, slice), p fastest,
 * so a slice reads XO_NET_TP consecutive floats of a scratch row. */
#define XO_NET_TP (XO_RED_WG < 32 ? XO_RED_WG : 32)
#define XO_NET_SLICES (XO_RED_WG / XO_NET_TP)

/*
 * Gradients and Adam: work-group q < ceil(np / XO_NET_TP) owns parameters
 * [q * XO_NET_TP, + XO_NET_TP); lane (p, s) sums rows s, s + XO_NET_SLICES, ...
 * of the per-sample gradients, the slices are added in order, then grads[j]
 * = the sum and xo_cl_adam_fwd's step on params, m, v. The last group writes
 * the batch's loss and correct count. global = (groups + 1) * XO_RED_WG.
 */
__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_net_update(__global const float *scratch, int met, int n, int np, __global float *grads,
		 int go, __global float *w, int wo, __global float *m, int mo, __global float *v,
		 int vo, float c1, float c2, float eps, float lr_t, __global float *loss, int lo,
		 __global float *correct, int co)
{
	__local float pl[XO_RED_WG], pc[XO_RED_WG];
	int gid = get_group_id(0), lid = get_local_id(0);
	int p = lid % XO_NET_TP, sl = lid / XO_NET_TP;
	int j = gid * XO_NET_TP + p;
	float acc = 0.0f;

	if (gid >= (np + XO_NET_TP - 1) / XO_NET_TP) {
		xo_net_batch_metrics(scratch, met, n, loss, lo, correct, co, pl, pc, lid);
		return;
	}
	if (j < np && sl < XO_NET_SLICES)
		for (int s = sl; s < n; s += XO_NET_SLICES)
			acc += scratch[s * np + j];
	pl[lid] = acc;
	barrier(CLK_LOCAL_MEM_FENCE);
	if (sl || j >= np)
		return;
	for (int q = 1; q < XO_NET_SLICES; q++)
		acc += pl[q * XO_NET_TP + p];
	grads[go + j] = acc;
	xo_adam_elem(acc, w + wo, m + mo, v + vo, j, c1, c2, eps, lr_t);
}
