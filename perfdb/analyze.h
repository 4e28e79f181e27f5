/*
 * analyze.h - what compare (compare.c) and detect (detect.c) share
 * (analyze.c): the history order of stored rows, the run-to-run noise of a
 * series, the sections a benchmark is reported in, number formats. Internal
 * to perfdb/.
 */
#ifndef XO_PERFDB_ANALYZE_H
#define XO_PERFDB_ANALYZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb.h"
#include "query.h"

/* Where a benchmark is reported: under test (cpu, cl: alarms), the reference
 * backend, peers (never alarms). */
enum xo_perf_section { SEC_TEST, SEC_REF, SEC_PEER, SEC_COUNT };

/* ---- analyze.c ---- */
double xo_perf_z_two_sided(double alpha);
/* The sections' names in --json output ("test", "ref", "peer"). */
extern const char *const xo_perf_section_key[SEC_COUNT];
void xo_perf_fmt_time(double s, char *buf, size_t size);
void xo_perf_fmt_count(double c, char *buf, size_t size);
bool xo_perf_is_count_metric(const char *metric);
double xo_perf_series_noise(struct xo_perfdb *db, struct xo_perf_order *ord, int64_t bench,
                            int64_t testbed, int64_t upto_run, double alpha, int64_t skip_commit);

/* ---- compare.c ---- */
enum xo_perf_section xo_perf_section_of(const char *device);

#endif /* XO_PERFDB_ANALYZE_H */
