// The runner's device side: what it records while the student's code runs (recorder_cuda.cpp on
// a GPU, recorder_cpu.cpp on the CPU backend) and its own small kernels (device.cu). Internal to
// the runner library; see runner_main.cpp for how the pieces are used.
#pragma once

#include "convlab/wire.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace convlab::runner {

/// A pointer argument of the call being recorded: the allocation it points into.
struct PointerArg {
  std::uintptr_t begin = 0, end = 0;  ///< [begin, end) of the allocation (0, 0 for null)
  bool writable = false;              ///< the parameter is not pointer-to-const
};

/// True when `s` is one of the streams the call was given (the recorders of both backends).
inline bool given_stream(const std::vector<cudaStream_t>& given, cudaStream_t s) {
  for (cudaStream_t g : given)
    if (g == s) return true;
  return false;
}

/// The index of the pointer argument whose allocation holds `p`, or -1 (both backends).
inline std::int32_t arg_of(const std::vector<PointerArg>& args, const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i].end > args[i].begin && a >= args[i].begin && a < args[i].end) return static_cast<std::int32_t>(i);
  return -1;
}

/// Remembers the thread that serves the judge: work started from any other thread is stray.
void recorder_init();
/// The student's code is about to run: record its launches, copies and allocations from now on.
/// `given` are the streams the call received.
void record_begin(const std::vector<cudaStream_t>& given, const std::vector<PointerArg>& args);
/// The student's code has returned: what it did since record_begin().
wire::Evidence record_end();
/// Streams that launches or asynchronous copies used since record_begin(), the given ones excepted.
std::vector<cudaStream_t> recorded_other_streams();
/// Launches and copies made by threads other than the serving one, since the runner started.
std::uint64_t stray_work();

/// `count` uniform floats in [-1, 1) at `p`, a function of (nonce, index) only, on `stream`.
void random_fill(float* p, std::uint64_t count, std::uint64_t nonce, cudaStream_t stream);

/// What compare_on_device() found.
struct CheckResult {
  std::uint64_t mismatches = 0;  ///< elements with |candidate - reference| > tolerance, NaN included
  std::uint64_t first = 0;       ///< the first such element
  float got = 0, want = 0;       ///< its two values
};
/// Compares two device arrays element by element (synchronises `stream`).
CheckResult compare_on_device(const float* candidate, const float* reference, std::uint64_t count, float tolerance,
                              cudaStream_t stream);

/// Evicts the L2 cache, persisting lines included, on `stream` (no-op on the CPU backend).
class CacheFlusher {
public:
  CacheFlusher();
  ~CacheFlusher();
  CacheFlusher(const CacheFlusher&) = delete;
  CacheFlusher& operator=(const CacheFlusher&) = delete;
  void flush(cudaStream_t stream);

private:
  void* buffer_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace convlab::runner
