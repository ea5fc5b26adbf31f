// The SVG writer: log axes map decades evenly, ticks and labels read as people write numbers,
// text is escaped, and the document holds what was drawn.
#include "convlab/svg.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace convlab {
namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(Svg, EscapesMarkup) {
  EXPECT_EQ(svg_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
}

// A subtitle longer than the chart is wide (the GPU's description, 170 characters on the
// H100) was cut off at the edge: it wraps at spaces instead.
TEST(Svg, ALongSubtitleWraps) {
  EXPECT_EQ(wrap_words("ab cd ef", 5), (std::vector<std::string>{"ab cd", "ef"}));
  EXPECT_EQ(wrap_words("abcdefgh ij", 4), (std::vector<std::string>{"abcdefgh", "ij"}));
  EXPECT_TRUE(wrap_words("", 4).empty());
  SvgChart c(960, 600, "t");
  const std::string device =
      "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 52 MB L2, 85.0 GB, SM clock 1980 MHz, memory clock 2619 MHz, "
      "5120-bit bus, CUDA driver 13.0, runtime 13.0) — ceilings measured in this run";
  c.set_subtitle(device);
  const std::string svg = c.str();
  std::size_t lines = 0, pos = 0;
  while ((pos = svg.find("fill=\"#555555\">", pos)) != std::string::npos) {
    const std::size_t end = svg.find("</text>", pos);
    const std::size_t chars = end - (pos + 16);
    EXPECT_LE(chars * 7.0, 960 - 90 + 10) << svg.substr(pos, end - pos);  // fits: under 7 px a character
    ++lines;
    pos = end;
  }
  EXPECT_EQ(lines, 2u);
  EXPECT_NE(svg.find("5120-bit"), std::string::npos);  // nothing lost
}

TEST(Svg, LogTicksAreDecadesOrOneTwoFive) {
  EXPECT_EQ(log_ticks(0.05, 2000), (std::vector<double>{0.1, 1, 10, 100, 1000}));
  const std::vector<double> few = log_ticks(3, 200);  // fewer than three decades: 1-2-5 steps
  ASSERT_EQ(few.size(), 6u);
  EXPECT_DOUBLE_EQ(few.front(), 5);
  EXPECT_DOUBLE_EQ(few.back(), 200);
  EXPECT_TRUE(log_ticks(0, 10).empty());
  EXPECT_TRUE(log_ticks(10, 10).empty());
}

TEST(Svg, TickLabels) {
  EXPECT_EQ(tick_label(0.01), "0.01");
  EXPECT_EQ(tick_label(1), "1");
  EXPECT_EQ(tick_label(500), "500");
  EXPECT_EQ(tick_label(1000), "1k");
  EXPECT_EQ(tick_label(20000), "20k");
  EXPECT_EQ(tick_label(1e6), "1M");
}

TEST(Svg, LogAxesMapDecadesEvenly) {
  SvgChart c(1000, 600, "t");
  c.set_axes({1, 1000, "x"}, {10, 1e5, "y"});
  const double d1 = c.px(10) - c.px(1), d2 = c.px(100) - c.px(10), d3 = c.px(1000) - c.px(100);
  EXPECT_NEAR(d1, d2, 1e-9);
  EXPECT_NEAR(d2, d3, 1e-9);
  EXPECT_LT(c.px(1), c.px(1000));
  EXPECT_GT(c.py(10), c.py(1e5));  // y grows upwards on screen
  EXPECT_NEAR(c.py(std::sqrt(10 * 1e5)), (c.py(10) + c.py(1e5)) / 2, 1e-9);
  EXPECT_THROW(c.set_axes({0, 10, "x"}, {1, 10, "y"}), std::invalid_argument);
  EXPECT_THROW(c.set_axes({1, 10, "x"}, {10, 10, "y"}), std::invalid_argument);
}

TEST(Svg, DocumentHoldsWhatWasDrawn) {
  SvgChart c(800, 500, "Roofline <test>");
  c.set_axes({0.1, 100, "intensity"}, {10, 1e5, "GFLOP/s"});
  c.set_subtitle("H100 & friends");
  c.line({{0.1, 300}, {20, 6e4}, {100, 6e4}}, {"#444444", 2, "", ""}, "roof");
  c.point(2, 2000, {"#d62728", 0, "", "circle"}, "kernel A", "your kernels");
  c.point(2, 1900, {"#d62728", 0, "", "circle"}, "kernel B", "your kernels");
  c.point(0.5, 150, {"#7f7f7f", 0, "", "square"}, "naive", "baseline");
  c.text(1, 1000, "copy bandwidth", "#444444", -30);
  const std::string s = c.str();
  EXPECT_EQ(s.rfind("<?xml", 0), 0u);
  EXPECT_NE(s.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(s.find("</svg>"), std::string::npos);
  EXPECT_NE(s.find("Roofline &lt;test&gt;"), std::string::npos);
  EXPECT_NE(s.find("H100 &amp; friends"), std::string::npos);
  EXPECT_EQ(count(s, "<polyline"), 1);
  EXPECT_EQ(count(s, "<circle"), 3);  // two points and their legend marker
  EXPECT_EQ(count(s, "<rect x="), 4);  // the square, its legend marker, the clip and the frame
  EXPECT_NE(s.find(">kernel A</text>"), std::string::npos);
  EXPECT_NE(s.find(">kernel B</text>"), std::string::npos);
  EXPECT_EQ(count(s, ">your kernels</text>"), 1);  // one legend entry per series
  EXPECT_NE(s.find(">roof</text>"), std::string::npos);
  EXPECT_NE(s.find("rotate(-30.0"), std::string::npos);
  for (const char* tick : {">0.1<", ">1<", ">10<", ">100<", ">1k<", ">10k<", ">100k<"})
    EXPECT_NE(s.find(tick), std::string::npos) << tick;
  // Every opened element is closed: as many '<' as '>' (no stray markup from the labels).
  EXPECT_EQ(count(s, "<"), count(s, ">"));
}

TEST(Svg, LabelsOfPointsTogetherDoNotOverlap) {
  SvgChart c(800, 500, "t");
  c.set_axes({0.1, 100, "x"}, {10, 1e5, "y"});
  c.point(2, 2000, {}, "first label");
  c.point(2, 2001, {}, "second label");
  c.column_label(2, "r=3");
  c.column_label(2.05, "r=4 (1D)");
  const std::string s = c.str();
  struct Placed {
    double x, y;
    std::string anchor;
  };
  const auto placed = [&](const std::string& label) {
    const auto at = s.rfind("<text", s.find(">" + label + "<"));
    const std::string tag = s.substr(at, s.find('>', at) - at);
    const auto attr = [&](const std::string& name) {
      const auto b = tag.find(name + "=\"");
      return b == std::string::npos ? std::string() : tag.substr(b + name.size() + 2, tag.find('"', b + name.size() + 2) - b - name.size() - 2);
    };
    return Placed{std::stod(attr("x")), std::stod(attr("y")), attr("text-anchor")};
  };
  const Placed a = placed("first label"), b = placed("second label");
  EXPECT_TRUE(std::fabs(a.y - b.y) >= 12.9 || a.anchor != b.anchor) << a.x << "," << a.y << " " << b.x << "," << b.y;
  // The column labels of nearby columns stack instead of covering each other.
  EXPECT_GE(std::fabs(placed("r=3").y - placed("r=4 (1D)").y), 12.9);
}

}  // namespace
}  // namespace convlab
