/*
 * cl_sources.h - the OpenCL C sources of cl/kernels/<family>.cl, embedded at build
 * time by cl/embed.cmake (generated cl_sources.c in the build tree).
 */
#ifndef XO_CL_SOURCES_H
#define XO_CL_SOURCES_H

struct xo_cl_source {
	const char *name; /* file name, e.g. "conv.cl" */
	const char *text; /* NUL-terminated source */
};

extern const struct xo_cl_source xo_cl_sources[]; /* in concatenation order */
extern const int xo_cl_nsources;

#endif
