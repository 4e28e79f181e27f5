/*
 * ref.c - backend "ref", the numerical oracle: host memory, and the table of
 * kernels. Each kernel xo_ref_<op>_<dir> only turns its tensors into slot
 * arrays and calls the op's math (xo_ref_<op>_<dir>_math, in the op-family
 * files ref_conv.c, ref_pool.c, ref_act.c, ref_shape.c, ref_loss.c,
 * ref_adam.c, ref_norm.c, ref_rnn.c), which the gradient check also runs on double arrays.
 *
 * Contract shared by every kernel: the core has validated the call (shapes
 * per xo_op_shapes, tensors of this backend); views are honoured through
 * xo_tensor_f32/xo_tensor_i32; outputs are overwritten, never accumulated;
 * the math is double with one rounding per output element; mag[i], when not
 * NULL, receives the accumulation magnitude of every element of dst[i] (the
 * per-op definition is next to each op; in short):
 *
 *   conv1d, dense fwd   sum |x*w| + |b|, before the activation
 *   conv1d, dense bwd   dx: sum |dpre*w|   dw: sum |x*dpre|   db: sum |dpre|
 *   max_pooling1d       fwd |y|; bwd sum of |dy| routed to the element
 *   relu, sigmoid       |y| (fwd), |dx| (bwd)
 *   softmax             fwd |y|; bwd |y_j| * (|dy_j| + sum_k |dy_k*y_k|)
 *   flatten, dropout    |y| (both directions)
 *   categorical_crossentropy  fwd sum over rows, classes of |t*log q| / batch;
 *                       bwd |dz|
 *   adam                |w'|, |m'|, |v'|
 *   accuracy            idx and correct themselves (as floats)
 *   gather              |y|
 *
 * Magnitudes are rounded to float once, like the outputs, so |dst| <= mag
 * holds element by element for every output except a fused activation's
 * (whose magnitude is that of its pre-activation).
 */
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

static enum xo_status ref_init(struct xo_backend *be, const char *spec)
{
	if (spec && *spec)
		return xo_error(XO_ENODEV, "ref: takes no device argument (got '%s')", spec);
	strcpy(be->desc, "ref: naive scalar reference, double accumulation");
	return XO_OK;
}

static void ref_free(struct xo_backend *be)
{
	(void)be;
}

static enum xo_status ref_alloc(struct xo_backend *be, struct xo_tensor *t)
{
	(void)be;
	t->data = calloc((size_t)t->capacity, 4);
	if (!t->data)
		return xo_error(XO_ENOMEM, "ref: cannot allocate %lld bytes",
				(long long)t->capacity * 4);
	return XO_OK;
}

static void ref_release(struct xo_backend *be, struct xo_tensor *t)
{
	(void)be;
	free(t->data);
}

static enum xo_status ref_write(struct xo_backend *be, struct xo_tensor *t, const void *src,
				int64_t off, int64_t count)
{
	(void)be;
	memcpy((char *)t->data + off * 4, src, (size_t)count * 4);
	return XO_OK;
}

static enum xo_status ref_read(struct xo_backend *be, const struct xo_tensor *t, void *dst,
			       int64_t off, int64_t count)
{
	(void)be;
	memcpy(dst, (const char *)t->data + off * 4, (size_t)count * 4);
	return XO_OK;
}

/* Slot arrays of a backend call: F32 or I32 host pointers, views included. */
static void ref_slots(const struct xo_op_args *a, struct xo_ref_src src[XO_MAX_SRC],
		      struct xo_ref_dst dst[XO_MAX_DST], struct xo_ref_dst mag[XO_MAX_DST])
{
	memset(src, 0, sizeof(*src) * XO_MAX_SRC);
	memset(dst, 0, sizeof(*dst) * XO_MAX_DST);
	memset(mag, 0, sizeof(*mag) * XO_MAX_DST);
	for (int k = 0; k < XO_MAX_SRC; k++) {
		const struct xo_tensor *t = a->src[k];

		if (!t)
			continue;
		if (t->dtype == XO_DTYPE_I32)
			src[k].i = xo_tensor_i32(t);
		else
			src[k].f = xo_tensor_f32(t);
	}
	for (int k = 0; k < XO_MAX_DST; k++) {
		const struct xo_tensor *t = a->dst[k];

		if (t && t->dtype == XO_DTYPE_I32)
			dst[k].i = xo_tensor_i32(t);
		else if (t)
			dst[k].f = xo_tensor_f32(t);
		if (a->mag[k])
			mag[k].f = xo_tensor_f32(a->mag[k]);
	}
}

static enum xo_status ref_call(xo_ref_math_fn fn, const struct xo_op_args *a)
{
	struct xo_ref_src src[XO_MAX_SRC];
	struct xo_ref_dst dst[XO_MAX_DST], mag[XO_MAX_DST];

	XO_ASSERT(a);
	ref_slots(a, src, dst, mag);
	return fn(&a->p, src, dst, mag);
}

/* The kernels of the table: xo_ref_conv1d_fwd, xo_ref_conv1d_bwd, ... */
#define REF_KERNEL(name, dir)                                                            \
	enum xo_status xo_ref_##name##_##dir(struct xo_backend *be, const struct xo_op_args *a) \
	{                                                                                \
		(void)be;                                                                \
		return ref_call(xo_ref_##name##_##dir##_math, a);                        \
	}
#define REF_KERNEL_BWD_1(name) REF_KERNEL(name, bwd)
#define REF_KERNEL_BWD_0(name)
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) \
	REF_KERNEL(name, fwd) REF_KERNEL_BWD_##has_bwd(name)
#include "xo/ops.def"
#undef XO_OP

/* Table slots from ops.def: an op missing its kernel does not compile. */
#define REF_BWD_1(name) xo_ref_##name##_bwd
#define REF_BWD_0(name) NULL
#define REF_MATH_BWD_1(name) xo_ref_##name##_bwd_math
#define REF_MATH_BWD_0(name) NULL

static const xo_ref_math_fn ref_math[XO_OP_COUNT][XO_DIR_COUNT] = {
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) \
	[XO_OP_##name] = {xo_ref_##name##_fwd_math, REF_MATH_BWD_##has_bwd(name)},
#include "xo/ops.def"
#undef XO_OP
};

xo_ref_math_fn xo_ref_math(enum xo_op op, enum xo_dir dir)
{
	XO_ASSERT((unsigned)op < XO_OP_COUNT && (unsigned)dir < XO_DIR_COUNT);
	return ref_math[op][dir];
}

const struct xo_backend_iface xo_ref_iface = {
	.name = "ref",
	.init = ref_init,
	.free = ref_free,
	.alloc = ref_alloc,
	.release = ref_release,
	.write = ref_write,
	.read = ref_read,
	.fwd = {
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) [XO_OP_##name] = xo_ref_##name##_fwd,
#include "xo/ops.def"
#undef XO_OP
	},
	.bwd = {
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) [XO_OP_##name] = REF_BWD_##has_bwd(name),
#include "xo/ops.def"
#undef XO_OP
	},
};

const struct xo_backend_iface *xo_ref_backend(void)
{
	return &xo_ref_iface;
}
