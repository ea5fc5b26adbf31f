/// @file prelude.hpp
/// @brief Included first by every CUDA source that cu2cpp rewrote for the CPU
/// backend: CUDA's keywords as C++, and the runtime.
#pragma once

#include "convlab_cpu/launch.hpp"
#include "convlab_cpu/runtime.hpp"

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
// Static shared memory is one copy per block: blocks run one at a time on each
// host thread, so a static thread-local variable is exactly that.
#define __shared__ static thread_local
#define CONVLAB_CPU_BACKEND 1
