/*
 * model_run.h - the sequential model's runtime state, shared by the files
 * that make it up: model.c (open and close, plans, buffers, parameters,
 * cost), forward.c (forward, backward, a step, the fused path, predict and
 * evaluate), fit.c (fit and the perf runner's hooks), memplan.c (which
 * buffers share storage) and the layer families, layer_*.c (each kind's variables, ops and cost). Private to model/;
 * the files formats (modelfile.c, keras.c) reach a model through its
 * functions, never its fields.
 */
#ifndef XO_MODEL_RUN_H
#define XO_MODEL_RUN_H

#include <time.h>

#include "model_internal.h"

/* The most further views a family keeps (struct layer's pv and sv) */
#define LAYER_PVIEWS_MAX 6
#define LAYER_SVIEWS_MAX 9

struct layer {
	struct xo_layer_spec s;
	bool has_grad;             /* the gradient w.r.t. the output is needed */
	bool need_dx;              /* the gradient w.r.t. the input is needed */
	int64_t w_off, b_off;      /* kernel and bias offsets in the flat parameters */
	struct xo_tensor *w, *b;   /* views of the parameters (b NULL without bias) */
	struct xo_tensor *dw, *db; /* views of the gradients */
	/* The buffers below (ybuf, gbuf, zbuf, gzbuf, gaccbuf, twinbuf) are
	 * views [cap][...] of the memory plan's slots (memplan.c), which
	 * other buffers of disjoint lifetimes share. */
	struct xo_tensor *ybuf;    /* output storage [cap][out]; NULL for the views */
	struct xo_tensor *gbuf;    /* output gradient storage; NULL when unused */
	/* The plan of the current batch size and mode (plan_build). */
	const struct xo_tensor *in; /* borrowed: the previous output or the input */
	struct xo_tensor *out;      /* a view of ybuf (or of in for flatten) ... */
	bool out_owned;             /* ... or in itself for dropout at inference */
	struct xo_tensor *gout;     /* gradient w.r.t. out (a view), training only */
	struct xo_tensor *gin;      /* borrowed: the previous layer's gout, or NULL */
	/* conv1d/dense whose activation the ops do not fuse (act_separate):
	 * the op runs linear into z, then the activation's op makes out. */
	struct xo_tensor *zbuf, *gzbuf; /* storage of z and of its gradient */
	struct xo_tensor *z, *gz;       /* plan views of them */
	/* batch_normalization: gamma and beta among the trainable parameters
	 * (NULL when scale / center are off), their gradients, and the moving
	 * statistics in the non-trainable tail of the flat parameters. */
	int64_t g_off, beta_off, mm_off, mv_off;
	struct xo_tensor *gamma, *beta, *dgamma, *dbeta, *mm, *mv;
	/* recurrent layers: recurrent_kernel (between kernel and bias in the
	 * flat parameters, Keras's order), its gradient, and the op's
	 * workspace [ws_cap][T][S*units] (the training forward writes it, the
	 * backward reads it): made by the first training plan, never for
	 * predict / evaluate / validation, whose forward is the inference form
	 * (ws NULL, ops.def) */
	int64_t rk_off;
	struct xo_tensor *rk, *drk;
	struct xo_tensor *wsbuf, *ws; /* storage, plan view (training only) */
	int64_t ws_per;               /* workspace floats per sample */
	int64_t ws_cap;               /* samples wsbuf holds; 0: none yet */
	/* A graph's wiring (the spec's inputs): a merge's second input and
	 * the gradient of it (borrowed, NULL when unused). A tensor feeding
	 * several layers (fan-out) gets the sum of their gradients: the
	 * first of its consumers in backward order writes its gout, each
	 * later one writes a scratch tensor that is then added into it, so
	 * a backward still overwrites, never accumulates. acc_edge[k] says
	 * input k's gradient is such a later term; acc_add[k] is the scratch
	 * (the producer's gacc, or for a view this layer's own gout) that
	 * is added into the producer's gout after this layer's backward. */
	const struct xo_tensor *in2;
	struct xo_tensor *gin2;
	bool acc_edge[XO_LAYER_INPUTS_MAX];
	struct xo_tensor *acc_add[XO_LAYER_INPUTS_MAX];
	bool needs_gacc;                /* some consumer's edge is a later term */
	bool own_gout;                  /* a view whose gradient is a later term:
	                                 * gbuf of its own, not its input's */
	struct xo_tensor *gaccbuf, *gacc; /* the scratch: storage, plan view */
	struct xo_tensor *acc_view;     /* own_gout: gout seen in its producer's shape */
	/* A family's own further views (layer_bidir.c: Bidirectional's
	 * backward direction): pv of the parameters and gradients, made by
	 * its views and freed with the model; sv of its scratch (z, gz,
	 * wsbuf) for the current plan, made by its scratch and freed with
	 * the plan. */
	struct xo_tensor *pv[LAYER_PVIEWS_MAX];
	struct xo_tensor *sv[LAYER_SVIEWS_MAX];
	/* concatenate on an axis before the last (layer_cat_rows): the merge
	 * op's views [n][rows][ca], [n][rows][cb], [n][rows][ca + cb] (s.p) of
	 * in, in2, out and of gin, gin2, gout (NULL where those are NULL),
	 * made by the plan; the sample-shaped tensors stay what the other
	 * layers see */
	struct xo_tensor *op_in, *op_in2, *op_out, *op_gin, *op_gin2, *op_gout;
	/* Both inputs one tensor and both gradients later terms (x feeding
	 * another layer too): the second input's term gets a scratch of its own
	 * (twin: storage, plan view), not the producer's gacc the first one
	 * writes, so each is added once and neither overwrites the other */
	bool twin_acc;
	struct xo_tensor *twinbuf, *twin;
	/* multi_head_attention (layer_attn.c): its eight variables' views in
	 * Keras's order (each projection's kernel [rows][cols], then its bias;
	 * NULL biases without use_bias) and their gradients; the plan's views
	 * of z as Q, K, V, O and of gz as their gradients and the key
	 * projection's input gradient (att_g[4]) */
	struct xo_tensor *att_w[8], *att_dw[8];
	struct xo_tensor *att_t[5], *att_g[5];
	/* borrowed: the model's int32 ids, whose zeros are Keras's mask of an
	 * Embedding(mask_zero=True) (the first layer, so the first input);
	 * global_average_pooling1d reads it when its s.p.mask_zero is set */
	const struct xo_tensor *ids;
	/* its attention_mask (the model input spec.c's att_mask names, borrowed
	 * for the plan; NULL without one) */
	const struct xo_tensor *att_m;
};
/* A concatenate whose op sees other rows than the sample's leading axes:
 * it joins an axis before the last (spec.c's shape_concatenate). */
