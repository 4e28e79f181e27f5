/*
 * runner.c - `xo perf record`: builds the benchmark set (every op forward and
 * backward x a shape set x every device; the seed model's train_step and
 * predict over a batch sweep), warms each up, then collects samples
 * round-robin across all benchmarks in a shuffled order per round, so that
 * drift (thermal, other load) hits every benchmark alike. One sample is the
 * wall time of `reps` back-to-back calls ending in a device sync, divided by
 * reps; reps is calibrated in the warm-up to fill a target sample time. On
 * OpenCL the event split (enqueue, H2D, kernel, D2H, wait, launches) and the
 * kernel time per op are recorded beside the wall time.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#if defined(__has_include) && __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h> /* Debian valgrind: the client requests */
#else
/* built without valgrind's header: no process is ever counted (the
 * counting child refuses, as it would outside valgrind) */
#define RUNNING_ON_VALGRIND 0
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_DUMP_STATS_AT(name) ((void)(name))
#endif

#include "jsonout.h"
#include "perfdb.h"
#include "proc.h"
#include "xo/backend.h"

/* ---- the benchmark set ---------------------------------------------------------- */

struct op_case {
	const char *op;     /* op name (ops.def) */
	const char *label;  /* short shape label in the benchmark name */
	const char *params; /* key=value list (xo_params_set) */
	bool quick;         /* in --quick */
	bool heavy;         /* too slow for ref: skipped there */
};

/*
 * The seed model's layer shapes at batch 512 (DESIGN section 1: input 29x1,
 * conv 27x16, pool 9x16, conv 7x32, pool 2x32, flatten 64, dense 32, dense 12;
 * 4108 parameters; 12800 training rows gathered per batch), then a few larger
 * ones where a BLAS or a GPU has room to win.
 */
static const struct op_case op_cases[] = {
    {"conv1d", "n512_l29_c1_f16_k3",
     "batch=512 len=29 ch=1 filters=16 kernel_size=3 activation=relu", true, false},
    {"conv1d", "n512_l9_c16_f32_k3",
     "batch=512 len=9 ch=16 filters=32 kernel_size=3 activation=relu", true, false},
    {"max_pooling1d", "n512_l27_c16_p3", "batch=512 len=27 ch=16 pool_size=3", true, false},
    {"max_pooling1d", "n512_l7_c32_p3", "batch=512 len=7 ch=32 pool_size=3", true, false},
    {"relu", "n512_l27_c16", "batch=512 len=27 ch=16", true, false},
    {"flatten", "n512_l2_c32", "batch=512 len=2 ch=32", true, false},
    {"dropout", "n512_l1_c64_r0.5", "batch=512 len=1 ch=64 rate=0.5 training=1 seed=1 layer=5",
     true, false},
    {"dense", "n512_c64_u32_sigmoid", "batch=512 ch=64 units=32 activation=sigmoid", true, false},
    {"dense", "n512_c32_u12_softmax", "batch=512 ch=32 units=12 activation=softmax", true, false},
    {"sigmoid", "n512_l1_c32", "batch=512 len=1 ch=32", true, false},
    {"softmax", "n512_l1_c12", "batch=512 len=1 ch=12", true, false},
    /* the activations a dense layer of 32 units applies as their own op */
    {"tanh", "n512_l1_c32", "batch=512 len=1 ch=32", false, false},
    {"elu", "n512_l1_c32", "batch=512 len=1 ch=32", false, false},
    {"gelu", "n512_l1_c32", "batch=512 len=1 ch=32", false, false},
    {"softplus", "n512_l1_c32", "batch=512 len=1 ch=32", false, false},
    {"categorical_crossentropy", "n512_c12", "batch=512 ch=12", true, false},
    {"adam", "size4108", "size=4108 iteration=10", true, false},
    {"accuracy", "n512_c12", "batch=512 ch=12", true, false},
    {"gather", "n512_c29_rows12800", "batch=512 ch=29 rows=12800", true, false},
    /* larger shapes */
    {"conv1d", "n4096_l29_c1_f16_k3",
     "batch=4096 len=29 ch=1 filters=16 kernel_size=3 activation=relu", false, false},
    {"conv1d", "n64_l128_c32_f64_k5_same",
     "batch=64 len=128 ch=32 filters=64 kernel_size=5 padding=same activation=relu", false, true},
    {"max_pooling1d", "n4096_l27_c16_p3", "batch=4096 len=27 ch=16 pool_size=3", false, false},
    {"dense", "n4096_c64_u32_sigmoid", "batch=4096 ch=64 units=32 activation=sigmoid", false,
     false},
    {"dense", "n256_c512_u512", "batch=256 ch=512 units=512", false, true},
    {"adam", "size262144", "size=262144 iteration=10", false, false},
    /* Keras 3's newer activations, as tanh ... above (log_softmax over a
     * classifier's row) */
    {"relu6", "n512_l1_c32", "batch=512 len=1 ch=32", false, false},
    {"hard_sigmoid", "n512_l1_c32", "batch=512 len=1 ch=32", false, false},
    {"silu", "n512_l1_c32", "batch=512 len=1 ch=32", false, false},
    {"log_softmax", "n512_l1_c12", "batch=512 len=1 ch=12", false, false},
    /* a small transformer's token rows: 512 samples of 32 tokens, 64 features */
    {"layer_normalization", "n512_l32_c64", "batch=512 len=32 ch=64 epsilon=0.001", false,
     false},
};

enum workload { W_TRAIN_STEP, W_PREDICT, W_COUNT };
static const char *const workload_names[W_COUNT] = {"train_step", "predict"};

struct device {
	char spec[64];         /* as given: "cpu", "cl:0:0" */
	char label[64];        /* in benchmark names */
	struct xo_backend *be; /* NULL when it did not open */
	bool is_cl;
	char version[24]; /* its op benchmarks' code version */
};

struct bench {
	struct xo_perf_result r; /* name, samples, split: what is stored */
	struct device *dev;
	bool is_model;
	/* op benchmarks */
	enum xo_op op;
	enum xo_dir dir;
	struct xo_op_args args;
	struct xo_tensor *owned[XO_MAX_SRC + XO_MAX_DST];
	/* model benchmarks */
	struct xo_model *m;
	enum workload w;
	bool ok;                                 /* set up and sampling without error */
	double op_ns[XO_OP_COUNT][XO_DIR_COUNT]; /* summed over samples */
	double op_launch[XO_OP_COUNT][XO_DIR_COUNT];
	uint64_t untimed_events;                 /* OpenCL events with no times, all samples */
};

/* ---- code versions ------------------------------------------------------------------- */

