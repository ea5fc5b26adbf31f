/// @file svg.hpp
/// @brief A small SVG writer for the charts convlab draws (the roofline of a benchmark):
/// log-log axes with decade ticks and labels, lines, labelled points and a legend. The output
/// is a standalone SVG 1.1 document that any browser opens.
///
/// \code
/// SvgChart chart(900, 560, "Lab 04 on an H100");
/// chart.set_axes({0.1, 100, "arithmetic intensity (FLOP/byte)"}, {10, 1e5, "GFLOP/s"});
/// chart.line({{0.1, 300}, {20, 60000}, {100, 60000}}, {"#444", 2}, "roofline");
/// chart.point(2.5, 2500, {"#d62728", 0, "", "circle"}, "conv2d_cached r=3", "your kernels");
/// write(chart.str());
/// \endcode
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace convlab {

/// A log-scaled axis: [min, max] (both > 0) and its title.
struct LogAxis {
  double min = 1;     ///< smallest value shown
  double max = 10;    ///< largest value shown
  std::string label;  ///< the axis title
};

/// How a line or a point is drawn.
struct SvgStyle {
  std::string color = "#000000";  ///< stroke (lines) or fill (points)
  double width = 1.5;             ///< stroke width (lines)
  std::string dash;               ///< SVG stroke-dasharray, "" for solid ("6 4")
  std::string marker = "circle";  ///< points: circle, square, diamond or triangle
};

/// Escapes text for SVG/XML: & < > " '.
std::string svg_escape(const std::string& text);

/// Tick values of a log axis over [lo, hi]: every power of ten inside it; with fewer than
/// three of them, also 2x and 5x each power of ten.
std::vector<double> log_ticks(double lo, double hi);

/// `text` broken at spaces into lines of at most `max_chars` characters (a longer word stays
/// whole on a line of its own): SVG text does not wrap by itself.
std::vector<std::string> wrap_words(const std::string& text, std::size_t max_chars);

/// A tick label: 0.01, 0.5, 1, 20, 500, 1k, 20k, 1M, ...
std::string tick_label(double v);

/// A chart with log-log axes. Coordinates are data values; they are mapped onto the plot
/// area, and what falls outside the axes' ranges is clipped.
class SvgChart {
public:
  /// A `width` x `height` pixel chart with `title` above the plot.
  SvgChart(double width, double height, std::string title);
  /// The axes (both logarithmic); throws std::invalid_argument unless 0 < min < max.
  void set_axes(LogAxis x, LogAxis y);
  /// A second line under the title (e.g. the device).
  void set_subtitle(std::string text) { subtitle_ = std::move(text); }
  /// A polyline through `points`; `legend` (if not empty) adds a legend entry.
  void line(const std::vector<std::pair<double, double>>& points, const SvgStyle& style, const std::string& legend = "");
  /// Text at a data position, e.g. a ceiling's name above its line (rotated by `angle` degrees);
  /// `anchor` is SVG's text-anchor: start, middle or end.
  void text(double x, double y, const std::string& text, const std::string& color = "#333333", double angle = 0,
            const std::string& anchor = "start");
  /// A label at the foot of the plot for the column of points at `x` (e.g. the problem they
  /// share); labels that would overlap are stacked upwards.
  void column_label(double x, const std::string& text);
  /// A point with a label next to it; `legend` (if not empty) adds a legend entry once per name.
  void point(double x, double y, const SvgStyle& style, const std::string& label, const std::string& legend = "");
  /// Pixel position of a data value (for tests and for placing text).
  double px(double x) const;
  /// Pixel position of a data value on the y axis (grows downwards).
  double py(double y) const;
  /// The SVG document.
  std::string str() const;

  /// @cond
  // The chart's parts (hidden from the docs: Doxygen would link a "Classes" summary of these
  // private types to a section it never writes).
private:
  struct Line {
    std::vector<std::pair<double, double>> points;
    SvgStyle style;
  };
  struct Point {
    double x, y;
    SvgStyle style;
    std::string label;
  };
  struct Text {
    double x, y;
    std::string text, color;
    double angle;
    std::string anchor;
  };
  double width_, height_;
  std::string title_, subtitle_;
  LogAxis x_, y_;
  double left_ = 90, right_ = 250, top_ = 70, bottom_ = 70;  // margins: the legend sits on the right
  std::vector<Line> lines_;
  std::vector<Point> points_;
  std::vector<Text> texts_;
  std::vector<std::pair<double, std::string>> columns_;
  std::vector<std::pair<std::string, SvgStyle>> legend_;
  std::vector<bool> legend_is_line_;
  /// @endcond
};

}  // namespace convlab
