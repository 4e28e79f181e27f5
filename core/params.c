/*
 * params.c - the op table built from ops.def, the flat parameter struct's
 * key=value parsing and canonical formatting, and the Keras geometry rules of
 * conv1d and max_pooling1d shared by every backend.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xo.h"

struct op_info {
	const char *name;
	bool has_bwd;
	enum xo_cmp cmp;
	int nsrc[XO_DIR_COUNT];
	int ndst[XO_DIR_COUNT];
};

static const struct op_info ops[] = {
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) \
	{#name, has_bwd, cmp, {nsf, nsb}, {ndf, ndb}},
#include "xo/ops.def"
#undef XO_OP
};
_Static_assert(sizeof(ops) / sizeof(ops[0]) == XO_OP_COUNT, "op table out of step with ops.def");

#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb)                                  \
	_Static_assert(nsf <= XO_MAX_SRC && nsb <= XO_MAX_SRC, #name ": too many sources"); \
	_Static_assert(ndf <= XO_MAX_DST && ndb <= XO_MAX_DST, #name ": too many destinations");
#include "xo/ops.def"
#undef XO_OP

const char *xo_op_name(enum xo_op op)
{
	XO_ASSERT((unsigned)op < XO_OP_COUNT);
	return ops[op].name;
}

enum xo_op xo_op_from_name(const char *name)
{
	for (int i = 0; i < XO_OP_COUNT; i++)
		if (strcmp(ops[i].name, name) == 0)
			return (enum xo_op)i;
	return XO_OP_COUNT;
}

bool xo_op_has_bwd(enum xo_op op)
{
	XO_ASSERT((unsigned)op < XO_OP_COUNT);
	return ops[op].has_bwd;
}

enum xo_cmp xo_op_cmp(enum xo_op op)
{
	XO_ASSERT((unsigned)op < XO_OP_COUNT);
	return ops[op].cmp;
}

int xo_op_nsrc(enum xo_op op, enum xo_dir dir)
{
	XO_ASSERT((unsigned)op < XO_OP_COUNT && (unsigned)dir < XO_DIR_COUNT);
	return ops[op].nsrc[dir];
}

int xo_op_ndst(enum xo_op op, enum xo_dir dir)
{
	XO_ASSERT((unsigned)op < XO_OP_COUNT && (unsigned)dir < XO_DIR_COUNT);
	return ops[op].ndst[dir];
}

const char *xo_dir_name(enum xo_dir dir)
{
	return dir == XO_DIR_FWD ? "fwd" : "bwd";
}

static const char *const padding_names[] = {"valid", "same", "causal"};
static const char *const activation_names[] = {
    "linear", "relu",     "sigmoid", "softmax",      "tanh", "elu",
    "gelu",   "softplus", "relu6",   "hard_sigmoid", "silu", "log_softmax", "leaky_relu"};

static const char *const merge_names[] = {"add",     "subtract", "multiply",   "average",
                                          "maximum", "minimum",  "concatenate"};

const char *xo_merge_name(enum xo_merge m)
{
	XO_ASSERT((unsigned)m <= XO_MERGE_LAST);
	return merge_names[m];
}

const char *xo_padding_name(enum xo_padding p)
{
	XO_ASSERT((unsigned)p <= XO_PADDING_CAUSAL);
	return padding_names[p];
}

const char *xo_activation_name(enum xo_activation a)
{
	XO_ASSERT((unsigned)a <= XO_ACTIVATION_LAST);
	return activation_names[a];
}

struct xo_params xo_params_default(void)
{
	return (struct xo_params){
		.batch = 1,
		.len = 1,
		.ch = 1,
		.filters = 1,
		.kernel_size = 1,
		.strides = 0,
		.dilation_rate = 1,
		.padding = XO_PADDING_VALID,
		.use_bias = true,
		.activation = XO_ACTIVATION_LINEAR,
		.pool_size = 2,
		.units = 1,
		.rate = 0.5f,
		.training = true,
		.seed = 0,
		.step = 0,
		.layer = 0,
		.lr = 1e-3f,
		.beta_1 = 0.9f,
		.beta_2 = 0.999f,
		.epsilon = 1e-7f,
		.iteration = 1,
		.size = 1,
		.rows = 1,
		.momentum = 0.99f,
		.center = true,
		.scale = true,
		.width = 1,
		.kernel_w = 0,
		.strides_w = 0,
		.dilation_w = 0,
		.pool_w = 0,
		.nesterov = false,
		.rho = 0.9f,
		.recurrent_activation = XO_ACTIVATION_SIGMOID,
		.return_sequences = false,
		.go_backwards = false,
		.reset_after = true,
		.pad_begin = 0,
		.pad_end = 0,
		.pad_begin_w = 0,
		.pad_end_w = 0,
		.repeats = 2,
		.repeats_w = 1,
		.dims = 123,
		.mode = XO_MERGE_ADD,
		.ch_b = 1,
		.depth_multiplier = 1,
		.output_padding = -1,
		.output_padding_w = -1,
		.heads = 1,
		.multiplier = 1.0f,
		.offset = 0.0f,
		.negative_slope = 0.3f,
		.alpha = 1.0f,
	};
}

struct xo_params xo_params_default_op(enum xo_op op)
{
	struct xo_params p = xo_params_default();

	if (xo_op_is_rnn(op))
		p.activation = XO_ACTIVATION_TANH;
	/* a distribution over one class has loss and gradient 0 whatever the
	 * input: the categorical losses' default case has two */
	if (op == XO_OP_categorical_crossentropy || op == XO_OP_sparse_categorical_crossentropy)
		p.ch = 2;
	return p;
}

bool xo_op_is_rnn(enum xo_op op)
{
	return op == XO_OP_simple_rnn || op == XO_OP_lstm || op == XO_OP_gru;
}

