/*
 * seed.c - `xo seed [--model FILE] [--data X.npy Y.npy] [--device D ...]
 * [--epochs N] [--batch-size N] [--predict-batch N] [--seed S] [--json]
 * [--db FILE]`: the seed
 * experiment of DESIGN section 1 on each device, then a side-by-side table.
 *
 * Model: the seed (built in), or --model FILE, a spec or a Keras .keras/.h5
 * (a Keras file trains from its own weights, as `xo train` does; a spec from
 * --seed). Data (the same for every device, from --seed): 20000 samples, x
 * uniform in [0, 1) of the model's input shape (29 values for the seed),
 * labels uniform in 0..classes-1, one-hot (Philox, streams
 * XO_STREAM_SEED_DATA/_SPLIT: the seed model's data is the same as before
 * --model existed); or --data X.npy Y.npy, the user's arrays, checked as
 * `xo train` checks them. Either way a shuffled 80/20 train/test split
 * (16000/4000 for the synthetic data). fit(batch_size=512, epochs=10,
 * validation_split=0.2) with a checkpoint of the best val_accuracy in a
 * temporary directory; the best weights are loaded again and the 4000 test
 * samples predicted at batch 32 (Keras's default, as the seed ran:
 * predict_s; --predict-batch N times that at batch N instead, e.g. the
 * training batch, as scripts/zoo.py's lstm workload does) and as one batch
 * (predict_s_one_batch), each --repeat times (default 9) after a warm-up.
 *
 * Figures: train_ms_per_step and epoch_ms are medians over the epochs (the
 * first epoch carries warm-up), predict_s and predict_s_one_batch medians of
 * the repeats; the table gives each with the distribution-free 95% interval
 * of the median (xo_perf_summarize, as `xo perf record`) and marks a "vs
 * best" ratio whose intervals overlap the best device's with '~'; for OpenCL devices the per-step split
 * (enqueue, h2d, kernel, d2h, wait) and launches come from 5 extra training
 * steps on a resident batch after the run, and the kernel time per layer
 * from one step with each op synced on its own.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "xo/model_spec.h"
#include "cmd.h"
#include "explain.h"
#include "perfdb.h"
#include "xo.h"

#define SEED_SAMPLES       20000
#define SEED_MIN_SAMPLES   5 /* the 80/20 split and validation_split 0.2 each keep >= 1 */
#define SEED_PREDICT_BATCH 32
#define MAX_DEVICES        8
#define SPLIT_STEPS        5 /* extra training steps that measure the OpenCL split */
#define MAX_REPEAT         101

static const char usage[] =
    "usage: xo seed [--model FILE] [--data X.npy [X2.npy ...] Y.npy] [--device D ...]\n"
    "               [--epochs N]\n"
    "               [--batch-size N] [--predict-batch N] [--seed S] [--repeat N] [--json]\n"
    "               [--db FILE]\n"
    "  --model FILE: a spec or a Keras .keras/.h5 (default: the seed model); a\n"
    "  Keras file trains from its own weights\n"
    "  --data X.npy Y.npy: the user's samples and labels (one-hot or class ids)\n"
    "  instead of synthetic data (uniform x, uniform labels; 20000 samples); a\n"
    "  model of several inputs takes one X file per input, in its order\n"
    "  D: ref, cpu, cl or cl:PLATFORM:DEVICE (default: every device that opens)\n"
    "  --repeat N: predict timed N times (default 9) after a warm-up; the table\n"
    "  gives medians with their 95% interval, and a ratio whose intervals\n"
    "  overlap the best device's is marked '~' (no difference shown)\n"
    "  --predict-batch N: predict_s timed at batch N (default 32, Keras's)\n";

struct seed_data {
	float *xtr, *ytr, *xte, *yte; /* 80% train, 20% test */
	int64_t ntr, nte;
	int64_t per, classes; /* values of one sample, classes */
	int32_t *lte;         /* test labels */
};

/* The model the experiment runs: path NULL is the built-in seed. */
struct seed_model {
	const char *path;
	bool keras;              /* a Keras file: its weights, not --seed's */
	char name[64], arch[24]; /* as the perf store names it (perfdb/modelid.c) */
};

struct seed_result {
	char device[64];
	char desc[512];
	int epochs;
	double train_ms_per_step, epoch_ms;
	double predict_s, predict_s_one_batch;
	double val_accuracy, test_accuracy;
	double peak_rss_mb;
	/* the cost model's probe runs in a child on cpu (cli/
	 * probe_child.c); the process's own peak after it, and the child's */
	bool probe_in_child;
	double process_peak_rss_mb, probe_peak_rss_mb;
	bool is_cl;
	/* Per training step at the seed batch, data resident: [0] the path the
	 * run takes (fused when the backend runs the whole net), [1] op by op. */
	struct step_split {
		double launches, enqueue_ms, h2d_ms, kernel_ms, d2h_ms, wait_ms, wall_ms;
		uint64_t untimed_events; /* events of the measured steps with no times */
	} split[2];
	bool fused;
	int64_t split_batch;
	int nlayers;
	char layer_names[16][64];
	double layer_ms[16];
	double extra_ms;
	int nsteps;                /* epochs recorded in step_ms */
	double step_ms[1000];      /* training ms/step of each epoch (for --db) */
	/* Predict timed --repeat times after a warm-up (the accuracy run), at
	 * batch 32 and as one batch, alternating; predict_s and
	 * predict_s_one_batch are the medians, the summaries carry the 95%
	 * interval of the median, as `xo perf record` reports it. */
	int repeat;
	int64_t predict_batch; /* the batch of predict_s (--predict-batch, default 32) */
	double p32_s[MAX_REPEAT], p1_s[MAX_REPEAT];
	struct xo_perf_summary s32, s1, sstep;
	/* the training step at the seed batch, measured split and
	 * the one-sentence diagnosis (perfdb/split.h); predicted by the cost
	 * model from a ~1 s probe where the backend has one (NAN otherwise) */
	char diagnosis[256];
	double predicted_ms_per_step;
	double predicted_serial_ms;    /* of it: recurrent time steps run in series */
	double predicted_serial_steps; /* time steps in series per training step */
	char predicted_diagnosis[256];
};

struct epoch_sink {
	double *ms_per_step, *epoch_ms;
	double best_val;
	int count;
	FILE *out;
};

/* Resets the kernel's peak-RSS mark of this process (Linux clear_refs "5"),
 * so each device's peak is its own; false when not possible. */
static bool peak_rss_reset(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	bool ok;

	if (!f)
		return false;
	ok = fputs("5", f) >= 0;
	return !fclose(f) && ok;
}

static double peak_rss_mb(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	struct rusage ru;

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "VmHWM:", 6)) {
				fclose(f);
				return strtod(line + 6, NULL) / 1024.0;
			}
		fclose(f);
	}
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

