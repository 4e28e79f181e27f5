/*
 * act.cl - relu, sigmoid and softmax forward and backward. relu and sigmoid
 * are one work-item per element; softmax is one work-item per row of `cols`
 * elements (the last axis), max-subtracted. Backward takes the derivative from
 * the forward output y. xo_cl_softmax_fwd may run in place (x == y), which is
 * how conv1d/dense apply a softmax activation; xo_cl_softmax_bwd also makes
 * the dpre buffer of conv1d/dense backward with softmax activation.
 */

__kernel void xo_cl_relu_fwd(__global const float *x, int xo, __global float *y, int yo, int n)
{
	int i = get_global_id(0);

	if (i < n)
		y[yo + i] = xo_act(x[xo + i], XO_ACT_RELU);
}

__kernel void xo_cl_relu_bwd(__global const float *y, int yo, __global const float *dy, int dyo,
			     __global float *dx, int dxo, int n)
{
	int i = get_global_id(0);

	if (i < n)
		dx[dxo + i] = xo_act_grad(y[yo + i], dy[dyo + i], XO_ACT_RELU);
}

__kernel void xo_cl_sigmoid_fwd(__global const float *x, int xo, __global float *y, int yo, int n)
{
	int i = get_global_id(0);

	if (i < n)
		y[yo + i] = xo_act(x[xo + i], XO_ACT_SIGMOID);
}

__kernel void xo_cl_sigmoid_bwd(__global const float *y, int yo, __global const float *dy,
				int dyo, __global float *dx, int dxo, int n)
{
	int i = get_global_id(0);

	if (i < n)
		dx[dxo + i] = xo_act_grad(y[yo + i], dy[dyo + i], XO_ACT_SIGMOID);
}

/* y = exp(x - max) / sum exp(x - max) per row; in place allowed. */
__kernel void xo_cl_softmax_fwd(__global const float *x, int xo, __global float *y, int yo,
				int rows, int cols)
{
	int r = get_global_id(0);

	if (r >= rows)
		return;
	for (int j = 0; j < cols; j++)
		y[yo + r * cols + j] = x[xo + r * cols + j];
	xo_softmax_row(y + yo + r * cols, cols);
}

/* dx = y * (dy - sum_j dy_j * y_j) per row. */
__kernel void xo_cl_softmax_bwd(__global const float *y, int yo, __global const float *dy, int dyo,
				__global float *dx, int dxo, int rows, int cols)
{
	int r = get_global_id(0);
	int base;
	float dot = 0.0f;

	if (r >= rows)
		return;
	base = r * cols;
	for (int j = 0; j < cols; j++)
		dot += dy[dyo + base + j] * y[yo + base + j];
	for (int j = 0; j < cols; j++)
		dx[dxo + base + j] = y[yo + base + j] * (dy[dyo + base + j] - dot);
}
