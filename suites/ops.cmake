# The op suites, generated from the shapes files at configure time (STYLE
# rule 13): one ctest test per backend x op x dir (x padding for the ops
# with a padding key) present in suites/shapes/quick.txt (label quick, names
# ops.BACKEND.OP.DIR[.PADDING]) and suites/shapes/nightly.txt (label nightly,
# names nightly.ops.BACKEND.OP.DIR[.PADDING]); cl tests also carry label
# opencl and exit 77 (SKIPPED) without an OpenCL platform unless
# XO_REQUIRE_OPENCL=1. ref is tested against itself too: it checks the
# harness plumbing (fills, guards, views, mistrust) cheaply.
include(${CMAKE_CURRENT_LIST_DIR}/harness_lib.cmake)

add_executable(test_ops ${CMAKE_CURRENT_LIST_DIR}/test_ops.c)
target_link_libraries(test_ops PRIVATE xo_harness PkgConfig::CMOCKA)
if(XO_OPENCL)
  target_compile_definitions(test_ops PRIVATE XO_HAVE_CL)
endif()

add_executable(test_selftest ${CMAKE_CURRENT_LIST_DIR}/test_selftest.c)
target_link_libraries(test_selftest PRIVATE xo_harness PkgConfig::CMOCKA)
add_test(NAME selftest.harness COMMAND test_selftest)
set_tests_properties(selftest.harness PROPERTIES LABELS "selftest;quick")

add_executable(test_badinput ${CMAKE_CURRENT_LIST_DIR}/test_badinput.c)
target_link_libraries(test_badinput PRIVATE xo_model xo_harness PkgConfig::CMOCKA)
add_test(NAME badinput.api COMMAND test_badinput)
set_tests_properties(badinput.api PROPERTIES LABELS "quick")

add_test(NAME ops.tables COMMAND test_ops --tables)
set_tests_properties(ops.tables PROPERTIES LABELS "quick")

# has_bwd of every op, from the one list.
file(STRINGS ${PROJECT_SOURCE_DIR}/include/xo/ops.def xo_opdef_lines REGEX "^XO_OP\\(")
set(xo_ops_without_bwd "")
set(xo_ops_all "")
foreach(l ${xo_opdef_lines})
  if(l MATCHES "^XO_OP\\(([a-z_0-9]+),")
    list(APPEND xo_ops_all ${CMAKE_MATCH_1})
  endif()
  if(l MATCHES "^XO_OP\\(([a-z_0-9]+), *0,")
    list(APPEND xo_ops_without_bwd ${CMAKE_MATCH_1})
  endif()
endforeach()

# The ops with a padding key (their tests are per padding), from the op's
# KEYS_<op> entry in core/params.c: the entry, or the family entry it names,
# holds K_PADDING. ops.padding_keys checks the result against
# `xo check --list`, so a change of that entry's form cannot drop an op.
file(READ ${PROJECT_SOURCE_DIR}/core/params.c xo_params_src)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${PROJECT_SOURCE_DIR}/core/params.c ${PROJECT_SOURCE_DIR}/include/xo/ops.def)
string(REGEX REPLACE "\\\\\n" " " xo_params_src "${xo_params_src}")
string(REGEX MATCHALL "#define KEYS_[A-Za-z0-9_]+[^\n]*" xo_keys_defs "${xo_params_src}")
foreach(d ${xo_keys_defs})
  string(REGEX MATCH "^#define (KEYS_[A-Za-z0-9_]+)[ \t]+(.*)$" m "${d}")
  set(xo_def_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
endforeach()
set(xo_ops_with_padding "")
foreach(op ${xo_ops_all})
  set(v "${xo_def_KEYS_${op}}")
  while(v MATCHES "^ *(KEYS_[A-Za-z0-9_]+) *$")
    set(v "${xo_def_${CMAKE_MATCH_1}}")
  endwhile()
  if(v STREQUAL "")
    message(FATAL_ERROR "suites/ops.cmake: no KEYS_${op} entry in core/params.c")
  endif()
  if(v MATCHES "K_PADDING")
    list(APPEND xo_ops_with_padding ${op})
  endif()
endforeach()
string(REPLACE ";" "," xo_ops_with_padding_arg "${xo_ops_with_padding}")

set(xo_op_backends ref cpu)
if(XO_OPENCL)
  list(APPEND xo_op_backends cl)
endif()

# xo_add_op_tests(SHAPES LABEL PREFIX [BACKENDS be...] [SUFFIX s] [ENV k=v...])
# BACKENDS defaults to every backend; SUFFIX is appended to each test name;
# ENV is the tests' environment.
function(xo_add_op_tests shapes label prefix)
  cmake_parse_arguments(X "" "SUFFIX" "BACKENDS;ENV" ${ARGN})
  if(NOT X_BACKENDS)
    set(X_BACKENDS ${xo_op_backends})
  endif()
  file(STRINGS ${shapes} lines)
  # the tests are generated from the file's lines: a changed shapes file must
  # re-run the configure step, or an incremental build keeps the old list (a
  # new threads.txt line went untested in ci/mutate.sh's reused build dir)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${shapes})
  set(groups "")
  foreach(l ${lines})
    string(REGEX REPLACE "#.*" "" l "${l}")
    string(STRIP "${l}" l)
    if(l STREQUAL "")
      continue()
    endif()
    string(REGEX MATCH "^[a-z_0-9]+" op "${l}")
    set(pad "")
    list(FIND xo_ops_with_padding ${op} haspad)
    if(NOT haspad EQUAL -1)
      set(pad "valid")
      if(l MATCHES "padding=([a-z]+)")
        set(pad ${CMAKE_MATCH_1})
      endif()
    endif()
    set(dirs fwd)
    list(FIND xo_ops_without_bwd ${op} nobwd)
    if(nobwd EQUAL -1)
      list(APPEND dirs bwd)
    endif()
    foreach(dir ${dirs})
      list(APPEND groups "${op}|${dir}|${pad}")
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES groups)
  foreach(be ${X_BACKENDS})
    foreach(g ${groups})
      string(REPLACE "|" ";" parts "${g}")
      list(GET parts 0 op)
      list(GET parts 1 dir)
      list(LENGTH parts np)
      set(pad "")
      if(np GREATER 2)
        list(GET parts 2 pad)
      endif()
      set(name "${prefix}.${be}.${op}.${dir}")
      set(args --backend ${be} --shapes ${shapes} --op ${op} --dir ${dir})
      if(NOT pad STREQUAL "")
        set(name "${name}.${pad}")
        list(APPEND args --padding ${pad})
      endif()
      set(name "${name}${X_SUFFIX}")
      add_test(NAME ${name} COMMAND test_ops ${args})
      set(labels ${label})
      if(be STREQUAL "cl")
        list(APPEND labels opencl)
      endif()
      set_tests_properties(${name} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77)
      if(X_ENV)
        set_tests_properties(${name} PROPERTIES ENVIRONMENT "${X_ENV}")
      endif()
    endforeach()
  endforeach()
