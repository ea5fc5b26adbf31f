// Launching around the runner's recorder: the linker sends the kernels' calls of
// cudaLaunchKernel to the recorder's __wrap_cudaLaunchKernel, and __real_cudaLaunchKernel
// is the runtime's own, unrecorded (its time and stream would escape the graders).
// fence-backends: cuda
// fence-expect: recorder_bypass\.cu: calls __real_cudaLaunchKernel, which your kernels' file may not use \(it goes around the graders' recorder
#include <cuda_runtime.h>

extern "C" cudaError_t __real_cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t);

namespace convlab::lab01 {
__global__ void nothing() {}
void launch_unseen(cudaStream_t s) {
  __real_cudaLaunchKernel(reinterpret_cast<const void*>(&nothing), dim3(1), dim3(32), nullptr, 0, s);
}
}  // namespace convlab::lab01