int64_t xo_rnn_gates(enum xo_op op)
{
	XO_ASSERT(xo_op_is_rnn(op));
	return op == XO_OP_lstm ? 4 : op == XO_OP_gru ? 3 : 1;
}

int64_t xo_rnn_ws_blocks(enum xo_op op)
{
	XO_ASSERT(xo_op_is_rnn(op));
	return op == XO_OP_lstm ? 7 : op == XO_OP_gru ? 5 : 1;
}

int64_t xo_attention_len_kv(const struct xo_params *p)
{
	return p->len_kv ? p->len_kv : p->len;
}

int64_t xo_attention_value_dim(const struct xo_params *p)
{
	return p->value_dim ? p->value_dim : p->key_dim;
}

/* ---- key table ----------------------------------------------------------- */

enum key_type { KEY_I64, KEY_U64, KEY_U32, KEY_F32, KEY_BOOL, KEY_PADDING, KEY_ACTIVATION,
	       KEY_MERGE };

enum key_id {
	K_BATCH, K_LEN, K_CH, K_FILTERS, K_KERNEL_SIZE, K_STRIDES, K_DILATION, K_PADDING,
	K_USE_BIAS, K_ACTIVATION, K_POOL_SIZE, K_UNITS, K_RATE, K_TRAINING, K_SEED, K_STEP,
	K_LAYER, K_LR, K_BETA_1, K_BETA_2, K_EPSILON, K_ITERATION, K_SIZE, K_ROWS,
	/* batch_normalization (momentum: also sgd's and rmsprop's) */
	K_MOMENTUM, K_CENTER, K_SCALE,
	/* the width axis of the 2-D ops */
	K_WIDTH, K_KERNEL_W, K_STRIDES_W, K_DILATION_W, K_POOL_W,
	/* sgd, rmsprop */
	K_NESTEROV, K_RHO,
	/* simple_rnn, lstm, gru */
	K_RECURRENT_ACTIVATION, K_RETURN_SEQUENCES, K_GO_BACKWARDS, K_RESET_AFTER,
	/* pad */
	K_PAD_BEGIN, K_PAD_END, K_PAD_BEGIN_W, K_PAD_END_W,
	/* up_sampling */
	K_REPEATS, K_REPEATS_W,
	/* permute */
	K_DIMS,
	/* merge */
	K_MODE, K_CH_B,
	/* depthwise_conv2d */
	K_DEPTH_MULTIPLIER,
	/* conv2d_transpose */
	K_OUTPUT_PADDING, K_OUTPUT_PADDING_W,
	/* attention */
	K_HEADS, K_KEY_DIM, K_VALUE_DIM, K_LEN_KV, K_CAUSAL, K_DROPOUT,
	/* global_average_pooling1d */
	K_MASK_ZERO,
	/* attention's mask source */
	K_ATTENTION_MASK,
	/* recurrent ops' masked-step output */
	K_ZERO_OUTPUT_FOR_MASK,
	/* mask_outer */
	K_QUERY_MASK, K_VALUE_MASK,
	/* merge's mask */
	K_MASK_A, K_MASK_B,
	/* masking */
	K_MASK_VALUE,
	/* rescaling */
	K_MULTIPLIER, K_OFFSET,
	/* the cross-entropy losses */
	K_FROM_LOGITS,
	/* leaky_relu */
	K_NEGATIVE_SLOPE,
	/* elu */
	K_ALPHA,
	/* normalization */
	K_INVERT,
	K_COUNT
};

struct key_info {
	const char *name;
	enum key_type type;
	size_t offset;
};

