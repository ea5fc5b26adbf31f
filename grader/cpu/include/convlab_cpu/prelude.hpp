/// @file prelude.hpp
/// @brief Included first by every CUDA source that cu2cpp rewrote for the CPU
/// backend: CUDA's keywords as C++, and the runtime.
#pragma once

#include "convlab_cpu/launch.hpp"
#include "convlab_cpu/records.hpp"
#include "convlab_cpu/runtime.hpp"
#include "convlab_cpu/warp.hpp"

#include <cstdio>

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __grid_constant__
// cu2cpp rewrites every __shared__ declaration into a reference to the running block's
// shared memory; what is left of the keyword (none in code cu2cpp accepted) is one copy
// per host thread, i.e. per running block.
#define __shared__ static thread_local
#define CONVLAB_CPU_BACKEND 1

// Whether this file's memory accesses are counted (convlab_cpu/records.hpp): the build
// defines CONVLAB_CPU_COUNT_ACCESSES where it compiles the file with GCC's
// -fsanitize=thread instrumentation; each launch passes this on.
#if defined(CONVLAB_CPU_COUNT_ACCESSES)
#if !defined(__SANITIZE_THREAD__)
#error "CONVLAB_CPU_COUNT_ACCESSES needs -fsanitize=thread (see convlab_cuda_sources in cmake/ConvlabLab.cmake)"
#endif
#define CONVLAB_CPU_COUNTED true
#else
#define CONVLAB_CPU_COUNTED false
#endif
