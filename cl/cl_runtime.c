/*
 * cl_runtime.c - the cl backend's runtime: OpenCL error names, device choice
 * (XO_CL_DEVICE / "cl:P:D"), the (vendor, device) tuning table, building the
 * one program, device memory with limit checks, transfers, and the lazy event
 * profiling behind struct xo_backend_stats.
 */
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl_internal.h"
#include "cl_sources.h"

/* ---- errors -------------------------------------------------------------- */

const char *xo_cl_error_name(cl_int err)
{
	switch (err) {
#define E(x) case x: return #x;
	E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE)
	E(CL_COMPILER_NOT_AVAILABLE) E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
	E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY) E(CL_PROFILING_INFO_NOT_AVAILABLE)
	E(CL_MEM_COPY_OVERLAP) E(CL_IMAGE_FORMAT_MISMATCH) E(CL_IMAGE_FORMAT_NOT_SUPPORTED)
	E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE) E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
	E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) E(CL_COMPILE_PROGRAM_FAILURE)
	E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE) E(CL_DEVICE_PARTITION_FAILED)
	E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE) E(CL_INVALID_DEVICE_TYPE)
	E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
	E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
	E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
	E(CL_INVALID_IMAGE_SIZE) E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY)
	E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE)
	E(CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL)
	E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE)
	E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
	E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST)
	E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT)
	E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_MIP_LEVEL) E(CL_INVALID_GLOBAL_WORK_SIZE)
	E(CL_INVALID_PROPERTY) E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS)
	E(CL_INVALID_LINKER_OPTIONS) E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef E
	case -1001:
		return "CL_PLATFORM_NOT_FOUND_KHR";
	default:
		return "CL_UNKNOWN_ERROR";
	}
}

enum xo_status xo_cl_fail(const char *call, cl_int err)
{
	return xo_error(XO_EOPENCL, "%s: %s (%d)", call, xo_cl_error_name(err), (int)err);
}

uint64_t xo_cl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- tuning table -------------------------------------------------------- */

/*
 * Launch sizes and -D macros per (vendor, device), first match wins; the last
 * row is the default (CLBlast's database idea, in miniature). Values are
 * clamped to the device's CL_DEVICE_MAX_WORK_GROUP_SIZE at init.
 *   NVIDIA: warps of 32, 256-wide groups keep an SM busy; 16x16 dense tiles.
 *   AMD: wavefronts of 64 (GCN) / 32 (RDNA): 256 and 16x16 likewise.
 *   Intel GPUs: SIMD8-32 EUs prefer smaller groups: 128, 8x8 tiles.
 * PoCL comes first: it runs on CPUs whose vendor string says AMD or Intel.
 *   PoCL (CPU): a work-group is a loop on one core; large groups amortise
 *   the per-group cost (1024 measured ~10% faster per seed training step
 *   than 256, 4096 no better), 8x8 tiles keep both tiles in L1.
 * softmax_row_max: a dense layer with softmax activation and at most this
 * many units runs as one launch, one work-item per row; GPUs want the
 * parallel two-launch path sooner than a CPU does.
 * dw_wg: conv1d/dense dw+db with one work-group per output, for GPUs where
 * one work-item per output leaves most lanes idle (the seed model's dw have
 * 48..3072 outputs). On PoCL the per-work-item kernel measured 2-2.5x faster
 * (its work-group loop vectorises over outputs; the tree's barriers cost).
 * dw_chunk: with dw_wg 0, the dw+db sums run in chunks of this many samples
 * (two launches: partials, then their sum) so a chunk stays in cache while
 * every output reads it; on PoCL this beat one pass over the whole batch per
 * output (see docs/opencl.md).
 * net_wg: work-items per sample (one work-group each) of the fused network
 * kernels (cl_net.c): the seed model's widest layers have 224-432 outputs,
 * so 128 (4 warps, 2 wavefronts) keeps a GPU's lanes busy with several
 * groups resident per SM/CU; 64 on Intel and the default row. PoCL runs
 * a work-group as a loop on one core and does not vectorise these kernels'
 * strided loops, so there one work-item per sample (no barrier cost)
 * measured fastest (seed training step under load: 22 ms against 29-40 ms
 * for 2-64 work-items; see docs/opencl.md).
 * rnn_nb: simple_rnn/lstm/gru run one work-group per tile of at most this
 * many samples (state in local memory, the step's dot products spread over
 * the group; cl_ops.c lowers it so that there are about as many groups as
 * compute units and the tile fits the local memory); 0 keeps one work-item
 * per sample, which has no barriers: PoCL's row (see docs/opencl.md).
 */
