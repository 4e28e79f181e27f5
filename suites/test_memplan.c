/*
 * test_memplan.c - the model's memory plan (model/memplan.c): layer buffers
 * whose lifetimes do not overlap share storage, and nothing a user sees
 * changes. On every backend, op by op, each net is run twice from the same
 * weights, once with the shared plan and once with XO_MODEL_SHARE=0 (a
 * buffer per tensor): the predictions, the two-epoch training (its epoch
 * logs, validation included, the weights and the last gradients) and the
 * predictions after it must be the same bits. A buffer given to another
 * tensor while still live changes them (see the deep chain's note).
 *
 * The planned sizes: a deep Dense chain's inference holds two activation
 * slots, whatever its depth; the bound (XO_MODEL_MEMORY_MAX, set for this
 * whole run before the first model opens) is on the planned bytes, so a
 * model that fits only with sharing opens, and its training layout, larger,
 * is refused by the first training step with the model left as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_internal.h"
#include "test_backends.h"
#include "xo.h"

/* The limit of this run (main sets it): above the planned inference of
 * the wide chain below at its batch, below its unshared one. */
#define MEMORY_MAX (8 << 20)

static const char *const nets[] = {
    /* a Sequential chain: dropout (the training plan's own output,
     * inference's view of its input), a flatten view, a separate
     * activation (z and its gradient) */
    "input 6 3\n"
    "conv1d filters=4 kernel_size=3 padding=same activation=relu\n"
    "dropout rate=0.25\n"
    "conv1d filters=5 kernel_size=2 activation=gelu\n"
    "max_pooling1d pool_size=2\n"
    "flatten\n"
    "dense units=6 activation=tanh\n"
    "dense units=3 activation=softmax\n",
    /* a residual CNN: the input and a conv's output each feed two layers
     * (fan-out sums) */
    "input 6 3\n"
    "conv1d name=c1 filters=3 kernel_size=2 padding=same activation=tanh\n"
    "conv1d name=c2 filters=3 kernel_size=3 padding=same\n"
    "add name=res inputs=c2,input\n"
    "activation activation=relu\n"
    "add name=res2 inputs=activation,c1\n"
    "batch_normalization\n"
    "global_average_pooling1d\n"
    "dense units=3 activation=softmax\n",
    /* several inputs (views of the batch rows), joined */
    "input name=img 4 3 2\n"
    "input name=row 1 3 2\n"
    "input name=vec 5\n"
    "conv2d name=c inputs=img filters=2 kernel_size=3 padding=same activation=tanh\n"
    "dense name=r inputs=row units=2 activation=relu\n"
    "concatenate name=j inputs=c,r axis=1\n"
    "flatten name=f\n"
    "dense name=v inputs=vec units=3 activation=tanh\n"
    "concatenate name=k inputs=f,v\n"
    "dense units=3 activation=softmax\n",
    /* a transformer block: attention, residual Add, LayerNormalization */
    "input 6 4\n"
    "dense name=emb units=8\n"
    "multi_head_attention name=mha inputs=emb,emb num_heads=2 key_dim=4\n"
    "add name=res inputs=emb,mha\n"
    "layer_normalization name=ln\n"
    "dense name=ff units=8 activation=relu\n"
    "add name=res2 inputs=ln,ff\n"
    "global_average_pooling1d\n"
    "dense units=3 activation=softmax\n",
    /* Bidirectional recurrent layers (their z, gz and workspaces) */
    "input 6 3\n"
    "bidirectional layer=lstm units=3 return_sequences=True\n"
    "bidirectional layer=gru units=2 merge_mode=ave\n"
    "dense units=3 activation=softmax\n",
    /* a tensor seen by two views, each feeding a Dense (a view's own
     * gradient buffer) and an Add of one tensor with itself (the twin) */
    "input 5 2\n"
    "conv1d name=c1 filters=3 kernel_size=2 padding=same activation=tanh\n"
    "flatten name=f1\n"
    "flatten name=f2 inputs=c1\n"
    "dense name=d1 inputs=f1 units=4 activation=tanh\n"
    "dense name=d2 inputs=f2 units=4 activation=tanh\n"
    "add inputs=d1,d2\n"
    "add name=twice inputs=add,add\n"
    "dense units=3 activation=softmax\n",
};
static const char *const net_names[] = {"sequential", "residual cnn", "multi-input",
                                        "transformer block", "bidirectional", "views"};

#define N 24     /* samples: 18 to train in steps of 4 (the last one 2), 6 to validate */
#define BATCH 4

struct run {
	float *pred0, *pred1, *w, *g;
	double logs[2][4];
	int nlogs;
};

