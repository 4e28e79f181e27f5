/*
 * report_plots.c - the report's plots of the latest runs: the crossover,
 * where the OpenCL time goes, the layers, and the answer's table beside them
 * (gnuplot data files, plots.gp lines and the HTML that shows them).
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

#define MAX_COLS 40 /* layers a layer plot shows */

/* The crossover plot of one workload: data files and the gnuplot lines;
 * the HTML goes with the answer (xo_perf_write_answer). */
static enum xo_status write_crossover(struct xo_perfdb *db, const char *outdir, FILE *gp,
                                      const char *model_raw, const struct xo_perf_answer_wl *wl)
{
	char model[64]; /* the model's name as file names, gnuplot and HTML see it */
	char path[4096], devices[1024] = "";
	const struct xo_perf_cross *x = &wl->x;
	double band_lo = 0, band_hi = 0;

	xo_perf_safe_name(model_raw, model, sizeof(model));
	for (int i = 0; i < wl->ncv; i++) {
		const struct xo_perf_curve *c = &wl->cv[i];
		char dev[48];
		FILE *f;

		/* peer names come from imported files: file names and gnuplot see
		 * only the safe set */
		xo_perf_safe_name(c->device, dev, sizeof(dev));
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
	fprintf(
	    gp,
	    "prefix = 'data/cross_%s_%s_'; devices = '%s'; xcross = %g; cl_label = '%s';\n"
	    "xband_lo = %g; xband_hi = %g;\n"
	    "title_text = '%s %s: time per sample vs batch (run %lld)';\n"
	    "outbase = 'crossover_%s_%s'; load script_dir.'/crossover.gp'\n",
	    model, wl->what, devices, x->at, xo_perf_query_cl_label(db, wl->run), band_lo, band_hi, model,
	    wl->what, (long long)wl->run, model, wl->what);
	return XO_OK;
}

/*
 * Where a call's wall time goes, per batch, for every device with OpenCL
 * event times: the decomposition of split.h (launch/sync latency, transfers,
 * compute, other host work), whose parts add up to the result's median wall
 * time (xo_perf_query_meas). The data file keeps the parts in ms beside the median;
 * the plot stacks them as shares of it.
 */
enum xo_status xo_perf_write_split(struct xo_perfdb *db, const char *outdir, FILE *gp, FILE *html,
                                   const char *model_raw, const char *what, int64_t run)
{
	char model[64]; /* the model's name as file names, gnuplot and HTML see it */
	struct xo_sql_stmt *s = NULL;
	char path[4096];
	enum xo_status st = XO_OK;
	FILE *f;
	int rows = 0, ndev = 0;

	if (xo_perf_rows_split(db, run, model_raw, what, &s))
		return xo_perf_query_err(db, "reading the OpenCL split");
	xo_perf_safe_name(model_raw, model, sizeof(model));
	snprintf(path, sizeof(path), "%s/data/split_%s_%s.dat", outdir, model, what);
	f = fopen(path, "w");
	if (!f) {
		xo_sql_finalize(s);
		return xo_error(XO_EIO, "%s: %s", path, strerror(errno));
	}
	fprintf(f, "# label launch_ms transfer_ms compute_ms other_ms wall_median_ms\n");
	while (xo_sql_step(s) == XO_SQL_ROW) {
		struct xo_perf_meas m;
		char dev[48];

		if ((st = xo_perf_query_meas(db, xo_sql_column_int64(s, 0), &m)))
			break;
		if (!m.has_split)
			continue;
		/* more than one device with event times: the label names it */
		ndev = xo_sql_column_int(s, 3);
		xo_perf_safe_name(xo_perf_query_text(s, 2), dev, sizeof(dev));
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
	        "time of one call goes (bar labels: batch, median wall, launches)';\noutbase = "
	        "'split_%s_%s'; load script_dir.'/gpu_split.gp'\n",
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

	if (xo_perf_rows_probes(db, run, &s) != XO_SQL_OK)
		return 0; /* no table probes in this store */
	while (xo_sql_step(s) == XO_SQL_ROW) {
		if (!rows++)
			fprintf(
			    html,
			    "<h3>Device probe (xo probe, run:%lld)</h3>\n<table class=\"probes\">"
			    "<tr><th>device</th><th>launch (us)</th><th>enqueue (us)</th>"
			    "<th>sync (us)</th><th>H2D latency (us)</th><th>H2D (GB/s)</th>"
			    "<th>D2H latency (us)</th><th>D2H (GB/s)</th><th>GFLOP/s</th>"
			    "<th>memory (GB/s)</th><th>hand-off (us)</th><th>units</th></tr>\n",
			    (long long)run);
		fprintf(html, "<tr><td>");
		xo_perf_html_escape(html, xo_perf_query_text(s, 0));
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
		fprintf(html,
		        "</table>\n<p>Launch: an empty kernel, enqueue to completion (cpu: "
		        "one thread-pool round); H2D/D2H latency: a 4-byte blocking copy, "
		        "GB/s: a large one; GFLOP/s: an FMA-bound kernel; memory: a streaming "
		        "kernel (read + written). &ndash;: does not apply to the device.</p>\n");
	return rows;
}

/* The answer table of one workload: per batch the faster of cpu and cl (95%
 * CIs apart, else "unclear"), the ratio, both medians with their CIs; the
 * peers (other frameworks) in a table of their own. */
static void write_answer_table(FILE *html, const struct xo_perf_answer_wl *wl)
{
	const struct xo_perf_curve *cpu = xo_perf_find_curve(wl->cv, wl->ncv, "cpu");
	const struct xo_perf_curve *cl = xo_perf_find_curve(wl->cv, wl->ncv, "cl");
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
			const char *v = xo_perf_faster_of(cpu->lo[i], cpu->med[i], cpu->hi[i],
			                                  cl->lo[j], cl->med[j], cl->hi[j]);
			double r = cpu->med[i] < cl->med[j] ? cl->med[j] / cpu->med[i]
			                                    : cpu->med[i] / cl->med[j];

			xo_perf_fmt_ci(cpu->med[i], cpu->lo[i], cpu->hi[i], a, sizeof(a));
			xo_perf_fmt_ci(cl->med[j], cl->lo[j], cl->hi[j], b, sizeof(b));
			fprintf(html,
			        "<tr class=\"ans\"><td>%lld</td><td class=\"faster\">%s</td>"
			        "<td>%.2fx%s</td><td>%s</td><td>%s</td></tr>\n",
			        (long long)cpu->batch[i], v, r,
			        !strcmp(v, "unclear") ? " (CIs overlap)" : "", a, b);
		}
		fprintf(html, "</table>\n");
	}
	for (int p = 0; p < wl->ncv; p++)
		npeer += !xo_perf_own_device(wl->cv[p].device);
	if (!npeer)
		return;
	/* every batch any peer measured, in order */
	int64_t batches[XO_PERF_MAX_BATCH];
	int nb = 0;

	for (int p = 0; p < wl->ncv; p++) {
		if (xo_perf_own_device(wl->cv[p].device))
			continue;
		for (size_t k = 0; k < wl->cv[p].n; k++) {
			int i = 0;

			while (i < nb && batches[i] != wl->cv[p].batch[k])
				i++;
			if (i == nb && nb < XO_PERF_MAX_BATCH)
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
		if (!xo_perf_own_device(wl->cv[p].device)) {
			fprintf(html, "<th>");
			xo_perf_html_escape(html, wl->cv[p].device);
			fprintf(html, ": median [95%% CI]</th>");
		}
	fprintf(html, "</tr>\n");
	for (int i = 0; i < nb; i++) {
		fprintf(html, "<tr><td>%lld</td>", (long long)batches[i]);
		for (int p = 0; p < wl->ncv; p++) {
			const struct xo_perf_curve *c = &wl->cv[p];
			size_t k;
			char t[64];

			if (xo_perf_own_device(c->device))
				continue;
			for (k = 0; k < c->n && c->batch[k] != batches[i]; k++)
				;
			if (k == c->n) {
				fprintf(html, "<td>&ndash;</td>");
				continue;
			}
			xo_perf_fmt_ci(c->med[k], c->lo[k], c->hi[k], t, sizeof(t));
			fprintf(html, "<td>%s", t);
			if (cpu)
				for (size_t q = 0; q < cpu->n; q++)
					if (cpu->batch[q] == batches[i])
						fprintf(html, " (%.2fx cpu)",
						        c->med[k] / cpu->med[q]);
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
enum xo_status xo_perf_write_answer(struct xo_perfdb *db, const char *outdir, FILE *gp,
                                    FILE *html, const struct xo_perf_answer *a)
{
	char model[64], line[512];
	enum xo_status st;

	xo_perf_safe_name(a->model, model, sizeof(model));
	fprintf(html, "<h2 id=\"answer_%s\">Answer for ", model);
	xo_perf_html_escape(html, a->model);
	fprintf(html, ", which device is faster per batch size, and why</h2>\n");
	if (!a->wl[0].ncv && !a->wl[1].ncv) {
		fprintf(html, "<p>No measurement of this model's train_step or predict.</p>\n");
		return XO_OK;
	}
	if (xo_perf_answer_cl_on_cpu(db, a))
		fprintf(html, "<p class=\"nogpu\"><b>%s</b> (PoCL or another CPU device): the cl "
		              "curves are not a GPU's.</p>\n",
		        XO_PERF_NO_GPU);
	/* the answer in words first: the crossover per workload, then why */
	fprintf(html, "<ul class=\"crossover\">\n");
	for (int w = 0; w < 2; w++)
		if (a->wl[w].ncv) {
			fprintf(html, "<li><b>%s</b>: ", a->wl[w].what);
			xo_perf_html_escape(
			    html, xo_perf_cross_sentence(&a->wl[w].x, line, sizeof(line)));
			fprintf(html, "</li>\n");
		}
	fprintf(html, "</ul>\n");
	if (a->ndiag) { /* no heading without its content */
		fprintf(html, "<h3 id=\"diagnosis_%s\">Diagnosis (from the measured split of the "
		              "stored samples)</h3>\n<ul class=\"diagnosis\">\n", model);
		for (int i = 0; i < a->ndiag; i++) {
			fprintf(html, "<li>");
			xo_perf_html_escape(html, a->diag[i]);
			fprintf(html, "</li>\n");
		}
		fprintf(html, "</ul>\n");
	}
	/* the cost model's predicted sentences go here */
	for (int w = 0; w < 2; w++) {
		const struct xo_perf_answer_wl *wl = &a->wl[w];

		if (!wl->ncv) /* peers alone (no own run) still get their plot */
			continue;
		fprintf(html, "<h3 id=\"crossover_%s_%s\">", model, wl->what);
		xo_perf_html_escape(html, a->model);
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
enum xo_status xo_perf_write_layers(struct xo_perfdb *db, const char *outdir, FILE *gp, FILE *html,
                                    const char *model_raw, int64_t run)
{
	char model[64]; /* the model's name as file names, gnuplot and HTML see it */
	struct xo_sql_stmt *s = NULL;
	char path[4096], (*names)[64] = calloc(MAX_COLS, 64);
	double(*ms)[MAX_COLS] = calloc(XO_PERF_MAX_BATCH, sizeof(*ms));
	int64_t batches[XO_PERF_MAX_BATCH];
	int nb = 0, nn = 0;
	FILE *f;

	if (!names || !ms) {
		free(names);
		free(ms);
		return xo_error(XO_ENOMEM, "perf: out of memory");
	}
	/* layers in the order they were stored */
	if (xo_perf_rows_layers(db, run, model_raw, &s)) {
		free(names);
		free(ms);
		return xo_perf_query_err(db, "reading layer times");
	}
	xo_perf_safe_name(model_raw, model, sizeof(model));
	while (xo_sql_step(s) == XO_SQL_ROW) {
		int64_t batch = xo_sql_column_int64(s, 0);
		const char *name = xo_perf_query_text(s, 1);
		int bi, ni;

		for (bi = 0; bi < nb && batches[bi] != batch; bi++)
			;
		if (bi == nb) {
			if (nb == XO_PERF_MAX_BATCH)
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