static void seed_data_free(struct seed_data *d)
{
	free(d->xtr);
	free(d->ytr);
	free(d->xte);
	free(d->yte);
	free(d->lte);
}

/* Room for n samples split 80/20 (the test part n/5, at least 1). */
static int seed_data_alloc(struct seed_data *d, int64_t n, int64_t per, int64_t classes)
{
	memset(d, 0, sizeof(*d));
	d->per = per;
	d->classes = classes;
	d->nte = n / 5 > 0 ? n / 5 : 1;
	d->ntr = n - d->nte;
	d->xtr = malloc(sizeof(float) * (size_t)(d->ntr * per));
	d->ytr = calloc((size_t)(d->ntr * classes), sizeof(float));
	d->xte = malloc(sizeof(float) * (size_t)(d->nte * per));
	d->yte = calloc((size_t)(d->nte * classes), sizeof(float));
	d->lte = malloc(sizeof(int32_t) * (size_t)d->nte);
	if (!d->xtr || !d->ytr || !d->xte || !d->yte || !d->lte) {
		seed_data_free(d);
		return xo_usage_error("seed", "out of memory");
	}
	return 0;
}

/*
 * The shuffled 80/20 split of n samples x[n][per] with labels label[n]
 * (0..classes-1), from seed alone: sample perm[k] goes to row k of the
 * training part, then of the test part.
 */
static int seed_data_split(struct seed_data *d, uint64_t seed, int64_t n, const float *x,
                           const int32_t *label)
{
	int32_t *perm = malloc(sizeof(*perm) * (size_t)n);

	if (!perm)
		return xo_usage_error("seed", "out of memory");
	xo_philox_shuffle(perm, n, seed, XO_STREAM_SEED_SPLIT, 0);
	for (int64_t k = 0; k < n; k++) {
		int64_t src = perm[k];
		bool train = k < d->ntr;
		int64_t row = train ? k : k - d->ntr;
		float *dx = train ? d->xtr : d->xte, *dy = train ? d->ytr : d->yte;

		memcpy(dx + row * d->per, x + src * d->per, sizeof(float) * (size_t)d->per);
		dy[row * d->classes + label[src]] = 1.0f;
		if (!train)
			d->lte[row] = label[src];
	}
	free(perm);
	return 0;
}

/* The synthetic data set: SEED_SAMPLES samples, x uniform in [0, 1) (ids
 * uniform in [0, vocab) for an int32 input, vocab > 0), labels uniform in
 * 0..classes-1 (for the seed model, the seed experiment's). Its size is
 * the model's input size times SEED_SAMPLES: a few bytes of config can
 * declare an input of millions of values, so it is bounded as a model's
 * activations are (xo_model_memory_max) before anything is allocated. */
static int seed_data_make(const char *origin, uint64_t seed, int64_t per, int64_t classes,
                          int64_t vocab, struct seed_data *d)
{
	/* x, then its split copy (xtr, xte), the one-hot labels and the ids */
	double need = (double)SEED_SAMPLES *
	              (2.0 * (double)per * sizeof(float) + (double)classes * sizeof(float) +
	               2.0 * sizeof(int32_t));
	float *x;
	int32_t *label;
	int rc;

	memset(d, 0, sizeof(*d));
	if (need > (double)xo_model_memory_max())
		return xo_usage_error("seed",
		                      "%s: its synthetic data set (%d samples of %" PRId64
		                      " values) needs %.3g GiB, above the limit of %.3g GiB "
		                      "(XO_MODEL_MEMORY_MAX, in bytes; half the machine's memory "
		                      "by default); give the data with --data X.npy Y.npy",
		                      origin, SEED_SAMPLES, per, need / 1073741824.0,
		                      (double)xo_model_memory_max() / 1073741824.0);
	x = malloc(sizeof(*x) * (size_t)(SEED_SAMPLES * per));
	label = malloc(sizeof(*label) * SEED_SAMPLES);
	if (!x || !label) {
		free(x);
		free(label);
		return xo_usage_error("seed", "out of memory");
	}
	for (int64_t i = 0; i < SEED_SAMPLES; i++) {
		label[i] = (int32_t)(((uint64_t)xo_philox_u32(seed, XO_STREAM_SEED_DATA, 1,
		                                                (uint64_t)i) *
		                      (uint64_t)classes) >>
		                     32);
		for (int64_t e = 0; e < per; e++) {
			x[i * per + e] = xo_philox_uniform(seed, XO_STREAM_SEED_DATA, 0,
			                                   (uint64_t)(i * per + e));
			if (vocab) /* an id: floor(u * vocab), below vocab */
				x[i * per + e] = fminf(floorf(x[i * per + e] * (float)vocab),
				                       (float)(vocab - 1));
		}
	}
	rc = seed_data_alloc(d, SEED_SAMPLES, per, classes);
	if (!rc)
		rc = seed_data_split(d, seed, SEED_SAMPLES, x, label);
	if (rc)
		seed_data_free(d);
	free(x);
	free(label);
	return rc;
}

/* Y's labels as one-hot rows in *out (xo_cli_labels_one_hot) by the
 * model's loss: a sparse_categorical_crossentropy model takes class ids,
 * (n,) or (n, 1), as `xo train` does, and no one-hot rows; any other loss
 * one class per sample, as one-hot rows or class ids, since the seed
 * protocol scores a class per sample (argmax accuracy): a
 * binary_crossentropy model's multi-hot rows, which `xo train` takes, are
 * refused saying so. */
static int seed_labels(const struct xo_model *m, const struct xo_npy *y, int64_t n,
                       int64_t classes, const char *path, float **out)
{
	enum xo_loss loss = xo_model_compile(m)->loss;
	struct xo_npy ids = *y;
	char need[160];

	if (loss == XO_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY) {
		if (y->ndim == 2 && y->dim[0] == n && y->dim[1] == 1)
			ids.ndim = 1; /* (n, 1) ids read as (n,) */
		else if (y->ndim != 1)
			return xo_usage_error("seed",
			                      "%s: shape %s does not fit: "
			                      "sparse_categorical_crossentropy needs class ids (n,)",
			                      path, xo_npy_shape_str(y));
	}
	snprintf(need, sizeof(need),
	         "the seed protocol scores one class per sample: one 1 and zeros per row, or "
	         "class ids; a %s model's other labels train with xo train",
	         xo_loss_name(loss));
	return xo_cli_labels_one_hot("seed", &ids, n, classes, path,
	                             loss == XO_LOSS_CATEGORICAL_CROSSENTROPY ? NULL : need, out);
}

/* --data X.npy Y.npy: the user's arrays, checked as `xo train` checks them
 * (shape against the model's input, finite values, one-hot or class-id
 * labels), then split as the synthetic data. */
