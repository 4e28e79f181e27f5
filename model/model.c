/*
 * model.c - the sequential model runtime: a parsed spec compiled onto one
 * backend, with Keras's predict / evaluate / fit semantics.
 *
 * Everything a step touches stays on the device: the parameters, their
 * gradients and Adam's m and v each live in ONE flat tensor (per-layer
 * kernel and bias are views), so Adam is one op call per step; activations
 * and their gradients are allocated once for the largest batch and partial
 * batches use views; flatten is a view of its input (no op, no copy). fit
 * uploads the data set once, picks each (shuffled) batch on the device with
 * the gather op, writes each step's loss and correct count into a device
 * tensor, and reads those back once per epoch: per epoch there is one
 * host-to-device copy (the shuffled indices) and one device-to-host copy
 * (the metrics), nothing per step.
 *
 * The loss, optimizer and metric are the spec's compile line (default
 * categorical_crossentropy + Adam + accuracy). With categorical_crossentropy
 * the last layer is dense(softmax) and the loss's backward pass is the fused
 * softmax + cross-entropy gradient dz = (p - t) / batch w.r.t. the softmax's
 * input, so that layer's backward runs with activation=linear and dy = dz;
 * the other losses' backward is d loss / d p and the last layer's backward
 * runs with its own activation. The optimizer's state lives in the adam_m /
 * adam_v tensors: Adam's m and v, SGD's momentum (adam_m), RMSprop's rms
 * (adam_v) and momentum (adam_m).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "model_internal.h"

struct layer {
	struct xo_layer_spec s;
	bool has_grad;             /* the gradient w.r.t. the output is needed */
	bool need_dx;              /* the gradient w.r.t. the input is needed */
	int64_t w_off, b_off;      /* kernel and bias offsets in the flat parameters */
	struct xo_tensor *w, *b;   /* views of the parameters (b NULL without bias) */
	struct xo_tensor *dw, *db; /* views of the gradients */
	struct xo_tensor *ybuf;    /* output storage [cap][out]; NULL for flatten */
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
};

/* The op of an activation; XO_OP_COUNT for linear (the identity). */
static enum xo_op act_op(enum xo_activation a)
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
	}
	XO_ASSERT(!"unknown activation");
	return XO_OP_COUNT;
}

/* Whether an activation op's backward takes x (else y): ops.def. */
static bool act_bwd_from_x(enum xo_activation a)
{
	return a == XO_ACTIVATION_GELU || a == XO_ACTIVATION_SOFTPLUS;
}

/* A layer whose op takes x, kernel, bias (conv1d, conv2d, dense). */
static bool layer_is_conv_dense(const struct xo_layer_spec *s)
{
	return s->kind == XO_LAYER_CONV1D || s->kind == XO_LAYER_CONV2D ||
	       s->kind == XO_LAYER_DENSE;
}

/* Its op. */
static enum xo_op layer_conv_dense_op(const struct xo_layer_spec *s)
{
	return s->kind == XO_LAYER_CONV1D   ? XO_OP_conv1d
	       : s->kind == XO_LAYER_CONV2D ? XO_OP_conv2d
	                                    : XO_OP_dense;
}

/* conv1d/conv2d/dense with an activation the ops do not fuse: run as two ops. */
static bool act_separate(const struct xo_layer_spec *s)
{
	return layer_is_conv_dense(s) &&
	       s->p.activation > XO_ACTIVATION_FUSED_LAST;
}

/* A layer that is the same bytes as its input: flatten, Activation(linear). */
static bool layer_is_view(const struct xo_layer_spec *s)
{
	return s->kind == XO_LAYER_FLATTEN ||
	       (s->kind == XO_LAYER_ACTIVATION && s->p.activation == XO_ACTIVATION_LINEAR);
}

/* A 2-D layer (conv2d, pooling): its ops take x[batch][len][width][ch]. */
static bool layer_is_2d(const struct xo_layer_spec *s)
{
	return s->kind == XO_LAYER_CONV2D || s->kind == XO_LAYER_MAX_POOLING2D || s->kind == XO_LAYER_AVERAGE_POOLING2D ||
	       s->kind == XO_LAYER_GLOBAL_AVERAGE_POOLING2D ||
	       s->kind == XO_LAYER_GLOBAL_MAX_POOLING2D;
}

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
	struct xo_tensor *scalars; /* [2]: loss and correct of bench steps */
	struct xo_tensor *sc_loss, *sc_correct; /* views of scalars */
	/* Plan views of the current batch size n and mode. */
	int64_t plan_n; /* 0: no plan */
	bool plan_training;
	struct xo_tensor *x_in, *x_flat, *y_in, *idx_v;
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
	/* Per-layer profiling of xo_model_bench_profile_step. */
	bool profiling;
	uint64_t *prof_ns, *prof_launches, prof_extra;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Runs one op; layer >= 0 names the layer it belongs to when profiling. */
static enum xo_status run_op(struct xo_model *m, int layer, enum xo_op op, enum xo_dir dir,
                             const struct xo_op_args *a)
{
	struct xo_backend_stats s;
	enum xo_status st;

	if (!m->profiling)
		return xo_op_run(m->be, op, dir, a);
	st = xo_backend_sync(m->be);
	if (st)
		return st;
	xo_backend_stats_reset(m->be);
	st = xo_op_run(m->be, op, dir, a);
	if (!st)
		st = xo_backend_sync(m->be);
	if (st)
		return st;
	xo_backend_stats_get(m->be, &s);
	if (layer >= 0) {
		m->prof_ns[layer] += s.kernel_ns;
		m->prof_launches[layer] += s.launches;
	} else {
		m->prof_extra += s.kernel_ns;
	}
	return XO_OK;
}

/* ---- plan: per-batch views --------------------------------------------- */

static void plan_free(struct xo_model *m)
{
	for (int i = 0; i < m->nlayers; i++) {
		struct layer *l = &m->layers[i];

		if (l->out_owned)
			xo_tensor_free(l->out);
		xo_tensor_free(l->gout);
		xo_tensor_free(l->z);
		xo_tensor_free(l->gz);
		xo_tensor_free(l->ws);
		l->ws = NULL;
		l->z = l->gz = NULL;
		l->out = NULL;
		l->gout = NULL;
		l->gin = NULL;
		l->in = NULL;
		l->out_owned = false;
	}
	xo_tensor_free(m->x_in);
	xo_tensor_free(m->x_flat);
	xo_tensor_free(m->y_in);
	xo_tensor_free(m->idx_v);
	m->x_in = m->x_flat = m->y_in = m->idx_v = NULL;
	m->plan_n = 0;
}

/* Dims of n samples of shape (rank, len, w, ch). */
static int sample_dims(int64_t n, int rank, int64_t len, int64_t w, int64_t ch, int64_t *dims)
{
	dims[0] = n;
	if (rank == 3) {
		dims[1] = len;
		dims[2] = w;
		dims[3] = ch;
		return 4;
	}
	if (rank == 2) {
		dims[1] = len;
		dims[2] = ch;
		return 3;
	}
	dims[1] = ch;
	return 2;
}

/* Views for batch size n (<= cap) in training or inference mode. */
/* The labels are class ids (sparse_categorical_crossentropy). */
static bool sparse(const struct xo_model *m)
{
	return m->compile.loss == XO_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY;
}

static enum xo_status plan_build(struct xo_model *m, int64_t n, bool training)
{
	const struct xo_tensor *prev_out;
	struct xo_tensor *prev_gout = NULL;
	int64_t dims[4];
	enum xo_status st;
	int nd;

	if (m->plan_n == n && m->plan_training == training)
		return XO_OK;
	plan_free(m);
	XO_ASSERT(n >= 1 && n <= m->cap);
	nd = sample_dims(n, m->spec.in_rank, m->spec.in_len, m->spec.in_w, m->spec.in_ch, dims);
	st = xo_tensor_view(m->xb, 0, nd, dims, &m->x_in);
	/* an int32 input: the batch rows hold the ids' int32 bits (write_x),
	 * moved as 4-byte words by the gather op; the embedding reads them
	 * through this view as what they are */
	if (!st && m->spec.in_int)
		m->x_in->dtype = XO_DTYPE_I32;
	if (!st)
		st = xo_tensor_view(m->xb, 0, 2, (int64_t[]){n, m->in_size}, &m->x_flat);
	if (!st)
		st = m->lw == m->classes && !sparse(m)
		         ? xo_tensor_view(m->yb, 0, 2, (int64_t[]){n, m->classes}, &m->y_in)
		         : xo_tensor_view(m->yb, 0, 1, (int64_t[]){n}, &m->y_in);
	if (!st)
		st = xo_tensor_view(m->idx, 0, 1, (int64_t[]){n}, &m->idx_v);
	if (st)
		goto out_free;
	prev_out = m->x_in;
	for (int i = 0; i < m->nlayers; i++) {
		struct layer *l = &m->layers[i];

		l->in = prev_out;
		l->gin = training && l->need_dx ? prev_gout : NULL;
		nd = sample_dims(n, l->s.out_rank, l->s.out_len, l->s.out_w, l->s.out_ch, dims);
		if (layer_is_view(&l->s)) {
			/* Flatten is free: the same bytes, seen as [n][len*ch];
			 * so is Activation(linear). */
			st = xo_tensor_view((struct xo_tensor *)l->in, 0, nd, dims, &l->out);
			l->out_owned = true;
			if (!st && training && l->has_grad)
				st = xo_tensor_view(prev_gout, 0, nd, dims, &l->gout);
		} else if (l->s.kind == XO_LAYER_DROPOUT && !training) {
			/* Dropout is the identity at inference: no op at all. */
			l->out = (struct xo_tensor *)l->in;
			l->out_owned = false;
		} else {
			st = xo_tensor_view(l->ybuf, 0, nd, dims, &l->out);
			l->out_owned = true;
			if (!st && training && l->has_grad)
				st = xo_tensor_view(l->gbuf, 0, nd, dims, &l->gout);
			if (!st && act_separate(&l->s))
				st = xo_tensor_view(l->zbuf, 0, nd, dims, &l->z);
			if (!st && act_separate(&l->s) && training && l->has_grad)
				st = xo_tensor_view(l->gzbuf, 0, nd, dims, &l->gz);
			/* [n][T][S*units] where a backward reads it (training,
			 * a gradient through the layer); else none, and the
			 * forward runs the inference form. Grown to n on demand. */
			bool want_ws = l->ws_per && training && l->has_grad;

			if (!st && want_ws && l->ws_cap < n) {
				xo_tensor_free(l->wsbuf);
				l->wsbuf = NULL;
				l->ws_cap = 0;
				st = xo_tensor_create(m->be, XO_DTYPE_F32, 2,
				                      (int64_t[]){n, l->ws_per}, &l->wsbuf);
				if (!st)
					l->ws_cap = n;
			}
			if (!st && want_ws)
				st = xo_tensor_view(l->wsbuf, 0, 3,
				                    (int64_t[]){n, l->s.in_len, l->ws_per / l->s.in_len},
				                    &l->ws);
		}
		if (st)
			goto out_free;
		prev_out = l->out;
		prev_gout = l->gout;
	}
	m->plan_n = n;
	m->plan_training = training;
	return XO_OK;

out_free:
	plan_free(m);
	return st;
}

/* ---- buffers ------------------------------------------------------------- */

static void buffers_free(struct xo_model *m)
{
	plan_free(m);
	for (int i = 0; i < m->nlayers; i++) {
		xo_tensor_free(m->layers[i].ybuf);
		xo_tensor_free(m->layers[i].gbuf);
		xo_tensor_free(m->layers[i].zbuf);
		xo_tensor_free(m->layers[i].gzbuf);
		xo_tensor_free(m->layers[i].wsbuf);
		m->layers[i].wsbuf = NULL;
		m->layers[i].ws_cap = 0;
		m->layers[i].ybuf = m->layers[i].gbuf = NULL;
		m->layers[i].zbuf = m->layers[i].gzbuf = NULL;
	}
	xo_tensor_free(m->xb);
	xo_tensor_free(m->yb);
	xo_tensor_free(m->idx);
	m->xb = m->yb = m->idx = NULL;
	m->cap = 0;
}

/* Activation and gradient storage for cap samples. */
static enum xo_status buffers_alloc(struct xo_model *m, int64_t cap)
{
	enum xo_status st;
	int64_t n;

	st = xo_tensor_create(m->be, XO_DTYPE_F32, 2, (int64_t[]){cap, m->in_size}, &m->xb);
	if (!st)
		st = sparse(m) ? xo_tensor_create(m->be, XO_DTYPE_I32, 1, (int64_t[]){cap}, &m->yb)
		               : xo_tensor_create(m->be, XO_DTYPE_F32, 2,
		                                  (int64_t[]){cap, m->classes}, &m->yb);
	if (!st)
		st = xo_tensor_create(m->be, XO_DTYPE_I32, 1, (int64_t[]){cap}, &m->idx);
	for (int i = 0; !st && i < m->nlayers; i++) {
		struct layer *l = &m->layers[i];

		if (layer_is_view(&l->s))
			continue;
		if (!xo_mul_ok(l->s.out_len, l->s.out_w, &n) || !xo_mul_ok(n, l->s.out_ch, &n))
			st = xo_error(XO_EOVERFLOW, "model: activation size overflows");
		if (!st)
			st =
			    xo_tensor_create(m->be, XO_DTYPE_F32, 2, (int64_t[]){cap, n}, &l->ybuf);
		if (!st && l->has_grad)
			st =
			    xo_tensor_create(m->be, XO_DTYPE_F32, 2, (int64_t[]){cap, n}, &l->gbuf);
		if (!st && act_separate(&l->s))
			st =
			    xo_tensor_create(m->be, XO_DTYPE_F32, 2, (int64_t[]){cap, n}, &l->zbuf);
		if (!st && act_separate(&l->s) && l->has_grad)
			st = xo_tensor_create(m->be, XO_DTYPE_F32, 2, (int64_t[]){cap, n},
			                      &l->gzbuf);
	}
	if (st) {
		buffers_free(m);
		return st;
	}
	m->cap = cap;
	return XO_OK;
}

