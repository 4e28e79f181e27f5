/*
 * test_gradcheck.c - the oracle checked: the reference backward pass of every
 * op with has_bwd against central finite differences in double, on small
 * shapes covering every parameter combination; the public float path of the
 * "ref" backend against the double path it is built on; and a few forward
 * values worked out by hand.
 *
 * Method (one cmocka case per parameter combination, named by its canonical
 * parameter line):
 *   1. Inputs and parameters are floats (random in [-1, 1), Philox-seeded)
 *      held in double. The scalar L = sum_k r_k * y_k with fixed random r.
 *   2. Analytic gradients: ref's double forward y = f(x), then ref's double
 *      backward with dy = r (reference/ref_internal.h math functions).
 *   3. Finite differences: each input element is moved by +-h and L is
 *      evaluated again by the double forward; g_fd = (L+ - L-) / (2h).
 *      h = 2^-13, so x +- h is exact in double for any float x in [-1, 1).
 *   4. Kinks are avoided: for relu and leaky_relu, every pre-activation is kept further
 *      than 2e-3 from 0 (relu6's and hard_sigmoid's inputs, spread over
 *      [k0 - 1, k1 + 1), from their kinks: clip_spread) (one element moved by h changes a pre-activation by
 *      at most h * max|w| < 1.3e-4); max-pooling inputs are distinct values
 *      spaced 2/N apart (N <= 28 here, so >= 0.07 >> h), so no window's
 *      winner changes under the perturbation.
 *   5. Tolerance, |g - g_fd| <= tol * max(1, |g_fd|):
 *      - piecewise-linear ops (linear/relu activations, max-pooling, relu,
 *        leaky_relu, relu6, hard_sigmoid, flatten, dropout, pad, up_sampling, permute, flip, rescaling,
 *        normalization (linear in x: mean and variance are constants),
 *        merge: multiply too, linear in each element of a and of b): L is linear in each input between kinks, so the
 *        central difference has no truncation error; what remains is double
 *        rounding of L (|L| <= ~50 here) divided by 2h: 50 * 2^-53 / 2^-12
 *        ~ 2e-11. tol = 1e-8 (a margin of ~500).
 *      - smooth ops (sigmoid, softmax, cross-entropy, tanh, elu, gelu,
 *        softplus), and the recurrent ops, relu included (their output is
 *        a polynomial of degree up to T in the recurrent kernel even with
 *        relu, so the central difference has a truncation error; measured
 *        worst 3e-8 over every case, T = 7, batch 2, 2 features, 3 units): truncation error h^2/6 * |L'''| = 2.5e-9 * |L'''|, with
 *        |L'''| of order 10 for these shapes (|sigmoid'''| <= 1/8,
 *        |tanh'''| <= 2, |elu'''| <= 1, |gelu'''| <= 1.2, |softplus'''|
 *        <= 1/8, |silu'''| <= 0.5 on [-1, 1] and log_softmax's
 *        third derivatives (those of log-sum-exp) <= 1, attention's
 *        (a softmax of bilinear scores of such inputs) likewise; elu'' jumps at 0, so its inputs keep GC_KINK
 *        away from 0 as relu's do; inputs and weights <= 1,
 *        at most 6 terms per output), so ~3e-8, plus the same rounding.
 *        tol = 1e-6 (a margin of ~30).
 *   6. The public path: the same inputs as float tensors through
 *      xo_op_run(ref), forward then backward (with y from the float
 *      forward); every output must equal, bit for bit, the double math on
 *      the same values rounded once to float (both execute the same double
 *      operations), and every backward output must satisfy |g| <= mag.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ref_internal.h"

#define GC_H 0x1p-13
#define GC_TOL_LINEAR 1e-8
#define GC_TOL_SMOOTH 1e-6
#define GC_KINK 2e-3
#define GC_CASES_MAX 400

/* One gradient-check case: an op and its parameters. */
struct gc_case {
	enum xo_op op;      /* an op with has_bwd */
	struct xo_params p; /* its parameters */
	double tol;         /* see the file comment, item 5 */
	bool soft_targets;  /* categorical_crossentropy: soft labels instead of one-hot */
	char name[200];     /* "op key=value ..." */
};

static struct gc_case gc_cases[GC_CASES_MAX];
static int gc_ncases;

/* ---- small helpers ------------------------------------------------------ */

static int64_t slot_elems(const struct xo_slot_shape *s)
{
	int64_t n = 1;

	for (int i = 0; i < s->ndim; i++)
		n *= s->dim[i];
	return s->ndim ? n : 0;
}

/* A float in [-1, 1), exactly: 24 random bits. */
static double rnd(uint64_t seed, uint32_t stream, uint64_t i)
{
	return (double)(xo_philox_uniform(seed, stream, 77, i) * 2.0f - 1.0f);
}

static double *dalloc(int64_t n)
{
	double *p = calloc((size_t)(n ? n : 1), sizeof(*p));

	assert_non_null(p);
	return p;
}

