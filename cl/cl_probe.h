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

#endif
