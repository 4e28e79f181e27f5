/*
 * analyze.c - verdicts over stored runs: `xo perf compare` (two runs,
 * Google Benchmark compare.py style, plus what differs between their
 * testbeds) and `xo perf detect` (asv-style step detection over each
 * (benchmark, testbed) history, written to the changes table), and the state
 * changes a person makes (accept, ignore, fix).
 *
 * Whether a change is real is decided by the one rule of verdict.c
 * (xo_perf_verdict_judge), for compare and detect alike; this file gathers
 * the samples it judges and the run-to-run noise of a series (series_noise
 * below), and lowers a change whose kernel source is the same on both sides.
 */
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include "sql.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "perfdb.h"
#include "jsonout.h"
#include "proc.h"
#include "verdict.h"

/* A text column as a string, "" for NULL: the store is outside input (a
 * crafted or damaged file may hold NULL where xo writes text), and a NULL
 * must never reach strcmp, regexec or printf's %s. */
static const char *col_str(struct xo_sql_stmt *s, int i)
{
	const char *t = xo_sql_column_text(s, i);

	return t ? (const char *)t : "";
}

static enum xo_status sql_err(struct xo_perfdb *db, const char *what)
{
	return xo_error(XO_EDB, "%s: %s", what, xo_sql_errmsg(xo_perfdb_sql(db)));
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
	struct xo_sql_stmt *s = NULL;
	int rc;

	out->n = 0;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT wall_s FROM samples WHERE result_id = ? ORDER BY idx", &s))
		return sql_err(db, "reading samples");
	xo_sql_bind_int64(s, 1, result_id);
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW)
		if (!vec_push(out, xo_sql_column_double(s, 0))) {
			xo_sql_finalize(s);
			return xo_error(XO_ENOMEM, "perf: out of memory");
		}
	xo_sql_finalize(s);
	return rc == XO_SQL_DONE ? XO_OK : sql_err(db, "reading samples");
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

/* "1.234 M" instructions */
static void fmt_count(double c, char *buf, size_t size)
{
	if (!isfinite(c))
		snprintf(buf, size, "-");
	else if (c < 1e4)
		snprintf(buf, size, "%.0f", c);
	else if (c < 1e6)
		snprintf(buf, size, "%.2f k", c / 1e3);
	else if (c < 1e9)
		snprintf(buf, size, "%.3f M", c / 1e6);
	else
		snprintf(buf, size, "%.3f G", c / 1e9);
}

static bool is_count_metric(const char *metric)
{
	return metric && !strcmp(metric, "instructions");
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

/* Where a stored row stands in history: the commit's place in the graph
 * (order.c), then its run. Every row type sorted into history order begins
 * with one, so one comparator sorts them all. */
struct hist_key {
	int64_t rank, run;
};

static int hist_key_cmp(const void *pa, const void *pb)
{
	const struct hist_key *a = pa, *b = pb;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->run < b->run ? -1 : a->run > b->run;
}

/* A stored value placed in history order. */
struct placed {
	struct hist_key k;
	double v;
};

/* The history order of the store, read on first use (a compare that never
 * needs it never reads the commits). NULL when it cannot be read. */
static const struct xo_perf_order *order_get(struct xo_perfdb *db, struct xo_perf_order *ord)
{
	if (!ord->loaded && xo_perf_order_load(db, ord) != XO_OK)
		return NULL;
	return ord;
}

/*
 * The run-to-run noise of a series, as the relative change two runs of an
 * unchanged tree stay within at the two-sided level alpha. The samples of one
 * run share that run's offset (placement in memory, frequency, the
 * hypervisor), which the U test on the samples cannot see: two runs of an
 * unchanged tree differ "significantly" as soon as their offsets differ. With
 * k >= 4 complete runs of the benchmark on the base's testbed up to the base
 * run (3 successive differences; fewer give no usable spread), in history
 * order (the commit graph's, order.c, then run: the runs of one commit side
 * by side, so an A/B/A/B experiment is one step, not three), the log run
 * medians m_i give sigma = 1.4826 median |m_i - m_(i-1)| / sqrt 2 (the robust
 * sd of a difference over sqrt 2; a real step in the history moves only one
 * difference); a difference of two runs has sd sqrt 2 sigma, so the bar is
 * expm1(z(alpha) sqrt 2 sigma), z(0.002) = 3.09. 0 when not known.
 */
static double series_noise(struct xo_perfdb *db, struct xo_perf_order *ord, int64_t bench,
                           int64_t testbed, int64_t upto_run, double alpha, int64_t skip_commit)
{
	const struct xo_perf_order *o = order_get(db, ord);
	struct xo_sql_stmt *s = NULL;
	struct placed *m = NULL;
	double *d = NULL, bar = 0.0;
	size_t n = 0, cap = 0, k = 0;

	if (!o || xo_sql_prepare(xo_perfdb_sql(db),
	                         "SELECT ru.commit_id, ru.id, res.median FROM results res"
	                         " JOIN runs ru ON ru.id = res.run_id"
	                         " WHERE res.benchmark_id = ? AND ru.testbed_id = ? AND ru.id <= ?"
	                         " AND ru.commit_id != ? AND ru.state = 'complete'"
	                         " AND res.median > 0", &s))
		return 0.0;
	xo_sql_bind_int64(s, 1, bench);
	xo_sql_bind_int64(s, 2, testbed);
	xo_sql_bind_int64(s, 3, upto_run);
	xo_sql_bind_int64(s, 4, skip_commit);
	while (xo_sql_step(s) == XO_SQL_ROW) {
		if (!xo_perf_order_main(o, xo_sql_column_int64(s, 0)))
			continue; /* a side branch is not in the history */
		if (n == cap) {
			size_t c2 = cap ? 2 * cap : 64;
			struct placed *p = realloc(m, c2 * sizeof(*p));

			if (!p)
				break;
			m = p;
			cap = c2;
		}
		m[n++] = (struct placed){{xo_perf_order_rank(o, xo_sql_column_int64(s, 0)),
		                          xo_sql_column_int64(s, 1)},
		                         log(xo_sql_column_double(s, 2))};
	}
	xo_sql_finalize(s);
	if (n >= 4 && (d = malloc(n * sizeof(*d)))) {
		qsort(m, n, sizeof(*m), hist_key_cmp);
		for (size_t i = 1; i < n; i++)
			d[k++] = fabs(m[i].v - m[i - 1].v);
		bar = expm1(z_two_sided(alpha) * sqrt(2.0) * 1.4826 * xo_perf_median(d, k) /
		            sqrt(2.0));
	}
	free(d);
	free(m);
	return bar;
}

static const char *const testbed_fields[] = {
    "hostname",  "cpu_model",    "cores",         "os",          "compiler",    "cflags",
    "blas_name", "blas_version", "blas_coretype", "blas_config", "cl_platform", "cl_device",
    "cl_driver", "env",
};
#define NFIELDS (sizeof(testbed_fields) / sizeof(testbed_fields[0]))

struct run_info {
	int64_t id, testbed_id, started, commit_id;
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
	                 " coalesce(r.others_cpu, -1), r.commit_id";
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;

	for (size_t i = 0; i < NFIELDS; i++)
		snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql), ", t.%s", testbed_fields[i]);
	snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql),
	         " FROM runs r JOIN commits c ON c.id = r.commit_id"
	         " JOIN testbeds t ON t.id = r.testbed_id WHERE r.id = ?");
	if (xo_sql_prepare(xo_perfdb_sql(db), sql, &s))
		return sql_err(db, "reading a run");
	xo_sql_bind_int64(s, 1, id);
	if (xo_sql_step(s) != XO_SQL_ROW) {
		st = xo_error(XO_EINVAL, "no run %lld", (long long)id);
		goto out;
	}
	memset(r, 0, sizeof(*r));
	r->id = id;
	snprintf(r->sha, sizeof(r->sha), "%s", col_str(s, 0));
	snprintf(r->subject, sizeof(r->subject), "%s",
	         xo_sql_column_text(s, 1) ? col_str(s, 1) : "");
	r->dirty = xo_sql_column_int(s, 2);
	r->started = xo_sql_column_int64(s, 3);
	snprintf(r->note, sizeof(r->note), "%s",
	         xo_sql_column_text(s, 4) ? col_str(s, 4) : "");
	r->testbed_id = xo_sql_column_int64(s, 5);
	r->load_start = xo_sql_column_double(s, 6);
	r->load_end = xo_sql_column_double(s, 7);
	r->others = xo_sql_column_double(s, 8);
	r->commit_id = xo_sql_column_int64(s, 9);
	for (size_t i = 0; i < NFIELDS; i++) {
		const char *t = xo_sql_column_text(s, 10 + (int)i);

		snprintf(r->field[i], sizeof(r->field[i]), "%s", t ? (const char *)t : "");
	}
out:
	xo_sql_finalize(s);
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

/*
 * One side of a comparison. "run:N" is that run alone. Anything else names a
 * commit (a sha prefix the store knows, or any git revision of the source
 * tree, resolved with `git rev-parse --verify REV^{commit}`), and the side is
 * every complete run recorded at that commit on one testbed: the runs of our
 * own devices (`record`, possibly several, e.g. the rounds of `perf
 * continuous`) pooled, and the peers' imports kept apart.
 * The testbed is the head's where the base has runs there too.
 */
#define MAX_SIDE_RUNS 256

struct side {
	int64_t commit_id;          /* 0 for a single run:N */
	int64_t after_run;          /* a commit pools only runs with a larger id */
	int64_t testbed_id;
	int64_t runs[MAX_SIDE_RUNS]; /* ascending ids */
	bool peer[MAX_SIDE_RUNS];    /* the run measured only peers (an import) */
	size_t nruns;
	double others; /* most CPU other processes used over the own runs, -1 unknown */
	double others_lo; /* the least of it, -1 unknown */
	double load;   /* highest 1-minute load average seen, -1 unknown */
	struct run_info info; /* the latest own run of the side */
};