static bool same_bits(float a, float b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

/* What backward source slot s of op holds (ops.def): a forward input, the
 * forward output y, the incoming gradient dy, or nothing. */
enum gc_bsrc { GC_NONE, GC_IN0, GC_IN1, GC_IN2, GC_IN3, GC_Y, GC_DY, GC_WS, GC_IN4 };

static enum gc_bsrc bwd_src(enum xo_op op, int s)
{
	/* XO_MAX_SRC entries each; the unnamed tail is GC_NONE */
	static const enum gc_bsrc with_params[XO_MAX_SRC] = {GC_IN0, GC_IN1, GC_Y, GC_DY};
	static const enum gc_bsrc pool[XO_MAX_SRC] = {GC_IN0, GC_DY};
	static const enum gc_bsrc act[XO_MAX_SRC] = {GC_Y, GC_DY};
	static const enum gc_bsrc act_x[XO_MAX_SRC] = {GC_IN0, GC_DY};
	static const enum gc_bsrc grad_only[XO_MAX_SRC] = {GC_DY};
	static const enum gc_bsrc norm[XO_MAX_SRC] = {GC_IN0, GC_IN1, GC_DY};
	static const enum gc_bsrc rnn[XO_MAX_SRC] = {GC_IN0, GC_IN1, GC_IN2, GC_WS, GC_DY, GC_IN4};
	static const enum gc_bsrc attn[XO_MAX_SRC] = {GC_IN0, GC_IN1, GC_IN2, GC_DY, GC_IN3};
	static const enum gc_bsrc merge[XO_MAX_SRC] = {GC_IN0, GC_IN1, GC_DY, GC_IN2};
	static const enum gc_bsrc normz[XO_MAX_SRC] = {GC_IN2, GC_DY};

	switch (op) {
	case XO_OP_conv1d:
	case XO_OP_conv2d:
	case XO_OP_dense:
	case XO_OP_depthwise_conv2d:
	case XO_OP_conv2d_transpose:
		return with_params[s];
	case XO_OP_max_pooling1d:
	case XO_OP_global_max_pooling1d:
	case XO_OP_max_pooling2d:
	case XO_OP_global_max_pooling2d:
		return pool[s];
	case XO_OP_average_pooling1d:
	case XO_OP_global_average_pooling1d:
	case XO_OP_average_pooling2d:
	case XO_OP_global_average_pooling2d:
		return grad_only[s];
	case XO_OP_relu:
	case XO_OP_sigmoid:
	case XO_OP_softmax:
	case XO_OP_tanh:
	case XO_OP_log_softmax:
		return act[s];
	case XO_OP_gelu: /* derivative from x (ops.def) */
	case XO_OP_elu:
	case XO_OP_softplus:
	case XO_OP_relu6:
	case XO_OP_hard_sigmoid:
	case XO_OP_silu:
	case XO_OP_leaky_relu:
	case XO_OP_masking: /* {x, dy}: the keep flags recomputed from x */
		return act_x[s];
	case XO_OP_flatten:
	case XO_OP_dropout:
	case XO_OP_pad:
	case XO_OP_up_sampling:
	case XO_OP_permute:
	case XO_OP_flip:
	case XO_OP_rescaling:
		return grad_only[s];
	case XO_OP_normalization: /* {variance, dy} */
		return normz[s];
	case XO_OP_batch_normalization: /* {x, gamma|NULL, dy} */
	case XO_OP_layer_normalization:
		return norm[s];
	case XO_OP_merge: /* {a, b, dy, ids|NULL} */
		return merge[s];
	case XO_OP_simple_rnn: /* {x, kernel, recurrent_kernel, ws, dy, ids|NULL} */
	case XO_OP_lstm:
	case XO_OP_gru:
		return rnn[s];
	case XO_OP_attention: /* {q, k, v, dy, m|NULL} */
		return attn[s];
	default:
		fail_msg("bwd_src: op %s is not handled here", xo_op_name(op));
	}
	return GC_NONE;
}

/* The backward source arrays of op from its forward inputs, y and dy. */
static void bwd_srcs(enum xo_op op, const struct xo_ref_src *in, struct xo_ref_src y,
		     struct xo_ref_src dy, struct xo_ref_src ws, struct xo_ref_src out[XO_MAX_SRC])
{
	for (int s = 0; s < XO_MAX_SRC; s++) {
		switch (bwd_src(op, s)) {
		case GC_NONE:
			out[s] = (struct xo_ref_src){0};
			break;
		case GC_IN0:
			out[s] = in[0];
			break;
		case GC_IN1:
			out[s] = in[1];
			break;
		case GC_IN2:
			out[s] = in[2];
			break;
		case GC_IN3:
			out[s] = in[3];
			break;
		case GC_IN4:
			out[s] = in[4];
			break;
		case GC_WS:
			out[s] = ws;
			break;
		case GC_Y:
			out[s] = y;
			break;
		case GC_DY:
			out[s] = dy;
			break;
		}
	}
}

/* ---- the generic check -------------------------------------------------- */

/* Arrays of one case, in double. */
struct gc_data {
	struct xo_slot_shape fs[XO_MAX_SRC], fd[XO_MAX_DST]; /* forward slots */
	struct xo_slot_shape bs[XO_MAX_SRC], bd[XO_MAX_DST]; /* backward slots */
	double *in[XO_MAX_SRC];  /* forward inputs (float values) */
	int64_t nin[XO_MAX_SRC]; /* their sizes (0: absent) */
	double *y, *r;           /* forward output, weights of L */
	int64_t ny;
	double *ws;              /* the recurrent ops' workspace (forward dst[1]) */
	int64_t nws;
	double *g[XO_MAX_DST];   /* analytic gradients, g[i] of in[i] */
};

static void data_free(struct gc_data *d)
{
	for (int i = 0; i < XO_MAX_SRC; i++)
		free(d->in[i]);
	for (int i = 0; i < XO_MAX_DST; i++)
		free(d->g[i]);
	free(d->y);
	free(d->r);
	free(d->ws);
}

static void math_fwd(const struct gc_case *c, const struct gc_data *d, const struct xo_params *p,
		     double *y)
{
	struct xo_ref_src src[XO_MAX_SRC] = {{0}};
	struct xo_ref_dst dst[XO_MAX_DST] = {{0}}, mag[XO_MAX_DST] = {{0}};

	for (int i = 0; i < XO_MAX_SRC; i++)
		src[i].d = d->in[i];
	dst[0].d = y;
	dst[1].d = d->ws; /* NULL but for the recurrent ops */
	assert_int_equal(xo_ref_math(c->op, XO_DIR_FWD)(p, src, dst, mag), XO_OK);
}

static double loss(const struct gc_case *c, struct gc_data *d)
{
	double l = 0.0;

	math_fwd(c, d, &c->p, d->y);
	for (int64_t k = 0; k < d->ny; k++)
		l += d->r[k] * d->y[k];
	return l;
}

/*
 * simple_rnn with relu: every pre-activation x_t W + h' U + b (h' from the
 * double forward's ws) further than GC_KINK (16 h) from 0, as conv1d's. A
 * later step's pre-activation moves by more than h per h of input (the
 * state feeds through U at every step), so this keeps the fills away from
 * kinks without proving that no perturbation crosses one; a crossing could
 * only fail the check (a jump of order 1 / 2h in the difference quotient,
 * far above tol), never let a wrong gradient pass.
 */
static bool rnn_relu_kink_free(const struct gc_case *c, struct gc_data *d)
{
	const struct xo_params *p = &c->p;
	int64_t u = p->units, T = p->len, in = p->ch;

	math_fwd(c, d, p, d->y);
	for (int64_t n = 0; n < p->batch; n++)
		for (int64_t s = 0; s < T; s++) {
			int64_t t = p->go_backwards ? T - 1 - s : s;

			for (int64_t j = 0; j < u; j++) {
				double a = p->use_bias ? d->in[3][j] : 0.0;

				for (int64_t i = 0; i < in; i++)
					a += d->in[0][(n * T + t) * in + i] * d->in[1][i * u + j];
				for (int64_t k = 0; s > 0 && k < u; k++)
					a += d->ws[(n * T + s - 1) * u + k] * d->in[2][k * u + j];
				if (fabs(a) <= GC_KINK)
					return false;
			}
		}
	return true;
}

/*
 * The clipped activations (kinks k0 < k1, k1 - k0 = 6: relu6 0 and 6,
 * hard_sigmoid -3 and 3): the
 * inputs spread to 4 x + (k0 + k1) / 2, i.e. [k0 - 1, k1 + 1), so both
 * clipped sides and the linear part between are checked (exact in double:
 * a float times 4 plus a small integer). An input moved by h moves only its
 * own output, so a kink further than h away is never crossed; GC_KINK (16 h)
 * is kept, as relu's. false when an input is within it of a kink.
 */
static bool clip_spread(struct gc_data *d, double k0, double k1)
{
	for (int64_t k = 0; k < d->nin[0]; k++) {
		double x = 4.0 * d->in[0][k] + 0.5 * (k0 + k1);

		d->in[0][k] = x;
		if (fabs(x - k0) <= GC_KINK || fabs(x - k1) <= GC_KINK)
			return false;
	}
	return true;
}

/* Fills inputs for attempt a; false when a relu kink is too close. */
static bool fill(const struct gc_case *c, struct gc_data *d, uint64_t seed)
{
	for (int i = 0; i < XO_MAX_SRC; i++)
		for (int64_t k = 0; k < d->nin[i]; k++)
			d->in[i][k] = rnd(seed, (uint32_t)i, (uint64_t)k);
	for (int64_t k = 0; k < d->ny; k++)
		d->r[k] = rnd(seed, 9, (uint64_t)k);
	if (c->op == XO_OP_max_pooling1d || c->op == XO_OP_global_max_pooling1d) {
		/* distinct values (2*perm(k) + 1)/N - 1, perm a Fisher-Yates shuffle */
		int64_t n = d->nin[0];
		int64_t *perm = calloc((size_t)n, sizeof(*perm));

		assert_non_null(perm);
		for (int64_t k = 0; k < n; k++)
			perm[k] = k;
		for (int64_t k = n - 1; k > 0; k--) {
			int64_t j = (int64_t)(xo_philox_uniform(seed, 11, 0, (uint64_t)k) *
					      (float)(k + 1));
			int64_t t = perm[k];

			perm[k] = perm[j];
			perm[j] = t;
		}
		for (int64_t k = 0; k < n; k++)
			d->in[0][k] = (double)(float)((double)(2 * perm[k] + 1) / (double)n - 1.0);
		free(perm);
	}
	if (c->op == XO_OP_relu || c->op == XO_OP_elu || /* elu'' jumps at 0 */
	    c->op == XO_OP_leaky_relu) {
		for (int64_t k = 0; k < d->nin[0]; k++)
			if (fabs(d->in[0][k]) <= GC_KINK)
				return false;
	}
	if (c->op == XO_OP_simple_rnn && c->p.activation == XO_ACTIVATION_RELU)
		return rnn_relu_kink_free(c, d);
	if (c->op == XO_OP_merge &&
	    (c->p.mode == XO_MERGE_MAXIMUM || c->p.mode == XO_MERGE_MINIMUM)) {
		for (int64_t k = 0; k < d->nin[0]; k++) /* the kink a = b */
			if (fabs(d->in[0][k] - d->in[1][k]) <= GC_KINK)
				return false;
	}
	if (c->op == XO_OP_attention && c->p.attention_mask) {
		/* the mask: row 1 of each sample keeps no key, the others a
		 * third of theirs dropped (the mask is no variable: no gradient) */
		int64_t tk = xo_attention_len_kv(&c->p);

		for (int64_t k = 0; k < d->nin[3]; k++)
			d->in[3][k] = k / tk % c->p.len == 1 || k % 3 == 2 ? 0.0 : 1.0;
	}
	if (c->op == XO_OP_merge && (c->p.mask_a || c->p.mask_b)) {
		/* the ids (no variable): sample 0 its first and last steps
		 * masked, sample 1 a middle one, the last sample every step */
		for (int64_t k = 0; k < d->nin[2]; k++) {
			int64_t n = k / c->p.len, t = k % c->p.len;
			bool m = n == 0 ? t == 0 || t == c->p.len - 1
			                : n == c->p.batch - 1 || t == 1;

			d->in[2][k] = m ? 0.0 : (double)(1 + k % 4);
		}
	}
	if (xo_op_is_rnn(c->op) && c->p.mask_zero) {
		/* the ids (no variable): sample 0 the last two steps masked,
		 * sample 1 the first and a middle one (len 7: steps 0 and 3) */
		for (int64_t k = 0; k < d->nin[4]; k++) {
			int64_t n = k / c->p.len, t = k % c->p.len;
			bool m = n == 0 ? t >= c->p.len - 2 : t == 0 || t == 3;

			d->in[4][k] = m ? 0.0 : (double)(1 + k % 4);
		}
	}
	if (c->op == XO_OP_normalization) /* variances in [0.25, 2.25], floats (no variable) */
		for (int64_t k = 0; k < d->nin[2]; k++)
			d->in[2][k] = (double)(float)(1.25 + d->in[2][k]);
	if (c->op == XO_OP_relu6)
		return clip_spread(d, 0.0, 6.0);
	if (c->op == XO_OP_hard_sigmoid)
		return clip_spread(d, -3.0, 3.0);
	if ((c->op == XO_OP_conv1d || c->op == XO_OP_conv2d || c->op == XO_OP_dense ||
	     c->op == XO_OP_depthwise_conv2d || c->op == XO_OP_conv2d_transpose) &&
	    c->p.activation == XO_ACTIVATION_RELU) {
		struct xo_params q = c->p;

		q.activation = XO_ACTIVATION_LINEAR;
		math_fwd(c, d, &q, d->y);
		for (int64_t k = 0; k < d->ny; k++)
			if (fabs(d->y[k]) <= GC_KINK)
				return false;
	}
	return true;
}

/* Step 2: analytic gradients from the double math. */
static void analytic(const struct gc_case *c, struct gc_data *d)
{
	struct xo_ref_src in[XO_MAX_SRC] = {{0}}, src[XO_MAX_SRC];
	struct xo_ref_dst dst[XO_MAX_DST] = {{0}}, mag[XO_MAX_DST] = {{0}};

	math_fwd(c, d, &c->p, d->y);
	for (int i = 0; i < XO_MAX_SRC; i++)
		in[i].d = d->in[i];
	bwd_srcs(c->op, in, (struct xo_ref_src){.d = d->y}, (struct xo_ref_src){.d = d->r},
		 (struct xo_ref_src){.d = d->ws}, src);
	for (int i = 0; i < XO_MAX_DST; i++)
		dst[i].d = d->g[i];
	assert_int_equal(xo_ref_math(c->op, XO_DIR_BWD)(&c->p, src, dst, mag), XO_OK);
}

/* Step 3 and 5: every gradient element against its central difference. */
static void finite_differences(const struct gc_case *c, struct gc_data *d)
{
	int bad = 0;
	double worst = 0.0;

	for (int i = 0; i < XO_MAX_DST; i++) {
		if (!d->bd[i].ndim)
			continue;
		assert_int_equal(slot_elems(&d->bd[i]), d->nin[i]);
		for (int64_t k = 0; k < d->nin[i]; k++) {
			double v = d->in[i][k], lp, lm, fd, err;

			d->in[i][k] = v + GC_H;
			lp = loss(c, d);
			d->in[i][k] = v - GC_H;
			lm = loss(c, d);
			d->in[i][k] = v;
			fd = (lp - lm) / (2.0 * GC_H);
			err = fabs(d->g[i][k] - fd) / fmax(1.0, fabs(fd));
			if (err > worst)
				worst = err;
			if (!(err <= c->tol) && bad++ < 5)
				print_error("%s: d L / d src[%d][%lld]: backward %.12g, "
					    "finite difference %.12g (error %.3g > %.1g)\n",
					    c->name, i, (long long)k, d->g[i][k], fd, err, c->tol);
		}
	}
	if (getenv("XO_GC_VERBOSE"))
		print_message("%s: worst error %.3g (tol %.1g)\n", c->name, worst, c->tol);
	if (bad)
		fail_msg("%s: %d gradient elements off (worst %.3g)", c->name, bad, worst);
}

/* dropout: the gradient is the mask times the scale, drawn independently here. */
static void dropout_mask(const struct gc_case *c, const struct gc_data *d)
{
	float scale = 1.0f / (1.0f - c->p.rate);

	for (int64_t k = 0; k < d->ny; k++) {
		bool keep = !c->p.training || xo_dropout_keep(c->p.seed, c->p.step, c->p.layer,
							      (uint64_t)k, c->p.rate);
		double want = keep ? d->r[k] * (double)(c->p.training ? scale : 1.0f) : 0.0;

		if (d->g[0][k] != want)
			fail_msg("%s: dx[%lld] = %.9g, mask * scale * dy = %.9g", c->name,
				 (long long)k, d->g[0][k], want);
	}
}

/* The tensors and host buffers of one public-path check (step 6). */
struct gc_pub {
	struct xo_backend *be;
	struct xo_tensor *tin[XO_MAX_SRC], *ty, *tym, *tr; /* inputs, y, |y| bound, dy */
	struct xo_tensor *tg[XO_MAX_DST], *tgm[XO_MAX_DST]; /* gradients, their bounds */
	struct xo_tensor *tst[XO_MAX_DST]; /* batch normalization's moving statistics */
	struct xo_tensor *tws, *twsm; /* the recurrent ops' workspace, |ws| */
	float *buf, *buf2; /* host copies of a tensor and of its magnitude */
	double *yd, *wsd, *gd[XO_MAX_DST]; /* float y, ws as doubles; the double dx */
};

/* Step 6, forward: y, its magnitude and the workspace equal the double math
 * rounded once; leaves y and ws (as the backward reads them) in pb. */
static void public_fwd(const struct gc_case *c, struct gc_data *d, struct gc_pub *pb)
{
	struct xo_op_args a = {.p = c->p};

	for (int i = 0; i < XO_MAX_SRC; i++) {
		if (!d->nin[i])
			continue;
		assert_int_equal(xo_tensor_create(pb->be, d->fs[i].dtype, d->fs[i].ndim, d->fs[i].dim,
						  &pb->tin[i]), XO_OK);
		for (int64_t k = 0; k < d->nin[i]; k++) {
			int32_t id = (int32_t)d->in[i][k]; /* an I32 slot: the recurrent ops' ids */

			pb->buf[k] = (float)d->in[i][k];
			if (d->fs[i].dtype == XO_DTYPE_I32)
				memcpy(&pb->buf[k], &id, 4);
		}
		assert_int_equal(xo_tensor_write(pb->tin[i], pb->buf, 0, d->nin[i]), XO_OK);
		a.src[i] = pb->tin[i];
	}
	assert_int_equal(xo_tensor_create(pb->be, XO_DTYPE_F32, d->fd[0].ndim, d->fd[0].dim,
					  &pb->ty), XO_OK);
	assert_int_equal(xo_tensor_create(pb->be, XO_DTYPE_F32, d->fd[0].ndim, d->fd[0].dim,
					  &pb->tym), XO_OK);
	a.dst[0] = pb->ty;
	a.mag[0] = pb->tym;
	if (c->op == XO_OP_batch_normalization) /* the moving statistics (state) */
		for (int i = 1; i < 3; i++)
			assert_int_equal(xo_tensor_create(pb->be, XO_DTYPE_F32, d->fd[i].ndim,
							  d->fd[i].dim, &pb->tst[i]), XO_OK),
			    a.dst[i] = pb->tst[i];
	if (c->op == XO_OP_masking) /* the keep flags (i32), not compared here */
		assert_int_equal(xo_tensor_create(pb->be, XO_DTYPE_I32, d->fd[1].ndim, d->fd[1].dim,
						  &pb->tst[1]), XO_OK),
		    a.dst[1] = pb->tst[1];
	if (d->nws) { /* the recurrent ops' workspace, and its magnitude |ws| */
		assert_int_equal(xo_tensor_create(pb->be, XO_DTYPE_F32, d->fd[1].ndim, d->fd[1].dim,
						  &pb->tws), XO_OK);
		assert_int_equal(xo_tensor_create(pb->be, XO_DTYPE_F32, d->fd[1].ndim, d->fd[1].dim,
						  &pb->twsm), XO_OK);
		a.dst[1] = pb->tws;
		a.mag[1] = pb->twsm;
	}
	assert_int_equal(xo_op_run(pb->be, c->op, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(pb->ty, pb->buf, 0, d->ny), XO_OK);
	math_fwd(c, d, &c->p, d->y);
	for (int64_t k = 0; k < d->ny; k++)
		if (!same_bits(pb->buf[k], (float)d->y[k]))
			fail_msg("%s: fwd y[%lld] = %.9g, double math rounded %.9g", c->name,
				 (long long)k, (double)pb->buf[k], (double)(float)d->y[k]);
	/* magnitudes: |y| <= mag before any activation; |y| itself for the
	 * ops that do not accumulate */
	assert_int_equal(xo_tensor_read(pb->tym, pb->buf2, 0, d->ny), XO_OK);
	for (int64_t k = 0; k < d->ny; k++) {
		bool acc = c->op == XO_OP_conv1d || c->op == XO_OP_conv2d || c->op == XO_OP_dense ||
			   c->op == XO_OP_depthwise_conv2d || c->op == XO_OP_conv2d_transpose ||
			   c->op == XO_OP_average_pooling1d ||
			   c->op == XO_OP_global_average_pooling1d ||
			   c->op == XO_OP_average_pooling2d ||
			   c->op == XO_OP_global_average_pooling2d || c->op == XO_OP_attention ||
			   c->op == XO_OP_rescaling || /* x m + o: a sum of two terms */
			   (c->op == XO_OP_normalization && c->p.invert); /* mean + x den */

		if (acc && c->p.activation == XO_ACTIVATION_LINEAR &&
		    !(fabsf(pb->buf[k]) <= pb->buf2[k]))
			fail_msg("%s: fwd y[%lld] = %.9g exceeds its magnitude %.9g", c->name,
				 (long long)k, (double)pb->buf[k], (double)pb->buf2[k]);
		if (!acc && !same_bits(fabsf(pb->buf[k]), pb->buf2[k]))
			fail_msg("%s: fwd mag[%lld] = %.9g, not |y| = %.9g", c->name,
				 (long long)k, (double)pb->buf2[k], (double)fabsf(pb->buf[k]));
	}
	for (int64_t k = 0; k < d->ny; k++)
		pb->yd[k] = (double)pb->buf[k]; /* the float y the backward reads */
	if (d->nws) { /* ws as the double math made it, rounded once; mag = |ws| */
		pb->wsd = dalloc(d->nws);
		assert_int_equal(xo_tensor_read(pb->tws, pb->buf, 0, d->nws), XO_OK);
		assert_int_equal(xo_tensor_read(pb->twsm, pb->buf2, 0, d->nws), XO_OK);
		for (int64_t k = 0; k < d->nws; k++) {
			if (!same_bits(pb->buf[k], (float)d->ws[k]))
				fail_msg("%s: fwd ws[%lld] = %.9g, double math rounded %.9g",
					 c->name, (long long)k, (double)pb->buf[k],
					 (double)(float)d->ws[k]);
			if (!same_bits(fabsf(pb->buf[k]), pb->buf2[k]))
				fail_msg("%s: fwd ws mag[%lld] = %.9g, not |ws|", c->name,
					 (long long)k, (double)pb->buf2[k]);
			pb->wsd[k] = (double)pb->buf[k]; /* the float ws the backward reads */
		}
	}
}

/* Step 6, backward with dy = r: every gradient equals the double math rounded
 * once and stays within its magnitude; dx is optional where the op allows. */
static void public_bwd(const struct gc_case *c, struct gc_data *d, struct gc_pub *pb)
{
	struct xo_op_args a;
	struct xo_ref_src in[XO_MAX_SRC] = {{0}}, src[XO_MAX_SRC];
	struct xo_ref_dst dst[XO_MAX_DST] = {{0}}, mag[XO_MAX_DST] = {{0}};

	assert_int_equal(xo_tensor_create(pb->be, XO_DTYPE_F32, d->fd[0].ndim, d->fd[0].dim,
					  &pb->tr), XO_OK);
	for (int64_t k = 0; k < d->ny; k++)
		pb->buf[k] = (float)d->r[k];
	assert_int_equal(xo_tensor_write(pb->tr, pb->buf, 0, d->ny), XO_OK);
	memset(&a, 0, sizeof(a));
	a.p = c->p;
	for (int s = 0; s < XO_MAX_SRC; s++) {
		static const int in_slot[] = {[GC_IN0] = 0, [GC_IN1] = 1, [GC_IN2] = 2,
					      [GC_IN3] = 3, [GC_IN4] = 4};
		enum gc_bsrc what = bwd_src(c->op, s);

		a.src[s] = what == GC_NONE ? NULL : what == GC_Y ? pb->ty : what == GC_DY ? pb->tr
			   : what == GC_WS ? pb->tws : pb->tin[in_slot[what]];
	}
	for (int i = 0; i < XO_MAX_DST; i++) {
		if (!d->bd[i].ndim)
			continue;
		assert_int_equal(xo_tensor_create(pb->be, XO_DTYPE_F32, d->bd[i].ndim, d->bd[i].dim,
						  &pb->tg[i]), XO_OK);
		assert_int_equal(xo_tensor_create(pb->be, XO_DTYPE_F32, d->bd[i].ndim, d->bd[i].dim,
						  &pb->tgm[i]), XO_OK);
		a.dst[i] = pb->tg[i];
		a.mag[i] = pb->tgm[i];
	}
	assert_int_equal(xo_op_run(pb->be, c->op, XO_DIR_BWD, &a), XO_OK);

	for (int i = 0; i < XO_MAX_SRC; i++)
		in[i].d = d->in[i];
	bwd_srcs(c->op, in, (struct xo_ref_src){.d = pb->yd}, (struct xo_ref_src){.d = d->r},
		 (struct xo_ref_src){.d = pb->wsd}, src);
	for (int i = 0; i < XO_MAX_DST; i++)
		if (d->bd[i].ndim)
			dst[i].d = pb->gd[i] = dalloc(slot_elems(&d->bd[i]));
	assert_int_equal(xo_ref_math(c->op, XO_DIR_BWD)(&c->p, src, dst, mag), XO_OK);
	for (int i = 0; i < XO_MAX_DST; i++) {
		int64_t n = slot_elems(&d->bd[i]);

		if (!n)
			continue;
		assert_int_equal(xo_tensor_read(pb->tg[i], pb->buf, 0, n), XO_OK);
		assert_int_equal(xo_tensor_read(pb->tgm[i], pb->buf2, 0, n), XO_OK);
		for (int64_t k = 0; k < n; k++) {
			if (!same_bits(pb->buf[k], (float)pb->gd[i][k]))
				fail_msg("%s: bwd dst[%d][%lld] = %.9g, double math rounded %.9g",
					 c->name, i, (long long)k, (double)pb->buf[k],
					 (double)(float)pb->gd[i][k]);
			if (!(fabsf(pb->buf[k]) <= pb->buf2[k]))
				fail_msg("%s: bwd dst[%d][%lld] = %.9g exceeds its magnitude %.9g",
					 c->name, i, (long long)k, (double)pb->buf[k],
					 (double)pb->buf2[k]);
		}
	}
	/* dx is optional for conv1d, conv2d, dense and the recurrent ops:
	 * without it, dw (dkernel) is unchanged */
	if (c->op == XO_OP_conv1d || c->op == XO_OP_conv2d || c->op == XO_OP_dense ||
	    c->op == XO_OP_depthwise_conv2d || c->op == XO_OP_conv2d_transpose ||
	    xo_op_is_rnn(c->op)) {
		int64_t n = slot_elems(&d->bd[1]);

		assert_int_equal(xo_tensor_read(pb->tg[1], pb->buf2, 0, n), XO_OK);
		a.dst[0] = NULL;
		a.mag[0] = NULL;
		memset(pb->buf, 0xff, (size_t)n * sizeof(*pb->buf));
		assert_int_equal(xo_tensor_write(pb->tg[1], pb->buf, 0, n), XO_OK);
		assert_int_equal(xo_op_run(pb->be, c->op, XO_DIR_BWD, &a), XO_OK);
		assert_int_equal(xo_tensor_read(pb->tg[1], pb->buf, 0, n), XO_OK);
		assert_memory_equal(pb->buf, pb->buf2, (size_t)n * sizeof(*pb->buf));
	}
}

/* Step 6: the backend's float path equals the double math rounded once. */
static void public_path(const struct gc_case *c, struct gc_data *d)
{
	struct gc_pub pub = {0}, *pb = &pub;
	int64_t nmax = d->ny > d->nws ? d->ny : d->nws;

	for (int i = 0; i < XO_MAX_SRC; i++)
		if (d->nin[i] > nmax)
			nmax = d->nin[i];
	pb->buf = calloc((size_t)nmax, sizeof(*pb->buf));
	pb->buf2 = calloc((size_t)nmax, sizeof(*pb->buf2));
	pb->yd = dalloc(nmax);
	assert_non_null(pb->buf);
	assert_non_null(pb->buf2);
	assert_int_equal(xo_backend_open("ref", &pb->be), XO_OK);
	public_fwd(c, d, pb);
	public_bwd(c, d, pb);

	for (int i = 0; i < XO_MAX_DST; i++) {
		xo_tensor_free(pb->tg[i]);
		xo_tensor_free(pb->tgm[i]);
		xo_tensor_free(pb->tst[i]);
	}
	for (int i = 0; i < XO_MAX_SRC; i++)
		xo_tensor_free(pb->tin[i]);
	xo_tensor_free(pb->tr);
	xo_tensor_free(pb->tws);
	xo_tensor_free(pb->twsm);
	xo_tensor_free(pb->tym);
	xo_tensor_free(pb->ty);
	xo_backend_close(pb->be);
	for (int i = 0; i < XO_MAX_DST; i++)
		free(pb->gd[i]);
	free(pb->yd);
	free(pb->wsd);
	free(pb->buf2);
	free(pb->buf);
}

static void test_gradcheck(void **state)
{
	const struct gc_case *c = *state;
	struct gc_data d;
	uint64_t seed = 1000;

	memset(&d, 0, sizeof(d));
	assert_int_equal(xo_op_shapes(c->op, XO_DIR_FWD, &c->p, d.fs, d.fd), XO_OK);
	assert_int_equal(xo_op_shapes(c->op, XO_DIR_BWD, &c->p, d.bs, d.bd), XO_OK);
	for (int i = 0; i < XO_MAX_SRC; i++) {
		d.nin[i] = slot_elems(&d.fs[i]);
		if (d.nin[i])
			d.in[i] = dalloc(d.nin[i]);
	}
	d.ny = slot_elems(&d.fd[0]);
	d.y = dalloc(d.ny);
	if (xo_op_is_rnn(c->op)) {
		d.nws = slot_elems(&d.fd[1]);
		d.ws = dalloc(d.nws);
	}
	d.r = dalloc(d.ny);
	for (int i = 0; i < XO_MAX_DST; i++)
		if (d.bd[i].ndim)
			d.g[i] = dalloc(slot_elems(&d.bd[i]));
	while (!fill(c, &d, seed))
		if (++seed > 2000)
			fail_msg("%s: no kink-free fill in 1000 tries", c->name);

	analytic(c, &d);
	finite_differences(c, &d);
	if (c->op == XO_OP_dropout)
		dropout_mask(c, &d);
	public_path(c, &d);
	data_free(&d);
}

/*
 * The fused softmax + categorical cross-entropy gradient: dz from ref's CE
 * backward at p = softmax(z) against the finite differences of
 * L(z) = CE(softmax(z), t), both ops' double math. Logits in [-2, 2) over 5
 * classes keep every p above 0.005, far from the 1e-7 clip. t is one-hot, or
 * soft labels summing to exactly 1 per row (the fused form needs sum t = 1).
 */
static void test_gradcheck_ce(void **state)
{
	const struct gc_case *c = *state;
	int64_t n = c->p.batch, ch = c->p.ch, total = n * ch;
	struct xo_params ps = c->p;
	double *z = dalloc(total), *pr = dalloc(total), *t = dalloc(total), *dz = dalloc(total);
	double l;
	struct xo_ref_src src[XO_MAX_SRC] = {{0}};
	struct xo_ref_dst dst[XO_MAX_DST] = {{0}}, mag[XO_MAX_DST] = {{0}};
	int bad = 0;

	ps.len = 1;
	for (int64_t k = 0; k < total; k++)
		z[k] = 2.0 * rnd(5, 1, (uint64_t)k);
	/* soft rows {0.5, 0.375, 0.125} at classes r, r+1, r+2: sum exactly 1 */
	for (int64_t r = 0; r < n; r++) {
		for (int64_t j = 0; j < ch; j++) {
			if (!c->soft_targets)
				t[r * ch + j] = j == (r * 3) % ch ? 1.0 : 0.0;
			else if (j == r % ch)
				t[r * ch + j] = 0.5;
			else if (j == (r + 1) % ch)
				t[r * ch + j] = 0.375;
			else if (j == (r + 2) % ch)
				t[r * ch + j] = 0.125;
			else
				t[r * ch + j] = 0.0;
		}
	}

	/* analytic */
	src[0].d = z;
	dst[0].d = pr;
	assert_int_equal(xo_ref_softmax_fwd_math(&ps, src, dst, mag), XO_OK);
	src[0].d = pr;
	src[1].d = t;
	dst[0].d = dz;
	assert_int_equal(xo_ref_categorical_crossentropy_bwd_math(&c->p, src, dst, mag), XO_OK);

	for (int64_t k = 0; k < total; k++) {
		double v = z[k], lp = 0.0, lm = 0.0, fd, err;

		for (int s = 0; s < 2; s++) {
			z[k] = s ? v - GC_H : v + GC_H;
			src[0].d = z;
			src[1].d = NULL;
			dst[0].d = pr;
			assert_int_equal(xo_ref_softmax_fwd_math(&ps, src, dst, mag), XO_OK);
			src[0].d = pr;
			src[1].d = t;
			dst[0].d = &l;
			assert_int_equal(xo_ref_categorical_crossentropy_fwd_math(&c->p, src, dst,
										  mag), XO_OK);
			if (s)
				lm = l;
			else
				lp = l;
		}
		z[k] = v;
		fd = (lp - lm) / (2.0 * GC_H);
		err = fabs(dz[k] - fd) / fmax(1.0, fabs(fd));
		if (getenv("XO_GC_VERBOSE") && k == total - 1)
			print_message("%s: last error %.3g (tol %.1g)\n", c->name, err, c->tol);
		if (!(err <= c->tol) && bad++ < 5)
			print_error("%s: dz[%lld] %.12g, finite difference %.12g (error %.3g)\n",
				    c->name, (long long)k, dz[k], fd, err);
	}
	if (bad)
		fail_msg("%s: %d gradient elements off", c->name, bad);
	free(dz);
	free(t);
	free(pr);
	free(z);
}

/*
 * binary_crossentropy and mean_squared_error: dp from ref's backward against
 * the central finite differences of ref's forward (mean loss) in p, both in
 * double. BCE's p in [0.2, 0.8], far from the 1e-7 clip (the clip's own
 * rule, 0 outside, is checked by test_known_bce_mse), soft targets in
 * [0, 1]; MSE's p and t in [-2, 2). The central difference's truncation
 * error is h^2 / 6 |f'''|: for BCE f''' <= (2 t / p^3 + 2 (1 - t) / (1 - p)^3)
 * / N <= 2 / 0.2^3 / 12 = 21 at N = 12, so 21 h^2 / 6 = 5e-8 with h = 2^-13,
 * under GC_TOL_SMOOTH (1e-6); MSE is quadratic (no truncation error).
 * (p in [0.05, 0.95] gave 1.5e-6: 2 / 0.05^3 / 12 h^2 / 6 = 3.3e-6 allows it.)
 * sparse_categorical_crossentropy: unnormalised p in [0.2, 0.8] (the op
 * divides by the row sum; q stays far inside the clip), int32 labels;
 * L = (log s - log p_k) / batch: |f'''| <= 2 / 0.2^3 / batch + 2 / s^3 / batch,
 * under 84 at batch 3: 84 h^2 / 6 = 2.1e-7.
 * From logits (the three cross-entropies, from_logits=1): x in [-2, 2), the
 * categorical targets in [-2, 2) (the gradient softmax(x) T - t holds for any
 * t), the binary ones in [0, 1]; the third derivatives of log-sum-exp and
 * softplus are at most 1 (per element, / batch or / N): h^2 / 6 = 2.5e-9.
 */
static void test_gradcheck_loss(void **state)
{
	const struct gc_case *c = *state;
	int64_t total = c->p.batch * c->p.ch;
	bool bce = c->op == XO_OP_binary_crossentropy;
	bool sparse = c->op == XO_OP_sparse_categorical_crossentropy;
	double *pr = dalloc(total), *t = dalloc(total), *dp = dalloc(total), l;
	int32_t labels[64];
	struct xo_ref_src src[XO_MAX_SRC] = {{0}};
	struct xo_ref_dst dst[XO_MAX_DST] = {{0}}, mag[XO_MAX_DST] = {{0}};
	double m[1];
	int bad = 0;

	for (int64_t k = 0; k < total; k++) {
		double r = rnd(7, 1, (uint64_t)k), r2 = rnd(7, 2, (uint64_t)k); /* [-1, 1) */

		pr[k] = (bce || sparse) && !c->p.from_logits ? 0.5 + 0.3 * r : 2.0 * r;
		t[k] = bce ? 0.5 + 0.5 * r2 : 2.0 * r2;
	}
	assert_true(c->p.batch <= 64);
	for (int64_t r = 0; r < c->p.batch; r++)
		labels[r] = (int32_t)((r * 3 + 1) % c->p.ch);
	src[0].d = pr;
	if (sparse)
		src[1].i = labels;
	else
		src[1].d = t;
	dst[0].d = dp;
	mag[0].d = dalloc(total);
	assert_int_equal(xo_ref_math(c->op, XO_DIR_BWD)(&c->p, src, dst, mag), XO_OK);
	free(mag[0].d);
	for (int64_t k = 0; k < total; k++) {
		double v = pr[k], lp = 0.0, lm = 0.0, fd, err;

		for (int s = 0; s < 2; s++) {
			pr[k] = s ? v - GC_H : v + GC_H;
			dst[0].d = &l;
			mag[0].d = m;
			assert_int_equal(xo_ref_math(c->op, XO_DIR_FWD)(&c->p, src, dst, mag), XO_OK);
			if (s)
				lm = l;
			else
				lp = l;
		}
		pr[k] = v;
		fd = (lp - lm) / (2.0 * GC_H);
		err = fabs(dp[k] - fd) / fmax(1.0, fabs(fd));
		if (!(err <= c->tol) && bad++ < 5)
			print_error("%s: dp[%lld] %.12g, finite difference %.12g (error %.3g)\n",
				    c->name, (long long)k, dp[k], fd, err);
	}
	if (bad)
		fail_msg("%s: %d gradient elements off", c->name, bad);
	free(dp);
	free(t);
	free(pr);
}

/*
 * embedding: the gradient w.r.t. the table only (ids are integers). L =
 * sum r_k y_k is linear in the table, so the central difference has no
 * truncation error: GC_TOL_LINEAR. The ids repeat (rows 1 and 2 used more
 * than once, row 3 never: its gradient must be 0) and the public ref path's
 * bad id is XO_EINVAL before anything is written.
 */
static void test_gradcheck_embedding(void **state)
{
	const struct gc_case *c = *state;
	int64_t n = c->p.batch * c->p.len, ch = c->p.ch, size = c->p.rows * ch;
	double *table = dalloc(size), *y = dalloc(n * ch), *r = dalloc(n * ch), *g = dalloc(size);
	double *ym = dalloc(n * ch), *gm = dalloc(size);
	int32_t ids[64];
	struct xo_ref_src src[XO_MAX_SRC] = {{0}};
	struct xo_ref_dst dst[XO_MAX_DST] = {{0}}, mag[XO_MAX_DST] = {{0}};
	int bad = 0;

	assert_true(n <= 64 && c->p.rows >= 4);
	for (int64_t i = 0; i < n; i++)
		ids[i] = (int32_t)(i % 3 == 0 ? 1 : i % 3 == 1 ? 2 : i % 4 == 0 ? 0 : 1);
	for (int64_t k = 0; k < size; k++)
		table[k] = rnd(9, 1, (uint64_t)k);
	for (int64_t k = 0; k < n * ch; k++)
		r[k] = rnd(9, 2, (uint64_t)k);
	src[0].i = ids;
	src[1].d = r;
	dst[0].d = g;
	mag[0].d = gm;
	assert_int_equal(xo_ref_math(XO_OP_embedding, XO_DIR_BWD)(&c->p, src, dst, mag), XO_OK);
	src[1].d = table;
	dst[0].d = y;
	mag[0].d = ym;
	for (int64_t k = 0; k < size; k++) {
		double v = table[k], l[2], fd, err;

		for (int sgn = 0; sgn < 2; sgn++) {
			table[k] = sgn ? v - GC_H : v + GC_H;
			assert_int_equal(
			    xo_ref_math(XO_OP_embedding, XO_DIR_FWD)(&c->p, src, dst, mag), XO_OK);
			l[sgn] = 0.0;
			for (int64_t e = 0; e < n * ch; e++)
				l[sgn] += r[e] * y[e];
		}
		table[k] = v;
		fd = (l[0] - l[1]) / (2.0 * GC_H);
		err = fabs(g[k] - fd) / fmax(1.0, fabs(fd));
		if (!(err <= c->tol) && bad++ < 5)
			print_error("%s: dtable[%lld] %.12g, finite difference %.12g (error %.3g)\n",
				    c->name, (long long)k, g[k], fd, err);
		if (k / ch == 3)
			assert_true(g[k] == 0.0 && gm[k] == 0.0);
		else
			assert_true(fabs(g[k]) <= gm[k]);
	}
	if (bad)
		fail_msg("%s: %d gradient elements off", c->name, bad);
	ids[n - 1] = (int32_t)c->p.rows;
	src[0].i = ids;
	y[0] = 42.0;
	assert_int_equal(xo_ref_math(XO_OP_embedding, XO_DIR_FWD)(&c->p, src, dst, mag),
			 XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "outside [0, input_dim="));
	assert_true(y[0] == 42.0);
	free(table);
	free(y);
	free(r);
	free(g);
	free(ym);
	free(gm);
}

/*
 * global_average_pooling1d with mask_zero (Embedding(mask_zero=True)'s mask,
 * the ids a second source in both directions; ops.def), on the reference in
 * double: the backward against central finite differences of sum(r * y)
 * (the op is linear, so the difference is exact up to rounding), a masked
 * step's dx exactly 0, and the forward by hand: the mean of the kept steps,
 * a sample with none kept NaN (Keras's 0 / 0), its dx 0.
 */
static void test_gradcheck_gap_mask(void **state)
{
	enum { B = 4, T = 6, C = 2 };
	/* kept: a middle run; the first and last only; one step; none */
	static const int32_t ids[B * T] = {0, 3, 5, 1, 0, 0, 7, 0, 0, 0, 0, 2,
	                                   0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0};
	struct xo_params p = xo_params_default();
	struct xo_ref_src src[XO_MAX_SRC] = {{0}};
	struct xo_ref_dst dst[XO_MAX_DST] = {{0}}, mag[XO_MAX_DST] = {{0}};
	double x[B * T * C], y[B * C], ym[B * C], r[B * C], g[B * T * C], gm[B * T * C];

	(void)state;
	p.batch = B;
	p.len = T;
	p.ch = C;
	p.mask_zero = true;
	for (int k = 0; k < B * T * C; k++)
		x[k] = rnd(11, 1, (uint64_t)k);
	for (int k = 0; k < B * C; k++)
		r[k] = rnd(11, 2, (uint64_t)k);
	src[0].d = r;
	src[1].i = ids;
	dst[0].d = g;
	mag[0].d = gm;
	assert_int_equal(xo_ref_math(XO_OP_global_average_pooling1d, XO_DIR_BWD)(&p, src, dst, mag),
	                 XO_OK);
	src[0].d = x;
	dst[0].d = y;
	mag[0].d = ym;
	assert_int_equal(xo_ref_math(XO_OP_global_average_pooling1d, XO_DIR_FWD)(&p, src, dst, mag),
	                 XO_OK);
	for (int c = 0; c < C; c++) {
		assert_true(fabs(y[c] - (x[1 * C + c] + x[2 * C + c] + x[3 * C + c]) / 3.0) <= 1e-15);
		assert_true(fabs(y[C + c] - (x[(T + 0) * C + c] + x[(T + 5) * C + c]) / 2.0) <= 1e-15);
		assert_true(y[2 * C + c] == x[(2 * T + 3) * C + c]);
		assert_true(isnan(y[3 * C + c]));
	}
	for (int k = 0; k < (B - 1) * T * C; k++) {
		double v = x[k], l[2], fd;

		for (int sgn = 0; sgn < 2; sgn++) {
			x[k] = sgn ? v - GC_H : v + GC_H;
			assert_int_equal(xo_ref_math(XO_OP_global_average_pooling1d,
			                             XO_DIR_FWD)(&p, src, dst, mag),
			                 XO_OK);
			l[sgn] = 0.0;
			for (int e = 0; e < (B - 1) * C; e++) /* the finite samples */
				l[sgn] += r[e] * y[e];
		}
		x[k] = v;
		fd = (l[0] - l[1]) / (2.0 * GC_H);
		if (!(fabs(g[k] - fd) <= GC_TOL_LINEAR * fmax(1.0, fabs(fd))))
			fail_msg("masked gap: dx[%d] %.12g, finite difference %.12g", k, g[k], fd);
		if (ids[k / C] == 0)
			assert_true(g[k] == 0.0);
	}
	for (int k = (B - 1) * T * C; k < B * T * C; k++)
		assert_true(g[k] == 0.0);
}

/* ---- forward values worked out by hand ---------------------------------- */

struct kv {
	struct xo_backend *be;
	struct xo_tensor *t[12];
	int nt;
};

static struct xo_tensor *kv_tensor(struct kv *k, enum xo_dtype dt, int ndim, const int64_t *dims,
				   const void *data)
{
	struct xo_tensor *t;
	int64_t n = 1;

	for (int i = 0; i < ndim; i++)
		n *= dims[i];
	assert_true(k->nt < 12);
	assert_int_equal(xo_tensor_create(k->be, dt, ndim, dims, &t), XO_OK);
	if (data)
		assert_int_equal(xo_tensor_write(t, data, 0, n), XO_OK);
	k->t[k->nt++] = t;
	return t;
}

static void kv_open(struct kv *k)
{
	memset(k, 0, sizeof(*k));
	assert_int_equal(xo_backend_open("ref", &k->be), XO_OK);
}

static void kv_close(struct kv *k)
{
	for (int i = 0; i < k->nt; i++)
		xo_tensor_free(k->t[i]);
	xo_backend_close(k->be);
}

static void expect(const float *got, const float *want, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!same_bits(got[i], want[i]))
			fail_msg("element %lld: got %.9g, want %.9g", (long long)i, (double)got[i],
				 (double)want[i]);
}

