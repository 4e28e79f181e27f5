/*
 * xo/cpu.h - what code outside kernels/ may know of the cpu backend: its ISA
 * levels (the one chosen, its name and vector width), the most threads it
 * runs, the work below which an op stays on one thread (the cost model's
 * figure too), and the FMA peak measurement `xo bench` and the probe report.
 * The kernels, their argument structs and the context stay in kernels/cpu.h.
 */
#ifndef XO_CPU_H
#define XO_CPU_H

/* Multiply-adds (or element operations) below which an op runs on the calling
 * thread alone: a task hand-off to a spinning worker costs well under a
 * microsecond, this much work about two. At batch 32 only the second
 * convolution of the seed model (344k) is split; its other layers stay on the
 * caller. The one value for every cpu kernel file, the fused path and the cost
 * model (perfdb/explain.h). */
#define XO_CPU_PAR_MIN 300000

/* Most threads of the cpu backend's pool (XO_THREADS, `xo bench --threads`). */
#define XO_CPU_MAX_THREADS 64

enum xo_cpu_isa { XO_CPU_ISA_SCALAR, XO_CPU_ISA_AVX2, XO_CPU_ISA_AVX512, XO_CPU_ISA_COUNT };

/* The ISA level this process would choose (CPU features, XO_CPU_ISA). */
enum xo_cpu_isa xo_cpu_isa_detect(void);
/* The kernels' name of a level ("scalar", "avx2", "avx512") and its vector
 * width in floats (cpu_probe.c). */
const char *xo_cpu_isa_name(enum xo_cpu_isa isa);
int xo_cpu_isa_floats(enum xo_cpu_isa isa);
/* Single-precision FLOP per second of one thread running the FMA loop of
 * the given ISA for about seconds of its own CPU time (CLOCK_THREAD_CPUTIME_ID,
 * so time other processes hold the core does not lower it). */
double xo_cpu_fma_peak(enum xo_cpu_isa isa, double seconds);
/* The sum of n threads' xo_cpu_fma_peak(isa, seconds) run at once, the best
 * of tries (cpu_probe.c; `xo bench` and the probe's flops). */
double xo_cpu_fma_peak_threads(enum xo_cpu_isa isa, int n, double seconds, int tries);
/* How many threads a peak of nthreads can count: at most one per online CPU
 * (threads timed in CPU time that share a core would each count it whole). */
int xo_cpu_peak_threads(int nthreads);

/* The cpu attention op's forward one step at a time, for `xo bench
 * --layers`: each runs over every (sample, head) pair of a forward call's
 * arguments a (as xo_op_run takes them) with the op's own thread split and
 * per-thread scratch, which holds S, then P, between the steps: SOFTMAX
 * and WSUM read what the last SCORES (or SOFTMAX) left there, so a caller
 * runs SCORES first. Only the timing means anything; o is written by WSUM.
 * XO_EINVAL for a backend that is not cpu or a part out of range. */
struct xo_backend;
struct xo_op_args;
enum xo_cpu_attn_part {
	XO_CPU_ATTN_SCORES,  /* S = Q K^T / sqrt(dk): a GEMM of Tq x dk x Tk per pair */
	XO_CPU_ATTN_SOFTMAX, /* P = the row softmax of S: vector exp, no GEMM */
	XO_CPU_ATTN_WSUM,    /* O = P V: a GEMM of Tq x Tk x dv per pair */
	XO_CPU_ATTN_PART_COUNT
};
enum xo_status xo_cpu_attention_part(struct xo_backend *be, const struct xo_op_args *a,
				     enum xo_cpu_attn_part part);

#endif /* XO_CPU_H */