static int seed_data_read(const char *const *xpaths, int nx, const char *ypath, uint64_t seed,
                          const struct xo_model *m, int64_t classes, struct seed_data *d)
{
	const char *xpath = xpaths[0];
	struct xo_npy x = {0}, y = {0};
	float *onehot = NULL;
	int32_t *label = NULL;
	int64_t n, per = xo_model_input_size(m);
	int rc = 2;

	memset(d, 0, sizeof(*d));
	/* x: float32, or int32/int64 ids for an int32 input; a model of
	 * several inputs: one file each, joined per sample */
	if (xo_npy_read_labels(ypath, &y) || (nx == 1 && xo_model_input_count(m) == 1 &&
	                                      xo_npy_read_labels(xpath, &x))) {
		xo_usage_error("seed", "%s", xo_last_error());
		goto out;
	}
	if (xo_cli_npy_empty("seed", ypath, &y) ||
	    (nx == 1 && xo_model_input_count(m) == 1 && xo_cli_npy_empty("seed", xpath, &x)))
		goto out;
	if ((nx > 1 || xo_model_input_count(m) > 1) &&
	    xo_cli_inputs_join("seed", m, xpaths, nx, &x))
		goto out;
	n = x.ndim >= 2 ? x.dim[0] : 0;
	if (nx == 1 && xo_model_input_count(m) == 1 && xo_cli_input_rows(&x, m, 0) < 1) {
		xo_cli_input_mismatch("seed", xpath, &x, m, 0);
		goto out;
	}
	if (n < SEED_MIN_SAMPLES || n > INT32_MAX) {
		xo_usage_error("seed",
		               "%s: %" PRId64 " samples: the seed protocol needs %d to %d (an 80/20 "
		               "train/test split, then validation_split 0.2)",
		               xpath, n, SEED_MIN_SAMPLES, INT32_MAX);
		goto out;
	}
	if (xo_model_input_npy(m, &x, xpath) || xo_data_check_finite(x.data, n, per, xpath)) {
		xo_usage_error("seed", "%s", xo_last_error());
		goto out;
	}
	if (seed_labels(m, &y, n, classes, ypath, &onehot))
		goto out;
	label = malloc(sizeof(*label) * (size_t)n);
	if (!label) {
		xo_usage_error("seed", "out of memory");
		goto out;
	}
	for (int64_t i = 0; i < n; i++) {
		label[i] = 0;
		for (int64_t c = 1; c < classes; c++)
			if (onehot[i * classes + c] > onehot[i * classes + label[i]])
				label[i] = (int32_t)c;
	}
	rc = seed_data_alloc(d, n, per, classes);
	if (!rc)
		rc = seed_data_split(d, seed, n, x.data, label);
	if (rc)
		seed_data_free(d);
out:
	free(label);
	if (onehot != y.data)
		free(onehot);
	xo_npy_free(&x);
	xo_npy_free(&y);
	return rc;
}

static void on_epoch(void *user, const struct xo_epoch_log *log)
{
	struct epoch_sink *s = user;
	char line[256];

	xo_epoch_log_format(log, line, sizeof(line));
	fputs(line, s->out);
	fflush(s->out);
	s->ms_per_step[s->count] = log->ms_per_step;
	s->epoch_ms[s->count] = log->epoch_ms;
	s->count++;
	if (log->val_accuracy > s->best_val || isnan(s->best_val))
		s->best_val = log->val_accuracy;
}

/* Removes the temporary checkpoint directory (made by mkdtemp for this run
 * alone) and every file in it: the manifest and each layer's variables,
 * whatever the layer kinds. */
static void checkpoint_remove(const char *dir)
{
	char path[4200];
	struct dirent *e;
	DIR *dd = opendir(dir);

	while (dd && (e = readdir(dd))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		remove(path);
	}
	if (dd)
		closedir(dd);
	rmdir(dir);
}

/* The OpenCL split of SPLIT_STEPS training steps on the path m takes now. */
static enum xo_status step_split(struct xo_model *m, struct xo_backend *be, struct step_split *o)
{
	struct xo_backend_stats s;
	enum xo_status st;
	double t0;

	st = xo_model_bench_train_step(m); /* warm-up */
	if (st)
		return st;
	xo_backend_stats_reset(be);
	t0 = xo_now_s();
	for (int i = 0; i < SPLIT_STEPS && !st; i++)
		st = xo_model_bench_train_step(m);
	if (st)
		return st;
	o->wall_ms = (xo_now_s() - t0) * 1e3 / SPLIT_STEPS;
	xo_backend_stats_get(be, &s);
	o->launches = (double)s.launches / SPLIT_STEPS;
	o->enqueue_ms = (double)s.enqueue_ns / 1e6 / SPLIT_STEPS;
	o->h2d_ms = (double)s.h2d_ns / 1e6 / SPLIT_STEPS;
	o->kernel_ms = (double)s.kernel_ns / 1e6 / SPLIT_STEPS;
	o->d2h_ms = (double)s.d2h_ns / 1e6 / SPLIT_STEPS;
	o->wait_ms = (double)s.wait_ns / 1e6 / SPLIT_STEPS;
	o->untimed_events = s.untimed_events;
	return XO_OK;
}

/* The OpenCL split per training step on the fused path (when the backend
 * runs the whole net) and op by op, and the kernel time per layer (op by
 * op: a fused launch spans every layer). */
static enum xo_status measure_split(struct xo_model *m, struct xo_backend *be, int64_t batch,
                                    uint64_t seed, struct seed_result *r)
{
	uint64_t layer_ns[16], layer_launches[16], extra = 0;
	enum xo_status st;

	st = xo_model_bench_prepare(m, batch, seed);
	if (st)
		return st;
	r->fused = xo_model_fused(m, true);
	r->split_batch = batch;
	st = step_split(m, be, &r->split[0]);
	xo_model_set_fused(m, false);
	if (!st)
		st = step_split(m, be, &r->split[1]);
	xo_model_set_fused(m, true);
	if (st)
		return st;
	r->nlayers = xo_model_layer_count(m);
	if (r->nlayers > 16)
		r->nlayers = 16;
	if (xo_model_layer_count(m) > 16)
		return XO_OK;
	st = xo_model_bench_profile_step(m, layer_ns, layer_launches, &extra);
	if (st)
		return st;
	for (int i = 0; i < r->nlayers; i++) {
		snprintf(r->layer_names[i], sizeof(r->layer_names[i]), "%s",
		         xo_model_layer_name(m, i));
		r->layer_ms[i] = (double)layer_ns[i] / 1e6;
	}
	r->extra_ms = (double)extra / 1e6;
	return XO_OK;
}

