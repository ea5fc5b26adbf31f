// Lab 05 — Jacobi iteration for Poisson's equation, with the residual reduced on the GPU
// (reference).
//   jacobi sweep:   grid(ceil(n/32), ceil(n/8)), block(32, 8); u' = (sum of 4 neighbours - h^2 f) / 4,
//                   u = 0 outside the grid; double-buffered, never in place
//   residual:       grid(min(ceil(n*n/256), 1024)), block(256); each thread sums r^2 over a
//                   grid-stride loop in double, the block reduces its threads' sums in shared
//                   memory (a tree: 256 -> 128 -> ... -> 1) and writes one partial sum; a second
//                   launch of one block reduces the partial sums the same way. No atomics: the
//                   sum is the same on every run.
//   The host reads the residual every check_every sweeps (one small copy and a stream sync),
//   and stops at the tolerance or the iteration cap.
#include "lab05.hpp"

#include <convlab/check.hpp>
#include <convlab/device_buffer.hpp>

#include <algorithm>
#include <cmath>
#include <utility>

namespace convlab::lab05 {
namespace {

constexpr int REDUCE_THREADS = 256;
constexpr int MAX_PARTIALS = 1024;

__device__ __forceinline__ float u_at(const float* __restrict__ u, int i, int j, int n) {
  return (i < 0 || i >= n || j < 0 || j >= n) ? 0.0f : u[static_cast<long long>(j) * n + i];
}

__global__ void jacobi_kernel(const float* __restrict__ u, const float* __restrict__ f, float* __restrict__ u_new,
                              int n, float h2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= n || j >= n) return;
  const long long k = static_cast<long long>(j) * n + i;
  u_new[k] = 0.25f * (u_at(u, i - 1, j, n) + u_at(u, i + 1, j, n) + u_at(u, i, j - 1, n) + u_at(u, i, j + 1, n) -
                      h2 * f[k]);
}

// The block's tree reduction of one double per thread, left in s[0].
__device__ double block_sum(double v, double* s) {
  s[threadIdx.x] = v;
  __syncthreads();  // reduce: every thread's value is in shared memory
  for (int stride = REDUCE_THREADS / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();  // reduce: this level is done
  }
  return s[0];
}

// Partial sums of r^2 (or of f^2 when `f_only`) per block.
__global__ void residual_kernel(const float* __restrict__ u, const float* __restrict__ f, double* __restrict__ partial,
                                int n, double inv_h2, bool f_only) {
  __shared__ double s[REDUCE_THREADS];
  const long long cells = static_cast<long long>(n) * n;
  double acc = 0.0;
  for (long long k = blockIdx.x * static_cast<long long>(REDUCE_THREADS) + threadIdx.x; k < cells;
       k += static_cast<long long>(gridDim.x) * REDUCE_THREADS) {
    double r = f[k];
    if (!f_only) {
      const int i = static_cast<int>(k % n), j = static_cast<int>(k / n);
      const double lap = (double(u_at(u, i - 1, j, n)) + u_at(u, i + 1, j, n) + u_at(u, i, j - 1, n) +
                          u_at(u, i, j + 1, n) - 4.0 * u[k]) * inv_h2;
      r -= lap;
    }
    acc += r * r;
  }
  const double sum = block_sum(acc, s);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

__global__ void sum_partials_kernel(const double* __restrict__ partial, int count, double* __restrict__ total) {
  __shared__ double s[REDUCE_THREADS];
  double acc = 0.0;
  for (int k = threadIdx.x; k < count; k += REDUCE_THREADS) acc += partial[k];
  const double sum = block_sum(acc, s);
  if (threadIdx.x == 0) *total = sum;
}

// Sum over the grid of r^2 (or f^2), reduced on the GPU; the host reads the one double.
double sum_of_squares(const float* u, const float* f, int n, float h, bool f_only, DeviceBuffer<double>& scratch,
                      cudaStream_t stream) {
  const long long cells = static_cast<long long>(n) * n;
  const int blocks = static_cast<int>(std::min<long long>((cells + REDUCE_THREADS - 1) / REDUCE_THREADS, MAX_PARTIALS));
  const double inv_h2 = 1.0 / (double(h) * double(h));
  residual_kernel<<<blocks, REDUCE_THREADS, 0, stream>>>(u, f, scratch.get(), n, inv_h2, f_only);
  CONVLAB_CHECK_LAUNCH();
  sum_partials_kernel<<<1, REDUCE_THREADS, 0, stream>>>(scratch.get(), blocks, scratch.get() + MAX_PARTIALS);
  CONVLAB_CHECK_LAUNCH();
  double total = 0;
  CONVLAB_CUDA_CHECK(cudaMemcpyAsync(&total, scratch.get() + MAX_PARTIALS, sizeof total, cudaMemcpyDeviceToHost, stream));
  CONVLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return total;
}

}  // namespace

JacobiResult poisson_jacobi(float* d_u, float* d_tmp, const float* d_f, const PoissonProblem& p, cudaStream_t stream) {
  validate(p);
  DeviceBuffer<double> scratch(MAX_PARTIALS + 1);
  const double f_norm = std::sqrt(sum_of_squares(d_u, d_f, p.n, p.h, true, scratch, stream));
  const double scale = f_norm > 0 ? 1.0 / f_norm : 1.0;
  const auto residual = [&](const float* u) {
    return std::sqrt(sum_of_squares(u, d_f, p.n, p.h, false, scratch, stream)) * scale;
  };
  JacobiResult result;
  float* cur = d_u;
  float* nxt = d_tmp;
  result.d_solution = cur;
  result.residual = residual(cur);
  result.converged = result.residual <= p.tol;
  const dim3 block(32, 8);
  const dim3 grid((p.n + 31) / 32, (p.n + 7) / 8);
  const float h2 = p.h * p.h;
  for (int it = 1; it <= p.max_iters && !result.converged; ++it) {
    jacobi_kernel<<<grid, block, 0, stream>>>(cur, d_f, nxt, p.n, h2);
    CONVLAB_CHECK_LAUNCH();
    std::swap(cur, nxt);  // Jacobi: the new iterate is read next
    result.d_solution = cur;
    result.iterations = it;
    if (it % p.check_every == 0 || it == p.max_iters) {
      result.residual = residual(cur);
      result.converged = result.residual <= p.tol;
    }
  }
  return result;
}

}  // namespace convlab::lab05
