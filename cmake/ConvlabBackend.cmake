# convlab_choose_backend()
#
# Resolves CONVLAB_BACKEND=auto (the student's 'default' preset) into 'cuda' or 'cpu' before
# project() enables the languages, and says which, and why, in one line. A student without a
# usable NVIDIA GPU then gets the CPU backend from the README's first command instead of a
# CUDA build whose graders all skip.
#
# What configure can know, and checks in this order:
#   a CUDA toolkit      nvcc (CMAKE_CUDA_COMPILER, $CUDACXX, PATH, $CUDA_PATH, /usr/local/cuda)
#   an NVIDIA driver    nvidia-smi, or the driver library libcuda.so.1 (not the toolkit's stub)
#   a GPU               `nvidia-smi -L` lists one
#   a new enough driver the CUDA version the driver supports (nvidia-smi's "CUDA Version")
#                       has at least the toolkit's major version
# What only a run can know (a GPU hidden by CUDA_VISIBLE_DEVICES, busy, in use by another
# process, or a build configured on one machine and run on another) the graders report when
# they run (convlab/gpu_reason.hpp), and a student's run then ends red with the reason.
#
# The choice is made once per build folder (cached); `cmake --preset default --fresh` makes it
# again, e.g. after installing a driver. -DCONVLAB_BACKEND=cuda or cpu overrides it.
#
# Sets in the caller's scope: CONVLAB_BACKEND (cuda or cpu) and CONVLAB_BACKEND_REASON; caches
# CONVLAB_BACKEND_USED and CONVLAB_BACKEND_REASON (INTERNAL) for tools that read a build
# folder (the convlab command).

