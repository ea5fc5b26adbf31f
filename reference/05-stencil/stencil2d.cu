// Lab 05 — the 2D five-point stencil of the heat equation (reference).
//
// PMPP chapter 8: a stencil is a convolution whose weights come from a discretised PDE, swept
// many times over a grid whose edges follow a boundary condition. Four ways to sweep it:
//   heat2d_naive:    grid(ceil(nx/32), ceil(ny/8)), block(32, 8); one thread per output,
//                    five global reads each (PMPP fig. 8.6)
//   heat2d_tiled:    grid(ceil(nx/16), ceil(ny/16)), block(18, 18); the block is the input
//                    tile, the inner 16 x 16 threads compute (PMPP fig. 8.8): 256/324 = 79 %
//                    of the threads work in the second phase
//   heat2d_steps:    double buffering over a sweep written for bandwidth: grid(ceil(nx/128),
//                    ceil(ny/32)), block(32, 4); a thread owns 4 columns (one float4) x ROWS
//                    rows, issues all its loads before the first use, keeps the y neighbours
//                    in registers and reads the x neighbours through L1
//   heat2d_temporal: FUSE steps per launch in a 64 x 64 shared tile (56 x 56 valid outputs),
//                    grid(ceil(nx/56), ceil(ny/56)), block(32, 8)
// Ghost cells (lab05.hpp): Dirichlet holds `wall`, Neumann clamps the index, periodic wraps it.
#include "lab05.hpp"

#include <convlab/check.hpp>

#include <cstdint>
#include <utility>

namespace convlab::lab05 {
namespace {

constexpr int IN_TILE_DIM = kTile2d + 2;  // 18: PMPP's strategy 1, the block is the input tile
constexpr int OUT_TILE_DIM = kTile2d;     // 16

// The index a neighbour at i reads along a dimension of n cells, or -1 for a Dirichlet wall.
// Any i: tiles reach beyond the grid by more than one cell when the grid is smaller than a tile.
__host__ __device__ __forceinline__ int ghost(int i, int n, Boundary bc) {
  if (static_cast<unsigned>(i) < static_cast<unsigned>(n)) return i;
  if (bc == Boundary::periodic) {
    i %= n;
    return i < 0 ? i + n : i;
  }
  if (bc == Boundary::neumann) return i < 0 ? 0 : n - 1;
  return -1;
}

// u(x, y) with the boundary condition applied.
__device__ __forceinline__ float at(const float* __restrict__ u, int x, int y, int nx, int ny, Boundary bc,
                                    float wall) {
  x = ghost(x, nx, bc);
  y = ghost(y, ny, bc);
  return (x < 0 || y < 0) ? wall : __ldg(&u[static_cast<long long>(y) * nx + x]);
}

__global__ void heat2d_naive_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny,
                                    Boundary bc, float wall, Coeffs c) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  out[static_cast<long long>(y) * nx + x] =
      c.c0 * in[static_cast<long long>(y) * nx + x] +
      c.cx * (at(in, x - 1, y, nx, ny, bc, wall) + at(in, x + 1, y, nx, ny, bc, wall)) +
      c.cy * (at(in, x, y - 1, nx, ny, bc, wall) + at(in, x, y + 1, nx, ny, bc, wall));
}

__global__ void heat2d_tiled_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny,
                                    Boundary bc, float wall, Coeffs c) {
  __shared__ float s_in[IN_TILE_DIM][IN_TILE_DIM];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * OUT_TILE_DIM + tx - 1;  // -1: the halo
  const int y = blockIdx.y * OUT_TILE_DIM + ty - 1;
  // Ghost cells are loaded like any other: the boundary condition is applied once, here.
  s_in[ty][tx] = at(in, x, y, nx, ny, bc, wall);
  __syncthreads();  // 2D tiled: the whole input tile is loaded
  if (tx >= 1 && tx < IN_TILE_DIM - 1 && ty >= 1 && ty < IN_TILE_DIM - 1 && x < nx && y < ny)
    out[static_cast<long long>(y) * nx + x] = c.c0 * s_in[ty][tx] + c.cx * (s_in[ty][tx - 1] + s_in[ty][tx + 1]) +
                                              c.cy * (s_in[ty - 1][tx] + s_in[ty + 1][tx]);
}

