// Test kernels for the CPU backend, written as CUDA and built through cu2cpp.
#include "backend_kernels.hpp"

namespace backend_test {
namespace {

__constant__ float c_coef[16];

// The tile holds blockDim.x + 2R inputs: the block's own and R on each side.
__global__ void tiled_conv1d_kernel(const float* __restrict__ in, const float* __restrict__ filter,
                                    float* __restrict__ out, int n, int bug) {
  extern __shared__ float s_tile[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (bug == kEarlyReturn && i >= n) return;  // planted: leaves the barrier below
  s_tile[threadIdx.x + kRadius] = i < n ? in[i] : 0.0f;
  if (threadIdx.x < kRadius) {
    const int j = i - kRadius + (bug == kHaloOffByOne ? 1 : 0);
    s_tile[threadIdx.x] = (j >= 0 && j < n) ? in[j] : 0.0f;
  }
  if (threadIdx.x >= blockDim.x - kRadius) {
    const int j = i + kRadius;
    s_tile[threadIdx.x + 2 * kRadius] = j < n ? in[j] : 0.0f;
  }
  if (bug != kMissingSync) __syncthreads();
  if (i >= n) return;
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < 2 * kRadius + 1; ++k) sum += s_tile[threadIdx.x + k] * filter[k];
  out[i] = sum;
}

__global__ void shift_kernel(const float* in, float* out, int n, bool skip_barrier) {
  __shared__ float s_vals[1024];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  s_vals[threadIdx.x] = i < n ? in[i] : 0.0f;
  if (!skip_barrier) __syncthreads();
  if (i < n) out[i] = threadIdx.x > 0 ? s_vals[threadIdx.x - 1] : -1.0f;
}

__global__ void empty_kernel() {}

__global__ void constant_scale_kernel(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= c_coef[i % 16];
}

__global__ void histogram_kernel(const int* values, int n, unsigned* bins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&bins[values[i]], 1u);
}

__global__ void ids_kernel(unsigned* out) {
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned per_block = blockDim.x * blockDim.y * blockDim.z;
  out[block * per_block + thread] = block * per_block + thread;
}

__global__ void unwritten_shared_kernel(float* out) {
  __shared__ float s_never[256];
  out[threadIdx.x] = s_never[threadIdx.x];
}

cudaError_t finish() {
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) return launch;
  return cudaDeviceSynchronize();
}

}  // namespace

cudaError_t tiled_conv1d(const float* in, const float* filter, float* out, int n, int block, Bug bug) {
  const std::size_t shared = (block + 2 * kRadius) * sizeof(float);
  tiled_conv1d_kernel<<<(n + block - 1) / block, block, shared>>>(in, filter, out, n, bug);
  return finish();
}

cudaError_t shift_through_shared(const float* in, float* out, int n, int block, bool skip_barrier) {
  shift_kernel<<<(n + block - 1) / block, block>>>(in, out, n, skip_barrier);
  return finish();
}

cudaError_t launch_shape(dim3 grid, dim3 block, std::size_t shared_bytes) {
  empty_kernel<<<grid, block, shared_bytes>>>();
  return cudaGetLastError();
}

cudaError_t raise_shared_limit(int bytes) {
  return cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

cudaError_t constant_scale(const float* coef, std::size_t count, float* data, int n) {
  if (const cudaError_t e = cudaMemcpyToSymbol(c_coef, coef, count * sizeof(float)); e != cudaSuccess) return e;
  constant_scale_kernel<<<(n + 127) / 128, 128>>>(data, n);
  return finish();
}

cudaError_t histogram(const int* values, int n, unsigned* bins) {
  histogram_kernel<<<37, 96>>>(values, n, bins);
  return finish();
}

cudaError_t write_ids(unsigned* out, dim3 grid, dim3 block) {
  ids_kernel<<<grid, block>>>(out);
  return finish();
}

cudaError_t read_unwritten_shared(float* out, int block) {
  unwritten_shared_kernel<<<1, block>>>(out);
  return finish();
}

}  // namespace backend_test