/* conv1d on x = 1..7, one channel: y[o] = sum_k x[o*s + k*d - pad] * w[k] + b. */
static void conv1d_case(enum xo_padding pad, int64_t strides, int64_t dil, int64_t ks,
			const float *w, float b, enum xo_activation act, const float *want,
			int64_t out)
{
	const float x[7] = {1, 2, 3, 4, 5, 6, 7};
	struct xo_op_args a = {.p = xo_params_default()};
	float y[8];
	struct kv k;

	kv_open(&k);
	a.p.len = 7;
	a.p.kernel_size = ks;
	a.p.strides = strides;
	a.p.dilation_rate = dil;
	a.p.padding = pad;
	a.p.activation = act;
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){1, 7, 1}, x);
	a.src[1] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){ks, 1, 1}, w);
	a.src[2] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){1}, &b);
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){1, out, 1}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_conv1d, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], y, 0, out), XO_OK);
	expect(y, want, out);
	kv_close(&k);
}

static void test_known_conv1d(void **state)
{
	const float w3[3] = {1, 2, -1}, w2[2] = {1, 10}, w100[3] = {1, 10, 100};

	(void)state;
	/* valid: x0 + 2 x1 - x2 + 0.5 = 2.5, then +2 per step */
	conv1d_case(XO_PADDING_VALID, 1, 1, 3, w3, 0.5f, XO_ACTIVATION_LINEAR,
		    (const float[]){2.5f, 4.5f, 6.5f, 8.5f, 10.5f}, 5);
	/* same, pad 1 each side: 0 + 2*1 - 2 + .5 = .5; last 6 + 14 - 0 + .5 */
	conv1d_case(XO_PADDING_SAME, 1, 1, 3, w3, 0.5f, XO_ACTIVATION_LINEAR,
		    (const float[]){0.5f, 2.5f, 4.5f, 6.5f, 8.5f, 10.5f, 20.5f}, 7);
	/* causal, pad 2 on the left: 0 + 0 - 1 + .5 = -.5 (relu: 0) */
	conv1d_case(XO_PADDING_CAUSAL, 1, 1, 3, w3, 0.5f, XO_ACTIVATION_RELU,
		    (const float[]){0.0f, 0.5f, 2.5f, 4.5f, 6.5f, 8.5f, 10.5f}, 7);
	/* dilation 2: x[o] + 10 x[o+2] */
	conv1d_case(XO_PADDING_VALID, 1, 2, 2, w2, 0.0f, XO_ACTIVATION_LINEAR,
		    (const float[]){31, 42, 53, 64, 75}, 5);
	/* strides 2: x[2o] + 10 x[2o+1] */
	conv1d_case(XO_PADDING_VALID, 2, 1, 2, w2, 0.0f, XO_ACTIVATION_LINEAR,
		    (const float[]){21, 43, 65}, 3);
	/* same, strides 2, kernel 3: out 4, total pad 2, left 1; windows at -1, 1, 3, 5 */
	conv1d_case(XO_PADDING_SAME, 2, 1, 3, w100, 0.0f, XO_ACTIVATION_LINEAR,
		    (const float[]){210, 432, 654, 76}, 4);
	/* sigmoid(0) = 0.5 exactly: w = {1, 2, -1} on 1, 2, 3 with b = -2 gives 0 */
	conv1d_case(XO_PADDING_VALID, 2, 1, 3, w3, -2.0f, XO_ACTIVATION_SIGMOID,
		    (const float[]){0.5f, (float)(1.0 / (1.0 + exp(-4.0))),
				    (float)(1.0 / (1.0 + exp(-8.0)))}, 3);
}

