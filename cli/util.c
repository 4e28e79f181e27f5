/*
 * util.c - helpers shared by the `xo` subcommands: the usage-error line,
 * whole-number option values, JSON string output and label arrays. Here,
 * not in main.c, so the subcommands never call back into the dispatcher.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd.h"
#include "perfdb.h"
#include "xo.h"
#include "xo/model_spec.h"

int xo_usage_error(const char *cmd, const char *fmt, ...)
{
	char raw[1024];
	va_list ap;

	/* values from the command line may hold control bytes: xo_error
	 * escapes them, so the message stays one printable line */
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	xo_error(XO_EINVAL, "xo %s: %s", cmd, raw);
	fprintf(stderr, "%s\n", xo_last_error());
	return 2;
}

bool xo_cli_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !((*s >= '0' && *s <= '9') || *s == '-'))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool xo_cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

void xo_cli_json_fstring(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void xo_cli_json_string(const char *s)
{
	xo_cli_json_fstring(stdout, s);
}

void xo_cli_json_params(FILE *f, const char *line)
{
	char buf[1024], *tok, *save = NULL;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	fputc('{', f);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = '\0';
		fprintf(f, "%s", n++ ? ", " : "");
		xo_cli_json_fstring(f, tok);
		fputs(": ", f);
		xo_cli_json_value(f, eq + 1);
	}
	fputc('}', f);
}

void xo_cli_json_value(FILE *f, const char *v)
{
	char *end;

	errno = 0;
	(void)strtod(v, &end);
	/* JSON numbers have no leading '+', no hex, no inf/nan: only digits,
	 * sign, point and exponent pass, and a leading '.' or '-.' does not */
	if (*v && !*end && !errno && strspn(v, "0123456789+-.eE") == strlen(v) && *v != '+' &&
	    *v != '.' && strncmp(v, "-.", 2))
		fputs(v, f);
	else
		xo_cli_json_fstring(f, v);
}

void xo_cli_cpu_model(char *buf, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, size, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			c++;
			while (*c == ' ')
				c++;
			c[strcspn(c, "\n")] = 0;
			snprintf(buf, size, "%s", c);
			break;
		}
	}
	fclose(f);
}

/* Labels: one-hot y[n][classes] (float32, or any integer or bool type,
 * which Keras casts), or class ids y[n] (Keras's sparse labels: float32
 * whole numbers, or any integer or bool type), range-checked and converted
 * to one-hot. Anything else is refused naming the sample. */
int xo_cli_labels_one_hot(const char *cmd, const struct xo_npy *y, int64_t n, int64_t classes,
                          const char *path, const char *need, float **out)
{
	float *oh;

	if (y->ndim == 2 && y->dim[0] == n && y->dim[1] == classes) {
		oh = y->data;
		if (y->is_int) { /* 0 and 1 stay exact, no other integer becomes either */
			oh = malloc(sizeof(*oh) * (size_t)(n * classes + 1));
			if (!oh)
				return xo_usage_error(cmd, "out of memory");
			for (int64_t i = 0; i < n * classes; i++)
				oh[i] = (float)y->ints[i];
		}
		if (xo_labels_check_one_hot(oh, n, classes, path, need)) {
			if (oh != y->data)
				free(oh);
			return xo_usage_error(cmd, "%s", xo_last_error());
		}
		*out = oh;
		return 0;
	}
	if (y->ndim != 1 || y->dim[0] != n)
		return xo_usage_error(cmd,
		                      "%s: shape %s does not fit: need (%" PRId64 ", %" PRId64
		                      ") one-hot float32 or (%" PRId64 ",) class ids",
		                      path, xo_npy_shape_str(y), n, classes, n);
	oh = calloc((size_t)(n * classes), sizeof(*oh));
	if (!oh)
		return xo_usage_error(cmd, "out of memory");
	for (int64_t i = 0; i < n; i++) {
		int64_t c;

		if (y->is_int) {
			c = y->ints[i];
			if (c < 0 || c >= classes) {
				free(oh);
				return xo_usage_error(cmd,
				                      "%s: label %" PRId64 " of sample %" PRId64
				                      " is not a class id in 0..%" PRId64,
				                      path, c, i, classes - 1);
			}
		} else {
			float f = y->data[i];

			if (!(f >= 0.0f && f < (float)classes) || f != floorf(f)) {
				free(oh);
				return xo_usage_error(cmd,
				                      "%s: label %g of sample %" PRId64
				                      " is not a class id in 0..%" PRId64,
				                      path, (double)f, i, classes - 1);
			}
			c = (int64_t)f;
		}
		oh[i * classes + c] = 1.0f;
	}
	*out = oh;
	return 0;
}

