# Runs at build time (cmake -P), after nvcc compiled a lab's kernels with --keep (ConvlabLab.cmake):
# the code facts of the runner from the PTX nvcc kept, then nvcc's other intermediate files removed
# (a few megabytes a file: preprocessed sources, cubins, fat binaries).
#
#   cmake -DPTXFACTS=<convlab_ptxfacts> -DOUT=<facts.json> -DKEEP_DIR=<dir> -DSTEMS=<a,b,...>
#         [-DARCH=90] -P ConvlabPtxFacts.cmake
#
# ARCH picks the architecture (the build's first); without it, the newest one kept.
foreach(v PTXFACTS OUT KEEP_DIR STEMS)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "ConvlabPtxFacts.cmake: -D${v}= is required")
  endif()
endforeach()
string(REPLACE "," ";" stems "${STEMS}")
set(ptx_files "")
foreach(stem IN LISTS stems)
  # nvcc names the PTX <stem>.ptx when it compiles for one architecture, <stem>.compute_<arch>.ptx
  # for several. A build reconfigured for other architectures leaves the old names behind: of the
  # candidates, the newest file is this compilation's.
  if(ARCH)
    set(kept "")
    foreach(name "${stem}.ptx" "${stem}.compute_${ARCH}.ptx")
      if(EXISTS "${KEEP_DIR}/${name}")
        list(APPEND kept "${KEEP_DIR}/${name}")
      endif()
    endforeach()
  else()
    file(GLOB kept "${KEEP_DIR}/${stem}.ptx" "${KEEP_DIR}/${stem}.compute_*.ptx")
  endif()
  set(ptx "")
  set(ptx_time "")
  set(ptx_arch -1)
  foreach(k IN LISTS kept)
    file(TIMESTAMP "${k}" t "%s")
    get_filename_component(name "${k}" NAME)
    set(a 0)
    if(name MATCHES "compute_([0-9]+)")
      set(a "${CMAKE_MATCH_1}")
    endif()
    # The newest file; of files written in the same second, the newest architecture's.
    if(ptx STREQUAL "" OR t GREATER ptx_time OR (t EQUAL ptx_time AND a GREATER ptx_arch))
      set(ptx "${k}")
      set(ptx_time "${t}")
      set(ptx_arch "${a}")
    endif()
  endforeach()
  if(ptx STREQUAL "")
    message(FATAL_ERROR "convlab: nvcc kept no PTX of ${stem} in ${KEEP_DIR} (the kernels must be compiled with --keep)")
  endif()
  list(APPEND ptx_files "${ptx}")
endforeach()
execute_process(COMMAND "${PTXFACTS}" "${OUT}" ${ptx_files} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "convlab: convlab_ptxfacts failed (${rc}) on ${ptx_files}")
endif()
# The PTX stays (a reader of the facts may look at it); the rest goes.
file(GLOB intermediates "${KEEP_DIR}/*")
foreach(f IN LISTS intermediates)
  if(NOT f MATCHES "\\.ptx$")
    file(REMOVE "${f}")
  endif()
endforeach()
