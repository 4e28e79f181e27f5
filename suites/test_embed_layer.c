/*
 * test_embed_layer.c - the embedding layer and integer model inputs (issue
 * 15 items 2-3): the spec's `input T dtype=int32` and `embedding
 * input_dim=.. output_dim=..` lines and every refusal (a float input, an
 * int input feeding another layer, an embedding not first); Keras's mask of
 * mask_zero=True through each kind's rule, and the masked mean on every
 * backend (an all-padding sample NaN, as Keras); ids
 * checked where they enter (a non-integer or out-of-range id names its
 * sample and step; .npy int32/int64 accepted for an int input only, float32
 * refused); training on every backend: the same weights as ref within the
 * bound below, and table rows no id names left exactly as they were (their
 * gradient is 0, so Adam's m, v and the step stay 0); the layer's cost and
 * the model fingerprint.
 *
 * Cross-backend bound: the model is embedding(50, 8) -> flatten -> dense(5,
 * softmax); after S Adam steps a weight differs from ref's by at most
 * S lr 2 eta + 4u |w| with eta = 8u (K_path + K_grad) (docs/model.md,
 * "Fixture tolerance"): K_path = 12 * 8 + 5 (dense inputs, softmax), K_grad
 * = 16 * 12 (the batch times the most repeats of one id in a batch), S = 6.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_backends.h"

#include "perfdb.h"
#include "xo/model_spec.h"

#define U32 0x1p-24

static const char spec_ok[] = "input 12 dtype=int32\n"
                              "embedding input_dim=50 output_dim=8\n"
                              "flatten\n"
                              "dense units=5 activation=softmax\n";

static void expect_refused(const char *spec, const char *needle)
{
	struct xo_model_spec s;

	assert_int_not_equal(xo_spec_parse(spec, "t.model", &s), XO_OK);
	if (!strstr(xo_last_error(), needle))
		fail_msg("'%s' not in '%s'", needle, xo_last_error());
	assert_null(strchr(xo_last_error(), '\n'));
}

static void test_spec(void **state)
{
	struct xo_model_spec s;

	(void)state;
	assert_int_equal(xo_spec_parse(spec_ok, "t.model", &s), XO_OK);
	assert_true(s.in_int);
	assert_int_equal(s.layers[0].kind, XO_LAYER_EMBEDDING);
	assert_int_equal(s.layers[0].out_rank, 2);
	assert_int_equal(s.layers[0].out_len, 12);
	assert_int_equal(s.layers[0].out_ch, 8);
	assert_int_equal(s.layers[0].w_count, 400);
	assert_int_equal(s.layers[0].b_count, 0);
	assert_string_equal(s.layers[0].name, "embedding");
	xo_spec_free(&s);
	/* Keras's quoted forms and an explicit mask_zero=False */
	assert_int_equal(xo_spec_parse("input shape=(12,) dtype='int32'\nEmbedding input_dim=3 "
	                               "output_dim=2 mask_zero=False\nflatten\ndense units=2\n",
	                               "t.model", &s),
	                 XO_OK);
	xo_spec_free(&s);
	expect_refused("input 12\nembedding input_dim=50 output_dim=8\n", "dtype=int32");
	expect_refused("input 12 dtype=int32\nflatten\n", "feeds only an embedding");
	expect_refused("input 12 dtype=int32\nembedding input_dim=5 output_dim=2\nembedding "
	               "input_dim=5 output_dim=2\n",
	               "a second embedding is not supported yet");
	expect_refused("input 12 dtype=int32\nembedding output_dim=8\n", "input_dim=");
	expect_refused("input 12 dtype=int32\nembedding input_dim=16777217 output_dim=8\n",
	               "2^24");
	expect_refused("input 12 dtype=float64\n", "dtype=float64");
	/* several inputs and ids: beside the ids attention masks only (any
	 * input may be the ids); the message names the input it is about */
	assert_int_equal(xo_spec_parse("input name=keep 12 12 dtype=bool\ninput name=ids 12 "
	                               "dtype=int32\nembedding name=e inputs=ids input_dim=5 "
	                               "output_dim=4 mask_zero=True\nmulti_head_attention "
	                               "inputs=e,e attention_mask=keep num_heads=2 key_dim=2\n",
	                               "t.model", &s),
	                 XO_OK);
	assert_true(s.in_int && s.in_ids == 1 && s.input[1].is_int && !s.input[0].is_int);
	assert_true(s.input[0].is_mask && s.layers[1].p.query_mask && s.layers[1].p.attention_mask);
	xo_spec_free(&s);
	expect_refused("input name=x 12 3\ninput name=ids 12 dtype=int32\nembedding name=e "
	               "inputs=ids input_dim=5 output_dim=3\nadd inputs=e,x\n",
	               "input 'x': a second input beside the dtype=int32 ids");
	expect_refused("input name=ids 12 dtype=int32\ninput name=ids2 12 dtype=int32\n",
	               "input 'ids2': a second dtype=int32 input");
	expect_refused("input name=keep 12 12\ninput name=ids 12 dtype=int32\nembedding "
	               "inputs=keep input_dim=5 output_dim=4\nflatten\n",
	               "an embedding takes the dtype=int32 input 'ids' (got another)");
	expect_refused("input name=ids 12 dtype=int32\nembedding name=e input_dim=5 "
	               "output_dim=4\nmulti_head_attention inputs=e,e attention_mask=ids "
	               "num_heads=2 key_dim=2\n",
	               "attention_mask=ids is the dtype=int32 ids of an embedding");
	expect_refused("input 3 4 dtype=int32\nembedding input_dim=5 output_dim=2\n",
	               "flat [T] input");
}

