/*
 * compare.c - `xo perf compare` (and through it continuous, bisect and the
 * report's compare section): two sides of runs resolved from run:N, a
 * commit or a git revision, every benchmark both measured judged by the
 * one rule (verdict.c), printed by section, with what only one side
 * measured, the testbeds and the load.
 */
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "perfdb.h"
#include "analyze.h"
#include "jsonout.h"
#include "proc.h"
#include "query.h"
#include "sql.h"
#include "verdict.h"

/* ---- compare ------------------------------------------------------------------- */


static void print_run(FILE *out, const char *what, const struct xo_perf_run_info *r)
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


/* The full sha of a git revision of the source tree; never through a shell. */
enum xo_status xo_perf_git_commit(const char *rev, char *sha, size_t size)
{
	const char *src = xo_perf_source_dir();
	char arg[320], *text = NULL;
	int code = 0;
	size_t n;
	enum xo_status st;

	/* a leading '-' would be an option to git, not a revision */
	if (!rev[0] || rev[0] == '-' || strlen(rev) > 256)
		return xo_error(XO_EINVAL, "'%s': not a revision", rev);
	for (const char *p = rev; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return xo_error(XO_EINVAL, "'%s': not a revision", rev);
	snprintf(arg, sizeof(arg), "%s^{commit}", rev);
	{
		const char *argv[] = {"git", "-C", src, "rev-parse", "--verify", "--quiet", arg,
		                      NULL};
		struct xo_proc p = {.argv = argv, .capture = true, .capture_max = 4096};

		if ((st = xo_proc_run(&p, &code, &text, NULL)))
			return st;
	}
	n = text ? strcspn(text, "\r\n") : 0;
	if (code || n < 40 || n >= size || strspn(text, "0123456789abcdef") < n) {
		free(text);
		return xo_error(XO_EINVAL, "'%s' is no run:N, no commit in the store and no git "
		                           "revision of %s",
		                rev, src);
	}
	memcpy(sha, text, n);
	sha[n] = '\0';
	free(text);
	return XO_OK;
}

static enum xo_status side_resolve(struct xo_perfdb *db, const char *spec, int64_t want_testbed,
                                   int64_t after_run, struct xo_perf_side *sd)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st;
	int64_t run_id = 0;
	char sha[48];

	memset(sd, 0, sizeof(*sd));
	if (spec && !strncmp(spec, "run:", 4)) {
		if ((st = xo_perf_resolve_run(db, spec, &run_id)))
			return st;
		sd->runs[0] = run_id;
		sd->nruns = 1;
		if ((st = xo_perf_query_side(db, sd)))
			return st;
		sd->testbed_id = sd->info.testbed_id;
		return XO_OK;
	}
	if ((st = xo_perf_resolve_run(db, spec, &run_id))) {
		char why[256];

		snprintf(why, sizeof(why), "%s", xo_last_error());
		if (!spec || strstr(why, "ambiguous"))
			return xo_error(XO_EINVAL, "%s", why);
		if (xo_perf_git_commit(spec, sha, sizeof(sha)))
			return xo_error(XO_EINVAL,
			                "'%s': not run:N, a recorded commit or a git revision",
			                spec);
		if (xo_perf_resolve_run(db, sha, &run_id))
			return xo_error(
			    XO_EINVAL,
			    "'%s' is commit %.12s, which has no complete run in the store "
			    "(record it first, or use `xo perf continuous`)",
			    spec, sha);
	}
	/* the commit row of that run (a dirty tree is its own row), and the
	 * testbed: the wanted one when the commit has own runs there */
	if (xo_perf_rows_side_commit(db, run_id, want_testbed, &s))
		return xo_perf_query_err(db, "finding a commit");
	if (xo_sql_step(s) == XO_SQL_ROW) {
		sd->commit_id = xo_sql_column_int64(s, 0);
		sd->testbed_id = xo_sql_column_int64(s, 1);
	}
	xo_sql_finalize(s);
	if (!sd->commit_id)
		return xo_error(XO_EINVAL, "'%s': no complete run", spec ? spec : "latest");
	sd->after_run = after_run;
	return xo_perf_query_side(db, sd);
}

