/*
 * report.c - `xo perf report` and `xo perf advise`: the data behind the
 * gnuplot plots (scripts/history.gp, crossover.gp, gpu_split.gp,
 * gpu_layers.gp), an index.html that shows them, and the per-batch advice
 * "which device is faster here", all from stored measurements.
 *
 * Crossover: the batch size where the cl curve (time per sample) goes below
 * the cpu curve, interpolated linearly in log(batch) on log(time ratio)
 * between the two measured batches around the sign change.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
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

#define MAX_DEV   16
#define MAX_BATCH 32
#define MAX_COLS  40

static enum xo_status sql_err(struct xo_perfdb *db, const char *what)
{
	return xo_error(XO_EDB, "%s: %s", what, sqlite3_errmsg(xo_perfdb_sqlite(db)));
}

static const char *col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

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
 * newline or ';' to start a command (issue 11 item 1). Benchmark and peer
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
	sqlite3_stmt *s = NULL;

	memset(c, 0, sizeof(*c));
	snprintf(c->device, sizeof(c->device), "%s", device);
	c->run_id = run_id;
	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db),
	                       "SELECT b.batch, res.median, coalesce(res.ci_lo, res.median),"
	                       " coalesce(res.ci_hi, res.median) FROM results res"
	                       " JOIN benchmarks b ON b.id = res.benchmark_id"
	                       " WHERE res.run_id = ? AND b.kind = 'model' AND b.model = ?"
	                       " AND b.what = ? AND b.device = ? ORDER BY b.batch",
	                       -1, &s, NULL))
		return sql_err(db, "reading a sweep");
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_text(s, 2, model, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, what, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, device, -1, SQLITE_STATIC);
	while (sqlite3_step(s) == SQLITE_ROW && c->n < MAX_BATCH) {
		c->batch[c->n] = sqlite3_column_int64(s, 0);
		c->med[c->n] = sqlite3_column_double(s, 1);
		c->lo[c->n] = sqlite3_column_double(s, 2);
		c->hi[c->n] = sqlite3_column_double(s, 3);
		c->n++;
	}
	sqlite3_finalize(s);
	return XO_OK;
}

/* The curves of one model and workload: every device of the latest run that
 * measured the model, and each peer's latest run. */
static enum xo_status load_curves(struct xo_perfdb *db, const char *model, const char *what,
                                  struct curve *cv, int *ncv, int64_t *main_run)
{
	sqlite3_stmt *s = NULL;
	enum xo_status st = XO_OK;

	*ncv = 0;
	*main_run = 0;
	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db),
	                       "SELECT b.device, max(res.run_id),"
	                       " b.device IN ('ref','cpu') OR b.device LIKE 'cl%'"
	                       " FROM results res JOIN benchmarks b ON b.id = res.benchmark_id"
	                       " JOIN runs ru ON ru.id = res.run_id"
	                       " WHERE ru.state = 'complete' AND b.kind = 'model' AND b.model = ?"
	                       " AND b.what = ? GROUP BY b.device ORDER BY 3 DESC, 2 DESC",
	                       -1, &s, NULL))
		return sql_err(db, "finding sweeps");
	sqlite3_bind_text(s, 1, model, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, what, -1, SQLITE_STATIC);
	/* the first own device row has the latest own run: every own device
	 * is then taken from that run, so the curves are one measurement */
	while (sqlite3_step(s) == SQLITE_ROW && *ncv < MAX_DEV) {
		bool own = sqlite3_column_int(s, 2);
		int64_t run = sqlite3_column_int64(s, 1);

		if (own && !*main_run)
			*main_run = run;
		if (own)
			run = *main_run;
		if ((st = load_curve(db, run, model, what, col_text(s, 0), &cv[*ncv])))
			break;
		if (cv[*ncv].n)
			(*ncv)++;
	}
	sqlite3_finalize(s);
	return st;
}

static const struct curve *find_curve(const struct curve *cv, int n, const char *dev)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(cv[i].device, dev))
			return &cv[i];
	return NULL;
}

/* The batch where b's per-sample time first goes below a's, interpolated
 * in log(batch) (0 when it never does within the measured range; -1 when b
 * is faster at every batch both measured; a b that wins only at the
 * smallest batches and then loses has no crossover in this sense: 0). */