/* Grows the buffers to hold n samples (the model was opened for fewer). */
static enum xo_status ensure_cap(struct xo_model *m, int64_t n)
{
	if (n <= m->cap)
		return XO_OK;
	buffers_free(m);
	return buffers_alloc(m, n);
}

/* ---- open / close ------------------------------------------------------ */

static enum xo_status params_alloc(struct xo_model *m)
{
	enum xo_status st = XO_OK;
	int64_t n = m->nparams;

	if (!n)
		return XO_OK;
	st = xo_tensor_create(m->be, XO_DTYPE_F32, 1, &n, &m->params);
	if (!st)
		st = xo_tensor_create(m->be, XO_DTYPE_F32, 1, &n, &m->grads);
	if (!st)
		st = xo_tensor_create(m->be, XO_DTYPE_F32, 1, &n, &m->adam_m);
	if (!st)
		st = xo_tensor_create(m->be, XO_DTYPE_F32, 1, &n, &m->adam_v);
	for (int i = 0; !st && i < m->nlayers; i++) {
		struct layer *l = &m->layers[i];

		if (!l->s.w_ndim)
			continue;
		st = xo_tensor_view(m->params, l->w_off, l->s.w_ndim, l->s.w_dim, &l->w);
		if (!st)
			st = xo_tensor_view(m->grads, l->w_off, l->s.w_ndim, l->s.w_dim, &l->dw);
		if (!st && l->s.rk_count) { /* [units][g*units] */
			int64_t rd[2] = {l->s.p.units, l->s.rk_count / l->s.p.units};

			st = xo_tensor_view(m->params, l->rk_off, 2, rd, &l->rk);
			if (!st)
				st = xo_tensor_view(m->grads, l->rk_off, 2, rd, &l->drk);
		}
		if (!st && l->s.b_count) {
			/* gru reset_after: [2][3u] (ops.def) */
			int64_t bd[2] = {2, l->s.b_count / 2};
			bool two = l->s.kind == XO_LAYER_GRU && l->s.p.reset_after;

			st = two ? xo_tensor_view(m->params, l->b_off, 2, bd, &l->b)
			         : xo_tensor_view(m->params, l->b_off, 1, &l->s.b_count, &l->b);
			if (!st)
				st = two ? xo_tensor_view(m->grads, l->b_off, 2, bd, &l->db)
				         : xo_tensor_view(m->grads, l->b_off, 1, &l->s.b_count, &l->db);
		}
	}
	for (int i = 0; !st && i < m->nlayers; i++) {
		struct layer *l = &m->layers[i];
		int64_t ch = l->s.in_ch;

		if (l->s.kind != XO_LAYER_BATCH_NORMALIZATION)
			continue;
		if (l->s.gamma_count) {
			st = xo_tensor_view(m->params, l->g_off, 1, &ch, &l->gamma);
			if (!st)
				st = xo_tensor_view(m->grads, l->g_off, 1, &ch, &l->dgamma);
		}
		if (!st && l->s.beta_count) {
			st = xo_tensor_view(m->params, l->beta_off, 1, &ch, &l->beta);
			if (!st)
				st = xo_tensor_view(m->grads, l->beta_off, 1, &ch, &l->dbeta);
		}
		if (!st)
			st = xo_tensor_view(m->params, l->mm_off, 1, &ch, &l->mm);
		if (!st)
			st = xo_tensor_view(m->params, l->mv_off, 1, &ch, &l->mv);
	}
	m->tr_views = m->ntrain < n;
	if (!st && !m->tr_views) {
		m->tr_params = m->params;
		m->tr_grads = m->grads;
		m->tr_m = m->adam_m;
		m->tr_v = m->adam_v;
	} else if (!st && m->ntrain) {
		st = xo_tensor_view(m->params, 0, 1, &m->ntrain, &m->tr_params);
		if (!st)
			st = xo_tensor_view(m->grads, 0, 1, &m->ntrain, &m->tr_grads);
		if (!st)
			st = xo_tensor_view(m->adam_m, 0, 1, &m->ntrain, &m->tr_m);
		if (!st)
			st = xo_tensor_view(m->adam_v, 0, 1, &m->ntrain, &m->tr_v);
	}
	return st;
}

int64_t xo_model_params_max(void)
{
	static int64_t max;

	if (!max) {
		const char *e = getenv("XO_MODEL_PARAMS_MAX");
		char *end = NULL;
		long long v = e ? strtoll(e, &end, 10) : 0;

		max = e && *e && end && !*end && v > 0 && v <= (INT64_C(1) << 31)
		          ? (int64_t)v
		          : XO_MODEL_PARAMS_DEFAULT;
	}
	return max;
}

static enum xo_status model_open(const char *text, const char *origin, struct xo_backend *be,
                                 int64_t max_batch, struct xo_model **out)
{
	struct xo_model *m;
	int first_param = -1;
	enum xo_status st;
	int64_t off = 0;

	if (!out)
		return xo_error(XO_EINVAL, "xo_model_open: NULL argument");
	*out = NULL;
	if (!be)
		return xo_error(XO_EINVAL, "xo_model_open: NULL backend");
	if (max_batch < 1)
		return xo_error(XO_EINVAL, "model: max_batch=%" PRId64 " must be >= 1", max_batch);
	m = calloc(1, sizeof(*m));
	if (!m)
		return xo_error(XO_ENOMEM, "model: out of memory");
	m->be = be;
	st = xo_spec_parse(text, origin, &m->spec);
	if (st)
		goto out_free;
	m->nlayers = m->spec.nlayers;
	m->layers = calloc((size_t)m->nlayers, sizeof(*m->layers));
	m->net_layers = calloc((size_t)m->nlayers, sizeof(*m->net_layers));
	m->fuse = !(getenv("XO_FUSE") && !strcmp(getenv("XO_FUSE"), "0"));
	m->fuse_required = getenv("XO_FUSE") && !strcmp(getenv("XO_FUSE"), "require");
	if (!m->layers || !m->net_layers) {
		st = xo_error(XO_ENOMEM, "model: out of memory");
		goto out_free;
	}
	for (int i = 0; i < m->nlayers; i++) {
		struct layer *l = &m->layers[i];

		l->s = m->spec.layers[i];
		if (l->s.w_ndim) {
			if (first_param < 0)
				first_param = i;
			l->w_off = off;
			l->rk_off = off + l->s.w_count;
			l->b_off = l->rk_off + l->s.rk_count;
			off += l->s.w_count + l->s.rk_count + l->s.b_count;
		}
		if (xo_layer_rnn_op(l->s.kind) != XO_OP_COUNT)
			l->ws_per = l->s.in_len * xo_rnn_ws_blocks(xo_layer_rnn_op(l->s.kind)) *
			            l->s.p.units;
		if (l->s.gamma_count + l->s.beta_count) { /* batch_normalization */
			if (first_param < 0)
				first_param = i;
			l->g_off = off;
			l->beta_off = off + l->s.gamma_count;
			off += l->s.gamma_count + l->s.beta_count;
		}
		l->has_grad = first_param >= 0 && i >= first_param;
		l->need_dx = first_param >= 0 && i > first_param;
	}
	m->ntrain = off;
	for (int i = 0; i < m->nlayers; i++) { /* the non-trainable tail */
		struct layer *l = &m->layers[i];

		if (!l->s.state_count)
			continue;
		l->mm_off = off;
		l->mv_off = off + l->s.in_ch;
		off += l->s.state_count;
	}
	m->nparams = off;
	/* a spec is outside input too (a model.spec someone sent): its
	 * parameters are bounded before anything is allocated for them */
	if (m->nparams > XO_MODEL_PARAMS_MAX) {
		st = xo_error(XO_EFORMAT, "%s: the model declares %" PRId64 " parameters, more than "
		                          "the limit of %" PRId64, origin, m->nparams,
		              (int64_t)XO_MODEL_PARAMS_MAX);
		goto out_free;
	}
	for (int i = 0; i < m->nlayers; i++) {
		static const enum xo_net_kind kinds[] = {
		    [XO_LAYER_CONV1D] = XO_NET_CONV1D,
		    [XO_LAYER_MAX_POOLING1D] = XO_NET_MAX_POOLING1D,
		    [XO_LAYER_FLATTEN] = XO_NET_FLATTEN,
		    [XO_LAYER_DROPOUT] = XO_NET_DROPOUT,
		    [XO_LAYER_DENSE] = XO_NET_DENSE,
		    [XO_LAYER_ACTIVATION] = XO_NET_ACTIVATION,
		    [XO_LAYER_AVERAGE_POOLING1D] = XO_NET_AVERAGE_POOLING1D,
		    [XO_LAYER_GLOBAL_AVERAGE_POOLING1D] = XO_NET_GLOBAL_AVERAGE_POOLING1D,
		    [XO_LAYER_GLOBAL_MAX_POOLING1D] = XO_NET_GLOBAL_MAX_POOLING1D,
		    [XO_LAYER_BATCH_NORMALIZATION] = XO_NET_BATCH_NORMALIZATION,
		    [XO_LAYER_MAX_POOLING2D] = XO_NET_MAX_POOLING2D,
		    [XO_LAYER_AVERAGE_POOLING2D] = XO_NET_AVERAGE_POOLING2D,
		    [XO_LAYER_GLOBAL_AVERAGE_POOLING2D] = XO_NET_GLOBAL_AVERAGE_POOLING2D,
		    [XO_LAYER_GLOBAL_MAX_POOLING2D] = XO_NET_GLOBAL_MAX_POOLING2D,
		    [XO_LAYER_EMBEDDING] = XO_NET_EMBEDDING,
		    [XO_LAYER_SIMPLE_RNN] = XO_NET_SIMPLE_RNN,
		    [XO_LAYER_LSTM] = XO_NET_LSTM,
		    [XO_LAYER_GRU] = XO_NET_GRU,
		    [XO_LAYER_CONV2D] = XO_NET_CONV2D,
		};
		const struct layer *l = &m->layers[i];

		m->net_layers[i] = (struct xo_net_layer){
		    .kind = kinds[l->s.kind],
		    /* a rank-3 sample reaches the fused paths as [len * w][ch]:
		     * only elementwise layers and flatten take one there */
		    .in_len = l->s.in_len * l->s.in_w,
		    .in_ch = l->s.in_ch,
		    .out_len = l->s.out_len * l->s.out_w,
		    .out_ch = l->s.out_ch,
		    .w_off = l->s.w_ndim ? l->w_off : -1,
		    .b_off = l->s.w_ndim && l->s.b_count ? l->b_off : -1,
		    .need_dx = l->need_dx,
		};
	}
	m->in_size = m->spec.in_len * m->spec.in_w * m->spec.in_ch;
	m->classes = m->layers[m->nlayers - 1].s.out_len * m->layers[m->nlayers - 1].s.out_w *
	             m->layers[m->nlayers - 1].s.out_ch;
	m->compile = m->spec.compile;
	m->lw = sparse(m) ? 1 : m->classes;
	m->metric_op = xo_compile_metric_op(&m->compile, m->classes);
	st = params_alloc(m);
	if (!st)
		st = buffers_alloc(m, max_batch);
	if (!st)
		st = xo_tensor_create(be, XO_DTYPE_F32, 1, (int64_t[]){2}, &m->scalars);
	if (!st)
		st = xo_tensor_view(m->scalars, 0, 1, (int64_t[]){1}, &m->sc_loss);
	if (!st)
		st = xo_tensor_view(m->scalars, 1, 1, (int64_t[]){1}, &m->sc_correct);
	/* A model has weights from the start, as a built Keras model does. */
	if (!st)
		st = xo_model_init(m, 0);
	if (st)
		goto out_free;
	*out = m;
	return XO_OK;

out_free:
	xo_model_close(m);
	return st;
}

enum xo_status xo_model_open_string(const char *spec, const char *origin, struct xo_backend *be,
                                    int64_t max_batch, struct xo_model **out)
{
	return model_open(spec, origin ? origin : "<spec>", be, max_batch, out);
}

static enum xo_status spec_read(const char *path, bool weights, char **text)
{
	enum xo_status st = XO_OK;
	struct stat sb;
	FILE *f;

	*text = NULL;
	/* a FIFO or a directory is refused here, before anything reads it */
	if ((st = xo_input_open(path, "a model spec", &f, &sb)))
		return st;
	/* A Keras file (told by its first bytes, not its name) is read as the
	 * spec its config maps to (keras.c). */
	if (xo_keras_sniff(path) != XO_KERAS_NONE) {
		fclose(f);
		return weights ? xo_keras_spec_text(path, text) : xo_keras_spec_config(path, text);
	}
	if (sb.st_size > (1 << 20)) {
		fclose(f);
		return xo_error(XO_EFORMAT, "%s: %lld bytes is too large for a model spec", path,
		                (long long)sb.st_size);
	}
	*text = malloc((size_t)sb.st_size + 1);
	if (!*text)
		st = xo_error(XO_ENOMEM, "%s: out of memory", path);
	else if (fread(*text, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size)
		st = xo_error(XO_EIO, "%s: read failed", path);
	else if (((*text)[sb.st_size] = '\0', strlen(*text) != (size_t)sb.st_size))
		st = xo_error(XO_EFORMAT, "%s: not a text file (NUL byte)", path);
	fclose(f);
	if (st) {
		free(*text);
		*text = NULL;
	}
	return st;
}

enum xo_status xo_spec_read_file(const char *path, char **text)
{
	return spec_read(path, true, text);
}

enum xo_status xo_spec_read_architecture(const char *path, char **text)
{
	return spec_read(path, false, text);
}

enum xo_status xo_model_open(const char *spec_path, struct xo_backend *be, int64_t max_batch,
                             struct xo_model **out)
{
	enum xo_status st;
	char *text;

