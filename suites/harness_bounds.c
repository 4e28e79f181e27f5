/*
 * harness_bounds.c - magnitudes and tolerances: every op family's bound,
 * each derived next to its op (the recurrent ops' in harness_rnn.c).
 */
#include "harness_internal.h"

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
			case XO_ACTIVATION_RELU6:
			case XO_ACTIVATION_HARD_SIGMOID:
			case XO_ACTIVATION_SILU:
			case XO_ACTIVATION_LOG_SOFTMAX:
			case XO_ACTIVATION_LEAKY_RELU:
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

		st = xo_hcase_run_plain(ref, c->op, c->dir, &lin, h->src, NULL, zout, NULL);
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
		st = xo_hcase_run_plain(ref, c->op, c->dir, &lin, abs_src, NULL, out, NULL);
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
		st = xo_hcase_run_plain(ref, c->op, c->dir, &lin, abs_src, NULL, h->mag, NULL);
		if (st)
			goto out_free;
	}
	if (c->p.activation == XO_ACTIVATION_SOFTMAX) {
		for (int64_t e = 0; e < h->sn[3]; e++)
			abs_src[3][e] = (float)err[e];
		st = xo_hcase_run_plain(ref, c->op, c->dir, &lin, abs_src, NULL, out, NULL);
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
	} else if (c->op == XO_OP_depthwise_conv2d) {
		int64_t oh = 1, ow = 1, pl;

		/* depthwise: an output sums its channel's kh*kw taps; dx sums
		 * taps * depth_multiplier terms; dw, db the oh*ow outputs of
		 * each sample */
		xo_depthwise_conv2d_geometry(p, &oh, &ow, &pad, &pl);
		k[0] = c->dir == XO_DIR_FWD ? p->kernel_size * xo_params_width_axis(p).kernel_size +
		                                  (p->use_bias ? 1 : 0)
		                            : p->kernel_size * xo_params_width_axis(p).kernel_size *
		                                  p->depth_multiplier;
		k[1] = c->dir == XO_DIR_FWD ? 0 : p->batch * oh * ow;
		k[2] = k[1];
		return;
	} else if (c->op == XO_OP_conv2d_transpose) {
		int64_t oh = 1, ow = 1, pl, kw = xo_params_width_axis(p).kernel_size;

		/* transposed: at most kh*kw taps land on an output, each
		 * summing ch products (kh*kw*ch, an upper bound: a stride s
		 * lands only about k/s of an axis's taps); dx sums kh*kw*filters
		 * terms; dw the batch's input positions; db its outputs */
		xo_conv2d_transpose_geometry(p, &oh, &ow, &pad, &pl);
		k[0] = c->dir == XO_DIR_FWD ? p->kernel_size * kw * p->ch + (p->use_bias ? 1 : 0)
		                            : p->kernel_size * kw * p->filters;
		k[1] = c->dir == XO_DIR_FWD ? 0 : p->batch * p->len * p->width;
		k[2] = c->dir == XO_DIR_FWD ? 0 : p->batch * oh * ow;
		return;
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
 * The cross-entropies from logits (from_logits=1), a float backend against
 * the double reference; u the unit roundoff, OpenCL's exp and log within 3
 * ulp (6u), log1p 2 ulp (4u), division 2.5 ulp (5u).
 * Categorical, per row: m = max x is exact; x - m rounds (u |x - m|), which
 *   exp turns into a relative error, plus its own 6u; the sum s of ch
 *   positive terms adds (ch - 1) u: e_s = (ch + 5) u + u D relative, D the
 *   row's largest |x - m|; log s then errs by e_s + 6u |log s| absolutely;
 *   lp_c = (x_c - m) - log s rounds (u |lp_c|) and inherits u |x_c - m|, and
 *   t lp_c one more u |lp_c|: per term |t_c| (u |x_c - m| + e_s + 6u
 *   |log s| + 2u |lp_c|). The sums over the row and the batch (any order)
 *   (ch + batch) u sum |t lp|; the division by batch 5u and the store u on
 *   |loss|: fwd tol = C_ACC ((sum over terms + (ch + batch) u sum |t lp|) /
 *   batch + 6u |loss|). Sparse: the same with t one-hot.
 * Categorical bwd: dz = (exp(x_e - m) / s T - t_e) / batch: the softmax
 *   relative u |x_e - m| + 6u + e_s + 5u, T's (ch - 1) u and the product's
 *   u, the difference u, the division 5u and the store u on the result:
 *   C_ACC (sm T ((ch + 12) u + u |x_e - m| + e_s) + 7u |sm T - t_e|) / batch.
 * Binary fwd: softplus(y) = max(y, 0) + log1p(exp(-|y|)): exp's 6u on e =
 *   exp(-|y|) carried through log1p (at most 6u e absolutely), log1p's 4u
 *   and the sum's u on softplus: 6u e + 5u sp; the products by t and 1 - t
 *   (u, and 1 - t's u) and the element's sum u: per element |t| (6u e + 8u
 *   sp(-x)) + |1 - t| (6u e + 9u sp(x)); the sum of N terms (N - 1) u S, S =
 *   sum of |terms|, the division 5u and store u of |loss|.
 * Binary bwd: sigmoid = 1 / (1 + exp(-x)): 6u + u + 5u = 12u relative; the
 *   difference, the division by N and the store 7u on the result:
 *   C_ACC (12u sigmoid + 7u |dp N|) / N.
 */
static void tol_logits(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	int64_t n = p->batch, ch = p->ch;
	bool fwd = h->c->dir == XO_DIR_FWD;

	if (h->c->op == XO_OP_binary_crossentropy) {
		int64_t total = n * ch;
		double terms = 0.0, size = 0.0;

		for (int64_t k = 0; k < total; k++) {
			double x = h->src[0][k], t = h->src[1][k], e = exp(-fabs(x));
			double spn = (x < 0.0 ? -x : 0.0) + log1p(e), spp = (x > 0.0 ? x : 0.0) + log1p(e);
			double sig = 1.0 / (1.0 + exp(-x));

			if (fwd) {
				terms += fabs(t) * (6.0 * U * e + 8.0 * U * spn) +
				         fabs(1.0 - t) * (6.0 * U * e + 9.0 * U * spp);
				size += fabs(t) * spn + fabs(1.0 - t) * spp;
			} else {
				h->tol[0][k] = C_ACC * (12.0 * U * sig + 7.0 * U * fabs(sig - t)) /
				                   (double)total +
				               TINY;
			}
		}
		if (fwd)
			h->tol[0][0] = C_ACC * ((terms + (double)(total - 1) * U * size) / (double)total +
			                        6.0 * U * fabs((double)h->ref[0][0])) +
			               TINY;
		return;
	}
	{
		bool sparse = h->c->op == XO_OP_sparse_categorical_crossentropy;
		double terms = 0.0, size = 0.0;

		for (int64_t r = 0; r < n; r++) {
			const float *x = h->src[0] + r * ch;
			double m = x[0], s = 0.0, d = 0.0, ls, es, tsum = 0.0;
			int32_t k = -1;

			if (sparse)
				memcpy(&k, &h->src[1][r], 4);
			for (int64_t c = 1; c < ch; c++)
				m = x[c] > m ? x[c] : m;
			for (int64_t c = 0; c < ch; c++) {
				s += exp(x[c] - m);
				d = fabs(x[c] - m) > d ? fabs(x[c] - m) : d;
				tsum += sparse ? (c == k) : fabs((double)h->src[1][r * ch + c]);
			}
			ls = log(s);
			es = (double)(ch + 5) * U + U * d;
			for (int64_t c = 0; c < ch; c++) {
				double t = sparse ? (c == k) : h->src[1][r * ch + c];
				double lp = (x[c] - m) - ls, sm = exp(lp);

				if (fwd) {
					terms += fabs(t) * (U * fabs(x[c] - m) + es + 6.0 * U * fabs(ls) +
					                    2.0 * U * fabs(lp));
					size += fabs(t * lp);
				} else {
					h->tol[0][r * ch + c] =
					    C_ACC *
					        (sm * tsum * ((double)(ch + 12) * U + U * fabs(x[c] - m) + es) +
					         7.0 * U * fabs(sm * tsum - t)) /
					        (double)n +
					    TINY;
				}
			}
		}
		if (fwd)
			h->tol[0][0] = C_ACC * ((terms + (double)(ch + n) * U * size) / (double)n +
			                        6.0 * U * fabs((double)h->ref[0][0])) +
			               TINY;
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

/* The rounding of x - sh, the shift the layer_normalization kernels take
 * off each value of a row before its moments (sh = 0: batch_normalization,
 * unshifted, exact). With the shift, the mean's error e_mu below is u times
 * the spread about sh, not about 0: nothing on a constant row, nothing from
 * a common offset. */
static double norm_shift_err(double x, double sh)
{
	return sh != 0.0 ? U * fabs(x - sh) : 0.0;
}

/*
 * The error of a normalization's statistics over the n values x[k * stride]
 * (batch_normalization: a channel over the rows; layer_normalization: a row
 * over its channels), the first half of the derivation below: the exact mean
 * mu and biased variance v (in double, from the float inputs), and the
 * bounds e_mu, e_v of their float evaluation.
 */
static void norm_moments_err(const float *x, int64_t n, int64_t stride, double sh, double *mu,
                             double *e_mu, double *v, double *e_v)
{
	double dn = (double)n, m = 0.0, m1 = 0.0, q = 0.0, e = 0.0, em;

	for (int64_t k = 0; k < n; k++) {
		m += x[k * stride];
		m1 += fabs((double)x[k * stride] - sh);
	}
	m /= dn;
	m1 /= dn;
	em = (dn + 5.0) * U * m1;
	for (int64_t k = 0; k < n; k++) {
		double d = x[k * stride] - m, dd = em + norm_shift_err(x[k * stride], sh) +
		                                   U * (fabs(d) + em);

		q += d * d;
		e += 2.0 * fabs(d) * dd + dd * dd + (dn + 1.0) * U * (fabs(d) + dd) * (fabs(d) + dd);
	}
	q /= dn;
	*mu = m;
	*e_mu = em;
	*v = q;
	*e_v = e / dn + 6.0 * U * q;
}

/* Dx: the error of xh = d r, from d = x - mu exactly, the mean's e_mu, the
 * shift's rounding e_x (norm_shift_err) and r's relative error dr (the
 * derivation below). */
static double norm_xhat_err(double d, double r, double e_mu, double e_x, double dr)
{
	double dd = e_mu + e_x + U * (fabs(d) + e_mu);

	return r * dd + fabs(d * r) * (dr + U);
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
		double mu = 0.0, v = 0.0, e_mu = 0.0, e_v = 0.0, s, r, e_s, dr;

		if (train) {
			norm_moments_err(x + c, rows, ch, 0.0, &mu, &e_mu, &v, &e_v);
		} else {
			mu = h->init[1][c];
			v = h->init[2][c];
		}
		s = v + eps;
		r = 1.0 / sqrt(s);
		e_s = e_v + U * (s + e_v);
		dr = e_s / (2.0 * s) + 11.0 * U;
		for (int64_t k = 0; k < rows; k++)
			dx[k] = norm_xhat_err(x[k * ch + c] - mu, r, e_mu, 0.0, dr);
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

/* conv1d, conv2d, dense */
static enum xo_status bound_conv_dense(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool exact = c->mode == XO_HMODE_EXACT;
	enum xo_status st = XO_OK;
	double *prop[XO_MAX_DST] = {0};
	int64_t k[XO_MAX_DST];
	int64_t last = c->op == XO_OP_dense                ? p->units
	               : c->op == XO_OP_depthwise_conv2d ? p->ch * p->depth_multiplier
	                                                 : p->filters;

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
			case XO_ACTIVATION_RELU6:
			case XO_ACTIVATION_HARD_SIGMOID:
			case XO_ACTIVATION_SILU:
			case XO_ACTIVATION_LOG_SOFTMAX:
			case XO_ACTIVATION_LEAKY_RELU:
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
#define BOUND_conv1d bound_conv_dense
#define BOUND_conv2d bound_conv_dense
#define BOUND_dense bound_conv_dense
#define BOUND_depthwise_conv2d bound_conv_dense
#define BOUND_conv2d_transpose bound_conv_dense

/* max_pooling1d */
static enum xo_status bound_max_pool1d(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool exact = c->mode == XO_HMODE_EXACT;

	(void)ref;
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
}
#define BOUND_max_pooling1d bound_max_pool1d

/* max_pooling2d */
static enum xo_status bound_max_pool2d(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;
	bool exact = c->mode == XO_HMODE_EXACT;

	(void)ref;
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
}
#define BOUND_max_pooling2d bound_max_pool2d

/* average_pooling1d, global_average_pooling1d, average_pooling2d, global_average_pooling2d */
static enum xo_status bound_avg_pool(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_case *c = h->c;
	bool exact = c->mode == XO_HMODE_EXACT;

	(void)ref;
	if (!exact)
		tol_avg_pool(h);
	return XO_OK;
}
#define BOUND_average_pooling1d bound_avg_pool
#define BOUND_global_average_pooling1d bound_avg_pool
#define BOUND_average_pooling2d bound_avg_pool
#define BOUND_global_average_pooling2d bound_avg_pool

/* global_max_pooling1d, global_max_pooling2d: a copy of x, dy or 0: exact */
static enum xo_status bound_global_max_pool(struct hcase *h, struct xo_backend *ref)
{
	(void)h;
	(void)ref;
	return XO_OK;
}
#define BOUND_global_max_pooling1d bound_global_max_pool
#define BOUND_global_max_pooling2d bound_global_max_pool

/* sigmoid */
static enum xo_status bound_sigmoid(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_case *c = h->c;

	(void)ref;
	for (int64_t e = 0; e < h->dn[0]; e++)
		h->tol[0][e] = (c->dir == XO_DIR_FWD ? ULP_SIGMOID_FWD : ULP_SIGMOID_BWD) *
		                   ulp_of(h->ref[0][e]) +
		               TINY;
	return XO_OK;
}
#define BOUND_sigmoid bound_sigmoid

/* tanh, elu, softplus */
static enum xo_status bound_tanh_elu_softplus(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_case *c = h->c;
	static const double u[][2] = {{ULP_TANH_FWD, ULP_TANH_BWD},
	                              {ULP_ELU_FWD, ULP_ELU_BWD},
	                              {ULP_SOFTPLUS_FWD, ULP_SOFTPLUS_BWD}};
	int k = c->op == XO_OP_tanh ? 0 : c->op == XO_OP_elu ? 1 : 2;
	/* elu's alpha other than 1: its product rounds once more forward */
	double extra = k == 1 && c->dir == XO_DIR_FWD && c->p.alpha != 1.0f ? ULP_ELU_ALPHA : 0.0;

	(void)ref;
	for (int64_t e = 0; e < h->dn[0]; e++)
		h->tol[0][e] = (u[k][c->dir] + extra) * ulp_of(h->ref[0][e]) + TINY;
	return XO_OK;
}
#define BOUND_tanh bound_tanh_elu_softplus
#define BOUND_elu bound_tanh_elu_softplus
#define BOUND_softplus bound_tanh_elu_softplus

/* hard_sigmoid */
static enum xo_status bound_hard_sigmoid(struct hcase *h, struct xo_backend *ref)
{
	double ulps = h->c->dir == XO_DIR_FWD ? ULP_HARD_SIGMOID_FWD : ULP_HARD_SIGMOID_BWD;

	(void)ref;
	for (int64_t e = 0; e < h->dn[0]; e++)
		h->tol[0][e] = ulps * ulp_of(h->ref[0][e]) + TINY;
	return XO_OK;
}
#define BOUND_hard_sigmoid bound_hard_sigmoid

/* silu */
static enum xo_status bound_silu(struct hcase *h, struct xo_backend *ref)
{
	bool fwd = h->c->dir == XO_DIR_FWD;

	(void)ref;
	for (int64_t e = 0; e < h->dn[0]; e++)
		h->tol[0][e] = fwd ? ULP_SILU_FWD * ulp_of(h->ref[0][e]) + TINY
		                   : ULP_SILU_FACTOR * U * h->mag[0][e] + TINY;
	return XO_OK;
}
#define BOUND_silu bound_silu

/* log_softmax (harness_internal.h) */
static enum xo_status bound_log_softmax(struct hcase *h, struct xo_backend *ref)
{
	int64_t n = h->c->p.ch;

	(void)ref;
	for (int64_t r = 0; r < h->dn[0] / n; r++) {
		const float *x = h->src[0] + r * n;
		double m = x[0], lo = x[0], s = 0.0;

		for (int64_t j = 1; j < n; j++) {
			m = fmax(m, x[j]);
			lo = fmin(lo, x[j]);
		}
		for (int64_t j = 0; j < n; j++)
			s += exp(x[j] - m);
		for (int64_t j = 0; j < n; j++) {
			int64_t i = r * n + j;

			h->tol[0][i] = h->c->dir == XO_DIR_FWD
			                   ? C_ACC * U *
			                             log_softmax_fwd_abs(x[j] - m, m - lo, n, log(s),
			                                                 h->ref[0][i]) +
			                         TINY
			                   : C_ACC * (ULP_LOG_SOFTMAX_BWD + (double)n) * U *
			                             h->mag[0][i] +
			                         TINY;
		}
	}
	return XO_OK;
}
#define BOUND_log_softmax bound_log_softmax

/* gelu */
static enum xo_status bound_gelu(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_case *c = h->c;

	(void)ref;
	for (int64_t e = 0; e < h->dn[0]; e++)
		h->tol[0][e] = c->dir == XO_DIR_FWD
		                   ? gelu_fwd_ulps(h->src[0][e]) * ulp_of(h->ref[0][e]) + TINY
		                   : gelu_bwd_factor(h->src[0][e]) * U * h->mag[0][e] + TINY;
	return XO_OK;
}
#define BOUND_gelu bound_gelu

/* softmax */
static enum xo_status bound_softmax(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;

	(void)ref;
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
}
#define BOUND_softmax bound_softmax

/* categorical_crossentropy */
static enum xo_status bound_cce(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_case *c = h->c;
	const struct xo_params *p = &c->p;

	(void)ref;
	if (p->from_logits) {
		tol_logits(h);
		return XO_OK;
	}
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
}
#define BOUND_categorical_crossentropy bound_cce

/* adam */
static enum xo_status bound_adam(struct hcase *h, struct xo_backend *ref)
{
	(void)ref;
	tol_adam(h);
	return XO_OK;
}
#define BOUND_adam bound_adam

/* batch_normalization */
static enum xo_status bound_batch_normalization(struct hcase *h, struct xo_backend *ref)
{
	(void)ref;
	return tol_batch_normalization(h);
}
#define BOUND_batch_normalization bound_batch_normalization

/*
 * layer_normalization, real fills: the statistics of each row of C = ch
 * values (N = batch*len rows), shifted by the row's first value s (the
 * kernels'): the mean's e_mu = (C + 5) u mean |x - s| and each deviation
 * (x - s) - m carries one more rounding u |x - s| (norm_shift_err), so a
 * constant row is exact (bound u |beta|) and an offset costs nothing. Per
 * row, norm_moments_err gives e_mu and e_V,
 * then e_s, dr and Dx_c as for batch_normalization (its derivation above);
 *   y_c       |g_c| Dx_c + 2 u |g_c xh_c| + u |beta_c|; and the reference's u |y|
 * Backward, per row, with gy_c = gamma_c dy_c (one rounding, u |gy_c|):
 *   sg        e_sg = C u sum |gy|   (the C roundings of gy, C - 1 additions)
 *   sgx       e_sgx = sum |gy| Dx + (C + 1) u sum |gy xh|
 *   dx_c      F = r / C (relative error dr + 7u), B = C gy - sg - xh sgx,
 *             MB = C |gy| + |sg| + |xh sgx|:
 *             |F| (e_sg + C u |gy_c| + Dx_c |sgx| + |xh_c| e_sgx + 5 u MB) + |F| MB (dr + 8u)
 * and per channel over the N rows (as batch_normalization's, the rows'
 * Dx in):
 *   dgamma    e_dg = sum |dy| Dx + N u sum |dy xh|
 *   dbeta     e_db = (N - 1) u sum |dy|
 * and the reference's rounding of each. Times C_ACC for the higher orders.
 */
static void tol_ln_row(struct hcase *h, int64_t k, double *dxe, double *acc)
{
	const struct xo_params *p = &h->c->p;
	int64_t ch = p->ch;
	const float *x = h->src[0] + k * ch;
	double n = (double)ch, mu, e_mu, v, e_v, s, r, dr, sg = 0.0, sgx = 0.0, s1 = 0.0;
	double s2 = 0.0, e_sgx = 0.0, e_sg, f;

	norm_moments_err(x, ch, 1, x[0], &mu, &e_mu, &v, &e_v);
	s = v + p->epsilon;
	r = 1.0 / sqrt(s);
	dr = (e_v + U * (s + e_v)) / (2.0 * s) + 11.0 * U;
	for (int64_t c = 0; c < ch; c++)
		dxe[c] = norm_xhat_err(x[c] - mu, r, e_mu, norm_shift_err(x[c], x[0]), dr);
	if (h->c->dir == XO_DIR_FWD) {
		for (int64_t c = 0; c < ch; c++) {
			double g = h->sn[1] ? h->src[1][c] : 1.0, b = h->sn[2] ? h->src[2][c] : 0.0;
			double xh = (x[c] - mu) * r;

			h->tol[0][k * ch + c] =
			    C_ACC * (fabs(g) * dxe[c] + 2.0 * U * fabs(g * xh) + U * fabs(b) +
			             U * fabs((double)h->ref[0][k * ch + c])) +
			    TINY;
		}
		return;
	}
	for (int64_t c = 0; c < ch; c++) {
		double dy = h->src[2][k * ch + c], xh = (x[c] - mu) * r;
		double gy = (h->sn[1] ? h->src[1][c] : 1.0) * dy;

		sg += gy;
		sgx += gy * xh;
		s1 += fabs(gy);
		s2 += fabs(gy * xh);
		e_sgx += fabs(gy) * dxe[c];
		acc[c] += fabs(dy) * dxe[c];
		acc[ch + c] += fabs(dy * xh);
		acc[2 * ch + c] += fabs(dy);
	}
	e_sg = n * U * s1;
	e_sgx += (n + 1.0) * U * s2;
	f = r / n;
	for (int64_t c = 0; c < ch && h->dn[0]; c++) {
		double xh = (x[c] - mu) * r;
		double gy = (h->sn[1] ? h->src[1][c] : 1.0) * h->src[2][k * ch + c];
		double mb = n * fabs(gy) + fabs(sg) + fabs(xh * sgx);

		h->tol[0][k * ch + c] =
		    C_ACC * (f * (e_sg + n * U * fabs(gy) + dxe[c] * fabs(sgx) + fabs(xh) * e_sgx +
		                  5.0 * U * mb) +
		             f * mb * (dr + 8.0 * U) + U * fabs((double)h->ref[0][k * ch + c])) +
		    TINY;
	}
}

static enum xo_status tol_layer_normalization(struct hcase *h)
{
	const struct xo_params *p = &h->c->p;
	int64_t rows = p->batch * p->len, ch = p->ch;
	double n = (double)rows;
	/* Dx of a row; per channel sum |dy| Dx, sum |dy xh|, sum |dy| */
	double *dxe = calloc((size_t)(4 * ch), sizeof(double)), *acc = dxe + ch;

	if (!dxe)
		return xo_error(XO_ENOMEM, "harness: out of memory");
	for (int64_t k = 0; k < rows; k++)
		tol_ln_row(h, k, dxe, acc);
	for (int64_t c = 0; c < ch && h->c->dir == XO_DIR_BWD; c++) {
		if (h->dn[1])
			h->tol[1][c] = C_ACC * (acc[c] + n * U * acc[ch + c] +
			                        U * fabs((double)h->ref[1][c])) +
			               TINY;
		if (h->dn[2])
			h->tol[2][c] = C_ACC * ((n - 1.0) * U * acc[2 * ch + c] +
			                        U * fabs((double)h->ref[2][c])) +
			               TINY;
	}
	free(dxe);
	return XO_OK;
}

static enum xo_status bound_layer_normalization(struct hcase *h, struct xo_backend *ref)
{
	(void)ref;
	return tol_layer_normalization(h);
}
#define BOUND_layer_normalization bound_layer_normalization

/* binary_crossentropy, mean_squared_error */
static enum xo_status bound_bce_mse(struct hcase *h, struct xo_backend *ref)
{
	(void)ref;
	if (h->c->p.from_logits)
		tol_logits(h);
	else
		tol_bce_mse(h);
	return XO_OK;
}
#define BOUND_binary_crossentropy bound_bce_mse
#define BOUND_mean_squared_error bound_bce_mse

/* binary_accuracy, sparse_categorical_accuracy: integer counts: exact */
static enum xo_status bound_counts(struct hcase *h, struct xo_backend *ref)
{
	(void)h;
	(void)ref;
	return XO_OK;
}
#define BOUND_binary_accuracy bound_counts
#define BOUND_sparse_categorical_accuracy bound_counts

/* sparse_categorical_crossentropy */
static enum xo_status bound_scce(struct hcase *h, struct xo_backend *ref)
{
	(void)ref;
	if (h->c->p.from_logits)
		tol_logits(h);
	else
		tol_scce(h);
	return XO_OK;
}
#define BOUND_sparse_categorical_crossentropy bound_scce

/* sgd */
static enum xo_status bound_sgd(struct hcase *h, struct xo_backend *ref)
{
	(void)ref;
	tol_sgd(h);
	return XO_OK;
}
#define BOUND_sgd bound_sgd

/* rmsprop */
static enum xo_status bound_rmsprop(struct hcase *h, struct xo_backend *ref)
{
	(void)ref;
	tol_rmsprop(h);
	return XO_OK;
}
#define BOUND_rmsprop bound_rmsprop

/* embedding */
static enum xo_status bound_embedding(struct hcase *h, struct xo_backend *ref)
{
	(void)ref;
	tol_embedding(h);
	return XO_OK;
}
#define BOUND_embedding bound_embedding

/*
 * Exact results:
 *   relu       max(x, 0), dy or 0
 *   relu6      min(max(x, 0), 6), dy or 0
 *   leaky_relu x or s x, dy or s dy: a select and one float product, rounded
 *              once as the reference's double product is on its store
 *   flatten    a copy
 *   dropout    x * scale, scale = 1/(1-rate) in float: one rounding, exact
 *   accuracy, gather
 *   pad        copies and zeros (zero padding, cropping)
 *   permute    copies (each output cell one input cell)
 *   flip       copies (each output cell one input cell)
 *   merge      a + b, a - b, a * b, (a + b) / 2 and dy times 1, -1, 1/2, a
 *              or b: one float rounding of the exact value, as the reference
 *              stores it; maximum, minimum, concatenate: choices and copies
 */
static enum xo_status bound_exact(struct hcase *h, struct xo_backend *ref)
{
	(void)h;
	(void)ref;
	return XO_OK;
}
#define BOUND_relu bound_exact
#define BOUND_leaky_relu bound_exact /* one rounded product, as the reference's store */
#define BOUND_flatten bound_exact
#define BOUND_dropout bound_exact
#define BOUND_accuracy bound_exact
#define BOUND_gather bound_exact
#define BOUND_relu6 bound_exact
#define BOUND_pad bound_exact
#define BOUND_permute bound_exact
#define BOUND_flip bound_exact
#define BOUND_mask_outer bound_exact /* 0 or 1 from comparisons */
#define BOUND_masking bound_exact    /* selects and compares: no arithmetic */
#define BOUND_merge bound_exact

/*
 * up_sampling: the forward is a copy: exact. The backward sums K = repeats *
 * repeats_w gradients per dx cell, in float in ops.def's order on the
 * backends, in double on the reference: Higham's bound for K - 1 additions,
 * (K - 1) u sum |dy| (over the cell's K gradients), plus u |ref| for the reference's one
 * rounding, times C_ACC (as embedding's scatter-add). Exact mode's integer
 * sums are exact: 0. K = 1 is a copy: 0.
 */
static enum xo_status bound_up_sampling(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_params *p = &h->c->p;
	int64_t r = p->repeats, rw = p->repeats_w, oh = p->len * r, ow = p->width * rw;
	double k = (double)(r * rw);

	(void)ref;
	if (h->c->dir == XO_DIR_FWD || h->c->mode == XO_HMODE_EXACT || k <= 1.0)
		return XO_OK;
	for (int64_t e = 0; e < h->dn[0]; e++) {
		int64_t c = e % p->ch, cell = e / p->ch, j = cell % p->width;
		int64_t i = cell / p->width % p->len, n = cell / p->width / p->len;
		double m = 0.0; /* sum |dy| over the cell's K gradients */

		for (int64_t a = 0; a < r; a++)
			for (int64_t b = 0; b < rw; b++)
				m += fabs((double)h->src[0][((n * oh + i * r + a) * ow + j * rw + b) *
								p->ch +
							    c]);
		h->tol[0][e] = C_ACC * ((k - 1.0) * U * m + U * fabs((double)h->ref[0][e])) + TINY;
	}
	return XO_OK;
}
#define BOUND_up_sampling bound_up_sampling

/*
 * rescaling: forward fl(fl(x m) + o) on the backends (or one rounding where
 * the product and sum contract to an fma), the exact x m + o rounded once
 * on the reference: |err| <= u |x m| (the product) + u |x m + o| (the sum)
 * + u |ref| (the reference's store) <= 2u (|x m| + |o|) + u |ref|. The
 * backward dy m rounds once everywhere: the same bits, 0. Exact mode's
 * integers times a power-of-two multiplier plus an integer offset are exact
 * (quick.txt's exact-friendly lines): 0 there as well, any other multiplier
 * takes the bound.
 */
static enum xo_status bound_rescaling(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_params *p = &h->c->p;
	double m = (double)p->multiplier, o = fabs((double)p->offset);
	int ex;
	bool exact = h->c->mode == XO_HMODE_EXACT && frexp(m, &ex) == 0.5 && o == floor(o);

	(void)ref;
	if (h->c->dir == XO_DIR_BWD || exact)
		return XO_OK;
	for (int64_t e = 0; e < h->dn[0]; e++)
		h->tol[0][e] = 2.0 * U * (fabs((double)h->src[0][e] * m) + o) +
			       U * fabs((double)h->ref[0][e]) + TINY;
	return XO_OK;
}
#define BOUND_rescaling bound_rescaling

/*
 * normalization, y = (x - mean) / den, den = max(sqrt(variance), 1e-7f),
 * against the reference's exact value rounded once. Relative errors, each
 * step's own: the difference u (correctly rounded everywhere), the root 6u
 * (OpenCL C's sqrt, 3 ulp, an ulp at most 2u of the value; the cpu's sqrtf
 * u), max exact (and 1-Lipschitz: a root on the other side of 1e-7f moves
 * den by no more than the root's error), the quotient 5u (OpenCL's x/y,
 * 2.5 ulp; the cpu's u), the reference's store u: 13u to first order, the
 * products of those terms below another u: 14u |ref|. Backward dy / den:
 * the root, the quotient, the store: 12u, 13u |ref| with the same margin.
 *
 * invert=1, y = mean + x * den: the root 6u of den, the product u, so the
 * computed product is within 7u |x den| (plus 6u^2) of x den; the sum adds
 * u of its value, at most u (|mean| + |x den|) to first order, and the
 * reference's store u |ref| <= u (|mean| + |x den|): 9u M, M = |mean| +
 * |x den| (the sum may cancel: the error scales with its terms, not with
 * y), and a u for the higher-order terms: 10u M, M computed here from the
 * inputs (den in double). A contracted fma rounds once less: within it.
 * Backward dy * den: the root 6u, the product u, the store u, a u of
 * margin: 9u |ref|.
 */
#define ULP_NORMALIZATION_FWD 14.0
#define ULP_NORMALIZATION_BWD 13.0
#define ULP_NORMALIZATION_INV_FWD 10.0
#define ULP_NORMALIZATION_INV_BWD 9.0
static enum xo_status bound_normalization(struct hcase *h, struct xo_backend *ref)
{
	bool fwd = h->c->dir == XO_DIR_FWD, inv = h->c->p.invert;
	double k = inv ? (fwd ? ULP_NORMALIZATION_INV_FWD : ULP_NORMALIZATION_INV_BWD)
	               : (fwd ? ULP_NORMALIZATION_FWD : ULP_NORMALIZATION_BWD);
	int64_t ch = h->c->p.ch;

	(void)ref;
	for (int64_t e = 0; e < h->dn[0]; e++) {
		double m = fabs((double)h->ref[0][e]);

		if (inv && fwd) {
			double s = sqrt((double)h->src[2][e % ch]);
			double den = s < (double)1e-7f ? (double)1e-7f : s;

			m = fabs((double)h->src[1][e % ch]) + fabs((double)h->src[0][e] * den);
		}
		h->tol[0][e] = k * U * m + TINY;
	}
	return XO_OK;
}
#define BOUND_normalization bound_normalization

/* simple_rnn, lstm, gru */
static enum xo_status bound_rnn(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_case *c = h->c;

	(void)ref;
	if (c->dir == XO_DIR_FWD)
		xo_hcase_tol_rnn_fwd(h);
	else
		xo_hcase_tol_rnn_bwd(h);
	return XO_OK;
}
#define BOUND_simple_rnn bound_rnn
#define BOUND_lstm bound_rnn
#define BOUND_gru bound_rnn

/*
 * attention, real fills; per (sample n, head h, query row i) over its nk
 * keys (causal: j <= i), every quantity in double from the float inputs:
 *   score     s_j = (q_i / sqrt(dk)) . k_j: the query's scaling (or sgemm's
 *             alpha after the sum) and dk products and dk - 1 additions in
 *             any order: e_s_j = (dk + 2) u A_j, A_j = sum |q k| / sqrt(dk)
 *   prob      p_j = softmax_j(s): the inputs' errors move p_j by at most
 *             p_j (|e_s_j| + sum p |e_s|) <= 2 p_j max e_s (tol_softmax_rows),
 *             its own rounding softmax_ulps(R, nk) ulps of p_j (R the row's
 *             range): e_p_j
 *   o         sum_j p_j v_j: sum e_p_j |v_j| + (nk + 1) u sum p_j |v_j|
 * Backward, with dp_ij = dy_i . v_j (e_dp = (dv + 1) u sum |dy v|):
 *   D_i       sum_j p dp: e_D = sum (e_p |dp| + p e_dp) + (nk + 1) u sum p |dp|
 *   ds_ij     p (dp - D): e_ds = e_p |dp - D| + p (e_dp + e_D) + 3 u p (|dp| + |D|)
 *   dq_i      sum_j ds k / sqrt(dk): (sum_j e_ds |k| + (nk + 2) u sum_j |ds k|) / sqrt(dk)
 *   dk_j      sum_i ds q / sqrt(dk): (sum_i e_ds |q| + (Tq + 2) u sum_i |ds q|) / sqrt(dk)
 *   dv_j      sum_i p dy: sum_i e_p |dy| + (Tq + 1) u sum_i p |dy|
 * (the + 2 of dq and dk: the scale's rounding, applied to ds on cl), each
 * plus the reference's rounding u |ref|, times C_ACC for the higher orders.
 * Dropout (training, rate > 0) gives every p_ij a weight w_ij, 0 or
 * 1 / (1 - rate) in float, the same bits on every backend (the same Philox
 * draw, the same float constant), so it adds no disagreement of its own
 * beyond one rounding of each product: o and dv sum pd = p w with
 * e_pd = w e_p + u pd, and D and ds read dp = (dy . v) w with
 * e_dp = w (dv + 1) u sum |dy v| + u |dp|; the sums above keep their form
 * with these in place of p, e_p, dp, e_dp.
 * The mask source (attention_mask=1) only changes which keys a row keeps
 * (the same bits decide on every backend): nk is the row's count of kept
 * keys, the dropped ones have p = ds = 0 exactly and add no error. A row
 * that keeps none has p = 1/Tk in float on every key (its only error the
 * rounding of 1/Tk, e_p = u p; 0 with dropout, exact), accumulated over
 * nk = Tk terms, and ds = 0 exactly.
 */
struct attn_bound {
	const struct xo_params *p;
	int64_t tq, tk, h, dk, dv;
	double scale;
	bool drop;                      /* training with dropout > 0 */
	const float *m;                 /* the mask [batch][tq][tk], or NULL */
	double *pr, *ep, *ds, *eds, *w; /* [tq][tk] of the current (n, h) */
	double *nk;                     /* [tq]: the terms each row sums (kept keys) */
};

/* The dropout weight of p_ij in (n, hd), the op's (ops.def): 1 without
 * dropout, else 0 or 1 / (1 - rate) in float. */
static double attn_bound_weight(const struct attn_bound *a, int64_t n, int64_t hd, int64_t i,
                                int64_t j)
{
	const struct xo_params *p = a->p;
	uint64_t e = (uint64_t)(((n * a->h + hd) * a->tq + i) * a->tk + j);

	if (!a->drop)
		return 1.0;
	return xo_dropout_keep(p->seed, p->step, p->layer, e, p->dropout)
	           ? (double)(1.0f / (1.0f - p->dropout))
	           : 0.0;
}

/* e_pd of p_ij: w e_p, and the product's rounding when weighted. */
static double attn_bound_epd(const struct attn_bound *a, int64_t ij)
{
	return a->w[ij] * a->ep[ij] + (a->drop ? U * a->w[ij] * a->pr[ij] : 0.0);
}

/* Whether row i of sample n keeps key j (ops.def): causal, the mask != 0
 * (a subnormal as 0: xo_daz). */
static bool attn_bound_keep(const struct attn_bound *a, int64_t n, int64_t i, int64_t j)
{
	if (a->p->causal && j > i)
		return false;
	return !a->m || xo_daz(a->m[(n * a->tq + i) * a->tk + j]) != 0.0f;
}

/* pr and ep of row i of (n, hd) (pr the scores in, probabilities out, over
 * the kept keys, 0 elsewhere); returns the row's count of kept keys. */
static int64_t attn_bound_probs(const struct hcase *h, const struct attn_bound *a, int64_t n,
                                int64_t hd, int64_t i, double *pr, double *ep)
{
	const float *q = h->src[0] + ((n * a->tq + i) * a->h + hd) * a->dk;
	double es = 0.0, m = -INFINITY, lo = INFINITY, l = 0.0;
	int64_t nk = 0;

	for (int64_t j = 0; j < a->tk; j++) {
		const float *k = h->src[1] + ((n * a->tk + j) * a->h + hd) * a->dk;
		double s = 0.0, sa = 0.0;

		pr[j] = ep[j] = 0.0;
		if (!attn_bound_keep(a, n, i, j))
			continue;
		for (int64_t c = 0; c < a->dk; c++) {
			s += (double)q[c] * k[c];
			sa += fabs((double)q[c] * k[c]);
		}
		pr[j] = s * a->scale;
		es = fmax(es, (double)(a->dk + 2) * U * sa * a->scale);
		m = fmax(m, pr[j]);
		lo = fmin(lo, pr[j]);
		nk++;
	}
	for (int64_t j = 0; j < a->tk && !nk; j++) { /* no kept key: 1/Tk, or 0 */
		pr[j] = a->p->dropout > 0.0f ? 0.0 : 1.0 / (double)a->tk;
		ep[j] = U * pr[j];
	}
	if (!nk)
		return 0;
	for (int64_t j = 0; j < a->tk; j++)
		if (attn_bound_keep(a, n, i, j))
			l += (pr[j] = exp(pr[j] - m));
	for (int64_t j = 0; j < a->tk; j++) {
		if (!attn_bound_keep(a, n, i, j))
			continue;
		pr[j] /= l;
		ep[j] = 2.0 * pr[j] * es + softmax_ulps(m - lo, nk) * ulp_of((float)pr[j]);
	}
	return nk;
}

/* Row i of (n, hd): pr, ep (and, backward, ds, eds); o's tolerance forward. */
static void attn_bound_row(struct hcase *h, const struct attn_bound *a, int64_t n, int64_t hd,
                           int64_t i)
{
	int64_t r = (n * a->tq + i) * a->h + hd, tk = a->tk;
	double *pr = a->pr + i * tk, *ep = a->ep + i * tk;
	double dsum = 0.0, ed = 0.0, md = 0.0;
	bool bwd = h->c->dir == XO_DIR_BWD;
	int64_t kept = attn_bound_probs(h, a, n, hd, i, pr, ep), nk = kept ? kept : tk;

	a->nk[i] = (double)nk;
	for (int64_t j = 0; j < tk; j++)
		a->w[i * tk + j] = attn_bound_weight(a, n, hd, i, j);
	for (int64_t e = 0; e < a->dv && !bwd; e++) {
		double t = 0.0, ma = 0.0;

		for (int64_t j = 0; j < tk; j++) {
			double v = fabs((double)h->src[2][((n * tk + j) * a->h + hd) * a->dv + e]);

			t += attn_bound_epd(a, i * tk + j) * v;
			ma += pr[j] * a->w[i * tk + j] * v;
		}
		h->tol[0][r * a->dv + e] =
		    C_ACC * (t + (double)(nk + 1) * U * ma + U * fabs((double)h->ref[0][r * a->dv + e])) +
		    TINY;
	}
	if (!bwd)
		return;
	for (int64_t j = 0; j < tk; j++) { /* dp into ds, its error into eds */
		const float *v = h->src[2] + ((n * tk + j) * a->h + hd) * a->dv;
		const float *g = h->src[3] + r * a->dv;
		double dp = 0.0, da = 0.0;

		for (int64_t e = 0; e < a->dv; e++) {
			dp += (double)g[e] * v[e];
			da += fabs((double)g[e] * v[e]);
		}
		dp *= a->w[i * tk + j];
		a->ds[i * tk + j] = dp;
		a->eds[i * tk + j] = a->w[i * tk + j] * (double)(a->dv + 1) * U * da +
		                     (a->drop ? U * fabs(dp) : 0.0);
		dsum += pr[j] * dp;
		ed += ep[j] * fabs(dp) + pr[j] * a->eds[i * tk + j];
		md += pr[j] * fabs(dp);
	}
	ed += (double)(nk + 1) * U * md;
	for (int64_t j = 0; j < tk; j++) {
		double dp = a->ds[i * tk + j], edp = a->eds[i * tk + j];

		a->ds[i * tk + j] = pr[j] * (dp - dsum);
		a->eds[i * tk + j] = ep[j] * fabs(dp - dsum) + pr[j] * (edp + ed) +
		                     3.0 * U * pr[j] * (fabs(dp) + fabs(dsum));
		if (!kept || !attn_bound_keep(a, n, i, j)) /* exactly 0 (ops.def) */
			a->ds[i * tk + j] = a->eds[i * tk + j] = 0.0;
	}
}

/* The backward's tolerances of (n, hd) from the rows' pr, ep, ds, eds:
 * x the input a gradient pairs ds with (dq: k over j; dk: q over i). */
static void attn_bound_grads(struct hcase *h, const struct attn_bound *a, int64_t n, int64_t hd)
{
	for (int64_t i = 0; i < a->tq; i++) {
		int64_t r = (n * a->tq + i) * a->h + hd, nk = (int64_t)a->nk[i];

		for (int64_t c = 0; c < a->dk; c++) {
			double t = 0.0, ma = 0.0;

			for (int64_t j = 0; j < a->tk; j++) {
				double k = fabs((double)h->src[1][((n * a->tk + j) * a->h + hd) * a->dk + c]);

				t += a->eds[i * a->tk + j] * k;
				ma += fabs(a->ds[i * a->tk + j]) * k;
			}
			h->tol[0][r * a->dk + c] =
			    C_ACC * ((t + (double)(nk + 2) * U * ma) * a->scale +
			             U * fabs((double)h->ref[0][r * a->dk + c])) +
			    TINY;
		}
	}
	for (int64_t j = 0; j < a->tk; j++) {
		int64_t r = (n * a->tk + j) * a->h + hd;

		for (int64_t c = 0; c < a->dk; c++) {
			double t = 0.0, ma = 0.0;

			for (int64_t i = 0; i < a->tq; i++) {
				double q = fabs((double)h->src[0][((n * a->tq + i) * a->h + hd) * a->dk + c]);

				t += a->eds[i * a->tk + j] * q;
				ma += fabs(a->ds[i * a->tk + j]) * q;
			}
			h->tol[1][r * a->dk + c] =
			    C_ACC * ((t + (double)(a->tq + 2) * U * ma) * a->scale +
			             U * fabs((double)h->ref[1][r * a->dk + c])) +
			    TINY;
		}
		for (int64_t e = 0; e < a->dv; e++) {
			double t = 0.0, ma = 0.0;

			for (int64_t i = 0; i < a->tq; i++) {
				double g = fabs((double)h->src[3][((n * a->tq + i) * a->h + hd) * a->dv + e]);

				t += attn_bound_epd(a, i * a->tk + j) * g;
				ma += a->pr[i * a->tk + j] * a->w[i * a->tk + j] * g;
			}
			h->tol[2][r * a->dv + e] =
			    C_ACC * (t + (double)(a->tq + 1) * U * ma +
			             U * fabs((double)h->ref[2][r * a->dv + e])) +
			    TINY;
		}
	}
}

static enum xo_status bound_attention(struct hcase *h, struct xo_backend *ref)
{
	const struct xo_params *p = &h->c->p;
	struct attn_bound a = {
	    .p = p,
	    .tq = p->len,
	    .tk = xo_attention_len_kv(p),
	    .h = p->heads,
	    .dk = p->key_dim,
	    .dv = xo_attention_value_dim(p),
	    .scale = 1.0 / sqrt((double)p->key_dim),
	    .drop = p->training && p->dropout > 0.0f,
	    .m = p->attention_mask ? h->src[h->c->dir == XO_DIR_BWD ? 4 : 3] : NULL,
	};
	size_t m = (size_t)(a.tq * a.tk);

	(void)ref;
	a.pr = calloc(5 * m + (size_t)a.tq, sizeof(double));
	if (!a.pr)
		return xo_error(XO_ENOMEM, "harness: out of memory");
	a.ep = a.pr + m;
	a.ds = a.ep + m;
	a.eds = a.ds + m;
	a.w = a.eds + m;
	a.nk = a.w + m;
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t hd = 0; hd < a.h; hd++) {
			for (int64_t i = 0; i < a.tq; i++)
				attn_bound_row(h, &a, n, hd, i);
			if (h->c->dir == XO_DIR_BWD)
				attn_bound_grads(h, &a, n, hd);
		}
	free(a.pr);
	return XO_OK;
}
#define BOUND_attention bound_attention

/* The bounds of every op (0 where its results are exact). One entry per op of ops.def: an op
 * without its BOUND_ entry does not compile. */
static enum xo_status (*const bound_of[XO_OP_COUNT])(struct hcase *h, struct xo_backend *ref) = {
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) [XO_OP_##name] = BOUND_##name,
#include "xo/ops.def"
#undef XO_OP
};

enum xo_status xo_hcase_set_tolerances(struct hcase *h, struct xo_backend *ref)
{
	for (int i = 0; i < XO_MAX_DST; i++)
		for (int64_t e = 0; e < h->dn[i]; e++)
			h->tol[i][e] = 0.0;
	return bound_of[h->c->op](h, ref);
}
