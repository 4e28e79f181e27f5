/*
 * predict.c - `xo predict --model M --weights DIR --input X.npy --output Y.npy
 * [--device D] [--batch-size N]`: Keras's model.predict from a spec and a
 * weights directory; writes the probabilities as float32 .npy. A model of
 * several inputs takes one --input per input, in its order.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "xo.h"
#include "xo/model_spec.h"

_Static_assert(XO_CLI_INPUTS_MAX >= XO_MODEL_INPUTS_MAX, "a file for every model input");

static const char usage[] =
    "usage: xo predict --model M --weights DIR --input X.npy [--input X2.npy ...]\n"
    "                  --output Y.npy [--device D] [--batch-size N]\n";

/* Input shape (n, len, ch) or (n, len*ch) (or (n, len) when ch == 1). */
/* A Keras model file carries its weights, so --weights is optional for it;
 * a model that is not one by its content is read as a spec, whose own error
 * (a damaged or truncated .keras is no spec either) says what the file is,
 * and a spec that reads needs --weights. 1, having said why; 0: a Keras
 * file. */
static int spec_without_weights(const char *model)
{
	struct xo_model_spec spec;
	char *text = NULL;
	size_t len;

	if (xo_keras_sniff(model) != XO_KERAS_NONE)
		return 0;
	len = strlen(model);
	if ((len > 6 && !strcmp(model + len - 6, ".keras")) ||
	    (len > 3 && !strcmp(model + len - 3, ".h5"))) {
		xo_usage_error("predict",
		               "%s: not a Keras model file by its content (a .keras is a zip "
		               "archive holding config.json, an .h5 an HDF5 file): damaged or "
		               "truncated?",
		               model);
		return 1;
	}
	if (xo_spec_read_architecture(model, &text) || xo_spec_parse(text, model, &spec)) {
		xo_usage_error("predict", "%s", xo_last_error());
	} else {
		xo_spec_free(&spec);
		xo_usage_error("predict",
		               "%s: a spec, which carries no weights: --weights is required (a "
		               "directory of .npy files, a .weights.h5 or a legacy .h5)",
		               model);
	}
	free(text);
	return 1;
}

int xo_cmd_predict(int argc, char **argv)
{
	const char *model = NULL, *weights = NULL, *input = NULL, *output = NULL;
	const char *inputs[XO_CLI_INPUTS_MAX];
	int ninput = 0;
	const char *device = "cpu";
	struct xo_backend *be = NULL;
	struct xo_model *m = NULL;
	struct xo_npy x = {0}, parts[XO_MODEL_INPUTS_MAX] = {{0}};
	int64_t batch = 32, n, classes, odims[4];
	int nd, nin;
	float *probs = NULL;
	struct timespec t0, t1;
	int rc = 2;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!v)
			return xo_usage_error("predict", "unknown option or missing value: '%s'",
			                      a);
		if (!strcmp(a, "--model"))
			model = v;
		else if (!strcmp(a, "--weights"))
			weights = v;
		else if (!strcmp(a, "--input")) {
			/* one per model input, in the model's order; past the
			 * most a model may have they are counted, and the count
			 * is refused against the model's own */
			if (ninput < XO_CLI_INPUTS_MAX)
				inputs[ninput] = v;
			ninput++;
			input = v;
		}
		else if (!strcmp(a, "--output"))
			output = v;
		else if (!strcmp(a, "--device"))
			device = v;
		else if (!strcmp(a, "--batch-size")) {
			if (!xo_cli_parse_i64(v, 1, INT64_MAX, &batch))
				return xo_usage_error(
				    "predict", "--batch-size %s: expected an integer >= 1", v);
		} else
			return xo_usage_error("predict", "unknown option '%s'", a);
		i++;
	}
	if (!model || !input || !output)
		return xo_usage_error("predict",
		                      "--model, --weights, --input and --output are required "
		                      "(--weights is optional for a Keras .keras/.h5 model)");
	if (!weights && spec_without_weights(model))
		return 2;

	/* The output must be replaceable before any work: a directory, FIFO
	 * or device node there is refused now, and left alone. */
	{
		char target[4096];
		bool exists;

		if (xo_output_target(output, false, target, sizeof(target), &exists))
			return xo_usage_error("predict", "%s", xo_last_error());
	}
	/* The model's inputs, and the files checked against them (their
	 * count, shapes and samples), before the model is opened: a wrong
	 * file costs none of the memory its activations take. */
	/* float32, or int ids (an int32 input) */
	if (xo_cli_inputs_read_model("predict", model, inputs, ninput, parts, &nin))
		goto out_free;
	n = parts[0].dim[0];
	if (xo_backend_open(device, &be)) {
		xo_usage_error("predict", "%s", xo_last_error());
		goto out_free;
	}
	if (xo_model_open(model, be, batch < n ? batch : n, &m) ||
	    (weights && xo_model_load_weights(m, weights))) {
		xo_usage_error("predict", "%s", xo_last_error());
		goto out_free;
	}
	/* several inputs: one file each, joined per sample */
	if (xo_cli_inputs_take("predict", m, inputs, nin, parts, &x))
		goto out_free;
	classes = xo_model_classes(m);
	probs = malloc(sizeof(*probs) * (size_t)(n * classes));
	if (!probs) {
		xo_usage_error("predict", "out of memory");
		goto out_free;
	}
	{
		/* the last layer's output per sample as Keras shapes it:
		 * (n, units), (n, T, units), (n, h, w, units) */
		const struct xo_layer_spec *last =
		    xo_model_layer_spec(m, xo_model_layer_count(m) - 1);

		nd = 1 + last->out_rank;
		odims[0] = n;
		odims[nd - 1] = last->out_ch;
		if (last->out_rank >= 2)
			odims[1] = last->out_len;
		if (last->out_rank == 3)
			odims[2] = last->out_w;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (xo_model_predict(m, x.data, n, batch, probs) ||
	    xo_npy_write(output, nd, odims, probs)) {
		xo_usage_error("predict", "%s", xo_last_error());
		goto out_free;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("Predict %" PRId64 " samples in %.4f s on %s, wrote %s\n", n,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9,
	       xo_backend_name(be), output);
	rc = 0;
out_free:
	free(probs);
	xo_model_close(m);
	xo_backend_close(be);
	xo_npy_free(&x);
	for (int k = 0; k < XO_MODEL_INPUTS_MAX; k++)
		xo_npy_free(&parts[k]);
	return rc;
}
