// Lab 06 — implicit GEMM on tensor cores (reference solution).
//
// The implicit GEMM of conv_implicit_gemm.cu, its products on the tensor cores: TF32 inputs
// (10 mantissa bits), FP32 accumulation, through CUDA's warp matrix API (nvcuda::wmma,
// m16n16k8 fragments, precision::tf32). The GEMM is laid out for the tensor cores' fragments:
//   M = N P Q output pixels (row j = (n P + p) Q + q), N = K filters, K_gemm = C R S taps
//   A[j][crs] = x[n][c][p stride_h - pad_h + r][q stride_w - pad_w + s] (0 in the padding),
//   B[crs][k] = w[k][crs], y[n][k][p][q] = (A B)[j][k].
// Block tile BM x BN = 128 pixels x 64 filters, BK = 16 taps a step, 256 threads = 8 warps in
// 4 x 2, each warp 32 x 32 outputs = 2 x 2 accumulator fragments of 16 x 16.
// Shared memory, per stage: the A tile pixel-contiguous (a[kk][m], ld 132: A is column-major
// for wmma), the B tile tap-contiguous (b[n][kk], ld 20: B column-major), two stages filled by
// asynchronous copies (<cuda_pipeline.h>: __pipeline_memcpy_async) while the other stage is
// multiplied, one commit and one wait per step. Every fragment pointer is 32-byte aligned
// and every ld a multiple of 4 floats, as the warp matrix API requires.
// The gather: thread t copies pixel m = t % 128 of the tile (its (n, p, q), the image's base
// and its window's corner computed once), taps kk = t / 128, + 2, + 4, ...: it walks its taps
// (c, r, s) in steps of 2 without a division; outside the image the copy is a zero fill.
// Consecutive threads copy consecutive pixels: a warp's copies of one tap are coalesced.
// The epilogue: the accumulators are stored through shared memory (c[n][m], pixel-contiguous)
// so that a warp writes 32 consecutive pixels of one filter's output plane (NCHW, no
// transpose), coalesced.
// The inputs are rounded to TF32 (__float_to_tf32: to nearest) in the fragments; the error
// bound the graders allow is in the handout.
//
// Stride 1 and a small filter (every ResNet 3 x 3 layer) take a second kernel, window_kernel: the
// gather above costs integer work for every element of every A tile (C R S of them per pixel),
// and that work, not the tensor cores, bounds it. With stride 1 the A tile of tap (r, s) is the
// tile of tap (0, 0) moved by r rows and s columns, so a block copies its input window once per
// channel chunk and every tap reads its fragments from it:
//   - a block: th output rows x 16 mx columns of one image (mx = 1, 2 or 4 fragments across a
//     row, th = MT / mx rows; MT = 16 or 8 fragments of 16 pixels), 64 filters; 8 warps, each
//     MT / 4 pixel fragments x 2 filter fragments;
//   - per stage (three, cp.async): 8 channels of the window, (th + R - 1) x (16 mx + S - 1)
//     pixels, stored channel-innermost (w[row][col][c], 8 floats a pixel), so that the A fragment
//     of any tap is 16 consecutive pixels x 8 channels = 128 contiguous floats at a 32-byte
//     aligned address, ld 8 (row-major); and the 64 filters' taps of those channels, f[rs][k][c]
//     (B column-major, ld 8). A chunk is R S steps of k = 8: one per tap, no gather arithmetic;
//   - the operands are not converted: the tensor cores read the upper 19 bits of each float
//     (truncation, within the same bound as rounding: the handout's u = 2^-10);
//   - the epilogue as above (c[k][m], then y, pixel-contiguous).
#include "lab06.hpp"

#include <convlab/check.hpp>

