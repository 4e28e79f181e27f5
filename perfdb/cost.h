/*
 * cost.h - the cost model of `xo explain`: from a device's probe (struct
 * xo_probe), a model's per-layer costs (struct xo_layer_cost) and a step's
 * structure (launches, transfers), a predicted wall time split into the same
 * four parts as a measured step (perfdb/split.h):
 *
 *   launch   = launches x probe.launch_s
 *            + h2d_count x h2d_lat_s + d2h_count x d2h_lat_s
 *   transfer = h2d_bytes / h2d_bw + d2h_bytes / d2h_bw
 *   compute  = sum over layers (and the step's extra ops and extra_bytes)
 *              of the roofline max(flops / probe.flops, bytes / probe.mem_bw)
 *            + ops x op_call_s (a host backend's fixed cost per op call)
 *            + pool_s (below)
 *   other    = 0 (nothing in the probe predicts host work outside the device)
 *
 * A blocking copy's latency (a 4-byte copy, enqueue to completion) is time
 * the device sits idle waiting on the host: the measured split counts it as
 * launch and sync latency, so the prediction does too; the transfer part is
 * the time the bus is busy, bytes over bandwidth.
 * The cpu fused path's thread pool (pool_min_macs > 0, probe.units u > 1):
 * the roofline's FLOP time, c (compute_flops_s, at the GEMM probe's rate of
 * the whole pool), assumes all u threads work from the start. The
 * kernel runs a call of fewer multiply-adds than pool_min_macs (forward
 * multiply-adds n x sum(flops_fwd) / 2, x3 in training, as kernels/cpu_net.c
 * counts them) on the caller's thread alone: pool_s = c x (u - 1). Otherwise
 * the caller starts alone and the workers join after probe.handoff_s (the
 * probe's hand-off: ~0.1 us while they spin, tens of us when they must be
 * woken or wait for a core), taking parts from then on: when c x u <=
 * handoff_s the caller finishes alone (pool_s = c x (u - 1)), else pool_s =
 * handoff_s x (1 - 1/u).
 * Recurrent layers (layer.steps T > 0): the T steps of a pass run in series,
 * each waiting for the last (h_t needs h_{t-1}); only the batch, and the
 * units within a step, are parallel. However fast the device, a pass costs
 * at least T x the time of one step at this batch's parallel width:
 *   step  = probe.step_s (the serial step latency: a barrier and a
 *           global-memory round trip on cl, a GEMM call and a gate pass on
 *           cpu) + step_macs / rnn_lanes x probe.lane_mac_s (the multiply-
 *           adds of one sample's step that one work-item runs as a
 *           dependent chain; rnn_lanes 0: not modelled, the cpu)
 *   serial = T x step_fwd (+ T x step_bwd in training, back through time)
 *   layer  = max(roofline, serial)
 * serial_s (struct xo_cost_terms, and the split's serial_s) sums the
 * layers where serial won, so the diagnosis can name them.
 * Attention layers (layer.heads > 0) likewise cost max(roofline, their
 * serial part), xo_cost_attention's serial_s (cpu: the per-(sample, head)
 * small GEMM calls over the pool; cl: a work-item's chain), summed in
 * attention_serial_s where it won (the attention line names it).
 * A probe figure that is NAN (a host backend has no transfers) contributes 0.
 * Every term is kept (struct xo_cost_terms) so explain can print it.
 * docs/explain.md states the formula, the conventions and the accuracy.
 */
#ifndef XO_PERFDB_COST_H
#define XO_PERFDB_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "split.h"
#include "xo.h"

/* One step to predict: what the model does, at which batch, in which mode. */
struct xo_cost_step {
	const struct xo_layer_cost *layers; /* nlayers entries */
	int nlayers;
	int64_t params;              /* parameters (Adam's traffic in training) */
	int64_t in_size;             /* input elements per sample (the fused path's traffic) */
	int64_t classes;             /* outputs per sample (loss and accuracy traffic) */
	int64_t batch;               /* samples in the step, >= 1 */
	bool training;               /* a training step (fwd + bwd + Adam) or a predict call */
	bool fused;                  /* the backend's fused path: a sample's activations stay in
	                              * cache or local memory, so only the model's input and
	                              * output (and weights) count as memory traffic */
	double launches;             /* device launches (cl) or thread-pool rounds (cpu) */
	double extra_bytes;          /* the backend's own per-step traffic (cpu fused training:
	                              * packed weights, per-part gradient sums) */
	double h2d_bytes, h2d_count; /* host-to-device copies of the step */
	double d2h_bytes, d2h_count; /* device-to-host copies of the step */
	double ops;                  /* op calls in the step (the op-by-op path's count; the
	                              * fused path runs the same layers' loops) */
	double op_call_s;            /* a host backend's fixed time per op call (the smallest
	                              * dense call, xo_explain_call_time), 0 on a device whose
	                              * launch latency already carries it */
	double pool_min_macs;        /* cpu fused path: multiply-adds below which a call runs
	                              * on the caller's thread alone; 0 = no pool model */
	double rnn_lanes;            /* work-items one sample's recurrent step is spread over
	                              * (cl/kernels/rnn.cl: 1); 0 = its chain not modelled */
	bool cl;                     /* the cl backend: an attention layer's serial part is
	                              * its lane chain, else the cpu's per-(sample, head)
	                              * GEMM calls (xo_cost_attention) */
};