/* "0,3,5,7": the side's runs, own and peers, for an IN (...) list (0 is no run). */
static void side_ids(const struct xo_perf_side *sd, char *buf, size_t size)
{
	snprintf(buf, size, "0");
	for (size_t i = 0; i < sd->nruns; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), ",%lld", (long long)sd->runs[i]);
}

static void print_side(FILE *out, const char *what, const struct xo_perf_side *sd, json_t *js)
{
	json_t *runs = json_array(), *peers = json_array();
	bool any_peer = false;

	print_run(out, what, &sd->info);
	fprintf(out, "      %s:", sd->commit_id ? "record runs pooled" : "the run");
	for (size_t i = 0; i < sd->nruns; i++) {
		if (sd->peer[i]) {
			any_peer = true;
			json_array_append_new(peers, json_integer(sd->runs[i]));
			continue;
		}
		fprintf(out, " run:%lld", (long long)sd->runs[i]);
		json_array_append_new(runs, json_integer(sd->runs[i]));
	}
	if (any_peer) {
		fprintf(out, "; peer imports (own section):");
		for (size_t i = 0; i < sd->nruns; i++)
			if (sd->peer[i])
				fprintf(out, " run:%lld", (long long)sd->runs[i]);
	}
	fputc('\n', out);
	if (js) {
		json_object_set_new(js, "commit", json_string(sd->info.sha));
		json_object_set_new(js, "dirty", json_boolean(sd->info.dirty));
		json_object_set_new(js, "subject", json_string(sd->info.subject));
		json_object_set_new(js, "testbed", json_integer(sd->testbed_id));
		json_object_set_new(js, "runs", runs);
		json_object_set_new(js, "peer_runs", peers);
		json_object_set_new(js, "others_cpu",
		                    sd->others >= 0 ? json_real(sd->others) : json_null());
	} else {
		json_decref(runs);
		json_decref(peers);
	}
}

static const char *const section_title[SEC_COUNT] = {
    "backends under test (cpu, cl)",
    "reference backend (ref): the oracle, reported apart, never an alarm",
    "peers (other frameworks' imported timings): reported apart, never an alarm",
};

enum xo_perf_section xo_perf_section_of(const char *device)
{
	if (!strcmp(device, "ref"))
		return SEC_REF;
	if (!strcmp(device, "cpu") || !strncmp(device, "cl", 2))
		return SEC_TEST;
	return SEC_PEER;
}

struct compare_row {
	char name[192];
	char dev[48];
	enum xo_perf_section sec;
	struct xo_perf_verdict v;
	const char *word;
	char why[192];
	bool src_changed, same_code;
	bool ver_unknown; /* a side's code version is unknown: never "unchanged" */
	size_t nb_runs, nh_runs;
	double run_noise;      /* the series' run-to-run bar (0 with several runs a side) */
	double *bx, *hx;       /* every sample of each side, run after run */
	size_t nbx, nhx;
	size_t *bn, *hn;       /* samples per run (nb_runs, nh_runs of them) */
};

/*
 * Other work on the machine: not a testbed property, but it moves every
 * threaded timing (cpu threads, PoCL). The measure is the CPU time other
 * processes took during the run (schema 3); the load average, kept for older
 * runs, also counts the recorder's own threads, so a run on an idle machine
 * ends with a load of about its own thread count. A tenth of the machine: on
 * 2 cores a fifth of the second core that the cpu backend's second thread
 * wants.
 */
/* The note after a compare row's verdict: whether the code measured changed. */
static const char *src_note(const struct compare_row *w)
{
	if (w->ver_unknown)
		return "  [code version unknown]";
	return w->src_changed ? "  [source changed]" : "";
}

static bool side_busy(const struct xo_perf_side *sd, double cores)
{
	if (sd->others >= 0)
		return sd->others > 0.1 * cores;
	return sd->load > 0.5 * cores + 1.0;
}

static bool load_differs(const struct xo_perf_side *b, const struct xo_perf_side *h, double cores)
{
	if (b->others >= 0 && h->others >= 0)
		return fabs(b->others - h->others) > 0.1 * cores;
	return side_busy(b, cores) != side_busy(h, cores);
}

