/*
 * ref_act.c - reference relu, sigmoid, softmax, tanh, elu, gelu, softplus and
 * the newer Keras 3 activations (relu6 ...), forward and backward, and the
 * activation derivative that conv1d and dense share (for the activations they
 * fuse). Shapes: x, y, dy,
 * dx all [batch][len][ch]; softmax rows are the batch*len rows of ch.
 * dst may be the same array as a src (each element is read before it is
 * written), except for softmax bwd, which rereads its row for every element.
 */
#include <math.h>

#include "ref_internal.h"

double xo_ref_sigmoid(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

double xo_ref_relu(double x)
{
	if (x > 0.0 || isnan(x))
		return x;
	return 0.0;
}

double xo_ref_act_grad(enum xo_activation act, struct xo_ref_src y, struct xo_ref_src dy,
		       int64_t row, int64_t j, int64_t n)
{
	double yj = xo_ref_ld(y, row + j), g = xo_ref_ld(dy, row + j), s = 0.0;

	switch (act) {
	case XO_ACTIVATION_LINEAR:
		return g;
	case XO_ACTIVATION_RELU:
		return yj > 0.0 ? g : 0.0;
	case XO_ACTIVATION_SIGMOID:
		return g * yj * (1.0 - yj);
	case XO_ACTIVATION_SOFTMAX:
		for (int64_t k = 0; k < n; k++)
			s += xo_ref_ld(dy, row + k) * xo_ref_ld(y, row + k);
		return yj * (g - s);
	case XO_ACTIVATION_TANH: /* never fused: the ops below */
	case XO_ACTIVATION_ELU:
	case XO_ACTIVATION_GELU:
	case XO_ACTIVATION_SOFTPLUS:
	case XO_ACTIVATION_RELU6:
	case XO_ACTIVATION_HARD_SIGMOID:
	case XO_ACTIVATION_SILU:
	case XO_ACTIVATION_LOG_SOFTMAX:
	case XO_ACTIVATION_LEAKY_RELU:
		break;
	}
	XO_ASSERT(!"unknown activation");
}

double xo_ref_act_fused(enum xo_activation act, double v, double mx, double se)
{
	switch (act) {
	case XO_ACTIVATION_LINEAR:
		return v;
	case XO_ACTIVATION_RELU:
		return xo_ref_relu(v);
	case XO_ACTIVATION_SIGMOID:
		return xo_ref_sigmoid(v);
	case XO_ACTIVATION_SOFTMAX:
		return exp(v - mx) / se;
	case XO_ACTIVATION_TANH: /* never fused: refused by xo_op_check_shapes */
	case XO_ACTIVATION_ELU:
	case XO_ACTIVATION_GELU:
	case XO_ACTIVATION_SOFTPLUS:
	case XO_ACTIVATION_RELU6:
	case XO_ACTIVATION_HARD_SIGMOID:
	case XO_ACTIVATION_SILU:
	case XO_ACTIVATION_LOG_SOFTMAX:
	case XO_ACTIVATION_LEAKY_RELU:
		break;
	}
	XO_ASSERT(!"activation not fused");
	return v;
}

static int64_t act_elems(const struct xo_params *p)
{
	return p->batch * p->len * p->ch;
}

/* Shared by relu and sigmoid forward: src {x}, dst {y}, y = fn(x)
 * element-wise, mag |y|. */
static enum xo_status act_fwd(double (*fn)(double), const struct xo_params *p,
			      const struct xo_ref_src *src, const struct xo_ref_dst *dst,
			      const struct xo_ref_dst *mag)
{
	int64_t total = act_elems(p);

	for (int64_t k = 0; k < total; k++) {
		double v = fn(xo_ref_ld(src[0], k));

		xo_ref_st(dst[0], k, v);
		xo_ref_st(mag[0], k, fabs(v));
	}
	return XO_OK;
}

/* relu fwd: y = x if x > 0, NaN stays NaN, else +0. mag |y|. */
enum xo_status xo_ref_relu_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				    const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act_fwd(xo_ref_relu, p, src, dst, mag);
}

/* Shared by the three activations' backward: src {y, dy}, dst {dx}, dx =
 * xo_ref_act_grad from y. mag: |dx| for relu and sigmoid (no accumulation);
 * softmax |y_j| * (|dy_j| + sum_k |dy_k * y_k|), the magnitude of its row sum. */
