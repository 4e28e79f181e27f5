/*
 * model.c - the sequential model runtime: a parsed spec compiled onto one
 * backend, with Keras's predict / evaluate / fit semantics. This file opens
 * and closes a model and owns its plans, buffers and parameters; forward.c
 * runs it, fit.c trains it, modelfile.c reads and writes its files.
 *
 * Everything a step touches stays on the device: the parameters, their
 * gradients and Adam's m and v each live in ONE flat tensor (per-layer
 * kernel and bias are views), so Adam is one op call per step; activations
 * and their gradients are allocated once for the largest batch, in the
 * storage slots of the memory plan (memplan.c: buffers of disjoint
 * lifetimes share one), and partial batches use views; flatten is a view
 * of its input (no op, no copy). fit
 * uploads the data set once, picks each (shuffled) batch on the device with
 * the gather op, writes each step's loss and correct count into a device
 * tensor, and reads those back once per epoch: per epoch there is one
 * host-to-device copy (the shuffled indices) and one device-to-host copy
 * (the metrics), nothing per step.
 *
 * The loss, optimizer and metric are the spec's compile line (default
 * categorical_crossentropy + Adam + accuracy). With categorical_crossentropy
 * the last layer is dense(softmax) and the loss's backward pass is the fused
 * softmax + cross-entropy gradient w.r.t. the softmax's input (dz = (p - t)
 * / batch for a row inside Keras's clip, 0 for one it clips: ops.def), so that layer's backward runs with activation=linear and dy = dz;
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
#include <unistd.h>

#include "model_run.h"

/* Runs one op; layer >= 0 names the layer it belongs to when profiling. */
enum xo_status xo_model_run_op(struct xo_model *m, int layer, enum xo_op op, enum xo_dir dir,
                               const struct xo_op_args *a)
{
	struct xo_backend_stats s;
	enum xo_status st;

	if (m->trace) { /* the memory planner's trace: nothing runs */
		xo_mem_trace_call(m, a);
		return XO_OK;
	}
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

void xo_model_plan_free(struct xo_model *m)
{
	/* views of views first: concatenate's op views (plan_cat_views) */
	for (int i = 0; i < m->nlayers; i++) {
		struct layer *l = &m->layers[i];
		struct xo_tensor **v[] = {&l->op_in,  &l->op_in2,  &l->op_out,
		                          &l->op_gin, &l->op_gin2, &l->op_gout};

		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
			xo_tensor_free(*v[k]);
			*v[k] = NULL;
		}
	}
	for (int i = 0; i < m->nlayers; i++) {
		struct layer *l = &m->layers[i];

		if (l->out_owned)
			xo_tensor_free(l->out);
		xo_tensor_free(l->gout);
		xo_tensor_free(l->z);
		xo_tensor_free(l->gz);
		xo_tensor_free(l->ws);
		for (int k = 0; k < 5; k++) {
			xo_tensor_free(l->att_t[k]);
			xo_tensor_free(l->att_g[k]);
			l->att_t[k] = NULL;
			l->att_g[k] = NULL;
		}
		xo_tensor_free(l->gacc);
		xo_tensor_free(l->acc_view);
		xo_tensor_free(l->twin);
		l->gacc = l->acc_view = l->twin = NULL;
		l->in2 = NULL;
		l->gin2 = NULL;
		l->att_m = NULL;
		for (int k = 0; k < XO_LAYER_INPUTS_MAX; k++)
			l->acc_add[k] = NULL;
		l->ws = NULL;
		l->z = l->gz = NULL;
		for (int k = 0; k < LAYER_SVIEWS_MAX; k++) {
			xo_tensor_free(l->sv[k]);
			l->sv[k] = NULL;
		}
		l->out = NULL;
		l->gout = NULL;
		l->gin = NULL;
		l->in = NULL;
		l->out_owned = false;
	}
	for (int k = 1; k < XO_MODEL_INPUTS_MAX; k++) {
		xo_tensor_free(m->x_part[k]);
		m->x_part[k] = NULL;
	}
	xo_tensor_free(m->x_in);
	xo_tensor_free(m->keep);
	m->keep = NULL;
	xo_tensor_free(m->x_flat);
	xo_tensor_free(m->y_in);
	xo_tensor_free(m->idx_v);
	m->x_in = m->x_flat = m->y_in = m->idx_v = NULL;
	m->plan_n = 0;
}

