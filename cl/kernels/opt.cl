/*
 * opt.cl - one SGD or RMSprop step (Keras 3 keras/src/optimizers/sgd.py,
 * rmsprop.py, centered=False) over `size` elements in one launch, in float
 * (the formulas: include/xo/ops.def). momentum == 0 leaves the momentum
 * buffer untouched, as Keras has none then.
 */
__kernel void xo_cl_sgd_fwd(__global const float *g, int go, __global float *w, int wo,
			    __global float *m, int mo, int size, float lr, float mu, int nesterov)
{
	int i = get_global_id(0);

	if (i < size) {
		float gl = g[go + i] * lr;

		if (mu != 0.0f) {
			float mn = m[mo + i] * mu - gl;

			m[mo + i] = mn;
			w[wo + i] = nesterov ? w[wo + i] + (mn * mu - gl) : w[wo + i] + mn;
		} else {
			w[wo + i] = w[wo + i] - gl;
		}
	}
}

__kernel void xo_cl_rmsprop_fwd(__global const float *g, int go, __global float *w, int wo,
				__global float *v, int vo, __global float *mom, int mo, int size,
				float lr, float rho, float mu, float eps)
{
	int i = get_global_id(0);

	if (i < size) {
		float gi = g[go + i];
		float vn = rho * v[vo + i] + (1.0f - rho) * (gi * gi);
		float inc = lr * gi / sqrt(vn + eps);

		v[vo + i] = vn;
		if (mu > 0.0f) {
			float mn = mu * mom[mo + i] + inc;

			mom[mo + i] = mn;
			w[wo + i] = w[wo + i] - mn;
		} else {
			w[wo + i] = w[wo + i] - inc;
		}
	}
}
