/*
 * cpu.h - internals of backend "cpu": the per-ISA kernel table, the kernels'
 * argument structs (each kernel's contract is written next to its struct), the
 * thread pool and the backend context. Included by the files of kernels/ and
 * by suites/ only; what other folders may use is in xo/cpu.h.
 */
#ifndef XO_KERNELS_CPU_H
#define XO_KERNELS_CPU_H

#include <stdint.h>

#include "xo/backend.h"
#include "xo/cpu.h"

/* Widest vector of any ISA level, in floats: stack tiles are sized by it. */
#define XO_CPU_MAX_VW 16

/*
 * Rows of an operand A that is read row by row, possibly as overlapping
 * windows: row m = g * group_rows + r (0 <= r < group_rows) starts at
 * a + g * group_stride + r * lda. A conv1d input seen as im2col rows without a
 * copy (valid padding, dilation 1) is one group per sample with lda = stride *
 * ch; a plain matrix is one group with lda = its row length.
 */
struct xo_cpu_rows {
	const float *a;       /* first element of row 0 */
	int64_t lda;          /* elements between consecutive rows of a group */
	int64_t group_rows;   /* rows per group, >= 1 */
	int64_t group_stride; /* elements between the first rows of two groups
			       * (negative: groups backwards in memory, as the
			       * lstm backward's steps) */
};

/*
 * C = act(bias + A * B), the forward GEMM ("NN").
 *   A: m rows (struct xo_cpu_rows), each read at [0, k).
 *   B: packed [k][np], np = n rounded up to the ISA's vector width; columns
 *      n..np-1 are zero (they are computed and dropped).
 *   bias: [np] (zero padded) or NULL for none.
 *   C: row i at c + i * ldc, columns [0, n) written, nothing else touched.
 *   act: XO_ACTIVATION_LINEAR, _RELU or _SIGMOID (softmax is the caller's).
 * Reads nothing past A rows' k elements, B's k * np, bias's np. C must not
 * alias A, B or bias. m, k, n >= 1.
 */
struct xo_cpu_gemm {
	struct xo_cpu_rows a;
	int64_t m, k, n, np;
	const float *b;
	const float *bias;
	float *c;
	int64_t ldc;
	int act;
};

/*
 * D += A^T * Z, the weight-gradient GEMM ("TN"): D[j][0:np] += sum over rows
 * i of A_i[j] * Z[i][0:np], for j in [0, k).
 *   A: m rows (struct xo_cpu_rows), each read at [0, k).
 *   Z: [m][np] contiguous (np a multiple of the vector width, zero padded).
 *   D: [k][np] contiguous, accumulated into (the caller zeroes it).
 * No aliasing between D and A or Z. m, k >= 1.
 */
struct xo_cpu_gemm_tn {
	struct xo_cpu_rows a;
	int64_t m, k, np;
	const float *z;
	float *d;
};

/*
 * Max pooling of batch samples x[batch][len][ch] -> y[batch][out][ch]
 * (dy [batch][out][ch], dx like x): window o covers
 * [o * stride - pad, + pool) clipped to [0, len), never empty (Keras
 * geometry); the first element of the window starts the maximum and a later
 * one replaces it only when v > best (ties and NaN keep the first).
 * bwd: dx[len][ch] is overwritten: zero, plus dy[o][c] added at each window's
 * first maximum, windows in order. No aliasing.
 */
struct xo_cpu_pool {
	int64_t batch, len, ch, out, pool, stride, pad;
	const float *x;
	const float *dy; /* bwd only */
	float *y;        /* fwd: y; bwd: dx */
};

