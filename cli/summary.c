/*
 * summary.c - `xo summary --model M [--json]`: the model's layer table as
 * Keras's model.summary() prints it: each layer's name and type, its output
 * shape with the batch as None, its parameter count, and the totals
 * (trainable and non-trainable parameters: BatchNormalization's moving
 * statistics are the non-trainable ones). For the seed model the table
 * is Keras's: 64 + 1568 + 2080 + 396 = 4,108 parameters. Below it, the
 * activation memory a sample takes as the runtime plans it, to predict and
 * to train, beside what a buffer per tensor would take (docs/model.md, "The
 * runtime").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "xo.h"
#include "xo/model_spec.h"

/* "(None, 27, 16)" or "(None, 64)": one sample's shape after the batch. */
static void shape_str(int rank, int64_t len, int64_t w, int64_t ch, char *buf, size_t size)
{
	if (rank == 3)
		snprintf(buf, size, "(None, %" PRId64 ", %" PRId64 ", %" PRId64 ")", len, w, ch);
	else if (rank == 2)
		snprintf(buf, size, "(None, %" PRId64 ", %" PRId64 ")", len, ch);
	else
		snprintf(buf, size, "(None, %" PRId64 ")", ch);
}

/* n with thousands separators, as Keras prints totals ("4,108"). */
/* The name of what a layer takes: an earlier layer's, or the model input's
 * ("input", as the spec's inputs= names it). */
static const char *input_name(const struct xo_model_spec *spec, int j)
{
	return j < 0 ? spec->input[-1 - j].name : spec->layers[j].name;
}

/* The model's inputs (Keras's InputLayers, in order) as JSON objects. */
static void inputs_json(const struct xo_model_spec *spec)
{
	for (int k = 0; k < spec->ninputs; k++) {
		const struct xo_input_spec *q = &spec->input[k];

		printf("%s{\"name\": ", k ? ", " : "");
		xo_cli_json_string(q->name);
		printf(", \"shape\": [null, ");
		if (q->rank >= 2)
			printf("%" PRId64 ", ", q->len);
		if (q->rank == 3)
			printf("%" PRId64 ", ", q->w);
		printf("%" PRId64 "]}", q->ch);
	}
}

/* Their rows of the table, as Keras prints a Functional's InputLayers. */
static void inputs_text(const struct xo_model_spec *spec)
{
	for (int k = 0; k < spec->ninputs; k++) {
		const struct xo_input_spec *q = &spec->input[k];
		char name[XO_LAYER_NAME_MAX + 24], shape[64];

		snprintf(name, sizeof(name), "%s (InputLayer)", q->name);
		shape_str(q->rank, q->len, q->w, q->ch, shape, sizeof(shape));
		if (strlen(name) > 31) { /* too wide for its column: its own line */
			printf(" %s\n", name);
			name[0] = '\0';
		}
		printf(" %-31s %-25s %-10d -\n\n", name, shape, 0);
	}
}

/* The model's memory plan, from the model opened on the reference backend
 * for one sample; false (why: the reason) when it does not open there. */
static bool memory_plan(const char *text, const char *path, struct xo_model_memory *mem,
                        const char **why)
{
	struct xo_backend *be = NULL;
	struct xo_model *m = NULL;
	bool ok = !xo_backend_open("ref", &be) && !xo_model_open_string(text, path, be, 1, &m);

	*why = ok ? NULL : xo_last_error();
	if (ok)
		xo_model_memory_get(m, mem);
	xo_model_close(m);
	xo_backend_close(be);
	return ok;
}

/* Bytes as Keras's summary prints sizes: "16.05 KB". */
static void size_str(int64_t bytes, char *buf, size_t size)
{
	static const char *const unit[] = {"B", "KB", "MB", "GB", "TB"};
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024.0 && u < 4) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, size, "%.2f %s", v, unit[u]);
}

static void memory_text(bool ok, const struct xo_model_memory *mem, const char *why)
{
	char a[32], b[32], c[32], d[32];

	if (!ok) {
		printf("Activation memory: not planned (%s)\n", why);
		return;
	}
	size_str(mem->infer_bytes, a, sizeof(a));
	size_str(mem->infer_unshared, b, sizeof(b));
	size_str(mem->train_bytes, c, sizeof(c));
	size_str(mem->train_unshared, d, sizeof(d));
	printf("Activation memory per sample: %s to predict (%s unshared), %s to train (%s "
	       "unshared)\n",
	       a, b, c, d);
}

static void memory_json(bool ok, const struct xo_model_memory *mem)
{
	if (!ok) {
		printf(", \"activation_bytes_per_sample\": null");
		return;
	}
	printf(", \"activation_bytes_per_sample\": {\"predict\": %" PRId64
	       ", \"predict_unshared\": %" PRId64 ", \"train\": %" PRId64
	       ", \"train_unshared\": %" PRId64 "}",
	       mem->infer_bytes, mem->infer_unshared, mem->train_bytes, mem->train_unshared);
}

/* A layer's parameters as Keras counts its variables: a Normalization
 * given its mean and variance has none (Keras builds them as constants; xo
 * keeps the values as the layer's state), an adapted one also its int32
 * count beside mean and variance. */
static int64_t keras_params(const struct xo_layer_spec *l)
{
	if (l->kind == XO_LAYER_NORMALIZATION)
		return l->norm_given ? 0 : xo_layer_total(l) + 1;
	return xo_layer_total(l);
}

static void commas(int64_t n, char *buf, size_t size)
{
	char digits[32];
	size_t len, used = 0;

	snprintf(digits, sizeof(digits), "%" PRId64, n);
	len = strlen(digits);
	for (size_t i = 0; i < len && used + 1 < size; i++) {
		buf[used++] = digits[i];
		if (digits[i] != '-' && (len - i - 1) % 3 == 0 && i + 1 < len && used + 1 < size)
			buf[used++] = ',';
	}
	buf[used] = '\0';
}

