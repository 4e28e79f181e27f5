/*
 * keras.c - Keras model files in and out (docs/model.md).
 *
 * In: a Keras 3 .keras archive (a zip: config.json, model.weights.h5), a
 * legacy full-model .h5 (root attribute model_config, group model_weights)
 * and, for weights alone, a Keras 3 .weights.h5 or a legacy .h5 weights file
 * (Keras 2 ModelCheckpoint(save_weights_only=True)). Files are told apart by
 * their first bytes, never by their names. Out: .weights.h5 and .keras files
 * that Keras 3 loads unchanged.
 *
 * The config -> spec mapping is the table `classes` below: one row per Keras
 * class, naming every config key it accepts and what it does with it. A key
 * not in its row is refused with the layer's name, class and the key, so an
 * option that changes the math is never ignored.
 *
 * The libraries are the field's own: HDF5 (libhdf5), libzip, jansson.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <hdf5.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zip.h>

#include "model_internal.h"


/* HDF5 prints its error stack to stderr by default; messages here are ours. */
static void h5_quiet(void)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* v as a double with at most 9 significant digits (0.99f -> 0.99), which
 * float32 reads back as v. */
static double short_real(float v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.9g", (double)v);
	for (int d = 1; d <= 9; d++) {
		snprintf(buf, sizeof(buf), "%.*g", d, (double)v);
		if ((float)strtod(buf, NULL) == v)
			break;
	}
	return strtod(buf, NULL);
}

/* ---- config.json -> spec ------------------------------------------------- */

enum key_rule {
	K_NAME,     /* the layer's name: name= */
	K_INT,      /* int or a one-element int list: key=N */
	K_STR,      /* string: key=s (the spec parser checks the value) */
	K_BOOL,     /* key=True/False */
	K_FLOAT,    /* key=x */
	K_SKIP,     /* no effect on the math once weights are loaded */
	K_NULL,     /* must be null (regularizers, constraints, ...) */
	K_LAST,     /* must be "channels_last" */
	K_ONE,      /* must be 1 (groups) */
	K_FALSE,    /* must be false */
	K_TRUTH,    /* Python's truth of a bool, null or number (the global poolings'
	             * keepdims, which Keras tests with "if"): key=True when true */
	K_TRUE,     /* must be true (trainable) */
	K_DTYPE,    /* float32 (a string or a DTypePolicy) or null */
	K_SHAPE,    /* InputLayer batch shape: [null, d...] */
	K_AXIS,     /* -1 (or [-1]), or the last axis's index: Batch-/LayerNormalization */
	K_ONES,     /* the initializer Ones (BatchNormalization's default) */
	K_ZEROS,    /* the initializer Zeros */
	K_PAIR,     /* 2-D layers: int or [h, w]: key=h and its width key (pool_w, strides_w,
	             * kernel_w, dilation_w) */
	K_IN_DTYPE, /* InputLayer: float32, or int32 / int64 (ids, an embedding's) */
	K_ZERO,     /* must be 0 (the recurrent layers' dropout, recurrent_dropout) */
	K_INTS,     /* a list of 1 to 4 integers (Permute's dims): key=a,b,... (the spec
	             * parser checks the values) */
	K_MARGINS,  /* ZeroPadding1D / Cropping1D: int or [begin, end], non-negative:
	             * key=N or key=B,E */
	K_MARGINS2, /* ZeroPadding2D / Cropping2D: int, or [h, w] each an int or [begin,
	             * end], non-negative: key=N or key=T,B,L,R */
	K_SIZE,     /* UpSampling1D: a positive int (Keras's int(size)): key=N */
	K_SIZE2,    /* UpSampling2D: a positive int or [h, w]: size=h size_w=w */
	K_OPT_INT,  /* null (omitted), or K_INT's int (MultiHeadAttention's output_shape) */
	K_OPT_FLOAT, /* null (omitted), or K_FLOAT's number (ReLU's max_value) */
	K_SCALAR,   /* K_FLOAT's number; a list or NumPy array (Rescaling's per-channel
	             * scale and offset) refused as such */
	K_OPT_SCALAR, /* null (omitted), or K_SCALAR's number (Normalization's mean and
	               * variance) */
	K_AXES1,    /* null or [1]: MultiHeadAttention's attention_axes, the steps of a
	             * [steps][features] input (the default; others refused) */
	K_LAYER,    /* TimeDistributed's wrapped layer {class_name, config}: Dense or
	             * Conv1D, its config read by its own class row: layer=kind and
	             * its arguments */
	K_RNN,      /* Bidirectional's layer: SimpleRNN, LSTM or GRU, as K_LAYER */
	K_MIRROR,   /* Bidirectional's backward_layer: the mirror Keras builds of its
	             * layer (go_backwards flipped, another name), else refused */
};
struct key_row {
	const char *key;
	enum key_rule rule;
};
/* Keys every layer has. */
#define COMMON_KEYS {"name", K_NAME}, {"trainable", K_TRUE}, {"dtype", K_DTYPE}
#define NO_REG_KEYS                                                                    \
	{"kernel_initializer", K_SKIP}, {"bias_initializer", K_SKIP},                      \
	    {"kernel_regularizer", K_NULL}, {"bias_regularizer", K_NULL},                  \
	    {"activity_regularizer", K_NULL}, {"kernel_constraint", K_NULL},               \
	    {"bias_constraint", K_NULL}
/*
 * A layer kind's Keras class (its class and spec names are layers.def's):
 * every config key it reads and the key's rule (a key without a row is
 * refused, so an option that changes the math is never ignored), the
 * config written back, and whether Keras writes a build_config for it (the
 * layers that build state, weights, and Flatten).
 */
struct class_row {
	struct key_row keys[40];
	/* the config written back into cfg (name, trainable and dtype are
	 * there already); NULL: writing the kind is not supported */
	void (*write)(const struct xo_layer_spec *ls, json_t *cfg);
	bool build_config;
};
/* The InputLayer's keys (it adds no spec layer). */
static const struct class_row input_row = {
    {{"name", K_NAME}, {"dtype", K_IN_DTYPE}, {"batch_shape", K_SHAPE},
     {"batch_input_shape", K_SHAPE}, {"sparse", K_FALSE}, {"ragged", K_FALSE},
     {"optional", K_FALSE}},
    NULL,
    false};
/* The configs written back (below, with the .keras writer). */
static void conv_config(const struct xo_layer_spec *ls, json_t *cfg);
static void pool_config(const struct xo_layer_spec *ls, json_t *cfg);
static void global_pool_config(const struct xo_layer_spec *ls, json_t *cfg);
static void flatten_config(const struct xo_layer_spec *ls, json_t *cfg);
static void dropout_config(const struct xo_layer_spec *ls, json_t *cfg);
static void dense_config(const struct xo_layer_spec *ls, json_t *cfg);
static void activation_config(const struct xo_layer_spec *ls, json_t *cfg);
static void bn_config(const struct xo_layer_spec *ls, json_t *cfg);
static void rnn_config(const struct xo_layer_spec *ls, json_t *cfg);
static void embedding_config(const struct xo_layer_spec *ls, json_t *cfg);
static void zero_padding_config(const struct xo_layer_spec *ls, json_t *cfg);
static void cropping_config(const struct xo_layer_spec *ls, json_t *cfg);
static void up_sampling_config(const struct xo_layer_spec *ls, json_t *cfg);
static void ln_config(const struct xo_layer_spec *ls, json_t *cfg);
static void permute_config(const struct xo_layer_spec *ls, json_t *cfg);
static void repeat_vector_config(const struct xo_layer_spec *ls, json_t *cfg);
static void reshape_config(const struct xo_layer_spec *ls, json_t *cfg);
static void merge_config(const struct xo_layer_spec *ls, json_t *cfg);
static void mha_config(const struct xo_layer_spec *ls, json_t *cfg);
static void depthwise_config(const struct xo_layer_spec *ls, json_t *cfg);
static void separable_config(const struct xo_layer_spec *ls, json_t *cfg);
static void time_distributed_config(const struct xo_layer_spec *ls, json_t *cfg);
static void bidirectional_config(const struct xo_layer_spec *ls, json_t *cfg);
static void conv_transpose_config(const struct xo_layer_spec *ls, json_t *cfg);
static void relu_config(const struct xo_layer_spec *ls, json_t *cfg);
static void softmax_config(const struct xo_layer_spec *ls, json_t *cfg);
static void masking_config(const struct xo_layer_spec *ls, json_t *cfg);
static void rescaling_config(const struct xo_layer_spec *ls, json_t *cfg);
static void normalization_config(const struct xo_layer_spec *ls, json_t *cfg);
static void leaky_relu_config(const struct xo_layer_spec *ls, json_t *cfg);
static void elu_config(const struct xo_layer_spec *ls, json_t *cfg);
static const struct class_row classes[XO_LAYER_COUNT] = {
    [XO_LAYER_CONV1D] =
        {{COMMON_KEYS, NO_REG_KEYS, {"filters", K_INT}, {"kernel_size", K_INT}, {"strides", K_INT},
          {"padding", K_STR}, {"data_format", K_LAST}, {"dilation_rate", K_INT}, {"groups", K_ONE},
          {"activation", K_STR}, {"use_bias", K_BOOL}, {"batch_input_shape", K_SHAPE}},
         conv_config,
         true},
    [XO_LAYER_MAX_POOLING1D] =
        {{COMMON_KEYS, {"pool_size", K_INT}, {"strides", K_INT}, {"padding", K_STR},
          {"data_format", K_LAST}, {"batch_input_shape", K_SHAPE}},
         pool_config,
         false},
    [XO_LAYER_FLATTEN] =
        {{COMMON_KEYS, {"data_format", K_LAST}, {"batch_input_shape", K_SHAPE}},
         flatten_config,
         true},
    [XO_LAYER_DROPOUT] =
        {{COMMON_KEYS, {"rate", K_FLOAT}, {"seed", K_SKIP}, {"noise_shape", K_NULL},
          {"batch_input_shape", K_SHAPE}},
         dropout_config,
         false},
    [XO_LAYER_DENSE] =
        {{COMMON_KEYS, NO_REG_KEYS, {"units", K_INT}, {"activation", K_STR}, {"use_bias", K_BOOL},
          {"quantization_config", K_NULL}, {"lora_rank", K_NULL}, {"lora_alpha", K_SKIP},
          {"batch_input_shape", K_SHAPE}},
         dense_config,
         true},
    [XO_LAYER_ACTIVATION] =
        {{COMMON_KEYS, {"activation", K_STR}, {"batch_input_shape", K_SHAPE}},
         activation_config,
         false},
    [XO_LAYER_AVERAGE_POOLING1D] =
        {{COMMON_KEYS, {"pool_size", K_INT}, {"strides", K_INT}, {"padding", K_STR},
          {"data_format", K_LAST}, {"batch_input_shape", K_SHAPE}},
         pool_config,
         false},
    [XO_LAYER_GLOBAL_AVERAGE_POOLING1D] =
        {{COMMON_KEYS, {"data_format", K_LAST}, {"keepdims", K_TRUTH},
          {"batch_input_shape", K_SHAPE}},
         global_pool_config,
         false},
    [XO_LAYER_GLOBAL_MAX_POOLING1D] =
        {{COMMON_KEYS, {"data_format", K_LAST}, {"keepdims", K_TRUTH},
          {"batch_input_shape", K_SHAPE}},
         global_pool_config,
         false},
    /* keras/src/layers/pooling/base_pooling.py and base_global_pooling.py */
    [XO_LAYER_MAX_POOLING2D] =
        {{COMMON_KEYS, {"pool_size", K_PAIR}, {"strides", K_PAIR}, {"padding", K_STR},
          {"data_format", K_LAST}, {"batch_input_shape", K_SHAPE}},
         pool_config,
         false},
    [XO_LAYER_AVERAGE_POOLING2D] =
        {{COMMON_KEYS, {"pool_size", K_PAIR}, {"strides", K_PAIR}, {"padding", K_STR},
          {"data_format", K_LAST}, {"batch_input_shape", K_SHAPE}},
         pool_config,
         false},
    [XO_LAYER_GLOBAL_AVERAGE_POOLING2D] =
        {{COMMON_KEYS, {"data_format", K_LAST}, {"keepdims", K_TRUTH},
          {"batch_input_shape", K_SHAPE}},
         global_pool_config,
         false},
    [XO_LAYER_GLOBAL_MAX_POOLING2D] =
        {{COMMON_KEYS, {"data_format", K_LAST}, {"keepdims", K_TRUTH},
          {"batch_input_shape", K_SHAPE}},
         global_pool_config,
         false},
    /* keras/src/layers/convolutional/base_conv.py get_config(): the
     * initializers have no effect once the weights are loaded (xo's own
     * initialisation is Keras's default, Glorot-uniform and zeros) */
    [XO_LAYER_CONV2D] =
        {{COMMON_KEYS, NO_REG_KEYS, {"filters", K_INT}, {"kernel_size", K_PAIR}, {"strides", K_PAIR},
          {"padding", K_STR}, {"data_format", K_LAST}, {"dilation_rate", K_PAIR}, {"groups", K_ONE},
          {"activation", K_STR}, {"use_bias", K_BOOL}, {"batch_input_shape", K_SHAPE}},
         conv_config,
         true},
    /* keras/src/layers/normalization/batch_normalization.py get_config();
     * renorm_momentum has no effect without renorm; virtual_batch_size and
     * adjustment are Keras 2's */
    [XO_LAYER_BATCH_NORMALIZATION] =
        {{COMMON_KEYS, {"axis", K_AXIS}, {"momentum", K_FLOAT}, {"epsilon", K_FLOAT},
          {"center", K_BOOL}, {"scale", K_BOOL}, {"beta_initializer", K_ZEROS},
          {"gamma_initializer", K_ONES}, {"moving_mean_initializer", K_ZEROS},
          {"moving_variance_initializer", K_ONES}, {"beta_regularizer", K_NULL},
          {"gamma_regularizer", K_NULL}, {"beta_constraint", K_NULL}, {"gamma_constraint", K_NULL},
          {"synchronized", K_FALSE}, {"renorm", K_FALSE}, {"renorm_clipping", K_NULL},
          {"renorm_momentum", K_SKIP}, {"virtual_batch_size", K_NULL},
          {"adjustment", K_NULL}, {"batch_input_shape", K_SHAPE}},
         bn_config,
         true},
    /* keras/src/layers/core/embedding.py get_config(); the initializer has
     * no effect once weights are loaded; mask_zero=True makes Keras's mask,
     * which the spec parser propagates (or refuses where a layer would use
     * it); Keras 2's input_length only fixes the input shape */
    [XO_LAYER_EMBEDDING] =
        {{COMMON_KEYS, {"input_dim", K_INT}, {"output_dim", K_INT},
          {"embeddings_initializer", K_SKIP}, {"embeddings_regularizer", K_NULL},
          {"activity_regularizer", K_NULL}, {"embeddings_constraint", K_NULL},
          {"mask_zero", K_BOOL}, {"quantization_config", K_NULL}, {"lora_rank", K_NULL},
          {"lora_alpha", K_SKIP}, {"input_length", K_SKIP}, {"sparse", K_FALSE},
          {"batch_input_shape", K_SHAPE}},
         embedding_config,
         true},
    /* keras/src/layers/rnn/simple_rnn.py, lstm.py, gru.py get_config() (and
     * Keras 2's): dropout and recurrent_dropout must be 0, return_state,
     * stateful, unroll and time_major false (xo has no states between calls,
     * no second output, and checks only the loop form); initializers and
     * unit_forget_bias act before weights are loaded; use_cudnn and Keras
     * 2's implementation pick a kernel for the same math (the results are
     * checked against Keras within the fixture bounds either way);
     * seed matters only with dropout, which is refused; zero_output_for_mask
     * (a masked step's output: 0 or the carried state) is read (inside a
     * Bidirectional, Keras replaces it by return_sequences) */
#define RNN_KEYS                                                                               \
	COMMON_KEYS, {"units", K_INT}, {"activation", K_STR}, {"use_bias", K_BOOL},               \
	    {"return_sequences", K_BOOL}, {"go_backwards", K_BOOL}, {"return_state", K_FALSE},     \
	    {"stateful", K_FALSE}, {"unroll", K_FALSE}, {"time_major", K_FALSE},                   \
	    {"dropout", K_ZERO}, {"recurrent_dropout", K_ZERO}, {"kernel_initializer", K_SKIP},     \
	    {"recurrent_initializer", K_SKIP}, {"bias_initializer", K_SKIP},                      \
	    {"kernel_regularizer", K_NULL}, {"recurrent_regularizer", K_NULL},                    \
	    {"bias_regularizer", K_NULL}, {"activity_regularizer", K_NULL},                       \
	    {"kernel_constraint", K_NULL}, {"recurrent_constraint", K_NULL},                      \
	    {"bias_constraint", K_NULL}, {"seed", K_SKIP}, {"zero_output_for_mask", K_BOOL},      \
	    {"batch_input_shape", K_SHAPE}
    [XO_LAYER_SIMPLE_RNN] = {{RNN_KEYS}, rnn_config, true},
    [XO_LAYER_LSTM] =
        {{RNN_KEYS, {"recurrent_activation", K_STR}, {"unit_forget_bias", K_SKIP},
          {"use_cudnn", K_SKIP}, {"implementation", K_SKIP}},
         rnn_config,
         true},
    [XO_LAYER_GRU] =
        {{RNN_KEYS, {"recurrent_activation", K_STR}, {"reset_after", K_BOOL},
          {"use_cudnn", K_SKIP}, {"implementation", K_SKIP}},
         rnn_config,
         true},
    /* keras/src/layers/reshaping/zero_padding1d.py get_config() */
    [XO_LAYER_ZERO_PADDING1D] =
        {{COMMON_KEYS, {"padding", K_MARGINS}, {"data_format", K_LAST},
          {"batch_input_shape", K_SHAPE}},
         zero_padding_config,
         true},
    /* keras/src/layers/reshaping/cropping1d.py get_config() (no data_format) */
    [XO_LAYER_CROPPING1D] =
        {{COMMON_KEYS, {"cropping", K_MARGINS}, {"batch_input_shape", K_SHAPE}},
         cropping_config,
         true},
    /* keras/src/layers/reshaping/up_sampling1d.py get_config() (no data_format) */
    [XO_LAYER_UP_SAMPLING1D] =
        {{COMMON_KEYS, {"size", K_SIZE}, {"batch_input_shape", K_SHAPE}},
         up_sampling_config,
         true},
    /* keras/src/layers/reshaping/zero_padding2d.py, cropping2d.py,
     * up_sampling2d.py get_config(); interpolation: the spec refuses all
     * but nearest */
    [XO_LAYER_ZERO_PADDING2D] =
        {{COMMON_KEYS, {"padding", K_MARGINS2}, {"data_format", K_LAST},
          {"batch_input_shape", K_SHAPE}},
         zero_padding_config,
         true},
    [XO_LAYER_CROPPING2D] =
        {{COMMON_KEYS, {"cropping", K_MARGINS2}, {"data_format", K_LAST},
          {"batch_input_shape", K_SHAPE}},
         cropping_config,
         true},
    [XO_LAYER_UP_SAMPLING2D] =
        {{COMMON_KEYS, {"size", K_SIZE2}, {"data_format", K_LAST}, {"interpolation", K_STR},
          {"batch_input_shape", K_SHAPE}},
         up_sampling_config,
         true},
    /* keras/src/layers/normalization/layer_normalization.py get_config():
     * axis -1 only (Keras writes [-1] once built); rms_scaling=True (a
     * different formula, deprecated in Keras 3) refused */
    [XO_LAYER_LAYER_NORMALIZATION] =
        {{COMMON_KEYS, {"axis", K_AXIS}, {"epsilon", K_FLOAT}, {"center", K_BOOL},
          {"scale", K_BOOL}, {"rms_scaling", K_FALSE}, {"beta_initializer", K_ZEROS},
          {"gamma_initializer", K_ONES}, {"beta_regularizer", K_NULL},
          {"gamma_regularizer", K_NULL}, {"beta_constraint", K_NULL}, {"gamma_constraint", K_NULL},
          {"batch_input_shape", K_SHAPE}},
         ln_config,
         true},
    /* keras/src/layers/reshaping/permute.py get_config(): dims */
    [XO_LAYER_PERMUTE] =
        {{COMMON_KEYS, {"dims", K_INTS}, {"batch_input_shape", K_SHAPE}}, permute_config, true},
    /* keras/src/layers/reshaping/repeat_vector.py get_config(): n */
    [XO_LAYER_REPEAT_VECTOR] =
        {{COMMON_KEYS, {"n", K_INT}, {"batch_input_shape", K_SHAPE}}, repeat_vector_config, true},
    /* keras/src/layers/reshaping/reshape.py get_config(): target_shape; no
     * build_config (its __init__ sets built, so Keras records no shape) */
    [XO_LAYER_RESHAPE] =
        {{COMMON_KEYS, {"target_shape", K_INTS}, {"batch_input_shape", K_SHAPE}}, reshape_config,
         false},
    /* keras/src/layers/rnn/time_distributed.py get_config(): layer, the
     * wrapped layer's serialized config (Dense or Conv1D) */
    [XO_LAYER_TIME_DISTRIBUTED] =
        {{COMMON_KEYS, {"layer", K_LAYER}, {"batch_input_shape", K_SHAPE}},
         time_distributed_config,
         true},
    /* keras/src/layers/convolutional/base_conv_transpose.py get_config();
     * the spec refuses dilation other than 1 */
    [XO_LAYER_CONV2D_TRANSPOSE] =
        {{COMMON_KEYS, NO_REG_KEYS, {"filters", K_INT}, {"kernel_size", K_PAIR}, {"strides", K_PAIR},
          {"padding", K_STR}, {"output_padding", K_PAIR}, {"data_format", K_LAST},
          {"dilation_rate", K_PAIR}, {"activation", K_STR}, {"use_bias", K_BOOL},
          {"batch_input_shape", K_SHAPE}},
         conv_transpose_config,
         true},
    [XO_LAYER_CONV1D_TRANSPOSE] =
        {{COMMON_KEYS, NO_REG_KEYS, {"filters", K_INT}, {"kernel_size", K_INT}, {"strides", K_INT},
          {"padding", K_STR}, {"output_padding", K_INT}, {"data_format", K_LAST},
          {"dilation_rate", K_INT}, {"activation", K_STR}, {"use_bias", K_BOOL},
          {"batch_input_shape", K_SHAPE}},
         conv_transpose_config,
         true},
    /* keras/src/layers/merging/add.py, subtract.py, multiply.py, average.py,
     * maximum.py, minimum.py: Merge's config is the base layer's */
    [XO_LAYER_ADD] = {{COMMON_KEYS}, merge_config, true},
    [XO_LAYER_SUBTRACT] = {{COMMON_KEYS}, merge_config, true},
    [XO_LAYER_MULTIPLY] = {{COMMON_KEYS}, merge_config, true},
    [XO_LAYER_AVERAGE] = {{COMMON_KEYS}, merge_config, true},
    [XO_LAYER_MAXIMUM] = {{COMMON_KEYS}, merge_config, true},
    [XO_LAYER_MINIMUM] = {{COMMON_KEYS}, merge_config, true},
    /* keras/src/layers/merging/concatenate.py get_config(): axis, any
     * axis of the sample (the batch axis refused by the spec) */
    [XO_LAYER_CONCATENATE] = {{COMMON_KEYS, {"axis", K_AXIS}}, merge_config, true},
    /* keras/src/layers/convolutional/base_depthwise_conv.py get_config():
     * the initializers have no effect once the weights are loaded; the
     * spec refuses dilation other than 1 */
#define DEPTHWISE_KEYS                                                                         \
	COMMON_KEYS, {"depth_multiplier", K_INT}, {"padding", K_STR}, {"data_format", K_LAST},    \
	    {"activation", K_STR}, {"use_bias", K_BOOL}, {"depthwise_initializer", K_SKIP},       \
	    {"bias_initializer", K_SKIP}, {"depthwise_regularizer", K_NULL},                      \
	    {"bias_regularizer", K_NULL}, {"activity_regularizer", K_NULL},                       \
	    {"depthwise_constraint", K_NULL}, {"bias_constraint", K_NULL},                        \
	    {"batch_input_shape", K_SHAPE}
    [XO_LAYER_DEPTHWISE_CONV2D] =
        {{DEPTHWISE_KEYS, {"kernel_size", K_PAIR}, {"strides", K_PAIR}, {"dilation_rate", K_PAIR}},
         depthwise_config,
         true},
    [XO_LAYER_DEPTHWISE_CONV1D] =
        {{DEPTHWISE_KEYS, {"kernel_size", K_INT}, {"strides", K_INT}, {"dilation_rate", K_INT}},
         depthwise_config,
         true},
    /* keras/src/layers/convolutional/base_separable_conv.py get_config():
     * the depthwise keys, filters and the pointwise kernel's initializer,
     * regularizer and constraint */
    [XO_LAYER_SEPARABLE_CONV2D] =
        {{DEPTHWISE_KEYS, {"filters", K_INT}, {"kernel_size", K_PAIR}, {"strides", K_PAIR},
          {"dilation_rate", K_PAIR}, {"pointwise_initializer", K_SKIP},
          {"pointwise_regularizer", K_NULL}, {"pointwise_constraint", K_NULL}},
         separable_config,
         true},
    [XO_LAYER_SEPARABLE_CONV1D] =
        {{DEPTHWISE_KEYS, {"filters", K_INT}, {"kernel_size", K_INT}, {"strides", K_INT},
          {"dilation_rate", K_INT}, {"pointwise_initializer", K_SKIP},
          {"pointwise_regularizer", K_NULL}, {"pointwise_constraint", K_NULL}},
         separable_config,
         true},
    /* keras/src/layers/rnn/bidirectional.py get_config(): merge_mode (None,
     * two outputs, refused), layer (the forward RNN serialized: SimpleRNN,
     * LSTM or GRU, read by its own class row) and backward_layer (Keras
     * writes the mirror it builds of layer; any other is refused naming
     * the key that differs) */
    [XO_LAYER_BIDIRECTIONAL] =
        {{COMMON_KEYS, {"merge_mode", K_STR}, {"layer", K_RNN}, {"backward_layer", K_MIRROR},
          {"batch_input_shape", K_SHAPE}},
         bidirectional_config,
         true},
    /* keras/src/layers/attention/multi_head_attention.py get_config():
     * dropout (on the attention probabilities, in training: the spec's
     * dropout=, checked there); use_gate (a gated output) and sliding_window refused; the
     * initializers act before weights are loaded; seed is Keras's dropout
     * RNG, which xo does not reproduce (its mask is the dropout op's). Its build_config is the call's shapes_dict (functional_wiring) */
    [XO_LAYER_MULTI_HEAD_ATTENTION] =
        {{COMMON_KEYS, {"num_heads", K_INT}, {"key_dim", K_INT}, {"value_dim", K_OPT_INT},
          {"dropout", K_FLOAT}, {"use_bias", K_BOOL}, {"use_gate", K_FALSE},
          {"output_shape", K_OPT_INT}, {"attention_axes", K_AXES1}, {"sliding_window", K_NULL},
          {"seed", K_SKIP}, NO_REG_KEYS},
         mha_config,
         false},
    [XO_LAYER_RE_LU] =
        {{COMMON_KEYS, {"max_value", K_OPT_FLOAT}, {"negative_slope", K_FLOAT},
          {"threshold", K_FLOAT}, {"batch_input_shape", K_SHAPE}},
         relu_config,
         false},
    [XO_LAYER_SOFTMAX] =
        {{COMMON_KEYS, {"axis", K_AXIS}, {"batch_input_shape", K_SHAPE}},
         softmax_config,
         false},
    [XO_LAYER_MASKING] =
        {{COMMON_KEYS, {"mask_value", K_FLOAT}, {"batch_input_shape", K_SHAPE}},
         masking_config,
         false},
    /* keras/src/layers/preprocessing/rescaling.py get_config(): scale, offset */
    [XO_LAYER_RESCALING] =
        {{COMMON_KEYS, {"scale", K_SCALAR}, {"offset", K_SCALAR}, {"batch_input_shape", K_SHAPE}},
         rescaling_config,
         false},
    /* keras/src/layers/preprocessing/normalization.py get_config(): axis,
     * invert, mean, variance (null when adapted); its build_config the
     * input shape */
    [XO_LAYER_NORMALIZATION] =
        {{COMMON_KEYS, {"axis", K_AXIS}, {"invert", K_BOOL}, {"mean", K_OPT_SCALAR},
          {"variance", K_OPT_SCALAR}, {"batch_input_shape", K_SHAPE}},
         normalization_config,
         true},
    /* keras/src/layers/activations/leaky_relu.py get_config(): negative_slope;
     * alpha is the name Keras 2 wrote, which Keras 3's constructor still
     * reads as negative_slope */
    [XO_LAYER_LEAKY_RE_LU] =
        {{COMMON_KEYS, {"negative_slope", K_FLOAT}, {"alpha", K_FLOAT},
          {"batch_input_shape", K_SHAPE}},
         leaky_relu_config,
         false},
    /* keras/src/layers/activations/elu.py get_config(): alpha */
    [XO_LAYER_ELU] =
        {{COMMON_KEYS, {"alpha", K_FLOAT}, {"batch_input_shape", K_SHAPE}},
         elu_config,
         false},
};