/* The seed model's first layer, Conv1D(16, 3, relu), on a 29-step ramp:
 * filter f has w[k][0][f] = (f - 8) / 8 for every k and bias 0, so
 * y[o][f] = relu((f - 8)/8 * (x[o] + x[o+1] + x[o+2])) with x[i] = i / 32:
 * (f - 8) * 3 (o + 1) / 256, 0 for f < 8 (all exact in float). */
/* conv2d on x = 1..9 as a 3x3 image, one channel, w = [[1, 2], [3, 4]]
 * (w[i][j]), b = 0: y[r][s] = x[r][s] + 2 x[r][s+1] + 3 x[r+1][s] + 4 x[r+1][s+1]. */
static void conv2d_case(enum xo_padding pad, int64_t strides_w, const float *want, int64_t oh,
			int64_t ow)
{
	const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 2, 3, 4}, b = 0.0f;
	struct xo_op_args a = {.p = xo_params_default()};
	float y[9];
	struct kv k;

	kv_open(&k);
	a.p.len = 3;
	a.p.width = 3;
	a.p.kernel_size = 2;
	a.p.strides_w = strides_w;
	a.p.padding = pad;
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 4, (int64_t[]){1, 3, 3, 1}, x);
	a.src[1] = kv_tensor(&k, XO_DTYPE_F32, 4, (int64_t[]){2, 2, 1, 1}, w);
	a.src[2] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){1}, &b);
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 4, (int64_t[]){1, oh, ow, 1}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_conv2d, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], y, 0, oh * ow), XO_OK);
	expect(y, want, oh * ow);
	kv_close(&k);
}