static const struct xo_cl_tune tune_table[] = {
	/* PoCL also drives GPUs (its CUDA and Level Zero devices): its row is
	 * for its CPU device only; a PoCL GPU falls through to its vendor's. */
	{"portable computing language", "", "pocl", 1024, 64, 8, 256, 0, 16, 1, 0, CL_DEVICE_TYPE_CPU},
	{"nvidia", "", "nvidia", 256, 256, 16, 64, 1, 0, 128, 8, 0},
	{"advanced micro devices", "", "amd", 256, 256, 16, 64, 1, 0, 128, 8, 0},
	{"intel", "", "intel", 128, 128, 8, 64, 1, 0, 64, 8, 0},
	{"", "", "default", 64, 64, 8, 64, 1, 0, 64, 8, 0},
};

const struct xo_cl_tune *xo_cl_tune_row(const char *label)
{
	for (size_t i = 0; i < sizeof(tune_table) / sizeof(tune_table[0]); i++)
		if (!strcmp(tune_table[i].label, label))
			return &tune_table[i];
	return NULL;
}

void xo_cl_build_options(const struct xo_cl_tune *t, char *opts, size_t size)
{
	snprintf(opts, size, "-cl-std=CL1.2 -DXO_RED_WG=%u -DXO_TILE=%u", t->red_wg, t->tile);
}

static bool has_substr_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	if (!n)
		return true;
	for (; *hay; hay++) {
		size_t i = 0;

		while (i < n && hay[i] &&
		       tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return true;
	}
	return false;
}

const struct xo_cl_tune *xo_cl_tune_lookup(const char *vendor, const char *platform,
					   const char *device, cl_device_type type)
{
	size_t n = sizeof(tune_table) / sizeof(tune_table[0]);

	for (size_t i = 0; i < n; i++) {
		const struct xo_cl_tune *r = &tune_table[i];

		if ((has_substr_nocase(vendor, r->vendor) ||
		     has_substr_nocase(platform, r->vendor)) &&
		    has_substr_nocase(device, r->device) && (!r->type || (type & r->type)))
			return r;
	}
	return &tune_table[n - 1];
}

/*
 * XO_CL_TUNE="key=value,..." overrides fields of the row in use (keys wg,
 * red_wg, tile, softmax_row_max, dw_wg, dw_chunk): for tuning a new device, and for
 * the suites to run the kernel variants a device's row does not pick.
 */
static enum xo_status tune_override(struct xo_cl_tune *t, const char *spec)
{
	char buf[256], *tok, *save = NULL;

	if (!spec || !*spec)
		return XO_OK;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		unsigned long v;

		if (!eq)
			goto bad;
		*eq = '\0';
		v = strtoul(eq + 1, &end, 10);
		if (*end || end == eq + 1 || v > 4096)
			goto bad;
		if (!strcmp(tok, "wg") && v >= 1)
			t->wg = (unsigned)v;
		else if (!strcmp(tok, "red_wg") && v >= 1 && !(v & (v - 1)))
			t->red_wg = (unsigned)v;
		else if (!strcmp(tok, "tile") && v >= 1)
			t->tile = (unsigned)v;
		else if (!strcmp(tok, "softmax_row_max"))
			t->softmax_row_max = (unsigned)v;
		else if (!strcmp(tok, "dw_wg") && v <= 1)
			t->dw_wg = (unsigned)v;
		else if (!strcmp(tok, "dw_chunk"))
			t->dw_chunk = (unsigned)v;
		else if (!strcmp(tok, "net_wg") && v >= 1)
			t->net_wg = (unsigned)v;
		else if (!strcmp(tok, "rnn_nb"))
			t->rnn_nb = (unsigned)v;
		else
			goto bad;
	}
	return XO_OK;
bad:
	return xo_error(XO_EINVAL,
			"cl: bad XO_CL_TUNE '%s' (want key=value,... with keys wg, red_wg "
			"(power of 2), tile, softmax_row_max, dw_wg (0/1), dw_chunk, net_wg, rnn_nb)",
			spec);
}

/* ---- device choice ------------------------------------------------------- */

static void platform_str(cl_platform_id p, cl_platform_info what, char *buf, size_t size)
{
	buf[0] = '\0';
	if (clGetPlatformInfo(p, what, size, buf, NULL) != CL_SUCCESS)
		snprintf(buf, size, "?");
	buf[size - 1] = '\0';
}

static void device_str(cl_device_id d, cl_device_info what, char *buf, size_t size)
{
	buf[0] = '\0';
	if (clGetDeviceInfo(d, what, size, buf, NULL) != CL_SUCCESS)
		snprintf(buf, size, "?");
	buf[size - 1] = '\0';
}

static bool is_index(const char *s, long *out)
{
	char *end;

	if (!*s || !isdigit((unsigned char)*s))
		return false;
	*out = strtol(s, &end, 10);
	return *end == '\0';
}

/* Does part ("" = any, an index, or a name substring) select item i named name? */
static bool part_matches(const char *part, cl_uint i, const char *name)
{
	long idx;

	if (!*part)
		return true;
	if (is_index(part, &idx))
		return idx == (long)i;
	return has_substr_nocase(name, part);
}

