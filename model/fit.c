/*
 * fit.c - Keras's fit on the sequential model: the data set resident on the
 * device, shuffled batches gathered there, per-epoch metrics read back once,
 * checkpoints of the best epoch (through modelfile.c); and the perf runner's
 * hooks (a resident batch, one timed step, per-layer profiles).
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
	/* the split: n samples, the first n_train trained on in steps
	 * batches of B, the rest validated; nsteps = steps + validation's */
	int64_t n, n_train, steps, nsteps, B;
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

/* fit's refusals before anything is allocated: the options, then x and y. */
static enum xo_status fit_check(const struct xo_model *m, const float *x, const float *y,
                                int64_t n, const struct xo_fit_options *o)
{
	enum xo_status st;

	st = xo_model_check_trainable(m, "fit");
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
	return st;
}

/* The data set on the device once (x, y, the order and metric tensors in
 * f) with every step's views; what it made is f's to free. */
static enum xo_status fit_upload(struct xo_model *m, struct fit_state *f, const float *x,
                                 const float *y)
{
	int64_t n = f->n, n_train = f->n_train, steps = f->steps, nsteps = f->nsteps, B = f->B;
	enum xo_status st;

	/* The data set goes to the device once. */
	st = xo_tensor_create(m->be, XO_DTYPE_F32, 2, (int64_t[]){n, m->in_size}, &f->xdata);
	if (!st)
		st = sparse(m) ? xo_tensor_create(m->be, XO_DTYPE_I32, 1, (int64_t[]){n}, &f->ydata)
		               : xo_tensor_create(m->be, XO_DTYPE_F32, 2,
		                                  (int64_t[]){n, m->classes}, &f->ydata);
	if (!st)
		st = xo_tensor_create(m->be, XO_DTYPE_I32, 1, (int64_t[]){n}, &f->perm);
	if (!st)
		st = xo_tensor_create(m->be, XO_DTYPE_F32, 1, (int64_t[]){2 * nsteps}, &f->met);
	if (!st)
		st = xo_model_write_x(m, f->xdata, x, 0, n, "fit: x");
	if (!st)
		st = xo_model_labels_write(m, f->ydata, y, 0, n);
	if (st)
		return st;
	if (sparse(m)) {
		f->host_ids = malloc(sizeof(*f->host_ids) * (size_t)n);
		f->host_ord = malloc(sizeof(*f->host_ord) * (size_t)n);
		if (!f->host_ids || !f->host_ord)
			return xo_error(XO_ENOMEM, "fit: out of memory");
		for (int64_t i = 0; i < n; i++)
			f->host_ids[i] = (int32_t)y[i];
	}
	f->host_idx = malloc(sizeof(*f->host_idx) * (size_t)n);
	f->host_met = malloc(sizeof(*f->host_met) * (size_t)(2 * nsteps));
	f->nviews = 4 * nsteps;
	f->views = calloc((size_t)f->nviews, sizeof(*f->views));
	if (!f->host_idx || !f->host_met || !f->views)
		return xo_error(XO_ENOMEM, "fit: out of memory");
	/* perm holds the training order in [0, n_train) and the validation
	 * rows (in order) in [n_train, n), so every step picks its batch with
	 * one gather from the resident data set. */
	for (int64_t s = 0; !st && s < nsteps; s++) {
		int64_t first = s < steps ? s * B : n_train + (s - steps) * B;
		int64_t end = s < steps ? n_train : n;
		int64_t bs = end - first < B ? end - first : B;

		st = xo_tensor_view(f->perm, first, 1, &bs, &f->views[4 * s]);
		if (!st)
			st = xo_tensor_view(f->met, s, 1, (int64_t[]){1}, &f->views[4 * s + 1]);
		if (!st)
			st = xo_tensor_view(f->met, nsteps + s, 1, (int64_t[]){1},
			                    &f->views[4 * s + 2]);
		if (!st && sparse(m))
			st = xo_tensor_view(f->ydata, first, 1, &bs, &f->views[4 * s + 3]);
	}
	for (int64_t i = 0; i < n; i++)
		f->host_idx[i] = (int32_t)i;
	if (!st)
		st = xo_tensor_write(f->perm, f->host_idx, 0, n);
	return st;
}

/* Epoch e's steps and validation, up to its one read of the metrics into
 * f->host_met (a loss that is not finite refused); *t1 the end of its
 * training steps, in now_ms's time. */
