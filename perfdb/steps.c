/*
 * steps.c - the piecewise-constant L1 step fit of a history (perfdb.h
 * xo_perf_steps) at the size of a fleet's store.
 *
 * The exact fit (stats.c xo_perf_steps_exhaustive, kept as the oracle of the
 * suites) tries every segment [i, j) and costs each afresh: O(n^3 log n), so
 * a history of a few thousand points did not finish. This one solves the
 * same dynamic programme with two changes:
 *
 * - For a fixed segment end j the segments [i, j) are costed while i walks
 *   down from j - 1, one point added to a running median (two heaps with
 *   their sums: sum |y - m| over a segment is sum(upper half) - sum(lower
 *   half) + m (|lower| - |upper|) for its median m), O(log w) per segment
 *   instead of O(len log len).
 * - Segments are at most XO_PERF_STEP_WINDOW points long in the programme.
 *   Where n <= XO_PERF_STEP_WINDOW this changes nothing: the result is the
 *   exact optimum, the exhaustive fit's (up to rounding of the costs, which
 *   breaks only exact ties; the suites compare the two on random series).
 *   Longer histories then get the optimum among segmentations whose segments
 *   are at most the window long, and neighbouring segments are merged,
 *   greatest gain first, while a merge lowers the criterion (each merge
 *   saves one penalty and costs the extra L1 distance of the union). The
 *   window forces cuts only into stretches longer than it; the programme
 *   puts them where they cost least, which is at a real step when one is
 *   near, and the merges undo the cuts that only the window asked for. The
 *   result is bounded, not proven exact, beyond the window (the suites check
 *   that planted steps in 20 000 points come out where they were planted);
 *   the bound is what makes the fit O(n w log w) time and O(n + w) memory.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb.h"

/* ---- a running median with the L1 distance to it ----------------------------- */

/* A binary min-heap of doubles; the lower half stores negated values. */
struct heap {
	double *v;
	size_t n;
	double sum; /* of the values as the caller sees them (not negated) */
};

static void heap_push(struct heap *h, double x)
{
	size_t i = h->n++;

	while (i > 0 && h->v[(i - 1) / 2] > x) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = x;
}

/* Replaces the top (the least) by x and restores the heap. */
static void heap_replace_top(struct heap *h, double x)
{
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] < h->v[c])
			c++;
		if (!(h->v[c] < x))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	h->v[i] = x;
}

/* lo: the lower half (negated, so its top is the median), hi: the upper;
 * |lo| is |hi| or |hi| + 1. */
struct runmed {
	struct heap lo, hi;
};

/* One heap operation and at most one top replacement per value. */
static void runmed_add(struct runmed *r, double x)
{
	if (r->lo.n == r->hi.n) { /* x or the upper half's least joins lo */
		if (r->hi.n && x > r->hi.v[0]) {
			double v = r->hi.v[0];

			heap_replace_top(&r->hi, x);
			r->hi.sum += x - v;
			x = v;
		}
		heap_push(&r->lo, -x);
		r->lo.sum += x;
	} else { /* x or the median joins hi */
		if (x < -r->lo.v[0]) {
			double v = -r->lo.v[0];

			heap_replace_top(&r->lo, -x);
			r->lo.sum += x - v;
			x = v;
		}
		heap_push(&r->hi, x);
		r->hi.sum += x;
	}
}

/* sum |x - median| over what was added. */
static double runmed_cost(const struct runmed *r)
{
	double m = -r->lo.v[0];
	double c = (r->hi.sum - (double)r->hi.n * m) + ((double)r->lo.n * m - r->lo.sum);

	return c > 0.0 ? c : 0.0;
}

/* ---- the L1 cost of one segment, afresh --------------------------------------- */