#define XO_CL_MAX_PLATFORMS 16
#define XO_CL_MAX_DEVICES 32

const char *xo_cl_device_type_name(cl_device_type type)
{
	if (type & CL_DEVICE_TYPE_GPU)
		return "GPU";
	if (type & CL_DEVICE_TYPE_CPU)
		return "CPU";
	if (type & CL_DEVICE_TYPE_ACCELERATOR)
		return "accelerator";
	if (type & CL_DEVICE_TYPE_CUSTOM)
		return "custom";
	return "other";
}

/* Appends printf-style text to buf (cut at size, always terminated). */
static void appendf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

int xo_cl_choose(const struct xo_cl_candidate *cand, size_t n, const char *spec, char *why,
		 size_t why_size)
{
	char ppart[128] = "", dpart[128] = "";
	const char *colon = strchr(spec, ':');
	bool dev_given, skipped = false;

	if (colon) {
		snprintf(ppart, sizeof(ppart), "%.*s", (int)(colon - spec), spec);
		snprintf(dpart, sizeof(dpart), "%s", colon + 1);
	} else {
		snprintf(ppart, sizeof(ppart), "%s", spec);
	}
	dev_given = dpart[0] != '\0';

	/* Two passes without a device part: GPUs first, then any device. */
	for (int pass = dev_given ? 1 : 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			const struct xo_cl_candidate *c = &cand[i];

			if (c->err != CL_SUCCESS || !part_matches(ppart, c->platform, c->platform_name) ||
			    (pass == 0 && !(c->type & CL_DEVICE_TYPE_GPU)) ||
			    !part_matches(dpart, c->device, c->device_name))
				continue;
			if (c->available)
				return (int)i;
			skipped = true;
		}
	}

	why[0] = '\0';
	appendf(why, why_size,
		"cl: no OpenCL device matches '%s' (platform:device, indices or name substrings; "
		"platforms:",
		spec);
	for (size_t i = 0; i < n; i++) {
		const struct xo_cl_candidate *c = &cand[i];

		if (i > 0 && cand[i - 1].platform == c->platform)
			continue;
		appendf(why, why_size, "%s %u '%s'", i ? "," : "", c->platform, c->platform_name);
		if (c->err == CL_DEVICE_NOT_FOUND)
			appendf(why, why_size, " (no devices)");
		else if (c->err != CL_SUCCESS)
			appendf(why, why_size, " (clGetDeviceIDs: %s (%d))", xo_cl_error_name(c->err),
				(int)c->err);
	}
	if (!n)
		appendf(why, why_size, " none");
	if (skipped) {
		appendf(why, why_size, "; not available (CL_DEVICE_AVAILABLE false):");
		for (size_t i = 0, k = 0; i < n; i++)
			if (cand[i].err == CL_SUCCESS && !cand[i].available)
				appendf(why, why_size, "%s %u:%u '%s'", k++ ? "," : "", cand[i].platform,
					cand[i].device, cand[i].device_name);
	}
	appendf(why, why_size, ")");
	return -1;
}

enum xo_status xo_cl_candidates(struct xo_cl_candidate **out, size_t *count)
{
	cl_platform_id plats[XO_CL_MAX_PLATFORMS];
	struct xo_cl_candidate *cand;
	cl_uint nplat = 0;
	size_t n = 0;
	cl_int err;

	*out = NULL;
	*count = 0;
	err = clGetPlatformIDs(XO_CL_MAX_PLATFORMS, plats, &nplat);
	if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && nplat == 0))
		return xo_error(XO_ENODEV,
				"cl: no OpenCL platform found (is an ICD installed? e.g. "
				"pocl-opencl-icd)");
	if (err != CL_SUCCESS)
		return xo_cl_fail("clGetPlatformIDs", err);
	if (nplat > XO_CL_MAX_PLATFORMS)
		nplat = XO_CL_MAX_PLATFORMS;
	cand = calloc((size_t)nplat * XO_CL_MAX_DEVICES, sizeof(*cand));
	if (!cand)
		return xo_error(XO_ENOMEM, "cl: out of memory");

	for (cl_uint p = 0; p < nplat; p++) {
		cl_device_id devs[XO_CL_MAX_DEVICES];
		cl_uint ndev = 0;
		struct xo_cl_candidate base = {.platform = p, .platform_id = plats[p]};

		platform_str(plats[p], CL_PLATFORM_NAME, base.platform_name,
			     sizeof(base.platform_name));
		base.err = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, XO_CL_MAX_DEVICES, devs, &ndev);
		if (base.err == CL_SUCCESS && ndev == 0)
			base.err = CL_DEVICE_NOT_FOUND;
		if (base.err != CL_SUCCESS) {
			cand[n++] = base;
			continue;
		}
		if (ndev > XO_CL_MAX_DEVICES)
			ndev = XO_CL_MAX_DEVICES;
		for (cl_uint d = 0; d < ndev; d++) {
			struct xo_cl_candidate *c = &cand[n++];
			cl_bool avail = CL_TRUE;

			*c = base;
			c->device = d;
			c->device_id = devs[d];
			device_str(devs[d], CL_DEVICE_NAME, c->device_name, sizeof(c->device_name));
			if (clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof(c->type), &c->type, NULL) !=
			    CL_SUCCESS)
				c->type = 0;
			/* A failed query leaves it available: clCreateContext then
			 * reports what is wrong with it. */
			clGetDeviceInfo(devs[d], CL_DEVICE_AVAILABLE, sizeof(avail), &avail, NULL);
			c->available = avail != CL_FALSE;
		}
	}
	*out = cand;
	*count = n;
	return XO_OK;
}

