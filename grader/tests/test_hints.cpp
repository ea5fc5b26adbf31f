// The hints of a failed convolution check: each planted mistake gets the one most specific
// hint, naming the side, the tile edge or the swapped dimension.
#include "convlab/compare.hpp"
#include "convlab/golden.hpp"
#include "convlab/hints.hpp"
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

int count_hints(const std::string& s) {
  int n = 0;
  for (std::size_t at = s.find("hint:"); at != std::string::npos; at = s.find("hint:", at + 1)) ++n;
  return n;
}

// A 2D problem, its right answer, and a place for the planted mistake.
struct Case2d {
  int w, h, r;
  std::vector<float> in, f, out;
  Golden g;
  Grid grid;
  Case2d(int width, int height, int radius, int tile = 0)
      : w(width), h(height), r(radius), in(random_floats(std::size_t(w) * h, 17)),
        f(random_floats(std::size_t(2 * r + 1) * (2 * r + 1), 18)), g(conv2d_golden(in, w, h, f, r)),
        grid{w, h, r, tile, tile, true} {
    for (double v : g.value) out.push_back(static_cast<float>(v));
  }
  float& at(int x, int y) { return out[std::size_t(y) * w + x]; }
  // The result of convolving `image` (w x h as given) with this filter, as floats.
  std::vector<float> conv(const std::vector<float>& image, int iw, int ih) const {
    const Golden o = conv2d_golden(image, iw, ih, f, r);
    return std::vector<float>(o.value.begin(), o.value.end());
  }
  std::string hint() const {
    const Comparison c = compare(out, g, grid);
    EXPECT_FALSE(c.ok());
    return conv_hints(c, HintProblem{w, h, r, true, &in, &f, &out});
  }
};

TEST(Hints, NothingWritten) {
  Case2d k(20, 10, 1);
  std::fill(k.out.begin(), k.out.end(), poison());
  const std::string h = k.hint();
  EXPECT_NE(h.find("no output was written at all"), std::string::npos) << h;
  EXPECT_EQ(count_hints(h), 1);
}

TEST(Hints, CorrectOutputGetsNoHint) {
  Case2d k(20, 10, 1);
  EXPECT_EQ(conv_hints(compare(k.out, k.g, k.grid), HintProblem{20, 10, 1, true, &k.in, &k.f, &k.out}), "");
}

TEST(Hints, UnwrittenSharedMemoryWinsOverTheBorderPattern) {
  // A missing barrier in a one-tile image: the reads of unwritten shared memory are the bug,
  // even though every wrong output also lies next to an image edge.
  Case2d k(6, 6, 2);
  for (int y = 0; y < 6; ++y) std::memcpy(&k.at(0, y), &kUnwrittenSharedBits, 4);
  const std::string h = k.hint();
  EXPECT_NE(h.find("computed from shared memory that no thread had written yet"), std::string::npos) << h;
  EXPECT_EQ(count_hints(h), 1) << h;
  EXPECT_EQ(h.find("ghost"), std::string::npos) << h;
}

TEST(Hints, FlippedFilter) {
  Case2d k(30, 20, 2);
  k.out = k.conv(k.in, 30, 20);
  const std::vector<float> flipped = flip_filter(k.f);
  const Golden o = conv2d_golden(k.in, 30, 20, flipped, 2);
  k.out.assign(o.value.begin(), o.value.end());
  const std::string h = k.hint();
  EXPECT_NE(h.find("filter reversed"), std::string::npos) << h;
  EXPECT_EQ(count_hints(h), 1);
  // 1D too.
  const auto x = random_floats(50, 3), f = random_floats(5, 4);
  const Golden g = conv1d_golden(x, f, 2), gf = conv1d_golden(x, flip_filter(f), 2);
  const std::vector<float> got(gf.value.begin(), gf.value.end());
  const std::string h1 = conv_hints(compare(got, g, Grid{50, 1, 2}), HintProblem{50, 1, 2, false, &x, &f, &got});
  EXPECT_NE(h1.find("out[i] = sum_j in[i+j] * f[j+r]"), std::string::npos) << h1;
}