#define KEY(id, field, type) [id] = {#field, type, offsetof(struct xo_params, field)}
static const struct key_info keys[K_COUNT] = {
	KEY(K_BATCH, batch, KEY_I64),
	KEY(K_LEN, len, KEY_I64),
	KEY(K_CH, ch, KEY_I64),
	KEY(K_FILTERS, filters, KEY_I64),
	KEY(K_KERNEL_SIZE, kernel_size, KEY_I64),
	KEY(K_STRIDES, strides, KEY_I64),
	KEY(K_DILATION, dilation_rate, KEY_I64),
	KEY(K_PADDING, padding, KEY_PADDING),
	KEY(K_USE_BIAS, use_bias, KEY_BOOL),
	KEY(K_ACTIVATION, activation, KEY_ACTIVATION),
	KEY(K_POOL_SIZE, pool_size, KEY_I64),
	KEY(K_UNITS, units, KEY_I64),
	KEY(K_RATE, rate, KEY_F32),
	KEY(K_TRAINING, training, KEY_BOOL),
	KEY(K_SEED, seed, KEY_U64),
	KEY(K_STEP, step, KEY_U64),
	KEY(K_LAYER, layer, KEY_U32),
	KEY(K_LR, lr, KEY_F32),
	KEY(K_BETA_1, beta_1, KEY_F32),
	KEY(K_BETA_2, beta_2, KEY_F32),
	KEY(K_EPSILON, epsilon, KEY_F32),
	KEY(K_ITERATION, iteration, KEY_I64),
	KEY(K_SIZE, size, KEY_I64),
	KEY(K_ROWS, rows, KEY_I64),
	KEY(K_MOMENTUM, momentum, KEY_F32),
	KEY(K_CENTER, center, KEY_BOOL),
	KEY(K_SCALE, scale, KEY_BOOL),
	KEY(K_WIDTH, width, KEY_I64),
	KEY(K_KERNEL_W, kernel_w, KEY_I64),
	KEY(K_STRIDES_W, strides_w, KEY_I64),
	KEY(K_DILATION_W, dilation_w, KEY_I64),
	KEY(K_POOL_W, pool_w, KEY_I64),
	KEY(K_NESTEROV, nesterov, KEY_BOOL),
	KEY(K_RHO, rho, KEY_F32),
	KEY(K_RECURRENT_ACTIVATION, recurrent_activation, KEY_ACTIVATION),
	KEY(K_RETURN_SEQUENCES, return_sequences, KEY_BOOL),
	KEY(K_GO_BACKWARDS, go_backwards, KEY_BOOL),
	KEY(K_RESET_AFTER, reset_after, KEY_BOOL),
	KEY(K_PAD_BEGIN, pad_begin, KEY_I64),
	KEY(K_PAD_END, pad_end, KEY_I64),
	KEY(K_PAD_BEGIN_W, pad_begin_w, KEY_I64),
	KEY(K_PAD_END_W, pad_end_w, KEY_I64),
	KEY(K_REPEATS, repeats, KEY_I64),
	KEY(K_REPEATS_W, repeats_w, KEY_I64),
	KEY(K_DIMS, dims, KEY_I64),
	KEY(K_MODE, mode, KEY_MERGE),
	KEY(K_CH_B, ch_b, KEY_I64),
	KEY(K_DEPTH_MULTIPLIER, depth_multiplier, KEY_I64),
	KEY(K_OUTPUT_PADDING, output_padding, KEY_I64),
	KEY(K_OUTPUT_PADDING_W, output_padding_w, KEY_I64),
	KEY(K_HEADS, heads, KEY_I64),
	KEY(K_KEY_DIM, key_dim, KEY_I64),
	KEY(K_VALUE_DIM, value_dim, KEY_I64),
	KEY(K_LEN_KV, len_kv, KEY_I64),
	KEY(K_CAUSAL, causal, KEY_BOOL),
	KEY(K_DROPOUT, dropout, KEY_F32),
	KEY(K_MASK_ZERO, mask_zero, KEY_BOOL),
	KEY(K_ATTENTION_MASK, attention_mask, KEY_BOOL),
	KEY(K_ZERO_OUTPUT_FOR_MASK, zero_output_for_mask, KEY_BOOL),
	KEY(K_QUERY_MASK, query_mask, KEY_BOOL),
	KEY(K_VALUE_MASK, value_mask, KEY_BOOL),
	KEY(K_MASK_A, mask_a, KEY_BOOL),
	KEY(K_MASK_B, mask_b, KEY_BOOL),
	KEY(K_MASK_VALUE, mask_value, KEY_F32),
	KEY(K_MULTIPLIER, multiplier, KEY_F32),
	KEY(K_OFFSET, offset, KEY_F32),
	KEY(K_FROM_LOGITS, from_logits, KEY_BOOL),
	KEY(K_NEGATIVE_SLOPE, negative_slope, KEY_F32),
	KEY(K_ALPHA, alpha, KEY_F32),
	KEY(K_INVERT, invert, KEY_BOOL),
};
#undef KEY

/* A set of keys, one bit per enum key_id: 128 bits (GCC's and clang's
 * unsigned __int128), as the ops' keys outgrew 64. */
typedef unsigned __int128 key_mask;
_Static_assert(K_COUNT <= 128, "a key_mask holds 128 keys");

#define B(k) ((key_mask)1 << (k))
/* Which keys each op reads (its canonical line) and which of them it
 * requires (Keras's arguments without a default: a case must give them):
 * one KEYS_<op> entry per op of ops.def, shared within a family; an op
 * without one does not compile. */
struct key_set {
	key_mask read, required;
};
/* clang-format off */
#define KEYS(read, required) {(read), (required)}
/* clang-format on */
#define KEYS_conv1d                                                                                \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_FILTERS) | B(K_KERNEL_SIZE) | B(K_STRIDES) |   \
	      B(K_DILATION) | B(K_PADDING) | B(K_USE_BIAS) | B(K_ACTIVATION)),                     \
	     B(K_FILTERS) | B(K_KERNEL_SIZE))
#define KEYS_conv2d                                                                                \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_WIDTH) | B(K_CH) | B(K_FILTERS) | B(K_KERNEL_SIZE) |     \
	      B(K_KERNEL_W) | B(K_STRIDES) | B(K_STRIDES_W) | B(K_DILATION) | B(K_DILATION_W) |    \
	      B(K_PADDING) | B(K_USE_BIAS) | B(K_ACTIVATION)),                                     \
	     B(K_FILTERS) | B(K_KERNEL_SIZE))
#define KEYS_POOL1D                                                                                \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_POOL_SIZE) | B(K_STRIDES) | B(K_PADDING)), 0)
#define KEYS_max_pooling1d            KEYS_POOL1D
#define KEYS_average_pooling1d        KEYS_POOL1D
#define KEYS_GLOBAL_POOL1D            KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH)), 0)
#define KEYS_global_average_pooling1d KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_MASK_ZERO)), 0)
#define KEYS_global_max_pooling1d     KEYS_GLOBAL_POOL1D
#define KEYS_POOL2D                                                                                \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_WIDTH) | B(K_CH) | B(K_POOL_SIZE) | B(K_POOL_W) |        \
	      B(K_STRIDES) | B(K_STRIDES_W) | B(K_PADDING)),                                       \
	     0)
#define KEYS_max_pooling2d            KEYS_POOL2D
#define KEYS_average_pooling2d        KEYS_POOL2D
#define KEYS_GLOBAL_POOL2D            KEYS((B(K_BATCH) | B(K_LEN) | B(K_WIDTH) | B(K_CH)), 0)
#define KEYS_global_average_pooling2d KEYS_GLOBAL_POOL2D
#define KEYS_global_max_pooling2d     KEYS_GLOBAL_POOL2D
#define KEYS_dense                                                                                 \
	KEYS((B(K_BATCH) | B(K_CH) | B(K_UNITS) | B(K_USE_BIAS) | B(K_ACTIVATION)), B(K_UNITS))