static void test_known_conv2d(void **state)
{
	(void)state;
	/* valid: 1 + 4 + 12 + 20 = 37, then +10 per column, +30 per row */
	conv2d_case(XO_PADDING_VALID, 0, (const float[]){37, 47, 67, 77}, 2, 2);
	/* same with a 2x2 kernel: total padding 1 per axis, all of it below and
	 * right (Keras/TF put the smaller half above and left): the last row
	 * and column lose their second taps, y[2][2] = x[2][2] = 9 */
	conv2d_case(XO_PADDING_SAME, 0,
		    (const float[]){37, 47, 3 + 3 * 6, 67, 77, 6 + 3 * 9, 7 + 2 * 8, 8 + 2 * 9, 9}, 3,
		    3);
	/* same, width stride 2: columns 0 and 2 of the above */
	conv2d_case(XO_PADDING_SAME, 2, (const float[]){37, 21, 67, 33, 23, 9}, 3, 2);
}

static void test_known_seed_conv(void **state)
{
	float x[29], w[3 * 16], y[27 * 16], mag[27 * 16];
	struct xo_op_args a = {.p = xo_params_default()};
	struct kv k;

	(void)state;
	kv_open(&k);
	for (int i = 0; i < 29; i++)
		x[i] = (float)i / 32.0f;
	for (int kk = 0; kk < 3; kk++)
		for (int f = 0; f < 16; f++)
			w[kk * 16 + f] = (float)(f - 8) / 8.0f;
	a.p.len = 29;
	a.p.filters = 16;
	a.p.kernel_size = 3;
	a.p.use_bias = false;
	a.p.activation = XO_ACTIVATION_RELU;
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){1, 29, 1}, x);
	a.src[1] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){3, 1, 16}, w);
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){1, 27, 16}, NULL);
	a.mag[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){1, 27, 16}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_conv1d, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], y, 0, 27 * 16), XO_OK);
	assert_int_equal(xo_tensor_read(a.mag[0], mag, 0, 27 * 16), XO_OK);
	for (int o = 0; o < 27; o++) {
		for (int f = 0; f < 16; f++) {
			float want = f < 8 ? 0.0f : (float)((f - 8) * 3 * (o + 1)) / 256.0f;
			float want_mag = (float)(abs(f - 8) * 3 * (o + 1)) / 256.0f;

			assert_true(same_bits(y[o * 16 + f], want));
			assert_true(same_bits(mag[o * 16 + f], want_mag));
		}
	}
	kv_close(&k);
}

/* max_pooling1d: ties to the first maximum, padded positions never win,
 * overlapping windows accumulate in bwd; a NaN anywhere in a window makes
 * y NaN and its gradient goes where jax.grad of Keras's MaxPooling1D puts
 * it (XLA's select: the winner stays while winner >= step). */
static void pool_case(int64_t len, int64_t pool, int64_t strides, enum xo_padding pad,
		      const float *x, const float *want, int64_t out, const float *dy,
		      const float *want_dx)
{
	struct xo_op_args a = {.p = xo_params_default()};
	float y[8], dx[8];
	struct kv k;

	kv_open(&k);
	a.p.len = len;
	a.p.pool_size = pool;
	a.p.strides = strides;
	a.p.padding = pad;
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){1, len, 1}, x);
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){1, out, 1}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_max_pooling1d, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], y, 0, out), XO_OK);
	for (int64_t i = 0; i < out; i++)
		assert_true(same_bits(y[i], want[i]) || (isnan(y[i]) && isnan(want[i])));
	a.src[1] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){1, out, 1}, dy);
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){1, len, 1}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_max_pooling1d, XO_DIR_BWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], dx, 0, len), XO_OK);
	expect(dx, want_dx, len);
	kv_close(&k);
}

static void test_known_max_pooling1d(void **state)
{
	(void)state;
	/* windows {1,3} {3,2} {5,NaN}: 3 wins alone in {3,2}; {5,NaN} is NaN,
	 * its dy to the NaN (5 >= NaN is false) */
	pool_case(7, 2, 0, XO_PADDING_VALID, (const float[]){1, 3, 3, 2, 5, NAN, 0},
		  (const float[]){3, 3, NAN}, 3, (const float[]){1, 2, 4},
		  (const float[]){0, 1, 2, 0, 0, 4, 0});
	/* ties: {2,2} goes to step 0, {4,4} to step 2 */
	pool_case(4, 2, 0, XO_PADDING_VALID, (const float[]){2, 2, 4, 4},
		  (const float[]){2, 4}, 2, (const float[]){1, 2}, (const float[]){1, 0, 2, 0});
	/* overlapping windows (strides 1): step 1 wins both, dx = 1 + 2 */
	pool_case(3, 2, 1, XO_PADDING_VALID, (const float[]){1, 3, 2},
		  (const float[]){3, 3}, 2, (const float[]){1, 2}, (const float[]){0, 3, 0});
	/* same, pool 3, strides 1: pad 1 each side; padding (0) never beats negatives */
	pool_case(3, 3, 1, XO_PADDING_SAME, (const float[]){-5, -6, -7},
		  (const float[]){-5, -5, -6}, 3, (const float[]){1, 2, 4},
		  (const float[]){3, 4, 0});
	/* a NaN first, middle or last: y NaN; dy to the step after the last
	 * NaN that the select keeps (jax.grad: [NaN,1] -> [0,1], [3,NaN,1] ->
	 * [0,0,1], [3,1,NaN] -> [0,0,1]); +Inf wins, -Inf loses */
	pool_case(2, 2, 0, XO_PADDING_VALID, (const float[]){NAN, 1}, (const float[]){NAN}, 1,
		  (const float[]){1}, (const float[]){0, 1});
	pool_case(3, 3, 0, XO_PADDING_VALID, (const float[]){3, NAN, 1}, (const float[]){NAN}, 1,
		  (const float[]){1}, (const float[]){0, 0, 1});
	pool_case(3, 3, 0, XO_PADDING_VALID, (const float[]){3, 1, NAN}, (const float[]){NAN}, 1,
		  (const float[]){1}, (const float[]){0, 0, 1});
	pool_case(3, 3, 0, XO_PADDING_VALID, (const float[]){-INFINITY, 2, INFINITY},
		  (const float[]){INFINITY}, 1, (const float[]){1}, (const float[]){0, 0, 1});
}

static void test_known_dense_softmax_sigmoid(void **state)
{
	struct xo_op_args a = {.p = xo_params_default()};
	float y[4];
	struct kv k;

	(void)state;
	kv_open(&k);
	/* dense: x = {1, 2}, w = {{1,2,3},{4,5,6}}, b = 1: {1+8+1, 2+10+1, 3+12+1} */
	a.p.ch = 2;
	a.p.units = 3;
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){1, 2}, (const float[]){1, 2});
	a.src[1] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){2, 3},
			     (const float[]){1, 2, 3, 4, 5, 6});
	a.src[2] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){3}, (const float[]){1, 1, 1});
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){1, 3}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_dense, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], y, 0, 3), XO_OK);
	expect(y, (const float[]){10, 13, 16}, 3);
	kv_close(&k);

	/* softmax is max-subtracted: {1000, 1000, 1000, 1000} -> 1/4 each, no overflow */
	kv_open(&k);
	memset(&a, 0, sizeof(a));
	a.p = xo_params_default();
	a.p.ch = 4;
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){1, 1, 4},
			     (const float[]){1000, 1000, 1000, 1000});
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){1, 1, 4}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_softmax, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], y, 0, 4), XO_OK);
	expect(y, (const float[]){0.25f, 0.25f, 0.25f, 0.25f}, 4);
	/* sigmoid(0) = 0.5, sigmoid(-200) = 0 (exp(200) is finite in double) */
	assert_int_equal(xo_tensor_write((struct xo_tensor *)a.src[0],
					 (const float[]){0, -200, 200, 0}, 0, 4), XO_OK);
	assert_int_equal(xo_op_run(k.be, XO_OP_sigmoid, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], y, 0, 4), XO_OK);
	expect(y, (const float[]){0.5f, 0.0f, 1.0f, 0.5f}, 4);
	kv_close(&k);
}

static void test_known_crossentropy_accuracy(void **state)
{
	struct xo_op_args a = {.p = xo_params_default()};
	float loss, mag, correct;
	int32_t idx[3];
	struct kv k;

	(void)state;
	kv_open(&k);
	/* uniform p over 4 classes, one-hot t: loss = log 4; row 2 is clipped:
	 * p = {1, 0, 0, 0}, t = class 1 -> -log(1e-7f) */
	a.p.batch = 2;
	a.p.ch = 4;
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){2, 4},
			     (const float[]){0.25f, 0.25f, 0.25f, 0.25f, 1, 0, 0, 0});
	a.src[1] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){2, 4},
			     (const float[]){0, 0, 1, 0, 0, 1, 0, 0});
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){1}, NULL);
	a.mag[0] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){1}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_categorical_crossentropy, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], &loss, 0, 1), XO_OK);
	assert_int_equal(xo_tensor_read(a.mag[0], &mag, 0, 1), XO_OK);
	assert_true(same_bits(loss, (float)((log(4.0) - log((double)1e-7f)) / 2.0)));
	assert_true(same_bits(mag, loss));
	kv_close(&k);

	/* accuracy: rows {.1,.7,.2} {.5,.5,0} (tie: 0) {.3,.3,.4}; t classes 1, 1, 2 */
	kv_open(&k);
	memset(&a, 0, sizeof(a));
	a.p = xo_params_default();
	a.p.batch = 3;
	a.p.ch = 3;
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){3, 3},
			     (const float[]){.1f, .7f, .2f, .5f, .5f, 0, .3f, .3f, .4f});
	a.src[1] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){3, 3},
			     (const float[]){0, 1, 0, 0, 1, 0, 0, 0, 1});
	a.dst[0] = kv_tensor(&k, XO_DTYPE_I32, 1, (int64_t[]){3}, NULL);
	a.dst[1] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){1}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_accuracy, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], idx, 0, 3), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[1], &correct, 0, 1), XO_OK);
	assert_int_equal(idx[0], 1);
	assert_int_equal(idx[1], 0);
	assert_int_equal(idx[2], 2);
	assert_true(correct == 2.0f);
	kv_close(&k);
}

/* Adam's first step from m = v = 0 moves w by lr * g / (|g| + eps / sqrt(1 - beta_2))
 * ~ lr * sign(g): w = 1, g = 2 -> 0.999 within 1.6e-9 (below 0.999f's half ulp).
 * m and v take 1 - beta as Keras 3's adam.py has it, Python's 1 - 0.9 and
 * 1 - 0.999 in double made float32 (0.1f, 0.001f), not 1 - 0.9f or
 * 1 - 0.999f (1.3e-5 smaller: a drift of every v). */
static void test_known_adam(void **state)
{
	struct xo_op_args a = {.p = xo_params_default()};
	float w[2], m[2], v[2];
	struct kv k;

	(void)state;
	kv_open(&k);
	a.p.size = 2;
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){2}, (const float[]){2, -0.5f});
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){2}, (const float[]){1, 1});
	a.dst[1] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){2}, (const float[]){0, 0});
	a.dst[2] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){2}, (const float[]){0, 0});
	assert_int_equal(xo_op_run(k.be, XO_OP_adam, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], w, 0, 2), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[1], m, 0, 2), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[2], v, 0, 2), XO_OK);
	assert_true(same_bits(m[0], 2.0f * 0.1f));
	assert_true(same_bits(v[0], 4.0f * 0.001f));
	assert_true(same_bits(v[1], 0.25f * 0.001f));
	assert_true(same_bits(w[0], 0.999f));
	/* g = -0.5: w' = 1 + lr_t 0.05 / (sqrt(0.00025) + 1e-7), lr_t from the
	 * float betas' powers (Keras's beta_power): 1.00099993, an ulp below
	 * 1.001f */
	assert_true(fabsf(w[1] - 1.001f) <= 1.2e-7f);
	kv_close(&k);
}

/* SGD and RMSprop on values exact in float (Keras 3 sgd.py, rmsprop.py):
 * sgd lr 0.25, momentum 0.5, w 1, m 0.5, g 2: m' = 0.25 - 0.5 = -0.25;
 * plain w' = 1 - 0.25 = 0.75, nesterov w' = 1 + (-0.125 - 0.5) = 0.375;
 * momentum 0: w' = 1 - 0.5 = 0.5 and m stays. rmsprop lr 0.25, rho 0.5,
 * epsilon 0, w 1, v 4, g 2: v' = 2 + 2 = 4, inc = 0.5 / 2 = 0.25: w' = 0.75;
 * with momentum 0.5 from mom 1: mom' = 0.75, w' = 0.25. */
static void test_known_sgd_rmsprop(void **state)
{
	static const struct {
		bool rms;
		float mu;
		bool nesterov;
		float w, m;
	} rows[] = {{false, 0.5f, false, 0.75f, -0.25f}, {false, 0.5f, true, 0.375f, -0.25f},
	            {false, 0.0f, false, 0.5f, 0.5f},    {true, 0.0f, false, 0.75f, 1.0f},
	            {true, 0.5f, false, 0.25f, 0.75f}};

	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct xo_op_args a = {.p = xo_params_default()};
		float w, m, v;
		struct kv k;

		kv_open(&k);
		a.p.size = 1;
		a.p.lr = 0.25f;
		a.p.momentum = rows[r].mu;
		a.p.nesterov = rows[r].nesterov;
		a.p.rho = 0.5f;
		a.p.epsilon = 0.0f;
		a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){1}, (const float[]){2});
		a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){1}, (const float[]){1});
		if (rows[r].rms) {
			a.dst[1] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){1}, (const float[]){4});
			a.dst[2] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){1}, (const float[]){1});
		} else {
			a.dst[1] =
			    kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){1}, (const float[]){0.5f});
		}
		assert_int_equal(xo_op_run(k.be, rows[r].rms ? XO_OP_rmsprop : XO_OP_sgd,
		                           XO_DIR_FWD, &a),
		                 XO_OK);
		assert_int_equal(xo_tensor_read(a.dst[0], &w, 0, 1), XO_OK);
		assert_int_equal(xo_tensor_read(a.dst[rows[r].rms ? 2 : 1], &m, 0, 1), XO_OK);
		assert_true(same_bits(w, rows[r].w));
		assert_true(same_bits(m, rows[r].m));
		if (rows[r].rms) {
			assert_int_equal(xo_tensor_read(a.dst[1], &v, 0, 1), XO_OK);
			assert_true(same_bits(v, 4.0f));
		}
		kv_close(&k);
	}
}

