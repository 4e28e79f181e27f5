/*
 * test_model_edges.c - the model runtime at the edges a test of the common
 * case passes over, on every backend (ref, cpu, cl; cl skipped with its
 * reason without OpenCL, unless XO_REQUIRE_OPENCL=1). One group per ctest:
 *
 * bn: BatchNormalization with scale=False, center=False and both, from a
 *   fresh xo_model_init (not loaded): the variables' count, order, shape and
 *   initial values (gamma 1, beta 0, moving mean 0, moving variance 1); one
 *   SGD step of conv1d -> batch_normalization -> flatten -> dense softmax
 *   against the same step computed here by hand in double (forward with the
 *   batch statistics, backward through them into the conv kernel, the
 *   moving statistics' update); inference after the step against the hand
 *   forward with the moving statistics; .keras, .weights.h5 and .npy saves
 *   read back bit for bit, with the layer's scale/center and Keras's vars
 *   count (2 + scale + center) in the HDF5 file.
 *
 * ids: an embedding's ids at 0, input_dim - 1, input_dim, input_dim + 1,
 *   -1, a huge id and a fraction, each alone in a batch of one sample
 *   (input length 1), through predict, evaluate and fit: in range, the
 *   table row by hand and only that row trained; out of range, XO_EINVAL
 *   naming the id, sample and step, nothing written (outputs and
 *   parameters bit for bit as before) and the next call unharmed. The op
 *   itself with one id at input_dim: ref and cpu refuse before writing, cl
 *   writes zeros and says XO_EINVAL at the next sync; an id at
 *   input_dim - 1 is that row exactly everywhere. A shuffled fit (batches
 *   gathered from the resident ids) over ids 0 and input_dim - 1 only:
 *   the same weights as ref within 2 (S lr 2 eta + 4 u |w|) (S = 2 Adam
 *   steps, eta = 8 u (K_path 5 + K_grad 4)), rows 1..5 untouched.
 *
 * chunk: predict with XO_PREDICT_CHUNK unset, 0 (off), 1, 7 (does not
 *   divide 53), 52, 53 and 54 samples, and at batch sizes 1 and 7: the same
 *   bits on each backend as the whole batch with chunking off (each op
 *   computes a sample alone, docs/model.md "Runtime"), for a net run op by
 *   op (conv1d, batch norm, lstm) and one the cpu backend fuses; each
 *   backend within the prediction bound of ref; a bad XO_PREDICT_CHUNK is
 *   XO_EINVAL on every backend.
 *
 * Bounds (docs/model.md, "Golden fixtures and their tolerance"; u = 2^-24):
 * a float32 result of an accumulation of length K is within 8 u K_path of
 * the double answer for predictions; a gradient within 2 eta G (G the
 * tensor's largest |g|, eta = 8 u (K_path + K_grad)), so one SGD step with
 * rate lr moves a weight within lr 2 eta G + 2 u |w| of the double step.
 * The bn model: K_path = conv 2*3 + BN 2 + its statistics N*5 (40) + dense
 * 15 + softmax 4 = 67 in training (27 in inference, no statistics); K_grad
 * = N*5 = 40 (conv kernel, dgamma, dbeta). A moving statistic sums N*5
 * terms of magnitude <= M = max(1, max|conv output|^2): within
 * 8 u (N*5 + 2) M.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <hdf5.h>
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

#include "test_backends.h"

#include "model_internal.h"

#define U32 0x1p-24
#define NB  4 /* backends at most */

static char g_tmp[256];

static float *params(struct xo_model *m)
{
	float *w = malloc(sizeof(*w) * (size_t)xo_model_param_count(m));

	assert_non_null(w);
	assert_int_equal(xo_model_params_host(m, w, false), XO_OK);
	return w;
}

/* ---- bn ---------------------------------------------------------------- */

#define BN_N   8 /* samples: one batch, one step */
#define BN_T   6 /* input steps */
#define BN_C   3 /* input and conv channels */
#define BN_L   5 /* conv output steps (valid, kernel 2) */
#define BN_K   4 /* classes */
#define BN_F   (BN_L * BN_C)
#define BN_LR  0.5
#define BN_MOM 0.9
#define BN_EPS 0.001

/* The model's variables by name: conv kernel [2][3][3], gamma, beta, moving
 * mean, moving variance [3] (gamma / beta absent: NULL), dense [15][4], [4]. */
struct bn_vars {
	double k[2][BN_C][BN_C], gamma[BN_C], beta[BN_C], mm[BN_C], mv[BN_C];
	double w[BN_F][BN_K], b[BN_K];
};

struct bn_offs {
	int64_t k, gamma, beta, mm, mv, w, b; /* -1: absent */
};

static struct bn_offs bn_layout(struct xo_model *m, bool center, bool scale)
{
	struct xo_layer_var v[XO_LAYER_VARS_MAX];
	struct bn_offs o = {.gamma = -1, .beta = -1};
	const char *want[4];
	int n = 0, got;

	assert_int_equal(xo_model_layer_count(m), 4);
	assert_int_equal(xo_model_layer_vars(m, 0, v), 1);
	o.k = v[0].off;
	/* Keras's order: gamma (scale), beta (center), moving_mean, moving_variance */
	if (scale)
		want[n++] = "gamma";
	if (center)
		want[n++] = "beta";
	want[n++] = "moving_mean";
	want[n++] = "moving_variance";
	got = xo_model_layer_vars(m, 1, v);
	if (got != n)
		fail_msg("center=%d scale=%d: %d variables, Keras has %d", center, scale, got, n);
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i].name, want[i]) || v[i].ndim != 1 || v[i].dim[0] != BN_C ||
		    v[i].count != BN_C)
			fail_msg("center=%d scale=%d: variable %d is %s [%lld], Keras's is %s [3]",
			         center, scale, i, v[i].name, (long long)v[i].dim[0], want[i]);
		if (!strcmp(want[i], "gamma"))
			o.gamma = v[i].off;
		else if (!strcmp(want[i], "beta"))
			o.beta = v[i].off;
		else if (!strcmp(want[i], "moving_mean"))
			o.mm = v[i].off;
		else
			o.mv = v[i].off;
	}
	assert_int_equal(xo_model_layer_vars(m, 2, v), 0);
	assert_int_equal(xo_model_layer_vars(m, 3, v), 2);
	o.w = v[0].off;
	o.b = v[1].off;
	assert_int_equal(xo_model_param_count(m),
	                 18 + BN_C * (2 + (int)center + (int)scale) + BN_F * BN_K + BN_K);
	return o;
}

