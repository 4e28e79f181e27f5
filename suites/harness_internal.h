/*
 * harness_internal.h - what the harness's files share (harness.c the case's
 * run, harness_fill.c the inputs, harness_rnn.c and harness_bounds.c the
 * tolerances, harness_zeros.c the structural zeros, harness_shapes.c the
 * shapes-file lines): the guard constants, the derived ulp bounds every
 * family's tolerance is built from, the case's host data and the small
 * helpers more than one of them reads. Not for use outside suites/harness*.
 *
 * Notation: u = 2^-24 (unit roundoff of float32); "ulp(v)" is the spacing of
 * floats at |v|, so a relative error e*u is at most e ulps (ulp(v) >= u*|v|).
 * Relative errors of the OpenCL C 1.2 single-precision builtins (section
 * 7.4, table 7.1): exp, log, sqrt <= 3 ulp, x/y <= 2.5 ulp, + - * correctly
 * rounded (0.5 ulp); 1 ulp <= 2u relative, so exp is 6u, x/y 5u, +-* u.
 */
#ifndef XO_HARNESS_INTERNAL_H
#define XO_HARNESS_INTERNAL_H

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define U         (0x1p-24)   /* unit roundoff of float32 */
#define GUARD     64          /* guard elements before and after every dst */
#define CANARY    0x7fc0deadu /* guard zone pattern: a quiet NaN with a payload */
#define POISON    0xffc0bad0u /* dst pre-fill: a negative NaN no kernel computes */
#define MAG_UNSET (-1.0f)     /* mag[] pre-fill: ref did not provide it */
/* Absolute floor of every bound: results below the normal range may be
 * flushed to zero (OpenCL 1.2 allows it for float). */
#define TINY ((double)FLT_MIN)

/*
 * C_ACC: the constant c of the accumulation bound c * K * u * magnitude.
 * Higham (Accuracy and Stability, 3.1): any order of summing K products, with
 * or without FMA, errs by at most gamma_K * sum|a_k b_k|, gamma_K = K u / (1 -
 * K u) < 1.01 K u for K u < 0.01. The reference adds its own final rounding
 * (<= u |y| <= u * magnitude). So 1.01 K + 1 <= 2 K for K >= 1: c = 2.
 */
#define C_ACC 2.0

/*
 * Ulps of the transcendental ops (relative error in units of u, which bounds
 * the error in ulps of the reference result):
 *
 * sigmoid fwd, y = 1 / (1 + exp(-x)): exp 6u; 1 + e keeps that relative
 *   error (e / (1 + e) <= 1) and adds its rounding u; the division adds 5u;
 *   the reference's rounding u: 6 + 1 + 5 + 1 = 13.
 * sigmoid bwd, dx = dy * y * (1 - y): three correctly rounded operations and
 *   the reference's rounding: 4.
 * softmax fwd, y_i = exp(x_i - m) / sum_j exp(x_j - m), m the row maximum,
 *   R = max - min of the row, n = row length: x_i - m errs by u*R absolute,
 *   i.e. relative u*R in exp; exp 6u: numerator R + 6. The sum of n positive
 *   terms: R + 6 + (n - 1). Division 5, reference 1: 2R + n + 16 + 1
 *   (softmax_ulps below).
 * categorical_crossentropy fwd (Keras 3, as ref): q = p / sum(p row),
 *   clipped to [1e-7, 1 - 1e-7], loss = -(1/n) sum t log q over N = n*ch
 *   terms of one sign: log 6u, product u, summation N - 1, division by n 5u
 *   (x/y's 2.5 ulp; a multiply by a correctly rounded 1/n is 2u, but 1.0f/n
 *   is itself a 2.5 ulp division, so 5u covers every form), reference u:
 *   N + 12 ulps of the loss. The row
 *   normalisation (ch - 1 additions, a 2.5 ulp division) errs q by (ch + 4)u
 *   relative, i.e. log q by (ch + 4)u absolute: plus (ch + 4) u sum(t) / n.
 * categorical_crossentropy bwd, dz = (p W - w t) / n (w the clip's weight,
 *   W = sum w t): with one-hot targets (the harness's fill) w and W are 0,
 *   1/2 or 1 and both products exact, so subtraction u, division 5u (x/y's
 *   2.5 ulp; cl/kernels/loss.cl divides), reference u: 7. The weights are
 *   decided on the same float values: fill_probs keeps every q far from the
 *   bounds, and the fill's clip rows sum to exactly 1 in float32, so q = p
 *   exactly on every backend (harness_fill.c, clip_row). Soft targets would
 *   add W's (ch - 1) u of |p W| and are not filled.
 * adam: see tol_adam.
 */
