/*
 * perf_gen.c - a synthetic history for the store's scale check (issue 14:
 * 10 000 runs keep `xo perf compare` under 1 s and `xo perf report` under
 * 60 s, on either engine). Writes RUNS runs through the store's own
 * xo_perfdb_run_write, one commit each, alternating between TESTBEDS
 * testbeds, each with BENCH op benchmarks of SAMPLES samples (1 ms, 2%
 * noise, a 10% step at the middle commit for benchmark 0).
 *
 *   perf_gen DB RUNS [BENCH [SAMPLES [TESTBEDS]]]
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb.h"

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

int main(int argc, char **argv)
{
	struct xo_perfdb *db;
	long runs, nb, ns, ntb;
	struct xo_perf_result *r;

	if (argc < 3) {
		fprintf(stderr, "usage: perf_gen DB RUNS [BENCH [SAMPLES [TESTBEDS]]]\n");
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
	for (long i = 0; i < runs; i++) {
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
	for (long k = 0; k < nb; k++)
		free(r[k].samples);
	free(r);
	xo_perfdb_close(db);
	printf("perf_gen: %ld runs of %ld benchmarks x %ld samples on %ld testbeds\n", runs, nb, ns,
	       ntb);
	return 0;
}