static void bn_get(const float *w, const struct bn_offs *o, struct bn_vars *v)
{
	for (int i = 0; i < 2 * BN_C * BN_C; i++)
		(&v->k[0][0][0])[i] = w[o->k + i];
	for (int c = 0; c < BN_C; c++) {
		v->gamma[c] = o->gamma >= 0 ? w[o->gamma + c] : 1.0;
		v->beta[c] = o->beta >= 0 ? w[o->beta + c] : 0.0;
		v->mm[c] = w[o->mm + c];
		v->mv[c] = w[o->mv + c];
	}
	for (int i = 0; i < BN_F * BN_K; i++)
		(&v->w[0][0])[i] = w[o->w + i];
	for (int k = 0; k < BN_K; k++)
		v->b[k] = w[o->b + k];
}

static void bn_data(float *x, float *y)
{
	for (int n = 0; n < BN_N; n++)
		for (int t = 0; t < BN_T; t++)
			for (int c = 0; c < BN_C; c++)
				x[(n * BN_T + t) * BN_C + c] =
				    (float)(0.5 * sin(0.7 * n + 1.3 * t + 2.1 * c) + 0.25 * c -
				            0.1);
	memset(y, 0, sizeof(*y) * BN_N * BN_K);
	for (int n = 0; n < BN_N; n++)
		y[n * BN_K + (n * 3) % BN_K] = 1.0f;
}

static void bn_conv(const float *x, const struct bn_vars *v, double a[BN_N][BN_L][BN_C])
{
	for (int n = 0; n < BN_N; n++)
		for (int t = 0; t < BN_L; t++)
			for (int o = 0; o < BN_C; o++) {
				double s = 0.0;

				for (int k = 0; k < 2; k++)
					for (int i = 0; i < BN_C; i++)
						s += (double)x[(n * BN_T + t + k) * BN_C + i] *
						     v->k[k][i][o];
				a[n][t][o] = s;
			}
}

/* dense + softmax of the normalised h[n][15] into p */
static void bn_head(const double h[BN_N][BN_F], const struct bn_vars *v, double p[BN_N][BN_K])
{
	for (int n = 0; n < BN_N; n++) {
		double z[BN_K], mx = -INFINITY, s = 0.0;

		for (int k = 0; k < BN_K; k++) {
			z[k] = v->b[k];
			for (int j = 0; j < BN_F; j++)
				z[k] += h[n][j] * v->w[j][k];
			mx = fmax(mx, z[k]);
		}
		for (int k = 0; k < BN_K; k++)
			s += (p[n][k] = exp(z[k] - mx));
		for (int k = 0; k < BN_K; k++)
			p[n][k] /= s;
	}
}

/* Inference: the moving statistics. */
static void bn_predict(const float *x, const struct bn_vars *v, double p[BN_N][BN_K])
{
	double a[BN_N][BN_L][BN_C], h[BN_N][BN_F];

	bn_conv(x, v, a);
	for (int n = 0; n < BN_N; n++)
		for (int t = 0; t < BN_L; t++)
			for (int c = 0; c < BN_C; c++)
				h[n][t * BN_C + c] = (a[n][t][c] - v->mm[c]) /
				                         sqrt(v->mv[c] + BN_EPS) * v->gamma[c] +
				                     v->beta[c];
	bn_head(h, v, p);
}

/* One training step in double: the gradients into g, the moving statistics
 * updated in v; *amax the largest |conv output|. */
static void bn_step(const float *x, const float *y, struct bn_vars *v, struct bn_vars *g,
                    double *amax)
{
	static double a[BN_N][BN_L][BN_C], xh[BN_N][BN_L][BN_C], h[BN_N][BN_F], p[BN_N][BN_K];
	static double dh[BN_N][BN_F], dxh[BN_N][BN_L][BN_C];
	double mean[BN_C] = {0}, var[BN_C] = {0}, cnt = BN_N * BN_L;

	memset(g, 0, sizeof(*g));
	bn_conv(x, v, a);
	*amax = 0.0;
	for (int n = 0; n < BN_N; n++)
		for (int t = 0; t < BN_L; t++)
			for (int c = 0; c < BN_C; c++) {
				mean[c] += a[n][t][c] / cnt;
				*amax = fmax(*amax, fabs(a[n][t][c]));
			}
	for (int n = 0; n < BN_N; n++)
		for (int t = 0; t < BN_L; t++)
			for (int c = 0; c < BN_C; c++)
				var[c] += (a[n][t][c] - mean[c]) * (a[n][t][c] - mean[c]) / cnt;
	for (int n = 0; n < BN_N; n++)
		for (int t = 0; t < BN_L; t++)
			for (int c = 0; c < BN_C; c++) {
				xh[n][t][c] = (a[n][t][c] - mean[c]) / sqrt(var[c] + BN_EPS);
				h[n][t * BN_C + c] = xh[n][t][c] * v->gamma[c] + v->beta[c];
			}
	bn_head(h, v, p);
	/* categorical cross-entropy, mean over the batch: dz = (p - y) / N */
	for (int n = 0; n < BN_N; n++)
		for (int k = 0; k < BN_K; k++) {
			double dz = (p[n][k] - y[n * BN_K + k]) / BN_N;

			g->b[k] += dz;
			for (int j = 0; j < BN_F; j++) {
				g->w[j][k] += h[n][j] * dz;
				dh[n][j] += v->w[j][k] * dz;
			}
		}
	for (int c = 0; c < BN_C; c++) {
		double s1 = 0.0, s2 = 0.0;

		for (int n = 0; n < BN_N; n++)
			for (int t = 0; t < BN_L; t++) {
				double d = dh[n][t * BN_C + c];

				g->gamma[c] += d * xh[n][t][c];
				g->beta[c] += d;
				dxh[n][t][c] = d * v->gamma[c];
				s1 += dxh[n][t][c] / cnt;
				s2 += dxh[n][t][c] * xh[n][t][c] / cnt;
			}
		for (int n = 0; n < BN_N; n++)
			for (int t = 0; t < BN_L; t++) {
				double da =
				    (dxh[n][t][c] - s1 - xh[n][t][c] * s2) / sqrt(var[c] + BN_EPS);

				for (int k = 0; k < 2; k++)
					for (int i = 0; i < BN_C; i++)
						g->k[k][i][c] +=
						    (double)x[(n * BN_T + t + k) * BN_C + i] * da;
			}
		v->mm[c] = v->mm[c] * BN_MOM + mean[c] * (1.0 - BN_MOM);
		v->mv[c] = v->mv[c] * BN_MOM + var[c] * (1.0 - BN_MOM);
	}
	memset(dh, 0, sizeof(dh));
}

