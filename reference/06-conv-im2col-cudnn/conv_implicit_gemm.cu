// Lab 06 — implicit GEMM (reference solution).
//
// The GEMM of im2col + GEMM over the whole batch, M = K filters, N = N P Q outputs,
// K_gemm = C R S taps, without the column matrix: each BK x BN tile of it is gathered from x
// with the im2col mapping as it is needed.
//   A = w (K x CRS, row-major as given), B[crs][j] = x[n][c][p stride_h - pad_h + r][q stride_w - pad_w + s]
//   with j = (n P + p) Q + q and crs = (c R + r) S + s; y[n][k][p][q] = (A B)[k][j].
// SGEMM structure: 256 threads, each computing 8 x 8 outputs (rows in two groups of 4, BM / 2
// apart, columns in two groups of 4, BN / 2 apart, so that its shared-memory reads are four
// float4s per step and a warp's reads do not conflict), BK = 8; the filter tile is stored
// transposed (s_a[crs][k], rows padded by 4 floats: conflict-free stores); shared memory
// double-buffered: the next tile is read from global memory into registers while the current
// one is multiplied, in two halves (the first half's loads issued before the multiply and
// stored into the other buffer halfway through it, then the second half's), so that 64
// accumulators, the fragments and the loads in flight fit in 128 registers; one barrier per
// step. 256 threads x 128 registers: 2 blocks per SM.
// Block tiles: BM x BN = 128 x 128 for K > 64 filters, 64 x 256 for K <= 64 (a layer of 64
// filters does not waste half of every tile, and each thread still has 8 x 8 outputs).
// Tried and measured on an H100 (2026-11-21, the ResNet layer N32 C64 56x56, K64 3x3): its
// 392 blocks of 64 x 256 fill 1.48 waves of 264 blocks, yet neither 64 x 192 tiles (523
// blocks, 1.98 waves, 192 threads: 0.237 ms) nor two slices of the taps (784 blocks, 2.97
// waves, atomics: 0.234 ms) beat 64 x 256 in one slice (0.233 ms; 128 x 128: 0.406 ms). The
// blocks of a half-empty last wave run alone on their SMs, faster; fewer warps per SM, or
// the atomics and the zeroing, cost what the fuller waves gain.
// Nor did warps of 4 x 8 threads (one shared-memory wavefront per fragment read instead of
// four): 0.224 against 0.227 ms, within the spread of runs on different machines of the
// same kind; shared-memory bandwidth is not what holds this kernel at 55 % of the FMA peak.
// The gather: each thread loads B_PER taps of one output column j; its (n, p, q) and the
// input offset of its window are computed once; the taps' (c, r, s) come from a table in
// shared memory, built once per block (one division per tap for the whole block, not one
// per element per thread): tab[crs] = (c H W + r W + s, r, s). A tap of the tile is the same
// for the whole warp, so the table read is a broadcast.
// Few output tiles (fewer blocks than two per SM): the C R S taps are split into slices, one
// per blockIdx.z, which add their partial sums into the zeroed output with atomicAdd.
//   grid(ceil(N P Q / BN), ceil(K / BM), slices), block(256), dynamic shared: the table
#include "lab06.hpp"

#include <convlab/check.hpp>

#include <algorithm>

