// Lab 06's grader-owned baseline: the naive direct convolution, one thread per output.
//   grid(ceil(N K P Q / 256)), block(256)
#include "baseline_lab06.hpp"

#include <convlab/check.hpp>

namespace convlab::lab06::baseline {
namespace {

__global__ void conv_naive_kernel(const float* x, const float* w, float* y, ConvProblem p, int P, int Q) {
  const long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (idx >= (long long)p.n * p.k * P * Q) return;
  const int q = int(idx % Q), oh = int((idx / Q) % P);
  const int k = int((idx / ((long long)P * Q)) % p.k), n = int(idx / ((long long)P * Q * p.k));
  float sum = 0.0f;
  for (int c = 0; c < p.c; ++c)
    for (int r = 0; r < p.r; ++r)
      for (int s = 0; s < p.s; ++s) {
        const int ih = oh * p.stride_h - p.pad_h + r, iw = q * p.stride_w - p.pad_w + s;
        if (ih >= 0 && ih < p.h && iw >= 0 && iw < p.w)
          sum += x[(((long long)n * p.c + c) * p.h + ih) * p.w + iw] * w[(((long long)k * p.c + c) * p.r + r) * p.s + s];
      }
  y[idx] = sum;
}

}  // namespace

void conv_naive(const float* d_x, const float* d_w, float* d_y, const ConvProblem& p, cudaStream_t stream) {
  validate(p);
  const long long total = (long long)p.output_elements();
  conv_naive_kernel<<<unsigned((total + 255) / 256), 256, 0, stream>>>(d_x, d_w, d_y, p, p.out_h(), p.out_w());
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab::lab06::baseline
