/*
 * xo/backend.h - what a backend implements (ggml's backend interface, BLIS's
 * context init). Users include only xo.h; backends and the core include this.
 *
 * A backend is a table of function pointers (struct xo_backend_iface) plus a
 * context (struct xo_backend::ctx). The core validates every call before it
 * reaches the table, so a kernel may assume its preconditions: shapes match
 * xo_op_shapes, tensors belong to this backend, sizes do not overflow.
 */
#ifndef XO_BACKEND_H
#define XO_BACKEND_H

#include <float.h>

#include "xo.h"

/* Storage or view. Host backends keep a float/int pointer in data; cl keeps a
 * cl_mem. Elements of a view start offset elements into data. */
struct xo_tensor {
	struct xo_backend *be;     /* owner */
	enum xo_dtype dtype;       /* F32 or I32, 4 bytes either way */
	int ndim;                  /* 1..XO_MAX_DIMS */
	int64_t dim[XO_MAX_DIMS];  /* row-major, dim[ndim-1] fastest */
	int64_t nelem;             /* product of dim */
	int64_t offset;            /* elements from the start of data */
	int64_t capacity;          /* elements in data (the whole storage) */
	void *data;                /* host pointer or cl_mem of the storage */
	struct xo_tensor *parent;  /* storage owner of a view; NULL for an owner */
};

typedef enum xo_status (*xo_op_fn)(struct xo_backend *be, const struct xo_op_args *a);

/*
 * A whole network (a chain of layers, or a graph of one input whose layers
 * are in topological order), handed by the model runtime (model/model.c)
 * to a backend's optional fused paths (net_fits / net_forward /
 * net_train_step below): the layers of one batch in order, with the same
 * params their ops would get, so a backend can run the network in a few
 * launches (GPU) or sample-tile by sample-tile through cache (CPU) instead
 * of op by op. A tensor read by several layers gets the sum of their
 * gradients, added in the op path's order (layers from the last back, a
 * merge's first source before its second).
 *
 * Semantics are exactly those of the op-by-op path (model.c forward,
 * metrics, train_step): the same ops in the same order, dropout masks drawn
 * with xo_dropout_keep(p.seed, p.step, p.layer, element index within the
 * layer's [n][out_size] output, p.rate), the last layer dense(softmax) with
 * the fused softmax+cross-entropy gradient (the op's, through the clip), Adam on the
 * flat parameters. Results agree with it within the model suite's bounds;
 * they need not be bit-identical.
 */
