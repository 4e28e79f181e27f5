/*
 * cpu_opt.c - the SGD and RMSprop updates on the cpu backend (Keras 3
 * keras/src/optimizers/sgd.py, rmsprop.py; the formulas are in
 * include/xo/ops.def and reference/ref_opt.c). Scalar loops in double with
 * the state rounded to float on store, as the reference: O(size), one pass,
 * each element independent, so no thread split is worth its start here.
 */
#include <math.h>

#include "cpu.h"

static enum xo_status cpu_sgd(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *g = xo_tensor_f32(a->src[0]);
	float *w = xo_tensor_f32(a->dst[0]), *m = xo_tensor_f32(a->dst[1]);
	double lr = (double)p->lr, mu = (double)p->momentum;

	(void)be;
	for (int64_t i = 0; i < p->size; i++) {
		double gl = (double)g[i] * lr;

		if (p->momentum != 0.0f) {
			float mf = (float)((double)m[i] * mu - gl);

			m[i] = mf;
			w[i] = (float)(p->nesterov ? (double)w[i] + ((double)mf * mu - gl)
			                           : (double)w[i] + (double)mf);
		} else {
			w[i] = (float)((double)w[i] - gl);
		}
	}
	return XO_OK;
}

static enum xo_status cpu_rmsprop(struct xo_backend *be, const struct xo_op_args *a)
{
	const struct xo_params *p = &a->p;
	const float *g = xo_tensor_f32(a->src[0]);
	float *w = xo_tensor_f32(a->dst[0]), *v = xo_tensor_f32(a->dst[1]);
	float *mom = xo_tensor_f32(a->dst[2]);
	double lr = (double)p->lr, rho = (double)p->rho, mu = (double)p->momentum;
	double eps = (double)p->epsilon;

	(void)be;
	for (int64_t i = 0; i < p->size; i++) {
		double gi = g[i];
		float vf = (float)(rho * (double)v[i] + (1.0 - rho) * (gi * gi));
		double inc = lr * gi / sqrt((double)vf + eps);

		v[i] = vf;
		if (p->momentum > 0.0f) {
			float mf = (float)(mu * (double)mom[i] + inc);

			mom[i] = mf;
			w[i] = (float)((double)w[i] - (double)mf);
		} else {
			w[i] = (float)((double)w[i] - inc);
		}
	}
	return XO_OK;
}

XO_CPU_ENTRY(sgd, fwd, cpu_sgd)
XO_CPU_ENTRY(rmsprop, fwd, cpu_rmsprop)