namespace convlab::lab06 {
namespace {

constexpr int BK = 8, THREADS = 256;
constexpr int kTableTaps = 512;              // taps per table (4 KB); longer slices rebuild it
constexpr int kInvalidTap = -(1 << 30);      // packed (r, s) whose r = -16384: always outside the image
constexpr int kMinSliceTaps = 4 * BK;        // a slice of the taps is at least 4 steps long

/// dst[0..3] += v atomically: one vector atomic on sm_90 and later, four elsewhere.
__device__ inline void atomic_add4(float* dst, float4 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float4*>(dst), v);
#else
  atomicAdd(dst, v.x);
  atomicAdd(dst + 1, v.y);
  atomicAdd(dst + 2, v.z);
  atomicAdd(dst + 3, v.w);
#endif
}

template <int BM, int BN>  // 128 x 128 or 64 x 256: 8 x 8 outputs for each of 256 threads
__global__ void __launch_bounds__(THREADS, 2) implicit_gemm_kernel(const float* __restrict__ x,
                                                                   const float* __restrict__ w,
                                                                   float* __restrict__ y, ConvProblem p, int P,
                                                                   int Q, int slice, int accumulate) {
  constexpr int TX = BN / 8;                 // threads along the output columns
  static_assert(TX * (BM / 8) == THREADS, "8 x 8 outputs per thread");
  constexpr int A_PER = BM * BK / THREADS;  // filter taps each thread loads per tile: 4 or 2
  constexpr int B_PER = BN * BK / THREADS;  // gathered inputs each thread loads per tile: 4 or 8
  constexpr int AP = BM + 4;                // padded row of the transposed filter tile
  __align__(16) __shared__ float s_a[2][BK][AP];  // filters, transposed: s_a[buf][crs][k]
  __align__(16) __shared__ float s_b[2][BK][BN];  // gathered inputs: s_b[buf][crs][j]
  extern __shared__ int2 s_tab[];                  // tap -> (offset in x, (r << 16) | s)
  const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
  const int m0 = blockIdx.y * BM, j0 = blockIdx.x * BN;
  const int RS = p.r * p.s, CRS = p.c * RS, PQ = P * Q, HW = p.h * p.w;
  const int NPQ = p.n * PQ;  // every index below fits in an int: tensors hold at most 2^30 floats
  const int kd_begin = blockIdx.z * slice, kd_end = min(CRS, kd_begin + slice);

  // A: each thread loads A_PER taps of one filter row: row a_row, columns a_col .. a_col + A_PER - 1.
  const int a_row = tid / (BK / A_PER), a_col = (tid % (BK / A_PER)) * A_PER;
  const bool a_ok = m0 + a_row < p.k;
  const int a_base = a_ok ? (m0 + a_row) * CRS : 0;
  const int a_end = a_ok ? kd_end : 0;  // filter taps this thread may read: none past the last filter
  // B: each thread gathers B_PER taps (rows b_row ..) of one output column j; a column past
  // N P Q gets a window far above the image, so that every tap reads as padding.
  const int b_col = tid % BN, b_row = (tid / BN) * B_PER;
  const int j = j0 + b_col;
  int h0 = -64, w0 = 0, base = 0;  // the window's corner in x, and x's offset of it
  if (j < NPQ) {
    const int n = j / PQ, pq = j - n * PQ, oh = pq / Q, q = pq - oh * Q;
    h0 = oh * p.stride_h - p.pad_h;
    w0 = q * p.stride_w - p.pad_w;
    base = n * p.c * HW + h0 * p.w + w0;
  }

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) acc[i][jj] = 0.0f;

