# The device probe (suites/test_probe.c): figures finite
# where defined and NAN where not, the FMA, copy and triad kernels checked
# against the host, orderings, the cpu peak against one thread's x threads,
# the probes table (migration from v3, one row per device, NAN <-> NULL).
add_executable(test_probe ${CMAKE_CURRENT_LIST_DIR}/test_probe.c)
target_link_libraries(test_probe PRIVATE xo_perfdb xo_lib PkgConfig::CMOCKA m)
if(XO_OPENCL)
  target_include_directories(test_probe PRIVATE ${PROJECT_SOURCE_DIR}/cl)
  target_compile_definitions(test_probe PRIVATE XO_HAVE_CL CL_TARGET_OPENCL_VERSION=120)
  target_link_libraries(test_probe PRIVATE OpenCL::OpenCL)
endif()
add_test(NAME probe COMMAND test_probe)
set_tests_properties(probe PROPERTIES LABELS "quick" TIMEOUT 120)
# More pool threads than this machine has CPUs (64, the most XO_THREADS
# takes): the cpu peak still counts each CPU once.
add_test(NAME probe.oversubscribed COMMAND test_probe "test_cpu_flops*")
set_tests_properties(probe.oversubscribed PROPERTIES LABELS "quick" TIMEOUT 120
                     ENVIRONMENT "XO_THREADS=64")

if(Python3_Interpreter_FOUND)
  # `xo probe --json` carries every field (null where NAN), bad devices and
  # budgets exit 2 with one line, `xo perf record` stores a row per device.
  add_test(NAME probe.cli
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/json_outputs.py
                   $<TARGET_FILE:xo> probe ${PROJECT_SOURCE_DIR})
  set_tests_properties(probe.cli PROPERTIES LABELS "quick" TIMEOUT 300)
endif()

# An open, idle cpu backend burns no CPU (suites/test_cpu_idle.c: OpenBLAS's
# server threads stopped, the pool's spin bounded in time).
add_executable(test_cpu_idle ${CMAKE_CURRENT_LIST_DIR}/test_cpu_idle.c)
target_link_libraries(test_cpu_idle PRIVATE xo_lib PkgConfig::CMOCKA m)
add_test(NAME cpu.idle COMMAND test_cpu_idle)
set_tests_properties(cpu.idle PROPERTIES LABELS "quick" TIMEOUT 60)
