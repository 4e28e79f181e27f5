/*
 * answer.c - the answer of the report and advise: the faster device per
 * batch, the cl/cpu crossover with its interval, and the diagnosis from the
 * measured split (report.c's file comment says how the crossover is found).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "perfdb.h"
#include "jsonout.h"
#include "proc.h"
#include "sql.h"
#include "split.h"
#include "report.h"

const struct xo_perf_curve *xo_perf_find_curve(const struct xo_perf_curve *cv, int n,
                                               const char *dev)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(cv[i].device, dev))
			return &cv[i];
	return NULL;
}

/* Which column of a curve: the median or an end of its 95% CI. */
enum curve_y { Y_MED, Y_LO, Y_HI };

static const double *curve_col(const struct xo_perf_curve *c, enum curve_y y)
{
	return y == Y_LO ? c->lo : y == Y_HI ? c->hi : c->med;
}

/* The batch where b's time (column yb) first goes below a's (column ya),
 * interpolated linearly in log(batch) on log(time ratio) between the two
 * measured batches around the sign change (0 when it never does within the
 * measured range; -1 when b is faster at every batch both measured; a b that
 * wins only at the smallest batches and then loses has no crossover in this
 * sense: 0). Only batches in [from, to] are looked at. */
static double crossover_y(const struct xo_perf_curve *a, enum curve_y ya,
                          const struct xo_perf_curve *b, enum curve_y yb, int64_t from, int64_t to)
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
const char *xo_perf_faster_of(double cpu_lo, double cpu_med, double cpu_hi, double cl_lo,
                              double cl_med, double cl_hi)
{
	if (cpu_hi >= cl_lo && cl_hi >= cpu_lo)
		return "unclear";
	return cpu_med < cl_med ? "cpu" : "cl";
}

/* The table's verdict at each common batch (xo_perf_faster_of, the rule the table
 * itself prints), as lists; returns whether the decided batches go cpu, then
 * cl, with one switch. */
static bool cross_table(const struct xo_perf_curve *cpu, const struct xo_perf_curve *cl,
                        struct xo_perf_cross *x, int *ncpu, int *ncl, int64_t *last_cpu,
                        int64_t *first_cl)
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
			f = xo_perf_faster_of(cpu->lo[i], cpu->med[i], cpu->hi[i], cl->lo[j],
			                      cl->med[j], cl->hi[j]);
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

