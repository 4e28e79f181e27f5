/*
 * harness.c - the comparison harness (DESIGN section 5): names and modes, the
 * reference run, the guarded run of the backend under test, the comparison
 * and the case's whole run (xo_case_run). Nothing else in the tree compares a
 * backend's output with ref; the suites and `xo check` call xo_case_run.
 * The inputs are filled in harness_fill.c, the tolerances derived in
 * harness_bounds.c and harness_rnn.c, the structural zeros in
 * harness_zeros.c, shapes-file lines parsed in harness_shapes.c; what they
 * share is harness_internal.h.
 */
#include "harness_internal.h"
#include "../kernels/cpu.h"
#include <unistd.h>

/* ---- names --------------------------------------------------------------- */

static const char *const hmode_names[XO_HMODE_COUNT] = {"exact", "real", "nonfinite"};

const char *xo_hmode_name(enum xo_hmode m)
{
	XO_ASSERT((unsigned)m < XO_HMODE_COUNT);
	return hmode_names[m];
}

enum xo_hmode xo_hmode_from_name(const char *name)
{
	for (int i = 0; i < XO_HMODE_COUNT; i++)
		if (!strcmp(name, hmode_names[i]))
			return (enum xo_hmode)i;
	return XO_HMODE_COUNT;
}

static const char *const fail_names[XO_FAIL_COUNT] = {
    "passed",          "backend error",       "uninformative case",  "guard zone written",
    "source modified", "element not written", "non-finite mismatch", "value mismatch",
};

const char *xo_fail_name(enum xo_fail f)
{
	XO_ASSERT((unsigned)f < XO_FAIL_COUNT);
	return fail_names[f];
}

static bool is_elementwise(enum xo_op op)
{
	return op == XO_OP_relu || op == XO_OP_sigmoid || op == XO_OP_tanh || op == XO_OP_elu ||
	       op == XO_OP_gelu || op == XO_OP_softplus || op == XO_OP_dropout ||
	       op == XO_OP_flatten || op == XO_OP_max_pooling1d || op == XO_OP_average_pooling1d ||
	       op == XO_OP_global_average_pooling1d || op == XO_OP_global_max_pooling1d ||
	       op == XO_OP_max_pooling2d || op == XO_OP_average_pooling2d ||
	       op == XO_OP_global_average_pooling2d || op == XO_OP_global_max_pooling2d ||
	       op == XO_OP_relu6 || op == XO_OP_hard_sigmoid || op == XO_OP_silu ||
	       op == XO_OP_merge || op == XO_OP_rescaling || op == XO_OP_normalization ||
	       op == XO_OP_leaky_relu;
}

static bool is_avg_pool(enum xo_op op)
{
	return op == XO_OP_average_pooling1d || op == XO_OP_global_average_pooling1d ||
	       op == XO_OP_average_pooling2d || op == XO_OP_global_average_pooling2d;
}

/* Ops whose tolerances use ref's magnitudes. */
/* ops whose bound is relative to ref's magnitude: the activations of
 * conv1d/dense, average pooling's sum, gelu and silu bwd (their two terms), log_softmax
 * bwd (likewise) */
static bool needs_mag(enum xo_op op)
{
	return has_activation(op) || is_avg_pool(op) || op == XO_OP_gelu || op == XO_OP_silu ||
	       op == XO_OP_log_softmax;
}

static bool pow2(int64_t v)
{
	return v > 0 && (v & (v - 1)) == 0;
}

/* The average poolings are exact on integer fills only where every divisor
 * (the window counts, or len) is a power of 2: then the quotients are
 * dyadic and every sum of them is exact in float32; other divisors round
 * (and OpenCL's division is 2.5 ulp, DESIGN section 5). */
static bool avg_divisors_pow2(enum xo_op op, const struct xo_params *p)
{
	int64_t out, pad, lo, hi;

	if (op == XO_OP_global_average_pooling1d) /* mask_zero: the kept counts vary */
		return !p->mask_zero && pow2(p->len);
	if (op == XO_OP_global_average_pooling2d)
		return pow2(p->len) && pow2(p->width);
	if (op == XO_OP_average_pooling2d) {
		struct xo_pool2d_geom g;
		int64_t r[4];

		if (xo_pool2d_geometry_of(op, p, &g))
			return false;
		for (int64_t oh = 0; oh < g.out_h; oh++)
			for (int64_t ow = 0; ow < g.out_w; ow++)
				if (!pow2(pool2d_window(p, &g, oh, ow, r)))
					return false;
		return true;
	}
	if (xo_pool1d_geometry_of(op, p, &out, &pad))
		return false;
	for (int64_t o = 0; o < out; o++)
		if (!pow2(xo_pool1d_window(p, o, pad, &lo, &hi)))
			return false;
	return true;
}