endfunction()

xo_add_op_tests(${CMAKE_CURRENT_LIST_DIR}/shapes/quick.txt quick ops)
xo_add_op_tests(${CMAKE_CURRENT_LIST_DIR}/shapes/nightly.txt nightly nightly.ops)
# The cpu backend's thread split (suites/shapes/threads.txt): every threaded
# op above the threshold, on 3 threads (not a power of two, not the default
# 2), as ops.cpu.OP.DIR[.PADDING].t3 (the ISA passes of ci/test.sh match
# '^ops\.cpu\.' and so run them too).
xo_add_op_tests(${CMAKE_CURRENT_LIST_DIR}/shapes/threads.txt quick ops
  BACKENDS cpu SUFFIX .t3 ENV XO_THREADS=3)
# cl's tiled recurrent kernels at the edges of their tiles
# (suites/shapes/rnn_tiles.txt), tiles of up to 4 samples in 32-wide groups,
# as ops.cl.OP.DIR.tiles (PoCL's own row runs one work-item per sample).
if(XO_OPENCL)
  xo_add_op_tests(${CMAKE_CURRENT_LIST_DIR}/shapes/rnn_tiles.txt quick ops
    BACKENDS cl SUFFIX .tiles ENV XO_CL_TUNE=rnn_nb=4,wg=32)
endif()

# The ops found above with a padding key are the ops whose canonical line has
# one (suites/ops_padding_keys.sh).
add_test(NAME ops.padding_keys
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/ops_padding_keys.sh $<TARGET_FILE:xo>
                 ${xo_ops_with_padding_arg})
set_tests_properties(ops.padding_keys PROPERTIES LABELS "quick" TIMEOUT 30)

# `xo check` from the command line, as a user meets it: a valid case
# prints PASSED with the command line that reruns it (exit 0); bad usage and
# invalid cases exit 2 with exactly one line on stderr.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/check_empty_shapes.txt "# no cases\n")
set(XO_CHECK_CLI_CASES
  "pass|0|check|--op|conv1d|len=29|ch=1|filters=16|kernel_size=3"
  "kernel_zero|2|check|--op|conv1d|len=29|ch=1|filters=16|kernel_size=0"
  "kernel_too_long|2|check|--op|conv1d|len=29|ch=1|filters=16|kernel_size=30"
  "overflow|2|check|--op|conv1d|len=29|ch=1|filters=16|kernel_size=3|batch=9223372036854775807"
  "unknown_key|2|check|--op|conv1d|foo=3"
  "unknown_op|2|check|--op|conv3d"
  "unknown_option|2|check|--bogus"
  "op_twice|2|check|--op|relu|--op|dense"
  "unknown_backend|2|check|--op|relu|--backend|gpu9"
  "no_shapes_file|2|check|--shapes|/nonexistent/shapes.txt"
  "empty_shapes|2|check|--shapes|${CMAKE_CURRENT_BINARY_DIR}/check_empty_shapes.txt"
)
# every case PASSED, each with its repro line, and the summary
set(XO_CLI_MATCH_pass "PASSED  XO_CPU_ISA=[a-z0-9]+ xo check --op conv1d --dir fwd .*kernel_size=3.*4 passed, 0 failed")
xo_add_cli_tests(check.cli quick ${XO_CHECK_CLI_CASES})

# What is op-specific comes from ops.def or a per-op entry next to the op's
# family, and what is kind-specific from layers.def or a per-kind table
# entry, not from a switch over the ops or kinds (suites/lint_listswitch.sh names each
# function with one); .selftest shows the guard fails on a planted switch
# over each list and lets a family's switch pass.
add_test(NAME lint.listswitch
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/lint_listswitch.sh ${PROJECT_SOURCE_DIR})
add_test(NAME lint.listswitch.selftest
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/lint_listswitch.sh --self-test)
set_tests_properties(lint.listswitch lint.listswitch.selftest PROPERTIES LABELS "quick" TIMEOUT 30)