static enum xo_status act_bwd(enum xo_activation act, const struct xo_params *p,
			      const struct xo_ref_src *src, const struct xo_ref_dst *dst,
			      const struct xo_ref_dst *mag)
{
	int64_t rows = p->batch * p->len, n = p->ch;

	for (int64_t r = 0; r < rows; r++) {
		double sm = 0.0;

		if (act == XO_ACTIVATION_SOFTMAX && xo_ref_dst_has(mag[0]))
			for (int64_t k = 0; k < n; k++)
				sm += fabs(xo_ref_ld(src[1], r * n + k) *
					   xo_ref_ld(src[0], r * n + k));
		for (int64_t j = 0; j < n; j++) {
			double m, g = xo_ref_act_grad(act, src[0], src[1], r * n, j, n);

			if (act == XO_ACTIVATION_SOFTMAX)
				m = fabs(xo_ref_ld(src[0], r * n + j)) *
				    (fabs(xo_ref_ld(src[1], r * n + j)) + sm);
			else
				m = fabs(g);
			xo_ref_st(dst[0], r * n + j, g);
			xo_ref_st(mag[0], r * n + j, m);
		}
	}
	return XO_OK;
}

/* relu bwd: dx = dy where y > 0, else 0 (y NaN: 0). */
enum xo_status xo_ref_relu_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				    const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act_bwd(XO_ACTIVATION_RELU, p, src, dst, mag);
}

/* sigmoid fwd: y = 1 / (1 + exp(-x)) in double; NaN stays NaN. mag |y|. */
enum xo_status xo_ref_sigmoid_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act_fwd(xo_ref_sigmoid, p, src, dst, mag);
}

/* sigmoid bwd: dx = dy * y * (1 - y). */
enum xo_status xo_ref_sigmoid_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act_bwd(XO_ACTIVATION_SIGMOID, p, src, dst, mag);
}

/*
 * softmax fwd over ch for each of the batch*len rows: m = the row's first
 * maximum under `>`, y = exp(x - m) / sum_k exp(x_k - m), all in double.
 * A NaN anywhere in the row makes the whole row NaN (through exp and the
 * sum); +Inf gives NaN (Inf - Inf). mag: |y| (the row sum adds positive
 * terms only, so it carries no cancellation).
 */
enum xo_status xo_ref_softmax_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t rows = p->batch * p->len, n = p->ch;

	for (int64_t r = 0; r < rows; r++) {
		double m = xo_ref_ld(src[0], r * n), s = 0.0;

		for (int64_t k = 1; k < n; k++)
			if (xo_ref_ld(src[0], r * n + k) > m)
				m = xo_ref_ld(src[0], r * n + k);
		for (int64_t k = 0; k < n; k++)
			s += exp(xo_ref_ld(src[0], r * n + k) - m);
		for (int64_t k = 0; k < n; k++) {
			double v = exp(xo_ref_ld(src[0], r * n + k) - m) / s;

			xo_ref_st(dst[0], r * n + k, v);
			xo_ref_st(mag[0], r * n + k, fabs(v));
		}
	}
	return XO_OK;
}

/* softmax bwd: dx_j = y_j * (dy_j - sum_k dy_k * y_k) per row. dx must not
 * alias y or dy (the row sum is reread for every element). */
enum xo_status xo_ref_softmax_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act_bwd(XO_ACTIVATION_SOFTMAX, p, src, dst, mag);
}

/*
 * The activations Keras 3 applies as keras.activations.* (keras/src/
 * activations/activations.py, which calls keras.ops; the JAX backend's
 * keras/src/backend/jax/nn.py maps those to jax.nn):
 *   tanh      ops.tanh
 *   elu       ops.elu(x, alpha): x if x > 0 else alpha * (exp(x) - 1) (the
 *             activation string's alpha 1.0, the ELU layer's its own)
 *             (jax.nn.elu: where(x > 0, x, alpha * expm1(x)))
 *   gelu      ops.gelu(x, approximate=False): x/2 (1 + erf(x / sqrt 2))
 *   softplus  ops.softplus: log(1 + exp(x)) (jax.nn.softplus is
 *             logaddexp(x, 0) = max(x, 0) + log1p(exp(-|x|)))
 * The reference evaluates each in double with forms equal to these in exact
 * arithmetic but free of cancellation, so that it stays the oracle in the
 * tails: gelu as x/2 erfc(-x / sqrt 2) (1 + erf(u) loses every digit for
 * u < -6, where gelu is ~1e-17 x and still a normal float), softplus as
 * max(x, 0) + log1p(exp(-|x|)) (log(1 + exp(x)) overflows for x > 709).
 */
