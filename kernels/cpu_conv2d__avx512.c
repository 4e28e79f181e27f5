/*
 * cpu_conv2d__avx512.c - the 2-D CNN kernels at ISA level "avx512": cpu_conv2d.inc
 * with 16 float(s) per vector and tiles of 8 rows (2 x 8 for one filter
 * vector), as cpu__avx512.c. Compiled with its own flags (kernels/CMakeLists.txt);
 * chosen by ISA level.
 */
#define XO_ISA avx512
#define XO_VW  16
#define XO_MR  8
#include "cpu_conv2d.inc"