/* got (xo's float32 after the step) against want (w0 - lr g in double). */
static void bn_check_tensor(const char *be, const char *what, const float *got, const double *w0,
                            const double *g, int n, double eta)
{
	double gmax = 0.0;

	for (int i = 0; i < n; i++)
		gmax = fmax(gmax, fabs(g[i]));
	if (!(gmax > 0.0))
		fail_msg("%s: %s: the hand step's gradient is 0 (an uninformative case)", be, what);
	for (int i = 0; i < n; i++) {
		double want = w0[i] - BN_LR * g[i];
		double tol = BN_LR * 2.0 * eta * gmax + 2.0 * U32 * fabs(want);

		if (!(fabs((double)got[i] - want) <= tol))
			fail_msg("%s: %s[%d] after one SGD step: %.9g, by hand %.9g (tol %.3g)", be,
			         what, i, (double)got[i], want, tol);
	}
}

static void bn_check_step(const char *be, const float *w1, const struct bn_offs *o,
                          const struct bn_vars *v0, const struct bn_vars *g,
                          const struct bn_vars *v1, double amax)
{
	double eta = 8.0 * U32 * (67 + 40), m = fmax(1.0, amax * amax);
	double tol_stat = 8.0 * U32 * (BN_N * BN_L + 2) * m;

	bn_check_tensor(be, "conv kernel", w1 + o->k, &v0->k[0][0][0], &g->k[0][0][0],
	                2 * BN_C * BN_C, eta);
	if (o->gamma >= 0)
		bn_check_tensor(be, "gamma", w1 + o->gamma, v0->gamma, g->gamma, BN_C, eta);
	if (o->beta >= 0)
		bn_check_tensor(be, "beta", w1 + o->beta, v0->beta, g->beta, BN_C, eta);
	bn_check_tensor(be, "dense kernel", w1 + o->w, &v0->w[0][0], &g->w[0][0], BN_F * BN_K, eta);
	bn_check_tensor(be, "dense bias", w1 + o->b, v0->b, g->b, BN_K, eta);
	for (int c = 0; c < BN_C; c++) {
		if (!(fabs((double)w1[o->mm + c] - v1->mm[c]) <= tol_stat) ||
		    !(fabs((double)w1[o->mv + c] - v1->mv[c]) <= tol_stat))
			fail_msg(
			    "%s: moving statistics of channel %d: %.9g %.9g, by hand %.9g %.9g "
			    "(tol %.3g)",
			    be, c, (double)w1[o->mm + c], (double)w1[o->mv + c], v1->mm[c],
			    v1->mv[c], tol_stat);
	}
}

/* The HDF5 file's layers/batch_normalization/vars holds n datasets. */
static void bn_check_h5(const char *path, int n)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), g;
	H5G_info_t info;

	assert_true(f >= 0);
	g = H5Gopen2(f, "layers/batch_normalization/vars", H5P_DEFAULT);
	assert_true(g >= 0);
	assert_true(H5Gget_info(g, &info) >= 0);
	if ((int)info.nlinks != n)
		fail_msg("%s: batch_normalization/vars holds %d variables, Keras's %d", path,
		         (int)info.nlinks, n);
	for (int i = 0; i < n; i++) {
		char name[16];
		hid_t d, s;
		hsize_t dim[2];

		snprintf(name, sizeof(name), "%d", i);
		d = H5Dopen2(g, name, H5P_DEFAULT);
		assert_true(d >= 0);
		s = H5Dget_space(d);
		assert_int_equal(H5Sget_simple_extent_ndims(s), 1);
		H5Sget_simple_extent_dims(s, dim, NULL);
		assert_int_equal((int)dim[0], BN_C);
		H5Sclose(s);
		H5Dclose(d);
	}
	H5Gclose(g);
	H5Fclose(f);
}

/* nftw callback of a directory's removal, deepest entries first */
static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Saved as path (.keras, .weights.h5 or a .npy directory) and read back
 * into a fresh model of spec: the same bits. */
static void bn_roundtrip(struct xo_backend *be, struct xo_model *m, const char *spec,
                         const char *file, bool center, bool scale)
{
	char path[512];
	struct xo_model *r;
	int64_t np = xo_model_param_count(m);
	float *w = params(m), *got;

	snprintf(path, sizeof(path), "%s/%s", g_tmp, file);
	if (xo_model_save_weights(m, path))
		fail_msg("%s: %s", path, xo_last_error());
	if (strstr(file, ".keras")) {
		/* the model and its weights from the file alone */
		if (xo_model_open(path, be, 4, &r))
			fail_msg("%s: %s", path, xo_last_error());
		assert_int_equal(xo_model_layer_spec(r, 1)->p.center, center);
		assert_int_equal(xo_model_layer_spec(r, 1)->p.scale, scale);
	} else {
		assert_int_equal(xo_model_open_string(spec, "bn.model", be, 4, &r), XO_OK);
		if (xo_model_load_weights(r, path))
			fail_msg("%s: %s", path, xo_last_error());
		if (strstr(file, ".weights.h5"))
			bn_check_h5(path, 2 + (int)center + (int)scale);
	}
	assert_int_equal(xo_model_param_count(r), np);
	got = params(r);
	assert_memory_equal(got, w, sizeof(*w) * (size_t)np);
	free(got);
	free(w);
	xo_model_close(r);
	if (!strstr(file, ".")) /* a checkpoint directory */
		assert_int_equal(nftw(path, rm_one, 8, FTW_DEPTH | FTW_PHYS), 0);
	else {
		unlink(path);
	}
}

