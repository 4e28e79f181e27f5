/*
 * detect.c - `xo perf detect`: steps in each series' history (the L1 fit of
 * steps.c), each confirmed by the one rule (verdict.c), attributed to the
 * commit whose measured code changed, stored as changes with their state;
 * and accept/ignore/fix.
 */
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "perfdb.h"
#include "analyze.h"
#include "jsonout.h"
#include "proc.h"
#include "query.h"
#include "sql.h"
#include "verdict.h"

/* ---- detect -------------------------------------------------------------------- */






/*
 * The scale of the L1 fit: the Laplace scale b (sd / sqrt 2) of a point's
 * median, taken as the larger of (a) the within-point standard error of the
 * median, 1.2533 * (IQR / 1.349) / sqrt(n), and (b) with 4 or more points,
 * the robust sd of successive differences, 1.4826 * median|dy| / sqrt 2,
 * which also sees run-to-run noise; floored at 1e-4 of the level.
 */
static double series_scale(const struct xo_perf_point *pt, size_t n)
{
	double *tmp = malloc((n ? n : 1) * sizeof(*tmp)), within, sd, level;
	size_t k = 0;

	if (!tmp)
		return 0.0;
	for (size_t i = 0; i < n; i++)
		tmp[i] = pt[i].se;
	within = xo_perf_median(tmp, n);
	sd = within;
	if (n >= 4) {
		for (size_t i = 1; i < n; i++)
			tmp[k++] = fabs(pt[i].y - pt[i - 1].y);
		double diff = 1.4826 * xo_perf_median(tmp, k) / sqrt(2.0);

		if (diff > sd)
			sd = diff;
	}
	for (size_t i = 0; i < n; i++)
		tmp[i] = pt[i].y;
	level = xo_perf_median(tmp, n);
	free(tmp);
	if (sd < 1e-4 * level)
		sd = 1e-4 * level;
	return sd / sqrt(2.0);
}

struct detect_ctx {
	struct xo_perfdb *db;
	const struct xo_perf_compare_opts *o;
	struct xo_sql_stmt *upsert, *fix;
	int64_t now;
	int nconfirmed_reg, nconfirmed_imp, ndetected, nsteps, ncandidates, nmoved, nmachine;
	struct xo_perf_order ord;
};

/* The step at point mid between segments [lo, mid) and [mid, hi): the U test
 * on their raw samples, and the fit's levels (medians of point medians). */
struct step_eval {
	struct xo_perf_verdict v;
	double lvl_l, lvl_r;
};

/*
 * The fewest points a side of a step needs for the run-level test of the
 * rule (Welch on the points' log medians). Welch's degrees of freedom are
 * at least min(nb, nh) - 1: with 2 points a side they can fall to 1, where
 * p < 0.05 needs t > 12.7, so a 16x step whose two points before it differ
 * by 1.75x (a loaded run) was never confirmed. A shorter side is judged as
 * compare judges a side of a single run: its points' samples pooled as one
 * run, the change held to the series' run-to-run noise bar (rule->noise).
 */
#define STEP_RUNS_MIN 3

/* Each point (a commit: its runs' samples pooled) is one run of the rule;
 * sizes has room for the series' points. A side shorter than STEP_RUNS_MIN
 * points is one run of its pooled samples. */
static void eval_step(const struct xo_perf_series *se, size_t base, const double *y, size_t lo,
                      size_t mid, size_t hi, const struct xo_perf_rule *rule, size_t *sizes,
                      struct xo_perf_vec *tmp, struct step_eval *e)
{
	const struct xo_perf_point *a = &se->pt[base + lo], *m = &se->pt[base + mid];
	const struct xo_perf_point *z = &se->pt[base + hi - 1];
	struct xo_perf_sample_set l, r;
	struct xo_perf_load ll = {-1.0}, lr = {-1.0};

	for (size_t i = lo; i < hi; i++) {
		sizes[i] = se->pt[base + i].n;
		xo_perf_load_widen(i < mid ? &ll : &lr, se->pt[base + i].load.least);
	}
	l = (struct xo_perf_sample_set){se->samples.v + a->first, sizes + lo, mid - lo,
	                                m->first - a->first, ll.least >= 0 ? &ll : NULL};
	r = (struct xo_perf_sample_set){se->samples.v + m->first, sizes + mid, hi - mid,
	                                z->first + z->n - m->first, lr.least >= 0 ? &lr : NULL};
	if (mid - lo < STEP_RUNS_MIN)
		l = (struct xo_perf_sample_set){l.x, NULL, 1, l.nx, l.load};
	if (hi - mid < STEP_RUNS_MIN)
		r = (struct xo_perf_sample_set){r.x, NULL, 1, r.nx, r.load};
	xo_perf_verdict_judge(&l, &r, rule, &e->v);
	tmp->n = 0;
	for (size_t i = lo; i < mid; i++)
		xo_perf_vec_push(tmp, y[i]);
	e->lvl_l = xo_perf_median(tmp->v, tmp->n);
	tmp->n = 0;
	for (size_t i = mid; i < hi; i++)
		xo_perf_vec_push(tmp, y[i]);
	e->lvl_r = xo_perf_median(tmp->v, tmp->n);
}