int xo_cli_labels(const char *cmd, const struct xo_npy *y, int64_t n, const struct xo_model *m,
                  const char *path, float **out)
{
	const struct xo_compile *c = xo_model_compile(m);
	int64_t classes = xo_model_classes(m), per = xo_model_label_width(m);
	bool fits;
	float *v;

	if (c->loss == XO_LOSS_CATEGORICAL_CROSSENTROPY)
		return xo_cli_labels_one_hot(cmd, y, n, classes, path, NULL, out);
	/* (n,) or (n, per): per is 1 for sparse ids, else the classes */
	fits = y->ndim >= 1 && y->dim[0] == n &&
	       ((y->ndim == 1 && per == 1) || (y->ndim == 2 && y->dim[1] == per) ||
	        (c->loss == XO_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY && y->ndim == 2 &&
	         y->dim[1] == 1) ||
	        (y->ndim == 1 && classes == 1));
	if (!fits)
		return xo_usage_error(cmd,
		                      "%s: shape %s does not fit: %s needs %s", path,
		                      xo_npy_shape_str(y), xo_loss_name(c->loss),
		                      per == 1 && c->loss == XO_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY
		                          ? "class ids (n,)"
		                          : "(n, outputs) float32 rows");
	if (!y->is_int) {
		v = y->data;
	} else {
		v = malloc(sizeof(*v) * (size_t)(n * per));
		if (!v)
			return xo_usage_error(cmd, "out of memory");
		for (int64_t i = 0; i < n * per; i++) {
			int64_t k = y->ints[i];

			/* ids beyond 2^24 are not whole floats: say so, not
			 * round them onto another class */
			if (k < -(INT64_C(1) << 24) || k > (INT64_C(1) << 24)) {
				free(v);
				return xo_usage_error(cmd,
				                      "%s: label %" PRId64 " of sample %" PRId64
				                      " is not a class id in 0..%" PRId64 " (%s)",
				                      path, k, i / per, classes - 1,
				                      xo_loss_name(c->loss));
			}
			v[i] = (float)k;
		}
	}
	if (xo_model_check_labels(m, v, n, path)) {
		if (v != y->data)
			free(v);
		return xo_usage_error(cmd, "%s", xo_last_error());
	}
	*out = v;
	return 0;
}

bool xo_cli_gpu_requested(const char *cmd, const char *spec)
{
	struct xo_backend *be = NULL;

	if (!spec || strncasecmp(spec, "gpu", 3) || (spec[3] && spec[3] != ':'))
		return false;
	if (xo_backend_open("cl", &be)) {
		fprintf(stderr,
		        "xo %s: --device %s: a GPU is measured through OpenCL (--device cl), and no "
		        "OpenCL device opens here (%s): install ocl-icd-libopencl1 and %s\n",
		        cmd, spec, xo_last_error(), XO_PERF_GPU_INSTALL);
	} else if (xo_perf_cl_on_cpu(xo_backend_describe(be))) {
		fprintf(stderr, "xo %s: --device %s: %s; %s\n", cmd, spec, XO_PERF_NO_GPU,
		        XO_PERF_GPU_INSTALL);
	} else {
		fprintf(stderr,
		        "xo %s: --device %s: a GPU is measured as --device cl (here: %s; `xo devices` "
		        "lists cl:PLATFORM:DEVICE)\n",
		        cmd, spec, xo_backend_describe(be));
	}
	xo_backend_close(be);
	return true;
}

/* The samples a file holds for input q: its first axis, when the others
 * are q's shape or its size flat (up to (n, H, W, C)); else -1. Only the
 * product matching is not enough: a (n, 4, 5) file for a (5, 4) input, or
 * two same-size inputs given in the wrong order, would be read as the other
 * shape and give wrong answers where Keras refuses the call. */
static int64_t input_rows(const struct xo_npy *a, const struct xo_input_spec *q)
{
	int64_t want[3], per = q->len * q->w * q->ch;
	int rank = q->rank >= 1 && q->rank <= 3 ? q->rank : 1;

	if (a->ndim < 2 || a->ndim > 4 || a->dim[0] < 1)
		return -1;
	if (a->ndim == 2 && a->dim[1] == per)
		return a->dim[0];
	if (a->ndim - 1 != rank)
		return -1;
	want[0] = rank == 1 ? per : q->len;
	want[1] = rank == 3 ? q->w : q->ch;
	want[2] = q->ch;
	for (int i = 1; i < a->ndim; i++)
		if (a->dim[i] != want[i - 1])
			return -1;
	return a->dim[0];
}

