/*
 * forward.c - running the sequential model (model.c's state): forward and
 * backward op by op, one training step, the backends' fused whole-network
 * path, and Keras's predict and evaluate with their input and label checks.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "model_run.h"

/* ---- forward, backward, steps ---------------------------------------------- */

/* Runs layer i's ops of one pass, in order, as its family describes them. */
static enum xo_status layer_pass(struct xo_model *m, int i, enum xo_dir dir,
                                 const struct layer_ctx *c)
{
	const struct layer *l = &m->layers[i];
	const struct xo_layer_family *f = xo_layer_families[l->s.kind];
	/* zeroed: a family sets fwd only where it runs a forward op in a
	 * backward pass */
	struct layer_call calls[LAYER_CALLS_MAX] = {0};
	enum xo_status st = XO_OK;
	int n = dir == XO_DIR_FWD ? f->forward(l, c, calls) : f->backward(l, c, calls);

	XO_ASSERT(n >= 0 && n <= LAYER_CALLS_MAX);
	for (int k = 0; !st && k < n; k++)
		st = xo_model_run_op(m, i, calls[k].op, calls[k].fwd ? XO_DIR_FWD : dir, &calls[k].a);
	return st;
}

static enum xo_status forward(struct xo_model *m, bool training)
{
	enum xo_status st = XO_OK;

	for (int i = 0; !st && i < m->nlayers; i++) {
		struct layer_ctx c = {.p = xo_model_layer_params(m, i, training),
		                      .training = training};

		st = layer_pass(m, i, XO_DIR_FWD, &c);
	}
	return st;
}

/* Adds the later terms of layer i's fan-out sums into their producers'
 * gout (model_run.h), with the merge op in mode add, y in place of a. */
static enum xo_status backward_acc(struct xo_model *m, int i)
{
	const struct layer *l = &m->layers[i];
	enum xo_status st = XO_OK;

	for (int k = 0; !st && k < l->s.ninputs; k++) {
		const struct layer *p;
		struct xo_op_args a;

		if (!l->acc_add[k])
			continue;
		p = &m->layers[l->s.inputs[k]];
		a = (struct xo_op_args){.p = xo_params_default()};
		a.p.mode = XO_MERGE_ADD;
		a.p.batch = m->plan_n;
		a.p.len = p->s.out_len * p->s.out_w;
		a.p.ch = p->s.out_ch;
		a.src[0] = p->gout;
		a.src[1] = l->acc_add[k];
		a.dst[0] = p->gout;
		st = xo_model_run_op(m, i, XO_OP_merge, XO_DIR_FWD, &a);
	}
	return st;
}

static enum xo_status backward(struct xo_model *m)
{
	enum xo_status st = XO_OK;

	/* a graph's layers without a gradient may sit between ones with it:
	 * each is skipped, not the rest */
	for (int i = m->nlayers - 1; !st && i >= 0; i--) {
		struct layer_ctx c = {
		    .p = xo_model_layer_params(m, i, true),
		    .training = true,
		    .ce_logits = xo_model_ce_logits(m, i),
		};

		if (!m->layers[i].has_grad)
			continue;
		st = layer_pass(m, i, XO_DIR_BWD, &c);
		if (!st)
			st = backward_acc(m, i);
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
	a.p.from_logits = m->compile.from_logits;
	a.src[0] = last->out;
	a.src[1] = t;
	a.dst[0] = loss;
	st = xo_model_run_op(m, -1, loss_op(m), XO_DIR_FWD, &a);
	if (st || m->metric_op == XO_OP_COUNT)
		return st;
	if (m->metric_op == XO_OP_accuracy) {
		a.dst[0] = m->idx_v;
		a.dst[1] = correct;
	} else {
		a.dst[0] = correct;
	}
	return xo_model_run_op(m, -1, m->metric_op, XO_DIR_FWD, &a);
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
	a.p.from_logits = m->compile.from_logits;
	a.src[0] = last->out;
	a.src[1] = t;
	a.dst[0] = last->gout;
	st = xo_model_run_op(m, -1, loss_op(m), XO_DIR_BWD, &a);
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
		st = xo_model_run_op(m, -1, op, XO_DIR_FWD, &a);
	if (!st)
		m->iteration++;
	return st;
}

/* ---- the memory plan and open ------------------------------------------------ */

/* One pass of the memory planner's trace (memplan.c): the calls of an
 * inference batch (pass 0) or a training step (pass 1) of one sample over
 * the storage-less buffers, in the order they run, none run; then the read
 * of the last output that predict makes. A traced step is not taken. */
static enum xo_status trace_pass(struct xo_model *m, int pass)
{
	int64_t it = m->iteration;
	struct xo_op_args read = {.p = xo_params_default()};
	enum xo_status st;

