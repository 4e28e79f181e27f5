/*
 * cpu_conv2d.h - backend "cpu": the per-ISA kernels of the 2-D CNN ops
 * (cpu_conv2d.inc, compiled once per level by cpu_conv2d__<isa>.c as
 * cpu_kernels.inc is), internal to kernels/.
 */
#ifndef XO_CPU_CONV2D_H
#define XO_CPU_CONV2D_H

#include "cpu.h"

/*
 * conv2d forward without an im2col copy ("direct"), for windows that lie
 * inside the input (valid padding) with their kernel-row taps contiguous
 * (width dilation 1, or a kernel one column wide):
 *   x: sample s at x + s * x_stride; output pixel (oy, ox) of a sample reads
 *      the window of kh runs of seg floats, run i at
 *      oy * row_step + ox * col_step + i * seg_step (seg = kw * ch, the
 *      Keras kernel's [kh][kw][ch] order: run i holds taps (i, 0..kw-1, c)).
 *   w: [kh * seg][fp] (columns f..fp-1 zero), bias [fp] or NULL.
 *   y: [samples * oh * ow][f], row p = pixel p of the samples in order;
 *      act(bias + window . w) with act linear or relu (a sigmoid or softmax
 *      is the caller's, on the stored rows).
 * Every output is one FMA chain, acc = bias (or +0), then acc += x * w over
 * the window in k order, as gemm_nn over c2d_im2col's columns: the same
 * bits as that path. Reads nothing outside the windows, w and bias; y must
 * not alias them. samples, oh, ow, kh, seg, f >= 1.
 */
struct xo_cpu_c2d_direct {
	const float *x;
	int64_t x_stride, samples, oh, ow;
	int64_t row_step, col_step, seg_step, kh, seg;
	const float *w, *bias;
	int64_t f, fp;
	int act;
	float *y;
};

/*
 * max_pooling2d forward of windows tiling the input exactly (pool == strides
 * on both axes, no padding, every window inside), channel vectors of the ISA width:
 *   x: sample s at x + s * x_stride, [h][w][ch]; y: [samples][oh][ow][ch].
 * Output (oy, ox, c) is the first maximum (v > best) of its window in
 * row-major order, a NaN first element kept: pool2d_fwd_rows's rule, bit
 * for bit.
 */
struct xo_cpu_c2d_maxpool {
	const float *x;
	int64_t x_stride, samples, w, ch, oh, ow, ph, pw;
	float *y;
};

/*
 * conv2d's weight gradient from the same windows read in place:
 *   d[kk][0:np] += sum over the pixels p of the samples, in order, of
 *   window_p[kk] * z[p][0:np], for the window's taps kk in [0, kh * seg)
 * (the geometry fields of a as for direct; w, bias, f, act, y unused).
 * z: [samples * oh * ow][np], np a multiple of the vector width; d:
 * [kh * seg][np], accumulated into. Per element the chain of gemm_tn over
 * c2d_im2col's columns (acc = +0, the pixels in order, then d += acc): the
 * same bits as that path.
 */
struct xo_cpu_c2d_direct_tn {
	struct xo_cpu_c2d_direct a;
	const float *z;
	int64_t np;
	float *d;
};

struct xo_cpu_c2d_kernels {
	void (*direct)(const struct xo_cpu_c2d_direct *a);
	void (*direct_tn)(const struct xo_cpu_c2d_direct_tn *t);
	void (*maxpool)(const struct xo_cpu_c2d_maxpool *a);
};

extern const struct xo_cpu_c2d_kernels xo_cpu_c2d_kernels__scalar;
extern const struct xo_cpu_c2d_kernels xo_cpu_c2d_kernels__avx2;
extern const struct xo_cpu_c2d_kernels xo_cpu_c2d_kernels__avx512;
/* The table of the context's ISA level (cpu_conv2d.c). */
const struct xo_cpu_c2d_kernels *xo_cpu_c2d_kernels_for(const struct xo_cpu_ctx *c);

#endif
