/*
 * analyze.c - verdicts over stored runs: `xo perf compare` (two runs,
 * Google Benchmark compare.py style, plus what differs between their
 * testbeds) and `xo perf detect` (asv-style step detection over each
 * (benchmark, testbed) history, written to the changes table), and the state
 * changes a person makes (accept, ignore, fix).
 *
 * A change is real when both hold: the two-sided Mann-Whitney U test on the
 * raw samples gives p < alpha (0.002), and the medians differ by more than
 * max(threshold, noise), noise = IQR / median of the base samples and, once
 * the series has 4 runs, the run-to-run noise of the series (series_noise
 * below).
 */
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfdb.h"

static enum xo_status sql_err(struct xo_perfdb *db, const char *what)
{
	return xo_error(XO_EDB, "%s: %s", what, sqlite3_errmsg(xo_perfdb_sqlite(db)));
}

/* A growable array of doubles. */
struct vec {
	double *v;
	size_t n, cap;
};

static bool vec_push(struct vec *a, double x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		double *v = realloc(a->v, cap * sizeof(*v));

		if (!v)
			return false;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return true;
}

static enum xo_status load_samples(struct xo_perfdb *db, int64_t result_id, struct vec *out)
{
	sqlite3_stmt *s = NULL;
	int rc;

	out->n = 0;
	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db),
	                       "SELECT wall_s FROM samples WHERE result_id = ? ORDER BY idx", -1,
	                       &s, NULL))
		return sql_err(db, "reading samples");
	sqlite3_bind_int64(s, 1, result_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (!vec_push(out, sqlite3_column_double(s, 0))) {
			sqlite3_finalize(s);
			return xo_error(XO_ENOMEM, "perf: out of memory");
		}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? XO_OK : sql_err(db, "reading samples");
}

/* "123.4 us" */
static void fmt_time(double s, char *buf, size_t size)
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

struct verdict {
	double base_med, head_med, change, p, noise;
	int sign; /* +1 regression (slower), -1 improvement, 0 no change */
};

/* The two-part test of the file comment; b is sorted in place. */
static void judge(double *b, size_t nb, double *h, size_t nh, double threshold, double alpha,
                  struct verdict *v)
{
	struct xo_perf_summary sb, sh;
	double bar;

	xo_perf_summarize(b, nb, &sb);
	xo_perf_summarize(h, nh, &sh);
	v->base_med = sb.median;
	v->head_med = sh.median;
	v->change = sh.median / sb.median - 1.0;
	v->p = xo_perf_mann_whitney(b, nb, h, nh, NULL);
	v->noise = sb.median > 0 ? (sb.q3 - sb.q1) / sb.median : 0.0;
	bar = threshold > v->noise ? threshold : v->noise;
	v->sign = 0;
	if (v->p < alpha && fabs(v->change) > bar)
		v->sign = v->change > 0 ? 1 : -1;
}

/* ---- compare ------------------------------------------------------------------- */

/* z with P(|Z| > z) = alpha for a standard normal Z, by bisection on erfc. */
static double z_two_sided(double alpha)
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

/*
 * The run-to-run noise of a series, as the relative change two runs of an
 * unchanged tree stay within at the two-sided level alpha. The samples of one
 * run share that run's offset (placement in memory, frequency, the
 * hypervisor), which the U test on the samples cannot see: two runs of an
 * unchanged tree differ "significantly" as soon as their offsets differ. With
 * k >= 4 complete runs of the benchmark on the base's testbed up to the base
 * run (3 successive differences; fewer give no usable spread), in history
 * order (commit date, then run: the runs of one commit side by side, so an
 * A/B/A/B experiment is one step, not three), the log run medians m_i give
 * sigma = 1.4826 median |m_i - m_(i-1)| / sqrt 2 (the robust sd of a
 * difference over sqrt 2; a real step in the history moves only one
 * difference); a difference of two runs has sd sqrt 2 sigma, so the bar is
 * expm1(z(alpha) sqrt 2 sigma), z(0.002) = 3.09. 0 when not known.
 */
