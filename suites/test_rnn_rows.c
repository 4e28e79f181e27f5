/*
 * test_rnn_rows.c - the cpu lstm kernels compute each sample alone (issue
 * 15; kernels/cpu_rnn.c, struct xo_cpu_rnn_step in kernels/cpu.h): a
 * sample's forward (y and its ws rows) and its dx rows must be the same
 * bits whether it runs in a batch of 13 (row tiles of 6 / 3 / 4 rows, forward
 * chunks of 4, 4, 4 and 1 over 2 threads at AVX-512, a short last tile) or alone at batch 1. The
 * comparison against ref (suites/shapes) allows rounding differences, so a
 * tile that mixed rows, or a chain that depended on the row's place in the
 * tile or on the thread count, would pass there; here it cannot.
 * dkernel, drecurrent_kernel and dbias are sums over the batch: each chunk
 * of samples has its own sums, added in chunk order, so they must be the
 * same bits whichever thread claimed a chunk; at batch 97 the chunks are
 * 32 samples at 1, 2 and 3 threads alike, so the three runs must agree
 * (sums kept per part or per thread would not).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xo.h"
#include "../kernels/cpu.h"

#define NB 13

struct run {
	struct xo_tensor *t[XO_MAX_SRC + XO_MAX_DST];
	int64_t n[XO_MAX_SRC + XO_MAX_DST];
};

static float val(uint64_t slot, uint64_t i)
{
	return xo_philox_uniform(7, (uint32_t)slot, 0, i) - 0.5f;
}

/* Creates the op's tensors for p; src slot s gets element i of sample n0 +
 * (its sample) from val, so a batch-1 run of sample n0 sees the same inputs
 * as row n0 of a batch run. Non-batched slots (weights) ignore n0. */
static void setup(struct xo_backend *be, enum xo_op op, enum xo_dir dir,
		  const struct xo_params *p, int64_t n0, const float *const *given,
		  struct run *r)
{
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];

	memset(r, 0, sizeof(*r));
	assert_int_equal(xo_op_shapes(op, dir, p, ss, ds), XO_OK);
	for (int i = 0; i < XO_MAX_SRC + XO_MAX_DST; i++) {
		struct xo_slot_shape *s = i < XO_MAX_SRC ? &ss[i] : &ds[i - XO_MAX_SRC];
		int64_t n = 1, per;
		float *h;

		if (!s->ndim)
			continue;
		for (int d = 0; d < s->ndim; d++)
			n *= s->dim[d];
		r->n[i] = n;
		assert_int_equal(xo_tensor_create(be, s->dtype, s->ndim, s->dim, &r->t[i]), XO_OK);
		if (i >= XO_MAX_SRC)
			continue;
		h = malloc((size_t)n * sizeof(float));
		assert_non_null(h);
		per = s->dim[0] == p->batch ? n / p->batch : 0; /* batched: offset by n0 */
		for (int64_t k = 0; k < n; k++)
			h[k] = given && given[i] ? given[i][k + n0 * per] : val((uint64_t)i, (uint64_t)(k + n0 * per));
		assert_int_equal(xo_tensor_write(r->t[i], h, 0, n), XO_OK);
		free(h);
	}
}

static void run_op(struct xo_backend *be, enum xo_op op, enum xo_dir dir,
		   const struct xo_params *p, struct run *r)
{
	struct xo_op_args a = {.p = *p};

	for (int i = 0; i < XO_MAX_SRC; i++)
		a.src[i] = r->t[i];
	for (int i = 0; i < XO_MAX_DST; i++)
		a.dst[i] = r->t[XO_MAX_SRC + i];
	assert_int_equal(xo_op_run(be, op, dir, &a), XO_OK);
}

static float *get(struct run *r, int slot)
{
	float *h = malloc((size_t)r->n[slot] * sizeof(float));

	assert_non_null(h);
	assert_int_equal(xo_tensor_read(r->t[slot], h, 0, r->n[slot]), XO_OK);
	return h;
}

static void done(struct run *r)
{
	for (int i = 0; i < XO_MAX_SRC + XO_MAX_DST; i++)
		xo_tensor_free(r->t[i]);
}

/* fwd dst 0 y, 1 ws; bwd src 3 ws, 4 dy, dst 0 dx (op lstm or gru, ra its
 * reset_after) */