bool xo_hmode_applies(enum xo_op op, enum xo_dir dir, const struct xo_params *p, enum xo_hmode m)
{
	switch (m) {
	case XO_HMODE_EXACT:
		if (xo_op_cmp(op) != XO_CMP_EXACT)
			return false;
		if (is_avg_pool(op))
			return avg_divisors_pow2(op, p);
		return !has_activation(op) || p->activation == XO_ACTIVATION_LINEAR ||
		       p->activation == XO_ACTIVATION_RELU;
	case XO_HMODE_REAL:
		return true;
	case XO_HMODE_NONFINITE:
		return dir == XO_DIR_FWD && (is_elementwise(op) || xo_op_is_rnn(op));
	case XO_HMODE_COUNT:
		break;
	}
	return false;
}

/* dst slots read and updated in place (their inputs in init[]): adam's w, m,
 * v; batch_normalization fwd's moving_mean and moving_variance. */
static bool has_state(const struct xo_case *c, int i)
{
	return c->op == XO_OP_adam || c->op == XO_OP_sgd || c->op == XO_OP_rmsprop ||
	       (c->op == XO_OP_batch_normalization && c->dir == XO_DIR_FWD && i > 0);
}

/* conv1d, conv2d, dense */
static const char *names_conv_dense(enum xo_dir dir, bool dst, int i)
{
	static const char *const conv_src[2][4] = {{"x", "w", "b", "?"}, {"x", "w", "y", "dy"}};
	static const char *const conv_dst[2][3] = {{"y", "?", "?"}, {"dx", "dw", "db"}};

	return dst ? conv_dst[dir][i] : conv_src[dir][i];
}
#define NAMES_conv1d names_conv_dense
#define NAMES_conv2d names_conv_dense
#define NAMES_dense names_conv_dense
#define NAMES_depthwise_conv2d names_conv_dense
#define NAMES_conv2d_transpose names_conv_dense

/* max_pooling1d, global_max_pooling1d, max_pooling2d, global_max_pooling2d */
static const char *names_max_pool(enum xo_dir dir, bool dst, int i)
{
	return dst ? (dir ? "dx" : "y") : (i ? "dy" : "x");
}
#define NAMES_max_pooling1d names_max_pool
#define NAMES_global_max_pooling1d names_max_pool
#define NAMES_max_pooling2d names_max_pool
#define NAMES_global_max_pooling2d names_max_pool

/* average_pooling1d, global_average_pooling1d, average_pooling2d, global_average_pooling2d */
static const char *names_avg_pool(enum xo_dir dir, bool dst, int i)
{
	/* source 1: global_average_pooling1d's ids with mask_zero */
	return dst ? (dir ? "dx" : "y") : i ? "ids" : (dir ? "dy" : "x");
}
#define NAMES_average_pooling1d names_avg_pool
#define NAMES_global_average_pooling1d names_avg_pool
#define NAMES_average_pooling2d names_avg_pool
#define NAMES_global_average_pooling2d names_avg_pool

/* relu, sigmoid, softmax, tanh, log_softmax */
static const char *names_act_y(enum xo_dir dir, bool dst, int i)
{
	return dst ? (dir ? "dx" : "y") : (dir ? (i ? "dy" : "y") : "x");
}
#define NAMES_relu names_act_y
#define NAMES_sigmoid names_act_y
#define NAMES_softmax names_act_y
#define NAMES_tanh names_act_y
#define NAMES_log_softmax names_act_y

/* gelu, softplus, elu, leaky_relu: bwd from x. */
static const char *names_act_x(enum xo_dir dir, bool dst, int i)
{
	return dst ? (dir ? "dx" : "y") : (i ? "dy" : "x");
}
#define NAMES_gelu names_act_x
#define NAMES_elu names_act_x
#define NAMES_leaky_relu names_act_x
#define NAMES_softplus names_act_x

/* flatten, dropout */
static const char *names_copy(enum xo_dir dir, bool dst, int i)
{
	(void)i;
	return dst ? (dir ? "dx" : "y") : (dir ? "dy" : "x");
}
#define NAMES_flatten names_copy
#define NAMES_dropout names_copy
#define NAMES_pad names_copy
#define NAMES_permute names_copy
#define NAMES_flip names_copy
#define NAMES_rescaling names_copy

/* normalization */
static const char *names_normalization(enum xo_dir dir, bool dst, int i)
{
	if (dir == XO_DIR_FWD)
		return dst ? "y" : (const char *[]){"x", "mean", "variance", "?"}[i];
	return dst ? "dx" : (const char *[]){"variance", "dy", "?"}[i];
}
#define NAMES_normalization names_normalization
#define NAMES_up_sampling names_copy