/* BCE: p {0, 0.5}, t {1, 1}: p = 0 clips to 1e-7f, loss (-log(1e-7f) -
 * log 0.5) / 2, dp {0 (outside the clip), -1 / 0.5 / 2 = -1}. MSE: p {1, 3},
 * t {0, 1}: loss (1 + 4) / 2 = 2.5, dp {2 * 1 / 2, 2 * 2 / 2} = {1, 2}.
 * binary_accuracy: p {0.5, 0.75, 0.25, 1}, t {0, 1, 0, 0}: 3 hits (0.5 is not
 * above the threshold). */
static void test_known_bce_mse(void **state)
{
	struct xo_op_args a = {.p = xo_params_default()};
	float l, d[2];
	struct kv k;

	(void)state;
	kv_open(&k);
	a.p.batch = 1;
	a.p.ch = 2;
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){1, 2}, (const float[]){0, 0.5f});
	a.src[1] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){1, 2}, (const float[]){1, 1});
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){1}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_binary_crossentropy, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], &l, 0, 1), XO_OK);
	assert_true(same_bits(l, (float)((-log((double)1e-7f) - log(0.5)) / 2.0)));
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){1, 2}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_binary_crossentropy, XO_DIR_BWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], d, 0, 2), XO_OK);
	assert_true(same_bits(d[0], 0.0f));
	assert_true(same_bits(d[1], -1.0f));
	kv_close(&k);

	kv_open(&k);
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){1, 2}, (const float[]){1, 3});
	a.src[1] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){1, 2}, (const float[]){0, 1});
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){1}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_mean_squared_error, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], &l, 0, 1), XO_OK);
	assert_true(same_bits(l, 2.5f));
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){1, 2}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_mean_squared_error, XO_DIR_BWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], d, 0, 2), XO_OK);
	assert_true(same_bits(d[0], 1.0f) && same_bits(d[1], 2.0f));
	a.p.ch = 4;
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){1, 4},
	                     (const float[]){0.5f, 0.75f, 0.25f, 1});
	a.src[1] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){1, 4}, (const float[]){0, 1, 0, 0});
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 1, (int64_t[]){1}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_binary_accuracy, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], &l, 0, 1), XO_OK);
	assert_true(l == 3.0f);
	kv_close(&k);
}

/* gather: rows picked by index; an index out of range is EINVAL, y untouched. */
static void test_known_gather_dropout(void **state)
{
	struct xo_op_args a = {.p = xo_params_default()};
	float y[4], x[8];
	struct kv k;

	(void)state;
	kv_open(&k);
	a.p.rows = 3;
	a.p.batch = 2;
	a.p.ch = 2;
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){3, 2},
			     (const float[]){1, 2, 3, 4, 5, 6});
	a.src[1] = kv_tensor(&k, XO_DTYPE_I32, 1, (int64_t[]){2}, (const int32_t[]){2, 0});
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 2, (int64_t[]){2, 2}, (const float[]){9, 9, 9, 9});
	assert_int_equal(xo_op_run(k.be, XO_OP_gather, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], y, 0, 4), XO_OK);
	expect(y, (const float[]){5, 6, 1, 2}, 4);
	assert_int_equal(xo_tensor_write((struct xo_tensor *)a.src[1], (const int32_t[]){1, 3}, 0,
					 2), XO_OK);
	assert_int_equal(xo_op_run(k.be, XO_OP_gather, XO_DIR_FWD, &a), XO_EINVAL);
	assert_non_null(strstr(xo_last_error(), "gather"));
	assert_int_equal(xo_tensor_read(a.dst[0], y, 0, 4), XO_OK);
	expect(y, (const float[]){5, 6, 1, 2}, 4);
	kv_close(&k);

	/* dropout rate 0.5: each y is 0 or 2x, as xo_dropout_keep says; not training: y = x */
	kv_open(&k);
	memset(&a, 0, sizeof(a));
	a.p = xo_params_default();
	a.p.len = 4;
	a.p.ch = 2;
	a.p.seed = 3;
	a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){1, 4, 2},
			     (const float[]){1, 2, 3, 4, 5, 6, 7, 8});
	a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){1, 4, 2}, NULL);
	assert_int_equal(xo_op_run(k.be, XO_OP_dropout, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], x, 0, 8), XO_OK);
	for (int i = 0; i < 8; i++)
		assert_true(x[i] == (xo_dropout_keep(3, 0, 0, (uint64_t)i, 0.5f) ?
				     2.0f * (float)(i + 1) : 0.0f));
	a.p.training = false;
	assert_int_equal(xo_op_run(k.be, XO_OP_dropout, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], x, 0, 8), XO_OK);
	expect(x, (const float[]){1, 2, 3, 4, 5, 6, 7, 8}, 8);
	kv_close(&k);
}

/*
 * attention's dropout mask, read back through the op on every backend: q
 * and k zero make every p_ij = 1/Tk, v_j the unit vector e_j (value_dim =
 * Tk) makes o_i[j] = pd_ij = p_ij keep_ij / (1 - r). Each element must be
 * 0 exactly where xo_dropout_keep(seed, step, layer, e, r) says drop at the
 * flat index e = ((n * H + h) * Tq + i) * Tk + j (ops.def) and within
 * 2^-22 of 1 / (Tk (1 - r)) = 1/12 where it says keep (a few roundings of
 * the softmax and the scale's product, each 2^-28 there), so ref, cpu and
 * cl draw one mask. The
 * kept count of the N = 1024 draws is binomial(N, 1 - r): at r = 0.25 mean
 * 768, standard deviation sqrt(N r (1 - r)) = 13.9, and 768 +- 69 is a
 * 5-sigma bound. Not training, the same call gives p itself.
 */
static void test_known_attention_dropout(void **state)
{
	enum { B = 2, TQ = 16, TK = 16, H = 2, N = B * H * TQ * TK };
	static const char *const names[] = {"ref", "cpu", "cl"};
	static float q[B * TQ * H], kk[B * TK * H], v[B * TK * H * TK], o[B * TQ * H * TK];
	const float r = 0.25f, keep_v = 1.0f / (float)TK / (1.0f - r);

	(void)state;
	for (int i = 0; i < B * TK; i++)
		for (int hd = 0; hd < H; hd++)
			for (int e = 0; e < TK; e++)
				v[(i * H + hd) * TK + e] = (float)(e == i % TK);
	for (int b = 0; b < 3; b++) {
		struct xo_op_args a = {.p = xo_params_default()};
		int64_t kept = 0;
		struct kv k;

		memset(&k, 0, sizeof(k));
		if (xo_backend_open(names[b], &k.be)) {
			const char *req = getenv("XO_REQUIRE_OPENCL");

			if (b == 2 && !(req && *req && strcmp(req, "0")))
				continue; /* no OpenCL here, and none required */
			fail_msg("%s: %s", names[b], xo_last_error());
		}
		a.p.batch = B;
		a.p.len = TQ;
		a.p.heads = H;
		a.p.key_dim = 1;
		a.p.value_dim = TK;
		a.p.dropout = r;
		a.p.seed = 5;
		a.p.step = 7;
		a.p.layer = 3;
		a.src[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){B, TQ, H}, q);
		a.src[1] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){B, TK, H}, kk);
		a.src[2] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){B, TK, H * TK}, v);
		a.dst[0] = kv_tensor(&k, XO_DTYPE_F32, 3, (int64_t[]){B, TQ, H * TK}, NULL);
		assert_int_equal(xo_op_run(k.be, XO_OP_attention, XO_DIR_FWD, &a), XO_OK);
		assert_int_equal(xo_tensor_read(a.dst[0], o, 0, N), XO_OK);
		for (int n = 0; n < B; n++)
			for (int hd = 0; hd < H; hd++)
				for (int i = 0; i < TQ; i++)
					for (int j = 0; j < TK; j++) {
						uint64_t e =
						    (uint64_t)(((n * H + hd) * TQ + i) * TK + j);
						bool keep = xo_dropout_keep(5, 7, 3, e, r);
						float got = o[((n * TQ + i) * H + hd) * TK + j];

						if (keep ? !(fabsf(got - keep_v) <= 4.0f * 0x1p-24f)
						         : got != 0.0f)
							fail_msg(
							    "%s: o[%d][%d][%d][%d] = %.9g, keep %d",
							    names[b], n, i, hd, j, (double)got,
							    keep);
						kept += keep;
					}
		if (!(kept >= 768 - 69 && kept <= 768 + 69))
			fail_msg("%s: %lld of %d kept at rate %g", names[b], (long long)kept, N,
			         (double)r);
		print_message("  %s: %lld of %d kept at rate %g\n", names[b], (long long)kept, N,
		              (double)r);
		a.p.training = false;
		assert_int_equal(xo_op_run(k.be, XO_OP_attention, XO_DIR_FWD, &a), XO_OK);
		assert_int_equal(xo_tensor_read(a.dst[0], o, 0, N), XO_OK);
		for (int e = 0; e < N; e++)
			if (!(fabsf(o[e] - 1.0f / TK) <= 4.0f * 0x1p-24f))
				fail_msg("%s not training: o[%d] = %.9g", names[b], e,
				         (double)o[e]);
		kv_close(&k);
	}
}

/* Opens backend names[b] into k; false when it is cl and OpenCL is absent
 * and not required. */
static bool kv_open_backend(struct kv *k, const char *name, bool cl)
{
	const char *req = getenv("XO_REQUIRE_OPENCL");

	memset(k, 0, sizeof(*k));
	if (!xo_backend_open(name, &k->be))
		return true;
	if (cl && !(req && *req && strcmp(req, "0")))
		return false;
	fail_msg("%s: %s", name, xo_last_error());
	return false;
}

/*
 * attention's mask source (ops.def), known answers on every backend: q and
 * k zero make every kept key's p = 1 / (kept count), v_j the unit vector
 * e_j (value_dim = Tk) makes o_i[j] = p_ij. Rows: all kept; keys 0 and 2
 * kept by 0.25 and -2 (any nonzero keeps); none kept; key 4 kept by NaN
 * (Keras's cast to bool). A dropped key's p is exactly 0; a row of no key
 * is 1/Tk on every key (within 4 2^-24 of the value, a few roundings) -
 * with causal too, where it covers the keys after i - and 0 with a
 * dropout rate, training or not.
 */
static void attn_mask_known(struct kv *k, const char *name, bool causal, float rate)
{
	enum { TQ = 4, TK = 5 };
	static const float m[TQ * TK] = {1, 1, 1, 1, 1, 0.25f, 0, -2, 0, 0,
	                                 0, 0, 0, 0, 0, 0,     0, 0,  0, NAN};
	static const float plain[TQ * TK] = {.2f, .2f, .2f, .2f, .2f, .5f, 0, .5f, 0, 0,
	                                     .2f, .2f, .2f, .2f, .2f, 0,   0, 0,   0, 1};
	static const float caus[TQ * TK] = {1,   0,   0,   0,   0,   1,   0,   0,   0,   0,
	                                    .2f, .2f, .2f, .2f, .2f, .2f, .2f, .2f, .2f, .2f};
	float q[TQ] = {0}, kk[TK] = {0}, v[TK * TK], o[TQ * TK];
	struct xo_op_args a = {.p = xo_params_default()};

	for (int e = 0; e < TK * TK; e++)
		v[e] = (float)(e / TK == e % TK);
	a.p.batch = 1;
	a.p.len = TQ;
	a.p.len_kv = TK;
	a.p.key_dim = 1;
	a.p.value_dim = TK;
	a.p.causal = causal;
	a.p.dropout = rate;
	a.p.training = false;
	a.p.attention_mask = true;
	a.src[0] = kv_tensor(k, XO_DTYPE_F32, 3, (int64_t[]){1, TQ, 1}, q);
	a.src[1] = kv_tensor(k, XO_DTYPE_F32, 3, (int64_t[]){1, TK, 1}, kk);
	a.src[2] = kv_tensor(k, XO_DTYPE_F32, 3, (int64_t[]){1, TK, TK}, v);
	a.src[3] = kv_tensor(k, XO_DTYPE_F32, 3, (int64_t[]){1, TQ, TK}, m);
	a.dst[0] = kv_tensor(k, XO_DTYPE_F32, 3, (int64_t[]){1, TQ, TK}, NULL);
	assert_int_equal(xo_op_run(k->be, XO_OP_attention, XO_DIR_FWD, &a), XO_OK);
	assert_int_equal(xo_tensor_read(a.dst[0], o, 0, TQ * TK), XO_OK);
	for (int e = 0; e < TQ * TK; e++) {
		float want = causal ? caus[e] : plain[e];

		if (rate > 0.0f && e / TK == 2)
			want = 0.0f;
		if (want == 0.0f ? o[e] != 0.0f : !(fabsf(o[e] - want) <= 4.0f * 0x1p-24f))
			fail_msg("%s causal=%d dropout=%g: o[%d][%d] = %.9g, want %.9g", name,
			         (int)causal, (double)rate, e / TK, e % TK, (double)o[e],
			         (double)want);
	}
}

/* A mask that keeps every key changes no bit (forward, backward); a row
 * that keeps none gets dq = 0 exactly (its scores outside the gradient). */