/* The call arguments Keras records in a functional node's kwargs for a
 * kind whose call takes them (KW_TRAINING: "training": false, KW_MASK:
 * "mask": null), written back as Keras writes them; 0 for the others. */
enum { KW_TRAINING = 1, KW_MASK = 2 };
static const unsigned call_kwargs[XO_LAYER_COUNT] = {
    [XO_LAYER_DROPOUT] = KW_TRAINING,
    [XO_LAYER_GLOBAL_AVERAGE_POOLING1D] = KW_MASK,
    [XO_LAYER_BATCH_NORMALIZATION] = KW_MASK,
    [XO_LAYER_SIMPLE_RNN] = KW_TRAINING | KW_MASK,
    [XO_LAYER_LSTM] = KW_TRAINING | KW_MASK,
    [XO_LAYER_GRU] = KW_TRAINING | KW_MASK,
    [XO_LAYER_BIDIRECTIONAL] = KW_MASK,
    [XO_LAYER_SOFTMAX] = KW_MASK,
};

/* A growing string. */
struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};
static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->s && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap ? b->cap * 2 : 256) + (size_t)n;
		char *s = realloc(b->s, cap);

		if (!s) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

/* One layer being mapped, for messages. */
struct lctx {
	const char *origin, *name, *cls;
	const json_t *cfg; /* the layer's config (NULL outside a layer) */
};
#define LAYER_ERR(c, st, fmt, ...)                                                      \
	xo_error(st, "%s: layer '%s' (%s): " fmt, (c)->origin, (c)->name, (c)->cls, __VA_ARGS__)

/* A Keras 3 entry {"module", "class_name", "registered_name", ...} names
 * one of Keras's own classes when its module (if given) is in the keras
 * package and its registered_name is null or the class name itself (Keras
 * writes "Functional" for its functional model). A class its user
 * registered ("registered_name": "pkg>Dense", "module": "pkg" or
 * "__main__" or null) may keep a built-in's class_name and compute
 * something else, so it is not read as the built-in: Keras itself needs
 * the user's code to load it. Legacy .h5 configs carry neither key. NULL
 * for a built-in; else the name to show (the registered name, or the
 * module). */
static const char *custom_class(const json_t *entry)
{
	const json_t *mod = json_object_get(entry, "module");
	const json_t *reg = json_object_get(entry, "registered_name");
	const char *cls = json_string_value(json_object_get(entry, "class_name"));
	const char *m = json_string_value(mod);

	if (reg && !json_is_null(reg) &&
	    !(json_is_string(reg) && cls && !strcmp(json_string_value(reg), cls)))
		return json_is_string(reg) ? json_string_value(reg) : "?";
	if (mod && !json_is_null(mod) &&
	    !(m && (!strcmp(m, "keras") || !strncmp(m, "keras.", 6))))
		return m ? m : "?";
	return NULL;
}

/* xo_error for a custom class in entry (WHAT names where it is), or XO_OK. */
static enum xo_status builtin_check(const json_t *entry, const char *origin, const char *what)
{
	const char *custom = custom_class(entry);
	const char *cls = json_string_value(json_object_get(entry, "class_name"));

	if (!custom)
		return XO_OK;
	return xo_error(XO_EINVAL,
	                "%s: %s: class '%.64s' is a custom class ('%.64s'), not Keras's own: "
	                "custom classes are not supported",
	                origin, what, cls ? cls : "?", custom);
}

/* The same for entry inside layer c (WHERE: "" for the layer itself, else
 * the key it sits under, "layer: "). */
static enum xo_status layer_builtin(const struct lctx *c, const json_t *entry, const char *where)
{
	const char *custom = custom_class(entry);
	const char *cls = json_string_value(json_object_get(entry, "class_name"));

	if (!custom)
		return XO_OK;
	return LAYER_ERR(c, XO_EINVAL,
	                 "%sa custom class ('%.64s'), not Keras's own %.64s: custom classes are "
	                 "not supported",
	                 where, custom, cls ? cls : "?");
}

static bool dtype_ok(const json_t *v)
{
	if (json_is_null(v))
		return true;
	if (json_is_string(v))
		return !strcmp(json_string_value(v), "float32");
	if (json_is_object(v)) {
		const json_t *cls = json_object_get(v, "class_name");
		const json_t *cfg = json_object_get(v, "config");
		const json_t *nm = json_is_object(cfg) ? json_object_get(cfg, "name") : NULL;

		return json_is_string(cls) && !strcmp(json_string_value(cls), "DTypePolicy") &&
		       json_is_string(nm) && !strcmp(json_string_value(nm), "float32");
	}
	return false;
}

/* A positive int, or a list of exactly one. */
static bool int_value(const json_t *v, json_int_t *out)
{
	if (json_is_null(v)) {
		*out = -1; /* Keras's None: the default */
		return true;
	}
	/* a 1-tuple holds its int; [null] is no value Keras loads */
	if (json_is_array(v) && json_array_size(v) == 1)
		v = json_array_get(v, 0);
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX)
		return false;
	*out = json_integer_value(v);
	return true;
}

/* The input shape [null, d1 (, d2 (, d3))] as spec text "input d1 d2 d3". */
static enum xo_status shape_line(const struct lctx *c, const char *key, const json_t *v,
                                 struct sbuf *spec)
{
	size_t n = json_is_array(v) ? json_array_size(v) : 0;

	if (n < 2 || n > 4 || !json_is_null(json_array_get(v, 0)))
		return LAYER_ERR(c, XO_EFORMAT,
		                 "%s: expected [None, height, width, channels], [None, steps, "
		                 "channels] or [None, features]",
		                 key);
	sb_printf(spec, "input");
	for (size_t i = 1; i < n; i++) {
		const json_t *d = json_array_get(v, i);

		if (!json_is_integer(d) || json_integer_value(d) < 1 ||
		    json_integer_value(d) > INT32_MAX)
			return LAYER_ERR(c, XO_EFORMAT, "%s: dimension %zu is not a positive integer",
			                 key, i);
		sb_printf(spec, " %" JSON_INTEGER_FORMAT, json_integer_value(d));
	}
	sb_printf(spec, "\n");
	return XO_OK;
}

/* A K_MARGINS value as the spec's comma list: an int, a list of ints or a
 * list of lists of ints (Keras's standardized tuples), every one in
 * [0, INT32_MAX]; at most 4 in all. */
/* A margin as Keras's standardize_tuple(v, 2, allow_zero=True) takes it:
 * an int (both sides) or exactly [begin, end], each in [0, INT32_MAX]. */
static bool margin_pair(const json_t *v, json_int_t m[2])
{
	const json_t *a = v, *b = v;

	if (json_is_array(v)) {
		if (json_array_size(v) != 2)
			return false;
		a = json_array_get(v, 0);
		b = json_array_get(v, 1);
	}
	if (!json_is_integer(a) || !json_is_integer(b))
		return false;
	m[0] = json_integer_value(a);
	m[1] = json_integer_value(b);
	return m[0] >= 0 && m[1] >= 0 && m[0] <= INT32_MAX && m[1] <= INT32_MAX;
}

/* ZeroPadding / Cropping margins as Keras 3's constructors accept them
 * (keras/src/layers/reshaping/zero_padding{1,2}d.py, cropping{1,2}d.py):
 * 1-D a margin pair; 2-D an int (all four) or exactly [h, w], each a
 * margin pair. Anything else ([[1, 1]], [1], null) Keras refuses. */
static bool margins_arg(const json_t *v, bool two_d, const char *key, struct sbuf *args)
{
	json_int_t m[4];

	if (!two_d || !json_is_array(v)) {
		if (!margin_pair(v, m) || (two_d && m[0] != m[1]))
			return false;
		m[2] = m[0];
		m[3] = m[1];
	} else if (json_array_size(v) != 2 || !margin_pair(json_array_get(v, 0), m) ||
	           !margin_pair(json_array_get(v, 1), m + 2)) {
		return false;
	}
	sb_printf(args, " %s=%" JSON_INTEGER_FORMAT ",%" JSON_INTEGER_FORMAT, key, m[0], m[1]);
	if (two_d)
		sb_printf(args, ",%" JSON_INTEGER_FORMAT ",%" JSON_INTEGER_FORMAT, m[2], m[3]);
	return true;
}

/* A K_INTS value (a list of 1 to 4 integers within int32) as the spec's comma list. */
static bool ints_arg(const json_t *v, const char *key, struct sbuf *args)
{
	size_t n = json_is_array(v) ? json_array_size(v) : 0;

	if (n < 1 || n > 4)
		return false;
	for (size_t i = 0; i < n; i++) {
		const json_t *x = json_array_get(v, i);

		if (!json_is_integer(x) || json_integer_value(x) < INT32_MIN ||
		    json_integer_value(x) > INT32_MAX)
			return false;
	}
	sb_printf(args, " %s=", key);
	for (size_t i = 0; i < n; i++)
		sb_printf(args, "%s%" JSON_INTEGER_FORMAT, i ? "," : "",
		          json_integer_value(json_array_get(v, i)));
	return true;
}

/* UpSampling sizes: positive ints (Keras's int(size) for 1-D; for 2-D an int
 * or exactly [h, w], standardize_tuple without zero). */
static bool size_value(const json_t *v, json_int_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > INT32_MAX)
		return false;
	*out = json_integer_value(v);
	return true;
}

static bool size2_arg(const json_t *v, const char *key, struct sbuf *args)
{
	json_int_t h, w;

	if (json_is_array(v)) {
		if (json_array_size(v) != 2 || !size_value(json_array_get(v, 0), &h) ||
		    !size_value(json_array_get(v, 1), &w))
			return false;
	} else if (!size_value(v, &h)) {
		return false;
	} else {
		w = h;
	}
	sb_printf(args, " %s=%" JSON_INTEGER_FORMAT " %s_w=%" JSON_INTEGER_FORMAT, key, h, key, w);
	return true;
}

/* Batch-/LayerNormalization's axis: -1 ([-1]) passes; a positive index is
 * Keras's name of an axis counting the batch axis, passed on for the spec
 * to check it is the last once the input's rank is known; the rest is
 * refused naming the value as Keras wrote it ([1, 2], -2, ...). */
static enum xo_status axis_arg(const struct lctx *c, const json_t *v, struct sbuf *args)
{
	const json_t *a = json_is_array(v) && json_array_size(v) == 1 ? json_array_get(v, 0) : v;
	enum xo_status st = XO_OK;

	if (json_is_integer(v) && !strcmp(c->cls, "Concatenate") && json_integer_value(v) >= -4 &&
	    json_integer_value(v) <= 3) {
		/* any axis (an integer, as Keras's ops.concatenate takes it),
		 * resolved and checked by the spec against the inputs' rank */
		sb_printf(args, " axis=%" JSON_INTEGER_FORMAT, json_integer_value(v));
	} else if (json_is_integer(a) && json_integer_value(a) >= 1 && json_integer_value(a) <= 3) {
		sb_printf(args, " axis=%" JSON_INTEGER_FORMAT, json_integer_value(a));
	} else if (!json_is_integer(a) || json_integer_value(a) != -1) {
		char *got = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_ENSURE_ASCII);

		st = LAYER_ERR(c, XO_EINVAL, "axis: only -1 (the last axis, channels) is supported, "
		                             "got axis=%.60s", got ? got : "?");
		free(got);
	}
	return st;
}

/* The reshaping layers' margins and sizes (rules K_MARGINS, K_MARGINS2,
 * K_SIZE, K_SIZE2), as Keras 3's constructors accept them. */
static enum xo_status resize_arg(const struct lctx *c, enum key_rule rule, const char *key,
                                 const json_t *v, struct sbuf *args)
{
	json_int_t iv;

	switch (rule) {
	case K_MARGINS:
		if (!margins_arg(v, false, key, args))
			return LAYER_ERR(c, XO_EINVAL,
			                 "%s: expected a non-negative integer or two ([begin, end])",
			                 key);
		break;
	case K_MARGINS2:
		if (!margins_arg(v, true, key, args))
			return LAYER_ERR(c, XO_EINVAL,
			                 "%s: expected a non-negative integer or two (height, width), "
			                 "each an integer or [begin, end]",
			                 key);
		break;
	case K_SIZE:
		if (!size_value(v, &iv))
			return LAYER_ERR(c, XO_EINVAL, "%s: expected a positive integer", key);
		sb_printf(args, " %s=%" JSON_INTEGER_FORMAT, key, iv);
		break;
	default:
		if (!size2_arg(v, key, args))
			return LAYER_ERR(c, XO_EINVAL,
			                 "%s: expected a positive integer or two (height, width)", key);
		break;
	}
	return XO_OK;
}

/* A (height, width) key: pool_size=(2, 3) -> pool_size=2 pool_w=3; an int
 * (or [n]) is both axes; None (strides) the default. */
static enum xo_status pair_arg(const struct lctx *c, const char *key, const json_t *v,
                               struct sbuf *args)
{
	const char *wkey = !strcmp(key, "strides")          ? "strides_w"
	                   : !strcmp(key, "kernel_size")    ? "kernel_w"
	                   : !strcmp(key, "dilation_rate")  ? "dilation_w"
	                   : !strcmp(key, "size")           ? "size_w"
	                   : !strcmp(key, "output_padding") ? "output_padding_w"
	                                                    : "pool_w";
	json_int_t iv, iw;

	if (json_is_array(v) && json_array_size(v) == 2) {
		if (!int_value(json_array_get(v, 0), &iv) || !int_value(json_array_get(v, 1), &iw) ||
		    iv < 0 || iw < 0)
			return LAYER_ERR(c, XO_EINVAL, "%s: expected an integer or two (height, width)",
			                 key);
		sb_printf(args, " %s=%" JSON_INTEGER_FORMAT " %s=%" JSON_INTEGER_FORMAT, key, iv, wkey,
		          iw);
	} else if (!int_value(v, &iv)) {
		return LAYER_ERR(c, XO_EINVAL, "%s: expected an integer or two (height, width)", key);
	} else if (iv >= 0) {
		sb_printf(args, " %s=%" JSON_INTEGER_FORMAT, key, iv);
	}
	return XO_OK;
}

/* One key of a layer's config by its rule k: checked, and written to args
 * as spec arguments (or, for the input shape, as the input line to spec). */
static enum xo_status wrapped_arg(const struct lctx *c, const json_t *v, bool rnn,
                                  struct sbuf *args);
static enum xo_status mirror_check(const struct lctx *c, const json_t *v);

/* x as the shortest decimal that reads back as the same double (0.1, not
 * 0.10000000000000001): spec arguments the user's messages quote. */
static const char *shortest(double x, char buf[32])
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, 32, "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	return buf;
}

/* padding=VALUE lowercased, as Keras's standardize_padding reads it
 * ("SAME" is same); the spec parser checks the word. */
static void padding_arg(const char *v, struct sbuf *args)
{
	sb_printf(args, " padding=");
	for (; *v; v++)
		sb_printf(args, "%c", *v >= 'A' && *v <= 'Z' ? *v - 'A' + 'a' : *v);
}

/* Whether key may be null (Keras's None) in a layer of class cls: strides
 * only in a pooling layer (None: the pool size); a convolution's strides
 * and dilation_rate Keras refuses as None (standardize_tuple). */
static bool null_refused(const char *cls, const char *key)
{
	return (!strcmp(key, "strides") && !strstr(cls, "Pooling")) ||
	       !strcmp(key, "dilation_rate");
}

/* K_SCALAR: K_FLOAT's number; Keras's per-channel form (a list, or a NumPy
 * array serialized as an object) refused */
static enum xo_status scalar_arg(const struct lctx *c, const char *key, const json_t *v,
                                 struct sbuf *args)
{
	char num[32];

	if (json_is_array(v) || json_is_object(v))
		return LAYER_ERR(c, XO_EINVAL,
		                 "%s: a per-channel list is not supported (one number only)", key);
	if (!json_is_number(v))
		return LAYER_ERR(c, XO_EINVAL, "%s: expected a number", key);
	sb_printf(args, " %s=%s", key, shortest(json_number_value(v), num));
	return XO_OK;
}

/* Python's truth of a bool, null or number (false for anything else). */
static bool json_truth(const json_t *v)
{
	return json_is_true(v) || (json_is_number(v) && json_number_value(v) != 0.0);
}

/* K_FALSE: false only; K_TRUTH: Python's truth of a bool, null or number,
 * " key=True" when true. */
static enum xo_status flag_arg(const struct lctx *c, enum key_rule rule, const char *key,
                               const json_t *v, struct sbuf *args)
{
	if (rule == K_FALSE) {
		if (!json_is_false(v))
			return LAYER_ERR(c, XO_EINVAL, "%s=true is not supported", key);
		return XO_OK;
	}
	if (!json_is_boolean(v) && !json_is_null(v) && !json_is_number(v))
		return LAYER_ERR(c, XO_EINVAL, "%s: expected true, false, null or a number", key);
	if (json_truth(v))
		sb_printf(args, " %s=True", key);
	return XO_OK;
}

static enum xo_status key_arg(const struct lctx *c, const struct key_row *k, const char *key,
                              const json_t *v, bool *have_input, struct sbuf *spec,
                              struct sbuf *args)
{
	enum xo_status st = XO_OK;
	char num[32];
	json_int_t iv;