/*
 * One history: the L1 step fit over the point medians since the baseline,
 * then asv-like merging: while some step's U test on the raw samples of its
 * neighbouring segments gives p >= alpha / (n - 1), the least significant
 * step is removed and its segments merged. The fit chose each boundary among
 * n - 1 places, so the test is Bonferroni-corrected for them (with two points
 * it is the plain alpha of `compare`). What remains is stored: "confirmed"
 * when compare's rule (verdict.c, each point one run of it, the series'
 * run-to-run bar at the same corrected alpha) confirms it, else "detected"
 * (real but small, within what runs of one tree do, or load that the
 * minima do not show).
 */
/*
 * Steps of an instruction series (a deterministic metric): between every two
 * neighbouring points (commits) of the history since its baseline, a step is
 * "confirmed" when every sample of the right point differs from every sample
 * of the left one by more than threshold in one direction
 * (xo_perf_judge_counts), "detected" when only the medians do (the samples
 * disagree: a count that is not deterministic). No segment fit, no U test
 * and no run-to-run bar: there is no sampling noise to average out, and a
 * commit that changes the count is the commit that changed the code.
 */
static size_t count_steps(const struct xo_perf_series *se, size_t base, size_t n, double threshold,
                          size_t *starts, struct step_eval *ev)
{
	size_t k = 0;

	for (size_t i = 1; i < n; i++) {
		const struct xo_perf_point *a = &se->pt[base + i - 1], *z = &se->pt[base + i];
		struct step_eval *e = &ev[k];
		struct xo_perf_sample_set l = {se->samples.v + a->first, NULL, 1, a->n, NULL};
		struct xo_perf_sample_set r = {se->samples.v + z->first, NULL, 1, z->n, NULL};
		struct xo_perf_rule rule = {.threshold = threshold, .counts = true};

		xo_perf_verdict_judge(&l, &r, &rule, &e->v);
		e->lvl_l = a->y;
		e->lvl_r = z->y;
		e->v.base = a->y;
		e->v.head = z->y;
		e->v.change = a->y > 0.0 ? z->y / a->y - 1.0 : 0.0;
		/* changes.p_value is NOT NULL: 0 for a step every sample pair
		 * shows, 1 for one only the medians show (no test is made) */
		e->v.p = e->v.sign ? 0.0 : 1.0;
		if (e->v.sign || fabs(e->v.change) > threshold)
			starts[k++] = i;
	}
	return k;
}

/* Both versions derived and equal: the measured code did not change. */
static bool same_version(const struct xo_perf_point *a, const struct xo_perf_point *b)
{
	return a->ver_known && b->ver_known && a->ver == b->ver;
}

/*
 * A step is put on a commit whose measured code changed. When the fit put a
 * step between two points of one kernel-source version, it moves to the
 * nearest boundary between its neighbouring steps where the version changed
 * (or cannot be told: a version not derived), the earlier one when two are
 * as near; with none (the code is the same over both segments) it stays, and
 * the store's version check marks it as not the code's doing. true when a
 * step moved (its neighbours' segments changed: evaluate again).
 */
static bool attribute_steps(const struct xo_perf_point *pt, size_t n, size_t *starts, size_t nsteps)
{
	bool moved = false;

	for (size_t k = 0; k < nsteps; k++) {
		size_t s = starts[k], lo = k ? starts[k - 1] : 0,
		       hi = k + 1 < nsteps ? starts[k + 1] : n;

		if (!same_version(&pt[s - 1], &pt[s]))
			continue;
		for (size_t d = 1; s - lo > d || s + d < hi; d++) {
			if (s - lo > d && !same_version(&pt[s - d - 1], &pt[s - d])) {
				starts[k] = s - d;
				break;
			}
			if (s + d < hi && !same_version(&pt[s + d - 1], &pt[s + d])) {
				starts[k] = s + d;
				break;
			}
		}
		moved |= starts[k] != s;
	}
	return moved;
}

/*
 * A step moved from the fit's place `from` to `to` passes over the points
 * between them: the move stands only where each of those points is nearer
 * the level of the side it joins than of the side it leaves (a point the
 * fit put on the wrong side by noise), never where the data show the step
 * plainly at `from`.
 */
static bool skipped_agree(const double *y, size_t from, size_t to, const struct step_eval *e)
{
	if (to < from) { /* the points to..from-1 join the right side */
		for (size_t i = to; i < from; i++)
			if (fabs(y[i] - e->lvl_r) >= fabs(y[i] - e->lvl_l))
				return false;
	} else { /* the points from..to-1 join the left side */
		for (size_t i = from; i < to; i++)
			if (fabs(y[i] - e->lvl_l) >= fabs(y[i] - e->lvl_r))
				return false;
	}
	return true;
}

