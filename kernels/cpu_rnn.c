/*
 * cpu_rnn.c - cpu kernels of simple_rnn, lstm and gru (ops.def has the
 * formulas and the ws layout; reference/ref_rnn.c the oracle; the bounds
 * are in suites/harness.c, tol_rnn_fwd and tol_rnn_bwd).
 *
 * Forward:
 *   lstm (fwd_fused_task): chunks of samples as below, but each step is ONE
 *      call of the ISA's fused kernel k->lstm_step (cpu_rnn.inc): x_t and
 *      h' read in place against [kernel; recurrent_kernel] packed once per
 *      call (gate blocks padded to the vector width), the bias, the gates
 *      and the c and h updates on register tiles, the ws row written once;
 *   simple_rnn (fwd_cat_task): threaded over slices of the batch (the
 *      samples are independent, so a thread runs its slice with no
 *      synchronisation per step), each slice in chunks of XO_CPU_RNN_CHUNK
 *      samples run through every step: per step ONE GEMM [chunk][in + u] x
 *      [in + u][G] of the rows [x_t, h'] (copied into a small A) with
 *      [kernel; recurrent_kernel], then the gates in one elementwise pass per
 *      sample that adds the bias and writes the ws row; y at the end;
 *   gru (fwd_fused_task): as lstm, a step ONE call of k->gru_step: z and r
 *      sum x W + h' U together, the h gate keeps x W_h and h' U_h apart (r
 *      multiplies only the recurrent part); reset_after=0, whose h gate
 *      needs r of every unit before (r h') U_h, in two phases within the
 *      call (z, r and r h'; then the product and hh, h).
 *   Without a ws (the inference form, ops.def) the same code writes each
 *   step's rows to a ring of 2 steps (step_rows): the chunk's rows in the
 *   part's scratch; y is copied from the rows after each step either way,
 *   so it is the same bits.
 * Backward:
 *   lstm (bwd_lstm_task): chunks claimed from a counter, each back through
 *      every step in blocks of steps; per step px of the chunk
 *      (k->lstm_step_bwd) and dh' (gemm_nn), per block dx, dkernel,
 *      drecurrent_kernel and dbias from the block's px while it is in cache
 *      (gemm_nn / gemm_tn / colsum); each chunk's weight sums added in chunk
 *      order.
 *   simple_rnn, gru:
 *   1. back through time per batch slice, threaded as above: the
 *      pre-activation gradients of every step go to DPX (input side, rows
 *      in input order n*len + t) and DPH (recurrent side, rows n*len + s);
 *      the state gradient carried to the step before is one GEMM
 *      [slice][G] x U^T per step;
 *   2. dx = DPX W^T, dkernel = x^T DPX and drecurrent_kernel = H'^T DPH
 *      (H' the previous states of every step, 0 at step 0) as one GEMM each
 *      over all batch*len rows, split over the threads by output rows or
 *      columns; dbias the column sums of DPX (and DPH: gru's recurrent bias).
 * Masks (mask_zero=1, ops.def): every path runs a chunk's step for all its
 * samples, then mask_rows rewrites the rows of the masked ones (the carried
 * state, zeros) before the next step reads them, and copy_y writes their
 * output by Keras's rule; the backward zeroes a masked step's pre-activation
 * gradients (so its dx and weight terms are 0) and carries its dh and dc
 * past it unchanged.
 * Arithmetic in float; tanhf and 1 / (1 + expf(-v)) for the gates (glibc:
 * within the harness's ULP_TANH_FWD and ULP_SIGMOID_FWD); every derivative
 * from a stored output, in the forms the bounds assume: 1 - a a, y (1 - y),
 * h = z h' + (1 - z) hh.
 */
#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* Below this many multiply-adds (batch * len * G * (ch + units)) a call runs
 * on the calling thread alone, as the other ops' XO_CPU_PAR_MIN. */
#define XO_CPU_RNN_PAR_MIN XO_CPU_PAR_MIN

struct rnn_job {
	const struct xo_cpu_kernels *k; /* vector sigmoid and tanh of the chosen ISA */
	enum xo_op op;
	int64_t N, T, in, u, G, S, hb;
	bool ra, relu, seq, back, bias;
	bool zero_out;   /* zero_output_for_mask */
	const int32_t *ids; /* mask_zero: step t of sample n masked where ids[n T + t] is 0 */
	const float *x, *W, *U, *b, *dy;
	float *y, *ws;   /* fwd outputs (ws NULL: the inference form, rings in scr);
			  * bwd: ws is the source (read only) */
	float *WU;       /* fwd simple_rnn: [in + u][G], kernel rows then recurrent;
			  * lstm: [in + u][4 up] packed for k->lstm_step, then the bias [4 up];
			  * gru reset_after=1: [in + u][3 up] for k->gru_step, the bias [4 up] */
	int64_t up;      /* fwd lstm, gru: u rounded up to the ISA's vector width */
	int64_t ss;      /* scr floats: per sample (bwd_seq_task), per part (the rest) */
	atomic_llong *next; /* fwd_cat_task, bwd lstm: the first sample of the next unclaimed chunk */
	int64_t chunk;   /* fwd_cat_task, bwd lstm: samples per chunk, <= XO_CPU_RNN_CHUNK */
	int64_t blk;     /* bwd lstm: steps per block of the weight gradients */
	float *DPX, *DPH; /* bwd: [N*T][G] each; lstm: DPX the chunks' weight sums */
	float *HPM, *RHM; /* bwd: [N*T][u] h' and (gru reset_after=0) r h' per (n, s) */
	float *WT, *UT;   /* bwd lstm: [4 up][inp] and [4 up][up], W^T and U^T packed */
	float *dx, *dW, *dU, *db;
	float *scr;      /* per part: ss floats per sample of its slice */
	int nt;
};

static void part_of(int64_t total, int t, int nt, int64_t *lo, int64_t *hi)
{
	*lo = total * t / nt;
	*hi = total * (t + 1) / nt;
}

/* relu keeps a NaN (as ref's xo_ref_relu: v > 0 is false for it) */
static inline float act(bool relu, float v)
{
	return relu ? (v > 0.0f || v != v ? v : 0.0f) : tanhf(v);
}

static inline float act_d(bool relu, float a)
{
	return relu ? (a > 0.0f ? 1.0f : 0.0f) : 1.0f - a * a;
}

static inline float sig(float v)
{
	return 1.0f / (1.0f + expf(-v));
}

