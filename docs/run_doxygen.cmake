# cmake -DDOXYGEN=... -DDOXYFILE=... -DHTML_DIR=... -P run_doxygen.cmake
#
# Runs Doxygen after removing the pages of the previous run: Doxygen never
# deletes a page that a source change made obsolete (a renamed chapter, a
# removed file), and such a stale page would still be served, linked to, and
# checked by docs.render. The MathJax copy (html/mathjax/) stays.
foreach(_v DOXYGEN DOXYFILE HTML_DIR)
  if(NOT ${_v})
    message(FATAL_ERROR "run_doxygen.cmake: -D${_v}=... is required")
  endif()
endforeach()
if(IS_DIRECTORY "${HTML_DIR}")
  file(GLOB _old LIST_DIRECTORIES true "${HTML_DIR}/*")
  list(FILTER _old EXCLUDE REGEX "/mathjax$")
  if(_old)
    file(REMOVE_RECURSE ${_old})
  endif()
endif()
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}" RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "Doxygen failed (${_rc}); its warnings are errors: fix the page it names")
endif()