/*
 * Picks platform and device from "P:D", "P" or "" (then XO_CL_DEVICE): lists
 * every platform's devices (a platform whose clGetDeviceIDs fails is noted
 * and the others still count), then xo_cl_choose.
 */
static enum xo_status choose_device(const char *spec, struct xo_cl_ctx *ctx)
{
	struct xo_cl_candidate *cand;
	size_t n = 0;
	char why[1024];
	const char *env;
	enum xo_status st;
	int pick;

	if (!spec || !*spec) {
		env = getenv("XO_CL_DEVICE");
		spec = env ? env : "";
	}
	if ((st = xo_cl_candidates(&cand, &n)))
		return st;
	pick = xo_cl_choose(cand, n, spec, why, sizeof(why));
	if (pick < 0) {
		st = xo_error(XO_ENODEV, "%s", why);
	} else {
		ctx->platform = cand[pick].platform_id;
		ctx->device = cand[pick].device_id;
		ctx->type = cand[pick].type;
	}
	free(cand);
	return st;
}

/*
 * XO_REQUIRE_OPENCL=gpu (ci/gpu.sh): the chosen device must be a GPU, so a
 * run meant for the GPU never measures PoCL's CPU device instead.
 */
static enum xo_status require_gpu(const struct xo_cl_ctx *c, const char *pname, const char *dname)
{
	const char *req = getenv("XO_REQUIRE_OPENCL");

	if (!req || strcmp(req, "gpu") || (c->type & CL_DEVICE_TYPE_GPU))
		return XO_OK;
	return xo_error(XO_ENODEV,
			"cl: XO_REQUIRE_OPENCL=gpu but the chosen device '%s' (platform '%s') is "
			"not a GPU (CL_DEVICE_TYPE %s; XO_CL_DEVICE picks another)",
			dname, pname, xo_cl_device_type_name(c->type));
}

/* ---- program ------------------------------------------------------------- */

static const char *const kernel_names[] = {
#define XO_CL_K(name) "xo_cl_" #name,
	XO_CL_KERNELS(XO_CL_K)
#undef XO_CL_K
};

const char *xo_cl_kernel_name(enum xo_cl_kid kid)
{
	return kernel_names[kid];
}

char *xo_cl_program_source(void)
{
	size_t total = 1, n = 0;
	char *text;

	/* A #line before each file, so build logs name conv.cl:12, not line
	 * 412 of the concatenation. */
	for (int i = 0; i < xo_cl_nsources; i++)
		total += strlen(xo_cl_sources[i].name) + 16 + strlen(xo_cl_sources[i].text);
	text = malloc(total);
	if (!text)
		return NULL;
	for (int i = 0; i < xo_cl_nsources; i++)
		n += (size_t)snprintf(text + n, total - n, "#line 1 \"%s\"\n%s", xo_cl_sources[i].name,
				      xo_cl_sources[i].text);
	return text;
}

static enum xo_status build_program(struct xo_cl_ctx *c)
{
	char opts[512], *log = NULL, *text;
	const char *extra = getenv("XO_CL_BUILD_OPTIONS");
	size_t loglen = 0;
	cl_int err;

