/*
 * verdict.c - the decision rule (DESIGN section 9; docs/perf.md, "The
 * decision rule"). Given two sides, each its timing samples grouped by run:
 *
 * 1. Load. A side is loaded when in one of its runs q90 of the samples lies
 *    more than threshold above the run's fastest sample (xo_perf_side_loaded;
 *    within a run: offsets between runs are the run-level test's). Other
 *    work on the machine only adds time to a sample (a descheduled call is
 *    slower, never faster), so under load the samples get a long right tail
 *    and the median can move by any amount while the floor stays where
 *    the code puts it.
 *    Whether a side is loaded is read from the samples alone; the recorded
 *    CPU figures enter only at step 7.
 * 2. The statistic. Quiet: every sample, and each run's median as its run
 *    value. Loaded (either side): each run gives only its faster half (the
 *    samples at or below its median) and its minimum as its run value.
 * 3. A change: the two-sided Mann-Whitney U test on the pooled samples kept
 *    gives p < alpha, AND the change of their medians exceeds max(threshold,
 *    IQR/median of the base's kept samples, and, when a side has a single
 *    run, the run-to-run noise of the series).
 * 4. With two or more runs a side, the run values must show it too (Welch's
 *    t test on their logs at p < 0.05 / family, xo_perf_runs_confirm): one
 *    run's offset moves all of its samples, which the U test cannot see.
 * 5. Loaded: the floor must move with it: the least sample of the head must
 *    differ from the least of the base by more than threshold, in the same
 *    direction. A median step that the minima do not show is load, not code.
 * 6. SAME: the 95% Hodges-Lehmann interval of log(head/base) of the kept
 *    samples (joined with the run values' interval when both sides have
 *    several runs, widened by the series' run-to-run noise when not) lies
 *    within -+threshold. Neither a change nor SAME: UNKNOWN, with the reason.
 * 7. Load between the sides. Where both sides' load is known (the cores other
 *    processes took during their runs, runs.others_cpu), a change is the
 *    code's only when it exceeds what that load difference alone can explain
 *    (xo_perf_load_explains): T threads on N cores with c taken by others get
 *    at most min(T, N - c) cores, so wall time can grow by up to
 *    f(c) = T / min(T, max(N - c, 0.1)); with c each side's least loaded
 *    run (a side's fastest sample comes at best from it), a head slower by
 *    no more than f(c_head) / f(c_base) (on the judged statistic or the
 *    minima), or faster by no more than the inverse, is UNKNOWN
 *    ("[load: ...]"). The same samples and the same recorded load get the
 *    same verdict in every command.
 *
 * A deterministic metric (instruction counts) has its own rule,
 * xo_perf_judge_counts: every pair of samples must agree.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb.h"
#include "verdict.h"

/* ---- the two rules the judge applies, in the module of the rule ---- */

void xo_perf_judge_counts(const double *b, size_t nb, const double *h, size_t nh,
                          double threshold, int *sign, double *lo, double *hi)
{
	double bmin = INFINITY, bmax = -INFINITY, hmin = INFINITY, hmax = -INFINITY;

	for (size_t i = 0; i < nb; i++) {
		bmin = fmin(bmin, b[i]);
		bmax = fmax(bmax, b[i]);
	}
	for (size_t i = 0; i < nh; i++) {
		hmin = fmin(hmin, h[i]);
		hmax = fmax(hmax, h[i]);
	}
	*sign = 0;
	*lo = -INFINITY;
	*hi = INFINITY;
	if (!nb || !nh || !(bmin > 0.0) || !(hmin > 0.0))
		return;
	*lo = log(hmin / bmax);
	*hi = log(hmax / bmin);
	if (expm1(*lo) > threshold)
		*sign = 1;
	else if (expm1(*hi) < -threshold)
		*sign = -1;
}

/*
 * The run-level rule (compare under load). Each run has its own
 * offset (load, frequency, placement) that moves all of its samples, which
 * the U test on the pooled samples cannot see; on the shared 2-core VM run
 * medians of one tree differ by 30% and more. The rule before this one asked
 * every head run to lie beyond every base run with 1 / C(nb + nh, nb) below
 * 0.05 / m: one loaded run among 6 + 6 blocked a 2x step (bisect under load
 * 9-15 found 2 of 4 planted steps), and over m > 46 series 6 runs a side could
 * never pass at all (the least p of a rank test on 6 + 6 values is 1/924).
 * Here the runs are the unit: Welch's t test on the log run medians (a
 * run's offset is one draw of the run-to-run noise, which the test estimates
 * from the runs themselves, unequal spreads allowed) at p < 0.05 / m over the
 * m series of the section compared this way, times the looks continuous and
 * bisect took at these rounds (Bonferroni, as before; a repeated look on more
 * rounds could otherwise fish for a p below the level), the
 * t's sign and the Hodges-Lehmann shift of the log run medians both in the
 * direction the samples found. One loaded run widens the spread, it does not
 * veto. False positives measured on synthetic runs (suites/test_perfdb.c
 * test_runs_rule_synthetic) are stated in docs/perf.md.
 */
