# cmake/ConvlabPtxFacts.cmake on a folder like the one nvcc --keep leaves: which PTX it reads (the
# newest of <stem>.ptx and <stem>.compute_<ARCH>.ptx: a build reconfigured for other architectures
# leaves the old name behind), that nvcc's other intermediate files go, and that a missing PTX
# stops the build with the reason.
#   cmake -DTOOL=<convlab_ptxfacts> -DSCRIPT=<ConvlabPtxFacts.cmake> -DPTX=<sample.ptx> -DWORK=<dir> -P ...
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/keep")
file(READ "${PTX}" sample)
# Same-length names: the mangled names count their characters.
string(REPLACE "tiled_kernel" "fresh_kernel" fresh "${sample}")
string(REPLACE "tiled_kernel" "stale_kernel" stale "${sample}")
string(REPLACE "tiled_kernel" "older_kernel" older "${sample}")
function(old file)  # two hours ago
  execute_process(COMMAND touch -d "2 hours ago" "${file}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "touch -d failed on ${file}")
  endif()
endfunction()
function(facts_of out)  # runs the script; ARGN: -D settings
  execute_process(COMMAND "${CMAKE_COMMAND}" "-DPTXFACTS=${TOOL}" "-DOUT=${WORK}/facts.json" "-DKEEP_DIR=${WORK}/keep"
                          ${ARGN} -P "${SCRIPT}" RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  set(${out}_rc "${rc}" PARENT_SCOPE)
  set(${out}_text "${o}${e}" PARENT_SCOPE)
  if(rc EQUAL 0)
    file(READ "${WORK}/facts.json" f)
    set(${out} "${f}" PARENT_SCOPE)
  endif()
endfunction()
function(expect_kernel facts kernel)
  string(JSON got ERROR_VARIABLE e GET "${facts}" kernels "${kernel}" ld_shared)
  if(e)
    message(FATAL_ERROR "expected the facts of ${kernel}, got:\n${facts}")
  endif()
endfunction()

# One architecture: nvcc wrote conv.ptx now; conv.compute_90.ptx is an earlier configure's.
file(WRITE "${WORK}/keep/conv.compute_90.ptx" "${stale}")
old("${WORK}/keep/conv.compute_90.ptx")
file(WRITE "${WORK}/keep/conv.ptx" "${fresh}")
file(WRITE "${WORK}/keep/conv.cpp1.ii" "preprocessed")
file(WRITE "${WORK}/keep/conv.sm_90.cubin" "cubin")
facts_of(f -DSTEMS=conv -DARCH=90)
if(NOT f_rc EQUAL 0)
  message(FATAL_ERROR "the script failed: ${f_text}")
endif()
expect_kernel("${f}" fresh_kernel)
foreach(gone conv.cpp1.ii conv.sm_90.cubin)
  if(EXISTS "${WORK}/keep/${gone}")
    message(FATAL_ERROR "${gone} was left in the keep folder")
  endif()
endforeach()
if(NOT EXISTS "${WORK}/keep/conv.ptx")
  message(FATAL_ERROR "the PTX itself was removed")
endif()

# Several architectures: conv.compute_90.ptx is now the newest; conv.ptx is the old one.
old("${WORK}/keep/conv.ptx")
file(WRITE "${WORK}/keep/conv.compute_90.ptx" "${fresh}")
file(WRITE "${WORK}/keep/conv.compute_80.ptx" "${older}")
facts_of(f -DSTEMS=conv -DARCH=90)
expect_kernel("${f}" fresh_kernel)
# Without ARCH: the newest file, and of files as new, the newest architecture's (90, not 80).
execute_process(COMMAND touch -r "${WORK}/keep/conv.compute_90.ptx" "${WORK}/keep/conv.compute_80.ptx")
facts_of(f -DSTEMS=conv)
expect_kernel("${f}" fresh_kernel)
# Two files, each read.
file(WRITE "${WORK}/keep/other.ptx" "${older}")
facts_of(f -DSTEMS=conv,other -DARCH=90)
expect_kernel("${f}" fresh_kernel)
expect_kernel("${f}" older_kernel)

# A stem nvcc kept nothing of: the build stops, saying so.
facts_of(f -DSTEMS=conv,missing -DARCH=90)
if(f_rc EQUAL 0 OR NOT f_text MATCHES "nvcc kept no PTX of missing")
  message(FATAL_ERROR "a missing PTX was not refused with its reason: rc ${f_rc}: ${f_text}")
endif()
message(STATUS "ptxfacts from nvcc's kept PTX: every case as expected")