/* merge */
static const char *names_merge(enum xo_dir dir, bool dst, int i)
{
	static const char *const fwd_src[] = {"a", "b", "ids"},
				 *const bwd_src[] = {"a", "b", "dy", "ids"};
	static const char *const bwd_dst[] = {"da", "db"};

	if (dst)
		return dir ? bwd_dst[i] : "y";
	return dir ? bwd_src[i] : fwd_src[i];
}
#define NAMES_merge names_merge

/* attention */
static const char *names_attention(enum xo_dir dir, bool dst, int i)
{
	static const char *const fwd_src[] = {"q", "k", "v", "m"};
	static const char *const bwd_src[] = {"q", "k", "v", "dy", "m"};
	static const char *const bwd_dst[] = {"dq", "dk", "dv"};

	if (dst)
		return dir ? bwd_dst[i] : "o";
	return dir ? bwd_src[i] : fwd_src[i];
}
#define NAMES_attention names_attention

/* categorical_crossentropy */
static const char *names_cce(enum xo_dir dir, bool dst, int i)
{
	return dst ? (dir ? "dz" : "loss") : (i ? "t" : "p");
}
#define NAMES_categorical_crossentropy names_cce

/* adam */
static const char *names_adam(enum xo_dir dir, bool dst, int i)
{
	(void)dir;
	return dst ? (const char *[]){"w", "m", "v"}[i] : "g";
}
#define NAMES_adam names_adam

/* binary_crossentropy, mean_squared_error */
static const char *names_loss(enum xo_dir dir, bool dst, int i)
{
	return dst ? (dir ? "dp" : "loss") : (i ? "t" : "p");
}
#define NAMES_binary_crossentropy names_loss
#define NAMES_mean_squared_error names_loss

/* binary_accuracy, sparse_categorical_accuracy */
static const char *names_count(enum xo_dir dir, bool dst, int i)
{
	(void)dir;
	return dst ? "correct" : (i ? "t" : "p");
}
#define NAMES_binary_accuracy names_count
#define NAMES_sparse_categorical_accuracy names_count

/* sparse_categorical_crossentropy */
static const char *names_scce(enum xo_dir dir, bool dst, int i)
{
	return dst ? (dir ? "dp" : "loss") : (i ? "t" : "p");
}
#define NAMES_sparse_categorical_crossentropy names_scce

/* sgd */
static const char *names_sgd(enum xo_dir dir, bool dst, int i)
{
	(void)dir;
	return dst ? (const char *[]){"w", "m"}[i] : "g";
}
#define NAMES_sgd names_sgd

/* rmsprop */
static const char *names_rmsprop(enum xo_dir dir, bool dst, int i)
{
	(void)dir;
	return dst ? (const char *[]){"w", "v", "mom"}[i] : "g";
}
#define NAMES_rmsprop names_rmsprop

/* accuracy */
static const char *names_accuracy(enum xo_dir dir, bool dst, int i)
{
	(void)dir;
	return dst ? (i ? "correct" : "idx") : (i ? "t" : "p");
}
#define NAMES_accuracy names_accuracy

/* gather */
static const char *names_gather(enum xo_dir dir, bool dst, int i)
{
	(void)dir;
	return dst ? "y" : (i ? "index" : "x");
}
#define NAMES_gather names_gather

/* mask_outer */
static const char *names_mask_outer(enum xo_dir dir, bool dst, int i)
{
	(void)dir;
	return dst ? "y" : (i ? "m" : "ids");
}
#define NAMES_mask_outer names_mask_outer

/* masking */
static const char *names_masking(enum xo_dir dir, bool dst, int i)
{
	if (dst)
		return dir ? "dx" : (i ? "keep" : "y");
	return i ? "dy" : "x";
}
#define NAMES_masking names_masking

/* embedding */
static const char *names_embedding(enum xo_dir dir, bool dst, int i)
{
	if (dir == XO_DIR_FWD)
		return dst ? "y" : (i ? "table" : "ids");
	return dst ? "dtable" : (i ? "dy" : "ids");
}
#define NAMES_embedding names_embedding

/* batch_normalization */
static const char *names_batch_normalization(enum xo_dir dir, bool dst, int i)
{
	if (dir == XO_DIR_FWD)
		return dst ? (const char *[]){"y", "moving_mean", "moving_variance"}[i]
		           : (const char *[]){"x", "gamma", "beta", "?"}[i];
	return dst ? (const char *[]){"dx", "dgamma", "dbeta"}[i]
	           : (const char *[]){"x", "gamma", "dy", "?"}[i];
}
#define NAMES_batch_normalization names_batch_normalization