#define RUNS_HL_MAX_PAIRS 65536 /* 256 x 256 runs */

bool xo_perf_runs_confirm(const double *base_runs, size_t nb, const double *head_runs, size_t nh,
                          int sign, int m, double *p_out, char *why, size_t why_size)
{
	double *lb = calloc(nb + 1, sizeof(*lb)), *lh = calloc(nh + 1, sizeof(*lh));
	double p = 1.0, t = 0.0, df = 0.0, family = 0.05 / (double)(m > 0 ? m : 1);
	struct xo_perf_shift hl = {NAN, -INFINITY, INFINITY};
	size_t kb = 0, kh = 0;
	bool ok = false;

	if (why_size)
		why[0] = '\0';
	if (lb && lh) {
		for (size_t i = 0; i < nb; i++)
			if (base_runs[i] > 0.0)
				lb[kb++] = log(base_runs[i]);
		for (size_t i = 0; i < nh; i++)
			if (head_runs[i] > 0.0)
				lh[kh++] = log(head_runs[i]);
		p = xo_perf_welch(lb, kb, lh, kh, &t, &df);
		/* the shift's direction: Hodges-Lehmann's over every pair, or,
		 * where pairs are too many to sort at each look (detect's long
		 * segments), the difference of the medians (xo_perf_median sorts
		 * lb and lh: after Welch) */
		if (kb * kh <= RUNS_HL_MAX_PAIRS)
			xo_perf_shift_ci(lb, kb, lh, kh, 0.95, &hl);
		else if (kb && kh)
			hl.est = xo_perf_median(lh, kh) - xo_perf_median(lb, kb);
	}
	if (p_out)
		*p_out = p;
	if (p < family && (sign > 0 ? t > 0.0 && hl.est > 0.0 : t < 0.0 && hl.est < 0.0))
		ok = true;
	else if (p < family)
		snprintf(why, why_size, "  [runs disagree with the samples: %zu base, %zu head runs]",
		         kb, kh);
	else
		snprintf(why, why_size,
		         "  [runs cannot show it: Welch p %.2g on %zu+%zu run medians, needs < %.2g "
		         "over %d series x looks: more rounds]",
		         p, kb, kh, family, m > 0 ? m : 1);
	free(lb);
	free(lh);
	return ok;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

bool xo_perf_side_loaded(const struct xo_perf_sample_set *s, double threshold)
{
	double *t = malloc((s->nx + 1) * sizeof(*t));
	bool loaded = false;
	size_t at = 0;

	if (!t)
		return false;
	for (size_t r = 0; r < s->nruns && !loaded; r++) {
		size_t n = s->n ? s->n[r] : s->nx;

		if (n >= 2) {
			memcpy(t, s->x + at, n * sizeof(*t));
			qsort(t, n, sizeof(*t), cmp_double);
			loaded =
			    t[0] > 0.0 && xo_perf_quantile(t, n, 0.9) > (1.0 + threshold) * t[0];
		}
		at += n;
	}
	free(t);
	return loaded;
}

double xo_perf_load_factor(double others, double threads, double cores)
{
	if (!(cores > 0.0) || !(others >= 0.0))
		return 1.0;
	if (!(threads > 0.0))
		threads = cores;
	return threads / fmin(threads, fmax(cores - others, XO_PERF_LOAD_FLOOR));
}

double xo_perf_load_explains(const struct xo_perf_load *base, const struct xo_perf_load *head,
                             int sign, double threads, double cores)
{
	double x;

	if (!base || !head)
		return 1.0;
	x = xo_perf_load_factor(head->least, threads, cores) /
	    xo_perf_load_factor(base->least, threads, cores);
	if (sign < 0)
		x = 1.0 / x;
	return fmax(1.0, x);
}

double xo_perf_bench_threads(const char *dev, const char *describe, double cores)
{
	const char *line = describe, *t;

	if (dev && !strcmp(dev, "ref"))
		return 1.0;
	if (!dev || strncmp(dev, "cpu", 3))
		return cores;
	/* the testbed's description: one line a device, "cpu: ... threads=N, ..." */
	while (line && *line) {
		const char *end = strchr(line, '\n');

		if (!strncmp(line, "cpu:", 4) && (t = strstr(line, "threads=")) &&
		    (!end || t < end)) {
			double n = atof(t + 8);

			return n >= 1.0 ? n : cores;
		}
		line = end ? end + 1 : NULL;
	}
	return cores;
}

/* Step 7: a change within what the sides' load difference can explain is
 * not the code's. */
static void load_bound(const struct xo_perf_sample_set *b, const struct xo_perf_sample_set *h,
                       const struct xo_perf_rule *r, struct xo_perf_verdict *v)
{
	double x = xo_perf_load_explains(b->load, h->load, v->sign, r->threads, r->cores);
	double ratio = v->sign > 0 ? fmin(1.0 + v->change, 1.0 + v->min_change)
	                           : fmin(1.0 / (1.0 + v->change), 1.0 / (1.0 + v->min_change));

	if (x <= 1.0 || ratio > x)
		return;
	snprintf(v->why, sizeof(v->why),
	         "  [load: other processes used %.2f vs %.2f cores: up to %.1fx from load alone]",
	         b->load->least, h->load->least, x);
	v->sign = 0;
}

/* The 95% Hodges-Lehmann/Moses interval of log(h) - log(b); values that
 * are not positive have no log and are left out. */
static void log_shift(const double *b, size_t nb, const double *h, size_t nh, double *lo,
                      double *hi)
{
	double *lb = malloc((nb + 1) * sizeof(*lb)), *lh = malloc((nh + 1) * sizeof(*lh));
	struct xo_perf_shift sh = {NAN, -INFINITY, INFINITY};
	size_t mb = 0, mh = 0;

	if (lb && lh) {
		for (size_t i = 0; i < nb; i++)
			if (b[i] > 0.0)
				lb[mb++] = log(b[i]);
		for (size_t i = 0; i < nh; i++)
			if (h[i] > 0.0)
				lh[mh++] = log(h[i]);
		xo_perf_shift_ci(lb, mb, lh, mh, 0.95, &sh);
	}
	*lo = sh.lo;
	*hi = sh.hi;
	free(lb);
	free(lh);
}

/* A side's kept samples (keep: room for s->nx), its run values (runs: room
 * for s->nruns) and least sample. false when out of memory. */
struct kept {
	double *x, *runs, min;
	size_t nx, nruns;
};

static bool side_keep(const struct xo_perf_sample_set *s, bool loaded, struct kept *k)
{
	double *tmp = malloc((s->nx + 1) * sizeof(*tmp));
	size_t at = 0;

	k->x = malloc((s->nx + 1) * sizeof(*k->x));
	k->runs = malloc((s->nruns + 1) * sizeof(*k->runs));
	k->nx = k->nruns = 0;
	k->min = INFINITY;
	if (!tmp || !k->x || !k->runs) {
		free(tmp);
		return false;
	}
	for (size_t r = 0; r < s->nruns; r++) {
		size_t n = s->n ? s->n[r] : s->nx;
		double med;

		if (!n)
			continue;
		memcpy(tmp, s->x + at, n * sizeof(*tmp));
		med = xo_perf_median(tmp, n); /* sorts tmp */
		for (size_t i = 0; i < n; i++)
			if (!loaded || s->x[at + i] <= med)
				k->x[k->nx++] = s->x[at + i];
		k->runs[k->nruns++] = loaded ? tmp[0] : med;
		k->min = fmin(k->min, tmp[0]);
		at += n;
	}
	free(tmp);
	return true;
}

static void judge_counts(const struct xo_perf_sample_set *b, const struct xo_perf_sample_set *h,
                         const struct xo_perf_rule *r, struct xo_perf_verdict *v)
{
	double *t = malloc((b->nx + h->nx + 1) * sizeof(*t));

	xo_perf_judge_counts(b->x, b->nx, h->x, h->nx, r->threshold, &v->sign, &v->lo, &v->hi);
	if (t) {
		memcpy(t, b->x, b->nx * sizeof(*t));
		v->base = xo_perf_median(t, b->nx);
		memcpy(t, h->x, h->nx * sizeof(*t));
		v->head = xo_perf_median(t, h->nx);
		v->change = v->head / v->base - 1.0;
	}
	free(t);
	v->bar = r->threshold;
	v->same = isfinite(v->lo) && isfinite(v->hi) && expm1(v->lo) >= -r->threshold &&
	          expm1(v->hi) <= r->threshold;
}

void xo_perf_verdict_judge(const struct xo_perf_sample_set *base,
                           const struct xo_perf_sample_set *head, const struct xo_perf_rule *r,
                           struct xo_perf_verdict *v)
{
	struct kept kb = {0}, kh = {0};
	struct xo_perf_summary sb, sh;
	bool multi = base->nruns >= 2 && head->nruns >= 2;
	double spread, noise;

	memset(v, 0, sizeof(*v));
	v->p = NAN;
	v->change = v->min_change = NAN;
	v->lo = -INFINITY;
	v->hi = INFINITY;
	if (!base->nx || !head->nx) {
		snprintf(v->why, sizeof(v->why), "  [no samples on one side]");
		return;
	}
	if (r->counts) {
		judge_counts(base, head, r, v);
		return;
	}
	v->loaded =
	    xo_perf_side_loaded(base, r->threshold) || xo_perf_side_loaded(head, r->threshold);
	if (!side_keep(base, v->loaded, &kb) || !side_keep(head, v->loaded, &kh)) {
		snprintf(v->why, sizeof(v->why), "  [out of memory]");
		goto out;
	}
	v->p = xo_perf_mann_whitney(kb.x, kb.nx, kh.x, kh.nx, NULL);
	if (r->interval)
		log_shift(kb.x, kb.nx, kh.x, kh.nx, &v->lo, &v->hi);
	xo_perf_summarize(kb.x, kb.nx, &sb); /* sorts: after the tests that read runs */
	xo_perf_summarize(kh.x, kh.nx, &sh);
	v->base = sb.median;
	v->head = sh.median;
	v->change = sh.median / sb.median - 1.0;
	v->min_change = kh.min / kb.min - 1.0;
	spread = sb.median > 0.0 ? (sb.q3 - sb.q1) / sb.median : 0.0;
	noise = multi ? 0.0 : r->noise;
	v->bar = fmax(r->threshold, spread);
	if (r->interval && multi) {
		double rlo, rhi;

		log_shift(kb.runs, kb.nruns, kh.runs, kh.nruns, &rlo, &rhi);
		v->lo = fmin(v->lo, rlo);
		v->hi = fmax(v->hi, rhi);
	} else if (r->interval && noise > 0.0) {
		v->lo -= log1p(noise);
		v->hi += log1p(noise);
	}
	v->same = isfinite(v->lo) && isfinite(v->hi) && expm1(v->lo) >= -r->threshold &&
	          expm1(v->hi) <= r->threshold;
	if (!(v->p < r->alpha && fabs(v->change) > v->bar))
		goto out;
	v->sign = v->change > 0.0 ? 1 : -1;
	if (fabs(v->change) <= noise) {
		/* significant for these samples, not beyond what runs of an
		 * unchanged tree do: say so rather than hide it */
		v->sign = 0;
		snprintf(v->why, sizeof(v->why), "  [within run-to-run noise %.0f%%]",
		         100.0 * noise);
		v->bar = noise;
		goto out;
	}
	if (multi && !xo_perf_runs_confirm(kb.runs, kb.nruns, kh.runs, kh.nruns, v->sign, r->family,
	                                   NULL, v->why, sizeof(v->why))) {
		char *m = strstr(v->why, "run medians");

		if (m && v->loaded) /* the run values were the minima */
			memmove(m + 10, m + 11, strlen(m + 11) + 1), memcpy(m + 4, "minima", 6);
		v->sign = 0;
		goto out;
	}
	if (v->loaded && !(v->sign * v->min_change > r->threshold)) {
		snprintf(v->why, sizeof(v->why),
		         "  [load: median %+.1f%% but the fastest sample moved %+.1f%%, within "
		         "-+%.0f%%: not the code]",
		         100.0 * v->change, 100.0 * v->min_change, 100.0 * r->threshold);
		v->sign = 0;
	}
	if (v->sign)
		load_bound(base, head, r, v);
out:
	free(kb.x);
	free(kb.runs);
	free(kh.x);
	free(kh.runs);
}

const char *xo_perf_verdict_word(const struct xo_perf_verdict *v)
{
	if (v->sign)
		return v->sign > 0 ? "SLOWER" : "FASTER";
	return v->same ? "SAME" : "UNKNOWN";
}