/* Removes the changes of a series that an earlier detect found and the
 * fuller history no longer shows: those at commits not in keep (a comma
 * list of commit ids, "" for none). */
static enum xo_status prune_changes(struct xo_perfdb *db, int64_t bench, int64_t testbed,
                                    const char *keep)
{
	struct xo_sql_stmt *del = NULL;
	enum xo_status st = XO_OK;
	char sql[4400];

	snprintf(sql, sizeof(sql),
	         "DELETE FROM changes WHERE benchmark_id = ? AND testbed_id = ? AND"
	         " state IN ('detected','confirmed') AND commit_id NOT IN (%s)",
	         keep[0] ? keep : "0"); /* ids start at 1; PostgreSQL refuses "IN ()" */
	if (xo_sql_prepare(xo_perfdb_sql(db), sql, &del))
		return xo_perf_query_err(db, "pruning changes");
	xo_sql_bind_int64(del, 1, bench);
	xo_sql_bind_int64(del, 2, testbed);
	if (xo_sql_step(del) != XO_SQL_DONE)
		st = xo_perf_query_err(db, "pruning changes");
	xo_sql_finalize(del);
	return st;
}

/* A step the machine made: the code measured is known and the same on both
 * sides and the floor did not move (the medians moved with the machine, not
 * with the commit). No row is kept against the commit. */
static bool machine_step(const struct xo_perf_point *m, const struct step_eval *e, double threshold)
{
	return same_version(m - 1, m) && isfinite(e->v.min_change) &&
	       fabs(e->v.min_change) <= threshold;
}

/* The steps of one series found by detect_series, stored (a machine's step
 * is counted, not stored), each regression whose history came back down
 * marked fixed, and the changes of the series that no longer hold pruned. */
static enum xo_status store_steps(struct detect_ctx *ctx, int64_t bench, int64_t testbed,
                                  const struct xo_perf_series *se, size_t base,
                                  const size_t *starts, size_t nsteps, const struct step_eval *ev)
{
	struct xo_perfdb *db = ctx->db;
	char keep[4096] = "";

	for (size_t k = 0; k < nsteps; k++) {
		const struct xo_perf_point *m = &se->pt[base + starts[k]];
		const struct step_eval *e = &ev[k];

		if (machine_step(m, e, ctx->o->threshold)) {
			ctx->nmachine++;
			continue;
		}
		ctx->nsteps++;
		xo_sql_bind_int64(ctx->upsert, 1, bench);
		xo_sql_bind_int64(ctx->upsert, 2, testbed);
		xo_sql_bind_int64(ctx->upsert, 3, m->commit_id);
		xo_sql_bind_int64(ctx->upsert, 4, se->pt[base + starts[k] - 1].commit_id);
		xo_sql_bind_text(ctx->upsert, 5,
		                  e->lvl_r > e->lvl_l ? "regression" : "improvement");
		xo_sql_bind_double(ctx->upsert, 6, e->lvl_r / e->lvl_l);
		xo_sql_bind_double(ctx->upsert, 7, e->v.p);
		xo_sql_bind_text(ctx->upsert, 8, e->v.sign ? "confirmed" : "detected");
		xo_sql_bind_int64(ctx->upsert, 9, ctx->now);
		if (xo_sql_step(ctx->upsert) != XO_SQL_DONE) {
			xo_sql_reset(ctx->upsert);
			return xo_perf_query_err(db, "storing a change");
		}
		xo_sql_reset(ctx->upsert);
		snprintf(keep + strlen(keep), sizeof(keep) - strlen(keep), "%s%lld",
		         keep[0] ? "," : "", (long long)m->commit_id);
		/* a confirmed regression whose history came back down is fixed */
		if (e->v.sign > 0 && k + 1 < nsteps &&
		    se->pt[se->npt - 1].y <= e->lvl_l * (1.0 + ctx->o->threshold)) {
			xo_sql_bind_int64(ctx->fix, 1, bench);
			xo_sql_bind_int64(ctx->fix, 2, testbed);
			xo_sql_bind_int64(ctx->fix, 3, m->commit_id);
			xo_sql_step(ctx->fix);
			xo_sql_reset(ctx->fix);
		}
	}
	return prune_changes(db, bench, testbed, keep);
}

static enum xo_status detect_series(struct detect_ctx *ctx, int64_t bench, int64_t testbed,
                                    struct xo_perf_series *se)
{
	struct xo_perfdb *db = ctx->db;
	size_t base, n, nsteps, *starts = NULL, *orig = NULL;
	double *y = NULL, scale, alpha;
	struct xo_perf_vec tmp = {0};
	size_t *sizes = NULL;
	struct xo_perf_rule rule = {.threshold = ctx->o->threshold, .family = 1};
	struct step_eval *ev = NULL;
	enum xo_status st = XO_OK;
	bool have_samples;

