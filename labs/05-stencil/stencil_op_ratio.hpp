/// @file stencil_op_ratio.hpp
/// @brief The arithmetic-to-global-memory ratio (OP/B) of lab 05's stencil
/// kernels, counted the way lab 03 counts its tiles (op_ratio.hpp): operations
/// of the outputs a block computes over the bytes it loads from global memory.
/// The table of the handout (labs/05-stencil/README.md, section "The
/// arithmetic-to-memory ratio of a stencil") is printed by
/// stencil_op_ratio_table_markdown(); the test `docs.handouts.lab05.stencil_op_ratio_table`
/// checks the copy in the handout.
///
/// An update of the 3D seven-point stencil is 7 multiplications and 6
/// additions, 13 operations (the 2D five-point one 5 + 4 = 9). A strategy-1
/// tile of \f$T^3\f$ loaded cells (one float each) gives \f$(T-2)^3\f$ outputs:
/// \f[ \text{OP/B} = \frac{13\,(T-2)^3}{4\,T^3} \;\xrightarrow{\;T \to \infty\;}\; \frac{13}{4}. \f]
/// A block that walks up z (coarsened, or register-tiled: both load each
/// plane of \f$T_x \times T_y\f$ cells once) computes \f$(T_x-2)(T_y-2)\f$
/// outputs per loaded plane: \f$13\,(T_x-2)(T_y-2)/(4\,T_x T_y)\f$ when one block walks
/// the whole z axis, \f$Z/(Z+2)\f$ of it when each block computes \f$Z\f$ planes. Like lab
/// 03's model it counts loads only, every load as DRAM traffic, and ignores
/// the output writes and the ghost cells that are not loaded at the grid's edge.
#pragma once

#include <cstdio>
#include <string>

namespace convlab::lab05 {

/// Operations of one update of the 3D seven-point stencil: 7 multiplications, 6 additions.
inline constexpr int kOps3d = 13;
/// Operations of one update of the 2D five-point stencil: 5 multiplications, 4 additions.
inline constexpr int kOps2d = 9;

/// The naive sweep (one thread per cell, every neighbour loaded from global
/// memory): `ops` operations for `points` loads of 4 bytes.
constexpr double naive_stencil_op_ratio(int ops, int points) { return double(ops) / (4.0 * points); }

/// A 3D strategy-1 tile of `in_tile`^3 loaded cells and (in_tile-2)^3 outputs;
/// 0 when the tile has no output (in_tile <= 2).
constexpr double tiled3d_stencil_op_ratio(int in_tile) {
  const int o = in_tile - 2;
  return o <= 0 ? 0.0 : double(kOps3d) * o * o * o / (4.0 * in_tile * in_tile * in_tile);
}

/// A 2D strategy-1 tile of `in_tile`^2 loaded cells and (in_tile-2)^2 outputs.
constexpr double tiled2d_stencil_op_ratio(int in_tile) {
  const int o = in_tile - 2;
  return o <= 0 ? 0.0 : double(kOps2d) * o * o / (4.0 * in_tile * in_tile);
}

/// A block walking up z with input planes of `tx` x `ty` cells (coarsened or
/// register-tiled): (tx-2)(ty-2) outputs per plane loaded.
constexpr double plane_stencil_op_ratio(int tx, int ty) {
  return (tx <= 2 || ty <= 2) ? 0.0 : double(kOps3d) * (tx - 2) * (ty - 2) / (4.0 * tx * ty);
}

/// A block walking up z that computes `z` output planes and so loads `z` + 2
/// planes (the one below its first output plane and the one above its last are
/// loaded again by its neighbours in z), each of `loaded` cells, for `outputs`
/// outputs per plane. plane_stencil_op_ratio() is its limit for z -> infinity.
constexpr double zwalk_stencil_op_ratio(int outputs, int loaded, int z) {
  return (outputs <= 0 || loaded <= 0 || z <= 0) ? 0.0
                                                 : double(kOps3d) * outputs * z / (4.0 * loaded * (z + 2.0));
}

/// Temporal blocking in 2D: a `tile` x `tile` block loaded once, advanced
/// `steps` steps, writing the inner (tile - 2 steps)^2 cells; the operations
/// counted are those of the useful outputs only (the redundant updates of the
/// tile's rim are extra work, not extra value).
constexpr double temporal2d_stencil_op_ratio(int tile, int steps) {
  const int o = tile - 2 * steps;
  return o <= 0 ? 0.0 : double(kOps2d) * steps * o * o / (4.0 * tile * tile);
}

/// The handout's table: one row per design, its formula and its OP/B.
inline std::string stencil_op_ratio_table_markdown() {
  struct Row {
    const char* design;
    const char* formula;
    double value;
  };
  const Row rows[] = {
      {"3D naive sweep: 7 loads per update", "13 / (7 · 4)", naive_stencil_op_ratio(kOps3d, 7)},
      {"3D tiled, 8³ input tile (`stencil3d_tiled`)", "13 · 6³ / (4 · 8³)", tiled3d_stencil_op_ratio(8)},
      {"3D tiled, 10³ input tile (1000 threads)", "13 · 8³ / (4 · 10³)", tiled3d_stencil_op_ratio(10)},
      {"3D z walk, 32 × 16 planes, 32 output planes per block (`stencil3d_coarsened`)",
       "13 · 30 · 14 · 32 / (4 · 32 · 16 · 34)", zwalk_stencil_op_ratio(30 * 14, 32 * 16, 32)},
      {"3D z walk, 64 × 16 outputs and their halo ring (1184 cells) per plane, 32 output planes per block "
       "(`stencil3d_register`)",
       "13 · 64 · 16 · 32 / (4 · 1184 · 34)", zwalk_stencil_op_ratio(64 * 16, 64 * 16 + 2 * (64 + 16), 32)},
      {"3D z walk, 32 × 16 planes, one block for the whole z axis", "13 · 30 · 14 / (4 · 32 · 16)",
       plane_stencil_op_ratio(32, 16)},
      {"3D z walk, 64 × 64 planes, one block for the whole z axis", "13 · 62² / (4 · 64²)",
       plane_stencil_op_ratio(64, 64)},
      {"bound of any 3D tile", "13 / 4", kOps3d / 4.0},
      {"2D naive sweep: 5 loads per update", "9 / (5 · 4)", naive_stencil_op_ratio(kOps2d, 5)},
      {"2D tiled, 18² input tile (`heat2d_tiled`)", "9 · 16² / (4 · 18²)", tiled2d_stencil_op_ratio(18)},
      {"2D temporal blocking, 64² tile, 4 steps (`heat2d_temporal`)", "9 · 4 · 56² / (4 · 64²)",
       temporal2d_stencil_op_ratio(64, 4)},
  };
  std::string s = "| design | OP/B | value |\n|---|---|---:|\n";
  char buf[256];
  for (const Row& r : rows) {
    // Two decimals, halves away from zero, as lab 03's table (op_ratio.hpp's two_decimals()).
    const double v = double(static_cast<long long>(r.value * 100.0 + 0.5)) / 100.0;
    std::snprintf(buf, sizeof buf, "| %s | %s | %.2f |\n", r.design, r.formula, v);
    s += buf;
  }
  return s;
}

}  // namespace convlab::lab05
