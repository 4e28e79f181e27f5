/*
 * act.cl - relu, sigmoid, softmax, tanh, elu, gelu and softplus forward and
 * backward. relu and sigmoid
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

/*
 * tanh, elu (alpha 1), gelu (exact) and softplus: one work-item per element,
 * the forms of kernels/cpu_act.c (reasons there): bwd takes y for tanh, x
 * for elu, gelu and softplus. Bounds: suites/harness.c (ULP_TANH_FWD ...).
 */
#define XO_SQRT1_2F   0.70710678118654752440f
#define XO_RSQRT_2PIF 0.39894228040143267794f

__kernel void xo_cl_tanh_fwd(__global const float *x, int xo, __global float *y, int yo, int n)
{
	int i = get_global_id(0);

	if (i < n)
		y[yo + i] = tanh(x[xo + i]);
}

__kernel void xo_cl_tanh_bwd(__global const float *y, int yo, __global const float *dy, int dyo,
			     __global float *dx, int dxo, int n)
{
	int i = get_global_id(0);

	if (i < n) {
		float v = y[yo + i];

		dx[dxo + i] = dy[dyo + i] * ((1.0f - v) * (1.0f + v));
	}
}

/* elu fwd: x where x > 0, else alpha * expm1(x) (alpha 1: expm1's bits) */
__kernel void xo_cl_elu_fwd(__global const float *x, int xo, __global float *y, int yo, int n,
			    float alpha)
{
	int i = get_global_id(0);

	if (i < n) {
		float v = x[xo + i];

		y[yo + i] = v > 0.0f ? v : alpha * expm1(v);
	}
}

/* elu bwd from x (any alpha): dy where x > 0, else dy (alpha exp(x)) */
__kernel void xo_cl_elu_bwd(__global const float *x, int xo, __global const float *dy, int dyo,
			    __global float *dx, int dxo, int n, float alpha)
{
	int i = get_global_id(0);

	if (i < n) {
		float v = x[xo + i], g = dy[dyo + i];

		dx[dxo + i] = v > 0.0f ? g : g * (alpha * exp(v));
	}
}

__kernel void xo_cl_gelu_fwd(__global const float *x, int xo, __global float *y, int yo, int n)
{
	int i = get_global_id(0);

	if (i < n) {
		float v = x[xo + i];

		y[yo + i] = 0.5f * v * erfc(-v * XO_SQRT1_2F);
	}
}

__kernel void xo_cl_gelu_bwd(__global const float *x, int xo, __global const float *dy, int dyo,
			     __global float *dx, int dxo, int n)
{
	int i = get_global_id(0);

	if (i < n) {
		float v = x[xo + i];
		float a = 0.5f * erfc(-v * XO_SQRT1_2F);
		float b = v * XO_RSQRT_2PIF * exp(-0.5f * (v * v));

		dx[dxo + i] = dy[dyo + i] * (a + b);
	}
}

__kernel void xo_cl_softplus_fwd(__global const float *x, int xo, __global float *y, int yo,
				 int n)
{
	int i = get_global_id(0);

	if (i < n) {
		float v = x[xo + i];

		y[yo + i] = isnan(v) ? v : fmax(v, 0.0f) + log1p(exp(-fabs(v)));
	}
}

__kernel void xo_cl_softplus_bwd(__global const float *x, int xo, __global const float *dy,
				 int dyo, __global float *dx, int dxo, int n)
{
	int i = get_global_id(0);

	if (i < n)
		dx[dxo + i] = dy[dyo + i] / (1.0f + exp(-x[xo + i]));
}

/*
 * The clipped activations, one work-item per element, the forms of
 * kernels/cpu.c's loops (kinks and NaN as reference/ref_act.c): bwd from x.
 */
__kernel void xo_cl_relu6_fwd(__global const float *x, int xo, __global float *y, int yo, int n)
{
	int i = get_global_id(0);

	if (i < n) {
		float v = x[xo + i];

		y[yo + i] = v >= 6.0f ? 6.0f : v > 0.0f || isnan(v) ? v : 0.0f;
	}
}

__kernel void xo_cl_relu6_bwd(__global const float *x, int xo, __global const float *dy, int dyo,
			      __global float *dx, int dxo, int n)
{
	int i = get_global_id(0);

	if (i < n) {
		float v = x[xo + i];

		dx[dxo + i] = v > 0.0f && v < 6.0f ? dy[dyo + i] : 0.0f;
	}
}