/*
 * One row of compare: the samples of benchmark bench on both sides, run by
 * run, kept in w for the rule (judged once every row is read: the run-level
 * test's family is the number of rows with several runs a side), whether the
 * kernel source differs, and the run-to-run bar of the series when a side
 * has a single run. The bar is for one run against one run: with several
 * runs a side the run-level test judges the offsets themselves, and the
 * head's own runs are not "an unchanged tree" (with alternating rounds they
 * sit among the base's in run order).
 */
static enum xo_status row_load(struct xo_perfdb *db, struct xo_perf_order *ord,
                               const struct xo_perf_side *sb, const struct xo_perf_side *sh, int64_t bench,
                               bool counts, double alpha, struct compare_row *w)
{
	struct xo_perf_vec vb = {0}, vh = {0};
	char verb[24], verh[24];
	enum xo_status st;

	w->bn = malloc((sb->nruns + 1) * sizeof(*w->bn));
	w->hn = malloc((sh->nruns + 1) * sizeof(*w->hn));
	if (!w->bn || !w->hn)
		return xo_error(XO_ENOMEM, "perf: out of memory");
	if ((st = xo_perf_query_pooled(db, sb, bench, &vb, w->bn, &w->nb_runs, verb, sizeof(verb))) ||
	    (st = xo_perf_query_pooled(db, sh, bench, &vh, w->hn, &w->nh_runs, verh, sizeof(verh)))) {
		free(vb.v);
		free(vh.v);
		return st;
	}
	w->bx = vb.v;
	w->nbx = vb.n;
	w->hx = vh.v;
	w->nhx = vh.n;
	/* "changed" unless both versions are known and equal: an unknown
	 * version is never the same code (xo_perf_same_code) */
	w->src_changed = !xo_perf_same_code(verb, verh);
	w->ver_unknown = !xo_perf_version_known(verb) || !xo_perf_version_known(verh);
	w->same_code = xo_perf_same_code(verb, verh);
	if (!counts && (w->nb_runs < 2 || w->nh_runs < 2))
		w->run_noise = xo_perf_series_noise(db, ord, bench, sb->testbed_id, sb->info.id,
		                                    alpha, sh->info.commit_id);
	return XO_OK;
}

enum xo_status xo_perf_compare(struct xo_perfdb *db, const char *base, const char *head,
                               const struct xo_perf_compare_opts *o, FILE *out, bool *failed)
{
	return xo_perf_compare_tally(db, base, head, o, out, failed, NULL);
}

/* What one comparison carries from its sides to its printout (compare_*). */
struct cmp_ctx {
	const struct xo_perf_compare_opts *o;
	struct xo_perf_side *sb, *sh;
	struct compare_row *rows;
	size_t nrows, caprows;
	int count[SEC_COUNT][5]; /* slower, faster, same, lowered, unknown */
	int nmulti[SEC_COUNT];   /* series with >= 2 runs on both sides */
	int64_t only_base, only_head;
	regex_t re;
	bool have_re, busy_b, busy_h, ldiff, counts;
	const char *metric;
	char ib[8192], ih[8192];
	double cores;
	struct xo_perf_load lb, lh; /* the load bound's (verdict.c, step 7) */
	char describe[4096];
	json_t *root, *jrows;
	FILE *t; /* the text; a sink with --json */
	struct xo_perf_order ord;
};

