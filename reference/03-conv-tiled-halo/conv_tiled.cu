// Lab 03 — tiled convolution with halo cells (reference solution).
//
// Changed since lab 02: a block first copies the input its outputs need, its
// input tile with the halo, from global into shared memory, waits at a barrier,
// then computes from shared memory. Each input element is then read from global
// memory about once per block instead of once per tap. The filter stays in
// constant memory. Two ways to organise the threads, in 1D and in 2D:
//   conv1d_tiled_loop:   grid(ceil(n / TILE_1D)), block(TILE_1D); every thread loops over the tile
//   conv1d_tiled_groups: grid(ceil(n / TILE_1D)), block(TILE_1D); halos loaded by the first / last r threads
//   conv2d_tiled_in:     grid(ceil(w / OUT), ceil(h / OUT)), block(IN_TILE_DIM, IN_TILE_DIM),
//                        OUT = IN_TILE_DIM - 2r; the halo ring of threads only loads (PMPP fig. 7.12)
//   conv2d_tiled_out:    grid(ceil(w / OUT_TILE_DIM), ceil(h / OUT_TILE_DIM)), block(OUT_TILE_DIM, OUT_TILE_DIM);
//                        the threads along the block's edges also load the halo strips and corners
#include "lab03.hpp"

#include <convlab/check.hpp>

namespace convlab::lab03 {
namespace {

__constant__ float c_filter[kFilterCapacity];

// Enqueued on the kernel's stream: ordered after earlier work and before the launch.
void copy_filter(const float* h_filter, int taps, cudaStream_t stream) {
  CONVLAB_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_filter, h_filter, taps * sizeof(float), 0, cudaMemcpyHostToDevice,
                                             stream));
}

// An input element, or 0 for a ghost cell outside the image.
__device__ float load_or_zero(const float* __restrict__ in, int row, int col, int width, int height) {
  return (row >= 0 && row < height && col >= 0 && col < width) ? in[row * width + col] : 0.0f;
}

// The 2r+1 taps over a window of the tile that starts at s_window.
__device__ float dot_filter_1d(const float* s_window, int r) {
  float sum = 0.0f;
  for (int j = 0; j <= 2 * r; ++j) sum += s_window[j] * c_filter[j];
  return sum;
}

// The (2r+1)^2 taps over a window of the tile whose top-left element is s_window;
// the tile's rows are `stride` floats apart.
__device__ float dot_filter_2d(const float* s_window, int stride, int r) {
  const int fw = 2 * r + 1;
  float sum = 0.0f;
  for (int fr = 0; fr < fw; ++fr)
    for (int fc = 0; fc < fw; ++fc) sum += c_filter[fr * fw + fc] * s_window[fr * stride + fc];
  return sum;
}

// ---- 1D ------------------------------------------------------------------------------
// Tile element t holds input start - r + t: the block's TILE_1D inputs with r on each side.

__global__ void conv1d_tiled_loop_kernel(const float* __restrict__ in, float* __restrict__ out, int n, int r) {
  __shared__ float s_tile[TILE_1D + 2 * kMaxRadius1d];
  const int start = blockIdx.x * TILE_1D;  // the block's first output
  // Consecutive threads load consecutive elements (coalesced); one or two rounds.
  for (int t = threadIdx.x; t < TILE_1D + 2 * r; t += TILE_1D) {
    const int k = start - r + t;
    s_tile[t] = (k >= 0 && k < n) ? in[k] : 0.0f;  // ghost cells are stored as zeros
  }
  __syncthreads();  // loop: the whole tile is loaded before any thread reads its neighbours'
  const int i = start + threadIdx.x;
  if (i < n) out[i] = dot_filter_1d(&s_tile[threadIdx.x], r);
}

__global__ void conv1d_tiled_groups_kernel(const float* __restrict__ in, float* __restrict__ out, int n, int r) {
  __shared__ float s_tile[TILE_1D + 2 * kMaxRadius1d];
  const int t = threadIdx.x;
  const int start = blockIdx.x * TILE_1D;
  const int i = start + t;
  s_tile[r + t] = i < n ? in[i] : 0.0f;  // the body: one element per thread
  if (t < r) {  // the left halo: the first r threads
    const int left = start - r + t;
    s_tile[t] = left >= 0 ? in[left] : 0.0f;
  }
  if (t >= TILE_1D - r) {  // the right halo: the last r threads (2r <= TILE_1D, so not the same threads)
    const int right = i + r;
    s_tile[t + 2 * r] = right < n ? in[right] : 0.0f;
  }
  __syncthreads();  // groups: body and both halos are in place
  if (i < n) out[i] = dot_filter_1d(&s_tile[t], r);
}

// ---- 2D ------------------------------------------------------------------------------

