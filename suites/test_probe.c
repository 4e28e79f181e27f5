/*
 * test_probe.c - the device probe (struct xo_probe, `xo probe`): the
 * figures a backend defines are finite and positive and the
 * others NAN; the kernels behind the peaks compute what the host computes
 * (the cl FMA kernel's chains, the cl copy, the cpu triad), so a kernel that
 * does nothing cannot report a peak; orderings that could fail (a large
 * transfer takes longer than a 4-byte one); the cpu peak of n threads against
 * one thread's peak x n, measured side by side; and the store: a v3 store
 * migrates to the probes table, a run stores one row per device, and the
 * reader round-trips NAN <-> NULL.
 *
 * The cl tests are skipped without an OpenCL platform unless
 * XO_REQUIRE_OPENCL is set (CI), which makes that a failure. Probe budgets
 * are small (0.3 s): these tests check the measurements are sound, not fast.
 */
#include <math.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../kernels/cpu.h"
#include "perfdb.h"
#include "proc.h"
#include "perf_fixture.h"
#include "xo.h"
#include "xo/backend.h"
#ifdef XO_HAVE_CL
#include "cl_probe.h"
#endif

#define PROBE_BUDGET 0.3

static struct xo_backend *cl_be; /* NULL without OpenCL */

static void assert_figure(const char *what, double v)
{
	if (!(isfinite(v) && v > 0)) {
		print_error("%s = %g: expected finite and > 0\n", what, v);
		fail();
	}
}

/* ---- cpu ----------------------------------------------------------------------- */

static void test_cpu_figures(void **state)
{
	struct xo_backend *be;
	struct xo_probe p;

	(void)state;
	assert_int_equal(xo_backend_open("cpu", &be), XO_OK);
	assert_int_equal(xo_backend_probe(be, PROBE_BUDGET, &p), XO_OK);
	print_message("cpu: launch %.3g us, handoff %.3g us, %.1f GFLOP/s, %.1f GB/s, %d threads, "
		      "%.2f s\n",
		      p.launch_s * 1e6, p.handoff_s * 1e6, p.flops * 1e-9, p.mem_bw * 1e-9, p.units,
		      p.wall_s);
	assert_figure("launch_s", p.launch_s);
	assert_figure("flops", p.flops);
	assert_figure("mem_bw", p.mem_bw);
	assert_figure("wall_s", p.wall_s);
	assert_int_equal(p.units, ((struct xo_cpu_ctx *)be->ctx)->nthreads);
	if (p.units >= 2)
		assert_figure("handoff_s", p.handoff_s);
	else
		assert_true(isnan(p.handoff_s));
	/* a host backend has no queue and no transfers */
	assert_true(isnan(p.enqueue_s) && isnan(p.sync_s) && isnan(p.h2d_lat_s) &&
		    isnan(p.h2d_bw) && isnan(p.d2h_lat_s) && isnan(p.d2h_bw));
	/* ordering: an empty round can run wholly on the caller (it claims parts
	 * too), a hand-off cannot: it moves a cache line to another core and
	 * back, so it costs more (swapped fields would fail this). One probe on
	 * a loaded machine can see the empty round preempted; the order must
	 * show in one of three probes (swapped fields fail all three). */
	if (p.units >= 2) {
		struct xo_probe q = p;

		for (int k = 1; k < 3 && !(q.handoff_s > q.launch_s); k++)
			assert_int_equal(xo_backend_probe(be, PROBE_BUDGET, &q), XO_OK);
		assert_true(q.handoff_s > q.launch_s);
	}
	/* the serial step: a GEMM call and a gate pass take at least a few
	 * hundred instructions (> 10 ns) and, on a loaded machine, less than
	 * a millisecond each; a cpu has no work-item chain */
	assert_figure("step_s", p.step_s);
	assert_true(p.step_s > 1e-8 && p.step_s < 1e-3);
	assert_true(isnan(p.lane_mac_s));
	xo_backend_close(be);
}