void xo_perf_cross_find(const struct xo_perf_curve *cpu, const struct xo_perf_curve *cl,
                        struct xo_perf_cross *x)
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
void xo_perf_fmt_bound(double v, const struct xo_perf_cross *x, char *buf, size_t size)
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
static void cross_table_sentence(const struct xo_perf_cross *x, char *buf, size_t size)
{
	size_t n;

	if (x->state == XS_UNCLEAR) {
		snprintf(
		    buf, size,
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
bool xo_perf_cross_bounded(const struct xo_perf_cross *x)
{
	return x->both && (x->state == XS_CROSS || x->state == XS_CL_EVERYWHERE ||
	                   x->state == XS_NONE);
}

/* The state's name in advise --json. */
const char *xo_perf_cross_state_name(const struct xo_perf_cross *x)
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
 * state xo_perf_cross_find decided from the per-batch table. */
char *xo_perf_cross_sentence(const struct xo_perf_cross *x, char *buf, size_t size)
{
	char lo[32], hi[32];

	if (!x->both) {
		snprintf(buf, size, "crossover: cpu and cl are not both measured");
		return buf;
	}
	xo_perf_fmt_bound(x->lo, x, lo, sizeof(lo));
	xo_perf_fmt_bound(x->hi, x, hi, sizeof(hi));
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
		snprintf(
		    buf, size,
		    "crossover: none in the measured range (batch %lld to %lld): cl never goes "
		    "from slower to faster than cpu, within the 95%% CIs too",
		    (long long)x->bmin, (long long)x->bmax);
	else if (x->state == XS_NONE)
		snprintf(
		    buf, size,
		    "crossover: none in the measured range (batch %lld to %lld) by the medians "
		    "(cl never goes from slower to faster than cpu); from the 95%% CIs it is "
		    "between %s and %s",
		    (long long)x->bmin, (long long)x->bmax, lo, hi);
	else
		cross_table_sentence(x, buf, size);
	return buf;
}

/* "1.63 us [1.59, 1.74]": a median and its CI in one unit chosen by the median. */
void xo_perf_fmt_ci(double med, double lo, double hi, char *buf, size_t size)
{
	double f = med < 1e-3 ? 1e6 : med < 1.0 ? 1e3 : 1.0;
	const char *unit = med < 1e-3 ? "us" : med < 1.0 ? "ms" : "s";

	snprintf(buf, size, "%.4g %s [%.4g, %.4g]", f * med, unit, f * lo, f * hi);
}

/* ---- the measured split and the answer ------------------------------------------ */

/* One diagnosis sentence for a measured result: the dominant part of the
 * split (split.h) for a device with event times, the step time only for a
 * host backend (no events). */
static void diag_sentence(const struct xo_perf_meas *m, const char *device, const char *what,
                          int64_t batch, char *buf, size_t size)
{
	const char *words = !strcmp(what, "train_step") ? "train step" : "predict call";
	char dev[48], t[32];
	size_t len;

	xo_perf_gp_safe(device, dev, sizeof(dev));
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
	if (xo_perf_rows_layer_at(db, run, model, device, batch, &s))
		return false;
	while (xo_sql_step(s) == XO_SQL_ROW) {
		const char *name = xo_perf_query_text(s, 0);
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
	if (xo_perf_rows_layer_sweep(db, run, model, device, best, &s))
		return false;
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
	xo_perf_gp_safe(device, dev, sizeof(dev));
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

bool xo_perf_own_device(const char *d)
{
	return !strcmp(d, "ref") || !strcmp(d, "cpu") || !strncmp(d, "cl", 2);
}

/* The d-th curve with cpu moved to the front. */
static int order_cpu_first(const struct xo_perf_curve *cv, int n, int d)
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
enum xo_status xo_perf_answer_load(struct xo_perfdb *db, const char *model,
                                   struct xo_perf_answer *a)
{
	static const char *const whats[] = {"train_step", "predict"};
	enum xo_status st;

	memset(a, 0, sizeof(*a));
	snprintf(a->model, sizeof(a->model), "%s", model);
	for (int w = 0; w < 2; w++) {
		struct xo_perf_answer_wl *wl = &a->wl[w];

		wl->what = whats[w];
		if ((st = xo_perf_query_curves(db, model, wl->what, wl->cv, &wl->ncv, &wl->run)))
			return st;
		if (wl->run > a->run)
			a->run = wl->run;
		xo_perf_cross_find(xo_perf_find_curve(wl->cv, wl->ncv, "cpu"),
		                   xo_perf_find_curve(wl->cv, wl->ncv, "cl"), &wl->x);
		for (int d = 0; d < wl->ncv; d++) {
			/* cpu first, then the cl devices in their stored order */
			const struct xo_perf_curve *c =
			    &wl->cv[order_cpu_first(wl->cv, wl->ncv, d)];
			int64_t pick[3];
			int np = 0;

			if (!xo_perf_own_device(c->device) || !strcmp(c->device, "ref") || !c->n)
				continue;
			pick[np++] = c->batch[0];
			for (size_t k = 0; k < c->n; k++)
				if (c->batch[k] == 512 && 512 != pick[0])
					pick[np++] = 512;
			if (c->batch[c->n - 1] != pick[np - 1])
				pick[np++] = c->batch[c->n - 1];
			for (int k = 0; k < np && a->ndiag < XO_PERF_MAX_DIAG; k++) {
				struct xo_perf_meas m;

				if ((st = xo_perf_query_meas_find(db, c->run_id, model, wl->what,
				                                  c->device, pick[k], &m)))
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
					         " (%s per call)",
					         xo_fmt_seconds(m.med, t, sizeof(t)));
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

/* True when the answer's cl curves were measured on OpenCL on the CPU. */
bool xo_perf_answer_cl_on_cpu(struct xo_perfdb *db, const struct xo_perf_answer *a)
{
	for (int w = 0; w < 2; w++) {
		const struct xo_perf_curve *cl =
		    xo_perf_find_curve(a->wl[w].cv, a->wl[w].ncv, "cl");

		if (cl && strstr(xo_perf_query_cl_label(db, cl->run_id), "on the CPU"))
			return true;
	}
	return false;
}

/* "models/tiny.model" -> "tiny": how the recorder names a model. */
void xo_perf_model_name(const char *arg, char *out, size_t size)
{
	const char *base = strrchr(arg, '/');

	base = base ? base + 1 : arg;
	snprintf(out, size, "%.*s", (int)strcspn(base, "."), base);
}

/* XO_OK when the store holds measurements of model (a name or a spec or
 * Keras file's path); otherwise an error that lists the models it holds. */
enum xo_status xo_perf_model_check(struct xo_perfdb *db, const char *model)
{
	char names[32][64], name[64], have[512] = "";
	int n;

	xo_perf_model_name(model, name, sizeof(name));
	n = xo_perf_query_models(db, names, 32);
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
	return xo_error(XO_EINVAL,
	                "--model %s: no measurements of model '%s' in the store; it holds: "
	                "%s (choose one with --model)",
	                model, name, have);
}
