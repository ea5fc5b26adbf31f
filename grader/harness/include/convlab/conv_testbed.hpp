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

#include "convlab/random.hpp"  // separable_factor, outer_product (also used by the benchmarks)
#include "convlab/spec.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
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
  /// FilterKind::separable only: the 2r+1 taps applied along a row (x), on the host;
  /// h_filter is then h_col_filter ⊗ h_row_filter. Null otherwise.
  const float* h_row_filter = nullptr;
  /// FilterKind::separable only: the 2r+1 taps applied along a column (y), on the host.
  const float* h_col_filter = nullptr;
};

/// A 1D kernel under test.
using Conv1dFn = std::function<void(const Conv1dArgs&)>;
/// A 2D kernel under test.
using Conv2dFn = std::function<void(const Conv2dArgs&)>;

/// How a 2D check draws its filter.
enum class FilterKind {
  random,     ///< (2r+1)^2 independent random taps
  /// The outer product of two random 1D filters, \f$ f_{i,j} = c_i\, w_j \f$, for kernels that
  /// apply it as a row pass (w) and a column pass (c): Conv2dArgs::h_row_filter and
  /// h_col_filter hold the factors, h_filter and d_filter the 2D filter. Each factor has
  /// 12 significant bits, so every product \f$ c_i w_j \f$ is exact in float and the golden
  /// model sees exactly the filter the two passes apply.
  ///
  /// Tolerance: a pass sums m = 2r+1 products, so the row pass leaves
  /// \f$ |\hat t - t| \le \gamma_m \sum_j |w_j x_{\cdot,j}| \f$, and the column pass adds
  /// \f$ \gamma_m \sum_i |c_i \hat t_i| \f$; with \f$ |\hat t_i| \le (1+\gamma_m) \sum_j |w_j x_{i,j}| \f$
  /// the total is \f$ (2\gamma_m + \gamma_m^2) \sum |x f| \le \gamma_{2m} \sum |x f| \f$ (Higham,
  /// lemma 3.3), with \f$ f = c \otimes w \f$. The comparator allows \f$ \gamma_{m^2+1} \sum |x f| \f$,
  /// and \f$ m^2 + 1 \ge 2m \f$ for every m, so the two-pass computation is judged by the
  /// same rule as a direct one, with room to spare.
  separable,
};

/// Options of a correctness check.
struct ConvCheckOptions {
  int tile_x = 0;  ///< output tile width, if the lab's contract fixes one (names tile edges)
  int tile_y = 0;  ///< output tile height
  FilterKind filter = FilterKind::random;  ///< 2D checks: how the filter is drawn
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

/// Speed grader for 2D. `options.filter` says how the filter is drawn (the baseline gets the
/// 2D filter, so a separable kernel is timed against the direct computation).
void check_conv2d_speed(const Conv2dFn& kernel, const Conv2dFn& baseline, const std::string& baseline_name,
                        const Conv2dCase& c, const GraderSpec& grader, const ConvCheckOptions& options = {});

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