/* layer_normalization */
static const char *names_layer_normalization(enum xo_dir dir, bool dst, int i)
{
	if (dir == XO_DIR_FWD)
		return dst ? (const char *[]){"y", "?", "?"}[i] : (const char *[]){"x", "gamma", "beta", "?"}[i];
	return dst ? (const char *[]){"dx", "dgamma", "dbeta"}[i]
	           : (const char *[]){"x", "gamma", "dy", "?"}[i];
}
#define NAMES_layer_normalization names_layer_normalization

/* simple_rnn, lstm, gru */
static const char *names_rnn(enum xo_dir dir, bool dst, int i)
{
	if (dir == XO_DIR_FWD)
		return dst ? (const char *[]){"y", "ws", "?", "?"}[i]
		           : (const char *[]){"x", "kernel", "recurrent_kernel", "bias",
		                              "ids", "?"}[i];
	return dst ? (const char *[]){"dx", "dkernel", "drecurrent_kernel", "dbias"}[i]
	           : (const char *[]){"x", "kernel", "recurrent_kernel", "ws", "dy", "ids"}[i];
}
#define NAMES_simple_rnn names_rnn
#define NAMES_lstm names_rnn
#define NAMES_gru names_rnn

/* relu6, hard_sigmoid, silu: bwd from x */
#define NAMES_relu6 names_act_x
#define NAMES_hard_sigmoid names_act_x
#define NAMES_silu names_act_x

/* The names of every op's slots, for reports. One entry per op of ops.def: an op without its NAMES_
 * entry does not compile. */
static const char *(*const names_of[XO_OP_COUNT])(enum xo_dir dir, bool dst, int i) = {
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) [XO_OP_##name] = NAMES_##name,
#include "xo/ops.def"
#undef XO_OP
};

/* Slot names for reports, from the slot conventions of ops.def. */
static const char *slot_name(enum xo_op op, enum xo_dir dir, bool dst, int i)
{
	if ((unsigned)op >= XO_OP_COUNT)
		return "?";
	return names_of[op](dir, dst, i);
}

/* The repro line names every value as Keras would read it: the stride the
 * op uses (strides=0 is the struct's "default" marker, which Keras refuses)
 * and, for the cpu backend, the ISA level its kernels run at. */
void xo_case_repro(const struct xo_case *c, const char *backend, char *buf, size_t size)
{
	struct xo_params p = xo_params_resolved(c->op, &c->p);
	char params[512], isa[48] = "";

#ifdef XO_HAVE_CPU
	if (!strncmp(backend, "cpu", 3))
		snprintf(isa, sizeof(isa), "XO_CPU_ISA=%s ",
		         xo_cpu_kernels_for(xo_cpu_isa_detect())->isa);
#endif
	xo_params_format(c->op, c->dir, &p, params, sizeof(params));
	snprintf(buf, size,
	         "%sxo check --op %s --dir %s --mode %s --backend %s --seed %" PRIu64 " %s", isa,
	         xo_op_name(c->op), xo_dir_name(c->dir), xo_hmode_name(c->mode), backend, c->seed,
	         params);
}

/* ---- plain runs (ref) ------------------------------------------------------ */

/*
 * Runs op on be with host inputs src (slot shapes from xo_op_shapes), dst
 * starting from init[i] (or zeros), and reads the outputs into out[i]; when
 * mag is given, mag[i] receives ref's magnitudes (MAG_UNSET where ref has
 * none).
 */
enum xo_status xo_hcase_run_plain(struct xo_backend *be, enum xo_op op, enum xo_dir dir,
                                const struct xo_params *p, float *const src[XO_MAX_SRC],
                                float *const init[XO_MAX_DST], float *const out[XO_MAX_DST],
                                float *const mag[XO_MAX_DST])
{
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
	struct xo_tensor *ts[XO_MAX_SRC] = {0}, *td[XO_MAX_DST] = {0}, *tm[XO_MAX_DST] = {0};
	struct xo_op_args a = {.p = *p};
	enum xo_status st;

	st = xo_op_shapes(op, dir, p, ss, ds);
	if (st)
		return st;
	for (int i = 0; i < XO_MAX_SRC; i++) {
		if (!ss[i].ndim)
			continue;
		st = xo_tensor_create(be, ss[i].dtype, ss[i].ndim, ss[i].dim, &ts[i]);
		if (!st)
			st = xo_tensor_write(ts[i], src[i], 0, slot_count(&ss[i]));
		if (st)
			goto out_free;
		a.src[i] = ts[i];
	}
	for (int i = 0; i < XO_MAX_DST; i++) {
		if (!ds[i].ndim)
			continue;
		st = xo_tensor_create(be, ds[i].dtype, ds[i].ndim, ds[i].dim, &td[i]);
		if (!st && init && init[i])
			st = xo_tensor_write(td[i], init[i], 0, slot_count(&ds[i]));
		if (st)
			goto out_free;
		a.dst[i] = td[i];
		if (mag && mag[i]) {
			for (int64_t e = 0; e < slot_count(&ds[i]); e++)
				mag[i][e] = MAG_UNSET;
			st = xo_tensor_create(be, XO_DTYPE_F32, ds[i].ndim, ds[i].dim, &tm[i]);
			if (!st)
				st = xo_tensor_write(tm[i], mag[i], 0, slot_count(&ds[i]));
			if (st)
				goto out_free;
			a.mag[i] = tm[i];
		}
	}
	st = xo_op_run(be, op, dir, &a);
	for (int i = 0; !st && i < XO_MAX_DST; i++) {
		if (td[i])
			st = xo_tensor_read(td[i], out[i], 0, slot_count(&ds[i]));
		if (!st && tm[i])
			st = xo_tensor_read(tm[i], mag[i], 0, slot_count(&ds[i]));
	}
out_free:
	for (int i = 0; i < XO_MAX_DST; i++) {
		xo_tensor_free(tm[i]);
		xo_tensor_free(td[i]);
	}
	for (int i = 0; i < XO_MAX_SRC; i++)
		xo_tensor_free(ts[i]);
	return st;
}

