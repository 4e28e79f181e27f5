/*
 * stats.c - the statistics behind every perf verdict: per-result summaries
 * (quantiles, a distribution-free CI of the median), the two-sided
 * Mann-Whitney U test, and the piecewise-constant L1 step fit that `xo perf
 * detect` runs over a history (asv's method). Pure functions, no I/O, so the
 * suites check them against numbers computed independently.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb.h"

double xo_perf_quantile(const double *sorted, size_t n, double q)
{
	double h, f;
	size_t lo;

	if (!n)
		return NAN;
	h = (double)(n - 1) * q;
	lo = (size_t)floor(h);
	if (lo + 1 >= n)
		return sorted[n - 1];
	f = h - (double)lo;
	return sorted[lo] + f * (sorted[lo + 1] - sorted[lo]);
}

double xo_perf_median(double *x, size_t n)
{
	return xo_median(x, n);
}

/* log P(B = k) for B ~ Binomial(n, 1/2). */
static double log_binom_half(size_t n, size_t k)
{
	return lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) -
	       (double)n * log(2.0);
}

/*
 * The interval [x_(j), x_(n+1-j)] (1-based order statistics) covers the
 * median with probability 1 - 2 P(B <= j-1), B ~ Binomial(n, 1/2), whatever
 * the distribution. Take the largest j whose coverage is still >= level; with
 * too few samples (n < 6 for 95%) it is the whole range.
 */
void xo_perf_median_ci_index(size_t n, double level, size_t *lo, size_t *hi)
{
	double cdf = 0.0;
	size_t j = 1;

	if (!n) {
		*lo = *hi = 0;
		return;
	}
	for (size_t cand = 1; cand <= (n + 1) / 2; cand++) {
		cdf += exp(log_binom_half(n, cand - 1)); /* P(B <= cand - 1) */
		if (1.0 - 2.0 * cdf < level)
			break;
		j = cand;
	}
	*lo = j - 1;
	*hi = n - j;
}