static void check_rows(enum xo_op op, bool ra, int64_t units, bool seq, bool back)
{
	struct xo_backend *be;
	struct xo_params p = xo_params_default_op(op), p1;
	struct run fb, bb;
	float *y, *ws, *dx;
	const float *given[XO_MAX_SRC] = {0};

	assert_int_equal(setenv("XO_THREADS", "2", 1), 0);
	assert_int_equal(xo_backend_open("cpu", &be), XO_OK);
	p.batch = NB;
	p.len = 9;
	p.ch = 5;
	p.units = units;
	p.return_sequences = seq;
	p.go_backwards = back;
	p.reset_after = ra;
	/* batch 13 x 9 x 4u x (5 + u) is above the threading threshold for
	 * units >= 20: 2 parts */
	setup(be, op, XO_DIR_FWD, &p, 0, NULL, &fb);
	run_op(be, op, XO_DIR_FWD, &p, &fb);
	y = get(&fb, XO_MAX_SRC);
	ws = get(&fb, XO_MAX_SRC + 1);
	/* the backward of the batch on the forward's ws */
	given[3] = ws;
	setup(be, op, XO_DIR_BWD, &p, 0, given, &bb);
	run_op(be, op, XO_DIR_BWD, &p, &bb);
	dx = get(&bb, XO_MAX_SRC);
	p1 = p;
	p1.batch = 1;
	for (int64_t n = 0; n < NB; n++) {
		struct run f1, b1;
		float *y1, *ws1, *dx1;
		const float *g1[XO_MAX_SRC] = {0};
		int64_t ny = fb.n[XO_MAX_SRC] / NB, nw = fb.n[XO_MAX_SRC + 1] / NB;
		int64_t nx = bb.n[XO_MAX_SRC] / NB;

		setup(be, op, XO_DIR_FWD, &p1, n, NULL, &f1);
		run_op(be, op, XO_DIR_FWD, &p1, &f1);
		y1 = get(&f1, XO_MAX_SRC);
		ws1 = get(&f1, XO_MAX_SRC + 1);
		if (memcmp(y1, y + n * ny, (size_t)ny * sizeof(float)) ||
		    memcmp(ws1, ws + n * nw, (size_t)nw * sizeof(float)))
			fail_msg("%s ra=%d units=%d: sample %d's forward differs alone and in the batch",
				 xo_op_name(op), (int)ra, (int)units, (int)n);
		g1[3] = ws; /* the batch's ws, offset to sample n by setup */
		setup(be, op, XO_DIR_BWD, &p1, n, g1, &b1);
		run_op(be, op, XO_DIR_BWD, &p1, &b1);
		dx1 = get(&b1, XO_MAX_SRC);
		/* gru's backward (cpu_rnn.c bwd_w_task: dx as one BLAS GEMM over
		 * the batch's rows, split by threads) is not held to this */
		if (op == XO_OP_lstm && memcmp(dx1, dx + n * nx, (size_t)nx * sizeof(float)))
			fail_msg("%s ra=%d units=%d: sample %d's dx differs alone and in the batch",
				 xo_op_name(op), (int)ra, (int)units, (int)n);
		free(y1);
		free(ws1);
		free(dx1);
		done(&f1);
		done(&b1);
	}
	free(y);
	free(ws);
	free(dx);
	done(&fb);
	done(&bb);
	xo_backend_close(be);
}

static void test_lstm_rows_alone(void **state)
{
	(void)state;
	check_rows(XO_OP_lstm, false, 64, false, false);
	check_rows(XO_OP_lstm, false, 33, true, true); /* units past the vector width */
}

/* gru's fused forward step (k->gru_step), reset_after=1 and 0: the same
 * rule for y and ws (batch 13 x 9 x 3u x
 * (5 + u) is threaded for units >= 23) */
static void test_gru_rows_alone(void **state)
{
	(void)state;
	check_rows(XO_OP_gru, true, 64, false, false);
	check_rows(XO_OP_gru, true, 33, true, true);
	check_rows(XO_OP_gru, false, 64, true, false);
	check_rows(XO_OP_gru, false, 33, false, true);
}

/* dst 1..3 of the lstm backward at batch 97 with XO_THREADS=nt, on the ws
 * of a 1-thread forward (ws NULL: computed and returned in *ws) */
