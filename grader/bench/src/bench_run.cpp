// The frame of a lab's benchmark executable. See convlab/bench_run.hpp.
#include "convlab/bench_run.hpp"

#include "convlab/check.hpp"
#include "convlab/gpu.hpp"
#include "convlab/progress.hpp"

#include <cstdio>

#include <fstream>
#include <iostream>
#include <stdexcept>

namespace convlab {

namespace {
bool g_traffic = false;  // this run's BenchOptions::traffic
}  // namespace

bool bench_traffic_requested() { return g_traffic; }

int run_benchmark(int argc, char** argv, const std::string& program, const std::string& title,
                  const std::function<void(BenchReport&, const BenchOptions&, const BenchCeilings&)>& fill) {
  BenchOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") options.quick = true;
    else if (a == "--traffic") options.traffic = g_traffic = true;
    else if (a == "--markdown" && i + 1 < argc) options.markdown_path = argv[++i];
    else if (a == "--json" && i + 1 < argc) options.json_path = argv[++i];
    else {
      std::cerr << "usage: " << program << " [--quick] [--traffic] [--markdown FILE] [--json FILE]\n";
      return 2;
    }
  }
  std::string reason;
  if (!gpu_available(&reason)) {
    std::cout << program << ": skipped: " << reason << "\n";
    return 77;
  }
  try {
    // Progress on stderr: a line per finished row, and a heartbeat naming the step whenever
    // the benchmark has been quiet for 5 s (computing a golden model, timing a kernel).
    Heartbeat heartbeat(stderr, 5.0);
    const DeviceInfo dev = device_info();
    BenchCeilings ceilings;
    progress_step("measuring the copy bandwidth");
    ceilings.copy_gbs = measure_copy_bandwidth_gbs();
    progress_step("measuring the FP32 FMA peak");
    ceilings.peak_gflops = measure_fp32_peak_gflops();
    char buf[160];
    std::snprintf(buf, sizeof buf, "bench: ceilings measured: copy bandwidth %.0f GB/s, FP32 FMA peak %.1f TFLOP/s",
                  ceilings.copy_gbs, ceilings.peak_gflops / 1e3);
    heartbeat.line(buf);
    BenchReport report(title, dev.summary(), ceilings.copy_gbs, ceilings.peak_gflops);
    int rows = 0;
    report.on_row([&](const BenchRow& row) {
      heartbeat.line("bench: row " + std::to_string(++rows) + ": " + BenchReport::row_line(row));
      progress_step("measuring the row after " + row.kernel + " " + row.size + " r=" + std::to_string(row.radius));
    });
    progress_step("preparing the first problem");
    fill(report, options, ceilings);
    std::cout << report.markdown();
    if (!options.markdown_path.empty()) std::ofstream(options.markdown_path) << report.markdown();
    if (!options.json_path.empty()) std::ofstream(options.json_path) << report.json() << "\n";
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

void verify_output(const DeviceBuffer<float>& d_out, const Golden& golden, const Grid& grid, const std::string& what) {
  CONVLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const Comparison c = compare(d_out.download(), golden, grid);
  if (!c.ok()) throw std::runtime_error(what + " is wrong:\n" + c.report());
}

}  // namespace convlab
