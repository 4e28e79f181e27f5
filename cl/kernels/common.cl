/*
 * common.cl - shared definitions of every crossover OpenCL kernel. The host
 * concatenates all cl/kernels/<family>.cl files (this one first) into one program,
 * built once per context with -cl-std=CL1.2 and the tuning macros below.
 *
 * Conventions of every kernel:
 *   - a tensor argument is a (__global pointer, int element offset) pair:
 *     views of one flat buffer carry their offset here, never a sub-buffer;
 *   - sizes are int (the host refuses tensors of more than INT_MAX elements);
 *   - a kernel over N items is launched with N rounded up to the work-group
 *     size and returns early for ids >= N; kernels over [batch][len][ch]
 *     use a 3-D range (ch, len, batch) instead of dividing a flat id (an
 *     integer division per work-item cost PoCL ~20x on a copy-like kernel);
 *     each dimension is rounded up separately;
 *   - outputs are overwritten, never accumulated into.
 *
 * Tuning macros (from the host's (vendor, device) table, cl/tune.c):
 *   XO_RED_WG  work-group size of the single-work-group reductions (power of 2)
 *   XO_TILE    tile edge of the tiled dense kernel (XO_TILE^2 work-items)
 */

/* No a*b+c contraction into fma: results must round like the host's
 * -ffp-contract=off reference, op by op. */
#pragma OPENCL FP_CONTRACT OFF

/* A float as Keras's compiled graphs see it in a compare (xo_daz in
 * include/xo/backend.h): a subnormal is 0, whatever the device's own
 * denormal mode. */
static inline float xo_daz(float v)
{
	return v > -FLT_MIN && v < FLT_MIN ? 0.0f : v;
}

#ifndef XO_RED_WG
#define XO_RED_WG 64
#endif
#ifndef XO_TILE
#define XO_TILE 8
#endif

/* enum xo_activation */
#define XO_ACT_LINEAR 0
#define XO_ACT_RELU 1
#define XO_ACT_SIGMOID 2
#define XO_ACT_SOFTMAX 3

/* Elementwise activations; softmax is a separate row kernel (act.cl). */
static inline float xo_act(float v, int act)
{
	if (act == XO_ACT_RELU) /* NaN passes through, like the reference */
		return (v > 0.0f || isnan(v)) ? v : 0.0f;
	if (act == XO_ACT_SIGMOID)
		return 1.0f / (1.0f + exp(-v));
	return v;
}

/* d loss / d pre-activation from the activation's output y and d loss / d y,
 * for the elementwise activations (softmax goes through a dpre buffer). */
static inline float xo_act_grad(float y, float dy, int act)
{
	if (act == XO_ACT_RELU)
		return y > 0.0f ? dy : 0.0f;
	if (act == XO_ACT_SIGMOID)
		return dy * y * (1.0f - y);
	return dy;
}

/* In-place max-subtracted softmax of one row of n (first maximum under >;
 * a NaN anywhere makes the row NaN through exp and the sum). */
static inline void xo_softmax_row(__global float *r, int n)
{
	float m = r[0], s = 0.0f;

	for (int j = 1; j < n; j++)
		m = r[j] > m ? r[j] : m;
	for (int j = 0; j < n; j++) {
		float e = exp(r[j] - m);

		r[j] = e;
		s += e;
	}
	for (int j = 0; j < n; j++)
		r[j] = r[j] / s;
}

/* Sum of v over the XO_RED_WG work-items of a work-group (local id lid),
 * pairwise in the group's local scratch part: the same order on every run.
 * Every work-item of the group must call it; the sum is valid in lid 0.
 * Stamped out for float (xo_group_sum) and int (xo_group_sum_int). */
#define XO_GROUP_SUM_FN(type, name)                              \
	static inline type name(__local type *part, int lid, type v)    \
	{                                                        \
		part[lid] = v;                                   \
		barrier(CLK_LOCAL_MEM_FENCE);                    \
		for (int h = XO_RED_WG / 2; h > 0; h >>= 1) {    \
			if (lid < h)                             \
				part[lid] += part[lid + h];      \
			barrier(CLK_LOCAL_MEM_FENCE);            \
		}                                                \
		return part[0];                                  \
	}

XO_GROUP_SUM_FN(float, xo_group_sum)
XO_GROUP_SUM_FN(int, xo_group_sum_int)

/* The end of the work-group dw+db kernels (conv.cl, dense.cl), one group g per
 * output: sums v over the group (xo_group_sum) and lid 0 stores it into
 * dw[g] for g < nw, else into db[g - nw] when has_db. */
static inline void xo_group_store_dw_db(__local float *part, int lid, float v, int g, int nw,
				 __global float *dw, int dwo, __global float *db, int dbo,
				 int has_db)
{
	v = xo_group_sum(part, lid, v);
	if (lid != 0)
		return;
	if (g < nw)
		dw[dwo + g] = v;
	else if (has_db)
		db[dbo + g - nw] = v;
}

/* One Adam step (Keras 3) of element i with gradient gi, updating w, m and v
 * in place; lr_t = lr * sqrt(1 - b2^t) / (1 - b1^t) from the host. Shared by
 * the adam op and the fused network update, so both round alike. */
static inline void xo_adam_elem(float gi, __global float *w, __global float *m, __global float *v, int i,
			 float c1, float c2, float eps, float lr_t)
{
	float mi = m[i], vi = v[i];

	mi = mi + (gi - mi) * c1; /* c1, c2: 1 - beta as Keras has them */
	vi = vi + (gi * gi - vi) * c2;
	m[i] = mi;
	v[i] = vi;
	w[i] = w[i] - lr_t * mi / (sqrt(vi) + eps);
}
