/*
 * cpu_conv2d__avx2.c - the 2-D CNN kernels at ISA level "avx2": cpu_conv2d.inc
 * with 8 float(s) per vector and tiles of 6 rows (2 x 6 for one filter
 * vector), as cpu__avx2.c. Compiled with its own flags (kernels/CMakeLists.txt);
 * chosen by ISA level.
 */
#define XO_ISA avx2
#define XO_VW  8
#define XO_MR  6
#include "cpu_conv2d.inc"