static void wsums(const char *nt, float **ws, float *out[3])
{
	struct xo_backend *be;
	struct xo_params p = xo_params_default_op(XO_OP_lstm);
	const float *given[XO_MAX_SRC] = {0};
	struct run fb, bb;

	assert_int_equal(setenv("XO_THREADS", nt, 1), 0);
	assert_int_equal(xo_backend_open("cpu", &be), XO_OK);
	p.batch = 97;
	p.len = 11; /* blocks of steps do not divide it (kernels/cpu_rnn.c) */
	p.ch = 5;
	p.units = 20;
	if (!*ws) {
		setup(be, XO_OP_lstm, XO_DIR_FWD, &p, 0, NULL, &fb);
		run_op(be, XO_OP_lstm, XO_DIR_FWD, &p, &fb);
		*ws = get(&fb, XO_MAX_SRC + 1);
		done(&fb);
	}
	given[3] = *ws;
	setup(be, XO_OP_lstm, XO_DIR_BWD, &p, 0, given, &bb);
	run_op(be, XO_OP_lstm, XO_DIR_BWD, &p, &bb);
	for (int i = 0; i < 3; i++)
		out[i] = get(&bb, XO_MAX_SRC + 1 + i);
	done(&bb);
	xo_backend_close(be);
}

static void test_lstm_wsums_threads(void **state)
{
	static const char *const nts[] = {"2", "3", "2"};
	float *ws = NULL, *one[3], *other[3];
	int64_t n[3] = {5 * 80, 20 * 80, 80};

	(void)state;
	wsums("1", &ws, one);
	for (int r = 0; r < 3; r++) {
		wsums(nts[r], &ws, other);
		for (int i = 0; i < 3; i++) {
			if (memcmp(one[i], other[i], (size_t)n[i] * sizeof(float)))
				fail_msg("lstm bwd dst %d differs at XO_THREADS=1 and %s", i + 1,
					 nts[r]);
			free(other[i]);
		}
	}
	for (int i = 0; i < 3; i++)
		free(one[i]);
	free(ws);
}

/* The call's time when nt parts claim the chunks of c rows from the
 * counter, part t needing slow[t] time units per cost unit (xo_cpu_rnn_
 * chunk_cost plus the per-chunk overhead as xo_cpu_rnn_fwd_span counts it:
 * the difference of the two costs below): each chunk goes to the part that
 * is free first (the lowest index of equals). In *ideal the time if every
 * part were busy to the end: the chunks' costs over the parts' speeds. */
static double claim_sim(int64_t n, int nt, int rows, int64_t c, const double *slow, double *ideal)
{
	double free_at[4] = {0}, end = 0.0, speed = 0.0;
	int64_t nc = (n + c - 1) / c, least;
	int64_t over = xo_cpu_rnn_fwd_span(c, 1, rows, c, &least) - xo_cpu_rnn_chunk_cost(c, rows);

	*ideal = 0.0;

	for (int64_t i = 0; i < nc; i++) {
		int64_t nb = i == nc - 1 ? n - i * c : c;
		int b = 0;

		for (int t = 1; t < nt; t++)
			if (free_at[t] < free_at[b])
				b = t;
		free_at[b] += (double)(xo_cpu_rnn_chunk_cost(nb, rows) + over) * slow[b];
		*ideal += (double)(xo_cpu_rnn_chunk_cost(nb, rows) + over);
	}
	for (int t = 0; t < nt; t++) {
		end = free_at[t] > end ? free_at[t] : end;
		speed += 1.0 / slow[t];
	}
	*ideal /= speed;
	return end;
}

/*
 * The forward's chunks (xo_cpu_rnn_fwd_chunk, predict at batch 32)
 * for row tiles of 3, 4 and 6 (AVX2, scalar, AVX-512) on 1-4 parts,
 * batches 1-700:
 * - 1 to 30 rows (the ring and scratch are sized for 32), at most the batch;
 * - dynamic: at least min(tiles, XO_CPU_RNN_PER_PART * nt) chunks, so a part
 *   that starts late still finds work (the rule before last gave 2 chunks of
 *   16 at batch 32: a worker that woke 0.6 ms late found both claimed);
 * - balanced: under in-order claiming at equal speeds the busiest part costs
 *   no more than with any other admissible size (xo_cpu_rnn_fwd_span), and
 *   at batch 32 on 2 parts of tiles of 6 both parts get the same work
 *   (the rule before gave 5 chunks of 6 and one of 2: 18 rows against 14,
 *   the call waiting ~10% on the slower part);
 * - one part at half speed (a loaded machine): the call takes at most 1.3x
 *   the time with every part busy to the end, where the batch has
 *   XO_CPU_RNN_PER_PART * nt tiles (the worst of the rule is 1.25x at 4
 *   parts, 1.13x at 2; the rule before 1.19x and 1.125x; one chunk per part
 *   gives 1.5x at 2 parts);
 * - one part: chunks of whole tiles, 30 rows rounded down, or the batch.
 */