#define ULP_SIGMOID_FWD 13.0
#define ULP_SIGMOID_BWD 4.0
#define ULP_CE_BWD      7.0

/*
 * The separate activations (ops.def: tanh, elu, gelu, softplus), in the same
 * units; OpenCL C 1.2 table 7.1 gives tanh 5 ulp, expm1 3 ulp, erfc 16 ulp,
 * exp 3 ulp, log1p 2 ulp (glibc's float functions, which the cpu backend
 * calls, are within those: libm-test-ulps lists tanhf 2, expm1f 1, erfcf 3,
 * expf 1, log1pf 1 on x86-64).
 * tanh fwd: tanh 10u, reference u: 11.
 * tanh bwd, dy (1 - y)(1 + y): each factor is exact or one rounding (one of
 *   the two is exact by Sterbenz when |y| >= 1/2, both round once at most
 *   otherwise), two products, reference: 2 + 2 + 1 = 5.
 * elu fwd: x > 0 exact; else expm1 6u, reference u: 7; alpha expm1(x) with
 *   alpha != 1 one more product u: 8 (ULP_ELU_ALPHA).
 * elu bwd from x, dy (alpha exp(x)) for x <= 0 (dy for x > 0, exact): exp
 *   6u, the product by alpha u (exact for alpha 1), the product by dy u,
 *   reference u: 9, any alpha.
 * gelu fwd, x/2 erfc(v), v = -x / sqrt 2 computed as -x * c: c and the
 *   product round, 2u relative in v; erfc's condition |v erfc'(v) / erfc(v)|
 *   is <= 0.49 for v <= 0 and <= 2 v^2 + 1 for v > 0 (erfc(v) >= 2 e^-v^2 /
 *   (sqrt(pi) (v + sqrt(v^2 + 2))), Abramowitz-Stegun 7.1.13), so v's error
 *   gives (2 v^2 + 1) 2u = (2 x^2 + 2)u; erfc 32u; x/2 exact; the product
 *   u; reference u: 2 x^2 + 36 (gelu_fwd_ulps).
 * gelu bwd, dy (Phi + x phi), Phi = erfc(v) / 2 as above (2 x^2 + 35)u
 *   relative; x phi = x c' exp(-x x / 2): x x rounds (u relative in the
 *   exponent is x^2/2 u absolute, i.e. relative in exp), exp 6u, c' and two
 *   products 3u: (x^2 / 2 + 9)u; the sum u and the product by dy u, so with
 *   the reference's u, (2 x^2 + 38)u times the magnitude |dy| (|Phi| +
 *   |x phi|) that ref returns (the two terms cancel near x = -0.75, where a
 *   bound in ulps of dx would be unbounded) (gelu_bwd_factor).
 * softplus fwd, max(x, 0) + log1p(e), e = exp(-|x|): e 6u relative changes
 *   log1p(e) by e/(1 + e) 6u <= 6u log1p(e) (log1p(e) >= e / (1 + e));
 *   log1p 4u; the sum of two non-negative terms u; reference u: 12.
 * softplus bwd, dy / (1 + exp(-x)): sigmoid's 13 (with the reference's u)
 *   and one more product: 14.
 */
#define ULP_TANH_FWD     11.0
#define ULP_TANH_BWD     5.0
#define ULP_ELU_FWD      7.0
#define ULP_ELU_BWD      9.0
#define ULP_ELU_ALPHA    1.0
#define ULP_SOFTPLUS_FWD 12.0
#define ULP_SOFTPLUS_BWD 14.0

/*
 * hard_sigmoid fwd, relu6(x + 3) / 6: x + 3 rounds (u; exact for x in [-6,
 *   -1.5] by Sterbenz, so near the lower kink), the clamps are exact, the
 *   division 5u (OpenCL's 2.5 ulp x/y), reference u: 7.
 * hard_sigmoid bwd, dy / 6 inside (-3, 3): the division 5u, reference u: 6.
 */
