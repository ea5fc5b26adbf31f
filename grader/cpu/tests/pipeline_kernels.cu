// Asynchronous copies into shared memory through CUDA's pipeline primitives, for the CPU
// backend's tests (test_pipeline.cpp). Written as a student would write them for a GPU; built
// through cu2cpp.
#include "pipeline_kernels.hpp"

#include <cuda_pipeline.h>

namespace pipeline_test {
namespace {

constexpr int kThreads = 128, kTile = 4 * kThreads;

__global__ void double_kernel(const float* in, float* out, int tiles, int wait_lag) {
  __shared__ __align__(16) float s[2][kTile];
  const int t = threadIdx.x;
  const float* src = in + std::size_t(blockIdx.x) * tiles * kTile;
  float* dst = out + std::size_t(blockIdx.x) * tiles * kTile;
  __pipeline_memcpy_async(&s[0][t * 4], src + t * 4, 16);
  __pipeline_commit();
  for (int i = 0; i < tiles; ++i) {
    if (i + 1 < tiles) __pipeline_memcpy_async(&s[(i + 1) & 1][t * 4], src + (i + 1) * kTile + t * 4, 16);
    __pipeline_commit();
    __pipeline_wait_prior(wait_lag);  // 1: every group but the newest (tile i + 1) has landed
    __syncthreads();
    const int u = (t + 1) % kThreads;  // another thread's 16 bytes
    for (int j = 0; j < 4; ++j) dst[i * kTile + u * 4 + j] = 2.0f * s[i & 1][u * 4 + j];
    __syncthreads();
  }
}

__global__ void zfill_kernel(const float* in, float* out, int zfill) {
  __shared__ __align__(16) float s[4];
  __pipeline_memcpy_async(s, in, 16, zfill);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  for (int j = 0; j < 4; ++j) out[j] = s[j];
}

cudaError_t finish() {
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) return launch;
  return cudaDeviceSynchronize();
}

}  // namespace

cudaError_t double_through_shared(const float* in, float* out, int blocks, int tiles, int wait_lag) {
  double_kernel<<<blocks, kThreads>>>(in, out, tiles, wait_lag);
  return finish();
}

cudaError_t copy_with_zfill(const float* in, float* out, int zfill) {
  zfill_kernel<<<1, 1>>>(in, out, zfill);
  return finish();
}

}  // namespace pipeline_test
