# Shared utilities every command relies on (suites/test_util.c): error
# messages stay one printable line whatever they quote, and external programs
# run from an argument vector, never through a shell.
add_executable(test_util ${CMAKE_CURRENT_LIST_DIR}/test_util.c)
target_link_libraries(test_util PRIVATE xo_perfdb xo_lib PkgConfig::CMOCKA)
add_test(NAME util COMMAND test_util)
set_tests_properties(util PROPERTIES LABELS "quick" TIMEOUT 60)

# A sanitized build links its programs at a fixed address (CMakeLists.txt,
# -no-pie): in a position-independent one the loader relocates UBSan's
# 370,000 static check records at every start, 17 ms of each of the
# thousands of processes the suites start. readelf's ELF type says which.
if(XO_SANITIZE)
  add_test(NAME util.sanitized_no_pie
           COMMAND sh -c "readelf -h \"$1\" | grep -q 'Type:[[:space:]]*EXEC' || { echo \"$1 is position-independent (readelf: $(readelf -h \"$1\" | grep Type:))\"; exit 1; }"
                   _ $<TARGET_FILE:xo>)
  set_tests_properties(util.sanitized_no_pie PROPERTIES LABELS "quick" TIMEOUT 30)
endif()
