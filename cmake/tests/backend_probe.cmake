# The choice of backend for CONVLAB_BACKEND=auto (cmake/ConvlabBackend.cmake), on each kind of
# machine, played by stand-in nvcc and nvidia-smi scripts:
#   cmake -DWORK=<scratch folder> -P backend_probe.cmake
# Fails (FATAL_ERROR) naming the case whose reason is not the expected one.
cmake_minimum_required(VERSION 3.25)
if(NOT WORK)
  message(FATAL_ERROR "backend_probe.cmake: -DWORK=<folder> is required")
endif()
include("${CMAKE_CURRENT_LIST_DIR}/../ConvlabBackend.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# A stand-in program: prints `text` and exits with `code`.
function(stub name text code)
  file(WRITE "${WORK}/${name}" "#!/bin/sh\ncat <<'END'\n${text}\nEND\nexit ${code}\n")
  file(CHMOD "${WORK}/${name}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
endfunction()

set(failures "")
# expect(<case> <reason regex, or "" for a usable GPU>)
function(expect what pattern)
  _convlab_probe_gpu(reason gpu)
  if(pattern STREQUAL "")
    if(NOT reason STREQUAL "")
      set(failures "${failures}\n  ${what}: expected a usable GPU, got '${reason}'" PARENT_SCOPE)
    endif()
  elseif(NOT reason MATCHES "${pattern}")
    set(failures "${failures}\n  ${what}: expected '${pattern}', got '${reason}'" PARENT_SCOPE)
  endif()
endfunction()

stub(nvcc "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.48" 0)
set(smi_header "| NVIDIA-SMI 580.65.06   Driver Version: 580.65.06   CUDA Version: 13.0 |")
stub(smi_ok "${smi_header}" 0)
stub(smi_old "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |" 0)
stub(smi_broken "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running." 9)

set(CONVLAB_PROBE_NVCC "${WORK}/no-such-nvcc")
expect("no toolkit" "^no CUDA toolkit: nvcc not found$")

set(CONVLAB_PROBE_NVCC "${WORK}/nvcc")
set(CONVLAB_PROBE_SMI "")
set(CONVLAB_PROBE_LIBCUDA "")
expect("no driver" "^no NVIDIA driver: neither nvidia-smi nor libcuda.so.1 was found$")
set(CONVLAB_PROBE_LIBCUDA "/usr/local/cuda/lib64/stubs/libcuda.so")
expect("only the toolkit's stub library" "^no NVIDIA driver")

set(CONVLAB_PROBE_SMI "${WORK}/smi_broken")
expect("a driver that does not answer" "^the NVIDIA driver does not answer: nvidia-smi says 'NVIDIA-SMI has failed")

# nvidia-smi -L lists nothing: a driver, no GPU. (The stub prints the same text for every call;
# the header has no "GPU n:" line.)
set(CONVLAB_PROBE_SMI "${WORK}/smi_ok")
expect("no GPU" "^no NVIDIA GPU: the driver is installed, but nvidia-smi lists no GPU$")

stub(smi_gpu_old "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\nGPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1)" 0)
set(CONVLAB_PROBE_SMI "${WORK}/smi_gpu_old")
expect("a driver older than the toolkit" "supports CUDA up to 12.2, older than the CUDA 13.0 toolkit")

stub(smi_gpu "${smi_header}\nGPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)" 0)
set(CONVLAB_PROBE_SMI "${WORK}/smi_gpu")
expect("a usable GPU" "")
_convlab_probe_gpu(reason gpu)
if(NOT gpu STREQUAL "NVIDIA H100 80GB HBM3")
  set(failures "${failures}\n  the GPU's name: got '${gpu}'")
endif()

if(failures)
  message(FATAL_ERROR "backend choice:${failures}")
endif()
message(STATUS "backend choice: every kind of machine gets the expected reason")