	switch (k->rule) {
	case K_NAME:
		break; /* c->name, written below */
	case K_OPT_INT:
		if (json_is_null(v))
			break;
		/* fall through */
	case K_INT:
		if (json_is_null(v) && null_refused(c->cls, key))
			st = LAYER_ERR(c, XO_EINVAL, "%s: expected one positive integer (Keras refuses "
			                             "None)", key);
		else if (!int_value(v, &iv))
			st = LAYER_ERR(c, XO_EINVAL, "%s: expected one non-negative integer",
			               key);
		else if (iv >= 0)
			sb_printf(args, " %s=%" JSON_INTEGER_FORMAT, key, iv);
		break;
	case K_STR:
		if (json_is_null(v) && !strcmp(key, "merge_mode"))
			st = LAYER_ERR(c, XO_EINVAL, "merge_mode=None is not supported (Bidirectional "
			                             "then returns two tensors)%s", "");
		else if (!json_is_string(v) || !*json_string_value(v) ||
		    strpbrk(json_string_value(v), " \t\r\n#="))
			st = LAYER_ERR(c, XO_EINVAL, "%s: expected a name (a custom %s is not "
			                             "supported)", key, key);
		else if (!strcmp(key, "padding")) /* Keras lowercases it (standardize_padding) */
			padding_arg(json_string_value(v), args);
		else
			sb_printf(args, " %s=%s", key, json_string_value(v));
		break;
	case K_BOOL:
		if (!json_is_boolean(v))
			st = LAYER_ERR(c, XO_EINVAL, "%s: expected true or false", key);
		else
			sb_printf(args, " %s=%s", key, json_is_true(v) ? "True" : "False");
		break;
	case K_OPT_FLOAT:
		if (json_is_null(v))
			break;
		/* fall through */
	case K_FLOAT:
		if (!json_is_number(v))
			st = LAYER_ERR(c, XO_EINVAL, "%s: expected a number", key);
		else
			sb_printf(args, " %s=%s", key, shortest(json_number_value(v), num));
		break;
	case K_OPT_SCALAR:
	case K_SCALAR:
		st = k->rule == K_OPT_SCALAR && json_is_null(v) ? XO_OK : scalar_arg(c, key, v, args);
		break;
	case K_SKIP:
		break;
	case K_NULL:
		if (!json_is_null(v))
			st = LAYER_ERR(c, XO_EINVAL, "%s is not supported", key);
		break;
	case K_AXES1:
		if (!json_is_null(v) && !(int_value(v, &iv) && iv == 1))
			st = LAYER_ERR(c, XO_EINVAL, "%s: only the steps axis (null or [1]) is supported",
			               key);
		break;
	case K_LAST:
		if (!json_is_string(v) || strcmp(json_string_value(v), "channels_last"))
			st = LAYER_ERR(c, XO_EINVAL, "%s: only channels_last is supported", key);
		break;
	case K_ONE:
		if (!json_is_integer(v) || json_integer_value(v) != 1)
			st = LAYER_ERR(c, XO_EINVAL, "%s: only 1 is supported", key);
		break;
	case K_FALSE:
	case K_TRUTH:
		st = flag_arg(c, k->rule, key, v, args);
		break;
	case K_TRUE:
		if (!json_is_true(v))
			st = LAYER_ERR(c, XO_EINVAL, "%s=false (a frozen layer) is not supported",
			               key);
		break;
	case K_ZERO:
		if (!json_is_number(v) || json_number_value(v) != 0.0)
			st = LAYER_ERR(c, XO_EINVAL, "%s=%g is not supported (only 0)", key,
			               json_is_number(v) ? json_number_value(v) : -1.0);
		break;
	case K_IN_DTYPE: /* the embedding's line makes the input int32; bool: layer_line */
		if (json_is_string(v) && !strcmp(json_string_value(v), "bool"))
			break;
		if (!dtype_ok(v) &&
		    !(json_is_string(v) && (!strcmp(json_string_value(v), "int32") ||
		                            !strcmp(json_string_value(v), "int64"))))
			st = LAYER_ERR(c, XO_EINVAL, "dtype: only float32, int32 or int64 is "
			                             "supported%s", "");
		break;
	case K_DTYPE:
		if (!dtype_ok(v))
			st = LAYER_ERR(c, XO_EINVAL, "dtype: only float32 is supported%s", "");
		break;
	case K_AXIS:
		st = axis_arg(c, v, args);
		break;
	case K_ONES:
	case K_ZEROS: {
		const json_t *cn = json_is_object(v) ? json_object_get(v, "class_name") : NULL;
		const char *want = k->rule == K_ONES ? "Ones" : "Zeros";

		if (!json_is_string(cn) || strcmp(json_string_value(cn), want))
			st = LAYER_ERR(c, XO_EINVAL, "%s: only %s (the default) is supported",
			               key, want);
		break;
	}
	case K_PAIR:
		if (json_is_null(v) && null_refused(c->cls, key))
			st = LAYER_ERR(c, XO_EINVAL, "%s: expected an integer or two (height, width) "
			                             "(Keras refuses None)", key);
		else
			st = pair_arg(c, key, v, args);
		break;
	case K_MARGINS:
	case K_MARGINS2:
	case K_SIZE:
	case K_SIZE2:
		st = resize_arg(c, k->rule, key, v, args);
		break;
	case K_LAYER:
	case K_RNN:
		st = wrapped_arg(c, v, k->rule == K_RNN, args);
		break;
	case K_MIRROR:
		st = mirror_check(c, v);
		break;
	case K_INTS:
		if (!ints_arg(v, key, args))
			st = LAYER_ERR(c, XO_EINVAL, "%s: expected a list of 1 to 4 integers", key);
		break;
	case K_SHAPE:
		if (*have_input)
			st = LAYER_ERR(c, XO_EINVAL, "%s after the input is not supported", key);
		else if (!(st = shape_line(c, key, v, spec)))
			*have_input = true;
		break;
	}
	return st;
}

/* TimeDistributed's layer (Keras's serialize_keras_object of the wrapped
 * layer): its class, Dense or Conv1D (anything else refused naming it), and
 * its config read by that class's row, as " layer=kind" and its arguments.
 * Its name, module and build_config have no effect (xo writes the kind's
 * name back); an input shape inside it is refused as one after the input. */
static enum xo_status wrapped_arg(const struct lctx *c, const json_t *v, bool rnn,
                                  struct sbuf *args)
{
	const json_t *lc = json_is_object(v) ? json_object_get(v, "class_name") : NULL;
	const json_t *cfg = json_is_object(v) ? json_object_get(v, "config") : NULL;
	const json_t *val;
	const char *key;
	enum xo_layer_kind kind;
	bool have_input = true;
	enum xo_status st = XO_OK;

	if (!json_is_string(lc) || !json_is_object(cfg))
		return LAYER_ERR(c, XO_EINVAL, "layer: expected a layer's class_name and config%s",
		                 "");
	if ((st = layer_builtin(c, v, "layer: ")))
		return st;
	if (rnn) {
		int k = XO_LAYER_SIMPLE_RNN;

		while (k <= XO_LAYER_GRU && strcmp(json_string_value(lc), xo_layer_kinds[k].keras))
			k++;
		if (k > XO_LAYER_GRU)
			return LAYER_ERR(c, XO_EINVAL, "Bidirectional over %s is not supported "
			                               "(SimpleRNN, LSTM or GRU)", json_string_value(lc));
		kind = (enum xo_layer_kind)k;
	} else if (!strcmp(json_string_value(lc), "Dense"))
		kind = XO_LAYER_DENSE;
	else if (!strcmp(json_string_value(lc), "Conv1D"))
		kind = XO_LAYER_CONV1D;
	else
		return LAYER_ERR(c, XO_EINVAL, "TimeDistributed over %s is not supported (Dense or "
		                               "Conv1D)", json_string_value(lc));
	sb_printf(args, " layer=%s", xo_spec_kind_name(kind));
	json_object_foreach((json_t *)cfg, key, val) {
		const struct key_row *rows = classes[kind].keys, *k = NULL;

		for (int i = 0; i < (int)(sizeof(classes[kind].keys) / sizeof(rows[0])) && rows[i].key;
		     i++)
			if (!strcmp(rows[i].key, key))
				k = &rows[i];
		if (!k)
			st = LAYER_ERR(c, XO_EINVAL, "layer: %s: %s is not supported",
			               json_string_value(lc), key);
		else
			st = key_arg(c, k, key, val, &have_input, NULL, args);
		if (st)
			break;
	}
	return st;
}

/* Bidirectional's backward_layer: what Keras builds when none is given
 * (bidirectional.py: layer's config with go_backwards flipped and another
 * name), key for key, the keys without effect once weights are loaded
 * aside (initializers, seed: K_SKIP in the class's row); any other
 * backward layer is refused naming the first key that differs. */
static enum xo_status mirror_check(const struct lctx *c, const json_t *v)
{
	const json_t *fwd = c->cfg ? json_object_get(c->cfg, "layer") : NULL;
	const json_t *fc = json_object_get(fwd, "config"), *bc = json_object_get(v, "config");
	const json_t *fcls = json_object_get(fwd, "class_name"), *bcls = json_object_get(v, "class_name");
	const struct class_row *row = NULL;
	const char *key;
	const json_t *val;
	enum xo_status st;

	if (json_is_null(v))
		return XO_OK; /* none given: Keras builds the mirror */
	if (json_is_object(v) && (st = layer_builtin(c, v, "backward_layer: ")))
		return st;
	if (!json_is_object(fc) || !json_is_object(bc) || !json_is_string(fcls) ||
	    !json_equal(fcls, bcls))
		return LAYER_ERR(c, XO_EINVAL, "backward_layer: only the mirror of layer (its class "
		                               "and config with go_backwards flipped) is "
		                               "supported%s", "");
	for (int k = XO_LAYER_SIMPLE_RNN; k <= XO_LAYER_GRU; k++)
		if (!strcmp(json_string_value(fcls), xo_layer_kinds[k].keras))
			row = &classes[k];
	for (int pass = 0; row && pass < 2; pass++)
		json_object_foreach((json_t *)(pass ? bc : fc), key, val) {
			const json_t *f = json_object_get(fc, key), *b = json_object_get(bc, key);
			enum key_rule rule = K_SKIP;
			bool same;

			for (int i = 0; i < (int)(sizeof(row->keys) / sizeof(row->keys[0])) &&
			                row->keys[i].key; i++)
				if (!strcmp(row->keys[i].key, key))
					rule = row->keys[i].rule;
			if (!strcmp(key, "name") || (rule == K_SKIP && f && b))
				continue;
			if (!strcmp(key, "go_backwards"))
				same = json_is_boolean(f) && json_is_boolean(b) &&
				       json_is_true(f) != json_is_true(b);
			else if (!strcmp(key, "dtype") && f && b && dtype_ok(f) && dtype_ok(b))
				same = true; /* float32 both, however written (Keras's own
				              * mirror's policy carries a shared_object_id) */
			else
				same = f && b && json_equal(f, b);
			if (!same)
				return LAYER_ERR(c, XO_EINVAL, "backward_layer: %s differs from layer's "
				                               "(only the mirror of layer, go_backwards "
				                               "flipped, is supported)", key);
		}
	return XO_OK;
}

/* The input line of spec named src (a model of several inputs ends each
 * input line with " name=X"), or the last line when src is NULL or no line
 * has its name (a lone input's line has none), gets dtype=int32 (ids) when
 * it is an input line without a dtype, or with bool, dtype=bool (an
 * attention mask's keep values: the spec refuses one that a layer takes as
 * a tensor). */
static void input_dtype(struct sbuf *spec, bool bool_mask, const char *src)
{
	size_t srclen = src ? strlen(src) : 0, end, start;
	struct sbuf out = {0};

	if (!spec->len || spec->s[spec->len - 1] != '\n')
		return;
	end = spec->len - 1; /* the '\n' of the line chosen: the last, ... */
	for (size_t e = spec->len; src && e > 0;) { /* ... or the one named src */
		size_t nl = e - 1, b = nl;

		while (b > 0 && spec->s[b - 1] != '\n')
			b--;
		if (nl - b > srclen + 6 && !strncmp(spec->s + nl - srclen - 6, " name=", 6) &&
		    !strncmp(spec->s + nl - srclen, src, srclen)) {
			end = nl;
			break;
		}
		e = b;
	}
	for (start = end; start > 0 && spec->s[start - 1] != '\n';)
		start--;
	if (strncmp(spec->s + start, "input", 5) || memmem(spec->s + start, end - start, "dtype=", 6))
		return;
	sb_printf(&out, "%.*s dtype=%s%s", (int)end, spec->s, bool_mask ? "bool" : "int32",
	          spec->s + end);
	if (out.oom) {
		free(out.s);
		spec->oom = true;
		return;
	}
	free(spec->s);
	*spec = out;
}

/* One layer's config into one spec line (or the input line), with its
 * wiring (" inputs=...", or ""); src names its first input (NULL: the line
 * before it). have_input tells whether the input line is written already. */
static enum xo_status layer_line(const struct lctx *c, const struct class_row *row,
                                 const char *kind, const json_t *cfg, const char *wiring,
                                 const char *src, bool *have_input, struct sbuf *spec)
{
	const json_t *dtype = json_object_get(cfg, "dtype");
	struct sbuf args = {0};
	const char *key;
	const json_t *v;
	enum xo_status st = XO_OK;

	json_object_foreach((json_t *)cfg, key, v) {
		const struct key_row *k = NULL;

		for (int i = 0; i < (int)(sizeof(row->keys) / sizeof(row->keys[0])) && row->keys[i].key; i++)
			if (!strcmp(row->keys[i].key, key))
				k = &row->keys[i];
		if (!k) {
			st = LAYER_ERR(c, XO_EINVAL, "%s is not supported", key);
			break;
		}
		st = key_arg(c, k, key, v, have_input, spec, &args);
		if (st)
			break;
	}
	/* Keras casts the input of an Embedding to ids whatever the
	 * InputLayer's dtype (float32 by default): the input line gets
	 * dtype=int32 (the line of the input it reads, src; the spec refuses
	 * an embedding that reads no input). An InputLayer of int32 or int64 ids is an int32 input whatever follows it: the
	 * spec refuses one that feeds anything but an embedding (Keras would
	 * truncate the values to integers there), and one among several
	 * inputs, rather than read its ids as floats. */
	if (!st && *have_input &&
	    ((kind && !strcmp(kind, "embedding")) ||
	     (!kind && json_is_string(dtype) && (!strcmp(json_string_value(dtype), "int32") ||
	                                         !strcmp(json_string_value(dtype), "int64")))))
		input_dtype(spec, false, kind ? src : NULL);
	if (!st && *have_input && !kind && json_is_string(dtype) &&
	    !strcmp(json_string_value(dtype), "bool"))
		input_dtype(spec, true, NULL);
	if (!st && kind) {
		if (!*have_input)
			st = LAYER_ERR(c, XO_EFORMAT, "comes before any input shape%s", "");
		else
			sb_printf(spec, "%s name=%s%s%s\n", kind, c->name, wiring,
			          args.s ? args.s : "");
	}
	free(args.s);
	return st;
}

/* The layer name in one tensor reference of an inbound node: Keras 3's
 * {"class_name": "__keras_tensor__", "config": {"keras_history": [name, 0,
 * 0]}}, Keras 2's [name, 0, 0, {}]; NULL when it is neither, or names a
 * second output of a layer, which xo's layers do not have, or a second
 * call (node) of a layer, which xo refuses (a shared layer), so a layer
 * called once has only node 0 (Keras refuses another index). */
static const char *tensor_name(const json_t *t)
{
	const json_t *hist = json_is_array(t) ? t
	                                      : json_object_get(json_object_get(t, "config"),
	                                                        "keras_history");
	json_int_t node, index;

	if (!json_is_array(hist) || json_array_size(hist) < 3 ||
	    !json_is_string(json_array_get(hist, 0)) ||
	    !int_value(json_array_get(hist, 1), &node) || node != 0 ||
	    !int_value(json_array_get(hist, 2), &index) || index != 0)
		return NULL;
	return json_string_value(json_array_get(hist, 0));
}

/* The config name of layers[i] ("" when it has none), as a name set reads
 * it. */
static const char *config_name(const void *layers, int i)
{
	const char *c = json_string_value(
	    json_object_get(json_object_get(json_array_get(layers, (size_t)i), "config"), "name"));

	return c ? c : "";
}

/* The layers a functional layer's inputs come from, in order, into from
 * (at most XO_LAYER_INPUTS_MAX; *count is how many there are, -1 when the
 * nodes cannot be read). Keras 3: inbound_nodes [{"args": [T], "kwargs":
 * {}}], a merge's args [[T, T]]; Keras 2: [[[name, 0, 0, {}], ...]]. A
 * layer called more than once (a shared layer) has several nodes:
 * *nodes. A call argument other than those Keras records by default (a
 * null mask, training false) is named in *kwarg: training=True would run
 * Dropout in predict. */
static void inbound_names(const json_t *layer, const char *from[XO_LAYER_INPUTS_MAX], int *count,
                          int *nodes, const char **kwarg, int *causal, const char **mask)
{
	const json_t *list = json_object_get(layer, "inbound_nodes");
	const json_t *node, *args, *tensors, *v;
	const char *key;

	*count = -1;
	*kwarg = NULL;
	*causal = -1;
	*mask = NULL;
	*nodes = json_is_array(list) ? (int)json_array_size(list) : -1;
	if (*nodes == 0)
		*count = 0;
	if (*nodes != 1)
		return;
	node = json_array_get(list, 0);
	tensors = node;
	if (json_is_object(node)) {
		args = json_object_get(node, "args");
		if (!json_is_array(args) || !json_array_size(args))
			return;
		/* several positional tensors (MultiHeadAttention's query,
		 * value), or one, or a merge's list of them */
		tensors = json_array_size(args) > 1 ? args : json_array_get(args, 0);
		if (!json_is_array(tensors))
			tensors = args; /* one tensor, not a list of them */
		json_object_foreach((json_t *)json_object_get(node, "kwargs"), key, v) {
			if (!strcmp(key, "use_causal_mask") && json_is_boolean(v))
				*causal = json_is_true(v);
			else if (!strcmp(key, "mask") && tensor_name(v))
				continue; /* Keras's own mask: functional_inputs */
			else if (!strcmp(key, "attention_mask") && tensor_name(v))
				*mask = tensor_name(v); /* MultiHeadAttention's */
			else if (!json_is_null(v) && !(!strcmp(key, "training") && json_is_false(v)))
				*kwarg = key;
		}
	}
	if (!json_is_array(tensors))
		return;
	for (size_t k = 0; k < json_array_size(tensors); k++) {
		const char *name = tensor_name(json_array_get(tensors, k));

		if (!name)
			return;
		if (k < XO_LAYER_INPUTS_MAX)
			from[k] = name;
	}
	*count = (int)json_array_size(tensors);
}

/* Whether the node's third positional tensor is its second: the same
 * layer, node and output (an attention's key given as its value). */
static bool third_is_second(const json_t *node)
{
	const json_t *args = json_object_get(node, "args");
	const json_t *b = json_object_get(json_object_get(json_array_get(args, 1), "config"),
	                                  "keras_history");
	const json_t *c = json_object_get(json_object_get(json_array_get(args, 2), "config"),
	                                  "keras_history");

	return json_array_size(args) == 3 && json_is_array(b) && json_equal(b, c);
}

/* The first keyword argument of layer's one node (Keras 3's form) that is
 * a tensor (mha(query=q, value=v)), or NULL; MultiHeadAttention's
 * attention_mask (mha) is read as its mask. */
static const char *keyword_tensor(const json_t *layer, bool mha)
{
	const json_t *node = json_array_get(json_object_get(layer, "inbound_nodes"), 0);
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)json_object_get(node, "kwargs"), key, v) {
		const json_t *cls = json_object_get(v, "class_name");

		if (mha && !strcmp(key, "attention_mask"))
			continue;
		if (json_is_string(cls) && !strcmp(json_string_value(cls), "__keras_tensor__") &&
		    strcmp(key, "mask"))
			return key;
	}
	return NULL;
}

/*
 * Keras's functional config records the mask of an Embedding(mask_zero=True)
 * as op layers: NotEqual(ids, 0) (Embedding.compute_mask), LogicalOr of two
 * masks (a merge layer's compute_mask), and Concatenate's compute_mask on
 * the last axis: each input's mask as ExpandDims(m, -1) LogicalOr
 * ZerosLike(x) (the mask broadcast over x's features) or OnesLike(x) (an
 * unmasked input's all-true), the op Concatenate of them on its axis, then
 * Any over the last (read as the OR per step whatever the axis: a
 * Concatenate layer on another axis than the last refuses its masked
 * inputs in the spec, spec.c layer_mask). A layer whose call takes a mask gets it as the keyword
 * argument mask=. What layers[i] (names: the name set of the layers above
 * it) computes, when it is such an op layer: the ids' mask per step (its
 * OR with itself is itself, which the spec parser propagates from the
 * embedding on its own: no spec line), all true (an OR with an unmasked
 * input's), or all false (ZerosLike, only inside an OR); MASK_OP_NONE when
 * it is not one. A Masking's mask (Masking.compute_mask) is NotEqual(x,
 * mask_value) on the float input (per feature: MASK_OP_FEAT, no mask on its
 * own) and Any over the last axis of it: the model's mask, as the ids'
 * (its one source, the Masking layer, whose mask_value the NotEqual must
 * compare with). memo: one entry a layer, 0 unknown, each kind + 1 once
 * known, so a graph of shared ops is walked once.
 */
enum mask_op { MASK_OP_NONE, MASK_OP_IDS, MASK_OP_ONES, MASK_OP_ZEROS, MASK_OP_FEAT };

static const char *entry_class(const json_t *layers, size_t i);

static enum mask_op mask_op_walk(const json_t *layers, size_t i, const int *names,
                                 unsigned char *memo);

/* The mask kind of the tensor t, which must come from an op layer above i. */
static enum mask_op mask_op_arg(const json_t *layers, size_t i, const int *names,
                                unsigned char *memo, const json_t *t)
{
	const char *src = tensor_name(t);
	int j = src ? xo_nameset_find(names, config_name, layers, src) : -1;

	return j < 0 || (size_t)j >= i ? MASK_OP_NONE : mask_op_walk(layers, (size_t)j, names, memo);
}

/* The OR of two mask kinds (none when either is none). */
static enum mask_op mask_op_or(enum mask_op a, enum mask_op b)
{
	if (!a || !b || a == MASK_OP_FEAT || b == MASK_OP_FEAT)
		return MASK_OP_NONE;
	if (a == MASK_OP_ONES || b == MASK_OP_ONES)
		return MASK_OP_ONES;
	return a == MASK_OP_IDS || b == MASK_OP_IDS ? MASK_OP_IDS : MASK_OP_ZEROS;
}

/* Whether the op layer l's config axis is the last of its tensors (-1, or
 * the rank of the first tensor t's shape less 1). */
static bool mask_op_last_axis(const json_t *l, const json_t *t)
{
	const json_t *shape = json_object_get(json_object_get(t, "config"), "shape");
	const json_t *axis = json_object_get(json_object_get(l, "config"), "axis");
	json_int_t ax = json_is_integer(axis) ? json_integer_value(axis) : 0;

	return ax == -1 || (ax > 0 && json_is_array(shape) &&
	                    ax == (json_int_t)json_array_size(shape) - 1);
}

/* Whether the model has a Masking layer whose mask_value is the number v
 * (NotEqual's constant: a float input's step mask is the Masking's). */
static bool masking_value_is(const json_t *layers, const json_t *v)
{
	for (size_t i = 0; json_is_number(v) && i < json_array_size(layers); i++) {
		const json_t *mv = json_object_get(json_object_get(json_array_get(layers, i), "config"),
		                                   "mask_value");

		if (!strcmp(entry_class(layers, i), "Masking") && json_is_number(mv) &&
		    (float)json_number_value(mv) == (float)json_number_value(v))
			return true;
	}
	return false;
}

static enum mask_op mask_op_kind(const json_t *layers, size_t i, const int *names,
                                 unsigned char *memo)
{
	const json_t *l = json_array_get(layers, i);
	const char *cls = json_string_value(json_object_get(l, "class_name"));
	const char *mod = json_string_value(json_object_get(l, "module"));
	const json_t *node = json_array_get(json_object_get(l, "inbound_nodes"), 0);
	const json_t *args = json_object_get(node, "args");
	const json_t *dt = json_object_get(json_object_get(l, "config"), "dtype");
	size_t na = json_array_size(args);
	json_int_t zero;
	enum mask_op k;

	if (!cls || !json_is_array(args) || json_array_size(json_object_get(l, "inbound_nodes")) != 1 ||
	    json_object_size(json_object_get(node, "kwargs")))
		return MASK_OP_NONE;
	if (!strcmp(cls, "NotEqual")) {
		const char *src = na == 2 ? tensor_name(json_array_get(args, 0)) : NULL;
		int j = src ? xo_nameset_find(names, config_name, layers, src) : -1;

		if (j >= 0 && (size_t)j < i && !strcmp(entry_class(layers, (size_t)j), "InputLayer") &&
		    masking_value_is(layers, json_array_get(args, 1)))
			return MASK_OP_FEAT;
		return j >= 0 && (size_t)j < i && !strcmp(entry_class(layers, (size_t)j), "InputLayer") &&
		               int_value(json_array_get(args, 1), &zero) && zero == 0
		           ? MASK_OP_IDS
		           : MASK_OP_NONE;
	}
	if (!strcmp(cls, "LogicalOr") && na == 2)
		return mask_op_or(mask_op_arg(layers, i, names, memo, json_array_get(args, 0)),
		                  mask_op_arg(layers, i, names, memo, json_array_get(args, 1)));
	if ((!strcmp(cls, "ExpandDims") || !strcmp(cls, "Any")) && na == 1 &&
	    mask_op_last_axis(l, json_array_get(args, 0)) &&
	    (!strcmp(cls, "ExpandDims") ||
	     json_is_false(json_object_get(json_object_get(l, "config"), "keepdims")))) {
		k = mask_op_arg(layers, i, names, memo, json_array_get(args, 0));
		if (k == MASK_OP_FEAT) /* a Masking's mask: Any over the features */
			return cls[0] == 'A' ? MASK_OP_IDS : MASK_OP_NONE;
		return k;
	}
	if ((!strcmp(cls, "ZerosLike") || !strcmp(cls, "OnesLike")) && na == 1 &&
	    json_is_string(dt) && !strcmp(json_string_value(dt), "bool")) {
		const char *src = tensor_name(json_array_get(args, 0));
		int j = src ? xo_nameset_find(names, config_name, layers, src) : -1;

		if (j < 0 || (size_t)j >= i)
			return MASK_OP_NONE;
		return cls[0] == 'Z' ? MASK_OP_ZEROS : MASK_OP_ONES;
	}
	/* the op, not the layer, of one list of masks: module
	 * keras.src.ops.numpy (none in a legacy .h5), its config its name and
	 * axis only; on any axis (a Concatenate layer on another than the last
	 * then refuses its masked inputs in the spec: layer_mask) */
	if (!strcmp(cls, "Concatenate") && (!mod || !strcmp(mod, "keras.src.ops.numpy")) &&
	    json_object_size(json_object_get(l, "config")) == 2 &&
	    json_object_get(json_object_get(l, "config"), "axis") && na == 1 &&
	    json_is_array(json_array_get(args, 0)) && json_array_size(json_array_get(args, 0))) {
		const json_t *list = json_array_get(args, 0);

		k = mask_op_arg(layers, i, names, memo, json_array_get(list, 0));
		for (size_t a = 1; a < json_array_size(list); a++)
			k = mask_op_or(k, mask_op_arg(layers, i, names, memo, json_array_get(list, a)));
		return k;
	}
	return MASK_OP_NONE;
}

