/*
 * report.c - `xo perf report` and `xo perf advise`: the data behind the
 * gnuplot plots (scripts/history.gp, crossover.gp, gpu_split.gp,
 * gpu_layers.gp), an index.html that shows them, and the per-batch advice
 * "which device is faster here", all from stored measurements.
 *
 * The report answers first: per model the answer (struct
 * answer: the faster device per batch, the crossover with its interval, the
 * diagnosis from the measured split of perfdb/split.h, the device probe);
 * then regressions, where the OpenCL time goes, and history grouped per
 * benchmark. advise and the report's text summary lead with the same
 * sentences (answer_load is the one place they are made).
 *
 * Crossover: the batch size where the cl curve (time per sample) goes below
 * the cpu curve, interpolated linearly in log(batch) on log(time ratio)
 * between the two measured batches around the sign change; its interval is
 * the same crossing of the curves' 95% CI ends (cross_find). It is claimed
 * only where the per-batch table (95% CIs apart or "too close to tell")
 * shows cpu faster at smaller batches and cl at larger ones, with no
 * alternation; otherwise the sentence says what the table shows.
 *
 * The answer, the sweeps, the splits, the layer times, the model list and
 * "the latest run" read time series only (benchmarks.metric = 'time'): a
 * store recorded with --metric time,instructions also holds instruction
 * counts per call of the same model, batch and device, another unit, which
 * must never join a curve (the report and advise of such a store answer as
 * its time series alone do). An instruction series keeps its own history
 * plot, grouped apart by its name ("…/instructions/DEV") and drawn in
 * instructions.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include "sql.h"
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "perfdb.h"
#include "jsonout.h"
#include "proc.h"
#include "split.h"

#define MAX_DEV   16
#define MAX_BATCH 32
#define MAX_COLS  40

static enum xo_status sql_err(struct xo_perfdb *db, const char *what)
{
	return xo_error(XO_EDB, "%s: %s", what, xo_sql_errmsg(xo_perfdb_sql(db)));
}

static const char *col_text(struct xo_sql_stmt *s, int i)
{
	const char *t = xo_sql_column_text(s, i);

	return t ? (const char *)t : "";
}

/* A file name from a benchmark name: [A-Za-z0-9._-] kept, the rest '_'. */
static void safe_name(const char *name, char *out, size_t size)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < size; i++) {
		char c = name[i];

		out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		                 (c >= '0' && c <= '9') || c == '.' || c == '-'
		             ? c
		             : '_';
	}
	out[i] = '\0';
}

/*
 * A string that reaches gnuplot: only [A-Za-z0-9 ._/:+=,()-] kept, the rest
 * '_'. Inside gnuplot's single quotes none of these is special: no quote to
 * end the string, no backquote (command substitution), no '@' (macros), no
 * newline or ';' to start a command. Benchmark and peer
 * names come from the store, which an import fills from another program.
 */
static void gp_safe(const char *in, char *out, size_t size)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < size; i++) {
		char c = in[i];

		out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		                 strchr(" ._/:+=,()-", c)
		             ? c
		             : '_';
	}
	out[i] = '\0';
}

static void html_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else if (*s == '\'')
			fputs("&#39;", f);
		else
			fputc(*s, f);
	}
}

/* One curve: time per sample (s) against batch for one device and workload. */
struct curve {
	char device[48];
	int64_t run_id;
	size_t n;
	int64_t batch[MAX_BATCH];
	double med[MAX_BATCH], lo[MAX_BATCH], hi[MAX_BATCH]; /* per call */
};

static enum xo_status load_curve(struct xo_perfdb *db, int64_t run_id, const char *model,
                                 const char *what, const char *device, struct curve *c)
{
	struct xo_sql_stmt *s = NULL;

	memset(c, 0, sizeof(*c));
	snprintf(c->device, sizeof(c->device), "%s", device);
	c->run_id = run_id;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT b.batch, res.median, coalesce(res.ci_lo, res.median),"
	                       " coalesce(res.ci_hi, res.median) FROM results res"
	                       " JOIN benchmarks b ON b.id = res.benchmark_id"
	                       " WHERE res.run_id = ? AND b.kind = 'model' AND b.model = ?"
	                       " AND b.what = ? AND b.device = ? AND b.metric = 'time'"
	                       " ORDER BY b.batch", &s))
		return sql_err(db, "reading a sweep");
	xo_sql_bind_int64(s, 1, run_id);
	xo_sql_bind_text(s, 2, model);
	xo_sql_bind_text(s, 3, what);
	xo_sql_bind_text(s, 4, device);
	while (xo_sql_step(s) == XO_SQL_ROW && c->n < MAX_BATCH) {
		c->batch[c->n] = xo_sql_column_int64(s, 0);
		c->med[c->n] = xo_sql_column_double(s, 1);
		c->lo[c->n] = xo_sql_column_double(s, 2);
		c->hi[c->n] = xo_sql_column_double(s, 3);
		c->n++;
	}
	xo_sql_finalize(s);
	return XO_OK;
}

/* The curves of one model and workload: every device of the latest run that
 * measured the model, and each peer's latest run. */
static enum xo_status load_curves(struct xo_perfdb *db, const char *model, const char *what,
                                  struct curve *cv, int *ncv, int64_t *main_run)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;

	*ncv = 0;
	*main_run = 0;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT b.device, max(res.run_id),"
	                       " b.device IN ('ref','cpu') OR b.device LIKE 'cl%'"
	                       " FROM results res JOIN benchmarks b ON b.id = res.benchmark_id"
	                       " JOIN runs ru ON ru.id = res.run_id"
	                       " WHERE ru.state = 'complete' AND b.kind = 'model' AND b.model = ?"
	                       " AND b.what = ? AND b.metric = 'time'"
	                       " GROUP BY b.device ORDER BY 3 DESC, 2 DESC", &s))
		return sql_err(db, "finding sweeps");
	xo_sql_bind_text(s, 1, model);
	xo_sql_bind_text(s, 2, what);
	/* the first own device row has the latest own run: every own device
	 * is then taken from that run, so the curves are one measurement */
	while (xo_sql_step(s) == XO_SQL_ROW && *ncv < MAX_DEV) {
		bool own = xo_sql_column_int(s, 2);
		int64_t run = xo_sql_column_int64(s, 1);

		if (own && !*main_run)
			*main_run = run;
		if (own)
			run = *main_run;
		if ((st = load_curve(db, run, model, what, col_text(s, 0), &cv[*ncv])))
			break;
		if (cv[*ncv].n)
			(*ncv)++;
	}
	xo_sql_finalize(s);
	return st;
}

static const struct curve *find_curve(const struct curve *cv, int n, const char *dev)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(cv[i].device, dev))
			return &cv[i];
	return NULL;
}

/* Which column of a curve: the median or an end of its 95% CI. */
enum curve_y { Y_MED, Y_LO, Y_HI };

static const double *curve_col(const struct curve *c, enum curve_y y)
{
	return y == Y_LO ? c->lo : y == Y_HI ? c->hi : c->med;
}

/* The batch where b's time (column yb) first goes below a's (column ya),
 * interpolated linearly in log(batch) on log(time ratio) between the two
 * measured batches around the sign change (0 when it never does within the
 * measured range; -1 when b is faster at every batch both measured; a b that
 * wins only at the smallest batches and then loses has no crossover in this
 * sense: 0). Only batches in [from, to] are looked at. */
static double crossover_y(const struct curve *a, enum curve_y ya, const struct curve *b,
                          enum curve_y yb, int64_t from, int64_t to)
{
	const double *va = curve_col(a, ya), *vb = curve_col(b, yb);
	double prev_d = NAN, prev_x = NAN;
	bool all_below = true, any = false;

	for (size_t i = 0; i < a->n; i++) {
		for (size_t j = 0; j < b->n; j++) {
			if (a->batch[i] != b->batch[j] || a->batch[i] < from || a->batch[i] > to)
				continue;
			double d = log(vb[j] / va[i]); /* > 0: b slower */
			double x = log((double)a->batch[i]);

			any = true;
			if (d >= 0)
				all_below = false;
			if (!isnan(prev_d) && prev_d > 0 && d <= 0)
				return exp(prev_x + (x - prev_x) * prev_d / (prev_d - d));
			prev_d = d;
			prev_x = x;
		}
	}
	return any && all_below ? -1.0 : 0.0;
}

/*
 * The cl/cpu crossover and its interval, claimed only where the per-batch
 * table shows one (state XS_CROSS): at some batches cpu is faster with the
 * 95% CIs apart, at every larger decided batch cl is, and no batch decides
 * the other way again (batches whose CIs overlap are "too close to tell" and
 * decide nothing). at: the crossing of the medians between the last batch
 * cpu wins and the first cl wins; lo: of the optimistic curves for cl (cl's
 * CI low against cpu's CI high), hi: of the pessimistic ones (cl's CI high
 * against cpu's CI low), each held inside those two batches and around at.
 * Each is a batch (> 0), -1 (cl faster at every measured batch) or 0 (no
 * crossing in the measured range).
 *
 * Otherwise the sentence says what the table shows: cl faster at every batch
 * (XS_CL_EVERYWHERE, by the medians; the table gives cl some batches and cpu
 * none), no crossing of the medians with cpu winning some batches and cl
 * none (XS_NONE), every
 * batch too close (XS_UNCLEAR), one device winning some batches with the rest
 * too close while the medians cross (XS_ONE_SIDE), or both winning batches
 * in alternation or cl first (XS_MIXED). Those claim no batch: at, lo, hi 0.
 */
enum cross_state { XS_NOT_BOTH, XS_CROSS, XS_CL_EVERYWHERE, XS_NONE, XS_UNCLEAR, XS_ONE_SIDE,
	           XS_MIXED };

struct cross {
	bool both;          /* cpu and cl both measured at a common batch */
	enum cross_state state;
	double at, lo, hi;  /* see above */
	int64_t bmin, bmax; /* the smallest and largest batch both measured */
	char cpu_wins[256], cl_wins[256], unclear[256]; /* "1, 64 and 4096" */
};

/* Appends batch b to a list "1, 64 and 4096" of n batches so far (the
 * " and " is fixed up when the next one comes). */
static void list_add(char *list, size_t size, int *n, int64_t b)
{
	size_t len = strlen(list);
	char *and = strstr(list, " and ");

	if (*n >= 2 && and) { /* "1 and 64" -> "1, 64" before the new " and " */
		memmove(and + 2, and + 5, strlen(and + 5) + 1);
		memcpy(and, ", ", 2);
		len = strlen(list);
	}
	snprintf(list + len, size - len, "%s%lld", *n ? " and " : "", (long long)b);
	(*n)++;
}

/* The verdict of one batch: the faster of cpu and cl when their 95% CIs are
 * apart, "unclear" when they overlap. */
static const char *faster_of(double cpu_lo, double cpu_med, double cpu_hi, double cl_lo,
                             double cl_med, double cl_hi)
{
	if (cpu_hi >= cl_lo && cl_hi >= cpu_lo)
		return "unclear";
	return cpu_med < cl_med ? "cpu" : "cl";
}

/* The table's verdict at each common batch (faster_of, the rule the table
 * itself prints), as lists; returns whether the decided batches go cpu, then
 * cl, with one switch. */
static bool cross_table(const struct curve *cpu, const struct curve *cl, struct cross *x,
                        int *ncpu, int *ncl, int64_t *last_cpu, int64_t *first_cl)
{
	int nun = 0, switches = 0;
	char prev = 0;

	*ncpu = *ncl = 0;
	*last_cpu = *first_cl = 0;
	for (size_t i = 0; i < cpu->n; i++)
		for (size_t j = 0; j < cl->n; j++) {
			const char *f;
			char v;

			if (cpu->batch[i] != cl->batch[j])
				continue;
			f = faster_of(cpu->lo[i], cpu->med[i], cpu->hi[i], cl->lo[j], cl->med[j],
			              cl->hi[j]);
			if (!strcmp(f, "unclear")) {
				list_add(x->unclear, sizeof(x->unclear), &nun, cpu->batch[i]);
				continue;
			}
			v = !strcmp(f, "cpu") ? 'c' : 'g';
			if (v == 'c') {
				list_add(x->cpu_wins, sizeof(x->cpu_wins), ncpu, cpu->batch[i]);
				*last_cpu = cpu->batch[i];
			} else {
				list_add(x->cl_wins, sizeof(x->cl_wins), ncl, cpu->batch[i]);
				if (!*first_cl)
					*first_cl = cpu->batch[i];
			}
			switches += prev && prev != v;
			prev = v;
		}
	return *ncpu && *ncl && switches == 1 && prev == 'g';
}

static void cross_find(const struct curve *cpu, const struct curve *cl, struct cross *x)
{
	int64_t last_cpu, first_cl;
	int ncpu, ncl;
	bool clean;

	memset(x, 0, sizeof(*x));
	if (!cpu || !cl)
		return;
	for (size_t i = 0; i < cpu->n; i++)
		for (size_t j = 0; j < cl->n; j++)
			if (cpu->batch[i] == cl->batch[j]) {
				if (!x->both || cpu->batch[i] < x->bmin)
					x->bmin = cpu->batch[i];
				if (!x->both || cpu->batch[i] > x->bmax)
					x->bmax = cpu->batch[i];
				x->both = true;
			}
	if (!x->both)
		return;
	clean = cross_table(cpu, cl, x, &ncpu, &ncl, &last_cpu, &first_cl);
	if (clean) {
		x->state = XS_CROSS;
		x->at = crossover_y(cpu, Y_MED, cl, Y_MED, last_cpu, first_cl);
		x->lo = crossover_y(cpu, Y_HI, cl, Y_LO, 0, INT64_MAX);
		x->hi = crossover_y(cpu, Y_LO, cl, Y_HI, 0, INT64_MAX);
		if (x->lo <= 0 || x->lo < (double)last_cpu)
			x->lo = (double)last_cpu;
		if (x->lo > x->at)
			x->lo = x->at;
		if (x->hi <= 0 || x->hi > (double)first_cl)
			x->hi = (double)first_cl;
		if (x->hi < x->at)
			x->hi = x->at;
		return;
	}
	x->at = crossover_y(cpu, Y_MED, cl, Y_MED, 0, INT64_MAX);
	if (x->at < 0 && !ncpu && ncl) {
		x->state = XS_CL_EVERYWHERE;
		x->lo = -1; /* the optimistic curve is below the medians' everywhere */
		x->hi = crossover_y(cpu, Y_LO, cl, Y_HI, 0, INT64_MAX);
		return;
	}
	if (x->at == 0 && ncpu && !ncl) {
		x->state = XS_NONE;
		x->lo = crossover_y(cpu, Y_HI, cl, Y_LO, 0, INT64_MAX);
		x->hi = 0; /* the medians never cross: nothing bounds it above */
		return;
	}
	x->state = !ncpu && !ncl ? XS_UNCLEAR : ncpu && ncl ? XS_MIXED : XS_ONE_SIDE;
	x->at = x->lo = x->hi = 0;
}

/* "64", "<=1" (at or below the smallest batch), ">8192" (beyond the largest). */
static void fmt_bound(double v, const struct cross *x, char *buf, size_t size)
{
	if (v > 0)
		snprintf(buf, size, "%.0f", v);
	else if (v < 0)
		snprintf(buf, size, "<=%lld", (long long)x->bmin);
	else
		snprintf(buf, size, ">%lld", (long long)x->bmax);
}

/* What the table shows where no crossover is claimed: the batches each
 * device wins and those too close to tell. */
