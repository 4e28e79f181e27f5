/*
 * memplan.c - the model's memory plan: which layer buffers share storage.
 *
 * A layer buffer (its output, the output's gradient, z and z's gradient, the
 * fan-out scratch, the twin: model_run.h) is live from the first call of a
 * pass that touches it to the last one, in the order the runtime runs them.
 * The planner gets that order from the passes themselves: forward.c's
 * plan_make builds the plan of one sample over buffers without storage
 * (xo_mem_trace_begin) and runs its passes with m->trace set, so
 * xo_model_run_op records each call's tensors here instead of running it. The lifetimes are those of the code that runs, not
 * of a second description of it: a new layer kind, a fan-out sum, a view
 * (flatten, reshape, dropout at inference: the same storage as its input)
 * are covered as they run. Buffers whose lifetimes do not overlap in any
 * pass share a slot, sized to the largest of them.
 *
 * Two passes are traced: an inference batch (predict, evaluate, fit's
 * validation) followed by the read of the last layer's output, and a
 * training step (forward, loss, backward with its fan-out sums, optimizer)
 * followed by the same read. No value crosses from one pass to the next:
 * every buffer a pass reads it wrote earlier in that pass. A buffer whose
 * first access in a pass is a read would carry one; it is pinned (a slot of
 * its own), so the plan can only lose sharing there, never a value.
 *
 * mp[0] places the buffers an inference needs (outputs and z) over the
 * inference pass; mp[1] every buffer over both passes, so one layout serves
 * fit's training steps and its validation batches. A recurrent layer's
 * workspace (wsbuf) is not placed: it is made by the first training plan
 * that needs it and grows with the batch (plan_layer).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model_run.h"

struct mem_trace {
	int seg;             /* the pass being traced: 0 inference, 1 training */
	int64_t t;           /* calls so far in it */
	int64_t *first, *last; /* [buffer][pass]: first and last call; -1 untouched */
	bool *pinned;        /* [buffer]: first access a read */
};

static struct xo_tensor **mem_buf(struct layer *l, int k)
{
	switch (k) {
	case MEM_Y:
		return &l->ybuf;
	case MEM_G:
		return &l->gbuf;
	case MEM_Z:
		return &l->zbuf;
	case MEM_GZ:
		return &l->gzbuf;
	case MEM_GACC:
		return &l->gaccbuf;
	default:
		return &l->twinbuf;
	}
}

/* Floats per sample of buffer k of layer i in a layout; 0 when that layout
 * does not make it (an inference makes outputs and z only). */
static enum xo_status mem_per(const struct xo_model *m, int i, int k, int layout, int64_t *per)
{
	const struct layer *l = &m->layers[i];
	const struct xo_layer_spec *s = &l->s;
	bool view = layer_is_view(s), train = layout == 1, made = false;
	int64_t pos, n;

	*per = 0;
	switch (k) {
	case MEM_Y:
		made = !view;
		break;
	case MEM_G: /* a view's gradient is its input's, unless a later term */
		made = train && (view ? l->own_gout : l->has_grad);
		break;
	case MEM_Z:
		made = !view && layer_has_z(s);
		break;
	case MEM_GZ:
		made = train && !view && layer_has_z(s) && l->has_grad;
		break;
	case MEM_GACC:
		made = train && l->needs_gacc;
		break;
	default:
		made = train && l->twin_acc;
		s = &m->layers[s->inputs[1]].s; /* shaped as its producer's gacc */
		break;
	}
	if (!made)
		return XO_OK;
	if (!xo_mul_ok(s->out_len, s->out_w, &pos) ||
	    !xo_mul_ok(pos, k == MEM_Z || k == MEM_GZ ? layer_z_ch(s) : s->out_ch, &n))
		return xo_error(XO_EOVERFLOW, "model: activation size overflows");
	*per = n;
	return XO_OK;
}

/* A tensor of per floats without storage: what the traced plan views. The
 * backend is NULL (no op runs on it) and data holds id + 1 (0: not traced). */