#define ULP_HARD_SIGMOID_FWD 7.0
#define ULP_HARD_SIGMOID_BWD 6.0

/*
 * silu fwd, e = exp(-|x|) (6u; -|x| exact), d = 1 + e (u): x >= 0, x / d,
 *   whose relative sensitivity to e is e / (1 + e) <= 1/2; x < 0, x e / d
 *   (sensitivity 1 / (1 + e) <= 1) and one more product u; the division 5u,
 *   reference u: 6 + 1 + 1 + 5 + 1 = 14.
 * silu bwd, dy (s + x s c), s and c = 1 - s each a quotient of 1 or e by d:
 *   6 + 1 + 5 = 12u relative; x s c two more products: 26u; the sum u, the
 *   product by dy u, reference u: 29u times the magnitude |dy| (|s| +
 *   |x s c|) (the terms cancel near x = -1.28, silu's minimum).
 */
#define ULP_SILU_FWD    14.0
#define ULP_SILU_FACTOR 29.0

/*
 * log_softmax, per row of n, absolute errors (y is a difference, near 0 for
 * the row's largest inputs, so a bound in ulps of y would be unbounded):
 * fwd y_j = d_j - L, d_j = x_j - m (m the row maximum, exact), R = max - min
 *   of the row, L = log S >= 0, S = sum_k exp(d_k) >= 1: d_j rounds (u |d_j|);
 *   exp(d_k) errs by |d_k| u <= R u from its argument and 6u itself; the sum
 *   of n positive terms adds (n - 1)u relative, so S is within (R + n + 5)u
 *   relative, which log turns into as much absolute in L, plus log's own 6u L;
 *   the subtraction and the reference round once each (u |y| each):
 *   (|d_j| + R + n + 5 + 6 L + 2 |y|) u (log_softmax_fwd_abs), times C_ACC
 *   for the higher-order terms, as every accumulation here.
 * bwd dx_j = dy_j - exp(y_j) S, S = sum_k dy_k: the sum errs by (n - 1)u
 *   sum|dy_k|, exp 6u, the product u, the subtraction and the reference u
 *   |dx| each: within (n + 8)u times the magnitude |dy_j| + exp(y_j)
 *   sum|dy_k| that ref returns (ULP_LOG_SOFTMAX_BWD + n), times C_ACC.
 */
#define ULP_LOG_SOFTMAX_BWD 8.0

static inline double log_softmax_fwd_abs(double d, double range, int64_t n, double l, double y)
{
	return fabs(d) + range + (double)n + 5.0 + 6.0 * l + 2.0 * fabs(y);
}

static inline double gelu_fwd_ulps(float x)
{
	return 2.0 * (double)x * (double)x + 36.0;
}

static inline double gelu_bwd_factor(float x)
{
	return 2.0 * (double)x * (double)x + 38.0;
}

static inline double softmax_ulps(double range, int64_t n)
{
	return 2.0 * range + (double)n + 17.0;
}

static inline double ce_fwd_ulps(int64_t terms)
{
	return (double)terms + 12.0;
}

/* ---- the case's host data ------------------------------------------------ */

struct hcase {
	const struct xo_case *c;
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
	int64_t sn[XO_MAX_SRC], dn[XO_MAX_DST]; /* elements per slot, 0 = unused */
	float *src[XO_MAX_SRC];                 /* inputs (I32 slots hold int32 bits) */
	float *init[XO_MAX_DST];                /* in-place dst contents (adam), or NULL */
	float *ref[XO_MAX_DST];                 /* reference outputs */
	float *mag[XO_MAX_DST];                 /* accumulation magnitudes, or NULL */
	float *z;                               /* conv/dense pre-activation (linear run) */
	float *got[XO_MAX_DST];                 /* outputs of the backend under test */
	double *tol[XO_MAX_DST];                /* allowed |got - ref|; 0 = bit-exact */
	int64_t structural[XO_MAX_DST];         /* zeros the op must produce (mistrust) */
	float amp;                              /* integer fill amplitude (exact mode) */
};

static inline uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static inline float u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static inline int64_t slot_count(const struct xo_slot_shape *s)
{
	int64_t n = 1;

	if (!s->ndim)
		return 0;
	for (int i = 0; i < s->ndim; i++)
		n *= s->dim[i];
	return n;
}

