// Lab 05, measured for the handout: does an asynchronous tile fill (cp.async) or a thread-block
// cluster that shares its halo rows through distributed shared memory speed up the z walk of the
// 3D seven-point sweep? (labs/05-stencil/README.md, "Asynchronous tile loads and thread-block
// clusters"; its table is printed in "What you should see".) An instructor's program: its kernels
// answer the coarsened slot, so the student copy leaves this folder out (`convlab release`).
//
// One design, only the way a plane reaches shared memory changes:
//   grid(nx/64, ny/16, ceil(nz/Z_PER_BLOCK)), block(16, 16): a block computes a 64 x 16 output
//   tile of each plane while it walks Z_PER_BLOCK planes up z (PMPP fig. 8.10); a thread computes
//   4 consecutive cells of one row (float4). Planes z-1, z, z+1 and those still in flight sit in a
//   ring of shared planes of (16 + 2) x 72 floats: the interior from column 4, so that it is
//   16-byte aligned, the halo columns at 3 and 68. One barrier per plane: the ring is long enough
//   that the plane a thread fills is never one that a slower thread still reads (see NB).
//   plain      plane z+1 loaded (ld.global.v4 -> st.shared) before the barrier of plane z: the
//              thread waits for its load, which overlaps only with other blocks' work
//   regs       plane z+2 loaded into registers while plane z is computed, stored a round later:
//              the hand-made ring of the reference's register sweep, one plane deep
//   cp.async   planes up to z+1+AHEAD copied global -> shared with cp.async (16 bytes per thread,
//              4 for a cell of a halo column), one commit group per plane, cp.async.wait_group
//              before the barrier: no register holds a plane in flight
//   cluster    (compute capability 9.0) blocks in clusters of 1 x CY x 1 along y: a block reads the
//              halo rows it shares with a cluster neighbour from that neighbour's shared memory
//              (cluster.map_shared_rank) instead of loading them again, and cluster.sync() is the
//              barrier. Only the outer halo rows of the cluster come from global memory.
// Every variant is checked against the lab's golden model (stencil_golden.hpp) and timed with CUDA
// events in interleaved pairs against the plain fill, the L2 cache flushed before each run
// (convlab/gpu.hpp's measure_round, as the speed graders time). The problem is lab05_bench's
// 512^3 Dirichlet sweep; nx must be a multiple of 64 and ny of 16 (no code for partial tiles).
//   lab05_async_tiles [--quick] [--n N] [--pairs K] [--markdown FILE]
// Exit 77 (skipped) without a GPU or below compute capability 8.0, 1 on a wrong output, 2 on a
// bad command line.
#include "lab05.hpp"
#include "stencil_golden.hpp"

#include <convlab/bench_run.hpp>
#include <convlab/check.hpp>
#include <convlab/device_buffer.hpp>
#include <convlab/gpu.hpp>
#include <convlab/random.hpp>
#include <convlab/stats.hpp>

#include <cooperative_groups.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define CONVLAB_HAVE_CLUSTERS 1
#endif