static double series_noise(struct xo_perfdb *db, int64_t bench, int64_t testbed, int64_t upto_run,
                           double alpha)
{
	sqlite3_stmt *s = NULL;
	struct vec m = {0};
	double *d = NULL, bar = 0.0;
	size_t k = 0;

	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db),
	                       "SELECT res.median FROM results res"
	                       " JOIN runs ru ON ru.id = res.run_id"
	                       " JOIN commits c ON c.id = ru.commit_id"
	                       " WHERE res.benchmark_id = ? AND ru.testbed_id = ? AND ru.id <= ?"
	                       " AND ru.state = 'complete' AND res.median > 0"
	                       " ORDER BY c.date, c.id, ru.id",
	                       -1, &s, NULL))
		return 0.0;
	sqlite3_bind_int64(s, 1, bench);
	sqlite3_bind_int64(s, 2, testbed);
	sqlite3_bind_int64(s, 3, upto_run);
	while (sqlite3_step(s) == SQLITE_ROW)
		if (!vec_push(&m, log(sqlite3_column_double(s, 0))))
			break;
	sqlite3_finalize(s);
	if (m.n >= 4 && (d = malloc(m.n * sizeof(*d)))) {
		for (size_t i = 1; i < m.n; i++)
			d[k++] = fabs(m.v[i] - m.v[i - 1]);
		bar = expm1(z_two_sided(alpha) * sqrt(2.0) * 1.4826 * xo_perf_median(d, k) /
		            sqrt(2.0));
	}
	free(d);
	free(m.v);
	return bar;
}

static const char *const testbed_fields[] = {
    "hostname",  "cpu_model",    "cores",         "os",          "compiler",    "cflags",
    "blas_name", "blas_version", "blas_coretype", "blas_config", "cl_platform", "cl_device",
    "cl_driver", "env",
};
#define NFIELDS (sizeof(testbed_fields) / sizeof(testbed_fields[0]))

struct run_info {
	int64_t id, testbed_id, started;
	double load_start, load_end; /* 1-minute load average, -1 unknown */
	double others;               /* cores other processes used, -1 unknown */
	char sha[48], subject[256], note[256];
	bool dirty;
	char field[NFIELDS][1024];
};

static enum xo_status load_run(struct xo_perfdb *db, int64_t id, struct run_info *r)
{
	char sql[1024] = "SELECT c.sha, c.subject, c.dirty, r.started, r.note, r.testbed_id,"
	                 " coalesce(r.load_start, -1), coalesce(r.load_end, -1),"
	                 " coalesce(r.others_cpu, -1)";
	sqlite3_stmt *s = NULL;
	enum xo_status st = XO_OK;

	for (size_t i = 0; i < NFIELDS; i++)
		snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql), ", t.%s", testbed_fields[i]);
	snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql),
	         " FROM runs r JOIN commits c ON c.id = r.commit_id"
	         " JOIN testbeds t ON t.id = r.testbed_id WHERE r.id = ?");
	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db), sql, -1, &s, NULL))
		return sql_err(db, "reading a run");
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) != SQLITE_ROW) {
		st = xo_error(XO_EINVAL, "no run %lld", (long long)id);
		goto out;
	}
	memset(r, 0, sizeof(*r));
	r->id = id;
	snprintf(r->sha, sizeof(r->sha), "%s", (const char *)sqlite3_column_text(s, 0));
	snprintf(r->subject, sizeof(r->subject), "%s",
	         sqlite3_column_text(s, 1) ? (const char *)sqlite3_column_text(s, 1) : "");
	r->dirty = sqlite3_column_int(s, 2);
	r->started = sqlite3_column_int64(s, 3);
	snprintf(r->note, sizeof(r->note), "%s",
	         sqlite3_column_text(s, 4) ? (const char *)sqlite3_column_text(s, 4) : "");
	r->testbed_id = sqlite3_column_int64(s, 5);
	r->load_start = sqlite3_column_double(s, 6);
	r->load_end = sqlite3_column_double(s, 7);
	r->others = sqlite3_column_double(s, 8);
	for (size_t i = 0; i < NFIELDS; i++) {
		const unsigned char *t = sqlite3_column_text(s, 9 + (int)i);

		snprintf(r->field[i], sizeof(r->field[i]), "%s", t ? (const char *)t : "");
	}
out:
	sqlite3_finalize(s);
	return st;
}

static void print_run(FILE *out, const char *what, const struct run_info *r)
{
	char when[32] = "?";
	time_t t = (time_t)r->started;
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
	fprintf(out, "%s: run:%lld  commit %.12s%s  %s  testbed %lld  \"%.60s\"\n", what,
	        (long long)r->id, r->sha, r->dirty ? " (dirty)" : "", when,
	        (long long)r->testbed_id, r->subject);
}

