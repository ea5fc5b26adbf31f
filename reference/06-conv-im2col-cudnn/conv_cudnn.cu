// Lab 06 — the same layer through cuDNN (reference solution).
//
// cuDNN's legacy descriptor API: a handle, tensor descriptors for x and y, a filter descriptor
// for w, a convolution descriptor (pads, strides, cross-correlation, FP32, CUDNN_FMA_MATH so
// that no TF32 tensor-core algorithm is chosen), the output size asked from cuDNN, the fastest
// algorithm measured by cudnnFindConvolutionForwardAlgorithmEx, and its workspace. cuDNN 9
// marks this API deprecated in favour of the graph API; it is still shipped and supported.
// This file is compiled only where cuDNN was found (never on the CPU backend).
#include "lab06.hpp"

#ifdef CONVLAB_HAVE_CUDNN
#include <cudnn.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

namespace convlab::lab06 {

struct CudnnState {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x_desc = nullptr, y_desc = nullptr;
  cudnnFilterDescriptor_t w_desc = nullptr;
  cudnnConvolutionDescriptor_t conv_desc = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  int out_h = 0, out_w = 0;
};

namespace {

void check(cudnnStatus_t status, const char* call, int line) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + " failed at conv_cudnn.cu:" + std::to_string(line) + ": " +
                             cudnnGetErrorString(status));
}
void check(cudaError_t err, const char* call, int line) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(call) + " failed at conv_cudnn.cu:" + std::to_string(line) + ": " +
                             cudaGetErrorString(err));
}
#define CHECK(call) check((call), #call, __LINE__)

const char* algo_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "UNKNOWN";
  }
}

}  // namespace

CudnnState* cudnn_create(const ConvProblem& p, const float* d_x, const float* d_w, float* d_y) {
  validate(p);
  auto st = std::make_unique<CudnnState>();
  struct Guard {  // frees what was made so far if a call below throws
    std::unique_ptr<CudnnState>& s;
    ~Guard() {
      if (s) cudnn_destroy(s.release());
    }
  } guard{st};
  CHECK(cudnnCreate(&st->handle));
  CHECK(cudnnCreateTensorDescriptor(&st->x_desc));
  CHECK(cudnnCreateTensorDescriptor(&st->y_desc));
  CHECK(cudnnCreateFilterDescriptor(&st->w_desc));
  CHECK(cudnnCreateConvolutionDescriptor(&st->conv_desc));
  CHECK(cudnnSetTensor4dDescriptor(st->x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, p.n, p.c, p.h, p.w));
  CHECK(cudnnSetFilter4dDescriptor(st->w_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, p.k, p.c, p.r, p.s));
  CHECK(cudnnSetConvolution2dDescriptor(st->conv_desc, p.pad_h, p.pad_w, p.stride_h, p.stride_w, 1, 1,
                                        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CHECK(cudnnSetConvolutionMathType(st->conv_desc, CUDNN_FMA_MATH));  // FP32 FMAs, no TF32
  int on = 0, ok = 0;
  CHECK(cudnnGetConvolution2dForwardOutputDim(st->conv_desc, st->x_desc, st->w_desc, &on, &ok, &st->out_h,
                                              &st->out_w));
  CHECK(cudnnSetTensor4dDescriptor(st->y_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, ok, st->out_h, st->out_w));

  // Find: cuDNN runs every algorithm that applies, on these buffers, and times it.
  int max_algos = 0, returned = 0;
  CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(st->handle, &max_algos));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(max_algos, 1));
  std::size_t free_bytes = 0, total_bytes = 0;
  CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t find_bytes = std::min<std::size_t>(std::size_t(1) << 30, free_bytes / 2);
  void* find_ws = nullptr;
  CHECK(cudaMalloc(&find_ws, find_bytes));
  const cudnnStatus_t found = cudnnFindConvolutionForwardAlgorithmEx(
      st->handle, st->x_desc, d_x, st->w_desc, d_w, st->conv_desc, st->y_desc, d_y, int(perf.size()), &returned,
      perf.data(), find_ws, find_bytes);
  cudaFree(find_ws);
  CHECK(found);
  const cudnnConvolutionFwdAlgoPerf_t* best = nullptr;
  // Sorted fastest first; skip failures, tensor-op math, and WINOGRAD_NONFUSED: on an H100 with
  // cuDNN 9 it returned errors of about 2^-8 of sum |x w| (a 19 x 133 layer of 5 x 5 filters: 32291
  // of 50540 outputs 464 times the FP32 bound; TF32's size, not FP32's) although Find reported FMA
  // math for it, and Find picks it on some runs only (docs/known-issues.md).
  for (int i = 0; i < returned; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].mathType != CUDNN_TENSOR_OP_MATH &&
        perf[i].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION &&
        perf[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED && (!best || perf[i].time < best->time))
      best = &perf[i];
  if (!best) throw std::runtime_error("cudnnFindConvolutionForwardAlgorithmEx found no FMA-math algorithm");
  st->algo = best->algo;
  CHECK(cudnnGetConvolutionForwardWorkspaceSize(st->handle, st->x_desc, st->w_desc, st->conv_desc, st->y_desc,
                                                st->algo, &st->workspace_bytes));
  st->workspace_bytes = std::max(st->workspace_bytes, best->memory);
  if (st->workspace_bytes > 0) CHECK(cudaMalloc(&st->workspace, st->workspace_bytes));
  return st.release();
}

void cudnn_forward(CudnnState* st, const float* d_x, const float* d_w, float* d_y, cudaStream_t stream) {
  if (!st) throw std::invalid_argument("lab06: cudnn_forward: no state (call cudnn_create first)");
  const float alpha = 1.0f, beta = 0.0f;
  CHECK(cudnnSetStream(st->handle, stream));
  CHECK(cudnnConvolutionForward(st->handle, &alpha, st->x_desc, d_x, st->w_desc, d_w, st->conv_desc, st->algo,
                                st->workspace, st->workspace_bytes, &beta, st->y_desc, d_y));
}

CudnnInfo cudnn_info(const CudnnState* st) {
  if (!st) return {};
  return {algo_name(st->algo), st->workspace_bytes, st->out_h, st->out_w};
}

void cudnn_destroy(CudnnState* st) noexcept {
  if (!st) return;
  if (st->workspace) cudaFree(st->workspace);
  if (st->conv_desc) cudnnDestroyConvolutionDescriptor(st->conv_desc);
  if (st->w_desc) cudnnDestroyFilterDescriptor(st->w_desc);
  if (st->y_desc) cudnnDestroyTensorDescriptor(st->y_desc);
  if (st->x_desc) cudnnDestroyTensorDescriptor(st->x_desc);
  if (st->handle) cudnnDestroy(st->handle);
  delete st;
}

}  // namespace convlab::lab06

#endif  // CONVLAB_HAVE_CUDNN