static double crossover(const struct curve *a, const struct curve *b)
{
	double prev_d = NAN, prev_x = NAN;
	bool all_below = true, any = false;

	if (!a || !b)
		return 0.0;
	for (size_t i = 0; i < a->n; i++) {
		for (size_t j = 0; j < b->n; j++) {
			if (a->batch[i] != b->batch[j])
				continue;
			double d = log(b->med[j] / a->med[i]); /* > 0: b slower */
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

/* "1.63 us [1.59, 1.74]": a median and its CI in one unit chosen by the median. */
static void fmt_ci(double med, double lo, double hi, char *buf, size_t size)
{
	double f = med < 1e-3 ? 1e6 : med < 1.0 ? 1e3 : 1.0;
	const char *unit = med < 1e-3 ? "us" : med < 1.0 ? "ms" : "s";

	snprintf(buf, size, "%.4g %s [%.4g, %.4g]", f * med, unit, f * lo, f * hi);
}

/* ---- gnuplot ---------------------------------------------------------------------- */

static bool have_gnuplot(void)
{
	return xo_proc_found("gnuplot");
}

/*
 * The legend of the cl curve: what kind of device the run's OpenCL device is.
 * PoCL (and any CPU device) is OpenCL on the CPU, never "the GPU" (issue 16
 * item 6); the testbed keeps the platform and device the cl backend reported.
 */
static const char *cl_label(struct xo_perfdb *db, int64_t run)
{
	sqlite3_stmt *s = NULL;
	const char *label = "cl (OpenCL)";

	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db),
	                       "SELECT t.cl_platform || ' ' || t.cl_device || ' ' || t.describe"
	                       " FROM runs ru JOIN testbeds t ON t.id = ru.testbed_id WHERE ru.id = ?",
	                       -1, &s, NULL))
		return label;
	sqlite3_bind_int64(s, 1, run);
	if (sqlite3_step(s) == SQLITE_ROW) {
		const char *d = col_text(s, 0);

		if (strstr(d, "PoCL") || strstr(d, "Portable Computing Language"))
			label = "cl: OpenCL on the CPU (PoCL)";
		else if (strstr(d, "type CPU") || strstr(d, "pthread"))
			label = "cl: OpenCL on the CPU";
		else if (strstr(d, "type GPU"))
			label = "cl: OpenCL on the GPU";
	}
	sqlite3_finalize(s);
	return label;
}

static enum xo_status write_crossover(struct xo_perfdb *db, const char *outdir, FILE *gp,
                                      FILE *html, const char *model_raw, const char *what)
{
	char model[64]; /* the model's name as file names, gnuplot and HTML see it */
	struct curve *cv = calloc(MAX_DEV, sizeof(*cv));
	char path[4096], devices[512] = "";
	int ncv = 0;
	int64_t run;
	double x;
	enum xo_status st;

	if (!cv)
		return xo_error(XO_ENOMEM, "perf: out of memory");
	safe_name(model_raw, model, sizeof(model));
	if ((st = load_curves(db, model_raw, what, cv, &ncv, &run)) || !ncv)
		goto out;
	for (int i = 0; i < ncv; i++) {
		FILE *f;

		/* peer names come from imported files: file names and gnuplot see
		 * only the safe set */
		safe_name(cv[i].device, cv[i].device, sizeof(cv[i].device));
		snprintf(path, sizeof(path), "%s/data/cross_%s_%s_%s.dat", outdir, model, what,
		         cv[i].device);
		f = fopen(path, "w");
		if (!f) {
			st = xo_error(XO_EIO, "%s: %s", path, strerror(errno));
			goto out;
		}
		fprintf(f, "# batch  s/sample median  ci_lo  ci_hi   (run %lld, device %s)\n",
		        (long long)cv[i].run_id, cv[i].device);
		for (size_t k = 0; k < cv[i].n; k++) {
			double b = (double)cv[i].batch[k];

			fprintf(f, "%lld %.6e %.6e %.6e\n", (long long)cv[i].batch[k],
			        cv[i].med[k] / b, cv[i].lo[k] / b, cv[i].hi[k] / b);
		}
		fclose(f);
		snprintf(devices + strlen(devices), sizeof(devices) - strlen(devices), "%s%s",
		         i ? " " : "", cv[i].device);
	}
	x = crossover(find_curve(cv, ncv, "cpu"), find_curve(cv, ncv, "cl"));
	fprintf(gp,
	        "prefix = 'data/cross_%s_%s_'; devices = '%s'; xcross = %g; cl_label = '%s';\n"
	        "title_text = '%s %s: time per sample vs batch (run %lld)';\n"
	        "outbase = 'crossover_%s_%s'; load script_dir.'/crossover.gp'\n",
	        model, what, devices, x, cl_label(db, run), model, what, (long long)run, model,
	        what);
	fprintf(html, "<h3 id=\"crossover_%s_%s\">%s %s</h3>\n<p>", model, what, model, what);
	if (x > 0)
		fprintf(html, "cl becomes faster than cpu at batch &asymp; %.0f.", x);
	else if (x < 0)
		fprintf(html, "cl is faster than cpu at every measured batch.");
	else if (find_curve(cv, ncv, "cl") && find_curve(cv, ncv, "cpu"))
		fprintf(html, "No crossover in the measured range: cl never goes from slower "
		              "to faster than cpu.");
	else
		fprintf(html, "cpu and cl are not both measured: no crossover.");
	fprintf(html,
	        "</p>\n<a href=\"crossover_%s_%s.svg\"><img src=\"crossover_%s_%s.png\"></a>\n",
	        model, what, model, what);
out:
	free(cv);
	return st;
}

