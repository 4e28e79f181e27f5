/*
 * cl_internal.h - what the cl backend's files share: the context, the kernel
 * list, the tuning row, and the launch/event helpers. Suites may include it
 * (suites/test_cl.c checks error-name translation and the device limits).
 *
 * The files call downwards only: cl_runtime.c (context, program, memory,
 * events) calls none of the others; cl_launch.c (launches, what the ops and
 * the fused path share) calls the runtime; cl_ops.c, cl_net.c and
 * cl_probe.c call those two and not each other; cl.c, the backend's entry
 * table, names them all. Where the runtime must reach a file above it (the
 * fused path's buffers at xo_cl_free), the context holds a hook.
 */
#ifndef XO_CL_INTERNAL_H
#define XO_CL_INTERNAL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "xo/backend.h"
#include "xo/cl.h"

/*
 * Every kernel of the cl/kernels sources, XO_CL_KERNELS(K): one K(name) per
 * `__kernel ... void xo_cl_<name>(` of the sources, in the order of the
 * program, generated from them at build time (cl/embed.cmake), so a new
 * kernel is named only where it is written.
 */
#include "cl_kernels.h"

enum xo_cl_kid {
#define XO_CL_K(name) XO_CL_K_##name,
	XO_CL_KERNELS(XO_CL_K)
#undef XO_CL_K
	XO_CL_K_COUNT
};

/* One row of the (vendor, device) tuning table: the -D macros of the program
 * and the launch sizes (cl_runtime.c). */
struct xo_cl_tune {
	const char *vendor; /* case-insensitive substring of CL_DEVICE_VENDOR / platform name, "" = any */
	const char *device; /* substring of CL_DEVICE_NAME, "" = any */
	const char *label;  /* row name in be->desc and docs/opencl.md */
	unsigned wg;        /* work-group size of the 1-D elementwise/gather kernels */
	unsigned red_wg;    /* XO_RED_WG: single-work-group reductions (power of 2) */
	unsigned tile;      /* XO_TILE: tiled dense edge (tile^2 work-items) */
	unsigned softmax_row_max; /* dense+softmax in one launch up to this many units */
	unsigned dw_wg;     /* 1: dw+db as one work-group per output (GPUs); 0: per work-item */
	unsigned dw_chunk;  /* dw_wg 0: samples per chunk of the split dw kernels (0 = no split) */
	unsigned net_wg;    /* work-items per sample of the fused network kernels (cl_net.c) */
	unsigned rnn_nb;    /* recurrent ops: most samples per work-group of the __wg kernels;
	                     * 0 = one work-item per sample (the general kernels) */
	cl_device_type type; /* CL_DEVICE_TYPE_* bit the device must have, 0 = any */
};

/* The tuning row named label ("pocl", "nvidia", ..., "default"), NULL when
 * none; and the build options (without XO_CL_BUILD_OPTIONS) the program gets
 * for a row. Suites compile the program offline for GPU targets with them. */
const struct xo_cl_tune *xo_cl_tune_row(const char *label);
void xo_cl_build_options(const struct xo_cl_tune *t, char *opts, size_t size);
/* The row for a device: the first whose vendor matches CL_DEVICE_VENDOR or
 * the platform name, whose device matches CL_DEVICE_NAME and whose type (if
 * any) is among the device's type bits; the default row otherwise. Pure. */
const struct xo_cl_tune *xo_cl_tune_lookup(const char *vendor, const char *platform,
					   const char *device, cl_device_type type);

/* The program's source as the backend builds it: every cl/kernels file in order,
 * each after a #line directive; malloc'd, NULL when out of memory. */
char *xo_cl_program_source(void);

/* Where an event's time goes. */
enum xo_cl_evkind { XO_CL_EV_KERNEL, XO_CL_EV_H2D, XO_CL_EV_D2H };