	XO_ASSERT(xo_cl_nsources > 0);
	text = xo_cl_program_source();
	if (!text)
		return xo_error(XO_ENOMEM, "cl: out of memory for the program source");
	c->program = clCreateProgramWithSource(c->context, 1, (const char **)&text, NULL, &err);
	free(text);
	if (err != CL_SUCCESS)
		return xo_cl_fail("clCreateProgramWithSource", err);
	/* No -cl-fast-relaxed-math / -cl-mad-enable: exact rounding per op.
	 * XO_CL_BUILD_OPTIONS appends options (experiments, and the suite's
	 * build-failure test). */
	xo_cl_build_options(&c->tune, opts, sizeof(opts));
	snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts), "%s%s", extra ? " " : "",
		 extra ? extra : "");
	err = clBuildProgram(c->program, 1, &c->device, opts, NULL, NULL);
	/* The log on failure, or always with XO_CL_BUILD_LOG=1 (warnings). */
	if (err != CL_SUCCESS || getenv("XO_CL_BUILD_LOG")) {
		clGetProgramBuildInfo(c->program, c->device, CL_PROGRAM_BUILD_LOG, 0, NULL,
				      &loglen);
		log = loglen ? malloc(loglen + 1) : NULL;
		if (log && clGetProgramBuildInfo(c->program, c->device, CL_PROGRAM_BUILD_LOG,
						 loglen, log, NULL) == CL_SUCCESS) {
			log[loglen] = '\0';
			fprintf(stderr, "cl: program build log (options %s):\n%s\n", opts, log);
		}
		free(log);
	}
	if (err != CL_SUCCESS) {
		return xo_error(XO_EOPENCL, "clBuildProgram: %s (%d) (build log on stderr)",
				xo_cl_error_name(err), (int)err);
	}
	for (int k = 0; k < XO_CL_K_COUNT; k++) {
		const char *name = xo_cl_kernel_name((enum xo_cl_kid)k);
		char what[96];

		c->kernel[k] = clCreateKernel(c->program, name, &err);
		if (err != CL_SUCCESS) {
			snprintf(what, sizeof(what), "clCreateKernel(%s)", name);
			return xo_cl_fail(what, err);
		}
		err = clGetKernelWorkGroupInfo(c->kernel[k], c->device, CL_KERNEL_WORK_GROUP_SIZE,
					       sizeof(size_t), &c->kernel_wg[k], NULL);
		if (err != CL_SUCCESS) {
			snprintf(what, sizeof(what), "clGetKernelWorkGroupInfo(%s)", name);
			return xo_cl_fail(what, err);
		}
	}
	/* The reductions need their full work-group (reqd_work_group_size). */
	if (c->kernel_wg[XO_CL_K_categorical_crossentropy_fwd] < c->tune.red_wg ||
	    c->kernel_wg[XO_CL_K_accuracy_fwd] < c->tune.red_wg ||
	    c->kernel_wg[XO_CL_K_binary_crossentropy_fwd] < c->tune.red_wg ||
	    c->kernel_wg[XO_CL_K_mean_squared_error_fwd] < c->tune.red_wg ||
	    c->kernel_wg[XO_CL_K_binary_accuracy_fwd] < c->tune.red_wg ||
	    c->kernel_wg[XO_CL_K_sparse_categorical_crossentropy_fwd] < c->tune.red_wg ||
	    c->kernel_wg[XO_CL_K_sparse_categorical_accuracy_fwd] < c->tune.red_wg)
		return xo_error(XO_ERESOURCE,
				"cl: device cannot run reduction work-groups of %u work-items",
				c->tune.red_wg);
	return XO_OK;
}

/* ---- init / free --------------------------------------------------------- */

static unsigned pow2_floor(size_t v)
{
	unsigned p = 1;

	while ((size_t)p * 2 <= v && p < (1u << 30))
		p *= 2;
	return p;
}

enum xo_status xo_cl_init(struct xo_backend *be, const char *spec)
{
	struct xo_cl_ctx *c;
	char pname[128], pver[128], vendor[128], dname[128], dver[96], drv[64];
	size_t maxwg = 1;
	cl_int err, zero = 0;
	enum xo_status st;

	c = calloc(1, sizeof(*c));
	if (!c)
		return xo_error(XO_ENOMEM, "cl: out of memory");
	be->ctx = c;
	st = choose_device(spec, c);
	if (st)
		goto out_free;
	platform_str(c->platform, CL_PLATFORM_NAME, pname, sizeof(pname));
	platform_str(c->platform, CL_PLATFORM_VERSION, pver, sizeof(pver));
	device_str(c->device, CL_DEVICE_VENDOR, vendor, sizeof(vendor));
	device_str(c->device, CL_DEVICE_NAME, dname, sizeof(dname));
	device_str(c->device, CL_DEVICE_VERSION, dver, sizeof(dver));
	device_str(c->device, CL_DRIVER_VERSION, drv, sizeof(drv));
	clGetDeviceInfo(c->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(maxwg), &maxwg, NULL);
	c->max_item[0] = c->max_item[1] = c->max_item[2] = 1;
	clGetDeviceInfo(c->device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(c->max_item),
			c->max_item, NULL);
	clGetDeviceInfo(c->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(c->max_alloc),
			&c->max_alloc, NULL);
	clGetDeviceInfo(c->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(c->global_mem),
			&c->global_mem, NULL);
	st = require_gpu(c, pname, dname);
	if (st)
		goto out_free;

	c->tune = *xo_cl_tune_lookup(vendor, pname, dname, c->type);
	st = tune_override(&c->tune, getenv("XO_CL_TUNE"));
	if (st)
		goto out_free;
	if (c->tune.wg > maxwg)
		c->tune.wg = (unsigned)maxwg;
	if (c->tune.net_wg > maxwg)
		c->tune.net_wg = (unsigned)maxwg;
	if (c->tune.red_wg > maxwg)
		c->tune.red_wg = pow2_floor(maxwg);
	while (c->tune.tile > 1 && (size_t)c->tune.tile * c->tune.tile > maxwg)
		c->tune.tile /= 2;

