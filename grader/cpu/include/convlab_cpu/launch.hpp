/// @file launch.hpp
/// @brief Kernel launches, thread indices, barriers, shared memory, atomics and
/// the device math functions of the CPU backend.
///
/// `kernel<<<grid, block, shared, stream>>>(args)` is rewritten by cu2cpp into
/// `convlab_cpu::launch({"kernel", __FILE__, __LINE__, counted}, kernel, {grid, block, shared, stream}, args)`.
/// The launch checks the configuration as CUDA does (at most 1024 threads per
/// block, grid limits, dynamic shared memory limit), then runs the blocks on a
/// pool of host threads. Within a block, threads run one at a time, each until
/// it reaches `__syncthreads()` or returns; between barriers their order is
/// shuffled from a seed (set_schedule), so a missing barrier changes the result.
/// A block in which some threads wait at a barrier that others have left the
/// kernel without reaching is a barrier divergence: the launch fails with the
/// kernel, block and threads named. Every launch leaves a record (records.hpp).
#pragma once

#include "convlab_cpu/records.hpp"
#include "convlab_cpu/runtime.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace convlab_cpu {

/// How the threads of a block are ordered between barriers.
enum class Schedule { shuffle, in_order, reverse };

/// Sets the schedule and its seed; CONVLAB_CPU_SCHEDULE (shuffle | in-order | reverse) overrides the mode
/// unless `environment_overrides` is false (the graders' runner: the judge chose the schedule, and
/// a submission that sets the variable changes nothing).
void set_schedule(Schedule schedule, std::uint64_t seed, bool environment_overrides = true);

/// A launch's configuration, as written between <<< and >>>.
struct LaunchConfig {
  dim3 grid;                      ///< blocks
  dim3 block;                     ///< threads per block
  std::size_t shared_bytes = 0;   ///< dynamic shared memory per block
  cudaStream_t stream = nullptr;  ///< recorded; everything is synchronous
  LaunchConfig(dim3 g, dim3 b, std::size_t s = 0, cudaStream_t st = nullptr)
      : grid(g), block(b), shared_bytes(s), stream(st) {}
};

/// Where a launch is written, and whether its file was built to count memory accesses.
struct LaunchSite {
  const char* name;  ///< the kernel as written before <<<
  const char* file;
  int line;
  bool counted;  ///< CONVLAB_CPU_COUNTED of the launching file (see prelude.hpp)
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

/// Runs one thread of a kernel: the kernel and its arguments are in `context`.
using KernelInvoker = void (*)(const void* context);
/// Runs `invoke(context)` for every thread of the grid; `kernel_id` identifies the kernel for its attributes.
void run_grid(const LaunchSite& site, const void* kernel_id, const LaunchConfig& config, KernelInvoker invoke,
              const void* context);

/// The indices of the running thread (what threadIdx and the others read in a counted file).
/// `const`: the compiler may read each once per kernel invocation, since no thread's values
/// change while it runs (the scheduler restores them at every switch).
__attribute__((const)) uint3 thread_idx();
__attribute__((const)) uint3 block_idx();
__attribute__((const)) dim3 block_dim();
__attribute__((const)) dim3 grid_dim();
/// The dynamic shared memory of the running block.
void* dynamic_shared_memory();
/// One asynchronous copy not yet landed (convlab_cpu/pipeline.hpp): its destination and the
/// bytes read from its source when it was issued (zeros where it fills with zeros).
struct PipelineCopy {
  void* dst = nullptr;
  unsigned char data[16] = {};
  unsigned char size = 0;
};
/// The running thread's asynchronous copies: those issued, oldest first, and where each committed
/// group ends in that list. Emptied when the thread starts.
struct PipelineState {
  std::vector<PipelineCopy> copies;
  std::vector<std::size_t> group_ends;
};
/// The running thread's (std::logic_error outside a kernel).
PipelineState& pipeline_state();
/// The running block's copy of the static __shared__ variable declared at `key` (`bytes`,
/// aligned to `align`): allocated, and filled with kUnwrittenSharedBits, when the block's
/// first thread gets there. Fails the launch when the block's shared memory exceeds a GPU's.
void* static_shared_memory(const void* key, std::size_t bytes, std::size_t align);

/// `__shared__ T name[dims];` becomes `T (&name)[dims] = *static_shared<T[dims]>(&key, align);`.
template <class T>
T* static_shared(const char* key, std::size_t align) {
  return static_cast<T*>(static_shared_memory(key, sizeof(T), std::max(alignof(T), align)));
}

/// `extern __shared__ T name[];` at namespace scope: the running block's dynamic shared memory
/// wherever `name` is used.
template <class T>
struct DynamicShared {
  operator T*() const { return static_cast<T*>(dynamic_shared_memory()); }
  T& operator[](std::ptrdiff_t i) const { return static_cast<T*>(dynamic_shared_memory())[i]; }
};

/// Tells the runtime where a `__constant__` (space constant) or `__device__` (space global)
/// variable lives and what it is called; returns its address.
const void* register_symbol(const void* address, std::size_t bytes, const char* name, MemorySpace space);
/// cu2cpp puts one after each such variable: its construction registers the variable.
struct DeviceSymbol {
  DeviceSymbol(const void* address, std::size_t bytes, const char* name, MemorySpace space) {
    register_symbol(address, bytes, name, space);
  }
};
/// For a `const` variable, which the compiler would read without instrumentation, cu2cpp
/// makes the name a reference initialised by this call: out of line, so the compiler reaches
/// the variable through the reference.
template <class T>
T& device_symbol(T& storage, const char* name, MemorySpace space) {
  const void* p = register_symbol(&storage, sizeof(T), name, space);
  return *static_cast<T*>(const_cast<void*>(p));
}

/// Counts an atomic read-modify-write at `address` in the running kernel's records.
void count_atomic(const void* address, std::size_t bytes);
/// Adds `macs` tensor-core multiply-adds to the running kernel's record (the warp matrix API).
void count_tensor_macs(std::uint64_t macs);
}  // namespace detail

