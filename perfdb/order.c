/*
 * order.c - the order of a history: the commit graph, not the clock.
 *
 * Every reader that lays runs out in time (detect's series, the run-to-run
 * noise of a series, baselines, the report's history plots) takes its order
 * from here, so they all agree. Committer dates do not order commits:
 * scripted commits and rebases give many commits one date, and a clock can
 * go backwards. The store keeps each commit's first parent
 * (commits.parent), so the recorded commits form a forest of first-parent
 * chains; a commit's place is its chain's place, then its depth in the chain
 * (how many recorded first-parent ancestors it has). Commits need not be
 * recorded back to back: a commit whose first parent is not in the store
 * starts a chain of its own, and chains, which the graph cannot order
 * against each other, are ordered by the date of their first commit, then
 * by insertion (the count of such chains beyond the first is reported as
 * placed by date). A dirty tree of a commit comes right after the clean
 * commit. The history is each chain's main line (mark_main): a side branch
 * recorded off it keeps a place by depth (by date, then insertion, among
 * commits of one depth) for the readers that only compare two commits, but
 * is flagged off the main line, and the history's readers leave it out.
 */
#include <stdlib.h>
#include <string.h>

#include "perfdb.h"
#include "sql.h"

struct node {
	int64_t id, date, rank_key;
	int64_t newest; /* the commit's newest complete run, 0 when none */
	char *sha, *parent;
	int dirty;
	bool main;     /* on the main line of its chain */
	size_t height; /* the longest first-parent path below, in commits */
	size_t next;   /* the child the main line follows, SIZE_MAX when none */
	size_t clean;  /* a dirty tree's clean commit, SIZE_MAX when not recorded */
	size_t up;     /* index of the first parent, SIZE_MAX when not recorded */
	size_t root;   /* index of the first commit of the chain */
	size_t depth;  /* recorded first-parent ancestors */
};

static int by_sha(const void *pa, const void *pb)
{
	const struct node *a = *(struct node *const *)pa, *b = *(struct node *const *)pb;
	int c = strcmp(a->sha, b->sha);

	if (c)
		return c;
	if (a->dirty != b->dirty)
		return a->dirty - b->dirty; /* the clean commit first */
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The clean (else first) commit with this sha in the sorted index, or NULL. */
static struct node *find_sha(struct node **idx, size_t n, const char *sha)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(idx[mid]->sha, sha) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strcmp(idx[lo]->sha, sha) ? idx[lo] : NULL;
}

/* Depth and root of every node, walking up each chain once (a crafted store
 * may hold a cycle of parents: the walk stops where it meets itself). */
static void place(struct node *nd, size_t n, size_t *stack)
{
	const size_t pending = SIZE_MAX - 1;

	for (size_t i = 0; i < n; i++)
		nd[i].depth = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		size_t top = 0, cur = i;

		while (nd[cur].depth == SIZE_MAX) {
			nd[cur].depth = pending;
			stack[top++] = cur;
			if (nd[cur].up == SIZE_MAX || nd[nd[cur].up].depth == pending)
				break;
			cur = nd[cur].up;
		}
		while (top) {
			size_t k = stack[--top];
			size_t u = nd[k].up;

			if (u == SIZE_MAX || nd[u].depth == pending) {
				nd[k].up = SIZE_MAX; /* a root, or a cycle cut here */
				nd[k].root = k;
				nd[k].depth = 0;
			} else {
				nd[k].root = nd[u].root;
				nd[k].depth = nd[u].depth + 1;
			}
		}
	}
}

static const struct node *sort_base;

static int by_depth_desc(const void *pa, const void *pb)
{
	size_t a = sort_base[*(const size_t *)pa].depth, b = sort_base[*(const size_t *)pb].depth;

	return a > b ? -1 : a < b;
}

/* Does child a make a better main line below its parent than child b? */
static bool better_line(const struct node *a, const struct node *b)
{
	if (a->height != b->height)
		return a->height > b->height;
	if (a->newest != b->newest)
		return a->newest > b->newest;
	return a->id < b->id;
}

/*
 * Mark the main line of every chain (place first): from the chain's first
 * commit, each step goes to the child with the longest first-parent path
 * below it (ties: the child whose newest complete run is newest, then the
 * one recorded first). A dirty tree whose clean commit is recorded is
 * not a child of its own: it goes with its clean commit. perm is scratch
 * (room for n). Returns how many commits are off the main line.
 */
