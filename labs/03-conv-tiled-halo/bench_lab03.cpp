// Lab 03 benchmark: the four tiled kernels (student's or reference, as built) next
// to the grader-owned naive baseline and cuDNN, against the copy bandwidth and FP32
// peak measured in the same run (the driver: grader/bench/src/conv_bench.cpp).
//   lab03_bench [--quick] [--markdown FILE] [--json FILE]
// Exit 77 (skipped) without a GPU; exit 1 if a kernel's output is wrong.
#include "lab03.hpp"

#include <convlab/conv_bench.hpp>

#include <string>

namespace {

using namespace convlab;

const std::string kImpl = std::string(" (") + CONVLAB_IMPL_NAME + ")";

void loop_1d(const Conv1dArgs& a) {
  lab03::conv1d_tiled_loop(a.d_in, a.h_filter, a.d_out, {a.n, a.radius}, a.stream);
}
void groups_1d(const Conv1dArgs& a) {
  lab03::conv1d_tiled_groups(a.d_in, a.h_filter, a.d_out, {a.n, a.radius}, a.stream);
}
void tiled_in_2d(const Conv2dArgs& a) {
  lab03::conv2d_tiled_in(a.d_in, a.h_filter, a.d_out, {a.width, a.height, a.radius}, a.stream);
}
void tiled_out_2d(const Conv2dArgs& a) {
  lab03::conv2d_tiled_out(a.d_in, a.h_filter, a.d_out, {a.width, a.height, a.radius}, a.stream);
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main(argc, argv, "lab03_bench", "Lab 03 — tiled convolution with halo cells",
                    [](BenchReport& report, bool quick) {
    const int pairs = quick ? 3 : 20;
    const std::vector<BenchConv1d> k1{{"conv1d_tiled_loop" + kImpl, loop_1d},
                                      {"conv1d_tiled_groups" + kImpl, groups_1d}};
    const std::vector<BenchConv2d> k2{{"conv2d_tiled_in" + kImpl, tiled_in_2d},
                                      {"conv2d_tiled_out" + kImpl, tiled_out_2d}};
    if (quick) {
      for (int r : {2, 16}) bench_conv1d(report, k1, (1 << 22) + 1, r, pairs);
      for (int r : {1, 5}) bench_conv2d(report, k2, 1031, 1029, r, pairs);
    } else {
      for (int r : {1, 2, 4, 8, 16}) bench_conv1d(report, k1, 1 << 28, r, pairs);
      for (int r : {1, 2, 3, 4, 5, 7, 8}) bench_conv2d(report, k2, 8192, 8192, r, pairs);
    }
  });
}