#include <cuda_pipeline.h>
#include <mma.h>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace convlab::lab06 {
namespace {

constexpr int kBM = 128, kBN = 64, kBK = 16, kThreads = 256;
constexpr int kStages = 2;  // shared-memory stages: one multiplied while the copies of the next land
constexpr int kLdA = kBM + 4;  // a[kk][m]: 528 bytes a row, a multiple of 32 bytes and 16 floats + 4
constexpr int kLdB = kBK + 4;  // b[n][kk]: 80 bytes a row
constexpr int kLdC = kBM + 4;  // c[n][m]
constexpr int kStageA = kBK * kLdA, kStageB = kBN * kLdB;
constexpr int kSharedFloats = (kStages * (kStageA + kStageB) > kBN * kLdC) ? kStages * (kStageA + kStageB) : kBN * kLdC;

// One thread's part of the copies: its pixel of the A tile (fixed) and where its walk over the
// taps stands (tap crs = (c R + r) S + s, advanced by 2 per copy).
struct Gather {
  const float* x_img;  // the pixel's image
  int m;               // the pixel's row in the A tile
  bool pixel_ok;       // the pixel exists (the last tile may hang over N P Q)
  int ih0, iw0;        // its window's top-left corner in the image
  int crs, c, r, s;    // the next tap this thread copies
};

// Copies one step of kBK taps of A and B into a stage's tiles (asynchronously: they land when the
// thread waits for them).
__device__ void load_step(Gather& g, const float* __restrict__ x, const float* __restrict__ w, const ConvProblem& p,
                          int CRS, int k0, int n0, float* a, float* b) {
  for (int i = 0; i < kBK / 2; ++i) {
    const int kk = g.crs - k0;
    const int ih = g.ih0 + g.r, iw = g.iw0 + g.s;
    const bool inside = g.pixel_ok && g.crs < CRS && ih >= 0 && ih < p.h && iw >= 0 && iw < p.w;
    const float* src = inside ? g.x_img + (g.c * p.h + ih) * p.w + iw : x;
    __pipeline_memcpy_async(a + kk * kLdA + g.m, src, sizeof(float), inside ? 0 : sizeof(float));
    g.crs += 2;
    g.s += 2;
    while (g.s >= p.s) g.s -= p.s, ++g.r;
    while (g.r >= p.r) g.r -= p.r, ++g.c;
  }
  // B: filter n = tid / 4 of the tile, taps 4 (tid % 4) .. + 3: one 16-byte copy where the four lie
  // inside w and C R S keeps the rows 16-byte aligned, else four 4-byte copies.
  const int tid = int(threadIdx.x);
  const int n = tid / 4, kk0 = (tid % 4) * 4, f = n0 + n, c0 = k0 + kk0;
  const float* wrow = w + std::size_t(f < p.k ? f : 0) * CRS;
  if (f < p.k && CRS % 4 == 0 && c0 + 3 < CRS) {
    __pipeline_memcpy_async(b + n * kLdB + kk0, wrow + c0, 4 * sizeof(float));
  } else {
    for (int e = 0; e < 4; ++e) {
      const bool ok = f < p.k && c0 + e < CRS;
      __pipeline_memcpy_async(b + n * kLdB + kk0 + e, ok ? wrow + c0 + e : w, sizeof(float), ok ? 0 : sizeof(float));
    }
  }
}

__global__ void __launch_bounds__(kThreads)
    tensor_core_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, ConvProblem p,
                       int P, int Q) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  // No TF32 tensor cores before compute capability 8.0: the launcher refuses such a GPU.