/// The barrier: `__syncthreads()`.
void syncthreads(const char* file, int line);

// What runs a kernel's thread is not counted: reading the kernel's arguments is the
// runtime's work, not the kernel's. `static` gives each file its own copy, as for the
// atomics below.
#if defined(CONVLAB_CPU_COUNT_ACCESSES)
#define CONVLAB_CPU_NOT_COUNTED static inline __attribute__((no_sanitize("thread")))
#else
#define CONVLAB_CPU_NOT_COUNTED static inline
#endif

namespace detail {
template <class Kernel, class Params, std::size_t... I>
CONVLAB_CPU_NOT_COUNTED void call_kernel(Kernel kernel, const Params& params, std::index_sequence<I...>) {
  kernel(std::get<I>(params)...);
}
template <class Kernel, class Params>
CONVLAB_CPU_NOT_COUNTED void invoke_kernel(const void* context) {
  const auto& c = *static_cast<const std::pair<Kernel, Params>*>(context);
  call_kernel(c.first, c.second, std::make_index_sequence<std::tuple_size_v<Params>>{});
}
}  // namespace detail

/// Launches `kernel` over the grid with arguments converted to its parameter types.
template <class... Params, class... Args>
void launch(const LaunchSite& site, void (*kernel)(Params...), const LaunchConfig& config, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "kernel launched with the wrong number of arguments");
  using Kernel = void (*)(Params...);
  using Tuple = std::tuple<std::decay_t<Params>...>;
  const std::pair<Kernel, Tuple> context(kernel, Tuple(std::forward<Args>(args)...));
  detail::run_grid(site, reinterpret_cast<const void*>(kernel), config, &detail::invoke_kernel<Kernel, Tuple>,
                   &context);
}

/// `extern __shared__ T name[];` becomes `T* name = dynamic_shared<T>();`.
template <class T>
T* dynamic_shared() {
  return static_cast<T*>(detail::dynamic_shared_memory());
}

}  // namespace convlab_cpu

// ---- what kernels read -----------------------------------------------------------------------
#if defined(CONVLAB_CPU_COUNT_ACCESSES)
// Calls, not thread-local loads that the instrumentation would count and, after every
// counted access, repeat (see thread_idx()).
#define threadIdx (::convlab_cpu::detail::thread_idx())
#define blockIdx (::convlab_cpu::detail::block_idx())
#define blockDim (::convlab_cpu::detail::block_dim())
#define gridDim (::convlab_cpu::detail::grid_dim())
#else
#define threadIdx (::convlab_cpu::detail::tv.thread_idx)
#define blockIdx (::convlab_cpu::detail::tv.block_idx)
#define blockDim (::convlab_cpu::detail::tv.block_dim)
#define gridDim (::convlab_cpu::detail::tv.grid_dim)
#endif
#define __syncthreads() ::convlab_cpu::syncthreads(__FILE__, __LINE__)
inline constexpr int warpSize = 32;

// ---- atomics: real atomics, since blocks run on several host threads -------------------------
// Each counts itself as one atomic (records.hpp). In a file built to count memory accesses
// they are not instrumented (the compiler would count the float forms' compare-and-swap
// loop, not one atomic); `static` gives each file its own copy, so the linker cannot mix
// the two kinds.
#if defined(CONVLAB_CPU_COUNT_ACCESSES)
#define CONVLAB_CPU_ATOMIC static inline __attribute__((no_sanitize("thread")))
#else
#define CONVLAB_CPU_ATOMIC static inline
#endif
template <class T>
CONVLAB_CPU_ATOMIC T atomicAdd(T* address, T value) {
  ::convlab_cpu::detail::count_atomic(address, sizeof(T));
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
CONVLAB_CPU_ATOMIC T atomicSub(T* address, T value) {
  ::convlab_cpu::detail::count_atomic(address, sizeof(T));
  return __atomic_fetch_sub(address, value, __ATOMIC_RELAXED);
}
template <class T>
CONVLAB_CPU_ATOMIC T atomicExch(T* address, T value) {
  ::convlab_cpu::detail::count_atomic(address, sizeof(T));
  T old;
  __atomic_exchange(address, &value, &old, __ATOMIC_RELAXED);
  return old;
}
template <class T>
CONVLAB_CPU_ATOMIC T atomicCAS(T* address, T compare, T value) {
  ::convlab_cpu::detail::count_atomic(address, sizeof(T));
  __atomic_compare_exchange(address, &compare, &value, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return compare;
}
template <class T>
CONVLAB_CPU_ATOMIC T atomicMax(T* address, T value) {
  ::convlab_cpu::detail::count_atomic(address, sizeof(T));
  T old;
  __atomic_load(address, &old, __ATOMIC_RELAXED);
  while (old < value && !__atomic_compare_exchange(address, &old, &value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
template <class T>
CONVLAB_CPU_ATOMIC T atomicMin(T* address, T value) {
  ::convlab_cpu::detail::count_atomic(address, sizeof(T));
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
// Always inlined: an out-of-line copy from a file built without counting could otherwise
// be the one the linker keeps, and the student's loads through it would go uncounted.
template <class T>
inline __attribute__((always_inline)) T __ldg(const T* p) { return *p; }
// sqrtf, expf, fmaf, fabsf, fminf, ... come from <cmath> in the global namespace, as in CUDA.
