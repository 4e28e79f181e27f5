/*
 * ref_rnn.c - reference simple_rnn, lstm and gru (Keras 3 SimpleRNN, LSTM,
 * GRU), forward and backward through time. Naive loops, double state and
 * accumulation, one rounding per output (ref_internal.h).
 *
 * Semantics read from keras-team/keras (Keras 3):
 *   keras/src/layers/rnn/simple_rnn.py  SimpleRNNCell.call:
 *       h = inputs @ kernel (+ bias); output = h + prev_output @ recurrent_kernel;
 *       output = activation(output)
 *   keras/src/layers/rnn/lstm.py  LSTMCell.call (implementation 2's fused form,
 *       equal in exact arithmetic to 1's): z = x @ kernel + h_tm1 @ recurrent_kernel
 *       + bias, split in i, f, c, o; i = rec(z0), f = rec(z1),
 *       c = f * c_tm1 + i * act(z2), o = rec(z3); h = o * act(c)
 *   keras/src/layers/rnn/gru.py  GRUCell.call: reset_after=True: matrix_x =
 *       x @ kernel + input_bias (bias[0]); matrix_inner = h_tm1 @ recurrent_kernel
 *       + recurrent_bias (bias[1]); z = rec(x_z + rec_z), r = rec(x_r + rec_r),
 *       hh = act(x_h + r * rec_h); reset_after=False: bias is the input bias
 *       only, rec_z, rec_r from h_tm1, rec_h = (r * h_tm1) @ recurrent_kernel[:, 2u:];
 *       h = z * h_tm1 + (1 - z) * hh
 *   keras/src/layers/rnn/rnn.py and keras/src/backend/jax/rnn.py: the initial
 *       state is zeros; go_backwards reverses the input steps (input_t.reverse())
 *       and the outputs stay in processing order; return_sequences=False
 *       returns the last output.
 *   keras/src/backend/jax/rnn.py with a mask (Embedding(mask_zero=True)'s,
 *       here the ids, mask_zero=1): a masked step's new states are dropped
 *       (jnp.where(is_masked, states, new_states): h and lstm's c carried
 *       unchanged) and its output is zeros with zero_output_for_mask, else
 *       the carried h (states[0]); go_backwards reverses the mask with the
 *       inputs; the last output is the last processed step's, by the same
 *       rule. Backward: a masked step passes the state gradients (dh, dc)
 *       straight to the step before, adds its dy to dh only where its output
 *       is the carried h, and gives no input or weight gradient (dx_t = 0).
 *       Its ws row (ops.def) holds the carried state blocks and zeros, so the
 *       next step's h' and c' are read from it as from any row.
 *
 * The forward keeps the state in double from step to step (never the rounded
 * ws), so the float path and the gradient check's double path compute the
 * same values; so the inference form (ws NULL, ops.def) needs nothing of
 * its own: the ws stores are dropped (xo_ref_st of an empty slot). The
 * backward reads only its sources: the gates and states of
 * ws (ops.def layout) and every derivative from a stored activation output
 * (tanh 1 - a^2, sigmoid a (1 - a), relu a > 0), so it has no transcendental
 * call of its own.
 *
 * Magnitudes (mag[i], DESIGN section 5): fwd |y| and |ws| (outputs of
 * transcendental gates, not sums); bwd the sum of the absolute terms that
 * make each output: dx sum |dpre_x * W|, dkernel sum |x * dpre_x|,
 * drecurrent_kernel sum |h' * dpre_h|, dbias sum |dpre|.
 */
#include <math.h>
#include <stdlib.h>

#include "ref_internal.h"

/* Sizes of one recurrent call. */
struct rnn {
	enum xo_op op;
	int64_t n, T, in, u; /* batch, steps, input features, units */
	int64_t g, G, S;     /* gates, g*u, ws row width */
	enum xo_activation act;
	bool bias, seq, back, ra; /* use_bias, return_sequences, go_backwards, reset_after */
	bool mask, zero_out;      /* mask_zero, zero_output_for_mask */
};

static struct rnn rnn_of(enum xo_op op, const struct xo_params *p)
{
	struct rnn r = {
		.op = op,
		.n = p->batch,
		.T = p->len,
		.in = p->ch,
		.u = p->units,
		.g = xo_rnn_gates(op),
		.act = p->activation,
		.bias = p->use_bias,
		.seq = p->return_sequences,
		.back = p->go_backwards,
		.ra = op == XO_OP_gru && p->reset_after,
		.mask = p->mask_zero,
		.zero_out = p->zero_output_for_mask,
	};

