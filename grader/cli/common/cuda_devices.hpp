/// @file cuda_devices.hpp
/// @brief The GPUs the NVIDIA driver shows this process, by UUID and name: what `convlab hardware`
/// reports of the graders' environment, and what `convlab grade --gpus` checks it against (gpus.hpp).
#pragma once

#include <string>
#include <vector>

namespace convlab::cli {

/// One GPU as nvidia-smi, or the driver, lists it.
struct GpuListed {
  int index = -1;    ///< nvidia-smi's index (for a MIG instance: its GPU's); in cuda_devices(): CUDA's ordinal
  std::string uuid;  ///< "GPU-4b0d..." or "MIG-..."
  std::string name;  ///< "NVIDIA H100 80GB HBM3" (for a MIG instance: "MIG 1g.10gb")
};

/// The GPUs CUDA shows this process (CUDA_VISIBLE_DEVICES applied), asked of the NVIDIA driver
/// (libcuda.so.1, loaded at run time: a CPU-backend build has no CUDA runtime to ask). Empty, with
/// `*reason` set, when there is no driver or no visible GPU.
std::vector<GpuListed> cuda_devices(std::string* reason);

/// A UUID as nvidia-smi prints it: `prefix` ("GPU-") and 16 bytes as 8-4-4-4-12 hex digits.
std::string format_uuid(const unsigned char (&bytes)[16], const std::string& prefix = "GPU-");

}  // namespace convlab::cli