	if (!spec_path || !out)
		return xo_error(XO_EINVAL, "xo_model_open: NULL argument");
	*out = NULL;
	if ((st = xo_spec_read_file(spec_path, &text)))
		return st;
	st = model_open(text, spec_path, be, max_batch, out);
	free(text);
	/* A Keras model file carries its weights: the model opens with them. */
	if (!st && xo_keras_sniff(spec_path) != XO_KERAS_NONE) {
		st = xo_keras_load_weights(*out, spec_path);
		if (st) {
			xo_model_close(*out);
			*out = NULL;
		}
	}
	return st;
}

void xo_model_close(struct xo_model *m)
{
	if (!m)
		return;
	buffers_free(m);
	for (int i = 0; m->layers && i < m->nlayers; i++) {
		struct layer *l = &m->layers[i];

		xo_tensor_free(l->w);
		xo_tensor_free(l->b);
		xo_tensor_free(l->dw);
		xo_tensor_free(l->db);
		xo_tensor_free(l->rk);
		xo_tensor_free(l->drk);
		xo_tensor_free(l->gamma);
		xo_tensor_free(l->beta);
		xo_tensor_free(l->dgamma);
		xo_tensor_free(l->dbeta);
		xo_tensor_free(l->mm);
		xo_tensor_free(l->mv);
	}
	if (m->tr_views) {
		xo_tensor_free(m->tr_params);
		xo_tensor_free(m->tr_grads);
		xo_tensor_free(m->tr_m);
		xo_tensor_free(m->tr_v);
	}
	xo_tensor_free(m->sc_loss);
	xo_tensor_free(m->sc_correct);
	xo_tensor_free(m->scalars);
	xo_tensor_free(m->params);
	xo_tensor_free(m->grads);
	xo_tensor_free(m->adam_m);
	xo_tensor_free(m->adam_v);
	free(m->layers);
	free(m->net_layers);
	xo_spec_free(&m->spec);
	free(m);
}

int64_t xo_model_input_size(const struct xo_model *m)
{
	return m->in_size;
}

int64_t xo_model_classes(const struct xo_model *m)
{
	return m->classes;
}

int64_t xo_model_param_count(const struct xo_model *m)
{
	return m->nparams;
}

int xo_model_layer_count(const struct xo_model *m)
{
	return m->nlayers;
}

const char *xo_model_layer_name(const struct xo_model *m, int i)
{
	XO_ASSERT(i >= 0 && i < m->nlayers);
	return m->layers[i].s.name;
}

static struct xo_params layer_params(const struct xo_model *m, int i, bool training);

bool xo_model_layer_gemm(const struct xo_model *m, int i, int64_t batch, struct xo_layer_gemm *out)
{
	const struct layer *l;

	XO_ASSERT(m && out && i >= 0 && i < m->nlayers && batch >= 1);
	l = &m->layers[i];
	if (xo_layer_rnn_op(l->s.kind) != XO_OP_COUNT) {
		int64_t ch = l->s.in_ch, u = l->s.p.units;

		*out = (struct xo_layer_gemm){
		    .op = xo_layer_rnn_op(l->s.kind),
		    .fwd = layer_params(m, i, false),
		    .bwd = layer_params(m, i, true),
		    .has_grad = l->has_grad,
		    .need_dx = l->need_dx,
		    .rows = l->s.in_len,
		    .k = ch + u,
		    .n = l->s.w_dim[1], /* g * u */
		    .k_dw = ch + 2 * u,
		    .k_dx = ch,
		};
		out->fwd.batch = out->bwd.batch = batch;
		return true;
	}
	if (!layer_is_conv_dense(&l->s))
		return false;
	*out = (struct xo_layer_gemm){
	    .op = layer_conv_dense_op(&l->s),
	    .fwd = layer_params(m, i, false),
	    .bwd = layer_params(m, i, true),
	    .has_grad = l->has_grad,
	    .need_dx = l->need_dx,
	    .rows = l->s.out_len * l->s.out_w,
	    .k = l->s.w_count / l->s.out_ch,
	    .n = l->s.out_ch,
	};
	out->k_dw = out->k_dx = out->k;
	out->fwd.batch = out->bwd.batch = batch;
	if (act_separate(&l->s))
		out->fwd.activation = out->bwd.activation = XO_ACTIVATION_LINEAR;
	if (i == m->nlayers - 1 && m->compile.loss == XO_LOSS_CATEGORICAL_CROSSENTROPY)
		out->bwd.activation = XO_ACTIVATION_LINEAR;
	return true;
}

void xo_model_layer_cost(const struct xo_model *m, int i, struct xo_layer_cost *out)
{
	const struct layer *l;
	double in, outb, w;

	XO_ASSERT(m && out && i >= 0 && i < m->nlayers);
	l = &m->layers[i];
	in = 4.0 * (double)(l->s.in_len * l->s.in_w * l->s.in_ch);
	outb = 4.0 * (double)(l->s.out_len * l->s.out_w * l->s.out_ch);
	w = 4.0 * (double)(l->s.w_count + l->s.b_count);
	*out = (struct xo_layer_cost){.params = xo_layer_total(&l->s)};
	switch (l->s.kind) {
	case XO_LAYER_CONV1D:
	case XO_LAYER_CONV2D:
	case XO_LAYER_DENSE: {
		/* every output element is one dot product of w_count / out_ch
		 * terms: out_len * out_w * w_count multiply-adds per sample
		 * (conv2d: kh * kw * in_ch terms for each of its out_h * out_w
		 * * filters outputs) */
		double macs = (double)l->s.out_len * (double)l->s.out_w * (double)l->s.w_count;

		out->flops_fwd = 2 * macs;
		out->act_bytes_fwd = in + outb;
		out->w_bytes_fwd = w;
		out->ops_train_fwd = out->ops_predict = 1;
		if (l->has_grad) {
			/* dW always, dX unless first: reads x, y (activation
			 * derivative), dy; writes dx; reads w for dX, writes dW, db */
			out->flops_bwd = 2 * macs * (l->need_dx ? 2 : 1);
			out->act_bytes_bwd = in + 2 * outb + (l->need_dx ? in : 0);
			out->w_bytes_bwd = w + (l->need_dx ? 4.0 * (double)l->s.w_count : 0);
			out->ops_bwd = 1;
		}
		if (act_separate(&l->s)) { /* the activation's op: z in, y out */
			out->act_bytes_fwd += 2 * outb;
			out->ops_train_fwd = out->ops_predict = 2;
			if (l->has_grad) { /* reads z or y and dy, writes dz */
				out->act_bytes_bwd += 3 * outb;
				out->ops_bwd = 2;
			}
		}
		break;
	}
	case XO_LAYER_ACTIVATION:
		if (layer_is_view(&l->s))
			break; /* linear: a view, as flatten */
		out->act_bytes_fwd = in + outb;
		out->ops_train_fwd = out->ops_predict = 1;
		if (l->need_dx) { /* reads x or y and dy, writes dx */
			out->act_bytes_bwd = in + 2 * outb;
			out->ops_bwd = 1;
		}
		break;
	case XO_LAYER_MAX_POOLING1D:
	case XO_LAYER_GLOBAL_MAX_POOLING1D:
	case XO_LAYER_MAX_POOLING2D:
	case XO_LAYER_GLOBAL_MAX_POOLING2D:
		out->act_bytes_fwd = in + outb;
		out->ops_train_fwd = out->ops_predict = 1;
		if (l->need_dx) { /* reads x (argmax again) and dy, writes dx */
			out->act_bytes_bwd = 2 * in + outb;
			out->ops_bwd = 1;
		}
		break;
	case XO_LAYER_AVERAGE_POOLING1D:
	case XO_LAYER_GLOBAL_AVERAGE_POOLING1D:
	case XO_LAYER_AVERAGE_POOLING2D:
	case XO_LAYER_GLOBAL_AVERAGE_POOLING2D:
		out->act_bytes_fwd = in + outb;
		out->ops_train_fwd = out->ops_predict = 1;
		if (l->need_dx) { /* reads dy, writes dx */
			out->act_bytes_bwd = in + outb;
			out->ops_bwd = 1;
		}
		break;
	case XO_LAYER_DROPOUT: /* training only: the identity at inference */
		out->act_bytes_fwd = in + outb;
		out->ops_train_fwd = 1;
		if (l->need_dx) {
			out->act_bytes_bwd = in + outb;
			out->ops_bwd = 1;
		}
		break;
	case XO_LAYER_BATCH_NORMALIZATION:
		/* fwd: x read twice for the statistics in training, once more
		 * for y; bwd: x and dy read twice, dx written */
		out->act_bytes_fwd = 3 * in + outb;
		out->w_bytes_fwd = w;
		out->flops_fwd = 8.0 * (double)(l->s.in_len * l->s.in_w * l->s.in_ch);
		out->ops_train_fwd = out->ops_predict = 1;
		if (l->has_grad) {
			out->act_bytes_bwd = 4 * in + 2 * outb + (l->need_dx ? in : 0);
			out->w_bytes_bwd = w;
			out->flops_bwd = 12.0 * (double)(l->s.in_len * l->s.in_w * l->s.in_ch);
			out->ops_bwd = 1;
		}
		break;
	case XO_LAYER_EMBEDDING:
		/* fwd: T ids read, T table rows read, [T][dim] written; bwd
		 * (the table trainable): ids and dy read, the table's
		 * gradient written whole (unused rows are zeros) */
		out->act_bytes_fwd = in + outb;
		out->w_bytes_fwd = outb; /* the rows read */
		out->ops_train_fwd = out->ops_predict = 1;
		if (l->has_grad) {
			out->flops_bwd = (double)(l->s.out_len * l->s.out_ch); /* one add each */
			out->act_bytes_bwd = in + outb;
			out->w_bytes_bwd = w;
			out->ops_bwd = 1;
		}
		break;
	case XO_LAYER_SIMPLE_RNN:
	case XO_LAYER_LSTM:
	case XO_LAYER_GRU: {
		/* per step: the input projection (in_ch x g*u) and the
		 * recurrent one (u x g*u) as multiply-adds; the workspace
		 * (T * S * u) written by the training form's forward and read
		 * backward (the inference form, predict's, writes none) */
		double macs = (double)l->s.in_len * (double)(l->s.w_count + l->s.rk_count);
		double wsb = 4.0 * (double)l->ws_per;

		out->flops_fwd = 2 * macs;
		out->act_bytes_fwd = in + outb;
		out->ws_bytes = l->has_grad ? wsb : 0;
		out->w_bytes_fwd = w + 4.0 * (double)l->s.rk_count;
		out->ops_train_fwd = out->ops_predict = 1;
		if (l->has_grad) {
			/* dW, dU always (and dx unless first): 2 or 3 products */
			out->flops_bwd = 2 * macs * (l->need_dx ? 2 : 1) + 2 * macs;
			out->act_bytes_bwd = in + outb + wsb + (l->need_dx ? in : 0);
			out->w_bytes_bwd = 2 * (w + 4.0 * (double)l->s.rk_count);
			out->ops_bwd = 1;
		}
		/* the steps run in series (h_t needs h_{t-1}): one step of one
		 * sample is x_t W + h' U forward; back through time dh' = dz
		 * U^T, and dx_t = dz W^T unless first (the weight gradients
		 * are summed over samples and steps apart, in parallel) */
		out->recurrent = l->s.kind == XO_LAYER_LSTM  ? "LSTM"
		                 : l->s.kind == XO_LAYER_GRU ? "GRU"
		                                             : "SimpleRNN";
		out->rnn_op = xo_layer_rnn_op(l->s.kind);
		out->units = l->s.p.units;
		out->steps = l->s.in_len;
		out->step_macs_fwd = (double)(l->s.w_count + l->s.rk_count);
		if (l->has_grad)
			out->step_macs_bwd =
			    (double)l->s.rk_count + (l->need_dx ? (double)l->s.w_count : 0);
		break;
	}
	case XO_LAYER_FLATTEN: /* a view: no op, no bytes */
		break;
	}
}

/* ---- weights --------------------------------------------------------------- */

/* Zeroes Adam's state: a fresh optimizer. */
static enum xo_status optimizer_reset(struct xo_model *m)
{
	enum xo_status st;
	float *zero;

	m->iteration = 0;
	if (!m->nparams)
		return XO_OK;
	zero = calloc((size_t)m->nparams, sizeof(*zero));
	if (!zero)
		return xo_error(XO_ENOMEM, "model: out of memory");
	st = xo_tensor_write(m->adam_m, zero, 0, m->nparams);
	if (!st)
		st = xo_tensor_write(m->adam_v, zero, 0, m->nparams);
	free(zero);
	return st;
}

enum xo_status xo_model_init(struct xo_model *m, uint64_t seed)
{
	enum xo_status st;
	float *w;

