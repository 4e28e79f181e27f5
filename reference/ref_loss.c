/*
 * ref_loss.c - reference categorical cross-entropy (forward, fused
 * softmax+CE backward; from probabilities or from logits) and accuracy. Shapes: p, t [batch][ch], classes on
 * the last axis.
 */
#include <math.h>
#include <stdbool.h>

#include "ref_internal.h"

/*
 * From logits (Keras's from_logits=True, keras/src/backend/jax/nn.py): the
 * categorical forms take jax.nn.log_softmax of the row, (x - m) - log(sum_c
 * exp(x_c - m)) with m the row's maximum; binary_crossentropy takes
 * log_sigmoid(x) = -softplus(-x) and log_sigmoid(-x), softplus(y) = max(y, 0)
 * + log1p(exp(-|y|)) (jnp.logaddexp(y, 0)). No clip on this path. The
 * gradients are jax.grad's: the row's softmax times the row's target sum
 * minus the target, sigmoid(x) - t, each divided as the mean divides.
 */

/* Row r's log-sum-exp, max-shifted: m + log(sum exp(x - m)); NaN in, NaN out
 * (+Inf gives Inf - Inf = NaN, as Keras's). */
static double row_lse(struct xo_ref_src x, int64_t r, int64_t ch)
{
	double m = xo_ref_ld(x, r * ch), s = 0.0;

	for (int64_t c = 1; c < ch; c++)
		if (xo_ref_ld(x, r * ch + c) > m || xo_ref_ld(x, r * ch + c) != xo_ref_ld(x, r * ch + c))
			m = xo_ref_ld(x, r * ch + c);
	for (int64_t c = 0; c < ch; c++)
		s += exp(xo_ref_ld(x, r * ch + c) - m);
	return m + log(s);
}

/* log(1 + exp(y)) without overflow */
static double softplus(double y)
{
	return (y > 0.0 ? y : 0.0) + log1p(exp(-fabs(y)));
}


/*
 * categorical_crossentropy fwd, Keras 3 semantics with from_logits=False:
 * for each row, q = p / sum(p row); q clipped to [eps, 1 - eps] with eps the
 * float32 1e-7 and 1 - eps rounded to float32 (Keras clips in the tensor's
 * float32 dtype); row loss = -sum_c t_c * log(q_c); loss[0] = sum of row
 * losses / batch. A NaN in p passes the clip and gives NaN; a zero row sum
 * gives NaN (0/0) or clips +Inf to 1 - eps; a row sum past the float32
 * range is +Inf (xo_ref_f32_sat), so every q is 0, clipped to eps, as Keras's.
 * mag[0]: sum over rows and classes of |t * log q|, / batch.
 */
enum xo_status xo_ref_categorical_crossentropy_fwd_math(const struct xo_params *p,
							const struct xo_ref_src *src,
							const struct xo_ref_dst *dst,
							const struct xo_ref_dst *mag)
{
	const double lo = (double)1e-7f, hi = (double)(float)(1.0 - 1e-7);
	int64_t n = p->batch, ch = p->ch;
	double total = 0.0, m = 0.0;

	if (p->from_logits) { /* -sum_c t_c (x_c - lse) */
		for (int64_t r = 0; r < n; r++) {
			double lse = row_lse(src[0], r, ch);

			for (int64_t c = 0; c < ch; c++) {
				double term = xo_ref_ld(src[1], r * ch + c) *
				              (xo_ref_ld(src[0], r * ch + c) - lse);

				total += term;
				m += fabs(term);
			}
		}
		xo_ref_st(dst[0], 0, -total / (double)n);
		xo_ref_st(mag[0], 0, m / (double)n);
		return XO_OK;
	}
	for (int64_t r = 0; r < n; r++) {
		double s = 0.0, row = 0.0;

		for (int64_t c = 0; c < ch; c++)
			s = xo_ref_f32_sat(s + xo_ref_ld(src[0], r * ch + c));
		for (int64_t c = 0; c < ch; c++) {
			double q = xo_ref_ld(src[0], r * ch + c) / s, term;

			if (q < lo)
				q = lo;
			else if (q > hi)
				q = hi;
			term = xo_ref_ld(src[1], r * ch + c) * log(q);
			row += term;
			m += fabs(term);
		}
		total += row;
	}
	xo_ref_st(dst[0], 0, -total / (double)n);
	xo_ref_st(mag[0], 0, m / (double)n);
	return XO_OK;
}

