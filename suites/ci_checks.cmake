# The checks CI itself runs on its ctest results (ci/lib.sh xo_ctest,
# ci/skips.py): on a real CMake + ctest project with a CMocka suite, an
# unlisted skip fails, a listed one passes, a stale entry is reported, a
# truncated output fails closed (suites/ci_skips.sh). About 5 s: one small
# configure and build, nine ctest runs of six tests.
add_test(NAME ci.skips
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ci_skips.sh ${CMAKE_CURRENT_BINARY_DIR}/ci_skips)
set_tests_properties(ci.skips PROPERTIES LABELS "quick" TIMEOUT 120)

# CI's stage times as perf series (ci/lib.sh run_stage and
# xo_ci_times_store, suites/ci_times.sh): a stage's CPU time is measured,
# two jobs' fake times go into a fresh store through `xo perf import` and
# read back through compare and detect, a failed stage is left out, an
# unwritable store is one line. About 3 s: ten imports and four compares.
add_test(NAME ci.times
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ci_times.sh $<TARGET_FILE:xo>
                 ${CMAKE_CURRENT_BINARY_DIR}/ci_times)
set_tests_properties(ci.times PROPERTIES LABELS "quick" TIMEOUT 60)

# When ci/test.sh runs the mutation tool's own suites (ci/lib.sh
# xo_mutgen_selftest_due, suites/ci_selftest_due.sh): a day's change
# touching ci/, perfdb/ or their files (through a merge too), or
# XO_MUTGEN_SELFTEST=1; not older commits or other folders. Under a second:
# a dozen commits in a temp repository.
add_test(NAME ci.selftest_due
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ci_selftest_due.sh
                 ${CMAKE_CURRENT_BINARY_DIR}/ci_selftest_due)
set_tests_properties(ci.selftest_due PROPERTIES LABELS "quick" TIMEOUT 60)

# Which lower ISA levels ci/test.sh runs the cpu suites again at (ci/lib.sh
# xo_isa_fallbacks, suites/ci_isa_fallbacks.sh): on AVX-512, AVX2-only and
# scalar-only machines (fake `xo devices` lines), never the backend's own
# level twice. Under a second.
add_test(NAME ci.isa_fallbacks
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ci_isa_fallbacks.sh
                 ${CMAKE_CURRENT_BINARY_DIR}/ci_isa_fallbacks)
set_tests_properties(ci.isa_fallbacks PROPERTIES LABELS "quick" TIMEOUT 60)

# Which build CI runs each kind of quick test in (ci/lib.sh
# XO_PLAIN_CI_TESTS, XO_ASAN_CI_EXCLUDE, XO_WORKLOAD_TESTS;
# suites/ci_selection.sh): the cpu numeric suites in both, the rest in one.
add_test(NAME ci.selection COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ci_selection.sh)
set_tests_properties(ci.selection PROPERTIES LABELS "quick" TIMEOUT 60)

# The suites' Python is the interpreter, not a shim that starts it
# (suites/python/direct.cmake, suites/ci_python_direct.sh): a shim first in
# PATH, a given Python3_EXECUTABLE, and this build's own. Two configures of
# an empty project, about 5 s (FindPython starts the shim several times).
add_test(NAME ci.python_direct
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ci_python_direct.sh ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/ci_python_direct ${Python3_EXECUTABLE})
set_tests_properties(ci.python_direct PROPERTIES LABELS "quick" TIMEOUT 60)

# What keeps the suites' processes cheap (suites/ci_start_costs.sh): CI's
# temporary files on a tmpfs (ci/lib.sh xo_fast_tmpdir) and the bad-input
# table's bytecode cached even where Python is told not to write it.
add_test(NAME ci.start_costs
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ci_start_costs.sh ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/ci_start_costs ${Python3_EXECUTABLE})
set_tests_properties(ci.start_costs PROPERTIES LABELS "quick" TIMEOUT 60)