	/* the fit needs the points only; the raw samples are read where the
	 * summaries do not give the points, or for the tests of found steps */
	if ((st = xo_perf_query_points(db, &ctx->ord, bench, testbed, se, &have_samples)))
		return st;
	have_samples = have_samples || xo_perf_is_count_metric(ctx->o->metric);
	if (have_samples &&
	    (st = xo_perf_query_series_samples(db, &ctx->ord, bench, testbed, se, true)))
		return st;
	base = xo_perf_query_baseline_start(db, bench, testbed, se);
	n = se->npt - base;
	y = malloc((n ? n : 1) * sizeof(*y));
	starts = malloc((n ? n : 1) * sizeof(*starts));
	ev = malloc((n ? n : 1) * sizeof(*ev));
	if (!y || !starts || !ev) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		y[i] = se->pt[base + i].y;
	if (xo_perf_is_count_metric(ctx->o->metric)) {
		nsteps = count_steps(se, base, n, ctx->o->threshold, starts, ev);
		ctx->ncandidates += (int)nsteps;
		goto store;
	}
	scale = series_scale(se->pt + base, n);
	nsteps = n >= 2 ? xo_perf_steps(y, n, scale, starts) : 0;
	ctx->ncandidates += (int)nsteps;
	if (nsteps && !have_samples &&
	    (st = xo_perf_query_series_samples(db, &ctx->ord, bench, testbed, se, false)))
		goto out;
	alpha = ctx->o->alpha / (double)(n > 2 ? n - 1 : 1);
	/* each step is judged by the one rule (verdict.c), at the level the fit's
	 * choice among n - 1 places leaves, with the series' run-to-run bar */
	rule.alpha = alpha;
	if (nsteps)
		rule.noise =
		    xo_perf_series_noise(db, &ctx->ord, bench, testbed, INT64_MAX, alpha, 0);
	if (nsteps)
		xo_perf_query_threads(db, bench, testbed, &rule);
	if (!(sizes = malloc((n ? n : 1) * sizeof(*sizes)))) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out;
	}

	for (;;) {
		size_t worst = nsteps;
		double worst_p = alpha;

		for (size_t k = 0; k < nsteps; k++) {
			eval_step(se, base, y, k ? starts[k - 1] : 0, starts[k],
			          k + 1 < nsteps ? starts[k + 1] : n, &rule, sizes, &tmp, &ev[k]);
			if (ev[k].v.p >= worst_p) {
				worst_p = ev[k].v.p;
				worst = k;
			}
		}
		if (worst == nsteps)
			break;
		memmove(starts + worst, starts + worst + 1, (nsteps - worst - 1) * sizeof(*starts));
		nsteps--;
	}
	/* A step on a commit whose measured code did not change moves to the
	 * nearest version change in its segments, but only where the rule
	 * confirms it there too and the points it passes over agree: a code
	 * change whose commit the data show unchanged is not the cause, and the
	 * step stays where it is (then not confirmed: the code did not change
	 * there). */
	if (nsteps && !(orig = malloc(nsteps * sizeof(*orig)))) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out;
	}
	if (nsteps)
		memcpy(orig, starts, nsteps * sizeof(*orig));
	if (attribute_steps(se->pt + base, n, starts, nsteps)) {
		bool moved = false;

		for (size_t k = 0; k < nsteps; k++) {
			if (starts[k] == orig[k])
				continue;
			eval_step(se, base, y, k ? starts[k - 1] : 0, starts[k],
			          k + 1 < nsteps ? starts[k + 1] : n, &rule, sizes, &tmp, &ev[k]);
			if (ev[k].v.sign && skipped_agree(y, orig[k], starts[k], &ev[k]))
				moved = true;
			else
				starts[k] = orig[k];
		}
		ctx->nmoved += moved;
		for (size_t k = 0; k < nsteps; k++)
			eval_step(se, base, y, k ? starts[k - 1] : 0, starts[k],
			          k + 1 < nsteps ? starts[k + 1] : n, &rule, sizes, &tmp, &ev[k]);
	}
store:
	st = store_steps(ctx, bench, testbed, se, base, starts, nsteps, ev);
out:
	free(sizes);
	free(tmp.v);
	free(ev);
	free(y);
	free(orig);
	free(starts);
	return st;
}

/* ---- what the last detect fitted (detect_state, schema 7) ------------------------- */

/* Names what decides a series' changes besides its runs and the settings:
 * change it with the fit, the confirmation or the attribution, and the next
 * detect refits every series. */
#define DETECT_RULE "l1-fit window 128 + merges; verdict rule; version attribution; load bound; 4"

struct fit_state {
	struct xo_perf_fitted *f; /* by (bench, testbed) */
	size_t n;
	struct {
		int64_t upto;
		char hash[24];
	} memo[8];
	size_t nmemo;
	char settings[160], hash[24]; /* this detect's */
	int64_t upto;
	struct xo_sql_stmt *put;
	int nskipped;
};

