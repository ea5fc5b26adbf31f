// Lab 01 — naive 1D and 2D convolution (your file).
//
// One thread computes one output. The filter is read from global memory; inputs
// outside the array or image are ghost cells with the value 0.
//   conv1d: grid(ceil(n / BLOCK)),                    block(BLOCK)
//   conv2d: grid(ceil(width / BX), ceil(height / BY)), block(BX, BY)
// The contract (what the graders call) is labs/01-conv-basic/lab01.hpp.
// Run the checks: ctest --preset default -L lab01
#include "lab01.hpp"

#include <convlab/check.hpp>

namespace convlab::lab01 {
namespace {

// out[i] = sum over j in [-r, r] of in[i + j] * filter[j + r], with in[k] = 0 outside [0, n).
__global__ void conv1d_naive_kernel(const float* __restrict__ in, const float* __restrict__ filter,
                                    float* __restrict__ out, int n, int r) {
  // TODO(student): compute this thread's output index, return if it is past the end,
  // sum the 2r+1 products skipping ghost cells, store the sum (about 10 lines).
  // starter only: quiets "unused parameter" until you write this; delete it
  (void)in, (void)filter, (void)out, (void)n, (void)r;
}

// out[row][col] = sum over (i, j) in [-r, r]^2 of in[row + i][col + j] * filter[i + r][j + r].
__global__ void conv2d_naive_kernel(const float* __restrict__ in, const float* __restrict__ filter,
                                    float* __restrict__ out, int width, int height, int r) {
  // TODO(student): compute this thread's (row, col), return if it is outside the image,
  // sum the (2r+1)^2 products skipping ghost cells, store the sum (about 14 lines).
  // The filter is row-major: tap (i, j) is filter[(i + r) * (2 * r + 1) + (j + r)].
  // starter only: quiets "unused parameter" until you write this; delete it
  (void)in, (void)filter, (void)out, (void)width, (void)height, (void)r;
}

}  // namespace

void conv1d_naive(const float* d_in, const float* d_filter, float* d_out, const Conv1dProblem& p,
                  cudaStream_t stream) {
  validate(p);
  // TODO(student): choose a block size and enough blocks to cover all n outputs (2 lines).
  const int block = 1;
  const int grid = 1;
  conv1d_naive_kernel<<<grid, block, 0, stream>>>(d_in, d_filter, d_out, p.n, p.radius);
  CONVLAB_CHECK_LAUNCH();
}

void conv2d_naive(const float* d_in, const float* d_filter, float* d_out, const Conv2dProblem& p,
                  cudaStream_t stream) {
  validate(p);
  // TODO(student): choose a 2D block shape and a 2D grid that covers the whole image (2 lines).
  const dim3 block(1, 1);
  const dim3 grid(1, 1);
  conv2d_naive_kernel<<<grid, block, 0, stream>>>(d_in, d_filter, d_out, p.width, p.height, p.radius);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::lab01