static size_t mark_main(struct node *nd, size_t n, struct node **idx, size_t *perm)
{
	size_t off = 0;

	for (size_t i = 0; i < n; i++) {
		struct node *c = nd[i].dirty ? find_sha(idx, n, nd[i].sha) : NULL;

		nd[i].clean = c && !c->dirty ? (size_t)(c - nd) : SIZE_MAX;
		nd[i].height = 0;
		nd[i].next = SIZE_MAX;
		nd[i].main = false;
		perm[i] = i;
	}
	/* deepest first, so each child's height is final before its parent's */
	sort_base = nd;
	qsort(perm, n, sizeof(*perm), by_depth_desc);
	for (size_t k = 0; k < n; k++) {
		size_t i = perm[k], u = nd[i].up;

		if (u == SIZE_MAX || nd[i].clean != SIZE_MAX)
			continue;
		if (nd[u].height < nd[i].height + 1)
			nd[u].height = nd[i].height + 1;
		if (nd[u].next == SIZE_MAX || better_line(&nd[i], &nd[nd[u].next]))
			nd[u].next = i;
	}
	for (size_t i = 0; i < n; i++)
		if (nd[i].up == SIZE_MAX && nd[i].clean == SIZE_MAX)
			for (size_t c = i; c != SIZE_MAX && !nd[c].main; c = nd[c].next)
				nd[c].main = true;
	for (size_t i = 0; i < n; i++) {
		if (nd[i].clean != SIZE_MAX)
			nd[i].main = nd[nd[i].clean].main;
		off += !nd[i].main;
	}
	return off;
}


static int by_history(const void *pa, const void *pb)
{
	const struct node *a = &sort_base[*(const size_t *)pa], *b = &sort_base[*(const size_t *)pb];
	const struct node *ra = &sort_base[a->root], *rb = &sort_base[b->root];

	if (a->root != b->root) {
		if (ra->date != rb->date)
			return ra->date < rb->date ? -1 : 1;
		return ra->id < rb->id ? -1 : 1;
	}
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	if (a->date != b->date)
		return a->date < b->date ? -1 : 1;
	if (a->dirty != b->dirty)
		return a->dirty - b->dirty;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int by_id(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return a < b ? -1 : a > b;
}

static enum xo_status read_commits(struct xo_perfdb *db, struct node **out, size_t *nout)
{
	struct xo_sql_stmt *s = NULL;
	struct node *nd = NULL;
	size_t n = 0, cap = 0;
	int rc;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT c.id, coalesce(c.sha, ''), coalesce(c.parent, ''),"
	                   " coalesce(c.date, 0), coalesce(c.dirty, 0), coalesce(lr.last, 0)"
	                   " FROM commits c LEFT JOIN (SELECT commit_id, max(id) AS last FROM runs"
	                   "  WHERE state = 'complete' GROUP BY commit_id) lr"
	                   " ON lr.commit_id = c.id", &s))
		return xo_error(XO_EIO, "perf: reading the commits: %s",
		                xo_sql_errmsg(xo_perfdb_sql(db)));
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW) {
		if (n == cap) {
			size_t c2 = cap ? 2 * cap : 256;
			struct node *p = realloc(nd, c2 * sizeof(*p));

			if (!p)
				goto out_nomem;
			nd = p;
			cap = c2;
		}
		memset(&nd[n], 0, sizeof(nd[n]));
		nd[n].id = xo_sql_column_int64(s, 0);
		nd[n].sha = strdup((const char *)xo_sql_column_text(s, 1));
		nd[n].parent = strdup((const char *)xo_sql_column_text(s, 2));
		nd[n].date = xo_sql_column_int64(s, 3);
		nd[n].dirty = xo_sql_column_int(s, 4) != 0;
		nd[n].newest = xo_sql_column_int64(s, 5);
		n++;
		if (!nd[n - 1].sha || !nd[n - 1].parent)
			goto out_nomem;
	}
	xo_sql_finalize(s);
	*out = nd;
	*nout = n;
	if (rc != XO_SQL_DONE)
		return xo_error(XO_EIO, "perf: reading the commits: %s",
		                xo_sql_errmsg(xo_perfdb_sql(db)));
	return XO_OK;
out_nomem:
	xo_sql_finalize(s);
	*out = nd;
	*nout = n;
	return xo_error(XO_ENOMEM, "perf: out of memory");
}

enum xo_status xo_perf_order_load(struct xo_perfdb *db, struct xo_perf_order *o)
{
	struct node *nd = NULL, **idx = NULL;
	size_t n = 0, *perm = NULL, *stack = NULL;
	struct {
		int64_t id, rank;
		bool main;
	} *pairs = NULL;
	enum xo_status st;

