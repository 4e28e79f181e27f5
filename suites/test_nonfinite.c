/*
 * test_nonfinite.c - NaN and Inf as Keras 3 on JAX/XLA (float32, the CPU)
 * gives them, on ref, cpu at every ISA level and cl: the max pools and the
 * Maximum/Minimum merges (a NaN anywhere in a window or pair gives NaN;
 * the gradient where jax.grad puts it), the losses whose float32 sums
 * overflow (Keras's loss is Inf, or its q = p / Inf clipped, where a double
 * sum stays finite), and the fused conv1d + max_pooling1d path of cpu and
 * cl with a NaN input.
 *
 * Every expected value was printed by Keras 3.15.1 with the JAX backend
 * (the layer or loss called on these arrays; gradients by jax.vjp);
 * scripts/nonfinite_survey.py compares whole models the same way. The
 * comparison is by kind: NaN where Keras has NaN, the same bits elsewhere
 * (copies, choices and one rounding of an exact value), the losses
 * within 1e-6 relative (a log and a division in double, stored once).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "xo.h"
#include "xo/cpu.h"

#define N NAN
#define I INFINITY

/* Sources of one op call: host values per slot (NULL: slot unused). */
struct call {
	enum xo_op op;
	enum xo_dir dir;
	struct xo_params p;
	const void *src[XO_MAX_SRC];
};

/* Runs c on be and reads dst slot `slot` into out (want elements). */
static void run(struct xo_backend *be, const struct call *c, int slot, float *out, int64_t want)
{
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
	struct xo_op_args a = {.p = c->p};
	int64_t n;

	assert_int_equal(xo_op_shapes(c->op, c->dir, &c->p, ss, ds), XO_OK);
	for (int i = 0; i < XO_MAX_SRC; i++) {
		if (!ss[i].ndim || !c->src[i])
			continue;
		n = 1;
		for (int d = 0; d < ss[i].ndim; d++)
			n *= ss[i].dim[d];
		assert_int_equal(xo_tensor_create(be, ss[i].dtype, ss[i].ndim, ss[i].dim,
						  (struct xo_tensor **)&a.src[i]),
				 XO_OK);
		assert_int_equal(xo_tensor_write((struct xo_tensor *)a.src[i], c->src[i], 0, n),
				 XO_OK);
	}
	for (int i = 0; i < XO_MAX_DST; i++)
		if (ds[i].ndim && (!ds[i].optional || i == slot))
			assert_int_equal(
			    xo_tensor_create(be, ds[i].dtype, ds[i].ndim, ds[i].dim, &a.dst[i]),
			    XO_OK);
	n = 1;
	for (int d = 0; d < ds[slot].ndim; d++)
		n *= ds[slot].dim[d];
	assert_int_equal(n, want);
	if (xo_op_run(be, c->op, c->dir, &a))
		fail_msg("%s: %s", xo_backend_name(be), xo_last_error());
	assert_int_equal(xo_tensor_read(a.dst[slot], out, 0, n), XO_OK);
	for (int i = 0; i < XO_MAX_SRC; i++)
		xo_tensor_free((struct xo_tensor *)a.src[i]);
	for (int i = 0; i < XO_MAX_DST; i++)
		xo_tensor_free(a.dst[i]);
}

/* got against Keras's want by kind: NaN where NaN, else the same bits
 * (tol 0) or within tol relative. */
static void expect(const char *what, const char *be, const float *got, const float *want,
		   int64_t n, double tol)
{
	for (int64_t i = 0; i < n; i++) {
		bool ok;

		if (isnan(want[i]) || isnan(got[i]))
			ok = isnan(want[i]) && isnan(got[i]);
		else if (tol == 0.0 || isinf(want[i]))
			ok = memcmp(&got[i], &want[i], sizeof(float)) == 0;
		else
			ok = fabs((double)got[i] - want[i]) <= tol * fabs((double)want[i]);
		if (!ok)
			fail_msg("%s on %s: element %d is %g, Keras %g", what, be, (int)i,
				 (double)got[i], (double)want[i]);
	}
}

static struct xo_params params(enum xo_op op, int64_t batch, int64_t len, int64_t ch)
{
	struct xo_params p = xo_params_default_op(op);

