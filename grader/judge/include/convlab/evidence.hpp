/// @file evidence.hpp
/// @brief What every grader asks of the launches and copies the runner saw: the output was
/// computed by kernels on the device, from the launcher itself.
#pragma once

#include "convlab/remote.hpp"

#include <string>
#include <vector>

namespace convlab {

/// The reasons the calls did not compute their output with kernels on the device, one sentence
/// each, or empty: no kernel launched; data copied from the host into an output; more than a
/// little data copied from the device to the host (a computation on the host); device memory
/// written by host code (CPU backend); work started from another thread.
std::string not_computed_on_device(const std::vector<remote::CallRecord>& calls);

}  // namespace convlab
