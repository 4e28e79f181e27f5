/*
 * keras_file.h - shared by the whole-file Keras targets (keras_h5,
 * keras_weights, keras_zip; docs/fuzzing.md): the input is written to an
 * in-memory file (memfd) and opened by path, as `xo` opens a model file, so
 * it goes through the isolated reader (model/h5read.c): libhdf5 and libzip
 * run in its child, and a crash or hang there must come back as one line,
 * never take this process down. An accepted file must give finite weights.
 */
#ifndef XO_FUZZ_KERAS_FILE_H
#define XO_FUZZ_KERAS_FILE_H

#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "xo/model_spec.h"

#ifndef XO_KERAS_DIR
#error "XO_KERAS_DIR must name suites/golden/keras"
#endif

/* The input as a file: its path (/proc/self/fd/N of one memfd). */
static inline const char *keras_file_put(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("xo-fuzz-keras", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		/* a child that hangs is killed well inside libFuzzer's -timeout */
		setenv("XO_HDF5_DEADLINE_S", "1", 0);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	return path;
}

static inline struct xo_backend *keras_file_backend(void)
{
	static struct xo_backend *be;

	if (!be && xo_backend_open("ref", &be))
		abort();
	return be;
}

/* Every parameter of an accepted model is finite. */
static inline void keras_file_check(struct xo_model *m, const char *target)
{
	int64_t n = xo_model_param_count(m);
	float *w = malloc((size_t)(n ? n : 1) * sizeof(*w));

	if (!w)
		return;
	if (n && xo_model_params_host(m, w, false) == XO_OK)
		for (int64_t i = 0; i < n; i++)
			if (!isfinite(w[i])) {
				fprintf(stderr, "%s: accepted a non-finite weight %" PRId64 "\n",
				        target, i);
				abort();
			}
	free(w);
}

/* XO_FUZZ_VERBOSE set: each refusal on stderr (to count, when replaying a
 * corpus, how many inputs the reader's child crashed or timed out on). */
static inline void keras_file_say(enum xo_status st)
{
	if (st && getenv("XO_FUZZ_VERBOSE"))
		fprintf(stderr, "refused: %s\n", xo_last_error());
}

/* A whole model file (.h5 model or .keras): opened with its weights. */
static inline int keras_file_model(const uint8_t *data, size_t size, const char *target)
{
	struct xo_model *m = NULL;
	enum xo_status st;

	if (size > 1 << 20)
		return 0;
	st = xo_model_open(keras_file_put(data, size), keras_file_backend(), 2, &m);
	xo_fuzz_check_refusal(st, target);
	keras_file_say(st);
	if (!st)
		keras_file_check(m, target);
	xo_model_close(m);
	return 0;
}

#endif /* XO_FUZZ_KERAS_FILE_H */
