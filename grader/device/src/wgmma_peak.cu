// The TF32 ceiling of Hopper's warpgroup products (wgmma, convlab/wgmma.hpp). Built for sm_90a
// where the build's architectures hold 90 (grader/CMakeLists.txt: its own library, so that the rest
// of convlab::device_cuda keeps its targets). See convlab/gpu.hpp.
#include "convlab/check.hpp"
#include "convlab/device_buffer.hpp"
#include "convlab/gpu.hpp"
#include "convlab/wgmma.hpp"

#include <cstdint>

namespace convlab {
namespace {

// Every warpgroup issues m64n64k8 products back to back, in groups of 6 with one group left
// running (wait_group 1), as an implicit GEMM issues them; B from shared memory (one 8 x 64 tile:
// core matrices 128 bytes apart along K, 256 along N), A from registers.
__global__ void __launch_bounds__(256, 1) wgmma_loop(float* sink, int iters) {
  __shared__ __align__(128) float b[512];
  for (int i = int(threadIdx.x); i < 512; i += int(blockDim.x)) b[i] = 1.0f / 1024;
  wgmma::shared_writes_to_async_proxy();
  __syncthreads();
  float acc[32] = {};
  const float a[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  const std::uint64_t d = wgmma::descriptor(b, 128, 256);
  for (int it = 0; it < iters; ++it) {
    wgmma::fence();
#pragma unroll
    for (int j = 0; j < 6; ++j) wgmma::mma_64x64x8(acc, a, d);
    wgmma::commit();
    wgmma::wait<1>();
  }
  wgmma::wait<0>();
  float s = 0;
  for (float v : acc) s += v;
  if (s == -1.0f) sink[threadIdx.x] = s;  // never: keeps the products
}

}  // namespace

double measure_tf32_wgmma_peak_gflops() {
  if (!wgmma::loaded(wgmma_loop)) return 0;
  const DeviceInfo d = device_info();
  DeviceBuffer<float> sink(256);
  const int iters = 4096, warpgroups = 2;
  const Stats st = time_launch(
      [&](cudaStream_t s) {
        wgmma_loop<<<d.sm_count, 128 * warpgroups, 0, s>>>(sink.get(), iters);
        CONVLAB_CHECK_LAUNCH();
      },
      10, 2);
  const double flops = 2.0 * 64 * 64 * 8 * 6 * double(iters) * d.sm_count * warpgroups;
  return flops / (st.median * 1e-3) / 1e9;
}

}  // namespace convlab