static void bn_case(struct xo_backend **be, int nb, bool center, bool scale)
{
	char spec[512];
	float x[BN_N * BN_T * BN_C], y[BN_N * BN_K], *w0 = NULL;
	struct xo_fit_options fo = xo_fit_options_default();
	struct bn_vars v0, g, v1;
	double amax;

	snprintf(spec, sizeof(spec),
	         "input %d %d\n"
	         "conv1d filters=%d kernel_size=2 use_bias=0\n"
	         "batch_normalization center=%d scale=%d momentum=0.9 epsilon=0.001\n"
	         "flatten\n"
	         "dense units=%d activation=softmax\n"
	         "compile loss=categorical_crossentropy optimizer=sgd learning_rate=0.5 "
	         "metrics=accuracy\n",
	         BN_T, BN_C, BN_C, center, scale, BN_K);
	bn_data(x, y);
	fo.epochs = 1;
	fo.batch_size = BN_N;
	fo.shuffle = false;
	for (int b = 0; b < nb; b++) {
		const char *name = xo_backend_name(be[b]);
		struct xo_model *m;
		struct bn_offs o;
		float *w, *w1, p[BN_N * BN_K];
		double want[BN_N][BN_K];

		assert_int_equal(xo_model_open_string(spec, "bn.model", be[b], BN_N, &m), XO_OK);
		o = bn_layout(m, center, scale);
		assert_int_equal(xo_model_init(m, 7), XO_OK);
		w = params(m);
		/* fresh: gamma 1, beta 0, moving mean 0, moving variance 1 */
		for (int c = 0; c < BN_C; c++) {
			assert_true(o.gamma < 0 || w[o.gamma + c] == 1.0f);
			assert_true(o.beta < 0 || w[o.beta + c] == 0.0f);
			assert_true(w[o.mm + c] == 0.0f && w[o.mv + c] == 1.0f);
		}
		/* the same initial bits on every backend (drawn on the host) */
		if (!w0)
			w0 = w;
		else
			assert_memory_equal(w, w0, sizeof(*w) * (size_t)xo_model_param_count(m));
		bn_get(w, &o, &v0);
		v1 = v0;
		bn_step(x, y, &v1, &g, &amax);
		if (xo_model_fit(m, x, y, BN_N, &fo, NULL, NULL))
			fail_msg("%s: %s", name, xo_last_error());
		w1 = params(m);
		bn_check_step(name, w1, &o, &v0, &g, &v1, amax);
		/* inference after the step: the moving statistics */
		bn_get(w1, &o, &v1);
		bn_predict(x, &v1, want);
		assert_int_equal(xo_model_predict(m, x, BN_N, BN_N, p), XO_OK);
		for (int i = 0; i < BN_N * BN_K; i++)
			if (!(fabs((double)p[i] - want[i / BN_K][i % BN_K]) <= 8.0 * U32 * 27))
				fail_msg("%s: center=%d scale=%d: predict %d: %.9g, by hand %.9g",
				         name, center, scale, i, (double)p[i],
				         want[i / BN_K][i % BN_K]);
		bn_roundtrip(be[b], m, spec, "bn.keras", center, scale);
		bn_roundtrip(be[b], m, spec, "bn.weights.h5", center, scale);
		bn_roundtrip(be[b], m, spec, "bn_npy", center, scale);
		free(w1);
		if (w != w0)
			free(w);
		xo_model_close(m);
	}
	free(w0);
}

static void test_bn_fresh(void **state)
{
	struct xo_backend *be[NB];
	int nb = open_backends(be, NB);

	(void)state;
	for (int c = 0; c < 4; c++)
		bn_case(be, nb, c & 1, c & 2);
	for (int b = 0; b < nb; b++)
		xo_backend_close(be[b]);
}

/* ---- ids --------------------------------------------------------------- */

#define ID_V 7 /* input_dim */
#define ID_D 3 /* output_dim */

static const char id_spec[] = "input 1 dtype=int32\n"
                              "embedding input_dim=7 output_dim=3\n"
                              "flatten\n"
                              "dense units=2 activation=softmax\n";

/* p of one id by hand: the table row through dense and softmax. */
static void id_predict(const float *w, const struct xo_layer_var *tab,
                       const struct xo_layer_var *dk, const struct xo_layer_var *db, int id,
                       double p[2])
{
	double z[2];

	for (int k = 0; k < 2; k++) {
		z[k] = w[db->off + k];
		for (int j = 0; j < ID_D; j++)
			z[k] += (double)w[tab->off + id * ID_D + j] * w[dk->off + j * 2 + k];
	}
	p[0] = 1.0 / (1.0 + exp(z[1] - z[0]));
	p[1] = 1.0 / (1.0 + exp(z[0] - z[1]));
}

/* An id the model refuses: XO_EINVAL naming it, nothing written. */
static void id_refused(struct xo_model *m, const char *be, float id, const float *w0)
{
	float x = id, y[2] = {1, 0}, p[2] = {-7, -7}, *w;
	struct xo_fit_options fo = xo_fit_options_default();
	double loss = -7, acc = -7;
	char want[96];

	snprintf(want, sizeof(want), "of sample 0, step 0 is outside [0, input_dim=%d)", ID_V);
	fo.epochs = 1;
	fo.batch_size = 1;
	fo.shuffle = false;
	if (xo_model_predict(m, &x, 1, 1, p) != XO_EINVAL || !strstr(xo_last_error(), want))
		fail_msg("%s: predict id %g: not refused as out of range (%s)", be, (double)id,
		         xo_last_error());
	assert_true(p[0] == -7 && p[1] == -7);
	if (xo_model_evaluate(m, &x, y, 1, 1, &loss, &acc) != XO_EINVAL ||
	    !strstr(xo_last_error(), want))
		fail_msg("%s: evaluate id %g: not refused (%s)", be, (double)id, xo_last_error());
	assert_true(loss == -7 && acc == -7);
	if (xo_model_fit(m, &x, y, 1, &fo, NULL, NULL) != XO_EINVAL ||
	    !strstr(xo_last_error(), want))
		fail_msg("%s: fit id %g: not refused (%s)", be, (double)id, xo_last_error());
	w = params(m);
	assert_memory_equal(w, w0, sizeof(*w) * (size_t)xo_model_param_count(m));
	free(w);
}