int64_t xo_cli_input_rows(const struct xo_npy *a, const struct xo_model *m, int k)
{
	return input_rows(a, xo_model_input_spec(m, k));
}

/* The refusal of a file input_rows refused for input q of a model of nin
 * inputs. */
static int input_mismatch(const char *cmd, const char *path, const struct xo_npy *a,
                          const struct xo_input_spec *q, int nin)
{
	int64_t per = q->len * q->w * q->ch;
	char what[XO_LAYER_NAME_MAX + 16], want[96];

	if (nin > 1)
		snprintf(what, sizeof(what), "input '%s'", q->name);
	else
		snprintf(what, sizeof(what), "the model input");
	if (q->rank == 3)
		snprintf(want, sizeof(want),
		         "(n, %" PRId64 ", %" PRId64 ", %" PRId64 ") or (n, %" PRId64 ")", q->len, q->w,
		         q->ch, per);
	else if (q->rank == 2)
		snprintf(want, sizeof(want), "(n, %" PRId64 ", %" PRId64 ") or (n, %" PRId64 ")",
		         q->len, q->ch, per);
	else
		snprintf(want, sizeof(want), "(n, %" PRId64 ")", per);
	return xo_usage_error(cmd,
	                      "%s: shape %s does not match %s (%" PRId64
	                      " values per sample, first axis = samples); want %s",
	                      path, xo_npy_shape_str(a), what, per, want);
}

int xo_cli_input_mismatch(const char *cmd, const char *path, const struct xo_npy *a,
                          const struct xo_model *m, int k)
{
	return input_mismatch(cmd, path, a, xo_model_input_spec(m, k), xo_model_input_count(m));
}

int xo_cli_npy_empty(const char *cmd, const char *path, const struct xo_npy *a)
{
	if (a->count > 0)
		return 0;
	return xo_usage_error(cmd,
	                      "%s: shape %s is an empty array (a 0 in its shape): no values, "
	                      "where xo needs at least one sample",
	                      path, xo_npy_shape_str(a));
}

int xo_cli_inputs_read(const char *cmd, const struct xo_input_spec *in, int nin,
                       const char *const *paths, int np, struct xo_npy *parts)
{
	char names[XO_MODEL_INPUTS_MAX * (XO_LAYER_NAME_MAX + 2)];
	size_t used = 0;
	int64_t n = -1;

	names[0] = '\0';
	for (int k = 0; k < nin && used < sizeof(names); k++) {
		int w = snprintf(names + used, sizeof(names) - used, "%s%s", k ? ", " : "",
		                 in[k].name);

		used += w > 0 ? (size_t)w : 0;
	}
	for (int k = 0; k < nin; k++)
		memset(&parts[k], 0, sizeof(parts[k]));
	if (np != nin)
		return xo_usage_error(cmd,
		                      "%d input file%s for a model of %d input%s (%s): one per "
		                      "model input, in its order",
		                      np, np == 1 ? "" : "s", nin, nin == 1 ? "" : "s", names);
	for (int k = 0; k < nin; k++) {
		int64_t rows;

		if (xo_npy_read_inputs(paths[k], &parts[k])) {
			xo_usage_error(cmd, "%s", xo_last_error());
			goto out_free_parts;
		}
		if (xo_cli_npy_empty(cmd, paths[k], &parts[k]))
			goto out_free_parts;
		rows = input_rows(&parts[k], &in[k]);
		if (rows < 1) {
			input_mismatch(cmd, paths[k], &parts[k], &in[k], nin);
			goto out_free_parts;
		}
		if (n >= 0 && rows != n) {
			xo_usage_error(cmd,
			               "%s: %" PRId64 " samples, but %s has %" PRId64
			               " (every input needs one row per sample)",
			               paths[k], rows, paths[0], n);
			goto out_free_parts;
		}
		n = rows;
	}
	return 0;

out_free_parts:
	for (int k = 0; k < nin; k++)
		xo_npy_free(&parts[k]);
	return 2;
}

int xo_cli_inputs_read_model(const char *cmd, const char *model, const char *const *paths,
                             int np, struct xo_npy *parts, int *nin)
{
	struct xo_model_spec spec;
	char *text = NULL;
	int rc;

	if (xo_spec_read_architecture(model, &text) || xo_spec_parse(text, model, &spec)) {
		free(text);
		return xo_usage_error(cmd, "%s", xo_last_error());
	}
	*nin = spec.ninputs;
	rc = xo_cli_inputs_read(cmd, spec.input, spec.ninputs, paths, np, parts);
	xo_spec_free(&spec);
	free(text);
	return rc;
}

