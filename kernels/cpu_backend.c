/*
 * cpu_backend.c - backend "cpu"'s table: a copy of the reference table with
 * every op overridden (STYLE rule 5), its op slots built from ops.def as
 * ref's and cl's are. The kernels live in their family's file (cpu.c,
 * cpu_pool.c, cpu_conv2d.c, ...) as xo_cpu_<op>_fwd / _bwd; this file only
 * names them, so no family file and cpu.c call each other through the table.
 */
#include <pthread.h>

#include "cpu.h"

static struct xo_backend_iface cpu_iface;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

#define CPU_BWD_1(name) cpu_iface.bwd[XO_OP_##name] = xo_cpu_##name##_bwd;
#define CPU_BWD_0(name)

static void cpu_make_iface(void)
{
	cpu_iface = xo_ref_iface;
	cpu_iface.name = "cpu";
	cpu_iface.predict_chunks = true; /* passes over the batch, in cache */
	cpu_iface.init = xo_cpu_init;
	cpu_iface.free = xo_cpu_free;
	cpu_iface.alloc = xo_cpu_alloc;
	cpu_iface.release = xo_cpu_release;
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) \
	cpu_iface.fwd[XO_OP_##name] = xo_cpu_##name##_fwd; CPU_BWD_##has_bwd(name)
#include "xo/ops.def"
#undef XO_OP
	cpu_iface.net_fits = xo_cpu_net_fits;
	cpu_iface.net_forward = xo_cpu_net_forward;
	cpu_iface.net_train_step = xo_cpu_net_train_step;
	cpu_iface.probe = xo_cpu_probe;
}

const struct xo_backend_iface *xo_cpu_backend(void)
{
	pthread_once(&cpu_once, cpu_make_iface);
	return &cpu_iface;
}