/* ---- report ----------------------------------------------------------------- */

static void report(struct xo_case_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void report(struct xo_case_result *r, const char *fmt, ...)
{
	size_t used = strlen(r->report);
	va_list ap;

	if (used + 1 >= sizeof(r->report))
		return;
	va_start(ap, fmt);
	vsnprintf(r->report + used, sizeof(r->report) - used, fmt, ap);
	va_end(ap);
}

static void fail(struct xo_case_result *r, enum xo_fail f)
{
	if (r->fail == XO_FAIL_NONE)
		r->fail = f;
	r->fails |= 1u << f;
}

static void coords(const struct xo_slot_shape *s, int64_t idx, char *buf, size_t size)
{
	int64_t c[XO_MAX_DIMS];
	size_t used = 0;

	for (int d = s->ndim - 1; d >= 0; d--) {
		c[d] = idx % s->dim[d];
		idx /= s->dim[d];
	}
	buf[0] = '\0';
	for (int d = 0; d < s->ndim && used < size; d++)
		used += (size_t)snprintf(buf + used, size - used, "[%" PRId64 "]", c[d]);
}

static void value_str(float v, bool i32, char *buf, size_t size)
{
	if (i32)
		snprintf(buf, size, "%" PRId32 " (0x%08" PRIx32 ")", (int32_t)f2u(v), f2u(v));
	else
		snprintf(buf, size, "%.9g (0x%08" PRIx32 ")", (double)v, f2u(v));
}

/* Elementwise verdict: XO_FAIL_NONE when got matches ref within tol. */
static enum xo_fail judge(float got, float ref, double tol, bool i32)
{
	uint32_t g = f2u(got), rr = f2u(ref);

	if (g == POISON && rr != POISON)
		return XO_FAIL_UNWRITTEN;
	if (i32)
		return g == rr ? XO_FAIL_NONE : XO_FAIL_MISMATCH;
	if (isnan(ref))
		return isnan(got) ? XO_FAIL_NONE : XO_FAIL_NONFINITE;
	if (isinf(ref))
		return g == rr ? XO_FAIL_NONE : XO_FAIL_NONFINITE;
	if (!isfinite(got))
		return XO_FAIL_NONFINITE;
	if (tol == 0.0) /* bit-exact; the sign of zero is not part of the contract */
		return g == rr || (got == 0.0f && ref == 0.0f) ? XO_FAIL_NONE : XO_FAIL_MISMATCH;
	return fabs((double)got - (double)ref) <= tol ? XO_FAIL_NONE : XO_FAIL_MISMATCH;
}

static void compare_slot(struct hcase *h, int i, const char *bname, struct xo_case_result *r)
{
	const struct xo_case *c = h->c;
	bool i32 = h->ds[i].dtype == XO_DTYPE_I32;
	int64_t nbad = 0, first = -1;
	enum xo_fail first_kind = XO_FAIL_NONE;
	char at[96], gs[64], es[64];

	for (int64_t e = 0; e < h->dn[i]; e++) {
		enum xo_fail k = judge(h->got[i][e], h->ref[i][e], h->tol[i][e], i32);

		if (h->tol[i][e] > 0.0 && isfinite(h->got[i][e]) && isfinite(h->ref[i][e])) {
			double q = fabs((double)h->got[i][e] - (double)h->ref[i][e]) / h->tol[i][e];

			if (q > r->worst)
				r->worst = q;
		}
		if (!i32 && isfinite(h->got[i][e]) && isfinite(h->ref[i][e]) &&
		    fabs((double)h->got[i][e] - (double)h->ref[i][e]) > r->max_err) {
			r->max_err = fabs((double)h->got[i][e] - (double)h->ref[i][e]);
			r->max_bound = h->tol[i][e];
		}
		if (k == XO_FAIL_NONE)
			continue;
		fail(r, k);
		if (!nbad++) {
			first = e;
			first_kind = k;
		}
	}
	if (!nbad)
		return;
	r->nbad += nbad;
	coords(&h->ds[i], first, at, sizeof(at));
	value_str(h->got[i][first], i32, gs, sizeof(gs));
	value_str(h->ref[i][first], i32, es, sizeof(es));
	report(r, "%s %s %s mode=%s dst[%d] %s: %" PRId64 " of %" PRId64 " elements bad (%s)\n",
	       bname, xo_op_name(c->op), xo_dir_name(c->dir), xo_hmode_name(c->mode), i,
	       slot_name(c->op, c->dir, true, i), nbad, h->dn[i], xo_fail_name(first_kind));
	report(r, "  first bad: index %" PRId64 " %s: got %s, expected %s\n", first, at, gs, es);
	if (!i32 && isfinite(h->got[i][first]) && isfinite(h->ref[i][first])) {
		double d = fabs((double)h->got[i][first] - (double)h->ref[i][first]);
		double ul = ulp_of(h->ref[i][first]);

		if (h->tol[i][first] == 0.0)
			report(r, "  |diff| %.3g = %.3g ulp; bound: bit-exact\n", d,
			       ul ? d / ul : 0.0);
		else
			report(r, "  |diff| %.3g = %.3g ulp; bound %.3g = %.3g ulp\n", d,
			       ul ? d / ul : 0.0, h->tol[i][first],
			       ul ? h->tol[i][first] / ul : 0.0);
	}
}

/* ---- the guarded run of the backend under test ------------------------------- */

static enum xo_status run_guarded(struct hcase *h, struct xo_backend *be, const char *bname,
                                  struct xo_case_result *r)
{
	const struct xo_case *c = h->c;
	struct xo_tensor *ts[XO_MAX_SRC] = {0}, *parent[XO_MAX_DST] = {0}, *view[XO_MAX_DST] = {0};
	struct xo_op_args a = {.p = c->p};
	float *buf[XO_MAX_DST] = {0}, *back = NULL;
	enum xo_status st = XO_OK, op_st;
	int64_t maxn = 0;

	for (int i = 0; i < XO_MAX_SRC; i++) {
		if (!h->sn[i])
			continue;
		if (h->sn[i] > maxn)
			maxn = h->sn[i];
		st = xo_tensor_create(be, h->ss[i].dtype, h->ss[i].ndim, h->ss[i].dim, &ts[i]);
		if (!st)
			st = xo_tensor_write(ts[i], h->src[i], 0, h->sn[i]);
		if (st)
			goto out_free;
		a.src[i] = ts[i];
	}
	for (int i = 0; i < XO_MAX_DST; i++) {
		int64_t total = h->dn[i] + 2 * GUARD;

		if (!h->dn[i])
			continue;
		buf[i] = malloc(sizeof(float) * (size_t)total);
		if (!buf[i]) {
			st = xo_error(XO_ENOMEM, "harness: out of memory");
			goto out_free;
		}
		/* Guards hold the canary; the dst region the poison (or, for
		 * adam's in-place w, m, v, their inputs). */
		for (int64_t e = 0; e < total; e++)
			buf[i][e] = u2f(e < GUARD || e >= GUARD + h->dn[i] ? CANARY : POISON);
		if (h->init[i])
			memcpy(buf[i] + GUARD, h->init[i], sizeof(float) * (size_t)h->dn[i]);
		st = xo_tensor_create(be, h->ds[i].dtype, 1, &total, &parent[i]);
		if (!st)
			st = xo_tensor_write(parent[i], buf[i], 0, total);
		if (!st)
			st =
			    xo_tensor_view(parent[i], GUARD, h->ds[i].ndim, h->ds[i].dim, &view[i]);
		if (st)
			goto out_free;
		a.dst[i] = view[i];
	}

	op_st = xo_op_run(be, c->op, c->dir, &a);
	if (op_st) {
		fail(r, XO_FAIL_RUN);
		report(r, "%s %s %s mode=%s: the backend returned '%s': %s\n", bname,
		       xo_op_name(c->op), xo_dir_name(c->dir), xo_hmode_name(c->mode),
		       xo_status_str(op_st), xo_last_error());
		goto out_free;
	}

	for (int i = 0; i < XO_MAX_DST; i++) {
		int64_t bad = 0, first = 0;

		if (!h->dn[i])
			continue;
		st = xo_tensor_read(parent[i], buf[i], 0, h->dn[i] + 2 * GUARD);
		if (st)
			goto out_free;
		for (int64_t e = 0; e < h->dn[i] + 2 * GUARD; e++) {
			if (e >= GUARD && e < GUARD + h->dn[i])
				continue;
			if (f2u(buf[i][e]) != CANARY && !bad++)
				first = e;
		}
		if (bad) {
			int64_t rel = first < GUARD ? first - GUARD : first - GUARD - h->dn[i];

			fail(r, XO_FAIL_GUARD);
			report(r,
			       "%s %s %s mode=%s dst[%d] %s: %" PRId64
			       " guard elements written; first "
			       "%" PRId64 " %s the %s (0x%08" PRIx32 ", canary 0x%08" PRIx32 ")\n",
			       bname, xo_op_name(c->op), xo_dir_name(c->dir),
			       xo_hmode_name(c->mode), i, slot_name(c->op, c->dir, true, i), bad,
			       rel < 0 ? -rel : rel + 1, rel < 0 ? "before" : "past",
			       rel < 0 ? "start" : "end", f2u(buf[i][first]), CANARY);
		}
		memcpy(h->got[i], buf[i] + GUARD, sizeof(float) * (size_t)h->dn[i]);
	}

	/* Sources are const: read them back. */
	back = malloc(sizeof(float) * (size_t)(maxn ? maxn : 1));
	if (!back) {
		st = xo_error(XO_ENOMEM, "harness: out of memory");
		goto out_free;
	}
	for (int i = 0; i < XO_MAX_SRC; i++) {
		if (!h->sn[i])
			continue;
		st = xo_tensor_read(ts[i], back, 0, h->sn[i]);
		if (st)
			goto out_free;
		for (int64_t e = 0; e < h->sn[i]; e++)
			if (f2u(back[e]) != f2u(h->src[i][e])) {
				fail(r, XO_FAIL_SRC_CHANGED);
				report(r,
				       "%s %s %s mode=%s: src[%d] %s modified at index %" PRId64
				       "\n",
				       bname, xo_op_name(c->op), xo_dir_name(c->dir),
				       xo_hmode_name(c->mode), i,
				       slot_name(c->op, c->dir, false, i), e);
				break;
			}
	}
out_free:
	free(back);
	for (int i = 0; i < XO_MAX_DST; i++) {
		xo_tensor_free(view[i]);
		xo_tensor_free(parent[i]);
		free(buf[i]);
	}
	for (int i = 0; i < XO_MAX_SRC; i++)
		xo_tensor_free(ts[i]);
	return st;
}

/* ---- a case -------------------------------------------------------------------- */

static void hcase_free(struct hcase *h)
{
	for (int i = 0; i < XO_MAX_SRC; i++)
		free(h->src[i]);
	for (int i = 0; i < XO_MAX_DST; i++) {
		free(h->init[i]);
		free(h->ref[i]);
		free(h->mag[i]);
		free(h->got[i]);
		free(h->tol[i]);
	}
	free(h->z);
}

/* A case whose buffers would take more than half of this machine's memory
 * is refused before any is allocated (XO_ENOMEM: bad input to `xo check`).
 * Allocation alone would not stop it: the kernel hands out pages lazily,
 * so a batch of 2^31 was "allocated" and then filled until the machine
 * swapped. Counted: the harness's own arrays below, and the source and
 * destination tensors of both backends (ref's and the checked one's). */
static enum xo_status hcase_fits(const struct hcase *h, bool conv, bool mag)
{
	double src = 0, dst = 0, host = 0, need, phys;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);

	for (int i = 0; i < XO_MAX_SRC; i++)
		src += (double)slot_count(&h->ss[i]);
	for (int i = 0; i < XO_MAX_DST; i++) {
		double n = (double)slot_count(&h->ds[i]);

		dst += n;
		/* ref, got, mag, init floats and the tolerance's double */
		host += n * (2.0 + (mag ? 1.0 : 0.0) + (has_state(h->c, i) ? 1.0 : 0.0) + 2.0);
	}
	host += src + (conv ? (double)slot_count(&h->ds[0]) : 0.0);
	need = (host + 2.0 * (src + dst)) * (double)sizeof(float);
	if (pages <= 0 || page <= 0)
		return XO_OK;
	phys = (double)pages * (double)page;
	if (need > phys / 2)
		return xo_error(XO_ENOMEM,
		                "harness: the case needs %.1f GiB of memory, more than half of "
		                "this machine's %.1f GiB: give a smaller shape",
		                need / 1073741824.0, phys / 1073741824.0);
	return XO_OK;
}

