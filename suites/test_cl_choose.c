/*
 * test_cl_choose.c - device choice and the tuning row, as pure functions over
 * candidate records (cl/cl_internal.h xo_cl_choose, xo_cl_tune_lookup), so
 * the machines this suite never runs on are covered too: a platform whose
 * clGetDeviceIDs fails, a device that reports CL_DEVICE_AVAILABLE false, a
 * GPU beside PoCL's CPU device, PoCL driving a GPU. Needs no OpenCL device.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cl_internal.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static struct xo_cl_candidate dev(cl_uint p, const char *pname, cl_uint d, const char *dname,
				  cl_device_type type, bool available)
{
	struct xo_cl_candidate c = {.platform = p, .device = d, .type = type,
				    .available = available};

	snprintf(c.platform_name, sizeof(c.platform_name), "%s", pname);
	snprintf(c.device_name, sizeof(c.device_name), "%s", dname);
	return c;
}

static struct xo_cl_candidate plat_err(cl_uint p, const char *pname, cl_int err)
{
	struct xo_cl_candidate c = {.platform = p, .err = err};

	snprintf(c.platform_name, sizeof(c.platform_name), "%s", pname);
	return c;
}

#define POCL "Portable Computing Language"
#define NV "NVIDIA CUDA"

/* PoCL's CPU device on platform 0, two NVIDIA GPUs on platform 1. */
static void test_gpu_preferred(void **state)
{
	struct xo_cl_candidate c[] = {
	    dev(0, POCL, 0, "cpu-znver4-AMD Ryzen", CL_DEVICE_TYPE_CPU, true),
	    dev(1, NV, 0, "NVIDIA H100 80GB HBM3", CL_DEVICE_TYPE_GPU, true),
	    dev(1, NV, 1, "NVIDIA A100-SXM4-40GB", CL_DEVICE_TYPE_GPU, true),
	};
	char why[1024];

	(void)state;
	assert_int_equal(xo_cl_choose(c, N(c), "", why, sizeof(why)), 1);
	/* a platform part alone: that platform's GPU first, else its first device */
	assert_int_equal(xo_cl_choose(c, N(c), "0", why, sizeof(why)), 0);
	assert_int_equal(xo_cl_choose(c, N(c), "nvidia", why, sizeof(why)), 1);
	/* GPU first even when a CPU platform comes later */
	struct xo_cl_candidate r[] = {c[1], c[0]};
	r[1].platform = 1;
	r[0].platform = 0;
	assert_int_equal(xo_cl_choose(r, N(r), "", why, sizeof(why)), 0);
	/* no GPU: the first device */
	assert_int_equal(xo_cl_choose(c, 1, "", why, sizeof(why)), 0);
}

static void test_spec_index_and_name(void **state)
{
	struct xo_cl_candidate c[] = {
	    dev(0, POCL, 0, "cpu-znver4-AMD Ryzen", CL_DEVICE_TYPE_CPU, true),
	    dev(1, NV, 0, "NVIDIA H100 80GB HBM3", CL_DEVICE_TYPE_GPU, true),
	    dev(1, NV, 1, "NVIDIA A100-SXM4-40GB", CL_DEVICE_TYPE_GPU, true),
	};
	char why[1024];

	(void)state;
	assert_int_equal(xo_cl_choose(c, N(c), "1:1", why, sizeof(why)), 2);
	assert_int_equal(xo_cl_choose(c, N(c), "0:0", why, sizeof(why)), 0);
	assert_int_equal(xo_cl_choose(c, N(c), "nvidia:a100", why, sizeof(why)), 2);
	assert_int_equal(xo_cl_choose(c, N(c), "portable:0", why, sizeof(why)), 0);
	assert_int_equal(xo_cl_choose(c, N(c), ":h100", why, sizeof(why)), 1);
	assert_int_equal(xo_cl_choose(c, N(c), "2:0", why, sizeof(why)), -1);
	assert_int_equal(xo_cl_choose(c, N(c), "1:2", why, sizeof(why)), -1);
	assert_int_equal(xo_cl_choose(c, N(c), "0:no-such-xyz", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "'0:no-such-xyz'"));
	assert_non_null(strstr(why, "0 '" POCL "', 1 '" NV "'"));
	assert_null(strchr(why, '\n'));
}

/* A device reporting CL_DEVICE_AVAILABLE false is never chosen, and the
 * reason names it when nothing else matches. */
