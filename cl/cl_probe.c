/*
 * cl_probe.c - the cl backend's probe (struct xo_probe in xo.h, `xo probe`),
 * like clpeak in a budget of seconds: what one step's cost on this device is
 * made of. Latencies (launch, enqueue, sync, small transfers) are host clock
 * times, the median of many tries; rates (large transfers, FMA peak, stream
 * bandwidth) are the best of a few tries, as a peak is (load elsewhere on the
 * machine only lowers a try). The FMA and stream kernels' times are their
 * profiling events' (device time); their outputs are checked against the
 * host's computation, so a kernel that does nothing cannot report a peak.
 *
 * The probe runs on the backend's own queue after draining it, and books
 * nothing into the backend's stats.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_probe.h"

/* The FMA chains' multiplier and addend (probe.cl says why these). */
#define PROBE_M (1.0f - 0x1p-16f)
#define PROBE_C 0x1p-16f

/* Tries per figure: at least MIN, at most MAX, more while its share of the
 * budget lasts. Rates take fewer, larger tries. */
#define PROBE_MIN_TRIES 5
#define PROBE_MAX_TRIES 512
#define PROBE_MIN_RATE_TRIES 2
#define PROBE_MAX_RATE_TRIES 16
/* Back-to-back enqueues per try of the enqueue figure, idle clFinish calls
 * per try of the sync figure. */
#define PROBE_ENQUEUE_ROUND 32
#define PROBE_SYNC_ROUND 16
/* Work-items of the FMA kernel per compute unit: two waves of 2048 resident
 * work-items per unit on a big GPU, plenty of work-groups everywhere. */
#define PROBE_FMA_ITEMS_PER_UNIT 4096
/* FMA kernel outputs checked against the host per run. */
#define PROBE_FMA_CHECKS 16
/* Large transfers: 64 MiB, at most a quarter of the largest allocation. */
#define PROBE_XFER_BYTES XO_CL_PROBE_XFER_BYTES
/* Stream buffers: 4x the device's global memory cache, 128..256 MiB each (at
 * least 128 MiB: a GPU may report its L1 here, and its L2 can be 50 MB). */
#define PROBE_STREAM_MIN ((size_t)128 << 20)
#define PROBE_STREAM_MAX ((size_t)256 << 20)
/* Floats of the stream output checked at each end. */
#define PROBE_STREAM_CHECK 1024

/* Another try is wanted: fewer than min so far, or time left and room. */
static bool more(int n, int min, int max, double deadline)
{
	return n < max && (n < min || xo_now_s() < deadline);
}

/* Device seconds of a finished command, from its profiling event. */
static enum xo_status event_seconds(cl_event ev, const char *what, double *out)
{
	cl_ulong t0 = 0, t1 = 0;
	cl_int err, state = CL_QUEUED;

	err = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(state), &state, NULL);
	if (err != CL_SUCCESS)
		return xo_cl_fail("clGetEventInfo", err);
	if (state != CL_COMPLETE)
		return xo_error(XO_EOPENCL, "cl probe: %s did not complete (event status %d)", what,
				(int)state);
	err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, NULL);
	if (err == CL_SUCCESS)
		err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, NULL);
	if (err != CL_SUCCESS)
		return xo_cl_fail("clGetEventProfilingInfo", err);
	if (t1 <= t0)
		return xo_error(XO_EOPENCL, "cl probe: %s has no device time (start %llu, end %llu)",
				what, (unsigned long long)t0, (unsigned long long)t1);
	*out = 1e-9 * (double)(t1 - t0);
	return XO_OK;
}

/* Enqueues kernel kid (arguments already set in l) over global work-items
 * in work-groups of local (0: the driver's choice), waits for it, and gets
 * its device time when dev_s is not NULL. */
static enum xo_status run_kernel(struct xo_cl_launch *l, size_t global, size_t local,
				 double *dev_s)
{
	struct xo_cl_ctx *c = l->c;
	const char *name = xo_cl_kernel_name(l->kid);
	char what[96];
	cl_event ev = NULL;
	enum xo_status st = XO_OK;
	cl_int err;

	if (l->err != CL_SUCCESS) {
		snprintf(what, sizeof(what), "clSetKernelArg(%s, arg %u)", name, l->bad_arg);
		return xo_cl_fail(what, l->err);
	}
	err = clEnqueueNDRangeKernel(c->queue, c->kernel[l->kid], 1, NULL, &global,
				     local ? &local : NULL, 0, NULL, dev_s ? &ev : NULL);
	if (err != CL_SUCCESS) {
		snprintf(what, sizeof(what), "clEnqueueNDRangeKernel(%s)", name);
		return xo_cl_fail(what, err);
	}
	err = clFinish(c->queue);
	if (err != CL_SUCCESS)
		st = xo_cl_fail("clFinish", err);
	else if (dev_s)
		st = event_seconds(ev, name, dev_s);
	if (ev)
		clReleaseEvent(ev);
	return st;
}