	if (!m)
		return xo_error(XO_EINVAL, "xo_model_init: NULL model");
	m->seed = seed;
	if (!m->nparams)
		return optimizer_reset(m);
	w = calloc((size_t)m->nparams, sizeof(*w));
	if (!w)
		return xo_error(XO_ENOMEM, "model: out of memory");
	for (int i = 0; i < m->nlayers; i++) {
		const struct layer *l = &m->layers[i];
		double fan_in, fan_out, limit;

		if (!l->s.w_ndim)
			continue;
		if (l->s.kind == XO_LAYER_EMBEDDING) {
			/* Keras Embedding: embeddings_initializer "uniform",
			 * RandomUniform(-0.05, 0.05) */
			for (int64_t e = 0; e < l->s.w_count; e++)
				w[l->w_off + e] = (float)((2.0 * xo_philox_uniform(seed, XO_STREAM_INIT,
				                                                    (uint32_t)i,
				                                                    (uint64_t)e) -
				                           1.0) *
				                          0.05);
			continue;
		}
		if (l->s.rk_count) {
			/* recurrent layers: kernel glorot-uniform over (in_ch,
			 * g*u) as Keras; recurrent_kernel glorot-uniform over (u,
			 * g*u) (Keras draws an orthogonal matrix: not matched, a
			 * trained or loaded model does not depend on it); LSTM's
			 * forget-gate bias 1 (unit_forget_bias=True) */
			double lk = sqrt(6.0 / (double)(l->s.w_dim[0] + l->s.w_dim[1]));
			double lr = sqrt(6.0 / (double)(l->s.p.units + l->s.w_dim[1]));

			for (int64_t e = 0; e < l->s.w_count + l->s.rk_count; e++) {
				double u = xo_philox_uniform(seed, XO_STREAM_INIT, (uint32_t)i,
				                             (uint64_t)e);

				w[l->w_off + e] =
				    (float)((2.0 * u - 1.0) * (e < l->s.w_count ? lk : lr));
			}
			if (l->s.kind == XO_LAYER_LSTM && l->s.b_count)
				for (int64_t e = 0; e < l->s.p.units; e++)
					w[l->b_off + l->s.p.units + e] = 1.0f;
			continue;
		}
		/* Keras's fans (initializers compute_fans): the receptive
		 * field is the product of the kernel's leading axes (conv1d
		 * [k][cin][cout]: k; conv2d [kh][kw][cin][cout]: kh * kw;
		 * dense [in][out]: 1), fan_in = cin * rf, fan_out = cout * rf */
		{
			double rf = 1.0;

			for (int d = 0; d < l->s.w_ndim - 2; d++)
				rf *= (double)l->s.w_dim[d];
			fan_in = (double)l->s.w_dim[l->s.w_ndim - 2] * rf;
			fan_out = (double)l->s.w_dim[l->s.w_ndim - 1] * rf;
		}
		limit = sqrt(6.0 / (fan_in + fan_out));
		for (int64_t e = 0; e < l->s.w_count; e++) {
			double u =
			    xo_philox_uniform(seed, XO_STREAM_INIT, (uint32_t)i, (uint64_t)e);

			w[l->w_off + e] = (float)((2.0 * u - 1.0) * limit);
		}
		/* Biases stay zero. */
	}
	for (int i = 0; i < m->nlayers; i++) {
		const struct layer *l = &m->layers[i];

		/* Keras: gamma ones, beta zeros, moving_mean zeros,
		 * moving_variance ones */
		if (l->s.kind != XO_LAYER_BATCH_NORMALIZATION)
			continue;
		for (int64_t e = 0; e < l->s.gamma_count; e++)
			w[l->g_off + e] = 1.0f;
		for (int64_t e = 0; e < l->s.in_ch; e++)
			w[l->mv_off + e] = 1.0f;
	}
	st = xo_tensor_write(m->params, w, 0, m->nparams);
	free(w);
	if (st)
		return st;
	return optimizer_reset(m);
}

/* Reads <dir>/<layer>.<what>.npy into data. */
static enum xo_status weight_file_read(const char *dir, const char *layer, const char *what,
                                       int ndim, const int64_t *dims, float *data)
{
	char path[4096];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s.%s.npy", dir, layer, what) >= sizeof(path))
		return xo_error(XO_EINVAL, "%s: path too long", dir);
	return xo_npy_read_shaped(path, ndim, dims, data);
}

/* Adds <layer>.<what>.npy to a checkpoint being written. */
static enum xo_status weight_file_add(struct xo_ckpt_writer *w, const char *layer, const char *what,
                                      int ndim, const int64_t *dims, const float *data)
{
	char name[256];

	if ((size_t)snprintf(name, sizeof(name), "%s.%s.npy", layer, what) >= sizeof(name))
		return xo_error(XO_EINVAL, "%s: layer name too long", layer);
	return xo_ckpt_add(w, name, ndim, dims, data);
}

/* Every layer's kernel and bias files in dir: read into the parameters
 * (save false) or written from them as one checkpoint, through a host copy.
 * Weights that are NaN or Inf are never written: a diverged model must not
 * replace a good checkpoint. */
static enum xo_status weight_files(struct xo_model *m, const char *dir, bool save)
{
	/* a model without weights (pooling, flatten) has no params tensor */
	float *w = malloc((size_t)(m->nparams ? m->nparams : 1) * sizeof(*w));
	struct xo_ckpt_writer cw = {0};
	enum xo_status st = XO_OK;

	if (!w)
		return xo_error(XO_ENOMEM, "model: out of memory");
	if (save) {
		st = m->nparams ? xo_tensor_read(m->params, w, 0, m->nparams) : XO_OK;
		for (int64_t i = 0; !st && i < m->nparams; i++)
			if (!isfinite(w[i]))
				st = xo_error(XO_EINVAL,
				              "%s: not saved: weight %" PRId64 " is %s (training "
				              "diverged); the directory is left as it was",
				              dir, i, isnan(w[i]) ? "NaN" : "Inf");
		if (!st)
			st = xo_ckpt_begin(&cw, dir);
	}
	for (int i = 0; !st && i < m->nlayers; i++) {
		struct xo_layer_var v[XO_LAYER_VARS_MAX];
		int nv = xo_model_layer_vars(m, i, v);

		/* <layer>.<variable>.npy with Keras's variable names: kernel,
		 * bias; gamma, beta, moving_mean, moving_variance */
		for (int k = 0; !st && k < nv; k++) {
			if (save)
				st = weight_file_add(&cw, m->layers[i].s.name, v[k].name, v[k].ndim,
				                     v[k].dim, w + v[k].off);
			else
				st = weight_file_read(dir, m->layers[i].s.name, v[k].name,
				                      v[k].ndim, v[k].dim, w + v[k].off);
		}
	}
	if (save) {
		if (!st)
			st = xo_ckpt_commit(&cw, m->iteration);
		else
			xo_ckpt_abort(&cw);
	}
	if (!st && !save && m->nparams)
		st = xo_tensor_write(m->params, w, 0, m->nparams);
	free(w);
	return st;
}

enum xo_status xo_model_load_weights(struct xo_model *m, const char *dir)
{
	enum xo_status st;
	struct stat sb;

	if (!m || !dir)
		return xo_error(XO_EINVAL, "xo_model_load_weights: NULL argument");
	/* A file: Keras weights (.weights.h5, legacy .h5, or a whole .keras). */
	if (!stat(dir, &sb) && S_ISREG(sb.st_mode)) {
		if (xo_keras_sniff(dir) == XO_KERAS_NONE)
			return xo_error(XO_EFORMAT,
			                "%s: not a weights directory, HDF5 (.h5) or .keras file",
			                dir);
		return xo_keras_load_weights(m, dir);
	}
	if (stat(dir, &sb) || !S_ISDIR(sb.st_mode))
		return xo_error(XO_EIO, "%s: not a weights directory", dir);
	st = xo_checkpoint_verify(dir);
	if (st)
		return st;
	if (!m->nparams)
		return XO_OK;
	st = weight_files(m, dir, false);
	/* Loaded weights start a fresh optimizer (as `xo train --weights`). */
	if (!st)
		st = optimizer_reset(m);
	return st;
}

const struct xo_layer_spec *xo_model_layer_spec(const struct xo_model *m, int i)
{
	return &m->layers[i].s;
}

int xo_model_layer_vars(const struct xo_model *m, int i, struct xo_layer_var out[XO_LAYER_VARS_MAX])
{
	const struct layer *l = &m->layers[i];
	int n = 0;

	if (l->s.kind == XO_LAYER_BATCH_NORMALIZATION) {
		/* Keras's order: gamma, beta, moving_mean, moving_variance */
		int64_t ch = l->s.in_ch;

		if (l->s.gamma_count)
			out[n++] = (struct xo_layer_var){.name = "gamma", .ndim = 1, .dim = {ch},
			                                 .off = l->g_off, .count = ch};
		if (l->s.beta_count)
			out[n++] = (struct xo_layer_var){.name = "beta", .ndim = 1, .dim = {ch},
			                                 .off = l->beta_off, .count = ch};
		out[n++] = (struct xo_layer_var){.name = "moving_mean", .ndim = 1, .dim = {ch},
		                                 .off = l->mm_off, .count = ch};
		out[n++] = (struct xo_layer_var){.name = "moving_variance", .ndim = 1,
		                                 .dim = {ch}, .off = l->mv_off, .count = ch};
		return n;
	}
	if (!l->s.w_ndim)
		return 0;
	out[n] = (struct xo_layer_var){.name = l->s.kind == XO_LAYER_EMBEDDING ? "embeddings"
	                                                                       : "kernel",
	                               .ndim = l->s.w_ndim,
	                               .off = l->w_off, .count = l->s.w_count};
	memcpy(out[n].dim, l->s.w_dim, sizeof(out[n].dim));
	n++;
	if (l->s.rk_count)
		out[n++] = (struct xo_layer_var){.name = "recurrent_kernel", .ndim = 2,
		                                 .dim = {l->s.p.units, l->s.rk_count / l->s.p.units},
		                                 .off = l->rk_off, .count = l->s.rk_count};
	if (l->s.b_count && l->s.kind == XO_LAYER_GRU && l->s.p.reset_after) {
		out[n++] = (struct xo_layer_var){.name = "bias", .ndim = 2,
		                                 .dim = {2, l->s.b_count / 2},
		                                 .off = l->b_off, .count = l->s.b_count};
		return n;
	}
	if (l->s.b_count)
		out[n++] = (struct xo_layer_var){.name = "bias", .ndim = 1,
		                                 .dim = {l->s.b_count},
		                                 .off = l->b_off, .count = l->s.b_count};
	return n;
}

enum xo_status xo_model_params_host(struct xo_model *m, float *w, bool write)
{
	enum xo_status st;

	if (!m->nparams)
		return XO_OK;
	if (!write)
		return xo_tensor_read(m->params, w, 0, m->nparams);
	st = xo_tensor_write(m->params, w, 0, m->nparams);
	return st ? st : optimizer_reset(m);
}

enum xo_status xo_model_save_weights(struct xo_model *m, const char *dir)
{
	if (!m || !dir)
		return xo_error(XO_EINVAL, "xo_model_save_weights: NULL argument");
	/* A Keras file by its suffix (keras.c), else a .npy directory. */
	switch (xo_keras_save_kind(dir)) {
	case XO_SAVE_WEIGHTS_H5:
		return xo_keras_save(m, dir, false);
	case XO_SAVE_KERAS:
		return xo_keras_save(m, dir, true);
	case XO_SAVE_BAD:
		return xo_error(XO_EINVAL, "%s: xo writes .weights.h5 (Keras 3 save_weights) or "
		                           ".keras, not a legacy .h5", dir);
	case XO_SAVE_DIR:
		break;
	}
	return weight_files(m, dir, true);
}

/* ---- forward, backward, steps ---------------------------------------------- */

static struct xo_params layer_params(const struct xo_model *m, int i, bool training)
{
	const struct layer *l = &m->layers[i];
	struct xo_params p = l->s.p;

	p.batch = m->plan_n;
	/* 1-D and elementwise ops see a rank-3 sample as [len * w][ch]; the
	 * 2-D pooling ops see it as it is, [len][width][ch] */
	p.len = l->s.in_len * l->s.in_w;
	p.width = 1;
	if (layer_is_2d(&l->s)) {
		p.len = l->s.in_len;
		p.width = l->s.in_w;
	}
	p.ch = l->s.in_ch;
	if (l->s.kind == XO_LAYER_EMBEDDING) { /* ids [T] -> [T][output_dim] */
		p.len = l->s.in_ch;
		p.ch = l->s.out_ch;
	}
	p.training = training;
	p.seed = m->seed;
	p.step = (uint64_t)(m->iteration + 1); /* the step being taken, from 1 */
	p.layer = (uint32_t)i;
	return p;
}

/* The op of a pooling layer without a fused path. */
static enum xo_op layer_pool_op(enum xo_layer_kind k)
{
	switch (k) {
	case XO_LAYER_MAX_POOLING2D:
		return XO_OP_max_pooling2d;
	case XO_LAYER_AVERAGE_POOLING2D:
		return XO_OP_average_pooling2d;
	case XO_LAYER_GLOBAL_AVERAGE_POOLING2D:
		return XO_OP_global_average_pooling2d;
	case XO_LAYER_GLOBAL_MAX_POOLING2D:
		return XO_OP_global_max_pooling2d;
	case XO_LAYER_AVERAGE_POOLING1D:
		return XO_OP_average_pooling1d;
	case XO_LAYER_GLOBAL_AVERAGE_POOLING1D:
		return XO_OP_global_average_pooling1d;
	case XO_LAYER_GLOBAL_MAX_POOLING1D:
		return XO_OP_global_max_pooling1d;
	default:
		break;
	}
	XO_ASSERT(!"layer_pool_op: not such a pooling layer");
	return XO_OP_COUNT;
}

static enum xo_status forward(struct xo_model *m, bool training)
{
	enum xo_status st = XO_OK;

