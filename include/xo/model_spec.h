/*
 * xo/model_spec.h - a model spec in its parsed form (docs/model.md): the
 * layer kinds (layers.def), each layer's resolved shapes and parameters,
 * and reading a spec from a text file or a Keras file's config. The
 * commands (`xo summary`, `xo train`, `xo predict`, `xo import-model`), the
 * perf fingerprint (perfdb/modelid.c) and the fuzz targets use it; the
 * runtime's own plumbing stays in model/model_internal.h.
 */
#ifndef XO_MODEL_SPEC_H
#define XO_MODEL_SPEC_H

#include "xo/backend.h"

#define XO_LAYER_NAME_MAX 64
/* The most layers a spec (or a Keras config mapped to one) may hold
 * (docs/model.md): real small nets have tens; the bound keeps every pass
 * over the layers cheap on a hostile file. */
#define XO_SPEC_LAYERS_MAX 10000
/* The most inputs one layer takes: a merge layer's two (docs/model.md). */
#define XO_LAYER_INPUTS_MAX 2
/* The most inputs a model takes (Keras's multi-input models: a few). */
#define XO_MODEL_INPUTS_MAX 8

enum xo_layer_kind {
#define XO_LAYER(kind, spec, keras, op, net, family) XO_LAYER_##kind,
#include "xo/layers.def"
#undef XO_LAYER
};
/* The number of kinds (not an enum member, so a switch over the kinds
 * needs no case for it). */
enum {
#define XO_LAYER(kind, spec, keras, op, net, family) +1
	XO_LAYER_COUNT = 0
#include "xo/layers.def"
#undef XO_LAYER
};

/* A layer kind's row of layers.def. */
struct xo_layer_kind_info {
	const char *spec;  /* spec keyword, Keras auto-name prefix, weight-path name */
	const char *keras; /* Keras class name */
	enum xo_op op;     /* the op it runs; XO_OP_COUNT: chosen by its arguments */
	enum xo_net_kind net;
};
extern const struct xo_layer_kind_info xo_layer_kinds[XO_LAYER_COUNT];


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
	/* reshape: Keras's target_shape as given (one entry may be -1) */
	int64_t target[3];
	int target_rank; /* its entries, 1 to 3 (0: not a reshape) */
	/* batch_ and layer_normalization: Keras's axis given as a positive
	 * index (counting the batch axis), which must name the last axis;
	 * 0: -1, the last. concatenate: as given (negative from the last)
	 * until its shape rule resolves it to the joined axis's positive
	 * index, 0 for the last */
	int axis;
	/* a merge layer's second input: its leading axes (its channels are
	 * p.ch_b until concatenate's shape rule makes p the op's form) */
	int64_t in2_len, in2_w;
	/* The tensors it takes, in order: an earlier layer's index, or -1 - k
	 * for model input k (-1: the first). A sequential layer takes the previous layer's
	 * output (or the input); a merge layer takes two. in_* above are the
	 * first one's shape; a merge's second has the same (concatenate:
	 * but for its channels, p.ch_b). */
	int inputs[XO_LAYER_INPUTS_MAX];
	int ninputs;
	/* Keras's mask of an Embedding(mask_zero=True) (its ids != 0) or a
	 * Masking is recorded on this layer's output when Keras builds the
	 * model (spec.c's mask_rules) */
	bool masked;
	/* this layer's call takes mask= in Keras and gets one at run time, the
	 * recorded or the attached (spec.c's mask_runtime) */
	bool mask_in;
	/* multi_head_attention's attention_mask=NAME (Keras's call argument):
	 * model input k as -1 - k, its sample [Tq][Tk]; 0: none */
	int att_mask;
	/* time_distributed: the wrapped kind (XO_LAYER_DENSE or
	 * XO_LAYER_CONV1D; -1 until layer= is read). Over Conv1D,
	 * p holds the conv2d op's form: kernel_size, strides and dilation_rate
	 * 1 (the time axis), the Conv1D's in kernel_w, strides_w, dilation_w */
	int inner;
	/* normalization: Keras's mean= and variance= given in the config (one
	 * value for every channel; Keras then holds no variables, the layer's
	 * state is set from these); false: adapted, read as its variables */
	bool norm_given;
	float norm_mean, norm_var;
	/* the global poolings: Keras's keepdims=True (out_rank the input's,
	 * its pooled axes 1) */
	bool keepdims;
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