/* Keras's mask of mask_zero=True through the kinds' rules (model/spec.c
 * mask_rules, docs/model.md): which outputs carry it, the masked mean's
 * p.mask_zero, the merges' p.mask_a / p.mask_b, the kinds that would use it
 * refused. */
static void test_mask_rules(void **state)
{
	static const char me[] = "input 8 dtype=int32\n"
	                         "embedding name=e input_dim=20 output_dim=4 mask_zero=True\n";
	static const char *const refused[][2] = {
	    {"batch_normalization\n", "reaches this BatchNormalization layer, which uses it in "
	                               "Keras; masks are not supported for BatchNormalization"},
	    {"softmax\n", "Softmax layer"},
	    {"concatenate inputs=e,e axis=1\n", "reaches this Concatenate on axis 1: Keras joins "
	                                         "the inputs' masks along that axis"},
	    /* passed on first, then used */
	    {"dense units=4\nlayer_normalization\nbatch_normalization\n", "BatchNormalization layer"},
	    /* a recurrent layer returning sequences passes it on to one that uses it */
	    {"lstm units=3 return_sequences=True\nbatch_normalization\n", "BatchNormalization layer"},
	};
	struct xo_model_spec s;
	char text[512];

	(void)state;
	/* pass: Dense, Dropout, Activation, LayerNormalization; merge of two
	 * masked tensors: masked; the mean uses it, its output unmasked */
	snprintf(text, sizeof(text),
	         "%sdense name=d units=4\ndropout rate=0.1\nactivation activation=relu\n"
	         "layer_normalization name=ln\nadd inputs=e,ln\nglobal_average_pooling1d\n"
	         "dense units=3\n",
	         me);
	assert_int_equal(xo_spec_parse(text, "t.model", &s), XO_OK);
	for (int i = 0; i < 6; i++)
		assert_true(s.layers[i].masked);
	assert_true(s.layers[6].p.mask_zero);
	assert_false(s.layers[6].masked);
	assert_false(s.layers[7].masked);
	xo_spec_free(&s);
	/* a merge of a masked and an unmasked tensor (Conv1D drops the mask):
	 * unmasked, so the mean after it is the plain one */
	snprintf(text, sizeof(text),
	         "%sconv1d name=c filters=4 kernel_size=3 padding=same\nadd inputs=e,c\n"
	         "global_average_pooling1d\n",
	         me);
	assert_int_equal(xo_spec_parse(text, "t.model", &s), XO_OK);
	assert_false(s.layers[1].masked);
	assert_false(s.layers[2].masked);
	assert_false(s.layers[3].p.mask_zero);
	xo_spec_free(&s);
	/* TimeDistributed over Dense passes it (Dense's call takes none) */
	snprintf(text, sizeof(text),
	         "%stime_distributed layer=dense units=3\nglobal_average_pooling1d\n", me);
	assert_int_equal(xo_spec_parse(text, "t.model", &s), XO_OK);
	assert_true(s.layers[1].masked);
	assert_true(s.layers[2].p.mask_zero);
	xo_spec_free(&s);
	/* dropped: GlobalMaxPooling1D (Keras's max ignores it), Flatten */
	snprintf(text, sizeof(text), "%sglobal_max_pooling1d\n", me);
	assert_int_equal(xo_spec_parse(text, "t.model", &s), XO_OK);
	assert_false(s.layers[1].masked);
	xo_spec_free(&s);
	snprintf(text, sizeof(text), "%sflatten\ndense units=2\n", me);
	assert_int_equal(xo_spec_parse(text, "t.model", &s), XO_OK);
	assert_false(s.layers[1].masked);
	xo_spec_free(&s);
	/* the recurrent layers use it (the op's step mask); their output keeps
	 * it only when it is a sequence */
	snprintf(text, sizeof(text),
	         "%sgru name=g units=3 return_sequences=True\nbidirectional layer=lstm units=2\n"
	         "dense units=2\n",
	         me);
	assert_int_equal(xo_spec_parse(text, "t.model", &s), XO_OK);
	assert_true(s.layers[1].p.mask_zero);
	assert_true(s.layers[1].masked);
	assert_true(s.layers[2].p.mask_zero);
	assert_false(s.layers[2].masked);
	xo_spec_free(&s);
	/* Multiply, Maximum, Minimum read each input's mask (the merge op's
	 * mask_a, mask_b); the output's mask is the OR, none when an input has
	 * none (Conv1D drops it) */
	snprintf(text, sizeof(text),
	         "%sdense name=d units=4\nmultiply name=m inputs=e,d\n"
	         "conv1d name=c inputs=e filters=4 kernel_size=3 padding=same\n"
	         "maximum name=x inputs=c,m\nminimum name=n inputs=m,c\nminimum inputs=m,m\n"
	         "add name=s inputs=x,n\nadd inputs=s,minimum\n",
	         me);
	assert_int_equal(xo_spec_parse(text, "t.model", &s), XO_OK);
	assert_true(s.layers[2].p.mask_a && s.layers[2].p.mask_b && s.layers[2].masked);
	assert_true(!s.layers[4].p.mask_a && s.layers[4].p.mask_b && !s.layers[4].masked);
	assert_true(s.layers[5].p.mask_a && !s.layers[5].p.mask_b && !s.layers[5].masked);
	assert_true(s.layers[6].p.mask_a && s.layers[6].p.mask_b && s.layers[6].masked);
	xo_spec_free(&s);
	/* mask_zero=False: no mask anywhere */
	assert_int_equal(xo_spec_parse("input 8 dtype=int32\nembedding input_dim=20 output_dim=4 "
	                               "mask_zero=False\nglobal_average_pooling1d\n",
	                               "t.model", &s),
	                 XO_OK);
	assert_false(s.layers[0].masked);
	assert_false(s.layers[1].p.mask_zero);
	xo_spec_free(&s);
	for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
		snprintf(text, sizeof(text), "%s%s", me, refused[k][0]);
		expect_refused(text, refused[k][1]);
	}
}