static enum xo_status hcase_alloc(struct hcase *h)
{
	const struct xo_case *c = h->c;
	bool conv = has_activation(c->op), mag = needs_mag(c->op);
	enum xo_status st = hcase_fits(h, conv, mag);

	if (st)
		return st;
	for (int i = 0; i < XO_MAX_SRC; i++) {
		h->sn[i] = slot_count(&h->ss[i]);
		if (h->sn[i] && !(h->src[i] = calloc((size_t)h->sn[i], sizeof(float))))
			return xo_error(XO_ENOMEM, "harness: out of memory");
	}
	for (int i = 0; i < XO_MAX_DST; i++) {
		size_t n = (size_t)(h->dn[i] = slot_count(&h->ds[i]));

		if (!n)
			continue;
		h->ref[i] = calloc(n, sizeof(float));
		h->got[i] = calloc(n, sizeof(float));
		h->tol[i] = calloc(n, sizeof(double));
		if (mag)
			h->mag[i] = calloc(n, sizeof(float));
		if (has_state(c, i))
			h->init[i] = calloc(n, sizeof(float));
		if (!h->ref[i] || !h->got[i] || !h->tol[i] || (mag && !h->mag[i]) ||
		    (has_state(c, i) && !h->init[i]))
			return xo_error(XO_ENOMEM, "harness: out of memory");
	}
	if (conv && c->dir == XO_DIR_FWD && !(h->z = calloc((size_t)h->dn[0], sizeof(float))))
		return xo_error(XO_ENOMEM, "harness: out of memory");
	return XO_OK;
}