/* A run measured one of our devices (ref, cpu, cl...) rather than a peer. */
#define OWN_RUN_SQL                                                                                \
	"EXISTS (SELECT 1 FROM results res JOIN benchmarks b ON b.id = res.benchmark_id"           \
	" WHERE res.run_id = ru.id AND (b.device IN ('ref','cpu') OR b.device LIKE 'cl%'))"

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

static enum xo_status side_fill(struct xo_perfdb *db, struct side *sd)
{
	struct xo_sql *h = xo_perfdb_sql(db);
	struct xo_sql_stmt *s = NULL;
	enum xo_status st;
	int64_t latest_own = 0;

	if (sd->commit_id) {
		if (xo_sql_prepare(h,
		                       "SELECT ru.id, " OWN_RUN_SQL " FROM runs ru"
		                       " WHERE ru.commit_id = ? AND ru.testbed_id = ?"
		                       " AND ru.state = 'complete' AND ru.id > ? ORDER BY ru.id", &s))
			return sql_err(db, "finding the runs of a commit");
		xo_sql_bind_int64(s, 1, sd->commit_id);
		xo_sql_bind_int64(s, 2, sd->testbed_id);
		xo_sql_bind_int64(s, 3, sd->after_run);
		while (xo_sql_step(s) == XO_SQL_ROW && sd->nruns < MAX_SIDE_RUNS) {
			sd->runs[sd->nruns] = xo_sql_column_int64(s, 0);
			sd->peer[sd->nruns] = !xo_sql_column_int(s, 1);
			if (!sd->peer[sd->nruns])
				latest_own = sd->runs[sd->nruns];
			sd->nruns++;
		}
		xo_sql_finalize(s);
		if (!sd->nruns)
			return xo_error(XO_EINVAL, "no complete run of the commit");
	}
	if (!latest_own)
		latest_own = sd->runs[sd->nruns - 1];
	if ((st = load_run(db, latest_own, &sd->info)))
		return st;
	sd->others = sd->others_lo = sd->load = -1.0;
	for (size_t i = 0; i < sd->nruns; i++) {
		struct run_info *r = malloc(sizeof(*r));

		if (!r)
			return xo_error(XO_ENOMEM, "perf: out of memory");
		if (!sd->peer[i] && !load_run(db, sd->runs[i], r)) {
			sd->others = fmax(sd->others, r->others);
			if (r->others >= 0 && (sd->others_lo < 0 || r->others < sd->others_lo))
				sd->others_lo = r->others;
			sd->load = fmax(sd->load, fmax(r->load_start, r->load_end));
		}
		free(r);
	}
	return XO_OK;
}

static enum xo_status side_resolve(struct xo_perfdb *db, const char *spec, int64_t want_testbed,
                                   int64_t after_run, struct side *sd)
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
		if ((st = side_fill(db, sd)))
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
			return xo_error(XO_EINVAL, "'%s': not run:N, a recorded commit or a git revision",
			                spec);
		if (xo_perf_resolve_run(db, sha, &run_id))
			return xo_error(XO_EINVAL,
			                "'%s' is commit %.12s, which has no complete run in the store "
			                "(record it first, or use `xo perf continuous`)",
			                spec, sha);
	}
	/* the commit row of that run (a dirty tree is its own row), and the
	 * testbed: the wanted one when the commit has own runs there */
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT ru.commit_id, ru.testbed_id FROM runs ru"
	                       " WHERE ru.commit_id IN (SELECT c2.id FROM commits c2 WHERE c2.sha ="
	                       " (SELECT c.sha FROM runs r JOIN commits c ON c.id = r.commit_id"
	                       " WHERE r.id = ?1)) AND ru.state = 'complete'"
	                       " ORDER BY " OWN_RUN_SQL " DESC, ru.testbed_id = ?2 DESC, ru.id DESC"
	                       " LIMIT 1", &s))
		return sql_err(db, "finding a commit");
	xo_sql_bind_int64(s, 1, run_id);
	xo_sql_bind_int64(s, 2, want_testbed);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		sd->commit_id = xo_sql_column_int64(s, 0);
		sd->testbed_id = xo_sql_column_int64(s, 1);
	}
	xo_sql_finalize(s);
	if (!sd->commit_id)
		return xo_error(XO_EINVAL, "'%s': no complete run", spec ? spec : "latest");
	sd->after_run = after_run;
	return side_fill(db, sd);
}

/* "0,3,5,7": the side's runs, own and peers, for an IN (...) list (0 is no run). */
static void side_ids(const struct side *sd, char *buf, size_t size)
{
	snprintf(buf, size, "0");
	for (size_t i = 0; i < sd->nruns; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), ",%lld", (long long)sd->runs[i]);
}

static void print_side(FILE *out, const char *what, const struct side *sd, json_t *js)
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

/*
 * The samples of benchmark bench over the side's runs (own and peer: a
 * benchmark belongs to one or the other), run after run, in all, and the
 * number each run gave in per_run; the kernel-source version of the latest
 * run measuring it in version.
 */
static enum xo_status load_pooled(struct xo_perfdb *db, const struct side *sd, int64_t bench,
                                  struct vec *all, size_t *per_run, size_t *nruns,
                                  char *version, size_t vsize)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;

	all->n = 0;
	*nruns = 0;
	version[0] = '\0';
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT id, version FROM results WHERE benchmark_id = ? AND run_id = ?", &s))
		return sql_err(db, "reading results");
	for (size_t i = 0; i < sd->nruns; i++) {
		xo_sql_bind_int64(s, 1, bench);
		xo_sql_bind_int64(s, 2, sd->runs[i]);
		if (xo_sql_step(s) == XO_SQL_ROW) {
			const char *v = xo_sql_column_text(s, 1);
			size_t before = all->n;
			struct vec one = {0};

			snprintf(version, vsize, "%s", v ? (const char *)v : "");
			if ((st = load_samples(db, xo_sql_column_int64(s, 0), &one)))
				break;
			for (size_t k = 0; k < one.n; k++)
				if (!vec_push(all, one.v[k])) {
					free(one.v);
					st = xo_error(XO_ENOMEM, "perf: out of memory");
					goto out;
				}
			free(one.v);
			if (all->n > before)
				per_run[(*nruns)++] = all->n - before;
		}
		xo_sql_reset(s);
	}
out:
	xo_sql_finalize(s);
	return st;
}

enum compare_section { SEC_TEST, SEC_REF, SEC_PEER, SEC_COUNT };

static const char *const section_title[SEC_COUNT] = {
    "backends under test (cpu, cl)",
    "reference backend (ref): the oracle, reported apart, never an alarm",
    "peers (other frameworks' imported timings): reported apart, never an alarm",
};
static const char *const section_key[SEC_COUNT] = {"test", "ref", "peer"};

static enum compare_section section_of(const char *device)
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
	enum compare_section sec;
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

/* The testbed's description of its devices ("" when not there). */
static void testbed_describe(struct xo_perfdb *db, int64_t testbed, char *buf, size_t size)
{
	struct xo_sql_stmt *s = NULL;

	buf[0] = '\0';
	if (xo_sql_prepare(xo_perfdb_sql(db), "SELECT describe FROM testbeds WHERE id = ?", &s))
		return;
	xo_sql_bind_int64(s, 1, testbed);
	if (xo_sql_step(s) == XO_SQL_ROW && xo_sql_column_text(s, 0))
		snprintf(buf, size, "%s", col_str(s, 0));
	xo_sql_finalize(s);
}

static bool side_busy(const struct side *sd, double cores)
{
	if (sd->others >= 0)
		return sd->others > 0.1 * cores;
	return sd->load > 0.5 * cores + 1.0;
}

static bool load_differs(const struct side *b, const struct side *h, double cores)
{
	if (b->others >= 0 && h->others >= 0)
		return fabs(b->others - h->others) > 0.1 * cores;
	return side_busy(b, cores) != side_busy(h, cores);
}

/*
 * Each side must hold series of the metric compared: runs recorded with
 * --metric instructions only, compared for time, have nothing to compare,
 * and "0 slower, 0 faster" would read as a pass. XO_EINVAL naming the side
 * and what it holds instead.
 */
