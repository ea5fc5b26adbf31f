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
// Stride 1 and 3 x 3 filters (every ResNet layer of the lab) take a second kernel, mma_kernel: the
// gather above costs integer work for every element of every A tile (C R S of them per pixel), and
// that work, not the tensor cores, bounds it. With stride 1 the A tile of tap (r, s) is the tile of
// tap (0, 0) moved by r rows and s columns, so a block copies its input window once a channel
// chunk, and every tap reads it; the products are PTX mma.sync.m16n8k8, whose fragments each lane
// loads itself (see its section below). On Hopper (compute capability 9.0) the layers of up to 64
// channels take a third, wgmma_kernel: the same window, the products on the warpgroup instruction
// wgmma, the filters read by the tensor cores from shared memory (convlab/wgmma.hpp; this lab's
// kernels are built for sm_90a: labs/06-conv-im2col-cudnn/CMakeLists.txt). On the N32 C64 56x56 K64
// layer (H200): general kernel 0.26 ms, mma kernel 0.067 ms, wgmma kernel 0.052 ms.
#include "lab06.hpp"

#include <convlab/check.hpp>
#include <convlab/wgmma.hpp>

#include <cuda_pipeline.h>
#include <mma.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

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

// --- shared by the stride-1 kernels -----------------------------------------------------------

constexpr int kChunk = 8;  // channels a step: one k = 8 step of the products per tap
constexpr int kMaxSharedBytes = 113 * 1024;  // two blocks an SM on sm_90 (228 KB an SM; sm_80 has 164)

// --- mma_kernel: stride 1, 3 x 3, the tensor cores' own instruction -----------------------------
//
// A block copies its input window (the rows under its outputs, + 2) once a chunk of 8 channels, and
// tap (r, s) reads it moved by r rows and s columns. Through the warp matrix API the window would
// have to be channel-innermost (a fragment is 16 rows of one leading dimension, 32-byte aligned: ld
// 8, two lanes on each shared-memory bank), and which lane holds which element is not told, so the
// API would be all a kernel can use. PTX's mma.sync.m16n8k8 (TF32) tells it: lane l = 4 g + t holds
//   A (16 pixels x 8 channels): a0 = A[g][t], a1 = A[g + 8][t], a2 = A[g][t + 4], a3 = A[g + 8][t + 4]
//   B (8 channels x 8 filters): b0 = B[t][g], b1 = B[t + 4][g]
//   C (16 x 8): c0 = C[g][2t], c1 = C[g][2t + 1], c2 = C[g + 8][2t], c3 = C[g + 8][2t + 1]
// and each lane loads its own elements, with 32-bit loads from any address. So:
//   - the window stays as the input lies (NCHW: win[c][row][col], channel stride kc = 8 mod 32
//     words): the 32 lanes of an A load read 8 consecutive pixels of 4 channels, 32 different
//     banks at every tap's shift; and it is copied with 16-byte cp.async, 4 pixels a copy (the
//     window's first column moved left to a multiple of 4, where W is one);
//   - the filters too (f[k][c][rs], a filter's 72 floats in a row of 76, = 12 mod 32: the B loads
//     hit 32 banks), 16-byte copies of 8 channels x 9 taps, contiguous in w;
//   - a block is BM = 16 FM WM consecutive output pixels of one image (whole rows or not: a lane's
//     pixels are found by their offsets in the window, computed once) x 64 filters; WM x WN warps,
//     each 16 FM pixels x 8 FN filters: FM FN accumulators of 4 floats;
//   - the accumulators go to y from the registers: a store of the warp writes 8 consecutive pixels
//     of 4 filters, four whole 32-byte sectors.
// The CPU backend has no PTX: mma_pair() there does the two m16n8k8 products as one m16n16k8 of the
// warp matrix API, through a scratch tile of the warp in shared memory (the same products, the
// same TF32 operands).
constexpr int kMmaBN = 64;    // filters a block
constexpr int kMmaStages = 3;  // shared-memory stages, 8 channels each
constexpr int kFilterRow = 76;  // a filter's 8 x 9 taps of a stage: 72 floats in a row of 76 (= 12 mod 32)

