/*
 * harness.c - the comparison harness (DESIGN section 5): deterministic fills,
 * the reference run, the guarded run of the backend under test, and every
 * tolerance, each derived next to its op. Nothing else in the tree compares
 * a backend's output with ref; the suites and `xo check` call xo_case_run.
 *
 * Notation: u = 2^-24 (unit roundoff of float32); "ulp(v)" is the spacing of
 * floats at |v|, so a relative error e*u is at most e ulps (ulp(v) >= u*|v|).
 * Relative errors of the OpenCL C 1.2 single-precision builtins (section
 * 7.4, table 7.1): exp, log, sqrt <= 3 ulp, x/y <= 2.5 ulp, + - * correctly
 * rounded (0.5 ulp); 1 ulp <= 2u relative, so exp is 6u, x/y 5u, +-* u.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "../kernels/cpu.h"

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
 * categorical_crossentropy bwd, dz = (p - t) / n: subtraction u, division
 *   5u (x/y's 2.5 ulp; cl/kernels/loss.cl divides), reference u: 7.
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
 * elu fwd: x > 0 exact; else expm1 6u, reference u: 7.
 * elu bwd, dy (y + 1): one addition, one product, reference: 3.
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
#define ULP_ELU_BWD      3.0
#define ULP_SOFTPLUS_FWD 12.0
#define ULP_SOFTPLUS_BWD 14.0

static double gelu_fwd_ulps(float x)
{
	return 2.0 * (double)x * (double)x + 36.0;
}

static double gelu_bwd_factor(float x)
{
	return 2.0 * (double)x * (double)x + 38.0;
}

static double softmax_ulps(double range, int64_t n)
{
	return 2.0 * range + (double)n + 17.0;
}

static double ce_fwd_ulps(int64_t terms)
{
	return (double)terms + 12.0;
}

/* ---- names --------------------------------------------------------------- */

static const char *const hmode_names[XO_HMODE_COUNT] = {"exact", "real", "nonfinite"};

const char *xo_hmode_name(enum xo_hmode m)
{
	XO_ASSERT((unsigned)m < XO_HMODE_COUNT);
	return hmode_names[m];
}

enum xo_hmode xo_hmode_from_name(const char *name)
{
	for (int i = 0; i < XO_HMODE_COUNT; i++)
		if (!strcmp(name, hmode_names[i]))
			return (enum xo_hmode)i;
	return XO_HMODE_COUNT;
}

static const char *const fail_names[XO_FAIL_COUNT] = {
    "passed",          "backend error",       "uninformative case",  "guard zone written",
    "source modified", "element not written", "non-finite mismatch", "value mismatch",
};

const char *xo_fail_name(enum xo_fail f)
{
	XO_ASSERT((unsigned)f < XO_FAIL_COUNT);
	return fail_names[f];
}

static bool is_elementwise(enum xo_op op)
{
	return op == XO_OP_relu || op == XO_OP_sigmoid || op == XO_OP_tanh || op == XO_OP_elu ||
	       op == XO_OP_gelu || op == XO_OP_softplus || op == XO_OP_dropout ||
	       op == XO_OP_flatten || op == XO_OP_max_pooling1d || op == XO_OP_average_pooling1d ||
	       op == XO_OP_global_average_pooling1d || op == XO_OP_global_max_pooling1d ||
	       op == XO_OP_max_pooling2d || op == XO_OP_average_pooling2d ||
	       op == XO_OP_global_average_pooling2d || op == XO_OP_global_max_pooling2d;
}

static bool has_activation(enum xo_op op)
{
	return op == XO_OP_conv1d || op == XO_OP_conv2d || op == XO_OP_dense;
}

static bool is_avg_pool(enum xo_op op)
{
	return op == XO_OP_average_pooling1d || op == XO_OP_global_average_pooling1d ||
	       op == XO_OP_average_pooling2d || op == XO_OP_global_average_pooling2d;
}

/* Window (oh, ow) of a windowed 2-D pooling with geometry g: in-bounds rows
 * [r[0], r[1]) and columns [r[2], r[3]), each axis by xo_pool1d_window. */
static int64_t pool2d_window(const struct xo_params *p, const struct xo_pool2d_geom *g,
			     int64_t oh, int64_t ow, int64_t r[4])
{
	struct xo_params wp = xo_params_width_axis(p);

	return xo_pool1d_window(p, oh, g->pad_h, &r[0], &r[1]) *
	       xo_pool1d_window(&wp, ow, g->pad_w, &r[2], &r[3]);
}

/* Ops whose tolerances use ref's magnitudes. */
/* ops whose bound is relative to ref's magnitude: the activations of
 * conv1d/dense, average pooling's sum, and gelu bwd (its two terms) */
static bool needs_mag(enum xo_op op)
{
	return has_activation(op) || is_avg_pool(op) || op == XO_OP_gelu;
}

static bool pow2(int64_t v)
{
	return v > 0 && (v & (v - 1)) == 0;
}

/* The average poolings are exact on integer fills only where every divisor
 * (the window counts, or len) is a power of 2: then the quotients are
 * dyadic and every sum of them is exact in float32; other divisors round
 * (and OpenCL's division is 2.5 ulp, DESIGN section 5). */
static bool avg_divisors_pow2(enum xo_op op, const struct xo_params *p)
{
	int64_t out, pad, lo, hi;

	if (op == XO_OP_global_average_pooling1d)
		return pow2(p->len);
	if (op == XO_OP_global_average_pooling2d)
		return pow2(p->len) && pow2(p->width);
	if (op == XO_OP_average_pooling2d) {
		struct xo_pool2d_geom g;
		int64_t r[4];

		if (xo_pool2d_geometry_of(op, p, &g))
			return false;
		for (int64_t oh = 0; oh < g.out_h; oh++)
			for (int64_t ow = 0; ow < g.out_w; ow++)
				if (!pow2(pool2d_window(p, &g, oh, ow, r)))
					return false;
		return true;
	}
	if (xo_pool1d_geometry_of(op, p, &out, &pad))
		return false;
	for (int64_t o = 0; o < out; o++)
		if (!pow2(xo_pool1d_window(p, o, pad, &lo, &hi)))
			return false;
	return true;
}

bool xo_hmode_applies(enum xo_op op, enum xo_dir dir, const struct xo_params *p, enum xo_hmode m)
{
	switch (m) {
	case XO_HMODE_EXACT:
		if (xo_op_cmp(op) != XO_CMP_EXACT)
			return false;
		if (is_avg_pool(op))
			return avg_divisors_pow2(op, p);
		return !has_activation(op) || p->activation == XO_ACTIVATION_LINEAR ||
		       p->activation == XO_ACTIVATION_RELU;
	case XO_HMODE_REAL:
		return true;
	case XO_HMODE_NONFINITE:
		return dir == XO_DIR_FWD && (is_elementwise(op) || xo_op_is_rnn(op));
	case XO_HMODE_COUNT:
		break;
	}
	return false;
}

/* dst slots read and updated in place (their inputs in init[]): adam's w, m,
 * v; batch_normalization fwd's moving_mean and moving_variance. */
static bool has_state(const struct xo_case *c, int i)
{
	return c->op == XO_OP_adam || c->op == XO_OP_sgd || c->op == XO_OP_rmsprop ||
	       (c->op == XO_OP_batch_normalization && c->dir == XO_DIR_FWD && i > 0);
}

/* Slot names for reports, from the slot conventions of ops.def. */
static const char *slot_name(enum xo_op op, enum xo_dir dir, bool dst, int i)
{
	static const char *const conv_src[2][4] = {{"x", "w", "b", "?"}, {"x", "w", "y", "dy"}};
	static const char *const conv_dst[2][3] = {{"y", "?", "?"}, {"dx", "dw", "db"}};

	switch (op) {
	case XO_OP_conv1d:
	case XO_OP_conv2d:
	case XO_OP_dense:
		return dst ? conv_dst[dir][i] : conv_src[dir][i];
	case XO_OP_max_pooling1d:
	case XO_OP_global_max_pooling1d:
	case XO_OP_max_pooling2d:
	case XO_OP_global_max_pooling2d:
		return dst ? (dir ? "dx" : "y") : (i ? "dy" : "x");
	case XO_OP_average_pooling1d:
	case XO_OP_global_average_pooling1d:
	case XO_OP_average_pooling2d:
	case XO_OP_global_average_pooling2d:
		return dst ? (dir ? "dx" : "y") : (dir ? "dy" : "x");
	case XO_OP_relu:
	case XO_OP_sigmoid:
	case XO_OP_softmax:
	case XO_OP_tanh:
	case XO_OP_elu:
		return dst ? (dir ? "dx" : "y") : (dir ? (i ? "dy" : "y") : "x");
	case XO_OP_gelu: /* bwd from x */
	case XO_OP_softplus:
		return dst ? (dir ? "dx" : "y") : (i ? "dy" : "x");
	case XO_OP_flatten:
	case XO_OP_dropout:
		return dst ? (dir ? "dx" : "y") : (dir ? "dy" : "x");
	case XO_OP_categorical_crossentropy:
		return dst ? (dir ? "dz" : "loss") : (i ? "t" : "p");
	case XO_OP_adam:
		return dst ? (const char *[]){"w", "m", "v"}[i] : "g";
	case XO_OP_binary_crossentropy:
	case XO_OP_mean_squared_error:
		return dst ? (dir ? "dp" : "loss") : (i ? "t" : "p");
	case XO_OP_binary_accuracy:
	case XO_OP_sparse_categorical_accuracy:
		return dst ? "correct" : (i ? "t" : "p");
	case XO_OP_sparse_categorical_crossentropy:
		return dst ? (dir ? "dp" : "loss") : (i ? "t" : "p");
	case XO_OP_sgd:
		return dst ? (const char *[]){"w", "m"}[i] : "g";
	case XO_OP_rmsprop:
		return dst ? (const char *[]){"w", "v", "mom"}[i] : "g";
	case XO_OP_accuracy:
		return dst ? (i ? "correct" : "idx") : (i ? "t" : "p");
	case XO_OP_gather:
		return dst ? "y" : (i ? "index" : "x");
	case XO_OP_embedding:
		if (dir == XO_DIR_FWD)
			return dst ? "y" : (i ? "table" : "ids");
		return dst ? "dtable" : (i ? "dy" : "ids");
	case XO_OP_batch_normalization:
		if (dir == XO_DIR_FWD)
			return dst ? (const char *[]){"y", "moving_mean", "moving_variance"}[i]
			           : (const char *[]){"x", "gamma", "beta", "?"}[i];
		return dst ? (const char *[]){"dx", "dgamma", "dbeta"}[i]
		           : (const char *[]){"x", "gamma", "dy", "?"}[i];
	case XO_OP_simple_rnn:
	case XO_OP_lstm:
	case XO_OP_gru:
		if (dir == XO_DIR_FWD)
			return dst ? (const char *[]){"y", "ws", "?", "?"}[i]
			           : (const char *[]){"x", "kernel", "recurrent_kernel", "bias",
			                              "?"}[i];
		return dst ? (const char *[]){"dx", "dkernel", "drecurrent_kernel", "dbias"}[i]
		           : (const char *[]){"x", "kernel", "recurrent_kernel", "ws", "dy"}[i];
	case XO_OP_COUNT:
		break;
	}
	return "?";
}

/* The repro line names every value as Keras would read it: the stride the
 * op uses (strides=0 is the struct's "default" marker, which Keras refuses)
 * and, for the cpu backend, the ISA level its kernels run at. */
