// Lab 06 — im2col + GEMM (reference solution).
//
// im2col unfolds one image into its column matrix: row (c R + r) S + s, column p Q + q holds
// the input that tap (c, r, s) of the window of output (p, q) multiplies:
//   col[(c R + r) S + s][p Q + q] = x[c][p stride_h - pad_h + r][q stride_w - pad_w + s]
// (0 in the padding). The convolution of that image is then one matrix product,
//   y (K x PQ) = w (K x CRS) . col (CRS x PQ),
// computed by a shared-memory tiled SGEMM with 4 x 4 outputs per thread.
//   im2col: grid(ceil(PQ / 256), CRS), block(256)  (one thread per element; consecutive
//           threads write consecutive columns and read, for stride 1, consecutive inputs)
//   gemm:   grid(ceil(n / 64), ceil(m / 64)), block(16, 16), 64 x 64 tile, BK = 16
#include "lab06.hpp"

#include <convlab/check.hpp>

#include <algorithm>

namespace convlab::lab06 {
namespace {

constexpr int IM2COL_BLOCK = 256;
constexpr int TILE = 64, BK = 16, THREADS = 16, PER_THREAD = TILE / THREADS;  // 4 x 4 outputs per thread

__global__ void im2col_kernel(const float* __restrict__ x, float* __restrict__ col, ConvProblem p, int P, int Q) {
  const int column = blockIdx.x * IM2COL_BLOCK + threadIdx.x;  // p Q + q
  if (column >= P * Q) return;
  const int oh = column / Q, q = column % Q;
  const int rows = p.c * p.r * p.s;
  for (int row = blockIdx.y; row < rows; row += gridDim.y) {  // (c R + r) S + s; gridDim.y <= 65535
    const int c = row / (p.r * p.s), r = (row / p.s) % p.r, s = row % p.s;
    const int ih = oh * p.stride_h - p.pad_h + r, iw = q * p.stride_w - p.pad_w + s;
    const bool inside = ih >= 0 && ih < p.h && iw >= 0 && iw < p.w;
    col[(long long)row * P * Q + column] = inside ? x[((long long)c * p.h + ih) * p.w + iw] : 0.0f;
  }
}

// C (m x n) = A (m x kd) B (kd x n), row-major. Thread (tx, ty) computes rows ty + 16 i and
// columns tx + 16 j of the tile (i, j < 4): strided, so that a warp's shared reads of B and
// its global stores are consecutive.
__global__ void __launch_bounds__(256) gemm_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                                   float* __restrict__ C, int m, int n, int kd) {
  __shared__ float s_a[BK][TILE + 4];  // A's tile, transposed: s_a[k][row]
  __shared__ float s_b[BK][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * THREADS + tx;
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  float acc[PER_THREAD][PER_THREAD] = {};
  for (int k0 = 0; k0 < kd; k0 += BK) {
    for (int i = tid; i < TILE * BK; i += THREADS * THREADS) {
      const int ar = i / BK, ak = i % BK;  // A: 64 rows x 16 columns
      const int grow = row0 + ar, gk = k0 + ak;
      s_a[ak][ar] = (grow < m && gk < kd) ? A[(long long)grow * kd + gk] : 0.0f;
      const int bk = i / TILE, bc = i % TILE;  // B: 16 rows x 64 columns
      const int gk2 = k0 + bk, gcol = col0 + bc;
      s_b[bk][bc] = (gk2 < kd && gcol < n) ? B[(long long)gk2 * n + gcol] : 0.0f;
    }
    __syncthreads();  // gemm: both tiles are loaded
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[PER_THREAD], b[PER_THREAD];
#pragma unroll
      for (int i = 0; i < PER_THREAD; ++i) a[i] = s_a[k][ty + THREADS * i];
#pragma unroll
      for (int j = 0; j < PER_THREAD; ++j) b[j] = s_b[k][tx + THREADS * j];
#pragma unroll
      for (int i = 0; i < PER_THREAD; ++i)
#pragma unroll
        for (int j = 0; j < PER_THREAD; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();  // gemm: done with the tiles
  }
#pragma unroll
  for (int i = 0; i < PER_THREAD; ++i) {
    const int grow = row0 + ty + THREADS * i;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
      const int gcol = col0 + tx + THREADS * j;
      if (grow < m && gcol < n) C[(long long)grow * n + gcol] = acc[i][j];  // the tile edge
    }
  }
}

}  // namespace

void im2col(const float* d_x, int image, float* d_col, const ConvProblem& p, cudaStream_t stream) {
  validate(p);
  if (image < 0 || image >= p.n)
    throw std::invalid_argument("lab06: im2col: image must be in [0, " + std::to_string(p.n) + "), got " +
                                std::to_string(image));
  const int P = p.out_h(), Q = p.out_w();
  const dim3 grid((P * Q + IM2COL_BLOCK - 1) / IM2COL_BLOCK, unsigned(std::min<std::size_t>(im2col_rows(p), 65535)));
  im2col_kernel<<<grid, IM2COL_BLOCK, 0, stream>>>(d_x + (long long)image * p.c * p.h * p.w, d_col, p, P, Q);
  CONVLAB_CHECK_LAUNCH();
}

void gemm(const float* d_a, const float* d_b, float* d_c, int m, int n, int kd, cudaStream_t stream) {
  if (m < 1 || n < 1 || kd < 1)
    throw std::invalid_argument("lab06: gemm: m, n and kd must be >= 1, got " + std::to_string(m) + ", " +
                                std::to_string(n) + ", " + std::to_string(kd));
  const dim3 block(THREADS, THREADS);
  const dim3 grid((n + TILE - 1) / TILE, (m + TILE - 1) / TILE);
  gemm_kernel<<<grid, block, 0, stream>>>(d_a, d_b, d_c, m, n, kd);
  CONVLAB_CHECK_LAUNCH();
}

void conv_im2col(const float* d_x, const float* d_w, float* d_col, float* d_y, const ConvProblem& p,
                 cudaStream_t stream) {
  validate(p);
  const int rows = int(im2col_rows(p)), cols = int(im2col_cols(p));
  for (int image = 0; image < p.n; ++image) {
    im2col(d_x, image, d_col, p, stream);
    gemm(d_w, d_col, d_y + (long long)image * p.k * cols, p.k, cols, rows, stream);
  }
}

}  // namespace convlab::lab06