/*
 * One recurrent time step of m samples, fused
 * (kernels/cpu_rnn.inc): k->lstm_step and k->gru_step take the same
 * arguments. Per sample and vector of units the gate sums in registers
 * (bias first, then x_t W, then h' U), one tile of rows at a time, then the
 * cell on the tile with the ISA's gate forms vsigmoid_gate and vtanh_gate
 * (within the recurrent bounds), written to the sample's ws row.
 *   lstm: z = bias + x_t W + h' U of the gates i, f, g, o; i, f, o =
 *       sigmoid, g = tanh, c = f c' + i g, h = o tanh(c).
 *   gru reset_after=1: z, r = sigmoid(b0 + b1 + x W + h' U) of their
 *       gates; xh = b0_h + x W_h and hz = b1_h + h' U_h apart (r multiplies
 *       only the recurrent part); hh = tanh(xh + r hz), h = z h' + (1 - z) hh.
 *   gru reset_after=0 (hh = tanh(xh + (r h') U_h)): two phases, as r of
 *       every unit comes before the product: the first z, r (to the row),
 *       xh = b_h + x W_h (to the hh block) and r h' (to rh); the second
 *       (r h') U_h on tiles of rows x 4 vectors of units, then hh, h and
 *       hz = 0 (ops.def).
 * The operands (G gates: lstm 4, gru 3):
 *   x: sample i's input row at x + i * ldx, read at [0, kx).
 *   wu: packed [kx + u][G * up], up = u rounded up to the vector width:
 *       rows [0, kx) the kernel, then the recurrent_kernel; gate q's
 *       columns at q * up, columns [u, up) of each gate zero.
 *   bias: zero padded, or NULL (no bias). lstm: [4 * up] laid out as wu's
 *       rows. gru: [4 * up], reset_after=1 b0_z + b1_z, b0_r + b1_r (the
 *       input and recurrent biases summed), b0_h, b1_h; reset_after=0 the
 *       kernel's b_z, b_r, b_h, then zeros.
 *   prev: the ws row of the step before for sample i at prev + i * ldr
 *       (lstm: its c block read at [4u, 5u) and h at [6u, 7u); gru: h at
 *       [3u, 4u)); NULL at step 0 (c' = h' = 0: the recurrent rows are
 *       skipped; gru's hz = b1_h).
 *   row: sample i's ws row at row + i * ldr: the blocks of ops.def (lstm
 *       i, f, g, o, c, act(c), h; gru z, r, hh, h, hz) of u, columns
 *       [0, u) of each written, nothing else (lstm with ch_only only those
 *       of c and h).
 * Per output one FMA chain, bias first, then k in order: a sample's result
 * does not depend on m or its place in the tile. row must not overlap x,
 * wu, bias, prev's rows or rh. m, kx, u >= 1.
 */
struct xo_cpu_rnn_step {
	const float *x;
	int64_t ldx, m, kx, u, up;
	const float *wu, *bias;
	const float *prev;
	float *row;
	int64_t ldr;
	/* nonzero: prefetch the ws lines each tile stores while its products
	 * run (for a ws larger than the caches; 0, the default, does not) */
	int prefetch_rows;
	/* lstm, nonzero: write only the c and h blocks of each row (the
	 * inference form: the next step reads c and h, y reads h, nothing
	 * reads i, f, g, o, act(c)); 0, the default, all seven */
	int ch_only;
	/* gru: 0 reset_after=0, nonzero reset_after=1 */
	int reset_after;
	/* gru reset_after=0: [m][up] scratch for r h' (sample i's at rh + i * up) */
	float *rh;
};

/*
 * One lstm time step back of m samples (the end of
 * cpu_kernels.inc), the pre-activation gradients from the ws rows:
 *   row: sample i's ws row of this step at row + i * ldr (the blocks i, f,
 *       g, o, c, act(c), h of u, ops.def); cp: its c' at cp + i * ldr
 *       (the c block of the row before), or NULL at step 0 (c' = 0).
 *   dy: the output gradient to add to dh first, at dy + i * ldy, or NULL.
 *   dh, dc: [m][u] the state and cell gradients; dh read (after dy is
 *       added to it), dc read and replaced by the cell gradient carried to
 *       the step before.
 *   px: [m][4 up] out: gate q's u values at q * up (columns [u, up) not
 *       written).
 * Per unit, in this order (the forms tol_rnn_bwd assumes):
 *   dcc = dc + dh o (1 - a a); px_i = dcc g (i (1 - i));
 *   px_f = dcc c' (f (1 - f)); px_g = dcc i (1 - g g);
 *   px_o = dh a (o (1 - o)); dc = dcc f
 * A sample's results depend only on its own rows (not on m or i). px must
 * not overlap the other arrays. m, u >= 1, up >= u.
 */
struct xo_cpu_lstm_step_bwd {
	int64_t m, u, up;
	const float *row, *cp;
	int64_t ldr;
	const float *dy;
	int64_t ldy;
	float *dh, *dc, *px;
};