/* The rule the verdicts below follow, in words. */
static void compare_print_rule(const struct cmp_ctx *c)
{
	const struct xo_perf_compare_opts *o = c->o;

	if (c->counts)
		fprintf(c->t,
		        "metric: instructions per call (callgrind; a deterministic count)\n"
		        "verdict: SLOWER/FASTER when every head sample differs from every base "
		        "sample by more than %.2g%% in the same direction; lowered to \"unchanged "
		        "code\" (or \"environment\") when the kernel-source hash is the same on "
		        "both sides; SAME when every pair lies within -+%.2g%%; UNKNOWN otherwise "
		        "(the samples disagree: the count is not deterministic)\n",
		        100.0 * o->threshold, 100.0 * o->threshold);
	else
	fprintf(c->t,
	        "verdict (one rule for compare, continuous, bisect, detect): SLOWER/FASTER "
	        "when Mann-Whitney p < %g and |change| > max(%.0f%%, base IQR/median, "
	        "run-to-run noise of the series once it has >= 4 runs), and with several "
	        "runs a side, the run values' change shown by Welch's t test on their logs "
	        "at p < 0.05 over the series compared; under load (a run whose slowest "
	        "tenth lies > %.0f%% above its fastest sample) on each run's faster half and "
	        "minimum, and the fastest sample must move too; beyond what the sides' "
	        "difference in other processes' CPU can explain (docs/perf.md, the load "
	        "bound); lowered to \"unchanged "
	        "code\" (or \"environment\": other testbed or load) when the benchmark's "
	        "kernel-source hash is the same on both sides; SAME when the 95%% interval "
	        "of the ratio head/base (Hodges-Lehmann, with the run values' once a side "
	        "has several runs) lies within -+%.0f%%; UNKNOWN otherwise (too close to "
	        "call: more rounds)\n",
	        o->alpha, 100.0 * o->threshold, 100.0 * o->threshold, 100.0 * o->threshold);
}

/* Every benchmark of the metric compared that both sides measured, with its
 * samples (row_load). */
static enum xo_status compare_rows_load(struct xo_perfdb *db, struct cmp_ctx *c)
{
	const struct xo_perf_compare_opts *o = c->o;
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;
	int rc;

	/* every benchmark of the metric compared both sides measured (own
	 * runs and peers alike) */
	if (xo_perf_rows_compared(db, c->ib, c->ih, c->metric, &s)) {
		st = xo_perf_query_err(db, "comparing runs");
		goto out;
	}
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW) {
		const char *name = xo_perf_query_text(s, 1);
		const char *dev = xo_perf_query_text(s, 2);
		int64_t bench = xo_sql_column_int64(s, 0);
		char devbuf[48];
		struct compare_row *w;

		if (c->have_re && regexec(&c->re, name, 0, NULL, 0))
			continue;
		if (!dev || !dev[0]) { /* older stores: the device ends the name */
			const char *slash = strrchr(name, '/');

			snprintf(devbuf, sizeof(devbuf), "%s", slash ? slash + 1 : name);
			dev = devbuf;
		}
		if (c->nrows == c->caprows) {
			size_t cap = c->caprows ? 2 * c->caprows : 64;
			struct compare_row *nr = realloc(c->rows, cap * sizeof(*nr));

			if (!nr) {
				st = xo_error(XO_ENOMEM, "perf: out of memory");
				goto out;
			}
			c->rows = nr;
			c->caprows = cap;
		}
		w = &c->rows[c->nrows++];
		memset(w, 0, sizeof(*w));
		snprintf(w->name, sizeof(w->name), "%s", name);
		snprintf(w->dev, sizeof(w->dev), "%s", dev);
		w->sec = xo_perf_section_of(dev);
		if ((st = row_load(db, &c->ord, c->sb, c->sh, bench, c->counts, o->alpha, w)))
			goto out;
		if (w->nb_runs >= 2 && w->nh_runs >= 2)
			c->nmulti[w->sec]++;
	}
	if (rc != XO_SQL_DONE) {
		st = xo_perf_query_err(db, "comparing runs");
		goto out;
	}
out:
	xo_sql_finalize(s);
	return st;
}