/* ---- the kernels, also run by the suite ------------------------------------ */

enum xo_status xo_cl_probe_fma_run(struct xo_cl_ctx *c, cl_mem out, size_t global, int iters,
				   double *dev_s)
{
	struct xo_cl_launch l = xo_cl_launch_begin(c, XO_CL_K_probe_fma);

	XO_ASSERT(global >= 1 && global <= (1u << 24) && iters >= 0 &&
		  iters <= XO_CL_PROBE_MAX_ITERS);
	xo_cl_arg_mem(&l, out);
	xo_cl_arg_int(&l, iters);
	xo_cl_arg_float(&l, PROBE_M);
	xo_cl_arg_float(&l, PROBE_C);
	return run_kernel(&l, global, 0, dev_s);
}

float xo_cl_probe_fma_expect(size_t g, int iters)
{
	float base = 1.0f + (float)g * 0x1p-20f, a[XO_CL_PROBE_CHAINS];

	for (int k = 0; k < XO_CL_PROBE_CHAINS; k++)
		a[k] = base + 0.125f * (float)k;
	for (int i = 0; i < iters; i++)
		for (int k = 0; k < XO_CL_PROBE_CHAINS; k++)
			a[k] = fmaf(a[k], PROBE_M, PROBE_C);
	return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

enum xo_status xo_cl_probe_fill_run(struct xo_cl_ctx *c, cl_mem src, size_t n4)
{
	struct xo_cl_launch l = xo_cl_launch_begin(c, XO_CL_K_probe_fill);

	XO_ASSERT(n4 >= 1 && n4 <= (size_t)1 << 30);
	xo_cl_arg_mem(&l, src);
	return run_kernel(&l, n4, 0, NULL);
}

enum xo_status xo_cl_probe_copy_run(struct xo_cl_ctx *c, cl_mem src, cl_mem dst, size_t n4,
				    double *dev_s)
{
	struct xo_cl_launch l = xo_cl_launch_begin(c, XO_CL_K_probe_copy);

	XO_ASSERT(n4 >= 1 && n4 <= (size_t)1 << 30);
	xo_cl_arg_mem(&l, src);
	xo_cl_arg_mem(&l, dst);
	return run_kernel(&l, n4, 0, dev_s);
}

float xo_cl_probe_copy_expect(size_t e)
{
	return (float)(e & 0xffff) + 1.0f;
}

enum xo_status xo_cl_probe_steps_run(struct xo_cl_ctx *c, cl_mem w, cl_mem state, size_t local,
				     int steps, int k, double *dev_s)
{
	struct xo_cl_launch l = xo_cl_launch_begin(c, XO_CL_K_probe_steps);

	XO_ASSERT(local >= 1 && local <= 1024 && !(local & (local - 1)) && steps >= 0 && k >= 0);
	xo_cl_arg_mem(&l, w);
	xo_cl_arg_mem(&l, state);
	xo_cl_arg_int(&l, steps);
	xo_cl_arg_int(&l, k);
	/* one work-group: the local size is the global size */
	return run_kernel(&l, local, local, dev_s);
}

void xo_cl_probe_steps_expect(const float *w, float *state, int local, int steps, int k)
{
	for (int s = 0; s < steps; s++) {
		const float *src = state + (s & 1) * local;
		float *dst = state + ((s + 1) & 1) * local;

		for (int l = 0; l < local; l++) {
			float acc = 1.0f;

			for (int i = 0; i < k; i++)
				acc = fmaf(w[i], src[(l + i) & (local - 1)], acc);
			dst[l] = acc;
		}
	}
}

/* ---- the figures ------------------------------------------------------------- */

/* launch_s, enqueue_s and sync_s: host clock, median of tries. */
static enum xo_status probe_latency(struct xo_cl_ctx *c, double share, struct xo_probe *p,
				    double *v)
{
	cl_kernel k = c->kernel[XO_CL_K_probe_empty];
	size_t one = 1;
	double deadline;
	cl_int err;
	int n;

	/* one untimed launch: first-use costs (code upload, JIT) are not latency */
	err = clEnqueueNDRangeKernel(c->queue, k, 1, NULL, &one, NULL, 0, NULL, NULL);
	if (err != CL_SUCCESS)
		return xo_cl_fail("clEnqueueNDRangeKernel(xo_cl_probe_empty)", err);
	if ((err = clFinish(c->queue)) != CL_SUCCESS)
		return xo_cl_fail("clFinish", err);

	deadline = xo_now_s() + 0.4 * share;
	for (n = 0; more(n, PROBE_MIN_TRIES, PROBE_MAX_TRIES, deadline); n++) {
		double t0 = xo_now_s();

		err = clEnqueueNDRangeKernel(c->queue, k, 1, NULL, &one, NULL, 0, NULL, NULL);
		if (err != CL_SUCCESS)
			return xo_cl_fail("clEnqueueNDRangeKernel(xo_cl_probe_empty)", err);
		if ((err = clFinish(c->queue)) != CL_SUCCESS)
			return xo_cl_fail("clFinish", err);
		v[n] = xo_now_s() - t0;
	}
	p->launch_s = xo_median(v, n);

	deadline = xo_now_s() + 0.4 * share;
	for (n = 0; more(n, PROBE_MIN_TRIES, PROBE_MAX_TRIES, deadline); n++) {
		double t0 = xo_now_s();

		for (int i = 0; i < PROBE_ENQUEUE_ROUND; i++) {
			err = clEnqueueNDRangeKernel(c->queue, k, 1, NULL, &one, NULL, 0, NULL, NULL);
			if (err != CL_SUCCESS)
				return xo_cl_fail("clEnqueueNDRangeKernel(xo_cl_probe_empty)", err);
		}
		v[n] = (xo_now_s() - t0) / PROBE_ENQUEUE_ROUND;
		if ((err = clFinish(c->queue)) != CL_SUCCESS)
			return xo_cl_fail("clFinish", err);
	}
	p->enqueue_s = xo_median(v, n);

	/* an idle clFinish can take tens of nanoseconds, near the clock's own
	 * cost: a try times several */
	deadline = xo_now_s() + 0.2 * share;
	for (n = 0; more(n, PROBE_MIN_TRIES, PROBE_MAX_TRIES, deadline); n++) {
		double t0 = xo_now_s();

		for (int i = 0; i < PROBE_SYNC_ROUND; i++)
			if ((err = clFinish(c->queue)) != CL_SUCCESS)
				return xo_cl_fail("clFinish", err);
		v[n] = (xo_now_s() - t0) / PROBE_SYNC_ROUND;
	}
	p->sync_s = xo_median(v, n);
	return XO_OK;
}

/* h2d/d2h latency (4-byte blocking transfers, median) and bandwidth (large
 * blocking transfers, best), from and to ordinary malloc'd memory as the
 * backend's own transfers are; the large round trip is checked. */
static enum xo_status probe_transfers(struct xo_cl_ctx *c, double share, struct xo_probe *p,
				      double *v)
{
	size_t bytes = PROBE_XFER_BYTES;
	unsigned char *hsrc = NULL, *hdst = NULL;
	cl_mem small = NULL, big = NULL;
	enum xo_status st = XO_OK;
	cl_int err, word = 7;
	double deadline, best;
	int n;

	if (bytes > c->max_alloc / 4)
		bytes = (size_t)(c->max_alloc / 4) & ~(size_t)63;
	if (bytes < 4096)
		return xo_error(XO_ERESOURCE, "cl probe: largest allocation %llu bytes is too small",
				(unsigned long long)c->max_alloc);
	small = clCreateBuffer(c->context, CL_MEM_READ_WRITE, sizeof(word), NULL, &err);
	if (err != CL_SUCCESS)
		return xo_cl_fail("clCreateBuffer(probe, 4 bytes)", err);
	big = clCreateBuffer(c->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
	if (err != CL_SUCCESS) {
		st = xo_cl_fail("clCreateBuffer(probe, large transfer)", err);
		goto out_release;
	}
	hsrc = malloc(bytes);
	hdst = malloc(bytes);
	if (!hsrc || !hdst) {
		st = xo_error(XO_ENOMEM, "cl probe: out of memory for %zu-byte transfers", bytes);
		goto out_release;
	}
	/* touched before timing: page faults are not transfer time */
	for (size_t i = 0; i + 4 <= bytes; i += 4) {
		uint32_t w = (uint32_t)(i * 2654435761u);

		memcpy(hsrc + i, &w, 4);
	}
	memset(hdst, 0, bytes);

	deadline = xo_now_s() + 0.15 * share;
	for (n = 0; more(n, PROBE_MIN_TRIES, PROBE_MAX_TRIES, deadline); n++) {
		double t0 = xo_now_s();

		err = clEnqueueWriteBuffer(c->queue, small, CL_TRUE, 0, sizeof(word), &word, 0, NULL,
					   NULL);
		if (err != CL_SUCCESS) {
			st = xo_cl_fail("clEnqueueWriteBuffer(probe, 4 bytes)", err);
			goto out_release;
		}
		v[n] = xo_now_s() - t0;
	}
	p->h2d_lat_s = xo_median(v, n);
	deadline = xo_now_s() + 0.15 * share;
	for (n = 0; more(n, PROBE_MIN_TRIES, PROBE_MAX_TRIES, deadline); n++) {
		double t0 = xo_now_s();

		err = clEnqueueReadBuffer(c->queue, small, CL_TRUE, 0, sizeof(word), &word, 0, NULL,
					  NULL);
		if (err != CL_SUCCESS) {
			st = xo_cl_fail("clEnqueueReadBuffer(probe, 4 bytes)", err);
			goto out_release;
		}
		v[n] = xo_now_s() - t0;
	}
	p->d2h_lat_s = xo_median(v, n);
	if (word != 7) {
		st = xo_error(XO_EOPENCL, "cl probe: a 4-byte round trip read %d, wrote 7", (int)word);
		goto out_release;
	}

	deadline = xo_now_s() + 0.35 * share;
	best = 0.0;
	for (n = 0; more(n, PROBE_MIN_RATE_TRIES, PROBE_MAX_RATE_TRIES, deadline); n++) {
		double t0 = xo_now_s(), dt;

		err = clEnqueueWriteBuffer(c->queue, big, CL_TRUE, 0, bytes, hsrc, 0, NULL, NULL);
		if (err != CL_SUCCESS) {
			st = xo_cl_fail("clEnqueueWriteBuffer(probe, large transfer)", err);
			goto out_release;
		}
		dt = xo_now_s() - t0;
		if (dt > 0 && (double)bytes / dt > best)
			best = (double)bytes / dt;
	}
	p->h2d_bw = best;
	deadline = xo_now_s() + 0.35 * share;
	best = 0.0;
	for (n = 0; more(n, PROBE_MIN_RATE_TRIES, PROBE_MAX_RATE_TRIES, deadline); n++) {
		double t0 = xo_now_s(), dt;

		err = clEnqueueReadBuffer(c->queue, big, CL_TRUE, 0, bytes, hdst, 0, NULL, NULL);
		if (err != CL_SUCCESS) {
			st = xo_cl_fail("clEnqueueReadBuffer(probe, large transfer)", err);
			goto out_release;
		}
		dt = xo_now_s() - t0;
		if (dt > 0 && (double)bytes / dt > best)
			best = (double)bytes / dt;
	}
	p->d2h_bw = best;
	if (memcmp(hsrc, hdst, bytes))
		st = xo_error(XO_EOPENCL, "cl probe: a %zu-byte round trip came back different",
			      bytes);

out_release:
	free(hsrc);
	free(hdst);
	if (big)
		clReleaseMemObject(big);
	if (small)
		clReleaseMemObject(small);
	return st;
}

/* Compares PROBE_FMA_CHECKS outputs, spread over out, with the host's. */
static enum xo_status fma_check(struct xo_cl_ctx *c, cl_mem out, size_t global, int iters)
{
	float *got = malloc(global * sizeof(*got));
	enum xo_status st = XO_OK;
	cl_int err;

	if (!got)
		return xo_error(XO_ENOMEM, "cl probe: out of memory");
	err = clEnqueueReadBuffer(c->queue, out, CL_TRUE, 0, global * sizeof(*got), got, 0, NULL,
				  NULL);
	if (err != CL_SUCCESS)
		st = xo_cl_fail("clEnqueueReadBuffer(probe, fma result)", err);
	for (int i = 0; !st && i < PROBE_FMA_CHECKS; i++) {
		size_t g = (size_t)i * (global - 1) / (PROBE_FMA_CHECKS - 1);
		float want = xo_cl_probe_fma_expect(g, iters);

		if (memcmp(&got[g], &want, sizeof(want)))
			st = xo_error(XO_EOPENCL,
				      "cl probe: the FMA kernel computed %.9g for work-item %zu, the "
				      "host %.9g (%d rounds): its peak would be wrong",
				      (double)got[g], g, (double)want, iters);
	}
	free(got);
	return st;
}

/* flops: the FMA kernel sized to a share of the budget, best of tries. */
static enum xo_status probe_flops(struct xo_cl_ctx *c, double share, cl_uint units,
				  struct xo_probe *p)
{
	size_t global = (size_t)(units ? units : 1) * PROBE_FMA_ITEMS_PER_UNIT;
	double target, dt = 0.0, best = 0.0, deadline;
	enum xo_status st;
	cl_mem out;
	cl_int err;
	int iters = 64;

	if (global > (1u << 22))
		global = 1u << 22;
	out = clCreateBuffer(c->context, CL_MEM_WRITE_ONLY, global * sizeof(float), NULL, &err);
	if (err != CL_SUCCESS)
		return xo_cl_fail("clCreateBuffer(probe, fma result)", err);
	/* one kernel about an eighth of the share (1..50 ms), then tries */
	target = fmin(fmax(share / 8, 1e-3), 0.05);
	for (;;) {
		if ((st = xo_cl_probe_fma_run(c, out, global, iters, &dt)))
			goto out_release;
		if (dt >= target || iters >= XO_CL_PROBE_MAX_ITERS)
			break;
		while (iters < XO_CL_PROBE_MAX_ITERS && dt < target) {
			iters *= 2;
			dt *= 2;
		}
	}
	deadline = xo_now_s() + share / 2;
	for (int n = 0; more(n, PROBE_MIN_RATE_TRIES, PROBE_MAX_RATE_TRIES, deadline); n++) {
		if ((st = xo_cl_probe_fma_run(c, out, global, iters, &dt)))
			goto out_release;
		best = fmax(best, 2.0 * XO_CL_PROBE_CHAINS * (double)iters * (double)global / dt);
	}
	if ((st = fma_check(c, out, global, iters)))
		goto out_release;
	p->flops = best;

out_release:
	clReleaseMemObject(out);
	return st;
}

/* Compares n floats of the copy's output starting at float e0 with the host's. */
static enum xo_status copy_check(struct xo_cl_ctx *c, cl_mem dst, size_t e0, float *buf, size_t n)
{
	cl_int err = clEnqueueReadBuffer(c->queue, dst, CL_TRUE, e0 * sizeof(float),
					 n * sizeof(float), buf, 0, NULL, NULL);

	if (err != CL_SUCCESS)
		return xo_cl_fail("clEnqueueReadBuffer(probe, stream result)", err);
	for (size_t i = 0; i < n; i++)
		if (buf[i] != xo_cl_probe_copy_expect(e0 + i))
			return xo_error(XO_EOPENCL,
					"cl probe: the stream kernel wrote %g at float %zu, expected "
					"%g: its bandwidth would be wrong",
					(double)buf[i], e0 + i, (double)xo_cl_probe_copy_expect(e0 + i));
	return XO_OK;
}

/* mem_bw: copy between two buffers well beyond the device's cache, best of
 * tries; bytes read + written over the event's device time. */
static enum xo_status probe_stream(struct xo_cl_ctx *c, double share, struct xo_probe *p)
{
	cl_ulong cache = 0;
	size_t bytes, n4;
	cl_mem src = NULL, dst = NULL;
	float check[PROBE_STREAM_CHECK];
	double best = 0.0, dt, deadline;
	enum xo_status st;
	cl_int err;

	err = clGetDeviceInfo(c->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof(cache), &cache,
			      NULL);
	if (err != CL_SUCCESS)
		return xo_cl_fail("clGetDeviceInfo(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE)", err);
	bytes = cache > PROBE_STREAM_MAX / 4 ? PROBE_STREAM_MAX : (size_t)cache * 4;
	if (bytes < PROBE_STREAM_MIN)
		bytes = PROBE_STREAM_MIN;
	if (bytes > c->max_alloc)
		bytes = (size_t)c->max_alloc;
	if (bytes > c->global_mem / 8)
		bytes = (size_t)(c->global_mem / 8);
	n4 = bytes / 16;
	if (n4 < PROBE_STREAM_CHECK)
		return xo_error(XO_ERESOURCE, "cl probe: device memory too small for the stream");
	src = clCreateBuffer(c->context, CL_MEM_READ_WRITE, n4 * 16, NULL, &err);
	if (err != CL_SUCCESS)
		return xo_cl_fail("clCreateBuffer(probe, stream source)", err);
	dst = clCreateBuffer(c->context, CL_MEM_READ_WRITE, n4 * 16, NULL, &err);
	if (err != CL_SUCCESS) {
		st = xo_cl_fail("clCreateBuffer(probe, stream destination)", err);
		goto out_release;
	}
	if ((st = xo_cl_probe_fill_run(c, src, n4)))
		goto out_release;
	/* one untimed pass: first touch of dst's pages */
	if ((st = xo_cl_probe_copy_run(c, src, dst, n4, &dt)))
		goto out_release;
	deadline = xo_now_s() + share;
	for (int n = 0; more(n, PROBE_MIN_RATE_TRIES + 1, PROBE_MAX_RATE_TRIES, deadline); n++) {
		if ((st = xo_cl_probe_copy_run(c, src, dst, n4, &dt)))
			goto out_release;
		best = fmax(best, 32.0 * (double)n4 / dt);
	}
	if ((st = copy_check(c, dst, 0, check, PROBE_STREAM_CHECK)) ||
	    (st = copy_check(c, dst, 4 * n4 - PROBE_STREAM_CHECK, check, PROBE_STREAM_CHECK)))
		goto out_release;
	p->mem_bw = best;

out_release:
	if (dst)
		clReleaseMemObject(dst);
	if (src)
		clReleaseMemObject(src);
	return st;
}

/* The median device time of PROBE_MIN_TRIES runs of the step kernel (after
 * an untimed one), state reset to init before each; the last run's state is
 * checked against the host's. */
static enum xo_status steps_time(struct xo_cl_ctx *c, cl_mem w, cl_mem state, const float *hw,
				 const float *init, size_t local, int steps, int k, double *med)
{
	float got[2 * XO_CL_PROBE_STEP_L], want[2 * XO_CL_PROBE_STEP_L];
	size_t bytes = 2 * local * sizeof(float);
	double v[PROBE_MIN_TRIES];
	enum xo_status st = XO_OK;
	cl_int err;

	for (int n = -1; !st && n < PROBE_MIN_TRIES; n++) {
		err = clEnqueueWriteBuffer(c->queue, state, CL_TRUE, 0, bytes, init, 0, NULL, NULL);
		if (err != CL_SUCCESS)
			return xo_cl_fail("clEnqueueWriteBuffer(probe, step state)", err);
		st = xo_cl_probe_steps_run(c, w, state, local, steps, k, n >= 0 ? &v[n] : NULL);
	}
	if (st)
		return st;
	err = clEnqueueReadBuffer(c->queue, state, CL_TRUE, 0, bytes, got, 0, NULL, NULL);
	if (err != CL_SUCCESS)
		return xo_cl_fail("clEnqueueReadBuffer(probe, step state)", err);
	memcpy(want, init, bytes);
	xo_cl_probe_steps_expect(hw, want, (int)local, steps, k);
	for (size_t i = 0; i < local; i++) {
		size_t e = (size_t)(steps & 1) * local + i;

		if (memcmp(&got[e], &want[e], sizeof(float)))
			return xo_error(XO_EOPENCL,
					"cl probe: the step kernel computed %.9g for work-item %zu, the "
					"host %.9g (%d steps of %d terms): its latency would be wrong",
					(double)got[e], i, (double)want[e], steps, k);
	}
	*med = xo_median(v, PROBE_MIN_TRIES);
	return XO_OK;
}

/* step_s and lane_mac_s (cl_probe.h says how; probe.cl what the kernel
 * does): device times, so the host's launch latency is not in them, and
 * differences of two step or term counts, so the kernel's start is not. */
static enum xo_status probe_steps(struct xo_cl_ctx *c, struct xo_probe *p)
{
	float hw[XO_CL_PROBE_LANE_K], init[2 * XO_CL_PROBE_STEP_L];
	size_t local = XO_CL_PROBE_STEP_L;
	double a, b;
	cl_mem w = NULL, state = NULL;
	enum xo_status st;
	cl_int err;

	while (local > 1 && local > c->kernel_wg[XO_CL_K_probe_steps])
		local /= 2;
	/* 2^-8 each: a 16-term step keeps the state near 16/15, a 256-term
	 * chain adds about 1 per step; nothing overflows or goes subnormal */
	for (int i = 0; i < XO_CL_PROBE_LANE_K; i++)
		hw[i] = 0x1p-8f;
	for (int i = 0; i < 2 * XO_CL_PROBE_STEP_L; i++)
		init[i] = 1.0f + (float)i * 0x1p-7f;
	w = clCreateBuffer(c->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(hw), hw,
			   &err);
	if (err != CL_SUCCESS)
		return xo_cl_fail("clCreateBuffer(probe, step weights)", err);
	state = clCreateBuffer(c->context, CL_MEM_READ_WRITE, sizeof(init), NULL, &err);
	if (err != CL_SUCCESS) {
		st = xo_cl_fail("clCreateBuffer(probe, step state)", err);
		goto out_release;
	}
	if ((st = steps_time(c, w, state, hw, init, local, XO_CL_PROBE_STEPS_LONG,
			     XO_CL_PROBE_STEP_K, &b)) ||
	    (st = steps_time(c, w, state, hw, init, local, XO_CL_PROBE_STEPS_SHORT,
			     XO_CL_PROBE_STEP_K, &a)))
		goto out_release;
	/* a difference lost in the noise (a loaded host's device): the long
	 * run over its steps, the kernel's start included, is the bound */
	p->step_s = b > a ? (b - a) / (XO_CL_PROBE_STEPS_LONG - XO_CL_PROBE_STEPS_SHORT)
			  : b / XO_CL_PROBE_STEPS_LONG;
	if ((st = steps_time(c, w, state, hw, init, 1, XO_CL_PROBE_STEPS_LONG, XO_CL_PROBE_LANE_K,
			     &b)) ||
	    (st = steps_time(c, w, state, hw, init, 1, XO_CL_PROBE_STEPS_LONG, XO_CL_PROBE_STEP_K,
			     &a)))
		goto out_release;
	p->lane_mac_s = b > a ? (b - a) / ((double)XO_CL_PROBE_STEPS_LONG *
					   (XO_CL_PROBE_LANE_K - XO_CL_PROBE_STEP_K))
			      : b / ((double)XO_CL_PROBE_STEPS_LONG * XO_CL_PROBE_LANE_K);

out_release:
	if (state)
		clReleaseMemObject(state);
	clReleaseMemObject(w);
	return st;
}

enum xo_status xo_cl_probe(struct xo_backend *be, double budget_s, struct xo_probe *out)
{
	struct xo_cl_ctx *c = be->ctx;
	struct xo_probe p = {
	    .launch_s = NAN, .enqueue_s = NAN, .sync_s = NAN, .h2d_lat_s = NAN,
	    .h2d_bw = NAN, .d2h_lat_s = NAN, .d2h_bw = NAN, .flops = NAN,
	    .mem_bw = NAN, .handoff_s = NAN, .units = 0, .wall_s = NAN,
	    .step_s = NAN, .lane_mac_s = NAN,
	};
	double t0 = xo_now_s(), *v;
	enum xo_status st;
	cl_uint units = 0;
	cl_int err;

	/* the backend's own work first: it is not ours to time */
	if ((err = clFinish(c->queue)) != CL_SUCCESS)
		return xo_cl_fail("clFinish", err);
	err = clGetDeviceInfo(c->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, NULL);
	if (err != CL_SUCCESS)
		return xo_cl_fail("clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)", err);
	p.units = (int)units;
	v = malloc(PROBE_MAX_TRIES * sizeof(*v));
	if (!v)
		return xo_error(XO_ENOMEM, "cl probe: out of memory");
	/* shares of the budget: latencies 20%, transfers 25%, FMA 25%, stream 25%
	 * (the rest covers allocations and checks) */
	if (!(st = probe_latency(c, 0.20 * budget_s, &p, v)) &&
	    !(st = probe_transfers(c, 0.25 * budget_s, &p, v)) &&
	    !(st = probe_flops(c, 0.25 * budget_s, units, &p)) &&
	    !(st = probe_stream(c, 0.25 * budget_s, &p)))
		st = probe_steps(c, &p); /* a fixed count of short kernels: ~10 ms */
	free(v);
	if (st)
		return st;
	p.wall_s = xo_now_s() - t0;
	*out = p;
	return XO_OK;
}