	r.G = r.g * r.u;
	r.S = xo_rnn_ws_blocks(op) * r.u;
	return r;
}

/* Input step read by processing step s. */
static int64_t step_t(const struct rnn *r, int64_t s)
{
	return r->back ? r->T - 1 - s : s;
}

/* Whether input step t of sample n is masked out (its id is 0). */
static bool step_masked(const struct rnn *r, struct xo_ref_src ids, int64_t n, int64_t t)
{
	return r->mask && xo_ref_ld(ids, n * r->T + t) == 0.0;
}

/* The h block of each op's ws row. */
static int64_t h_block(const struct rnn *r)
{
	return r->op == XO_OP_lstm ? 6 : r->op == XO_OP_gru ? 3 : 0;
}

/* A masked step's ws row: the carried state h (its block of the row) and
 * lstm's c (block 4), every other block 0. */
static void carry_row(const struct rnn *r, const double *h, const double *c, double *row)
{
	int64_t u = r->u, hb = h_block(r);

	for (int64_t k = 0; k < r->S; k++)
		row[k] = 0.0;
	for (int64_t k = 0; k < u; k++) {
		row[hb * u + k] = h[k];
		if (r->op == XO_OP_lstm)
			row[4 * u + k] = c[k];
	}
}

static double act(enum xo_activation a, double v)
{
	return a == XO_ACTIVATION_RELU ? xo_ref_relu(v) : tanh(v);
}

/* d act / d v from the output a = act(v). */
static double act_d(enum xo_activation a, double y)
{
	if (a == XO_ACTIVATION_RELU)
		return y > 0.0 ? 1.0 : 0.0;
	return 1.0 - y * y;
}

/* ---- forward ------------------------------------------------------------ */

/*
 * One sample's forward. h, c (u each) the state, 0 on entry; px, ph (G each)
 * scratch for the input and recurrent projections; row (S) one ws row.
 */
static void fwd_sample(const struct rnn *r, const struct xo_ref_src *src,
		       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag, int64_t n,
		       double *h, double *c, double *px, double *ph, double *row)
{
	struct xo_ref_src x = src[0], W = src[1], U = src[2], b = src[3];
	int64_t u = r->u, G = r->G;

	for (int64_t s = 0; s < r->T; s++) {
		int64_t t = step_t(r, s);
		bool out0 = false;

		if (step_masked(r, src[4], n, t)) {
			carry_row(r, h, c, row); /* h, c unchanged */
			out0 = r->zero_out;
			goto store;
		}
		/* px = x_t W (+ the input bias); ph = h' U (+ gru's recurrent bias) */
		for (int64_t j = 0; j < G; j++) {
			double a = 0.0;

			for (int64_t i = 0; i < r->in; i++)
				a += xo_ref_ld(x, (n * r->T + t) * r->in + i) *
				     xo_ref_ld(W, i * G + j);
			if (r->bias)
				a += xo_ref_ld(b, j);
			px[j] = a;
			a = 0.0;
			if (!(r->op == XO_OP_gru && !r->ra && j >= 2 * u))
				for (int64_t k = 0; k < u; k++)
					a += h[k] * xo_ref_ld(U, k * G + j);
			if (r->ra && r->bias)
				a += xo_ref_ld(b, G + j);
			ph[j] = a;
		}
		switch (r->op) {
		case XO_OP_simple_rnn:
			for (int64_t k = 0; k < u; k++)
				row[k] = h[k] = act(r->act, px[k] + ph[k]);
			break;
		case XO_OP_lstm:
			for (int64_t k = 0; k < u; k++) {
				double ig = xo_ref_sigmoid(px[k] + ph[k]);
				double fg = xo_ref_sigmoid(px[u + k] + ph[u + k]);
				double gg = act(r->act, px[2 * u + k] + ph[2 * u + k]);
				double og = xo_ref_sigmoid(px[3 * u + k] + ph[3 * u + k]);
				double cc = fg * c[k] + ig * gg;
				double ac = act(r->act, cc);

				row[k] = ig;
				row[u + k] = fg;
				row[2 * u + k] = gg;
				row[3 * u + k] = og;
				row[4 * u + k] = c[k] = cc;
				row[5 * u + k] = ac;
				row[6 * u + k] = h[k] = og * ac;
			}
			break;
		case XO_OP_gru: {
			double *z = row, *rg = row + u, *hh = row + 2 * u, *hn = row + 3 * u;
			double *rh = row + 4 * u;

			for (int64_t k = 0; k < u; k++) {
				z[k] = xo_ref_sigmoid(px[k] + ph[k]);
				rg[k] = xo_ref_sigmoid(px[u + k] + ph[u + k]);
			}
			if (!r->ra) /* rec_h = (r * h') U_h */
				for (int64_t j = 0; j < u; j++) {
					double a = 0.0;

					for (int64_t k = 0; k < u; k++)
						a += rg[k] * h[k] * xo_ref_ld(U, k * G + 2 * u + j);
					ph[2 * u + j] = a;
				}
			for (int64_t k = 0; k < u; k++) {
				double v = r->ra ? px[2 * u + k] + rg[k] * ph[2 * u + k]
						 : px[2 * u + k] + ph[2 * u + k];

				hh[k] = act(r->act, v);
				rh[k] = r->ra ? ph[2 * u + k] : 0.0;
			}
			for (int64_t k = 0; k < u; k++)
				hn[k] = h[k] = z[k] * h[k] + (1.0 - z[k]) * hh[k];
			break;
		}
		default:
			XO_ASSERT(!"not a recurrent op");
		}
store:
		for (int64_t k = 0; k < r->S; k++) {
			xo_ref_st(dst[1], (n * r->T + s) * r->S + k, row[k]);
			xo_ref_st(mag[1], (n * r->T + s) * r->S + k, fabs(row[k]));
		}
		if (r->seq || s == r->T - 1) {
			int64_t o = r->seq ? (n * r->T + s) * u : n * u;

			for (int64_t k = 0; k < u; k++) {
				xo_ref_st(dst[0], o + k, out0 ? 0.0 : h[k]);
				xo_ref_st(mag[0], o + k, out0 ? 0.0 : fabs(h[k]));
			}
		}
	}
}

