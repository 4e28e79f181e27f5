/*
 * model_internal.h - what the files of model/ share and nothing outside
 * model/ needs: the checkpoint writer, the Keras file reader's checked
 * form, the runtime's test hooks. Not public: the parsed spec and what the
 * commands use of it are include/xo/model_spec.h.
 */
#ifndef XO_MODEL_INTERNAL_H
#define XO_MODEL_INTERNAL_H

#include "xo/backend.h"
#include "xo/model_spec.h"

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

/* One variable of a layer, in Keras's order (kernel, bias; later layers add
 * gamma, beta, ...): its Keras name, shape and place in the flat parameters. */
#define XO_LAYER_VARS_MAX 8 /* MultiHeadAttention: four kernels, four biases */
struct xo_layer_var {
	const char *name;
	int ndim;
	int64_t dim[XO_MAX_DIMS];
	int64_t off, count;
	/* Keras 3 .weights.h5: the sublayer group holding it beneath the
	 * layer's (MultiHeadAttention's query_dense, ...: sub/vars/<sub_index>,
	 * the vars group named as name's part before its last '_'); NULL: the layer's
	 * own vars/<i> */
	const char *sub;
	int sub_index;
	/* a Keras int32 scalar xo does not hold (Normalization's count): no
	 * values here (count 0); Keras files get 0 written, and a file's is
	 * checked for its presence and shape only; checkpoints skip it */
	bool keras_int;
	/* its values must be >= 0 (Normalization's variance: Keras's root of
	 * a negative one is NaN): a file holding one is refused */
	bool nonneg;
};
int xo_model_layer_vars(const struct xo_model *m, int i, struct xo_layer_var out[XO_LAYER_VARS_MAX]);
/* Optimizer steps taken (Keras's optimizer.iterations); a checkpoint stores it. */
int64_t xo_model_iterations(const struct xo_model *m);

/* A set of the names of a caller's items (spec layers, a Keras config's
 * layers), for duplicates and look-ups in O(1) a name (spec.c): an array of
 * XO_NAMESET_SIZE zeroed ints, for at most XO_SPEC_LAYERS_MAX + 1 items;
 * name_of(items, i) is item i's name, which must stay put while the set is
 * used. xo_nameset_add: the earlier item named as item i, or -1 (then item i
 * is added); xo_nameset_find: the item named name, or -1. */
#define XO_NAMESET_SIZE 32768
typedef const char *xo_name_of_fn(const void *items, int i);
int xo_nameset_add(int *set, xo_name_of_fn *name_of, const void *items, int i);
int xo_nameset_find(const int *set, xo_name_of_fn *name_of, const void *items, const char *name);

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

/* The spec text (malloc'd) of a .keras or legacy .h5 model's config; an
 * unsupported layer or option is refused naming the layer, class, option. */
enum xo_status xo_keras_spec_text(const char *path, char **text);
/* The spec of the config alone (xo_h5_read_config): nothing checked against
 * the stored weights. */
enum xo_status xo_keras_spec_config(const char *path, char **text);
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
