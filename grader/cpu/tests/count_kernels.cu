// Kernels whose memory accesses the CPU backend's counting tests (test_counts.cpp) know
// exactly, written as CUDA and built through cu2cpp like a student's.
#include "count_kernels.hpp"

namespace count_test {

__constant__ float c_taps[2 * kTiledRadius + 1];
__constant__ Affine c_affine;
__device__ unsigned d_hits;
// An initializer over several lines, with comments; a const variable (internal linkage).
__constant__ float c_lut[4] = {1.0f,  // one
                               2.0f, /* two */ 3.0f,
                               4.0f};
static __constant__ const int c_stride = 2;

namespace {

// One thread per output, input and filter read from global memory: 2 loads per tap inside
// the input, none for a tap that falls outside it.
__global__ void naive_kernel(const float* in, const float* filter, float* out, int n, int r) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float sum = 0.0f;
  for (int k = 0; k <= 2 * r; ++k) {
    const int j = i - r + k;
    if (j >= 0 && j < n) sum += in[j] * filter[k];
  }
  out[i] = sum;
}

// A tile of kTile outputs with kTiledRadius halo cells on each side, in static shared
// memory; the filter in constant memory. The taps' loop has a constant trip count, so the
// compiler may unroll it into constant-offset reads of c_taps: they must still count.
__global__ void tiled_kernel(const float* __restrict__ in, float* __restrict__ out, int n) {
  constexpr int R = kTiledRadius;
  __shared__ float s_tile[kTile + 2 * R];
  const int t = threadIdx.x;
  const int i = blockIdx.x * kTile + t;
  s_tile[t + R] = i < n ? in[i] : 0.0f;
  if (t < R) {
    const int j = i - R;
    s_tile[t] = j >= 0 && j < n ? in[j] : 0.0f;
  }
  if (t >= kTile - R) {
    const int j = i + R;
    s_tile[t + 2 * R] = j < n ? in[j] : 0.0f;
  }
  __syncthreads();
  if (i >= n) return;
  float sum = 0.0f;
  for (int k = 0; k < 2 * R + 1; ++k) sum += s_tile[t + k] * c_taps[k];
  out[i] = sum;
}

// Reads a __constant__ struct's fields at constant offsets.
__global__ void affine_kernel(float* data) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < c_affine.n) data[i] = data[i] * c_affine.scale + c_affine.bias;
}

// Two barriers per thread; two static shared arrays declared in one statement.
__global__ void two_barriers_kernel(float* out) {
  __shared__ float s_a[64], s_b[64];
  const unsigned t = threadIdx.x + blockDim.x * threadIdx.y;
  s_a[t] = float(t);
  __syncthreads();
  s_b[t] = s_a[(t + 1) % (blockDim.x * blockDim.y)];
  __syncthreads();
  out[t + blockDim.x * blockDim.y * (blockIdx.x + gridDim.x * blockIdx.y)] = s_b[t];
}

// A shared scalar, written and read at a constant offset, and shared atomics.
__global__ void block_sum_kernel(const float* in, float* sums, int n) {
  __shared__ float s_total;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) s_total = 0.0f;
  __syncthreads();
  if (i < n) atomicAdd(&s_total, in[i]);
  __syncthreads();
  if (threadIdx.x == 0) sums[blockIdx.x] = s_total;
}

// A __device__ variable: global memory with a name.
__global__ void count_hits_kernel(const int* flags, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && flags[i]) atomicAdd(&d_hits, 1u);
}

__global__ void lut_kernel(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = c_lut[i % 4] * c_stride;
}

// Dynamic shared memory declared at namespace scope, as CUDA allows.
extern __shared__ float s_dynamic[];

__global__ void reverse_kernel(const float* in, float* out) {
  s_dynamic[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = s_dynamic[blockDim.x - 1 - threadIdx.x];
}

// More static shared memory than a GPU allows (52 000 bytes > 48 KB).
__global__ void too_much_static_shared_kernel(float* out) {
  __shared__ float s_big[13000];
  s_big[threadIdx.x] = 1.0f;
  out[threadIdx.x] = s_big[threadIdx.x];
}

// 40 KB of static shared memory, with the launch's dynamic shared memory on top.
__global__ void static_and_dynamic_kernel(float* out) {
  __shared__ float s_static[10240];
  extern __shared__ float s_extra[];
  s_static[threadIdx.x] = 2.0f;
  s_extra[threadIdx.x] = 3.0f;
  __syncthreads();
  out[threadIdx.x] = s_static[threadIdx.x] + s_extra[threadIdx.x];
}

cudaError_t finish() {
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) return launch;
  return cudaDeviceSynchronize();
}

}  // namespace

cudaError_t naive(const float* in, const float* filter, float* out, int n, int r, int block) {
  naive_kernel<<<(n + block - 1) / block, block>>>(in, filter, out, n, r);
  return finish();
}

cudaError_t tiled(const float* h_taps, const float* in, float* out, int n, cudaStream_t stream) {
  if (const cudaError_t e = cudaMemcpyToSymbolAsync(c_taps, h_taps, sizeof(c_taps), 0, cudaMemcpyHostToDevice, stream);
      e != cudaSuccess)
    return e;
  tiled_kernel<<<(n + kTile - 1) / kTile, kTile, 0, stream>>>(in, out, n);
  return finish();
}

cudaError_t affine(const Affine& a, float* data, int threads) {
  if (const cudaError_t e = cudaMemcpyToSymbol(c_affine, &a, sizeof a); e != cudaSuccess) return e;
  affine_kernel<<<(threads + 63) / 64, 64>>>(data);
  return finish();
}

cudaError_t two_barriers(float* out, dim3 grid, dim3 block) {
  two_barriers_kernel<<<grid, block>>>(out);
  return finish();
}

cudaError_t block_sum(const float* in, float* sums, int n, int block) {
  block_sum_kernel<<<(n + block - 1) / block, block>>>(in, sums, n);
  return finish();
}

cudaError_t count_hits(const int* flags, int n, unsigned* hits) {
  const unsigned zero = 0;
  if (const cudaError_t e = cudaMemcpyToSymbol(d_hits, &zero, sizeof zero); e != cudaSuccess) return e;
  count_hits_kernel<<<(n + 127) / 128, 128>>>(flags, n);
  if (const cudaError_t e = finish(); e != cudaSuccess) return e;
  return cudaMemcpyFromSymbol(hits, d_hits, sizeof *hits);
}

cudaError_t lut(float* out, int n) {
  lut_kernel<<<(n + 63) / 64, 64>>>(out, n);
  return finish();
}

cudaError_t reverse_blocks(const float* in, float* out, int blocks, int block) {
  reverse_kernel<<<blocks, block, block * sizeof(float)>>>(in, out);
  return finish();
}

cudaError_t too_much_static_shared(float* out) {
  too_much_static_shared_kernel<<<1, 32>>>(out);
  return finish();
}

cudaError_t static_and_dynamic(float* out, std::size_t dynamic_bytes, int raise_limit_to) {
  if (raise_limit_to > 0)
    if (const cudaError_t e = cudaFuncSetAttribute(static_and_dynamic_kernel,
                                                   cudaFuncAttributeMaxDynamicSharedMemorySize, raise_limit_to);
        e != cudaSuccess)
      return e;
  static_and_dynamic_kernel<<<1, 32, dynamic_bytes>>>(out);
  return finish();
}

}  // namespace count_test
