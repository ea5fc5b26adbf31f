// Lab 01 benchmark: the lab's kernels (student's or reference, as built) next to
// the grader-owned naive baseline and cuDNN, against the copy bandwidth and FP32
// peak measured in the same run.
//   lab01_bench [--quick] [--markdown FILE] [--json FILE]
// Exit 77 (skipped) without a GPU; exit 1 if a kernel's output is wrong.
#include "lab01.hpp"

#include <convlab/baselines.hpp>
#include <convlab/bench_run.hpp>
#include <convlab/compare.hpp>
#include <convlab/device_buffer.hpp>
#include <convlab/golden.hpp>
#include <convlab/gpu.hpp>
#include <convlab/random.hpp>
#ifdef CONVLAB_HAVE_CUDNN
#include <convlab/cudnn_conv.hpp>
#endif

#include <string>

namespace {

using namespace convlab;

void bench_1d(BenchReport& report, int n, int r, int pairs) {
  const auto h_in = random_floats(n, 1), h_f = random_floats(2 * r + 1, 2);
  DeviceBuffer<float> d_in(h_in), d_f(h_f), d_out(n), d_base(n);
  const Conv1dArgs base{d_in.get(), d_f.get(), h_f.data(), d_base.get(), n, r, nullptr};
  const SpeedRound round = measure_round(
      [&](cudaStream_t s) { Conv1dArgs a = base; a.stream = s; baseline::conv1d_naive(a); },
      [&](cudaStream_t s) { lab01::conv1d_naive(d_in.get(), d_f.get(), d_out.get(), {n, r}, s); }, pairs);
  const Golden g = conv1d_golden(h_in, h_f, r);
  verify_output(d_out, g, Grid{n, 1, r}, "conv1d_naive");
  verify_output(d_base, g, Grid{n, 1, r}, "the baseline");
  BenchRow row;
  row.kernel = std::string("conv1d_naive (") + CONVLAB_IMPL_NAME + ")";
  row.size = std::to_string(n);
  row.radius = r;
  row.ms = round.candidate_ms;
  row.ideal_bytes = 2.0 * n * sizeof(float) + (2 * r + 1) * sizeof(float);
  row.flops = 2.0 * n * (2 * r + 1);
  row.baseline_ms = round.baseline_ms.median;
  report.add(row);
}

void bench_2d(BenchReport& report, int w, int h, int r, int pairs) {
  const int fw = 2 * r + 1;
  const std::size_t count = std::size_t(w) * h;
  const auto h_in = random_floats(count, 3), h_f = random_floats(std::size_t(fw) * fw, 4);
  DeviceBuffer<float> d_in(h_in), d_f(h_f), d_out(count), d_base(count);
  const Conv2dArgs base{d_in.get(), d_f.get(), h_f.data(), d_base.get(), w, h, r, nullptr};
  const auto student = [&](cudaStream_t s) {
    lab01::conv2d_naive(d_in.get(), d_f.get(), d_out.get(), {w, h, r}, s);
  };
  const SpeedRound round = measure_round(
      [&](cudaStream_t s) { Conv2dArgs a = base; a.stream = s; baseline::conv2d_naive(a); }, student, pairs);
  const Golden g = conv2d_golden(h_in, w, h, h_f, r);
  verify_output(d_out, g, Grid{w, h, r}, "conv2d_naive");
  verify_output(d_base, g, Grid{w, h, r}, "the baseline");
  BenchRow row;
  row.kernel = std::string("conv2d_naive (") + CONVLAB_IMPL_NAME + ")";
  row.size = std::to_string(w) + "x" + std::to_string(h);
  row.radius = r;
  row.ms = round.candidate_ms;
  row.ideal_bytes = 2.0 * count * sizeof(float) + double(fw) * fw * sizeof(float);
  row.flops = 2.0 * count * fw * fw;
  row.baseline_ms = round.baseline_ms.median;
#ifdef CONVLAB_HAVE_CUDNN
  // cuDNN's best FMA-math algorithm on the same problem: N1 C1 HxW, K1 (2r+1)^2, pad r.
  CudnnConvShape shape;
  shape.h = h; shape.w = w; shape.r = fw; shape.s = fw; shape.pad_h = r; shape.pad_w = r;
  CudnnConv cudnn(shape, CudnnMath::fma);
  DeviceBuffer<float> d_cudnn(count);
  cudnn.choose_algorithm(d_in.get(), d_f.get(), d_cudnn.get());
  const SpeedRound vs = measure_round([&](cudaStream_t s) { cudnn.run(d_in.get(), d_f.get(), d_cudnn.get(), s); },
                                      student, pairs);
  verify_output(d_cudnn, g, Grid{w, h, r}, "cuDNN's result");
  row.cudnn_ms = vs.baseline_ms.median;
  row.note = cudnn.algorithm_name();
#endif
  report.add(row);
}

}  // namespace

int main(int argc, char** argv) {
  return run_benchmark(argc, argv, "lab01_bench", "Lab 01 — naive convolution",
                       [](BenchReport& report, const BenchOptions& options, const BenchCeilings&) {
                         const int pairs = options.quick ? 3 : 20;
                         if (options.quick) {
                           for (int r : {1, 8}) bench_1d(report, (1 << 22) + 1, r, pairs);
                           for (int r : {1, 3}) bench_2d(report, 1031, 1029, r, pairs);
                         } else {
                           for (int r : {1, 2, 4, 8}) bench_1d(report, 1 << 28, r, pairs);
                           for (int r : {1, 2, 3, 4, 7}) bench_2d(report, 8192, 8192, r, pairs);
                         }
                       });
}