static void id_model(struct xo_backend *be)
{
	static const float bad[] = {ID_V, ID_V + 1, -1.0f, 1e9f, 2.5f, -0.5f};
	const char *name = xo_backend_name(be);
	struct xo_layer_var tab[XO_LAYER_VARS_MAX], dense[XO_LAYER_VARS_MAX];
	struct xo_fit_options fo = xo_fit_options_default();
	struct xo_model *m;
	float *w0, before[2], p[2];
	float three = 3.0f;

	fo.epochs = 1;
	fo.batch_size = 1;
	fo.shuffle = false;
	assert_int_equal(xo_model_open_string(id_spec, "ids.model", be, 4, &m), XO_OK);
	assert_int_equal(xo_model_init(m, 5), XO_OK);
	assert_int_equal(xo_model_layer_vars(m, 0, tab), 1);
	assert_int_equal(xo_model_layer_vars(m, 2, dense), 2);
	w0 = params(m);
	assert_int_equal(xo_model_predict(m, &three, 1, 1, before), XO_OK);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		id_refused(m, name, bad[i], w0);
	/* several samples: the bad one named by its sample */
	{
		float xs[3] = {0, ID_V - 1, ID_V}, ps[6];

		assert_int_equal(xo_model_predict(m, xs, 3, 3, ps), XO_EINVAL);
		assert_non_null(strstr(xo_last_error(), "of sample 2, step 0"));
	}
	/* unharmed: the same bits as before the refusals */
	assert_int_equal(xo_model_predict(m, &three, 1, 1, p), XO_OK);
	assert_memory_equal(p, before, sizeof(p));
	for (int id = 0; id < ID_V; id += ID_V - 1) { /* 0 and input_dim - 1 */
		float x = (float)id, y[2] = {0, 1}, *w1;
		double want[2], loss, acc;

		assert_int_equal(xo_model_params_host(m, w0, true), XO_OK);
		id_predict(w0, tab, &dense[0], &dense[1], id, want);
		assert_int_equal(xo_model_predict(m, &x, 1, 1, p), XO_OK);
		for (int k = 0; k < 2; k++) /* K_path: dense 3 + softmax 2 */
			if (!(fabs((double)p[k] - want[k]) <= 8.0 * U32 * 5))
				fail_msg("%s: id %d: p[%d] %.9g, by hand %.9g", name, id, k,
				         (double)p[k], want[k]);
		assert_int_equal(xo_model_evaluate(m, &x, y, 1, 1, &loss, &acc), XO_OK);
		/* -log p turns p's error d into d / p (docs/model.md, epoch losses) */
		assert_true(fabs(loss + log(want[1])) <= 2.0 * 8.0 * U32 * 5 / want[1]);
		if (xo_model_fit(m, &x, y, 1, &fo, NULL, NULL))
			fail_msg("%s: fit id %d: %s", name, id, xo_last_error());
		w1 = params(m);
		/* only row id of the table moved */
		for (int r = 0; r < ID_V; r++)
			for (int j = 0; j < ID_D; j++) {
				int64_t e = tab[0].off + r * ID_D + j;

				if ((r == id) == (w1[e] == w0[e]))
					fail_msg("%s: fit on id %d: table row %d %s", name, id, r,
					         r == id ? "did not move" : "moved");
			}
		free(w1);
	}
	free(w0);
	xo_model_close(m);
}

/* The op alone, one id at input_dim: no backend writes from outside the
 * table or reports success. */
static void id_op(struct xo_backend *be)
{
	const char *name = xo_backend_name(be);
	struct xo_params p = xo_params_default();
	struct xo_op_args a = {0};
	struct xo_tensor *ids, *table, *y;
	float tab[ID_V * ID_D], out[ID_D];
	enum xo_status st;

	p.batch = 1;
	p.len = 1;
	p.ch = ID_D;
	p.rows = ID_V;
	for (int i = 0; i < ID_V * ID_D; i++)
		tab[i] = (float)(i + 1);
	assert_int_equal(xo_tensor_create(be, XO_DTYPE_I32, 2, (int64_t[]){1, 1}, &ids), XO_OK);
	assert_int_equal(xo_tensor_create(be, XO_DTYPE_F32, 2, (int64_t[]){ID_V, ID_D}, &table),
	                 XO_OK);
	assert_int_equal(xo_tensor_create(be, XO_DTYPE_F32, 3, (int64_t[]){1, 1, ID_D}, &y), XO_OK);
	assert_int_equal(xo_tensor_write(table, tab, 0, ID_V * ID_D), XO_OK);
	a.p = p;
	a.src[0] = ids;
	a.src[1] = table;
	a.dst[0] = y;
	for (int32_t id = ID_V - 1; id <= ID_V; id++) {
		assert_int_equal(xo_tensor_write(ids, &id, 0, 1), XO_OK);
		assert_int_equal(xo_tensor_write(y, (float[]){-7, -7, -7}, 0, ID_D), XO_OK);
		st = xo_op_run(be, XO_OP_embedding, XO_DIR_FWD, &a);
		if (!st)
			st = xo_backend_sync(be); /* cl: the op's flag, read at the sync */
		assert_int_equal(xo_tensor_read(y, out, 0, ID_D), XO_OK);
		if (id < ID_V) {
			if (st || out[0] != tab[id * ID_D] || out[2] != tab[id * ID_D + 2])
				fail_msg("%s: the op on id %d (input_dim - 1): %s", name, id,
				         st ? xo_last_error() : "not that row");
			continue;
		}
		if (st != XO_EINVAL || !strstr(xo_last_error(), "outside [0,"))
			fail_msg("%s: the op on id %d (input_dim): not XO_EINVAL (%d: %s)", name,
			         id, (int)st, xo_last_error());
		/* nothing from outside the table: untouched, or zeros (cl) */
		for (int j = 0; j < ID_D; j++)
			if (out[j] != -7.0f && out[j] != 0.0f)
				fail_msg("%s: the op on id %d wrote %g", name, id, (double)out[j]);
		assert_int_equal(xo_backend_sync(be), XO_OK);
	}
	xo_tensor_free(ids);
	xo_tensor_free(table);
	xo_tensor_free(y);
}

/* Shuffled fit over samples holding only ids 0 and input_dim - 1 (the
 * batches gathered from the resident data set as int32 rows): the
 * parameters after it into w (param count in *np). */
static void id_fit_shuffled(struct xo_backend *be, float *w, int64_t *np)
{
	float x[6] = {ID_V - 1, 0, ID_V - 1, ID_V - 1, 0, ID_V - 1};
	float y[12] = {0, 1, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1};
	struct xo_fit_options fo = xo_fit_options_default();
	struct xo_model *m;

	fo.epochs = 1;
	fo.batch_size = 4; /* two steps: 4 and a tail of 2 */
	fo.shuffle = true;
	fo.seed = 4;
	assert_int_equal(xo_model_open_string(id_spec, "ids.model", be, 4, &m), XO_OK);
	assert_int_equal(xo_model_init(m, 5), XO_OK);
	*np = xo_model_param_count(m);
	assert_int_equal(xo_model_params_host(m, w, false), XO_OK);
	if (xo_model_fit(m, x, y, 6, &fo, NULL, NULL))
		fail_msg("%s: %s", xo_backend_name(be), xo_last_error());
	assert_int_equal(xo_model_params_host(m, w + *np, false), XO_OK);
	xo_model_close(m);
}

