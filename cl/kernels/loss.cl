/*
 * loss.cl - categorical cross-entropy forward/backward and accuracy.
 * p[batch][ch] are probabilities, t[batch][ch] one-hot (or soft) targets.
 *
 * The reductions (loss, correct count) run in ONE work-group of XO_RED_WG
 * work-items: each strides over rows, then a tree in local memory; launched
 * with global = local = XO_RED_WG. The count is an integer sum, so exact.
 */

#define XO_CE_EPS 1e-7f

/* Keras's clip of a probability to [eps, 1 - eps], NaN kept: OpenCL's clamp
 * is fmin(fmax(q, lo), hi), whose fmax turns a NaN into lo, and a NaN
 * prediction would give the finite loss -log(eps) (the reference, cpu and
 * Keras give NaN, which stops fit) */
static inline float xo_ce_clip(float q)
{
	return isnan(q) ? q : clamp(q, XO_CE_EPS, 1.0f - XO_CE_EPS);
}

/* The clip's gradient weight: 1 inside [eps, 1 - eps], 1/2 at a bound
 * exactly (JAX's max and min split a tie), 0 outside; NaN keeps 1
 * (reference/ref_loss.c, clip_weight). */
static inline float xo_ce_clip_weight(float q)
{
	if (q < XO_CE_EPS || q > 1.0f - XO_CE_EPS)
		return 0.0f;
	return q == XO_CE_EPS || q == 1.0f - XO_CE_EPS ? 0.5f : 1.0f;
}

/*
 * One row's cross-entropy, -sum_j t[j] * log(clip(p[j] / rowsum(p), eps,
 * 1 - eps)), and its first maximum; the ops below and the fused net (net.cl)
 * share them, so both sum in the same order. OpenCL 1.2 has no generic
 * address space: each is stamped out for __global rows (suffix _g) and
 * __local rows (_l).
 */
#define XO_ROW_FNS(as, sfx)                                                        \
	static inline float xo_row_ce_##sfx(as const float *p, as const float *t, int ch) \
	{                                                                          \
		float s = 0.0f, row = 0.0f;                                        \
                                                                                   \
		for (int j = 0; j < ch; j++)                                       \
			s += p[j];                                                 \
		for (int j = 0; j < ch; j++) {                                     \
			float q = xo_ce_clip(p[j] / s);                             \
                                                                                   \
			row -= t[j] * log(q);                                      \
		}                                                                  \
		return row;                                                        \
	}                                                                          \
                                                                                   \
	/* W = sum_j w_j t[j] of the fused gradient (w_j the clip weight of    \
	 * p[j] / rowsum); one division and compare per nonzero target */    \
	static inline float xo_row_ce_w_##sfx(as const float *p, as const float *t, int ch) \
	{                                                                          \
		float s = 0.0f, w = 0.0f;                                          \
                                                                                   \
		for (int j = 0; j < ch; j++)                                       \
			s += p[j];                                                 \
		for (int j = 0; j < ch; j++)                                       \
			if (t[j] != 0.0f)                                          \
				w += xo_ce_clip_weight(p[j] / s) * t[j];           \
		return w;                                                          \
	}                                                                          \
                                                                                   \
	/* dz[e] of the fused gradient given the row's W: (p W - w_e t) / n */   \
	static inline float xo_row_ce_dz_##sfx(as const float *p, as const float *t, int ch, \
					       int e, float w_sum, int n)          \
	{                                                                          \
		float s = 0.0f, w = 0.0f;                                          \
                                                                                   \
		if (t[e] != 0.0f) {                                                \
			for (int j = 0; j < ch; j++)                               \
				s += p[j];                                         \
			w = xo_ce_clip_weight(p[e] / s);                           \
		}                                                                  \
		return (p[e] * w_sum - w * t[e]) / (float)n;                       \
	}                                                                          \
                                                                                   \
	static inline int xo_row_argmax_##sfx(as const float *r, int ch)                 \
	{                                                                          \
		int best = 0;                                                      \
                                                                                   \
		for (int j = 1; j < ch; j++)                                       \
			if (r[j] > r[best])                                        \
				best = j;                                          \
		return best;                                                       \
	}

XO_ROW_FNS(__global, g)
XO_ROW_FNS(__local, l)

/*
 * From logits (Keras's from_logits=True, ops.def): a row's maximum m (NaN
 * if any is NaN) and sum exp(x - m), so log_softmax(x) = (x - m) - log(s)
 * and softmax(x) = exp(x - m) / s; no clip. softplus(y) = max(y, 0) +
 * log1p(exp(-|y|)) for binary_crossentropy's log_sigmoid.
 */
static inline float xo_row_max_g(__global const float *x, int ch)
{
	float m = x[0];

	for (int j = 1; j < ch; j++)
		if (x[j] > m || isnan(x[j]))
			m = x[j];
	return m;
}

static inline float xo_row_expsum_g(__global const float *x, int ch, float m)
{
	float s = 0.0f;

	for (int j = 0; j < ch; j++)
		s += exp(x[j] - m);
	return s;
}

