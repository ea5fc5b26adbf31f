// Why CUDA cannot be used here. See convlab/gpu_reason.hpp.
//
// The CUDA runtime reports a machine without any NVIDIA driver as "CUDA driver version is
// insufficient for CUDA runtime version" (cudaErrorInsufficientDriver), the same words as a
// driver that is merely too old: the driver version tells the two apart (cudaDriverGetVersion
// gives 0 when no driver is installed).
#include "convlab/gpu_reason.hpp"

namespace convlab {

std::string cuda_version_text(int version) {
  if (version <= 0) return "none";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string describe_cuda_unavailable(int cuda_error, int device_count, int driver_version, int runtime_version,
                                      const char* visible_devices) {
  namespace e = cuda_error;
  const std::string runtime = "CUDA " + cuda_version_text(runtime_version);
  if (cuda_error == e::kStubLibrary || driver_version <= 0)
    return "no NVIDIA driver is installed (CUDA found no libcuda.so.1" +
           std::string(cuda_error == e::kStubLibrary ? ", only the toolkit's stub library" : "") +
           "), so no GPU can be used";
  const std::string driver = "the NVIDIA driver (it supports up to CUDA " + cuda_version_text(driver_version) + ")";
  if (cuda_error == e::kInsufficientDriver || cuda_error == e::kCallRequiresNewerDriver) {
    if (runtime_version <= 0 || driver_version < runtime_version)
      return driver + " is older than this build's CUDA runtime (" + runtime +
             "): update the driver, or build with a CUDA toolkit no newer than " + cuda_version_text(driver_version);
    return driver + " refuses this build's CUDA runtime (" + runtime + ", CUDA error " + std::to_string(cuda_error) +
           "): update the driver";
  }
  if (cuda_error == e::kNoDevice || (cuda_error == e::kSuccess && device_count <= 0)) {
    if (visible_devices) {
      const std::string v = visible_devices;
      return "no GPU is visible: CUDA_VISIBLE_DEVICES='" + v + "' hides " +
             (v.empty() || v == "-1" || v == "none" || v == "NoDevFiles" ? "every GPU" : "the GPUs this machine has") +
             " (" + driver + " is installed)";
    }
    return "no NVIDIA GPU on this machine: " + driver + " is installed, but it sees no device";
  }
  if (cuda_error == e::kSystemDriverMismatch)
    return "the NVIDIA kernel module and the driver library have different versions (a driver update without a "
           "reboot?): nvidia-smi shows the mismatch";
  if (cuda_error == e::kDevicesUnavailable)
    return "every GPU is busy or reserved (exclusive-process mode, or taken by another program): nvidia-smi shows "
           "who uses them";
  if (cuda_error == e::kSystemNotReady)
    return "the GPU system is not ready (on NVSwitch machines the fabric manager must be running)";
  if (cuda_error == e::kCompatNotSupportedOnDevice)
    return "the CUDA forward-compatibility libraries in use do not support this GPU: remove them from the library "
           "path, or update the driver";
  if (cuda_error == e::kInitializationError)
    return "the NVIDIA driver is installed but failed to start (is its kernel module loaded, and may this user open "
           "/dev/nvidia*?): nvidia-smi says more";
  return "CUDA cannot use a GPU here: cudaGetDeviceCount failed with CUDA error " + std::to_string(cuda_error) + " (" +
         driver + ", runtime " + runtime + ")";
}

}  // namespace convlab
