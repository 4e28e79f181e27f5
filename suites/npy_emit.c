/*
 * npy_emit.c - writes the .npy files the project writes, for an independent
 * reader to check (suites/npy_numpy.py, ctest model.npy_numpy): arrays of
 * every rank through xo_npy_write, each with its float32 values in a raw
 * little-endian file beside it (NAME.npy, NAME.f32, and a line "NAME d0,d1,..."
 * in manifest.txt), and the seed model's initial weights through
 * xo_model_save_weights (weights/). Usage: npy_emit DIR (DIR must exist).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xo.h"

struct arr {
	const char *name;
	int ndim;
	int64_t dim[4];
};

static const struct arr arrs[] = {
    {"scalar", 0, {0}},       {"one", 1, {1}},           {"vec", 1, {7}},
    {"bias16", 1, {16}},      {"mat", 2, {3, 5}},        {"cube", 3, {2, 3, 4}},
    {"rank4", 4, {2, 1, 3, 2}},
};

static int emit(const char *dir, const struct arr *a, FILE *manifest, uint32_t salt)
{
	char path[4096];
	int64_t count = 1;
	float *v;
	FILE *f;

	for (int i = 0; i < a->ndim; i++)
		count *= a->dim[i];
	v = malloc(sizeof(*v) * (size_t)count);
	if (!v)
		return 1;
	/* distinct values of every sign and size, a negative zero and a tiny one */
	for (int64_t i = 0; i < count; i++)
		v[i] = (xo_philox_uniform(5, salt, 0, (uint64_t)i) - 0.5f) * (float)(1 << (i % 9));
	if (count > 2) {
		v[1] = -0.0f;
		v[2] = 1e-30f;
	}
	snprintf(path, sizeof(path), "%s/%s.npy", dir, a->name);
	if (xo_npy_write(path, a->ndim, a->dim, v)) {
		fprintf(stderr, "npy_emit: %s\n", xo_last_error());
		free(v);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s.f32", dir, a->name);
	f = fopen(path, "wb");
	if (!f || fwrite(v, sizeof(*v), (size_t)count, f) != (size_t)count || fclose(f)) {
		fprintf(stderr, "npy_emit: cannot write %s\n", path);
		free(v);
		return 1;
	}
	fprintf(manifest, "%s ", a->name);
	for (int i = 0; i < a->ndim; i++)
		fprintf(manifest, "%s%lld", i ? "," : "", (long long)a->dim[i]);
	fprintf(manifest, "\n");
	free(v);
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	struct xo_backend *be;
	struct xo_model *m;
	FILE *manifest;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: npy_emit DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/manifest.txt", argv[1]);
	manifest = fopen(path, "w");
	if (!manifest) {
		fprintf(stderr, "npy_emit: cannot write %s\n", path);
		return 1;
	}
	for (size_t i = 0; !rc && i < sizeof(arrs) / sizeof(arrs[0]); i++)
		rc = emit(argv[1], &arrs[i], manifest, (uint32_t)i);
	if (fclose(manifest))
		rc = 1;
	if (rc)
		return 1;
	snprintf(path, sizeof(path), "%s/weights", argv[1]);
	if (xo_backend_open("ref", &be) || xo_model_open_string(xo_model_seed_spec, "seed", be, 4, &m)) {
		fprintf(stderr, "npy_emit: %s\n", xo_last_error());
		return 1;
	}
	if (xo_model_init(m, 3) || xo_model_save_weights(m, path)) {
		fprintf(stderr, "npy_emit: %s\n", xo_last_error());
		rc = 1;
	}
	xo_model_close(m);
	xo_backend_close(be);
	return rc;
}