	memset(o, 0, sizeof(*o));
	if ((st = read_commits(db, &nd, &n)))
		goto out_free;
	idx = malloc((n ? n : 1) * sizeof(*idx));
	perm = malloc((n ? n : 1) * sizeof(*perm));
	stack = malloc((n ? n : 1) * sizeof(*stack));
	pairs = malloc((n ? n : 1) * sizeof(*pairs));
	o->id = malloc((n ? n : 1) * sizeof(*o->id));
	o->rank = malloc((n ? n : 1) * sizeof(*o->rank));
	o->main = malloc((n ? n : 1) * sizeof(*o->main));
	if (!idx || !perm || !stack || !pairs || !o->id || !o->rank || !o->main) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out_free;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = &nd[i];
	qsort(idx, n, sizeof(*idx), by_sha);
	for (size_t i = 0; i < n; i++) {
		struct node *p = nd[i].parent[0] ? find_sha(idx, n, nd[i].parent) : NULL;

		nd[i].up = p && p != &nd[i] ? (size_t)(p - nd) : SIZE_MAX;
	}
	place(nd, n, stack);
	o->off_main = mark_main(nd, n, idx, perm);
	for (size_t i = 0; i < n; i++) {
		perm[i] = i;
		if (nd[i].root == i)
			o->by_date++;
	}
	if (o->by_date)
		o->by_date--; /* the oldest chain's start is where history begins */
	sort_base = nd;
	qsort(perm, n, sizeof(*perm), by_history);
	for (size_t r = 0; r < n; r++) {
		pairs[r].id = nd[perm[r]].id;
		pairs[r].rank = (int64_t)r;
		pairs[r].main = nd[perm[r]].main;
	}
	qsort(pairs, n, sizeof(*pairs), by_id); /* id first in the pair */
	for (size_t i = 0; i < n; i++) {
		o->id[i] = pairs[i].id;
		o->rank[i] = pairs[i].rank;
		o->main[i] = pairs[i].main;
	}
	o->n = n;
	o->loaded = true;
out_free:
	if (st)
		xo_perf_order_free(o);
	for (size_t i = 0; i < n; i++) {
		free(nd[i].sha);
		free(nd[i].parent);
	}
	free(pairs);
	free(stack);
	free(perm);
	free(idx);
	free(nd);
	return st;
}

/* The index of a commit in the order, o->n when it does not hold it. */
static size_t order_find(const struct xo_perf_order *o, int64_t commit_id)
{
	size_t lo = 0, hi = o ? o->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->id[mid] < commit_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return o && lo < o->n && o->id[lo] == commit_id ? lo : (o ? o->n : 0);
}

bool xo_perf_order_main(const struct xo_perf_order *o, int64_t commit_id)
{
	size_t i = order_find(o, commit_id);

	return !o || i == o->n || o->main[i];
}

int64_t xo_perf_order_rank(const struct xo_perf_order *o, int64_t commit_id)
{
	size_t lo = order_find(o, commit_id);

	if (o && lo < o->n)
		return o->rank[lo];
	/* a commit recorded after the order was read: after everything */
	return (int64_t)(o ? o->n : 0) + commit_id;
}

void xo_perf_order_free(struct xo_perf_order *o)
{
	if (!o)
		return;
	free(o->id);
	free(o->rank);
	free(o->main);
	memset(o, 0, sizeof(*o));
}

uint64_t xo_perf_order_hash(const struct xo_perf_order *o, int64_t upto)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int64_t *key = malloc((o->n ? o->n : 1) * sizeof(*key)), span = (int64_t)o->n + 1;
	size_t k = 0;

	if (!key)
		return 0; /* matches no stored hash: the caller refits */
	/* each commit up to upto as rank * span + its index: sorted, the
	 * indices come out in history order (rank and index are both < span) */
	for (size_t i = 0; i < o->n; i++)
		if (o->id[i] <= upto)
			key[k++] = o->rank[i] * span + (int64_t)i;
	qsort(key, k, sizeof(*key), by_id);
	for (size_t i = 0; i < k; i++) {
		size_t at = (size_t)(key[i] % span);
		/* a commit off the main line hashes as its negated id: a main
		 * line that changes changes the hash, and a store with no side
		 * branches keeps the hash it had */
		int64_t id = o->main[at] ? o->id[at] : -o->id[at];

		h = xo_perf_fnv(h, &id, sizeof(id));
	}
	free(key);
	return h ? h : 1;
}
