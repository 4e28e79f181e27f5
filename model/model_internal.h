/*
 * model_internal.h - the parsed form of a model spec, shared by the spec
 * parser (spec.c) and the sequential model runtime (model.c). Not public.
 */
#ifndef XO_MODEL_INTERNAL_H
#define XO_MODEL_INTERNAL_H

#include "xo/backend.h"

#define XO_LAYER_NAME_MAX 64
/* The most layers a spec (or a Keras config mapped to one) may hold
 * (docs/model.md): real small nets have tens; the bound keeps every pass
 * over the layers cheap on a hostile file. */
#define XO_SPEC_LAYERS_MAX 10000

enum xo_layer_kind {
	XO_LAYER_CONV1D,
	XO_LAYER_MAX_POOLING1D,
	XO_LAYER_FLATTEN,
	XO_LAYER_DROPOUT,
	XO_LAYER_DENSE,
	XO_LAYER_ACTIVATION, /* Keras Activation: p.activation on its input */
	XO_LAYER_AVERAGE_POOLING1D,
	XO_LAYER_GLOBAL_AVERAGE_POOLING1D,
	XO_LAYER_GLOBAL_MAX_POOLING1D,
	XO_LAYER_BATCH_NORMALIZATION, /* Keras BatchNormalization, axis -1 */
	/* 2-D pooling: a rank-3 [h][w][ch] input only */
	XO_LAYER_MAX_POOLING2D,
	XO_LAYER_AVERAGE_POOLING2D,
	XO_LAYER_GLOBAL_AVERAGE_POOLING2D,
	XO_LAYER_GLOBAL_MAX_POOLING2D,
	/* Keras Embedding: int32 ids [T] (the first layer, on an int32 input)
	 * -> [T][output_dim]; p.rows = input_dim, p.ch = output_dim */
	XO_LAYER_EMBEDDING,
	/* Keras SimpleRNN, LSTM, GRU: [T][features] -> [T][units]
	 * (return_sequences) or [units]; variables kernel, recurrent_kernel,
	 * bias in Keras's layouts (ops.def) */
	XO_LAYER_SIMPLE_RNN,
	XO_LAYER_LSTM,
	XO_LAYER_GRU,
	XO_LAYER_CONV2D, /* Keras Conv2D: a rank-3 [h][w][ch] input only */
};

/* One layer of a spec, with its shapes resolved. A sample's shape is
 * [len][w][ch] (rank 3: height, width, channels), [len][ch] (rank 2, w = 1)
 * or [ch] (rank 1, len = w = 1); its size is always len * w * ch. */
struct xo_layer_spec {
	enum xo_layer_kind kind;
	char name[XO_LAYER_NAME_MAX]; /* Keras name: given, or auto (dense_1) */
	int line;                     /* line in the spec file */
	struct xo_params p;           /* op parameters; batch set per call */
	int in_rank, out_rank;        /* 3: [len][w][ch], 2: [len][ch], 1: [ch] */
	int64_t in_len, in_ch;        /* input of one sample */
	int64_t out_len, out_ch;      /* output of one sample */
	int64_t in_w, out_w;          /* width (rank 3), else 1 */
	int64_t w_dim[XO_MAX_DIMS];   /* kernel shape (Keras layout) */
	int w_ndim;                   /* 0: no parameters */
	int64_t w_count, b_count;     /* kernel and bias elements (b 0 without bias) */
	int64_t rk_count;             /* recurrent layers: recurrent_kernel [units][g*units] */
	/* batch_normalization: gamma (scale) and beta (center), trainable, ch
	 * each or 0; state_count non-trainable elements (moving_mean and
	 * moving_variance, ch each), which the optimizer never touches. */
	int64_t gamma_count, beta_count, state_count;
};

/* Trainable parameters of a layer, and all of its variables (Keras's
 * "Trainable params" and "Total params" per layer). */
static inline int64_t xo_layer_trainable(const struct xo_layer_spec *l)
{
	return l->w_count + l->rk_count + l->b_count + l->gamma_count + l->beta_count;
}

static inline int64_t xo_layer_total(const struct xo_layer_spec *l)
{
	return xo_layer_trainable(l) + l->state_count;
}