/* The manifest unit holding a device's kernels (perfdb/versions.cmake). */
static const char *backend_unit(const char *label)
{
	if (!strncmp(label, "ref", 3))
		return "ref";
	if (!strncmp(label, "cpu", 3))
		return "cpu";
	if (!strncmp(label, "cl", 2))
		return "cl";
	return "";
}

/*
 * The version of a benchmark measuring the units named (NULL-terminated):
 * each unit's build version from the manifest, then extra (the sampling
 * settings, a model's architecture) hashed together; XO_PERF_VERSION_UNKNOWN
 * as soon as one unit's is unknown, so that no two such benchmarks compare as
 * the same code.
 */
static void code_version(const char *const *units, const char *extra, char *out, size_t n)
{
	uint64_t h = XO_FNV_OFFSET;

	for (size_t i = 0; units[i]; i++) {
		char v[24], tag[64];

		xo_perf_unit_version(units[i], v, sizeof(v));
		if (!xo_perf_version_known(v)) {
			snprintf(out, n, "%s", XO_PERF_VERSION_UNKNOWN);
			return;
		}
		snprintf(tag, sizeof(tag), "%s=%s;", units[i], v);
		h = xo_perf_fnv(h, tag, strlen(tag));
	}
	h = xo_perf_fnv(h, extra, strlen(extra));
	snprintf(out, n, "%016llx", (unsigned long long)h);
}

/* ---- helpers ------------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_next(uint64_t *s)
{
	/* splitmix64: fills and the per-round shuffle, reproducible */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static enum xo_status parse_params(const char *line, struct xo_params *p)
{
	char buf[512], *save = NULL;

	*p = xo_params_default();
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		enum xo_status st;

		if (!eq)
			return xo_error(XO_EINVAL, "bad benchmark parameter '%s'", tok);
		*eq = '\0';
		if ((st = xo_params_set(p, tok, eq + 1)))
			return st;
	}
	return XO_OK;
}

/* A tensor for a slot, filled with values in [0.01, 1) (valid input for every
 * op: positive variances for Adam, probabilities for the losses) or, for the
 * i32 gather index, row numbers below rows. */
static enum xo_status make_tensor(struct xo_backend *be, const struct xo_slot_shape *s,
                                  int64_t rows, uint64_t *rng, struct xo_tensor **out)
{
	enum xo_status st;
	int64_t n = 1;
	void *host;

	st = xo_tensor_create(be, s->dtype, s->ndim, s->dim, out);
	if (st)
		return st;
	n = xo_tensor_nelem(*out);
	host = malloc((size_t)n * 4);
	if (!host)
		return xo_error(XO_ENOMEM, "perf: out of memory");
	for (int64_t i = 0; i < n; i++) {
		uint64_t r = rng_next(rng);

		if (s->dtype == XO_DTYPE_I32)
			((int32_t *)host)[i] = (int32_t)(r % (uint64_t)(rows > 0 ? rows : 1));
		else
			((float *)host)[i] = 0.01f + 0.99f * (float)(r >> 40) / (float)(1 << 24);
	}
	st = xo_tensor_write(*out, host, 0, n);
	free(host);
	return st;
}

static enum xo_status op_setup(struct bench *b, const struct op_case *c, uint64_t *rng)
{
	struct xo_slot_shape src[XO_MAX_SRC], dst[XO_MAX_DST];
	struct xo_backend *be = b->dev->be;
	enum xo_status st;
	int k = 0;

	if ((st = parse_params(c->params, &b->args.p)))
		return st;
	if ((st = xo_op_shapes(b->op, b->dir, &b->args.p, src, dst)))
		return st;
	for (int i = 0; i < XO_MAX_SRC; i++) {
		if (!src[i].ndim)
			continue;
		if ((st = make_tensor(be, &src[i], b->args.p.rows, rng, &b->owned[k])))
			return st;
		b->args.src[i] = b->owned[k++];
	}
	for (int i = 0; i < XO_MAX_DST; i++) {
		if (!dst[i].ndim)
			continue;
		if ((st = make_tensor(be, &dst[i], b->args.p.rows, rng, &b->owned[k])))
			return st;
		b->args.dst[i] = b->owned[k++];
	}
	return XO_OK;
}

static enum xo_status model_setup(struct bench *b, const char *model_path)
{
	enum xo_status st;

	if (model_path)
		st = xo_model_open(model_path, b->dev->be, b->r.b.batch, &b->m);
	else
		st = xo_model_open_string(xo_model_seed_spec, "seed (built in)", b->dev->be,
		                          b->r.b.batch, &b->m);
	if (!st)
		st = xo_model_init(b->m, 1);
	if (!st)
		st = xo_model_bench_prepare(b->m, b->r.b.batch, 1);
	return st;
}

static enum xo_status run_once(struct bench *b)
{
	if (!b->is_model)
		return xo_op_run(b->dev->be, b->op, b->dir, &b->args);
	return b->w == W_TRAIN_STEP ? xo_model_bench_train_step(b->m)
	                            : xo_model_bench_predict(b->m);
}

/* One sample: reps calls, a sync, per-call times. */
static enum xo_status take_sample(struct bench *b, struct xo_perf_sample *out, bool keep)
{
	struct xo_backend_stats stats;
	enum xo_status st = XO_OK;
	double t0, t1, reps = (double)b->r.reps;

	if (b->dev->is_cl)
		xo_backend_stats_reset(b->dev->be);
	t0 = now_s();
	for (int64_t i = 0; i < b->r.reps && !st; i++)
		st = run_once(b);
	if (!st)
		st = xo_backend_sync(b->dev->be);
	t1 = now_s();
	if (st)
		return st;
	memset(out, 0, sizeof(*out));
	out->wall_s = (t1 - t0) / reps;
	if (b->dev->is_cl) {
		xo_backend_stats_get(b->dev->be, &stats);
		out->enqueue_s = 1e-9 * (double)stats.enqueue_ns / reps;
		out->h2d_s = 1e-9 * (double)stats.h2d_ns / reps;
		out->kernel_s = 1e-9 * (double)stats.kernel_ns / reps;
		out->d2h_s = 1e-9 * (double)stats.d2h_ns / reps;
		out->wait_s = 1e-9 * (double)stats.wait_ns / reps;
		out->launches = (double)stats.launches / reps;
		if (keep)
			b->untimed_events += stats.untimed_events;
		if (keep)
			for (int op = 0; op < XO_OP_COUNT; op++)
				for (int d = 0; d < XO_DIR_COUNT; d++) {
					b->op_ns[op][d] += (double)stats.op_ns[op][d] / reps;
					b->op_launch[op][d] +=
					    (double)stats.op_launches[op][d] / reps;
				}
	}
	return XO_OK;
}