// The tiling of one launch of mma_kernel (the launcher picks it: mma_geometry()).
struct MmaGeometry {
  int blocks_per_image;  // ceil(P Q / BM)
  int wr, wc;            // window rows, and floats a window row (a multiple of 4)
  int kc;                // floats a channel of the window: >= wr wc, = 8 mod 32
  int ix0;               // the window's first column, relative to the tile's input column -pad_w
  int lead;              // -pad_w - ix0: where output column 0's tap (.., 0) lies in a window row
  int window_floats;     // 8 kc
  int stage_floats;      // window_floats + 64 kFilterRow
  bool wide_x, wide_w;   // 16-byte copies of x (W % 4 == 0, x 16-byte aligned), of w (C % 8 == 0)
};

template <int WM, int WN, int FM, int FN>
struct MmaTiling {
  static constexpr int kWarps = WM * WN, kThreads = 32 * kWarps, kBM = 16 * FM * WM;
  static_assert(8 * FN * WN == kMmaBN, "a block's warps cover its 64 filters");
  static_assert(FN % 2 == 0, "the filter fragments go in pairs (one m16n16k8 on the CPU backend)");
};

// Copies 8 channels (c0 ..) of the block's window into one stage: a thread takes a spot of kStep
// floats in a window row (4: 16-byte copies, where W % 4 == 0 puts all 4 or none inside the image;
// or 1) and copies it for the 8 channels, moving by a channel plane (H W) in x and kc in the stage.
// The copy size is a constant: given at run time, __pipeline_memcpy_async branches over sizes. And
// one division a spot, not one an element: the address arithmetic of the copies, done per element,
// took more instructions than the products (0.102 ms against 0.070 ms on N32 C64 56x56 K64, H200).
template <class T, int kStep>
__device__ void load_mma_window(const float* __restrict__ x_img, const ConvProblem& p, const MmaGeometry& g, int c0,
                                int iy0, float* win) {
  const int per_row = g.wc / kStep, channels = p.c - c0;
  const std::size_t plane = std::size_t(p.h) * p.w;
  for (int e = int(threadIdx.x); e < g.wr * per_row; e += T::kThreads) {
    const int row = e / per_row, col = e % per_row * kStep, iy = iy0 + row, ix = g.ix0 + col;
    const bool inside = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w;
    const float* src = x_img + std::size_t(c0) * plane + (inside ? std::size_t(iy) * p.w + ix : 0);
    float* dst = win + row * g.wc + col;
#pragma unroll
    for (int c = 0; c < kChunk; ++c, src += plane, dst += g.kc) {
      const bool ok = inside && c < channels;
      __pipeline_memcpy_async(dst, ok ? src : x_img, kStep * sizeof(float), ok ? 0 : kStep * sizeof(float));
    }
  }
}

// And the 64 filters' taps of those channels, f[k][c][rs]: 72 consecutive floats of w a filter,
// kStep floats a copy (4 where C % 8 == 0; else 1, and zeros past C).
template <class T, int kStep>
__device__ void load_mma_filters(const float* __restrict__ w, const ConvProblem& p, int c0, int f0, float* taps) {
  constexpr int RS = 9, per_filter = kChunk * RS / kStep;
#pragma unroll 1
  for (int e = int(threadIdx.x); e < kMmaBN * per_filter; e += T::kThreads) {
    const int f = e / per_filter, i = e % per_filter * kStep;
    const bool ok = f0 + f < p.k && c0 + i / RS < p.c;
    const float* src = ok ? w + (std::size_t(f0 + f) * p.c + c0) * RS + i : w;
    __pipeline_memcpy_async(taps + f * kFilterRow + i, src, kStep * sizeof(float), ok ? 0 : kStep * sizeof(float));
  }
}