static const char *order_hash_text(struct fit_state *fs, const struct xo_perf_order *ord,
                                   int64_t upto)
{
	size_t i;

	for (i = 0; i < fs->nmemo; i++)
		if (fs->memo[i].upto == upto)
			return fs->memo[i].hash;
	i = fs->nmemo < 8 ? fs->nmemo++ : 7;
	fs->memo[i].upto = upto;
	snprintf(fs->memo[i].hash, sizeof(fs->memo[i].hash), "%016llx",
	         (unsigned long long)xo_perf_order_hash(ord, upto));
	return fs->memo[i].hash;
}

/* Reads detect_state and prepares its upsert; the settings of this detect. */
static enum xo_status fit_state_load(struct xo_perfdb *db, const struct xo_perf_compare_opts *o,
                                     const struct xo_perf_order *ord, struct fit_state *fs)
{
	enum xo_status st;

	snprintf(fs->settings, sizeof(fs->settings), "threshold %.17g alpha %.17g %s; %s",
	         o->threshold, o->alpha,
	         xo_perf_is_count_metric(o->metric) ? "instructions" : "time", DETECT_RULE);
	fs->upto = ord->n ? ord->id[ord->n - 1] : 0;
	snprintf(fs->hash, sizeof(fs->hash), "%s", order_hash_text(fs, ord, fs->upto));
	if ((st = xo_perf_query_fitted(db, &fs->f, &fs->n)))
		return st;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "INSERT INTO detect_state(benchmark_id, testbed_id, results, last_run,"
	                   " settings, order_upto, order_hash) VALUES (?1,?2,?3,?4,?5,?6,?7)"
	                   " ON CONFLICT(benchmark_id, testbed_id) DO UPDATE SET"
	                   " results = excluded.results, last_run = excluded.last_run,"
	                   " settings = excluded.settings, order_upto = excluded.order_upto,"
	                   " order_hash = excluded.order_hash", &fs->put))
		return xo_perf_query_err(db, "writing detect_state");
	return XO_OK;
}

/* The series was fitted by a detect with these settings, over the same runs,
 * in the same order: what that detect stored stands. */
static bool fit_state_fresh(struct fit_state *fs, const struct xo_perf_order *ord, int64_t bench,
                            int64_t testbed, int64_t results, int64_t last_run)
{
	size_t lo = 0, hi = fs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct xo_perf_fitted *f = &fs->f[mid];

		if (f->bench < bench || (f->bench == bench && f->testbed < testbed))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == fs->n || fs->f[lo].bench != bench || fs->f[lo].testbed != testbed)
		return false;
	return fs->f[lo].results == results && fs->f[lo].last_run == last_run &&
	       !strcmp(fs->f[lo].settings, fs->settings) &&
	       !strcmp(fs->f[lo].hash, order_hash_text(fs, ord, fs->f[lo].upto));
}

static enum xo_status fit_state_put(struct xo_perfdb *db, struct fit_state *fs, int64_t bench,
                                    int64_t testbed, int64_t results, int64_t last_run)
{
	xo_sql_bind_int64(fs->put, 1, bench);
	xo_sql_bind_int64(fs->put, 2, testbed);
	xo_sql_bind_int64(fs->put, 3, results);
	xo_sql_bind_int64(fs->put, 4, last_run);
	xo_sql_bind_text(fs->put, 5, fs->settings);
	xo_sql_bind_int64(fs->put, 6, fs->upto);
	xo_sql_bind_text(fs->put, 7, fs->hash);
	if (xo_sql_step(fs->put) != XO_SQL_DONE) {
		xo_sql_reset(fs->put);
		return xo_perf_query_err(db, "writing detect_state");
	}
	xo_sql_reset(fs->put);
	return XO_OK;
}

/* Every series of the store (of --testbed, --filter and the metric), each
 * fitted unless detect_state says the last detect fitted it as it is. */
static enum xo_status fit_all(struct detect_ctx *ctx, struct fit_state *fs,
                              struct xo_perf_series *se, const regex_t *re, int *nseries)
{
	struct xo_perfdb *db = ctx->db;
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;
	int rc;

	if (xo_perf_rows_series_list(db, ctx->o->testbed, &s))
		return xo_perf_query_err(db, "detect");
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW) {
		int64_t bench = xo_sql_column_int64(s, 0), testbed = xo_sql_column_int64(s, 1);
		int64_t nres = xo_sql_column_int64(s, 4), last = xo_sql_column_int64(s, 5);

		if (re && regexec(re, xo_perf_query_text(s, 2), 0, NULL, 0))
			continue;
		if (strcmp(xo_sql_column_text(s, 3) ? xo_perf_query_text(s, 3) : "time",
		           xo_perf_is_count_metric(ctx->o->metric) ? "instructions" : "time"))
			continue; /* the other metric's series */
		(*nseries)++;
		if (fit_state_fresh(fs, &ctx->ord, bench, testbed, nres, last)) {
			fs->nskipped++; /* no new run: its stored changes stand */
			continue;
		}
		if ((st = detect_series(ctx, bench, testbed, se)) ||
		    (st = fit_state_put(db, fs, bench, testbed, nres, last)))
			break;
	}
	if (!st && rc != XO_SQL_DONE)
		st = xo_perf_query_err(db, "detect");
	xo_sql_finalize(s);
	return st;
}