void xo_perf_summarize(double *x, size_t n, struct xo_perf_summary *s)
{
	double sum = 0.0;
	size_t lo, hi;

	memset(s, 0, sizeof(*s));
	s->n = n;
	if (!n) {
		s->min = s->q1 = s->median = s->q3 = s->max = s->mean = NAN;
		s->ci_lo = s->ci_hi = NAN;
		return;
	}
	qsort(x, n, sizeof(*x), xo_cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	s->min = x[0];
	s->max = x[n - 1];
	s->q1 = xo_perf_quantile(x, n, 0.25);
	s->median = xo_perf_quantile(x, n, 0.5);
	s->q3 = xo_perf_quantile(x, n, 0.75);
	s->mean = sum / (double)n;
	xo_perf_median_ci_index(n, 0.95, &lo, &hi);
	s->ci_lo = x[lo];
	s->ci_hi = x[hi];
}

/* ---- Mann-Whitney U ----------------------------------------------------------- */

struct ranked {
	double v;
	int from_a;
};

static int cmp_ranked(const void *a, const void *b)
{
	return xo_cmp_double(&((const struct ranked *)a)->v, &((const struct ranked *)b)->v);
}

/*
 * The exact null distribution of U for sample sizes m, n without ties:
 * pmf[k] = P(U = k), k = 0..m n (caller frees; NULL when out of memory).
 * The number of arrangements with U = k follows c(m, n, k) = c(m-1, n, k-n)
 * + c(m, n-1, k) (the largest element is from the first or the second
 * sample). Computed in doubles as fractions of C(m+n, m) with a table over
 * the sizes.
 */
static double *mwu_exact_pmf(size_t m, size_t n)
{
	size_t umax = m * n;
	double *tab, *pmf;

	/* tab[(i * (n + 1) + j) * (umax + 1) + k]: probability for sizes i, j. */
	tab = calloc((m + 1) * (n + 1) * (umax + 1), sizeof(*tab));
	pmf = malloc((umax + 1) * sizeof(*pmf));
	if (!tab || !pmf) {
		free(tab);
		free(pmf);
		return NULL;
	}
#define T(i, j, k) tab[((i) * (n + 1) + (j)) * (umax + 1) + (k)]
	for (size_t i = 0; i <= m; i++)
		for (size_t j = 0; j <= n; j++) {
			if (!i || !j) {
				T(i, j, 0) = 1.0;
				continue;
			}
			/* P_ij(k) = i/(i+j) P_{i-1,j}(k-j) + j/(i+j) P_{i,j-1}(k) */
			for (size_t k = 0; k <= i * j; k++) {
				double p = 0.0;

				if (k >= j)
					p += (double)i / (double)(i + j) * T(i - 1, j, k - j);
				p += (double)j / (double)(i + j) * T(i, j - 1, k);
				T(i, j, k) = p;
			}
		}
	for (size_t k = 0; k <= umax; k++)
		pmf[k] = T(m, n, k);
#undef T
	free(tab);
	return pmf;
}

/* Exact P(U <= u) under H0 (see mwu_exact_pmf). */
static double mwu_exact_cdf(size_t m, size_t n, size_t u)
{
	double *pmf = mwu_exact_pmf(m, n), cdf = 0.0;

	if (!pmf)
		return NAN;
	for (size_t k = 0; k <= u && k <= m * n; k++)
		cdf += pmf[k];
	free(pmf);
	return cdf;
}

double xo_perf_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u_out)
{
	size_t n = na + nb;
	struct ranked *r;
	double ra = 0.0, ties = 0.0, u, mu, var, p;

	if (u_out)
		*u_out = NAN;
	if (!na || !nb)
		return 1.0;
	r = malloc(n * sizeof(*r));
	if (!r)
		return NAN;
	for (size_t i = 0; i < na; i++)
		r[i] = (struct ranked){a[i], 1};
	for (size_t i = 0; i < nb; i++)
		r[na + i] = (struct ranked){b[i], 0};
	qsort(r, n, sizeof(*r), cmp_ranked);
	/* midranks: a run of t equal values i..i+t-1 (0-based) gets rank i + (t+1)/2 */
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && r[j].v == r[i].v)
			j++;
		double t = (double)(j - i), rank = (double)i + (t + 1.0) / 2.0;

		for (size_t k = i; k < j; k++)
			if (r[k].from_a)
				ra += rank;
		ties += t * t * t - t;
		i = j;
	}
	free(r);
	u = ra - (double)na * ((double)na + 1.0) / 2.0;
	if (u_out)
		*u_out = u;
	mu = (double)na * (double)nb / 2.0;
	if (ties == 0.0 && n <= XO_PERF_MWU_EXACT_MAX) {
		/* two-sided: twice the smaller tail, by symmetry of U around mu */
		double uu = u <= mu ? u : (double)na * (double)nb - u;

		p = 2.0 * mwu_exact_cdf(na, nb, (size_t)llround(uu));
		return p > 1.0 ? 1.0 : p;
	}
	var = (double)na * (double)nb / 12.0 *
	      (((double)n + 1.0) - ties / ((double)n * ((double)n - 1.0)));
	if (var <= 0.0)
		return 1.0;
	double z = (fabs(u - mu) - 0.5) / sqrt(var);

	if (z < 0.0)
		z = 0.0;
	p = erfc(z / sqrt(2.0));
	return p > 1.0 ? 1.0 : p;
}

/* ---- the shift of two samples and its confidence interval ------------------------ */

/*
 * The Hodges-Lehmann estimate of the shift from a to b (the median of the
 * na nb differences b_j - a_i) and Moses' distribution-free interval for it:
 * [d_(k), d_(N+1-k)] (1-based order statistics of the N = na nb sorted
 * differences), k the largest with 2 P(U <= k-1) <= 1 - level under H0. It
 * is the set of shifts the two-sided Mann-Whitney test at 1 - level does not
 * reject, so it agrees with the U test the verdicts already use, needs no
 * random numbers (a verdict is reproducible) and assumes only that the two
 * distributions differ by a shift. Exact U distribution up to
 * XO_PERF_MWU_EXACT_MAX samples together, otherwise the normal approximation
 * k = floor(N/2 - z sqrt(N (na + nb + 1) / 12)). Too few samples for the
 * level (k < 1: 4 and 4 at 95% is the least) give lo = -inf, hi = +inf.
 */