/* Whether processing step s of sample n is masked out (ids, ops.def). */
static inline bool masked_at(const struct rnn_job *j, int64_t n, int64_t s)
{
	return j->ids && j->ids[n * j->T + (j->back ? j->T - 1 - s : s)] == 0;
}

/* y = tanh(x) (count elements) by the ISA's vector form where it has one */
static void vtanh_n(const struct rnn_job *j, const float *x, float *y, int64_t count)
{
	if (!j->k->act_fwd(XO_ACTIVATION_TANH, x, y, count))
		for (int64_t i = 0; i < count; i++)
			y[i] = tanhf(x[i]);
}

/* ---- forward ------------------------------------------------------------ */

/* Samples per chunk of a part's slice in the lstm / simple_rnn forward: a
 * chunk runs through every step before the next, so that a step's GEMM
 * operands, pre-activations and the ws rows it reads stay in cache (at
 * in=16, u=64: the A rows 10 KB, the pre-activations 32 KB, the ws rows of
 * a step 57 KB). LSTM(64) batch 512, one thread, CPU time: 16 19.3 ms,
 * 32 19.8, 64 21.9, 128 21.6, 256 21.8 (medians of 7). */
#define XO_CPU_RNN_CHUNK 32

/* The forward's chunks: at most XO_CPU_RNN_FWD_CHUNK rows (the ring and the
 * scratch are sized for XO_CPU_RNN_CHUNK). LSTM(64) inference forward,
 * one thread, load 2-6: batch 32 chunks of 6, 12, 16 or 32 1.13-1.16 ms a
 * call; batch 512 CPU time per call chunks of 32 18.4-18.5 ms (16 chunks,
 * each with a tile of 2 rows), of 30 or 24 17.2-18.0 ms. */
#define XO_CPU_RNN_FWD_CHUNK 30 /* <= XO_CPU_RNN_CHUNK */

/* The cost in the rule below of each chunk claimed (the claim, the kernel's
 * calls and loop set-up of every step, the weights streamed from L2 once per
 * step and chunk), in xo_cpu_rnn_chunk_cost's half rows: LSTM(64) batch 512,
 * one thread, chunks forced to 16 (32 chunks) and to 30 (18), fwd CPU time
 * medians of 5 alternated (load 5): 13.78 and 13.45 ms, 24 us for each of
 * the 14 more chunks against 26 us a row: about one row. */
#define XO_CPU_RNN_CHUNK_OVERHEAD 2

int64_t xo_cpu_rnn_chunk_cost(int64_t nb, int rows)
{
	int64_t r = nb % rows, tail;

	XO_ASSERT(nb >= 1 && rows >= 1);
	/* the last tile as cpu_rnn.inc's lstm_step runs it: 2 rows, 4 rows
	 * (where the tile is wider) or a whole tile */
	tail = r == 0 ? 0 : r <= 2 && rows > 2 ? 5 : r <= 4 && rows > 4 ? 8 : 2 * rows;
	return nb / rows * 2 * rows + tail;
}

/* The busiest part's cost (chunk costs plus XO_CPU_RNN_CHUNK_OVERHEAD per
 * chunk) when nt parts of equal speed claim chunks of c rows of batch in
 * turn (part t the chunks t, t + nt, ...), and in *least the idlest one's. */
int64_t xo_cpu_rnn_fwd_span(int64_t batch, int nt, int rows, int64_t c, int64_t *least)
{
	int64_t nc = (batch + c - 1) / c, last = batch - (nc - 1) * c, most = 0;
	int64_t full = xo_cpu_rnn_chunk_cost(c, rows) + XO_CPU_RNN_CHUNK_OVERHEAD;

	*least = INT64_MAX;
	for (int t = 0; t < nt; t++) {
		int64_t w = (nc / nt + (t < nc % nt)) * full;

		if (t == (nc - 1) % nt) /* the short chunk */
			w += xo_cpu_rnn_chunk_cost(last, rows) - xo_cpu_rnn_chunk_cost(c, rows);
		most = w > most ? w : most;
		*least = w < *least ? w : *least;
	}
	return most;
}

int64_t xo_cpu_rnn_fwd_chunk(int64_t batch, int nt, int rows)
{
	int64_t tiles = (batch + rows - 1) / rows, want, best = 0, best_span = 0, least;
	int64_t top = batch < XO_CPU_RNN_FWD_CHUNK ? batch : XO_CPU_RNN_FWD_CHUNK;

	XO_ASSERT(batch >= 1 && nt >= 1 && rows >= 1 && rows <= XO_CPU_RNN_FWD_CHUNK);
	if (nt == 1) {
		int64_t most = XO_CPU_RNN_FWD_CHUNK / rows * rows; /* whole tiles */

		return batch < most ? batch : most;
	}
	/* at least XO_CPU_RNN_PER_PART chunks per part where the batch has that
	 * many tiles; of those sizes the one whose busiest part costs least
	 * when the parts claim in turn, the largest of equals (fewer claims) */
	want = tiles < XO_CPU_RNN_PER_PART * nt ? tiles : XO_CPU_RNN_PER_PART * nt;
	for (int64_t c = top; c >= 1; c--) {
		int64_t span;

		if ((batch + c - 1) / c < want)
			continue;
		span = xo_cpu_rnn_fwd_span(batch, nt, rows, c, &least);
		if (!best || span < best_span) {
			best = c;
			best_span = span;
		}
	}
	return best;
}

/* The state of one simple_rnn sample from its pre-activations h [u] (bias
 * not yet added), written to its ws row (lstm's cell is k->lstm_step). */
static void gates_cat(const struct rnn_job *j, float *h, float *row)
{
	int64_t u = j->u;

	if (j->bias)
		for (int64_t c = 0; c < u; c++)
			h[c] += j->b[c];
	if (j->relu)
		for (int64_t k = 0; k < u; k++)
			row[k] = act(true, h[k]);
	else
		vtanh_n(j, h, row, u);
}

/* The next chunk of the forward's samples, claimed from j->next (a part
 * whose thread has no core, on a loaded machine, holds up one chunk, not
 * half the batch): its first sample in *c0 and size in *nb; false when the
 * batch is done. */
static bool claim_chunk(const struct rnn_job *j, int64_t *c0, int64_t *nb)
{
	*c0 = atomic_fetch_add(j->next, j->chunk);
	if (*c0 >= j->N)
		return false;
	*nb = j->N - *c0 < j->chunk ? j->N - *c0 : j->chunk;
	return true;
}

