// A small SVG writer for log-log charts. See convlab/svg.hpp.
#include "convlab/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace convlab {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// The marker's shape at (cx, cy), radius r.
std::string marker(const SvgStyle& s, double cx, double cy, double r) {
  std::ostringstream os;
  const std::string fill = " fill=\"" + svg_escape(s.color) + "\" stroke=\"#ffffff\" stroke-width=\"1\"";
  if (s.marker == "square") {
    os << "<rect x=\"" << num(cx - r) << "\" y=\"" << num(cy - r) << "\" width=\"" << num(2 * r) << "\" height=\""
       << num(2 * r) << "\"" << fill << "/>";
  } else if (s.marker == "diamond") {
    os << "<polygon points=\"" << num(cx) << "," << num(cy - r * 1.3) << " " << num(cx + r * 1.3) << "," << num(cy)
       << " " << num(cx) << "," << num(cy + r * 1.3) << " " << num(cx - r * 1.3) << "," << num(cy) << "\"" << fill
       << "/>";
  } else if (s.marker == "triangle") {
    os << "<polygon points=\"" << num(cx) << "," << num(cy - r * 1.3) << " " << num(cx + r * 1.2) << ","
       << num(cy + r) << " " << num(cx - r * 1.2) << "," << num(cy + r) << "\"" << fill << "/>";
  } else {
    os << "<circle cx=\"" << num(cx) << "\" cy=\"" << num(cy) << "\" r=\"" << num(r) << "\"" << fill << "/>";
  }
  return os.str();
}

// A rectangle in pixels: the plot area, a marker, or the room a label takes.
struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// The room a text of `width` pixels at (x, y) takes, by its SVG text-anchor.
Box text_box(double x, double y, double width, const std::string& anchor) {
  const double left = anchor == "start" ? x : anchor == "end" ? x - width : x - width / 2;
  return Box{left, y - 10, left + width, y + 3};
}

// The document's head: the XML declaration, the <svg> element, a white page and the plot's clip path.
void write_head(std::ostream& os, double width, double height, const Box& plot) {
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << num(width) << "\" height=\""
     << num(height) << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
     << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
     << "<clipPath id=\"plot\"><rect x=\"" << num(plot.x0) << "\" y=\"" << num(plot.y0) << "\" width=\""
     << num(plot.x1 - plot.x0) << "\" height=\"" << num(plot.y1 - plot.y0) << "\"/></clipPath>\n";
}

// The title, and under it the subtitle wrapped to the chart's width.
void write_title(std::ostream& os, double width, const Box& plot, const std::string& title,
                 const std::string& subtitle) {
  os << "<text x=\"" << num(plot.x0) << "\" y=\"28\" font-size=\"17\" font-weight=\"bold\">" << svg_escape(title)
     << "</text>\n";
  // The subtitle (the GPU's long description) wraps at spaces to the chart's width: SVG text
  // does not wrap, and a line past the edge is cut off (seen on the H100's roofline). At 12 px,
  // DejaVu Sans averages under 7 px a character.
  const std::size_t per_line = static_cast<std::size_t>(std::max(20.0, (width - plot.x0 - 10) / 7.0));
  double y = 48;
  for (const std::string& line : wrap_words(subtitle, per_line)) {
    os << "<text x=\"" << num(plot.x0) << "\" y=\"" << num(y) << "\" font-size=\"12\" fill=\"#555555\">"
       << svg_escape(line) << "</text>\n";
    y += 14;
  }
}

// The grid, the tick labels, the plot's frame and the axes' titles.
void write_axes(std::ostream& os, const SvgChart& c, const LogAxis& x, const LogAxis& y, const Box& plot,
                double height) {
  const double x0 = plot.x0, x1 = plot.x1, y0 = plot.y0, y1 = plot.y1;
  os << "<g stroke=\"#e4e4e4\" stroke-width=\"1\">\n";
  for (double t : log_ticks(x.min, x.max))
    os << "<line x1=\"" << num(c.px(t)) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(c.px(t)) << "\" y2=\""
       << num(y1) << "\"/>\n";
  for (double t : log_ticks(y.min, y.max))
    os << "<line x1=\"" << num(x0) << "\" y1=\"" << num(c.py(t)) << "\" x2=\"" << num(x1) << "\" y2=\""
       << num(c.py(t)) << "\"/>\n";
  os << "</g>\n<g fill=\"#333333\">\n";
  for (double t : log_ticks(x.min, x.max))
    os << "<text x=\"" << num(c.px(t)) << "\" y=\"" << num(y1 + 18) << "\" text-anchor=\"middle\">"
       << svg_escape(tick_label(t)) << "</text>\n";
  for (double t : log_ticks(y.min, y.max))
    os << "<text x=\"" << num(x0 - 8) << "\" y=\"" << num(c.py(t) + 4) << "\" text-anchor=\"end\">"
       << svg_escape(tick_label(t)) << "</text>\n";
  os << "</g>\n";
  os << "<rect x=\"" << num(x0) << "\" y=\"" << num(y0) << "\" width=\"" << num(x1 - x0) << "\" height=\""
     << num(y1 - y0) << "\" fill=\"none\" stroke=\"#333333\" stroke-width=\"1\"/>\n";
  os << "<text x=\"" << num((x0 + x1) / 2) << "\" y=\"" << num(height - 22) << "\" text-anchor=\"middle\" font-size=\"13\">"
     << svg_escape(x.label) << "</text>\n";
  os << "<text x=\"22\" y=\"" << num((y0 + y1) / 2) << "\" text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 22 "
     << num((y0 + y1) / 2) << ")\">" << svg_escape(y.label) << "</text>\n";
}

