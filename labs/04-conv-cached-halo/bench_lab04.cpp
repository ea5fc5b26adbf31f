// Lab 04 benchmark: the lab's kernels (student's or reference, as built) next to the
// grader-owned naive baselines and cuDNN, against the copy bandwidth and FP32 peak measured
// in the same run. The full run covers the performance targets of the reference kernels
// and prints, for each row that has one, the target and whether it was met:
//   2D 8192 x 8192, r = 1, 2, 3, 4, 7   conv2d_cached, conv2d_fast
//       conv2d_fast: >= 90% of copy BW and >= 2.5x cuDNN at r = 1, >= 80% of copy BW at r = 2,
//                    >= 70% of the FP32 peak and >= 8x cuDNN at r = 7
//   1D 2^28, r = 1 .. 8                   conv1d_cached, conv1d_fast (>= 90% of copy BW)
//   separable 8192 x 8192, r = 2, 4, 8    conv2d_separable (>= 80% of copy BW at r = 8, counting
//                                         both passes: 4 x 8192^2 x 4 bytes), and conv2d_fast with
//                                         the same outer-product filter
//   lab04_bench [--quick] [--traffic] [--markdown FILE] [--json FILE]
// CONVLAB_BENCH_PARTS=2d,1d,separable (default: all three) runs only those parts.
// --quick: small problems, no targets (a smoke test, run by ctest). Exit 77 (skipped)
// without a GPU; exit 1 if a kernel's output is wrong. Unmet targets are reported, not fatal.
#include "lab04.hpp"

#include <convlab/baselines.hpp>
#include <convlab/bench_run.hpp>
#include <convlab/compare.hpp>
#include <convlab/conv_testbed.hpp>
#include <convlab/device_buffer.hpp>
#include <convlab/golden.hpp>
#include <convlab/gpu.hpp>
#include <convlab/random.hpp>
#ifdef CONVLAB_HAVE_CUDNN
#include <convlab/cudnn_conv.hpp>
#endif

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace convlab;

std::string impl(const std::string& kernel) { return kernel + " (" + CONVLAB_IMPL_NAME + ")"; }

// What a row must reach (0: no such target): fractions of the ceilings measured in this run,
// and a speed-up over cuDNN's best algorithm.
struct Target {
  double copy = 0;      // of the copy bandwidth, counting the ideal bytes
  double peak = 0;      // of the FP32 FMA peak
  double vs_cudnn = 0;  // cuDNN time / kernel time
};

class Bench {
public:
  Bench(BenchReport& report, const BenchOptions& options, const BenchCeilings& ceilings)
      : report_(report), pairs_(options.quick ? 3 : 20), targets_(!options.quick), ceilings_(ceilings) {}

  // Times `kernel` against `baseline` (and cuDNN, if given), interleaved, checks its output,
  // and adds the row with its target.
  void row(BenchRow row, const Launch& baseline, const Launch& kernel, const Launch* cudnn,
           const DeviceBuffer<float>& d_out, const Golden& g, const Grid& grid, const Target& t) {
    const SpeedRound round = measure_round(baseline, kernel, pairs_);
    verify_output(d_out, g, grid, row.kernel);
    row.ms = round.candidate_ms;
    row.baseline_ms = round.baseline_ms.median;
    if (cudnn) row.cudnn_ms = measure_round(*cudnn, kernel, pairs_).baseline_ms.median;
    if (targets_) set_target(row, t);
    // With --traffic (convlab bench lab04 --traffic): the problem's baseline once, then the kernel,
    // each once more in a profiling range. Taps per output from the row's count of multiply-adds
    // (two passes of 2r + 1 for the separable kernel); the baseline applies the full filter.
    const double outputs = double(d_out.size());
    const int fw = 2 * grid.radius + 1, baseline_taps = grid.height > 1 ? fw * fw : fw;
    const std::string problem = row.size + " r=" + std::to_string(grid.radius);
    if (problem != traffic_problem_)
      bench_traffic_call(kBenchBaselineRow, row.size, grid.radius, baseline_taps, outputs, baseline);
    traffic_problem_ = problem;
    bench_traffic_call(row.kernel, row.size, grid.radius, int(std::lround(row.flops / (2 * outputs))), outputs,
                       kernel);
    report_.add(row);
  }

private:
  void set_target(BenchRow& row, const Target& t) const {
    const double s = row.ms.median * 1e-3;
    bool met = true, known = true;
    char buf[64];
    const auto add = [&row](const char* text) { row.target += (row.target.empty() ? "" : ", ") + std::string(text); };
    if (t.copy > 0) {
      std::snprintf(buf, sizeof buf, ">= %.0f%% of copy BW", 100 * t.copy);
      add(buf);
      met &= row.ideal_bytes / s / 1e9 >= t.copy * ceilings_.copy_gbs;
    }
    if (t.peak > 0) {
      std::snprintf(buf, sizeof buf, ">= %.0f%% of FP32 peak", 100 * t.peak);
      add(buf);
      met &= row.flops / s / 1e9 >= t.peak * ceilings_.peak_gflops;
    }
    if (t.vs_cudnn > 0) {
      std::snprintf(buf, sizeof buf, ">= %.1fx cuDNN%s", t.vs_cudnn, row.cudnn_ms ? "" : " (no cuDNN here)");
      add(buf);
      if (row.cudnn_ms) met &= *row.cudnn_ms / row.ms.median >= t.vs_cudnn;
      else known = false;
    }
    if (!row.target.empty() && (known || !met)) row.target_met = met;
  }

