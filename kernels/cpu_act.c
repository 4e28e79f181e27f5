/*
 * cpu_act.c - the cpu backend's tanh, elu, gelu and softplus kernels
 * (forward and backward), one family per file. Plain C over the float
 * functions of the C library (glibc's tanhf, expm1f, erfcf, expf, log1pf;
 * their ulp bounds are in glibc's libm-test-ulps and the harness's bounds
 * are derived from OpenCL's looser table, which covers both backends).
 * Built without -ffast-math or -ffp-contract=fast so each formula below is
 * the sequence of roundings the harness's bound assumes.
 *
 * Contract of both entry points: x/s, dy and y/dx are contiguous arrays of
 * n >= 1 floats; out may equal an input (each element is read before it is
 * written); nothing outside [0, n) is read or written. The forms:
 *   tanh      fwd tanhf(x)                         bwd dy (1 - y)(1 + y)
 *   elu       fwd x > 0 ? x : expm1f(x)            bwd y > 0 ? dy : dy (y + 1)
 *   gelu      fwd x/2 erfcf(-x / sqrt 2)           bwd dy (Phi(x) + x phi(x))
 *   softplus  fwd max(x, 0) + log1pf(expf(-|x|))  bwd dy / (1 + expf(-x))
 * (1 - y)(1 + y) rather than 1 - y*y: exact factors near |y| = 1, where
 * 1 - y*y would cancel the rounding error of y*y into a large relative one.
 * gelu uses erfc, not 1 + erf: equal in exact arithmetic, and without the
 * cancellation of 1 + erf(u) for negative u.
 */
#include <math.h>

#include "cpu.h"

#define SQRT1_2F   0.70710678118654752440f /* 1 / sqrt 2 */
#define RSQRT_2PIF 0.39894228040143267794f /* 1 / sqrt(2 pi) */

static float gelu_fwd1(float x)
{
	return 0.5f * x * erfcf(-x * SQRT1_2F);
}

static float gelu_bwd1(float x, float g)
{
	float a = 0.5f * erfcf(-x * SQRT1_2F);
	float b = x * RSQRT_2PIF * expf(-0.5f * (x * x));

	return g * (a + b);
}

static float softplus_fwd1(float x)
{
	if (isnan(x))
		return x;
	return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x)));
}

void xo_cpu_act_fwd(enum xo_activation act, const float *x, float *y, int64_t n)
{
	XO_ASSERT(n >= 1 && x && y);
	switch (act) {
	case XO_ACTIVATION_TANH:
		for (int64_t i = 0; i < n; i++)
			y[i] = tanhf(x[i]);
		return;
	case XO_ACTIVATION_ELU:
		for (int64_t i = 0; i < n; i++)
			y[i] = x[i] > 0.0f ? x[i] : expm1f(x[i]);
		return;
	case XO_ACTIVATION_GELU:
		for (int64_t i = 0; i < n; i++)
			y[i] = gelu_fwd1(x[i]);
		return;
	case XO_ACTIVATION_SOFTPLUS:
		for (int64_t i = 0; i < n; i++)
			y[i] = softplus_fwd1(x[i]);
		return;
	default:
		break;
	}
	XO_ASSERT(!"xo_cpu_act_fwd: not one of tanh, elu, gelu, softplus");
}

void xo_cpu_act_bwd(enum xo_activation act, const float *s, const float *dy, float *dx,
		    int64_t n)
{
	XO_ASSERT(n >= 1 && s && dy && dx);
	switch (act) {
	case XO_ACTIVATION_TANH: /* s = y */
		for (int64_t i = 0; i < n; i++)
			dx[i] = dy[i] * ((1.0f - s[i]) * (1.0f + s[i]));
		return;
	case XO_ACTIVATION_ELU: /* s = y */
		for (int64_t i = 0; i < n; i++)
			dx[i] = s[i] > 0.0f ? dy[i] : dy[i] * (s[i] + 1.0f);
		return;
	case XO_ACTIVATION_GELU: /* s = x */
		for (int64_t i = 0; i < n; i++)
			dx[i] = gelu_bwd1(s[i], dy[i]);
		return;
	case XO_ACTIVATION_SOFTPLUS: /* s = x */
		for (int64_t i = 0; i < n; i++)
			dx[i] = dy[i] / (1.0f + expf(-s[i]));
		return;
	default:
		break;
	}
	XO_ASSERT(!"xo_cpu_act_bwd: not one of tanh, elu, gelu, softplus");
}