/* MultiHeadAttention's query and value masks (its output masked by the
 * query's) and Concatenate on the last axis (masked when every input is;
 * Keras's all-true mask, read as none, when one is not). */
static void test_mask_rules_attn_concat(void **state)
{
	static const char me[] = "input 8 dtype=int32\n"
	                         "embedding name=e input_dim=20 output_dim=4 mask_zero=True\n";
	static const char conv[] = "conv1d name=c filters=4 kernel_size=3 padding=same\n";
	static const struct {
		const char *line; /* the layer t under test */
		bool conv, masked, query_mask, value_mask;
	} cases[] = {
	    {"multi_head_attention name=t inputs=e,e num_heads=1 key_dim=2\n", false, true, true,
	     true},
	    {"multi_head_attention name=t inputs=e,c num_heads=1 key_dim=2\n", true, true, true,
	     false},
	    {"multi_head_attention name=t inputs=c,e num_heads=1 key_dim=2\n", true, false, false,
	     true},
	    {"concatenate name=t inputs=e,e\n", false, true, false, false},
	    {"concatenate name=t inputs=e,c axis=-1\n", true, false, false, false},
	    {"concatenate name=t inputs=c,e axis=2\n", true, false, false, false},
	};
	struct xo_model_spec s;
	char text[512];

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		int t = cases[k].conv ? 2 : 1;

		snprintf(text, sizeof(text), "%s%s%sglobal_average_pooling1d\n", me,
		         cases[k].conv ? conv : "", cases[k].line);
		assert_int_equal(xo_spec_parse(text, "t.model", &s), XO_OK);
		assert_string_equal(s.layers[t].name, "t");
		assert_int_equal(s.layers[t].masked, cases[k].masked);
		assert_int_equal(s.layers[t].p.query_mask, cases[k].query_mask);
		assert_int_equal(s.layers[t].p.value_mask, cases[k].value_mask);
		assert_int_equal(s.layers[t + 1].p.mask_zero, cases[k].masked);
		xo_spec_free(&s);
	}
}

/* A layer that drops the mask in Keras (no supports_masking) but returns
 * its input as it is keeps it there (Keras 3.15.1 on JAX: the reshape,
 * transpose or full slice is the input array, mask and all): a Reshape to
 * the input's own shape, Permute dims=1,2, Cropping1D of 0; any other
 * Reshape, Permute or Cropping, and a ZeroPadding1D of 0 (jnp.pad makes a
 * new array), drop it. The pooling after them takes the masked mean where
 * the mask arrives. */
static void test_mask_identity_views(void **state)
{
	static const char me[] = "input 8 dtype=int32\n"
	                         "embedding name=e input_dim=20 output_dim=4 mask_zero=True\n";
	static const struct {
		const char *line;
		bool masked;
	} cases[] = {
	    {"reshape name=t target_shape=8,4\n", true},
	    {"reshape name=t target_shape=-1,4\n", true},
	    {"reshape name=t target_shape=4,8\n", false},
	    {"permute name=t dims=1,2\n", true},
	    {"permute name=t dims=2,1\n", false},
	    {"cropping1d name=t cropping=0\n", true},
	    {"cropping1d name=t cropping=0,1\n", false},
	    {"zero_padding1d name=t padding=0\n", false},
	};
	struct xo_model_spec s;
	char text[512];

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		snprintf(text, sizeof(text), "%s%sglobal_average_pooling1d\n", me, cases[k].line);
		if (xo_spec_parse(text, "t.model", &s))
			fail_msg("%s: %s", cases[k].line, xo_last_error());
		assert_string_equal(s.layers[1].name, "t");
		/* none recorded (no supports_masking): the pooling takes the
		 * attached one, the input array's where t returns it */
		if (s.layers[1].masked || s.layers[2].p.mask_zero != cases[k].masked ||
		    s.layers[2].mask_in != cases[k].masked)
			fail_msg("%s: recorded %d, the pooling's mask %d; want 0, %d", cases[k].line,
			         s.layers[1].masked, s.layers[2].p.mask_zero, cases[k].masked);
		xo_spec_free(&s);
	}
}

