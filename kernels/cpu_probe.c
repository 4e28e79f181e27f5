/*
 * cpu_probe.c - the cpu backend's probe (struct xo_probe in xo.h, `xo probe`)
 * and the FMA peak of n threads at once that `xo bench` divides by.
 *
 * Figures: flops, the FMA peak of as many threads as the pool has (at most
 * one per online CPU), each timed in its own CPU time (xo_cpu_fma_peak),
 * summed: what the cores can do when they are ours; mem_bw, a STREAM triad a = b + s * c over arrays well
 * beyond the last-level cache, split over the pool (bytes counted as STREAM
 * does: 12 per element, write-allocate reads not counted), best of tries;
 * launch_s, one pool round of an empty task over every thread, and
 * handoff_s, one part handed to one worker while the caller waits for it,
 * both medians of host-clock tries (of 16 rounds each). The triad's output
 * is checked. step_s, one serial step of a small LSTM-like recurrence on the
 * caller's thread: a GEMM call [x_t, h'] (1 x 32) x (32 x 64) and the gate
 * pass over its 16 units, each step needing the last's h (the per-step cost
 * a recurrent layer pays however small its batch; docs/explain.md).
 * A host backend has no queue or transfers: those figures are NAN.
 */
#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu.h"

/* Latency tries: at least MIN, at most MAX, more while the share lasts. */
#define PROBE_MIN_TRIES 5
#define PROBE_MAX_TRIES 2000
#define PROBE_MIN_RATE_TRIES 3
#define PROBE_MAX_RATE_TRIES 32
/* FMA peak tries (the best is kept, as `xo bench` does). */
#define PROBE_PEAK_TRIES 3
/* Triad arrays: 2x the last-level cache each (6x for the three), 32..128 MiB. */
#define PROBE_TRIAD_MIN ((size_t)32 << 20)
#define PROBE_TRIAD_MAX ((size_t)128 << 20)
/* Triad elements checked per try. */
#define PROBE_TRIAD_CHECKS 1024
#define PROBE_TRIAD_S 3.0f

static bool more(int n, int min, int max, double deadline)
{
	return n < max && (n < min || xo_now_s() < deadline);
}

/* ---- FMA peak of n threads ------------------------------------------------------ */

struct peak_arg {
	enum xo_cpu_isa isa;
	double seconds;
	double flops;
};

static void *peak_thread(void *p)
{
	struct peak_arg *a = p;

	a->flops = xo_cpu_fma_peak(a->isa, a->seconds);
	return NULL;
}

/* Sum of the FMA rates of n threads running at once (one try). */
static double peak_threads_once(enum xo_cpu_isa isa, int n, double seconds)
{
	pthread_t tid[XO_CPU_MAX_THREADS];
	struct peak_arg args[XO_CPU_MAX_THREADS];
	double sum = 0.0;
	int started = 0;

	for (int i = 0; i < n; i++) {
		args[i] = (struct peak_arg){isa, seconds, 0.0};
		if (pthread_create(&tid[i], NULL, peak_thread, &args[i]))
			break;
		started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(tid[i], NULL);
		sum += args[i].flops;
	}
	return sum;
}

/* The peak is a maximum: load from other processes can only lower a try, so
 * the best of a few tries is the estimate. */
double xo_cpu_fma_peak_threads(enum xo_cpu_isa isa, int n, double seconds, int tries)
{
	double best = 0.0;

	XO_ASSERT(n >= 1 && n <= XO_CPU_MAX_THREADS && tries >= 1);
	for (int i = 0; i < tries; i++)
		best = fmax(best, peak_threads_once(isa, n, seconds));
	return best;
}

/* Each peak thread is timed in its own CPU time, so threads beyond the
 * online CPUs would time-share them and each still count a whole core's
 * rate: the sum would exceed the machine (64 threads on 2 cores: 32x). */
int xo_cpu_peak_threads(int nthreads)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus >= 1 && cpus < nthreads ? (int)cpus : nthreads;
}

const char *xo_cpu_isa_name(enum xo_cpu_isa isa)
{
	return xo_cpu_kernels_for(isa)->isa;
}

int xo_cpu_isa_floats(enum xo_cpu_isa isa)
{
	return xo_cpu_kernels_for(isa)->vw;
}

/* ---- triad ---------------------------------------------------------------------- */

struct triad_arg {
	float *a;
	const float *b, *c;
	float s;
	int64_t n;
};