void xo_case_repro(const struct xo_case *c, const char *backend, char *buf, size_t size)
{
	struct xo_params p = xo_params_resolved(c->op, &c->p);
	char params[512], isa[48] = "";

#ifdef XO_HAVE_CPU
	if (!strncmp(backend, "cpu", 3))
		snprintf(isa, sizeof(isa), "XO_CPU_ISA=%s ",
		         xo_cpu_kernels_for(xo_cpu_isa_detect())->isa);
#endif
	xo_params_format(c->op, c->dir, &p, params, sizeof(params));
	snprintf(buf, size,
	         "%sxo check --op %s --dir %s --mode %s --backend %s --seed %" PRIu64 " %s", isa,
	         xo_op_name(c->op), xo_dir_name(c->dir), xo_hmode_name(c->mode), backend, c->seed,
	         params);
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

static uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static int64_t slot_count(const struct xo_slot_shape *s)
{
	int64_t n = 1;

	if (!s->ndim)
		return 0;
	for (int i = 0; i < s->ndim; i++)
		n *= s->dim[i];
	return n;
}

/* Uniform [0, 1) for element i of fill stream `stream` of this case. */
static float unif(const struct hcase *h, uint32_t stream, uint64_t i)
{
	uint32_t a = stream | (uint32_t)h->c->mode << 8 | (uint32_t)h->c->dir << 12;

	return xo_philox_uniform(h->c->seed, a, (uint32_t)h->c->op + 0x7800u, i);
}

static float real_in(const struct hcase *h, uint32_t stream, uint64_t i, float lo, float hi)
{
	return lo + (hi - lo) * unif(h, stream, i);
}

/* Integer in [lo, hi]. */
static float int_in(const struct hcase *h, uint32_t stream, uint64_t i, int lo, int hi)
{
	int v = lo + (int)(unif(h, stream, i) * (float)(hi - lo + 1));

	return (float)(v > hi ? hi : v);
}

/* Nonzero integer in [lo, hi] (lo < 0 < hi). */
static float int_nz(const struct hcase *h, uint32_t stream, uint64_t i, int lo, int hi)
{
	float v = int_in(h, stream, i, lo, hi - 1);

	return v >= 0.0f ? v + 1.0f : v;
}

/* Rows of softmax probabilities over the last dim (n), from logits in [-2, 2). */
static void fill_probs(const struct hcase *h, uint32_t stream, float *y, int64_t count, int64_t n)
{
	for (int64_t r = 0; r < count / n; r++) {
		double sum = 0.0, e[4096];
		double *ex = n <= 4096 ? e : malloc(sizeof(double) * (size_t)n);

		XO_ASSERT(ex);
		for (int64_t j = 0; j < n; j++) {
			ex[j] = exp((double)real_in(h, stream, (uint64_t)(r * n + j), -2.0f, 2.0f));
			sum += ex[j];
		}
		for (int64_t j = 0; j < n; j++)
			y[r * n + j] = (float)(ex[j] / sum);
		if (ex != e)
			free(ex);
	}
}

/* One-hot targets; even rows take the first argmax of p (so accuracy counts
 * something), odd rows a random class. p may be NULL (all random). */
static void fill_onehot(const struct hcase *h, uint32_t stream, float *t, const float *p,
                        int64_t count, int64_t n)
{
	memset(t, 0, sizeof(float) * (size_t)count);
	for (int64_t r = 0; r < count / n; r++) {
		int64_t label = (int64_t)(unif(h, stream, (uint64_t)r) * (float)n);

		if (label >= n)
			label = n - 1;
		if (p && r % 2 == 0) {
			label = 0;
			for (int64_t j = 1; j < n; j++)
				if (p[r * n + j] > p[r * n + label])
					label = j;
		}
		t[r * n + label] = 1.0f;
	}
}

/* Integer class ids (int32 in the float slot's bytes), as fill_onehot: even
 * rows take the first argmax of p when p is given (informative accuracy). */
static void fill_labels(const struct hcase *h, uint32_t stream, float *t, const float *p,
                        int64_t rows, int64_t n)
{
	for (int64_t r = 0; r < rows; r++) {
		int32_t label = (int32_t)(unif(h, stream, (uint64_t)r) * (float)n);

		if (label >= n)
			label = (int32_t)n - 1;
		if (p && r % 2 == 0) {
			label = 0;
			for (int32_t j = 1; j < n; j++)
				if (p[r * n + j] > p[r * n + label])
					label = j;
		}
		memcpy(&t[r], &label, 4);
	}
}

/* The activation an activation op computes (tanh and elu: the ops whose
 * backward takes y). */
static enum xo_activation c_op_act(enum xo_op op)
{
	return op == XO_OP_tanh ? XO_ACTIVATION_TANH : XO_ACTIVATION_ELU;
}

/* The derivative factor's input y of an activation's backward pass. */
static void fill_act_y(const struct hcase *h, float *y, int64_t count, int64_t last,
                       enum xo_activation act, bool exact)
{
	for (int64_t i = 0; i < count; i++) {
		switch (act) {
		case XO_ACTIVATION_LINEAR:
			y[i] = exact ? int_nz(h, 2, (uint64_t)i, -4, 4)
			             : real_in(h, 2, (uint64_t)i, -1.0f, 1.0f);
			break;
		case XO_ACTIVATION_RELU:
			/* A fixed eighth of the outputs is clipped: d relu = 0 there. */
			if (i % 8 == 5)
				y[i] = 0.0f;
			else
				y[i] = exact ? int_in(h, 2, (uint64_t)i, 1, 4)
				             : real_in(h, 2, (uint64_t)i, 0.01f, 1.0f);
			break;
		case XO_ACTIVATION_SIGMOID:
			y[i] = real_in(h, 2, (uint64_t)i, 0.02f, 0.98f);
			break;
		case XO_ACTIVATION_SOFTMAX:
			break;
		case XO_ACTIVATION_TANH: /* the range of tanh, away from +-1 */
			y[i] = real_in(h, 2, (uint64_t)i, -0.98f, 0.98f);
			break;
		case XO_ACTIVATION_ELU: /* (-1, inf): a third on the linear side */
			y[i] = real_in(h, 2, (uint64_t)i, -0.98f, 1.0f);
			break;
		case XO_ACTIVATION_GELU: /* bwd from x: not used */
		case XO_ACTIVATION_SOFTPLUS:
			XO_ASSERT(!"fill_act_y: gelu and softplus take x");
		}
	}
	if (act == XO_ACTIVATION_SOFTMAX)
		fill_probs(h, 2, y, count, last);
}

/* Input i of slot s: small integers in exact mode, reals otherwise. */
static void fill_plain(const struct hcase *h, int s, bool nonzero, float lo, float hi)
{
	bool exact = h->c->mode == XO_HMODE_EXACT;
	int a = (int)h->amp;

	for (int64_t i = 0; i < h->sn[s]; i++) {
		if (!exact)
			h->src[s][i] = real_in(h, (uint32_t)s, (uint64_t)i, lo, hi);
		else if (nonzero)
			h->src[s][i] = int_nz(h, (uint32_t)s, (uint64_t)i, -a, a);
		else
			h->src[s][i] = int_in(h, (uint32_t)s, (uint64_t)i, -a, a);
	}
}

/* Longest exact accumulation of a conv1d/dense case (for the exact fills). */
static int64_t acc_len_max(const struct xo_case *c)
{
	const struct xo_params *p = &c->p;
	int64_t out = 1, pad, k = 0;

	if (c->op == XO_OP_conv1d) {
		if (xo_conv1d_geometry(p, &out, &pad))
			return 0;
		k = p->kernel_size * p->ch + 1;
		if (c->dir == XO_DIR_BWD) {
			k = p->kernel_size * p->filters;
			if (p->batch * out > k)
				k = p->batch * out;
		}
	} else if (c->op == XO_OP_conv2d) {
		int64_t ow, pt, pl, kw = xo_params_width_axis(p).kernel_size;

		if (xo_conv2d_geometry(p, &out, &ow, &pt, &pl))
			return 0;
		k = p->kernel_size * kw * p->ch + 1;
		if (c->dir == XO_DIR_BWD) {
			k = p->kernel_size * kw * p->filters;
			if (p->batch * out * ow > k)
				k = p->batch * out * ow;
		}
	} else if (c->op == XO_OP_dense) {
		k = c->dir == XO_DIR_FWD ? p->ch + 1 : (p->units > p->batch ? p->units : p->batch);
	}
	return k;
}

/* The integer amplitude of exact fills: every partial sum of K products of
 * integers up to amp, plus a bias, must stay below 2^24 to be exact in
 * float32. */
static enum xo_status exact_amplitude(const struct xo_case *c, float *amp)
{
	double k = (double)acc_len_max(c);

	*amp = 4.0f;
	if (c->mode != XO_HMODE_EXACT || !has_activation(c->op))
		return XO_OK;
	while (*amp >= 1.0f && k * *amp * *amp + *amp >= 0x1p24)
		*amp /= 2.0f;
	if (*amp < 1.0f)
		return xo_error(
		    XO_EINVAL,
		    "%s: exact mode impossible: %.0f accumulated terms exceed float32's "
		    "24 bits",
		    xo_op_name(c->op), k);
	return XO_OK;
}

/* ---- simple_rnn, lstm, gru: fills and derived bounds ----------------------------
 *
 * Fills (real mode; the ops are XO_CMP_ULP: every step has a transcendental
 * gate, so no fill makes them exact). x in [-1, 1]; kernel in [-1, 1] /
 * sqrt(ch); recurrent_kernel in [-1, 1] / units, so every column's
 * sum_k |U_kj| <= 1 (the contraction the bounds below rely on to grow
 * linearly, not geometrically, with len); bias in [-0.5, 0.5]. simple_rnn
 * with relu: x, kernel and bias skewed positive so that most states are
 * not clipped. bwd: ws rows in each block's range as the forward makes
 * them (gates in (0, 1), tanh outputs in (-1, 1), lstm's c in [-2, 2] with
 * act(c) = tanh(c)), dy in [-1, 1]; the backward is a function of these
 * sources alone (ops.def), consistent with a forward or not.
 */
static void fill_rnn(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	enum xo_op op = h->c->op;
	bool relu = p->activation == XO_ACTIVATION_RELU, bwd = h->c->dir == XO_DIR_BWD;
	float sw = 1.0f / sqrtf((float)p->ch), su = 1.0f / (float)p->units;
	int64_t u = p->units, S = xo_rnn_ws_blocks(op) * u;

	for (int64_t i = 0; i < h->sn[0]; i++)
		h->src[0][i] = real_in(h, 0, (uint64_t)i, relu ? -0.25f : -1.0f, 1.0f);
	for (int64_t i = 0; i < h->sn[1]; i++)
		h->src[1][i] = sw * real_in(h, 1, (uint64_t)i, relu ? -0.25f : -1.0f, 1.0f);
	for (int64_t i = 0; i < h->sn[2]; i++)
		h->src[2][i] = su * real_in(h, 2, (uint64_t)i, -1.0f, 1.0f);
	if (!bwd) {
		for (int64_t i = 0; i < h->sn[3]; i++)
			h->src[3][i] = real_in(h, 3, (uint64_t)i, relu ? 0.0f : -0.5f, 0.5f);
		return;
	}
	for (int64_t r = 0; r < p->batch * p->len; r++) {
		float *row = h->src[3] + r * S;

		for (int64_t k = 0; k < S; k++) {
			int64_t blk = k / u;
			uint64_t e = (uint64_t)(r * S + k);
			float v;

			if (op == XO_OP_simple_rnn)
				v = relu ? (e % 10 == 3 ? 0.0f : real_in(h, 3, e, 0.0f, 2.0f))
				         : real_in(h, 3, e, -0.99f, 0.99f);
			else if (op == XO_OP_lstm)
				v = blk == 0 || blk == 1 || blk == 3 ? real_in(h, 3, e, 0.01f, 0.99f)
				    : blk == 4 ? real_in(h, 3, e, -2.0f, 2.0f)
				               : real_in(h, 3, e, -0.99f, 0.99f);
			else
				v = blk <= 1 ? real_in(h, 3, e, 0.01f, 0.99f)
				    : blk == 4 ? (p->reset_after ? real_in(h, 3, e, -1.0f, 1.0f) : 0.0f)
				               : real_in(h, 3, e, -0.99f, 0.99f);
			row[k] = v;
		}
		if (op == XO_OP_lstm)
			for (int64_t k = 0; k < u; k++) {
				row[5 * u + k] = tanhf(row[4 * u + k]);
				row[6 * u + k] = row[3 * u + k] * row[5 * u + k];
			}
	}
	for (int64_t i = 0; i < h->sn[4]; i++)
		h->src[4][i] = real_in(h, 4, (uint64_t)i, -1.0f, 1.0f);
}

/*
 * Forward bound, per output element, by a recursion over the steps of each
 * sample that follows the computation (ops.def) with the values of ref
 * standing in for the exact ones (they differ by u relative: a
 * second-order change, inside C_ACC's margin). With e_h, e_c the bounds on
 * the previous state's error (0 before step 0):
 *   linear part: pre_j = x W_j + h' U_j + b_j, K = ch + units + 2 terms:
 *     d_pre_j = C_ACC K u (sum |x W_j| + sum |h' U_j| + |b_j|)   (rounding,
 *               exact on integer fills: the products and sums of integers
 *               below 2^24 do not round)
 *             + sum_k |U_kj| e_h[k]                           (propagation)
 *   gates: sigmoid is 1/4-Lipschitz, tanh and relu 1-Lipschitz; each adds
 *     its own error ULP_SIGMOID_FWD = 13 u |v|, ULP_TANH_FWD = 11 u |v| (relu:
 *     exact, plus ref's rounding u |v|):  d_gate = L d_pre + ULP u |gate|
 *   products and sums of the state update: first order, each operand's
 *     bound times the other's size, their product (second order, kept),
 *     and one u per rounding (ref's own rounding included):
 *     lstm c = f c' + i g:  d_c = |f| e_c + |c'| d_f + d_f e_c + |i| d_g +
 *                               |g| d_i + d_i d_g + 3 u (|f c'| + |i g|)
 *          a = act(c): d_a = d_c + 11 u |a|;  h = o a: d_h = |o| d_a + |a| d_o
 *                               + d_o d_a + 2 u |h|
 *     gru reset_after=1: hh's pre = xz_h + r hz_h: d = d_xz + |r| d_hz +
 *          |hz| d_r + d_r d_hz + 2 u (|xz_h| + |r hz_h|); reset_after=0: the
 *          recurrent terms read r_k h'_k with d = |r| e_h + |h'| d_r + d_r e_h
 *          + u |r h'|;  h = z h' + (1 - z) hh:  d_h = |z| e_h + |h'| d_z +
 *          d_z e_h + |1 - z| d_hh + |hh| d_z + d_z d_hh + 5 u (|z h'| +
 *          |1 - z| |hh|)   (as the backends compute it: z h' + (1 - z) hh)
 * Growth with len: e_h enters the next step as sum_k |U_kj| e_h[k] times the
 * gate's Lipschitz constant; the fills keep sum_k |U_kj| <= 1 and tanh' <= 1,
 * sigmoid' <= 1/4, |f| < 1 on c, so a step multiplies the carried error by
 * rho <= 1 (simple_rnn, gru's h = z h' + (1 - z) hh is a convex mix) and
 * adds its own rounding r_s: the bound after T steps is at most
 * sum_s rho^(T - s) r_s <= T max_s r_s: the bound per step times T (for
 * rho < 1 at most max r_s / (1 - rho), independent of T). The recursion
 * computes the exact sum, element by element.
 */
static void tol_rnn_fwd(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	enum xo_op op = h->c->op;
	int64_t u = p->units, g = xo_rnn_gates(op), G = g * u, S = xo_rnn_ws_blocks(op) * u;
	int64_t T = p->len, in = p->ch;
	bool ra = op == XO_OP_gru && p->reset_after, relu = p->activation == XO_ACTIVATION_RELU;
	const float *x = h->src[0], *W = h->src[1], *Uw = h->src[2], *b = h->src[3];
	const float *ws = h->ref[1];
	double *e = calloc((size_t)(4 * u + 4 * G), sizeof(double));
	double *eh = e, *ec = e + u, *nh = e + 2 * u, *drh = e + 3 * u;
	double *dpre = e + 4 * u, *mx = dpre + G, *xz = mx + G, *dg = xz + G;
	double ulp_act = relu ? 1.0 : ULP_TANH_FWD;

	XO_ASSERT(e);
	for (int64_t n = 0; n < p->batch; n++) {
		for (int64_t k = 0; k < 2 * u; k++)
			e[k] = 0.0; /* eh, ec */
		for (int64_t s = 0; s < T; s++) {
			int64_t t = p->go_backwards ? T - 1 - s : s;
			const float *xt = x + (n * T + t) * in, *row = ws + (n * T + s) * S;
			const float *prev = s > 0 ? row - S : NULL;
			int64_t hb = op == XO_OP_lstm ? 6 : op == XO_OP_gru ? 3 : 0;
			double *tol = h->tol[1] + (n * T + s) * S;

			/* the linear part of every gate column */
			for (int64_t j = 0; j < G; j++) {
				double m = 0.0, v = 0.0, mh = 0.0, prop = 0.0;
				bool via_r = op == XO_OP_gru && !ra && j >= 2 * u;

				for (int64_t i = 0; i < in; i++) {
					m += fabs((double)xt[i] * W[i * G + j]);
					v += (double)xt[i] * W[i * G + j];
				}
				if (p->use_bias) {
					m += fabs((double)b[j]);
					v += b[j];
				}
				mx[j] = m;
				xz[j] = v;
				for (int64_t k = 0; prev && !via_r && k < u; k++) {
					mh += fabs((double)prev[hb * u + k] * Uw[k * G + j]);
					prop += fabs((double)Uw[k * G + j]) * eh[k];
				}
				if (ra && p->use_bias)
					mh += fabs((double)b[G + j]);
				dpre[j] = C_ACC * (double)(in + u + 2) * U * (m + mh) + prop;
				if (ra && j >= 2 * u) /* hz_h alone (the ws block), x side apart */
					dpre[j] = C_ACC * (double)(u + 1) * U * mh + prop;
			}
			switch (op) {
			case XO_OP_simple_rnn:
				for (int64_t k = 0; k < u; k++)
					nh[k] = tol[k] = dpre[k] + ulp_act * U * fabs((double)row[k]);
				break;
			case XO_OP_lstm:
				for (int64_t k = 0; k < u; k++) {
					double ig = row[k], fg = row[u + k], gg = row[2 * u + k];
					double og = row[3 * u + k], c = row[4 * u + k];
					double ac = row[5 * u + k], hv = row[6 * u + k];
					double cp = prev ? prev[4 * u + k] : 0.0;
					double di = dpre[k] / 4.0 + ULP_SIGMOID_FWD * U * fabs(ig);
					double df = dpre[u + k] / 4.0 + ULP_SIGMOID_FWD * U * fabs(fg);
					double dgg = dpre[2 * u + k] + ULP_TANH_FWD * U * fabs(gg);
					double d_o = dpre[3 * u + k] / 4.0 + ULP_SIGMOID_FWD * U * fabs(og);
					double dc = fabs(fg) * ec[k] + fabs(cp) * df + df * ec[k] +
					            fabs(ig) * dgg + fabs(gg) * di + di * dgg +
					            3.0 * U * (fabs(fg * cp) + fabs(ig * gg));
					double da = dc + ULP_TANH_FWD * U * fabs(ac);
					double dh = fabs(og) * da + fabs(ac) * d_o + d_o * da +
					            2.0 * U * fabs(hv);

					(void)c;
					tol[k] = di;
					tol[u + k] = df;
					tol[2 * u + k] = dgg;
					tol[3 * u + k] = d_o;
					tol[4 * u + k] = dc;
					tol[5 * u + k] = da;
					tol[6 * u + k] = dh;
					ec[k] = dc;
					nh[k] = dh;
				}
				break;
			case XO_OP_gru:
				for (int64_t k = 0; k < u; k++) {
					dg[k] = dpre[k] / 4.0 + ULP_SIGMOID_FWD * U * fabs((double)row[k]);
					dg[u + k] = dpre[u + k] / 4.0 +
					            ULP_SIGMOID_FWD * U * fabs((double)row[u + k]);
					tol[k] = dg[k];
					tol[u + k] = dg[u + k];
					tol[4 * u + k] = ra ? dpre[2 * u + k] : 0.0;
				}
				if (!ra) /* d (r_k h'_k) */
					for (int64_t k = 0; k < u; k++) {
						double rg = row[u + k], hp = prev ? prev[3 * u + k] : 0.0;

						drh[k] = fabs(rg) * eh[k] + fabs(hp) * dg[u + k] +
						         dg[u + k] * eh[k] + U * fabs(rg * hp);
					}
				for (int64_t k = 0; k < u; k++) {
					double z = row[k], rg = row[u + k], hh = row[2 * u + k];
					double hv = row[3 * u + k], hp = prev ? prev[3 * u + k] : 0.0;
					double dz = dg[k], dhh, dh;

					if (ra) {
						double hz = row[4 * u + k], dhz = dpre[2 * u + k];

						dhh = C_ACC * (double)(in + 1) * U * mx[2 * u + k] +
						      fabs(rg) * dhz + fabs(hz) * dg[u + k] +
						      dg[u + k] * dhz +
						      2.0 * U * (fabs(xz[2 * u + k]) + fabs(rg * hz));
					} else {
						double m = mx[2 * u + k], prop = 0.0;

						for (int64_t j = 0; prev && j < u; j++) {
							double w = Uw[j * G + 2 * u + k];

							m += fabs((double)row[u + j] * prev[3 * u + j] * w);
							prop += fabs(w) * drh[j];
						}
						dhh = C_ACC * (double)(in + u + 2) * U * m + prop;
					}
					dhh += ULP_TANH_FWD * U * fabs(hh);
					dh = fabs(z) * eh[k] + fabs(hp) * dz + dz * eh[k] +
					     fabs(1.0 - z) * dhh + fabs(hh) * dz + dz * dhh +
					     5.0 * U * (fabs(z * hp) + fabs(1.0 - z) * fabs(hh));
					(void)hv;
					tol[2 * u + k] = dhh;
					tol[3 * u + k] = dh;
					nh[k] = dh;
				}
				break;
			default:
				XO_ASSERT(!"not a recurrent op");
			}
			for (int64_t k = 0; k < S; k++) /* an Inf input makes some NaN (Inf * 0) */
				tol[k] = isnan(tol[k]) ? INFINITY : tol[k] + TINY;
			for (int64_t k = 0; k < u; k++)
				eh[k] = nh[k];
			if (p->return_sequences || s == T - 1) {
				double *ty = h->tol[0] + (p->return_sequences ? (n * T + s) * u : n * u);

				for (int64_t k = 0; k < u; k++)
					ty[k] = isnan(nh[k]) ? INFINITY : nh[k] + TINY;
			}
		}
	}
	free(e);
}

/* A value and a bound on its error (the running error analysis below). */
struct ev {
	double v, e;
};

static struct ev ev_x(double v) /* an exact input */
{
	return (struct ev){v, 0.0};
}

static struct ev ev_mul(struct ev a, struct ev b)
{
	double v = a.v * b.v;

	return (struct ev){v, fabs(a.v) * b.e + fabs(b.v) * a.e + a.e * b.e + U * fabs(v)};
}

static struct ev ev_add(struct ev a, struct ev b)
{
	double v = a.v + b.v;

	return (struct ev){v, a.e + b.e + U * fabs(v)};
}

/* 1 - a^2 (tanh' from a), computed as 1 - a a or (1 - a)(1 + a): the
 * larger of the two forms' errors, u (a^2 + |1 - a^2|) and 3 u |1 - a^2| */
static struct ev ev_tanh_d(double a)
{
	double v = 1.0 - a * a;

	return (struct ev){v, U * (a * a + 3.0 * fabs(v))};
}

/* y (1 - y) (sigmoid' from y): 1 - y is exact for y >= 1/2 (Sterbenz) or
 * one rounding, the product one: 2 u |v| */
static struct ev ev_sig_d(double y)
{
	double v = y * (1.0 - y);

	return (struct ev){v, 2.0 * U * fabs(v)};
}

/*
 * Backward bound: the backward has no transcendental call (ops.def: every
 * derivative from a stored output), so its error is that of a polynomial
 * evaluation of exact inputs, bounded by a running error analysis that
 * follows the computation back through time: every quantity q carries a
 * bound e(q) (struct ev): a product adds |a| e(b) + |b| e(a) + e(a) e(b)
 * + u |ab|, a two-term sum e(a) + e(b) + u |a + b|, a dot product of K terms
 * sum |w| e(t) + C_ACC K u sum |w t| (Higham 3.1, any order, FMA or not).
 * The state gradient carried to the step before is such a dot product over
 * the gate columns (K = gates * units + 2), and the weight gradients sums
 * over all batch * len (sample, step) pairs (K = batch * len: the cpu's
 * one GEMM over every step, cl's per-element loop alike). The carried
 * error is multiplied per step by at most sum_j |U_kj| |gate'| <= 1 with
 * these fills (the contraction of the forward bound, transposed), so it
 * grows at most linearly in len.
 */
static void tol_rnn_bwd(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	enum xo_op op = h->c->op;
	int64_t u = p->units, g = xo_rnn_gates(op), G = g * u, S = xo_rnn_ws_blocks(op) * u;
	int64_t T = p->len, in = p->ch, N = p->batch, nw = in * G, nu = u * G;
	bool ra = op == XO_OP_gru && p->reset_after, relu = p->activation == XO_ACTIVATION_RELU;
	const float *x = h->src[0], *W = h->src[1], *Uw = h->src[2], *ws = h->src[3];
	const float *dy = h->src[4];
	int64_t hb = op == XO_OP_lstm ? 6 : op == XO_OP_gru ? 3 : 0;
	struct ev *st = calloc((size_t)(4 * u + 2 * G), sizeof(*st));
	double *acc = calloc((size_t)(2 * (nw + nu + 2 * G)), sizeof(double));
	struct ev *dh, *dc, *drh, *px, *ph;
	double *eW, *mW, *eU, *mU, *eb, *mb;

	XO_ASSERT(st && acc);
	dh = st;
	dc = st + u;
	drh = st + 2 * u;
	px = st + 4 * u;
	ph = px + G;
	eW = acc;
	mW = eW + nw;
	eU = mW + nw;
	mU = eU + nu;
	eb = mU + nu;
	mb = eb + 2 * G;
	for (int64_t n = 0; n < N; n++) {
		for (int64_t k = 0; k < 3 * u; k++)
			st[k] = ev_x(0.0);
		for (int64_t s = T - 1; s >= 0; s--) {
			int64_t t = p->go_backwards ? T - 1 - s : s;
			const float *row = ws + (n * T + s) * S, *prev = s > 0 ? row - S : NULL;
			const float *xt = x + (n * T + t) * in;

			for (int64_t k = 0; k < u; k++) {
				double d = p->return_sequences ? dy[(n * T + s) * u + k]
				           : s == T - 1      ? dy[n * u + k]
				                             : 0.0;

				if (p->return_sequences || s == T - 1)
					dh[k] = ev_add(dh[k], ev_x(d));
			}
			switch (op) {
			case XO_OP_simple_rnn:
				for (int64_t k = 0; k < u; k++)
					px[k] = ph[k] = ev_mul(dh[k], relu ? ev_x(row[k] > 0.0f)
					                                   : ev_tanh_d(row[k]));
				break;
			case XO_OP_lstm:
				for (int64_t k = 0; k < u; k++) {
					double ig = row[k], fg = row[u + k], gg = row[2 * u + k];
					double og = row[3 * u + k], ac = row[5 * u + k];
					double cp = prev ? prev[4 * u + k] : 0.0;
					struct ev dcc = ev_add(dc[k], ev_mul(ev_mul(dh[k], ev_x(og)),
					                                     ev_tanh_d(ac)));

					px[k] = ev_mul(ev_mul(dcc, ev_x(gg)), ev_sig_d(ig));
					px[u + k] = ev_mul(ev_mul(dcc, ev_x(cp)), ev_sig_d(fg));
					px[2 * u + k] = ev_mul(ev_mul(dcc, ev_x(ig)), ev_tanh_d(gg));
					px[3 * u + k] = ev_mul(ev_mul(dh[k], ev_x(ac)), ev_sig_d(og));
					dc[k] = ev_mul(dcc, ev_x(fg));
				}
				for (int64_t j = 0; j < G; j++)
					ph[j] = px[j];
				break;
			case XO_OP_gru:
				for (int64_t k = 0; k < u; k++) {
					double z = row[k], rg = row[u + k], hh = row[2 * u + k];
					double hp = prev ? prev[3 * u + k] : 0.0;
					struct ev hd = {hp - hh, U * fabs(hp - hh)};
					struct ev omz = {1.0 - z, U * fabs(1.0 - z)};

					px[k] = ph[k] = ev_mul(ev_mul(dh[k], hd), ev_sig_d(z));
					px[2 * u + k] = ev_mul(ev_mul(dh[k], omz), ev_tanh_d(hh));
					ph[2 * u + k] = ra ? ev_mul(px[2 * u + k], ev_x(rg)) : px[2 * u + k];
					if (ra)
						px[u + k] = ph[u + k] =
						    ev_mul(ev_mul(px[2 * u + k], ev_x(row[4 * u + k])),
						           ev_sig_d(rg));
				}
				if (!ra)
					for (int64_t k = 0; k < u; k++) {
						double rg = row[u + k], hp = prev ? prev[3 * u + k] : 0.0;
						double v = 0.0, e = 0.0, m = 0.0;

						for (int64_t j = 0; j < u; j++) {
							double w = Uw[k * G + 2 * u + j];

							v += px[2 * u + j].v * w;
							e += fabs(w) * px[2 * u + j].e;
							m += fabs(px[2 * u + j].v * w);
						}
						drh[k] = (struct ev){v, e + C_ACC * (double)u * U * m};
						px[u + k] = ph[u + k] =
						    ev_mul(ev_mul(drh[k], ev_x(hp)), ev_sig_d(rg));
					}
				break;
			default:
				XO_ASSERT(!"not a recurrent op");
			}
			/* dx_t = px W^T: K = G */
			if (h->dn[0])
				for (int64_t i = 0; i < in; i++) {
					double e = 0.0, m = 0.0;

					for (int64_t j = 0; j < G; j++) {
						e += fabs((double)W[i * G + j]) * px[j].e;
						m += fabs(px[j].v * W[i * G + j]);
					}
					h->tol[0][(n * T + t) * in + i] =
					    e + C_ACC * (double)G * U * m + TINY;
				}
			/* the weight gradients' terms */
			for (int64_t i = 0; i < in; i++)
				for (int64_t j = 0; j < G; j++) {
					eW[i * G + j] += fabs((double)xt[i]) * px[j].e;
					mW[i * G + j] += fabs(xt[i] * px[j].v);
				}
			for (int64_t j = 0; j < G; j++) {
				eb[j] += px[j].e;
				mb[j] += fabs(px[j].v);
				eb[G + j] += ph[j].e;
				mb[G + j] += fabs(ph[j].v);
			}
			for (int64_t k = 0; k < u; k++) {
				double hp = prev ? prev[hb * u + k] : 0.0;
				struct ev hin_r = ev_mul(ev_x(op == XO_OP_gru ? row[u + k] : 1.0),
				                         ev_x(hp));
				double v = 0.0, e = 0.0, m = 0.0;

				for (int64_t j = 0; j < G; j++) {
					bool via_r = op == XO_OP_gru && !ra && j >= 2 * u;
					struct ev hin = via_r ? hin_r : ev_x(hp);

					eU[k * G + j] += fabs(hin.v) * ph[j].e + fabs(ph[j].v) * hin.e;
					mU[k * G + j] += fabs(hin.v * ph[j].v);
					if (via_r)
						continue;
					v += ph[j].v * Uw[k * G + j];
					e += fabs((double)Uw[k * G + j]) * ph[j].e;
					m += fabs(ph[j].v * Uw[k * G + j]);
				}
				if (op == XO_OP_gru) { /* h = z h' + ...; and r h' */
					struct ev d = ev_mul(dh[k], ev_x(row[k]));

					if (!ra)
						d = ev_add(d, ev_mul(drh[k], ev_x(row[u + k])));
					v += d.v;
					e += d.e;
					m += fabs(d.v);
				}
				dh[k] = (struct ev){v, e + C_ACC * (double)(G + 2) * U * m};
			}
		}
	}
	for (int64_t k = 0; k < nw; k++)
		h->tol[1][k] = eW[k] + C_ACC * (double)(N * T) * U * mW[k] + TINY;
	for (int64_t k = 0; k < nu; k++)
		h->tol[2][k] = eU[k] + C_ACC * (double)(N * T) * U * mU[k] + TINY;
	for (int64_t k = 0; k < h->dn[3]; k++)
		h->tol[3][k] = eb[k] + C_ACC * (double)(N * T) * U * mb[k] + TINY;
	free(acc);
	free(st);
}

static enum xo_status fill_inputs(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool exact = c->mode == XO_HMODE_EXACT, bwd = c->dir == XO_DIR_BWD;

	switch (c->op) {
	case XO_OP_conv1d:
	case XO_OP_conv2d:
	case XO_OP_dense: {
		/* relu forward: x and w skewed positive so most outputs are
		 * not clipped. */
		bool skew = p->activation == XO_ACTIVATION_RELU && !bwd;
		int a = (int)h->amp, lo = skew ? -(a + 1) / 2 : -a;

		for (int s = 0; s < 2; s++)
			for (int64_t i = 0; i < h->sn[s]; i++) {
				if (exact)
					h->src[s][i] = int_nz(h, (uint32_t)s, (uint64_t)i, lo, a);
				else
					h->src[s][i] = real_in(h, (uint32_t)s, (uint64_t)i,
					                       skew ? -0.5f : -1.0f, 1.0f);
			}
		if (!bwd) {
			if (h->sn[2])
				fill_plain(h, 2, true, -1.0f, 1.0f);
		} else {
			fill_act_y(h, h->src[2], h->sn[2], h->ss[2].dim[h->ss[2].ndim - 1],
			           p->activation, exact);
			fill_plain(h, 3, true, -1.0f, 1.0f);
		}
		break;
	}
	case XO_OP_max_pooling1d:
	case XO_OP_max_pooling2d:
		/* Exact mode keeps zeros and repeats: ties test the first-maximum rule. */
		fill_plain(h, 0, false, -1.0f, 1.0f);
		if (bwd) /* Positive gradients: |dx| is then its own magnitude. */
			fill_plain(h, 1, true, 0.25f, 1.0f);
		break;
	case XO_OP_global_max_pooling1d:
	case XO_OP_global_max_pooling2d:
		/* exact mode: nonzero integers in +-(cells + 4), cells = len
		 * (times width for 2-D), so maxima vary across channels while
		 * long rows still repeat values (ties test the first-maximum
		 * rule) */
		for (int64_t i = 0; i < h->sn[0]; i++) {
			int64_t cells = c->op == XO_OP_global_max_pooling2d ? p->len * p->width
			                                                    : p->len;
			int a = (int)(cells < 1000 ? cells + 4 : 1004);

			h->src[0][i] = exact ? int_nz(h, 0, (uint64_t)i, -a, a)
			                     : real_in(h, 0, (uint64_t)i, -1.0f, 1.0f);
		}
		if (bwd)
			fill_plain(h, 1, true, 0.25f, 1.0f);
		break;
	case XO_OP_average_pooling1d:
	case XO_OP_global_average_pooling1d:
	case XO_OP_average_pooling2d:
	case XO_OP_global_average_pooling2d:
		/* x (fwd) or dy (bwd), nonzero; averages of mixed signs may still
		 * cancel to 0 in exact mode, rarely enough for the 30% rule */
		fill_plain(h, 0, true, -1.0f, 1.0f);
		break;
	case XO_OP_relu:
		if (!bwd) {
			/* A fixed quarter negative (element 0 positive): clipped
			 * outputs are structural zeros, and some always remain. */
			for (int64_t i = 0; i < h->sn[0]; i++) {
				float v = exact ? int_in(h, 0, (uint64_t)i, 1, 6)
				                : real_in(h, 0, (uint64_t)i, 0.01f, 1.5f);

				h->src[0][i] = i % 4 == 3 ? -v : v;
			}
		} else {
			fill_act_y(h, h->src[0], h->sn[0], p->ch, XO_ACTIVATION_RELU, exact);
			fill_plain(h, 1, true, -1.0f, 1.0f);
		}
		break;
	case XO_OP_sigmoid:
		if (!bwd) {
			fill_plain(h, 0, true, -8.0f, 8.0f);
		} else {
			fill_act_y(h, h->src[0], h->sn[0], p->ch, XO_ACTIVATION_SIGMOID, false);
			fill_plain(h, 1, true, -1.0f, 1.0f);
		}
		break;
	case XO_OP_tanh:
	case XO_OP_elu:
		/* fwd: both sides of 0 and tanh's saturation begins (|x| = 4:
		 * tanh = 1 - 7e-4); bwd: y over the activation's range */
		if (!bwd) {
			fill_plain(h, 0, true, -4.0f, 4.0f);
		} else {
			fill_act_y(h, h->src[0], h->sn[0], p->ch,
			           c_op_act(h->c->op), false);
			fill_plain(h, 1, true, -1.0f, 1.0f);
		}
		break;
	case XO_OP_gelu:
		/* x in [-5, 5]: gelu's dip (minimum at -0.75, its derivative's
		 * zero there) and the tail where 1 + erf would cancel */
		fill_plain(h, 0, true, -5.0f, 5.0f);
		if (bwd)
			fill_plain(h, 1, true, -1.0f, 1.0f);
		break;
	case XO_OP_softplus:
		/* x in [-20, 20]: exp(-|x|) down to 2e-9, log1p's small-argument
		 * range, and the large-x side where max(x, 0) dominates; every
		 * 8th in [89, 100], where exp(x) overflows float (log(1 + exp(x))
		 * would give Inf) */
		fill_plain(h, 0, true, -20.0f, 20.0f);
		for (int64_t i = 7; i < h->sn[0]; i += 8)
			h->src[0][i] = real_in(h, 0, (uint64_t)i, 89.0f, 100.0f);
		if (bwd)
			fill_plain(h, 1, true, -1.0f, 1.0f);
		break;
	case XO_OP_softmax:
		if (!bwd) {
			fill_plain(h, 0, true, -4.0f, 4.0f);
		} else {
			fill_probs(h, 0, h->src[0], h->sn[0], p->ch);
			fill_plain(h, 1, true, -1.0f, 1.0f);
		}
		break;
	case XO_OP_flatten:
	case XO_OP_dropout:
		fill_plain(h, 0, true, -1.0f, 1.0f);
		break;
	case XO_OP_categorical_crossentropy:
		fill_probs(h, 0, h->src[0], h->sn[0], p->ch);
		fill_onehot(h, 1, h->src[1], NULL, h->sn[1], p->ch);
		break;
	case XO_OP_adam:
		fill_plain(h, 0, true, -1.0f, 1.0f);
		for (int64_t i = 0; i < p->size; i++) {
			h->init[0][i] = real_in(h, 4, (uint64_t)i, -1.0f, 1.0f);
			h->init[1][i] = real_in(h, 5, (uint64_t)i, -0.1f, 0.1f);
			h->init[2][i] = real_in(h, 6, (uint64_t)i, 0.0f, 0.01f);
		}
		break;
	case XO_OP_batch_normalization:
		/* x off centre (mean about 0.5) so that the mean's error enters
		 * x - mean; gamma of both signs away from 0; the state (fwd) a
		 * moving mean near 0 and a moving variance in [0.5, 1.5] */
		fill_plain(h, 0, true, -0.5f, 1.5f);
		if (h->sn[1])
			for (int64_t i = 0; i < h->sn[1]; i++) {
				float v = real_in(h, 1, (uint64_t)i, 0.5f, 1.5f);

				h->src[1][i] = i % 3 == 1 ? -v : v;
			}
		if (bwd) {
			fill_plain(h, 2, true, -1.0f, 1.0f);
		} else {
			if (h->sn[2])
				fill_plain(h, 2, true, -1.0f, 1.0f);
			for (int64_t i = 0; i < p->ch; i++) {
				h->init[1][i] = real_in(h, 5, (uint64_t)i, -0.5f, 0.5f);
				h->init[2][i] = real_in(h, 6, (uint64_t)i, 0.5f, 1.5f);
			}
		}
		break;
	case XO_OP_binary_crossentropy:
		/* p over [0, 1] (a few land outside the clip), soft targets in [0, 1] */
		for (int64_t i = 0; i < h->sn[0]; i++) {
			h->src[0][i] = real_in(h, 0, (uint64_t)i, 0.0f, 1.0f);
			if (i % 17 == 3)
				h->src[0][i] = i % 2 ? 0.0f : 1.0f; /* clipped */
			h->src[1][i] = i % 3 ? (float)int_in(h, 1, (uint64_t)i, 0, 1)
			                     : real_in(h, 1, (uint64_t)i, 0.0f, 1.0f);
		}
		break;
	case XO_OP_sparse_categorical_crossentropy:
		fill_probs(h, 0, h->src[0], h->sn[0], p->ch);
		fill_labels(h, 1, h->src[1], NULL, p->batch, p->ch);
		break;
	case XO_OP_sparse_categorical_accuracy:
		for (int64_t i = 0; i < h->sn[0]; i++)
			h->src[0][i] = exact ? int_in(h, 0, (uint64_t)i, 0, 3)
			                     : real_in(h, 0, (uint64_t)i, 0.0f, 1.0f);
		fill_labels(h, 1, h->src[1], h->src[0], p->batch, p->ch);
		break;
	case XO_OP_mean_squared_error:
		fill_plain(h, 0, false, -2.0f, 2.0f);
		fill_plain(h, 1, false, -2.0f, 2.0f);
		break;
	case XO_OP_binary_accuracy:
		/* p on quarters (0.5 itself is "not above"), t 0 or 1, now and then 0.5 */
		for (int64_t i = 0; i < h->sn[0]; i++) {
			h->src[0][i] = 0.25f * (float)int_in(h, 0, (uint64_t)i, 0, 4);
			h->src[1][i] = i % 11 == 5 ? 0.5f : (float)int_in(h, 1, (uint64_t)i, 0, 1);
		}
		/* element 0 a hit, so that no case counts zero (uninformative) */
		h->src[1][0] = h->src[0][0] > 0.5f ? 1.0f : 0.0f;
		break;
	case XO_OP_sgd:
		fill_plain(h, 0, true, -1.0f, 1.0f);
		for (int64_t i = 0; i < p->size; i++) {
			h->init[0][i] = real_in(h, 4, (uint64_t)i, -1.0f, 1.0f);
			h->init[1][i] = real_in(h, 5, (uint64_t)i, -0.1f, 0.1f);
		}
		break;
	case XO_OP_rmsprop:
		fill_plain(h, 0, true, -1.0f, 1.0f);
		for (int64_t i = 0; i < p->size; i++) {
			h->init[0][i] = real_in(h, 4, (uint64_t)i, -1.0f, 1.0f);
			h->init[1][i] = real_in(h, 5, (uint64_t)i, 0.0f, 0.01f);
			h->init[2][i] = real_in(h, 6, (uint64_t)i, -0.1f, 0.1f);
		}
		break;
	case XO_OP_accuracy:
		for (int64_t i = 0; i < h->sn[0]; i++)
			h->src[0][i] = exact ? int_in(h, 0, (uint64_t)i, 0, 3)
			                     : real_in(h, 0, (uint64_t)i, 0.0f, 1.0f);
		fill_onehot(h, 1, h->src[1], h->src[0], h->sn[1], p->ch);
		break;
	case XO_OP_gather:
		fill_plain(h, 0, true, -1.0f, 1.0f);
		for (int64_t i = 0; i < h->sn[1]; i++) {
			int32_t r = (int32_t)(unif(h, 1, (uint64_t)i) * (float)p->rows);

			r = r >= p->rows ? (int32_t)p->rows - 1 : r;
			memcpy(&h->src[1][i], &r, 4);
		}
		break;
	case XO_OP_embedding:
		/* ids uniform in [0, rows): with batch * len > rows rows repeat
		 * (the backward's duplicates) and some may go unused (structural
		 * zeros of dtable); table / dy nonzero */
		for (int64_t i = 0; i < h->sn[0]; i++) {
			int32_t r = (int32_t)(unif(h, 0, (uint64_t)i) * (float)p->rows);

			r = r >= p->rows ? (int32_t)p->rows - 1 : r;
			memcpy(&h->src[0][i], &r, 4);
		}
		fill_plain(h, 1, true, -1.0f, 1.0f);
		break;
	case XO_OP_simple_rnn:
	case XO_OP_lstm:
	case XO_OP_gru:
		fill_rnn(h);
		break;
	case XO_OP_COUNT:
		break;
	}
	return XO_OK;
}

/* Window o of max_pooling1d: [*lo, *hi) of the input, clipped. */
static void pool_window(const struct xo_params *p, int64_t o, int64_t pad, int64_t *lo, int64_t *hi)
{
	int64_t start = o * xo_pool1d_stride(p) - pad;

	*lo = start < 0 ? 0 : start;
	*hi = start + p->pool_size > p->len ? p->len : start + p->pool_size;
}

/* Nonfinite mode: NaN and Inf planted in the inputs of elementwise ops. */
static void plant_nonfinite(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	static const uint32_t special[3] = {0x7fc00000u, 0x7f800000u, 0xff800000u};
	float *x = h->src[0];

	if (xo_op_is_rnn(h->c->op)) {
		/* The recurrent ops: a NaN in sample 0's input at the last step
		 * processed (its last state and ws row NaN, the earlier ones
		 * finite), +Inf in sample 1's at the middle step (every gate
		 * pre-activation it reaches is +-Inf: the gates saturate to
		 * exact 0, 1 or +-1, so the states stay finite; their bounds are
		 * then infinite, and only a NaN or Inf where ref is finite fails)
		 * and -Inf in sample 2's at its first processed step. The other
		 * samples stay finite (the bounds are informative there). */
		int64_t T = p->len, last = p->go_backwards ? 0 : T - 1;
		int64_t first = p->go_backwards ? T - 1 : 0;

		x[(0 * T + last) * p->ch] = u2f(special[0]);
		if (T == 1) /* one step: the other samples stay finite */
			return;
		if (p->batch > 1)
			x[(1 * T + T / 2) * p->ch + (p->ch > 1)] = u2f(special[1]);
		if (p->batch > 2)
			x[(2 * T + first) * p->ch] = u2f(special[2]);
		return;
	}

	if (h->c->op == XO_OP_max_pooling1d) {
		int64_t out, pad;

		if (xo_pool1d_geometry(p, &out, &pad))
			return;
		/* NaN at the first element of every other window: the first
		 * element starts the running maximum, so y is NaN there; and an
		 * Inf inside some others. */
		for (int64_t n = 0; n < p->batch; n++)
			for (int64_t o = 0; o < out; o += 2)
				for (int64_t ch = 0; ch < p->ch; ch++) {
					int64_t lo, hi;

					pool_window(p, o, pad, &lo, &hi);
					if (lo >= hi)
						continue;
					if ((o / 2 + ch) % 2 == 0)
						x[(n * p->len + lo) * p->ch + ch] = u2f(special[0]);
					else
						x[(n * p->len + hi - 1) * p->ch + ch] =
						    u2f(special[1]);
				}
		return;
	}
	for (int64_t i = 2; i < h->sn[0]; i += 5) {
		/* Dropout: only kept elements, since 0 * Inf's kind is not part
		 * of the dropout contract. */
		if (h->c->op == XO_OP_dropout && p->training &&
		    !xo_dropout_keep(p->seed, p->step, p->layer, (uint64_t)i, p->rate))
			continue;
		x[i] = u2f(special[(i / 5) % 3]);
	}
}

/* ---- plain runs (ref) ------------------------------------------------------ */

/*
 * Runs op on be with host inputs src (slot shapes from xo_op_shapes), dst
 * starting from init[i] (or zeros), and reads the outputs into out[i]; when
 * mag is given, mag[i] receives ref's magnitudes (MAG_UNSET where ref has
 * none).
 */
static enum xo_status run_plain(struct xo_backend *be, enum xo_op op, enum xo_dir dir,
                                const struct xo_params *p, float *const src[XO_MAX_SRC],
                                float *const init[XO_MAX_DST], float *const out[XO_MAX_DST],
                                float *const mag[XO_MAX_DST])
{
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
	struct xo_tensor *ts[XO_MAX_SRC] = {0}, *td[XO_MAX_DST] = {0}, *tm[XO_MAX_DST] = {0};
	struct xo_op_args a = {.p = *p};
	enum xo_status st;

	st = xo_op_shapes(op, dir, p, ss, ds);
	if (st)
		return st;
	for (int i = 0; i < XO_MAX_SRC; i++) {
		if (!ss[i].ndim)
			continue;
		st = xo_tensor_create(be, ss[i].dtype, ss[i].ndim, ss[i].dim, &ts[i]);
		if (!st)
			st = xo_tensor_write(ts[i], src[i], 0, slot_count(&ss[i]));
		if (st)
			goto out_free;
		a.src[i] = ts[i];
	}
	for (int i = 0; i < XO_MAX_DST; i++) {
		if (!ds[i].ndim)
			continue;
		st = xo_tensor_create(be, ds[i].dtype, ds[i].ndim, ds[i].dim, &td[i]);
		if (!st && init && init[i])
			st = xo_tensor_write(td[i], init[i], 0, slot_count(&ds[i]));
		if (st)
			goto out_free;
		a.dst[i] = td[i];
		if (mag && mag[i]) {
			for (int64_t e = 0; e < slot_count(&ds[i]); e++)
				mag[i][e] = MAG_UNSET;
			st = xo_tensor_create(be, XO_DTYPE_F32, ds[i].ndim, ds[i].dim, &tm[i]);
			if (!st)
				st = xo_tensor_write(tm[i], mag[i], 0, slot_count(&ds[i]));
			if (st)
				goto out_free;
			a.mag[i] = tm[i];
		}
	}
	st = xo_op_run(be, op, dir, &a);
	for (int i = 0; !st && i < XO_MAX_DST; i++) {
		if (td[i])
			st = xo_tensor_read(td[i], out[i], 0, slot_count(&ds[i]));
		if (!st && tm[i])
			st = xo_tensor_read(tm[i], mag[i], 0, slot_count(&ds[i]));
	}
out_free:
	for (int i = 0; i < XO_MAX_DST; i++) {
		xo_tensor_free(tm[i]);
		xo_tensor_free(td[i]);
	}
	for (int i = 0; i < XO_MAX_SRC; i++)
		xo_tensor_free(ts[i]);
	return st;
}

/* ---- magnitudes and tolerances --------------------------------------------- */

/* d loss / d pre-activation from y and dy (double), and a bound on the error
 * a float kernel makes computing it (absolute, per element). */
static void dpre_host(const struct xo_params *p, const float *y, const float *dy, int64_t count,
                      int64_t last, double *dpre, double *err)
{
	for (int64_t r = 0; r < count / last; r++) {
		const float *yr = y + r * last, *dyr = dy + r * last;
		double s = 0.0, sa = 0.0;

		for (int64_t j = 0; j < last; j++) {
			s += (double)yr[j] * dyr[j];
			sa += fabs((double)yr[j] * dyr[j]);
		}
		for (int64_t j = 0; j < last; j++) {
			int64_t i = r * last + j;
			double yv = yr[j], g = dyr[j];

			switch (p->activation) {
			case XO_ACTIVATION_LINEAR:
				dpre[i] = g;
				err[i] = 0.0;
				break;
			case XO_ACTIVATION_RELU:
				dpre[i] = yv > 0.0 ? g : 0.0;
				err[i] = 0.0;
				break;
			case XO_ACTIVATION_SIGMOID:
				/* three roundings: counted as K + 3 in the bound */
				dpre[i] = g * yv * (1.0 - yv);
				err[i] = 0.0;
				break;
			case XO_ACTIVATION_TANH: /* never fused (core/shapes.c) */
			case XO_ACTIVATION_ELU:
			case XO_ACTIVATION_GELU:
			case XO_ACTIVATION_SOFTPLUS:
				XO_ASSERT(!"activation not fused");
				break;
			case XO_ACTIVATION_SOFTMAX:
				/* y_i (dy_i - s), s = sum_j y_j dy_j: s errs by
				 * gamma_(n+1) sum|y_j dy_j|, then a subtraction and a
				 * product: (n + 3) u y_i (|dy_i| + sum|y_j dy_j|). */
				dpre[i] = yv * (g - s);
				err[i] = (double)(last + 3) * U * yv * (fabs(g) + sa);
				break;
			}
		}
	}
}

/*
 * conv1d / dense: magnitudes (ref's mag[] if it filled them, else ref run on
 * |inputs| with a linear activation, which computes exactly sum |a_k b_k|),
 * the pre-activation z (forward, non-linear activations), and the softmax
 * activation's propagated dpre error (backward).
 */
static enum xo_status conv_dense_extra(struct hcase *h, struct xo_backend *ref, bool need_mag,
                                       double *prop[XO_MAX_DST])
{
	const struct xo_case *c = h->c;
	struct xo_params lin = c->p;
	float *abs_src[XO_MAX_SRC] = {0}, *out[XO_MAX_DST] = {0};
	double *dpre = NULL, *err = NULL;
	enum xo_status st = XO_OK;
	bool have_mag = true;

	lin.activation = XO_ACTIVATION_LINEAR;
	for (int i = 0; i < XO_MAX_DST; i++)
		for (int64_t e = 0; h->mag[i] && e < h->dn[i]; e++)
			if (h->mag[i][e] < 0.0f)
				have_mag = false;
	if (c->dir == XO_DIR_FWD && c->p.activation != XO_ACTIVATION_LINEAR) {
		float *zout[XO_MAX_DST] = {h->z};

		st = run_plain(ref, c->op, c->dir, &lin, h->src, NULL, zout, NULL);
		if (st)
			return st;
	}
	if ((!need_mag || have_mag) &&
	    !(c->dir == XO_DIR_BWD && c->p.activation == XO_ACTIVATION_SOFTMAX && need_mag))
		return XO_OK;

	for (int i = 0; i < XO_MAX_SRC; i++) {
		if (!h->sn[i])
			continue;
		abs_src[i] = malloc(sizeof(float) * (size_t)h->sn[i]);
		if (!abs_src[i]) {
			st = xo_error(XO_ENOMEM, "harness: out of memory");
			goto out_free;
		}
		for (int64_t e = 0; e < h->sn[i]; e++)
			abs_src[i][e] = fabsf(h->src[i][e]);
	}
	for (int i = 0; i < XO_MAX_DST; i++) {
		if (!h->dn[i])
			continue;
		out[i] = malloc(sizeof(float) * (size_t)h->dn[i]);
		if (!out[i]) {
			st = xo_error(XO_ENOMEM, "harness: out of memory");
			goto out_free;
		}
	}
	if (c->dir == XO_DIR_FWD) {
		st = run_plain(ref, c->op, c->dir, &lin, abs_src, NULL, out, NULL);
		if (!st && !have_mag)
			memcpy(h->mag[0], out[0], sizeof(float) * (size_t)h->dn[0]);
		goto out_free;
	}
	/* Backward: dy replaced by |dpre| (magnitudes), then by dpre's error
	 * bound (softmax: the error it propagates through |w| and |x|). */
	dpre = malloc(sizeof(double) * (size_t)h->sn[3]);
	err = malloc(sizeof(double) * (size_t)h->sn[3]);
	if (!dpre || !err) {
		st = xo_error(XO_ENOMEM, "harness: out of memory");
		goto out_free;
	}
	dpre_host(&c->p, h->src[2], h->src[3], h->sn[3], h->ss[3].dim[h->ss[3].ndim - 1], dpre,
	          err);
	if (!have_mag) {
		for (int64_t e = 0; e < h->sn[3]; e++)
			abs_src[3][e] = (float)fabs(dpre[e]);
		st = run_plain(ref, c->op, c->dir, &lin, abs_src, NULL, h->mag, NULL);
		if (st)
			goto out_free;
	}
	if (c->p.activation == XO_ACTIVATION_SOFTMAX) {
		for (int64_t e = 0; e < h->sn[3]; e++)
			abs_src[3][e] = (float)err[e];
		st = run_plain(ref, c->op, c->dir, &lin, abs_src, NULL, out, NULL);
		for (int i = 0; !st && i < XO_MAX_DST; i++)
			for (int64_t e = 0; e < h->dn[i]; e++)
				prop[i][e] = out[i][e];
	}
out_free:
	free(err);
	free(dpre);
	for (int i = 0; i < XO_MAX_DST; i++)
		free(out[i]);
	for (int i = 0; i < XO_MAX_SRC; i++)
		free(abs_src[i]);
	return st;
}

static double ulp_of(float v)
{
	float a = fabsf(v);

	if (!isfinite(a))
		return 0.0;
	if (a == FLT_MAX)
		return 0x1p104;
	return (double)nextafterf(a, INFINITY) - (double)a;
}

/* Accumulation lengths K of conv1d / dense, per dst slot. */
static void acc_lengths(const struct xo_case *c, int64_t k[XO_MAX_DST])
{
	const struct xo_params *p = &c->p;
	int64_t out = 1, pad, taps = 1;
	bool conv = c->op == XO_OP_conv1d || c->op == XO_OP_conv2d;

	if (c->op == XO_OP_conv1d) {
		xo_conv1d_geometry(p, &out, &pad);
		taps = p->kernel_size;
	} else if (c->op == XO_OP_conv2d) {
		int64_t oh = 1, ow = 1, pl;

		/* conv2d: the taps are kh*kw, the outputs of a filter oh*ow */
		xo_conv2d_geometry(p, &oh, &ow, &pad, &pl);
		out = oh * ow;
		taps = p->kernel_size * xo_params_width_axis(p).kernel_size;
	}
	if (c->dir == XO_DIR_FWD) {
		/* taps * ch (or ch) products, plus the bias */
		k[0] = (conv ? taps * p->ch : p->ch) + (p->use_bias ? 1 : 0);
		k[1] = k[2] = 0;
	} else {
		k[0] = conv ? taps * p->filters : p->units; /* dx: over window and filters */
		k[1] = p->batch * out;                             /* dw: over samples and steps */
		k[2] = p->batch * out;                             /* db */
	}
}

/*
 * Adam, Keras 3 (what ref computes): m' = m + (g - m)(1 - b1);
 * v' = v + (g^2 - v)(1 - b2); w' = w - lr_t m' / (sqrt(v') + eps) with the
 * float m', v'; lr_t = lr sqrt(1 - b2^t) / (1 - b1^t). A kernel may also use
 * the algebraically equal b1 m + (1 - b1) g; the bounds cover both forms.
 *
 * m': three roundings over terms of at most |m| + |b1 m| + (1 - b1)(|g| + |m|):
 *   e_m = 3u times that.
 * v': four roundings (g^2, difference or products, product, sum) over
 *   v + (1 - b2)(g^2 + v): e_v = 4u times that.
 * lr_t (a scalar; b^t from a libm within 1 ulp): 1 - b^t inherits b^t's
 *   error amplified by A = b^t / (1 - b^t): 2u A + u; sqrt halves it and adds
 *   6u; division 5u; product u: E_lr = (2u A2 + u) / 2 + 6u + 2u A1 + u + 5u + u.
 * delta = lr_t m' / (sqrt(v') + eps): v''s relative error e_v / v' halved by
 *   sqrt, plus sqrt's 6u, + eps u, division 5u, product u: E_lr + e_v/(2v')
 *   + 13u relative; m''s error adds lr_t e_m / (sqrt(v') + eps).
 * w' = w - delta: its rounding and the reference's, 2u |w'|.
 * Each term times C_ACC (first-order bound; same margin as elsewhere).
 */
static void tol_adam(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	double b1 = p->beta_1, b2 = p->beta_2, t = (double)p->iteration;
	double p1 = pow(b1, t), p2 = pow(b2, t);
	double a1 = p1 / (1.0 - p1), a2 = p2 / (1.0 - p2);
	double lr_t = p->lr * sqrt(1.0 - p2) / (1.0 - p1);
	double e_lr = (2.0 * U * a2 + U) / 2.0 + 6.0 * U + 2.0 * U * a1 + U + 5.0 * U + U;

	for (int64_t i = 0; i < p->size; i++) {
		double g = h->src[0][i], w = h->init[0][i], m = h->init[1][i], v = h->init[2][i];
		double m1 = m + (g - m) * (1.0 - b1), v1 = v + (g * g - v) * (1.0 - b2);
		double e_m = 3.0 * U * (fabs(m) + fabs(b1 * m) + (1.0 - b1) * (fabs(g) + fabs(m)));
		double e_v = 4.0 * U * (v + (1.0 - b2) * (g * g + v));
		double den = sqrt(v1) + p->epsilon, delta = lr_t * m1 / den;
		double rel = e_lr + (v1 > 0.0 ? e_v / (2.0 * v1) : 0.0) + 13.0 * U;

		h->tol[1][i] = C_ACC * e_m + TINY;
		h->tol[2][i] = C_ACC * e_v + TINY;
		h->tol[0][i] =
		    C_ACC * (rel * fabs(delta) + lr_t * e_m / den + 2.0 * U * fabs(w - delta)) +
		    TINY;
	}
}

/*
 * binary_crossentropy and mean_squared_error, a float backend against the
 * double reference; N = batch * ch elements, float division and log within
 * OpenCL's 2.5 and 3 ulp (5u, 6u).
 * BCE fwd: per element a = t log q, b = (1 - t) log(1 - q): log's 6u relative
 *   plus the product's u on |a|; on |b| also 1 - q's and 1 - t's roundings
 *   (u each, relative to the factor: 2u more): 8u |b| + 7u |a|. The sum of N
 *   terms (any order: strided partials then a tree) within (N - 1) u S with
 *   S = sum |a| + |b|, the division by N 5u and the reference's store u of
 *   |loss|: tol = C_ACC ((N + 8) u S / N + 6u |loss|).
 * BCE bwd: -t / q and (1 - t) / (1 - q): 5u each for the divisions, 2u more
 *   for 1 - t and 1 - q on the second, the sum u, the division by N 5u and
 *   the store u: C_ACC 14u (|t / q| + |(1 - t) / (1 - q)|) / N. Outside the
 *   clip both give 0 (the comparison is on the same float values).
 * MSE fwd: d = p - t (u), d^2 (u; 3u relative on d^2), the sum of N terms
 *   (N - 1) u S with S = sum d^2, division and store: C_ACC ((N + 3) u S / N
 *   + 6u |loss|).
 * MSE bwd: 2 (p - t) / N: the difference u, the division 5u, the store u:
 *   C_ACC 7u |dp|.
 */
static void tol_bce_mse(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	int64_t n = p->batch * p->ch;
	const double lo = (double)1e-7f, hi = (double)(float)(1.0 - 1e-7);
	bool bce = h->c->op == XO_OP_binary_crossentropy;

	if (h->c->dir == XO_DIR_FWD) {
		double terms = 0.0, size = 0.0, loss = fabs((double)h->ref[0][0]);

		for (int64_t k = 0; k < n; k++) {
			double q = h->src[0][k], t = h->src[1][k];

			if (bce) {
				double a, b;

				q = q < lo ? lo : q > hi ? hi : q;
				a = fabs(t * log(q));
				b = fabs((1.0 - t) * log(1.0 - q));
				terms += 7.0 * a + 8.0 * b;
				size += a + b;
			} else {
				terms += 3.0 * (q - t) * (q - t);
				size += (q - t) * (q - t);
			}
		}
		/* the terms' own errors, the summation's (N - 1) u S, division, store */
		h->tol[0][0] = C_ACC * (U * terms / (double)n + (double)(n - 1) * U * size / (double)n +
		                        6.0 * U * loss) +
		               TINY;
		return;
	}
	for (int64_t k = 0; k < n; k++) {
		double q = h->src[0][k], t = h->src[1][k];

		if (bce)
			h->tol[0][k] =
			    (q >= lo && q <= hi
			         ? C_ACC * 14.0 * U * (fabs(t / q) + fabs((1.0 - t) / (1.0 - q))) /
			               (double)n
			         : 0.0) +
			    TINY;
		else
			h->tol[0][k] = C_ACC * 7.0 * U * fabs((double)h->ref[0][k]) + TINY;
	}
}

/*
 * sparse_categorical_crossentropy (Keras 3: one_hot of the label, then the
 * categorical form), float backend against the double reference.
 * fwd: the categorical_crossentropy bound with one-hot targets (the same row
 *   sum, division, clamp and log; the product by t = 1 is exact):
 *   ce_fwd_ulps(batch * ch) ulps of the loss + (ch + 4) u (sum |t| / batch = 1).
 * bwd: dp_j = (1 / s - [j == k] / p_k) / batch. s: ch - 1 roundings over
 *   positive terms ((ch - 1) u relative), 1 / s and 1 / p_k OpenCL's 2.5 ulp
 *   (5u) each, the difference u, the division by batch 5u, the store u:
 *   C_ACC (((ch + 4) u / s + [j == k] 5u / p_k) / batch + 7u |dp|).
 *   fill_probs keeps every p_k / s far inside the 1e-7 clip.
 */
static void tol_scce(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	int64_t n = p->batch, ch = p->ch;

	if (h->c->dir == XO_DIR_FWD) {
		h->tol[0][0] = ce_fwd_ulps(n * ch) * ulp_of(h->ref[0][0]) + (double)(ch + 4) * U + TINY;
		return;
	}
	for (int64_t r = 0; r < n; r++) {
		double s = 0.0;
		int32_t k;

		memcpy(&k, &h->src[1][r], 4);
		for (int64_t c = 0; c < ch; c++)
			s += h->src[0][r * ch + c];
		for (int64_t c = 0; c < ch; c++) {
			double e = (double)(ch + 4) * U / s;

			if (c == k)
				e += 5.0 * U / (double)h->src[0][r * ch + c];
			h->tol[0][r * ch + c] = C_ACC * (e / (double)n +
			                                 7.0 * U * fabs((double)h->ref[0][r * ch + c])) +
			                        TINY;
		}
	}
}

/*
 * embedding bwd in real mode: dtable[r][c] is the float sum of the K terms
 * dy[i][c] with ids[i] == r, in position order on every backend; Higham's
 * bound for K - 1 additions is (K - 1) u sum |dy[i][c]|, plus u |ref| for the
 * reference's one rounding of its double sum, times C_ACC. K <= 1 is a copy
 * (or 0): exact. The forward is a copy: exact.
 */
static void tol_embedding(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	int64_t n = p->batch * p->len, ch = p->ch;
	int64_t *k = calloc((size_t)p->rows, sizeof(*k));
	double *m = calloc((size_t)(p->rows * ch), sizeof(*m));

	if (h->c->dir == XO_DIR_FWD || h->c->mode == XO_HMODE_EXACT || !k || !m)
		goto out;
	for (int64_t i = 0; i < n; i++) {
		int32_t r;

		memcpy(&r, &h->src[0][i], 4);
		k[r]++;
		for (int64_t c = 0; c < ch; c++)
			m[r * ch + c] += fabs((double)h->src[1][i * ch + c]);
	}
	for (int64_t r = 0; r < p->rows; r++)
		for (int64_t c = 0; k[r] > 1 && c < ch; c++)
			h->tol[0][r * ch + c] =
			    C_ACC * ((double)(k[r] - 1) * U * m[r * ch + c] +
			             U * fabs((double)h->ref[0][r * ch + c])) +
			    TINY;
out:
	free(k);
	free(m);
}

/*
 * sgd (ops.def; Keras 3 optimizers/sgd.py), a backend in float against the
 * reference in double with float state. lr and mu are floats, exact in both.
 * m' = m mu - g lr: two products and a difference rounded (3u) over
 *   |m mu| + |g lr|, plus the reference's own store (u): e_m = 4u S_m.
 * w' = w + m' (nesterov: w + (m' mu - g lr)): the m' that each side used
 *   differs by e_m (times mu for nesterov); then at most three roundings
 *   (product, difference, sum) over |w| + |m' mu| + |g lr| + |m'| and the
 *   reference's store: 4u times that. momentum 0: w - g lr, two roundings
 *   and the store over |w| + |g lr|.
 * Each term times C_ACC (first-order bound, the margin used elsewhere).
 */
static void tol_sgd(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	double lr = p->lr, mu = p->momentum;

	for (int64_t i = 0; i < p->size; i++) {
		double g = h->src[0][i], w = h->init[0][i], m = h->init[1][i];
		double gl = fabs(g * lr);

		if (p->momentum != 0.0f) {
			double m1 = m * mu - g * lr;
			double e_m = 4.0 * U * (fabs(m * mu) + gl);
			double e_w = e_m * (p->nesterov ? mu : 1.0) +
			             4.0 * U * (fabs(w) + fabs(m1 * mu) + gl + fabs(m1));

			h->tol[1][i] = C_ACC * e_m + TINY;
			h->tol[0][i] = C_ACC * e_w + TINY;
		} else {
			h->tol[1][i] = TINY; /* untouched */
			h->tol[0][i] = C_ACC * 3.0 * U * (fabs(w) + gl) + TINY;
		}
	}
}

/*
 * rmsprop (ops.def; Keras 3 optimizers/rmsprop.py, centered False), float
 * backend against the double reference with float state.
 * v' = rho v + (1 - rho) g^2: 1 - rho is exact in float for rho in [0.5, 1]
 *   (Sterbenz) and rounded once otherwise; g^2, two products, the sum and the
 *   reference's store: e_v = 6u (rho v + (1 - rho) g^2).
 * inc = lr g / sqrt(v' + eps): v' + eps carries e_v + u (v' + eps), relative
 *   error halved by sqrt, plus sqrt's 3 ulp (6u), the product u and the
 *   division's 2.5 ulp (5u): rel = (e_v / (v' + eps) + u) / 2 + 12u.
 * mom' = mu mom + inc: rel |inc| + 3u (|mu mom| + |inc|) with the store.
 * w' = w - (mom' or inc): that term's error plus two roundings (kernel,
 *   reference store) over |w| + |term|.
 * Each term times C_ACC.
 */
static void tol_rmsprop(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	double lr = p->lr, rho = p->rho, mu = p->momentum, eps = p->epsilon;

	for (int64_t i = 0; i < p->size; i++) {
		double g = h->src[0][i], w = h->init[0][i], v = h->init[1][i];
		double mom = h->init[2][i];
		double v1 = rho * v + (1.0 - rho) * g * g;
		double e_v = 6.0 * U * v1;
		double inc = lr * g / sqrt(v1 + eps);
		double rel = (v1 + eps > 0.0 ? e_v / (v1 + eps) : 0.0) / 2.0 + U / 2.0 + 12.0 * U;
		double e_inc = rel * fabs(inc), term = inc, e_term = e_inc;

		h->tol[1][i] = C_ACC * e_v + TINY;
		if (p->momentum > 0.0f) {
			term = mu * mom + inc;
			e_term = e_inc + 3.0 * U * (fabs(mu * mom) + fabs(inc));
			h->tol[2][i] = C_ACC * e_term + TINY;
		} else {
			h->tol[2][i] = TINY; /* untouched */
		}
		h->tol[0][i] = C_ACC * (e_term + 2.0 * U * (fabs(w) + fabs(term))) + TINY;
	}
}

/* Softmax rows: tol_i = 2 y_i max_j(dz_j) + softmax_ulps(R, n) ulp(y_i),
 * where dz bounds the error of the row's inputs (0 for the softmax op) and
 * z gives the row's range R. |d y_i| <= y_i (|dz_i| + sum_j y_j |dz_j|). */
static void tol_softmax_rows(const float *y, const float *z, const double *dz, double *tol,
                             int64_t count, int64_t n)
{
	for (int64_t r = 0; r < count / n; r++) {
		float lo = z[r * n], hi = z[r * n];
		double dmax = 0.0;

		for (int64_t j = 0; j < n; j++) {
			lo = fminf(lo, z[r * n + j]);
			hi = fmaxf(hi, z[r * n + j]);
			if (dz && dz[r * n + j] > dmax)
				dmax = dz[r * n + j];
		}
		for (int64_t j = 0; j < n; j++) {
			int64_t i = r * n + j;

			tol[i] = 2.0 * (double)y[i] * dmax +
			         softmax_ulps((double)hi - (double)lo, n) * ulp_of(y[i]) + TINY;
		}
	}
}

/*
 * Average poolings, real fills. mag (ref's) is sum |x| / count (fwd) or
 * sum |dy[o]| / count[o] (bwd), and |y| <= mag.
 * fwd: a float sum of the K = count in-bounds terms, in any order, errs by at
 *   most (K - 1) u sum|x| (first order); the division by count scales that
 *   to (K - 1) u mag and adds its own error, 2.5 ulp <= 5u |y| (OpenCL C's
 *   x/y; a correctly rounded division or a multiply by a rounded 1/count is
 *   within it), and the reference rounds once, u |y|: (K - 1 + 6) u mag.
 *   K = pool_size (windowed; a clipped edge window has fewer) or len (global).
 * bwd: dx sums at most M terms dy[o] / count[o], M = ceil(pool_size /
 *   stride) windows holding a step (1 for the global op); each quotient errs
 *   by 5u |term|, the sum by (M - 1) u sum|term|, the reference u |dx|:
 *   (M - 1 + 6) u mag.
 * Times C_ACC for the higher-order terms, as every accumulation here.
 */
static void tol_avg_pool(struct hcase *h)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool global = c->op == XO_OP_global_average_pooling1d;
	int64_t k;

	if (c->op == XO_OP_global_average_pooling2d) {
		k = c->dir == XO_DIR_FWD ? p->len * p->width : 1;
	} else if (c->op == XO_OP_average_pooling2d) {
		/* 2-D: K = pool_h * pool_w cells (fwd); a cell lies in at most
		 * ceil(pool_h / stride_h) * ceil(pool_w / stride_w) windows (bwd) */
		struct xo_pool2d_geom g;

		if (xo_pool2d_geometry_of(c->op, p, &g))
			return;
		k = c->dir == XO_DIR_FWD ? g.pool_h * g.pool_w
		                         : ((g.pool_h + g.stride_h - 1) / g.stride_h) *
		                               ((g.pool_w + g.stride_w - 1) / g.stride_w);
	} else if (c->dir == XO_DIR_FWD) {
		k = global ? p->len : p->pool_size;
	} else {
		int64_t s = xo_pool1d_stride(p);

		k = global ? 1 : (p->pool_size + s - 1) / s;
	}
	for (int64_t e = 0; e < h->dn[0]; e++)
		h->tol[0][e] = C_ACC * (double)(k - 1 + 6) * U * (double)h->mag[0][e] + TINY;
}

