// Lab 02 benchmark: the constant-memory kernels (student's or reference, as built)
// next to the grader-owned naive baseline, whose filter is in global memory (it
// gets a row of its own), and cuDNN, against the copy bandwidth and FP32 peak
// measured in the same run (the driver: grader/bench/src/conv_bench.cpp).
//   lab02_bench [--quick] [--markdown FILE] [--json FILE]
// Exit 77 (skipped) without a GPU; exit 1 if a kernel's output is wrong.
#include "lab02.hpp"

#include <convlab/conv_bench.hpp>

#include <string>

namespace {

using namespace convlab;

const std::string kImpl = std::string(" (") + CONVLAB_IMPL_NAME + ")";

void conv1d(const Conv1dArgs& a) { lab02::conv1d_constant(a.d_in, a.h_filter, a.d_out, {a.n, a.radius}, a.stream); }
void conv2d(const Conv2dArgs& a) {
  lab02::conv2d_constant(a.d_in, a.h_filter, a.d_out, {a.width, a.height, a.radius}, a.stream);
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main(argc, argv, "lab02_bench", "Lab 02 — the filter in constant memory",
                    [](BenchReport& report, bool quick) {
    const int pairs = quick ? 3 : 20;
    const std::vector<BenchConv1d> k1{{"conv1d_constant" + kImpl, conv1d}};
    const std::vector<BenchConv2d> k2{{"conv2d_constant" + kImpl, conv2d}};
    // The baseline's own row is the global-memory filter, next to the constant one.
    if (quick) {
      for (int r : {1, 8}) bench_conv1d(report, k1, (1 << 22) + 1, r, pairs, true);
      for (int r : {1, 3}) bench_conv2d(report, k2, 1031, 1029, r, pairs, true);
    } else {
      for (int r : {1, 2, 4, 8, 16}) bench_conv1d(report, k1, 1 << 28, r, pairs, true);
      for (int r : {1, 2, 3, 4, 7}) bench_conv2d(report, k2, 8192, 8192, r, pairs, true);
    }
  });
}