static void cross_table_sentence(const struct cross *x, char *buf, size_t size)
{
	size_t n;

	if (x->state == XS_UNCLEAR) {
		snprintf(buf, size,
		         "crossover: none shown, cpu and cl are too close to tell at every measured "
		         "batch (%lld to %lld)",
		         (long long)x->bmin, (long long)x->bmax);
		return;
	}
	snprintf(buf, size, "crossover: %s",
	         x->state == XS_MIXED ? "no single crossover: " : "none shown: ");
	n = strlen(buf);
	if (x->cl_wins[0])
		snprintf(buf + n, size - n, "cl faster at batch %s%s", x->cl_wins,
		         x->cpu_wins[0] ? ", cpu at " : "");
	else
		snprintf(buf + n, size - n, "cpu faster at batch ");
	n = strlen(buf);
	snprintf(buf + n, size - n, "%s", x->cpu_wins);
	n = strlen(buf);
	if (x->unclear[0])
		snprintf(buf + n, size - n, ", too close to tell at %s", x->unclear);
}

/* Whether the state has an interval (lo, hi) to show: the table-only states
 * claim no batch and bound nothing. */
static bool cross_bounded(const struct cross *x)
{
	return x->both && (x->state == XS_CROSS || x->state == XS_CL_EVERYWHERE ||
	                   x->state == XS_NONE);
}

/* The state's name in advise --json. */
static const char *cross_state_name(const struct cross *x)
{
	static const char *const names[] = {
	    [XS_NOT_BOTH] = "not_both_measured", [XS_CROSS] = "crossover",
	    [XS_CL_EVERYWHERE] = "cl_faster_everywhere", [XS_NONE] = "none_in_range",
	    [XS_UNCLEAR] = "too_close_everywhere", [XS_ONE_SIDE] = "one_side_only",
	    [XS_MIXED] = "no_single_crossover",
	};

	return names[x->both ? x->state : XS_NOT_BOTH];
}

/* The crossover in one line, for the report, its summary and advise: the
 * state cross_find decided from the per-batch table. */
static char *cross_sentence(const struct cross *x, char *buf, size_t size)
{
	char lo[32], hi[32];

	if (!x->both) {
		snprintf(buf, size, "crossover: cpu and cl are not both measured");
		return buf;
	}
	fmt_bound(x->lo, x, lo, sizeof(lo));
	fmt_bound(x->hi, x, hi, sizeof(hi));
	if (x->state == XS_CROSS)
		snprintf(buf, size,
		         "crossover: cl becomes faster than cpu at batch ~%.0f (from the 95%% CIs: "
		         "between %s and %s)",
		         x->at, lo, hi);
	else if (x->state == XS_CL_EVERYWHERE && x->hi < 0)
		snprintf(buf, size,
		         "crossover: none, cl is faster than cpu at every measured batch (%lld to "
		         "%lld), within the 95%% CIs too",
		         (long long)x->bmin, (long long)x->bmax);
	else if (x->state == XS_CL_EVERYWHERE)
		snprintf(buf, size,
		         "crossover: none, cl is faster than cpu at every measured batch (%lld to "
		         "%lld) by the medians; from the 95%% CIs it is between %s and %s",
		         (long long)x->bmin, (long long)x->bmax, lo, hi);
	else if (x->state == XS_NONE && x->lo == 0)
		snprintf(buf, size,
		         "crossover: none in the measured range (batch %lld to %lld): cl never goes "
		         "from slower to faster than cpu, within the 95%% CIs too",
		         (long long)x->bmin, (long long)x->bmax);
	else if (x->state == XS_NONE)
		snprintf(buf, size,
		         "crossover: none in the measured range (batch %lld to %lld) by the medians "
		         "(cl never goes from slower to faster than cpu); from the 95%% CIs it is "
		         "between %s and %s",
		         (long long)x->bmin, (long long)x->bmax, lo, hi);
	else
		cross_table_sentence(x, buf, size);
	return buf;
}

/* "1.63 us [1.59, 1.74]": a median and its CI in one unit chosen by the median. */
static void fmt_ci(double med, double lo, double hi, char *buf, size_t size)
{
	double f = med < 1e-3 ? 1e6 : med < 1.0 ? 1e3 : 1.0;
	const char *unit = med < 1e-3 ? "us" : med < 1.0 ? "ms" : "s";

	snprintf(buf, size, "%.4g %s [%.4g, %.4g]", f * med, unit, f * lo, f * hi);
}

/* ---- the measured split and the answer ------------------------------------------ */

/* One benchmark result of a run and the decomposition of its wall time. */
struct meas {
	bool found;         /* the run measured it */
	bool has_split;     /* OpenCL event times were stored with its samples */
	double med, lo, hi; /* wall time per call: median and its 95% CI */
	struct xo_split sp; /* parts that add up to med (has_split only) */
};

/*
 * The split of a stored result: each sample's event totals are decomposed
 * (xo_split_from_events, parts adding up to that sample's wall time), the
 * share of each part is averaged over the samples, and the shares are applied
 * to the result's median wall time, so the parts add up to the median the
 * report shows (the samples' shares are scale-free: a slow sample weighs as
 * much as a fast one). Launches: the mean per call.
 */
static enum xo_status meas_load(struct xo_perfdb *db, int64_t result_id, struct meas *m)
{
	struct xo_sql_stmt *s = NULL;
	double share[XO_SPLIT_COUNT] = {0}, launches = 0.0;
	size_t n = 0;

	memset(m, 0, sizeof(*m));
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT median, coalesce(ci_lo, median), coalesce(ci_hi, median),"
	                       " has_split FROM results WHERE id = ?", &s))
		return sql_err(db, "reading a result");
	xo_sql_bind_int64(s, 1, result_id);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		m->found = true;
		m->med = xo_sql_column_double(s, 0);
		m->lo = xo_sql_column_double(s, 1);
		m->hi = xo_sql_column_double(s, 2);
		m->has_split = xo_sql_column_int(s, 3) != 0;
	}
	xo_sql_finalize(s);
	s = NULL;
	if (!m->has_split)
		return XO_OK;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT wall_s, enqueue_s, h2d_s, kernel_s, d2h_s, wait_s, launches"
	                       " FROM samples WHERE result_id = ?", &s))
		return sql_err(db, "reading samples");
	xo_sql_bind_int64(s, 1, result_id);
	while (xo_sql_step(s) == XO_SQL_ROW) {
		struct xo_split one;
		double v[7];

		for (int i = 0; i < 7; i++)
			v[i] = xo_sql_column_double(s, i);
		xo_split_from_events(v[0], v[1], v[2], v[3], v[4], v[5], v[6], &one);
		if (!(one.wall_s > 0))
			continue;
		for (int p = 0; p < XO_SPLIT_COUNT; p++)
			share[p] += one.part_s[p] / one.wall_s;
		launches += one.launches;
		n++;
	}
	xo_sql_finalize(s);
	if (!n || !(m->med > 0)) {
		m->has_split = false;
		return XO_OK;
	}
	m->sp.wall_s = 0.0;
	for (int p = 0; p < XO_SPLIT_COUNT; p++) {
		m->sp.part_s[p] = m->med * share[p] / (double)n;
		m->sp.wall_s += m->sp.part_s[p];
	}
	m->sp.launches = launches / (double)n;
	return XO_OK;
}

/* The result of (run, model, what, device, batch), or found = false. */
static enum xo_status meas_find(struct xo_perfdb *db, int64_t run, const char *model,
                                const char *what, const char *device, int64_t batch,
                                struct meas *m)
{
	struct xo_sql_stmt *s = NULL;
	int64_t id = 0;

	memset(m, 0, sizeof(*m));
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT res.id FROM results res JOIN benchmarks b"
	                       " ON b.id = res.benchmark_id WHERE res.run_id = ? AND"
	                       " b.kind = 'model' AND b.model = ? AND b.what = ? AND b.device = ?"
	                       " AND b.batch = ? AND b.metric = 'time'", &s))
		return sql_err(db, "finding a result");
	xo_sql_bind_int64(s, 1, run);
	xo_sql_bind_text(s, 2, model);
	xo_sql_bind_text(s, 3, what);
	xo_sql_bind_text(s, 4, device);
	xo_sql_bind_int64(s, 5, batch);
	if (xo_sql_step(s) == XO_SQL_ROW)
		id = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	return id ? meas_load(db, id, m) : XO_OK;
}

/* One diagnosis sentence for a measured result: the dominant part of the
 * split (split.h) for a device with event times, the step time only for a
 * host backend (no events). */
static void diag_sentence(const struct meas *m, const char *device, const char *what,
                          int64_t batch, char *buf, size_t size)
{
	const char *words = !strcmp(what, "train_step") ? "train step" : "predict call";
	char dev[48], t[32];
	size_t len;

	gp_safe(device, dev, sizeof(dev));
	xo_fmt_seconds(m->med, t, sizeof(t));
	if (m->has_split) {
		xo_split_diagnose(&m->sp, dev, words, batch, buf, size);
		len = strlen(buf);
		snprintf(buf + len, size - len, " (%s per call)", t);
	} else if (!strcmp(device, "cpu") || !strcmp(device, "ref")) {
		snprintf(buf, size, "at batch %lld the %s %s takes %s per call (a host backend: "
		         "no device events to split)", (long long)batch, dev, words, t);
	} else {
		snprintf(buf, size, "at batch %lld the %s %s takes %s per call (no event times "
		         "stored)", (long long)batch, dev, words, t);
	}
}

/* Keras's default names of the recurrent layers (the store keeps layer
 * names, not kinds). */
static bool recurrent_name(const char *n)
{
	return !strncmp(n, "lstm", 4) || !strncmp(n, "gru", 3) || !strncmp(n, "simple_rnn", 10);
}

#define SERIAL_MAX_BATCH 64

/*
 * The serial-steps sentence of a cl training step, from
 * the store alone: the run keeps each layer's kernel time per batch
 * (result_ops, dir 'layer'). A recurrent layer whose time steps run in series
 * takes about the same time whatever the batch: its time is the steps'
 * latency, not the samples' work. Named when, at this batch, a recurrent
 * layer's kernel time is at least half the call's median, and against a
 * stored batch at least 8x away (the smallest, else the largest) its time
 * changed by less than the square root of the batch ratio (work that grows
 * with the batch grows near-linearly once the device is full; the root
 * leaves room for a device filling up). Returns whether buf was written.
 */
static bool serial_sentence(struct xo_perfdb *db, int64_t run, const char *model,
                            const char *device, int64_t batch, double med, char *buf,
                            size_t size)
{
	struct xo_sql_stmt *s = NULL;
	char best[64] = "", dev[48], ta[32], tb[32];
	int64_t bs[SERIAL_MAX_BATCH];
	double ts[SERIAL_MAX_BATCH], tb_s = 0, ratio;
	int n = 0, ref = -1;

	if (strncmp(device, "cl", 2) || !(med > 0))
		return false;
	/* the largest recurrent layer at this batch */
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT o.op, o.kernel_s FROM result_ops o"
	                   " JOIN results res ON res.id = o.result_id"
	                   " JOIN benchmarks b ON b.id = res.benchmark_id"
	                   " WHERE res.run_id = ? AND o.dir = 'layer' AND b.kind = 'model'"
	                   " AND b.model = ? AND b.what = 'train_step' AND b.device = ?"
	                   " AND b.batch = ? AND b.metric = 'time'",
	                   &s))
		return false;
	xo_sql_bind_int64(s, 1, run);
	xo_sql_bind_text(s, 2, model);
	xo_sql_bind_text(s, 3, device);
	xo_sql_bind_int64(s, 4, batch);
	while (xo_sql_step(s) == XO_SQL_ROW) {
		const char *name = col_text(s, 0);
		double k = xo_sql_column_double(s, 1);

		if (recurrent_name(name) && k > tb_s) {
			tb_s = k;
			snprintf(best, sizeof(best), "%s", name);
		}
	}
	xo_sql_finalize(s);
	if (!best[0] || tb_s < 0.5 * med)
		return false;
	/* the same layer at the other batches */
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT b.batch, o.kernel_s FROM result_ops o"
	                   " JOIN results res ON res.id = o.result_id"
	                   " JOIN benchmarks b ON b.id = res.benchmark_id"
	                   " WHERE res.run_id = ? AND o.dir = 'layer' AND b.kind = 'model'"
	                   " AND b.model = ? AND b.what = 'train_step' AND b.device = ?"
	                   " AND o.op = ? AND b.metric = 'time' ORDER BY b.batch",
	                   &s))
		return false;
	xo_sql_bind_int64(s, 1, run);
	xo_sql_bind_text(s, 2, model);
	xo_sql_bind_text(s, 3, device);
	xo_sql_bind_text(s, 4, best);
	while (n < SERIAL_MAX_BATCH && xo_sql_step(s) == XO_SQL_ROW) {
		bs[n] = xo_sql_column_int64(s, 0);
		ts[n++] = xo_sql_column_double(s, 1);
	}
	xo_sql_finalize(s);
	if (n && bs[0] > 0 && batch >= 8 * bs[0])
		ref = 0;
	else if (n && bs[n - 1] >= 8 * batch)
		ref = n - 1;
	if (ref < 0 || !(ts[ref] > 0))
		return false;
	ratio = bs[ref] > batch ? (double)bs[ref] / (double)batch : (double)batch / (double)bs[ref];
	if (!(fmax(tb_s, ts[ref]) / fmin(tb_s, ts[ref]) < sqrt(ratio)))
		return false;
	gp_safe(device, dev, sizeof(dev));
	xo_fmt_seconds(tb_s, tb, sizeof(tb));
	xo_fmt_seconds(ts[ref], ta, sizeof(ta));
	/* both ratios larger batch over smaller: the samples' and the time's */
	snprintf(buf, size,
	         "at batch %lld the %s train step is %.0f%% serial time steps in %s: its kernel "
	         "time is %s here and %s at batch %lld (%.0fx the samples, %.2fx the time)",
	         (long long)batch, dev, fmin(100, 100 * tb_s / med), best, tb, ta,
	         (long long)bs[ref], ratio, bs[ref] > batch ? ts[ref] / tb_s : tb_s / ts[ref]);
	return true;
}

#define MAX_DIAG 32

/* The answer for one workload of a model. */
struct answer_wl {
	const char *what;          /* "train_step" or "predict" */
	struct curve cv[MAX_DEV];  /* own devices of the latest run, then peers */
	int ncv;
	int64_t run;               /* the latest own run that measured it (0: none) */
	struct cross x;            /* cl vs cpu */
};

/* The answer for one model: what the report's first screen, its text
 * summary and `xo perf advise` lead with. */
struct answer {
	char model[64];                  /* as stored */
	struct answer_wl wl[2];          /* train_step, predict */
	int64_t run;                     /* the latest own run of either (0: none measured) */
	int ndiag;
	char diag[MAX_DIAG][320];        /* one sentence each */
};

static bool own_device(const char *d)
{
	return !strcmp(d, "ref") || !strcmp(d, "cpu") || !strncmp(d, "cl", 2);
}

/* The d-th curve with cpu moved to the front. */
static int order_cpu_first(const struct curve *cv, int n, int d)
{
	int cpu = -1;

	for (int i = 0; i < n; i++)
		if (!strcmp(cv[i].device, "cpu"))
			cpu = i;
	if (cpu < 0)
		return d;
	if (d == 0)
		return cpu;
	return d <= cpu ? d - 1 : d;
}

/*
 * Loads model's curves, crossover and diagnosis. The diagnosis: per workload,
 * one sentence per device under test (cpu, cl...) at the smallest batch, the
 * seed's 512 and the largest batch it measured.
 */