/*
 * batch_normalization, real fills (ops.def has the formulas; every backend
 * computes them in float). Per channel over N = batch*len rows, with the
 * exact values (in double, from the float inputs) mu = mean, d_k = x_k - mu,
 * V = sum d^2 / N, s = V + eps, r = 1 / sqrt(s), xh = d r, M1 = sum |x| / N;
 * first-order bounds of a float evaluation (any summation order, FMA or not:
 * Higham 3.1; OpenCL sqrt 6u, x/y 5u; N converted to float: u):
 *   mean      e_mu = (N - 1) u N M1 / N + (1 + 5) u |mu| <= (N + 5) u M1
 *   d_k       Dd_k = e_mu + u (|d_k| + e_mu)
 *   var       e_V = sum (2 |d| Dd + Dd^2) / N + (N + 1) u sum (|d| + Dd)^2 / N
 *             + 6 u V   (N products and N - 1 additions, the division)
 *   s         e_s = e_V + u (s + e_V)
 *   r         dr = e_s / (2 s) + 11 u (relative: sqrt halves s's error, sqrt
 *             6u, the reciprocal 5u)
 *   xh_k      Dx_k = r Dd_k + |xh_k| (dr + u)
 *   y_k       |g| Dx_k + 2 u |g xh_k| + u |beta|; and the reference's u |y|
 *   moving    2 u (|m| mom + |stat| (1 - mom)) + e_stat (1 - mom) + 2 u |m'|
 *             (1 - mom is exact for mom in [0.5, 1], Sterbenz; else one u more)
 * Inference: mu = moving_mean exactly, e_mu = 0, e_V = 0 (V = moving_variance).
 * Backward, the same Dx_k (the statistics recomputed from x), then
 *   dbeta     e_db = (N - 1) u sum |dy|
 *   dgamma    e_dg = sum |dy| Dx + N u sum |dy xh|
 *   dx_k      F = g r / N (relative error dr + 7u), B = N dy - db - xh dg,
 *             MB = N |dy| + |db| + |xh dg|:
 *             |F| (e_db + Dx_k |dg| + |xh_k| e_dg + 5 u MB) + |F| MB (dr + 8u)
 * and the reference's rounding of each. Times C_ACC for the higher orders.
 */