	for (int i = 0; !st && i < m->nlayers; i++) {
		struct layer *l = &m->layers[i];
		struct xo_op_args a = {.p = layer_params(m, i, training)};

		switch (l->s.kind) {
		case XO_LAYER_CONV1D:
		case XO_LAYER_CONV2D:
		case XO_LAYER_DENSE:
			a.src[0] = l->in;
			a.src[1] = l->w;
			a.src[2] = l->b;
			a.dst[0] = act_separate(&l->s) ? l->z : l->out;
			if (act_separate(&l->s))
				a.p.activation = XO_ACTIVATION_LINEAR;
			st = run_op(m, i, layer_conv_dense_op(&l->s), XO_DIR_FWD, &a);
			if (st || !act_separate(&l->s))
				break;
			/* the activation op sees the output as [out_h * out_w][ch] */
			a = (struct xo_op_args){.p = layer_params(m, i, training)};
			a.p.len = l->s.out_len * l->s.out_w;
			a.p.width = 1;
			a.p.ch = l->s.out_ch;
			a.src[0] = l->z;
			a.dst[0] = l->out;
			st = run_op(m, i, act_op(l->s.p.activation), XO_DIR_FWD, &a);
			break;
		case XO_LAYER_ACTIVATION:
			if (layer_is_view(&l->s))
				break;
			a.src[0] = l->in;
			a.dst[0] = l->out;
			st = run_op(m, i, act_op(l->s.p.activation), XO_DIR_FWD, &a);
			break;
		case XO_LAYER_MAX_POOLING1D:
			a.src[0] = l->in;
			a.dst[0] = l->out;
			st = run_op(m, i, XO_OP_max_pooling1d, XO_DIR_FWD, &a);
			break;
		case XO_LAYER_AVERAGE_POOLING1D:
		case XO_LAYER_GLOBAL_AVERAGE_POOLING1D:
		case XO_LAYER_GLOBAL_MAX_POOLING1D:
		case XO_LAYER_MAX_POOLING2D:
		case XO_LAYER_AVERAGE_POOLING2D:
		case XO_LAYER_GLOBAL_AVERAGE_POOLING2D:
		case XO_LAYER_GLOBAL_MAX_POOLING2D:
			a.src[0] = l->in;
			a.dst[0] = l->out;
			st = run_op(m, i, layer_pool_op(l->s.kind), XO_DIR_FWD, &a);
			break;
		case XO_LAYER_DROPOUT:
			if (!training)
				break;
			a.src[0] = l->in;
			a.dst[0] = l->out;
			st = run_op(m, i, XO_OP_dropout, XO_DIR_FWD, &a);
			break;
		case XO_LAYER_BATCH_NORMALIZATION:
			/* training: batch statistics, and the moving statistics
			 * updated in place; inference: the moving statistics */
			a.src[0] = l->in;
			a.src[1] = l->gamma;
			a.src[2] = l->beta;
			a.dst[0] = l->out;
			a.dst[1] = l->mm;
			a.dst[2] = l->mv;
			st = run_op(m, i, XO_OP_batch_normalization, XO_DIR_FWD, &a);
			break;
		case XO_LAYER_EMBEDDING:
			a.src[0] = l->in;
			a.src[1] = l->w;
			a.dst[0] = l->out;
			st = run_op(m, i, XO_OP_embedding, XO_DIR_FWD, &a);
			break;
		case XO_LAYER_SIMPLE_RNN:
		case XO_LAYER_LSTM:
		case XO_LAYER_GRU:
			a.src[0] = l->in;
			a.src[1] = l->w;
			a.src[2] = l->rk;
			a.src[3] = l->b;
			a.dst[0] = l->out;
			/* NULL unless a backward follows (plan_build): the
			 * inference form (ops.def) */
			a.dst[1] = l->ws;
			st = run_op(m, i, xo_layer_rnn_op(l->s.kind), XO_DIR_FWD, &a);
			break;
		case XO_LAYER_FLATTEN:
			break;
		}
	}
	return st;
}

static enum xo_status backward(struct xo_model *m)
{
	enum xo_status st = XO_OK;

	for (int i = m->nlayers - 1; !st && i >= 0 && m->layers[i].has_grad; i--) {
		struct layer *l = &m->layers[i];
		struct xo_op_args a = {.p = layer_params(m, i, true)};

		switch (l->s.kind) {
		case XO_LAYER_CONV1D:
		case XO_LAYER_CONV2D:
		case XO_LAYER_DENSE:
			/* The last layer's gout is already w.r.t. the softmax's
			 * input (fused CE gradient): differentiate it as linear. */
			if (i == m->nlayers - 1 &&
			    m->compile.loss == XO_LOSS_CATEGORICAL_CROSSENTROPY)
				a.p.activation = XO_ACTIVATION_LINEAR;
			if (act_separate(&l->s)) {
				/* the activation's op first: gz = d loss / d z */
				struct xo_op_args b = {.p = layer_params(m, i, true)};

				b.p.len = l->s.out_len * l->s.out_w;
				b.p.width = 1;
				b.p.ch = l->s.out_ch;
				b.src[0] = act_bwd_from_x(l->s.p.activation) ? l->z : l->out;
				b.src[1] = l->gout;
				b.dst[0] = l->gz;
				st = run_op(m, i, act_op(l->s.p.activation), XO_DIR_BWD, &b);
				if (st)
					break;
				a.p.activation = XO_ACTIVATION_LINEAR;
			}
			a.src[0] = l->in;
			a.src[1] = l->w;
			a.src[2] = act_separate(&l->s) ? l->z : l->out;
			a.src[3] = act_separate(&l->s) ? l->gz : l->gout;
			a.dst[0] = l->gin;
			a.dst[1] = l->dw;
			a.dst[2] = l->db;
			st = run_op(m, i, layer_conv_dense_op(&l->s), XO_DIR_BWD, &a);
			break;
		case XO_LAYER_MAX_POOLING1D:
			if (!l->need_dx)
				break;
			a.src[0] = l->in;
			a.src[1] = l->gout;
			a.dst[0] = l->gin;
			st = run_op(m, i, XO_OP_max_pooling1d, XO_DIR_BWD, &a);
			break;
		case XO_LAYER_GLOBAL_MAX_POOLING1D:
		case XO_LAYER_MAX_POOLING2D:
		case XO_LAYER_GLOBAL_MAX_POOLING2D:
			if (!l->need_dx)
				break;
			a.src[0] = l->in;
			a.src[1] = l->gout;
			a.dst[0] = l->gin;
			st = run_op(m, i, layer_pool_op(l->s.kind), XO_DIR_BWD, &a);
			break;
		case XO_LAYER_AVERAGE_POOLING1D:
		case XO_LAYER_GLOBAL_AVERAGE_POOLING1D:
		case XO_LAYER_AVERAGE_POOLING2D:
		case XO_LAYER_GLOBAL_AVERAGE_POOLING2D:
			if (!l->need_dx)
				break;
			a.src[0] = l->gout;
			a.dst[0] = l->gin;
			st = run_op(m, i, layer_pool_op(l->s.kind), XO_DIR_BWD, &a);
			break;
		case XO_LAYER_DROPOUT:
			if (!l->need_dx)
				break;
			a.src[0] = l->gout;
			a.dst[0] = l->gin;
			st = run_op(m, i, XO_OP_dropout, XO_DIR_BWD, &a);
			break;
		case XO_LAYER_ACTIVATION:
			if (!l->need_dx || layer_is_view(&l->s))
				break; /* linear: gout is a view, as flatten's */
			a.src[0] = act_bwd_from_x(l->s.p.activation) ? l->in : l->out;
			a.src[1] = l->gout;
			a.dst[0] = l->gin;
			st = run_op(m, i, act_op(l->s.p.activation), XO_DIR_BWD, &a);
			break;
		case XO_LAYER_BATCH_NORMALIZATION:
			if (!l->need_dx && !l->gamma && !l->beta)
				break;
			a.src[0] = l->in;
			a.src[1] = l->gamma;
			a.src[2] = l->gout;
			a.dst[0] = l->gin;
			a.dst[1] = l->dgamma;
			a.dst[2] = l->dbeta;
			st = run_op(m, i, XO_OP_batch_normalization, XO_DIR_BWD, &a);
			break;
		case XO_LAYER_SIMPLE_RNN: /* back through time from the workspace */
		case XO_LAYER_LSTM:
		case XO_LAYER_GRU:
			a.src[0] = l->in;
			a.src[1] = l->w;
			a.src[2] = l->rk;
			a.src[3] = l->ws;
			a.src[4] = l->gout;
			a.dst[0] = l->gin;
			a.dst[1] = l->dw;
			a.dst[2] = l->drk;
			a.dst[3] = l->db;
			st = run_op(m, i, xo_layer_rnn_op(l->s.kind), XO_DIR_BWD, &a);
			break;
		case XO_LAYER_EMBEDDING: /* the first layer: no dx (ids) */
			a.src[0] = l->in;
			a.src[1] = l->gout;
			a.dst[0] = l->dw;
			st = run_op(m, i, XO_OP_embedding, XO_DIR_BWD, &a);
			break;
		case XO_LAYER_FLATTEN:
			break; /* gout is a view of the previous layer's gout */
		}
	}
	return st;
}

/* The loss op of the compile. */
static enum xo_op loss_op(const struct xo_model *m)
{
	switch (m->compile.loss) {
	case XO_LOSS_CATEGORICAL_CROSSENTROPY:
		break;
	case XO_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY:
		return XO_OP_sparse_categorical_crossentropy;
	case XO_LOSS_BINARY_CROSSENTROPY:
		return XO_OP_binary_crossentropy;
	case XO_LOSS_MEAN_SQUARED_ERROR:
		return XO_OP_mean_squared_error;
	}
	return XO_OP_categorical_crossentropy;
}

/* Loss (into loss[1]) and, with a metric, the correct count (into
 * correct[1]; binary_accuracy counts elements) of the current batch against
 * the labels t (y_in, or the batch's view of fit's sparse ids). */
static enum xo_status metrics(struct xo_model *m, const struct xo_tensor *t,
                              struct xo_tensor *loss, struct xo_tensor *correct)
{
	struct layer *last = &m->layers[m->nlayers - 1];
	struct xo_op_args a = {.p = xo_params_default()};
	enum xo_status st;

	a.p.batch = m->plan_n;
	a.p.ch = m->classes;
	a.src[0] = last->out;
	a.src[1] = t;
	a.dst[0] = loss;
	st = run_op(m, -1, loss_op(m), XO_DIR_FWD, &a);
	if (st || m->metric_op == XO_OP_COUNT)
		return st;
	if (m->metric_op == XO_OP_accuracy) {
		a.dst[0] = m->idx_v;
		a.dst[1] = correct;
	} else {
		a.dst[0] = correct;
	}
	return run_op(m, -1, m->metric_op, XO_DIR_FWD, &a);
}

/* One training step on the batch in x_in against labels t: forward, loss and
 * metric, backward, the optimizer over every trainable parameter at once. */
static enum xo_status train_step(struct xo_model *m, const struct xo_tensor *t,
                                 struct xo_tensor *loss, struct xo_tensor *correct)
{
	struct layer *last = &m->layers[m->nlayers - 1];
	struct xo_op_args a = {.p = xo_params_default()};
	enum xo_status st;
	enum xo_op op;

	st = forward(m, true);
	if (!st)
		st = metrics(m, t, loss, correct);
	if (st)
		return st;
	a.p.batch = m->plan_n;
	a.p.ch = m->classes;
	a.src[0] = last->out;
	a.src[1] = t;
	a.dst[0] = last->gout;
	st = run_op(m, -1, loss_op(m), XO_DIR_BWD, &a);
	if (!st)
		st = backward(m);
	if (st)
		return st;
	a = (struct xo_op_args){.p = m->compile.opt};
	a.p.size = m->ntrain; /* the trainable head: moving statistics untouched */
	a.p.iteration = m->iteration + 1;
	a.src[0] = m->tr_grads;
	a.dst[0] = m->tr_params;
	switch (m->compile.optimizer) {
	case XO_OPTIMIZER_SGD: /* dst {w, momentum} */
		op = XO_OP_sgd;
		a.dst[1] = m->tr_m;
		break;
	case XO_OPTIMIZER_RMSPROP: /* dst {w, rms, momentum} */
		op = XO_OP_rmsprop;
		a.dst[1] = m->tr_v;
		a.dst[2] = m->tr_m;
		break;
	case XO_OPTIMIZER_ADAM:
	default:
		op = XO_OP_adam;
		a.dst[1] = m->tr_m;
		a.dst[2] = m->tr_v;
		break;
	}
	if (m->ntrain)
		st = run_op(m, -1, op, XO_DIR_FWD, &a);
	if (!st)
		m->iteration++;
	return st;
}

static enum xo_status check_trainable(const struct xo_model *m, const char *what)
{
	const struct layer *last = &m->layers[m->nlayers - 1];

	/* Only categorical_crossentropy is fused with its softmax; the other
	 * losses differentiate through whatever the last layer is. */
	if (m->compile.loss == XO_LOSS_CATEGORICAL_CROSSENTROPY &&
	    (last->s.kind != XO_LAYER_DENSE || last->s.p.activation != XO_ACTIVATION_SOFTMAX))
		return xo_error(XO_EINVAL,
		                "%s: the last layer must be dense with activation=softmax "
		                "(loss categorical_crossentropy)",
		                what);
	return XO_OK;
}

/* Picks rows index[0..n) of data [rows][ch] into dst [n][ch] on the device. */
static enum xo_status gather(struct xo_model *m, const struct xo_tensor *data,
                             const struct xo_tensor *index, struct xo_tensor *dst)
{
	struct xo_op_args a = {.p = xo_params_default()};

	a.p.batch = m->plan_n;
	a.p.rows = xo_tensor_dim(data, 0);
	a.p.ch = xo_tensor_dim(data, 1);
	a.src[0] = data;
	a.src[1] = index;
	a.dst[0] = dst;
	return run_op(m, -1, XO_OP_gather, XO_DIR_FWD, &a);
}

/* ---- fused whole-network path ----------------------------------------------- */

/*
 * Describes the current plan (batch m->plan_n, its mode) as a struct xo_net
 * over input rows x (through index when set) and labels t (NULL: no
 * metrics, loss and correct unused), complete before net_fits sees it.
 * Returns whether the backend's fused path runs it; when not, the caller
 * runs op by op.
 */
static bool net_describe(struct xo_model *m, bool training, const struct xo_tensor *x,
                         const struct xo_tensor *index, const struct xo_tensor *t,
                         struct xo_tensor *loss, struct xo_tensor *correct, struct xo_net *net)
{
	const struct xo_backend_iface *ifc = m->be->iface;
	struct layer *last = &m->layers[m->nlayers - 1];