// The sweep heat2d_steps() repeats, written for bandwidth. Each thread owns VEC = 4 consecutive
// columns and ROWS = 8 consecutive rows; a warp covers 128 columns (512 contiguous bytes of a
// row), the block (32, 4) a 128 x 32 tile.
//   - A thread in the grid's interior (most of them) issues all its loads at once, before the
//     first use: ROWS + 2 rows of 16-byte float4 loads (its rows, the row below and the row
//     above) and one float on each side per row (its x neighbours, in the neighbouring lanes'
//     lines: L1 hits). That is 10 x 16 + 16 x 4 B = 224 B requested per thread, so a resident
//     SM keeps far more than the ~20 KB that DRAM latency needs in flight, with no barrier and
//     no shared memory.
//   - The y neighbours are the thread's own rows, in registers; only the first and last rows'
//     outer neighbours are extra loads (10 rows loaded for 8 computed: L2 hits, not DRAM).
//   - The boundary condition is resolved per *thread*, once: a thread whose cells and
//     neighbours all lie inside the grid (and whose rows are 16-byte aligned: nx % 4 == 0 and
//     aligned buffers) takes the plain path; the others (the grid's edge rows and columns, or
//     every thread when nx % 4 != 0) go cell by cell, with the boundary condition only for the
//     cells at the edge.
constexpr int FAST_X = 32, FAST_Y = 4, ROWS = 8, VEC = 4;

// One output cell without vectors: plain loads inside the grid, the boundary condition at its edge.
__device__ __forceinline__ float heat_cell(const float* __restrict__ in, int x, int y, int nx, int ny, Boundary bc,
                                           float wall, const Coeffs& c) {
  const float* p = in + y * nx + x;
  if (x >= 1 && x + 1 < nx && y >= 1 && y + 1 < ny)
    return c.c0 * __ldg(p) + c.cx * (__ldg(p - 1) + __ldg(p + 1)) + c.cy * (__ldg(p - nx) + __ldg(p + nx));
  return c.c0 * __ldg(p) + c.cx * (at(in, x - 1, y, nx, ny, bc, wall) + at(in, x + 1, y, nx, ny, bc, wall)) +
         c.cy * (at(in, x, y - 1, nx, ny, bc, wall) + at(in, x, y + 1, nx, ny, bc, wall));
}

__global__ void __launch_bounds__(FAST_X * FAST_Y, 8)
    heat2d_fast_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, Boundary bc, float wall,
                       Coeffs c, bool vec_ok) {
  const int x0 = (blockIdx.x * FAST_X + threadIdx.x) * VEC;
  const int y0 = (blockIdx.y * FAST_Y + threadIdx.y) * ROWS;
  if (x0 >= nx || y0 >= ny) return;
  if (vec_ok && x0 >= 1 && x0 + VEC < nx && y0 >= 1 && y0 + ROWS < ny) {
    // Interior: every load first (rows y0-1 .. y0+ROWS), then the arithmetic.
    const float* p = in + (y0 - 1) * nx + x0;
    float4 v[ROWS + 2];
    float left[ROWS], right[ROWS];
#pragma unroll
    for (int k = 0; k < ROWS + 2; ++k) v[k] = __ldg(reinterpret_cast<const float4*>(p + k * nx));
#pragma unroll
    for (int k = 0; k < ROWS; ++k) {
      left[k] = __ldg(p + (k + 1) * nx - 1);
      right[k] = __ldg(p + (k + 1) * nx + VEC);
    }
    float* q = out + y0 * nx + x0;
#pragma unroll
    for (int k = 0; k < ROWS; ++k) {
      const float4 dn = v[k], cu = v[k + 1], up = v[k + 2];  // rows y-1, y, y+1
      float4 o;
      o.x = c.c0 * cu.x + c.cx * (left[k] + cu.y) + c.cy * (dn.x + up.x);
      o.y = c.c0 * cu.y + c.cx * (cu.x + cu.z) + c.cy * (dn.y + up.y);
      o.z = c.c0 * cu.z + c.cx * (cu.y + cu.w) + c.cy * (dn.z + up.z);
      o.w = c.c0 * cu.w + c.cx * (cu.z + right[k]) + c.cy * (dn.w + up.w);
      *reinterpret_cast<float4*>(q + k * nx) = o;
    }
    return;
  }
  // The grid's edge (or rows that are not 16-byte aligned): cell by cell.
  const int x_end = min(x0 + VEC, nx), y_end = min(y0 + ROWS, ny);
  for (int y = y0; y < y_end; ++y)
    for (int x = x0; x < x_end; ++x) out[y * nx + x] = heat_cell(in, x, y, nx, ny, bc, wall, c);
}

