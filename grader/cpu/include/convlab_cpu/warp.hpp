/// @file warp.hpp
/// @brief CUDA's warp-level primitives on the CPU backend: `__syncwarp`, the shuffles
/// (`__shfl_sync`, `__shfl_up_sync`, `__shfl_down_sync`, `__shfl_xor_sync`) and the votes
/// (`__ballot_sync`, `__any_sync`, `__all_sync`), as an sm_70+ GPU runs them.
///
/// A warp is 32 consecutive threads of a block, numbered x fastest (lane = linear index % 32);
/// the last warp of a block may be partial, its lanes only those that exist. `__syncwarp()` is
/// a barrier in the fiber scheduler (block_runner.hpp): a thread that reaches it waits until every
/// lane of its warp that has not returned from the kernel waits at a warp barrier too; lanes
/// that returned do not count, as on Volta and later. A warp whose lanes wait at `__syncwarp`
/// while another of its lanes waits at `__syncthreads()` can never go on: the launch fails with
/// the kernel, block, threads and lines named (on a GPU it hangs).
///
/// A shuffle is two warp barriers: each lane publishes its value, all wait, each reads its
/// source lane's, all wait again (so no value is overwritten before it is read). Which lane a
/// lane reads, with `width` (a power of two up to 32: the warp split into segments of that
/// many lanes), follows PTX's `shfl.sync` exactly: up and down return the caller's own value
/// where the source lies outside its segment, `srcLane` is taken modulo `width`, and a xor whose
/// mask reaches above the segment reads outside it as the GPU does. A lane that does not exist
/// (past the end of a partial warp) or has returned has no value to give: CUDA leaves the result
/// undefined, and here it is kUndefinedLaneBits (a NaN as float, and as double), so that a result
/// computed from it shows, never a plausible number.
///
/// Masks: the full mask 0xffffffff, or, in a block's last partial warp, the mask of the lanes
/// that exist. Any other mask is refused at run time with a message naming the kernel and the
/// line (partial masks are not supported on the CPU backend). `__activemask()` is refused by
/// cu2cpp: which lanes run together is the GPU's scheduling, which the CPU backend does not have.
///
/// Not memory accesses: the values travel through the runtime, so a shuffle adds nothing to a
/// kernel's counted loads and stores (records.hpp), as on a GPU. The wrappers below are not
/// instrumented (CONVLAB_CPU_NOT_COUNTED) and pass values in registers to the runtime.
#pragma once

#include "convlab_cpu/launch.hpp"

#include <cstdint>
#include <cstring>