/* One verdict per row, lowered where the code measured is unchanged. */
static void compare_judge(struct cmp_ctx *c)
{
	const struct xo_perf_compare_opts *o = c->o;

	for (size_t i = 0; i < c->nrows; i++) {
		struct compare_row *w = &c->rows[i];

		struct xo_perf_sample_set bs = {w->bx, w->bn, w->nb_runs, w->nbx,
		                                c->lb.least >= 0 ? &c->lb : NULL};
		struct xo_perf_sample_set hs = {w->hx, w->hn, w->nh_runs, w->nhx,
		                                c->lh.least >= 0 ? &c->lh : NULL};
		struct xo_perf_rule rule = {
		    .threshold = o->threshold,
		    .alpha = o->alpha,
		    .noise = w->run_noise,
		    .family = c->nmulti[w->sec] * (o->looks > 1 ? o->looks : 1),
		    .counts = c->counts,
		    .interval = true,
		    .cores = c->cores,
		    .threads = xo_perf_bench_threads(w->dev, c->describe, c->cores),
		};

		xo_perf_verdict_judge(&bs, &hs, &rule, &w->v);
		/* say which statistic was judged when it was not every sample */
		snprintf(w->why, sizeof(w->why), "%s",
		         w->v.why[0] || !w->v.loaded
		             ? w->v.why
		             : "  [load: judged on runs' faster halves and minima]");
		if (w->same_code && (w->v.sign || !w->v.same)) {
			/* the code measured is the same, and known, on both sides: a
			 * difference, or a difference too close to call, is the
			 * machine's, never the commit's (a docs-only commit is
			 * neither SLOWER nor left UNKNOWN for bisect to skip) */
			w->word = c->sb->testbed_id != c->sh->testbed_id || c->ldiff ? "environment"
			                                                    : "unchanged code";
			snprintf(w->why, sizeof(w->why), "  [%s %+.1f%%: kernel source unchanged]",
			         w->v.sign > 0 ? "slower" : w->v.sign < 0 ? "faster" : "unclear",
			         100.0 * w->v.change);
			w->v.sign = 0;
			c->count[w->sec][3]++;
		} else if (w->v.sign) {
			w->word = w->v.sign > 0 ? "SLOWER" : "FASTER";
			c->count[w->sec][w->v.sign > 0 ? 0 : 1]++;
		} else if (w->v.same) {
			w->word = "SAME";
			c->count[w->sec][2]++;
		} else {
			/* neither a confirmed change nor a shown absence of one */
			w->word = "UNKNOWN";
			c->count[w->sec][4]++;
		}
	}
}

/* The rows section by section, as text and (--json) as rows. */
static void compare_print_rows(struct cmp_ctx *c)
{
	for (int sec = 0; sec < SEC_COUNT; sec++) {
		bool head_printed = false;

		for (size_t i = 0; i < c->nrows; i++) {
			const struct compare_row *w = &c->rows[i];
			char tb[32], th[32], ci[48];

			if (w->sec != (enum xo_perf_section)sec)
				continue;
			if (!head_printed) {
				fprintf(c->t, "\n== %s\n%-58s %12s %12s %9s %17s %9s  %s\n",
				        section_title[sec], "Benchmark", "Base", "Head", "Change",
				        "95% interval", "p-value", "Verdict");
				head_printed = true;
			}
			(c->counts ? xo_perf_fmt_count : xo_perf_fmt_time)(w->v.base, tb,
			                                                   sizeof(tb));
			(c->counts ? xo_perf_fmt_count : xo_perf_fmt_time)(w->v.head, th,
			                                                   sizeof(th));
			if (isfinite(w->v.lo) && isfinite(w->v.hi))
				snprintf(ci, sizeof(ci), "%+.1f..%+.1f%%", 100.0 * expm1(w->v.lo),
				         100.0 * expm1(w->v.hi));
			else
				snprintf(ci, sizeof(ci), "unbounded");
			if (c->counts) {
				snprintf(ci, sizeof(ci), "%+.2f..%+.2f%%", 100.0 * expm1(w->v.lo),
				         100.0 * expm1(w->v.hi));
				fprintf(c->t, "%-58s %12s %12s %+8.2f%% %17s %9s  %s%s%s\n",
				        w->name, tb, th, 100.0 * w->v.change, ci, "-", w->word,
				        src_note(w), w->why);
			} else
				fprintf(c->t, "%-58s %12s %12s %+8.1f%% %17s %9.2g  %s%s%s\n",
				        w->name, tb, th, 100.0 * w->v.change, ci, w->v.p, w->word,
				        src_note(w), w->why);
			if (c->jrows) {
				json_t *jr = json_pack(
				    "{s:s, s:s, s:f, s:f, s:f, s:f, s:s, s:b, s:s, s:I, s:I}",
				    "benchmark", w->name, "section", xo_perf_section_key[sec],
				    "base_median_s", w->v.base, "head_median_s", w->v.head,
				    "change", isfinite(w->v.change) ? w->v.change : 0.0, "p_value",
				    isfinite(w->v.p) ? w->v.p : 1.0, "verdict", w->word,
				    "source_changed", w->src_changed, "note",
				    w->why[0] ? w->why + 2 : "", "base_runs",
				    (json_int_t)w->nb_runs, "head_runs", (json_int_t)w->nh_runs);

				if (jr)
					json_object_set_new(jr, "load_robust",
					                    json_boolean(w->v.loaded));
				if (jr && !isfinite(w->v.p)) /* counts: no test */
					json_object_set_new(jr, "p_value", json_null());
				if (jr && isfinite(w->v.lo) && isfinite(w->v.hi)) {
					json_object_set_new(jr, "change_lo",
					                    json_real(expm1(w->v.lo)));
					json_object_set_new(jr, "change_hi",
					                    json_real(expm1(w->v.hi)));
				} else if (jr) {
					json_object_set_new(jr, "change_lo", json_null());
					json_object_set_new(jr, "change_hi", json_null());
				}
				if (jr)
					json_array_append_new(c->jrows, jr);
			}
		}
	}
}