static enum xo_status answer_load(struct xo_perfdb *db, const char *model, struct answer *a)
{
	static const char *const whats[] = {"train_step", "predict"};
	enum xo_status st;

	memset(a, 0, sizeof(*a));
	snprintf(a->model, sizeof(a->model), "%s", model);
	for (int w = 0; w < 2; w++) {
		struct answer_wl *wl = &a->wl[w];

		wl->what = whats[w];
		if ((st = load_curves(db, model, wl->what, wl->cv, &wl->ncv, &wl->run)))
			return st;
		if (wl->run > a->run)
			a->run = wl->run;
		cross_find(find_curve(wl->cv, wl->ncv, "cpu"), find_curve(wl->cv, wl->ncv, "cl"),
		           &wl->x);
		for (int d = 0; d < wl->ncv; d++) {
			/* cpu first, then the cl devices in their stored order */
			const struct curve *c = &wl->cv[order_cpu_first(wl->cv, wl->ncv, d)];
			int64_t pick[3];
			int np = 0;

			if (!own_device(c->device) || !strcmp(c->device, "ref") || !c->n)
				continue;
			pick[np++] = c->batch[0];
			for (size_t k = 0; k < c->n; k++)
				if (c->batch[k] == 512 && 512 != pick[0])
					pick[np++] = 512;
			if (c->batch[c->n - 1] != pick[np - 1])
				pick[np++] = c->batch[c->n - 1];
			for (int k = 0; k < np && a->ndiag < MAX_DIAG; k++) {
				struct meas m;

				if ((st = meas_find(db, c->run_id, model, wl->what, c->device, pick[k],
				                    &m)))
					return st;
				if (!m.found)
					continue;
				/* a recurrent layer whose time the batch does not
				 * move names the cause, else the split's sentence */
				if (!strcmp(wl->what, "train_step") &&
				    serial_sentence(db, c->run_id, model, c->device, pick[k], m.med,
				                    a->diag[a->ndiag], sizeof(a->diag[0]))) {
					size_t len = strlen(a->diag[a->ndiag]);
					char t[32];

					snprintf(a->diag[a->ndiag] + len, sizeof(a->diag[0]) - len,
					         " (%s per call)", xo_fmt_seconds(m.med, t, sizeof(t)));
					a->ndiag++;
				} else {
					diag_sentence(&m, c->device, wl->what, pick[k],
					              a->diag[a->ndiag++], sizeof(a->diag[0]));
				}
			}
		}
	}
	return XO_OK;
}

/* ---- gnuplot ---------------------------------------------------------------------- */

static bool have_gnuplot(void)
{
	return xo_proc_found("gnuplot");
}

bool xo_perf_cl_on_cpu(const char *d)
{
	return d && (strstr(d, "PoCL") || strstr(d, "Portable Computing Language") ||
	             strstr(d, "pthread") || strstr(d, "type CPU"));
}

/*
 * The legend of the cl curve: what kind of device the run's OpenCL device is.
 * PoCL (and any CPU device) is OpenCL on the CPU, never "the GPU"; the testbed keeps the platform and device the cl backend reported.
 */
static const char *cl_label(struct xo_perfdb *db, int64_t run)
{
	struct xo_sql_stmt *s = NULL;
	const char *label = "cl (OpenCL)";

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT t.cl_platform || ' ' || t.cl_device || ' ' || t.describe"
	                       " FROM runs ru JOIN testbeds t ON t.id = ru.testbed_id WHERE ru.id = ?", &s))
		return label;
	xo_sql_bind_int64(s, 1, run);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		const char *d = col_text(s, 0);

		if (strstr(d, "PoCL") || strstr(d, "Portable Computing Language"))
			label = "cl: OpenCL on the CPU (PoCL)";
		else if (xo_perf_cl_on_cpu(d))
			label = "cl: OpenCL on the CPU";
		else if (strstr(d, "type GPU"))
			label = "cl: OpenCL on the GPU";
	}
	xo_sql_finalize(s);
	return label;
}

/* True when the answer's cl curves were measured on OpenCL on the CPU. */
static bool answer_cl_on_cpu(struct xo_perfdb *db, const struct answer *a)
{
	for (int w = 0; w < 2; w++) {
		const struct curve *cl = find_curve(a->wl[w].cv, a->wl[w].ncv, "cl");

		if (cl && strstr(cl_label(db, cl->run_id), "on the CPU"))
			return true;
	}
	return false;
}

/* The crossover plot of one workload: data files and the gnuplot lines;
 * the HTML goes with the answer (write_answer). */
static enum xo_status write_crossover(struct xo_perfdb *db, const char *outdir, FILE *gp,
                                      const char *model_raw, const struct answer_wl *wl)
{
	char model[64]; /* the model's name as file names, gnuplot and HTML see it */
	char path[4096], devices[1024] = "";
	const struct cross *x = &wl->x;
	double band_lo = 0, band_hi = 0;

	safe_name(model_raw, model, sizeof(model));
	for (int i = 0; i < wl->ncv; i++) {
		const struct curve *c = &wl->cv[i];
		char dev[48];
		FILE *f;

		/* peer names come from imported files: file names and gnuplot see
		 * only the safe set */
		safe_name(c->device, dev, sizeof(dev));
		if (!dev[0])
			snprintf(dev, sizeof(dev), "_");
		snprintf(path, sizeof(path), "%s/data/cross_%s_%s_%s.dat", outdir, model, wl->what,
		         dev);
		f = fopen(path, "w");
		if (!f)
			return xo_error(XO_EIO, "%s: %s", path, strerror(errno));
		fprintf(f, "# batch  s/sample median  ci_lo  ci_hi   (run %lld, device %s)\n",
		        (long long)c->run_id, dev);
		for (size_t k = 0; k < c->n; k++) {
			double b = (double)c->batch[k];

			fprintf(f, "%lld %.6e %.6e %.6e\n", (long long)c->batch[k], c->med[k] / b,
			        c->lo[k] / b, c->hi[k] / b);
		}
		fclose(f);
		snprintf(devices + strlen(devices), sizeof(devices) - strlen(devices), "%s%s",
		         i ? " " : "", dev);
	}
	/* the shaded band: the crossover's interval from the 95% CIs, clipped to
	 * the measured range (an open end is drawn to the range's edge) */
	if (x->both && (x->at != 0 || x->lo != 0)) {
		band_lo = x->lo > 0 ? x->lo : (double)x->bmin;
		band_hi = x->hi > 0 ? x->hi : x->hi < 0 ? (double)x->bmin : (double)x->bmax;
	}
	fprintf(gp,
	        "prefix = 'data/cross_%s_%s_'; devices = '%s'; xcross = %g; cl_label = '%s';\n"
	        "xband_lo = %g; xband_hi = %g;\n"
	        "title_text = '%s %s: time per sample vs batch (run %lld)';\n"
	        "outbase = 'crossover_%s_%s'; load script_dir.'/crossover.gp'\n",
	        model, wl->what, devices, x->at, cl_label(db, wl->run), band_lo, band_hi, model,
	        wl->what, (long long)wl->run, model, wl->what);
	return XO_OK;
}

/*
 * Where a call's wall time goes, per batch, for every device with OpenCL
 * event times: the decomposition of split.h (launch/sync latency, transfers,
 * compute, other host work), whose parts add up to the result's median wall
 * time (meas_load). The data file keeps the parts in ms beside the median;
 * the plot stacks them as shares of it.
 */
static enum xo_status write_split(struct xo_perfdb *db, const char *outdir, FILE *gp, FILE *html,
                                  const char *model_raw, const char *what, int64_t run)
{
	char model[64]; /* the model's name as file names, gnuplot and HTML see it */
	struct xo_sql_stmt *s = NULL;
	char path[4096];
	enum xo_status st = XO_OK;
	FILE *f;
	int rows = 0, ndev = 0;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT res.id, b.batch, b.device, (SELECT count(DISTINCT b2.device)"
	                       "  FROM results r2 JOIN benchmarks b2 ON b2.id = r2.benchmark_id"
	                       "  WHERE r2.run_id = res.run_id AND r2.has_split != 0 AND"
	                       "  b2.kind = 'model' AND b2.model = b.model AND b2.what = b.what"
	                       "  AND b2.metric = 'time')"
	                       " FROM results res JOIN benchmarks b ON b.id = res.benchmark_id"
	                       " WHERE res.run_id = ? AND res.has_split != 0 AND b.kind = 'model'"
	                       " AND b.model = ? AND b.what = ? AND b.metric = 'time'"
	                       " ORDER BY b.device, b.batch", &s))
		return sql_err(db, "reading the OpenCL split");
	xo_sql_bind_int64(s, 1, run);
	safe_name(model_raw, model, sizeof(model));
	xo_sql_bind_text(s, 2, model_raw);
	xo_sql_bind_text(s, 3, what);
	snprintf(path, sizeof(path), "%s/data/split_%s_%s.dat", outdir, model, what);
	f = fopen(path, "w");
	if (!f) {
		xo_sql_finalize(s);
		return xo_error(XO_EIO, "%s: %s", path, strerror(errno));
	}
	fprintf(f, "# label launch_ms transfer_ms compute_ms other_ms wall_median_ms\n");
	while (xo_sql_step(s) == XO_SQL_ROW) {
		struct meas m;
		char dev[48];

		if ((st = meas_load(db, xo_sql_column_int64(s, 0), &m)))
			break;
		if (!m.has_split)
			continue;
		/* more than one device with event times: the label names it */
		ndev = xo_sql_column_int(s, 3);
		safe_name(col_text(s, 2), dev, sizeof(dev));
		fprintf(f, "\"%s%s%lld\\n%.3gms\\n%.0f launches\"", ndev > 1 ? dev : "",
		        ndev > 1 ? " " : "", (long long)xo_sql_column_int64(s, 1), 1e3 * m.med,
		        m.sp.launches);
		for (int p = 0; p < XO_SPLIT_COUNT; p++)
			fprintf(f, " %.9g", 1e3 * m.sp.part_s[p]);
		fprintf(f, " %.9g\n", 1e3 * m.med);
		rows++;
	}
	xo_sql_finalize(s);
	fclose(f);
	if (st || !rows)
		return st;
	fprintf(gp,
	        "datafile = 'data/split_%s_%s.dat'; title_text = '%s %s on OpenCL: where the wall "
	        "time of one call goes (bar labels: batch, median wall, launches)';\noutbase = 'split_%s_%s'; load script_dir.'/gpu_split.gp'\n",
	        model, what, model, what, model, what);
	fprintf(html, "<a href=\"split_%s_%s.svg\"><img src=\"split_%s_%s.png\"></a>\n", model,
	        what, model, what);
	return XO_OK;
}

/* One cell of the probe table: v scaled, or a dash where the probe has none. */
static void probe_cell(FILE *html, struct xo_sql_stmt *s, int col, double scale, const char *fmt)
{
	fprintf(html, "<td>");
	if (xo_sql_column_null(s, col))
		fprintf(html, "&ndash;");
	else
		fprintf(html, fmt, scale * xo_sql_column_double(s, col));
	fprintf(html, "</td>");
}

/*
 * The probe figures of run (table probes, written by `perf record` from
 * schema version 4 on, one row per device): a store without the table, or a
 * run without rows, has no probe table. Returns the rows shown.
 */
static int write_probes(struct xo_perfdb *db, FILE *html, int64_t run)
{
	struct xo_sql_stmt *s = NULL;
	int rows = 0;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT device, launch_s, enqueue_s, sync_s, h2d_lat_s, h2d_bw,"
	                       " d2h_lat_s, d2h_bw, flops, mem_bw, handoff_s, units FROM probes"
	                       " WHERE run_id = ? ORDER BY device = 'cpu' DESC, device", &s) != XO_SQL_OK)
		return 0; /* no table probes in this store */
	xo_sql_bind_int64(s, 1, run);
	while (xo_sql_step(s) == XO_SQL_ROW) {
		if (!rows++)
			fprintf(html,
			        "<h3>Device probe (xo probe, run:%lld)</h3>\n<table class=\"probes\">"
			        "<tr><th>device</th><th>launch (us)</th><th>enqueue (us)</th>"
			        "<th>sync (us)</th><th>H2D latency (us)</th><th>H2D (GB/s)</th>"
			        "<th>D2H latency (us)</th><th>D2H (GB/s)</th><th>GFLOP/s</th>"
			        "<th>memory (GB/s)</th><th>hand-off (us)</th><th>units</th></tr>\n",
			        (long long)run);
		fprintf(html, "<tr><td>");
		html_escape(html, col_text(s, 0));
		fprintf(html, "</td>");
		probe_cell(html, s, 1, 1e6, "%.3g");
		probe_cell(html, s, 2, 1e6, "%.3g");
		probe_cell(html, s, 3, 1e6, "%.3g");
		probe_cell(html, s, 4, 1e6, "%.3g");
		probe_cell(html, s, 5, 1e-9, "%.3g");
		probe_cell(html, s, 6, 1e6, "%.3g");
		probe_cell(html, s, 7, 1e-9, "%.3g");
		probe_cell(html, s, 8, 1e-9, "%.4g");
		probe_cell(html, s, 9, 1e-9, "%.3g");
		probe_cell(html, s, 10, 1e6, "%.3g");
		probe_cell(html, s, 11, 1.0, "%.0f");
		fprintf(html, "</tr>\n");
	}
	xo_sql_finalize(s);
	if (rows)
		fprintf(html, "</table>\n<p>Launch: an empty kernel, enqueue to completion (cpu: "
		              "one thread-pool round); H2D/D2H latency: a 4-byte blocking copy, "
		              "GB/s: a large one; GFLOP/s: an FMA-bound kernel; memory: a streaming "
		              "kernel (read + written). &ndash;: does not apply to the device.</p>\n");
	return rows;
}

/* The answer table of one workload: per batch the faster of cpu and cl (95%
 * CIs apart, else "unclear"), the ratio, both medians with their CIs; the
 * peers (other frameworks) in a table of their own. */