int xo_cmd_summary(int argc, char **argv)
{
	const char *path = NULL;
	bool json = false;
	struct xo_model_spec spec;
	struct xo_model_memory mem;
	int64_t total = 0, trainable = 0;
	char trn[32], non[32];
	const char *why;
	char *text;
	bool planned;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: xo summary --model M [--json]\n"
			       "  the model's layers as Keras's model.summary() prints them: name\n"
			       "  (type), output shape, parameter count, and the totals; then the\n"
			       "  activation memory of a sample as planned, to predict and to train\n");
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--model")) {
			if (i + 1 == argc)
				return xo_usage_error("summary", "--model needs a value");
			if (path)
				return xo_usage_error("summary", "--model given twice");
			path = argv[++i];
		} else {
			return xo_usage_error("summary", "unknown argument '%s' (usage: xo summary "
			                      "--model M [--json])", argv[i]);
		}
	}
	if (!path)
		return xo_usage_error("summary", "--model M is required (e.g. models/seed.model)");
	if (xo_spec_read_architecture(path, &text))
		return xo_usage_error("summary", "%s", xo_last_error());
	if (xo_spec_parse(text, path, &spec)) {
		free(text);
		return xo_usage_error("summary", "%s", xo_last_error());
	}
	planned = memory_plan(text, path, &mem, &why);
	free(text);
	/* a bad XO_MODEL_SHARE is bad input, not a model too large to plan */
	if (!planned && strstr(why, "XO_MODEL_SHARE=")) {
		xo_spec_free(&spec);
		return xo_usage_error("summary", "%s", why);
	}
	for (int i = 0; i < spec.nlayers; i++) {
		total += keras_params(&spec.layers[i]);
		trainable += xo_layer_trainable(&spec.layers[i]);
	}
	commas(trainable, trn, sizeof(trn));
	commas(total - trainable, non, sizeof(non));
	if (json) {
		printf("{\"model\": ");
		xo_cli_json_string(path);
		printf(", \"input_shape\": [null, ");
		if (spec.in_rank >= 2)
			printf("%" PRId64 ", ", spec.in_len);
		if (spec.in_rank == 3)
			printf("%" PRId64 ", ", spec.in_w);
		printf("%" PRId64 "], \"input_layers\": [", spec.in_ch);
		inputs_json(&spec);
		printf("], \"layers\": [");
		for (int i = 0; i < spec.nlayers; i++) {
			const struct xo_layer_spec *l = &spec.layers[i];

			printf("%s\n  {\"name\": ", i ? "," : "");
			xo_cli_json_string(l->name);
			printf(", \"type\": \"%s\", \"output_shape\": [null, ", xo_layer_keras_class(l->kind));
			if (l->out_rank >= 2)
				printf("%" PRId64 ", ", l->out_len);
			if (l->out_rank == 3)
				printf("%" PRId64 ", ", l->out_w);
			printf("%" PRId64 "], \"params\": %" PRId64, l->out_ch, keras_params(l));
			if (spec.graph) { /* Keras's "Connected to" */
				printf(", \"inputs\": [");
				for (int k = 0; k < l->ninputs; k++) {
					printf("%s", k ? ", " : "");
					xo_cli_json_string(input_name(&spec, l->inputs[k]));
				}
				if (l->att_mask) { /* a tensor argument: Keras lists it too */
					printf(", ");
					xo_cli_json_string(input_name(&spec, l->att_mask));
				}
				printf("]");
			}
			printf("}");
		}
		printf("\n], \"total_params\": %" PRId64 ", \"trainable_params\": %" PRId64
		       ", \"non_trainable_params\": %" PRId64,
		       total, trainable, total - trainable);
		memory_json(planned, &mem);
		printf("}\n");
	} else {
		const char *rule = "____________________________________________________________________";
		const char *dbl = "====================================================================";
		char tot[32];

		printf("Model: \"%s\" (%s)\n%s\n", spec.graph ? "functional" : "sequential", path,
		       rule);
		printf(" %-31s %-25s %-10s%s\n%s\n", "Layer (type)", "Output Shape", "Param #",
		       spec.graph ? " Connected to" : "", dbl);
		if (spec.graph) /* a Functional's InputLayers first, as Keras lists them */
			inputs_text(&spec);
		for (int i = 0; i < spec.nlayers; i++) {
			const struct xo_layer_spec *l = &spec.layers[i];
			char name[XO_LAYER_NAME_MAX + 24], shape[64];

			snprintf(name, sizeof(name), "%s (%s)", l->name, xo_layer_keras_class(l->kind));
			shape_str(l->out_rank, l->out_len, l->out_w, l->out_ch, shape, sizeof(shape));
			if (strlen(name) > 31) { /* too wide for its column: its own line */
				printf(" %s\n", name);
				name[0] = '\0';
			}
			printf(" %-31s %-25s %-10" PRId64, name, shape, keras_params(l));
			for (int k = 0; spec.graph && k < l->ninputs; k++)
				printf("%s%s", k ? ", " : " ", input_name(&spec, l->inputs[k]));
			if (spec.graph && l->att_mask) /* Keras lists the mask third */
				printf(", %s", input_name(&spec, l->att_mask));
			printf("\n%s\n", i + 1 < spec.nlayers ? "" : dbl);
		}
		commas(total, tot, sizeof(tot));
		printf("Total params: %s\nTrainable params: %s\nNon-trainable params: %s\n", tot, trn,
		       non);
		memory_text(planned, &mem, why);
		printf("%s\n", rule);
	}
	xo_spec_free(&spec);
	return 0;
}
