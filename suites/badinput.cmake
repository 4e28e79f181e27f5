# The bad-input table of the model commands (suites/badinput/run.py):
# one test per row, each in a fresh directory: the exit code, the one stderr
# line it must match, and the files that must be unchanged afterwards.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  execute_process(COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/badinput/run.py --list
                  OUTPUT_VARIABLE XO_BADINPUT_CASES OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE XO_BADINPUT_RC)
  if(NOT XO_BADINPUT_RC EQUAL 0)
    message(FATAL_ERROR "suites/badinput/run.py --list failed")
  endif()
  foreach(case ${XO_BADINPUT_CASES})
    # case.py imports run.py (the table) as a module, compiled once into
    # __pycache__; -S: both are the standard library only, and the
    # site-packages' start-up hooks (.pth files) took 0.1 s of each case's
    # 0.5 s on a CI machine
    add_test(NAME badinput.${case}
             COMMAND ${Python3_EXECUTABLE} -S ${CMAKE_CURRENT_LIST_DIR}/badinput/case.py
                     $<TARGET_FILE:xo> ${case})
    # the fixtures (two trained checkpoints among them) made once per xo
    # binary in the build folder and copied into each case's directory:
    # 0.24 s of each case under the sanitizers, a minute of the table
    set_tests_properties(badinput.${case} PROPERTIES LABELS "quick;model" TIMEOUT 120
                         ENVIRONMENT "XO_BADINPUT_CACHE=${CMAKE_CURRENT_BINARY_DIR}/badinput-fixtures")
  endforeach()
  # a killed fixture build's folder is removed by the next build, a live
  # one's never
  add_test(NAME badinput.cache_sweep
           COMMAND ${Python3_EXECUTABLE} -S ${CMAKE_CURRENT_LIST_DIR}/badinput/run.py --check-sweep)
  set_tests_properties(badinput.cache_sweep PROPERTIES LABELS "quick;model" TIMEOUT 60)
else()
  message(STATUS "python3 not found: the bad-input table (badinput.*) is not registered")
endif()
