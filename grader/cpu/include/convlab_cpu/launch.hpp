/// @file launch.hpp
/// @brief Kernel launches, thread indices, barriers, shared memory, atomics and
/// the device math functions of the CPU backend.
///
/// `kernel<<<grid, block, shared, stream>>>(args)` is rewritten by cu2cpp into
/// `convlab_cpu::launch("kernel", __FILE__, __LINE__, kernel, {grid, block, shared, stream}, args)`.
/// The launch checks the configuration as CUDA does (at most 1024 threads per
/// block, grid limits, dynamic shared memory limit), then runs the blocks on a
/// pool of host threads. Within a block, threads run one at a time, each until
/// it reaches `__syncthreads()` or returns; between barriers their order is
/// shuffled from a seed (set_schedule), so a missing barrier changes the result.
/// A block in which some threads wait at a barrier that others have left the
/// kernel without reaching is a barrier divergence: the launch fails with the
/// kernel, block and threads named.
#pragma once

#include "convlab_cpu/runtime.hpp"

#include <functional>
#include <string>
#include <tuple>
#include <utility>

namespace convlab_cpu {

/// How the threads of a block are ordered between barriers.
enum class Schedule { shuffle, in_order, reverse };

/// Sets the schedule and its seed; CONVLAB_CPU_SCHEDULE (shuffle | in-order | reverse) overrides the mode.
void set_schedule(Schedule schedule, std::uint64_t seed);

/// A launch's configuration, as written between <<< and >>>.
struct LaunchConfig {
  dim3 grid;                      ///< blocks
  dim3 block;                     ///< threads per block
  std::size_t shared_bytes = 0;   ///< dynamic shared memory per block
  cudaStream_t stream = nullptr;  ///< ignored: everything is synchronous
  LaunchConfig(dim3 g, dim3 b, std::size_t s = 0, cudaStream_t st = nullptr)
      : grid(g), block(b), shared_bytes(s), stream(st) {}
};

namespace detail {
/// The per-host-thread view of the thread being run.
struct ThreadView {
  uint3 thread_idx{0, 0, 0};
  uint3 block_idx{0, 0, 0};
  dim3 block_dim{1, 1, 1};
  dim3 grid_dim{1, 1, 1};
};
extern thread_local ThreadView tv;

/// Runs `body` for every thread of the grid; `kernel_id` identifies the kernel for its attributes.
void run_grid(const char* name, const char* file, int line, const void* kernel_id, const LaunchConfig& config,
              const std::function<void()>& body);
/// The dynamic shared memory of the running block.
void* dynamic_shared_memory();
/// Poisons a static __shared__ variable the first time a thread of the running block reaches it.
void poison_shared_once(void* address, std::size_t bytes);
}  // namespace detail

/// The barrier: `__syncthreads()`.
void syncthreads(const char* file, int line);

/// Launches `kernel` over the grid with arguments converted to its parameter types.
template <class... Params, class... Args>
void launch(const char* name, const char* file, int line, void (*kernel)(Params...), const LaunchConfig& config,
            Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "kernel launched with the wrong number of arguments");
  const std::tuple<std::decay_t<Params>...> params(std::forward<Args>(args)...);
  detail::run_grid(name, file, line, reinterpret_cast<const void*>(kernel), config,
                   [&params, kernel] { std::apply(kernel, params); });
}

/// `extern __shared__ T name[];` becomes `T* name = dynamic_shared<T>();`.
template <class T>
T* dynamic_shared() {
  return static_cast<T*>(detail::dynamic_shared_memory());
}

}  // namespace convlab_cpu

// ---- what kernels read -----------------------------------------------------------------------
#define threadIdx (::convlab_cpu::detail::tv.thread_idx)
#define blockIdx (::convlab_cpu::detail::tv.block_idx)
#define blockDim (::convlab_cpu::detail::tv.block_dim)
#define gridDim (::convlab_cpu::detail::tv.grid_dim)
#define __syncthreads() ::convlab_cpu::syncthreads(__FILE__, __LINE__)
inline constexpr int warpSize = 32;

// ---- atomics: real atomics, since blocks run on several host threads -------------------------
template <class T>
inline T atomicAdd(T* address, T value) {
  if constexpr (std::is_integral_v<T>) {
    return __atomic_fetch_add(address, value, __ATOMIC_RELAXED);
  } else {
    T old;
    __atomic_load(address, &old, __ATOMIC_RELAXED);
    T desired = old + value;
    while (!__atomic_compare_exchange(address, &old, &desired, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      desired = old + value;
    return old;
  }
}
template <class T>
inline T atomicSub(T* address, T value) { return __atomic_fetch_sub(address, value, __ATOMIC_RELAXED); }
template <class T>
inline T atomicExch(T* address, T value) {
  T old;
  __atomic_exchange(address, &value, &old, __ATOMIC_RELAXED);
  return old;
}
template <class T>
inline T atomicCAS(T* address, T compare, T value) {
  __atomic_compare_exchange(address, &compare, &value, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return compare;
}
template <class T>
inline T atomicMax(T* address, T value) {
  T old;
  __atomic_load(address, &old, __ATOMIC_RELAXED);
  while (old < value && !__atomic_compare_exchange(address, &old, &value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
template <class T>
inline T atomicMin(T* address, T value) {
  T old;
  __atomic_load(address, &old, __ATOMIC_RELAXED);
  while (value < old && !__atomic_compare_exchange(address, &old, &value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---- device math: the intrinsics the labs use, with CUDA's meaning ---------------------------
template <class A, class B>
inline auto min(A a, B b) -> std::common_type_t<A, B> { return b < a ? b : a; }
template <class A, class B>
inline auto max(A a, B b) -> std::common_type_t<A, B> { return a < b ? b : a; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline int __float2int_rn(float x) { return static_cast<int>(std::nearbyint(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline int __mul24(int a, int b) { return a * b; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
template <class T>
inline T __ldg(const T* p) { return *p; }
// sqrtf, expf, fmaf, fabsf, fminf, ... come from <cmath> in the global namespace, as in CUDA.