/*
 * Warm-up: two calls (program builds, page faults, thread start), then reps
 * from the fastest of five single synced calls, rounded down to a power of
 * two so that one sample lasts about target seconds. A sample ends in one
 * device sync whose cost its reps share, so runs with different reps do not
 * measure quite the same thing on an asynchronous device: reps are sticky,
 * the previous run's reps on this testbed (prev, 0 when none) are kept while
 * the calibration stays within a factor of 8 of them (asv's fixed `number`).
 * Then one discarded sample at those reps.
 */
static enum xo_status warm_up(struct bench *b, double target, int64_t prev)
{
	struct xo_perf_sample s;
	enum xo_status st;
	double best = INFINITY;
	int64_t reps = 1;

	b->r.reps = 1;
	for (int i = 0; i < 7; i++) {
		if ((st = take_sample(b, &s, false)))
			return st;
		if (i >= 2 && s.wall_s < best)
			best = s.wall_s;
	}
	while (reps < 65536 && (double)(2 * reps) * best <= target)
		reps *= 2;
	if (prev > 0 && reps <= 8 * prev && prev <= 8 * reps)
		reps = prev;
	b->r.reps = reps;
	return take_sample(b, &s, false);
}

/* Kernel time per layer of one training step (the model syncs each op on its
 * own here, so this is not a sample: it only says where device time goes). */
static void profile_layers(struct bench *b)
{
	uint64_t ns[XO_PERF_MAX_LAYERS] = {0}, launches[XO_PERF_MAX_LAYERS] = {0}, extra = 0;
	int n = xo_model_layer_count(b->m);

	if (n < 1 || n + 1 > XO_PERF_MAX_LAYERS)
		return;
	if (xo_model_bench_profile_step(b->m, ns, launches, &extra) != XO_OK) {
		fprintf(stderr, "xo perf: %s: no layer profile: %s\n", b->r.b.name,
		        xo_last_error());
		return;
	}
	for (int i = 0; i < n; i++) {
		snprintf(b->r.layer_name[i], sizeof(b->r.layer_name[i]), "%s",
		         xo_model_layer_name(b->m, i));
		b->r.layer_kernel_s[i] = 1e-9 * (double)ns[i];
		b->r.layer_launches[i] = (double)launches[i];
	}
	snprintf(b->r.layer_name[n], sizeof(b->r.layer_name[n]), "loss+accuracy+adam");
	b->r.layer_kernel_s[n] = 1e-9 * (double)extra;
	b->r.nlayers = n + 1;
}

static void bench_free(struct bench *b)
{
	for (size_t i = 0; i < sizeof(b->owned) / sizeof(b->owned[0]); i++)
		xo_tensor_free(b->owned[i]);
	xo_model_close(b->m);
	free(b->r.samples);
}

/* One line that fits 80 columns (a wrapped line defeats the \r). */
static void progress(size_t done, size_t total, const char *name)
{
	int width = 24, filled = total ? (int)(width * done / total) : width;

	fprintf(stderr, "\r[%.*s%*s] %zu/%zu %-40.40s", filled, "########################",
	        width - filled, "", done, total, name);
	if (done == total)
		fputc('\n', stderr);
	fflush(stderr);
}

/* ---- instruction counts ---------------------------------------------- */

/*
 * `record --metric instructions` counts the instructions of exactly the call
 * a time sample times (xo_op_run or one model step, and the device sync),
 * iai-callgrind style: the recorder runs itself again under `valgrind
 * --tool=callgrind --collect-atstart=no` (xo_proc_run: an argument vector, no
 * shell) as the counting child (`record --count-child DIR`), which builds the
 * same benchmark set, warms each benchmark up with two uncounted calls, then
 * per sample zeroes callgrind's counters, switches collection on around the
 * one call, and dumps (CALLGRIND_DUMP_STATS_AT): dump k is DIR/cg.out.k, its
 * "summary:" line the instructions (Ir) of that call. The child writes
 * DIR/counts.tsv; this process stores it. Hardware counters
 * (perf_event_open) would be faster, but counts from the two sources are not
 * comparable, and on the development VM perf_event_open of
 * PERF_COUNT_HW_INSTRUCTIONS fails (ENOENT: the hypervisor exposes no PMU),
 * so callgrind is the one source: it counts the same on every x86-64 machine
 * that runs the same binary and ISA.
 *
 * Deterministic counts: the child runs with XO_THREADS=1 (the cpu pool's
 * workers spin-wait for work, and a spin's length depends on scheduling, so
 * with workers a count would vary from call to call; one thread does all the
 * work itself) and OPENBLAS_NUM_THREADS=1, and XO_CPU_ISA=avx2 (Valgrind
 * cannot run AVX-512; scalar on a CPU without AVX2+FMA). The ISA and thread
 * count are stored in the series' params and hashed into its version, so a
 * change of either is a [source changed] series, never a silent jump. cl
 * devices are not counted (the host instructions of an OpenCL runtime say
 * little about the device, and PoCL's own threads would make them vary).
 */

void xo_perf_count_name(const char *name, char *out, size_t size)
{
	const char *slash = strrchr(name, '/');

	if (!slash)
		snprintf(out, size, "%s/instructions", name);
	else
		snprintf(out, size, "%.*s/instructions%s", (int)(slash - name), name, slash);
}

bool xo_perf_callgrind_total(const char *path, double *count)
{
	FILE *f = fopen(path, "r");
	char line[512];
	bool ok = false;

	if (!f)
		return false;
	while (!ok && fgets(line, sizeof(line), f)) {
		const char *v;
		char *end;
		unsigned long long n;

		if (strncmp(line, "summary:", 8) && strncmp(line, "totals:", 7))
			continue;
		v = strchr(line, ':') + 1;
		while (*v == ' ')
			v++;
		if (*v < '0' || *v > '9') /* strtoull would take "-3" */
			continue;
		errno = 0;
		n = strtoull(v, &end, 10);
		if (end != v && !errno && (*end == '\n' || *end == '\0' || *end == ' ')) {
			*count = (double)n;
			ok = true;
		}
	}
	fclose(f);
	return ok;
}

static bool counted_device(const struct device *d)
{
	return d->be && !d->is_cl;
}

