/*
 * cpu_loss.c - binary_crossentropy, mean_squared_error (forward: mean loss;
 * backward: d loss / d p) and binary_accuracy on the cpu backend, Keras 3
 * keras/src/losses/losses.py and keras/src/backend/jax/nn.py (BCE from
 * probabilities clips p to [1e-7, 1 - 1e-7] in float32), keras/src/metrics/
 * accuracy_metrics.py (binary_accuracy, threshold 0.5); the sparse forms
 * (int32 labels) of categorical crossentropy and accuracy; the cross-entropies
 * also from logits (from_logits: log_sigmoid, log_softmax). The formulas are in
 * include/xo/ops.def and reference/ref_loss.c. Scalar loops in double
 * (O(batch * ch), small next to the layers).
 */
#include <math.h>
#include <stdbool.h>

#include "cpu.h"

static double bce_clip(double q)
{
	const double lo = (double)1e-7f, hi = (double)(float)(1.0 - 1e-7);

	return q < lo ? lo : q > hi ? hi : q;
}

/* log(1 + exp(y)) without overflow (jnp.logaddexp(y, 0)) */
static double softplus(double y)
{
	return (y > 0.0 ? y : 0.0) + log1p(exp(-fabs(y)));
}

static enum xo_status cpu_bce_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *p = xo_tensor_f32(a->src[0]), *t = xo_tensor_f32(a->src[1]);
	int64_t total = a->p.batch * a->p.ch;
	double sum = 0.0;

	(void)be;
	for (int64_t k = 0; k < total; k++) {
		double q = bce_clip(p[k]), tk = t[k];

		/* from logits: log q = -softplus(-x), log(1 - q) = -softplus(x) */
		if (a->p.from_logits)
			sum -= tk * softplus(-(double)p[k]) + (1.0 - tk) * softplus(p[k]);
		else
			sum += tk * log(q) + (1.0 - tk) * log(1.0 - q);
	}
	xo_tensor_f32(a->dst[0])[0] = (float)(-sum / (double)total);
	return XO_OK;
}

static enum xo_status cpu_bce_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *p = xo_tensor_f32(a->src[0]), *t = xo_tensor_f32(a->src[1]);
	float *dp = xo_tensor_f32(a->dst[0]);
	int64_t total = a->p.batch * a->p.ch;

	(void)be;
	for (int64_t k = 0; k < total; k++) {
		double q = p[k], tk = t[k], v = 0.0;

		if (a->p.from_logits) /* sigmoid(x) - t */
			v = (1.0 / (1.0 + exp(-q)) - tk) / (double)total;
		else if (isnan(q))
			v = q;
		else if (bce_clip(q) == q)
			v = xo_cpu_clip_weight(q) * (-tk / q + (1.0 - tk) / (1.0 - q)) /
			    (double)total;
		dp[k] = (float)v;
	}
	return XO_OK;
}

static enum xo_status cpu_mse_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *p = xo_tensor_f32(a->src[0]), *t = xo_tensor_f32(a->src[1]);
	int64_t ch = a->p.ch;
	double sum = 0.0;

	(void)be;
	for (int64_t r = 0; r < a->p.batch; r++) {
		double row = 0.0;

		for (int64_t c = 0; c < ch; c++) {
			double d = xo_cpu_f32_sat((double)p[r * ch + c] - (double)t[r * ch + c]);

			row = xo_cpu_f32_sat(row + xo_cpu_f32_sat(d * d));
		}
		sum = xo_cpu_f32_sat(sum + row / (double)ch);
	}
	xo_tensor_f32(a->dst[0])[0] = (float)(sum / (double)a->p.batch);
	return XO_OK;
}

static enum xo_status cpu_mse_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *p = xo_tensor_f32(a->src[0]), *t = xo_tensor_f32(a->src[1]);
	float *dp = xo_tensor_f32(a->dst[0]);
	int64_t total = a->p.batch * a->p.ch;

	(void)be;
	for (int64_t k = 0; k < total; k++)
		dp[k] = (float)(xo_cpu_f32_sat(2.0 * xo_cpu_f32_sat((double)p[k] - (double)t[k])) /
		                (double)total);
	return XO_OK;
}

