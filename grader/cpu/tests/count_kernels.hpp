// Host wrappers of the counting tests' kernels (count_kernels.cu). Each returns the launch
// error, then the synchronisation error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace count_test {

inline constexpr int kTile = 128;        ///< outputs per block of the tiled kernel
inline constexpr int kTiledRadius = 3;  ///< its filter radius

/// A __constant__ struct read by affine().
struct Affine {
  float scale;
  float bias;
  int n;
};

/// out[i] = sum_k in[i - r + k] * filter[k], one thread per output, everything in global memory.
cudaError_t naive(const float* in, const float* filter, float* out, int n, int r, int block);
/// The same for r = kTiledRadius: an input tile in static shared memory, the filter copied from
/// the host into __constant__ memory on `stream`, and the launch on `stream`.
cudaError_t tiled(const float* h_taps, const float* in, float* out, int n, cudaStream_t stream);
/// data[i] = data[i] * a.scale + a.bias for i < a.n, with `a` in __constant__ memory; `threads` threads.
cudaError_t affine(const Affine& a, float* data, int threads);
/// Each thread passes two barriers; out holds one float per thread of the grid.
cudaError_t two_barriers(float* out, dim3 grid, dim3 block);
/// sums[b] = the sum of block b's inputs, through a shared scalar and shared atomics.
cudaError_t block_sum(const float* in, float* sums, int n, int block);
/// Counts the non-zero flags into a __device__ variable with atomicAdd; copies it to *hits.
cudaError_t count_hits(const int* flags, int n, unsigned* hits);
/// out[i] = c_lut[i % 4] * c_stride: initialised __constant__ variables, one of them const.
cudaError_t lut(float* out, int n);
/// Reverses each block's inputs through dynamic shared memory declared at namespace scope.
cudaError_t reverse_blocks(const float* in, float* out, int blocks, int block);
/// A kernel with 52 000 bytes of static shared memory: more than a GPU allows.
cudaError_t too_much_static_shared(float* out);
/// A kernel with 40 KB of static shared memory and `dynamic_bytes` of dynamic shared memory;
/// raises the kernel's dynamic limit first if `raise_limit_to` > 0.
cudaError_t static_and_dynamic(float* out, std::size_t dynamic_bytes, int raise_limit_to);

}  // namespace count_test