static enum xo_status tol_batch_normalization(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	bool bwd = h->c->dir == XO_DIR_BWD, train = bwd || p->training;
	int64_t rows = p->batch * p->len, ch = p->ch;
	double n = (double)rows, mom = p->momentum, eps = p->epsilon;
	double om_u = mom >= 0.5 ? 0.0 : U;
	double *dx = malloc(sizeof(double) * (size_t)rows);

	if (!dx)
		return xo_error(XO_ENOMEM, "harness: out of memory");
	for (int64_t c = 0; c < ch; c++) {
		const float *x = h->src[0];
		double g = h->sn[1] ? h->src[1][c] : 1.0;
		double mu = 0.0, m1 = 0.0, v = 0.0, e_mu = 0.0, e_v = 0.0, s, r, e_s, dr;

		if (train) {
			for (int64_t k = 0; k < rows; k++) {
				mu += x[k * ch + c];
				m1 += fabs((double)x[k * ch + c]);
			}
			mu /= n;
			m1 /= n;
			e_mu = (n + 5.0) * U * m1;
			for (int64_t k = 0; k < rows; k++) {
				double d = x[k * ch + c] - mu, dd = e_mu + U * (fabs(d) + e_mu);

				v += d * d;
				e_v += 2.0 * fabs(d) * dd + dd * dd +
				       (n + 1.0) * U * (fabs(d) + dd) * (fabs(d) + dd);
			}
			v /= n;
			e_v = e_v / n + 6.0 * U * v;
		} else {
			mu = h->init[1][c];
			v = h->init[2][c];
		}
		s = v + eps;
		r = 1.0 / sqrt(s);
		e_s = e_v + U * (s + e_v);
		dr = e_s / (2.0 * s) + 11.0 * U;
		for (int64_t k = 0; k < rows; k++) {
			double d = x[k * ch + c] - mu, dd = e_mu + U * (fabs(d) + e_mu);

			dx[k] = r * dd + fabs(d * r) * (dr + U);
		}
		if (!bwd) {
			double b = h->sn[2] ? h->src[2][c] : 0.0;

			for (int64_t k = 0; k < rows; k++) {
				double xh = (x[k * ch + c] - mu) * r;

				h->tol[0][k * ch + c] =
				    C_ACC * (fabs(g) * dx[k] + 2.0 * U * fabs(g * xh) + U * fabs(b) +
				             U * fabs((double)h->ref[0][k * ch + c])) +
				    TINY;
			}
			if (p->training) {
				double mm = h->init[1][c], mv = h->init[2][c];

				h->tol[1][c] = C_ACC * (2.0 * U * (fabs(mm) * mom + fabs(mu) * (1.0 - mom)) +
				                        (e_mu + om_u * fabs(mu)) * (1.0 - mom) +
				                        2.0 * U * fabs((double)h->ref[1][c])) +
				               TINY;
				h->tol[2][c] = C_ACC * (2.0 * U * (mv * mom + v * (1.0 - mom)) +
				                        (e_v + om_u * v) * (1.0 - mom) +
				                        2.0 * U * fabs((double)h->ref[2][c])) +
				               TINY;
			}
		} else {
			const float *dy = h->src[2];
			double db = 0.0, dg = 0.0, sdy = 0.0, sdyx = 0.0, e_db, e_dg, f;

			e_dg = 0.0;
			for (int64_t k = 0; k < rows; k++) {
				double xh = (x[k * ch + c] - mu) * r, gy = dy[k * ch + c];

				db += gy;
				dg += gy * xh;
				sdy += fabs(gy);
				sdyx += fabs(gy * xh);
				e_dg += fabs(gy) * dx[k];
			}
			e_db = (n - 1.0) * U * sdy;
			e_dg += n * U * sdyx;
			f = fabs(g * r / n);
			for (int64_t k = 0; k < rows; k++) {
				double xh = (x[k * ch + c] - mu) * r, gy = dy[k * ch + c];
				double mb = n * fabs(gy) + fabs(db) + fabs(xh * dg);

				h->tol[0][k * ch + c] =
				    C_ACC * (f * (e_db + dx[k] * fabs(dg) + fabs(xh) * e_dg + 5.0 * U * mb) +
				             f * mb * (dr + 8.0 * U) +
				             U * fabs((double)h->ref[0][k * ch + c])) +
				    TINY;
			}
			if (h->dn[1])
				h->tol[1][c] = C_ACC * (e_dg + U * fabs((double)h->ref[1][c])) + TINY;
			if (h->dn[2])
				h->tol[2][c] = C_ACC * (e_db + U * fabs((double)h->ref[2][c])) + TINY;
		}
	}
	free(dx);
	return XO_OK;
}

