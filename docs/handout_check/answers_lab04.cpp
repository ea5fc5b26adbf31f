// Lab 04's worked numbers: the share of cached taps (counted tap by tap), the
// separable and register-tiling counts, the roofline floors of the handout,
// and the OP/B column of the summary of labs 1 to 4 (op_ratio.hpp).
#include "answers.hpp"
#include "gpu_model.hpp"

#include "lab04.hpp"
#include "op_ratio.hpp"

#include <algorithm>
#include <set>
#include <cstdio>
#include <string>
#include <vector>

namespace convlab::handout {

namespace {

// Of all taps of the outputs of a T x T tile (T in 1D), those that fall
// outside the tile (served by the caches in PMPP's figure 7.15 design), and all.
struct Taps {
  long long outside, all;
};
Taps cached_taps(int tile, int r, int dims) {
  long long in = 0, all = 0;
  if (dims == 1) {
    for (int t = 0; t < tile; ++t)
      for (int j = -r; j <= r; ++j) {
        ++all;
        in += t + j >= 0 && t + j < tile;
      }
  } else {
    for (int ty = 0; ty < tile; ++ty)
      for (int tx = 0; tx < tile; ++tx)
        for (int i = -r; i <= r; ++i)
          for (int j = -r; j <= r; ++j) {
            ++all;
            in += ty + i >= 0 && ty + i < tile && tx + j >= 0 && tx + j < tile;
          }
  }
  return {all - in, all};
}

// The share in percent with one decimal, rounded from the exact fraction
// (halves up): 1 - 0.85^2 = 27.75 % prints as 27.8, not as the 27.7 that
// the same value computed in floating point would give.
std::string cached_percent(int tile, int r, int dims) {
  const Taps t = cached_taps(tile, r, dims);
  const long long tenths = (2000 * t.outside + t.all) / (2 * t.all);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
}

// Shared-memory float4 loads of one thread of the register-tiled design: K + 2r
// input rows of 4 + 2r floats each, read as whole float4s.
int register_tile_loads(int k, int r) { return (k + 2 * r) * ((4 + 2 * r + 3) / 4); }

// The handout's H100 figures (the Results run of lab04_bench): copy bandwidth
// and FMA peak measured in the same run.
constexpr double kCopyBytesPerS = 2865e9, kFmaFlopPerS = 59.6e12;
constexpr double kPixels = 8192.0 * 8192.0;

double floor_direct_ms(int r) {
  return 1e3 * std::max(8 * kPixels / kCopyBytesPerS, 2 * kPixels * (2 * r + 1) * (2 * r + 1) / kFmaFlopPerS);
}
double floor_separable_ms() { return 1e3 * 16 * kPixels / kCopyBytesPerS; }

// conv2d_fast as `nvcc -Xptxas -v` reported it (the table of "The road to the
// roofline"): 256 threads, registers and KB of static shared memory.
int kb(double k) { return static_cast<int>(k * 1024 + 0.5); }

// A column pass that stages a tile of t, 32 floats wide, and lets the 32 lanes of a
// warp take 32 consecutive rows of one column (the transposed mapping): the bank
// passes of one shared load with a row stride of `stride` words, and the 128-byte
// lines one global load of the warp touches when the lanes read rows of a
// `width`-float image.
int column_pass_bank_passes(int stride) {
  std::vector<long long> w;
  for (int lane = 0; lane < 32; ++lane) w.push_back(1LL * lane * stride);
  return bank_passes(w);
}
int column_pass_lines(long long width) {
  std::set<long long> lines;
  for (int lane = 0; lane < 32; ++lane) lines.insert(lane * width * 4 / 128);
  return int(lines.size());
}

}  // namespace

std::string lab04_cached_taps_table() {
  const int radii[] = {1, 2, 3, 4, 7};
  std::string s = "| tile \\f$T \\times T\\f$ |";
  char buf[64];
  for (int r : radii) {
    std::snprintf(buf, sizeof buf, " r = %d |", r);
    s += buf;
  }
  s += "\n| --- |";
  for (int i = 0; i < 5; ++i) s += " ---: |";
  s += "\n";
  for (int t : {8, 16, 32}) {
    std::snprintf(buf, sizeof buf, "| %d × %d |", t, t);
    s += buf;
    for (int r : radii) s += " " + cached_percent(t, r, 2) + " % |";
    s += "\n";
  }
  return s;
}

std::vector<Answer> lab04_answers() {
  using namespace convlab::lab03;
  std::vector<Answer> a;
  // Background, "How many taps go to the caches": the 1D shares.
  a.push_back({"lab04.cached_1d_r1", cached_percent(lab04::kTile1d, 1, 1)});
  a.push_back({"lab04.cached_1d_r8", cached_percent(lab04::kTile1d, 8, 1)});

  // The summary of labs 1 to 4: OP/B at r = 3 (the textbook's count of global loads).
  a.push_back({"lab04.sum_naive", fixed(kNaiveOpRatio, 2)});
  a.push_back({"lab04.sum_constant", fixed(kConstantFilterOpRatio, 2)});
  a.push_back({"lab04.sum_tiled_in", fixed(two_decimals(tiled_op_ratio(IN_TILE_DIM, 3)), 2)});
  a.push_back({"lab04.sum_tiled_out", fixed(two_decimals(tiled_op_ratio(in_tile_of_out(3), 3)), 2)});
  a.push_back({"lab04.sum_cached", fixed(tiled_op_ratio_bound(3), 2)});
  // Separable: 2 (2r+1) multiply-adds per output over 16 bytes (two passes, each a read and a write).
  a.push_back({"lab04.sum_separable", fixed(2.0 * 2 * (2 * 3 + 1) / 16.0, 2)});
  // Register tiling: the direct sum over the ideal 8 bytes per output.
  a.push_back({"lab04.sum_register", fixed(2.0 * 49 / 8.0, 2)});

  // Question 1: cached taps of a 32 x 32 tile at r = 5, and of a 1D tile at r = 8.
  a.push_back({"lab04.cached_2d_32_r5", cached_percent(32, 5, 2)});

  // Question 2: separable savings.
  a.push_back({"lab04.sep_saving_r3", fixed(49.0 / 14.0, 1)});
  a.push_back({"lab04.sep_saving_r5", fixed(121.0 / 22.0, 1)});

  // Question 3: the radius from which the separable kernel beats an ideal direct one.
  const double ratio = 8 * kFmaFlopPerS / kCopyBytesPerS;
  int r = 0;
  while ((2 * r + 1) * (2 * r + 1) <= ratio) ++r;
  a.push_back({"lab04.crossover_ratio", fixed(ratio, 0)});
  a.push_back({"lab04.crossover_r", std::to_string(r)});

  // Question 4: one thread's register tile, 4 columns x K = 4 rows, r = 2.
  const int ffma = 4 * 4 * 25, loads = register_tile_loads(4, 2);
  a.push_back({"lab04.regtile_ffma_r2", std::to_string(ffma)});
  a.push_back({"lab04.regtile_loads_r2", std::to_string(loads)});
  a.push_back({"lab04.regtile_ratio_r2", fixed(double(ffma) / loads, 0)});
  a.push_back({"lab04.regtile_loads_r7", std::to_string(register_tile_loads(4, 7))});

  // Question 5: the roofline floor of conv2d_fast at r = 3 and the share the
  // measured 0.2085 ms reaches.
  a.push_back({"lab04.floor_mem_ms", fixed(1e3 * 8 * kPixels / kCopyBytesPerS, 3)});
  a.push_back({"lab04.floor_fma_r3_ms", fixed(1e3 * 2 * kPixels * 49 / kFmaFlopPerS, 3)});
  a.push_back({"lab04.floor_r3_share", fixed(100.0 * floor_direct_ms(3) / 0.2085, 1)});

  // Question 6: rows of an 8191-wide image that start on 16 bytes (base aligned).
  int aligned = 0;
  for (int y = 0; y < 4096; ++y) aligned += (long long)y * 8191 % 4 == 0;
  a.push_back({"lab04.aligned_rows_pct", fixed(100.0 * aligned / 4096, 0)});

  // Question 7 (predict, then measure): separable against direct at r = 8.
  a.push_back({"lab04.floor_sep_ms", fixed(floor_separable_ms(), 3)});
  a.push_back({"lab04.floor_direct_r8_ms", fixed(floor_direct_ms(8), 3)});
  // Background, "Separable filters": the direct floor at r = 6, and the first radius at which
  // a fused separable kernel (floor 8N/B at every radius) beats an ideal direct kernel.
  a.push_back({"lab04.floor_direct_r6_ms", fixed(floor_direct_ms(6), 3)});
  // "The road to the roofline": the work 2N(2r+1)^2 at the FMA peak, r = 1 and r = 7.
  a.push_back({"lab04.work_r1_ms", fixed(1e3 * 2 * kPixels * 9 / kFmaFlopPerS, 3)});
  a.push_back({"lab04.work_r7_ms", fixed(1e3 * 2 * kPixels * 225 / kFmaFlopPerS, 3)});
  int fused_from = 0;
  while (floor_direct_ms(fused_from) <= 1e3 * 8 * kPixels / kCopyBytesPerS) ++fused_from;
  a.push_back({"lab04.fused_from_r", std::to_string(fused_from)});
  a.push_back({"lab04.predict_sep_r8", fixed(floor_direct_ms(8) / floor_separable_ms(), 2)});
  a.push_back({"lab04.measured_sep_r8", fixed(0.7846 / 0.3710, 2)});

  // Question 8 (predict, then measure): conv1d_cached's loads per output at r = 8, blocks of
  // kTile1d threads. Per thread: its own element (global), then each tap from shared memory
  // unless it falls in the halo, which the r threads next to each block edge read from global
  // memory: r(r + 1) halo loads per block. Per warp instruction (what ncu counts, x 32 lanes):
  // the two edge warps run the global branch for each of their r halo taps besides the
  // shared branch, which every warp runs for all 2r + 1 taps.
  {
    const int r = 8, b = lab04::kTile1d;
    const double halo = double(r) * (r + 1) / b;
    a.push_back({"lab04.cached1d_global_lane_r8", fixed(1 + halo, 2)});
    a.push_back({"lab04.cached1d_shared_lane_r8", fixed(2 * r + 1 - halo, 2)});
    a.push_back({"lab04.cached1d_global_warp_r8", fixed(1 + 2.0 * r * 32 / b, 2)});
    a.push_back({"lab04.cached1d_shared_warp_r8", std::to_string(2 * r + 1)});
  }

  // Background, "Occupancy, worked": conv2d_fast at r = 7 (59 registers, 25.9 KB) and
  // r = 1 (48 registers, 18.1 KB), 256 threads per block.
  const Occupancy o7 = h100_occupancy(256, 59, kb(25.9)), o1 = h100_occupancy(256, 48, kb(18.1));
  a.push_back({"lab04.occ_regs_r7", std::to_string(o7.registers_allocated)});
  a.push_back({"lab04.occ_by_regs_r7", std::to_string(o7.by_registers)});
  a.push_back({"lab04.occ_by_smem_r7", std::to_string(o7.by_shared)});
  a.push_back({"lab04.occ_by_threads", std::to_string(o7.by_threads)});
  a.push_back({"lab04.occ_blocks_r7", std::to_string(o7.blocks)});
  a.push_back({"lab04.occ_warps_r7", std::to_string(o7.warps)});
  a.push_back({"lab04.occ_pct_r7", fixed(o7.percent, 0)});
  // Its questions: r = 1; the registers that would fill the SM; lab 03's
  // conv2d_tiled_out (1024 threads, the starter's 9216-byte tile) at 32 and 33
  // registers; what __launch_bounds__(256, 5) leaves (lab 05's stencil3d_register).
  a.push_back({"lab04.occ_by_regs_r1", std::to_string(o1.by_registers)});
  a.push_back({"lab04.occ_by_smem_r1", std::to_string(o1.by_shared)});
  a.push_back({"lab04.occ_blocks_r1", std::to_string(o1.blocks)});
  a.push_back({"lab04.occ_pct_r1", fixed(o1.percent, 1)});
  a.push_back({"lab04.occ_regs_full", std::to_string(h100_registers_for(256, 8))});
  a.push_back({"lab04.occ_tiled_out_32", std::to_string(h100_occupancy(1024, 32, 9216).blocks)});
  a.push_back({"lab04.occ_tiled_out_33", std::to_string(h100_occupancy(1024, 33, 9216).blocks)});
  a.push_back({"lab04.occ_tiled_out_33_pct", fixed(h100_occupancy(1024, 33, 9216).percent, 0)});
  a.push_back({"lab04.occ_launch_bounds", std::to_string(h100_registers_for(256, 5))});
  a.push_back({"lab04.occ_launch_bounds_pct", fixed(h100_occupancy(256, h100_registers_for(256, 5), 0).percent, 1)});

  // Background, "Separable filters": the column pass with the lanes down a column.
  a.push_back({"lab04.sep_col_bank_32", std::to_string(column_pass_bank_passes(32))});
  a.push_back({"lab04.sep_col_bank_33", std::to_string(column_pass_bank_passes(33))});
  a.push_back({"lab04.sep_col_lines", std::to_string(column_pass_lines(8191))});
  return a;
}

}  // namespace convlab::handout
