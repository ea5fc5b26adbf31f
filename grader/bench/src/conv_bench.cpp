// The labs' convolution benchmarks. See convlab/conv_bench.hpp.
#include "convlab/conv_bench.hpp"

#include "convlab/bench_run.hpp"

#include "convlab/baselines.hpp"
#include "convlab/check.hpp"
#include "convlab/compare.hpp"
#include "convlab/device_buffer.hpp"
#include "convlab/golden.hpp"
#include "convlab/gpu.hpp"
#include "convlab/progress.hpp"
#include "convlab/random.hpp"
#ifdef CONVLAB_HAVE_CUDNN
#include "convlab/cudnn_conv.hpp"
#endif

#include <cuda_profiler_api.h>

#include <cstdlib>
#include <iostream>

namespace convlab {

void launch_traffic_marker(cudaStream_t stream);  // traffic_marker.cu

const char kBenchBaselineRow[] = "baseline: naive, filter in global memory (grader)";

void bench_traffic_call(const std::string& kernel, const std::string& size, int radius, int taps, double outputs,
                        const Launch& call) {
  if (!bench_traffic_requested()) return;
  static int n = 0;
  ++n;
  std::cout << "bench: traffic call " << n << ": " << kernel << " | " << size << " | r=" << radius << " | taps=" << taps
            << " | " << static_cast<long long>(outputs) << " outputs" << std::endl;
  cudaStream_t s = nullptr;
  CONVLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CONVLAB_CUDA_CHECK(cudaDeviceSynchronize());
  CONVLAB_CUDA_CHECK(cudaProfilerStart());
  launch_traffic_marker(s);
  call(s);
  CONVLAB_CUDA_CHECK(cudaDeviceSynchronize());  // every stream: a launch elsewhere counts too
  CONVLAB_CUDA_CHECK(cudaProfilerStop());
  CONVLAB_CUDA_CHECK(cudaStreamDestroy(s));
}

namespace {

// Checks `d_out` against the golden model; exits on a wrong result (a benchmark of a wrong kernel is meaningless).
void verify(const DeviceBuffer<float>& d_out, const Golden& g, const Grid& grid, const std::string& what) {
  CONVLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const Comparison c = compare(d_out.download(), g, grid);
  if (!c.ok()) {
    std::cerr << "benchmark: " << what << " is wrong:\n" << c.report();
    std::exit(1);
  }
}

// What every row of one problem shares.
struct Problem {
  std::string size;
  int radius;
  double ideal_bytes;  // each input read once, each output written once, the filter once
  double flops;        // 2 per tap per output
  int taps;            // per output
};

BenchRow row_of(const Problem& p, const std::string& name, const Stats& ms, double baseline_ms) {
  BenchRow row;
  row.kernel = name;
  row.size = p.size;
  row.radius = p.radius;
  row.ms = ms;
  row.ideal_bytes = p.ideal_bytes;
  row.flops = p.flops;
  row.baseline_ms = baseline_ms;
  return row;
}

// Times each kernel against the baseline and checks both outputs. `launch(fn, out, stream)` runs a kernel.
template <class Fn, class Kernel>
std::vector<BenchRow> time_against_baseline(const Problem& p, const std::vector<Kernel>& kernels, const Fn& baseline,
                                            const Golden& g, const Grid& grid, std::size_t count, int pairs,
                                            bool baseline_row,
                                            const std::function<void(const Fn&, float*, cudaStream_t)>& launch) {
  std::vector<BenchRow> rows;
  DeviceBuffer<float> d_base(count), d_out(count);
  for (const auto& k : kernels) {
    const ProgressStep step("timing " + k.name + " on " + p.size + " r=" + std::to_string(p.radius) +
                            " against the baseline (" + std::to_string(pairs) + " interleaved pairs)");
    const SpeedRound round = measure_round([&](cudaStream_t s) { launch(baseline, d_base.get(), s); },
                                           [&](cudaStream_t s) { launch(k.fn, d_out.get(), s); }, pairs);
    verify(d_out, g, grid, k.name);
    if (rows.empty()) {
      verify(d_base, g, grid, "the baseline");
      if (baseline_row)
        rows.push_back(row_of(p, kBenchBaselineRow, round.baseline_ms,
                              round.baseline_ms.median));
    }
    rows.push_back(row_of(p, k.name, round.candidate_ms, round.baseline_ms.median));
  }
  // With --traffic: the baseline, then each kernel, once each (outputs checked above).
  bench_traffic_call(kBenchBaselineRow, p.size, p.radius, p.taps, double(count),
                     [&](cudaStream_t s) { launch(baseline, d_base.get(), s); });
  for (const auto& k : kernels)
    bench_traffic_call(k.name, p.size, p.radius, p.taps, double(count),
                       [&](cudaStream_t s) { launch(k.fn, d_out.get(), s); });
  return rows;
}

}  // namespace

void bench_conv1d(BenchReport& report, const std::vector<BenchConv1d>& kernels, int n, int r, int pairs,
                  bool baseline_row) {
  const auto h_in = random_floats(n, 1), h_f = random_floats(2 * r + 1, 2);
  DeviceBuffer<float> d_in(h_in), d_f(h_f);
  const Problem p{std::to_string(n), r, 2.0 * n * sizeof(float) + (2 * r + 1) * sizeof(float), 2.0 * n * (2 * r + 1), 2 * r + 1};
  const auto launch = [&](const Conv1dFn& fn, float* out, cudaStream_t s) {
    fn(Conv1dArgs{d_in.get(), d_f.get(), h_f.data(), out, n, r, s});
  };
  const Golden g = conv1d_golden(h_in, h_f, r);
  for (auto& row : time_against_baseline<Conv1dFn>(p, kernels, baseline::conv1d_naive, g, Grid{n, 1, r},
                                                   std::size_t(n), pairs, baseline_row, launch))
    report.add(row);
}

void bench_conv2d(BenchReport& report, const std::vector<BenchConv2d>& kernels, int w, int h, int r, int pairs,
                  bool baseline_row) {
  const int fw = 2 * r + 1;
  const std::size_t count = std::size_t(w) * h;
  const auto h_in = random_floats(count, 3), h_f = random_floats(std::size_t(fw) * fw, 4);
  DeviceBuffer<float> d_in(h_in), d_f(h_f);
  const Problem p{std::to_string(w) + "x" + std::to_string(h), r,
                  2.0 * count * sizeof(float) + double(fw) * fw * sizeof(float), 2.0 * count * fw * fw, fw * fw};
  const auto launch = [&](const Conv2dFn& fn, float* out, cudaStream_t s) {
    fn(Conv2dArgs{d_in.get(), d_f.get(), h_f.data(), out, w, h, r, s});
  };
  const Golden g = conv2d_golden(h_in, w, h, h_f, r);
  std::vector<BenchRow> rows = time_against_baseline<Conv2dFn>(p, kernels, baseline::conv2d_naive, g, Grid{w, h, r},
                                                               count, pairs, baseline_row, launch);
#ifdef CONVLAB_HAVE_CUDNN
  // cuDNN's best FMA-math algorithm on the same problem: N1 C1 HxW, K1 (2r+1)^2, pad r,
  // timed interleaved with the first kernel.
  if (!kernels.empty()) {
    CudnnConvShape shape;
    shape.h = h; shape.w = w; shape.r = fw; shape.s = fw; shape.pad_h = r; shape.pad_w = r;
    CudnnConv cudnn(shape, CudnnMath::fma);
    DeviceBuffer<float> d_cudnn(count), d_out(count);
    cudnn.choose_algorithm(d_in.get(), d_f.get(), d_cudnn.get());
    const SpeedRound vs = measure_round([&](cudaStream_t s) { cudnn.run(d_in.get(), d_f.get(), d_cudnn.get(), s); },
                                        [&](cudaStream_t s) { launch(kernels.front().fn, d_out.get(), s); }, pairs);
    verify(d_cudnn, g, Grid{w, h, r}, "cuDNN's result");
    for (auto& row : rows) {
      row.cudnn_ms = vs.baseline_ms.median;
      row.note = cudnn.algorithm_name();
    }
  }
#endif
  for (auto& row : rows) report.add(row);
}

int bench_main(int argc, char** argv, const std::string& program, const std::string& title,
               const std::function<void(BenchReport&, bool)>& body) {
  // The frame (options, GPU check, ceilings, output files) is the one every lab's benchmark uses.
  return run_benchmark(argc, argv, program, title,
                       [&](BenchReport& report, const BenchOptions& options, const BenchCeilings&) {
                         body(report, options.quick);
                       });
}

}  // namespace convlab