/*
 * The clip's gradient weight of a q that Keras clips to [eps, 1 - eps]
 * (float32 bounds): jnp.clip is max(eps, min(..)) and JAX's max and min pass
 * half the gradient to each side at a tie, so 1 strictly inside, 1/2 at a
 * bound exactly, 0 outside; a NaN compares neither way and keeps weight 1
 * (its term is NaN anyway).
 */
static double clip_weight(double q)
{
	const double lo = (double)1e-7f, hi = (double)(float)(1.0 - 1e-7);

	if (q < lo || q > hi)
		return 0.0;
	return q == lo || q == hi ? 0.5 : 1.0;
}

/* Keras's q = p / row sum in float32: the row sum rounded to float, the
 * quotient rounded to float, so that a q at a clip bound is the one Keras
 * sees (the clip's weight changes there). s is the row's f32-saturated sum. */
static double q_f32(double pc, double s)
{
	return (double)(float)(pc / (double)(float)s);
}

/*
 * categorical_crossentropy bwd: src {p, t}, dst {dz[batch][ch]}, the fused
 * softmax+CE gradient w.r.t. the softmax's input, through Keras's clip: with
 * w_c the clip weight of q_c = p_c / row sum (clip_weight, q_f32) and W =
 * sum_c w_c t_c, dz_c = (p_c W - w_c t_c) / batch. A one-hot row inside the
 * clip is (p - t) / batch; a row whose true class is clipped (q below 1e-7
 * or above 1 - 1e-7) adds nothing, one at a bound exactly half. The
 * softmax's Jacobian is taken with sum p = 1 (p is its output). mag |dz|.
 */
enum xo_status xo_ref_categorical_crossentropy_bwd_math(const struct xo_params *p,
							const struct xo_ref_src *src,
							const struct xo_ref_dst *dst,
							const struct xo_ref_dst *mag)
{
	int64_t n = p->batch, ch = p->ch;

	if (p->from_logits) { /* dz = (softmax(x) T - t) / batch, T = sum_c t_c */
		for (int64_t r = 0; r < n; r++) {
			double lse = row_lse(src[0], r, ch), tsum = 0.0;

			for (int64_t c = 0; c < ch; c++)
				tsum += xo_ref_ld(src[1], r * ch + c);
			for (int64_t c = 0; c < ch; c++) {
				double v = (exp(xo_ref_ld(src[0], r * ch + c) - lse) * tsum -
				            xo_ref_ld(src[1], r * ch + c)) /
				           (double)n;

				xo_ref_st(dst[0], r * ch + c, v);
				xo_ref_st(mag[0], r * ch + c, fabs(v));
			}
		}
		return XO_OK;
	}
	for (int64_t r = 0; r < n; r++) {
		double s = 0.0, w_sum = 0.0;

		for (int64_t c = 0; c < ch; c++)
			s = xo_ref_f32_sat(s + xo_ref_ld(src[0], r * ch + c));
		for (int64_t c = 0; c < ch; c++) {
			double t = xo_ref_ld(src[1], r * ch + c);

			if (t != 0.0)
				w_sum += clip_weight(q_f32(xo_ref_ld(src[0], r * ch + c), s)) * t;
		}
		for (int64_t c = 0; c < ch; c++) {
			double pc = xo_ref_ld(src[0], r * ch + c), t = xo_ref_ld(src[1], r * ch + c);
			double w = t != 0.0 ? clip_weight(q_f32(pc, s)) : 0.0;
			double v = (pc * w_sum - w * t) / (double)n;

			xo_ref_st(dst[0], r * ch + c, v);
			xo_ref_st(mag[0], r * ch + c, fabs(v));
		}
	}
	return XO_OK;
}

/* Index of the first maximum under `>` of row r (a NaN first element wins;
 * a later NaN never does). */
static int64_t row_argmax(struct xo_ref_src a, int64_t r, int64_t ch)
{
	double best = xo_ref_ld(a, r * ch);
	int64_t at = 0;

	for (int64_t c = 1; c < ch; c++) {
		double v = xo_ref_ld(a, r * ch + c);

		if (v > best) {
			best = v;
			at = c;
		}
	}
	return at;
}