static const double ref_sqrt1_2 = 0.70710678118654752440;  /* 1 / sqrt 2 */
static const double ref_rsqrt_2pi = 0.39894228040143267794; /* 1 / sqrt(2 pi) */

static double ref_tanh(double x)
{
	return tanh(x);
}


static double ref_gelu(double x)
{
	return 0.5 * x * erfc(-x * ref_sqrt1_2);
}

static double ref_softplus(double x)
{
	if (isnan(x))
		return x;
	return fmax(x, 0.0) + log1p(exp(-fabs(x)));
}

enum xo_status xo_ref_tanh_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				    const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act_fwd(ref_tanh, p, src, dst, mag);
}

/* elu fwd: x where x > 0, else alpha * expm1(x) (NaN: expm1 gives NaN); mag |y| */
enum xo_status xo_ref_elu_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				   const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t total = act_elems(p);
	double alpha = (double)p->alpha;

	for (int64_t k = 0; k < total; k++) {
		double x = xo_ref_ld(src[0], k);
		double v = x > 0.0 ? x : alpha * expm1(x);

		xo_ref_st(dst[0], k, v);
		xo_ref_st(mag[0], k, fabs(v));
	}
	return XO_OK;
}

enum xo_status xo_ref_gelu_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				    const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act_fwd(ref_gelu, p, src, dst, mag);
}

enum xo_status xo_ref_softplus_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
					const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act_fwd(ref_softplus, p, src, dst, mag);
}

/*
 * Derivative of each new activation, from s = y (tanh) or s = x (elu, gelu,
 * softplus), times g = dy; *m gets the magnitude of the terms summed (the
 * harness's bound for gelu, whose two terms cancel near x = -0.75):
 *   tanh      g (1 - y^2)
 *   elu       g if x > 0, else g (alpha exp(x))   (any alpha: from x, not y)
 *   gelu      g (Phi(x) + x phi(x)), Phi(x) = erfc(-x / sqrt 2) / 2,
 *             phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
 *   softplus  g / (1 + exp(-x))                (sigmoid(x))
 */
static double ref_act2_grad(enum xo_op op, double s, double g, double alpha, double *m)
{
	double v, a, b;

	switch (op) {
	case XO_OP_tanh:
		v = g * (1.0 - s * s);
		break;
	case XO_OP_elu:
		v = s > 0.0 ? g : g * (alpha * exp(s));
		break;
	case XO_OP_gelu:
		a = 0.5 * erfc(-s * ref_sqrt1_2);
		b = s * ref_rsqrt_2pi * exp(-0.5 * s * s);
		*m = fabs(g) * (fabs(a) + fabs(b));
		return g * (a + b);
	case XO_OP_softplus:
		v = g * xo_ref_sigmoid(s);
		break;
	default:
		XO_ASSERT(!"not a separate activation");
	}
	*m = fabs(v);
	return v;
}

static enum xo_status act2_bwd(enum xo_op op, const struct xo_params *p,
			       const struct xo_ref_src *src, const struct xo_ref_dst *dst,
			       const struct xo_ref_dst *mag)
{
	int64_t total = act_elems(p);

	for (int64_t k = 0; k < total; k++) {
		double m, v = ref_act2_grad(op, xo_ref_ld(src[0], k), xo_ref_ld(src[1], k),
					    (double)p->alpha, &m);

		xo_ref_st(dst[0], k, v);
		xo_ref_st(mag[0], k, m);
	}
	return XO_OK;
}

enum xo_status xo_ref_tanh_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				    const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act2_bwd(XO_OP_tanh, p, src, dst, mag);
}

enum xo_status xo_ref_elu_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				   const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act2_bwd(XO_OP_elu, p, src, dst, mag);
}

enum xo_status xo_ref_gelu_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				    const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act2_bwd(XO_OP_gelu, p, src, dst, mag);
}

enum xo_status xo_ref_softplus_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
					const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act2_bwd(XO_OP_softplus, p, src, dst, mag);
}

