/* cpu.c - backend "cpu" (placeholder until kernels/ is written: the reference
 * table under another name, STYLE rule 5). */
#include <pthread.h>

#include "xo/backend.h"

static struct xo_backend_iface cpu_iface;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static void cpu_make_iface(void)
{
	cpu_iface = xo_ref_iface;
	cpu_iface.name = "cpu";
}

const struct xo_backend_iface *xo_cpu_backend(void)
{
	pthread_once(&cpu_once, cpu_make_iface);
	return &cpu_iface;
}