enum xo_status xo_perf_compare(struct xo_perfdb *db, const char *base, const char *head,
                               const struct xo_perf_compare_opts *o, FILE *out, bool *failed)
{
	struct run_info *rb = NULL, *rh = NULL;
	struct vec vb = {0}, vh = {0};
	sqlite3_stmt *s = NULL;
	int64_t base_id, head_id;
	int nreg = 0, nimp = 0, nsame = 0, ndiff_tb = 0;
	int64_t only_base = 0, only_head = 0;
	regex_t re;
	bool have_re = false;
	enum xo_status st;
	int rc;

	*failed = false;
	if ((st = xo_perf_resolve_run(db, base, &base_id)) ||
	    (st = xo_perf_resolve_run(db, head, &head_id)))
		return st;
	if (o->filter) {
		if (regcomp(&re, o->filter, REG_EXTENDED | REG_NOSUB))
			return xo_error(XO_EINVAL, "--filter '%s' is not a valid regex", o->filter);
		have_re = true;
	}
	rb = malloc(sizeof(*rb));
	rh = malloc(sizeof(*rh));
	if (!rb || !rh) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out;
	}
	if ((st = load_run(db, base_id, rb)) || (st = load_run(db, head_id, rh)))
		goto out;
	print_run(out, "base", rb);
	print_run(out, "head", rh);
	fprintf(out,
	        "verdict: slower/faster when Mann-Whitney p < %g and |change| > "
	        "max(%.0f%%, base IQR/median, run-to-run noise of the series once it has "
	        ">= 4 runs)\n\n",
	        o->alpha, 100.0 * o->threshold);
	fprintf(out, "%-58s %12s %12s %9s %9s  %s\n", "Benchmark", "Base", "Head", "Change",
	        "p-value", "Verdict");

	if (sqlite3_prepare_v2(
	        xo_perfdb_sqlite(db),
	        "SELECT b.name, xb.id, xh.id, xb.version != xh.version, b.id"
	        " FROM results xb JOIN results xh ON xh.benchmark_id = xb.benchmark_id"
	        " JOIN benchmarks b ON b.id = xb.benchmark_id"
	        " WHERE xb.run_id = ? AND xh.run_id = ? ORDER BY b.name",
	        -1, &s, NULL)) {
		st = sql_err(db, "comparing runs");
		goto out;
	}
	sqlite3_bind_int64(s, 1, base_id);
	sqlite3_bind_int64(s, 2, head_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		bool changed_src = sqlite3_column_int(s, 3);
		struct verdict v;
		char tb[32], th[32], why[64] = "";
		const char *word;
		double run_noise;

		if (have_re && regexec(&re, name, 0, NULL, 0))
			continue;
		if ((st = load_samples(db, sqlite3_column_int64(s, 1), &vb)) ||
		    (st = load_samples(db, sqlite3_column_int64(s, 2), &vh)))
			goto out;
		judge(vb.v, vb.n, vh.v, vh.n, o->threshold, o->alpha, &v);
		run_noise = series_noise(db, sqlite3_column_int64(s, 4), rb->testbed_id, base_id,
		                         o->alpha);
		if (v.sign && fabs(v.change) <= run_noise) {
			/* significant for these samples, not beyond what runs of an
			 * unchanged tree do: say so rather than hide it */
			v.sign = 0;
			snprintf(why, sizeof(why), "  [within run-to-run noise %.0f%%]",
			         100.0 * run_noise);
		}
		fmt_time(v.base_med, tb, sizeof(tb));
		fmt_time(v.head_med, th, sizeof(th));
		word = v.sign > 0 ? "SLOWER" : v.sign < 0 ? "faster" : "same";
		if (v.sign > 0)
			nreg++;
		else if (v.sign < 0)
			nimp++;
		else
			nsame++;
		fprintf(out, "%-58s %12s %12s %+8.1f%% %9.2g  %s%s%s\n", name, tb, th,
		        100.0 * v.change, v.p, word, changed_src ? "  [source changed]" : "", why);
	}
	if (rc != SQLITE_DONE) {
		st = sql_err(db, "comparing runs");
		goto out;
	}
	sqlite3_finalize(s);
	s = NULL;
	/* what only one side measured */
	if (sqlite3_prepare_v2(
	        xo_perfdb_sqlite(db),
	        "SELECT (SELECT count(*) FROM results WHERE run_id = ?1 AND"
	        " benchmark_id NOT IN (SELECT benchmark_id FROM results WHERE run_id = ?2)),"
	        " (SELECT count(*) FROM results WHERE run_id = ?2 AND"
	        " benchmark_id NOT IN (SELECT benchmark_id FROM results WHERE run_id = ?1))",
	        -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, base_id);
		sqlite3_bind_int64(s, 2, head_id);
		if (sqlite3_step(s) == SQLITE_ROW) {
			only_base = sqlite3_column_int64(s, 0);
			only_head = sqlite3_column_int64(s, 1);
		}
	}
	fprintf(out, "\n%d slower, %d faster, %d same", nreg, nimp, nsame);
	if (only_base || only_head)
		fprintf(out, " (%lld only in base, %lld only in head)", (long long)only_base,
		        (long long)only_head);
	fputc('\n', out);

	fprintf(out, "\ntestbed:");
	for (size_t i = 0; i < NFIELDS; i++) {
		if (!strcmp(rb->field[i], rh->field[i]))
			continue;
		if (!ndiff_tb++)
			fputc('\n', out);
		fprintf(out, "  %-14s base: %s\n  %-14s head: %s\n", testbed_fields[i],
		        rb->field[i], "", rh->field[i]);
	}
	if (!ndiff_tb)
		fprintf(out, " the same (testbed %lld: %s, BLAS %s %s, OpenCL %s)\n",
		        (long long)rb->testbed_id, rb->field[1], rb->field[6], rb->field[8],
		        rb->field[11][0] ? rb->field[11] : "none");
	/*
	 * Other work on the machine: not a testbed property, but it moves every
	 * threaded timing (cpu threads, PoCL). The measure is the CPU time other
	 * processes took during the run (schema 3); the load average, kept for
	 * older runs, also counts the recorder's own threads, so a run on an idle
	 * machine ends with a load of about its own thread count.
	 */
	{
		double cores = atof(rb->field[2]) > 0 ? atof(rb->field[2]) : 1.0;
		double lb = fmax(rb->load_start, rb->load_end),
		       lh = fmax(rh->load_start, rh->load_end);
		bool busy_b, busy_h;

		if (lb >= 0 && lh >= 0)
			fprintf(out,
			        "load:    1-min load average start/end: base %.2f/%.2f, head "
			        "%.2f/%.2f (%.0f cores; includes the recorder itself)\n",
			        rb->load_start, rb->load_end, rh->load_start, rh->load_end, cores);
		if (rb->others >= 0 && rh->others >= 0) {
			fprintf(out,
			        "others:  other processes used %.2f cores during base, "
			        "%.2f during head\n",
			        rb->others, rh->others);
			/* a tenth of the machine: on 2 cores a fifth of the second core
			 * that the cpu backend's second thread wants */
			busy_b = rb->others > 0.1 * cores;
			busy_h = rh->others > 0.1 * cores;
		} else {
			/* older runs: only the load average, which counts the
			 * recorder too: above its own two threads' worth */
			busy_b = lb > 0.5 * cores + 1.0;
			busy_h = lh > 0.5 * cores + 1.0;
		}
		if (busy_b || busy_h)
			fprintf(out,
			        "warning: other work on the machine during %s: threaded timings "
			        "(cpu, cl) may have moved for that reason alone; record again "
			        "when it is quiet\n",
			        busy_b && busy_h ? "both runs"
			        : busy_b         ? "the base run"
			                         : "the head run");
	}
	*failed = nreg > 0;