/* Stacked split of OpenCL time (percent per category) per batch. */
static enum xo_status write_split(struct xo_perfdb *db, const char *outdir, FILE *gp, FILE *html,
                                  const char *model_raw, const char *what, int64_t run)
{
	char model[64]; /* the model's name as file names, gnuplot and HTML see it */
	sqlite3_stmt *s = NULL;
	char path[4096];
	FILE *f;
	int rows = 0;

	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db),
	                       "SELECT b.batch, avg(sm.enqueue_s), avg(sm.h2d_s), avg(sm.kernel_s),"
	                       " avg(sm.d2h_s), avg(sm.wait_s), avg(sm.wall_s), avg(sm.launches)"
	                       " FROM samples sm JOIN results res ON res.id = sm.result_id"
	                       " JOIN benchmarks b ON b.id = res.benchmark_id"
	                       " WHERE res.run_id = ? AND res.has_split AND b.kind = 'model'"
	                       " AND b.model = ? AND b.what = ? GROUP BY b.batch ORDER BY b.batch",
	                       -1, &s, NULL))
		return sql_err(db, "reading the OpenCL split");
	sqlite3_bind_int64(s, 1, run);
	safe_name(model_raw, model, sizeof(model));
	sqlite3_bind_text(s, 2, model_raw, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, what, -1, SQLITE_STATIC);
	snprintf(path, sizeof(path), "%s/data/split_%s_%s.dat", outdir, model, what);
	f = fopen(path, "w");
	if (!f) {
		sqlite3_finalize(s);
		return xo_error(XO_EIO, "%s: %s", path, strerror(errno));
	}
	fprintf(f, "label enqueue H2D kernel D2H wait\n");
	while (sqlite3_step(s) == SQLITE_ROW) {
		double v[5], sum = 0.0;

		for (int i = 0; i < 5; i++)
			sum += v[i] = sqlite3_column_double(s, 1 + i);
		if (!(sum > 0.0))
			continue;
		fprintf(f, "\"%lld\\n%.3gms\\n%.0f launches\"",
		        (long long)sqlite3_column_int64(s, 0), 1e3 * sqlite3_column_double(s, 6),
		        sqlite3_column_double(s, 7));
		for (int i = 0; i < 5; i++)
			fprintf(f, " %.3f", 100.0 * v[i] / sum);
		fputc('\n', f);
		rows++;
	}
	sqlite3_finalize(s);
	fclose(f);
	if (!rows)
		return XO_OK;
	fprintf(gp,
	        "datafile = 'data/split_%s_%s.dat'; title_text = '%s %s on OpenCL: where the time "
	        "goes (%% of the event times; batch, wall per call, launches)';\noutbase = "
	        "'split_%s_%s'; load script_dir.'/gpu_split.gp'\n",
	        model, what, model, what, model, what);
	fprintf(html, "<a href=\"split_%s_%s.svg\"><img src=\"split_%s_%s.png\"></a>\n", model,
	        what, model, what);
	return XO_OK;
}

