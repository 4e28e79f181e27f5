/*
 * import_model.c - `xo import MODEL --out DIR` (issue 13 item 1): a Keras
 * .keras or legacy .h5 model (or a spec) as text: DIR/model.spec, the spec
 * its config maps to, and DIR/weights/, its weights as <layer>.<variable>.npy
 * (Keras's variable names). Then `xo predict --model DIR/model.spec
 * --weights DIR/weights ...` runs the same model. A top-level command, not
 * `xo perf import` (which imports a peer's timings).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../model/model_internal.h"
#include "cmd.h"
#include "xo.h"

int xo_cmd_import(int argc, char **argv)
{
	const char *model = NULL, *out = NULL;
	char spec_path[4200], weights[4200];
	struct xo_backend *be = NULL;
	struct xo_model *m = NULL;
	char *text = NULL;
	struct stat sb;
	int rc = 2;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--out")) {
			if (i + 1 == argc)
				return xo_usage_error("import", "--out needs a value");
			out = argv[++i];
		} else if (argv[i][0] == '-' || model) {
			return xo_usage_error("import", "unexpected argument '%s' (usage: xo import "
			                      "MODEL --out DIR)", argv[i]);
		} else {
			model = argv[i];
		}
	}
	if (!model || !out)
		return xo_usage_error("import", "MODEL and --out DIR are required (usage: xo import "
		                      "MODEL --out DIR)");
	if (!stat(out, &sb) && !S_ISDIR(sb.st_mode))
		return xo_usage_error("import", "%s: exists and is not a directory", out);
	if ((size_t)snprintf(spec_path, sizeof(spec_path), "%s/model.spec", out) >=
	        sizeof(spec_path) ||
	    (size_t)snprintf(weights, sizeof(weights), "%s/weights", out) >= sizeof(weights))
		return xo_usage_error("import", "%s: path too long", out);
	/* Everything is read and checked before anything is written. */
	if (xo_spec_read_file(model, &text) || xo_backend_open("ref", &be) ||
	    xo_model_open(model, be, 1, &m) || (!stat(out, &sb) && xo_checkpoint_check(weights))) {
		rc = xo_usage_error("import", "%s", xo_last_error());
		goto out;
	}
	if (stat(out, &sb) && mkdir(out, 0777)) {
		rc = xo_usage_error("import", "%s: cannot create: %s", out, strerror(errno));
		goto out;
	}
	if (xo_output_file(spec_path, text, strlen(text)) || xo_model_save_weights(m, weights)) {
		rc = xo_usage_error("import", "%s", xo_last_error());
		goto out;
	}
	printf("Wrote %s and %s/ (%" PRId64 " parameters)\n", spec_path, weights,
	       xo_model_param_count(m));
	rc = 0;
out:
	free(text);
	xo_model_close(m);
	xo_backend_close(be);
	return rc;
}
