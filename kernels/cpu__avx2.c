/*
 * cpu__avx2.c - backend "cpu" kernels at ISA level "avx2" (-mavx2 -mfma):
 * cpu_kernels.inc with 8 float(s) per vector and 6-row GEMM tiles.
 * Compiled with its own flags (kernels/CMakeLists.txt); chosen at init.
 */
#define XO_ISA avx2
#define XO_ISA_NAME "avx2"
#define XO_VW 8
#define XO_MR 6
#include "cpu_kernels.inc"
