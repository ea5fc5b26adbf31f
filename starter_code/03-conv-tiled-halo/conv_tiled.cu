// Lab 03 — tiled convolution with halo cells (your file).
//
// Changed since lab 02: a block first copies the input its outputs need, its
// input tile with the halo, from global into shared memory, waits at a barrier,
// then computes from shared memory. Each input element is then read from global
// memory about once per block instead of once per tap. The filter stays in
// constant memory (copy_filter below is done for you). The tile sizes are fixed
// by the contract, labs/03-conv-tiled-halo/lab03.hpp:
//   conv1d_tiled_loop:   grid(ceil(n / TILE_1D)), block(TILE_1D); every thread loops over the tile
//   conv1d_tiled_groups: grid(ceil(n / TILE_1D)), block(TILE_1D); halos loaded by the first / last r threads
//   conv2d_tiled_in:     grid(ceil(w / OUT), ceil(h / OUT)), block(IN_TILE_DIM, IN_TILE_DIM),
//                        OUT = IN_TILE_DIM - 2r; the halo ring of threads only loads (PMPP fig. 7.12)
//   conv2d_tiled_out:    grid(ceil(w / OUT_TILE_DIM), ceil(h / OUT_TILE_DIM)), block(OUT_TILE_DIM, OUT_TILE_DIM);
//                        some threads load several input elements (the halo)
// Ghost cells (outside the input) are zeros: store 0 in the tile for them.
// Run the checks: ctest --preset default -L lab03
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

// ---- 1D ------------------------------------------------------------------------------
// Tile element t holds input start - r + t, where start = blockIdx.x * TILE_1D is the
// block's first output: the block's TILE_1D inputs with r more on each side.

__global__ void conv1d_tiled_loop_kernel(const float* __restrict__ in, float* __restrict__ out, int n, int r) {
  __shared__ float s_tile[TILE_1D + 2 * kMaxRadius1d];
  // TODO(student): load the TILE_1D + 2r tile elements with a loop in which thread t
  // loads elements t, t + TILE_1D, ... (consecutive threads, consecutive addresses);
  // ghost cells become 0 (about 5 lines).
  // TODO(student): wait until the whole tile is loaded (1 line).
  // TODO(student): if this thread's output exists, store the sum over j in [0, 2r] of
  // s_tile[threadIdx.x + j] * c_filter[j] (about 5 lines).
  // starter only: quiets "unused parameter" until you write this; delete it
  (void)s_tile[0], (void)in, (void)out, (void)n, (void)r;
}

__global__ void conv1d_tiled_groups_kernel(const float* __restrict__ in, float* __restrict__ out, int n, int r) {
  __shared__ float s_tile[TILE_1D + 2 * kMaxRadius1d];
  // TODO(student): every thread loads the body element under its own output, at
  // s_tile[r + threadIdx.x] (2 lines); the first r threads load the left halo and the
  // last r threads the right halo, each one element (about 8 lines); ghost cells become 0.
  // TODO(student): the barrier, then the same sum as in the loop kernel (about 6 lines).
  // starter only: quiets "unused parameter" until you write this; delete it
  (void)s_tile[0], (void)in, (void)out, (void)n, (void)r;
}

// ---- 2D ------------------------------------------------------------------------------

// Blocks the size of the input tile (PMPP fig. 7.12): thread (tx, ty) loads the input
// element at row = blockIdx.y * OUT + ty - r, col = blockIdx.x * OUT + tx - r, with
// OUT = IN_TILE_DIM - 2r; after the barrier, the threads inside the output tile
// (r <= tx, ty < r + OUT) compute the output at (row, col).
__global__ void __launch_bounds__(IN_TILE_DIM * IN_TILE_DIM)
    conv2d_tiled_in_kernel(const float* __restrict__ in, float* __restrict__ out, int width, int height, int r) {
  __shared__ float s_in[IN_TILE_DIM][IN_TILE_DIM];
  // TODO(student): load one element per thread, 0 for a ghost cell (about 5 lines).
  // TODO(student): the barrier; then switch off the threads of the halo ring and those
  // past the image, and store the sum over (fr, fc) in [0, 2r]^2 of
  // c_filter[fr * (2r + 1) + fc] * s_in[ty - r + fr][tx - r + fc] (about 12 lines).
  // starter only: quiets "unused parameter" until you write this; delete it
  (void)s_in[0][0], (void)in, (void)out, (void)width, (void)height, (void)r;
}

// Blocks the size of the output tile: thread (tx, ty) computes the output at
// row = blockIdx.y * OUT_TILE_DIM + ty, col = blockIdx.x * OUT_TILE_DIM + tx. Tile element
// (i, j) holds input (row0 - r + i, col0 - r + j), where (row0, col0) is the block's first
// output: the body sits at s_in[ty + r][tx + r], the halo around it (r rows or columns
// on each side, and four r x r corners). Use the rows and columns up to OUT_TILE_DIM + 2r.
__global__ void __launch_bounds__(OUT_TILE_DIM * OUT_TILE_DIM)
    conv2d_tiled_out_kernel(const float* __restrict__ in, float* __restrict__ out, int width, int height, int r) {
  __shared__ float s_in[OUT_TILE_DIM + 2 * kMaxRadius2d][OUT_TILE_DIM + 2 * kMaxRadius2d];
  // TODO(student): load the (OUT_TILE_DIM + 2r)^2 input tile, 0 for ghost cells. Either
  // every thread loads its body element and the threads along the block's edges and in
  // its corners load the halo strips and corners (about 14 lines), or every thread
  // loops over the tile, as in conv1d_tiled_loop (about 8 lines). Mind the corners.
  // TODO(student): the barrier; then, if (row, col) is inside the image, store the sum
  // over (fr, fc) of c_filter[fr * (2r + 1) + fc] * s_in[ty + fr][tx + fc] (about 8 lines).
  // starter only: quiets "unused parameter" until you write this; delete it
  (void)s_in[0][0], (void)in, (void)out, (void)width, (void)height, (void)r;
}

// Both 1D kernels run one block of TILE_1D threads per output tile.
void launch_1d(void (*kernel)(const float*, float*, int, int), const float* d_in, const float* h_filter, float* d_out,
               const Conv1dProblem& p, cudaStream_t stream) {
  validate(p);
  copy_filter(h_filter, 2 * p.radius + 1, stream);
  // TODO(student): enough blocks of TILE_1D outputs to cover all n outputs (1 line).
  const unsigned grid = 1;
  kernel<<<grid, TILE_1D, 0, stream>>>(d_in, d_out, p.n, p.radius);
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
  // TODO(student): a grid that covers the image with output tiles of out_tile_of_in(r)
  // per side (careful: the block is larger than the tile it computes) (2 lines).
  const dim3 grid(1, 1);
  conv2d_tiled_in_kernel<<<grid, dim3(IN_TILE_DIM, IN_TILE_DIM), 0, stream>>>(d_in, d_out, p.width, p.height,
                                                                              p.radius);
  CONVLAB_CHECK_LAUNCH();
}

void conv2d_tiled_out(const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& p,
                      cudaStream_t stream) {
  validate(p);
  copy_filter(h_filter, (2 * p.radius + 1) * (2 * p.radius + 1), stream);
  // TODO(student): a grid that covers the image with output tiles of OUT_TILE_DIM per side (1 line).
  const dim3 grid(1, 1);
  conv2d_tiled_out_kernel<<<grid, dim3(OUT_TILE_DIM, OUT_TILE_DIM), 0, stream>>>(d_in, d_out, p.width, p.height,
                                                                                p.radius);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::lab03