// The same where all 64 filters and 8 channels are there (every ResNet layer): a thread's (filter,
// spot) and addresses step by constants, no division or bounds check a copy. The address arithmetic
// above was most of the kernel's integer instructions (H200, N8 C128: 0.034 -> 0.027 ms).
template <class T>
__device__ void load_mma_filters_whole(const float* __restrict__ w, const ConvProblem& p, int c0, int f0, float* taps) {
  constexpr int per_filter = kChunk * 9 / 4;  // 16-byte copies a filter's 72 floats: 18
  constexpr int df = T::kThreads / per_filter, di = T::kThreads % per_filter;  // one step, in (filter, spot)
  const std::size_t filter = std::size_t(p.c) * 9;  // floats from a filter to the next in w
  int i = int(threadIdx.x) % per_filter;
  const int f = int(threadIdx.x) / per_filter;
  const float* src = w + (f0 + f) * filter + std::size_t(c0) * 9 + 4 * i;
  float* dst = taps + f * kFilterRow + 4 * i;
#pragma unroll 1
  for (int e = int(threadIdx.x); e < kMmaBN * per_filter; e += T::kThreads) {
    __pipeline_memcpy_async(dst, src, 4 * sizeof(float));
    i += di, src += df * filter + 4 * di, dst += df * kFilterRow + 4 * di;
    if (i >= per_filter) i -= per_filter, src += filter - 4 * per_filter, dst += kFilterRow - 4 * per_filter;
  }
}

template <class T>
__device__ void load_mma_stage(const float* __restrict__ x_img, const float* __restrict__ w, const ConvProblem& p,
                               const MmaGeometry& g, int c0, int f0, int iy0, float* win, float* taps) {
  if (g.wide_x) load_mma_window<T, 4>(x_img, p, g, c0, iy0, win);
  else load_mma_window<T, 1>(x_img, p, g, c0, iy0, win);
  if (g.wide_w && f0 + kMmaBN <= p.k) load_mma_filters_whole<T>(w, p, c0, f0, taps);  // wide_w: C % 8 == 0
  else if (g.wide_w) load_mma_filters<T, 4>(w, p, c0, f0, taps);
  else load_mma_filters<T, 1>(w, p, c0, f0, taps);
}

// acc0 += A B0, acc1 += A B1: two m16n8k8 TF32 products of the warp (B0, B1: filters 0-7, 8-15 of
// a pair). The operands are the floats' bits: the tensor cores read their upper 19 (truncation).
template <class T>
__device__ __forceinline__ void mma_pair(float (&acc0)[4], float (&acc1)[4], const float (&a)[4], const float (&b0)[2],
                                         const float (&b1)[2]) {
#if defined(__CUDA_ARCH__)
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(acc0[0]), "+f"(acc0[1]), "+f"(acc0[2]), "+f"(acc0[3])
      : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])), "r"(__float_as_uint(a[3])),
        "r"(__float_as_uint(b0[0])), "r"(__float_as_uint(b0[1])));
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(acc1[0]), "+f"(acc1[1]), "+f"(acc1[2]), "+f"(acc1[3])
      : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])), "r"(__float_as_uint(a[3])),
        "r"(__float_as_uint(b1[0])), "r"(__float_as_uint(b1[1])));
#else
  // The lanes' elements into the warp's tiles (A row-major 16 x 8, B column-major 8 x 16, C
  // row-major 16 x 16), one m16n16k8 product, the lanes' elements back.
  using namespace nvcuda;
  __shared__ float scratch[T::kWarps][128 + 128 + 256];
  const int lane = int(threadIdx.x) % 32, g = lane / 4, t = lane % 4;
  float* sa = scratch[threadIdx.x / 32];
  float* sb = sa + 128;
  float* sc = sb + 128;
  sa[g * 8 + t] = a[0], sa[(g + 8) * 8 + t] = a[1], sa[g * 8 + t + 4] = a[2], sa[(g + 8) * 8 + t + 4] = a[3];
  sb[g * 8 + t] = b0[0], sb[g * 8 + t + 4] = b0[1], sb[(g + 8) * 8 + t] = b1[0], sb[(g + 8) * 8 + t + 4] = b1[1];
  for (int e = 0; e < 4; ++e) {
    const int m = g + 8 * (e / 2), n = 2 * t + e % 2;
    sc[m * 16 + n] = acc0[e], sc[m * 16 + 8 + n] = acc1[e];
  }
  __syncwarp();
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
  wmma::load_matrix_sync(fa, sa, 8);
  wmma::load_matrix_sync(fb, sb, 8);
  wmma::load_matrix_sync(fc, sc, 16, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  __syncwarp();  // every lane has read the tiles
  wmma::store_matrix_sync(sc, fc, 16, wmma::mem_row_major);
  __syncwarp();
  for (int e = 0; e < 4; ++e) {
    const int m = g + 8 * (e / 2), n = 2 * t + e % 2;
    acc0[e] = sc[m * 16 + n], acc1[e] = sc[m * 16 + 8 + n];
  }
  __syncwarp();  // read before the next product writes the tiles
#endif
}

