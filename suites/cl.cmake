# The cl backend's own suite (suites/test_cl.c): no host fallback, device
# memory limits, device choice errors, error names, the time split, views at
# odd offsets, gather's out-of-range flag. Exit 77 = skipped (no OpenCL
# platform); with XO_REQUIRE_OPENCL=1 (CI) a missing platform fails instead.
if(XO_OPENCL)
  add_executable(test_cl ${CMAKE_CURRENT_LIST_DIR}/test_cl.c)
  target_include_directories(test_cl PRIVATE ${PROJECT_SOURCE_DIR}/cl)
  target_compile_definitions(test_cl PRIVATE CL_TARGET_OPENCL_VERSION=120)
  target_link_libraries(test_cl PRIVATE xo_lib PkgConfig::CMOCKA OpenCL::OpenCL)
  add_test(NAME cl COMMAND test_cl)
  set_tests_properties(cl PROPERTIES LABELS "opencl;quick" TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()

# The program compiled offline for GPU targets (nvptx64, spir64; -O0, -O2)
# with every tuning row's options, failing on helpers a clang-based GPU
# driver would leave undefined (suites/cl_offline.sh). Needs no OpenCL
# device: clang only.
if(XO_OPENCL)
  add_executable(cl_program_dump ${CMAKE_CURRENT_LIST_DIR}/cl_program_dump.c)
  target_include_directories(cl_program_dump PRIVATE ${PROJECT_SOURCE_DIR}/cl)
  target_link_libraries(cl_program_dump PRIVATE xo_lib)
  add_test(NAME cl.offline_gpu_compile
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cl_offline.sh $<TARGET_FILE:cl_program_dump>
                   ${CMAKE_CURRENT_BINARY_DIR}/cl_offline --self-test)
  set_tests_properties(cl.offline_gpu_compile PROPERTIES LABELS "opencl;quick" TIMEOUT 300)
endif()

# Every helper in cl/kernels/*.cl is `static inline` (issue 12 item 5): a plain
# `inline` function has C99 inline semantics, so clang-based GPU drivers emit
# an external declaration that nothing defines ("undefined function" at build
# or link time) while PoCL happens to accept it. Any `inline` (or __inline,
# __inline__) on a line without `static` before it fails, comment lines
# excepted; cl.offline_gpu_compile catches the same thing by compiling, this
# catches it without clang and names the line.
add_test(NAME lint.cl_static_inline
         COMMAND sh -c "! grep -n -E '(^|[^_[:alnum:]])(__)?inline(__)?([^_[:alnum:]]|$)' cl/kernels/*.cl | grep -v -E '^[^:]+:[0-9]+:[[:space:]]*(/[*]|[*]|//)' | grep -v -E 'static[[:space:]]+(__)?inline'"
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(lint.cl_static_inline PROPERTIES LABELS "quick" TIMEOUT 30)