static enum mask_op mask_op_walk(const json_t *layers, size_t i, const int *names,
                                 unsigned char *memo)
{
	if (!memo[i])
		memo[i] = (unsigned char)(mask_op_kind(layers, i, names, memo) + 1);
	return (enum mask_op)(memo[i] - 1);
}

/* mask_op_kind of layers[i] with a memo of its own; MASK_OP_NONE when out
 * of memory (the layer is then refused as its class). */
static enum mask_op mask_op_of(const json_t *layers, size_t i, const int *names)
{
	unsigned char *memo = calloc(json_array_size(layers) + 1, 1);
	enum mask_op k = memo ? mask_op_walk(layers, i, names, memo) : MASK_OP_NONE;

	free(memo);
	return k;
}

/* Whether layers[i] is one of the op layers of Keras's mask (above). */
static bool mask_op_layer(const json_t *layers, size_t i, const int *names)
{
	return mask_op_of(layers, i, names) != MASK_OP_NONE;
}

/* MultiHeadAttention's attention_mask tensor: an InputLayer above it (a
 * mask computed by layers is not supported yet). */
static enum xo_status mha_mask_input(const struct lctx *c, const json_t *layers, size_t n,
                                     const int *names, const char *mask)
{
	int j = xo_nameset_find(names, config_name, layers, mask);
	const char *cls;

	if (j < 0 || (size_t)j >= n)
		return LAYER_ERR(c, XO_EINVAL, "takes the attention_mask '%s', which is not a layer "
		                               "above it", mask);
	cls = json_string_value(json_object_get(json_array_get(layers, (size_t)j), "class_name"));
	if (!cls || strcmp(cls, "InputLayer"))
		return LAYER_ERR(c, XO_EINVAL, "is called with attention_mask=%s, the output of a "
		                               "%s (a mask that is not a model Input is not "
		                               "supported yet)", mask, cls ? cls : "layer");
	return XO_OK;
}

/* A functional layer's wiring as the spec's inputs= (into wiring; empty
 * when it takes the previous spec layer's output, as a sequential layer
 * does). input names the (first) InputLayer: the spec's "input" when it is
 * the only one (multi false), else each input keeps its name; the layers above
 * it are the first n of layers (the InputLayer among them), found by name in
 * names (a name set of layers; layer_name_unique has made names unique).
 * *first: the config's name of the tensor it takes first. */
static enum xo_status functional_inputs(const json_t *l, const struct lctx *c, const char *input,
                                        bool multi, const char *prev, const json_t *layers,
                                        size_t n, const int *names, struct sbuf *wiring,
                                        struct sbuf *masked, const char **first)
{
	const char *from[XO_LAYER_INPUTS_MAX] = {0}, *kwarg, *key, *mask;
	int count, nodes, causal;
	bool mha = !strcmp(c->cls, "MultiHeadAttention");
	const json_t *mkw = json_object_get(
	    json_object_get(json_array_get(json_object_get(l, "inbound_nodes"), 0), "kwargs"),
	    "mask");
	enum xo_status st;

	inbound_names(l, from, &count, &nodes, &kwarg, &causal, &mask);
	*first = from[0];
	if (mkw && !json_is_null(mkw)) { /* Keras's own mask, or refused */
		const char *src = tensor_name(mkw);
		int j = src ? xo_nameset_find(names, config_name, layers, src) : -1;

		enum mask_op k = j < 0 || (size_t)j >= n ? MASK_OP_NONE
		                                         : mask_op_of(layers, (size_t)j, names);

		if (k != MASK_OP_IDS && k != MASK_OP_ONES)
			return LAYER_ERR(c, XO_EINVAL, "is called with a mask= that is not an "
			                               "Embedding(mask_zero=True)'s mask (%s)",
			                 src ? src : "not a tensor");
		/* spec_check: its input is masked (the ids'), or not (all true:
		 * the same math as no mask), "!" before the name */
		sb_printf(masked, "%s%s\n", k == MASK_OP_ONES ? "!" : "", c->name);
	}
	if (causal >= 0 && !mha)
		kwarg = "use_causal_mask";
	if (mask && !mha)
		kwarg = "attention_mask";
	if (nodes > 1)
		return LAYER_ERR(c, XO_EINVAL, "is called %d times (a shared layer): not supported "
		                               "yet", nodes);
	if (nodes == 1 && (key = keyword_tensor(l, mha)))
		return LAYER_ERR(c, XO_EINVAL, "is called with the tensor %s= as a keyword argument "
		                               "(tensors are supported as positional arguments "
		                               "only)", key);
	if (count < 1)
		return LAYER_ERR(c, XO_EFORMAT, "inbound_nodes: expected the tensors it takes, each "
		                                "[layer, 0, 0] (node 0, output 0: every layer is "
		                                "called once, with one output)%s", "");
	if (kwarg)
		return LAYER_ERR(c, XO_EINVAL, "is called with %s= (call arguments are not "
		                               "supported)", kwarg);
	/* mha(query, value, value): the key is the value, Keras's default
	 * (its key mask the value's, the same AND), so mha(query, value) */
	if (count == XO_LAYER_INPUTS_MAX + 1 && mha && from[1] &&
	    third_is_second(json_array_get(json_object_get(l, "inbound_nodes"), 0)))
		count = XO_LAYER_INPUTS_MAX;
	if (count > XO_LAYER_INPUTS_MAX && mha)
		return LAYER_ERR(c, XO_EINVAL, "is called with a key other than the value (%s): not "
		                               "supported yet", "mha(query, value) only");
	if (count > XO_LAYER_INPUTS_MAX)
		return LAYER_ERR(c, XO_EINVAL, "takes %d tensors (a merge of more than %d is not "
		                               "supported yet)", count, XO_LAYER_INPUTS_MAX);
	for (int k = 0; k < count; k++) {
		int j = xo_nameset_find(names, config_name, layers, from[k]);

		if (j < 0 || (size_t)j >= n)
			return LAYER_ERR(c, XO_EINVAL, "takes '%s', which is not a layer above it",
			                 from[k]);
	}
	if (mask && (st = mha_mask_input(c, layers, n, names, mask)))
		return st;
	if (causal > 0)
		sb_printf(wiring, " use_causal_mask=True");
	if (mask) /* several inputs keep their names (a lone one is "input") */
		sb_printf(wiring, " attention_mask=%s",
		          strcmp(mask, input) || multi ? mask : "input");
	if (count == 1 && !strcmp(from[0], prev ? prev : input))
		return XO_OK;
	sb_printf(wiring, " inputs=");
	for (int k = 0; k < count; k++) /* several inputs keep their own names */
		sb_printf(wiring, "%s%s", k ? "," : "",
		          strcmp(from[k], input) || multi ? from[k] : "input");
	return XO_OK;
}

/* A Functional's entry names its layer twice: Keras wires the graph by the
 * outer name and builds the layer by the config's. Keras writes them equal;
 * a file where layer i's differ, or where it shares its name with a layer
 * before it, would be read as another model: refused. names: the name set of
 * layers[0..i-1], to which layers[i] is added. */
static enum xo_status layer_name_unique(const json_t *layers, size_t i, const struct lctx *c,
                                        int *names)
{
	const json_t *outer = json_object_get(json_array_get(layers, i), "name");

	if (outer && (!json_is_string(outer) || strcmp(json_string_value(outer), c->name)))
		return xo_error(XO_EINVAL, "%s: layer '%s' (%s): its entry's name is not its "
		                           "config's name", c->origin, c->name, c->cls);
	if (xo_nameset_add(names, config_name, layers, (int)i) >= 0)
		return xo_error(XO_EINVAL, "%s: layer '%s' (%s): two layers have this name",
		                c->origin, c->name, c->cls);
	return XO_OK;
}

/* Layer i's entry before its class is looked up: its name (above; names:
 * the layers' name set), and a class of Keras's own (custom_class). */
static enum xo_status layer_entry_check(const json_t *layers, size_t i, const struct lctx *c,
                                        int *names)
{
	const json_t *l = json_array_get(layers, i);
	enum xo_status st = layer_name_unique(layers, i, c, names);

	return st ? st : layer_builtin(c, l, "");
}

/* The class name of layers[i] ("" when it has none). */
static const char *entry_class(const json_t *layers, size_t i)
{
	const char *c = json_string_value(json_object_get(json_array_get(layers, i), "class_name"));

	return c ? c : "";
}

/* The config name of layers[i] ("" when it has none). */
static const char *entry_name(const json_t *layers, size_t i)
{
	const char *c = json_string_value(
	    json_object_get(json_object_get(json_array_get(layers, i), "config"), "name"));

	return c ? c : "";
}

/* A Functional config's input_layers or output_layers (key): present and
 * not empty, as Keras's Functional needs them ("`inputs` argument cannot
 * be empty"); which layers they name is checked by their users. */
static enum xo_status inout_list(const json_t *cfg, const char *key, const char *origin)
{
	const json_t *v = json_object_get(cfg, key);

	if (!json_is_array(v) && !json_is_object(v))
		return xo_error(XO_EFORMAT, "%s: the Functional config has no %s list", origin, key);
	if (!json_is_array(v) ? !json_object_size(v) : !json_array_size(v))
		return xo_error(XO_EFORMAT, "%s: %s is empty: a Functional model needs at least "
		                            "one %s (Keras refuses it too)",
		                origin, key, !strcmp(key, "input_layers") ? "input" : "output");
	return XO_OK;
}

/* A Functional's InputLayers: how many (*nin), and for several their
 * names in Keras's order, the config's input_layers ([[name, 0, 0], ...]),
 * which must list each InputLayer once. */
static enum xo_status input_order(const json_t *cfg, const json_t *layers, const char *origin,
                                  const char *names[XO_MODEL_INPUTS_MAX], int *nin)
{
	const json_t *il = json_object_get(cfg, "input_layers");
	size_t count = 0;
	enum xo_status st;

	for (size_t i = 0; i < json_array_size(layers); i++)
		count += !strcmp(entry_class(layers, i), "InputLayer");
	*nin = (int)(count < XO_MODEL_INPUTS_MAX ? count : XO_MODEL_INPUTS_MAX);
	if ((st = inout_list(cfg, "input_layers", origin)))
		return st;
	if (count == 1) {
		/* [name, 0, 0] or [[name, 0, 0]]: the one InputLayer, once (Keras
		 * makes each entry an input of its own, the same layer twice a
		 * model of two inputs fed one tensor, which xo does not take) */
		const json_t *t = tensor_name(il) ? il : json_array_get(il, 0);
		const char *name = tensor_name(t);
		bool found = false;

		for (size_t i = 0; name && i < json_array_size(layers); i++)
			found |= !strcmp(entry_class(layers, i), "InputLayer") &&
			         !strcmp(entry_name(layers, i), name);
		if (!found)
			return xo_error(XO_EFORMAT, "%s: input_layers does not name the model's "
			                            "InputLayer", origin);
		if (!tensor_name(il) && json_array_size(il) > 1)
			return xo_error(XO_EINVAL, "%s: input_layers lists %zu inputs for the "
			                           "model's one InputLayer '%s' (each InputLayer is "
			                           "one input, listed once)",
			                origin, json_array_size(il), name);
		return XO_OK;
	}
	if (count == 0)
		return XO_OK;
	if (count > XO_MODEL_INPUTS_MAX)
		return xo_error(XO_EINVAL,
		                "%s: the model has %zu inputs (InputLayers); xo supports at most %d",
		                origin, count, XO_MODEL_INPUTS_MAX);
	if (!json_is_array(il) || json_array_size(il) != count)
		return xo_error(XO_EFORMAT, "%s: input_layers does not list the model's %zu "
		                            "InputLayers", origin, count);
	for (size_t k = 0; k < count; k++) {
		const char *name = tensor_name(json_array_get(il, k));
		bool found = false;

		for (size_t i = 0; name && i < json_array_size(layers); i++)
			found |= !strcmp(entry_class(layers, i), "InputLayer") &&
			         !strcmp(entry_name(layers, i), name);
		for (size_t j = 0; name && j < k; j++)
			found &= strcmp(names[j], name) != 0;
		if (!found)
			return xo_error(XO_EFORMAT, "%s: input_layers entry %zu is not one of the "
			                            "model's InputLayers (each listed once)", origin, k);
		names[k] = name;
	}
	return XO_OK;
}

/* The input lines of a model of several inputs, in Keras's order, each
 * named as its InputLayer (layers take them by name in inputs=). */
/* Whether some MultiHeadAttention of layers is called with the tensor of
 * the InputLayer name as its attention_mask. */
static bool attention_mask_input(const json_t *layers, const char *name)
{
	for (size_t i = 0; i < json_array_size(layers); i++) {
		const json_t *node = json_array_get(
		    json_object_get(json_array_get(layers, i), "inbound_nodes"), 0);
		const char *m = tensor_name(
		    json_object_get(json_object_get(node, "kwargs"), "attention_mask"));

		if (!strcmp(entry_class(layers, i), "MultiHeadAttention") && m && !strcmp(m, name))
			return true;
	}
	return false;
}

static enum xo_status input_lines(const json_t *layers, const char *origin,
                                  const char *const *names, int nin, struct sbuf *spec)
{
	enum xo_status st = XO_OK;

	for (int k = 0; !st && k < nin; k++)
		for (size_t i = 0; !st && i < json_array_size(layers); i++) {
			const json_t *cfg = json_object_get(json_array_get(layers, i), "config");
			const char *dt = json_string_value(json_object_get(cfg, "dtype"));
			struct lctx c = {origin, names[k], "InputLayer", cfg};
			json_t *mask = NULL;
			bool have = false;

			if (strcmp(entry_class(layers, i), "InputLayer") ||
			    strcmp(entry_name(layers, i), names[k]))
				continue;
			/* an int32/int64 attention mask Input: Keras casts it to bool,
			 * so it is read as a bool one (and written back so) */
			if (dt && (!strcmp(dt, "int32") || !strcmp(dt, "int64")) &&
			    attention_mask_input(layers, names[k])) {
				mask = json_deep_copy(cfg);
				if (!mask)
					return xo_error(XO_ENOMEM, "%s: out of memory", origin);
				json_object_set_new(mask, "dtype", json_string("bool"));
			}
			st = layer_line(&c, &input_row, NULL, mask ? mask : cfg, "", NULL, &have, spec);
			json_decref(mask);
			if (!st && spec->len && spec->s[spec->len - 1] == '\n') {
				spec->len--;
				sb_printf(spec, " name=%s\n", names[k]);
			}
		}
	return st;
}

/* A layer of a class xo lacks, refused: named as Keras's mask computation
 * where it takes a mask (one of mask_op_layer's: Keras computes the mask
 * of a layer such as Concatenate with its own ops), else as the class. */
static enum xo_status class_refusal(const json_t *layers, size_t i, const int *names,
                                    const struct lctx *c)
{
	const json_t *node = json_array_get(json_object_get(json_array_get(layers, i),
	                                                    "inbound_nodes"), 0);
	const json_t *args = json_object_get(node, "args");

	for (size_t k = 0; json_is_array(args) && k < json_array_size(args); k++) {
		const char *src = tensor_name(json_array_get(args, k));
		int j = src ? xo_nameset_find(names, config_name, layers, src) : -1;

		if (j >= 0 && (size_t)j < i && mask_op_layer(layers, (size_t)j, names))
			return xo_error(XO_EINVAL, "%s: layer '%s' (%s) is not supported: it computes "
			                           "the Keras mask of Embedding(mask_zero=True) for a "
			                           "layer that masks are not supported for",
			                c->origin, c->name, c->cls);
	}
	return xo_error(XO_EINVAL, "%s: layer '%s' (%s) is not supported", c->origin, c->name,
	                c->cls);
}

/* The name goes into the spec text: only what the spec allows, so no name
 * can add words or lines to it. */
static enum xo_status layer_name_check(const struct lctx *c)
{
	if (!*c->name || strlen(c->name) >= XO_LAYER_NAME_MAX ||
	    strspn(c->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
	        strlen(c->name) ||
	    !strcmp(c->name, ".") || !strcmp(c->name, ".."))
		return xo_error(XO_EINVAL, "%s: layer '%s' (%s): the name is not supported "
		                           "(1-63 letters, digits, _ - .)", c->origin, c->name, c->cls);
	return XO_OK;
}

/* A Functional's output_layers: one output, the last layer (the spec's
 * model output, prev) as [name, 0, 0]. */
static enum xo_status output_check(const json_t *cfg, const char *prev, const char *origin)
{
	enum xo_status st;
	const json_t *outs = json_object_get(cfg, "output_layers");
	const json_t *o0 = json_is_array(outs) ? json_array_get(outs, 0) : NULL;

	st = inout_list(cfg, "output_layers", origin);
	if (!st && json_is_array(o0) && json_array_size(outs) > 1)
		st = xo_error(XO_EINVAL, "%s: several outputs (%zu): a multi-output model is "
		                         "not supported yet", origin, json_array_size(outs));
	if (json_is_array(o0) && json_array_size(outs) == 1)
		outs = o0;
	if (!st && (!prev || !json_is_array(outs) ||
	            !json_is_string(json_array_get(outs, 0)) ||
	            strcmp(json_string_value(json_array_get(outs, 0)), prev)))
		st = xo_error(XO_EINVAL, "%s: the output is not the last layer '%s' (the "
		                         "layers must be listed inputs first, as Keras writes "
		                         "them)", origin, prev ? prev : "?");
	/* [name, node, tensor]: each layer is called once and has one
	 * output, so both are 0 (Keras refuses an index past its nodes
	 * or tensors) */
	if (!st && (json_array_size(outs) != 3 ||
	            !json_is_integer(json_array_get(outs, 1)) ||
	            json_integer_value(json_array_get(outs, 1)) != 0 ||
	            !json_is_integer(json_array_get(outs, 2)) ||
	            json_integer_value(json_array_get(outs, 2)) != 0))
		st = xo_error(XO_EINVAL, "%s: output_layers: expected ['%s', 0, 0] (the "
		                         "layer's one call and its one output tensor)",
		              origin, prev);
	return st;
}

/* The model config root as spec text into spec; set: an empty name set
 * (model_internal.h) for its layers. */
static enum xo_status map_model(const json_t *root, const char *origin, int *set, struct sbuf *spec,
                                struct sbuf *masked)
{
	const json_t *cls = json_object_get(root, "class_name");
	const json_t *cfg = json_object_get(root, "config");
	const json_t *layers;
	bool functional, have_input = false;
	const char *prev = NULL, *input = NULL, *in_names[XO_MODEL_INPUTS_MAX];
	int nin;
	struct sbuf wiring = {0};
	enum xo_status st = XO_OK;

	if (!json_is_string(cls))
		return xo_error(XO_EFORMAT, "%s: model config has no class_name", origin);
	functional = !strcmp(json_string_value(cls), "Functional") ||
	             !strcmp(json_string_value(cls), "Model");
	if (!functional && strcmp(json_string_value(cls), "Sequential"))
		return xo_error(XO_EINVAL,
		                "%s: model class %s is not supported (Sequential, or a Functional "
		                "plain chain)",
		                origin, json_string_value(cls));
	/* A frozen model trains differently: refused, as a frozen layer is. */
	if (json_is_object(cfg) && json_object_get(cfg, "trainable") &&
	    !json_is_true(json_object_get(cfg, "trainable")))
		return xo_error(XO_EINVAL, "%s: model: trainable=false (a frozen model) is not "
		                           "supported", origin);
	/* Keras 2.2 wrote a Sequential's config as the layer list itself. */
	layers = json_is_array(cfg) ? cfg : json_object_get(cfg, "layers");
	if (!json_is_array(layers) || !json_array_size(layers))
		return xo_error(XO_EFORMAT, "%s: model config has no layers", origin);
	/* the InputLayer of a Functional model adds none to the spec */
	if (json_array_size(layers) > (size_t)XO_SPEC_LAYERS_MAX + 1)
		return xo_error(XO_EINVAL, "%s: model config has %zu layers, more than the limit "
		                           "of %d", origin, json_array_size(layers),
		                XO_SPEC_LAYERS_MAX);
	nin = 0;
	if (functional && (st = input_order(cfg, layers, origin, in_names, &nin)))
		return st;
	/* Two passes: every layer's class and the chain first (so the message
	 * names the layer Keras users look for), then every option. */
	for (int pass = 0; pass < 2 && !st; pass++)
	for (size_t i = 0; !st && i < json_array_size(layers); i++) {
		const json_t *l = json_array_get(layers, i);
		const json_t *lc = json_object_get(l, "class_name");
		const json_t *lcfg = json_object_get(l, "config");
		const json_t *nm = json_object_get(lcfg, "name");
		const struct class_row *row = NULL;
		const char *kind = NULL; /* its spec keyword; NULL: the InputLayer */
		const char *first = NULL; /* a Functional's layer: the tensor it takes first */
		struct lctx c = {origin, "?", "?", lcfg};

		if (json_is_string(lc))
			c.cls = json_string_value(lc);
		if (json_is_string(nm))
			c.name = json_string_value(nm);
		if (!json_is_object(l) || !json_is_string(lc) || !json_is_object(lcfg) ||
		    !json_is_string(nm)) {
			st = xo_error(XO_EFORMAT, "%s: layer %zu: expected class_name and a config "
			                          "with a name", origin, i);
			break;
		}
		if ((st = layer_name_check(&c)))
			break;
		if (pass == 0 && (st = layer_entry_check(layers, i, &c, set)))
			break;
		if (!strcmp(c.cls, "InputLayer"))
			row = &input_row;
		for (int k = 0; k < XO_LAYER_COUNT; k++)
			if (!strcmp(xo_layer_kinds[k].keras, c.cls)) {
				row = &classes[k];
				kind = xo_layer_kinds[k].spec;
			}
		if (i == 0)
			prev = NULL, input = nin > 1 ? in_names[0] : NULL;
		/* Keras's mask: the spec parser's own (its op Concatenate is
		 * named as the layer class, told apart by its module) */
		if (functional && mask_op_layer(layers, i, set))
			continue;
		/* any other op layer (keras.ops called on tensors in the model,
		 * e.g. a mask of its own: ops.not_equal(ids, 5)) */
		{
			const char *mod = json_string_value(json_object_get(l, "module"));

			if (functional && mod && !strncmp(mod, "keras.src.ops.", 14)) {
				st = xo_error(XO_EINVAL,
				              "%s: layer '%s' (%s): an operation (%s) on the model's "
				              "tensors is not supported; xo reads layers, and the masks "
				              "Keras's own layers compute (Embedding(mask_zero=True), "
				              "Masking)",
				              origin, c.name, c.cls, mod);
				break;
			}
		}
		wiring.len = 0;
		if (wiring.s)
			wiring.s[0] = '\0';
		if (functional && row == &input_row && nin > 1) {
			/* written first, in input_layers' order (input_lines) */
		} else if (functional && row == &input_row) {
			if (input) {
				st = xo_error(XO_EINVAL, "%s: several inputs (InputLayer '%s' and '%s'): a "
				                         "multi-input model is not supported yet",
				              origin, input, c.name);
				break;
			}
			input = c.name;
		} else if (functional) {
			if (!input) {
				st = LAYER_ERR(&c, XO_EFORMAT, "comes before the model's InputLayer%s", "");
				break;
			}
			if ((st = functional_inputs(l, &c, input, nin > 1, prev, layers, i, set,
			                            &wiring, masked, &first)))
				break;
		}
		if (!row) {
			st = class_refusal(layers, i, set, &c);
			break;
		}
		/* A Sequential built with model.build(shape), without an Input:
		 * the shape is the model config's build_input_shape. */
		if (pass == 1 && i == 0 && kind && !json_object_get(lcfg, "batch_input_shape") &&
		    json_is_object(cfg) && json_object_get(cfg, "build_input_shape")) {
			struct lctx mc = {origin, "model", json_string_value(cls), NULL};

			if (!(st = shape_line(&mc, "build_input_shape",
			                      json_object_get(cfg, "build_input_shape"), spec)))
				have_input = true;
		}
		if (!st && pass == 1 && i == 0 && nin > 1 &&
		    !(st = input_lines(layers, origin, in_names, nin, spec)))
			have_input = true;
		if (!st && pass == 1 && !(nin > 1 && row == &input_row))
			st = layer_line(&c, row, kind, lcfg, wiring.s ? wiring.s : "", first,
			                &have_input, spec);
		if (row != &input_row)
			prev = c.name;
	}
	free(wiring.s);
	if (!st && functional)
		st = output_check(cfg, prev, origin);
	if (!st && !have_input)
		st = xo_error(XO_EFORMAT, "%s: model config has no input shape", origin);
	if (!st && spec->oom)
		st = xo_error(XO_ENOMEM, "%s: out of memory", origin);
	return st;
}

/* masked: the names of the layers called with Keras's mask= (a line each) */
static enum xo_status map_config(const json_t *root, const char *origin, struct sbuf *spec,
                                 struct sbuf *masked)
{
	int *names = calloc(XO_NAMESET_SIZE, sizeof(*names));
	enum xo_status st;

