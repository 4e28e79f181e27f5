/*
 * ref_internal.h - what the files of backend "ref" share, and what the
 * gradient check (suites/test_gradcheck.c) calls directly.
 *
 * Every op of ops.def is written once, as a "math" function over arrays that
 * are either float (the backend's tensors, the public path through
 * xo_ref_iface) or double (the gradient check's exact inputs). The math runs
 * in double whatever the storage: loads widen to double, each output element
 * is rounded to its storage type once, by xo_ref_st, at the end. So the
 * public float path and the double path execute the same operations, and the
 * finite-difference check of the double path checks the oracle itself.
 *
 * Slot arrays follow include/xo/ops.def exactly: src[i] is source slot i,
 * dst[i] destination slot i, mag[i] the magnitude array of dst[i] (DESIGN
 * section 5); an unused or NULL slot has every pointer NULL.
 */
#ifndef XO_REF_INTERNAL_H
#define XO_REF_INTERNAL_H

#include "xo/backend.h"

/* A read-only array: at most one pointer is non-NULL (none: an absent slot). */
struct xo_ref_src {
	const float *f;   /* F32 storage */
	const int32_t *i; /* I32 storage (gather's index) */
	const double *d;  /* double storage (gradient check) */
};

/* A written array, same rule. */
struct xo_ref_dst {
	float *f;   /* F32 storage, values rounded once from double */
	int32_t *i; /* I32 storage (accuracy's idx) */
	double *d;  /* double storage (gradient check) */
};

static inline bool xo_ref_src_has(struct xo_ref_src s)
{
	return s.f || s.i || s.d;
}

static inline bool xo_ref_dst_has(struct xo_ref_dst s)
{
	return s.f || s.i || s.d;
}

/* Element k of s, widened to double (exact for float and int32). */
static inline double xo_ref_ld(struct xo_ref_src s, int64_t k)
{
	if (s.f)
		return (double)s.f[k];
	if (s.i)
		return (double)s.i[k];
	return s.d[k];
}

/* Stores v as element k of s: the one rounding of every output. A NULL
 * destination (an absent mag slot) is skipped. */
static inline void xo_ref_st(struct xo_ref_dst s, int64_t k, double v)
{
	if (s.f)
		s.f[k] = (float)v;
	else if (s.i)
		s.i[k] = (int32_t)v;
	else if (s.d)
		s.d[k] = v;
}

/* v as Keras's float32 arithmetic holds it where that overflows: +-Inf
 * from the rounding midpoint above FLT_MAX on (round to nearest sends it
 * up), v itself below. The reference computes in double for accuracy; a
 * value it passes on unrounded (a pre-activation into its activation, a
 * loss's partial sum) goes through this where Keras's float32 one would be
 * Inf, so softmax of an overflowing logit is NaN and a loss past float32's
 * range Inf, as Keras's. */
static inline double xo_ref_f32_sat(double v)
{
	return __builtin_fabs(v) >= 0x1.ffffffp+127 ? __builtin_copysign(__builtin_inf(), v) : v;
}

/* The read-only view of a written array (to feed one op's output to another). */
static inline struct xo_ref_src xo_ref_as_src(struct xo_ref_dst s)
{
	return (struct xo_ref_src){s.f, s.i, s.d};
}

/* One op in one direction over slot arrays (XO_MAX_SRC / XO_MAX_DST entries). */
typedef enum xo_status (*xo_ref_math_fn)(const struct xo_params *p,
					 const struct xo_ref_src *src,
					 const struct xo_ref_dst *dst,
					 const struct xo_ref_dst *mag);

/*
 * d loss / d pre-activation of element j of a row of n outputs (row starts
 * at element `row` of y and dy), from the activation's output y:
 *   linear  dy
 *   relu    dy if y > 0 else 0 (NaN y gives 0)
 *   sigmoid dy * y * (1 - y)
 *   softmax y_j * (dy_j - sum_k dy_k * y_k)   (the row sum is recomputed: naive)
 * In double.
 */
double xo_ref_act_grad(enum xo_activation act, struct xo_ref_src y, struct xo_ref_src dy,
		       int64_t row, int64_t j, int64_t n);
/*
 * The activation a convolution fuses, of pre-activation v: linear, relu,
 * sigmoid, or softmax over the row's outputs, given the row's maximum
 * pre-activation mx and its sum se of exp(pre - mx). Any other activation
 * is never fused (xo_op_check_shapes refuses it). In double.
 */
double xo_ref_act_fused(enum xo_activation act, double v, double mx, double se);
/* 1 / (1 + exp(-x)) in double. */
double xo_ref_sigmoid(double x);
/* x if x > 0, NaN stays NaN (x > 0 is false for it), else +0. */
double xo_ref_relu(double x);

/* The math of every op (ref_conv.c, ref_pool.c, ref_act.c, ref_shape.c,
 * ref_loss.c, ref_adam.c), and the backend kernels that wrap them (ref.c). */
#define XO_REF_DECL_1(name)                                                              \
	enum xo_status xo_ref_##name##_bwd_math(const struct xo_params *p,                \
						const struct xo_ref_src *src,             \
						const struct xo_ref_dst *dst,             \
						const struct xo_ref_dst *mag);            \
	enum xo_status xo_ref_##name##_bwd(struct xo_backend *be, const struct xo_op_args *a);
#define XO_REF_DECL_0(name)
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb)                                    \
	enum xo_status xo_ref_##name##_fwd_math(const struct xo_params *p,                \
						const struct xo_ref_src *src,             \
						const struct xo_ref_dst *dst,             \
						const struct xo_ref_dst *mag);            \
	enum xo_status xo_ref_##name##_fwd(struct xo_backend *be, const struct xo_op_args *a); \
	XO_REF_DECL_##has_bwd(name)
#include "xo/ops.def"
#undef XO_OP
#undef XO_REF_DECL_0
#undef XO_REF_DECL_1

/* The math function of op in dir; NULL for the backward of an op without one. */
xo_ref_math_fn xo_ref_math(enum xo_op op, enum xo_dir dir);

#endif /* XO_REF_INTERNAL_H */