static enum xo_status set_tolerances(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool exact = c->mode == XO_HMODE_EXACT;
	enum xo_status st = XO_OK;

	for (int i = 0; i < XO_MAX_DST; i++)
		for (int64_t e = 0; e < h->dn[i]; e++)
			h->tol[i][e] = 0.0;

	switch (c->op) {
	case XO_OP_conv1d:
	case XO_OP_conv2d:
	case XO_OP_dense: {
		double *prop[XO_MAX_DST] = {0};
		int64_t k[XO_MAX_DST];
		int64_t last = c->op == XO_OP_dense ? p->units : p->filters;

		acc_lengths(c, k);
		for (int i = 0; i < XO_MAX_DST && c->dir == XO_DIR_BWD; i++) {
			prop[i] = h->dn[i] ? calloc((size_t)h->dn[i], sizeof(double)) : NULL;
			if (h->dn[i] && !prop[i]) {
				st = xo_error(XO_ENOMEM, "harness: out of memory");
				goto out_prop;
			}
		}
		st = conv_dense_extra(h, ref, !exact, prop);
		if (st || exact)
			goto out_prop;
		for (int i = 0; i < XO_MAX_DST; i++) {
			double kk = (double)k[i];

			for (int64_t e = 0; e < h->dn[i]; e++) {
				double mag = h->mag[i][e], acc = C_ACC * kk * U * mag;

				switch (p->activation) {
				case XO_ACTIVATION_LINEAR:
				case XO_ACTIVATION_RELU: /* 1-Lipschitz, exact */
					h->tol[i][e] = acc + TINY;
					break;
				case XO_ACTIVATION_SIGMOID:
					if (c->dir == XO_DIR_FWD) /* sigmoid' <= 1/4 */
						h->tol[i][e] =
						    acc / 4.0 +
						    ULP_SIGMOID_FWD * ulp_of(h->ref[i][e]) + TINY;
					else /* dpre = dy y (1 - y): 3 more roundings */
						h->tol[i][e] = C_ACC * (kk + 3.0) * U * mag + TINY;
					break;
				case XO_ACTIVATION_TANH: /* never fused */
				case XO_ACTIVATION_ELU:
				case XO_ACTIVATION_GELU:
				case XO_ACTIVATION_SOFTPLUS:
					XO_ASSERT(!"activation not fused");
					break;
				case XO_ACTIVATION_SOFTMAX:
					if (c->dir == XO_DIR_FWD)
						h->tol[i][e] = acc; /* row maxima below */
					else
						h->tol[i][e] = acc + C_ACC * prop[i][e] + TINY;
					break;
				}
			}
		}
		if (c->dir == XO_DIR_FWD && p->activation == XO_ACTIVATION_SOFTMAX) {
			double *dz = malloc(sizeof(double) * (size_t)h->dn[0]);

			if (!dz) {
				st = xo_error(XO_ENOMEM, "harness: out of memory");
				goto out_prop;
			}
			memcpy(dz, h->tol[0], sizeof(double) * (size_t)h->dn[0]);
			tol_softmax_rows(h->ref[0], h->z, dz, h->tol[0], h->dn[0], last);
			free(dz);
		}
	out_prop:
		for (int i = 0; i < XO_MAX_DST; i++)
			free(prop[i]);
		return st;
	}
	case XO_OP_max_pooling1d:
		if (c->dir == XO_DIR_BWD && !exact) {
			/* dx sums the (positive) dy of every window whose first
			 * maximum it is: at most ceil(pool / stride) terms, so
			 * ceil(pool / stride) - 1 additions; |dx| is the magnitude. */
			int64_t s = xo_pool1d_stride(p), adds = (p->pool_size + s - 1) / s - 1;

			for (int64_t e = 0; e < h->dn[0]; e++)
				h->tol[0][e] =
				    C_ACC * (double)adds * U * fabs((double)h->ref[0][e]);
		}
		return XO_OK;
	case XO_OP_max_pooling2d:
		if (c->dir == XO_DIR_BWD && !exact) {
			/* as max_pooling1d: a cell's dx sums the positive dy of
			 * at most ceil(pool_h / stride_h) * ceil(pool_w /
			 * stride_w) windows, one addition fewer */
			struct xo_pool2d_geom g;
			int64_t adds;

			if (xo_pool2d_geometry_of(c->op, p, &g))
				return XO_OK;
			adds = ((g.pool_h + g.stride_h - 1) / g.stride_h) *
			           ((g.pool_w + g.stride_w - 1) / g.stride_w) -
			       1;
			for (int64_t e = 0; e < h->dn[0]; e++)
				h->tol[0][e] =
				    C_ACC * (double)adds * U * fabs((double)h->ref[0][e]);
		}
		return XO_OK;
	case XO_OP_average_pooling1d:
	case XO_OP_global_average_pooling1d:
	case XO_OP_average_pooling2d:
	case XO_OP_global_average_pooling2d:
		if (!exact)
			tol_avg_pool(h);
		return XO_OK;
	case XO_OP_global_max_pooling1d: /* a copy of x, dy or 0: exact */
	case XO_OP_global_max_pooling2d:
		return XO_OK;
	case XO_OP_sigmoid:
		for (int64_t e = 0; e < h->dn[0]; e++)
			h->tol[0][e] = (c->dir == XO_DIR_FWD ? ULP_SIGMOID_FWD : ULP_SIGMOID_BWD) *
			                   ulp_of(h->ref[0][e]) +
			               TINY;
		return XO_OK;
	case XO_OP_tanh:
	case XO_OP_elu:
	case XO_OP_softplus: {
		static const double u[][2] = {{ULP_TANH_FWD, ULP_TANH_BWD},
		                              {ULP_ELU_FWD, ULP_ELU_BWD},
		                              {ULP_SOFTPLUS_FWD, ULP_SOFTPLUS_BWD}};
		int k = c->op == XO_OP_tanh ? 0 : c->op == XO_OP_elu ? 1 : 2;

		for (int64_t e = 0; e < h->dn[0]; e++)
			h->tol[0][e] = u[k][c->dir] * ulp_of(h->ref[0][e]) + TINY;
		return XO_OK;
	}
	case XO_OP_gelu:
		for (int64_t e = 0; e < h->dn[0]; e++)
			h->tol[0][e] = c->dir == XO_DIR_FWD
			                   ? gelu_fwd_ulps(h->src[0][e]) * ulp_of(h->ref[0][e]) + TINY
			                   : gelu_bwd_factor(h->src[0][e]) * U * h->mag[0][e] + TINY;
		return XO_OK;
	case XO_OP_softmax:
		if (c->dir == XO_DIR_FWD) {
			tol_softmax_rows(h->ref[0], h->src[0], NULL, h->tol[0], h->dn[0], p->ch);
		} else {
			/* dx_i = y_i (dy_i - s): as the softmax activation's dpre
			 * (dpre_host), (ch + 3) u y_i (|dy_i| + sum|y_j dy_j|),
			 * times C_ACC for the reference's rounding. */
			double *dpre = malloc(sizeof(double) * (size_t)h->dn[0]);
			double *err = malloc(sizeof(double) * (size_t)h->dn[0]);
			struct xo_params sp = *p;

			if (!dpre || !err) {
				free(dpre);
				free(err);
				return xo_error(XO_ENOMEM, "harness: out of memory");
			}
			sp.activation = XO_ACTIVATION_SOFTMAX;
			dpre_host(&sp, h->src[0], h->src[1], h->dn[0], p->ch, dpre, err);
			for (int64_t e = 0; e < h->dn[0]; e++)
				h->tol[0][e] = C_ACC * err[e] + TINY;
			free(dpre);
			free(err);
		}
		return XO_OK;
	case XO_OP_categorical_crossentropy:
		if (c->dir == XO_DIR_FWD) {
			double tsum = 0.0;

			for (int64_t e = 0; e < h->sn[1]; e++)
				tsum += fabs((double)h->src[1][e]);
			h->tol[0][0] = ce_fwd_ulps(p->batch * p->ch) * ulp_of(h->ref[0][0]) +
			               (double)(p->ch + 4) * U * tsum / (double)p->batch + TINY;
		} else {
			for (int64_t e = 0; e < h->dn[0]; e++)
				h->tol[0][e] = ULP_CE_BWD * ulp_of(h->ref[0][e]) + TINY;
		}
		return XO_OK;
	case XO_OP_adam:
		tol_adam(h);
		return XO_OK;
	case XO_OP_batch_normalization:
		return tol_batch_normalization(h);
	case XO_OP_binary_crossentropy:
	case XO_OP_mean_squared_error:
		tol_bce_mse(h);
		return XO_OK;
	case XO_OP_binary_accuracy: /* integer counts: exact */
	case XO_OP_sparse_categorical_accuracy:
		return XO_OK;
	case XO_OP_sparse_categorical_crossentropy:
		tol_scce(h);
		return XO_OK;
	case XO_OP_sgd:
		tol_sgd(h);
		return XO_OK;
	case XO_OP_rmsprop:
		tol_rmsprop(h);
		return XO_OK;
	case XO_OP_embedding:
		tol_embedding(h);
		return XO_OK;
	case XO_OP_relu:    /* max(x, 0), dy or 0: exact */
	case XO_OP_flatten: /* a copy */
	case XO_OP_dropout: /* x * scale, scale = 1/(1-rate) in float: one rounding, exact */
	case XO_OP_accuracy:
	case XO_OP_gather:
	case XO_OP_COUNT:
		break;
	case XO_OP_simple_rnn:
	case XO_OP_lstm:
	case XO_OP_gru:
		if (c->dir == XO_DIR_FWD)
			tol_rnn_fwd(h);
		else
			tol_rnn_bwd(h);
		return XO_OK;
	}
	return XO_OK;
}

