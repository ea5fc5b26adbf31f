// Lab 06 — implicit GEMM (reference solution).
//
// The GEMM of im2col + GEMM over the whole batch, M = K filters, N = N P Q outputs,
// K_gemm = C R S taps, without the column matrix: each 8 x 128 tile of it is gathered from x
// with the im2col mapping as it is needed.
//   A = w (K x CRS, row-major as given), B[crs][j] = x[n][c][p stride_h - pad_h + r][q stride_w - pad_w + s]
//   with j = (n P + p) Q + q and crs = (c R + r) S + s; y[n][k][p][q] = (A B)[k][j].
// SGEMM structure: a BM x 128 block tile, BK = 8, 256 threads as 16 x 16, each computing
// TM x 8 outputs (columns in two groups of 4, 64 apart, and for TM = 8 rows too, so that its
// shared-memory reads are float4s and a warp's rows do not conflict), shared memory
// double-buffered: the next tile is read from global memory into registers while the current
// one is multiplied. BM = 128 (TM = 8) for K > 64 filters; BM = 64 (TM = 4) for K <= 64, so
// that a layer of 64 filters does not waste half of every tile.
//   grid(ceil(N P Q / 128), ceil(K / BM)), block(256)
#include "lab06.hpp"

#include <convlab/check.hpp>

namespace convlab::lab06 {
namespace {

constexpr int BN = 128, BK = 8, THREADS = 256;

template <int TM>  // rows of outputs per thread: 8 (BM = 128) or 4 (BM = 64)
__global__ void __launch_bounds__(THREADS) implicit_gemm_kernel(const float* __restrict__ x,
                                                                const float* __restrict__ w,
                                                                float* __restrict__ y, ConvProblem p, int P,
                                                                int Q) {
  constexpr int BM = 16 * TM;
  constexpr int A_PER = BM * BK / THREADS;  // filter taps each thread loads per tile: TM / 2
  __align__(16) __shared__ float s_a[2][BK][BM];  // filters, transposed: s_a[buf][crs][k]
  __align__(16) __shared__ float s_b[2][BK][BN];  // gathered inputs: s_b[buf][crs][j]
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int m0 = blockIdx.y * BM, j0 = blockIdx.x * BN;
  const int RS = p.r * p.s, CRS = p.c * RS, PQ = P * Q;
  const long long NPQ = (long long)p.n * PQ;

  // A: each thread loads A_PER taps of one filter row: row a_row, columns a_col .. a_col + A_PER - 1.
  const int a_row = tid / (BK / A_PER), a_col = (tid % (BK / A_PER)) * A_PER;
  const bool a_row_ok = m0 + a_row < p.k;
  const float* a_ptr = w + (long long)(m0 + a_row) * CRS;
  // B: each thread gathers 4 taps (rows b_row .. b_row + 3) of one output column j.
  const int b_col = tid % BN, b_row = (tid / BN) * 4;
  const long long j = j0 + b_col;
  const bool j_ok = j < NPQ;
  int n = 0, oh = 0, q = 0;
  if (j_ok) {
    n = int(j / PQ);
    const int pq = int(j % PQ);
    oh = pq / Q;
    q = pq % Q;
  }
  const int h0 = oh * p.stride_h - p.pad_h, w0 = q * p.stride_w - p.pad_w;
  const float* x_n = x + (long long)n * p.c * p.h * p.w;

  float a_reg[A_PER], b_reg[4];
  const auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < A_PER; ++i) {
      const int kk = k0 + a_col + i;
      a_reg[i] = (a_row_ok && kk < CRS) ? a_ptr[kk] : 0.0f;
    }
    // The im2col mapping for tap crs = k0 + b_row, then stepped along s, r, c.
    int crs = k0 + b_row;
    int c = crs / RS, rs = crs % RS, r = rs / p.s, s = rs % p.s;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int ih = h0 + r, iw = w0 + s;
      const bool inside = j_ok && crs < CRS && ih >= 0 && ih < p.h && iw >= 0 && iw < p.w;
      b_reg[i] = inside ? x_n[((long long)c * p.h + ih) * p.w + iw] : 0.0f;
      ++crs;
      if (++s == p.s) {
        s = 0;
        if (++r == p.r) r = 0, ++c;
      }
    }
  };
  const auto store = [&](int buf) {
#pragma unroll
    for (int i = 0; i < A_PER; ++i) s_a[buf][a_col + i][a_row] = a_reg[i];
#pragma unroll
    for (int i = 0; i < 4; ++i) s_b[buf][b_row + i][b_col] = b_reg[i];
  };

  float acc[TM][8];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) acc[i][jj] = 0.0f;

  load(0);
  store(0);
  __syncthreads();  // implicit: the first tiles are staged
  int buf = 0;
  for (int k0 = 0; k0 < CRS; k0 += BK) {
    const bool more = k0 + BK < CRS;
    if (more) load(k0 + BK);  // in flight while this tile is multiplied
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[8];
      const float4 a_lo = *reinterpret_cast<const float4*>(&s_a[buf][kk][ty * 4]);
      const float4 b_lo = *reinterpret_cast<const float4*>(&s_b[buf][kk][tx * 4]);
      const float4 b_hi = *reinterpret_cast<const float4*>(&s_b[buf][kk][64 + tx * 4]);
      a[0] = a_lo.x, a[1] = a_lo.y, a[2] = a_lo.z, a[3] = a_lo.w;
      if constexpr (TM == 8) {
        const float4 a_hi = *reinterpret_cast<const float4*>(&s_a[buf][kk][64 + ty * 4]);
        a[4] = a_hi.x, a[5] = a_hi.y, a[6] = a_hi.z, a[7] = a_hi.w;
      }
      b[0] = b_lo.x, b[1] = b_lo.y, b[2] = b_lo.z, b[3] = b_lo.w;
      b[4] = b_hi.x, b[5] = b_hi.y, b[6] = b_hi.z, b[7] = b_hi.w;
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int jj = 0; jj < 8; ++jj) acc[i][jj] += a[i] * b[jj];
    }
    if (more) {
      store(buf ^ 1);  // the other buffer: nobody reads it during this iteration
      __syncthreads();  // implicit: the next tiles are staged
      buf ^= 1;
    }
  }

  // y[n][k][p][q] = acc: rows k = m0 + {ty*4, 64 + ty*4} + i, columns j = j0 + {tx*4, 64 + tx*4} + jj.
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int k = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
    if (k >= p.k) continue;
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
      const long long col = j0 + (jj < 4 ? tx * 4 + jj : 64 + tx * 4 + jj - 4);
      if (col >= NPQ) continue;
      const int nn = int(col / PQ), pq = int(col % PQ);
      y[((long long)nn * p.k + k) * PQ + pq] = acc[i][jj];
    }
  }
}

}  // namespace

void conv_implicit_gemm(const float* d_x, const float* d_w, float* d_y, const ConvProblem& p, cudaStream_t stream) {
  validate(p);
  const int P = p.out_h(), Q = p.out_w();
  const long long npq = (long long)p.n * P * Q;
  if (p.k <= 64) {
    const dim3 grid(unsigned((npq + BN - 1) / BN), unsigned((p.k + 63) / 64));
    implicit_gemm_kernel<4><<<grid, THREADS, 0, stream>>>(d_x, d_w, d_y, p, P, Q);
  } else {
    const dim3 grid(unsigned((npq + BN - 1) / BN), unsigned((p.k + 127) / 128));
    implicit_gemm_kernel<8><<<grid, THREADS, 0, stream>>>(d_x, d_w, d_y, p, P, Q);
  }
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::lab06