/* One model input (an input line; Keras's InputLayer). */
struct xo_input_spec {
	char name[XO_LAYER_NAME_MAX]; /* "input" for an unnamed first one */
	int rank;                     /* as a layer's in_rank */
	int64_t len, w, ch;
	int line;
	/* dtype=bool (Keras's bool Input): the keep values of an attention
	 * mask, held as floats 0 and 1; is_mask: some layer's attention_mask=
	 * (its .npy may be bool or integer: nonzero keeps) */
	bool is_bool, is_mask;
	bool is_int; /* dtype=int32: an embedding's ids (the model's in_ids) */
};

struct xo_model_spec {
	int64_t in_len, in_ch; /* the first input line */
	int64_t in_w;          /* width of a rank-3 input, else 1 */
	int in_rank;
	bool in_int;           /* an input dtype=int32: integer ids (an embedding's) */
	int in_ids;            /* which input holds them (in_int); any other input of
	                        * such a model is an attention_mask= */
	/* Every input in order (Keras's input_layers): input[0] is the one
	 * above; a layer takes input k as inputs[] = -1 - k. A sample of the
	 * model is the inputs' samples one after the other (in_size of
	 * xo_model_input_size: their sum). */
	int ninputs;
	struct xo_input_spec input[XO_MODEL_INPUTS_MAX];
	int nlayers;
	struct xo_layer_spec *layers; /* nlayers, malloc'd */
	/* some layer takes a tensor other than the previous layer's output (a
	 * functional model's graph; false: a sequential model) */
	bool graph;
	struct xo_compile compile;    /* the compile line, else xo_compile_default */
	int compile_line;             /* its line; 0: none */
};

/* The op of a recurrent layer kind (simple_rnn, lstm, gru); XO_OP_COUNT for
 * any other kind. */
static inline enum xo_op xo_layer_rnn_op(enum xo_layer_kind k)
{
	return k == XO_LAYER_SIMPLE_RNN || k == XO_LAYER_LSTM || k == XO_LAYER_GRU
	           ? xo_layer_kinds[k].op
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

/* The spec keyword of a layer kind: Keras's snake-case class name
 * ("max_pooling1d"), which Keras 3 also uses for weight paths. */
const char *xo_spec_kind_name(enum xo_layer_kind kind);
/* Its Keras class name ("MaxPooling1D"). */
const char *xo_layer_keras_class(enum xo_layer_kind kind);

/* Layer i's spec, as the model resolved it (0 <= i < xo_model_layer_count). */
const struct xo_layer_spec *xo_model_layer_spec(const struct xo_model *m, int i);
/* The model's inputs, in Keras's order (0 <= k < xo_model_input_count):
 * a sample is their samples one after the other (xo_model_input_size). */
int xo_model_input_count(const struct xo_model *m);
const struct xo_input_spec *xo_model_input_spec(const struct xo_model *m, int k);
/* All xo_model_param_count parameters through host memory: read into w, or
 * written from w (which also restarts the optimizer, as loading does). */
enum xo_status xo_model_params_host(struct xo_model *m, float *w, bool write);
/* What a file is, by its first bytes: a zip ("PK\3\4", a Keras 3 .keras),
 * HDF5 ("\x89HDF\r\n\x1a\n", .h5 / .weights.h5), or neither. */
enum xo_keras_kind { XO_KERAS_NONE, XO_KERAS_ZIP, XO_KERAS_HDF5 };
enum xo_keras_kind xo_keras_sniff(const char *path);
/* The config.json -> spec mapping alone (fuzz target, tests): json is the
 * model config text, origin names it in messages. */
enum xo_status xo_keras_config_to_spec(const char *json, size_t len, const char *origin,
                                       char **text);

#endif /* XO_MODEL_SPEC_H */
