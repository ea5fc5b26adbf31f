/// @file check.hpp
/// @brief CUDA error checking that names the failing call, file and line.
///
/// Every CUDA runtime call in convlab goes through CONVLAB_CUDA_CHECK, and every
/// kernel launch is followed by CONVLAB_CHECK_LAUNCH(), so that a bad launch
/// configuration is reported where it happened, not at the next synchronisation.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace convlab {

/// A failed CUDA runtime call. what() reads
/// <span class="wrap">`cudaMalloc(&p, bytes) failed at grader/device/src/gpu.cu:42: out of memory (cudaErrorMemoryAllocation)`</span>.
class CudaError : public std::runtime_error {
public:
  /// @param code  the error the call returned
  /// @param what  the full message
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  /// The error code the call returned.
  cudaError_t code() const noexcept { return code_; }

private:
  cudaError_t code_;
};

namespace detail {
/// Throws CudaError unless `code` is cudaSuccess.
inline void cuda_check(cudaError_t code, const char* call, const char* file, int line) {
  if (code == cudaSuccess) return;
  throw CudaError(code, std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                            cudaGetErrorString(code) + " (" + cudaGetErrorName(code) + ")");
}
}  // namespace detail

}  // namespace convlab

/// Checks a CUDA runtime call; throws convlab::CudaError naming the call, file and line.
#define CONVLAB_CUDA_CHECK(call) ::convlab::detail::cuda_check((call), #call, __FILE__, __LINE__)

/// Checks the launch just made (bad configuration, too much shared memory, ...).
/// Write it on the line after every `kernel<<<...>>>(...)`.
#define CONVLAB_CHECK_LAUNCH() \
  ::convlab::detail::cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
