// Lab 05 — the 3D seven-point stencil (reference).
//
// Four sweeps, from PMPP's naive kernel to register tiling:
//   stencil3d_naive:      grid(ceil(nx/32), ceil(ny/4), ceil(nz/2)), block(32, 4, 2); seven
//                         global reads per output (PMPP fig. 8.6)
//   stencil3d_tiled:      grid(ceil(nx/6), ceil(ny/6), ceil(nz/6)), block(8, 8, 8): the block is
//                         the input tile, 6^3 of its 8^3 threads compute (42 %) (PMPP fig. 8.8)
//   stencil3d_coarsened:  grid(ceil(nx/30), ceil(ny/14), ceil(nz/Z_PER_BLOCK)), block(32, 16):
//                         the block is one plane of the input tile and walks Z_PER_BLOCK planes,
//                         three planes in shared memory, shifted after each (PMPP fig. 8.10)
//   stencil3d_register:   grid(ceil(nx/32), ceil(ny/16), ceil(nz/Z_PER_BLOCK)), block(32, 16):
//                         one thread per output column; z neighbours in registers, only the
//                         current plane (32 x 16 plus its halo, loaded by the edge threads) in
//                         shared memory (PMPP fig. 8.12, with the threads = output tile)
//   stencil3d_steps:      double buffering over stencil3d_register
// Ghost cells (lab05.hpp): Dirichlet holds `wall`, Neumann clamps the index, periodic wraps it.
#include "lab05.hpp"

#include <convlab/check.hpp>

#include <utility>

namespace convlab::lab05 {
namespace {

constexpr int IN_TILE_DIM = kTile3d + 2;  // 8
constexpr int OUT_TILE_DIM = kTile3d;     // 6
constexpr int Z_PER_BLOCK = 32;           // planes each block of the z-walking kernels sweeps
constexpr int CO_X = 32, CO_Y = 16;       // coarsened: the input tile's plane
constexpr int RT_X = 32, RT_Y = 16;       // register tiling: the output tile's plane

// The index a neighbour at i reads along a dimension of n cells, or -1 for a Dirichlet wall.
__host__ __device__ __forceinline__ int ghost(int i, int n, Boundary bc) {
  if (static_cast<unsigned>(i) < static_cast<unsigned>(n)) return i;
  if (bc == Boundary::periodic) {
    i %= n;
    return i < 0 ? i + n : i;
  }
  if (bc == Boundary::neumann) return i < 0 ? 0 : n - 1;
  return -1;
}

struct Dims {
  int nx, ny, nz;
  Boundary bc;
  float wall;
};

// u(x, y, z) with the boundary condition applied.
__device__ __forceinline__ float at(const float* __restrict__ u, int x, int y, int z, const Dims& d) {
  x = ghost(x, d.nx, d.bc);
  y = ghost(y, d.ny, d.bc);
  z = ghost(z, d.nz, d.bc);
  return (x < 0 || y < 0 || z < 0) ? d.wall : __ldg(&u[(static_cast<long long>(z) * d.ny + y) * d.nx + x]);
}

__device__ __forceinline__ long long index3(int x, int y, int z, const Dims& d) {
  return (static_cast<long long>(z) * d.ny + y) * d.nx + x;
}

__global__ void stencil3d_naive_kernel(const float* __restrict__ in, float* __restrict__ out, Dims d, Coeffs c) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= d.nx || y >= d.ny || z >= d.nz) return;
  out[index3(x, y, z, d)] = c.c0 * in[index3(x, y, z, d)] + c.cx * (at(in, x - 1, y, z, d) + at(in, x + 1, y, z, d)) +
                            c.cy * (at(in, x, y - 1, z, d) + at(in, x, y + 1, z, d)) +
                            c.cz * (at(in, x, y, z - 1, d) + at(in, x, y, z + 1, d));
}

__global__ void stencil3d_tiled_kernel(const float* __restrict__ in, float* __restrict__ out, Dims d, Coeffs c) {
  __shared__ float s_in[IN_TILE_DIM][IN_TILE_DIM][IN_TILE_DIM];
  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  const int x = blockIdx.x * OUT_TILE_DIM + tx - 1;
  const int y = blockIdx.y * OUT_TILE_DIM + ty - 1;
  const int z = blockIdx.z * OUT_TILE_DIM + tz - 1;
  s_in[tz][ty][tx] = at(in, x, y, z, d);
  __syncthreads();  // 3D tiled: the whole input tile is loaded
  const bool inner = tx >= 1 && tx < IN_TILE_DIM - 1 && ty >= 1 && ty < IN_TILE_DIM - 1 && tz >= 1 &&
                     tz < IN_TILE_DIM - 1;
  if (inner && x < d.nx && y < d.ny && z < d.nz)
    out[index3(x, y, z, d)] = c.c0 * s_in[tz][ty][tx] + c.cx * (s_in[tz][ty][tx - 1] + s_in[tz][ty][tx + 1]) +
                              c.cy * (s_in[tz][ty - 1][tx] + s_in[tz][ty + 1][tx]) +
                              c.cz * (s_in[tz - 1][ty][tx] + s_in[tz + 1][ty][tx]);
}