	if (!names)
		return xo_error(XO_ENOMEM, "%s: out of memory", origin);
	st = map_model(root, origin, names, spec, masked);
	free(names);
	return st;
}

/* ---- compile_config / training_config -> the compile line ---------------- */

/*
 * Keras 3 model.get_compile_config() (config.json "compile_config"; a legacy
 * .h5's root attribute "training_config" holds the same with the optimizer
 * under "optimizer_config"): loss, optimizer and metrics become the spec's
 * compile line; what xo does not implement is refused naming the option
 * (keras/src/trainers/trainer.py compile, keras/src/losses/losses.py,
 * keras/src/optimizers/base_optimizer.py, sgd.py, rmsprop.py, adam.py).
 */
#define CC_ERR(st, origin, fmt, ...) xo_error(st, "%s: compile_config: " fmt, origin, __VA_ARGS__)

/* The loss: a name, or a serialized Loss object whose config has Keras's
 * defaults (label_smoothing 0, axis -1, ignore_class null, reduction
 * sum_over_batch_size) but for from_logits (a cross-entropy's, into
 * *logits); or one of those as the only entry of a list, or of a dict keyed
 * by the model's output layer (out_name), which Keras compiles alike for a
 * model of one output. */
static enum xo_status cc_loss(const json_t *loss, const char *origin, const char *out_name,
                              const char **out, bool *logits)
{
	static const struct {
		const char *name, *cls, *spec;
	} losses[] = {
	    {"categorical_crossentropy", "CategoricalCrossentropy", "categorical_crossentropy"},
	    {"sparse_categorical_crossentropy", "SparseCategoricalCrossentropy",
	     "sparse_categorical_crossentropy"},
	    {"binary_crossentropy", "BinaryCrossentropy", "binary_crossentropy"},
	    {"mean_squared_error", "MeanSquaredError", "mean_squared_error"},
	    {"mse", NULL, "mean_squared_error"},
	};
	const char *key;
	const json_t *v, *cfg;
	const char *name = NULL;

	if (json_is_array(loss) && json_array_size(loss) == 1)
		loss = json_array_get(loss, 0);
	else if (json_is_object(loss) && json_object_size(loss) == 1 &&
	         !json_object_get(loss, "class_name")) {
		const char *k = json_object_iter_key(json_object_iter((json_t *)loss));

		if (!out_name || strcmp(k, out_name))
			return CC_ERR(XO_EINVAL, origin,
			              "loss: a dict keyed by '%.64s', not the output layer '%s'", k,
			              out_name ? out_name : "?");
		loss = json_object_iter_value(json_object_iter((json_t *)loss));
	}
	if (json_is_string(loss))
		name = json_string_value(loss);
	else if (json_is_object(loss) && json_is_string(json_object_get(loss, "class_name"))) {
		enum xo_status st = builtin_check(loss, origin, "compile_config: loss");

		if (st)
			return st;
		name = json_string_value(json_object_get(loss, "class_name"));
	}
	else
		return CC_ERR(XO_EINVAL, origin, "%s",
		              json_is_null(loss) || !loss
		                  ? "no loss (compile(loss=...) is needed to train)"
		              : json_is_array(loss) || json_is_object(loss)
		                  ? "loss: only one loss (a name or a Loss object) is supported, not "
		                    "a list or dict of several"
		                  : "loss: expected a loss name or a Loss object");
	for (size_t i = 0; i < sizeof(losses) / sizeof(losses[0]); i++)
		if (json_is_string(loss) ? !strcmp(name, losses[i].name)
		                         : losses[i].cls && !strcmp(name, losses[i].cls))
			*out = losses[i].spec;
	if (!*out)
		return CC_ERR(XO_EINVAL, origin,
		              "loss '%.64s' is not supported (categorical_crossentropy, "
		              "sparse_categorical_crossentropy, binary_crossentropy, "
		              "mean_squared_error)",
		              name);
	if (json_is_string(loss))
		return XO_OK;
	cfg = json_object_get(loss, "config");
	if (cfg && !json_is_object(cfg) && !json_is_null(cfg))
		return CC_ERR(XO_EFORMAT, origin, "loss %s: config is not an object", name);
	json_object_foreach((json_t *)cfg, key, v) {
		bool ok;

		if (!strcmp(key, "name") || !strcmp(key, "dtype"))
			ok = true;
		else if (!strcmp(key, "from_logits") && !json_is_boolean(v) && !json_is_null(v) &&
		         !json_is_number(v)) /* Keras takes its Python truth */
			return CC_ERR(XO_EINVAL, origin,
			              "loss %s: from_logits: expected true, false, null or a number",
			              name);
		else if (!strcmp(key, "from_logits")) /* MeanSquaredError has none */
			ok = !json_truth(v) || strcmp(*out, "mean_squared_error");
		else if (!strcmp(key, "label_smoothing"))
			ok = json_is_number(v) && json_number_value(v) == 0.0;
		else if (!strcmp(key, "axis"))
			ok = json_is_integer(v) && json_integer_value(v) == -1;
		else if (!strcmp(key, "ignore_class"))
			ok = json_is_null(v);
		else if (!strcmp(key, "reduction"))
			ok = json_is_string(v) && !strcmp(json_string_value(v), "sum_over_batch_size");
		else
			ok = false;
		if (!ok)
			return CC_ERR(XO_EINVAL, origin, "loss %s: %.64s%s is not supported", name, key,
			              !strcmp(key, "label_smoothing") ? " != 0" : "");
		if (!strcmp(key, "from_logits"))
			*logits = json_truth(v);
	}
	return XO_OK;
}

/* The optimizer (a serialized Adam, SGD or RMSprop, or its name) as
 * "optimizer=NAME key=value ..." appended to line. */
static enum xo_status cc_optimizer(const json_t *opt, const char *origin, struct sbuf *line)
{
	static const struct {
		const char *cls, *spec;
		const char *keys[4]; /* passed to the compile line */
		const char *must_false;
	} opts[] = {
	    {"Adam", "adam", {"beta_1", "beta_2", "epsilon", NULL}, "amsgrad"},
	    {"SGD", "sgd", {"momentum", "nesterov", NULL, NULL}, NULL},
	    {"RMSprop", "rmsprop", {"rho", "momentum", "epsilon", NULL}, "centered"},
	};
	const char *cls = NULL, *key;
	const json_t *cfg, *v;
	int k = -1;

	if (json_is_string(opt))
		cls = json_string_value(opt);
	else if (json_is_object(opt) && json_is_string(json_object_get(opt, "class_name"))) {
		enum xo_status st = builtin_check(opt, origin, "compile_config: optimizer");

		if (st)
			return st;
		cls = json_string_value(json_object_get(opt, "class_name"));
	}
	else
		return CC_ERR(XO_EINVAL, origin, "%s", "no optimizer");
	for (int i = 0; i < 3; i++)
		if (!strcmp(cls, opts[i].cls) || !strcmp(cls, opts[i].spec))
			k = i;
	if (k < 0)
		return CC_ERR(XO_EINVAL, origin,
		              "optimizer '%.64s' is not supported (Adam, SGD, RMSprop)", cls);
	sb_printf(line, " optimizer=%s", opts[k].spec);
	if (json_is_string(opt))
		return XO_OK;
	cfg = json_object_get(opt, "config");
	if (!json_is_object(cfg))
		return CC_ERR(XO_EFORMAT, origin, "optimizer %s: config is not an object", cls);
	json_object_foreach((json_t *)cfg, key, v) {
		bool pass = false, ok = true;
		const char *why = "";

		for (int j = 0; opts[k].keys[j]; j++)
			pass |= !strcmp(key, opts[k].keys[j]);
		if (pass || !strcmp(key, "learning_rate")) {
			if (!strcmp(key, "nesterov")) {
				ok = json_is_boolean(v);
				if (ok)
					sb_printf(line, " nesterov=%s", json_is_true(v) ? "True" : "False");
			} else if (json_is_number(v)) {
				sb_printf(line, " %s=%.9g", key, json_number_value(v)); /* float */
			} else {
				ok = false;
				why = json_is_object(v) && !strcmp(key, "learning_rate")
				          ? " (a LearningRateSchedule)"
				          : " (not a number)";
			}
		} else if (!strcmp(key, "name") || !strcmp(key, "ema_momentum")) {
			ok = true; /* no effect (ema_momentum: use_ema is false) */
		} else if (!strcmp(key, "use_ema") ||
		           (opts[k].must_false && !strcmp(key, opts[k].must_false))) {
			ok = json_is_false(v);
		} else if (!strcmp(key, "weight_decay") || !strcmp(key, "clipnorm") ||
		           !strcmp(key, "clipvalue") || !strcmp(key, "global_clipnorm") ||
		           !strcmp(key, "ema_overwrite_frequency") ||
		           !strcmp(key, "loss_scale_factor") ||
		           !strcmp(key, "gradient_accumulation_steps")) {
			ok = json_is_null(v);
		} else {
			ok = false;
		}
		if (!ok)
			return CC_ERR(XO_EINVAL, origin, "optimizer %s: %.64s%s is not supported", cls,
			              key, why);
	}
	return XO_OK;
}

/* The compile line of a compile_config (or a legacy training_config, whose
 * optimizer is under optimizer_config), appended to spec. */
static enum xo_status map_compile(const json_t *cc, const char *origin, struct sbuf *spec)
{
	const char *key, *loss = NULL, *p;
	const json_t *v, *opt = NULL, *metrics = NULL;
	struct sbuf line = {0};
	enum xo_status st = XO_OK;
	bool accuracy = false, logits = false;
	char out_name[XO_LAYER_NAME_MAX] = "";

	if (!json_is_object(cc))
		return CC_ERR(XO_EFORMAT, origin, "%s", "not an object");
	/* the output layer: the spec's last layer line's name (one output) */
	for (p = spec->s; p && (p = strstr(p, " name=")); p += 6)
		sscanf(p + 6, "%63[^ \n]", out_name);
	json_object_foreach((json_t *)cc, key, v) {
		if (!strcmp(key, "loss"))
			st = cc_loss(v, origin, out_name, &loss, &logits);
		else if (!strcmp(key, "optimizer") || !strcmp(key, "optimizer_config"))
			opt = v;
		else if (!strcmp(key, "metrics"))
			metrics = v;
		else if (!strcmp(key, "loss_weights") || !strcmp(key, "weighted_metrics") ||
		         !strcmp(key, "sample_weight_mode"))
			st = json_is_null(v) || (json_is_array(v) && !json_array_size(v))
			         ? XO_OK
			         : CC_ERR(XO_EINVAL, origin, "%s is not supported", key);
		else if (!strcmp(key, "run_eagerly") || !strcmp(key, "steps_per_execution") ||
		         !strcmp(key, "jit_compile") || !strcmp(key, "auto_scale_loss"))
			; /* how Keras runs the step, not what it computes */
		else
			st = CC_ERR(XO_EINVAL, origin, "%.64s is not supported", key);
		if (st)
			return st;
	}
	if (!loss)
		return cc_loss(NULL, origin, NULL, &loss, &logits);
	/* metrics: none, or the one "accuracy" (Keras picks its kind) */
	if (json_is_array(metrics) && json_array_size(metrics) == 1 &&
	    json_is_string(json_array_get(metrics, 0)) &&
	    (!strcmp(json_string_value(json_array_get(metrics, 0)), "accuracy") ||
	     !strcmp(json_string_value(json_array_get(metrics, 0)), "acc")))
		accuracy = true;
	else if (metrics && !json_is_null(metrics) &&
	         !(json_is_array(metrics) && !json_array_size(metrics)))
		return CC_ERR(XO_EINVAL, origin, "%s",
		              "metrics: only ['accuracy'] (or none) is supported");
	sb_printf(&line, "compile loss=%s%s", loss, logits ? " from_logits=True" : "");
	st = cc_optimizer(opt, origin, &line);
	if (!st)
		sb_printf(spec, "%s metrics=%s\n", line.s, accuracy ? "accuracy" : "none");
	free(line.s);
	return st;
}

/* Each layer named in masked (a name a line) is called with Keras's mask=:
 * the parsed spec s must give its call the mask too (mask_in), or xo would
 * run it unmasked; one named "!name" is called with an all-true mask, and
 * s must give it none (the same math as no mask). */
static enum xo_status mask_calls_check(const struct xo_model_spec *s, const char *masked,
                                       const char *origin)
{
	for (const char *n = masked; n && *n; n = strchr(n, '\n') + 1)
		for (int i = 0; i < s->nlayers; i++) {
			const struct xo_layer_spec *l = &s->layers[i];
			size_t len = strcspn(n, "\n");

			bool ones = *n == '!';

			if (strlen(l->name) != len - ones || strncmp(l->name, n + ones, len - ones))
				continue;
			if (ones && l->mask_in)
				return xo_error(XO_EINVAL,
				                "%s: layer '%s' (%s): is called with an all-true mask= "
				                "while its input carries the ids' mask: not supported",
				                origin, l->name, xo_layer_kinds[l->kind].keras);
			if (ones)
				continue;
			if (!l->mask_in)
				return xo_error(XO_EINVAL,
				                "%s: layer '%s' (%s): is called with a mask= its "
				                "input does not carry: not supported",
				                origin, l->name, xo_layer_kinds[l->kind].keras);
		}
	return XO_OK;
}

/* The spec parser's verdict on the mapped text, its "origin:LINE: reason"
 * rewritten to name the Keras layer of that line; then the layers called
 * with Keras's mask= (masked, mask_calls_check). */
static enum xo_status spec_check(const char *text, const char *masked, const char *origin)
{
	struct xo_model_spec s;
	enum xo_status st = xo_spec_parse(text, "", &s);
	int line;
	const char *msg, *p;

	if (!st) {
		st = mask_calls_check(&s, masked, origin);
		xo_spec_free(&s);
		return st;
	}
	msg = xo_last_error();
	if (sscanf(msg, ":%d:", &line) == 1 && (p = strchr(msg + 1, ':')) && line >= 1) {
		/* the line's "kind name=NAME": the layer's name */
		const char *l = text;
		char name[XO_LAYER_NAME_MAX] = "?", reason[512];

		for (int i = 1; i < line && l; i++)
			l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL;
		if (l && !strncmp(l, "compile ", 8))
			return xo_error(st, "%s: compile_config: %s", origin,
			                p + 1 + (p[1] == ' '));
		if (l && (l = strstr(l, " name=")))
			sscanf(l + 6, "%63[^ \n]", name);
		snprintf(reason, sizeof(reason), "%s", p + 1 + (p[1] == ' '));
		/* a reason that names the layer itself is not prefixed twice */
		p = reason;
		if (!strncmp(p, "layer '", 7) && !strncmp(p + 7, name, strlen(name)) &&
		    !strncmp(p + 7 + strlen(name), "': ", 3))
			p += 7 + strlen(name) + 3;
		return xo_error(st, "%s: layer '%s': %s", origin, name, p);
	}
	return xo_error(st, "%s: %s", origin, msg);
}

/* The bounds on a config's JSON (docs/model.md), checked on the text before
 * jansson builds its tree: a few KB of a real config holds hundreds of
 * values; a small file of "[[],[],...]" would hold tens of millions. */
#define JSON_VALUES_MAX 1000000
#define JSON_DEPTH_MAX 64

/* A cheap pass over the text: its containers and separators (an upper bound
 * on the values a tree would hold) and its nesting, strings skipped. */
static enum xo_status json_bounded(const char *s, size_t len, const char *origin,
                                   const char *what)
{
	int64_t values = 1;
	int depth = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = false;
			continue;
		}
		if (ch == '"') {
			in_str = true;
		} else if (ch == '[' || ch == '{') {
			values++;
			if (++depth > JSON_DEPTH_MAX)
				return xo_error(XO_EFORMAT, "%s: %s nests deeper than %d, the limit",
				                origin, what, JSON_DEPTH_MAX);
		} else if (ch == ']' || ch == '}') {
			depth--;
		} else if (ch == ',' || ch == ':') {
			values++;
		}
		if (values > JSON_VALUES_MAX)
			return xo_error(XO_EFORMAT, "%s: %s holds more than %d values, the limit",
			                origin, what, JSON_VALUES_MAX);
	}
	return XO_OK;
}

/* Python's json module writes a NaN or infinite float as the bare token
 * NaN, Infinity or -Infinity, which is not JSON (jansson: "invalid token"),
 * and Keras does so for any layer argument that is one (say
 * Normalization(mean=float("nan"))). To say which layer and key instead of a
 * line number, a config that does not parse is parsed again with every such
 * token outside a string made a string that starts with NONFINITE_MARK (a
 * control character no config string holds), and a walk of the tree finds
 * the first. */
#define NONFINITE_MARK "\x1fxo-nonfinite "

/* text with each bare non-finite token made a marked string; NULL if it
 * has none (or out of memory) */
