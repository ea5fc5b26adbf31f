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
//   stencil3d_register:   grid(ceil(nx/64), ceil(ny/16), ceil(nz/Z_PER_BLOCK)), block(64, 4):
//                         each thread owns 4 rows of one column; z neighbours in registers
//                         (a ring of 5 planes, 2 of them still in flight), only the current
//                         plane (64 x 16 plus its halo) in shared memory, double-buffered
//                         (PMPP fig. 8.12, tuned for bandwidth: see the section below)
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
constexpr int RT_X = 64, RT_Y = 4;        // register tiling: the block (RT_ROWS rows per thread)

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

// --- register tiling, tuned for bandwidth ------------------------------------------------------
// Threads (RT_X, RT_Y); each thread owns one column x and RT_ROWS consecutive rows, so a block's
// output tile is RT_X x RT_TY cells of each plane, and it walks Z_PER_BLOCK planes up z.
//   - z neighbours: in registers. A thread keeps a ring of 5 planes of its own cells: prev
//     (z-1), curr (z), next (z+1) and RT_AHEAD = 2 planes still in flight from memory. The loop
//     is unrolled by the ring's length, so the window slides by renaming registers: no register
//     move ever waits for a load that is still under way.
//   - y neighbours of the thread's own rows: in registers too (its rows are consecutive); only
//     its first and last row read the row below / above from shared memory.
//   - x neighbours: the current plane in shared memory, double-buffered, so one barrier per
//     plane suffices (plane z is written to one buffer while plane z-1 may still be read from
//     the other).
//   - the plane's halo (2 columns of RT_TY cells, 2 rows of RT_X cells): one cell per thread of
//     the first 2 * (RT_X + RT_TY) threads, so the two rows are coalesced loads and no warp
//     diverges on a halo role.
//   - boundary condition: x and y do not change while a block walks up z, so ghost() runs once
//     per loaded cell per thread, before the walk, and leaves an offset within a plane (-1 for a
//     Dirichlet wall); z is resolved once per plane for the whole block. The walk has no
//     boundary code but a select for the wall, and the update none at all.
//   - memory-level parallelism: each thread keeps RT_AHEAD = 2 planes of its RT_ROWS (+ halo)
//     loads in flight while it computes, about 40 B: about 50 KB per SM at 1280 threads.
constexpr int RT_ROWS = 4;                                       // rows per thread
constexpr int RT_TY = RT_Y * RT_ROWS;                            // rows of the output tile: 16
constexpr int RT_THREADS = RT_X * RT_Y;                          // 256
constexpr int RT_HALO = 2 * (RT_X + RT_TY);                      // halo cells of one plane: 160
constexpr int RT_H = (RT_HALO + RT_THREADS - 1) / RT_THREADS;    // halo cells per thread: 1
constexpr int RT_AHEAD = 2;                                      // planes in flight beyond `next`
constexpr int RT_SX = RT_X + 2;                                  // a shared row: tile + halo

// The cells of one plane that a thread loads: its RT_ROWS own cells and its RT_H halo cells.
struct Plane {
  float c[RT_ROWS];
  float h[RT_H];
};

// Where a thread's cells are, with the boundary condition already applied.
struct Cells {
  int o[RT_ROWS];  // the own cells' offsets within a plane (ghost-resolved), or -1: the wall
  int rows;        // how many own cells are outputs (inside the grid): rows 0 .. rows-1
  int hs[RT_H];    // the halo cell's index in the shared plane, or -1: no halo cell
  int ho[RT_H];    // its offset within a plane (ghost-resolved), or -1: the wall
};

// The offset of cell (x, y) within a plane after the boundary condition, or -1 for the wall.
__device__ __forceinline__ int plane_offset(int x, int y, const Dims& d) {
  x = ghost(x, d.nx, d.bc);
  y = ghost(y, d.ny, d.bc);
  return (x < 0 || y < 0) ? -1 : y * d.nx + x;
}

// Loads plane z's cells (the halo too when `halo`). No branch per cell: a Dirichlet ghost is a
// select, and the plane a ghost z reads is decided once for the whole block.
__device__ __forceinline__ void load_plane(Plane& p, const float* __restrict__ in, int z, const Cells& t,
                                           const Dims& d, bool halo) {
  const int gz = ghost(z, d.nz, d.bc);  // the same for the whole block; -1: a Dirichlet wall plane
  const float* plane = in + (gz < 0 ? 0 : gz) * (d.nx * d.ny);
#pragma unroll
  for (int r = 0; r < RT_ROWS; ++r) p.c[r] = (gz < 0 || t.o[r] < 0) ? d.wall : __ldg(plane + t.o[r]);
  if (!halo) return;
#pragma unroll
  for (int j = 0; j < RT_H; ++j)
    if (t.hs[j] >= 0) p.h[j] = (gz < 0 || t.ho[j] < 0) ? d.wall : __ldg(plane + t.ho[j]);
}

