/*
 * ref_act.c - reference relu, sigmoid and softmax, forward and backward, and
 * the activation derivative that conv1d and dense share. Shapes: x, y, dy,
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
	}
	XO_ASSERT(!"unknown activation");
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
