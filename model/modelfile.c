/*
 * modelfile.c - a model's files: the spec (a spec text file, or a Keras
 * .keras / .h5 whose config maps to one), and its weights (a .npy directory
 * written as one checkpoint, or a Keras .weights.h5 / .h5 / .keras). It
 * dispatches by what the file is (filekind.c) to the formats (keras.c,
 * checkpoint.c, npy.c) and reaches the runtime (model.c) through its
 * functions only, so neither model.c nor keras.c needs the other's callers.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model_internal.h"

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
	st = xo_model_open_string(text, spec_path, be, max_batch, out);
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
 * A load starts the copy from the model's parameters, so the values no
 * file holds (a Normalization's given mean and variance, which Keras keeps
 * as constants, not variables) stay as the model set them. Weights that
 * are NaN or Inf are never written: a diverged model must not replace a
 * good checkpoint. */
static enum xo_status weight_files(struct xo_model *m, const char *dir, bool save)
{
	int64_t np = xo_model_param_count(m);
	/* a model without weights (pooling, flatten) has no params tensor */
	float *w = malloc((size_t)(np ? np : 1) * sizeof(*w));
	struct xo_ckpt_writer cw = {0};
	enum xo_status st = XO_OK;

	if (!w)
		return xo_error(XO_ENOMEM, "model: out of memory");
	st = xo_model_params_host(m, w, false);
	if (save) {
		for (int64_t i = 0; !st && i < np; i++)
			if (!isfinite(w[i]))
				st = xo_error(XO_EINVAL,
				              "%s: not saved: weight %" PRId64 " is %s (training "
				              "diverged); the directory is left as it was",
				              dir, i, isnan(w[i]) ? "NaN" : "Inf");
		if (!st)
			st = xo_ckpt_begin(&cw, dir);
	}
	for (int i = 0; !st && i < xo_model_layer_count(m); i++) {
		struct xo_layer_var v[XO_LAYER_VARS_MAX];
		int nv = xo_model_layer_vars(m, i, v);

		/* <layer>.<variable>.npy with Keras's variable names: kernel,
		 * bias; gamma, beta, moving_mean, moving_variance */
		for (int k = 0; !st && k < nv; k++) {
			if (v[k].keras_int) /* no values in xo (Normalization's count) */
				continue;
			if (save)
				st = weight_file_add(&cw, xo_model_layer_spec(m, i)->name, v[k].name, v[k].ndim,
				                     v[k].dim, w + v[k].off);
			else
				st = weight_file_read(dir, xo_model_layer_spec(m, i)->name, v[k].name,
				                      v[k].ndim, v[k].dim, w + v[k].off);
			for (int64_t e = 0; !st && !save && v[k].nonneg && e < v[k].count; e++)
				if (!(w[v[k].off + e] >= 0.0f)) /* NaN too */
					st = xo_error(XO_EFORMAT,
					              "%s: %s.%s.npy holds %g at index %" PRId64
					              " (a variance must be >= 0)",
					              dir, xo_model_layer_spec(m, i)->name, v[k].name,
					              (double)w[v[k].off + e], e);
		}
	}
	if (save) {
		if (!st)
			st = xo_ckpt_commit(&cw, xo_model_iterations(m));
		else
			xo_ckpt_abort(&cw);
	}
	/* loaded weights start a fresh optimizer (as `xo train --weights`) */
	if (!st && !save)
		st = xo_model_params_host(m, w, true);
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
	if (!xo_model_param_count(m))
		return XO_OK;
	return weight_files(m, dir, false);
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