static inline bool layer_cat_rows(const struct xo_layer_spec *s)
{
	return s->kind == XO_LAYER_CONCATENATE && s->axis != 0;
}
/* The op of an activation; XO_OP_COUNT for linear (the identity). */
static inline enum xo_op act_op(enum xo_activation a)
{
	switch (a) {
	case XO_ACTIVATION_LINEAR:
		return XO_OP_COUNT;
	case XO_ACTIVATION_RELU:
		return XO_OP_relu;
	case XO_ACTIVATION_SIGMOID:
		return XO_OP_sigmoid;
	case XO_ACTIVATION_SOFTMAX:
		return XO_OP_softmax;
	case XO_ACTIVATION_TANH:
		return XO_OP_tanh;
	case XO_ACTIVATION_ELU:
		return XO_OP_elu;
	case XO_ACTIVATION_GELU:
		return XO_OP_gelu;
	case XO_ACTIVATION_SOFTPLUS:
		return XO_OP_softplus;
	case XO_ACTIVATION_RELU6:
		return XO_OP_relu6;
	case XO_ACTIVATION_HARD_SIGMOID:
		return XO_OP_hard_sigmoid;
	case XO_ACTIVATION_SILU:
		return XO_OP_silu;
	case XO_ACTIVATION_LOG_SOFTMAX:
		return XO_OP_log_softmax;
	case XO_ACTIVATION_LEAKY_RELU:
		return XO_OP_leaky_relu;
	}
	XO_ASSERT(!"unknown activation");
	return XO_OP_COUNT;
}