/* The kernels of one ISA level; every pointer is set. Element-wise kernels
 * take contiguous arrays of count >= 1 elements; out may equal in. */
struct xo_cpu_kernels {
	const char *isa; /* "scalar", "avx2", "avx512" */
	int vw;          /* floats per vector */
	void (*gemm_nn)(const struct xo_cpu_gemm *g);
	void (*gemm_tn)(const struct xo_cpu_gemm_tn *g);
	void (*pool_fwd)(const struct xo_cpu_pool *p);
	void (*pool_bwd)(const struct xo_cpu_pool *p);
	/* y = x > 0 ? x : +0, NaN passed on */
	void (*relu_fwd)(const float *x, float *y, int64_t count);
	/* dx = y > 0 ? dy : 0 */
	void (*relu_bwd)(const float *y, const float *dy, float *dx, int64_t count);
	/* y = 1 / (1 + exp(-x)), within 3 ulp, subnormal results kept */
	void (*sigmoid_fwd)(const float *x, float *y, int64_t count);
	/* dx = dy * (y * (1 - y)) */
	void (*sigmoid_bwd)(const float *y, const float *dy, float *dx, int64_t count);
	/* tanh, elu, gelu, softplus forward and backward over count >= 1
	 * contiguous floats (forms, bounds and contract in cpu_kernels.inc;
	 * bwd's s is y for tanh and elu, x for gelu and softplus, ops.def);
	 * out may equal an input. false (nothing written) for any other
	 * activation. */
	bool (*act_fwd)(int act, const float *x, float *y, int64_t count);
	bool (*act_bwd)(int act, const float *s, const float *dy, float *dx, int64_t count);
	/* rows of ch: y = exp(x - max) * (1 / sum); x and y may be the same */
	void (*softmax_fwd)(const float *x, float *y, int64_t rows, int64_t ch);
	/* x [rows][stride]: each of columns [0, cols) replaced by its softmax
	 * over the rows, softmax_fwd's forms per column (the attention's
	 * scores stored key-major, cpu_attn.c); stride >= cols */
	void (*softmax_cols)(float *x, int64_t rows, int64_t cols, int64_t stride);
	/* d[i] += s[i] for i in [0, count); no aliasing */
	void (*add)(float *d, const float *s, int64_t count);
	/* d[0:np] += sum over rows of z[rows][np]; np a multiple of vw */
	void (*colsum)(const float *z, int64_t rows, int64_t np, float *d);
	/* dropout: y[i] = keep(base + i) ? x[i] * scale : +0 for i in [0, count),
	 * keep from Philox4x32-10 exactly as xo_dropout_keep; thr = smallest
	 * 24-bit value kept (ceil(rate * 2^24)). mask (or NULL) gets -1 / 0 per
	 * element for dropout_apply. */
	void (*dropout)(const float *x, float *y, int64_t count, uint64_t base, uint64_t seed,
			uint32_t stream_a, uint32_t stream_b, uint32_t thr, float scale,
			int32_t *mask);
	/* y[i] = mask[i] ? x[i] * scale : +0 */
	void (*dropout_apply)(const float *x, float *y, int64_t count, const int32_t *mask,
			      float scale);
	/* FMA throughput loop for the peak measurement: iters rounds of
	 * XO_CPU_FMA_CHAINS independent vector FMA chains; returns a value that
	 * depends on all of them (so nothing is optimized away). */
	float (*fma_loop)(int64_t iters);
	/* Keras 3 Adam over n parameters (g, w, m, v distinct): m' = m +
	 * (g - m) c1 and v' = v + (g^2 - v) c2 in double rounded to float, then
	 * w' = w - lr_t m' / (sqrt(v') + eps) in double rounded to float; no
	 * FMA contraction, so bit-identical at every ISA level */
	void (*adam)(const float *g, float *w, float *m, float *v, int64_t n, double lr_t,
		     double eps, double c1, double c2);
	/* one lstm step, struct xo_cpu_rnn_step (cpu_rnn.inc) */
	void (*lstm_step)(const struct xo_cpu_rnn_step *p);
	/* one lstm step back, struct xo_cpu_lstm_step_bwd (cpu_kernels.inc) */
	void (*lstm_step_bwd)(const struct xo_cpu_lstm_step_bwd *p);
	/* rows of lstm_step's register tile (cpu_rnn.inc's LSTM_MR: 6 at
	 * AVX-512, 3 at AVX2, 4 scalar): the forward's chunks are multiples */
	int lstm_rows;
	/* y = the lstm cell's gate sigmoid (fn 0) or tanh (fn 1) of x, count
	 * >= 1 floats (vsigmoid_gate, vtanh_gate in cpu_kernels.inc: their
	 * bounds; suites/test_gates.c sweeps them) */
	void (*gate_fwd)(int fn, const float *x, float *y, int64_t count);
	/* one gru step, struct xo_cpu_rnn_step (cpu_rnn.inc) */
	void (*gru_step)(const struct xo_cpu_rnn_step *p);
	/* rows of gru_step's register tile (cpu_rnn.inc's GRU_MR) */
	int gru_rows;
};