static inline float xo_softplus(float y)
{
	return fmax(y, 0.0f) + log1p(exp(-fabs(y)));
}

/* -sum_j t[j] log_softmax(x)[j] of one row */
static inline float xo_row_ce_logits_g(__global const float *x, __global const float *t, int ch)
{
	float m = xo_row_max_g(x, ch), ls = log(xo_row_expsum_g(x, ch, m)), row = 0.0f;

	for (int j = 0; j < ch; j++)
		row -= t[j] * ((x[j] - m) - ls);
	return row;
}

/* loss[0] = mean_n -sum_j t * log(clip(p / rowsum(p), eps, 1 - eps)) (Keras). */
__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_categorical_crossentropy_fwd(__global const float *p, int po, __global const float *t,
				   int to, __global float *loss, int lo, int batch, int ch,
				   int logits)
{
	__local float part[XO_RED_WG];
	int lid = get_local_id(0);
	float acc = 0.0f;

	for (int n = lid; n < batch; n += XO_RED_WG)
		acc += logits ? xo_row_ce_logits_g(p + po + n * ch, t + to + n * ch, ch)
			      : xo_row_ce_g(p + po + n * ch, t + to + n * ch, ch);
	acc = xo_group_sum(part, lid, acc);
	if (lid == 0)
		loss[lo] = acc / (float)batch;
}

/* dz = (p W - w t) / batch: the gradient w.r.t. the softmax input (fused)
 * through Keras's clip (ops.def); (p - t) / batch for a one-hot row inside
 * the clip. */
__kernel void xo_cl_categorical_crossentropy_bwd(__global const float *p, int po,
						 __global const float *t, int to,
						 __global float *dz, int dzo, int batch, int ch,
						 int logits)
{
	int i = get_global_id(0);

	if (i < batch * ch) {
		int n = i / ch, e = i - n * ch;
		__global const float *pr = p + po + n * ch, *tr = t + to + n * ch;

		if (logits) { /* (softmax(x) T - t) / batch, T the row's target sum */
			float m = xo_row_max_g(pr, ch), s = xo_row_expsum_g(pr, ch, m), ts = 0.0f;

			for (int j = 0; j < ch; j++)
				ts += tr[j];
			dz[dzo + i] = (exp(pr[e] - m) / s * ts - tr[e]) / (float)batch;
			return;
		}
		dz[dzo + i] = xo_row_ce_dz_g(pr, tr, ch, e, xo_row_ce_w_g(pr, tr, ch), batch);
	}
}

/* idx[n] = argmax p[n]; correct[0] = count of argmax p == argmax t (float). */
__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_accuracy_fwd(__global const float *p, int po, __global const float *t, int to,
		   __global int *idx, int io, __global float *correct, int co, int batch, int ch)
{
	__local int part[XO_RED_WG];
	int lid = get_local_id(0);
	int hits = 0;

	for (int n = lid; n < batch; n += XO_RED_WG) {
		int a = xo_row_argmax_g(p + po + n * ch, ch);

		idx[io + n] = a;
		hits += a == xo_row_argmax_g(t + to + n * ch, ch);
	}
	hits = xo_group_sum_int(part, lid, hits);
	if (lid == 0)
		correct[co] = (float)hits;
}

/*
 * binary_crossentropy and mean_squared_error (Keras 3 losses.py; BCE from
 * probabilities clips p to [eps, 1 - eps] first, keras/src/backend/jax/nn.py)
 * and binary_accuracy (threshold 0.5): elementwise over batch * ch; the
 * forward reductions in one work-group as above, mean over batch * ch.
 */
__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_binary_crossentropy_fwd(__global const float *p, int po, __global const float *t, int to,
			      __global float *loss, int lo, int total, int logits)
{
	__local float part[XO_RED_WG];
	int lid = get_local_id(0);
	float acc = 0.0f;

	for (int k = lid; k < total; k += XO_RED_WG) {
		float q = xo_ce_clip(p[po + k]), tk = t[to + k];

		/* from logits: log q = -softplus(-x), log(1 - q) = -softplus(x) */
		if (logits)
			acc += tk * xo_softplus(-p[po + k]) + (1.0f - tk) * xo_softplus(p[po + k]);
		else
			acc -= tk * log(q) + (1.0f - tk) * log(1.0f - q);
	}
	acc = xo_group_sum(part, lid, acc);
	if (lid == 0)
		loss[lo] = acc / (float)total;
}

/* dp = (-t / p + (1 - t) / (1 - p)) / total inside the clip, half of it at
 * a bound exactly, 0 outside. */
__kernel void xo_cl_binary_crossentropy_bwd(__global const float *p, int po,
					    __global const float *t, int to, __global float *dp,
					    int dpo, int total, int logits)
{
	int k = get_global_id(0);

	if (k < total) {
		float q = p[po + k], tk = t[to + k], v = 0.0f;

		if (logits) /* sigmoid(x) - t */
			v = (1.0f / (1.0f + exp(-q)) - tk) / (float)total;
		else if (q >= XO_CE_EPS && q <= 1.0f - XO_CE_EPS)
			v = xo_ce_clip_weight(q) * (-tk / q + (1.0f - tk) / (1.0f - q)) /
			    (float)total;
		else if (isnan(q))
			v = q;
		dp[dpo + k] = v;
	}
}

