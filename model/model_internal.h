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

#endif /* XO_MODEL_INTERNAL_H */
