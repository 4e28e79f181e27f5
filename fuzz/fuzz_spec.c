/*
 * fuzz_spec.c - the model spec parser (model/spec.c): any text is either a
 * model or a one-line refusal. Specs small enough to build are also compiled
 * on the reference backend (shapes, weights, Glorot initialisation), where
 * the sizes the parser accepted are used.
 */
#include <string.h>

#include "fuzz.h"
#include "xo/model_spec.h"

/* Elements a spec may have (input, parameters and state, one sample's
 * activations; rank-3 widths included) to be built as well as parsed: a
 * spec may ask for gigabytes legitimately; the build is only worth its time
 * and memory for small ones. */
#define BUILD_LIMIT (1 << 20)

static struct xo_backend *ref;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xo_model_spec spec;
	struct xo_model *m = NULL;
	enum xo_status st;
	double total;
	char *text;

	if (size > 1 << 16)
		return 0;
	text = xo_fuzz_cstr(data, size);
	if (!text)
		return 0;
	st = xo_spec_parse(text, "fuzz", &spec);
	xo_fuzz_check_refusal(st, "spec");
	if (st)
		goto out;
	total = 0.0;
	for (int k = 0; k < spec.ninputs; k++) /* every input's batch rows */
		total += (double)spec.input[k].len * (double)spec.input[k].w * (double)spec.input[k].ch;
	for (int i = 0; i < spec.nlayers; i++) {
		const struct xo_layer_spec *l = &spec.layers[i];

		/* in double: the sizes are whatever the parser let through */
		total += (double)xo_layer_total(l) +
		         (double)l->out_len * (double)l->out_w * (double)l->out_ch;
	}
	xo_spec_free(&spec);
	if (total <= BUILD_LIMIT) {
		if (!ref && xo_backend_open("ref", &ref))
			abort();
		st = xo_model_open_string(text, "fuzz", ref, 2, &m);
		xo_fuzz_check_refusal(st, "spec/model");
		xo_model_close(m);
	}
out:
	free(text);
	return 0;
}
