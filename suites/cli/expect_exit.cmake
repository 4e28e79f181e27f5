# cli/expect_exit.cmake - runs one `xo` command line as a ctest test (cmake -P):
# its exit code must be EXPECT; with EXPECT 2 stderr must be exactly one line
# (the contract of DESIGN section 8); with MATCH, stdout must match it.
#   -DEXPECT=<exit code> -DARGS=<program and arguments separated by |> [-DMATCH=<regex>]
string(REPLACE "|" ";" argv "${ARGS}")
execute_process(COMMAND ${argv} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(STRIP "${err}" err)
string(FIND "${err}" "\n" nl)
if(NOT rc STREQUAL EXPECT)
  message(FATAL_ERROR "exit ${rc}, expected ${EXPECT}\nstdout: ${out}\nstderr: ${err}")
endif()
if(EXPECT STREQUAL 2 AND (err STREQUAL "" OR NOT nl EQUAL -1))
  message(FATAL_ERROR "expected one line on stderr, got: '${err}'")
endif()
if(DEFINED MATCH AND NOT out MATCHES "${MATCH}")
  message(FATAL_ERROR "stdout does not match '${MATCH}':\n${out}")
endif()
message(STATUS "exit ${rc}: ${err}")