/*
 * The clipped activations of Keras 3 (keras/src/activations/activations.py,
 * JAX backend jax.nn), element-wise, backward from x (ops.def):
 *   relu6  min(max(x, 0), 6); derivative 1 on the open interval (0, 6) and 0
 *          elsewhere, the kinks included (jax.nn.relu6 defines its derivative
 *          so: 0 at x = 0 and at x = 6).
 *   hard_sigmoid  relu6(x + 3) / 6 (Keras 3; Keras 2's was 0.2 x + 0.5
 *          clipped); derivative 1/6 on (-3, 3), 0 elsewhere and at the kinks.
 * NaN stays NaN forward; its derivative is 0 (the interval test is false).
 */
static double ref_relu6(double x)
{
	if (isnan(x) || x >= 6.0)
		return isnan(x) ? x : 6.0;
	return x > 0.0 ? x : 0.0;
}

enum xo_status xo_ref_relu6_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				     const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act_fwd(ref_relu6, p, src, dst, mag);
}

/* Shared by the clipped activations' backward: src {x, dy}, dst {dx} =
 * dy * slope where lo < x < hi, else 0; mag |dx|. */
static enum xo_status clip_bwd(double lo, double hi, double slope, const struct xo_params *p,
			       const struct xo_ref_src *src, const struct xo_ref_dst *dst,
			       const struct xo_ref_dst *mag)
{
	int64_t total = act_elems(p);

	for (int64_t k = 0; k < total; k++) {
		double x = xo_ref_ld(src[0], k);
		double v = x > lo && x < hi ? xo_ref_ld(src[1], k) * slope : 0.0;

		xo_ref_st(dst[0], k, v);
		xo_ref_st(mag[0], k, fabs(v));
	}
	return XO_OK;
}

enum xo_status xo_ref_relu6_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				     const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return clip_bwd(0.0, 6.0, 1.0, p, src, dst, mag);
}

static double ref_hard_sigmoid(double x)
{
	return ref_relu6(x + 3.0) / 6.0; /* x + 3 exact in double for a float x */
}

enum xo_status xo_ref_hard_sigmoid_fwd_math(const struct xo_params *p,
					    const struct xo_ref_src *src,
					    const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act_fwd(ref_hard_sigmoid, p, src, dst, mag);
}

enum xo_status xo_ref_hard_sigmoid_bwd_math(const struct xo_params *p,
					    const struct xo_ref_src *src,
					    const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return clip_bwd(-3.0, 3.0, 1.0 / 6.0, p, src, dst, mag);
}

/*
 * silu (Keras 3's name; "swish" is its alias): ops.silu, jax.nn.silu, x
 * sigmoid(x). With e = exp(-|x|), s = sigmoid(x) and 1 - s = sigmoid(-x)
 * are 1 / (1 + e) and e / (1 + e), one for each sign, neither cancelling;
 * the derivative s + x s (1 - s) is a sum of two terms that cancel near x =
 * -1.28 (silu's minimum), so mag is |dy| (|s| + |x s (1 - s)|).
 */
static void ref_silu_parts(double x, double *s, double *c)
{
	double e = exp(-fabs(x));

	*s = x >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
	*c = x >= 0.0 ? e / (1.0 + e) : 1.0 / (1.0 + e);
}

static double ref_silu(double x)
{
	double s, c;

	if (isnan(x))
		return x;
	ref_silu_parts(x, &s, &c);
	return x * s; /* -inf: -inf * 0 = NaN, as x * sigmoid(x) */
}

enum xo_status xo_ref_silu_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				    const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	return act_fwd(ref_silu, p, src, dst, mag);
}

enum xo_status xo_ref_silu_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
				    const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t total = act_elems(p);

	for (int64_t k = 0; k < total; k++) {
		double x = xo_ref_ld(src[0], k), g = xo_ref_ld(src[1], k), s, c;

		ref_silu_parts(x, &s, &c);
		xo_ref_st(dst[0], k, g * (s + x * s * c));
		xo_ref_st(mag[0], k, fabs(g) * (fabs(s) + fabs(x * s * c)));
	}
	return XO_OK;
}

/*
 * log_softmax over ch for each of the batch*len rows (ops.log_softmax,
 * jax.nn.log_softmax): m the row's first maximum under `>`, y = (x - m) -
 * log(sum_k exp(x_k - m)), in double; a NaN in the row makes it all NaN, +Inf
 * gives NaN (as softmax). Backward from y: dx = dy - exp(y) sum_k dy_k, mag
 * |dy| + exp(y) sum_k |dy_k| (the two terms cancel). dx must not alias dy.
 */
