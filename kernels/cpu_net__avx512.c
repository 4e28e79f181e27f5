/*
 * cpu_net__avx512.c - the fused network path's kernels at ISA level "avx512"
 * (-mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma): cpu_net.inc with 16 float(s) per vector.
 * Compiled with its own flags (kernels/CMakeLists.txt); chosen by ISA level.
 */
#define XO_ISA avx512
#define XO_VW  16
#include "cpu_net.inc"
