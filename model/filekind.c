/*
 * filekind.c - what a model file is: by its first bytes when reading (a
 * Keras zip, HDF5, or neither) and by its suffix when saving (a target need
 * not exist yet). The lowest layer of model/: the readers (h5read.c), the
 * checkpoint writer and the format dispatch (modelfile.c) all ask it, and it
 * calls none of them.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "model_internal.h"

enum xo_keras_kind xo_keras_sniff(const char *path)
{
	static const unsigned char zip_magic[4] = {'P', 'K', 3, 4};
	static const unsigned char h5_magic[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
	unsigned char b[8] = {0};
	struct stat sb;
	size_t n;
	FILE *f;

	if (xo_input_open(path, "a model file", &f, &sb))
		return XO_KERAS_NONE;
	n = fread(b, 1, sizeof(b), f);
	fclose(f);
	if (n >= 4 && !memcmp(b, zip_magic, 4))
		return XO_KERAS_ZIP;
	if (n == 8 && !memcmp(b, h5_magic, 8))
		return XO_KERAS_HDF5;
	return XO_KERAS_NONE;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n > k && !strcmp(s + n - k, suf);
}

enum xo_save_kind xo_keras_save_kind(const char *path)
{
	if (ends_with(path, ".weights.h5"))
		return XO_SAVE_WEIGHTS_H5;
	if (ends_with(path, ".keras"))
		return XO_SAVE_KERAS;
	if (ends_with(path, ".h5") || ends_with(path, ".hdf5"))
		return XO_SAVE_BAD;
	return XO_SAVE_DIR;
}