static void on_epoch(void *user, const struct xo_epoch_log *log)
{
	struct run *r = user;

	if (r->nlogs < 2) {
		r->logs[r->nlogs][0] = log->loss;
		r->logs[r->nlogs][1] = log->accuracy;
		r->logs[r->nlogs][2] = log->val_loss;
		r->logs[r->nlogs][3] = log->val_accuracy;
	}
	r->nlogs++;
}

/* Predict, two epochs of fit with validation, predict again: op by op. */
static void run_net(struct xo_backend *be, const char *spec, bool share, const float *x,
                    const float *y, struct run *r)
{
	struct xo_fit_options o = xo_fit_options_default();
	struct xo_model *m;
	int64_t np, cls;

	setenv("XO_MODEL_SHARE", share ? "1" : "0", 1);
	if (xo_model_open_string(spec, "memplan", be, BATCH, &m))
		fail_msg("%s: %s", xo_backend_name(be), xo_last_error());
	unsetenv("XO_MODEL_SHARE");
	xo_model_set_fused(m, false);
	assert_int_equal(xo_model_init(m, 7), XO_OK);
	np = xo_model_param_count(m);
	cls = xo_model_classes(m);
	*r = (struct run){.pred0 = malloc(sizeof(float) * (size_t)(N * cls)),
	                  .pred1 = malloc(sizeof(float) * (size_t)(N * cls)),
	                  .w = malloc(sizeof(float) * (size_t)np),
	                  .g = malloc(sizeof(float) * (size_t)np)};
	assert_true(r->pred0 && r->pred1 && r->w && r->g);
	assert_int_equal(xo_model_predict(m, x, N, BATCH, r->pred0), XO_OK);
	o.epochs = 2;
	o.batch_size = BATCH;
	o.validation_split = 0.25f;
	o.shuffle = true;
	o.seed = 11;
	if (xo_model_fit(m, x, y, N, &o, on_epoch, r))
		fail_msg("%s fit: %s", xo_backend_name(be), xo_last_error());
	assert_int_equal(xo_model_params_host(m, r->w, false), XO_OK);
	assert_int_equal(xo_model_state_read(m, XO_MODEL_GRADS, r->g), XO_OK);
	assert_int_equal(xo_model_predict(m, x, N, BATCH, r->pred1), XO_OK);
	xo_model_close(m);
}

static void run_free(struct run *r)
{
	free(r->pred0);
	free(r->pred1);
	free(r->w);
	free(r->g);
}

static void same_bits(const char *what, const char *part, const void *a, const void *b,
                      size_t bytes)
{
	if (memcmp(a, b, bytes))
		fail_msg("%s: the shared plan's %s differ from the unshared plan's", what, part);
}

/* Uniform inputs in [-1, 1) and one-hot labels of 3 classes. */
static void data_make(int64_t in, float *x, float *y)
{
	uint64_t s = 0x9e3779b97f4a7c15u;

	for (int64_t i = 0; i < N * in; i++) {
		s = s * 6364136223846793005u + 1442695040888963407u;
		x[i] = (float)((double)(s >> 40) / 8388608.0 - 1.0);
	}
	for (int64_t i = 0; i < N; i++)
		for (int c = 0; c < 3; c++)
			y[3 * i + c] = (float)(c == i % 3);
}

static void test_shared_same_bits(void **state)
{
	struct xo_backend *be[4];
	int nbe = open_backends(be, 4);

	(void)state;
	for (size_t k = 0; k < sizeof(nets) / sizeof(nets[0]); k++) {
		struct xo_model_spec sp;
		int64_t in = 0, np, cls = 3;
		float *x, *y;

		assert_int_equal(xo_spec_parse(nets[k], "memplan", &sp), XO_OK);
		for (int q = 0; q < sp.ninputs; q++)
			in += sp.input[q].len * sp.input[q].w * sp.input[q].ch;
		xo_spec_free(&sp);
		x = malloc(sizeof(float) * (size_t)(N * in));
		y = malloc(sizeof(float) * (size_t)(N * cls));
		assert_true(x && y);
		data_make(in, x, y);
		for (int b = 0; b < nbe; b++) {
			struct run sh, un;
			char what[128];
			struct xo_model *m;

			assert_int_equal(xo_model_open_string(nets[k], "memplan", be[b], 1, &m), XO_OK);
			np = xo_model_param_count(m);
			xo_model_close(m);
			snprintf(what, sizeof(what), "%s on %s", net_names[k], xo_backend_name(be[b]));
			run_net(be[b], nets[k], true, x, y, &sh);
			run_net(be[b], nets[k], false, x, y, &un);
			assert_int_equal(sh.nlogs, 2);
			same_bits(what, "predictions", sh.pred0, un.pred0, sizeof(float) * N * 3);
			same_bits(what, "epoch logs", sh.logs, un.logs, sizeof(sh.logs));
			same_bits(what, "trained weights", sh.w, un.w, sizeof(float) * (size_t)np);
			same_bits(what, "last gradients", sh.g, un.g, sizeof(float) * (size_t)np);
			same_bits(what, "predictions after training", sh.pred1, un.pred1,
			          sizeof(float) * N * 3);
			run_free(&sh);
			run_free(&un);

		}
		free(x);
		free(y);
	}
	for (int b = 0; b < nbe; b++)
		xo_backend_close(be[b]);
}

