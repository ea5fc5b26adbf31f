/// @file hardware.hpp
/// @brief The GPU a run used: name, driver, clocks and the copy bandwidth
/// measured now, for the record of every grading and calibration run.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace convlab::cli {

/// `convlab hardware`: describes the visible GPU (JSON with `json`); exit 0, or 1 without a GPU.
int hardware_main(bool json);

/// Describes GPU `gpu` (a CUDA_VISIBLE_DEVICES value), measured in a child
/// process; `{"gpu": ..., "available": false, "reason": ...}` without one.
/// `cuda_devices` lists, by UUID and name, the GPUs the child could see
/// (with `cuda_devices_reason` when none).
nlohmann::json probe_hardware(const std::string& gpu);

}  // namespace convlab::cli