struct xo_model_spec {
	int64_t in_len, in_ch; /* the input line */
	int64_t in_w;          /* width of a rank-3 input, else 1 */
	int in_rank;
	bool in_int;           /* input dtype=int32: integer ids (an embedding's) */
	int nlayers;
	struct xo_layer_spec *layers; /* nlayers, malloc'd */
	struct xo_compile compile;    /* the compile line, else xo_compile_default */
	int compile_line;             /* its line; 0: none */
};

/* The op of a recurrent layer kind (simple_rnn, lstm, gru); XO_OP_COUNT for
 * any other kind. */
static inline enum xo_op xo_layer_rnn_op(enum xo_layer_kind k)
{
	return k == XO_LAYER_SIMPLE_RNN ? XO_OP_simple_rnn
	       : k == XO_LAYER_LSTM     ? XO_OP_lstm
	       : k == XO_LAYER_GRU      ? XO_OP_gru
	                                : XO_OP_COUNT;
}

/* Parses spec text; errors read "origin:line: reason". */
enum xo_status xo_spec_parse(const char *text, const char *origin, struct xo_model_spec *out);
void xo_spec_free(struct xo_model_spec *s);
/* The text of the model spec file at path (malloc'd, NUL-terminated): a
 * regular file of at most 1 MiB without NUL bytes; else an error naming it. */
enum xo_status xo_spec_read_file(const char *path, char **text);
/* Like xo_spec_read_file, for the architecture alone (xo summary): a Keras
 * archive's weights are neither extracted nor checked against the config. */
enum xo_status xo_spec_read_architecture(const char *path, char **text);

/*
 * Test hook of the runtime (suites/test_model.c): fit calls fn once per
 * epoch, after that epoch's training order is on the device and before its
 * first step, with the order read back from the device (n = the training
 * samples). NULL fn: none (the default; no read-back).
 */
typedef void (*xo_fit_order_fn)(void *user, int epoch, const int32_t *order, int64_t n);
void xo_model_set_order_hook(struct xo_model *m, xo_fit_order_fn fn, void *user);

/* Test hook: the flat parameters, their last gradients, or Adam's m or v
 * (xo_model_param_count floats each, layer by layer, kernel then bias) read
 * from the device into out. */
enum xo_model_state { XO_MODEL_PARAMS, XO_MODEL_GRADS, XO_MODEL_ADAM_M, XO_MODEL_ADAM_V };
enum xo_status xo_model_state_read(struct xo_model *m, enum xo_model_state which, float *out);

/* A checkpoint being written (checkpoint.c): files go to a hidden sibling
 * of the target directory, the manifest last, then one exchange. */
struct xo_ckpt_writer {
	char dir[4096];    /* as the caller gave it: messages name it */
	char target[4096]; /* its final target, symlinks followed */
	char tmp[4096];    /* the hidden sibling being filled; "" when none */
	char *manifest;    /* the manifest's file lines so far */
	size_t mlen, msize;
};
enum xo_status xo_ckpt_begin(struct xo_ckpt_writer *w, const char *dir);
enum xo_status xo_ckpt_add(struct xo_ckpt_writer *w, const char *name, int ndim,
                           const int64_t *dims, const float *data);
/* Writes the manifest (step = Adam steps taken) and swaps the directory in. */
enum xo_status xo_ckpt_commit(struct xo_ckpt_writer *w, int64_t step);
void xo_ckpt_abort(struct xo_ckpt_writer *w); /* removes the sibling; accepts a finished one */

/* ---- Keras files (keras.c) ------------------------------------------------ */

/* The spec keyword of a layer kind: Keras's snake-case class name
 * ("max_pooling1d"), which Keras 3 also uses for weight paths. */
const char *xo_spec_kind_name(enum xo_layer_kind kind);

/* One variable of a layer, in Keras's order (kernel, bias; later layers add
 * gamma, beta, ...): its Keras name, shape and place in the flat parameters. */
#define XO_LAYER_VARS_MAX 4
struct xo_layer_var {
	const char *name;
	int ndim;
	int64_t dim[XO_MAX_DIMS];
	int64_t off, count;
};
const struct xo_layer_spec *xo_model_layer_spec(const struct xo_model *m, int i);
int xo_model_layer_vars(const struct xo_model *m, int i, struct xo_layer_var out[XO_LAYER_VARS_MAX]);
/* All xo_model_param_count parameters through host memory: read into w, or
 * written from w (which also restarts the optimizer, as loading does). */
enum xo_status xo_model_params_host(struct xo_model *m, float *w, bool write);

