/*
 * ref.c - backend "ref": host memory and (to be written) the naive oracle ops.
 */
#include <stdlib.h>
#include <string.h>

#include "xo/backend.h"

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

const struct xo_backend_iface xo_ref_iface = {
	.name = "ref",
	.init = ref_init,
	.free = ref_free,
	.alloc = ref_alloc,
	.release = ref_release,
	.write = ref_write,
	.read = ref_read,
};

const struct xo_backend_iface *xo_ref_backend(void)
{
	return &xo_ref_iface;
}