static void write_answer_table(FILE *html, const struct answer_wl *wl)
{
	const struct curve *cpu = find_curve(wl->cv, wl->ncv, "cpu");
	const struct curve *cl = find_curve(wl->cv, wl->ncv, "cl");
	int npeer = 0;

	if (!cpu || !cl) {
		fprintf(html, "<p>cpu and cl are not both measured: nothing to compare.</p>\n");
	} else {
		fprintf(html, "<table class=\"answer\"><tr><th>batch</th><th>faster</th>"
		              "<th>by</th><th>cpu: median [95%% CI] per call</th>"
		              "<th>cl: median [95%% CI] per call</th></tr>\n");
		for (size_t i = 0; i < cpu->n; i++) {
			size_t j;
			char a[64], b[64];

			for (j = 0; j < cl->n && cl->batch[j] != cpu->batch[i]; j++)
				;
			if (j == cl->n)
				continue;
			const char *v = faster_of(cpu->lo[i], cpu->med[i], cpu->hi[i], cl->lo[j],
			                          cl->med[j], cl->hi[j]);
			double r = cpu->med[i] < cl->med[j] ? cl->med[j] / cpu->med[i]
			                                    : cpu->med[i] / cl->med[j];

			fmt_ci(cpu->med[i], cpu->lo[i], cpu->hi[i], a, sizeof(a));
			fmt_ci(cl->med[j], cl->lo[j], cl->hi[j], b, sizeof(b));
			fprintf(html,
			        "<tr class=\"ans\"><td>%lld</td><td class=\"faster\">%s</td>"
			        "<td>%.2fx%s</td><td>%s</td><td>%s</td></tr>\n",
			        (long long)cpu->batch[i], v, r,
			        !strcmp(v, "unclear") ? " (CIs overlap)" : "", a, b);
		}
		fprintf(html, "</table>\n");
	}
	for (int p = 0; p < wl->ncv; p++)
		npeer += !own_device(wl->cv[p].device);
	if (!npeer)
		return;
	/* every batch any peer measured, in order */
	int64_t batches[MAX_BATCH];
	int nb = 0;

	for (int p = 0; p < wl->ncv; p++) {
		if (own_device(wl->cv[p].device))
			continue;
		for (size_t k = 0; k < wl->cv[p].n; k++) {
			int i = 0;

			while (i < nb && batches[i] != wl->cv[p].batch[k])
				i++;
			if (i == nb && nb < MAX_BATCH)
				batches[nb++] = wl->cv[p].batch[k];
		}
	}
	for (int i = 1; i < nb; i++)
		for (int k = i; k > 0 && batches[k - 1] > batches[k]; k--) {
			int64_t t = batches[k];

			batches[k] = batches[k - 1];
			batches[k - 1] = t;
		}
	fprintf(html, "<p>Peers (other frameworks, their latest import; not under test):</p>\n"
	              "<table class=\"peers\"><tr><th>batch</th>");
	for (int p = 0; p < wl->ncv; p++)
		if (!own_device(wl->cv[p].device)) {
			fprintf(html, "<th>");
			html_escape(html, wl->cv[p].device);
			fprintf(html, ": median [95%% CI]</th>");
		}
	fprintf(html, "</tr>\n");
	for (int i = 0; i < nb; i++) {
		fprintf(html, "<tr><td>%lld</td>", (long long)batches[i]);
		for (int p = 0; p < wl->ncv; p++) {
			const struct curve *c = &wl->cv[p];
			size_t k;
			char t[64];

			if (own_device(c->device))
				continue;
			for (k = 0; k < c->n && c->batch[k] != batches[i]; k++)
				;
			if (k == c->n) {
				fprintf(html, "<td>&ndash;</td>");
				continue;
			}
			fmt_ci(c->med[k], c->lo[k], c->hi[k], t, sizeof(t));
			fprintf(html, "<td>%s", t);
			if (cpu)
				for (size_t q = 0; q < cpu->n; q++)
					if (cpu->batch[q] == batches[i])
						fprintf(html, " (%.2fx cpu)", c->med[k] / cpu->med[q]);
			fprintf(html, "</td>");
		}
		fprintf(html, "</tr>\n");
	}
	fprintf(html, "</table>\n");
}

/*
 * The report's first screen for one model: the crossover per workload in one
 * sentence, the diagnosis (one sentence per device at a few batch sizes, from
 * the measured split), then per workload the answer table beside the
 * crossover plot with its interval, and the device probe when the run stored
 * one. The cost model's predicted sentences belong here,
 * after the measured diagnosis (marked below).
 */
static enum xo_status write_answer(struct xo_perfdb *db, const char *outdir, FILE *gp,
                                   FILE *html, const struct answer *a)
{
	char model[64], line[512];
	enum xo_status st;

	safe_name(a->model, model, sizeof(model));
	fprintf(html, "<h2 id=\"answer_%s\">Answer for ", model);
	html_escape(html, a->model);
	fprintf(html, ", which device is faster per batch size, and why</h2>\n");
	if (!a->wl[0].ncv && !a->wl[1].ncv) {
		fprintf(html, "<p>No measurement of this model's train_step or predict.</p>\n");
		return XO_OK;
	}
	if (answer_cl_on_cpu(db, a))
		fprintf(html, "<p class=\"nogpu\"><b>%s</b> (PoCL or another CPU device): the cl "
		              "curves are not a GPU's.</p>\n",
		        XO_PERF_NO_GPU);
	/* the answer in words first: the crossover per workload, then why */
	fprintf(html, "<ul class=\"crossover\">\n");
	for (int w = 0; w < 2; w++)
		if (a->wl[w].ncv) {
			fprintf(html, "<li><b>%s</b>: ", a->wl[w].what);
			html_escape(html, cross_sentence(&a->wl[w].x, line, sizeof(line)));
			fprintf(html, "</li>\n");
		}
	fprintf(html, "</ul>\n");
	if (a->ndiag) { /* no heading without its content */
		fprintf(html, "<h3 id=\"diagnosis_%s\">Diagnosis (from the measured split of the "
		              "stored samples)</h3>\n<ul class=\"diagnosis\">\n", model);
		for (int i = 0; i < a->ndiag; i++) {
			fprintf(html, "<li>");
			html_escape(html, a->diag[i]);
			fprintf(html, "</li>\n");
		}
		fprintf(html, "</ul>\n");
	}
	/* the cost model's predicted sentences go here */
	for (int w = 0; w < 2; w++) {
		const struct answer_wl *wl = &a->wl[w];

		if (!wl->ncv) /* peers alone (no own run) still get their plot */
			continue;
		fprintf(html, "<h3 id=\"crossover_%s_%s\">", model, wl->what);
		html_escape(html, a->model);
		fprintf(html, " %s: the faster device per batch size", wl->what);
		if (wl->run)
			fprintf(html, " (run:%lld)", (long long)wl->run);
		fprintf(html, "</h3>\n");
		fprintf(html, "<div class=\"answer\"><div>");
		write_answer_table(html, wl);
		if ((st = write_crossover(db, outdir, gp, a->model, wl)))
			return st;
		fprintf(html,
		        "</div><a href=\"crossover_%s_%s.svg\"><img src=\"crossover_%s_%s.png\">"
		        "</a></div>\n",
		        model, wl->what, model, wl->what);
	}
	fprintf(html, "<p>Tables: per batch the faster device when the 95%% CIs of the two "
	              "medians are apart (else unclear), by how much, both medians per call. "
	              "Plots: median time per call divided by the batch (bars: 95%% CI of "
	              "the median), log-log; the dashed line marks where cl becomes faster "
	              "than cpu, the shaded band the crossover's interval from the 95%% CIs. "
	              "A cl device that is a CPU (PoCL) is labelled as OpenCL on the CPU.</p>\n");
	write_probes(db, html, a->run);
	return XO_OK;
}

/* Kernel time per layer (train_step) or per op, stacked, per batch. */
static enum xo_status write_layers(struct xo_perfdb *db, const char *outdir, FILE *gp, FILE *html,
                                   const char *model_raw, int64_t run)
{
	char layer_sql[512];
	char model[64]; /* the model's name as file names, gnuplot and HTML see it */
	struct xo_sql_stmt *s = NULL;
	char path[4096], (*names)[64] = calloc(MAX_COLS, 64);
	double(*ms)[MAX_COLS] = calloc(MAX_BATCH, sizeof(*ms));
	int64_t batches[MAX_BATCH];
	int nb = 0, nn = 0;
	FILE *f;

	if (!names || !ms) {
		free(names);
		free(ms);
		return xo_error(XO_ENOMEM, "perf: out of memory");
	}
	/* layers in the order they were stored: the engine's row order */
	snprintf(layer_sql, sizeof(layer_sql),
	         "SELECT b.batch, o.op, o.kernel_s FROM result_ops o"
	         " JOIN results res ON res.id = o.result_id"
	         " JOIN benchmarks b ON b.id = res.benchmark_id"
	         " WHERE res.run_id = ? AND o.dir = 'layer' AND b.kind = 'model'"
	         " AND b.model = ? AND b.what = 'train_step' AND b.metric = 'time'"
	         " ORDER BY b.batch, o.%s",
	         xo_sql_dialect(xo_perfdb_sql(db))->row_order);
	if (xo_sql_prepare(xo_perfdb_sql(db), layer_sql, &s)) {
		free(names);
		free(ms);
		return sql_err(db, "reading layer times");
	}
	xo_sql_bind_int64(s, 1, run);
	safe_name(model_raw, model, sizeof(model));
	xo_sql_bind_text(s, 2, model_raw);
	while (xo_sql_step(s) == XO_SQL_ROW) {
		int64_t batch = xo_sql_column_int64(s, 0);
		const char *name = col_text(s, 1);
		int bi, ni;

		for (bi = 0; bi < nb && batches[bi] != batch; bi++)
			;
		if (bi == nb) {
			if (nb == MAX_BATCH)
				continue;
			batches[nb++] = batch;
		}
		for (ni = 0; ni < nn && strcmp(names[ni], name); ni++)
			;
		if (ni == nn) {
			if (nn == MAX_COLS)
				continue;
			snprintf(names[nn++], 64, "%s", name);
		}
		ms[bi][ni] = 1e3 * xo_sql_column_double(s, 2);
	}
	xo_sql_finalize(s);
	if (!nb)
		goto out;
	snprintf(path, sizeof(path), "%s/data/layers_%s.dat", outdir, model);
	f = fopen(path, "w");
	if (!f) {
		free(names);
		free(ms);
		return xo_error(XO_EIO, "%s: %s", path, strerror(errno));
	}
	fprintf(f, "batch");
	for (int i = 0; i < nn; i++)
		fprintf(f, " \"%s\"", names[i]);
	fputc('\n', f);
	for (int b = 0; b < nb; b++) {
		double sum = 0.0;

		for (int i = 0; i < nn; i++)
			sum += ms[b][i];
		fprintf(f, "\"%lld\\n%.3gms\"", (long long)batches[b], sum);
		for (int i = 0; i < nn; i++)
			fprintf(f, " %.3f", sum > 0 ? 100.0 * ms[b][i] / sum : 0.0);
		fputc('\n', f);
	}
	fclose(f);
	fprintf(gp,
	        "datafile = 'data/layers_%s.dat'; ncols = %d; title_text = '%s train_step on "
	        "OpenCL: kernel time per layer (%% of one step; batch, total kernel ms)';\n"
	        "outbase = 'layers_%s'; load script_dir.'/gpu_layers.gp'\n",
	        model, nn + 1, model, model);
	fprintf(html, "<a href=\"layers_%s.svg\"><img src=\"layers_%s.png\"></a>\n", model, model);
out:
	free(names);
	free(ms);
	return XO_OK;
}

/* A benchmark's group: its name without the device suffix ("op/relu/fwd/
 * n512_l27_c16/cpu" -> "op/relu/fwd/n512_l27_c16"); the name itself when it
 * does not end in "/device". */
static void bench_group(const char *name, const char *device, char *out, size_t size)
{
	size_t n = strlen(name), d = strlen(device);

	if (d && n > d + 1 && name[n - d - 1] == '/' && !strcmp(name + n - d, device))
		n -= d + 1;
	snprintf(out, size, "%.*s", (int)n, name);
}

/* One benchmark of a history group. */
struct hist_member {
	int64_t bench;
	int64_t testbed;
	char group[192];
	char device[48];
	char label[112];     /* the line's legend (file-name-safe parts): device, or
	                        device@testbed where the report covers several */
};

/* cpu, cl..., ref, then peers: the order of the lines and the legend. */
static int device_rank(const char *d)
{
	return !strcmp(d, "cpu") ? 0 : !strncmp(d, "cl", 2) ? 1 : !strcmp(d, "ref") ? 2 : 3;
}

static int hist_member_cmp(const void *pa, const void *pb)
{
	const struct hist_member *a = pa, *b = pb;
	int c = strcmp(a->group, b->group);

	if (c)
		return c;
	if (device_rank(a->device) != device_rank(b->device))
		return device_rank(a->device) - device_rank(b->device);
	if ((c = strcmp(a->device, b->device)))
		return c;
	return strcmp(a->label, b->label);
}

/* One stored point of a history. */
struct hist_point {
	int64_t rank, run;   /* the commit's place in history (order.c), run id: the x order */
	char sha[12];        /* short sha, '+' when dirty */
	double med, lo, hi, min;
	bool change;         /* a stored change (not ignored) at this run */
	int dev;             /* which member of the group */
	int x;               /* the run's index on the common x axis */
};

static int hist_point_cmp(const void *pa, const void *pb)
{
	const struct hist_point *a = pa, *b = pb;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->run < b->run ? -1 : a->run > b->run;
}

/* Devices whose medians differ by more than this factor get a log y axis:
 * on a linear axis the fastest device's line would lie flat on zero. */
#define HIST_LOG_RATIO 10.0

/*
 * The history of one benchmark group on one testbed: one line per device
 * (its medians with 95% CI bars, minimum as points, stored changes as red
 * diamonds) over a common x axis of the runs that measured any of them,
 * oldest first. Data: data/hist_GROUP_<i>.dat for the i-th device.
 */
static enum xo_status write_history_group(struct xo_perfdb *db, const struct xo_perf_order *ord,
                                          const char *outdir, FILE *gp,
                                          const struct hist_member *mem, int nmem)
{
	struct xo_sql_stmt *s = NULL;
	char path[4096], safe[256], title[256], devices[2048] = "";
	struct hist_point *pt = NULL;
	size_t n = 0, cap = 0;
	int nchanges = 0, nx = 0;
	double vmin = INFINITY, vmax = 0;
	enum xo_status st = XO_OK;

	/* an instruction series ("…/instructions/DEV", schema 5) is plotted in
	 * millions of instructions per call, a time series in ms */
	size_t glen = strlen(mem[0].group);
	bool counts = glen >= 13 && !strcmp(mem[0].group + glen - 13, "/instructions");
	double scale = counts ? 1e-6 : 1e3;

	safe_name(mem[0].group, safe, sizeof(safe));
	if (xo_sql_prepare(
	        xo_perfdb_sql(db),
	        /* the change (changes is unique per benchmark, testbed and
	         * commit) is marked on the commit's first complete run. A join,
	         * and the first run looked up from the change's row (ch.*, not
	         * ru.*): written as a scalar subquery on ru, PostgreSQL hoisted
	         * the min() into a one-time filter evaluated for every point, a
	         * scan of runs each (O(runs^2): 3.2 s a line at 10 000 runs, and
	         * a cost estimate that made it JIT-compile the query as well);
	         * now it runs once per stored change, 33 ms a line */
	        "SELECT ru.commit_id, ru.id, c.sha, c.dirty, res.median, coalesce(res.ci_lo, res.median),"
	        " coalesce(res.ci_hi, res.median), res.min, ch.ratio"
	        " FROM results res JOIN runs ru ON ru.id = res.run_id"
	        " JOIN commits c ON c.id = ru.commit_id"
	        " LEFT JOIN changes ch ON ch.benchmark_id = res.benchmark_id"
	        "  AND ch.testbed_id = ru.testbed_id AND ch.commit_id = ru.commit_id"
	        "  AND ch.state != 'ignored'"
	        "  AND ru.id = (SELECT min(r2.id) FROM runs r2 WHERE"
	        "   r2.commit_id = ch.commit_id AND r2.testbed_id = ch.testbed_id"
	        "   AND r2.state = 'complete')"
	        " WHERE res.benchmark_id = ? AND ru.testbed_id = ? AND ru.state = 'complete'", &s))
		return sql_err(db, "reading a history");
	for (int d = 0; d < nmem; d++) {
		xo_sql_reset(s);
		xo_sql_bind_int64(s, 1, mem[d].bench);
		xo_sql_bind_int64(s, 2, mem[d].testbed);
		while (xo_sql_step(s) == XO_SQL_ROW) {
			struct hist_point *p;

			if (!xo_perf_order_main(ord, xo_sql_column_int64(s, 0)))
				continue; /* a side branch is not in the history */

			if (n == cap) {
				size_t c2 = cap ? 2 * cap : 64;
				struct hist_point *np = realloc(pt, c2 * sizeof(*np));

				if (!np) {
					st = xo_error(XO_ENOMEM, "perf: out of memory");
					goto out;
				}
				pt = np;
				cap = c2;
			}
			p = &pt[n++];
			memset(p, 0, sizeof(*p));
			p->rank = xo_perf_order_rank(ord, xo_sql_column_int64(s, 0));
			p->run = xo_sql_column_int64(s, 1);
			snprintf(p->sha, sizeof(p->sha), "%.7s%s", col_text(s, 2),
			         xo_sql_column_int(s, 3) ? "+" : "");
			p->med = scale * xo_sql_column_double(s, 4);
			p->lo = scale * xo_sql_column_double(s, 5);
			p->hi = scale * xo_sql_column_double(s, 6);
			p->min = scale * xo_sql_column_double(s, 7);
			p->change = !xo_sql_column_null(s, 8);
			p->dev = d;
			nchanges += p->change;
			if (p->med > 0 && p->med < vmin)
				vmin = p->med;
			if (p->med > vmax)
				vmax = p->med;
		}
	}
	/* the common x axis: every run of the group, oldest first */
	if (n)
		qsort(pt, n, sizeof(*pt), hist_point_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i && pt[i].run != pt[i - 1].run)
			nx++;
		pt[i].x = nx;
	}
	if (n)
		nx++;
	for (int d = 0; d < nmem; d++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/data/hist_%s_%d.dat", outdir, safe, d + 1);
		if (!(f = fopen(path, "w"))) {
			st = xo_error(XO_EIO, "%s: %s", path, strerror(errno));
			goto out;
		}
		fprintf(f, "# idx median_%s ci_lo ci_hi min change_marker commit\n",
		        counts ? "Minstructions" : "ms");
		for (size_t i = 0; i < n; i++) {
			const struct hist_point *p = &pt[i];

			if (p->dev != d)
				continue;
			fprintf(f, "%d %.6g %.6g %.6g %.6g ", p->x, p->med, p->lo, p->hi, p->min);
			if (p->change)
				fprintf(f, "%.6g", p->med);
			else
				fprintf(f, "NaN");
			fprintf(f, " %s\n", p->sha);
		}
		fclose(f);
		snprintf(devices + strlen(devices), sizeof(devices) - strlen(devices), "%s%s",
		         d ? " " : "", mem[d].label);
	}
	gp_safe(mem[0].group, title, sizeof(title));
	fprintf(gp,
	        "prefix = 'data/hist_%s_'; devices = '%s'; ndev = %d; title_text = '%s';\n"
	        "nchanges = %d; npoints = %d; logy = %d; ylabel_text = '%s';\n"
	        "outbase = 'hist_%s'; load script_dir.'/history.gp'\n",
	        safe, devices, nmem, title, nchanges, nx, vmax > HIST_LOG_RATIO * vmin,
	        counts ? "instructions per call (millions; callgrind)" : "time per call (ms)",
	        safe);