enum xo_net_kind {
	XO_NET_CONV1D,
	XO_NET_MAX_POOLING1D,
	XO_NET_FLATTEN, /* a no-op: the same bytes */
	XO_NET_DROPOUT, /* identity when !p.training */
	XO_NET_DENSE,
	XO_NET_ACTIVATION, /* Keras Activation layer: no fused path runs it (yet) */
	/* Layers no fused path implements: a net holding one is refused by
	 * every net_fits, and the model runs op by op. */
	XO_NET_AVERAGE_POOLING1D,
	XO_NET_GLOBAL_AVERAGE_POOLING1D,
	XO_NET_GLOBAL_MAX_POOLING1D,
	XO_NET_BATCH_NORMALIZATION, /* per-channel batch statistics: no fused path */
	XO_NET_MAX_POOLING2D, /* the 2-D pooling layers: no fused path */
	XO_NET_AVERAGE_POOLING2D,
	XO_NET_GLOBAL_AVERAGE_POOLING2D,
	XO_NET_GLOBAL_MAX_POOLING2D,
	XO_NET_EMBEDDING, /* int32 ids: no fused path */
	XO_NET_SIMPLE_RNN, /* the recurrent layers: no fused path (yet) */
	XO_NET_LSTM,
	XO_NET_GRU,
	XO_NET_CONV2D, /* Keras Conv2D: no fused path */
	XO_NET_ZERO_PADDING1D, /* the pad op: no fused path */
	XO_NET_CROPPING1D,
	XO_NET_UP_SAMPLING1D, /* the up_sampling op: no fused path */
	XO_NET_ZERO_PADDING2D,
	XO_NET_CROPPING2D,
	XO_NET_UP_SAMPLING2D,
	XO_NET_LAYER_NORMALIZATION, /* per-position statistics: no fused path */
	XO_NET_PERMUTE, /* the permute op: no fused path */
	XO_NET_REPEAT_VECTOR, /* the up_sampling op: no fused path */
	XO_NET_RESHAPE, /* a view of its input, as flatten: no fused path */
	XO_NET_ADD, /* the merge op (a graph's layer) */
	XO_NET_SUBTRACT,
	XO_NET_MULTIPLY,
	XO_NET_AVERAGE,
	XO_NET_MAXIMUM,
	XO_NET_MINIMUM,
	XO_NET_CONCATENATE, /* on the last axis: the merge op's mode concatenate */
	XO_NET_DEPTHWISE_CONV2D, /* the depthwise_conv2d op: no fused path */
	XO_NET_DEPTHWISE_CONV1D,
	XO_NET_SEPARABLE_CONV2D, /* two ops (depthwise, pointwise): no fused path */
	XO_NET_SEPARABLE_CONV1D,
	XO_NET_TIME_DISTRIBUTED, /* TimeDistributed over Dense or Conv1D: no fused path */
	XO_NET_BIDIRECTIONAL,    /* Bidirectional over an RNN (four ops): no fused path */
	XO_NET_CONV2D_TRANSPOSE, /* the conv2d_transpose op: no fused path */
	XO_NET_CONV1D_TRANSPOSE,
	XO_NET_MULTI_HEAD_ATTENTION, /* MultiHeadAttention: no fused path */
	XO_NET_RE_LU,                /* ReLU and Softmax layers: no fused path */
	XO_NET_SOFTMAX,
	XO_NET_MASKING,              /* Masking: no fused path */
	XO_NET_RESCALING,
	XO_NET_NORMALIZATION,        /* Normalization: no fused path */
	XO_NET_LEAKY_RE_LU,          /* LeakyReLU: no fused path */
	XO_NET_ELU,                  /* ELU: no fused path */
};

/* True for the kinds a fused path may implement (those before
 * XO_NET_ACTIVATION); every net_fits refuses a net holding another, so the
 * fused code never meets one and a new kind needs no entry there (a path
 * that takes a later kind names it itself: the global average pooling,
 * the merges, xo_net_kind_merge, and the concatenate). */
static inline bool xo_net_kind_fusable(enum xo_net_kind k)
{
	return k < XO_NET_ACTIVATION;
}

/* The most tensors one layer of a net reads (a merge's or a concatenate's
 * two). */
#define XO_NET_SRC_MAX 2

/* A merge kind whose fused forward and backward are elementwise (Add,
 * Subtract, Multiply, Average, Maximum, Minimum: the merge op's modes of
 * the same names); concatenate is not among them. */
static inline bool xo_net_kind_merge(enum xo_net_kind k)
{
	return k >= XO_NET_ADD && k <= XO_NET_MINIMUM;
}

/* The tensors a layer of kind k reads: two for a merge and a concatenate,
 * one for every other kind. */
static inline int xo_net_kind_nsrc(enum xo_net_kind k)
{
	return xo_net_kind_merge(k) || k == XO_NET_CONCATENATE ? 2 : 1;
}

struct xo_net_layer {
	enum xo_net_kind kind;
	/* The layer's op params for this batch: batch = n, len/ch = the input
	 * shape per sample (len 1 for a rank-1 input), filters / kernel_size /
	 * strides / padding / dilation_rate / pool_size / units / activation /
	 * rate as in the spec, training, seed, step (from 1), layer (index). */
	struct xo_params p;
	int64_t in_len, in_ch;   /* input per sample (in_len 1 for rank 1) */
	int64_t out_len, out_ch; /* output per sample (out_len 1 for rank 1) */
	/* Offsets in the flat parameter / gradient / Adam tensors: w
	 * [kernel_size][ch][filters] (conv1d) or [ch][units] (dense) at w_off,
	 * bias [filters|units] at b_off; -1 where the layer has none. */
	int64_t w_off, b_off;
	bool need_dx;            /* training: the gradient w.r.t. the input is used */
	/* The tensors it reads, in order: an earlier layer's index, or -1 - k
	 * for the model's input k (struct xo_net ninputs; -1 the first). A
	 * merge (XO_NET_ADD .. XO_NET_MINIMUM, p.mode) and a concatenate read
	 * two, every other kind one
	 * (xo_net_kind_nsrc); a sequential net's layer i reads i - 1. in_len /
	 * in_ch are each source's shape, but a concatenate's: in_len rows of
	 * in_ch (the first source), p.len rows of p.ch then p.ch_b (the merge
	 * op's view: on the last axis p.len = in_len, p.ch = in_ch, the second
	 * source in_len rows of p.ch_b, out_ch = in_ch + p.ch_b). */
	int src[XO_NET_SRC_MAX];
	int nsrc;
};