/* The masks read at run time (spec.c mask_runtime): Keras's
 * MultiHeadAttention erases the masks attached to its input arrays, so a
 * later reader of those arrays sees none, while a pooling takes the mask
 * recorded when the model was built. Each case: the spec after the
 * embedding e, the layer t checked, and its uses (query_mask/value_mask,
 * mask_a/mask_b, or the pooling's mask_zero as first). Checked against
 * Keras 3.15.1 (JAX) by the golden mha_pad2 and by hand. */
static void test_mask_runtime(void **state)
{
	static const char me[] = "input 8 dtype=int32\n"
	                         "embedding name=e input_dim=20 output_dim=4 mask_zero=True\n";
	static const struct {
		const char *body;
		bool first, second;
	} cases[] = {
	    /* the second block's attention after a residual Add of e: the Add's
	     * attached mask is none (e's was erased), so no masks */
	    {"multi_head_attention name=a inputs=e,e num_heads=1 key_dim=2\n"
	     "add name=r inputs=e,a\nmulti_head_attention name=t inputs=r,r num_heads=1 key_dim=2\n"
	     "global_average_pooling1d\n",
	     false, false},
	    /* ... while the pooling after it takes the recorded mask */
	    {"multi_head_attention name=a inputs=e,e num_heads=1 key_dim=2\n"
	     "add name=r inputs=e,a\nlayer_normalization\nglobal_average_pooling1d name=t\n",
	     true, false},
	    /* a Multiply of e after the attention: e's erased, the attention's
	     * output masked by its query's */
	    {"multi_head_attention name=a inputs=e,e num_heads=1 key_dim=2\n"
	     "multiply name=t inputs=e,a\nglobal_average_pooling1d\n",
	     false, true},
	    /* the attention's own query and value: read before it erases them */
	    {"maximum name=m inputs=e,e\n"
	     "multi_head_attention name=t inputs=m,m num_heads=1 key_dim=2\n"
	     "global_average_pooling1d\n",
	     true, true},
	    /* cross attention whose value, e, an earlier attention erased */
	    {"multi_head_attention name=a inputs=e,e num_heads=1 key_dim=2\n"
	     "multi_head_attention name=t inputs=a,e num_heads=1 key_dim=2\n"
	     "global_average_pooling1d\n",
	     true, false},
	    /* an identity Reshape shares e's array: the Add after the attention
	     * sees none through it, and records none (Reshape has no
	     * supports_masking), so the plain mean */
	    {"multi_head_attention name=a inputs=e,e num_heads=1 key_dim=2\n"
	     "reshape name=v inputs=e target_shape=8,4\nadd name=r inputs=v,a\n"
	     "global_average_pooling1d name=t\n",
	     false, false},
	    /* a Dropout of rate 0 and Activation("linear") share their input's
	     * array in training too: erased through them */
	    {"dropout name=d rate=0\nmulti_head_attention name=a inputs=d,d num_heads=1 key_dim=2\n"
	     "multiply name=t inputs=e,a\nglobal_average_pooling1d\n",
	     false, true},
	    {"activation name=d activation=linear\n"
	     "multi_head_attention name=a inputs=d,d num_heads=1 key_dim=2\n"
	     "multiply name=t inputs=e,a\nglobal_average_pooling1d\n",
	     false, true},
	    /* Keras's order (by depth, then as its walk from the output meets
	     * them): of two attentions of e read by an Add, the Add's first
	     * input runs first and erases e's mask before the second reads it */
	    {"multi_head_attention name=a inputs=e,e num_heads=1 key_dim=2\n"
	     "multi_head_attention name=t inputs=e,e num_heads=1 key_dim=2\n"
	     "add inputs=a,t\nflatten\n",
	     false, false},
	    {"multi_head_attention name=t inputs=e,e num_heads=1 key_dim=2\n"
	     "multi_head_attention name=a inputs=e,e num_heads=1 key_dim=2\n"
	     "add inputs=a,t\nflatten\n",
	     false, false},
	    {"multi_head_attention name=a inputs=e,e num_heads=1 key_dim=2\n"
	     "multiply name=t inputs=e,e\nadd inputs=a,t\nflatten\n",
	     false, false},
	    /* a Dense of e beside the attention, joined by a Multiply: the
	     * Multiply's first input runs first */
	    {"multi_head_attention name=a inputs=e,e num_heads=1 key_dim=2\n"
	     "dense name=d inputs=e units=4\nmultiply name=t inputs=a,d\nflatten\n",
	     true, false},
	    {"dense name=d inputs=e units=4\n"
	     "multi_head_attention name=a inputs=e,e num_heads=1 key_dim=2\n"
	     "multiply name=t inputs=d,a\nflatten\n",
	     true, true},
	    /* the attention deeper than the Dense: it runs first whatever the
	     * Multiply's order */
	    {"multi_head_attention name=a inputs=e,e num_heads=1 key_dim=2\n"
	     "dense name=a1 units=4\ndense name=a2 units=4\n"
	     "dense name=d inputs=e units=4\nmultiply name=t inputs=d,a2\nflatten\n",
	     false, true},
	    /* a Dense of e beside the attention: its attached mask is Keras's
	     * order's, but nothing reads it (the Add's pooling takes the
	     * recorded mask) */
	    {"multi_head_attention name=a inputs=e,e num_heads=1 key_dim=2\n"
	     "dense name=d inputs=e units=4\nadd inputs=a,d\nglobal_average_pooling1d name=t\n",
	     true, false},
	};
	static const char *const refused[][2] = {
	    /* a masked Concatenate (whose mask ops may move a layer's depth in
	     * Keras's order): a Multiply of e beside an attention of e */
	    {"concatenate name=c inputs=e,e\ndense name=dc units=4\n"
	     "multi_head_attention name=a inputs=e,e num_heads=1 key_dim=2\n"
	     "multiply name=m inputs=e,e\nadd name=s inputs=a,m\nadd inputs=s,dc\n"
	     "global_average_pooling1d\n",
	     "whether this one sees the mask depends on Keras's execution order"},
	    /* a Dropout shares e's array in inference only */
	    {"dropout name=d rate=0.5\nmulti_head_attention name=a inputs=d,d num_heads=1 key_dim=2\n"
	     "multiply inputs=e,a\nglobal_average_pooling1d\n",
	     "mask in Keras differs between training and inference"},
	    /* an identity view's attached mask reaching a BatchNormalization */
	    {"reshape target_shape=8,4\nbatch_normalization\n",
	     "reaches this BatchNormalization layer"},
	};
	struct xo_model_spec s;
	char text[768];

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct xo_layer_spec *t = NULL;
		bool f, g;

		snprintf(text, sizeof(text), "%s%sdense units=2\n", me, cases[k].body);
		if (xo_spec_parse(text, "t.model", &s))
			fail_msg("case %zu: %s", k, xo_last_error());
		for (int i = 0; i < s.nlayers; i++)
			if (!strcmp(s.layers[i].name, "t"))
				t = &s.layers[i];
		assert_non_null(t);
		f = t->kind == XO_LAYER_MULTI_HEAD_ATTENTION ? t->p.query_mask
		    : t->kind == XO_LAYER_MULTIPLY          ? t->p.mask_a
		                                            : t->p.mask_zero;
		g = t->kind == XO_LAYER_MULTI_HEAD_ATTENTION ? t->p.value_mask
		    : t->kind == XO_LAYER_MULTIPLY          ? t->p.mask_b
		                                            : false;
		if (f != cases[k].first || g != cases[k].second)
			fail_msg("case %zu: uses %d %d, want %d %d", k, f, g, cases[k].first,
			         cases[k].second);
		xo_spec_free(&s);
	}
	for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
		snprintf(text, sizeof(text), "%s%sdense units=2\n", me, refused[k][0]);
		expect_refused(text, refused[k][1]);
	}
}