	/* A description longer than desc is cut; that is fine for a label. */
	if (snprintf(be->desc, sizeof(be->desc),
		     "cl: %s | %s | driver %s | %s | platform %.60s | tune %s (wg %u, red %u, "
		     "tile %u, dw_wg %u, dw_chunk %u, net_wg %u, rnn_nb %u)",
		     pname, dname, drv, dver, pver, c->tune.label, c->tune.wg, c->tune.red_wg,
		     c->tune.tile, c->tune.dw_wg, c->tune.dw_chunk, c->tune.net_wg,
		     c->tune.rnn_nb) >= (int)sizeof(be->desc))
		be->desc[sizeof(be->desc) - 1] = '\0';

	c->context = clCreateContext(NULL, 1, &c->device, NULL, NULL, &err);
	if (err != CL_SUCCESS) {
		st = xo_cl_fail("clCreateContext", err);
		goto out_free;
	}
	c->queue = clCreateCommandQueue(c->context, c->device, CL_QUEUE_PROFILING_ENABLE, &err);
	if (err != CL_SUCCESS) {
		st = xo_cl_fail("clCreateCommandQueue", err);
		goto out_free;
	}
	st = build_program(c);
	if (st)
		goto out_free;
	c->flag = clCreateBuffer(c->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
				 sizeof(cl_int), &zero, &err);
	if (err != CL_SUCCESS) {
		st = xo_cl_fail("clCreateBuffer(gather flag)", err);
		goto out_free;
	}
	return XO_OK;

out_free:
	xo_cl_free(be);
	return st;
}

static void resolve_events(struct xo_cl_ctx *c, bool all_done);

void xo_cl_free(struct xo_backend *be)
{
	struct xo_cl_ctx *c = be->ctx;

	if (!c)
		return;
	if (c->queue)
		clFinish(c->queue);
	resolve_events(c, true);
	free(c->pend);
	if (c->net_free)
		c->net_free(c);
	for (int i = 0; i < 2; i++)
		if (c->scratch[i])
			clReleaseMemObject(c->scratch[i]);
	if (c->flag)
		clReleaseMemObject(c->flag);
	for (int k = 0; k < XO_CL_K_COUNT; k++)
		if (c->kernel[k])
			clReleaseKernel(c->kernel[k]);
	if (c->program)
		clReleaseProgram(c->program);
	if (c->queue)
		clReleaseCommandQueue(c->queue);
	if (c->context)
		clReleaseContext(c->context);
	free(c);
	be->ctx = NULL;
}

void xo_cl_limits(struct xo_backend *be, uint64_t *max_alloc, uint64_t *global_mem)
{
	struct xo_cl_ctx *c = be->ctx;

	*max_alloc = c->max_alloc;
	*global_mem = c->global_mem;
}

/* ---- events and stats ---------------------------------------------------- */

/*
 * Adds the profiled time of finished events to the stats and drops them; with
 * all_done the queue is known to be drained (after clFinish or a blocking read
 * on the in-order queue). Never blocks.
 *
 * An event's times are read only when its status is CL_COMPLETE and both
 * clGetEventProfilingInfo calls succeed with END >= START. Anything else (a
 * failed command: negative status; an event with no profiling info, such as
 * a user event: CL_PROFILING_INFO_NOT_AVAILABLE; a status query that fails;
 * an event still not complete when the queue is drained) adds 0 ns and counts
 * in stats.untimed_events, so a split that lost events says so instead of
 * reading as a fast device.
 */
bool xo_cl_event_timed(cl_int state, cl_int err_start, cl_int err_end, cl_ulong t0,
		       cl_ulong t1)
{
	return state == CL_COMPLETE && err_start == CL_SUCCESS && err_end == CL_SUCCESS &&
	       t1 >= t0;
}

static void resolve_events(struct xo_cl_ctx *c, bool all_done)
{
	size_t keep = 0;

	for (size_t i = 0; i < c->npend; i++) {
		struct xo_cl_pending *e = &c->pend[i];
		cl_ulong t0 = 0, t1 = 0;
		cl_int state = CL_QUEUED, e0, e1;
		bool timed;

		if (clGetEventInfo(e->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(state), &state,
				   NULL) != CL_SUCCESS)
			state = -1; /* unknown: treated like a failed command */
		if (!all_done && state > CL_COMPLETE) {
			c->pend[keep++] = *e;
			continue;
		}
		e0 = clGetEventProfilingInfo(e->ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, NULL);
		e1 = clGetEventProfilingInfo(e->ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, NULL);
		timed = xo_cl_event_timed(state, e0, e1, t0, t1);
		if (timed) {
			/* The queue is in order, so commands run one after another;
			 * some drivers (PoCL) stamp START when a command is submitted,
			 * while its predecessor still runs. Count only the part after
			 * the previous command ended, so the split never adds up to
			 * more than the device was busy. */
			cl_ulong start = t0 > c->busy_until ? t0 : c->busy_until;
			uint64_t ns = t1 > start ? t1 - start : 0;

			c->stats.timed_events++;
			if (t1 > c->busy_until)
				c->busy_until = t1;

			switch (e->kind) {
			case XO_CL_EV_KERNEL:
				c->stats.kernel_ns += ns;
				if (e->op < 0)
					c->stats.net_ns += ns;
				else
					c->stats.op_ns[e->op][e->dir] += ns;
				break;
			case XO_CL_EV_H2D:
				c->stats.h2d_ns += ns;
				break;
			case XO_CL_EV_D2H:
				c->stats.d2h_ns += ns;
				break;
			}
		} else {
			c->stats.untimed_events++;
		}
		clReleaseEvent(e->ev);
	}
	c->npend = keep;
}