/* Whether an activation op's backward takes x (else y): ops.def. */
static inline bool act_bwd_from_x(enum xo_activation a)
{
	return a == XO_ACTIVATION_GELU || a == XO_ACTIVATION_SOFTPLUS || a == XO_ACTIVATION_RELU6 ||
	       a == XO_ACTIVATION_HARD_SIGMOID || a == XO_ACTIVATION_SILU ||
	       a == XO_ACTIVATION_LEAKY_RELU || a == XO_ACTIVATION_ELU;
}

/* A layer whose op takes x, kernel, bias (conv1d, conv2d, dense, and
 * time_distributed over dense or conv1d). */
static inline bool layer_is_conv_dense(const struct xo_layer_spec *s)
{
	return s->kind == XO_LAYER_CONV1D || s->kind == XO_LAYER_CONV2D ||
	       s->kind == XO_LAYER_DENSE || s->kind == XO_LAYER_DEPTHWISE_CONV2D ||
	       s->kind == XO_LAYER_DEPTHWISE_CONV1D ||
	       s->kind == XO_LAYER_TIME_DISTRIBUTED || s->kind == XO_LAYER_CONV2D_TRANSPOSE ||
	       s->kind == XO_LAYER_CONV1D_TRANSPOSE;
}

/* Its op (time_distributed: dense over Dense, conv2d over Conv1D). */
static inline enum xo_op layer_conv_dense_op(const struct xo_layer_spec *s)
{
	if (s->kind == XO_LAYER_TIME_DISTRIBUTED)
		return s->inner == XO_LAYER_DENSE ? XO_OP_dense : XO_OP_conv2d;
	return xo_layer_kinds[s->kind].op;
}

/* The rows a layer's op sees for n samples: the dense op acts on the last
 * axis only (Keras's Dense on a [T][F] or [h][w][F] sample, and
 * TimeDistributed(Dense)), so it runs on n * len * w rows of in_ch, each
 * row on its own; dW and db sum over all of them. Every other op sees the
 * n samples. */
static inline int64_t layer_op_batch(const struct xo_layer_spec *s, int64_t n)
{
	return layer_conv_dense_op(s) == XO_OP_dense ? n * s->in_len * s->in_w : n;
}

/* conv1d/conv2d/dense with an activation the ops do not fuse: run as two ops. */
static inline bool act_separate(const struct xo_layer_spec *s)
{
	return layer_is_conv_dense(s) &&
	       s->p.activation > XO_ACTIVATION_FUSED_LAST;
}

/* A layer with an intermediate z between its two ops (and gz, its
 * gradient, when trained): a separate activation's input, or a separable
 * convolution's depthwise output. */
static inline bool layer_has_z(const struct xo_layer_spec *s)
{
	return act_separate(s) || s->kind == XO_LAYER_SEPARABLE_CONV2D ||
	       s->kind == XO_LAYER_SEPARABLE_CONV1D || s->kind == XO_LAYER_BIDIRECTIONAL ||
	       s->kind == XO_LAYER_MULTI_HEAD_ATTENTION;
}

/* Whether a multi_head_attention builds its mask from Keras's implicit
 * masks (the mask_outer op, spec.c's mask_rules) */
static inline bool layer_mha_implicit_mask(const struct xo_layer_spec *s)
{
	return s->p.query_mask || s->p.value_mask;
}

/* multi_head_attention's intermediates per sample: Q and O over the query's
 * rows, K and V over the value's, the key projection's input gradient, and
 * the implicit masks' [Tq][Tk] (z only: it gets no gradient) */
static inline int64_t layer_mha_floats(const struct xo_layer_spec *s)
{
	int64_t tk = xo_attention_len_kv(&s->p), h = s->p.heads;
	int64_t dk = s->p.key_dim, dv = xo_attention_value_dim(&s->p);

	return s->in_len * h * (dk + dv) + tk * (h * (dk + dv) + s->p.ch_b) +
	       (layer_mha_implicit_mask(s) ? s->in_len * tk : 0);
}

/* The channels of z at each of the output's positions: the output's, a
 * separable convolution's in_ch * depth_multiplier, Bidirectional's three
 * sequences, or enough for multi_head_attention's intermediates. */
