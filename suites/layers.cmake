# The layering rules on the whole tree (suites/lint_layers.py, which lists
# the folders and the few exceptions, each with its reason; docs/style.md
# rule 1): no file cycle in a product folder but the SQL driver table, no
# header of another folder included where include/xo/ should declare it, no
# function over 150 lines outside kernels/ (suites/ and fuzz/ included).
# .selftest plants each kind of finding and fails if one is missed.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME lint.layers
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/lint_layers.py
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(lint.layers PROPERTIES LABELS "quick" TIMEOUT 30)
  add_test(NAME lint.layers.selftest
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/lint_layers.py --self-test)
  set_tests_properties(lint.layers.selftest PROPERTIES LABELS "quick" TIMEOUT 30)
endif()
