// Lab 04 — tiled convolution using the caches for halo cells (your file).
//
// PMPP figure 7.15: the input tile is the output tile. Each thread stages one input
// in shared memory; a tap that falls inside the tile reads shared memory, a tap
// outside it (a halo cell) reads global memory, where the caches most likely hold it
// already. Ghost cells (outside the array or image) count as 0. The filter is in
// constant memory.
//   conv1d: grid(ceil(n / TILE_1D)),                            block(TILE_1D)
//   conv2d: grid(ceil(width / TILE_DIM), ceil(height / TILE_DIM)), block(TILE_DIM, TILE_DIM)
// The contract (what the graders call) is labs/04-conv-cached-halo/lab04.hpp.
// Run the checks: ctest --preset default -L lab04
#include "lab04.hpp"

#include <convlab/check.hpp>

namespace convlab::lab04 {
namespace {

constexpr int TILE_1D = kTile1d;    // the graders expect these tile sizes
constexpr int TILE_DIM = kTileDim;
constexpr int MAX_TAPS_1D = 2 * kMaxRadius + 1;

__constant__ float c_filter1d[MAX_TAPS_1D];
__constant__ float c_filter2d[MAX_TAPS_1D * MAX_TAPS_1D];

// out[i] = sum over j in [-r, r] of in[i + j] * c_filter1d[j + r], in[k] = 0 outside [0, n).
__global__ void conv1d_cached_kernel(const float* __restrict__ in, float* __restrict__ out, int n, int r) {
  // TODO(student): declare the tile, __shared__ float s_tile[TILE_1D]; stage this thread's
  // input in it (0 past the end of the array) and wait for the whole tile; then sum the 2r+1
  // taps: from s_tile when the tap lies inside this block's tile, from global memory (in[])
  // when it is a halo cell, skipping ghost cells (about 17 lines). Every thread must reach
  // the barrier: return only after it.
  (void)in, (void)out, (void)n, (void)r;  // starter only: quiets "unused parameter" until you write this; delete it
}

// out[row][col] = sum over (i, j) in [-r, r]^2 of in[row + i][col + j] * c_filter2d[(i + r) * (2r + 1) + (j + r)].
__global__ void conv2d_cached_kernel(const float* __restrict__ in, float* __restrict__ out, int width, int height,
                                     int r) {
  // TODO(student): PMPP figure 7.15 (about 26 lines).
  //  - declare the tile, __shared__ float s_tile[TILE_DIM][TILE_DIM];
  //  - stage in[row][col] in s_tile[threadIdx.y][threadIdx.x] (0 outside the image) and wait;
  //  - for each tap, read s_tile if (threadIdx.y + i, threadIdx.x + j) lies inside the tile,
  //    otherwise read in[] (a halo cell, an L1/L2 hit) unless it is a ghost cell;
  //  - compute in signed int: threadIdx is unsigned, and threadIdx.x + j must be able to be -1.
  // starter only: quiets "unused parameter" until you write this; delete it
  (void)in, (void)out, (void)width, (void)height, (void)r;
}

}  // namespace

void conv1d_cached(const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& p,
                   cudaStream_t stream) {
  validate(p);
  // On `stream`, so the copy waits for the kernels before it that still read the old filter.
  CONVLAB_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_filter1d, h_filter, (2 * p.radius + 1) * sizeof(float), 0,
                                             cudaMemcpyHostToDevice, stream));
  // TODO(student): one block of TILE_1D threads per tile, enough tiles to cover n (1 line).
  const int grid = 1;
  conv1d_cached_kernel<<<grid, TILE_1D, 0, stream>>>(d_in, d_out, p.n, p.radius);
  CONVLAB_CHECK_LAUNCH();
}

void conv2d_cached(const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& p,
                   cudaStream_t stream) {
  validate(p);
  const int fw = 2 * p.radius + 1;
  CONVLAB_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_filter2d, h_filter, std::size_t(fw) * fw * sizeof(float), 0,
                                             cudaMemcpyHostToDevice, stream));
  // TODO(student): TILE_DIM x TILE_DIM threads per block, a grid that covers the image (2 lines).
  const dim3 block(TILE_DIM, TILE_DIM);
  const dim3 grid(1, 1);
  conv2d_cached_kernel<<<grid, block, 0, stream>>>(d_in, d_out, p.width, p.height, p.radius);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::lab04
