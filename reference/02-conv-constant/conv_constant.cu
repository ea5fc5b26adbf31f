// Lab 02 — the filter in constant memory (reference solution).
//
// Changed since lab 01: the filter is no longer a kernel argument in global
// memory but the __constant__ array c_filter, which the launcher fills with
// cudaMemcpyToSymbolAsync before each launch. Every thread of a warp reads the
// same tap at the same time, which the constant cache serves as one broadcast.
// The rest is lab 01's kernel: one thread per output, zero padding.
//   conv1d: grid(ceil(n / 256)),                      block(256)
//   conv2d: grid(ceil(width / 32), ceil(height / 8)), block(32, 8)
#include "lab02.hpp"

#include <convlab/check.hpp>

namespace convlab::lab02 {
namespace {

constexpr int kBlock1d = 256;
constexpr int kBlockX = 32, kBlockY = 8;

// One buffer for both launchers, sized for the largest 2D filter (lab02.hpp).
__constant__ float c_filter[kFilterCapacity];

// The copy is enqueued on the kernel's stream, so it happens after earlier work on
// that stream and before this launch; the host buffer is free again on return.
void copy_filter(const float* h_filter, int taps, cudaStream_t stream) {
  CONVLAB_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_filter, h_filter, taps * sizeof(float), 0, cudaMemcpyHostToDevice,
                                             stream));
}

__global__ void conv1d_constant_kernel(const float* __restrict__ in, float* __restrict__ out, int n, int r) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float sum = 0.0f;
  for (int j = -r; j <= r; ++j) {
    const int k = i + j;
    if (k >= 0 && k < n) sum += in[k] * c_filter[j + r];  // the same c_filter[j + r] for the whole warp
  }
  out[i] = sum;
}

__global__ void conv2d_constant_kernel(const float* __restrict__ in, float* __restrict__ out, int width, int height,
                                       int r) {
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
      if (in_col >= 0 && in_col < width) sum += in[in_row * width + in_col] * c_filter[(i + r) * fw + (j + r)];
    }
  }
  out[row * width + col] = sum;
}

}  // namespace

void conv1d_constant(const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& p,
                     cudaStream_t stream) {
  validate(p);  // refuses a filter larger than c_filter before anything is copied
  copy_filter(h_filter, 2 * p.radius + 1, stream);
  const int grid = (p.n + kBlock1d - 1) / kBlock1d;
  conv1d_constant_kernel<<<grid, kBlock1d, 0, stream>>>(d_in, d_out, p.n, p.radius);
  CONVLAB_CHECK_LAUNCH();
}

void conv2d_constant(const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& p,
                     cudaStream_t stream) {
  validate(p);
  const int fw = 2 * p.radius + 1;
  copy_filter(h_filter, fw * fw, stream);
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((p.width + kBlockX - 1) / kBlockX, (p.height + kBlockY - 1) / kBlockY);
  conv2d_constant_kernel<<<grid, block, 0, stream>>>(d_in, d_out, p.width, p.height, p.radius);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::lab02
