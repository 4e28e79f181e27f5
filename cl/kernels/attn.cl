/* attention (ops.def): scaled dot-product attention per (sample, head). Every
 * tensor is [batch][T][H * d] (head h at column h * d); tq, tk the query and
 * key lengths, h the heads, dk, dv the widths, causal: row i sees keys
 * j <= i. The forward and the row pass of the backward take one work-item
 * per (sample, query row, head); the key pass of the backward one per
 * (sample, key row, head). A score is always xo_attn_score's expression, so
 * both backward passes see the same probabilities. Dropout (the host passes
 * rate > 0 when training, else 0) weighs p_ij by xo_attn_weight: pd = p w
 * in the weighted sum and dv, dp = (dy . v) w in D and ds. A row keeps key
 * j by xo_attn_keep (causal, the mask m != 0); a row that keeps none has
 * the statistics l = 0 and p = empty on every key (the host's 1/Tk, or 0
 * with dropout), its scores outside the gradient (ops.def). */

/* The mask's arguments of every attention kernel: the mask [b][tq][tk] at
 * element offset mo0 (any buffer when has_mask is 0), and p of a row that
 * keeps no key. */
#define XO_ATTN_MASK_ARGS __global const float *msk, int mo0, int has_mask, float empty

/* The dropout's arguments of every attention kernel (xo_attn_weight). */
#define XO_ATTN_DROP_ARGS float rate, float dscale, uint seed_lo, uint seed_hi, uint step_lo, uint layer
#define XO_ATTN_DROP rate, dscale, seed_lo, seed_hi, step_lo, layer

/* Whether row i keeps key j: causal keeps j <= i, the mask (its row at
 * mrow) m != 0 */
int xo_attn_keep(int causal, int i, int j, __global const float *msk, long mrow, int has_mask)
{
	if (causal && j > i)
		return 0;
	return !has_mask || xo_daz(msk[mrow + j]) != 0.0f;
}

/* The dropout weight of p_ij: 1 when rate is 0, else dscale (the host's
 * 1 / (1 - rate) in float) or 0 by the Philox word of the flat index
 * e = ((n * H + hd) * Tq + i) * Tk + j, as xo_dropout_keep draws it
 * (random.cl: counter {e/4 lo, e/4 hi, step lo, layer}, word e%4). */
float xo_attn_weight(uint blk_lo, uint blk_hi, uint word, XO_ATTN_DROP_ARGS)
{
	uint4 r;
	uint w;

	if (rate == 0.0f)
		return 1.0f;
	r = xo_philox4x32_10(blk_lo, blk_hi, step_lo, layer, seed_lo, seed_hi);
	w = word == 0 ? r.x : word == 1 ? r.y : word == 2 ? r.z : r.w;
	return (float)(w >> 8) * (1.0f / 16777216.0f) >= rate ? dscale : 0.0f;
}

/* The flat index e as xo_attn_weight's block (two words) and word. Under
 * Oclgrind 21.10 a long argument of that function was read wrong (a
 * printf in it saw another e than its caller passed; the weights of e >= 8
 * differed from PoCL's and the reference's), so only uints cross the call. */
#define XO_ATTN_E(e) (uint)((ulong)(e) >> 2), (uint)((ulong)(e) >> 34), (uint)(e) & 3u

/* (q_i scale) . k_j over dk, in order */
float xo_attn_score(__global const float *q, long qo, __global const float *k, long ko, int dk,
		    float scale)
{
	float s = 0.0f;

	for (int c = 0; c < dk; c++)
		s = fma(q[qo + c] * scale, k[ko + c], s);
	return s;
}

/* The row's maximum score and sum of exp(s - max) over its kept keys;
 * both 0 for a row that keeps none. */
void xo_attn_stats(__global const float *q, long qo, __global const float *k, long kb, long kst,
		   int tk, int dk, float scale, int causal, int i, __global const float *msk,
		   long mrow, int has_mask, float *m, float *l)
{
	float mx = -INFINITY, sum = 0.0f;

	for (int j = 0; j < tk; j++)
		if (xo_attn_keep(causal, i, j, msk, mrow, has_mask))
			mx = fmax(mx, xo_attn_score(q, qo, k, kb + j * kst, dk, scale));
	for (int j = 0; j < tk; j++)
		if (xo_attn_keep(causal, i, j, msk, mrow, has_mask))
			sum += exp(xo_attn_score(q, qo, k, kb + j * kst, dk, scale) - mx);
	*m = sum == 0.0f ? 0.0f : mx;
	*l = sum;
}