/* The elements of one sample of a model input. */
static int64_t input_size(const struct xo_input_spec *q)
{
	return q->len * q->w * q->ch;
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


/* The borrowed tensors of l's inputs in the current plan: each input's
 * output (or the model input) and where its gradient goes (model_run.h). */
static void plan_wire(struct xo_model *m, struct layer *l, bool training)
{
	int mk = -1 - l->s.att_mask;

	l->att_m = !l->s.att_mask ? NULL : mk == 0 ? m->x_in : m->x_part[mk];
	for (int k = 0; k < l->s.ninputs; k++) {
		int j = l->s.inputs[k];
		struct layer *p = j >= 0 ? &m->layers[j] : NULL;
		struct xo_tensor *g = NULL;

		if (training && p && p->has_grad)
			g = l->acc_edge[k] && !l->own_gout ? p->gacc : p->gout;
		if (l->acc_edge[k] && training && p && p->has_grad)
			l->acc_add[k] = g; /* a view's own gout: set by plan_layer */
		const struct xo_tensor *x = j >= 0 ? NULL : j == -1 ? m->x_in : m->x_part[-1 - j];

		if (k == 1 && l->twin_acc && g) {
			g = l->twin;
			l->acc_add[k] = g;
		}
		if (k == 0) {
			l->in = p ? p->out : x;
			l->gin = g;
			/* the mask's source (mask_zero): a Masking's keep flags,
			 * else the ids input */
			l->ids = m->keep ? m->keep
			         : m->spec.in_ids ? m->x_part[m->spec.in_ids]
			                          : m->x_in;
		} else {
			l->in2 = p ? p->out : x;
			l->gin2 = g;
		}
	}
}

/* multi_head_attention's views of z (Q, K, V, O, then the implicit masks'
 * [Tq][Tk] as att_t[4] when the layer has them) and of gz (their gradients,
 * then the key projection's input gradient) for n samples, one after the
 * other (layer_mha_floats). */
static enum xo_status plan_mha(struct layer *l, int64_t n, bool grads)
{
	int64_t tq = l->s.in_len, tk = xo_attention_len_kv(&l->s.p), h = l->s.p.heads;
	int64_t dk = h * l->s.p.key_dim, dv = h * xo_attention_value_dim(&l->s.p);
	const int64_t dims[6][3] = {{n, tq, dk}, {n, tk, dk}, {n, tk, dv}, {n, tq, dv},
	                            {n, tk, l->s.p.ch_b}, {n, tq, tk}};
	enum xo_status st = XO_OK;
	int64_t off = 0;

	for (int k = 0; k < 6 && !st; k++) {
		if (k < 4 || (k == 5 && layer_mha_implicit_mask(&l->s)))
			st = xo_tensor_view(l->zbuf, off, 3, dims[k], &l->att_t[k < 4 ? k : 4]);
		if (!st && grads && k < 5)
			st = xo_tensor_view(l->gzbuf, off, 3, dims[k], &l->att_g[k]);
		off += dims[k][0] * dims[k][1] * dims[k][2];
	}
	return st;
}

/* l's own views for batch size n: its output (a view of its input for the
 * view kinds), output gradient, separate activation and workspace. */
static enum xo_status plan_layer(struct xo_model *m, struct layer *l, int64_t n, bool training,
                                 int nd, const int64_t *dims)
{
	enum xo_status st = XO_OK;

	if (layer_is_view(&l->s)) {
		/* Flatten is free: the same bytes, seen as [n][len*ch];
		 * so is Activation(linear). */
		st = xo_tensor_view((struct xo_tensor *)l->in, 0, nd, dims, &l->out);
		l->out_owned = true;
		if (!st && training && l->has_grad)
			st = xo_tensor_view(l->own_gout ? l->gbuf : l->gin, 0, nd, dims,
			                    &l->gout);
	} else if (l->s.kind == XO_LAYER_DROPOUT && !training) {
		/* Dropout is the identity at inference: no op at all. */
		l->out = (struct xo_tensor *)l->in;
		l->out_owned = false;
	} else {
		st = xo_tensor_view(l->ybuf, 0, nd, dims, &l->out);
		l->out_owned = true;
		if (!st && training && l->has_grad)
			st = xo_tensor_view(l->gbuf, 0, nd, dims, &l->gout);
		if (layer_has_z(&l->s)) {
			int64_t zd[XO_MAX_DIMS];
			int zn = sample_dims(n, l->s.out_rank, l->s.out_len, l->s.out_w,
			                     layer_z_ch(&l->s), zd);

			if (!st)
				st = xo_tensor_view(l->zbuf, 0, zn, zd, &l->z);
			if (!st && training && l->has_grad)
				st = xo_tensor_view(l->gzbuf, 0, zn, zd, &l->gz);
			if (!st && l->s.kind == XO_LAYER_MULTI_HEAD_ATTENTION)
				st = plan_mha(l, n, training && l->has_grad);
		}
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
		if (!st && xo_layer_families[l->s.kind]->scratch)
			st = xo_layer_families[l->s.kind]->scratch(l, n, training);
	}
	if (!st && l->own_gout && l->gout) {
		/* the later term, seen in its producer's shape (a flatten's
		 * gradient is [n][len*ch], its producer's [n][len][ch]) */
		const struct xo_layer_spec *q = &m->layers[l->s.inputs[0]].s;
		int64_t qd[4];
		int qn = sample_dims(n, q->out_rank, q->out_len, q->out_w, q->out_ch, qd);

		st = xo_tensor_view(l->gbuf, 0, qn, qd, &l->acc_view);
		l->acc_add[0] = l->acc_view;
	}
	return st;
}

/* A concatenate on an axis before the last: the merge op's views of its
 * tensors, [n][rows][ca], [n][rows][cb], [n][rows][ca + cb] (model_run.h). */
static enum xo_status plan_cat_views(struct layer *l, int64_t n)
{
	const struct xo_params *p = &l->s.p;
	int64_t da[3] = {n, p->len, p->ch}, db[3] = {n, p->len, p->ch_b};
	int64_t dy[3] = {n, p->len, p->ch + p->ch_b};
	enum xo_status st;

	st = xo_tensor_view((struct xo_tensor *)l->in, 0, 3, da, &l->op_in);
	if (!st)
		st = xo_tensor_view((struct xo_tensor *)l->in2, 0, 3, db, &l->op_in2);
	if (!st)
		st = xo_tensor_view(l->out, 0, 3, dy, &l->op_out);
	if (!st && l->gin)
		st = xo_tensor_view(l->gin, 0, 3, da, &l->op_gin);
	if (!st && l->gin2)
		st = xo_tensor_view(l->gin2, 0, 3, db, &l->op_gin2);
	if (!st && l->gout)
		st = xo_tensor_view(l->gout, 0, 3, dy, &l->op_gout);
	return st;
}

static enum xo_status buffers_train(struct xo_model *m);

/* Views for batch size n (<= cap) in training or inference mode. */
enum xo_status xo_model_plan_build(struct xo_model *m, int64_t n, bool training)
{
	int64_t dims[4], off = 0;
	enum xo_status st;
	int nd;

	if (m->plan_n == n && m->plan_training == training)
		return XO_OK;
	xo_model_plan_free(m);
	XO_ASSERT(n >= 1 && n <= m->cap);
	if (training && m->layout == 0 && !m->trace) {
		st = buffers_train(m);
		if (st)
			return st;
	}
	nd = sample_dims(n, m->spec.in_rank, m->spec.in_len, m->spec.in_w, m->spec.in_ch, dims);
	st = xo_tensor_view(m->xb, 0, nd, dims, &m->x_in);
	/* an int32 input: the batch rows hold the ids' int32 bits (write_x),
	 * moved as 4-byte words by the gather op; the embedding reads them
	 * through this view as what they are */
	if (!st && m->spec.in_int && m->spec.in_ids == 0)
		m->x_in->dtype = XO_DTYPE_I32;
	/* later inputs: each its own rows after the earlier inputs' n rows
	 * (xo_model_write_x; forward.c gather_x) */
	for (int k = 1; !st && k < m->spec.ninputs; k++) {
		const struct xo_input_spec *q = &m->spec.input[k];

		off += n * input_size(&m->spec.input[k - 1]);
		nd = sample_dims(n, q->rank, q->len, q->w, q->ch, dims);
		st = xo_tensor_view(m->xb, off, nd, dims, &m->x_part[k]);
		if (!st && m->spec.in_int && m->spec.in_ids == k)
			m->x_part[k]->dtype = XO_DTYPE_I32;
	}
	if (!st && m->kb) /* a Masking's keep flags [n][T], int32 */
		st = xo_tensor_view(m->kb, 0, 2, (int64_t[]){n, m->spec.in_len}, &m->keep);
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
	for (int i = 0; i < m->nlayers; i++) {
		struct layer *l = &m->layers[i];

		if (l->twinbuf) { /* shaped as its producer's gacc */
			const struct layer *p = &m->layers[l->s.inputs[1]];
			int64_t td[XO_MAX_DIMS];
			int tn = sample_dims(n, p->s.out_rank, p->s.out_len, p->s.out_w, p->s.out_ch, td);

			st = xo_tensor_view(l->twinbuf, 0, tn, td, &l->twin);
			if (st)
				goto out_free;
		}
		plan_wire(m, l, training);
		nd = sample_dims(n, l->s.out_rank, l->s.out_len, l->s.out_w, l->s.out_ch, dims);
		if (!st && l->gaccbuf)
			st = xo_tensor_view(l->gaccbuf, 0, nd, dims, &l->gacc);
		if (!st)
			st = plan_layer(m, l, n, training, nd, dims);
		if (!st && layer_cat_rows(&l->s))
			st = plan_cat_views(l, n);
		if (st)
			goto out_free;
	}
	m->plan_n = n;
	m->plan_training = training;
	return XO_OK;

out_free:
	xo_model_plan_free(m);
	return st;
}

/* ---- buffers ------------------------------------------------------------- */

static void buffers_free(struct xo_model *m)
{
	xo_model_plan_free(m);
	xo_mem_layout_free(m);
	for (int i = 0; m->layers && i < m->nlayers; i++) {
		xo_tensor_free(m->layers[i].wsbuf);
		m->layers[i].wsbuf = NULL;
		m->layers[i].ws_cap = 0;
	}
	xo_tensor_free(m->xb);
	xo_tensor_free(m->yb);
	xo_tensor_free(m->idx);
	xo_tensor_free(m->kb);
	m->xb = m->yb = m->idx = m->kb = NULL;
	m->cap = 0;
}

/* The environment variable name as a positive integer up to cap; 0 when
 * unset or anything else. */
static int64_t env_positive(const char *name, int64_t cap)
{
	const char *e = getenv(name);
	char *end = NULL;
	long long v = e ? strtoll(e, &end, 10) : 0;

	return e && *e && end && !*end && v > 0 && v <= cap ? (int64_t)v : 0;
}

int64_t xo_model_memory_max(void)
{
	static int64_t max;

	if (!max) {
		long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

		max = env_positive("XO_MODEL_MEMORY_MAX", INT64_MAX);
		if (!max)
			max = pages > 0 && page > 0 ? (int64_t)pages / 2 * (int64_t)page
			                            : INT64_C(1) << 34;
	}
	return max;
}

/* Bytes of the activations and their gradients for cap samples in a
 * layout (memplan.c): the input and label rows and the plan's slots, what
 * buffers_alloc makes (a recurrent layer's workspace aside). Checked before
 * any of it is allocated: a few bytes of config can declare a sequence of
 * millions of steps through layers whose weights do not grow with it
 * (attention, convolutions, recurrent layers, pooling), whose buffers
 * would take the machine's memory (the kernel's OOM killer, not an
 * error). The parameters have their own bound. */
static enum xo_status buffers_bound(const struct xo_model *m, int64_t cap, int layout,
                                    const char *origin)
{
	double per = (double)m->in_size + (double)m->classes + (double)m->mp[layout].planned;
	double need = per * 4.0 * (double)cap;

	if (need > (double)xo_model_memory_max())
		return xo_error(XO_EINVAL,
		                "%s: its activations need %.3g GiB for %" PRId64
		                " samples (%.3g MiB a sample)%s, above the limit of %.3g GiB "
		                "(XO_MODEL_MEMORY_MAX, in bytes; half the machine's memory by "
		                "default)",
		                origin, need / 1073741824.0, cap, per * 4.0 / 1048576.0,
		                layout ? " to train" : "",
		                (double)xo_model_memory_max() / 1073741824.0);
	return XO_OK;
}

/* The input, label and index rows and the layer buffers of a layout for
 * cap samples (its callers check buffers_bound first). */
static enum xo_status buffers_alloc(struct xo_model *m, int64_t cap, int layout)
{
	enum xo_status st;

	st = xo_tensor_create(m->be, XO_DTYPE_F32, 2, (int64_t[]){cap, m->in_size}, &m->xb);
	if (!st)
		st = sparse(m) ? xo_tensor_create(m->be, XO_DTYPE_I32, 1, (int64_t[]){cap}, &m->yb)
		               : xo_tensor_create(m->be, XO_DTYPE_F32, 2,
		                                  (int64_t[]){cap, m->classes}, &m->yb);
	if (!st)
		st = xo_tensor_create(m->be, XO_DTYPE_I32, 1, (int64_t[]){cap}, &m->idx);
	if (!st && xo_model_has_masking(m))
		st = xo_tensor_create(m->be, XO_DTYPE_I32, 2, (int64_t[]){cap, m->spec.in_len},
		                      &m->kb);
	if (!st)
		st = xo_mem_layout_alloc(m, layout, cap);
	if (st) {
		buffers_free(m);
		return st;
	}
	m->cap = cap;
	return XO_OK;
}

/* The layer buffers laid out for training (memplan.c's mp[1]) from the
 * first training plan on, bounded first; the batch rows (a bench's data)
 * stay. On a refusal the inference layout stays as it was. */
static enum xo_status buffers_train(struct xo_model *m)
{
	enum xo_status st = buffers_bound(m, m->cap, 1, "model");

	if (st)
		return st;
	xo_mem_layout_free(m);
	st = xo_mem_layout_alloc(m, 1, m->cap);
	if (st && xo_mem_layout_alloc(m, 0, m->cap))
		buffers_free(m);
	return st;
}

/* Grows the buffers to hold n samples (the model was opened for fewer). */
enum xo_status xo_model_ensure_cap(struct xo_model *m, int64_t n)
{
	enum xo_status st;
	int layout;

	if (n <= m->cap)
		return XO_OK;
	/* bounded before the old buffers go: a refusal leaves the model as it was */
	layout = m->layout < 0 ? 0 : m->layout;
	st = buffers_bound(m, n, layout, "model");
	if (st)
		return st;
	buffers_free(m);
	return buffers_alloc(m, n, layout);
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
		const struct xo_layer_family *f = xo_layer_families[l->s.kind];

		if (f->views)
			st = f->views(l, m->params, m->grads);
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
		max = env_positive("XO_MODEL_PARAMS_MAX", INT64_C(1) << 31);
		if (!max)
			max = XO_MODEL_PARAMS_DEFAULT;
	}
	return max;
}

