/*
 * cpu_conv2d__scalar.c - the 2-D CNN kernels at ISA level "scalar": cpu_conv2d.inc
 * with 1 float(s) per vector and tiles of 4 rows (2 x 4 for one filter
 * vector), as cpu__scalar.c. Compiled with its own flags (kernels/CMakeLists.txt);
 * chosen by ISA level.
 */
#define XO_ISA scalar
#define XO_VW  1
#define XO_MR  4
#include "cpu_conv2d.inc"
