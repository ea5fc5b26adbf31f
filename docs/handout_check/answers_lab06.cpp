// Lab 06's worked numbers: output sizes and padding from the contract's
// make_problem(), im2col sizes from im2col_rows()/cols()/workspace_floats(),
// the work of a layer from ConvProblem::macs(), tensor offsets, and the
// worked example of the direct kernel's balanced tile copy and edge blocks
// (after Pegessi's blog post).
#include "answers.hpp"

#include "lab06.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace convlab::handout {

namespace {

using namespace convlab::lab06;

std::string mb(double floats) { return fixed(floats * 4 / 1e6, 2); }

// The blog's block of BH x BW outputs (one warp of 32 threads); a grid of
// floor(out / block) blocks per dimension, whose last block absorbs the rest.
struct EdgeBlocks {
  int rows, cols;           // blocks per dimension
  int last_rows, last_cols; // outputs of the last block row / column
};
EdgeBlocks edge_blocks(int out_h, int out_w, int bh, int bw) {
  return {out_h / bh, out_w / bw, bh + out_h % bh, bw + out_w % bw};
}

}  // namespace

std::vector<Answer> lab06_answers() {
  std::vector<Answer> a;
  // Background, "Cost": explicit im2col at 2048 x 2048 against the direct kernel (Results table).
  a.push_back({"lab06.im2col_vs_direct_2048", fixed(1.5823 / 0.0837, 0)});

  // The worked example: the blog's 8 x 4 blocks, a 3 x 3 filter, output 18 x 22.
  const int tile = (8 + 2) * (4 + 2);
  a.push_back({"lab06.ex_tile", std::to_string(tile)});
  a.push_back({"lab06.ex_ideal", fixed(tile / 32.0, 3)});
  // The edge-thread scheme: the 3 threads of the last column (corner excluded) and
  // 7 of the last row load 3 floats each, the corner thread 9, the other 21 one.
  a.push_back({"lab06.ex_edge_check", std::to_string(21 * 1 + 10 * 3 + 9)});
  a.push_back({"lab06.ex_edge_eff", fixed(100.0 * (tile / 32.0) / 9, 0)});
  const EdgeBlocks e = edge_blocks(18, 22, 8, 4);
  a.push_back({"lab06.ex_grid", std::to_string(e.rows) + " × " + std::to_string(e.cols)});
  a.push_back({"lab06.ex_covered", std::to_string(e.rows * 8) + " × " + std::to_string(e.cols * 4)});
  a.push_back({"lab06.ex_corner_block", std::to_string(e.last_rows) + " × " + std::to_string(e.last_cols)});
  a.push_back({"lab06.ex_corner_tile", std::to_string(e.last_rows + 2) + " × " + std::to_string(e.last_cols + 2)});

  // Hints, "Which offsets need 64 bits": one image's column matrix of a layer the contract
  // accepts (every tensor within 2^30 floats) that passes 2^31 floats.
  const ConvProblem col_big = make_problem(1, 64, 1024, 1024, 64, 7, 7, 1, 1, Padding::same);
  validate(col_big);
  if (static_cast<long long>(im2col_workspace_floats(col_big)) <= (1LL << 31))
    throw std::logic_error("lab06.col_floats_big: the column matrix no longer passes 2^31 floats");
  a.push_back({"lab06.col_floats_big", grouped(static_cast<long long>(im2col_workspace_floats(col_big)))});

  // Question 1: output sizes, 224 x 224 input, 7 x 7 filter, stride 2.
  const ConvProblem same = make_problem(1, 3, 224, 224, 64, 7, 7, 2, 2, Padding::same);
  const ConvProblem valid = make_problem(1, 3, 224, 224, 64, 7, 7, 2, 2, Padding::valid);
  const ConvProblem pad3 = make_problem(1, 3, 224, 224, 64, 7, 7, 2, 2, Padding::explicit_pads, 3, 3);
  a.push_back({"lab06.same_pad_224", std::to_string(same.pad_h)});
  a.push_back({"lab06.same_out_224", std::to_string(same.out_h())});
  a.push_back({"lab06.valid_out_224", std::to_string(valid.out_h())});
  a.push_back({"lab06.pad3_out_224", std::to_string(pad3.out_h())});

  // Question 2: im2col of N8 C128 28 x 28, K128 3 x 3, pad 1, stride 2.
  const ConvProblem q2 = make_problem(8, 128, 28, 28, 128, 3, 3, 2, 2, Padding::explicit_pads, 1, 1);
  a.push_back({"lab06.im2col_rows", grouped(static_cast<long long>(im2col_rows(q2)))});
  a.push_back({"lab06.im2col_cols", grouped(static_cast<long long>(im2col_cols(q2)))});
  a.push_back({"lab06.im2col_floats", grouped(static_cast<long long>(im2col_workspace_floats(q2)))});
  a.push_back({"lab06.im2col_mb", mb(double(im2col_workspace_floats(q2)))});
  a.push_back({"lab06.im2col_times_image", fixed(double(im2col_workspace_floats(q2)) / (128.0 * 28 * 28), 2)});
  const ConvProblem resnet = make_problem(32, 64, 56, 56, 64, 3, 3, 1, 1, Padding::explicit_pads, 1, 1);
  a.push_back({"lab06.im2col_resnet_mb", mb(double(im2col_workspace_floats(resnet)))});

  // Question 3: the work of the blog's layer and its rate at the measured 0.0746 ms.
  const ConvProblem blog = make_problem(1, 6, 768, 512, 6, 6, 6, 1, 1, Padding::valid);
  a.push_back({"lab06.blog_out", std::to_string(blog.out_h()) + " × " + std::to_string(blog.out_w())});
  a.push_back({"lab06.blog_gflop", fixed(2 * blog.macs() / 1e9, 2)});
  a.push_back({"lab06.blog_tflops", fixed(2 * blog.macs() / 0.0746e-3 / 1e12, 1)});

  // Question 4: the implicit GEMM of the N32 C64 layer and its 64 x 256 block tiles.
  const long long m = resnet.k, n = 1LL * resnet.n * resnet.out_h() * resnet.out_w(), k = static_cast<long long>(im2col_rows(resnet));
  a.push_back({"lab06.gemm_m", grouped(m)});
  a.push_back({"lab06.gemm_n", grouped(n)});
  a.push_back({"lab06.gemm_k", grouped(k)});
  a.push_back({"lab06.gemm_tiles", grouped(((m + 63) / 64) * ((n + 255) / 256))});

  // Question 5: the offset of element (n, c, h, w) = (1, 2, 3, 4) of a 2 x 3 x 5 x 6 tensor.
  const int N = 2, C = 3, H = 5, W = 6, n0 = 1, c0 = 2, h0 = 3, w0 = 4;
  (void)N;
  a.push_back({"lab06.offset_nchw", std::to_string(((n0 * C + c0) * H + h0) * W + w0)});
  a.push_back({"lab06.offset_nhwc", std::to_string(((n0 * H + h0) * W + w0) * C + c0)});

  // Question 6: Winograd F(m x m, 3 x 3): (m + 2)^2 multiplications for m^2 outputs instead of 9 m^2.
  a.push_back({"lab06.winograd_2", fixed(9.0 * 4 / 16, 2)});
  a.push_back({"lab06.winograd_4", fixed(9.0 * 16 / 36, 2)});

  // Question 7: the worked example applied to the blog's 6 x 6 layer.
  const EdgeBlocks b = edge_blocks(blog.out_h(), blog.out_w(), 8, 4);
  a.push_back({"lab06.blog_grid", std::to_string(b.rows) + " × " + std::to_string(b.cols)});
  a.push_back({"lab06.blog_blocks", grouped(1LL * b.rows * b.cols)});
  a.push_back({"lab06.blog_blocks_rounded_up", grouped(1LL * ((blog.out_h() + 7) / 8) * ((blog.out_w() + 3) / 4))});
  a.push_back({"lab06.blog_last_block", std::to_string(b.last_rows) + " × " + std::to_string(b.last_cols)});
  a.push_back({"lab06.blog_tile", std::to_string((8 + 5) * (4 + 5))});
  a.push_back({"lab06.blog_tile_per_thread", fixed((8 + 5) * (4 + 5) / 32.0, 2)});

  // Question 8: a GEMM block tile's FLOP per byte loaded from global memory.
  const auto tile_intensity = [](int tm, int tn) { return 2.0 * tm * tn / (4.0 * (tm + tn)); };
  a.push_back({"lab06.gemm_ai_64", fixed(tile_intensity(64, 64), 1)});
  a.push_back({"lab06.gemm_ai_128", fixed(tile_intensity(128, 128), 1)});
  a.push_back({"lab06.gemm_ai_64x256", fixed(tile_intensity(64, 256), 1)});

  // Question 9 (predict, then measure): the column matrix at 2048 x 2048, stride 1.
  const ConvProblem big = make_problem(1, 3, 2048, 2048, 1, 3, 3, 1, 1, Padding::same);
  const double col_bytes = double(im2col_workspace_floats(big)) * 4;
  a.push_back({"lab06.col_2048_mb", fixed(col_bytes / 1e6, 1)});
  a.push_back({"lab06.col_2048_floor_ms", fixed(1e3 * 2 * col_bytes / 2858e9, 2)});
  a.push_back({"lab06.col_2048_floor_ratio", fixed(1e3 * 2 * col_bytes / 2858e9 / 0.0837, 1)});
  return a;
}

}  // namespace convlab::handout
