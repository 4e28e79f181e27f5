/*
 * cl_launch.c - kernel launches of the cl backend, shared by the ops
 * (cl_ops.c) and the fused network path (cl_net.c): arguments set one by one
 * with the first failure kept, then one clEnqueueNDRangeKernel whose event
 * is profiled later and booked to its op (or, op < 0, to the fused network
 * kernels' stats.net_ns); and Adam's step size, which both pass on.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "cl_internal.h"

struct xo_cl_launch xo_cl_launch_begin(struct xo_cl_ctx *c, enum xo_cl_kid kid)
{
	return (struct xo_cl_launch){.c = c, .kid = kid};
}

void xo_cl_arg(struct xo_cl_launch *l, size_t size, const void *v)
{
	cl_int err = clSetKernelArg(l->c->kernel[l->kid], l->narg, size, v);

	if (err != CL_SUCCESS && l->err == CL_SUCCESS) {
		l->err = err;
		l->bad_arg = l->narg;
	}
	l->narg++;
}

void xo_cl_arg_int(struct xo_cl_launch *l, int64_t v)
{
	cl_int i = (cl_int)v;

	XO_ASSERT(v >= INT_MIN && v <= INT_MAX); /* alloc caps tensors at INT_MAX */
	xo_cl_arg(l, sizeof(i), &i);
}

void xo_cl_arg_uint(struct xo_cl_launch *l, uint32_t v)
{
	cl_uint u = v;

	xo_cl_arg(l, sizeof(u), &u);
}

void xo_cl_arg_float(struct xo_cl_launch *l, float v)
{
	cl_float f = v;

	xo_cl_arg(l, sizeof(f), &f);
}

void xo_cl_arg_mem(struct xo_cl_launch *l, cl_mem m)
{
	xo_cl_arg(l, sizeof(m), &m);
}

/* A tensor as (buffer, element offset); a NULL tensor passes `fallback` (never
 * dereferenced by the kernel) so every argument is a valid buffer. */
void xo_cl_arg_tensor(struct xo_cl_launch *l, const struct xo_tensor *t,
		      const struct xo_tensor *fallback)
{
	if (!t)
		t = fallback;
	xo_cl_arg_mem(l, (cl_mem)t->data);
	xo_cl_arg_int(l, t ? t->offset : 0);
}

/* Enqueues the kernel over global (local NULL: the driver's choice) in
 * dims dimensions; its event is booked to op/dir, or to the fused network
 * kernels when op < 0. */
enum xo_status xo_cl_launch_run(struct xo_cl_launch *l, cl_uint dims, const size_t *global,
				const size_t *local, int op, int dir)
{
	struct xo_cl_ctx *c = l->c;
	char what[128];
	cl_event ev;
	cl_int err;
	uint64_t t0;

	if (l->err != CL_SUCCESS) {
		snprintf(what, sizeof(what), "clSetKernelArg(%s, arg %u)", xo_cl_kernel_name(l->kid),
			 l->bad_arg);
		return xo_cl_fail(what, l->err);
	}
	t0 = xo_cl_now_ns();
	err = clEnqueueNDRangeKernel(c->queue, c->kernel[l->kid], dims, NULL, global, local, 0,
				     NULL, &ev);
	c->stats.enqueue_ns += xo_cl_now_ns() - t0;
	if (err != CL_SUCCESS) {
		snprintf(what, sizeof(what), "clEnqueueNDRangeKernel(%s)", xo_cl_kernel_name(l->kid));
		return xo_cl_fail(what, err);
	}
	c->stats.launches++;
	if (op < 0)
		c->stats.net_launches++;
	else
		c->stats.op_launches[op][dir]++;
	return xo_cl_track(c, ev, XO_CL_EV_KERNEL, op, dir);
}

/* Adam's step size (contract in cl_internal.h): here, beside the launches,
 * because the adam op (cl_ops.c) and the fused network update (cl_net.c)
 * both pass it to their kernels and neither file calls the other. */
float xo_cl_adam_lr_t(const struct xo_params *p)
{
	double t = (double)p->iteration;

	return (float)((double)p->lr * sqrt(1.0 - pow((double)p->beta_2, t)) /
		       (1.0 - pow((double)p->beta_1, t)));
}