/*
 * Where step s's state rows of a chunk of samples live: sample n's row at
 * *base + n * *ldr. With a ws, its rows (n * T + s); without (the inference
 * form, ops.def), a ring of 2 steps x j->chunk rows in the part's scratch
 * at ring: step s in slot s & 1, so the step before is still there and the
 * rows of a chunk stay in cache instead of streaming batch * len * S floats
 * to memory that nothing reads.
 */
static void step_rows(const struct rnn_job *j, float *ring, int64_t c0, int64_t s, float **base,
		      int64_t *ldr)
{
	if (j->ws) {
		*base = j->ws + (c0 * j->T + s) * j->S;
		*ldr = j->T * j->S;
	} else {
		*base = ring + (s & 1) * j->chunk * j->S;
		*ldr = j->S;
	}
}

/* The rows at step s (base, ldr as step_rows) of the masked samples of
 * [c0, c0 + nb), written by the step as if unmasked, made the carried state:
 * the h block (lstm: and the c block) of the row before (pbase, 0 at step
 * 0), the other blocks 0 (the ws layout of a masked step, ops.def). */
static void mask_rows(const struct rnn_job *j, int64_t c0, int64_t nb, int64_t s, float *base,
		      const float *pbase, int64_t ldr)
{
	int64_t u = j->u;

	for (int64_t n = 0; j->ids && n < nb; n++) {
		float *row = base + n * ldr;
		const float *prev = s > 0 ? pbase + n * ldr : NULL;

		if (!masked_at(j, c0 + n, s))
			continue;
		memset(row, 0, (size_t)j->S * sizeof(float));
		if (prev)
			memcpy(row + j->hb * u, prev + j->hb * u, (size_t)u * sizeof(float));
		if (prev && j->op == XO_OP_lstm)
			memcpy(row + 4 * u, prev + 4 * u, (size_t)u * sizeof(float));
	}
}

/* y of samples [c0, c0 + nb) at step s: the h block of their rows (base,
 * ldr as step_rows), for every step or only the last; 0 for a masked step
 * with zero_output_for_mask. */
static void copy_y(const struct rnn_job *j, int64_t c0, int64_t nb, int64_t s,
		   const float *base, int64_t ldr)
{
	int64_t u = j->u, T = j->T;

	if (!j->seq && s != T - 1)
		return;
	for (int64_t n = 0; n < nb; n++) {
		float *y = j->y + (j->seq ? ((c0 + n) * T + s) * u : (c0 + n) * u);

		if (j->zero_out && masked_at(j, c0 + n, s))
			memset(y, 0, (size_t)u * sizeof(float));
		else
			memcpy(y, base + n * ldr + j->hb * u, (size_t)u * sizeof(float));
	}
}

/*
 * simple_rnn: the recurrence in chunks of XO_CPU_RNN_CHUNK
 * samples (claimed by the parts from j->next), each through every step. Per step ONE GEMM
 * [chunk][in + u] x [in + u][G] of the rows [x_t, h'] (copied into A; h' = 0
 * at step 0: the x part alone, K = in) with WU = [kernel; recurrent_kernel],
 * so the input projection is computed where it is used instead of streamed
 * from a [batch*len][G] array (at batch 512 that array, 26 MB, was read back
 * from memory once per step: 60% of this function's time in one add).
 */
static void fwd_cat_task(void *arg, int t, int nt)
{
	const struct rnn_job *j = arg;
	int64_t u = j->u, G = j->G, T = j->T, in = j->in, K = in + u;
	float *hp = j->scr + t * j->ss; /* [chunk][G] */
	float *A = hp + XO_CPU_RNN_CHUNK * G; /* [chunk][K] */
	float *ring = A + XO_CPU_RNN_CHUNK * K; /* [2][chunk][S] without ws */

	(void)nt;
	for (int64_t c0, nb; claim_chunk(j, &c0, &nb);) {
		float *base = NULL, *pbase;
		int64_t ldr = 0;

		for (int64_t s = 0; s < T; s++) {
			int64_t ti = j->back ? T - 1 - s : s;

			pbase = base;
			step_rows(j, ring, c0, s, &base, &ldr);
			for (int64_t n = 0; n < nb; n++) {
				memcpy(A + n * K, j->x + ((c0 + n) * T + ti) * in,
				       (size_t)in * sizeof(float));
				if (s > 0)
					memcpy(A + n * K + in, pbase + n * ldr + j->hb * u,
					       (size_t)u * sizeof(float));
			}
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, (int)G,
				    (int)(s > 0 ? K : in), 1.0f, A, (int)K, j->WU, (int)G, 0.0f,
				    hp, (int)G);
			for (int64_t n = 0; n < nb; n++)
				gates_cat(j, hp + n * G, base + n * ldr);
			mask_rows(j, c0, nb, s, base, pbase, ldr);
			copy_y(j, c0, nb, s, base, ldr);
		}
	}
}

/*
 * lstm and gru: as fwd_cat_task, chunks claimed from j->next, each through
 * every step, but a step is ONE call of the ISA's fused kernel
 * (k->lstm_step, k->gru_step: struct xo_cpu_rnn_step): the GEMM of [x_t,
 * h'] with the packed [kernel; recurrent_kernel] and the cell in registers,
 * reading x_t and h' (lstm also c') in place, the ws row written once (no A
 * copy, no projection or pre-activation array, no separate gate passes).
 */
