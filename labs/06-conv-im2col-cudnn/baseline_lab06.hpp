/// @file baseline_lab06.hpp
/// @brief Lab 06's grader-owned baseline: what its speed graders time a student's kernel
/// against. It is part of the lab's graders (labs/06-conv-im2col-cudnn/baseline_lab06.cu),
/// never of a submission.
#pragma once

#include "lab06.hpp"

#include <string>

namespace convlab::lab06::baseline {

/// Naive direct convolution: one thread per output y[n][k][p][q] (q fastest), 256 threads per
/// block, loops over c, r, s with a bounds test per tap, filters and inputs from global memory.
/// @param d_x      N C H W inputs
/// @param d_w      K C R S filter taps
/// @param d_y      N K P Q outputs
/// @param problem  the layer
/// @param stream   the stream to launch on
void conv_naive(const float* d_x, const float* d_w, float* d_y, const ConvProblem& problem, cudaStream_t stream);

#ifdef CONVLAB_HAVE_CUDNN
/// cuDNN with TF32 tensor cores allowed, its fastest algorithm for one layer
/// (cudnnFindConvolutionForwardAlgorithmEx through the grader's wrapper, convlab::CudnnConv): the
/// speed baseline of the tensor-core slot. Made and run in the runner (remote_lab06.cpp).
struct CudnnTf32;
/// Sets cuDNN up for `problem` and chooses its fastest algorithm on these buffers (d_y is overwritten).
CudnnTf32* cudnn_tf32_create(const ConvProblem& problem, const float* d_x, const float* d_w, float* d_y);
/// y = conv(x, w) with the chosen algorithm, on `stream`.
void cudnn_tf32_forward(CudnnTf32* state, const float* d_x, const float* d_w, float* d_y, cudaStream_t stream);
/// The chosen algorithm's name, e.g. "IMPLICIT_PRECOMP_GEMM".
std::string cudnn_tf32_algorithm(const CudnnTf32* state);
/// Frees what cudnn_tf32_create() made; never throws.
void cudnn_tf32_destroy(CudnnTf32* state) noexcept;
#endif

}  // namespace convlab::lab06::baseline
