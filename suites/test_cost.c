/*
 * test_cost.c - the pieces of `xo explain` against answers computed by hand:
 * the seed model's per-layer costs (DESIGN
 * section 1 shapes), the cost model on a synthetic probe and a synthetic
 * model, the wall-time split (adds up, clamps, ignores junk), each diagnosis
 * rule on a split with a known dominant part, the crossover interpolation
 * and the what-if search on synthetic curves.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cost.h"
#include "explain.h"
#include "perfdb.h"
#include "split.h"
#include "xo.h"

/* Sums of a few doubles of similar size: a relative 1e-12 is many ulps
 * (2^-52 ~ 2.2e-16 each, < 20 operations), and far below any real error. */
#define REL 1e-12

static void assert_close(double got, double want)
{
	if (!(fabs(got - want) <= REL * fabs(want) + 1e-300))
		fail_msg("got %.17g, want %.17g", got, want);
}

/* The seed model's layers by hand (DESIGN section 1): input 29x1.
 *  conv1d 16 k3 -> 27x16, w 3*1*16 + 16 = 64, 27*48 = 1296 MACs
 *  pool 3      -> 9x16
 *  conv1d 32 k3 -> 7x32, w 3*16*32 + 32 = 1568, 7*1536 = 10752 MACs
 *  pool 3      -> 2x32
 *  flatten     -> 64
 *  dropout     -> 64
 *  dense 32    -> 32, 64*32 + 32 = 2080, 2048 MACs
 *  dense 12    -> 12, 32*12 + 12 = 396, 384 MACs
 * The first conv has no input gradient (nothing before it learns). */
