/*
 * replay_main.c - a main for the fuzz targets without libFuzzer: every file
 * named on the command line (directories: every file in them, sorted) is fed
 * once to LLVMFuzzerTestOneInput. ctest runs it over fuzz/regress/<target>/
 * and the seed files, in the normal build (quick label), so every input that
 * once crashed a parser stays a test.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n = 0, got;
	uint8_t *buf = malloc(cap), *grown;

	if (!f || !buf) {
		fprintf(stderr, "replay: %s: cannot read\n", path);
		if (f)
			fclose(f);
		free(buf);
		return 1;
	}
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			grown = realloc(buf, cap *= 2);
			if (!grown) {
				fclose(f);
				free(buf);
				fprintf(stderr, "replay: %s: out of memory\n", path);
				return 1;
			}
			buf = grown;
		}
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	int files = 0, bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR ...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct dirent **ents;
		struct stat sb;
		int n;

		if (stat(argv[i], &sb)) {
			fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
			bad++;
			continue;
		}
		if (!S_ISDIR(sb.st_mode)) {
			bad += run_file(argv[i]);
			files++;
			continue;
		}
		n = scandir(argv[i], &ents, NULL, by_name);
		if (n < 0) {
			fprintf(stderr, "replay: %s: cannot list\n", argv[i]);
			bad++;
			continue;
		}
		for (int k = 0; k < n; k++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s", argv[i], ents[k]->d_name);
			if (ents[k]->d_name[0] != '.' && !stat(path, &sb) && S_ISREG(sb.st_mode)) {
				bad += run_file(path);
				files++;
			}
			free(ents[k]);
		}
		free(ents);
	}
	printf("replay: %d inputs, none crashed%s\n", files, bad ? " (some unreadable)" : "");
	return bad ? 1 : 0;
}