static void triad_part(void *p, int t, int nt)
{
	const struct triad_arg *x = p;
	int64_t lo = x->n * t / nt, hi = x->n * (t + 1) / nt;
	float *restrict a = x->a;
	const float *restrict b = x->b, *restrict c = x->c;
	const float s = x->s; /* a local: a store to a[] could otherwise alias it */

	for (int64_t i = lo; i < hi; i++)
		a[i] = b[i] + s * c[i];
}

void xo_cpu_triad(struct xo_cpu_pool_threads *tp, int nt, float *a, const float *b,
		  const float *c, float s, int64_t n)
{
	struct triad_arg x = {a, b, c, s, n};

	XO_ASSERT(nt >= 1 && n >= 0);
	xo_cpu_threads_run(tp, nt, triad_part, &x);
}

/* The triad's inputs: b[i] = i mod 2^16, c[i] = (i / 8) mod 2^8, so
 * a[i] = b[i] + 3 c[i] < 2^17 is exact in float. */
static void triad_fill_part(void *p, int t, int nt)
{
	const struct triad_arg *x = p;
	int64_t lo = x->n * t / nt, hi = x->n * (t + 1) / nt;
	float *b = (float *)x->b, *c = (float *)x->c;

	for (int64_t i = lo; i < hi; i++) {
		b[i] = (float)(i & 0xffff);
		c[i] = (float)((i >> 3) & 0xff);
		x->a[i] = -1.0f;
	}
}

float xo_cpu_triad_expect(int64_t i)
{
	return (float)(i & 0xffff) + PROBE_TRIAD_S * (float)((i >> 3) & 0xff);
}

/* Writes the triad inputs (and a = -1) for n elements, in parallel so each
 * thread first touches the pages it streams. */
void xo_cpu_triad_fill(struct xo_cpu_pool_threads *tp, int nt, float *a, float *b, float *c,
		       int64_t n)
{
	struct triad_arg x = {a, b, c, PROBE_TRIAD_S, n};

	xo_cpu_threads_run(tp, nt, triad_fill_part, &x);
}

/* Reads a small sysfs text file into buf; false when it can't. */
static bool read_small(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = 0;
	return n > 0;
}

/* "32768K", "1M", "512" (bytes) as sysfs writes a cache size; 0 if not one. */
size_t xo_cpu_cache_size_parse(const char *text)
{
	char *end;
	unsigned long long v = strtoull(text, &end, 10);

	if (end == text)
		return 0;
	switch (*end) {
	case 'K': v <<= 10; end++; break;
	case 'M': v <<= 20; end++; break;
	case 'G': v <<= 30; end++; break;
	default: break;
	}
	while (*end == '\n' || *end == ' ')
		end++;
	return *end ? 0 : (size_t)v;
}

size_t xo_cpu_llc_bytes(const char *sysfs_cpu0)
{
	size_t best = 0;
	int best_level = 0;

	/* the highest-level data or unified cache that cpu0 sees: its own
	 * slice (one CCD's L3 on a Zen part), which is what its streams can
	 * live in; glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) gave 320 MiB on a
	 * 2-core Zen 4 guest whose L3 is 32 MiB, and the triad then allocated
	 * 3 x 128 MiB */
	for (int i = 0; i < 16; i++) {
		char path[512], buf[64];
		int level;
		size_t size;

		snprintf(path, sizeof(path), "%s/cache/index%d/level", sysfs_cpu0, i);
		if (!read_small(path, buf, sizeof(buf)))
			continue;
		level = atoi(buf);
		snprintf(path, sizeof(path), "%s/cache/index%d/type", sysfs_cpu0, i);
		if (!read_small(path, buf, sizeof(buf)) || strncmp(buf, "Instruction", 11) == 0)
			continue;
		snprintf(path, sizeof(path), "%s/cache/index%d/size", sysfs_cpu0, i);
		if (!read_small(path, buf, sizeof(buf)) || !(size = xo_cpu_cache_size_parse(buf)))
			continue;
		if (level > best_level) {
			best_level = level;
			best = size;
		}
	}
	if (!best) {
		long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);

		best = l3 > 0 ? (size_t)l3 : 0;
	}
	return best;
}

size_t xo_cpu_triad_bytes(size_t llc)
{
	size_t bytes = llc > 0 ? 2 * llc : PROBE_TRIAD_MIN;

	return bytes < PROBE_TRIAD_MIN ? PROBE_TRIAD_MIN
	       : bytes > PROBE_TRIAD_MAX ? PROBE_TRIAD_MAX
					 : bytes;
}

