// Lab 06 — the same layer through cuDNN (your file).
//
// cuDNN's descriptor API, step by step (cudnn_create):
//   1. cudnnCreate: the handle;
//   2. tensor descriptors for x and y, a filter descriptor for w: FP32, NCHW (KCRS);
//   3. a convolution descriptor: pads, strides, dilation 1, CUDNN_CROSS_CORRELATION, FP32,
//      and cudnnSetConvolutionMathType(..., CUDNN_FMA_MATH) so that no TF32 is used;
//   4. the output size from cudnnGetConvolution2dForwardOutputDim, into y's descriptor;
//   5. cudnnFindConvolutionForwardAlgorithmEx on the given buffers, with a scratch workspace:
//      keep the fastest result whose status is CUDNN_STATUS_SUCCESS, leaving out
//      WINOGRAD_NONFUSED (seen returning TF32-sized errors under FMA math: the handout);
//   6. its workspace (cudnnGetConvolutionForwardWorkspaceSize), allocated once.
// Check every status (cudnnGetErrorString names it); cudnn_forward() then only sets the stream
// and calls cudnnConvolutionForward. This file is the only one of the lab that may use cuDNN.
// It is compiled only where cuDNN was found: never on the CPU backend.
#include "lab06.hpp"

#ifdef CONVLAB_HAVE_CUDNN
#include <cudnn.h>

#include <stdexcept>
#include <string>

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // the descriptor API is deprecated in cuDNN 9
#endif

namespace convlab::lab06 {

struct CudnnState {
  // TODO(student): the handle, the four descriptors, the chosen algorithm, the workspace and
  // its size, and the output size (about 8 lines).
};

CudnnState* cudnn_create(const ConvProblem& p, const float* d_x, const float* d_w, float* d_y) {
  validate(p);
  // TODO(student): steps 1 to 6 above (about 50 lines).
  (void)d_x, (void)d_w, (void)d_y;
  throw std::runtime_error("TODO(student): cudnn_create is not written yet");
}

void cudnn_forward(CudnnState* state, const float* d_x, const float* d_w, float* d_y, cudaStream_t stream) {
  // TODO(student): cudnnSetStream, then cudnnConvolutionForward with alpha 1, beta 0 (about 5 lines).
  (void)state, (void)d_x, (void)d_w, (void)d_y, (void)stream;
  throw std::runtime_error("TODO(student): cudnn_forward is not written yet");
}

CudnnInfo cudnn_info(const CudnnState* state) {
  // TODO(student): the algorithm's name, the workspace size and the output size (about 3 lines).
  (void)state;
  return {};
}

void cudnn_destroy(CudnnState* state) noexcept {
  // TODO(student): free the workspace, destroy the descriptors and the handle (about 8 lines).
  delete state;
}

}  // namespace convlab::lab06

#endif  // CONVLAB_HAVE_CUDNN