	p.batch = batch;
	p.len = len;
	p.ch = ch;
	return p;
}

/* v[i] copied to every one of CH channels: [..][i][c] = v[i] (the vector
 * lanes and the scalar tail of every cpu ISA level see the same pattern). */
#define CH 17
static void widen(const float *v, int64_t n, float *out)
{
	for (int64_t i = 0; i < n; i++)
		for (int c = 0; c < CH; c++)
			out[i * CH + c] = v[i];
}

/* MaxPooling1D(3) on [2][9][CH]: NaN first, middle, last in sample 0's
 * windows; +Inf, -Inf, all -Inf in sample 1's. */
static void check_max_pooling1d(struct xo_backend *be, const char *name)
{
	static const float x1[18] = {N, 1, 2, 3, N, 1, 3, 1, N, I, 1, 2, 1, -I, 0, -I, -I, -I};
	static const float dy1[6] = {1, 2, 4, 1, 2, 4};
	static const float want_y1[6] = {N, N, N, I, 1, -I};
	/* jax.vjp: the select's winner, the step after the last NaN */
	static const float want_dx1[18] = {0, 0, 1, 0, 0, 2, 0, 0, 4, 1, 0, 0, 2, 0, 0, 4, 0, 0};
	float x[18 * CH], dy[6 * CH], want_y[6 * CH], want_dx[18 * CH], y[6 * CH], dx[18 * CH];
	struct call c = {XO_OP_max_pooling1d, XO_DIR_FWD, params(XO_OP_max_pooling1d, 2, 9, CH),
			 {x}};

	widen(x1, 18, x);
	widen(dy1, 6, dy);
	widen(want_y1, 6, want_y);
	widen(want_dx1, 18, want_dx);
	c.p.pool_size = 3;
	run(be, &c, 0, y, 6 * CH);
	expect("max_pooling1d fwd", name, y, want_y, 6 * CH, 0.0);
	c.dir = XO_DIR_BWD;
	c.src[1] = dy;
	run(be, &c, 0, dx, 18 * CH);
	expect("max_pooling1d bwd", name, dx, want_dx, 18 * CH, 0.0);
}

/* GlobalMaxPooling1D on [1][3][4]: a NaN at each step, then -Inf/+Inf/0;
 * backward: NaN at every step of a column holding a NaN (jnp.max's 0 / 0),
 * dy at the +Inf. */
static void check_global_max_pooling1d(struct xo_backend *be, const char *name)
{
	static const float x[12] = {N, 1, 1, -I, 1, N, 2, I, 2, 2, N, 0};
	static const float want[4] = {N, N, N, I}, dy[4] = {1, 2, 4, 8};
	static const float want_dx[12] = {N, N, N, 0, N, N, N, 8, N, N, N, 0};
	struct call c = {XO_OP_global_max_pooling1d, XO_DIR_FWD,
			 params(XO_OP_global_max_pooling1d, 1, 3, 4), {x}};
	float y[4], dx[12];

	run(be, &c, 0, y, 4);
	expect("global_max_pooling1d fwd", name, y, want, 4, 0.0);
	c.dir = XO_DIR_BWD;
	c.src[1] = dy;
	run(be, &c, 0, dx, 12);
	expect("global_max_pooling1d bwd", name, dx, want_dx, 12, 0.0);
}

/* MaxPooling2D(2) on [1][2][6][CH]: windows [[NaN,5],[1,2]], [[3,1],[NaN,9]],
 * [[9,1],[3,Inf]]; GlobalMaxPooling2D on [1][2][2][2]. */
