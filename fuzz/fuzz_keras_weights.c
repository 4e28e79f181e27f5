/*
 * fuzz_keras_weights.c - a whole weights file (Keras 3 .weights.h5, Keras 2
 * or legacy .h5 weights) through the isolated reader, loaded into the seed
 * model (suites/golden/keras/seed.keras, opened once): every variable
 * present, every shape and value checked, or one line (fuzz/keras_file.h).
 */
#include "keras_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct xo_model *m;
	enum xo_status st;

	if (!m && xo_model_open(XO_KERAS_DIR "/seed.keras", keras_file_backend(), 2, &m))
		abort();
	if (size > 1 << 20)
		return 0;
	st = xo_model_load_weights(m, keras_file_put(data, size));
	xo_fuzz_check_refusal(st, "keras_weights");
	keras_file_say(st);
	if (!st)
		keras_file_check(m, "keras_weights");
	return 0;
}
