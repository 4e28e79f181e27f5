/*
 * cl.c - backend "cl": the table. Runtime (device choice, program, memory,
 * transfers, profiling) lives in cl_runtime.c, the ops in cl_ops.c, the
 * kernels in cl/kernels/<family>.cl (embedded at build time). Every op runs
 * as OpenCL kernels; nothing falls back to host code (suites/test_cl.c).
 */
#include "cl_probe.h"

#define CL_BWD_1(name) xo_cl_##name##_bwd
#define CL_BWD_0(name) NULL

static const struct xo_backend_iface cl_iface = {
	.name = "cl",
	.init = xo_cl_init,
	.free = xo_cl_free,
	.alloc = xo_cl_alloc,
	.release = xo_cl_release,
	.write = xo_cl_write,
	.read = xo_cl_read,
	.sync = xo_cl_sync,
	.stats_get = xo_cl_stats_get,
	.stats_reset = xo_cl_stats_reset,
	.net_fits = xo_cl_net_fits,
	.net_forward = xo_cl_net_forward,
	.net_train_step = xo_cl_net_train_step,
	.probe = xo_cl_probe,
	.rnn_lanes = xo_cl_rnn_lanes,
	.fwd = {
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) [XO_OP_##name] = xo_cl_##name##_fwd,
#include "xo/ops.def"
#undef XO_OP
	},
	.bwd = {
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) [XO_OP_##name] = CL_BWD_##has_bwd(name),
#include "xo/ops.def"
#undef XO_OP
	},
};

const struct xo_backend_iface *xo_cl_backend(void)
{
	return &cl_iface;
}