static enum xo_status side_has_metric(struct xo_perfdb *db, const char *what, const char *spec,
                                      const char *ids, const char *metric)
{
	struct xo_sql_stmt *s = NULL;
	char sql[9000];
	int64_t mine = 0, other = 0;

	snprintf(sql, sizeof(sql),
	         "SELECT count(CASE WHEN b.metric = ? THEN 1 END),"
	         " count(CASE WHEN b.metric != ? THEN 1 END) FROM results r"
	         " JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.run_id IN (%s)",
	         ids);
	if (xo_sql_prepare(xo_perfdb_sql(db), sql, &s))
		return sql_err(db, "reading the metrics of a run");
	xo_sql_bind_text(s, 1, metric);
	xo_sql_bind_text(s, 2, metric);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		mine = xo_sql_column_int64(s, 0);
		other = xo_sql_column_int64(s, 1);
	}
	xo_sql_finalize(s);
	if (mine || !other)
		return XO_OK;
	return xo_error(XO_EINVAL,
	                "%s %s holds no %s series, only %s: compare --metric %s (or record "
	                "--metric %s)",
	                what, spec ? spec : "(the latest run)", metric,
	                strcmp(metric, "time") ? "times" : "instruction counts",
	                strcmp(metric, "time") ? "time" : "instructions", metric);
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
                               const struct side *sb, const struct side *sh, int64_t bench,
                               bool counts, double alpha, struct compare_row *w)
{
	struct vec vb = {0}, vh = {0};
	char verb[24], verh[24];
	enum xo_status st;

	w->bn = malloc((sb->nruns + 1) * sizeof(*w->bn));
	w->hn = malloc((sh->nruns + 1) * sizeof(*w->hn));
	if (!w->bn || !w->hn)
		return xo_error(XO_ENOMEM, "perf: out of memory");
	if ((st = load_pooled(db, sb, bench, &vb, w->bn, &w->nb_runs, verb, sizeof(verb))) ||
	    (st = load_pooled(db, sh, bench, &vh, w->hn, &w->nh_runs, verh, sizeof(verh)))) {
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
		w->run_noise = series_noise(db, ord, bench, sb->testbed_id, sb->info.id, alpha,
		                            sh->info.commit_id);
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
	struct side *sb, *sh;
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
	char sql[17000];
	int rc;

	/* every benchmark of the metric compared both sides measured (own
	 * runs and peers alike) */
	snprintf(sql, sizeof(sql),
	         "SELECT b.id, b.name, b.device, b.metric FROM benchmarks b"
	         " WHERE b.metric = ? AND EXISTS (SELECT 1 FROM results r WHERE"
	         " r.benchmark_id = b.id AND r.run_id IN (%s)) AND EXISTS (SELECT 1 FROM"
	         " results r WHERE r.benchmark_id = b.id AND r.run_id IN (%s)) ORDER BY b.name",
	         c->ib, c->ih);
	if (xo_sql_prepare(xo_perfdb_sql(db), sql, &s)) {
		st = sql_err(db, "comparing runs");
		goto out;
	}
	xo_sql_bind_text(s, 1, c->metric);
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW) {
		const char *name = col_str(s, 1);
		const char *dev = col_str(s, 2);
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
		w->sec = section_of(dev);
		if ((st = row_load(db, &c->ord, c->sb, c->sh, bench, c->counts, o->alpha, w)))
			goto out;
		if (w->nb_runs >= 2 && w->nh_runs >= 2)
			c->nmulti[w->sec]++;
	}
	if (rc != XO_SQL_DONE) {
		st = sql_err(db, "comparing runs");
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
		         w->v.why[0] || !w->v.loaded ? w->v.why
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

			if (w->sec != (enum compare_section)sec)
				continue;
			if (!head_printed) {
				fprintf(c->t, "\n== %s\n%-58s %12s %12s %9s %17s %9s  %s\n",
				        section_title[sec], "Benchmark", "Base", "Head", "Change",
				        "95% interval", "p-value", "Verdict");
				head_printed = true;
			}
			(c->counts ? fmt_count : fmt_time)(w->v.base, tb, sizeof(tb));
			(c->counts ? fmt_count : fmt_time)(w->v.head, th, sizeof(th));
			if (isfinite(w->v.lo) && isfinite(w->v.hi))
				snprintf(ci, sizeof(ci), "%+.1f..%+.1f%%", 100.0 * expm1(w->v.lo),
				         100.0 * expm1(w->v.hi));
			else
				snprintf(ci, sizeof(ci), "unbounded");
			if (c->counts) {
				snprintf(ci, sizeof(ci), "%+.2f..%+.2f%%", 100.0 * expm1(w->v.lo),
				         100.0 * expm1(w->v.hi));
				fprintf(c->t, "%-58s %12s %12s %+8.2f%% %17s %9s  %s%s%s\n", w->name, tb,
				        th, 100.0 * w->v.change, ci, "-", w->word,
				        src_note(w), w->why);
			} else
			fprintf(c->t, "%-58s %12s %12s %+8.1f%% %17s %9.2g  %s%s%s\n", w->name, tb, th,
			        100.0 * w->v.change, ci, w->v.p, w->word,
			        src_note(w), w->why);
			if (c->jrows) {
				json_t *jr = json_pack(
				    "{s:s, s:s, s:f, s:f, s:f, s:f, s:s, s:b, s:s, s:I, s:I}", "benchmark",
				    w->name, "section", section_key[sec], "base_median_s", w->v.base,
				    "head_median_s", w->v.head, "change",
				    isfinite(w->v.change) ? w->v.change : 0.0, "p_value",
				    isfinite(w->v.p) ? w->v.p : 1.0,
				    "verdict", w->word, "source_changed", w->src_changed, "note",
				    w->why[0] ? w->why + 2 : "", "base_runs", (json_int_t)w->nb_runs,
				    "head_runs", (json_int_t)w->nh_runs);

				if (jr)
					json_object_set_new(jr, "load_robust", json_boolean(w->v.loaded));
				if (jr && !isfinite(w->v.p)) /* counts: no test */
					json_object_set_new(jr, "p_value", json_null());
				if (jr && isfinite(w->v.lo) && isfinite(w->v.hi)) {
					json_object_set_new(jr, "change_lo", json_real(expm1(w->v.lo)));
					json_object_set_new(jr, "change_hi", json_real(expm1(w->v.hi)));
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
	struct xo_sql_stmt *s = NULL;
	int ndiff_tb = 0;
	char sql[17000];

	/* what only one side measured */
	snprintf(sql, sizeof(sql),
	         "SELECT (SELECT count(DISTINCT benchmark_id) FROM results WHERE run_id IN (%s) AND"
	         " benchmark_id NOT IN (SELECT benchmark_id FROM results WHERE run_id IN (%s))"
	         " AND benchmark_id IN (SELECT id FROM benchmarks WHERE metric = ?1)),"
	         " (SELECT count(DISTINCT benchmark_id) FROM results WHERE run_id IN (%s) AND"
	         " benchmark_id NOT IN (SELECT benchmark_id FROM results WHERE run_id IN (%s))"
	         " AND benchmark_id IN (SELECT id FROM benchmarks WHERE metric = ?1))",
	         c->ib, c->ih, c->ih, c->ib);
	if (xo_sql_prepare(xo_perfdb_sql(db), sql, &s) == XO_SQL_OK &&
	    (xo_sql_bind_text(s, 1, c->metric), xo_sql_step(s) == XO_SQL_ROW)) {
		c->only_base = xo_sql_column_int64(s, 0);
		c->only_head = xo_sql_column_int64(s, 1);
	}
	xo_sql_finalize(s);
	s = NULL;
	fprintf(c->t, "\n%d slower, %d faster, %d same", c->count[SEC_TEST][0], c->count[SEC_TEST][1],
	        c->count[SEC_TEST][2]);
	if (c->count[SEC_TEST][3])
		fprintf(c->t, ", %d lowered (kernel source unchanged)", c->count[SEC_TEST][3]);
	fprintf(c->t, ", %d unknown (too close to call)", c->count[SEC_TEST][4]);
	if (c->only_base || c->only_head)
		fprintf(c->t, " (%lld only in base, %lld only in head)", (long long)c->only_base,
		        (long long)c->only_head);
	fputc('\n', c->t);
	for (int sec = SEC_REF; sec < SEC_COUNT; sec++)
		if (c->count[sec][0] + c->count[sec][1] + c->count[sec][2] + c->count[sec][3] + c->count[sec][4])
			fprintf(c->t,
			        "%s: %d slower, %d faster, %d same, %d lowered, %d unknown (not "
			        "alarms)\n",
			        section_key[sec], c->count[sec][0], c->count[sec][1], c->count[sec][2],
			        c->count[sec][3], c->count[sec][4]);

	fprintf(c->t, "\ntestbed:");
	for (size_t i = 0; i < NFIELDS; i++) {
		if (!strcmp(c->sb->info.field[i], c->sh->info.field[i]))
			continue;
		if (!ndiff_tb++)
			fputc('\n', c->t);
		fprintf(c->t, "  %-14s base: %s\n  %-14s head: %s\n", testbed_fields[i],
		        c->sb->info.field[i], "", c->sh->info.field[i]);
		if (c->root) {
			json_t *d = json_object_get(c->root, "testbed_diff");

			if (!d)
				json_object_set_new(c->root, "testbed_diff", d = json_array());
			json_array_append_new(d, json_pack("{s:s, s:s, s:s}", "field",
			                                   testbed_fields[i], "base", c->sb->info.field[i],
			                                   "head", c->sh->info.field[i]));
		}
	}
	if (!ndiff_tb)
		fprintf(c->t, " the same (testbed %lld: %s, BLAS %s %s, OpenCL %s)\n",
		        (long long)c->sb->testbed_id, c->sb->info.field[1], c->sb->info.field[6],
		        c->sb->info.field[8], c->sb->info.field[11][0] ? c->sb->info.field[11] : "none");
	if (c->sb->load >= 0 && c->sh->load >= 0)
		fprintf(c->t,
		        "load:    highest 1-min load average: base %.2f, head %.2f (%.0f cores; "
		        "includes the recorder itself)\n",
		        c->sb->load, c->sh->load, c->cores);
	if (c->sb->others >= 0 && c->sh->others >= 0)
		fprintf(c->t, "others:  other processes used up to %.2f cores during base, %.2f during "
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
	json_object_set_new(c->root, "load_warning", json_boolean(c->busy_b || c->busy_h || c->ldiff));
	json_object_set_new(c->root, "regression", json_boolean(failed));
	xo_perf_json_print(c->root, out);
}

enum xo_status xo_perf_compare_tally(struct xo_perfdb *db, const char *base, const char *head,
                                     const struct xo_perf_compare_opts *o, FILE *out,
                                     bool *failed, struct xo_perf_tally *tally)
{
	struct cmp_ctx *c = calloc(1, sizeof(*c));
	struct side *sb = NULL, *sh = NULL;
	enum xo_status st;

	*failed = false;
	if (!c)
		return xo_error(XO_ENOMEM, "perf: out of memory");
	c->o = o;
	c->t = out;
	c->counts = is_count_metric(o->metric);
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
	if ((st = side_has_metric(db, "base", base, c->ib, c->metric)) ||
	    (st = side_has_metric(db, "head", head, c->ih, c->metric)))
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
	testbed_describe(db, sh->testbed_id, c->describe, sizeof(c->describe));
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

/* ---- detect -------------------------------------------------------------------- */

struct point {
	int64_t commit_id, rank; /* rank: the commit's place in history (order.c) */
	size_t first, n;         /* samples[first .. first+n) of the series */
	double y;                /* median */
	double se;               /* standard error of the median, from the IQR */
	uint64_t ver;            /* hash of the kernel-source version of the latest run */
	int64_t ver_run;         /* that run; 0 before any */
	bool ver_known;          /* the version was derived ("" is not) */
	struct xo_perf_load load; /* the least of its runs' others_cpu (< 0:
	                             unknown); set with the raw samples */
};

/* One stored sample as read, before it is put in history order. */
struct srow {
	struct hist_key k;
	int64_t commit;
	double v;
	double others; /* its run's runs.others_cpu, -1 unknown */
};

struct series {
	struct vec samples;
	struct point *pt;
	size_t npt, cap;
	struct srow *rows;
	size_t caprows;
};

/* One stored result as read, before it is put in history order. */
struct rrow {
	struct hist_key k;
	int64_t commit, n;
	double med, q1, q3;
	bool summary; /* median, quartiles and n were stored */
	bool known;   /* a version was derived ("" is not) */
	uint64_t ver;
};


/*
 * The points of one (benchmark, testbed) history from its results: one per
 * commit, in history order (the commit graph's: order.c), each with the
 * kernel-source version of its latest run, and its median and standard
 * error from the stored summary when the commit has one run with one (the
 * store computes it from the same samples with xo_perf_summarize, so it is
 * what the samples give). *need_samples when some commit pools several runs
 * or lacks a summary: then only the samples tell.
 */
static enum xo_status load_points(struct xo_perfdb *db, const struct xo_perf_order *ord,
                                  int64_t bench, int64_t testbed, struct series *se,
                                  bool *need_samples)
{
	struct xo_sql_stmt *s = NULL;
	struct rrow *r = NULL;
	size_t nr = 0, cap = 0;
	enum xo_status st = XO_OK;
	int rc;

	se->samples.n = 0;
	se->npt = 0;
	*need_samples = false;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT ru.commit_id, ru.id, res.version, res.median, res.q1, res.q3,"
	                   " res.n, res.median IS NOT NULL AND res.q1 IS NOT NULL AND"
	                   " res.q3 IS NOT NULL AND res.n > 0"
	                   " FROM results res JOIN runs ru ON ru.id = res.run_id"
	                   " WHERE res.benchmark_id = ?1 AND ru.testbed_id = ?2"
	                   " AND ru.state = 'complete'", &s))
		return sql_err(db, "reading a history");
	xo_sql_bind_int64(s, 1, bench);
	xo_sql_bind_int64(s, 2, testbed);
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW) {
		const char *v = col_str(s, 2);

		if (nr == cap) {
			size_t c2 = cap ? 2 * cap : 256;
			struct rrow *p = realloc(r, c2 * sizeof(*p));

			if (!p) {
				st = xo_error(XO_ENOMEM, "perf: out of memory");
				goto out;
			}
			r = p;
			cap = c2;
		}
		r[nr].commit = xo_sql_column_int64(s, 0);
		if (!xo_perf_order_main(ord, r[nr].commit))
			continue; /* a side branch: compared against its base only */
		r[nr].k.rank = xo_perf_order_rank(ord, r[nr].commit);
		r[nr].k.run = xo_sql_column_int64(s, 1);
		r[nr].known = xo_perf_version_known(v);
		r[nr].ver = xo_perf_fnv(0xcbf29ce484222325ULL, v, strlen(v));
		r[nr].med = xo_sql_column_double(s, 3);
		r[nr].q1 = xo_sql_column_double(s, 4);
		r[nr].q3 = xo_sql_column_double(s, 5);
		r[nr].n = xo_sql_column_int64(s, 6);
		r[nr].summary = xo_sql_column_int(s, 7) != 0;
		nr++;
	}
	if (rc != XO_SQL_DONE) {
		st = sql_err(db, "reading a history");
		goto out;
	}
	if (nr)
		qsort(r, nr, sizeof(*r), hist_key_cmp);
	for (size_t i = 0; i < nr; i++) {
		struct point *p;

		if (se->npt && se->pt[se->npt - 1].commit_id == r[i].commit) {
			*need_samples = true; /* a point pools several runs */
			p = &se->pt[se->npt - 1];
		} else {
			if (se->npt == se->cap) {
				size_t c2 = se->cap ? 2 * se->cap : 32;
				struct point *np = realloc(se->pt, c2 * sizeof(*np));

				if (!np) {
					st = xo_error(XO_ENOMEM, "perf: out of memory");
					goto out;
				}
				se->pt = np;
				se->cap = c2;
			}
			p = &se->pt[se->npt++];
			*p = (struct point){.commit_id = r[i].commit, .rank = r[i].k.rank};
			p->y = r[i].med;
			p->se = 1.2533 * ((r[i].q3 - r[i].q1) / 1.349) / sqrt((double)r[i].n);
		}
		if (!r[i].summary)
			*need_samples = true;
		p->ver_run = r[i].k.run; /* ascending within a commit: the latest wins */
		p->ver_known = r[i].known;
		p->ver = r[i].ver;
	}
out:
	xo_sql_finalize(s);
	free(r);
	return st;
}

/* Take a run's others into a load (least < 0: none yet); unknown (< 0) is
 * left out, as compare's sides leave such runs out. */
static void load_widen(struct xo_perf_load *l, double others)
{
	if (others >= 0)
		l->least = l->least < 0 ? others : fmin(l->least, others);
}

/*
 * The raw samples of the history's points (load_points first), each point's
 * samples contiguous and the points' in history order. One read of the
 * samples, unordered (the order is the graph's, which SQL does not know),
 * sorted here. With resummarize each point's median and standard error are
 * computed from them (a point that pools runs, a result with no summary).
 */
static enum xo_status load_series_samples(struct xo_perfdb *db, const struct xo_perf_order *ord,
                                          int64_t bench, int64_t testbed, struct series *se,
                                          bool resummarize)
{
	struct xo_sql_stmt *s = NULL;
	size_t nrows = 0, k = 0;
	int rc;

	se->samples.n = 0;
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT ru.commit_id, ru.id, sm.wall_s, coalesce(ru.others_cpu, -1)"
	                   " FROM samples sm"
	                   " JOIN results res ON res.id = sm.result_id"
	                   " JOIN runs ru ON ru.id = res.run_id"
	                   " WHERE res.benchmark_id = ?1 AND ru.testbed_id = ?2"
	                   " AND ru.state = 'complete'", &s))
		return sql_err(db, "reading a history");
	xo_sql_bind_int64(s, 1, bench);
	xo_sql_bind_int64(s, 2, testbed);
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW) {
		int64_t commit = xo_sql_column_int64(s, 0);

		if (nrows == se->caprows) {
			size_t cap = se->caprows ? 2 * se->caprows : 1024;
			struct srow *p = realloc(se->rows, cap * sizeof(*p));

			if (!p) {
				xo_sql_finalize(s);
				return xo_error(XO_ENOMEM, "perf: out of memory");
			}
			se->rows = p;
			se->caprows = cap;
		}
		se->rows[nrows++] = (struct srow){{xo_perf_order_rank(ord, commit),
		                                   xo_sql_column_int64(s, 1)},
		                                  commit,
		                                  xo_sql_column_double(s, 2),
		                                  xo_sql_column_double(s, 3)};
	}
	xo_sql_finalize(s);
	if (rc != XO_SQL_DONE)
		return sql_err(db, "reading a history");
	qsort(se->rows, nrows, sizeof(*se->rows), hist_key_cmp);
	/* rows of a commit load_points did not see (written since) are left out */
	for (size_t r = 0, i = 0; i < se->npt; i++) {
		struct point *p = &se->pt[i];

		p->first = se->samples.n;
		p->n = 0;
		p->load = (struct xo_perf_load){-1.0};
		while (r < nrows && se->rows[r].k.rank < p->rank)
			r++;
		for (; r < nrows && se->rows[r].k.rank == p->rank; r++, p->n++) {
			load_widen(&p->load, se->rows[r].others);
			if (!vec_push(&se->samples, se->rows[r].v))
				return xo_error(XO_ENOMEM, "perf: out of memory");
		}
		if (p->n || !resummarize)
			se->pt[k++] = *p; /* a point with no samples is no point */
	}
	if (resummarize)
		se->npt = k;
	for (size_t i = 0; resummarize && i < se->npt; i++) {
		struct point *p = &se->pt[i];
		struct xo_perf_summary sum;
		double *x = malloc((p->n ? p->n : 1) * sizeof(*x));

		if (!x)
			return xo_error(XO_ENOMEM, "perf: out of memory");
		memcpy(x, se->samples.v + p->first, p->n * sizeof(*x));
		xo_perf_summarize(x, p->n, &sum);
		free(x);
		p->y = sum.median;
		p->se = 1.2533 * ((sum.q3 - sum.q1) / 1.349) / sqrt((double)p->n);
	}
	return XO_OK;
}