/* Independent chains of the FMA peak loop. Enough to hide the FMA latency on
 * every port (latency 4-5 cycles x 2 FMA ports = 8-10 chains in flight), and
 * few enough that the chains plus the two constant operands (12 + 2) stay in
 * the 16 vector registers of SSE/AVX2: with 16 chains GCC spills three of
 * them to the stack at -mavx2, each spilled chain waits on a store-to-load
 * forward every round, and the AVX2 peak came out at about half the
 * machine's (65 vs 117 GFLOP/s a core on a Zen 4), so `xo bench` printed
 * kernels at 153% of it. */
#define XO_CPU_FMA_CHAINS 12

extern const struct xo_cpu_kernels xo_cpu_kernels__scalar;
extern const struct xo_cpu_kernels xo_cpu_kernels__avx2;
extern const struct xo_cpu_kernels xo_cpu_kernels__avx512;

/* ---- thread pool ----------------------------------------------------------- */

struct xo_cpu_pool_threads;
typedef void (*xo_cpu_task_fn)(void *arg, int tid, int nthreads);

/* Starts nthreads - 1 workers (the caller is thread 0). */
enum xo_status xo_cpu_threads_init(int nthreads, struct xo_cpu_pool_threads **out);
void xo_cpu_threads_free(struct xo_cpu_pool_threads *tp); /* accepts NULL */
/* Runs fn(arg, t, n) once for every part t in [0, n), n <= the pool's
 * threads; the caller and the workers claim parts until none is left, so a
 * part may run on any thread (scratch is per part, thr[t]); returns when all
 * are done. n == 1 runs inline. */
/* Samples per chunk of the lstm / simple_rnn forward of batch samples on nt
 * parts (1 <= result <= 30), rows the kernel's row tile (k->lstm_rows). The
 * parts claim chunks from a counter until none is left, so where the batch
 * has that many tiles there are at least XO_CPU_RNN_PER_PART chunks per part
 * (a worker that starts late or runs slower takes fewer chunks instead of
 * holding up half the batch); of those chunk sizes, the one whose busiest
 * part costs least when the parts claim in turn (xo_cpu_rnn_fwd_span, costs
 * xo_cpu_rnn_chunk_cost): at batch 32 on 2 parts with tiles of 6, 8 chunks of
 * 4 (16 rows a part), not 5 of 6 and one of 2 (18 and 14). One part: chunks
 * of 30 (rounded down to the tile), or the whole batch below that. */
#define XO_CPU_RNN_PER_PART 3
/* The cost of a chunk of nb rows in lstm_step's tiles of rows (cpu_rnn.inc:
 * whole tiles, the last one as 2 or 4 rows where that covers it), in half
 * rows: 2 a row of a whole tile, 5 for a tail of 2 rows (measured: a 2-row
 * tile costs 2.5 rows of a 6-row one at AVX-512), 8 for a tail of 4. */
int64_t xo_cpu_rnn_chunk_cost(int64_t nb, int rows);
/* The busiest part's cost (and in *least the idlest's) with chunks of c
 * rows claimed in turn by nt parts of equal speed, per-chunk overhead in. */
int64_t xo_cpu_rnn_fwd_span(int64_t batch, int nt, int rows, int64_t c, int64_t *least);
int64_t xo_cpu_rnn_fwd_chunk(int64_t batch, int nt, int rows);
void xo_cpu_threads_run(struct xo_cpu_pool_threads *tp, int n, xo_cpu_task_fn fn, void *arg);