static enum xo_status rnn_fwd(enum xo_op op, const struct xo_params *p,
			      const struct xo_ref_src *src, const struct xo_ref_dst *dst,
			      const struct xo_ref_dst *mag)
{
	struct rnn r = rnn_of(op, p);
	double *h = calloc((size_t)(2 * r.u + 2 * r.G + r.S), sizeof(*h));

	XO_ASSERT(xo_ref_src_has(src[0]) && xo_ref_src_has(src[1]) && xo_ref_src_has(src[2]));
	XO_ASSERT(!r.bias || xo_ref_src_has(src[3]));
	XO_ASSERT(!r.mask || xo_ref_src_has(src[4]));
	if (!h)
		return xo_error(XO_ENOMEM, "ref: %s: out of memory", xo_op_name(op));
	for (int64_t n = 0; n < r.n; n++) {
		for (int64_t k = 0; k < 2 * r.u; k++)
			h[k] = 0.0; /* h, then c: Keras's zero initial state */
		fwd_sample(&r, src, dst, mag, n, h, h + r.u, h + 2 * r.u, h + 2 * r.u + r.G,
			   h + 2 * r.u + 2 * r.G);
	}
	free(h);
	return XO_OK;
}

/* ---- backward ----------------------------------------------------------- */

/* Accumulators of the weight gradients and their magnitudes, in double. */
struct rnn_acc {
	double *dW, *dU, *db, *mW, *mU, *mb; /* [in][G], [u][G], [2][G] */
};

/* ws element k of the row of sample n, processing step s. */
static double ws_at(const struct rnn *r, struct xo_ref_src ws, int64_t n, int64_t s, int64_t k)
{
	return xo_ref_ld(ws, (n * r->T + s) * r->S + k);
}

/* The previous step's state block (h: blk = the h block, c: lstm's c) or 0. */
static double prev_at(const struct rnn *r, struct xo_ref_src ws, int64_t n, int64_t s,
		      int64_t blk, int64_t k)
{
	return s > 0 ? ws_at(r, ws, n, s - 1, blk * r->u + k) : 0.0;
}


/*
 * One sample's backward through time. dh, dhn (u each): the state gradient
 * of this step and the one carried to the step before; dc (u): lstm's cell
 * gradient carried; px, ph (G): d loss / d the input-side and the
 * recurrent-side pre-activations of this step; drh (u): gru reset_after=0's
 * d loss / d (r * h').
 */