/* The measured split of the training step at batch (cl: the event split of
 * the path the run takes; a host backend: all compute) and its sentence;
 * then the cost model's prediction from a short probe (0.5 s asked), where
 * there is one. */
static void diagnose(struct xo_model *m, struct xo_backend *be, int64_t batch,
                     struct seed_result *r)
{
	struct xo_layer_cost lc[16];
	struct xo_cost_step step;
	struct xo_split ms, ps;
	struct xo_probe probe, model;
	struct xo_cost_terms terms;
	double launches = 0, call_s;

	if (r->is_cl) {
		const struct step_split *q = &r->split[r->fused ? 0 : 1];

		launches = q->launches;
		xo_split_from_events(q->wall_ms / 1e3, q->enqueue_ms / 1e3, q->h2d_ms / 1e3,
		                     q->kernel_ms / 1e3, q->d2h_ms / 1e3, q->wait_ms / 1e3,
		                     q->launches, &ms);
	} else {
		xo_split_host(r->train_ms_per_step / 1e3, &ms);
	}
	r->predicted_ms_per_step = NAN;
	r->predicted_serial_ms = NAN;
	r->predicted_serial_steps = NAN;
	r->predicted_diagnosis[0] = 0;
	r->probe_peak_rss_mb = NAN;
	r->probe_in_child = xo_model_layer_count(m) <= 16 && !r->is_cl &&
	                    !xo_cli_probe_child(r->device, 0.5, &probe, &r->probe_peak_rss_mb);
	if (xo_model_layer_count(m) > 16 ||
	    (!r->probe_in_child && xo_backend_probe(be, 0.5, &probe))) {
		xo_split_diagnose(&ms, r->device, "train step", batch, r->diagnosis,
		                  sizeof(r->diagnosis));
		return;
	}
	for (int i = 0; i < xo_model_layer_count(m); i++)
		xo_model_layer_cost(m, i, &lc[i]);
	call_s = xo_explain_call_time(be);
	xo_explain_cost_step(m, lc, r->is_cl, true, batch, launches, xo_model_fused(m, true),
	                     r->is_cl ? 0 : call_s, &step);
	xo_explain_rnn_lanes(be, &step);
	xo_explain_model_probe(&probe, xo_explain_gemm_rate(be, call_s), &model);
	xo_cost_predict(&model, &step, &ps, &terms);
	/* on cl op by op, each layer's kernel time was profiled: a recurrent
	 * layer's is named serial steps when its time per step is nearer the
	 * probe's step than the roofline's (xo_cost_serial_measured) */
	if (r->is_cl && !r->fused) {
		double layer_s[16];

		for (int i = 0; i < r->nlayers; i++)
			layer_s[i] = r->layer_ms[i] / 1e3;
		xo_cost_serial_measured(&model, &step, layer_s, &ms);
	}
	xo_split_diagnose(&ms, r->device, "train step", batch, r->diagnosis,
	                  sizeof(r->diagnosis));
	r->predicted_ms_per_step = ps.wall_s * 1e3;
	r->predicted_serial_ms = terms.serial_s * 1e3;
	r->predicted_serial_steps = terms.serial_steps;
	xo_split_diagnose(&ps, r->device, "train step", batch, r->predicted_diagnosis,
	                  sizeof(r->predicted_diagnosis));
}

/* The whole experiment on one device. Returns 0, or 2 after one line. */
/* The test accuracy from a predict at pbatch (the warm-up of the timed runs),
 * then predict timed repeat times at pbatch and as one batch, alternating
 * (after one more warm-up of the latter): their medians and intervals in r,
 * printed to out. probs holds d->nte rows. 0, or 2 after printing why. */
static int seed_predict(struct xo_model *m, const char *spec, const struct seed_data *d,
			int64_t pbatch, int repeat, float *probs, FILE *out, struct seed_result *r)
{
	int64_t correct = 0;
	double t0;

	/* the accuracy run is the warm-up of the timed repeats below */
	if (xo_model_predict(m, d->xte, d->nte, pbatch, probs))
		return xo_usage_error("seed", "%s: %s", spec, xo_last_error());
	for (int64_t i = 0; i < d->nte; i++) {
		int best = 0;

		for (int c = 1; c < d->classes; c++)
			if (probs[i * d->classes + c] > probs[i * d->classes + best])
				best = c;
		correct += best == d->lte[i];
	}
	if (xo_model_predict(m, d->xte, d->nte, d->nte, probs)) /* warm-up */
		return xo_usage_error("seed", "%s: %s", spec, xo_last_error());
	r->repeat = repeat;
	r->predict_batch = pbatch;
	for (int k = 0; k < repeat; k++) {
		t0 = xo_now_s();
		if (xo_model_predict(m, d->xte, d->nte, pbatch, probs))
			return xo_usage_error("seed", "%s: %s", spec, xo_last_error());
		r->p32_s[k] = xo_now_s() - t0;
		t0 = xo_now_s();
		if (xo_model_predict(m, d->xte, d->nte, d->nte, probs))
			return xo_usage_error("seed", "%s: %s", spec, xo_last_error());
		r->p1_s[k] = xo_now_s() - t0;
	}
	{
		double v[MAX_REPEAT];

		memcpy(v, r->p32_s, sizeof(double) * (size_t)repeat);
		xo_perf_summarize(v, (size_t)repeat, &r->s32);
		memcpy(v, r->p1_s, sizeof(double) * (size_t)repeat);
		xo_perf_summarize(v, (size_t)repeat, &r->s1);
	}
	r->predict_s = r->s32.median;
	r->predict_s_one_batch = r->s1.median;
	fprintf(out,
	        "Predict %" PRId64 " samples in %.4f s [%.4f, %.4f], %.3g s on avg (batch %d; "
	        "median of %d)\n",
	        d->nte, r->predict_s, r->s32.ci_lo, r->s32.ci_hi, r->predict_s / (double)d->nte,
	        (int)pbatch, repeat);
	fprintf(out,
	        "Predict %" PRId64 " samples in %.4f s [%.4f, %.4f], %.3g s on avg (one batch; "
	        "median of %d)\n",
	        d->nte, r->predict_s_one_batch, r->s1.ci_lo, r->s1.ci_hi,
	        r->predict_s_one_batch / (double)d->nte, repeat);
	r->test_accuracy = (double)correct / (double)d->nte;
	return 0;
}