/* Which input edges carry a later term of a fan-out sum (model_run.h):
 * backward runs the layers from the last, each one's inputs in order, so
 * the first edge met into a producer writes its gout, and every later one
 * a scratch. met: nlayers flags. */
static void graph_edges(struct xo_model *m, char *met)
{
	for (int i = m->nlayers - 1; i >= 0; i--) {
		struct layer *l = &m->layers[i];

		for (int k = 0; k < l->s.ninputs; k++) {
			int j = l->s.inputs[k];

			if (j < 0 || !m->layers[j].has_grad)
				continue;
			l->acc_edge[k] = met[j];
			met[j] = 1;
			if (!l->acc_edge[k])
				continue;
			if (k == 1 && l->s.inputs[0] == j && l->acc_edge[0] && !layer_is_view(&l->s)) {
				l->twin_acc = true;
				continue;
			}
			if (layer_is_view(&l->s))
				l->own_gout = true;
			else
				m->layers[j].needs_gacc = true;
		}
	}
}

/* XO_MODEL_SHARE: unset, empty or 1 shares buffers by liveness (memplan.c);
 * 0 gives every buffer its own storage (the unshared plan, for checking
 * that sharing changes no result); anything else is refused. */
static enum xo_status share_env(bool *share)
{
	const char *e = getenv("XO_MODEL_SHARE");

