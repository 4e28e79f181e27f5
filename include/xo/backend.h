/*
 * xo/backend.h - what a backend implements (ggml's backend interface, BLIS's
 * context init). Users include only xo.h; backends and the core include this.
 *
 * A backend is a table of function pointers (struct xo_backend_iface) plus a
 * context (struct xo_backend::ctx). The core validates every call before it
 * reaches the table, so a kernel may assume its preconditions: shapes match
 * xo_op_shapes, tensors belong to this backend, sizes do not overflow.
 */
#ifndef XO_BACKEND_H
#define XO_BACKEND_H

#include "xo.h"

/* Storage or view. Host backends keep a float/int pointer in data; cl keeps a
 * cl_mem. Elements of a view start offset elements into data. */
struct xo_tensor {
	struct xo_backend *be;     /* owner */
	enum xo_dtype dtype;       /* F32 or I32, 4 bytes either way */
	int ndim;                  /* 1..XO_MAX_DIMS */
	int64_t dim[XO_MAX_DIMS];  /* row-major, dim[ndim-1] fastest */
	int64_t nelem;             /* product of dim */
	int64_t offset;            /* elements from the start of data */
	int64_t capacity;          /* elements in data (the whole storage) */
	void *data;                /* host pointer or cl_mem of the storage */
	struct xo_tensor *parent;  /* storage owner of a view; NULL for an owner */
};

typedef enum xo_status (*xo_op_fn)(struct xo_backend *be, const struct xo_op_args *a);

struct xo_backend_iface {
	const char *name; /* "ref", "cpu", "cl" */
	/* Fills be->ctx and be->desc for spec (everything after "name:" or ""). */
	enum xo_status (*init)(struct xo_backend *be, const char *spec);
	void (*free)(struct xo_backend *be);
	/* Allocates t->capacity elements into t->data. */
	enum xo_status (*alloc)(struct xo_backend *be, struct xo_tensor *t);
	void (*release)(struct xo_backend *be, struct xo_tensor *t);
	/* Copies count elements at element offset off of t's storage (view offset
	 * already added). */
	enum xo_status (*write)(struct xo_backend *be, struct xo_tensor *t, const void *src,
				int64_t off, int64_t count);
	enum xo_status (*read)(struct xo_backend *be, const struct xo_tensor *t, void *dst,
			       int64_t off, int64_t count);
	enum xo_status (*sync)(struct xo_backend *be);
	/* Optional (NULL for host backends): profiling totals. */
	void (*stats_get)(struct xo_backend *be, struct xo_backend_stats *out);
	void (*stats_reset)(struct xo_backend *be);
	/* Ops, indexed by enum xo_op. fwd is never NULL; bwd is never NULL where
	 * xo_op_has_bwd(op). */
	xo_op_fn fwd[XO_OP_COUNT];
	xo_op_fn bwd[XO_OP_COUNT];
};

struct xo_backend {
	const struct xo_backend_iface *iface; /* the table */
	void *ctx;                            /* the backend's own state */
	char desc[512];                       /* human description, set by init */
};

/* Compiled-in backend tables. The cpu table starts as a copy of the reference
 * table and overrides entry by entry (STYLE rule 5), so it is built at run
 * time; each getter returns the same table every call. */
extern const struct xo_backend_iface xo_ref_iface;
const struct xo_backend_iface *xo_ref_backend(void);
const struct xo_backend_iface *xo_cpu_backend(void);
const struct xo_backend_iface *xo_cl_backend(void);

/* Host pointer of a host backend's tensor (ref, cpu): data + offset. */
static inline float *xo_tensor_f32(const struct xo_tensor *t)
{
	return t ? (float *)t->data + t->offset : (float *)0;
}
static inline int32_t *xo_tensor_i32(const struct xo_tensor *t)
{
	return t ? (int32_t *)t->data + t->offset : (int32_t *)0;
}

#endif /* XO_BACKEND_H */