/*
 * The probe's flops (n pool threads at once, n at most the online CPUs,
 * each timed in its own CPU time, summed) against one thread's
 * xo_cpu_fma_peak x n, the best of two
 * single-thread tries taken right before and after (the machine is shared
 * and noisy, so both are measured side by side). Bound [0.5, 1.5]: per-thread
 * CPU time makes time-sharing with other processes cancel out; what remains
 * is the clock dropping when every core is busy (all-core vs one-core boost,
 * 10-20%) and, worst, the threads landing on two SMT siblings of one core,
 * each then getting about half of its FMA pipes: 0.5. Above 1.5 needs a
 * thread's FLOP counted twice or a wrong FLOP count per FMA (4 for 2 gives 2).
 */
static void test_cpu_flops_vs_one_thread(void **state)
{
	struct xo_backend *be;
	struct xo_probe p;
	enum xo_cpu_isa isa;
	double one, ratio;
	int threads;

	(void)state;
	assert_int_equal(xo_backend_open("cpu", &be), XO_OK);
	isa = ((struct xo_cpu_ctx *)be->ctx)->isa;
	one = xo_cpu_fma_peak(isa, 0.03);
	assert_int_equal(xo_backend_probe(be, PROBE_BUDGET, &p), XO_OK);
	one = fmax(one, xo_cpu_fma_peak(isa, 0.03));
	/* threads beyond the online CPUs add nothing (run with XO_THREADS=6 on
	 * 2 cores, a sum of CPU-time rates once gave 3x the machine) */
	threads = xo_cpu_peak_threads(p.units);
	assert_true(threads >= 1 && threads <= p.units &&
		    threads <= sysconf(_SC_NPROCESSORS_ONLN));
	ratio = p.flops / (one * threads);
	print_message("cpu flops %.1f GFLOP/s, one thread %.1f x %d threads (pool %d): ratio %.2f\n",
		      p.flops * 1e-9, one * 1e-9, threads, p.units, ratio);
	assert_true(ratio >= 0.5 && ratio <= 1.5);
	xo_backend_close(be);
}

/* The triad over the pool writes every element, exactly, and nothing past. */
static void test_cpu_triad_checked(void **state)
{
	const int64_t n = 100003; /* odd: parts of unequal size */
	struct xo_cpu_pool_threads *tp;
	float *a = malloc((size_t)(n + 16) * sizeof(float));
	float *b = malloc((size_t)n * sizeof(float)), *c = malloc((size_t)n * sizeof(float));

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_int_equal(xo_cpu_threads_init(2, &tp), XO_OK);
	xo_cpu_triad_fill(tp, 2, a, b, c, n);
	for (int i = 0; i < 16; i++)
		a[n + i] = 12345.0f; /* canary */
	assert_true(a[0] == -1.0f && a[n - 1] == -1.0f);
	/* sensitive: the expected output differs from the inputs and from a's fill */
	assert_true(xo_cpu_triad_expect(8) != b[8] && xo_cpu_triad_expect(8) != -1.0f);
	xo_cpu_triad(tp, 2, a, b, c, 3.0f, n);
	for (int64_t i = 0; i < n; i++)
		if (a[i] != xo_cpu_triad_expect(i)) {
			print_error("a[%lld] = %g, expected %g\n", (long long)i, (double)a[i],
				    (double)xo_cpu_triad_expect(i));
			fail();
		}
	for (int i = 0; i < 16; i++)
		assert_true(a[n + i] == 12345.0f);
	xo_cpu_threads_free(tp);
	free(a);
	free(b);
	free(c);
}

/* Writes text to dir/name (dir made if missing). */
static void put_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The triad's arrays are sized by the LLC the core sees in sysfs (the
 * highest-level data/unified cache), not glibc's sysconf figure, which on a
 * 2-core Zen 4 guest said 320 MiB for a 32 MiB L3 and made the probe
 * allocate 3 x 128 MiB. A fake sysfs tree: L1d 32K, L1i 32K (ignored, even
 * if larger), L2 1M, L3 32M. */
