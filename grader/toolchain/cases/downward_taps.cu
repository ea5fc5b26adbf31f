// Known miscompile case `downward_taps` (issue 18): lab 01's naive 1D convolution, written the way
// a student may write it, with the taps summed downward:
//
//   for (int j = r; j >= -r; --j) { const int k = i + j; if (k >= 0 && k < n) acc = fmaf(in[k], filter[j + r], acc); }
//
// The loop is right (the same sum, the other way round), and the CPU backend grades it right. On
// an H100 with CUDA 13.0.88 (driver 580.159.04) the default device optimisation (ptxas -O3, also
// -O2, sm_90, sm_90a, and compute_90 through the driver's JIT) gets 253 of 255 outputs wrong for
// n = 255, r = 4, 128-thread blocks; -Xptxas -O1, -O0 and -G get them all right.
//
// The program runs the kernel on a few shapes, checks every output against a double-precision
// sum on the CPU and prints one line per shape for `convlab doctor`:
//   convlab-case downward_taps n=255 r=4 block=128 wrong=253 total=255 max_error=1.7
// Exit status: 0 every output right, 1 some wrong, 2 a CUDA error, 77 no GPU.
// grader/toolchain/CMakeLists.txt builds it three ways (default, -Xptxas -O1, -G).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <vector>

namespace {

__global__ void conv1d_downward(const float* __restrict__ in, const float* __restrict__ filter,
                                float* __restrict__ out, int n, int r) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int j = r; j >= -r; --j) {
    const int k = i + j;
    if (k >= 0 && k < n) acc = fmaf(in[k], filter[j + r], acc);
  }
  out[i] = acc;
}

// A fixed generator: every run and every machine sees the same inputs.
float next_value(std::uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return static_cast<float>((state >> 40) & 0xFFFFFF) / static_cast<float>(0x800000) - 1.0f;  // [-1, 1)
}

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("CUDA error in %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

struct Shape {
  int n, r, block;
};

// Runs one shape; returns the wrong outputs (-1 on a CUDA error).
long run_shape(const Shape& s, std::uint64_t seed) {
  const int fw = 2 * s.r + 1;
  std::vector<float> h_in(s.n), h_filter(fw), h_out(s.n);
  for (auto& v : h_in) v = next_value(seed);
  for (auto& v : h_filter) v = next_value(seed);
  float *d_in = nullptr, *d_filter = nullptr, *d_out = nullptr;
  bool ok = cuda_ok(cudaMalloc(&d_in, s.n * sizeof(float)), "cudaMalloc") &&
            cuda_ok(cudaMalloc(&d_filter, fw * sizeof(float)), "cudaMalloc") &&
            cuda_ok(cudaMalloc(&d_out, s.n * sizeof(float)), "cudaMalloc") &&
            cuda_ok(cudaMemcpy(d_in, h_in.data(), s.n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy") &&
            cuda_ok(cudaMemcpy(d_filter, h_filter.data(), fw * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy") &&
            cuda_ok(cudaMemset(d_out, 0xFF, s.n * sizeof(float)), "cudaMemset");  // NaN: an unwritten output is wrong
  if (ok) {
    conv1d_downward<<<(s.n + s.block - 1) / s.block, s.block>>>(d_in, d_filter, d_out, s.n, s.r);
    ok = cuda_ok(cudaGetLastError(), "the launch") && cuda_ok(cudaDeviceSynchronize(), "the kernel") &&
         cuda_ok(cudaMemcpy(h_out.data(), d_out, s.n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  }
  cudaFree(d_in);
  cudaFree(d_filter);
  cudaFree(d_out);
  if (!ok) return -1;
  long wrong = 0;
  double max_error = 0;
  for (int i = 0; i < s.n; ++i) {
    double sum = 0, magnitude = 0;
    for (int j = -s.r; j <= s.r; ++j) {
      const int k = i + j;
      if (k < 0 || k >= s.n) continue;
      sum += double(h_in[k]) * h_filter[j + s.r];
      magnitude += std::fabs(double(h_in[k]) * h_filter[j + s.r]);
    }
    // float32 rounding of a sum of 2r+1 products stays far below this; the miscompile is off by ~1.
    const double tolerance = 1e-5 * magnitude + 1e-6;
    const double error = std::fabs(double(h_out[i]) - sum);
    if (!(error <= tolerance)) {  // NaN counts as wrong
      ++wrong;
      if (!(error <= max_error)) max_error = error;
    }
  }
  std::printf("convlab-case downward_taps n=%d r=%d block=%d wrong=%ld total=%d max_error=%.3g\n", s.n, s.r, s.block,
              wrong, s.n, max_error);
  return wrong;
}

}  // namespace

int main() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::printf("no GPU: %s\n", e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    return 77;
  }
  cudaDeviceProp p{};
  if (!cuda_ok(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties")) return 2;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("device: %s (sm_%d%d), driver API %d, runtime %d\n", p.name, p.major, p.minor, driver, runtime);
  // The shape measured in issue 18 first; then lab 01's own block size and a longer, wider one.
  const Shape shapes[] = {{255, 4, 128}, {255, 4, 256}, {1000, 3, 128}, {4099, 8, 256}};
  long wrong = 0;
  std::uint64_t seed = 18;
  for (const Shape& s : shapes) {
    const long w = run_shape(s, seed++);
    if (w < 0) return 2;
    wrong += w;
  }
  std::printf(wrong ? "WRONG: this build computes the downward loop wrong: the compiler miscompiles a known case "
                      "(issue 18); `convlab doctor` names the workaround\n"
                    : "right: every output matches\n");
  return wrong ? 1 : 0;
}