template <int WM, int WN, int FM, int FN>
__global__ void __launch_bounds__(MmaTiling<WM, WN, FM, FN>::kThreads, 2)
    mma_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, ConvProblem p, int P,
               int Q, MmaGeometry g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  // No TF32 tensor cores before compute capability 8.0: the launcher refuses such a GPU.
#else
  using T = MmaTiling<WM, WN, FM, FN>;
  extern __shared__ __align__(128) float smem[];
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int warp_m = warp % WM, warp_n = warp / WM, lg = lane / 4, lt = lane % 4;
  const int n = int(blockIdx.x) / g.blocks_per_image, m0 = int(blockIdx.x) % g.blocks_per_image * T::kBM;
  const int f0 = int(blockIdx.y) * kMmaBN, PQ = P * Q, oy0 = m0 / Q;
  const float* x_img = x + std::size_t(n) * p.c * p.h * p.w;
  const int chunks = (p.c + kChunk - 1) / kChunk;

  // Where this lane's A elements of tap (0, 0) lie in a stage's window: pixels lg and lg + 8 of
  // each of its fragments, channel lt (channel lt + 4: 4 kc further).
  int a_at[FM][2];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = m0 + (warp_m * FM + i) * 16 + lg + 8 * h, oy = m / Q, ox = m % Q;
      a_at[i][h] = lt * g.kc + (oy - oy0) * g.wc + ox + g.lead;
    }
  // And its B elements: filter lg of each fragment, channels lt and lt + 4.
  const int b_at = (warp_n * FN * 8 + lg) * kFilterRow + lt * 9;

  float acc[FM][FN][4] = {};
  const int iy0 = oy0 - p.pad_h;
  for (int t = 0; t < kMmaStages - 1; ++t) {
    float* stage = smem + t * g.stage_floats;
    if (t < chunks) load_mma_stage<T>(x_img, w, p, g, t * kChunk, f0, iy0, stage, stage + g.window_floats);
    __pipeline_commit();
  }
  for (int t = 0; t < chunks; ++t) {
    __pipeline_wait_prior(kMmaStages - 2);  // chunk t's copies have landed (this thread's)
    __syncthreads();  // ... every thread's; and every warp is done with chunk t - 1's stage
    const int ahead = t + kMmaStages - 1;  // copied into chunk t - 1's stage while chunk t is multiplied
    if (ahead < chunks) {
      float* stage = smem + ahead % kMmaStages * g.stage_floats;
      load_mma_stage<T>(x_img, w, p, g, ahead * kChunk, f0, iy0, stage, stage + g.window_floats);
    }
    __pipeline_commit();
    const float* win = smem + t % kMmaStages * g.stage_floats;
    const float* taps = win + g.window_floats + b_at;
#pragma unroll
    for (int r = 0; r < 3; ++r)
#pragma unroll
      for (int s = 0; s < 3; ++s) {
        const float* tap = win + r * g.wc + s;  // the window moved r rows, s columns
        float b[FN][2];
#pragma unroll
        for (int j = 0; j < FN; ++j)
          b[j][0] = taps[j * 8 * kFilterRow + r * 3 + s], b[j][1] = taps[j * 8 * kFilterRow + 36 + r * 3 + s];
#pragma unroll
        for (int i = 0; i < FM; ++i) {
          const float a[4] = {tap[a_at[i][0]], tap[a_at[i][1]], tap[a_at[i][0] + 4 * g.kc], tap[a_at[i][1] + 4 * g.kc]};
#pragma unroll
          for (int j = 0; j < FN; j += 2) mma_pair<T>(acc[i][j], acc[i][j + 1], a, b[j], b[j + 1]);
        }
      }
  }

  // The accumulators to y: element e of fragment (i, j) is pixel lg + 8 (e / 2), filter 2 lt + e % 2.
  float* const y_img = y + std::size_t(n) * p.k * PQ;
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int m = m0 + (warp_m * FM + i) * 16 + lg + 8 * (e / 2), f = f0 + (warp_n * FN + j) * 8 + 2 * lt + e % 2;
        if (m < PQ && f < p.k) y_img[std::size_t(f) * PQ + m] = acc[i][j][e];
      }