TEST(Hints, ImageReadAsHeightByWidth) {
  Case2d k(40, 25, 1);
  k.out = k.conv(k.in, 25, 40);  // the kernel swapped width and height everywhere
  const std::string h = k.hint();
  EXPECT_NE(h.find("read as 25 x 40 instead of 40 x 25: width and height are swapped"), std::string::npos) << h;
}

TEST(Hints, RowTestAgainstTheWidthOfATallImage) {
  // `y + i < width` on a 20 x 50 image: rows from 20 on count as ghost cells.
  Case2d k(20, 50, 2);
  std::vector<float> cut = k.in;
  std::fill(cut.begin() + 20 * 20, cut.end(), 0.0f);
  const std::vector<float> first = k.conv(cut, 20, 50);
  for (int y = 0; y < 50; ++y)
    for (int x = 0; x < 20; ++x) k.at(x, y) = first[std::size_t(y) * 20 + x];
  const std::string h = k.hint();
  EXPECT_NE(h.find("every row from y = 20 on taken as ghost cells"), std::string::npos) << h;
  EXPECT_NE(h.find("compares with the width (20) where the height (50) is meant"), std::string::npos) << h;
}

TEST(Hints, ColumnTestAgainstTheHeightOfAWideImage) {
  Case2d k(50, 20, 1);
  std::vector<float> cut = k.in;
  for (int y = 0; y < 20; ++y)
    for (int x = 20; x < 50; ++x) cut[std::size_t(y) * 50 + x] = 0.0f;
  k.out = k.conv(cut, 50, 20);
  const std::string h = k.hint();
  EXPECT_NE(h.find("every column from x = 20 on taken as ghost cells"), std::string::npos) << h;
}

TEST(Hints, RowsPastTheBottomOfAWideImageRead) {
  // `y + i < width` on a 100 x 75 image: the bottom rows read below the image (NaN guard).
  Case2d k(100, 75, 3);
  for (int y = 72; y < 75; ++y)
    for (int x = 0; x < 100; ++x) k.at(x, y) = std::numeric_limits<float>::quiet_NaN();
  const std::string h = k.hint();
  EXPECT_NE(h.find("only outputs within r of the bottom edge are wrong"), std::string::npos) << h;
  EXPECT_NE(h.find("does the test on rows compare with the width?"), std::string::npos) << h;
  EXPECT_EQ(count_hints(h), 1);
}

TEST(Hints, NamesTheOneSideThatIsWrong) {
  // The right border only: its two corners do not drag in the top and the bottom.
  Case2d k(40, 30, 2);
  for (int y = 0; y < 30; ++y) k.at(39, y) += 1.0f;
  const std::string h = k.hint();
  EXPECT_NE(h.find("only outputs within r of the right edge are wrong"), std::string::npos) << h;
  EXPECT_NE(h.find("x + j >= width"), std::string::npos) << h;
  EXPECT_EQ(h.find("top"), std::string::npos) << h;
  // Two sides.
  Case2d t(40, 30, 2);
  for (int x = 0; x < 40; ++x) t.at(x, 0) += 1.0f;
  for (int y = 0; y < 30; ++y) t.at(0, y) += 1.0f;
  const std::string h2 = t.hint();
  EXPECT_NE(h2.find("the left and top edges are wrong"), std::string::npos) << h2;
}

TEST(Hints, OneRowImageIsTwoDimensional) {
  // A 37 x 1 image: every output is within r of the top and the bottom; none is "interior".
  Case2d k(37, 1, 1);
  const Comparison ok = compare(k.out, k.g, k.grid);
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(region_of(10, 0, k.grid), "top+bottom border");
  EXPECT_EQ(region_of(0, 0, k.grid), "top+bottom-left corner");
  for (int x = 0; x < 37; ++x) k.at(x, 0) = std::numeric_limits<float>::quiet_NaN();
  const Comparison c = compare(k.out, k.g, k.grid);
  EXPECT_EQ(c.wrong_by_region.count("interior"), 0u) << c.report();
  EXPECT_NE(c.report().find("out(x=0, y=0) (top+bottom-left corner)"), std::string::npos) << c.report();
  const std::string h = k.hint();
  // Reads past the bottom of an image wider than tall: the row test may compare with the width.
  EXPECT_NE(h.find("does the test on rows compare with the width?"), std::string::npos) << h;
  // The same numbers as a 1D array keep the 1D names.
  EXPECT_EQ(region_of(10, 0, Grid{37, 1, 1}), "interior");
}