static void check_pooling2d(struct xo_backend *be, const char *name)
{
	static const float x1[12] = {N, 5, 3, 1, 9, 1, 1, 2, N, 9, 3, I};
	static const float dy1[3] = {1, 2, 4};
	static const float want_y1[3] = {N, N, I};
	static const float want_dx1[12] = {0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 4};
	static const float g[8] = {1, 1, N, 2, 2, 3, 3, 4};
	static const float want_g[2] = {N, 4}, dg[2] = {1, 2};
	static const float want_dg[8] = {N, 0, N, 0, N, 0, N, 2};
	float x[12 * CH], dy[3 * CH], want_y[3 * CH], want_dx[12 * CH], y[3 * CH], dx[12 * CH];
	struct call c = {XO_OP_max_pooling2d, XO_DIR_FWD, params(XO_OP_max_pooling2d, 1, 2, CH),
			 {x}};

	widen(x1, 12, x);
	widen(dy1, 3, dy);
	widen(want_y1, 3, want_y);
	widen(want_dx1, 12, want_dx);
	c.p.width = 6;
	c.p.pool_size = 2;
	run(be, &c, 0, y, 3 * CH);
	expect("max_pooling2d fwd", name, y, want_y, 3 * CH, 0.0);
	c.dir = XO_DIR_BWD;
	c.src[1] = dy;
	run(be, &c, 0, dx, 12 * CH);
	expect("max_pooling2d bwd", name, dx, want_dx, 12 * CH, 0.0);

	c = (struct call){XO_OP_global_max_pooling2d, XO_DIR_FWD,
			  params(XO_OP_global_max_pooling2d, 1, 2, 2), {g}};
	c.p.width = 2;
	run(be, &c, 0, y, 2);
	expect("global_max_pooling2d fwd", name, y, want_g, 2, 0.0);
	c.dir = XO_DIR_BWD;
	c.src[1] = dg;
	run(be, &c, 0, dx, 8);
	expect("global_max_pooling2d bwd", name, dx, want_dg, 8, 0.0);
}

/* Maximum and Minimum: NaN with either side NaN; jax.grad 0 to both there. */
static void check_merge(struct xo_backend *be, const char *name)
{
	static const float a[6] = {N, 1, N, I, -I, 2}, b[6] = {1, N, N, N, 3, 2};
	static const float dy[6] = {1, 1, 1, 1, 1, 1};
	static const float want_max[6] = {N, N, N, N, 3, 2}, want_min[6] = {N, N, N, N, -I, 2};
	static const float want_da[2][6] = {{0, 0, 0, 0, 0, 0.5f}, {0, 0, 0, 0, 1, 0.5f}};
	static const float want_db[2][6] = {{0, 0, 0, 0, 1, 0.5f}, {0, 0, 0, 0, 0, 0.5f}};

	for (int m = 0; m < 2; m++) {
		struct call c = {XO_OP_merge, XO_DIR_FWD, params(XO_OP_merge, 1, 1, 6), {a, b}};
		float y[6];

		c.p.mode = m ? XO_MERGE_MINIMUM : XO_MERGE_MAXIMUM;
		run(be, &c, 0, y, 6);
		expect(m ? "minimum fwd" : "maximum fwd", name, y, m ? want_min : want_max, 6, 0.0);
		c.dir = XO_DIR_BWD;
		c.src[2] = dy;
		run(be, &c, 0, y, 6);
		expect(m ? "minimum bwd da" : "maximum bwd da", name, y, want_da[m], 6, 0.0);
		run(be, &c, 1, y, 6);
		expect(m ? "minimum bwd db" : "maximum bwd db", name, y, want_db[m], 6, 0.0);
	}
}

/* Losses whose float32 sums overflow: MSE of a row whose squares sum past
 * FLT_MAX is Inf; MSE of rows each in range whose total is not is finite
 * (Keras takes each row's mean first); categorical and sparse crossentropy
 * of a row summing past FLT_MAX: every q = p / Inf = 0, clipped to 1e-7,
 * loss -log(1e-7f) = 16.118095; MSE's gradient 2 (p - t) / n is +Inf
 * where 2 (p - t) overflows, though the quotient would be in range. */