static int run_device(const char *spec, const struct seed_model *sm, const struct seed_data *d,
                      int epochs, int64_t batch, int64_t pbatch, uint64_t seed, int repeat,
                      bool json, struct seed_result *r)
{
	FILE *out = json ? stderr : stdout;
	double ms_per_step[1000], epoch_ms[1000];
	struct epoch_sink sink = {ms_per_step, epoch_ms, NAN, 0, out};
	struct xo_fit_options o = xo_fit_options_default();
	struct xo_backend *be = NULL;
	struct xo_model *m = NULL;
	float *ids = NULL; /* class ids of the training labels (sparse loss) */
	char tmpl[] = "/tmp/xo-seed-XXXXXX", *dir = NULL;
	float *probs = NULL;
	int rc = 2;

	memset(r, 0, sizeof(*r));
	peak_rss_reset();
	if (xo_backend_open(spec, &be))
		return xo_usage_error("seed", "%s", xo_last_error());
	snprintf(r->device, sizeof(r->device), "%s", spec);
	snprintf(r->desc, sizeof(r->desc), "%s", xo_backend_describe(be));
	r->is_cl = !strcmp(xo_backend_name(be), "cl");
	r->epochs = epochs;
	fprintf(out, "== %s: %s\n", spec, r->desc);
	if (r->is_cl && xo_perf_cl_on_cpu(r->desc))
		fprintf(out, "%s (PoCL or another CPU device)\n", XO_PERF_NO_GPU);
	if ((sm->path ? xo_model_open(sm->path, be, batch > d->nte ? batch : d->nte, &m)
	              : xo_model_open_string(xo_model_seed_spec, "seed.model", be,
	                                     batch > d->nte ? batch : d->nte, &m)) ||
	    (!sm->keras && xo_model_init(m, seed))) {
		xo_usage_error("seed", "%s", xo_last_error());
		goto out_free;
	}
	dir = mkdtemp(tmpl);
	if (!dir) {
		xo_usage_error("seed", "cannot create a checkpoint directory: %s", strerror(errno));
		goto out_free;
	}
	probs = malloc(sizeof(*probs) * (size_t)(d->nte * d->classes));
	if (!probs) {
		xo_usage_error("seed", "out of memory");
		goto out_free;
	}
	o.epochs = epochs;
	o.batch_size = batch;
	o.validation_split = 0.2f;
	o.shuffle = true;
	o.seed = seed;
	o.checkpoint_dir = dir;
	/* A model compiled with sparse_categorical_crossentropy takes class
	 * ids: the one-hot rows' ids (the data are the same). */
	if (xo_model_label_width(m) != d->classes) {
		ids = malloc(sizeof(*ids) * (size_t)d->ntr);
		if (!ids) {
			xo_usage_error("seed", "out of memory");
			goto out_free;
		}
		for (int64_t i = 0; i < d->ntr; i++) {
			ids[i] = 0.0f;
			for (int64_t c = 0; c < d->classes; c++)
				if (d->ytr[i * d->classes + c] == 1.0f)
					ids[i] = (float)c;
		}
	}
	if (xo_model_fit(m, d->xtr, ids ? ids : d->ytr, d->ntr, &o, on_epoch, &sink) ||
	    xo_model_load_weights(m, dir)) {
		xo_usage_error("seed", "%s: %s", spec, xo_last_error());
		goto out_free;
	}
	if (seed_predict(m, spec, d, pbatch, repeat, probs, out, r))
		goto out_free;
	r->val_accuracy = sink.best_val;
	r->nsteps = sink.count;
	memcpy(r->step_ms, ms_per_step, sizeof(double) * (size_t)sink.count);
	{
		double v[1000];

		memcpy(v, ms_per_step, sizeof(double) * (size_t)sink.count);
		xo_perf_summarize(v, (size_t)sink.count, &r->sstep);
	}
	r->train_ms_per_step = xo_median(ms_per_step, sink.count);
	r->epoch_ms = xo_median(epoch_ms, sink.count);
	if (r->is_cl && measure_split(m, be, batch, seed, r)) {
		xo_usage_error("seed", "%s: %s", spec, xo_last_error());
		goto out_free;
	}
	/* the experiment's peak, before the cost model's probe (its memory
	 * bandwidth buffers are not the experiment's) */
	r->peak_rss_mb = peak_rss_mb();
	diagnose(m, be, batch, r);
	r->process_peak_rss_mb = peak_rss_mb();
	rc = 0;
out_free:
	if (dir)
		checkpoint_remove(dir);
	free(probs);
	free(ids);
	xo_model_close(m);
	xo_backend_close(be);
	return rc;
}

/* "3.12 [3.05, 3.20]": a median with its 95% interval, in a field of w. */
static void fmt_ci(FILE *out, int w, const char *f, double scale, const struct xo_perf_summary *q)
{
	char num[32], lo[32], hi[32], buf[112];

	snprintf(num, sizeof(num), f, q->median * scale);
	snprintf(lo, sizeof(lo), f, q->ci_lo * scale);
	snprintf(hi, sizeof(hi), f, q->ci_hi * scale);
	snprintf(buf, sizeof(buf), "%s [%s, %s]", num, lo, hi);
	fprintf(out, " %*s", w, buf);
}

/* "1.02x~": the ratio of medians, '~' when the two intervals overlap (the
 * runs do not show a difference: a device against itself reads ~1.00x~). */
static void fmt_ratio(FILE *out, const struct xo_perf_summary *a, const struct xo_perf_summary *best)
{
	bool overlap = a->ci_lo <= best->ci_hi && best->ci_lo <= a->ci_hi;
	char buf[32];

	snprintf(buf, sizeof(buf), "%.2fx%s", a->median / best->median, overlap ? "~" : "");
	fprintf(out, " %9s", buf);
}