static void test_cpu_llc_from_sysfs(void **state)
{
	char root[] = "/tmp/xo_llc_XXXXXX", cache[600], idx[700];
	const char *rows[][3] = {{"1", "Data", "32K"},
				 {"1", "Instruction", "65536K"},
				 {"2", "Unified", "1024K"},
				 {"3", "Unified", "32768K\n"}};

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(cache, sizeof(cache), "%s/cache", root);
	for (int i = 0; i < 4; i++) {
		snprintf(idx, sizeof(idx), "%s/index%d", cache, i);
		mkdir(cache, 0700);
		put_file(idx, "level", rows[i][0]);
		put_file(idx, "type", rows[i][1]);
		put_file(idx, "size", rows[i][2]);
	}
	assert_int_equal(xo_cpu_llc_bytes(root), (size_t)32 << 20);
	assert_int_equal(xo_cpu_triad_bytes(xo_cpu_llc_bytes(root)), (size_t)64 << 20);
	/* the bounds: 32 MiB at least, 128 MiB at most, 32 MiB when unknown */
	assert_int_equal(xo_cpu_triad_bytes((size_t)1 << 20), (size_t)32 << 20);
	assert_int_equal(xo_cpu_triad_bytes((size_t)320 << 20), (size_t)128 << 20);
	assert_int_equal(xo_cpu_triad_bytes(0), (size_t)32 << 20);
	assert_int_equal(xo_cpu_cache_size_parse("32768K"), (size_t)32 << 20);
	assert_int_equal(xo_cpu_cache_size_parse("2M\n"), (size_t)2 << 20);
	assert_int_equal(xo_cpu_cache_size_parse("512"), (size_t)512);
	assert_int_equal(xo_cpu_cache_size_parse("K"), (size_t)0);
	assert_int_equal(xo_cpu_cache_size_parse("12Q"), (size_t)0);
	/* this machine: where sysfs names an L3, the probe's arrays follow it */
	{
		size_t llc = xo_cpu_llc_bytes("/sys/devices/system/cpu/cpu0");
		FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");

		if (f) {
			char buf[64] = {0};

			assert_non_null(fgets(buf, sizeof(buf), f));
			fclose(f);
			assert_int_equal(llc, xo_cpu_cache_size_parse(buf));
		}
	}
	for (int i = 0; i < 4; i++) {
		const char *names[] = {"level", "type", "size"};

		for (int k = 0; k < 3; k++) {
			snprintf(idx, sizeof(idx), "%s/index%d/%s", cache, i, names[k]);
			unlink(idx);
		}
		snprintf(idx, sizeof(idx), "%s/index%d", cache, i);
		rmdir(idx);
	}
	rmdir(cache);
	rmdir(root);
}

/* ---- cl -------------------------------------------------------------------------- */

#ifdef XO_HAVE_CL
static void test_cl_figures(void **state)
{
	struct xo_probe p;

	(void)state;
	if (!cl_be)
		skip();
	assert_int_equal(xo_backend_probe(cl_be, PROBE_BUDGET, &p), XO_OK);
	print_message("cl: launch %.3g us, enqueue %.3g us, sync %.3g us, h2d %.3g us %.2f GB/s, "
		      "d2h %.3g us %.2f GB/s, %.1f GFLOP/s, %.1f GB/s, %d units, %.2f s\n",
		      p.launch_s * 1e6, p.enqueue_s * 1e6, p.sync_s * 1e6, p.h2d_lat_s * 1e6,
		      p.h2d_bw * 1e-9, p.d2h_lat_s * 1e6, p.d2h_bw * 1e-9, p.flops * 1e-9,
		      p.mem_bw * 1e-9, p.units, p.wall_s);
	assert_figure("launch_s", p.launch_s);
	assert_figure("enqueue_s", p.enqueue_s);
	assert_figure("sync_s", p.sync_s);
	assert_figure("h2d_lat_s", p.h2d_lat_s);
	assert_figure("h2d_bw", p.h2d_bw);
	assert_figure("d2h_lat_s", p.d2h_lat_s);
	assert_figure("d2h_bw", p.d2h_bw);
	assert_figure("flops", p.flops);
	assert_figure("mem_bw", p.mem_bw);
	assert_figure("wall_s", p.wall_s);
	assert_true(p.units >= 1);
	assert_true(isnan(p.handoff_s)); /* no thread pool */
	/* orderings: a large transfer takes longer than a 4-byte one (a
	 * bandwidth off by 1000, or latency and bandwidth swapped, fails), and
	 * a launch waited for costs more than its enqueue alone */
	assert_true((double)XO_CL_PROBE_XFER_BYTES / p.h2d_bw > p.h2d_lat_s);
	assert_true((double)XO_CL_PROBE_XFER_BYTES / p.d2h_bw > p.d2h_lat_s);
	assert_true(p.launch_s > p.enqueue_s);
	/* the serial step and one work-item's multiply-add: a step holds 16
	 * dependent multiply-adds and a barrier, so it costs more than one */
	assert_figure("step_s", p.step_s);
	assert_figure("lane_mac_s", p.lane_mac_s);
	assert_true(p.step_s > p.lane_mac_s);
}