static enum xo_status cpu_binary_accuracy(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *p = xo_tensor_f32(a->src[0]), *t = xo_tensor_f32(a->src[1]);
	int64_t total = a->p.batch * a->p.ch, correct = 0;

	(void)be;
	for (int64_t k = 0; k < total; k++)
		correct += t[k] == (p[k] > 0.5f ? 1.0f : 0.0f);
	xo_tensor_f32(a->dst[0])[0] = (float)correct;
	return XO_OK;
}

/* sparse_categorical_crossentropy (Keras 3: one_hot of the label, then the
 * categorical form) and sparse_categorical_accuracy; t is int32 [batch]. */
static enum xo_status cpu_scce_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *p = xo_tensor_f32(a->src[0]);
	const int32_t *t = xo_tensor_i32(a->src[1]);
	int64_t n = a->p.batch, ch = a->p.ch;
	double total = 0.0;

	(void)be;
	for (int64_t r = 0; r < n; r++) {
		double s = 0.0;

		if (t[r] < 0 || t[r] >= ch)
			continue;
		if (a->p.from_logits) { /* log_softmax of the label's logit */
			total += (double)p[r * ch + t[r]] - xo_cpu_row_lse(p + r * ch, ch);
			continue;
		}
		for (int64_t c = 0; c < ch; c++)
			s = xo_cpu_f32_sat(s + p[r * ch + c]);
		total += log(bce_clip((double)p[r * ch + t[r]] / s));
	}
	xo_tensor_f32(a->dst[0])[0] = (float)(-total / (double)n);
	return XO_OK;
}

static enum xo_status cpu_scce_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *p = xo_tensor_f32(a->src[0]);
	const int32_t *t = xo_tensor_i32(a->src[1]);
	float *dp = xo_tensor_f32(a->dst[0]);
	int64_t n = a->p.batch, ch = a->p.ch;

	(void)be;
	for (int64_t r = 0; r < n; r++) {
		double s = 0.0, w = 0.0;

		if (a->p.from_logits) { /* (softmax(x) - [c == k]) / batch; 0 off range */
			double lse = xo_cpu_row_lse(p + r * ch, ch);
			bool in = t[r] >= 0 && t[r] < ch;

			for (int64_t c = 0; c < ch; c++)
				dp[r * ch + c] =
				    in ? (float)((exp((double)p[r * ch + c] - lse) - (c == t[r])) /
				                 (double)n)
				       : 0.0f;
			continue;
		}
		for (int64_t c = 0; c < ch; c++)
			s = xo_cpu_f32_sat(s + p[r * ch + c]);
		/* the clip weight of q = p[k] / s as Keras's float32 holds it */
		if (t[r] >= 0 && t[r] < ch)
			w = xo_cpu_clip_weight(
			    (double)(float)((double)p[r * ch + t[r]] / (double)(float)s));
		for (int64_t c = 0; c < ch; c++)
			dp[r * ch + c] =
			    w != 0.0
			        ? (float)(w *
			                  (1.0 / s - (c == t[r] ? 1.0 / (double)p[r * ch + c] : 0.0)) /
			                  (double)n)
			        : 0.0f;
	}
	return XO_OK;
}

static enum xo_status cpu_sparse_accuracy(struct xo_backend *be, const struct xo_op_args *a)
{
	const float *p = xo_tensor_f32(a->src[0]);
	const int32_t *t = xo_tensor_i32(a->src[1]);
	int64_t correct = 0;

	(void)be;
	for (int64_t r = 0; r < a->p.batch; r++)
		correct += xo_cpu_argmax_row(p + r * a->p.ch, a->p.ch) == t[r];
	xo_tensor_f32(a->dst[0])[0] = (float)correct;
	return XO_OK;
}

XO_CPU_ENTRY(binary_crossentropy, fwd, cpu_bce_fwd)
XO_CPU_ENTRY(binary_crossentropy, bwd, cpu_bce_bwd)
XO_CPU_ENTRY(mean_squared_error, fwd, cpu_mse_fwd)
XO_CPU_ENTRY(mean_squared_error, bwd, cpu_mse_bwd)
XO_CPU_ENTRY(binary_accuracy, fwd, cpu_binary_accuracy)
XO_CPU_ENTRY(sparse_categorical_crossentropy, fwd, cpu_scce_fwd)
XO_CPU_ENTRY(sparse_categorical_crossentropy, bwd, cpu_scce_bwd)
XO_CPU_ENTRY(sparse_categorical_accuracy, fwd, cpu_sparse_accuracy)
