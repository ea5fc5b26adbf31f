/// @file gpu_reason.hpp
/// @brief Why CUDA cannot be used here, in words that name what is missing: no NVIDIA
/// driver, no GPU, a driver older than the toolkit, a driver half-updated, GPUs that are
/// busy or hidden. Pure C++ (no CUDA header), so the CPU tests check every case.
///
/// The caller passes what the CUDA runtime said:
/// \code
/// int count = 0, driver = 0, runtime = 0;
/// const cudaError_t err = cudaGetDeviceCount(&count);
/// cudaDriverGetVersion(&driver);    // 0 when no driver is installed
/// cudaRuntimeGetVersion(&runtime);
/// if (err != cudaSuccess || count == 0)
///   reason = describe_cuda_unavailable(err, count, driver, runtime, std::getenv("CUDA_VISIBLE_DEVICES"));
/// \endcode
#pragma once

#include <string>

namespace convlab {

/// The cudaError_t values the reasons tell apart (CUDA's own numbers, stable across releases;
/// gpu.cu checks them against the CUDA headers).
namespace cuda_error {
inline constexpr int kSuccess = 0;                        ///< cudaSuccess
inline constexpr int kInitializationError = 3;            ///< cudaErrorInitializationError
inline constexpr int kStubLibrary = 34;                   ///< cudaErrorStubLibrary: only the toolkit's stub libcuda
inline constexpr int kInsufficientDriver = 35;            ///< cudaErrorInsufficientDriver
inline constexpr int kCallRequiresNewerDriver = 36;       ///< cudaErrorCallRequiresNewerDriver
inline constexpr int kDevicesUnavailable = 46;            ///< cudaErrorDevicesUnavailable
inline constexpr int kNoDevice = 100;                     ///< cudaErrorNoDevice
inline constexpr int kSystemNotReady = 802;               ///< cudaErrorSystemNotReady (fabric manager)
inline constexpr int kSystemDriverMismatch = 803;         ///< cudaErrorSystemDriverMismatch
inline constexpr int kCompatNotSupportedOnDevice = 804;   ///< cudaErrorCompatNotSupportedOnDevice
}  // namespace cuda_error

/// "13.0" for 13000, "12.4" for 12040: a CUDA version as cudaDriverGetVersion() and
/// cudaRuntimeGetVersion() give it (1000 * major + 10 * minor).
std::string cuda_version_text(int version);

/// One sentence saying why no CUDA device can be used, naming what is missing:
/// - no NVIDIA driver (`driver_version` 0, or CUDA found only the toolkit's stub library);
/// - a driver older than the CUDA runtime this build uses (both versions named);
/// - no GPU (a driver but no device; CUDA_VISIBLE_DEVICES named when it is set and hides them);
/// - a kernel module and driver library of different versions, GPUs busy or in exclusive mode,
///   a system that is not ready (NVSwitch fabric manager);
/// - anything else with CUDA's own error number.
/// `cuda_error` is what cudaGetDeviceCount() returned (a cudaError_t), `device_count` the count
/// it reported, `visible_devices` the CUDA_VISIBLE_DEVICES variable (null when unset).
/// It does not say what to do instead: callers add the command that works for them.
std::string describe_cuda_unavailable(int cuda_error, int device_count, int driver_version, int runtime_version,
                                      const char* visible_devices = nullptr);

}  // namespace convlab
