/*
 * test_gates.c - the error of the lstm cell's own sigmoid and tanh
 * (kernels/cpu_kernels.inc vsigmoid_gate, vtanh_gate) over the
 * float inputs, at every ISA level this CPU runs
 * (XO_CPU_ISA caps it, as for the backend), against double precision.
 *
 *   test_gates [STRIDE [ISA]]   bit patterns 0, STRIDE, 2 STRIDE, ... of all
 *                               2^32; ISA (scalar, avx2, avx512): that level only
 *
 * XO_TEST_SHARD=K/N (0 <= K < N; ci/nightly.sh sets it) keeps every Nth
 * input of that sequence from the Kth: the N shards together are the whole
 * sequence, so the nightly checks every float over N nights.
 *
 * STRIDE 1 (ctest label nightly) is every float; the quick run takes a
 * dense deterministic sample (STRIDE 61, odd, so it hits every exponent,
 * both signs and mantissas of every residue; ~70M inputs) because the
 * double reference (glibc's exp and tanh, ~10 ns each) over the 2^30
 * inputs where it is not trivial takes ~20 s per function on one core,
 * more than the quick stage may add. Every input of the special classes
 * (+-0, +-Inf, NaN, subnormals, the clamps' edges) is checked in both.
 *
 * Error in units of u = 2^-24 relative to the exact value (the harness's
 * units: ULP_SIGMOID_FWD 13 and ULP_TANH_FWD 11 include the reference's
 * own rounding u, which a double oracle does not have, so the kernel may
 * take 12 and 10), with the harness's absolute floor FLT_MIN (results below
 * it may flush to zero, TINY in suites/harness.c). Measured over every
 * float (STRIDE 1 on the AMD EPYC Zen 4 of 2026-11-26, GCC 12.2; scalar has
 * no FMA and rounds each product):
 *     sigmoid gate: scalar 4.145 u (x = -16.9131), avx2 and avx512 4.349 u
 *                   (x = -16.9198)
 *     tanh gate:    scalar 5.665 u (x = 6.10734), avx2 and avx512 5.229 u
 *                   (x = 7.25451)
 * (the stride-61 sample finds 3.906 / 4.049 and 5.034 / 4.653; the sigmoid
 * in the form e / (1 + e) with e = exp(-|x|) measures 4.827 / 4.503 u)
 * and asserted at MEAS (the largest, rounded up) + MARGIN: the margin (1 u) absorbs a
 * compiler's different contraction of a*b+c into FMAs, which moves single
 * roundings; anything more is a changed function, to be re-measured.
 * Also: sigmoid in [0, 1] and tanh in [-1, 1] for every input, tanh odd bit
 * for bit, and the special values below.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../kernels/cpu.h"

#define U         0x1p-24
#define MEAS_SIGMOID 4.4 /* measured, every float, see the file's comment */
#define MEAS_TANH    5.7
#define MARGIN       1.0
#define CHUNK        (1 << 16)

static uint64_t g_stride = 61;
static uint64_t g_first;  /* the first bit pattern: the shard's K x STRIDE */
static const char *g_isa; /* NULL: every level up to the detected one */