static void attn_mask_grads(struct kv *k, const char *name)
{
	enum { B = 2, TQ = 3, TK = 4, H = 2, D = 2, NQ = B * TQ * H * D, NK = B * TK * H * D };
	float q[NQ], kk[NK], v[NK], dy[NQ], m[B * TQ * TK], g0[3][NK], g1[3][NK];
	struct xo_op_args a = {.p = xo_params_default()};
	const int64_t nq[] = {B, TQ, H * D}, nk[] = {B, TK, H * D};

	for (int e = 0; e < NQ; e++) {
		q[e] = (float)((e * 7) % 11) / 8.0f - 0.6f;
		dy[e] = (float)((e * 5) % 9) / 8.0f - 0.5f;
	}
	for (int e = 0; e < NK; e++) {
		kk[e] = (float)((e * 3) % 13) / 10.0f - 0.6f;
		v[e] = (float)((e * 11) % 7) / 4.0f - 0.7f;
	}
	for (int e = 0; e < B * TQ * TK; e++)
		m[e] = 1.0f;
	a.p.batch = B;
	a.p.len = TQ;
	a.p.len_kv = TK;
	a.p.heads = H;
	a.p.key_dim = D;
	a.src[0] = kv_tensor(k, XO_DTYPE_F32, 3, nq, q);
	a.src[1] = kv_tensor(k, XO_DTYPE_F32, 3, nk, kk);
	a.src[2] = kv_tensor(k, XO_DTYPE_F32, 3, nk, v);
	a.src[3] = kv_tensor(k, XO_DTYPE_F32, 3, nq, dy);
	for (int i = 0; i < 3; i++)
		a.dst[i] = kv_tensor(k, XO_DTYPE_F32, 3, i ? nk : nq, NULL);
	for (int pass = 0; pass < 3; pass++) {
		a.p.attention_mask = pass > 0;
		a.src[4] = pass ? kv_tensor(k, XO_DTYPE_F32, 3, (int64_t[]){B, TQ, TK}, m) : NULL;
		assert_int_equal(xo_op_run(k->be, XO_OP_attention, XO_DIR_BWD, &a), XO_OK);
		for (int i = 0; i < 3; i++)
			assert_int_equal(xo_tensor_read(a.dst[i], pass ? g1[i] : g0[i], 0,
			                                i ? NK : NQ), XO_OK);
		for (int i = 0; i < 3 && pass == 1; i++)
			for (int e = 0; e < (i ? NK : NQ); e++)
				if (!same_bits(g0[i][e], g1[i][e]))
					fail_msg("%s: all-keep mask, bwd dst[%d][%d] = %.9g, "
					         "without a mask %.9g", name, i, e, (double)g1[i][e],
					         (double)g0[i][e]);
		for (int e = 0; e < H * D && pass == 2; e++) /* sample 1, row 1 */
			if (g1[0][(TQ + 1) * H * D + e] != 0.0f)
				fail_msg("%s: a row of no key, dq[1][1][%d] = %.9g", name, e,
				         (double)g1[0][(TQ + 1) * H * D + e]);
		for (int j = 0; j < TK && pass == 1; j++) /* the next: sample 1, row 1 none */
			m[(TQ + 1) * TK + j] = 0.0f;
	}
}

static void test_known_attention_mask(void **state)
{
	static const char *const names[] = {"ref", "cpu", "cl"};

	(void)state;
	for (int b = 0; b < 3; b++)
		for (int run = 0; run < 4; run++) {
			struct kv k;

			if (!kv_open_backend(&k, names[b], b == 2))
				break; /* no OpenCL here, and none required */
			if (run < 3)
				attn_mask_known(&k, names[b], run == 1, run == 2 ? 0.5f : 0.0f);
			else
				attn_mask_grads(&k, names[b]);
			kv_close(&k);
		}
}

/* ---- the case table ----------------------------------------------------- */

static struct gc_case *add_case(enum xo_op op, struct xo_params p)
{
	struct gc_case *c;
	int n;

	XO_ASSERT(gc_ncases < GC_CASES_MAX);
	c = &gc_cases[gc_ncases++];
	c->op = op;
	c->p = p;
	c->tol = GC_TOL_LINEAR;
	if (op == XO_OP_sigmoid || op == XO_OP_softmax || op == XO_OP_categorical_crossentropy ||
	    op == XO_OP_batch_normalization || op == XO_OP_layer_normalization || xo_op_is_rnn(op) ||
	    op == XO_OP_tanh || op == XO_OP_elu || op == XO_OP_gelu || op == XO_OP_softplus ||
	    op == XO_OP_silu || op == XO_OP_log_softmax || op == XO_OP_attention ||
	    ((op == XO_OP_conv1d || op == XO_OP_conv2d || op == XO_OP_dense ||
	      op == XO_OP_depthwise_conv2d || op == XO_OP_conv2d_transpose) &&
	     (p.activation == XO_ACTIVATION_SIGMOID || p.activation == XO_ACTIVATION_SOFTMAX)))
		c->tol = GC_TOL_SMOOTH;
	n = snprintf(c->name, sizeof(c->name), "%s ", xo_op_name(op));
	xo_params_format(op, XO_DIR_BWD, &p, c->name + n, sizeof(c->name) - (size_t)n);
	return c;
}

/* The activations the conv and dense cases walk through. */
static const enum xo_activation gc_acts[] = {XO_ACTIVATION_LINEAR, XO_ACTIVATION_RELU,
					     XO_ACTIVATION_SIGMOID, XO_ACTIVATION_SOFTMAX};

/* The cases of conv1d: every padding, stride and dilation, use_bias 0/1, each activation. */
static void build_conv1d_cases(void)
{
	static const int64_t conv_sd[][2] = {{1, 1}, {2, 1}, {1, 2}}; /* strides, dilation */
	struct xo_params p;

	for (int pad = XO_PADDING_VALID; pad <= XO_PADDING_CAUSAL; pad++)
		for (int sd = 0; sd < 3; sd++)
			for (int bias = 0; bias < 2; bias++)
				for (int act = 0; act < 4; act++) {
					p = xo_params_default();
					p.batch = 2;
					p.len = 7;
					p.ch = 2;
					p.filters = 3;
					p.kernel_size = 3;
					p.padding = (enum xo_padding)pad;
					p.strides = conv_sd[sd][0];
					p.dilation_rate = conv_sd[sd][1];
					p.use_bias = bias;
					p.activation = gc_acts[act];
					add_case(XO_OP_conv1d, p);
				}
}

/* The cases of the 1-D and 2-D poolings, windowed and global. */
static void build_pool_cases(void)
{
	struct xo_params p;

	for (int pad = XO_PADDING_VALID; pad <= XO_PADDING_SAME; pad++)
		for (int64_t strides = 0; strides <= 2; strides++)
			for (int64_t pool = 2; pool <= 3; pool++) {
				p = xo_params_default();
				p.batch = 2;
				p.len = 7;
				p.ch = 2;
				p.pool_size = pool;
				p.strides = strides;
				p.padding = (enum xo_padding)pad;
				add_case(XO_OP_max_pooling1d, p);
			}
	/* average_pooling1d: same-padded edges (clipped counts), strides below,
	 * at and above the pool size, a pool longer than len (same) */
	for (int pad = XO_PADDING_VALID; pad <= XO_PADDING_SAME; pad++)
		for (int64_t strides = 0; strides <= 3; strides++)
			for (int64_t pool = 2; pool <= 3; pool++) {
				p = xo_params_default();
				p.batch = 2;
				p.len = 7;
				p.ch = 2;
				p.pool_size = pool;
				p.strides = strides;
				p.padding = (enum xo_padding)pad;
				add_case(XO_OP_average_pooling1d, p);
			}
	p = xo_params_default();
	p.batch = 2;
	p.len = 3;
	p.ch = 2;
	p.pool_size = 5;
	p.strides = 1;
	p.padding = XO_PADDING_SAME;
	add_case(XO_OP_average_pooling1d, p);
	for (int64_t len = 1; len <= 7; len += 6) {
		p = xo_params_default();
		p.batch = 2;
		p.len = len;
		p.ch = 3;
		add_case(XO_OP_global_average_pooling1d, p);
		add_case(XO_OP_global_max_pooling1d, p);
	}
	/* the 2-D poolings: valid/same, square and non-square pools, a width
	 * stride differing from the height's, strides above the pool (cells in
	 * no window), windows that do not divide the size */
	for (int pad = XO_PADDING_VALID; pad <= XO_PADDING_SAME; pad++)
		for (int k = 0; k < 3; k++) {
			static const int64_t geo[3][4] = {
			    /* pool_size, pool_w, strides, strides_w */
			    {2, 0, 0, 0},
			    {3, 2, 1, 2},
			    {2, 3, 3, 1},
			};

			p = xo_params_default();
			p.batch = 2;
			p.len = 5;
			p.width = 6;
			p.ch = 2;
			p.pool_size = geo[k][0];
			p.pool_w = geo[k][1];
			p.strides = geo[k][2];
			p.strides_w = geo[k][3];
			p.padding = (enum xo_padding)pad;
			add_case(XO_OP_max_pooling2d, p);
			add_case(XO_OP_average_pooling2d, p);
		}
	for (int64_t w = 1; w <= 4; w += 3) {
		p = xo_params_default();
		p.batch = 2;
		p.len = 3;
		p.width = w;
		p.ch = 2;
		add_case(XO_OP_global_average_pooling2d, p);
		add_case(XO_OP_global_max_pooling2d, p);
	}
}

/* The cases of conv2d on each geometry, and dense with each activation. */
static void build_conv2d_cases(void)
{
	struct xo_params p;

	/* conv2d: valid/same (same with an even kernel: the smaller half of the
	 * padding above/left), strides and dilation on each axis alone and a
	 * width stride unlike the height's, non-square kernels, use_bias 0/1;
	 * linear and relu on every geometry (piecewise linear: any size), the
	 * smooth sigmoid and softmax on one channel and at most 6 taps so the
	 * truncation bound of the header (6 terms per output) holds */
	for (int k = 0; k < 6; k++) {
		static const int64_t geo[6][8] = {
		    /* pad, kernel_size, kernel_w, strides, strides_w, dil, dil_w, width */
		    {XO_PADDING_VALID, 3, 2, 1, 0, 1, 0, 5},
		    {XO_PADDING_SAME, 2, 4, 1, 0, 1, 0, 6},
		    {XO_PADDING_VALID, 3, 3, 2, 1, 1, 0, 6},
		    {XO_PADDING_SAME, 2, 3, 1, 2, 1, 0, 7},
		    {XO_PADDING_VALID, 2, 3, 1, 0, 2, 1, 6},
		    {XO_PADDING_SAME, 3, 2, 1, 0, 1, 2, 5},
		};

		for (int v = 0; v < 4; v++) {
			p = xo_params_default();
			p.batch = 2;
			p.len = 6;
			p.width = geo[k][7];
			p.ch = v < 2 ? 2 : 1;
			p.filters = 3;
			p.padding = (enum xo_padding)geo[k][0];
			p.kernel_size = geo[k][1];
			p.kernel_w = geo[k][2];
			p.strides = geo[k][3];
			p.strides_w = geo[k][4];
			p.dilation_rate = geo[k][5];
			p.dilation_w = geo[k][6];
			p.use_bias = (k + v) % 2;
			p.activation = gc_acts[v];
			if (v >= 2 && p.kernel_size * p.kernel_w > 6)
				continue;
			add_case(XO_OP_conv2d, p);
		}
	}
	for (int bias = 0; bias < 2; bias++)
		for (int act = 0; act < 4; act++) {
			p = xo_params_default();
			p.batch = 3;
			p.ch = 4;
			p.units = 5;
			p.use_bias = bias;
			p.activation = gc_acts[act];
			add_case(XO_OP_dense, p);
		}
}

/* An elu case of p with the given alpha. */
static void add_elu_case(struct xo_params p, float alpha)
{
	p.alpha = alpha;
	add_case(XO_OP_elu, p);
}

/* The cases of the activations, flatten, dropout and batch normalization. */
static void build_pointwise_cases(void)
{
	struct xo_params p;

	p = xo_params_default();
	p.batch = 2;
	p.len = 3;
	p.ch = 4;
	add_case(XO_OP_relu, p);
	add_case(XO_OP_sigmoid, p);
	add_case(XO_OP_softmax, p);
	add_case(XO_OP_tanh, p);
	add_case(XO_OP_elu, p);
	add_case(XO_OP_gelu, p);
	add_case(XO_OP_softplus, p);
	add_case(XO_OP_relu6, p);
	add_case(XO_OP_hard_sigmoid, p);
	add_case(XO_OP_silu, p);
	add_case(XO_OP_log_softmax, p);
	add_case(XO_OP_leaky_relu, p); /* the default slope, Keras's layer's 0.3 */
	add_elu_case(p, 0.7f);  /* elu with an ELU layer's alpha */
	add_elu_case(p, -0.8f); /* a negative one (Keras's ELU takes it): y > 0 on both sides */
	add_case(XO_OP_flatten, p);
	p.seed = 11;
	p.step = 3;
	p.layer = 2;
	add_case(XO_OP_dropout, p);
	p.rate = 0.25f;
	add_case(XO_OP_dropout, p);
	p.training = false;
	add_case(XO_OP_dropout, p);
	/* pad (linear): padding, cropping and mixed margins on both axes */
	p = xo_params_default();
	p.batch = 2;
	p.len = 4;
	p.width = 3;
	p.ch = 2;
	p.pad_begin = 1;
	p.pad_end = 2;
	add_case(XO_OP_pad, p);
	p.pad_begin = -1;
	p.pad_end = -1;
	p.pad_begin_w = 1;
	p.pad_end_w = -2;
	add_case(XO_OP_pad, p);
	/* up_sampling (linear): along len alone, and both axes */
	p = xo_params_default();
	p.batch = 2;
	p.len = 3;
	p.ch = 2;
	p.repeats = 3;
	add_case(XO_OP_up_sampling, p);
	p.width = 2;
	p.repeats = 2;
	p.repeats_w = 3;
	add_case(XO_OP_up_sampling, p);
	/* permute (linear): a 3-cycle (its inverse differs) and a swap */
	p = xo_params_default();
	p.batch = 2;
	p.len = 2;
	p.width = 3;
	p.ch = 4;
	p.dims = 231;
	add_case(XO_OP_permute, p);
	p.dims = 213;
	add_case(XO_OP_permute, p);
	/* flip (linear): an odd length (its middle step stays) over 2 samples */
	p = xo_params_default();
	p.batch = 2;
	p.len = 5;
	p.ch = 3;
	add_case(XO_OP_flip, p);
	/* masking: the select is the identity on kept steps and a constant 0
	 * on masked ones, where x is not a variable a difference can move
	 * (x +- h leaves mask_value and keeps the step: the gradient there is
	 * Keras's definition, ops.def, checked by the op harness's exact fill);
	 * a mask_value no random x equals, so every step is kept */
	p = xo_params_default();
	p.batch = 2;
	p.len = 4;
	p.ch = 3;
	p.mask_value = 7.0f;
	add_case(XO_OP_masking, p);
	/* rescaling (linear): a multiplier and offset that are not powers of two */
	p = xo_params_default();
	p.batch = 2;
	p.len = 3;
	p.ch = 5;
	p.multiplier = 0.75f;
	p.offset = -0.375f;
	add_case(XO_OP_rescaling, p);
	/* merge: every mode (multiply is linear in each input element on its
	 * own, so the central difference is exact as for the linear ops;
	 * maximum and minimum keep |a - b| above GC_KINK) */
	for (int m = 0; m <= XO_MERGE_LAST; m++) {
		p = xo_params_default();
		p.batch = 2;
		p.len = 3;
		p.ch = 4;
		p.mode = (enum xo_merge)m;
		p.ch_b = 3;
		add_case(XO_OP_merge, p);
	}
	/* merge with Keras's mask (multiply, maximum, minimum; both inputs
	 * masked, or one): a masked input gets no gradient where it is not
	 * read, and neither does any input where multiply's output is 0 */
	for (int m = XO_MERGE_MULTIPLY; m <= XO_MERGE_MINIMUM; m++) {
		if (m == XO_MERGE_AVERAGE)
			continue;
		for (int f = 1; f <= 3; f++) {
			p = xo_params_default();
			p.batch = 3;
			p.len = 4;
			p.ch = 2;
			p.mode = (enum xo_merge)m;
			p.mask_a = f & 1;
			p.mask_b = f & 2;
			add_case(XO_OP_merge, p);
		}
	}
	/* batch_normalization (training form; smooth: batch statistics of >= 6
	 * rows of inputs in [-1, 1), so var + eps stays away from 0 and the
	 * third derivatives of L stay of order 10 as the activations'), with
	 * center and scale each off, len 1 and len > 1 */
	for (int cs = 0; cs < 4; cs++) {
		p = xo_params_default();
		p.batch = cs == 3 ? 8 : 3;
		p.len = cs == 3 ? 1 : 2;
		p.ch = 3;
		p.epsilon = 1e-3f;
		p.center = cs != 1;
		p.scale = cs != 2;
		add_case(XO_OP_batch_normalization, p);
	}
	/* layer_normalization (smooth: rows of >= 4 inputs in [-1, 1), so var +
	 * eps stays away from 0, as batch_normalization's), center and scale each
	 * off, one row and several */
	for (int cs = 0; cs < 4; cs++) {
		p = xo_params_default();
		p.batch = cs == 3 ? 1 : 2;
		p.len = cs == 3 ? 1 : 3;
		p.ch = cs == 3 ? 7 : 4;
		p.epsilon = 1e-3f;
		p.center = cs != 1;
		p.scale = cs != 2;
		add_case(XO_OP_layer_normalization, p);
	}
}