static inline int64_t layer_z_ch(const struct xo_layer_spec *s)
{
	if (s->kind == XO_LAYER_BIDIRECTIONAL) /* yf, yb, yb flipped: 3 units a step */
		return 3 * s->p.units;
	if (s->kind == XO_LAYER_MULTI_HEAD_ATTENTION) /* whole rows of the output holding them */
		return (layer_mha_floats(s) + s->out_len - 1) / s->out_len;
	return s->kind == XO_LAYER_SEPARABLE_CONV2D || s->kind == XO_LAYER_SEPARABLE_CONV1D
	           ? s->in_ch * s->p.depth_multiplier
	           : s->out_ch;
}

/* The floats per sample of a layer's training workspace (wsbuf): a
 * recurrent op's [T][S*units]; Bidirectional's two of them and its
 * backward direction's dx [T][ch]; 0 for the others. */
static inline int64_t layer_ws_per(const struct xo_layer_spec *s)
{
	bool bi = s->kind == XO_LAYER_BIDIRECTIONAL;
	enum xo_op op = xo_layer_rnn_op(bi ? (enum xo_layer_kind)s->inner : s->kind);
	int64_t one = op == XO_OP_COUNT ? 0 : s->in_len * xo_rnn_ws_blocks(op) * s->p.units;

	return bi ? 2 * one + s->in_len * s->in_ch : one;
}

/* A layer that is the same bytes as its input: flatten, Activation(linear). */
static inline bool layer_is_view(const struct xo_layer_spec *s)
{
	return s->kind == XO_LAYER_FLATTEN || s->kind == XO_LAYER_RESHAPE ||
	       (s->kind == XO_LAYER_ACTIVATION && s->p.activation == XO_ACTIVATION_LINEAR);
}

/* A 2-D layer (conv2d, pooling): its ops take x[batch][len][width][ch]. */
static inline bool layer_is_2d(const struct xo_layer_spec *s)
{
	return s->kind == XO_LAYER_CONV2D || s->kind == XO_LAYER_MAX_POOLING2D || s->kind == XO_LAYER_AVERAGE_POOLING2D ||
	       s->kind == XO_LAYER_GLOBAL_AVERAGE_POOLING2D ||
	       s->kind == XO_LAYER_GLOBAL_MAX_POOLING2D || s->kind == XO_LAYER_ZERO_PADDING2D ||
	       s->kind == XO_LAYER_CROPPING2D || s->kind == XO_LAYER_UP_SAMPLING2D ||
	       s->kind == XO_LAYER_PERMUTE || s->kind == XO_LAYER_DEPTHWISE_CONV2D ||
	       s->kind == XO_LAYER_SEPARABLE_CONV2D || s->kind == XO_LAYER_CONV2D_TRANSPOSE ||
	       (s->kind == XO_LAYER_TIME_DISTRIBUTED && s->inner == XO_LAYER_CONV1D);
}
/* ---- the layer kinds' runtime ---------------------------------------------- */

/* A layer's input, output and parameter (kernel and bias) bytes per sample:
 * what each kind's cost starts from (xo_model_layer_cost). */
struct cost_bytes {
	double in, out, w;
};

/* One op a layer's forward or backward runs, in the direction of the pass
 * (fwd: a forward op in a backward pass, the merge op adding two gradient
 * terms). */
struct layer_call {
	enum xo_op op;
	struct xo_op_args a;
	bool fwd; /* a backward pass's call that runs its op forward (a sum) */
};
/* The most ops one layer runs in one pass (multi_head_attention's
 * backward: four projections, the attention op and a sum; Bidirectional's
 * backward: the merge's, the flip's, two recurrent ones and the add of the
 * two dx). */
#define LAYER_CALLS_MAX 6

/* What a layer's pass needs of the model beyond the layer itself. */
struct layer_ctx {
	struct xo_params p; /* the layer's op parameters (xo_model_layer_params) */
	bool training;      /* the plan's mode */
	/* the last layer of a categorical-crossentropy model: its gout is
	 * already w.r.t. the softmax's input (the fused CE gradient) */
	bool ce_logits;
};

/*
 * A family of layer kinds (model/layer_*.c): the runtime's per-kind work,
 * one entry per family, named by the family column of layers.def. The
 * functions only describe: they fill views, values, names, op calls and
 * costs, and never run an op or reach the model, so a family file calls no
 * other file of model/. NULL views / init: the kind has no variables.
 */