static void test_unavailable_skipped(void **state)
{
	struct xo_cl_candidate c[] = {
	    dev(0, NV, 0, "NVIDIA H100 80GB HBM3", CL_DEVICE_TYPE_GPU, false),
	    dev(0, NV, 1, "NVIDIA A100-SXM4-40GB", CL_DEVICE_TYPE_GPU, true),
	    dev(1, POCL, 0, "cpu-znver4-AMD Ryzen", CL_DEVICE_TYPE_CPU, true),
	};
	char why[1024];

	(void)state;
	assert_int_equal(xo_cl_choose(c, N(c), "", why, sizeof(why)), 1);
	c[1].available = false;
	assert_int_equal(xo_cl_choose(c, N(c), "", why, sizeof(why)), 2);
	assert_int_equal(xo_cl_choose(c, N(c), "0:0", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "not available"));
	assert_non_null(strstr(why, "0:0 'NVIDIA H100 80GB HBM3'"));
	assert_int_equal(xo_cl_choose(c, N(c), "nvidia", why, sizeof(why)), -1);
}

/* One platform's clGetDeviceIDs error does not hide the others; when nothing
 * is found the reason carries the error. */
static void test_platform_error_survived(void **state)
{
	struct xo_cl_candidate c[] = {
	    plat_err(0, NV, CL_OUT_OF_HOST_MEMORY),
	    dev(1, POCL, 0, "cpu-znver4-AMD Ryzen", CL_DEVICE_TYPE_CPU, true),
	    plat_err(2, "Intel(R) OpenCL Graphics", CL_DEVICE_NOT_FOUND),
	};
	char why[1024];

	(void)state;
	assert_int_equal(xo_cl_choose(c, N(c), "", why, sizeof(why)), 1);
	assert_int_equal(xo_cl_choose(c, N(c), "1:0", why, sizeof(why)), 1);
	assert_int_equal(xo_cl_choose(c, N(c), "0", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "0 '" NV "' (clGetDeviceIDs: CL_OUT_OF_HOST_MEMORY (-6))"));
	assert_non_null(strstr(why, "2 'Intel(R) OpenCL Graphics' (no devices)"));
	assert_int_equal(xo_cl_choose(c, 1, "", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "CL_OUT_OF_HOST_MEMORY"));
	assert_int_equal(xo_cl_choose(c, 0, "", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "platforms: none"));
}

/* The pocl row is for PoCL's CPU device only; PoCL driving an NVIDIA or AMD
 * GPU gets that vendor's row, an unknown GPU the default. */
static void test_tune_rows(void **state)
{
	(void)state;
	assert_string_equal(xo_cl_tune_lookup("AuthenticAMD", POCL, "cpu-znver4-AMD Ryzen",
					      CL_DEVICE_TYPE_CPU)->label,
			    "pocl");
	assert_string_equal(xo_cl_tune_lookup("GenuineIntel", POCL, "cpu-skylake-avx512",
					      CL_DEVICE_TYPE_CPU)->label,
			    "pocl");
	assert_string_equal(xo_cl_tune_lookup("NVIDIA Corporation", POCL, "NVIDIA H100",
					      CL_DEVICE_TYPE_GPU)->label,
			    "nvidia");
	assert_string_equal(xo_cl_tune_lookup("AMD", POCL, "gfx1100", CL_DEVICE_TYPE_GPU)->label,
			    "default");
	assert_string_equal(xo_cl_tune_lookup("Advanced Micro Devices, Inc.", POCL, "gfx1100",
					      CL_DEVICE_TYPE_GPU)->label,
			    "amd");
	assert_string_equal(xo_cl_tune_lookup("pocl", POCL, "x", CL_DEVICE_TYPE_ACCELERATOR)->label,
			    "default");
	assert_string_equal(xo_cl_tune_lookup("NVIDIA Corporation", NV, "NVIDIA H100 80GB HBM3",
					      CL_DEVICE_TYPE_GPU)->label,
			    "nvidia");
	assert_string_equal(xo_cl_device_type_name(CL_DEVICE_TYPE_GPU), "GPU");
	assert_string_equal(xo_cl_device_type_name(CL_DEVICE_TYPE_CPU), "CPU");
	assert_string_equal(xo_cl_device_type_name(CL_DEVICE_TYPE_ACCELERATOR), "accelerator");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpu_preferred),
	    cmocka_unit_test(test_spec_index_and_name),
	    cmocka_unit_test(test_unavailable_skipped),
	    cmocka_unit_test(test_platform_error_survived),
	    cmocka_unit_test(test_tune_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