/* What detect did beyond fitting: the order it could not take from the
 * graph, steps it moved onto a code change, series it did not fit again. */
static void print_notes(FILE *t, const struct detect_ctx *ctx, const struct fit_state *fs)
{
	if (ctx->ord.by_date)
		fprintf(t,
		        "\nnote: %zu stretches of history start at a commit whose first parent "
		        "is not in the store; the commit graph cannot order them, so their "
		        "commit dates do\n",
		        ctx->ord.by_date);
	if (ctx->ord.off_main)
		fprintf(t,
		        "\nnote: %zu commits off the main line (side branches) were left out "
		        "of the history; compare or continuous judges them against their base\n",
		        ctx->ord.off_main);
	if (fs->nskipped)
		fprintf(t,
		        "\nnote: %d series had no new run since the last detect with these "
		        "settings: their changes above stand as it stored them (not fitted "
		        "again)\n",
		        fs->nskipped);
	if (ctx->nmoved)
		fprintf(t,
		        "\nnote: in %d series a step fell between two commits of the same "
		        "kernel-source version and was put on the nearest commit whose code "
		        "changed\n",
		        ctx->nmoved);
	if (ctx->nmachine)
		fprintf(t,
		        "\nnote: %d steps fell where the kernel-source version did not change and "
		        "the fastest sample moved within -+%.0f%%: the machine's, not stored\n",
		        ctx->nmachine, 100.0 * ctx->o->threshold);
}

/* A step whose benchmark's code version is the same, and known, on both sides
 * of it is not the code's doing: never "confirmed". An unknown version (empty,
 * or XO_PERF_VERSION_UNKNOWN) lowers nothing (xo_perf_same_code in SQL). */
static const char lower_unchanged_sql[] =
    "UPDATE changes AS ch SET state = 'detected' WHERE state = 'confirmed' AND "
    XO_PERF_CHANGE_VERSION_SQL("commit_id") " = "
    XO_PERF_CHANGE_VERSION_SQL("prev_commit_id") " AND "
    XO_PERF_CHANGE_VERSION_SQL("commit_id") " NOT IN ('', '" XO_PERF_VERSION_UNKNOWN "')";

/*
 * The changes table, the backends under test first, then ref and the peers
 * (never alarms); with --filter only the matching benchmarks, so that
 * `detect --filter` exits 1 for a regression it was asked about only. Each
 * change says whether the kernel source changed across it and whether other
 * processes loaded the machine during the runs on either side of it.
 */