__kernel void xo_cl_attention_fwd(__global const float *q, int qo0, __global const float *k,
				  int ko0, __global const float *v, int vo0, __global float *o,
				  int oo0, XO_ATTN_MASK_ARGS, int b, int tq, int tk, int h, int dk,
				  int dv, int causal, float scale, XO_ATTN_DROP_ARGS)
{
	long id = get_global_id(0);
	int hd, i, n;
	long qo, kb, vb, oo, eb, mrow;
	float m, l;

	if (id >= (long)b * tq * h)
		return;
	hd = (int)(id % h);
	i = (int)(id / h % tq);
	n = (int)(id / h / tq);
	mrow = mo0 + ((long)n * tq + i) * tk;
	qo = qo0 + ((long)n * tq + i) * h * dk + (long)hd * dk;
	kb = ko0 + (long)n * tk * h * dk + (long)hd * dk;
	vb = vo0 + (long)n * tk * h * dv + (long)hd * dv;
	oo = oo0 + ((long)n * tq + i) * h * dv + (long)hd * dv;
	xo_attn_stats(q, qo, k, kb, (long)h * dk, tk, dk, scale, causal, i, msk, mrow, has_mask, &m,
		      &l);
	for (int e = 0; e < dv; e++)
		o[oo + e] = 0.0f;
	eb = (((long)n * h + hd) * tq + i) * tk;
	for (int j = 0; j < tk; j++) {
		long vo = vb + (long)j * h * dv;
		float p = empty;

		if (l != 0.0f) {
			if (!xo_attn_keep(causal, i, j, msk, mrow, has_mask))
				continue;
			p = exp(xo_attn_score(q, qo, k, kb + (long)j * h * dk, dk, scale) - m) / l;
		}

		if (rate != 0.0f)
			p *= xo_attn_weight(XO_ATTN_E(eb + j), XO_ATTN_DROP);

		for (int e = 0; e < dv; e++)
			o[oo + e] = fma(p, v[vo + e], o[oo + e]);
	}
}

/* dy_i . v_j over dv */
float xo_attn_dp(__global const float *dy, long yo, __global const float *v, long vo, int dv)
{
	float s = 0.0f;

	for (int e = 0; e < dv; e++)
		s = fma(dy[yo + e], v[vo + e], s);
	return s;
}

/* Backward, query rows: dq_i, and the row's (max, sum, D_i) into st[id * 3]. */
__kernel void xo_cl_attention_bwd(__global const float *q, int qo0, __global const float *k,
				  int ko0, __global const float *v, int vo0,
				  __global const float *dy, int yo0, __global float *dq, int dqo0,
				  __global float *st, XO_ATTN_MASK_ARGS, int b, int tq, int tk, int h,
				  int dk, int dv, int causal, float scale, XO_ATTN_DROP_ARGS)
{
	long id = get_global_id(0);
	int hd, i, n;
	long qo, kb, vb, yo, eb, mrow;
	float m, l, d = 0.0f;

	if (id >= (long)b * tq * h)
		return;
	hd = (int)(id % h);
	i = (int)(id / h % tq);
	n = (int)(id / h / tq);
	mrow = mo0 + ((long)n * tq + i) * tk;
	qo = qo0 + ((long)n * tq + i) * h * dk + (long)hd * dk;
	kb = ko0 + (long)n * tk * h * dk + (long)hd * dk;
	vb = vo0 + (long)n * tk * h * dv + (long)hd * dv;
	yo = yo0 + ((long)n * tq + i) * h * dv + (long)hd * dv;
	xo_attn_stats(q, qo, k, kb, (long)h * dk, tk, dk, scale, causal, i, msk, mrow, has_mask, &m,
		      &l);
	eb = (((long)n * h + hd) * tq + i) * tk;
	for (int j = 0; j < tk && l != 0.0f; j++) {
		float p, dp;

		if (!xo_attn_keep(causal, i, j, msk, mrow, has_mask))
			continue;
		p = exp(xo_attn_score(q, qo, k, kb + (long)j * h * dk, dk, scale) - m) / l;
		dp = xo_attn_dp(dy, yo, v, vb + (long)j * h * dv, dv);

		if (rate != 0.0f)
			dp *= xo_attn_weight(XO_ATTN_E(eb + j), XO_ATTN_DROP);
		d += p * dp;
	}
	st[id * 3] = m;
	st[id * 3 + 1] = l;
	st[id * 3 + 2] = d;
	for (int c = 0; c < dk; c++)
		dq[dqo0 - qo0 + qo + c] = 0.0f;
	for (int j = 0; j < tk && l != 0.0f; j++) { /* a row of no key: dq 0 */
		long ko = kb + (long)j * h * dk;
		float p, dp, ds;

		if (!xo_attn_keep(causal, i, j, msk, mrow, has_mask))
			continue;
		p = exp(xo_attn_score(q, qo, k, ko, dk, scale) - m) / l;
		dp = xo_attn_dp(dy, yo, v, vb + (long)j * h * dv, dv);
		if (rate != 0.0f)
			dp *= xo_attn_weight(XO_ATTN_E(eb + j), XO_ATTN_DROP);
		ds = p * (dp - d) * scale;

		for (int c = 0; c < dk; c++)
			dq[dqo0 - qo0 + qo + c] = fma(ds, k[ko + c], dq[dqo0 - qo0 + qo + c]);
	}
}

