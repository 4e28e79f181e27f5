/*
 * test_keras_hostile.c - Keras files from strangers (model/h5read.c,
 * model/keras.c; docs/model.md "Untrusted model files"). Every file here is
 * written by libhdf5 (and libzip) itself, in the legacy .h5 layout Keras 2
 * writes, with one thing made hostile:
 *
 * - string attributes of the wrong shape or class (a multi-element
 *   model_config, an integer one, a 2-D layer_names), or a fixed-length one
 *   with bytes after a NUL, are refused naming the attribute (NUL padding
 *   alone is accepted); a variable-length UTF-8 model_config (what h5py writes
 *   for a Python str) is accepted;
 * - indirection: external raw storage (/etc/passwd, a FIFO), an external
 *   link, a soft link, a virtual dataset, also inside a .keras archive, are
 *   refused by name, the FIFO without hanging;
 * - a config declaring a large model over a tiny file is refused before the
 *   model is allocated (peak RSS of this process grows by under 64 MiB;
 *   the model declared would take 120 MB), and one over the limit too;
 * - NaN weights and float64 weights beyond float32 are refused naming the
 *   file, the layer and the variable;
 * - a kernel stored chunked through deflate, shuffle + fletcher32, or in
 *   edge chunks predicts the bits of the plain file; a filter libhdf5 lacks
 *   is named; a chunk never written is no stored values;
 * - a crash, a hang and garbage from the reader (the test-only hook
 *   XO_HDF5_READER_FAULT) are one line each, the hang within the deadline;
 *   so are the files the fuzz targets found that hang libhdf5 or make it
 *   read outside its heap;
 *   truncated and byte-flipped files are a model or one line, never a crash
 *   of this process;
 * - a model without weights (max pooling, flatten) opens, predicts, and its
 *   (empty) weights save and load as a .npy directory (what xo import does).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <hdf5.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zip.h>

#include <cmocka.h>

#include "model_internal.h"

#if !defined(XO_KERAS_DIR) || !defined(XO_FUZZ_REGRESS)
#error "XO_KERAS_DIR must name suites/golden/keras, XO_FUZZ_REGRESS fuzz/regress"
#endif

/* input 7 -> dense units=3 softmax, as Keras 3 writes it */
static const char dense_cfg[] =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"sequential\", \"layers\": "
    "[{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": UNITS, "
    "\"activation\": \"softmax\", \"use_bias\": true}, \"build_config\": {\"input_shape\": "
    "[null, INPUTS]}}], \"build_input_shape\": [null, INPUTS]}}";

static const char pool_cfg[] =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"pools\", \"layers\": ["
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_shape\": [null, 8, 2], "
    "\"dtype\": \"float32\", \"name\": \"input_layer\"}}, "
    "{\"class_name\": \"MaxPooling1D\", \"config\": {\"name\": \"max_pooling1d\", "
    "\"pool_size\": [2], \"padding\": \"valid\", \"strides\": [2], "
    "\"data_format\": \"channels_last\"}}, "
    "{\"class_name\": \"Flatten\", \"config\": {\"name\": \"flatten\", "
    "\"data_format\": \"channels_last\"}}]}}";

enum how {
	H_PLAIN,
	H_CFG_MULTI,     /* model_config: 3 fixed-length strings */
	H_CFG_VLEN_UTF8, /* model_config: variable-length UTF-8 scalar (valid) */
	H_CFG_INT,       /* model_config: an integer */
	H_CFG_NUL_JUNK,  /* model_config: fixed-length, a NUL then other bytes after the JSON */
	H_CFG_NUL_PAD,   /* model_config: fixed-length, NUL padding after the JSON (valid) */
	H_NAMES_2D,      /* layer_names: a 1x1 array */
	H_EXT_PASSWD,    /* kernel stored in /etc/passwd */
	H_EXT_FIFO,      /* kernel stored in a FIFO */
	H_EXT_LINK,      /* the layer's group an external link */
	H_SOFT_LINK,     /* the kernel a soft link */
	H_VIRTUAL,       /* the kernel a virtual dataset */
	H_NAN,           /* a NaN in the kernel */
	H_F64_HUGE,      /* the kernel float64 with 1e300 in it */
	H_WEIGHTLESS,    /* pool_cfg, layers without weights */
	H_INT_KERNEL,    /* the kernel stored as int32 */
	H_GZIP,          /* the kernel chunked (4, 2), deflated (h5repack -f GZIP=9) */
	H_SHUF_F32,      /* the kernel chunked (7, 3), shuffled, with a fletcher32 checksum */
	H_EDGE_CHUNK,    /* the kernel chunked (2, 2), no filter: edge chunks past the shape */
	H_CHUNK_HOLE,    /* H_EDGE_CHUNK with the last row's chunks never written */
	H_ODD_FILTER,    /* the kernel through a filter the reader does not have */
};

/* A filter of this test's own (it copies), unregistered once the file is
 * written: to the reader, a filter libhdf5 lacks (a plugin's). */
#define ODD_FILTER 32123
static size_t odd_filter(unsigned int flags, size_t ncd, const unsigned int cd[], size_t nbytes,
                         size_t *buf_size, void **buf)
{
	(void)flags;
	(void)ncd;
	(void)cd;
	(void)buf_size;
	(void)buf;
	return nbytes;
}

static char g_tmp[256];

static void tmp_path(char *dst, size_t cap, const char *name)
{
	snprintf(dst, cap, "%s/%s", g_tmp, name);
}

static void put_str_attr(hid_t obj, const char *name, const char *const *v, int n, int rank)
{
	size_t sz = 1;
	hsize_t dims[2] = {(hsize_t)n, 1};
	char *flat;
	hid_t t = H5Tcopy(H5T_C_S1), s, a;

	for (int i = 0; i < n; i++)
		sz = strlen(v[i]) > sz ? strlen(v[i]) : sz;
	flat = calloc((size_t)n, sz);
	assert_non_null(flat);
	for (int i = 0; i < n; i++)
		memcpy(flat + (size_t)i * sz, v[i], strlen(v[i]));
	H5Tset_size(t, sz);
	H5Tset_strpad(t, H5T_STR_NULLPAD);
	s = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
	a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
	assert_true(a >= 0);
	assert_true(H5Awrite(a, t, flat) >= 0);
	H5Aclose(a);
	H5Sclose(s);
	H5Tclose(t);
	free(flat);
}