/* The terms of a prediction, each in seconds. */
struct xo_cost_terms {
	double launch_s;        /* launches x launch_s */
	double copy_lat_s;      /* h2d_count x h2d_lat_s + d2h_count x d2h_lat_s */
	double h2d_s, d2h_s;    /* bytes / bw, each direction */
	double flops, bytes;    /* the step's totals (layers + extra ops) */
	double compute_flops_s; /* sum of the per-layer flop times ... */
	double compute_bytes_s; /* ... and byte times (the roofline takes the max per layer) */
	double op_fixed_s;      /* ops x op_call_s */
	double pool_macs;       /* the pool model's multiply-adds of the call (0 if none) */
	int pool_threads;       /* threads the pool model gives the call (0 if none) */
	double pool_s;          /* the pool's added time: fewer threads, late workers */
	double compute_s;       /* sum over layers of the max, plus op_fixed_s and pool_s */
	int flop_bound_layers;  /* layers where flops / flops_rate won */
	double serial_s;        /* recurrent layers where the serial steps won: their time */
	double attention_serial_s; /* attention layers where their serial part won: its time */
	double serial_steps;    /* time steps run in series in the step, all recurrent
	                         * layers (T per pass, 2 passes in training) */
};

/* Predicts step on probe p into out (parts add up to out->wall_s; out->
 * launches = step->launches) and, when terms is not NULL, its terms. */
void xo_cost_predict(const struct xo_probe *p, const struct xo_cost_step *step,
                     struct xo_split *out, struct xo_cost_terms *terms);

/* The measured side of the serial term: given the measured kernel time of
 * each layer of a training step (layer_s[nlayers], seconds, fwd + bwd; e.g.
 * xo_model_bench_profile_step on cl), a recurrent layer's time is taken as
 * serial steps when its time per step (layer_s / passes / T) is nearer,
 * in log ratio, to the predicted serial step than to the roofline's time per
 * step: |ln(k / step)| < |ln(k / roof_step)|. Such layers' measured times
 * go into measured->serial_s (at most its compute part), the leading one's
 * measured time per step into serial_step_s. Returns the number of layers
 * attributed. */
int xo_cost_serial_measured(const struct xo_probe *p, const struct xo_cost_step *step,
                            const double *layer_s, struct xo_split *measured);

/*
 * A multi_head_attention layer (layer.heads > 0) in one step, split into
 * the parts `xo explain` names (docs/explain.md). Per sample, with h
 * heads, Tq query and Tk key rows, widths dk and dv:
 *   GEMM-shaped  the four projections (dense GEMMs over batch x T rows:
 *                flops_fwd less the two products below) and per (sample,
 *                head) the scores Q K^T (2 Tq Tk dk h) and the weighted sum
 *                P V (2 Tq Tk dv h); training 3x (the backward's products
 *                are twice the forward's): flops / probe.flops
 *   memory-bound the softmax over the Tq x Tk x h scores: per score an exp
 *                (~20 FLOP, vector; the cpu's fused softmax counts it so)
 *                and on cpu a write and a read of 4 bytes, on cl (no score
 *                stored) the K row read for the maximum, the sum and the
 *                output and the V row once, 4 (3 dk + dv) bytes; 3x in
 *                training (P recomputed, dP read, dS written): max of the
 *                two times
 *   head split/merge  none on cpu and cl: the heads are strided views of
 *                the projections' [batch][T][h x d] rows (no copy)
 *   serial       cpu: batch x h pairs, each its own small GEMM calls in
 *                a chain (2 forward, 5 backward), the pairs spread over
 *                probe.units threads: calls / units x probe.step_s (a
 *                small GEMM call's latency); cl: one work-item per (sample,
 *                query row, head) runs Tk x (3 dk + dv) dependent
 *                multiply-adds (each score computed for the row maximum,
 *                the sum and the output), the backward's passes about
 *                twice that: chain x probe.lane_mac_s, a floor however
 *                many work-items run at once
 * bound names the largest of the three: "GEMM", "softmax" or "serial".
 */
struct xo_cost_attention {
	double proj_flops, scores_flops, wsum_flops; /* the step's, training 3x */
	double gemm_s;                  /* (proj + scores + wsum) / probe.flops */
	double scores;                  /* score elements in the step (batch x h x Tq x Tk) */
	double softmax_bytes, softmax_s;
	double pairs;                   /* (sample, head) pairs */
	double calls;                   /* cpu: per-pair GEMM calls in the step */
	double chain_macs;              /* cl: one work-item's chain in the step */
	double serial_s;                /* cpu: calls / units x step_s; cl: chain x lane_mac_s */
	double roofline_s;              /* the layer's roofline: its term in xo_cost_predict is
	                                 * max(roofline_s, serial_s) */
	const char *bound;              /* "GEMM", "softmax" or "serial" */
};
void xo_cost_attention(const struct xo_probe *p, const struct xo_cost_step *step,
                       const struct xo_layer_cost *c, struct xo_cost_attention *out);

/*
 * Where curve b (e.g. cl) first becomes faster than curve a (cpu), both
 * sampled at the same increasing batch sizes x[0..n): the batch where
 * log(b/a) crosses 0, interpolated linearly in log2(batch) between the two
 * samples around the first sign change from b slower to b faster. Returns
 * XO_CROSS_AT with *batch set, XO_CROSS_BELOW when b is already faster at
 * x[0] (*batch = x[0]), XO_CROSS_NONE when b is never faster.
 */
enum xo_cross { XO_CROSS_NONE, XO_CROSS_AT, XO_CROSS_BELOW };
enum xo_cross xo_cost_crossover(const double *x, const double *a, const double *b, int n,
                                double *batch);

#endif /* XO_PERFDB_COST_H */