#define KEYS_ELEMENTWISE KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH)), 0)
#define KEYS_relu        KEYS_ELEMENTWISE
#define KEYS_sigmoid     KEYS_ELEMENTWISE
#define KEYS_softmax     KEYS_ELEMENTWISE
#define KEYS_tanh        KEYS_ELEMENTWISE
#define KEYS_elu         KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_ALPHA)), 0)
#define KEYS_gelu        KEYS_ELEMENTWISE
#define KEYS_softplus    KEYS_ELEMENTWISE
#define KEYS_flatten     KEYS_ELEMENTWISE
#define KEYS_relu6       KEYS_ELEMENTWISE
#define KEYS_hard_sigmoid KEYS_ELEMENTWISE
#define KEYS_silu        KEYS_ELEMENTWISE
#define KEYS_log_softmax KEYS_ELEMENTWISE
#define KEYS_dropout                                                                               \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_RATE) | B(K_TRAINING) | B(K_SEED) |            \
	      B(K_STEP) | B(K_LAYER)),                                                             \
	     B(K_RATE))
#define KEYS_LOSS                            KEYS((B(K_BATCH) | B(K_CH)), 0)
/* the cross-entropies also from logits (Keras's from_logits=True) */
#define KEYS_LOSS_LOGITS                     KEYS((B(K_BATCH) | B(K_CH) | B(K_FROM_LOGITS)), 0)
#define KEYS_categorical_crossentropy        KEYS_LOSS_LOGITS
#define KEYS_accuracy                        KEYS_LOSS
#define KEYS_binary_crossentropy             KEYS_LOSS_LOGITS
#define KEYS_mean_squared_error              KEYS_LOSS
#define KEYS_binary_accuracy                 KEYS_LOSS
#define KEYS_sparse_categorical_crossentropy KEYS_LOSS_LOGITS
#define KEYS_sparse_categorical_accuracy     KEYS_LOSS
#define KEYS_adam                                                                                  \
	KEYS((B(K_SIZE) | B(K_LR) | B(K_BETA_1) | B(K_BETA_2) | B(K_EPSILON) | B(K_ITERATION)), 0)
#define KEYS_gather    KEYS((B(K_BATCH) | B(K_CH) | B(K_ROWS)), 0)
#define KEYS_embedding KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_ROWS)), 0)
#define KEYS_batch_normalization                                                                   \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_TRAINING) | B(K_MOMENTUM) | B(K_EPSILON) |     \
	      B(K_CENTER) | B(K_SCALE)),                                                           \
	     0)
#define KEYS_sgd     KEYS((B(K_SIZE) | B(K_LR) | B(K_MOMENTUM) | B(K_NESTEROV)), 0)
#define KEYS_rmsprop KEYS((B(K_SIZE) | B(K_LR) | B(K_RHO) | B(K_MOMENTUM) | B(K_EPSILON)), 0)
#define KEYS_simple_rnn                                                                            \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_UNITS) | B(K_USE_BIAS) | B(K_ACTIVATION) |     \
	      B(K_RETURN_SEQUENCES) | B(K_GO_BACKWARDS) | B(K_MASK_ZERO) |                          \
	      B(K_ZERO_OUTPUT_FOR_MASK)),                                                          \
	     0)
#define KEYS_lstm                                                                                  \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_UNITS) | B(K_USE_BIAS) | B(K_ACTIVATION) |     \
	      B(K_RECURRENT_ACTIVATION) | B(K_RETURN_SEQUENCES) | B(K_GO_BACKWARDS) |              \
	      B(K_MASK_ZERO) | B(K_ZERO_OUTPUT_FOR_MASK)),                                         \
	     0)
#define KEYS_gru                                                                                   \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_UNITS) | B(K_USE_BIAS) | B(K_ACTIVATION) |     \
	      B(K_RECURRENT_ACTIVATION) | B(K_RETURN_SEQUENCES) | B(K_GO_BACKWARDS) |              \
	      B(K_RESET_AFTER) | B(K_MASK_ZERO) | B(K_ZERO_OUTPUT_FOR_MASK)),                      \
	     0)
#define KEYS_pad                                                                                   \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_WIDTH) | B(K_CH) | B(K_PAD_BEGIN) | B(K_PAD_END) |       \
	      B(K_PAD_BEGIN_W) | B(K_PAD_END_W)),                                                  \
	     0)
#define KEYS_up_sampling                                                                           \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_WIDTH) | B(K_CH) | B(K_REPEATS) | B(K_REPEATS_W)), 0)
#define KEYS_layer_normalization                                                                   \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_EPSILON) | B(K_CENTER) | B(K_SCALE)), 0)
#define KEYS_permute KEYS((B(K_BATCH) | B(K_LEN) | B(K_WIDTH) | B(K_CH) | B(K_DIMS)), 0)
#define KEYS_merge                                                                                 \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_MODE) | B(K_CH_B) | B(K_MASK_A) | B(K_MASK_B)), 0)
#define KEYS_depthwise_conv2d                                                                      \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_WIDTH) | B(K_CH) | B(K_DEPTH_MULTIPLIER) |               \
	      B(K_KERNEL_SIZE) | B(K_KERNEL_W) | B(K_STRIDES) | B(K_STRIDES_W) | B(K_PADDING) |    \
	      B(K_USE_BIAS) | B(K_ACTIVATION)),                                                    \
	     B(K_KERNEL_SIZE))
#define KEYS_flip KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH)), 0)
#define KEYS_leaky_relu KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_NEGATIVE_SLOPE)), 0)
#define KEYS_rescaling KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_MULTIPLIER) | B(K_OFFSET)), 0)
#define KEYS_normalization KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_INVERT)), 0)
#define KEYS_conv2d_transpose                                                                      \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_WIDTH) | B(K_CH) | B(K_FILTERS) | B(K_KERNEL_SIZE) |     \
	      B(K_KERNEL_W) | B(K_STRIDES) | B(K_STRIDES_W) | B(K_PADDING) |                       \
	      B(K_OUTPUT_PADDING) | B(K_OUTPUT_PADDING_W) | B(K_USE_BIAS) | B(K_ACTIVATION)),      \
	     B(K_FILTERS) | B(K_KERNEL_SIZE))
