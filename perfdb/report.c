/*
 * report.c - `xo perf report`: the output directory (written beside, then
 * moved into place), index.html with its sections in order, the text
 * summary, and gnuplot run over the data. Its parts: answer.c (the answer
 * advise.c says too), report_plots.c (the latest runs' plots),
 * report_history.c (history), report_text.c (escaping), query.c (reads).
 *
 * The report answers first: per model the answer (struct xo_perf_answer:
 * the faster device per batch, the crossover with its interval, the
 * diagnosis from the measured split of perfdb/split.h, the device probe);
 * then regressions, where the OpenCL time goes, and history grouped per
 * benchmark. advise and the report's text summary lead with the same
 * sentences (xo_perf_answer_load is the one place they are made).
 *
 * Crossover: the batch size where the cl curve (time per sample) goes below
 * the cpu curve, interpolated linearly in log(batch) on log(time ratio)
 * between the two measured batches around the sign change; its interval is
 * the same crossing of the curves' 95% CI ends (xo_perf_cross_find). It is
 * claimed only where the per-batch table (95% CIs apart or "too close to tell")
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
#include "report.h"

/* ---- gnuplot ---------------------------------------------------------------------- */

static bool have_gnuplot(void)
{
	return xo_proc_found("gnuplot");
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
		return xo_error(XO_EINVAL,
		                "--out %s: is a symbolic link; give the directory itself", dst);
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
		return xo_error(
		    XO_EINVAL,
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
	if (model && (st = xo_perf_model_check(db, model)))
		return st;
	if ((st = out_check(dst, &exists)))
		return st;
	if ((st = xo_perf_query_latest_own_run(db, only, &latest)))
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
			st = xo_error(XO_EIO, "--out %s: cannot replace it: %s", dst,
			              strerror(errno));
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

	if (xo_perf_rows_mutant_counts(db, &s) != XO_SQL_OK)
		return;
	while (xo_sql_step(s) == XO_SQL_ROW) {
		if (!any) {
			fprintf(html, "<h2>Suite power: generated mutants (ci/mutgen.py)</h2>\n"
			              "<p>");
			xo_perf_html_escape(html, xo_perf_query_text(s, 0));
			fprintf(html, ", commit <code>");
			xo_perf_html_escape(html, xo_perf_query_text(s, 1));
			fprintf(html, "</code>, lines added by <code>");
			xo_perf_html_escape(html, xo_perf_query_text(s, 2));
			fprintf(html, "</code>:");
		}
		fprintf(html, "%s ", any ? "," : "");
		xo_perf_html_escape(html, xo_perf_query_text(s, 3));
		fprintf(html, " %lld", (long long)xo_sql_column_int64(s, 4));
		any = true;
	}
	xo_sql_finalize(s);
	s = NULL;
	if (!any)
		return;
	fprintf(html, ".</p>\n");
	if (xo_perf_rows_mutant_kept(db, &s) != XO_SQL_OK)
		return;
	fprintf(html, "<table><tr><th>mutant</th><th>where</th><th>operator</th><th>original</th>"
	              "<th>mutated</th><th>result</th></tr>\n");
	any = false;
	while (xo_sql_step(s) == XO_SQL_ROW) {
		bool survived = !strcmp(xo_perf_query_text(s, 6), "survived");

		fprintf(html, "<tr class=\"%s\"><td>", survived ? "reg" : "imp");
		xo_perf_html_escape(html, xo_perf_query_text(s, 0));
		fprintf(html, "</td><td>");
		xo_perf_html_escape(html, xo_perf_query_text(s, 1));
		fprintf(html, ":%lld</td>", (long long)xo_sql_column_int64(s, 2));
		for (int i = 3; i <= 5; i++) {
			fprintf(html, "<td>%s", i > 3 ? "<code>" : "");
			xo_perf_html_escape(html, xo_perf_query_text(s, i));
			fprintf(html, "%s</td>", i > 3 ? "</code>" : "");
		}
		fprintf(html, "<td>");
		xo_perf_html_escape(html, xo_perf_query_text(s, 6));
		if (xo_perf_query_text(s, 7)[0]) {
			fprintf(html, ": ");
			xo_perf_html_escape(html, xo_perf_query_text(s, 7));
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

/* The text the report prints first: per model the crossover and diagnosis. */
static void summary_answer(FILE *sum, const struct xo_perf_answer *a)
{
	char line[512], model[64];

	xo_perf_gp_safe(a->model, model, sizeof(model));
	for (int w = 0; w < 2; w++)
		if (a->wl[w].run)
			fprintf(sum, "%s %s: %s\n", model, a->wl[w].what,
			        xo_perf_cross_sentence(&a->wl[w].x, line, sizeof(line)));
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

	if (xo_perf_rows_coverage(db, &s) != XO_SQL_OK)
		return XO_OK;
	while (xo_sql_step(s) == XO_SQL_ROW) {
		struct cov_row r;
		int f;

		xo_perf_safe_name(xo_perf_query_text(s, 3), r.folder, sizeof(r.folder));
		r.lines = xo_sql_column_int64(s, 4);
		r.lines_hit = xo_sql_column_int64(s, 5);
		r.branches = xo_sql_column_int64(s, 6);
		r.branches_hit = xo_sql_column_int64(s, 7);
		r.todo = xo_sql_column_int64(s, 8);
		nx = (int)xo_sql_column_int64(s, 9);
		if (strcmp(date,
		           xo_perf_query_text(s, 0))) { /* a newer run: the table is its rows */
			snprintf(date, sizeof(date), "%s", xo_perf_query_text(s, 0));
			xo_perf_safe_name(xo_perf_query_text(s, 1), sha, sizeof(sha) - 1);
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
				st =
				    xo_error(XO_EIO, "%s: cannot write: %s", path, strerror(errno));
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
		fprintf(
		    gp,
		    "reset\nset datafile missing 'NaN'\nset title 'coverage of the quick suites:"
		    " %s'\nset ylabel '%s'\nset xlabel 'coverage run (oldest to newest; + ="
		    " dirty)'\nset yrange [0:100]\nset xrange [-0.5:%d.5]\nset grid ytics\n"
		    "set key below horizontal noenhanced\nset xtics rotate by 45 right\n"
		    "do for [fmt in \"png svg\"] {\n"
		    "\tif (fmt eq \"png\") { eval(\"set terminal \".png_term) }"
		    " else { eval(\"set terminal \".svg_term) }\n"
		    "\tset output 'coverage_%s.'.fmt\n\tplot ",
		    what[m][0], what[m][1], nx - 1, what[m][0]);
		for (int f = 0; f < nf; f++)
			fprintf(gp,
			        "%s'data/coverage_%s.dat' using 1:%d%s with linespoints lw 2 pt 7"
			        " title '%s'",
			        f ? ", \\\n\t     " : "", folders[f], 2 + m, f ? "" : ":xtic(4)",
			        folders[f]);
		fprintf(gp, "\n\tset output\n}\n");
	}
	fprintf(html, "<h2 id=\"coverage\">Coverage of the quick suites (ci/coverage.sh)</h2>\n"
	              "<p>Line and branch coverage (gcov) per folder, the last %d runs at most; "
	              "to-do: lines no quick test reaches in model/, perfdb/ and the kernels' "
	              "drivers (the run's todo.txt lists them). Latest: commit <code>%s</code>, ",
	        COV_RUNS, sha);
	xo_perf_html_escape(html, date);
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

	if (xo_perf_rows_run_latest(db, latest, &s))
		return xo_perf_query_err(db, "report");
	if (xo_sql_step(s) == XO_SQL_ROW) {
		time_t t = (time_t)xo_sql_column_int64(s, 4);
		char when[64] = "?";
		struct tm tm;

		*testbed = xo_sql_column_int64(s, 0);
		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
		fprintf(html, "<p>Latest run: <b>run:%lld</b>, commit <code>%.12s%s</code> (",
		        (long long)latest, xo_perf_query_text(s, 1),
		        xo_sql_column_int(s, 2) ? " dirty" : "");
		xo_perf_html_escape(html, xo_perf_query_text(s, 3));
		fprintf(html, "), %s, host ", when);
		xo_perf_html_escape(html, xo_perf_query_text(s, 5));
		fprintf(html, " (<a href=\"#testbed\">testbed %lld</a>).</p>\n",
		        (long long)*testbed);
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
	if (xo_perf_rows_changes_grouped(db, &s) == XO_SQL_OK) {
		while (xo_sql_step(s) == XO_SQL_ROW) {
			char group[192], safe[256];

			nch++;
			/* regressions and improvements in their own colours; each
			 * change links to its benchmark group's history plot */
			xo_perf_bench_group(xo_perf_query_text(s, 3), xo_perf_query_text(s, 8),
			                    group, sizeof(group));
			xo_perf_safe_name(group, safe, sizeof(safe));
			fprintf(html, "<tr class=\"%s\"><td>%lld</td><td>",
			        !strcmp(xo_perf_query_text(s, 2), "regression") ? "reg" : "imp",
			        (long long)xo_sql_column_int64(s, 0));
			xo_perf_html_escape(html, xo_perf_query_text(s, 1));
			fprintf(html, " %s</td><td><a href=\"hist_%s.svg\">",
			        !strcmp(xo_perf_query_text(s, 2), "regression") ? "regression"
			                                                        : "improvement",
			        safe);
			xo_perf_html_escape(html, xo_perf_query_text(s, 3));
			if (xo_perf_query_text(
			        s, 7)[0]) /* ref and peers: listed after, never alarms */
				fprintf(html, "</a> (%s, not under test", xo_perf_query_text(s, 7));
			fprintf(html, "%s</td><td><code>%.10s</code></td><td>%+.1f%%</td>",
			        xo_perf_query_text(s, 7)[0] ? ")" : "</a>",
			        xo_perf_query_text(s, 4),
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
		xo_perf_html_escape(html, model);
		fprintf(html, "\">Where the OpenCL time goes: ");
		xo_perf_html_escape(html, model);
		fprintf(
		    html,
		    "</h2>\n<p>The wall time of one call split into parts that add up to its "
		    "median (perfdb/split.h): <b>launch</b> = the device idle while the host "
		    "launches, enqueues and synchronises; <b>transfer</b> = host-to-device and "
		    "device-to-host copies; <b>compute</b> = kernels running; <b>other</b> = host "
		    "work outside enqueue and wait. Then the kernel time of one training step per "
		    "layer.</p>\n");
		for (int w = 0; w < 2; w++)
			if ((st = xo_perf_write_split(db, outdir, gp, html, model, whats[w], run)))
				return st;
		if ((st = xo_perf_write_layers(db, outdir, gp, html, model, run)))
			return st;
	}
	return XO_OK;
}

/* The suites' power: the mutation stage's figures (ci/mutate.sh --db
 * writes table mutation_runs; a store without it has no section). */
static void write_mutation_runs(struct xo_perfdb *db, FILE *html)
{
	struct xo_sql_stmt *s = NULL;

	if (xo_perf_rows_mutation_runs(db, &s) == XO_SQL_OK) {
		fprintf(html,
		        "<h2>Suite power (ci/mutate.sh)</h2>\n<p>Planted bugs caught by what CI "
		        "runs, newest first.</p>\n<table><tr><th>date</th><th>commit</th>"
		        "<th>caught</th><th>equivalent</th><th>errors</th><th>mutants run</th>"
		        "<th>seconds</th><th>missed</th></tr>\n");
		while (xo_sql_step(s) == XO_SQL_ROW) {
			bool all = xo_sql_column_int64(s, 3) == xo_sql_column_int64(s, 4) &&
			           xo_sql_column_int64(s, 6) == 0;

			fprintf(html, "<tr class=\"%s\"><td>", all ? "imp" : "reg");
			xo_perf_html_escape(html, xo_perf_query_text(s, 0));
			fprintf(html, "</td><td><code>");
			xo_perf_html_escape(html, xo_perf_query_text(s, 1));
			fprintf(html,
			        "%s</code></td><td>%lld/%lld</td><td>%lld</td><td>%lld</td>"
			        "<td>%lld of %lld</td><td>%lld</td><td>",
			        xo_sql_column_int64(s, 2) ? " (dirty)" : "",
			        (long long)xo_sql_column_int64(s, 3),
			        (long long)xo_sql_column_int64(s, 4),
			        (long long)xo_sql_column_int64(s, 5),
			        (long long)xo_sql_column_int64(s, 6),
			        (long long)xo_sql_column_int64(s, 9),
			        (long long)xo_sql_column_int64(s, 10),
			        (long long)xo_sql_column_int64(s, 8));
			xo_perf_html_escape(html, xo_perf_query_text(s, 7));
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

	if (xo_perf_rows_run_testbed(db, latest, &s))
		return xo_perf_query_err(db, "report");
	if (xo_sql_step(s) == XO_SQL_ROW) {
		static const char *const labels[] = {
		    "host",          "CPU",      "cores", "BLAS",       "BLAS core type",
		    "OpenCL device", "compiler", "flags", "environment"};

		fprintf(html, "<h2 id=\"testbed\">Testbed %lld (run:%lld)</h2>\n<table>\n",
		        (long long)testbed, (long long)latest);
		for (int i = 0; i < 9; i++) {
			fprintf(html, "<tr><th>%s</th><td>", labels[i]);
			xo_perf_html_escape(html, xo_perf_query_text(s, i));
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
	struct xo_perf_answer *ans = calloc(1, sizeof(*ans));
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
		xo_perf_model_name(model_arg, models[0], sizeof(models[0]));
		nmodels = 1;
	} else {
		nmodels = xo_perf_query_models(db, models, 32);
	}
	for (int mi = 0; mi < nmodels; mi++) {
		if ((st = xo_perf_answer_load(db, models[mi], ans)) ||
		    (st = xo_perf_write_answer(db, outdir, gp, html, ans)))
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
	if ((st = xo_perf_write_histories(db, outdir, gp, html, only, &nhist)))
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

	if (xo_perf_rows_run_before(db, testbed, latest, &s))
		return xo_perf_query_err(db, "finding the run before the latest");
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
		xo_perf_html_escape(html, st ? xo_last_error() : "unreadable output");
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
		xo_perf_html_escape(html, name);
		fprintf(html,
		        "</td><td>%.4g ms</td><td>%.4g ms</td><td>%+.1f%%</td><td>%.2g</td><td>",
		        1e3 * json_number_value(json_object_get(r, "base_median_s")),
		        1e3 * json_number_value(json_object_get(r, "head_median_s")),
		        100.0 * json_number_value(json_object_get(r, "change")),
		        json_number_value(json_object_get(r, "p_value")));
		xo_perf_html_escape(html, v);
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