/* Kernel time per layer (train_step) or per op, stacked, per batch. */
static enum xo_status write_layers(struct xo_perfdb *db, const char *outdir, FILE *gp, FILE *html,
                                   const char *model_raw, int64_t run)
{
	char model[64]; /* the model's name as file names, gnuplot and HTML see it */
	sqlite3_stmt *s = NULL;
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
	if (sqlite3_prepare_v2(
	        xo_perfdb_sqlite(db),
	        "SELECT b.batch, o.op, o.kernel_s FROM result_ops o"
	        " JOIN results res ON res.id = o.result_id"
	        " JOIN benchmarks b ON b.id = res.benchmark_id"
	        " WHERE res.run_id = ? AND o.dir = 'layer' AND b.kind = 'model'"
	        " AND b.model = ? AND b.what = 'train_step' ORDER BY b.batch, o.rowid",
	        -1, &s, NULL)) {
		free(names);
		free(ms);
		return sql_err(db, "reading layer times");
	}
	sqlite3_bind_int64(s, 1, run);
	safe_name(model_raw, model, sizeof(model));
	sqlite3_bind_text(s, 2, model_raw, -1, SQLITE_STATIC);
	while (sqlite3_step(s) == SQLITE_ROW) {
		int64_t batch = sqlite3_column_int64(s, 0);
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
		ms[bi][ni] = 1e3 * sqlite3_column_double(s, 2);
	}
	sqlite3_finalize(s);
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

/* History of one benchmark on one testbed: one point per run, oldest first. */
static enum xo_status write_history(struct xo_perfdb *db, const char *outdir, FILE *gp,
                                    int64_t bench, const char *name, int64_t testbed, int *points)
{
	sqlite3_stmt *s = NULL;
	char path[4096], safe[256], title[256];
	FILE *f;
	int n = 0, nchanges = 0;

	safe_name(name, safe, sizeof(safe));
	if (sqlite3_prepare_v2(
	        xo_perfdb_sqlite(db),
	        "SELECT c.sha, c.dirty, res.median, coalesce(res.ci_lo, res.median),"
	        " coalesce(res.ci_hi, res.median), res.min,"
	        " (SELECT ch.ratio FROM changes ch WHERE ch.benchmark_id = res.benchmark_id"
	        "  AND ch.testbed_id = ru.testbed_id AND ch.commit_id = ru.commit_id"
	        "  AND ch.state != 'ignored'"
	        "  AND ru.id = (SELECT min(r2.id) FROM runs r2 WHERE"
	        "   r2.commit_id = ru.commit_id AND r2.testbed_id = ru.testbed_id"
	        "   AND r2.state = 'complete'))"
	        " FROM results res JOIN runs ru ON ru.id = res.run_id"
	        " JOIN commits c ON c.id = ru.commit_id"
	        " WHERE res.benchmark_id = ? AND ru.testbed_id = ? AND ru.state = 'complete'"
	        " ORDER BY c.date, ru.id",
	        -1, &s, NULL))
		return sql_err(db, "reading a history");
	sqlite3_bind_int64(s, 1, bench);
	sqlite3_bind_int64(s, 2, testbed);
	snprintf(path, sizeof(path), "%s/data/hist_%s.dat", outdir, safe);
	f = fopen(path, "w");
	if (!f) {
		sqlite3_finalize(s);
		return xo_error(XO_EIO, "%s: %s", path, strerror(errno));
	}
	fprintf(f, "# idx median_ms ci_lo ci_hi min change_marker commit\n");
	while (sqlite3_step(s) == SQLITE_ROW) {
		double med = 1e3 * sqlite3_column_double(s, 2);

		fprintf(f, "%d %.6g %.6g %.6g %.6g ", n, med, 1e3 * sqlite3_column_double(s, 3),
		        1e3 * sqlite3_column_double(s, 4), 1e3 * sqlite3_column_double(s, 5));
		if (sqlite3_column_type(s, 6) == SQLITE_NULL) {
			fprintf(f, "NaN");
		} else {
			fprintf(f, "%.6g", med);
			nchanges++;
		}
		fprintf(f, " %.7s%s\n", col_text(s, 0), sqlite3_column_int(s, 1) ? "+" : "");
		n++;
	}
	sqlite3_finalize(s);
	fclose(f);
	*points = n;
	gp_safe(name, title, sizeof(title));
	fprintf(gp,
	        "datafile = 'data/hist_%s.dat'; title_text = '%s'; nchanges = %d; npoints = %d;\n"
	        "outbase = 'hist_%s'; load script_dir.'/history.gp'\n",
	        safe, title, nchanges, n, safe);
	return XO_OK;
}

/* The latest complete run that measured our own devices (not a peer import). */
static enum xo_status latest_own_run(struct xo_perfdb *db, int64_t *run)
{
	sqlite3_stmt *s = NULL;
	enum xo_status st = XO_OK;

	if (sqlite3_prepare_v2(
	        xo_perfdb_sqlite(db),
	        "SELECT max(ru.id) FROM runs ru JOIN results res ON res.run_id = ru.id"
	        " JOIN benchmarks b ON b.id = res.benchmark_id"
	        " WHERE ru.state = 'complete' AND (b.device IN ('ref','cpu')"
	        " OR b.device LIKE 'cl%')",
	        -1, &s, NULL))
		return sql_err(db, "finding the latest run");
	if (sqlite3_step(s) != SQLITE_ROW || sqlite3_column_type(s, 0) == SQLITE_NULL)
		st = xo_error(XO_EINVAL, "no complete run of ref/cpu/cl recorded yet: run `xo perf "
		                         "record` first");
	else
		*run = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
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
 * report replaces the directory as a whole (issue 11 items 3 and 4).
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
                                   const char *model_arg, int64_t latest, int64_t *nhist_out,
                                   int64_t *main_run_out);
static int list_models(struct xo_perfdb *db, char (*names)[64], int max);
static void model_name(const char *arg, char *out, size_t size);

/*
 * The report is built in a temporary sibling of --out and renamed into place
 * when it is complete: --out is never written before the report is known to
 * succeed, and a failure leaves it as it was.
 */
enum xo_status xo_perf_report(struct xo_perfdb *db, const char *user_out, const char *scripts_dir,
                              const char *model, FILE *out)
{
	char dst[4096], tmp[4200], old[4200], marker[4300];
	enum xo_status st;
	int64_t latest = 0, nhist = 0, main_run = 0;
	bool exists;
	size_t n;
	FILE *f;

	if (!have_gnuplot())
		return xo_error(XO_ENODEV, "gnuplot not found in PATH: install it "
		                           "(apt-get install gnuplot-nox) to draw reports");
	snprintf(dst, sizeof(dst), "%s", user_out);
	for (n = strlen(dst); n > 1 && dst[n - 1] == '/'; n--)
		dst[n - 1] = '\0';
	if (!dst[0])
		return xo_error(XO_EINVAL, "--out: empty path");
	if ((st = out_check(dst, &exists)))
		return st;
	if ((st = latest_own_run(db, &latest)))
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
	if ((st = copy_scripts(scripts_dir, tmp)) ||
	    (st = write_report(db, tmp, model, latest, &nhist, &main_run))) {
		if (strstr(xo_last_error(), "gnuplot failed"))
			return st; /* its log is in tmp, which the message names */
		goto out_remove;
	}
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
	fprintf(out,
	        "report: %s/index.html (%lld histories, crossover and GPU split of run %lld)\n",
	        dst, (long long)nhist, (long long)main_run);
	return XO_OK;
out_remove:
	remove_tree(tmp);
	return st;
}

static enum xo_status write_report(struct xo_perfdb *db, const char *outdir,
                                   const char *model_arg, int64_t latest, int64_t *nhist_out,
                                   int64_t *main_run_out)
{
	static const char *const whats[] = {"train_step", "predict"};
	char path[4096], models[32][64];
	int nmodels = 0;
	sqlite3_stmt *s = NULL;
	FILE *gp = NULL, *html = NULL;
	enum xo_status st = XO_OK;
	int64_t testbed = 0, main_run = 0, nhist = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/data", outdir);
	if (mkdir(path, 0777) && errno != EEXIST)
		return xo_error(XO_EIO, "%s: cannot create the directory: %s", path,
		                strerror(errno));
	snprintf(path, sizeof(path), "%s/plots.gp", outdir);
	gp = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/index.html", outdir);
	html = fopen(path, "w");
	if (!gp || !html) {
		st = xo_error(XO_EIO, "%s: cannot write: %s", outdir, strerror(errno));
		goto out;
	}
	fprintf(gp, "# generated by xo perf report\nscript_dir = 'scripts'\n"
	            "load script_dir.'/common.gp'\n");
	fprintf(html, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>crossover perf "
	              "report</title>\n<style>body{font-family:sans-serif;margin:2em}"
	              "img{max-width:48%%;margin:4px;border:1px solid #ccc}"
	              "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;"
	              "font-size:90%%}.reg{color:#b00}.imp{color:#070}</style></head><body>\n"
	              "<h1>crossover perf report</h1>\n");

	/* latest run and its testbed */
	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db),
	                       "SELECT ru.testbed_id, c.sha, c.dirty, c.subject, ru.started,"
	                       " t.hostname, t.cpu_model, t.cores, t.blas_config, t.blas_coretype,"
	                       " t.cl_device, t.compiler, t.cflags, t.env"
	                       " FROM runs ru JOIN commits c ON c.id = ru.commit_id"
	                       " JOIN testbeds t ON t.id = ru.testbed_id WHERE ru.id = ?",
	                       -1, &s, NULL)) {
		st = sql_err(db, "report");
		goto out;
	}
	sqlite3_bind_int64(s, 1, latest);
	if (sqlite3_step(s) == SQLITE_ROW) {
		static const char *const labels[] = {
		    "host",          "CPU",      "cores", "BLAS",       "BLAS core type",
		    "OpenCL device", "compiler", "flags", "environment"};
		time_t t = (time_t)sqlite3_column_int64(s, 4);
		char when[64] = "?";
		struct tm tm;

		testbed = sqlite3_column_int64(s, 0);
		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
		fprintf(html, "<p>Latest run: <b>run:%lld</b>, commit <code>%.12s%s</code> (",
		        (long long)latest, col_text(s, 1),
		        sqlite3_column_int(s, 2) ? " dirty" : "");
		html_escape(html, col_text(s, 3));
		fprintf(html, "), %s, testbed %lld.</p>\n<table>\n", when, (long long)testbed);
		for (int i = 0; i < 9; i++) {
			fprintf(html, "<tr><th>%s</th><td>", labels[i]);
			html_escape(html, col_text(s, 5 + i));
			fprintf(html, "</td></tr>\n");
		}
		fprintf(html, "</table>\n");
	}
	sqlite3_finalize(s);
	s = NULL;

	/* crossover and GPU split, per workload */
	if (model_arg) {
		model_name(model_arg, models[0], sizeof(models[0]));
		nmodels = 1;
	} else {
		nmodels = list_models(db, models, 32);
	}
	for (int mi = 0; mi < nmodels; mi++) {
	const char *model = models[mi];

	fprintf(html, "<h2>Model ");
	html_escape(html, model);
	fprintf(html,
	        ": CPU vs GPU, time per sample against batch size</h2>\n"
	        "<p>Median of the samples (bars: 95%% CI of the median) divided by the batch, "
	        "log-log; peers (other frameworks) are their own latest import. The dashed line "
	        "marks where cl becomes faster than cpu; a cl device that is a CPU (PoCL) is "
	        "labelled as OpenCL on the CPU.</p>\n");
	main_run = 0;
	for (int w = 0; w < 2; w++) {
		struct curve *cv = calloc(MAX_DEV, sizeof(*cv));
		int ncv = 0;

		if (!cv) {
			st = xo_error(XO_ENOMEM, "perf: out of memory");
			goto out;
		}
		st = load_curves(db, model, whats[w], cv, &ncv, &main_run);
		free(cv);
		if (st || (st = write_crossover(db, outdir, gp, html, model, whats[w])))
			goto out;
	}
	fprintf(html,
	        "<h2>Where the GPU time goes</h2>\n<p>OpenCL event times of one call "
	        "(host enqueue, host-to-device, kernels, device-to-host, host wait), as a share "
	        "of their sum; and the kernel time of one training step per layer.</p>\n");
	for (int w = 0; w < 2 && main_run; w++)
		if ((st = write_split(db, outdir, gp, html, model, whats[w], main_run)))
			goto out;
	if (main_run && (st = write_layers(db, outdir, gp, html, model, main_run)))
		goto out;
	}

	/* changes */
	fprintf(html, "<h2>Changes (xo perf detect)</h2>\n<table><tr><th>id</th><th>state</th>"
	              "<th>benchmark</th><th>commit</th><th>change</th><th>p</th></tr>\n");
	if (sqlite3_prepare_v2(
	        xo_perfdb_sqlite(db),
	        "SELECT ch.id, ch.state, ch.direction, b.name, c.sha, ch.ratio, ch.p_value,"
	        " CASE WHEN b.device = 'ref' THEN 'ref' WHEN b.device = 'cpu' OR"
	        " b.device LIKE 'cl%' THEN '' ELSE 'peer' END AS apart"
	        " FROM changes ch JOIN benchmarks b ON b.id = ch.benchmark_id"
	        " JOIN commits c ON c.id = ch.commit_id"
	        " ORDER BY apart != '', apart, ch.state != 'confirmed', b.name",
	        -1, &s, NULL) == SQLITE_OK) {
		while (sqlite3_step(s) == SQLITE_ROW) {
			char safe[256];

			/* regressions and improvements in their own colours; each
			 * change links to its benchmark's history plot */
			safe_name(col_text(s, 3), safe, sizeof(safe));
			fprintf(html, "<tr class=\"%s\"><td>%lld</td><td>",
			        !strcmp(col_text(s, 2), "regression") ? "reg" : "imp",
			        (long long)sqlite3_column_int64(s, 0));
			html_escape(html, col_text(s, 1));
			fprintf(html, " %s</td><td><a href=\"hist_%s.svg\">",
			        !strcmp(col_text(s, 2), "regression") ? "regression" : "improvement",
			        safe);
			html_escape(html, col_text(s, 3));
			if (col_text(s, 7)[0]) /* ref and peers: listed after, never alarms */
				fprintf(html, "</a> (%s, not under test", col_text(s, 7));
			fprintf(html, "%s</td><td><code>%.10s</code></td><td>%+.1f%%</td>",
			        col_text(s, 7)[0] ? ")" : "</a>", col_text(s, 4),
			        100.0 * (sqlite3_column_double(s, 5) - 1.0));
			fprintf(html, "<td>%.2g</td></tr>\n", sqlite3_column_double(s, 6));
		}
		sqlite3_finalize(s);
		s = NULL;
	}
	fprintf(html, "</table>\n");

	/* the suites' power: the mutation stage's figures (ci/mutate.sh --db
	 * writes table mutation_runs; a store without it has no section) */
	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db),
	                       "SELECT date, sha, dirty, caught, total, equivalent, errors, missed,"
	                       " seconds, mutants, mutants_all FROM mutation_runs"
	                       " ORDER BY id DESC LIMIT 10",
	                       -1, &s, NULL) == SQLITE_OK) {
		fprintf(html, "<h2>Suite power (ci/mutate.sh)</h2>\n<p>Planted bugs caught by what CI "
		              "runs, newest first.</p>\n<table><tr><th>date</th><th>commit</th>"
		              "<th>caught</th><th>equivalent</th><th>errors</th><th>mutants run</th>"
		              "<th>seconds</th><th>missed</th></tr>\n");
		while (sqlite3_step(s) == SQLITE_ROW) {
			bool all = sqlite3_column_int64(s, 3) == sqlite3_column_int64(s, 4) &&
			           sqlite3_column_int64(s, 6) == 0;

			fprintf(html, "<tr class=\"%s\"><td>", all ? "imp" : "reg");
			html_escape(html, col_text(s, 0));
			fprintf(html, "</td><td><code>");
			html_escape(html, col_text(s, 1));
			fprintf(html, "%s</code></td><td>%lld/%lld</td><td>%lld</td><td>%lld</td>"
			              "<td>%lld of %lld</td><td>%lld</td><td>",
			        sqlite3_column_int64(s, 2) ? " (dirty)" : "",
			        (long long)sqlite3_column_int64(s, 3), (long long)sqlite3_column_int64(s, 4),
			        (long long)sqlite3_column_int64(s, 5), (long long)sqlite3_column_int64(s, 6),
			        (long long)sqlite3_column_int64(s, 9), (long long)sqlite3_column_int64(s, 10),
			        (long long)sqlite3_column_int64(s, 8));
			html_escape(html, col_text(s, 7));
			fprintf(html, "</td></tr>\n");
		}
		sqlite3_finalize(s);
		s = NULL;
		fprintf(html, "</table>\n");
	}

	/* history of every benchmark measured on the latest run's testbed */
	fprintf(html,
	        "<h2>History per benchmark (testbed %lld)</h2>\n<p>Median per run with its "
	        "95%% CI, minimum as points, detected changes as red diamonds.</p>\n",
	        (long long)testbed);
	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db),
	                       "SELECT DISTINCT b.id, b.name FROM results res JOIN benchmarks b"
	                       " ON b.id = res.benchmark_id JOIN runs ru ON ru.id = res.run_id"
	                       " WHERE ru.testbed_id = ? AND ru.state = 'complete' ORDER BY b.name",
	                       -1, &s, NULL)) {
		st = sql_err(db, "report");
		goto out;
	}
	sqlite3_bind_int64(s, 1, testbed);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		char safe[256];
		int points = 0;

		safe_name(col_text(s, 1), safe, sizeof(safe));
		if ((st = write_history(db, outdir, gp, sqlite3_column_int64(s, 0), col_text(s, 1),
		                        testbed, &points)))
			goto out;
		fprintf(html, "<a href=\"hist_%s.svg\"><img src=\"hist_%s.png\" title=\"", safe,
		        safe);
		html_escape(html, col_text(s, 1));
		fprintf(html, "\" style=\"max-width:32%%\"></a>\n");
		nhist++;
	}
	sqlite3_finalize(s);
	s = NULL;
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
	sqlite3_finalize(s);
	if (gp)
		fclose(gp);
	if (html)
		fclose(html);
	return st;
}