static struct xo_tensor *probe_new(int64_t per, int id)
{
	struct xo_tensor *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->dtype = XO_DTYPE_F32;
	t->ndim = 2;
	t->dim[0] = 1;
	t->dim[1] = per;
	t->nelem = t->capacity = per;
	t->data = (void *)(intptr_t)(id + 1);
	return t;
}

/* The traced buffer a tensor is (a view of), or -1. */
static int probe_id(const struct xo_tensor *t)
{
	const struct xo_tensor *root;

	if (!t)
		return -1;
	root = t->parent ? t->parent : t;
	return root->be ? -1 : (int)(intptr_t)root->data - 1;
}

static void trace_touch(struct mem_trace *tr, const struct xo_tensor *t, bool read)
{
	int id = probe_id(t);
	int64_t *f;

	if (id < 0)
		return;
	f = &tr->first[2 * id + tr->seg];
	if (*f < 0) {
		*f = tr->t;
		if (read)
			tr->pinned[id] = true;
	}
	tr->last[2 * id + tr->seg] = tr->t;
}

void xo_mem_trace_call(struct xo_model *m, const struct xo_op_args *a)
{
	/* reads first: a call that reads what no earlier call wrote pins it */
	for (int k = 0; k < XO_MAX_SRC; k++)
		trace_touch(m->trace, a->src[k], true);
	for (int k = 0; k < XO_MAX_DST; k++)
		trace_touch(m->trace, a->dst[k], false);
	m->trace->t++;
}

/* The model's buffers as storage-less tensors (or back to none, undo). */
static enum xo_status probes_set(struct xo_model *m, int layout, bool undo)
{
	struct xo_tensor **io[4] = {&m->xb, &m->yb, &m->idx, &m->kb};
	int64_t io_per[4] = {m->in_size, m->classes, 1, xo_model_has_masking(m) ? m->spec.in_len : 0};
	enum xo_status st = XO_OK;

	for (int i = 0; i < m->nlayers; i++) {
		struct layer *l = &m->layers[i];

		for (int k = 0; k < MEM_KINDS; k++) {
			struct xo_tensor **b = mem_buf(l, k);
			int64_t per = 0;

			free(*b); /* a probe's struct: no storage behind it */
			*b = NULL;
			if (!undo && !st)
				st = mem_per(m, i, k, layout, &per);
			if (per && !(*b = probe_new(per, i * MEM_KINDS + k)))
				st = xo_error(XO_ENOMEM, "model: out of memory");
		}
		free(l->wsbuf);
		l->wsbuf = NULL;
		l->ws_cap = 0;
		if (!undo && l->ws_per && !(l->wsbuf = probe_new(l->ws_per, -1)))
			st = xo_error(XO_ENOMEM, "model: out of memory");
		l->ws_cap = l->wsbuf ? 1 : 0;
	}
	for (int k = 0; k < 4; k++) {
		free(*io[k]);
		*io[k] = NULL;
		if (!undo && io_per[k] && !(*io[k] = probe_new(io_per[k], -1)))
			st = xo_error(XO_ENOMEM, "model: out of memory");
		if (*io[k] && io[k] == &m->kb) /* int32 flags, as the real buffer */
			(*io[k])->dtype = XO_DTYPE_I32;
	}
	m->cap = undo ? 0 : 1;
	return st;
}

/* One slot's members' lifetimes in each pass: disjoint intervals
 * [iv[2j], iv[2j + 1]], sorted. */
struct slot_set {
	int64_t *iv[2];
	int n[2], cap[2];
	bool pinned;
};

/* Where [a, b] would go in pass s's list: the first interval ending at or
 * after a (the lists are disjoint and sorted, so their ends are too). */