struct xo_layer_family {
	/* l's views of its variables in the flat parameters and gradients */
	enum xo_status (*views)(struct layer *l, struct xo_tensor *params,
	                        struct xo_tensor *grads);
	/* its views of its scratch for a plan of n samples in sv (NULL: it
	 * has none) */
	enum xo_status (*scratch)(struct layer *l, int64_t n, bool training);
	/* Keras's initial values of layer i's variables into w (the flat
	 * parameters, zeroed): draws from stream XO_STREAM_INIT, (i, element) */
	void (*init)(const struct layer *l, int i, uint64_t seed, float *w);
	/* its Keras variables in Keras's order (checkpoints, .weights.h5 and
	 * .keras all go by it); returns how many */
	int (*vars)(const struct layer *l, struct xo_layer_var out[XO_LAYER_VARS_MAX]);
	/* the ops of its forward and backward, in order (slots as ops.def
	 * says; a backward overwrites, never accumulates); returns how many */
	int (*forward)(const struct layer *l, const struct layer_ctx *c,
	               struct layer_call out[LAYER_CALLS_MAX]);
	int (*backward)(const struct layer *l, const struct layer_ctx *c,
	                struct layer_call out[LAYER_CALLS_MAX]);
	/* its cost per sample (docs/explain.md) into out, whose params are set */
	void (*cost)(const struct layer *l, const struct cost_bytes *b, struct xo_layer_cost *out);
};
/* The families (model/layer_*.c), declared once per layers.def row (a
 * family shared by several kinds is declared again, as C allows). */
#define XO_LAYER(kind, spec, keras, op, net, family) \
	extern const struct xo_layer_family xo_family_##family;
#include "xo/layers.def"
#undef XO_LAYER
/* Each kind's family (layers.c, from layers.def). */
extern const struct xo_layer_family *const xo_layer_families[XO_LAYER_COUNT];

/* The layer buffers the memory plan places (memplan.c), in this order:
 * output, its gradient, z, z's gradient, the fan-out scratch, the twin. */
enum { MEM_Y, MEM_G, MEM_Z, MEM_GZ, MEM_GACC, MEM_TWIN, MEM_KINDS };
/* One memory plan: the slot of each layer buffer (slot_of[i * MEM_KINDS +
 * k]; -1: the buffer is not made) and each slot's floats per sample. */
struct mem_plan {
	int *slot_of;
	int64_t *slot_per;
	int nslots;
	int64_t planned, unshared; /* floats per sample: the slots', the buffers' */
};
struct mem_trace; /* memplan.c: the accesses of the traced passes */

