/*
 * cl_program_dump.c - writes the OpenCL program exactly as the cl backend
 * builds it (the cl/kernels files concatenated with #line directives, from the
 * embedded sources) and the build options of one tuning row, so
 * suites/cl_offline.sh can compile it offline for GPU targets without a GPU.
 *
 * usage: cl_program_dump ROW OUT.cl OUT.opts    ROW: pocl, nvidia, amd, intel, default
 */
#include <stdio.h>
#include <stdlib.h>

#include "cl_internal.h"

int main(int argc, char **argv)
{
	const struct xo_cl_tune *row;
	char opts[512];
	char *text;
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: cl_program_dump ROW OUT.cl OUT.opts\n");
		return 2;
	}
	row = xo_cl_tune_row(argv[1]);
	if (!row) {
		fprintf(stderr, "cl_program_dump: no tuning row '%s'\n", argv[1]);
		return 2;
	}
	text = xo_cl_program_source();
	if (!text) {
		fprintf(stderr, "cl_program_dump: out of memory\n");
		return 1;
	}
	xo_cl_build_options(row, opts, sizeof(opts));
	f = fopen(argv[2], "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "cl_program_dump: cannot write %s\n", argv[2]);
		return 1;
	}
	f = fopen(argv[3], "w");
	if (!f || fprintf(f, "%s\n", opts) < 0 || fclose(f)) {
		fprintf(stderr, "cl_program_dump: cannot write %s\n", argv[3]);
		return 1;
	}
	free(text);
	return 0;
}