void launch_fast(const float* in, float* out, const Grid2d& g, const Coeffs& c, cudaStream_t stream) {
  const dim3 block(FAST_X, FAST_Y);
  const dim3 grid((g.nx + FAST_X * VEC - 1) / (FAST_X * VEC), (g.ny + FAST_Y * ROWS - 1) / (FAST_Y * ROWS));
  // float4 rows need nx % 4 == 0 and 16-byte aligned buffers (cudaMalloc's are; an offset view may not be).
  const bool vec_ok = g.nx % VEC == 0 && reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  heat2d_fast_kernel<<<grid, block, 0, stream>>>(in, out, g.nx, g.ny, g.bc, g.wall, c, vec_ok);
  CONVLAB_CHECK_LAUNCH();
}

// --- temporal blocking ----------------------------------------------------------------------
// A TILE x TILE tile (with a halo of `fuse` cells on each side, fuse <= MAX_FUSE) is loaded
// once and advanced `fuse` steps in shared memory, ping-ponging between two buffers; after step
// s only cells at least s from the tile's edge are still right, so the block writes the inner
// OUT x OUT cells, OUT = TILE - 2 * MAX_FUSE. Each thread owns 2 columns x 8 rows and streams
// down its rows with the cells above and below in registers.
constexpr int TILE = 64, MAX_FUSE = 4, OUT = TILE - 2 * MAX_FUSE;  // 56
constexpr int TB_X = 32, TB_Y = 8, TB_ROWS = TILE / TB_Y;          // 8 rows per thread

// The fused steps of one tile. SIMPLE: no cell of the tile lies outside the grid (periodic
// tiles, whose loads wrapped, or a tile inside the grid), so the update needs no boundary code at
// all; the kernel picks the variant once per block, so interior blocks run the plain one.
template <bool SIMPLE>
__device__ __forceinline__ void temporal_steps(float (*s_buf)[TILE][TILE], float* __restrict__ out, int nx, int ny,
                                               Boundary bc, float wall, const Coeffs& c, int fuse, int x0, int y0) {
  const int tiles = OUT + 2 * fuse;  // cells of the tile in use
  const bool periodic = SIMPLE || bc == Boundary::periodic;
  const bool dirichlet = bc == Boundary::dirichlet;
  int src = 0;
  for (int s = 1; s <= fuse; ++s) {
    const bool last = s == fuse;
#pragma unroll
    for (int k = 0; k < TILE / TB_X; ++k) {
      const int j = threadIdx.x + k * TB_X;
      const int gx = x0 + j;
      if (j < 1 || j >= tiles - 1) continue;
      const bool x_in = periodic || (gx >= 0 && gx < nx);
      const bool at_left = !periodic && gx == 0, at_right = !periodic && gx == nx - 1;
      const int i_begin = threadIdx.y * TB_ROWS;
      float up = i_begin >= 1 ? s_buf[src][i_begin - 1][j] : 0.0f;
      float cur = s_buf[src][i_begin][j];
#pragma unroll
      for (int r = 0; r < TB_ROWS; ++r) {
        const int i = i_begin + r;
        const float below = i + 1 < tiles ? s_buf[src][i + 1][j] : 0.0f;
        const int gy = y0 + i;
        if (i >= 1 && i < tiles - 1 && x_in && (periodic || (gy >= 0 && gy < ny))) {
          const float left = at_left ? (dirichlet ? wall : cur) : s_buf[src][i][j - 1];
          const float right = at_right ? (dirichlet ? wall : cur) : s_buf[src][i][j + 1];
          const float u_up = (!periodic && gy == 0) ? (dirichlet ? wall : cur) : up;
          const float u_down = (!periodic && gy == ny - 1) ? (dirichlet ? wall : cur) : below;
          const float v = c.c0 * cur + c.cx * (left + right) + c.cy * (u_up + u_down);
          if (!last) {
            s_buf[src ^ 1][i][j] = v;
          } else if (i >= fuse && i < fuse + OUT && j >= fuse && j < fuse + OUT && gx < nx && gy < ny) {
            out[gy * nx + gx] = v;
          }
        }
        up = cur;
        cur = below;
      }
    }
    src ^= 1;
    __syncthreads();  // temporal: step s is complete in the other buffer
  }
}