static void put_config(hid_t f, const char *cfg, enum how how)
{
	if (how == H_CFG_MULTI) {
		const char *v[3] = {cfg, cfg, cfg};

		put_str_attr(f, "model_config", v, 3, 1);
	} else if (how == H_CFG_VLEN_UTF8) {
		hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a;

		H5Tset_size(t, H5T_VARIABLE);
		H5Tset_cset(t, H5T_CSET_UTF8);
		a = H5Acreate2(f, "model_config", t, s, H5P_DEFAULT, H5P_DEFAULT);
		assert_true(H5Awrite(a, t, &cfg) >= 0);
		H5Aclose(a);
		H5Sclose(s);
		H5Tclose(t);
	} else if (how == H_CFG_NUL_JUNK || how == H_CFG_NUL_PAD) {
		static const char tail[8] = {'\0', 'j', 'u', 'n', 'k', '}', '\0', '\0'};
		size_t n = strlen(cfg);
		char *flat = calloc(1, n + sizeof(tail));
		hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a;

		assert_non_null(flat);
		memcpy(flat, cfg, n);
		if (how == H_CFG_NUL_JUNK)
			memcpy(flat + n, tail, sizeof(tail));
		H5Tset_size(t, n + sizeof(tail));
		H5Tset_strpad(t, H5T_STR_NULLPAD);
		a = H5Acreate2(f, "model_config", t, s, H5P_DEFAULT, H5P_DEFAULT);
		assert_true(H5Awrite(a, t, flat) >= 0);
		H5Aclose(a);
		H5Sclose(s);
		H5Tclose(t);
		free(flat);
	} else if (how == H_CFG_INT) {
		hid_t s = H5Screate(H5S_SCALAR), a;
		int v = 7;

		a = H5Acreate2(f, "model_config", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT);
		assert_true(H5Awrite(a, H5T_NATIVE_INT, &v) >= 0);
		H5Aclose(a);
		H5Sclose(s);
	} else {
		put_str_attr(f, "model_config", &cfg, 1, 0);
	}
}

/* A source file for links and virtual datasets: /g/kernel:0, 7x3 floats. */
static void make_other(const char *path)
{
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	hid_t g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	hsize_t dims[2] = {7, 3};
	float v[21] = {0};
	hid_t s = H5Screate_simple(2, dims, NULL);
	hid_t d = H5Dcreate2(g, "kernel:0", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT,
	                     H5P_DEFAULT);

	assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
	H5Dclose(d);
	H5Sclose(s);
	H5Gclose(g);
	H5Fclose(f);
}

/* The kernel (7x3) of the dense layer, made as how says, in group g. */
static void put_kernel(hid_t g, enum how how)
{
	hsize_t dims[2] = {7, 3};
	hid_t s = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d;
	float v[21];
	double v64[21];
	char other[512], fifo[512];

	for (int i = 0; i < 21; i++)
		v64[i] = v[i] = 0.01f * (float)(i - 10);
	tmp_path(other, sizeof(other), "other.h5");
	tmp_path(fifo, sizeof(fifo), "fifo");
	if (how == H_EXT_PASSWD)
		H5Pset_external(dcpl, "/etc/passwd", 0, sizeof(v));
	if (how == H_EXT_FIFO) {
		assert_int_equal(mkfifo(fifo, 0600), 0);
		H5Pset_external(dcpl, fifo, 0, sizeof(v));
	}
	if (how == H_VIRTUAL) {
		hid_t src = H5Screate_simple(2, dims, NULL);

		make_other(other);
		H5Pset_virtual(dcpl, s, other, "/g/kernel:0", src);
		H5Sclose(src);
	}
	if (how == H_ODD_FILTER) {
		static const H5Z_class2_t cls = {H5Z_CLASS_T_VERS, ODD_FILTER, 1,    1,
		                                 "odd filter",     NULL,       NULL, odd_filter};
		hsize_t chunk[2] = {7, 3};

		assert_true(H5Zregister(&cls) >= 0);
		H5Pset_chunk(dcpl, 2, chunk);
		assert_true(H5Pset_filter(dcpl, ODD_FILTER, 0, 0, NULL) >= 0);
	}
	if (how == H_GZIP || how == H_SHUF_F32 || how == H_EDGE_CHUNK || how == H_CHUNK_HOLE) {
		hsize_t chunk[2] = {how == H_GZIP       ? 4
		                    : how == H_SHUF_F32 ? 7
		                                        : 2,
		                    how == H_SHUF_F32 ? 3 : 2};

		H5Pset_chunk(dcpl, 2, chunk);
		if (how == H_GZIP)
			H5Pset_deflate(dcpl, 9);
		if (how == H_SHUF_F32) {
			H5Pset_shuffle(dcpl);
			H5Pset_fletcher32(dcpl);
		}
	}
	if (how == H_CHUNK_HOLE) {
		hsize_t start[2] = {0, 0}, rows[2] = {6, 3};
		hid_t ms = H5Screate_simple(2, rows, NULL);

		d = H5Dcreate2(g, "kernel:0", H5T_IEEE_F32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
		assert_true(d >= 0);
		H5Sselect_hyperslab(s, H5S_SELECT_SET, start, NULL, rows, NULL);
		assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, ms, s, H5P_DEFAULT, v) >= 0);
		H5Sclose(ms);
		H5Dclose(d);
	} else if (how == H_SOFT_LINK) {
		d = H5Dcreate2(g, "real", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
		H5Dclose(d);
		assert_true(H5Lcreate_soft("/model_weights/dense/dense/real", g, "kernel:0",
		                           H5P_DEFAULT, H5P_DEFAULT) >= 0);
	} else if (how == H_INT_KERNEL) {
		int32_t iv[21] = {0};

		d = H5Dcreate2(g, "kernel:0", H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT,
		               H5P_DEFAULT);
		assert_true(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, iv) >= 0);
		H5Dclose(d);
	} else if (how == H_F64_HUGE) {
		v64[4] = 1e300;
		d = H5Dcreate2(g, "kernel:0", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT,
		               H5P_DEFAULT);
		assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v64) >= 0);
		H5Dclose(d);
	} else {
		if (how == H_NAN)
			v[4] = NAN;
		d = H5Dcreate2(g, "kernel:0", H5T_IEEE_F32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
		assert_true(d >= 0);
		if (how != H_EXT_FIFO && how != H_VIRTUAL && how != H_EXT_PASSWD)
			assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >=
			            0);
		H5Dclose(d);
	}
	H5Pclose(dcpl);
	H5Sclose(s);
	if (how == H_ODD_FILTER)
		H5Zunregister(ODD_FILTER);
}