static enum xo_status probe_stream(struct xo_cpu_ctx *c, double share, struct xo_probe *p)
{
	int64_t n = (int64_t)(xo_cpu_triad_bytes(xo_cpu_llc_bytes("/sys/devices/system/cpu/cpu0")) /
	                    sizeof(float));
	float *a = malloc((size_t)n * sizeof(float)), *b = malloc((size_t)n * sizeof(float)),
	      *cc = malloc((size_t)n * sizeof(float));
	enum xo_status st = XO_OK;
	double best = 0.0, deadline;

	if (!a || !b || !cc) {
		st = xo_error(XO_ENOMEM, "cpu probe: out of memory for the stream arrays");
		goto out_free;
	}
	xo_cpu_triad_fill(c->tp, c->nthreads, a, b, cc, n);
	/* one untimed pass, then the tries */
	xo_cpu_triad(c->tp, c->nthreads, a, b, cc, PROBE_TRIAD_S, n);
	deadline = xo_now_s() + share;
	for (int t = 0; more(t, PROBE_MIN_RATE_TRIES, PROBE_MAX_RATE_TRIES, deadline); t++) {
		double t0 = xo_now_s(), dt;

		xo_cpu_triad(c->tp, c->nthreads, a, b, cc, PROBE_TRIAD_S, n);
		dt = xo_now_s() - t0;
		if (dt > 0)
			best = fmax(best, 12.0 * (double)n / dt);
	}
	for (int k = 0; k < PROBE_TRIAD_CHECKS; k++) {
		int64_t i = (int64_t)k * (n - 1) / (PROBE_TRIAD_CHECKS - 1);

		if (a[i] != xo_cpu_triad_expect(i)) {
			st = xo_error(XO_EINVAL,
				      "cpu probe: the triad wrote %g at %lld, expected %g: its "
				      "bandwidth would be wrong",
				      (double)a[i], (long long)i, (double)xo_cpu_triad_expect(i));
			goto out_free;
		}
	}
	p->mem_bw = best;

out_free:
	free(a);
	free(b);
	free(cc);
	return st;
}

/* ---- pool latency ----------------------------------------------------------------- */

static void empty_part(void *p, int t, int nt)
{
	(void)p;
	(void)t;
	(void)nt;
}

/* Every part waits until all parts have started: with two parts the caller
 * (which claims parts too) cannot run both, so one goes to a worker and the
 * round is one hand-off there and back. */
static void rendezvous_part(void *p, int t, int nt)
{
	_Atomic int *arrived = p;

	(void)t;
	atomic_fetch_add(arrived, 1);
	for (int spins = 0; atomic_load(arrived) < nt; spins++)
		if (spins % 1024 == 1023)
			sched_yield(); /* a loaded machine: the worker may need our core */
}

/* Rounds per try of the pool figures: a round can take tens of nanoseconds,
 * near the clock's own cost and resolution, so a try times several. */
#define PROBE_POOL_ROUNDS 16

static void probe_pool(struct xo_cpu_ctx *c, double share, struct xo_probe *p, double *v)
{
	double deadline;
	_Atomic int arrived;
	int n;

	xo_cpu_threads_run(c->tp, c->nthreads, empty_part, NULL); /* wakes the workers */
	deadline = xo_now_s() + share / 2;
	for (n = 0; more(n, PROBE_MIN_TRIES, PROBE_MAX_TRIES, deadline); n++) {
		double t0 = xo_now_s();

		for (int r = 0; r < PROBE_POOL_ROUNDS; r++)
			xo_cpu_threads_run(c->tp, c->nthreads, empty_part, NULL);
		v[n] = (xo_now_s() - t0) / PROBE_POOL_ROUNDS;
	}
	p->launch_s = xo_median(v, n);
	if (c->nthreads < 2)
		return; /* no worker to hand off to: handoff_s stays NAN */
	deadline = xo_now_s() + share / 2;
	for (n = 0; more(n, PROBE_MIN_TRIES, PROBE_MAX_TRIES, deadline); n++) {
		double t0 = xo_now_s();

		for (int r = 0; r < PROBE_POOL_ROUNDS; r++) {
			atomic_store(&arrived, 0);
			xo_cpu_threads_run(c->tp, 2, rendezvous_part, (void *)&arrived);
		}
		v[n] = (xo_now_s() - t0) / PROBE_POOL_ROUNDS;
	}
	p->handoff_s = xo_median(v, n);
}