static void test_ids_at_input_dim(void **state)
{
	struct xo_backend *be[NB];
	int nb = open_backends(be, NB);
	/* table 21 + dense 8: before and after */
	float ref[2 * 64], got[2 * 64];
	int64_t np = 0;
	/* Adam, S = 2 steps, lr 1e-3: K_path = dense 3 + softmax 2, K_grad = 4
	 * (a batch's repeats of one row) */
	double eta = 8.0 * U32 * (5 + 4), lr = 1e-3;

	(void)state;
	for (int b = 0; b < nb; b++) {
		id_model(be[b]);
		id_op(be[b]);
		float *w = b ? got : ref;

		id_fit_shuffled(be[b], w, &np);
		assert_true(np <= 64);
		/* rows 1..5 of the table: never named, never changed; 0 and 6 moved */
		for (int64_t k = 0; k < ID_V * ID_D; k++)
			if ((k / ID_D == 0 || k / ID_D == ID_V - 1) == (w[k] == w[np + k]))
				fail_msg("%s: shuffled fit: table element %lld %s",
				         xo_backend_name(be[b]), (long long)k,
				         w[k] == w[np + k] ? "did not move" : "moved");
		if (!b)
			continue;
		for (int64_t k = 0; k < np; k++) {
			double tol = 2.0 * (2 * lr * 2 * eta + 4 * U32 * fabs((double)ref[np + k]));

			if (!(fabs((double)got[np + k] - (double)ref[np + k]) <= tol))
				fail_msg(
				    "%s: shuffled fit on ids 0 and %d: weight %lld %.9g, ref %.9g",
				    xo_backend_name(be[b]), ID_V - 1, (long long)k,
				    (double)got[np + k], (double)ref[np + k]);
		}
	}
	for (int b = 0; b < nb; b++)
		xo_backend_close(be[b]);
}

/* ---- chunk ------------------------------------------------------------- */

#define CH_N 53

/* name, spec, K_path of its prediction bound against ref */
static const struct {
	const char *name, *spec;
	int kpath;
} ch_models[] = {
    /* op by op everywhere (batch norm, average pooling) */
    {"conv_bn",
     "input 12 2\nconv1d filters=4 kernel_size=3 padding=same\n"
     "batch_normalization\nactivation activation=relu\n"
     "average_pooling1d pool_size=2\nflatten\ndense units=3 activation=softmax\n",
     6 + 2 + 1 + 6 + 24 + 3},
    /* recurrent: op by op, the inference form */
    {"lstm",
     "input 5 2\nlstm units=3 return_sequences=1 go_backwards=1\nflatten\n"
     "dense units=3 activation=softmax\n",
     5 * (2 + 3) * 4 + 15 + 3},
    /* a net the cpu backend fuses (its own tiling, never chunked) */
    {"mlp", "input 9\ndense units=6 activation=relu\ndense units=3 activation=softmax\n",
     9 + 6 + 3},
};

static void ch_predict(struct xo_model *m, const char *env, const float *x, int64_t bs, float *p,
                       int64_t cl)
{
	if (env)
		setenv("XO_PREDICT_CHUNK", env, 1);
	else
		unsetenv("XO_PREDICT_CHUNK");
	memset(p, 0xff, sizeof(*p) * (size_t)(CH_N * cl)); /* NaN: unwritten */
	if (xo_model_predict(m, x, CH_N, bs, p))
		fail_msg("XO_PREDICT_CHUNK=%s batch %lld: %s", env ? env : "(unset)", (long long)bs,
		         xo_last_error());
	unsetenv("XO_PREDICT_CHUNK");
}

static void test_predict_chunk_off(void **state)
{
	static const char *const envs[] = {NULL, "1", "7", "52", "53", "54"};
	struct xo_backend *be[NB];
	int nb = open_backends(be, NB);

	(void)state;
	for (size_t f = 0; f < sizeof(ch_models) / sizeof(ch_models[0]); f++) {
		float *x = NULL, *ref = NULL;
		int64_t per = 0, cl = 0;

		for (int b = 0; b < nb; b++) {
			const char *name = xo_backend_name(be[b]);
			struct xo_model *m;
			float *whole, *p;

			assert_int_equal(xo_model_open_string(ch_models[f].spec, ch_models[f].name,
			                                      be[b], CH_N, &m),
			                 XO_OK);
			assert_int_equal(xo_model_init(m, 9), XO_OK);
			per = xo_model_input_size(m);
			cl = xo_model_classes(m);
			if (!x) {
				x = malloc(sizeof(*x) * (size_t)(CH_N * per));
				ref = malloc(sizeof(*ref) * (size_t)(CH_N * cl));
				assert_true(x && ref);
				for (int64_t i = 0; i < CH_N * per; i++)
					x[i] =
					    (float)sin(0.37 * (double)i) * (float)(1 + i / per % 5);
			}
			whole = malloc(sizeof(*whole) * (size_t)(CH_N * cl));
			p = malloc(sizeof(*p) * (size_t)(CH_N * cl));
			assert_true(whole && p);
			ch_predict(m, "0", x, CH_N, whole, cl);
			for (size_t e = 0; e <= sizeof(envs) / sizeof(envs[0]) + 1; e++) {
				size_t ne = sizeof(envs) / sizeof(envs[0]);
				int64_t bs = e < ne ? CH_N : e == ne ? 1 : 7;

				ch_predict(m, e < ne ? envs[e] : "3", x, bs, p, cl);
				if (memcmp(p, whole, sizeof(*p) * (size_t)(CH_N * cl)))
					for (int64_t i = 0; i < CH_N * cl; i++)
						if (memcmp(&p[i], &whole[i], sizeof(*p)))
							fail_msg(
							    "%s on %s: XO_PREDICT_CHUNK=%s batch "
							    "%lld: sample "
							    "%lld class %lld: %.9g, chunking off "
							    "%.9g",
							    ch_models[f].name, name,
							    e < ne ? (envs[e] ? envs[e] : "(unset)")
							           : "3",
							    (long long)bs, (long long)(i / cl),
							    (long long)(i % cl), (double)p[i],
							    (double)whole[i]);
			}
			/* a bad chunk is bad input on every backend */
			setenv("XO_PREDICT_CHUNK", "-1", 1);
			assert_int_equal(xo_model_predict(m, x, CH_N, CH_N, p), XO_EINVAL);
			assert_non_null(strstr(xo_last_error(), "XO_PREDICT_CHUNK"));
			unsetenv("XO_PREDICT_CHUNK");
			if (b == 0) {
				memcpy(ref, whole, sizeof(*ref) * (size_t)(CH_N * cl));
			} else {
				/* the prediction bound, twice: each side within it of the answer */
				double tol = 2.0 * 8.0 * U32 * ch_models[f].kpath;

				for (int64_t i = 0; i < CH_N * cl; i++)
					if (!(fabs((double)whole[i] - (double)ref[i]) <= tol))
						fail_msg("%s on %s: sample %lld class %lld: %.9g, "
						         "ref %.9g (tol "
						         "%.3g)",
						         ch_models[f].name, name,
						         (long long)(i / cl), (long long)(i % cl),
						         (double)whole[i], (double)ref[i], tol);
			}
			free(whole);
			free(p);
			xo_model_close(m);
		}
		free(x);
		free(ref);
	}
	for (int b = 0; b < nb; b++)
		xo_backend_close(be[b]);
}

