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
 *
 * Masks (mask_zero=1, ops.def): ids (int, at ido) when has_m, step t of
 * sample n masked where ids[n T + t] is 0; zo: zero_output_for_mask. A
 * masked step keeps the state, writes its ws row as the carried state
 * blocks and zeros, and outputs 0 (zo) or the carried h; back through it,
 * dh and dc pass unchanged (dh plus dy where the output was h), and its
 * pre-activation gradients (so dx and the weight terms) are 0.
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

/* whether input step t of sample n is masked out */
static inline int xo_rnn_masked(__global const int *ids, int has_m, int n, int T, int t)
{
	return has_m && ids[(long)n * T + t] == 0;
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
			    int relu, __global const int *ids, int ido, int has_m, int zo)
{
	int n = get_global_id(0);
	int G = xo_rnn_gates(op) * u, S = xo_rnn_blocks(op) * u, hb = xo_rnn_hblock(op);

	if (n >= N)
		return;
	ids += ido;
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
		int mk = xo_rnn_masked(ids, has_m, n, T, t);

		if (mk) { /* the carried state (h, lstm's c) and zeros */
			for (int k = 0; k < S; k++)
				row[k] = 0.0f;
			for (int k = 0; s > 0 && k < u; k++) {
				row[hb * u + k] = row[-S + hb * u + k];
				if (op == 1)
					row[4 * u + k] = row[-S + 4 * u + k];
			}
		} else if (op == 0) {
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
				yo_[k] = mk && zo ? 0.0f : row[hb * u + k];
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
				int back, int ra, int relu, __global const int *ids, int ido,
				int has_m, int zo)
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
	ids += ido;
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
		int mk = xo_rnn_masked(ids, has_m, n, T, t);

		for (int k = 0; k < u && !(mk && zo); k++) {
			if (seq)
				dh[k] += dy[((long)n * T + s) * u + k];
			else if (s == T - 1)
				dh[k] += dy[(long)n * u + k];
		}
		if (mk) { /* dh, dc pass on; no gradient into the step */
			for (int j = 0; j < 2 * G; j++)
				px[j] = 0.0f;
			for (int i = 0; has_dx && i < in; i++)
				dx[((long)n * T + t) * in + i] = 0.0f;
			continue;
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

/*
 * The work-group kernels (GPUs; the tuning row's rnn_nb > 0): one
 * work-group per tile of nb samples, all its steps in one launch. The
 * state and the step's pre-activations live in local memory, so the work
 * of a step spreads over the group's work-items: first one work-item per
 * (sample, gate column j) computes the column's dot products (W[:, j] and
 * U[:, j] read across j: coalesced), then one per (sample, unit k) applies
 * the gates, writes the ws row (the layout of ops.def) and the state.
 * Samples n0 .. n0 + mc - 1 of the tile; every loop below strides by the
 * group size, every barrier is reached by the whole group (mc is the same
 * for all its work-items). Work-items map idx -> (m, j) with j fastest.
 *
 * Local memory of xo_cl_rnn_fwd__wg: nb * (G + 4u) floats:
 *   hl[nb][u] the previous h, cl[nb][u] lstm's previous c, pa[nb][G] the
 *   pre-activations (gru's h column: its input part only), pb[nb][u] gru's
 *   recurrent part of the h column (hz_h with its bias, or (r h') U_h),
 *   rh[nb][u] gru reset_after=0's r h'.
 * Each sum is computed as xo_cl_rnn_fwd does (x W, + b, + h' U, + the
 * recurrent bias): the same terms in the same order per output.
 */
__kernel void xo_cl_rnn_fwd__wg(__global const float *x, int xo, __global const float *W, int wo,
				__global const float *U, int uo, __global const float *b, int bo,
				int has_b, __global float *y, int yo, __global float *ws, int wso,
				int op, int N, int T, int in, int u, int seq, int back, int ra,
				int relu, __global const int *ids, int ido, int has_m, int zo,
				int nb, __local float *lm)
{
	int G = xo_rnn_gates(op) * u, S = xo_rnn_blocks(op) * u, hb = xo_rnn_hblock(op);
	int lid = get_local_id(0), nl = get_local_size(0);
	int n0 = get_group_id(0) * nb, mc = min(nb, N - n0);
	__local float *hl = lm, *cl = hl + nb * u, *pa = cl + nb * u, *pb = pa + nb * G;
	__local float *rh = pb + nb * u;

	x += xo;
	W += wo;
	U += uo;
	b += bo;
	y += yo;
	ws += wso;
	ids += ido;
	for (int idx = lid; idx < mc * u; idx += nl)
		hl[idx] = cl[idx] = 0.0f;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = 0; s < T; s++) {
		int t = back ? T - 1 - s : s;

		/* the gate columns */
		for (int idx = lid; idx < mc * G; idx += nl) {
			int m = idx / G, j = idx - m * G;
			__global const float *xt = x + ((long)(n0 + m) * T + t) * in;
			__local const float *hm = hl + m * u;
			float a = 0.0f, r = 0.0f;

			for (int i = 0; i < in; i++)
				a += xt[i] * W[(long)i * G + j];
			if (has_b)
				a += b[j];
			if (op == 2 && j >= 2 * u) {
				pa[idx] = a;
				if (ra) {
					if (s > 0)
						for (int k = 0; k < u; k++)
							r += hm[k] * U[(long)k * G + j];
					pb[m * u + j - 2 * u] = has_b ? r + b[G + j] : r;
				}
				continue;
			}
			if (s > 0)
				for (int k = 0; k < u; k++)
					r += hm[k] * U[(long)k * G + j];
			a += r;
			if (op == 2 && ra && has_b)
				a += b[G + j];
			pa[idx] = a;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		if (op == 2 && !ra) {
			/* (r h') U_h: r of every unit first */
			for (int idx = lid; idx < mc * u; idx += nl) {
				int m = idx / u, k = idx - m * u;

				rh[idx] = xo_rnn_sig(pa[m * G + u + k]) * hl[idx];
			}
			barrier(CLK_LOCAL_MEM_FENCE);
			for (int idx = lid; idx < mc * u; idx += nl) {
				int m = idx / u, k = idx - m * u;
				float a = 0.0f;

				for (int j = 0; j < u; j++)
					a += rh[m * u + j] * U[(long)j * G + 2 * u + k];
				pb[idx] = a;
			}
			barrier(CLK_LOCAL_MEM_FENCE);
		}
		/* the gates, the ws row and the state, per (sample, unit) */
		for (int idx = lid; idx < mc * u; idx += nl) {
			int m = idx / u, k = idx - m * u, n = n0 + m;
			__global float *row = ws + ((long)n * T + s) * S;
			__local const float *pm = pa + m * G;
			int mk = xo_rnn_masked(ids, has_m, n, T, t);
			float h;

			if (mk) { /* the carried state (h, lstm's c) and zeros */
				h = hl[idx];
				for (int q = 0; q < xo_rnn_blocks(op); q++)
					row[q * u + k] = 0.0f;
				row[hb * u + k] = h;
				if (op == 1)
					row[4 * u + k] = cl[idx];
			} else if (op == 0) {
				h = xo_rnn_act(relu, pm[k]);
				row[k] = h;
			} else if (op == 1) {
				float ig = xo_rnn_sig(pm[k]), fg = xo_rnn_sig(pm[u + k]);
				float gg = xo_rnn_act(relu, pm[2 * u + k]), og = xo_rnn_sig(pm[3 * u + k]);
				float c = fg * cl[idx] + ig * gg;
				float ac = xo_rnn_act(relu, c);

				h = og * ac;
				row[k] = ig;
				row[u + k] = fg;
				row[2 * u + k] = gg;
				row[3 * u + k] = og;
				row[4 * u + k] = c;
				row[5 * u + k] = ac;
				row[6 * u + k] = h;
				cl[idx] = c;
			} else {
				float z = xo_rnn_sig(pm[k]), rg = xo_rnn_sig(pm[u + k]);
				float v = pm[2 * u + k], hh, h0 = s > 0 ? hl[idx] : 0.0f;

				if (ra)
					v += rg * pb[idx];
				else if (s > 0)
					v += pb[idx];
				hh = xo_rnn_act(relu, v);
				h = z * h0 + (1.0f - z) * hh;
				row[k] = z;
				row[u + k] = rg;
				row[2 * u + k] = hh;
				row[3 * u + k] = h;
				row[4 * u + k] = ra ? pb[idx] : 0.0f;
			}
			hl[idx] = h;
			if (mk && zo)
				h = 0.0f;
			if (seq)
				y[((long)n * T + s) * u + k] = h;
			else if (s == T - 1)
				y[(long)n * u + k] = h;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}

/*
 * Backward through time, one work-group per tile of nb samples (as
 * xo_cl_rnn_fwd__wg). Writes the same scratch rows P as xo_cl_rnn_bwd_seq
 * (per (n, s) the px then ph pre-activation gradients, 2G floats; the
 * per-sample tail of P is not used). Local memory: nb * (3u + 2G) floats:
 * dh[nb][u] the state gradient, dc[nb][u] lstm's cell gradient, drh[nb][u]
 * gru reset_after=0's d loss / d (r h'), lp[nb][2G] the step's px, ph.
 * Per step: (sample, unit) the gate gradients; gru reset_after=0 then drh
 * (a dot over the h columns); then dx per (sample, input) as a dot over the
 * G columns of W's row, and the carried dh per (sample, unit) over U's.
 */
__kernel void xo_cl_rnn_bwd_seq__wg(__global const float *W, int wo, __global const float *U,
				    int uo, __global const float *ws, int wso,
				    __global const float *dy, int dyo, __global float *dx, int dxo,
				    int has_dx, __global float *P, int op, int N, int T, int in,
				    int u, int seq, int back, int ra, int relu,
				    __global const int *ids, int ido, int has_m, int zo, int nb,
				    __local float *lm)
{
	int G = xo_rnn_gates(op) * u, S = xo_rnn_blocks(op) * u;
	int lid = get_local_id(0), nl = get_local_size(0);
	int n0 = get_group_id(0) * nb, mc = min(nb, N - n0);
	__local float *dh = lm, *dc = dh + nb * u, *drh = dc + nb * u, *lp = drh + nb * u;

	W += wo;
	U += uo;
	ws += wso;
	dy += dyo;
	dx += dxo;
	ids += ido;
	for (int idx = lid; idx < mc * u; idx += nl)
		dh[idx] = dc[idx] = drh[idx] = 0.0f;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = T - 1; s >= 0; s--) {
		int t = back ? T - 1 - s : s;

		for (int idx = lid; idx < mc * u; idx += nl) {
			int m = idx / u, k = idx - m * u, n = n0 + m;
			__global const float *row = ws + ((long)n * T + s) * S;
			__global const float *prev = s > 0 ? row - S : 0;
			__global float *px = P + ((long)n * T + s) * 2 * G, *ph = px + G;
			__local float *lx = lp + m * 2 * G, *lh = lx + G;
			float d = dh[idx];
			int mk = xo_rnn_masked(ids, has_m, n, T, t);

			if (seq && !(mk && zo))
				d += dy[((long)n * T + s) * u + k];
			else if (s == T - 1 && !(mk && zo))
				d += dy[(long)n * u + k];
			dh[idx] = d;
			if (mk) { /* this unit's gate columns 0: dh, dc pass on */
				for (int q = 0; q < xo_rnn_gates(op); q++)
					lx[q * u + k] = lh[q * u + k] = px[q * u + k] =
					    ph[q * u + k] = 0.0f;
			} else if (op == 0) {
				float v = d * xo_rnn_act_d(relu, row[k]);

				lx[k] = lh[k] = px[k] = ph[k] = v;
			} else if (op == 1) {
				float ig = row[k], fg = row[u + k], gg = row[2 * u + k];
				float og = row[3 * u + k], ac = row[5 * u + k];
				float cp = prev ? prev[4 * u + k] : 0.0f;
				float dcc = dc[idx] + d * og * xo_rnn_act_d(relu, ac);
				float v0 = dcc * gg * ig * (1.0f - ig);
				float v1 = dcc * cp * fg * (1.0f - fg);
				float v2 = dcc * ig * xo_rnn_act_d(relu, gg);
				float v3 = d * ac * og * (1.0f - og);

				lx[k] = lh[k] = px[k] = ph[k] = v0;
				lx[u + k] = lh[u + k] = px[u + k] = ph[u + k] = v1;
				lx[2 * u + k] = lh[2 * u + k] = px[2 * u + k] = ph[2 * u + k] = v2;
				lx[3 * u + k] = lh[3 * u + k] = px[3 * u + k] = ph[3 * u + k] = v3;
				dc[idx] = dcc * fg;
			} else {
				float z = row[k], rg = row[u + k], hh = row[2 * u + k];
				float hp = prev ? prev[3 * u + k] : 0.0f;
				float dp = d * (1.0f - z) * xo_rnn_act_d(relu, hh);
				float v0 = d * (hp - hh) * z * (1.0f - z);
				float v2 = ra ? dp * rg : dp;

				lx[k] = lh[k] = px[k] = ph[k] = v0;
				lx[2 * u + k] = px[2 * u + k] = dp;
				lh[2 * u + k] = ph[2 * u + k] = v2;
				if (ra) {
					float v1 = dp * row[4 * u + k] * rg * (1.0f - rg);

					lx[u + k] = lh[u + k] = px[u + k] = ph[u + k] = v1;
				}
			}
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		if (op == 2 && !ra) {
			for (int idx = lid; idx < mc * u; idx += nl) {
				int m = idx / u, k = idx - m * u, n = n0 + m;
				__global const float *row = ws + ((long)n * T + s) * S;
				__global float *px = P + ((long)n * T + s) * 2 * G;
				__local float *lx = lp + m * 2 * G;
				float a = 0.0f, rg = row[u + k];
				float hp = s > 0 ? row[-S + 3 * u + k] : 0.0f, v;

				for (int j = 0; j < u; j++)
					a += lx[2 * u + j] * U[(long)k * G + 2 * u + j];
				drh[idx] = a;
				v = a * hp * rg * (1.0f - rg);
				lx[u + k] = lx[G + u + k] = px[u + k] = px[G + u + k] = v;
			}
			barrier(CLK_LOCAL_MEM_FENCE);
		}
		if (has_dx)
			for (int idx = lid; idx < mc * in; idx += nl) {
				int m = idx / in, i = idx - m * in;
				__local const float *lx = lp + m * 2 * G;
				float a = 0.0f;

				for (int j = 0; j < G; j++)
					a += lx[j] * W[(long)i * G + j];
				dx[((long)(n0 + m) * T + t) * in + i] = a;
			}
		/* the state gradient carried to step s - 1 (this work-item's own
		 * dh, dc, drh elements: the same idx as the first loop) */
		for (int idx = lid; idx < mc * u; idx += nl) {
			int m = idx / u, k = idx - m * u;
			__global const float *row = ws + ((long)(n0 + m) * T + s) * S;
			__local const float *lh = lp + m * 2 * G + G;
			float a = 0.0f;
			int jmax = op == 2 && !ra ? 2 * u : G;

			if (xo_rnn_masked(ids, has_m, n0 + m, T, t))
				continue; /* dh carried past the masked step */
			for (int j = 0; j < jmax; j++)
				a += lh[j] * U[(long)k * G + j];
			if (op == 2) {
				a += dh[idx] * row[k];
				if (!ra)
					a += drh[idx] * row[u + k];
			}
			dh[idx] = a;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}

/*
 * The weight gradients as a split sum (GPUs; with xo_cl_rnn_bwd_w__sum):
 * work-item (e, q) sums the terms of element e (as xo_cl_rnn_bwd_w: dkernel
 * [in][G], then drecurrent_kernel [u][G], then dbias) over rows r = n * T + s
 * of chunk q, r in [q * rows, min((q + 1) * rows, N * T)), r ascending, into
 * part[q * ne + e], ne = in * G + u * G + nb. e is the fastest id: P's and
 * dkernel's columns are read across j.
 */
__kernel void xo_cl_rnn_bwd_w__part(__global const float *x, int xo, __global const float *ws,
				    int wso, __global const float *P, __global float *part,
				    int rows, int nb, int op, int N, int T, int in, int u,
				    int back, int ra)
{
	int e = get_global_id(0), q = get_global_id(1);
	int G = xo_rnn_gates(op) * u, S = xo_rnn_blocks(op) * u, hb = xo_rnn_hblock(op);
	int nw = in * G, nu = u * G, ne = nw + nu + nb;
	int r0 = q * rows, r1 = min(r0 + rows, N * T);
	float a = 0.0f;

	if (e >= ne || r0 >= N * T)
		return;
	x += xo;
	ws += wso;
	if (e < nw) {
		int i = e / G, j = e - i * G;

		for (int r = r0; r < r1; r++) {
			int n = r / T, s = r - n * T, t = back ? T - 1 - s : s;

			a += x[((long)n * T + t) * in + i] * P[(long)r * 2 * G + j];
		}
	} else if (e < nw + nu) {
		int k = (e - nw) / G, j = (e - nw) % G;
		int via_r = op == 2 && !ra && j >= 2 * u;

		for (int r = r0; r < r1; r++) {
			int s = r % T;
			float hp;

			if (s == 0)
				continue;
			hp = ws[((long)r - 1) * S + hb * u + k];
			if (via_r)
				hp *= ws[(long)r * S + u + k];
			a += hp * P[(long)r * 2 * G + G + j];
		}
	} else {
		int j = e - nw - nu;

		for (int r = r0; r < r1; r++)
			a += P[(long)r * 2 * G + j]; /* px, then ph */
	}
	part[(long)q * ne + e] = a;
}

/* Second half of the split weight gradients: element e is the sum over the
 * chunks q = 0, 1, ... (in order) of part[q * ne + e], stored to dkernel,
 * drecurrent_kernel or dbias. */
__kernel void xo_cl_rnn_bwd_w__sum(__global const float *part, int nq, int nw, int nu, int nb,
				   __global float *dW, int dwo, __global float *dU, int duo,
				   __global float *db, int dbo)
{
	int e = get_global_id(0), ne = nw + nu + nb;
	float a = 0.0f;

	if (e >= ne)
		return;
	for (int q = 0; q < nq; q++)
		a += part[(long)q * ne + e];
	if (e < nw)
		dW[dwo + e] = a;
	else if (e < nw + nu)
		dU[duo + e - nw] = a;
	else
		db[dbo + e - nw - nu] = a;
}
