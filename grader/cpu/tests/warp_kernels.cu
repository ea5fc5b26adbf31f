// Warp-level kernels (__syncwarp, shuffles, votes) for the CPU backend's tests (test_warp.cpp).
// Written as a student would write them for a GPU; built through cu2cpp, and by nvcc unchanged.
#include "warp_kernels.hpp"

namespace warp_test {
namespace {

constexpr unsigned kFull = 0xffffffffu;

__device__ unsigned linear_thread() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

__global__ void shuffle_once_kernel(int op, const int* in, int* out, unsigned mask, int arg, int width) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = in[i];
  int r = 0;
  switch (op) {
    case 0: r = __shfl_sync(mask, v, arg, width); break;
    case 1: r = __shfl_up_sync(mask, v, unsigned(arg), width); break;
    case 2: r = __shfl_down_sync(mask, v, unsigned(arg), width); break;
    default: r = __shfl_xor_sync(mask, v, arg, width); break;
  }
  out[i] = r;
}

// The classic warp reduction (it was cu2cpp's test of a refused shuffle).
__global__ void warp_sum_down_kernel(const float* in, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFull, v, offset);
  if (threadIdx.x % 32 == 0) out[i / 32] = v;
}

__global__ void butterfly_sum_kernel(const float* in, float* out, int width) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  for (int m = width / 2; m > 0; m /= 2) v += __shfl_xor_sync(kFull, v, m, width);
  out[i] = v;
}

__global__ void warp_scan_kernel(const int* in, int* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x % 32;
  int v = in[i];
  for (int d = 1; d < 32; d *= 2) {
    const int y = __shfl_up_sync(kFull, v, d);
    if (lane >= d) v += y;
  }
  out[i] = v;
}

__global__ void broadcast_kernel(const double* in, double* out, unsigned mask) {
  const int i = threadIdx.x;
  const bool last_partial = blockDim.x % 32 != 0 && i / 32 == int(blockDim.x / 32);
  out[i] = __shfl_sync(last_partial ? mask : kFull, in[i], 5);
}

template <class T>
__global__ void swap_pairs_kernel(const T* in, T* out) {
  out[threadIdx.x] = __shfl_xor_sync(kFull, in[threadIdx.x], 1);
}

__global__ void rotate_kernel(const float* in, float* out, bool sync) {
  __shared__ float s[256];
  const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  const int base = t / 32 * 32, lane = t % 32;
  s[t] = in[i];
  if (sync) __syncwarp();
  out[2 * i] = s[base + (lane + 1) % 32];
  if (sync) __syncwarp();
  s[t] = 2.0f * in[i];
  if (sync) __syncwarp();
  out[2 * i + 1] = s[base + (lane + 31) % 32];
}

__global__ void early_return_kernel(const int* in, int* out) {
  __shared__ int s[32];
  const int lane = threadIdx.x;
  if (lane % 3 == 0) {
    out[lane] = -1;
    return;
  }
  s[lane] = in[lane];
  __syncwarp();  // the lanes that returned do not hold it up
  int next = lane + 1;
  if (next % 3 == 0) ++next;
  out[lane] = next < 32 ? s[next] : s[1];
}

__global__ void split_barriers_kernel(int* out) {
  const unsigned t = linear_thread();
  if (t < 16) {
    __syncwarp();
  } else {
    __syncthreads();
  }
  out[t] = int(t);
}

__global__ void votes_kernel(const int* in, unsigned* ballots, int* any, int* all, bool exact_mask) {
  const int i = threadIdx.x;
  const int lanes = min(32, int(blockDim.x) - i / 32 * 32);
  const unsigned mask = exact_mask && lanes < 32 ? (1u << lanes) - 1 : kFull;
  const int p = in[i];
  ballots[i] = __ballot_sync(mask, p != 0);
  any[i] = __any_sync(mask, p);
  all[i] = __all_sync(mask, p);
}

__global__ void partial_mask_kernel(float* data) {
  float v = data[threadIdx.x];
  v += __shfl_down_sync(0x0000ffffu, v, 1);  // the line test_warp.cpp names: 111
  data[threadIdx.x] = v;
}

cudaError_t finish() {
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) return launch;
  return cudaDeviceSynchronize();
}

template <class T>
cudaError_t swap(const T* in, T* out) {
  swap_pairs_kernel<T><<<1, 32>>>(in, out);
  return finish();
}

}  // namespace

cudaError_t shuffle_once(Shuffle op, const int* in, int* out, int blocks, int threads, unsigned mask, int arg,
                         int width) {
  shuffle_once_kernel<<<blocks, threads>>>(int(op), in, out, mask, arg, width);
  return finish();
}

cudaError_t warp_sum_down(const float* in, float* out, int blocks, int threads) {
  warp_sum_down_kernel<<<blocks, threads>>>(in, out);
  return finish();
}

cudaError_t butterfly_sum(const float* in, float* out, int blocks, int threads, int width) {
  butterfly_sum_kernel<<<blocks, threads>>>(in, out, width);
  return finish();
}

cudaError_t warp_scan(const int* in, int* out, int blocks, int threads) {
  warp_scan_kernel<<<blocks, threads>>>(in, out);
  return finish();
}

cudaError_t broadcast_lane5(const double* in, double* out, int threads, unsigned mask) {
  broadcast_kernel<<<1, threads>>>(in, out, mask);
  return finish();
}

cudaError_t swap_pairs(const int* in, int* out) { return swap(in, out); }
cudaError_t swap_pairs(const unsigned* in, unsigned* out) { return swap(in, out); }
cudaError_t swap_pairs(const long long* in, long long* out) { return swap(in, out); }
cudaError_t swap_pairs(const unsigned long long* in, unsigned long long* out) { return swap(in, out); }
cudaError_t swap_pairs(const float* in, float* out) { return swap(in, out); }
cudaError_t swap_pairs(const double* in, double* out) { return swap(in, out); }

cudaError_t rotate_through_shared(const float* in, float* out, int blocks, int threads, bool sync) {
  rotate_kernel<<<blocks, threads>>>(in, out, sync);
  return finish();
}

cudaError_t early_return_then_syncwarp(const int* in, int* out) {
  early_return_kernel<<<1, 32>>>(in, out);
  return finish();
}

cudaError_t split_barriers(int* out) {
  split_barriers_kernel<<<1, 64>>>(out);
  return finish();
}

cudaError_t votes(const int* in, unsigned* ballots, int* any, int* all, int threads, bool exact_mask) {
  votes_kernel<<<1, threads>>>(in, ballots, any, all, exact_mask);
  return finish();
}

cudaError_t partial_mask_shuffle(float* data) {
  partial_mask_kernel<<<1, 32>>>(data);
  return finish();
}

}  // namespace warp_test
