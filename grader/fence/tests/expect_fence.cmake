# Runs convlab_fence and checks its exit status and what it printed.
#   cmake -DFENCE=<convlab_fence> -DARGS=<arg|arg|...> [-DSOURCE=<corpus .cu>]
#         [-DRC=<status>] [-DEXPECT=<regex>] -P expect_fence.cmake
# ARGS are separated by '|'. With SOURCE, the expectations come from the source's
# own comments: each `// fence-expect: REGEX` must match a line of the output and
# the status must be 1; `// fence-expect-clean` asks for status 0 and no output.
# Without SOURCE, RC is the expected status and EXPECT a regex over the output.
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND "${FENCE}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
message("convlab_fence exited ${rc}; it printed:\n${all}")
set(expects "")
if(SOURCE)
  file(STRINGS "${SOURCE}" lines REGEX "^// fence-expect")
  set(RC 1)
  foreach(line IN LISTS lines)
    if(line MATCHES "^// fence-expect-clean")
      set(RC 0)
    elseif(line MATCHES "^// fence-expect: (.*)$")
      list(APPEND expects "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  if(RC EQUAL 0 AND NOT all STREQUAL "")
    message(FATAL_ERROR "expected no findings from a clean source, got the output above")
  endif()
  if(RC EQUAL 1 AND NOT expects)
    message(FATAL_ERROR "${SOURCE} has neither '// fence-expect: REGEX' nor '// fence-expect-clean'")
  endif()
elseif(DEFINED EXPECT)
  list(APPEND expects "${EXPECT}")
endif()
if(NOT rc STREQUAL "${RC}")
  message(FATAL_ERROR "expected exit status ${RC}, got ${rc}")
endif()
foreach(re IN LISTS expects)
  if(NOT all MATCHES "${re}")
    message(FATAL_ERROR "no line of the output matches: ${re}")
  endif()
endforeach()