static void test_seed_layer_costs(void **state)
{
	static const struct xo_layer_cost want[8] = {
	    {2592, 2592, 4 * (29 + 432), 4 * (29 + 2 * 432), 4 * 64, 4 * 64, 64, 1, 1, 1, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	    {0, 0, 4 * (432 + 144), 4 * (2 * 432 + 144), 0, 0, 0, 1, 1, 1, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	    {21504, 43008, 4 * (144 + 224), 4 * (2 * 144 + 2 * 224), 4 * 1568, 4 * 1568 + 4 * 1536,
	     1568, 1, 1, 1, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	    {0, 0, 4 * (224 + 64), 4 * (2 * 224 + 64), 0, 0, 0, 1, 1, 1, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	    {0, 0, 4 * 128, 4 * 128, 0, 0, 0, 1, 1, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	    {4096, 8192, 4 * (64 + 32), 4 * (3 * 64), 4 * 2080, 4 * 2080 + 4 * 2048, 2080, 1, 1, 1, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	    {768, 1536, 4 * (32 + 12), 4 * (2 * 32 + 24), 4 * 396, 4 * 396 + 4 * 384, 396, 1, 1, 1, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	};
	struct xo_backend *be;
	struct xo_model *m;
	double fwd = 0, bwd = 0;
	int64_t params = 0;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	assert_int_equal(xo_model_open_string(xo_model_seed_spec, "seed", be, 1, &m), XO_OK);
	assert_int_equal(xo_model_layer_count(m), 8);
	for (int i = 0; i < 8; i++) {
		struct xo_layer_cost c;

		xo_model_layer_cost(m, i, &c);
		print_message("  layer %d %s: %g/%g FLOP, %g/%g B act, %g/%g B w\n", i,
		              xo_model_layer_name(m, i), c.flops_fwd, c.flops_bwd, c.act_bytes_fwd,
		              c.act_bytes_bwd, c.w_bytes_fwd, c.w_bytes_bwd);
		assert_close(c.flops_fwd, want[i].flops_fwd);
		assert_close(c.flops_bwd, want[i].flops_bwd);
		assert_close(c.act_bytes_fwd, want[i].act_bytes_fwd);
		assert_close(c.act_bytes_bwd, want[i].act_bytes_bwd);
		assert_close(c.w_bytes_fwd, want[i].w_bytes_fwd);
		assert_close(c.w_bytes_bwd, want[i].w_bytes_bwd);
		assert_int_equal(c.params, want[i].params);
		assert_int_equal(c.ops_train_fwd, want[i].ops_train_fwd);
		assert_int_equal(c.ops_bwd, want[i].ops_bwd);
		assert_int_equal(c.ops_predict, want[i].ops_predict);
		fwd += c.flops_fwd;
		bwd += c.flops_bwd;
		params += c.params;
	}
	/* 2 x 14480 MACs forward; the parameters Keras's summary counts */
	assert_close(fwd, 28960);
	assert_close(bwd, 55328);
	assert_int_equal(params, 4108);
	assert_int_equal(params, xo_model_param_count(m));
	{
		/* the step explain predicts: cpu's fused training step has 2 pool
		 * rounds and moves the packed weights of the layers that pass dx
		 * back (2 x 4 x (1536 + 2048 + 384) B) and the per-part gradient
		 * sums (4 x 4 x 4108 B); cl's launches are the count given; a
		 * predict call copies 29 floats in and 12 out per sample */
		struct xo_layer_cost lc[8];
		struct xo_cost_step s;

		for (int i = 0; i < 8; i++)
			xo_model_layer_cost(m, i, &lc[i]);
		xo_explain_cost_step(m, lc, false, true, 64, 0, true, 0, &s);
		assert_close(s.launches, 2);
		assert_close(s.extra_bytes, 2 * 4 * (1536 + 2048 + 384) + 4 * 4 * 4108);
		assert_close(s.h2d_bytes, 0);
		/* the fused path's threading rule (kernels/cpu_net.c NET_PAR_MIN) */
		assert_close(s.pool_min_macs, 300000);
		xo_explain_cost_step(m, lc, false, false, 64, 0, true, 0, &s);
		assert_close(s.launches, 1);
		assert_close(s.pool_min_macs, 300000);
		assert_close(s.extra_bytes, 0);
		assert_close(s.h2d_bytes, 64 * 29 * 4);
		assert_close(s.d2h_bytes, 64 * 12 * 4);
		/* op by op: one round per op: 7 forward, 7 backward (flatten has
		 * none), loss, accuracy, loss gradient, Adam */
		xo_explain_cost_step(m, lc, false, true, 64, 0, false, 0, &s);
		assert_close(s.launches, 7 + 7 + 4);
		assert_close(s.pool_min_macs, 0); /* each op has its own rule */
		xo_explain_cost_step(m, lc, true, true, 64, 2, true, 0, &s);
		assert_close(s.launches, 2);
		assert_close(s.extra_bytes, 0);
		assert_close(s.pool_min_macs, 0); /* cl: no host pool */
		/* a host backend's fixed cost per op call applies to every op of
		 * the step (18 in training, 6 in a predict call: flatten runs
		 * none, nor does dropout at inference), fused or not; a cl
		 * device's launches carry it already */
		xo_explain_cost_step(m, lc, false, true, 64, 0, true, 1e-6, &s);
		assert_close(s.ops, 18);
		assert_close(s.op_call_s, 1e-6);
		xo_explain_cost_step(m, lc, false, false, 64, 0, true, 1e-6, &s);
		assert_close(s.ops, 6);
		xo_explain_cost_step(m, lc, true, true, 64, 2, true, 1e-6, &s);
		assert_close(s.op_call_s, 0);
	}
	xo_model_close(m);
	xo_backend_close(be);
}

/* A synthetic device: 10 us launches, 1 GFLOP/s, 100 MB/s, 1 GB/s copies
 * with 10 us latency each way. */
static struct xo_probe synth_probe(void)
{
	return (struct xo_probe){.launch_s = 1e-5,
	                         .enqueue_s = NAN,
	                         .sync_s = NAN,
	                         .h2d_lat_s = 1e-5,
	                         .h2d_bw = 1e9,
	                         .d2h_lat_s = 1e-5,
	                         .d2h_bw = 1e9,
	                         .flops = 1e9,
	                         .mem_bw = 1e8,
	                         .handoff_s = NAN,
	                         .units = 1};
}

static const struct xo_layer_cost synth_layer = {.flops_fwd = 1000,
                                                 .flops_bwd = 2000,
                                                 .act_bytes_fwd = 100,
                                                 .act_bytes_bwd = 200,
                                                 .w_bytes_fwd = 400,
                                                 .w_bytes_bwd = 800,
                                                 .params = 100,
                                                 .ops_train_fwd = 1,
                                                 .ops_bwd = 1,
                                                 .ops_predict = 1};

static struct xo_cost_step synth_step(int64_t batch, bool training, bool fused)
{
	return (struct xo_cost_step){.layers = &synth_layer,
	                             .nlayers = 1,
	                             .params = 100,
	                             .in_size = 5,
	                             .classes = 10,
	                             .batch = batch,
	                             .training = training,
	                             .fused = fused};
}

static void assert_adds_up(const struct xo_split *s)
{
	assert_close(s->part_s[0] + s->part_s[1] + s->part_s[2] + s->part_s[3], s->wall_s);
	for (int p = 0; p < XO_SPLIT_COUNT; p++)
		assert_true(s->part_s[p] >= 0);
}

/*
 * layer_normalization by hand: on a [4][6][2] input (48 values, 24 rows of
 * 2 channels) 8 FLOP a value forward and 12 backward; the forward reads x
 * once and writes y (rows are short: their passes hit the cache), the
 * backward reads x and dy for the rows and again for dgamma / dbeta and
 * writes dx (the conv2d below it learns, so dx is wanted). center and scale
 * change the variables, so the fingerprints of the three forms differ.
 */
static void test_layer_normalization_cost(void **state)
{
	static const char *const texts[3] = {
	    "input 5 7 1\nconv2d filters=2 kernel_size=2\nlayer_normalization\n"
	    "global_average_pooling2d\ndense units=3 activation=softmax\n",
	    "input 5 7 1\nconv2d filters=2 kernel_size=2\nlayer_normalization center=0\n"
	    "global_average_pooling2d\ndense units=3 activation=softmax\n",
	    "input 5 7 1\nconv2d filters=2 kernel_size=2\nlayer_normalization scale=0\n"
	    "global_average_pooling2d\ndense units=3 activation=softmax\n",
	};
	char dir[] = "/tmp/xo_test_cost.XXXXXX", path[3][64], name[64], arch[3][32];
	struct xo_backend *be;
	struct xo_model *m;
	struct xo_layer_cost c;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	assert_int_equal(xo_model_open_string(texts[0], "ln", be, 1, &m), XO_OK);
	xo_model_layer_cost(m, 1, &c);
	assert_close(c.flops_fwd, 8 * 48);
	assert_close(c.flops_bwd, 12 * 48);
	assert_close(c.act_bytes_fwd, 4 * (48 + 48));
	assert_close(c.act_bytes_bwd, 4 * (2 * 48 + 2 * 48 + 48));
	assert_close(c.w_bytes_fwd, 4 * (2 + 2)); /* gamma, beta */
	assert_close(c.w_bytes_bwd, 4 * (2 + 2));
	assert_int_equal(c.ops_train_fwd, 1);
	assert_int_equal(c.ops_predict, 1);
	assert_int_equal(c.ops_bwd, 1);
	xo_model_close(m);
	xo_backend_close(be);
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 3; i++) {
		FILE *f;

		snprintf(path[i], sizeof(path[i]), "%s/m%d.model", dir, i);
		f = fopen(path[i], "w");
		assert_non_null(f);
		fputs(texts[i], f);
		fclose(f);
		assert_int_equal(xo_perf_model_ident(path[i], name, sizeof(name), arch[i],
		                                     sizeof(arch[i])),
		                 XO_OK);
	}
	assert_string_not_equal(arch[0], arch[1]);
	assert_string_not_equal(arch[0], arch[2]);
	assert_string_not_equal(arch[1], arch[2]);
	for (int i = 0; i < 3; i++)
		unlink(path[i]);
	rmdir(dir);
}

/*
 * Dense on a [T][F] sample by hand: [8][5] -> Dense(4) is 8 rows of 5 * 4
 * multiply-adds (160 MACs per sample, 320 FLOP forward; a first layer:
 * dW only backward, 320 more); its GEMM for `xo bench --layers` is
 * (batch * 8) x 5 x 4, the op run on batch * 8 rows. The same layer on a
 * [4][2][5] image has the same rows and the same cost, and the fingerprint
 * tells the two apart (the sample's axes), and both from Dense on the flat
 * [40].
 */
/* A transposed convolution multiplies each input position by the whole
 * kernel: its cost and its GEMM shape (xo bench --layers) count in_h * in_w
 * positions of in_ch x (kh * kw * filters) products, not its (stride^2 times
 * larger) output positions. */
static void test_conv_transpose_cost(void **state)
{
	static const char *const texts[] = {
	    "input 3 4 2\nconv2d_transpose filters=5 kernel_size=3 strides=2 padding=same\n",
	    "input 6 2\nconv1d_transpose filters=5 kernel_size=3 strides=3\n",
	};
	/* input positions, kernel taps: [3][4] taps 9; [6] taps 3 */
	static const int64_t pos[] = {12, 6}, taps[] = {9, 3};
	struct xo_backend *be;
	struct xo_model *m;
	struct xo_layer_cost c;
	struct xo_layer_gemm g;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	for (int i = 0; i < 2; i++) {
		double macs = (double)(pos[i] * 2 * taps[i] * 5);

		assert_int_equal(xo_model_open_string(texts[i], "ct", be, 1, &m), XO_OK);
		xo_model_layer_cost(m, 0, &c);
		assert_close(c.flops_fwd, 2 * macs);
		assert_true(xo_model_layer_gemm(m, 0, 4, &g));
		assert_int_equal(g.rows, pos[i]);
		assert_int_equal(g.k, 2);
		assert_int_equal(g.n, taps[i] * 5);
		assert_int_equal(g.fwd.batch, 4);
		xo_model_close(m);
	}
	xo_backend_close(be);
}

/*
 * The recurrent layers fed Keras's mask read the int32 ids (4 bytes per
 * step) forward and backward, each direction of a Bidirectional its own:
 * the same models without mask_zero move that much less, and nothing else
 * of the cost changes (the masked steps' work is done and dropped).
 */
static void test_rnn_mask_cost(void **state)
{
	static const char *const texts[][2] = {
	    {"input 8 dtype=int32\nembedding input_dim=20 output_dim=4 mask_zero=True\n"
	     "lstm units=3\ndense units=2\n",
	     "input 8 dtype=int32\nembedding input_dim=20 output_dim=4\nlstm units=3\n"
	     "dense units=2\n"},
	    {"input 8 dtype=int32\nembedding input_dim=20 output_dim=4 mask_zero=True\n"
	     "bidirectional layer=gru units=3\ndense units=2\n",
	     "input 8 dtype=int32\nembedding input_dim=20 output_dim=4\n"
	     "bidirectional layer=gru units=3\ndense units=2\n"},
	};
	struct xo_backend *be;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	for (int i = 0; i < 2; i++) {
		struct xo_layer_cost c[2];

		for (int k = 0; k < 2; k++) {
			struct xo_model *m;

			assert_int_equal(xo_model_open_string(texts[i][k], "rnn_mask", be, 1, &m),
			                 XO_OK);
			xo_model_layer_cost(m, 1, &c[k]);
			xo_model_close(m);
		}
		assert_close(c[0].act_bytes_fwd - c[1].act_bytes_fwd, (i + 1) * 4.0 * 8);
		assert_close(c[0].act_bytes_bwd - c[1].act_bytes_bwd, (i + 1) * 4.0 * 8);
		assert_close(c[0].flops_fwd, c[1].flops_fwd);
		assert_close(c[0].flops_bwd, c[1].flops_bwd);
	}
	xo_backend_close(be);
}

/*
 * time_distributed by hand: over Conv1D (kernel 3, padding same) on a
 * [5][8][2] sample, 4 filters: each of the 5 * 8 outputs per filter is a
 * dot product of 3 * 2 terms, 5 * 8 * 24 multiply-adds per sample; the
 * fingerprint tells apart two models that differ only in the wrapped
 * Conv1D's dilation (same shapes, same counts) and the wrapped kind
 * (Dense with the kernel's element count of the Conv1D's).
 */
static void test_time_distributed_cost_and_ident(void **state)
{
	static const char *const texts[3] = {
	    "input 5 8 2\ntime_distributed layer=conv1d filters=4 kernel_size=3 padding=same\n"
	    "flatten\ndense units=3 activation=softmax\n",
	    "input 5 8 2\ntime_distributed layer=conv1d filters=4 kernel_size=3 padding=same "
	    "dilation_rate=2\nflatten\ndense units=3 activation=softmax\n",
	    "input 5 8 6\ntime_distributed layer=dense units=4\nflatten\n"
	    "dense units=3 activation=softmax\n",
	};
	char dir[] = "/tmp/xo_test_cost.XXXXXX", path[3][64], name[64], arch[3][32];
	struct xo_backend *be;
	struct xo_model *m;
	struct xo_layer_cost c;
	const double macs = 5.0 * 8.0 * 24.0;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	assert_int_equal(xo_model_open_string(texts[0], "td", be, 1, &m), XO_OK);
	xo_model_layer_cost(m, 0, &c);
	assert_close(c.flops_fwd, 2 * macs);
	assert_close(c.flops_bwd, 2 * macs); /* the first layer: no dx */
	assert_close(c.w_bytes_fwd, 4.0 * (24 + 4));
	assert_close(c.act_bytes_fwd, 4.0 * (80 + 160));
	xo_model_close(m);
	xo_backend_close(be);
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 3; i++) {
		FILE *f;

		snprintf(path[i], sizeof(path[i]), "%s/m%d.model", dir, i);
		f = fopen(path[i], "w");
		assert_non_null(f);
		fputs(texts[i], f);
		fclose(f);
		assert_int_equal(xo_perf_model_ident(path[i], name, sizeof(name), arch[i],
		                                     sizeof(arch[i])),
		                 XO_OK);
		unlink(path[i]);
	}
	rmdir(dir);
	assert_string_not_equal(arch[0], arch[1]);
	assert_string_not_equal(arch[0], arch[2]);
}

static void test_dense_rank3_cost_and_ident(void **state)
{
	static const char *const texts[3] = {
	    "input 8 5\ndense units=4\nflatten\ndense units=3 activation=softmax\n",
	    "input 4 2 5\ndense units=4\nflatten\ndense units=3 activation=softmax\n",
	    "input 40\ndense units=4\ndense units=3 activation=softmax\n",
	};
	char dir[] = "/tmp/xo_test_cost.XXXXXX", path[3][64], name[64], arch[3][32];
	struct xo_backend *be;
	struct xo_model *m;
	struct xo_layer_cost c;
	struct xo_layer_gemm g;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(xo_model_open_string(texts[i], "d3", be, 1, &m), XO_OK);
		xo_model_layer_cost(m, 0, &c);
		assert_close(c.flops_fwd, 2 * 160);
		assert_close(c.flops_bwd, 2 * 160);
		assert_close(c.act_bytes_fwd, 4 * (40 + 32));
		assert_close(c.w_bytes_fwd, 4 * (20 + 4));
		assert_true(xo_model_layer_gemm(m, 0, 16, &g));
		assert_int_equal(g.rows, 8);
		assert_int_equal(g.k, 5);
		assert_int_equal(g.n, 4);
		assert_int_equal(g.fwd.batch, 16 * 8);
		assert_int_equal(g.bwd.batch, 16 * 8);
		xo_model_close(m);
	}
	xo_backend_close(be);
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 3; i++) {
		FILE *f;

		snprintf(path[i], sizeof(path[i]), "%s/m%d.model", dir, i);
		f = fopen(path[i], "w");
		assert_non_null(f);
		fputs(texts[i], f);
		fclose(f);
		assert_int_equal(xo_perf_model_ident(path[i], name, sizeof(name), arch[i],
		                                     sizeof(arch[i])),
		                 XO_OK);
	}
	assert_string_not_equal(arch[0], arch[1]);
	assert_string_not_equal(arch[0], arch[2]);
	assert_string_not_equal(arch[1], arch[2]);
	for (int i = 0; i < 3; i++)
		unlink(path[i]);
	rmdir(dir);
}

/* The fingerprints (arch[i]) of the specs texts[0..n) (at most 4), each
 * written to a file of a temp folder, removed after. */
static void texts_ident(const char *const *texts, int n, char arch[][64])
{
	char dir[] = "/tmp/xo_cost_ident_XXXXXX", path[4][512], name[256];

	assert_true(n <= 4);
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < n; i++) {
		FILE *f;

		snprintf(path[i], sizeof(path[i]), "%s/m%d.model", dir, i);
		f = fopen(path[i], "w");
		assert_non_null(f);
		fputs(texts[i], f);
		fclose(f);
		assert_int_equal(xo_perf_model_ident(path[i], name, sizeof(name), arch[i], 64),
		                 XO_OK);
	}
	for (int i = 0; i < n; i++)
		unlink(path[i]);
	rmdir(dir);
}

/*
 * A model of several inputs: the fingerprint hashes each later input's
 * shape, so two models whose second input is (6,) and (1, 6) (the same
 * sample, and layers of the same shapes after its Flatten) are different
 * models; so are two that differ only in the order of a Concatenate's
 * inputs (the wiring).
 */
static void test_multi_input_ident(void **state)
{
	static const char *const texts[] = {
	    "input name=a 4\ninput name=b 6\nflatten name=f inputs=b\n"
	    "concatenate inputs=a,f\ndense units=2\n",
	    "input name=a 4\ninput name=b 1 6\nflatten name=f inputs=b\n"
	    "concatenate inputs=a,f\ndense units=2\n",
	    "input name=a 4\ninput name=b 6\nflatten name=f inputs=b\n"
	    "concatenate inputs=f,a\ndense units=2\n",
	};
	char arch[3][64];

	(void)state;
	texts_ident(texts, 3, arch);
	assert_string_not_equal(arch[0], arch[1]);
	assert_string_not_equal(arch[0], arch[2]);
}

/*
 * A MultiHeadAttention's attention_mask input: two models that differ only
 * in whether the attention takes the mask (which feeds an Add in both) are
 * different models.
 */
static void test_attention_mask_ident(void **state)
{
	static const char *const texts[] = {
	    "input name=x 6 6\ninput name=m 6 6\n"
	    "multi_head_attention name=a inputs=x,x attention_mask=m num_heads=2 key_dim=2\n"
	    "add inputs=a,m\nglobal_average_pooling1d\ndense units=2\n",
	    "input name=x 6 6\ninput name=m 6 6\n"
	    "multi_head_attention name=a inputs=x,x num_heads=2 key_dim=2\n"
	    "add inputs=a,m\nglobal_average_pooling1d\ndense units=2\n",
	};
	char arch[2][64];

	(void)state;
	texts_ident(texts, 2, arch);
	assert_string_not_equal(arch[0], arch[1]);
}

/*
 * The 2-D pooling layers and a rank-3 batch_normalization by hand: input
 * 4x6x2 (48 values), batch_normalization 48 -> 48 (8 and 12 FLOP per value),
 * max_pooling2d 2x2 (pool_w 3: width 6 / 3) -> 2x2x2 = 8, global average ->
 * 2; every pooling layer has an input gradient (the batch normalization
 * before it learns). Then the model fingerprint: two specs that differ only
 * in the width axis (pool_w and strides_w, or the input's width) are different models, and
 * the seed's fingerprint is the one it had before the width was hashed.
 */
static void test_pool2d_cost_and_ident(void **state)
{
	static const char *const spec = "input 4 6 2\nbatch_normalization\nmax_pooling2d pool_w=3\n"
	                                 "global_average_pooling2d\ndense units=3 activation=softmax\n";
	static const struct {
		double flops_fwd, flops_bwd, act_fwd, act_bwd;
	} want[3] = {
	    {8 * 48, 12 * 48, 4 * (3 * 48 + 48), 4 * (4 * 48 + 2 * 48)},
	    {0, 0, 4 * (48 + 8), 4 * (2 * 48 + 8)},
	    {0, 0, 4 * (8 + 2), 4 * (8 + 2)},
	};
	static const char *const texts[4] = {
	    /* the same shapes everywhere ([2][2][2] after the pooling),
	     * only the width's window and stride differ */
	    "input 4 6 2\nmax_pooling2d pool_w=2 strides_w=3\nflatten\n"
	    "dense units=3 activation=softmax\n",
	    "input 4 6 2\nmax_pooling2d pool_w=3\nflatten\ndense units=3 activation=softmax\n",
	    /* only the input's width differs */
	    "input 4 6 2\nglobal_max_pooling2d\ndense units=3 activation=softmax\n",
	    "input 4 3 2\nglobal_max_pooling2d\ndense units=3 activation=softmax\n",
	};
	char dir[] = "/tmp/xo_test_cost.XXXXXX", path[4][64], name[64], arch[4][32];
	struct xo_backend *be;
	struct xo_model *m;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	assert_int_equal(xo_model_open_string(spec, "p2d", be, 1, &m), XO_OK);
	for (int i = 0; i < 3; i++) {
		struct xo_layer_cost c;

		xo_model_layer_cost(m, i, &c);
		assert_close(c.flops_fwd, want[i].flops_fwd);
		assert_close(c.flops_bwd, want[i].flops_bwd);
		assert_close(c.act_bytes_fwd, want[i].act_fwd);
		assert_close(c.act_bytes_bwd, want[i].act_bwd);
		assert_int_equal(c.ops_train_fwd, 1);
		assert_int_equal(c.ops_predict, 1);
		assert_int_equal(c.ops_bwd, 1);
	}
	xo_model_close(m);
	xo_backend_close(be);

	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 4; i++) {
		FILE *f;

		snprintf(path[i], sizeof(path[i]), "%s/m%d.model", dir, i);
		f = fopen(path[i], "w");
		assert_non_null(f);
		fputs(texts[i], f);
		fclose(f);
		assert_int_equal(xo_perf_model_ident(path[i], name, sizeof(name), arch[i],
		                                     sizeof(arch[i])),
		                 XO_OK);
	}
	assert_string_not_equal(arch[0], arch[1]);
	assert_string_not_equal(arch[2], arch[3]);
	for (int i = 0; i < 4; i++)
		unlink(path[i]);
	rmdir(dir);
	/* the seed's, as before the width was hashed (0184940) */
	assert_int_equal(xo_perf_model_ident(NULL, name, sizeof(name), arch[0], sizeof(arch[0])),
	                 XO_OK);
	print_message("  seed arch %s\n", arch[0]);
	assert_string_equal(arch[0], "bd5c6f95b448fe39");
}

/*
 * conv2d's cost and fingerprint: out_h * out_w * w_count
 * multiply-adds per sample forward (a first layer: dW only backward), and
 * the fingerprint tells apart specs that differ only in a width geometry key
 * (dilation_w: the same shapes and kernel) while an absent kernel_w and the
 * same value written out hash alike.
 */
static void test_conv2d_cost_and_ident(void **state)
{
	/* [6][5][2] -> (3, 2) kernel, 3 filters: [4][4][3], w_count 36 */
	static const char *const spec = "input 6 5 2\nconv2d filters=3 kernel_size=3 kernel_w=2 "
	                                 "activation=tanh\nflatten\ndense units=3 "
	                                 "activation=softmax\n";
	static const char *const texts[4] = {
	    "input 7 7 1\nconv2d filters=2 kernel_size=3 padding=same dilation_w=2\nflatten\n"
	    "dense units=3 activation=softmax\n",
	    "input 7 7 1\nconv2d filters=2 kernel_size=3 padding=same\nflatten\n"
	    "dense units=3 activation=softmax\n",
	    "input 7 7 1\nconv2d filters=2 kernel_size=3 kernel_w=3 padding=same strides_w=1\n"
	    "flatten\ndense units=3 activation=softmax\n",
	    "input 7 7 1\nconv2d filters=2 kernel_size=3 padding=same strides=1 dilation_w=1\n"
	    "flatten\n"
	    "dense units=3 activation=softmax\n",
	};
	char dir[] = "/tmp/xo_test_cost.XXXXXX", path[4][64], name[64], arch[4][32];
	struct xo_backend *be;
	struct xo_model *m;
	struct xo_layer_cost c;
	const double macs = 4.0 * 4.0 * 36.0, in = 4.0 * 60, out = 4.0 * 48;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	assert_int_equal(xo_model_open_string(spec, "c2d", be, 1, &m), XO_OK);
	xo_model_layer_cost(m, 0, &c);
	assert_close(c.flops_fwd, 2 * macs);
	assert_close(c.flops_bwd, 2 * macs); /* the first layer: no dx */
	assert_close(c.w_bytes_fwd, 4.0 * (36 + 3));
	/* tanh runs as its own op: z written and read again */
	assert_close(c.act_bytes_fwd, in + out + 2 * out);
	assert_int_equal(c.ops_predict, 2);
	assert_int_equal(c.ops_bwd, 2);
	xo_model_close(m);
	xo_backend_close(be);

	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 4; i++) {
		FILE *f;

		snprintf(path[i], sizeof(path[i]), "%s/m%d.model", dir, i);
		f = fopen(path[i], "w");
		assert_non_null(f);
		fputs(texts[i], f);
		fclose(f);
		assert_int_equal(xo_perf_model_ident(path[i], name, sizeof(name), arch[i],
		                                     sizeof(arch[i])),
		                 XO_OK);
		unlink(path[i]);
	}
	rmdir(dir);
	assert_string_not_equal(arch[0], arch[1]);
	assert_string_equal(arch[1], arch[2]);
	assert_string_equal(arch[1], arch[3]);
}

