/*
 * cpu_net__scalar.c - the fused network path's kernels at ISA level "scalar"
 * (no ISA flags): cpu_net.inc with 1 float(s) per vector.
 * Compiled with its own flags (kernels/CMakeLists.txt); chosen by ISA level.
 */
#define XO_ISA scalar
#define XO_VW  1
#include "cpu_net.inc"
