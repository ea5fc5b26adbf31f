// Tensor-core kernels through CUDA's warp matrix API, for the CPU backend's tests
// (test_wmma.cpp). Written as a student would write them for a GPU; built through cu2cpp.
#include "wmma_kernels.hpp"

#include <mma.h>

using namespace nvcuda;

namespace wmma_test {
namespace {

using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
using FragBCol = wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 8, float>;

// One warp per 16 x 16 tile of C: blockIdx.x the tile's column, blockIdx.y its row.
__global__ void gemm_global_kernel(const float* a, const float* b, float* c, int n, int k, bool round_inputs) {
  const int row = blockIdx.y * 16, col = blockIdx.x * 16;
  FragC acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int kk = 0; kk < k; kk += 8) {
    FragA fa;
    FragB fb;
    wmma::load_matrix_sync(fa, a + row * k + kk, k);
    wmma::load_matrix_sync(fb, b + kk * n + col, n);
    if (round_inputs) {
      for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
      for (int i = 0; i < fb.num_elements; ++i) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
    }
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(c + row * n + col, acc, n, wmma::mem_row_major);
}

// A block of 4 warps (2 x 2) per 32 x 32 tile of C; each step stages a 32 x 8 slice of A and an
// 8 x 32 slice of B (column-major in memory) in shared memory.
__global__ void gemm_shared_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  __shared__ __align__(32) float s_a[32 * 8];       // row-major, leading dimension 8
  __shared__ __align__(32) float s_b[32 * 8];       // column-major: column j at s_b + j * 8
  __shared__ __align__(32) float s_c[4][16 * 16];   // each warp's tile, column-major
  const int t = threadIdx.x, warp = t / 32;
  const int row0 = blockIdx.y * 32, col0 = blockIdx.x * 32;
  const int wr = (warp / 2) * 16, wc = (warp % 2) * 16;
  FragC acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int kk = 0; kk < k; kk += 8) {
    for (int e = t; e < 32 * 8; e += blockDim.x) {
      const int r = e / 8, q = e % 8;
      s_a[e] = wmma::__float_to_tf32(a[(row0 + r) * k + kk + q]);
      const int j = e / 8;  // column of the slice, q its row
      s_b[e] = wmma::__float_to_tf32(b[(col0 + j) * k + kk + q]);
    }
    __syncthreads();
    FragA fa;
    FragBCol fb;
    wmma::load_matrix_sync(fa, s_a + wr * 8, 8);
    wmma::load_matrix_sync(fb, s_b + wc * 8, 8);
    wmma::mma_sync(acc, fa, fb, acc);
    __syncthreads();
  }
  wmma::store_matrix_sync(s_c[warp], acc, 16, wmma::mem_col_major);
  __syncthreads();
  for (int e = t % 32; e < 16 * 16; e += 32) {  // each warp writes its own tile out
    const int j = e / 16, i = e % 16;
    if (row0 + wr + i < m && col0 + wc + j < n) c[(row0 + wr + i) * n + col0 + wc + j] = s_c[warp][e];
  }
}

// C = A times a matrix of ones: the row sums of the 16 x 8 tile at `a` in every column.
__global__ void load_at_kernel(const float* a, unsigned ldm, float* c) {
  FragA fa;
  wmma::load_matrix_sync(fa, a, ldm);
  FragB ones;
  wmma::fill_fragment(ones, 1.0f);
  FragC acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::mma_sync(acc, fa, ones, acc);
  wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}

__global__ void round_kernel(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = wmma::__float_to_tf32(in[i]);
}

cudaError_t finish() {
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) return launch;
  return cudaDeviceSynchronize();
}

}  // namespace

cudaError_t gemm_global(const float* a, const float* b, float* c, int m, int n, int k, bool round_inputs) {
  gemm_global_kernel<<<dim3(n / 16, m / 16), 32>>>(a, b, c, n, k, round_inputs);
  return finish();
}

cudaError_t gemm_shared(const float* a, const float* b_col_major, float* c, int m, int n, int k) {
  gemm_shared_kernel<<<dim3((n + 31) / 32, (m + 31) / 32), 128>>>(a, b_col_major, c, m, n, k);
  return finish();
}

cudaError_t load_at(const float* a, unsigned ldm, float* c) {
  load_at_kernel<<<1, 32>>>(a, ldm, c);
  return finish();
}

cudaError_t round_to_tf32(const float* in, float* out, int n) {
  round_kernel<<<(n + 127) / 128, 128>>>(in, out, n);
  return finish();
}

}  // namespace wmma_test
