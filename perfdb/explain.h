/*
 * explain.h - `xo explain`: per device and batch size, a training step and a
 * predict call measured, predicted by the cost model (cost.h) from the
 * device's probe, both split (split.h) and diagnosed in one sentence; then
 * the crossover batch of the first two devices, measured (with an interval)
 * and predicted, and what would move it. docs/explain.md.
 */
#ifndef XO_PERFDB_EXPLAIN_H
#define XO_PERFDB_EXPLAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cost.h"
#include "xo/cpu.h" /* XO_CPU_PAR_MIN */

#define XO_EXPLAIN_MAX_DEVICES 8
#define XO_EXPLAIN_MAX_BATCHES 32
#define XO_EXPLAIN_MAX_LAYERS 32 /* per-layer kernel times kept for the serial check */

struct xo_explain_options {
	const char *model_path; /* a spec file; NULL: the seed model */
	const char *devices[XO_EXPLAIN_MAX_DEVICES];
	int ndevices; /* 0: cpu and cl when cl opens */
	int64_t batches[XO_EXPLAIN_MAX_BATCHES];
	int nbatches;          /* 0: 1, 2, 4 .. 8192 */
	int repeat;            /* timed reps per point, at least (>= 1) */
	double probe_budget_s; /* per device */
	bool json;             /* out gets one JSON object; the text goes to err */
	FILE *out, *err;
	FILE *progress; /* a line per device and batch as it is measured; NULL: none */
};

/* One measured and predicted step. */
struct xo_explain_point {
	int64_t batch;
	bool training;                               /* train step or predict call */
	double measured_s, measured_lo, measured_hi; /* median and interquartile range */
	int reps;
	struct xo_split measured, predicted; /* predicted.wall_s NAN: no probe */
	struct xo_cost_terms terms;
	double launches; /* per step: counted (cl), structural (cpu) */
	double layer_s[XO_EXPLAIN_MAX_LAYERS]; /* cl train step with recurrent layers: each
	                                        * layer's kernel time, op by op (profile) */
	bool serial_checked; /* layer_s measured: the measured split's serial_s is set
	                      * (xo_cost_serial_measured) */
};

/* Multiply-adds of a cpu call below which the kernels run it on the
 * calling thread alone (kernels/cpu_net.c NET_PAR_MIN, kernels/cpu.c
 * XO_CPU_PAR_MIN): the cost step's pool_min_macs on cpu's fused path. */
#define XO_EXPLAIN_CPU_PAR_MIN ((double)XO_CPU_PAR_MIN)

/* The step the cost model predicts for model m (layer costs lc) at batch n:
 * a training step on a resident batch, or a predict call that writes the
 * batch and reads the probabilities back. launches: counted on a measured
 * step (cl); cpu's thread-pool rounds come from the structure (fused: one
 * per net, one for Adam; op by op: one per op). */
/* s->rnn_lanes from be (xo_backend_rnn_lanes) for the step's first
 * recurrent layer, where xo_explain_cost_step modelled lanes (cl). */
void xo_explain_rnn_lanes(struct xo_backend *be, struct xo_cost_step *s);
void xo_explain_cost_step(struct xo_model *m, const struct xo_layer_cost *lc, bool is_cl,
                          bool training, int64_t n, double launches, bool fused,
                          double op_call_s, struct xo_cost_step *s);

/* FLOP/s of the backend's own dense forward kernel on a fixed GEMM shape
 * (512 x 64 -> 64; more rows, doubling, while the kernel's own time is under
 * a call's fixed time), median of 9, less fixed_s, the smallest call's
 * launch and sync (xo_explain_call_time, measured once by the caller;
 * xo_explain_marginal_rate; NAN when it cannot run): the compute rate
 * kernels of the model's size reach, launches being costed on their own. */
double xo_explain_gemm_rate(struct xo_backend *be, double fixed_s);
/* flops / (call_s - fixed_s): a call's rate without its fixed part (launch,
 * sync). flops / call_s when fixed_s is not a positive time; NAN when the
 * kernel's part (call_s - fixed_s) is under fixed_s (too close to the launch
 * to measure: use a larger call) or call_s is not a positive time. */
double xo_explain_marginal_rate(double flops, double call_s, double fixed_s);
/* Seconds of the backend's smallest dense forward call (1 x 1 -> 1, with its
 * sync), median of 9 (NAN when it cannot run): a host backend's fixed cost
 * per op call, struct xo_cost_step.op_call_s. */
double xo_explain_call_time(struct xo_backend *be);
/* The probe the cost model gets: p with flops lowered to gemm_flops (when
 * that is a rate and below the FMA peak). */
void xo_explain_model_probe(const struct xo_probe *p, double gemm_flops, struct xo_probe *out);

/* What a what-if sentence needs: the crossover of a's and b's predicted
 * training-step curves at batches x[0..n) (cost_step filled per batch). */
enum xo_cross xo_explain_what_if(const struct xo_probe *pa, const struct xo_probe *pb,
                                 const struct xo_cost_step *sa, const struct xo_cost_step *sb,
                                 int n, double *batch);

/* The crossover of the medians a, b (xo_cost_crossover; *batch NAN when
 * none) and its interval from the spreads: *lo where b's fast end (blo)
 * crosses a's slow end (ahi), *hi where b's slow end crosses a's fast end;
 * NAN where those never cross. */
enum xo_cross xo_explain_crossover_interval(const double *x, const double *alo, const double *a,
                                            const double *ahi, const double *blo, const double *b,
                                            const double *bhi, int n, double *batch, double *lo,
                                            double *hi);

/* The one sentence of a crossover: "cl is faster from batch ~256 (measured
 * interval 200..300)" etc. into buf. */
char *xo_explain_cross_sentence(enum xo_cross c, double batch, const char *a, const char *b,
                                int64_t first, int64_t last, char *buf, size_t size);

/* Runs it all. Returns the exit code: 0, or 2 after one line on err (bad
 * device, model file, batch). */
int xo_explain_run(const struct xo_explain_options *o);

#endif /* XO_PERFDB_EXPLAIN_H */