/* Uniform [0, 1) for element i of fill stream `stream` of this case. */
static inline float unif(const struct hcase *h, uint32_t stream, uint64_t i)
{
	uint32_t a = stream | (uint32_t)h->c->mode << 8 | (uint32_t)h->c->dir << 12;

	return xo_philox_uniform(h->c->seed, a, (uint32_t)h->c->op + 0x7800u, i);
}

static inline float real_in(const struct hcase *h, uint32_t stream, uint64_t i, float lo, float hi)
{
	return lo + (hi - lo) * unif(h, stream, i);
}

/* Window o of max_pooling1d: [*lo, *hi) of the input, clipped. */
static inline void pool_window(const struct xo_params *p, int64_t o, int64_t pad, int64_t *lo,
                               int64_t *hi)
{
	int64_t start = o * xo_pool1d_stride(p) - pad;

	*lo = start < 0 ? 0 : start;
	*hi = start + p->pool_size > p->len ? p->len : start + p->pool_size;
}

/* Window (oh, ow) of a windowed 2-D pooling with geometry g: in-bounds rows
 * [r[0], r[1]) and columns [r[2], r[3]), each axis by xo_pool1d_window. */
static inline int64_t pool2d_window(const struct xo_params *p, const struct xo_pool2d_geom *g,
                                    int64_t oh, int64_t ow, int64_t r[4])
{
	struct xo_params wp = xo_params_width_axis(p);

	return xo_pool1d_window(p, oh, g->pad_h, &r[0], &r[1]) *
	       xo_pool1d_window(&wp, ow, g->pad_w, &r[2], &r[3]);
}

static inline bool has_activation(enum xo_op op)
{
	return op == XO_OP_conv1d || op == XO_OP_conv2d || op == XO_OP_dense ||
	       op == XO_OP_depthwise_conv2d || op == XO_OP_conv2d_transpose;
}

static inline double ulp_of(float v)
{
	float a = fabsf(v);

	if (!isfinite(a))
		return 0.0;
	if (a == FLT_MAX)
		return 0x1p104;
	return (double)nextafterf(a, INFINITY) - (double)a;
}

/* ---- across the harness's files ------------------------------------------ */

/* harness_fill.c: the case's inputs and in-place dst contents, per its mode. */
enum xo_status xo_hcase_fill(struct hcase *h);
/* harness_fill.c: NaN and Inf planted in the inputs (nonfinite mode). */
void xo_hcase_plant_nonfinite(struct hcase *h);
/* harness_fill.c: the integer amplitude of exact fills (partial sums below 2^24). */
enum xo_status xo_hcase_exact_amplitude(const struct xo_case *c, float *amp);
/* harness_fill.c: rows of softmax probabilities over the last dim (n). */
void xo_hcase_fill_probs(const struct hcase *h, uint32_t stream, float *y, int64_t count,
                         int64_t n);
/* harness_rnn.c: the recurrent ops' inputs. */
void xo_hcase_fill_rnn(struct hcase *h);
/* simple_rnn, lstm, gru with mask_zero: whether input step t of sample n is masked */
bool xo_hcase_rnn_masked(const struct hcase *h, int64_t n, int64_t t);
/* harness_zeros.c: whether dst slot's reference is uninformative (why). */
bool xo_hcase_mistrusted(struct hcase *h, int slot, char *why, size_t size);
/* harness_zeros.c: zeros the op must produce in dst slot. */
int64_t xo_hcase_structural_zeros(const struct hcase *h, int slot);
/* harness.c: one unguarded run on be (the reference, linear and magnitude runs). */
enum xo_status xo_hcase_run_plain(struct xo_backend *be, enum xo_op op, enum xo_dir dir,
                                  const struct xo_params *p, float *const src[XO_MAX_SRC],
                                  float *const init[XO_MAX_DST], float *const out[XO_MAX_DST],
                                  float *const mag[XO_MAX_DST]);
/* harness_bounds.c: tol[] of every dst slot, derived per op family. */
enum xo_status xo_hcase_set_tolerances(struct hcase *h, struct xo_backend *ref);
/* harness_rnn.c: the recurrent ops' bounds, forward and backward. */
void xo_hcase_tol_rnn_fwd(struct hcase *h);
void xo_hcase_tol_rnn_bwd(struct hcase *h);

#endif