/* An attention mask input's bool or integer file to the float keep values
 * the model takes (nonzero keeps: 1, else 0; Keras casts the mask to bool);
 * a bool file for any other input is refused (exit 2). */
static int input_mask_npy(const char *cmd, struct xo_npy *a, const struct xo_input_spec *q,
                          const char *path)
{
	float *f;

	if (a->is_bool && !q->is_mask)
		return xo_usage_error(cmd,
		                      "%s: bool values for input '%s', which is not an attention "
		                      "mask (only a multi_head_attention's attention_mask= input "
		                      "takes bool or integer keep values)",
		                      path, q->name);
	if (!a->is_int || !q->is_mask)
		return 0;
	f = malloc(sizeof(*f) * (size_t)(a->count ? a->count : 1));
	if (!f)
		return xo_usage_error(cmd, "%s: out of memory", path);
	for (int64_t k = 0; k < a->count; k++)
		f[k] = a->ints[k] != 0 ? 1.0f : 0.0f;
	free(a->ints);
	a->ints = NULL;
	a->data = f;
	a->is_int = a->is_bool = false;
	a->itemsize = 4;
	return 0;
}

int xo_cli_inputs_take(const char *cmd, const struct xo_model *m, const char *const *paths,
                       int nread, struct xo_npy *parts, struct xo_npy *x)
{
	int nin = xo_model_input_count(m);
	int64_t n = parts[0].dim[0], off = 0, total = xo_model_input_size(m);
	int rc = 2;

	memset(x, 0, sizeof(*x));
	/* the model opened from the file its inputs were read against */
	if (nin != nread) {
		xo_usage_error(cmd, "the model file changed while it was read (%d inputs, then %d)",
		               nread, nin);
		goto out_free_parts;
	}
	for (int k = 0; k < nin; k++) {
		const struct xo_input_spec *q = xo_model_input_spec(m, k);
		int64_t per = q->len * q->w * q->ch;

		/* the spec they were read against is the model's: checked again
		 * (no I/O) so that no other shape is ever copied */
		if (xo_cli_input_rows(&parts[k], m, k) != n) {
			xo_cli_input_mismatch(cmd, paths[k], &parts[k], m, k);
			goto out_free_parts;
		}
		if (input_mask_npy(cmd, &parts[k], q, paths[k]))
			goto out_free_parts;
		if (xo_model_input_part_npy(m, k, &parts[k], paths[k]) ||
		    xo_data_check_finite(parts[k].data, n, per, paths[k])) {
			xo_usage_error(cmd, "%s", xo_last_error());
			goto out_free_parts;
		}
	}
	if (nin == 1) { /* the one file is x as it is */
		*x = parts[0];
		memset(&parts[0], 0, sizeof(parts[0]));
		return 0;
	}
	x->data = malloc(sizeof(*x->data) * (size_t)(n * total));
	if (!x->data) {
		xo_usage_error(cmd, "out of memory");
		goto out_free_parts;
	}
	for (int k = 0; k < nin; k++) {
		const struct xo_input_spec *q = xo_model_input_spec(m, k);
		int64_t per = q->len * q->w * q->ch;

		for (int64_t i = 0; i < n; i++)
			memcpy(x->data + i * total + off, parts[k].data + i * per,
			       sizeof(*x->data) * (size_t)per);
		off += per;
	}
	x->ndim = 2;
	x->dim[0] = n;
	x->dim[1] = total;
	x->count = n * total;
	x->itemsize = 4;
	rc = 0;
out_free_parts:
	for (int k = 0; k < nin; k++)
		xo_npy_free(&parts[k]);
	return rc;
}

int xo_cli_inputs_join(const char *cmd, const struct xo_model *m, const char *const *paths,
                       int np, struct xo_npy *x)
{
	struct xo_input_spec in[XO_MODEL_INPUTS_MAX];
	struct xo_npy parts[XO_MODEL_INPUTS_MAX];
	int nin = xo_model_input_count(m);

	memset(x, 0, sizeof(*x));
	for (int k = 0; k < nin; k++)
		in[k] = *xo_model_input_spec(m, k);
	if (xo_cli_inputs_read(cmd, in, nin, paths, np, parts))
		return 2;
	return xo_cli_inputs_take(cmd, m, paths, nin, parts, x);
}