/* The counting child: see the comment above. */
static enum xo_status count_child(struct bench *b, size_t nb, struct device *dev, int ndev,
                                  const char *dir)
{
	char path[4200];
	FILE *out;
	int dump = 0;
	enum xo_status st = XO_OK;

	if (!RUNNING_ON_VALGRIND)
		return xo_error(XO_EINVAL, "--count-child runs only under valgrind --tool=callgrind "
		                           "(`xo perf record --metric instructions` starts it)");
	snprintf(path, sizeof(path), "%s/counts.tsv", dir);
	if (!(out = fopen(path, "w")))
		return xo_error(XO_EIO, "%s: %s", path, strerror(errno));
	for (int d = 0; d < ndev; d++)
		if (counted_device(&dev[d]))
			fprintf(out, "#device\t%s\t%s\n", dev[d].label,
			        xo_backend_describe(dev[d].be));
	for (size_t i = 0; i < nb && !st; i++) {
		struct bench *x = &b[i];
		double c[XO_PERF_COUNT_SAMPLES];

		if (!x->ok)
			continue;
		/* two uncounted calls: first-call work (dropout masks, packed
		 * weights, page faults) is not the call's own */
		for (int k = 0; k < 2 && !st; k++)
			if (!(st = run_once(x)))
				st = xo_backend_sync(x->dev->be);
		if (st) {
			fprintf(out, "#skip\t%s\t%s\n", x->r.b.name, xo_last_error());
			st = XO_OK;
			continue;
		}
		for (int k = 0; k < XO_PERF_COUNT_SAMPLES; k++) {
			enum xo_status rs;

			CALLGRIND_ZERO_STATS;
			CALLGRIND_TOGGLE_COLLECT;
			rs = run_once(x);
			if (!rs)
				rs = xo_backend_sync(x->dev->be);
			CALLGRIND_TOGGLE_COLLECT;
			CALLGRIND_DUMP_STATS_AT(x->r.b.name);
			snprintf(path, sizeof(path), "%s/cg.out.%d", dir, ++dump);
			if (rs) {
				fprintf(out, "#skip\t%s\t%s\n", x->r.b.name, xo_last_error());
				unlink(path);
				break;
			}
			if (!xo_perf_callgrind_total(path, &c[k])) {
				st = xo_error(XO_EIO, "%s: no callgrind summary (is this callgrind?)",
				              path);
				break;
			}
			unlink(path);
			if (k == XO_PERF_COUNT_SAMPLES - 1) {
				fprintf(out, "%s", x->r.b.name);
				for (int j = 0; j < XO_PERF_COUNT_SAMPLES; j++)
					fprintf(out, "\t%.0f", c[j]);
				fputc('\n', out);
				fflush(out); /* a long count shows its progress */
			}
		}
	}
	if (fclose(out) && !st)
		st = xo_error(XO_EIO, "%s/counts.tsv: write failed", dir);
	return st;
}

/* The word after "key=" in s ("cpu: isa=avx2 (vector ...)" -> "avx2"), or dflt. */
static void desc_word(const char *s, const char *key, char *out, size_t size, const char *dflt)
{
	const char *p = strstr(s, key);
	size_t n = 0;

	if (!p) {
		snprintf(out, size, "%s", dflt);
		return;
	}
	p += strlen(key);
	while (p[n] && p[n] != ' ' && p[n] != ',' && p[n] != '\t' && p[n] != '\n')
		n++;
	snprintf(out, size, "%.*s", (int)n, p);
}

static void remove_count_dir(const char *dir)
{
	static const char *const files[] = {"counts.tsv", "cg.out", "child.log"};
	char path[4200];
	DIR *d;
	struct dirent *e;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	/* dumps a failed child left behind: cg.out.N only */
	if ((d = opendir(dir))) {
		while ((e = readdir(d)))
			if (!strncmp(e->d_name, "cg.out.", 7)) {
				snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
				unlink(path);
			}
		closedir(d);
	}
	rmdir(dir);
}

/*
 * The parent's side: runs the counting child over the benchmarks of the
 * counted devices and appends one instruction series per counted benchmark
 * to res (room for nb more), *nres updated. A benchmark the child skipped is
 * reported on stderr; a child that fails is an error naming its kept log.
 */
/* The command line of the counting child (valgrind's callgrind running this
 * xo's record --count-child in dir) into argv (room for cap). */
static void count_argv(const char **argv, int cap, const struct xo_perf_record_opts *o,
                       const struct device *dev, int ndev, const char *exe, const char *dir,
                       const char *cgout, const char *isa_env)
{
	int n = 0;

	argv[n++] = "env";
	argv[n++] = isa_env;
	argv[n++] = "XO_THREADS=1";
	argv[n++] = "OPENBLAS_NUM_THREADS=1";
	argv[n++] = "valgrind";
	argv[n++] = "--tool=callgrind";
	argv[n++] = "--collect-atstart=no";
	argv[n++] = cgout;
	argv[n++] = exe;
	argv[n++] = "perf";
	argv[n++] = "record";
	argv[n++] = "--count-child";
	argv[n++] = dir;
	argv[n++] = "--no-progress";
	if (o->quick)
		argv[n++] = "--quick";
	if (o->filter) {
		argv[n++] = "--filter";
		argv[n++] = o->filter;
	}
	if (o->model_path) {
		argv[n++] = "--model";
		argv[n++] = o->model_path;
	}
	for (int d = 0; d < ndev && n + 3 < cap; d++)
		if (counted_device(&dev[d])) {
			argv[n++] = "--device";
			argv[n++] = dev[d].spec;
		}
	argv[n] = NULL;
}

static enum xo_status count_pass(struct bench *b, size_t nb, struct device *dev, int ndev,
                                 const struct xo_perf_record_opts *o,
                                 struct xo_perf_result *res, size_t *nres, FILE *out)
{
	const char *tmp = getenv("TMPDIR");
	const char *argv[64 + 2 * XO_PERF_MAX_LAYERS];
	char dir[4096], cgout[4200], log[4200], tsv[4200], exe[4096], line[1024];
	char isa_env[32], isa[24] = "", threads[16] = "";
	int code = 0, ndevs = 0;
	size_t counted = 0;
	enum xo_status st = XO_OK;
	double t0 = now_s();
	FILE *f;