#define KEYS_attention                                                                             \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_LEN_KV) | B(K_HEADS) | B(K_KEY_DIM) | B(K_VALUE_DIM) |   \
	      B(K_CAUSAL) | B(K_DROPOUT) | B(K_TRAINING) | B(K_SEED) | B(K_STEP) | B(K_LAYER) |     \
	      B(K_ATTENTION_MASK)),                                                              \
	     B(K_KEY_DIM))
#define KEYS_mask_outer                                                                            \
	KEYS((B(K_BATCH) | B(K_LEN) | B(K_LEN_KV) | B(K_QUERY_MASK) | B(K_VALUE_MASK) |            \
	      B(K_ATTENTION_MASK)),                                                              \
	     0)
#define KEYS_masking KEYS((B(K_BATCH) | B(K_LEN) | B(K_CH) | B(K_MASK_VALUE)), 0)

static const struct key_set op_key_masks[XO_OP_COUNT] = {
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) [XO_OP_##name] = KEYS_##name,
#include "xo/ops.def"
#undef XO_OP
};
#undef KEYS

static key_mask op_keys(enum xo_op op)
{
	XO_ASSERT((unsigned)op < XO_OP_COUNT);
	return op_key_masks[op].read;
}
#undef B

const char *xo_op_required_key(enum xo_op op, int i)
{
	XO_ASSERT((unsigned)op < XO_OP_COUNT);
	for (int k = 0; k < K_COUNT; k++)
		if ((op_key_masks[op].required >> k & 1) && i-- == 0)
			return keys[k].name;
	return NULL;
}

static bool parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

static bool parse_bool(const char *s, bool *out)
{
	if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "True")) {
		*out = true;
		return true;
	}
	if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "False")) {
		*out = false;
		return true;
	}
	return false;
}

enum xo_status xo_params_set(struct xo_params *p, const char *key, const char *value)
{
	const struct key_info *k = NULL;
	char *field = (char *)p;

	if (!strcmp(key, "features"))
		key = "ch";
	if (!strcmp(key, "n"))
		key = "batch";
	for (int i = 0; i < K_COUNT; i++)
		if (!strcmp(keys[i].name, key))
			k = &keys[i];
	if (!k)
		return xo_error(XO_EINVAL, "unknown parameter '%s'", key);
	field += k->offset;
	switch (k->type) {
	case KEY_I64:
		if (!parse_i64(value, (int64_t *)(void *)field))
			goto bad;
		return XO_OK;
	case KEY_U64:
		if (!parse_u64(value, (uint64_t *)(void *)field))
			goto bad;
		return XO_OK;
	case KEY_U32: {
		uint64_t v;

		if (!parse_u64(value, &v) || v > UINT32_MAX)
			goto bad;
		*(uint32_t *)(void *)field = (uint32_t)v;
		return XO_OK;
	}
	case KEY_F32: {
		char *end;
		float v;

		errno = 0;
		v = strtof(value, &end);
		if (errno || end == value || *end || !isfinite(v))
			goto bad;
		*(float *)(void *)field = v;
		return XO_OK;
	}
	case KEY_BOOL:
		if (!parse_bool(value, (bool *)(void *)field))
			goto bad;
		return XO_OK;
	case KEY_PADDING:
		for (int i = 0; i <= XO_PADDING_CAUSAL; i++)
			if (!strcmp(value, padding_names[i])) {
				*(enum xo_padding *)(void *)field = (enum xo_padding)i;
				return XO_OK;
			}
		goto bad;
	case KEY_ACTIVATION:
		if (!strcmp(value, "none") || !strcmp(value, "None"))
			value = "linear";
		for (int i = 0; i <= XO_ACTIVATION_LAST; i++)
			if (!strcmp(value, activation_names[i])) {
				*(enum xo_activation *)(void *)field = (enum xo_activation)i;
				return XO_OK;
			}
		goto bad;
	case KEY_MERGE:
		for (int i = 0; i <= XO_MERGE_LAST; i++)
			if (!strcmp(value, merge_names[i])) {
				*(enum xo_merge *)(void *)field = (enum xo_merge)i;
				return XO_OK;
			}
		goto bad;
	}
bad:
	return xo_error(XO_EINVAL, "bad value '%s' for parameter '%s'", value, key);
}

static int format_key(const struct key_info *k, const struct xo_params *p, char *buf, size_t size)
{
	const char *field = (const char *)p + k->offset;

	switch (k->type) {
	case KEY_I64:
		return snprintf(buf, size, "%s=%" PRId64, k->name, *(const int64_t *)(const void *)field);
	case KEY_U64:
		return snprintf(buf, size, "%s=%" PRIu64, k->name, *(const uint64_t *)(const void *)field);
	case KEY_U32:
		return snprintf(buf, size, "%s=%" PRIu32, k->name, *(const uint32_t *)(const void *)field);
	case KEY_F32:
		return snprintf(buf, size, "%s=%.9g", k->name, (double)*(const float *)(const void *)field);
	case KEY_BOOL:
		return snprintf(buf, size, "%s=%d", k->name, *(const bool *)(const void *)field ? 1 : 0);
	case KEY_PADDING:
		return snprintf(buf, size, "%s=%s", k->name,
				xo_padding_name(*(const enum xo_padding *)(const void *)field));
	case KEY_ACTIVATION:
		return snprintf(buf, size, "%s=%s", k->name,
				xo_activation_name(*(const enum xo_activation *)(const void *)field));
	case KEY_MERGE:
		return snprintf(buf, size, "%s=%s", k->name,
				xo_merge_name(*(const enum xo_merge *)(const void *)field));
	}
	return 0;
}

