// The runner's own kernels: fresh inputs for every timed run, the check of every timed output,
// and the cache flush before each timed run. See runner_device.hpp.
#include "runner_device.hpp"

#include "convlab/check.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace convlab::runner {
namespace {

// splitmix64's finaliser: a good 64-bit mix of (nonce, index), so each element is independent of
// the others and of every earlier run.
__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Like random_floats() on the host: |x| in [2^-8, 1) with a random sign, never zero, so that a
// kernel that skips work cannot hide behind zeros.
__global__ void random_fill_kernel(float* p, std::uint64_t count, std::uint64_t nonce) {
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::uint64_t h = mix64(nonce ^ mix64(i));
    const float unit = float(h >> 40) * (1.0f / 16777216.0f);  // 24 bits: exact in float
    const float mag = 1.0f / 256.0f + (1.0f - 1.0f / 256.0f) * unit;
    p[i] = (h & 1) ? mag : -mag;
  }
}

struct CheckCounters {
  unsigned long long mismatches;
  unsigned long long first;
};

__global__ void compare_kernel(const float* a, const float* b, std::uint64_t count, float tolerance,
                               CheckCounters* out) {
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const float d = fabsf(a[i] - b[i]);
    if (!(d <= tolerance)) {  // NaN in either fails
      atomicAdd(&out->mismatches, 1ull);
      atomicMin(&out->first, static_cast<unsigned long long>(i));
    }
  }
}

int blocks_for(std::uint64_t count) {
  int sms = 1;
  int dev = 0;
  if (cudaGetDevice(&dev) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const std::uint64_t want = (count + 255) / 256;
  return static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(want, std::uint64_t(sms) * 8)));
}

}  // namespace

void random_fill(float* p, std::uint64_t count, std::uint64_t nonce, cudaStream_t stream) {
  if (count == 0) return;
  random_fill_kernel<<<blocks_for(count), 256, 0, stream>>>(p, count, nonce);
  CONVLAB_CHECK_LAUNCH();
}

CheckResult compare_on_device(const float* candidate, const float* reference, std::uint64_t count, float tolerance,
                              cudaStream_t stream) {
  CheckResult r;
  if (count == 0) return r;
  CheckCounters* d = nullptr;
  CONVLAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&d), sizeof(CheckCounters)));
  CheckCounters h{0, std::numeric_limits<unsigned long long>::max()};
  try {
    CONVLAB_CUDA_CHECK(cudaMemcpyAsync(d, &h, sizeof h, cudaMemcpyHostToDevice, stream));
    compare_kernel<<<blocks_for(count), 256, 0, stream>>>(candidate, reference, count, tolerance, d);
    CONVLAB_CHECK_LAUNCH();
    CONVLAB_CUDA_CHECK(cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, stream));
    CONVLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    r.mismatches = h.mismatches;
    if (r.mismatches) {
      r.first = h.first;
      CONVLAB_CUDA_CHECK(cudaMemcpy(&r.got, candidate + r.first, sizeof(float), cudaMemcpyDeviceToHost));
      CONVLAB_CUDA_CHECK(cudaMemcpy(&r.want, reference + r.first, sizeof(float), cudaMemcpyDeviceToHost));
    }
  } catch (...) {
    cudaFree(d);
    throw;
  }
  CONVLAB_CUDA_CHECK(cudaFree(d));
  return r;
}

CacheFlusher::CacheFlusher() {
  int dev = 0, l2 = 0;
  CONVLAB_CUDA_CHECK(cudaGetDevice(&dev));
  CONVLAB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  bytes_ = std::max<std::size_t>(2 * std::size_t(l2), std::size_t(8) << 20);
  CONVLAB_CUDA_CHECK(cudaMalloc(&buffer_, bytes_));
}

CacheFlusher::~CacheFlusher() {
  if (buffer_) cudaFree(buffer_);
}

void CacheFlusher::flush(cudaStream_t stream) {
#ifndef CONVLAB_BACKEND_CPU
  // Lines held by a persisting access-policy window survive an ordinary flush: release them first.
  CONVLAB_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
#endif
  CONVLAB_CUDA_CHECK(cudaMemsetAsync(buffer_, 0x5A, bytes_, stream));
}

}  // namespace convlab::runner