  // The next tile waits in registers, in two halves: the first half's loads are issued before
  // the multiply, stored into the other buffer halfway through it, then the second half's are
  // issued. Half the registers of a whole tile in flight: 8 x 8 accumulators without spills.
  constexpr int A_HALF = A_PER / 2, B_HALF = B_PER / 2;
  float a_reg[A_HALF], b_reg[B_HALF];
  for (int chunk = kd_begin; chunk < kd_end; chunk += kTableTaps) {
    const int taps = min(kTableTaps, kd_end - chunk);
    const int ntab = (taps + BK - 1) / BK * BK;  // whole tiles; the taps past the end are padding
    for (int t = tid; t < ntab; t += THREADS) {   // the gather table: one division per tap per block
      int2 e = make_int2(0, kInvalidTap);
      if (t < taps) {
        const int kd = chunk + t, c = kd / RS, rs = kd - c * RS, r = rs / p.s, s = rs - r * p.s;
        e = make_int2(c * HW + r * p.w + s, (r << 16) | s);
      }
      s_tab[t] = e;
    }
    __syncthreads();  // implicit: the gather table is built

    // Registers <- half `ph` (0 or 1) of the tile of taps t0 .. t0 + BK - 1 of this chunk.
    const auto load = [&](int t0, int ph) {
#pragma unroll
      for (int i = 0; i < A_HALF; ++i) {
        const int kd = chunk + t0 + a_col + ph * A_HALF + i;
        a_reg[i] = kd < a_end ? w[a_base + kd] : 0.0f;
      }
#pragma unroll
      for (int i = 0; i < B_HALF; ++i) {
        const int2 e = s_tab[t0 + b_row + ph * B_HALF + i];  // the same tap for the whole warp: a broadcast
        const int ih = h0 + (e.y >> 16), iw = w0 + (e.y & 0xFFFF);
        b_reg[i] = (unsigned(ih) < unsigned(p.h) && unsigned(iw) < unsigned(p.w)) ? x[base + e.x] : 0.0f;
      }
    };
    const auto store = [&](int buf, int ph) {
#pragma unroll
      for (int i = 0; i < A_HALF; ++i) s_a[buf][a_col + ph * A_HALF + i][a_row] = a_reg[i];
#pragma unroll
      for (int i = 0; i < B_HALF; ++i) s_b[buf][b_row + ph * B_HALF + i][b_col] = b_reg[i];
    };

    for (int ph = 0; ph < 2; ++ph) {
      load(0, ph);
      store(0, ph);
    }
    __syncthreads();  // implicit: the first tiles are staged
    int buf = 0;
    for (int t0 = 0; t0 < ntab; t0 += BK) {
      const bool more = t0 + BK < ntab;
      if (more) load(t0 + BK, 0);  // in flight while this tile is multiplied
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        const float4 a_lo = *reinterpret_cast<const float4*>(&s_a[buf][kk][ty * 4]);
        const float4 a_hi = *reinterpret_cast<const float4*>(&s_a[buf][kk][BM / 2 + ty * 4]);
        const float4 b_lo = *reinterpret_cast<const float4*>(&s_b[buf][kk][tx * 4]);
        const float4 b_hi = *reinterpret_cast<const float4*>(&s_b[buf][kk][BN / 2 + tx * 4]);
        const float a[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
        const float b[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
          for (int jj = 0; jj < 8; ++jj) acc[i][jj] += a[i] * b[jj];
        if (kk == BK / 2 - 1 && more) {  // halfway: the first half goes to the other buffer
          store(buf ^ 1, 0);
          load(t0 + BK, 1);
        }
      }
      if (more) {
        store(buf ^ 1, 1);  // the other buffer: nobody reads it during this iteration
        __syncthreads();  // implicit: the next tiles are staged
        buf ^= 1;
      }
    }
    __syncthreads();  // implicit: everyone is done with this chunk's table and tiles
  }

  // y[n][k][p][q] = acc: rows k = m0 + {ty*4, BM/2 + ty*4} + i, columns j = j0 + {tx*4, BN/2 + tx*4} + jj.
  // With P Q a multiple of 4, a thread's 4 consecutive columns are one image's and 16-byte aligned.
  const bool vec4 = PQ % 4 == 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int k = m0 + (i < 4 ? ty * 4 + i : BM / 2 + ty * 4 + i - 4);
    if (k >= p.k) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int col0 = j0 + h * (BN / 2) + tx * 4;
      if (vec4) {
        if (col0 >= NPQ) continue;
        const int n = col0 / PQ, pq = col0 - n * PQ;
        float* dst = y + (n * p.k + k) * PQ + pq;
        const float4 v = make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2], acc[i][h * 4 + 3]);
        if (accumulate) atomic_add4(dst, v);
        else *reinterpret_cast<float4*>(dst) = v;
      } else {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
          const int col = col0 + jj;
          if (col >= NPQ) continue;
          const int n = col / PQ, pq = col - n * PQ;
          float* dst = y + (n * p.k + k) * PQ + pq;
          if (accumulate) atomicAdd(dst, acc[i][h * 4 + jj]);
          else *dst = acc[i][h * 4 + jj];
        }
      }
    }
  }
}

template <int BM, int BN>
void launch(const float* d_x, const float* d_w, float* d_y, const ConvProblem& p, int P, int Q, cudaStream_t stream) {
  const int npq = p.n * P * Q, crs = p.c * p.r * p.s;
  const int tiles = (npq + BN - 1) / BN * ((p.k + BM - 1) / BM);
  int device = 0, sms = 1;
  CONVLAB_CUDA_CHECK(cudaGetDevice(&device));
  CONVLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // Slices of the taps: enough blocks for two per SM, each slice at least kMinSliceTaps long.
  int slices = std::max(1, 2 * sms / tiles);
  slices = std::min(slices, std::max(1, crs / kMinSliceTaps));
  const int slice = ((crs + slices - 1) / slices + BK - 1) / BK * BK;  // a multiple of BK
  slices = (crs + slice - 1) / slice;
  if (slices > 1)  // the slices add into the output
    CONVLAB_CUDA_CHECK(cudaMemsetAsync(d_y, 0, p.output_elements() * sizeof(float), stream));
  const std::size_t shared = std::size_t(std::min(slice, kTableTaps)) * sizeof(int2);
  const dim3 grid(unsigned((npq + BN - 1) / BN), unsigned((p.k + BM - 1) / BM), unsigned(slices));
  implicit_gemm_kernel<BM, BN><<<grid, THREADS, shared, stream>>>(d_x, d_w, d_y, p, P, Q, slice, slices > 1);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace

void conv_implicit_gemm(const float* d_x, const float* d_w, float* d_y, const ConvProblem& p, cudaStream_t stream) {
  validate(p);
  const int P = p.out_h(), Q = p.out_w();
  if (p.k <= 64) launch<64, 256>(d_x, d_w, d_y, p, P, Q, stream);
  else launch<128, 128>(d_x, d_w, d_y, p, P, Q, stream);
}

}  // namespace convlab::lab06