/* The k-th smallest of x[0..n) (0-based), x reordered: Hoare selection. */
static double select_kth(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		double p = x[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (x[i] < p)
				i++;
			while (x[j] > p)
				j--;
			if (i <= j) {
				double t = x[i];

				x[i] = x[j];
				x[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return x[k];
}

/* sum |y_k - median| over y[i..j) (any point between the two middle ones
 * gives the same sum, so the lower middle one serves). */
static double seg_cost(const double *y, size_t i, size_t j, double *tmp)
{
	double m, c = 0.0;

	memcpy(tmp, y + i, (j - i) * sizeof(*tmp));
	m = select_kth(tmp, j - i, (j - i - 1) / 2);
	for (size_t k = i; k < j; k++)
		c += fabs(y[k] - m);
	return c;
}

/* ---- merging neighbouring segments ------------------------------------------ */

struct merge_cand {
	double gain;             /* criterion saved by merging seg with its right one */
	size_t seg, stamp, next; /* valid while the stamps still match */
};

struct merge_heap {
	struct merge_cand *v;
	size_t n;
};

static bool cand_before(const struct merge_cand *a, const struct merge_cand *b)
{
	return a->gain > b->gain || (a->gain == b->gain && a->seg < b->seg);
}

static void mheap_push(struct merge_heap *h, struct merge_cand c)
{
	size_t i = h->n++;

	while (i > 0 && cand_before(&c, &h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = c;
}

static struct merge_cand mheap_pop(struct merge_heap *h)
{
	struct merge_cand top = h->v[0], x = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && cand_before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!cand_before(&h->v[c], &x))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
	return top;
}

/* The segments of the fit as a list: segment s covers [beg[s], beg[nxt[s]])
 * (n for the last), cost[s] its L1 distance; stamp[s] changes when it does. */
struct segs {
	size_t *beg, *nxt, *prv, *stamp;
	double *cost;
	size_t n, count;
};

/* Offer the merge of s with the segment after it when it pays. */
static void offer(struct segs *g, struct merge_heap *h, const double *y, size_t n, size_t s,
                  double scale, double pen, double *tmp)
{
	size_t r = g->nxt[s], end;
	double gain;

	if (r == SIZE_MAX)
		return;
	end = g->nxt[r] == SIZE_MAX ? n : g->beg[g->nxt[r]];
	gain = pen - (seg_cost(y, g->beg[s], end, tmp) - g->cost[s] - g->cost[r]) / scale;
	if (gain > 0.0)
		mheap_push(h, (struct merge_cand){gain, s, g->stamp[s], g->stamp[r] + 0 * r});
}

/* Merge while some merge lowers the criterion, greatest gain first; starts
 * (k of them) rewritten in place, the new count returned. */
static size_t merge_segments(const double *y, size_t n, double scale, double pen, size_t *starts,
                             size_t k)
{
	struct segs g = {.n = k + 1};
	struct merge_heap h = {0};
	double *tmp = malloc(n * sizeof(*tmp));
	size_t out = k;

	g.beg = malloc(g.n * sizeof(*g.beg));
	g.nxt = malloc(g.n * sizeof(*g.nxt));
	g.prv = malloc(g.n * sizeof(*g.prv));
	g.stamp = calloc(g.n, sizeof(*g.stamp));
	g.cost = malloc(g.n * sizeof(*g.cost));
	h.v = malloc(4 * g.n * sizeof(*h.v));
	if (!tmp || !g.beg || !g.nxt || !g.prv || !g.stamp || !g.cost || !h.v)
		goto out_free; /* the unmerged fit stands */
	for (size_t s = 0; s < g.n; s++) {
		g.beg[s] = s ? starts[s - 1] : 0;
		g.nxt[s] = s + 1 < g.n ? s + 1 : SIZE_MAX;
		g.prv[s] = s ? s - 1 : SIZE_MAX;
	}
	for (size_t s = 0; s < g.n; s++)
		g.cost[s] = seg_cost(y, g.beg[s], s + 1 < g.n ? g.beg[s + 1] : n, tmp);
	for (size_t s = 0; s < g.n; s++)
		offer(&g, &h, y, n, s, scale, pen, tmp);
	while (h.n) {
		struct merge_cand c = mheap_pop(&h);
		size_t s = c.seg, r = g.nxt[s], end;

		/* stale: s or its right neighbour changed since the offer */
		if (g.stamp[s] != c.stamp || r == SIZE_MAX || g.stamp[r] != c.next)
			continue;
		end = g.nxt[r] == SIZE_MAX ? n : g.beg[g.nxt[r]];
		g.cost[s] = seg_cost(y, g.beg[s], end, tmp);
		g.nxt[s] = g.nxt[r];
		if (g.nxt[r] != SIZE_MAX)
			g.prv[g.nxt[r]] = s;
		g.stamp[s]++;
		g.stamp[r] = SIZE_MAX; /* gone: matches no offer */
		if (h.n + 2 > 4 * g.n)
			break; /* cannot happen: each merge adds at most two offers */
		if (g.prv[s] != SIZE_MAX)
			offer(&g, &h, y, n, g.prv[s], scale, pen, tmp);
		offer(&g, &h, y, n, s, scale, pen, tmp);
	}
	out = 0;
	for (size_t s = g.nxt[0]; s != SIZE_MAX; s = g.nxt[s])
		starts[out++] = g.beg[s];
out_free:
	free(h.v);
	free(g.cost);
	free(g.stamp);
	free(g.prv);
	free(g.nxt);
	free(g.beg);
	free(tmp);
	return out;
}

/* ---- the fit ----------------------------------------------------------------- */

size_t xo_perf_steps(const double *y, size_t n, double scale, size_t *starts)
{
	size_t w = XO_PERF_STEP_WINDOW, *from, k = 0;
	struct runmed rm = {{0}, {0}};
	double *best, pen;

	if (n < 2 || !(scale > 0.0))
		return 0;
	best = malloc((n + 1) * sizeof(*best));
	from = malloc((n + 1) * sizeof(*from));
	rm.lo.v = malloc(w * sizeof(*rm.lo.v));
	rm.hi.v = malloc(w * sizeof(*rm.hi.v));
	if (!best || !from || !rm.lo.v || !rm.hi.v)
		goto out_free;
	pen = XO_PERF_STEP_BETA * log((double)n);
	best[0] = 0.0;
	from[0] = 0;
	for (size_t j = 1; j <= n; j++) {
		size_t first = j > w ? j - w : 0;
		double off = y[j - 1]; /* costs are shift-free: sums kept near 0 */

		rm.lo.n = rm.hi.n = 0;
		rm.lo.sum = rm.hi.sum = 0.0;
		best[j] = INFINITY;
		from[j] = 0;
		/* i walks down; "<=" keeps the smallest i among equals, as the
		 * exhaustive fit's upward walk with "<" does */
		for (size_t i = j; i-- > first;) {
			double f;

			runmed_add(&rm, y[i] - off);
			f = best[i] + runmed_cost(&rm) / scale + pen;
			if (f <= best[j]) {
				best[j] = f;
				from[j] = i;
			}
		}
	}
	k = xo_perf_steps_walk(from, n, starts);
	if (n > w && k)
		k = merge_segments(y, n, scale, pen, starts, k);
out_free:
	free(rm.hi.v);
	free(rm.lo.v);
	free(from);
	free(best);
	return k;
}