# Why no usable GPU is here, or "" when there is one: out_var gets the reason, gpu_var the GPU.
# CONVLAB_PROBE_NVCC, CONVLAB_PROBE_SMI and CONVLAB_PROBE_LIBCUDA (a path, or "" for none) replace
# what it would find: its test (cmake/tests/backend_probe.cmake) plays each kind of machine.
function(_convlab_probe_gpu out_var gpu_var)
  set(${gpu_var} "" PARENT_SCOPE)
  # --- the toolkit ---
  unset(nvcc)
  if(DEFINED CONVLAB_PROBE_NVCC)
    set(nvcc "${CONVLAB_PROBE_NVCC}")
  elseif(CMAKE_CUDA_COMPILER)
    set(nvcc "${CMAKE_CUDA_COMPILER}")
  elseif(DEFINED ENV{CUDACXX} AND NOT "$ENV{CUDACXX}" STREQUAL "")
    set(nvcc "$ENV{CUDACXX}")
  else()
    find_program(nvcc NAMES nvcc PATHS "$ENV{CUDA_PATH}/bin" /usr/local/cuda/bin NO_CACHE)
  endif()
  if(NOT nvcc OR NOT EXISTS "${nvcc}")
    set(${out_var} "no CUDA toolkit: nvcc not found" PARENT_SCOPE)
    return()
  endif()
  set(toolkit "")
  execute_process(COMMAND "${nvcc}" --version OUTPUT_VARIABLE out ERROR_QUIET RESULT_VARIABLE rc TIMEOUT 30)
  if(rc EQUAL 0 AND out MATCHES "release ([0-9]+)\\.([0-9]+)")
    set(toolkit_major "${CMAKE_MATCH_1}")
    set(toolkit "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
  endif()
  # --- the driver ---
  if(DEFINED CONVLAB_PROBE_SMI)
    set(smi "${CONVLAB_PROBE_SMI}")
  else()
    find_program(smi NAMES nvidia-smi NO_CACHE)
  endif()
  if(NOT smi)
    # Without nvidia-smi, the driver library says a driver is installed; the toolkit's stub
    # (lib64/stubs/libcuda.so) does not count.
    if(DEFINED CONVLAB_PROBE_LIBCUDA)
      set(libcuda "${CONVLAB_PROBE_LIBCUDA}")
    else()
      find_library(libcuda NAMES libcuda.so.1 cuda
                   PATHS /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib /usr/lib/wsl/lib
                   NO_DEFAULT_PATH NO_CACHE)
    endif()
    if(NOT libcuda OR libcuda MATCHES "/stubs/")
      set(${out_var} "no NVIDIA driver: neither nvidia-smi nor libcuda.so.1 was found" PARENT_SCOPE)
      return()
    endif()
    set(${gpu_var} "a GPU (an NVIDIA driver library, but no nvidia-smi to list the GPUs)" PARENT_SCOPE)
    set(${out_var} "" PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND "${smi}" OUTPUT_VARIABLE status ERROR_VARIABLE status_err RESULT_VARIABLE rc TIMEOUT 30)
  if(NOT rc EQUAL 0)
    string(REGEX REPLACE "\n.*" "" first "${status}${status_err}")
    set(${out_var} "the NVIDIA driver does not answer: nvidia-smi says '${first}'" PARENT_SCOPE)
    return()
  endif()
  # --- a GPU ---
  execute_process(COMMAND "${smi}" -L OUTPUT_VARIABLE gpus ERROR_QUIET RESULT_VARIABLE rc TIMEOUT 30)
  string(REGEX MATCHALL "GPU [0-9]+: [^\n(]*" listed "${gpus}")
  if(NOT rc EQUAL 0 OR NOT listed)
    set(${out_var} "no NVIDIA GPU: the driver is installed, but nvidia-smi lists no GPU" PARENT_SCOPE)
    return()
  endif()
  list(GET listed 0 first_gpu)
  string(REGEX REPLACE "^GPU [0-9]+: *" "" first_gpu "${first_gpu}")
  string(STRIP "${first_gpu}" first_gpu)
  # --- a driver at least as new as the toolkit (same major version: CUDA's minor-version
  # compatibility runs a 12.8 toolkit's code on a 12.2 driver) ---
  if(status MATCHES "CUDA Version: *([0-9]+)\\.([0-9]+)" AND toolkit)
    set(driver_cuda "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
    if(CMAKE_MATCH_1 LESS toolkit_major)
      set(${out_var} "the NVIDIA driver supports CUDA up to ${driver_cuda}, older than the CUDA ${toolkit} toolkit here (update the driver)"
          PARENT_SCOPE)
      return()
    endif()
  endif()
  set(${gpu_var} "${first_gpu}" PARENT_SCOPE)
  set(${out_var} "" PARENT_SCOPE)
endfunction()

function(convlab_choose_backend)
  if(NOT CONVLAB_BACKEND STREQUAL "auto")
    set(CONVLAB_BACKEND_USED "${CONVLAB_BACKEND}" CACHE INTERNAL "the backend this build uses")
    set(CONVLAB_BACKEND_REASON "set by CONVLAB_BACKEND" CACHE INTERNAL "why")
    set(CONVLAB_BACKEND_REASON "set by CONVLAB_BACKEND" PARENT_SCOPE)
    return()
  endif()
  if(NOT DEFINED CACHE{CONVLAB_AUTO_BACKEND})
    _convlab_probe_gpu(missing gpu)
    if(missing STREQUAL "")
      set(CONVLAB_AUTO_BACKEND cuda CACHE INTERNAL "CONVLAB_BACKEND=auto, decided at the first configure")
      set(CONVLAB_AUTO_REASON "found ${gpu}" CACHE INTERNAL "why")
    else()
      set(CONVLAB_AUTO_BACKEND cpu CACHE INTERNAL "CONVLAB_BACKEND=auto, decided at the first configure")
      set(CONVLAB_AUTO_REASON "${missing}" CACHE INTERNAL "why")
    endif()
  endif()
  set(CONVLAB_BACKEND_USED "${CONVLAB_AUTO_BACKEND}" CACHE INTERNAL "the backend this build uses")
  set(CONVLAB_BACKEND_REASON "${CONVLAB_AUTO_REASON}" CACHE INTERNAL "why")
  set(CONVLAB_BACKEND "${CONVLAB_AUTO_BACKEND}" PARENT_SCOPE)
  set(CONVLAB_BACKEND_REASON "${CONVLAB_AUTO_REASON}" PARENT_SCOPE)
  if(CONVLAB_AUTO_BACKEND STREQUAL "cuda")
    message(STATUS "convlab: backend 'cuda' (auto): ${CONVLAB_AUTO_REASON}")
  else()
    message(STATUS "convlab: no usable NVIDIA GPU here (${CONVLAB_AUTO_REASON}) — building the CPU backend: your "
                   "kernels run on the CPU, correctness graders only, no timing. `cmake --preset default --fresh` checks again.")
  endif()
endfunction()
