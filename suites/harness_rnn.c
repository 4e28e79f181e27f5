/*
 * harness_rnn.c - simple_rnn, lstm, gru: their fills and the bounds derived
 * for them, forward and backward through time.
 */
#include "harness_internal.h"

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
/* Whether input step t of sample n is masked out (mask_zero: the ids after
 * bias, fwd, or after dy, bwd, hold 0 there). */
bool xo_hcase_rnn_masked(const struct hcase *h, int64_t n, int64_t t)
{
	const struct xo_params *p = &h->c->p;
	int32_t id;

	if (!p->mask_zero)
		return false;
	memcpy(&id, &h->src[h->c->dir == XO_DIR_BWD ? 5 : 4][n * p->len + t], 4);
	return id == 0;
}

/* The ids of mask_zero: per sample n a pattern by n % 4, so that a case of
 * 4 samples or more has each: the last third of the steps masked (the
 * padding at the end, the last step too), the first third (the padding at
 * the start, step 0 too), every step (an all-padding row), and every third
 * step from step 1 (gaps inside); ids 1..5 elsewhere. */
static void fill_rnn_ids(struct hcase *h, int slot)
{
	const struct xo_params *p = &h->c->p;
	int64_t T = p->len, third = T / 3 > 0 ? T / 3 : 1;

	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t t = 0; t < T; t++) {
			int64_t q = n % 4;
			bool m = q == 0 ? t >= T - third : q == 1 ? t < third : q == 2 ? true
				 : t % 3 == 1;
			int32_t id = m ? 0 : 1 + (int32_t)((n * T + t) % 5);

			memcpy(&h->src[slot][n * T + t], &id, 4);
		}
}

void xo_hcase_fill_rnn(struct hcase *h)
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
	if (p->mask_zero)
		fill_rnn_ids(h, bwd ? 5 : 4);
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
/* The forward bound of masked step s of sample n: the state copied (its
 * errors eh, ec carried unchanged: a copy adds no rounding), exact zeros
 * elsewhere in the ws row, and y the carried h or (zero_output_for_mask)
 * an exact 0. Returns true (the step is done). */
static bool tol_rnn_fwd_masked(struct hcase *h, int64_t n, int64_t s, const double *eh,
                               const double *ec)
{
	const struct xo_params *p = &h->c->p;
	enum xo_op op = h->c->op;
	int64_t u = p->units, S = xo_rnn_ws_blocks(op) * u, T = p->len;
	int64_t hb = op == XO_OP_lstm ? 6 : op == XO_OP_gru ? 3 : 0;
	double *tol = h->tol[1] + (n * T + s) * S;

	for (int64_t k = 0; k < S; k++)
		tol[k] = TINY;
	for (int64_t k = 0; k < u; k++) {
		tol[hb * u + k] += eh[k];
		if (op == XO_OP_lstm)
			tol[4 * u + k] += ec[k];
	}
	for (int64_t k = 0; k < S; k++) /* an Inf input makes some NaN (Inf * 0) */
		tol[k] = isnan(tol[k]) ? INFINITY : tol[k];
	if (p->return_sequences || s == T - 1) {
		double *ty = h->tol[0] + (p->return_sequences ? (n * T + s) * u : n * u);

		for (int64_t k = 0; k < u; k++)
			ty[k] = p->zero_output_for_mask ? TINY
			        : isnan(eh[k])          ? INFINITY
			                                : eh[k] + TINY;
	}
	return true;
}

void xo_hcase_tol_rnn_fwd(struct hcase *h)
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
		memset(e, 0, (size_t)(2 * u) * sizeof(*e)); /* eh, ec */
		for (int64_t s = 0; s < T; s++) {
			int64_t t = p->go_backwards ? T - 1 - s : s;
			const float *xt = x + (n * T + t) * in, *row = ws + (n * T + s) * S;
			const float *prev = s > 0 ? row - S : NULL;
			int64_t hb = op == XO_OP_lstm ? 6 : op == XO_OP_gru ? 3 : 0;
			double *tol = h->tol[1] + (n * T + s) * S;

			if (xo_hcase_rnn_masked(h, n, t) && tol_rnn_fwd_masked(h, n, s, eh, ec))
				continue; /* the state carried past a masked step */
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
					double hp = prev ? prev[3 * u + k] : 0.0;
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

/* lstm's step back (xo_hcase_tol_rnn_bwd): the gate gradients px (= ph) of
 * one (sample, step) from dh, and the cell gradient dc carried back. */
static void tol_rnn_bwd_lstm(int64_t u, int64_t G, const float *row, const float *prev,
                             const struct ev *dh, struct ev *dc, struct ev *px, struct ev *ph)
{
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
}

/* gru's step back (xo_hcase_tol_rnn_bwd): the gate gradients px (input
 * side) and ph (recurrent side) of one (sample, step) from dh; with
 * reset_after=0 also drh, the gradient of r h' through U_h. */
static void tol_rnn_bwd_gru(int64_t u, int64_t G, bool ra, const float *row, const float *prev,
                            const float *Uw, const struct ev *dh, struct ev *px, struct ev *ph,
                            struct ev *drh)
{
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
void xo_hcase_tol_rnn_bwd(struct hcase *h)
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
			bool masked = xo_hcase_rnn_masked(h, n, t);

			for (int64_t k = 0; k < u; k++) {
				double d = p->return_sequences ? dy[(n * T + s) * u + k]
				           : s == T - 1      ? dy[n * u + k]
				                             : 0.0;

				if ((p->return_sequences || s == T - 1) &&
				    !(masked && p->zero_output_for_mask))
					dh[k] = ev_add(dh[k], ev_x(d));
			}
			if (masked) { /* dh, dc carried unchanged; dx_t exactly 0 */
				for (int64_t i = 0; h->dn[0] && i < in; i++)
					h->tol[0][(n * T + t) * in + i] = TINY;
				continue;
			}
			switch (op) {
			case XO_OP_simple_rnn:
				for (int64_t k = 0; k < u; k++)
					px[k] = ph[k] = ev_mul(dh[k], relu ? ev_x(row[k] > 0.0f)
					                                   : ev_tanh_d(row[k]));
				break;
			case XO_OP_lstm:
				tol_rnn_bwd_lstm(u, G, row, prev, dh, dc, px, ph);
				break;
			case XO_OP_gru:
				tol_rnn_bwd_gru(u, G, ra, row, prev, Uw, dh, px, ph, drh);
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