/* Index of the first point after the last accepted change: the baseline. */
static size_t baseline_start(struct xo_perfdb *db, int64_t bench, int64_t testbed,
                             const struct series *se)
{
	struct xo_sql_stmt *s = NULL;
	size_t start = 0;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT commit_id FROM changes WHERE benchmark_id = ? AND"
	                       " testbed_id = ? AND state = 'accepted'", &s))
		return 0;
	xo_sql_bind_int64(s, 1, bench);
	xo_sql_bind_int64(s, 2, testbed);
	while (xo_sql_step(s) == XO_SQL_ROW) {
		int64_t c = xo_sql_column_int64(s, 0);

		for (size_t i = 0; i < se->npt; i++)
			if (se->pt[i].commit_id == c && i > start)
				start = i;
	}
	xo_sql_finalize(s);
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
	struct xo_sql_stmt *upsert, *fix;
	int64_t now;
	int nconfirmed_reg, nconfirmed_imp, ndetected, nsteps, ncandidates, nmoved, nmachine;
	struct xo_perf_order ord;
};

/* The step at point mid between segments [lo, mid) and [mid, hi): the U test
 * on their raw samples, and the fit's levels (medians of point medians). */
struct step_eval {
	struct xo_perf_verdict v;
	double lvl_l, lvl_r;
};