#endif
}

// The window of BM pixels (up to (Q - 1 + BM - 1) / Q + 1 output rows, + 2), its first column at a
// multiple of 4 left of -pad_w when the copies are 16 bytes wide.
MmaGeometry mma_geometry(const ConvProblem& p, int P, int Q, int BM, bool wide_x, bool wide_w) {
  MmaGeometry g;
  g.blocks_per_image = (P * Q + BM - 1) / BM;
  g.wide_x = wide_x, g.wide_w = wide_w;
  g.wr = (Q - 1 + BM - 1) / Q + 1 + p.r - 1;
  g.ix0 = wide_x ? -((p.pad_w + 3) / 4 * 4) : -p.pad_w;
  g.lead = -p.pad_w - g.ix0;
  g.wc = (g.lead + Q + p.s - 1 + 3) / 4 * 4;
  g.kc = (g.wr * g.wc + 23) / 32 * 32 + 8;
  g.window_floats = kChunk * g.kc;
  g.stage_floats = g.window_floats + kMmaBN * kFilterRow;
  return g;
}

template <int WM, int WN, int FM, int FN>
void launch_mma(const float* d_x, const float* d_w, float* d_y, const ConvProblem& p, int P, int Q,
                const MmaGeometry& g, cudaStream_t stream) {
  using T = MmaTiling<WM, WN, FM, FN>;
  const std::size_t bytes = std::size_t(kMmaStages) * g.stage_floats * sizeof(float);
  CONVLAB_CUDA_CHECK(cudaFuncSetAttribute(mma_kernel<WM, WN, FM, FN>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          int(bytes)));
  const dim3 grid(unsigned(1LL * p.n * g.blocks_per_image), unsigned((p.k + kMmaBN - 1) / kMmaBN));
  mma_kernel<WM, WN, FM, FN><<<grid, T::kThreads, bytes, stream>>>(d_x, d_w, d_y, p, P, Q, g);
  CONVLAB_CHECK_LAUNCH();
}

