/*
 * fuzz_keras_config.c - the Keras config.json -> spec mapping (model/keras.c,
 * xo_keras_config_to_spec): any bytes are either a spec or a one-line
 * refusal naming what is wrong. An accepted config's spec must parse (the
 * mapping checks it with the spec parser; a spec it hands out that does not
 * parse is a finding). The HDF5 and zip libraries are not fuzzed here.
 */
#include <string.h>

#include "fuzz.h"
#include "xo/model_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xo_model_spec spec;
	enum xo_status st;
	char *text = NULL;

	if (size > 1 << 16)
		return 0;
	st = xo_keras_config_to_spec((const char *)data, size, "fuzz.keras", &text);
	xo_fuzz_check_refusal(st, "keras_config");
	if (st)
		return 0;
	if (!text || xo_spec_parse(text, "fuzz", &spec)) {
		fprintf(stderr, "keras_config: accepted config maps to a spec that does not "
		                "parse: %s\n", xo_last_error());
		abort();
	}
	if (spec.nlayers < 1)
		abort();
	xo_spec_free(&spec);
	free(text);
	return 0;
}