/* ---- mistrust -------------------------------------------------------------- */

/*
 * conv1d bwd zeros fixed by the geometry: dw taps k that see only padding
 * (no output o has 0 <= o*stride + k*dilation - pad < len), and dx steps no
 * window covers (stride longer than the receptive field).
 */
static int64_t conv_geometry_zeros(const struct xo_params *p, int slot)
{
	int64_t out, pad, s = xo_conv1d_stride(p), d = p->dilation_rate, z = 0;

	if (xo_conv1d_geometry(p, &out, &pad))
		return 0;
	if (slot == 1) {
		for (int64_t k = 0; k < p->kernel_size; k++) {
			bool seen = false;

			for (int64_t o = 0; o < out && !seen; o++) {
				int64_t t = o * s + k * d - pad;

				seen = t >= 0 && t < p->len;
			}
			z += seen ? 0 : p->ch * p->filters;
		}
	} else if (slot == 0) {
		for (int64_t t = 0; t < p->len; t++) {
			bool seen = false;

			for (int64_t o = 0; o < out && !seen; o++)
				for (int64_t k = 0; k < p->kernel_size && !seen; k++)
					seen = o * s + k * d - pad == t;
			z += seen ? 0 : p->batch * p->ch;
		}
	}
	return z;
}

/* One axis of a conv2d (q: xo_params_width_axis for the width): *taps gets
 * the count of taps some output reads inside [0, len), *cells the count of
 * input positions some (output, tap) pair reads. */