out:
	xo_sql_finalize(s);
	free(pt);
	return st;
}

/* The latest complete run that measured our own devices (not a peer import). */
static enum xo_status latest_own_run(struct xo_perfdb *db, int64_t testbed, int64_t *run)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;

	if (xo_sql_prepare(
	        xo_perfdb_sql(db),
	        "SELECT max(ru.id) FROM runs ru JOIN results res ON res.run_id = ru.id"
	        " JOIN benchmarks b ON b.id = res.benchmark_id"
	        " WHERE ru.state = 'complete' AND (b.device IN ('ref','cpu')"
	        " OR b.device LIKE 'cl%') AND b.metric = 'time' AND (? = 0 OR ru.testbed_id = ?)",
	        &s))
		return sql_err(db, "finding the latest run");
	xo_sql_bind_int64(s, 1, testbed);
	xo_sql_bind_int64(s, 2, testbed);
	if (xo_sql_step(s) != XO_SQL_ROW || xo_sql_column_null(s, 0))
		st = xo_error(XO_EINVAL, "no complete run of ref/cpu/cl recorded yet%s: run `xo perf "
		                         "record` first", testbed ? " on that testbed" : "");
	else
		*run = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	return st;
}

/* gnuplot on plots.gp in outdir, from an argument vector (no shell), its
 * output in outdir/gnuplot.log; every path in the script is relative. */
static int run_gnuplot(const char *outdir)
{
	char log[4200];
	const char *argv[] = {"gnuplot", "plots.gp", NULL};
	struct xo_proc p = {.argv = argv, .cwd = outdir, .log_path = log};
	int code = 1;

	snprintf(log, sizeof(log), "%s/gnuplot.log", outdir);
	if (xo_proc_run(&p, &code, NULL, NULL))
		return -1;
	return code;
}

/* ---- the output directory -------------------------------------------------------- */

#define REPORT_MARKER ".xo-perf-report" /* in every directory a report wrote */

static void remove_tree(const char *dir)
{
	const char *argv[] = {"rm", "-rf", "--", dir, NULL};
	struct xo_proc p = {.argv = argv};
	int code;

	xo_proc_run(&p, &code, NULL, NULL);
}

/*
 * --out may be a path that does not exist yet, an empty directory, or a
 * directory an earlier report wrote (it holds REPORT_MARKER). A symlink, a
 * file, a device or someone else's non-empty directory is refused: the
 * report replaces the directory as a whole, never merges into it.
 */
static enum xo_status out_check(const char *dst, bool *exists)
{
	struct stat sb;
	char marker[4300];
	DIR *d;
	struct dirent *e;
	bool empty = true;

	*exists = false;
	if (lstat(dst, &sb)) {
		if (errno == ENOENT)
			return XO_OK;
		return xo_error(XO_EINVAL, "--out %s: %s", dst, strerror(errno));
	}
	if (S_ISLNK(sb.st_mode))
		return xo_error(XO_EINVAL, "--out %s: is a symbolic link; give the directory itself",
		                dst);
	if (!S_ISDIR(sb.st_mode))
		return xo_error(XO_EINVAL, "--out %s: exists and is not a directory", dst);
	*exists = true;
	snprintf(marker, sizeof(marker), "%s/" REPORT_MARKER, dst);
	if (!lstat(marker, &sb) && S_ISREG(sb.st_mode))
		return XO_OK;
	if (!(d = opendir(dst)))
		return xo_error(XO_EINVAL, "--out %s: %s", dst, strerror(errno));
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	if (!empty)
		return xo_error(XO_EINVAL,
		                "--out %s: a non-empty directory no report wrote; refusing to replace "
		                "it (give a new or empty directory)",
		                dst);
	return XO_OK;
}

/* Copies the gnuplot scripts into dir/scripts: the plots' script names only
 * relative paths, never the source tree's. */
static enum xo_status copy_scripts(const char *scripts_dir, const char *dir)
{
	static const char *const names[] = {"common.gp", "history.gp", "crossover.gp",
	                                    "gpu_split.gp", "gpu_layers.gp"};
	char src[4300], dst[4300], buf[8192];

	snprintf(dst, sizeof(dst), "%s/scripts", dir);
	if (mkdir(dst, 0777))
		return xo_error(XO_EIO, "%s: %s", dst, strerror(errno));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		FILE *in, *o;
		size_t n;
		bool ok = true;

		snprintf(src, sizeof(src), "%s/%s", scripts_dir, names[i]);
		snprintf(dst, sizeof(dst), "%s/scripts/%s", dir, names[i]);
		if (!(in = fopen(src, "rb")))
			return xo_error(XO_EIO, "%s: %s (set XO_SOURCE_DIR)", src, strerror(errno));
		if (!(o = fopen(dst, "wb"))) {
			fclose(in);
			return xo_error(XO_EIO, "%s: %s", dst, strerror(errno));
		}
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			ok &= fwrite(buf, 1, n, o) == n;
		fclose(in);
		if (fclose(o) || !ok)
			return xo_error(XO_EIO, "%s: cannot write", dst);
	}
	return XO_OK;
}

static enum xo_status write_report(struct xo_perfdb *db, const char *outdir,
                                   const char *model_arg, int64_t latest, int64_t only,
                                   FILE *sum, int64_t *nhist_out, int64_t *main_run_out);
static int list_models(struct xo_perfdb *db, char (*names)[64], int max);
static void model_name(const char *arg, char *out, size_t size);

/* XO_OK when the store holds measurements of model (a name or a spec or
 * Keras file's path); otherwise an error that lists the models it holds. */
static enum xo_status model_check(struct xo_perfdb *db, const char *model)
{
	char names[32][64], name[64], have[512] = "";
	int n;

	model_name(model, name, sizeof(name));
	n = list_models(db, names, 32);
	for (int i = 0; i < n; i++) {
		if (!strcmp(names[i], name))
			return XO_OK;
		snprintf(have + strlen(have), sizeof(have) - strlen(have), "%s%s", i ? ", " : "",
		         names[i]);
	}
	if (!n)
		return xo_error(XO_EINVAL, "--model %s: the store holds no model measurements: run "
		                           "`xo perf record` first",
		                model);
	return xo_error(XO_EINVAL, "--model %s: no measurements of model '%s' in the store; it holds: "
	                           "%s (choose one with --model)",
	                model, name, have);
}

/*
 * The report is built in a temporary sibling of --out and renamed into place
 * when it is complete: --out is never written before the report is known to
 * succeed, and a failure leaves it as it was.
 */
enum xo_status xo_perf_report(struct xo_perfdb *db, const char *user_out, const char *scripts_dir,
                              const char *model, FILE *out)
{
	return xo_perf_report_testbed(db, user_out, scripts_dir, model, 0, out);
}

enum xo_status xo_perf_report_testbed(struct xo_perfdb *db, const char *user_out,
                                      const char *scripts_dir, const char *model,
                                      int64_t only, FILE *out)
{
	char dst[4096], tmp[4200], old[4200], marker[4300];
	enum xo_status st;
	int64_t latest = 0, nhist = 0, main_run = 0;
	bool exists;
	size_t n, sumlen = 0;
	char *sumtext = NULL;
	FILE *f, *sum;

	if (!have_gnuplot())
		return xo_error(XO_ENODEV, "gnuplot not found in PATH: install it "
		                           "(apt-get install gnuplot-nox) to draw reports");
	snprintf(dst, sizeof(dst), "%s", user_out);
	for (n = strlen(dst); n > 1 && dst[n - 1] == '/'; n--)
		dst[n - 1] = '\0';
	if (!dst[0])
		return xo_error(XO_EINVAL, "--out: empty path");
	if (model && (st = model_check(db, model)))
		return st;
	if ((st = out_check(dst, &exists)))
		return st;
	if ((st = latest_own_run(db, only, &latest)))
		return st;
	snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", dst);
	if (!mkdtemp(tmp))
		return xo_error(XO_EIO, "--out %s: cannot create a directory beside it: %s", dst,
		                strerror(errno));
	snprintf(marker, sizeof(marker), "%s/" REPORT_MARKER, tmp);
	if (!(f = fopen(marker, "w")) || fclose(f)) {
		st = xo_error(XO_EIO, "%s: cannot write: %s", marker, strerror(errno));
		goto out_remove;
	}
	if (!(sum = open_memstream(&sumtext, &sumlen))) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out_remove;
	}
	if ((st = copy_scripts(scripts_dir, tmp)) ||
	    (st = write_report(db, tmp, model, latest, only, sum, &nhist, &main_run))) {
		fclose(sum);
		free(sumtext);
		sumtext = NULL;
		if (strstr(xo_last_error(), "gnuplot failed"))
			return st; /* its log is in tmp, which the message names */
		goto out_remove;
	}
	fclose(sum);
	if (exists) {
		/* out of the way first (rename cannot replace a non-empty directory) */
		snprintf(old, sizeof(old), "%s.old-XXXXXX", dst);
		if (!mkdtemp(old) || rmdir(old) || rename(dst, old)) {
			st = xo_error(XO_EIO, "--out %s: cannot replace it: %s", dst, strerror(errno));
			goto out_remove;
		}
	}
	if (rename(tmp, dst)) {
		st = xo_error(XO_EIO, "--out %s: cannot rename the report into place: %s", dst,
		              strerror(errno));
		if (exists)
			rename(old, dst);
		goto out_remove;
	}
	if (exists)
		remove_tree(old);
	/* the answer first, then where the rest is */
	fputs(sumtext ? sumtext : "", out);
	fprintf(out,
	        "report: %s/index.html (%lld history plots, answer and OpenCL split of run %lld)\n",
	        dst, (long long)nhist, (long long)main_run);
	free(sumtext);
	return XO_OK;
out_remove:
	free(sumtext);
	remove_tree(tmp);
	return st;
}

/* The generated mutants of the latest run that ci/mutate.sh --from stored
 * (table mutant_results; a store without it has no such table): the counts
 * by result, then every survivor with file:line and the mutation, and every
 * one marked equivalent with its reason (ci/mutgen-equivalent.tsv). Every
 * column shown is grouped: PostgreSQL refuses one that is not. */
static void write_mutants(struct xo_perfdb *db, FILE *html)
{
	struct xo_sql_stmt *s = NULL;
	bool any = false;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT date, sha, range, result, COUNT(*) FROM mutant_results"
	                   " WHERE date = (SELECT MAX(date) FROM mutant_results)"
	                   " GROUP BY date, sha, range, result ORDER BY result",
	                   &s) != XO_SQL_OK)
		return;
	while (xo_sql_step(s) == XO_SQL_ROW) {
		if (!any) {
			fprintf(html, "<h2>Suite power: generated mutants (ci/mutgen.py)</h2>\n"
			              "<p>");
			html_escape(html, col_text(s, 0));
			fprintf(html, ", commit <code>");
			html_escape(html, col_text(s, 1));
			fprintf(html, "</code>, lines added by <code>");
			html_escape(html, col_text(s, 2));
			fprintf(html, "</code>:");
		}
		fprintf(html, "%s ", any ? "," : "");
		html_escape(html, col_text(s, 3));
		fprintf(html, " %lld", (long long)xo_sql_column_int64(s, 4));
		any = true;
	}
	xo_sql_finalize(s);
	s = NULL;
	if (!any)
		return;
	fprintf(html, ".</p>\n");
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT mutant, file, line, operator, original, mutated, result, reason"
	                   " FROM mutant_results"
	                   " WHERE date = (SELECT MAX(date) FROM mutant_results)"
	                   " AND result IN ('survived', 'equivalent', 'caught-equivalent')"
	                   " ORDER BY result DESC, file, line", &s) != XO_SQL_OK)
		return;
	fprintf(html, "<table><tr><th>mutant</th><th>where</th><th>operator</th><th>original</th>"
	              "<th>mutated</th><th>result</th></tr>\n");
	any = false;
	while (xo_sql_step(s) == XO_SQL_ROW) {
		bool survived = !strcmp(col_text(s, 6), "survived");

		fprintf(html, "<tr class=\"%s\"><td>", survived ? "reg" : "imp");
		html_escape(html, col_text(s, 0));
		fprintf(html, "</td><td>");
		html_escape(html, col_text(s, 1));
		fprintf(html, ":%lld</td>", (long long)xo_sql_column_int64(s, 2));
		for (int i = 3; i <= 5; i++) {
			fprintf(html, "<td>%s", i > 3 ? "<code>" : "");
			html_escape(html, col_text(s, i));
			fprintf(html, "%s</td>", i > 3 ? "</code>" : "");
		}
		fprintf(html, "<td>");
		html_escape(html, col_text(s, 6));
		if (col_text(s, 7)[0]) {
			fprintf(html, ": ");
			html_escape(html, col_text(s, 7));
		}
		fprintf(html, "</td></tr>\n");
		any = true;
	}
	xo_sql_finalize(s);
	if (!any)
		fprintf(html, "<tr><td colspan=\"6\">none: every mutant that built was "
		              "caught</td></tr>\n");
	fprintf(html, "</table>\n");
}