/* The step kernel's final state equals the host's, bit for bit, for a
 * work-group of 64 and for one work-item, with an odd and an even count of
 * steps (the result row alternates). */
static void test_cl_steps_checked(void **state)
{
	struct xo_cl_ctx *c;
	float w[XO_CL_PROBE_LANE_K], init[2 * XO_CL_PROBE_STEP_L], got[2 * XO_CL_PROBE_STEP_L];
	float want[2 * XO_CL_PROBE_STEP_L];
	const int steps[2] = {7, 8};
	cl_mem wb, sb;
	cl_int err;

	(void)state;
	if (!cl_be)
		skip();
	c = cl_be->ctx;
	for (int i = 0; i < XO_CL_PROBE_LANE_K; i++)
		w[i] = 0x1p-8f * (float)(1 + i % 3);
	for (int i = 0; i < 2 * XO_CL_PROBE_STEP_L; i++)
		init[i] = 1.0f + (float)i * 0x1p-7f;
	wb = clCreateBuffer(c->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(w), w, &err);
	assert_int_equal(err, CL_SUCCESS);
	sb = clCreateBuffer(c->context, CL_MEM_READ_WRITE, sizeof(init), NULL, &err);
	assert_int_equal(err, CL_SUCCESS);
	for (int local = 1; local <= XO_CL_PROBE_STEP_L; local *= XO_CL_PROBE_STEP_L) {
		if ((size_t)local > c->kernel_wg[XO_CL_K_probe_steps])
			continue;
		for (int j = 0; j < 2; j++) {
			int k = local == 1 ? XO_CL_PROBE_LANE_K : XO_CL_PROBE_STEP_K;
			double dev_s = 0;
			size_t e0 = (size_t)(steps[j] & 1) * (size_t)local;

			assert_int_equal(clEnqueueWriteBuffer(c->queue, sb, CL_TRUE, 0, sizeof(init),
							      init, 0, NULL, NULL),
					 CL_SUCCESS);
			assert_int_equal(xo_cl_probe_steps_run(c, wb, sb, (size_t)local, steps[j], k,
							       &dev_s),
					 XO_OK);
			assert_true(dev_s > 0);
			assert_int_equal(clEnqueueReadBuffer(c->queue, sb, CL_TRUE, 0, sizeof(got),
							     got, 0, NULL, NULL),
					 CL_SUCCESS);
			memcpy(want, init, sizeof(init));
			xo_cl_probe_steps_expect(w, want, local, steps[j], k);
			for (int l = 0; l < local; l++) {
				/* sensitive: the steps moved the state */
				assert_true(want[e0 + (size_t)l] != init[e0 + (size_t)l]);
				if (memcmp(&got[e0 + (size_t)l], &want[e0 + (size_t)l],
					   sizeof(float))) {
					print_error("local %d, %d steps, item %d: device %.9g, "
						    "host %.9g\n",
						    local, steps[j], l, (double)got[e0 + (size_t)l],
						    (double)want[e0 + (size_t)l]);
					fail();
				}
			}
		}
	}
	clReleaseMemObject(sb);
	clReleaseMemObject(wb);
}