  BenchReport& report_;
  int pairs_;
  bool targets_;
  BenchCeilings ceilings_;
  std::string traffic_problem_;  // the problem whose baseline was last profiled (--traffic)
};

// A 2D problem on the device with its golden model, the naive baseline and, with cuDNN, its
// best FMA-math algorithm (N1 C1 HxW, K1 (2r+1)^2, pad r), both checked once.
struct Problem2d {
  int w, h, r;
  std::vector<float> h_in, h_f;
  Golden g;
  DeviceBuffer<float> d_in, d_f, d_out, d_base;
  Launch baseline;
  const Launch* cudnn = nullptr;  // null without cuDNN
  std::string cudnn_algorithm;
#ifdef CONVLAB_HAVE_CUDNN
  std::unique_ptr<CudnnConv> conv;
  DeviceBuffer<float> d_cudnn;
  Launch cudnn_launch;
#endif

  Problem2d(int width, int height, int radius, std::vector<float> filter, std::uint64_t seed)
      : w(width), h(height), r(radius), h_in(random_floats(std::size_t(w) * h, seed)), h_f(std::move(filter)),
        g(conv2d_golden(h_in, w, h, h_f, r)), d_in(h_in), d_f(h_f), d_out(count()), d_base(count()) {
    baseline = [this](cudaStream_t s) {
      baseline::conv2d_naive({d_in.get(), d_f.get(), h_f.data(), d_base.get(), w, h, r, s});
    };
    baseline(nullptr);
    verify_output(d_base, g, grid(), "the baseline");
#ifdef CONVLAB_HAVE_CUDNN
    CudnnConvShape shape;
    shape.h = h; shape.w = w; shape.r = 2 * r + 1; shape.s = 2 * r + 1; shape.pad_h = r; shape.pad_w = r;
    conv = std::make_unique<CudnnConv>(shape, CudnnMath::fma);
    d_cudnn = DeviceBuffer<float>(count());
    cudnn_algorithm = conv->choose_algorithm(d_in.get(), d_f.get(), d_cudnn.get());
    cudnn_launch = [this](cudaStream_t s) { conv->run(d_in.get(), d_f.get(), d_cudnn.get(), s); };
    cudnn_launch(nullptr);
    verify_output(d_cudnn, g, grid(), "cuDNN's result");
    cudnn = &cudnn_launch;
#endif
  }
  std::size_t count() const { return std::size_t(w) * h; }
  Grid grid() const { return Grid{w, h, r}; }
  BenchRow row(const std::string& kernel, const std::string& size) const {
    BenchRow row;
    row.kernel = impl(kernel);
    row.size = std::to_string(w) + "x" + std::to_string(h) + size;
    row.radius = r;
    row.note = cudnn_algorithm;
    const int fw = 2 * r + 1;  // one pass: the image read and written once, (2r+1)^2 multiply-adds
    row.ideal_bytes = 2.0 * count() * sizeof(float) + double(fw) * fw * sizeof(float);
    row.flops = 2.0 * count() * fw * fw;
    return row;
  }
};

// 2D, random filter: conv2d_cached and conv2d_fast against the naive baseline and cuDNN.
void bench_2d(Bench& b, int w, int h, int r) {
  Problem2d p(w, h, r, random_floats(std::size_t(2 * r + 1) * (2 * r + 1), 4), 3);
  const lab04::Conv2dProblem q{w, h, r};
  b.row(p.row("conv2d_cached", ""), p.baseline,
        [&](cudaStream_t s) { lab04::conv2d_cached(p.d_in.get(), p.h_f.data(), p.d_out.get(), q, s); }, p.cudnn,
        p.d_out, p.g, p.grid(), {});
  Target t;
  if (r == 1) t = {0.90, 0, 2.5};
  if (r == 2) t = {0.80, 0, 0};
  if (r == 7) t = {0, 0.70, 8.0};
  b.row(p.row("conv2d_fast", ""), p.baseline,
        [&](cudaStream_t s) { lab04::conv2d_fast(p.d_in.get(), p.h_f.data(), p.d_out.get(), q, s); }, p.cudnn,
        p.d_out, p.g, p.grid(), t);
}