static enum xo_status write_compare(struct xo_perfdb *db, FILE *html, int64_t latest,
                                    int64_t testbed);
static enum xo_status write_histories(struct xo_perfdb *db, const char *outdir, FILE *gp,
                                      FILE *html, int64_t only, int64_t *nhist);

/* The text the report prints first: per model the crossover and diagnosis. */
static void summary_answer(FILE *sum, const struct answer *a)
{
	char line[512], model[64];

	gp_safe(a->model, model, sizeof(model));
	for (int w = 0; w < 2; w++)
		if (a->wl[w].run)
			fprintf(sum, "%s %s: %s\n", model, a->wl[w].what,
			        cross_sentence(&a->wl[w].x, line, sizeof(line)));
	for (int i = 0; i < a->ndiag; i++)
		fprintf(sum, "%s: %s\n", model, a->diag[i]);
}

/*
 * The quick suites' coverage per folder (ci/coverage.sh --db writes table
 * coverage: one row per run date, commit and folder; a store without it has
 * no section): line and branch % of the last COV_RUNS runs, one line per
 * folder, then the latest run's figures with its to-do count (the lines no
 * quick test reaches in model/, perfdb/ and the kernels' drivers, listed by
 * that run's todo.txt). Data: data/coverage_FOLDER.dat.
 */
#define COV_RUNS    60 /* the query's LIMIT */
#define COV_FOLDERS 16

struct cov_row {
	char folder[32];      /* file-name-safe */
	long long lines, lines_hit, branches, branches_hit, todo; /* todo < 0: not listed */
};

/* hit/n as a percentage followed by unit, or none where n is 0 (a folder
 * without branches) */
static void cov_pct(FILE *f, long long hit, long long n, const char *unit, const char *none)
{
	if (n > 0)
		fprintf(f, "%.1f%s", 100.0 * (double)hit / (double)n, unit);
	else
		fputs(none, f);
}

static enum xo_status write_coverage(struct xo_perfdb *db, const char *outdir, FILE *gp,
                                     FILE *html)
{
	static const char *const what[2][2] = {{"lines", "lines covered (%)"},
	                                       {"branches", "branch outcomes taken (%)"}};
	struct xo_sql_stmt *s = NULL;
	struct cov_row last[COV_FOLDERS];
	char folders[COV_FOLDERS][32], date[40] = "", sha[24] = "", path[4200];
	FILE *dat[COV_FOLDERS] = {NULL};
	int nf = 0, nlast = 0, nx = 0;
	enum xo_status st = XO_OK;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT q.date, q.sha, q.dirty, q.folder, q.lines, q.lines_hit,"
	                   " q.branches, q.branches_hit, coalesce(q.todo, -1),"
	                   " dense_rank() OVER (ORDER BY q.date) FROM coverage q"
	                   " WHERE q.date IN (SELECT date FROM (SELECT DISTINCT date FROM coverage"
	                   " ORDER BY date DESC LIMIT 60) r)" /* COV_RUNS */
	                   " ORDER BY q.date, q.folder", &s) != XO_SQL_OK)
		return XO_OK;
	while (xo_sql_step(s) == XO_SQL_ROW) {
		struct cov_row r;
		int f;

		safe_name(col_text(s, 3), r.folder, sizeof(r.folder));
		r.lines = xo_sql_column_int64(s, 4);
		r.lines_hit = xo_sql_column_int64(s, 5);
		r.branches = xo_sql_column_int64(s, 6);
		r.branches_hit = xo_sql_column_int64(s, 7);
		r.todo = xo_sql_column_int64(s, 8);
		nx = (int)xo_sql_column_int64(s, 9);
		if (strcmp(date, col_text(s, 0))) { /* a newer run: the table is its rows */
			snprintf(date, sizeof(date), "%s", col_text(s, 0));
			safe_name(col_text(s, 1), sha, sizeof(sha) - 1);
			if (xo_sql_column_int64(s, 2))
				strcat(sha, "+");
			nlast = 0;
		}
		if (nlast < COV_FOLDERS)
			last[nlast++] = r;
		for (f = 0; f < nf && strcmp(folders[f], r.folder); f++)
			;
		if (f == nf) {
			if (nf == COV_FOLDERS)
				continue;
			snprintf(folders[nf++], sizeof(folders[0]), "%s", r.folder);
			snprintf(path, sizeof(path), "%s/data/coverage_%s.dat", outdir, r.folder);
			if (!(dat[f] = fopen(path, "w"))) {
				st = xo_error(XO_EIO, "%s: cannot write: %s", path, strerror(errno));
				goto out;
			}
			fprintf(dat[f], "# run line_pct branch_pct commit\n");
		}
		fprintf(dat[f], "%d ", nx - 1);
		cov_pct(dat[f], r.lines_hit, r.lines, "", "NaN");
		fputc(' ', dat[f]);
		cov_pct(dat[f], r.branches_hit, r.branches, "", "NaN");
		fprintf(dat[f], " %s\n", sha);
	}
	if (!nf)
		goto out;
	for (int m = 0; m < 2; m++) {
		fprintf(gp, "reset\nset datafile missing 'NaN'\nset title 'coverage of the quick suites:"
		            " %s'\nset ylabel '%s'\nset xlabel 'coverage run (oldest to newest; + ="
		            " dirty)'\nset yrange [0:100]\nset xrange [-0.5:%d.5]\nset grid ytics\n"
		            "set key below horizontal noenhanced\nset xtics rotate by 45 right\n"
		            "do for [fmt in \"png svg\"] {\n"
		            "\tif (fmt eq \"png\") { eval(\"set terminal \".png_term) }"
		            " else { eval(\"set terminal \".svg_term) }\n"
		            "\tset output 'coverage_%s.'.fmt\n\tplot ",
		        what[m][0], what[m][1], nx - 1, what[m][0]);
		for (int f = 0; f < nf; f++)
			fprintf(gp, "%s'data/coverage_%s.dat' using 1:%d%s with linespoints lw 2 pt 7"
			            " title '%s'", f ? ", \\\n\t     " : "", folders[f], 2 + m,
			        f ? "" : ":xtic(4)", folders[f]);
		fprintf(gp, "\n\tset output\n}\n");
	}
	fprintf(html, "<h2 id=\"coverage\">Coverage of the quick suites (ci/coverage.sh)</h2>\n"
	              "<p>Line and branch coverage (gcov) per folder, the last %d runs at most; "
	              "to-do: lines no quick test reaches in model/, perfdb/ and the kernels' "
	              "drivers (the run's todo.txt lists them). Latest: commit <code>%s</code>, ",
	        COV_RUNS, sha);
	html_escape(html, date);
	fprintf(html, ".</p>\n<a href=\"coverage_lines.svg\"><img src=\"coverage_lines.png\"></a>"
	              "<a href=\"coverage_branches.svg\"><img src=\"coverage_branches.png\"></a>\n"
	              "<table><tr><th>folder</th><th>lines</th><th>line %%</th><th>branches</th>"
	              "<th>branch %%</th><th>to-do</th></tr>\n");
	for (int i = 0; i < nlast; i++) {
		const struct cov_row *r = &last[i];

		fprintf(html, "<tr><td>%s</td><td>%lld/%lld</td><td>", r->folder, r->lines_hit,
		        r->lines);
		cov_pct(html, r->lines_hit, r->lines, "%", "-");
		fprintf(html, "</td><td>%lld/%lld</td><td>", r->branches_hit, r->branches);
		cov_pct(html, r->branches_hit, r->branches, "%", "-");
		if (r->todo >= 0)
			fprintf(html, "</td><td>%lld</td></tr>\n", r->todo);
		else
			fprintf(html, "</td><td>-</td></tr>\n");
	}
	fprintf(html, "</table>\n");
out:
	for (int f = 0; f < nf; f++)
		if (dat[f] && fclose(dat[f]) && !st)
			st = xo_error(XO_EIO, "%s/data: cannot write coverage data", outdir);
	xo_sql_finalize(s);
	return st;
}

/*
 * index.html in the order a reader asks: the answer per model (faster device
 * per batch, crossover with its interval, diagnosis, probe), regressions
 * (stored changes, then the latest run against the one before), where the
 * OpenCL time goes, the suites' power and coverage, history per benchmark
 * group, and the testbed. sum gets the text summary (summary_answer).
 */
/* The head of plots.gp and of index.html. */
static void report_heads(FILE *gp, FILE *html)
{
	fprintf(gp, "# generated by xo perf report\nscript_dir = 'scripts'\n"
	            "load script_dir.'/common.gp'\n");
	fprintf(html, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>crossover perf "
	              "report</title>\n<style>body{font-family:sans-serif;margin:2em}"
	              "img{max-width:48%%;margin:4px;border:1px solid #ccc}"
	              "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;"
	              "font-size:90%%}.reg{color:#b00}.imp{color:#070}.unk{color:#850}"
	              "div.answer{display:flex;align-items:flex-start;gap:1em}"
	              "div.answer img{max-width:none;width:640px}</style></head><body>\n"
	              "<h1>crossover perf report</h1>\n");
}

/* One line on the evidence (the latest run, its commit and host); the
 * testbed's details close the page (write_testbed). *testbed: the latest
 * run's. */
static enum xo_status write_latest(struct xo_perfdb *db, FILE *html, int64_t latest,
                                   int64_t *testbed)
{
	struct xo_sql_stmt *s = NULL;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT ru.testbed_id, c.sha, c.dirty, c.subject, ru.started,"
	                       " t.hostname, t.cpu_model, t.cores, t.blas_config, t.blas_coretype,"
	                       " t.cl_device, t.compiler, t.cflags, t.env"
	                       " FROM runs ru JOIN commits c ON c.id = ru.commit_id"
	                       " JOIN testbeds t ON t.id = ru.testbed_id WHERE ru.id = ?", &s)) {
		return sql_err(db, "report");
	}
	xo_sql_bind_int64(s, 1, latest);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		time_t t = (time_t)xo_sql_column_int64(s, 4);
		char when[64] = "?";
		struct tm tm;

		*testbed = xo_sql_column_int64(s, 0);
		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
		fprintf(html, "<p>Latest run: <b>run:%lld</b>, commit <code>%.12s%s</code> (",
		        (long long)latest, col_text(s, 1),
		        xo_sql_column_int(s, 2) ? " dirty" : "");
		html_escape(html, col_text(s, 3));
		fprintf(html, "), %s, host ", when);
		html_escape(html, col_text(s, 5));
		fprintf(html, " (<a href=\"#testbed\">testbed %lld</a>).</p>\n", (long long)*testbed);
	}
	xo_sql_finalize(s);
	return XO_OK;
}

/* The changes xo perf detect stored, those under test first, each linked
 * to its benchmark group's history plot. */
static void write_changes(struct xo_perfdb *db, FILE *html)
{
	struct xo_sql_stmt *s = NULL;
	int nch = 0; /* changes listed: none gets a row that says so */

	fprintf(html, "<h2 id=\"regressions\">Regressions</h2>\n<h3>Changes (xo perf detect)</h3>\n"
	              "<table><tr><th>id</th><th>state</th>"
	              "<th>benchmark</th><th>commit</th><th>change</th><th>p</th></tr>\n");
	if (xo_sql_prepare(
	        xo_perfdb_sql(db),
	        /* a subquery: PostgreSQL orders by an alias only when it stands alone */
	        "SELECT * FROM (SELECT ch.id, ch.state, ch.direction, b.name, c.sha, ch.ratio,"
	        " ch.p_value, CASE WHEN b.device = 'ref' THEN 'ref' WHEN b.device = 'cpu' OR"
	        " b.device LIKE 'cl%' THEN '' ELSE 'peer' END AS apart, b.device"
	        " FROM changes ch JOIN benchmarks b ON b.id = ch.benchmark_id"
	        " JOIN commits c ON c.id = ch.commit_id) q"
	        " ORDER BY apart != '', apart, state != 'confirmed', name", &s) == XO_SQL_OK) {
		while (xo_sql_step(s) == XO_SQL_ROW) {
			char group[192], safe[256];

			nch++;
			/* regressions and improvements in their own colours; each
			 * change links to its benchmark group's history plot */
			bench_group(col_text(s, 3), col_text(s, 8), group, sizeof(group));
			safe_name(group, safe, sizeof(safe));
			fprintf(html, "<tr class=\"%s\"><td>%lld</td><td>",
			        !strcmp(col_text(s, 2), "regression") ? "reg" : "imp",
			        (long long)xo_sql_column_int64(s, 0));
			html_escape(html, col_text(s, 1));
			fprintf(html, " %s</td><td><a href=\"hist_%s.svg\">",
			        !strcmp(col_text(s, 2), "regression") ? "regression" : "improvement",
			        safe);
			html_escape(html, col_text(s, 3));
			if (col_text(s, 7)[0]) /* ref and peers: listed after, never alarms */
				fprintf(html, "</a> (%s, not under test", col_text(s, 7));
			fprintf(html, "%s</td><td><code>%.10s</code></td><td>%+.1f%%</td>",
			        col_text(s, 7)[0] ? ")" : "</a>", col_text(s, 4),
			        100.0 * (xo_sql_column_double(s, 5) - 1.0));
			fprintf(html, "<td>%.2g</td></tr>\n", xo_sql_column_double(s, 6));
		}
		xo_sql_finalize(s);
	}
	if (!nch)
		fprintf(html, "<tr><td colspan=\"6\">none: xo perf detect has stored no change "
		              "in this store</td></tr>\n");
	fprintf(html, "</table>\n");
}

/* Where the OpenCL time goes, per model (its latest run in runs). */
static enum xo_status write_splits(struct xo_perfdb *db, const char *outdir, FILE *gp, FILE *html,
                                   char (*models)[64], const int64_t *runs, int nmodels)
{
	static const char *const whats[] = {"train_step", "predict"};
	enum xo_status st;

	for (int mi = 0; mi < nmodels; mi++) {
		const char *model = models[mi];
		int64_t run = runs[mi];

		if (!run)
			continue;
		fprintf(html, "<h2 id=\"split_");
		html_escape(html, model);
		fprintf(html, "\">Where the OpenCL time goes: ");
		html_escape(html, model);
		fprintf(html,
		        "</h2>\n<p>The wall time of one call split into parts that add up to its "
		        "median (perfdb/split.h): <b>launch</b> = the device idle while the host "
		        "launches, enqueues and synchronises; <b>transfer</b> = host-to-device and "
		        "device-to-host copies; <b>compute</b> = kernels running; <b>other</b> = host "
		        "work outside enqueue and wait. Then the kernel time of one training step per "
		        "layer.</p>\n");
		for (int w = 0; w < 2; w++)
			if ((st = write_split(db, outdir, gp, html, model, whats[w], run)))
				return st;
		if ((st = write_layers(db, outdir, gp, html, model, run)))
			return st;
	}
	return XO_OK;
}

/* The suites' power: the mutation stage's figures (ci/mutate.sh --db
 * writes table mutation_runs; a store without it has no section). */
