/*
 * rnn.cl - simple_rnn, lstm and gru (ops.def has the formulas and the ws
 * layout; reference/ref_rnn.c the oracle).
 *
 * Correct first: one work-item per sample runs all its time steps inside one
 * launch (the loop over time is in the kernel, so the launch count does not
 * grow with the sequence length), its state read back from the ws rows it
 * wrote. No local memory, no barriers. The backward is two launches: one
 * work-item per sample back through time (dx, and the pre-activation
 * gradients of every step into a scratch buffer), then one work-item per
 * weight gradient element summing over samples and steps.
 *
 * op: 0 simple_rnn, 1 lstm, 2 gru; relu: activation relu (else tanh); the
 * recurrent activation is sigmoid.
 */

/* relu keeps a NaN, as ref */
static inline float xo_rnn_act(int relu, float v)
{
	return relu ? (v > 0.0f || isnan(v) ? v : 0.0f) : tanh(v);
}

/* d act / d v from the output a */
static inline float xo_rnn_act_d(int relu, float a)
{
	return relu ? (a > 0.0f ? 1.0f : 0.0f) : 1.0f - a * a;
}

static inline float xo_rnn_sig(float v)
{
	return 1.0f / (1.0f + exp(-v));
}

static inline int xo_rnn_gates(int op)
{
	return op == 1 ? 4 : op == 2 ? 3 : 1;
}

static inline int xo_rnn_blocks(int op)
{
	return op == 1 ? 7 : op == 2 ? 5 : 1;
}

/* the h block of a ws row */
static inline int xo_rnn_hblock(int op)
{
	return op == 1 ? 6 : op == 2 ? 3 : 0;
}

/* x_t W[:, j] (+ b[j]) */
static inline float xo_rnn_px(__global const float *xt, __global const float *W,
			      __global const float *b, int has_b, int in, int G, int j)
{
	float a = 0.0f;

	for (int i = 0; i < in; i++)
		a += xt[i] * W[(long)i * G + j];
	return has_b ? a + b[j] : a;
}

/* h' U[:, j] (0 before step 0) */
static inline float xo_rnn_ph(__global const float *prev, __global const float *U, int u,
			      int G, int j)
{
	float a = 0.0f;

	if (!prev)
		return 0.0f;
	for (int k = 0; k < u; k++)
		a += prev[k] * U[(long)k * G + j];
	return a;
}