	if (!m->fuse || m->profiling || !ifc->net_fits ||
	    !(training ? ifc->net_train_step : ifc->net_forward))
		return false;
	for (int i = 0; i < m->nlayers; i++)
		m->net_layers[i].p = layer_params(m, i, training);
	*net = (struct xo_net){
	    .nlayers = m->nlayers,
	    .layers = m->net_layers,
	    .n = m->plan_n,
	    .in_size = m->in_size,
	    .classes = m->classes,
	    .training = training,
	    .x = x,
	    .index = index,
	    .t = t,
	    .probs = last->out,
	    .loss = t ? loss : NULL,
	    .correct = t ? correct : NULL,
	    .params = m->params,
	    .grads = m->grads,
	    .adam_m = m->adam_m,
	    .adam_v = m->adam_v,
	    .adam = xo_params_default(),
	};
	net->adam = m->compile.opt; /* Adam's lr, beta_1, beta_2, epsilon */
	net->adam.size = m->ntrain; /* == nparams: no fused path runs batch_normalization */
	net->adam.iteration = m->iteration + 1;
	/* The fused paths compute categorical_crossentropy, Adam and the
	 * categorical accuracy only (their net_fits refuse anything else). */
	net->unfused_compile = m->compile.loss != XO_LOSS_CATEGORICAL_CROSSENTROPY ||
	                       m->compile.optimizer != XO_OPTIMIZER_ADAM ||
	                       (m->metric_op != XO_OP_accuracy && m->metric_op != XO_OP_COUNT);
	if (!m->fits.valid || m->fits.n != net->n || m->fits.training != training ||
	    m->fits.x != x || m->fits.x_elems != x->nelem || m->fits.index != !!index ||
	    m->fits.t != !!t) {
		m->fits.valid = true;
		m->fits.n = net->n;
		m->fits.training = training;
		m->fits.x = x;
		m->fits.x_elems = x->nelem;
		m->fits.index = index;
		m->fits.t = t;
		m->fits.fits = ifc->net_fits(m->be, net);
	}
	return m->fits.fits;
}

static enum xo_status fused_refused(const struct xo_model *m, bool training)
{
	return xo_error(XO_EBACKEND,
	                "XO_FUSE=require: backend %s does not run this model's %s batch of %lld "
	                "on its fused path",
	                xo_backend_name(m->be), training ? "training" : "inference",
	                (long long)m->plan_n);
}

/* Forward of the current plan (inference), with metrics into loss / correct
 * when t is set: fused when the backend runs the net, else op by op (x and
 * t then already in m->xb / m->yb, or gathered here through index). */
static enum xo_status infer(struct xo_model *m, const struct xo_tensor *x,
                            const struct xo_tensor *index, const struct xo_tensor *t,
                            struct xo_tensor *loss, struct xo_tensor *correct)
{
	struct xo_net net;
	enum xo_status st = XO_OK;

	if (net_describe(m, false, x, index, t, loss, correct, &net))
		return m->be->iface->net_forward(m->be, &net);
	if (m->fuse_required)
		return fused_refused(m, false);
	if (index) {
		st = gather(m, x, index, m->x_flat);
		if (!st && t && !sparse(m))
			st = gather(m, t, index, m->y_in);
	}
	if (!st)
		st = forward(m, false);
	if (!st && t)
		st = metrics(m, index && sparse(m) ? t : m->y_in, loss, correct);
	return st;
}

/* One training step of the current plan (training mode): fused when the
 * backend runs the net, else op by op as infer. */
static enum xo_status step(struct xo_model *m, const struct xo_tensor *x,
                           const struct xo_tensor *index, const struct xo_tensor *t,
                           struct xo_tensor *loss, struct xo_tensor *correct)
{
	struct xo_net net;
	enum xo_status st = XO_OK;

	if (net_describe(m, true, x, index, t, loss, correct, &net)) {
		st = m->be->iface->net_train_step(m->be, &net);
		if (!st)
			m->iteration++;
		return st;
	}
	if (m->fuse_required)
		return fused_refused(m, true);
	if (index) {
		st = gather(m, x, index, m->x_flat);
		if (!st && !sparse(m))
			st = gather(m, t, index, m->y_in);
	}
	/* fit's sparse ids are already in the epoch's order: t is the batch's
	 * view (the gather op moves float rows only) */
	if (!st)
		st = train_step(m, index && sparse(m) ? t : m->y_in, loss, correct);
	return st;
}

void xo_model_set_fused(struct xo_model *m, bool on)
{
	if (m)
		m->fuse = on;
}

bool xo_model_fused(struct xo_model *m, bool training)
{
	struct xo_net net;
	bool fits;

	if (!m || !m->cap || plan_build(m, 1, training))
		return false;
	fits = net_describe(m, training, m->x_flat, NULL, training ? m->y_in : NULL, m->sc_loss,
	                    m->sc_correct, &net);
	return fits;
}

/* ---- predict / evaluate ---------------------------------------------------- */

/* Blocks of the finiteness check: a constant trip count and no early exit
 * inside a block, so GCC's -O2 vectorizes the test. */
#define FINITE_BLOCK 1024

/* Nonzero when one of v[0..FINITE_BLOCK) is NaN or +-Inf: its exponent bits
 * all ones, the only case where (bits & 0x7f800000) + 0x00800000 carries
 * into bit 31 (the sign is masked off first). */
static uint32_t block_nonfinite(const float *v)
{
	uint32_t bad = 0;

	for (int k = 0; k < FINITE_BLOCK; k++) {
		uint32_t u;

		memcpy(&u, v + k, sizeof(u));
		bad |= (u & 0x7f800000u) + 0x00800000u;
	}
	return bad & 0x80000000u;
}

static bool any_nonfinite(const float *v, int64_t count)
{
	int64_t b = 0;

	for (; b + FINITE_BLOCK <= count; b += FINITE_BLOCK)
		if (block_nonfinite(v + b))
			return true;
	for (; b < count; b++)
		if (!isfinite(v[b]))
			return true;
	return false;
}

enum xo_status xo_data_check_finite(const float *v, int64_t n, int64_t per, const char *what)
{
	/* the fast test first (predict's 4000 x 64 inputs: 85 -> 20 us of CPU
	 * time on the calling thread, before any tile runs); the loop below
	 * only finds and names the first bad element */
	if (!any_nonfinite(v, n * per))
		return XO_OK;
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < per; j++) {
			float f = v[i * per + j];

			if (!isfinite(f))
				return xo_error(XO_EINVAL,
				                "%s: sample %" PRId64
				                " holds %s at element %" PRId64
				                " (inputs must be finite)",
				                what, i,
				                isnan(f) ? "NaN"
				                : f > 0  ? "+Inf"
				                         : "-Inf",
				                j);
		}
	return XO_OK;
}

enum xo_status xo_labels_check_one_hot(const float *y, int64_t n, int64_t classes, const char *what)
{
	for (int64_t i = 0; i < n; i++) {
		int64_t ones = 0;

		for (int64_t c = 0; c < classes; c++) {
			float f = y[i * classes + c];

			if (f == 1.0f) {
				ones++;
			} else if (f != 0.0f) {
				return xo_error(
				    XO_EINVAL,
				    "%s: label of sample %" PRId64 " is not one-hot: %g at "
				    "class %" PRId64 " (categorical_crossentropy needs one 1 "
				    "and zeros per row)",
				    what, i, (double)f, c);
			}
		}
		if (ones != 1)
			return xo_error(
			    XO_EINVAL,
			    "%s: label of sample %" PRId64 " is not one-hot: %" PRId64
			    " ones (categorical_crossentropy needs one 1 and zeros per row)",
			    what, i, ones);
	}
	return XO_OK;
}

const struct xo_compile *xo_model_compile(const struct xo_model *m)
{
	return &m->compile;
}

int64_t xo_model_label_width(const struct xo_model *m)
{
	return m->lw;
}

/*
 * Labels per loss. categorical: one-hot rows (xo_labels_check_one_hot).
 * sparse: one class id per sample, a whole number in 0..classes-1 (the
 * float holds it exactly: ids below 2^24). binary: values in [0, 1] (Keras
 * takes any; its binary_crossentropy is a cross-entropy only there, so a
 * value outside is bad data). mean_squared_error: any finite value.
 */
enum xo_status xo_model_check_labels(const struct xo_model *m, const float *y, int64_t n,
                                     const char *what)
{
	const char *loss = xo_loss_name(m->compile.loss);

	switch (m->compile.loss) {
	case XO_LOSS_CATEGORICAL_CROSSENTROPY:
		return xo_labels_check_one_hot(y, n, m->classes, what);
	case XO_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY:
		for (int64_t i = 0; i < n; i++)
			if (!(y[i] >= 0.0f && y[i] < (float)m->classes) || y[i] != floorf(y[i]))
				return xo_error(XO_EINVAL,
				                "%s: label %g of sample %" PRId64
				                " is not a class id in 0..%" PRId64 " (%s)",
				                what, (double)y[i], i, m->classes - 1, loss);
		return XO_OK;
	case XO_LOSS_BINARY_CROSSENTROPY:
	case XO_LOSS_MEAN_SQUARED_ERROR:
		for (int64_t i = 0; i < n; i++)
			for (int64_t j = 0; j < m->classes; j++) {
				float v = y[i * m->classes + j];
				bool ok = m->compile.loss == XO_LOSS_BINARY_CROSSENTROPY
				              ? v >= 0.0f && v <= 1.0f
				              : isfinite(v);

				if (!ok)
					return xo_error(XO_EINVAL,
					                "%s: label of sample %" PRId64
					                " holds %g at index %" PRId64 " (%s needs %s)",
					                what, i, (double)v, j, loss,
					                m->compile.loss == XO_LOSS_BINARY_CROSSENTROPY
					                    ? "values in [0, 1]"
					                    : "finite values");
			}
		return XO_OK;
	}
	return XO_OK;
}

/* Writes bs labels y[bs][lw] into the device tensor t at sample offset off:
 * float rows, or (sparse) the ids as i32. */
static enum xo_status labels_write(const struct xo_model *m, struct xo_tensor *t, const float *y,
                                   int64_t off, int64_t bs)
{
	int32_t *ids;
	enum xo_status st;

	if (!sparse(m))
		return xo_tensor_write(t, y, off * m->classes, bs * m->classes);
	ids = malloc(sizeof(*ids) * (size_t)(bs > 0 ? bs : 1));
	if (!ids)
		return xo_error(XO_ENOMEM, "model: out of memory");
	for (int64_t i = 0; i < bs; i++)
		ids[i] = (int32_t)y[i];
	st = xo_tensor_write(t, ids, off, bs);
	free(ids);
	return st;
}

int64_t xo_model_input_ids(const struct xo_model *m)
{
	return m->spec.in_int ? m->layers[0].s.p.rows : 0;
}

enum xo_status xo_model_input_npy(const struct xo_model *m, struct xo_npy *a, const char *path)
{
	int64_t vocab;
	float *f;

	if (!m->spec.in_int) {
		if (a->is_int)
			return xo_error(XO_EINVAL,
			                "%s: integer (%s) values for a float32 model input (only an "
			                "input of dtype=int32, an embedding's, takes ids)",
			                path, a->itemsize == 8 ? "int64" : "int32");
		return XO_OK;
	}
	if (!a->is_int)
		return xo_error(XO_EINVAL,
		                "%s: float values for the int32 ids of embedding '%s' (save the "
		                "ids as int32 or int64: np.asarray(x, dtype='int32'))",
		                path, m->layers[0].s.name);
	vocab = m->layers[0].s.p.rows;
	for (int64_t k = 0; k < a->count; k++)
		if (a->ints[k] < 0 || a->ints[k] >= vocab)
			return xo_error(XO_EINVAL,
			                "%s: id %" PRId64 " of sample %" PRId64 ", step %" PRId64
			                " is outside [0, input_dim=%" PRId64 ") of embedding '%s'",
			                path, a->ints[k], k / m->in_size, k % m->in_size, vocab,
			                m->layers[0].s.name);
	f = malloc(sizeof(*f) * (size_t)(a->count ? a->count : 1));
	if (!f)
		return xo_error(XO_ENOMEM, "%s: out of memory", path);
	for (int64_t k = 0; k < a->count; k++) /* below 2^24: exact */
		f[k] = (float)a->ints[k];
	free(a->ints);
	a->ints = NULL;
	a->data = f;
	a->is_int = false;
	a->itemsize = 4;
	return XO_OK;
}

/*
 * Writes ns samples of x (host floats, in_size each) to t from its element
 * 0. An int32 input (an embedding's ids) arrives as float values; each must
 * be an integer in [0, input_dim), else XO_EINVAL naming the sample and step
 * (the op would refuse it too, but here the message can say where it came
 * from); its int32 bits are what the device holds (plan_build's I32 view).
 * first is the number of x's first sample in the caller's data.
 */