#else
  using namespace nvcuda;
  __shared__ __align__(128) float smem[kSharedFloats];
  float* const a_tile = smem;                      // [kStages][kBK][kLdA]
  float* const b_tile = smem + kStages * kStageA;  // [kStages][kBN][kLdB]
  float* const c_tile = smem;                      // [kBN][kLdC], after the last step

  const int tid = int(threadIdx.x), warp = tid / 32;
  const int warp_m = warp % 4, warp_n = warp / 4;
  const int PQ = P * Q, pixels = p.n * PQ;
  const int RS = p.r * p.s, CRS = p.c * RS;
  const int m0 = int(blockIdx.x) * kBM;

  // This thread's pixel of the A tile.
  Gather g;
  g.m = tid % kBM;
  const int j = m0 + g.m;
  g.pixel_ok = j < pixels;
  const int img = g.pixel_ok ? j / PQ : 0, pq = g.pixel_ok ? j % PQ : 0;
  g.ih0 = (pq / Q) * p.stride_h - p.pad_h;
  g.iw0 = (pq % Q) * p.stride_w - p.pad_w;
  g.x_img = x + std::size_t(img) * p.c * p.h * p.w;
  const int steps = (CRS + kBK - 1) / kBK;

  // Filter tiles: one per blockIdx.y, more where K needs more than a grid's y carries (65535).
  for (int n0 = int(blockIdx.y) * kBN; n0 < p.k; n0 += int(gridDim.y) * kBN) {
    g.crs = tid / kBM;  // 0 or 1, then + 2 per copy
    g.c = g.crs / RS;
    g.r = g.crs % RS / p.s;
    g.s = g.crs % p.s;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][2];
    for (int i = 0; i < 2; ++i)
      for (int jn = 0; jn < 2; ++jn) wmma::fill_fragment(acc[i][jn], 0.0f);

    load_step(g, x, w, p, CRS, 0, n0, a_tile, b_tile);
    __pipeline_commit();
    for (int t = 0; t < steps; ++t) {
      const int next = (t + 1) % kStages;
      if (t + 1 < steps) load_step(g, x, w, p, CRS, (t + 1) * kBK, n0, a_tile + next * kStageA, b_tile + next * kStageB);
      __pipeline_commit();
      __pipeline_wait_prior(kStages - 1);  // step t's copies have landed (this thread's)
      __syncthreads();           // ... and every thread's
      const float* a = a_tile + (t % kStages) * kStageA;
      const float* b = b_tile + (t % kStages) * kStageB;
#pragma unroll
      for (int kk = 0; kk < kBK; kk += 8) {
        wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fa[2];
        wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb[2];
        for (int i = 0; i < 2; ++i) {
          wmma::load_matrix_sync(fa[i], a + kk * kLdA + warp_m * 32 + i * 16, kLdA);
          for (int e = 0; e < fa[i].num_elements; ++e) fa[i].x[e] = wmma::__float_to_tf32(fa[i].x[e]);
        }
        for (int jn = 0; jn < 2; ++jn) {
          wmma::load_matrix_sync(fb[jn], b + (warp_n * 32 + jn * 16) * kLdB + kk, kLdB);
          for (int e = 0; e < fb[jn].num_elements; ++e) fb[jn].x[e] = wmma::__float_to_tf32(fb[jn].x[e]);
        }
        for (int i = 0; i < 2; ++i)
          for (int jn = 0; jn < 2; ++jn) wmma::mma_sync(acc[i][jn], fa[i], fb[jn], acc[i][jn]);
      }
      __syncthreads();  // every warp is done with this stage before it is filled again
    }
    // Every copy has landed: the last group committed (at t = steps - 1) was empty.

    // Epilogue: the accumulators into c[n][m] (the stages' memory), then to y, pixel-contiguous.
    for (int i = 0; i < 2; ++i)
      for (int jn = 0; jn < 2; ++jn)
        wmma::store_matrix_sync(c_tile + (warp_n * 32 + jn * 16) * kLdC + warp_m * 32 + i * 16, acc[i][jn], kLdC,
                                wmma::mem_col_major);
    __syncthreads();
    if (g.pixel_ok) {
      float* const y_pixel = y + std::size_t(img) * p.k * PQ + pq;
      for (int n = tid / kBM; n < kBN; n += kThreads / kBM)
        if (n0 + n < p.k) y_pixel[std::size_t(n0 + n) * PQ] = c_tile[n * kLdC + g.m];
    }
    __syncthreads();  // c_tile read before the next filter tile's copies overwrite it
  }
#endif
}

// --- window_kernel: stride 1 --------------------------------------------------------------------

constexpr int kWinBN = 64;     // filters a block
constexpr int kChunk = 8;      // channels a step: one k = 8 fragment step per tap
constexpr int kWinStages = 3;  // shared-memory stages
constexpr int kMaxWinSharedBytes = 113 * 1024;  // two blocks an SM on sm_90 (228 KB an SM; sm_80 has 164)