static void check_losses(struct xo_backend *be, const char *name)
{
	static const float p1[4] = {1.5e19f, 1.5e19f, 0, 0}, z[4] = {0, 0, 0, 0};
	static const float p2[4] = {1e19f, 1e19f, 1e19f, 1e19f};
	static const float pg[4] = {2e38f, 1, 0, 0}, want_g[4] = {I, 0.5f, 0, 0};
	static const float pc[3] = {3e38f, 3e38f, 1}, tc[3] = {1, 0, 0};
	static const int32_t ts[1] = {0};
	static const float want_inf[1] = {I}, want_1e38[1] = {1e38f}, want_ce[1] = {16.118095f};
	struct call c = {XO_OP_mean_squared_error, XO_DIR_FWD,
			 params(XO_OP_mean_squared_error, 1, 1, 4), {p1, z}};
	float loss[1], grad[4];

	run(be, &c, 0, loss, 1);
	expect("mean_squared_error, a row's sum overflowing", name, loss, want_inf, 1, 0.0);
	c.p.batch = 2;
	c.p.ch = 2;
	c.src[0] = p2;
	run(be, &c, 0, loss, 1);
	expect("mean_squared_error, rows in range", name, loss, want_1e38, 1, 1e-6);
	/* jax.grad: 2 (p - t) first, Inf past FLT_MAX, then / 4 */
	c.dir = XO_DIR_BWD;
	c.src[0] = pg;
	run(be, &c, 0, grad, 4);
	expect("mean_squared_error bwd, 2 (p - t) overflowing", name, grad, want_g, 4, 1e-6);
	c = (struct call){XO_OP_categorical_crossentropy, XO_DIR_FWD,
			  params(XO_OP_categorical_crossentropy, 1, 1, 3), {pc, tc}};
	run(be, &c, 0, loss, 1);
	expect("categorical_crossentropy, row sum overflowing", name, loss, want_ce, 1, 1e-6);
	c = (struct call){XO_OP_sparse_categorical_crossentropy, XO_DIR_FWD,
			  params(XO_OP_sparse_categorical_crossentropy, 1, 1, 3), {pc, ts}};
	run(be, &c, 0, loss, 1);
	expect("sparse_categorical_crossentropy, row sum overflowing", name, loss, want_ce, 1,
	       1e-6);
}

/* Softmax of large finite logits and Dense(softmax) whose float32
 * pre-activation overflows. Rows [1e30, 1e20, -1e30] and [1e10, 2,
 * -1e10]: Keras [1, 0, 0] (exp of a difference below -104 is 0; cpu's exp
 * kept the difference's low part past its clamp: NaN and 5.6e-45). Dense
 * x [1e30, 1] by w [[1e10, 1, -1e10], [1, 1, 1]]: Keras's logits are
 * [Inf, 1e30, -Inf], softmax NaN (ref's double logits gave [1, 0, 0]). */
static void check_softmax(struct xo_backend *be, const char *name)
{
	static const float x[6] = {1e30f, 1e20f, -1e30f, 1e10f, 2, -1e10f};
	static const float want[6] = {1, 0, 0, 1, 0, 0};
	static const float xd[4] = {1e30f, 1, 1e20f, 2}, w[6] = {1e10f, 1, -1e10f, 1, 1, 1};
	static const float want_d[6] = {N, N, N, 1, 0, 0};
	struct call c = {XO_OP_softmax, XO_DIR_FWD, params(XO_OP_softmax, 2, 1, 3), {x}};
	float y[6];

	run(be, &c, 0, y, 6);
	expect("softmax of large logits", name, y, want, 6, 0.0);
	c = (struct call){XO_OP_dense, XO_DIR_FWD, params(XO_OP_dense, 2, 1, 2), {xd, w}};
	c.p.units = 3;
	c.p.use_bias = false;
	c.p.activation = XO_ACTIVATION_SOFTMAX;
	run(be, &c, 0, y, 6);
	expect("dense softmax, logits past float32", name, y, want_d, 6, 0.0);
}

/* The special values the fused checks make inside a model, 2 samples of 9
 * steps: sample 0's max-pooling windows of 3 hold NaN first, middle, last;
 * sample 1's +Inf, -Inf, all -Inf. */
static const float fused_sx[18] = {N, 1, 2, 3, N, 1, 3, 1, N, I, 1, 2, 1, -I, 0, -I, -I, -I};

/* A model refuses non-finite inputs, so the NaN and Inf are made inside it,
 * as a user's network makes them: input x[2][9][4] holds per step the
 * channels [v, e_nan, e_pinf, e_ninf] of fused_sx's value (v where it is
 * finite, else 0; e 1e30 where the step is that special, else 0); the
 * kernel_size-1 convolution c1 (kernel fused_w1) makes A = v + 1e10 (e_nan
 * + e_pinf) and B = 1e10 (e_nan + e_ninf), both +Inf where not 0 (1e40
 * past float32), and a second one with kernel fused_w2 (+1 for A, -1 for
 * B) A - B: Inf - Inf = NaN, +Inf, -Inf, or v exactly, in each of its 16
 * filters. */
