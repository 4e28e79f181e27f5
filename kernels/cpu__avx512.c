/*
 * cpu__avx512.c - backend "cpu" kernels at ISA level "avx512" (-mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma):
 * cpu_kernels.inc with 16 float(s) per vector and 8-row GEMM tiles.
 * Compiled with its own flags (kernels/CMakeLists.txt); chosen at init.
 */
#define XO_ISA avx512
#define XO_ISA_NAME "avx512"
#define XO_VW 16
#define XO_MR 8
#include "cpu_kernels.inc"