void xo_perf_shift_ci(const double *a, size_t na, const double *b, size_t nb, double level,
                      struct xo_perf_shift *s)
{
	size_t nd = na * nb, k = 0;
	double *d;

	s->est = NAN;
	s->lo = -INFINITY;
	s->hi = INFINITY;
	if (!na || !nb || nd > XO_PERF_SHIFT_MAX_PAIRS)
		return;
	d = malloc(nd * sizeof(*d));
	if (!d)
		return;
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			d[i * nb + j] = b[j] - a[i];
	qsort(d, nd, sizeof(*d), xo_cmp_double);
	s->est = xo_perf_quantile(d, nd, 0.5);
	if (na + nb <= XO_PERF_MWU_EXACT_MAX) {
		double *pmf = mwu_exact_pmf(na, nb), cdf = 0.0;

		if (pmf) {
			/* cdf = P(U <= k) after the step that admits k + 1 */
			for (size_t c = 0; c < nd; c++) {
				cdf += pmf[c];
				if (2.0 * cdf > 1.0 - level)
					break;
				k = c + 1;
			}
			free(pmf);
		}
	} else {
		double lo = 0.0, hi = 40.0, z, c;

		for (int i = 0; i < 200; i++) { /* z with P(|Z| > z) = 1 - level */
			double mid = 0.5 * (lo + hi);

			if (erfc(mid / sqrt(2.0)) > 1.0 - level)
				lo = mid;
			else
				hi = mid;
		}
		z = 0.5 * (lo + hi);
		c = (double)nd / 2.0 -
		    z * sqrt((double)nd * ((double)na + (double)nb + 1.0) / 12.0);
		k = c >= 1.0 ? (size_t)floor(c) : 0;
	}
	if (k >= 1 && k <= nd / 2) {
		s->lo = d[k - 1];
		s->hi = d[nd - k];
	}
	free(d);
}

/* ---- step detection ----------------------------------------------------------- */

/* Sum |y_i - median| over y[i..j). */
static double l1_cost(const double *y, size_t i, size_t j, double *tmp)
{
	double med, c = 0.0;

	memcpy(tmp, y + i, (j - i) * sizeof(*tmp));
	med = xo_perf_median(tmp, j - i);
	for (size_t k = i; k < j; k++)
		c += fabs(y[k] - med);
	return c;
}

/* The segment starts of a fit from its back pointers (from[j]: where the
 * last segment of the best fit of y[0..j) starts), in increasing order;
 * returns how many. */
size_t xo_perf_steps_walk(const size_t *from, size_t n, size_t *starts)
{
	size_t k = 0;

	for (size_t j = n; j > 0; j = from[j])
		if (from[j] > 0)
			starts[k++] = from[j];
	for (size_t i = 0; i < k / 2; i++) {
		size_t t = starts[i];

		starts[i] = starts[k - 1 - i];
		starts[k - 1 - i] = t;
	}
	return k;
}

/*
 * Exact minimizer by dynamic programming over the end of the last segment
 * (O(n^2) segments, each costed in O(len log len)). The criterion is
 * BIC-like for Laplace errors of known scale: the negative log-likelihood of
 * a segment is sum |y - m| / scale (plus a constant), and each segment adds
 * two parameters (its level and where it starts). Plain BIC charges (2/2)
 * ln n for them; with the boundaries searched over all O(n^2) placements that
 * overfits (simulated on Gaussian noise: about half of the 16-point series
 * get a false step), so the charge is XO_PERF_STEP_BETA = 2 times that
 * (about 9% of 16-point noise series get a candidate step, which the U test
 * of analyze.c then has to confirm). This is the definition; steps.c
 * xo_perf_steps computes the same optimum fast, and the suites hold the two
 * to each other.
 */