namespace convlab_cpu {

/// What a shuffle returns from a lane that does not exist or has returned: a quiet NaN with a
/// payload of its own as a float (each half of a 64-bit value holds it: a NaN as a double too).
inline constexpr std::uint32_t kUndefinedLaneBits = 0x7FC0D1EDu;
inline constexpr std::uint64_t kUndefinedLaneBits64 = 0x7FF8D1ED7FC0D1EDull;

namespace detail {
/// The warp operations of the runtime.
enum class WarpOp : int { shfl_idx, shfl_up, shfl_down, shfl_xor, ballot, any, all };
/// The warp barrier, `__syncwarp(mask)`, at `file:line`.
void syncwarp(const char* file, int line, unsigned mask);
/// A shuffle or a vote of the running thread's warp: publishes `value` (`bytes` 4 or 8 of it),
/// waits for the warp, reads, waits again. `lane` is srcLane, delta or laneMask; returns the
/// bits read (a shuffle), the ballot, or 0/1 (any, all).
std::uint64_t warp_exchange(WarpOp op, const char* file, int line, unsigned mask, std::uint64_t value, int lane,
                            int width, int bytes);
}  // namespace detail

namespace warp_detail {
CONVLAB_CPU_NOT_COUNTED constexpr unsigned mask_or_full() { return 0xFFFFFFFFu; }
CONVLAB_CPU_NOT_COUNTED constexpr unsigned mask_or_full(unsigned mask) { return mask; }

template <class T>
CONVLAB_CPU_NOT_COUNTED std::uint64_t to_bits(T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "a shuffle moves 32- or 64-bit values");
  if constexpr (sizeof(T) == 4) {
    std::uint32_t u;
    __builtin_memcpy(&u, &v, 4);
    return u;
  } else {
    std::uint64_t u;
    __builtin_memcpy(&u, &v, 8);
    return u;
  }
}
template <class T>
CONVLAB_CPU_NOT_COUNTED T from_bits(std::uint64_t u) {
  T v;
  if constexpr (sizeof(T) == 4) {
    const std::uint32_t w = static_cast<std::uint32_t>(u);
    __builtin_memcpy(&v, &w, 4);
  } else {
    __builtin_memcpy(&v, &u, 8);
  }
  return v;
}

// One overload per type CUDA documents (int, unsigned, long, unsigned long, long long,
// unsigned long long, float, double), so that overload resolution picks as nvcc's does.
#define CONVLAB_CPU_SHUFFLES(T)                                                                                     \
  CONVLAB_CPU_NOT_COUNTED T shfl_idx(const char* file, int line, unsigned mask, T var, int src, int width = 32) { \
    return from_bits<T>(::convlab_cpu::detail::warp_exchange(::convlab_cpu::detail::WarpOp::shfl_idx, file, line,  \
                                                             mask, to_bits(var), src, width, int(sizeof(T))));     \
  }                                                                                                                 \
  CONVLAB_CPU_NOT_COUNTED T shfl_up(const char* file, int line, unsigned mask, T var, unsigned delta,              \
                                    int width = 32) {                                                               \
    return from_bits<T>(::convlab_cpu::detail::warp_exchange(::convlab_cpu::detail::WarpOp::shfl_up, file, line,   \
                                                             mask, to_bits(var), int(delta), width, int(sizeof(T))));\
  }                                                                                                                 \
  CONVLAB_CPU_NOT_COUNTED T shfl_down(const char* file, int line, unsigned mask, T var, unsigned delta,            \
                                      int width = 32) {                                                             \
    return from_bits<T>(::convlab_cpu::detail::warp_exchange(::convlab_cpu::detail::WarpOp::shfl_down, file, line, \
                                                             mask, to_bits(var), int(delta), width, int(sizeof(T))));\
  }                                                                                                                 \
  CONVLAB_CPU_NOT_COUNTED T shfl_xor(const char* file, int line, unsigned mask, T var, int lane_mask,              \
                                     int width = 32) {                                                              \
    return from_bits<T>(::convlab_cpu::detail::warp_exchange(::convlab_cpu::detail::WarpOp::shfl_xor, file, line,  \
                                                             mask, to_bits(var), lane_mask, width, int(sizeof(T))));\
  }
CONVLAB_CPU_SHUFFLES(int)
CONVLAB_CPU_SHUFFLES(unsigned)
CONVLAB_CPU_SHUFFLES(long)
CONVLAB_CPU_SHUFFLES(unsigned long)
CONVLAB_CPU_SHUFFLES(long long)
CONVLAB_CPU_SHUFFLES(unsigned long long)
CONVLAB_CPU_SHUFFLES(float)
CONVLAB_CPU_SHUFFLES(double)
#undef CONVLAB_CPU_SHUFFLES

CONVLAB_CPU_NOT_COUNTED void syncwarp(const char* file, int line, unsigned mask) {
  ::convlab_cpu::detail::syncwarp(file, line, mask);
}
CONVLAB_CPU_NOT_COUNTED unsigned ballot(const char* file, int line, unsigned mask, int predicate) {
  return unsigned(::convlab_cpu::detail::warp_exchange(::convlab_cpu::detail::WarpOp::ballot, file, line, mask,
                                                       predicate != 0, 0, 32, 4));
}
CONVLAB_CPU_NOT_COUNTED int any(const char* file, int line, unsigned mask, int predicate) {
  return int(::convlab_cpu::detail::warp_exchange(::convlab_cpu::detail::WarpOp::any, file, line, mask,
                                                  predicate != 0, 0, 32, 4));
}
CONVLAB_CPU_NOT_COUNTED int all(const char* file, int line, unsigned mask, int predicate) {
  return int(::convlab_cpu::detail::warp_exchange(::convlab_cpu::detail::WarpOp::all, file, line, mask,
                                                  predicate != 0, 0, 32, 4));
}
}  // namespace warp_detail
}  // namespace convlab_cpu

// The names a kernel uses; each call passes its line, for the messages.
#define __syncwarp(...) \
  ::convlab_cpu::warp_detail::syncwarp(__FILE__, __LINE__, ::convlab_cpu::warp_detail::mask_or_full(__VA_ARGS__))
#define __shfl_sync(...) ::convlab_cpu::warp_detail::shfl_idx(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_up_sync(...) ::convlab_cpu::warp_detail::shfl_up(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_down_sync(...) ::convlab_cpu::warp_detail::shfl_down(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_xor_sync(...) ::convlab_cpu::warp_detail::shfl_xor(__FILE__, __LINE__, __VA_ARGS__)
#define __ballot_sync(...) ::convlab_cpu::warp_detail::ballot(__FILE__, __LINE__, __VA_ARGS__)
#define __any_sync(...) ::convlab_cpu::warp_detail::any(__FILE__, __LINE__, __VA_ARGS__)
#define __all_sync(...) ::convlab_cpu::warp_detail::all(__FILE__, __LINE__, __VA_ARGS__)
