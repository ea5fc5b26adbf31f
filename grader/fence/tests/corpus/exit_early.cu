// Ending the graders' process early, with status 0. The __device__ helper's host
// stub (nvcc makes it call exit(1)) is allowed; this call is not.
// fence-backends: cuda cpu
// fence-expect: exit_early\.cu: calls exit, which your kernels' file may not use \(it ends the program, and the graders decide when their process ends
#include <cstdlib>

namespace convlab::lab01 {
__device__ float twice(float x) { return 2 * x; }
__global__ void scale(float* y) { y[threadIdx.x] = twice(y[threadIdx.x]); }
void done(float* d_y) {
  scale<<<1, 32>>>(d_y);
  std::exit(0);
}
}  // namespace convlab::lab01
