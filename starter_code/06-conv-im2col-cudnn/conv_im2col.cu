// Lab 06 — im2col + GEMM (your file).
//
// im2col unfolds one image into its column matrix, row-major, C R S rows by P Q columns:
//   col[(c R + r) S + s][p Q + q] = x[image][c][p*stride_h - pad_h + r][q*stride_w - pad_w + s]
// (0 in the padding). The image's convolution is then one matrix product,
//   y[image] (K x PQ) = w (K x CRS) . col (CRS x PQ),
// which your tiled shared-memory GEMM computes (cuBLAS is not allowed: the grader checks).
//   im2col: one thread per element of the column matrix
//   gemm:   a TILE x TILE output tile per block, the k dimension in steps of BK through shared
//           memory; the reference uses 64 x 64 tiles, BK = 16, 16 x 16 threads of 4 x 4 outputs
#include "lab06.hpp"

#include <convlab/check.hpp>

namespace convlab::lab06 {
namespace {

__global__ void im2col_kernel(const float* __restrict__ x, float* __restrict__ col, ConvProblem p, int P, int Q) {
  // TODO(student): one element of the column matrix per thread (about 10 lines): from its row,
  // (c, r, s); from its column, (p, q); then the input (ih, iw), or 0 in the padding.
  // starter only: quiets "unused parameter" until you write this; delete it
  (void)x, (void)col, (void)p, (void)P, (void)Q;
}

// C (m x n) = A (m x kd) B (kd x n), row-major.
__global__ void gemm_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int m,
                            int n, int kd) {
  // TODO(student): a tiled SGEMM (about 35 lines): stage a tile of A and a tile of B in shared
  // memory (zeros past the edges of A and B), __syncthreads(), multiply-add from shared memory
  // into registers, __syncthreads(), next tile; then store, guarding both edges of C: a tile
  // hangs over the last rows and columns whenever m or n is not a multiple of the tile.
  // starter only: quiets "unused parameter" until you write this; delete it
  (void)A, (void)B, (void)C, (void)m, (void)n, (void)kd;
}

}  // namespace

void im2col(const float* d_x, int image, float* d_col, const ConvProblem& p, cudaStream_t stream) {
  validate(p);
  if (image < 0 || image >= p.n)
    throw std::invalid_argument("lab06: im2col: image must be in [0, " + std::to_string(p.n) + "), got " +
                                std::to_string(image));
  const int P = p.out_h(), Q = p.out_w();
  // TODO(student): a grid that covers the rows x columns of the column matrix (2 lines; mind
  // gridDim.y <= 65535), and the offset of `image` in x.
  im2col_kernel<<<1, 256, 0, stream>>>(d_x, d_col, p, P, Q);
  CONVLAB_CHECK_LAUNCH();
}

void gemm(const float* d_a, const float* d_b, float* d_c, int m, int n, int kd, cudaStream_t stream) {
  if (m < 1 || n < 1 || kd < 1)
    throw std::invalid_argument("lab06: gemm: m, n and kd must be >= 1, got " + std::to_string(m) + ", " +
                                std::to_string(n) + ", " + std::to_string(kd));
  // TODO(student): one block per output tile (2 lines).
  gemm_kernel<<<1, dim3(16, 16), 0, stream>>>(d_a, d_b, d_c, m, n, kd);
  CONVLAB_CHECK_LAUNCH();
}

void conv_im2col(const float* d_x, const float* d_w, float* d_col, float* d_y, const ConvProblem& p,
                 cudaStream_t stream) {
  validate(p);
  // TODO(student): for each image, im2col() into d_col, then gemm() into that image's K x PQ
  // block of y (about 5 lines).
  (void)d_x, (void)d_w, (void)d_col, (void)d_y, (void)stream;
}

}  // namespace convlab::lab06
