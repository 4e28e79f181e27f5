/*
 * cpu__scalar.c - backend "cpu" kernels at ISA level "scalar" (no ISA flags: plain x86-64, one float per "vector"):
 * cpu_kernels.inc with 1 float(s) per vector and 4-row GEMM tiles.
 * Compiled with its own flags (kernels/CMakeLists.txt); chosen at init.
 */
#define XO_ISA scalar
#define XO_ISA_NAME "scalar"
#define XO_VW 1
#define XO_MR 4
#include "cpu_kernels.inc"