out:
	sqlite3_finalize(s);
	if (have_re)
		regfree(&re);
	free(vb.v);
	free(vh.v);
	free(rb);
	free(rh);
	return st;
}

/* ---- detect -------------------------------------------------------------------- */

struct point {
	int64_t commit_id;
	size_t first, n; /* samples[first .. first+n) of the series */
	double y;        /* median */
	double se;       /* standard error of the median, from the IQR */
};

struct series {
	struct vec samples;
	struct point *pt;
	size_t npt, cap;
};

static enum xo_status load_series(struct xo_perfdb *db, int64_t bench, int64_t testbed,
                                  struct series *se)
{
	sqlite3_stmt *s = NULL;
	int rc;

	se->samples.n = 0;
	se->npt = 0;
	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db),
	                       "SELECT ru.commit_id, sm.wall_s FROM samples sm"
	                       " JOIN results res ON res.id = sm.result_id"
	                       " JOIN runs ru ON ru.id = res.run_id"
	                       " JOIN commits c ON c.id = ru.commit_id"
	                       " WHERE res.benchmark_id = ?1 AND ru.testbed_id = ?2"
	                       " AND ru.state = 'complete'"
	                       " ORDER BY c.date, (SELECT min(r2.id) FROM runs r2"
	                       "  WHERE r2.commit_id = ru.commit_id), ru.commit_id",
	                       -1, &s, NULL))
		return sql_err(db, "reading a history");
	sqlite3_bind_int64(s, 1, bench);
	sqlite3_bind_int64(s, 2, testbed);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t commit = sqlite3_column_int64(s, 0);

		if (!se->npt || se->pt[se->npt - 1].commit_id != commit) {
			if (se->npt == se->cap) {
				size_t cap = se->cap ? 2 * se->cap : 32;
				struct point *p = realloc(se->pt, cap * sizeof(*p));

				if (!p)
					goto out_nomem;
				se->pt = p;
				se->cap = cap;
			}
			se->pt[se->npt++] =
			    (struct point){.commit_id = commit, .first = se->samples.n};
		}
		if (!vec_push(&se->samples, sqlite3_column_double(s, 1)))
			goto out_nomem;
		se->pt[se->npt - 1].n++;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return sql_err(db, "reading a history");
	return XO_OK;