/* The FMA kernel's every output equals the host's fmaf chains, bit for bit. */
static void test_cl_fma_checked(void **state)
{
	struct xo_cl_ctx *c;
	const size_t global = 1000;
	const int iters = 1000;
	float got[1000];
	double dev_s = 0.0;
	cl_mem out;
	cl_int err;

	(void)state;
	if (!cl_be)
		skip();
	c = cl_be->ctx;
	out = clCreateBuffer(c->context, CL_MEM_READ_WRITE, sizeof(got), NULL, &err);
	assert_int_equal(err, CL_SUCCESS);
	assert_int_equal(xo_cl_probe_fma_run(c, out, global, iters, &dev_s), XO_OK);
	assert_true(dev_s > 0);
	assert_int_equal(clEnqueueReadBuffer(c->queue, out, CL_TRUE, 0, sizeof(got), got, 0, NULL,
					     NULL),
			 CL_SUCCESS);
	for (size_t g = 0; g < global; g++) {
		float want = xo_cl_probe_fma_expect(g, iters);

		/* sensitive: the rounds changed the value (a kernel that skipped
		 * them, or stopped at the fixed point 8, would not match) */
		assert_true(want != xo_cl_probe_fma_expect(g, 0) && want != 8.0f);
		if (memcmp(&got[g], &want, sizeof(want))) {
			print_error("work-item %zu: device %.9g, host %.9g\n", g, (double)got[g],
				    (double)want);
			fail();
		}
	}
	clReleaseMemObject(out);
}

/* The copy kernel writes every float of its output as the host expects. */
static void test_cl_copy_checked(void **state)
{
	struct xo_cl_ctx *c;
	const size_t n4 = 4099; /* odd */
	float *got = malloc(n4 * 16);
	double dev_s = 0.0;
	cl_mem src, dst;
	cl_int err;

	(void)state;
	if (!cl_be)
		skip();
	assert_non_null(got);
	c = cl_be->ctx;
	src = clCreateBuffer(c->context, CL_MEM_READ_WRITE, n4 * 16, NULL, &err);
	assert_int_equal(err, CL_SUCCESS);
	dst = clCreateBuffer(c->context, CL_MEM_READ_WRITE, n4 * 16, NULL, &err);
	assert_int_equal(err, CL_SUCCESS);
	assert_int_equal(xo_cl_probe_fill_run(c, src, n4), XO_OK);
	assert_int_equal(xo_cl_probe_copy_run(c, src, dst, n4, &dev_s), XO_OK);
	assert_true(dev_s > 0);
	assert_int_equal(clEnqueueReadBuffer(c->queue, dst, CL_TRUE, 0, n4 * 16, got, 0, NULL, NULL),
			 CL_SUCCESS);
	for (size_t e = 0; e < 4 * n4; e++)
		if (got[e] != xo_cl_probe_copy_expect(e)) {
			print_error("float %zu: device %g, expected %g\n", e, (double)got[e],
				    (double)xo_cl_probe_copy_expect(e));
			fail();
		}
	clReleaseMemObject(dst);
	clReleaseMemObject(src);
	free(got);
}
#endif

/* ---- store ------------------------------------------------------------------------ */

static void db_path(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", tmpdir, name);
}

static int64_t query_int(const char *path, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *s;
	int64_t v = -1;

	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(h);
	return v;
}

static void exec_sql(const char *path, const char *sql)
{
	sqlite3 *h;

	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
}

/* A run of a fixed commit and testbed, started (nothing written yet). */
static void new_run(struct xo_perf_run *run)
{
	struct xo_perf_commit c;
	struct xo_perf_testbed t;

	memset(&c, 0, sizeof(c));
	memset(&t, 0, sizeof(t));
	snprintf(c.sha, sizeof(c.sha), "0123456789abcdef0123456789abcdef01234567");
	snprintf(t.hostname, sizeof(t.hostname), "testhost");
	xo_perf_run_start(run, &c, &t, "test");
}