int xo_params_format(enum xo_op op, enum xo_dir dir, const struct xo_params *p, char *buf,
		     size_t size)
{
	key_mask mask = op_keys(op);
	size_t used = 0;

	(void)dir;
	if (size)
		buf[0] = '\0';
	for (int i = 0; i < K_COUNT; i++) {
		int n;

		if (!(mask >> i & 1))
			continue;
		n = snprintf(buf + used, used < size ? size - used : 0, "%s", used ? " " : "");
		used += (size_t)n;
		n = format_key(&keys[i], p, buf + (used < size ? used : size),
			       used < size ? size - used : 0);
		used += (size_t)n;
	}
	return (int)used;
}

/* ---- geometry ------------------------------------------------------------ */

double xo_float_as_decimal(float f)
{
	char buf[32];

	for (int prec = 1; prec <= 9; prec++) {
		double d;

		snprintf(buf, sizeof(buf), "%.*g", prec, (double)f);
		d = strtod(buf, NULL);
		if ((float)d == f)
			return d;
	}
	return (double)f;
}

float xo_adam_complement(float beta)
{
	return (float)(1.0 - xo_float_as_decimal(beta));
}

int64_t xo_conv1d_stride(const struct xo_params *p)
{
	return p->strides ? p->strides : 1;
}

int64_t xo_pool1d_stride(const struct xo_params *p)
{
	return p->strides ? p->strides : p->pool_size;
}

struct xo_params xo_params_resolved(enum xo_op op, const struct xo_params *p)
{
	struct xo_params q = *p;

	if (op == XO_OP_conv1d)
		q.strides = xo_conv1d_stride(p);
	else if (op == XO_OP_conv2d || op == XO_OP_depthwise_conv2d ||
	         op == XO_OP_conv2d_transpose) {
		struct xo_params w = xo_params_width_axis(p);

		q.strides = xo_conv1d_stride(p);
		q.strides_w = xo_conv1d_stride(&w);
		q.kernel_w = w.kernel_size;
		q.dilation_w = w.dilation_rate;
	} else if (xo_op_is_pool1d(op))
		q.strides = xo_pool1d_stride(p);
	else if (xo_op_is_pool2d(op)) {
		struct xo_pool2d_geom g;

		if (!xo_pool2d_geometry_of(op, p, &g)) {
			q.strides = g.stride_h;
			q.strides_w = g.stride_w;
			q.pool_w = g.pool_w;
		}
	}
	return q;
}

struct xo_params xo_params_width_axis(const struct xo_params *p)
{
	struct xo_params q = *p;

	q.len = p->width;
	q.kernel_size = p->kernel_w ? p->kernel_w : p->kernel_size;
	/* strides 0 stays 0: the axis's own default (1 for conv, its pool size) */
	q.strides = p->strides_w ? p->strides_w : p->strides;
	q.dilation_rate = p->dilation_w ? p->dilation_w : p->dilation_rate;
	q.pool_size = p->pool_w ? p->pool_w : p->pool_size;
	return q;
}

/*
 * A geometry size from outside: in 1..XO_GEOMETRY_MAX, checked before any
 * arithmetic. With every input at most 2^31 - 1, the arithmetic below stays
 * far inside int64 (the largest term is (out - 1) * stride + span < 2^33).
 */
static enum xo_status geometry_size(const char *op, const char *key, int64_t v)
{
	if (v < 1)
		return xo_error(XO_EINVAL, "%s: %s=%" PRId64 " must be >= 1", op, key, v);
	if (v > XO_GEOMETRY_MAX)
		return xo_error(XO_EOVERFLOW, "%s: %s=%" PRId64 " is above the limit %" PRId64, op,
		                key, v, XO_GEOMETRY_MAX);
	return XO_OK;
}

/* ceil(len / stride) for len, stride >= 1, without forming len + stride - 1. */
static int64_t ceil_div(int64_t len, int64_t stride)
{
	return len / stride + (len % stride != 0);
}

/* Keras "same": out = ceil(len / stride), total padding split floor/ceil
 * with the smaller half on the left. */
static void same_padding(int64_t len, int64_t stride, int64_t span, int64_t *out_len,
			 int64_t *pad_left)
{
	int64_t out = ceil_div(len, stride);
	int64_t total = (out - 1) * stride + span - len;

	*out_len = out;
	*pad_left = total > 0 ? total / 2 : 0;
}

/* The key names of one convolution axis, for messages: conv1d's, or the
 * height or the width axis of conv2d. */
struct conv_axis_keys {
	const char *op, *len, *kernel, *strides, *dilation;
};

static const struct conv_axis_keys conv1d_keys = {"conv1d", "len", "kernel_size", "strides",
                                                  "dilation_rate"};

static enum xo_status conv_axis_geometry(const struct conv_axis_keys *k, const struct xo_params *p,
                                         int64_t *out_len, int64_t *pad_left)
{
	int64_t stride = xo_conv1d_stride(p), span;
	enum xo_status st;

	if ((st = geometry_size(k->op, k->len, p->len)) ||
	    (st = geometry_size(k->op, k->kernel, p->kernel_size)) ||
	    (st = geometry_size(k->op, k->strides, stride)) ||
	    (st = geometry_size(k->op, k->dilation, p->dilation_rate)))
		return st;
	if (stride > 1 && p->dilation_rate > 1)
		return xo_error(XO_EINVAL, "%s: strides > 1 with dilation_rate > 1 is not allowed (Keras)",
		                k->op);
	if (!xo_mul_ok(p->dilation_rate, p->kernel_size - 1, &span) || !xo_add_ok(span, 1, &span) ||
	    span > XO_GEOMETRY_MAX)
		return xo_error(XO_EOVERFLOW,
		                "%s: receptive field %s*(%s-1)+1 with %s=%" PRId64 ", %s=%" PRId64
		                " is above the limit %" PRId64,
		                k->op, k->dilation, k->kernel, k->dilation, p->dilation_rate, k->kernel,
		                p->kernel_size, XO_GEOMETRY_MAX);
	switch (p->padding) {
	case XO_PADDING_VALID:
		if (span > p->len)
			return xo_error(XO_EINVAL,
			                "%s: receptive field %" PRId64
			                " (%s*(%s-1)+1) is longer than %s=%" PRId64 " with padding=valid",
			                k->op, span, k->dilation, k->kernel, k->len, p->len);
		*out_len = (p->len - span) / stride + 1;
		*pad_left = 0;
		return XO_OK;
	case XO_PADDING_SAME:
		same_padding(p->len, stride, span, out_len, pad_left);
		return XO_OK;
	case XO_PADDING_CAUSAL:
		*out_len = ceil_div(p->len, stride);
		*pad_left = span - 1;
		return XO_OK;
	}
	return xo_error(XO_EINVAL, "%s: unknown padding", k->op);
}