/* The masked mean on every backend, forward: ids 0 are padding; a sample of
 * padding only is 0 / 0 = NaN (Keras's formula), the others the mean of
 * their kept steps' rows, exact here (the table holds small integers and
 * the counts 1, 2 and 4 are powers of 2). */
static void test_mask_mean_backends(void **state)
{
	static const char spec[] = "input 4 dtype=int32\n"
	                           "embedding input_dim=5 output_dim=2 mask_zero=True\n"
	                           "global_average_pooling1d\n";
	/* ids per sample, and the expected means of table rows r: w[r] = (r, -3r) */
	static const float x[4][4] = {{0, 0, 0, 0}, {1, 0, 3, 0}, {4, 0, 0, 0}, {1, 2, 3, 4}};
	static const float want[4] = {NAN, 2.0f, 4.0f, 2.5f};
	struct xo_backend *be[4];
	int nb = open_backends(be, 4);

	(void)state;
	for (int b = 0; b < nb; b++) {
		struct xo_model *m;
		float w[10], y[8];

		for (int r = 0; r < 5; r++) {
			w[2 * r] = (float)r;
			w[2 * r + 1] = -3.0f * (float)r;
		}
		assert_int_equal(xo_model_open_string(spec, "t.model", be[b], 4, &m), XO_OK);
		assert_int_equal(xo_model_params_host(m, w, true), XO_OK);
		assert_int_equal(xo_model_predict(m, &x[0][0], 4, 4, y), XO_OK);
		for (int n = 0; n < 4; n++) {
			if (isnan(want[n])) {
				assert_true(isnan(y[2 * n]) && isnan(y[2 * n + 1]));
				continue;
			}
			if (y[2 * n] != want[n] || y[2 * n + 1] != -3.0f * want[n])
				fail_msg("%s: sample %d: %g %g, want %g %g",
				         xo_backend_name(be[b]), n, (double)y[2 * n],
				         (double)y[2 * n + 1], (double)want[n], -3.0 * want[n]);
		}
		xo_model_close(m);
	}
	for (int b = 0; b < nb; b++)
		xo_backend_close(be[b]);
}