/*
 * The layer kinds' list (include/xo/layers.def) against what uses it: each
 * kind's spec name and Keras class are distinct and both parse to that
 * kind (a one-layer spec per kind, below: a new kind without a line here
 * fails), the names read back through xo_spec_kind_name and
 * xo_layer_keras_class, the op is the op of the same name (Activation's is
 * chosen by its argument), and only the five kinds the fused paths
 * implement get a fusable net kind.
 */
static const struct {
	enum xo_layer_kind kind;
	const char *input, *args;
} kind_lines[] = {
    {XO_LAYER_CONV1D, "input 8 3", "filters=2 kernel_size=2"},
    {XO_LAYER_MAX_POOLING1D, "input 8 3", ""},
    {XO_LAYER_FLATTEN, "input 8 3", ""},
    {XO_LAYER_DROPOUT, "input 8 3", "rate=0.5"},
    {XO_LAYER_DENSE, "input 6", "units=2"},
    {XO_LAYER_ACTIVATION, "input 6", "activation=tanh"},
    {XO_LAYER_AVERAGE_POOLING1D, "input 8 3", ""},
    {XO_LAYER_GLOBAL_AVERAGE_POOLING1D, "input 8 3", ""},
    {XO_LAYER_GLOBAL_MAX_POOLING1D, "input 8 3", ""},
    {XO_LAYER_BATCH_NORMALIZATION, "input 8 3", ""},
    {XO_LAYER_MAX_POOLING2D, "input 4 4 2", ""},
    {XO_LAYER_AVERAGE_POOLING2D, "input 4 4 2", ""},
    {XO_LAYER_GLOBAL_AVERAGE_POOLING2D, "input 4 4 2", ""},
    {XO_LAYER_GLOBAL_MAX_POOLING2D, "input 4 4 2", ""},
    {XO_LAYER_EMBEDDING, "input 5 dtype=int32", "input_dim=10 output_dim=3"},
    {XO_LAYER_SIMPLE_RNN, "input 5 3", "units=2"},
    {XO_LAYER_LSTM, "input 5 3", "units=2"},
    {XO_LAYER_GRU, "input 5 3", "units=2"},
    {XO_LAYER_CONV2D, "input 4 4 2", "filters=2 kernel_size=2"},
    {XO_LAYER_ZERO_PADDING1D, "input 8 3", "padding=1,2"},
    {XO_LAYER_CROPPING1D, "input 8 3", "cropping=2,1"},
    {XO_LAYER_UP_SAMPLING1D, "input 8 3", "size=3"},
    {XO_LAYER_ZERO_PADDING2D, "input 4 4 2", "padding=1,0,2,1"},
    {XO_LAYER_CROPPING2D, "input 4 4 2", "cropping=1,0,1,2"},
    {XO_LAYER_UP_SAMPLING2D, "input 4 4 2", "size=2 size_w=3"},
    {XO_LAYER_LAYER_NORMALIZATION, "input 5 3", ""},
    {XO_LAYER_PERMUTE, "input 3 4 5", "dims=3,1,2"},
    {XO_LAYER_REPEAT_VECTOR, "input 5", "n=3"},
    {XO_LAYER_RESHAPE, "input 4 6", "target_shape=3,-1,2"},
    {XO_LAYER_ADD, "input 5 3", "inputs=input,input"},
    {XO_LAYER_SUBTRACT, "input 5 3", "inputs=input,input"},
    {XO_LAYER_MULTIPLY, "input 5 3", "inputs=input,input"},
    {XO_LAYER_AVERAGE, "input 5 3", "inputs=input,input"},
    {XO_LAYER_MAXIMUM, "input 5 3", "inputs=input,input"},
    {XO_LAYER_MINIMUM, "input 5 3", "inputs=input,input"},
    {XO_LAYER_CONCATENATE, "input 5 3", "inputs=input,input"},
    {XO_LAYER_DEPTHWISE_CONV2D, "input 5 4 3", "depth_multiplier=2 kernel_size=3 padding=same"},
    {XO_LAYER_DEPTHWISE_CONV1D, "input 8 3", "depth_multiplier=2 kernel_size=3 strides=2"},
    {XO_LAYER_SEPARABLE_CONV2D, "input 5 4 3", "filters=4 depth_multiplier=2 kernel_size=3"},
    {XO_LAYER_SEPARABLE_CONV1D, "input 8 3", "filters=4 depth_multiplier=2 kernel_size=3"},
    {XO_LAYER_TIME_DISTRIBUTED, "input 3 5 2", "layer=conv1d filters=2 kernel_size=3"},
    {XO_LAYER_BIDIRECTIONAL, "input 5 3", "layer=gru units=2 return_sequences=True"},
    {XO_LAYER_CONV2D_TRANSPOSE, "input 3 4 3",
     "filters=2 kernel_size=3 kernel_w=2 strides=2 padding=same output_padding=1"},
    {XO_LAYER_CONV1D_TRANSPOSE, "input 5 3", "filters=2 kernel_size=3 strides=2 output_padding=1"},
    {XO_LAYER_MULTI_HEAD_ATTENTION, "input 5 3",
     "inputs=input,input num_heads=2 key_dim=2 value_dim=3 output_shape=4"},
    {XO_LAYER_RE_LU, "input 6", "max_value=6"},
    {XO_LAYER_SOFTMAX, "input 4 3", "axis=2"},
    {XO_LAYER_MASKING, "input 5 3", "mask_value=0.5"},
    {XO_LAYER_RESCALING, "input 3 4 2", "scale=0.00392156886 offset=-1"},
    {XO_LAYER_NORMALIZATION, "input 5 3", ""},
    {XO_LAYER_LEAKY_RE_LU, "input 4 3", "negative_slope=0.1"},
    {XO_LAYER_ELU, "input 4 3", "alpha=0.7"},
};