enum xo_status xo_case_run(struct xo_backend *ref, struct xo_backend *be, const struct xo_case *c,
                           struct xo_case_result *r)
{
	struct hcase h = {.c = c};
	const char *bname = xo_backend_name(be);
	enum xo_status st;
	char why[256];

	memset(r, 0, sizeof(*r));
	xo_case_repro(c, bname, r->repro, sizeof(r->repro));
	if ((unsigned)c->op >= XO_OP_COUNT || (unsigned)c->dir >= XO_DIR_COUNT ||
	    (unsigned)c->mode >= XO_HMODE_COUNT)
		return xo_error(XO_EINVAL, "harness: unknown op, direction or mode");
	st = xo_op_shapes(c->op, c->dir, &c->p, h.ss, h.ds);
	if (st)
		return st;
	if (!xo_hmode_applies(c->op, c->dir, &c->p, c->mode))
		return xo_error(XO_EINVAL, "%s %s: mode %s does not apply%s", xo_op_name(c->op),
		                xo_dir_name(c->dir), xo_hmode_name(c->mode),
		                c->mode == XO_HMODE_EXACT ? " (a transcendental op or activation)"
		                                          : "");
	st = xo_hcase_exact_amplitude(c, &h.amp);
	if (st)
		return st;
	st = hcase_alloc(&h);
	if (!st)
		st = xo_hcase_fill(&h);
	if (st)
		goto out;
	if (c->mode == XO_HMODE_NONFINITE)
		xo_hcase_plant_nonfinite(&h);