/* The tallies, what one side alone measured, the testbeds and the load. */
static void compare_print_summary(struct xo_perfdb *db, struct cmp_ctx *c)
{
	int ndiff_tb = 0;

	/* what only one side measured */
	xo_perf_query_only_counts(db, c->ib, c->ih, c->metric, &c->only_base, &c->only_head);
	fprintf(c->t, "\n%d slower, %d faster, %d same", c->count[SEC_TEST][0],
	        c->count[SEC_TEST][1], c->count[SEC_TEST][2]);
	if (c->count[SEC_TEST][3])
		fprintf(c->t, ", %d lowered (kernel source unchanged)", c->count[SEC_TEST][3]);
	fprintf(c->t, ", %d unknown (too close to call)", c->count[SEC_TEST][4]);
	if (c->only_base || c->only_head)
		fprintf(c->t, " (%lld only in base, %lld only in head)", (long long)c->only_base,
		        (long long)c->only_head);
	fputc('\n', c->t);
	for (int sec = SEC_REF; sec < SEC_COUNT; sec++)
		if (c->count[sec][0] + c->count[sec][1] + c->count[sec][2] + c->count[sec][3] +
		    c->count[sec][4])
			fprintf(c->t,
			        "%s: %d slower, %d faster, %d same, %d lowered, %d unknown (not "
			        "alarms)\n",
			        xo_perf_section_key[sec], c->count[sec][0], c->count[sec][1],
			        c->count[sec][2], c->count[sec][3], c->count[sec][4]);

	fprintf(c->t, "\ntestbed:");
	for (size_t i = 0; i < XO_PERF_NFIELDS; i++) {
		if (!strcmp(c->sb->info.field[i], c->sh->info.field[i]))
			continue;
		if (!ndiff_tb++)
			fputc('\n', c->t);
		fprintf(c->t, "  %-14s base: %s\n  %-14s head: %s\n", xo_perf_testbed_fields[i],
		        c->sb->info.field[i], "", c->sh->info.field[i]);
		if (c->root) {
			json_t *d = json_object_get(c->root, "testbed_diff");

			if (!d)
				json_object_set_new(c->root, "testbed_diff", d = json_array());
			json_array_append_new(d, json_pack("{s:s, s:s, s:s}", "field",
			                                   xo_perf_testbed_fields[i], "base",
			                                   c->sb->info.field[i], "head",
			                                   c->sh->info.field[i]));
		}
	}
	if (!ndiff_tb)
		fprintf(c->t, " the same (testbed %lld: %s, BLAS %s %s, OpenCL %s)\n",
		        (long long)c->sb->testbed_id, c->sb->info.field[1], c->sb->info.field[6],
		        c->sb->info.field[8],
		        c->sb->info.field[11][0] ? c->sb->info.field[11] : "none");
	if (c->sb->load >= 0 && c->sh->load >= 0)
		fprintf(c->t,
		        "load:    highest 1-min load average: base %.2f, head %.2f (%.0f cores; "
		        "includes the recorder itself)\n",
		        c->sb->load, c->sh->load, c->cores);
	if (c->sb->others >= 0 && c->sh->others >= 0)
		fprintf(c->t,
		        "others:  other processes used up to %.2f cores during base, %.2f during "
		        "head\n",
		        c->sb->others, c->sh->others);
	if (c->busy_b || c->busy_h || c->ldiff)
		fprintf(c->t,
		        "warning: other work on the machine during %s: threaded timings (cpu, cl) "
		        "may have moved for that reason alone; record again when it is quiet\n",
		        c->busy_b && c->busy_h ? "both sides"
		        : c->busy_b         ? "the base runs"
		        : c->busy_h         ? "the head runs"
		                         : "one side more than the other");
}

