# The checks CI itself runs on its ctest results (ci/lib.sh xo_ctest,
# ci/skips.py): on a real CMake + ctest project with a CMocka suite, an
# unlisted skip fails, a listed one passes, a stale entry is reported, a
# truncated output fails closed (suites/ci_skips.sh). About 5 s: one small
# configure and build, nine ctest runs of six tests.
add_test(NAME ci.skips
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ci_skips.sh ${CMAKE_CURRENT_BINARY_DIR}/ci_skips)
set_tests_properties(ci.skips PROPERTIES LABELS "quick" TIMEOUT 120)
