/*
 * bench.c - `xo bench [--device cpu|ref|cl] [--threads N] [--repeat N] [--json]`:
 * the seed workloads on one backend, with the machine they ran on.
 *
 * Prints the machine (CPU model, cores, the cpu backend's ISA level, BLAS
 * config and core type, threads), the FMA peak of this machine measured in
 * the same run (one core and N threads), then the seed model through the
 * model API: predict of 4000 samples at batch 32 and as one batch of 4000
 * (median and min of the repeats after a warm-up), one training epoch of
 * 12800 samples at batch 512 plus the 3200-sample validation pass (median),
 * peak RSS, and per op (forward and backward of each seed layer at batch 512)
 * the time and GFLOP/s against the measured peak.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "xo.h"
#include "xo/cpu.h"

#define BENCH_PREDICT_N 4000
#define BENCH_TRAIN_N 16000 /* 12800 train + 3200 validation (split 0.2) */
#define BENCH_BATCH 512

static double vmin(const double *v, int n)
{
	double m = v[0];

	for (int i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

/* ---- FMA peak ------------------------------------------------------------------ */

/* The peak is a maximum: load from other processes can only lower a try, so
 * the best of a few tries is the estimate (and a run whose every try was
 * slowed shows up as kernels above it, reported with the reason). */
#define PEAK_TRIES 3

static double peak_threads(enum xo_cpu_isa isa, int n)
{
	return xo_cpu_fma_peak_threads(isa, n, 0.15, PEAK_TRIES);
}

static double peak_one(enum xo_cpu_isa isa)
{
	double best = 0.0;

	for (int i = 0; i < PEAK_TRIES; i++) {
		double f = xo_cpu_fma_peak(isa, 0.1);

		if (f > best)
			best = f;
	}
	return best;
}

/* The 1-minute load average, or -1 when unknown. */
static double load_average(void)
{
	double l[1];

	return getloadavg(l, 1) == 1 ? l[0] : -1.0;
}

/* ---- per-op timing ------------------------------------------------------------------ */

struct op_case {
	const char *name;
	enum xo_op op;
	enum xo_dir dir;
	struct xo_params p;
	double flops;
	bool no_dx; /* leave the optional dx out (the first layer's backward) */
	bool no_ws; /* leave the optional ws out (a recurrent forward's inference form) */
	int part;   /* enum xo_cpu_attn_part: one step of the cpu attention forward; -1 the op */
};

/* One call of case c: its op, or one step of the cpu attention forward. */
static enum xo_status case_run(struct xo_backend *be, const struct op_case *c,
			       struct xo_op_args *a)
{
	if (c->part < 0)
		return xo_op_run(be, c->op, c->dir, a);
	return xo_cpu_attention_part(be, a, (enum xo_cpu_attn_part)c->part);
}

static void fill(float *v, int64_t n, uint64_t seed)
{
	for (int64_t i = 0; i < n; i++)
		v[i] = xo_philox_uniform(seed, 9, 0, (uint64_t)i) - 0.25f;
}

/* This process's CPU time (every thread's), seconds. */
static double cpu_now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Times one op call: seconds per call, the median over repeat samples of
 * reps calls each; reps is 20, or with min_sample_s > 0 enough calls for a
 * sample to last that long (a thread's CPU time is brought up to date at
 * scheduler ticks, 4 ms apart: a CPU-time sample of a few ms could miss a
 * busy worker's time). *cpu_med (may be NULL): the same in process CPU time. */
static enum xo_status time_op(struct xo_backend *be, const struct op_case *c, int repeat,
			      double min_sample_s, double *med, double *cpu_med)
{
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
	struct xo_tensor *t[XO_MAX_SRC + XO_MAX_DST] = {0};
	struct xo_op_args a = {.p = c->p};
	double *samples = NULL, *cpu = NULL;
	enum xo_status st;
	int reps = 20;

	st = xo_op_shapes(c->op, c->dir, &c->p, ss, ds);
	if (st)
		return st;
	for (int i = 0; i < XO_MAX_SRC + XO_MAX_DST && !st; i++) {
		struct xo_slot_shape *s = i < XO_MAX_SRC ? &ss[i] : &ds[i - XO_MAX_SRC];
		int64_t n = 1;
		float *h;

		if (!s->ndim || (c->no_dx && i == XO_MAX_SRC) || (c->no_ws && i == XO_MAX_SRC + 1))
			continue;
		for (int d = 0; d < s->ndim; d++)
			n *= s->dim[d];
		st = xo_tensor_create(be, s->dtype, s->ndim, s->dim, &t[i]);
		if (st)
			break;
		h = malloc((size_t)n * sizeof(float));
		if (!h) {
			st = xo_error(XO_ENOMEM, "bench: out of memory");
			break;
		}
		fill(h, n, (uint64_t)i + 1);
		if (s->dtype == XO_DTYPE_I32)
			for (int64_t k = 0; k < n; k++)
				((int32_t *)h)[k] = 0;
		if (i == 1 && c->op == XO_OP_categorical_crossentropy)
			for (int64_t k = 0; k < n; k++)
				h[k] = k % c->p.ch == 0;
		st = xo_tensor_write(t[i], h, 0, n);
		free(h);
		if (i < XO_MAX_SRC)
			a.src[i] = t[i];
		else
			a.dst[i - XO_MAX_SRC] = t[i];
	}
	samples = calloc((size_t)repeat, sizeof(*samples));
	cpu = calloc((size_t)repeat, sizeof(*cpu));
	if (!st && (!samples || !cpu))
		st = xo_error(XO_ENOMEM, "bench: out of memory");
	/* an attention step reads what the steps before it leave in the
	 * scratch (xo/cpu.h): they run once first */
	for (int k = 0; !st && k < c->part; k++)
		st = xo_cpu_attention_part(be, &a, (enum xo_cpu_attn_part)k);
	for (int w = 0; !st && w < 3; w++)
		st = case_run(be, c, &a);
	if (!st)
		st = xo_backend_sync(be);
	if (!st && min_sample_s > 0) {
		double t0 = xo_now_s(), one;

		st = case_run(be, c, &a);
		if (!st)
			st = xo_backend_sync(be);
		one = fmax(xo_now_s() - t0, 1e-7);
		if (min_sample_s / one > reps)
			reps = (int)fmin(min_sample_s / one, 1e6);
	}
	for (int r = 0; !st && r < repeat; r++) {
		double c0 = cpu_now_s(), t0 = xo_now_s();

		for (int k = 0; !st && k < reps; k++) {
			/* a new training step draws a new dropout mask (the cpu
			 * backend reuses the last one for the same step) */
			if (c->op == XO_OP_dropout && c->dir == XO_DIR_FWD)
				a.p.step++;
			st = case_run(be, c, &a);
		}
		if (!st)
			st = xo_backend_sync(be);
		samples[r] = (xo_now_s() - t0) / reps;
		cpu[r] = (cpu_now_s() - c0) / reps;
	}
	if (!st)
		*med = xo_median(samples, repeat);
	if (!st && cpu_med)
		*cpu_med = xo_median(cpu, repeat);
	free(cpu);
	free(samples);
	for (int i = 0; i < XO_MAX_SRC + XO_MAX_DST; i++)
		xo_tensor_free(t[i]);
	return st;
}

/* The seed model's layers at batch B (DESIGN section 1). */
static int seed_cases(struct op_case *c, int64_t B)
{
	struct xo_params p = xo_params_default();
	double b = (double)B;
	int n = 0;

#define ADD(nm, o, d, fl)                                                                  \
	do {                                                                               \
		c[n].name = nm;                                                            \
		c[n].op = o;                                                               \
		c[n].dir = d;                                                              \
		c[n].p = p;                                                                \
		c[n].flops = (double)(fl);                                                 \
		c[n].no_dx = strstr(nm, "no dx") != NULL;                                  \
		c[n].no_ws = false;                                                        \
		c[n].part = -1;                                                            \
		n++;                                                                       \
	} while (0)
	p.batch = B;
	p.len = 29; p.ch = 1; p.filters = 16; p.kernel_size = 3;
	p.activation = XO_ACTIVATION_RELU;
	ADD("conv1d 29x1->27x16 relu", XO_OP_conv1d, XO_DIR_FWD, 2.0 * b * 27 * 3 * 16);
	ADD("conv1d 29x1->27x16 relu (no dx)", XO_OP_conv1d, XO_DIR_BWD, 2.0 * b * 27 * 3 * 16);
	p = xo_params_default();
	p.batch = B; p.len = 27; p.ch = 16; p.pool_size = 3;
	ADD("max_pooling1d 27x16->9x16", XO_OP_max_pooling1d, XO_DIR_FWD, 0);
	ADD("max_pooling1d 27x16->9x16", XO_OP_max_pooling1d, XO_DIR_BWD, 0);
	p = xo_params_default();
	p.batch = B; p.len = 9; p.ch = 16; p.filters = 32; p.kernel_size = 3;
	p.activation = XO_ACTIVATION_RELU;
	ADD("conv1d 9x16->7x32 relu", XO_OP_conv1d, XO_DIR_FWD, 2.0 * b * 7 * 48 * 32);
	ADD("conv1d 9x16->7x32 relu", XO_OP_conv1d, XO_DIR_BWD, 4.0 * b * 7 * 48 * 32);
	p = xo_params_default();
	p.batch = B; p.len = 7; p.ch = 32; p.pool_size = 3;
	ADD("max_pooling1d 7x32->2x32", XO_OP_max_pooling1d, XO_DIR_FWD, 0);
	ADD("max_pooling1d 7x32->2x32", XO_OP_max_pooling1d, XO_DIR_BWD, 0);
	p = xo_params_default();
	p.batch = B; p.len = 2; p.ch = 32;
	ADD("flatten 2x32", XO_OP_flatten, XO_DIR_FWD, 0);
	p = xo_params_default();
	p.batch = B; p.len = 1; p.ch = 64; p.rate = 0.5f; p.training = true; p.seed = 1;
	ADD("dropout 64 rate 0.5", XO_OP_dropout, XO_DIR_FWD, 0);
	ADD("dropout 64 rate 0.5", XO_OP_dropout, XO_DIR_BWD, 0);
	p = xo_params_default();
	p.batch = B; p.ch = 64; p.units = 32; p.activation = XO_ACTIVATION_SIGMOID;
	ADD("dense 64->32 sigmoid", XO_OP_dense, XO_DIR_FWD, 2.0 * b * 64 * 32);
	ADD("dense 64->32 sigmoid", XO_OP_dense, XO_DIR_BWD, 4.0 * b * 64 * 32);
	p = xo_params_default();
	p.batch = B; p.ch = 32; p.units = 12; p.activation = XO_ACTIVATION_SOFTMAX;
	ADD("dense 32->12 softmax", XO_OP_dense, XO_DIR_FWD, 2.0 * b * 32 * 12);
	p.activation = XO_ACTIVATION_LINEAR;
	ADD("dense 32->12 (linear dz)", XO_OP_dense, XO_DIR_BWD, 4.0 * b * 32 * 12);
	p = xo_params_default();
	p.batch = B; p.ch = 12;
	ADD("categorical_crossentropy 12", XO_OP_categorical_crossentropy, XO_DIR_FWD, 0);
	ADD("categorical_crossentropy 12", XO_OP_categorical_crossentropy, XO_DIR_BWD, 0);
	p = xo_params_default();
	p.size = 4108;
	ADD("adam 4108 parameters", XO_OP_adam, XO_DIR_FWD, 0);
#undef ADD
	return n;
}

/* ---- whole model ---------------------------------------------------------------------- */

struct epoch_sink {
	double epoch_ms;
	double val_accuracy;
};

static void on_epoch(void *user, const struct xo_epoch_log *log)
{
	struct epoch_sink *s = user;

	s->epoch_ms = log->epoch_ms;
	s->val_accuracy = log->val_accuracy;
}

struct model_times {
	double p32_med, p32_min, p1_med, p1_min, epoch_med, epoch_min;
};

static enum xo_status bench_model(struct xo_backend *be, int repeat, struct model_times *out)
{
	struct xo_model *m = NULL;
	float *x = NULL, *y = NULL, *probs = NULL;
	double *s32 = NULL, *s1 = NULL, *se = NULL;
	struct xo_fit_options o = xo_fit_options_default();
	struct epoch_sink sink = {0};
	enum xo_status st;
	int64_t in, cls;

	st = xo_model_open_string(xo_model_seed_spec, "seed", be, BENCH_PREDICT_N, &m);
	if (st)
		return st;
	st = xo_model_init(m, 1);
	if (st)
		goto out;
	in = xo_model_input_size(m);
	cls = xo_model_classes(m);
	x = malloc((size_t)(BENCH_TRAIN_N * in) * sizeof(float));
	y = calloc((size_t)(BENCH_TRAIN_N * cls), sizeof(float));
	probs = malloc((size_t)(BENCH_PREDICT_N * cls) * sizeof(float));
	s32 = calloc((size_t)repeat, sizeof(double));
	s1 = calloc((size_t)repeat, sizeof(double));
	se = calloc((size_t)repeat, sizeof(double));
	if (!x || !y || !probs || !s32 || !s1 || !se) {
		st = xo_error(XO_ENOMEM, "bench: out of memory");
		goto out;
	}
	for (int64_t i = 0; i < BENCH_TRAIN_N * in; i++)
		x[i] = xo_philox_uniform(7, 1, 0, (uint64_t)i);
	for (int64_t i = 0; i < BENCH_TRAIN_N; i++)
		y[i * cls + (int64_t)(xo_philox_uniform(7, 2, 0, (uint64_t)i) * (float)cls)] = 1.0f;

	/* warm-up, then the repeats */
	st = xo_model_predict(m, x, BENCH_PREDICT_N, 32, probs);
	if (!st)
		st = xo_model_predict(m, x, BENCH_PREDICT_N, BENCH_PREDICT_N, probs);
	for (int r = 0; !st && r < repeat; r++) {
		double t0 = xo_now_s();

		st = xo_model_predict(m, x, BENCH_PREDICT_N, 32, probs);
		s32[r] = xo_now_s() - t0;
		if (st)
			break;
		t0 = xo_now_s();
		st = xo_model_predict(m, x, BENCH_PREDICT_N, BENCH_PREDICT_N, probs);
		s1[r] = xo_now_s() - t0;
	}
	if (st)
		goto out;
	o.epochs = 1;
	o.batch_size = BENCH_BATCH;
	o.validation_split = 0.2f;
	o.shuffle = true;
	o.seed = 1;
	o.checkpoint_dir = NULL;
	o.verbose = false;
	st = xo_model_fit(m, x, y, BENCH_TRAIN_N, &o, on_epoch, &sink);
	for (int r = 0; !st && r < repeat; r++) {
		o.seed = (uint64_t)r + 2;
		st = xo_model_fit(m, x, y, BENCH_TRAIN_N, &o, on_epoch, &sink);
		se[r] = sink.epoch_ms * 1e-3;
	}
	if (st)
		goto out;
	out->p32_min = vmin(s32, repeat);
	out->p32_med = xo_median(s32, repeat);
	out->p1_min = vmin(s1, repeat);
	out->p1_med = xo_median(s1, repeat);
	out->epoch_min = vmin(se, repeat);
	out->epoch_med = xo_median(se, repeat);
out:
	free(se);
	free(s1);
	free(s32);
	free(probs);
	free(y);
	free(x);
	xo_model_close(m);
	return st;
}

/* ---- per GEMM layer of a model (--layers) ---------------------------------------------- */

/* One GEMM-shaped layer's calls at the bench batch: forward, backward
 * without dx (dW + db + the activation's derivative; a recurrent layer's
 * also carries dh' back through time) and with dx; the dx product's time is
 * the difference of the two backward medians. A multi_head_attention
 * layer gives several entries: its four projections (dense GEMMs, as
 * above), on cpu each step of the attention op's forward alone (part:
 * the scores Q K^T, the softmax, the weighted sum P V) and the whole op
 * (part ATT_OP: forward, and the backward with its four products). */
#define ATT_OP XO_CPU_ATTN_PART_COUNT /* part: the whole attention op */

struct layer_times {
	char name[64];
	struct xo_layer_gemm g;     /* attention entries: op attention, rows = heads x Tq,
				     * k x n the per-head product's */
	int part;                   /* -1 a GEMM layer; an attention step; ATT_OP */
	double flops;               /* 2 * batch * rows * k * n: the forward's product */
	double flops_dw, flops_dx;  /* the same with k_dw, k_dx (xo_model_layer_gemm) */
	double flops_bwd;           /* ATT_OP: the backward's four products */
	double fwd, fwd_cpu;        /* seconds, medians */
	double inf, inf_cpu;        /* the forward without ws (recurrent layers: what
				     * predict runs); NAN for the others */
	double dw, dw_cpu;          /* backward without dx; NAN without grad */
	double bwd, bwd_cpu;        /* backward with dx; NAN when not needed */
};

#define LAYER_SAMPLE_S 0.05 /* >= 12 scheduler ticks per CPU-time sample */
#define LAYER_ENTRIES 8     /* the most entries of one layer (attention: 4 + 3 + 1) */

static const char *const att_part_name[ATT_OP + 1] = {"scores", "softmax", "weighted_sum",
						      "attention"};

/* simple_rnn, lstm, gru: a forward with an optional ws (ops.def) */
static bool is_recurrent(enum xo_op op)
{
	return op == XO_OP_simple_rnn || op == XO_OP_lstm || op == XO_OP_gru;
}

static enum xo_status time_layer(struct xo_backend *be, struct layer_times *t, int repeat)
{
	struct op_case c = {.name = t->name, .op = t->g.op, .dir = XO_DIR_FWD, .p = t->g.fwd,
			    .part = t->part < ATT_OP ? t->part : -1};
	enum xo_status st;

	t->inf = t->inf_cpu = t->dw = t->dw_cpu = t->bwd = t->bwd_cpu = NAN;
	st = time_op(be, &c, repeat, LAYER_SAMPLE_S, &t->fwd, &t->fwd_cpu);
	if (!st && is_recurrent(t->g.op)) {
		c.no_ws = true;
		st = time_op(be, &c, repeat, LAYER_SAMPLE_S, &t->inf, &t->inf_cpu);
		c.no_ws = false;
	}
	if (st || !t->g.has_grad || (t->part >= 0 && t->part < ATT_OP))
		return st;
	c.dir = XO_DIR_BWD;
	c.p = t->g.bwd;
	if (t->part == ATT_OP) /* no optional output: dq, dk, dv together */
		return time_op(be, &c, repeat, LAYER_SAMPLE_S, &t->bwd, &t->bwd_cpu);
	c.no_dx = true;
	st = time_op(be, &c, repeat, LAYER_SAMPLE_S, &t->dw, &t->dw_cpu);
	if (st || !t->g.need_dx)
		return st;
	c.no_dx = false;
	return time_op(be, &c, repeat, LAYER_SAMPLE_S, &t->bwd, &t->bwd_cpu);
}

static void json_num(const char *key, double v)
{
	if (isfinite(v))
		printf(", \"%s\": %.6g", key, v);
	else
		printf(", \"%s\": null", key);
}

/* Entry t's FLOPs from its GEMM's rows, k and n at batch. */
static void layer_flops(struct layer_times *t, int64_t batch)
{
	t->flops = 2.0 * (double)batch * (double)t->g.rows * (double)t->g.k * (double)t->g.n;
	t->flops_dw = t->g.k ? t->flops / (double)t->g.k * (double)t->g.k_dw : 0.0;
	t->flops_dx = t->g.k ? t->flops / (double)t->g.k * (double)t->g.k_dx : 0.0;
	/* the backward's products dP = dY V^T, dQ, dK, dV: twice the
	 * forward's (the cpu kernel also recomputes S, not counted) */
	t->flops_bwd = t->part == ATT_OP ? 2.0 * t->flops : NAN;
}

/* Layer layer's attention entries into t (at most LAYER_ENTRIES): the four
 * projections, the steps (cpu only) and the whole op. Returns the count. */
static int attention_entries(const struct xo_layer_attention *at, const char *layer,
			     bool steps, struct layer_times *t)
{
	static const char *const proj[4] = {"query", "key", "value", "output"};
	int64_t hq = at->heads * at->len_q;
	/* per sample: rows (heads x Tq) and the per-head product's k and n */
	const int64_t kn[ATT_OP + 1][2] = {{at->key_dim, at->len_kv},
					   {0, at->len_kv},
					   {at->len_kv, at->value_dim},
					   {at->key_dim + at->value_dim, at->len_kv}};
	int n = 0;

	for (int k = 0; k < 4; k++, n++) {
		snprintf(t[n].name, sizeof(t[n].name), "%s/%s", layer, proj[k]);
		t[n].g = at->proj[k];
		t[n].part = -1;
	}
	for (int p = steps ? 0 : ATT_OP; p <= ATT_OP; p++, n++) {
		snprintf(t[n].name, sizeof(t[n].name), "%s/%s", layer, att_part_name[p]);
		t[n].part = p;
		t[n].g = (struct xo_layer_gemm){.op = XO_OP_attention, .fwd = at->att_fwd,
						.bwd = at->att_bwd, .has_grad = true,
						.rows = hq, .k = kn[p][0], .n = kn[p][1]};
		/* the scores and the weighted sum as one product: k = dk + dv */
		t[n].g.k_dw = t[n].g.k_dx = 0;
	}
	return n;
}

/* Fills t (LAYER_ENTRIES per layer of m) with every GEMM-shaped layer's
 * entries, timed. Returns the count, or -1 after a line on stderr. */
static int layers_measure(struct xo_backend *be, struct xo_model *m, int64_t batch, int repeat,
			  struct layer_times *t)
{
	bool steps = !strcmp(xo_backend_name(be), "cpu");
	int n = 0, first;

	for (int i = 0; i < xo_model_layer_count(m); i++) {
		struct xo_layer_gemm g[XO_LAYER_GEMMS_MAX];
		const char *part[XO_LAYER_GEMMS_MAX];
		struct xo_layer_attention at;
		int ng = xo_model_layer_gemms(m, i, batch, g, part);

		first = n;
		for (int k = 0; k < ng; k++, n++) {
			if (part[k])
				snprintf(t[n].name, sizeof(t[n].name), "%s/%s",
					 xo_model_layer_name(m, i), part[k]);
			else
				snprintf(t[n].name, sizeof(t[n].name), "%s",
					 xo_model_layer_name(m, i));
			t[n].g = g[k];
			t[n].part = -1;
		}
		if (!ng && xo_model_layer_attention(m, i, batch, &at)) {
			n += attention_entries(&at, xo_model_layer_name(m, i), steps, &t[n]);
		}
		for (int e = first; e < n; e++) {
			/* a projection's batch is already batch x its rows */
			layer_flops(&t[e], batch);
			if (time_layer(be, &t[e], repeat)) {
				xo_usage_error("bench", "layer %s: %s", t[e].name, xo_last_error());
				return -1;
			}
		}
	}
	return n;
}

static void layers_print_json(struct xo_backend *be, const char *path, int64_t batch,
			      int repeat, int threads, const char *isa_name, double peak1,
			      double peakn, const struct layer_times *t, int n)
{
	printf("{\"device\": ");
	xo_cli_json_string(xo_backend_name(be));
	printf(", \"model\": ");
	xo_cli_json_string(path ? path : "seed");
	printf(", \"batch\": %" PRId64 ", \"threads\": %d, \"repeat\": %d, \"isa\": \"%s\"", batch,
	       threads, repeat, isa_name);
	json_num("peak_gflops_1", peak1 * 1e-9);
	json_num("peak_gflops_n", peakn * 1e-9);
	json_num("load_average", load_average());
	printf(", \"layers\": [");
	for (int i = 0; i < n; i++) {
		const struct layer_times *l = &t[i];

		printf("%s{\"layer\": ", i ? ", " : "");
		xo_cli_json_string(l->name);
		printf(", \"op\": \"%s\", \"m\": %" PRId64 ", \"k\": %" PRId64 ", \"n\": %" PRId64
		       ", \"flops\": %.0f",
		       xo_op_name(l->g.op), batch * l->g.rows, l->g.k, l->g.n, l->flops);
		if (l->part >= 0) /* calls: the per-(sample, head) products */
			printf(", \"part\": \"%s\", \"calls\": %" PRId64, att_part_name[l->part],
			       batch * l->g.fwd.heads);
		printf(", \"dw_flops\": %.0f, \"dx_flops\": %.0f", l->flops_dw, l->flops_dx);
		json_num("bwd_flops", l->flops_bwd);
		json_num("fwd_us", l->fwd * 1e6);
		json_num("fwd_cpu_us", l->fwd_cpu * 1e6);
		json_num("infer_us", l->inf * 1e6);
		json_num("infer_cpu_us", l->inf_cpu * 1e6);
		json_num("dw_us", l->dw * 1e6);
		json_num("dw_cpu_us", l->dw_cpu * 1e6);
		json_num("bwd_us", l->bwd * 1e6);
		json_num("bwd_cpu_us", l->bwd_cpu * 1e6);
		json_num("dx_us", (l->bwd - l->dw) * 1e6);
		json_num("dx_cpu_us", (l->bwd_cpu - l->dw_cpu) * 1e6);
		printf("}");
	}
	printf("]}\n");
}

/* Entry l's shape column: M x K x N, or for an attention entry the heads'
 * products as count x (Tq x K x N). */
static void layer_shape(const struct layer_times *l, int64_t batch, char *buf, size_t size)
{
	if (l->part < 0)
		snprintf(buf, size, "%" PRId64 "x%" PRId64 "x%" PRId64, batch * l->g.rows, l->g.k,
			 l->g.n);
	else
		snprintf(buf, size, "%" PRId64 "x(%" PRId64 "x%" PRId64 "x%" PRId64 ")",
			 batch * l->g.fwd.heads, l->g.fwd.len, l->g.k, l->g.n);
}

static void layers_print_text(const char *path, int64_t batch, int repeat, int threads,
			      const char *isa_name, double peak1, double peakn,
			      const struct layer_times *t, int n)
{
	printf("GEMM-shaped layers of %s at batch %" PRId64 " (median of %d; %s, %d "
	       "thread%s; fma peak %.1f GFLOP/s one core, %.1f %d threads):\n",
	       path ? path : "seed", batch, repeat, isa_name, threads, threads == 1 ? "" : "s",
	       peak1 * 1e-9, peakn * 1e-9, threads);
	printf("  %-28s %-9s %18s %-4s %10s %10s %9s %7s %9s\n", "layer", "op", "M x K x N", "call",
	       "wall us", "cpu us", "GFLOP/s", "% peak", "% 1-core");
	for (int i = 0; i < n; i++) {
		const struct layer_times *l = &t[i];
		bool op = l->part == ATT_OP;
		const char *call[4] = {"fwd", "inf", "dW", op ? "bwd" : "dX"};
		double w[4] = {l->fwd, l->inf, l->dw, op ? l->bwd : l->bwd - l->dw};
		double c[4] = {l->fwd_cpu, l->inf_cpu, l->dw_cpu,
			       op ? l->bwd_cpu : l->bwd_cpu - l->dw_cpu};
		double f[4] = {l->flops, l->flops, l->flops_dw, op ? l->flops_bwd : l->flops_dx};
		char shape[64];

		layer_shape(l, batch, shape, sizeof(shape));
		for (int k = 0; k < 4; k++) {
			if (!isfinite(w[k]))
				continue;
			printf("  %-28s %-9s %18s %-4s %10.2f %10.2f", k ? "" : l->name,
			       k ? "" : xo_op_name(l->g.op), k ? "" : shape, call[k], w[k] * 1e6,
			       c[k] * 1e6);
			if (f[k] > 0)
				printf(" %9.2f %6.1f%% %8.1f%%\n", f[k] / w[k] * 1e-9,
				       100.0 * f[k] / w[k] / peakn, 100.0 * f[k] / c[k] / peak1);
			else /* the softmax: exp and memory, no GEMM */
				printf(" %9s %7s %9s\n", "-", "-", "-");
		}
	}
	printf("fwd: the forward (recurrent layers: with the ws training keeps); inf: "
	       "a recurrent forward without ws (predict's), rated by the forward's FLOPs\n"
	       "dW: the backward call without dx (dW, db and the activation's "
	       "derivative); dX: the backward with dx minus it\n"
	       "recurrent layers: M = batch x steps, K = ch + units, N = gates x units; "
	       "dW counts K + units (dh' back through time), dX ch\n"
	       "L/forward, L/backward: a Bidirectional's two directions; L/depthwise "
	       "(K = taps, N = channels x depth_multiplier), L/pointwise (1x1): a separable "
	       "convolution's two steps\n"
	       "attention: L/query, key, value, output: its projections (dense); "
	       "L/scores (Q K^T), L/softmax, L/weighted_sum (P V): each step of the "
	       "attention op's forward alone (cpu), batch x heads products of Tq x K x N; "
	       "L/attention: the op whole, fwd rated by both products, bwd by its four "
	       "(dP, dQ, dK, dV)\n"
	       "%% peak: wall-time rate / the %d-thread peak; %% 1-core: the rate "
	       "per CPU-second / one core's peak (load cannot lower it)\n",
	       threads);
}

/*
 * `--layers`: every conv1d / conv2d / dense / simple_rnn / lstm / gru /
 * multi_head_attention layer of the model (the seed's when no --model)
 * timed alone at batch, its ops called on its exact shapes
 * (xo_model_layer_gemm, xo_model_layer_attention: the op-by-op path's
 * parameters), wall and CPU time (the process's, all threads: a worker's
 * spin after a task counts, so the CPU figure can only under-state the
 * rate) against the FMA peaks.
 */
static int bench_layers(struct xo_backend *be, const char *path, int64_t batch, int repeat,
			bool json, int threads, enum xo_cpu_isa isa)
{
	const char *isa_name = xo_cpu_isa_name(isa);
	double peak1, peakn;
	struct xo_model *m = NULL;
	struct layer_times *t = NULL;
	int n, rc = 2;

	if (path ? xo_model_open(path, be, batch, &m)
		 : xo_model_open_string(xo_model_seed_spec, "seed", be, batch, &m))
		return xo_usage_error("bench", "%s", xo_last_error());
	peak1 = peak_one(isa);
	peakn = peak_threads(isa, threads);
	t = calloc((size_t)xo_model_layer_count(m) * LAYER_ENTRIES, sizeof(*t));
	if (!t) {
		xo_usage_error("bench", "out of memory");
		goto out;
	}
	n = layers_measure(be, m, batch, repeat, t);
	if (n < 0)
		goto out;
	if (json)
		layers_print_json(be, path, batch, repeat, threads, isa_name, peak1, peakn, t, n);
	else
		layers_print_text(path, batch, repeat, threads, isa_name, peak1, peakn, t, n);
	rc = 0;
out:
	free(t);
	xo_model_close(m);
	return rc;
}

/* ---- the command ----------------------------------------------------------------------- */

struct bench_opts {
	const char *device, *model_path;
	int threads, repeat;
	int64_t batch;
	bool json, layers;
};

/* Reads the arguments into o: -1 to go on, else the exit status (0 after
 * --help; 2, the line printed, after a bad argument). */
static int bench_args(int argc, char **argv, struct bench_opts *o)
{
	for (int i = 1; i < argc; i++) {
		bool takes_value = !strcmp(argv[i], "--device") || !strcmp(argv[i], "--threads") ||
				   !strcmp(argv[i], "--repeat") || !strcmp(argv[i], "--model") ||
				   !strcmp(argv[i], "--batch");
		int64_t v;

		if (takes_value && i + 1 == argc)
			return xo_usage_error("bench", "%s needs a value", argv[i]);
		if (!strcmp(argv[i], "--device")) {
			o->device = argv[++i];
		} else if (!strcmp(argv[i], "--threads")) {
			if (!xo_cli_parse_i64(argv[++i], 1, XO_CPU_MAX_THREADS, &v))
				return xo_usage_error("bench", "--threads must be 1..%d",
						      XO_CPU_MAX_THREADS);
			o->threads = (int)v;
		} else if (!strcmp(argv[i], "--repeat")) {
			if (!xo_cli_parse_i64(argv[++i], 1, 1000, &v))
				return xo_usage_error("bench", "--repeat must be 1..1000");
			o->repeat = (int)v;
		} else if (!strcmp(argv[i], "--model")) {
			o->model_path = argv[++i];
		} else if (!strcmp(argv[i], "--batch")) {
			if (!xo_cli_parse_i64(argv[++i], 1, 65536, &v))
				return xo_usage_error("bench", "--batch must be 1..65536");
			o->batch = v;
		} else if (!strcmp(argv[i], "--layers")) {
			o->layers = true;
		} else if (!strcmp(argv[i], "--json")) {
			o->json = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: xo bench [--device cpu|ref|cl] [--threads N] [--repeat N] "
			       "[--json]\n"
			       "       xo bench --layers [--model F] [--batch N] [--device D] "
			       "[--threads N] [--repeat N] [--json]\n"
			       "  the seed model's predict (4000 samples at batch 32 and as one "
			       "batch),\n  one training epoch, peak RSS, and per-op GFLOP/s against "
			       "an FMA peak\n  measured in the same run (docs/cpu.md); --layers: "
			       "each GEMM-shaped op call\n  (conv1d, conv2d, dense, depthwise and "
			       "transposed convolutions, simple_rnn, lstm,\n  gru; a Bidirectional's two "
			       "directions, a separable convolution's depthwise\n  and pointwise steps, "
			       "multi_head_attention's projections and products)\n  of the model (default "
			       "the seed) alone at batch N (default 512): forward,\n  dW and dX (a recurrent "
			       "layer's forward also without its ws, as predict\n  runs it: inf), wall and "
			       "CPU time, share of the peak\n");
			return 0;
		} else {
			return xo_usage_error("bench", "unknown argument '%s' (usage: xo bench "
						       "[--device cpu|ref|cl] [--threads N] "
						       "[--repeat N] [--json] [--layers [--model F] "
						       "[--batch N]])",
					      argv[i]);
		}
	}
	if ((o->model_path || o->batch != BENCH_BATCH) && !o->layers)
		return xo_usage_error("bench", "--model and --batch go with --layers (a model's "
					       "whole workloads: xo seed --model F)");
	return -1;
}

/* What the seed run measured, for the report. */
struct bench_result {
	const char *isa_name;
	char model[256];
	int ncpu;
	double peak1, peakn, load;
	struct model_times mt;
	struct op_case cases[32];
	double op_s[32], share[32];
	int ncases, over;  /* over: ops above the peak */
	char why[256];     /* why an op can be above it */
	struct rusage ru;
};

/* The seed model's times, each seed op's, the peak again after them (the
 * load may have changed since r->peakn was taken) and each op's share of it. */
static enum xo_status bench_measure(struct xo_backend *be, const struct bench_opts *o,
				    enum xo_cpu_isa isa, struct bench_result *r)
{
	enum xo_status st = bench_model(be, o->repeat, &r->mt);

	if (st)
		return st;
	r->ncases = seed_cases(r->cases, BENCH_BATCH);
	for (int i = 0; i < r->ncases && !st; i++)
		st = time_op(be, &r->cases[i], o->repeat, 0, &r->op_s[i], NULL);
	if (st)
		return st;
	r->peakn = fmax(r->peakn, peak_threads(isa, o->threads));
	r->load = load_average();
	for (int i = 0; i < r->ncases; i++) {
		const struct op_case *c = &r->cases[i];

		r->share[i] = c->flops > 0 ? c->flops / r->op_s[i] / r->peakn : 0.0;
		if (r->share[i] > 1.0)
			r->over++;
	}
	/* A kernel cannot beat the FMA rate of its own ISA level. The peak is
	 * timed in CPU time (load cannot lower it) and the ops in wall time (load
	 * only slows them), so a share above 1 means the device does not run the
	 * cpu backend's kernels at this level (ref, cl, or BLAS at a wider ISA),
	 * or the core clocked higher during the op than during the peak tries. */
	snprintf(r->why, sizeof(r->why), "above the measured %s peak: %s", r->isa_name,
	         strcmp(xo_backend_name(be), "cpu")
	             ? "this device does not run the cpu backend's kernels at this ISA level"
	             : "the core clocked higher during this op than during the peak tries "
	               "(or the op used wider instructions than this level); rerun");
	getrusage(RUSAGE_SELF, &r->ru);
	return XO_OK;
}

static void bench_print_json(struct xo_backend *be, const struct bench_opts *o,
			     const struct bench_result *r)
{
	printf("{\"device\": ");
	xo_cli_json_string(xo_backend_name(be));
	printf(", \"describe\": ");
	xo_cli_json_string(xo_backend_describe(be));
	printf(", \"cpu\": ");
	xo_cli_json_string(r->model);
	printf(", \"cores\": %d, \"isa\": \"%s\", \"threads\": %d, \"repeat\": %d, "
	       "\"peak_isa\": \"%s\", \"peak_tries\": %d, \"load_average\": %.2f, "
	       "\"peak_gflops_1\": %.2f, \"peak_gflops_n\": %.2f, "
	       "\"predict_ms_batch32_median\": %.4f, \"predict_ms_batch32_min\": %.4f, "
	       "\"predict_ms_one_batch_median\": %.4f, \"predict_ms_one_batch_min\": %.4f, "
	       "\"epoch_ms_median\": %.4f, \"epoch_ms_min\": %.4f, \"peak_rss_mb\": %.1f, "
	       "\"ops\": [",
	       r->ncpu, r->isa_name, o->threads, o->repeat, r->isa_name, PEAK_TRIES, r->load,
	       r->peak1 * 1e-9, r->peakn * 1e-9, r->mt.p32_med * 1e3, r->mt.p32_min * 1e3,
	       r->mt.p1_med * 1e3, r->mt.p1_min * 1e3, r->mt.epoch_med * 1e3,
	       r->mt.epoch_min * 1e3, (double)r->ru.ru_maxrss / 1024.0);
	for (int i = 0; i < r->ncases; i++) {
		const struct op_case *c = &r->cases[i];

		printf("%s{\"op\": \"%s\", \"dir\": \"%s\", \"shape\": ", i ? ", " : "",
		       xo_op_name(c->op), xo_dir_name(c->dir));
		xo_cli_json_string(c->name);
		printf(", \"us\": %.3f, \"flops\": %.0f, \"gflops\": %.2f, "
		       "\"peak_share\": %.4f, \"over_peak\": ",
		       r->op_s[i] * 1e6, c->flops,
		       c->flops > 0 ? c->flops / r->op_s[i] * 1e-9 : 0.0, r->share[i]);
		if (r->share[i] > 1.0)
			xo_cli_json_string(r->why);
		else
			printf("null");
		printf("}");
	}
	printf("]}\n");
}

static void bench_print_text(const struct bench_opts *o, const struct bench_result *r)
{
	printf("fma peak (%s, best of %d): %.1f GFLOP/s one core, %.1f GFLOP/s %d thread%s"
	       " (load average %.2f)\n",
	       r->isa_name, PEAK_TRIES, r->peak1 * 1e-9, r->peakn * 1e-9, o->threads,
	       o->threads == 1 ? "" : "s", r->load);
	printf("seed predict 4000 at batch 32:  median %.3f ms  min %.3f ms\n",
	       r->mt.p32_med * 1e3, r->mt.p32_min * 1e3);
	printf("seed predict 4000 as one batch: median %.3f ms  min %.3f ms\n",
	       r->mt.p1_med * 1e3, r->mt.p1_min * 1e3);
	printf("seed epoch (12800 at batch 512 + 3200 validation): median %.3f ms  min %.3f ms\n",
	       r->mt.epoch_med * 1e3, r->mt.epoch_min * 1e3);
	printf("peak RSS: %.1f MB\n", (double)r->ru.ru_maxrss / 1024.0);
	printf("per op at batch %d (median of %d):\n", BENCH_BATCH, o->repeat);
	for (int i = 0; i < r->ncases; i++) {
		const struct op_case *c = &r->cases[i];

		printf("  %-26s %-3s %-34s %9.2f us", xo_op_name(c->op), xo_dir_name(c->dir),
		       c->name, r->op_s[i] * 1e6);
		if (c->flops > 0)
			printf("  %7.2f GFLOP/s  %5.1f%%%s of %d-thread peak",
			       c->flops / r->op_s[i] * 1e-9, 100.0 * r->share[i],
			       r->share[i] > 1.0 ? "*" : "", o->threads);
		printf("\n");
	}
	if (r->over)
		printf("* %s\n", r->why);
}

int xo_cmd_bench(int argc, char **argv)
{
	struct bench_opts o = {.device = "cpu", .repeat = 9, .batch = BENCH_BATCH};
	struct xo_backend *be = NULL;
	struct bench_result *r;
	enum xo_status st;
	enum xo_cpu_isa isa;
	char thr[16];
	int rc = bench_args(argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (o.threads) {
		snprintf(thr, sizeof(thr), "%d", o.threads);
		setenv("XO_THREADS", thr, 1);
	} else {
		const char *e = getenv("XO_THREADS");

		o.threads = e && atoi(e) > 0 ? atoi(e) : 2;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		fprintf(stderr, "xo bench: out of memory\n");
		return 2;
	}
	st = xo_backend_open(o.device, &be);
	if (st) {
		fprintf(stderr, "xo bench: %s\n", xo_last_error());
		rc = 2;
		goto out_result;
	}
	xo_cli_cpu_model(r->model, sizeof(r->model));
	r->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	isa = xo_cpu_isa_detect();
	r->isa_name = xo_cpu_isa_name(isa);
	if (o.layers) {
		rc = bench_layers(be, o.model_path, o.batch, o.repeat, o.json, o.threads, isa);
		goto out_backend;
	}
	r->peak1 = peak_one(isa);
	r->peakn = peak_threads(isa, o.threads);
	if (!o.json) {
		printf("machine: %s, %d cores, isa %s\n", r->model, r->ncpu, r->isa_name);
		printf("backend: %s\n", xo_backend_describe(be));
		printf("threads: %d\n", o.threads);
	}
	st = bench_measure(be, &o, isa, r);
	if (st) {
		fprintf(stderr, "xo bench: %s\n", xo_last_error());
		rc = 2;
		goto out_backend;
	}
	if (o.json)
		bench_print_json(be, &o, r);
	else
		bench_print_text(&o, r);
	rc = 0;
out_backend:
	xo_backend_close(be);
out_result:
	free(r);
	return rc;
}