enum xo_status xo_conv1d_geometry(const struct xo_params *p, int64_t *out_len, int64_t *pad_left)
{
	return conv_axis_geometry(&conv1d_keys, p, out_len, pad_left);
}

/* conv2d's geometry with messages naming op (conv2d or depthwise_conv2d). */
static enum xo_status conv2d_geometry_of(const char *op, const struct xo_params *p,
                                         int64_t *out_h, int64_t *out_w, int64_t *pad_top,
                                         int64_t *pad_left)
{
	const struct conv_axis_keys hk = {op, "len", "kernel_size", "strides", "dilation_rate"};
	const struct conv_axis_keys wk = {op, "width", "kernel_w", "strides_w", "dilation_w"};
	struct xo_params q = xo_params_width_axis(p);
	enum xo_status st;

	if (p->padding == XO_PADDING_CAUSAL)
		return xo_error(XO_EINVAL, "%s: padding=causal is not supported (valid or same)",
		                op);
	/* Keras refuses any stride > 1 together with any dilation > 1, over
	 * both axes (Conv2D(strides=(2, 1), dilation_rate=(1, 2)) too). */
	if ((xo_conv1d_stride(p) > 1 || xo_conv1d_stride(&q) > 1) &&
	    (p->dilation_rate > 1 || q.dilation_rate > 1))
		return xo_error(XO_EINVAL,
		                "%s: strides > 1 with dilation_rate > 1 is not allowed (Keras)", op);
	if ((st = conv_axis_geometry(&hk, p, out_h, pad_top)))
		return st;
	return conv_axis_geometry(&wk, &q, out_w, pad_left);
}

enum xo_status xo_conv2d_geometry(const struct xo_params *p, int64_t *out_h, int64_t *out_w,
                                  int64_t *pad_top, int64_t *pad_left)
{
	return conv2d_geometry_of("conv2d", p, out_h, out_w, pad_top, pad_left);
}

enum xo_status xo_depthwise_conv2d_geometry(const struct xo_params *p, int64_t *out_h,
                                            int64_t *out_w, int64_t *pad_top, int64_t *pad_left)
{
	struct xo_params q = xo_params_width_axis(p);

	if (p->dilation_rate != 1 || q.dilation_rate != 1)
		return xo_error(XO_EINVAL,
		                "depthwise_conv2d: dilation_rate=%" PRId64 ", dilation_w=%" PRId64
		                " is not supported (1 only)",
		                p->dilation_rate, q.dilation_rate);
	return conv2d_geometry_of("depthwise_conv2d", p, out_h, out_w, pad_top, pad_left);
}

/* One axis of conv2d_transpose (xo.h states the rule). Every input is in
 * 1..XO_GEOMETRY_MAX (output_padding below stride) before the arithmetic, so
 * (len-1)*stride + kernel + output_padding stays far inside int64. */
static enum xo_status convt_axis(const struct conv_axis_keys *k, const char *opad_key,
                                 const struct xo_params *p, int64_t opad, int64_t *out_len,
                                 int64_t *pad)
{
	int64_t stride = xo_conv1d_stride(p), kern = p->kernel_size, out, pl;
	enum xo_status st;

	if ((st = geometry_size(k->op, k->len, p->len)) ||
	    (st = geometry_size(k->op, k->kernel, kern)) ||
	    (st = geometry_size(k->op, k->strides, stride)))
		return st;
	if (opad < -1 || (opad >= 0 && opad >= stride))
		return xo_error(XO_EINVAL,
		                "%s: %s=%" PRId64 " must be -1 (None) or in 0..%s-1 (%" PRId64
		                "): Keras requires strides greater than output padding",
		                k->op, opad_key, opad, k->strides, stride - 1);
	if (p->padding == XO_PADDING_VALID) {
		out = (p->len - 1) * stride + kern +
		      (opad < 0 ? (stride > kern ? stride - kern : 0) : opad);
		pl = kern - 1;
	} else if (p->padding == XO_PADDING_SAME) {
		int64_t plen = opad < 0 ? stride + kern - 2 : kern + kern % 2 - 2 + opad;

		out = opad < 0 ? p->len * stride : (p->len - 1) * stride + kern % 2 + opad;
		pl = plen / 2 + plen % 2 < kern - 1 ? plen / 2 + plen % 2 : kern - 1;
	} else
		return xo_error(XO_EINVAL, "%s: padding=causal is not supported (valid or same)",
		                k->op);
	if (out < 1)
		return xo_error(XO_EINVAL,
		                "%s: the output %s would be %" PRId64 " (%s=%" PRId64 ", %s=%" PRId64
		                ", %s=%" PRId64 ", padding=same)",
		                k->op, k->len, out, k->len, p->len, k->kernel, kern, opad_key, opad);
	if (out > XO_GEOMETRY_MAX)
		return xo_error(XO_EOVERFLOW, "%s: the output %s %" PRId64 " is above the limit %" PRId64,
		                k->op, k->len, out, XO_GEOMETRY_MAX);
	*out_len = out;
	/* the padded, dilated input's left margin pl is kernel-1 - pad */
	*pad = kern - 1 - pl;
	return XO_OK;
}