static void test_cost_predict_call(void **state)
{
	struct xo_probe p = synth_probe();
	struct xo_cost_step s = synth_step(10, false, false);
	struct xo_cost_terms t;
	struct xo_split out;

	(void)state;
	s.launches = 3;
	s.h2d_bytes = 200;
	s.h2d_count = 1;
	s.d2h_bytes = 400;
	s.d2h_count = 1;
	xo_cost_predict(&p, &s, &out, &t);
	/* 10 x 1000 FLOP / 1e9 = 1e-5 s < (10 x 100 + 400) B / 1e8 = 1.4e-5 s */
	assert_close(t.flops, 10000);
	assert_close(t.bytes, 1400);
	assert_close(t.compute_s, 1.4e-5);
	assert_int_equal(t.flop_bound_layers, 0);
	/* 3 launches x 1e-5 + the two copies' latencies 1e-5 each */
	assert_close(out.part_s[XO_SPLIT_LAUNCH], 5e-5);
	assert_close(t.copy_lat_s, 2e-5);
	/* 200 / 1e9 + 400 / 1e9 */
	assert_close(out.part_s[XO_SPLIT_TRANSFER], 6e-7);
	assert_close(out.part_s[XO_SPLIT_COMPUTE], 1.4e-5);
	assert_close(out.part_s[XO_SPLIT_OTHER], 0);
	assert_close(out.wall_s, 6.46e-5);
	assert_close(out.launches, 3);
	assert_adds_up(&out);
	assert_int_equal(xo_split_dominant(&out), XO_SPLIT_LAUNCH);
}

