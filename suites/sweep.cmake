# The geometry sweep (suites/test_sweep.c): every small size, window, stride
# and dilation of the windowed ops against ref, one ctest test per backend x
# op x dir x padding, named sweep.BACKEND.OP.DIR.PADDING, label quick (cl's
# also opencl, exit 77 = SKIPPED without a platform unless
# XO_REQUIRE_OPENCL=1). ref against itself is left out: the sweep is about
# the optimized backends' index arithmetic.
add_executable(test_sweep ${CMAKE_CURRENT_LIST_DIR}/test_sweep.c)
target_link_libraries(test_sweep PRIVATE xo_harness PkgConfig::CMOCKA)

set(xo_sweep_backends cpu)
if(XO_OPENCL)
  list(APPEND xo_sweep_backends cl)
endif()
# op|paddings, read from the table in test_sweep.c (each row's "op",
# "paddings"), so a new sweep is one row there
file(READ ${CMAKE_CURRENT_LIST_DIR}/test_sweep.c xo_sweep_src)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_CURRENT_LIST_DIR}/test_sweep.c)
string(FIND "${xo_sweep_src}" "sweep_table[] = {" at)
string(SUBSTRING "${xo_sweep_src}" ${at} -1 xo_sweep_src)
string(REGEX MATCHALL "\\{\"[a-z0-9_]+\",[ \t\r\n]*\"[a-z ]+\"" xo_sweep_rows
       "${xo_sweep_src}")
set(xo_sweep_groups "")
foreach(r ${xo_sweep_rows})
  string(REGEX REPLACE "^\\{\"([a-z0-9_]+)\",[ \t\r\n]*\"([a-z ]+)\"$" "\\1|\\2" g "${r}")
  string(REPLACE " " "," g "${g}")
  list(APPEND xo_sweep_groups "${g}")
endforeach()
if(NOT xo_sweep_groups)
  message(FATAL_ERROR "suites/sweep.cmake: no rows found in test_sweep.c's sweep_table")
endif()
foreach(be ${xo_sweep_backends})
  foreach(g ${xo_sweep_groups})
    string(REGEX REPLACE "[|,]" ";" parts "${g}")
    list(GET parts 0 op)
    list(SUBLIST parts 1 -1 pads)
    foreach(pad ${pads})
      foreach(dir fwd bwd)
        set(name sweep.${be}.${op}.${dir}.${pad})
        add_test(NAME ${name} COMMAND test_sweep --backend ${be} --op ${op} --dir ${dir}
                 --padding ${pad})
        set(labels quick sweep)
        if(be STREQUAL "cl")
          list(APPEND labels opencl)
          # PoCL's basic device, which runs a launch's work-groups one
          # after another in the calling thread: the sweep's thousands of
          # tiny launches spent most of their CPU time handing each launch
          # to the pthread device's worker and waiting for it (futex wakes
          # and context switches; conv2d bwd same: 3.7 CPU-s on the pthread
          # device with one worker, 0.8 on basic, 2-core EPYC). The kernels
          # are the same PoCL compiles; work-groups never depend on one
          # another (Oclgrind checks the kernels in the races stage); and
          # the windowed ops' launch shapes do not read the compute units,
          # which basic has one of (only the recurrent kernels' tiling
          # does, and they are not swept). Elsewhere (an NVIDIA host) this
          # only narrows PoCL's own device list.
          set_tests_properties(${name} PROPERTIES ENVIRONMENT "POCL_DEVICES=basic")
        endif()
        set_tests_properties(${name} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77
                             TIMEOUT 120)
      endforeach()
    endforeach()
  endforeach()
endforeach()