__kernel void xo_cl_rnn_fwd(__global const float *x, int xo, __global const float *W, int wo,
			    __global const float *U, int uo, __global const float *b, int bo,
			    int has_b, __global float *y, int yo, __global float *ws, int wso,
			    int op, int N, int T, int in, int u, int seq, int back, int ra,
			    int relu)
{
	int n = get_global_id(0);
	int G = xo_rnn_gates(op) * u, S = xo_rnn_blocks(op) * u, hb = xo_rnn_hblock(op);

	if (n >= N)
		return;
	x += xo;
	W += wo;
	U += uo;
	b += bo;
	y += yo;
	ws += wso;
	for (int s = 0; s < T; s++) {
		int t = back ? T - 1 - s : s;
		__global const float *xt = x + ((long)n * T + t) * in;
		__global float *row = ws + ((long)n * T + s) * S;
		__global const float *hp = s > 0 ? row - S + hb * u : 0;

		if (op == 0) {
			for (int k = 0; k < u; k++)
				row[k] = xo_rnn_act(relu, xo_rnn_px(xt, W, b, has_b, in, G, k) +
								xo_rnn_ph(hp, U, u, G, k));
		} else if (op == 1) {
			for (int k = 0; k < u; k++) {
				float ig = xo_rnn_sig(xo_rnn_px(xt, W, b, has_b, in, G, k) +
						      xo_rnn_ph(hp, U, u, G, k));
				float fg = xo_rnn_sig(xo_rnn_px(xt, W, b, has_b, in, G, u + k) +
						      xo_rnn_ph(hp, U, u, G, u + k));
				float gg = xo_rnn_act(relu,
						      xo_rnn_px(xt, W, b, has_b, in, G, 2 * u + k) +
							  xo_rnn_ph(hp, U, u, G, 2 * u + k));
				float og = xo_rnn_sig(xo_rnn_px(xt, W, b, has_b, in, G, 3 * u + k) +
						      xo_rnn_ph(hp, U, u, G, 3 * u + k));
				float cp = s > 0 ? row[-S + 4 * u + k] : 0.0f;
				float c = fg * cp + ig * gg;
				float ac = xo_rnn_act(relu, c);

				row[k] = ig;
				row[u + k] = fg;
				row[2 * u + k] = gg;
				row[3 * u + k] = og;
				row[4 * u + k] = c;
				row[5 * u + k] = ac;
				row[6 * u + k] = og * ac;
			}
		} else {
			/* z, r and (reset_after) hz_h for every unit first: the
			 * candidate of reset_after=0 reads r of every unit */
			for (int k = 0; k < u; k++) {
				float rb = ra && has_b ? b[G + k] : 0.0f;
				float rbr = ra && has_b ? b[G + u + k] : 0.0f;

				row[k] = xo_rnn_sig(xo_rnn_px(xt, W, b, has_b, in, G, k) +
						    xo_rnn_ph(hp, U, u, G, k) + rb);
				row[u + k] = xo_rnn_sig(xo_rnn_px(xt, W, b, has_b, in, G, u + k) +
							xo_rnn_ph(hp, U, u, G, u + k) + rbr);
				row[4 * u + k] =
				    ra ? xo_rnn_ph(hp, U, u, G, 2 * u + k) + (has_b ? b[G + 2 * u + k] : 0.0f)
				       : 0.0f;
			}
			for (int k = 0; k < u; k++) {
				float v = xo_rnn_px(xt, W, b, has_b, in, G, 2 * u + k), hh, h0;

				if (ra) {
					v += row[u + k] * row[4 * u + k];
				} else if (hp) {
					float a = 0.0f;

					for (int j = 0; j < u; j++)
						a += row[u + j] * hp[j] * U[(long)j * G + 2 * u + k];
					v += a;
				}
				hh = xo_rnn_act(relu, v);
				h0 = hp ? hp[k] : 0.0f;
				row[2 * u + k] = hh;
				row[3 * u + k] = row[k] * h0 + (1.0f - row[k]) * hh;
			}
		}
		if (seq || s == T - 1) {
			__global float *yo_ = y + (seq ? ((long)n * T + s) * u : (long)n * u);

			for (int k = 0; k < u; k++)
				yo_[k] = row[hb * u + k];
		}
	}
}

/*
 * Backward through time, one work-item per sample. P: the scratch, per
 * (n, s) a row of 2G floats: the input-side pre-activation gradients px,
 * then the recurrent-side ph (they differ for gru only); then per sample 3u
 * floats: dh (the state gradient), dc (lstm's cell gradient), drh (gru
 * reset_after=0's d loss / d (r h')).
 */
