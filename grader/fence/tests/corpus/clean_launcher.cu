// What an honest kernels file may do, all of it allowed: the fence must say
// nothing here. A __constant__ array and a kernel in the global namespace, a
// __device__ helper (nvcc's host stub for it calls exit(1)), printf and
// fprintf(stderr), std::string and std::vector on the host, a thrown
// std::invalid_argument, assert, the convlab/check.hpp macros, its own stream and
// events, a device query, a scratch buffer of its own, a function-local static with
// a constant value, and a __shared__ tile.
// fence-backends: cuda cpu
// fence-expect-clean
#include <convlab/check.hpp>

#include <cassert>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

__constant__ float c_weights[16];

__device__ float weight(int i) { return c_weights[i & 15]; }

__global__ void scale_kernel(float* y, int n) {
  __shared__ float s_tile[32];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  s_tile[threadIdx.x] = i < n ? y[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] = s_tile[threadIdx.x] * weight(i);
}

namespace convlab::lab01 {

void scale(float* d_y, int n, cudaStream_t stream) {
  if (n < 1) throw std::invalid_argument("scale: n must be >= 1, got " + std::to_string(n));
  assert(d_y != nullptr);
  static const int kBlock = 32;
  std::vector<int> grid_sizes;
  grid_sizes.push_back((n + kBlock - 1) / kBlock);
  cudaDeviceProp prop;
  CONVLAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("launching %d blocks on %s (%.1f)\n", grid_sizes.back(), prop.name, std::sqrt(2.0 * n));
  std::fprintf(stderr, "debug: n = %d\n", n);
  cudaStream_t mine;
  cudaEvent_t start, stop;
  CONVLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
  CONVLAB_CUDA_CHECK(cudaEventCreate(&start));
  CONVLAB_CUDA_CHECK(cudaEventCreate(&stop));
  CONVLAB_CUDA_CHECK(cudaEventRecord(start, stream));
  scale_kernel<<<grid_sizes.back(), kBlock, 0, stream>>>(d_y, n);
  CONVLAB_CHECK_LAUNCH();
  CONVLAB_CUDA_CHECK(cudaEventRecord(stop, stream));
  CONVLAB_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CONVLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CONVLAB_CUDA_CHECK(cudaDeviceSynchronize());
  float* d_scratch = nullptr;  // a buffer of its own: the runner's recorder sees it
  CONVLAB_CUDA_CHECK(cudaMalloc(&d_scratch, n * sizeof(float)));
  CONVLAB_CUDA_CHECK(cudaMemcpyAsync(d_scratch, d_y, n * sizeof(float), cudaMemcpyDeviceToDevice, stream));
  CONVLAB_CUDA_CHECK(cudaFree(d_scratch));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(mine);
}

}  // namespace convlab::lab01