/* The fixed cost per op call adds ops x op_call_s to compute, nothing else. */
static void test_cost_op_fixed(void **state)
{
	struct xo_probe p = synth_probe();
	struct xo_cost_step s = synth_step(10, false, false);
	struct xo_cost_terms t;
	struct xo_split base, out;

	(void)state;
	xo_cost_predict(&p, &s, &base, NULL);
	s.ops = 5;
	s.op_call_s = 2e-6;
	xo_cost_predict(&p, &s, &out, &t);
	assert_close(t.op_fixed_s, 1e-5);
	assert_close(out.part_s[XO_SPLIT_COMPUTE], base.part_s[XO_SPLIT_COMPUTE] + 1e-5);
	assert_close(out.part_s[XO_SPLIT_LAUNCH], base.part_s[XO_SPLIT_LAUNCH]);
	assert_close(out.wall_s, base.wall_s + 1e-5);
	assert_adds_up(&out);
}

/*
 * The cpu fused path's pool (cost.h) on 4 threads, the layer's 1000 FLOP
 * (500 multiply-adds) per sample at 1e9 FLOP/s, memory at 1e12 B/s (its
 * bytes then cost < 1e-8 s against FLOP times >= 1e-5 s, so every layer is
 * FLOP-bound and c = n x 1000 / 1e9 exactly), threading from 1e4
 * multiply-adds.
 */
static void test_cost_pool(void **state)
{
	struct xo_probe p = synth_probe();
	struct xo_cost_step s;
	struct xo_cost_terms t, t0;
	struct xo_split out, base;

	(void)state;
	p.units = 4;
	p.mem_bw = 1e12;
	p.handoff_s = 1e-4;
	/* 10 samples: 5000 multiply-adds < 1e4, the caller alone: the FLOP
	 * time 1e-5 s on one thread of four, 3e-5 s more */
	s = synth_step(10, false, true);
	xo_cost_predict(&p, &s, &base, &t0);
	assert_close(t0.pool_s, 0); /* pool_min_macs 0: no pool model */
	assert_int_equal(t0.pool_threads, 0);
	s.pool_min_macs = 1e4;
	xo_cost_predict(&p, &s, &out, &t);
	assert_close(t.compute_flops_s, 1e-5);
	assert_close(t.pool_macs, 5000);
	assert_int_equal(t.pool_threads, 1);
	assert_close(t.pool_s, 3e-5);
	assert_close(out.part_s[XO_SPLIT_COMPUTE], base.part_s[XO_SPLIT_COMPUTE] + 3e-5);
	assert_close(out.wall_s, base.wall_s + 3e-5);
	assert_adds_up(&out);
	/* 20 samples: 1e4 multiply-adds, threaded; alone they take 8e-5 s,
	 * before the workers join at 1e-4 s: the caller still does it all */
	s.batch = 20;
	xo_cost_predict(&p, &s, &out, &t);
	assert_int_equal(t.pool_threads, 4);
	assert_close(t.pool_s, 3 * 2e-5);
	/* 100 samples: c = 1e-4 s, alone 4e-4 s > 1e-4 s: one thread until the
	 * workers join, all four after: 1e-4 x (1 - 1/4) more */
	s.batch = 100;
	xo_cost_predict(&p, &s, &out, &t);
	assert_close(t.pool_s, 7.5e-5);
	/* workers that spin (hand-off 0) or a hand-off not probed: no delay */
	p.handoff_s = NAN;
	xo_cost_predict(&p, &s, &out, &t);
	assert_close(t.pool_s, 0);
	/* training counts 3x the forward's multiply-adds: 8 samples x 500 x 3
	 * = 12000 >= 1e4, threaded (c = 8 x 3000 / 1e9 = 2.4e-5 s, alone 9.6e-5
	 * s > the 1e-5 s hand-off: 7.5e-6 s more), where the forward's 4000
	 * alone would be the caller's (7.2e-5 s more) */
	p.handoff_s = 1e-5;
	s = synth_step(8, true, true);
	s.pool_min_macs = 1e4;
	xo_cost_predict(&p, &s, &out, &t);
	assert_close(t.pool_macs, 12000);
	assert_int_equal(t.pool_threads, 4);
	assert_close(t.pool_s, 7.5e-6);
	/* one thread in the pool: nothing to add */
	p.units = 1;
	xo_cost_predict(&p, &s, &out, &t);
	assert_close(t.pool_s, 0);
}

