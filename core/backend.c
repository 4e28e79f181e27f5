/*
 * backend.c - the backend registry, backend open/close, tensor lifetime and
 * transfers, and op dispatch. Every call is validated here before it reaches a
 * backend's table.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "xo/backend.h"

static const struct xo_backend_iface *(*const registry_get[])(void) = {
	xo_ref_backend,
#ifdef XO_HAVE_CPU
	xo_cpu_backend,
#endif
#ifdef XO_HAVE_CL
	xo_cl_backend,
#endif
};
#define registry_at(i) (registry_get[i]())
#define NREGISTRY ((int)(sizeof(registry_get) / sizeof(registry_get[0])))

int xo_backend_count(void)
{
	return NREGISTRY;
}

const char *xo_backend_kind(int i)
{
	XO_ASSERT(i >= 0 && i < NREGISTRY);
	return registry_at(i)->name;
}

enum xo_status xo_backend_open(const char *spec, struct xo_backend **out)
{
	const struct xo_backend_iface *iface = NULL;
	struct xo_backend *be;
	const char *colon, *rest;
	size_t namelen;
	enum xo_status st;

	if (!spec || !out)
		return xo_error(XO_EINVAL, "xo_backend_open: NULL argument");
	*out = NULL;
	colon = strchr(spec, ':');
	namelen = colon ? (size_t)(colon - spec) : strlen(spec);
	rest = colon ? colon + 1 : "";
	for (int i = 0; i < NREGISTRY; i++)
		if (strlen(registry_at(i)->name) == namelen &&
		    !strncmp(registry_at(i)->name, spec, namelen))
			iface = registry_at(i);
	if (!iface) {
		char known[128] = "";

		for (int i = 0; i < NREGISTRY; i++) {
			strncat(known, i ? ", " : "", sizeof(known) - strlen(known) - 1);
			strncat(known, registry_at(i)->name, sizeof(known) - strlen(known) - 1);
		}
		return xo_error(XO_ENODEV, "unknown device '%s' (this build has: %s)", spec,
				known);
	}
	be = calloc(1, sizeof(*be));
	if (!be)
		return xo_error(XO_ENOMEM, "xo_backend_open: out of memory");
	be->iface = iface;
	st = iface->init(be, rest);
	if (st) {
		free(be);
		return st;
	}
	*out = be;
	return XO_OK;
}

void xo_backend_close(struct xo_backend *be)
{
	if (!be)
		return;
	be->iface->free(be);
	free(be);
}

const char *xo_backend_name(const struct xo_backend *be)
{
	return be->iface->name;
}

const char *xo_backend_describe(const struct xo_backend *be)
{
	return be->desc[0] ? be->desc : be->iface->name;
}

enum xo_status xo_backend_sync(struct xo_backend *be)
{
	return be->iface->sync ? be->iface->sync(be) : XO_OK;
}

void xo_backend_stats_get(struct xo_backend *be, struct xo_backend_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (be->iface->stats_get)
		be->iface->stats_get(be, out);
}

void xo_backend_stats_reset(struct xo_backend *be)
{
	if (be->iface->stats_reset)
		be->iface->stats_reset(be);
}

bool xo_opencl_required(void)
{
	const char *req = getenv("XO_REQUIRE_OPENCL");

	return req && (!strcmp(req, "1") || !strcmp(req, "gpu"));
}

enum xo_status xo_backend_probe(struct xo_backend *be, double budget_s, struct xo_probe *out)
{
	if (!be || !out || !(budget_s > 0))
		return xo_error(XO_EINVAL, "xo_backend_probe: bad argument");
	if (!be->iface->probe)
		return xo_error(XO_EINVAL, "no probe for backend %s", be->iface->name);
	return be->iface->probe(be, budget_s, out);
}

double xo_backend_rnn_lanes(struct xo_backend *be, enum xo_op op, const struct xo_params *p)
{
	if (!be || !p || !be->iface->rnn_lanes)
		return 0;
	return be->iface->rnn_lanes(be, op, p);
}

/* ---- tensors ----------------------------------------------------------- */

static enum xo_status dims_elems(int ndim, const int64_t *dims, int64_t *out)
{
	int64_t n = 1;

	if (ndim < 1 || ndim > XO_MAX_DIMS)
		return xo_error(XO_EINVAL, "tensor: ndim=%d must be in 1..%d", ndim, XO_MAX_DIMS);
	if (!dims)
		return xo_error(XO_EINVAL, "tensor: NULL dims");
	for (int i = 0; i < ndim; i++) {
		if (dims[i] < 1)
			return xo_error(XO_EINVAL, "tensor: dim[%d]=%" PRId64 " must be >= 1", i,
					dims[i]);
		if (!xo_mul_ok(n, dims[i], &n) || n > INT64_MAX / 8)
			return xo_error(XO_EOVERFLOW, "tensor: size overflows");
	}
	*out = n;
	return XO_OK;
}

static void set_dims(struct xo_tensor *t, int ndim, const int64_t *dims, int64_t n)
{
	t->ndim = ndim;
	for (int i = 0; i < XO_MAX_DIMS; i++)
		t->dim[i] = i < ndim ? dims[i] : 1;
	t->nelem = n;
}

