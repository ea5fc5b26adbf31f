// What a failed convolution check suggests. See convlab/hints.hpp.
#include "convlab/hints.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

namespace convlab {
namespace {

// The four sides, as bits; the same bits name the sides of a tile.
enum Side : unsigned { kLeft = 1, kRight = 2, kTop = 4, kBottom = 8 };

std::string side_names(unsigned sides) {
  std::vector<std::string> names;
  if (sides & kLeft) names.push_back("left");
  if (sides & kRight) names.push_back("right");
  if (sides & kTop) names.push_back("top");
  if (sides & kBottom) names.push_back("bottom");
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

int popcount(unsigned v) {
  int n = 0;
  for (; v; v &= v - 1) ++n;
  return n;
}

// Where the wrong outputs lie: the image sides (or tile sides) each one is within r of.
struct Layout {
  std::vector<unsigned> border;  // per wrong output next to an image edge: the sides it is near
  std::vector<unsigned> tile;    // per wrong output inside the image next to a tile edge: those sides
  std::size_t interior = 0;      // wrong outputs next to neither
};

Layout layout_of(const Comparison& c) {
  Layout l;
  const Grid& g = c.grid;
  const int r = g.radius, band = std::max(r, 1);
  const bool two_d = g.is_2d();
  for (std::size_t i = 0; i < c.wrong_mask.size(); ++i) {
    if (!c.wrong_mask[i]) continue;
    const int x = static_cast<int>(i % std::size_t(g.width)), y = static_cast<int>(i / std::size_t(g.width));
    unsigned b = 0;
    if (x < r) b |= kLeft;
    if (x >= g.width - r) b |= kRight;
    if (two_d && y < r) b |= kTop;
    if (two_d && y >= g.height - r) b |= kBottom;
    if (b) {
      l.border.push_back(b);
      continue;
    }
    unsigned t = 0;
    if (g.tile_x > 0) {
      const int p = x % g.tile_x;
      if (p < band) t |= kLeft;
      if (p >= g.tile_x - band) t |= kRight;
    }
    if (two_d && g.tile_y > 0) {
      const int p = y % g.tile_y;
      if (p < band) t |= kTop;
      if (p >= g.tile_y - band) t |= kBottom;
    }
    if (t) l.tile.push_back(t);
    else ++l.interior;
  }
  return l;
}

// The sides that explain every wrong output: the union of the smallest sets of sides such
// that each output lies next to one of them. A bug at the bottom edge also makes the two
// bottom corners wrong; the smallest explanation is "bottom", not "left, right and bottom".
// Where two explanations are equally small (a one-row image is next to its top and its
// bottom everywhere), both are named.
unsigned explaining_sides(const std::vector<unsigned>& near) {
  if (near.empty()) return 0;
  std::vector<char> seen(16, 0);
  for (unsigned s : near) seen[s] = 1;
  for (int size = 1; size <= 4; ++size) {
    unsigned all = 0;
    for (unsigned set = 1; set < 16; ++set) {
      if (popcount(set) != size) continue;
      bool covers = true;
      for (unsigned s = 1; s < 16 && covers; ++s) covers = !seen[s] || (s & set);
      if (covers) all |= set;
    }
    if (all) return all;
  }
  return 0;
}

// A convolution computed some other way, at one output: the hints compare the wrong
// outputs with it. `flip`: the filter reversed. `transpose`: the buffer read as an image of
// height x width. `row_limit`/`col_limit`: rows (columns) from there on treated as ghost cells.
struct Variant {
  bool flip = false;
  bool transpose = false;
  int row_limit = -1;
  int col_limit = -1;
};

// The variant's output at linear index `k`, and its sum |x f| for the tolerance.
void variant_at(const HintProblem& p, const Variant& v, std::size_t k, double& value, double& magnitude) {
  const std::vector<float>& in = *p.input;
  const std::vector<float>& f = *p.filter;
  const int r = p.radius, fw = 2 * r + 1;
  value = magnitude = 0;
  if (!p.two_d) {
    const long long n = static_cast<long long>(in.size()), i = static_cast<long long>(k);
    for (int j = -r; j <= r; ++j) {
      const long long at = i + j;
      if (at < 0 || at >= n) continue;
      const double t = double(in[at]) * double(f[v.flip ? r - j : j + r]);
      value += t;
      magnitude += std::fabs(t);
    }
    return;
  }
  // The image as the variant sees it.
  const int w = v.transpose ? p.height : p.width, h = v.transpose ? p.width : p.height;
  const int x = static_cast<int>(k % std::size_t(w)), y = static_cast<int>(k / std::size_t(w));
  const int rows = v.row_limit >= 0 ? std::min(h, v.row_limit) : h;
  const int cols = v.col_limit >= 0 ? std::min(w, v.col_limit) : w;
  for (int i = -r; i <= r; ++i) {
    const int yy = y + i;
    if (yy < 0 || yy >= rows) continue;
    for (int j = -r; j <= r; ++j) {
      const int xx = x + j;
      if (xx < 0 || xx >= cols) continue;
      const int fi = v.flip ? r - i : i + r, fj = v.flip ? r - j : j + r;
      const double t = double(in[std::size_t(yy) * w + xx]) * double(f[std::size_t(fi) * fw + fj]);
      value += t;
      magnitude += std::fabs(t);
    }
  }
}

// True when every listed wrong output equals the variant's result, within the tolerance.
bool matches(const Comparison& c, const HintProblem& p, const Variant& v) {
  if (!p.input || !p.filter || !p.got || c.first.empty()) return false;
  const int r = p.radius;
  const int terms = p.two_d ? (2 * r + 1) * (2 * r + 1) : 2 * r + 1;
  for (const auto& m : c.first) {
    if (m.index >= p.got->size()) return false;
    const float got = (*p.got)[m.index];
    if (!std::isfinite(got)) return false;
    double value, magnitude;
    variant_at(p, v, m.index, value, magnitude);
    if (std::fabs(double(got) - value) > tolerance_for(magnitude, terms)) return false;
  }
  return true;
}

// Wrong outputs that hold an ordinary NaN: the kernel read outside the input (the guard
// zones around it hold NaN), or memory it never wrote.
std::size_t read_outside_count(const Comparison& c, const HintProblem& p) {
  if (!p.got) return 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < c.wrong_mask.size() && i < p.got->size(); ++i)
    if (c.wrong_mask[i] == 1 && std::isnan((*p.got)[i])) ++n;
  return n - std::min(n, c.from_unwritten_shared);
}

// The never-written outputs, when they fill whole columns from some x on, or whole rows from
// some y on (a grid that rounds the block count down): that edge. Otherwise "".
std::string unwritten_edge(const Comparison& c) {
  const Grid& g = c.grid;
  const int w = g.width, h = std::max(g.height, 1);
  int x0 = w, y0 = h;
  for (std::size_t i = 0; i < c.wrong_mask.size(); ++i)
    if (c.wrong_mask[i] == 2) {
      x0 = std::min(x0, static_cast<int>(i % std::size_t(w)));
      y0 = std::min(y0, static_cast<int>(i / std::size_t(w)));
    }
  // Every output right of x0 or below y0 unwritten, and nothing else?
  const auto region_count = [&](int cx, int cy) {
    const std::size_t right = std::size_t(w - cx) * h, below = std::size_t(h - cy) * w;
    return right + below - std::size_t(w - cx) * (h - cy);
  };
  const auto fits = [&](int cx, int cy) {
    if (region_count(cx, cy) != c.unwritten) return false;
    for (std::size_t i = 0; i < c.wrong_mask.size(); ++i) {
      const int x = static_cast<int>(i % std::size_t(w)), y = static_cast<int>(i / std::size_t(w));
      if ((x >= cx || y >= cy) != (c.wrong_mask[i] == 2)) return false;
    }
    return true;
  };
  if (!g.is_2d()) return x0 < w && fits(x0, h) ? "every element from out[" + std::to_string(x0) + "] to the end" : "";
  if (x0 < w && fits(x0, h)) return "every column from x = " + std::to_string(x0) + " to the right edge";
  if (y0 < h && fits(w, y0)) return "every row from y = " + std::to_string(y0) + " to the bottom edge";
  if (x0 < w && y0 < h && fits(x0, y0))
    return "the columns from x = " + std::to_string(x0) + " and the rows from y = " + std::to_string(y0) + " on";
  return "";
}

// What counts as outside, per side, in the student's own terms.
std::string outside_test(unsigned sides, bool two_d) {
  std::vector<std::string> t;
  if (!two_d) {
    if (sides & kLeft) t.push_back("i + j < 0");
    if (sides & kRight) t.push_back("i + j >= n");
  } else {
    if (sides & kLeft) t.push_back("x + j < 0");
    if (sides & kRight) t.push_back("x + j >= width");
    if (sides & kTop) t.push_back("y + i < 0");
    if (sides & kBottom) t.push_back("y + i >= height");
  }
  std::string out;
  for (std::size_t i = 0; i < t.size(); ++i) out += (i == 0 ? "" : i + 1 == t.size() ? " or " : ", ") + t[i];
  return out;
}

std::string plural(unsigned sides, const std::string& one, const std::string& many) {
  return popcount(sides) == 1 ? one : many;
}

// Step 3 of conv_hints: a recognisable wrong computation, the wrong outputs equal to its result (the
// filter reversed, the image read transposed, rows or columns cut off at the other dimension).
// "" when none of them matches.
std::string variant_hint(const Comparison& c, const HintProblem& p) {
  if (p.radius > 0 && c.unwritten == 0 && matches(c, p, Variant{true}))
    return std::string("hint: these outputs equal the result with the filter reversed (true convolution). convlab "
                       "computes cross-correlation: ") +
           (p.two_d ? "out(x, y) = sum_i sum_j in(x+j, y+i) * f[i+r][j+r]"
                    : "out[i] = sum_j in[i+j] * f[j+r]") +
           " — the filter is not flipped.\n";
  const int w = p.width, h = p.height;
  const std::string wh = std::to_string(w) + " x " + std::to_string(h);
  if (p.two_d && w != h && c.unwritten == 0) {
    Variant t;
    t.transpose = true;
    if (matches(c, p, t))
      return "hint: these outputs equal the convolution of the image read as " + std::to_string(h) + " x " +
             std::to_string(w) + " instead of " + wh +
             ": width and height are swapped somewhere. The image is row-major: pixel (x, y) is in[y * width + x], "
             "x < width, y < height.\n";
    Variant rows;
    rows.row_limit = w;
    if (w < h && matches(c, p, rows))
      return "hint: these outputs equal the result with every row from y = " + std::to_string(w) +
             " on taken as ghost cells: the test on rows compares with the width (" + std::to_string(w) +
             ") where the height (" + std::to_string(h) + ") is meant — a row y + i is inside when 0 <= y + i < height.\n";
    Variant cols;
    cols.col_limit = h;
    if (h < w && matches(c, p, cols))
      return "hint: these outputs equal the result with every column from x = " + std::to_string(h) +
             " on taken as ghost cells: the test on columns compares with the height (" + std::to_string(h) +
             ") where the width (" + std::to_string(w) + ") is meant — a column x + j is inside when 0 <= x + j < width.\n";
  }
  return "";
}

// Step 4 of conv_hints: outputs the kernel never wrote (c.unwritten > 0); where they are says what the
// grid misses.
std::string unwritten_hint(const Comparison& c) {
  const std::string edge = unwritten_edge(c);
  if (!edge.empty())
    return "hint: " + std::to_string(c.unwritten) + " outputs were never written: " + edge +
           " — does the grid cover every output? Round the block count up: (size + block - 1) / block.\n";
  return "hint: some outputs were never written — does the grid cover every output (round the block count "
         "up), and does every thread that owns an output reach its store?\n";
}

// Step 5 of conv_hints: wrong outputs next to tile edges (l.tile not empty): the halo. `what`: image or
// array.
std::string tile_hint(const Layout& l, const std::string& what) {
  const unsigned edges = explaining_sides(l.tile);
  const std::string named = edges ? " (the " + side_names(edges) + plural(edges, " edge", " edges") + " of each tile" +
                                        std::string(l.border.empty() ? "" : ", and the " + what + "'s borders") + ")"
                                  : std::string(l.border.empty() ? "" : " (and the " + what + "'s borders)");
  return "hint: the wrong outputs lie next to tile edges" + named +
         ", where a window reaches outside its tile — check the halo: the taps that fall outside the tile, the "
         "index they read, and the test that decides whether a tap is inside the tile.\n";
}

// Rows below the image read because the row test compares with the width (or columns past
// the right edge because the column test compares with the height): name the swap.
// With r as large as the image its top and bottom explain the same outputs, and which side the
// reads went past cannot be told: both tests are named, and the swap the dimensions suggest.
// "" when the wrong `sides` and the image's shape do not point at a swap.
std::string swapped_test_hint(const HintProblem& p, unsigned sides, bool read_outside) {
  const int w = p.width, h = p.height;
  if (p.two_d && read_outside && sides == (kTop | kBottom) && w > h)
    return "hint: only outputs within r of the top and bottom edges are wrong (here that is every output), and "
           "they read outside the input: a row y + i is inside when 0 <= y + i < height — check both tests; this "
           "image is wider (" + std::to_string(w) + ") than tall (" + std::to_string(h) +
           "): does the test on rows compare with the width?\n";
  if (p.two_d && read_outside && sides == kBottom && w > h)
    return "hint: only outputs within r of the bottom edge are wrong, and they read outside the input: rows past "
           "the bottom edge were read as if inside. A row y + i is inside when 0 <= y + i < height — this image is "
           "wider (" + std::to_string(w) + ") than tall (" + std::to_string(h) +
           "): does the test on rows compare with the width?\n";
  if (p.two_d && read_outside && sides == kRight && h > w)
    return "hint: only outputs within r of the right edge are wrong, and they read outside the input: columns past "
           "the right edge were read as if inside. A column x + j is inside when 0 <= x + j < width — this image is "
           "taller (" + std::to_string(h) + ") than wide (" + std::to_string(w) +
           "): does the test on columns compare with the height?\n";
  return "";
}

// A side that every output of the image lies next to (a one-row image's top and bottom, an image no
// wider than r's left and right) tells nothing: the sides named are those that set the wrong outputs
// apart, and where they do not, no side is named (a 37 x 1 image wrong at its right end is wrong
// on the right, not "at the top and bottom"). `sides`: those that explain l.border; 0: none to name.
unsigned telling_sides(const Layout& l, const HintProblem& p, unsigned sides) {
  unsigned everywhere = 0;
  if (p.two_d && p.height <= p.radius) everywhere |= kTop | kBottom;
  if (p.width <= p.radius) everywhere |= kLeft | kRight;
  if (!everywhere) return sides;
  std::vector<unsigned> telling;
  for (unsigned b : l.border) {
    if (!(b & ~everywhere)) return 0;
    telling.push_back(b & ~everywhere);
  }
  return explaining_sides(telling);
}

// Steps 5 and 6 of conv_hints: which edges the wrong outputs lie next to, tile edges or the image's
// own. "" when some lie next to neither, or no side tells them apart.
std::string edge_hint(const Comparison& c, const HintProblem& p) {
  const std::string what = p.two_d ? "image" : "array";
  const Layout l = layout_of(c);
  if (l.interior > 0) return "";
  const bool read_outside = read_outside_count(c, p) > 0;
  if (!l.tile.empty()) return tile_hint(l, what);
  const unsigned sides = explaining_sides(l.border);
  if (!sides) return "";
  const std::string swapped = swapped_test_hint(p, sides, read_outside);
  if (!swapped.empty()) return swapped;
  const unsigned named = telling_sides(l, p, sides);
  if (!named) return "";
  const std::string there = side_names(named) + plural(named, " edge", " edges");
  if (read_outside)
    return "hint: only outputs within r of the " + there + " are wrong, and they read outside the input there — "
           "skip the taps outside the " + what + " (" + outside_test(named, p.two_d) + "): they are ghost cells and "
           "count as 0.\n";
  return "hint: only outputs within r of the " + there + " are wrong — check the ghost cells there: inputs outside "
         "the " + what + " (" + outside_test(named, p.two_d) + ") count as 0.\n";
}

}  // namespace

std::string wrong_sides(const Comparison& c) { return side_names(explaining_sides(layout_of(c).border)); }

std::string wrong_tile_edges(const Comparison& c) { return side_names(explaining_sides(layout_of(c).tile)); }

std::string conv_hints(const Comparison& c, const HintProblem& p) {
  if (c.ok()) return "";
  // 1. Nothing at all.
  if (c.unwritten == c.checked)
    return "hint: no output was written at all — is the kernel still a TODO, is it launched with a non-empty grid, "
           "does it store to the output?\n";
  // 2. The CPU backend saw reads of shared memory that no thread had written: that is the bug,
  //    whatever pattern the wrong outputs make.
  if (c.from_unwritten_shared > 0)
    return "hint: " + std::to_string(c.from_unwritten_shared) +
           " outputs were computed from shared memory that no thread had written yet (the CPU backend marks it "
           "with a NaN of its own; a GPU reads stale data there) — is there a __syncthreads() between the stores "
           "that fill the tile and the reads of other threads' elements, and does every element of the tile get "
           "loaded?\n";
  // 3. A recognisable wrong computation: the wrong outputs equal its result.
  const std::string variant = variant_hint(c, p);
  if (!variant.empty()) return variant;
  // 4. Outputs the kernel never wrote: where they are says what the grid misses.
  if (c.unwritten > 0) return unwritten_hint(c);
  // 5 and 6: which edges the wrong outputs lie next to.
  return edge_hint(c, p);
}

}  // namespace convlab
