// Lab 01's worked numbers: the 2D worked example of the Background and the
// answers of "Check your understanding", from the golden models (golden.hpp)
// and the launch arithmetic the handout teaches.
#include "answers.hpp"

#include <convlab/golden.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace convlab::handout {

namespace {

// The 2D worked example: a 5 x 5 image and an asymmetric 3 x 3 filter, so that
// a flipped filter gives other numbers.
const std::vector<float> kImage = {3, 1, 2, 0, 1,  //
                                   1, 4, 1, 2, 3,  //
                                   0, 2, 5, 1, 1,  //
                                   2, 1, 3, 4, 0,  //
                                   1, 0, 2, 1, 2};
const std::vector<float> kFilter = {1, 2, 1,  //
                                    0, 1, 0,  //
                                    1, 0, 2};

std::string at(const Golden& g, int width, int row, int col) {
  return fixed(g.value[std::size_t(row) * width + col], 0);
}

// Taps that fall inside a w x h image, summed over all outputs: the golden
// model of an all-ones image and an all-ones filter gives each output the
// number of its taps inside the image.
long long taps_inside(int w, int h, int r) {
  const Golden g = conv2d_golden(std::vector<float>(std::size_t(w) * h, 1.0f), w, h,
                                 std::vector<float>(std::size_t(2 * r + 1) * (2 * r + 1), 1.0f), r);
  double sum = 0;
  for (double v : g.value) sum += v;
  return static_cast<long long>(sum);
}

// A golden output as the handout prints it: integers without decimals, others with two.
std::string values(const Golden& g) {
  std::string s;
  for (double v : g.value) {
    const bool whole = v == static_cast<double>(static_cast<long long>(v));
    s += (s.empty() ? "" : ", ") + fixed(v, whole ? 0 : 2);
  }
  return s;
}

// Taps inside an n-element array over all outputs of a 1D filter of radius r: the
// golden model of all-ones inputs.
long long taps_inside_1d(int n, int r) {
  const Golden g = conv1d_golden(std::vector<float>(std::size_t(n), 1.0f), std::vector<float>(2 * r + 1, 1.0f), r);
  double sum = 0;
  for (double v : g.value) sum += v;
  return static_cast<long long>(sum);
}

}  // namespace

