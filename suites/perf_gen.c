/*
 * perf_gen.c - a synthetic history for the store's scale check
 * (10 000 runs keep `xo perf compare` under 1 s and `xo perf report` under
 * 60 s, on either engine). Writes RUNS runs through the store's own
 * xo_perfdb_run_write, one commit each, alternating between TESTBEDS
 * testbeds, each with BENCH op benchmarks of SAMPLES samples (1 ms, 2%
 * noise, a 10% step at the middle commit for benchmark 0). Each commit's
 * first parent is the one before: one straight line of history.
 *
 *   perf_gen [--bulk|--append] DB RUNS [BENCH [SAMPLES [TESTBEDS]]]
 *
 * --append: the history continues from the runs the store holds (run i is
 * commit i) up to RUNS, through xo_perfdb_run_write: a new run arriving.
 * --bulk (the detect scale check's 100 000 runs): the first run of each
 * testbed goes through xo_perfdb_run_write (testbeds, benchmarks, schema),
 * the rest as multi-row INSERTs of the same rows (commits, runs, results
 * with their summaries, samples' wall times) in one transaction: the store's
 * writer makes some 70 round trips a run, which on PostgreSQL is about 30
 * minutes for 100 000 runs. The identity sequences are moved past the ids
 * written.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb.h"
#include "sql.h"

static uint64_t rng = 42;

static double gauss(void)
{
	double u, v;

	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	u = ((double)(rng >> 11) + 1.0) / 9007199254740993.0;
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	v = (double)(rng >> 11) / 9007199254740992.0;
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Rows of one table, sent as multi-row INSERTs of about 1 MB. */
struct rows {
	const char *head; /* "INSERT INTO t(cols) VALUES " */
	char *buf;
	size_t len, cap;
	long n;
};

static int rows_flush(struct xo_sql *h, struct rows *r)
{
	if (!r->n)
		return 0;
	r->buf[r->len - 1] = '\0'; /* the last comma */
	if (xo_sql_exec(h, r->buf)) {
		fprintf(stderr, "perf_gen: %s\n", xo_sql_errmsg(h));
		return -1;
	}
	r->len = (size_t)snprintf(r->buf, r->cap, "%s", r->head);
	r->n = 0;
	return 0;
}

