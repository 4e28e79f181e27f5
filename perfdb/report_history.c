/*
 * report_history.c - the report's history: one plot per benchmark group
 * per testbed, median with CI bars, minima and change markers.
 */
#include <errno.h>
#include <sys/stat.h>
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

/* A benchmark's group: its name without the device suffix ("op/relu/fwd/
 * n512_l27_c16/cpu" -> "op/relu/fwd/n512_l27_c16"); the name itself when it
 * does not end in "/device". */
void xo_perf_bench_group(const char *name, const char *device, char *out, size_t size)
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

	xo_perf_safe_name(mem[0].group, safe, sizeof(safe));
	if (xo_perf_rows_history(db, &s))
		return xo_perf_query_err(db, "reading a history");
	for (int d = 0; d < nmem; d++) {
		xo_perf_rows_history_bind(s, mem[d].bench, mem[d].testbed);
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
			snprintf(p->sha, sizeof(p->sha), "%.7s%s", xo_perf_query_text(s, 2),
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
	xo_perf_gp_safe(mem[0].group, title, sizeof(title));
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
	if (xo_perf_rows_testbeds(db, only, &s))
		return xo_perf_query_err(db, "listing the testbeds");
	fprintf(html, "<h3 id=\"testbeds\">Testbeds%s</h3>\n<table><tr><th>label</th><th>id</th>"
	              "<th>host</th><th>hash</th><th>CPU</th><th>complete runs</th>"
	              "<th>latest</th></tr>\n",
	        only ? " (--testbed)" : "");
	while (xo_sql_step(s) == XO_SQL_ROW) {
		struct hist_testbed *t = &tb[*ntb];

		if (*ntb == MAX_TESTBEDS)
			break;
		t->id = xo_sql_column_int64(s, 0);
		snprintf(t->host, sizeof(t->host), "%s", xo_perf_query_text(s, 1));
		snprintf(t->hash, sizeof(t->hash), "%.12s", xo_perf_query_text(s, 2));
		snprintf(t->cpu, sizeof(t->cpu), "%s", xo_perf_query_text(s, 3));
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
			snprintf(tb[i].label, sizeof(tb[i].label), "%s-%.8s", tb[i].host,
			         tb[i].hash);
		else
			snprintf(tb[i].label, sizeof(tb[i].label), "%s", tb[i].host);
		fprintf(html, "<tr><td>");
		xo_perf_html_escape(html, tb[i].label);
		fprintf(html, "</td><td>%lld</td><td>", (long long)tb[i].id);
		xo_perf_html_escape(html, tb[i].host);
		fprintf(html, "</td><td><code>");
		xo_perf_html_escape(html,
		                    tb[i].hash); /* a store's text, imported stores included */
		fprintf(html, "</code></td><td>");
		xo_perf_html_escape(html, tb[i].cpu);
		fprintf(html, "</td><td>%lld</td><td>run:%lld</td></tr>\n", (long long)tb[i].runs,
		        (long long)tb[i].latest);
	}
	fprintf(html, "</table>\n");
	return XO_OK;
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
	if (xo_perf_rows_results(db, only, &s))
		return xo_perf_query_err(db, "report");
	while (xo_sql_step(s) == XO_SQL_ROW) {
		double med = xo_sql_column_double(s, 4), lo = xo_sql_column_double(s, 5),
		       hi = xo_sql_column_double(s, 6), mn = xo_sql_column_double(s, 7);
		char ci[96], m[48];

		if (!strcmp(xo_perf_query_text(s, 2), "time")) {
			xo_perf_fmt_ci(med, lo, hi, ci, sizeof(ci));
			xo_fmt_seconds(mn, m, sizeof(m));
		} else {
			snprintf(ci, sizeof(ci), "%.6g [%.6g, %.6g] %s", med, lo, hi,
			         xo_perf_query_text(s, 3));
			snprintf(m, sizeof(m), "%.6g %s", mn, xo_perf_query_text(s, 3));
		}
		fprintf(html, "<tr><td>");
		xo_perf_html_escape(html, xo_perf_query_text(s, 0));
		fprintf(html, "</td><td>");
		xo_perf_html_escape(html, xo_perf_query_text(s, 1));
		fprintf(html, "</td><td>");
		xo_perf_html_escape(html, ci);
		fprintf(html, "</td><td>");
		xo_perf_html_escape(html, m);
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
enum xo_status xo_perf_write_histories(struct xo_perfdb *db, const char *outdir, FILE *gp,
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
	if (xo_perf_query_count_runs(db, only) == 1)
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
	if (xo_perf_rows_series_members(db, only, &s))
		return xo_perf_query_err(db, "report");
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
		snprintf(mem[n].device, sizeof(mem[n].device), "%s", xo_perf_query_text(s, 2));
		xo_perf_bench_group(xo_perf_query_text(s, 1), mem[n].device, mem[n].group,
		                    sizeof(mem[n].group));
		for (int i = 0; i < ntb; i++)
			if (tb[i].id == mem[n].testbed)
				tl = tb[i].label;
		{
			/* one word of gnuplot's devices list: file-name-safe parts, '@'
			 * between them (inside single quotes '@' is no macro) */
			char sd[48], st2[88];

			xo_perf_safe_name(mem[n].device, sd, sizeof(sd));
			xo_perf_safe_name(tl, st2, sizeof(st2));
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
		/* at most XO_PERF_MAX_DEV lines a plot: gnuplot's colours run out long before */
		if ((st = write_history_group(
		         db, &ord, outdir, gp, &mem[i],
		         (int)(j - i < XO_PERF_MAX_DEV ? j - i : XO_PERF_MAX_DEV))))
			goto out;
		xo_perf_safe_name(mem[i].group, safe, sizeof(safe));
		fprintf(html, "<a href=\"hist_%s.svg\"><img src=\"hist_%s.png\" title=\"", safe,
		        safe);
		xo_perf_html_escape(html, mem[i].group);
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