/* Subnormals as Keras's XLA sees them in a mask decision (denormals are
 * zero, xo_daz), on every backend: a Masking step of +-1e-40 everywhere is
 * masked under mask_value=0 (Keras 3.15.1 on JAX: the mean [2, 3] of the
 * other two steps, not [1.33, 2] of all three), and a float attention_mask
 * entry of 1e-40 drops its key as 0 does (the prediction with it equals the
 * one with 0 there, and differs from the one with 1). */
static void test_mask_subnormal_backends(void **state)
{
	static const char masking[] = "input 3 2\nmasking mask_value=0\nglobal_average_pooling1d\n";
	static const char attn[] = "input name=q 3 2\ninput name=keep 3 3\n"
	                           "multi_head_attention inputs=q,q attention_mask=keep num_heads=1 "
	                           "key_dim=2\nflatten\n";
	static const float x[2][6] = {{1, 2, 1e-40f, -1e-40f, 3, 4}, {1e-40f, 0, 5, 7, 0, 0}};
	static const float want[2][2] = {{2, 3}, {5, 7}};
	struct xo_backend *be[4];
	int nb = open_backends(be, 4);

	(void)state;
	for (int b = 0; b < nb; b++) {
		struct xo_model *m;
		float y[3][6], xa[3][15];

		assert_int_equal(xo_model_open_string(masking, "t.model", be[b], 2, &m), XO_OK);
		assert_int_equal(xo_model_predict(m, &x[0][0], 2, 6, &y[0][0]), XO_OK);
		for (int n = 0; n < 2; n++)
			if (y[0][2 * n] != want[n][0] || y[0][2 * n + 1] != want[n][1])
				fail_msg("%s: Masking sample %d: %g %g, want %g %g", xo_backend_name(be[b]),
				         n, (double)y[0][2 * n], (double)y[0][2 * n + 1],
				         (double)want[n][0], (double)want[n][1]);
		xo_model_close(m);
		/* one sample three ways: key 2 of query row 0 kept by 1e-40, 0, 1 */
		assert_int_equal(xo_model_open_string(attn, "t.model", be[b], 1, &m), XO_OK);
		for (int v = 0; v < 3; v++) {
			for (int e = 0; e < 6; e++)
				xa[v][e] = 0.25f * (float)(e + 1) - 0.8f * (float)(e % 2);
			for (int e = 0; e < 9; e++)
				xa[v][6 + e] = 1.0f;
			xa[v][6 + 2] = v == 0 ? 1e-40f : v == 1 ? 0.0f : 1.0f;
			assert_int_equal(xo_model_predict(m, xa[v], 1, 15, y[v]), XO_OK);
		}
		if (memcmp(y[0], y[1], sizeof(y[0])))
			fail_msg("%s: an attention_mask of 1e-40 keeps the key", xo_backend_name(be[b]));
		assert_memory_not_equal(y[1], y[2], sizeof(y[1]));
		xo_model_close(m);
	}
	for (int b = 0; b < nb; b++)
		xo_backend_close(be[b]);
}

/* The recurrent layers' lines: shapes, Keras's parameter counts, refusals. */
static void test_rnn_spec(void **state)
{
	struct xo_model_spec s;

	(void)state;
	assert_int_equal(xo_spec_parse("input 10 3\nGRU units=12 return_sequences=True\ngru "
	                               "units=8 go_backwards=1\nlstm_x_is_not_a_layer\n",
	                               "t.model", &s) == XO_OK,
	                 false);
	assert_int_equal(xo_spec_parse("input 10 3\ngru units=12 return_sequences=True\ngru "
	                               "units=8 go_backwards=1\ndense units=5\n",
	                               "t.model", &s),
	                 XO_OK);
	/* Keras: GRU(12) on 3 features 612 parameters, GRU(8) on 12: 528 */
	assert_int_equal(xo_layer_trainable(&s.layers[0]), 612);
	assert_int_equal(xo_layer_trainable(&s.layers[1]), 528);
	assert_int_equal(s.layers[0].out_rank, 2);
	assert_int_equal(s.layers[0].out_len, 10);
	assert_int_equal(s.layers[1].out_rank, 1);
	assert_true(s.layers[0].p.activation == XO_ACTIVATION_TANH);
	xo_spec_free(&s);
	/* LSTM(16) on 8: 4 * 16 * (8 + 16 + 1) = 1600; SimpleRNN(6) on 3: 60 */
	assert_int_equal(xo_spec_parse("input 12 8\nlstm units=16\ndense units=2\n", "t.model",
	                               &s),
	                 XO_OK);
	assert_int_equal(xo_layer_trainable(&s.layers[0]), 1600);
	xo_spec_free(&s);
	assert_int_equal(xo_spec_parse("input 12 3\nsimple_rnn units=6 use_bias=0\ndense "
	                               "units=2\n",
	                               "t.model", &s),
	                 XO_OK);
	assert_int_equal(xo_layer_trainable(&s.layers[0]), 54);
	xo_spec_free(&s);
	expect_refused("input 12\nlstm units=4\n", "lstm needs a [steps][channels] input");
	expect_refused("input 12 3\nlstm\n", "lstm needs units=");
	expect_refused("input 12 3\nlstm units=4 reset_after=0\n", "unknown argument 'reset_after'");
	expect_refused("input 12 3\ngru units=4 recurrent_activation=relu\n", "gru");
	expect_refused("input 12 3\nlstm units=4\nlstm units=4\n", "lstm needs a [steps]");
}

