// Lab 01 benchmark: the lab's kernels (student's or reference, as built) next to
// the grader-owned naive baseline and cuDNN, against the copy bandwidth and FP32
// peak measured in the same run (the driver: grader/bench/src/conv_bench.cpp).
//   lab01_bench [--quick] [--markdown FILE] [--json FILE]
// Exit 77 (skipped) without a GPU; exit 1 if a kernel's output is wrong.
#include "lab01.hpp"

#include <convlab/conv_bench.hpp>

#include <string>

namespace {

using namespace convlab;

const std::string kImpl = std::string(" (") + CONVLAB_IMPL_NAME + ")";

void conv1d(const Conv1dArgs& a) { lab01::conv1d_naive(a.d_in, a.d_filter, a.d_out, {a.n, a.radius}, a.stream); }
void conv2d(const Conv2dArgs& a) {
  lab01::conv2d_naive(a.d_in, a.d_filter, a.d_out, {a.width, a.height, a.radius}, a.stream);
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main(argc, argv, "lab01_bench", "Lab 01 — naive convolution", [](BenchReport& report, bool quick) {
    const int pairs = quick ? 3 : 20;
    const std::vector<BenchConv1d> k1{{"conv1d_naive" + kImpl, conv1d}};
    const std::vector<BenchConv2d> k2{{"conv2d_naive" + kImpl, conv2d}};
    if (quick) {
      for (int r : {1, 8}) bench_conv1d(report, k1, (1 << 22) + 1, r, pairs);
      for (int r : {1, 3}) bench_conv2d(report, k2, 1031, 1029, r, pairs);
    } else {
      for (int r : {1, 2, 4, 8}) bench_conv1d(report, k1, 1 << 28, r, pairs);
      for (int r : {1, 2, 3, 4, 7}) bench_conv2d(report, k2, 8192, 8192, r, pairs);
    }
  });
}
