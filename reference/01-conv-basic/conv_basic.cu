// Lab 01 — naive 1D and 2D convolution (reference solution).
//
// One thread computes one output. The filter is read from global memory; inputs
// outside the array or image are ghost cells with the value 0.
//   conv1d: grid(ceil(n / 256)),                    block(256)
//   conv2d: grid(ceil(width / 32), ceil(height / 8)), block(32, 8)
// 32 threads along x make each warp read a contiguous 128-byte row segment;
// 8 rows keep the block at 256 threads, so an SM can hold many blocks.
#include "lab01.hpp"

#include <convlab/check.hpp>

namespace convlab::lab01 {
namespace {

constexpr int kBlock1d = 256;
constexpr int kBlockX = 32, kBlockY = 8;

__global__ void conv1d_naive_kernel(const float* __restrict__ in, const float* __restrict__ filter,
                                    float* __restrict__ out, int n, int r) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;  // the last block may run past the end
  float sum = 0.0f;
  for (int j = -r; j <= r; ++j) {
    const int k = i + j;
    if (k >= 0 && k < n) sum += in[k] * filter[j + r];  // ghost cells contribute 0
  }
  out[i] = sum;
}

__global__ void conv2d_naive_kernel(const float* __restrict__ in, const float* __restrict__ filter,
                                    float* __restrict__ out, int width, int height, int r) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col >= width || row >= height) return;
  const int fw = 2 * r + 1;
  float sum = 0.0f;
  for (int i = -r; i <= r; ++i) {
    const int in_row = row + i;
    if (in_row < 0 || in_row >= height) continue;  // a whole filter row of ghost cells
    for (int j = -r; j <= r; ++j) {
      const int in_col = col + j;
      if (in_col >= 0 && in_col < width) sum += in[in_row * width + in_col] * filter[(i + r) * fw + (j + r)];
    }
  }
  out[row * width + col] = sum;
}

}  // namespace

void conv1d_naive(const float* d_in, const float* d_filter, float* d_out, const Conv1dProblem& p,
                  cudaStream_t stream) {
  validate(p);
  const int grid = (p.n + kBlock1d - 1) / kBlock1d;
  conv1d_naive_kernel<<<grid, kBlock1d, 0, stream>>>(d_in, d_filter, d_out, p.n, p.radius);
  CONVLAB_CHECK_LAUNCH();
}

void conv2d_naive(const float* d_in, const float* d_filter, float* d_out, const Conv2dProblem& p,
                  cudaStream_t stream) {
  validate(p);
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((p.width + kBlockX - 1) / kBlockX, (p.height + kBlockY - 1) / kBlockY);
  conv2d_naive_kernel<<<grid, block, 0, stream>>>(d_in, d_filter, d_out, p.width, p.height, p.radius);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::lab01