out_nomem:
	sqlite3_finalize(s);
	return xo_error(XO_ENOMEM, "perf: out of memory");
}

/* Index of the first point after the last accepted change: the baseline. */
static size_t baseline_start(struct xo_perfdb *db, int64_t bench, int64_t testbed,
                             const struct series *se)
{
	sqlite3_stmt *s = NULL;
	size_t start = 0;

	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db),
	                       "SELECT commit_id FROM changes WHERE benchmark_id = ? AND"
	                       " testbed_id = ? AND state = 'accepted'",
	                       -1, &s, NULL))
		return 0;
	sqlite3_bind_int64(s, 1, bench);
	sqlite3_bind_int64(s, 2, testbed);
	while (sqlite3_step(s) == SQLITE_ROW) {
		int64_t c = sqlite3_column_int64(s, 0);

		for (size_t i = 0; i < se->npt; i++)
			if (se->pt[i].commit_id == c && i > start)
				start = i;
	}
	sqlite3_finalize(s);
	return start;
}

/*
 * The scale of the L1 fit: the Laplace scale b (sd / sqrt 2) of a point's
 * median, taken as the larger of (a) the within-point standard error of the
 * median, 1.2533 * (IQR / 1.349) / sqrt(n), and (b) with 4 or more points,
 * the robust sd of successive differences, 1.4826 * median|dy| / sqrt 2,
 * which also sees run-to-run noise; floored at 1e-4 of the level.
 */
static double series_scale(const struct point *pt, size_t n)
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
	sqlite3_stmt *upsert, *fix;
	int64_t now;
	int nconfirmed_reg, nconfirmed_imp, ndetected, nsteps, ncandidates;
};

/* The step at point mid between segments [lo, mid) and [mid, hi): the U test
 * on their raw samples, and the fit's levels (medians of point medians). */
struct step_eval {
	struct verdict v;
	double lvl_l, lvl_r;
};

static void eval_step(const struct series *se, size_t base, const double *y, size_t lo, size_t mid,
                      size_t hi, double threshold, double alpha, struct vec *left,
                      struct vec *right, struct vec *tmp, struct step_eval *e)
{
	const struct point *a = &se->pt[base + lo], *m = &se->pt[base + mid];
	const struct point *z = &se->pt[base + hi - 1];

	left->n = right->n = tmp->n = 0;
	for (size_t i = a->first; i < m->first; i++)
		vec_push(left, se->samples.v[i]);
	for (size_t i = m->first; i < z->first + z->n; i++)
		vec_push(right, se->samples.v[i]);
	judge(left->v, left->n, right->v, right->n, threshold, alpha, &e->v);
	for (size_t i = lo; i < mid; i++)
		vec_push(tmp, y[i]);
	e->lvl_l = xo_perf_median(tmp->v, tmp->n);
	tmp->n = 0;
	for (size_t i = mid; i < hi; i++)
		vec_push(tmp, y[i]);
	e->lvl_r = xo_perf_median(tmp->v, tmp->n);
}

