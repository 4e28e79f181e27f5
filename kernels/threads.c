/*
 * threads.c - the persistent thread pool of backend "cpu". Workers are
 * started once at backend init; a task of n parts is published in one atomic
 * word (generation, n, next part). Workers spin on it for a short while after
 * each task (ops come back to back during a training step, so a spinning
 * worker picks the next one up in well under a microsecond), then sleep on a
 * condition variable so an idle backend costs no CPU. The caller claims parts
 * too, so a worker that is descheduled on a loaded machine costs nothing but
 * its part. No allocation and no system call on the hot path: the mutex is
 * taken only when a worker actually sleeps.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu.h"

/* How long a worker spins for the next task after its last one before it
 * sleeps, in time (a pause lasts from a few to ~140 cycles by CPU model, so a
 * count of them is no duration): longer than one single-threaded call of a
 * recurrent layer at batch 32 (~1.2 ms), so a worker that arrived
 * late at one call, found every chunk claimed and went back to spinning is
 * still awake for the next instead of sleeping through it and waking late
 * again (docs/cpu.md, "Why 2 threads gave 1.3x at batch 32"). The clock is
 * read every XO_CPU_SPIN_CHECK pauses; the core is yielded every
 * XO_CPU_SPIN_YIELD. The caller's own wait below is bounded by its task, so
 * it keeps a count (XO_CPU_SPIN). */
#define XO_CPU_SPIN_NS 2000000
#define XO_CPU_SPIN_CHECK 64
#define XO_CPU_SPIN 20000
#define XO_CPU_SPIN_YIELD 1024

struct xo_cpu_pool_threads {
	int nthreads;              /* including the caller */
	pthread_t *tid;            /* nthreads - 1 workers */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* The task word: generation (bits 32..63), parts (16..31), next part to
	 * claim (0..15). One atomic word, so a claim can never pair a part index
	 * with another task's count. */
	_Atomic uint64_t claim;
	_Atomic int sleepers;      /* workers blocked (or about to block) on cv */
	_Atomic int finished;      /* parts of the current task completed */
	_Atomic int quit;
	xo_cpu_task_fn fn;         /* current task, valid while its parts run */
	void *arg;
};

struct worker_arg {
	struct xo_cpu_pool_threads *tp;
	int id;
};

static inline void cpu_relax(void)
{
	__builtin_ia32_pause();
}

static inline uint32_t gen_of(uint64_t c)
{
	return (uint32_t)(c >> 32);
}

/* Claims and runs parts of the current task until none is left. */
static void run_parts(struct xo_cpu_pool_threads *tp)
{
	for (;;) {
		uint64_t c = atomic_fetch_add(&tp->claim, 1);
		int part = (int)(c & 0xffff), n = (int)((c >> 16) & 0xffff);

		if (part >= n)
			return;
		tp->fn(tp->arg, part, n);
		atomic_fetch_add(&tp->finished, 1);
	}
}

static void *worker_main(void *p)
{
	struct worker_arg wa = *(struct worker_arg *)p;
	struct xo_cpu_pool_threads *tp = wa.tp;
	uint32_t seen = 0;

	free(p);
	for (;;) {
		uint32_t g;
		int spins = 0;
		double until = xo_now_s() + XO_CPU_SPIN_NS * 1e-9;
		bool awake = true;

		while ((g = gen_of(atomic_load(&tp->claim))) == seen && !atomic_load(&tp->quit)) {
			if (++spins % XO_CPU_SPIN_CHECK == 0 && awake)
				awake = xo_now_s() < until;
			if (awake) {
				/* give the core away now and then: on a loaded machine
				 * the thread we would spin against may be our caller */
				if (spins % XO_CPU_SPIN_YIELD == 0)
					sched_yield();
				else
					cpu_relax();
				continue;
			}
			pthread_mutex_lock(&tp->mu);
			atomic_fetch_add(&tp->sleepers, 1);
			while (gen_of(atomic_load(&tp->claim)) == seen && !atomic_load(&tp->quit))
				pthread_cond_wait(&tp->cv, &tp->mu);
			atomic_fetch_sub(&tp->sleepers, 1);
			pthread_mutex_unlock(&tp->mu);
			spins = 0;
			awake = true;
			until = xo_now_s() + XO_CPU_SPIN_NS * 1e-9;
		}
		if (atomic_load(&tp->quit))
			return NULL;
		seen = g;
		run_parts(tp);
	}
}