/* The serial-step figure: STEP_IN inputs and STEP_UNITS units, 4 gates. */
#define STEP_IN         16
#define STEP_UNITS      16
#define STEP_G          (4 * STEP_UNITS)
#define STEP_K          (STEP_IN + STEP_UNITS)
#define STEPS_SHORT     32
#define STEPS_LONG      288

static float sigm(float v)
{
	return 1.0f / (1.0f + expf(-v));
}

/* Seconds of steps LSTM-like steps on the caller's thread; returns h[0]
 * through *sink so the work cannot be dropped. */
static double step_run(const float *w, float *xh, float *z, float *cst, int steps, float *sink)
{
	double t0 = xo_now_s();

	for (int s = 0; s < steps; s++) {
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, STEP_G, STEP_K, 1.0f, xh,
			    STEP_K, w, STEP_G, 0.0f, z, STEP_G);
		for (int u = 0; u < STEP_UNITS; u++) {
			float i = sigm(z[u]), f = sigm(z[STEP_UNITS + u]);
			float g = tanhf(z[2 * STEP_UNITS + u]), o = sigm(z[3 * STEP_UNITS + u]);

			cst[u] = f * cst[u] + i * g;
			xh[STEP_IN + u] = o * tanhf(cst[u]); /* the next step's h' */
		}
	}
	*sink += xh[STEP_IN];
	return xo_now_s() - t0;
}

/* step_s: the median of tries of (STEPS_LONG - STEPS_SHORT) steps, each try
 * the difference of two runs, so a run's set-up cancels. */
static void probe_steps(struct xo_probe *p, double *v)
{
	float w[STEP_K * STEP_G], xh[STEP_K], z[STEP_G], cst[STEP_UNITS], sink = 0;
	int n;

	for (int i = 0; i < STEP_K * STEP_G; i++)
		w[i] = 0.05f * (float)(i % 7 - 3);
	for (int i = 0; i < STEP_K; i++)
		xh[i] = 0.1f * (float)(i % 5);
	memset(cst, 0, sizeof(cst));
	step_run(w, xh, z, cst, STEPS_SHORT, &sink); /* warm: code and data in cache */
	for (n = 0; n < 2 * PROBE_MIN_TRIES; n++) {
		double a = step_run(w, xh, z, cst, STEPS_SHORT, &sink);
		double b = step_run(w, xh, z, cst, STEPS_LONG, &sink);

		/* a difference lost in the noise (preempted during the short
		 * run): the long run over its steps is the bound */
		v[n] = b > a ? (b - a) / (STEPS_LONG - STEPS_SHORT) : b / STEPS_LONG;
	}
	p->step_s = isfinite(sink) ? xo_median(v, n) : NAN;
}

enum xo_status xo_cpu_probe(struct xo_backend *be, double budget_s, struct xo_probe *out)
{
	struct xo_cpu_ctx *c = be->ctx;
	struct xo_probe p = {
	    .launch_s = NAN, .enqueue_s = NAN, .sync_s = NAN, .h2d_lat_s = NAN,
	    .h2d_bw = NAN, .d2h_lat_s = NAN, .d2h_bw = NAN, .flops = NAN,
	    .mem_bw = NAN, .handoff_s = NAN, .units = c->nthreads, .wall_s = NAN,
	    .step_s = NAN, .lane_mac_s = NAN,
	};
	double t0 = xo_now_s(), *v = malloc(PROBE_MAX_TRIES * sizeof(*v));
	enum xo_status st;

	if (!v)
		return xo_error(XO_ENOMEM, "cpu probe: out of memory");
	/* shares of the budget: pool latency 15%, FMA peak 20% (CPU time: on a
	 * loaded machine its wall time is longer), stream 30%; the rest is for
	 * the stream arrays' first touch */
	probe_pool(c, 0.15 * budget_s, &p, v);
	probe_steps(&p, v); /* 10 tries of 320 steps: ~2 ms */
	free(v);
	p.flops = xo_cpu_fma_peak_threads(c->isa, xo_cpu_peak_threads(c->nthreads),
					  fmin(0.2 * budget_s / PROBE_PEAK_TRIES, 0.1),
					  PROBE_PEAK_TRIES);
	if ((st = probe_stream(c, 0.3 * budget_s, &p)))
		return st;
	p.wall_s = xo_now_s() - t0;
	*out = p;
	return XO_OK;
}