/*
 * One history: the L1 step fit over the point medians since the baseline,
 * then asv-like merging: while some step's U test on the raw samples of its
 * neighbouring segments gives p >= alpha / (n - 1), the least significant
 * step is removed and its segments merged. The fit chose each boundary among
 * n - 1 places, so the test is Bonferroni-corrected for them (with two points
 * it is the plain alpha of `compare`). What remains is stored: "confirmed"
 * when the change also exceeds max(threshold, noise, the run-to-run noise of
 * the series at the same corrected alpha), else "detected" (real but small,
 * or within what runs of one tree do: a point pools the samples of its runs,
 * and the U test cannot see that they share each run's offset).
 */
static enum xo_status detect_series(struct detect_ctx *ctx, int64_t bench, int64_t testbed,
                                    struct series *se)
{
	struct xo_perfdb *db = ctx->db;
	size_t base, n, nsteps, *starts = NULL;
	double *y = NULL, scale, alpha, run_noise = 0.0;
	struct vec left = {0}, right = {0}, tmp = {0};
	struct step_eval *ev = NULL;
	enum xo_status st = XO_OK;
	sqlite3_stmt *del = NULL;
	char keep[4096] = "";

	if ((st = load_series(db, bench, testbed, se)))
		return st;
	base = baseline_start(db, bench, testbed, se);
	n = se->npt - base;
	for (size_t i = 0; i < se->npt; i++) {
		struct point *p = &se->pt[i];
		struct xo_perf_summary sum;
		double *x = malloc(p->n * sizeof(*x));

		if (!x)
			return xo_error(XO_ENOMEM, "perf: out of memory");
		memcpy(x, se->samples.v + p->first, p->n * sizeof(*x));
		xo_perf_summarize(x, p->n, &sum);
		free(x);
		p->y = sum.median;
		p->se = 1.2533 * ((sum.q3 - sum.q1) / 1.349) / sqrt((double)p->n);
	}
	y = malloc((n ? n : 1) * sizeof(*y));
	starts = malloc((n ? n : 1) * sizeof(*starts));
	ev = malloc((n ? n : 1) * sizeof(*ev));
	if (!y || !starts || !ev) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		y[i] = se->pt[base + i].y;
	scale = series_scale(se->pt + base, n);
	nsteps = n >= 2 ? xo_perf_steps(y, n, scale, starts) : 0;
	ctx->ncandidates += (int)nsteps;
	alpha = ctx->o->alpha / (double)(n > 2 ? n - 1 : 1);

