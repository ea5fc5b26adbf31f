// The comparator and its failure report. See convlab/compare.hpp.
#include "convlab/compare.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace convlab {

double gamma_m(int m) {
  const double mu = m * kFloatUnitRoundoff;
  if (m < 0 || mu >= 1.0) throw std::invalid_argument("gamma_m: m out of range");
  return mu / (1.0 - mu);
}

double tolerance_for(double magnitude, int terms) {
  return gamma_m(terms + 1) * magnitude + terms * double(FLT_MIN);
}

std::string region_of(int x, int y, const Grid& g) {
  const int r = g.radius;
  const bool left = x < r, right = x >= g.width - r;
  if (!g.is_2d()) {
    if (left && right) return "left and right border (n <= 2r)";
    if (left) return "left border";
    if (right) return "right border";
  } else {
    // A one-row (or one-column) image is still 2D: each of its outputs is within r of the
    // top and the bottom edge, and is named so.
    const bool top = y < r, bottom = y >= g.height - r;
    const char* v = top && bottom ? "top+bottom" : top ? "top" : bottom ? "bottom" : nullptr;
    const char* h = left && right ? "left+right" : left ? "left" : right ? "right" : nullptr;
    if (v && h) return std::string(v) + "-" + h + " corner";
    if (v) return std::string(v) + " border";
    if (h) return std::string(h) + " border";
  }
  // Interior: name the tile edge (the side of the tile it lies on) when the lab fixes a tile.
  // An output within r of its tile's left edge reads r inputs of the tile to its left: the
  // halo that a wrong halo load gets wrong.
  const auto side = [r](int pos, int tile, const char* low, const char* high) -> const char* {
    if (tile <= 0) return nullptr;
    const int band = std::max(r, 1), p = pos % tile;
    const bool lo = p < band, hi = p >= tile - band;
    return lo && hi ? "" : lo ? low : hi ? high : nullptr;  // "": a tile narrower than 2r
  };
  const char* sx = side(x, g.tile_x, "left", "right");
  const char* sy = g.is_2d() ? side(y, g.tile_y, "top", "bottom") : nullptr;
  const auto with = [](const char* s, const char* what) { return *s ? std::string(s) + " " + what : std::string(what); };
  if (sx && sy) {
    const std::string corner = *sy && *sx ? std::string(sy) + "-" + sx + " " : "";
    return corner + "tile corner (halo corner)";
  }
  if (sx) return with(sx, "tile edge");
  if (sy) return with(sy, "tile edge");
  return "interior";
}

Comparison compare(const std::vector<float>& got, const Golden& golden, const Grid& grid, std::size_t max_listed) {
  if (got.size() != golden.value.size())
    throw std::invalid_argument("compare: output has " + std::to_string(got.size()) + " elements, golden " +
                                std::to_string(golden.value.size()));
  if (std::size_t(grid.width) * std::size_t(std::max(grid.height, 1)) != got.size())
    throw std::invalid_argument("compare: grid does not match the output size");
  Comparison c;
  c.grid = grid;
  c.checked = got.size();
  c.wrong_mask.assign(got.size(), 0);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double tol = tolerance_for(golden.magnitude[i], golden.terms);
    const float v = got[i];
    double err, ratio;
    if (std::isnan(v) || std::isinf(v)) {
      err = std::numeric_limits<double>::infinity();
      ratio = err;
    } else {
      err = std::fabs(double(v) - golden.value[i]);
      ratio = err / tol;
      c.max_error = std::max(c.max_error, err);
    }
    c.max_error_ratio = std::max(c.max_error_ratio, ratio);
    if (ratio <= 1.0) continue;
    const std::uint32_t bits = [&] { std::uint32_t b; std::memcpy(&b, &v, 4); return b; }();
    const bool unwritten = bits == 0xFFFFFFFFu;  // the poison pattern
    const bool from_shared = bits == kUnwrittenSharedBits;
    ++c.wrong;
    c.unwritten += unwritten;
    c.from_unwritten_shared += from_shared;
    c.wrong_mask[i] = unwritten ? 2 : 1;  // 2: never written (the error map draws it yellow)
    const int x = static_cast<int>(i % std::size_t(grid.width));
    const int y = static_cast<int>(i / std::size_t(grid.width));
    const std::string region = region_of(x, y, grid);
    ++c.wrong_by_region[region];
    if (c.first.size() < max_listed)
      c.first.push_back({i, x, y, v, golden.value[i], tol, region, unwritten, from_shared});
  }
  return c;
}