static void test_cost_train_step(void **state)
{
	struct xo_probe p = synth_probe();
	struct xo_cost_step s = synth_step(100, true, false);
	struct xo_cost_terms t;
	struct xo_split out;

	(void)state;
	s.launches = 2;
	xo_cost_predict(&p, &s, &out, &t);
	/* layer: 100 x 3000 FLOP -> 3e-4 s vs 100 x 300 + 1200 B -> 3.12e-4 s;
	 * loss, accuracy, loss gradient: 100 x 7 x 40 B -> 2.8e-4 s;
	 * Adam: 7 x 4 x 100 B -> 2.8e-5 s */
	assert_close(t.flops, 3e5);
	assert_close(t.bytes, 31200 + 28000 + 2800);
	assert_close(out.part_s[XO_SPLIT_COMPUTE], 3.12e-4 + 2.8e-4 + 2.8e-5);
	assert_close(out.part_s[XO_SPLIT_LAUNCH], 2e-5);
	assert_close(out.part_s[XO_SPLIT_TRANSFER], 0);
	assert_adds_up(&out);
	assert_int_equal(xo_split_dominant(&out), XO_SPLIT_COMPUTE);

	/* fused: activations stay on chip; weights 1200 B -> 1.2e-5 s < the
	 * FLOPs' 3e-4 s, plus the input and probabilities 100 x (20 + 40) B */
	s.fused = true;
	xo_cost_predict(&p, &s, &out, &t);
	assert_close(out.part_s[XO_SPLIT_COMPUTE], 3e-4 + 6e-5 + 2.8e-4 + 2.8e-5);
	assert_int_equal(t.flop_bound_layers, 1);

	/* the backend's own traffic: 1e4 B at 1e8 B/s on top */
	s.extra_bytes = 1e4;
	xo_cost_predict(&p, &s, &out, &t);
	assert_close(out.part_s[XO_SPLIT_COMPUTE], 3e-4 + 6e-5 + 2.8e-4 + 2.8e-5 + 1e-4);

	/* a host device: no transfer figures, so copies cost nothing */
	p.h2d_bw = p.d2h_bw = p.h2d_lat_s = p.d2h_lat_s = NAN;
	s = synth_step(10, false, false);
	s.h2d_bytes = 1e6;
	s.h2d_count = 1;
	xo_cost_predict(&p, &s, &out, NULL);
	assert_close(out.part_s[XO_SPLIT_TRANSFER], 0);

	/* predict skips an op the layer does not run at inference (dropout) */
	{
		struct xo_layer_cost drop = {
		    .act_bytes_fwd = 512, .act_bytes_bwd = 512, .ops_train_fwd = 1, .ops_bwd = 1};

		s = synth_step(10, false, false);
		s.layers = &drop;
		p = synth_probe();
		xo_cost_predict(&p, &s, &out, &t);
		assert_close(t.bytes, 0);
		s.training = true;
		xo_cost_predict(&p, &s, &out, &t);
		assert_close(t.bytes, 10 * 1024 + 10 * 7 * 40 + 7 * 4 * 100);
	}
}

static void test_split_from_events(void **state)
{
	struct xo_split s;

	(void)state;
	/* wall 100: kernels 20, enqueue 30, wait 60 -> idle 80, host work
	 * outside enqueue and wait 100 - 90 = 10, launch/sync the rest 70 */
	xo_split_from_events(100, 30, 0, 20, 0, 60, 2, &s);
	assert_close(s.part_s[XO_SPLIT_COMPUTE], 20);
	assert_close(s.part_s[XO_SPLIT_OTHER], 10);
	assert_close(s.part_s[XO_SPLIT_LAUNCH], 70);
	assert_close(s.part_s[XO_SPLIT_TRANSFER], 0);
	assert_close(s.wall_s, 100);
	assert_adds_up(&s);
	/* host work outside enqueue/wait is capped at the device's idle time */
	xo_split_from_events(100, 10, 5, 50, 5, 20, 1, &s);
	assert_close(s.part_s[XO_SPLIT_COMPUTE], 50);
	assert_close(s.part_s[XO_SPLIT_TRANSFER], 10);
	assert_close(s.part_s[XO_SPLIT_OTHER], 40);
	assert_close(s.part_s[XO_SPLIT_LAUNCH], 0);
	assert_adds_up(&s);
	/* clock skew: device time 200 > wall 100 is scaled down, 3:1 kept */
	xo_split_from_events(100, 0, 50, 150, 0, 0, 1, &s);
	assert_close(s.part_s[XO_SPLIT_COMPUTE], 75);
	assert_close(s.part_s[XO_SPLIT_TRANSFER], 25);
	assert_close(s.part_s[XO_SPLIT_LAUNCH], 0);
	assert_close(s.part_s[XO_SPLIT_OTHER], 0);
	assert_adds_up(&s);
	/* junk (NaN, negative) counts as 0, never as a negative part */
	xo_split_from_events(100, NAN, -5, NAN, -1, INFINITY, -3, &s);
	assert_close(s.wall_s, 100);
	assert_close(s.launches, 0);
	assert_adds_up(&s);
	xo_split_host(42, &s);
	assert_close(s.part_s[XO_SPLIT_COMPUTE], 42);
	assert_close(s.wall_s, 42);
}

static struct xo_split split_of(double launch, double transfer, double compute, double other,
                                double launches)
{
	struct xo_split s = {.part_s = {launch, transfer, compute, other},
	                     .wall_s = launch + transfer + compute + other,
	                     .launches = launches};

	return s;
}

static void test_diagnosis_rules(void **state)
{
	char buf[256];
	struct xo_split s;

	(void)state;
	s = split_of(80e-6, 0, 20e-6, 0, 2);
	assert_string_equal(xo_split_diagnose(&s, "cl", "train step", 32, buf, sizeof(buf)),
	                    "at batch 32 the cl train step is 80% launch and sync latency: 2 "
	                    "launches x 40 us");
	s = split_of(60e-6, 0, 40e-6, 0, 1); /* one launch: singular */
	assert_string_equal(xo_split_diagnose(&s, "cl", "predict call", 1, buf, sizeof(buf)),
	                    "at batch 1 the cl predict call is 60% launch and sync latency: 1 "
	                    "launch x 60 us");
	s = split_of(70, 0, 30, 0, 0);
	assert_string_equal(xo_split_diagnose(&s, "cl", "train step", 1, buf, sizeof(buf)),
	                    "at batch 1 the cl train step is 70% launch and sync latency");
	s = split_of(10, 55, 30, 5, 1);
	assert_string_equal(xo_split_diagnose(&s, "cl", "predict call", 4096, buf, sizeof(buf)),
	                    "at batch 4096 the cl predict call is transfer-bound (55% in "
	                    "host-device copies)");
	s = split_of(9, 0, 81, 10, 2);
	assert_string_equal(xo_split_diagnose(&s, "cl", "train step", 4096, buf, sizeof(buf)),
	                    "at batch 4096 the cl train step is compute-bound (81% in kernels)");
	s = split_of(20, 0, 20, 60, 2);
	assert_string_equal(xo_split_diagnose(&s, "cpu", "train step", 8, buf, sizeof(buf)),
	                    "at batch 8 the cpu train step is 60% host work outside the device");
	/* ties go to the first part in enum order */
	s = split_of(50, 0, 50, 0, 2);
	assert_int_equal(xo_split_dominant(&s), XO_SPLIT_LAUNCH);
	/* a short buffer is cut, never overrun */
	memset(buf, 'x', sizeof(buf));
	xo_split_diagnose(&s, "cl", "train step", 8, buf, 10);
	assert_int_equal(strlen(buf), 9);
}