static void print_changes(struct xo_perfdb *db, FILE *out, struct detect_ctx *ctx,
                          const regex_t *re, json_t *jchanges, int *nbusy)
{
	struct xo_sql_stmt *s = NULL;

	if (xo_perf_rows_changes(db, &s))
		return;
	fprintf(out, "%6s %-10s %-11s %-58s %-14s %8s %9s  %s\n", "id", "state", "direction",
	        "benchmark", "commit", "change", "p-value", "notes");
	while (xo_sql_step(s) == XO_SQL_ROW) {
		const char *state = xo_perf_query_text(s, 1);
		const char *dir = xo_perf_query_text(s, 2);
		const char *name = xo_perf_query_text(s, 3);
		const char *dev = xo_sql_column_text(s, 9) ? xo_perf_query_text(s, 9)
		                                            : "";
		const char *vh = xo_perf_query_text(s, 10);
		const char *vb = xo_perf_query_text(s, 11);
		double cores = xo_sql_column_double(s, 13) > 0 ? xo_sql_column_double(s, 13) : 1.0;
		bool busy = !xo_sql_column_null(s, 12) &&
		            xo_sql_column_double(s, 12) > 0.1 * cores;
		bool same_code = xo_perf_same_code(vh, vb);
		enum xo_perf_section sec = xo_perf_section_of(dev[0] ? dev : strrchr(name, '/') ?
		                                                   strrchr(name, '/') + 1 : name);
		char commit[32], notes[160] = "";

		if (re && regexec(re, name, 0, NULL, 0))
			continue;
		if (strcmp(xo_sql_column_text(s, 14) ? xo_perf_query_text(s, 14) : "time",
		           xo_perf_is_count_metric(ctx->o->metric) ? "instructions" : "time"))
			continue; /* the other metric's changes */
		snprintf(commit, sizeof(commit), "%.10s%s", xo_perf_query_text(s, 4),
		         xo_sql_column_int(s, 5) ? "+" : "");
		if (sec != SEC_TEST)
			snprintf(notes, sizeof(notes), "[%s: not an alarm]",
			         xo_perf_section_key[sec]);
		if (same_code)
			snprintf(notes + strlen(notes), sizeof(notes) - strlen(notes),
			         "%s[kernel source unchanged]", notes[0] ? " " : "");
		if (busy) {
			snprintf(notes + strlen(notes), sizeof(notes) - strlen(notes),
			         "%s[load: other processes used %.2f cores]", notes[0] ? " " : "",
			         xo_sql_column_double(s, 12));
			if (!strcmp(state, "confirmed") && sec == SEC_TEST)
				(*nbusy)++;
		}
		fprintf(out, "%6lld %-10s %-11s %-58s %-14s %+7.1f%% %9.2g  %s\n",
		        (long long)xo_sql_column_int64(s, 0), state, dir, name, commit,
		        100.0 * (xo_sql_column_double(s, 6) - 1.0), xo_sql_column_double(s, 7),
		        notes);
		if (jchanges)
			json_array_append_new(
			    jchanges,
			    json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:b, s:b, s:b}",
			              "id", (json_int_t)xo_sql_column_int64(s, 0), "state", state,
			              "direction", dir, "benchmark", name, "section",
			              xo_perf_section_key[sec], "commit", xo_perf_query_text(s, 4),
			              "ratio", xo_sql_column_double(s, 6), "p_value",
			              xo_sql_column_double(s, 7), "kernel_source_changed",
			              !same_code, "load_busy", busy, "alarm",
			              sec == SEC_TEST && !strcmp(state, "confirmed") &&
			                  !strcmp(dir, "regression")));
		if (sec != SEC_TEST)
			continue;
		if (!strcmp(state, "confirmed") && !strcmp(dir, "regression"))
			ctx->nconfirmed_reg++;
		else if (!strcmp(state, "confirmed"))
			ctx->nconfirmed_imp++;
		else if (!strcmp(state, "detected"))
			ctx->ndetected++;
	}
	xo_sql_finalize(s);
}