static void fwd_fused_task(void *arg, int t, int nt)
{
	const struct rnn_job *j = arg;
	int64_t T = j->T, in = j->in, g = j->op == XO_OP_gru ? 3 : 4;
	float *ring = j->scr + t * j->ss; /* [2][chunk][S] without ws */
	struct xo_cpu_rnn_step p = {
	    .ldx = T * in, .kx = in, .u = j->u, .up = j->up, .wu = j->WU,
	    .bias = j->bias ? j->WU + (in + j->u) * g * j->up : NULL,
	    /* a ws beyond 8 MB (lstm at batch 512: 46 MB) is not in cache for
	     * its stores; the inference form's ring is */
	    .prefetch_rows = j->ws && j->N * T * j->S > (2 << 20),
	    /* lstm without a ws: the ring's rows are read only for c' and h'
	     * of the next step and y (h): i, f, g, o and act(c) not stored */
	    .ch_only = !j->ws,
	    .reset_after = j->ra,
	    /* gru reset_after=0's r h' rows, after the ring */
	    .rh = j->op != XO_OP_gru || j->ra ? NULL
	          : ring + (j->ws ? 0 : 2 * XO_CPU_RNN_CHUNK * j->S)};
	void (*step)(const struct xo_cpu_rnn_step *) =
	    j->op == XO_OP_gru ? j->k->gru_step : j->k->lstm_step;

	(void)nt;
	for (int64_t c0, nb; claim_chunk(j, &c0, &nb);) {
		float *base;

		p.m = nb;
		for (int64_t s = 0; s < T; s++) {
			int64_t ti = j->back ? T - 1 - s : s;

			p.x = j->x + (c0 * T + ti) * in;
			p.prev = s > 0 ? p.row : NULL;
			step_rows(j, ring, c0, s, &base, &p.ldr);
			p.row = base;
			step(&p);
			mask_rows(j, c0, nb, s, base, p.prev, p.ldr);
			copy_y(j, c0, nb, s, base, p.ldr);
		}
	}
}

/* ---- backward ----------------------------------------------------------- */

static void bwd_seq_task(void *arg, int t, int nt)
{
	const struct rnn_job *j = arg;
	int64_t n0, n1, nb, u = j->u, G = j->G, S = j->S, T = j->T;
	float *dh, *drh, *tmp;

	part_of(j->N, t, nt, &n0, &n1);
	nb = n1 - n0;
	if (nb <= 0)
		return;
	dh = j->scr + n0 * j->ss;
	drh = dh + nb * u;
	tmp = drh + nb * u;
	memset(dh, 0, (size_t)(2 * nb * u) * sizeof(float)); /* dh, drh */
	for (int64_t s = T - 1; s >= 0; s--) {
		int64_t ti = j->back ? T - 1 - s : s;

		for (int64_t n = 0; n < nb; n++) {
			const float *row = j->ws + ((n0 + n) * T + s) * S;
			const float *prev = s > 0 ? row - S : NULL;
			float *px = j->DPX + ((n0 + n) * T + ti) * G;
			float *ph = j->DPH + ((n0 + n) * T + s) * G;
			float *d = dh + n * u;
			float *hpm = j->HPM + ((n0 + n) * T + s) * u;
			bool mk = masked_at(j, n0 + n, s);
			bool out0 = mk && j->zero_out; /* the step's output was 0, not h */

			if (j->seq && !out0)
				for (int64_t k = 0; k < u; k++)
					d[k] += j->dy[((n0 + n) * T + s) * u + k];
			else if (s == T - 1 && !out0)
				for (int64_t k = 0; k < u; k++)
					d[k] += j->dy[(n0 + n) * u + k];
			for (int64_t k = 0; k < u; k++)
				hpm[k] = prev ? prev[j->hb * u + k] : 0.0f;
			if (j->RHM)
				for (int64_t k = 0; k < u; k++)
					j->RHM[((n0 + n) * T + s) * u + k] = row[u + k] * hpm[k];
			if (mk) { /* no gradient into the step: dh passes (below) */
				memset(px, 0, (size_t)G * sizeof(float));
				memset(ph, 0, (size_t)G * sizeof(float));
				continue;
			}
			switch (j->op) {
			case XO_OP_simple_rnn:
				for (int64_t k = 0; k < u; k++)
					px[k] = ph[k] = d[k] * act_d(j->relu, row[k]);
				break;
			default:
				for (int64_t k = 0; k < u; k++) {
					float z = row[k], rg = row[u + k], hh = row[2 * u + k];
					float hp = hpm[k];
					float dp = d[k] * (1.0f - z) * act_d(false, hh);

					px[k] = ph[k] = d[k] * (hp - hh) * (z * (1.0f - z));
					px[2 * u + k] = dp;
					ph[2 * u + k] = j->ra ? dp * rg : dp;
					if (j->ra)
						px[u + k] = ph[u + k] =
						    dp * row[4 * u + k] * (rg * (1.0f - rg));
				}
				break;
			}
		}
		if (j->op == XO_OP_gru && !j->ra) {
			/* drh = px_h U_h^T, then the r gate */
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nb, (int)u, (int)u,
				    1.0f, j->DPX + (n0 * T + ti) * G + 2 * u, (int)(T * G),
				    j->U + 2 * u, (int)G, 0.0f, drh, (int)u);
			for (int64_t n = 0; n < nb; n++) {
				const float *row = j->ws + ((n0 + n) * T + s) * S;
				const float *hpm = j->HPM + ((n0 + n) * T + s) * u;
				float *px = j->DPX + ((n0 + n) * T + ti) * G;
				float *ph = j->DPH + ((n0 + n) * T + s) * G;

				for (int64_t k = 0; k < u; k++) {
					float rg = row[u + k];

					px[u + k] = ph[u + k] =
					    drh[n * u + k] * hpm[k] * (rg * (1.0f - rg));
				}
			}
		}
		if (s == 0)
			break;
		/* the state gradient of step s - 1: ph U^T over the gates that read h' */
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nb, (int)u,
			    (int)(j->op == XO_OP_gru && !j->ra ? 2 * u : G), 1.0f,
			    j->DPH + (n0 * T + s) * G, (int)(T * G), j->U, (int)G, 0.0f, tmp,
			    (int)u);
		for (int64_t n = 0; n < nb; n++) {
			const float *row = j->ws + ((n0 + n) * T + s) * S;

			if (masked_at(j, n0 + n, s))
				continue; /* dh carried past the masked step unchanged */
			for (int64_t k = 0; k < u; k++) {
				float v = tmp[n * u + k];

				if (j->op == XO_OP_gru) {
					v += dh[n * u + k] * row[k];
					if (!j->ra)
						v += drh[n * u + k] * row[u + k];
				}
				dh[n * u + k] = v;
			}
		}
	}
}