static void write_mutation_runs(struct xo_perfdb *db, FILE *html)
{
	struct xo_sql_stmt *s = NULL;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT date, sha, dirty, caught, total, equivalent, errors, missed,"
	                       " seconds, mutants, mutants_all FROM mutation_runs"
	                       " ORDER BY id DESC LIMIT 10", &s) == XO_SQL_OK) {
		fprintf(html, "<h2>Suite power (ci/mutate.sh)</h2>\n<p>Planted bugs caught by what CI "
		              "runs, newest first.</p>\n<table><tr><th>date</th><th>commit</th>"
		              "<th>caught</th><th>equivalent</th><th>errors</th><th>mutants run</th>"
		              "<th>seconds</th><th>missed</th></tr>\n");
		while (xo_sql_step(s) == XO_SQL_ROW) {
			bool all = xo_sql_column_int64(s, 3) == xo_sql_column_int64(s, 4) &&
			           xo_sql_column_int64(s, 6) == 0;

			fprintf(html, "<tr class=\"%s\"><td>", all ? "imp" : "reg");
			html_escape(html, col_text(s, 0));
			fprintf(html, "</td><td><code>");
			html_escape(html, col_text(s, 1));
			fprintf(html, "%s</code></td><td>%lld/%lld</td><td>%lld</td><td>%lld</td>"
			              "<td>%lld of %lld</td><td>%lld</td><td>",
			        xo_sql_column_int64(s, 2) ? " (dirty)" : "",
			        (long long)xo_sql_column_int64(s, 3), (long long)xo_sql_column_int64(s, 4),
			        (long long)xo_sql_column_int64(s, 5), (long long)xo_sql_column_int64(s, 6),
			        (long long)xo_sql_column_int64(s, 9), (long long)xo_sql_column_int64(s, 10),
			        (long long)xo_sql_column_int64(s, 8));
			html_escape(html, col_text(s, 7));
			fprintf(html, "</td></tr>\n");
		}
		xo_sql_finalize(s);
		fprintf(html, "</table>\n");
	}
}

/* The testbed of the latest run, in full. */
static enum xo_status write_testbed(struct xo_perfdb *db, FILE *html, int64_t latest,
                                    int64_t testbed)
{
	struct xo_sql_stmt *s = NULL;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT t.hostname, t.cpu_model, t.cores, t.blas_config,"
	                       " t.blas_coretype, t.cl_device, t.compiler, t.cflags, t.env"
	                       " FROM runs ru JOIN testbeds t ON t.id = ru.testbed_id"
	                       " WHERE ru.id = ?", &s)) {
		return sql_err(db, "report");
	}
	xo_sql_bind_int64(s, 1, latest);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		static const char *const labels[] = {
		    "host",          "CPU",      "cores", "BLAS",       "BLAS core type",
		    "OpenCL device", "compiler", "flags", "environment"};

		fprintf(html, "<h2 id=\"testbed\">Testbed %lld (run:%lld)</h2>\n<table>\n",
		        (long long)testbed, (long long)latest);
		for (int i = 0; i < 9; i++) {
			fprintf(html, "<tr><th>%s</th><td>", labels[i]);
			html_escape(html, col_text(s, i));
			fprintf(html, "</td></tr>\n");
		}
		fprintf(html, "</table>\n");
	}
	xo_sql_finalize(s);
	return XO_OK;
}

static enum xo_status write_report(struct xo_perfdb *db, const char *outdir,
                                   const char *model_arg, int64_t latest, int64_t only,
                                   FILE *sum, int64_t *nhist_out, int64_t *main_run_out)
{
	char path[4096], models[32][64];
	int nmodels = 0;
	FILE *gp = NULL, *html = NULL;
	enum xo_status st = XO_OK;
	int64_t testbed = 0, main_run = 0, nhist = 0, runs[32] = {0};
	struct answer *ans = calloc(1, sizeof(*ans));
	int rc;

	if (!ans)
		return xo_error(XO_ENOMEM, "perf: out of memory");
	snprintf(path, sizeof(path), "%s/data", outdir);
	if (mkdir(path, 0777) && errno != EEXIST) {
		free(ans);
		return xo_error(XO_EIO, "%s: cannot create the directory: %s", path,
		                strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/plots.gp", outdir);
	gp = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/index.html", outdir);
	html = fopen(path, "w");
	if (!gp || !html) {
		st = xo_error(XO_EIO, "%s: cannot write: %s", outdir, strerror(errno));
		goto out;
	}
	report_heads(gp, html);

	if ((st = write_latest(db, html, latest, &testbed)))
		goto out;

	/* 1. the answer, per model */
	if (model_arg) {
		model_name(model_arg, models[0], sizeof(models[0]));
		nmodels = 1;
	} else {
		nmodels = list_models(db, models, 32);
	}
	for (int mi = 0; mi < nmodels; mi++) {
		if ((st = answer_load(db, models[mi], ans)) ||
		    (st = write_answer(db, outdir, gp, html, ans)))
			goto out;
		summary_answer(sum, ans);
		runs[mi] = ans->run;
		if (!main_run)
			main_run = ans->run;
	}

	/* 2. regressions: the stored changes, then the latest run against the
	 * one before it on the same testbed */
	write_changes(db, html);
	if ((st = write_compare(db, html, latest, testbed)))
		goto out;

	/* 3. where the OpenCL time goes, per model */
	if ((st = write_splits(db, outdir, gp, html, models, runs, nmodels)))
		goto out;

	write_mutation_runs(db, html);
	write_mutants(db, html);

	if ((st = write_coverage(db, outdir, gp, html)))
		goto out;

	/* 4. history, one plot per benchmark group */
	if ((st = write_histories(db, outdir, gp, html, only, &nhist)))
		goto out;

	/* 5. the testbed of the latest run */
	if ((st = write_testbed(db, html, latest, testbed)))
		goto out;
	fprintf(html, "</body></html>\n");
	fclose(gp);
	gp = NULL;
	fclose(html);
	html = NULL;

	rc = run_gnuplot(outdir);
	if (rc != 0) {
		st = xo_error(XO_EIO, "gnuplot failed (exit %d): see %s/gnuplot.log", rc, outdir);
		goto out;
	}
	*nhist_out = nhist;
	*main_run_out = main_run;
out:
	free(ans);
	if (gp)
		fclose(gp);
	if (html)
		fclose(html);
	return st;
}

/*
 * The latest run against the one before it on the same testbed (xo perf
 * compare run:P run:L): what changed beyond the noise, in a table. A
 * comparison that cannot be made is said in one line; the report goes on.
 */
static enum xo_status write_compare(struct xo_perfdb *db, FILE *html, int64_t latest,
                                    int64_t testbed)
{
	struct xo_perf_compare_opts o = {.threshold = 0.05, .alpha = 0.002, .json = true};
	struct xo_sql_stmt *s = NULL;
	int64_t prev = 0;
	char base[32], head[32], *buf = NULL;
	size_t len = 0, shown = 0;
	bool failed = false;
	json_t *root, *rows;
	FILE *f;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT max(ru.id) FROM runs ru WHERE ru.state = 'complete' AND"
	                       " ru.testbed_id = ? AND ru.id < ? AND EXISTS (SELECT 1 FROM results"
	                       " res JOIN benchmarks b ON b.id = res.benchmark_id WHERE"
	                       " res.run_id = ru.id AND b.metric = 'time' AND"
	                       " (b.device IN ('ref','cpu') OR b.device LIKE 'cl%'))", &s))
		return sql_err(db, "finding the run before the latest");
	xo_sql_bind_int64(s, 1, testbed);
	xo_sql_bind_int64(s, 2, latest);
	if (xo_sql_step(s) == XO_SQL_ROW)
		prev = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	fprintf(html, "<h3 id=\"compare\">Latest run against the one before (xo perf compare)"
	              "</h3>\n");
	if (!prev) {
		fprintf(html, "<p>run:%lld is the first run on this testbed: nothing to compare "
		              "with.</p>\n", (long long)latest);
		return XO_OK;
	}
	snprintf(base, sizeof(base), "run:%lld", (long long)prev);
	snprintf(head, sizeof(head), "run:%lld", (long long)latest);
	if (!(f = open_memstream(&buf, &len)))
		return xo_error(XO_ENOMEM, "perf: out of memory");
	enum xo_status st = xo_perf_compare(db, base, head, &o, f, &failed);

	fclose(f);
	root = st ? NULL : json_loads(buf ? buf : "", 0, NULL);
	free(buf);
	if (!root) {
		fprintf(html, "<p>run:%lld against run:%lld: no comparison (", (long long)latest,
		        (long long)prev);
		html_escape(html, st ? xo_last_error() : "unreadable output");
		fprintf(html, ").</p>\n");
		return XO_OK;
	}
	rows = json_object_get(root, "results");
	fprintf(html, "<p><code>xo perf compare %s %s</code>: %s.</p>\n", base, head,
	        failed ? "<b class=\"reg\">a regression</b>" : "no regression");
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *r = json_array_get(rows, i);
		const char *v = json_string_value(json_object_get(r, "verdict"));
		const char *name = json_string_value(json_object_get(r, "benchmark"));

		/* SAME is shown as the absence of a row; UNKNOWN (too close to
		 * call) is shown, unmarked, so that it is not taken for SAME */
		if (!v || !name || !strcmp(v, "SAME"))
			continue;
		if (!shown++)
			fprintf(html, "<table><tr><th>benchmark</th><th>base</th><th>head</th>"
			              "<th>change</th><th>p</th><th>verdict</th></tr>\n");
		fprintf(html, "<tr class=\"%s\"><td>",
		        !strcmp(v, "SLOWER")    ? "reg"
		        : !strcmp(v, "FASTER")  ? "imp"
		        : !strcmp(v, "UNKNOWN") ? "unk"
		                                : "");
		html_escape(html, name);
		fprintf(html, "</td><td>%.4g ms</td><td>%.4g ms</td><td>%+.1f%%</td><td>%.2g</td><td>",
		        1e3 * json_number_value(json_object_get(r, "base_median_s")),
		        1e3 * json_number_value(json_object_get(r, "head_median_s")),
		        100.0 * json_number_value(json_object_get(r, "change")),
		        json_number_value(json_object_get(r, "p_value")));
		html_escape(html, v);
		fprintf(html, "</td></tr>\n");
	}
	if (shown)
		fprintf(html, "</table>\n");
	else
		fprintf(html, "<p>Every benchmark measured by both runs is the same within the "
		              "noise.</p>\n");
	json_decref(root);
	return XO_OK;
}

/* A testbed of the report: its legend label (the hostname, or hostname-HASH
 * where two testbeds share the hostname; the hash where there is none). */
struct hist_testbed {
	int64_t id, runs, latest;
	char host[64], hash[16], label[88], cpu[128];
};

#define MAX_TESTBEDS 64

/*
 * The testbeds with complete runs (only that one when only != 0), listed on
 * the index page in a table (id="testbeds"), labelled for the legends.
 */
static enum xo_status list_testbeds(struct xo_perfdb *db, FILE *html, int64_t only,
                                    struct hist_testbed *tb, int *ntb)
{
	struct xo_sql_stmt *s = NULL;

	*ntb = 0;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT t.id, t.hostname, t.hash, t.cpu_model, count(*), max(ru.id)"
	                   " FROM testbeds t JOIN runs ru ON ru.testbed_id = t.id"
	                   " WHERE ru.state = 'complete' AND (? = 0 OR t.id = ?)"
	                   " GROUP BY t.id, t.hostname, t.hash, t.cpu_model"
	                   " ORDER BY t.hostname, t.hash", &s))
		return sql_err(db, "listing the testbeds");
	xo_sql_bind_int64(s, 1, only);
	xo_sql_bind_int64(s, 2, only);
	fprintf(html, "<h3 id=\"testbeds\">Testbeds%s</h3>\n<table><tr><th>label</th><th>id</th>"
	              "<th>host</th><th>hash</th><th>CPU</th><th>complete runs</th>"
	              "<th>latest</th></tr>\n",
	        only ? " (--testbed)" : "");
	while (xo_sql_step(s) == XO_SQL_ROW) {
		struct hist_testbed *t = &tb[*ntb];

		if (*ntb == MAX_TESTBEDS)
			break;
		t->id = xo_sql_column_int64(s, 0);
		snprintf(t->host, sizeof(t->host), "%s", col_text(s, 1));
		snprintf(t->hash, sizeof(t->hash), "%.12s", col_text(s, 2));
		snprintf(t->cpu, sizeof(t->cpu), "%s", col_text(s, 3));
		t->runs = xo_sql_column_int64(s, 4);
		t->latest = xo_sql_column_int64(s, 5);
		(*ntb)++;
	}
	xo_sql_finalize(s);
	for (int i = 0; i < *ntb; i++) {
		bool shared = false;

		for (int j = 0; j < *ntb; j++)
			shared |= j != i && !strcmp(tb[i].host, tb[j].host);
		if (!tb[i].host[0])
			snprintf(tb[i].label, sizeof(tb[i].label), "%.8s", tb[i].hash);
		else if (shared)
			snprintf(tb[i].label, sizeof(tb[i].label), "%s-%.8s", tb[i].host, tb[i].hash);
		else
			snprintf(tb[i].label, sizeof(tb[i].label), "%s", tb[i].host);
		fprintf(html, "<tr><td>");
		html_escape(html, tb[i].label);
		fprintf(html, "</td><td>%lld</td><td>", (long long)tb[i].id);
		html_escape(html, tb[i].host);
		fprintf(html, "</td><td><code>");
		html_escape(html, tb[i].hash); /* a store's text, imported stores included */
		fprintf(html, "</code></td><td>");
		html_escape(html, tb[i].cpu);
		fprintf(html, "</td><td>%lld</td><td>run:%lld</td></tr>\n", (long long)tb[i].runs,
		        (long long)tb[i].latest);
	}
	fprintf(html, "</table>\n");
	return XO_OK;
}

/* The number of complete runs with results (on testbed only; 0: all). */
static int64_t count_runs(struct xo_perfdb *db, int64_t only)
{
	struct xo_sql_stmt *s = NULL;
	int64_t n = 0;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT count(*) FROM runs ru WHERE ru.state = 'complete' AND"
	                       " (? = 0 OR ru.testbed_id = ?) AND EXISTS (SELECT 1 FROM results"
	                       " res WHERE res.run_id = ru.id)", &s))
		return -1;
	xo_sql_bind_int64(s, 1, only);
	xo_sql_bind_int64(s, 2, only);
	if (xo_sql_step(s) == XO_SQL_ROW)
		n = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	return n;
}

/* A store of one run has no history to plot: its results as one table
 * (benchmark, device, metric, median with its 95% CI, minimum). */
static enum xo_status write_single_run(struct xo_perfdb *db, FILE *html, int64_t only)
{
	struct xo_sql_stmt *s = NULL;

	fprintf(html, "<h2 id=\"history\">The run's results</h2>\n<p>One run in the store: no "
	              "history to plot yet (a plot per benchmark comes with the second run). Per "
	              "benchmark the median per call with its 95%% CI and the minimum.</p>\n"
	              "<table><tr><th>benchmark</th><th>device</th><th>median [95%% CI]</th>"
	              "<th>minimum</th></tr>\n");
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT b.name, b.device, b.metric, b.unit, res.median, res.ci_lo,"
	                       " res.ci_hi, res.min FROM results res JOIN benchmarks b ON b.id ="
	                       " res.benchmark_id JOIN runs ru ON ru.id = res.run_id WHERE"
	                       " ru.state = 'complete' AND (? = 0 OR ru.testbed_id = ?)"
	                       " ORDER BY b.name", &s))
		return sql_err(db, "report");
	xo_sql_bind_int64(s, 1, only);
	xo_sql_bind_int64(s, 2, only);
	while (xo_sql_step(s) == XO_SQL_ROW) {
		double med = xo_sql_column_double(s, 4), lo = xo_sql_column_double(s, 5),
		       hi = xo_sql_column_double(s, 6), mn = xo_sql_column_double(s, 7);
		char ci[96], m[48];

		if (!strcmp(col_text(s, 2), "time")) {
			fmt_ci(med, lo, hi, ci, sizeof(ci));
			xo_fmt_seconds(mn, m, sizeof(m));
		} else {
			snprintf(ci, sizeof(ci), "%.6g [%.6g, %.6g] %s", med, lo, hi, col_text(s, 3));
			snprintf(m, sizeof(m), "%.6g %s", mn, col_text(s, 3));
		}
		fprintf(html, "<tr><td>");
		html_escape(html, col_text(s, 0));
		fprintf(html, "</td><td>");
		html_escape(html, col_text(s, 1));
		fprintf(html, "</td><td>");
		html_escape(html, ci);
		fprintf(html, "</td><td>");
		html_escape(html, m);
		fprintf(html, "</td></tr>\n");
	}
	xo_sql_finalize(s);
	fprintf(html, "</table>\n");
	{
		struct hist_testbed tb[MAX_TESTBEDS];
		int ntb = 0;

		return list_testbeds(db, html, only, tb, &ntb);
	}
}

