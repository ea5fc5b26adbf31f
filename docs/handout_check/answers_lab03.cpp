// Lab 03's worked numbers: tile and grid sizes from the contract (lab03.hpp),
// OP/B from op_ratio.hpp, and counts of the threads that load ghost cells,
// enumerated thread by thread as the kernels index them.
#include "answers.hpp"
#include "gpu_model.hpp"

#include "lab03.hpp"
#include "op_ratio.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace convlab::handout {

namespace {

using namespace convlab::lab03;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Threads of block (bx, by) of conv2d_tiled_in() whose input element
// (row = by * OUT + ty - r, col = bx * OUT + tx - r) lies outside the image.
int ghost_threads_tiled_in(int width, int height, int r, int bx, int by) {
  const int out = out_tile_of_in(r);
  int n = 0;
  for (int ty = 0; ty < IN_TILE_DIM; ++ty)
    for (int tx = 0; tx < IN_TILE_DIM; ++tx) {
      const int row = by * out + ty - r, col = bx * out + tx - r;
      n += row < 0 || row >= height || col < 0 || col >= width;
    }
  return n;
}

// Elements of block (bx, by)'s input tile in conv2d_tiled_out() outside the image.
int ghost_elements_tiled_out(int width, int height, int r, int bx, int by) {
  const int in = in_tile_of_out(r);
  int n = 0;
  for (int i = 0; i < in; ++i)
    for (int j = 0; j < in; ++j) {
      const int row = by * OUT_TILE_DIM + i - r, col = bx * OUT_TILE_DIM + j - r;
      n += row < 0 || row >= height || col < 0 || col >= width;
    }
  return n;
}

// The 3D exercise: a T^3 input tile with a (2r+1)^3 filter, loads only.
double tiled_op_ratio_3d(int in_tile, int r) {
  const int o = in_tile - 2 * r;
  if (o <= 0) return 0.0;
  const double taps = double(2 * r + 1) * (2 * r + 1) * (2 * r + 1);
  return double(o) * o * o * taps * 2.0 / (double(in_tile) * in_tile * in_tile * 4.0);
}


// Passes of a warp whose 32 lanes read one column of a float tile with a row
// stride of `stride` words (lane k reads row k): PMPP's tile walked down a column.
int column_passes(int stride) {
  std::vector<long long> w;
  for (int k = 0; k < 32; ++k) w.push_back(1LL * stride * k);
  return bank_passes(w);
}

// The worst warp of the loading loop of conv2d_tiled_out() at radius r: thread t
// of the block loads tile element i = 1024 k + t, row i / W and column i mod W of
// the (W = 32 + 2r)-wide tile, stored with a row stride of `stride` words.
int loading_passes(int r, int stride) {
  const int w = in_tile_of_out(r), n = w * w, threads = OUT_TILE_DIM * OUT_TILE_DIM;
  int worst = 0;
  for (int base = 0; base < ceil_div(n, threads) * threads; base += 32) {
    std::vector<long long> words;
    for (int lane = 0; lane < 32; ++lane) {
      const int i = base + lane;
      if (i < n) words.push_back(1LL * (i / w) * stride + i % w);
    }
    worst = std::max(worst, bank_passes(words));
  }
  return worst;
}

// The worst warp of an 18 x 18 block (lab 05's heat2d_tiled) reading s[ty][tx] from a
// tile with a row stride of `stride` words: a warp holds 32 consecutive linear threads.
int heat_block_passes(int stride) {
  int worst = 0;
  for (int base = 0; base < 18 * 18; base += 32) {
    std::vector<long long> words;
    for (int t = base; t < std::min(base + 32, 18 * 18); ++t) words.push_back(1LL * (t / 18) * stride + t % 18);
    worst = std::max(worst, bank_passes(words));
  }
  return worst;
}

}  // namespace

