# cl_kernel_list.cmake - cl/embed.cmake's kernel list (cl_kernels.h) names
# every kernel of its sources, in source order, whatever the declaration's
# form, and nothing else: a one-line `__kernel void`, an attribute between
# `__kernel` and `void` or after `void`, the name on the next line, the
# `kernel` keyword; not a helper function (even one named xo_cl_ with a
# parameter named kernel), not a kernel quoted in a comment.
# Usage: cmake -DEMBED=cl/embed.cmake -DWORK=dir -P cl_kernel_list.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/a.cl
"/* __kernel void xo_cl_in_comment(int n) */
static inline float helper(float x) { return x; }
// __kernel void xo_cl_in_line_comment(int n)
__kernel void xo_cl_one_line(__global float *y, int n)
{
	y[0] = helper(1.0f);
}
__kernel __attribute__((reqd_work_group_size(XO_RED_WG, 1, 1))) void
xo_cl_attr_next_line(__global float *y)
{
	y[0] = 0;
}
")
file(WRITE ${WORK}/b.cl
"void xo_cl_not_a_kernel(__global float *y);
__kernel void
	xo_cl_second_file ( __global float *y )
{
	/* a comment with * and ** and a { */
	y[0] = 1;
}
kernel void xo_cl_keyword_kernel(__global float *y, int kernel_size)
{
	y[0] = kernel_size;
}
__kernel void __attribute__((reqd_work_group_size(64, 1, 1))) xo_cl_attr_after_void(int n)
{
}
static inline float xo_cl_helper(float kernel) { return kernel; }
")
execute_process(COMMAND ${CMAKE_COMMAND} -DOUT=${WORK}/s.c -DKERNELS=${WORK}/k.h
                        "-DSOURCES=${WORK}/a.cl|${WORK}/b.cl" -P ${EMBED}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "embed.cmake failed: ${rc}")
endif()
file(READ ${WORK}/k.h got)
string(REGEX MATCHALL "K\\([A-Za-z0-9_]+\\)" got "${got}")
set(want "K(one_line);K(attr_next_line);K(second_file);K(keyword_kernel);K(attr_after_void)")
if(NOT "${got}" STREQUAL "${want}")
  message(FATAL_ERROR "kernel list: got '${got}', want '${want}'")
endif()
message(STATUS "kernel list ok: ${got}")
