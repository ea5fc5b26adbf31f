// Lab 05 — the 2D five-point stencil of the heat equation (your file).
//
// PMPP chapter 8: a stencil is a convolution whose weights come from a discretised PDE, swept
// many times over a grid whose edges follow a boundary condition. Four ways to sweep it:
//   heat2d_naive:    grid(ceil(nx/32), ceil(ny/8)), block(32, 8); one thread per output,
//                    five global reads each (PMPP fig. 8.6)
//   heat2d_tiled:    grid(ceil(nx/16), ceil(ny/16)), block(18, 18); the block is the input
//                    tile, the inner 16 x 16 threads compute (PMPP fig. 8.8)
//   heat2d_steps:    `steps` sweeps with double buffering (use your fastest sweep)
//   heat2d_temporal: extra credit — several steps fused in one launch (temporal blocking)
// Ghost cells (labs/05-stencil/lab05.hpp): Dirichlet holds `wall`, Neumann clamps the index,
// periodic wraps it. Run the checks: ctest --preset default -L lab05
#include "lab05.hpp"

#include <convlab/check.hpp>

#include <utility>

namespace convlab::lab05 {
namespace {

constexpr int IN_TILE_DIM = kTile2d + 2;  // 18: the graders expect 16 x 16 output tiles
[[maybe_unused]] constexpr int OUT_TILE_DIM = kTile2d;    // 16

// The index a neighbour at i reads along a dimension of n cells, or -1 for a Dirichlet wall.
// It must work for any i: a tile reaches beyond the grid by more than one cell when the grid
// is smaller than the tile.
__host__ __device__ __forceinline__ int ghost(int i, int n, Boundary bc) {
  // TODO(student): inside [0, n) return i; periodic: wrap i into [0, n) (careful: % of a
  // negative number is negative in C++); Neumann: clamp to 0 or n-1; Dirichlet: -1 (about 8 lines).
  (void)n;
  (void)bc;
  return i;
}

// u(x, y) with the boundary condition applied.
[[maybe_unused]] __device__ __forceinline__ float at(const float* __restrict__ u, int x, int y, int nx, int ny, Boundary bc,
                                    float wall) {
  x = ghost(x, nx, bc);
  y = ghost(y, ny, bc);
  return (x < 0 || y < 0) ? wall : u[static_cast<long long>(y) * nx + x];
}

// out = c0 u + cx (left + right) + cy (up + down), neighbours through at().
__global__ void heat2d_naive_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny,
                                    Boundary bc, float wall, Coeffs c) {
  // TODO(student): one thread per cell; return if outside the grid; five reads (about 7 lines).
  // starter only: quiets "unused parameter" until you write this; delete it
  (void)in, (void)out, (void)nx, (void)ny, (void)bc, (void)wall, (void)c;
}

__global__ void heat2d_tiled_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny,
                                    Boundary bc, float wall, Coeffs c) {
  // TODO(student): PMPP fig. 8.8 (about 12 lines).
  //  - __shared__ float s_in[IN_TILE_DIM][IN_TILE_DIM];
  //  - this thread's input cell is (blockIdx * OUT_TILE_DIM + threadIdx - 1): load it with at(),
  //    so ghost cells are in the tile like any other cell, and wait for the whole tile;
  //  - only the inner threads (1 .. IN_TILE_DIM-2 in x and y) whose cell is inside the grid
  //    compute, from s_in alone.
  // starter only: quiets "unused parameter" until you write this; delete it
  (void)in, (void)out, (void)nx, (void)ny, (void)bc, (void)wall, (void)c;
}

}  // namespace

void heat2d_naive(const float* d_in, float* d_out, const Grid2d& g, const Coeffs& c, cudaStream_t stream) {
  validate(g);
  // TODO(student): a grid of 32 x 8 blocks that covers the nx x ny cells (2 lines).
  const dim3 block(32, 8);
  const dim3 grid(1, 1);
  heat2d_naive_kernel<<<grid, block, 0, stream>>>(d_in, d_out, g.nx, g.ny, g.bc, g.wall, c);
  CONVLAB_CHECK_LAUNCH();
}

void heat2d_tiled(const float* d_in, float* d_out, const Grid2d& g, const Coeffs& c, cudaStream_t stream) {
  validate(g);
  // TODO(student): one block of IN_TILE_DIM x IN_TILE_DIM threads per OUT_TILE_DIM x OUT_TILE_DIM
  // output tile (2 lines).
  const dim3 block(IN_TILE_DIM, IN_TILE_DIM);
  const dim3 grid(1, 1);
  heat2d_tiled_kernel<<<grid, block, 0, stream>>>(d_in, d_out, g.nx, g.ny, g.bc, g.wall, c);
  CONVLAB_CHECK_LAUNCH();
}

float* heat2d_steps(float* d_u, float* d_tmp, const Grid2d& g, const Coeffs& c, int steps, cudaStream_t stream) {
  validate(g);
  validate_steps(steps);
  // TODO(student): double buffering (about 6 lines): each step reads one buffer and writes the
  // other (never in place: a thread would read neighbours that another thread has already
  // advanced), then the two pointers swap; return the one that holds the last state.
  (void)d_tmp;
  (void)c;
  (void)stream;
  return d_u;
}

float* heat2d_temporal(float* d_u, float* d_tmp, const Grid2d& g, const Coeffs& c, int steps, cudaStream_t stream) {
  validate(g);
  validate_steps(steps);
  // TODO(student, extra credit): fuse several steps per launch (the handout's "Temporal
  // blocking"): load a tile with a halo as deep as the steps fused, advance it in shared memory,
  // write only the cells still valid; loop over launches until `steps` are done.
  (void)d_tmp;
  (void)c;
  (void)stream;
  return d_u;
}

}  // namespace convlab::lab05
