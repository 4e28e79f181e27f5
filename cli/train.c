/*
 * train.c - `xo train --model M [--weights DIR] --x X.npy --y Y.npy --save DIR
 * [--device D] [--epochs N] [--batch-size N] [--validation-split F]
 * [--no-shuffle] [--seed S]`: Keras's model.fit with a ModelCheckpoint that
 * keeps the weights with the best val_accuracy in DIR (without validation
 * data: the weights after the last epoch).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "xo.h"
#include "xo/model_spec.h"

static const char usage[] =
    "usage: xo train --model M [--weights DIR] --x X.npy [--x X2.npy ...] --y Y.npy\n"
    "                --save DIR\n"
    "                [--device D] [--epochs N] [--batch-size N]\n"
    "                [--validation-split F] [--no-shuffle] [--seed S]\n";

struct best {
	int epoch;
	double val_accuracy;
	double val_loss;  /* monitored instead with metrics=none */
	bool no_metric;
};

static void on_epoch(void *user, const struct xo_epoch_log *log)
{
	struct best *b = user;

	if (log->checkpointed) {
		b->epoch = log->epoch;
		b->val_accuracy = log->val_accuracy;
		b->val_loss = log->val_loss;
		b->no_metric = log->no_metric;
	}
}

int xo_cmd_train(int argc, char **argv)
{
	const char *model = NULL, *weights = NULL, *xpath = NULL, *ypath = NULL, *save = NULL;
	const char *xpaths[XO_CLI_INPUTS_MAX];
	struct xo_npy parts[XO_MODEL_INPUTS_MAX] = {{0}};
	int nx = 0, nin;
	const char *device = "cpu";
	struct xo_fit_options o = xo_fit_options_default();
	struct xo_backend *be = NULL;
	struct xo_model *m = NULL;
	struct xo_npy x = {0}, y = {0};
	struct best best = {0, NAN, NAN, false};
	float *onehot = NULL;
	int64_t n, v64;
	int rc = 2;

	o.verbose = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!strcmp(a, "--no-shuffle")) {
			o.shuffle = false;
			continue;
		}
		if (!v)
			return xo_usage_error("train", "unknown option or missing value: '%s'", a);
		if (!strcmp(a, "--model")) {
			model = v;
		} else if (!strcmp(a, "--weights")) {
			weights = v;
		} else if (!strcmp(a, "--x")) {
			/* one per model input, in the model's order; past the
			 * most a model may have they are counted, and the count
			 * is refused against the model's own */
			if (nx < XO_CLI_INPUTS_MAX)
				xpaths[nx] = v;
			nx++;
			xpath = v;
		} else if (!strcmp(a, "--y")) {
			ypath = v;
		} else if (!strcmp(a, "--save")) {
			save = v;
		} else if (!strcmp(a, "--device")) {
			device = v;
		} else if (!strcmp(a, "--epochs")) {
			if (!xo_cli_parse_i64(v, 1, 1000000, &v64))
				return xo_usage_error(
				    "train", "--epochs %s: expected an integer in 1..1000000", v);
			o.epochs = (int)v64;
		} else if (!strcmp(a, "--batch-size")) {
			if (!xo_cli_parse_i64(v, 1, INT32_MAX, &o.batch_size))
				return xo_usage_error(
				    "train", "--batch-size %s: expected an integer >= 1", v);
		} else if (!strcmp(a, "--validation-split")) {
			char *end;
			double f;

			errno = 0;
			f = strtod(v, &end);
			if (errno || end == v || *end || !(f >= 0.0 && f < 1.0))
				return xo_usage_error("train",
				                      "--validation-split %s: expected a number in "
				                      "[0, 1)",
				                      v);
			o.validation_split = (float)f;
		} else if (!strcmp(a, "--seed")) {
			if (!xo_cli_parse_u64(v, &o.seed))
				return xo_usage_error(
				    "train", "--seed %s: expected a non-negative integer", v);
		} else {
			return xo_usage_error("train", "unknown option '%s'", a);
		}
		i++;
	}
	if (!model || !xpath || !ypath || !save)
		return xo_usage_error("train", "--model, --x, --y and --save are required");
	o.checkpoint_dir = save;

	/* The model's inputs, and the x files checked against them (their
	 * count, shapes and samples: float32, or int ids for an int32 input),
	 * before the model is opened: a wrong file costs none of the memory
	 * its activations take. */
	if (xo_cli_inputs_read_model("train", model, xpaths, nx, parts, &nin))
		goto out_free;
	if (xo_npy_read_labels(ypath, &y)) {
		rc = xo_usage_error("train", "%s", xo_last_error());
		goto out_free;
	}
	if (xo_cli_npy_empty("train", ypath, &y))
		goto out_free;
	/* Activations are sized for the largest batch fit can run: no more
	 * than the samples (a --batch-size beyond them allocates nothing). */
	n = parts[0].dim[0];
	if (xo_backend_open(device, &be) ||
	    xo_model_open(model, be, o.batch_size < n ? o.batch_size : n, &m)) {
		rc = xo_usage_error("train", "%s", xo_last_error());
		goto out_free;
	}
	/* several inputs: one file each, joined per sample */
	if (xo_cli_inputs_take("train", m, xpaths, nin, parts, &x))
		goto out_free;
	if (xo_cli_labels("train", &y, n, m, ypath, &onehot))
		goto out_free;
	/* A Keras model file opened with its own weights: training continues
	 * from them (Keras's load_model then fit); a spec starts from --seed. */
	if (weights ? xo_model_load_weights(m, weights)
	            : (xo_keras_sniff(model) == XO_KERAS_NONE && xo_model_init(m, o.seed))) {
		rc = xo_usage_error("train", "%s", xo_last_error());
		goto out_free;
	}
	/* The save directory must be creatable, or a checkpoint directory to
	 * replace, before any training is spent; it is written as a whole at
	 * each checkpoint (a failed run leaves it as it was). */
	if (xo_checkpoint_check(save)) {
		rc = xo_usage_error("train", "%s", xo_last_error());
		goto out_free;
	}
	if (xo_model_fit(m, x.data, onehot, n, &o, on_epoch, &best)) {
		rc = xo_usage_error("train", "%s", xo_last_error());
		goto out_free;
	}
	if (o.validation_split > 0.0f && !best.epoch) {
		/* val_accuracy was NaN every epoch: ModelCheckpoint saves nothing. */
		rc = xo_usage_error("train", "val_accuracy never improved (NaN): nothing saved");
		goto out_free;
	}
	if (o.validation_split > 0.0f && best.no_metric)
		printf("Saved the weights of epoch %d (best val_loss %.4f) to %s\n", best.epoch,
		       best.val_loss, save);
	else if (o.validation_split > 0.0f)
		printf("Saved the weights of epoch %d (best val_accuracy %.4f) to %s\n", best.epoch,
		       best.val_accuracy, save);
	else
		printf("Saved the weights after the last epoch to %s\n", save);
	rc = 0;
out_free:
	if (onehot != y.data)
		free(onehot);
	xo_model_close(m);
	xo_backend_close(be);
	xo_npy_free(&x);
	xo_npy_free(&y);
	for (int k = 0; k < XO_MODEL_INPUTS_MAX; k++)
		xo_npy_free(&parts[k]);
	return rc;
}
