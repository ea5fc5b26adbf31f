// Host wrappers of the CPU backend's asynchronous-copy test kernels (pipeline_kernels.cu):
// CUDA's pipeline primitives (cp.async), as a student's double-buffered tile uses them.
#pragma once

#include <cuda_runtime_api.h>

namespace pipeline_test {

/// out = 2 in, through shared memory: each block of 128 threads takes `tiles` tiles of 512 floats,
/// each thread copying 16 bytes of a tile with __pipeline_memcpy_async, the next tile in flight
/// while the current one is read (by another thread, after a barrier). `wait_lag` is the thread's
/// __pipeline_wait_prior argument: 1 is right; 2 reads each tile before its copy landed.
cudaError_t double_through_shared(const float* in, float* out, int blocks, int tiles, int wait_lag);
/// out[0..3] = the 16 bytes at `in`, copied with `zfill` bytes of zero fill.
cudaError_t copy_with_zfill(const float* in, float* out, int zfill);

}  // namespace pipeline_test