/* A v3 store (the current schema less the probes table and what versions 5
 * and 6 added) migrates: the table is
 * there afterwards with exactly the columns of the schema, in order. */
static void test_store_migrates_v3(void **state)
{
	static const char *const cols[] = {"run_id",  "device",    "launch_s",  "enqueue_s",
					   "sync_s",  "h2d_lat_s", "h2d_bw",    "d2h_lat_s",
					   "d2h_bw",  "flops",     "mem_bw",    "handoff_s",
					   "units",   "wall_s"};
	char path[512];
	struct xo_perfdb *db;
	sqlite3 *h;
	sqlite3_stmt *s;
	size_t i = 0;

	(void)state;
	db_path(path, sizeof(path), "v3.sqlite");
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	xo_perfdb_close(db);
	exec_sql(path, "DROP TABLE probes; ALTER TABLE benchmarks DROP COLUMN metric;"
		       " ALTER TABLE benchmarks DROP COLUMN unit; DROP INDEX runs_commit_testbed;"
		       " PRAGMA user_version = 3;");
	assert_int_equal(query_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'probes'"),
			 0);
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	xo_perfdb_close(db);
	assert_int_equal(query_int(path, "PRAGMA user_version"), XO_PERFDB_SCHEMA_VERSION);
	assert_true(XO_PERFDB_SCHEMA_VERSION >= 4);
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA table_info(probes)", -1, &s, NULL),
			 SQLITE_OK);
	for (; sqlite3_step(s) == SQLITE_ROW; i++) {
		assert_true(i < sizeof(cols) / sizeof(cols[0]));
		assert_string_equal((const char *)sqlite3_column_text(s, 1), cols[i]);
		/* the primary key is (run_id, device) */
		assert_int_equal(sqlite3_column_int(s, 5), i == 0 ? 1 : i == 1 ? 2 : 0);
	}
	assert_int_equal(i, sizeof(cols) / sizeof(cols[0]));
	sqlite3_finalize(s);
	sqlite3_close(h);
}