static char *nonfinite_marked(const char *s, size_t len)
{
	static const char *const toks[] = {"-Infinity", "Infinity", "NaN"};
	struct sbuf b = {0};
	size_t run = 0; /* start of the bytes not yet copied */
	bool in_str = false, any = false;

	for (size_t i = 0; i < len; i++) {
		if (in_str) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_str = false;
			continue;
		}
		if (s[i] == '"') {
			in_str = true;
			continue;
		}
		for (size_t t = 0; t < sizeof(toks) / sizeof(toks[0]); t++) {
			size_t n = strlen(toks[t]);

			if (len - i >= n && !memcmp(s + i, toks[t], n)) {
				sb_printf(&b, "%.*s\"\\u001fxo-nonfinite %s\"", (int)(i - run), s + run,
				          toks[t]);
				i += n - 1;
				run = i + 1;
				any = true;
				break;
			}
		}
	}
	sb_printf(&b, "%.*s", (int)(len - run), s + run);
	if (!any || b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* key = head + (key is "" ? "" : key starts with "[" ? key : "." key) */
static void path_prepend(char *key, size_t cap, const char *head)
{
	char rest[160];

	snprintf(rest, sizeof(rest), "%s", key);
	if (snprintf(key, cap, "%s%s%s", head, rest[0] && rest[0] != '[' ? "." : "", rest) >=
	    (int)cap)
		key[cap - 1] = '\0'; /* a long path is cut; the message stays one line */
}

/* The first marked value under v: the innermost Keras layer holding it (an
 * object with a class_name and a config that has a name) in *cls / *name,
 * and its path from that layer's config ("kernel_initializer.config.seed",
 * "units[1]"; from the root when no layer holds it) in key; the token, or
 * NULL. */
static const char *nonfinite_find(const json_t *v, const char **cls, const char **name,
                                  char *key, size_t cap)
{
	const char *found = NULL, *k;
	json_t *sub;
	size_t i;

	if (json_is_string(v)) {
		const char *t = json_string_value(v);

		if (strncmp(t, NONFINITE_MARK, strlen(NONFINITE_MARK)))
			return NULL;
		key[0] = '\0';
		return t + strlen(NONFINITE_MARK);
	}
	if (json_is_array(v)) {
		json_array_foreach((json_t *)v, i, sub) {
			if ((found = nonfinite_find(sub, cls, name, key, cap))) {
				char idx[32];

				snprintf(idx, sizeof(idx), "[%zu]", i);
				if (!*cls)
					path_prepend(key, cap, idx);
				return found;
			}
		}
		return NULL;
	}
	if (!json_is_object(v))
		return NULL;
	json_object_foreach((json_t *)v, k, sub) {
		if ((found = nonfinite_find(sub, cls, name, key, cap))) {
			if (!*cls)
				path_prepend(key, cap, k);
			break;
		}
	}
	if (found && !*cls) {
		const json_t *cfg = json_object_get(v, "config");
		const char *c = json_string_value(json_object_get(v, "class_name"));
		const char *n = json_is_object(cfg) ? json_string_value(json_object_get(cfg, "name"))
		                                    : NULL;

		if (c && n && !strncmp(key, "config.", 7)) {
			*cls = c;
			*name = n;
			memmove(key, key + 7, strlen(key + 7) + 1);
		}
	}
	return found;
}

/* The refusal of a config that holds a non-finite token, or XO_OK when it
 * holds none (the caller reports jansson's own error). */
static enum xo_status nonfinite_refusal(const char *json, size_t len, const char *origin,
                                        const char *what)
{
	char *marked = nonfinite_marked(json, len), key[160] = "", sn[200], sc[200], sk[200];
	const char *cls = NULL, *name = NULL, *tok;
	json_error_t je;
	json_t *root;
	enum xo_status st = XO_OK;

	if (!marked)
		return XO_OK;
	root = json_loads(marked, JSON_REJECT_DUPLICATES, &je);
	free(marked);
	if (!root)
		return XO_OK;
	tok = nonfinite_find(root, &cls, &name, key, sizeof(key));
	xo_escape_line(sk, sizeof(sk), key);
	if (tok && cls)
		st = xo_error(XO_EFORMAT,
		              "%s: layer '%s' (%s): %s is %s in the %s; xo reads only finite "
		              "numbers there",
		              origin, xo_escape_line(sn, sizeof(sn), name),
		              xo_escape_line(sc, sizeof(sc), cls), sk, tok, what);
	else if (tok)
		st = xo_error(XO_EFORMAT, "%s: %s is %s in the %s; xo reads only finite numbers there",
		              origin, sk, tok, what);
	json_decref(root);
	return st;
}

/* The spec of a model config; its compile_config (Keras 3, in the config)
 * or training_config (legacy .h5, its own JSON: tc) becomes the compile
 * line; neither: the default compile (the seed's). */
static enum xo_status config_to_spec(const char *json, size_t len, const char *tc,
                                     const char *origin, char **text)
{
	json_error_t je;
	json_t *root, *troot = NULL;
	const json_t *cc;
	struct sbuf spec = {0}, masked = {0};
	enum xo_status st;

	*text = NULL;
	if ((st = json_bounded(json, len, origin, "model config JSON")) ||
	    (tc && (st = json_bounded(tc, strlen(tc), origin, "training_config JSON"))))
		return st;
	root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return (st = nonfinite_refusal(json, len, origin, "model config"))
		           ? st
		           : xo_error(XO_EFORMAT, "%s: bad model config JSON: %s (line %d)", origin,
		                      je.text, je.line);
	if (tc && !(troot = json_loads(tc, JSON_REJECT_DUPLICATES, &je))) {
		json_decref(root);
		return (st = nonfinite_refusal(tc, strlen(tc), origin, "training_config"))
		           ? st
		           : xo_error(XO_EFORMAT, "%s: bad training_config JSON: %s (line %d)",
		                      origin, je.text, je.line);
	}
	{
		/* a comment line: the path, escaped, can add no line to the spec */
		char shown[4200];

		sb_printf(&spec, "# from the Keras model %s\n",
		          xo_escape_line(shown, sizeof(shown), origin));
	}
	st = !json_is_object(root)
	         ? xo_error(XO_EFORMAT, "%s: model config is not an object", origin)
	         : builtin_check(root, origin, "model");
	if (!st)
		st = map_config(root, origin, &spec, &masked);
	cc = troot ? troot : json_is_object(root) ? json_object_get(root, "compile_config") : NULL;
	/* Keras writes {} (or nothing) for a model never compiled */
	if (!st && cc && !json_is_null(cc) && !(json_is_object(cc) && !json_object_size(cc)))
		st = map_compile(cc, origin, &spec);
	if (!st && spec.oom)
		st = xo_error(XO_ENOMEM, "%s: out of memory", origin);
	json_decref(troot);
	json_decref(root);
	if (!st && masked.oom)
		st = xo_error(XO_ENOMEM, "%s: out of memory", origin);
	if (!st)
		st = spec_check(spec.s, masked.s, origin);
	free(masked.s);
	if (st) {
		free(spec.s);
		return st;
	}
	*text = spec.s;
	return XO_OK;
}

enum xo_status xo_keras_config_to_spec(const char *json, size_t len, const char *origin,
                                       char **text)
{
	return config_to_spec(json, len, NULL, origin, text);
}

/* Declared parameters of a spec text that a weights file stores, counted
 * without building the model (capped just above XO_MODEL_PARAMS_MAX). */
static enum xo_status spec_params(const char *text, const char *origin, int64_t *n)
{
	struct xo_model_spec s;
	enum xo_status st = xo_spec_parse(text, origin, &s);

	*n = 0;
	if (st)
		return st;
	for (int i = 0; i < s.nlayers; i++) {
		const struct xo_layer_spec *l = &s.layers[i];
		/* a Normalization given its mean and variance stores none */
		int64_t t = xo_layer_total(l) - (l->norm_given ? l->state_count : 0);

		if (t < 0 || t > XO_MODEL_PARAMS_MAX - *n) {
			*n = XO_MODEL_PARAMS_MAX + 1;
			break;
		}
		*n += t;
	}
	xo_spec_free(&s);
	return XO_OK;
}

/* Fewer float values stored than the config declares: named by the first
 * layer variable stored in another type (an int32 gamma) where there is
 * one, as the count alone misleads (the variable is there). The optimizer's
 * own variables (its int iteration counter) are not layer weights. */
static enum xo_status short_weights_error(const struct xo_h5_file *f, const char *path,
                                          int64_t declared)
{
	for (int i = 0; i < f->nd; i++) {
		const struct xo_h5_dataset *d = &f->datasets[i];

		if (!(d->flags & 1) && d->count > 0 && !strstr(d->path, "optimizer"))
			return xo_error(XO_EFORMAT,
			                "%s: dataset '%.200s' is not floating point (layer weights "
			                "must be float32)",
			                path, d->path);
	}
	return xo_error(XO_EFORMAT,
	                "%s: the config declares %" PRId64 " parameters, the file stores %" PRId64
	                " weight values",
	                path, declared, f->floats);
}

/*
 * The spec of a .keras or legacy .h5 model, read by the isolated reader
 * (h5read.c). Its declared parameters are bounded by what the file stores
 * and by XO_MODEL_PARAMS_MAX before anyone allocates the model: a small file
 * cannot declare a large model.
 */
static enum xo_status keras_spec(const char *path, bool weights, char **text)
{
	struct xo_h5_file f;
	enum xo_status st;
	int64_t declared = 0;

	*text = NULL;
	if ((st = weights ? xo_h5_read(path, false, &f) : xo_h5_read_config(path, &f)))
		return st;
	if (!f.config)
		st = xo_error(XO_EFORMAT,
		              "%s: an HDF5 file without model_config: a weights file, not a "
		              "model (give it to --weights, the model to --model)",
		              path);
	if (!st)
		st = config_to_spec(f.config, f.config_len, f.training, path, text);
	if (!st)
		st = spec_params(*text, path, &declared);
	if (!st && declared > XO_MODEL_PARAMS_MAX)
		st = xo_error(XO_EFORMAT, "%s: the config declares more than %" PRId64
		                          " parameters, the limit for a model file", path,
		              (int64_t)XO_MODEL_PARAMS_MAX);
	else if (!st && weights && declared > f.floats)
		st = short_weights_error(&f, path, declared);
	if (st) {
		free(*text);
		*text = NULL;
	}
	xo_h5_file_free(&f);
	return st;
}

enum xo_status xo_keras_spec_text(const char *path, char **text)
{
	return keras_spec(path, true, text);
}

enum xo_status xo_keras_spec_config(const char *path, char **text)
{
	return keras_spec(path, false, text);
}

/* ---- weights in ------------------------------------------------------------ */

/* dir/name, or name alone under the root. */
static void join(char *dst, size_t cap, const char *dir, const char *name)
{
	snprintf(dst, cap, "%s%s%s", dir, *dir ? "/" : "", name);
}

/* The dataset at dpath into dst: its shape checked against v, every value
 * finite (a NaN, an Inf, or a float64 beyond float32's range, which reads
 * as Inf, is refused naming the layer and the variable). */
static enum xo_status read_var(const struct xo_h5_file *f, const char *dpath, const char *origin,
                               const char *layer, const struct xo_layer_var *v, float *dst)
{
	const struct xo_h5_dataset *d = xo_h5_dataset_find(f, dpath);
	bool same;

	if (!d)
		return xo_error(XO_EFORMAT, "%s: layer '%s': %s (%s) %s", origin, layer, v->name,
		                dpath, xo_h5_group_find(f, dpath) ? "is not a dataset"
		                                                  : "is not in the file");
	if (v->keras_int) { /* a scalar xo does not use: its presence and rank only */
		if (d->ndim != 0)
			return xo_error(XO_EFORMAT, "%s: layer '%s': %s (%s) is not a scalar", origin,
			                layer, v->name, dpath);
		return XO_OK;
	}
	if (!(d->flags & 1))
		return xo_error(XO_EFORMAT, "%s: layer '%s': %s (%s) is not a float array", origin,
		                layer, v->name, dpath);
	if (!(d->flags & 4))
		return xo_error(XO_EFORMAT, "%s: layer '%s': %s (%s) stores no values", origin,
		                layer, v->name, dpath);
	same = d->ndim == v->ndim;
	for (int i = 0; same && i < d->ndim; i++)
		same = d->dim[i] == v->dim[i];
	if (!same) {
		char got[128] = "", want[128] = "";
		size_t g = 0, w = 0;

		for (int i = 0; i < d->ndim && g < sizeof(got); i++)
			g += (size_t)snprintf(got + g, sizeof(got) - g, "%s%" PRId64, i ? ", " : "",
			                      d->dim[i]);
		for (int i = 0; i < v->ndim && w < sizeof(want); i++)
			w += (size_t)snprintf(want + w, sizeof(want) - w, "%s%" PRId64, i ? ", " : "",
			                      v->dim[i]);
		return xo_error(XO_EFORMAT, "%s: layer '%s': %s has shape (%s), the model needs (%s)",
		                origin, layer, v->name, got, want);
	}
	if (!d->data && d->count)
		return xo_error(XO_EFORMAT, "%s: layer '%s': %s cannot be read", origin, layer,
		                v->name);
	for (int64_t i = 0; i < d->count; i++)
		if (!isfinite(d->data[i]))
			return xo_error(XO_EFORMAT, "%s: layer '%s': %s holds %s at index %" PRId64
			                            " (weights must be finite float32 values)",
			                origin, layer, v->name,
			                isnan(d->data[i]) ? "NaN" : "an infinite or beyond-float32 value",
			                i);
		else if (v->nonneg && d->data[i] < 0.0f)
			return xo_error(XO_EFORMAT, "%s: layer '%s': %s holds %g at index %" PRId64
			                            " (a variance must be >= 0)",
			                origin, layer, v->name, (double)d->data[i], i);
	if (d->count)
		memcpy(dst, d->data, (size_t)d->count * sizeof(*dst));
	return XO_OK;
}

/* The names of n variables as a list for a message: "kernel", "kernel and
 * bias", "mean, variance and count". */
static void var_names(const struct xo_layer_var *v, int n, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int j = 0; j < n && len < size; j++) {
		int w = snprintf(buf + len, size - len, "%s%s",
		                 j == 0 ? "" : j + 1 == n ? " and " : ", ", v[j].name);

		if (w < 0)
			break;
		len += (size_t)w;
	}
}

/* The group of a Keras 3 weights file that holds the vars of layer ls, the
 * k-th of its kind (Keras names them kind, kind_1, ...). */
static void layer_group(char *grp, size_t size, const struct xo_layer_spec *ls, int k,
                        const char *vars)
{
	if (k)
		snprintf(grp, size, "layers/%s_%d/%s", xo_spec_kind_name(ls->kind), k, vars);
	else
		snprintf(grp, size, "layers/%s/%s", xo_spec_kind_name(ls->kind), vars);
}

/* Keras 3 layout: layers/<kind>[_k]/vars/<i>, <kind> Keras's snake-case
 * class name counted per class in layer order (not the layer's name). */
static enum xo_status load_keras3(const struct xo_h5_file *f, const char *origin,
                                  struct xo_model *m, float *w)
{
	int nl = xo_model_layer_count(m);
	enum xo_status st = XO_OK;

	for (int i = 0; !st && i < nl; i++) {
		const struct xo_layer_spec *ls = xo_model_layer_spec(m, i);
		struct xo_layer_var v[XO_LAYER_VARS_MAX];
		int nv = xo_model_layer_vars(m, i, v), k = 0, have;
		char grp[256], path[300];

		for (int j = 0; j < i; j++)
			k += xo_model_layer_spec(m, j)->kind == ls->kind;
		/* the recurrent layers keep their variables in their cell,
		 * TimeDistributed in its wrapped layer, Bidirectional in its
		 * two RNNs' cells (the first half of its variables in the
		 * forward one's) */
		bool bi = ls->kind == XO_LAYER_BIDIRECTIONAL;
		const char *vars = xo_layer_rnn_op(ls->kind) != XO_OP_COUNT      ? "cell/vars"
		                   : ls->kind == XO_LAYER_TIME_DISTRIBUTED ? "layer/vars"
		                                                           : "vars";

		if (!nv)
			continue;
		if (v[0].sub) { /* each variable in its sublayer's vars */
			layer_group(grp, sizeof(grp), ls, k, vars);
			for (int j = 0; !st && j < nv; j++) {
				snprintf(path, sizeof(path), "%.*s/%s/vars/%d",
				         (int)(strlen(grp) - strlen(vars) - 1), grp, v[j].sub,
				         v[j].sub_index);
				if (v[j].sub_index == 0 && j + 1 < nv) {
					char sg[300];

					snprintf(sg, sizeof(sg), "%.*s", (int)(strlen(path) - 2), path);
					have = xo_h5_group_children(f, sg);
					if (have != 1 + (v[j + 1].sub == v[j].sub))
						st = xo_error(XO_EFORMAT,
						              "%s: layer '%s': %s holds %d variables, the "
						              "model needs %d",
						              origin, ls->name, sg, have,
						              1 + (v[j + 1].sub == v[j].sub));
				}
				if (!st)
					st = read_var(f, path, origin, ls->name, &v[j], w + v[j].off);
			}
			continue;
		}
		for (int g = 0; !st && g < (bi ? 2 : 1); g++) {
			int per = bi ? nv / 2 : nv;

			if (bi)
				vars = g ? "backward_layer/cell/vars" : "forward_layer/cell/vars";
			layer_group(grp, sizeof(grp), ls, k, vars);
			if (!xo_h5_group_find(f, grp))
				return xo_error(XO_EFORMAT, "%s: layer '%s': no %s in the file", origin,
				                ls->name, grp);
			have = xo_h5_group_children(f, grp);
			if (have != per) {
				char names[200];

				var_names(v + g * per, per, names, sizeof(names));
				st = xo_error(XO_EFORMAT, "%s: layer '%s': %s holds %d variables, the "
				                          "model needs %d (%s)", origin, ls->name, grp,
				              have, per, names);
			}
			for (int j = 0; !st && j < per; j++) {
				snprintf(path, sizeof(path), "%s/%d", grp, j);
				st = read_var(f, path, origin, ls->name, &v[g * per + j],
				              w + v[g * per + j].off);
			}
		}
	}
	return st;
}

/* Legacy layout (Keras 2 save_weights / ModelCheckpoint, and a legacy full
 * model's model_weights): attribute layer_names of the group at gpath; each
 * layer's group has weight_names, dataset paths relative to it. Matched in
 * order, as Keras loads it (layers with weights only). */
static enum xo_status load_legacy(const struct xo_h5_file *f, const char *gpath,
                                  const char *origin, struct xo_model *m, float *w)
{
	const struct xo_h5_group *g = xo_h5_group_find(f, gpath);
	int nl = xo_model_layer_count(m), li = 0, file_with = 0, model_with = 0;
	enum xo_status st = XO_OK;

	if (!g)
		return xo_error(XO_EFORMAT, "%s: %s is not a group", origin, gpath);
	if (g->n_layer_names < 0)
		return xo_error(XO_EFORMAT, "%s: HDF5 file without Keras weights (no layers group, "
		                            "no layer_names attribute)", origin);
	for (int i = 0; !st && i < g->n_layer_names; i++) {
		const char *name = g->layer_names[i];
		const struct xo_h5_group *lg;
		char lpath[2100], dpath[3200];
		int nw;

		join(lpath, sizeof(lpath), gpath, name);
		if (!(lg = xo_h5_group_find(f, lpath)))
			return xo_error(XO_EFORMAT, "%s: layer_names names '%s', which is not in the "
			                            "file", origin, name);
		nw = lg->n_weight_names;
		if (nw < 0)
			return xo_error(XO_EFORMAT, "%s: layer '%s' has no weight_names", origin, name);
		if (nw > 0) {
			struct xo_layer_var v[XO_LAYER_VARS_MAX];
			int nv = 0;

			file_with++;
			while (li < nl && !(nv = xo_model_layer_vars(m, li, v)))
				li++;
			if (li >= nl) {
				; /* more layers in the file than in the model: counted below */
			} else if (nv != nw) {
				st = xo_error(XO_EFORMAT, "%s: layer '%s' holds %d weights, the model's "
				                          "layer '%s' needs %d", origin, name, nw,
				              xo_model_layer_spec(m, li)->name, nv);
			} else {
				for (int j = 0; !st && j < nv; j++) {
					join(dpath, sizeof(dpath), lpath, lg->weight_names[j]);
					st = read_var(f, dpath, origin, name, &v[j], w + v[j].off);
				}
				li++;
			}
		}
	}
	for (int i = 0; i < nl; i++)
		model_with += xo_model_layer_vars(m, i, (struct xo_layer_var[XO_LAYER_VARS_MAX]){0}) > 0;
	if (!st && file_with != model_with)
		st = xo_error(XO_EFORMAT, "%s: the file holds weights of %d layers, the model has %d "
		                          "layers with weights", origin, file_with, model_with);
	return st;
}

enum xo_status xo_keras_load_weights(struct xo_model *m, const char *path)
{
	int64_t np = xo_model_param_count(m);
	struct xo_h5_file f;
	float *w = NULL;
	enum xo_status st;

	if ((st = xo_h5_read(path, true, &f)))
		return st;
	w = malloc((size_t)(np ? np : 1) * sizeof(*w));
	if (!w)
		st = xo_error(XO_ENOMEM, "%s: out of memory", path);
	xo_error_clear();
	if (!st && np && (st = xo_model_params_host(m, w, false)))
		;
	else if (!st && xo_h5_group_find(&f, "layers"))
		st = load_keras3(&f, path, m, w);
	else if (!st && xo_h5_dataset_find(&f, "model_weights"))
		st = xo_error(XO_EFORMAT, "%s: model_weights is not a group", path);
	else if (!st && !np && !xo_h5_group_find(&f, "model_weights") &&
	         (!xo_h5_group_find(&f, "") || xo_h5_group_find(&f, "")->n_layer_names < 0))
		; /* no weights to load, and the file lists none (a pooling-only model) */
	else if (!st)
		st = load_legacy(&f, xo_h5_group_find(&f, "model_weights") ? "model_weights" : "",
		                 path, m, w);
	xo_h5_file_free(&f);
	if (!st)
		st = xo_model_params_host(m, w, true);
	free(w);
	return st;
}

/* ---- weights and models out --------------------------------------------------- */

static bool h5_attr_put(hid_t obj, const char *name, const char *val)
{
	hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a = -1;
	bool ok = false;

	/* variable-length UTF-8, as h5py writes a Python str */
	if (t >= 0 && s >= 0 && H5Tset_size(t, H5T_VARIABLE) >= 0 &&
	    H5Tset_cset(t, H5T_CSET_UTF8) >= 0)
		a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
	if (a >= 0)
		ok = H5Awrite(a, t, &val) >= 0;
	if (a >= 0)
		H5Aclose(a);
	if (s >= 0)
		H5Sclose(s);
	if (t >= 0)
		H5Tclose(t);
	return ok;
}

static hid_t h5_group(hid_t loc, const char *name, const char *name_attr)
{
	hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);

	if (g >= 0 && name_attr && !h5_attr_put(g, "name", name_attr)) {
		H5Gclose(g);
		return -1;
	}
	return g;
}

/* Bidirectional's group of one direction's variables under its layer's
 * group lg: <forward|backward>_layer/cell/vars, beside that RNN's empty
 * vars (named forward_<kind> / backward_<kind>, as Keras names the RNNs
 * it builds); -1 on failure. */
static hid_t bidir_group(hid_t lg, const struct xo_layer_spec *ls, bool backward)
{
	const char *dir = backward ? "backward" : "forward";
	char name[XO_LAYER_NAME_MAX + 16];
	hid_t rg, ev, cg, vg = -1;

	snprintf(name, sizeof(name), "%s_layer", dir);
	rg = h5_group(lg, name, NULL);
	if (rg < 0)
		return -1;
	snprintf(name, sizeof(name), "%s_%s", dir, xo_spec_kind_name((enum xo_layer_kind)ls->inner));
	ev = h5_group(rg, "vars", name);
	cg = ev >= 0 ? h5_group(rg, "cell", NULL) : -1;
	if (cg >= 0)
		vg = h5_group(cg, "vars", name);
	if (cg >= 0)
		H5Gclose(cg);
	if (ev >= 0)
		H5Gclose(ev);
	H5Gclose(rg);
	return vg;
}

/* One float32 dataset name of var's shape in g, w's var.count values; a
 * keras_int variable as Keras writes it, an int32 scalar (0). */
static bool h5_var_put(hid_t g, const char *name, const struct xo_layer_var *v, const float *w)
{
	hsize_t dims[XO_MAX_DIMS];
	hid_t s, d;
	bool ok;

	if (v->keras_int) {
		int32_t zero = 0;

		s = H5Screate(H5S_SCALAR);
		d = s >= 0 ? H5Dcreate2(g, name, H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT,
		                        H5P_DEFAULT)
		           : -1;
		ok = d >= 0 && H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, &zero) >= 0;
		if (d >= 0)
			H5Dclose(d);
		if (s >= 0)
			H5Sclose(s);
		return ok;
	}

	for (int q = 0; q < v->ndim; q++)
		dims[q] = (hsize_t)v->dim[q];
	s = H5Screate_simple(v->ndim, dims, NULL);
	d = s >= 0 ? H5Dcreate2(g, name, H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
	           : -1;
	ok = d >= 0 && H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w + v->off) >= 0;
	if (d >= 0)
		H5Dclose(d);
	if (s >= 0)
		H5Sclose(s);
	return ok;
}

/* Variables held by sublayers (xo_layer_var's sub: MultiHeadAttention's
 * query_dense/vars/0 ...) under the layer's group lg, each sublayer's vars
 * group named as Keras names the sublayer (the variable name's part before
 * its last '_': query_kernel's query); and the variable-less sublayers Keras 3 writes beside them. */
static bool write_sub_vars(hid_t lg, const struct xo_layer_var *v, int nv, const float *w)
{
	static const char *const empty[2][2] = {{"_dropout_layer", "dropout"},
	                                        {"_softmax", "softmax"}};
	bool ok = true;

	for (int e = 0; ok && e < 2; e++) {
		hid_t sg = h5_group(lg, empty[e][0], NULL), vg = sg >= 0 ? h5_group(sg, "vars", empty[e][1]) : -1;

		ok = vg >= 0;
		if (vg >= 0)
			H5Gclose(vg);
		if (sg >= 0)
			H5Gclose(sg);
	}
	for (int j = 0; ok && j < nv; j++) {
		char sname[64], idx[16];
		hid_t sg, vg;

		if (v[j].sub_index != 0)
			continue;
		snprintf(sname, sizeof(sname), "%.*s", (int)(strrchr(v[j].name, '_') - v[j].name),
		         v[j].name);
		sg = h5_group(lg, v[j].sub, NULL);
		vg = sg >= 0 ? h5_group(sg, "vars", sname) : -1;
		ok = vg >= 0;
		for (int q = j; ok && q < nv && v[q].sub == v[j].sub; q++) {
			snprintf(idx, sizeof(idx), "%d", v[q].sub_index);
			ok = h5_var_put(vg, idx, &v[q], w);
		}
		if (vg >= 0)
			H5Gclose(vg);
		if (sg >= 0)
			H5Gclose(sg);
	}
	return ok;
}

/* The Keras 3 .weights.h5 layout of m into a new in-memory HDF5 file
 * (float32 datasets layers/<kind>[_k]/vars/<i>, each vars group naming its
 * layer, as Keras 3.x's save_weights writes), its bytes handed back in
 * *image (malloc'd). The core driver without a backing store never opens a
 * file by name, so no name beside the target is ever created or followed:
 * the bytes reach the disk only through xo_output. */
static enum xo_status write_weights_h5(struct xo_model *m, const char *path, const float *w,
                                       char **image, size_t *image_len)
{
	int nl = xo_model_layer_count(m);
	hid_t f, fapl, layers, g;
	ssize_t n;
	bool ok = true;

	*image = NULL;
	*image_len = 0;
	h5_quiet();
	fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl < 0 || H5Pset_fapl_core(fapl, 1 << 16, 0) < 0) {
		if (fapl >= 0)
			H5Pclose(fapl);
		return xo_error(XO_ENOMEM, "%s: cannot set up HDF5 in memory", path);
	}
	/* The name only labels the in-memory file, but libhdf5 first tries to
	 * open it O_RDWR (is that file open already?): a name beneath a
	 * character device, which no file can have (ENOTDIR), so nothing
	 * planted in the working directory is opened or read. */
	f = H5Fcreate("/dev/null/xo-in-memory.weights.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	H5Pclose(fapl);
	if (f < 0)
		return xo_error(XO_EIO, "%s: cannot create an HDF5 image in memory", path);
	layers = h5_group(f, "layers", NULL);
	ok = layers >= 0;
	for (int i = 0; ok && i < nl; i++) {
		const struct xo_layer_spec *ls = xo_model_layer_spec(m, i);
		struct xo_layer_var v[XO_LAYER_VARS_MAX];
		int nv = xo_model_layer_vars(m, i, v), k = 0;
		char name[128];
		hid_t lg, vg;

		for (int j = 0; j < i; j++)
			k += xo_model_layer_spec(m, j)->kind == ls->kind;
		if (k)
			snprintf(name, sizeof(name), "%s_%d", xo_spec_kind_name(ls->kind), k);
		else
			snprintf(name, sizeof(name), "%s", xo_spec_kind_name(ls->kind));
		lg = h5_group(layers, name, NULL);
		vg = lg >= 0 ? h5_group(lg, "vars", ls->name) : -1;
		if (vg >= 0 && (xo_layer_rnn_op(ls->kind) != XO_OP_COUNT ||
		                ls->kind == XO_LAYER_TIME_DISTRIBUTED)) {
			/* Keras 3: an empty vars beside cell/vars (layer/vars,
			 * named as the wrapped layer) holding them */
			bool td = ls->kind == XO_LAYER_TIME_DISTRIBUTED;
			hid_t cg = h5_group(lg, td ? "layer" : "cell", NULL);

			H5Gclose(vg);
			vg = cg >= 0 ? h5_group(cg, "vars", td ? xo_spec_kind_name(ls->inner) : ls->name)
			             : -1;
			if (cg >= 0)
				H5Gclose(cg);
		}
		ok = vg >= 0;
		if (ok && nv && v[0].sub)
			ok = write_sub_vars(lg, v, nv, w);
		for (int j = 0; ok && j < nv && !v[0].sub; j++) {
			if (ls->kind == XO_LAYER_BIDIRECTIONAL && (j == 0 || j == nv / 2)) {
				/* Keras 3: each direction's variables in its
				 * RNN's cell, beside the RNN's empty vars */
				H5Gclose(vg);
				vg = bidir_group(lg, ls, j != 0);
				if (!(ok = vg >= 0))
					break;
			}
			snprintf(name, sizeof(name), "%d", ls->kind == XO_LAYER_BIDIRECTIONAL && j >= nv / 2
			                                      ? j - nv / 2
			                                      : j);
			ok = h5_var_put(vg, name, &v[j], w);
		}
		if (vg >= 0)
			H5Gclose(vg);
		if (lg >= 0)
			H5Gclose(lg);
	}
	if (layers >= 0)
		H5Gclose(layers);
	g = ok ? h5_group(f, "vars", "sequential") : -1;
	ok = g >= 0;
	if (g >= 0)
		H5Gclose(g);
	ok = ok && H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0;
	n = ok ? H5Fget_file_image(f, NULL, 0) : -1;
	ok = n > 0 && (*image = malloc((size_t)n)) &&
	     H5Fget_file_image(f, *image, (size_t)n) == n;
	if (H5Fclose(f) < 0)
		ok = false;
	if (!ok) {
		free(*image);
		*image = NULL;
		return xo_error(XO_EIO, "%s: writing HDF5 failed", path);
	}
	*image_len = (size_t)n;
	return XO_OK;
}