enum xo_status xo_ref_log_softmax_fwd_math(const struct xo_params *p,
					   const struct xo_ref_src *src,
					   const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t rows = p->batch * p->len, n = p->ch;

	for (int64_t r = 0; r < rows; r++) {
		double m = xo_ref_ld(src[0], r * n), s = 0.0, l;

		for (int64_t k = 1; k < n; k++)
			if (xo_ref_ld(src[0], r * n + k) > m)
				m = xo_ref_ld(src[0], r * n + k);
		for (int64_t k = 0; k < n; k++)
			s += exp(xo_ref_ld(src[0], r * n + k) - m);
		l = log(s);
		for (int64_t k = 0; k < n; k++) {
			double v = (xo_ref_ld(src[0], r * n + k) - m) - l;

			xo_ref_st(dst[0], r * n + k, v);
			xo_ref_st(mag[0], r * n + k, fabs(v));
		}
	}
	return XO_OK;
}

enum xo_status xo_ref_log_softmax_bwd_math(const struct xo_params *p,
					   const struct xo_ref_src *src,
					   const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t rows = p->batch * p->len, n = p->ch;

	for (int64_t r = 0; r < rows; r++) {
		double s = 0.0, sa = 0.0;

		for (int64_t k = 0; k < n; k++) {
			s += xo_ref_ld(src[1], r * n + k);
			sa += fabs(xo_ref_ld(src[1], r * n + k));
		}
		for (int64_t k = 0; k < n; k++) {
			double e = exp(xo_ref_ld(src[0], r * n + k)), g = xo_ref_ld(src[1], r * n + k);

			xo_ref_st(dst[0], r * n + k, g - e * s);
			xo_ref_st(mag[0], r * n + k, fabs(g) + e * sa);
		}
	}
	return XO_OK;
}

/*
 * rescaling (Keras's Rescaling): y = x * multiplier + offset, evaluated in
 * double and rounded once on store (exact before the store: a float product
 * has 48 bits, and the sum's rounding in double sits far below the bound);
 * mag |x * multiplier| + |offset|, what the float evaluation's two roundings
 * scale with. Backward dx = dy * multiplier, mag |dx|.
 */
enum xo_status xo_ref_rescaling_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
					 const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t n = p->batch * p->len * p->ch;

	for (int64_t i = 0; i < n; i++) {
		double t = xo_ref_ld(src[0], i) * (double)p->multiplier;

		xo_ref_st(dst[0], i, t + (double)p->offset);
		xo_ref_st(mag[0], i, fabs(t) + fabs((double)p->offset));
	}
	return XO_OK;
}

enum xo_status xo_ref_rescaling_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
					 const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t n = p->batch * p->len * p->ch;

	for (int64_t i = 0; i < n; i++) {
		double t = xo_ref_ld(src[0], i) * (double)p->multiplier;

		xo_ref_st(dst[0], i, t);
		xo_ref_st(mag[0], i, fabs(t));
	}
	return XO_OK;
}

/*
 * leaky_relu (Keras's LeakyReLU, jax.nn.leaky_relu): y = x where x >= 0 (both
 * zeros keep their sign), else negative_slope * x; NaN fails the test and
 * gives slope * NaN = NaN. The double product of two floats is exact, so its
 * one rounding on store gives the float product's bits. mag |y|.
 * Backward from x: dx = dy where x >= 0 (1 at the kink, jax.grad's choice of
 * the select's first branch), else negative_slope * dy; mag |dx|.
 */
enum xo_status xo_ref_leaky_relu_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
					  const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t total = act_elems(p);
	double s = (double)p->negative_slope;

	for (int64_t k = 0; k < total; k++) {
		double x = xo_ref_ld(src[0], k);
		double v = x >= 0.0 ? x : s * x;

		xo_ref_st(dst[0], k, v);
		xo_ref_st(mag[0], k, fabs(v));
	}
	return XO_OK;
}

enum xo_status xo_ref_leaky_relu_bwd_math(const struct xo_params *p, const struct xo_ref_src *src,
					  const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t total = act_elems(p);
	double s = (double)p->negative_slope;

	for (int64_t k = 0; k < total; k++) {
		double g = xo_ref_ld(src[1], k);
		double v = xo_ref_ld(src[0], k) >= 0.0 ? g : s * g;

		xo_ref_st(dst[0], k, v);
		xo_ref_st(mag[0], k, fabs(v));
	}
	return XO_OK;
}
