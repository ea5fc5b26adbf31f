// Grader-owned naive baselines: the speed graders' yardstick. A student's kernel
// is timed against these, never against the student's own earlier labs.
//   conv1d: grid(ceil(n/256)), block(256), one thread per output
//   conv2d: grid(ceil(w/16), ceil(h/16)), block(16,16), one thread per output
#include "convlab/baselines.hpp"
#include "convlab/check.hpp"

namespace convlab::baseline {
namespace {

__global__ void conv1d_naive_kernel(const float* in, const float* filter, float* out, int n, int r) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float sum = 0.0f;
  for (int j = -r; j <= r; ++j) {
    const int k = i + j;
    if (k >= 0 && k < n) sum += in[k] * filter[j + r];
  }
  out[i] = sum;
}

__global__ void conv2d_naive_kernel(const float* in, const float* filter, float* out, int w, int h, int r) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col >= w || row >= h) return;
  const int fw = 2 * r + 1;
  float sum = 0.0f;
  for (int fr = 0; fr < fw; ++fr)
    for (int fc = 0; fc < fw; ++fc) {
      const int in_row = row - r + fr, in_col = col - r + fc;
      if (in_row >= 0 && in_row < h && in_col >= 0 && in_col < w)
        sum += filter[fr * fw + fc] * in[static_cast<long long>(in_row) * w + in_col];
    }
  out[static_cast<long long>(row) * w + col] = sum;
}

}  // namespace

void conv1d_naive(const Conv1dArgs& a) {
  constexpr int kBlock = 256;
  conv1d_naive_kernel<<<(a.n + kBlock - 1) / kBlock, kBlock, 0, a.stream>>>(a.d_in, a.d_filter, a.d_out, a.n, a.radius);
  CONVLAB_CHECK_LAUNCH();
}

void conv2d_naive(const Conv2dArgs& a) {
  const dim3 block(16, 16);
  const dim3 grid((a.width + block.x - 1) / block.x, (a.height + block.y - 1) / block.y);
  conv2d_naive_kernel<<<grid, block, 0, a.stream>>>(a.d_in, a.d_filter, a.d_out, a.width, a.height, a.radius);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::baseline