/*
 * accuracy fwd: src {p[batch][ch], t[batch][ch]}, dst {idx[batch] (i32),
 * correct[1]}: idx[i] = argmax of p row i, correct[0] = number of rows where
 * argmax p == argmax t (both first maximum), as a float count.
 * mag: |idx| and correct (nothing is rounded).
 */
enum xo_status xo_ref_accuracy_fwd_math(const struct xo_params *p, const struct xo_ref_src *src,
					const struct xo_ref_dst *dst, const struct xo_ref_dst *mag)
{
	int64_t correct = 0;

	for (int64_t r = 0; r < p->batch; r++) {
		int64_t at = row_argmax(src[0], r, p->ch);

		if (at == row_argmax(src[1], r, p->ch))
			correct++;
		xo_ref_st(dst[0], r, (double)at);
		xo_ref_st(mag[0], r, (double)at);
	}
	xo_ref_st(dst[1], 0, (double)correct);
	xo_ref_st(mag[1], 0, (double)correct);
	return XO_OK;
}

/*
 * binary_crossentropy fwd, Keras 3 from probabilities (keras/src/losses/
 * losses.py binary_crossentropy: the mean over the last axis of
 * keras/src/backend/jax/nn.py binary_crossentropy, then the batch mean):
 * q = clip(p, eps, 1 - eps) with eps the float32 1e-7 and 1 - eps rounded to
 * float32 (as categorical_crossentropy above); element loss
 * -(t log q + (1 - t) log(1 - q)); loss[0] = sum / (batch * ch). A NaN in p
 * gives NaN. mag[0]: sum of |t log q| + |(1 - t) log(1 - q)|, / (batch * ch).
 */
static double bce_clip(double q)
{
	const double lo = (double)1e-7f, hi = (double)(float)(1.0 - 1e-7);

	return q < lo ? lo : q > hi ? hi : q;
}

enum xo_status xo_ref_binary_crossentropy_fwd_math(const struct xo_params *p,
                                                   const struct xo_ref_src *src,
                                                   const struct xo_ref_dst *dst,
                                                   const struct xo_ref_dst *mag)
{
	int64_t total = p->batch * p->ch;
	double sum = 0.0, m = 0.0;

	for (int64_t k = 0; k < total; k++) {
		double q = bce_clip(xo_ref_ld(src[0], k)), t = xo_ref_ld(src[1], k);
		double a = t * log(q), b = (1.0 - t) * log(1.0 - q);

		if (p->from_logits) { /* log q = -softplus(-x), log(1 - q) = -softplus(x) */
			a = -t * softplus(-xo_ref_ld(src[0], k));
			b = -(1.0 - t) * softplus(xo_ref_ld(src[0], k));
		}

		sum += a + b;
		m += fabs(a) + fabs(b);
	}
	xo_ref_st(dst[0], 0, -sum / (double)total);
	xo_ref_st(mag[0], 0, m / (double)total);
	return XO_OK;
}

/*
 * binary_crossentropy bwd: src {p, t}, dst {dp[batch][ch]}, d loss / d p
 * through Keras's clip (the unfused form: a sigmoid before it takes its own
 * backward pass): inside [eps, 1 - eps], dp = (-t / p + (1 - t) / (1 - p)) /
 * (batch * ch); outside, 0 (the clip's gradient); at a bound exactly, half
 * (clip_weight: JAX's max and min split a tie). mag |dp|.
 */
enum xo_status xo_ref_binary_crossentropy_bwd_math(const struct xo_params *p,
                                                   const struct xo_ref_src *src,
                                                   const struct xo_ref_dst *dst,
                                                   const struct xo_ref_dst *mag)
{
	int64_t total = p->batch * p->ch;

	for (int64_t k = 0; k < total; k++) {
		double q = xo_ref_ld(src[0], k), t = xo_ref_ld(src[1], k), v = 0.0;

		if (p->from_logits)
			v = (1.0 / (1.0 + exp(-q)) - t) / (double)total; /* sigmoid(x) - t */
		else if (q != q)
			v = q; /* NaN passes */
		else if (bce_clip(q) == q)
			v = clip_weight(q) * (-t / q + (1.0 - t) / (1.0 - q)) / (double)total;
		xo_ref_st(dst[0], k, v);
		xo_ref_st(mag[0], k, fabs(v));
	}
	return XO_OK;
}