static bool same_figure(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static void assert_same_probe(const struct xo_probe *a, const struct xo_probe *b)
{
	assert_true(same_figure(a->launch_s, b->launch_s));
	assert_true(same_figure(a->enqueue_s, b->enqueue_s));
	assert_true(same_figure(a->sync_s, b->sync_s));
	assert_true(same_figure(a->h2d_lat_s, b->h2d_lat_s));
	assert_true(same_figure(a->h2d_bw, b->h2d_bw));
	assert_true(same_figure(a->d2h_lat_s, b->d2h_lat_s));
	assert_true(same_figure(a->d2h_bw, b->d2h_bw));
	assert_true(same_figure(a->flops, b->flops));
	assert_true(same_figure(a->mem_bw, b->mem_bw));
	assert_true(same_figure(a->handoff_s, b->handoff_s));
	assert_int_equal(a->units, b->units);
	assert_true(same_figure(a->wall_s, b->wall_s));
}

/* One row per device in the run's transaction; NAN stored as NULL and read
 * back as NAN; a device without a row is XO_ENODEV; a run stored without
 * probes has none. */
static void test_store_roundtrip(void **state)
{
	struct xo_perf_probe pr[2] = {
	    {"cpu",
	     {.launch_s = 4e-8, .enqueue_s = NAN, .sync_s = NAN, .h2d_lat_s = NAN, .h2d_bw = NAN,
	      .d2h_lat_s = NAN, .d2h_bw = NAN, .flops = 2.3e11, .mem_bw = 2.4e10,
	      .handoff_s = 2e-7, .units = 2, .wall_s = 1.1}},
	    {"cl",
	     {.launch_s = 5.3e-5, .enqueue_s = 9.5e-7, .sync_s = 3e-8, .h2d_lat_s = 6.8e-5,
	      .h2d_bw = 1.2e10, .d2h_lat_s = 6.2e-5, .d2h_bw = 1.1e10, .flops = 2.9e10,
	      .mem_bw = 5.1e10, .handoff_s = NAN, .units = 2, .wall_s = 0.76}},
	};
	char path[512];
	struct xo_perfdb *db;
	struct xo_probe got;
	struct xo_perf_run started;
	int64_t run = 0, run2 = 0;

	(void)state;
	db_path(path, sizeof(path), "rt.sqlite");
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	new_run(&started);
	assert_int_equal(xo_perfdb_run_store(db, &started, NULL, 0, pr, 2, &run), XO_OK);
	new_run(&started);
	assert_int_equal(xo_perfdb_run_store(db, &started, NULL, 0, NULL, 0, &run2), XO_OK);
	for (int i = 0; i < 2; i++) {
		memset(&got, 0, sizeof(got));
		assert_int_equal(xo_perfdb_probe_get(db, run, pr[i].device, &got), XO_OK);
		assert_same_probe(&got, &pr[i].p);
	}
	assert_int_equal(xo_perfdb_probe_get(db, run, "gpu", &got), XO_ENODEV);
	assert_int_equal(xo_perfdb_probe_get(db, run2, "cpu", &got), XO_ENODEV);
	xo_perfdb_close(db);
	assert_int_equal(query_int(path, "SELECT count(*) FROM probes"), 2);
	assert_int_equal(
	    query_int(path, "SELECT count(*) FROM probes WHERE device = 'cpu' AND enqueue_s IS NULL"
			    " AND h2d_bw IS NULL AND d2h_lat_s IS NULL AND handoff_s = 2e-7"),
	    1);
	assert_int_equal(
	    query_int(path, "SELECT count(*) FROM probes WHERE device = 'cl' AND handoff_s IS NULL"
			    " AND enqueue_s = 9.5e-7 AND units = 2"),
	    1);
}

/* Two probes of one device in one run break the primary key: the whole run's
 * transaction rolls back and no run row is left. */
static void test_store_duplicate_rolls_back(void **state)
{
	struct xo_perf_probe pr[2] = {{"cpu", {.flops = 1, .units = 1}},
				      {"cpu", {.flops = 2, .units = 1}}};
	char path[512];
	struct xo_perfdb *db;
	struct xo_perf_run started;
	int64_t run = 0;

	(void)state;
	db_path(path, sizeof(path), "dup.sqlite");
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	new_run(&started);
	assert_int_not_equal(xo_perfdb_run_store(db, &started, NULL, 0, pr, 2, &run), XO_OK);
	xo_perfdb_close(db);
	assert_int_equal(query_int(path, "SELECT count(*) FROM probes"), 0);
	assert_int_equal(query_int(path, "SELECT count(*) FROM runs"), 0);
}

/* argv[1], when given, is a cmocka test filter ("test_cpu_flops*"). */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_figures),
		cmocka_unit_test(test_cpu_flops_vs_one_thread),
		cmocka_unit_test(test_cpu_triad_checked),
		cmocka_unit_test(test_cpu_llc_from_sysfs),
#ifdef XO_HAVE_CL
		cmocka_unit_test(test_cl_figures),
		cmocka_unit_test(test_cl_fma_checked),
		cmocka_unit_test(test_cl_copy_checked),
		cmocka_unit_test(test_cl_steps_checked),
#endif
		cmocka_unit_test(test_store_migrates_v3),
		cmocka_unit_test(test_store_roundtrip),
		cmocka_unit_test(test_store_duplicate_rolls_back),
	};
	int rc;

#ifdef XO_HAVE_CL
	if (xo_backend_open("cl", &cl_be)) {
		cl_be = NULL;
		if (xo_opencl_required()) {
			fprintf(stderr, "test_probe: FAIL: OpenCL required: %s\n", xo_last_error());
			return 1;
		}
		fprintf(stderr, "test_probe: cl tests skipped: %s\n", xo_last_error());
	}
#endif
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	rc = cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
	xo_backend_close(cl_be);
	return rc;
}
