// Lab 03's graders. The cases live here, in one place; the checking is the
// shared conv testbed (grader/judge/src/conv_testbed.cpp); points and thresholds are
// in grading.json. The contract fixes the tiles, so failure reports name tile
// edges and halo corners.
#include "lab03.hpp"
#include "op_ratio.hpp"

#include <convlab/conv_technique.hpp>
#include <convlab/conv_testbed.hpp>
#include <convlab/testbed.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>

namespace {

using namespace convlab;
using namespace convlab::lab03;

void loop_1d(const Conv1dArgs& a) { conv1d_tiled_loop(a.d_in, a.h_filter, a.d_out, {a.n, a.radius}, a.stream); }
void groups_1d(const Conv1dArgs& a) {
  conv1d_tiled_groups(a.d_in, a.h_filter, a.d_out, {a.n, a.radius}, a.stream);
}
void tiled_in_2d(const Conv2dArgs& a) {
  conv2d_tiled_in(a.d_in, a.h_filter, a.d_out, {a.width, a.height, a.radius}, a.stream);
}
void tiled_out_2d(const Conv2dArgs& a) {
  conv2d_tiled_out(a.d_in, a.h_filter, a.d_out, {a.width, a.height, a.radius}, a.stream);
}

// The output tiles, for naming tile edges and halo corners in failure reports.
ConvCheckOptions tile_1d(int) { return {TILE_1D, 0}; }
ConvCheckOptions tile_of_in(int r) { return {out_tile_of_in(r), out_tile_of_in(r)}; }
ConvCheckOptions tile_of_out(int) { return {OUT_TILE_DIM, OUT_TILE_DIM}; }

// Lab 01's shapes (one element, fewer than a tile, radius 0, a radius larger than
// the input, sizes one off a tile, an input larger than a 50 MiB L2 cache), plus
// every radius up to the lab's maximum and inputs that are whole numbers of tiles.
const std::vector<Conv1dCase> kConv1dCases = {
    {1, 0},      {1, 3},      {7, 2},        {100, 0},      {255, 4},
    {256, 4},    {257, 4},    {512, 1},      {40, 60},      {300, kMaxRadius1d},
    {1000, kMaxRadius1d},     {4097, 7},     {65537, 16},   {1000003, 3},
    {(1 << 24) + 7, 2},  // 64 MB in and out: larger than a 50 MiB L2 cache, and more than 65535 blocks of TILE_1D
};

const std::vector<Conv2dCase> kConv2dCases = {
    {1, 1, 0},    {1, 1, 2},     {1, 37, 1},    {37, 1, 1},     {5, 3, 4},      {31, 31, 1},
    {32, 32, 1},  {60, 90, 1},   {64, 96, 2},   {33, 31, 0},    {100, 75, 3},   {127, 129, 5},
    {40, 40, kMaxRadius2d},      {255, 257, kMaxRadius2d},      {1023, 517, 3},
    {3627, 3623, 1},  // 52.6 MB: just larger than a 50 MiB L2 cache (and quicker on the CPU backend)
    {3, 70001, 2},    // taller than 65535 rows
};

// Speed: inputs several times the L2 cache, at the radii where a tile pays on an H100 (at small
// radii the naive kernel's taps are L1 hits and every tiled design loses: grading.json's notes).
const std::vector<Conv1dCase> kSpeed1d = {{(1 << 26) + 3, 16}};
const std::vector<Conv2dCase> kSpeedTiledIn = {{8191, 8193, 4}};
const std::vector<Conv2dCase> kSpeedTiledOut = {{8191, 8193, 7}};

// The text of the lab's handout (README.md next to the grading spec).
std::string handout() {
  std::string path = CONVLAB_SPEC_PATH;
  path = path.substr(0, path.find_last_of('/') + 1) + "README.md";
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void register_lab03(Registry& reg) {
  add_conv1d_correctness(reg, "conv1d_tiled_loop", loop_1d, kConv1dCases, tile_1d);
  add_conv1d_correctness(reg, "conv1d_tiled_groups", groups_1d, kConv1dCases, tile_1d);
  add_conv2d_correctness(reg, "conv2d_tiled_in", tiled_in_2d, kConv2dCases, tile_of_in);
  add_conv2d_correctness(reg, "conv2d_tiled_out", tiled_out_2d, kConv2dCases, tile_of_out);
  add_conv1d_speedup(reg, "conv1d_tiled_loop", loop_1d, kSpeed1d);
  add_conv1d_speedup(reg, "conv1d_tiled_groups", groups_1d, kSpeed1d);
  add_conv2d_speedup(reg, "conv2d_tiled_in", tiled_in_2d, kSpeedTiledIn);
  add_conv2d_speedup(reg, "conv2d_tiled_out", tiled_out_2d, kSpeedTiledOut);

  // The technique: an input tile with its halo in shared memory, loaded once per block, a barrier
  // before it is read, and every tap of every output read from it. The tile's size follows from the
  // design (the contract fixes it); global loads per output follow from the tile: each input is
  // loaded by one block, plus the halo that neighbouring blocks load again.
  const int r1 = 8, r2 = 3;
  const double in1 = TILE_1D + 2 * r1;  // 1D: a block of TILE_1D outputs loads TILE_1D + 2r inputs
  const std::string asks1d = "an input tile of TILE_1D + 2r elements in shared memory, loaded once per block, "
                             "a __syncthreads() before it is read, and every tap read from it";
  const auto tiled1d = all_of({shared_tile(in1 * 4), taps_from_shared(0.9), global_loads_per_output(in1 / TILE_1D + 0.25),
                               constant_filter()});
  add_conv1d_technique(reg, "conv1d_tiled_loop", loop_1d, {100003, r1}, asks1d, tiled1d);
  add_conv1d_technique(reg, "conv1d_tiled_groups", groups_1d, {100003, r1}, asks1d, tiled1d);
  const double in_side = IN_TILE_DIM, out_of_in = out_tile_of_in(r2);
  add_conv2d_technique(reg, "conv2d_tiled_in", tiled_in_2d, {1000, 700, r2},
                       "an input tile of IN_TILE_DIM x IN_TILE_DIM elements in shared memory, one per thread, a "
                       "__syncthreads() before it is read, and every tap read from it",
                       all_of({shared_tile(in_side * in_side * 4), taps_from_shared(0.9),
                               global_loads_per_output(in_side * in_side / (out_of_in * out_of_in) + 0.25),
                               constant_filter()}));
  const double in_of_out = in_tile_of_out(r2);
  add_conv2d_technique(reg, "conv2d_tiled_out", tiled_out_2d, {1000, 700, r2},
                       "an input tile of (OUT_TILE_DIM + 2r)^2 elements in shared memory, loaded by the block's "
                       "OUT_TILE_DIM^2 threads, a __syncthreads() before it is read, and every tap read from it",
                       all_of({shared_tile(in_of_out * in_of_out * 4), taps_from_shared(0.9),
                               global_loads_per_output(in_of_out * in_of_out / (OUT_TILE_DIM * OUT_TILE_DIM) + 0.25),
                               constant_filter()}));

  // The contract refuses bad problems before touching the GPU, naming the limit.
  reg.cpu("cpu", "contract", "rejects_bad_problems", [] {
    const auto conv1d = [](Conv1dProblem p) { conv1d_tiled_loop(nullptr, nullptr, nullptr, p, nullptr); };
    const auto conv2d = [](Conv2dProblem p) { conv2d_tiled_out(nullptr, nullptr, nullptr, p, nullptr); };
    expect_refused([&] { conv1d({0, 1}); }, "n must be >= 1");
    expect_refused([&] { conv1d({10, -1}); }, "radius must be in [0, 128]");
    expect_refused([&] { conv1d({10, kMaxRadius1d + 1}); }, "radius must be in [0, 128] (half of TILE_1D = 256)");
    expect_refused([&] { conv2d({0, 5, 1}); }, "width and height must be >= 1");
    expect_refused([&] { conv2d({65536, 65536, 1}); }, "fit in an int");
    expect_refused([&] { conv2d({1, kMaxHeight + 1, 1}); }, "height must be at most 1048560");
    expect_refused([&] { conv2d({5, 5, kMaxRadius2d + 1}); }, "radius must be in [0, 8] (IN_TILE_DIM - 2r >= 16)");
    expect_refused([] { conv2d_tiled_in(nullptr, nullptr, nullptr, {5, 5, -1}, nullptr); }, "radius must be in");
    expect_refused([] { conv1d_tiled_groups(nullptr, nullptr, nullptr, {-3, 1}, nullptr); }, "n must be >= 1");
  });
  reg.cpu("cpu", "contract", "tiles_and_filter_buffer", [] {
    EXPECT_EQ(out_tile_of_in(kMaxRadius2d), IN_TILE_DIM / 2);
    EXPECT_EQ(in_tile_of_out(kMaxRadius2d), 48);
    EXPECT_EQ(kFilterCapacity, 17 * 17);  // the 2D filter is the larger one
    EXPECT_GE(kFilterCapacity, 2 * kMaxRadius1d + 1);
  });

  // The OP/B model of the handout reproduces PMPP's figure 7.14 (seed article 003, §7.4).
  reg.cpu("cpu", "op_ratio", "textbook_values", [] {
    EXPECT_DOUBLE_EQ(two_decimals(tiled_op_ratio(32, 2)), 9.57);   // 5x5 filter, 32x32 input tile
    EXPECT_DOUBLE_EQ(two_decimals(tiled_op_ratio(32, 4)), 22.78);  // 9x9 filter, 32x32 input tile
    EXPECT_DOUBLE_EQ(two_decimals(tiled_op_ratio(8, 2)), 3.13);    // 5x5 filter, 8x8 input tile
    EXPECT_DOUBLE_EQ(tiled_op_ratio_bound(2), 12.5);               // 5x5: the bound of large tiles
    EXPECT_DOUBLE_EQ(tiled_op_ratio_bound(4), 40.5);               // 9x9
    EXPECT_DOUBLE_EQ(kNaiveOpRatio, 0.25);                         // lab 01
    EXPECT_DOUBLE_EQ(kConstantFilterOpRatio, 0.5);                 // lab 02
    EXPECT_EQ(tiled_op_ratio(8, 4), 0.0);                          // an 8x8 tile has no 9x9 output
    EXPECT_LT(tiled_op_ratio(1 << 20, 2), tiled_op_ratio_bound(2));
    EXPECT_NEAR(tiled_op_ratio(1 << 20, 2), tiled_op_ratio_bound(2), 1e-3);
  });
  reg.cpu("cpu", "op_ratio", "one_dimension", [] {  // the handout's 1D figures, TILE_1D = 256
    EXPECT_DOUBLE_EQ(two_decimals(tiled_op_ratio_1d(TILE_1D, 2)), 2.46);
    EXPECT_DOUBLE_EQ(two_decimals(tiled_op_ratio_1d(TILE_1D, 16)), 14.67);
    EXPECT_DOUBLE_EQ(tiled_op_ratio_1d(TILE_1D, kMaxRadius1d), 64.25);
    EXPECT_EQ(tiled_op_ratio_1d(0, 1), 0.0);
  });
  reg.cpu("cpu", "op_ratio", "handout_tables_are_current", [] {
    const std::string text = handout();
    for (const auto& [marker, table] : {std::pair<std::string, std::string>{"op_ratio_table", op_ratio_table_markdown()},
                                        {"op_ratio_kernels", lab_kernels_table_markdown()}}) {
      const std::string begin = "<!-- " + marker + ":begin -->\n", end = "<!-- " + marker + ":end -->";
      const auto b = text.find(begin), e = text.find(end);
      ASSERT_NE(b, std::string::npos) << "README.md has no '" << begin << "' marker";
      ASSERT_NE(e, std::string::npos) << "README.md has no '" << end << "' marker";
      EXPECT_EQ(text.substr(b + begin.size(), e - b - begin.size()), table)
          << "the table '" << marker << "' in README.md is not what op_ratio.hpp computes: paste the output of "
          << "lab03_op_ratio_table";
    }
  });
}

}  // namespace

CONVLAB_LAB_MAIN(register_lab03)