__global__ void __launch_bounds__(CO_X * CO_Y)
    stencil3d_coarsened_kernel(const float* __restrict__ in, float* __restrict__ out, Dims d, Coeffs c) {
  __shared__ float s_prev[CO_Y][CO_X];
  __shared__ float s_curr[CO_Y][CO_X];
  __shared__ float s_next[CO_Y][CO_X];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * (CO_X - 2) + tx - 1;
  const int y = blockIdx.y * (CO_Y - 2) + ty - 1;
  const int z0 = blockIdx.z * Z_PER_BLOCK;
  const int z_end = min(z0 + Z_PER_BLOCK, d.nz);
  const bool active = tx >= 1 && tx < CO_X - 1 && ty >= 1 && ty < CO_Y - 1 && x < d.nx && y < d.ny;
  s_prev[ty][tx] = at(in, x, y, z0 - 1, d);
  s_curr[ty][tx] = at(in, x, y, z0, d);
  for (int z = z0; z < z_end; ++z) {
    s_next[ty][tx] = at(in, x, y, z + 1, d);
    __syncthreads();  // coarsened: the three planes are loaded
    if (active)
      out[index3(x, y, z, d)] = c.c0 * s_curr[ty][tx] + c.cx * (s_curr[ty][tx - 1] + s_curr[ty][tx + 1]) +
                                c.cy * (s_curr[ty - 1][tx] + s_curr[ty + 1][tx]) +
                                c.cz * (s_prev[ty][tx] + s_next[ty][tx]);
    __syncthreads();  // coarsened: every thread is done with the planes
    // Slide the window one plane up: each thread moves only its own cell, so no barrier is
    // needed before the next plane is loaded into s_next.
    s_prev[ty][tx] = s_curr[ty][tx];  // plane shift: prev <- curr
    s_curr[ty][tx] = s_next[ty][tx];  // plane shift: curr <- next
  }
}

// u(x, y, z) for the register kernel: straight from memory when the block does not touch the
// grid's x-y boundary (`inner`) and z lies inside the grid, through the boundary condition otherwise.
__device__ __forceinline__ float load(const float* __restrict__ in, int x, int y, int z, const Dims& d, bool inner) {
  if (inner && static_cast<unsigned>(z) < static_cast<unsigned>(d.nz)) return __ldg(&in[index3(x, y, z, d)]);
  return at(in, x, y, z, d);
}

// Register tiling with loads issued one plane ahead: while plane z is computed, plane z+2 (the
// next `next`) and the halo of plane z+1 are already on their way, so a DRAM access has a whole
// iteration to arrive instead of stalling the block at its first barrier.
__global__ void __launch_bounds__(RT_X * RT_Y, 4)
    stencil3d_register_kernel(const float* __restrict__ in, float* __restrict__ out, Dims d, Coeffs c) {
  __shared__ float s_curr[RT_Y + 2][RT_X + 2];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * RT_X + tx;
  const int y = blockIdx.y * RT_Y + ty;
  const int z0 = blockIdx.z * Z_PER_BLOCK;
  const int z_end = min(z0 + Z_PER_BLOCK, d.nz);
  const bool active = x < d.nx && y < d.ny;
  const int bx = blockIdx.x, by = blockIdx.y;
  const bool inner = bx > 0 && (bx + 1) * RT_X < d.nx && by > 0 && (by + 1) * RT_Y < d.ny;
  // The edge threads also load the halo: the cell left of the first column, right of the last,
  // below the first row, above the last.
  const bool left = tx == 0, right = tx == RT_X - 1, down = ty == 0, up = ty == RT_Y - 1;
  // Threads past the grid's edge still load (a ghost value) and reach every barrier: their
  // cells are the halo of the last active column or row.
  float prev = load(in, x, y, z0 - 1, d, inner);
  float curr = load(in, x, y, z0, d, inner);
  float next = load(in, x, y, z0 + 1, d, inner);
  float h_left = left ? load(in, x - 1, y, z0, d, inner) : 0.0f;
  float h_right = right ? load(in, x + 1, y, z0, d, inner) : 0.0f;
  float h_down = down ? load(in, x, y - 1, z0, d, inner) : 0.0f;
  float h_up = up ? load(in, x, y + 1, z0, d, inner) : 0.0f;
  for (int z = z0; z < z_end; ++z) {
    // Prefetch: plane z+2 for the next iteration's `next`, and plane z+1's halo.
    const bool more = z + 1 < z_end;
    const float next2 = more ? load(in, x, y, z + 2, d, inner) : 0.0f;
    const float n_left = more && left ? load(in, x - 1, y, z + 1, d, inner) : 0.0f;
    const float n_right = more && right ? load(in, x + 1, y, z + 1, d, inner) : 0.0f;
    const float n_down = more && down ? load(in, x, y - 1, z + 1, d, inner) : 0.0f;
    const float n_up = more && up ? load(in, x, y + 1, z + 1, d, inner) : 0.0f;
    s_curr[ty + 1][tx + 1] = curr;
    if (left) s_curr[ty + 1][0] = h_left;
    if (right) s_curr[ty + 1][RT_X + 1] = h_right;
    if (down) s_curr[0][tx + 1] = h_down;
    if (up) s_curr[RT_Y + 1][tx + 1] = h_up;
    __syncthreads();  // register: the current plane and its halo are loaded
    if (active)
      out[index3(x, y, z, d)] = c.c0 * curr + c.cx * (s_curr[ty + 1][tx] + s_curr[ty + 1][tx + 2]) +
                                c.cy * (s_curr[ty][tx + 1] + s_curr[ty + 2][tx + 1]) + c.cz * (prev + next);
    __syncthreads();  // register: every thread is done with the plane before it is overwritten
    prev = curr;  // the z window slides in registers
    curr = next;
    next = next2;
    h_left = n_left;
    h_right = n_right;
    h_down = n_down;
    h_up = n_up;
  }
}

