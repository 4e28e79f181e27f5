# Shared utilities every command relies on (suites/test_util.c): error
# messages stay one printable line whatever they quote, and external programs
# run from an argument vector, never through a shell.
add_executable(test_util ${CMAKE_CURRENT_LIST_DIR}/test_util.c)
target_link_libraries(test_util PRIVATE xo_perfdb xo_lib PkgConfig::CMOCKA)
add_test(NAME util COMMAND test_util)
set_tests_properties(util PROPERTIES LABELS "quick" TIMEOUT 60)