// Separable: the outer product of two 1D filters, applied in two passes by conv2d_separable
// and directly by conv2d_fast, against the naive baseline (direct, same 2D filter) and cuDNN.
void bench_separable(Bench& b, int w, int h, int r) {
  const auto h_row = separable_factor(2 * r + 1, 6), h_col = separable_factor(2 * r + 1, 7);
  Problem2d p(w, h, r, outer_product(h_col, h_row), 5);
  const lab04::Conv2dProblem q{w, h, r};
  DeviceBuffer<float> d_tmp(p.count());
  // Two passes, each reading and writing the image once: 4 N floats; 2 (2r+1) multiply-adds per pixel.
  BenchRow row = p.row("conv2d_separable", " separable");
  row.ideal_bytes = 4.0 * p.count() * sizeof(float) + 2.0 * (2 * r + 1) * sizeof(float);
  row.flops = 2.0 * p.count() * 2 * (2 * r + 1);
  b.row(row, p.baseline,
        [&](cudaStream_t s) {
          lab04::conv2d_separable(p.d_in.get(), h_row.data(), h_col.data(), d_tmp.get(), p.d_out.get(), q, s);
        },
        p.cudnn, p.d_out, p.g, p.grid(), r == 8 ? Target{0.80, 0, 0} : Target{});
  // The same filter applied directly: one pass, (2r+1)^2 multiply-adds per pixel.
  b.row(p.row("conv2d_fast (direct)", " separable"), p.baseline,
        [&](cudaStream_t s) { lab04::conv2d_fast(p.d_in.get(), p.h_f.data(), p.d_out.get(), q, s); }, p.cudnn,
        p.d_out, p.g, p.grid(), {});
}

// 1D: conv1d_cached and conv1d_fast against the naive baseline. `h_in` is shared by all radii.
void bench_1d(Bench& b, const std::vector<float>& h_in, const DeviceBuffer<float>& d_in, int r) {
  const int n = static_cast<int>(h_in.size());
  const auto h_f = random_floats(2 * r + 1, 2);
  const Golden g = conv1d_golden(h_in, h_f, r);
  DeviceBuffer<float> d_f(h_f), d_out(n), d_base(n);
  const Launch baseline = [&](cudaStream_t s) {
    baseline::conv1d_naive({d_in.get(), d_f.get(), h_f.data(), d_base.get(), n, r, s});
  };
  BenchRow row;
  row.size = std::to_string(n);
  row.radius = r;
  row.ideal_bytes = 2.0 * n * sizeof(float) + (2 * r + 1) * sizeof(float);
  row.flops = 2.0 * n * (2 * r + 1);
  const lab04::Conv1dProblem p{n, r};
  row.kernel = impl("conv1d_cached");
  b.row(row, baseline, [&](cudaStream_t s) { lab04::conv1d_cached(d_in.get(), h_f.data(), d_out.get(), p, s); },
        nullptr, d_out, g, Grid{n, 1, r}, {});
  row.kernel = impl("conv1d_fast");
  b.row(row, baseline, [&](cudaStream_t s) { lab04::conv1d_fast(d_in.get(), h_f.data(), d_out.get(), p, s); },
        nullptr, d_out, g, Grid{n, 1, r}, Target{0.90, 0, 0});
  verify_output(d_base, g, Grid{n, 1, r}, "the baseline");
}

// Whether CONVLAB_BENCH_PARTS (a comma-separated list; unset: every part) names `part`.
bool part_selected(const std::string& part) {
  const char* env = std::getenv("CONVLAB_BENCH_PARTS");
  if (env == nullptr || *env == '\0') return true;
  const std::string list = std::string(",") + env + ",";
  return list.find("," + part + ",") != std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  return run_benchmark(
      argc, argv, "lab04_bench", "Lab 04 — tiles with halo cells from the caches, separable filters, register tiling",
      [](BenchReport& report, const BenchOptions& options, const BenchCeilings& ceilings) {
        Bench b(report, options, ceilings);
        const bool quick = options.quick;
        const int w = quick ? 1031 : 8192, h = quick ? 1029 : 8192;
        if (part_selected("2d"))
          for (int r : quick ? std::vector<int>{1, 7} : std::vector<int>{1, 2, 3, 4, 7}) bench_2d(b, w, h, r);
        if (part_selected("1d")) {
          const auto h_in = random_floats(quick ? (1 << 22) + 1 : 1 << 28, 1);
          const DeviceBuffer<float> d_in(h_in);
          for (int r : quick ? std::vector<int>{1, 8} : std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}) bench_1d(b, h_in, d_in, r);
        }
        if (part_selected("separable"))
          for (int r : quick ? std::vector<int>{8} : std::vector<int>{2, 4, 8}) bench_separable(b, w, h, r);
      });
}