__global__ void __launch_bounds__(TB_X * TB_Y, 4)
    heat2d_temporal_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, Boundary bc,
                           float wall, Coeffs c, int fuse) {
  __shared__ float s_buf[2][TILE][TILE];
  const int x0 = blockIdx.x * OUT - fuse, y0 = blockIdx.y * OUT - fuse;  // the tile's corner in the grid
  const int tiles = OUT + 2 * fuse;                                      // cells of the tile in use
  for (int i = threadIdx.y; i < tiles; i += TB_Y)
    for (int j = threadIdx.x; j < tiles; j += TB_X) {
      const int gx = ghost(x0 + j, nx, bc), gy = ghost(y0 + i, ny, bc);
      // Outside the grid (Dirichlet, Neumann) the cell is never read: neighbours there are
      // replaced by the wall or by the cell itself below.
      s_buf[0][i][j] = (gx < 0 || gy < 0) ? wall : in[static_cast<long long>(gy) * nx + gx];
    }
  __syncthreads();
  // Block-uniform: a tile with no cell outside the grid takes the variant without boundary code.
  if (bc == Boundary::periodic || (x0 >= 0 && x0 + tiles <= nx && y0 >= 0 && y0 + tiles <= ny))
    temporal_steps<true>(s_buf, out, nx, ny, bc, wall, c, fuse, x0, y0);
  else
    temporal_steps<false>(s_buf, out, nx, ny, bc, wall, c, fuse, x0, y0);
}

}  // namespace

void heat2d_naive(const float* d_in, float* d_out, const Grid2d& g, const Coeffs& c, cudaStream_t stream) {
  validate(g);
  const dim3 block(32, 8);
  const dim3 grid((g.nx + block.x - 1) / block.x, (g.ny + block.y - 1) / block.y);
  heat2d_naive_kernel<<<grid, block, 0, stream>>>(d_in, d_out, g.nx, g.ny, g.bc, g.wall, c);
  CONVLAB_CHECK_LAUNCH();
}

void heat2d_tiled(const float* d_in, float* d_out, const Grid2d& g, const Coeffs& c, cudaStream_t stream) {
  validate(g);
  const dim3 block(IN_TILE_DIM, IN_TILE_DIM);
  const dim3 grid((g.nx + OUT_TILE_DIM - 1) / OUT_TILE_DIM, (g.ny + OUT_TILE_DIM - 1) / OUT_TILE_DIM);
  heat2d_tiled_kernel<<<grid, block, 0, stream>>>(d_in, d_out, g.nx, g.ny, g.bc, g.wall, c);
  CONVLAB_CHECK_LAUNCH();
}

float* heat2d_steps(float* d_u, float* d_tmp, const Grid2d& g, const Coeffs& c, int steps, cudaStream_t stream) {
  validate(g);
  validate_steps(steps);
  float* cur = d_u;
  float* nxt = d_tmp;
  for (int t = 0; t < steps; ++t) {
    launch_fast(cur, nxt, g, c, stream);  // read the old state, write the new one
    std::swap(cur, nxt);  // double buffering: the new state is read next
  }
  return cur;
}

float* heat2d_temporal(float* d_u, float* d_tmp, const Grid2d& g, const Coeffs& c, int steps, cudaStream_t stream) {
  validate(g);
  validate_steps(steps);
  float* cur = d_u;
  float* nxt = d_tmp;
  const dim3 block(TB_X, TB_Y);
  const dim3 grid((g.nx + OUT - 1) / OUT, (g.ny + OUT - 1) / OUT);
  for (int done = 0; done < steps;) {
    const int fuse = steps - done < MAX_FUSE ? steps - done : MAX_FUSE;
    heat2d_temporal_kernel<<<grid, block, 0, stream>>>(cur, nxt, g.nx, g.ny, g.bc, g.wall, c, fuse);
    CONVLAB_CHECK_LAUNCH();
    std::swap(cur, nxt);
    done += fuse;
  }
  return cur;
}

}  // namespace convlab::lab05
