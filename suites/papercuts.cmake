# Issue 16 papercuts and self-description (helper F): figures that can be
# true (the FMA peak of `xo bench`), machine-readable output (--json,
# --version, --list), Keras defaults and required keys in `xo check`,
# `xo summary`, and the install rule. Label quick.

# The FMA peak loop of every ISA level against an independent loop.
add_executable(test_peak ${CMAKE_CURRENT_LIST_DIR}/test_peak.c)
target_link_libraries(test_peak PRIVATE xo_lib PkgConfig::CMOCKA)
add_test(NAME peak.loop COMMAND test_peak)
set_tests_properties(peak.loop PROPERTIES LABELS "quick" TIMEOUT 120)

find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  # `xo bench --json`: no kernel above the measured peak without a reason.
  add_test(NAME peak.bench
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/bench_peak.py $<TARGET_FILE:xo>)
  set_tests_properties(peak.bench PROPERTIES LABELS "quick" TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