/* History of every benchmark measured on the report's testbeds (only that
 * one when only != 0), one plot per group (the benchmark name without its
 * device suffix) with a line per device and testbed. */
static enum xo_status write_histories(struct xo_perfdb *db, const char *outdir, FILE *gp,
                                      FILE *html, int64_t only, int64_t *nhist)
{
	struct xo_sql_stmt *s = NULL;
	struct hist_member *mem = NULL;
	struct hist_testbed tb[MAX_TESTBEDS];
	struct xo_perf_order ord = {0};
	size_t n = 0, cap = 0;
	int ntb = 0;
	enum xo_status st = XO_OK;

	*nhist = 0;
	if (count_runs(db, only) == 1)
		return write_single_run(db, html, only);
	fprintf(html,
	        "<h2 id=\"history\">History per benchmark</h2>\n<p>One plot per "
	        "benchmark with a line per device%s, one colour per device in every plot: median "
	        "per run with its 95%% CI, the run's minimum as crosses (the least disturbed "
	        "sample: a step there is code, not load), detected changes as red diamonds; a "
	        "log axis, so a step of the same ratio reads the same height.</p>\n",
	        only ? "" : " and testbed (device@label)");
	if ((st = list_testbeds(db, html, only, tb, &ntb)))
		return st;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT DISTINCT b.id, b.name, b.device, ru.testbed_id FROM results"
	                       " res JOIN benchmarks b ON b.id = res.benchmark_id JOIN runs ru ON"
	                       " ru.id = res.run_id WHERE (? = 0 OR ru.testbed_id = ?) AND"
	                       " ru.state = 'complete'", &s))
		return sql_err(db, "report");
	xo_sql_bind_int64(s, 1, only);
	xo_sql_bind_int64(s, 2, only);
	while (xo_sql_step(s) == XO_SQL_ROW) {
		const char *tl = "";

		if (n == cap) {
			size_t c2 = cap ? 2 * cap : 256;
			struct hist_member *nm = realloc(mem, c2 * sizeof(*nm));

			if (!nm) {
				st = xo_error(XO_ENOMEM, "perf: out of memory");
				goto out;
			}
			mem = nm;
			cap = c2;
		}
		mem[n].bench = xo_sql_column_int64(s, 0);
		mem[n].testbed = xo_sql_column_int64(s, 3);
		snprintf(mem[n].device, sizeof(mem[n].device), "%s", col_text(s, 2));
		bench_group(col_text(s, 1), mem[n].device, mem[n].group, sizeof(mem[n].group));
		for (int i = 0; i < ntb; i++)
			if (tb[i].id == mem[n].testbed)
				tl = tb[i].label;
		{
			/* one word of gnuplot's devices list: file-name-safe parts, '@'
			 * between them (inside single quotes '@' is no macro) */
			char sd[48], st2[88];

			safe_name(mem[n].device, sd, sizeof(sd));
			safe_name(tl, st2, sizeof(st2));
			if (!sd[0])
				snprintf(sd, sizeof(sd), "_");
			if (ntb > 1)
				snprintf(mem[n].label, sizeof(mem[n].label), "%s@%s", sd, st2);
			else
				snprintf(mem[n].label, sizeof(mem[n].label), "%s", sd);
		}
		n++;
	}
	xo_sql_finalize(s);
	s = NULL;
	if (n)
		qsort(mem, n, sizeof(*mem), hist_member_cmp);
	/* every history in the order detect uses: the commit graph's */
	if (n && (st = xo_perf_order_load(db, &ord)))
		goto out;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		char safe[256];

		while (j < n && !strcmp(mem[j].group, mem[i].group))
			j++;
		/* at most MAX_DEV lines a plot: gnuplot's colours run out long before */
		if ((st = write_history_group(db, &ord, outdir, gp, &mem[i],
		                              (int)(j - i < MAX_DEV ? j - i : MAX_DEV))))
			goto out;
		safe_name(mem[i].group, safe, sizeof(safe));
		fprintf(html, "<a href=\"hist_%s.svg\"><img src=\"hist_%s.png\" title=\"", safe,
		        safe);
		html_escape(html, mem[i].group);
		fprintf(html, "\" style=\"max-width:32%%\"></a>\n");
		(*nhist)++;
		i = j;
	}
out:
	xo_perf_order_free(&ord);
	xo_sql_finalize(s);
	free(mem);
	return st;
}

/* ---- advise -------------------------------------------------------------------- */

/* The models the store holds model benchmarks of (ours or peers'), by name. */
static int list_models(struct xo_perfdb *db, char (*names)[64], int max)
{
	struct xo_sql_stmt *s = NULL;
	int n = 0;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       /* GROUP BY, not DISTINCT: PostgreSQL orders DISTINCT rows
	                        * only by what they select */
	                       "SELECT b.model FROM benchmarks b WHERE b.kind = 'model'"
	                       " AND b.model != '' AND b.metric = 'time' AND EXISTS (SELECT 1 FROM results res JOIN runs"
	                       " ru ON ru.id = res.run_id WHERE res.benchmark_id = b.id AND"
	                       " ru.state = 'complete') GROUP BY b.model"
	                       " ORDER BY b.model = 'seed' DESC, b.model", &s))
		return 0;
	while (n < max && xo_sql_step(s) == XO_SQL_ROW)
		snprintf(names[n++], 64, "%s", col_text(s, 0));
	xo_sql_finalize(s);
	return n;
}

/* "models/tiny.model" -> "tiny": how the recorder names a model. */
static void model_name(const char *arg, char *out, size_t size)
{
	const char *base = strrchr(arg, '/');

	base = base ? base + 1 : arg;
	snprintf(out, size, "%.*s", (int)strcspn(base, "."), base);
}

static enum xo_status advise_one(struct xo_perfdb *db, const char *model, FILE *out,
                                 json_t *jm);

/*
 * `xo perf advise`: for --model M, that model; without, every model the store
 * holds (listed first), so a store with more than the seed model is never
 * answered for the seed alone.
 */
enum xo_status xo_perf_advise(struct xo_perfdb *db, const char *model_arg, bool json, FILE *out)
{
	char names[32][64];
	int n = 0;
	enum xo_status st = XO_OK;
	json_t *root = json ? json_object() : NULL, *jmodels = json ? json_array() : NULL;
	FILE *t = xo_perf_text_out(json, out);

	if (!t) {
		json_decref(root);
		json_decref(jmodels);
		return xo_error(XO_ENOMEM, "perf advise: out of memory");
	}
	if (model_arg) {
		if ((st = model_check(db, model_arg)))
			goto out;
		model_name(model_arg, names[0], sizeof(names[0]));
		n = 1;
	} else {
		n = list_models(db, names, 32);
		if (!n) {
			st = xo_error(XO_EINVAL, "no model measurements in the database: run `xo perf "
			                         "record` first");
			goto out;
		}
		fprintf(t, "models in the store:");
		for (int i = 0; i < n; i++)
			fprintf(t, " %s", names[i]);
		fprintf(t, " (choose one with --model)\n");
	}
	for (int i = 0; i < n; i++) {
		json_t *jm = json ? json_object() : NULL;

		if (n > 1)
			fprintf(t, "\n==== model %s\n", names[i]);
		st = advise_one(db, names[i], t, jm);
		if (jm)
			json_array_append_new(jmodels, jm);
		if (st)
			goto out;
	}
	if (root) {
		json_object_set_new(root, "models", jmodels);
		jmodels = NULL;
		xo_perf_json_print(root, out);
	}
out:
	xo_perf_text_done(t, out);
	json_decref(root);
	json_decref(jmodels);
	return st;
}

/* How fresh and how comparable the evidence (run) is: its commit, age and
 * host, with a warning where they differ from this tree's and host. */
static void advise_evidence(struct xo_perfdb *db, int64_t run, FILE *out, json_t *jm)
{
	struct xo_perf_commit now_commit;
	struct xo_sql_stmt *s = NULL;

	xo_perf_commit_probe(xo_perf_source_dir(), &now_commit);
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT c.sha, c.dirty, ru.started, t.hostname,"
	                       " t.cpu_model, t.cl_device FROM runs ru"
	                       " JOIN commits c ON c.id = ru.commit_id"
	                       " JOIN testbeds t ON t.id = ru.testbed_id WHERE ru.id = ?", &s) == XO_SQL_OK) {
		xo_sql_bind_int64(s, 1, run);
		if (xo_sql_step(s) == XO_SQL_ROW) {
			double age = difftime(time(NULL), (time_t)xo_sql_column_int64(s, 2)) / 86400.0;
			char host[128];

			if (jm) {
				json_object_set_new(jm, "run", json_integer(run));
				json_object_set_new(jm, "commit", json_string(col_text(s, 0)));
				json_object_set_new(jm, "host", json_string(col_text(s, 3)));
			}
			fprintf(out, "\nevidence: run:%lld, commit %.12s%s, %.1f days old, host %s (%s)\n",
			        (long long)run, col_text(s, 0),
			        xo_sql_column_int(s, 1) ? " (dirty)" : "", age, col_text(s, 3),
			        col_text(s, 4));
			if (age > 30)
				fprintf(out, "warning: the data is %.0f days old (> 30): re-run `xo perf "
				             "record`\n",
				        age);
			if (strcmp(col_text(s, 0), now_commit.sha))
				fprintf(out, "warning: measured at commit %.12s, this tree is at %.12s: "
				             "re-run `xo perf record`\n",
				        col_text(s, 0), now_commit.sha);
			if (gethostname(host, sizeof(host)) == 0 && strcmp(host, col_text(s, 3)))
				fprintf(out, "warning: measured on host %s, this is %s\n", col_text(s, 3),
				        host);
		}
		xo_sql_finalize(s);
	}
}

static enum xo_status advise_one(struct xo_perfdb *db, const char *model, FILE *out, json_t *jm)
{
	struct answer *a = calloc(1, sizeof(*a));
	enum xo_status st = XO_OK;
	char line[512];

	if (!a)
		return xo_error(XO_ENOMEM, "perf: out of memory");
	if (jm)
		json_object_set_new(jm, "model", json_string(model));
	if ((st = answer_load(db, model, a)))
		goto out;
	if (!a->run) {
		st = xo_error(XO_EINVAL,
		              "no measurements of model '%s' in the database: run `xo perf "
		              "record` first",
		              model);
		goto out;
	}
	/* the answer first: the crossover and the diagnosis, as the report says them */
	json_t *jd = jm ? json_array() : NULL, *jx = jm ? json_object() : NULL;

	if (jm) {
		json_object_set_new(jm, "diagnosis", jd);
		json_object_set_new(jm, "crossover", jx);
	}
	if (answer_cl_on_cpu(db, a)) {
		fprintf(out, "%s (PoCL or another CPU device): the cl column is not a GPU's\n",
		        XO_PERF_NO_GPU);
		if (jm)
			json_object_set_new(jm, "no_gpu", json_true());
	}
	for (int w = 0; w < 2; w++) {
		const struct answer_wl *wl = &a->wl[w];

		if (!wl->run)
			continue;
		cross_sentence(&wl->x, line, sizeof(line));
		fprintf(out, "%s %s: %s\n", model, wl->what, line);
		if (jx) {
			const struct cross *x = &wl->x;
			char lo[32], hi[32];

			fmt_bound(x->lo, x, lo, sizeof(lo));
			fmt_bound(x->hi, x, hi, sizeof(hi));
			json_object_set_new(
			    jx, wl->what,
			    json_pack("{s:s, s:o, s:o, s:o, s:s, s:s, s:s}", "state",
			              cross_state_name(x),
			              "batch", x->at > 0 ? json_real(x->at) : json_null(), "lo",
			              x->lo > 0 ? json_real(x->lo) : json_null(), "hi",
			              x->hi > 0 ? json_real(x->hi) : json_null(), "lo_text",
			              cross_bounded(x) ? lo : "", "hi_text", cross_bounded(x) ? hi : "",
			              "text", line));
		}
	}
	for (int i = 0; i < a->ndiag; i++) {
		fprintf(out, "%s: %s\n", model, a->diag[i]);
		if (jd)
			json_array_append_new(jd, json_string(a->diag[i]));
	}

	advise_evidence(db, a->run, out, jm);

	for (int w = 0; w < 2; w++) {
		const struct answer_wl *wl = &a->wl[w];
		const struct curve *cpu, *cl;

		if (!wl->run)
			continue;
		cpu = find_curve(wl->cv, wl->ncv, "cpu");
		cl = find_curve(wl->cv, wl->ncv, "cl");
		json_t *jw = jm ? json_array() : NULL;

		if (jm)
			json_object_set_new(jm, wl->what, jw);
		fprintf(out, "\n%s %s (time per call, 95%% CI of the median):\n", model, wl->what);
		fprintf(out, "%8s %-28s %-28s %s\n", "batch", "cpu", "cl", "advice");
		if (!cpu || !cl) {
			fprintf(out, "  cpu and cl are not both measured: nothing to compare\n");
			continue;
		}
		for (size_t i = 0; i < cpu->n; i++) {
			size_t j;
			char ta[64], tb[64];

			for (j = 0; j < cl->n && cl->batch[j] != cpu->batch[i]; j++)
				;
			if (j == cl->n)
				continue;
			fmt_ci(cpu->med[i], cpu->lo[i], cpu->hi[i], ta, sizeof(ta));
			fmt_ci(cl->med[j], cl->lo[j], cl->hi[j], tb, sizeof(tb));
			fprintf(out, "%8lld %-28s %-28s ", (long long)cpu->batch[i], ta, tb);
			const char *adv = faster_of(cpu->lo[i], cpu->med[i], cpu->hi[i], cl->lo[j],
			                            cl->med[j], cl->hi[j]);
			if (!strcmp(adv, "unclear"))
				fprintf(out, "too close to tell (CIs overlap)\n");
			else if (!strcmp(adv, "cpu"))
				fprintf(out, "cpu (%.2fx faster)\n", cl->med[j] / cpu->med[i]);
			else
				fprintf(out, "cl (%.2fx faster)\n", cpu->med[i] / cl->med[j]);
			if (jw)
				json_array_append_new(
				    jw, json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:s}", "batch",
				                  (json_int_t)cpu->batch[i], "cpu_median_s", cpu->med[i],
				                  "cpu_ci_lo_s", cpu->lo[i], "cpu_ci_hi_s", cpu->hi[i],
				                  "cl_median_s", cl->med[j], "cl_ci_lo_s", cl->lo[j],
				                  "cl_ci_hi_s", cl->hi[j], "faster", adv));
		}
		fprintf(out, "%s\n", cross_sentence(&wl->x, line, sizeof(line)));
	}
out:
	free(a);
	return st;
}