TEST(Hints, SidesEveryOutputLiesNextToAreNotNamed) {
  // A 37 x 1 image, r = 1, wrong at its right end only: every output is within r of the top and
  // the bottom, so those say nothing; the right edge sets the wrong output apart.
  Case2d k(37, 1, 1);
  k.at(36, 0) += 1.0f;
  const std::string h = k.hint();
  EXPECT_NE(h.find("only outputs within r of the right edge are wrong"), std::string::npos) << h;
  EXPECT_EQ(h.find("top"), std::string::npos) << h;
  // Wrong one column further in as well: no side sets x = 35 apart, so no side is named.
  k.at(35, 0) += 1.0f;
  EXPECT_EQ(k.hint().find("edge"), std::string::npos) << k.hint();
  // 5 x 3 with r = 4: every output is near the top and the bottom; a wrong left column is "left".
  Case2d s(5, 3, 4);
  for (int y = 0; y < 3; ++y) s.at(0, y) += 1.0f;
  const std::string hs = s.hint();
  EXPECT_NE(hs.find("only outputs within r of the left edge are wrong"), std::string::npos) << hs;
  EXPECT_EQ(hs.find("top and bottom"), std::string::npos) << hs;
}

TEST(Hints, NamesTheTileEdge) {
  // Tiles of 16: the outputs next to the right edge of each tile are wrong (a halo off by one).
  Case2d k(64, 48, 2, 16);
  for (int y = 2; y < 46; ++y)
    for (int x = 14; x < 62; x += 16)
      if (x < 62) k.at(x, y) += 1.0f;
  const std::string h = k.hint();
  EXPECT_NE(h.find("the wrong outputs lie next to tile edges (the right edge of each tile)"), std::string::npos) << h;
  const Comparison c = compare(k.out, k.g, k.grid);
  EXPECT_EQ(wrong_tile_edges(c), "right");
  EXPECT_NE(c.report().find("right tile edge: "), std::string::npos) << c.report();
}

TEST(Hints, UnwrittenColumnsNameTheEdge) {
  // A grid that rounds the block count down: the last columns are never written.
  Case2d k(100, 40, 1);
  for (int y = 0; y < 40; ++y)
    for (int x = 96; x < 100; ++x) k.at(x, y) = poison();
  const std::string h = k.hint();
  EXPECT_NE(h.find("160 outputs were never written: every column from x = 96 to the right edge"), std::string::npos)
      << h;
  Case2d rows(30, 40, 1);
  for (int y = 32; y < 40; ++y)
    for (int x = 0; x < 30; ++x) rows.at(x, y) = poison();
  EXPECT_NE(rows.hint().find("every row from y = 32 to the bottom edge"), std::string::npos) << rows.hint();
  // Scattered: the general hint.
  Case2d s(30, 40, 1);
  s.at(5, 5) = poison();
  s.at(20, 30) = poison();
  EXPECT_NE(s.hint().find("some outputs were never written"), std::string::npos) << s.hint();
}

TEST(Hints, OneDimensionalSides) {
  const auto x = random_floats(100, 5), f = random_floats(7, 6);
  const Golden g = conv1d_golden(x, f, 3);
  std::vector<float> got(g.value.begin(), g.value.end());
  got[0] += 1;
  got[2] += 1;
  const std::string h = conv_hints(compare(got, g, Grid{100, 1, 3}), HintProblem{100, 1, 3, false, &x, &f, &got});
  EXPECT_NE(h.find("only outputs within r of the left edge are wrong"), std::string::npos) << h;
  EXPECT_NE(h.find("(i + j < 0)"), std::string::npos) << h;
  EXPECT_NE(h.find("the array"), std::string::npos) << h;
}

TEST(Hints, InteriorErrorsGetNoEdgeHint) {
  Case2d k(40, 30, 2);
  k.at(20, 15) += 1.0f;
  k.at(0, 0) += 1.0f;
  EXPECT_EQ(k.hint(), "");
}

}  // namespace
}  // namespace convlab