	*share = !e || !*e || !strcmp(e, "1");
	if (e && *e && strcmp(e, "0") && strcmp(e, "1"))
		return xo_error(XO_EINVAL, "model: XO_MODEL_SHARE='%s' is not 0 (a buffer per "
		                           "tensor) or 1 (buffers shared by liveness)", e);
	return XO_OK;
}

/* XO_FUSE: unset, empty or 1 the fused paths where a backend takes the
 * model, 0 op by op, require an error where none takes it; any other
 * value is refused (a misspelt require must not run silently otherwise). */
static enum xo_status fuse_env(bool *fuse, bool *required)
{
	const char *e = getenv("XO_FUSE");

	*fuse = !e || strcmp(e, "0");
	*required = e && !strcmp(e, "require");
	if (e && *e && strcmp(e, "0") && strcmp(e, "1") && strcmp(e, "require"))
		return xo_error(XO_EINVAL, "model: XO_FUSE='%s' is not 0 (op by op), 1 (fused "
		                           "where a backend takes the model) or require", e);
	return XO_OK;
}

enum xo_status xo_model_open_bare(const char *text, const char *origin, struct xo_backend *be,
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
	m->layout = -1;
	st = share_env(&m->share);
	if (!st)
		st = xo_spec_parse(text, origin, &m->spec);
	if (st)
		goto out_free;
	m->nlayers = m->spec.nlayers;
	m->layers = calloc((size_t)m->nlayers, sizeof(*m->layers));
	m->net_layers = calloc((size_t)m->nlayers, sizeof(*m->net_layers));
	st = fuse_env(&m->fuse, &m->fuse_required);
	if (st)
		goto out_free;
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
		l->ws_per = layer_ws_per(&l->s);
		if (l->s.gamma_count + l->s.beta_count) { /* batch_normalization */
			if (first_param < 0)
				first_param = i;
			l->g_off = off;
			l->beta_off = off + l->s.gamma_count;
			off += l->s.gamma_count + l->s.beta_count;
		}
		/* the gradient w.r.t. a layer's output is needed when it or a
		 * layer it depends on has variables (a sequential model: from
		 * the first layer with variables on) */
		l->has_grad = l->s.w_ndim || l->s.gamma_count + l->s.beta_count;
		for (int k = 0; k < l->s.ninputs; k++)
			if (l->s.inputs[k] >= 0 && m->layers[l->s.inputs[k]].has_grad)
				l->has_grad = l->need_dx = true;
	}
	if (m->spec.graph) {
		char *met = calloc((size_t)(unsigned)m->nlayers, 1);

		if (!met) {
			st = xo_error(XO_ENOMEM, "model: out of memory");
			goto out_free;
		}
		graph_edges(m, met);
		free(met);
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
		const struct layer *l = &m->layers[i];

		m->net_layers[i] = (struct xo_net_layer){
		    .kind = xo_model_dense_rows(&l->s) ? XO_NET_CONV1D : xo_layer_kinds[l->s.kind].net,
		    /* a rank-3 sample reaches the fused paths as [len * w][ch]:
		     * only elementwise layers and flatten take one there */
		    .in_len = l->s.in_len * l->s.in_w,
		    .in_ch = l->s.in_ch,
		    .out_len = l->s.out_len * l->s.out_w,
		    .out_ch = l->s.out_ch,
		    .w_off = l->s.w_ndim ? l->w_off : -1,
		    .b_off = l->s.w_ndim && l->s.b_count ? l->b_off : -1,
		    .need_dx = l->need_dx,
		    .nsrc = l->s.ninputs,
		};
		for (int k = 0; k < l->s.ninputs && k < XO_NET_SRC_MAX; k++)
			m->net_layers[i].src[k] = l->s.inputs[k];
	}
	m->in_size = 0;
	for (int k = 0; k < m->spec.ninputs; k++)
		m->in_size += input_size(&m->spec.input[k]);
	m->classes = m->layers[m->nlayers - 1].s.out_len * m->layers[m->nlayers - 1].s.out_w *
	             m->layers[m->nlayers - 1].s.out_ch;
	m->compile = m->spec.compile;
	m->lw = sparse(m) ? 1 : m->classes;
	m->metric_op = xo_compile_metric_op(&m->compile, m->classes);
	st = params_alloc(m);
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