/*
 * lstm backward (bwd_lstm_task): the parts claim chunks of j->chunk
 * samples from j->next (as the forward: a part whose thread has no core
 * holds up one chunk, not half the batch) and run each back through every
 * step, in blocks of j->blk steps. Per step only what the recurrence
 * needs: the chunk's pre-activation gradients px [nb][4 up] (gate q at
 * q * up, the columns past u zero; k->lstm_step_bwd) into the block's PX,
 * and dh' = px U^T (the ISA's gemm_nn against UT [4 up][up]). Per block,
 * with PX [steps][nb][4 up] in cache,
 *   dx_t = px W^T per step (gemm_nn against WT, [4 up][inp]),
 *   dkernel += x^T PX and drecurrent_kernel += H'^T PX (ONE gemm_tn each
 *   over the block's steps x nb rows, read in place: x_t and the ws rows'
 *   h' a step apart), dbias += column sums of PX (colsum),
 * so the [in + u][4 up] sums are read and written once per block instead
 * of once per step (16 rows at batch 32), no [batch*len][G] gradient array
 * is written and read back, and no BLAS call packs its operands per step.
 * Each chunk has its own sums, added in chunk order at the end
 * (lstm_sum_task): the result does not depend on which thread ran a chunk,
 * nor on the thread count.
 */
struct lstm_bwd_part {
	float *dh, *dc, *px;    /* [chunk][u], [chunk][u], [blk][chunk][4 up] */
	float *sv;              /* mask_zero: [chunk][2u], a masked sample's dh and dc */
	float *dW, *dU, *db;    /* [in][4 up], [u][4 up], [4 up]: the chunk's sums */
};

/* Part t's scratch, with the sums of chunk ci */
static void lstm_bwd_part_of(const struct rnn_job *j, int t, int64_t ci,
			     struct lstm_bwd_part *q)
{
	int64_t gp = 4 * j->up;

	q->dh = j->scr + t * j->ss;
	q->dc = q->dh + j->chunk * j->u;
	q->px = q->dc + j->chunk * j->u;
	q->sv = q->px + j->blk * j->chunk * gp;
	q->dW = j->DPX + ci * (j->in + j->u + 1) * gp;
	q->dU = q->dW + j->in * gp;
	q->db = q->dU + j->u * gp;
}

/* Before step s back of the chunk at c0 (nb samples): the dh and dc of
 * its masked samples saved; false when none is masked. */
static bool lstm_mask_save(const struct rnn_job *j, const struct lstm_bwd_part *q, int64_t c0,
			   int64_t nb, int64_t s)
{
	int64_t u = j->u;
	bool any = false;

	for (int64_t n = 0; j->ids && n < nb; n++) {
		if (!masked_at(j, c0 + n, s))
			continue;
		memcpy(q->sv + 2 * n * u, q->dh + n * u, (size_t)u * sizeof(float));
		memcpy(q->sv + (2 * n + 1) * u, q->dc + n * u, (size_t)u * sizeof(float));
		any = true;
	}
	return any;
}

/* After the step's kernel: a masked sample's px row (4 up at px) zeroed. */
static void lstm_mask_px(const struct rnn_job *j, int64_t c0, int64_t nb, int64_t s, float *px)
{
	int64_t gp = 4 * j->up;

	for (int64_t n = 0; n < nb; n++)
		if (masked_at(j, c0 + n, s))
			memset(px + n * gp, 0, (size_t)gp * sizeof(float));
}

/* After dh' = px U^T: a masked sample's dh and dc put back as saved, dh
 * plus its dy where its output was the carried h (zero_output_for_mask
 * off): the state gradients pass the step unchanged. */
static void lstm_mask_restore(const struct rnn_job *j, const struct lstm_bwd_part *q,
			      int64_t c0, int64_t nb, int64_t s)
{
	int64_t u = j->u, T = j->T;

	for (int64_t n = 0; n < nb; n++) {
		const float *dy = j->zero_out ? NULL
				  : j->seq ? j->dy + ((c0 + n) * T + s) * u
				  : s == T - 1 ? j->dy + (c0 + n) * u : NULL;

		if (!masked_at(j, c0 + n, s))
			continue;
		for (int64_t k = 0; k < u; k++)
			q->dh[n * u + k] = q->sv[2 * n * u + k] + (dy ? dy[k] : 0.0f);
		memcpy(q->dc + n * u, q->sv + (2 * n + 1) * u, (size_t)u * sizeof(float));
	}
}

/* The weight gradients of one block of steps [s_lo, s_hi] of the chunk at
 * c0 (nb samples), PX rows (s_hi - s, n): x_t and h' rows read in place. */
static void lstm_bwd_block(const struct rnn_job *j, const struct lstm_bwd_part *q, int64_t c0,
			   int64_t nb, int64_t s_lo, int64_t s_hi)
{
	int64_t u = j->u, gp = 4 * j->up, S = j->S, T = j->T, in = j->in;
	int64_t nsb = s_hi - s_lo + 1, nsu = s_lo > 0 ? nsb : nsb - 1;
	int64_t ti = j->back ? T - 1 - s_hi : s_hi;
	/* x_t of step s - 1 is one input row later with go_backwards, else earlier */
	struct xo_cpu_gemm_tn gw = {
	    .a = {j->x + (c0 * T + ti) * in, T * in, nb, j->back ? in : -in},
	    .m = nsb * nb, .k = in, .np = gp, .z = q->px, .d = q->dW};

	if (j->dx) {
		int64_t inp = (in + j->k->vw - 1) / j->k->vw * j->k->vw;

		for (int64_t b = 0; b < nsb; b++) {
			int64_t tb = j->back ? ti + b : ti - b;
			struct xo_cpu_gemm g = {
			    .a = {q->px + b * nb * gp, gp, nb, 0}, .m = nb, .k = gp, .n = in,
			    .np = inp, .b = j->WT, .c = j->dx + (c0 * T + tb) * in, .ldc = T * in,
			    .act = XO_ACTIVATION_LINEAR};

			j->k->gemm_nn(&g);
		}
	}
	j->k->gemm_tn(&gw);
	if (nsu > 0) { /* h' of step s is the h block of the ws row of s - 1 */
		struct xo_cpu_gemm_tn gu = {
		    .a = {j->ws + (c0 * T + s_hi - 1) * S + 6 * u, T * S, nb, -S},
		    .m = nsu * nb, .k = u, .np = gp, .z = q->px, .d = q->dU};

		j->k->gemm_tn(&gu);
	}
	j->k->colsum(q->px, nsb * nb, gp, q->db);
}

