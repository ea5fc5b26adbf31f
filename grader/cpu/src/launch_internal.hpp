// Internals shared by the CPU backend's runtime.cpp, launch.cpp and block_runner.cpp:
// the limits and errors of launches, and (in namespace detail) the pieces of a launch that
// launch.cpp, which starts it, and block_runner.cpp / block_runner.hpp, which run its
// blocks, both use: a launch, a thread's slot, the fibers' stacks, the stack switches.
#pragma once

#include "convlab_cpu/launch.hpp"
#include "convlab_cpu/runtime.hpp"
#include "convlab_cpu/warp.hpp"

#include <boost/context/fiber.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

// AddressSanitizer must be told when execution moves to another stack, or it
// takes a fiber's stack for an overflow of the thread's. These hooks do that
// (a no-op in other builds); see sanitizer/common_interface_defs.h.
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define CONVLAB_ASAN_FIBERS 1
#endif

namespace convlab_cpu {
inline constexpr int kDefaultDynamicShared = 48 * 1024;    // as on every CUDA GPU
inline constexpr int kMaxDynamicSharedOptin = 227 * 1024;  // Hopper's opt-in limit
/// Host threads that run blocks.
int worker_count();
/// The error of the last kernel that failed while running (cleared by the call).
cudaError_t take_execution_error();
/// The detailed message of the last failed launch (configuration or execution).
const std::string& last_launch_detail();
/// The dynamic shared memory limit of a kernel.
int max_dynamic_shared(const void* kernel);
/// Whether `address` lies in the shared memory of the block this host thread is running.
bool in_block_shared_memory(const void* address);

namespace detail {

namespace ctx = boost::context;

// ---- settings -------------------------------------------------------------------------------
inline std::size_t stack_bytes() {
  static const std::size_t bytes = [] {
    std::size_t kb = 256;
    if (const char* env = std::getenv("CONVLAB_CPU_STACK_KB"); env && *env) kb = std::strtoul(env, nullptr, 10);
    return std::max<std::size_t>(kb, 64) * 1024;
  }();
  return bytes;
}

inline std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// ---- stack switches, for AddressSanitizer ----------------------------------------------------
struct StackBounds {
  const void* bottom = nullptr;
  std::size_t size = 0;
};
#ifdef CONVLAB_ASAN_FIBERS
inline void switch_begin(void** fake_stack, const StackBounds& to) {
  __sanitizer_start_switch_fiber(fake_stack, to.bottom, to.size);
}
inline void switch_end(void* fake_stack, StackBounds* from) {
  __sanitizer_finish_switch_fiber(fake_stack, from ? &from->bottom : nullptr, from ? &from->size : nullptr);
}
#else
inline void switch_begin(void**, const StackBounds&) {}
inline void switch_end(void*, StackBounds*) {}
#endif

// ---- errors ---------------------------------------------------------------------------------
// A failed launch: recorded for cudaGetErrorString; configuration errors are
// returned by cudaGetLastError, execution errors by the next synchronising call.
struct LaunchFailure {
  cudaError_t code;
  std::string message;
};

// The exception that unwinds a thread that reached a barrier in direct mode.
struct DirectModeBarrier {
  const char* file;
  int line;
};

inline std::string coords(uint3 v) {
  return "(" + std::to_string(v.x) + "," + std::to_string(v.y) + "," + std::to_string(v.z) + ")";
}

// ---- one block -------------------------------------------------------------------------------
struct Slot {
  uint3 idx{};
  // at_barrier: at __syncthreads(); at_warp: at a warp barrier (__syncwarp, a shuffle, a vote)
  enum State { ready, at_barrier, at_warp, done } state = ready;
  const char* what = nullptr;  // what it waits at ("__syncthreads()", "__syncwarp()", "__shfl_down_sync", ...)
  const char* file = nullptr;  // where it waits
  int line = 0;
  // Its part in the warp's exchange (a shuffle or vote): set before the exchange's first
  // warp barrier, cleared after its second, so that every lane reads it in between.
  bool published = false;
  detail::WarpOp op{};
  int bytes = 0;
  std::uint64_t value = 0;
  ctx::fiber fiber;   // the suspended thread
  ctx::fiber caller;  // inside the thread: the scheduler
  std::exception_ptr error;
  StackBounds stack;          // the fiber's stack
  void* fake_stack = nullptr; // AddressSanitizer's saved state while suspended
  detail::PipelineState pipeline;  // its asynchronous copies not yet landed (pipeline.hpp)
};

// Stacks for the fibers of one block, reserved once per host thread (mmap
// commits pages only when touched).
class StackPool {
public:
  ~StackPool() {
    if (base_) munmap(base_, reserved_);
  }
  char* stack(std::size_t i) {
    const std::size_t need = (i + 1) * stack_bytes();
    if (need > reserved_) grow(std::max(need, std::size_t(1024) * stack_bytes()));
    return static_cast<char*>(base_) + i * stack_bytes();
  }

private:
  void grow(std::size_t bytes) {
    if (base_) munmap(base_, reserved_);
    base_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base_ == MAP_FAILED) {
      base_ = nullptr;
      reserved_ = 0;
      throw std::bad_alloc();
    }
    reserved_ = bytes;
  }
  void* base_ = nullptr;
  std::size_t reserved_ = 0;
};

// The stack belongs to the pool: the fiber must not free it.
struct NoFree {
  ctx::stack_context allocate() { throw std::logic_error("NoFree::allocate"); }
  void deallocate(ctx::stack_context&) noexcept {}
};

struct Launch {
  const char* name;
  const char* file;
  int line;
  LaunchConfig config;
  detail::KernelInvoker invoke;  // runs one thread of the kernel
  const void* context;
  Schedule schedule;
  std::uint64_t seed;
  std::uint64_t serial;     // tells launches apart
  int max_dynamic_shared;   // the kernel's dynamic shared memory limit (raised above 48 KB or not)
};

}  // namespace detail
}  // namespace convlab_cpu