/* ---- context ------------------------------------------------------------------ */

/* Grow-only scratch: one shared buffer and one per thread, 64-byte aligned. */
struct xo_cpu_buf {
	float *p;
	size_t cap; /* floats */
};

struct xo_cpu_ctx {
	const struct xo_cpu_kernels *k;   /* the chosen ISA's kernels */
	enum xo_cpu_isa isa;
	int nthreads;                     /* pool size (XO_THREADS, default 2) */
	struct xo_cpu_pool_threads *tp;
	struct xo_cpu_buf shared;         /* packed weights etc. */
	struct xo_cpu_buf thr[XO_CPU_MAX_THREADS]; /* per-thread scratch */
	/* The last dropout mask drawn, so the backward pass (and a repeated
	 * forward) of the same (seed, step, layer, rate, count) reuses it: the
	 * mask is a function of exactly these. */
	int32_t *mask;
	int64_t mask_cap, mask_count;
	uint64_t mask_seed;
	uint32_t mask_a, mask_b, mask_thr;
	bool mask_valid;
};

/* The kernel table of an ISA level (xo_cpu_isa_detect in xo/cpu.h). */
const struct xo_cpu_kernels *xo_cpu_kernels_for(enum xo_cpu_isa isa);

/* ---- probe (cpu_probe.c) ------------------------------------------------------------ */

/* The backend's probe (struct xo_probe; the iface's .probe entry). */
enum xo_status xo_cpu_probe(struct xo_backend *be, double budget_s, struct xo_probe *out);
/* The probe's stream kernel, a STREAM triad a[i] = b[i] + s * c[i] for i in
 * [0, n), split in nt parts over the pool (nt <= its threads); no aliasing. */
void xo_cpu_triad(struct xo_cpu_pool_threads *tp, int nt, float *a, const float *b,
		  const float *c, float s, int64_t n);
/* The probe's triad inputs for n elements (b[i] = i mod 2^16, c[i] = (i / 8)
 * mod 2^8, a = -1), written over the pool; and a[i] after xo_cpu_triad with
 * s = 3 (exact in float). */
void xo_cpu_triad_fill(struct xo_cpu_pool_threads *tp, int nt, float *a, float *b, float *c,
		       int64_t n);
float xo_cpu_triad_expect(int64_t i);
/* The last-level cache one core's data can live in, from sysfs under
 * sysfs_cpu0 (e.g. "/sys/devices/system/cpu/cpu0": the highest-level data or
 * unified cache), glibc's figure where sysfs has none, 0 if neither; the
 * size text as sysfs writes it ("32768K") parsed, 0 if it is not one; and the
 * bytes of each triad array for an LLC of llc bytes (2x, 32..128 MiB). */
size_t xo_cpu_llc_bytes(const char *sysfs_cpu0);
size_t xo_cpu_cache_size_parse(const char *text);
size_t xo_cpu_triad_bytes(size_t llc);

/* ---- fused network path (cpu_net.c, cpu_net.inc) ------------------------------------ */

/*
 * A valid, stride-1, dilation-1 conv1d with bias and relu (or linear)
 * fused with the max pooling after it (valid, strides == pool_size, the
 * windows tiling the rows computed), for samples one after the other:
 *   x: sample n at x + n * x_stride, rows of ch floats; conv row o reads the
 *      window x[o * ch, o * ch + kc) (kc = kernel_size * ch), for o in
 *      [0, pooled * pool), so at most (pooled * pool - 1) * ch + kc floats
 *      of a sample.
 *   w: [kc][f], f a multiple of the vector width (no padding); bias [f] or
 *      NULL.
 *   y: sample n at y + n * y_stride: [pooled][f], each the maximum of pool
 *      rows act(bias + window * w) (first maximum, NaN kept as pool_fwd).
 *   arg: NULL, or like y (int32, sample n at arg + n * y_stride): which row
 *      of its window (0..pool-1) each maximum came from, for pool_dz.
 * The results equal gemm_nn followed by pool_fwd bit for bit. No aliasing
 * of y or arg with x, w, bias. Only where conv_pool_fits(f, pool, act).
 */
