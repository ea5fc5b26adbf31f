# The grader-owned code that would be a lab's answer if a student could read it: the speed
# graders' naive baselines (grader/baselines/, lab 01's and lab 05's naive kernels; lab 06's
# direct convolution, labs/06-*/baseline_lab06.cu) and the cuDNN anchor (grader/device/src/cudnn_conv.cpp,
# a complete answer to lab 06's conv_cudnn slot). The course's tree builds them from source; a
# student copy (`convlab release`) holds them compiled only, in grader/prebuilt/, with a manifest
# of what they were built for and their SHA-256 sums. Include this file once (grader/CMakeLists.txt):
# the function below is then known in every folder, and finds the manifest from the project's root.
#
# convlab_prebuilt_library(<name>)
#   Defines the imported static library <name> from grader/prebuilt/MANIFEST.json for the
#   configured backend, after checking that the file is there, that its SHA-256 sum is the
#   manifest's, and that it was built for what this build needs (the CPU's processor; a CUDA
#   toolkit at least as new and the GPU architectures). Stops with the reason otherwise. Sets
#   <name>_PREBUILT_FOUND to FALSE, without stopping, when the manifest holds no <name> for this
#   backend and OPTIONAL is given (the cuDNN anchor: a release made without cuDNN has none).
#
# The check runs again whenever a prebuilt file or the manifest changes (CMAKE_CONFIGURE_DEPENDS):
# a library replaced after the first configure is refused at the next build, not linked.

# The folder and manifest of the prebuilt libraries, and the oldest CUDA architecture they serve:
# sm_80 code runs on every 8.x GPU, sm_90 code on 9.0, and the compute_90 PTX is compiled by the
# driver for newer GPUs; older GPUs (7.x and below) are not supported by a student copy. Set in the
# function's own scope: it is called from folders other than the one that included this file.
macro(_convlab_prebuilt_paths)
  set(CONVLAB_PREBUILT_DIR "${PROJECT_SOURCE_DIR}/grader/prebuilt")
  set(CONVLAB_PREBUILT_MANIFEST "${CONVLAB_PREBUILT_DIR}/MANIFEST.json")
  set(CONVLAB_PREBUILT_MIN_CUDA_ARCH 80)
endmacro()

function(_convlab_prebuilt_fail)
  string(JOIN "" what ${ARGV})  # the reason may come in several quoted parts
  message(FATAL_ERROR "convlab: ${what}\n"
          "This is a student copy: the speed graders' baselines come compiled in grader/prebuilt/. "
          "Unpack the course's release again, or ask your instructor for one made for your machine.")
endfunction()

function(convlab_prebuilt_library name)
  _convlab_prebuilt_paths()
  cmake_parse_arguments(ARG "OPTIONAL" "" "" ${ARGN})
  set(${name}_PREBUILT_FOUND FALSE PARENT_SCOPE)
  if(NOT EXISTS "${CONVLAB_PREBUILT_MANIFEST}")
    _convlab_prebuilt_fail("the sources of ${name} are not in this tree and neither is its manifest "
                           "(${CONVLAB_PREBUILT_MANIFEST}).")
  endif()
  set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CONVLAB_PREBUILT_MANIFEST}")
  file(READ "${CONVLAB_PREBUILT_MANIFEST}" manifest)
  set(backend "${CONVLAB_BACKEND}")
  string(JSON built_for ERROR_VARIABLE err GET "${manifest}" "${backend}")
  if(err)
    _convlab_prebuilt_fail("grader/prebuilt/MANIFEST.json holds no libraries for the ${backend} backend.")
  endif()
  string(JSON file ERROR_VARIABLE err GET "${built_for}" libraries "${name}" file)
  if(err)
    if(ARG_OPTIONAL)
      return()
    endif()
    _convlab_prebuilt_fail("grader/prebuilt/MANIFEST.json lists no ${name} for the ${backend} backend.")
  endif()
  string(JSON sha256 GET "${built_for}" libraries "${name}" sha256)
  set(path "${CONVLAB_PREBUILT_DIR}/${file}")
  if(NOT EXISTS "${path}")
    _convlab_prebuilt_fail("grader/prebuilt/${file} (${name}, ${backend} backend) is missing.")
  endif()
  set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${path}")
  file(SHA256 "${path}" actual)
  if(NOT actual STREQUAL sha256)
    _convlab_prebuilt_fail("grader/prebuilt/${file} (${name}, ${backend} backend) has been altered: its "
                           "SHA-256 is ${actual}, the manifest's is ${sha256}.")
  endif()

  # Host code for one processor, on either backend (a CUDA library's launchers are host code too);
  # the C++ ABI is the Itanium one of GCC and Clang alike.
  string(JSON processor GET "${built_for}" processor)
  if(NOT processor STREQUAL CMAKE_SYSTEM_PROCESSOR)
    _convlab_prebuilt_fail("grader/prebuilt/${file} was built for ${processor}; this machine is a "
                           "${CMAKE_SYSTEM_PROCESSOR}.")
  endif()
  if(backend STREQUAL "cuda")
    # Code from a newer nvcc may call CUDA runtime functions an older toolkit lacks.
    string(JSON toolkit GET "${built_for}" toolkit)
    string(REGEX MATCH "^[0-9]+" built_major "${toolkit}")
    string(REGEX MATCH "^[0-9]+" our_major "${CMAKE_CUDA_COMPILER_VERSION}")
    if(our_major LESS built_major)
      _convlab_prebuilt_fail("grader/prebuilt/${file} was compiled by CUDA ${toolkit}; this CUDA toolkit is "
                             "${CMAKE_CUDA_COMPILER_VERSION}. Install CUDA ${built_major} or newer.")
    endif()
    string(JSON built_archs GET "${built_for}" architectures)
    foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
      string(REGEX MATCH "^[0-9]+" number "${arch}")
      if(number AND number LESS CONVLAB_PREBUILT_MIN_CUDA_ARCH)
        _convlab_prebuilt_fail("this build is for sm_${number} (CMAKE_CUDA_ARCHITECTURES ${CMAKE_CUDA_ARCHITECTURES}), "
                               "but a student copy supports GPUs of compute capability 8.0 and newer "
                               "(grader/prebuilt/${file} holds code for ${built_archs}). "
                               "On this GPU use the 'cpu' preset.")
      endif()
    endforeach()
  endif()
  add_library(${name} STATIC IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES IMPORTED_LOCATION "${path}")
  message(STATUS "convlab: ${name} prebuilt (grader/prebuilt/${file}, SHA-256 checked)")
  set(${name}_PREBUILT_FOUND TRUE PARENT_SCOPE)
endfunction()