size_t xo_perf_steps_exhaustive(const double *y, size_t n, double scale, size_t *starts)
{
	double *best, *tmp, pen;
	size_t *from, k = 0;

	if (n < 2 || !(scale > 0.0))
		return 0;
	best = malloc((n + 1) * sizeof(*best));
	from = malloc((n + 1) * sizeof(*from));
	tmp = malloc(n * sizeof(*tmp));
	if (!best || !from || !tmp)
		goto out_free;
	pen = XO_PERF_STEP_BETA * log((double)n);
	best[0] = 0.0;
	from[0] = 0;
	for (size_t j = 1; j <= n; j++) {
		best[j] = INFINITY;
		from[j] = 0;
		for (size_t i = 0; i < j; i++) {
			double f = best[i] + l1_cost(y, i, j, tmp) / scale + pen;

			if (f < best[j]) {
				best[j] = f;
				from[j] = i;
			}
		}
	}
	k = xo_perf_steps_walk(from, n, starts);
out_free:
	free(tmp);
	free(from);
	free(best);
	return k;
}

uint64_t xo_perf_fnv(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* ---- Welch's t test (run-level rule of compare) ----------------------------------- */

/*
 * The continued fraction of the regularized incomplete beta function I_x(a, b)
 * (modified Lentz evaluation; converges fast for x < (a + 1) / (a + b + 2),
 * the other side goes through the symmetry I_x(a, b) = 1 - I_(1-x)(b, a)).
 */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0), h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1.0 / d;
	h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, num, del;

		num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
		d = 1.0 + num * d;
		c = 1.0 + num / c;
		d = fabs(d) < tiny ? 1.0 / tiny : 1.0 / d;
		if (fabs(c) < tiny)
			c = tiny;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
		d = 1.0 + num * d;
		c = 1.0 + num / c;
		d = fabs(d) < tiny ? 1.0 / tiny : 1.0 / d;
		if (fabs(c) < tiny)
			c = tiny;
		del = d * c;
		h *= del;
		if (fabs(del - 1.0) < 1e-15)
			break;
	}
	return h;
}

double xo_perf_beta_inc(double a, double b, double x)
{
	double front;

	if (!(x > 0.0))
		return 0.0;
	if (!(x < 1.0))
		return 1.0;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1.0) / (a + b + 2.0))
		return front * beta_cf(a, b, x) / a;
	return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

double xo_perf_welch(const double *a, size_t na, const double *b, size_t nb, double *t_out,
                     double *df_out)
{
	double ma = 0.0, mb = 0.0, va = 0.0, vb = 0.0, se2, t, df;

	if (t_out)
		*t_out = 0.0;
	if (df_out)
		*df_out = 0.0;
	if (na < 2 || nb < 2)
		return 1.0;
	for (size_t i = 0; i < na; i++)
		ma += a[i];
	for (size_t i = 0; i < nb; i++)
		mb += b[i];
	ma /= (double)na;
	mb /= (double)nb;
	for (size_t i = 0; i < na; i++)
		va += (a[i] - ma) * (a[i] - ma);
	for (size_t i = 0; i < nb; i++)
		vb += (b[i] - mb) * (b[i] - mb);
	va /= (double)(na - 1) * (double)na; /* squared standard errors of the means */
	vb /= (double)(nb - 1) * (double)nb;
	se2 = va + vb;
	if (!(se2 > 0.0)) /* both sides constant: any difference is certain */
		return mb != ma ? 0.0 : 1.0;
	t = (mb - ma) / sqrt(se2);
	/* Welch-Satterthwaite degrees of freedom */
	df = se2 * se2 / (va * va / (double)(na - 1) + vb * vb / (double)(nb - 1));
	if (t_out)
		*t_out = t;
	if (df_out)
		*df_out = df;
	/* P(|T_df| > |t|) = I_(df / (df + t^2))(df / 2, 1 / 2) */
	return xo_perf_beta_inc(0.5 * df, 0.5, df / (df + t * t));
}