// Blocks the size of the input tile (PMPP fig. 7.12). Thread (tx, ty) loads input
// (row, col); if it lies inside the output tile it then computes the output there.
__global__ void __launch_bounds__(IN_TILE_DIM * IN_TILE_DIM)
    conv2d_tiled_in_kernel(const float* __restrict__ in, float* __restrict__ out, int width, int height, int r) {
  __shared__ float s_in[IN_TILE_DIM][IN_TILE_DIM];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int out_tile = IN_TILE_DIM - 2 * r;
  const int col = static_cast<int>(blockIdx.x) * out_tile + tx - r;  // the input tile starts r before the output tile
  const int row = static_cast<int>(blockIdx.y) * out_tile + ty - r;
  s_in[ty][tx] = load_or_zero(in, row, col, width, height);
  __syncthreads();  // input-tile blocks: every element is loaded before the halo ring is switched off
  const int tile_col = tx - r, tile_row = ty - r;  // position in the output tile
  if (tile_col < 0 || tile_col >= out_tile || tile_row < 0 || tile_row >= out_tile) return;  // the halo ring
  if (row >= height || col >= width) return;  // past the image in the last tiles
  out[row * width + col] = dot_filter_2d(&s_in[tile_row][tile_col], IN_TILE_DIM, r);
}

// Blocks the size of the output tile. Thread (tx, ty) computes output (row, col);
// tile element (ty, tx) holds input (row - r, col - r) of the block's first thread:
// the body sits at (ty + r, tx + r), the halo strips and corners around it.
__global__ void __launch_bounds__(OUT_TILE_DIM * OUT_TILE_DIM)
    conv2d_tiled_out_kernel(const float* __restrict__ in, float* __restrict__ out, int width, int height, int r) {
  __shared__ float s_in[OUT_TILE_DIM + 2 * kMaxRadius2d][OUT_TILE_DIM + 2 * kMaxRadius2d];
  constexpr int kStride = OUT_TILE_DIM + 2 * kMaxRadius2d;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col = static_cast<int>(blockIdx.x) * OUT_TILE_DIM + tx;
  const int row = static_cast<int>(blockIdx.y) * OUT_TILE_DIM + ty;
  const bool top = ty < r, bottom = ty >= OUT_TILE_DIM - r, left = tx < r, right = tx >= OUT_TILE_DIM - r;
  s_in[ty + r][tx + r] = load_or_zero(in, row, col, width, height);  // the body: every thread
  // The halo strips: the first and last r rows and columns of threads load one more element each.
  if (top) s_in[ty][tx + r] = load_or_zero(in, row - r, col, width, height);
  if (bottom) s_in[ty + 2 * r][tx + r] = load_or_zero(in, row + r, col, width, height);
  if (left) s_in[ty + r][tx] = load_or_zero(in, row, col - r, width, height);
  if (right) s_in[ty + r][tx + 2 * r] = load_or_zero(in, row, col + r, width, height);
  // The halo corners: the r x r threads in each corner of the block load a fourth element.
  if (top && left) s_in[ty][tx] = load_or_zero(in, row - r, col - r, width, height);
  if (top && right) s_in[ty][tx + 2 * r] = load_or_zero(in, row - r, col + r, width, height);
  if (bottom && left) s_in[ty + 2 * r][tx] = load_or_zero(in, row + r, col - r, width, height);
  if (bottom && right) s_in[ty + 2 * r][tx + 2 * r] = load_or_zero(in, row + r, col + r, width, height);
  __syncthreads();  // output-tile blocks: the body, four strips and four corners are in place
  if (row >= height || col >= width) return;
  out[row * width + col] = dot_filter_2d(&s_in[ty][tx], kStride, r);
}

// How many tiles of `tile` cover `size` elements (without int overflow near 2^31).
unsigned tiles(int size, int tile) { return (size - 1) / tile + 1; }

// Both 1D kernels run one block of TILE_1D threads per output tile.
void launch_1d(void (*kernel)(const float*, float*, int, int), const float* d_in, const float* h_filter, float* d_out,
               const Conv1dProblem& p, cudaStream_t stream) {
  validate(p);
  copy_filter(h_filter, 2 * p.radius + 1, stream);
  kernel<<<tiles(p.n, TILE_1D), TILE_1D, 0, stream>>>(d_in, d_out, p.n, p.radius);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace

void conv1d_tiled_loop(const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& p,
                       cudaStream_t stream) {
  launch_1d(conv1d_tiled_loop_kernel, d_in, h_filter, d_out, p, stream);
}

void conv1d_tiled_groups(const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& p,
                         cudaStream_t stream) {
  launch_1d(conv1d_tiled_groups_kernel, d_in, h_filter, d_out, p, stream);
}

void conv2d_tiled_in(const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& p,
                     cudaStream_t stream) {
  validate(p);
  copy_filter(h_filter, (2 * p.radius + 1) * (2 * p.radius + 1), stream);
  const int out_tile = out_tile_of_in(p.radius);  // the grid steps by the output tile, not by the block
  const dim3 grid(tiles(p.width, out_tile), tiles(p.height, out_tile));
  conv2d_tiled_in_kernel<<<grid, dim3(IN_TILE_DIM, IN_TILE_DIM), 0, stream>>>(d_in, d_out, p.width, p.height,
                                                                              p.radius);
  CONVLAB_CHECK_LAUNCH();
}

void conv2d_tiled_out(const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& p,
                      cudaStream_t stream) {
  validate(p);
  copy_filter(h_filter, (2 * p.radius + 1) * (2 * p.radius + 1), stream);
  const dim3 grid(tiles(p.width, OUT_TILE_DIM), tiles(p.height, OUT_TILE_DIM));
  conv2d_tiled_out_kernel<<<grid, dim3(OUT_TILE_DIM, OUT_TILE_DIM), 0, stream>>>(d_in, d_out, p.width, p.height,
                                                                                p.radius);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::lab03
