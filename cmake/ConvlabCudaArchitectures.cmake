# Chooses CMAKE_CUDA_ARCHITECTURES before project() enables CUDA.
#
# CONVLAB_CUDA_ARCH=native (the 'default' preset): build for the GPU in this
# machine, read from nvidia-smi. With no GPU, say so and fall back to a fixed
# list, so the build still works (the GPU tests will then be skipped).
# An explicit CMAKE_CUDA_ARCHITECTURES (the 'ci' preset pins 90;80) wins.
set(CONVLAB_FALLBACK_CUDA_ARCHITECTURES "80;86;89;90")

function(convlab_choose_cuda_architectures)
  set(CONVLAB_CUDA_ARCH "native" CACHE STRING
      "'native' (the GPU of this machine) or an explicit list such as '90;80'")
  if(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    message(STATUS "convlab: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES} (set explicitly)")
    return()
  endif()
  if(NOT CONVLAB_CUDA_ARCH STREQUAL "native")
    set(CMAKE_CUDA_ARCHITECTURES "${CONVLAB_CUDA_ARCH}" CACHE STRING "CUDA architectures" FORCE)
    message(STATUS "convlab: CUDA architectures ${CONVLAB_CUDA_ARCH} (CONVLAB_CUDA_ARCH)")
    return()
  endif()

  find_program(CONVLAB_NVIDIA_SMI nvidia-smi)
  set(caps "")
  if(CONVLAB_NVIDIA_SMI)
    execute_process(COMMAND "${CONVLAB_NVIDIA_SMI}" --query-gpu=name,compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE smi_out RESULT_VARIABLE smi_rc ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE TIMEOUT 20)
    if(smi_rc EQUAL 0 AND smi_out MATCHES "([0-9]+)\\.([0-9]+)")
      string(REPLACE "\n" ";" gpus "${smi_out}")
      set(names "")
      foreach(gpu IN LISTS gpus)
        if(gpu MATCHES "^(.*), *([0-9]+)\\.([0-9]+)$")
          list(APPEND caps "${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
          list(APPEND names "${CMAKE_MATCH_1} (sm_${CMAKE_MATCH_2}${CMAKE_MATCH_3})")
        endif()
      endforeach()
      list(REMOVE_DUPLICATES caps)
    endif()
  endif()
  if(caps)
    list(JOIN names ", " names_text)
    message(STATUS "convlab: GPU found: ${names_text} — building for ${caps}")
    set(CMAKE_CUDA_ARCHITECTURES "${caps}" CACHE STRING "CUDA architectures" FORCE)
  else()
    message(STATUS "convlab: no NVIDIA GPU found (nvidia-smi missing or failed) — building for the "
                   "fixed list ${CONVLAB_FALLBACK_CUDA_ARCHITECTURES}; GPU tests will be reported as skipped")
    set(CMAKE_CUDA_ARCHITECTURES "${CONVLAB_FALLBACK_CUDA_ARCHITECTURES}" CACHE STRING "CUDA architectures" FORCE)
  endif()
endfunction()
