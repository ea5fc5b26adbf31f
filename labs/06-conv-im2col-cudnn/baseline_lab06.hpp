/// @file baseline_lab06.hpp
/// @brief Lab 06's grader-owned baseline: what its speed graders time a student's kernel
/// against. It is part of the lab's graders (labs/06-conv-im2col-cudnn/baseline_lab06.cu),
/// never of a submission.
#pragma once

#include "lab06.hpp"

namespace convlab::lab06::baseline {

/// Naive direct convolution: one thread per output y[n][k][p][q] (q fastest), 256 threads per
/// block, loops over c, r, s with a bounds test per tap, filters and inputs from global memory.
/// @param d_x      N C H W inputs
/// @param d_w      K C R S filter taps
/// @param d_y      N K P Q outputs
/// @param problem  the layer
/// @param stream   the stream to launch on
void conv_naive(const float* d_x, const float* d_w, float* d_y, const ConvProblem& problem, cudaStream_t stream);

}  // namespace convlab::lab06::baseline