/*
 * The fewest points a side of a step needs for the run-level test of the
 * rule (Welch on the points' log medians). Welch's degrees of freedom are
 * at least min(nb, nh) - 1: with 2 points a side they can fall to 1, where
 * p < 0.05 needs t > 12.7, so a 16x step whose two points before it differ
 * by 1.75x (a loaded run) was never confirmed. A shorter side is judged as
 * compare judges a side of a single run: its points' samples pooled as one
 * run, the change held to the series' run-to-run noise bar (rule->noise).
 */
#define STEP_RUNS_MIN 3

/* Each point (a commit: its runs' samples pooled) is one run of the rule;
 * sizes has room for the series' points. A side shorter than STEP_RUNS_MIN
 * points is one run of its pooled samples. */
static void eval_step(const struct series *se, size_t base, const double *y, size_t lo, size_t mid,
                      size_t hi, const struct xo_perf_rule *rule, size_t *sizes, struct vec *tmp,
                      struct step_eval *e)
{
	const struct point *a = &se->pt[base + lo], *m = &se->pt[base + mid];
	const struct point *z = &se->pt[base + hi - 1];
	struct xo_perf_sample_set l, r;
	struct xo_perf_load ll = {-1.0}, lr = {-1.0};

	for (size_t i = lo; i < hi; i++) {
		sizes[i] = se->pt[base + i].n;
		load_widen(i < mid ? &ll : &lr, se->pt[base + i].load.least);
	}
	l = (struct xo_perf_sample_set){se->samples.v + a->first, sizes + lo, mid - lo,
	                                m->first - a->first, ll.least >= 0 ? &ll : NULL};
	r = (struct xo_perf_sample_set){se->samples.v + m->first, sizes + mid, hi - mid,
	                                z->first + z->n - m->first, lr.least >= 0 ? &lr : NULL};
	if (mid - lo < STEP_RUNS_MIN)
		l = (struct xo_perf_sample_set){l.x, NULL, 1, l.nx, l.load};
	if (hi - mid < STEP_RUNS_MIN)
		r = (struct xo_perf_sample_set){r.x, NULL, 1, r.nx, r.load};
	xo_perf_verdict_judge(&l, &r, rule, &e->v);
	tmp->n = 0;
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
 * when compare's rule (verdict.c, each point one run of it, the series'
 * run-to-run bar at the same corrected alpha) confirms it, else "detected"
 * (real but small, within what runs of one tree do, or load that the
 * minima do not show).
 */
/*
 * Steps of an instruction series (a deterministic metric): between every two
 * neighbouring points (commits) of the history since its baseline, a step is
 * "confirmed" when every sample of the right point differs from every sample
 * of the left one by more than threshold in one direction
 * (xo_perf_judge_counts), "detected" when only the medians do (the samples
 * disagree: a count that is not deterministic). No segment fit, no U test
 * and no run-to-run bar: there is no sampling noise to average out, and a
 * commit that changes the count is the commit that changed the code.
 */
static size_t count_steps(const struct series *se, size_t base, size_t n, double threshold,
                          size_t *starts, struct step_eval *ev)
{
	size_t k = 0;

	for (size_t i = 1; i < n; i++) {
		const struct point *a = &se->pt[base + i - 1], *z = &se->pt[base + i];
		struct step_eval *e = &ev[k];
		struct xo_perf_sample_set l = {se->samples.v + a->first, NULL, 1, a->n, NULL};
		struct xo_perf_sample_set r = {se->samples.v + z->first, NULL, 1, z->n, NULL};
		struct xo_perf_rule rule = {.threshold = threshold, .counts = true};

		xo_perf_verdict_judge(&l, &r, &rule, &e->v);
		e->lvl_l = a->y;
		e->lvl_r = z->y;
		e->v.base = a->y;
		e->v.head = z->y;
		e->v.change = a->y > 0.0 ? z->y / a->y - 1.0 : 0.0;
		/* changes.p_value is NOT NULL: 0 for a step every sample pair
		 * shows, 1 for one only the medians show (no test is made) */
		e->v.p = e->v.sign ? 0.0 : 1.0;
		if (e->v.sign || fabs(e->v.change) > threshold)
			starts[k++] = i;
	}
	return k;
}

/* Both versions derived and equal: the measured code did not change. */
static bool same_version(const struct point *a, const struct point *b)
{
	return a->ver_known && b->ver_known && a->ver == b->ver;
}

/*
 * A step is put on a commit whose measured code changed. When the fit put a
 * step between two points of one kernel-source version, it moves to the
 * nearest boundary between its neighbouring steps where the version changed
 * (or cannot be told: a version not derived), the earlier one when two are
 * as near; with none (the code is the same over both segments) it stays, and
 * the store's version check marks it as not the code's doing. true when a
 * step moved (its neighbours' segments changed: evaluate again).
 */
static bool attribute_steps(const struct point *pt, size_t n, size_t *starts, size_t nsteps)
{
	bool moved = false;

	for (size_t k = 0; k < nsteps; k++) {
		size_t s = starts[k], lo = k ? starts[k - 1] : 0, hi = k + 1 < nsteps ? starts[k + 1] : n;

		if (!same_version(&pt[s - 1], &pt[s]))
			continue;
		for (size_t d = 1; s - lo > d || s + d < hi; d++) {
			if (s - lo > d && !same_version(&pt[s - d - 1], &pt[s - d])) {
				starts[k] = s - d;
				break;
			}
			if (s + d < hi && !same_version(&pt[s + d - 1], &pt[s + d])) {
				starts[k] = s + d;
				break;
			}
		}
		moved |= starts[k] != s;
	}
	return moved;
}

/*
 * A step moved from the fit's place `from` to `to` passes over the points
 * between them: the move stands only where each of those points is nearer
 * the level of the side it joins than of the side it leaves (a point the
 * fit put on the wrong side by noise), never where the data show the step
 * plainly at `from`.
 */
static bool skipped_agree(const double *y, size_t from, size_t to, const struct step_eval *e)
{
	if (to < from) { /* the points to..from-1 join the right side */
		for (size_t i = to; i < from; i++)
			if (fabs(y[i] - e->lvl_r) >= fabs(y[i] - e->lvl_l))
				return false;
	} else { /* the points from..to-1 join the left side */
		for (size_t i = from; i < to; i++)
			if (fabs(y[i] - e->lvl_l) >= fabs(y[i] - e->lvl_r))
				return false;
	}
	return true;
}

/* Removes the changes of a series that an earlier detect found and the
 * fuller history no longer shows: those at commits not in keep (a comma
 * list of commit ids, "" for none). */
static enum xo_status prune_changes(struct xo_perfdb *db, int64_t bench, int64_t testbed,
                                    const char *keep)
{
	struct xo_sql_stmt *del = NULL;
	enum xo_status st = XO_OK;
	char sql[4400];

	snprintf(sql, sizeof(sql),
	         "DELETE FROM changes WHERE benchmark_id = ? AND testbed_id = ? AND"
	         " state IN ('detected','confirmed') AND commit_id NOT IN (%s)",
	         keep[0] ? keep : "0"); /* ids start at 1; PostgreSQL refuses "IN ()" */
	if (xo_sql_prepare(xo_perfdb_sql(db), sql, &del))
		return sql_err(db, "pruning changes");
	xo_sql_bind_int64(del, 1, bench);
	xo_sql_bind_int64(del, 2, testbed);
	if (xo_sql_step(del) != XO_SQL_DONE)
		st = sql_err(db, "pruning changes");
	xo_sql_finalize(del);
	return st;
}

/* A step the machine made: the code measured is known and the same on both
 * sides and the floor did not move (the medians moved with the machine, not
 * with the commit). No row is kept against the commit. */
static bool machine_step(const struct point *m, const struct step_eval *e, double threshold)
{
	return same_version(m - 1, m) && isfinite(e->v.min_change) &&
	       fabs(e->v.min_change) <= threshold;
}

/* The load bound's cores and threads for a series (verdict.c, step 7), as
 * compare takes them; none when the testbed is not read. */
static void series_threads(struct xo_perfdb *db, int64_t bench, int64_t testbed,
                           struct xo_perf_rule *rule)
{
	struct xo_sql_stmt *s = NULL;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT t.cores, t.describe, b.device, b.name FROM testbeds t,"
	                   " benchmarks b WHERE t.id = ? AND b.id = ?", &s))
		return;
	xo_sql_bind_int64(s, 1, testbed);
	xo_sql_bind_int64(s, 2, bench);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		const char *dev = xo_sql_column_text(s, 2) ? col_str(s, 2) : "";
		const char *name = col_str(s, 3), *slash = strrchr(name, '/');

		rule->cores = xo_sql_column_double(s, 0) > 0 ? xo_sql_column_double(s, 0) : 1.0;
		/* older stores: the device ends the name */
		rule->threads = xo_perf_bench_threads(dev[0] ? dev : slash ? slash + 1 : name,
		                                      xo_sql_column_text(s, 1) ? col_str(s, 1) : "",
		                                      rule->cores);
	}
	xo_sql_finalize(s);
}

/* The steps of one series found by detect_series, stored (a machine's step
 * is counted, not stored), each regression whose history came back down
 * marked fixed, and the changes of the series that no longer hold pruned. */