struct xo_model {
	struct xo_backend *be;
	struct xo_model_spec spec;
	struct layer *layers;
	int nlayers;
	int64_t in_size, classes, nparams;
	/* The flat parameters are [trainable (ntrain)][non-trainable]: Adam
	 * runs over the first ntrain only (views tr_*; the whole tensors when
	 * every parameter is trainable). */
	int64_t ntrain;
	struct xo_tensor *tr_params, *tr_grads, *tr_m, *tr_v;
	bool tr_views;
	int64_t cap; /* batch capacity of the activation buffers */
	struct xo_tensor *params, *grads, *adam_m, *adam_v; /* [nparams] each */
	struct xo_tensor *xb, *yb; /* batch input [cap][in_size], labels [cap][lw] (i32 [cap]
	                            * class ids for sparse_categorical_crossentropy) */
	struct xo_tensor *idx;     /* i32 [cap]: argmax scratch of the accuracy op */
	/* i32 [cap][T]: a Masking's keep flags, the model's mask (NULL without
	 * one); keep is the plan's [n][T] view, every layer's ids then */
	struct xo_tensor *kb, *keep;
	struct xo_tensor *scalars; /* [2]: loss and correct of bench steps */
	struct xo_tensor *sc_loss, *sc_correct; /* views of scalars */
	/* Plan views of the current batch size n and mode. */
	int64_t plan_n; /* 0: no plan */
	bool plan_training;
	struct xo_tensor *x_in, *x_flat, *y_in, *idx_v;
	/* A model of several inputs: input k >= 1 of the batch (x_in is input
	 * 0's). The batch's rows are one input after another, n samples of
	 * input 0, then of input 1, ...: each input a tensor of its own, as
	 * its layers take it; [0] unused. */
	struct xo_tensor *x_part[XO_MODEL_INPUTS_MAX];
	int64_t iteration; /* optimizer steps taken (Keras optimizer.iterations) */
	struct xo_compile compile; /* loss, optimizer and metric (the spec's) */
	int64_t lw;                /* label values per sample: 1 (sparse ids) or classes */
	enum xo_op metric_op;      /* xo_compile_metric_op; XO_OP_COUNT: none */
	uint64_t seed;     /* dropout mask seed (of the last init/fit) */
	int64_t bench_n;   /* batch made resident by bench_prepare; 0: none */
	/* The backend's fused whole-network path (struct xo_net): used when
	 * fuse is on (xo_model_set_fused, env XO_FUSE) and the backend says
	 * the net fits; never while profiling per layer. */
	bool fuse;
	/* XO_FUSE=require: a batch the fused path does not run is an error, so
	 * a test that means to exercise the fused kernels (the races label)
	 * can never run op by op without noticing. */
	bool fuse_required;
	struct xo_net_layer *net_layers; /* nlayers; all but p fixed at open */
	/* The backend's net_fits answer for the last net described: it
	 * depends only on the batch size, the mode, the input rows and
	 * whether an index and labels are given, so it is asked once per
	 * such key, not per batch. */
	struct {
		bool valid, fits, training, index, t;
		int64_t n;
		const struct xo_tensor *x;
		int64_t x_elems;
	} fits;
	/* predict_step's last finding that its chunk of chunk_fused samples
	 * runs on the fused path (with fuse as it was then): predict does not
	 * chunk, and does not rebuild the plan to ask again on every call. */
	int64_t chunk_fused;
	bool chunk_fused_fuse;
	/* Test hook: each epoch's training order (xo_model_set_order_hook). */
	xo_fit_order_fn order_fn;
	void *order_user;
	/* The memory plans (memplan.c): mp[0] for inference only, mp[1] for
	 * training too. The layer buffers are views of slots[nslots] laid out
	 * as mp[layout] (-1: none made): 0 from open, 1 from the first
	 * training plan on. share: XO_MODEL_SHARE (0: a slot per buffer). */
	struct mem_plan mp[2];
	int layout;
	bool share;
	struct xo_tensor **slots;
	int nslots;
	struct mem_trace *trace; /* set while the planner traces the passes */
	/* Per-layer profiling of xo_model_bench_profile_step. */
	bool profiling;
	uint64_t *prof_ns, *prof_launches, prof_extra;
};

/* The model's mask comes from a Masking (its first layer, spec.c): its keep
 * flags are a buffer of the model's (kb), read as every layer's ids. */
static inline bool xo_model_has_masking(const struct xo_model *m)
{
	return m->spec.nlayers > 0 && m->spec.layers[0].kind == XO_LAYER_MASKING;
}

/* A Dense on a sequence ([T][F], or [h][w][F]), or TimeDistributed over a
 * Dense (the same math and kernel; one step too): each row on its own,
 * which the fused paths take as a Conv1D of kernel 1 over the rows (the
 * kernel
 * [F][units] is Keras's Conv1D [1][F][units]; bias and activation alike;
 * forward.c net_describe gives it the conv's params). */
static inline bool xo_model_dense_rows(const struct xo_layer_spec *s)
{
	return (s->kind == XO_LAYER_DENSE && s->in_len * s->in_w > 1) ||
	       (s->kind == XO_LAYER_TIME_DISTRIBUTED && s->inner == XO_LAYER_DENSE);
}

/* Views for batch size n (<= cap) in training or inference mode. */
/* Layer i's backward takes its gradient w.r.t. the softmax's input: the
 * last layer of a model compiled with categorical_crossentropy from
 * probabilities, whose fused softmax + cross-entropy gradient arrives so
 * (struct layer_ctx's ce_logits). */
static inline bool xo_model_ce_logits(const struct xo_model *m, int i)
{
	return i == m->nlayers - 1 && m->compile.loss == XO_LOSS_CATEGORICAL_CROSSENTROPY &&
	       !m->compile.from_logits;
}