static void test_crossover(void **state)
{
	static const double x[] = {1, 2, 4, 8};
	static const double a[] = {1, 1, 1, 1};
	static const double b[] = {4, 2, 0.5, 0.25};
	static const double fast[] = {0.5, 0.5, 0.5, 0.5};
	static const double slow[] = {3, 3, 3, 3};
	static const double touch[] = {2, 1, 1, 0.5};
	double batch = 0;

	(void)state;
	/* log(b/a) = log 2 at 2, -log 2 at 4: zero half way in log2(batch),
	 * 2^1.5 */
	assert_int_equal(xo_cost_crossover(x, a, b, 4, &batch), XO_CROSS_AT);
	assert_close(batch, pow(2, 1.5));
	assert_int_equal(xo_cost_crossover(x, a, fast, 4, &batch), XO_CROSS_BELOW);
	assert_close(batch, 1);
	assert_int_equal(xo_cost_crossover(x, a, slow, 4, &batch), XO_CROSS_NONE);
	/* equal is not faster: the crossing is between 4 and 8, where log(b/a)
	 * goes 0 -> -log 2, so it lands at 4 */
	assert_int_equal(xo_cost_crossover(x, a, touch, 4, &batch), XO_CROSS_AT);
	assert_close(batch, 4);
	/* equal at the first batch is not faster there either: b ties a at 1,
	 * then is faster from 2 on, so the crossing lands at 1 as a crossing
	 * (XO_CROSS_AT), not as "faster from the smallest batch" */
	{
		static const double tie[] = {1, 0.5, 0.5, 0.5};

		assert_int_equal(xo_cost_crossover(x, a, tie, 4, &batch), XO_CROSS_AT);
		assert_close(batch, 1);
	}
	assert_int_equal(xo_cost_crossover(x, a, b, 0, &batch), XO_CROSS_NONE);
}

/* The interval from the spread: a = 1 +- 10%, b halves per octave from 4
 * with +-10%: b's fast end (0.9 b) meets a's slow end (1.1) first, b's slow
 * end (1.1 b) meets a's fast end (0.9) last; all at known batches since
 * log(b/a) is linear in log2(batch) here: b/a = 4 / 2^j x c, zero at
 * j = 2 + log2(c). */
static void test_crossover_interval(void **state)
{
	double x[6], a[6], alo[6], ahi[6], b[6], blo[6], bhi[6], m, lo, hi;

	(void)state;
	for (int j = 0; j < 6; j++) {
		x[j] = exp2(j);
		a[j] = 1;
		alo[j] = 0.9;
		ahi[j] = 1.1;
		b[j] = 4 / exp2(j);
		blo[j] = 0.9 * b[j];
		bhi[j] = 1.1 * b[j];
	}
	assert_int_equal(
	    xo_explain_crossover_interval(x, alo, a, ahi, blo, b, bhi, 6, &m, &lo, &hi),
	    XO_CROSS_AT);
	/* b / a = 1 at batch 4 (j = 2) */
	assert_true(fabs(m - 4) < 1e-9);
	/* 0.9 b = 1.1 at 2^j = 4 x 0.9 / 1.1; 1.1 b = 0.9 at 4 x 1.1 / 0.9 */
	assert_true(fabs(lo - 4 * 0.9 / 1.1) < 1e-9);
	assert_true(fabs(hi - 4 * 1.1 / 0.9) < 1e-9);
	assert_true(lo < m && m < hi);
	/* b never faster at its fast end either: no crossing and no interval */
	for (int j = 0; j < 6; j++)
		b[j] = blo[j] = bhi[j] = 2;
	assert_int_equal(
	    xo_explain_crossover_interval(x, alo, a, ahi, blo, b, bhi, 6, &m, &lo, &hi),
	    XO_CROSS_NONE);
	assert_true(isnan(m) && isnan(lo) && isnan(hi));
}

/* Device a: 1 GFLOP/s, no launch cost; device b: 2 launches x 1 ms, 1
 * TFLOP/s. A predict of 1e4 FLOP per sample takes 1e-5 n on a and 2e-3 +
 * 1e-8 n on b: they cross at n = 2e-3 / (1e-5 - 1e-8) = 200.2. */
static void test_what_if(void **state)
{
	struct xo_layer_cost lc = {.flops_fwd = 1e4, .ops_predict = 1};
	struct xo_probe pa = {.launch_s = 0,
	                      .flops = 1e9,
	                      .mem_bw = NAN,
	                      .h2d_bw = NAN,
	                      .d2h_bw = NAN,
	                      .h2d_lat_s = NAN,
	                      .d2h_lat_s = NAN};
	struct xo_probe pb = pa;
	struct xo_cost_step sa[14], sb[14];
	double batch = 0, d0, d1, f, want;

	(void)state;
	pb.launch_s = 1e-3;
	pb.flops = 1e12;
	for (int i = 0; i < 14; i++) {
		sa[i] = (struct xo_cost_step){.layers = &lc,
		                              .nlayers = 1,
		                              .batch = (int64_t)1 << i,
		                              .classes = 1,
		                              .in_size = 1};
		sb[i] = sa[i];
		sa[i].launches = 1;
		sb[i].launches = 2;
	}
	assert_int_equal(xo_explain_what_if(&pa, &pb, sa, sb, 14, &batch), XO_CROSS_AT);
	/* interpolated between the samples at 128 and 256 in log-log space */
	d0 = log((2e-3 + 1.28e-6) / 1.28e-3);
	d1 = log((2e-3 + 2.56e-6) / 2.56e-3);
	f = d0 / (d0 - d1);
	want = pow(2, 7 + f);
	assert_close(batch, want);
	/* and within 1% of the true crossing: the curves are nearly straight
	 * in log-log space over one octave */
	assert_true(fabs(batch - 2e-3 / (1e-5 - 1e-8)) < 0.01 * 200.2);
	/* 5 us launches: b = 1e-5 + 1e-8 n crosses a = 1e-5 n between 1 and 2 */
	pb.launch_s = 5e-6;
	assert_int_equal(xo_explain_what_if(&pa, &pb, sa, sb, 14, &batch), XO_CROSS_AT);
	assert_true(batch > 1 && batch < 2);
	/* 1 s launches: never within 1..8192 */
	pb.launch_s = 1;
	assert_int_equal(xo_explain_what_if(&pa, &pb, sa, sb, 14, &batch), XO_CROSS_NONE);
}

/* The GEMM probe's marginal rate (perfdb/explain.c): a call's fixed part is
 * taken off; a kernel part under the fixed part is "grow the call" (NAN). The
 * H200 case that made this: 4.19 MFLOP in 25.4 us of which 19 us fixed is
 * too close to the launch; 8x the rows in 60 us is 33.5 MFLOP in 41 us. */
static void test_marginal_rate(void **state)
{
	(void)state;
	assert_true(isnan(xo_explain_marginal_rate(4.19e6, 25.4e-6, 19e-6)));
	assert_true(fabs(xo_explain_marginal_rate(33.5e6, 60e-6, 19e-6) - 33.5e6 / 41e-6) < 1);
	/* a host backend: 0.3 us fixed in a 22 us call changes the rate by 1.4% */
	assert_true(fabs(xo_explain_marginal_rate(4.19e6, 22e-6, 0.3e-6) - 4.19e6 / 21.7e-6) < 1);
	/* the kernel's part under the fixed part: too close to call, grow */
	assert_true(isnan(xo_explain_marginal_rate(4.19e6, 35e-6, 19e-6)));
	/* exactly equal parts are measurable */
	assert_true(fabs(xo_explain_marginal_rate(1e6, 2e-6, 1e-6) - 1e12) < 1);
	/* no fixed time measured: the whole call */
	assert_true(fabs(xo_explain_marginal_rate(1e6, 1e-3, NAN) - 1e9) < 1e-3);
	assert_true(isnan(xo_explain_marginal_rate(1e6, NAN, 1e-6)));
	assert_true(isnan(xo_explain_marginal_rate(1e6, 0, 1e-6)));
}