namespace {

using namespace convlab;
using namespace convlab::lab05;
namespace cg = cooperative_groups;

constexpr int OUT_TILE_X = 64, OUT_TILE_Y = 16;   // outputs of one plane per block
constexpr int THREADS_X = OUT_TILE_X / 4;          // 16: a float4 of outputs per thread
constexpr int THREADS = THREADS_X * OUT_TILE_Y;    // 256
constexpr int COL0 = 4;                            // the interior's first column (16-byte aligned)
constexpr int SX = OUT_TILE_X + 8;                 // 72 floats per shared row: 288 B, a multiple of 16
constexpr int SY = OUT_TILE_Y + 2;                 // 18 rows: the halo row below, 16, the halo row above
constexpr int PLANE = SX * SY;                     // 1296 floats, 5184 B per shared plane
constexpr int Z_PER_BLOCK = 32;                    // as the reference's z-walking sweeps

enum class Fill { plain, regs, async };

struct Dims {
  int nx, ny, nz;
  float wall;  // the Dirichlet ghost cells' value
};

// Where one thread's cells of a plane are; the same for every plane of the walk.
struct Roles {
  int own_g, own_s;  // its float4 of the interior: offset within a plane, index in a shared plane
  int hy_g, hy_s;    // warp 0: a float4 of a halo row (hy_s < 0: none to load; hy_g < 0: the wall)
  int hx_g, hx_s;    // warp 1: one cell of a halo column (the same)
};

// A plane's cells held in registers between their load and their store to shared memory.
struct Pending {
  float4 own, hy;
  float hx;
};

__device__ __forceinline__ float4 wall4(float w) { return make_float4(w, w, w, w); }
__device__ __forceinline__ float4 ld4s(const float* p) { return *reinterpret_cast<const float4*>(p); }
__device__ __forceinline__ void st4s(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }

// --- cp.async (compute capability 8.0): PTX, as the handout names the instructions -------------
__device__ __forceinline__ void cp_async16(float* s_dst, const float* g_src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(s_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(g_src) : "memory");
#endif
}
__device__ __forceinline__ void cp_async4(float* s_dst, const float* g_src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(s_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(g_src) : "memory");
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most N of this thread's most recent commit groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// --- clusters (compute capability 9.0); the host never launches a cluster kernel on less -------
__device__ __forceinline__ unsigned cluster_rank() {
#ifdef CONVLAB_HAVE_CLUSTERS
  return cg::this_cluster().block_rank();
#else
  return 0;
#endif
}
__device__ __forceinline__ const float* cluster_neighbour(float* s, unsigned rank) {
#ifdef CONVLAB_HAVE_CLUSTERS
  return cg::this_cluster().map_shared_rank(s, rank);
#else
  (void)s;
  (void)rank;
  __trap();
  return nullptr;
#endif
}
template <int CY>
__device__ __forceinline__ void barrier() {
  if constexpr (CY > 1) {
#ifdef CONVLAB_HAVE_CLUSTERS
    cg::this_cluster().sync();  // also every thread of this block: one barrier for both
#else
    __trap();
#endif
  } else {
    __syncthreads();
  }
}

// The roles of thread t; `lo_shared` / `hi_shared`: a cluster neighbour below / above holds the
// halo row on that side, so it is not loaded.
__device__ Roles roles_of(const Dims& d, int x0, int y0, bool lo_shared, bool hi_shared) {
  const int tx = threadIdx.x, ty = threadIdx.y, t = ty * THREADS_X + tx;
  Roles r;
  r.own_g = (y0 + ty) * d.nx + x0 + 4 * tx;
  r.own_s = (ty + 1) * SX + COL0 + 4 * tx;
  r.hy_s = r.hx_s = -1;
  r.hy_g = r.hx_g = -1;
  if (t < 2 * THREADS_X) {  // warp 0: the halo rows, 16 float4 each
    const bool above = ty == 1;
    const int gy = above ? y0 + OUT_TILE_Y : y0 - 1;
    if (!(above ? hi_shared : lo_shared)) {
      r.hy_s = (above ? SY - 1 : 0) * SX + COL0 + 4 * tx;
      r.hy_g = (gy >= 0 && gy < d.ny) ? gy * d.nx + x0 + 4 * tx : -1;
    }
  } else if (t < 2 * THREADS_X + 2 * OUT_TILE_Y) {  // warp 1: the halo columns, 16 cells each
    const int h = t - 2 * THREADS_X, right = h / OUT_TILE_Y, row = h % OUT_TILE_Y;
    const int gx = right ? x0 + OUT_TILE_X : x0 - 1;
    r.hx_s = (row + 1) * SX + (right ? COL0 + OUT_TILE_X : COL0 - 1);
    r.hx_g = (gx >= 0 && gx < d.nx) ? (y0 + row) * d.nx + gx : -1;
  }
  return r;
}

__device__ __forceinline__ const float* plane_ptr(const float* in, int p, const Dims& d) {
  return in + static_cast<long long>(p) * d.nx * d.ny;
}

// Plain loads of plane p into registers (every load issued before any is used).
__device__ __forceinline__ Pending load_plane(const float* __restrict__ in, int p, const Roles& r, const Dims& d) {
  const bool zin = p >= 0 && p < d.nz;
  const float* g = plane_ptr(in, zin ? p : 0, d);
  Pending v;
  v.own = zin ? __ldg(reinterpret_cast<const float4*>(g + r.own_g)) : wall4(d.wall);
  v.hy = (zin && r.hy_s >= 0 && r.hy_g >= 0) ? __ldg(reinterpret_cast<const float4*>(g + r.hy_g)) : wall4(d.wall);
  v.hx = (zin && r.hx_s >= 0 && r.hx_g >= 0) ? __ldg(g + r.hx_g) : d.wall;
  return v;
}

__device__ __forceinline__ void store_plane(float* s, const Pending& v, const Roles& r) {
  st4s(s + r.own_s, v.own);
  if (r.hy_s >= 0) st4s(s + r.hy_s, v.hy);
  if (r.hx_s >= 0) s[r.hx_s] = v.hx;
}

// cp.async of plane p into s; ghost cells (a wall) are stored directly. Not committed here.
__device__ __forceinline__ void copy_plane_async(float* s, const float* __restrict__ in, int p, const Roles& r,
                                                 const Dims& d) {
  const bool zin = p >= 0 && p < d.nz;
  const float* g = plane_ptr(in, zin ? p : 0, d);
  if (zin) cp_async16(s + r.own_s, g + r.own_g);
  else st4s(s + r.own_s, wall4(d.wall));
  if (r.hy_s >= 0) {
    if (zin && r.hy_g >= 0) cp_async16(s + r.hy_s, g + r.hy_g);
    else st4s(s + r.hy_s, wall4(d.wall));
  }
  if (r.hx_s >= 0) {
    if (zin && r.hx_g >= 0) cp_async4(s + r.hx_s, g + r.hx_g);
    else s[r.hx_s] = d.wall;
  }
}

// Plane z from the shared planes prev, cur, next; `lo` / `hi`: the same plane's buffer in the
// cluster neighbour below / above (nullptr: this block's own halo row).
template <int CY>
__device__ __forceinline__ void compute_plane(const float* prev, const float* cur, const float* next, const float* lo,
                                              const float* hi, float* __restrict__ out, int z, const Roles& r,
                                              const Dims& d, const Coeffs& c) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = (ty + 1) * SX + COL0 + 4 * tx;  // this thread's first cell in a shared plane
  const float4 m = ld4s(cur + i);
  // x neighbours: the next lanes' cells (lanes of one row are a 16-lane segment), the halo
  // columns at the ends; shuffles instead of two strided shared loads with 4-way bank conflicts.
  float left = __shfl_up_sync(0xffffffffu, m.w, 1, THREADS_X);
  float right = __shfl_down_sync(0xffffffffu, m.x, 1, THREADS_X);
  if (tx == 0) left = cur[i - 1];
  if (tx == THREADS_X - 1) right = cur[i + 4];
  float4 dn, up;
  if (CY > 1 && ty == 0 && lo) dn = ld4s(lo + OUT_TILE_Y * SX + COL0 + 4 * tx);  // its top row
  else dn = ld4s(cur + i - SX);
  if (CY > 1 && ty == OUT_TILE_Y - 1 && hi) up = ld4s(hi + SX + COL0 + 4 * tx);  // its bottom row
  else up = ld4s(cur + i + SX);
  const float4 pv = ld4s(prev + i), nx = ld4s(next + i);
  float4 o;
  o.x = c.c0 * m.x + c.cx * (left + m.y) + c.cy * (dn.x + up.x) + c.cz * (pv.x + nx.x);
  o.y = c.c0 * m.y + c.cx * (m.x + m.z) + c.cy * (dn.y + up.y) + c.cz * (pv.y + nx.y);
  o.z = c.c0 * m.z + c.cx * (m.y + m.w) + c.cy * (dn.z + up.z) + c.cz * (pv.z + nx.z);
  o.w = c.c0 * m.w + c.cx * (m.z + right) + c.cy * (dn.w + up.w) + c.cz * (pv.w + nx.w);
  *reinterpret_cast<float4*>(out + static_cast<long long>(z) * d.nx * d.ny + r.own_g) = o;
}

// AHEAD: planes beyond z+1 in flight (0 for plain, 1 for regs, 1 or 2 for cp.async). Every fill
// but the register ring fits 32 registers, so 8 blocks (all 64 warps) per SM: the fills are
// compared at the same occupancy. The ring pays for its registers in blocks: 5 per SM, as the
// reference's register sweep.
template <Fill F, int AHEAD, int CY>
__global__ void __launch_bounds__(THREADS, F == Fill::regs ? 5 : 8)
    walk_kernel(const float* __restrict__ in, float* __restrict__ out, Dims d, Coeffs c) {
  // The ring. Between two barriers a thread fills plane z+1+AHEAD (cp.async; z+1 otherwise) while
  // a slower thread of its block, or of a cluster neighbour, may still compute plane z-1. Of the
  // planes z-2, z-1, z that one reads, only z-1 is read at other threads' cells; z-2 and z only at
  // its own, which no other thread writes. So the filled plane must not share a slot with z-1:
  // AHEAD + 3 slots, one barrier per plane.
  constexpr int NB = (F == Fill::async ? AHEAD : 0) + 3;
  __shared__ __align__(16) float s_ring[NB * PLANE];
  const int x0 = blockIdx.x * OUT_TILE_X, y0 = blockIdx.y * OUT_TILE_Y;
  const int z0 = blockIdx.z * Z_PER_BLOCK, z_end = min(z0 + Z_PER_BLOCK, d.nz);
  const float* lo = nullptr;
  const float* hi = nullptr;
  if constexpr (CY > 1) {
    const unsigned rank = cluster_rank();  // clusters of 1 x CY x 1: the rank counts along y
    if (rank > 0) lo = cluster_neighbour(s_ring, rank - 1);
    if (rank + 1 < CY) hi = cluster_neighbour(s_ring, rank + 1);
  }
  const Roles r = roles_of(d, x0, y0, lo != nullptr, hi != nullptr);
  // Plane p lives in ring slot (p - z0 + 1) % NB; in the walk the slots rotate, no division.
  const auto slot = [&](int p) { return (p - z0 + 1) % NB * PLANE; };
  const auto next_slot = [](int k, int by) {  // the slot `by` planes after slot k (by < NB)
    return k + by * PLANE >= NB * PLANE ? k + (by - NB) * PLANE : k + by * PLANE;
  };

  Pending ahead{};
  if constexpr (F == Fill::async) {
    for (int p = z0 - 1; p <= z0 + AHEAD; ++p) {  // one commit group per plane, empty past the end
      if (p <= z_end) copy_plane_async(s_ring + slot(p), in, p, r, d);
      cp_async_commit();
    }
  } else {
    store_plane(s_ring + slot(z0 - 1), load_plane(in, z0 - 1, r, d), r);
    store_plane(s_ring + slot(z0), load_plane(in, z0, r, d), r);
    if constexpr (F == Fill::regs) ahead = load_plane(in, z0 + 1, r, d);
  }
  int k_prev = slot(z0 - 1), k_cur = slot(z0);  // the slots of planes z-1 and z
  for (int z = z0; z < z_end; ++z) {
    const int k_next = next_slot(k_cur, 1);
    if constexpr (F == Fill::plain) {
      store_plane(s_ring + k_next, load_plane(in, z + 1, r, d), r);  // waits for the load
    } else if constexpr (F == Fill::regs) {
      store_plane(s_ring + k_next, ahead, r);
      if (z + 2 <= z_end) ahead = load_plane(in, z + 2, r, d);  // in flight while plane z is computed
    } else {
      const int p = z + 1 + AHEAD;
      if (p <= z_end) copy_plane_async(s_ring + next_slot(k_cur, 1 + AHEAD), in, p, r, d);
      cp_async_commit();
      cp_async_wait<AHEAD>();  // this thread's copies of planes up to z+1 have landed
    }
    barrier<CY>();  // plane z+1 is complete in every thread's slot (and in the cluster's blocks)
    compute_plane<CY>(s_ring + k_prev, s_ring + k_cur, s_ring + k_next, lo ? lo + k_cur : nullptr,
                      hi ? hi + k_cur : nullptr, out, z, r, d, c);
    k_prev = k_cur;
    k_cur = k_next;
  }
  if constexpr (CY > 1) barrier<CY>();  // a neighbour may still read this block's shared memory
}

// --- host ----------------------------------------------------------------------------------------

using Kernel = void (*)(const float*, float*, Dims, Coeffs);

struct Variant {
  std::string name;          // as the table names it
  Kernel kernel = nullptr;   // nullptr: one of the lab's own sweeps (`lab`)
  int cluster_y = 1;
  std::function<void(const float*, float*, const Grid3d&, const Coeffs&, cudaStream_t)> lab;
};

void launch(const Variant& v, const float* in, float* out, const Dims& d, const Coeffs& c, cudaStream_t st) {
  if (!v.kernel) {
    v.lab(in, out, Grid3d{d.nx, d.ny, d.nz, Boundary::dirichlet, d.wall}, c, st);
    return;
  }
  const dim3 grid(d.nx / OUT_TILE_X, d.ny / OUT_TILE_Y, (d.nz + Z_PER_BLOCK - 1) / Z_PER_BLOCK);
  const dim3 block(THREADS_X, OUT_TILE_Y);
  if (v.cluster_y == 1) {
    v.kernel<<<grid, block, 0, st>>>(in, out, d, c);
    CONVLAB_CHECK_LAUNCH();
    return;
  }
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = st;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 1;
  attr[0].val.clusterDim.y = v.cluster_y;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CONVLAB_CUDA_CHECK(cudaLaunchKernelEx(&cfg, v.kernel, in, out, d, c));
  CONVLAB_CHECK_LAUNCH();
}

// "15552 B | 32 | 8": shared memory, registers and blocks per SM of one of this file's kernels
// (for a cluster kernel, the blocks the GPU holds in clusters, per SM); "-" for the lab's sweeps.
std::string resources(const Variant& v, const Dims& d, int sm_count) {
  if (!v.kernel) return "- | - | -";
  cudaFuncAttributes a{};
  CONVLAB_CUDA_CHECK(cudaFuncGetAttributes(&a, v.kernel));
  double blocks_per_sm = 0;
  if (v.cluster_y == 1) {
    int n = 0;
    CONVLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, v.kernel, THREADS, 0));
    blocks_per_sm = n;
  } else {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(d.nx / OUT_TILE_X, d.ny / OUT_TILE_Y, (d.nz + Z_PER_BLOCK - 1) / Z_PER_BLOCK);
    cfg.blockDim = dim3(THREADS_X, OUT_TILE_Y);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 1;
    attr[0].val.clusterDim.y = v.cluster_y;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    // A column of the table, not a result: if the driver cannot say, the row says "?".
    if (cudaOccupancyMaxActiveClusters(&clusters, v.kernel, &cfg) != cudaSuccess) {
      (void)cudaGetLastError();  // clear the query's error: the next launch's check must not see it
      blocks_per_sm = -1;
    } else {
      blocks_per_sm = double(clusters) * v.cluster_y / sm_count;
    }
  }
  char buf[96];
  if (blocks_per_sm < 0) std::snprintf(buf, sizeof buf, "%zu B | %d | ?", a.sharedSizeBytes, a.numRegs);
  else std::snprintf(buf, sizeof buf, "%zu B | %d | %.3g", a.sharedSizeBytes, a.numRegs, blocks_per_sm);
  return buf;
}