// --- wgmma_kernel: Hopper (compute capability 9.0), stride 1, 3 x 3, up to 64 channels ----------
//
// mma_kernel's products on Hopper's warpgroup instruction (convlab/wgmma.hpp): a warpgroup (4 warps)
// multiplies 64 output pixels by 64 filters by 8 channels in one wgmma.mma_async m64n64k8, whose
// TF32 peak is about twice mma.sync's. A comes from registers, laid out per warp as mma.sync's A
// fragment, so the lanes load it from a channel-major window exactly as mma_kernel's do; B is read
// by the tensor cores themselves from shared memory through a matrix descriptor, with no load
// instructions in the warps. TF32 takes B K-major: a tap's 64 x 8 filter tile is 16 core matrices
// of 8 filters x 4 channels (128 contiguous bytes), the two along K 128 bytes apart, the eight
// along N 256 bytes apart, no swizzle (filter_at()).
//   - Every filter of the block's 64 for every channel stays in shared memory (C / 8 chunks x 9
//     taps x 2064 bytes: 149 KB for C = 64), so a block is persistent: one an SM, a contiguous range
//     of 64-pixel units (units / SMs each), taken in tiles of up to 4 units inside one image, one unit
//     a warpgroup. The filters are copied with the first tile's chunks (4-byte cp.async); the
//     windows (three stages, load_mma_window) run on across tiles, two chunks ahead.
//   - cp.async writes shared memory through the generic proxy, the tensor cores read it through the
//     async proxy: a proxy fence between them (wgmma::shared_writes_to_async_proxy()), then a barrier.
//   - A group of a filter row's 3 taps is committed at a time, and the lanes load the next row's A
//     while it runs (wgmma::wait<1>: three register sets, one a row, each reused only after its group
//     is done).
//   - A warpgroup whose unit lies past the tile's end skips the whole chunk, not single products: a
//     branch around single wgmma instructions makes ptxas serialize them (its warning C7520).
// Measured on the N32 C64 56x56 K64 layer (H200, L2 flushed, interleaved with mma_kernel): 0.052 ms
// against 0.067 ms.
constexpr int kUnit = 64;              // output pixels a warpgroup multiplies (wgmma's m)
constexpr int kGroups = 4;             // warpgroups a block: a tile is up to 4 units
constexpr int kWgThreads = 128 * kGroups;
constexpr int kWgStages = 3;           // window stages
constexpr int kTapFloats = 516;        // a tap's 64 x 8 filter tile: 512 floats, + 4 (banks, when written)
constexpr int kWgMaxChannels = 64;     // the filters stay in shared memory

// Where filter k, channel c (of a chunk of 8) lies in its tap's tile: core matrix (k / 8, c / 4).
__host__ __device__ constexpr int filter_at(int k, int c) { return (k / 8) * 64 + (c / 4) * 32 + (k % 8) * 4 + c % 4; }

// The blocks' shares of one launch: 64-pixel units (an image's last may hang over), per_block a block.
// The window of a tile (4 units) is mma_kernel's (mma_geometry()), copied by load_mma_window with
// this kernel's 512 threads.
struct WgmmaPlan {
  int units_per_image, units, per_block;
};
struct WgmmaBlock {
  static constexpr int kThreads = kWgThreads;
};

// Channels c0 .. c0 + 7 of the block's 64 filters into their taps' tiles: thread t copies the 9
// taps of (filter t / 8, channel c0 + t % 8), 9 consecutive floats of w; zeros past K and C.
__device__ void copy_wgmma_filters(const float* __restrict__ w, const ConvProblem& p, int f0, int c0, float* filt) {
  for (int pair = int(threadIdx.x); pair < kUnit * kChunk; pair += kWgThreads) {
    const int k = pair / kChunk, c = pair % kChunk;
    const bool ok = f0 + k < p.k && c0 + c < p.c;
    float* dst = filt + (c0 / kChunk) * 9 * kTapFloats + filter_at(k, c);
    const float* src = ok ? w + (std::size_t(f0 + k) * p.c + c0 + c) * 9 : w;
#pragma unroll
    for (int rs = 0; rs < 9; ++rs)
      __pipeline_memcpy_async(dst + rs * kTapFloats, src + (ok ? rs : 0), sizeof(float), ok ? 0 : sizeof(float));
  }
}