struct xo_cpu_net_conv_pool {
	const float *x;
	int64_t x_stride;
	int64_t samples, kc, ch, f, pool, pooled;
	const float *w, *bias;
	int act;
	float *y;
	int32_t *arg;
	int64_t y_stride;
};

/*
 * A conv1d without padding, any stride and dilation, read in place (no
 * im2col copy), for samples one after the other ("direct" convolution):
 *   x: sample n's row r at x + n * x_stride + r * ldx; output row o, tap q
 *      reads the ch floats of input row o * s + q * dil, for o in [0, out),
 *      q in [0, ks): at most (out - 1) * s + (ks - 1) * dil + 1 rows.
 *   w: [ks * ch][np], np = f rounded up to the vector width, columns f..np-1
 *      zero; bias [np] or NULL.
 *   act: linear or relu.
 *   y: NULL, or sample n's row o at y + n * y_stride + o * ldy: f floats of
 *      act(bias + sum over (q, c) of x[o * s + q * dil][c] * w[q * ch + c]),
 *      the terms in (q, c) order in one FMA chain, as gemm_nn over the im2col
 *      rows, so the results equal im2col + gemm_nn bit for bit.
 *   gap: NULL, or sample n's f floats at gap + n * gap_stride: the mean of
 *      the out rows act(...) (global_average_pooling1d fused: the first row,
 *      plus the others in row order in float, divided by out), tile_gap's
 *      arithmetic bit for bit.
 * Also the input gradient of a stride-1 valid conv1d: x = its dz padded with
 * (ks - 1) * dil zero rows before and after each sample, w = its kernel
 * with the taps reversed and transposed ([ks * filters][in_ch] padded),
 * out = its input rows. Nothing else written; y and gap alias nothing.
 */
struct xo_cpu_net_conv {
	const float *x;
	int64_t x_stride, ldx;
	int64_t samples, out, s, dil, ks, ch;
	const float *w, *bias;
	int64_t f, np;
	int act;
	float *y;
	int64_t y_stride, ldy;
	float *gap;
	int64_t gap_stride;
};

/*
 * The weight gradient of a direct conv1d (geometry as struct
 * xo_cpu_net_conv): d[q * ch + c][0:np] += sum over samples n and rows o in
 * order of x[n][o * s + q * dil][c] * z[n][o][0:np], z sample n's row o at
 * z + n * z_stride + o * np (np a multiple of the vector width, columns past
 * the filters zero). Per element one FMA chain from 0 over the rows, then
 * added to d: gemm_tn over the im2col rows, bit for bit. No aliasing of d.
 */
struct xo_cpu_net_conv_dw {
	const float *x;
	int64_t x_stride, ldx;
	int64_t samples, out, s, dil, ks, ch;
	const float *z;
	int64_t z_stride, np;
	float *d;
};

struct xo_cpu_net_kernels {
	bool (*conv_pool_fits)(int64_t f, int64_t pool, int act);
	void (*conv_pool)(const struct xo_cpu_net_conv_pool *a);
	/* the direct conv1d (struct xo_cpu_net_conv) and its weight gradient */
	void (*conv)(const struct xo_cpu_net_conv *a);
	void (*conv_dw)(const struct xo_cpu_net_conv_dw *a);
	/*
	 * global_average_pooling1d's backward fused with the activation's of the
	 * conv before it: for samples n in [0, cnt), rows o in [0, len), dz row
	 * n * z_stride + o * np gets act'(y) * (g[n][c] / len) for c < f (y
	 * sample n's row o at y + n * len * f + o * f, g sample n at g + n * f),
	 * +0 for c in [f, np): the GAP op's dy / len then relu_bwd, bit for bit.
	 * act linear or relu.
	 */
	void (*gap_dz)(const float *y, const float *g, float *dz, int64_t cnt, int64_t len,
	               int64_t f, int64_t np, int64_t z_stride, int act);
	/*
	 * The backward pass of a conv_pool up to the convolution's
	 * pre-activation gradient: for rows r in [0, rows) of y, arg and g
	 * ([rows][f], f a multiple of the vector width; g = d loss / d y),
	 * dz [rows * pool][f] gets, in row r * pool + e, g where e == arg
	 * (and, for relu, y > 0), else +0: pool_bwd followed by relu_bwd, bit
	 * for bit. Every row of dz is written.
	 */
	void (*pool_dz)(const float *y, const int32_t *arg, const float *g, float *dz,
			int64_t rows, int64_t f, int64_t pool, int act);
};

