// Lab 02 — the filter in constant memory (your file).
//
// Changed since lab 01: the filter is no longer a kernel argument in global
// memory but the __constant__ array c_filter, which the launcher fills from the
// host before each launch. Every thread of a warp reads the same tap at the same
// time, which the constant cache serves as one broadcast. The rest is lab 01's
// kernel: one thread per output, zero padding (ghost cells are 0).
//   conv1d: grid(ceil(n / BLOCK)),                    block(BLOCK)
//   conv2d: grid(ceil(width / BX), ceil(height / BY)), block(BX, BY)
// The contract (what the graders call) is labs/02-conv-constant/lab02.hpp.
// Run the checks: ctest --preset default -L lab02
#include "lab02.hpp"

#include <convlab/check.hpp>

namespace convlab::lab02 {
namespace {

// One buffer for both launchers, sized for the largest 2D filter (lab02.hpp).
__constant__ float c_filter[kFilterCapacity];

// out[i] = sum over j in [-r, r] of in[i + j] * c_filter[j + r], with in[k] = 0 outside [0, n).
__global__ void conv1d_constant_kernel(const float* __restrict__ in, float* __restrict__ out, int n, int r) {
  // TODO(student): lab 01's 1D kernel, reading the taps from c_filter instead of a
  // filter argument (about 10 lines).
  // starter only: quiets "unused parameter" until you write this; delete it
  (void)in, (void)out, (void)n, (void)r, (void)c_filter;
}

// out[row][col] = sum over (i, j) in [-r, r]^2 of in[row + i][col + j] * c_filter[(i + r) * (2r + 1) + (j + r)].
__global__ void conv2d_constant_kernel(const float* __restrict__ in, float* __restrict__ out, int width, int height,
                                       int r) {
  // TODO(student): lab 01's 2D kernel, reading the taps from c_filter (about 14 lines).
  // starter only: quiets "unused parameter" until you write this; delete it
  (void)in, (void)out, (void)width, (void)height, (void)r, (void)c_filter;
}

}  // namespace

void conv1d_constant(const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& p,
                     cudaStream_t stream) {
  validate(p);  // refuses a filter larger than c_filter before anything is copied
  // TODO(student): copy the 2r+1 taps from h_filter into c_filter with
  // cudaMemcpyToSymbolAsync on `stream` (so the copy is ordered before the kernel),
  // and check its status with CONVLAB_CUDA_CHECK (1 statement).
  // TODO(student): choose a block size and enough blocks to cover all n outputs (2 lines).
  (void)h_filter;  // starter only: quiets "unused parameter" until you write this; delete it
  const int block = 1;
  const int grid = 1;
  conv1d_constant_kernel<<<grid, block, 0, stream>>>(d_in, d_out, p.n, p.radius);
  CONVLAB_CHECK_LAUNCH();
}

void conv2d_constant(const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& p,
                     cudaStream_t stream) {
  validate(p);
  // TODO(student): copy the (2r+1)^2 taps from h_filter into c_filter, as in 1D (1 statement).
  // TODO(student): choose a 2D block shape and a 2D grid that covers the whole image (2 lines).
  (void)h_filter;  // starter only: quiets "unused parameter" until you write this; delete it
  const dim3 block(1, 1);
  const dim3 grid(1, 1);
  conv2d_constant_kernel<<<grid, block, 0, stream>>>(d_in, d_out, p.width, p.height, p.radius);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::lab02
