// Lab 04 — fewer operations and fewer instructions (reference solution).
//
// conv2d_separable: a filter that is the outer product of two 1D filters is applied
// as a row pass and a column pass: 2(2r+1) multiply-adds per pixel instead of (2r+1)^2.
// conv1d_fast, conv2d_fast (extra credit): the road to the roofline. One tile kernel,
// conv_tile_kernel<Shape>, does all of it; the Shape says how far the filter reaches
// along x and y and how the block's threads cover the tile:
//   conv2d_fast        Shape<r, r>  32 x 8 threads, each 4 columns x 4 rows   (tile 128 x 32)
//   conv1d_fast        Shape<r, 0>  256 threads, each 4 groups of 4 columns  (tile 4096)
//   separable, rows    Shape<r, 0>  64 x 4 threads, each 2 x 4 columns x 4 rows (tile 512 x 16)
//   separable, columns Shape<0, r>  32 x 8 threads, each 4 columns x 8 rows   (tile 128 x 64)
//   grid(ceil(width / OUT_W), ceil(height / OUT_H)), block(BX, BY)
//
// What makes it fast:
// - Register tiling. A thread computes 4 x K outputs. It reads each input row of its
//   window from shared memory once, as float4s, and uses every value for up to
//   4 (2r+1) multiply-adds of the K outputs it feeds. For r = 7 and K = 4 that is
//   3600 FFMAs per 90 LDS.128: shared memory is not the limit, the FMA pipe is.
// - The radius is a template parameter (r = 0..8, dispatched at run time), so every
//   loop unrolls, every index is a constant, and the accumulators stay in registers.
// - The taps are a kernel argument (struct Taps). Kernel arguments live in a constant
//   bank: with constant indices each tap is an immediate operand of its FFMA
//   (FFMA R, R, c[0x0][...], R): no load instruction per tap, and no copy before the
//   launch.
// - 16-byte accesses: the tile is loaded with LDG.128 and LDS/STS.128 wherever the
//   address allows, outputs are stored with STG.128. Rows whose start is not 16-byte
//   aligned (any width that is not a multiple of 4, or a misaligned pointer) still load
//   aligned float4s and place their elements one by one.
// Radii above 8 take a generic path (one output per thread, taps in constant memory).
#include "lab04.hpp"