	xo_mem_trace_pass(m, pass);
	st = xo_model_plan_build(m, 1, pass == 1);
	if (!st)
		st = pass ? train_step(m, m->y_in, m->sc_loss, m->sc_correct) : forward(m, false);
	m->iteration = it;
	if (!st) {
		read.src[0] = m->layers[m->nlayers - 1].out;
		xo_mem_trace_call(m, &read);
	}
	xo_model_plan_free(m);
	return st;
}

/* Both memory plans: the inference one from the inference pass, the
 * training one from both (it serves fit's validation too). */
static enum xo_status plan_make(struct xo_model *m)
{
	enum xo_status st = XO_OK;

	for (int layout = 0; !st && layout < 2; layout++) {
		enum xo_status end;

		st = xo_mem_trace_begin(m, layout);
		for (int pass = 0; !st && pass <= layout; pass++)
			st = trace_pass(m, pass);
		end = xo_mem_trace_end(m, layout, !st);
		st = st ? st : end;
	}
	return st;
}

/* The model (model.c), its memory plans from its own passes (here, so that
 * model.c calls nothing that calls it back), then its buffers. */
enum xo_status xo_model_open_string(const char *spec, const char *origin, struct xo_backend *be,
                                    int64_t max_batch, struct xo_model **out)
{
	struct xo_model *m = NULL;
	enum xo_status st;

	origin = origin ? origin : "<spec>";
	st = xo_model_open_bare(spec, origin, be, max_batch, &m);
	if (st)
		return st;
	st = plan_make(m);
	if (!st)
		st = xo_model_buffers_open(m, max_batch, origin);
	if (st) {
		xo_model_close(m);
		return st;
	}
	*out = m;
	return XO_OK;
}

enum xo_status xo_model_check_trainable(const struct xo_model *m, const char *what)
{
	const struct layer *last = &m->layers[m->nlayers - 1];