/* A chain of 20 Dense layers of `units` each (then softmax). */
static void chain_spec(int units, char *buf, size_t size)
{
	size_t used = (size_t)snprintf(buf, size, "input 8\n");

	for (int i = 0; i < 20 && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "dense units=%d activation=relu\n",
		                         units);
	if (used < size)
		snprintf(buf + used, size - used, "dense units=3 activation=softmax\n");
}

/*
 * The deep chain's inference holds two activation slots (each layer reads
 * the previous one's output and writes its own; the output before that is
 * dead), so its planned bytes per sample are two layers', not twenty; its
 * training keeps every output a backward reads and shares the gradients.
 * With MEMORY_MAX between the planned and the unshared inference of 512
 * samples, it opens shared and is refused unshared; its training, above the
 * limit, is refused by fit, after which predict still runs.
 */
static void test_chain_plan(void **state)
{
	const int units = 256;
	const int64_t cap = 512;
	char spec[4096];
	struct xo_backend *be;
	struct xo_model *m;
	struct xo_model_memory mem;
	struct xo_fit_options o = xo_fit_options_default();
	float *x, *y, *p;

	(void)state;
	chain_spec(units, spec, sizeof(spec));
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	assert_int_equal(xo_model_open_string(spec, "chain", be, 1, &m), XO_OK);
	xo_model_memory_get(m, &mem);
	assert_int_equal(mem.infer_slots, 2);
	assert_int_equal(mem.infer_bytes, 2 * 4 * units);
	assert_int_equal(mem.infer_unshared, 4 * (20 * units + 3));
	/* training: 21 outputs kept for the backward, gradients in two slots */
	assert_int_equal(mem.train_unshared, 2 * mem.infer_unshared);
	assert_int_equal(mem.train_bytes, 4 * (20 * units + 3) + 2 * 4 * units);
	xo_model_close(m);
	/* the bound is on the planned bytes */
	assert_true(cap * (4 * 8 + 4 * 3 + mem.infer_bytes) < MEMORY_MAX);
	assert_true(cap * mem.infer_unshared > MEMORY_MAX);
	setenv("XO_MODEL_SHARE", "0", 1);
	assert_int_equal(xo_model_open_string(spec, "chain", be, cap, &m), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "its activations need"));
	unsetenv("XO_MODEL_SHARE");
	assert_int_equal(xo_model_open_string(spec, "chain", be, cap, &m), XO_OK);
	x = calloc(cap * 8, sizeof(float));
	y = calloc(cap * 3, sizeof(float));
	p = calloc(cap * 3, sizeof(float));
	assert_true(x && y && p);
	for (int64_t i = 0; i < cap; i++)
		y[3 * i] = 1.0f;
	o.epochs = 1;
	o.batch_size = cap;
	assert_int_equal(xo_model_fit(m, x, y, cap, &o, NULL, NULL), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "to train"));
	assert_int_equal(xo_model_predict(m, x, 4, 4, p), XO_OK);
	xo_model_close(m);
	free(x);
	free(y);
	free(p);
	xo_backend_close(be);
}

/* XO_MODEL_SHARE takes 0 or 1; anything else is refused in one line. */
static void test_share_env(void **state)
{
	struct xo_backend *be;
	struct xo_model *m = NULL;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	setenv("XO_MODEL_SHARE", "yes", 1);
	assert_int_equal(xo_model_open_string(nets[0], "memplan", be, 1, &m), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "XO_MODEL_SHARE='yes' is not 0"));
	assert_null(m);
	unsetenv("XO_MODEL_SHARE");
	xo_backend_close(be);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_share_env),
	    cmocka_unit_test(test_chain_plan),
	    cmocka_unit_test(test_shared_same_bits),
	};
	char limit[32];

	/* read once per process (xo_model_memory_max): set before any model */
	snprintf(limit, sizeof(limit), "%d", MEMORY_MAX);
	setenv("XO_MODEL_MEMORY_MAX", limit, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
