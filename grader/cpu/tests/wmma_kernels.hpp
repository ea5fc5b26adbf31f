// Host wrappers of the CPU backend's tensor-core test kernels (wmma_kernels.cu): CUDA's warp
// matrix API with TF32 fragments (m16n16k8), as a student's tensor-core convolution uses it.
#pragma once

#include <cuda_runtime_api.h>

namespace wmma_test {

/// C (m x n, row-major) = A (m x k, row-major) B (k x n, row-major), one warp per 16 x 16 tile of C,
/// the fragments loaded straight from global memory; m, n multiples of 16, k of 8. With
/// `round_inputs`, each A and B element is rounded to TF32 (__float_to_tf32) before the product.
/// Returns the launch's error, else the synchronisation's.
cudaError_t gemm_global(const float* a, const float* b, float* c, int m, int n, int k, bool round_inputs);
/// The same with B column-major (k x n, leading dimension k) and the tiles staged in shared
/// memory by a block of 4 warps (a 32 x 32 tile of C), with barriers, and C stored through a
/// shared-memory tile in column-major order.
cudaError_t gemm_shared(const float* a, const float* b_col_major, float* c, int m, int n, int k);
/// One warp loads a matrix_a fragment at `a` with leading dimension `ldm` and stores its row sums
/// (A times ones) as a 16 x 16 accumulator at `c` (leading dimension 16): for the API's alignment rules.
cudaError_t load_at(const float* a, unsigned ldm, float* c);
/// out[i] = __float_to_tf32(in[i]).
cudaError_t round_to_tf32(const float* in, float* out, int n);

}  // namespace wmma_test