std::string error_map(const std::vector<unsigned char>& mask, const Grid& g, int cols, int rows) {
  const int h = std::max(g.height, 1);
  cols = std::min(cols, g.width);
  rows = std::min(rows, h);
  std::vector<std::string> lines(rows, std::string(cols, '.'));
  for (std::size_t i = 0; i < mask.size(); ++i) {
    if (!mask[i]) continue;
    const long long x = static_cast<long long>(i % g.width), y = static_cast<long long>(i / g.width);
    lines[y * rows / h][x * cols / g.width] = '#';
  }
  std::ostringstream os;
  const double cw = double(g.width) / cols, ch = double(h) / rows;
  char buf[160];
  if (!g.is_2d())
    std::snprintf(buf, sizeof buf, "map of wrong outputs ('#' = some wrong, '.' = all right), one cell = %.4g elements, x = 0 at the left:\n", cw);
  else
    std::snprintf(buf, sizeof buf, "map of wrong outputs ('#' = some wrong, '.' = all right), one cell = %.4g x %.4g pixels, (0,0) top left:\n", cw, ch);
  os << buf;
  for (const auto& l : lines) os << "  |" << l << "|\n";
  return os.str();
}

std::string Comparison::report() const {
  std::ostringstream os;
  char buf[320];
  const bool one_d = !grid.is_2d();
  if (unwritten > 0)
    std::snprintf(buf, sizeof buf, "%zu of %zu outputs are wrong (%zu never written: still the NaN poison).\n", wrong,
                  checked, unwritten);
  else
    std::snprintf(buf, sizeof buf, "%zu of %zu outputs are wrong.\n", wrong, checked);
  os << buf;
  if (max_error > 0) {
    std::snprintf(buf, sizeof buf, "largest error among finite outputs: %.3g (%.3g times its tolerance)\n", max_error,
                  std::isinf(max_error_ratio) ? 0.0 : max_error_ratio);
    if (!std::isinf(max_error_ratio)) os << buf;
  }
  os << "wrong outputs by region:";
  for (const auto& [region, n] : wrong_by_region) os << "  " << region << ": " << n << ";";
  os << "\nfirst mismatches:\n";
  for (const auto& m : first) {
    if (one_d)
      std::snprintf(buf, sizeof buf, "  out[%d] (%s): ", m.x, m.region.c_str());
    else
      std::snprintf(buf, sizeof buf, "  out(x=%d, y=%d) (%s): ", m.x, m.y, m.region.c_str());
    os << buf;
    if (m.unwritten)
      std::snprintf(buf, sizeof buf, "never written (NaN poison), expected %.7g\n", m.expected);
    else if (m.from_unwritten_shared)
      std::snprintf(buf, sizeof buf,
                    "got NaN, expected %.7g: computed from shared memory that no thread had written yet\n",
                    m.expected);
    else if (std::isnan(m.got))
      std::snprintf(buf, sizeof buf,
                    "got NaN, expected %.7g: the kernel read outside the input, or memory it never wrote (both hold NaN)\n",
                    m.expected);
    else
      std::snprintf(buf, sizeof buf, "got %.7g, expected %.7g, error %.3g > tolerance %.3g\n", double(m.got),
                    m.expected, std::fabs(double(m.got) - m.expected), m.tolerance);
    os << buf;
  }
  if (grid.width * std::size_t(std::max(grid.height, 1)) > 1) os << error_map(wrong_mask, grid);
  return os.str();
}

}  // namespace convlab
