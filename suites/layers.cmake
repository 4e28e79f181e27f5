# The layering rules on the sources (suites/lint_layers.py; docs/style.md
# rule 1): no call cycle among a folder's files (the SQL driver table of
# perfdb/ is the one allowed, so perfdb/ is not listed), no header of another
# folder included where include/xo/ should declare it, no function over 150
# lines. A folder joins --acyclic once its cycles are gone; an
# --except-header goes once that header's users are moved to include/xo/.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME lint.layers
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/lint_layers.py
                   ${PROJECT_SOURCE_DIR} --acyclic cl --acyclic cli
                   --headers cl --headers cli --headers perfdb
                   --except-header model/model_internal.h
                   --max-lines 150 cli/bench.c --max-lines 150 cli/check.c
                   --max-lines 150 cli/seed.c --max-lines 150 cli/devices.c
                   --max-lines 150 cl/cl.c --max-lines 150 cl/cl_runtime.c
                   --max-lines 150 cl/cl_launch.c --max-lines 150 cl/cl_ops.c
                   --max-lines 150 cl/cl_net.c --max-lines 150 cl/cl_probe.c)
  set_tests_properties(lint.layers PROPERTIES LABELS "quick" TIMEOUT 30)
  add_test(NAME lint.layers.selftest
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/lint_layers.py --self-test)
  set_tests_properties(lint.layers.selftest PROPERTIES LABELS "quick" TIMEOUT 30)
endif()