struct Options {
  bool quick = false;
  int n = 512;
  int pairs = 30;
  std::string markdown;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") o.quick = true;
    else if (a == "--n" && i + 1 < argc) o.n = whole_number_option(a, argv[++i]);
    else if (a == "--pairs" && i + 1 < argc) o.pairs = whole_number_option(a, argv[++i]);
    else if (a == "--markdown" && i + 1 < argc) o.markdown = argv[++i];
    else throw std::invalid_argument("unknown argument '" + a + "'");
  }
  if (o.n < 64 || o.n % 64 != 0 || o.n > 512)
    throw std::invalid_argument("--n must be a multiple of 64 from 64 to 512");
  if (o.pairs < 1) throw std::invalid_argument("--pairs must be >= 1");
  return o;
}

int run(const Options& o) {
  std::string why_not;
  if (!gpu_available(&why_not)) {
    std::cout << "lab05_async_tiles: skipped: " << why_not << "\n";
    return 77;
  }
  const DeviceInfo gpu = device_info();
  if (gpu.cc_major < 8) {
    std::cout << "lab05_async_tiles: skipped: cp.async needs compute capability 8.0, this GPU has " << gpu.cc_major
              << "." << gpu.cc_minor << "\n";
    return 77;
  }
  const bool clusters = gpu.cc_major >= 9;
  // The problem of lab05_bench's 512^3 Dirichlet row (--quick: a small grid whose last blocks walk
  // fewer planes, so that a ring's end is checked too).
  golden::Shape s;
  s.nx = o.quick ? 128 : o.n;
  s.ny = o.quick ? 64 : o.n;
  s.nz = o.quick ? 48 : o.n;
  s.bc = Boundary::dirichlet;
  s.wall = 0.25f;
  const Coeffs c = heat_coefficients_3d(HeatParams{1.0, 0.15, 1.0, 1.0, 1.0});
  const Dims d{s.nx, s.ny, s.nz, s.wall};
  const int pairs = o.quick ? 3 : o.pairs;
  const std::string size = std::to_string(s.nx) + "x" + std::to_string(s.ny) + "x" + std::to_string(s.nz);

  std::cerr << "lab05_async_tiles: " << gpu.summary() << "; " << size << ", the golden model...\n";
  const std::vector<float> h_in = random_floats(s.cells(), 11);
  const Golden g = golden::comparator_golden(golden::run(h_in, s, c, true, 1), 7);
  DeviceBuffer<float> d_in(h_in), d_out(s.cells());

  std::vector<Variant> vs;
  const auto ours = [&](std::string name, Kernel k, int cy) { vs.push_back(Variant{std::move(name), k, cy, {}}); };
  ours("plain", walk_kernel<Fill::plain, 0, 1>, 1);
  ours("regs, 1 plane ahead", walk_kernel<Fill::regs, 1, 1>, 1);
  ours("cp.async, 1 plane ahead", walk_kernel<Fill::async, 1, 1>, 1);
  ours("cp.async, 2 planes ahead", walk_kernel<Fill::async, 2, 1>, 1);
  ours("plain, clusters of 2", walk_kernel<Fill::plain, 0, 2>, 2);
  ours("plain, clusters of 4", walk_kernel<Fill::plain, 0, 4>, 4);
  ours("cp.async 2 ahead, clusters of 2", walk_kernel<Fill::async, 2, 2>, 2);
  ours("cp.async 2 ahead, clusters of 4", walk_kernel<Fill::async, 2, 4>, 4);
  const std::string impl = CONVLAB_IMPL_NAME;
  vs.push_back(Variant{"`stencil3d_coarsened` (" + impl + ")", nullptr, 1, stencil3d_coarsened});
  vs.push_back(Variant{"`stencil3d_register` (" + impl + ")", nullptr, 1, stencil3d_register});

  for (const Variant& v : vs)
    if (v.kernel)  // the whole shared memory for the ring (the carveout), deterministically
      CONVLAB_CUDA_CHECK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                              cudaSharedmemCarveoutMaxShared));

  // Check every variant once (the output poisoned with NaN first); a wrong one is not timed.
  const Grid grid{s.nx, s.ny * s.nz, 0};
  std::vector<std::string> skipped;
  std::vector<Variant> ok;
  for (const Variant& v : vs) {
    if (v.cluster_y > 1 && !clusters) {
      skipped.push_back(v.name + ": clusters need compute capability 9.0");
      continue;
    }
    if (v.cluster_y > 1 && (s.ny / OUT_TILE_Y) % v.cluster_y != 0) {
      skipped.push_back(v.name + ": ny/16 is not a multiple of the cluster size");
      continue;
    }
    d_out.fill_bytes(0xFF);
    try {
      launch(v, d_in.get(), d_out.get(), d, c, nullptr);
      verify_output(d_out, g, grid, v.name + " on " + size);
    } catch (const std::exception& e) {
      if (v.kernel) throw;  // this file's kernels must be right
      skipped.push_back(v.name + ": not timed: " + std::string(e.what()).substr(0, 200));
      CONVLAB_CUDA_CHECK(cudaGetLastError());  // a sticky error (the context is lost) ends the run
      continue;
    }
    ok.push_back(v);
    std::cerr << "lab05_async_tiles: " << v.name << ": every output matches the golden model\n";
  }

  // Time: each variant in interleaved pairs with the plain fill (plain against itself shows the
  // noise of the comparison).
  const double copy_gbs = measure_copy_bandwidth_gbs();
  const double ideal_bytes = 2.0 * double(s.cells()) * sizeof(float);
  const Variant& plain = ok.front();
  const Launch base = [&](cudaStream_t st) { launch(plain, d_in.get(), d_out.get(), d, c, st); };
  std::string table = "### The z walk's tile fill: plain loads, cp.async, clusters (" + size + ", Dirichlet)\n\n" +
                      gpu.summary() + "\n\n";
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Copy bandwidth measured in this run: %.0f GB/s (float4 copy, bytes read + written), so the ideal "
                "sweep (one read and one write of the grid) takes %.4f ms. ",
                copy_gbs, ideal_bytes / copy_gbs / 1e6);
  table += buf;
  std::snprintf(buf, sizeof buf,
                "Times are medians of %d runs with the 10th-90th percentile, the L2 cache flushed before each run; "
                "'vs plain' is the median (and 10th-90th percentile) of the ratios plain / variant of %d "
                "interleaved pairs. ",
                pairs, pairs);
  table += buf;
  table += "Blocks per SM: cudaOccupancyMaxActiveBlocksPerMultiprocessor, for clusters "
           "cudaOccupancyMaxActiveClusters x cluster size / SMs.\n\n";
  table += "| variant | shared memory per block | registers | blocks per SM | time (ms) | p10-p90 (ms) | "
           "% of copy BW | vs plain (p10-p90) |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Variant& v : ok) {
    const Launch cand = [&](cudaStream_t st) { launch(v, d_in.get(), d_out.get(), d, c, st); };
    const SpeedRound round = measure_round(base, cand, pairs);
    const Stats& t = round.candidate_ms;
    std::snprintf(buf, sizeof buf, "| %s | %s | %.4f | %.4f-%.4f | %.1f%% | %.2fx (%.2f-%.2f) |\n",
                  v.name.c_str(), resources(v, d, gpu.sm_count).c_str(), t.median,
                  t.p10, t.p90, 100.0 * ideal_bytes / (t.median * 1e-3) / 1e9 / copy_gbs, round.ratio.median,
                  round.ratio.p10, round.ratio.p90);
    table += buf;
    std::cerr << "lab05_async_tiles: timed " << v.name << "\n";
  }
  for (const std::string& why : skipped) table += "\nNot shown: " + why + "\n";
  std::cout << table;
  if (!o.markdown.empty()) std::ofstream(o.markdown) << table;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return convlab::instructor_main(argc, argv, "lab05_async_tiles",
                                  "lab05_async_tiles [--quick] [--n N] [--pairs K] [--markdown FILE]", parse, run);
}
