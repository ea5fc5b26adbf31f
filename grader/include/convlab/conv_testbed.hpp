/// @file conv_testbed.hpp
/// @brief Shared graders for single-channel 1D and 2D convolution (labs 01–04).
///
/// A lab's test file wraps its contract in a Conv1dFn / Conv2dFn and hands it
/// here with its cases (add_conv1d_correctness() and friends register one test
/// per case). The testbed draws random data from the test's seed, puts
/// NaN guard zones around the input (an out-of-bounds read turns the output into
/// NaN) and the output (a stray write is reported), poisons the output with NaN,
/// runs the kernel, checks the launch, and compares with the golden model.
#pragma once

#include "convlab/spec.hpp"

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

namespace convlab {

class Registry;

/// A 1D problem: n inputs, radius r (2r+1 taps).
struct Conv1dCase {
  int n = 0;       ///< inputs (= outputs)
  int radius = 0;  ///< filter radius
  /// "n1000_r3"
  std::string name() const;
};

/// A 2D problem: a width x height image, a (2r+1)^2 filter.
struct Conv2dCase {
  int width = 0;   ///< columns
  int height = 0;  ///< rows
  int radius = 0;  ///< filter radius
  /// "w1023_h517_r3"
  std::string name() const;
};

/// What a 1D kernel under test is given (device pointers unless marked h_).
struct Conv1dArgs {
  const float* d_in = nullptr;      ///< n inputs
  const float* d_filter = nullptr;  ///< 2r+1 taps, on the device
  const float* h_filter = nullptr;  ///< the same taps, on the host (for constant memory)
  float* d_out = nullptr;           ///< n outputs
  int n = 0;                        ///< inputs
  int radius = 0;                   ///< radius
  cudaStream_t stream = nullptr;    ///< where to launch
};

/// What a 2D kernel under test is given.
struct Conv2dArgs {
  const float* d_in = nullptr;      ///< width*height inputs, row-major
  const float* d_filter = nullptr;  ///< (2r+1)^2 taps, row-major, on the device
  const float* h_filter = nullptr;  ///< the same taps on the host
  float* d_out = nullptr;           ///< width*height outputs
  int width = 0;                    ///< columns
  int height = 0;                   ///< rows
  int radius = 0;                   ///< radius
  cudaStream_t stream = nullptr;    ///< where to launch
};

/// A 1D kernel under test.
using Conv1dFn = std::function<void(const Conv1dArgs&)>;
/// A 2D kernel under test.
using Conv2dFn = std::function<void(const Conv2dArgs&)>;

/// Options of a correctness check.
struct ConvCheckOptions {
  int tile_x = 0;  ///< output tile width, if the lab's contract fixes one (names tile edges)
  int tile_y = 0;  ///< output tile height
};

/// Correctness grader for 1D: records a GoogleTest failure with a located report
/// if any output is wrong. Returns true when all outputs are right.
bool check_conv1d(const Conv1dFn& kernel, const Conv1dCase& c, const ConvCheckOptions& options = {});

/// Correctness grader for 2D.
bool check_conv2d(const Conv2dFn& kernel, const Conv2dCase& c, const ConvCheckOptions& options = {});

/// Speed grader for 1D: checks correctness on the timed problem first (correctness
/// gates speed), then times `kernel` against the grader-owned `baseline`,
/// interleaved, with the threshold of `grader` (from the lab's spec).
void check_conv1d_speed(const Conv1dFn& kernel, const Conv1dFn& baseline, const std::string& baseline_name,
                        const Conv1dCase& c, const GraderSpec& grader);

/// Speed grader for 2D.
void check_conv2d_speed(const Conv2dFn& kernel, const Conv2dFn& baseline, const std::string& baseline_name,
                        const Conv2dCase& c, const GraderSpec& grader);

/// The output tile of a lab whose contract fixes one, for a radius (for naming
/// tile edges and halo corners in failure reports).
using TileOf = std::function<ConvCheckOptions(int radius)>;

/// Registers one correctness test per case, `<lab>.correctness.<variant>.<case>`,
/// each running check_conv1d() on `kernel`; `tile` (optional) gives the tile.
void add_conv1d_correctness(Registry& reg, const std::string& variant, const Conv1dFn& kernel,
                            const std::vector<Conv1dCase>& cases, const TileOf& tile = {});

/// The same for 2D.
void add_conv2d_correctness(Registry& reg, const std::string& variant, const Conv2dFn& kernel,
                            const std::vector<Conv2dCase>& cases, const TileOf& tile = {});

/// Registers one speed test per case, `<lab>.speedup.<variant>.<case>`: `kernel`
/// timed against the grader-owned naive baseline (baseline::conv1d_naive) with
/// the threshold of the lab's grader `speedup.<variant>`.
void add_conv1d_speedup(Registry& reg, const std::string& variant, const Conv1dFn& kernel,
                        const std::vector<Conv1dCase>& cases);

/// The same for 2D (against baseline::conv2d_naive).
void add_conv2d_speedup(Registry& reg, const std::string& variant, const Conv2dFn& kernel,
                        const std::vector<Conv2dCase>& cases);

}  // namespace convlab