/* The most model inputs a net describes (struct xo_net ninputs). */
#define XO_NET_INPUTS_MAX 8

struct xo_net {
	int nlayers;
	const struct xo_net_layer *layers;
	/* Some layer reads a tensor other than the previous layer's output (a
	 * functional model's graph: src above, topologically ordered, the last
	 * layer the model's output). A fused path that runs chains only
	 * refuses such a net in net_fits. */
	bool graph;
	int64_t n;                   /* samples in this batch */
	int64_t in_size, classes;    /* floats per input sample / output classes */
	/* The model's inputs: a layer's source -1 - k is input k, in_sizes[k]
	 * floats per sample (ninputs of them, at most XO_NET_INPUTS_MAX; 0
	 * reads as one input of in_size floats, xo_net_ninputs). x holds input
	 * k's rows as one block [rows][in_sizes[k]] from element in_off[k] *
	 * rows (rows: x's first dimension; xo_model_write_x), in_off[k] the
	 * earlier inputs' sizes summed; one input's block is all of x. A fused
	 * path that gathers a sample's inputs into one row of in_size floats
	 * puts input k at in_off[k] of it. No gradient flows into an input. */
	int ninputs;
	int64_t in_off[XO_NET_INPUTS_MAX], in_sizes[XO_NET_INPUTS_MAX];
	bool training;
	/* Input rows: sample i is row index[i] of x ([rows][in_size]) when index
	 * (i32 [n]) is set (fit's resident, shuffled data set), else row i. The
	 * labels t ([rows][classes] one-hot) are indexed the same way. */
	const struct xo_tensor *x, *index, *t;
	struct xo_tensor *probs;     /* [n][classes]: the last layer's output */
	/* loss[1] (mean categorical cross-entropy over the batch) and
	 * correct[1] (count of argmax p == argmax t, first maximum) when t is
	 * set; NULL otherwise. */
	struct xo_tensor *loss, *correct;
	/* Training step: flat parameters, gradients (written: the step's
	 * gradients, as the op path leaves them) and Adam's m and v, updated in
	 * place; adam holds the adam op's params (lr, beta_1, beta_2, epsilon,
	 * size, iteration = the step being taken, from 1). */
	struct xo_tensor *params, *grads, *adam_m, *adam_v;
	struct xo_params adam;
	/* The model's compile is not categorical_crossentropy + Adam +
	 * categorical accuracy (its metric may be none): the fused paths
	 * compute only those, so net_fits refuses a training step or metrics
	 * (t set) of such a net; inference without t is the same. */
	bool unfused_compile;
};

/* The inputs of net: its ninputs, one where it leaves that 0. */
static inline int xo_net_ninputs(const struct xo_net *net)
{
	return net->ninputs > 0 ? net->ninputs : 1;
}

/* Floats per sample of net's input k (< xo_net_ninputs) and where its block
 * of x starts in units of x's rows (*off; struct xo_net in_off). */
static inline int64_t xo_net_input(const struct xo_net *net, int k, int64_t *off)
{
	*off = net->ninputs > 0 ? net->in_off[k] : 0;
	return net->ninputs > 0 ? net->in_sizes[k] : net->in_size;
}

