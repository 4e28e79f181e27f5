/*
 * cl_probe.h - the measurements behind the cl backend's probe
 * (struct xo_probe, `xo probe`), exposed so suites/test_cl_probe.c can check
 * the kernels' results against the host's computation of the same thing.
 */
#ifndef XO_CL_PROBE_H
#define XO_CL_PROBE_H

#include "cl_internal.h"

/* Independent FMA chains per work-item of xo_cl_probe_fma (cl/kernels/probe.cl). */
#define XO_CL_PROBE_CHAINS 8
/* Bytes of the probe's large transfers (less where the device allows less). */
#define XO_CL_PROBE_XFER_BYTES ((size_t)64 << 20)
/* The most rounds the host asks for: the chains still differ from 1 after it
 * (probe.cl explains why that matters). */
#define XO_CL_PROBE_MAX_ITERS 65536

/* The probe (the iface's .probe entry). */
enum xo_status xo_cl_probe(struct xo_backend *be, double budget_s, struct xo_probe *out);

/* Runs xo_cl_probe_fma over global work-items, iters rounds each, writing
 * out (global floats), and waits for it; *dev_s gets its device time from the
 * event's profiling times. 2 * XO_CL_PROBE_CHAINS * iters * global FLOP. */
enum xo_status xo_cl_probe_fma_run(struct xo_cl_ctx *c, cl_mem out, size_t global, int iters,
				   double *dev_s);
/* What work-item g of xo_cl_probe_fma writes after iters rounds, on the host. */
float xo_cl_probe_fma_expect(size_t g, int iters);

/* Writes the stream input (xo_cl_probe_fill) to src, n4 float4s, and waits. */
enum xo_status xo_cl_probe_fill_run(struct xo_cl_ctx *c, cl_mem src, size_t n4);
/* dst = src + 1 over n4 float4s (xo_cl_probe_copy), waits; *dev_s its device
 * time. 32 * n4 bytes read and written. */
enum xo_status xo_cl_probe_copy_run(struct xo_cl_ctx *c, cl_mem src, cl_mem dst, size_t n4,
				    double *dev_s);
/* Float e of the copy's output: (float)(e & 0xffff) + 1. */
float xo_cl_probe_copy_expect(size_t e);

/* The serial-step figures (xo_cl_probe_steps, cl/kernels/probe.cl): step_s
 * from one work-group of XO_CL_PROBE_STEP_L work-items (fewer where the
 * kernel allows fewer) and XO_CL_PROBE_STEP_K terms per step, the difference
 * of XO_CL_PROBE_STEPS_LONG and _SHORT steps over their difference (the
 * launch cancels); lane_mac_s from one work-item alone at
 * XO_CL_PROBE_LANE_K and XO_CL_PROBE_STEP_K terms, _LONG steps each, the
 * difference over the extra multiply-adds. */
#define XO_CL_PROBE_STEP_L 64
#define XO_CL_PROBE_STEP_K 16
#define XO_CL_PROBE_LANE_K 256
#define XO_CL_PROBE_STEPS_SHORT 32
#define XO_CL_PROBE_STEPS_LONG 288
/* Runs xo_cl_probe_steps as one work-group of local work-items over state
 * (2 x local floats, row 0 the input; the result in row steps & 1) with
 * weights w (k floats), waits; *dev_s its device time when not NULL. */
enum xo_status xo_cl_probe_steps_run(struct xo_cl_ctx *c, cl_mem w, cl_mem state, size_t local,
				     int steps, int k, double *dev_s);
/* The same steps on the host, in place over state (2 x local floats). */
void xo_cl_probe_steps_expect(const float *w, float *state, int local, int steps, int k);

#endif
