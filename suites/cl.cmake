# The cl backend's own suite (suites/test_cl.c): no host fallback, device
# memory limits, device choice errors, error names, the time split, views at
# odd offsets, gather's out-of-range flag, events that could not be timed. Exit 77 = skipped (no OpenCL
# platform); with XO_REQUIRE_OPENCL=1 (CI) a missing platform fails instead.
if(XO_OPENCL)
  add_executable(test_cl ${CMAKE_CURRENT_LIST_DIR}/test_cl.c)
  target_include_directories(test_cl PRIVATE ${PROJECT_SOURCE_DIR}/cl)
  target_compile_definitions(test_cl PRIVATE CL_TARGET_OPENCL_VERSION=120)
  target_link_libraries(test_cl PRIVATE xo_lib PkgConfig::CMOCKA OpenCL::OpenCL)
  add_test(NAME cl COMMAND test_cl)
  set_tests_properties(cl PROPERTIES LABELS "opencl;quick" TIMEOUT 300 SKIP_RETURN_CODE 77)

  # Device choice and tuning rows over synthetic candidate lists (no device
  # needed): unavailable devices, a failing platform, GPU first, pocl row
  # for CPUs only.
  add_executable(test_cl_choose ${CMAKE_CURRENT_LIST_DIR}/test_cl_choose.c)
  target_include_directories(test_cl_choose PRIVATE ${PROJECT_SOURCE_DIR}/cl)
  target_compile_definitions(test_cl_choose PRIVATE CL_TARGET_OPENCL_VERSION=120)
  target_link_libraries(test_cl_choose PRIVATE xo_lib PkgConfig::CMOCKA OpenCL::OpenCL)
  add_test(NAME cl.choose COMMAND test_cl_choose)
  set_tests_properties(cl.choose PROPERTIES LABELS "opencl;quick" TIMEOUT 30)

  # XO_REQUIRE_OPENCL=gpu (ci/gpu.sh) must fail when the chosen device is no
  # GPU, with the reason, instead of testing the CPU. XO_CL_DEVICE=portable
  # picks PoCL's platform, whose device (Debian's pocl-opencl-icd) is a CPU,
  # also on a machine with a GPU. Skipped (77) where PoCL is not installed.
  add_test(NAME cl.require_gpu
           COMMAND sh -c "out=$(XO_CL_DEVICE=portable XO_REQUIRE_OPENCL=gpu \"$1\" 2>&1); rc=$?; echo \"$out\" | tail -n 3; case \"$out\" in *'no OpenCL platform'*|*'no OpenCL device matches'*) exit 77;; esac; [ $rc -ne 0 ] && [ $rc -ne 77 ] && echo \"$out\" | grep -q 'XO_REQUIRE_OPENCL=gpu but the chosen device .* is not a GPU (CL_DEVICE_TYPE [A-Za-z]*;'"
                   sh $<TARGET_FILE:test_cl>)
  set_tests_properties(cl.require_gpu PROPERTIES LABELS "opencl;quick" TIMEOUT 60 SKIP_RETURN_CODE 77)

  # xo seed reports untimed_events, 0 on a working driver (suites/cl_seed_timed.py).
  if(Python3_EXECUTABLE)
    add_test(NAME cl.seed_events_timed
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cl_seed_timed.py $<TARGET_FILE:xo>)
    set_tests_properties(cl.seed_events_timed PROPERTIES LABELS "opencl;quick" TIMEOUT 300
                         SKIP_RETURN_CODE 77)
  endif()
endif()

# The program compiled offline for GPU targets (nvptx64, spir64; -O0, -O2)
# with every tuning row's options, failing on helpers a clang-based GPU
# driver would leave undefined (suites/cl_offline.sh). Needs no OpenCL
# device: clang only.
if(XO_OPENCL)
  add_executable(cl_program_dump ${CMAKE_CURRENT_LIST_DIR}/cl_program_dump.c)
  target_include_directories(cl_program_dump PRIVATE ${PROJECT_SOURCE_DIR}/cl)
  target_link_libraries(cl_program_dump PRIVATE xo_lib)
  # one test a tuning row (the self-test with the first), each in a folder
  # of its own: the five rows at once ran 90 s on a loaded machine
  foreach(row default nvidia amd intel pocl)
    set(selftest "")
    if(row STREQUAL "default")
      set(selftest --self-test)
    endif()
    add_test(NAME cl.offline_gpu_compile.${row}
             COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cl_offline.sh $<TARGET_FILE:cl_program_dump>
                     ${CMAKE_CURRENT_BINARY_DIR}/cl_offline/${row} ${selftest} ${row})
    set_tests_properties(cl.offline_gpu_compile.${row} PROPERTIES LABELS "opencl;quick" TIMEOUT 300)
  endforeach()
  # its cache of passed rows keeps only passes, by content
  # (suites/cl_offline_cache.sh: a stand-in dump tool, two tiny programs)
  add_test(NAME cl.offline_gpu_compile.cache
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cl_offline_cache.sh ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/cl_offline_cache)
  set_tests_properties(cl.offline_gpu_compile.cache PROPERTIES LABELS "opencl;quick" TIMEOUT 120)
endif()

# Every helper in cl/kernels/*.cl is `static inline`: a plain
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

# The sanitizer stage's environment on an NVIDIA OpenCL host (ci/lib.sh
# xo_asan_options; docs/opencl.md "Sanitizers on an NVIDIA host"), with fake
# clinfo output and ICD files: needs no GPU and no OpenCL.
add_test(NAME cl.asan_nvidia_env COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cl_asan_env.sh)
set_tests_properties(cl.asan_nvidia_env PROPERTIES LABELS "quick" TIMEOUT 30)

# ci/gpu.sh on this machine (no GPU; XO_CL_DEVICE=portable elsewhere): exit 2
# with a one-line reason before any stage, never a run on the CPU
# (suites/ci_gpu_nogpu.sh; --no-install --no-build, so nothing is installed
# or built).
if(XO_OPENCL)
  add_test(NAME ci.gpu_no_gpu
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ci_gpu_nogpu.sh ${PROJECT_BINARY_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/ci_gpu_nogpu)
  set_tests_properties(ci.gpu_no_gpu PROPERTIES LABELS "quick" TIMEOUT 60)
endif()

# The kernel list is generated from the cl/kernels sources (cl/embed.cmake):
# it finds every kernel whatever the declaration's form, and nothing else
# (suites/cli/cl_kernel_list.cmake; needs no OpenCL).
add_test(NAME cl.kernel_list
         COMMAND ${CMAKE_COMMAND} -DEMBED=${PROJECT_SOURCE_DIR}/cl/embed.cmake
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/cl_kernel_list -P
                 ${CMAKE_CURRENT_LIST_DIR}/cli/cl_kernel_list.cmake)
set_tests_properties(cl.kernel_list PROPERTIES LABELS "quick" TIMEOUT 30)