/* An untrusted Keras file read by an isolated child process (h5read.c):
 * only checked data. Paths are relative to the HDF5 root ("" is the root;
 * "layers/dense/vars/0"). A group's name lists are -1 when absent. */
/* The most parameters a model may declare, and float values a model file
 * may store, checked before allocating: 2^25 (128 MiB of float32; the
 * parent holds a model's weights about twice while loading), or the
 * environment's XO_MODEL_PARAMS_MAX (a positive integer up to 2^31; any
 * other value: the default) for a user who knowingly loads a bigger model
 * (docs/model.md). */
#define XO_MODEL_PARAMS_DEFAULT (INT64_C(1) << 25)
int64_t xo_model_params_max(void);
#define XO_MODEL_PARAMS_MAX (xo_model_params_max())
struct xo_h5_group {
	char *path;
	char **layer_names, **weight_names;
	int n_layer_names, n_weight_names;
};
struct xo_h5_dataset {
	char *path;
	uint8_t flags;   /* 1: float class, 2: data present, 4: storage allocated */
	int ndim;
	int64_t dim[XO_MAX_DIMS];
	int64_t count;
	float *data;     /* count values when read with data */
};
struct xo_h5_file {
	char *config, *training; /* model_config / config.json, training_config */
	size_t config_len;
	struct xo_h5_group *groups;
	struct xo_h5_dataset *datasets;
	int ng, nd;
	int64_t floats;  /* float values the file stores */
};
/* Reads path (.keras, .h5, .weights.h5) in a child under limits and a
 * deadline; data: also every float dataset's values. Any refusal, crash
 * or timeout of the child is one line naming path. */
enum xo_status xo_h5_read(const char *path, bool data, struct xo_h5_file *out);
/* The config alone: a .keras archive's model.weights.h5 is not extracted
 * (a legacy .h5 is walked as by xo_h5_read without data). */
enum xo_status xo_h5_read_config(const char *path, struct xo_h5_file *out);
void xo_h5_file_free(struct xo_h5_file *f);
const struct xo_h5_group *xo_h5_group_find(const struct xo_h5_file *f, const char *path);
const struct xo_h5_dataset *xo_h5_dataset_find(const struct xo_h5_file *f, const char *path);
/* Links directly below the group at path. */
int xo_h5_group_children(const struct xo_h5_file *f, const char *path);

/* What a file is, by its first bytes: a zip ("PK\3\4", a Keras 3 .keras),
 * HDF5 ("\x89HDF\r\n\x1a\n", .h5 / .weights.h5), or neither. */
enum xo_keras_kind { XO_KERAS_NONE, XO_KERAS_ZIP, XO_KERAS_HDF5 };
enum xo_keras_kind xo_keras_sniff(const char *path);
/* The spec text (malloc'd) of a .keras or legacy .h5 model's config; an
 * unsupported layer or option is refused naming the layer, class, option. */
enum xo_status xo_keras_spec_text(const char *path, char **text);
/* The spec of the config alone (xo_h5_read_config): nothing checked against
 * the stored weights. */
enum xo_status xo_keras_spec_config(const char *path, char **text);
/* The config.json -> spec mapping alone (fuzz target, tests): json is the
 * model config text, origin names it in messages. */
enum xo_status xo_keras_config_to_spec(const char *json, size_t len, const char *origin,
                                       char **text);
/* Weights from a .keras, a legacy .h5 model, a .weights.h5 (Keras 3) or a
 * legacy .h5 weights file; every variable present, every shape checked. */
enum xo_status xo_keras_load_weights(struct xo_model *m, const char *path);
/* Writes path as a .weights.h5 (Keras 3 save_weights layout) or, when keras
 * is true, a .keras archive (config.json, metadata.json, model.weights.h5).
 * The file is written beside path and renamed over it when complete. */
enum xo_status xo_keras_save(struct xo_model *m, const char *path, bool keras);
/* What a save path names, by its suffix (a target does not exist yet):
 * XO_SAVE_DIR (.npy directory), XO_SAVE_WEIGHTS_H5 (".weights.h5"),
 * XO_SAVE_KERAS (".keras"), XO_SAVE_BAD (another ".h5": a legacy file xo
 * does not write). */
enum xo_save_kind { XO_SAVE_DIR, XO_SAVE_WEIGHTS_H5, XO_SAVE_KERAS, XO_SAVE_BAD };
enum xo_save_kind xo_keras_save_kind(const char *path);

#endif /* XO_MODEL_INTERNAL_H */