	/* Only categorical_crossentropy from probabilities is fused with its
	 * softmax; the other losses (and every from_logits one) differentiate
	 * through whatever the last layer is. */
	if (m->compile.loss == XO_LOSS_CATEGORICAL_CROSSENTROPY && !m->compile.from_logits &&
	    (last->s.kind != XO_LAYER_DENSE || last->s.p.activation != XO_ACTIVATION_SOFTMAX))
		return xo_error(XO_EINVAL,
		                "%s: the last layer must be dense with activation=softmax "
		                "(loss categorical_crossentropy)",
		                what);
	/* The loss and metric ops take one [classes] row per sample; Keras's
	 * go per position of a [T][units] output (the categorical ones one
	 * distribution per position). Refused, never computed otherwise. */
	if (last->s.out_rank != 1)
		return xo_error(XO_EINVAL,
		                "%s: loss %s needs a flat output per sample; the last layer's "
		                "output has %d axes (add a flatten or pooling layer after it)",
		                what, xo_loss_name(m->compile.loss), last->s.out_rank);
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
	return xo_model_run_op(m, -1, XO_OP_gather, XO_DIR_FWD, &a);
}

/* The batch's inputs through index from the data set x (written by
 * xo_model_write_x: each input's rows after the earlier inputs' rows), one
 * gather per input into its rows of the batch (plan_build's views). */
static enum xo_status gather_x(struct xo_model *m, const struct xo_tensor *x,
                               const struct xo_tensor *index)
{
	int64_t rows = xo_tensor_dim(x, 0), n = m->plan_n, off = 0;
	enum xo_status st = XO_OK;

	if (m->spec.ninputs == 1)
		return gather(m, x, index, m->x_flat);
	for (int k = 0; !st && k < m->spec.ninputs; k++) {
		const struct xo_input_spec *q = &m->spec.input[k];
		int64_t per = q->len * q->w * q->ch;
		struct xo_tensor *src = NULL, *dst = NULL;

		st = xo_tensor_view((struct xo_tensor *)x, off * rows, 2, (int64_t[]){rows, per},
		                    &src);
		if (!st)
			st = xo_tensor_view(m->xb, off * n, 2, (int64_t[]){n, per}, &dst);
		if (!st)
			st = gather(m, src, index, dst);
		xo_tensor_free(dst);
		xo_tensor_free(src);
		off += per;
	}
	return st;
}

/* ---- fused whole-network path ----------------------------------------------- */

/* Why graph m's wiring is not what struct xo_net describes (NULL: it is):
 * float model inputs (no int32 ids; at most XO_NET_INPUTS_MAX), at most
 * XO_NET_SRC_MAX sources a layer, no mask read by a layer (attention_mask=,
 * Keras's implicit masks). A reason naming a layer is written to buf. */
static const char *net_graph_refusal(const struct xo_model *m, char *buf, size_t size)
{
	if (m->spec.in_int)
		return " (an int32 ids input runs op by op)";
	if (m->spec.ninputs < 1 || m->spec.ninputs > XO_NET_INPUTS_MAX)
		return " (more model inputs than the fused paths take)";
	for (int i = 0; i < m->nlayers; i++) {
		const struct xo_layer_spec *s = &m->layers[i].s;
		const char *why = s->masked || s->mask_in ? "reads Keras's mask"
		                  : s->att_mask           ? "reads an attention_mask input"
		                  : s->ninputs < 1 || s->ninputs > XO_NET_SRC_MAX
		                      ? "takes more tensors than the fused paths take"
		                      : NULL;

		if (why) {
			snprintf(buf, size, " (layer '%s' %s, which runs op by op)", s->name, why);
			return buf;
		}
	}
	return NULL;
}

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
	char why[XO_LAYER_NAME_MAX + 96];