static float from_bits(uint32_t b)
{
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

static uint32_t to_bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

/* The exact value in double; the tiny and huge arguments by their series
 * or limit (exact to far below float's rounding), the rest by glibc. */
static double ref(int fn, float xf)
{
	double x = xf, ax = fabs(x);

	if (fn == 0) {
		if (ax < 0x1p-30)
			return 0.5 + x / 4; /* next term x^3 / 48 */
		return 1.0 / (1.0 + exp(-x));
	}
	if (ax < 0x1p-20)
		return x - x * x * x / 3; /* next term 2 x^5 / 15 */
	return tanh(x);
}

struct worst {
	double err;
	float x, y;
	double want;
};

/* err of y against exact w, in u relative, 0 when within the floor */
static double err_u(float y, double w)
{
	double d = fabs((double)y - w);

	if (d <= FLT_MIN)
		return 0.0;
	return d / (fabs(w) * U);
}

static void sweep(const struct xo_cpu_kernels *k, int fn, double limit)
{
	float *x = malloc(CHUNK * sizeof(float)), *y = malloc(CHUNK * sizeof(float));
	struct worst w = {0};
	uint64_t b = g_first, n = 0;

	assert_non_null(x);
	assert_non_null(y);
	while (b < (UINT64_C(1) << 32)) {
		int m = 0;

		for (; m < CHUNK && b < (UINT64_C(1) << 32); m++, b += g_stride)
			x[m] = from_bits((uint32_t)b);
		k->gate_fwd(fn, x, y, m);
		for (int i = 0; i < m; i++) {
			double e, want;

			n++;
			if (isnan(x[i])) {
				if (!isnan(y[i]))
					fail_msg("%s %s(NaN 0x%08x) = %a, not NaN", k->isa,
						 fn ? "tanh" : "sigmoid", to_bits(x[i]), (double)y[i]);
				continue;
			}
			if (fn == 0 ? !(y[i] >= 0.0f && y[i] <= 1.0f) : !(fabsf(y[i]) <= 1.0f))
				fail_msg("%s %s(%a) = %a: out of range", k->isa,
					 fn ? "tanh" : "sigmoid", (double)x[i], (double)y[i]);
			want = ref(fn, x[i]);
			e = err_u(y[i], want);
			if (e > w.err)
				w = (struct worst){e, x[i], y[i], want};
		}
	}
	printf("  %-7s %-7s %llu inputs (stride %llu): max %.3f u at x = %a (%.9g: got %.9g, "
	       "exact %.12g); asserted <= %.1f\n",
	       k->isa, fn ? "tanh" : "sigmoid", (unsigned long long)n,
	       (unsigned long long)g_stride, w.err, (double)w.x, (double)w.x, (double)w.y,
	       w.want, limit);
	if (w.err > limit)
		fail_msg("%s %s: %.3f u at x = %a exceeds %.1f", k->isa, fn ? "tanh" : "sigmoid",
			 w.err, (double)w.x, limit);
	free(y);
	free(x);
}

/* Every input of the special classes, whatever the stride. */
static void specials(const struct xo_cpu_kernels *k)
{
	const float inf = INFINITY;
	float x[16], y[16];

	/* +-0: sigmoid 1/2, tanh keeps the zero and its sign */
	x[0] = 0.0f;
	x[1] = -0.0f;
	k->gate_fwd(0, x, y, 2);
	assert_true(y[0] == 0.5f && y[1] == 0.5f);
	k->gate_fwd(1, x, y, 2);
	assert_true(to_bits(y[0]) == 0u && to_bits(y[1]) == 0x80000000u);
	/* +-Inf: sigmoid 1 and +0, tanh +-1, exactly; so is tanh beyond 9 */
	x[0] = inf;
	x[1] = -inf;
	x[2] = 9.5f;
	x[3] = -1e30f;
	k->gate_fwd(0, x, y, 2);
	assert_true(y[0] == 1.0f && to_bits(y[1]) == 0u);
	k->gate_fwd(1, x, y, 4);
	assert_true(y[0] == 1.0f && y[1] == -1.0f && y[2] == 1.0f && y[3] == -1.0f);
	/* sigmoid's clamp: below -87.34 the result is under FLT_MIN (the
	 * subnormal 1 / (1 + e), or 0 where e = +Inf below -88.37), never
	 * negative or NaN */
	x[0] = -87.0f;
	x[1] = -88.0f;
	x[2] = -100.0f;
	x[3] = -1e30f;
	x[4] = 100.0f;
	x[5] = 1e30f;
	k->gate_fwd(0, x, y, 6);
	assert_true(err_u(y[0], ref(0, x[0])) <= MEAS_SIGMOID + MARGIN);
	for (int i = 1; i < 4; i++)
		assert_true(y[i] >= 0.0f && y[i] < FLT_MIN);
	assert_true(y[4] == 1.0f && y[5] == 1.0f);
	/* every subnormal input: sigmoid 1/2, tanh x itself (bit for bit) */
	for (uint32_t s = 0; s < 2; s++) {
		float *xs = malloc(CHUNK * sizeof(float)), *ys = malloc(CHUNK * sizeof(float));

		assert_non_null(xs);
		assert_non_null(ys);
		for (uint32_t b = 1; b < 0x800000u; b += CHUNK) {
			int m = 0;

			for (; m < CHUNK && b + (uint32_t)m < 0x800000u; m++)
				xs[m] = from_bits((s << 31) | (b + (uint32_t)m));
			k->gate_fwd(1, xs, ys, m);
			for (int i = 0; i < m; i++)
				if (to_bits(ys[i]) != to_bits(xs[i]))
					fail_msg("%s tanh(%a) = %a", k->isa, (double)xs[i],
						 (double)ys[i]);
			k->gate_fwd(0, xs, ys, m);
			for (int i = 0; i < m; i++)
				if (ys[i] != 0.5f)
					fail_msg("%s sigmoid(%a) = %a", k->isa, (double)xs[i],
						 (double)ys[i]);
		}
		free(ys);
		free(xs);
	}
	/* tanh is odd bit for bit (the rational is x times an even function) */
	for (int i = 0; i < 16; i++)
		x[i] = (float)(i + 1) * 0.37f - 3.0f;
	k->gate_fwd(1, x, y, 16);
	for (int i = 0; i < 16; i++) {
		float xn = -x[i], yn;

		k->gate_fwd(1, &xn, &yn, 1);
		assert_true(to_bits(yn) == (to_bits(y[i]) ^ 0x80000000u));
	}
}

static void test_gates(void **state)
{
	enum xo_cpu_isa top = xo_cpu_isa_detect();

	(void)state;
	for (int i = 0; i <= (int)top; i++) {
		const struct xo_cpu_kernels *k = xo_cpu_kernels_for((enum xo_cpu_isa)i);

		if (g_isa && strcmp(g_isa, k->isa) != 0)
			continue;
		specials(k);
		sweep(k, 0, MEAS_SIGMOID + MARGIN);
		sweep(k, 1, MEAS_TANH + MARGIN);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gates),
	};
	const char *shard;

	if (argc > 1) {
		char *end;
		unsigned long long s = strtoull(argv[1], &end, 10);

		if (*end || s < 1 || s > 0xffffffffull) {
			fprintf(stderr, "test_gates: STRIDE '%s' must be 1..2^32-1\n", argv[1]);
			return 2;
		}
		g_stride = s;
	}
	if (argc > 2)
		g_isa = argv[2];
	shard = getenv("XO_TEST_SHARD");
	if (shard && *shard) {
		unsigned k, n;
		char tail;

		if (sscanf(shard, "%u/%u%c", &k, &n, &tail) != 2 || n < 1 || k >= n ||
		    g_stride * n > 0xffffffffull) {
			fprintf(stderr, "test_gates: XO_TEST_SHARD '%s' must be K/N, 0 <= K < N\n",
				shard);
			return 2;
		}
		g_first = (uint64_t)k * g_stride;
		g_stride *= n;
		printf("test_gates: shard %u/%u: bit patterns %llu, %llu, ...\n", k, n,
		       (unsigned long long)g_first, (unsigned long long)(g_first + g_stride));
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
