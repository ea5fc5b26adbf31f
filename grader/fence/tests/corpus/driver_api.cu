// The driver API beneath the runtime: its launches and contexts are invisible to the runtime's bookkeeping.
// fence-backends: cuda
// fence-expect: driver_api\.cu: calls cuCtxGetCurrent, which your kernels' file may not use \(the CUDA driver API
#include <cuda.h>

namespace convlab::lab01 {
bool have_context() {
  CUcontext ctx = nullptr;
  return cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx != nullptr;
}
}  // namespace convlab::lab01