	for (int d = 0; d < ndev; d++)
		ndevs += counted_device(&dev[d]);
	if (!ndevs) {
		fprintf(stderr, "xo perf: no instruction counts: only ref and cpu are counted, and "
		                "neither is among the devices measured\n");
		return XO_OK;
	}
	if (o->xo_exe) {
		snprintf(exe, sizeof(exe), "%s", o->xo_exe);
	} else {
		ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (len <= 0)
			return xo_error(XO_EIO, "--metric instructions: cannot find this xo's "
			                        "executable (/proc/self/exe): %s",
			                strerror(errno));
		exe[len] = '\0';
	}
	snprintf(dir, sizeof(dir), "%s/xo-count-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return xo_error(XO_EIO, "%s: cannot create a temporary directory: %s", dir,
		                strerror(errno));
	snprintf(cgout, sizeof(cgout), "--callgrind-out-file=%s/cg.out", dir);
	snprintf(log, sizeof(log), "%s/child.log", dir);
	snprintf(tsv, sizeof(tsv), "%s/counts.tsv", dir);
	/* AVX2 where the CPU has it (Valgrind runs no AVX-512), else scalar */
	snprintf(isa_env, sizeof(isa_env), "XO_CPU_ISA=%s",
	         __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? "avx2"
	                                                                          : "scalar");
	count_argv(argv, (int)(sizeof(argv) / sizeof(argv[0])), o, dev, ndev, exe, dir, cgout,
	           isa_env);
	{
		struct xo_proc p = {.argv = argv, .cwd = dir, .log_path = log};

		st = xo_proc_run(&p, &code, NULL, NULL);
	}
	if (!st && code)
		st = xo_error(XO_EIO,
		              "--metric instructions: the counting run under valgrind failed (exit "
		              "%d); its log is %s",
		              code, log);
	if (st)
		return st; /* the directory stays, for the log */
	if (!(f = fopen(tsv, "r")))
		return xo_error(XO_EIO, "%s: %s (the counting run's log is %s)", tsv, strerror(errno),
		                log);
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *save = NULL, *tok;
		struct xo_perf_result *r;
		struct bench *x = NULL;
		char sig[96];

		line[strcspn(line, "\n")] = '\0';
		if (!tab)
			continue;
		*tab = '\0';
		if (!strcmp(line, "#device")) {
			char *desc = strchr(tab + 1, '\t');

			/* the cpu backend's ISA and threads (ref has neither) */
			if (desc && !strncmp(tab + 1, "cpu", 3)) {
				desc_word(desc + 1, "isa=", isa, sizeof(isa), "");
				desc_word(desc + 1, "threads=", threads, sizeof(threads), "");
			}
			continue;
		}
		if (!strcmp(line, "#skip")) {
			fprintf(stderr, "xo perf: not counted: %s\n", tab + 1);
			continue;
		}
		for (size_t i = 0; i < nb && !x; i++)
			if (!strcmp(b[i].r.b.name, line))
				x = &b[i];
		if (!x)
			continue;
		r = &res[*nres];
		memset(r, 0, sizeof(*r));
		r->b = x->r.b;
		xo_perf_count_name(x->r.b.name, r->b.name, sizeof(r->b.name));
		snprintf(r->b.metric, sizeof(r->b.metric), "instructions");
		snprintf(r->b.unit, sizeof(r->b.unit), "instructions");
		snprintf(sig, sizeof(sig), "counter=callgrind-Ir isa=%s threads=%s",
		         x->dev->is_cl || strncmp(x->dev->label, "cpu", 3) ? "baseline" : isa,
		         strncmp(x->dev->label, "cpu", 3) ? "1" : threads);
		snprintf(r->b.params, sizeof(r->b.params), "%s %s", x->r.b.params, sig);
		if (xo_perf_version_known(x->r.b.version))
			snprintf(r->b.version, sizeof(r->b.version), "%016llx",
			         (unsigned long long)xo_perf_fnv(strtoull(x->r.b.version, NULL, 16),
			                                         sig, strlen(sig)));
		else
			snprintf(r->b.version, sizeof(r->b.version), "%s", XO_PERF_VERSION_UNKNOWN);
		r->reps = 1;
		r->samples = calloc(XO_PERF_COUNT_SAMPLES, sizeof(*r->samples));
		if (!r->samples) {
			st = xo_error(XO_ENOMEM, "perf: out of memory");
			break;
		}
		for (tok = strtok_r(tab + 1, "\t", &save); tok && r->n < XO_PERF_COUNT_SAMPLES;
		     tok = strtok_r(NULL, "\t", &save))
			r->samples[r->n++].wall_s = strtod(tok, NULL);
		if (r->n != XO_PERF_COUNT_SAMPLES) {
			free(r->samples);
			continue;
		}
		(*nres)++;
		counted++;
	}
	fclose(f);
	if (!st) {
		fprintf(out, "counted %zu instruction series x %d calls under callgrind (cpu isa=%s, "
		             "%s thread) in %.1f s\n",
		        counted, XO_PERF_COUNT_SAMPLES, isa[0] ? isa : "-",
		        threads[0] ? threads : "1", now_s() - t0);
		remove_count_dir(dir);
	}
	return st;
}

/* ---- record ---------------------------------------------------------------------------- */

/* Seconds of each device probe (struct xo_probe): a rough probe is enough to
 * track a machine over time; `xo probe` takes longer. */
#define RECORD_PROBE_S 1.5
#define RECORD_PROBE_QUICK_S 1.0

/*
 * Probes each device that measured at least one benchmark and has a probe
 * (not ref), once: *out gets a row per device for the run's transaction. A
 * probe that fails is reported and left out; the run's results stand.
 */
static enum xo_status probe_devices(struct device *dev, int ndev, const struct bench *b,
                                    size_t nb, bool quick, struct xo_perf_probe **out,
                                    size_t *nout)
{
	struct xo_perf_probe *p = calloc((size_t)ndev, sizeof(*p));
	size_t n = 0;

	if (!p)
		return xo_error(XO_ENOMEM, "perf: out of memory");
	for (int d = 0; d < ndev; d++) {
		bool measured = false;

		for (size_t i = 0; i < nb && !measured; i++)
			measured = b[i].dev == &dev[d] && b[i].ok && b[i].r.n;
		if (!measured || !dev[d].be->iface->probe)
			continue;
		snprintf(p[n].device, sizeof(p[n].device), "%s", dev[d].label);
		if (xo_backend_probe(dev[d].be, quick ? RECORD_PROBE_QUICK_S : RECORD_PROBE_S,
		                     &p[n].p)) {
			fprintf(stderr, "xo perf: probe of %s failed, not stored: %s\n", dev[d].label,
			        xo_last_error());
			continue;
		}
		n++;
	}
	*out = p;
	*nout = n;
	return XO_OK;
}

/* Sets up benchmark x: its model, or its op case (found by the name's
 * op/DIR/SHAPE/ prefix) with inputs drawn from rng. */
static enum xo_status bench_setup(struct bench *x, const char *model_path, uint64_t *rng)
{
	size_t c;

