/// @file baselines.hpp
/// @brief Grader-owned baseline kernels: what speed graders time a student's
/// kernel against. They live in the harness, never in a lab's starter or
/// reference, so a submission cannot change them.
#pragma once

#include "convlab/conv_testbed.hpp"

namespace convlab::baseline {

/// Naive 1D convolution: one thread per output, filter read from global memory
/// (PMPP figure 7.4's design), 256 threads per block.
void conv1d_naive(const Conv1dArgs& args);

/// Naive 2D convolution: one thread per output, 16x16 blocks, filter in global
/// memory, boundary checks on every tap (PMPP figure 7.7).
void conv2d_naive(const Conv2dArgs& args);

}  // namespace convlab::baseline