enum xo_status xo_cl_track(struct xo_cl_ctx *c, cl_event ev, enum xo_cl_evkind kind, int op,
			   int dir)
{
	if (c->npend == c->cap) {
		resolve_events(c, false);
		if (c->npend == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 256;
			struct xo_cl_pending *p = realloc(c->pend, cap * sizeof(*p));

			if (!p) {
				clReleaseEvent(ev);
				return xo_error(XO_ENOMEM, "cl: out of memory for events");
			}
			c->pend = p;
			c->cap = cap;
		}
	}
	c->pend[c->npend++] = (struct xo_cl_pending){ev, kind, op, dir};
	return XO_OK;
}

void xo_cl_stats_get(struct xo_backend *be, struct xo_backend_stats *out)
{
	struct xo_cl_ctx *c = be->ctx;

	resolve_events(c, false);
	*out = c->stats;
}

void xo_cl_stats_reset(struct xo_backend *be)
{
	struct xo_cl_ctx *c = be->ctx;

	/* Events enqueued before the reset belong to the old period. */
	clFinish(c->queue);
	resolve_events(c, true);
	memset(&c->stats, 0, sizeof(c->stats));
}

/* ---- memory -------------------------------------------------------------- */

enum xo_status xo_cl_alloc(struct xo_backend *be, struct xo_tensor *t)
{
	struct xo_cl_ctx *c = be->ctx;
	uint64_t bytes = (uint64_t)t->capacity * 4u;
	cl_float zero = 0.0f;
	cl_event ev;
	cl_mem m;
	cl_int err;
	uint64_t t0;

	if (bytes > c->max_alloc)
		return xo_error(XO_ERESOURCE,
				"cl: a tensor of %" PRIu64 " bytes exceeds CL_DEVICE_MAX_MEM_ALLOC_SIZE "
				"(%" PRIu64 " bytes)",
				bytes, (uint64_t)c->max_alloc);
	if (c->used + bytes > c->global_mem)
		return xo_error(XO_ERESOURCE,
				"cl: %" PRIu64 " more bytes would exceed CL_DEVICE_GLOBAL_MEM_SIZE "
				"(%" PRIu64 " bytes, %" PRIu64 " in use)",
				bytes, (uint64_t)c->global_mem, (uint64_t)c->used);
	/* Kernels index with int (cl/kernels/common.cl). */
	if (t->capacity > INT_MAX)
		return xo_error(XO_ERESOURCE,
				"cl: a tensor of %" PRId64 " elements exceeds the kernels' 32-bit "
				"indexing (%d)",
				t->capacity, INT_MAX);
	m = clCreateBuffer(c->context, CL_MEM_READ_WRITE, (size_t)bytes, NULL, &err);
	if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
	    err == CL_INVALID_BUFFER_SIZE)
		return xo_error(XO_ERESOURCE, "clCreateBuffer(%" PRIu64 " bytes): %s (%d)", bytes,
				xo_cl_error_name(err), (int)err);
	if (err != CL_SUCCESS)
		return xo_cl_fail("clCreateBuffer", err);
	/* Zero-filled like the host backends' calloc. */
	t0 = xo_cl_now_ns();
	err = clEnqueueFillBuffer(c->queue, m, &zero, sizeof(zero), 0, (size_t)bytes, 0, NULL,
				  &ev);
	c->stats.enqueue_ns += xo_cl_now_ns() - t0;
	if (err != CL_SUCCESS) {
		clReleaseMemObject(m);
		return xo_cl_fail("clEnqueueFillBuffer", err);
	}
	clReleaseEvent(ev);
	c->used += bytes;
	t->data = m;
	return XO_OK;
}

void xo_cl_release(struct xo_backend *be, struct xo_tensor *t)
{
	struct xo_cl_ctx *c = be->ctx;

	if (!t->data)
		return;
	/* Safe with commands in flight: OpenCL keeps the buffer until they finish. */
	clReleaseMemObject((cl_mem)t->data);
	c->used -= (uint64_t)t->capacity * 4u;
	t->data = NULL;
}