Dims dims_of(const Grid3d& g) { return Dims{g.nx, g.ny, g.nz, g.bc, g.wall}; }

void launch_register(const float* in, float* out, const Grid3d& g, const Coeffs& c, cudaStream_t stream) {
  const dim3 block(RT_X, RT_Y);
  const dim3 grid((g.nx + RT_X - 1) / RT_X, (g.ny + RT_Y - 1) / RT_Y, (g.nz + Z_PER_BLOCK - 1) / Z_PER_BLOCK);
  stencil3d_register_kernel<<<grid, block, 0, stream>>>(in, out, dims_of(g), c);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace

void stencil3d_naive(const float* d_in, float* d_out, const Grid3d& g, const Coeffs& c, cudaStream_t stream) {
  validate(g);
  const dim3 block(32, 4, 2);
  const dim3 grid((g.nx + 31) / 32, (g.ny + 3) / 4, (g.nz + 1) / 2);
  stencil3d_naive_kernel<<<grid, block, 0, stream>>>(d_in, d_out, dims_of(g), c);
  CONVLAB_CHECK_LAUNCH();
}

void stencil3d_tiled(const float* d_in, float* d_out, const Grid3d& g, const Coeffs& c, cudaStream_t stream) {
  validate(g);
  const dim3 block(IN_TILE_DIM, IN_TILE_DIM, IN_TILE_DIM);
  const dim3 grid((g.nx + OUT_TILE_DIM - 1) / OUT_TILE_DIM, (g.ny + OUT_TILE_DIM - 1) / OUT_TILE_DIM,
                  (g.nz + OUT_TILE_DIM - 1) / OUT_TILE_DIM);
  stencil3d_tiled_kernel<<<grid, block, 0, stream>>>(d_in, d_out, dims_of(g), c);
  CONVLAB_CHECK_LAUNCH();
}

void stencil3d_coarsened(const float* d_in, float* d_out, const Grid3d& g, const Coeffs& c, cudaStream_t stream) {
  validate(g);
  const dim3 block(CO_X, CO_Y);
  const dim3 grid((g.nx + CO_X - 3) / (CO_X - 2), (g.ny + CO_Y - 3) / (CO_Y - 2),
                  (g.nz + Z_PER_BLOCK - 1) / Z_PER_BLOCK);
  stencil3d_coarsened_kernel<<<grid, block, 0, stream>>>(d_in, d_out, dims_of(g), c);
  CONVLAB_CHECK_LAUNCH();
}

void stencil3d_register(const float* d_in, float* d_out, const Grid3d& g, const Coeffs& c, cudaStream_t stream) {
  validate(g);
  launch_register(d_in, d_out, g, c, stream);
}

float* stencil3d_steps(float* d_u, float* d_tmp, const Grid3d& g, const Coeffs& c, int steps, cudaStream_t stream) {
  validate(g);
  validate_steps(steps);
  float* cur = d_u;
  float* nxt = d_tmp;
  for (int t = 0; t < steps; ++t) {
    launch_register(cur, nxt, g, c, stream);  // steps: read the old state, write the new one
    std::swap(cur, nxt);  // double buffering
  }
  return cur;
}

}  // namespace convlab::lab05
