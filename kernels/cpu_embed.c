/*
 * cpu_embed.c - cpu kernels of the embedding op (ops.def): the forward row
 * lookup and the backward scatter-add into the table rows used.
 *
 * Determinism: the backward splits the table's rows between threads; each
 * thread scans every position in increasing n * len + t and adds only the dy
 * rows whose id is one of its own rows. So every dtable element is the float
 * sum of its terms in position order, whatever the thread count, with no
 * atomics and no reduction across threads: the same bits on every run
 * (the bound against the double reference: (K - 1) roundings of a sum of K
 * terms, suites/harness.c tol_embedding).
 *
 * Ids are checked before anything is written: one outside [0, rows) is
 * XO_EINVAL naming it, and no memory outside the tensors is touched.
 */
#include <inttypes.h>
#include <string.h>

#include "cpu.h"

/* Below this many float moves the op stays on the calling thread. */
#define XO_CPU_EMBED_PAR_MIN XO_CPU_PAR_MIN

struct embed_job {
	const int32_t *ids;
	const float *src; /* fwd: table; bwd: dy */
	float *dst;       /* fwd: y; bwd: dtable */
	int64_t n, ch, rows;
};

static int embed_threads(const struct xo_cpu_ctx *c, double work, int64_t items)
{
	int64_t nt = c->nthreads;

	if (work < (double)XO_CPU_EMBED_PAR_MIN)
		return 1;
	if (nt > items)
		nt = items;
	return nt < 1 ? 1 : (int)nt;
}

static enum xo_status check_ids(const int32_t *ids, const struct xo_params *p)
{
	int64_t n = p->batch * p->len;

	for (int64_t i = 0; i < n; i++)
		if (ids[i] < 0 || ids[i] >= p->rows)
			return xo_error(XO_EINVAL,
					"embedding: id %" PRId32 " at sample %" PRId64 ", step %" PRId64
					" is outside [0, input_dim=%" PRId64 ")",
					ids[i], i / p->len, i % p->len, p->rows);
	return XO_OK;
}

/* Positions [n * t / nt, n * (t + 1) / nt): one table row copied each. */
static void embed_fwd_task(void *arg, int t, int nt)
{
	const struct embed_job *j = arg;
	int64_t lo = j->n * t / nt, hi = j->n * (t + 1) / nt;

	for (int64_t i = lo; i < hi; i++)
		memcpy(j->dst + i * j->ch, j->src + (int64_t)j->ids[i] * j->ch,
		       (size_t)j->ch * sizeof(float));
}

/* Table rows [rows * t / nt, rows * (t + 1) / nt): zeroed, then every
 * position in increasing order adds its dy row to its id's row if the row
 * is in this share. */
static void embed_bwd_task(void *arg, int t, int nt)
{
	const struct embed_job *j = arg;
	int64_t lo = j->rows * t / nt, hi = j->rows * (t + 1) / nt, ch = j->ch;

	memset(j->dst + lo * ch, 0, (size_t)((hi - lo) * ch) * sizeof(float));
	for (int64_t i = 0; i < j->n; i++) {
		int64_t r = j->ids[i];
		float *d;
		const float *s;

		if (r < lo || r >= hi)
			continue;
		d = j->dst + r * ch;
		s = j->src + i * ch;
		for (int64_t c = 0; c < ch; c++)
			d[c] += s[c];
	}
}

static enum xo_status cpu_embedding(struct xo_backend *be, const struct xo_op_args *a, bool bwd)
{
	struct xo_cpu_ctx *c = be->ctx;
	struct embed_job j = {.ids = xo_tensor_i32(a->src[0]),
			      .src = xo_tensor_f32(a->src[1]),
			      .dst = xo_tensor_f32(a->dst[0]),
			      .n = a->p.batch * a->p.len,
			      .ch = a->p.ch,
			      .rows = a->p.rows};
	enum xo_status st = check_ids(j.ids, &a->p);
	double work = (double)j.n * (double)j.ch;

	if (st)
		return st;
	if (bwd)
		xo_cpu_threads_run(c->tp, embed_threads(c, work, j.rows), embed_bwd_task, &j);
	else
		xo_cpu_threads_run(c->tp, embed_threads(c, work, j.n), embed_fwd_task, &j);
	return XO_OK;
}

enum xo_status xo_cpu_embedding_fwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_embedding(be, a, false);
}

enum xo_status xo_cpu_embedding_bwd(struct xo_backend *be, const struct xo_op_args *a)
{
	return cpu_embedding(be, a, true);
}

