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
