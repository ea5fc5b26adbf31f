/// @file conv_bench.hpp
/// @brief The labs' convolution benchmarks: the kernels of a lab timed against
/// the grader-owned naive baseline (and cuDNN for 2D, when it was found), on the
/// same data, interleaved, every output checked against the golden model, plus
/// the `main` that every lab benchmark shares.
///
/// A lab's benchmark is then a list of kernels and sizes:
/// \code
/// int main(int argc, char** argv) {
///   return convlab::bench_main(argc, argv, "lab02_bench", "Lab 02 — constant memory",
///                              [](convlab::BenchReport& report, bool quick) {
///     convlab::bench_conv2d(report, {{"conv2d_constant", my_conv2d}}, 8192, 8192, 3, quick ? 3 : 20);
///   });
/// }
/// \endcode
#pragma once

#include "convlab/bench.hpp"
#include "convlab/conv_testbed.hpp"

#include <functional>
#include <string>
#include <vector>

namespace convlab {

/// A 1D kernel to benchmark: the name of its row and how to call it.
struct BenchConv1d {
  std::string name;  ///< row name, e.g. "conv1d_tiled_loop (reference)"
  Conv1dFn fn;       ///< the kernel under test
};

/// A 2D kernel to benchmark.
struct BenchConv2d {
  std::string name;  ///< row name
  Conv2dFn fn;       ///< the kernel under test
};

/// Adds a row per kernel for one 1D problem (n elements, radius r): each kernel
/// is timed against baseline::conv1d_naive in interleaved pairs (`pairs` of
/// them) and its output is checked; a wrong output ends the program (exit 1).
/// With `baseline_row`, the baseline gets a row of its own first.
void bench_conv1d(BenchReport& report, const std::vector<BenchConv1d>& kernels, int n, int r, int pairs,
                  bool baseline_row = false);

/// The same for 2D (a width x height image) against baseline::conv2d_naive; with
/// cuDNN, its best FMA-math algorithm on the same problem is timed too and
/// shown in every row.
void bench_conv2d(BenchReport& report, const std::vector<BenchConv2d>& kernels, int width, int height, int r,
                  int pairs, bool baseline_row = false);

/// The `main` of a lab benchmark: `program [--quick] [--traffic] [--markdown FILE] [--json FILE]`
/// (--traffic: BenchOptions::traffic; the 1D and 2D problems mark their traffic calls).
/// Exits 77 (skipped) without a GPU, 2 on a bad argument, 1 on an error or a
/// wrong result; otherwise measures the copy bandwidth and the FP32 peak, runs
/// `body(report, quick)`, prints the table and writes the files asked for.
int bench_main(int argc, char** argv, const std::string& program, const std::string& title,
               const std::function<void(BenchReport& report, bool quick)>& body);

}  // namespace convlab