enum xo_status xo_tensor_create(struct xo_backend *be, enum xo_dtype dtype, int ndim,
				const int64_t *dims, struct xo_tensor **out)
{
	struct xo_tensor *t;
	enum xo_status st;
	int64_t n;

	if (!be || !out)
		return xo_error(XO_EINVAL, "xo_tensor_create: NULL argument");
	*out = NULL;
	if (dtype != XO_DTYPE_F32 && dtype != XO_DTYPE_I32)
		return xo_error(XO_EINVAL, "tensor: unknown dtype");
	st = dims_elems(ndim, dims, &n);
	if (st)
		return st;
	if ((uint64_t)n > SIZE_MAX / 4)
		return xo_error(XO_EOVERFLOW, "tensor: byte size overflows");
	t = calloc(1, sizeof(*t));
	if (!t)
		return xo_error(XO_ENOMEM, "tensor: out of memory");
	t->be = be;
	t->dtype = dtype;
	set_dims(t, ndim, dims, n);
	t->capacity = n;
	st = be->iface->alloc(be, t);
	if (st) {
		free(t);
		return st;
	}
	*out = t;
	return XO_OK;
}

enum xo_status xo_tensor_view(struct xo_tensor *parent, int64_t offset, int ndim,
			      const int64_t *dims, struct xo_tensor **out)
{
	struct xo_tensor *t, *root;
	enum xo_status st;
	int64_t n, end;

	if (!parent || !out)
		return xo_error(XO_EINVAL, "xo_tensor_view: NULL argument");
	*out = NULL;
	st = dims_elems(ndim, dims, &n);
	if (st)
		return st;
	if (offset < 0 || !xo_add_ok(offset, n, &end) || end > parent->nelem)
		return xo_error(XO_EINVAL,
				"tensor view: [%" PRId64 ", +%" PRId64 ") is outside its parent of %" PRId64
				" elements",
				offset, n, parent->nelem);
	root = parent->parent ? parent->parent : parent;
	t = calloc(1, sizeof(*t));
	if (!t)
		return xo_error(XO_ENOMEM, "tensor: out of memory");
	*t = *parent;
	set_dims(t, ndim, dims, n);
	t->offset = parent->offset + offset;
	t->parent = root;
	*out = t;
	return XO_OK;
}

void xo_tensor_free(struct xo_tensor *t)
{
	if (!t)
		return;
	if (!t->parent)
		t->be->iface->release(t->be, t);
	free(t);
}

static enum xo_status check_range(const struct xo_tensor *t, const void *buf, int64_t offset,
				  int64_t count, const char *what)
{
	int64_t end;

	if (!t || !buf)
		return xo_error(XO_EINVAL, "%s: NULL argument", what);
	if (offset < 0 || count < 0 || !xo_add_ok(offset, count, &end) || end > t->nelem)
		return xo_error(XO_EINVAL,
				"%s: elements [%" PRId64 ", +%" PRId64 ") outside a tensor of %" PRId64,
				what, offset, count, t->nelem);
	return XO_OK;
}

enum xo_status xo_tensor_write(struct xo_tensor *t, const void *src, int64_t offset, int64_t count)
{
	enum xo_status st = check_range(t, src, offset, count, "xo_tensor_write");

	if (st || !count)
		return st;
	return t->be->iface->write(t->be, t, src, t->offset + offset, count);
}

enum xo_status xo_tensor_read(const struct xo_tensor *t, void *dst, int64_t offset, int64_t count)
{
	enum xo_status st = check_range(t, dst, offset, count, "xo_tensor_read");

	if (st || !count)
		return st;
	return t->be->iface->read(t->be, t, dst, t->offset + offset, count);
}

int xo_tensor_ndim(const struct xo_tensor *t)
{
	return t->ndim;
}

int64_t xo_tensor_dim(const struct xo_tensor *t, int i)
{
	XO_ASSERT(i >= 0 && i < t->ndim);
	return t->dim[i];
}

int64_t xo_tensor_nelem(const struct xo_tensor *t)
{
	return t->nelem;
}

enum xo_dtype xo_tensor_dtype(const struct xo_tensor *t)
{
	return t->dtype;
}

struct xo_backend *xo_tensor_backend(const struct xo_tensor *t)
{
	return t->be;
}

/* ---- dispatch ------------------------------------------------------------ */

enum xo_status xo_op_run(struct xo_backend *be, enum xo_op op, enum xo_dir dir,
			 const struct xo_op_args *a)
{
	enum xo_status st;
	xo_op_fn fn;

	if (!be)
		return xo_error(XO_EINVAL, "xo_op_run: NULL backend");
	st = xo_op_validate(be, op, dir, a);
	if (st)
		return st;
	fn = dir == XO_DIR_FWD ? be->iface->fwd[op] : be->iface->bwd[op];
	if (!fn)
		return xo_error(XO_EBACKEND, "backend '%s' has no %s %s", be->iface->name,
				xo_op_name(op), xo_dir_name(dir));
	return fn(be, a);
}