/* The lstm zoo workload's shape: LSTM(64) over 50 steps of 16 features. By
 * hand: G = 4 x 64 = 256 gate columns; kernel 16 x 256 = 4096, recurrent
 * kernel 64 x 256 = 16384 multiply-adds per step and sample; 50 steps:
 * 1 024 000 MACs = 2 048 000 FLOPs forward; backward dW and dU (2 products)
 * and no dx (the first layer): 4 096 000. One step back through time is dh'
 * = dz U^T: 16384 MACs. */
static const char lstm_spec[] = "input 50 16\nlstm units=64\ndense units=12 activation=softmax\n";

/* A GPU-like synthetic device: 10 us per serial step, 5 us
 * launches, 10 TFLOP/s and 1 TB/s, so no FLOP or byte time comes near a
 * step's latency. */
static struct xo_probe gpu_like(void)
{
	return (struct xo_probe){.launch_s = 5e-6,
	                         .flops = 1e13,
	                         .mem_bw = 1e12,
	                         .h2d_lat_s = NAN,
	                         .h2d_bw = NAN,
	                         .d2h_lat_s = NAN,
	                         .d2h_bw = NAN,
	                         .handoff_s = NAN,
	                         .units = 132,
	                         .step_s = 10e-6,
	                         .lane_mac_s = NAN};
}

static void test_serial_steps(void **state)
{
	struct xo_backend *be;
	struct xo_model *m;
	struct xo_layer_cost lc[2];
	struct xo_cost_step st;
	struct xo_cost_terms t;
	struct xo_split sp;
	struct xo_probe p = gpu_like();
	char buf[256], want[256];
	double wall;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	assert_int_equal(xo_model_open_string(lstm_spec, "lstm", be, 64, &m), XO_OK);
	for (int i = 0; i < 2; i++)
		xo_model_layer_cost(m, i, &lc[i]);
	assert_string_equal(lc[0].recurrent, "LSTM");
	assert_int_equal(lc[0].units, 64);
	assert_int_equal(lc[0].steps, 50);
	assert_close(lc[0].step_macs_fwd, 4096 + 16384);
	assert_close(lc[0].step_macs_bwd, 16384);
	assert_close(lc[0].flops_fwd, 2048000);
	assert_close(lc[0].flops_bwd, 4096000);
	/* x [50][16] in, h [64] out; the training form's workspace apart:
	 * 50 steps x 7 blocks x 64 units (ops.def), which predict's inference
	 * form never writes */
	assert_close(lc[0].act_bytes_fwd, 4 * (50 * 16 + 64));
	assert_close(lc[0].ws_bytes, 4 * 50 * 7 * 64);
	assert_null(lc[1].recurrent);
	assert_close(lc[1].ws_bytes, 0);
	assert_int_equal(lc[1].steps, 0);

	/* cl training step at batch 32, 11 launches: the LSTM's FLOP time is
	 * 32 x 6.144e6 / 1e13 = 19.7 us, its 2 x 50 steps x 10 us = 1 ms */
	xo_explain_cost_step(m, lc, true, true, 32, 11, false, 0, &st);
	assert_close(st.rnn_lanes, 1);
	xo_cost_predict(&p, &st, &sp, &t);
	assert_close(t.serial_s, 2 * 50 * 10e-6);
	assert_close(t.serial_steps, 100);
	assert_close(sp.serial_s, 1e-3);
	assert_close(sp.serial_passes, 2);
	assert_close(sp.serial_steps, 50);
	assert_close(sp.serial_step_s, 10e-6);
	assert_string_equal(sp.serial_layer, "LSTM(64)");
	assert_int_equal(sp.serial_more, 0);
	/* the layer costs its serial time, not its roofline */
	assert_true(t.compute_s >= 1e-3 && t.compute_s < 1e-3 + 1e-5);
	wall = sp.wall_s;
	assert_close(wall, 11 * 5e-6 + t.compute_s);
	assert_true(xo_split_serial_dominates(&sp));
	snprintf(want, sizeof(want),
	         "at batch 32 the cl train step is %.0f%% serial time steps: 2 x 50 steps x 10 us "
	         "(LSTM(64))",
	         100 * 1e-3 / wall);
	assert_string_equal(xo_split_diagnose(&sp, "cl", "train step", 32, buf, sizeof(buf)), want);
	assert_true(1e-3 / wall > 0.9);

	/* a predict call: one pass forward, 50 x 10 us */
	xo_explain_cost_step(m, lc, true, false, 32, 2, false, 0, &st);
	xo_cost_predict(&p, &st, &sp, &t);
	assert_close(t.serial_s, 50 * 10e-6);
	assert_close(t.serial_steps, 50);
	xo_split_diagnose(&sp, "cl", "predict call", 32, buf, sizeof(buf));
	assert_non_null(strstr(buf, "serial time steps: 50 steps x 10 us (LSTM(64))"));
	/* the workspace's bytes count in a training step (32 samples' worth),
	 * never in a predict call */
	{
		struct xo_layer_cost nows[2] = {lc[0], lc[1]};
		struct xo_cost_terms t0;
		double pb = t.bytes;

		nows[0].ws_bytes = 0;
		xo_explain_cost_step(m, nows, true, false, 32, 2, false, 0, &st);
		xo_cost_predict(&p, &st, &sp, &t0);
		assert_close(t0.bytes, pb);
		xo_explain_cost_step(m, lc, true, true, 32, 11, false, 0, &st);
		xo_cost_predict(&p, &st, &sp, &t);
		xo_explain_cost_step(m, nows, true, true, 32, 11, false, 0, &st);
		xo_cost_predict(&p, &st, &sp, &t0);
		assert_close(t.bytes - t0.bytes, 32 * lc[0].ws_bytes);
	}

	/* one work-item runs a sample's step (rnn.cl): its chain of 20480
	 * multiply-adds forward and 16384 back at 1 ns each adds to the step */
	p.lane_mac_s = 1e-9;
	xo_explain_cost_step(m, lc, true, true, 32, 11, false, 0, &st);
	xo_cost_predict(&p, &st, &sp, &t);
	assert_close(t.serial_s, 50 * (10e-6 + 20480e-9) + 50 * (10e-6 + 16384e-9));
	assert_close(sp.serial_step_s, t.serial_s / 100);
	/* the cpu's step is the probe's alone (rnn_lanes 0) */
	xo_explain_cost_step(m, lc, false, true, 32, 0, false, 0, &st);
	assert_close(st.rnn_lanes, 0);
	xo_cost_predict(&p, &st, &sp, &t);
	assert_close(t.serial_s, 1e-3);
	p.lane_mac_s = NAN;

	/* at 1 GFLOP/s the FLOPs take 197 ms: the roofline wins, no serial
	 * time, the sentence is compute-bound */
	p.flops = 1e9;
	xo_explain_cost_step(m, lc, true, true, 32, 11, false, 0, &st);
	xo_cost_predict(&p, &st, &sp, &t);
	assert_close(t.serial_s, 0);
	assert_close(t.serial_steps, 100);
	assert_false(xo_split_serial_dominates(&sp));
	xo_split_diagnose(&sp, "cl", "train step", 32, buf, sizeof(buf));
	assert_non_null(strstr(buf, "compute-bound"));
	p.flops = 1e13;
	xo_model_close(m);

	/* the seed model (no recurrent layer) on the same device: no serial
	 * term at all, and the sentence does not name one */
	assert_int_equal(xo_model_open_string(xo_model_seed_spec, "seed", be, 64, &m), XO_OK);
	{
		struct xo_layer_cost sl[8];

		for (int i = 0; i < 8; i++)
			xo_model_layer_cost(m, i, &sl[i]);
		xo_explain_cost_step(m, sl, true, true, 32, 2, true, 0, &st);
		xo_cost_predict(&p, &st, &sp, &t);
		assert_close(t.serial_s, 0);
		assert_close(t.serial_steps, 0);
		assert_close(sp.serial_s, 0);
		xo_split_diagnose(&sp, "cl", "train step", 32, buf, sizeof(buf));
		assert_null(strstr(buf, "serial"));
		assert_non_null(strstr(buf, "launch and sync latency"));
	}
	xo_model_close(m);
	xo_backend_close(be);
}

/* The measured side: a recurrent layer's profiled kernel time is named
 * serial steps when its time per step is nearer the predicted step than the
 * roofline's per-step time (in log ratio), else left as compute. */