static void bwd_lstm_task(void *arg, int t, int nt)
{
	const struct rnn_job *j = arg;
	int64_t u = j->u, up = j->up, gp = 4 * up, S = j->S, T = j->T, in = j->in;
	struct lstm_bwd_part q;

	(void)nt;
	lstm_bwd_part_of(j, t, 0, &q);
	/* px's padding columns (u not a multiple of the vector width) stay zero */
	if (up > u)
		memset(q.px, 0, (size_t)(j->blk * j->chunk * gp) * sizeof(float));
	for (int64_t c0, nb; claim_chunk(j, &c0, &nb);) {
		lstm_bwd_part_of(j, t, c0 / j->chunk, &q);
		memset(q.dW, 0, (size_t)((in + u + 1) * gp) * sizeof(float));
		memset(q.dh, 0, (size_t)(nb * u) * sizeof(float)); /* dh and dc: a */
		memset(q.dc, 0, (size_t)(nb * u) * sizeof(float)); /* short chunk too */
		for (int64_t s_hi = T - 1; s_hi >= 0; s_hi -= j->blk) {
			int64_t s_lo = s_hi - j->blk + 1 > 0 ? s_hi - j->blk + 1 : 0;

			for (int64_t s = s_hi; s >= s_lo; s--) {
				const float *row0 = j->ws + (c0 * T + s) * S;
				float *px = q.px + (s_hi - s) * nb * gp;
				struct xo_cpu_lstm_step_bwd sb = {
				    .m = nb, .u = u, .up = up, .row = row0,
				    .cp = s > 0 ? row0 - S + 4 * u : NULL, .ldr = T * S,
				    .dy = j->seq ? j->dy + (c0 * T + s) * u
					  : s == T - 1 ? j->dy + c0 * u : NULL,
				    .ldy = j->seq ? T * u : u, .dh = q.dh, .dc = q.dc, .px = px};
				bool mk = lstm_mask_save(j, &q, c0, nb, s);

				j->k->lstm_step_bwd(&sb);
				if (mk)
					lstm_mask_px(j, c0, nb, s, px);
				if (s > 0) {
					struct xo_cpu_gemm h = {
					    .a = {px, gp, nb, 0}, .m = nb, .k = gp, .n = u,
					    .np = up, .b = j->UT, .c = q.dh, .ldc = u,
					    .act = XO_ACTIVATION_LINEAR};

					j->k->gemm_nn(&h);
				}
				if (mk)
					lstm_mask_restore(j, &q, c0, nb, s);
			}
			lstm_bwd_block(j, &q, c0, nb, s_lo, s_hi);
		}
	}
}

/* dkernel, drecurrent_kernel and dbias rows (in + u + 1 of them, padded
 * as the chunks' sums) of part t: the chunks' sums added in chunk order */
static void lstm_sum_task(void *arg, int t, int nt)
{
	const struct rnn_job *j = arg;
	int64_t u = j->u, up = j->up, gp = 4 * up, in = j->in, G = j->G, lo, hi;
	int64_t nc = (j->N + j->chunk - 1) / j->chunk, cs = (in + u + 1) * gp;

	part_of(in + u + (j->db ? 1 : 0), t, nt, &lo, &hi);
	/* row by row, chunk by chunk: contiguous adds, each element's terms in
	 * chunk order */
	for (int64_t r = lo; r < hi; r++) {
		float *dst = r < in ? j->dW + r * G : r < in + u ? j->dU + (r - in) * G : j->db;

		for (int64_t ci = 0; ci < nc; ci++)
			for (int64_t g = 0; g < 4; g++) {
				const float *src = j->DPX + ci * cs + r * gp + g * up;
				float *d = dst + g * u;

				for (int64_t c = 0; c < u; c++)
					d[c] = ci ? d[c] + src[c] : src[c];
			}
	}
}

/* dx rows, and the weight gradients by columns of G */
static void bwd_w_task(void *arg, int t, int nt)
{
	const struct rnn_job *j = arg;
	int64_t rows = j->N * j->T, G = j->G, u = j->u, lo, hi, c0, c1;

	part_of(rows, t, nt, &lo, &hi);
	if (j->dx && hi > lo)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)(hi - lo), (int)j->in,
			    (int)G, 1.0f, j->DPX + lo * G, (int)G, j->W, (int)G, 0.0f,
			    j->dx + lo * j->in, (int)j->in);
	part_of(G, t, nt, &c0, &c1);
	if (c1 <= c0)
		return;
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)j->in, (int)(c1 - c0),
		    (int)rows, 1.0f, j->x, (int)j->in, j->DPX + c0, (int)G, 0.0f, j->dW + c0,
		    (int)G);
	/* drecurrent_kernel: h' rows, or r h' for gru reset_after=0's h gate */
	for (int64_t a = c0; a < c1;) {
		bool via_r = j->RHM && a >= 2 * u;
		int64_t b = !j->RHM || a >= 2 * u ? c1 : (c1 < 2 * u ? c1 : 2 * u);

		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)u, (int)(b - a),
			    (int)rows, 1.0f, via_r ? j->RHM : j->HPM, (int)u, j->DPH + a, (int)G,
			    0.0f, j->dU + a, (int)G);
		a = b;
	}
	if (j->db) { /* column sums, rows in order (row-wise, contiguous) */
		for (int64_t c = c0; c < c1; c++)
			j->db[c] = 0.0f;
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = c0; c < c1; c++)
				j->db[c] += j->DPX[r * G + c];
		if (j->ra) {
			for (int64_t c = c0; c < c1; c++)
				j->db[G + c] = 0.0f;
			for (int64_t r = 0; r < rows; r++)
				for (int64_t c = c0; c < c1; c++)
					j->db[G + c] += j->DPH[r * G + c];
		}
	}
}

/* ---- wrappers ------------------------------------------------------------ */

static void job_of(const struct xo_cpu_ctx *cx, enum xo_op op, const struct xo_op_args *a,
		   bool dir_fwd, struct rnn_job *j)
{
	const struct xo_params *p = &a->p;

	memset(j, 0, sizeof(*j));
	j->op = op;
	j->k = cx->k;
	j->N = p->batch;
	j->T = p->len;
	j->in = p->ch;
	j->u = p->units;
	j->G = xo_rnn_gates(op) * p->units;
	j->S = xo_rnn_ws_blocks(op) * p->units;
	j->hb = op == XO_OP_lstm ? 6 : op == XO_OP_gru ? 3 : 0;
	j->ra = op == XO_OP_gru && p->reset_after;
	j->relu = p->activation == XO_ACTIVATION_RELU;
	j->seq = p->return_sequences;
	j->back = p->go_backwards;
	j->bias = p->use_bias;
	j->zero_out = p->zero_output_for_mask;
	/* the ids follow bias (fwd) or dy (bwd) */
	j->ids = p->mask_zero ? xo_tensor_i32(a->src[dir_fwd ? 4 : 5]) : NULL;
	j->x = xo_tensor_f32(a->src[0]);
	j->W = xo_tensor_f32(a->src[1]);
	j->U = xo_tensor_f32(a->src[2]);
}

