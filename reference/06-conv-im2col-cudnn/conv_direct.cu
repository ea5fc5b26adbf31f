// Lab 06 — direct (sliding-window) multi-channel convolution (reference solution).
//
// Two kernels behind one launcher:
//   conv_direct_naive: one thread per output y[n][k][p][q], looping over the C channels and
//     the R x S window (the loop nest of the handout, innermost three loops); filters and
//     inputs from global memory.   grid(ceil(N K P Q / 256)), block(256)
//   conv_direct_small: few channels and filters (K C R S <= kSmallTaps, R, S <= 8, stride <= 3):
//     the filters live in constant memory (every thread of a warp reads the same tap: a
//     broadcast), one channel's input tile at a time is staged in shared memory, and each
//     thread computes 4 columns x up to 8 filters = 32 outputs, so each staged input feeds
//     32 multiply-adds from registers.
//     grid(ceil(Q / 128), ceil(P / 8), N ceil(K / 8)), block(32, 8)
#include "lab06.hpp"

#include <convlab/check.hpp>

namespace convlab::lab06 {
namespace {

constexpr int kSmallTaps = 8192;     // floats of filters kept in constant memory (32 KB)
constexpr int kSmallMaxFilter = 8;   // R, S of the small kernel
constexpr int kSmallMaxStride = 3;
constexpr int TILE_Q = 128, TILE_P = 8;  // outputs per block: 128 columns x 8 rows
constexpr int THREADS_Q = 32;            // 4 columns per thread, 32 apart (conflict-free reads)
constexpr int COLS_PER_THREAD = TILE_Q / THREADS_Q;
constexpr int K_PER_THREAD = 8;          // filters per thread

__constant__ float c_w[kSmallTaps];

__global__ void conv_direct_naive(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                                  ConvProblem p, int P, int Q) {
  const long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long total = (long long)p.n * p.k * P * Q;
  if (idx >= total) return;
  const int q = int(idx % Q);
  const int oh = int((idx / Q) % P);
  const int k = int((idx / ((long long)Q * P)) % p.k);
  const int n = int(idx / ((long long)Q * P * p.k));
  const int h0 = oh * p.stride_h - p.pad_h;  // the window's top-left corner in the input
  const int w0 = q * p.stride_w - p.pad_w;
  float sum = 0.0f;
  for (int c = 0; c < p.c; ++c) {  // channels accumulate into the same output
    const float* xc = x + ((long long)n * p.c + c) * p.h * p.w;
    const float* wc = w + ((long long)k * p.c + c) * p.r * p.s;
    for (int r = 0; r < p.r; ++r) {
      const int ih = h0 + r;  // direct: input row
      if (ih < 0 || ih >= p.h) continue;  // a row of zero padding
      for (int s = 0; s < p.s; ++s) {
        const int iw = w0 + s;
        if (iw >= 0 && iw < p.w) sum += xc[(long long)ih * p.w + iw] * wc[r * p.s + s];
      }
    }
  }
  y[idx] = sum;
}

__global__ void __launch_bounds__(256) conv_direct_small(const float* __restrict__ x, float* __restrict__ y,
                                                         ConvProblem p, int P, int Q) {
  extern __shared__ float s_tile[];  // one channel: tile_rows x tile_cols inputs
  const int tile_rows = (TILE_P - 1) * p.stride_h + p.r;
  const int tile_cols = (TILE_Q - 1) * p.stride_w + p.s;
  const int k_blocks = (p.k + K_PER_THREAD - 1) / K_PER_THREAD;
  const int n = blockIdx.z / k_blocks;
  const int k0 = (blockIdx.z % k_blocks) * K_PER_THREAD;
  const int p0 = blockIdx.y * TILE_P, q0 = blockIdx.x * TILE_Q;
  const int row0 = p0 * p.stride_h - p.pad_h, col0 = q0 * p.stride_w - p.pad_w;  // the tile's corner in x
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * THREADS_Q + tx;

  float acc[K_PER_THREAD][COLS_PER_THREAD];
#pragma unroll
  for (int kk = 0; kk < K_PER_THREAD; ++kk)
#pragma unroll
    for (int j = 0; j < COLS_PER_THREAD; ++j) acc[kk][j] = 0.0f;

  for (int c = 0; c < p.c; ++c) {
    const float* xc = x + ((long long)n * p.c + c) * p.h * p.w;
    for (int i = tid; i < tile_rows * tile_cols; i += THREADS_Q * TILE_P) {  // stage the tile, zero padding
      const int tr = i / tile_cols, tc = i % tile_cols;
      const int ih = row0 + tr, iw = col0 + tc;
      s_tile[i] = (ih >= 0 && ih < p.h && iw >= 0 && iw < p.w) ? xc[(long long)ih * p.w + iw] : 0.0f;
    }
    __syncthreads();  // small: the channel's tile is staged
    for (int r = 0; r < p.r; ++r) {
      const float* srow = s_tile + (ty * p.stride_h + r) * tile_cols;
      for (int s = 0; s < p.s; ++s) {
        float in[COLS_PER_THREAD];
#pragma unroll
        for (int j = 0; j < COLS_PER_THREAD; ++j) in[j] = srow[(tx + j * THREADS_Q) * p.stride_w + s];
        const int tap = (c * p.r + r) * p.s + s;
#pragma unroll
        for (int kk = 0; kk < K_PER_THREAD; ++kk) {
          if (k0 + kk < p.k) {
            const float f = c_w[(k0 + kk) * p.c * p.r * p.s + tap];  // the same for the whole block
#pragma unroll
            for (int j = 0; j < COLS_PER_THREAD; ++j) acc[kk][j] += in[j] * f;
          }
        }
      }
    }
    __syncthreads();  // small: done with the tile before the next channel overwrites it
  }
  const int oh = p0 + ty;
  if (oh >= P) return;
#pragma unroll
  for (int kk = 0; kk < K_PER_THREAD; ++kk) {
    if (k0 + kk >= p.k) break;
    float* yrow = y + (((long long)n * p.k + k0 + kk) * P + oh) * Q;
#pragma unroll
    for (int j = 0; j < COLS_PER_THREAD; ++j) {
      const int q = q0 + tx + j * THREADS_Q;
      if (q < Q) yrow[q] = acc[kk][j];
    }
  }
}

bool fits_small(const ConvProblem& p) {
  return p.filter_elements() <= std::size_t(kSmallTaps) && p.r <= kSmallMaxFilter && p.s <= kSmallMaxFilter &&
         p.stride_h <= kSmallMaxStride && p.stride_w <= kSmallMaxStride;
}

}  // namespace

void conv_direct(const float* d_x, const float* d_w, float* d_y, const ConvProblem& p, cudaStream_t stream) {
  validate(p);
  const int P = p.out_h(), Q = p.out_w();
  if (fits_small(p)) {
    // The filters go to constant memory on `stream`, after the kernels before that still read them.
    CONVLAB_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_w, d_w, p.filter_elements() * sizeof(float), 0,
                                               cudaMemcpyDeviceToDevice, stream));
    const int tile_rows = (TILE_P - 1) * p.stride_h + p.r, tile_cols = (TILE_Q - 1) * p.stride_w + p.s;
    const std::size_t shared = std::size_t(tile_rows) * tile_cols * sizeof(float);  // <= 45 KB
    const dim3 block(THREADS_Q, TILE_P);
    const dim3 grid((Q + TILE_Q - 1) / TILE_Q, (P + TILE_P - 1) / TILE_P,
                    p.n * ((p.k + K_PER_THREAD - 1) / K_PER_THREAD));
    conv_direct_small<<<grid, block, shared, stream>>>(d_x, d_y, p, P, Q);
    CONVLAB_CHECK_LAUNCH();
    return;
  }
  const long long total = (long long)p.output_elements();
  const int block = 256;
  conv_direct_naive<<<unsigned((total + block - 1) / block), block, 0, stream>>>(d_x, d_w, d_y, p, P, Q);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::lab06
