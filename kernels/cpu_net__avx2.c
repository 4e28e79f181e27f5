/*
 * cpu_net__avx2.c - the fused network path's kernels at ISA level "avx2"
 * (-mavx2 -mfma): cpu_net.inc with 8 float(s) per vector.
 * Compiled with its own flags (kernels/CMakeLists.txt); chosen by ISA level.
 */
#define XO_ISA avx2
#define XO_VW  8
#include "cpu_net.inc"
