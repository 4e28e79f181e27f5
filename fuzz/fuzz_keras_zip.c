/*
 * fuzz_keras_zip.c - a whole Keras 3 .keras archive (config.json,
 * model.weights.h5) through the isolated reader (libzip and libhdf5 in its
 * child) and the config mapping, opened with its weights
 * (fuzz/keras_file.h).
 */
#include "keras_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return keras_file_model(data, size, "keras_zip");
}