	for (;;) {
		size_t worst = nsteps;
		double worst_p = alpha;

		for (size_t k = 0; k < nsteps; k++) {
			eval_step(se, base, y, k ? starts[k - 1] : 0, starts[k],
			          k + 1 < nsteps ? starts[k + 1] : n, ctx->o->threshold, alpha,
			          &left, &right, &tmp, &ev[k]);
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

	if (nsteps)
		run_noise = series_noise(db, bench, testbed, INT64_MAX, alpha);
	for (size_t k = 0; k < nsteps; k++) {
		const struct point *m = &se->pt[base + starts[k]];
		struct step_eval *e = &ev[k];

		if (e->v.sign && fabs(e->v.change) <= run_noise)
			e->v.sign = 0; /* kept as "detected" */
		ctx->nsteps++;
		sqlite3_bind_int64(ctx->upsert, 1, bench);
		sqlite3_bind_int64(ctx->upsert, 2, testbed);
		sqlite3_bind_int64(ctx->upsert, 3, m->commit_id);
		sqlite3_bind_int64(ctx->upsert, 4, se->pt[base + starts[k] - 1].commit_id);
		sqlite3_bind_text(ctx->upsert, 5,
		                  e->lvl_r > e->lvl_l ? "regression" : "improvement", -1,
		                  SQLITE_STATIC);
		sqlite3_bind_double(ctx->upsert, 6, e->lvl_r / e->lvl_l);
		sqlite3_bind_double(ctx->upsert, 7, e->v.p);
		sqlite3_bind_text(ctx->upsert, 8, e->v.sign ? "confirmed" : "detected", -1,
		                  SQLITE_STATIC);
		sqlite3_bind_int64(ctx->upsert, 9, ctx->now);
		if (sqlite3_step(ctx->upsert) != SQLITE_DONE) {
			sqlite3_reset(ctx->upsert);
			st = sql_err(db, "storing a change");
			goto out;
		}
		sqlite3_reset(ctx->upsert);
		snprintf(keep + strlen(keep), sizeof(keep) - strlen(keep), "%s%lld",
		         keep[0] ? "," : "", (long long)m->commit_id);
		/* a confirmed regression whose history came back down is fixed */
		if (e->v.sign > 0 && k + 1 < nsteps &&
		    se->pt[se->npt - 1].y <= e->lvl_l * (1.0 + ctx->o->threshold)) {
			sqlite3_bind_int64(ctx->fix, 1, bench);
			sqlite3_bind_int64(ctx->fix, 2, testbed);
			sqlite3_bind_int64(ctx->fix, 3, m->commit_id);
			sqlite3_step(ctx->fix);
			sqlite3_reset(ctx->fix);
		}
	}
	/* steps an earlier detect found that the fuller history no longer shows */
	{
		char sql[4400];

		snprintf(sql, sizeof(sql),
		         "DELETE FROM changes WHERE benchmark_id = ? AND testbed_id = ? AND"
		         " state IN ('detected','confirmed') AND commit_id NOT IN (%s)",
		         keep);
		if (sqlite3_prepare_v2(xo_perfdb_sqlite(db), sql, -1, &del, NULL)) {
			st = sql_err(db, "pruning changes");
			goto out;
		}
		sqlite3_bind_int64(del, 1, bench);
		sqlite3_bind_int64(del, 2, testbed);
		if (sqlite3_step(del) != SQLITE_DONE)
			st = sql_err(db, "pruning changes");
	}
out:
	sqlite3_finalize(del);
	free(left.v);
	free(right.v);
	free(tmp.v);
	free(ev);
	free(y);
	free(starts);
	return st;
}

/* The changes table; with --filter only the matching benchmarks, so that
 * `detect --filter` exits 1 for a regression it was asked about only. */
static void print_changes(struct xo_perfdb *db, FILE *out, struct detect_ctx *ctx,
                          const regex_t *re)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db),
	                       "SELECT ch.id, ch.state, ch.direction, b.name, c.sha, c.dirty,"
	                       " ch.ratio, ch.p_value, ch.testbed_id"
	                       " FROM changes ch JOIN benchmarks b ON b.id = ch.benchmark_id"
	                       " JOIN commits c ON c.id = ch.commit_id"
	                       " ORDER BY ch.state != 'confirmed', ch.direction != 'regression',"
	                       " b.name, ch.id",
	                       -1, &s, NULL))
		return;
	fprintf(out, "%6s %-10s %-11s %-58s %-14s %8s %9s\n", "id", "state", "direction",
	        "benchmark", "commit", "change", "p-value");
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *state = (const char *)sqlite3_column_text(s, 1);
		const char *dir = (const char *)sqlite3_column_text(s, 2);
		char commit[32];

		if (re && regexec(re, (const char *)sqlite3_column_text(s, 3), 0, NULL, 0))
			continue;
		snprintf(commit, sizeof(commit), "%.10s%s", (const char *)sqlite3_column_text(s, 4),
		         sqlite3_column_int(s, 5) ? "+" : "");
		fprintf(out, "%6lld %-10s %-11s %-58s %-14s %+7.1f%% %9.2g\n",
		        (long long)sqlite3_column_int64(s, 0), state, dir,
		        (const char *)sqlite3_column_text(s, 3), commit,
		        100.0 * (sqlite3_column_double(s, 6) - 1.0), sqlite3_column_double(s, 7));
		if (!strcmp(state, "confirmed") && !strcmp(dir, "regression"))
			ctx->nconfirmed_reg++;
		else if (!strcmp(state, "confirmed"))
			ctx->nconfirmed_imp++;
		else if (!strcmp(state, "detected"))
			ctx->ndetected++;
	}
	sqlite3_finalize(s);
}

