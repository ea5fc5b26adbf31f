/// @file bench_run.hpp
/// @brief The frame of a lab's benchmark executable: its command line, the GPU check, the
/// ceilings measured at the start of the run, the table printed and written; and the check
/// that a benchmarked kernel computed the right thing.
#pragma once

#include "convlab/bench.hpp"
#include "convlab/compare.hpp"
#include "convlab/device_buffer.hpp"
#include "convlab/golden.hpp"
#include "convlab/gpu.hpp"

#include <exception>
#include <functional>
#include <iostream>
#include <stdexcept>
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

/// One traffic call of a run with --traffic (BenchOptions::traffic; does nothing otherwise): the
/// call announced on stdout as "bench: traffic call N: KERNEL | SIZE | r=R | taps=T | OUTPUTS outputs",
/// then run alone, on a stream of its own, inside a profiling range opened by the marker kernel,
/// which `convlab bench LAB --traffic` pairs with ncu's launches. `taps`: the loads of one output
/// in the naive design (2r + 1, (2r + 1)^2, a stencil's points); `outputs`: the outputs (cell
/// updates) the call computes, which the counts are divided by. Defined in convlab::bench_driver
/// (CUDA builds), with the marker kernel.
void bench_traffic_call(const std::string& kernel, const std::string& size, int radius, int taps, double outputs,
                        const Launch& call);
/// The row name of the grader's naive convolution baseline in the tables and traffic calls.
extern const char kBenchBaselineRow[];
/// Whether this run asked for --traffic (set by run_benchmark()).
bool bench_traffic_requested();

/// Throws std::runtime_error with the comparator's report unless `d_out` matches `golden`
/// (after a device synchronisation): a benchmark of a wrong kernel means nothing.
void verify_output(const DeviceBuffer<float>& d_out, const Golden& golden, const Grid& grid, const std::string& what);

/// A whole number given to a command-line option: throws std::invalid_argument ("OPTION takes a
/// whole number, got 'TEXT'") for anything else, such as "x", "3.5" or a number past int's range.
inline int whole_number_option(const std::string& option, const std::string& text) {
  std::size_t used = 0;
  try {
    const int value = std::stoi(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(option + " takes a whole number, got '" + text + "'");
}

/// main() of a lab's instructor program (labs/NN-slug/instructor/): `parse` reads the command line
/// (an exception there: the message and "usage: USAGE" printed, exit 2), `run` does the work and
/// returns the exit status (0, or 77: skipped; an exception: the message printed, exit 1). Every
/// message starts with "PROGRAM: ".
template <class Options>
int instructor_main(int argc, char** argv, const char* program, const char* usage,
                    Options (*parse)(int, char**), int (*run)(const Options&)) {
  Options options;
  try {
    options = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\nusage: " << usage << "\n";
    return 2;
  }
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace convlab
