// Internals shared by the CPU backend's runtime.cpp and launch.cpp.
#pragma once

#include "convlab_cpu/runtime.hpp"

#include <string>

namespace convlab_cpu {
inline constexpr int kDefaultDynamicShared = 48 * 1024;    // as on every CUDA GPU
inline constexpr int kMaxDynamicSharedOptin = 227 * 1024;  // Hopper's opt-in limit
/// Host threads that run blocks.
int worker_count();
/// The error of the last kernel that failed while running (cleared by the call).
cudaError_t take_execution_error();
/// The detailed message of the last failed launch (configuration or execution).
const std::string& last_launch_detail();
/// The dynamic shared memory limit of a kernel.
int max_dynamic_shared(const void* kernel);
/// Whether `address` lies in the shared memory of the block this host thread is running.
bool in_block_shared_memory(const void* address);
}  // namespace convlab_cpu
