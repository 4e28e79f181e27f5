/*
 * loss.cl - categorical cross-entropy forward/backward and accuracy.
 * p[batch][ch] are probabilities, t[batch][ch] one-hot (or soft) targets.
 *
 * The reductions (loss, correct count) run in ONE work-group of XO_RED_WG
 * work-items: each strides over rows, then a tree in local memory; launched
 * with global = local = XO_RED_WG. The count is an integer sum, so exact.
 */

#define XO_CE_EPS 1e-7f

/* loss[0] = mean_n -sum_j t * log(clip(p / rowsum(p), eps, 1 - eps)) (Keras). */
__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_categorical_crossentropy_fwd(__global const float *p, int po, __global const float *t,
				   int to, __global float *loss, int lo, int batch, int ch)
{
	__local float part[XO_RED_WG];
	int lid = get_local_id(0);
	float acc = 0.0f;

	for (int n = lid; n < batch; n += XO_RED_WG) {
		__global const float *pr = p + po + n * ch;
		__global const float *tr = t + to + n * ch;
		float s = 0.0f, row = 0.0f;

		for (int j = 0; j < ch; j++)
			s += pr[j];
		for (int j = 0; j < ch; j++) {
			float q = clamp(pr[j] / s, XO_CE_EPS, 1.0f - XO_CE_EPS);

			row -= tr[j] * log(q);
		}
		acc += row;
	}
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

/* First maximum of a row. */
inline int xo_row_argmax(__global const float *r, int ch)
{
	int best = 0;

	for (int j = 1; j < ch; j++)
		if (r[j] > r[best])
			best = j;
	return best;
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
		int a = xo_row_argmax(p + po + n * ch, ch);

		idx[io + n] = a;
		hits += a == xo_row_argmax(t + to + n * ch, ch);
	}
	part[lid] = hits;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int h = XO_RED_WG / 2; h > 0; h >>= 1) {
		if (lid < h)
			part[lid] += part[lid + h];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0)
		correct[co] = (float)part[0];
}