static enum xo_status store_steps(struct detect_ctx *ctx, int64_t bench, int64_t testbed,
                                  const struct series *se, size_t base, const size_t *starts,
                                  size_t nsteps, const struct step_eval *ev)
{
	struct xo_perfdb *db = ctx->db;
	char keep[4096] = "";

	for (size_t k = 0; k < nsteps; k++) {
		const struct point *m = &se->pt[base + starts[k]];
		const struct step_eval *e = &ev[k];

		if (machine_step(m, e, ctx->o->threshold)) {
			ctx->nmachine++;
			continue;
		}
		ctx->nsteps++;
		xo_sql_bind_int64(ctx->upsert, 1, bench);
		xo_sql_bind_int64(ctx->upsert, 2, testbed);
		xo_sql_bind_int64(ctx->upsert, 3, m->commit_id);
		xo_sql_bind_int64(ctx->upsert, 4, se->pt[base + starts[k] - 1].commit_id);
		xo_sql_bind_text(ctx->upsert, 5,
		                  e->lvl_r > e->lvl_l ? "regression" : "improvement");
		xo_sql_bind_double(ctx->upsert, 6, e->lvl_r / e->lvl_l);
		xo_sql_bind_double(ctx->upsert, 7, e->v.p);
		xo_sql_bind_text(ctx->upsert, 8, e->v.sign ? "confirmed" : "detected");
		xo_sql_bind_int64(ctx->upsert, 9, ctx->now);
		if (xo_sql_step(ctx->upsert) != XO_SQL_DONE) {
			xo_sql_reset(ctx->upsert);
			return sql_err(db, "storing a change");
		}
		xo_sql_reset(ctx->upsert);
		snprintf(keep + strlen(keep), sizeof(keep) - strlen(keep), "%s%lld",
		         keep[0] ? "," : "", (long long)m->commit_id);
		/* a confirmed regression whose history came back down is fixed */
		if (e->v.sign > 0 && k + 1 < nsteps &&
		    se->pt[se->npt - 1].y <= e->lvl_l * (1.0 + ctx->o->threshold)) {
			xo_sql_bind_int64(ctx->fix, 1, bench);
			xo_sql_bind_int64(ctx->fix, 2, testbed);
			xo_sql_bind_int64(ctx->fix, 3, m->commit_id);
			xo_sql_step(ctx->fix);
			xo_sql_reset(ctx->fix);
		}
	}
	return prune_changes(db, bench, testbed, keep);
}

static enum xo_status detect_series(struct detect_ctx *ctx, int64_t bench, int64_t testbed,
                                    struct series *se)
{
	struct xo_perfdb *db = ctx->db;
	size_t base, n, nsteps, *starts = NULL, *orig = NULL;
	double *y = NULL, scale, alpha;
	struct vec tmp = {0};
	size_t *sizes = NULL;
	struct xo_perf_rule rule = {.threshold = ctx->o->threshold, .family = 1};
	struct step_eval *ev = NULL;
	enum xo_status st = XO_OK;
	bool have_samples;

	/* the fit needs the points only; the raw samples are read where the
	 * summaries do not give the points, or for the tests of found steps */
	if ((st = load_points(db, &ctx->ord, bench, testbed, se, &have_samples)))
		return st;
	have_samples = have_samples || is_count_metric(ctx->o->metric);
	if (have_samples && (st = load_series_samples(db, &ctx->ord, bench, testbed, se, true)))
		return st;
	base = baseline_start(db, bench, testbed, se);
	n = se->npt - base;
	y = malloc((n ? n : 1) * sizeof(*y));
	starts = malloc((n ? n : 1) * sizeof(*starts));
	ev = malloc((n ? n : 1) * sizeof(*ev));
	if (!y || !starts || !ev) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		y[i] = se->pt[base + i].y;
	if (is_count_metric(ctx->o->metric)) {
		nsteps = count_steps(se, base, n, ctx->o->threshold, starts, ev);
		ctx->ncandidates += (int)nsteps;
		goto store;
	}
	scale = series_scale(se->pt + base, n);
	nsteps = n >= 2 ? xo_perf_steps(y, n, scale, starts) : 0;
	ctx->ncandidates += (int)nsteps;
	if (nsteps && !have_samples &&
	    (st = load_series_samples(db, &ctx->ord, bench, testbed, se, false)))
		goto out;
	alpha = ctx->o->alpha / (double)(n > 2 ? n - 1 : 1);
	/* each step is judged by the one rule (verdict.c), at the level the fit's
	 * choice among n - 1 places leaves, with the series' run-to-run bar */
	rule.alpha = alpha;
	if (nsteps)
		rule.noise = series_noise(db, &ctx->ord, bench, testbed, INT64_MAX, alpha, 0);
	if (nsteps)
		series_threads(db, bench, testbed, &rule);
	if (!(sizes = malloc((n ? n : 1) * sizeof(*sizes)))) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out;
	}

	for (;;) {
		size_t worst = nsteps;
		double worst_p = alpha;

		for (size_t k = 0; k < nsteps; k++) {
			eval_step(se, base, y, k ? starts[k - 1] : 0, starts[k],
			          k + 1 < nsteps ? starts[k + 1] : n, &rule, sizes, &tmp, &ev[k]);
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
	/* A step on a commit whose measured code did not change moves to the
	 * nearest version change in its segments, but only where the rule
	 * confirms it there too and the points it passes over agree: a code
	 * change whose commit the data show unchanged is not the cause, and the
	 * step stays where it is (then not confirmed: the code did not change
	 * there). */
	if (nsteps && !(orig = malloc(nsteps * sizeof(*orig)))) {
		st = xo_error(XO_ENOMEM, "perf: out of memory");
		goto out;
	}
	if (nsteps)
		memcpy(orig, starts, nsteps * sizeof(*orig));
	if (attribute_steps(se->pt + base, n, starts, nsteps)) {
		bool moved = false;

		for (size_t k = 0; k < nsteps; k++) {
			if (starts[k] == orig[k])
				continue;
			eval_step(se, base, y, k ? starts[k - 1] : 0, starts[k],
			          k + 1 < nsteps ? starts[k + 1] : n, &rule, sizes, &tmp, &ev[k]);
			if (ev[k].v.sign && skipped_agree(y, orig[k], starts[k], &ev[k]))
				moved = true;
			else
				starts[k] = orig[k];
		}
		ctx->nmoved += moved;
		for (size_t k = 0; k < nsteps; k++)
			eval_step(se, base, y, k ? starts[k - 1] : 0, starts[k],
			          k + 1 < nsteps ? starts[k + 1] : n, &rule, sizes, &tmp, &ev[k]);
	}
store:
	st = store_steps(ctx, bench, testbed, se, base, starts, nsteps, ev);
out:
	free(sizes);
	free(tmp.v);
	free(ev);
	free(y);
	free(orig);
	free(starts);
	return st;
}

/* ---- what the last detect fitted (detect_state, schema 7) ------------------------- */

/* Names what decides a series' changes besides its runs and the settings:
 * change it with the fit, the confirmation or the attribution, and the next
 * detect refits every series. */
#define DETECT_RULE "l1-fit window 128 + merges; verdict rule; version attribution; load bound; 4"

struct fitted {
	int64_t bench, testbed, results, last_run, upto;
	char settings[160], hash[24];
};

struct fit_state {
	struct fitted *f; /* by (bench, testbed) */
	size_t n;
	struct {
		int64_t upto;
		char hash[24];
	} memo[8];
	size_t nmemo;
	char settings[160], hash[24]; /* this detect's */
	int64_t upto;
	struct xo_sql_stmt *put;
	int nskipped;
};

static const char *order_hash_text(struct fit_state *fs, const struct xo_perf_order *ord,
                                   int64_t upto)
{
	size_t i;

	for (i = 0; i < fs->nmemo; i++)
		if (fs->memo[i].upto == upto)
			return fs->memo[i].hash;
	i = fs->nmemo < 8 ? fs->nmemo++ : 7;
	fs->memo[i].upto = upto;
	snprintf(fs->memo[i].hash, sizeof(fs->memo[i].hash), "%016llx",
	         (unsigned long long)xo_perf_order_hash(ord, upto));
	return fs->memo[i].hash;
}

/* Reads detect_state and prepares its upsert; the settings of this detect. */
static enum xo_status fit_state_load(struct xo_perfdb *db, const struct xo_perf_compare_opts *o,
                                     const struct xo_perf_order *ord, struct fit_state *fs)
{
	struct xo_sql_stmt *s = NULL;
	size_t cap = 0;
	int rc;

	snprintf(fs->settings, sizeof(fs->settings), "threshold %.17g alpha %.17g %s; %s",
	         o->threshold, o->alpha, is_count_metric(o->metric) ? "instructions" : "time",
	         DETECT_RULE);
	fs->upto = ord->n ? ord->id[ord->n - 1] : 0;
	snprintf(fs->hash, sizeof(fs->hash), "%s", order_hash_text(fs, ord, fs->upto));
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT benchmark_id, testbed_id, results, last_run, settings,"
	                   " order_upto, order_hash FROM detect_state"
	                   " ORDER BY benchmark_id, testbed_id", &s))
		return sql_err(db, "reading detect_state");
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW) {
		struct fitted *f;

		if (fs->n == cap) {
			size_t c2 = cap ? 2 * cap : 64;
			struct fitted *p = realloc(fs->f, c2 * sizeof(*p));

			if (!p) {
				xo_sql_finalize(s);
				return xo_error(XO_ENOMEM, "perf: out of memory");
			}
			fs->f = p;
			cap = c2;
		}
		f = &fs->f[fs->n++];
		f->bench = xo_sql_column_int64(s, 0);
		f->testbed = xo_sql_column_int64(s, 1);
		f->results = xo_sql_column_int64(s, 2);
		f->last_run = xo_sql_column_int64(s, 3);
		snprintf(f->settings, sizeof(f->settings), "%s", col_str(s, 4));
		f->upto = xo_sql_column_int64(s, 5);
		snprintf(f->hash, sizeof(f->hash), "%s", col_str(s, 6));
	}
	xo_sql_finalize(s);
	if (rc != XO_SQL_DONE)
		return sql_err(db, "reading detect_state");
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "INSERT INTO detect_state(benchmark_id, testbed_id, results, last_run,"
	                   " settings, order_upto, order_hash) VALUES (?1,?2,?3,?4,?5,?6,?7)"
	                   " ON CONFLICT(benchmark_id, testbed_id) DO UPDATE SET"
	                   " results = excluded.results, last_run = excluded.last_run,"
	                   " settings = excluded.settings, order_upto = excluded.order_upto,"
	                   " order_hash = excluded.order_hash", &fs->put))
		return sql_err(db, "writing detect_state");
	return XO_OK;
}