enum xo_status xo_perf_detect(struct xo_perfdb *db, const struct xo_perf_compare_opts *o, FILE *out,
                              bool *failed)
{
	struct detect_ctx ctx = {.db = db, .o = o, .now = (int64_t)time(NULL)};
	struct fit_state fs = {0};
	struct xo_perf_series se = {0};
	struct xo_sql *h = xo_perfdb_sql(db);
	enum xo_status st = XO_OK;
	regex_t re;
	bool have_re = false;
	int nseries = 0;

	*failed = false;
	if (o->filter) {
		if (regcomp(&re, o->filter, REG_EXTENDED | REG_NOSUB))
			return xo_error(XO_EINVAL, "--filter '%s' is not a valid regex", o->filter);
		have_re = true;
	}
	if (xo_sql_exec(h, xo_sql_dialect(h)->begin_write)) {
		st = xo_perf_query_err(db, "detect");
		goto out_free;
	}
	if ((st = xo_perf_order_load(db, &ctx.ord)) ||
	    (st = fit_state_load(db, o, &ctx.ord, &fs)))
		goto out_rollback;
	if (xo_sql_prepare(h,
	                   "INSERT INTO changes(benchmark_id, testbed_id, commit_id,"
	                   " prev_commit_id, direction, ratio, p_value, state, detected, updated)"
	                   " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?9)"
	                   " ON CONFLICT(benchmark_id, testbed_id, commit_id) DO UPDATE SET"
	                   " prev_commit_id = excluded.prev_commit_id,"
	                   " direction = excluded.direction, ratio = excluded.ratio,"
	                   " p_value = excluded.p_value, updated = excluded.updated,"
	                   " state = CASE WHEN changes.state IN ('accepted','ignored','fixed')"
	                   " THEN changes.state ELSE excluded.state END",
	                   &ctx.upsert) ||
	    xo_sql_prepare(h,
	                   "UPDATE changes SET state = 'fixed' WHERE benchmark_id = ? AND"
	                   " testbed_id = ? AND commit_id = ? AND state = 'confirmed'",
	                   &ctx.fix)) {
		st = xo_perf_query_err(db, "detect");
		goto out_rollback;
	}
	if ((st = fit_all(&ctx, &fs, &se, have_re ? &re : NULL, &nseries)))
		goto out_rollback;
	xo_sql_finalize(ctx.upsert);
	xo_sql_finalize(ctx.fix);
	xo_sql_finalize(fs.put);
	ctx.upsert = ctx.fix = fs.put = NULL;
	if (xo_sql_exec(h, lower_unchanged_sql) ||
	    xo_sql_exec(h, "COMMIT")) {
		st = xo_perf_query_err(db, "detect");
		goto out_rollback;
	}
	{
		json_t *root = o->json ? json_object() : NULL;
		json_t *jch = o->json ? json_array() : NULL;
		FILE *t = xo_perf_text_out(o->json, out);
		int nbusy = 0;

		if (!t) {
			json_decref(root);
			json_decref(jch);
			st = xo_error(XO_ENOMEM, "perf detect: out of memory");
			goto out_free;
		}
		print_changes(db, t, &ctx, have_re ? &re : NULL, jch, &nbusy);
		print_notes(t, &ctx, &fs);
		if (nbusy)
			fprintf(t,
			        "\nwarning: %d confirmed changes sit on runs during which other "
			        "processes used more than a tenth of the machine: threaded timings "
			        "(cpu, "
			        "cl) may have moved for that reason alone; record again when it is "
			        "quiet\n",
			        nbusy);
		if (xo_perf_is_count_metric(o->metric))
			fprintf(t,
			        "\ndetect: %d instruction series, %d steps beyond %.2g%% between "
			        "neighbouring commits; in the table: %d confirmed regressions, %d "
			        "confirmed improvements, %d detected (samples disagree) (backends "
			        "under "
			        "test; ref and peers are listed apart)\n",
			        nseries, ctx.nsteps, 100.0 * o->threshold, ctx.nconfirmed_reg,
			        ctx.nconfirmed_imp, ctx.ndetected);
		else
		fprintf(t,
		        "\ndetect: %d series, %d candidate steps, %d kept by the U test (p < %g / "
		        "(points - 1)); "
		        "in the table: %d confirmed regressions, %d confirmed improvements, %d "
		        "detected below the threshold (backends under test; ref and peers are "
		        "listed apart)\n",
		        nseries, ctx.ncandidates, ctx.nsteps, o->alpha, ctx.nconfirmed_reg,
		        ctx.nconfirmed_imp, ctx.ndetected);
		*failed = ctx.nconfirmed_reg > 0;
		if (root) {
			json_object_set_new(root, "changes", jch);
			json_object_set_new(
			    root, "summary",
			    json_pack("{s:i, s:i, s:i, s:i, s:i, s:i}", "series", nseries,
			              "candidate_steps", ctx.ncandidates, "kept_steps", ctx.nsteps,
			              "confirmed_regressions", ctx.nconfirmed_reg,
			              "confirmed_improvements", ctx.nconfirmed_imp, "detected",
			              ctx.ndetected));
			json_object_set_new(root, "load_warning", json_boolean(nbusy > 0));
			json_object_set_new(root, "regression", json_boolean(*failed));
			xo_perf_json_print(root, out);
			json_decref(root);
		}
		xo_perf_text_done(t, out);
	}
	goto out_free;

out_rollback:
	xo_sql_finalize(ctx.upsert);
	xo_sql_finalize(ctx.fix);
	xo_sql_finalize(fs.put);
	xo_sql_exec(h, "ROLLBACK");
out_free:
	if (have_re)
		regfree(&re);
	xo_perf_order_free(&ctx.ord);
	free(fs.f);
	free(se.samples.v);
	free(se.pt);
	free(se.rows);
	return st;
}

enum xo_status xo_perf_change_set(struct xo_perfdb *db, int64_t id, const char *state, FILE *out)
{
	struct xo_sql *h = xo_perfdb_sql(db);
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;

	if (strcmp(state, "accepted") && strcmp(state, "ignored") && strcmp(state, "fixed") &&
	    strcmp(state, "confirmed") && strcmp(state, "detected"))
		return xo_error(XO_EINVAL, "unknown change state '%s'", state);
	if (xo_sql_prepare(h, "UPDATE changes SET state = ?, updated = ? WHERE id = ?", &s))
		return xo_perf_query_err(db, "updating a change");
	xo_sql_bind_text(s, 1, state);
	xo_sql_bind_int64(s, 2, (int64_t)time(NULL));
	xo_sql_bind_int64(s, 3, id);
	if (xo_sql_step(s) != XO_SQL_DONE)
		st = xo_perf_query_err(db, "updating a change");
	else if (xo_sql_changes(h) != 1)
		st = xo_error(XO_EINVAL, "no change %lld (see `xo perf detect`)", (long long)id);
	else
		fprintf(out, "change %lld: %s\n", (long long)id, state);
	xo_sql_finalize(s);
	s = NULL;
	/* the series' baseline may have moved: the next detect fits it again */
	if (!st &&
	    (xo_sql_prepare(h,
	                    "DELETE FROM detect_state WHERE EXISTS (SELECT 1 FROM changes ch"
	                    " WHERE ch.id = ?1 AND ch.benchmark_id = detect_state.benchmark_id"
	                    " AND ch.testbed_id = detect_state.testbed_id)",
	                    &s) ||
	     (xo_sql_bind_int64(s, 1, id), xo_sql_step(s)) != XO_SQL_DONE))
		st = xo_perf_query_err(db, "updating a change");
	xo_sql_finalize(s);
	return st;
}