struct xo_cl_pending {
	cl_event ev;              /* profiling event, released once resolved */
	enum xo_cl_evkind kind;   /* kernel or transfer */
	int op, dir;              /* kernel: op and direction it ran for; op -1: a
	                           * fused whole-network kernel (stats.net_ns) */
};

struct xo_cl_ctx {
	cl_platform_id platform;
	cl_device_id device;
	cl_device_type type;      /* CL_DEVICE_TYPE of device */
	cl_context context;
	cl_command_queue queue;   /* in-order, profiling enabled */
	cl_program program;       /* all kernels, built once */
	cl_kernel kernel[XO_CL_K_COUNT];
	size_t kernel_wg[XO_CL_K_COUNT]; /* CL_KERNEL_WORK_GROUP_SIZE of each */
	size_t max_item[3];       /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
	struct xo_cl_tune tune;   /* the row in use, clamped to the device */
	cl_ulong max_alloc;       /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
	cl_ulong global_mem;      /* CL_DEVICE_GLOBAL_MEM_SIZE */
	cl_ulong used;            /* bytes of live buffers made by this backend */
	cl_mem flag;              /* one int: a gather index was out of range */
	bool gather_pending;      /* a gather ran since the flag was last read */
	cl_mem scratch[2];        /* temporaries: [0] dpre of softmax backward and the
	                           * recurrent ops' step gradients, [1] dw partials */
	size_t scratch_bytes[2];
	struct xo_cl_net *net;    /* the fused network path's buffers (cl_net.c), NULL until used */
	/* releases net (xo_cl_free calls it): set by cl_net.c along with net, so
	 * the runtime frees the path's buffers without calling up into it */
	void (*net_free)(struct xo_cl_ctx *c);
	struct xo_cl_pending *pend; /* events not yet read back */
	size_t npend, cap;
	cl_ulong busy_until;           /* device time the last resolved command ended */
	struct xo_backend_stats stats;
};

/* "CL_INVALID_WORK_GROUP_SIZE" for -54; "CL_UNKNOWN_ERROR" when unknown. */
const char *xo_cl_error_name(cl_int err);
/* xo_error(XO_EOPENCL, "CALL: NAME (ERR)"). */
enum xo_status xo_cl_fail(const char *call, cl_int err);

/* Backend entry points (cl_runtime.c). */
enum xo_status xo_cl_init(struct xo_backend *be, const char *spec);
void xo_cl_free(struct xo_backend *be);
enum xo_status xo_cl_alloc(struct xo_backend *be, struct xo_tensor *t);
void xo_cl_release(struct xo_backend *be, struct xo_tensor *t);
enum xo_status xo_cl_write(struct xo_backend *be, struct xo_tensor *t, const void *src,
			   int64_t off, int64_t count);
enum xo_status xo_cl_read(struct xo_backend *be, const struct xo_tensor *t, void *dst,
			  int64_t off, int64_t count);
enum xo_status xo_cl_sync(struct xo_backend *be);
void xo_cl_stats_get(struct xo_backend *be, struct xo_backend_stats *out);
void xo_cl_stats_reset(struct xo_backend *be);

/* Device limits of an open cl backend (for the suites). */
void xo_cl_limits(struct xo_backend *be, uint64_t *max_alloc, uint64_t *global_mem);

/* Whether an event's profiling times count: its execution status is
 * CL_COMPLETE (a failed command's status is negative, an unfinished one's
 * positive), both clGetEventProfilingInfo calls succeeded and END >= START.
 * The rest are counted in stats.untimed_events and add 0 ns. */
bool xo_cl_event_timed(cl_int state, cl_int err_start, cl_int err_end, cl_ulong t0,
		       cl_ulong t1);

/* "xo_cl_<name>" of a kernel of XO_CL_KERNELS (cl_runtime.c, which creates
 * them; launches and the probe name a failing kernel with it). */
const char *xo_cl_kernel_name(enum xo_cl_kid kid);
/* Monotonic clock in ns. */
uint64_t xo_cl_now_ns(void);
/* Records an event to be profiled later (takes ownership of ev). */
enum xo_status xo_cl_track(struct xo_cl_ctx *c, cl_event ev, enum xo_cl_evkind kind, int op,
			   int dir);