struct xo_backend_iface {
	const char *name; /* "ref", "cpu", "cl" */
	/* The backend runs each op as a pass over its whole input and output on
	 * the host, so predict cuts a batch larger than its caches hold into
	 * chunks that stay in cache from op to op (model.c predict_step); false
	 * (the default) for one that wants the batch whole (a device's launch)
	 * or is not about speed (ref). */
	bool predict_chunks;
	/* Fills be->ctx and be->desc for spec (everything after "name:" or ""). */
	enum xo_status (*init)(struct xo_backend *be, const char *spec);
	void (*free)(struct xo_backend *be);
	/* Allocates t->capacity elements into t->data. */
	enum xo_status (*alloc)(struct xo_backend *be, struct xo_tensor *t);
	void (*release)(struct xo_backend *be, struct xo_tensor *t);
	/* Copies count elements at element offset off of t's storage (view offset
	 * already added). */
	enum xo_status (*write)(struct xo_backend *be, struct xo_tensor *t, const void *src,
				int64_t off, int64_t count);
	enum xo_status (*read)(struct xo_backend *be, const struct xo_tensor *t, void *dst,
			       int64_t off, int64_t count);
	enum xo_status (*sync)(struct xo_backend *be);
	/* Optional (NULL for host backends): profiling totals. */
	void (*stats_get)(struct xo_backend *be, struct xo_backend_stats *out);
	void (*stats_reset)(struct xo_backend *be);
	/* Optional (NULL where the backend has none): `xo probe` (struct xo_probe). */
	enum xo_status (*probe)(struct xo_backend *be, double budget_s, struct xo_probe *out);
	/* Optional (NULL where a step's work is not spread per sample): the
	 * work-items one sample's recurrent step (op simple_rnn, lstm or gru, at
	 * p's batch and units) is spread over by this device's kernels; the
	 * cost model's rnn_lanes (perfdb/cost.h). */
	double (*rnn_lanes)(struct xo_backend *be, enum xo_op op, const struct xo_params *p);
	/* Ops, indexed by enum xo_op. fwd is never NULL; bwd is never NULL where
	 * xo_op_has_bwd(op). */
	xo_op_fn fwd[XO_OP_COUNT];
	xo_op_fn bwd[XO_OP_COUNT];
	/* Optional fused paths over a whole network (struct xo_net); NULL where
	 * the backend has none. net_fits says, without side effects or error
	 * messages, whether this backend's fused path runs this net (layer
	 * kinds, activations, sizes within its limits); the runtime calls
	 * net_forward / net_train_step only for a net that fits, and runs op by
	 * op otherwise. net_forward: probs, plus loss and correct when t is
	 * set (dropout is the identity). net_train_step: forward in training
	 * mode, loss and correct, backward, Adam; reads nothing back. */
	bool (*net_fits)(struct xo_backend *be, const struct xo_net *net);
	enum xo_status (*net_forward)(struct xo_backend *be, const struct xo_net *net);
	enum xo_status (*net_train_step)(struct xo_backend *be, const struct xo_net *net);
};

struct xo_backend {
	const struct xo_backend_iface *iface; /* the table */
	void *ctx;                            /* the backend's own state */
	char desc[512];                       /* human description, set by init */
};

/* Compiled-in backend tables. The cpu table starts as a copy of the reference
 * table and overrides entry by entry (STYLE rule 5), so it is built at run
 * time; each getter returns the same table every call. */
extern const struct xo_backend_iface xo_ref_iface;
const struct xo_backend_iface *xo_ref_backend(void);
const struct xo_backend_iface *xo_cpu_backend(void);
const struct xo_backend_iface *xo_cl_backend(void);

/* Host pointer of a host backend's tensor (ref, cpu): data + offset. */
/* A float as Keras's compiled graphs see it in a compare: XLA's CPU code
 * (and TensorFlow's) runs with denormals-are-zero, so a subnormal equals 0
 * (Masking's compare with mask_value, an attention mask's cast to bool);
 * NaN stays NaN. Every backend decides a mask through this, so a device
 * that flushes subnormals itself decides alike. */
static inline float xo_daz(float v)
{
	return v > -FLT_MIN && v < FLT_MIN ? 0.0f : v;
}

static inline float *xo_tensor_f32(const struct xo_tensor *t)
{
	return t ? (float *)t->data + t->offset : (float *)0;
}
static inline int32_t *xo_tensor_i32(const struct xo_tensor *t)
{
	return t ? (int32_t *)t->data + t->offset : (int32_t *)0;
}

#endif /* XO_BACKEND_H */
