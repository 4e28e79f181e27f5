/* cl.c - backend "cl" (placeholder until cl/ is written). */
#include "xo/backend.h"

static enum xo_status cl_init(struct xo_backend *be, const char *spec)
{
	(void)be;
	(void)spec;
	return xo_error(XO_ENODEV, "cl: not built yet");
}

static const struct xo_backend_iface cl_iface = {.name = "cl", .init = cl_init};

const struct xo_backend_iface *xo_cl_backend(void)
{
	return &cl_iface;
}