static void print_table(FILE *out, const struct seed_result *r, int n)
{
	int bt = 0, bp = 0;

	for (int i = 0; i < n; i++) {
		if (r[i].sstep.median < r[bt].sstep.median)
			bt = i;
		if (r[i].s32.median < r[bp].s32.median)
			bp = i;
	}
	fprintf(out, "\n%-10s %27s %10s %27s %27s %8s %8s %9s %9s %9s\n", "device",
	        "train ms/step [95% CI]", "epoch ms", "predict s [95% CI]", "predict s [95% CI]",
	        "val_acc", "test_acc", "peak RSS", "train", "predict");
	fprintf(out, "%-10s %27s %10s %27s %27s %8s %8s %9s %9s %9s\n", "", "(median of epochs)", "",
	        "(batch 32)", "(one batch)", "", "", "MB", "vs best", "vs best");
	for (int i = 0; i < n; i++) {
		fprintf(out, "%-10s", r[i].device);
		fmt_ci(out, 27, "%.3f", 1.0, &r[i].sstep);
		fprintf(out, " %10.1f", r[i].epoch_ms);
		fmt_ci(out, 27, "%.4f", 1.0, &r[i].s32);
		fmt_ci(out, 27, "%.4f", 1.0, &r[i].s1);
		fprintf(out, " %8.4f %8.4f %9.1f", r[i].val_accuracy, r[i].test_accuracy,
		        r[i].peak_rss_mb);
		fmt_ratio(out, &r[i].sstep, &r[bt].sstep);
		fmt_ratio(out, &r[i].s32, &r[bp].s32);
		fprintf(out, "\n");
	}
	if (n)
		fprintf(out, "medians with the distribution-free 95%% interval of the median (as `xo "
		        "perf record`): %d epochs, predict %d times after a warm-up;\n'~': the "
		        "intervals overlap the best device's, the runs show no difference\n",
		        r[0].nsteps, r[0].repeat);
	for (int i = 0; i < n; i++) {
		if (!r[i].is_cl)
			continue;
		for (int k = 0; k < 2; k++) {
			const struct step_split *q = &r[i].split[k];

			if (k == 0 && !r[i].fused)
				continue;
			fprintf(out,
			        "%s%s per training step (%s, batch %lld, data resident): %.3f ms wall, "
			        "%.1f launches, enqueue %.3f ms, h2d %.3f ms, kernel %.3f ms, "
			        "d2h %.3f ms, wait %.3f ms\n",
			        k == 0 || !r[i].fused ? "\n" : "", r[i].device,
			        k == 0 ? "fused network" : "op by op", (long long)r[i].split_batch, q->wall_ms,
			        q->launches, q->enqueue_ms, q->h2d_ms, q->kernel_ms, q->d2h_ms,
			        q->wait_ms);
			if (q->untimed_events)
				fprintf(out,
				        "%s: %llu OpenCL events of these steps had no readable times "
				        "(untimed_events); the split above is missing their time\n",
				        r[i].device, (unsigned long long)q->untimed_events);
		}
		fprintf(out, "%s kernel time per layer (one step, fwd + bwd):", r[i].device);
		for (int l = 0; l < r[i].nlayers; l++)
			fprintf(out, " %s %.3f ms,", r[i].layer_names[l], r[i].layer_ms[l]);
		fprintf(out, " loss+accuracy+adam %.3f ms\n", r[i].extra_ms);
	}
	if (n)
		fprintf(out, "\ndiagnosis (training step, perfdb/split.h; docs/explain.md):\n");
	for (int i = 0; i < n; i++) {
		fprintf(out, "  %s", r[i].diagnosis);
		if (isfinite(r[i].predicted_ms_per_step)) {
			/* the predicted sentence without the shared "at batch N
			 * the D train step is " */
			const char *p = r[i].predicted_diagnosis, *q = strstr(p, " train step is ");

			fprintf(out, "; the cost model predicts %.3f ms/step, %s",
			        r[i].predicted_ms_per_step, q ? q + strlen(" train step is ") : p);
		}
		fprintf(out, "\n");
	}
	for (int i = 0; i < n; i++)
		if (r[i].probe_in_child)
			fprintf(out, "peak RSS on %s: %.1f MB the experiment, %.1f MB the process "
			        "(the diagnosis's probe ran in a child: %.1f MB)\n",
			        r[i].device, r[i].peak_rss_mb, r[i].process_peak_rss_mb,
			        r[i].probe_peak_rss_mb);
	for (int i = 0; i < n; i++)
		if (r[i].is_cl && xo_perf_cl_on_cpu(r[i].desc)) {
			fprintf(out, "%s: the cl column is not a GPU's; for a GPU, %s\n",
			        XO_PERF_NO_GPU, XO_PERF_GPU_INSTALL);
			break;
		}
}

static void json_number(const char *key, double v, bool comma)
{
	if (isfinite(v))
		printf("\"%s\": %.6g%s", key, v, comma ? ", " : "");
	else
		printf("\"%s\": null%s", key, comma ? ", " : "");
}

static void print_json(const struct seed_model *sm, const struct seed_result *r, int n,
                       int64_t npredict)
{
	printf("[\n");
	for (int i = 0; i < n; i++) {
		printf("  {\"model\": ");
		xo_cli_json_string(sm->path ? sm->path : "seed");
		printf(", \"device\": ");
		xo_cli_json_string(r[i].device);
		printf(", \"description\": ");
		xo_cli_json_string(r[i].desc);
		printf(", \"epochs\": %d, ", r[i].epochs);
		json_number("train_ms_per_step", r[i].train_ms_per_step, true);
		json_number("epoch_ms", r[i].epoch_ms, true);
		json_number("predict_s", r[i].predict_s, true);
		json_number("predict_s_one_batch", r[i].predict_s_one_batch, true);
		printf("\"repeat\": %d, ", r[i].repeat);
		json_number("train_ms_per_step_ci_lo", r[i].sstep.ci_lo, true);
		json_number("train_ms_per_step_ci_hi", r[i].sstep.ci_hi, true);
		json_number("predict_s_ci_lo", r[i].s32.ci_lo, true);
		json_number("predict_s_ci_hi", r[i].s32.ci_hi, true);
		json_number("predict_s_one_batch_ci_lo", r[i].s1.ci_lo, true);
		json_number("predict_s_one_batch_ci_hi", r[i].s1.ci_hi, true);
		printf("\"predict_samples\": %" PRId64 ", ", npredict);
		printf("\"predict_batch\": %" PRId64 ", ", r[i].predict_batch);
		json_number("val_accuracy", r[i].val_accuracy, true);
		json_number("test_accuracy", r[i].test_accuracy, true);
		printf("\"diagnosis\": ");
		xo_cli_json_string(r[i].diagnosis);
		printf(", ");
		json_number("predicted_train_ms_per_step", r[i].predicted_ms_per_step, true);
		json_number("predicted_serial_ms", r[i].predicted_serial_ms, true);
		json_number("predicted_serial_steps", r[i].predicted_serial_steps, true);
		printf("\"predicted_diagnosis\": ");
		if (r[i].predicted_diagnosis[0])
			xo_cli_json_string(r[i].predicted_diagnosis);
		else
			printf("null");
		printf(", ");
		printf("\"probe_in_child\": %s, ", r[i].probe_in_child ? "true" : "false");
		json_number("process_peak_rss_mb", r[i].process_peak_rss_mb, true);
		json_number("probe_peak_rss_mb", r[i].probe_peak_rss_mb, true);
		json_number("peak_rss_mb", r[i].peak_rss_mb, r[i].is_cl);
		if (r[i].is_cl) {
			const struct step_split *q = &r[i].split[r[i].fused ? 0 : 1];

			printf("\"fused\": %s, ", r[i].fused ? "true" : "false");
			json_number("launches_per_step", q->launches, true);
			json_number("step_wall_ms", q->wall_ms, true);
			json_number("enqueue_ms", q->enqueue_ms, true);
			json_number("h2d_ms", q->h2d_ms, true);
			json_number("kernel_ms", q->kernel_ms, true);
			json_number("d2h_ms", q->d2h_ms, true);
			json_number("wait_ms", q->wait_ms, true);
			printf("\"untimed_events\": %llu, ",
			       (unsigned long long)(r[i].split[0].untimed_events +
			                            r[i].split[1].untimed_events));
			json_number("op_by_op_launches_per_step", r[i].split[1].launches, true);
			json_number("op_by_op_step_wall_ms", r[i].split[1].wall_ms, true);
			printf("\"layer_kernel_ms\": {");
			for (int l = 0; l < r[i].nlayers; l++) {
				xo_cli_json_string(r[i].layer_names[l]);
				printf(": %.6g, ", r[i].layer_ms[l]);
			}
			printf("\"loss_accuracy_adam\": %.6g}", r[i].extra_ms);
		}
		printf("}%s\n", i + 1 < n ? "," : "");
	}
	printf("]\n");
}

