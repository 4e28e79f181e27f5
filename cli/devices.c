/*
 * devices.c - `xo devices [--json]`: every backend compiled in, and whether
 * it opens here, with its description (device, driver, versions).
 *
 * --json gives the same as structured fields a script can select on: for
 * cpu the CPU model, cores, the ISA level the kernels run at, threads, and
 * the BLAS (name, version, build config, core type); for cl every OpenCL
 * platform and device found (indices, names, versions, device type, compute
 * units, memory), each with the `cl:P:D` spec that selects it and which one
 * the backend picks by default (DESIGN section 6: XO_CL_DEVICE, else the
 * first GPU, else the first device).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "cmd.h"
#include "xo.h"
#include "xo/cpu.h"

#ifdef XO_HAVE_CL
#include "xo/cl.h"
#endif

/* The "cpu" object's fields (after its description). */
static void cpu_json(void)
{
	enum xo_cpu_isa isa = xo_cpu_isa_detect();
	const char *e = getenv("XO_THREADS"), *cfg = openblas_get_config();
	char model[256], version[64] = "?";

	xo_cli_cpu_model(model, sizeof(model));
	/* "OpenBLAS 0.3.21 NO_LAPACKE ...": the version is the second word */
	if (cfg && !strncmp(cfg, "OpenBLAS ", 9))
		snprintf(version, sizeof(version), "%.*s", (int)strcspn(cfg + 9, " "), cfg + 9);
	printf(", \"cpu\": {\"model\": ");
	xo_cli_json_string(model);
	printf(", \"cores\": %ld, \"isa\": \"%s\", \"vector_floats\": %d, \"threads\": %d, "
	       "\"blas\": {\"name\": \"OpenBLAS\", \"version\": ",
	       sysconf(_SC_NPROCESSORS_ONLN), xo_cpu_isa_name(isa), xo_cpu_isa_floats(isa),
	       e && atoi(e) > 0 ? atoi(e) : 2);
	xo_cli_json_string(version);
	printf(", \"config\": ");
	xo_cli_json_string(cfg ? cfg : "?");
	printf(", \"core\": ");
	xo_cli_json_string(openblas_get_corename() ? openblas_get_corename() : "?");
	printf("}}");
}

#ifdef XO_HAVE_CL
static void cl_str_field(const char *key, const char *v)
{
	printf(", \"%s\": ", key);
	xo_cli_json_string(v);
}