/* Blocking write of bytes from src at byte off of buffer m, booked as h2d
 * (enqueue time, then the event); what names the buffer in an error. */
enum xo_status xo_cl_write_mem(struct xo_cl_ctx *c, cl_mem m, size_t off, size_t bytes,
			       const void *src, const char *what);
/* Temporary device buffer `slot` (0 or 1) of at least bytes, kept for reuse. */
enum xo_status xo_cl_scratch(struct xo_cl_ctx *c, int slot, size_t bytes, cl_mem *out);

/* The fused whole-network path (cl_net.c; struct xo_net in xo/backend.h). */
bool xo_cl_net_fits(struct xo_backend *be, const struct xo_net *net);
/* iface rnn_lanes (xo_backend_rnn_lanes): the work-items one sample's
 * recurrent step is spread over by rnn_fwd's launch (cl_ops.c). */
double xo_cl_rnn_lanes(struct xo_backend *be, enum xo_op op, const struct xo_params *p);
enum xo_status xo_cl_net_forward(struct xo_backend *be, const struct xo_net *net);
enum xo_status xo_cl_net_train_step(struct xo_backend *be, const struct xo_net *net);

/* Kernel launches (cl_launch.c): set arguments one by one, then run. The
 * first failure is kept and reported by xo_cl_launch_run. */
struct xo_cl_launch {
	struct xo_cl_ctx *c;
	enum xo_cl_kid kid;
	cl_uint narg;
	cl_int err;       /* first clSetKernelArg failure */
	cl_uint bad_arg;  /* its index */
};

struct xo_cl_launch xo_cl_launch_begin(struct xo_cl_ctx *c, enum xo_cl_kid kid);
void xo_cl_arg(struct xo_cl_launch *l, size_t size, const void *v);
void xo_cl_arg_int(struct xo_cl_launch *l, int64_t v); /* as cl_int; asserts the range */
void xo_cl_arg_uint(struct xo_cl_launch *l, uint32_t v);
void xo_cl_arg_float(struct xo_cl_launch *l, float v);
void xo_cl_arg_mem(struct xo_cl_launch *l, cl_mem m);
/* A tensor as (buffer, element offset); a NULL tensor passes fallback's
 * buffer (never dereferenced by the kernel), so every argument is valid. */
void xo_cl_arg_tensor(struct xo_cl_launch *l, const struct xo_tensor *t,
		      const struct xo_tensor *fallback);
/* Enqueues the kernel over a dims-D range (local NULL: the driver picks),
 * recording its event for op/dir, or for the fused network kernels when
 * op < 0. */
enum xo_status xo_cl_launch_run(struct xo_cl_launch *l, cl_uint dims, const size_t *global,
				const size_t *local, int op, int dir);
/* Adam's step size of iteration p->iteration (Keras 3): lr_t = lr *
 * sqrt(1 - b2^t) / (1 - b1^t), in double, then float; shared by the adam op
 * (cl_ops.c) and the fused network update (cl_net.c) so both round alike
 * (cl_launch.c, beneath both). */
float xo_cl_adam_lr_t(const struct xo_params *p);

/* The ops (cl_ops.c), one per op and direction of ops.def:
 * xo_cl_conv1d_fwd, xo_cl_conv1d_bwd, ... (a missing one fails to link). */
#define XO_CL_OP_BWD_1(name)                                                               \
	enum xo_status xo_cl_##name##_bwd(struct xo_backend *be, const struct xo_op_args *a);
#define XO_CL_OP_BWD_0(name)
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb)                                      \
	enum xo_status xo_cl_##name##_fwd(struct xo_backend *be, const struct xo_op_args *a); \
	XO_CL_OP_BWD_##has_bwd(name)
#include "xo/ops.def"
#undef XO_OP

#endif