// The tiling of one launch (the launcher picks it; see window_geometry()).
struct WindowGeometry {
  int mx_log2;         // 16-pixel fragments across a tile row: 1 << mx_log2 (1, 2 or 4)
  int th;              // tile rows (MT >> mx_log2)
  int wr, wc;          // window rows and columns: th + R - 1, 16 mx + S - 1
  int tiles_x, tiles_y;  // tiles across Q and down P
  int window_floats;   // wr wc 8
  int stage_floats;    // window_floats + R S 64 8
};

// Copies channel chunk c0 of the block's window and of its 64 filters into one stage (4-byte
// asynchronous copies; zero fills outside the image, past C and past K). Thread t copies channel
// t % 8 of every 32nd window pixel, and of filters t / 8 and t / 8 + 32.
__device__ void load_window_chunk(const float* __restrict__ x_img, const float* __restrict__ w, const ConvProblem& p,
                                  const WindowGeometry& g, int c0, int f0, int iy0, int ix0, float* win,
                                  float* taps) {
  const int tid = int(threadIdx.x), c = tid % kChunk;
  const bool c_ok = c0 + c < p.c;
  const float* x_c = x_img + std::size_t(c_ok ? c0 + c : 0) * p.h * p.w;
  int row = (tid / kChunk) / g.wc, col = (tid / kChunk) % g.wc;
  while (row < g.wr) {
    const int iy = iy0 + row, ix = ix0 + col;
    const bool ok = c_ok && iy >= 0 && iy < p.h && ix >= 0 && ix < p.w;
    __pipeline_memcpy_async(win + (row * g.wc + col) * kChunk + c, ok ? x_c + iy * p.w + ix : x_img, sizeof(float),
                            ok ? 0 : sizeof(float));
    col += kThreads / kChunk;
    while (col >= g.wc) col -= g.wc, ++row;
  }
  const int RS = p.r * p.s;
  for (int f = tid / kChunk; f < kWinBN; f += kThreads / kChunk) {
    const bool ok = c_ok && f0 + f < p.k;
    const float* w_fc = w + (std::size_t(ok ? f0 + f : 0) * p.c + (ok ? c0 + c : 0)) * RS;
    for (int rs = 0; rs < RS; ++rs)
      __pipeline_memcpy_async(taps + (rs * kWinBN + f) * kChunk + c, ok ? w_fc + rs : w, sizeof(float),
                              ok ? 0 : sizeof(float));
  }
}

// The window kernel's fragment loads, from shared memory said in the instruction. The warp matrix
// API takes a generic pointer, and nvcc compiles load_matrix_sync from shared memory to a generic
// load (PTX wmma.load without .shared, SASS LD instead of LDS), which resolves the address space
// at run time: seen on an H200 (CUDA 13.0), where the window kernel with these loads took 0.146 ms
// on N32 C64 56x56 K64 3x3 and with load_matrix_sync 0.174 ms. (The GPU's counters also count
// generic loads and stores as global ones.) The CPU backend runs the API's loads: it has no PTX.
namespace wmma = nvcuda::wmma;
using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major>;