__kernel void xo_cl_rnn_bwd_seq(__global const float *W, int wo, __global const float *U, int uo,
				__global const float *ws, int wso, __global const float *dy,
				int dyo, __global float *dx, int dxo, int has_dx,
				__global float *P, int op, int N, int T, int in, int u, int seq,
				int back, int ra, int relu)
{
	int n = get_global_id(0);
	int G = xo_rnn_gates(op) * u, S = xo_rnn_blocks(op) * u;
	__global float *dh, *dc, *drh;

	if (n >= N)
		return;
	W += wo;
	U += uo;
	ws += wso;
	dy += dyo;
	dx += dxo;
	dh = P + (long)N * T * 2 * G + (long)n * 3 * u;
	dc = dh + u;
	drh = dc + u;
	for (int k = 0; k < u; k++)
		dh[k] = dc[k] = drh[k] = 0.0f;
	for (int s = T - 1; s >= 0; s--) {
		int t = back ? T - 1 - s : s;
		__global const float *row = ws + ((long)n * T + s) * S;
		__global const float *prev = s > 0 ? row - S : 0;
		__global float *px = P + ((long)n * T + s) * 2 * G, *ph = px + G;

		for (int k = 0; k < u; k++) {
			if (seq)
				dh[k] += dy[((long)n * T + s) * u + k];
			else if (s == T - 1)
				dh[k] += dy[(long)n * u + k];
		}
		if (op == 0) {
			for (int k = 0; k < u; k++)
				px[k] = ph[k] = dh[k] * xo_rnn_act_d(relu, row[k]);
		} else if (op == 1) {
			for (int k = 0; k < u; k++) {
				float ig = row[k], fg = row[u + k], gg = row[2 * u + k];
				float og = row[3 * u + k], ac = row[5 * u + k];
				float cp = prev ? prev[4 * u + k] : 0.0f;
				float dcc = dc[k] + dh[k] * og * xo_rnn_act_d(relu, ac);

				px[k] = ph[k] = dcc * gg * ig * (1.0f - ig);
				px[u + k] = ph[u + k] = dcc * cp * fg * (1.0f - fg);
				px[2 * u + k] = ph[2 * u + k] = dcc * ig * xo_rnn_act_d(relu, gg);
				px[3 * u + k] = ph[3 * u + k] = dh[k] * ac * og * (1.0f - og);
				dc[k] = dcc * fg;
			}
		} else {
			for (int k = 0; k < u; k++) {
				float z = row[k], rg = row[u + k], hh = row[2 * u + k];
				float hp = prev ? prev[3 * u + k] : 0.0f;
				float dp = dh[k] * (1.0f - z) * xo_rnn_act_d(relu, hh);

				px[k] = ph[k] = dh[k] * (hp - hh) * z * (1.0f - z);
				px[2 * u + k] = dp;
				ph[2 * u + k] = ra ? dp * rg : dp;
				if (ra)
					px[u + k] = ph[u + k] = dp * row[4 * u + k] * rg * (1.0f - rg);
			}
			if (!ra)
				for (int k = 0; k < u; k++) {
					float a = 0.0f, rg = row[u + k];
					float hp = prev ? prev[3 * u + k] : 0.0f;

					for (int j = 0; j < u; j++)
						a += px[2 * u + j] * U[(long)k * G + 2 * u + j];
					drh[k] = a;
					px[u + k] = ph[u + k] = a * hp * rg * (1.0f - rg);
				}
		}
		if (has_dx)
			for (int i = 0; i < in; i++) {
				float a = 0.0f;

				for (int j = 0; j < G; j++)
					a += px[j] * W[(long)i * G + j];
				dx[((long)n * T + t) * in + i] = a;
			}
		/* the state gradient carried to step s - 1 (only from ph, drh and
		 * this unit's own dh: updated in place) */
		for (int k = 0; k < u; k++) {
			float a = 0.0f;
			int jmax = op == 2 && !ra ? 2 * u : G;

			for (int j = 0; j < jmax; j++)
				a += ph[j] * U[(long)k * G + j];
			if (op == 2) {
				a += dh[k] * row[k];
				if (!ra)
					a += drh[k] * row[u + k];
			}
			dh[k] = a;
		}
	}
}

/*
 * The weight gradients, one work-item per element e of dkernel [in][G],
 * then drecurrent_kernel [u][G], then dbias (G, or 2G for gru reset_after):
 * sums over the samples and the steps (last step first, as ref) of the
 * scratch rows of xo_cl_rnn_bwd_seq.
 */
__kernel void xo_cl_rnn_bwd_w(__global const float *x, int xo, __global const float *ws,
			      int wso, __global const float *P, __global float *dW, int dwo,
			      __global float *dU, int duo, __global float *db, int dbo, int nb,
			      int op, int N, int T, int in, int u, int back, int ra)
{
	int e = get_global_id(0);
	int G = xo_rnn_gates(op) * u, S = xo_rnn_blocks(op) * u, hb = xo_rnn_hblock(op);
	int nw = in * G, nu = u * G;
	float a = 0.0f;

	if (e >= nw + nu + nb)
		return;
	x += xo;
	ws += wso;
	if (e < nw) {
		int i = e / G, j = e % G;

		for (int n = 0; n < N; n++)
			for (int s = T - 1; s >= 0; s--) {
				int t = back ? T - 1 - s : s;

				a += x[((long)n * T + t) * in + i] * P[((long)n * T + s) * 2 * G + j];
			}
		dW[dwo + e] = a;
	} else if (e < nw + nu) {
		int k = (e - nw) / G, j = (e - nw) % G;
		int via_r = op == 2 && !ra && j >= 2 * u;

		for (int n = 0; n < N; n++)
			for (int s = T - 1; s >= 1; s--) {
				__global const float *row = ws + ((long)n * T + s) * S;
				float hp = row[-S + hb * u + k];

				if (via_r)
					hp *= row[u + k];
				a += hp * P[((long)n * T + s) * 2 * G + G + j];
			}
		dU[duo + e - nw] = a;
	} else {
		int j = e - nw - nu;

		for (int n = 0; n < N; n++)
			for (int s = T - 1; s >= 0; s--)
				a += P[((long)n * T + s) * 2 * G + j]; /* px, then ph */
		db[dbo + j] = a;
	}
}