/* normalization (linear in x: mean and variance are constants, the
 * variances filled positive by fill) */
static void build_normalization_cases(void)
{
	struct xo_params p = xo_params_default();

	p.batch = 2;
	p.len = 3;
	p.ch = 4;
	add_case(XO_OP_normalization, p);
	/* invert=1 (Keras's invert=True): dx = dy * den */
	p.invert = true;
	add_case(XO_OP_normalization, p);
}

/* The cases of the recurrent ops. */
static void build_rnn_cases(void)
{
	struct xo_params p;

	/* the recurrent ops back through time: T = 1, 2, 7; every combination
	 * of go_backwards and return_sequences; gru reset_after both ways;
	 * use_bias off once each; simple_rnn's relu */
	for (int op = 0; op < 3; op++)
		for (int T = 0; T < 3; T++)
			for (int gs = 0; gs < 4; gs++)
				for (int ra = 0; ra < (op == 2 ? 2 : 1); ra++) {
					static const enum xo_op rnn_ops[] = {XO_OP_simple_rnn,
									     XO_OP_lstm, XO_OP_gru};
					static const int64_t lens[] = {1, 2, 7};

					p = xo_params_default_op(rnn_ops[op]);
					p.batch = 2;
					p.len = lens[T];
					p.ch = 2;
					p.units = 3;
					p.go_backwards = gs & 1;
					p.return_sequences = gs >> 1;
					p.reset_after = ra;
					add_case(rnn_ops[op], p);
				}
	for (int op = 0; op < 3; op++) {
		p = xo_params_default_op(op == 0 ? XO_OP_simple_rnn : op == 1 ? XO_OP_lstm
									   : XO_OP_gru);
		p.batch = 2;
		p.len = 7;
		p.ch = 2;
		p.units = 3;
		p.use_bias = false;
		p.return_sequences = true;
		add_case(op == 0 ? XO_OP_simple_rnn : op == 1 ? XO_OP_lstm : XO_OP_gru, p);
	}
	/* the step mask (mask_zero): masked last, first and middle steps;
	 * go_backwards, return_sequences and zero_output_for_mask both ways */
	for (int op = 0; op < 3; op++)
		for (int v = 0; v < 8; v++) {
			static const enum xo_op rnn_ops[] = {XO_OP_simple_rnn, XO_OP_lstm,
							     XO_OP_gru};

			p = xo_params_default_op(rnn_ops[op]);
			p.batch = 2;
			p.len = 7;
			p.ch = 2;
			p.units = 3;
			p.mask_zero = true;
			p.go_backwards = v & 1;
			p.return_sequences = (v >> 1) & 1;
			p.zero_output_for_mask = v >> 2;
			p.reset_after = op == 2 && v == 3 ? 0 : 1;
			add_case(rnn_ops[op], p);
		}
	for (int T = 0; T < 2; T++) {
		p = xo_params_default_op(XO_OP_simple_rnn);
		p.batch = 2;
		p.len = T ? 7 : 2;
		p.ch = 2;
		p.units = 3;
		p.activation = XO_ACTIVATION_RELU;
		p.return_sequences = true;
		p.go_backwards = T;
		add_case(XO_OP_simple_rnn, p);
	}
}

/* The cases of the losses and embedding. */
static void build_loss_cases(void)
{
	struct xo_params p;

	p = xo_params_default();
	p.batch = 4;
	p.ch = 5;
	add_case(XO_OP_categorical_crossentropy, p);
	add_case(XO_OP_categorical_crossentropy, p)->soft_targets = true;
	snprintf(gc_cases[gc_ncases - 1].name, sizeof(gc_cases[0].name),
		 "categorical_crossentropy batch=4 ch=5 targets=soft");
	p = xo_params_default();
	p.batch = 3;
	p.ch = 4;
	add_case(XO_OP_binary_crossentropy, p)->tol = GC_TOL_SMOOTH;
	add_case(XO_OP_mean_squared_error, p)->tol = GC_TOL_SMOOTH;
	add_case(XO_OP_sparse_categorical_crossentropy, p)->tol = GC_TOL_SMOOTH;
	/* from logits: the three cross-entropies on x directly */
	p.from_logits = true;
	add_case(XO_OP_categorical_crossentropy, p)->tol = GC_TOL_SMOOTH;
	add_case(XO_OP_binary_crossentropy, p)->tol = GC_TOL_SMOOTH;
	add_case(XO_OP_sparse_categorical_crossentropy, p)->tol = GC_TOL_SMOOTH;
	p = xo_params_default();
	p.batch = 2;
	p.len = 5;
	p.ch = 3;
	p.rows = 5;
	add_case(XO_OP_embedding, p);
}

/* depthwise_conv2d: conv2d's geometries without dilation (valid/same with
 * an even kernel, a stride on each axis, non-square kernels), depth
 * multipliers 1 and 2, a 1-D shape (width 1); linear and relu on every
 * geometry, sigmoid and softmax where an output has at most 6 taps (the
 * header's truncation bound) */
static void build_depthwise_cases(void)
{
	static const int64_t geo[5][7] = {
	    /* pad, kernel_size, kernel_w, strides, strides_w, width, dm */
	    {XO_PADDING_VALID, 3, 2, 1, 0, 5, 1},
	    {XO_PADDING_SAME, 2, 3, 1, 0, 6, 2},
	    {XO_PADDING_VALID, 3, 3, 2, 1, 6, 2},
	    {XO_PADDING_SAME, 2, 3, 1, 2, 7, 1},
	    {XO_PADDING_SAME, 3, 1, 2, 1, 1, 2},
	};

	for (int k = 0; k < 5; k++)
		for (int v = 0; v < 4; v++) {
			struct xo_params p = xo_params_default();

			p.batch = 2;
			p.len = 6;
			p.width = geo[k][5];
			p.ch = 2;
			p.depth_multiplier = geo[k][6];
			p.padding = (enum xo_padding)geo[k][0];
			p.kernel_size = geo[k][1];
			p.kernel_w = geo[k][2];
			p.strides = geo[k][3];
			p.strides_w = geo[k][4];
			p.use_bias = (k + v) % 2;
			p.activation = gc_acts[v];
			if (v >= 2 && p.kernel_size * p.kernel_w > 6)
				continue;
			add_case(XO_OP_depthwise_conv2d, p);
		}
}

/* conv2d_transpose: valid and same, strides shorter, equal to and longer
 * than the kernel on each axis, output_padding None and explicit, a 1-D
 * shape (width 1); linear and relu on every geometry, sigmoid and softmax
 * on one channel where at most 6 products land on an output (the header's
 * truncation bound) */
static void build_conv2d_transpose_cases(void)
{
	static const int64_t geo[5][8] = {
	    /* pad, kernel_size, kernel_w, strides, strides_w, width, opad, opad_w */
	    {XO_PADDING_VALID, 3, 2, 1, 0, 3, -1, -1},
	    {XO_PADDING_SAME, 2, 3, 2, 1, 3, -1, -1},
	    {XO_PADDING_VALID, 2, 2, 3, 2, 3, 1, 0},
	    {XO_PADDING_SAME, 3, 3, 2, 3, 2, 1, 2},
	    {XO_PADDING_SAME, 3, 1, 2, 1, 1, -1, -1},
	};

	for (int k = 0; k < 5; k++)
		for (int v = 0; v < 4; v++) {
			struct xo_params p = xo_params_default();

			p.batch = 2;
			p.len = 3;
			p.width = geo[k][5];
			p.ch = v < 2 ? 2 : 1;
			p.filters = 3;
			p.padding = (enum xo_padding)geo[k][0];
			p.kernel_size = geo[k][1];
			p.kernel_w = geo[k][2];
			p.strides = geo[k][3];
			p.strides_w = geo[k][4];
			p.output_padding = geo[k][6];
			p.output_padding_w = geo[k][7];
			p.use_bias = (k + v) % 2;
			p.activation = gc_acts[v];
			if (v >= 2 && p.kernel_size * p.kernel_w > 6)
				continue;
			add_case(XO_OP_conv2d_transpose, p);
		}
}

/* The cases of attention: self and cross (len_kv != len, value_dim !=
 * key_dim), causal with len_kv equal, above and below len (smooth: a
 * softmax of bilinear scores of inputs in [-1, 1), whose third derivatives
 * stay of the order of the softmax's); dropout in training, self and
 * causal cross (the mask fixed by seed, step and layer: a constant weight
 * per probability, so the function stays as smooth); the mask source, self,
 * causal cross and with dropout (fixed keys: the function of the kept ones
 * as smooth, a row of no key constant) */
static void build_attention_cases(void)
{
	static const int64_t geo[10][8] = {
	    /* len, len_kv, heads, key_dim, value_dim, causal, dropout in %, mask */
	    {3, 0, 2, 2, 0, 0, 0},
	    {2, 4, 1, 3, 2, 0, 0},
	    {4, 0, 2, 2, 3, 1, 0},
	    {2, 4, 1, 2, 0, 1, 0},
	    {4, 3, 1, 2, 2, 1, 0},
	    {4, 0, 2, 2, 3, 0, 30},
	    {4, 3, 1, 2, 2, 1, 50},
	    {4, 0, 2, 2, 3, 0, 0, 1},
	    {3, 5, 1, 2, 2, 1, 0, 1},
	    {4, 0, 2, 2, 0, 0, 30, 1},
	};

	for (int k = 0; k < 10; k++) {
		struct xo_params p = xo_params_default();

		p.batch = 2;
		p.len = geo[k][0];
		p.len_kv = geo[k][1];
		p.heads = geo[k][2];
		p.key_dim = geo[k][3];
		p.value_dim = geo[k][4];
		p.causal = geo[k][5];
		p.dropout = (float)geo[k][6] / 100.0f;
		p.attention_mask = geo[k][7];
		if (geo[k][6]) {
			p.seed = 11;
			p.step = 3;
			p.layer = 2;
		}
		add_case(XO_OP_attention, p);
	}
}

/* Every case, in the order the suite names them. */
static void build_cases(void)
{
	build_conv1d_cases();
	build_pool_cases();
	build_conv2d_cases();
	build_pointwise_cases();
	build_rnn_cases();
	build_loss_cases();
	build_depthwise_cases();
	build_conv2d_transpose_cases();
	build_attention_cases();
	build_normalization_cases();
}

int main(void)
{
	static const struct CMUnitTest known[] = {
		cmocka_unit_test(test_known_conv1d),
		cmocka_unit_test(test_known_seed_conv),
		cmocka_unit_test(test_known_conv2d),
		cmocka_unit_test(test_known_max_pooling1d),
		cmocka_unit_test(test_known_dense_softmax_sigmoid),
		cmocka_unit_test(test_known_crossentropy_accuracy),
		cmocka_unit_test(test_known_adam),
		cmocka_unit_test(test_known_sgd_rmsprop),
		cmocka_unit_test(test_known_bce_mse),
		cmocka_unit_test(test_known_gather_dropout),
		cmocka_unit_test(test_known_attention_dropout),
		cmocka_unit_test(test_gradcheck_gap_mask),
		cmocka_unit_test(test_known_attention_mask),
	};
	struct CMUnitTest tests[GC_CASES_MAX];
	int fails;

	build_cases();
	for (int i = 0; i < gc_ncases; i++) {
		struct gc_case *c = &gc_cases[i];

		tests[i] = (struct CMUnitTest){
			.name = c->name,
			.test_func = c->op == XO_OP_embedding                  ? test_gradcheck_embedding
				     : c->op == XO_OP_categorical_crossentropy && !c->p.from_logits
				         ? test_gradcheck_ce
				     : c->op == XO_OP_categorical_crossentropy ||
				             c->op == XO_OP_binary_crossentropy ||
				             c->op == XO_OP_mean_squared_error ||
				             c->op == XO_OP_sparse_categorical_crossentropy
				         ? test_gradcheck_loss
				         : test_gradcheck,
			.initial_state = c,
		};
	}
	fails = cmocka_run_group_tests_name("ref_known_values", known, NULL, NULL);
	fails += _cmocka_run_group_tests("gradcheck", tests, (size_t)gc_ncases, NULL, NULL);
	return fails ? 1 : 0;
}
