/*
 * test_cpu_idle.c - an open cpu backend that runs nothing burns no CPU: the
 * process's CPU time over 200 ms of sleep right after xo_backend_open("cpu")
 * stays below IDLE_CPU_MS.
 *
 * What it catches: a thread that keeps spinning while the process waits.
 * OpenBLAS's pthread build starts its server threads when the library loads
 * and leaves them spinning on sched_yield for ~0.1 s (kernels/cpu.c stops
 * them: they took the second core from the backend's own worker for the
 * whole of a 0.1 s `xo predict`); a pool worker whose spin had no end, or
 * one longer than XO_CPU_SPIN_NS (kernels/threads.c, 2 ms), would too.
 * Bound: the worker's 2 ms spin after start plus the backend's open (ISA
 * detection, no probe) and the scheduler's accounting granularity (one tick,
 * 4 ms at HZ 250): 20 ms, against ~100 ms of CPU a spinning OpenBLAS thread
 * takes on a machine with a second core. On a loaded machine the spinner gets
 * less of a core, so the check can pass without the fix there; it cannot fail
 * with it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <cmocka.h>

#include "xo.h"
#include "xo/backend.h"

#define IDLE_CPU_MS 20.0

static double cpu_ms(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-3;
}

static void test_idle_backend_burns_no_cpu(void **state)
{
	struct xo_backend *be;
	struct timespec nap = {0, 200 * 1000 * 1000};
	double c0, used;

	(void)state;
	assert_int_equal(setenv("XO_THREADS", "2", 1), 0);
	assert_int_equal(xo_backend_open("cpu", &be), XO_OK);
	c0 = cpu_ms();
	while (nanosleep(&nap, &nap))
		;
	used = cpu_ms() - c0;
	xo_backend_close(be);
	if (used >= IDLE_CPU_MS)
		fail_msg("the process used %.1f ms of CPU over 200 ms idle after opening the cpu "
			 "backend (bound %.0f ms): a thread is spinning",
			 used, IDLE_CPU_MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_idle_backend_burns_no_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