__global__ void __launch_bounds__(kWgThreads, 1)
    wgmma_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, ConvProblem p, int P,
                 int Q, MmaGeometry g, WgmmaPlan plan) {
  // Compiled for every target, but its products only in the sm_90a code (convlab/wgmma.hpp): the
  // launcher asks wgmma::loaded() first.
  extern __shared__ __align__(128) float smem[];
  const int chunks = (p.c + kChunk - 1) / kChunk;
  float* const filt = smem;                              // [chunks][9][kTapFloats]
  float* const stages = smem + chunks * 9 * kTapFloats;  // [kWgStages][g.window_floats]
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32, group = warp / 4, wq = warp % 4;
  const int lg = lane / 4, lt = lane % 4;
  const int f0 = int(blockIdx.y) * kUnit, PQ = P * Q;
  const int u_begin = int(blockIdx.x) * plan.per_block, u_end = min(plan.units, u_begin + plan.per_block);
  const auto tile_units = [&](int u) {  // the tile starting at unit u: up to 4 units, one image
    return min(kGroups, min(u_end, (u / plan.units_per_image + 1) * plan.units_per_image) - u);
  };

  // The copies run two chunks ahead of the products: (tile pu, chunk pc) next.
  int pu = u_begin, pc = 0;
  const auto copy_next = [&](float* stage) {
    if (pu < u_end) {
      if (pu == u_begin) copy_wgmma_filters(w, p, f0, pc * kChunk, filt);  // the first tile brings the filters
      const int n = pu / plan.units_per_image, m0 = pu % plan.units_per_image * kUnit;
      load_mma_window<WgmmaBlock, 4>(x + std::size_t(n) * p.c * p.h * p.w, p, g, pc * kChunk, m0 / Q - p.pad_h, stage);
      if (++pc == chunks) pc = 0, pu += tile_units(pu);
    }
    __pipeline_commit();
  };
  copy_next(stages);
  copy_next(stages + g.window_floats);

  float acc[32] = {};
  int step = 0;
  for (int tu = u_begin; tu < u_end;) {
    const int units = tile_units(tu);
    const int n = tu / plan.units_per_image, m0 = tu % plan.units_per_image * kUnit, oy0 = m0 / Q;
    const bool active = group < units;
    // This lane's A elements of tap (0, 0): pixels lg and lg + 8 of its warp's 16, channel lt
    // (lt + 4: 4 kc further). Pixels past the image read the tile's first one (never stored).
    int a_at[2];
    for (int h = 0; h < 2; ++h) {
      int m = m0 + group * kUnit + wq * 16 + lg + 8 * h;
      if (m >= PQ || !active) m = m0;
      a_at[h] = lt * g.kc + (m / Q - oy0) * g.wc + m % Q + g.lead;
    }
    for (int c = 0; c < chunks; ++c, ++step) {
      __pipeline_wait_prior(1);  // this step's copies have landed (this thread's)
      if (step < chunks) wgmma::shared_writes_to_async_proxy();  // the filters, for the tensor cores
      __syncthreads();  // ... every thread's; and every warp is done with the stage filled next
      copy_next(stages + (step + 2) % kWgStages * g.window_floats);
      if (!active) continue;  // around the whole chunk: the wgmma pipeline stays as it is
      const float* win = stages + step % kWgStages * g.window_floats;
      const float* taps = filt + c * 9 * kTapFloats;
      float a[3][3][4];
#pragma unroll
      for (int r = 0; r < 3; ++r) {
#pragma unroll
        for (int s = 0; s < 3; ++s) {
          const float* tap = win + r * g.wc + s;  // the window moved r rows, s columns
          a[r][s][0] = tap[a_at[0]], a[r][s][1] = tap[a_at[1]];
          a[r][s][2] = tap[a_at[0] + 4 * g.kc], a[r][s][3] = tap[a_at[1] + 4 * g.kc];
        }
        wgmma::fence();  // the A registers just written
#pragma unroll
        for (int s = 0; s < 3; ++s)
          wgmma::mma_64x64x8(acc, a[r][s], wgmma::descriptor(taps + (r * 3 + s) * kTapFloats, 128, 256));
        wgmma::commit();
        wgmma::wait<1>();  // the previous row's group is done: its registers may be loaded again
      }
    }
    wgmma::wait<0>();
    // Accumulator i: pixel wq 16 + lg + 8 (i / 2 % 2) of the unit, filter 8 (i / 4) + 2 lt + i % 2.
    float* const y_img = y + std::size_t(n) * p.k * PQ;
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const int m = m0 + group * kUnit + wq * 16 + lg + 8 * (i / 2 % 2), f = f0 + 8 * (i / 4) + 2 * lt + i % 2;
      if (active && m < PQ && f < p.k) y_img[std::size_t(f) * PQ + m] = acc[i];
      acc[i] = 0.0f;
    }
    tu += units;
  }
}

