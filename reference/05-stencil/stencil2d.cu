// Lab 05 — the 2D five-point stencil of the heat equation (reference).
//
// PMPP chapter 8: a stencil is a convolution whose weights come from a discretised PDE, swept
// many times over a grid whose edges follow a boundary condition. Four ways to sweep it:
//   heat2d_naive:    grid(ceil(nx/32), ceil(ny/8)), block(32, 8); one thread per output,
//                    five global reads each (PMPP fig. 8.6)
//   heat2d_tiled:    grid(ceil(nx/16), ceil(ny/16)), block(18, 18); the block is the input
//                    tile, the inner 16 x 16 threads compute (PMPP fig. 8.8): 256/324 = 79 %
//                    of the threads work in the second phase
//   heat2d_steps:    double buffering over a register-streaming sweep: grid(ceil(nx/32),
//                    ceil(ny/(4*ROWS))), block(32, 4); a thread walks ROWS rows of one column
//                    with the rows above and below in registers, x neighbours through L1
//   heat2d_temporal: FUSE steps per launch in a 64 x 64 shared tile (56 x 56 valid outputs),
//                    grid(ceil(nx/56), ceil(ny/56)), block(32, 8)
// Ghost cells (lab05.hpp): Dirichlet holds `wall`, Neumann clamps the index, periodic wraps it.
#include "lab05.hpp"

#include <convlab/check.hpp>

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

// The sweep heat2d_steps() repeats: each thread owns one column x and ROWS consecutive rows;
// the rows above and below come from registers, so each input is read from DRAM once, and the x
// neighbours are the neighbouring lanes' loads, served by L1.
constexpr int FAST_X = 32, FAST_Y = 4, ROWS = 8;

__global__ void __launch_bounds__(FAST_X * FAST_Y)
    heat2d_fast_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, Boundary bc, float wall,
                       Coeffs c) {
  const int x = blockIdx.x * FAST_X + threadIdx.x;
  const int y0 = (blockIdx.y * FAST_Y + threadIdx.y) * ROWS;
  if (x >= nx || y0 >= ny) return;
  const int y_end = min(y0 + ROWS, ny);
  float up = at(in, x, y0 - 1, nx, ny, bc, wall);
  float cur = in[static_cast<long long>(y0) * nx + x];
  const bool inner_x = x >= 1 && x + 1 < nx;
#pragma unroll 4
  for (int y = y0; y < y_end; ++y) {
    const long long row = static_cast<long long>(y) * nx;
    const float down = (y + 1 < ny) ? __ldg(&in[row + nx + x]) : at(in, x, y + 1, nx, ny, bc, wall);
    const float left = inner_x ? __ldg(&in[row + x - 1]) : at(in, x - 1, y, nx, ny, bc, wall);
    const float right = inner_x ? __ldg(&in[row + x + 1]) : at(in, x + 1, y, nx, ny, bc, wall);
    out[row + x] = c.c0 * cur + c.cx * (left + right) + c.cy * (up + down);
    up = cur;
    cur = down;
  }
}

void launch_fast(const float* in, float* out, const Grid2d& g, const Coeffs& c, cudaStream_t stream) {
  const dim3 block(FAST_X, FAST_Y);
  const dim3 grid((g.nx + FAST_X - 1) / FAST_X, (g.ny + FAST_Y * ROWS - 1) / (FAST_Y * ROWS));
  heat2d_fast_kernel<<<grid, block, 0, stream>>>(in, out, g.nx, g.ny, g.bc, g.wall, c);
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

__global__ void __launch_bounds__(TB_X * TB_Y, 4)
    heat2d_temporal_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, Boundary bc,
                           float wall, Coeffs c, int fuse) {
  __shared__ float s_buf[2][TILE][TILE];
  const int x0 = blockIdx.x * OUT - fuse, y0 = blockIdx.y * OUT - fuse;  // the tile's corner in the grid
  const int tiles = OUT + 2 * fuse;                                      // cells of the tile in use
  const bool periodic = bc == Boundary::periodic;
  const bool dirichlet = bc == Boundary::dirichlet;
  for (int i = threadIdx.y; i < tiles; i += TB_Y)
    for (int j = threadIdx.x; j < tiles; j += TB_X) {
      const int gx = ghost(x0 + j, nx, bc), gy = ghost(y0 + i, ny, bc);
      // Outside the grid (Dirichlet, Neumann) the cell is never read: neighbours there are
      // replaced by the wall or by the cell itself below.
      s_buf[0][i][j] = (gx < 0 || gy < 0) ? wall : in[static_cast<long long>(gy) * nx + gx];
    }
  __syncthreads();
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
            out[static_cast<long long>(gy) * nx + gx] = v;
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