/* ---- advise -------------------------------------------------------------------- */

/* The models the store holds model benchmarks of (ours or peers'), by name. */
static int list_models(struct xo_perfdb *db, char (*names)[64], int max)
{
	sqlite3_stmt *s = NULL;
	int n = 0;

	if (sqlite3_prepare_v2(xo_perfdb_sqlite(db),
	                       "SELECT DISTINCT b.model FROM benchmarks b WHERE b.kind = 'model'"
	                       " AND b.model != '' AND EXISTS (SELECT 1 FROM results res JOIN runs"
	                       " ru ON ru.id = res.run_id WHERE res.benchmark_id = b.id AND"
	                       " ru.state = 'complete') ORDER BY b.model = 'seed' DESC, b.model",
	                       -1, &s, NULL))
		return 0;
	while (n < max && sqlite3_step(s) == SQLITE_ROW)
		snprintf(names[n++], 64, "%s", col_text(s, 0));
	sqlite3_finalize(s);
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
 * answered for the seed alone (issue 16 item 6).
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

static enum xo_status advise_one(struct xo_perfdb *db, const char *model, FILE *out, json_t *jm)
{
	static const char *const whats[] = {"train_step", "predict"};
	struct curve *cv = calloc(MAX_DEV, sizeof(*cv));
	struct xo_perf_commit now_commit;
	sqlite3_stmt *s = NULL;
	enum xo_status st = XO_OK;
	int64_t run = 0;
	bool any = false;

	if (!cv)
		return xo_error(XO_ENOMEM, "perf: out of memory");
	if (jm)
		json_object_set_new(jm, "model", json_string(model));
	xo_perf_commit_probe(xo_perf_source_dir(), &now_commit);

	for (int w = 0; w < 2; w++) {
		int ncv = 0;
		const struct curve *cpu, *cl;

		if ((st = load_curves(db, model, whats[w], cv, &ncv, &run)))
			goto out;
		if (!run)
			continue;
		if (!any) {
			/* how fresh and how comparable the evidence is */
			if (sqlite3_prepare_v2(
			        xo_perfdb_sqlite(db),
			        "SELECT c.sha, c.dirty, ru.started, t.hostname,"
			        " t.cpu_model, t.cl_device FROM runs ru"
			        " JOIN commits c ON c.id = ru.commit_id"
			        " JOIN testbeds t ON t.id = ru.testbed_id WHERE ru.id = ?",
			        -1, &s, NULL) == SQLITE_OK) {
				sqlite3_bind_int64(s, 1, run);
				bool row = sqlite3_step(s) == SQLITE_ROW;

				if (row && jm) {
					json_object_set_new(jm, "run", json_integer(run));
					json_object_set_new(jm, "commit", json_string(col_text(s, 0)));
					json_object_set_new(jm, "host", json_string(col_text(s, 3)));
				}
				if (row) {
					double age = difftime(time(NULL),
					                      (time_t)sqlite3_column_int64(s, 2)) /
					             86400.0;
					char host[128];

					fprintf(
					    out,
					    "evidence: run:%lld, commit %.12s%s, %.1f days old, "
					    "host %s (%s)\n",
					    (long long)run, col_text(s, 0),
					    sqlite3_column_int(s, 1) ? " (dirty)" : "", age,
					    col_text(s, 3), col_text(s, 4));
					if (age > 30)
						fprintf(
						    out,
						    "warning: the data is %.0f days old (> 30): "
						    "re-run `xo perf record`\n",
						    age);
					if (strcmp(col_text(s, 0), now_commit.sha))
						fprintf(
						    out,
						    "warning: measured at commit %.12s, this tree "
						    "is at %.12s: re-run `xo perf record`\n",
						    col_text(s, 0), now_commit.sha);
					if (gethostname(host, sizeof(host)) == 0 &&
					    strcmp(host, col_text(s, 3)))
						fprintf(
						    out,
						    "warning: measured on host %s, this is %s\n",
						    col_text(s, 3), host);
				}
				sqlite3_finalize(s);
				s = NULL;
			}
			any = true;
		}
		cpu = find_curve(cv, ncv, "cpu");
		cl = find_curve(cv, ncv, "cl");
		json_t *jw = jm ? json_array() : NULL;

		if (jm)
			json_object_set_new(jm, whats[w], jw);
		fprintf(out, "\n%s %s (time per call, 95%% CI of the median):\n", model, whats[w]);
		fprintf(out, "%8s %-28s %-28s %s\n", "batch", "cpu", "cl", "advice");
		if (!cpu || !cl) {
			fprintf(out, "  cpu and cl are not both measured: nothing to compare\n");
			continue;
		}
		for (size_t i = 0; i < cpu->n; i++) {
			size_t j;
			char a[64], b[64];

			for (j = 0; j < cl->n && cl->batch[j] != cpu->batch[i]; j++)
				;
			if (j == cl->n)
				continue;
			fmt_ci(cpu->med[i], cpu->lo[i], cpu->hi[i], a, sizeof(a));
			fmt_ci(cl->med[j], cl->lo[j], cl->hi[j], b, sizeof(b));
			fprintf(out, "%8lld %-28s %-28s ", (long long)cpu->batch[i], a, b);
			const char *adv = cpu->hi[i] >= cl->lo[j] && cl->hi[j] >= cpu->lo[i] ? "unclear"
			                  : cpu->med[i] < cl->med[j]                         ? "cpu"
			                                                                      : "cl";
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
		double x = crossover(cpu, cl);

		if (x > 0)
			fprintf(out, "crossover: cl becomes faster at batch ~%.0f\n", x);
		else if (x < 0)
			fprintf(out, "crossover: none, cl is faster at every measured batch\n");
		else
			fprintf(out, "crossover: none in the measured range (cl never goes "
			             "from slower to faster than cpu)\n");
	}
	if (!any)
		st = xo_error(XO_EINVAL,
		              "no measurements of model '%s' in the database: run `xo perf "
		              "record` first",
		              model);
out:
	sqlite3_finalize(s);
	free(cv);
	return st;
}
