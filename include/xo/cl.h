/*
 * xo/cl.h - what code outside cl/ may know of the cl backend: the OpenCL
 * devices as its device choice sees them, so `xo devices` and `xo probe` list
 * them and call default the device the backend opens (DESIGN section 6:
 * XO_CL_DEVICE, else the first GPU, else the first device). Only where the
 * build has OpenCL (XO_HAVE_CL). The backend's internals stay in
 * cl/cl_internal.h.
 */
#ifndef XO_CL_H
#define XO_CL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <stdbool.h>
#include <stddef.h>

#include <CL/cl.h>

#include "xo.h"

/* One device as device choice sees it; a platform whose clGetDeviceIDs
 * failed or found nothing is one record with err != CL_SUCCESS and no
 * device. Records come in platform order, then CL_DEVICE_TYPE_ALL order. */
struct xo_cl_candidate {
	cl_uint platform;            /* platform index */
	char platform_name[128];
	cl_int err;                  /* that platform's clGetDeviceIDs */
	cl_uint device;              /* device index in its platform */
	char device_name[128];
	cl_device_type type;         /* CL_DEVICE_TYPE */
	bool available;              /* CL_DEVICE_AVAILABLE */
	cl_platform_id platform_id;  /* handles for the caller; never read by xo_cl_choose */
	cl_device_id device_id;
};
/* Picks a device for spec: "P:D", "P" or "" (P, D: indices or case-insensitive
 * name substrings). Devices that are not available are skipped; without a
 * device part the first available GPU of the matching platforms wins, else
 * the first available device. Returns the record's index, or -1 with a
 * one-line reason in why (the platforms, their clGetDeviceIDs errors, the
 * devices skipped as unavailable). Pure: no OpenCL call, no environment. */
int xo_cl_choose(const struct xo_cl_candidate *cand, size_t n, const char *spec, char *why,
		 size_t why_size);
/* Every platform's devices as candidate records (malloc'd into *out, free()
 * them), in the order xo_cl_choose expects; XO_ENODEV when there is no
 * platform. `xo devices` and `xo probe` list devices with it, so what they
 * call the default is what the backend opens. */
enum xo_status xo_cl_candidates(struct xo_cl_candidate **out, size_t *count);
/* "GPU", "CPU", "accelerator", "custom" or "other" for a CL_DEVICE_TYPE. */
const char *xo_cl_device_type_name(cl_device_type type);

#endif /* XO_CL_H */