enum xo_status xo_perf_detect(struct xo_perfdb *db, const struct xo_perf_compare_opts *o, FILE *out,
                              bool *failed)
{
	struct detect_ctx ctx = {.db = db, .o = o, .now = (int64_t)time(NULL)};
	struct series se = {0};
	sqlite3_stmt *s = NULL;
	sqlite3 *h = xo_perfdb_sqlite(db);
	enum xo_status st = XO_OK;
	regex_t re;
	bool have_re = false;
	int nseries = 0, rc;

	*failed = false;
	if (o->filter) {
		if (regcomp(&re, o->filter, REG_EXTENDED | REG_NOSUB))
			return xo_error(XO_EINVAL, "--filter '%s' is not a valid regex", o->filter);
		have_re = true;
	}
	if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL)) {
		st = sql_err(db, "detect");
		goto out_free;
	}
	if (sqlite3_prepare_v2(
	        h,
	        "INSERT INTO changes(benchmark_id, testbed_id, commit_id,"
	        " prev_commit_id, direction, ratio, p_value, state, detected, updated)"
	        " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?9)"
	        " ON CONFLICT(benchmark_id, testbed_id, commit_id) DO UPDATE SET"
	        " prev_commit_id = excluded.prev_commit_id,"
	        " direction = excluded.direction, ratio = excluded.ratio,"
	        " p_value = excluded.p_value, updated = excluded.updated,"
	        " state = CASE WHEN state IN ('accepted','ignored','fixed')"
	        " THEN state ELSE excluded.state END",
	        -1, &ctx.upsert, NULL) ||
	    sqlite3_prepare_v2(h,
	                       "UPDATE changes SET state = 'fixed' WHERE benchmark_id = ? AND"
	                       " testbed_id = ? AND commit_id = ? AND state = 'confirmed'",
	                       -1, &ctx.fix, NULL) ||
	    sqlite3_prepare_v2(h,
	                       "SELECT DISTINCT res.benchmark_id, ru.testbed_id, b.name"
	                       " FROM results res JOIN runs ru ON ru.id = res.run_id"
	                       " JOIN benchmarks b ON b.id = res.benchmark_id"
	                       " WHERE ru.state = 'complete' ORDER BY b.name",
	                       -1, &s, NULL)) {
		st = sql_err(db, "detect");
		goto out_rollback;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 2);

		if (have_re && regexec(&re, name, 0, NULL, 0))
			continue;
		nseries++;
		st = detect_series(&ctx, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
		                   &se);
		if (st)
			goto out_rollback;
	}
	if (rc != SQLITE_DONE) {
		st = sql_err(db, "detect");
		goto out_rollback;
	}
	sqlite3_finalize(s);
	s = NULL;
	sqlite3_finalize(ctx.upsert);
	sqlite3_finalize(ctx.fix);
	ctx.upsert = ctx.fix = NULL;
	if (sqlite3_exec(h, "COMMIT", NULL, NULL, NULL)) {
		st = sql_err(db, "detect");
		goto out_rollback;
	}
	print_changes(db, out, &ctx, have_re ? &re : NULL);
	fprintf(out,
	        "\ndetect: %d series, %d candidate steps, %d kept by the U test (p < %g / "
	        "(points - 1)); "
	        "in the table: %d confirmed regressions, %d confirmed improvements, %d "
	        "detected below the threshold\n",
	        nseries, ctx.ncandidates, ctx.nsteps, o->alpha, ctx.nconfirmed_reg,
	        ctx.nconfirmed_imp, ctx.ndetected);
	*failed = ctx.nconfirmed_reg > 0;
	goto out_free;

out_rollback:
	sqlite3_finalize(s);
	s = NULL;
	sqlite3_finalize(ctx.upsert);
	sqlite3_finalize(ctx.fix);
	sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
out_free:
	if (have_re)
		regfree(&re);
	free(se.samples.v);
	free(se.pt);
	return st;
}

enum xo_status xo_perf_change_set(struct xo_perfdb *db, int64_t id, const char *state, FILE *out)
{
	sqlite3 *h = xo_perfdb_sqlite(db);
	sqlite3_stmt *s = NULL;
	enum xo_status st = XO_OK;

	if (strcmp(state, "accepted") && strcmp(state, "ignored") && strcmp(state, "fixed") &&
	    strcmp(state, "confirmed") && strcmp(state, "detected"))
		return xo_error(XO_EINVAL, "unknown change state '%s'", state);
	if (sqlite3_prepare_v2(h, "UPDATE changes SET state = ?, updated = ? WHERE id = ?", -1, &s,
	                       NULL))
		return sql_err(db, "updating a change");
	sqlite3_bind_text(s, 1, state, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (int64_t)time(NULL));
	sqlite3_bind_int64(s, 3, id);
	if (sqlite3_step(s) != SQLITE_DONE)
		st = sql_err(db, "updating a change");
	else if (sqlite3_changes(h) != 1)
		st = xo_error(XO_EINVAL, "no change %lld (see `xo perf detect`)", (long long)id);
	else
		fprintf(out, "change %lld: %s\n", (long long)id, state);
	sqlite3_finalize(s);
	return st;
}
