# ci/coverage.sh's collection (docs/coverage.md): per-folder line and branch
# counts from gcov on a tiny real --coverage program with known answers, the
# to-do list, the rows stored in a real perf store, the report's section, and
# a --db that is not a crossover store, cannot be written, has a table
# coverage of another shape or is locked, and an --out that is a file,
# refused with exit 2 and one line.
add_test(NAME coverage.aggregate
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/coverage_agg.sh $<TARGET_FILE:xo>
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(coverage.aggregate PROPERTIES LABELS "perfdb;quick" TIMEOUT 60)