static void bwd_sample(const struct rnn *r, const struct xo_ref_src *src,
		       const struct xo_ref_dst *dst, const struct xo_ref_dst *mag,
		       struct rnn_acc *acc, int64_t n, double *dh, double *dhn, double *dc,
		       double *px, double *ph, double *drh)
{
	struct xo_ref_src x = src[0], W = src[1], U = src[2], ws = src[3], dy = src[4];
	int64_t u = r->u, G = r->G, hb = h_block(r);

	for (int64_t k = 0; k < u; k++)
		dhn[k] = dc[k] = 0.0;
	for (int64_t s = r->T - 1; s >= 0; s--) {
		int64_t t = step_t(r, s);
		bool masked = step_masked(r, src[5], n, t);
		bool out0 = masked && r->zero_out; /* its output was 0, not h */

		for (int64_t k = 0; k < u; k++) {
			double g = dhn[k];

			if (r->seq && !out0)
				g += xo_ref_ld(dy, (n * r->T + s) * u + k);
			else if (s == r->T - 1 && !out0)
				g += xo_ref_ld(dy, n * u + k);
			dh[k] = g;
			dhn[k] = masked ? g : 0.0; /* a masked step passes dh (and dc) on */
		}
		if (masked) {
			for (int64_t i = 0; xo_ref_dst_has(dst[0]) && i < r->in; i++) {
				xo_ref_st(dst[0], (n * r->T + t) * r->in + i, 0.0);
				xo_ref_st(mag[0], (n * r->T + t) * r->in + i, 0.0);
			}
			continue;
		}
		switch (r->op) {
		case XO_OP_simple_rnn:
			for (int64_t k = 0; k < u; k++)
				px[k] = ph[k] = dh[k] * act_d(r->act, ws_at(r, ws, n, s, k));
			break;
		case XO_OP_lstm:
			for (int64_t k = 0; k < u; k++) {
				double ig = ws_at(r, ws, n, s, k), fg = ws_at(r, ws, n, s, u + k);
				double gg = ws_at(r, ws, n, s, 2 * u + k);
				double og = ws_at(r, ws, n, s, 3 * u + k);
				double ac = ws_at(r, ws, n, s, 5 * u + k);
				double cp = prev_at(r, ws, n, s, 4, k);
				double dcc = dc[k] + dh[k] * og * act_d(r->act, ac);

				px[k] = dcc * gg * ig * (1.0 - ig);
				px[u + k] = dcc * cp * fg * (1.0 - fg);
				px[2 * u + k] = dcc * ig * act_d(r->act, gg);
				px[3 * u + k] = dh[k] * ac * og * (1.0 - og);
				dc[k] = dcc * fg;
			}
			for (int64_t j = 0; j < G; j++)
				ph[j] = px[j];
			break;
		case XO_OP_gru:
			for (int64_t k = 0; k < u; k++) {
				double z = ws_at(r, ws, n, s, k), hh = ws_at(r, ws, n, s, 2 * u + k);
				double hp = prev_at(r, ws, n, s, 3, k);
				double dpre_h = dh[k] * (1.0 - z) * act_d(r->act, hh);

				px[k] = ph[k] = dh[k] * (hp - hh) * z * (1.0 - z);
				px[2 * u + k] = dpre_h;
				dhn[k] = dh[k] * z; /* h = z h' + ...: the direct path */
			}
			if (r->ra) {
				for (int64_t k = 0; k < u; k++) {
					double rg = ws_at(r, ws, n, s, u + k);
					double rh = ws_at(r, ws, n, s, 4 * u + k);

					px[u + k] = ph[u + k] = px[2 * u + k] * rh * rg * (1.0 - rg);
					ph[2 * u + k] = px[2 * u + k] * rg;
				}
			} else {
				/* d (r h')_k = sum_j dpre_h[j] U[k][2u + j] */
				for (int64_t k = 0; k < u; k++) {
					double a = 0.0, rg = ws_at(r, ws, n, s, u + k);
					double hp = prev_at(r, ws, n, s, 3, k);

					for (int64_t j = 0; j < u; j++)
						a += px[2 * u + j] * xo_ref_ld(U, k * G + 2 * u + j);
					drh[k] = a;
					px[u + k] = ph[u + k] = a * hp * rg * (1.0 - rg);
					dhn[k] += a * rg;
				}
				for (int64_t j = 0; j < u; j++)
					ph[2 * u + j] = px[2 * u + j];
			}
			break;
		default:
			XO_ASSERT(!"not a recurrent op");
		}
		/* dx_t = px W^T */
		if (xo_ref_dst_has(dst[0]))
			for (int64_t i = 0; i < r->in; i++) {
				double a = 0.0, m = 0.0;

				for (int64_t j = 0; j < G; j++) {
					double v = px[j] * xo_ref_ld(W, i * G + j);

					a += v;
					m += fabs(v);
				}
				xo_ref_st(dst[0], (n * r->T + t) * r->in + i, a);
				xo_ref_st(mag[0], (n * r->T + t) * r->in + i, m);
			}
		/* dW += x_t^T px; db += px (and gru's recurrent bias row += ph) */
		for (int64_t i = 0; i < r->in; i++) {
			double xv = xo_ref_ld(x, (n * r->T + t) * r->in + i);

			for (int64_t j = 0; j < G; j++) {
				acc->dW[i * G + j] += xv * px[j];
				acc->mW[i * G + j] += fabs(xv * px[j]);
			}
		}
		for (int64_t j = 0; j < G; j++) {
			acc->db[j] += px[j];
			acc->mb[j] += fabs(px[j]);
			acc->db[G + j] += ph[j];
			acc->mb[G + j] += fabs(ph[j]);
		}
		/* dU += hin^T ph, hin = h' (gru reset_after=0's h gate: r * h');
		 * dh' += ph U^T over the gates that read h' */
		for (int64_t k = 0; k < u; k++) {
			double hp = prev_at(r, ws, n, s, hb, k);
			double rhp = r->op == XO_OP_gru ? ws_at(r, ws, n, s, u + k) * hp : hp;

			for (int64_t j = 0; j < G; j++) {
				bool via_r = r->op == XO_OP_gru && !r->ra && j >= 2 * u;
				double hin = via_r ? rhp : hp;

				acc->dU[k * G + j] += hin * ph[j];
				acc->mU[k * G + j] += fabs(hin * ph[j]);
				if (!via_r)
					dhn[k] += ph[j] * xo_ref_ld(U, k * G + j);
			}
		}
	}
}