static enum xo_status fit_epoch(struct xo_model *m, struct fit_state *f,
                                const struct xo_fit_options *o, int e, double *t1)
{
	int64_t n_train = f->n_train, steps = f->steps, nsteps = f->nsteps;
	enum xo_status st = XO_OK;

	if (o->shuffle) {
		xo_philox_shuffle(f->host_idx, n_train, o->seed, XO_STREAM_SHUFFLE,
		                  (uint32_t)e);
		st = xo_tensor_write(f->perm, f->host_idx, 0, n_train);
		if (!st && sparse(m)) {
			for (int64_t i = 0; i < n_train; i++)
				f->host_ord[i] = f->host_ids[f->host_idx[i]];
			st = xo_tensor_write(f->ydata, f->host_ord, 0, n_train);
		}
	}
	if (!st && m->order_fn)
		st = order_report(m, f->perm, n_train, e);
	for (int64_t s = 0; !st && s < steps; s++) {
		int64_t bs = xo_tensor_nelem(f->views[4 * s]);

		st = xo_model_plan_build(m, bs, true);
		if (!st)
			st = xo_model_step(m, f->xdata, f->views[4 * s],
			                   sparse(m) ? f->views[4 * s + 3] : f->ydata,
			                   f->views[4 * s + 1], f->views[4 * s + 2]);
	}
	if (!st)
		st = xo_backend_sync(m->be);
	*t1 = now_ms();
	for (int64_t s = steps; !st && s < nsteps; s++) {
		int64_t bs = xo_tensor_nelem(f->views[4 * s]);

		st = xo_model_plan_build(m, bs, false);
		if (!st)
			st = xo_model_infer(m, f->xdata, f->views[4 * s],
			                    sparse(m) ? f->views[4 * s + 3] : f->ydata,
			                    f->views[4 * s + 1], f->views[4 * s + 2]);
	}
	/* The one read of the epoch: every step's loss and correct count. */
	if (!st)
		st = xo_tensor_read(f->met, f->host_met, 0, 2 * nsteps);
	if (st)
		return st;
	/* Keras's TerminateOnNaN, per epoch (the one read): a step whose
	 * loss is not finite stops training before anything is saved, so
	 * the last checkpoint stays the last good one. */
	for (int64_t s = 0; s < nsteps; s++)
		if (!isfinite(f->host_met[s])) {
			st =
			    xo_error(XO_EINVAL,
			             "fit: the %s loss became %s at epoch %d, step %" PRId64
			             ": training stopped; %s",
			             s < steps ? "training" : "validation",
			             isnan(f->host_met[s]) ? "NaN" : "Inf", e,
			             (s < steps ? s : s - steps) + 1,
			             o->checkpoint_dir ? "the last saved checkpoint is kept"
			                               : "nothing saved");
			break;
		}
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
	st = fit_check(m, x, y, n, o);
	if (st)
		return st;
	B = o->batch_size;
	/* Keras: split_at = floor(n * (1 - validation_split)); the validation
	 * part is the last n - split_at samples, taken before any shuffling. */
	n_train = n;
	if (o->validation_split > 0.0f)
		n_train = (int64_t)floor((double)n * (1.0 - xo_float_as_decimal(o->validation_split)));
	n_val = n - n_train;
	if (o->validation_split > 0.0f && (n_train < 1 || n_val < 1))
		return xo_error(XO_EINVAL,
		                "fit: %" PRId64 " samples cannot be split with validation_split=%g",
		                n, (double)o->validation_split);
	steps = (n_train + B - 1) / B;
	vsteps = (n_val + B - 1) / B;
	nsteps = steps + vsteps;
	st = xo_model_ensure_cap(m, B < n_train ? B : n_train);
	if (!st)
		st = xo_model_ensure_cap(m, B < n_val ? B : n_val);
	if (st)
		return st;

	f.n = n;
	f.n_train = n_train;
	f.steps = steps;
	f.nsteps = nsteps;
	f.B = B;
	st = fit_upload(m, &f, x, y);
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

		st = fit_epoch(m, &f, o, e, &t1);
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
		log.accuracy = xo_model_accuracy_of(m, csum, n_train);
		log.no_metric = m->metric_op == XO_OP_COUNT;
		if (n_val) {
			log.val_loss = vlsum / (double)n_val;
			log.val_accuracy = xo_model_accuracy_of(m, vcsum, n_val);
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
	xo_model_plan_free(m);
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
	st = xo_model_ensure_cap(m, batch);
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
	st = xo_model_write_x(m, m->xb, x, 0, batch, "bench: x");
	if (!st)
		st = xo_model_labels_write(m, m->yb, y, 0, batch);
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
	st = xo_model_check_trainable(m, "bench train step");
	if (!st)
		st = xo_model_plan_build(m, m->bench_n, true);
	if (!st)
		st = xo_model_step(m, m->x_flat, NULL, m->y_in, m->sc_loss, m->sc_correct);
	if (!st)
		st = xo_backend_sync(m->be);
	return st;
}

enum xo_status xo_model_bench_predict(struct xo_model *m)
{
	enum xo_status st;

	if (!m || !m->bench_n || m->bench_n > m->cap)
		return xo_error(XO_EINVAL, "bench: call xo_model_bench_prepare first");
	st = xo_model_plan_build(m, m->bench_n, false);
	if (!st)
		st = xo_model_infer(m, m->x_flat, NULL, NULL, NULL, NULL);
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