	if (x->is_model)
		return model_setup(x, model_path);
	for (c = 0; c < sizeof(op_cases) / sizeof(op_cases[0]); c++) {
		char prefix[192];

		snprintf(prefix, sizeof(prefix), "op/%s/%s/%s/", op_cases[c].op, x->r.b.dir,
		         op_cases[c].label);
		if (!strncmp(x->r.b.name, prefix, strlen(prefix)))
			break;
	}
	return op_setup(x, &op_cases[c], rng);
}

/* Appends the benchmark set of o (ops, then the model's batches, on each of
 * the ndev devices devs; those re, when not NULL, matches) to b: no device is
 * opened (--list needs none). */
static void bench_list_build(const struct xo_perf_record_opts *o, const char **devs, int ndev,
                             struct device *dev, const regex_t *re, const char *settings,
                             const char *model_settings, const char *model_name,
                             const char *model_arch, struct bench *b, size_t *nb)
{
	for (int d = 0; d < ndev; d++) {
		struct device *D = &dev[d];
		bool is_ref = !strcmp(devs[d], "ref");
		int64_t ref_cap = o->quick ? 64 : 512;
		const char *op_units[] = {"core", "runner", backend_unit(devs[d]), NULL};
		const char *model_units[] = {"core", "runner", "model", backend_unit(devs[d]),
		                             NULL};
		char model_version[24];

		snprintf(D->spec, sizeof(D->spec), "%s", devs[d]);
		snprintf(D->label, sizeof(D->label), "%s", devs[d]);
		D->is_cl = !strncmp(devs[d], "cl", 2);
		code_version(op_units, settings, D->version, sizeof(D->version));
		code_version(model_units, model_settings, model_version, sizeof(model_version));
		for (size_t c = 0; c < sizeof(op_cases) / sizeof(op_cases[0]); c++) {
			const struct op_case *oc = &op_cases[c];
			enum xo_op op = xo_op_from_name(oc->op);

			if ((o->quick && !oc->quick) || (is_ref && oc->heavy) || op == XO_OP_COUNT)
				continue;
			for (int dir = 0; dir < XO_DIR_COUNT; dir++) {
				struct bench *x = &b[*nb];
				struct xo_perf_bench *info = &x->r.b;
				struct xo_params p;

				if (dir == XO_DIR_BWD && !xo_op_has_bwd(op))
					continue;
				snprintf(info->name, sizeof(info->name), "op/%s/%s/%s/%s", oc->op,
				         xo_dir_name((enum xo_dir)dir), oc->label, D->label);
				if (re && regexec(re, info->name, 0, NULL, 0))
					continue;
				x->dev = D;
				x->op = op;
				x->dir = (enum xo_dir)dir;
				snprintf(info->kind, sizeof(info->kind), "op");
				snprintf(info->device, sizeof(info->device), "%s", D->label);
				snprintf(info->what, sizeof(info->what), "%s", oc->op);
				snprintf(info->dir, sizeof(info->dir), "%s", xo_dir_name(x->dir));
				if (parse_params(oc->params, &p) == XO_OK) {
					info->batch = p.batch;
					xo_params_format(op, x->dir, &p, info->params,
					                 sizeof(info->params));
				}
				snprintf(info->version, sizeof(info->version), "%s", D->version);
				x->args.p = p;
				(*nb)++;
			}
		}
		for (int64_t batch = 1; batch <= 8192; batch *= (o->quick ? 8 : 2)) {
			if (is_ref && batch > ref_cap)
				break;
			for (int w = 0; w < W_COUNT; w++) {
				struct bench *x = &b[*nb];
				struct xo_perf_bench *info = &x->r.b;

				snprintf(info->name, sizeof(info->name), "model/%s/%s/b%lld/%s",
				         model_name, workload_names[w], (long long)batch, D->label);
				if (re && regexec(re, info->name, 0, NULL, 0))
					continue;
				x->dev = D;
				x->is_model = true;
				x->w = (enum workload)w;
				snprintf(info->kind, sizeof(info->kind), "model");
				snprintf(info->device, sizeof(info->device), "%s", D->label);
				snprintf(info->what, sizeof(info->what), "%s", workload_names[w]);
				snprintf(info->model, sizeof(info->model), "%s", model_name);
				info->batch = batch;
				snprintf(info->params, sizeof(info->params), "model=%s batch=%lld arch=%s",
				         model_name, (long long)batch, model_arch);
				snprintf(info->version, sizeof(info->version), "%s", model_version);
				(*nb)++;
			}
		}
	}
}

/* --list: the benchmark names, one a line, or (--json) their descriptions. */
static void bench_list_print(const struct xo_perf_record_opts *o, const struct bench *b, size_t nb,
                             FILE *out)
{
	if (o->json) {
		json_t *arr = json_array();

		for (size_t i = 0; arr && i < nb; i++) {
			const struct xo_perf_bench *x = &b[i].r.b;

			json_array_append_new(
			    arr, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s}", "name",
			                   x->name, "kind", x->kind, "device", x->device, "what", x->what,
			                   "dir", x->dir, "model", x->model, "batch", (json_int_t)x->batch,
			                   "params", x->params, "version", x->version));
		}
		xo_perf_json_print(arr, out);
		json_decref(arr);
		return;
	}
	for (size_t i = 0; i < nb; i++)
		fprintf(out, "%s\n", b[i].r.b.name);
}

/* Whether the instruction metric can be counted here: on some device that is
 * not OpenCL, by valgrind, in a build valgrind can run. */
static enum xo_status metric_check(unsigned metrics, const struct device *dev, int ndev)
{
	enum xo_status st = XO_OK;

	if (metrics == XO_PERF_METRIC_INSTRUCTIONS) {
		bool any = false;

		for (int d = 0; d < ndev; d++)
			any |= !dev[d].is_cl;
		if (!any) {
			st = xo_error(XO_EINVAL, "--metric instructions counts ref and cpu only, and "
			                         "no --device names either");
			return st;
		}
	}
#if defined(__SANITIZE_ADDRESS__)
	if (metrics & XO_PERF_METRIC_INSTRUCTIONS) {
		st = xo_error(XO_EINVAL, "--metric instructions: this xo is built with "
		                         "AddressSanitizer, which valgrind cannot run; use a "
		                         "Release build");
		return st;
	}
#endif
	if ((metrics & XO_PERF_METRIC_INSTRUCTIONS) && !xo_proc_found("valgrind")) {
		st = xo_error(XO_EINVAL, "--metric instructions needs valgrind (Debian package "
		                         "valgrind), and it is not in PATH");
		return st;
	}

	return st;
}

/* Opens the devices: one the user named (--device) that does not open is
 * bad input; one of the defaults is skipped (be NULL) with its reason. */
