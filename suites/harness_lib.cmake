# The comparison harness as a library: the suites (test_ops, test_selftest)
# and `xo check` (cli/) share it. Included from the top-level CMakeLists.txt
# before add_subdirectory(cli); suites/CMakeLists.txt globs it again, hence
# the guard.
if(NOT TARGET xo_harness)
  add_library(xo_harness STATIC ${CMAKE_CURRENT_LIST_DIR}/harness.c
    ${CMAKE_CURRENT_LIST_DIR}/harness_fill.c ${CMAKE_CURRENT_LIST_DIR}/harness_rnn.c
    ${CMAKE_CURRENT_LIST_DIR}/harness_bounds.c ${CMAKE_CURRENT_LIST_DIR}/harness_zeros.c
    ${CMAKE_CURRENT_LIST_DIR}/harness_shapes.c)
  target_include_directories(xo_harness PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(xo_harness PUBLIC xo_lib m)
  # the repro line names the cpu ISA where the cpu backend is built (not in
  # the fuzz build, which leaves kernels/ out)
  if(NOT XO_FUZZ)
    target_compile_definitions(xo_harness PRIVATE XO_HAVE_CPU)
  endif()
endif()