enum xo_status xo_cpu_threads_init(int nthreads, struct xo_cpu_pool_threads **out)
{
	struct xo_cpu_pool_threads *tp;
	enum xo_status st = XO_OK;
	int started = 0;

	*out = NULL;
	XO_ASSERT(nthreads >= 1 && nthreads <= XO_CPU_MAX_THREADS);
	tp = calloc(1, sizeof(*tp));
	if (!tp)
		return xo_error(XO_ENOMEM, "cpu: out of memory for the thread pool");
	tp->nthreads = nthreads;
	pthread_mutex_init(&tp->mu, NULL);
	pthread_cond_init(&tp->cv, NULL);
	tp->tid = calloc((size_t)nthreads, sizeof(*tp->tid));
	if (!tp->tid) {
		st = xo_error(XO_ENOMEM, "cpu: out of memory for the thread pool");
		goto out_free_pool;
	}
	for (int i = 1; i < nthreads; i++) {
		struct worker_arg *wa = malloc(sizeof(*wa));

		if (!wa) {
			st = xo_error(XO_ENOMEM, "cpu: out of memory for the thread pool");
			goto out_stop_workers;
		}
		wa->tp = tp;
		wa->id = i;
		if (pthread_create(&tp->tid[i - 1], NULL, worker_main, wa)) {
			free(wa);
			st = xo_error(XO_ERESOURCE, "cpu: cannot start worker thread %d", i);
			goto out_stop_workers;
		}
		started++;
	}
	*out = tp;
	return XO_OK;

out_stop_workers:
	tp->nthreads = started + 1;
	xo_cpu_threads_free(tp);
	return st;
out_free_pool:
	pthread_cond_destroy(&tp->cv);
	pthread_mutex_destroy(&tp->mu);
	free(tp);
	return st;
}

void xo_cpu_threads_free(struct xo_cpu_pool_threads *tp)
{
	if (!tp)
		return;
	pthread_mutex_lock(&tp->mu);
	atomic_store(&tp->quit, 1);
	pthread_cond_broadcast(&tp->cv);
	pthread_mutex_unlock(&tp->mu);
	for (int i = 1; i < tp->nthreads; i++)
		pthread_join(tp->tid[i - 1], NULL);
	pthread_cond_destroy(&tp->cv);
	pthread_mutex_destroy(&tp->mu);
	free(tp->tid);
	free(tp);
}

void xo_cpu_threads_run(struct xo_cpu_pool_threads *tp, int n, xo_cpu_task_fn fn, void *arg)
{
	uint32_t gen;

	XO_ASSERT(n >= 1);
	if (n == 1 || !tp || tp->nthreads == 1) {
		fn(arg, 0, 1);
		return;
	}
	XO_ASSERT(n <= tp->nthreads);
	tp->fn = fn;
	tp->arg = arg;
	atomic_store(&tp->finished, 0);
	gen = gen_of(atomic_load(&tp->claim)) + 1;
	atomic_store(&tp->claim, (uint64_t)gen << 32 | (uint64_t)n << 16);
	if (atomic_load(&tp->sleepers) > 0) {
		pthread_mutex_lock(&tp->mu);
		pthread_cond_broadcast(&tp->cv);
		pthread_mutex_unlock(&tp->mu);
	}
	/* Parts are claimed, not assigned: a worker that has no core (a loaded
	 * machine) leaves its part to the caller instead of holding it up. */
	run_parts(tp);
	for (int spins = 0; atomic_load(&tp->finished) < n; spins++) {
		if (spins < XO_CPU_SPIN)
			cpu_relax();
		else
			sched_yield();
	}
}
