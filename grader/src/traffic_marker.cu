// The marker kernel of a benchmark's traffic calls (convlab/conv_bench.hpp, BenchOptions::traffic):
// Nsight Compute lists it before the kernels of each profiled call, so that `convlab bench --traffic`
// can tell which kernels belong to which call (a launcher may start several).
#include "convlab/check.hpp"

#include <cuda_runtime.h>

namespace convlab {
namespace {
__global__ void convlab_traffic_marker(int* sink, int call) {
  if (sink && threadIdx.x == 0) *sink = call;  // never taken: the kernel must only exist and run
}
}  // namespace

void launch_traffic_marker(int call, cudaStream_t stream) {
  convlab_traffic_marker<<<1, 32, 0, stream>>>(nullptr, call);
  CONVLAB_CHECK_LAUNCH();
}

}  // namespace convlab