/* True when spec names a backend compiled into this build. */
static bool known_device(const char *spec)
{
	size_t len = strcspn(spec, ":");

	for (int i = 0; i < xo_backend_count(); i++)
		if (strlen(xo_backend_kind(i)) == len && !strncmp(xo_backend_kind(i), spec, len))
			return true;
	return false;
}

/* One stored benchmark of the experiment: samples are per-call wall times. */
static void seed_bench(struct xo_perf_result *x, const struct seed_model *sm, const char *device,
                       const char *what, int64_t batch, double *samples_s, size_t n)
{
	memset(x, 0, sizeof(*x));
	snprintf(x->b.name, sizeof(x->b.name), "model/%s/%s/b%" PRId64 "/%s", sm->name, what,
	         batch, device);
	snprintf(x->b.kind, sizeof(x->b.kind), "model");
	snprintf(x->b.device, sizeof(x->b.device), "%s", device);
	snprintf(x->b.what, sizeof(x->b.what), "%s", what);
	snprintf(x->b.model, sizeof(x->b.model), "%s", sm->name);
	snprintf(x->b.params, sizeof(x->b.params),
	         "model=%s batch=%" PRId64 " source=xo-seed arch=%s", sm->name, batch, sm->arch);
	snprintf(x->b.version, sizeof(x->b.version), "xo-seed");
	x->b.batch = batch;
	x->reps = 1;
	x->n = n;
	x->samples = calloc(n, sizeof(*x->samples));
	for (size_t i = 0; x->samples && i < n; i++)
		x->samples[i].wall_s = samples_s[i];
}

/*
 * --db: the experiment's own timings as one run of the perf store, beside
 * what `xo perf record` measures: per device, the training step as fit ran it
 * (one sample per epoch), and predict per call at batch 32 and as one batch
 * (one sample per --repeat).
 */
static int store_results(struct xo_perfdb *db, const struct seed_model *sm,
                         const struct seed_result *r, int n, int64_t batch, int64_t npredict)
{
	struct xo_perf_result *res = calloc((size_t)n * 3, sizeof(*res));
	struct xo_perf_commit commit;
	struct xo_perf_testbed tb;
	enum xo_status st = XO_OK;
	int64_t run_id = 0;
	size_t nres = 0;

	if (!res)
		return xo_usage_error("seed", "--db: out of memory");
	if (!n) {
		free(res);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		double steps[1000], p32[MAX_REPEAT];
		int64_t pb = r[i].predict_batch, calls32 = (npredict + pb - 1) / pb;

		for (int k = 0; k < r[i].nsteps; k++)
			steps[k] = r[i].step_ms[k] * 1e-3;
		for (int k = 0; k < r[i].repeat; k++)
			p32[k] = r[i].p32_s[k] / (double)calls32;
		seed_bench(&res[nres++], sm, r[i].device, "fit_predict", pb, p32,
		           (size_t)r[i].repeat);
		seed_bench(&res[nres++], sm, r[i].device, "fit_step", batch, steps,
		           (size_t)r[i].nsteps);
		seed_bench(&res[nres++], sm, r[i].device, "fit_predict", npredict, (double *)r[i].p1_s,
		           (size_t)r[i].repeat);
	}
	for (size_t i = 0; i < nres; i++)
		if (!res[i].samples)
			st = xo_error(XO_ENOMEM, "out of memory");
	xo_perf_commit_of_build(&commit);
	xo_perf_testbed_probe(&tb);
	if (!st)
		st = xo_perfdb_run_write(db, &commit, &tb, "xo seed", res, nres, &run_id);
	for (size_t i = 0; i < nres; i++)
		free(res[i].samples);
	free(res);
	if (st)
		return xo_usage_error("seed", "--db: %s", xo_last_error());
	fprintf(stderr, "seed: stored as run %" PRId64 " (%zu benchmarks)\n", run_id, nres);
	return 0;
}

/* The command line of a seed run. */
struct seed_opts {
	const char *devices[MAX_DEVICES];
	int ndev;
	bool explicit_devices; /* --device given: a device that does not open is bad input */
	const char *db, *xpath, *ypath;
	/* --data's x files: one per model input, in its order (xpath the first) */
	const char *xpaths[XO_CLI_INPUTS_MAX];
	int nx;
	int64_t epochs, batch, pbatch, repeat;
	uint64_t seed;
	bool json;
};

/* One option a with its value val: 0, or 2 after printing why it is bad. */
static int seed_option(struct seed_opts *o, struct seed_model *sm, const char *a,
		       const char *val)
{
	int64_t v;

	if (!strcmp(a, "--model")) {
		sm->path = val;
	} else if (!strcmp(a, "--device")) {
		if (o->ndev == MAX_DEVICES)
			return xo_usage_error("seed", "at most %d devices", MAX_DEVICES);
		if (xo_cli_gpu_requested("seed", val))
			return 2;
		if (!known_device(val))
			return xo_usage_error("seed",
			                      "unknown device '%s' (ref, cpu, cl or "
			                      "cl:PLATFORM:DEVICE)",
			                      val);
		o->devices[o->ndev++] = val;
	} else if (!strcmp(a, "--epochs")) {
		if (!xo_cli_parse_i64(val, 1, 1000, &o->epochs))
			return xo_usage_error("seed", "--epochs %s: expected an integer in 1..1000",
					      val);
	} else if (!strcmp(a, "--batch-size")) {
		if (!xo_cli_parse_i64(val, 1, 12800, &o->batch))
			return xo_usage_error("seed",
			                      "--batch-size %s: expected an integer in "
			                      "1..12800",
			                      val);
	} else if (!strcmp(a, "--predict-batch")) {
		if (!xo_cli_parse_i64(val, 1, 12800, &o->pbatch))
			return xo_usage_error("seed",
			                      "--predict-batch %s: expected an integer in "
			                      "1..12800",
			                      val);
	} else if (!strcmp(a, "--seed")) {
		if (!xo_cli_parse_i64(val, 0, INT64_MAX, &v))
			return xo_usage_error("seed", "--seed %s: expected a non-negative integer",
					      val);
		o->seed = (uint64_t)v;
	} else if (!strcmp(a, "--repeat")) {
		if (!xo_cli_parse_i64(val, 1, MAX_REPEAT, &o->repeat))
			return xo_usage_error("seed", "--repeat %s: expected an integer in 1..%d",
					      val, MAX_REPEAT);
	} else if (!strcmp(a, "--db")) {
		o->db = val;
	} else {
		return xo_usage_error("seed", "unknown option '%s'", a);
	}
	return 0;
}

