/*
 * perf_fixture.h - what the perf store suites (test_perfdb.c,
 * test_perf_workflow.c) share: a scratch directory per run, removed
 * afterwards unless XO_TEST_KEEP is set, and a seeded noise source.
 * Include after cmocka.h, perfdb.h and perfdb/proc.h.
 */
#ifndef XO_PERF_FIXTURE_H
#define XO_PERF_FIXTURE_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sql.h"

static char tmpdir[256];
static uint64_t rng_state; /* each test seeds it */

/* Uniform in [0, 1) (a 64-bit LCG, top 53 bits). */
static inline double uniform(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* Gaussian noise (Box-Muller). */
static inline double gauss(void)
{
	double u = uniform(), v = uniform();

	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static inline int setup_tmp(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/xo-perf-test-XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static inline int teardown_tmp(void **state)
{
	const char *argv[] = {"rm", "-rf", "--", tmpdir, NULL};
	struct xo_proc p = {.argv = argv};
	int code = 1;

	(void)state;
	if (getenv("XO_TEST_KEEP"))
		return 0;
	return xo_proc_run(&p, &code, NULL, NULL) == XO_OK && code == 0 ? 0 : -1;
}

/*
 * A fresh, empty store named name for this test run, its --db in out: a file
 * in tmpdir, or, when XO_TEST_PG holds a PostgreSQL URI (suites/pg_cluster.sh),
 * a schema of that database named for the file ("a.sqlite" -> t_a_sqlite),
 * dropped and created again. The same test body then runs on either engine.
 */
static inline void fixture_store(const char *name, char *out, size_t size)
{
	const char *pg = getenv("XO_TEST_PG");
	char schema[128], sql[320], why[512];
	size_t n;
	struct xo_sql *h = NULL;

	if (!pg || !*pg) {
		snprintf(out, size, "%s/%s", tmpdir, name);
		unlink(out);
		return;
	}
	n = (size_t)snprintf(schema, sizeof(schema), "t_");
	for (const char *p = name; *p && n + 1 < sizeof(schema); p++)
		schema[n++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ? *p : '_');
	schema[n] = '\0';
	snprintf(out, size, "%s&options=-csearch_path%%3D%s", pg, schema);
	snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s", schema,
	         schema);
	if (xo_sql_open(pg, false, true, false, &h, why, sizeof(why)) || xo_sql_exec(h, sql)) {
		fprintf(stderr, "fixture_store: %s: %s\n", name, h ? xo_sql_errmsg(h) : why);
		abort();
	}
	xo_sql_close(h);
}

/* fixture_store's fresh store, opened (a failure fails the test) */
static inline struct xo_perfdb *fixture_open(const char *name)
{
	struct xo_perfdb *db = NULL;
	char path[512];

	fixture_store(name, path, sizeof(path));
	assert_int_equal(xo_perfdb_open(path, &db), XO_OK);
	return db;
}

#endif
