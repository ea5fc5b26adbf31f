// The error map image of a failing 2D grader, and PNG files read back.
#include "convlab/image.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

namespace convlab {
namespace {

// A 2D comparison of a w x h output in which the listed outputs are wrong (1) or unwritten (2).
Comparison comparison_with(int w, int h, int tile, const std::vector<std::pair<int, int>>& wrong,
                           const std::vector<std::pair<int, int>>& unwritten = {}) {
  Golden g;
  g.terms = 9;
  g.value.assign(static_cast<std::size_t>(w) * h, 1.0);
  g.magnitude.assign(g.value.size(), 1.0);
  std::vector<float> got(g.value.size(), 1.0f);
  for (auto [x, y] : wrong) got[static_cast<std::size_t>(y) * w + x] = 5.0f;
  for (auto [x, y] : unwritten) got[static_cast<std::size_t>(y) * w + x] = std::numeric_limits<float>::quiet_NaN();
  Grid grid{w, h, 1, tile, tile};
  Comparison c = compare(got, g, grid);
  // The poison the graders write is all ones; a quiet NaN is "wrong", so mark those by hand.
  for (auto [x, y] : unwritten) c.wrong_mask[static_cast<std::size_t>(y) * w + x] = 2;
  return c;
}

bool is(const Image& img, int x, int y, const std::uint8_t* rgb) {
  return img.at(x, y, 0) == rgb[0] && img.at(x, y, 1) == rgb[1] && img.at(x, y, 2) == rgb[2];
}

TEST(ErrorMap, SmallImagesAreEnlargedAndWrongOutputsLit) {
  // 40 x 30 outputs, 16 x 16 tiles: enlarged 12x (512 / 40), tile lines every 192 pixels.
  const Comparison c = comparison_with(40, 30, 16, {{17, 3}}, {{2, 29}});
  const Image img = render_error_map(c);
  ASSERT_EQ(img.channels, 3);
  const int zoom = 512 / 40;
  EXPECT_EQ(img.width, 40 * zoom);
  EXPECT_EQ(img.height, 30 * zoom);
  // Every pixel of the wrong output's cell is red, the unwritten one yellow.
  for (int dy = 0; dy < zoom; ++dy)
    for (int dx = 0; dx < zoom; ++dx) {
      EXPECT_TRUE(is(img, 17 * zoom + dx, 3 * zoom + dy, ErrorMapColours::wrong));
      EXPECT_TRUE(is(img, 2 * zoom + dx, 29 * zoom + dy, ErrorMapColours::unwritten));
    }
  // A right output away from the tile lines is dark; the tile edges at x = 16, 32 and y = 16 are blue.
  EXPECT_TRUE(is(img, 5 * zoom + 3, 5 * zoom + 3, ErrorMapColours::right));
  EXPECT_TRUE(is(img, 16 * zoom, 5 * zoom + 3, ErrorMapColours::tile_line));
  EXPECT_TRUE(is(img, 32 * zoom, 20 * zoom + 3, ErrorMapColours::tile_line));
  EXPECT_TRUE(is(img, 7 * zoom + 2, 16 * zoom, ErrorMapColours::tile_line));
  EXPECT_FALSE(is(img, 15 * zoom, 5 * zoom + 3, ErrorMapColours::tile_line));
}

TEST(ErrorMap, LargeImagesAreGroupedAndNoWrongOutputIsLost) {
  // 4099 x 2001 outputs: 5 x 5 outputs per cell (4099 / 1024 rounded up), one wrong output anywhere lights its cell.
  const Comparison c = comparison_with(4099, 2001, 32, {{4098, 2000}, {1234, 777}});
  const Image img = render_error_map(c);
  EXPECT_EQ(img.width, (4099 + 4) / 5);
  EXPECT_EQ(img.height, (2001 + 4) / 5);
  EXPECT_TRUE(is(img, 4098 / 5, 2000 / 5, ErrorMapColours::wrong));
  EXPECT_TRUE(is(img, 1234 / 5, 777 / 5, ErrorMapColours::wrong));
  // 32-wide tiles are 6.4 pixels apart here: drawn.
  EXPECT_TRUE(is(img, 32 / 5, 100, ErrorMapColours::tile_line));
  std::size_t red = 0;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) red += is(img, x, y, ErrorMapColours::wrong);
  EXPECT_EQ(red, 2u);
}

TEST(ErrorMap, RefusesAComparisonWithoutItsMask) {
  Comparison c;
  c.grid = Grid{10, 10, 1, 0, 0};
  EXPECT_THROW(render_error_map(c), std::invalid_argument);
}

TEST(Png, WrittenImagesReadBackExactly) {
  if (!png_available()) GTEST_SKIP() << "this build has no libpng";
  const Comparison c = comparison_with(33, 17, 8, {{0, 0}, {32, 16}});
  const Image img = render_error_map(c);
  const std::string path = (std::filesystem::temp_directory_path() / "convlab-test-png/map.png").string();
  write_png(path, img);
  const Image back = read_png(path);
  EXPECT_EQ(back.width, img.width);
  EXPECT_EQ(back.height, img.height);
  EXPECT_EQ(back.channels, 3);
  EXPECT_EQ(back.pixels, img.pixels);
  Image grey{3, 2, 1, {0, 50, 100, 150, 200, 255}};
  write_png(path, grey);
  const Image grey_back = read_png(path);
  EXPECT_EQ(grey_back.channels, 1);
  EXPECT_EQ(grey_back.pixels, grey.pixels);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(Png, BadFilesAreClearErrors) {
  if (!png_available()) GTEST_SKIP() << "this build has no libpng";
  try {
    read_png("/no/such/file.png");
    FAIL() << "a missing file must throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/file.png"), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_png("/tmp/x.png", Image{2, 2, 3, {1, 2, 3}}), std::runtime_error);  // malformed
}

}  // namespace
}  // namespace convlab