/* The series was fitted by a detect with these settings, over the same runs,
 * in the same order: what that detect stored stands. */
static bool fit_state_fresh(struct fit_state *fs, const struct xo_perf_order *ord, int64_t bench,
                            int64_t testbed, int64_t results, int64_t last_run)
{
	size_t lo = 0, hi = fs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct fitted *f = &fs->f[mid];

		if (f->bench < bench || (f->bench == bench && f->testbed < testbed))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == fs->n || fs->f[lo].bench != bench || fs->f[lo].testbed != testbed)
		return false;
	return fs->f[lo].results == results && fs->f[lo].last_run == last_run &&
	       !strcmp(fs->f[lo].settings, fs->settings) &&
	       !strcmp(fs->f[lo].hash, order_hash_text(fs, ord, fs->f[lo].upto));
}

static enum xo_status fit_state_put(struct xo_perfdb *db, struct fit_state *fs, int64_t bench,
                                    int64_t testbed, int64_t results, int64_t last_run)
{
	xo_sql_bind_int64(fs->put, 1, bench);
	xo_sql_bind_int64(fs->put, 2, testbed);
	xo_sql_bind_int64(fs->put, 3, results);
	xo_sql_bind_int64(fs->put, 4, last_run);
	xo_sql_bind_text(fs->put, 5, fs->settings);
	xo_sql_bind_int64(fs->put, 6, fs->upto);
	xo_sql_bind_text(fs->put, 7, fs->hash);
	if (xo_sql_step(fs->put) != XO_SQL_DONE) {
		xo_sql_reset(fs->put);
		return sql_err(db, "writing detect_state");
	}
	xo_sql_reset(fs->put);
	return XO_OK;
}

/* Every series of the store (of --testbed, --filter and the metric), each
 * fitted unless detect_state says the last detect fitted it as it is. */
static enum xo_status fit_all(struct detect_ctx *ctx, struct fit_state *fs, struct series *se,
                              const regex_t *re, int *nseries)
{
	struct xo_perfdb *db = ctx->db;
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;
	int rc;

	if (xo_sql_prepare(xo_perfdb_sql(db),
	                   "SELECT res.benchmark_id, ru.testbed_id, b.name, b.metric,"
	                   " count(*), max(ru.id)"
	                   " FROM results res JOIN runs ru ON ru.id = res.run_id"
	                   " JOIN benchmarks b ON b.id = res.benchmark_id"
	                   " WHERE ru.state = 'complete' AND (?1 = 0 OR ru.testbed_id = ?1)"
	                   " GROUP BY res.benchmark_id, ru.testbed_id, b.name, b.metric"
	                   " ORDER BY b.name, ru.testbed_id", &s))
		return sql_err(db, "detect");
	xo_sql_bind_int64(s, 1, ctx->o->testbed);
	while ((rc = xo_sql_step(s)) == XO_SQL_ROW) {
		int64_t bench = xo_sql_column_int64(s, 0), testbed = xo_sql_column_int64(s, 1);
		int64_t nres = xo_sql_column_int64(s, 4), last = xo_sql_column_int64(s, 5);

		if (re && regexec(re, col_str(s, 2), 0, NULL, 0))
			continue;
		if (strcmp(xo_sql_column_text(s, 3) ? col_str(s, 3) : "time",
		           is_count_metric(ctx->o->metric) ? "instructions" : "time"))
			continue; /* the other metric's series */
		(*nseries)++;
		if (fit_state_fresh(fs, &ctx->ord, bench, testbed, nres, last)) {
			fs->nskipped++; /* no new run: its stored changes stand */
			continue;
		}
		if ((st = detect_series(ctx, bench, testbed, se)) ||
		    (st = fit_state_put(db, fs, bench, testbed, nres, last)))
			break;
	}
	if (!st && rc != XO_SQL_DONE)
		st = sql_err(db, "detect");
	xo_sql_finalize(s);
	return st;
}

/* What detect did beyond fitting: the order it could not take from the
 * graph, steps it moved onto a code change, series it did not fit again. */
static void print_notes(FILE *t, const struct detect_ctx *ctx, const struct fit_state *fs)
{
	if (ctx->ord.by_date)
		fprintf(t,
		        "\nnote: %zu stretches of history start at a commit whose first parent "
		        "is not in the store; the commit graph cannot order them, so their "
		        "commit dates do\n",
		        ctx->ord.by_date);
	if (ctx->ord.off_main)
		fprintf(t,
		        "\nnote: %zu commits off the main line (side branches) were left out "
		        "of the history; compare or continuous judges them against their base\n",
		        ctx->ord.off_main);
	if (fs->nskipped)
		fprintf(t,
		        "\nnote: %d series had no new run since the last detect with these "
		        "settings: their changes above stand as it stored them (not fitted "
		        "again)\n",
		        fs->nskipped);
	if (ctx->nmoved)
		fprintf(t,
		        "\nnote: in %d series a step fell between two commits of the same "
		        "kernel-source version and was put on the nearest commit whose code "
		        "changed\n",
		        ctx->nmoved);
	if (ctx->nmachine)
		fprintf(t,
		        "\nnote: %d steps fell where the kernel-source version did not change and "
		        "the fastest sample moved within -+%.0f%%: the machine's, not stored\n",
		        ctx->nmachine, 100.0 * ctx->o->threshold);
}

/* The kernel-source version a change's benchmark had at a commit (?1 the
 * change's column holding the commit): the latest complete run's. */
#define CHANGE_VERSION_SQL(col)                                                                    \
	"(SELECT res.version FROM results res JOIN runs ru ON ru.id = res.run_id"                  \
	" WHERE res.benchmark_id = ch.benchmark_id AND ru.testbed_id = ch.testbed_id"              \
	" AND ru.commit_id = ch." col " AND ru.state = 'complete' ORDER BY ru.id DESC LIMIT 1)"

/* A step whose benchmark's code version is the same, and known, on both sides
 * of it is not the code's doing: never "confirmed". An unknown version (empty,
 * or XO_PERF_VERSION_UNKNOWN) lowers nothing (xo_perf_same_code in SQL). */
static const char lower_unchanged_sql[] =
    "UPDATE changes AS ch SET state = 'detected' WHERE state = 'confirmed' AND "
    CHANGE_VERSION_SQL("commit_id") " = " CHANGE_VERSION_SQL("prev_commit_id")
    " AND " CHANGE_VERSION_SQL("commit_id") " NOT IN ('', '" XO_PERF_VERSION_UNKNOWN "')";

/*
 * The changes table, the backends under test first, then ref and the peers
 * (never alarms); with --filter only the matching benchmarks, so that
 * `detect --filter` exits 1 for a regression it was asked about only. Each
 * change says whether the kernel source changed across it and whether other
 * processes loaded the machine during the runs on either side of it.
 */
