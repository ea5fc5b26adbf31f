// Grader-owned naive stencil sweeps: lab 05's speed graders' yardstick.
//   stencil2d: grid(ceil(nx/32), ceil(ny/8)), block(32, 8), one thread per cell
//   stencil3d: grid(ceil(nx/32), ceil(ny/4), ceil(nz/2)), block(32, 4, 2), one thread per cell
#include "convlab/check.hpp"
#include "convlab/stencil_baselines.hpp"

namespace convlab::baseline {
namespace {

// The index a neighbour at i reads (i in [-1, n]), or -1 for a Dirichlet wall.
__device__ __forceinline__ int ghost(int i, int n, int boundary) {
  if (i >= 0 && i < n) return i;
  if (boundary == 2) return i < 0 ? n - 1 : 0;
  if (boundary == 1) return i < 0 ? 0 : n - 1;
  return -1;
}

__device__ __forceinline__ float at(const float* u, int x, int y, int z, int nx, int ny, int nz, int b, float wall) {
  x = ghost(x, nx, b);
  y = ghost(y, ny, b);
  z = ghost(z, nz, b);
  return (x < 0 || y < 0 || z < 0) ? wall : u[(static_cast<long long>(z) * ny + y) * nx + x];
}

__global__ void stencil_naive_kernel(const float* in, float* out, int nx, int ny, int nz, int b, float wall, float c0,
                                     float cx, float cy, float cz) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  float v = c0 * in[(static_cast<long long>(z) * ny + y) * nx + x] +
            cx * (at(in, x - 1, y, z, nx, ny, nz, b, wall) + at(in, x + 1, y, z, nx, ny, nz, b, wall)) +
            cy * (at(in, x, y - 1, z, nx, ny, nz, b, wall) + at(in, x, y + 1, z, nx, ny, nz, b, wall));
  if (nz > 1 || cz != 0.0f)
    v += cz * (at(in, x, y, z - 1, nx, ny, nz, b, wall) + at(in, x, y, z + 1, nx, ny, nz, b, wall));
  out[(static_cast<long long>(z) * ny + y) * nx + x] = v;
}

}  // namespace

void stencil2d_naive(const StencilArgs& a) {
  const dim3 block(32, 8);
  const dim3 grid((a.nx + 31) / 32, (a.ny + 7) / 8);
  stencil_naive_kernel<<<grid, block, 0, a.stream>>>(a.d_in, a.d_out, a.nx, a.ny, 1, a.boundary, a.wall, a.c0, a.cx,
                                                     a.cy, 0.0f);
  CONVLAB_CHECK_LAUNCH();
}

void stencil3d_naive(const StencilArgs& a) {
  const dim3 block(32, 4, 2);
  const dim3 grid((a.nx + 31) / 32, (a.ny + 3) / 4, (a.nz + 1) / 2);
  stencil_naive_kernel<<<grid, block, 0, a.stream>>>(a.d_in, a.d_out, a.nx, a.ny, a.nz, a.boundary, a.wall, a.c0,
                                                     a.cx, a.cy, a.cz);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::baseline