/* What continuous and bisect read of the comparison. */
static void compare_tally_fill(const struct cmp_ctx *c, struct xo_perf_tally *tally)
{
	const struct xo_perf_compare_opts *o = c->o;

	memset(tally, 0, sizeof(*tally));
	tally->slower = c->count[SEC_TEST][0];
	tally->faster = c->count[SEC_TEST][1];
	tally->same = c->count[SEC_TEST][2];
	tally->lowered = c->count[SEC_TEST][3];
	tally->unknown = c->count[SEC_TEST][4];
	tally->change = NAN;
	tally->change_lo = NAN;
	for (size_t i = 0; i < c->nrows; i++) {
		const struct compare_row *w = &c->rows[i];

		/* an UNKNOWN whose interval reaches above +threshold: a
		 * slowdown is not excluded (one that reaches only down is
		 * "not slower", all bisect asks) */
		if (w->sec == SEC_TEST && w->word && !strcmp(w->word, "UNKNOWN") &&
		    !(isfinite(w->v.hi) && expm1(w->v.hi) <= o->threshold))
			tally->unknown_up++;
		/* the largest confirmed slowdown under test: what bisect names */
		if (w->sec == SEC_TEST && w->v.sign > 0 &&
		    !(fabs(w->v.change) <= fabs(tally->change))) {
			tally->change = w->v.change;
			tally->change_lo = isfinite(w->v.lo) ? expm1(w->v.lo) : NAN;
			snprintf(tally->worst, sizeof(tally->worst), "%s", w->name);
		}
	}
}

/* The JSON document of the comparison, printed on out. */
static void compare_json_done(struct cmp_ctx *c, bool failed, FILE *out)
{
	const struct xo_perf_compare_opts *o = c->o;

	json_object_set_new(c->root, "metric", json_string(c->counts ? "instructions" : "time"));
	json_object_set_new(c->root, "threshold", json_real(o->threshold));
	json_object_set_new(c->root, "alpha", json_real(o->alpha));
	json_object_set_new(c->root, "results", c->jrows);
	c->jrows = NULL;
	json_object_set_new(
	    c->root, "summary",
	    json_pack("{s:i, s:i, s:i, s:i, s:i, s:I, s:I}", "slower", c->count[SEC_TEST][0],
	              "faster", c->count[SEC_TEST][1], "same", c->count[SEC_TEST][2], "lowered",
	              c->count[SEC_TEST][3], "unknown", c->count[SEC_TEST][4], "only_base",
	              (json_int_t)c->only_base, "only_head", (json_int_t)c->only_head));
	json_object_set_new(c->root, "load_warning",
	                    json_boolean(c->busy_b || c->busy_h || c->ldiff));
	json_object_set_new(c->root, "regression", json_boolean(failed));
	xo_perf_json_print(c->root, out);
}