// Launches wgmma_kernel where it takes the layer on this device (stride 1, 3 x 3, C <= 64, W % 4 == 0
// and x 16-byte aligned, the sm_90a code loaded on compute capability 9.0, the filters and stages
// within the block's shared memory); false, having launched nothing, where it does not.
bool launch_wgmma(const float* d_x, const float* d_w, float* d_y, const ConvProblem& p, int P, int Q, int device,
                  int sms, cudaStream_t stream) {
  if (p.stride_h != 1 || p.stride_w != 1 || p.r != 3 || p.s != 3 || p.c > kWgMaxChannels || p.w % 4 != 0 ||
      reinterpret_cast<std::uintptr_t>(d_x) % 16 != 0 || 1LL * p.n * ((1LL * P * Q + kUnit - 1) / kUnit) > 0x7FFFFFFF ||
      (p.k + kUnit - 1) / kUnit > 65535 || !wgmma::loaded(wgmma_kernel))
    return false;
  const MmaGeometry g = mma_geometry(p, P, Q, kUnit * kGroups, true, false);
  WgmmaPlan plan;
  plan.units_per_image = (P * Q + kUnit - 1) / kUnit;
  plan.units = p.n * plan.units_per_image;
  const int filter_tiles = (p.k + kUnit - 1) / kUnit;
  const int columns = std::max(1, std::min(plan.units, sms / filter_tiles));  // blocks along the pixels
  plan.per_block = (plan.units + columns - 1) / columns;
  const std::size_t bytes =
      (std::size_t((p.c + kChunk - 1) / kChunk) * 9 * kTapFloats + std::size_t(kWgStages) * g.window_floats) *
      sizeof(float);
  int optin = 0;
  CONVLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (bytes > std::size_t(optin)) return false;
  CONVLAB_CUDA_CHECK(cudaFuncSetAttribute(wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  const dim3 grid(unsigned((plan.units + plan.per_block - 1) / plan.per_block), unsigned(filter_tiles));
  wgmma_kernel<<<grid, kWgThreads, bytes, stream>>>(d_x, d_w, d_y, p, P, Q, g, plan);
  CONVLAB_CHECK_LAUNCH();
  return true;
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
  int sms = 0;
  CONVLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (launch_wgmma(d_x, d_w, d_y, p, P, Q, device, sms, stream)) return;
  if (p.stride_h == 1 && p.stride_w == 1 && p.r == 3 && p.s == 3 && (p.k + kMmaBN - 1) / kMmaBN <= 65535) {
    // The mma kernel where its stages fit twice an SM: blocks of 224 pixels (7 warps of 32 x 64),
    // or of 128 (8 warps of 32 x 32) where 224 would leave SMs without two blocks.
    const bool wide_x = p.w % 4 == 0 && reinterpret_cast<std::uintptr_t>(d_x) % 16 == 0;
    const bool wide_w = p.c % kChunk == 0 && reinterpret_cast<std::uintptr_t>(d_w) % 16 == 0;
    const MmaGeometry g224 = mma_geometry(p, P, Q, 224, wide_x, wide_w), g128 = mma_geometry(p, P, Q, 128, wide_x, wide_w);
    const long long filter_tiles = (p.k + kMmaBN - 1) / kMmaBN;
    const auto fits = [&](const MmaGeometry& g) {
      return std::size_t(kMmaStages) * g.stage_floats * sizeof(float) <= std::size_t(kMaxSharedBytes) &&
             1LL * p.n * g.blocks_per_image <= 0x7FFFFFFFLL;
    };
    if (1LL * p.n * g224.blocks_per_image * filter_tiles >= 2LL * sms && fits(g224))
      return launch_mma<7, 1, 2, 8>(d_x, d_w, d_y, p, P, Q, g224, stream);
    if (fits(g128)) return launch_mma<4, 2, 2, 4>(d_x, d_w, d_y, p, P, Q, g128, stream);
  }
  const long long pixels = 1LL * p.n * P * Q;
  const long long filter_tiles = (p.k + kBN - 1) / kBN;
  const dim3 grid(unsigned((pixels + kBM - 1) / kBM), unsigned(filter_tiles < 65535 ? filter_tiles : 65535));
  tensor_core_kernel<<<grid, kThreads, 0, stream>>>(d_x, d_w, d_y, p, P, Q);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::lab06