extern const struct xo_cpu_net_kernels xo_cpu_net_kernels__scalar;
extern const struct xo_cpu_net_kernels xo_cpu_net_kernels__avx2;
extern const struct xo_cpu_net_kernels xo_cpu_net_kernels__avx512;

/* ---- the op kernels of the table ------------------------------------------- */

/* The backend's table (cpu_backend.c) is built from ops.def, as ref's and
 * cl's are: every op has xo_cpu_<op>_fwd, and xo_cpu_<op>_bwd when it has a
 * backward pass, defined in its family's file (cpu.c, cpu_pool.c, ...). An
 * op without its kernel does not link. */
#define XO_CPU_KERNEL_DECL(name, dir) \
	enum xo_status xo_cpu_##name##_##dir(struct xo_backend *be, const struct xo_op_args *a);
#define XO_CPU_BWD_DECL_1(name) XO_CPU_KERNEL_DECL(name, bwd)
#define XO_CPU_BWD_DECL_0(name)
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) \
	XO_CPU_KERNEL_DECL(name, fwd) XO_CPU_BWD_DECL_##has_bwd(name)
#include "xo/ops.def"
#undef XO_OP
#undef XO_CPU_BWD_DECL_0
#undef XO_CPU_BWD_DECL_1

/* A table entry whose kernel is a family's shared wrapper (fn(be, a)). */
#define XO_CPU_ENTRY(name, dir, fn)                                                         \
	enum xo_status xo_cpu_##name##_##dir(struct xo_backend *be, const struct xo_op_args *a) \
	{                                                                                   \
		return fn(be, a);                                                           \
	}

/* Backend lifetime and host memory (cpu.c), the table's non-op entries. */
enum xo_status xo_cpu_init(struct xo_backend *be, const char *spec);
void xo_cpu_free(struct xo_backend *be);
enum xo_status xo_cpu_alloc(struct xo_backend *be, struct xo_tensor *t);
void xo_cpu_release(struct xo_backend *be, struct xo_tensor *t);

/* The backend's net hooks (struct xo_backend_iface, xo/backend.h). */
bool xo_cpu_net_fits(struct xo_backend *be, const struct xo_net *net);
enum xo_status xo_cpu_net_forward(struct xo_backend *be, const struct xo_net *net);
enum xo_status xo_cpu_net_train_step(struct xo_backend *be, const struct xo_net *net);
/* Threads for work of macs multiply-adds over items independent parts: 1
 * below the hand-off threshold, else at most items (cpu.c's rule). */
int xo_cpu_threads_for(const struct xo_cpu_ctx *c, int64_t macs, int64_t items);
/* Grows the context's shared scratch to shared floats and the first nt
 * per-thread buffers to per_thread floats each (grow-only, 64-byte
 * aligned). */
enum xo_status xo_cpu_scratch_reserve(struct xo_cpu_ctx *c, int64_t shared, int64_t per_thread,
				      int nt);
/* Row x's max-shifted log-sum-exp in double, m + log(sum exp(x - m)), m
 * the row's maximum (a NaN anywhere: NaN; +Inf: Inf - Inf, NaN, as Keras's
 * log_softmax): the cross-entropies from logits (cpu.c, cpu_loss.c). */
double xo_cpu_row_lse(const float *x, int64_t ch);
/* sum t log q of one row of categorical cross-entropy (Keras 3 on
 * probabilities: q = p / row sum clipped to [1e-7f, 1 - 1e-7], in double),
 * as the op computes it (cpu.c). */
double xo_cpu_ce_row(const float *pr, const float *tr, int64_t ch);
/* The clip's gradient weight of a q Keras clips to [1e-7f, (float)(1 -
 * 1e-7)]: 1 inside, 1/2 at a bound exactly (JAX's max and min split a tie),
 * 0 outside; NaN keeps 1 (reference/ref_loss.c, clip_weight). */
