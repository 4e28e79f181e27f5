/*
 * test_backends.h - the backends a CMocka suite runs on: every compiled-in
 * one that opens; one without a device (cl without OpenCL) is skipped with
 * its reason, unless xo_opencl_required(), where it fails the suite.
 * Include after <cmocka.h>.
 */
#ifndef XO_TEST_BACKENDS_H
#define XO_TEST_BACKENDS_H

#include "xo.h"

static inline int open_backends(struct xo_backend **be, int max)
{
	int n = 0;

	for (int i = 0; i < xo_backend_count() && n < max; i++) {
		enum xo_status st = xo_backend_open(xo_backend_kind(i), &be[n]);

		if (st == XO_ENODEV && !xo_opencl_required()) {
			print_message("[  SKIP    ] backend %s: %s\n", xo_backend_kind(i),
			              xo_last_error());
			continue;
		}
		if (st)
			fail_msg("backend %s: %s", xo_backend_kind(i), xo_last_error());
		n++;
	}
	return n;
}

#endif /* XO_TEST_BACKENDS_H */
