// Lab 05 — the 3D seven-point stencil (your file).
//
// Four sweeps, from PMPP's naive kernel to register tiling:
//   stencil3d_naive:      grid(ceil(nx/32), ceil(ny/4), ceil(nz/2)), block(32, 4, 2) (PMPP fig. 8.6)
//   stencil3d_tiled:      grid(ceil(nx/6), ceil(ny/6), ceil(nz/6)), block(8, 8, 8): the block is
//                         the input tile, its inner 6^3 threads compute (PMPP fig. 8.8)
//   stencil3d_coarsened:  a 2D block = one plane of the input tile walks Z_PER_BLOCK planes with
//                         three planes in shared memory, shifted after each (PMPP fig. 8.10)
//   stencil3d_register:   the same walk, the previous and next planes in registers, only the
//                         current plane in shared memory (PMPP fig. 8.12)
//   stencil3d_steps:      double buffering over your fastest sweep
// Ghost cells (labs/05-stencil/lab05.hpp): Dirichlet holds `wall`, Neumann clamps the index,
// periodic wraps it. Run the checks: ctest --preset default -L lab05
#include "lab05.hpp"

#include <convlab/check.hpp>

#include <utility>

namespace convlab::lab05 {
namespace {

constexpr int IN_TILE_DIM = kTile3d + 2;  // 8: the graders expect 6^3 output tiles
constexpr int OUT_TILE_DIM = kTile3d;     // 6
constexpr int Z_PER_BLOCK = 32;           // planes each block of the z-walking kernels sweeps (your choice)

// The index a neighbour at i reads along a dimension of n cells, or -1 for a Dirichlet wall.
__host__ __device__ __forceinline__ int ghost(int i, int n, Boundary bc) {
  // TODO(student): as in stencil2d.cu (about 8 lines).
  (void)n;
  (void)bc;
  return i;
}

struct Dims {
  int nx, ny, nz;
  Boundary bc;
  float wall;
};

// u(x, y, z) with the boundary condition applied.
[[maybe_unused]] __device__ __forceinline__ float at(const float* __restrict__ u, int x, int y, int z, const Dims& d) {
  x = ghost(x, d.nx, d.bc);
  y = ghost(y, d.ny, d.bc);
  z = ghost(z, d.nz, d.bc);
  return (x < 0 || y < 0 || z < 0) ? d.wall : u[(static_cast<long long>(z) * d.ny + y) * d.nx + x];
}

__global__ void stencil3d_naive_kernel(const float* __restrict__ in, float* __restrict__ out, Dims d, Coeffs c) {
  // TODO(student): one thread per cell, seven reads through at() (about 8 lines).
  (void)in, (void)out, (void)d, (void)c;  // starter only: quiets "unused parameter" until you write this; delete it
}

__global__ void stencil3d_tiled_kernel(const float* __restrict__ in, float* __restrict__ out, Dims d, Coeffs c) {
  // TODO(student): PMPP fig. 8.8 in 3D (about 14 lines): __shared__ float s_in[8][8][8]; every
  // thread loads one cell of the input tile (ghosts included), barrier, the inner 6^3 compute.
  (void)in, (void)out, (void)d, (void)c;  // starter only: quiets "unused parameter" until you write this; delete it
}

__global__ void stencil3d_coarsened_kernel(const float* __restrict__ in, float* __restrict__ out, Dims d, Coeffs c) {
  // TODO(student): PMPP fig. 8.10 (about 25 lines). Shared planes s_prev, s_curr, s_next of the
  // input tile's size; load prev and curr; for each of the block's planes: load next, barrier,
  // compute (inner threads), barrier, then shift: prev <- curr, curr <- next.
  (void)in, (void)out, (void)d, (void)c;  // starter only: quiets "unused parameter" until you write this; delete it
}

__global__ void stencil3d_register_kernel(const float* __restrict__ in, float* __restrict__ out, Dims d, Coeffs c) {
  // TODO(student): PMPP fig. 8.12 (about 25 lines): as the coarsened kernel, but prev and next
  // are registers of each thread, and only the current plane is in shared memory.
  (void)in, (void)out, (void)d, (void)c;  // starter only: quiets "unused parameter" until you write this; delete it
}

Dims dims_of(const Grid3d& g) { return Dims{g.nx, g.ny, g.nz, g.bc, g.wall}; }

}  // namespace

void stencil3d_naive(const float* d_in, float* d_out, const Grid3d& g, const Coeffs& c, cudaStream_t stream) {
  validate(g);
  // TODO(student): cover the grid (1 line).
  const dim3 block(32, 4, 2);
  const dim3 grid(1, 1, 1);
  stencil3d_naive_kernel<<<grid, block, 0, stream>>>(d_in, d_out, dims_of(g), c);
  CONVLAB_CHECK_LAUNCH();
}

void stencil3d_tiled(const float* d_in, float* d_out, const Grid3d& g, const Coeffs& c, cudaStream_t stream) {
  validate(g);
  // TODO(student): one block of IN_TILE_DIM^3 threads per OUT_TILE_DIM^3 output tile (1 line).
  const dim3 block(IN_TILE_DIM, IN_TILE_DIM, IN_TILE_DIM);
  const dim3 grid(1, 1, 1);
  (void)OUT_TILE_DIM;
  stencil3d_tiled_kernel<<<grid, block, 0, stream>>>(d_in, d_out, dims_of(g), c);
  CONVLAB_CHECK_LAUNCH();
}

void stencil3d_coarsened(const float* d_in, float* d_out, const Grid3d& g, const Coeffs& c, cudaStream_t stream) {
  validate(g);
  // TODO(student): blocks of one input-tile plane; grid.z covers nz in Z_PER_BLOCK planes (2 lines).
  const dim3 block(32, 16);
  const dim3 grid(1, 1, 1);
  (void)Z_PER_BLOCK;
  stencil3d_coarsened_kernel<<<grid, block, 0, stream>>>(d_in, d_out, dims_of(g), c);
  CONVLAB_CHECK_LAUNCH();
}

void stencil3d_register(const float* d_in, float* d_out, const Grid3d& g, const Coeffs& c, cudaStream_t stream) {
  validate(g);
  // TODO(student): as stencil3d_coarsened (2 lines).
  const dim3 block(32, 16);
  const dim3 grid(1, 1, 1);
  stencil3d_register_kernel<<<grid, block, 0, stream>>>(d_in, d_out, dims_of(g), c);
  CONVLAB_CHECK_LAUNCH();
}

float* stencil3d_steps(float* d_u, float* d_tmp, const Grid3d& g, const Coeffs& c, int steps, cudaStream_t stream) {
  validate(g);
  validate_steps(steps);
  // TODO(student): double buffering over your fastest sweep (about 6 lines); see heat2d_steps.
  (void)d_tmp;
  (void)c;
  (void)stream;
  return d_u;
}

}  // namespace convlab::lab05