/*
 * The Keras 3 config.json of m, key for key what Keras 3.15's model.save()
 * writes for the same Sequential (suites/test_keras_config.c compares them
 * against Keras's own files): every layer's whole config, its defaults
 * included (initializers, null regularizers and constraints, the recurrent
 * layers' return_state, stateful, unroll, dropout), the DTypePolicy objects
 * and each built layer's build_config. Keras's shared_object_id (a Python
 * id()) is not written: its loader does not need it.
 */

/* keras.DTypePolicy("float32"), as every layer's dtype */
static json_t *dtype_policy(void)
{
	return json_pack("{s:s, s:s, s:{s:s}, s:n}", "module", "keras", "class_name", "DTypePolicy",
	                 "config", "name", "float32", "registered_name");
}

/* A keras.initializers object of class cls with config cfg (consumed). */
static json_t *initializer(const char *cls, json_t *cfg)
{
	return json_pack("{s:s, s:s, s:o, s:n}", "module", "keras.initializers", "class_name", cls,
	                 "config", cfg, "registered_name");
}

static json_t *glorot_uniform(void)
{
	return initializer("GlorotUniform",
	                   json_pack("{s:n, s:n, s:n}", "seed", "input_axes", "output_axes"));
}

static json_t *zeros(void)
{
	return initializer("Zeros", json_object());
}

/* [null, dims of one sample]: a batch shape of rank+1 entries */
static json_t *batch_shape(int rank, int64_t len, int64_t w, int64_t ch)
{
	json_t *s = json_array();

	json_array_append_new(s, json_null());
	if (rank >= 2)
		json_array_append_new(s, json_integer(len));
	if (rank == 3)
		json_array_append_new(s, json_integer(w));
	json_array_append_new(s, json_integer(ch));
	return s;
}

/* cfg[k] = null for each key of the NULL-terminated list */
static void set_nulls(json_t *cfg, const char *const *keys)
{
	for (; *keys; keys++)
		json_object_set_new(cfg, *keys, json_null());
}

/* [h] or [h, w] of a geometry key (w from the width-axis params) */
static json_t *pair(const struct xo_layer_spec *ls, int64_t h, int64_t w)
{
	return ls->in_rank == 3 ? json_pack("[II]", (json_int_t)h, (json_int_t)w)
	                        : json_pack("[I]", (json_int_t)h);
}

/* Conv1D, Conv2D: geometry, activation, bias, and Keras's defaults. */
static void conv_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	static const char *const nulls[] = {"kernel_regularizer", "bias_regularizer",
	                                    "activity_regularizer", "kernel_constraint",
	                                    "bias_constraint", NULL};
	const struct xo_params *p = &ls->p;
	struct xo_params q = xo_params_width_axis(p);

	json_object_set_new(cfg, "filters", json_integer(p->filters));
	json_object_set_new(cfg, "kernel_size", pair(ls, p->kernel_size, q.kernel_size));
	json_object_set_new(cfg, "strides",
	                    pair(ls, xo_conv1d_stride(p), xo_conv1d_stride(&q)));
	json_object_set_new(cfg, "padding", json_string(xo_padding_name(p->padding)));
	json_object_set_new(cfg, "data_format", json_string("channels_last"));
	json_object_set_new(cfg, "dilation_rate", pair(ls, p->dilation_rate, q.dilation_rate));
	json_object_set_new(cfg, "groups", json_integer(1));
	json_object_set_new(cfg, "activation", json_string(xo_activation_name(p->activation)));
	json_object_set_new(cfg, "use_bias", json_boolean(p->use_bias));
	json_object_set_new(cfg, "kernel_initializer", glorot_uniform());
	json_object_set_new(cfg, "bias_initializer", zeros());
	set_nulls(cfg, nulls);
}

/* DepthwiseConv1D/2D in Keras's key order (base_depthwise_conv.py). */
static void depthwise_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	static const char *const nulls[] = {"depthwise_regularizer", "bias_regularizer",
	                                    "activity_regularizer", "depthwise_constraint",
	                                    "bias_constraint", NULL};
	const struct xo_params *p = &ls->p;
	struct xo_params q = xo_params_width_axis(p);

	json_object_set_new(cfg, "depth_multiplier", json_integer(p->depth_multiplier));
	json_object_set_new(cfg, "kernel_size", pair(ls, p->kernel_size, q.kernel_size));
	json_object_set_new(cfg, "strides", pair(ls, xo_conv1d_stride(p), xo_conv1d_stride(&q)));
	json_object_set_new(cfg, "padding", json_string(xo_padding_name(p->padding)));
	json_object_set_new(cfg, "data_format", json_string("channels_last"));
	json_object_set_new(cfg, "dilation_rate", pair(ls, 1, 1));
	json_object_set_new(cfg, "activation", json_string(xo_activation_name(p->activation)));
	json_object_set_new(cfg, "use_bias", json_boolean(p->use_bias));
	json_object_set_new(cfg, "depthwise_initializer", glorot_uniform());
	json_object_set_new(cfg, "bias_initializer", zeros());
	set_nulls(cfg, nulls);
}

/* SeparableConv1D/2D in Keras's key order (base_separable_conv.py). */
static void separable_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	static const char *const nulls[] = {"depthwise_regularizer", "pointwise_regularizer",
	                                    "bias_regularizer", "activity_regularizer",
	                                    "depthwise_constraint", "pointwise_constraint",
	                                    "bias_constraint", NULL};
	const struct xo_params *p = &ls->p;
	struct xo_params q = xo_params_width_axis(p);

	json_object_set_new(cfg, "filters", json_integer(p->filters));
	json_object_set_new(cfg, "kernel_size", pair(ls, p->kernel_size, q.kernel_size));
	json_object_set_new(cfg, "strides", pair(ls, xo_conv1d_stride(p), xo_conv1d_stride(&q)));
	json_object_set_new(cfg, "padding", json_string(xo_padding_name(p->padding)));
	json_object_set_new(cfg, "data_format", json_string("channels_last"));
	json_object_set_new(cfg, "dilation_rate", pair(ls, 1, 1));
	json_object_set_new(cfg, "depth_multiplier", json_integer(p->depth_multiplier));
	json_object_set_new(cfg, "activation", json_string(xo_activation_name(p->activation)));
	json_object_set_new(cfg, "use_bias", json_boolean(p->use_bias));
	json_object_set_new(cfg, "depthwise_initializer", glorot_uniform());
	json_object_set_new(cfg, "pointwise_initializer", glorot_uniform());
	json_object_set_new(cfg, "bias_initializer", zeros());
	set_nulls(cfg, nulls);
}

/* Max/AveragePooling1D/2D (Keras's key order: pool_size, padding, strides). */
static void pool_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	const struct xo_params *p = &ls->p;
	struct xo_params q = xo_params_width_axis(p);

	json_object_set_new(cfg, "pool_size", pair(ls, p->pool_size, q.pool_size));
	json_object_set_new(cfg, "padding", json_string(xo_padding_name(p->padding)));
	json_object_set_new(cfg, "strides", pair(ls, xo_pool1d_stride(p), xo_pool1d_stride(&q)));
	json_object_set_new(cfg, "data_format", json_string("channels_last"));
}

static void dense_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	const struct xo_params *p = &ls->p;
	static const char *const nulls[] = {"kernel_regularizer", "bias_regularizer",
	                                    "kernel_constraint", "bias_constraint",
	                                    "quantization_config", NULL};

	json_object_set_new(cfg, "units", json_integer(p->units));
	json_object_set_new(cfg, "activation", json_string(xo_activation_name(p->activation)));
	json_object_set_new(cfg, "use_bias", json_boolean(p->use_bias));
	json_object_set_new(cfg, "kernel_initializer", glorot_uniform());
	json_object_set_new(cfg, "bias_initializer", zeros());
	set_nulls(cfg, nulls);
}

static void bn_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	const struct xo_params *p = &ls->p;
	static const char *const inits[4] = {"beta_initializer", "gamma_initializer",
	                                     "moving_mean_initializer",
	                                     "moving_variance_initializer"};
	static const char *const nulls[] = {"beta_regularizer", "gamma_regularizer",
	                                    "beta_constraint", "gamma_constraint", NULL};

	json_object_set_new(cfg, "axis", json_integer(-1));
	/* the shortest decimal that reads back as the float */
	json_object_set_new(cfg, "momentum", json_real(short_real(p->momentum)));
	json_object_set_new(cfg, "epsilon", json_real(short_real(p->epsilon)));
	json_object_set_new(cfg, "center", json_boolean(p->center));
	json_object_set_new(cfg, "scale", json_boolean(p->scale));
	for (int q = 0; q < 4; q++)
		json_object_set_new(cfg, inits[q], initializer(q % 2 ? "Ones" : "Zeros", json_object()));
	set_nulls(cfg, nulls);
	json_object_set_new(cfg, "synchronized", json_false());
	json_object_set_new(cfg, "renorm", json_false());
	json_object_set_new(cfg, "renorm_clipping", json_null());
	json_object_set_new(cfg, "renorm_momentum", json_real(0.99));
}

/* LayerNormalization in Keras's key order */
static void ln_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	const struct xo_params *p = &ls->p;
	static const char *const nulls[] = {"beta_regularizer", "gamma_regularizer",
	                                    "beta_constraint", "gamma_constraint", NULL};

	json_object_set_new(cfg, "axis", json_integer(-1));
	json_object_set_new(cfg, "epsilon", json_real(short_real(p->epsilon)));
	json_object_set_new(cfg, "center", json_boolean(p->center));
	json_object_set_new(cfg, "scale", json_boolean(p->scale));
	json_object_set_new(cfg, "rms_scaling", json_false());
	json_object_set_new(cfg, "beta_initializer", initializer("Zeros", json_object()));
	json_object_set_new(cfg, "gamma_initializer", initializer("Ones", json_object()));
	set_nulls(cfg, nulls);
}

/* SimpleRNN, LSTM, GRU in Keras's key order; the flags xo refuses on import
 * (return_state, stateful, unroll, dropout) at the values it implements. */
static void rnn_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	static const char *const nulls[] = {
	    "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
	    "activity_regularizer", "kernel_constraint", "recurrent_constraint",
	    "bias_constraint", NULL};
	const struct xo_params *p = &ls->p;

	json_object_set_new(cfg, "return_sequences", json_boolean(p->return_sequences));
	json_object_set_new(cfg, "return_state", json_false());
	json_object_set_new(cfg, "go_backwards", json_boolean(p->go_backwards));
	json_object_set_new(cfg, "stateful", json_false());
	json_object_set_new(cfg, "unroll", json_false());
	json_object_set_new(cfg, "zero_output_for_mask", json_boolean(p->zero_output_for_mask));
	json_object_set_new(cfg, "units", json_integer(p->units));
	json_object_set_new(cfg, "activation", json_string(xo_activation_name(p->activation)));
	if (ls->kind != XO_LAYER_SIMPLE_RNN)
		json_object_set_new(cfg, "recurrent_activation",
		                    json_string(xo_activation_name(p->recurrent_activation)));
	json_object_set_new(cfg, "use_bias", json_boolean(p->use_bias));
	json_object_set_new(cfg, "kernel_initializer", glorot_uniform());
	json_object_set_new(cfg, "recurrent_initializer",
	                    initializer("Orthogonal", json_pack("{s:n, s:f}", "seed", "gain", 1.0)));
	json_object_set_new(cfg, "bias_initializer", zeros());
	if (ls->kind == XO_LAYER_LSTM)
		json_object_set_new(cfg, "unit_forget_bias", json_true());
	set_nulls(cfg, nulls);
	json_object_set_new(cfg, "dropout", json_real(0.0));
	json_object_set_new(cfg, "recurrent_dropout", json_real(0.0));
	if (ls->kind == XO_LAYER_GRU)
		json_object_set_new(cfg, "reset_after", json_boolean(p->reset_after));
	if (ls->kind != XO_LAYER_SIMPLE_RNN)
		json_object_set_new(cfg, "seed", json_null());
}

static void embedding_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	const struct xo_params *p = &ls->p;
	static const char *const nulls[] = {"embeddings_regularizer", "activity_regularizer",
	                                    "embeddings_constraint", NULL};

	json_object_set_new(cfg, "input_dim", json_integer(p->rows));
	json_object_set_new(cfg, "output_dim", json_integer(p->ch));
	json_object_set_new(cfg, "embeddings_initializer",
	                    initializer("RandomUniform", json_pack("{s:n, s:f, s:f}", "seed",
	                                                           "minval", -0.05, "maxval", 0.05)));
	set_nulls(cfg, nulls);
	json_object_set_new(cfg, "mask_zero", json_boolean(p->mask_zero));
	json_object_set_new(cfg, "quantization_config", json_null());
}

/* The margins as Keras's standardized tuple, sign 1 (padding) or -1
 * (cropping): [begin, end] for a [len][ch] input, [[top, bottom], [left,
 * right]] for a [h][w][ch] one. */
static json_t *margins_json(const struct xo_layer_spec *ls, json_int_t sign)
{
	const struct xo_params *p = &ls->p;

	if (ls->in_rank == 3)
		return json_pack("[[I, I], [I, I]]", sign * (json_int_t)p->pad_begin,
		                 sign * (json_int_t)p->pad_end, sign * (json_int_t)p->pad_begin_w,
		                 sign * (json_int_t)p->pad_end_w);
	return json_pack("[I, I]", sign * (json_int_t)p->pad_begin, sign * (json_int_t)p->pad_end);
}

/* ZeroPadding1D/2D: padding as Keras's standardized tuple */
static void zero_padding_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_object_set_new(cfg, "padding", margins_json(ls, 1));
	json_object_set_new(cfg, "data_format", json_string("channels_last"));
}

/* Cropping1D/2D: cropping, the pad op's margins negated; Keras writes
 * data_format for Cropping2D only */
static void cropping_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_object_set_new(cfg, "cropping", margins_json(ls, -1));
	if (ls->in_rank == 3)
		json_object_set_new(cfg, "data_format", json_string("channels_last"));
}

/* UpSampling1D: size, an int; UpSampling2D: [h, w], data_format,
 * interpolation nearest */
static void up_sampling_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	if (ls->in_rank != 3) {
		json_object_set_new(cfg, "size", json_integer(ls->p.repeats));
		return;
	}
	json_object_set_new(cfg, "size", json_pack("[I, I]", (json_int_t)ls->p.repeats,
	                                           (json_int_t)ls->p.repeats_w));
	json_object_set_new(cfg, "data_format", json_string("channels_last"));
	json_object_set_new(cfg, "interpolation", json_string("nearest"));
}

/* Flatten */
static void flatten_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	(void)ls;
	json_object_set_new(cfg, "data_format", json_string("channels_last"));
}

/* GlobalAverage/MaxPooling1D/2D: keepdims as the spec's */
static void global_pool_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_object_set_new(cfg, "data_format", json_string("channels_last"));
	json_object_set_new(cfg, "keepdims", json_boolean(ls->keepdims));
}

static void dropout_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_object_set_new(cfg, "rate", json_real(short_real(ls->p.rate)));
	json_object_set_new(cfg, "seed", json_null());
	json_object_set_new(cfg, "noise_shape", json_null());
}

static void activation_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_object_set_new(cfg, "activation", json_string(xo_activation_name(ls->p.activation)));
}

/* ReLU: max_value None (relu) or 6.0 (relu6), as Keras writes them */
static void relu_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_object_set_new(cfg, "max_value", ls->p.activation == XO_ACTIVATION_RELU6
	                                          ? json_real(6.0)
	                                          : json_null());
	json_object_set_new(cfg, "negative_slope", json_real(0.0));
	json_object_set_new(cfg, "threshold", json_real(0.0));
}

/* Rescaling: scale and offset as the shortest decimals of the floats xo
 * keeps (Keras casts them to float32 in call: the same values) */
static void rescaling_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_object_set_new(cfg, "scale", json_real(short_real(ls->p.multiplier)));
	json_object_set_new(cfg, "offset", json_real(short_real(ls->p.offset)));
}

/* Normalization: axis [-1] (Keras's tuple), invert, mean and variance
 * null when adapted (its variables), else the given numbers as the shortest
 * decimals of the floats xo keeps */
static void normalization_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_object_set_new(cfg, "axis", json_pack("[i]", -1));
	json_object_set_new(cfg, "invert", json_boolean(ls->p.invert));
	json_object_set_new(cfg, "mean",
	                    ls->norm_given ? json_real(short_real(ls->norm_mean)) : json_null());
	json_object_set_new(cfg, "variance",
	                    ls->norm_given ? json_real(short_real(ls->norm_var)) : json_null());
}

static void leaky_relu_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_object_set_new(cfg, "negative_slope", json_real(short_real(ls->p.negative_slope)));
}

static void elu_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_object_set_new(cfg, "alpha", json_real(short_real(ls->p.alpha)));
}

static void softmax_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	(void)ls;
	json_object_set_new(cfg, "axis", json_integer(-1));
}

static void masking_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_object_set_new(cfg, "mask_value", json_real((double)ls->p.mask_value));
}

/* A cross-entropy with from_logits=True as Keras serializes its Loss object
 * (losses/losses.py get_config: the class's own keys, in its order). */
static json_t *loss_object(const struct xo_compile *c)
{
	static const char *const cls[] = {
	    [XO_LOSS_CATEGORICAL_CROSSENTROPY] = "CategoricalCrossentropy",
	    [XO_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY] = "SparseCategoricalCrossentropy",
	    [XO_LOSS_BINARY_CROSSENTROPY] = "BinaryCrossentropy",
	    [XO_LOSS_MEAN_SQUARED_ERROR] = "MeanSquaredError",
	};
	json_t *cfg = json_pack("{s:s, s:s, s:b}", "name", xo_loss_name(c->loss), "reduction",
	                        "sum_over_batch_size", "from_logits", c->from_logits);

	if (c->loss == XO_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY) {
		json_object_set_new(cfg, "ignore_class", json_null());
	} else {
		json_object_set_new(cfg, "label_smoothing", json_real(0.0));
		json_object_set_new(cfg, "axis", json_integer(-1));
	}
	return json_pack("{s:s, s:s, s:o, s:n}", "module", "keras.losses", "class_name",
	                 cls[c->loss], "config", cfg, "registered_name");
}

/*
 * The model's compile as Keras 3.15's get_compile_config(), key for key:
 * the loss by name (from logits: the Loss object, loss_object), the
 * optimizer serialized with every key Keras writes
 * (its default name, the learning rate as the float32 Keras keeps it in, so
 * 0.001 is 0.0010000000474974513, the other hyperparameters as the shortest
 * decimal of the float, 0.9 not 0.8999999762, and Keras's defaults for
 * what xo does not implement: no weight decay, clipping, EMA, loss scaling
 * or gradient accumulation).
 */
static json_t *compile_config(const struct xo_compile *c)
{
	static const char *const nulls[] = {"weight_decay", "clipnorm", "global_clipnorm",
	                                    "clipvalue", NULL};
	const struct xo_params *p = &c->opt;
	const char *cls = "Adam", *name = "adam";
	json_t *oc;

	if (c->optimizer == XO_OPTIMIZER_SGD) {
		cls = "SGD";
		name = "sgd";
	} else if (c->optimizer == XO_OPTIMIZER_RMSPROP) {
		cls = "RMSprop";
		name = "rm_sprop"; /* Keras's snake case of the class name */
	}
	oc = json_pack("{s:s, s:f}", "name", name, "learning_rate", (double)p->lr);
	set_nulls(oc, nulls);
	json_object_set_new(oc, "use_ema", json_false());
	json_object_set_new(oc, "ema_momentum", json_real(0.99));
	json_object_set_new(oc, "ema_overwrite_frequency", json_null());
	json_object_set_new(oc, "loss_scale_factor", json_null());
	json_object_set_new(oc, "gradient_accumulation_steps", json_null());
	switch (c->optimizer) {
	case XO_OPTIMIZER_ADAM:
		json_object_set_new(oc, "beta_1", json_real(short_real(p->beta_1)));
		json_object_set_new(oc, "beta_2", json_real(short_real(p->beta_2)));
		json_object_set_new(oc, "epsilon", json_real(short_real(p->epsilon)));
		json_object_set_new(oc, "amsgrad", json_false());
		break;
	case XO_OPTIMIZER_SGD:
		json_object_set_new(oc, "momentum", json_real(short_real(p->momentum)));
		json_object_set_new(oc, "nesterov", json_boolean(p->nesterov));
		break;
	case XO_OPTIMIZER_RMSPROP:
		json_object_set_new(oc, "rho", json_real(short_real(p->rho)));
		json_object_set_new(oc, "momentum", json_real(short_real(p->momentum)));
		json_object_set_new(oc, "epsilon", json_real(short_real(p->epsilon)));
		json_object_set_new(oc, "centered", json_false());
		break;
	}
	return json_pack("{s:{s:s, s:s, s:o, s:n}, s:o, s:n, s:o, s:n, s:b, s:i, s:b}", "optimizer",
	                 "module", "keras.optimizers", "class_name", cls, "config", oc,
	                 "registered_name", "loss",
	                 c->from_logits ? loss_object(c) : json_string(xo_loss_name(c->loss)),
	                 "loss_weights",
	                 "metrics", c->accuracy ? json_pack("[s]", "accuracy") : json_null(),
	                 "weighted_metrics", "run_eagerly", 0, "steps_per_execution", 1,
	                 "jit_compile", 1);
}

/* Whether m is a graph (some layer takes other than the previous output). */
static bool model_is_graph(struct xo_model *m)
{
	for (int i = 0; i < xo_model_layer_count(m); i++) {
		const struct xo_layer_spec *ls = xo_model_layer_spec(m, i);

		if (ls->ninputs != 1 || ls->inputs[0] != i - 1)
			return true;
	}
	return false;
}

/* The batch shape of the tensor layer j of m makes (-1: the input). */
static json_t *tensor_shape(struct xo_model *m, int j)
{
	const struct xo_layer_spec *ls = xo_model_layer_spec(m, j < 0 ? 0 : j);
	const struct xo_input_spec *q = j < 0 ? xo_model_input_spec(m, -1 - j) : NULL;

	return q ? batch_shape(q->rank, q->len, q->w, q->ch)
	         : batch_shape(ls->out_rank, ls->out_len, ls->out_w, ls->out_ch);
}

static const char *model_layer_name(const void *m, int i)
{
	return xo_model_layer_spec(m, i)->name;
}

