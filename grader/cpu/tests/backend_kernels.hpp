// Host wrappers of the CPU backend's test kernels (backend_kernels.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace backend_test {

/// Planted bugs of the tiled kernel.
enum Bug { kNone = 0, kMissingSync = 1, kHaloOffByOne = 2, kEarlyReturn = 3 };
inline constexpr int kRadius = 3;

/// Tiled 1D convolution (radius 3, filter of 7) with a shared-memory tile and halo.
/// Returns the launch error, then the synchronisation error.
cudaError_t tiled_conv1d(const float* in, const float* filter, float* out, int n, int block, Bug bug);
/// out[i] = the left neighbour's input, passed through shared memory; no barrier if `skip_barrier`.
cudaError_t shift_through_shared(const float* in, float* out, int n, int block, bool skip_barrier);
/// Launches with the given shape and dynamic shared bytes; returns cudaGetLastError().
cudaError_t launch_shape(dim3 grid, dim3 block, std::size_t shared_bytes);
/// Raises the dynamic shared memory limit of the kernel launch_shape uses.
cudaError_t raise_shared_limit(int bytes);
/// Copies `count` floats to a 16-float __constant__ array, then scales `data` (n) by c[i % 16].
cudaError_t constant_scale(const float* coef, std::size_t count, float* data, int n);
/// Counts values (0..255) into 256 bins with atomicAdd, over many blocks.
cudaError_t histogram(const int* values, int n, unsigned* bins);
/// Every thread of a 3D grid of 3D blocks writes its linear id at its own place.
cudaError_t write_ids(unsigned* out, dim3 grid, dim3 block);
/// Each thread reads a static __shared__ element that no thread wrote.
cudaError_t read_unwritten_shared(float* out, int block);

}  // namespace backend_test
