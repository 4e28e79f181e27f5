/*
 * probe.cl - the kernels of `xo probe` (cl/cl_probe.c): what a device's step
 * cost is made of, like clpeak. Each result is written to memory and checked
 * by the host (cl_probe.c, suites/test_cl_probe.c), so a kernel that is
 * optimized away or does nothing cannot report a peak.
 */

/* Does nothing: the launch and enqueue latency of a kernel (one work-item). */
__kernel void xo_cl_probe_empty(void)
{
}

/*
 * FMA-bound: work-item g runs XO_PROBE_CHAINS (8) independent chains
 * a_k = fma(a_k, m, c) for iters rounds (2 FLOP each), starting from
 * a_k = 1 + g * 2^-20 + k * 2^-3, and writes out[g] = the chains' sum in the
 * order ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)). fma rounds once
 * (OpenCL C 1.2 requires it correctly rounded), so the host's fmaf gives the
 * same bits (xo_cl_probe_fma_expect). With m = 1 - 2^-16 and c = 2^-16 the
 * chains decay towards 1 by (1 - 2^-16) per round: after the at most 2^16
 * rounds the host asks for, they still differ from their start and from 1,
 * so an output that skipped the loop is caught. 8 chains hide the FMA latency
 * (4-5 cycles on 2 pipes) of a CPU device that vectorizes across work-items
 * without spilling its 16 vector registers; a GPU hides it with warps.
 */
__kernel void xo_cl_probe_fma(__global float *out, int iters, float m, float c)
{
	int g = get_global_id(0);
	float base = 1.0f + (float)g * 0x1p-20f;
	float a0 = base, a1 = base + 0.125f, a2 = base + 0.25f, a3 = base + 0.375f;
	float a4 = base + 0.5f, a5 = base + 0.625f, a6 = base + 0.75f, a7 = base + 0.875f;

	for (int i = 0; i < iters; i++) {
		a0 = fma(a0, m, c);
		a1 = fma(a1, m, c);
		a2 = fma(a2, m, c);
		a3 = fma(a3, m, c);
		a4 = fma(a4, m, c);
		a5 = fma(a5, m, c);
		a6 = fma(a6, m, c);
		a7 = fma(a7, m, c);
	}
	out[g] = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
}

/* The stream kernel's input: element e of src (float e of the float4 array)
 * is (float)(e & 0xffff). One work-item per float4. */
__kernel void xo_cl_probe_fill(__global float4 *src)
{
	int i = get_global_id(0);
	int e = 4 * i;

	src[i] = (float4)((float)(e & 0xffff), (float)((e + 1) & 0xffff),
			  (float)((e + 2) & 0xffff), (float)((e + 3) & 0xffff));
}

/* Streaming: dst[i] = src[i] + 1, one float4 per work-item; 32 bytes moved
 * per work-item (16 read, 16 written). */
__kernel void xo_cl_probe_copy(__global const float4 *src, __global float4 *dst)
{
	int i = get_global_id(0);

	dst[i] = src[i] + (float4)(1.0f);
}

/*
 * Serial steps (step_s and lane_mac_s of the probe): the shape of a recurrent
 * kernel, whose step t needs step t - 1's state, with nothing to hide a step's
 * latency. Each work-group (local size L, a power of 2) owns two rows of L
 * floats of state (row 0 the input) and loops over steps: work-item l reads
 * the row the last step wrote from global memory, computes the dependent
 * chain acc = fma(w[i], h[(l + i) & (L - 1)], acc) for i < k from acc = 1 (a
 * k-term dot product), writes acc to the other row, and the group meets at a barrier
 * before the next step reads it. The final state is in row (steps & 1); the
 * host computes it too (cl_probe.c), so a kernel that skipped its loop
 * cannot report a latency.
 */
__kernel void xo_cl_probe_steps(__global const float *w, __global float *state, int steps, int k)
{
	int l = get_local_id(0), L = get_local_size(0);
	__global float *h = state + (size_t)get_group_id(0) * 2 * L;

	for (int s = 0; s < steps; s++) {
		__global const float *src = h + (s & 1) * L;
		float acc = 1.0f;

		for (int i = 0; i < k; i++)
			acc = fma(w[i], src[(l + i) & (L - 1)], acc);
		h[((s + 1) & 1) * L + l] = acc;
		barrier(CLK_GLOBAL_MEM_FENCE);
	}
}
