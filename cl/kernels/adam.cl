/*
 * adam.cl - one Adam step (Keras 3) over `size` elements in one launch; the
 * model keeps all parameters in one flat buffer and passes views, so one call
 * updates every layer. lr_t = lr * sqrt(1 - b2^t) / (1 - b1^t) is computed by
 * the host in double and passed as float.
 */
__kernel void xo_cl_adam_fwd(__global const float *g, int go, __global float *w, int wo,
			     __global float *m, int mo, __global float *v, int vo, int size,
			     float c1, float c2, float eps, float lr_t)
{
	int i = get_global_id(0);

	if (i < size)
		xo_adam_elem(g[go + i], w + wo, m + mo, v + vo, i, c1, c2, eps, lr_t);
}
