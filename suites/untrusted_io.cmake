# Names and values from strangers (suites/untrusted_io.py): saves write
# nothing through planted symlinks, a path adds no spec line, an import
# lands whole or not at all, messages stay one escaped line, no password
# form reaches a message, import-db checks samples as perf import does.
# One ctest per case.
foreach(case tmp_symlink spec_path import_whole one_line pg_secret
             importdb_values)
  add_test(NAME untrusted_io.${case}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/untrusted_io.py ${case}
            $<TARGET_FILE:xo> ${PROJECT_SOURCE_DIR}/suites/golden/keras
            ${CMAKE_CURRENT_BINARY_DIR}/untrusted_io)
  set_tests_properties(untrusted_io.${case} PROPERTIES LABELS "model;quick" TIMEOUT 60)
endforeach()