static void print_changes(struct xo_perfdb *db, FILE *out, struct detect_ctx *ctx,
                          const regex_t *re, json_t *jchanges, int *nbusy)
{
	struct xo_sql_stmt *s = NULL;

	if (xo_sql_prepare(
	        xo_perfdb_sql(db),
	        "SELECT ch.id, ch.state, ch.direction, b.name, c.sha, c.dirty,"
	        " ch.ratio, ch.p_value, ch.testbed_id, b.device,"
	        " coalesce(" CHANGE_VERSION_SQL("commit_id") ", ''),"
	        " coalesce(" CHANGE_VERSION_SQL("prev_commit_id") ", ''),"
	        " (SELECT max(ru.others_cpu) FROM runs ru WHERE ru.testbed_id = ch.testbed_id"
	        "  AND ru.state = 'complete' AND ru.commit_id IN (ch.commit_id, ch.prev_commit_id)),"
	        " t.cores, b.metric"
	        " FROM changes ch JOIN benchmarks b ON b.id = ch.benchmark_id"
	        " JOIN commits c ON c.id = ch.commit_id JOIN testbeds t ON t.id = ch.testbed_id"
	        " ORDER BY b.device = 'ref' OR NOT (b.device = 'cpu' OR b.device LIKE 'cl%'),"
	        " b.device = 'ref' DESC, ch.state != 'confirmed', ch.direction != 'regression',"
	        " b.name, ch.id", &s))
		return;
	fprintf(out, "%6s %-10s %-11s %-58s %-14s %8s %9s  %s\n", "id", "state", "direction",
	        "benchmark", "commit", "change", "p-value", "notes");
	while (xo_sql_step(s) == XO_SQL_ROW) {
		const char *state = col_str(s, 1);
		const char *dir = col_str(s, 2);
		const char *name = col_str(s, 3);
		const char *dev = xo_sql_column_text(s, 9) ? col_str(s, 9)
		                                            : "";
		const char *vh = col_str(s, 10);
		const char *vb = col_str(s, 11);
		double cores = xo_sql_column_double(s, 13) > 0 ? xo_sql_column_double(s, 13) : 1.0;
		bool busy = !xo_sql_column_null(s, 12) &&
		            xo_sql_column_double(s, 12) > 0.1 * cores;
		bool same_code = xo_perf_same_code(vh, vb);
		enum compare_section sec = section_of(dev[0] ? dev : strrchr(name, '/') ?
		                                                   strrchr(name, '/') + 1 : name);
		char commit[32], notes[160] = "";

		if (re && regexec(re, name, 0, NULL, 0))
			continue;
		if (strcmp(xo_sql_column_text(s, 14) ? col_str(s, 14) : "time",
		           is_count_metric(ctx->o->metric) ? "instructions" : "time"))
			continue; /* the other metric's changes */
		snprintf(commit, sizeof(commit), "%.10s%s", col_str(s, 4),
		         xo_sql_column_int(s, 5) ? "+" : "");
		if (sec != SEC_TEST)
			snprintf(notes, sizeof(notes), "[%s: not an alarm]", section_key[sec]);
		if (same_code)
			snprintf(notes + strlen(notes), sizeof(notes) - strlen(notes),
			         "%s[kernel source unchanged]", notes[0] ? " " : "");
		if (busy) {
			snprintf(notes + strlen(notes), sizeof(notes) - strlen(notes),
			         "%s[load: other processes used %.2f cores]", notes[0] ? " " : "",
			         xo_sql_column_double(s, 12));
			if (!strcmp(state, "confirmed") && sec == SEC_TEST)
				(*nbusy)++;
		}
		fprintf(out, "%6lld %-10s %-11s %-58s %-14s %+7.1f%% %9.2g  %s\n",
		        (long long)xo_sql_column_int64(s, 0), state, dir, name, commit,
		        100.0 * (xo_sql_column_double(s, 6) - 1.0), xo_sql_column_double(s, 7),
		        notes);
		if (jchanges)
			json_array_append_new(
			    jchanges,
			    json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:b, s:b, s:b}", "id",
			              (json_int_t)xo_sql_column_int64(s, 0), "state", state,
			              "direction", dir, "benchmark", name, "section", section_key[sec],
			              "commit", col_str(s, 4), "ratio",
			              xo_sql_column_double(s, 6), "p_value", xo_sql_column_double(s, 7),
			              "kernel_source_changed", !same_code, "load_busy", busy, "alarm",
			              sec == SEC_TEST && !strcmp(state, "confirmed") &&
			                  !strcmp(dir, "regression")));
		if (sec != SEC_TEST)
			continue;
		if (!strcmp(state, "confirmed") && !strcmp(dir, "regression"))
			ctx->nconfirmed_reg++;
		else if (!strcmp(state, "confirmed"))
			ctx->nconfirmed_imp++;
		else if (!strcmp(state, "detected"))
			ctx->ndetected++;
	}
	xo_sql_finalize(s);
}

enum xo_status xo_perf_detect(struct xo_perfdb *db, const struct xo_perf_compare_opts *o, FILE *out,
                              bool *failed)
{
	struct detect_ctx ctx = {.db = db, .o = o, .now = (int64_t)time(NULL)};
	struct fit_state fs = {0};
	struct series se = {0};
	struct xo_sql *h = xo_perfdb_sql(db);
	enum xo_status st = XO_OK;
	regex_t re;
	bool have_re = false;
	int nseries = 0;

	*failed = false;
	if (o->filter) {
		if (regcomp(&re, o->filter, REG_EXTENDED | REG_NOSUB))
			return xo_error(XO_EINVAL, "--filter '%s' is not a valid regex", o->filter);
		have_re = true;
	}
	if (xo_sql_exec(h, xo_sql_dialect(h)->begin_write)) {
		st = sql_err(db, "detect");
		goto out_free;
	}
	if ((st = xo_perf_order_load(db, &ctx.ord)) ||
	    (st = fit_state_load(db, o, &ctx.ord, &fs)))
		goto out_rollback;
	if (xo_sql_prepare(
	        h,
	        "INSERT INTO changes(benchmark_id, testbed_id, commit_id,"
	        " prev_commit_id, direction, ratio, p_value, state, detected, updated)"
	        " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?9)"
	        " ON CONFLICT(benchmark_id, testbed_id, commit_id) DO UPDATE SET"
	        " prev_commit_id = excluded.prev_commit_id,"
	        " direction = excluded.direction, ratio = excluded.ratio,"
	        " p_value = excluded.p_value, updated = excluded.updated,"
	        " state = CASE WHEN changes.state IN ('accepted','ignored','fixed')"
	        " THEN changes.state ELSE excluded.state END", &ctx.upsert) ||
	    xo_sql_prepare(h,
	                       "UPDATE changes SET state = 'fixed' WHERE benchmark_id = ? AND"
	                       " testbed_id = ? AND commit_id = ? AND state = 'confirmed'", &ctx.fix)) {
		st = sql_err(db, "detect");
		goto out_rollback;
	}
	if ((st = fit_all(&ctx, &fs, &se, have_re ? &re : NULL, &nseries)))
		goto out_rollback;
	xo_sql_finalize(ctx.upsert);
	xo_sql_finalize(ctx.fix);
	xo_sql_finalize(fs.put);
	ctx.upsert = ctx.fix = fs.put = NULL;
	if (xo_sql_exec(h, lower_unchanged_sql) ||
	    xo_sql_exec(h, "COMMIT")) {
		st = sql_err(db, "detect");
		goto out_rollback;
	}
	{
		json_t *root = o->json ? json_object() : NULL;
		json_t *jch = o->json ? json_array() : NULL;
		FILE *t = xo_perf_text_out(o->json, out);
		int nbusy = 0;

		if (!t) {
			json_decref(root);
			json_decref(jch);
			st = xo_error(XO_ENOMEM, "perf detect: out of memory");
			goto out_free;
		}
		print_changes(db, t, &ctx, have_re ? &re : NULL, jch, &nbusy);
		print_notes(t, &ctx, &fs);
		if (nbusy)
			fprintf(t,
			        "\nwarning: %d confirmed changes sit on runs during which other "
			        "processes used more than a tenth of the machine: threaded timings (cpu, "
			        "cl) may have moved for that reason alone; record again when it is "
			        "quiet\n",
			        nbusy);
		if (is_count_metric(o->metric))
			fprintf(t,
			        "\ndetect: %d instruction series, %d steps beyond %.2g%% between "
			        "neighbouring commits; in the table: %d confirmed regressions, %d "
			        "confirmed improvements, %d detected (samples disagree) (backends under "
			        "test; ref and peers are listed apart)\n",
			        nseries, ctx.nsteps, 100.0 * o->threshold, ctx.nconfirmed_reg,
			        ctx.nconfirmed_imp, ctx.ndetected);
		else
		fprintf(t,
		        "\ndetect: %d series, %d candidate steps, %d kept by the U test (p < %g / "
		        "(points - 1)); "
		        "in the table: %d confirmed regressions, %d confirmed improvements, %d "
		        "detected below the threshold (backends under test; ref and peers are "
		        "listed apart)\n",
		        nseries, ctx.ncandidates, ctx.nsteps, o->alpha, ctx.nconfirmed_reg,
		        ctx.nconfirmed_imp, ctx.ndetected);
		*failed = ctx.nconfirmed_reg > 0;
		if (root) {
			json_object_set_new(root, "changes", jch);
			json_object_set_new(
			    root, "summary",
			    json_pack("{s:i, s:i, s:i, s:i, s:i, s:i}", "series", nseries,
			              "candidate_steps", ctx.ncandidates, "kept_steps", ctx.nsteps,
			              "confirmed_regressions", ctx.nconfirmed_reg,
			              "confirmed_improvements", ctx.nconfirmed_imp, "detected",
			              ctx.ndetected));
			json_object_set_new(root, "load_warning", json_boolean(nbusy > 0));
			json_object_set_new(root, "regression", json_boolean(*failed));
			xo_perf_json_print(root, out);
			json_decref(root);
		}
		xo_perf_text_done(t, out);
	}
	goto out_free;

out_rollback:
	xo_sql_finalize(ctx.upsert);
	xo_sql_finalize(ctx.fix);
	xo_sql_finalize(fs.put);
	xo_sql_exec(h, "ROLLBACK");
out_free:
	if (have_re)
		regfree(&re);
	xo_perf_order_free(&ctx.ord);
	free(fs.f);
	free(se.samples.v);
	free(se.pt);
	free(se.rows);
	return st;
}

enum xo_status xo_perf_change_set(struct xo_perfdb *db, int64_t id, const char *state, FILE *out)
{
	struct xo_sql *h = xo_perfdb_sql(db);
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;

	if (strcmp(state, "accepted") && strcmp(state, "ignored") && strcmp(state, "fixed") &&
	    strcmp(state, "confirmed") && strcmp(state, "detected"))
		return xo_error(XO_EINVAL, "unknown change state '%s'", state);
	if (xo_sql_prepare(h, "UPDATE changes SET state = ?, updated = ? WHERE id = ?", &s))
		return sql_err(db, "updating a change");
	xo_sql_bind_text(s, 1, state);
	xo_sql_bind_int64(s, 2, (int64_t)time(NULL));
	xo_sql_bind_int64(s, 3, id);
	if (xo_sql_step(s) != XO_SQL_DONE)
		st = sql_err(db, "updating a change");
	else if (xo_sql_changes(h) != 1)
		st = xo_error(XO_EINVAL, "no change %lld (see `xo perf detect`)", (long long)id);
	else
		fprintf(out, "change %lld: %s\n", (long long)id, state);
	xo_sql_finalize(s);
	s = NULL;
	/* the series' baseline may have moved: the next detect fits it again */
	if (!st && (xo_sql_prepare(h,
	                           "DELETE FROM detect_state WHERE EXISTS (SELECT 1 FROM changes ch"
	                           " WHERE ch.id = ?1 AND ch.benchmark_id = detect_state.benchmark_id"
	                           " AND ch.testbed_id = detect_state.testbed_id)", &s) ||
	            (xo_sql_bind_int64(s, 1, id), xo_sql_step(s)) != XO_SQL_DONE))
		st = sql_err(db, "updating a change");
	xo_sql_finalize(s);
	return st;
}