static int rows_add(struct rows *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rows_add(struct rows *r, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(r->buf + r->len, r->cap - r->len, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= r->cap - r->len)
		return -1;
	r->len += (size_t)k;
	r->n++;
	return 0;
}

/* Parents before children: a foreign key is checked per statement. */
static int flush_all(struct xo_sql *h, struct rows *t, int nt)
{
	for (int i = 0; i < nt; i++)
		if (rows_flush(h, &t[i]))
			return -1;
	return 0;
}

static int64_t max_id(struct xo_sql *h, const char *table)
{
	char sql[96];
	struct xo_sql_stmt *s = NULL;
	int64_t v = 0;

	snprintf(sql, sizeof(sql), "SELECT coalesce(max(id), 0) FROM %s", table);
	if (!xo_sql_prepare(h, sql, &s) && xo_sql_step(s) == XO_SQL_ROW)
		v = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	return v;
}

/* Runs from..runs-1 of the history (the first ones are in the store). */
static int bulk_write(struct xo_perfdb *db, long from, long runs, long nb, long ns, long ntb)
{
	struct xo_sql *h = xo_perfdb_sql(db);
	int64_t cid = max_id(h, "commits"), rid = max_id(h, "runs"), xid = max_id(h, "results");
	int64_t tb[64], bench[1000];
	struct rows t[4] = {
	    {.head = "INSERT INTO commits(id, sha, parent, subject, date) VALUES "},
	    {.head = "INSERT INTO runs(id, commit_id, testbed_id, started, finished, state, note) VALUES "},
	    {.head = "INSERT INTO results(id, run_id, benchmark_id, n, min, median, max, reps, q1, q3,"
	     " mean, ci_lo, ci_hi) VALUES "},
	    {.head = "INSERT INTO samples(result_id, idx, wall_s) VALUES "}};
	struct xo_sql_stmt *s = NULL;
	double *x = malloc((size_t)ns * sizeof(*x)), *sorted = malloc((size_t)ns * sizeof(*x));
	int rc = -1, k = 0;

	if (ntb > 64 || nb > 1000 || !x || !sorted)
		goto out;
	/* testbeds in the order run 0, 1, .. made them; benchmarks by name */
	if (xo_sql_prepare(h, "SELECT id FROM testbeds ORDER BY id", &s))
		goto out;
	while (k < ntb && xo_sql_step(s) == XO_SQL_ROW)
		tb[k++] = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	if (k != ntb || xo_sql_prepare(h, "SELECT id FROM benchmarks ORDER BY name", &s))
		goto out;
	for (k = 0; k < nb && xo_sql_step(s) == XO_SQL_ROW; k++)
		bench[k] = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	if (k != nb)
		goto out;
	for (int i = 0; i < 4; i++) {
		t[i].cap = 1 << 21;
		if (!(t[i].buf = malloc(t[i].cap)))
			goto out;
		t[i].len = (size_t)snprintf(t[i].buf, t[i].cap, "%s", t[i].head);
	}
	if (xo_sql_exec(h, "BEGIN"))
		goto out;
	for (long i = from; i < runs; i++) {
		int64_t date = 1700000000 + 600 * (int64_t)i;

		cid++;
		rid++;
		if (rows_add(&t[0], "(%lld,'%040lx','%040lx','generated commit %ld',%lld),",
		             (long long)cid, 0x9e000000L + i, 0x9e000000L + i - 1, i,
		             (long long)date) ||
		    rows_add(&t[1], "(%lld,%lld,%lld,%lld,%lld,'complete','perf_gen'),",
		             (long long)rid, (long long)cid, (long long)tb[i % ntb],
		             (long long)date, (long long)date))
			goto out_rollback;
		for (long b = 0; b < nb; b++) {
			struct xo_perf_summary sum;

			xid++;
			for (long j = 0; j < ns; j++)
				sorted[j] = x[j] = 1e-3 * (b == 0 && i >= runs / 2 ? 1.10 : 1.0) *
				                   (1.0 + 0.02 * gauss());
			xo_perf_summarize(sorted, (size_t)ns, &sum);
			if (rows_add(&t[2], "(%lld,%lld,%lld,%ld,%.17g,%.17g,%.17g,1,%.17g,%.17g,%.17g,"
			                    "%.17g,%.17g),",
			             (long long)xid, (long long)rid, (long long)bench[b], ns, sum.min,
			             sum.median, sum.max, sum.q1, sum.q3, sum.mean, sum.ci_lo,
			             sum.ci_hi))
				goto out_rollback;
			for (long j = 0; j < ns; j++)
				if (rows_add(&t[3], "(%lld,%ld,%.17g),", (long long)xid, j, x[j]))
					goto out_rollback;
		}
		if (t[3].len > t[3].cap / 2 && flush_all(h, t, 4))
			goto out_rollback;
	}
	if (flush_all(h, t, 4))
		goto out_rollback;
	if (xo_sql_engine(h) == XO_SQL_POSTGRES &&
	    xo_sql_exec(h, "SELECT setval(pg_get_serial_sequence('commits', 'id'), max(id))"
	                   " FROM commits; SELECT setval(pg_get_serial_sequence('runs', 'id'),"
	                   " max(id)) FROM runs; SELECT setval(pg_get_serial_sequence('results',"
	                   " 'id'), max(id)) FROM results"))
		goto out_rollback;
	if (xo_sql_exec(h, "COMMIT"))
		goto out_rollback;
	rc = 0;
	goto out;
out_rollback:
	fprintf(stderr, "perf_gen: bulk write failed: %s\n", xo_sql_errmsg(h));
	xo_sql_exec(h, "ROLLBACK");
out:
	for (int i = 0; i < 4; i++)
		free(t[i].buf);
	free(sorted);
	free(x);
	return rc;
}

int main(int argc, char **argv)
{
	struct xo_perfdb *db;
	long runs, nb, ns, ntb, direct;
	struct xo_perf_result *r;
	bool bulk = argc > 1 && !strcmp(argv[1], "--bulk");
	bool append = argc > 1 && !strcmp(argv[1], "--append");
	long first = 0;

	if (bulk || append) {
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr,
		        "usage: perf_gen [--bulk|--append] DB RUNS [BENCH [SAMPLES [TESTBEDS]]]\n");
		return 2;
	}
	runs = strtol(argv[2], NULL, 10);
	nb = argc > 3 ? strtol(argv[3], NULL, 10) : 5;
	ns = argc > 4 ? strtol(argv[4], NULL, 10) : 10;
	ntb = argc > 5 ? strtol(argv[5], NULL, 10) : 2;
	if (runs < 1 || nb < 1 || ns < 1 || ntb < 1) {
		fprintf(stderr, "perf_gen: counts must be positive\n");
		return 2;
	}
	if (xo_perfdb_open(argv[1], &db)) {
		fprintf(stderr, "perf_gen: %s\n", xo_last_error());
		return 2;
	}
	r = calloc((size_t)nb, sizeof(*r));
	for (long k = 0; k < nb; k++) {
		snprintf(r[k].b.name, sizeof(r[k].b.name), "op/gen/fwd/bench%03ld/cpu", k);
		snprintf(r[k].b.kind, sizeof(r[k].b.kind), "op");
		snprintf(r[k].b.device, sizeof(r[k].b.device), "cpu");
		snprintf(r[k].b.what, sizeof(r[k].b.what), "gen");
		snprintf(r[k].b.dir, sizeof(r[k].b.dir), "fwd");
		r[k].reps = 1;
		r[k].n = (size_t)ns;
		r[k].samples = calloc((size_t)ns, sizeof(*r[k].samples));
	}
	direct = bulk && runs > ntb ? ntb : runs;
	if (append) {
		first = (long)max_id(xo_perfdb_sql(db), "runs");
		rng += (uint64_t)first; /* not the first runs' noise again */
	}
	for (long i = first; i < direct; i++) {
		struct xo_perf_commit c = {0};
		struct xo_perf_testbed t = {0};
		int64_t run;

		snprintf(c.sha, sizeof(c.sha), "%040lx", 0x9e000000L + i);
		if (i) /* a straight first-parent line, as a branch's history is */
			snprintf(c.parent, sizeof(c.parent), "%040lx", 0x9e000000L + i - 1);
		snprintf(c.subject, sizeof(c.subject), "generated commit %ld", i);
		c.date = 1700000000 + 600 * (int64_t)i;
		snprintf(t.hostname, sizeof(t.hostname), "gen-host-%ld", i % ntb);
		snprintf(t.cpu_model, sizeof(t.cpu_model), "Generated CPU");
		t.cores = 2;
		for (long k = 0; k < nb; k++)
			for (long s = 0; s < ns; s++)
				r[k].samples[s].wall_s = 1e-3 *
				                         (k == 0 && i >= runs / 2 ? 1.10 : 1.0) *
				                         (1.0 + 0.02 * gauss());
		if (xo_perfdb_run_write(db, &c, &t, "perf_gen", r, (size_t)nb, &run)) {
			fprintf(stderr, "perf_gen: run %ld: %s\n", i, xo_last_error());
			return 1;
		}
	}
	if (direct < runs && bulk_write(db, direct, runs, nb, ns, ntb))
		return 1;
	for (long k = 0; k < nb; k++)
		free(r[k].samples);
	free(r);
	xo_perfdb_close(db);
	printf("perf_gen: %ld runs of %ld benchmarks x %ld samples on %ld testbeds\n", runs, nb, ns,
	       ntb);
	return 0;
}
