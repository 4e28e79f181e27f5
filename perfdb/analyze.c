/*
 * analyze.c - what compare (compare.c) and detect (detect.c) share: the
 * history order of stored rows, the run-to-run noise of a series
 * (xo_perf_series_noise), number formats. Whether a change is real is
 * decided by the one rule of verdict.c (xo_perf_verdict_judge), for compare
 * and detect alike; compare and detect gather the samples it judges, and
 * lower a change whose kernel source is the same on both sides.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb.h"
#include "analyze.h"
#include "query.h"
#include "sql.h"
#include "verdict.h"

/* z with P(|Z| > z) = alpha for a standard normal Z, by bisection on erfc. */
double xo_perf_z_two_sided(double alpha)
{
	double lo = 0.0, hi = 40.0;

	for (int i = 0; i < 200; i++) {
		double mid = 0.5 * (lo + hi);

		if (erfc(mid / sqrt(2.0)) > alpha)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

/* "123.4 us" */
void xo_perf_fmt_time(double s, char *buf, size_t size)
{
	if (!isfinite(s))
		snprintf(buf, size, "-");
	else if (s < 1e-6)
		snprintf(buf, size, "%.1f ns", s * 1e9);
	else if (s < 1e-3)
		snprintf(buf, size, "%.2f us", s * 1e6);
	else if (s < 1.0)
		snprintf(buf, size, "%.3f ms", s * 1e3);
	else
		snprintf(buf, size, "%.3f s", s);
}

/* "1.234 M" instructions */
void xo_perf_fmt_count(double c, char *buf, size_t size)
{
	if (!isfinite(c))
		snprintf(buf, size, "-");
	else if (c < 1e4)
		snprintf(buf, size, "%.0f", c);
	else if (c < 1e6)
		snprintf(buf, size, "%.2f k", c / 1e3);
	else if (c < 1e9)
		snprintf(buf, size, "%.3f M", c / 1e6);
	else
		snprintf(buf, size, "%.3f G", c / 1e9);
}

bool xo_perf_is_count_metric(const char *metric)
{
	return metric && !strcmp(metric, "instructions");
}


/* The history order of the store, read on first use (a compare that never
 * needs it never reads the commits). NULL when it cannot be read. */
static const struct xo_perf_order *order_get(struct xo_perfdb *db, struct xo_perf_order *ord)
{
	if (!ord->loaded && xo_perf_order_load(db, ord) != XO_OK)
		return NULL;
	return ord;
}

/*
 * The run-to-run noise of a series, as the relative change two runs of an
 * unchanged tree stay within at the two-sided level alpha. The samples of one
 * run share that run's offset (placement in memory, frequency, the
 * hypervisor), which the U test on the samples cannot see: two runs of an
 * unchanged tree differ "significantly" as soon as their offsets differ. With
 * k >= 4 complete runs of the benchmark on the base's testbed up to the base
 * run (3 successive differences; fewer give no usable spread), in history
 * order (the commit graph's, order.c, then run: the runs of one commit side
 * by side, so an A/B/A/B experiment is one step, not three), the log run
 * medians m_i give sigma = 1.4826 median |m_i - m_(i-1)| / sqrt 2 (the robust
 * sd of a difference over sqrt 2; a real step in the history moves only one
 * difference); a difference of two runs has sd sqrt 2 sigma, so the bar is
 * expm1(z(alpha) sqrt 2 sigma), z(0.002) = 3.09. 0 when not known.
 */
double xo_perf_series_noise(struct xo_perfdb *db, struct xo_perf_order *ord, int64_t bench,
                            int64_t testbed, int64_t upto_run, double alpha, int64_t skip_commit)
{
	const struct xo_perf_order *o = order_get(db, ord);
	struct xo_perf_placed *m = NULL;
	double *d = NULL, bar = 0.0;
	size_t n = 0, k = 0;

	if (!o)
		return 0.0;
	xo_perf_query_run_medians(db, o, bench, testbed, upto_run, skip_commit, &m, &n);
	if (n >= 4 && (d = malloc(n * sizeof(*d)))) {
		qsort(m, n, sizeof(*m), xo_perf_hist_key_cmp);
		for (size_t i = 1; i < n; i++)
			d[k++] = fabs(m[i].v - m[i - 1].v);
		bar = expm1(xo_perf_z_two_sided(alpha) * sqrt(2.0) * 1.4826 * xo_perf_median(d, k) /
		            sqrt(2.0));
	}
	free(d);
	free(m);
	return bar;
}

const char *const xo_perf_section_key[SEC_COUNT] = {"test", "ref", "peer"};