/* The labels are class ids (sparse_categorical_crossentropy). */
static inline bool sparse(const struct xo_model *m)
{
	return m->compile.loss == XO_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY;
}

static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
/* Runs one op; layer >= 0 names the layer it belongs to when profiling. */
enum xo_status xo_model_run_op(struct xo_model *m, int layer, enum xo_op op, enum xo_dir dir,
                               const struct xo_op_args *a);
/* The plan: views for batch size n (<= cap) in training or inference mode,
 * and their release (n = 0: no plan). */
enum xo_status xo_model_plan_build(struct xo_model *m, int64_t n, bool training);
void xo_model_plan_free(struct xo_model *m);
/* Grows the buffers to hold n samples (the model was opened for fewer). */
enum xo_status xo_model_ensure_cap(struct xo_model *m, int64_t n);
/* Layer i's op parameters for the current plan. */
struct xo_params xo_model_layer_params(const struct xo_model *m, int i, bool training);
/* XO_EINVAL naming what (fit, a bench step) when the model cannot train. */
enum xo_status xo_model_check_trainable(const struct xo_model *m, const char *what);
/* Forward of the current plan (inference), with metrics into loss / correct
 * when t is set: fused when the backend runs the net, else op by op (x and
 * t then already in m->xb / m->yb, or gathered here through index). */
enum xo_status xo_model_infer(struct xo_model *m, const struct xo_tensor *x,
                              const struct xo_tensor *index, const struct xo_tensor *t,
                              struct xo_tensor *loss, struct xo_tensor *correct);
/* One training step of the current plan (training mode): fused when the
 * backend runs the net, else op by op as infer. */
enum xo_status xo_model_step(struct xo_model *m, const struct xo_tensor *x,
                             const struct xo_tensor *index, const struct xo_tensor *t,
                             struct xo_tensor *loss, struct xo_tensor *correct);
/* The memory planner (memplan.c), which calls nothing of model/ (forward.c
 * drives it). trace_begin: the buffers of a layout as storage-less tensors
 * and m->trace set; trace_pass: the pass being traced (0 inference, 1
 * training); trace_call: records one call (xo_model_run_op while m->trace
 * is set); trace_end: the buffers back to none and, when traced, mp[layout]
 * from the trace; layout_alloc / layout_free: the slots of mp[layout] for
 * cap samples and the layer buffers as their views; plan_release: the
 * plans' arrays. */
enum xo_status xo_mem_trace_begin(struct xo_model *m, int layout);
void xo_mem_trace_pass(struct xo_model *m, int pass);
void xo_mem_trace_call(struct xo_model *m, const struct xo_op_args *a);
enum xo_status xo_mem_trace_end(struct xo_model *m, int layout, bool traced);
enum xo_status xo_mem_layout_alloc(struct xo_model *m, int layout, int64_t cap);
void xo_mem_layout_free(struct xo_model *m);
void xo_mem_plan_release(struct xo_model *m);
/* model_open's model (model.c): spec, parameters, initial weights, no
 * activation buffers; then, once forward.c has made the memory plans, the
 * inference layout's buffers for max_batch samples, bounded first. */
enum xo_status xo_model_open_bare(const char *text, const char *origin, struct xo_backend *be,
                                  int64_t max_batch, struct xo_model **out);
enum xo_status xo_model_buffers_open(struct xo_model *m, int64_t max_batch, const char *origin);
/* Writes bs labels y[bs][lw] into the device tensor t at sample offset off:
 * float rows, or (sparse) the ids as i32. */
enum xo_status xo_model_labels_write(const struct xo_model *m, struct xo_tensor *t,
                                     const float *y, int64_t off, int64_t bs);
/* Writes ns samples of x into the device tensor t (forward.c says how an
 * int32 input is checked); first numbers x's first sample in the caller's
 * data, what names it in messages. */
enum xo_status xo_model_write_x(struct xo_model *m, struct xo_tensor *t, const float *x,
                                int64_t first, int64_t ns, const char *what);
/* The epoch's metric from the summed correct counts of n samples. */
double xo_model_accuracy_of(const struct xo_model *m, double correct, int64_t n);

#endif /* XO_MODEL_RUN_H */