static inline double xo_cpu_clip_weight(double q)
{
	const double lo = (double)1e-7f, hi = (double)(float)(1.0 - 1e-7);

	if (q < lo || q > hi)
		return 0.0;
	return q == lo || q == hi ? 0.5 : 1.0;
}
/* The fused softmax+CE gradient of one row through Keras's clip, as the
 * reference: d[c] = (p[c] W - w_c t[c]) * inv_n with w_c the clip weight of
 * q_c = p[c] / row sum in float32 and W = sum w_c t[c]; a one-hot row inside
 * the clip is (p - t) * inv_n bit for bit. Shared by the op (cpu.c) and the
 * fused path (cpu_net.c). */
void xo_cpu_ce_bwd_row(const float *pr, const float *tr, int64_t ch, double inv_n, float *d);
/*
 * The merge op's elementwise modes (ops.def) over n floats, the one
 * arithmetic of the op kernel (cpu_merge.c) and the fused path
 * (cpu_net.c): forward y[k] = mode(a[k], b[k]), Maximum and Minimum NaN
 * when either input is; backward d[k], the gradient of input w (0: a,
 * 1: b) from dy. y may be a or b (each element is read before it is
 * written).
 */
void xo_cpu_merge_values(enum xo_merge mode, const float *a, const float *b, float *y, int64_t n);
void xo_cpu_merge_grads(enum xo_merge mode, int w, const float *a, const float *b,
                      const float *dy, float *d, int64_t n);
/* Concatenate on the last axis over rows, the op kernel's and the fused
 * path's copies: forward y[r] = a[r] (ca floats) then b[r] (cb floats);
 * backward d[r], input w's part of dy[r] (w 0: its first ca floats, 1: the
 * cb after them). */
void xo_cpu_concat_rows(const float *a, const float *b, float *y, int64_t rows, int64_t ca,
                        int64_t cb);
void xo_cpu_concat_grads(int w, const float *dy, float *d, int64_t rows, int64_t ca, int64_t cb);

/* v as Keras's float32 arithmetic holds it where that overflows: +-Inf from
 * the rounding midpoint above FLT_MAX on, v below (the losses sum in double
 * for accuracy, and are Inf or NaN where Keras's float32 sums are; the
 * reference's rule, reference/ref_loss.c). */
static inline double xo_cpu_f32_sat(double v)
{
	return __builtin_fabs(v) >= 0x1.ffffffp+127 ? __builtin_copysign(__builtin_inf(), v) : v;
}
/* Index of the first maximum of r[0..n) under `>`, as the accuracy op. */
int64_t xo_cpu_argmax_row(const float *r, int64_t n);
/* An error (XO_EINVAL, "gather: index[i]=v outside 0..rows-1") for the first
 * of idx[0..n) outside [0, rows), as the gather op reports it. */
enum xo_status xo_cpu_index_check(const int32_t *idx, int64_t n, int64_t rows);
/* Packs kernel w [kc][f] into wp [kc][fp] and bias b [f] into bp [fp], zero
 * padded (b NULL: bp untouched). */
void xo_cpu_pack(const float *w, const float *b, int64_t kc, int64_t f, int64_t fp, float *wp,
		 float *bp);
/* Packs kernel w [kc][f] transposed into wt [f][kcp], zero padded. */
void xo_cpu_pack_t(const float *w, int64_t kc, int64_t f, int64_t kcp, float *wt);
/* dst [rows][f] = the sum, in thread order, of the first nt per-thread
 * buffers' [rows][fp] blocks at float offset off. */
void xo_cpu_parts_sum(const struct xo_cpu_ctx *c, int nt, int64_t off, int64_t rows, int64_t f,
		      int64_t fp, float *dst);
/* dz [rows][fp] (zero padded) = d act(y) * dy for y, dy [rows][f]; softmax
 * per row in double. */
void xo_cpu_act_dz(const struct xo_cpu_kernels *k, int act, const float *y, const float *dy,
		   float *dz, int64_t rows, int64_t f, int64_t fp);
/* Geometry of an im2col: samples x_stride floats apart, each len rows of ch
 * floats; out output rows of ks taps (stride s, dilation dil, padding pad). */
struct xo_cpu_im2col {
	int64_t x_stride, len, ch, out, ks, s, dil, pad;
};
/* col [cnt * out][ks * ch] from cnt samples at x: tap q of output row o is
 * input row o * s + q * dil - pad, zeros outside [0, len). */
void xo_cpu_im2col(const struct xo_cpu_im2col *g, const float *x, int64_t cnt, float *col);

#endif /* XO_KERNELS_CPU_H */