/* Ids as they enter: predict names the sample and step of a bad id; the
 * .npy forms. */
static void test_ids_checked(void **state)
{
	struct xo_backend *be;
	struct xo_model *m;
	float x[2 * 12], p[2 * 5];
	int64_t ints[3] = {0, 49, 50};
	struct xo_npy a = {.ndim = 2, .dim = {1, 3}, .count = 3, .ints = ints, .itemsize = 8,
	                   .is_int = true};

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	assert_int_equal(xo_model_open_string(spec_ok, "t.model", be, 4, &m), XO_OK);
	assert_int_equal(xo_model_input_ids(m), 50);
	for (int i = 0; i < 24; i++)
		x[i] = (float)(i * 2);
	x[13] = 50.0f;
	assert_int_equal(xo_model_predict(m, x, 2, 2, p), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "id 50 of sample 1, step 1 is outside [0, "
	                                        "input_dim=50)"));
	x[13] = 1.5f;
	assert_int_equal(xo_model_predict(m, x, 2, 2, p), XO_EINVAL);
	x[13] = -1.0f;
	assert_int_equal(xo_model_predict(m, x, 2, 1, p), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "of sample 1, step 1"));
	x[13] = 49.0f;
	assert_int_equal(xo_model_predict(m, x, 2, 2, p), XO_OK);
	/* .npy: int64 out of range refused, in range converted */
	assert_int_equal(xo_model_input_npy(m, &a, "x.npy"), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "x.npy: id 50 of sample 0, step 2"));
	ints[2] = 7;
	a.ints = malloc(sizeof(ints));
	memcpy(a.ints, ints, sizeof(ints));
	assert_int_equal(xo_model_input_npy(m, &a, "x.npy"), XO_OK);
	assert_false(a.is_int);
	assert_true(a.data[0] == 0.0f && a.data[1] == 49.0f && a.data[2] == 7.0f);
	/* float32 refused for ids */
	assert_int_equal(xo_model_input_npy(m, &a, "x.npy"), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "float values for the int32 ids"));
	xo_npy_free(&a);
	xo_model_close(m);
	/* ids refused for a float input */
	assert_int_equal(xo_model_open_string("input 3\ndense units=2 activation=softmax\n",
	                                      "f.model", be, 4, &m),
	                 XO_OK);
	assert_int_equal(xo_model_input_ids(m), 0);
	a = (struct xo_npy){.ndim = 2, .dim = {1, 3}, .count = 3, .ints = ints, .itemsize = 4,
	                    .is_int = true};
	assert_int_equal(xo_model_input_npy(m, &a, "x.npy"), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "integer (int32) values for a float32"));
	xo_model_close(m);
	xo_backend_close(be);
}

#define NS 48

static void train(struct xo_backend *be, float *w, int64_t *nparams)
{
	struct xo_model *m;
	struct xo_fit_options o = xo_fit_options_default();
	float x[NS * 12], y[NS * 5] = {0};

	/* ids from rows 0..39 only: rows 40..49 are never used */
	for (int i = 0; i < NS * 12; i++)
		x[i] = (float)((i * 7 + i / 12) % 40);
	for (int i = 0; i < NS; i++)
		y[i * 5 + i % 5] = 1.0f;
	o.epochs = 2;
	o.batch_size = 16;
	o.seed = 3;
	assert_int_equal(xo_model_open_string(spec_ok, "t.model", be, 16, &m), XO_OK);
	assert_int_equal(xo_model_init(m, 11), XO_OK);
	*nparams = xo_model_param_count(m);
	assert_int_equal(xo_model_params_host(m, w, false), XO_OK);
	assert_int_equal(xo_model_fit(m, x, y, NS, &o, NULL, NULL), XO_OK);
	assert_int_equal(xo_model_params_host(m, w + *nparams, false), XO_OK);
	xo_model_close(m);
}

static void test_train_backends(void **state)
{
	struct xo_backend *be[4];
	int nb = open_backends(be, 4);
	static float ref[2 * 1000], got[2 * 1000];
	int64_t np = 0;
	/* the file comment's bound: S = 6 steps */
	double eta = 8.0 * U32 * (12 * 8 + 5 + 16 * 12), lr = 1e-3;

	(void)state;
	assert_true(nb >= 1);
	train(be[0], ref, &np);
	assert_int_equal(np, 400 + 96 * 5 + 5);
	for (int b = 0; b < nb; b++) {
		train(be[b], got, &np);
		for (int64_t k = 0; k < np; k++) {
			double tol = 6 * lr * 2 * eta + 4 * U32 * fabs((double)ref[np + k]);

			if (!(fabs((double)got[np + k] - (double)ref[np + k]) <= tol))
				fail_msg("%s: weight %lld %.9g, ref %.9g", xo_backend_name(be[b]),
				         (long long)k, (double)got[np + k], (double)ref[np + k]);
		}
		/* rows 40..49 of the table: never named, never changed */
		for (int64_t k = 40 * 8; k < 400; k++)
			assert_true(memcmp(&got[k], &got[np + k], 4) == 0);
		/* rows that were named did move */
		assert_true(got[0] != got[np]);
	}
	for (int b = 0; b < nb; b++)
		xo_backend_close(be[b]);
}