#include <convlab/check.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace convlab::lab04 {
namespace {

constexpr int FAST_MAX_RADIUS = 8;  // radii with a compiled kernel

// The taps of a filter, passed by value as a kernel argument (a constant bank).
template <int N>
struct Taps {
  float v[N];
};

template <int N>
Taps<N> make_taps(const float* h_filter) {
  Taps<N> t;
  std::memcpy(t.v, h_filter, sizeof t.v);
  return t;
}

// The geometry of one tile kernel: radii, threads, outputs per thread, and what follows.
template <int RX_, int RY_, int BX_, int BY_, int K_, int G_>
struct Shape {
  static constexpr int RX = RX_, RY = RY_;  // filter radius along x and y
  static constexpr int BX = BX_, BY = BY_;  // threads per block along x and y
  static constexpr int K = K_;              // consecutive output rows per thread
  static constexpr int G = G_;              // groups of 4 consecutive columns per thread, 4*BX apart
  static constexpr int HX = (RX + 3) / 4 * 4;  // halo columns per side, a whole float4
  static constexpr int OUT_W = 4 * G * BX, OUT_H = K * BY;  // output tile
  static constexpr int IN_W = OUT_W + 2 * HX, IN_H = OUT_H + 2 * RY;  // input tile, in shared memory
  static constexpr int FW = 2 * RX + 1, FH = 2 * RY + 1;  // filter
  static constexpr int THREADS = BX * BY;
  // A row of the input tile is loaded as aligned float4s; a row that starts mid-float4
  // spans one more.
  static constexpr int CHUNKS = IN_W / 4 + 1;
  static constexpr int LOADS = (IN_H * CHUNKS + THREADS - 1) / THREADS;  // per thread
  // A thread's window along a row: 4 + 2 RX floats, read as WIN float4s.
  static constexpr int WIN = 2 * HX / 4 + 1;
  static_assert(IN_W * IN_H * sizeof(float) <= 48 * 1024, "the input tile must fit 48 KB of static shared memory");
  static_assert(OUT_H >= 16 || OUT_H == 1, "2D tiles of 16 rows or more keep the grid within 65535 blocks in y");
};

template <int R> using Fast2d = Shape<R, R, 32, 8, 4, 1>;
template <int R> using Fast1d = Shape<R, 0, 256, 1, 1, 4>;
template <int R> using RowPass = Shape<R, 0, 64, 4, 4, 2>;
template <int R> using ColumnPass = Shape<0, R, 32, 8, 8, 1>;

// Four consecutive inputs of row gy starting at column gx; zeros for ghost cells. The
// caller makes in + gy * width + gx 16-byte aligned whenever all four are in the image.
__device__ __forceinline__ float4 load_chunk(const float* __restrict__ in, int width, int height, int gx, int gy) {
  float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (gy < 0 || gy >= height) return v;
  const float* src = in + gy * width;  // < 2^31: the contract keeps width * height in an int
  if (gx >= 0 && gx + 3 < width) return __ldg(reinterpret_cast<const float4*>(src + gx));
  if (gx >= 0 && gx < width) v.x = src[gx];  // an image border inside the float4
  if (gx + 1 >= 0 && gx + 1 < width) v.y = src[gx + 1];
  if (gx + 2 >= 0 && gx + 2 < width) v.z = src[gx + 2];
  if (gx + 3 >= 0 && gx + 3 < width) v.w = src[gx + 3];
  return v;
}

// Puts four loaded inputs at columns c .. c+3 of a shared row, dropping those outside [0, W).
template <int W>
__device__ __forceinline__ void store_chunk(float* s_row, int c, float4 v) {
  if ((c & 3) == 0 && c >= 0 && c + 3 < W) {  // the row started on a float4: one STS.128
    *reinterpret_cast<float4*>(s_row + c) = v;
    return;
  }
  if (c >= 0 && c < W) s_row[c] = v.x;
  if (c + 1 >= 0 && c + 1 < W) s_row[c + 1] = v.y;
  if (c + 2 >= 0 && c + 2 < W) s_row[c + 2] = v.z;
  if (c + 3 >= 0 && c + 3 < W) s_row[c + 3] = v.w;
}

// The l-th float4 a thread stages: row `row` of the input tile (image row gy), chunk k of
// that row. Element (gy, gx) is 16-byte aligned when (p + gy*width + gx) is a multiple of 4,
// p being the pointer's offset in floats; `shift` says how far the row's tile start lies past
// such a boundary. Chunk k is the aligned float4 at image column gx_tile - shift + 4k, and its
// elements go to shared columns 4k - shift ... (those in [0, IN_W)).
struct Chunk {
  int row, k, gy, shift;
  bool valid;  // inside the tile's IN_H x CHUNKS chunks
};

template <class S>
__device__ __forceinline__ Chunk chunk_of(int l, int tid, int y0, int gx_tile, int width, unsigned in_floats) {
  const int id = tid + l * S::THREADS;
  Chunk c;
  c.row = id / S::CHUNKS;
  c.k = id - c.row * S::CHUNKS;
  c.gy = y0 - S::RY + c.row;
  c.shift = int((in_floats + unsigned(c.gy) * unsigned(width) + unsigned(gx_tile)) & 3u);
  c.valid = id < S::IN_H * S::CHUNKS;
  return c;
}

template <class S>
__global__ void __launch_bounds__(S::THREADS)
    conv_tile_kernel(const float* __restrict__ in, float* __restrict__ out, int width, int height,
                     Taps<S::FW * S::FH> taps) {
  __shared__ float4 s_tile4[S::IN_H * S::IN_W / 4];
  float* s_tile = reinterpret_cast<float*>(s_tile4);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * S::BX + tx;
  const int x0 = blockIdx.x * S::OUT_W, y0 = blockIdx.y * S::OUT_H;  // the output tile's corner
  const int gx_tile = x0 - S::HX;  // global column of shared column 0

  // 1. Stage the input tile as aligned float4s (see Chunk). All loads are issued before
  // the first store, so LOADS x 16 bytes per thread are in flight at once.
  const unsigned in_floats = unsigned(reinterpret_cast<std::uintptr_t>(in) / sizeof(float));
  float4 staged[S::LOADS];
#pragma unroll
  for (int l = 0; l < S::LOADS; ++l) {
    const Chunk c = chunk_of<S>(l, tid, y0, gx_tile, width, in_floats);
    staged[l] = c.valid && 4 * c.k - c.shift < S::IN_W
                    ? load_chunk(in, width, height, gx_tile - c.shift + 4 * c.k, c.gy)
                    : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
#pragma unroll
  for (int l = 0; l < S::LOADS; ++l) {
    const Chunk c = chunk_of<S>(l, tid, y0, gx_tile, width, in_floats);
    if (c.valid) store_chunk<S::IN_W>(s_tile + c.row * S::IN_W, 4 * c.k - c.shift, staged[l]);
  }
  __syncthreads();  // fast: the tile is staged

  // 2. Register tile: outputs (ty*K + k, 4*tx + 4*BX*g + q) of the tile. Input row ir of
  // the thread's window feeds output row k through filter row ir - k.
  float acc[S::K][S::G][4];
#pragma unroll
  for (int k = 0; k < S::K; ++k)
#pragma unroll
    for (int g = 0; g < S::G; ++g)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[k][g][q] = 0.0f;

#pragma unroll
  for (int ir = 0; ir < S::K + 2 * S::RY; ++ir) {
    const float* s_row = s_tile + (ty * S::K + ir) * S::IN_W + 4 * tx;
#pragma unroll
    for (int g = 0; g < S::G; ++g) {
      // The window of shared columns [4*BX*g + 4*tx, + 4*WIN): the float4s a warp reads
      // are consecutive, so LDS.128 runs without bank conflicts.
      float v[4 * S::WIN];
#pragma unroll
      for (int m = 0; m < S::WIN; ++m) {
        const float4 w = *reinterpret_cast<const float4*>(s_row + 4 * S::BX * g + 4 * m);
        v[4 * m] = w.x;
        v[4 * m + 1] = w.y;
        v[4 * m + 2] = w.z;
        v[4 * m + 3] = w.w;
      }
#pragma unroll
      for (int k = 0; k < S::K; ++k) {
        const int fi = ir - k;  // a compile-time constant once unrolled
        if (fi < 0 || fi >= S::FH) continue;
#pragma unroll
        for (int q = 0; q < 4; ++q)
#pragma unroll
          for (int j = 0; j < S::FW; ++j)  // output column q, tap column j - RX
            acc[k][g][q] = fmaf(v[S::HX - S::RX + q + j], taps.v[fi * S::FW + j], acc[k][g][q]);
      }
    }
  }

  // 3. Store: STG.128 where the four outputs are in the image and 16-byte aligned.
#pragma unroll
  for (int k = 0; k < S::K; ++k) {
    const int gy = y0 + ty * S::K + k;
    if (gy >= height) break;
#pragma unroll
    for (int g = 0; g < S::G; ++g) {
      const int gx = x0 + 4 * S::BX * g + 4 * tx;
      if (gx >= width) continue;
      float* dst = out + gy * width + gx;
      if (gx + 3 < width && reinterpret_cast<std::uintptr_t>(dst) % 16 == 0) {
        *reinterpret_cast<float4*>(dst) = make_float4(acc[k][g][0], acc[k][g][1], acc[k][g][2], acc[k][g][3]);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (gx + q < width) dst[q] = acc[k][g][q];
      }
    }
  }
}

template <class S>
void launch_tiles(const float* d_in, float* d_out, int width, int height, const float* h_taps, cudaStream_t stream) {
  const dim3 block(S::BX, S::BY);
  const dim3 grid((width + S::OUT_W - 1) / S::OUT_W, (height + S::OUT_H - 1) / S::OUT_H);
  conv_tile_kernel<S><<<grid, block, 0, stream>>>(d_in, d_out, width, height, make_taps<S::FW * S::FH>(h_taps));
  CONVLAB_CHECK_LAUNCH();
}

// Calls f(std::integral_constant<int, r>{}) for r in [0, FAST_MAX_RADIUS]: one compiled
// kernel per radius.
template <class F>
void dispatch_radius(int r, F&& f) {
  switch (r) {
    case 0: f(std::integral_constant<int, 0>{}); return;
    case 1: f(std::integral_constant<int, 1>{}); return;
    case 2: f(std::integral_constant<int, 2>{}); return;
    case 3: f(std::integral_constant<int, 3>{}); return;
    case 4: f(std::integral_constant<int, 4>{}); return;
    case 5: f(std::integral_constant<int, 5>{}); return;
    case 6: f(std::integral_constant<int, 6>{}); return;
    case 7: f(std::integral_constant<int, 7>{}); return;
    case 8: f(std::integral_constant<int, 8>{}); return;
    default: break;
  }
  throw std::logic_error("dispatch_radius: no compiled kernel for radius " + std::to_string(r));
}

// --- radii above FAST_MAX_RADIUS: one output per thread, taps from constant memory --------------
constexpr int GENERIC_BX = 32, GENERIC_BY = 16;  // 16 rows: a grid of at most 32768 blocks in y
constexpr int MAX_TAPS_1D = 2 * kMaxRadius + 1;
__constant__ float c_generic[MAX_TAPS_1D * MAX_TAPS_1D];

__global__ void conv_generic_kernel(const float* __restrict__ in, float* __restrict__ out, int width, int height,
                                    int rx, int ry) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col >= width || row >= height) return;
  const int fw = 2 * rx + 1;
  float sum = 0.0f;
  for (int i = -ry; i <= ry; ++i) {
    const int y = row + i;
    if (y < 0 || y >= height) continue;
    for (int j = -rx; j <= rx; ++j) {
      const int x = col + j;
      if (x >= 0 && x < width) sum += __ldg(in + y * width + x) * c_generic[(i + ry) * fw + (j + rx)];
    }
  }
  out[row * width + col] = sum;
}