static enum xo_status rnn_bwd(enum xo_op op, const struct xo_params *p,
			      const struct xo_ref_src *src, const struct xo_ref_dst *dst,
			      const struct xo_ref_dst *mag)
{
	struct rnn r = rnn_of(op, p);
	int64_t nw = r.in * r.G, nu = r.u * r.G;
	double *buf = calloc((size_t)(2 * (nw + nu + 2 * r.G) + 4 * r.u + 2 * r.G), sizeof(*buf));
	struct rnn_acc acc;
	double *tmp;

	for (int i = 0; i < 5; i++)
		XO_ASSERT(xo_ref_src_has(src[i]));
	XO_ASSERT(!r.mask || xo_ref_src_has(src[5]));
	if (!buf)
		return xo_error(XO_ENOMEM, "ref: %s: out of memory", xo_op_name(op));
	acc.dW = buf;
	acc.mW = acc.dW + nw;
	acc.dU = acc.mW + nw;
	acc.mU = acc.dU + nu;
	acc.db = acc.mU + nu;
	acc.mb = acc.db + 2 * r.G;
	tmp = acc.mb + 2 * r.G;
	for (int64_t n = 0; n < r.n; n++)
		bwd_sample(&r, src, dst, mag, &acc, n, tmp, tmp + r.u, tmp + 2 * r.u,
			   tmp + 4 * r.u, tmp + 4 * r.u + r.G, tmp + 3 * r.u);
	for (int64_t k = 0; k < nw; k++) {
		xo_ref_st(dst[1], k, acc.dW[k]);
		xo_ref_st(mag[1], k, acc.mW[k]);
	}
	for (int64_t k = 0; k < nu; k++) {
		xo_ref_st(dst[2], k, acc.dU[k]);
		xo_ref_st(mag[2], k, acc.mU[k]);
	}
	if (r.bias)
		for (int64_t k = 0; k < (r.ra ? 2 : 1) * r.G; k++) {
			xo_ref_st(dst[3], k, acc.db[k]);
			xo_ref_st(mag[3], k, acc.mb[k]);
		}
	free(buf);
	return XO_OK;
}

#define RNN_MATH(name)                                                                     \
	enum xo_status xo_ref_##name##_fwd_math(const struct xo_params *p,                  \
						const struct xo_ref_src *src,               \
						const struct xo_ref_dst *dst,               \
						const struct xo_ref_dst *mag)               \
	{                                                                                  \
		return rnn_fwd(XO_OP_##name, p, src, dst, mag);                            \
	}                                                                                  \
	enum xo_status xo_ref_##name##_bwd_math(const struct xo_params *p,                  \
						const struct xo_ref_src *src,               \
						const struct xo_ref_dst *dst,               \
						const struct xo_ref_dst *mag)               \
	{                                                                                  \
		return rnn_bwd(XO_OP_##name, p, src, dst, mag);                            \
	}
RNN_MATH(simple_rnn)
RNN_MATH(lstm)
RNN_MATH(gru)
