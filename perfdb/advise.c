/*
 * advise.c - `xo perf advise`: the answer as text (or JSON), the
 * evidence's freshness, and the per-batch table.
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

/* ---- advise -------------------------------------------------------------------- */

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
		if ((st = xo_perf_model_check(db, model_arg)))
			goto out;
		xo_perf_model_name(model_arg, names[0], sizeof(names[0]));
		n = 1;
	} else {
		n = xo_perf_query_models(db, names, 32);
		if (!n) {
			st = xo_error(XO_EINVAL,
			              "no model measurements in the database: run `xo perf "
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
	if (xo_perf_rows_run_evidence(db, run, &s) == XO_SQL_OK) {
		if (xo_sql_step(s) == XO_SQL_ROW) {
			double age =
			    difftime(time(NULL), (time_t)xo_sql_column_int64(s, 2)) / 86400.0;
			char host[128];

			if (jm) {
				json_object_set_new(jm, "run", json_integer(run));
				json_object_set_new(jm, "commit",
				                    json_string(xo_perf_query_text(s, 0)));
				json_object_set_new(jm, "host",
				                    json_string(xo_perf_query_text(s, 3)));
			}
			fprintf(
			    out,
			    "\nevidence: run:%lld, commit %.12s%s, %.1f days old, host %s (%s)\n",
			    (long long)run, xo_perf_query_text(s, 0),
			    xo_sql_column_int(s, 1) ? " (dirty)" : "", age,
			    xo_perf_query_text(s, 3), xo_perf_query_text(s, 4));
			if (age > 30)
				fprintf(
				    out,
				    "warning: the data is %.0f days old (> 30): re-run `xo perf "
				    "record`\n",
				    age);
			if (strcmp(xo_perf_query_text(s, 0), now_commit.sha))
				fprintf(out,
				        "warning: measured at commit %.12s, this tree is at %.12s: "
				        "re-run `xo perf record`\n",
				        xo_perf_query_text(s, 0), now_commit.sha);
			if (gethostname(host, sizeof(host)) == 0 &&
			    strcmp(host, xo_perf_query_text(s, 3)))
				fprintf(out, "warning: measured on host %s, this is %s\n",
				        xo_perf_query_text(s, 3), host);
		}
		xo_sql_finalize(s);
	}
}

static enum xo_status advise_one(struct xo_perfdb *db, const char *model, FILE *out, json_t *jm)
{
	struct xo_perf_answer *a = calloc(1, sizeof(*a));
	enum xo_status st = XO_OK;
	char line[512];

	if (!a)
		return xo_error(XO_ENOMEM, "perf: out of memory");
	if (jm)
		json_object_set_new(jm, "model", json_string(model));
	if ((st = xo_perf_answer_load(db, model, a)))
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
	if (xo_perf_answer_cl_on_cpu(db, a)) {
		fprintf(out, "%s (PoCL or another CPU device): the cl column is not a GPU's\n",
		        XO_PERF_NO_GPU);
		if (jm)
			json_object_set_new(jm, "no_gpu", json_true());
	}
	for (int w = 0; w < 2; w++) {
		const struct xo_perf_answer_wl *wl = &a->wl[w];

		if (!wl->run)
			continue;
		xo_perf_cross_sentence(&wl->x, line, sizeof(line));
		fprintf(out, "%s %s: %s\n", model, wl->what, line);
		if (jx) {
			const struct xo_perf_cross *x = &wl->x;
			char lo[32], hi[32];

			xo_perf_fmt_bound(x->lo, x, lo, sizeof(lo));
			xo_perf_fmt_bound(x->hi, x, hi, sizeof(hi));
			json_object_set_new(
			    jx, wl->what,
			    json_pack("{s:s, s:o, s:o, s:o, s:s, s:s, s:s}", "state",
			              xo_perf_cross_state_name(x), "batch",
			              x->at > 0 ? json_real(x->at) : json_null(), "lo",
			              x->lo > 0 ? json_real(x->lo) : json_null(), "hi",
			              x->hi > 0 ? json_real(x->hi) : json_null(), "lo_text",
			              xo_perf_cross_bounded(x) ? lo : "", "hi_text",
			              xo_perf_cross_bounded(x) ? hi : "", "text", line));
		}
	}
	for (int i = 0; i < a->ndiag; i++) {
		fprintf(out, "%s: %s\n", model, a->diag[i]);
		if (jd)
			json_array_append_new(jd, json_string(a->diag[i]));
	}

	advise_evidence(db, a->run, out, jm);

	for (int w = 0; w < 2; w++) {
		const struct xo_perf_answer_wl *wl = &a->wl[w];
		const struct xo_perf_curve *cpu, *cl;

		if (!wl->run)
			continue;
		cpu = xo_perf_find_curve(wl->cv, wl->ncv, "cpu");
		cl = xo_perf_find_curve(wl->cv, wl->ncv, "cl");
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
			xo_perf_fmt_ci(cpu->med[i], cpu->lo[i], cpu->hi[i], ta, sizeof(ta));
			xo_perf_fmt_ci(cl->med[j], cl->lo[j], cl->hi[j], tb, sizeof(tb));
			fprintf(out, "%8lld %-28s %-28s ", (long long)cpu->batch[i], ta, tb);
			const char *adv = xo_perf_faster_of(cpu->lo[i], cpu->med[i], cpu->hi[i],
			                                    cl->lo[j], cl->med[j], cl->hi[j]);
			if (!strcmp(adv, "unclear"))
				fprintf(out, "too close to tell (CIs overlap)\n");
			else if (!strcmp(adv, "cpu"))
				fprintf(out, "cpu (%.2fx faster)\n", cl->med[j] / cpu->med[i]);
			else
				fprintf(out, "cl (%.2fx faster)\n", cpu->med[i] / cl->med[j]);
			if (jw)
				json_array_append_new(
				    jw,
				    json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:s}", "batch",
				              (json_int_t)cpu->batch[i], "cpu_median_s",
				              cpu->med[i], "cpu_ci_lo_s", cpu->lo[i], "cpu_ci_hi_s",
				              cpu->hi[i], "cl_median_s", cl->med[j], "cl_ci_lo_s",
				              cl->lo[j], "cl_ci_hi_s", cl->hi[j], "faster", adv));
		}
		fprintf(out, "%s\n", xo_perf_cross_sentence(&wl->x, line, sizeof(line)));
	}
out:
	free(a);
	return st;
}