std::vector<Answer> lab01_answers() {
  std::vector<Answer> a;
  const Golden ex = conv2d_golden(kImage, 5, 5, kFilter, 1);
  a.push_back({"lab01.ex2d_y22", at(ex, 5, 2, 2)});  // Background: the interior output
  a.push_back({"lab01.ex2d_y00", at(ex, 5, 0, 0)});  // Background: the corner output
  a.push_back({"lab01.ex2d_y04", at(ex, 5, 0, 4)});  // question 2
  a.push_back({"lab01.ex2d_y42", at(ex, 5, 4, 2)});  // question 2
  // The flipped filter at (2, 2): what true convolution would give.
  const Golden flipped = conv2d_golden(kImage, 5, 5, flip_filter(kFilter), 1);
  a.push_back({"lab01.ex2d_y22_flipped", at(flipped, 5, 2, 2)});

  // Question 1: a 1D convolution by hand, x = [2, 7, 1, 8, 2, 8], f = [1, -2, 1].
  const Golden g1 = conv1d_golden({2, 7, 1, 8, 2, 8}, {1, -2, 1}, 1);
  std::string y;
  for (double v : g1.value) y += (y.empty() ? "" : ", ") + fixed(v, 0);
  a.push_back({"lab01.conv1d_y", y});

  // Question 3: ghost cells of an 8 x 6 image (width 8, height 6) with a 5 x 5 filter.
  const int w = 8, h = 6, r = 2;
  a.push_back({"lab01.ghost_cells", grouped((w + 2 * r) * (h + 2 * r) - w * h)});
  const long long all_taps = 1LL * w * h * (2 * r + 1) * (2 * r + 1);
  a.push_back({"lab01.taps_all", grouped(all_taps)});
  a.push_back({"lab01.taps_inside", grouped(taps_inside(w, h, r))});
  a.push_back({"lab01.taps_ghost", grouped(all_taps - taps_inside(w, h, r))});

  // Question 4: a 1000 x 700 image in 32 x 8 blocks.
  const int bx = (1000 + 31) / 32, by = (700 + 7) / 8;
  const long long threads = 1LL * bx * by * 32 * 8;
  a.push_back({"lab01.grid", std::to_string(bx) + " × " + std::to_string(by)});
  a.push_back({"lab01.blocks", grouped(1LL * bx * by)});
  a.push_back({"lab01.idle_threads", grouped(threads - 700000)});
  a.push_back({"lab01.idle_pct", fixed(100.0 * (threads - 700000) / threads, 1)});

  // Question 5: the border frame of a 4096 x 4096 image at r = 7.
  const long long side = 4096, rr = 7, frame = side * side - (side - 2 * rr) * (side - 2 * rr);
  a.push_back({"lab01.frame", grouped(frame)});
  a.push_back({"lab01.frame_pct", fixed(100.0 * frame / double(side * side), 2)});

  // Question 6: the benchmark's FLOP count for conv1d at n = 2^28, r = 8, and
  // the rate at the measured 1.891 ms (the table of "What you should see").
  const double flop = 2.0 * (1 << 28) * 17;
  a.push_back({"lab01.flop_r8", fixed(flop / 1e9, 2)});
  a.push_back({"lab01.gflops_r8", fixed(flop / 1.891e-3 / 1e9, 0)});
  // The ridge point of the H100 as measured in the run of "What you should see"
  // (59.6 TFLOP/s, 2857 GB/s), also quoted in "Memory bound on paper, not on an H100".
  const double peak = 59.6e12, copy_bw = 2857e9;
  a.push_back({"lab01.ridge", fixed(peak / copy_bw, 1)});
  a.push_back({"lab01.dram_bound", fixed(0.25 * copy_bw / 1e12, 2)});
  a.push_back({"lab01.dram_bound_pct", fixed(100.0 * 0.25 * copy_bw / peak, 1)});

  // "Memory bound on paper, not on an H100": the naive 2D kernel on 8192 x 8192 at the
  // same run's times (0.484 ms at r = 1 ... 5.492 ms at r = 7). Ideal traffic: one read
  // and one write of 4 bytes per pixel; the 0.25 OP/B model: 8 bytes per tap from DRAM.
  const double px = 8192.0 * 8192.0, ideal = 8.0 * px, model = 8.0 * 9 * px, t1 = 0.484e-3;
  a.push_back({"lab01.ideal_mb", fixed(ideal / 1e6, 0)});
  a.push_back({"lab01.ideal_ms", fixed(1e3 * ideal / copy_bw, 2)});
  a.push_back({"lab01.model_gb", fixed(model / 1e9, 2)});
  a.push_back({"lab01.model_ms", fixed(1e3 * model / copy_bw, 2)});
  a.push_back({"lab01.beats_model", fixed(model / copy_bw / t1, 1)});
  a.push_back({"lab01.tflops_r1", fixed(2.0 * 9 * px / t1 / 1e12, 2)});
  a.push_back({"lab01.eff_tbs_r1", fixed(ideal / t1 / 1e12, 2)});
  a.push_back({"lab01.eff_pct_r1", fixed(100.0 * ideal / t1 / copy_bw, 1)});
  const struct { int r; double ms; const char* key; } rows[] = {
      {1, 0.484, "lab01.per_tap_r1"}, {2, 0.920, "lab01.per_tap_r2"}, {3, 1.426, "lab01.per_tap_r3"},
      {4, 2.323, "lab01.per_tap_r4"}, {7, 5.492, "lab01.per_tap_r7"}};
  for (const auto& row : rows) a.push_back({row.key, fixed(row.ms / ((2 * row.r + 1) * (2 * row.r + 1)), 3)});
  const double flops_r7 = 2.0 * 225 * px / 5.492e-3;
  a.push_back({"lab01.tflops_r7", fixed(flops_r7 / 1e12, 1)});
  a.push_back({"lab01.tflops_r7_pct", fixed(100.0 * flops_r7 / peak, 1)});

  // Question 7 (predict, then measure): time proportional to the taps from r = 1 to r = 2.
  a.push_back({"lab01.predict_r2", fixed(0.484 * 25.0 / 9.0, 2)});
  a.push_back({"lab01.measured_ratio_r2", fixed(0.920 / 0.484, 2)});

  // Question 8 (after PMPP's exercise "what do these filters do"): four filters on x_i = (i+1)^2.
  const std::vector<float> squares = {1, 4, 9, 16, 25, 36};
  a.push_back({"lab01.what_a", values(conv1d_golden(squares, {0, 0, 1}, 1))});
  a.push_back({"lab01.what_b", values(conv1d_golden(squares, {1, 0, 0}, 1))});
  a.push_back({"lab01.what_c", values(conv1d_golden(squares, {-0.5f, 0, 0.5f}, 1))});
  a.push_back({"lab01.what_d", values(conv1d_golden(squares, {1.0f / 3, 1.0f / 3, 1.0f / 3}, 1))});

  // Question 9: ghost cells and multiplications in N and M, N = 1024, M = 7, counted by the
  // golden models (all-ones inputs count the taps inside) and checked against the formulas.
  const int n = 1024, m = 7, rq = (m - 1) / 2;
  const long long skip_1d = taps_inside_1d(n, rq), skip_2d = taps_inside(n, n, rq);
  if (skip_1d != 1LL * n * m - (1LL * m * m - 1) / 4 || skip_2d != skip_1d * skip_1d)
    throw std::logic_error("lab01 question 9: the counts disagree with the handout's formulas");
  a.push_back({"lab01.nm_ghost_1d", std::to_string(m - 1)});
  a.push_back({"lab01.nm_mul_all_1d", grouped(1LL * n * m)});
  a.push_back({"lab01.nm_mul_skip_1d", grouped(skip_1d)});
  a.push_back({"lab01.nm_ghost_2d", grouped(1LL * (n + m - 1) * (n + m - 1) - 1LL * n * n)});
  a.push_back({"lab01.nm_mul_all_2d", grouped(1LL * n * n * m * m)});
  a.push_back({"lab01.nm_mul_skip_2d", grouped(skip_2d)});
  a.push_back({"lab01.nm_saving_pct", fixed(100.0 * (1.0 * n * n * m * m - skip_2d) / (1.0 * n * n * m * m), 1)});
  return a;
}

}  // namespace convlab::handout