__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_mean_squared_error_fwd(__global const float *p, int po, __global const float *t, int to,
			     __global float *loss, int lo, int total, int ch)
{
	__local float part[XO_RED_WG];
	int lid = get_local_id(0), rows = total / ch;
	float acc = 0.0f;

	/* Keras's order of reductions: each row's mean, then the batch mean,
	 * so a float sum overflows to Inf where Keras's does */
	for (int r = lid; r < rows; r += XO_RED_WG) {
		float row = 0.0f;

		for (int c = 0; c < ch; c++) {
			float d = p[po + r * ch + c] - t[to + r * ch + c];

			row += d * d;
		}
		acc += row / (float)ch;
	}
	acc = xo_group_sum(part, lid, acc);
	if (lid == 0)
		loss[lo] = acc / (float)rows;
}

/* dp = 2 (p - t) / total. */
__kernel void xo_cl_mean_squared_error_bwd(__global const float *p, int po,
					   __global const float *t, int to, __global float *dp,
					   int dpo, int total)
{
	int k = get_global_id(0);

	if (k < total)
		dp[dpo + k] = 2.0f * (p[po + k] - t[to + k]) / (float)total;
}

/* correct[0] = count of elements with t == (p > 0.5 ? 1 : 0), as a float. */
__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_binary_accuracy_fwd(__global const float *p, int po, __global const float *t, int to,
			  __global float *correct, int co, int total)
{
	__local int part[XO_RED_WG];
	int lid = get_local_id(0);
	int hits = 0;

	for (int k = lid; k < total; k += XO_RED_WG)
		hits += t[to + k] == (p[po + k] > 0.5f ? 1.0f : 0.0f);
	hits = xo_group_sum_int(part, lid, hits);
	if (lid == 0)
		correct[co] = (float)hits;
}

/*
 * sparse_categorical_crossentropy (Keras 3: jax one_hot of the int32 label,
 * then the categorical form above) and sparse_categorical_accuracy; t[batch]
 * int32. A label outside [0, ch) is a zero one-hot row: loss 0, gradient 0.
 */
__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_sparse_categorical_crossentropy_fwd(__global const float *p, int po,
					  __global const int *t, int to, __global float *loss,
					  int lo, int batch, int ch, int logits)
{
	__local float part[XO_RED_WG];
	int lid = get_local_id(0);
	float acc = 0.0f;

	for (int n = lid; n < batch; n += XO_RED_WG) {
		__global const float *row = p + po + n * ch;
		int k = t[to + n];
		float s = 0.0f;

		if (k < 0 || k >= ch)
			continue;
		if (logits) { /* -log_softmax(x)[k] */
			float m = xo_row_max_g(row, ch);

			acc -= (row[k] - m) - log(xo_row_expsum_g(row, ch, m));
			continue;
		}
		for (int j = 0; j < ch; j++)
			s += row[j];
		acc -= log(xo_ce_clip(row[k] / s));
	}
	acc = xo_group_sum(part, lid, acc);
	if (lid == 0)
		loss[lo] = acc / (float)batch;
}

/* dp[j] = w (1 / s - [j == k] / p[k]) / batch, w the clip weight of p[k] / s. */
__kernel void xo_cl_sparse_categorical_crossentropy_bwd(__global const float *p, int po,
							__global const int *t, int to,
							__global float *dp, int dpo, int batch,
							int ch, int logits)
{
	int i = get_global_id(0);

	if (i < batch * ch) {
		int n = i / ch, j = i - n * ch, k = t[to + n];
		__global const float *row = p + po + n * ch;
		float s = 0.0f, v = 0.0f;

		if (logits) { /* (softmax(x) - [j == k]) / batch; 0 off range */
			float m = xo_row_max_g(row, ch);

			if (k >= 0 && k < ch)
				v = (exp(row[j] - m) / xo_row_expsum_g(row, ch, m) -
				     (j == k ? 1.0f : 0.0f)) /
				    (float)batch;
			dp[dpo + i] = v;
			return;
		}

		for (int c = 0; c < ch; c++)
			s += row[c];
		if (k >= 0 && k < ch) {
			float w = xo_ce_clip_weight(row[k] / s);

			if (w != 0.0f)
				v = w * (1.0f / s - (j == k ? 1.0f / row[k] : 0.0f)) / (float)batch;
		}
		dp[dpo + i] = v;
	}
}

__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_sparse_categorical_accuracy_fwd(__global const float *p, int po, __global const int *t,
				      int to, __global float *correct, int co, int batch, int ch)
{
	__local int part[XO_RED_WG];
	int lid = get_local_id(0);
	int hits = 0;

	for (int n = lid; n < batch; n += XO_RED_WG)
		hits += xo_row_argmax_g(p + po + n * ch, ch) == t[to + n];
	hits = xo_group_sum_int(part, lid, hits);
	if (lid == 0)
		correct[co] = (float)hits;
}