enum xo_status xo_model_buffers_open(struct xo_model *m, int64_t max_batch, const char *origin)
{
	enum xo_status st = buffers_bound(m, max_batch, 0, origin);

	return st ? st : buffers_alloc(m, max_batch, 0);
}

void xo_model_close(struct xo_model *m)
{
	if (!m)
		return;
	buffers_free(m);
	xo_mem_plan_release(m);
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
		for (int k = 0; k < LAYER_PVIEWS_MAX; k++)
			xo_tensor_free(l->pv[k]);
		for (int k = 0; k < 8; k++) {
			xo_tensor_free(l->att_w[k]);
			xo_tensor_free(l->att_dw[k]);
		}
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

int64_t xo_model_iterations(const struct xo_model *m)
{
	return m->iteration;
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


/* Layer i's op parameters for the current plan (its batch size and mode). */
struct xo_params xo_model_layer_params(const struct xo_model *m, int i, bool training)
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
	if (l->s.kind == XO_LAYER_CONCATENATE) { /* rows and row parts: spec.c */
		p.len = l->s.p.len;
		p.ch = l->s.p.ch;
	}
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

/* A recurrent op's GEMM over T steps of ch inputs and u units, gn = gates
 * x units columns (xo_model_layer_gemm's comment in xo.h): x_t W + h' U as
 * one product, dW back through time with dh', dx from W alone. */
static struct xo_layer_gemm rnn_gemm(enum xo_op op, int64_t T, int64_t ch, int64_t u, int64_t gn)
{
	return (struct xo_layer_gemm){
	    .op = op, .rows = T, .k = ch + u, .n = gn, .k_dw = ch + 2 * u, .k_dx = ch};
}

bool xo_model_layer_gemm(const struct xo_model *m, int i, int64_t batch, struct xo_layer_gemm *out)
{
	const struct layer *l;

	XO_ASSERT(m && out && i >= 0 && i < m->nlayers && batch >= 1);
	l = &m->layers[i];
	if (xo_layer_rnn_op(l->s.kind) != XO_OP_COUNT) {
		*out = rnn_gemm(xo_layer_rnn_op(l->s.kind), l->s.in_len, l->s.in_ch, l->s.p.units,
		                l->s.w_dim[1] /* g * u */);
		out->fwd = xo_model_layer_params(m, i, false);
		out->bwd = xo_model_layer_params(m, i, true);
		out->has_grad = l->has_grad;
		out->need_dx = l->need_dx;
		out->fwd.batch = out->bwd.batch = batch;
		return true;
	}
	if (!layer_is_conv_dense(&l->s))
		return false;
	*out = (struct xo_layer_gemm){
	    .op = layer_conv_dense_op(&l->s),
	    .fwd = xo_model_layer_params(m, i, false),
	    .bwd = xo_model_layer_params(m, i, true),
	    .has_grad = l->has_grad,
	    .need_dx = l->need_dx,
	    .rows = l->s.out_len * l->s.out_w,
	    .k = l->s.w_count / l->s.out_ch,
	    .n = l->s.out_ch,
	};
	/* a transposed convolution multiplies each input position by the
	 * whole kernel: rows the input positions, k its channels, n the
	 * kernel's kh * kw * filters columns (cpu_convt.c's GEMM) */
	if (l->s.kind == XO_LAYER_CONV2D_TRANSPOSE || l->s.kind == XO_LAYER_CONV1D_TRANSPOSE) {
		out->rows = l->s.in_len * l->s.in_w;
		out->k = l->s.in_ch;
		out->n = l->s.w_count / l->s.in_ch;
	}
	out->k_dw = out->k_dx = out->k;
	/* a dense's rows (its sample's leading axes) are in its op's batch */
	out->fwd.batch = out->bwd.batch = layer_op_batch(&l->s, batch);
	if (act_separate(&l->s))
		out->fwd.activation = out->bwd.activation = XO_ACTIVATION_LINEAR;
	if (xo_model_ce_logits(m, i))
		out->bwd.activation = XO_ACTIVATION_LINEAR;
	return true;
}

/* The parameters of layer i's call of op in its forward (training false)
 * or backward pass as the op-by-op path makes them (the family's calls,
 * with the backward's ce_logits as forward.c sets it), the call
 * whose go_backwards is back; false when the pass has none. */
static bool layer_call_params(const struct xo_model *m, int i, bool training, enum xo_op op,
                              bool back, struct xo_params *out)
{
	const struct layer *l = &m->layers[i];
	const struct xo_layer_family *f = xo_layer_families[l->s.kind];
	struct layer_ctx c = {
	    .p = xo_model_layer_params(m, i, training),
	    .training = training,
	    .ce_logits = training && xo_model_ce_logits(m, i),
	};
	struct layer_call calls[LAYER_CALLS_MAX] = {0}; /* a family sets the fields it uses */
	int n = training ? f->backward(l, &c, calls) : f->forward(l, &c, calls);

	for (int k = 0; k < n; k++)
		if (calls[k].op == op && !calls[k].fwd && calls[k].a.p.go_backwards == back) {
			*out = calls[k].a.p;
			return true;
		}
	return false;
}

int xo_model_layer_gemms(const struct xo_model *m, int i, int64_t batch,
                         struct xo_layer_gemm out[XO_LAYER_GEMMS_MAX],
                         const char *part[XO_LAYER_GEMMS_MAX])
{
	const struct layer *l;
	int n = 0;

	XO_ASSERT(m && out && part && i >= 0 && i < m->nlayers && batch >= 1);
	l = &m->layers[i];
	if (xo_model_layer_gemm(m, i, batch, &out[0])) {
		part[0] = NULL;
		return 1;
	}
	if (l->s.kind == XO_LAYER_BIDIRECTIONAL) {
		/* each direction one recurrent layer's GEMM (the spec's w_dim
		 * [2][ch][gates * units]), the backward one with go_backwards
		 * flipped */
		static const char *const dir[2] = {"forward", "backward"};
		enum xo_op op = xo_layer_rnn_op((enum xo_layer_kind)l->s.inner);

		for (int d = 0; d < 2; d++, n++) {
			bool back = l->s.p.go_backwards != (d == 1);

			out[n] = rnn_gemm(op, l->s.in_len, l->s.in_ch, l->s.p.units, l->s.w_dim[2]);
			out[n].has_grad = l->has_grad;
			out[n].need_dx = l->need_dx;
			part[n] = dir[d];
			if (!layer_call_params(m, i, false, op, back, &out[n].fwd) ||
			    !layer_call_params(m, i, true, op, back, &out[n].bwd))
				return 0;
		}
	} else if (l->s.kind == XO_LAYER_SEPARABLE_CONV2D || l->s.kind == XO_LAYER_SEPARABLE_CONV1D) {
		/* the depthwise step (kh * kw taps of each of the in_ch * dm
		 * channels) into z, then the pointwise 1x1 conv2d (in_ch * dm
		 * terms per filter), both over the output's positions */
		int64_t zc = l->s.in_ch * l->s.p.depth_multiplier;

		out[0] = (struct xo_layer_gemm){.op = XO_OP_depthwise_conv2d,
		                                .has_grad = l->has_grad, .need_dx = l->need_dx,
		                                .rows = l->s.out_len * l->s.out_w,
		                                .k = l->s.w_count / zc, .n = zc};
		out[1] = (struct xo_layer_gemm){.op = XO_OP_conv2d, .has_grad = l->has_grad,
		                                .need_dx = l->has_grad, /* dz for the depthwise */
		                                .rows = l->s.out_len * l->s.out_w, .k = zc,
		                                .n = l->s.p.filters};
		part[0] = "depthwise";
		part[1] = "pointwise";
		for (n = 0; n < 2; n++) {
			out[n].k_dw = out[n].k_dx = out[n].k;
			if (!layer_call_params(m, i, false, out[n].op, false, &out[n].fwd) ||
			    !layer_call_params(m, i, true, out[n].op, false, &out[n].bwd))
				return 0;
		}
	}
	for (int k = 0; k < n; k++)
		out[k].fwd.batch = out[k].bwd.batch = batch;
	return n;
}

void xo_model_layer_cost(const struct xo_model *m, int i, struct xo_layer_cost *out)
{
	const struct layer *l;
	struct cost_bytes b;

	XO_ASSERT(m && out && i >= 0 && i < m->nlayers);
	l = &m->layers[i];
	b.in = 4.0 * (double)(l->s.in_len * l->s.in_w * l->s.in_ch);
	b.out = 4.0 * (double)(l->s.out_len * l->s.out_w * l->s.out_ch);
	b.w = 4.0 * (double)(l->s.w_count + l->s.b_count);
	*out = (struct xo_layer_cost){.params = xo_layer_total(&l->s)};
	xo_layer_families[l->s.kind]->cost(l, &b, out);
	/* a graph's fan-out: each later gradient term of an input is added
	 * into its producer's gradient after this layer's backward (one merge
	 * op: reads both, writes one) */
	for (int k = 0; k < l->s.ninputs; k++) {
		const struct layer *p = l->s.inputs[k] >= 0 ? &m->layers[l->s.inputs[k]] : NULL;

		if (!l->acc_edge[k] || !p)
			continue;
		out->ops_bwd++;
		out->act_bytes_bwd +=
		    12.0 * (double)(p->s.out_len * p->s.out_w * p->s.out_ch);
	}
}

/* ---- weights --------------------------------------------------------------- */

/* Zeroes Adam's state: a fresh optimizer; and the gradients, so that a
 * variable whose gradient no op writes (multi_head_attention's key bias,
 * layer_attn.c) reads exactly 0. */
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
	if (!st)
		st = xo_tensor_write(m->grads, zero, 0, m->nparams);
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
		const struct xo_layer_family *f = xo_layer_families[l->s.kind];

		if (f->init) /* biases and what else it leaves stay zero */
			f->init(l, i, seed, w);
	}
	st = xo_tensor_write(m->params, w, 0, m->nparams);
	free(w);
	if (st)
		return st;
	return optimizer_reset(m);
}

const struct xo_compile *xo_model_compile(const struct xo_model *m)
{
	return &m->compile;
}

int64_t xo_model_label_width(const struct xo_model *m)
{
	return m->lw;
}

int64_t xo_model_input_ids(const struct xo_model *m)
{
	return m->spec.in_int ? m->layers[0].s.p.rows : 0;
}

const struct xo_layer_spec *xo_model_layer_spec(const struct xo_model *m, int i)
{
	return &m->layers[i].s;
}

int xo_model_input_count(const struct xo_model *m)
{
	return m->spec.ninputs;
}

const struct xo_input_spec *xo_model_input_spec(const struct xo_model *m, int k)
{
	return &m->spec.input[k];
}

int xo_model_layer_vars(const struct xo_model *m, int i, struct xo_layer_var out[XO_LAYER_VARS_MAX])
{
	const struct layer *l = &m->layers[i];
	const struct xo_layer_family *f = xo_layer_families[l->s.kind];

	return f->vars ? f->vars(l, out) : 0;
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

