# The mutant generator and the runner of its mutants (suites/ci_mutgen.sh,
# docs/mutation.md "Generated mutants"), each on a real git repository of a
# small C project made in a temp folder: which lines are mutated and how,
# ids that survive a line move, the equivalents file, and ci/mutate.sh
# --from end to end (its own CMake build and ctest, a real perf store, the
# report's table).
foreach(case generate stable equivalents runner pending reach stale listed order sources badargs
            stalebin noapply mapkey moved signals envleak kernel context)
  add_test(NAME ci.mutgen.${case}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ci_mutgen.sh ${case}
                   ${CMAKE_CURRENT_BINARY_DIR}/ci_mutgen/${case} $<TARGET_FILE:xo>)
  set_tests_properties(ci.mutgen.${case} PROPERTIES LABELS "quick" TIMEOUT 120)
endforeach()