/* The "opencl" array: every platform's every device. */
static void cl_json(void)
{
	cl_platform_id plats[16];
	cl_uint nplat = 0;
	int n = 0, def_p = -1, def_d = -1;

	printf(", \"opencl\": [");
	if (clGetPlatformIDs(16, plats, &nplat) != CL_SUCCESS)
		nplat = 0;
	if (nplat > 16)
		nplat = 16;
	/* the default device: the one the backend opens (xo_cl_choose over the
	 * same records, XO_CL_DEVICE included), so "default" never disagrees */
	{
		struct xo_cl_candidate *cand = NULL;
		size_t ncand = 0;
		const char *env = getenv("XO_CL_DEVICE");
		char why[256];
		int pick;

		if (xo_cl_candidates(&cand, &ncand) == XO_OK) {
			pick = xo_cl_choose(cand, ncand, env ? env : "", why, sizeof(why));
			if (pick >= 0) {
				def_p = (int)cand[pick].platform;
				def_d = (int)cand[pick].device;
			}
		}
		free(cand);
	}
	for (cl_uint p = 0; p < nplat; p++) {
		cl_device_id devs[32];
		cl_uint nd = 0;
		char pname[256] = "", pver[256] = "", pvendor[256] = "";

		clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof(pname) - 1, pname, NULL);
		clGetPlatformInfo(plats[p], CL_PLATFORM_VERSION, sizeof(pver) - 1, pver, NULL);
		clGetPlatformInfo(plats[p], CL_PLATFORM_VENDOR, sizeof(pvendor) - 1, pvendor, NULL);
		if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 32, devs, &nd) != CL_SUCCESS)
			nd = 0;
		for (cl_uint d = 0; d < nd && d < 32; d++) {
			char name[256] = "", ver[256] = "", drv[256] = "", cver[256] = "",
			     vendor[256] = "";
			cl_device_type t = 0;
			cl_uint cu = 0;
			cl_ulong mem = 0;
			cl_bool avail = CL_TRUE;

			clGetDeviceInfo(devs[d], CL_DEVICE_AVAILABLE, sizeof(avail), &avail, NULL);
			clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof(name) - 1, name, NULL);
			clGetDeviceInfo(devs[d], CL_DEVICE_VENDOR, sizeof(vendor) - 1, vendor, NULL);
			clGetDeviceInfo(devs[d], CL_DEVICE_VERSION, sizeof(ver) - 1, ver, NULL);
			clGetDeviceInfo(devs[d], CL_DRIVER_VERSION, sizeof(drv) - 1, drv, NULL);
			clGetDeviceInfo(devs[d], CL_DEVICE_OPENCL_C_VERSION, sizeof(cver) - 1, cver,
			                NULL);
			clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof(t), &t, NULL);
			clGetDeviceInfo(devs[d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cu), &cu, NULL);
			clGetDeviceInfo(devs[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, NULL);
			printf("%s{\"spec\": \"cl:%u:%u\", \"platform_index\": %u, "
			       "\"device_index\": %u",
			       n++ ? ", " : "", p, d, p, d);
			cl_str_field("platform", pname);
			cl_str_field("platform_vendor", pvendor);
			cl_str_field("platform_version", pver);
			cl_str_field("name", name);
			cl_str_field("vendor", vendor);
			cl_str_field("device_type", t & CL_DEVICE_TYPE_GPU           ? "gpu"
			                            : t & CL_DEVICE_TYPE_CPU         ? "cpu"
			                            : t & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator"
			                                                             : "other");
			cl_str_field("device_version", ver);
			cl_str_field("driver_version", drv);
			cl_str_field("opencl_c_version", cver);
			printf(", \"compute_units\": %u, \"global_mem_mb\": %llu, "
			       "\"available\": %s, \"default\": %s}",
			       cu, (unsigned long long)(mem >> 20), avail != CL_FALSE ? "true" : "false",
			       (int)p == def_p && (int)d == def_d ? "true" : "false");
		}
	}
	printf("]");
	if (getenv("XO_CL_DEVICE")) {
		printf(", \"XO_CL_DEVICE\": ");
		xo_cli_json_string(getenv("XO_CL_DEVICE"));
	}
}
#endif

int xo_cmd_devices(int argc, char **argv)
{
	bool json = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--help")) {
			printf("usage: xo devices [--json]\n"
			       "  every backend (ref, cpu, cl), whether it opens here, and what it\n"
			       "  runs on; --json adds structured fields: the cpu's ISA, threads and\n"
			       "  BLAS, every OpenCL platform/device with the cl:P:D spec selecting it\n");
			return 0;
		} else
			return xo_usage_error("devices", "unknown option '%s'", argv[i]);
	}
	if (json)
		printf("[");
	for (int i = 0; i < xo_backend_count(); i++) {
		const char *kind = xo_backend_kind(i);
		struct xo_backend *be = NULL;
		enum xo_status st = xo_backend_open(kind, &be);
		const char *what = st ? xo_last_error() : xo_backend_describe(be);

		if (json) {
			printf("%s\n  {\"device\": ", i ? "," : "");
			xo_cli_json_string(kind);
			printf(", \"spec\": ");
			xo_cli_json_string(kind);
			printf(", \"available\": %s, \"description\": ", st ? "false" : "true");
			xo_cli_json_string(what);
			if (!strcmp(kind, "cpu"))
				cpu_json();
#ifdef XO_HAVE_CL
			if (!strcmp(kind, "cl"))
				cl_json();
#endif
			printf("}");
		} else {
			printf("%-4s %-11s %s\n", kind, st ? "unavailable" : "available", what);
		}
		xo_backend_close(be);
	}
	if (json)
		printf("\n]\n");
	return 0;
}
