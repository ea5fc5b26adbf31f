// The roofline picture of a benchmark run. See convlab/roofline.hpp.
#include "convlab/roofline.hpp"

#include "convlab/svg.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

namespace convlab {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

double positive(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_number() || !(j.at(key).get<double>() > 0))
    throw std::invalid_argument("benchmark JSON: " + where + " needs a positive number '" + key + "'");
  return j.at(key).get<double>();
}

std::optional<double> optional_ms(const nlohmann::json& row, const char* key) {
  if (!row.contains(key) || !row.at(key).is_number()) return std::nullopt;
  const double v = row.at(key).get<double>();
  return v > 0 ? std::optional<double>(v) : std::nullopt;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Decade bounds around [lo, hi].
double floor_decade(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double ceil_decade(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

// "268435456" -> "268M" (a 1D length), "8192x8192" as it is.
std::string short_size(const std::string& size) {
  if (size.empty() || size.find_first_not_of("0123456789") != std::string::npos || size.size() < 7) return size;
  const double v = std::stod(size);
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 1e9 ? "%.3gG" : "%.3gM", v >= 1e9 ? v / 1e9 : v / 1e6);
  return buf;
}

std::string with_commas(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  std::string s = buf, out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

}  // namespace

Roofline roofline_from_bench_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("benchmark JSON: not JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("rows") || !j.at("rows").is_array())
    throw std::invalid_argument("benchmark JSON: no 'rows' array (is this the file of `<lab>_bench --json FILE`?)");
  Roofline r;
  r.title = j.value("title", std::string("benchmark"));
  r.device = j.value("device", std::string());
  r.copy_gbs = positive(j, "copy_gbs", "the run");
  r.peak_gflops = positive(j, "fp32_peak_gflops", "the run");
  std::set<std::string> sizes;
  for (const auto& row : j.at("rows")) sizes.insert(row.value("size", std::string()));
  const bool many_sizes = sizes.size() > 1;
  // One baseline and one cuDNN point per problem: their times, collected over its rows.
  struct Problem {
    double intensity = 0, flops = 0;
    std::vector<double> baseline_ms, cudnn_ms;
    bool baseline_row = false;
  };
  std::map<std::pair<std::string, int>, Problem> problems;
  int index = 0;
  for (const auto& row : j.at("rows")) {
    const std::string where = "row " + std::to_string(++index);
    if (!row.is_object()) throw std::invalid_argument("benchmark JSON: " + where + " is not an object");
    const std::string kernel = row.value("kernel", std::string("?"));
    const std::string size = row.value("size", std::string());
    const int radius = row.value("radius", 0);
    const double ms = positive(row, "median_ms", where + " (" + kernel + ")");
    const double bytes = positive(row, "ideal_bytes", where + " (" + kernel + ")");
    const double flops = positive(row, "flops", where + " (" + kernel + ")");
    const std::string problem = "r=" + std::to_string(radius) + (many_sizes && !size.empty() ? " " + short_size(size) : "");
    const std::string suffix = " " + problem;
    Problem& p = problems[{size, radius}];
    p.intensity = flops / bytes;
    p.flops = flops;
    RooflinePoint pt;
    pt.intensity = flops / bytes;
    pt.gflops = flops / (ms * 1e-3) / 1e9;
    std::string name = kernel;
    if (kernel.rfind("baseline", 0) == 0) {
      pt.series = "naive baseline (grader)";
      name = "naive";
      p.baseline_row = true;
    } else if (ends_with(kernel, " (student)")) {
      pt.series = "your kernels";
      name = kernel.substr(0, kernel.size() - 10);
    } else if (ends_with(kernel, " (reference)")) {
      pt.series = "reference kernels";
      name = kernel.substr(0, kernel.size() - 12);
    } else {
      pt.series = "other kernels";
    }
    pt.label = name + suffix;
    pt.kernel = name;
    pt.problem = problem;
    r.points.push_back(pt);
    if (const auto b = optional_ms(row, "baseline_ms")) p.baseline_ms.push_back(*b);
    if (const auto c = optional_ms(row, "cudnn_ms")) p.cudnn_ms.push_back(*c);
  }
  if (r.points.empty()) throw std::invalid_argument("benchmark JSON: no rows");
  for (const auto& [key, p] : problems) {
    const std::string problem =
        "r=" + std::to_string(key.second) + (many_sizes && !key.first.empty() ? " " + short_size(key.first) : "");
    if (!p.baseline_row && !p.baseline_ms.empty())
      r.points.push_back({"naive " + problem, "naive", problem, "naive baseline (grader)", p.intensity,
                          p.flops / (median(p.baseline_ms) * 1e-3) / 1e9});
    if (!p.cudnn_ms.empty())
      r.points.push_back({"cuDNN " + problem, "cuDNN", problem, "cuDNN", p.intensity,
                          p.flops / (median(p.cudnn_ms) * 1e-3) / 1e9});
  }
  return r;
}

std::string roofline_svg(const Roofline& r) {
  if (!(r.copy_gbs > 0) || !(r.peak_gflops > 0)) throw std::invalid_argument("roofline: the ceilings must be positive");
  if (r.points.empty()) throw std::invalid_argument("roofline: no points to draw");
  const double ridge = r.peak_gflops / r.copy_gbs;  // FLOP/byte where the two roofs meet
  double ai_lo = ridge, ai_hi = ridge, perf_lo = r.peak_gflops;
  for (const auto& p : r.points) {
    ai_lo = std::min(ai_lo, p.intensity);
    ai_hi = std::max(ai_hi, p.intensity);
    perf_lo = std::min(perf_lo, p.gflops);
  }
  const double x_min = floor_decade(ai_lo / 1.5), x_max = ceil_decade(ai_hi * 1.5);
  const double y_min = floor_decade(std::min(perf_lo, r.copy_gbs * x_min) / 1.5), y_max = ceil_decade(r.peak_gflops * 1.5);
  SvgChart chart(960, 600, "Roofline: " + r.title);
  chart.set_subtitle(r.device.empty() ? "ceilings measured in this run" : r.device + " — ceilings measured in this run");
  chart.set_axes({x_min, x_max, "arithmetic intensity (FLOP per ideal DRAM byte)"}, {y_min, y_max, "GFLOP/s"});
  const SvgStyle roof{"#444444", 2.5, "", ""};
  chart.line({{x_min, r.copy_gbs * x_min}, {ridge, r.peak_gflops}, {x_max, r.peak_gflops}}, roof, "measured ceilings");
  // The ceilings' names, along their lines.
  char buf[160];
  std::snprintf(buf, sizeof buf, "copy bandwidth %s GB/s", with_commas(r.copy_gbs).c_str());
  const double sx = x_min * 1.06;  // on the slope, at its left end, away from the kernels' points
  const double angle = std::atan2(chart.py(r.copy_gbs * ridge) - chart.py(r.copy_gbs * x_min),
                                  chart.px(ridge) - chart.px(x_min)) * 180 / 3.14159265358979;
  chart.text(sx, r.copy_gbs * sx * 1.35, buf, "#444444", angle);
  std::snprintf(buf, sizeof buf, "FP32 FMA peak %.1f TFLOP/s", r.peak_gflops / 1e3);
  chart.text(x_max / 1.15, r.peak_gflops * 1.2, buf, "#444444", 0, "end");
  // Points: the baseline first, then the kernels, cuDNN last (on top).
  const std::vector<std::pair<std::string, SvgStyle>> series = {
      {"naive baseline (grader)", {"#7f7f7f", 0, "", "square"}},
      {"other kernels", {"#9467bd", 0, "", "circle"}},
      {"reference kernels", {"#1f77b4", 0, "", "diamond"}},
      {"your kernels", {"#d62728", 0, "", "circle"}},
      {"cuDNN", {"#2ca02c", 0, "", "triangle"}},
  };
  // The lab's kernels are labelled by name; the baseline and cuDNN by their markers (legend).
  for (const auto& [name, style] : series)
    for (const auto& p : r.points)
      if (p.series == name)
        chart.point(p.intensity, p.gflops, style,
                    name == "naive baseline (grader)" || name == "cuDNN" ? "" : p.kernel, name);
  // Each column of points: its problem, once.
  std::set<std::pair<double, std::string>> columns;
  for (const auto& p : r.points) columns.insert({p.intensity, p.problem});
  for (const auto& [x, problem] : columns) chart.column_label(x, problem);
  return chart.str();
}

}  // namespace convlab