	/* a graph is described as it is (each layer's sources, each input's
	 * block of x); the backend's net_fits says whether its fused path runs
	 * it. An int32 ids input and a layer reading a mask or a third tensor
	 * run op by op. */
	if (!m->fuse || m->profiling || !ifc->net_fits ||
	    !(training ? ifc->net_train_step : ifc->net_forward))
		return false;
	if (m->spec.graph && net_graph_refusal(m, why, sizeof(why)))
		return false;
	for (int i = 0; i < m->nlayers; i++) {
		struct xo_params *p = &m->net_layers[i].p;

		*p = xo_model_layer_params(m, i, training);
		if (xo_model_dense_rows(&m->layers[i].s)) { /* its rows a kernel-1 conv's */
			p->filters = p->units;
			p->kernel_size = p->strides = p->dilation_rate = 1;
			p->padding = XO_PADDING_VALID;
		}
	}
	*net = (struct xo_net){
	    .nlayers = m->nlayers,
	    .layers = m->net_layers,
	    .graph = m->spec.graph,
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
	/* input k's rows: a block after the earlier inputs' (xo_model_write_x,
	 * gather_x) */
	net->ninputs = m->spec.ninputs;
	for (int64_t k = 0, off = 0; k < m->spec.ninputs; k++) {
		const struct xo_input_spec *q = &m->spec.input[k];

		net->in_off[k] = off;
		net->in_sizes[k] = q->len * q->w * q->ch;
		off += net->in_sizes[k];
	}
	net->adam = m->compile.opt; /* Adam's lr, beta_1, beta_2, epsilon */
	net->adam.size = m->ntrain; /* == nparams: no fused path runs batch_normalization */
	net->adam.iteration = m->iteration + 1;
	/* The fused paths compute categorical_crossentropy from probabilities
	 * (through the softmax), Adam and the categorical accuracy only (their
	 * net_fits refuse anything else, which then runs op by op). */
	net->unfused_compile = m->compile.loss != XO_LOSS_CATEGORICAL_CROSSENTROPY ||
	                       m->compile.from_logits ||
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

/* Why no fused path takes the model, where the reason is the model's own
 * (net_graph_ok, a layer kind no fused path has, the compile the fused
 * paths compute); "" where the backend's net_fits refused a layer's
 * options or sizes. A reason naming a layer is written to buf. */
static const char *fused_reason(const struct xo_model *m, bool training, char *buf, size_t size)
{
	const struct xo_backend_iface *ifc = m->be->iface;
	const char *why;

	if (!ifc->net_fits || !(training ? ifc->net_train_step : ifc->net_forward))
		return " (this backend has no fused path)";
	if (!m->fuse)
		return " (XO_FUSE=0 or xo_model_set_fused)";
	if (m->profiling)
		return " (profiling runs op by op)";
	if ((why = net_graph_refusal(m, buf, size)))
		return why;
	for (int i = 0; i < m->nlayers; i++) {
		enum xo_net_kind k = m->net_layers[i].kind;
		enum xo_activation a = m->layers[i].s.p.activation;

		/* the kinds some fused path takes (cpu_net.c's and cl_net.c's plans) */
		if (!xo_net_kind_fusable(k) && k != XO_NET_GLOBAL_AVERAGE_POOLING1D &&
		    xo_net_kind_nsrc(k) < 2) {
			snprintf(buf, size, " (layer '%s' (%s) has no fused path)",
			         m->layers[i].s.name, xo_layer_kinds[m->layers[i].s.kind].keras);
			return buf;
		}
		/* the activations their kernels compute (softmax as the last
		 * dense: the probabilities) */
		if ((k == XO_NET_CONV1D || k == XO_NET_DENSE) && a != XO_ACTIVATION_LINEAR &&
		    a != XO_ACTIVATION_RELU && a != XO_ACTIVATION_SIGMOID &&
		    !(a == XO_ACTIVATION_SOFTMAX && k == XO_NET_DENSE && i == m->nlayers - 1)) {
			snprintf(buf, size, " (layer '%s' has activation %s, which the fused paths "
			                    "do not compute: linear, relu, sigmoid, and softmax last)",
			         m->layers[i].s.name, xo_activation_name(a));
			return buf;
		}
	}
	if (training && (m->compile.loss != XO_LOSS_CATEGORICAL_CROSSENTROPY ||
	                 m->compile.from_logits || m->compile.optimizer != XO_OPTIMIZER_ADAM))
		return " (the fused training step computes categorical_crossentropy from "
		       "probabilities with Adam only)";
	return "";
}

static enum xo_status fused_refused(const struct xo_model *m, bool training)
{
	char buf[XO_LAYER_NAME_MAX + 128];

	return xo_error(XO_EBACKEND,
	                "XO_FUSE=require: backend %s does not run this model's %s batch of %lld "
	                "on its fused path%s",
	                xo_backend_name(m->be), training ? "training" : "inference",
	                (long long)m->plan_n, fused_reason(m, training, buf, sizeof(buf)));
}

/* Forward of the current plan (inference), with metrics into loss / correct
 * when t is set: fused when the backend runs the net, else op by op (x and
 * t then already in m->xb / m->yb, or gathered here through index). */
enum xo_status xo_model_infer(struct xo_model *m, const struct xo_tensor *x,
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
		st = gather_x(m, x, index);
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
enum xo_status xo_model_step(struct xo_model *m, const struct xo_tensor *x,
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
		st = gather_x(m, x, index);
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

	if (!m || !m->cap || xo_model_plan_build(m, 1, training))
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

enum xo_status xo_labels_check_one_hot(const float *y, int64_t n, int64_t classes, const char *what,
                                       const char *need)
{
	if (!need)
		need = "categorical_crossentropy needs one 1 and zeros per row";
	for (int64_t i = 0; i < n; i++) {
		int64_t ones = 0;

		for (int64_t c = 0; c < classes; c++) {
			float f = y[i * classes + c];

			if (f == 1.0f) {
				ones++;
			} else if (f != 0.0f) {
				return xo_error(XO_EINVAL,
				                "%s: label of sample %" PRId64 " is not one-hot: %g at "
				                "class %" PRId64 " (%s)",
				                what, i, (double)f, c, need);
			}
		}
		if (ones != 1)
			return xo_error(XO_EINVAL,
			                "%s: label of sample %" PRId64 " is not one-hot: %" PRId64
			                " ones (%s)",
			                what, i, ones, need);
	}
	return XO_OK;
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
		return xo_labels_check_one_hot(y, n, m->classes, what, NULL);
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
enum xo_status xo_model_labels_write(const struct xo_model *m, struct xo_tensor *t, const float *y,
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

enum xo_status xo_model_input_npy(const struct xo_model *m, struct xo_npy *a, const char *path)
{
	return xo_model_input_part_npy(m, 0, a, path);
}

enum xo_status xo_model_input_part_npy(const struct xo_model *m, int k, struct xo_npy *a,
                                       const char *path)
{
	int64_t vocab, per = m->spec.input[k].len * m->spec.input[k].w * m->spec.input[k].ch;
	float *f;

	XO_ASSERT(k >= 0 && k < m->spec.ninputs);
	if (!m->spec.in_int || m->spec.in_ids != k) {
		if (a->is_int)
			return xo_error(XO_EINVAL,
			                "%s: integer (%s) values for a float32 model input (only an "
			                "input of dtype=int32, an embedding's, takes ids)",
			                path, a->dtype ? a->dtype : a->itemsize == 8 ? "int64" : "int32");
		return XO_OK;
	}
	if (!a->is_int)
		return xo_error(XO_EINVAL,
		                "%s: float values for the int32 ids of embedding '%s' (save the "
		                "ids as int32 or int64: np.asarray(x, dtype='int32'))",
		                path, m->layers[0].s.name);
	vocab = m->layers[0].s.p.rows;
	for (int64_t j = 0; j < a->count; j++)
		if (a->ints[j] < 0 || a->ints[j] >= vocab)
			return xo_error(XO_EINVAL,
			                "%s: id %" PRId64 " of sample %" PRId64 ", step %" PRId64
			                " is outside [0, input_dim=%" PRId64 ") of embedding '%s'",
			                path, a->ints[j], j / per, j % per, vocab, m->layers[0].s.name);
	f = malloc(sizeof(*f) * (size_t)(a->count ? a->count : 1));
	if (!f)
		return xo_error(XO_ENOMEM, "%s: out of memory", path);
	for (int64_t j = 0; j < a->count; j++) /* below 2^24: exact */
		f[j] = (float)a->ints[j];
	free(a->ints);
	a->ints = NULL;
	a->data = f;
	a->is_int = false;
	a->itemsize = 4;
	return XO_OK;
}

/* A model of several inputs: each sample of x holds the inputs' samples
 * one after the other; t gets input 0's ns samples, then input 1's, ...
 * (each input's rows one tensor: plan_build's views, gather_x). */
static enum xo_status write_x_inputs(struct xo_model *m, struct xo_tensor *t, const float *x,
                                     int64_t ns, const char *what)
{
	int64_t off = 0;
	float *col = malloc(sizeof(*col) * (size_t)(ns * m->in_size + 1));
	enum xo_status st;

	if (!col)
		return xo_error(XO_ENOMEM, "%s: out of memory", what);
	for (int k = 0; k < m->spec.ninputs; k++) {
		const struct xo_input_spec *q = &m->spec.input[k];
		int64_t per = q->len * q->w * q->ch, vocab = m->layers[0].s.p.rows;

		for (int64_t i = 0; i < ns; i++)
			memcpy(col + off * ns + i * per, x + i * m->in_size + off,
			       sizeof(*col) * (size_t)per);
		/* the ids input: its values to their int32 bits (plan_build's I32
		 * view), each checked as xo_model_write_x checks one input's */
		for (int64_t e = 0; q->is_int && e < ns * per; e++) {
			float v = col[off * ns + e];
			int32_t id = (int32_t)v;

			if (!(v >= 0.0f && v < (float)vocab && v == floorf(v))) {
				free(col);
				return xo_error(XO_EINVAL,
				                "%s: id %g of sample %" PRId64 ", step %" PRId64
				                " is outside [0, input_dim=%" PRId64 ") of embedding '%s'",
				                what, (double)v, e / per, e % per, vocab,
				                m->layers[0].s.name);
			}
			memcpy(&col[off * ns + e], &id, sizeof(id));
		}
		off += per;
	}
	st = xo_tensor_write(t, col, 0, ns * m->in_size);
	free(col);
	return st;
}

/*
 * Writes ns samples of x (host floats, in_size each) to t from its element
 * 0. An int32 input (an embedding's ids) arrives as float values; each must
 * be an integer in [0, input_dim), else XO_EINVAL naming the sample and step
 * (the op would refuse it too, but here the message can say where it came
 * from); its int32 bits are what the device holds (plan_build's I32 view).
 * first is the number of x's first sample in the caller's data.
 */
enum xo_status xo_model_write_x(struct xo_model *m, struct xo_tensor *t, const float *x,
                                int64_t first, int64_t ns, const char *what)
{
	int64_t count = ns * m->in_size, vocab;
	int32_t *ids;
	enum xo_status st;

	if (m->spec.ninputs > 1)
		return write_x_inputs(m, t, x, ns, what);
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
double xo_model_accuracy_of(const struct xo_model *m, double correct, int64_t n)
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
	if (xo_model_ensure_cap(m, chunk) || xo_model_plan_build(m, chunk, false))
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
		st = xo_model_ensure_cap(m, batch_size < n ? batch_size : n);
	for (int64_t off = 0; !st && off < n; off += batch_size) {
		int64_t bs = n - off < batch_size ? n - off : batch_size;

		st = xo_model_plan_build(m, bs, false);
		if (!st)
			st = xo_model_write_x(m, m->xb, x + off * m->in_size, off, bs, "predict: x");
		if (!st)
			st = xo_model_infer(m, m->x_flat, NULL, NULL, NULL, NULL);
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
	st = xo_model_check_trainable(m, "evaluate");
	if (!st)
		st = xo_data_check_finite(x, n, m->in_size, "evaluate: x");
	if (!st)
		st = xo_model_check_labels(m, y, n, "evaluate: y");
	if (st)
		return st;
	steps = (n + batch_size - 1) / batch_size;
	st = xo_model_ensure_cap(m, batch_size < n ? batch_size : n);
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

		st = xo_model_plan_build(m, bs, false);
		if (!st)
			st = xo_model_write_x(m, m->xb, x + off * m->in_size, off, bs, "evaluate: x");
		if (!st)
			st = xo_model_labels_write(m, m->yb, y + off * m->lw, 0, bs);
		if (!st)
			st = xo_tensor_view(met, s, 1, (int64_t[]){1}, &lv);
		if (!st)
			st = xo_tensor_view(met, steps + s, 1, (int64_t[]){1}, &cv);
		if (!st)
			st = xo_model_infer(m, m->x_flat, NULL, m->y_in, lv, cv);
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
	*accuracy = xo_model_accuracy_of(m, csum, n);
out_free:
	free(host);
	xo_tensor_free(met);
	return st;
}

