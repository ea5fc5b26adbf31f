// The comparator: its tolerance admits honest float32 rounding in any order and
// rejects anything larger; its report locates the wrong outputs.
#include "convlab/compare.hpp"
#include "convlab/golden.hpp"
#include "convlab/random.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace convlab {
namespace {

float poison() {
  const std::uint32_t b = 0xFFFFFFFFu;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// float32 1D convolution, summing the taps in the order `order` (0 forward, 1 backward, 2 with fma).
std::vector<float> conv1d_float(const std::vector<float>& x, const std::vector<float>& f, int r, int order) {
  const int n = static_cast<int>(x.size());
  std::vector<float> y(n);
  for (int i = 0; i < n; ++i) {
    float s = 0;
    for (int t = 0; t < 2 * r + 1; ++t) {
      const int j = order == 1 ? r - t : t - r;
      const int k = i + j;
      if (k < 0 || k >= n) continue;
      s = order == 2 ? std::fma(x[k], f[j + r], s) : s + x[k] * f[j + r];
    }
    y[i] = s;
  }
  return y;
}

TEST(Compare, GammaMatchesFormula) {
  const double u = 1.0 / (1 << 24);
  EXPECT_DOUBLE_EQ(gamma_m(1), u / (1 - u));
  EXPECT_DOUBLE_EQ(gamma_m(225), 225 * u / (1 - 225 * u));
  EXPECT_THROW(gamma_m(1 << 24), std::invalid_argument);
}

TEST(Compare, HonestFloatRoundingPassesInEveryOrder) {
  for (int r : {0, 1, 3, 8, 31}) {
    const auto x = random_floats(5000, 11 + r), f = random_floats(2 * r + 1, 99 + r);
    const Golden g = conv1d_golden(x, f, r);
    for (int order : {0, 1, 2}) {
      const Comparison c = compare(conv1d_float(x, f, r, order), g, Grid{5000, 1, r});
      EXPECT_TRUE(c.ok()) << "r=" << r << " order=" << order << "\n" << c.report();
      EXPECT_LE(c.max_error_ratio, 1.0);
    }
  }
}

TEST(Compare, HonestFloatRounding2DPasses) {
  const int w = 61, h = 47, r = 3, fw = 7;
  const auto img = random_floats(w * h, 5), f = random_floats(fw * fw, 6);
  const Golden g = conv2d_golden(img, w, h, f, r);
  std::vector<float> out(w * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float s = 0;  // column-major tap order, unlike the golden model
      for (int dx = -r; dx <= r; ++dx)
        for (int dy = -r; dy <= r; ++dy)
          if (x + dx >= 0 && x + dx < w && y + dy >= 0 && y + dy < h)
            s = std::fma(img[(y + dy) * w + x + dx], f[(dy + r) * fw + dx + r], s);
      out[y * w + x] = s;
    }
  const Comparison c = compare(out, g, Grid{w, h, r});
  EXPECT_TRUE(c.ok()) << c.report();
}

TEST(Compare, ErrorJustAboveToleranceFails) {
  const auto x = random_floats(100, 1), f = random_floats(5, 2);
  const Golden g = conv1d_golden(x, f, 2);
  std::vector<float> y(100);
  for (int i = 0; i < 100; ++i) y[i] = static_cast<float>(g.value[i]);
  ASSERT_TRUE(compare(y, g, Grid{100, 1, 2}).ok());
  const double tol = tolerance_for(g.magnitude[50], g.terms);
  y[50] = static_cast<float>(g.value[50] + 4 * tol);  // float rounding of the shift is far below tol
  const Comparison c = compare(y, g, Grid{100, 1, 2});
  ASSERT_EQ(c.wrong, 1u);
  EXPECT_EQ(c.first[0].x, 50);
  EXPECT_EQ(c.first[0].region, "interior");
  EXPECT_GT(c.max_error_ratio, 2.0);
}

TEST(Compare, ZeroOutputIsWrong) {
  const auto x = random_floats(64, 3), f = random_floats(3, 4);
  const Golden g = conv1d_golden(x, f, 1);
  const Comparison c = compare(std::vector<float>(64, 0.0f), g, Grid{64, 1, 1});
  EXPECT_EQ(c.wrong, 64u);  // random data: no golden value is within tolerance of 0
}

TEST(Compare, PoisonCountsAsUnwrittenOtherNaNDoesNot) {
  const auto x = random_floats(10, 3), f = random_floats(3, 4);
  const Golden g = conv1d_golden(x, f, 1);
  std::vector<float> y(10);
  for (int i = 0; i < 10; ++i) y[i] = static_cast<float>(g.value[i]);
  y[9] = poison();
  y[0] = std::numeric_limits<float>::quiet_NaN();
  const Comparison c = compare(y, g, Grid{10, 1, 1});
  EXPECT_EQ(c.wrong, 2u);
  EXPECT_EQ(c.unwritten, 1u);
  EXPECT_EQ(c.first[0].region, "left border");
  EXPECT_FALSE(c.first[0].unwritten);
  EXPECT_EQ(c.first[1].region, "right border");
  EXPECT_TRUE(c.first[1].unwritten);
  EXPECT_NE(c.report().find("never written"), std::string::npos);
  EXPECT_NE(c.report().find("read outside the input"), std::string::npos);
}

TEST(Compare, TheCpuBackendsSharedMemoryNaNIsNamed) {
  const auto x = random_floats(10, 3), f = random_floats(3, 4);
  const Golden g = conv1d_golden(x, f, 1);
  std::vector<float> y(10);
  for (int i = 0; i < 10; ++i) y[i] = static_cast<float>(g.value[i]);
  std::memcpy(&y[4], &kUnwrittenSharedBits, 4);
  const Comparison c = compare(y, g, Grid{10, 1, 1});
  EXPECT_EQ(c.wrong, 1u);
  EXPECT_EQ(c.unwritten, 0u);
  EXPECT_EQ(c.from_unwritten_shared, 1u);
  EXPECT_TRUE(c.first[0].from_unwritten_shared);
  EXPECT_NE(c.report().find("out[4] (interior): got NaN, expected"), std::string::npos) << c.report();
  EXPECT_NE(c.report().find("computed from shared memory that no thread had written yet"), std::string::npos);
}

TEST(Compare, RegionsIn2D) {
  const Grid g{100, 50, 2};
  EXPECT_EQ(region_of(0, 0, g), "top-left corner");
  EXPECT_EQ(region_of(99, 49, g), "bottom-right corner");
  EXPECT_EQ(region_of(50, 1, g), "top border");
  EXPECT_EQ(region_of(98, 25, g), "right border");
  EXPECT_EQ(region_of(50, 25, g), "interior");
  const Grid tiled{100, 50, 2, 16, 16};
  EXPECT_EQ(region_of(16, 24, tiled), "left tile edge");
  EXPECT_EQ(region_of(24, 31, tiled), "bottom tile edge");
  EXPECT_EQ(region_of(31, 33, tiled), "top-right tile corner (halo corner)");
  EXPECT_EQ(region_of(24, 24, tiled), "interior");
  EXPECT_EQ(region_of(1, 0, Grid{3, 1, 2}), "left and right border (n <= 2r)");
}

TEST(Compare, ReportNamesCoordinatesAndDrawsTheMap) {
  const int w = 40, h = 20, r = 1;
  const auto img = random_floats(w * h, 8), f = random_floats(9, 9);
  const Golden g = conv2d_golden(img, w, h, f, r);
  std::vector<float> out(w * h);
  for (int i = 0; i < w * h; ++i) out[i] = static_cast<float>(g.value[i]);
  for (int y = 0; y < h; ++y) out[y * w + (w - 1)] += 1.0f;  // the right column is wrong
  const Comparison c = compare(out, g, Grid{w, h, r});
  EXPECT_EQ(c.wrong, std::size_t(h));
  const std::string rep = c.report();
  EXPECT_NE(rep.find("out(x=39, y=0) (top-right corner)"), std::string::npos) << rep;
  EXPECT_NE(rep.find("out(x=39, y=1) (right border)"), std::string::npos) << rep;
  EXPECT_NE(rep.find("right border: 18"), std::string::npos) << rep;
  // The map is 40 columns wide: the last column is '#', the others '.'.
  EXPECT_NE(rep.find("|.......................................#|"), std::string::npos) << rep;
}

TEST(Compare, RejectsMismatchedSizes) {
  const Golden g = conv1d_golden({1, 2, 3}, {1}, 0);
  EXPECT_THROW(compare({1, 2}, g, Grid{2, 1, 0}), std::invalid_argument);
  EXPECT_THROW(compare({1, 2, 3}, g, Grid{2, 2, 0}), std::invalid_argument);
}

}  // namespace
}  // namespace convlab