/* The dense layer's weights, Keras 2 layout, under root (a file or the
 * model_weights group). */
static void put_dense_weights(hid_t root, enum how how)
{
	static const char *const layers[] = {"dense"};
	static const char *const weights[] = {"dense/kernel:0", "dense/bias:0"};
	hid_t lg, g, s, d;
	hsize_t n = 3;
	float b[3] = {0.1f, 0.2f, 0.3f};
	char other[512];

	put_str_attr(root, "layer_names", layers, 1, how == H_NAMES_2D ? 2 : 1);
	lg = H5Gcreate2(root, "dense", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	put_str_attr(lg, "weight_names", weights, 2, 1);
	if (how == H_EXT_LINK) {
		tmp_path(other, sizeof(other), "other.h5");
		make_other(other);
		assert_true(H5Lcreate_external(other, "/g", lg, "dense", H5P_DEFAULT, H5P_DEFAULT) >=
		            0);
		H5Gclose(lg);
		return;
	}
	g = H5Gcreate2(lg, "dense", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	put_kernel(g, how);
	s = H5Screate_simple(1, &n, NULL);
	d = H5Dcreate2(g, "bias:0", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, b) >= 0);
	H5Dclose(d);
	H5Sclose(s);
	H5Gclose(g);
	H5Gclose(lg);
}

/* A legacy full-model .h5 at tmp/name: cfg (dense_cfg with units x inputs
 * when NULL) and its weights, made hostile as how says. */
static void make_model(const char *name, const char *cfg, int units, int inputs, enum how how,
                       char *path, size_t cap)
{
	char buf[4096], num[32];
	const char *p;
	hid_t f, mw;

	tmp_path(path, cap, name);
	if (!cfg) { /* dense_cfg with UNITS and INPUTS substituted */
		size_t n = 0;

		for (p = dense_cfg; *p && n + 32 < sizeof(buf);) {
			if (!strncmp(p, "UNITS", 5) || !strncmp(p, "INPUTS", 6)) {
				snprintf(num, sizeof(num), "%d", *p == 'U' ? units : inputs);
				memcpy(buf + n, num, strlen(num));
				n += strlen(num);
				p += *p == 'U' ? 5 : 6;
			} else {
				buf[n++] = *p++;
			}
		}
		buf[n] = '\0';
		cfg = buf;
	}
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	assert_true(f >= 0);
	put_config(f, cfg, how);
	mw = H5Gcreate2(f, "model_weights", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (how == H_WEIGHTLESS) {
		static const char *const layers[] = {"max_pooling1d", "flatten"};
		float none = 0;

		put_str_attr(mw, "layer_names", layers, 2, 1);
		for (int i = 0; i < 2; i++) {
			hsize_t zero = 0;
			hid_t lg = H5Gcreate2(mw, layers[i], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
			hid_t s = H5Screate_simple(1, &zero, NULL);
			hid_t a = H5Acreate2(lg, "weight_names", H5T_IEEE_F32LE, s, H5P_DEFAULT,
			                     H5P_DEFAULT);

			/* what Keras writes for a layer without weights: np.array([]) */
			H5Awrite(a, H5T_NATIVE_FLOAT, &none);
			H5Aclose(a);
			H5Sclose(s);
			H5Gclose(lg);
		}
	} else {
		put_dense_weights(mw, how);
	}
	H5Gclose(mw);
	assert_true(H5Fclose(f) >= 0);
}

static struct xo_backend *ref_backend(void)
{
	struct xo_backend *be;

	if (xo_backend_open("ref", &be))
		fail_msg("%s", xo_last_error());
	return be;
}

/* Opening path (a model) is refused with one line naming path and holding
 * every word of want. */
static void assert_refused(const char *path, const char *const *want)
{
	struct xo_backend *be = ref_backend();
	struct xo_model *m = NULL;
	enum xo_status st = xo_model_open(path, be, 4, &m);
	const char *msg = xo_last_error();

	if (!st) {
		xo_model_close(m);
		xo_backend_close(be);
		fail_msg("%s: opened, should be refused", path);
	}
	print_message("refused: %s\n", msg);
	assert_int_equal(st, XO_EFORMAT);
	assert_non_null(strstr(msg, path));
	assert_null(strchr(msg, '\n'));
	for (; *want; want++)
		if (!strstr(msg, *want))
			fail_msg("message lacks '%s': %s", *want, msg);
	xo_backend_close(be);
}

static void test_hostile_attributes(void **state)
{
	char path[512];
	struct xo_backend *be = ref_backend();
	struct xo_model *m;

	(void)state;
	make_model("multi.h5", NULL, 3, 7, H_CFG_MULTI, path, sizeof(path));
	assert_refused(path, (const char *const[]){"model_config", "not one string", NULL});
	make_model("int.h5", NULL, 3, 7, H_CFG_INT, path, sizeof(path));
	assert_refused(path, (const char *const[]){"model_config", "not a string", NULL});
	/* bytes after a NUL in a fixed-length config are not padding: not text,
	 * as a .keras config.json with a NUL; NUL padding alone is valid */
	make_model("nuljunk.h5", NULL, 3, 7, H_CFG_NUL_JUNK, path, sizeof(path));
	assert_refused(path, (const char *const[]){"model_config", "not text (a NUL byte)", NULL});
	make_model("nulpad.h5", NULL, 3, 7, H_CFG_NUL_PAD, path, sizeof(path));
	if (xo_model_open(path, be, 4, &m))
		fail_msg("NUL-padded config refused: %s", xo_last_error());
	xo_model_close(m);
	make_model("names2d.h5", NULL, 3, 7, H_NAMES_2D, path, sizeof(path));
	assert_refused(path, (const char *const[]){"layer_names", "not a list of names", NULL});
	/* valid: what h5py writes for a str */
	make_model("utf8.h5", NULL, 3, 7, H_CFG_VLEN_UTF8, path, sizeof(path));
	if (xo_model_open(path, be, 4, &m))
		fail_msg("vlen UTF-8 config refused: %s", xo_last_error());
	assert_int_equal(xo_model_param_count(m), 24);
	xo_model_close(m);
	make_model("plain.h5", NULL, 3, 7, H_PLAIN, path, sizeof(path));
	if (xo_model_open(path, be, 4, &m))
		fail_msg("plain model refused: %s", xo_last_error());
	xo_model_close(m);
	xo_backend_close(be);
}

/* Copies the file src to dst (created or truncated), failing the test on
 * any error. */
static void copy_file(const char *src, const char *dst)
{
	char buf[65536];
	FILE *in = fopen(src, "rb"), *out;
	size_t n;

	assert_non_null(in);
	out = fopen(dst, "wb");
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	assert_false(ferror(in));
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* The model's weights member replaced by the file at h5 (a .keras made from
 * the seed fixture). */
static void make_keras(const char *name, const char *h5, char *path, size_t cap)
{
	char src[512];
	zip_t *z;
	zip_source_t *s;
	int err = 0;

	snprintf(src, sizeof(src), "%s/seed.keras", XO_KERAS_DIR);
	tmp_path(path, cap, name);
	copy_file(src, path);
	z = zip_open(path, 0, &err);
	assert_non_null(z);
	s = zip_source_file(z, h5, 0, -1);
	assert_non_null(s);
	assert_true(zip_file_add(z, "model.weights.h5", s, ZIP_FL_OVERWRITE) >= 0);
	assert_int_equal(zip_close(z), 0);
}

static void test_hostile_indirection(void **state)
{
	char path[512], kpath[512];
	double t0;
	struct timespec ts;

	(void)state;
	make_model("passwd.h5", NULL, 3, 7, H_EXT_PASSWD, path, sizeof(path));
	assert_refused(path, (const char *const[]){"kernel:0", "external raw-data storage", NULL});
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
	make_model("fifo.h5", NULL, 3, 7, H_EXT_FIFO, path, sizeof(path));
	assert_refused(path, (const char *const[]){"external raw-data storage", NULL});
	clock_gettime(CLOCK_MONOTONIC, &ts);
	assert_true((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 - t0 < 10);
	make_model("extlink.h5", NULL, 3, 7, H_EXT_LINK, path, sizeof(path));
	assert_refused(path, (const char *const[]){"model_weights/dense/dense", "external link",
	                                           NULL});
	make_model("soft.h5", NULL, 3, 7, H_SOFT_LINK, path, sizeof(path));
	assert_refused(path, (const char *const[]){"kernel:0", "soft link", NULL});
	make_model("virtual.h5", NULL, 3, 7, H_VIRTUAL, path, sizeof(path));
	assert_refused(path, (const char *const[]){"kernel:0", "virtual dataset", NULL});
	/* inside an archive: the seed .keras with a weights member that links out */
	make_model("extlink2.h5", NULL, 3, 7, H_EXT_LINK, path, sizeof(path));
	make_keras("extlink.keras", path, kpath, sizeof(kpath));
	assert_refused(kpath, (const char *const[]){"external link", NULL});
	make_model("passwd2.h5", NULL, 3, 7, H_EXT_PASSWD, path, sizeof(path));
	make_keras("passwd.keras", path, kpath, sizeof(kpath));
	assert_refused(kpath, (const char *const[]){"external raw-data storage", NULL});
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void test_hostile_sizes(void **state)
{
	char path[512];
	long before, after;

	(void)state;
	/* 5000 x 6000 dense: 30,006,000 parameters (120 MB, under the default
	 * limit) over 24 stored values */
	make_model("big.h5", NULL, 6000, 5000, H_PLAIN, path, sizeof(path));
	before = peak_rss_kb();
	assert_refused(path, (const char *const[]){"declares 30006000 parameters",
	                                           "stores 24", NULL});
	after = peak_rss_kb();
	print_message("peak RSS %ld kB -> %ld kB\n", before, after);
	assert_true(after - before < 64 * 1024);
	/* the same as a spec: 256 M parameters, over the limit, refused before
	 * allocation */
	{
		struct xo_backend *be = ref_backend();
		struct xo_model *m = NULL;

		assert_int_equal(xo_model_open_string("input 16384\ndense units=16384\n", "huge.model",
		                                      be, 1, &m),
		                 XO_EFORMAT);
		print_message("refused: %s\n", xo_last_error());
		assert_non_null(strstr(xo_last_error(), "declares 268451840 parameters"));
		assert_true(peak_rss_kb() - before < 64 * 1024);
		xo_backend_close(be);
	}
	/* 160 M parameters: over XO_MODEL_PARAMS_MAX */
	make_model("huge.h5", NULL, 20000, 8000, H_PLAIN, path, sizeof(path));
	assert_refused(path, (const char *const[]){"the limit", NULL});
	assert_true(peak_rss_kb() - before < 64 * 1024);
}

/* Counts in the text: a spec or a Keras config of more layers than
 * XO_SPEC_LAYERS_MAX is refused (and the duplicate-name check is no pass over
 * the earlier layers: 10 000 layers parse in well under a second), and a
 * config whose JSON holds millions of values or nests deeply is refused
 * before jansson builds its tree. */
static void test_hostile_counts(void **state)
{
	const size_t n = XO_SPEC_LAYERS_MAX + 1;
	char *text = malloc(40 * n + 64), *p = text, *spec = NULL;
	struct xo_model_spec s;
	struct timespec t0, t1;
	double secs;

	(void)state;
	assert_non_null(text);
	p += sprintf(p, "input 4\n");
	for (size_t i = 0; i < n - 1; i++)
		p += sprintf(p, "activation name=a%zu activation=relu\n", i);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(xo_spec_parse(text, "many.model", &s), XO_OK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	print_message("%d layers parsed in %.3f s\n", s.nlayers, secs);
	assert_int_equal(s.nlayers, XO_SPEC_LAYERS_MAX);
	xo_spec_free(&s);
	assert_true(secs < 1.0);
	sprintf(p, "activation name=a7 activation=relu\n");
	assert_int_not_equal(xo_spec_parse(text, "many.model", &s), XO_OK);
	print_message("refused: %s\n", xo_last_error());
	assert_non_null(strstr(xo_last_error(), "more than 10000 layers"));
	sprintf(p, "activation name=a_last activation=relu\n");
	assert_int_not_equal(xo_spec_parse(text, "many.model", &s), XO_OK);
	assert_non_null(strstr(xo_last_error(), "more than 10000 layers"));
	free(text);

	/* the same count as a Keras config */
	text = malloc(100 * n + 256);
	assert_non_null(text);
	p = text + sprintf(text, "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [");
	for (size_t i = 0; i < n + 1; i++)
		p += sprintf(p, "%s{\"class_name\": \"Activation\", \"config\": {\"name\": "
		                "\"a%zu\", \"activation\": \"relu\"}}", i ? "," : "", i);
	sprintf(p, "]}}");
	assert_int_not_equal(xo_keras_config_to_spec(text, strlen(text), "many.keras", &spec), XO_OK);
	print_message("refused: %s\n", xo_last_error());
	assert_non_null(strstr(xo_last_error(), "more than the limit of 10000"));
	assert_null(spec);
	free(text);

	/* "x": [[],[],...] 1.5 M times (4.5 MB of text, under the byte limit) */
	text = malloc(3 * 1500000 + 256);
	assert_non_null(text);
	p = text + sprintf(text, "{\"class_name\": \"Sequential\", \"x\": [");
	for (size_t i = 0; i < 1500000; i++)
		p += sprintf(p, "%s[]", i ? "," : "");
	sprintf(p, "]}");
	assert_int_not_equal(xo_keras_config_to_spec(text, strlen(text), "bomb.keras", &spec), XO_OK);
	print_message("refused: %s\n", xo_last_error());
	assert_non_null(strstr(xo_last_error(), "more than 1000000 values"));
	/* nested 100 deep */
	p = text + sprintf(text, "{\"class_name\": \"Sequential\", \"x\": ");
	for (int i = 0; i < 100; i++)
		*p++ = '[';
	for (int i = 0; i < 100; i++)
		*p++ = ']';
	sprintf(p, "}");
	assert_int_not_equal(xo_keras_config_to_spec(text, strlen(text), "deep.keras", &spec), XO_OK);
	print_message("refused: %s\n", xo_last_error());
	assert_non_null(strstr(xo_last_error(), "nests deeper than 64"));
	free(text);
}

/* Hard links to one dataset store its values once: a config declaring 240
 * parameters over 24 stored values, with the kernel hard-linked 20 more
 * times (420 values more if each link counted), is refused; and the default
 * parameter limit is 2^25 (a spec declaring 2^25 + 8192 is refused). */
static void test_hostile_hardlinks(void **state)
{
	char path[512], *text = NULL;
	hid_t f;

	(void)state;
	make_model("hardlinks.h5", NULL, 30, 7, H_PLAIN, path, sizeof(path));
	f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	assert_true(f >= 0);
	for (int i = 0; i < 20; i++) {
		char name[64];

		snprintf(name, sizeof(name), "copy%d", i);
		assert_true(H5Lcreate_hard(f, "model_weights/dense/dense/kernel:0", f, name,
		                           H5P_DEFAULT, H5P_DEFAULT) >= 0);
	}
	assert_true(H5Fclose(f) >= 0);
	assert_int_equal(xo_keras_spec_text(path, &text), XO_EFORMAT);
	print_message("refused: %s\n", xo_last_error());
	assert_non_null(strstr(xo_last_error(), "declares 240 parameters"));
	assert_non_null(strstr(xo_last_error(), "stores 24 weight values"));
	assert_null(text);
	{
		struct xo_backend *be = ref_backend();
		struct xo_model *m = NULL;

		assert_int_equal(xo_model_open_string("input 4096\ndense units=8192\n", "big.model",
		                                      be, 1, &m),
		                 XO_EFORMAT);
		print_message("refused: %s\n", xo_last_error());
		assert_non_null(strstr(xo_last_error(), "the limit of 33554432"));
		xo_backend_close(be);
	}
}

/* A .keras archive's weights: xo summary's reader (the architecture alone)
 * never extracts them, so junk there does not matter to it; and a weights
 * member larger than the parameter limit's bytes plus 64 MiB (200 MiB of
 * deflated zeros, 200 KB in the archive) is refused before extraction. */
static void test_hostile_weights_member(void **state)
{
	char junk[512], path[512], *text = NULL;
	FILE *f;
	int fd;

	(void)state;
	tmp_path(junk, sizeof(junk), "junk.bin");
	f = fopen(junk, "wb");
	assert_non_null(f);
	fputs("not an HDF5 file at all", f);
	fclose(f);
	make_keras("junkw.keras", junk, path, sizeof(path));
	assert_int_equal(xo_spec_read_architecture(path, &text), XO_OK);
	assert_non_null(strstr(text, "dense"));
	free(text);
	text = NULL;
	assert_int_not_equal(xo_spec_read_file(path, &text), XO_OK);
	print_message("refused: %s\n", xo_last_error());
	assert_null(text);

	fd = open(junk, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, INT64_C(200) << 20), 0);
	close(fd);
	make_keras("bigw.keras", junk, path, sizeof(path));
	assert_int_not_equal(xo_spec_read_file(path, &text), XO_OK);
	print_message("refused: %s\n", xo_last_error());
	assert_non_null(strstr(xo_last_error(), "model.weights.h5 is larger than the limit"));
	assert_null(text);
	remove(junk);
}

static void test_hostile_values(void **state)
{
	char path[512];

	(void)state;
	make_model("nan.h5", NULL, 3, 7, H_NAN, path, sizeof(path));
	assert_refused(path, (const char *const[]){"layer 'dense'", "kernel", "NaN at index 4",
	                                           NULL});
	make_model("f64.h5", NULL, 3, 7, H_F64_HUGE, path, sizeof(path));
	assert_refused(path, (const char *const[]){"layer 'dense'", "kernel",
	                                           "beyond-float32 value at index 4", NULL});
	/* a variable present in another type is named, not counted as missing */
	make_model("int_kernel.h5", NULL, 3, 7, H_INT_KERNEL, path, sizeof(path));
	assert_refused(path, (const char *const[]){"dataset 'model_weights/dense/dense/kernel:0' "
	                                           "is not floating point",
	                                           NULL});
}

/* A kernel stored chunked, compressed or checksummed (what h5repack or
 * h5py's compression= makes of a Keras file) loads with the same values
 * and predicts the same bits as the plain file; a filter libhdf5 lacks is
 * named; chunks never written are still no values. */
static void test_hostile_chunked(void **state)
{
	static const enum how hows[] = {H_GZIP, H_SHUF_F32, H_EDGE_CHUNK};
	static const char *const names[] = {"gzip.h5", "shuf_f32.h5", "edge_chunk.h5"};
	struct xo_backend *be = ref_backend();
	struct xo_model *m;
	char path[512];
	float x[2 * 7], want[2 * 3], got[2 * 3];

	(void)state;
	for (int i = 0; i < 14; i++)
		x[i] = 0.25f * (float)(i % 5) - 0.5f;
	make_model("plain.h5", NULL, 3, 7, H_PLAIN, path, sizeof(path));
	if (xo_model_open(path, be, 4, &m) || xo_model_predict(m, x, 2, 2, want))
		fail_msg("%s: %s", path, xo_last_error());
	xo_model_close(m);
	for (int k = 0; k < 3; k++) {
		make_model(names[k], NULL, 3, 7, hows[k], path, sizeof(path));
		if (xo_model_open(path, be, 4, &m))
			fail_msg("%s refused: %s", path, xo_last_error());
		if (xo_model_predict(m, x, 2, 2, got))
			fail_msg("%s: %s", path, xo_last_error());
		assert_memory_equal(got, want, sizeof(want));
		xo_model_close(m);
	}
	xo_backend_close(be);
	make_model("odd_filter.h5", NULL, 3, 7, H_ODD_FILTER, path, sizeof(path));
	assert_refused(path, (const char *const[]){"model_weights/dense/dense/kernel:0",
	                                           "HDF5 filter 32123 (odd filter)",
	                                           "cannot decode", NULL});
	make_model("chunk_hole.h5", NULL, 3, 7, H_CHUNK_HOLE, path, sizeof(path));
	/* the kernel counts as no stored values: only the bias's 3 are */
	assert_refused(path, (const char *const[]){"the file stores 3 weight values", NULL});
}

static void test_hostile_contained(void **state)
{
	char path[512];
	struct timespec a, b;

	(void)state;
	make_model("plain.h5", NULL, 3, 7, H_PLAIN, path, sizeof(path));
	setenv("XO_HDF5_READER_FAULT", "segv", 1);
	assert_refused(path, (const char *const[]){"HDF5 reader crashed (signal 11)", NULL});
	setenv("XO_HDF5_READER_FAULT", "garbage", 1);
	assert_refused(path, (const char *const[]){"HDF5 reader", NULL});
	/* a hijacked reader cannot run a program: its seccomp filter (x86-64,
	 * aarch64) answers execve with EPERM */
#if defined(__x86_64__) || defined(__aarch64__)
	setenv("XO_HDF5_READER_FAULT", "exec", 1);
	assert_refused(path, (const char *const[]){
	                         "cannot run a program from the reader: Operation not permitted",
	                         NULL});
#endif
	setenv("XO_HDF5_READER_FAULT", "spin", 1);
	setenv("XO_HDF5_DEADLINE_S", "1", 1);
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_refused(path, (const char *const[]){"timed out after 1 s", NULL});
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true((double)(b.tv_sec - a.tv_sec) < 5);
	unsetenv("XO_HDF5_READER_FAULT");
	unsetenv("XO_HDF5_DEADLINE_S");
}

/* Files the whole-file fuzz targets found (fuzz/regress/): one on which
 * libhdf5 1.10.8 never returns, one on which it takes seconds and
 * gigabytes, one on which it reads outside its heap
 * (valgrind: an invalid read in H5Aexists; a SIGSEGV under the fuzz build's
 * allocator). Each is one line, the hangs at the deadline. */
static void test_hostile_libhdf5_found(void **state)
{
	static const char *const hangs[] = {"keras_h5/libhdf5-hang-a.h5",
	                                    "keras_h5/libhdf5-hang-b.h5"};
	struct xo_backend *be = ref_backend();
	struct xo_model *m;
	char path[512];

	(void)state;
	setenv("XO_HDF5_DEADLINE_S", "2", 1);
	/* b loops in libhdf5 (H5C_protect under H5HG_read, reading the vlen
	 * model_config) for ever; a makes it allocate 1.9 GB for that string
	 * and take about 2 s, so it ends either way */
	snprintf(path, sizeof(path), "%s/%s", XO_FUZZ_REGRESS, hangs[1]);
	assert_refused(path, (const char *const[]){"HDF5 reader timed out after 2 s", NULL});
	snprintf(path, sizeof(path), "%s/%s", XO_FUZZ_REGRESS, hangs[0]);
	assert_refused(path, (const char *const[]){NULL});
	snprintf(path, sizeof(path), "%s/seed.keras", XO_KERAS_DIR);
	assert_int_equal(xo_model_open(path, be, 4, &m), XO_OK);
	snprintf(path, sizeof(path), "%s/keras_weights/libhdf5-segv-a.weights.h5", XO_FUZZ_REGRESS);
	assert_int_not_equal(xo_model_load_weights(m, path), XO_OK);
	print_message("refused: %s\n", xo_last_error());
	assert_non_null(strstr(xo_last_error(), path));
	assert_null(strchr(xo_last_error(), '\n'));
	xo_model_close(m);
	unsetenv("XO_HDF5_DEADLINE_S");
	xo_backend_close(be);
}

/* Truncations and byte flips of every fixture kind: a model, or one line. */
static void test_hostile_corrupt(void **state)
{
	static const char *const fixtures[] = {"seed.h5", "seed.keras", "seed.weights.h5",
	                                       "seed.keras2_weights.h5"};
	struct xo_backend *be = ref_backend();
	int refused = 0, opened = 0;

	(void)state;
	setenv("XO_HDF5_DEADLINE_S", "10", 1);
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		char src[512], path[512], spec[512];
		FILE *f;
		long len;
		char *buf;

		snprintf(src, sizeof(src), "%s/%s", XO_KERAS_DIR, fixtures[i]);
		snprintf(spec, sizeof(spec), "%s/seed.keras", XO_KERAS_DIR);
		f = fopen(src, "rb");
		assert_non_null(f);
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		rewind(f);
		buf = malloc((size_t)len);
		assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
		fclose(f);
		tmp_path(path, sizeof(path), "corrupt.bin");
		for (int k = 0; k < 24; k++) {
			struct xo_model *m = NULL;
			long n = len;
			enum xo_status st;
			unsigned x = 2654435761u * (unsigned)(k + 1);

			f = fopen(path, "wb");
			assert_non_null(f);
			if (k < 8) { /* truncated */
				n = len * (k + 1) / 9;
				fwrite(buf, 1, (size_t)n, f);
			} else { /* 16 bytes flipped */
				char *c = malloc((size_t)len);

				memcpy(c, buf, (size_t)len);
				for (int j = 0; j < 16; j++) {
					x = x * 1103515245u + 12345u;
					c[(x >> 8) % (unsigned)len] ^= (char)(1 + (x & 0x7f));
				}
				fwrite(c, 1, (size_t)len, f);
				free(c);
			}
			fclose(f);
			if (strstr(fixtures[i], "weights")) {
				st = xo_model_open(spec, be, 4, &m);
				assert_int_equal(st, XO_OK);
				st = xo_model_load_weights(m, path);
			} else {
				st = xo_model_open(path, be, 4, &m);
			}
			if (st) {
				assert_null(strchr(xo_last_error(), '\n'));
				assert_non_null(strstr(xo_last_error(), "corrupt.bin"));
				refused++;
			} else {
				opened++;
			}
			xo_model_close(m);
		}
		free(buf);
	}
	print_message("corrupt files: %d refused, %d opened\n", refused, opened);
	unsetenv("XO_HDF5_DEADLINE_S");
	xo_backend_close(be);
}

/* A byte of a stored member changed after zipping (bit rot, tampering):
 * Keras writes .keras members stored, so their CRC-32 is the only check of
 * the bytes, and Python's zipfile (so Keras) refuses the file. One byte in
 * the middle of model.weights.h5 (the weights' raw data) and one letter of
 * config.json: each refused naming the member, never loaded. */
static void test_hostile_member_crc(void **state)
{
	static const char *const members[] = {"model.weights.h5", "config.json"};
	struct xo_backend *be = ref_backend();
	char src[512], path[512];
	FILE *f;
	long len;
	char *buf;

	(void)state;
	snprintf(src, sizeof(src), "%s/seed.keras", XO_KERAS_DIR);
	f = fopen(src, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		zip_t *z;
		zip_stat_t zs;
		zip_file_t *zf;
		char head[64], want[128];
		const char *at = NULL;
		struct xo_model *m = NULL;
		int err = 0;
		long off;

		/* the member's bytes as stored: found in the archive by its first 64 */
		z = zip_open(src, ZIP_RDONLY, &err);
		assert_non_null(z);
		assert_int_equal(zip_stat(z, members[i], 0, &zs), 0);
		assert_int_equal(zs.comp_method, ZIP_CM_STORE);
		zf = zip_fopen(z, members[i], 0);
		assert_non_null(zf);
		assert_int_equal(zip_fread(zf, head, sizeof(head)), (zip_int64_t)sizeof(head));
		zip_fclose(zf);
		zip_close(z);
		for (long k = 0; k + (long)sizeof(head) <= len && !at; k++)
			if (!memcmp(buf + k, head, sizeof(head)))
				at = buf + k;
		assert_non_null(at);
		off = (long)(at - buf) + (long)(zs.size / 2);
		buf[off] ^= 0x01;
		tmp_path(path, sizeof(path), "crc.keras");
		f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(buf, 1, (size_t)len, f), (size_t)len);
		fclose(f);
		buf[off] ^= 0x01;
		assert_int_not_equal(xo_model_open(path, be, 4, &m), XO_OK);
		snprintf(want, sizeof(want), "crc.keras: its %s fails its CRC-32 check", members[i]);
		if (!strstr(xo_last_error(), want))
			fail_msg("'%s' does not say '%s'", xo_last_error(), want);
		xo_model_close(m);
	}
	free(buf);
	xo_backend_close(be);
}

/* The 16-bit little-endian value at p. */
static unsigned le16(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

/* A member's zip flags beyond what Keras writes: the encrypted bit (0) of
 * config.json, then of model.weights.h5, set in the central directory and
 * the local header, as Python's zipfile reads them; it refuses both
 * ("password required"), so xo refuses them by name, never as a corrupt
 * archive. And a member compressed with a method Python's zipfile cannot
 * read (xz), where this libzip can write one: refused, not read. */
static void test_hostile_member_flags(void **state)
{
	static const char *const members[] = {"config.json", "model.weights.h5"};
	struct xo_backend *be = ref_backend();
	char src[512], path[512], want[160];
	unsigned char *buf;
	FILE *f;
	long len;

	(void)state;
	snprintf(src, sizeof(src), "%s/seed.keras", XO_KERAS_DIR);
	f = fopen(src, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		unsigned char *copy = malloc((size_t)len);
		int hits = 0;

		memcpy(copy, buf, (size_t)len);
		/* every central directory entry of the member, and its local header */
		for (long k = 0; k + 46 <= len; k++) {
			unsigned nlen;
			uint32_t off;

			if (memcmp(copy + k, "PK\x01\x02", 4))
				continue;
			nlen = le16(copy + k + 28);
			off = (uint32_t)le16(copy + k + 42) | (uint32_t)le16(copy + k + 44) << 16;
			if (k + 46 + nlen > len || nlen != strlen(members[i]) ||
			    memcmp(copy + k + 46, members[i], nlen) || (long)off + 30 > len)
				continue;
			copy[k + 8] |= 1;
			assert_memory_equal(copy + off, "PK\x03\x04", 4);
			copy[off + 6] |= 1;
			hits++;
		}
		assert_int_equal(hits, 1);
		tmp_path(path, sizeof(path), "encrypted.keras");
		f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(copy, 1, (size_t)len, f), (size_t)len);
		fclose(f);
		free(copy);
		snprintf(want, sizeof(want), "member '%s' is encrypted (zip flag bit 0)", members[i]);
		assert_refused(path, (const char *const[]){want, "password", NULL});
	}
	free(buf);
	if (zip_compression_method_supported(ZIP_CM_XZ, 1)) {
		zip_t *z;
		int err = 0;

		tmp_path(path, sizeof(path), "xz.keras");
		copy_file(src, path);
		z = zip_open(path, 0, &err);
		assert_non_null(z);
		assert_int_equal(zip_set_file_compression(z, zip_name_locate(z, "config.json", 0),
		                                          ZIP_CM_XZ, 0),
		                 0);
		assert_int_equal(zip_close(z), 0);
		assert_refused(path, (const char *const[]){"member 'config.json' uses compression "
		                                           "method 95 (xz), which Keras",
		                                           NULL});
	} else {
		print_message("this libzip writes no xz: the compression method case skipped\n");
	}
	xo_backend_close(be);
}

/* A .keras of pool_cfg whose model.weights.h5 holds, as Keras 3 writes
 * for layers without variables, empty layers/<kind>/vars groups (groups
 * true) or nothing at all. */
static void make_weightless_keras(const char *name, bool groups, char *path, size_t cap)
{
	char h5[512];
	hid_t f, g;
	zip_t *z;
	int err = 0;

	tmp_path(h5, sizeof(h5), "weightless.weights.h5");
	f = H5Fcreate(h5, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	assert_true(f >= 0);
	if (groups) {
		static const char *const paths[] = {"layers", "layers/max_pooling1d",
		                                    "layers/max_pooling1d/vars", "layers/flatten",
		                                    "layers/flatten/vars"};

		for (int i = 0; i < 5; i++) {
			g = H5Gcreate2(f, paths[i], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
			assert_true(g >= 0);
			H5Gclose(g);
		}
	}
	H5Fclose(f);
	tmp_path(path, cap, name);
	z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	assert_non_null(z);
	assert_true(zip_file_add(z, "config.json",
	                         zip_source_buffer(z, pool_cfg, strlen(pool_cfg), 0), 0) >= 0);
	assert_true(zip_file_add(z, "model.weights.h5", zip_source_file(z, h5, 0, -1), 0) >= 0);
	assert_int_equal(zip_close(z), 0);
}

static void test_weightless(void **state)
{
	char path[512];
	struct xo_backend *be = ref_backend();
	struct xo_model *m;
	float x[16], y[8];

	(void)state;
	make_model("pool.h5", pool_cfg, 0, 0, H_WEIGHTLESS, path, sizeof(path));
	if (xo_model_open(path, be, 4, &m))
		fail_msg("model without weights refused: %s", xo_last_error());
	assert_int_equal(xo_model_param_count(m), 0);
	assert_int_equal(xo_model_classes(m), 8);
	for (int i = 0; i < 16; i++)
		x[i] = (float)((i * 7) % 5);
	if (xo_model_predict(m, x, 1, 1, y))
		fail_msg("predict: %s", xo_last_error());
	/* max over pairs of steps, per channel: x[t][c] = x[2t + c] */
	for (int t = 0; t < 4; t++)
		for (int c = 0; c < 2; c++)
			assert_float_equal(y[t * 2 + c], fmaxf(x[(2 * t) * 2 + c], x[(2 * t + 1) * 2 + c]),
			                   0);
	/* its (empty) weights saved and read back, as xo import does */
	tmp_path(path, sizeof(path), "pool.weights");
	if (xo_model_save_weights(m, path) || xo_model_load_weights(m, path))
		fail_msg("weights of a model without weights: %s", xo_last_error());
	xo_model_close(m);
	for (int k = 0; k < 2; k++) { /* the same as a .keras */
		make_weightless_keras(k ? "pool.keras" : "pool_bare.keras", k, path, sizeof(path));
		if (xo_model_open(path, be, 4, &m))
			fail_msg("%s: %s", path, xo_last_error());
		assert_int_equal(xo_model_param_count(m), 0);
		xo_model_close(m);
	}
	xo_backend_close(be);
}

static int setup(void **state)
{
	(void)state;
	snprintf(g_tmp, sizeof(g_tmp), "/tmp/xo-keras-hostile-XXXXXX");
	return mkdtemp(g_tmp) ? 0 : -1;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	(void)state;
	if (getenv("XO_TEST_KEEP")) /* the files, to look at */
		return 0;
	/* depth first, without following links: a planted link is removed,
	 * never what it points to */
	return nftw(g_tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hostile_attributes), cmocka_unit_test(test_hostile_indirection),
	    cmocka_unit_test(test_hostile_sizes),      cmocka_unit_test(test_hostile_values),
	    cmocka_unit_test(test_hostile_contained),  cmocka_unit_test(test_hostile_corrupt),
	    cmocka_unit_test(test_hostile_member_crc),
	    cmocka_unit_test(test_hostile_member_flags),
	    cmocka_unit_test(test_hostile_libhdf5_found),
	    cmocka_unit_test(test_weightless),
	    cmocka_unit_test(test_hostile_counts),
	    cmocka_unit_test(test_hostile_hardlinks),
	    cmocka_unit_test(test_hostile_weights_member),
	    cmocka_unit_test(test_hostile_chunked),
	};

	/* one test by name (to show each failing alone on an older build) */
	if (getenv("XO_TEST_FILTER"))
		cmocka_set_test_filter(getenv("XO_TEST_FILTER"));
	return cmocka_run_group_tests(tests, setup, teardown);
}
