// Lab 04 — tiled convolution using the caches for halo cells (reference solution).
//
// PMPP figure 7.15: the input tile is the output tile. Each thread stages one input
// in shared memory; a tap that falls inside the tile reads shared memory, a tap
// outside it (a halo cell) reads global memory, where it is most likely an L1 or L2
// hit because the neighbouring block loads the same element as part of its own tile.
// Ghost cells (outside the array or image) are skipped. The filter is in constant memory.
//   conv1d: grid(ceil(n / TILE_1D)),                            block(TILE_1D)
//   conv2d: grid(ceil(width / TILE_DIM), ceil(height / TILE_DIM)), block(TILE_DIM, TILE_DIM)
// Compared with lab 03 (explicit halo): no thread only loads, the tile is a power of
// two on every side, and shared memory holds TILE_DIM^2 floats whatever the radius.
#include "lab04.hpp"

#include <convlab/check.hpp>

namespace convlab::lab04 {
namespace {

constexpr int TILE_1D = kTile1d;
constexpr int TILE_DIM = kTileDim;
constexpr int MAX_TAPS_1D = 2 * kMaxRadius + 1;

__constant__ float c_filter1d[MAX_TAPS_1D];
__constant__ float c_filter2d[MAX_TAPS_1D * MAX_TAPS_1D];

__global__ void conv1d_cached_kernel(const float* __restrict__ in, float* __restrict__ out, int n, int r) {
  __shared__ float s_tile[TILE_1D];
  const int tx = threadIdx.x;
  const int i = blockIdx.x * TILE_1D + tx;
  s_tile[tx] = i < n ? in[i] : 0.0f;  // past the end: a ghost cell, 0
  __syncthreads();  // 1D: the whole tile is loaded
  if (i >= n) return;
  float sum = 0.0f;
  for (int j = -r; j <= r; ++j) {
    const int t = tx + j;  // the tap's position in the tile
    const float f = c_filter1d[j + r];
    if (t >= 0 && t < TILE_1D) {
      sum += s_tile[t] * f;  // interior: shared memory
    } else {
      const int k = i + j;  // halo: global memory, served by L1/L2
      if (k >= 0 && k < n) sum += in[k] * f;
    }
  }
  out[i] = sum;
}

__global__ void conv2d_cached_kernel(const float* __restrict__ in, float* __restrict__ out, int width, int height,
                                     int r) {
  __shared__ float s_tile[TILE_DIM][TILE_DIM];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col = blockIdx.x * TILE_DIM + tx;
  const int row = blockIdx.y * TILE_DIM + ty;
  s_tile[ty][tx] = (row < height && col < width) ? in[row * width + col] : 0.0f;
  __syncthreads();  // 2D: the whole tile is loaded
  if (row >= height || col >= width) return;
  const int fw = 2 * r + 1;
  float sum = 0.0f;
  for (int i = -r; i <= r; ++i) {
    const int in_row = row + i;
    if (in_row < 0 || in_row >= height) continue;  // a whole filter row of ghost cells
    const int sy = ty + i;
    const bool row_in_tile = sy >= 0 && sy < TILE_DIM;
    for (int j = -r; j <= r; ++j) {
      const int sx = tx + j;
      const float f = c_filter2d[(i + r) * fw + (j + r)];
      if (row_in_tile && sx >= 0 && sx < TILE_DIM) {
        sum += s_tile[sy][sx] * f;  // interior of the tile: shared memory
      } else {
        const int in_col = col + j;  // halo cell: global memory, an L1/L2 hit most of the time
        if (in_col >= 0 && in_col < width) sum += in[in_row * width + in_col] * f;
      }
    }
  }
  out[row * width + col] = sum;
}

}  // namespace

void conv1d_cached(const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& p,
                   cudaStream_t stream) {
  validate(p);
  // Ordered on `stream`: the copy waits for earlier kernels that read the old filter.
  CONVLAB_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_filter1d, h_filter, (2 * p.radius + 1) * sizeof(float), 0,
                                             cudaMemcpyHostToDevice, stream));
  const int grid = (p.n + TILE_1D - 1) / TILE_1D;
  conv1d_cached_kernel<<<grid, TILE_1D, 0, stream>>>(d_in, d_out, p.n, p.radius);
  CONVLAB_CHECK_LAUNCH();
}

void conv2d_cached(const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& p,
                   cudaStream_t stream) {
  validate(p);
  const int fw = 2 * p.radius + 1;
  CONVLAB_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_filter2d, h_filter, std::size_t(fw) * fw * sizeof(float), 0,
                                             cudaMemcpyHostToDevice, stream));
  const dim3 block(TILE_DIM, TILE_DIM);
  const dim3 grid((p.width + TILE_DIM - 1) / TILE_DIM, (p.height + TILE_DIM - 1) / TILE_DIM);
  conv2d_cached_kernel<<<grid, block, 0, stream>>>(d_in, d_out, p.width, p.height, p.radius);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::lab04
