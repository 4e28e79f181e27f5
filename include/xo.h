/*
 * xo.h - crossover's one public header.
 *
 * crossover answers "for this small network, on this machine, is the CPU or the
 * GPU faster, and why?" A naive scalar reference of every layer (backend "ref")
 * is the numerical oracle; optimized CPU kernels ("cpu") and OpenCL kernels
 * ("cl") are proven against it; a perf runner times them per commit.
 *
 * Everything runs on a backend. A backend owns its tensors (host memory for
 * ref and cpu, cl_mem for cl); data moves in and out only through
 * xo_tensor_write / xo_tensor_read, so a whole training step can stay on the
 * device. Every op listed in include/xo/ops.def has a forward and (where it
 * makes sense) a backward pass, run through xo_op_run with an xo_op_args whose
 * source/destination slots are documented in ops.def.
 *
 * Run-time failures (allocation, OpenCL, files, user input) return an
 * enum xo_status; xo_last_error() then holds a one-line message naming the
 * cause. Programming errors abort through XO_ASSERT with file and line.
 *
 * Usage:
 *
 *	struct xo_backend *be;
 *	struct xo_tensor *x, *w, *y;
 *	struct xo_op_args a = { .p = xo_params_default() };
 *
 *	if (xo_backend_open("ref", &be) != XO_OK)
 *		die(xo_last_error());
 *	a.p.batch = 4; a.p.len = 29; a.p.ch = 1;
 *	a.p.filters = 16; a.p.kernel_size = 3; a.p.use_bias = false;
 *	xo_tensor_create(be, XO_DTYPE_F32, 3, (int64_t[]){4, 29, 1}, &x);
 *	xo_tensor_create(be, XO_DTYPE_F32, 3, (int64_t[]){3, 1, 16}, &w);
 *	xo_tensor_create(be, XO_DTYPE_F32, 3, (int64_t[]){4, 27, 16}, &y);
 *	xo_tensor_write(x, host_x, 0, 4 * 29);  ... and w ...
 *	a.src[0] = x; a.src[1] = w; a.dst[0] = y;
 *	if (xo_op_run(be, XO_OP_CONV1D, XO_DIR_FWD, &a) != XO_OK)
 *		die(xo_last_error());
 *	xo_tensor_read(y, host_y, 0, 4 * 27 * 16);
 *	xo_tensor_free(y); xo_tensor_free(w); xo_tensor_free(x);
 *	xo_backend_close(be);
 */
#ifndef XO_H
#define XO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ------------------------------------------------------------ */

enum xo_status {
	XO_OK = 0,
	XO_EINVAL,      /* invalid argument, shape or parameter */
	XO_ENOMEM,      /* host allocation failed */
	XO_EOVERFLOW,   /* a size product overflows */
	XO_EBACKEND,    /* tensor of another backend, or op not available */
	XO_EIO,         /* file could not be read or written */
	XO_EFORMAT,     /* a file's contents are malformed */
	XO_EOPENCL,     /* an OpenCL call failed (message names call and error) */
	XO_ENODEV,      /* no such device or platform */
	XO_ERESOURCE,   /* device out of memory or beyond a device limit */
	XO_EDB,         /* database error */
	XO_STATUS_COUNT
};