/* threads for a call: 1 below the threshold, at most one per sample */
static int threads_for(const struct xo_cpu_ctx *cx, const struct rnn_job *j)
{
	double work = (double)j->N * (double)j->T * (double)j->G * (double)(j->in + j->u);
	int64_t nt = cx->nthreads;

	if (work < (double)XO_CPU_RNN_PAR_MIN || nt < 1)
		nt = 1;
	if (nt > j->N)
		nt = j->N;
	return (int)nt;
}

/* cblas takes int sizes and leading dimensions */
static enum xo_status int_sizes(enum xo_op op, const struct rnn_job *j)
{
	int64_t big = j->N * j->T * (j->S > j->in ? j->S : j->in);

	if (big > INT32_MAX || j->N * j->T * j->G > INT32_MAX)
		return xo_error(XO_ERESOURCE, "cpu: %s: batch * len * gates * units above %d",
				xo_op_name(op), INT32_MAX);
	return XO_OK;
}

/* One row of [kernel; recurrent_kernel] (or lstm's bias) for the fused
 * steps: its g gates of u columns each to gate q's columns at q * up, the
 * columns [u, up) of each gate zero (struct xo_cpu_rnn_step's wu). */
static void pack_gates(const float *src, int g, int64_t u, int64_t up, float *dst)
{
	for (int q = 0; q < g; q++) {
		memcpy(dst + q * up, src + q * u, (size_t)u * sizeof(float));
		memset(dst + q * up + u, 0, (size_t)(up - u) * sizeof(float));
	}
}

static enum xo_status rnn_fwd(struct xo_backend *be, enum xo_op op, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *cx = be->ctx;
	struct rnn_job j;
	enum xo_status st;
	size_t nxp, nscr;
	atomic_llong next;

	job_of(cx, op, a, true, &j);
	if (int_sizes(op, &j))
		return XO_ERESOURCE;
	j.b = a->src[3] ? xo_tensor_f32(a->src[3]) : NULL;
	j.y = xo_tensor_f32(a->dst[0]);
	j.ws = a->dst[1] ? xo_tensor_f32(a->dst[1]) : NULL; /* NULL: the inference form */
	/* simple_rnn: WU [in + u][G]; lstm, gru: packed WU and bias */
	j.up = (j.u + cx->k->vw - 1) / cx->k->vw * cx->k->vw;
	nxp = (size_t)(op == XO_OP_gru ? (j.in + j.u) * 3 * j.up + 4 * j.up
		       : op == XO_OP_lstm ? (j.in + j.u + 1) * 4 * j.up : (j.in + j.u) * j.G);
	j.nt = threads_for(cx, &j);
	/* per part: one chunk of hp and A (simple_rnn); without a ws, the ring
	 * of 2 steps x rows (step_rows); gru reset_after=0, a chunk of r h' */
	j.ss = (op != XO_OP_simple_rnn ? 0 : XO_CPU_RNN_CHUNK * (j.G + j.in + j.u)) +
	       (j.ws ? 0 : 2 * XO_CPU_RNN_CHUNK * j.S) +
	       (op == XO_OP_gru && !j.ra ? XO_CPU_RNN_CHUNK * j.up : 0);
	nscr = (size_t)(j.nt * j.ss);
	st = xo_cpu_scratch_reserve(cx, (int64_t)(nxp + nscr), 0, 0);
	if (st)
		return st;
	if (op == XO_OP_gru) {
		/* [kernel; recurrent_kernel] with gate q at q * up, zero padded;
		 * then the bias [4 up]: z and r the input and recurrent biases
		 * summed, then the h gate's input bias and recurrent bias */
		int64_t u = j.u, up = j.up, rows = j.in + u;
		float *bias = j.WU = cx->shared.p;

		j.scr = j.WU + nxp;
		for (int64_t r = 0; r < rows; r++)
			pack_gates(r < j.in ? j.W + r * j.G : j.U + (r - j.in) * j.G, 3, u, up,
				   j.WU + r * 3 * up);
		bias += rows * 3 * up;
		memset(bias, 0, (size_t)(4 * up) * sizeof(float));
		for (int64_t c = 0; j.b && j.ra && c < u; c++) {
			bias[c] = j.b[c] + j.b[j.G + c];
			bias[up + c] = j.b[u + c] + j.b[j.G + u + c];
			bias[2 * up + c] = j.b[2 * u + c];
			bias[3 * up + c] = j.b[j.G + 2 * u + c];
		}
		for (int64_t c = 0; j.b && !j.ra && c < u; c++)
			for (int q = 0; q < 3; q++)
				bias[q * up + c] = j.b[q * u + c];
		atomic_init(&next, 0);
		j.next = &next;
		j.chunk = xo_cpu_rnn_fwd_chunk(j.N, j.nt, cx->k->gru_rows);
		xo_cpu_threads_run(cx->tp, j.nt, fwd_fused_task, &j);
		return XO_OK;
	}
	j.WU = cx->shared.p;
	j.scr = j.WU + nxp;
	atomic_init(&next, 0);
	j.next = &next;
	j.chunk = xo_cpu_rnn_fwd_chunk(j.N, j.nt, cx->k->lstm_rows);
	if (op == XO_OP_lstm) {
		/* gate q's columns at q * up, zero padded; the bias row last */
		int64_t u = j.u, up = j.up, rows = j.in + u;

		for (int64_t r = 0; r <= rows; r++) {
			const float *src = r < j.in ? j.W + r * j.G
					   : r < rows ? j.U + (r - j.in) * j.G : j.b;

			if (!src)
				break;
			pack_gates(src, 4, u, up, j.WU + r * 4 * up);
		}
		xo_cpu_threads_run(cx->tp, j.nt, fwd_fused_task, &j);
		return XO_OK;
	}
	memcpy(j.WU, j.W, (size_t)(j.in * j.G) * sizeof(float));
	memcpy(j.WU + j.in * j.G, j.U, (size_t)(j.u * j.G) * sizeof(float));
	xo_cpu_threads_run(cx->tp, j.nt, fwd_cat_task, &j);
	return XO_OK;
}