static const float fused_w1[8] = {1, 0, 1e10f, 1e10f, 1e10f, 0, 0, 1e10f};

static void fused_input(float *x, float *w2)
{
	for (int i = 0; i < 18; i++) {
		float v = fused_sx[i], *e = x + i * 4;

		e[0] = isfinite(v) ? v : 0.0f;
		e[1] = isnan(v) ? 1e30f : 0.0f;
		e[2] = v == I ? 1e30f : 0.0f;
		e[3] = v == -I ? 1e30f : 0.0f;
	}
	for (int f = 0; f < 16; f++) {
		w2[f] = 1.0f;       /* A */
		w2[16 + f] = -1.0f; /* B */
	}
}

/* Opens spec on be with the kernel_size-1 convolutions' kernels w[k]
 * ([1][in[k]][out[k]]) of layers layer[k] loaded, checks the fused path
 * takes it and predicts x's 2 samples into y. */
static void fused_predict(struct xo_backend *be, const char *name, const char *what,
                          const char *spec, int nk, const char *const *layer,
                          const int64_t *in, const int64_t *out, const float *const *w,
                          const float *x, float *y)
{
	char dir[] = "/tmp/xo_nonfinite_XXXXXX", path[96];
	struct xo_model *m;

	assert_non_null(mkdtemp(dir));
	if (xo_model_open_string(spec, what, be, 2, &m))
		fail_msg("%s %s: %s", name, what, xo_last_error());
	for (int k = 0; k < nk; k++) {
		snprintf(path, sizeof(path), "%s/%s.kernel.npy", dir, layer[k]);
		assert_int_equal(xo_npy_write(path, 3, (int64_t[]){1, in[k], out[k]}, w[k]), XO_OK);
	}
	if (xo_model_load_weights(m, dir))
		fail_msg("%s %s: %s", name, what, xo_last_error());
	for (int k = 0; k < nk; k++) {
		snprintf(path, sizeof(path), "%s/%s.kernel.npy", dir, layer[k]);
		remove(path);
	}
	rmdir(dir);
	if (!xo_model_fused(m, false)) {
		xo_model_close(m);
		fail_msg("%s: the fused path does not take the %s", name, what);
	}
	if (xo_model_predict(m, x, 2, 2, y))
		fail_msg("%s %s predict: %s", name, what, xo_last_error());
	xo_model_close(m);
}

/* The fused conv1d + max_pooling1d path (cpu's conv_pool kernel, cl's
 * net.cl), which predict takes wherever the backend's net_fits does:
 * MaxPooling1D(3) over fused_input's values sees the windows of
 * check_max_pooling1d (NaN first, middle, last) and +Inf, -Inf, all -Inf,
 * in each of 16 filters (cpu fuses the pooling into a convolution of a
 * multiple of its vector width). */
static void check_fused(struct xo_backend *be, const char *name)
{
	static const char spec[] = "input 9 4\n"
				   "conv1d name=c1 filters=2 kernel_size=1 use_bias=0\n"
				   "conv1d name=p filters=16 kernel_size=1 use_bias=0\n"
				   "max_pooling1d pool_size=3\n"
				   "flatten\n";
	static const float want[6] = {N, N, N, I, 1, -I};
	static const char *const layer[2] = {"c1", "p"};
	float x[2 * 9 * 4], w2[2 * 16], y[6 * 16], want16[6 * 16];

	fused_input(x, w2);
	for (int i = 0; i < 6 * 16; i++)
		want16[i] = want[i / 16];
	fused_predict(be, name, "fused conv1d + max_pooling1d", spec, 2, layer,
	              (int64_t[]){4, 2}, (int64_t[]){2, 16}, (const float *const[]){fused_w1, w2},
	              x, y);
	expect("fused conv1d + max_pooling1d", name, y, want16, 6 * 16, 0.0);
}

/* A graph the fused path runs with a merge fed a NaN, +Inf or -Inf from one
 * side and a finite value from the other: p = fused_input's value, z = x's
 * first channel (v at a finite step, 0 at a special one); then maximum or
 * minimum of (p, z): the special value first, where a plain comparison
 * (a > b ? a : b) drops a NaN. Want per step:
 * NaN, and for +Inf / -Inf / finite v: maximum +Inf / 0 / v, minimum 0 /
 * -Inf / v. The op kernels' NaN rule must hold inside the fused graph as
 * well. */
