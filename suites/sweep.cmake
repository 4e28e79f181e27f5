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
# op|paddings, as the table in test_sweep.c holds them
set(xo_sweep_groups
  "conv1d|valid,same,causal"
  "conv2d|valid,same"
  "max_pooling1d|valid,same"
  "average_pooling1d|valid,same"
  "max_pooling2d|valid,same"
  "average_pooling2d|valid,same")
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
        endif()
        set_tests_properties(${name} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77
                             TIMEOUT 120)
      endforeach()
    endforeach()
  endforeach()
endforeach()
