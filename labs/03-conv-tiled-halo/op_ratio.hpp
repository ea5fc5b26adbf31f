/// @file op_ratio.hpp
/// @brief The arithmetic-to-global-memory ratio (OP/B) of tiled convolution
/// kernels, after PMPP §7.4 (seed article 003, §7.4): the numbers behind lab 03's
/// handout table, checked against the textbook by the test
/// `lab03.cpu.op_ratio.textbook_values`.
///
/// A block of a 2D tiled kernel loads its input tile once from global memory,
/// \f$T^2\f$ floats of 4 bytes, and computes an output tile of
/// \f$(T-2r)^2\f$ outputs, each \f$(2r+1)^2\f$ multiply-adds of 2 operations:
/// \f[ \text{OP/B} \;=\; \frac{(T-2r)^2\,(2r+1)^2 \cdot 2}{T^2 \cdot 4}. \f]
/// As \f$T\f$ grows the halo becomes negligible and the ratio approaches
/// \f$(2r+1)^2/2\f$. Like the textbook, the model counts the loads of one tile
/// and ignores ghost cells (which are not loaded at the image border), the
/// filter (in constant memory) and the output writes.
#pragma once

#include "lab03.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace convlab::lab03 {

/// OP/B of a 2D tiled kernel with an input tile of `in_tile` x `in_tile` and
/// radius `r`: 0 when the tile has no output (`in_tile` <= 2r).
constexpr double tiled_op_ratio(int in_tile, int r) {
  const int out_tile = in_tile - 2 * r;
  if (out_tile <= 0) return 0.0;
  const double taps = double(2 * r + 1) * (2 * r + 1);
  return double(out_tile) * out_tile * taps * 2.0 / (double(in_tile) * in_tile * 4.0);
}

/// OP/B of a 1D tiled kernel whose blocks compute `out_tile` outputs from
/// out_tile + 2r loaded inputs: out_tile (2r+1) 2 / ((out_tile + 2r) 4).
constexpr double tiled_op_ratio_1d(int out_tile, int r) {
  return out_tile <= 0 ? 0.0 : double(out_tile) * (2 * r + 1) * 2.0 / (double(out_tile + 2 * r) * 4.0);
}

/// The limit of tiled_op_ratio() for large tiles: (2r+1)^2 / 2.
constexpr double tiled_op_ratio_bound(int r) { return double(2 * r + 1) * (2 * r + 1) * 2.0 / 4.0; }

/// OP/B of the naive kernel (lab 01): every tap loads an input and a filter float.
inline constexpr double kNaiveOpRatio = 2.0 / 8.0;

/// OP/B with the filter in constant memory (lab 02): every tap loads an input float.
inline constexpr double kConstantFilterOpRatio = 2.0 / 4.0;

/// Rounds to two decimals, halves away from zero, as the textbook prints its
/// ratios (3.125 becomes 3.13; printf's "%.2f" would give 3.12).
inline double two_decimals(double x) { return std::round(x * 100.0) / 100.0; }

/// The fraction of conv2d_tiled_in()'s threads that compute an output:
/// out_tile_of_in(r)^2 / IN_TILE_DIM^2 (the rest only load the halo ring).
constexpr double tiled_in_computing_fraction(int r) {
  return double(out_tile_of_in(r)) * out_tile_of_in(r) / (double(IN_TILE_DIM) * IN_TILE_DIM);
}

/// The input elements each of conv2d_tiled_out()'s threads loads, on average:
/// in_tile_of_out(r)^2 / OUT_TILE_DIM^2.
constexpr double tiled_out_loads_per_thread(int r) {
  return double(in_tile_of_out(r)) * in_tile_of_out(r) / (double(OUT_TILE_DIM) * OUT_TILE_DIM);
}

/// The handout's table in Markdown: rows are input tile sides `8, 16, 32, 64`
/// and the bound, columns the filter sizes for r = 1, 2, 3, 4, 8. Printed by
/// `lab03_op_ratio_table` and pasted into labs/03-conv-tiled-halo/README.md; the
/// test `lab03.cpu.op_ratio.handout_tables_are_current` checks the copy.
inline std::string op_ratio_table_markdown() {
  constexpr int radii[] = {1, 2, 3, 4, 8};
  std::string s = "| input tile |";
  char buf[64];
  for (int r : radii) {
    std::snprintf(buf, sizeof buf, " %dx%d filter |", 2 * r + 1, 2 * r + 1);
    s += buf;
  }
  s += "\n|---|";
  for (int i = 0; i < int(sizeof radii / sizeof radii[0]); ++i) s += "---:|";
  s += "\n";
  for (int t : {8, 16, 32, 64}) {
    std::snprintf(buf, sizeof buf, "| %dx%d |", t, t);
    s += buf;
    for (int r : radii) {
      if (tiled_op_ratio(t, r) > 0)
        std::snprintf(buf, sizeof buf, " %.2f |", two_decimals(tiled_op_ratio(t, r)));
      else
        std::snprintf(buf, sizeof buf, " - |");
      s += buf;
    }
    s += "\n";
  }
  s += "| bound (2r+1)^2/2 |";
  for (int r : radii) {
    std::snprintf(buf, sizeof buf, " %.2f |", two_decimals(tiled_op_ratio_bound(r)));
    s += buf;
  }
  return s + "\n";
}

/// The handout's table of this lab's two 2D kernels, one row per radius 1 to
/// kMaxRadius2d: OP/B and thread use of conv2d_tiled_in() (input tile
/// IN_TILE_DIM) and conv2d_tiled_out() (input tile in_tile_of_out(r)), and the
/// bound. Printed by `lab03_op_ratio_table` after the first table; checked by
/// the same test.
inline std::string lab_kernels_table_markdown() {
  std::string s =
      "| r | filter | tiled_in: output tile | tiled_in: threads computing | tiled_in: OP/B "
      "| tiled_out: input tile | tiled_out: loads per thread | tiled_out: OP/B | bound |\n"
      "|---:|---|---|---:|---:|---|---:|---:|---:|\n";
  char buf[256];
  for (int r = 1; r <= kMaxRadius2d; ++r) {
    const int o = out_tile_of_in(r), i = in_tile_of_out(r);
    std::snprintf(buf, sizeof buf, "| %d | %dx%d | %dx%d | %.0f%% | %.2f | %dx%d | %.2f | %.2f | %.2f |\n", r,
                  2 * r + 1, 2 * r + 1, o, o, 100.0 * tiled_in_computing_fraction(r),
                  two_decimals(tiled_op_ratio(IN_TILE_DIM, r)), i, i, two_decimals(tiled_out_loads_per_thread(r)),
                  two_decimals(tiled_op_ratio(i, r)), two_decimals(tiled_op_ratio_bound(r)));
    s += buf;
  }
  return s;
}

}  // namespace convlab::lab03