/* Backward, key rows: dk_j and dv_j from the query rows that see key j,
 * their statistics from the row pass. */
__kernel void xo_cl_attention_bwd_kv(__global const float *q, int qo0, __global const float *k,
				     int ko0, __global const float *v, int vo0,
				     __global const float *dy, int yo0, __global float *dk_,
				     int dko0, __global float *dv_, int dvo0,
				     __global const float *st, XO_ATTN_MASK_ARGS, int b, int tq, int tk,
				     int h, int dk, int dv, int causal, float scale, XO_ATTN_DROP_ARGS)
{
	long id = get_global_id(0);
	int hd, j, n;
	long ko, vo, dko, dvo;

	if (id >= (long)b * tk * h)
		return;
	hd = (int)(id % h);
	j = (int)(id / h % tk);
	n = (int)(id / h / tk);
	ko = ko0 + ((long)n * tk + j) * h * dk + (long)hd * dk;
	vo = vo0 + ((long)n * tk + j) * h * dv + (long)hd * dv;
	dko = dko0 + ((long)n * tk + j) * h * dk + (long)hd * dk;
	dvo = dvo0 + ((long)n * tk + j) * h * dv + (long)hd * dv;
	for (int c = 0; c < dk; c++)
		dk_[dko + c] = 0.0f;
	for (int e = 0; e < dv; e++)
		dv_[dvo + e] = 0.0f;
	for (int i = 0; i < tq; i++) {
		long r = ((long)n * tq + i) * h + hd;
		long qo = qo0 + r * dk, yo = yo0 + r * dv;
		float p, ds, w = 1.0f, dp;

		if (st[r * 3 + 1] == 0.0f) { /* keeps no key: p = empty, no ds */
			for (int e = 0; e < dv && empty != 0.0f; e++)
				dv_[dvo + e] = fma(empty, dy[yo + e], dv_[dvo + e]);
			continue;
		}
		if (!xo_attn_keep(causal, i, j, msk, mo0 + ((long)n * tq + i) * tk, has_mask))
			continue;
		p = exp(xo_attn_score(q, qo, k, ko, dk, scale) - st[r * 3]) / st[r * 3 + 1];
		dp = xo_attn_dp(dy, yo, v, vo, dv);
		if (rate != 0.0f) {
			w = xo_attn_weight(XO_ATTN_E((((long)n * h + hd) * tq + i) * tk + j), XO_ATTN_DROP);
			dp *= w;
		}
		ds = p * (dp - st[r * 3 + 2]) * scale;
		for (int c = 0; c < dk; c++)
			dk_[dko + c] = fma(ds, q[qo + c], dk_[dko + c]);
		if (rate != 0.0f)
			p *= w;
		for (int e = 0; e < dv; e++)
			dv_[dvo + e] = fma(p, dy[yo + e], dv_[dvo + e]);
	}
}

/* mask_outer (ops.def): y[n][i][j] = 1 where the query's ids (qm), the key's
 * ids (vm) and m (has_m) all keep, else 0. ids is [b][t] (t = tq with qm,
 * else tk) at element offset io, any buffer when neither flag is set; m
 * [b][tq][tk] at mo, any buffer without it. 2-D range (j, row n * tq + i). */
__kernel void xo_cl_mask_outer_fwd(__global const int *ids, int io, __global const float *m,
				   int mo, __global float *y, int yo, int rows, int tq, int tk,
				   int t, int qm, int vm, int has_m)
{
	int j = get_global_id(0), r = get_global_id(1);
	int n, i, keep;
	long e;

	if (j >= tk || r >= rows)
		return;
	n = r / tq;
	i = r % tq;
	e = (long)r * tk + j;
	keep = (!qm || ids[io + (long)n * t + i] != 0) && (!vm || ids[io + (long)n * t + j] != 0) &&
	       (!has_m || xo_daz(m[mo + e]) != 0.0f);
	y[yo + e] = keep ? 1.0f : 0.0f;
}