/* Short fixed name of a status ("invalid argument", ...). */
const char *xo_status_str(enum xo_status s);
/* The message of the last failure on this thread; "" when none. */
const char *xo_last_error(void);
/* Records a printf-style message for this thread and returns s. */
enum xo_status xo_error(enum xo_status s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Clears this thread's message. */
void xo_error_clear(void);
/* Copies outside text (a path, a name from a file) into out as one
 * printable line: control bytes (C0, DEL), C1 controls and bytes that are
 * not valid UTF-8 become \xHH; valid UTF-8 is kept. Truncates at a whole
 * character or escape; returns out. Every message that quotes outside text
 * goes through it (xo_error does). */
char *xo_escape_line(char *out, size_t size, const char *in);

/* Aborts with file and line when a programming error is found. */
#define XO_ASSERT(cond)                                                        \
	do {                                                                   \
		if (!(cond))                                                   \
			xo_assert_fail(__FILE__, __LINE__, #cond);             \
	} while (0)
_Noreturn void xo_assert_fail(const char *file, int line, const char *expr);

/* Overflow-checked size arithmetic: false (and *out untouched) on overflow
 * or on a negative operand. */
bool xo_mul_ok(int64_t a, int64_t b, int64_t *out);
bool xo_add_ok(int64_t a, int64_t b, int64_t *out);

/* ---- ops --------------------------------------------------------------- */

enum xo_cmp { XO_CMP_EXACT, XO_CMP_ULP };

enum xo_op {
#define XO_OP(name, has_bwd, cmp, nsf, ndf, nsb, ndb) XO_OP_##name,
#include "xo/ops.def"
#undef XO_OP
	XO_OP_COUNT
};

enum xo_dir { XO_DIR_FWD, XO_DIR_BWD, XO_DIR_COUNT };

/* Op name ("conv1d") and lookup; xo_op_from_name returns XO_OP_COUNT when unknown. */
const char *xo_op_name(enum xo_op op);
enum xo_op xo_op_from_name(const char *name);
bool xo_op_has_bwd(enum xo_op op);
enum xo_cmp xo_op_cmp(enum xo_op op);
int xo_op_nsrc(enum xo_op op, enum xo_dir dir);
int xo_op_ndst(enum xo_op op, enum xo_dir dir);
const char *xo_dir_name(enum xo_dir dir); /* "fwd", "bwd" */

enum xo_padding { XO_PADDING_VALID, XO_PADDING_SAME, XO_PADDING_CAUSAL };
/* The merge op's modes (Keras's merge layers; ops.def). */
enum xo_merge {
	XO_MERGE_ADD,
	XO_MERGE_SUBTRACT,
	XO_MERGE_MULTIPLY,
	XO_MERGE_AVERAGE,
	XO_MERGE_MAXIMUM,
	XO_MERGE_MINIMUM,
	XO_MERGE_CONCATENATE,
};
#define XO_MERGE_LAST XO_MERGE_CONCATENATE
enum xo_activation {
	XO_ACTIVATION_LINEAR,
	XO_ACTIVATION_RELU,
	XO_ACTIVATION_SIGMOID,
	XO_ACTIVATION_SOFTMAX, /* the last one conv1d/dense ops fuse */
	/* Applied as their own op (XO_OP_tanh ...); a model layer with one of
	 * these runs conv1d/dense with linear, then the activation op. */
	XO_ACTIVATION_TANH,
	XO_ACTIVATION_ELU, /* the params' alpha (1.0, Keras's default) */
	XO_ACTIVATION_GELU, /* exact (erf), Keras's default approximate=False */
	XO_ACTIVATION_SOFTPLUS,
	XO_ACTIVATION_RELU6,
	XO_ACTIVATION_HARD_SIGMOID, /* Keras 3's relu6(x + 3) / 6 */
	XO_ACTIVATION_SILU,         /* Keras 3's name; "swish" is read as it */
	XO_ACTIVATION_LOG_SOFTMAX,  /* over the last axis */
	XO_ACTIVATION_LEAKY_RELU,   /* the params' negative_slope (Keras's
	                             * activation string: 0.2) */
};
#define XO_ACTIVATION_FUSED_LAST XO_ACTIVATION_SOFTMAX
#define XO_ACTIVATION_LAST       XO_ACTIVATION_LEAKY_RELU
const char *xo_padding_name(enum xo_padding p);
const char *xo_activation_name(enum xo_activation a);
const char *xo_merge_name(enum xo_merge m);

/*
 * Parameters of every op, one flat struct so a case is a line of key=value
 * pairs (the suites/shapes files, `xo check`). Each op reads the fields it needs.
 */
struct xo_params {
	int64_t batch;                 /* n: samples */
	int64_t len;                   /* steps of a [batch][len][ch] input (1 for 2-D ops) */
	int64_t ch;                    /* channels; features of dense, classes of softmax/CE */
	int64_t filters;               /* conv1d output channels */
	int64_t kernel_size;           /* conv1d window */
	int64_t strides;               /* conv1d / pooling stride; 0 = default (1 / pool_size) */
	int64_t dilation_rate;         /* conv1d dilation */
	enum xo_padding padding;       /* conv1d: valid/same/causal; pooling: valid/same */
	bool use_bias;                 /* conv1d / dense */
	enum xo_activation activation; /* conv1d / dense, fused */
	int64_t pool_size;             /* max_pooling1d / average_pooling1d window */
	int64_t units;                 /* dense outputs */
	float rate;                    /* dropout rate in [0, 1) */
	bool training;                 /* dropout active */
	uint64_t seed;                 /* dropout mask key: seed ... */
	uint64_t step;                 /* ... training step ... */
	uint32_t layer;                /* ... and layer index */
	float lr;                      /* adam learning rate (1e-3) */
	float beta_1;                  /* adam (0.9) */
	float beta_2;                  /* adam (0.999) */
	float epsilon;                 /* adam (1e-7) */
	int64_t iteration;             /* adam step count t, from 1 */
	int64_t size;                  /* adam element count */
	int64_t rows;                  /* gather: rows of the source */
	/* batch_normalization (its epsilon is the field above, Keras 1e-3) */
	float momentum;                /* moving statistics' decay (0.99); sgd / rmsprop
	                                * momentum (the model passes Keras's 0) */
	bool center;                   /* beta present */
	bool scale;                    /* gamma present */
	/* The 2-D ops take x[batch][len][width][ch] (len is the height). Their
	 * height axis reads kernel_size, strides, dilation_rate and pool_size;
	 * the width axis reads the *_w fields below, where 0 means "as the
	 * height" (Keras's square default for an int argument). */
	int64_t width;                 /* 2-D ops: columns (1) */
	int64_t kernel_w;              /* conv2d kernel width (0: kernel_size) */
	int64_t strides_w;             /* 2-D stride along width (0: as strides) */
	int64_t dilation_w;            /* conv2d dilation along width (0: dilation_rate) */
	int64_t pool_w;                /* 2-D pooling window width (0: pool_size) */
	/* sgd, rmsprop */
	bool nesterov;                 /* sgd Nesterov momentum (false) */
	float rho;                     /* rmsprop decay (0.9) */
	/* simple_rnn, lstm, gru (units: u; activation: tanh by default for them,
	 * xo_params_default_op) */
	enum xo_activation recurrent_activation; /* lstm / gru gates (sigmoid) */
	bool return_sequences;         /* y holds every step's state (false: the last) */
	bool go_backwards;             /* process the steps from the last one (false) */
	bool reset_after;              /* gru: reset gate after the matmul (true, Keras 3) */
	/* pad: signed margins of len (height) and width; a negative one crops */
	int64_t pad_begin;             /* before the first step / row (0) */
	int64_t pad_end;               /* after the last step / row (0) */
	int64_t pad_begin_w;           /* before the first column (0) */
	int64_t pad_end_w;             /* after the last column (0) */
	/* up_sampling: each row / column repeated */
	int64_t repeats;               /* along len (2, Keras's size) */
	int64_t repeats_w;             /* along width (1) */
	/* permute: Keras's dims as digits, x's axis (1 len, 2 width, 3 ch; for
	 * two digits 1 len, 2 ch, width 1) that becomes each of y's axes (123,
	 * the identity) */
	int64_t dims;
	/* merge: what it computes (add), and b's channels for concatenate (1) */
	enum xo_merge mode;
	int64_t ch_b;
	/* depthwise_conv2d: filters per input channel (1, Keras's default) */
	int64_t depth_multiplier;
	/* conv2d_transpose: Keras's output_padding per axis (height, width);
	 * -1 is Keras's None (the output length from the padding rule alone) */
	int64_t output_padding, output_padding_w;
	/* attention: heads, per-head query/key and value widths, the key and
	 * value sequence's length (0: len, self-attention), the causal mask, the
	 * dropout on the probabilities (when training; keyed by seed, step and
	 * layer above, like the dropout op's mask) */
	int64_t heads;                 /* (1) */
	int64_t key_dim;               /* (required: Keras's key_dim has no default) */
	int64_t value_dim;             /* (0: key_dim, Keras's default) */
	int64_t len_kv;                /* (0: len) */
	bool causal;                   /* keys after the query's position masked (false) */
	float dropout;                 /* attention dropout rate in [0, 1) (0: none) */
	/* global_average_pooling1d, simple_rnn, lstm, gru: Keras's mask of
	 * Embedding(mask_zero=True), a step kept where its id is not 0 (ids an
	 * extra source, ops.def) */
	bool mask_zero;                /* (false) */
	bool attention_mask;           /* a mask source m[batch][len][len_kv] (false) */
	/* simple_rnn, lstm, gru with mask_zero=1 (the ids a step-mask source):
	 * a masked step's output is zeros, else the carried state (Keras's RNN
	 * zero_output_for_mask) */
	bool zero_output_for_mask;     /* (false) */
	/* mask_outer: which of Keras's implicit masks the ids give (ops.def) */
	bool query_mask;               /* ids != 0 over the query rows (false) */
	bool value_mask;               /* ids != 0 over the keys (false) */
	/* merge (multiply, maximum, minimum): which input carries the mask of
	 * the ids source (ops.def); either set declares that source */
	bool mask_a;                   /* the first input is masked where ids == 0 (false) */
	bool mask_b;                   /* the second input alike (false) */
	/* masking: a step whose every feature equals it is masked (Keras's
	 * Masking mask_value; finite) */
	float mask_value;              /* (0) */
	/* rescaling: y = x * multiplier + offset (Keras's scale, offset) */
	float multiplier;              /* (1) */
	float offset;                  /* (0) */
	/* categorical_crossentropy, sparse_categorical_crossentropy,
	 * binary_crossentropy: p holds logits, the loss takes log_softmax /
	 * log_sigmoid of them (Keras's from_logits=True; ops.def) */
	bool from_logits;              /* (false) */
	/* leaky_relu: y = negative_slope * x where x < 0 (Keras's LeakyReLU
	 * negative_slope; finite) */
	float negative_slope;          /* (0.3, the layer's default) */
	/* elu: y = alpha * expm1(x) where x <= 0 (Keras's ELU alpha and
	 * activation "elu"'s 1; finite, >= 0) */
	float alpha;                   /* (1) */
	/* normalization: Keras's Normalization(invert=True), y = mean + x * den
	 * (the forward's inverse in Keras's own float order; ops.def) */
	bool invert;                   /* (false) */
};

/* Keras defaults: strides 0 (default), dilation 1, valid, bias on, linear,
 * Adam 1e-3/0.9/0.999/1e-7, iteration 1, batch/len/ch 1. */
struct xo_params xo_params_default(void);
/* xo_params_default with op's own defaults where they differ from it: the
 * recurrent ops' activation is tanh (Keras's default for them); the
 * categorical losses' ch is 2 (one class has loss and gradient 0). */
struct xo_params xo_params_default_op(enum xo_op op);

/* Sets one key=value field; XO_EINVAL with a message on unknown key or bad value. */
enum xo_status xo_params_set(struct xo_params *p, const char *key, const char *value);
/* The i-th (from 0) key op requires, Keras's arguments without a default
 * (conv1d's filters and kernel_size, ...), in the order of the canonical
 * line; NULL past the last. */
const char *xo_op_required_key(enum xo_op op, int i);
/* Writes the canonical "key=value ..." line of the fields op reads. */
int xo_params_format(enum xo_op op, enum xo_dir dir, const struct xo_params *p, char *buf,
		     size_t size);

/* Output length and left padding of conv1d / max_pooling1d, Keras rules.
 * XO_EINVAL when the parameters or the input length do not fit; XO_EOVERFLOW
 * when len, kernel_size, strides, dilation_rate, pool_size or the receptive
 * field dilation_rate*(kernel_size-1)+1 is above XO_GEOMETRY_MAX, so every
 * derived size (out_len, pad_left, window ends) fits a 32-bit int, as the
 * OpenCL kernels take them. */
#define XO_GEOMETRY_MAX INT64_C(2147483647)
enum xo_status xo_conv1d_geometry(const struct xo_params *p, int64_t *out_len,
				  int64_t *pad_left);
enum xo_status xo_pool1d_geometry(const struct xo_params *p, int64_t *out_len,
				  int64_t *pad_left);
/* The same for any windowed 1-D pooling op (max_pooling1d, average_pooling1d),
 * its errors naming op. */
enum xo_status xo_pool1d_geometry_of(enum xo_op op, const struct xo_params *p, int64_t *out_len,
				     int64_t *pad_left);
/* permute's dims as axes: q[k] in 0..2 (0 len, 1 width, 2 ch) the x axis that
 * becomes y's axis k; an error naming the value unless dims's three digits
 * are a permutation of 1 2 3, or its two a permutation of 1 2 (a rank-2
 * sample [len][ch]: 21 moves as 321). */
enum xo_status xo_permute_axes(int64_t dims, int q[3]);
/* True for the windowed 1-D pooling ops (pool_size, strides, padding). */
bool xo_op_is_pool1d(enum xo_op op);
/* simple_rnn, lstm or gru. */
bool xo_op_is_rnn(enum xo_op op);
/* Gates per unit of a recurrent op: 1 simple_rnn, 4 lstm, 3 gru; and the
 * u-blocks per (sample, step) row of its workspace (ops.def): 1, 7, 5. */
int64_t xo_rnn_gates(enum xo_op op);
int64_t xo_rnn_ws_blocks(enum xo_op op);
/* The windowed 2-D pooling ops (max_pooling2d, average_pooling2d): each axis
 * is a 1-D pooling geometry (the width axis from xo_params_width_axis, so
 * xo_pool1d_window serves it); errors name the op and the axis's keys. */
struct xo_pool2d_geom {
	int64_t out_h, pad_h, stride_h, pool_h; /* height (len) axis */
	int64_t out_w, pad_w, stride_w, pool_w; /* width axis */
};
bool xo_op_is_pool2d(enum xo_op op);
enum xo_status xo_pool2d_geometry_of(enum xo_op op, const struct xo_params *p,
				     struct xo_pool2d_geom *g);
/* Window o of a pooling op with a valid geometry: the in-bounds input steps
 * [*lo, *hi), clipped to [0, len); returns their count (>= 1, the divisor of
 * average_pooling1d: Keras averages over the valid steps only). */
int64_t xo_pool1d_window(const struct xo_params *p, int64_t o, int64_t pad_left, int64_t *lo,
			 int64_t *hi);
/* The width axis of a 2-D op as 1-D parameters: a copy of p whose len,
 * kernel_size, strides, dilation_rate and pool_size are the width axis's
 * (the *_w fields, 0 resolved to the height's value), so the 1-D geometry
 * functions above serve each axis of a 2-D op. */
struct xo_params xo_params_width_axis(const struct xo_params *p);
/* p with the defaults op resolves written out (strides 0 -> the stride
 * used; a 2-D pooling's strides_w and pool_w), as a repro line prints them;
 * p itself when its geometry is invalid. */
struct xo_params xo_params_resolved(enum xo_op op, const struct xo_params *p);
/* A conv2d's output [out_h][out_w] and the padding before each axis: the
 * conv1d geometry per axis (the width's from xo_params_width_axis), errors
 * naming conv2d and the axis's keys (len/width, kernel_size/kernel_w, ...);
 * padding valid or same; any stride > 1 with any dilation > 1 refused as
 * Keras does. */
enum xo_status xo_conv2d_geometry(const struct xo_params *p, int64_t *out_h, int64_t *out_w,
                                  int64_t *pad_top, int64_t *pad_left);
/* The same for depthwise_conv2d (its messages name it); dilation_rate and
 * dilation_w other than 1 are refused. */
enum xo_status xo_depthwise_conv2d_geometry(const struct xo_params *p, int64_t *out_h,
                                            int64_t *out_w, int64_t *pad_top, int64_t *pad_left);
/* conv2d_transpose's geometry, Keras's rule per axis (height: len,
 * kernel_size, strides, output_padding; width: width, kernel_w, strides_w,
 * output_padding_w): input position l's tap k lands on output l*stride + k -
 * pad. valid: out = (len-1)*stride + kernel + output_padding (None: max(kernel,
 * stride) - kernel), pad 0; same: out = len*stride (None) or (len-1)*stride +
 * kernel%2 + output_padding, pad = kernel-1 - min(ceil(p/2), kernel-1) with
 * p = stride+kernel-2 (None) or kernel + kernel%2 - 2 + output_padding.
 * Refused: dilation other than 1, causal padding, output_padding >= stride
 * (Keras), an empty output. */
enum xo_status xo_conv2d_transpose_geometry(const struct xo_params *p, int64_t *out_h,
                                            int64_t *out_w, int64_t *pad_top, int64_t *pad_left);
/* attention's key/value length and value width, their 0 defaults resolved
 * (len_kv 0: len; value_dim 0: key_dim). */
int64_t xo_attention_len_kv(const struct xo_params *p);
int64_t xo_attention_value_dim(const struct xo_params *p);
/* Effective stride (resolves the 0 default). */
/* 1 - beta as Keras's optimizers use it: Python's 1 - beta in double, beta
 * the value the config wrote (the shortest decimal that gives the float
 * back), rounded to float32 where it multiplies a float32 tensor (0.9 ->
 * 0.1f, 0.999 -> 0.001f; 1 - (double)0.999f would be 1.3e-5 smaller). */
float xo_adam_complement(float beta);
/* The float as the shortest decimal that reads back to it, as a double (the
 * value a config wrote: 0.2f -> 0.2, 0.999f -> 0.999), for arithmetic that
 * Keras does on that Python float. */
double xo_float_as_decimal(float f);
int64_t xo_conv1d_stride(const struct xo_params *p);
int64_t xo_pool1d_stride(const struct xo_params *p);

/* ---- tensors and backends ---------------------------------------------- */

struct xo_backend; /* opaque: an open backend (table + context) */
struct xo_tensor;  /* opaque: storage owned by one backend, or a view into it */

enum xo_dtype { XO_DTYPE_F32, XO_DTYPE_I32 };
#define XO_MAX_DIMS 4
#define XO_MAX_SRC 6 /* 6: the recurrent ops' backward {x, kernel, recurrent_kernel, ws, dy, ids} */
#define XO_MAX_DST 4 /* 4: their backward {dx, dkernel, drecurrent_kernel, dbias} */

/* Names of the compiled-in backends ("ref", "cpu", "cl"). */
int xo_backend_count(void);
const char *xo_backend_kind(int i);

/* Opens "ref", "cpu", "cl" or "cl:PLATFORM:DEVICE" (indices or name
 * substrings). XO_ENODEV with a reason when the device is not there. */
enum xo_status xo_backend_open(const char *spec, struct xo_backend **out);
void xo_backend_close(struct xo_backend *be); /* accepts NULL */
const char *xo_backend_name(const struct xo_backend *be);     /* "ref", "cpu", "cl" */
const char *xo_backend_describe(const struct xo_backend *be); /* device, driver, versions */
/* Whether the environment requires OpenCL (XO_REQUIRE_OPENCL=1, or =gpu,
 * which cl also holds to a GPU device): a suite then fails where it would
 * skip OpenCL tests for want of a device. */
bool xo_opencl_required(void);
/* Waits until every enqueued op of be has finished. */
enum xo_status xo_backend_sync(struct xo_backend *be);

/* Where a backend's time went since the last reset (OpenCL profiling events;
 * zeros for host backends). All times in nanoseconds. */
struct xo_backend_stats {
	uint64_t launches;                       /* kernel launches */
	uint64_t enqueue_ns;                     /* host time spent enqueueing */
	uint64_t h2d_ns;                         /* host-to-device transfers */
	uint64_t kernel_ns;                      /* device kernel time, all ops */
	uint64_t d2h_ns;                         /* device-to-host transfers */
	uint64_t wait_ns;                        /* host blocked waiting on the device */
	uint64_t op_ns[XO_OP_COUNT][XO_DIR_COUNT]; /* kernel time per op and direction */
	uint64_t op_launches[XO_OP_COUNT][XO_DIR_COUNT];
	/* Fused whole-network launches (struct xo_net in xo/backend.h): their
	 * kernel time is in kernel_ns and here, in no op's op_ns. */
	uint64_t net_ns, net_launches;
	/* Profiled events (kernels, transfers) whose START/END times were read
	 * and added above, and those whose times could not be read (failed
	 * command, no profiling info, not complete after a drain): the latter
	 * add 0 ns, so a split with untimed_events > 0 undercounts device time. */
	uint64_t timed_events, untimed_events;
};
void xo_backend_stats_get(struct xo_backend *be, struct xo_backend_stats *out);
void xo_backend_stats_reset(struct xo_backend *be);

/*
 * What one device's step cost is made of (`xo probe`, like clpeak): the
 * figures the cost model (perfdb/cost.c) multiplies by a model's launches,
 * bytes and FLOPs. Times in seconds, rates per second; NAN where a figure
 * does not apply to the device (a host backend has no transfers).
 */
struct xo_probe {
	double launch_s;   /* cl: one empty kernel, enqueue to completion, one at a time;
	                    * cpu: one thread-pool round (hand-off to every worker and back) */
	double enqueue_s;  /* cl: host cost of one enqueue, back to back; cpu: NAN */
	double sync_s;     /* cl: clFinish on an idle queue; cpu: NAN */
	double h2d_lat_s;  /* cl: a 4-byte blocking write; cpu: NAN */
	double h2d_bw;     /* cl: bytes/s of a large blocking write; cpu: NAN */
	double d2h_lat_s;  /* cl: a 4-byte blocking read; cpu: NAN */
	double d2h_bw;     /* cl: bytes/s of a large blocking read; cpu: NAN */
	double flops;      /* FP32 FLOP/s of an FMA-bound kernel, whole device (all threads) */
	double mem_bw;     /* bytes/s (read + written) of a streaming kernel, whole device */
	double handoff_s;  /* cpu: thread hand-off, one part to one worker and back; cl: NAN */
	int units;         /* cpu: threads in the pool; cl: CL_DEVICE_MAX_COMPUTE_UNITS */
	double wall_s;     /* how long the probe took */
	double step_s;     /* one serial step of a recurrence, the latency no FLOP rate hides
	                    * (docs/explain.md): cl, a work-group of 64 looping over steps, a
	                    * barrier and a 16-term dot product from global memory each;
	                    * cpu, one small GEMM call (1 x 32 -> 64) and its gate pass */
	double lane_mac_s; /* cl: one multiply-add of one work-item's dependent chain (a
	                    * work-item alone, looping over steps); cpu: NAN */
};
/* Measures be (cpu or cl; XO_EINVAL "no probe for backend ref" otherwise) in
 * about budget_s seconds of wall time. */
enum xo_status xo_backend_probe(struct xo_backend *be, double budget_s, struct xo_probe *out);
/* The work-items one sample's recurrent step (op simple_rnn, lstm or gru at
 * p's batch and units) is spread over on be: cl's tiled kernels spread it
 * over wg / nb work-items, its general kernel over 1; 0 where the backend
 * does not say (the cpu splits a step's GEMM over the batch). */
double xo_backend_rnn_lanes(struct xo_backend *be, enum xo_op op, const struct xo_params *p);

/* Monotonic clock in seconds; qsort's comparison of doubles; the median of
 * v[0..n) (sorts v; the mean of the middle two for even n; NAN for n 0). */
double xo_now_s(void);
int xo_cmp_double(const void *a, const void *b);
double xo_median(double *v, size_t n);

/* Creates a tensor of ndim dims (row-major, last fastest) on be. */
enum xo_status xo_tensor_create(struct xo_backend *be, enum xo_dtype dtype, int ndim,
				const int64_t *dims, struct xo_tensor **out);
/* A view of count = prod(dims) elements starting offset elements into parent's
 * storage; freed with xo_tensor_free, must not outlive parent. */
enum xo_status xo_tensor_view(struct xo_tensor *parent, int64_t offset, int ndim,
			      const int64_t *dims, struct xo_tensor **out);
void xo_tensor_free(struct xo_tensor *t); /* accepts NULL */
/* Copies count elements between host memory and the tensor at element offset. */
enum xo_status xo_tensor_write(struct xo_tensor *t, const void *src, int64_t offset,
			       int64_t count);
enum xo_status xo_tensor_read(const struct xo_tensor *t, void *dst, int64_t offset,
			      int64_t count);
int xo_tensor_ndim(const struct xo_tensor *t);
int64_t xo_tensor_dim(const struct xo_tensor *t, int i);
int64_t xo_tensor_nelem(const struct xo_tensor *t);
enum xo_dtype xo_tensor_dtype(const struct xo_tensor *t);
struct xo_backend *xo_tensor_backend(const struct xo_tensor *t);

/*
 * One op call. Slots are documented in include/xo/ops.def. mag[] is read by
 * the ref backend only: when mag[i] is a host F32 tensor shaped like dst[i],
 * ref stores there the magnitude sum |a_k * b_k| of each accumulated output
 * (DESIGN section 5); other backends ignore it.
 */
struct xo_op_args {
	struct xo_params p;
	const struct xo_tensor *src[XO_MAX_SRC];
	struct xo_tensor *dst[XO_MAX_DST];
	struct xo_tensor *mag[XO_MAX_DST];
};

/* Checks shapes, dtypes, parameters and ownership of a call (no backend needed
 * for the shape part: be may be NULL). */
enum xo_status xo_op_validate(const struct xo_backend *be, enum xo_op op, enum xo_dir dir,
			      const struct xo_op_args *a);
/* Validates, then runs op on be. May return before the device finishes
 * (xo_tensor_read and xo_backend_sync wait). */
enum xo_status xo_op_run(struct xo_backend *be, enum xo_op op, enum xo_dir dir,
			 const struct xo_op_args *a);
/* The shapes of each slot a call needs, derived from p (what xo_op_validate
 * checks against). ndim 0 = slot unused. */
struct xo_slot_shape {
	int ndim;
	int64_t dim[XO_MAX_DIMS];
	enum xo_dtype dtype;
	bool optional; /* may be NULL */
};
enum xo_status xo_op_shapes(enum xo_op op, enum xo_dir dir, const struct xo_params *p,
			    struct xo_slot_shape src[XO_MAX_SRC],
			    struct xo_slot_shape dst[XO_MAX_DST]);

/* ---- counter-based random numbers (Philox4x32-10) ----------------------- */

/* One Philox4x32-10 block: 4 words from a 128-bit counter and 64-bit key. */
void xo_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* Uniform float in [0, 1) with 24 random bits for element i of stream
 * (seed, a, b): counter {i/4 lo, i/4 hi, a, b}, key {seed lo, seed hi}, word i%4. */
float xo_philox_uniform(uint64_t seed, uint32_t a, uint32_t b, uint64_t i);
/* The dropout keep decision for element i: keep iff uniform >= rate, with
 * stream a = low 32 bits of step, b = layer. Every backend draws this mask. */
bool xo_dropout_keep(uint64_t seed, uint64_t step, uint32_t layer, uint64_t i, float rate);

/* ---- sequential models (model/) ------------------------------------------ */

struct xo_model; /* opaque: a parsed spec, compiled onto one backend */

/* Parses a model spec file (DESIGN section 7); errors name file, line, reason.
 * The model holds the buffers of inference (predict, evaluate) for
 * max_batch samples; its first training step (fit, a bench train step)
 * lays them out for training, larger, and is refused (XO_EINVAL, the model
 * left as it was) where those exceed XO_MODEL_MEMORY_MAX. */
enum xo_status xo_model_open(const char *spec_path, struct xo_backend *be, int64_t max_batch,
			     struct xo_model **out);
void xo_model_close(struct xo_model *m); /* accepts NULL */
/* Glorot-uniform kernels, zero biases, from the Philox generator and seed. */
enum xo_status xo_model_init(struct xo_model *m, uint64_t seed);
/* Weights as a directory of <layer>.kernel.npy / <layer>.bias.npy (Keras layouts). */
enum xo_status xo_model_load_weights(struct xo_model *m, const char *dir);
/* Saving replaces dir as a whole or not at all (model/checkpoint.c, docs/
 * model.md): refused when a weight is NaN or Inf, or dir holds files that
 * are not a checkpoint's. Loading a dir with a manifest refuses a mixed or
 * partial checkpoint (XO_EFORMAT). */
enum xo_status xo_model_save_weights(struct xo_model *m, const char *dir);
/* XO_OK when dir can take a checkpoint: absent with an existing parent, or
 * a directory (symlinks followed) holding only *.npy and the manifest. */
enum xo_status xo_checkpoint_check(const char *dir);
/* XO_OK when dir has no manifest (plain NumPy weights) or every file matches
 * it; XO_EFORMAT naming the file when mixed, partial or truncated. */
enum xo_status xo_checkpoint_verify(const char *dir);
/* The values of one sample: len * w * ch; for a model of several inputs
 * their sum, a sample being each input's one after the other, in order. */
int64_t xo_model_input_size(const struct xo_model *m);
/* input_dim when the model's input is int32 ids (`input T dtype=int32`, an
 * embedding's), else 0. Its x arrays still pass as floats: the ids' values,
 * each an integer in [0, input_dim) (input_dim <= 2^24, so exact). */
int64_t xo_model_input_ids(const struct xo_model *m);
struct xo_npy;
/* Makes a (read by xo_npy_read_labels) the x of model m: an int32 input
 * takes int32 / int64 ids, each checked in [0, input_dim) and converted to
 * float values in a->data; a float input takes float32 only. Any other
 * combination, or an id out of range, is XO_EINVAL naming path. */
enum xo_status xo_model_input_npy(const struct xo_model *m, struct xo_npy *a, const char *path);
/* xo_model_input_npy for the file of model input k (of a model of several
 * inputs: the ids input takes ids, every other one float32). */
enum xo_status xo_model_input_part_npy(const struct xo_model *m, int k, struct xo_npy *a,
                                       const char *path);
int64_t xo_model_classes(const struct xo_model *m);     /* outputs of one sample */
int64_t xo_model_param_count(const struct xo_model *m);
/* The most bytes a model's activation buffers, or the data a command makes
 * or copies for it, may take: XO_MODEL_MEMORY_MAX (bytes) or half the
 * machine's physical memory; checked before allocating. */
int64_t xo_model_memory_max(void);

/* probs[n][classes] for x[n][input_size], batch_size samples per call. */
enum xo_status xo_model_predict(struct xo_model *m, const float *x, int64_t n,
				int64_t batch_size, float *probs);

/*
 * compile(loss, optimizer, metrics): the spec's `compile` line (Keras's
 * model.compile). Default: categorical_crossentropy + Adam (Keras defaults)
 * + accuracy, the seed's. Labels follow the loss: one-hot rows [classes]
 * (categorical), one class id per sample (sparse: xo_model_label_width 1),
 * values in [0, 1] (binary), any finite value (mean_squared_error).
 */
enum xo_loss {
	XO_LOSS_CATEGORICAL_CROSSENTROPY,        /* fused with a softmax last layer */
	XO_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, /* integer class ids */
	XO_LOSS_BINARY_CROSSENTROPY,
	XO_LOSS_MEAN_SQUARED_ERROR,
};
enum xo_optimizer {
	XO_OPTIMIZER_ADAM,
	XO_OPTIMIZER_SGD,     /* momentum, nesterov */
	XO_OPTIMIZER_RMSPROP, /* centered=False */
};
struct xo_compile {
	enum xo_loss loss;
	/* the cross-entropies take the last layer's output as logits (Keras's
	 * from_logits=True: log_softmax / log_sigmoid, no clip); false for MSE */
	bool from_logits;
	enum xo_optimizer optimizer;
	bool accuracy;        /* metrics=accuracy (Keras picks its kind: xo_compile_metric_op) */
	struct xo_params opt; /* lr, beta_1, beta_2, epsilon, momentum, nesterov, rho */
};
/* The seed's compile: categorical_crossentropy, Adam(Keras defaults), accuracy. */
struct xo_compile xo_compile_default(void);
/* Keras's default hyperparameters of an optimizer (and its defaults only). */
void xo_compile_set_optimizer(struct xo_compile *c, enum xo_optimizer o);
const char *xo_loss_name(enum xo_loss l);
const char *xo_optimizer_name(enum xo_optimizer o);
/* The "accuracy" metric Keras 3 chooses (trainers/compile_utils.py
 * get_metric): binary_accuracy when the output has 1 unit, sparse when the
 * labels are class ids, else categorical (the accuracy op); XO_OP_COUNT when
 * metrics=none. */
enum xo_op xo_compile_metric_op(const struct xo_compile *c, int64_t classes);
/* The compile line, "compile loss=... [from_logits=True] optimizer=... <its
 * keys> metrics=...",
 * every key of the optimizer written (floats as %.9g: they read back exactly). */
int xo_compile_format(const struct xo_compile *c, char *buf, size_t size);
const struct xo_compile *xo_model_compile(const struct xo_model *m);
/* Label values per sample fit/evaluate take: 1 for sparse ids, else classes. */
int64_t xo_model_label_width(const struct xo_model *m);
/* Checks labels y[n][xo_model_label_width] against the model's loss: one-hot
 * rows (categorical), whole numbers in 0..classes-1 (sparse), values in
 * [0, 1] (binary), finite values (MSE); XO_EINVAL naming what, the sample,
 * the index and the value. */
enum xo_status xo_model_check_labels(const struct xo_model *m, const float *y, int64_t n,
				     const char *what);

struct xo_fit_options {
	int epochs;              /* default 10 */
	int64_t batch_size;      /* default 32 (Keras); the seed uses 512 */
	float validation_split;  /* last fraction, taken before shuffling */
	bool shuffle;            /* reshuffle the training part every epoch */
	uint64_t seed;           /* shuffling and dropout */
	const char *checkpoint_dir; /* best val_accuracy weights, or NULL */
	bool verbose;            /* print Keras-like epoch lines */
};
struct xo_epoch_log {
	int epoch;               /* from 1 */
	double loss, accuracy;   /* training, averaged over the epoch's batches */
	double val_loss, val_accuracy; /* NaN without validation data */
	double epoch_ms;         /* wall time of the epoch, validation included */
	double ms_per_step;      /* training wall time per step */
	bool checkpointed;       /* best val_accuracy so far: weights saved */
	int epochs;              /* of the fit call (for "Epoch 3/10") */
	int64_t steps;           /* training steps per epoch */
	bool has_val;            /* validation data present */
	bool no_metric;          /* metrics=none: accuracy fields unused, not printed */
};
/* Formats Keras's two epoch lines ("Epoch 1/10\n25/25 - 0s 3ms/step - loss:
 * ... - val_accuracy: ...\n") into buf; returns what snprintf returns. */
int xo_epoch_log_format(const struct xo_epoch_log *log, char *buf, size_t size);
struct xo_fit_options xo_fit_options_default(void);
/* Trains on x[n][input_size], one-hot y[n][classes]. on_epoch (may be NULL)
 * is called after each epoch. */
enum xo_status xo_model_fit(struct xo_model *m, const float *x, const float *y, int64_t n,
			    const struct xo_fit_options *o,
			    void (*on_epoch)(void *user, const struct xo_epoch_log *log),
			    void *user);
/* Bad data is refused before anything runs (XO_EINVAL, the sample named):
 * predict, evaluate and fit take only finite inputs; evaluate and fit only
 * one-hot label rows (exactly one 1.0, the rest 0.0); fit stops with
 * XO_EINVAL when a step's loss is NaN or Inf (Keras's TerminateOnNaN, checked
 * once per epoch), before that epoch's checkpoint. what prefixes messages;
 * need, the one-hot check's reason in its message (NULL: categorical
 * cross-entropy's). */
enum xo_status xo_data_check_finite(const float *v, int64_t n, int64_t per, const char *what);
enum xo_status xo_labels_check_one_hot(const float *y, int64_t n, int64_t classes,
                                       const char *what, const char *need);
/* Mean loss and accuracy over x, y (no dropout). */
enum xo_status xo_model_evaluate(struct xo_model *m, const float *x, const float *y, int64_t n,
				 int64_t batch_size, double *loss, double *accuracy);

/* Benchmark hooks for the perf runner: a random batch made resident on the
 * device once, then one training step (forward, backward, Adam; nothing read
 * back) or one forward pass, each waiting for the device at its end. */
/* n samples of synthetic input (the bench's and explain's): uniform floats in
 * [0, 1), or for an int32 input (an embedding's) ids uniform in [0, input_dim). */
void xo_model_synthetic_x(const struct xo_model *m, uint64_t seed, int64_t n, float *x);
enum xo_status xo_model_bench_prepare(struct xo_model *m, int64_t batch, uint64_t seed);
enum xo_status xo_model_bench_train_step(struct xo_model *m);
enum xo_status xo_model_bench_predict(struct xo_model *m);

/* The seed model's spec (models/seed.model, DESIGN section 1), built in so
 * `xo seed` runs from anywhere. */
extern const char xo_model_seed_spec[];
/* Like xo_model_open, from spec text; origin names it in error messages. */
enum xo_status xo_model_open_string(const char *spec, const char *origin,
				    struct xo_backend *be, int64_t max_batch,
				    struct xo_model **out);
/* The activation memory of one sample, in bytes (docs/model.md, "The
 * runtime"): as planned (buffers whose lifetimes do not overlap share
 * storage) and unshared (a buffer per tensor), for inference only
 * (predict, evaluate; what a model holds from open) and for training (what
 * it holds from its first training step on), with the storage slots each
 * plan makes. The batch's input and label rows are not in them. */
struct xo_model_memory {
	int64_t infer_bytes, infer_unshared, train_bytes, train_unshared;
	int infer_slots, train_slots;
};
void xo_model_memory_get(const struct xo_model *m, struct xo_model_memory *out);
/* Layers after the input line; name and parameter count of layer i. */
int xo_model_layer_count(const struct xo_model *m);
const char *xo_model_layer_name(const struct xo_model *m, int i);
/*
 * What one layer costs per sample (the cost model's input, perfdb/cost.c).
 * Conventions: a multiply-add counts 2 FLOPs (conv1d and dense only: bias,
 * activations, pooling compares and dropout are elementwise, counted in
 * bytes, not FLOPs); bytes are float32 tensor elements x 4 that the op reads
 * or writes in global memory when run op by op. Activation traffic scales
 * with the batch (per sample); weight traffic is per call. Backward counts
 * only what the training step runs: no input gradient for the first layer
 * with parameters and the layers before it.
 */
struct xo_layer_cost {
	double flops_fwd, flops_bwd;         /* per sample */
	double act_bytes_fwd, act_bytes_bwd; /* per sample: activations and their gradients */
	double w_bytes_fwd, w_bytes_bwd;     /* per call: weights read, gradients written */
	int64_t params;                      /* kernel + bias elements */
	int ops_train_fwd, ops_bwd;          /* op calls per training step, op-by-op path */
	int ops_predict;                     /* op calls per predict call (dropout: none) */
	/* recurrent layers (else 0 / NULL): the time steps run in series, each
	 * waiting for the last, and what one step of one sample costs */
	const char *recurrent;               /* "LSTM", "GRU", "SimpleRNN"; NULL otherwise */
	enum xo_op rnn_op;                   /* recurrent: its op (xo_backend_rnn_lanes) */
	int64_t units;                       /* recurrent: units (for "LSTM(64)") */
	int64_t steps;                       /* recurrent: time steps T per pass */
	double step_macs_fwd, step_macs_bwd; /* recurrent: multiply-adds of one step of one
	                                      * sample, forward and back through time */
	double ws_bytes;                     /* per sample: what the training form's forward
	                                      * also writes (a recurrent layer's workspace,
	                                      * which the backward reads: in act_bytes_bwd);
	                                      * predict runs the inference form, without it */
	/* multi_head_attention (else heads 0): the attention op's shapes, so
	 * the cost model can split the layer into its GEMM-shaped, memory-bound
	 * and serial parts (perfdb/cost.h, xo_cost_attention) */
	int64_t heads, len_q, len_kv, key_dim, value_dim;
};
/* The cost of layer i (0 <= i < xo_model_layer_count). */
void xo_model_layer_cost(const struct xo_model *m, int i, struct xo_layer_cost *out);
/*
 * The GEMM of layer i as the op-by-op path runs it (`xo bench --model F
 * --layers`): false unless the layer is conv1d, conv2d, dense (or a
 * TimeDistributed of one), depthwise_conv1d/2d, a transposed convolution or
 * recurrent (simple_rnn, lstm, gru). op and its parameters at batch for the forward
 * call (activation linear when the layer's activation runs as its own op)
 * and for the backward call (also linear for a softmax last layer under
 * categorical cross-entropy, whose gradient arrives w.r.t. the logits); per
 * sample the GEMM is rows x k x n: rows = output positions, k = kernel terms
 * per output, n = filters/units; a transposed convolution (conv1d_transpose,
 * conv2d_transpose): rows = input positions, k = in_ch, n = kernel taps x
 * filters. A recurrent layer: rows = time steps,
 * k = ch + units (x_t W + h' U as one product), n = gates x units, the
 * step 0 recurrent terms (h' = 0) counted though a kernel may skip them.
 * The backward calls' terms per output: k_dw for the call without dx (a
 * GEMM layer's dW: k; recurrent: dkernel, drecurrent_kernel and the dh'
 * = dz U^T carried back through time, ch + 2 units), k_dx what dx adds
 * (k; recurrent: dx_t = dz W^T, ch).
 */
struct xo_layer_gemm {
	enum xo_op op;
	struct xo_params fwd, bwd; /* batch set */
	bool has_grad;             /* training runs its backward */
	bool need_dx;              /* ... and the backward computes dx */
	int64_t rows, k, n;
	int64_t k_dw, k_dx;        /* per output of the backward's products (above) */
};
bool xo_model_layer_gemm(const struct xo_model *m, int i, int64_t batch, struct xo_layer_gemm *out);
/*
 * Every GEMM-shaped op call of layer i (`xo bench --layers`): the one of
 * xo_model_layer_gemm (part[0] NULL), or a layer's two: a Bidirectional's
 * directions (parts "forward" and "backward", each its recurrent op's GEMM
 * as above, the backward one with go_backwards flipped), a separable
 * convolution's depthwise step (rows = output positions, k = kh x kw taps,
 * n = in_ch x depth_multiplier) and pointwise 1x1 conv2d (k = in_ch x
 * depth_multiplier, n = filters). Returns the count, 0 for a layer without
 * one (attention: xo_model_layer_attention).
 */
#define XO_LAYER_GEMMS_MAX 2
int xo_model_layer_gemms(const struct xo_model *m, int i, int64_t batch,
                         struct xo_layer_gemm out[XO_LAYER_GEMMS_MAX],
                         const char *part[XO_LAYER_GEMMS_MAX]);
/*
 * A multi_head_attention layer's calls as the op-by-op path runs them
 * (`xo bench --layers`): false for any other layer. proj[0..3] are its
 * query, key, value and output projections as dense GEMMs (rows = Tq for
 * the query and output, Tk for the key and value; k = in features, n =
 * heads x width, or d_out for the output), need_dx true where the layer's
 * backward computes the projection's input gradient; att_fwd and att_bwd
 * the attention op's parameters at batch, whose per-(sample, head) GEMMs
 * are Tq x dk x Tk (scores) and Tq x Tk x dv (weighted sum).
 */
struct xo_layer_attention {
	struct xo_layer_gemm proj[4];
	struct xo_params att_fwd, att_bwd; /* batch set */
	int64_t heads, len_q, len_kv, key_dim, value_dim;
};
bool xo_model_layer_attention(const struct xo_model *m, int i, int64_t batch,
                              struct xo_layer_attention *out);
/* Op calls per step beyond the layers' (op-by-op path): training has loss,
 * accuracy, loss gradient and Adam (4); predict none. */
#define XO_MODEL_TRAIN_EXTRA_OPS 4
/* Device kernel time (ns, forward + backward) and launches of each layer in
 * one training step at the bench batch (after xo_model_bench_prepare), each
 * op synced and read on its own; zeros on host backends. layer_ns and
 * layer_launches hold xo_model_layer_count entries; the loss, accuracy and
 * Adam ops go to *extra_ns. */
enum xo_status xo_model_bench_profile_step(struct xo_model *m, uint64_t *layer_ns,
					   uint64_t *layer_launches, uint64_t *extra_ns);
/* The backend's fused whole-network path (one or a few launches per step on
 * cl, sample tiles through cache on cpu; struct xo_net in xo/backend.h) runs
 * predict, evaluate, fit and the bench steps wherever the backend supports
 * the net; it is on by default, off with XO_FUSE=0 in the environment or
 * here (the op-by-op path is what the per-layer profile measures).
 * xo_model_fused says whether it runs this model in training (or inference)
 * mode on its backend now. */
void xo_model_set_fused(struct xo_model *m, bool on);
bool xo_model_fused(struct xo_model *m, bool training);

/* Philox stream ids of the model runtime (counter word 2, "a" of
 * xo_philox_uniform). Dropout uses a = global training step (from 1) and
 * b = layer index, so these sit at the top of the 32-bit range, beyond any
 * step count a run reaches. */
#define XO_STREAM_INIT 0xfffffff0u       /* b = layer index: Glorot-uniform kernels */
#define XO_STREAM_SHUFFLE 0xfffffff1u    /* b = epoch (from 1): fit's Fisher-Yates */
#define XO_STREAM_SEED_DATA 0xfffffff2u  /* b = 0: x, b = 1: labels (xo seed) */
#define XO_STREAM_SEED_SPLIT 0xfffffff3u /* b = 0: the 80/20 split (xo seed) */
#define XO_STREAM_BENCH 0xfffffff4u      /* b = 0: x, b = 1: labels of the bench batch */
/* One 32-bit Philox word for element i of stream (seed, a, b). */
uint32_t xo_philox_u32(uint64_t seed, uint32_t a, uint32_t b, uint64_t i);
/* idx = a Fisher-Yates permutation of 0..n-1 drawn from stream (seed, a, b):
 * for i = n-1 down to 1, j = floor(u32(i) * (i + 1) / 2^32), swap i and j. */
void xo_philox_shuffle(int32_t *idx, int64_t n, uint64_t seed, uint32_t a, uint32_t b);

/* ---- .npy files (model/npy.c) -------------------------------------------- */

/* A float32 array read from a .npy file (little-endian '<f4', C order; an
 * input or label file's '<f8', '>f4', '>f8' converted to float32). */
struct xo_npy {
	int ndim;                  /* 0..XO_MAX_DIMS */
	int64_t dim[XO_MAX_DIMS];  /* shape */
	int64_t count;             /* product of dim */
	float *data;               /* count values, malloc'd; xo_npy_free */
	int64_t *ints;             /* instead of data for integers (xo_npy_read_labels) */
	int itemsize;              /* bytes per value in the file */
	const char *dtype;         /* the file's as NumPy names it: "float32", "uint8", "bool" */
	bool is_int;               /* the file holds integers (ints, not data) */
	bool is_bool;              /* ... NumPy bools '|b1' as 0 and 1 (xo_npy_read_inputs) */
};
/* Reads a NumPy format 1.0/2.0/3.0 file; XO_EFORMAT with the reason when it
 * is not little-endian float32 in C order, truncated, or malformed. */
enum xo_status xo_npy_read(const char *path, struct xo_npy *out);
/* Like xo_npy_read, and also the integer arrays NumPy writes, signed and
 * unsigned of 8 to 64 bits in either byte order, and bool '|b1' (class ids
 * and labels, as Keras users have them: MNIST's are uint8), read into ints
 * as int64 (data NULL, is_int true; bool 0 or 1 and is_bool; peak memory
 * the int64 array and an 8 KiB buffer; XO_EFORMAT naming the first index
 * of a uint64 beyond int64's range), and
 * float64 '<f8' and big-endian '>f4' / '>f8' arrays (NumPy's default dtype),
 * converted to float32 while read (round to nearest, as Keras's cast; peak
 * memory the float32 array and an 8 KiB buffer; XO_EFORMAT naming the first
 * index of a finite float64 beyond float32's range). */
enum xo_status xo_npy_read_labels(const char *path, struct xo_npy *out);
/* As xo_npy_read_labels: a model input's file, whose bool values only an
 * attention mask input takes, integers an embedding's ids or an attention
 * mask (cli/util.c). */
enum xo_status xo_npy_read_inputs(const char *path, struct xo_npy *out);
void xo_npy_free(struct xo_npy *a); /* accepts NULL */
/* a's shape as NumPy prints it, "(3, 29)" (a per-thread buffer, valid until
 * the next call). */
const char *xo_npy_shape_str(const struct xo_npy *a);
/* Reads a file that must have exactly this shape into data. */
enum xo_status xo_npy_read_shaped(const char *path, int ndim, const int64_t *dims,
				  float *data);
/* Writes format 1.0 (via a temporary file renamed into place). */
enum xo_status xo_npy_write(const char *path, int ndim, const int64_t *dims,
			    const float *data);

/* ---- output files (model/output.c) --------------------------------------- */

/* A file being replaced. path is followed through symlinks to its final
 * target, which is replaced (a link stays a link); a target that exists and
 * is not a regular file (directory, device node, FIFO, socket) is refused
 * with XO_EINVAL before anything is created. The data goes to an unnamed
 * file in the target's directory and is renamed over the target on commit
 * (after fsync): readers see the old file or the whole new one, and a kill
 * before the commit leaves nothing behind. Messages name path as given. */
struct xo_output {
	char path[4096];   /* as the caller gave it: every message names it */
	char target[4096]; /* the final target, symlinks followed */
	char tmp[4096];    /* hidden temporary name, "" while unnamed */
	int fd;            /* the data, -1 once closed */
	bool keep_mode;    /* the target exists: its mode is kept */
	unsigned mode;     /* that mode */
};
enum xo_status xo_output_open(struct xo_output *o, const char *path);
enum xo_status xo_output_write(struct xo_output *o, const void *buf, size_t n);
/* Renames the data over the target; on failure the target is untouched. */
enum xo_status xo_output_commit(struct xo_output *o);
void xo_output_abort(struct xo_output *o); /* drops the data; accepts a committed one */
/* open, write n bytes, commit. */
enum xo_status xo_output_file(const char *path, const void *buf, size_t n);
/* path's final target (symlinks followed) into target; want_dir: it must be
 * a directory when it exists, else a regular file (XO_EINVAL otherwise).
 * *exists says whether it exists. */
enum xo_status xo_output_target(const char *path, bool want_dir, char *target, size_t size,
                                bool *exists);
/* The mode mkdir(path, 0777) would give under this process's umask: for a
 * directory made by mkdtemp (always 0700) that stands in for one. */
unsigned xo_output_dir_mode(void);
/* "a directory", "a FIFO", ... for a st_mode. */
const char *xo_file_kind(unsigned mode);
/* fsync(fd) for durability against a crash of the machine; the environment
 * XO_FSYNC=0 skips it (for throwaway output: the test suites, whose
 * thousands of syncs dominate their time when the disk is busy). The
 * rename protocol above is unchanged either way, so a killed process still
 * leaves the old file or the whole new one. Returns fsync's result, 0 when
 * skipped. */
int xo_output_sync(int fd);
/* Opens path, a file from outside (a model, a spec, a .npy, a weights
 * file), for reading: opened without blocking (a FIFO never waits for a
 * writer), then refused with one line naming it (XO_EIO) unless a regular
 * file; what says what it should be ("a .npy file"). *sb (when given) is
 * its fstat. */
struct stat;
enum xo_status xo_input_open(const char *path, const char *what, FILE **out, struct stat *sb);

#ifdef __cplusplus
}
#endif
#endif /* XO_H */