/* Bytes of a part's PX block in the lstm backward (blocks of steps) */
#define XO_CPU_LSTM_BWD_PX (128 * 1024)

/* lstm backward: bwd_lstm_task over the chunks, then their sums in order */
static enum xo_status lstm_bwd(struct xo_cpu_ctx *cx, struct rnn_job *j)
{
	int64_t vw = cx->k->vw, u = j->u, G = j->G, in = j->in;
	int64_t up = (u + vw - 1) / vw * vw, gp = 4 * up, inp = (in + vw - 1) / vw * vw;
	int64_t nwt = (j->dx ? gp * inp : 0) + gp * up, nc;
	enum xo_status st;
	atomic_llong next;
	int nts;

	j->up = up;
	j->nt = threads_for(cx, j);
	/* chunks as the forward's: at least one per part, at most 32 samples */
	j->chunk = (j->N + j->nt - 1) / j->nt;
	if (j->chunk > XO_CPU_RNN_CHUNK)
		j->chunk = XO_CPU_RNN_CHUNK;
	nc = (j->N + j->chunk - 1) / j->chunk;
	j->blk = XO_CPU_LSTM_BWD_PX / (j->chunk * gp * (int64_t)sizeof(float));
	if (j->blk < 1)
		j->blk = 1;
	if (j->blk > j->T)
		j->blk = j->T;
	j->ss = 2 * j->chunk * u + j->blk * j->chunk * gp + (j->ids ? 2 * j->chunk * u : 0);
	st = xo_cpu_scratch_reserve(cx, nwt + j->nt * j->ss + nc * (in + u + 1) * gp, 0, 0);
	if (st)
		return st;
	j->UT = cx->shared.p;
	j->WT = j->dx ? j->UT + gp * up : NULL;
	j->scr = j->UT + nwt;
	j->DPX = j->scr + j->nt * j->ss; /* the chunks' sums */
	/* UT[q up + c][k] = U[k][q u + c], WT[q up + c][i] = W[i][q u + c]
	 * (only for dx); rows c >= u and columns past u / in zero */
	memset(j->UT, 0, (size_t)nwt * sizeof(float));
	for (int64_t k = 0; k < u; k++)
		for (int64_t q = 0; q < 4; q++)
			for (int64_t c = 0; c < u; c++)
				j->UT[(q * up + c) * up + k] = j->U[k * G + q * u + c];
	if (j->WT)
		for (int64_t i = 0; i < in; i++)
			for (int64_t q = 0; q < 4; q++)
				for (int64_t c = 0; c < u; c++)
					j->WT[(q * up + c) * inp + i] = j->W[i * G + q * u + c];
	atomic_init(&next, 0);
	j->next = &next;
	xo_cpu_threads_run(cx->tp, j->nt, bwd_lstm_task, j);
	/* the sums split by rows over the threads when there are enough adds */
	nts = nc * (in + u + 1) * gp >= XO_CPU_RNN_PAR_MIN ? j->nt : 1;
	xo_cpu_threads_run(cx->tp, nts, lstm_sum_task, j);
	return XO_OK;
}

static enum xo_status rnn_bwd(struct xo_backend *be, enum xo_op op, const struct xo_op_args *a)
{
	struct xo_cpu_ctx *cx = be->ctx;
	struct rnn_job j;
	size_t nd, nh, nscr, total;
	enum xo_status st;
	int ntw;

	job_of(cx, op, a, false, &j);
	if (int_sizes(op, &j))
		return XO_ERESOURCE;
	j.ws = (float *)xo_tensor_f32(a->src[3]); /* read only */
	j.dy = xo_tensor_f32(a->src[4]);
	j.dx = a->dst[0] ? xo_tensor_f32(a->dst[0]) : NULL;
	j.dW = xo_tensor_f32(a->dst[1]);
	j.dU = xo_tensor_f32(a->dst[2]);
	j.db = a->dst[3] ? xo_tensor_f32(a->dst[3]) : NULL;
	if (op == XO_OP_lstm)
		return lstm_bwd(cx, &j);
	nd = (size_t)(j.N * j.T * j.G);
	nh = (size_t)(j.N * j.T * j.u);
	j.ss = 3 * j.u; /* dh, drh, tmp */
	nscr = (size_t)(j.N * j.ss);
	total = 2 * nd + 2 * nh + nscr;
	st = xo_cpu_scratch_reserve(cx, (int64_t)total, 0, 0);
	if (st)
		return st;
	j.DPX = cx->shared.p;
	/* simple_rnn has ph == px; without go_backwards the rows coincide too
	 * (n*len + t, t = s): one array */
	j.DPH = op != XO_OP_gru && !j.back ? j.DPX : j.DPX + nd;
	j.HPM = j.DPH + nd;
	j.RHM = op == XO_OP_gru && !j.ra ? j.HPM + nh : NULL;
	j.scr = j.HPM + 2 * nh;
	j.nt = threads_for(cx, &j);
	xo_cpu_threads_run(cx->tp, j.nt, bwd_seq_task, &j);
	ntw = j.nt > 1 ? cx->nthreads : 1;
	if (ntw > j.G)
		ntw = (int)j.G;
	xo_cpu_threads_run(cx->tp, ntw, bwd_w_task, &j);
	return XO_OK;
}

#define CPU_RNN(name)                                                                     \
	static enum xo_status cpu_##name##_fwd(struct xo_backend *be,                      \
					       const struct xo_op_args *a)                 \
	{                                                                                 \
		return rnn_fwd(be, XO_OP_##name, a);                                      \
	}                                                                                 \
	static enum xo_status cpu_##name##_bwd(struct xo_backend *be,                      \
					       const struct xo_op_args *a)                 \
	{                                                                                 \
		return rnn_bwd(be, XO_OP_##name, a);                                      \
	}
CPU_RNN(simple_rnn)
CPU_RNN(lstm)
CPU_RNN(gru)

XO_CPU_ENTRY(simple_rnn, fwd, cpu_simple_rnn_fwd)
XO_CPU_ENTRY(simple_rnn, bwd, cpu_simple_rnn_bwd)
XO_CPU_ENTRY(lstm, fwd, cpu_lstm_fwd)
XO_CPU_ENTRY(lstm, bwd, cpu_lstm_bwd)
XO_CPU_ENTRY(gru, fwd, cpu_gru_fwd)
XO_CPU_ENTRY(gru, bwd, cpu_gru_bwd)