/*
 * mean_squared_error fwd (keras/src/losses/losses.py mean_squared_error: mean
 * over the last axis of (p - t)^2, then the batch mean): loss[0] = (sum over
 * rows of (row sum of (p - t)^2) / ch) / batch, each difference, square and
 * sum Inf where Keras's float32 one overflows (xo_ref_f32_sat): a loss past the
 * float32 range is +Inf, an Inf difference too, and Inf - Inf NaN, as
 * Keras's. mag[0] the same (every term is >= 0).
 */
enum xo_status xo_ref_mean_squared_error_fwd_math(const struct xo_params *p,
                                                  const struct xo_ref_src *src,
                                                  const struct xo_ref_dst *dst,
                                                  const struct xo_ref_dst *mag)
{
	double sum = 0.0;

	for (int64_t r = 0; r < p->batch; r++) {
		double row = 0.0;

		for (int64_t c = 0; c < p->ch; c++) {
			double d = xo_ref_f32_sat(xo_ref_ld(src[0], r * p->ch + c) -
					   xo_ref_ld(src[1], r * p->ch + c));

			row = xo_ref_f32_sat(row + xo_ref_f32_sat(d * d));
		}
		sum = xo_ref_f32_sat(sum + row / (double)p->ch);
	}
	xo_ref_st(dst[0], 0, sum / (double)p->batch);
	xo_ref_st(mag[0], 0, sum / (double)p->batch);
	return XO_OK;
}

/* mean_squared_error bwd: dp = 2 (p - t) / (batch * ch), 2 (p - t) +-Inf
 * where Keras's float32 one overflows (jax.grad of the mean doubles the
 * difference before it scales it). mag |dp|. */
enum xo_status xo_ref_mean_squared_error_bwd_math(const struct xo_params *p,
                                                  const struct xo_ref_src *src,
                                                  const struct xo_ref_dst *dst,
                                                  const struct xo_ref_dst *mag)
{
	int64_t total = p->batch * p->ch;

	for (int64_t k = 0; k < total; k++) {
		double d = xo_ref_f32_sat(xo_ref_ld(src[0], k) - xo_ref_ld(src[1], k));
		double v = xo_ref_f32_sat(2.0 * d) / (double)total;

		xo_ref_st(dst[0], k, v);
		xo_ref_st(mag[0], k, fabs(v));
	}
	return XO_OK;
}

/*
 * binary_accuracy fwd (keras/src/metrics/accuracy_metrics.py, threshold 0.5):
 * src {p[batch][ch], t[batch][ch]}, dst {correct[1]}: the number of elements
 * where t == (p > 0.5 ? 1 : 0), as a float count (the metric is that over
 * batch * ch; a NaN p counts as 0). mag: correct itself.
 */
enum xo_status xo_ref_binary_accuracy_fwd_math(const struct xo_params *p,
                                               const struct xo_ref_src *src,
                                               const struct xo_ref_dst *dst,
                                               const struct xo_ref_dst *mag)
{
	int64_t total = p->batch * p->ch, correct = 0;

	for (int64_t k = 0; k < total; k++) {
		double y = xo_ref_ld(src[0], k) > 0.5 ? 1.0 : 0.0;

		correct += xo_ref_ld(src[1], k) == y;
	}
	xo_ref_st(dst[0], 0, (double)correct);
	xo_ref_st(mag[0], 0, (double)correct);
	return XO_OK;
}

/*
 * sparse_categorical_crossentropy fwd, Keras 3 from probabilities
 * (keras/src/losses/losses.py sparse_categorical_crossentropy ->
 * keras/src/backend/jax/nn.py: one_hot of the int32 label, then as
 * categorical_crossentropy above): for row r with label k = t[r],
 * q = clip(p[r][k] / sum(p row), eps, 1 - eps) (the sum +Inf past the
 * float32 range, xo_ref_f32_sat), row loss -log q; a label
 * outside [0, ch) is a zero one-hot row (jax.nn.one_hot) and adds 0 (the
 * model refuses such labels before training). loss[0] = sum / batch.
 * mag[0] = sum |log q| / batch.
 */