static enum xo_status write_x(struct xo_model *m, struct xo_tensor *t, const float *x,
                              int64_t first, int64_t ns, const char *what)
{
	int64_t count = ns * m->in_size, vocab;
	int32_t *ids;
	enum xo_status st;

	if (!m->spec.in_int)
		return xo_tensor_write(t, x, 0, count);
	vocab = m->layers[0].s.p.rows;
	ids = malloc(sizeof(*ids) * (size_t)(count ? count : 1));
	if (!ids)
		return xo_error(XO_ENOMEM, "%s: out of memory", what);
	for (int64_t k = 0; k < count; k++) {
		float v = x[k];

		if (!(v >= 0.0f && v < (float)vocab && v == floorf(v))) {
			free(ids);
			return xo_error(XO_EINVAL,
			                "%s: id %g of sample %" PRId64 ", step %" PRId64
			                " is outside [0, input_dim=%" PRId64 ") of embedding '%s'",
			                what, (double)v, first + k / m->in_size, k % m->in_size, vocab,
			                m->layers[0].s.name);
		}
		ids[k] = (int32_t)v;
	}
	st = xo_tensor_write(t, ids, 0, count);
	free(ids);
	return st;
}

/* The epoch's metric from the summed correct counts of n samples. */
static double accuracy_of(const struct xo_model *m, double correct, int64_t n)
{
	if (m->metric_op == XO_OP_COUNT)
		return NAN;
	/* binary_accuracy counts elements: Keras averages per sample over the
	 * classes, then over the samples. */
	if (m->metric_op == XO_OP_binary_accuracy)
		return correct / ((double)n * (double)m->classes);
	return correct / (double)n;
}

/*
 * Samples per call of the op-by-op path when predict is given a larger batch
 * on the cpu backend: each op makes a pass over its whole input and output,
 * so a batch whose activations exceed the caches streams every layer through
 * memory (cnn2d at 4000 samples: its first conv's output alone is 50 MB). In
 * chunks whose largest activation is about PREDICT_CHUNK_BYTES they stay in
 * cache from one op to the next. Inference is per sample (no batch
 * statistics, no dropout), and each op computes a sample's outputs with the
 * same arithmetic whatever the batch, so the probabilities are the same.
 * Not chunked: backends that do not say predict_chunks (struct
 * xo_backend_iface: a device wants one large launch), a net the
 * backend runs fused (it tiles the batch itself), and batches below the
 * chunk. XO_PREDICT_CHUNK=N sets the samples per chunk (0: no chunking);
 * anything but such a count is refused (XO_EINVAL, on every backend).
 */
#define PREDICT_CHUNK_BYTES (1 << 20)
#define PREDICT_CHUNK_MIN 16

/* XO_PREDICT_CHUNK as a count of samples in *v (-1: unset or empty); a
 * value that is not a count (sign, letters, overflow) is bad input, said in
 * one line, never ignored. */
static enum xo_status predict_chunk_env(int64_t *v)
{
	const char *env = getenv("XO_PREDICT_CHUNK");
	char *end;
	long long c;

	*v = -1;
	if (!env || !*env)
		return XO_OK;
	errno = 0;
	c = strtoll(env, &end, 10);
	if (env[0] < '0' || env[0] > '9' || *end || errno == ERANGE)
		return xo_error(XO_EINVAL,
		                "predict: XO_PREDICT_CHUNK='%s' is not a count of samples (an "
		                "integer >= 0; 0 turns chunking off)",
		                env);
	*v = (int64_t)c;
	return XO_OK;
}

/* The samples per call predict runs, in *step (batch_size, or the chunk). */
static enum xo_status predict_step(struct xo_model *m, int64_t n, int64_t batch_size,
                                   int64_t *step)
{
	int64_t bs = batch_size < n ? batch_size : n, per = m->in_size, chunk, v;
	struct xo_net net;
	enum xo_status st = predict_chunk_env(&v);

	*step = batch_size;
	if (st)
		return st;
	if (!m->be->iface->predict_chunks)
		return XO_OK;
	for (int i = 0; i < m->nlayers; i++) {
		const struct xo_layer_spec *s = &m->layers[i].s;
		int64_t f = s->out_len * s->out_w * s->out_ch;

		per = f > per ? f : per;
	}
	chunk = PREDICT_CHUNK_BYTES / (per * (int64_t)sizeof(float));
	if (chunk < PREDICT_CHUNK_MIN)
		chunk = PREDICT_CHUNK_MIN;
	if (v >= 0)
		chunk = v ? v : bs;
	if (chunk >= bs || (m->chunk_fused == chunk && m->chunk_fused_fuse == m->fuse))
		return XO_OK;
	/* the fused path, where the backend takes this net, tiles by itself */
	if (ensure_cap(m, chunk) || plan_build(m, chunk, false))
		return XO_OK;
	if (net_describe(m, false, m->x_flat, NULL, NULL, NULL, NULL, &net)) {
		m->chunk_fused = chunk;
		m->chunk_fused_fuse = m->fuse;
		return XO_OK;
	}
	*step = chunk;
	return XO_OK;
}

enum xo_status xo_model_predict(struct xo_model *m, const float *x, int64_t n, int64_t batch_size,
                                float *probs)
{
	struct layer *last;
	enum xo_status st;

	if (!m || !x || !probs)
		return xo_error(XO_EINVAL, "predict: NULL argument");
	if (n < 1 || batch_size < 1)
		return xo_error(XO_EINVAL, "predict: need n >= 1 and batch_size >= 1");
	st = xo_data_check_finite(x, n, m->in_size, "predict: x");
	if (st)
		return st;
	last = &m->layers[m->nlayers - 1];
	st = predict_step(m, n, batch_size, &batch_size);
	if (!st)
		st = ensure_cap(m, batch_size < n ? batch_size : n);
	for (int64_t off = 0; !st && off < n; off += batch_size) {
		int64_t bs = n - off < batch_size ? n - off : batch_size;

		st = plan_build(m, bs, false);
		if (!st)
			st = write_x(m, m->xb, x + off * m->in_size, off, bs, "predict: x");
		if (!st)
			st = infer(m, m->x_flat, NULL, NULL, NULL, NULL);
		if (!st)
			st =
			    xo_tensor_read(last->out, probs + off * m->classes, 0, bs * m->classes);
	}
	return st;
}

enum xo_status xo_model_evaluate(struct xo_model *m, const float *x, const float *y, int64_t n,
                                 int64_t batch_size, double *loss, double *accuracy)
{
	struct xo_tensor *met = NULL, *lv = NULL, *cv = NULL;
	double lsum = 0.0, csum = 0.0;
	float *host = NULL;
	int64_t steps;
	enum xo_status st;

	if (!m || !x || !y || !loss || !accuracy)
		return xo_error(XO_EINVAL, "evaluate: NULL argument");
	if (n < 1 || batch_size < 1)
		return xo_error(XO_EINVAL, "evaluate: need n >= 1 and batch_size >= 1");
	st = check_trainable(m, "evaluate");
	if (!st)
		st = xo_data_check_finite(x, n, m->in_size, "evaluate: x");
	if (!st)
		st = xo_model_check_labels(m, y, n, "evaluate: y");
	if (st)
		return st;
	steps = (n + batch_size - 1) / batch_size;
	st = ensure_cap(m, batch_size < n ? batch_size : n);
	if (!st)
		st = xo_tensor_create(m->be, XO_DTYPE_F32, 1, (int64_t[]){2 * steps}, &met);
	if (st)
		return st;
	host = malloc(sizeof(*host) * (size_t)(2 * steps));
	if (!host) {
		st = xo_error(XO_ENOMEM, "evaluate: out of memory");
		goto out_free;
	}
	for (int64_t s = 0; !st && s < steps; s++) {
		int64_t off = s * batch_size, bs = n - off < batch_size ? n - off : batch_size;

		st = plan_build(m, bs, false);
		if (!st)
			st = write_x(m, m->xb, x + off * m->in_size, off, bs, "evaluate: x");
		if (!st)
			st = labels_write(m, m->yb, y + off * m->lw, 0, bs);
		if (!st)
			st = xo_tensor_view(met, s, 1, (int64_t[]){1}, &lv);
		if (!st)
			st = xo_tensor_view(met, steps + s, 1, (int64_t[]){1}, &cv);
		if (!st)
			st = infer(m, m->x_flat, NULL, m->y_in, lv, cv);
		xo_tensor_free(lv);
		xo_tensor_free(cv);
		lv = cv = NULL;
	}
	if (!st)
		st = xo_tensor_read(met, host, 0, 2 * steps);
	if (st)
		goto out_free;
	/* Keras: the mean of batch losses weighted by batch size. */
	for (int64_t s = 0; s < steps; s++) {
		int64_t bs = n - s * batch_size < batch_size ? n - s * batch_size : batch_size;

		lsum += (double)host[s] * (double)bs;
		csum += (double)host[steps + s];
	}
	*loss = lsum / (double)n;
	*accuracy = accuracy_of(m, csum, n);
out_free:
	free(host);
	xo_tensor_free(met);
	return st;
}

/* ---- fit ------------------------------------------------------------------- */

struct xo_fit_options xo_fit_options_default(void)
{
	return (struct xo_fit_options){
	    .epochs = 10,
	    .batch_size = 32,
	    .validation_split = 0.0f,
	    .shuffle = true,
	    .seed = 0,
	    .checkpoint_dir = NULL,
	    .verbose = false,
	};
}

/* The float as the shortest decimal that reads back to it, as a double:
 * 0.2f -> 0.2, so the split point matches Python's int(n * (1 - 0.2)). */
static double float_as_decimal(float f)
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

int xo_epoch_log_format(const struct xo_epoch_log *log, char *buf, size_t size)
{
	char step[32];
	int n;

	if (log->ms_per_step >= 1.0)
		snprintf(step, sizeof(step), "%.0fms/step", log->ms_per_step);
	else
		snprintf(step, sizeof(step), "%.0fus/step", log->ms_per_step * 1e3);
	n = snprintf(buf, size, "Epoch %d/%d\n%" PRId64 "/%" PRId64 " - %.0fs %s - loss: %.4f",
	             log->epoch, log->epochs, log->steps, log->steps, log->epoch_ms / 1e3, step,
	             log->loss);
	if (n >= 0 && !log->no_metric)
		n += snprintf(buf + ((size_t)n < size ? (size_t)n : size),
		              (size_t)n < size ? size - (size_t)n : 0, " - accuracy: %.4f",
		              log->accuracy);
	if (n >= 0 && log->has_val)
		n += snprintf(buf + ((size_t)n < size ? (size_t)n : size),
		              (size_t)n < size ? size - (size_t)n : 0, " - val_loss: %.4f",
		              log->val_loss);
	if (n >= 0 && log->has_val && !log->no_metric)
		n += snprintf(buf + ((size_t)n < size ? (size_t)n : size),
		              (size_t)n < size ? size - (size_t)n : 0, " - val_accuracy: %.4f",
		              log->val_accuracy);
	if (n >= 0)
		n += snprintf(buf + ((size_t)n < size ? (size_t)n : size),
		              (size_t)n < size ? size - (size_t)n : 0, "\n");
	return n;
}

/* Device tensors and views of one fit call. */
struct fit_state {
	struct xo_tensor *xdata, *ydata; /* the whole data set [n][...] */
	struct xo_tensor *perm;          /* i32 [n]: training order, then validation rows */
	struct xo_tensor *met;           /* [2 * (steps + vsteps)] loss, correct */
	struct xo_tensor **views;        /* per step: index, loss, correct, label views */
	int64_t nviews;
	int32_t *host_idx; /* host copy of the epoch's order */
	float *host_met;
	/* sparse ids: ydata is i32 [n] in the epoch's order (the gather op
	 * moves float rows only), uploaded with the order; host_ids[n] is
	 * the ids in sample order, host_ord[n] in the epoch's. */
	int32_t *host_ids, *host_ord;
};

static void fit_state_free(struct fit_state *f)
{
	for (int64_t i = 0; f->views && i < f->nviews; i++)
		xo_tensor_free(f->views[i]);
	free(f->views);
	xo_tensor_free(f->xdata);
	xo_tensor_free(f->ydata);
	xo_tensor_free(f->perm);
	xo_tensor_free(f->met);
	free(f->host_idx);
	free(f->host_met);
	free(f->host_ids);
	free(f->host_ord);
}

void xo_model_set_order_hook(struct xo_model *m, xo_fit_order_fn fn, void *user)
{
	m->order_fn = fn;
	m->order_user = user;
}

enum xo_status xo_model_state_read(struct xo_model *m, enum xo_model_state which, float *out)
{
	const struct xo_tensor *t = which == XO_MODEL_PARAMS   ? m->params
	                            : which == XO_MODEL_GRADS  ? m->grads
	                            : which == XO_MODEL_ADAM_M ? m->adam_m
	                                                       : m->adam_v;

	if (!m->nparams)
		return XO_OK;
	return xo_tensor_read(t, out, 0, m->nparams);
}

/* The order hook with epoch e's order as the device holds it. */
static enum xo_status order_report(struct xo_model *m, const struct xo_tensor *perm,
                                   int64_t n_train, int e)
{
	int32_t *order = malloc(sizeof(*order) * (size_t)n_train);
	enum xo_status st;

	if (!order)
		return xo_error(XO_ENOMEM, "fit: out of memory");
	st = xo_tensor_read(perm, order, 0, n_train);
	if (!st)
		m->order_fn(m->order_user, e, order, n_train);
	free(order);
	return st;
}