enum xo_status xo_cl_scratch(struct xo_cl_ctx *c, int slot, size_t bytes, cl_mem *out)
{
	cl_int err;

	XO_ASSERT(slot == 0 || slot == 1);
	if (c->scratch_bytes[slot] < bytes) {
		if (bytes > c->max_alloc ||
		    c->used + bytes - c->scratch_bytes[slot] > c->global_mem)
			return xo_error(XO_ERESOURCE,
					"cl: a %zu-byte temporary exceeds the device memory limits",
					bytes);
		/* In-order queue: commands still using the old buffer keep it
		 * alive until they finish. */
		if (c->scratch[slot])
			clReleaseMemObject(c->scratch[slot]);
		c->used -= c->scratch_bytes[slot];
		c->scratch_bytes[slot] = 0;
		c->scratch[slot] = clCreateBuffer(c->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
		if (err != CL_SUCCESS) {
			c->scratch[slot] = NULL;
			return xo_cl_fail("clCreateBuffer(scratch)", err);
		}
		c->scratch_bytes[slot] = bytes;
		c->used += bytes;
	}
	*out = c->scratch[slot];
	return XO_OK;
}

/* ---- transfers and sync -------------------------------------------------- */

/* Reads and clears the gather flag (the queue is drained when this runs). */
static enum xo_status check_gather_flag(struct xo_cl_ctx *c)
{
	cl_int flag = 0, zero = 0;
	cl_int err;
	uint64_t t0;

	if (!c->gather_pending)
		return XO_OK;
	c->gather_pending = false;
	t0 = xo_cl_now_ns();
	err = clEnqueueReadBuffer(c->queue, c->flag, CL_TRUE, 0, sizeof(flag), &flag, 0, NULL,
				  NULL);
	c->stats.wait_ns += xo_cl_now_ns() - t0;
	if (err != CL_SUCCESS)
		return xo_cl_fail("clEnqueueReadBuffer(gather flag)", err);
	if (!flag)
		return XO_OK;
	err = clEnqueueWriteBuffer(c->queue, c->flag, CL_TRUE, 0, sizeof(zero), &zero, 0, NULL,
				   NULL);
	if (err != CL_SUCCESS)
		return xo_cl_fail("clEnqueueWriteBuffer(gather flag)", err);
	return xo_error(XO_EINVAL,
			"gather/embedding: an index was outside [0, rows); those rows were written as zeros");
}

enum xo_status xo_cl_write_mem(struct xo_cl_ctx *c, cl_mem m, size_t off, size_t bytes,
			       const void *src, const char *what)
{
	cl_event ev;
	cl_int err;
	uint64_t t0 = xo_cl_now_ns();

	/* Blocking: the caller may reuse src at once. Its wall time counts as
	 * enqueue time; the transfer itself is the event's h2d time. */
	err = clEnqueueWriteBuffer(c->queue, m, CL_TRUE, off, bytes, src, 0, NULL, &ev);
	c->stats.enqueue_ns += xo_cl_now_ns() - t0;
	if (err != CL_SUCCESS)
		return xo_cl_fail(what, err);
	return xo_cl_track(c, ev, XO_CL_EV_H2D, 0, 0);
}

enum xo_status xo_cl_write(struct xo_backend *be, struct xo_tensor *t, const void *src,
			   int64_t off, int64_t count)
{
	return xo_cl_write_mem(be->ctx, (cl_mem)t->data, (size_t)off * 4, (size_t)count * 4, src,
			       "clEnqueueWriteBuffer");
}

enum xo_status xo_cl_read(struct xo_backend *be, const struct xo_tensor *t, void *dst,
			  int64_t off, int64_t count)
{
	struct xo_cl_ctx *c = be->ctx;
	enum xo_status st;
	cl_event ev;
	cl_int err;
	uint64_t t0 = xo_cl_now_ns();

	/* Blocking on an in-order queue: this is where the host waits for
	 * every op enqueued before. */
	err = clEnqueueReadBuffer(c->queue, (cl_mem)t->data, CL_TRUE, (size_t)off * 4,
				  (size_t)count * 4, dst, 0, NULL, &ev);
	c->stats.wait_ns += xo_cl_now_ns() - t0;
	if (err != CL_SUCCESS)
		return xo_cl_fail("clEnqueueReadBuffer", err);
	st = xo_cl_track(c, ev, XO_CL_EV_D2H, 0, 0);
	if (st)
		return st;
	resolve_events(c, true);
	return check_gather_flag(c);
}

enum xo_status xo_cl_sync(struct xo_backend *be)
{
	struct xo_cl_ctx *c = be->ctx;
	cl_int err;
	uint64_t t0 = xo_cl_now_ns();

	err = clFinish(c->queue);
	c->stats.wait_ns += xo_cl_now_ns() - t0;
	if (err != CL_SUCCESS)
		return xo_cl_fail("clFinish", err);
	resolve_events(c, true);
	return check_gather_flag(c);
}