static void conv_axis_seen(const struct xo_params *q, int64_t out, int64_t pad, int64_t *taps,
			   int64_t *cells)
{
	int64_t s = xo_conv1d_stride(q), d = q->dilation_rate;

	*taps = *cells = 0;
	for (int64_t k = 0; k < q->kernel_size; k++) {
		bool seen = false;

		for (int64_t o = 0; o < out && !seen; o++) {
			int64_t t = o * s + k * d - pad;

			seen = t >= 0 && t < q->len;
		}
		*taps += seen;
	}
	for (int64_t t = 0; t < q->len; t++) {
		bool seen = false;

		for (int64_t o = 0; o < out && !seen; o++)
			for (int64_t k = 0; k < q->kernel_size && !seen; k++)
				seen = o * s + k * d - pad == t;
		*cells += seen;
	}
}

/* conv2d bwd zeros fixed by the geometry: dw taps (i, j) of which either
 * axis sees only padding, dx cells of which either axis is in no window. */
static int64_t conv2d_geometry_zeros(const struct xo_params *p, int slot)
{
	struct xo_params q = xo_params_width_axis(p);
	int64_t oh, ow, pt, pl, th, tw, ch, cw;

	if (xo_conv2d_geometry(p, &oh, &ow, &pt, &pl))
		return 0;
	conv_axis_seen(p, oh, pt, &th, &ch);
	conv_axis_seen(&q, ow, pl, &tw, &cw);
	if (slot == 1)
		return (p->kernel_size * q.kernel_size - th * tw) * p->ch * p->filters;
	if (slot == 0)
		return (p->len * p->width - ch * cw) * p->batch * p->ch;
	return 0;
}

/*
 * Zeros an op must produce whatever the kernel (structural zeros), counted
 * from the inputs and the geometry: relu fwd where x <= 0 (or conv1d/dense
 * with relu where the pre-activation z <= 0), relu bwd where y <= 0, dropout
 * where the mask drops, max_pooling1d bwd at inputs that are the first
 * maximum of no window, conv1d bwd where padding or strides leave a dw tap
 * or a dx step out of every window.
 */
static int64_t rnn_structural_zeros(const struct hcase *h, int slot)
{
	const struct xo_params *p = &h->c->p;
	int64_t z = 0;

	if (h->c->dir == XO_DIR_BWD) /* h' = 0 before step 0: no recurrent gradient at len 1 */
		return slot == 2 && p->len == 1 ? h->dn[2] : 0;
	if (h->c->op == XO_OP_gru && !p->reset_after && slot == 1)
		return p->batch * p->len * p->units; /* the hz_h block: 0 by definition */
	if (h->c->op == XO_OP_simple_rnn && p->activation == XO_ACTIVATION_RELU)
		for (int64_t e = 0; e < h->dn[slot]; e++) /* relu's clipped states */
			z += h->ref[slot][e] == 0.0f;
	return z;
}

static int64_t structural_zeros(const struct hcase *h, int slot)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	int64_t z = 0;

	if (c->op == XO_OP_conv1d && c->dir == XO_DIR_BWD)
		return conv_geometry_zeros(p, slot);
	if (xo_op_is_rnn(c->op))
		return rnn_structural_zeros(h, slot);
	if (c->op == XO_OP_conv2d && c->dir == XO_DIR_BWD)
		return conv2d_geometry_zeros(p, slot);
	if (slot != 0)
		return 0;
	switch (c->op) {
	case XO_OP_conv1d:
	case XO_OP_conv2d:
	case XO_OP_dense:
		if (c->dir == XO_DIR_FWD && p->activation == XO_ACTIVATION_RELU)
			for (int64_t e = 0; e < h->dn[0]; e++)
				z += !(h->z[e] > 0.0f);
		return z;
	case XO_OP_relu:
		for (int64_t e = 0; e < h->dn[0]; e++)
			z += !(h->src[0][e] > 0.0f);
		return z;
	case XO_OP_dropout:
		for (int64_t e = 0; p->training && e < h->dn[0]; e++)
			z += !xo_dropout_keep(p->seed, p->step, p->layer, (uint64_t)e, p->rate);
		return z;
	case XO_OP_embedding: /* bwd: the rows no id names */
		if (c->dir == XO_DIR_BWD) {
			char *used = calloc((size_t)p->rows, 1);

			if (!used)
				return 0;
			for (int64_t i = 0; i < p->batch * p->len; i++) {
				int32_t r;

				memcpy(&r, &h->src[0][i], 4);
				used[r] = 1;
			}
			for (int64_t r = 0; r < p->rows; r++)
				z += used[r] ? 0 : p->ch;
			free(used);
		}
		return z;
	case XO_OP_global_max_pooling1d: /* one first maximum per (sample, channel) */
		return c->dir == XO_DIR_BWD ? p->batch * p->ch * (p->len - 1) : 0;
	case XO_OP_global_max_pooling2d:
		return c->dir == XO_DIR_BWD ? p->batch * p->ch * (p->len * p->width - 1) : 0;
	case XO_OP_average_pooling2d:
	case XO_OP_max_pooling2d: { /* bwd: cells no window holds (average), or
				     * the first maximum of no window (max) */
		struct xo_pool2d_geom g;
		bool max = c->op == XO_OP_max_pooling2d;
		int64_t hw = p->len * p->width;
		char *hit;

		if (c->dir != XO_DIR_BWD || xo_pool2d_geometry_of(c->op, p, &g))
			return 0;
		hit = calloc((size_t)h->dn[0], 1);
		if (!hit)
			return 0;
		for (int64_t n = 0; n < p->batch; n++)
			for (int64_t oh = 0; oh < g.out_h; oh++)
				for (int64_t ow = 0; ow < g.out_w; ow++)
					for (int64_t ch = 0; ch < p->ch; ch++) {
						int64_t r[4], best = -1;

						pool2d_window(p, &g, oh, ow, r);
						for (int64_t i = r[0]; i < r[1]; i++)
							for (int64_t j = r[2]; j < r[3]; j++) {
								int64_t e = ((n * hw) + i * p->width + j) *
								                p->ch + ch;

								if (!max)
									hit[e] = 1;
								else if (best < 0 ||
								         h->src[0][e] > h->src[0][best])
									best = e;
							}
						if (max && best >= 0)
							hit[best] = 1;
					}
		for (int64_t e = 0; e < h->dn[0]; e++)
			z += !hit[e];
		free(hit);
		return z;
	}
	case XO_OP_average_pooling1d: { /* bwd: steps no window holds */
		int64_t out, pad, lo, hi;

		if (c->dir != XO_DIR_BWD || xo_pool1d_geometry_of(c->op, p, &out, &pad))
			return 0;
		for (int64_t t = 0; t < p->len; t++) {
			bool seen = false;

			for (int64_t o = 0; o < out && !seen; o++) {
				xo_pool1d_window(p, o, pad, &lo, &hi);
				seen = t >= lo && t < hi;
			}
			z += seen ? 0 : p->batch * p->ch;
		}
		return z;
	}
	case XO_OP_max_pooling1d: {
		int64_t out, pad;
		char *hit;

		if (c->dir != XO_DIR_BWD || xo_pool1d_geometry(p, &out, &pad))
			return 0;
		hit = calloc((size_t)h->dn[0], 1);
		if (!hit)
			return 0;
		for (int64_t n = 0; n < p->batch; n++)
			for (int64_t o = 0; o < out; o++)
				for (int64_t ch = 0; ch < p->ch; ch++) {
					int64_t lo, hi, best;

					pool_window(p, o, pad, &lo, &hi);
					best = lo;
					for (int64_t j = lo + 1; j < hi; j++)
						if (h->src[0][(n * p->len + j) * p->ch + ch] >
						    h->src[0][(n * p->len + best) * p->ch + ch])
							best = j;
					if (lo < hi)
						hit[(n * p->len + best) * p->ch + ch] = 1;
				}
		for (int64_t e = 0; e < h->dn[0]; e++)
			z += !hit[e];
		free(hit);
		return z;
	}
	default:
		return 0;
	}
}

/*
 * A reference output is uninformative, and the case fails, when among its n
 * elements, after setting aside the s structural zeros, more than 30% of the
 * remaining n - s are zero ((zeros - s) > 0.3 (n - s)), or none remain, or
 * when it has at least 4 finite elements and they are all the same value.
 * Index outputs (accuracy's idx, I32) skip the zero rule: 0 is a class.
 */
static bool mistrusted(struct hcase *h, int slot, char *why, size_t size)
{
	int64_t n = h->dn[slot], s = h->structural[slot], zeros = 0, finite = 0;
	bool constant = true, i32 = h->ds[slot].dtype == XO_DTYPE_I32;
	uint32_t first = 0;

	for (int64_t e = 0; e < n; e++) {
		float v = h->ref[slot][e];

		if (!i32 && !isfinite(v))
			continue;
		if (!i32 && v == 0.0f)
			zeros++;
		if (finite++ == 0)
			first = f2u(v);
		else if (f2u(v) != first && !(!i32 && v == 0.0f && u2f(first) == 0.0f))
			constant = false;
	}
	/* a slot that is all structural zeros (the recurrent ops' recurrent
	 * kernel gradient at len 1, where h' = 0) is compared bit-exact (its
	 * tolerance is 0) and carries no other information: allowed */
	if (n > 0 && s == n && zeros == n && xo_op_is_rnn(h->c->op))
		return false;
	if (!i32 && (n - s <= 0 || (double)(zeros - s) > 0.3 * (double)(n - s))) {
		snprintf(why, size,
		         "%" PRId64 " of %" PRId64 " reference outputs are zero (%" PRId64
		         " of them structural): more than 30%% of the rest",
		         zeros, n, s);
		return true;
	}
	if (finite >= 4 && constant) {
		snprintf(why, size, "all %" PRId64 " reference outputs are the same value (%g)",
		         finite, i32 ? (double)(int32_t)first : (double)u2f(first));
		return true;
	}
	return false;
}

/* ---- report ----------------------------------------------------------------- */