static void test_fwd_chunks_balanced(void **state)
{
	(void)state;
	static const int rows[] = {3, 4, 6};
	static const double slow[4][4] = {{1}, {1, 2}, {1, 1, 2}, {1, 1, 1, 2}};

	for (int r = 0; r < 3; r++)
		for (int nt = 1; nt <= 4; nt++)
			for (int64_t n = 1; n <= 700; n++) {
				int64_t c = xo_cpu_rnn_fwd_chunk(n, nt, rows[r]), least, span;
				int64_t chunks = (n + c - 1) / c, tiles = (n + rows[r] - 1) / rows[r];
				int64_t want = tiles < 3 * nt ? tiles : 3 * nt;
				double ideal, took;

				if (c < 1 || c > 30 || c > n)
					fail_msg("batch %d on %d parts, tiles of %d: chunk %d", (int)n,
						 nt, rows[r], (int)c);
				if (nt == 1) {
					int64_t most = 30 / rows[r] * rows[r];

					assert_int_equal(c, n < most ? n : most);
					continue;
				}
				if (chunks < want)
					fail_msg("batch %d on %d parts, tiles of %d: %d chunks of %d, "
						 "want >= %d",
						 (int)n, nt, rows[r], (int)chunks, (int)c, (int)want);
				span = xo_cpu_rnn_fwd_span(n, nt, rows[r], c, &least);
				for (int64_t o = 1; o <= 30 && o <= n; o++)
					if ((n + o - 1) / o >= want &&
					    xo_cpu_rnn_fwd_span(n, nt, rows[r], o, &least) < span)
						fail_msg("batch %d on %d parts, tiles of %d: chunks of "
							 "%d leave the busiest part more than of %d",
							 (int)n, nt, rows[r], (int)c, (int)o);
				if (tiles < 3 * nt)
					continue;
				took = claim_sim(n, nt, rows[r], c, slow[nt - 1], &ideal);
				if (took > 1.3 * ideal)
					fail_msg("batch %d on %d parts, tiles of %d, one at half speed: "
						 "chunks of %d take %.2fx the ideal",
						 (int)n, nt, rows[r], (int)c, took / ideal);
			}
	/* the target: 8 chunks of 4 rows, 16 a part, same cost */
	assert_int_equal(xo_cpu_rnn_fwd_chunk(32, 2, 6), 4);
	{
		int64_t least, span = xo_cpu_rnn_fwd_span(32, 2, 6, 4, &least);

		assert_int_equal(span, least);
		/* the rule before: 18 rows against 14 */
		assert_true(xo_cpu_rnn_fwd_span(32, 2, 6, 6, &least) > least);
	}
	/* the cost model follows lstm_step's tiles: 2 half rows a row of a whole
	 * tile, a tail of 1-2 rows as 5 (a 2-row tile), 3-4 as 8 (4 rows) */
	assert_int_equal(xo_cpu_rnn_chunk_cost(6, 6), 12);
	assert_int_equal(xo_cpu_rnn_chunk_cost(8, 6), 17);
	assert_int_equal(xo_cpu_rnn_chunk_cost(16, 6), 32);
	assert_int_equal(xo_cpu_rnn_chunk_cost(5, 6), 12);
	assert_int_equal(xo_cpu_rnn_chunk_cost(7, 3), 17);
	assert_int_equal(xo_cpu_rnn_chunk_cost(3, 4), 8);
	/* the table says the tile its kernel uses at each level */
	assert_int_equal(xo_cpu_kernels_for(XO_CPU_ISA_SCALAR)->lstm_rows, 4);
}

/* no argument: the lstm's tests (ops.cpu.lstm.rows); "gru": gru's
 * (ops.cpu.gru.rows) */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lstm_rows_alone),
	    cmocka_unit_test(test_lstm_wsums_threads),
	    cmocka_unit_test(test_fwd_chunks_balanced),
	};
	const struct CMUnitTest gru[] = {
	    cmocka_unit_test(test_gru_rows_alone),
	};

	if (argc > 1 && !strcmp(argv[1], "gru"))
		return cmocka_run_group_tests(gru, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