__kernel void xo_cl_hard_sigmoid_fwd(__global const float *x, int xo, __global float *y, int yo,
				     int n)
{
	int i = get_global_id(0);

	if (i < n) {
		float t = x[xo + i] + 3.0f;

		y[yo + i] = t >= 6.0f ? 1.0f : t > 0.0f || isnan(t) ? t / 6.0f : 0.0f;
	}
}

__kernel void xo_cl_hard_sigmoid_bwd(__global const float *x, int xo, __global const float *dy,
				     int dyo, __global float *dx, int dxo, int n)
{
	int i = get_global_id(0);

	if (i < n) {
		float v = x[xo + i];

		dx[dxo + i] = v > -3.0f && v < 3.0f ? dy[dyo + i] / 6.0f : 0.0f;
	}
}

/* silu: kernels/cpu.c's forms (s and 1 - s from e = exp(-|x|) by the sign) */
__kernel void xo_cl_silu_fwd(__global const float *x, int xo, __global float *y, int yo, int n)
{
	int i = get_global_id(0);

	if (i < n) {
		float v = x[xo + i], e = exp(-fabs(v)), d = 1.0f + e;

		y[yo + i] = v >= 0.0f ? v / d : v * e / d;
	}
}

__kernel void xo_cl_silu_bwd(__global const float *x, int xo, __global const float *dy, int dyo,
			     __global float *dx, int dxo, int n)
{
	int i = get_global_id(0);

	if (i < n) {
		float v = x[xo + i], e = exp(-fabs(v)), d = 1.0f + e;
		float s = v >= 0.0f ? 1.0f / d : e / d, c = v >= 0.0f ? e / d : 1.0f / d;

		dx[dxo + i] = dy[dyo + i] * (s + v * s * c);
	}
}

/* log_softmax: one work-item per row of `cols`, kernels/cpu.c's steps:
 * y = (x - m) - log(sum exp(x - m)); in place allowed. bwd dx = dy - exp(y)
 * sum(dy). */
__kernel void xo_cl_log_softmax_fwd(__global const float *x, int xo, __global float *y, int yo,
				    int rows, int cols)
{
	int r = get_global_id(0);
	float m, s = 0.0f, l;

	if (r >= rows)
		return;
	x += xo + r * cols;
	y += yo + r * cols;
	m = x[0];
	for (int j = 1; j < cols; j++)
		m = x[j] > m ? x[j] : m;
	for (int j = 0; j < cols; j++)
		s += exp(x[j] - m);
	l = log(s);
	for (int j = 0; j < cols; j++)
		y[j] = (x[j] - m) - l;
}

__kernel void xo_cl_log_softmax_bwd(__global const float *y, int yo, __global const float *dy,
				    int dyo, __global float *dx, int dxo, int rows, int cols)
{
	int r = get_global_id(0);
	float s = 0.0f;

	if (r >= rows)
		return;
	y += yo + r * cols;
	dy += dyo + r * cols;
	dx += dxo + r * cols;
	for (int j = 0; j < cols; j++)
		s += dy[j];
	for (int j = 0; j < cols; j++)
		dx[j] = dy[j] - exp(y[j]) * s;
}

/* rescaling fwd: y = x * s + o (ops.def; a contracted mad rounds once, inside
 * the bound of the two roundings) */
__kernel void xo_cl_rescaling_fwd(__global const float *x, int xo, __global float *y, int yo,
				  int n, float s, float o)
{
	int i = get_global_id(0);

	if (i < n)
		y[yo + i] = x[xo + i] * s + o;
}

/* rescaling bwd: dx = dy * s */
__kernel void xo_cl_rescaling_bwd(__global const float *dy, int dyo, __global float *dx, int dxo,
				  int n, float s)
{
	int i = get_global_id(0);

	if (i < n)
		dx[dxo + i] = dy[dyo + i] * s;
}

/* leaky_relu fwd: y = x where x >= 0, else s * x (one rounding; NaN fails the
 * test) */
__kernel void xo_cl_leaky_relu_fwd(__global const float *x, int xo, __global float *y, int yo,
				   int n, float s)
{
	int i = get_global_id(0);

	if (i < n) {
		float v = x[xo + i];

		y[yo + i] = v >= 0.0f ? v : s * v;
	}
}

/* leaky_relu bwd: dx = dy where x >= 0 (the kink takes dy), else s * dy */
__kernel void xo_cl_leaky_relu_bwd(__global const float *x, int xo, __global const float *dy,
				   int dyo, __global float *dx, int dxo, int n, float s)
{
	int i = get_global_id(0);

	if (i < n) {
		float g = dy[dyo + i];

		dx[dxo + i] = x[xo + i] >= 0.0f ? g : s * g;
	}
}