/* The model fingerprint of the spec text, written to path first. */
static void spec_ident(const char *path, const char *text, char arch[32])
{
	char name[64];
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(xo_perf_model_ident(path, name, sizeof(name), arch, 32), XO_OK);
}

static void test_cost_and_ident(void **state)
{
	struct xo_backend *be;
	struct xo_model *m;
	struct xo_layer_cost c;
	char name[64], a1[32], a2[32];
	FILE *f;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	assert_int_equal(xo_model_open_string(spec_ok, "t.model", be, 4, &m), XO_OK);
	xo_model_layer_cost(m, 0, &c);
	assert_int_equal(c.params, 400);
	assert_true(c.act_bytes_fwd == 4.0 * (12 + 12 * 8)); /* ids in, rows out */
	assert_true(c.w_bytes_fwd == 4.0 * 12 * 8);          /* the rows read */
	assert_true(c.flops_bwd == 12.0 * 8);                /* one add per dy */
	assert_int_equal(c.ops_predict, 1);
	assert_int_equal(c.ops_bwd, 1);
	xo_model_close(m);
	/* the masked mean reads the 12 int32 ids besides x [12][8] and y [8] */
	assert_int_equal(xo_model_open_string("input 12 dtype=int32\nembedding input_dim=50 "
	                                      "output_dim=8 mask_zero=True\n"
	                                      "global_average_pooling1d\n",
	                                      "t.model", be, 4, &m),
	                 XO_OK);
	xo_model_layer_cost(m, 1, &c);
	assert_true(c.act_bytes_fwd == 4.0 * (12 * 8 + 8 + 12));
	xo_model_close(m);
	xo_backend_close(be);
	/* the fingerprint tells apart specs that differ only in input_dim */
	f = fopen("emb_a.model", "w");
	assert_non_null(f);
	fputs(spec_ok, f);
	fclose(f);
	f = fopen("emb_b.model", "w");
	assert_non_null(f);
	fputs("input 12 dtype=int32\nembedding input_dim=40 output_dim=8\nflatten\ndense "
	      "units=5 activation=softmax\n",
	      f);
	fclose(f);
	assert_int_equal(xo_perf_model_ident("emb_a.model", name, sizeof(name), a1, sizeof(a1)),
	                 XO_OK);
	assert_int_equal(xo_perf_model_ident("emb_b.model", name, sizeof(name), a2, sizeof(a2)),
	                 XO_OK);
	assert_string_not_equal(a1, a2);
	/* and recurrent specs that differ only in go_backwards / reset_after */
	f = fopen("emb_b.model", "w");
	assert_non_null(f);
	fputs("input 12 3\ngru units=4\ndense units=5 activation=softmax\n", f);
	fclose(f);
	assert_int_equal(xo_perf_model_ident("emb_b.model", name, sizeof(name), a1, sizeof(a1)),
	                 XO_OK);
	for (int k = 0; k < 3; k++) {
		static const char *const alt[3] = {"go_backwards=1", "reset_after=0",
		                                   "return_sequences=1\nflatten"};

		f = fopen("emb_b.model", "w");
		assert_non_null(f);
		fprintf(f, "input 12 3\ngru units=4 %s\ndense units=5 activation=softmax\n",
		        alt[k]);
		fclose(f);
		assert_int_equal(
		    xo_perf_model_ident("emb_b.model", name, sizeof(name), a2, sizeof(a2)), XO_OK);
		assert_string_not_equal(a1, a2);
	}
	/* and specs that differ only in Keras's mask (mask_zero) */
	spec_ident("emb_a.model",
	           "input 12 dtype=int32\nembedding input_dim=40 output_dim=8 mask_zero=True\n"
	           "global_average_pooling1d\ndense units=5 activation=softmax\n",
	           a1);
	spec_ident("emb_b.model",
	           "input 12 dtype=int32\nembedding input_dim=40 output_dim=8\n"
	           "global_average_pooling1d\ndense units=5 activation=softmax\n",
	           a2);
	assert_string_not_equal(a1, a2);
	remove("emb_a.model");
	remove("emb_b.model");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spec),
	    cmocka_unit_test(test_rnn_spec),
	    cmocka_unit_test(test_ids_checked),
	    cmocka_unit_test(test_train_backends),
	    cmocka_unit_test(test_cost_and_ident),
	    cmocka_unit_test(test_mask_rules),
	    cmocka_unit_test(test_mask_rules_attn_concat),
	    cmocka_unit_test(test_mask_identity_views),
	    cmocka_unit_test(test_mask_runtime),
	    cmocka_unit_test(test_mask_mean_backends),
	    cmocka_unit_test(test_mask_subnormal_backends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