/* The InputLayer's name of a model of one input, into buf: Keras's default,
 * input_layer, or the first of input_layer_1, input_layer_2, ... (Keras's
 * own sequence) that no layer of m has: a spec may name a layer
 * input_layer, and a config with two layers of one name loads in neither
 * Keras nor xo. NULL when out of memory. */
static const char *single_input_name(const struct xo_model *m, char buf[XO_LAYER_NAME_MAX])
{
	int *set = calloc(XO_NAMESET_SIZE, sizeof(*set));

	if (!set)
		return NULL;
	for (int i = 0; i < xo_model_layer_count(m); i++)
		xo_nameset_add(set, model_layer_name, m, i);
	snprintf(buf, XO_LAYER_NAME_MAX, "input_layer");
	for (int k = 1; xo_nameset_find(set, model_layer_name, m, buf) >= 0; k++)
		snprintf(buf, XO_LAYER_NAME_MAX, "input_layer_%d", k);
	free(set);
	return buf;
}

/* The InputLayer's name of model input k: in1 (single_input_name) for a
 * model of one input; the spec's names for several (which no layer has). */
static const char *input_layer_name(struct xo_model *m, int k, const char *in1)
{
	return xo_model_input_count(m) > 1 ? xo_model_input_spec(m, k)->name : in1;
}

/* The name of the NotEqual(ids, 0) op layer a functional model's config
 * gets when a layer's call takes the mask of Embedding(mask_zero=True)
 * (a masked GlobalAveragePooling1D) into buf, or NULL when none does. Keras
 * writes the mask such a call takes as a tensor of op layers; xo writes it
 * so too, since "mask": null would leave the loaded model to propagate the
 * mask at run time, where Keras's MultiHeadAttention.call strips it from
 * its input tensors (a residual Add of that input then has no mask). Named
 * not_equal, or not_equal_K when a layer or input is so named. */
static const char *mask_op_name(struct xo_model *m, char *buf, size_t size)
{
	bool any = false;

	for (int i = 0; i < xo_model_layer_count(m); i++)
		any = any || xo_model_layer_spec(m, i)->p.mask_zero;
	if (!any || xo_model_layer_spec(m, 0)->kind != XO_LAYER_EMBEDDING)
		return NULL;
	for (int k = 0;; k++) {
		bool taken = false;

		snprintf(buf, size, k ? "not_equal_%d" : "not_equal", k);
		for (int i = 0; i < xo_model_layer_count(m) && !taken; i++)
			taken = !strcmp(xo_model_layer_spec(m, i)->name, buf);
		for (int i = 0; i < xo_model_input_count(m) && !taken; i++)
			taken = !strcmp(xo_model_input_spec(m, i)->name, buf);
		if (!taken)
			return buf;
	}
}

/* The op layer mask_op_name names: NotEqual of the ids input's tensor and
 * 0 (the ids input: any of the model's, its others attention masks). */
static json_t *mask_op_layer_config(struct xo_model *m, const char *name, const char *in1)
{
	int k = 0;
	const struct xo_input_spec *q;

	while (k + 1 < xo_model_input_count(m) && !xo_model_input_spec(m, k)->is_int)
		k++;
	q = xo_model_input_spec(m, k);

	return json_pack("{s:s, s:s, s:{s:s}, s:s, s:s, s:[{s:[{s:s, s:{s:o, s:s, s:[s,i,i]}}, i], "
	                 "s:{}}]}",
	                 "module", "keras.src.ops.numpy", "class_name", "NotEqual", "config", "name",
	                 name, "registered_name", "NotEqual", "name", name, "inbound_nodes", "args",
	                 "class_name", "__keras_tensor__", "config", "shape",
	                 batch_shape(q->rank, q->len, q->w, q->ch), "dtype", "int32",
	                 "keras_history", input_layer_name(m, k, in1), 0, 0, 0, "kwargs");
}

/* A functional layer's inbound_nodes (Keras 3's form: one node whose args
 * hold its tensor, or a merge's list of them) and, for a merge, the
 * build_config's list of input shapes into entry. A layer that uses the
 * mask gets the mask op layer's tensor (mask_op) as its mask= kwarg. */
static void functional_wiring(struct xo_model *m, int i, const char *in1, const char *mask_op,
                              json_t *entry)
{
	const struct xo_layer_spec *ls = xo_model_layer_spec(m, i);
	json_t *ts = json_array(), *shapes = json_array(), *arg, *kwargs;

	for (int k = 0; k < ls->ninputs; k++) {
		int j = ls->inputs[k];
		const char *from =
		    j < 0 ? input_layer_name(m, -1 - j, in1) : xo_model_layer_spec(m, j)->name;

		json_array_append_new(
		    ts, json_pack("{s:s, s:{s:o, s:s, s:[s,i,i]}}", "class_name", "__keras_tensor__",
		                  "config", "shape", tensor_shape(m, j), "dtype",
		                  j < 0 && xo_model_input_spec(m, -1 - j)->is_int ? "int32"
		                                                                   : "float32",
		                  "keras_history", from, 0, 0));
		json_array_append_new(shapes, tensor_shape(m, j));
	}
	arg = ls->ninputs > 1 ? json_incref(ts) : json_incref(json_array_get(ts, 0));
	json_object_set_new(entry, "name", json_string(ls->name));
	kwargs = json_object();
	if (ls->kind == XO_LAYER_MULTI_HEAD_ATTENTION) {
		/* mha(query, value): two positional arguments, the mask a call
		 * argument, built from the call's shapes */
		if (ls->p.causal)
			json_object_set_new(kwargs, "use_causal_mask", json_true());
		if (ls->att_mask) /* the mask input, a tensor argument */
			json_object_set_new(
			    kwargs, "attention_mask",
			    json_pack("{s:s, s:{s:o, s:s, s:[s,i,i]}}", "class_name",
			              "__keras_tensor__", "config", "shape",
			              tensor_shape(m, ls->att_mask), "dtype",
			              xo_model_input_spec(m, -1 - ls->att_mask)->is_bool ? "bool"
			                                                                : "float32",
			              "keras_history", input_layer_name(m, -1 - ls->att_mask, in1), 0,
			              0));
		json_object_set_new(entry, "inbound_nodes",
		                    json_pack("[{s:O, s:o}]", "args", ts, "kwargs", kwargs));
		json_object_set_new(entry, "build_config",
		                    json_pack("{s:{s:O, s:O}}", "shapes_dict", "query_shape",
		                              json_array_get(shapes, 0), "value_shape",
		                              json_array_get(shapes, 1)));
		json_decref(arg);
		json_decref(ts);
		json_decref(shapes);
		return;
	}
	if (call_kwargs[ls->kind] & KW_TRAINING)
		json_object_set_new(kwargs, "training", json_false());
	if ((call_kwargs[ls->kind] & KW_MASK) && ls->p.mask_zero && mask_op)
		json_object_set_new(kwargs, "mask",
		                    json_pack("{s:s, s:{s:[n,I], s:s, s:[s,i,i]}}", "class_name",
		                              "__keras_tensor__", "config", "shape",
		                              (json_int_t)ls->in_len, "dtype", "bool",
		                              "keras_history", mask_op, 0, 0));
	else if (call_kwargs[ls->kind] & KW_MASK)
		json_object_set_new(kwargs, "mask", json_null());
	json_object_set_new(entry, "inbound_nodes",
	                    json_pack("[{s:[o], s:o}]", "args", arg, "kwargs", kwargs));
	if (ls->ninputs > 1)
		json_object_set_new(entry, "build_config", json_pack("{s:O}", "input_shape", shapes));
	json_decref(ts);
	json_decref(shapes);
}

/* The root of a functional model's config.json around its layers. */
static json_t *functional_root(struct xo_model *m, json_t *layers, const char *in1)
{
	const char *last = xo_model_layer_spec(m, xo_model_layer_count(m) - 1)->name;
	json_t *ins = json_pack("[s,i,i]", in1, 0, 0);

	if (xo_model_input_count(m) > 1) { /* Keras's list of [name, 0, 0] */
		json_decref(ins);
		ins = json_array();
		for (int k = 0; k < xo_model_input_count(m); k++)
			json_array_append_new(
			    ins, json_pack("[s,i,i]", input_layer_name(m, k, in1), 0, 0));
	}
	return json_pack("{s:s, s:s, s:{s:s, s:b, s:o, s:o, s:[s,i,i]}, s:s, s:{s:n}}",
	                 "module", "keras.src.models.functional", "class_name", "Functional",
	                 "config", "name", "functional", "trainable", 1, "layers", layers,
	                 "input_layers", ins, "output_layers", last, 0, 0,
	                 "registered_name", "Functional", "build_config", "input_shape");
}

static json_t *model_config(struct xo_model *m)
{
	const struct xo_layer_spec *first = xo_model_layer_spec(m, 0);
	json_t *layers = json_array(), *root;
	int nl = xo_model_layer_count(m);
	bool graph = model_is_graph(m);
	char in1buf[XO_LAYER_NAME_MAX], maskbuf[XO_LAYER_NAME_MAX + 16];
	const char *in1 = single_input_name(m, in1buf);
	const char *mask_op = graph ? mask_op_name(m, maskbuf, sizeof(maskbuf)) : NULL;

	if (!in1) {
		json_decref(layers);
		xo_error(XO_ENOMEM, "%s", "out of memory");
		return NULL;
	}

	/* the InputLayers first, in the model's order */
	for (int k = 0; k < xo_model_input_count(m); k++) {
		const struct xo_input_spec *q = xo_model_input_spec(m, k);

		json_array_append_new(
		    layers, json_pack("{s:s, s:s, s:{s:o, s:s, s:b, s:b, s:s, s:b}, s:n}", "module",
		                      "keras.layers", "class_name", "InputLayer", "config",
		                      "batch_shape", batch_shape(q->rank, q->len, q->w, q->ch),
		                      "dtype",
		                      q->is_int ? "int32" : q->is_bool ? "bool" : "float32",
		                      "sparse", 0, "ragged", 0, "name", input_layer_name(m, k, in1),
		                      "optional", 0, "registered_name"));
		if (graph) {
			json_object_set_new(json_array_get(layers, (size_t)k), "name",
			                    json_string(input_layer_name(m, k, in1)));
			json_object_set_new(json_array_get(layers, (size_t)k), "inbound_nodes",
			                    json_array());
		}
	}
	if (mask_op) /* after the ids' InputLayer, before the layers using it */
		json_array_append_new(layers, mask_op_layer_config(m, mask_op, in1));
	for (int i = 0; i < nl; i++) {
		const struct xo_layer_spec *ls = xo_model_layer_spec(m, i);
		json_t *cfg = json_pack("{s:s, s:b, s:o}", "name", ls->name, "trainable", 1, "dtype",
		                        dtype_policy());
		const struct class_row *row = &classes[ls->kind];
		const char *cls = xo_layer_keras_class(ls->kind);
		json_t *entry;

		if (!row->write) {
			/* a layer kind added without its row here */
			xo_error(XO_EINVAL, "layer '%s' (%s): writing it to a .keras config is not "
			                    "supported yet", ls->name, xo_spec_kind_name(ls->kind));
			json_decref(cfg);
			json_decref(layers);
			return NULL;
		}
		row->write(ls, cfg);
		entry = json_pack("{s:s, s:s, s:o, s:n}", "module", "keras.layers", "class_name", cls,
		                  "config", cfg, "registered_name");
		if (row->build_config)
			json_object_set_new(entry, "build_config",
			                    json_pack("{s:o}", "input_shape",
			                              batch_shape(ls->in_rank, ls->in_len, ls->in_w,
			                                          ls->in_ch)));
		if (graph)
			functional_wiring(m, i, in1, mask_op, entry);
		json_array_append_new(layers, entry);
	}
	root = graph
	           ? functional_root(m, layers, in1)
	           : json_pack(
	                 "{s:s, s:s, s:{s:s, s:b, s:o, s:o, s:o}, s:n, s:{s:o}}", "module", "keras",
	                 "class_name", "Sequential", "config", "name", "sequential", "trainable", 1,
	                 "dtype", dtype_policy(), "layers", layers, "build_input_shape",
	                 batch_shape(first->in_rank, first->in_len, first->in_w, first->in_ch),
	                 "registered_name", "build_config", "input_shape",
	                 batch_shape(first->in_rank, first->in_len, first->in_w, first->in_ch));
	if (root)
		json_object_set_new(root, "compile_config", compile_config(xo_model_compile(m)));
	return root;
}

/* The .keras archive (metadata.json, config.json, model.weights.h5 from
 * h5) built in memory, its bytes into *out (malloc'd): like the HDF5
 * image, it never touches a file by name. */
static enum xo_status write_keras_zip(struct xo_model *m, const char *path, const char *h5,
                                      size_t h5len, char **out, size_t *out_len)
{
	json_t *cfg = model_config(m);
	char *cjson = cfg ? json_dumps(cfg, JSON_INDENT(1)) : NULL, meta[160];
	zip_source_t *mem = NULL, *src;
	zip_stat_t zst;
	zip_t *z = NULL;
	enum xo_status st = XO_OK;
	time_t t = time(NULL);
	struct tm tmv;

	*out = NULL;
	*out_len = 0;
	if (!cfg)
		return xo_error(XO_EINVAL, "%s", xo_last_error());
	json_decref(cfg);
	if (!cjson)
		return xo_error(XO_ENOMEM, "%s: out of memory", path);
	gmtime_r(&t, &tmv);
	snprintf(meta, sizeof(meta),
	         "{\"keras_version\": \"3.0.0\", \"date_saved\": \"%04d-%02d-%02d@%02d:%02d:%02d\"}",
	         tmv.tm_year + 1900, tmv.tm_mon + 1, tmv.tm_mday, tmv.tm_hour, tmv.tm_min,
	         tmv.tm_sec);
	if (!(mem = zip_source_buffer_create(NULL, 0, 0, NULL)) ||
	    !(z = zip_open_from_source(mem, ZIP_TRUNCATE, NULL))) {
		st = xo_error(XO_ENOMEM, "%s: cannot create the archive in memory", path);
		goto out_free;
	}
	zip_source_keep(mem); /* read back below, after zip_close */
	/* the buffers are freed by us after zip_close, so sources do not own them */
	if (!st && (!(src = zip_source_buffer(z, meta, strlen(meta), 0)) ||
	            zip_file_add(z, "metadata.json", src, ZIP_FL_ENC_UTF_8) < 0))
		st = xo_error(XO_EIO, "%s: %s", path, zip_strerror(z));
	if (!st && (!(src = zip_source_buffer(z, cjson, strlen(cjson), 0)) ||
	            zip_file_add(z, "config.json", src, ZIP_FL_ENC_UTF_8) < 0))
		st = xo_error(XO_EIO, "%s: %s", path, zip_strerror(z));
	if (!st && (!(src = zip_source_buffer(z, h5, h5len, 0)) ||
	            zip_file_add(z, "model.weights.h5", src, ZIP_FL_ENC_UTF_8) < 0))
		st = xo_error(XO_EIO, "%s: %s", path, zip_strerror(z));
	if (st) {
		zip_discard(z);
		goto out_free;
	}
	if (zip_close(z) < 0) {
		st = xo_error(XO_EIO, "%s: %s", path, zip_strerror(z));
		zip_discard(z);
		goto out_free;
	}
	zip_stat_init(&zst);
	if (zip_source_stat(mem, &zst) < 0 || !(zst.valid & ZIP_STAT_SIZE) ||
	    !(*out = malloc(zst.size ? (size_t)zst.size : 1)) || zip_source_open(mem) < 0) {
		st = xo_error(XO_ENOMEM, "%s: cannot read the archive back", path);
		goto out_free;
	}
	if (zip_source_read(mem, *out, zst.size) != (zip_int64_t)zst.size)
		st = xo_error(XO_EIO, "%s: cannot read the archive back", path);
	zip_source_close(mem);
	*out_len = (size_t)zst.size;
out_free:
	if (st) {
		free(*out);
		*out = NULL;
		*out_len = 0;
	}
	if (mem)
		zip_source_free(mem);
	free(cjson);
	return st;
}

/* Built whole in memory (HDF5's core driver, libzip's buffer source), then
 * written through xo_output_file: an unnamed temporary, fsync'd and renamed
 * over path, so path is the old file or the whole new one, and no name
 * beside it is created or followed. */
enum xo_status xo_keras_save(struct xo_model *m, const char *path, bool keras)
{
	int64_t np = xo_model_param_count(m);
	float *w = malloc((size_t)(np ? np : 1) * sizeof(*w));
	char *h5 = NULL, *zipped = NULL;
	size_t h5len = 0, ziplen = 0;
	enum xo_status st = XO_OK;

	if (!w)
		return xo_error(XO_ENOMEM, "%s: out of memory", path);
	st = xo_model_params_host(m, w, false);
	for (int64_t i = 0; !st && i < np; i++)
		if (!isfinite(w[i]))
			st = xo_error(XO_EINVAL, "%s: not saved: weight %" PRId64 " is %s (training "
			                         "diverged); the file is left as it was",
			              path, i, isnan(w[i]) ? "NaN" : "Inf");
	if (!st)
		st = write_weights_h5(m, path, w, &h5, &h5len);
	if (!st && keras)
		st = write_keras_zip(m, path, h5, h5len, &zipped, &ziplen);
	if (!st)
		st = keras ? xo_output_file(path, zipped, ziplen) : xo_output_file(path, h5, h5len);
	free(zipped);
	free(h5);
	free(w);
	return st;
}

/* Permute: dims, Keras's tuple (the op's digits: 21 -> [2, 1]) */
static void permute_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_t *dims = json_array();

	for (int64_t d = ls->p.dims, scale = d < 100 ? 10 : 100; scale; scale /= 10)
		json_array_append_new(dims, json_integer((json_int_t)(d / scale % 10)));
	json_object_set_new(cfg, "dims", dims);
}

/* RepeatVector: n, an int */
static void repeat_vector_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_object_set_new(cfg, "n", json_integer(ls->p.repeats));
}

/* Reshape: target_shape as given (a -1 kept: Keras infers it again) */
static void reshape_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	json_t *t = json_array();

	for (int k = 0; k < ls->target_rank; k++)
		json_array_append_new(t, json_integer((json_int_t)ls->target[k]));
	json_object_set_new(cfg, "target_shape", t);
}

/* TimeDistributed: the wrapped layer serialized as Keras does (module,
 * class_name, its config with its own name, and its build_config: one
 * step's shape, the sample without its first axis). Over Conv1D the conv2d
 * form's width axis is the Conv1D's geometry. */
/* Conv1DTranspose, Conv2DTranspose in Keras's key order
 * (base_conv_transpose.py); pair() writes one axis for a rank-2 input. */
static void conv_transpose_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	static const char *const nulls[] = {"kernel_regularizer", "bias_regularizer",
	                                    "activity_regularizer", "kernel_constraint",
	                                    "bias_constraint", NULL};
	const struct xo_params *p = &ls->p;
	struct xo_params q = xo_params_width_axis(p);

	json_object_set_new(cfg, "filters", json_integer(p->filters));
	json_object_set_new(cfg, "kernel_size", pair(ls, p->kernel_size, q.kernel_size));
	json_object_set_new(cfg, "strides", pair(ls, xo_conv1d_stride(p), xo_conv1d_stride(&q)));
	json_object_set_new(cfg, "padding", json_string(xo_padding_name(p->padding)));
	json_object_set_new(cfg, "output_padding",
	                    p->output_padding < 0
	                        ? json_null()
	                        : pair(ls, p->output_padding, p->output_padding_w));
	json_object_set_new(cfg, "data_format", json_string("channels_last"));
	json_object_set_new(cfg, "dilation_rate", pair(ls, 1, 1));
	json_object_set_new(cfg, "activation", json_string(xo_activation_name(p->activation)));
	json_object_set_new(cfg, "use_bias", json_boolean(p->use_bias));
	json_object_set_new(cfg, "kernel_initializer", glorot_uniform());
	json_object_set_new(cfg, "bias_initializer", zeros());
	set_nulls(cfg, nulls);
}

static void time_distributed_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	struct xo_layer_spec step = *ls;
	json_t *inner = json_pack("{s:s, s:b, s:o}", "name", xo_spec_kind_name(ls->inner),
	                          "trainable", 1, "dtype", dtype_policy());
	json_t *in = ls->in_rank == 3 ? batch_shape(2, ls->in_w, 1, ls->in_ch)
	                              : batch_shape(1, 1, 1, ls->in_ch);

	step.in_rank = ls->in_rank - 1;
	if (ls->inner == XO_LAYER_CONV1D) {
		step.p = xo_params_width_axis(&ls->p);
		conv_config(&step, inner);
	} else {
		dense_config(&step, inner);
	}
	json_object_set_new(cfg, "layer",
	                    json_pack("{s:s, s:s, s:o, s:n, s:{s:o}}", "module", "keras.layers",
	                              "class_name", xo_layer_keras_class(ls->inner), "config",
	                              inner, "registered_name", "build_config", "input_shape",
	                              in));
}

/* Bidirectional: merge_mode, and the forward and backward RNNs serialized as
 * Keras does (bidirectional.py get_config: the backward one is the mirror,
 * go_backwards flipped), each with its own name and build_config (the
 * Bidirectional's input shape). */
static json_t *bidir_half(const struct xo_layer_spec *ls, bool backward)
{
	struct xo_layer_spec one = *ls;
	char name[XO_LAYER_NAME_MAX + 16];
	json_t *cfg;

	one.kind = (enum xo_layer_kind)ls->inner;
	if (backward)
		one.p.go_backwards = !ls->p.go_backwards;
	snprintf(name, sizeof(name), "%s_%s", backward ? "backward" : "forward",
	         xo_spec_kind_name(one.kind));
	cfg = json_pack("{s:s, s:b, s:o}", "name", name, "trainable", 1, "dtype", dtype_policy());
	rnn_config(&one, cfg);
	/* Bidirectional forces it to return_sequences (no effect without a
	 * mask) */
	json_object_set_new(cfg, "zero_output_for_mask", json_boolean(ls->p.return_sequences));
	return json_pack("{s:s, s:s, s:o, s:n, s:{s:o}}", "module", "keras.layers", "class_name",
	                 xo_layer_keras_class(one.kind), "config", cfg, "registered_name",
	                 "build_config", "input_shape", batch_shape(2, ls->in_len, 1, ls->in_ch));
}

static void bidirectional_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	const char *mode = ls->p.mode == XO_MERGE_ADD        ? "sum"
	                   : ls->p.mode == XO_MERGE_MULTIPLY ? "mul"
	                   : ls->p.mode == XO_MERGE_AVERAGE  ? "ave"
	                                                     : "concat";

	json_object_set_new(cfg, "merge_mode", json_string(mode));
	json_object_set_new(cfg, "layer", bidir_half(ls, false));
	json_object_set_new(cfg, "backward_layer", bidir_half(ls, true));
}

/* MultiHeadAttention: output_shape as Keras 3 writes a given one (a list),
 * attention_axes as Keras writes it once built ([1], the steps) */
static void mha_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	const struct xo_params *p = &ls->p;
	static const char *const nulls[] = {"sliding_window",    "kernel_regularizer",
	                                    "bias_regularizer",  "activity_regularizer",
	                                    "kernel_constraint", "bias_constraint",
	                                    "seed",              NULL};

	json_object_set_new(cfg, "num_heads", json_integer(p->heads));
	json_object_set_new(cfg, "key_dim", json_integer(p->key_dim));
	json_object_set_new(cfg, "value_dim", json_integer(xo_attention_value_dim(p)));
	json_object_set_new(cfg, "dropout", json_real(short_real(p->dropout)));
	json_object_set_new(cfg, "use_bias", json_boolean(p->use_bias));
	json_object_set_new(cfg, "use_gate", json_false());
	json_object_set_new(cfg, "output_shape",
	                    p->units ? json_pack("[I]", (json_int_t)p->units) : json_null());
	json_object_set_new(cfg, "attention_axes", json_pack("[i]", 1));
	json_object_set_new(cfg, "kernel_initializer", glorot_uniform());
	json_object_set_new(cfg, "bias_initializer", zeros());
	set_nulls(cfg, nulls);
}

/* The merge layers (Add, ...): the base layer's config alone; Concatenate
 * adds its axis (-1 for the last, else its positive index) */
static void merge_config(const struct xo_layer_spec *ls, json_t *cfg)
{
	if (ls->p.mode == XO_MERGE_CONCATENATE)
		json_object_set_new(cfg, "axis", json_integer(ls->axis ? ls->axis : -1));
}