enum xo_status xo_conv2d_transpose_geometry(const struct xo_params *p, int64_t *out_h,
                                            int64_t *out_w, int64_t *pad_top, int64_t *pad_left)
{
	static const struct conv_axis_keys hk = {"conv2d_transpose", "len", "kernel_size", "strides",
	                                         "dilation_rate"};
	static const struct conv_axis_keys wk = {"conv2d_transpose", "width", "kernel_w",
	                                         "strides_w", "dilation_w"};
	struct xo_params q = xo_params_width_axis(p);
	enum xo_status st;

	if (p->dilation_rate != 1 || q.dilation_rate != 1)
		return xo_error(XO_EINVAL,
		                "conv2d_transpose: dilation_rate=%" PRId64 ", dilation_w=%" PRId64
		                " is not supported (1 only)",
		                p->dilation_rate, q.dilation_rate);
	if ((st = convt_axis(&hk, "output_padding", p, p->output_padding, out_h, pad_top)))
		return st;
	return convt_axis(&wk, "output_padding_w", &q, p->output_padding_w, out_w, pad_left);
}

bool xo_op_is_pool1d(enum xo_op op)
{
	return op == XO_OP_max_pooling1d || op == XO_OP_average_pooling1d;
}

/* One axis of a windowed pooling op: its errors name the op and the axis's
 * keys (len/pool_size/strides, or width/pool_w/strides_w for the width axis
 * of a 2-D op, q then being xo_params_width_axis). */
static enum xo_status pool_axis_geometry(const char *name, const char *const key[3],
					 const struct xo_params *q, int64_t *out_len,
					 int64_t *pad_left)
{
	int64_t stride = xo_pool1d_stride(q);
	enum xo_status st;

	if ((st = geometry_size(name, key[0], q->len)) ||
	    (st = geometry_size(name, key[1], q->pool_size)) ||
	    (st = geometry_size(name, key[2], stride)))
		return st;
	switch (q->padding) {
	case XO_PADDING_VALID:
		if (q->pool_size > q->len)
			return xo_error(XO_EINVAL,
					"%s: %s=%" PRId64 " is longer than %s=%" PRId64
					" with padding=valid",
					name, key[1], q->pool_size, key[0], q->len);
		*out_len = (q->len - q->pool_size) / stride + 1;
		*pad_left = 0;
		return XO_OK;
	case XO_PADDING_SAME:
		same_padding(q->len, stride, q->pool_size, out_len, pad_left);
		return XO_OK;
	case XO_PADDING_CAUSAL:
		break;
	}
	return xo_error(XO_EINVAL, "%s: padding must be valid or same", name);
}

static const char *const pool_height_keys[3] = {"len", "pool_size", "strides"};
static const char *const pool_width_keys[3] = {"width", "pool_w", "strides_w"};

enum xo_status xo_pool1d_geometry_of(enum xo_op op, const struct xo_params *p, int64_t *out_len,
				     int64_t *pad_left)
{
	XO_ASSERT(xo_op_is_pool1d(op));
	return pool_axis_geometry(xo_op_name(op), pool_height_keys, p, out_len, pad_left);
}

bool xo_op_is_pool2d(enum xo_op op)
{
	return op == XO_OP_max_pooling2d || op == XO_OP_average_pooling2d;
}

enum xo_status xo_pool2d_geometry_of(enum xo_op op, const struct xo_params *p,
				     struct xo_pool2d_geom *g)
{
	const char *name = xo_op_name(op);
	struct xo_params w = xo_params_width_axis(p);
	enum xo_status st;

	XO_ASSERT(xo_op_is_pool2d(op));
	if ((st = pool_axis_geometry(name, pool_height_keys, p, &g->out_h, &g->pad_h)) ||
	    (st = pool_axis_geometry(name, pool_width_keys, &w, &g->out_w, &g->pad_w)))
		return st;
	g->stride_h = xo_pool1d_stride(p);
	g->stride_w = xo_pool1d_stride(&w);
	g->pool_h = p->pool_size;
	g->pool_w = w.pool_size;
	return XO_OK;
}

enum xo_status xo_pool1d_geometry(const struct xo_params *p, int64_t *out_len, int64_t *pad_left)
{
	return xo_pool1d_geometry_of(XO_OP_max_pooling1d, p, out_len, pad_left);
}

int64_t xo_pool1d_window(const struct xo_params *p, int64_t o, int64_t pad_left, int64_t *lo,
			 int64_t *hi)
{
	int64_t start = o * xo_pool1d_stride(p) - pad_left;

	*lo = start < 0 ? 0 : start;
	*hi = start + p->pool_size > p->len ? p->len : start + p->pool_size;
	return *hi - *lo;
}

enum xo_status xo_permute_axes(int64_t dims, int q[3])
{
	int64_t v = dims;
	int seen = 0;

	if (dims == 12 || dims == 21) { /* a rank-2 sample [len][ch] (width 1) */
		q[0] = dims == 12 ? 0 : 2;
		q[1] = 1;
		q[2] = dims == 12 ? 2 : 0;
		return XO_OK;
	}
	if (v < 100 || v > 999)
		goto bad;
	for (int k = 2; k >= 0; k--, v /= 10) {
		int d = (int)(v % 10);

		if (d < 1 || d > 3 || (seen & (1 << d)))
			goto bad;
		seen |= 1 << d;
		q[k] = d - 1;
	}
	return XO_OK;
bad:
	return xo_error(XO_EINVAL,
			"permute: dims=%" PRId64 " must be a permutation of the digits 1 2 3 "
			"(1 len, 2 width, 3 ch), or of 1 2 (1 len, 2 ch; width 1)", dims);
}