	st = xo_hcase_run_plain(ref, c->op, c->dir, &c->p, h.src, h.init, h.ref, h.mag);
	if (st) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", xo_last_error());
		st = xo_error(st, "ref failed on %s %s: %s", xo_op_name(c->op), xo_dir_name(c->dir),
		              msg);
		goto out;
	}
	st = xo_hcase_set_tolerances(&h, ref);
	if (st)
		goto out;

	for (int i = 0; i < XO_MAX_DST; i++) {
		if (!h.dn[i])
			continue;
		h.structural[i] = xo_hcase_structural_zeros(&h, i);
		if (xo_hcase_mistrusted(&h, i, why, sizeof(why))) {
			if (c->uninformative_ok) {
				r->uninformative = true;
				continue;
			}
			fail(r, XO_FAIL_MISTRUST);
			report(r,
			       "%s %s %s mode=%s dst[%d] %s: uninformative case: %s; the fill "
			       "(or the shape) must change\n",
			       bname, xo_op_name(c->op), xo_dir_name(c->dir),
			       xo_hmode_name(c->mode), i, slot_name(c->op, c->dir, true, i), why);
		}
	}
	if (r->fail)
		goto out_report;

	st = run_guarded(&h, be, bname, r);
	if (st || (r->fails & (1u << XO_FAIL_RUN)))
		goto out_report;
	for (int i = 0; i < XO_MAX_DST; i++)
		if (h.dn[i])
			compare_slot(&h, i, bname, r);
out_report:
	if (r->fail)
		report(r, "  seed %" PRIu64 "; repro: %s\n", c->seed, r->repro);
out:
	hcase_free(&h);
	return st;
}