static enum xo_status devices_open(const struct xo_perf_record_opts *o, struct device *dev,
                                   int ndev)
{
	for (int d = 0; d < ndev; d++) {
		if (xo_backend_open(dev[d].spec, &dev[d].be) == XO_OK)
			continue;
		dev[d].be = NULL;
		if (o->devices && o->ndevices) {
			char why[512]; /* xo_error writes the buffer xo_last_error reads */

			snprintf(why, sizeof(why), "%s", xo_last_error());
			return xo_error(XO_EINVAL, "--device %s: %s", dev[d].spec, why);
		}
		fprintf(stderr, "xo perf: device %s skipped: %s\n", dev[d].spec, xo_last_error());
	}
	return XO_OK;
}

/* The samples, round-robin over the benchmarks that set up, in a new
 * shuffled order (drawn from rng) every round. */
static void sample_rounds(const struct xo_perf_record_opts *o, struct bench *b, size_t nb,
                          size_t *order, int samples, bool timed, uint64_t *rng)
{
	for (int round = 0; round < samples && timed; round++) {
		for (size_t i = nb - 1; i > 0; i--) {
			size_t j = (size_t)(rng_next(rng) % (i + 1)), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (size_t k = 0; k < nb; k++) {
			struct bench *x = &b[order[k]];

			if (o->progress)
				progress((size_t)round * nb + k, (size_t)samples * nb, x->r.b.name);
			if (!x->ok)
				continue;
			if (take_sample(x, &x->r.samples[x->r.n], true)) {
				fprintf(stderr, "\nxo perf: %s dropped: %s\n", x->r.b.name,
				        xo_last_error());
				x->ok = false;
				continue;
			}
			x->r.n++;
		}
	}
	if (o->progress && timed)
		progress((size_t)samples * nb, (size_t)samples * nb, "done");

}

/* The results of the benchmarks that measured, appended to res (*nok of
 * them), each with its kernel time and launches per call per op. */
static void results_gather(struct bench *b, size_t nb, struct xo_perf_result *res, size_t *nok)
{
	for (size_t i = 0; i < nb; i++) {
		struct bench *x = &b[i];

		if (!x->ok || !x->r.n)
			continue;
		if (x->untimed_events)
			fprintf(stderr,
			        "xo perf: %s: %llu OpenCL events had no readable times "
			        "(untimed_events); its event split is missing their time\n",
			        x->r.b.name, (unsigned long long)x->untimed_events);
		for (int op = 0; op < XO_OP_COUNT; op++)
			for (int d = 0; d < XO_DIR_COUNT; d++) {
				x->r.op_kernel_s[op][d] = 1e-9 * x->op_ns[op][d] / (double)x->r.n;
				x->r.op_launches[op][d] = x->op_launch[op][d] / (double)x->r.n;
			}
		if (x->is_model && x->w == W_TRAIN_STEP && x->dev->is_cl)
			profile_layers(x);
		res[(*nok)++] = x->r;
	}
}

/* The model record times (model_path, "" for the built-in seed spec) and
 * the name and architecture its series are stored under (modelid.c); a
 * different model of the same name in the store is refused here. */
static enum xo_status model_resolve(struct xo_perfdb *db, const struct xo_perf_record_opts *o,
                                    char *model_path, size_t path_size, char *model_name,
                                    size_t name_size, char *model_arch, size_t arch_size)
{
	enum xo_status st;

	/* --model names a spec file; by default models/seed.model of the source
	 * tree, or the same spec built into the library when that is not there */
	if (o->model_path) {
		snprintf(model_path, path_size, "%s", o->model_path);
		if (access(model_path, R_OK)) {
			return xo_error(XO_EINVAL, "--model %s: cannot read it", o->model_path);
		}
	} else {
		snprintf(model_path, path_size, "%s/models/seed.model",
		         xo_perf_source_dir());
		if (access(model_path, R_OK))
			model_path[0] = '\0';
	}
	st = xo_perf_model_ident(model_path[0] ? model_path : NULL, model_name, name_size,
	                         model_arch, arch_size);
	if (!st && db && !o->list_only)
		st = xo_perfdb_model_claim(db, model_name, model_arch,
		                           o->model_path ? model_path : NULL);
	return st;

}

/* The counting child (count_pass): counted devices only, no store. */
static enum xo_status count_child_run(struct bench *b, size_t nb, struct device *dev, int ndev,
                                      const char *count_dir, const char *model_path,
                                      uint64_t *rng)
{
	enum xo_status st;

	for (int d = 0; d < ndev; d++)
		if (!dev[d].is_cl && xo_backend_open(dev[d].spec, &dev[d].be)) {
			return xo_error(XO_EINVAL, "--device %s does not open", dev[d].spec);
		}
	for (size_t i = 0; i < nb; i++) {
		struct bench *x = &b[i];

		if (!counted_device(x->dev))
			continue;
		st = bench_setup(x, model_path, rng);
		if (st) {
			fprintf(stderr, "xo perf: %s not counted: %s\n", x->r.b.name,
			        xo_last_error());
			st = XO_OK;
			continue;
		}
		x->ok = true;
	}
	return count_child(b, nb, dev, ndev, count_dir);
}

/* Each benchmark on a device that opened set up and warmed up (its reps
 * sticky to the latest run's on testbed tb), room made for its samples; one
 * that fails is skipped with its reason. */
static enum xo_status bench_setup_all(struct xo_perfdb *db, const struct xo_perf_testbed *tb,
                                      struct bench *b, size_t nb, int samples, double target,
                                      const char *model_path, uint64_t *rng)
{
	enum xo_status st;

	for (size_t i = 0; i < nb; i++) {
		struct bench *x = &b[i];

		if (!x->dev->be)
			continue;
		x->r.samples = calloc((size_t)samples, sizeof(*x->r.samples));
		if (!x->r.samples) {
			return xo_error(XO_ENOMEM, "perf: out of memory");
		}
		st = bench_setup(x, model_path, rng);
		if (!st)
			st = warm_up(x, target, xo_perfdb_prev_reps(db, tb, x->r.b.name));
		if (st) {
			fprintf(stderr, "xo perf: %s skipped: %s\n", x->r.b.name, xo_last_error());
			st = XO_OK;
			continue;
		}
		x->ok = true;
		x->r.has_split = x->dev->is_cl;
	}
	return XO_OK;
}

/* The line that says what run run_id stored, and what it skipped. */
static void print_stored(FILE *out, int64_t run_id, size_t nb, size_t nok, size_t ntimed,
                         bool timed, int samples, double secs, const struct xo_perf_commit *c)
{
	if (nok > ntimed)
		fprintf(out,
		        "run %lld: %zu benchmarks x %d samples and %zu instruction series x %d in "
		        "%.1f s, commit %.12s%s, stored\n",
		        (long long)run_id, ntimed, timed ? samples : 0, nok - ntimed,
		        XO_PERF_COUNT_SAMPLES, secs, c->sha,
		        c->dirty ? " (dirty)" : "");
	else
		fprintf(out, "run %lld: %zu benchmarks x %d samples in %.1f s, commit %.12s%s, stored\n",
		        (long long)run_id, nok, samples, secs, c->sha,
		        c->dirty ? " (dirty)" : "");
	if (timed && ntimed < nb)
		fprintf(out, "run %lld: %zu benchmarks skipped (messages above)\n",
		        (long long)run_id, nb - ntimed);
}

enum xo_status xo_perf_record(struct xo_perfdb *db, const struct xo_perf_record_opts *o, FILE *out,
                              int64_t *run_id)
{
	static const char *const default_devices[] = {"ref", "cpu", "cl"};
	const char **devs = o->devices && o->ndevices ? o->devices : (const char **)default_devices;
	int ndev = o->devices && o->ndevices ? o->ndevices : 3;
	struct device *dev = NULL;
	struct bench *b = NULL;
	struct xo_perf_result *res = NULL;
	struct xo_perf_commit commit;
	struct xo_perf_testbed tb;
	struct xo_perf_run run; /* written whole at the end (xo_perfdb_run_store) */
	size_t nb = 0, cap, nok = 0;
	uint64_t rng = 0x5eed;
	char settings[64], model_settings[320];
	int samples = o->samples > 0 ? o->samples : (o->quick ? 10 : 15);
	double target = o->quick ? 0.003 : 0.010, t_start = now_s();
	char model_path[4096], model_name[64], model_arch[24], note[256];
	regex_t re;
	bool have_re = false;
	enum xo_status st = XO_OK;
	size_t *order = NULL;
	struct xo_perf_probe *probes = NULL;
	size_t nprobes = 0, ntimed = 0;
	unsigned metrics = o->metrics ? o->metrics : XO_PERF_METRIC_TIME;
	bool timed = (metrics & XO_PERF_METRIC_TIME) && !o->count_dir;

	if (o->filter) {
		int rc = regcomp(&re, o->filter, REG_EXTENDED | REG_NOSUB);

		if (rc) {
			char msg[256];

			regerror(rc, &re, msg, sizeof(msg));
			return xo_error(XO_EINVAL, "--filter '%s': %s", o->filter, msg);
		}
		have_re = true;
	}
	if ((st = model_resolve(db, o, model_path, sizeof(model_path), model_name,
	                        sizeof(model_name), model_arch, sizeof(model_arch))))
		goto out_free;

	/* versions: an op measures the core, this runner and its backend's
	 * objects; a model the model library's too, and its architecture */
	snprintf(settings, sizeof(settings), "samples>=10 target=%g", target);
	snprintf(model_settings, sizeof(model_settings), "%s arch=%s", settings, model_arch);

	dev = calloc((size_t)ndev, sizeof(*dev));
	cap = (sizeof(op_cases) / sizeof(op_cases[0]) * 2 + 2 * 16) * (size_t)ndev;
	b = calloc(cap, sizeof(*b));
	if (!dev || !b) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out_free;
	}

	/* the benchmark set, before any device is opened (--list needs none) */
	bench_list_build(o, devs, ndev, dev, have_re ? &re : NULL, settings, model_settings,
	                 model_name, model_arch, b, &nb);
	if (o->list_only) {
		bench_list_print(o, b, nb, out);
		goto out_free;
	}
	if (!nb) {
		st = xo_error(XO_EINVAL, "no benchmark matches --filter '%s'",
		              o->filter ? o->filter : "");
		goto out_free;
	}

	if (o->count_dir) {
		st = count_child_run(b, nb, dev, ndev, o->count_dir, model_path[0] ? model_path : NULL,
		                     &rng);
		goto out_free;
	}
	if ((st = metric_check(metrics, dev, ndev)))
		goto out_free;

	/* identity first; the run is written whole after the measurement, in
	 * one transaction, so nothing is held open while it measures and a
	 * killed record leaves no row behind */
	xo_perf_commit_of_build(&commit);
	xo_perf_testbed_probe(&tb);
	snprintf(note, sizeof(note), "record%s samples=%d%s%s", o->quick ? " --quick" : "", samples,
	         o->filter ? " filter=" : "", o->filter ? o->filter : "");

	/* devices first: a device the user named (--device) that
	 * does not open is bad input (no run is stored); one of the
	 * defaults (no OpenCL driver, say) is skipped with its reason */
	if ((st = devices_open(o, dev, ndev)))
		goto out_free;
	xo_perf_run_start(&run, &commit, &tb, note);
	if (timed && (st = bench_setup_all(db, &tb, b, nb, samples, target,
	                                     model_path[0] ? model_path : NULL, &rng)))
		goto out_free;
	order = malloc(nb * sizeof(*order));
	if (!order) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out_free;
	}
	for (size_t i = 0; i < nb; i++)
		order[i] = i;
	sample_rounds(o, b, nb, order, samples, timed, &rng);

	res = calloc(2 * nb, sizeof(*res)); /* the times, then the counts */
	if (!res) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out_free;
	}
	results_gather(b, nb, res, &nok);
	ntimed = nok;
	if ((metrics & XO_PERF_METRIC_INSTRUCTIONS) &&
	    (st = count_pass(b, nb, dev, ndev, o, res, &nok, out)))
		goto out_free;
	if (!nok) {
		st = xo_error(XO_EINVAL,
		              "no benchmark could run (see the messages above); "
		              "no run stored");
		goto out_free;
	}
	if (timed && !o->no_probe &&
	    (st = probe_devices(dev, ndev, b, nb, o->quick, &probes, &nprobes)))
		goto out_free;
	if ((st = xo_perfdb_run_store(db, &run, res, nok, probes, nprobes, run_id)))
		goto out_free;
	print_stored(out, *run_id, nb, nok, ntimed, timed, samples, now_s() - t_start, &commit);

out_free:
	free(probes);
	for (size_t i = ntimed; res && i < nok; i++) /* the counts own their samples */
		free(res[i].samples);
	free(res);
	free(order);
	for (size_t i = 0; b && i < nb; i++)
		bench_free(&b[i]);
	free(b);
	for (int d = 0; dev && d < ndev; d++)
		xo_backend_close(dev[d].be);
	free(dev);
	if (have_re)
		regfree(&re);
	return st;
}
