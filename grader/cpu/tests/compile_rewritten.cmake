# cu2cpp SOURCE -> OUT, then compile OUT: the compiler's output is printed for
# the test's PASS_REGULAR_EXPRESSION (which looks for SOURCE's own line).
execute_process(COMMAND "${CU2CPP}" "${SOURCE}" "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cu2cpp failed")
endif()
execute_process(COMMAND "${CXX}" -std=c++17 -fsyntax-only -I "${INCLUDE}" "${OUT}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the broken source compiled")
endif()
