/*
 * model_internal.h - the parsed form of a model spec, shared by the spec
 * parser (spec.c) and the sequential model runtime (model.c). Not public.
 */
#ifndef XO_MODEL_INTERNAL_H
#define XO_MODEL_INTERNAL_H

#include "xo/backend.h"

#define XO_LAYER_NAME_MAX 64

enum xo_layer_kind {
	XO_LAYER_CONV1D,
	XO_LAYER_MAX_POOLING1D,
	XO_LAYER_FLATTEN,
	XO_LAYER_DROPOUT,
	XO_LAYER_DENSE,
	XO_LAYER_AVERAGE_POOLING1D,
	XO_LAYER_GLOBAL_AVERAGE_POOLING1D,
	XO_LAYER_GLOBAL_MAX_POOLING1D,
};

/* One layer of a spec, with its shapes resolved. A sample's shape is
 * [len][ch] (rank 2) or [ch] (rank 1, len = 1). */
struct xo_layer_spec {
	enum xo_layer_kind kind;
	char name[XO_LAYER_NAME_MAX]; /* Keras name: given, or auto (dense_1) */
	int line;                     /* line in the spec file */
	struct xo_params p;           /* op parameters; batch set per call */
	int in_rank, out_rank;        /* 2: [len][ch], 1: [ch] */
	int64_t in_len, in_ch;        /* input of one sample */
	int64_t out_len, out_ch;      /* output of one sample */
	int64_t w_dim[3];             /* kernel shape (Keras layout) */
	int w_ndim;                   /* 0: no parameters */
	int64_t w_count, b_count;     /* kernel and bias elements (b 0 without bias) */
};

struct xo_model_spec {
	int64_t in_len, in_ch; /* the input line */
	int in_rank;
	int nlayers;
	struct xo_layer_spec *layers; /* nlayers, malloc'd */
};

/* Parses spec text; errors read "origin:line: reason". */
enum xo_status xo_spec_parse(const char *text, const char *origin, struct xo_model_spec *out);
void xo_spec_free(struct xo_model_spec *s);
/* The text of the model spec file at path (malloc'd, NUL-terminated): a
 * regular file of at most 1 MiB without NUL bytes; else an error naming it. */
enum xo_status xo_spec_read_file(const char *path, char **text);

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

#endif /* XO_MODEL_INTERNAL_H */