template <class Frag>
__device__ __forceinline__ void load_shared(Frag& f, const float* p, unsigned ld) {
  static_assert(std::is_same_v<Frag, FragA> || std::is_same_v<Frag, FragB>, "an A or B fragment of m16n16k8 TF32");
#if defined(__CUDA_ARCH__)
  const unsigned address = unsigned(__cvta_generic_to_shared(p));
  unsigned u[4];
  if constexpr (std::is_same_v<Frag, FragA>)
    asm("wmma.load.a.sync.aligned.row.m16n16k8.shared.tf32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(u[0]), "=r"(u[1]), "=r"(u[2]), "=r"(u[3]) : "r"(address), "r"(ld));
  else
    asm("wmma.load.b.sync.aligned.col.m16n16k8.shared.tf32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(u[0]), "=r"(u[1]), "=r"(u[2]), "=r"(u[3]) : "r"(address), "r"(ld));
  for (int e = 0; e < 4; ++e) f.x[e] = __uint_as_float(u[e]);
#else
  wmma::load_matrix_sync(f, p, ld);
#endif
}

// MT: 16-pixel fragments a block (16 or 8), MT / 4 a warp.
template <int MT>
__global__ void __launch_bounds__(kThreads, 2)
    window_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, ConvProblem p,
                  int P, int Q, WindowGeometry g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  // No TF32 tensor cores before compute capability 8.0: the launcher refuses such a GPU.
#else
  using namespace nvcuda;
  constexpr int kFrags = MT / 4;      // pixel fragments a warp
  constexpr int kTilePixels = MT * 16;
  constexpr int kLdOut = kTilePixels + 4;  // c[k][m], after the last step
  extern __shared__ __align__(128) float smem[];

  const int tid = int(threadIdx.x), warp = tid / 32;
  const int warp_m = warp % 4, warp_n = warp / 4;
  const int mx = 1 << g.mx_log2;
  // The block's tile: image n, output rows oy0.., columns ox0.. .
  int b = int(blockIdx.x);
  const int tile_x = b % g.tiles_x;
  b /= g.tiles_x;
  const int tile_y = b % g.tiles_y, n = b / g.tiles_y;
  const int oy0 = tile_y * g.th, ox0 = tile_x * 16 * mx;
  const float* x_img = x + std::size_t(n) * p.c * p.h * p.w;
  const int chunks = (p.c + kChunk - 1) / kChunk;

  // Where this warp's pixel fragments start in a stage's window (tap (0, 0)).
  int a_base[kFrags];
  for (int i = 0; i < kFrags; ++i) {
    const int frag = warp_m * kFrags + i;
    a_base[i] = ((frag >> g.mx_log2) * g.wc + (frag & (mx - 1)) * 16) * kChunk;
  }

  for (int f0 = int(blockIdx.y) * kWinBN; f0 < p.k; f0 += int(gridDim.y) * kWinBN) {
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[kFrags][2];
    for (int i = 0; i < kFrags; ++i)
      for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    for (int t = 0; t < kWinStages - 1; ++t) {
      if (t < chunks)
        load_window_chunk(x_img, w, p, g, t * kChunk, f0, oy0 - p.pad_h, ox0 - p.pad_w, smem + t * g.stage_floats,
                          smem + t * g.stage_floats + g.window_floats);
      __pipeline_commit();
    }
    for (int t = 0; t < chunks; ++t) {
      const int ahead = t + kWinStages - 1;  // the chunk copied while this one is multiplied
      if (ahead < chunks) {
        float* stage = smem + (ahead % kWinStages) * g.stage_floats;
        load_window_chunk(x_img, w, p, g, ahead * kChunk, f0, oy0 - p.pad_h, ox0 - p.pad_w, stage,
                          stage + g.window_floats);
      }
      __pipeline_commit();
      __pipeline_wait_prior(kWinStages - 1);  // chunk t's copies have landed (this thread's)
      __syncthreads();                        // ... and every thread's
      const float* win = smem + (t % kWinStages) * g.stage_floats;
      const float* taps = win + g.window_floats;
      for (int r = 0; r < p.r; ++r)
        for (int s = 0; s < p.s; ++s) {
          const int shift = (r * g.wc + s) * kChunk;  // tap (r, s): the window moved r rows, s columns
          FragB fb[2];
          for (int j = 0; j < 2; ++j)
            load_shared(fb[j], taps + ((r * p.s + s) * kWinBN + warp_n * 32 + j * 16) * kChunk, kChunk);
#pragma unroll
          for (int i = 0; i < kFrags; ++i) {
            FragA fa;
            load_shared(fa, win + a_base[i] + shift, kChunk);
            for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa, fb[j], acc[i][j]);
          }
        }
      __syncthreads();  // every warp is done with this stage before it is filled again
    }

    // Epilogue: c[k][m] (m = fragment * 16 + pixel), then y, pixel-contiguous.
    for (int i = 0; i < kFrags; ++i)
      for (int j = 0; j < 2; ++j)
        wmma::store_matrix_sync(smem + (warp_n * 32 + j * 16) * kLdOut + (warp_m * kFrags + i) * 16, acc[i][j],
                                kLdOut, wmma::mem_col_major);
    __syncthreads();
    for (int e = tid; e < kWinBN * kTilePixels; e += kThreads) {
      const int f = e / kTilePixels, m = e % kTilePixels, frag = m / 16;
      const int oy = oy0 + (frag >> g.mx_log2), ox = ox0 + (frag & (mx - 1)) * 16 + m % 16;
      if (f0 + f < p.k && oy < P && ox < Q)
        y[((std::size_t(n) * p.k + f0 + f) * P + oy) * Q + ox] = smem[f * kLdOut + m];
    }
    __syncthreads();  // c read before the next filter tile's copies overwrite it
  }
#endif
}

