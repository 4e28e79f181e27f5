/*
 * fuzz_keras_h5.c - a whole legacy Keras .h5 model file (model_config,
 * training_config, model_weights) through the isolated reader and the
 * config mapping, opened with its weights (fuzz/keras_file.h).
 */
#include "keras_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return keras_file_model(data, size, "keras_h5");
}