std::vector<Answer> lab03_answers() {
  std::vector<Answer> a;
  // Question 1: blocks for 8192 x 8192 at r = 3.
  const int oi = out_tile_of_in(3);
  a.push_back({"lab03.out_tile_in_r3", std::to_string(oi)});
  a.push_back({"lab03.grid_in_r3", std::to_string(ceil_div(8192, oi))});
  a.push_back({"lab03.blocks_in_r3", grouped(1LL * ceil_div(8192, oi) * ceil_div(8192, oi))});
  a.push_back({"lab03.blocks_out_r3", grouped(1LL * ceil_div(8192, OUT_TILE_DIM) * ceil_div(8192, OUT_TILE_DIM))});

  // Question 2: shared memory per block (the starter's arrays, and what r = 3 uses).
  a.push_back({"lab03.smem_in", grouped(4LL * IN_TILE_DIM * IN_TILE_DIM)});
  a.push_back({"lab03.smem_out", grouped(4LL * in_tile_of_out(kMaxRadius2d) * in_tile_of_out(kMaxRadius2d))});
  a.push_back({"lab03.smem_out_r3", grouped(4LL * in_tile_of_out(3) * in_tile_of_out(3))});
  a.push_back({"lab03.smem_1d", grouped(4LL * (TILE_1D + 2 * kMaxRadius1d))});

  // Question 3: the OP/B of a 24 x 24 input tile with a 5 x 5 filter.
  a.push_back({"lab03.op_ratio_24_r2", fixed(two_decimals(tiled_op_ratio(24, 2)), 2)});
  a.push_back({"lab03.op_ratio_24_r2_share", fixed(100.0 * tiled_op_ratio(24, 2) / tiled_op_ratio_bound(2), 0)});

  // Question 4: 1D reads per input element and OP/B.
  a.push_back({"lab03.reads_1d_r16", fixed(1.0 + 2.0 * 16 / TILE_1D, 3)});
  a.push_back({"lab03.op_ratio_1d_r8", fixed(two_decimals(tiled_op_ratio_1d(TILE_1D, 8)), 2)});

  // Question 5: loading the output-tile block's tile in a loop at r = 5.
  const int tile5 = in_tile_of_out(5) * in_tile_of_out(5), threads = OUT_TILE_DIM * OUT_TILE_DIM;
  a.push_back({"lab03.tile_r5", grouped(tile5)});
  a.push_back({"lab03.rounds_r5", std::to_string(ceil_div(tile5, threads))});
  a.push_back({"lab03.last_round_r5", std::to_string(tile5 - (ceil_div(tile5, threads) - 1) * threads)});

  // Question 6: ghost cells at the top-left corner of a 100 x 75 image, r = 2.
  a.push_back({"lab03.ghost_threads_in_r2", std::to_string(ghost_threads_tiled_in(100, 75, 2, 0, 0))});
  a.push_back({"lab03.ghost_elements_out_r2", std::to_string(ghost_elements_tiled_out(100, 75, 2, 0, 0))});

  // Question 7: idle threads of conv2d_tiled_in() in the compute phase at r = 4.
  a.push_back({"lab03.idle_in_r4", fixed(100.0 * (1.0 - tiled_in_computing_fraction(4)), 0)});

  // Question 8: 3D convolution with an 8 x 8 x 8 input tile and a 3 x 3 x 3 filter.
  a.push_back({"lab03.op_ratio_3d_8_r1", fixed(tiled_op_ratio_3d(8, 1), 2)});
  a.push_back({"lab03.op_ratio_3d_bound_r1", fixed(27.0 * 2 / 4, 2)});
  a.push_back({"lab03.op_ratio_3d_32_r1", fixed(tiled_op_ratio_3d(32, 1), 2)});
  a.push_back({"lab03.smem_3d_32_r1", grouped(4LL * 32 * 32 * 32)});

  // Question 9 (predict, then measure): the OP/B ratio of the two designs at
  // r = 7 against their measured times (6.8285 and 4.2600 ms).
  a.push_back({"lab03.predict_r7",
               fixed(two_decimals(tiled_op_ratio(in_tile_of_out(7), 7)) / two_decimals(tiled_op_ratio(IN_TILE_DIM, 7)), 2)});
  a.push_back({"lab03.measured_r7", fixed(6.8285 / 4.2600, 2)});

  // Background, "Shared-memory banks and row padding": a warp down a column of a
  // tile with row stride W takes gcd(W, 32) passes; one word of padding makes it 1.
  a.push_back({"lab03.bank_col_32", std::to_string(column_passes(32))});
  for (int r : {1, 2, 3, 4, 8}) a.push_back({"lab03.bank_col_r" + std::to_string(r), std::to_string(column_passes(in_tile_of_out(r)))});
  a.push_back({"lab03.bank_col_padded_r4", std::to_string(column_passes(in_tile_of_out(4) + 1))});
  // Its questions: the loading loop at r = 5 into a dense 42-wide tile and into the
  // starter's array, 48 words wide; an 18 x 18 block on an 18- and a 32-word-wide tile.
  a.push_back({"lab03.bank_load_dense_r5", std::to_string(loading_passes(5, in_tile_of_out(5)))});
  a.push_back({"lab03.bank_load_48_r5", std::to_string(loading_passes(5, in_tile_of_out(kMaxRadius2d)))});
  a.push_back({"lab03.bank_heat_18", std::to_string(heat_block_passes(18))});
  a.push_back({"lab03.bank_heat_32", std::to_string(heat_block_passes(32))});
  return a;
}

}  // namespace convlab::handout