enum xo_status xo_ref_sparse_categorical_crossentropy_fwd_math(const struct xo_params *p,
                                                               const struct xo_ref_src *src,
                                                               const struct xo_ref_dst *dst,
                                                               const struct xo_ref_dst *mag)
{
	int64_t n = p->batch, ch = p->ch;
	double total = 0.0;

	for (int64_t r = 0; r < n; r++) {
		double k = xo_ref_ld(src[1], r), s = 0.0;

		if (!(k >= 0.0 && k < (double)ch))
			continue;
		if (p->from_logits) {
			total += xo_ref_ld(src[0], r * ch + (int64_t)k) - row_lse(src[0], r, ch);
			continue;
		}
		for (int64_t c = 0; c < ch; c++)
			s = xo_ref_f32_sat(s + xo_ref_ld(src[0], r * ch + c));
		total += log(bce_clip(xo_ref_ld(src[0], r * ch + (int64_t)k) / s));
	}
	xo_ref_st(dst[0], 0, -total / (double)n);
	xo_ref_st(mag[0], 0, fabs(total) / (double)n);
	return XO_OK;
}

/*
 * sparse_categorical_crossentropy bwd: src {p, t}, dst {dp[batch][ch]},
 * d loss / d p through the normalisation and the clip (the unfused form; a
 * softmax before it runs its own backward): with s the row sum and k the
 * label, dp[j] = w (1 / s - [j == k] / p[k]) / batch with w the clip weight
 * of q = p[k] / s in float32 (clip_weight, q_f32: 1 inside [eps, 1 - eps],
 * 1/2 at a bound exactly, 0 outside), 0 for a label out of range. mag |dp|.
 */
enum xo_status xo_ref_sparse_categorical_crossentropy_bwd_math(const struct xo_params *p,
                                                               const struct xo_ref_src *src,
                                                               const struct xo_ref_dst *dst,
                                                               const struct xo_ref_dst *mag)
{
	int64_t n = p->batch, ch = p->ch;

	for (int64_t r = 0; r < n; r++) {
		double k = xo_ref_ld(src[1], r), s = 0.0, w = 0.0;

		if (p->from_logits) { /* (softmax(x) - [c == k]) / batch; 0 off range */
			double lse = row_lse(src[0], r, ch);
			bool in = k >= 0.0 && k < (double)ch;

			for (int64_t c = 0; c < ch; c++) {
				double v = in ? (exp(xo_ref_ld(src[0], r * ch + c) - lse) -
				                 (c == (int64_t)k ? 1.0 : 0.0)) /
				                    (double)n
				              : 0.0;

				xo_ref_st(dst[0], r * ch + c, v);
				xo_ref_st(mag[0], r * ch + c, fabs(v));
			}
			continue;
		}
		for (int64_t c = 0; c < ch; c++)
			s = xo_ref_f32_sat(s + xo_ref_ld(src[0], r * ch + c));
		if (k >= 0.0 && k < (double)ch)
			w = clip_weight(q_f32(xo_ref_ld(src[0], r * ch + (int64_t)k), s));
		for (int64_t c = 0; c < ch; c++) {
			double v = 0.0;

			if (w != 0.0)
				v = w *
				    (1.0 / s - (c == (int64_t)k ? 1.0 / xo_ref_ld(src[0], r * ch + c)
				                                : 0.0)) /
				    (double)n;
			xo_ref_st(dst[0], r * ch + c, v);
			xo_ref_st(mag[0], r * ch + c, fabs(v));
		}
	}
	return XO_OK;
}

/*
 * sparse_categorical_accuracy fwd (keras/src/metrics/accuracy_metrics.py):
 * src {p[batch][ch], t[batch] (i32)}, dst {correct[1]}: the number of rows
 * whose first maximum of p equals t, as a float. mag: correct itself.
 */
enum xo_status xo_ref_sparse_categorical_accuracy_fwd_math(const struct xo_params *p,
                                                           const struct xo_ref_src *src,
                                                           const struct xo_ref_dst *dst,
                                                           const struct xo_ref_dst *mag)
{
	int64_t correct = 0;

	for (int64_t r = 0; r < p->batch; r++)
		correct += (double)row_argmax(src[0], r, p->ch) == xo_ref_ld(src[1], r);
	xo_ref_st(dst[0], 0, (double)correct);
	xo_ref_st(mag[0], 0, (double)correct);
	return XO_OK;
}