static void test_layer_kinds(void **state)
{
	(void)state;
	assert_int_equal(sizeof(kind_lines) / sizeof(kind_lines[0]), XO_LAYER_COUNT);
	for (int i = 0; i < XO_LAYER_COUNT; i++) {
		const struct xo_layer_kind_info *k = &xo_layer_kinds[kind_lines[i].kind];
		bool fusable = kind_lines[i].kind == XO_LAYER_CONV1D ||
		               kind_lines[i].kind == XO_LAYER_MAX_POOLING1D ||
		               kind_lines[i].kind == XO_LAYER_FLATTEN ||
		               kind_lines[i].kind == XO_LAYER_DROPOUT ||
		               kind_lines[i].kind == XO_LAYER_DENSE;

		assert_int_equal(kind_lines[i].kind, i);
		assert_non_null(k->spec);
		assert_non_null(k->keras);
		assert_string_equal(xo_spec_kind_name((enum xo_layer_kind)i), k->spec);
		assert_string_equal(xo_layer_keras_class((enum xo_layer_kind)i), k->keras);
		for (int j = 0; j < i; j++) {
			assert_string_not_equal(xo_layer_kinds[j].spec, k->spec);
			assert_string_not_equal(xo_layer_kinds[j].keras, k->keras);
		}
		if (i == XO_LAYER_ACTIVATION || i == XO_LAYER_TIME_DISTRIBUTED ||
		    i == XO_LAYER_BIDIRECTIONAL || i == XO_LAYER_RE_LU) {
			/* the op depends on the activation / the wrapped kind /
			 * max_value (relu or relu6) */
			assert_int_equal(k->op, XO_OP_COUNT);
		} else {
			/* an op is named as its layer, but for the ops that serve
			 * several kinds by design (ops.def): pad, up_sampling,
			 * flatten (Flatten and Reshape: views of their input),
			 * merge (the merge layers, one op with a mode) and
			 * depthwise_conv2d (DepthwiseConv1D on one column); and
			 * attention, the core of MultiHeadAttention between the
			 * dense op's projections; leaky_relu, which Keras names
			 * leaky_re_lu as a layer and leaky_relu as an activation
			 * (the activation string runs it too) */
			bool shared_op = k->op == XO_OP_pad || k->op == XO_OP_up_sampling ||
			                 k->op == XO_OP_flatten || k->op == XO_OP_merge ||
			                 k->op == XO_OP_depthwise_conv2d ||
			                 k->op == XO_OP_conv2d_transpose || k->op == XO_OP_attention ||
			                 k->op == XO_OP_leaky_relu;

			assert_true(k->op < XO_OP_COUNT);
			if (!shared_op)
				assert_string_equal(xo_op_name(k->op), k->spec);
		}
		assert_int_equal(xo_net_kind_fusable(k->net), fusable);
		for (int alias = 0; alias < 2; alias++) {
			struct xo_model_spec spec;
			char text[256];

			snprintf(text, sizeof(text), "%s\n%s %s\n", kind_lines[i].input,
			         alias ? k->keras : k->spec, kind_lines[i].args);
			if (xo_spec_parse(text, "kinds", &spec))
				fail_msg("%s: %s", text, xo_last_error());
			assert_int_equal(spec.nlayers, 1);
			assert_int_equal(spec.layers[0].kind, i);
			assert_string_equal(spec.layers[0].name, k->spec);
			xo_spec_free(&spec);
		}
	}
}

/*
 * Each kind's table entries (the runtime's family, keras.c's class row)
 * against the spec: a one-layer model of each kind line opens on the first
 * backend; its Keras variables cover the layer's parameters exactly, each
 * once, with shapes whose sizes are their counts; and its .keras file (the
 * class row's config writer and keys) opens back as the same kind with the
 * same parameter bits.
 */
static void test_layer_tables(void **state)
{
	struct xo_backend *be[NB];
	int nb = open_backends(be, NB);

	(void)state;
	assert_true(nb > 0);
	for (int i = 0; i < XO_LAYER_COUNT; i++) {
		const struct xo_layer_kind_info *k = &xo_layer_kinds[kind_lines[i].kind];
		struct xo_layer_var v[XO_LAYER_VARS_MAX];
		struct xo_model *m, *r;
		char text[256], path[512];
		int64_t covered = 0, np;
		int n;
		float *w, *got;

		snprintf(text, sizeof(text), "%s\n%s %s\n", kind_lines[i].input, k->spec,
		         kind_lines[i].args);
		if (xo_model_open_string(text, "tables", be[0], 2, &m))
			fail_msg("%s: %s", text, xo_last_error());
		assert_int_equal(xo_model_init(m, 7), XO_OK);
		np = xo_model_param_count(m);
		n = xo_model_layer_vars(m, 0, v);
		assert_true(n >= 0 && n <= XO_LAYER_VARS_MAX);
		for (int a = 0; a < n; a++) {
			int64_t size = 1;

			for (int d = 0; d < v[a].ndim; d++)
				size *= v[a].dim[d];
			assert_int_equal(v[a].keras_int ? 0 : size, v[a].count); /* no values */
			assert_true(v[a].off >= 0 && v[a].off + v[a].count <= np);
			for (int b = 0; b < a; b++)
				assert_true(v[a].off >= v[b].off + v[b].count ||
				            v[b].off >= v[a].off + v[a].count);
			covered += v[a].count;
		}
		assert_int_equal(covered, xo_layer_total(xo_model_layer_spec(m, 0)));
		assert_int_equal(covered, np);
		snprintf(path, sizeof(path), "%s/%s.keras", g_tmp, k->spec);
		if (xo_model_save_weights(m, path))
			fail_msg("%s: %s", path, xo_last_error());
		if (xo_model_open(path, be[0], 2, &r))
			fail_msg("%s: %s", path, xo_last_error());
		assert_int_equal(xo_model_layer_count(r), 1);
		assert_int_equal(xo_model_layer_spec(r, 0)->kind, i);
		assert_int_equal(xo_model_param_count(r), np);
		if (np) {
			w = params(m);
			got = params(r);
			assert_memory_equal(w, got, sizeof(*w) * (size_t)np);
			free(w);
			free(got);
		}
		xo_model_close(r);
		xo_model_close(m);
		assert_int_equal(unlink(path), 0);
	}
	for (int b = 0; b < nb; b++)
		xo_backend_close(be[b]);
}

static int setup(void **state)
{
	(void)state;
	snprintf(g_tmp, sizeof(g_tmp), "%s/xo_edges_XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(g_tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(g_tmp);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest bn[] = {cmocka_unit_test(test_bn_fresh)};
	const struct CMUnitTest ids[] = {cmocka_unit_test(test_ids_at_input_dim)};
	const struct CMUnitTest chunk[] = {cmocka_unit_test(test_predict_chunk_off)};
	const struct CMUnitTest kinds[] = {cmocka_unit_test(test_layer_kinds)};
	const struct CMUnitTest tables[] = {cmocka_unit_test(test_layer_tables)};
	const char *g = argc > 1 ? argv[1] : "";

	if (!strcmp(g, "bn"))
		return cmocka_run_group_tests(bn, setup, teardown);
	if (!strcmp(g, "ids"))
		return cmocka_run_group_tests(ids, setup, teardown);
	if (!strcmp(g, "chunk"))
		return cmocka_run_group_tests(chunk, setup, teardown);
	if (!strcmp(g, "kinds"))
		return cmocka_run_group_tests(kinds, NULL, NULL);
	if (!strcmp(g, "tables"))
		return cmocka_run_group_tests(tables, setup, teardown);
	fprintf(stderr, "test_model_edges: name a group: bn, ids, chunk, kinds or tables\n");
	return 2;
}