static void check_fused_merge(struct xo_backend *be, const char *name, bool max)
{
	static const char base[] = "input name=x 9 4\n"
				   "conv1d name=c1 filters=2 kernel_size=1 use_bias=0\n"
				   "conv1d name=p filters=16 kernel_size=1 use_bias=0\n"
				   "conv1d name=z inputs=x filters=16 kernel_size=1 use_bias=0\n";
	static const char *const layer[3] = {"c1", "p", "z"};
	char spec[512], what[64];
	float x[2 * 9 * 4], w2[2 * 16], w3[4 * 16] = {0}, y[18 * 16], want[18 * 16];

	snprintf(spec, sizeof(spec), "%s%s\nflatten\n", base,
	         max ? "maximum name=o inputs=p,z" : "minimum name=o inputs=p,z");
	snprintf(what, sizeof(what), "fused graph %s", max ? "maximum" : "minimum");
	fused_input(x, w2);
	for (int f = 0; f < 16; f++)
		w3[f] = 1.0f; /* z = x's first channel */
	for (int i = 0; i < 18; i++) {
		float v = fused_sx[i], w = v;

		if (isinf(v) && (v > 0) != max)
			w = 0.0f; /* maximum(-Inf, 0), minimum(0, +Inf) */
		for (int f = 0; f < 16; f++)
			want[i * 16 + f] = w;
	}
	fused_predict(be, name, what, spec, 3, layer, (int64_t[]){4, 2, 4},
	              (int64_t[]){2, 16, 16}, (const float *const[]){fused_w1, w2, w3}, x, y);
	expect(what, name, y, want, 18 * 16, 0.0);
}

static void check_ops(struct xo_backend *be, const char *name)
{
	check_max_pooling1d(be, name);
	check_global_max_pooling1d(be, name);
	check_pooling2d(be, name);
	check_merge(be, name);
	check_losses(be, name);
	check_softmax(be, name);
}

static void test_ref(void **state)
{
	struct xo_backend *be;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	check_ops(be, "ref");
	xo_backend_close(be);
}

/* Each ISA level this CPU has (XO_CPU_ISA is read at open, and the backend
 * refuses a level the CPU lacks: an AVX2-only machine runs scalar and avx2). */
static void test_cpu(void **state)
{
	static const char *const isa[] = {"scalar", "avx2", "avx512"};
	enum xo_cpu_isa best;

	(void)state;
	unsetenv("XO_CPU_ISA");
	best = xo_cpu_isa_detect();
	for (size_t i = 0; i <= (size_t)best; i++) {
		struct xo_backend *be;
		char what[64];

		assert_int_equal(setenv("XO_CPU_ISA", isa[i], 1), 0);
		assert_int_equal(xo_backend_open("cpu", &be), XO_OK);
		snprintf(what, sizeof(what), "cpu %s", isa[i]);
		check_ops(be, what);
		check_fused(be, what);
		check_fused_merge(be, what, true);
		check_fused_merge(be, what, false);
		xo_backend_close(be);
	}
	unsetenv("XO_CPU_ISA");
}

static void test_cl(void **state)
{
	struct xo_backend *be;
	enum xo_status st;
	bool built = false;

	(void)state;
	for (int i = 0; i < xo_backend_count(); i++)
		built |= !strcmp(xo_backend_kind(i), "cl");
	if (!built) {
		print_message("[  SKIP    ] cl: not built (XO_OPENCL=OFF)\n");
		skip();
	}
	st = xo_backend_open("cl", &be);
	if (st == XO_ENODEV && !xo_opencl_required()) {
		print_message("[  SKIP    ] cl: %s\n", xo_last_error());
		skip();
	}
	if (st)
		fail_msg("cl: %s", xo_last_error());
	check_ops(be, "cl");
	check_fused(be, "cl");
	check_fused_merge(be, "cl", true);
	check_fused_merge(be, "cl", false);
	xo_backend_close(be);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ref),
	    cmocka_unit_test(test_cpu),
	    cmocka_unit_test(test_cl),
	};

	unsetenv("XO_FUSE");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