// The column labels, along the foot of the plot, stacked upwards where they would meet what TAKEN
// holds; each one's room is added to it.
void write_column_labels(std::ostream& os, const SvgChart& c, const std::vector<std::pair<double, std::string>>& columns,
                         const Box& plot, std::vector<Box>& taken) {
  for (const auto& [x, label] : columns) {
    const double width = 6.0 * static_cast<double>(label.size());
    double y = plot.y1 - 6;
    Box box = text_box(c.px(x), y, width, "middle");
    for (bool moved = true; moved;) {
      moved = false;
      for (const auto& b : taken)
        if (box.overlaps(b)) {
          y -= 13;
          box = text_box(c.px(x), y, width, "middle");
          moved = true;
        }
    }
    taken.push_back(box);
    os << "<text x=\"" << num(c.px(x)) << "\" y=\"" << num(y) << "\" text-anchor=\"middle\" font-size=\"10\" "
       << "fill=\"#777777\">" << svg_escape(label) << "</text>\n";
  }
}

// A point's label next to its marker at pixel (x, y), placed where it covers nothing TAKEN holds and
// stays inside the plot: to the right of the point, else to its left, above, below, or a little
// higher or lower; where no place is free, the first that stays inside. Its room is added to TAKEN.
void write_point_label(std::ostream& os, double x, double y, const std::string& label, const Box& plot,
                       std::vector<Box>& taken) {
  const double width = 6.3 * static_cast<double>(label.size());
  const struct {
    double dx, dy;
    const char* anchor;
  } places[] = {{9, 4, "start"}, {-9, 4, "end"}, {0, -9, "middle"}, {0, 17, "middle"},
                {9, -9, "start"}, {9, 17, "start"}, {-9, -9, "end"}, {-9, 17, "end"}};
  int chosen = -1, inside = -1;
  for (int i = 0; i < 8 && chosen < 0; ++i) {
    const Box b = text_box(x + places[i].dx, y + places[i].dy, width, places[i].anchor);
    if (b.x0 < plot.x0 || b.x1 > plot.x1 || b.y0 < plot.y0 || b.y1 > plot.y1) continue;
    if (inside < 0) inside = i;
    if (std::none_of(taken.begin(), taken.end(), [&](const Box& o) { return b.overlaps(o); })) chosen = i;
  }
  if (chosen < 0) chosen = inside < 0 ? 0 : inside;
  const double lx = x + places[chosen].dx, ly = y + places[chosen].dy;
  taken.push_back(text_box(lx, ly, width, places[chosen].anchor));
  os << "<text x=\"" << num(lx) << "\" y=\"" << num(ly) << "\" font-size=\"11\" fill=\"#222222\""
     << (std::string(places[chosen].anchor) == "start" ? "" : std::string(" text-anchor=\"") + places[chosen].anchor + "\"")
     << ">" << svg_escape(label) << "</text>\n";
}

// The legend, right of the plot: a stroke for a line's entry, a marker for a point's.
void write_legend(std::ostream& os, const std::vector<std::pair<std::string, SvgStyle>>& legend,
                  const std::vector<bool>& is_line, const Box& plot) {
  double ly = plot.y0 + 10;
  os << "<g font-size=\"12\">\n";
  for (std::size_t i = 0; i < legend.size(); ++i) {
    const auto& [name, style] = legend[i];
    const double lx = plot.x1 + 20;
    if (is_line[i])
      os << "<line x1=\"" << num(lx) << "\" y1=\"" << num(ly) << "\" x2=\"" << num(lx + 24) << "\" y2=\"" << num(ly)
         << "\" stroke=\"" << svg_escape(style.color) << "\" stroke-width=\"" << num(style.width) << "\""
         << (style.dash.empty() ? "" : " stroke-dasharray=\"" + svg_escape(style.dash) + "\"") << "/>\n";
    else
      os << marker(style, lx + 12, ly, 5) << "\n";
    os << "<text x=\"" << num(lx + 32) << "\" y=\"" << num(ly + 4) << "\">" << svg_escape(name) << "</text>\n";
    ly += 22;
  }
  os << "</g>\n";
}

}  // namespace

std::string svg_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> ticks;
  if (!(lo > 0) || !(hi > lo)) return ticks;
  const int first = static_cast<int>(std::ceil(std::log10(lo) - 1e-9));
  const int last = static_cast<int>(std::floor(std::log10(hi) + 1e-9));
  for (int e = first; e <= last; ++e) ticks.push_back(std::pow(10.0, e));
  if (ticks.size() < 3) {
    ticks.clear();
    for (int e = first - 1; e <= last; ++e)
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = m * std::pow(10.0, e);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
      }
  }
  return ticks;
}