static void report(struct xo_case_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void report(struct xo_case_result *r, const char *fmt, ...)
{
	size_t used = strlen(r->report);
	va_list ap;

	if (used + 1 >= sizeof(r->report))
		return;
	va_start(ap, fmt);
	vsnprintf(r->report + used, sizeof(r->report) - used, fmt, ap);
	va_end(ap);
}

static void fail(struct xo_case_result *r, enum xo_fail f)
{
	if (r->fail == XO_FAIL_NONE)
		r->fail = f;
	r->fails |= 1u << f;
}

static void coords(const struct xo_slot_shape *s, int64_t idx, char *buf, size_t size)
{
	int64_t c[XO_MAX_DIMS];
	size_t used = 0;

	for (int d = s->ndim - 1; d >= 0; d--) {
		c[d] = idx % s->dim[d];
		idx /= s->dim[d];
	}
	buf[0] = '\0';
	for (int d = 0; d < s->ndim && used < size; d++)
		used += (size_t)snprintf(buf + used, size - used, "[%" PRId64 "]", c[d]);
}

static void value_str(float v, bool i32, char *buf, size_t size)
{
	if (i32)
		snprintf(buf, size, "%" PRId32 " (0x%08" PRIx32 ")", (int32_t)f2u(v), f2u(v));
	else
		snprintf(buf, size, "%.9g (0x%08" PRIx32 ")", (double)v, f2u(v));
}

/* Elementwise verdict: XO_FAIL_NONE when got matches ref within tol. */
static enum xo_fail judge(float got, float ref, double tol, bool i32)
{
	uint32_t g = f2u(got), rr = f2u(ref);

	if (g == POISON && rr != POISON)
		return XO_FAIL_UNWRITTEN;
	if (i32)
		return g == rr ? XO_FAIL_NONE : XO_FAIL_MISMATCH;
	if (isnan(ref))
		return isnan(got) ? XO_FAIL_NONE : XO_FAIL_NONFINITE;
	if (isinf(ref))
		return g == rr ? XO_FAIL_NONE : XO_FAIL_NONFINITE;
	if (!isfinite(got))
		return XO_FAIL_NONFINITE;
	if (tol == 0.0) /* bit-exact; the sign of zero is not part of the contract */
		return g == rr || (got == 0.0f && ref == 0.0f) ? XO_FAIL_NONE : XO_FAIL_MISMATCH;
	return fabs((double)got - (double)ref) <= tol ? XO_FAIL_NONE : XO_FAIL_MISMATCH;
}

static void compare_slot(struct hcase *h, int i, const char *bname, struct xo_case_result *r)
{
	const struct xo_case *c = h->c;
	bool i32 = h->ds[i].dtype == XO_DTYPE_I32;
	int64_t nbad = 0, first = -1;
	enum xo_fail first_kind = XO_FAIL_NONE;
	char at[96], gs[64], es[64];

	for (int64_t e = 0; e < h->dn[i]; e++) {
		enum xo_fail k = judge(h->got[i][e], h->ref[i][e], h->tol[i][e], i32);

		if (h->tol[i][e] > 0.0 && isfinite(h->got[i][e]) && isfinite(h->ref[i][e])) {
			double q = fabs((double)h->got[i][e] - (double)h->ref[i][e]) / h->tol[i][e];

			if (q > r->worst)
				r->worst = q;
		}
		if (!i32 && isfinite(h->got[i][e]) && isfinite(h->ref[i][e]) &&
		    fabs((double)h->got[i][e] - (double)h->ref[i][e]) > r->max_err) {
			r->max_err = fabs((double)h->got[i][e] - (double)h->ref[i][e]);
			r->max_bound = h->tol[i][e];
		}
		if (k == XO_FAIL_NONE)
			continue;
		fail(r, k);
		if (!nbad++) {
			first = e;
			first_kind = k;
		}
	}
	if (!nbad)
		return;
	r->nbad += nbad;
	coords(&h->ds[i], first, at, sizeof(at));
	value_str(h->got[i][first], i32, gs, sizeof(gs));
	value_str(h->ref[i][first], i32, es, sizeof(es));
	report(r, "%s %s %s mode=%s dst[%d] %s: %" PRId64 " of %" PRId64 " elements bad (%s)\n",
	       bname, xo_op_name(c->op), xo_dir_name(c->dir), xo_hmode_name(c->mode), i,
	       slot_name(c->op, c->dir, true, i), nbad, h->dn[i], xo_fail_name(first_kind));
	report(r, "  first bad: index %" PRId64 " %s: got %s, expected %s\n", first, at, gs, es);
	if (!i32 && isfinite(h->got[i][first]) && isfinite(h->ref[i][first])) {
		double d = fabs((double)h->got[i][first] - (double)h->ref[i][first]);
		double ul = ulp_of(h->ref[i][first]);

		if (h->tol[i][first] == 0.0)
			report(r, "  |diff| %.3g = %.3g ulp; bound: bit-exact\n", d,
			       ul ? d / ul : 0.0);
		else
			report(r, "  |diff| %.3g = %.3g ulp; bound %.3g = %.3g ulp\n", d,
			       ul ? d / ul : 0.0, h->tol[i][first],
			       ul ? h->tol[i][first] / ul : 0.0);
	}
}

/* ---- the guarded run of the backend under test ------------------------------- */

static enum xo_status run_guarded(struct hcase *h, struct xo_backend *be, const char *bname,
                                  struct xo_case_result *r)
{
	const struct xo_case *c = h->c;
	struct xo_tensor *ts[XO_MAX_SRC] = {0}, *parent[XO_MAX_DST] = {0}, *view[XO_MAX_DST] = {0};
	struct xo_op_args a = {.p = c->p};
	float *buf[XO_MAX_DST] = {0}, *back = NULL;
	enum xo_status st = XO_OK, op_st;
	int64_t maxn = 0;

	for (int i = 0; i < XO_MAX_SRC; i++) {
		if (!h->sn[i])
			continue;
		if (h->sn[i] > maxn)
			maxn = h->sn[i];
		st = xo_tensor_create(be, h->ss[i].dtype, h->ss[i].ndim, h->ss[i].dim, &ts[i]);
		if (!st)
			st = xo_tensor_write(ts[i], h->src[i], 0, h->sn[i]);
		if (st)
			goto out_free;
		a.src[i] = ts[i];
	}
	for (int i = 0; i < XO_MAX_DST; i++) {
		int64_t total = h->dn[i] + 2 * GUARD;

		if (!h->dn[i])
			continue;
		buf[i] = malloc(sizeof(float) * (size_t)total);
		if (!buf[i]) {
			st = xo_error(XO_ENOMEM, "harness: out of memory");
			goto out_free;
		}
		/* Guards hold the canary; the dst region the poison (or, for
		 * adam's in-place w, m, v, their inputs). */
		for (int64_t e = 0; e < total; e++)
			buf[i][e] = u2f(e < GUARD || e >= GUARD + h->dn[i] ? CANARY : POISON);
		if (h->init[i])
			memcpy(buf[i] + GUARD, h->init[i], sizeof(float) * (size_t)h->dn[i]);
		st = xo_tensor_create(be, h->ds[i].dtype, 1, &total, &parent[i]);
		if (!st)
			st = xo_tensor_write(parent[i], buf[i], 0, total);
		if (!st)
			st =
			    xo_tensor_view(parent[i], GUARD, h->ds[i].ndim, h->ds[i].dim, &view[i]);
		if (st)
			goto out_free;
		a.dst[i] = view[i];
	}

	op_st = xo_op_run(be, c->op, c->dir, &a);
	if (op_st) {
		fail(r, XO_FAIL_RUN);
		report(r, "%s %s %s mode=%s: the backend returned '%s': %s\n", bname,
		       xo_op_name(c->op), xo_dir_name(c->dir), xo_hmode_name(c->mode),
		       xo_status_str(op_st), xo_last_error());
		goto out_free;
	}

	for (int i = 0; i < XO_MAX_DST; i++) {
		int64_t bad = 0, first = 0;

		if (!h->dn[i])
			continue;
		st = xo_tensor_read(parent[i], buf[i], 0, h->dn[i] + 2 * GUARD);
		if (st)
			goto out_free;
		for (int64_t e = 0; e < h->dn[i] + 2 * GUARD; e++) {
			if (e >= GUARD && e < GUARD + h->dn[i])
				continue;
			if (f2u(buf[i][e]) != CANARY && !bad++)
				first = e;
		}
		if (bad) {
			int64_t rel = first < GUARD ? first - GUARD : first - GUARD - h->dn[i];

			fail(r, XO_FAIL_GUARD);
			report(r,
			       "%s %s %s mode=%s dst[%d] %s: %" PRId64
			       " guard elements written; first "
			       "%" PRId64 " %s the %s (0x%08" PRIx32 ", canary 0x%08" PRIx32 ")\n",
			       bname, xo_op_name(c->op), xo_dir_name(c->dir),
			       xo_hmode_name(c->mode), i, slot_name(c->op, c->dir, true, i), bad,
			       rel < 0 ? -rel : rel + 1, rel < 0 ? "before" : "past",
			       rel < 0 ? "start" : "end", f2u(buf[i][first]), CANARY);
		}
		memcpy(h->got[i], buf[i] + GUARD, sizeof(float) * (size_t)h->dn[i]);
	}

	/* Sources are const: read them back. */
	back = malloc(sizeof(float) * (size_t)(maxn ? maxn : 1));
	if (!back) {
		st = xo_error(XO_ENOMEM, "harness: out of memory");
		goto out_free;
	}
	for (int i = 0; i < XO_MAX_SRC; i++) {
		if (!h->sn[i])
			continue;
		st = xo_tensor_read(ts[i], back, 0, h->sn[i]);
		if (st)
			goto out_free;
		for (int64_t e = 0; e < h->sn[i]; e++)
			if (f2u(back[e]) != f2u(h->src[i][e])) {
				fail(r, XO_FAIL_SRC_CHANGED);
				report(r,
				       "%s %s %s mode=%s: src[%d] %s modified at index %" PRId64
				       "\n",
				       bname, xo_op_name(c->op), xo_dir_name(c->dir),
				       xo_hmode_name(c->mode), i,
				       slot_name(c->op, c->dir, false, i), e);
				break;
			}
	}
out_free:
	free(back);
	for (int i = 0; i < XO_MAX_DST; i++) {
		xo_tensor_free(view[i]);
		xo_tensor_free(parent[i]);
		free(buf[i]);
	}
	for (int i = 0; i < XO_MAX_SRC; i++)
		xo_tensor_free(ts[i]);
	return st;
}

/* ---- a case -------------------------------------------------------------------- */

static void hcase_free(struct hcase *h)
{
	for (int i = 0; i < XO_MAX_SRC; i++)
		free(h->src[i]);
	for (int i = 0; i < XO_MAX_DST; i++) {
		free(h->init[i]);
		free(h->ref[i]);
		free(h->mag[i]);
		free(h->got[i]);
		free(h->tol[i]);
	}
	free(h->z);
}

static enum xo_status hcase_alloc(struct hcase *h)
{
	const struct xo_case *c = h->c;
	bool conv = has_activation(c->op), mag = needs_mag(c->op);

	for (int i = 0; i < XO_MAX_SRC; i++) {
		h->sn[i] = slot_count(&h->ss[i]);
		if (h->sn[i] && !(h->src[i] = calloc((size_t)h->sn[i], sizeof(float))))
			return xo_error(XO_ENOMEM, "harness: out of memory");
	}
	for (int i = 0; i < XO_MAX_DST; i++) {
		size_t n = (size_t)(h->dn[i] = slot_count(&h->ds[i]));

		if (!n)
			continue;
		h->ref[i] = calloc(n, sizeof(float));
		h->got[i] = calloc(n, sizeof(float));
		h->tol[i] = calloc(n, sizeof(double));
		if (mag)
			h->mag[i] = calloc(n, sizeof(float));
		if (has_state(c, i))
			h->init[i] = calloc(n, sizeof(float));
		if (!h->ref[i] || !h->got[i] || !h->tol[i] || (mag && !h->mag[i]) ||
		    (has_state(c, i) && !h->init[i]))
			return xo_error(XO_ENOMEM, "harness: out of memory");
	}
	if (conv && c->dir == XO_DIR_FWD && !(h->z = calloc((size_t)h->dn[0], sizeof(float))))
		return xo_error(XO_ENOMEM, "harness: out of memory");
	return XO_OK;
}

enum xo_status xo_case_run(struct xo_backend *ref, struct xo_backend *be, const struct xo_case *c,
                           struct xo_case_result *r)
{
	struct hcase h = {.c = c};
	const char *bname = xo_backend_name(be);
	enum xo_status st;
	char why[256];

	memset(r, 0, sizeof(*r));
	xo_case_repro(c, bname, r->repro, sizeof(r->repro));
	if ((unsigned)c->op >= XO_OP_COUNT || (unsigned)c->dir >= XO_DIR_COUNT ||
	    (unsigned)c->mode >= XO_HMODE_COUNT)
		return xo_error(XO_EINVAL, "harness: unknown op, direction or mode");
	st = xo_op_shapes(c->op, c->dir, &c->p, h.ss, h.ds);
	if (st)
		return st;
	if (!xo_hmode_applies(c->op, c->dir, &c->p, c->mode))
		return xo_error(XO_EINVAL, "%s %s: mode %s does not apply%s", xo_op_name(c->op),
		                xo_dir_name(c->dir), xo_hmode_name(c->mode),
		                c->mode == XO_HMODE_EXACT ? " (a transcendental op or activation)"
		                                          : "");
	st = exact_amplitude(c, &h.amp);
	if (st)
		return st;
	st = hcase_alloc(&h);
	if (!st)
		st = fill_inputs(&h);
	if (st)
		goto out;
	if (c->mode == XO_HMODE_NONFINITE)
		plant_nonfinite(&h);

	st = run_plain(ref, c->op, c->dir, &c->p, h.src, h.init, h.ref, h.mag);
	if (st) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", xo_last_error());
		st = xo_error(st, "ref failed on %s %s: %s", xo_op_name(c->op), xo_dir_name(c->dir),
		              msg);
		goto out;
	}
	st = set_tolerances(&h, ref);
	if (st)
		goto out;

	for (int i = 0; i < XO_MAX_DST; i++) {
		if (!h.dn[i])
			continue;
		h.structural[i] = structural_zeros(&h, i);
		if (mistrusted(&h, i, why, sizeof(why))) {
			if (c->uninformative_ok) {
				r->uninformative = true;
				continue;
			}
			fail(r, XO_FAIL_MISTRUST);
			report(r,
			       "%s %s %s mode=%s dst[%d] %s: uninformative case: %s; the fill "
			       "(or the shape) must change\n",
			       bname, xo_op_name(c->op), xo_dir_name(c->dir),
			       xo_hmode_name(c->mode), i, slot_name(c->op, c->dir, true, i), why);
		}
	}
	if (r->fail)
		goto out_report;

	st = run_guarded(&h, be, bname, r);
	if (st || (r->fails & (1u << XO_FAIL_RUN)))
		goto out_report;
	for (int i = 0; i < XO_MAX_DST; i++)
		if (h.dn[i])
			compare_slot(&h, i, bname, r);
out_report:
	if (r->fail)
		report(r, "  seed %" PRIu64 "; repro: %s\n", c->seed, r->repro);
out:
	hcase_free(&h);
	return st;
}

/* ---- shapes-file lines ----------------------------------------------------------- */

enum xo_status xo_case_parse(const char *line, enum xo_op *op, struct xo_params *p)
{
	char buf[1024], *tok, *save = NULL, *hash;
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
	enum xo_status st;

	*op = XO_OP_COUNT;
	*p = xo_params_default();
	if (strlen(line) >= sizeof(buf))
		return xo_error(XO_EINVAL, "line longer than %zu characters", sizeof(buf) - 1);
	strcpy(buf, line);
	hash = strchr(buf, '#');
	if (hash)
		*hash = '\0';
	tok = strtok_r(buf, " \t\r\n", &save);
	if (!tok)
		return XO_OK;
	*op = xo_op_from_name(tok);
	if (*op == XO_OP_COUNT)
		return xo_error(XO_EINVAL, "unknown op '%s'", tok);
	*p = xo_params_default_op(*op);
	while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok) {
			*op = XO_OP_COUNT;
			return xo_error(XO_EINVAL, "expected key=value, got '%s'", tok);
		}
		*eq = '\0';
		st = xo_params_set(p, tok, eq + 1);
		if (st) {
			*op = XO_OP_COUNT;
			return st;
		}
	}
	st = xo_op_shapes(*op, XO_DIR_FWD, p, ss, ds);
	if (st)
		*op = XO_OP_COUNT;
	return st;
}
