/*
 * loss.cl - categorical cross-entropy forward/backward and accuracy.
 * p[batch][ch] are probabilities, t[batch][ch] one-hot (or soft) targets.
 *
 * The reductions (loss, correct count) run in ONE work-group of XO_RED_WG
 * work-items: each strides over rows, then a tree in local memory; launched
 * with global = local = XO_RED_WG. The count is an integer sum, so exact.
 */

#define XO_CE_EPS 1e-7f

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
			float q = clamp(p[j] / s, XO_CE_EPS, 1.0f - XO_CE_EPS);    \
                                                                                   \
			row -= t[j] * log(q);                                      \
		}                                                                  \
		return row;                                                        \
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

/* loss[0] = mean_n -sum_j t * log(clip(p / rowsum(p), eps, 1 - eps)) (Keras). */
__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_categorical_crossentropy_fwd(__global const float *p, int po, __global const float *t,
				   int to, __global float *loss, int lo, int batch, int ch)
{
	__local float part[XO_RED_WG];
	int lid = get_local_id(0);
	float acc = 0.0f;

	for (int n = lid; n < batch; n += XO_RED_WG)
		acc += xo_row_ce_g(p + po + n * ch, t + to + n * ch, ch);
	acc = xo_group_sum(part, lid, acc);
	if (lid == 0)
		loss[lo] = acc / (float)batch;
}

/* dz = (p - t) / batch: the gradient w.r.t. the softmax input (fused). */
__kernel void xo_cl_categorical_crossentropy_bwd(__global const float *p, int po,
						 __global const float *t, int to,
						 __global float *dz, int dzo, int batch, int ch)
{
	int i = get_global_id(0);

	if (i < batch * ch)
		dz[dzo + i] = (p[po + i] - t[to + i]) / (float)batch;
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
