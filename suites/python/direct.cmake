# The suites' Python: the interpreter that `python3` in PATH runs, named by
# its own path (sys.executable), which every later find_package(Python3)
# then takes (suites/CMakeLists.txt includes this before its fragments). A version manager's shim found first in PATH (pyenv's is a bash
# script that runs `pyenv exec`) costs 0.09 CPU-s and 0.13 s at each start,
# the interpreter itself 0.01: the bad-input table alone starts Python 300
# times. A Python3_EXECUTABLE given on the command line is kept.
if(NOT DEFINED Python3_EXECUTABLE)
  find_program(XO_PYTHON3_NAMED python3)
  if(XO_PYTHON3_NAMED)
    execute_process(COMMAND ${XO_PYTHON3_NAMED} -S -c "import sys; print(sys.executable)"
                    OUTPUT_VARIABLE xo_python3_real OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE xo_python3_rc ERROR_QUIET)
    if(xo_python3_rc EQUAL 0 AND IS_ABSOLUTE "${xo_python3_real}" AND EXISTS "${xo_python3_real}")
      set(Python3_EXECUTABLE "${xo_python3_real}" CACHE FILEPATH
          "the suites' Python: sys.executable of the python3 in PATH")
    endif()
  endif()
endif()