enum xo_status xo_perf_compare_tally(struct xo_perfdb *db, const char *base, const char *head,
                                     const struct xo_perf_compare_opts *o, FILE *out,
                                     bool *failed, struct xo_perf_tally *tally)
{
	struct cmp_ctx *c = calloc(1, sizeof(*c));
	struct xo_perf_side *sb = NULL, *sh = NULL;
	enum xo_status st;

	*failed = false;
	if (!c)
		return xo_error(XO_ENOMEM, "perf: out of memory");
	c->o = o;
	c->t = out;
	c->counts = xo_perf_is_count_metric(o->metric);
	c->metric = c->counts ? "instructions" : "time";
	sb = c->sb = malloc(sizeof(*sb));
	sh = c->sh = malloc(sizeof(*sh));
	if (!sb || !sh) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out;
	}
	/* base first (its error first); again on the head's testbed when it has runs there */
	if ((st = side_resolve(db, base, o->testbed, o->after_run, sb)) ||
	    (st = side_resolve(db, head, o->testbed, o->after_run, sh)) ||
	    (sb->commit_id && sb->testbed_id != sh->testbed_id &&
	     (st = side_resolve(db, base, sh->testbed_id, o->after_run, sb))))
		goto out;
	/* --testbed: both sides on it (a commit prefers its runs there; without
	 * any, or for a run:N of another testbed, the picker was not met) */
	if (o->testbed && (sb->testbed_id != o->testbed || sh->testbed_id != o->testbed)) {
		st = xo_error(XO_EINVAL, "%s has no complete run on testbed %lld (--testbed)",
		              sb->testbed_id != o->testbed ? (base ? base : "base")
		                                           : (head ? head : "the latest run"),
		              (long long)o->testbed);
		goto out;
	}
	side_ids(sb, c->ib, sizeof(c->ib));
	side_ids(sh, c->ih, sizeof(c->ih));
	if ((st = xo_perf_query_has_metric(db, "base", base, c->ib, c->metric)) ||
	    (st = xo_perf_query_has_metric(db, "head", head, c->ih, c->metric)))
		goto out;
	if (o->filter) {
		if (regcomp(&c->re, o->filter, REG_EXTENDED | REG_NOSUB)) {
			st = xo_error(XO_EINVAL, "--filter '%s' is not a valid regex", o->filter);
			goto out;
		}
		c->have_re = true;
	}
	if (o->json) {
		c->root = json_object();
		c->jrows = json_array();
		if (!c->root || !c->jrows || !(c->t = xo_perf_text_out(true, out))) {
			c->t = out;
			st = xo_error(XO_ENOMEM, "perf: out of memory");
			goto out;
		}
		json_object_set_new(c->root, "base", json_object());
		json_object_set_new(c->root, "head", json_object());
	}
	print_side(c->t, "base", sb, c->root ? json_object_get(c->root, "base") : NULL);
	print_side(c->t, "head", sh, c->root ? json_object_get(c->root, "head") : NULL);
	compare_print_rule(c);

	c->cores = atof(sb->info.field[2]) > 0 ? atof(sb->info.field[2]) : 1.0;
	c->lb = (struct xo_perf_load){sb->others_lo};
	c->lh = (struct xo_perf_load){sh->others_lo};
	xo_perf_query_testbed_describe(db, sh->testbed_id, c->describe, sizeof(c->describe));
	c->busy_b = side_busy(sb, c->cores);
	c->busy_h = side_busy(sh, c->cores);
	c->ldiff = load_differs(sb, sh, c->cores);

	if ((st = compare_rows_load(db, c)))
		goto out;
	compare_judge(c);
	compare_print_rows(c);
	compare_print_summary(db, c);
	*failed = c->count[SEC_TEST][0] > 0;
	if (tally)
		compare_tally_fill(c, tally);
	if (c->root)
		compare_json_done(c, *failed, out);

out:
	xo_perf_order_free(&c->ord);
	xo_perf_text_done(c->t, out);
	json_decref(c->root);
	json_decref(c->jrows);
	if (c->have_re)
		regfree(&c->re);
	for (size_t i = 0; i < c->nrows; i++) {
		free(c->rows[i].bx);
		free(c->rows[i].hx);
		free(c->rows[i].bn);
		free(c->rows[i].hn);
	}
	free(c->rows);
	free(sb);
	free(sh);
	free(c);
	return st;
}