static int slot_find(const struct slot_set *q, int s, int64_t a)
{
	int lo = 0, hi = q->n[s];

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (q->iv[s][2 * mid + 1] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool slot_free(const struct slot_set *q, const struct mem_trace *tr, int id, int npass)
{
	if (q->pinned)
		return false;
	for (int s = 0; s < npass; s++) {
		int64_t a = tr->first[2 * id + s], b = tr->last[2 * id + s];
		int j = slot_find(q, s, a);

		if (a >= 0 && j < q->n[s] && q->iv[s][2 * j] <= b)
			return false;
	}
	return true;
}

static enum xo_status slot_add(struct slot_set *q, const struct mem_trace *tr, int id, int npass)
{
	for (int s = 0; s < npass; s++) {
		int64_t a = tr->first[2 * id + s], b = tr->last[2 * id + s];
		int j;

		if (a < 0)
			continue;
		if (q->n[s] == q->cap[s]) {
			int c = q->cap[s] ? 2 * q->cap[s] : 4;
			int64_t *v = realloc(q->iv[s], sizeof(*v) * 2 * (size_t)c);

			if (!v)
				return xo_error(XO_ENOMEM, "model: out of memory");
			q->iv[s] = v;
			q->cap[s] = c;
		}
		j = slot_find(q, s, a);
		memmove(q->iv[s] + 2 * j + 2, q->iv[s] + 2 * j,
		        sizeof(int64_t) * 2 * (size_t)(q->n[s] - j));
		q->iv[s][2 * j] = a;
		q->iv[s][2 * j + 1] = b;
		q->n[s]++;
	}
	return XO_OK;
}

struct mem_order {
	int64_t per;
	int id;
};

/* Larger first, then by layer and kind: first fit never grows a slot. */
static int order_cmp(const void *x, const void *y)
{
	const struct mem_order *a = x, *b = y;

	if (a->per != b->per)
		return a->per > b->per ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* The slots of a layout from its trace: each buffer, largest first, into
 * the first slot none of whose members it overlaps in any pass, else a new
 * one; a pinned buffer (or each, with sharing off) into a new one alone. */
static enum xo_status plan_assign(struct xo_model *m, int layout, const struct mem_trace *tr,
                                  struct mem_plan *mp)
{
	int nbuf = m->nlayers * MEM_KINDS, nord = 0, npass = layout + 1;
	struct mem_order *ord = calloc((size_t)nbuf, sizeof(*ord));
	struct slot_set *set = calloc((size_t)nbuf, sizeof(*set));
	enum xo_status st = XO_OK;

	mp->slot_of = malloc(sizeof(*mp->slot_of) * (size_t)nbuf);
	mp->slot_per = calloc((size_t)nbuf, sizeof(*mp->slot_per));
	if (!ord || !set || !mp->slot_of || !mp->slot_per) {
		st = xo_error(XO_ENOMEM, "model: out of memory");
		goto out_free;
	}
	mp->nslots = 0;
	mp->planned = mp->unshared = 0;
	for (int b = 0; b < nbuf && !st; b++) {
		mp->slot_of[b] = -1;
		st = mem_per(m, b / MEM_KINDS, b % MEM_KINDS, layout, &ord[nord].per);
		if (!st && ord[nord].per) {
			ord[nord++].id = b;
			if (!xo_add_ok(mp->unshared, ord[nord - 1].per, &mp->unshared))
				st = xo_error(XO_EOVERFLOW, "model: activation size overflows");
		}
	}
	if (st)
		goto out_free;
	qsort(ord, (size_t)nord, sizeof(*ord), order_cmp);
	for (int o = 0; o < nord && !st; o++) {
		int id = ord[o].id, s = 0;
		bool alone = !m->share || tr->pinned[id];

		while (!alone && s < mp->nslots && !slot_free(&set[s], tr, id, npass))
			s++;
		if (alone || s == mp->nslots) {
			s = mp->nslots++;
			mp->slot_per[s] = ord[o].per;
			set[s].pinned = tr->pinned[id];
			if (!xo_add_ok(mp->planned, ord[o].per, &mp->planned))
				st = xo_error(XO_EOVERFLOW, "model: activation size overflows");
		}
		mp->slot_of[id] = s;
		if (!st)
			st = slot_add(&set[s], tr, id, npass);
	}
out_free:
	for (int s = 0; set && s < nbuf; s++) {
		free(set[s].iv[0]);
		free(set[s].iv[1]);
	}
	free(set);
	free(ord);
	return st;
}

enum xo_status xo_mem_trace_begin(struct xo_model *m, int layout)
{
	size_t nbuf = (size_t)m->nlayers * MEM_KINDS;
	struct mem_trace *tr = calloc(1, sizeof(*tr));
	enum xo_status st;

	if (!tr)
		return xo_error(XO_ENOMEM, "model: out of memory");
	tr->first = malloc(sizeof(int64_t) * 2 * nbuf);
	tr->last = malloc(sizeof(int64_t) * 2 * nbuf);
	tr->pinned = calloc(nbuf, sizeof(bool));
	m->trace = tr;
	if (!tr->first || !tr->last || !tr->pinned)
		return xo_error(XO_ENOMEM, "model: out of memory");
	for (size_t b = 0; b < 2 * nbuf; b++)
		tr->first[b] = tr->last[b] = -1;
	st = probes_set(m, layout, false);
	return st;
}

void xo_mem_trace_pass(struct xo_model *m, int pass)
{
	m->trace->seg = pass;
	m->trace->t = 0;
}

enum xo_status xo_mem_trace_end(struct xo_model *m, int layout, bool traced)
{
	struct mem_trace *tr = m->trace;
	enum xo_status st = XO_OK;

	if (!tr)
		return XO_OK;
	m->trace = NULL;
	probes_set(m, layout, true);
	if (traced)
		st = plan_assign(m, layout, tr, &m->mp[layout]);
	free(tr->first);
	free(tr->last);
	free(tr->pinned);
	free(tr);
	return st;
}

void xo_mem_plan_release(struct xo_model *m)
{
	for (int k = 0; k < 2; k++) {
		free(m->mp[k].slot_of);
		free(m->mp[k].slot_per);
		m->mp[k] = (struct mem_plan){0};
	}
}

void xo_mem_layout_free(struct xo_model *m)
{
	for (int i = 0; m->layers && i < m->nlayers; i++)
		for (int k = 0; k < MEM_KINDS; k++) {
			struct xo_tensor **b = mem_buf(&m->layers[i], k);

			xo_tensor_free(*b); /* views first, then their slots */
			*b = NULL;
		}
	for (int s = 0; s < m->nslots; s++)
		xo_tensor_free(m->slots[s]);
	free(m->slots);
	m->slots = NULL;
	m->nslots = 0;
	m->layout = -1;
}

enum xo_status xo_mem_layout_alloc(struct xo_model *m, int layout, int64_t cap)
{
	const struct mem_plan *mp = &m->mp[layout];
	enum xo_status st = XO_OK;

	XO_ASSERT(!m->slots && mp->slot_of);
	m->slots = calloc((size_t)(mp->nslots ? mp->nslots : 1), sizeof(*m->slots));
	if (!m->slots)
		return xo_error(XO_ENOMEM, "model: out of memory");
	m->nslots = mp->nslots;
	for (int s = 0; !st && s < mp->nslots; s++)
		st = xo_tensor_create(m->be, XO_DTYPE_F32, 2, (int64_t[]){cap, mp->slot_per[s]},
		                      &m->slots[s]);
	for (int b = 0; !st && b < m->nlayers * MEM_KINDS; b++) {
		int s = mp->slot_of[b];
		int64_t per;

		if (s < 0)
			continue;
		st = mem_per(m, b / MEM_KINDS, b % MEM_KINDS, layout, &per);
		if (!st)
			st = xo_tensor_view(m->slots[s], 0, 2, (int64_t[]){cap, per},
			                    mem_buf(&m->layers[b / MEM_KINDS], b % MEM_KINDS));
	}
	if (st) {
		xo_mem_layout_free(m);
		return st;
	}
	m->layout = layout;
	return XO_OK;
}

void xo_model_memory_get(const struct xo_model *m, struct xo_model_memory *out)
{
	XO_ASSERT(m && out);
	*out = (struct xo_model_memory){
	    .infer_bytes = 4 * m->mp[0].planned,
	    .infer_unshared = 4 * m->mp[0].unshared,
	    .train_bytes = 4 * m->mp[1].planned,
	    .train_unshared = 4 * m->mp[1].unshared,
	    .infer_slots = m->mp[0].nslots,
	    .train_slots = m->mp[1].nslots,
	};
}