static void test_serial_measured(void **state)
{
	struct xo_backend *be;
	struct xo_model *m;
	struct xo_layer_cost lc[2];
	struct xo_cost_step st;
	struct xo_split ms;
	struct xo_probe p = gpu_like();
	char buf[256], want[256];
	double near[2] = {1.05e-3, 1e-5}, far[2] = {25e-6, 1e-5};

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	assert_int_equal(xo_model_open_string(lstm_spec, "lstm", be, 64, &m), XO_OK);
	for (int i = 0; i < 2; i++)
		xo_model_layer_cost(m, i, &lc[i]);
	xo_explain_cost_step(m, lc, true, true, 32, 11, false, 0, &st);
	/* 1.2 ms measured, 1.1 ms of it in kernels; the LSTM 1.05 ms = 10.5 us
	 * per step (the probe's 10 us, not the roofline's 0.197 us) */
	xo_split_from_events(1.2e-3, 0.05e-3, 0, 1.1e-3, 0, 1e-3, 11, &ms);
	assert_int_equal(xo_cost_serial_measured(&p, &st, near, &ms), 1);
	assert_close(ms.serial_s, 1.05e-3);
	assert_close(ms.serial_step_s, 10.5e-6);
	snprintf(want, sizeof(want),
	         "at batch 32 the cl train step is %.0f%% serial time steps: 2 x 50 steps x 10.5 us "
	         "(LSTM(64))",
	         100 * 1.05e-3 / ms.wall_s);
	assert_string_equal(xo_split_diagnose(&ms, "cl", "train step", 32, buf, sizeof(buf)), want);
	/* 25 us over 100 steps = 0.25 us per step: the roofline's order */
	xo_split_from_events(1.2e-3, 0.05e-3, 0, 1.1e-3, 0, 1e-3, 11, &ms);
	assert_int_equal(xo_cost_serial_measured(&p, &st, far, &ms), 0);
	assert_close(ms.serial_s, 0);
	xo_split_diagnose(&ms, "cl", "train step", 32, buf, sizeof(buf));
	assert_non_null(strstr(buf, "compute-bound"));
	/* the attribution never exceeds the measured compute part */
	near[0] = 5e-3;
	p.step_s = 50e-6;
	xo_split_from_events(1.2e-3, 0.05e-3, 0, 1.1e-3, 0, 1e-3, 11, &ms);
	assert_int_equal(xo_cost_serial_measured(&p, &st, near, &ms), 1);
	assert_close(ms.serial_s, ms.part_s[XO_SPLIT_COMPUTE]);
	xo_model_close(m);
	xo_backend_close(be);
}

/* The sentence names serial steps only when they are at least the rest of
 * compute and at least every other part. */
static void test_serial_rule(void **state)
{
	struct xo_split s = split_of(0.40, 0, 0.60, 0, 2);
	char buf[256];

	(void)state;
	snprintf(s.serial_layer, sizeof(s.serial_layer), "GRU(8)");
	s.serial_passes = 1;
	s.serial_steps = 12;
	s.serial_step_s = 0.35 / 12;
	s.serial_s = 0.35; /* > the rest of compute (0.25), < launch (0.40) */
	assert_false(xo_split_serial_dominates(&s));
	assert_non_null(strstr(xo_split_diagnose(&s, "cl", "predict call", 4, buf, sizeof(buf)),
	                       "compute-bound"));
	s = split_of(0.20, 0, 0.80, 0, 2);
	snprintf(s.serial_layer, sizeof(s.serial_layer), "GRU(8)");
	s.serial_passes = 1;
	s.serial_steps = 12;
	s.serial_s = 0.35; /* < the rest of compute (0.45) */
	assert_false(xo_split_serial_dominates(&s));
	s.serial_s = 0.45; /* >= the rest (0.35) and >= launch */
	s.serial_step_s = 0.45 / 12;
	s.serial_more = 1;
	assert_true(xo_split_serial_dominates(&s));
	assert_string_equal(xo_split_diagnose(&s, "cl", "predict call", 4, buf, sizeof(buf)),
	                    "at batch 4 the cl predict call is 45% serial time steps: 12 steps x "
	                    "37.5 ms (GRU(8), and 1 more recurrent layer)");
}

/* A graph's merge layer and fan-out, and its fingerprint: the Add reads both inputs and writes
 * its output (one flop an element), back reads both and dy and writes both
 * gradients; the later gradient term of a tensor feeding two layers (c1:
 * the Add's, met first in backward order, then c2's) is one more op at
 * c2's backward, reading two of c1's outputs and writing one. */
static void test_graph_cost(void **state)
{
	static const char *const texts[2] = {
	    "input 5 2\nconv1d name=c1 filters=3 kernel_size=2 padding=same\n"
	    "conv1d name=c2 filters=3 kernel_size=2 padding=same\nadd inputs=c2,c1\nflatten\n"
	    "dense units=3 activation=softmax\n",
	    "input 5 2\nconv1d filters=3 kernel_size=2 padding=same\n"
	    "conv1d filters=3 kernel_size=2 padding=same\nflatten\n"
	    "dense units=3 activation=softmax\n"};
	struct xo_backend *be;
	struct xo_model *g, *q;
	struct xo_layer_cost cg, cq, ca;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	assert_int_equal(xo_model_open_string(texts[0], "graph", be, 1, &g), XO_OK);
	assert_int_equal(xo_model_open_string(texts[1], "chain", be, 1, &q), XO_OK);
	xo_model_layer_cost(g, 1, &cg);
	xo_model_layer_cost(q, 1, &cq);
	assert_int_equal(cg.ops_bwd, cq.ops_bwd + 1);
	assert_close(cg.act_bytes_bwd, cq.act_bytes_bwd + 4 * 3 * 15);
	assert_close(cg.flops_bwd, cq.flops_bwd);
	xo_model_layer_cost(g, 2, &ca);
	assert_close(ca.flops_fwd, 15);
	assert_close(ca.act_bytes_fwd, 4 * 45);
	assert_close(ca.act_bytes_bwd, 4 * (2 * 30 + 15));
	assert_int_equal(ca.ops_train_fwd, 1);
	assert_int_equal(ca.ops_predict, 1);
	assert_int_equal(ca.ops_bwd, 1);
	xo_model_close(g);
	xo_model_close(q);
	xo_backend_close(be);
	/* the fingerprint hashes the wiring: these differ only in the Add's
	 * second input (c1's output or the input, both [5][3]) */
	{
		static const char *const wired[2] = {
		    "input 5 3\nconv1d name=c1 filters=3 kernel_size=2 padding=same\n"
		    "conv1d name=c2 filters=3 kernel_size=2 padding=same\nadd inputs=c2,c1\n"
		    "flatten\ndense units=3 activation=softmax\n",
		    "input 5 3\nconv1d name=c1 filters=3 kernel_size=2 padding=same\n"
		    "conv1d name=c2 filters=3 kernel_size=2 padding=same\nadd inputs=c2,input\n"
		    "flatten\ndense units=3 activation=softmax\n"};
		char dir[] = "/tmp/xo_test_cost.XXXXXX", path[2][64], name[64], arch[2][32];

		assert_non_null(mkdtemp(dir));
		for (int i = 0; i < 2; i++) {
			FILE *f;

			snprintf(path[i], sizeof(path[i]), "%s/g%d.model", dir, i);
			f = fopen(path[i], "w");
			assert_non_null(f);
			fputs(wired[i], f);
			fclose(f);
			assert_int_equal(xo_perf_model_ident(path[i], name, sizeof(name), arch[i],
			                                     sizeof(arch[i])),
			                 XO_OK);
		}
		assert_string_not_equal(arch[0], arch[1]);
		for (int i = 0; i < 2; i++)
			unlink(path[i]);
		rmdir(dir);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_seed_layer_costs),   cmocka_unit_test(test_cost_predict_call),
	    cmocka_unit_test(test_cost_op_fixed),      cmocka_unit_test(test_cost_pool),
	    cmocka_unit_test(test_cost_train_step),    cmocka_unit_test(test_split_from_events),
	    cmocka_unit_test(test_diagnosis_rules),    cmocka_unit_test(test_crossover),
	    cmocka_unit_test(test_crossover_interval), cmocka_unit_test(test_what_if),
	    cmocka_unit_test(test_pool2d_cost_and_ident),
	    cmocka_unit_test(test_layer_normalization_cost),
	    cmocka_unit_test(test_conv2d_cost_and_ident),
	    cmocka_unit_test(test_marginal_rate),
	    cmocka_unit_test(test_serial_steps),
	    cmocka_unit_test(test_serial_measured),
	    cmocka_unit_test(test_serial_rule),
	    cmocka_unit_test(test_dense_rank3_cost_and_ident),
	    cmocka_unit_test(test_graph_cost),
	    cmocka_unit_test(test_multi_input_ident),
	    cmocka_unit_test(test_time_distributed_cost_and_ident),
	    cmocka_unit_test(test_conv_transpose_cost),
	    cmocka_unit_test(test_attention_mask_ident),
	    cmocka_unit_test(test_rnn_mask_cost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