// One plane of the walk: issue the load of plane z + 1 + RT_AHEAD into `fresh`, publish `curr`
// (with its halo) in shared memory, and compute plane z from prev / curr / next.
__device__ __forceinline__ void register_step(int z, int z_end, const Plane& prev, const Plane& curr, const Plane& next,
                                              Plane& fresh, float (*s)[RT_TY + 2][RT_SX], int buf,
                                              const float* __restrict__ in, float* __restrict__ out, const Cells& t,
                                              const Dims& d, const Coeffs& c) {
  // The last plane any step of this block reads is z_end (the `next` of plane z_end - 1).
  if (z + 1 + RT_AHEAD <= z_end) load_plane(fresh, in, z + 1 + RT_AHEAD, t, d, true);
  const int tx = threadIdx.x, row0 = threadIdx.y * RT_ROWS + 1;  // the thread's first row in the shared plane
  float(*sp)[RT_SX] = s[buf];
#pragma unroll
  for (int r = 0; r < RT_ROWS; ++r) sp[row0 + r][tx + 1] = curr.c[r];
#pragma unroll
  for (int j = 0; j < RT_H; ++j)
    if (t.hs[j] >= 0) (&sp[0][0])[t.hs[j]] = curr.h[j];
  // With two buffers one barrier per plane is enough: the buffer written here was last read
  // in the step before the previous one, and every thread has passed a barrier since.
  __syncthreads();  // register: the current plane and its halo are loaded
  float* o = out + z * (d.nx * d.ny);
#pragma unroll
  for (int r = 0; r < RT_ROWS; ++r) {
    const float down = r > 0 ? curr.c[r - 1] : sp[row0 - 1][tx + 1];  // y - 1
    const float up = r + 1 < RT_ROWS ? curr.c[r + 1] : sp[row0 + RT_ROWS][tx + 1];  // y + 1
    const float v = c.c0 * curr.c[r] + c.cx * (sp[row0 + r][tx] + sp[row0 + r][tx + 2]) + c.cy * (down + up) +
                    c.cz * (prev.c[r] + next.c[r]);
    if (r < t.rows) o[t.o[r]] = v;  // an output cell is inside the grid: its offset is its own
  }
}

__global__ void __launch_bounds__(RT_THREADS, 5)
    stencil3d_register_kernel(const float* __restrict__ in, float* __restrict__ out, Dims d, Coeffs c) {
  __shared__ float s_curr[2][RT_TY + 2][RT_SX];  // the current plane with its halo, double-buffered
  const int x0 = blockIdx.x * RT_X, y0 = blockIdx.y * RT_TY;
  const int z0 = blockIdx.z * Z_PER_BLOCK;
  const int z_end = min(z0 + Z_PER_BLOCK, d.nz);
  // Threads past the grid's edge still load (a ghost value) and reach every barrier: their
  // cells are the halo of the last active column or row.
  Cells t;
  const int x = x0 + static_cast<int>(threadIdx.x), y = y0 + static_cast<int>(threadIdx.y) * RT_ROWS;
  t.rows = x < d.nx ? max(0, min(RT_ROWS, d.ny - y)) : 0;
#pragma unroll
  for (int r = 0; r < RT_ROWS; ++r) t.o[r] = plane_offset(x, y + r, d);
#pragma unroll
  for (int j = 0; j < RT_H; ++j) {
    // Halo cell h: the left column, the right column, the row below, the row above.
    const int h = static_cast<int>(threadIdx.y * RT_X + threadIdx.x) + j * RT_THREADS;
    int hx, hy, sx, sy;
    if (h < RT_TY) hx = x0 - 1, hy = y0 + h, sx = 0, sy = h + 1;
    else if (h < 2 * RT_TY) hx = x0 + RT_X, hy = y0 + h - RT_TY, sx = RT_X + 1, sy = h - RT_TY + 1;
    else if (h < 2 * RT_TY + RT_X) hx = x0 + h - 2 * RT_TY, hy = y0 - 1, sx = h - 2 * RT_TY + 1, sy = 0;
    else hx = x0 + h - 2 * RT_TY - RT_X, hy = y0 + RT_TY, sx = h - 2 * RT_TY - RT_X + 1, sy = RT_TY + 1;
    t.hs[j] = h < RT_HALO ? sy * RT_SX + sx : -1;
    t.ho[j] = plane_offset(hx, hy, d);
  }
  // The ring of planes: z0 - 1, z0, z0 + 1 and RT_AHEAD = 2 planes ahead.
  static_assert(RT_AHEAD == 2, "the unrolled walk below names RT_AHEAD + 3 = 5 planes");
  Plane p0{}, p1{}, p2{}, p3{}, p4{};
  load_plane(p0, in, z0 - 1, t, d, false);  // only ever `prev`: no halo needed
  load_plane(p1, in, z0, t, d, true);
  load_plane(p2, in, z0 + 1, t, d, true);   // z0 + 1 <= z_end always
  if (z0 + 2 <= z_end) load_plane(p3, in, z0 + 2, t, d, true);
  // Unrolled by the ring's length, the roles rotate by renaming: (prev, curr, next, fresh).
  // Consecutive planes alternate between the two shared buffers (5 is odd: b flips each round).
  for (int z = z0; z < z_end; z += 5) {
    const int b = (z - z0) & 1;
    register_step(z, z_end, p0, p1, p2, p4, s_curr, b, in, out, t, d, c);
    if (z + 1 >= z_end) break;
    register_step(z + 1, z_end, p1, p2, p3, p0, s_curr, b ^ 1, in, out, t, d, c);
    if (z + 2 >= z_end) break;
    register_step(z + 2, z_end, p2, p3, p4, p1, s_curr, b, in, out, t, d, c);
    if (z + 3 >= z_end) break;
    register_step(z + 3, z_end, p3, p4, p0, p2, s_curr, b ^ 1, in, out, t, d, c);
    if (z + 4 >= z_end) break;
    register_step(z + 4, z_end, p4, p0, p1, p3, s_curr, b, in, out, t, d, c);
  }
}

Dims dims_of(const Grid3d& g) { return Dims{g.nx, g.ny, g.nz, g.bc, g.wall}; }

void launch_register(const float* in, float* out, const Grid3d& g, const Coeffs& c, cudaStream_t stream) {
  const dim3 block(RT_X, RT_Y);
  const dim3 grid((g.nx + RT_X - 1) / RT_X, (g.ny + RT_TY - 1) / RT_TY, (g.nz + Z_PER_BLOCK - 1) / Z_PER_BLOCK);
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