void launch_generic(const float* d_in, float* d_out, int width, int height, int rx, int ry, const float* h_taps,
                    cudaStream_t stream) {
  const std::size_t taps = std::size_t(2 * rx + 1) * (2 * ry + 1);
  CONVLAB_CUDA_CHECK(
      cudaMemcpyToSymbolAsync(c_generic, h_taps, taps * sizeof(float), 0, cudaMemcpyHostToDevice, stream));
  const dim3 block(GENERIC_BX, GENERIC_BY);
  const dim3 grid((width + GENERIC_BX - 1) / GENERIC_BX, (height + GENERIC_BY - 1) / GENERIC_BY);
  conv_generic_kernel<<<grid, block, 0, stream>>>(d_in, d_out, width, height, rx, ry);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace

void conv2d_separable(const float* d_in, const float* h_row_filter, const float* h_col_filter, float* d_tmp,
                      float* d_out, const Conv2dProblem& p, cudaStream_t stream) {
  validate(p);
  if (p.radius > FAST_MAX_RADIUS) {
    launch_generic(d_in, d_tmp, p.width, p.height, p.radius, 0, h_row_filter, stream);
    launch_generic(d_tmp, d_out, p.width, p.height, 0, p.radius, h_col_filter, stream);
    return;
  }
  dispatch_radius(p.radius, [&](auto radius) {
    constexpr int R = decltype(radius)::value;
    launch_tiles<RowPass<R>>(d_in, d_tmp, p.width, p.height, h_row_filter, stream);  // rows: in -> tmp
    launch_tiles<ColumnPass<R>>(d_tmp, d_out, p.width, p.height, h_col_filter, stream);  // columns: tmp -> out
  });
}

void conv1d_fast(const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& p,
                 cudaStream_t stream) {
  validate(p);
  if (p.radius > FAST_MAX_RADIUS) {
    launch_generic(d_in, d_out, p.n, 1, p.radius, 0, h_filter, stream);
    return;
  }
  dispatch_radius(p.radius, [&](auto radius) {
    launch_tiles<Fast1d<decltype(radius)::value>>(d_in, d_out, p.n, 1, h_filter, stream);
  });
}

void conv2d_fast(const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& p,
                 cudaStream_t stream) {
  validate(p);
  if (p.radius > FAST_MAX_RADIUS) {
    launch_generic(d_in, d_out, p.width, p.height, p.radius, p.radius, h_filter, stream);
    return;
  }
  dispatch_radius(p.radius, [&](auto radius) {
    launch_tiles<Fast2d<decltype(radius)::value>>(d_in, d_out, p.width, p.height, h_filter, stream);
  });
}

}  // namespace convlab::lab04
