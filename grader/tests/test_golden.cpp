// Golden models against values worked by hand.
#include "convlab/golden.hpp"

#include <gtest/gtest.h>

namespace convlab {
namespace {

// PMPP's worked 1D example: x = [8, 2, 5, 4, 1, 7, 3], f = [1, 3, 5, 3, 1].
TEST(Golden, TextbookExample1D) {
  const std::vector<float> x{8, 2, 5, 4, 1, 7, 3}, f{1, 3, 5, 3, 1};
  const Golden g = conv1d_golden(x, f, 2);
  ASSERT_EQ(g.value.size(), 7u);
  EXPECT_EQ(g.value[1], 53);  // 0*1 + 8*3 + 2*5 + 5*3 + 4*1
  EXPECT_EQ(g.value[2], 52);  // 8*1 + 2*3 + 5*5 + 4*3 + 1*1
  EXPECT_EQ(g.value[3], 47);  // 2*1 + 5*3 + 4*5 + 1*3 + 7*1
  EXPECT_EQ(g.value[0], 8 * 5 + 2 * 3 + 5 * 1);  // two ghost cells on the left
  EXPECT_EQ(g.value[6], 1 * 1 + 7 * 3 + 3 * 5);  // two ghost cells on the right
  EXPECT_EQ(g.terms, 5);
  EXPECT_EQ(g.magnitude[2], 52);  // all products positive
}

TEST(Golden, CrossCorrelationNotConvolution1D) {
  // An asymmetric filter tells the two apart: y[1] = x0*f0 + x1*f1 + x2*f2.
  const std::vector<float> x{1, 2, 3}, f{1, 10, 100};
  EXPECT_EQ(conv1d_golden(x, f, 1).value[1], 1 * 1 + 2 * 10 + 3 * 100);
  EXPECT_EQ(conv1d_golden(x, flip_filter(f), 1).value[1], 1 * 100 + 2 * 10 + 3 * 1);
}

TEST(Golden, RadiusZeroIsScaling) {
  const std::vector<float> x{1.5f, -2, 4};
  const Golden g = conv1d_golden(x, {2}, 0);
  EXPECT_EQ(g.value, (std::vector<double>{3, -4, 8}));
  EXPECT_EQ(g.terms, 1);
}

TEST(Golden, RadiusLargerThanInput) {
  // n = 2, r = 3: every output sees both inputs and ghost cells elsewhere.
  const std::vector<float> x{2, 3}, f{1, 2, 3, 4, 5, 6, 7};
  const Golden g = conv1d_golden(x, f, 3);
  EXPECT_EQ(g.value[0], 2 * 4 + 3 * 5);  // x0 under tap 3 (centre), x1 under tap 4
  EXPECT_EQ(g.value[1], 2 * 3 + 3 * 4);
}

TEST(Golden, SingleElement) {
  const Golden g = conv1d_golden({-3}, {7, 2, 9}, 1);
  EXPECT_EQ(g.value[0], -6);
  EXPECT_EQ(g.magnitude[0], 6);
}

TEST(Golden, Hand2D) {
  // 3x3 image, 3x3 filter; the centre output uses every tap, the corner four.
  const std::vector<float> img{1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<float> f{1, 0, -1, 2, 0, -2, 1, 0, -1};  // Sobel-x (as cross-correlation)
  const Golden g = conv2d_golden(img, 3, 3, f, 1);
  EXPECT_EQ(g.value[4], (1 - 3) + 2 * (4 - 6) + (7 - 9));  // -8
  // Top-left (0,0): taps over (−1..1, −1..1); inside: (0,0)=1 (tap 1,1 -> 0), (1,0)=2 (tap 1,2 -> -2),
  // (0,1)=4 (tap 2,1 -> 0), (1,1)=5 (tap 2,2 -> -1).
  EXPECT_EQ(g.value[0], 2 * -2 + 5 * -1);
  EXPECT_EQ(g.terms, 9);
}

TEST(Golden, NonSquare2DMatchesDirectSum) {
  const int w = 5, h = 2, r = 1;
  std::vector<float> img(w * h), f(9);
  for (int i = 0; i < w * h; ++i) img[i] = float(i + 1);
  for (int i = 0; i < 9; ++i) f[i] = float(i % 4 - 1);
  const Golden g = conv2d_golden(img, w, h, f, r);
  // (x=4, y=1): bottom-right corner; inside taps: (3,0),(4,0),(3,1),(4,1).
  const double expect = img[0 * w + 3] * f[0 * 3 + 0] + img[0 * w + 4] * f[0 * 3 + 1] + img[1 * w + 3] * f[1 * 3 + 0] +
                        img[1 * w + 4] * f[1 * 3 + 1];
  EXPECT_EQ(g.value[1 * w + 4], expect);
}

TEST(Golden, RejectsBadShapes) {
  EXPECT_THROW(conv1d_golden({1, 2}, {1, 2}, 1), std::invalid_argument);  // 2 taps for r = 1
  EXPECT_THROW(conv1d_golden({}, {1}, 0), std::invalid_argument);
  EXPECT_THROW(conv1d_golden({1}, {1}, -1), std::invalid_argument);
  EXPECT_THROW(conv2d_golden({1, 2, 3}, 2, 2, {1}, 0), std::invalid_argument);
}

TEST(Golden, LargeImageUsesThreadsAndMatchesSerial) {
  // Big enough to take the threaded path; compare with a row computed by hand.
  const int w = 700, h = 300, r = 2, fw = 5;
  std::vector<float> img(w * h), f(fw * fw);
  for (int i = 0; i < w * h; ++i) img[i] = float((i * 7) % 13) - 6;
  for (int i = 0; i < fw * fw; ++i) f[i] = float(i % 5) - 2;
  const Golden g = conv2d_golden(img, w, h, f, r);
  const int y = 151;
  for (int x : {0, 1, 350, 698, 699}) {
    double s = 0;
    for (int dy = -r; dy <= r; ++dy)
      for (int dx = -r; dx <= r; ++dx) {
        const int xx = x + dx, yy = y + dy;
        if (xx >= 0 && xx < w && yy >= 0 && yy < h) s += double(img[yy * w + xx]) * f[(dy + r) * fw + dx + r];
      }
    EXPECT_EQ(g.value[y * w + x], s) << "x=" << x;
  }
}

}  // namespace
}  // namespace convlab
