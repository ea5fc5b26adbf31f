/// @file gpu.hpp
/// @brief What only a GPU can tell: whether one is present, what it is, its
/// measured limits, and kernel timing. The CPU-only parts of the harness do not
/// depend on this header, so a CPU backend can replace it.
#pragma once

#include "convlab/stats.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>

namespace convlab {

/// True if a CUDA device can be used; otherwise `reason` says why
/// (e.g. "no CUDA device: cudaGetDeviceCount returned no CUDA-capable device is detected").
bool gpu_available(std::string* reason = nullptr);

/// The device and its nominal figures.
struct DeviceInfo {
  int index = 0;                  ///< CUDA device index
  std::string name;               ///< "NVIDIA H100 80GB HBM3"
  int cc_major = 0;               ///< compute capability, major
  int cc_minor = 0;               ///< compute capability, minor
  int sm_count = 0;               ///< streaming multiprocessors
  std::size_t l2_bytes = 0;       ///< L2 cache size
  std::size_t global_bytes = 0;   ///< device memory
  int sm_clock_mhz = 0;           ///< peak SM clock
  int mem_clock_mhz = 0;          ///< peak memory clock
  int bus_width_bits = 0;         ///< memory bus width
  int driver_version = 0;         ///< e.g. 13000
  int runtime_version = 0;        ///< e.g. 13000
  /// One line: "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MB L2, 1980 MHz, driver 13.0)".
  std::string summary() const;
};

/// Queries the current device.
DeviceInfo device_info();

/// Copy bandwidth measured now: a float4 copy kernel over `bytes` in and out,
/// median of several runs; GB/s counting bytes read plus bytes written.
double measure_copy_bandwidth_gbs(std::size_t bytes = std::size_t(1) << 30);

/// FP32 FMA throughput measured now (independent FMA chains in every thread), GFLOP/s.
double measure_fp32_peak_gflops();

/// Tensor-core TF32 throughput measured now through CUDA's warp matrix API (wmma m16n16k8 TF32
/// fragments, FP32 accumulation: the mma.sync instructions a lab's kernel reaches; Hopper's
/// wgmma goes further), four independent accumulators per warp, GFLOP/s. 0 on a GPU before
/// compute capability 8.0 (no TF32) or a build without device code for one.
double measure_tf32_mma_peak_gflops();

/// Tensor-core TF32 throughput measured now through Hopper's warpgroup products (wgmma m64n64k8,
/// B from shared memory; convlab/wgmma.hpp), two warpgroups an SM, GFLOP/s: the ceiling of a
/// kernel on wgmma, about twice measure_tf32_mma_peak_gflops() on an H100 or H200. 0 on any GPU
/// but compute capability 9.0, or where the build holds no sm_90a code (wgmma::loaded()).
double measure_tf32_wgmma_peak_gflops();

/// A launch to be timed: enqueue the work on `stream`, check the launch.
using Launch = std::function<void(cudaStream_t stream)>;

/// Evicts the L2 cache between timed runs by writing a buffer twice its size.
class L2Flusher {
public:
  L2Flusher();
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  /// Enqueues the flush on `stream`.
  void flush(cudaStream_t stream);

private:
  void* buffer_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Times `launch` with CUDA events: `warmup` untimed runs, then `reps` timed
/// runs, each after an L2 flush. Milliseconds.
Stats time_launch(const Launch& launch, int reps = 20, int warmup = 3);

/// One interleaved round: warm-up of both, then `pairs` times (flush, baseline,
/// flush, prepare, candidate), each of baseline and candidate timed with events.
/// `prepare` (optional) runs before each candidate run, outside the timed region:
/// the speed graders poison the student's output there.
SpeedRound measure_round(const Launch& baseline, const Launch& candidate, int pairs, const Launch& prepare = {});

/// The speed grader: decide_speedup() over measure_round().
SpeedVerdict check_speedup(const Launch& baseline, const Launch& candidate, const SpeedPolicy& policy,
                           const std::string& what, const Launch& prepare = {});

/// How many independent decisions a speed grader makes: the environment variable
/// CONVLAB_SPEED_REPEAT, a whole number from 1 to 100 (default 1; anything else throws
/// std::invalid_argument). The GPU check sets it to 10 to show that the graders are
/// robust to noise.
int speed_repeats();

/// The speed grader as every lab runs it: check_speedup() speed_repeats() times on the same
/// data, each verdict's message printed ("repeat k/N: " first when N > 1). Returns the worst
/// verdict: a failed one if any failed, else the one with the lowest ratio.
SpeedVerdict check_speedup_repeated(const Launch& baseline, const Launch& candidate, const SpeedPolicy& policy,
                                    const std::string& what, const Launch& prepare = {});

/// Writes a speed verdict into the running test's JSON record (convlab::current_record()):
/// the medians of its last round, its ratio and the threshold it was judged against.
void record_speed(const SpeedVerdict& verdict, double threshold);

}  // namespace convlab
