/*
 * report.h - what the parts of `xo perf report` and `xo perf advise` share:
 * the answer (answer.c: crossover, diagnosis), the HTML and gnuplot
 * strings (report_text.c), the plots (report_plots.c) and the history
 * (report_history.c); advise.c says the answer as text. Internal to perfdb/.
 */
#ifndef XO_PERFDB_REPORT_H
#define XO_PERFDB_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "query.h"

/*
 * The cl/cpu crossover and its interval, claimed only where the per-batch
 * table shows one (state XS_CROSS): at some batches cpu is faster with the
 * 95% CIs apart, at every larger decided batch cl is, and no batch decides
 * the other way again (batches whose CIs overlap are "too close to tell" and
 * decide nothing). at: the crossing of the medians between the last batch
 * cpu wins and the first cl wins; lo: of the optimistic curves for cl (cl's
 * CI low against cpu's CI high), hi: of the pessimistic ones (cl's CI high
 * against cpu's CI low), each held inside those two batches and around at.
 * Each is a batch (> 0), -1 (cl faster at every measured batch) or 0 (no
 * crossing in the measured range).
 *
 * Otherwise the sentence says what the table shows: cl faster at every batch
 * (XS_CL_EVERYWHERE, by the medians; the table gives cl some batches and cpu
 * none), no crossing of the medians with cpu winning some batches and cl
 * none (XS_NONE), every
 * batch too close (XS_UNCLEAR), one device winning some batches with the rest
 * too close while the medians cross (XS_ONE_SIDE), or both winning batches
 * in alternation or cl first (XS_MIXED). Those claim no batch: at, lo, hi 0.
 */
enum xo_perf_cross_state {
	XS_NOT_BOTH,
	XS_CROSS,
	XS_CL_EVERYWHERE,
	XS_NONE,
	XS_UNCLEAR,
	XS_ONE_SIDE,
	XS_MIXED
};

struct xo_perf_cross {
	bool both; /* cpu and cl both measured at a common batch */
	enum xo_perf_cross_state state;
	double at, lo, hi;  /* see above */
	int64_t bmin, bmax; /* the smallest and largest batch both measured */
	char cpu_wins[256], cl_wins[256], unclear[256]; /* "1, 64 and 4096" */
};

#define XO_PERF_MAX_DIAG 32

/* The answer for one workload of a model. */
struct xo_perf_answer_wl {
	const char *what;                         /* "train_step" or "predict" */
	struct xo_perf_curve cv[XO_PERF_MAX_DEV]; /* own devices of the latest run, then peers */
	int ncv;
	int64_t run;            /* the latest own run that measured it (0: none) */
	struct xo_perf_cross x; /* cl vs cpu */
};

/* The answer for one model: what the report's first screen, its text
 * summary and `xo perf advise` lead with. */
struct xo_perf_answer {
	char model[64];                 /* as stored */
	struct xo_perf_answer_wl wl[2]; /* train_step, predict */
	int64_t run;                    /* the latest own run of either (0: none measured) */
	int ndiag;
	char diag[XO_PERF_MAX_DIAG][320]; /* one sentence each */
};

/* ---- report_text.c ---- */
void xo_perf_safe_name(const char *name, char *out, size_t size);
void xo_perf_gp_safe(const char *in, char *out, size_t size);
void xo_perf_html_escape(FILE *f, const char *s);

/* ---- answer.c ---- */
const struct xo_perf_curve *xo_perf_find_curve(const struct xo_perf_curve *cv, int n,
                                               const char *dev);
const char *xo_perf_faster_of(double cpu_lo, double cpu_med, double cpu_hi, double cl_lo,
                              double cl_med, double cl_hi);
void xo_perf_cross_find(const struct xo_perf_curve *cpu, const struct xo_perf_curve *cl,
                        struct xo_perf_cross *x);
void xo_perf_fmt_bound(double v, const struct xo_perf_cross *x, char *buf, size_t size);
bool xo_perf_cross_bounded(const struct xo_perf_cross *x);
const char *xo_perf_cross_state_name(const struct xo_perf_cross *x);
char *xo_perf_cross_sentence(const struct xo_perf_cross *x, char *buf, size_t size);
void xo_perf_fmt_ci(double med, double lo, double hi, char *buf, size_t size);
bool xo_perf_own_device(const char *d);
enum xo_status xo_perf_answer_load(struct xo_perfdb *db, const char *model,
                                   struct xo_perf_answer *a);
bool xo_perf_answer_cl_on_cpu(struct xo_perfdb *db, const struct xo_perf_answer *a);
void xo_perf_model_name(const char *arg, char *out, size_t size);
enum xo_status xo_perf_model_check(struct xo_perfdb *db, const char *model);

/* ---- report_plots.c ---- */
enum xo_status xo_perf_write_split(struct xo_perfdb *db, const char *outdir, FILE *gp, FILE *html,
                                   const char *model_raw, const char *what, int64_t run);
enum xo_status xo_perf_write_answer(struct xo_perfdb *db, const char *outdir, FILE *gp, FILE *html,
                                    const struct xo_perf_answer *a);
enum xo_status xo_perf_write_layers(struct xo_perfdb *db, const char *outdir, FILE *gp, FILE *html,
                                    const char *model_raw, int64_t run);

/* ---- report_history.c ---- */
void xo_perf_bench_group(const char *name, const char *device, char *out, size_t size);
enum xo_status xo_perf_write_histories(struct xo_perfdb *db, const char *outdir, FILE *gp,
                                       FILE *html, int64_t only, int64_t *nhist);

#endif /* XO_PERFDB_REPORT_H */