std::string tick_label(double v) {
  char buf[32];
  const auto trim = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", x);
    return std::string(b);
  };
  if (v >= 1e6) std::snprintf(buf, sizeof buf, "%sM", trim(v / 1e6).c_str());
  else if (v >= 1e3) std::snprintf(buf, sizeof buf, "%sk", trim(v / 1e3).c_str());
  else std::snprintf(buf, sizeof buf, "%s", trim(v).c_str());
  return buf;
}

SvgChart::SvgChart(double width, double height, std::string title)
    : width_(width), height_(height), title_(std::move(title)) {}

void SvgChart::set_axes(LogAxis x, LogAxis y) {
  for (const LogAxis* a : {&x, &y})
    if (!(a->min > 0) || !(a->max > a->min))
      throw std::invalid_argument("SvgChart: a log axis needs 0 < min < max (axis '" + a->label + "')");
  x_ = std::move(x);
  y_ = std::move(y);
}

double SvgChart::px(double x) const {
  const double w = width_ - left_ - right_;
  return left_ + w * (std::log10(x) - std::log10(x_.min)) / (std::log10(x_.max) - std::log10(x_.min));
}

double SvgChart::py(double y) const {
  const double h = height_ - top_ - bottom_;
  return top_ + h * (1 - (std::log10(y) - std::log10(y_.min)) / (std::log10(y_.max) - std::log10(y_.min)));
}

void SvgChart::line(const std::vector<std::pair<double, double>>& points, const SvgStyle& style,
                    const std::string& legend) {
  lines_.push_back({points, style});
  if (!legend.empty()) {
    legend_.push_back({legend, style});
    legend_is_line_.push_back(true);
  }
}

void SvgChart::text(double x, double y, const std::string& t, const std::string& color, double angle,
                    const std::string& anchor) {
  texts_.push_back({x, y, t, color, angle, anchor});
}

void SvgChart::column_label(double x, const std::string& text) { columns_.push_back({x, text}); }

void SvgChart::point(double x, double y, const SvgStyle& style, const std::string& label, const std::string& legend) {
  points_.push_back({x, y, style, label});
  if (!legend.empty() &&
      std::none_of(legend_.begin(), legend_.end(), [&](const auto& e) { return e.first == legend; })) {
    legend_.push_back({legend, style});
    legend_is_line_.push_back(false);
  }
}

std::vector<std::string> wrap_words(const std::string& text, std::size_t max_chars) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t space = text.find(' ', i);
    const std::string word = text.substr(i, space == std::string::npos ? std::string::npos : space - i);
    i = space == std::string::npos ? text.size() : space + 1;
    if (!line.empty() && line.size() + 1 + word.size() > max_chars) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string SvgChart::str() const {
  std::ostringstream os;
  const Box plot{left_, top_, width_ - right_, height_ - bottom_};
  write_head(os, width_, height_, plot);
  write_title(os, width_, plot, title_, subtitle_);
  write_axes(os, *this, x_, y_, plot, height_);
  // Lines, then texts, then points (on top), all clipped to the plot area.
  os << "<g clip-path=\"url(#plot)\">\n";
  for (const auto& l : lines_) {
    os << "<polyline fill=\"none\" stroke=\"" << svg_escape(l.style.color) << "\" stroke-width=\"" << num(l.style.width)
       << "\"" << (l.style.dash.empty() ? "" : " stroke-dasharray=\"" + svg_escape(l.style.dash) + "\"")
       << " points=\"";
    for (const auto& [x, y] : l.points) os << num(px(x)) << "," << num(py(y)) << " ";
    os << "\"/>\n";
  }
  for (const auto& t : texts_) {
    os << "<text x=\"" << num(px(t.x)) << "\" y=\"" << num(py(t.y)) << "\" fill=\"" << svg_escape(t.color) << "\""
       << (t.anchor == "start" ? "" : " text-anchor=\"" + svg_escape(t.anchor) + "\"");
    if (t.angle != 0) os << " transform=\"rotate(" << num(t.angle) << " " << num(px(t.x)) << " " << num(py(t.y)) << ")\"";
    os << ">" << svg_escape(t.text) << "</text>\n";
  }
  // Labels cover no other label and no marker: the markers' room is taken first, then the column
  // labels', then each point label's in turn.
  std::vector<Box> taken;
  for (const auto& p : points_) taken.push_back({px(p.x) - 6, py(p.y) - 6, px(p.x) + 6, py(p.y) + 6});
  write_column_labels(os, *this, columns_, plot, taken);
  for (const auto& p : points_) os << marker(p.style, px(p.x), py(p.y), 5) << "\n";
  for (const auto& p : points_)
    if (!p.label.empty()) write_point_label(os, px(p.x), py(p.y), p.label, plot, taken);
  os << "</g>\n";
  write_legend(os, legend_, legend_is_line_, plot);
  os << "</svg>\n";
  return os.str();
}

}  // namespace convlab