enum xo_status xo_model_fit(struct xo_model *m, const float *x, const float *y, int64_t n,
                            const struct xo_fit_options *o,
                            void (*on_epoch)(void *user, const struct xo_epoch_log *log),
                            void *user)
{
	struct fit_state f = {0};
	int64_t n_train, n_val, steps, vsteps, B, nsteps;
	double best = -INFINITY;
	enum xo_status st;

	if (!m || !x || !y || !o)
		return xo_error(XO_EINVAL, "fit: NULL argument");
	st = check_trainable(m, "fit");
	if (st)
		return st;
	if (o->epochs < 1)
		return xo_error(XO_EINVAL, "fit: epochs=%d must be >= 1", o->epochs);
	if (o->batch_size < 1)
		return xo_error(XO_EINVAL, "fit: batch_size=%" PRId64 " must be >= 1",
		                o->batch_size);
	if (!(o->validation_split >= 0.0f && o->validation_split < 1.0f))
		return xo_error(XO_EINVAL, "fit: validation_split=%g must be in [0, 1)",
		                (double)o->validation_split);
	if (n < 1 || n > INT32_MAX)
		return xo_error(XO_EINVAL, "fit: n=%" PRId64 " samples must be in 1..%d", n,
		                INT32_MAX);
	st = xo_data_check_finite(x, n, m->in_size, "fit: x");
	if (!st)
		st = xo_model_check_labels(m, y, n, "fit: y");
	if (st)
		return st;
	B = o->batch_size;
	/* Keras: split_at = floor(n * (1 - validation_split)); the validation
	 * part is the last n - split_at samples, taken before any shuffling. */
	n_train = n;
	if (o->validation_split > 0.0f)
		n_train = (int64_t)floor((double)n * (1.0 - float_as_decimal(o->validation_split)));
	n_val = n - n_train;
	if (o->validation_split > 0.0f && (n_train < 1 || n_val < 1))
		return xo_error(XO_EINVAL,
		                "fit: %" PRId64 " samples cannot be split with validation_split=%g",
		                n, (double)o->validation_split);
	steps = (n_train + B - 1) / B;
	vsteps = (n_val + B - 1) / B;
	nsteps = steps + vsteps;
	st = ensure_cap(m, B < n_train ? B : n_train);
	if (!st)
		st = ensure_cap(m, B < n_val ? B : n_val);
	if (st)
		return st;

	/* The data set goes to the device once. */
	st = xo_tensor_create(m->be, XO_DTYPE_F32, 2, (int64_t[]){n, m->in_size}, &f.xdata);
	if (!st)
		st = sparse(m) ? xo_tensor_create(m->be, XO_DTYPE_I32, 1, (int64_t[]){n}, &f.ydata)
		               : xo_tensor_create(m->be, XO_DTYPE_F32, 2,
		                                  (int64_t[]){n, m->classes}, &f.ydata);
	if (!st)
		st = xo_tensor_create(m->be, XO_DTYPE_I32, 1, (int64_t[]){n}, &f.perm);
	if (!st)
		st = xo_tensor_create(m->be, XO_DTYPE_F32, 1, (int64_t[]){2 * nsteps}, &f.met);
	if (!st)
		st = write_x(m, f.xdata, x, 0, n, "fit: x");
	if (!st)
		st = labels_write(m, f.ydata, y, 0, n);
	if (st)
		goto out_free;
	if (sparse(m)) {
		f.host_ids = malloc(sizeof(*f.host_ids) * (size_t)n);
		f.host_ord = malloc(sizeof(*f.host_ord) * (size_t)n);
		if (!f.host_ids || !f.host_ord) {
			st = xo_error(XO_ENOMEM, "fit: out of memory");
			goto out_free;
		}
		for (int64_t i = 0; i < n; i++)
			f.host_ids[i] = (int32_t)y[i];
	}
	f.host_idx = malloc(sizeof(*f.host_idx) * (size_t)n);
	f.host_met = malloc(sizeof(*f.host_met) * (size_t)(2 * nsteps));
	f.nviews = 4 * nsteps;
	f.views = calloc((size_t)f.nviews, sizeof(*f.views));
	if (!f.host_idx || !f.host_met || !f.views) {
		st = xo_error(XO_ENOMEM, "fit: out of memory");
		goto out_free;
	}
	/* perm holds the training order in [0, n_train) and the validation
	 * rows (in order) in [n_train, n), so every step picks its batch with
	 * one gather from the resident data set. */
	for (int64_t s = 0; !st && s < nsteps; s++) {
		int64_t first = s < steps ? s * B : n_train + (s - steps) * B;
		int64_t end = s < steps ? n_train : n;
		int64_t bs = end - first < B ? end - first : B;

		st = xo_tensor_view(f.perm, first, 1, &bs, &f.views[4 * s]);
		if (!st)
			st = xo_tensor_view(f.met, s, 1, (int64_t[]){1}, &f.views[4 * s + 1]);
		if (!st)
			st = xo_tensor_view(f.met, nsteps + s, 1, (int64_t[]){1},
			                    &f.views[4 * s + 2]);
		if (!st && sparse(m))
			st = xo_tensor_view(f.ydata, first, 1, &bs, &f.views[4 * s + 3]);
	}
	for (int64_t i = 0; i < n; i++)
		f.host_idx[i] = (int32_t)i;
	if (!st)
		st = xo_tensor_write(f.perm, f.host_idx, 0, n);
	if (st)
		goto out_free;
	m->seed = o->seed;

	for (int e = 1; e <= o->epochs && !st; e++) {
		struct xo_epoch_log log = {.epoch = e,
		                           .val_loss = NAN,
		                           .val_accuracy = NAN,
		                           .epochs = o->epochs,
		                           .steps = steps,
		                           .has_val = n_val > 0};
		double t0 = now_ms(), t1, lsum = 0, csum = 0, vlsum = 0, vcsum = 0;

		if (o->shuffle) {
			xo_philox_shuffle(f.host_idx, n_train, o->seed, XO_STREAM_SHUFFLE,
			                  (uint32_t)e);
			st = xo_tensor_write(f.perm, f.host_idx, 0, n_train);
			if (!st && sparse(m)) {
				for (int64_t i = 0; i < n_train; i++)
					f.host_ord[i] = f.host_ids[f.host_idx[i]];
				st = xo_tensor_write(f.ydata, f.host_ord, 0, n_train);
			}
		}
		if (!st && m->order_fn)
			st = order_report(m, f.perm, n_train, e);
		for (int64_t s = 0; !st && s < steps; s++) {
			int64_t bs = xo_tensor_nelem(f.views[4 * s]);

			st = plan_build(m, bs, true);
			if (!st)
				st = step(m, f.xdata, f.views[4 * s],
				          sparse(m) ? f.views[4 * s + 3] : f.ydata, f.views[4 * s + 1],
				          f.views[4 * s + 2]);
		}
		if (!st)
			st = xo_backend_sync(m->be);
		t1 = now_ms();
		for (int64_t s = steps; !st && s < nsteps; s++) {
			int64_t bs = xo_tensor_nelem(f.views[4 * s]);

			st = plan_build(m, bs, false);
			if (!st)
				st = infer(m, f.xdata, f.views[4 * s],
				           sparse(m) ? f.views[4 * s + 3] : f.ydata, f.views[4 * s + 1],
				           f.views[4 * s + 2]);
		}
		/* The one read of the epoch: every step's loss and correct count. */
		if (!st)
			st = xo_tensor_read(f.met, f.host_met, 0, 2 * nsteps);
		if (st)
			break;
		/* Keras's TerminateOnNaN, per epoch (the one read): a step whose
		 * loss is not finite stops training before anything is saved, so
		 * the last checkpoint stays the last good one. */
		for (int64_t s = 0; s < nsteps; s++)
			if (!isfinite(f.host_met[s])) {
				st =
				    xo_error(XO_EINVAL,
				             "fit: the %s loss became %s at epoch %d, step %" PRId64
				             ": training stopped; %s",
				             s < steps ? "training" : "validation",
				             isnan(f.host_met[s]) ? "NaN" : "Inf", e,
				             (s < steps ? s : s - steps) + 1,
				             o->checkpoint_dir ? "the last saved checkpoint is kept"
				                               : "nothing saved");
				break;
			}
		if (st)
			break;
		log.epoch_ms = now_ms() - t0;
		log.ms_per_step = (t1 - t0) / (double)steps;
		for (int64_t s = 0; s < nsteps; s++) {
			double bs = (double)xo_tensor_nelem(f.views[4 * s]);

			if (s < steps) {
				lsum += (double)f.host_met[s] * bs;
				csum += (double)f.host_met[nsteps + s];
			} else {
				vlsum += (double)f.host_met[s] * bs;
				vcsum += (double)f.host_met[nsteps + s];
			}
		}
		log.loss = lsum / (double)n_train;
		log.accuracy = accuracy_of(m, csum, n_train);
		log.no_metric = m->metric_op == XO_OP_COUNT;
		if (n_val) {
			log.val_loss = vlsum / (double)n_val;
			log.val_accuracy = accuracy_of(m, vcsum, n_val);
		}
		/* ModelCheckpoint(save_best_only, monitor val_accuracy, mode max):
		 * saved when strictly better; with metrics=none it monitors
		 * val_loss, mode min (Keras's default monitor). Without
		 * validation data, the weights of every epoch are saved (the last
		 * one remains). */
		if (o->checkpoint_dir &&
		    (!n_val || (log.no_metric ? -log.val_loss : log.val_accuracy) > best)) {
			if (n_val)
				best = log.no_metric ? -log.val_loss : log.val_accuracy;
			st = xo_model_save_weights(m, o->checkpoint_dir);
			log.checkpointed = !st;
		}
		if (o->verbose) {
			char line[256];

			xo_epoch_log_format(&log, line, sizeof(line));
			fputs(line, stdout);
			fflush(stdout);
		}
		if (on_epoch)
			on_epoch(user, &log);
	}
out_free:
	plan_free(m);
	fit_state_free(&f);
	return st;
}


void xo_model_synthetic_x(const struct xo_model *m, uint64_t seed, int64_t n, float *x)
{
	for (int64_t i = 0; i < n * m->in_size; i++) {
		x[i] = xo_philox_uniform(seed, XO_STREAM_BENCH, 0, (uint64_t)i);
		if (m->spec.in_int) /* ids in [0, input_dim) */
			x[i] = fminf(floorf(x[i] * (float)m->layers[0].s.p.rows),
			             (float)(m->layers[0].s.p.rows - 1));
	}
}

/* ---- perf runner hooks ----------------------------------------------------- */

enum xo_status xo_model_bench_prepare(struct xo_model *m, int64_t batch, uint64_t seed)
{
	enum xo_status st;
	float *x, *y;

	if (!m || batch < 1)
		return xo_error(XO_EINVAL, "bench_prepare: need a model and batch >= 1");
	st = ensure_cap(m, batch);
	if (st)
		return st;
	x = malloc(sizeof(*x) * (size_t)(batch * m->in_size));
	y = calloc((size_t)(batch * m->classes), sizeof(*y));
	if (!x || !y) {
		st = xo_error(XO_ENOMEM, "bench_prepare: out of memory");
		goto out_free;
	}
	xo_model_synthetic_x(m, seed, batch, x);
	for (int64_t i = 0; i < batch; i++) {
		uint32_t r = xo_philox_u32(seed, XO_STREAM_BENCH, 1, (uint64_t)i);

		y[i * m->classes + (int64_t)(((uint64_t)r * (uint64_t)m->classes) >> 32)] = 1.0f;
	}
	if (sparse(m)) /* the ids of the one-hot rows */
		for (int64_t i = 0; i < batch; i++)
			for (int64_t c = 0; c < m->classes; c++)
				if (y[i * m->classes + c] == 1.0f) {
					y[i] = (float)c; /* row i's ids slot precedes row i + 1 */
					break;
				}
	st = write_x(m, m->xb, x, 0, batch, "bench: x");
	if (!st)
		st = labels_write(m, m->yb, y, 0, batch);
	if (!st)
		st = xo_backend_sync(m->be);
	m->bench_n = st ? 0 : batch;
out_free:
	free(x);
	free(y);
	return st;
}

enum xo_status xo_model_bench_train_step(struct xo_model *m)
{
	enum xo_status st;

	if (!m || !m->bench_n || m->bench_n > m->cap)
		return xo_error(XO_EINVAL, "bench: call xo_model_bench_prepare first");
	st = check_trainable(m, "bench train step");
	if (!st)
		st = plan_build(m, m->bench_n, true);
	if (!st)
		st = step(m, m->x_flat, NULL, m->y_in, m->sc_loss, m->sc_correct);
	if (!st)
		st = xo_backend_sync(m->be);
	return st;
}

enum xo_status xo_model_bench_predict(struct xo_model *m)
{
	enum xo_status st;

	if (!m || !m->bench_n || m->bench_n > m->cap)
		return xo_error(XO_EINVAL, "bench: call xo_model_bench_prepare first");
	st = plan_build(m, m->bench_n, false);
	if (!st)
		st = infer(m, m->x_flat, NULL, NULL, NULL, NULL);
	if (!st)
		st = xo_backend_sync(m->be);
	return st;
}

enum xo_status xo_model_bench_profile_step(struct xo_model *m, uint64_t *layer_ns,
                                           uint64_t *layer_launches, uint64_t *extra_ns)
{
	enum xo_status st;

	if (!m || !layer_ns || !layer_launches || !extra_ns)
		return xo_error(XO_EINVAL, "bench_profile_step: NULL argument");
	memset(layer_ns, 0, sizeof(*layer_ns) * (size_t)m->nlayers);
	memset(layer_launches, 0, sizeof(*layer_launches) * (size_t)m->nlayers);
	m->prof_ns = layer_ns;
	m->prof_launches = layer_launches;
	m->prof_extra = 0;
	m->profiling = true;
	st = xo_model_bench_train_step(m);
	m->profiling = false;
	m->prof_ns = m->prof_launches = NULL;
	*extra_ns = m->prof_extra;
	return st;
}
