# install_test.cmake - `cmake --install BUILD --prefix PREFIX` puts a
# working `xo` in PREFIX/bin (README: how to put xo on the PATH).
#   -DBUILD=<build dir> -DPREFIX=<temporary prefix>
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}): ${err}")
endif()
if(NOT EXISTS ${PREFIX}/bin/xo)
  message(FATAL_ERROR "no ${PREFIX}/bin/xo after install:\n${out}")
endif()
# run it from the prefix, with PATH pointing there, as a user would
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PATH=${PREFIX}/bin:$ENV{PATH}" xo --version
                RESULT_VARIABLE rc OUTPUT_VARIABLE ver ERROR_VARIABLE err)
file(REMOVE_RECURSE ${PREFIX})
if(NOT rc EQUAL 0 OR NOT ver MATCHES "^xo [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit ([0-9a-f]+|unknown)")
  message(FATAL_ERROR "installed xo --version: exit ${rc}: '${ver}' ${err}")
endif()
message(STATUS "installed and ran: ${ver}")
