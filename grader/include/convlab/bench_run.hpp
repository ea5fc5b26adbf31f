/// @file bench_run.hpp
/// @brief The frame of a lab's benchmark executable: its command line, the GPU check, the
/// ceilings measured at the start of the run, the table printed and written; and the check
/// that a benchmarked kernel computed the right thing.
#pragma once

#include "convlab/bench.hpp"
#include "convlab/compare.hpp"
#include "convlab/device_buffer.hpp"
#include "convlab/golden.hpp"

#include <functional>
#include <string>

namespace convlab {

/// What a benchmark's command line asked for: `[--quick] [--traffic] [--markdown FILE] [--json FILE]`.
struct BenchOptions {
  bool quick = false;         ///< small problems: a smoke test (ctest runs it)
  /// After timing each problem, run every kernel (and the baseline) once more inside a profiling
  /// range (cudaProfilerStart/Stop), each call announced on stdout ("bench: traffic call N: ...")
  /// and opened by a marker kernel: `convlab bench LAB --traffic` runs the benchmark so under
  /// Nsight Compute (`--profile-from-start off`) and reads each call's memory traffic.
  bool traffic = false;
  std::string markdown_path;  ///< also write the table as Markdown here
  std::string json_path;      ///< also write every number as JSON here
};

/// The ceilings measured at the start of the run, in the same process as the kernels.
struct BenchCeilings {
  double copy_gbs = 0;     ///< float4 copy kernel, bytes read + written per second, GB/s
  double peak_gflops = 0;  ///< FP32 FMA throughput, GFLOP/s
};

/// main() of a lab's benchmark: parses the command line (exit 2 on a bad one), exits 77
/// (skipped) without a GPU, measures the ceilings, lets `fill` add the rows, then prints the
/// table and writes the files asked for. An exception from `fill` (such as a wrong output,
/// see verify_output()) is printed and gives exit 1.
int run_benchmark(int argc, char** argv, const std::string& program, const std::string& title,
                  const std::function<void(BenchReport&, const BenchOptions&, const BenchCeilings&)>& fill);

/// Throws std::runtime_error with the comparator's report unless `d_out` matches `golden`
/// (after a device synchronisation): a benchmark of a wrong kernel means nothing.
void verify_output(const DeviceBuffer<float>& d_out, const Golden& golden, const Grid& grid, const std::string& what);

}  // namespace convlab