// The tiling for MT fragments a block: mx fragments across a row (4 for Q > 32, 2 for Q > 16,
// else 1), th = MT / mx rows.
WindowGeometry window_geometry(const ConvProblem& p, int P, int Q, int MT) {
  WindowGeometry g;
  g.mx_log2 = Q > 32 ? 2 : Q > 16 ? 1 : 0;
  g.th = MT >> g.mx_log2;
  g.wr = g.th + p.r - 1;
  g.wc = (16 << g.mx_log2) + p.s - 1;
  g.tiles_x = (Q + (16 << g.mx_log2) - 1) / (16 << g.mx_log2);
  g.tiles_y = (P + g.th - 1) / g.th;
  g.window_floats = g.wr * g.wc * kChunk;
  g.stage_floats = g.window_floats + p.r * p.s * kWinBN * kChunk;
  return g;
}

std::size_t window_shared_bytes(const WindowGeometry& g, int MT) {
  const std::size_t stages = std::size_t(kWinStages) * g.stage_floats, out = std::size_t(kWinBN) * (MT * 16 + 4);
  return (stages > out ? stages : out) * sizeof(float);
}

template <int MT>
void launch_window(const float* d_x, const float* d_w, float* d_y, const ConvProblem& p, int P, int Q,
                   const WindowGeometry& g, cudaStream_t stream) {
  const std::size_t bytes = window_shared_bytes(g, MT);
  CONVLAB_CUDA_CHECK(cudaFuncSetAttribute(window_kernel<MT>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  const long long filter_tiles = (p.k + kWinBN - 1) / kWinBN;
  const dim3 grid(unsigned(1LL * p.n * g.tiles_y * g.tiles_x), unsigned(filter_tiles < 65535 ? filter_tiles : 65535));
  window_kernel<MT><<<grid, kThreads, bytes, stream>>>(d_x, d_w, d_y, p, P, Q, g);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace

void conv_tensor_core(const float* d_x, const float* d_w, float* d_y, const ConvProblem& p, cudaStream_t stream) {
  validate(p);
  int device = 0, major = 0;
  CONVLAB_CUDA_CHECK(cudaGetDevice(&device));
  CONVLAB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 8)
    throw std::runtime_error("conv_tensor_core: TF32 tensor cores need a GPU of compute capability 8.0 or newer; "
                             "this one is " + std::to_string(major) + ".x");
  const int P = p.out_h(), Q = p.out_w();
  if (p.stride_h == 1 && p.stride_w == 1) {
    // The window kernel where its stages fit twice an SM: 16 fragments a block, or 8 where 16 would
    // leave SMs without two blocks.
    int sms = 0;
    CONVLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const WindowGeometry g16 = window_geometry(p, P, Q, 16), g8 = window_geometry(p, P, Q, 8);
    const long long blocks16 = 1LL * p.n * g16.tiles_y * g16.tiles_x * ((p.k + kWinBN - 1) / kWinBN);
    if (blocks16 >= 2LL * sms && window_shared_bytes(g16, 16) <= kMaxWinSharedBytes)
      return launch_window<16>(d_x, d_w, d_y, p, P, Q, g16, stream);
    if (window_shared_bytes(g8, 8) <= kMaxWinSharedBytes) return launch_window<8>(d_x, d_w, d_y, p, P, Q, g8, stream);
  }
  const long long pixels = 1LL * p.n * P * Q;
  const long long filter_tiles = (p.k + kBN - 1) / kBN;
  const dim3 grid(unsigned((pixels + kBM - 1) / kBM), unsigned(filter_tiles < 65535 ? filter_tiles : 65535));
  tensor_core_kernel<<<grid, kThreads, 0, stream>>>(d_x, d_w, d_y, p, P, Q);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::lab06