/* Reads the arguments into o and sm, then the device list (every backend
 * compiled in when none is named; a named one that does not open is
 * refused now, not after the devices before it have run for minutes): -1
 * to go on, else the exit status (0 after --help, 2 after bad input). */
static int seed_args(int argc, char **argv, struct seed_opts *o, struct seed_model *sm)
{
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!strcmp(a, "--json")) {
			o->json = true;
			continue;
		}
		if (!val)
			return xo_usage_error("seed", "unknown option or missing value: '%s'", a);
		if (!strcmp(a, "--data")) {
			/* "--data X.npy --device cpu" is a missing file, not
			 * a label file named --device */
			int nf = 0;

			while (i + 1 + nf < argc && strncmp(argv[i + 1 + nf], "--", 2))
				nf++;
			if (nf < 2)
				return xo_usage_error("seed", "--data needs two files: X.npy Y.npy");
			/* several x files (a model of several inputs), then y;
			 * past the most a model may have they are counted, and
			 * the count is refused against the model's own */
			o->nx = 0;
			while (o->nx < nf - 1) {
				if (o->nx < XO_CLI_INPUTS_MAX)
					o->xpaths[o->nx] = argv[i + 1];
				o->nx++;
				i++;
			}
			o->xpath = o->xpaths[0];
			o->ypath = argv[++i];
			continue;
		}
		if ((rc = seed_option(o, sm, a, val)))
			return rc;
		i++;
	}
	o->explicit_devices = o->ndev > 0;
	if (!o->explicit_devices)
		for (int i = 0; i < xo_backend_count() && o->ndev < MAX_DEVICES; i++)
			o->devices[o->ndev++] = xo_backend_kind(i);
	for (int i = 0; o->explicit_devices && i < o->ndev; i++) {
		struct xo_backend *be;

		if (xo_backend_open(o->devices[i], &be))
			return xo_usage_error("seed", "%s", xo_last_error());
		xo_backend_close(be);
	}
	return -1;
}

/* The model first (a bad file is refused before any data is read or made):
 * its name in the store, whether it is a Keras file, and its input size and
 * classes, which shape the data read (--data) or made. 0, or 2 after
 * printing why. */
static int seed_data_prepare(const struct seed_opts *o, struct seed_model *sm,
			     struct seed_data *data)
{
	struct xo_backend *be = NULL;
	struct xo_model *m = NULL;
	int64_t per = 0, classes = 0;
	int drc;

	if (xo_perf_model_ident(sm->path, sm->name, sizeof(sm->name), sm->arch,
	                        sizeof(sm->arch)) ||
	    xo_backend_open("ref", &be) ||
	    (sm->path ? xo_model_open(sm->path, be, 1, &m)
	              : xo_model_open_string(xo_model_seed_spec, "seed.model", be, 1, &m))) {
		xo_backend_close(be);
		return xo_usage_error("seed", "%s", xo_last_error());
	}
	per = xo_model_input_size(m);
	classes = xo_model_classes(m);
	sm->keras = sm->path && xo_keras_sniff(sm->path) != XO_KERAS_NONE;
	if (classes < 2) {
		xo_model_close(m);
		xo_backend_close(be);
		return xo_usage_error("seed",
		                      "--model %s: %" PRId64 " output: the seed protocol "
		                      "needs a classifier (2 or more classes, softmax)",
		                      sm->path, classes);
	}
	drc = o->xpath ? seed_data_read(o->xpaths, o->nx, o->ypath, o->seed, m, classes, data)
	               : seed_data_make(sm->path ? sm->path : "seed.model", o->seed, per, classes,
	                                xo_model_input_ids(m), data);
	xo_model_close(m);
	xo_backend_close(be);
	return drc ? 2 : 0;
}

/* The experiment on each device in turn (of the default list, one that
 * does not open is skipped with a line): 0 with *nres results, or 2. */
static int seed_run_devices(const struct seed_opts *o, const struct seed_model *sm,
			    const struct seed_data *data, struct seed_result *results, int *nres)
{
	for (int i = 0; i < o->ndev; i++) {
		if (!o->explicit_devices) {
			struct xo_backend *be;

			if (xo_backend_open(o->devices[i], &be)) {
				fprintf(o->json ? stderr : stdout, "== %s: skipped (%s)\n",
				        o->devices[i], xo_last_error());
				continue;
			}
			xo_backend_close(be);
		}
		if (run_device(o->devices[i], sm, data, (int)o->epochs, o->batch, o->pbatch,
		               o->seed, (int)o->repeat, o->json, &results[*nres]))
			return 2;
		(*nres)++;
	}
	return 0;
}

int xo_cmd_seed(int argc, char **argv)
{
	struct seed_opts o = {.epochs = 10, .batch = 512, .pbatch = SEED_PREDICT_BATCH,
	                      .repeat = 9, .seed = 1};
	struct seed_model sm = {0};
	static struct seed_result results[MAX_DEVICES];
	struct xo_perfdb *store = NULL;
	struct seed_data data;
	int nres = 0, rc = seed_args(argc, argv, &o, &sm);

	if (rc >= 0)
		return rc;
	if (seed_data_prepare(&o, &sm, &data))
		return 2;
	/* Open (and so validate) the store before minutes of training. */
	if (o.db && (xo_perfdb_open(o.db, &store) ||
	             xo_perfdb_model_claim(store, sm.name, sm.arch, sm.path))) {
		xo_perfdb_close(store);
		seed_data_free(&data);
		return xo_usage_error("seed", "--db %s: %s", o.db, xo_last_error());
	}
	rc = seed_run_devices(&o, &sm, &data, results, &nres);
	if (!rc) {
		/* With --json the human-readable run (epoch lines, table) goes
		 * to stderr and stdout carries only the JSON. */
		print_table(o.json ? stderr : stdout, results, nres);
		if (o.json)
			print_json(&sm, results, nres, data.nte);
		if (store)
			rc = store_results(store, &sm, results, nres, o.batch, data.nte);
	}
	xo_perfdb_close(store);
	seed_data_free(&data);
	return rc;
}
