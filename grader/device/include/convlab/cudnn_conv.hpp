/// \file
/// \brief RAII wrapper that times cuDNN's fastest forward convolution, the
///        baseline the labs and benchmarks compare against.
///
/// The wrapper uses cuDNN's legacy convolution API (descriptors plus
/// cudnnFindConvolutionForwardAlgorithmEx). cuDNN 9 marks that API
/// deprecated in favour of the graph API but still ships and supports it; it
/// is the shortest honest way to ask "what does cuDNN do for this shape".
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

namespace convlab {

/// Shape of one 2-D convolution: NCHW input, KCRS filter (or NHWC and KRSC), FP32 data,
/// cross-correlation (the filter is not flipped), no dilation, no groups.
struct CudnnConvShape {
  int n = 1;         ///< Batch size (N).
  int c = 1;         ///< Input channels (C).
  int h = 0;         ///< Input height (H).
  int w = 0;         ///< Input width (W).
  int k = 1;         ///< Output channels, i.e. number of filters (K).
  int r = 1;         ///< Filter height (R).
  int s = 1;         ///< Filter width (S).
  int pad_h = 0;     ///< Zero padding added above and below the input.
  int pad_w = 0;     ///< Zero padding added left and right of the input.
  int stride_h = 1;  ///< Vertical stride of the filter window.
  int stride_w = 1;  ///< Horizontal stride of the filter window.
  /// Tensors in NHWC (channels innermost) and filters in KRSC instead of NCHW and KCRS: the layout
  /// cuDNN's tensor-core kernels read without transposing (the benchmark's fairer anchor).
  bool nhwc = false;
};

/// Which arithmetic cuDNN may use for an FP32 convolution.
enum class CudnnMath {
  /// Plain FP32 fused multiply-adds (CUDNN_FMA_MATH): no TF32 tensor cores,
  /// so results are comparable with FP32 CUDA-core kernels.
  fma,
  /// cuDNN's default (CUDNN_DEFAULT_MATH), which lets it round FP32 inputs to
  /// TF32 and use tensor cores on Ampere and newer GPUs.
  tf32_allowed,
};

/// Thrown when a cuDNN or CUDA runtime call fails; the message names the
/// call, the source file and line, and cuDNN's (or CUDA's) error string.
class CudnnError : public std::runtime_error {
 public:
  /// Wraps an already formatted message.
  /// \param what the full message, as returned by what().
  explicit CudnnError(const std::string& what) : std::runtime_error(what) {}
};

/// One forward convolution set up in cuDNN: a handle, the tensor, filter and
/// convolution descriptors, and, once chosen, an algorithm and its workspace.
///
/// Typical use:
/// \code
/// convlab::CudnnConv conv(shape);
/// conv.choose_algorithm(d_x, d_w, d_y);  // benchmarks every algorithm once
/// conv.run(d_x, d_w, d_y, stream);        // the call to time
/// \endcode
///
/// An object is not safe to use from several threads at once: run() binds the
/// handle to the stream it is given.
class CudnnConv {
 public:
  /// Validates \p shape, then creates the cuDNN handle and descriptors.
  /// \param shape sizes, padding and strides of the convolution.
  /// \param math whether cuDNN may use TF32 tensor cores (default: no).
  /// \throws std::invalid_argument if a field of \p shape is out of range
  ///         (before any CUDA or cuDNN call, so this works without a GPU).
  /// \throws CudnnError if a cuDNN or CUDA call fails.
  explicit CudnnConv(const CudnnConvShape& shape, CudnnMath math = CudnnMath::fma);
  /// Releases the workspace, descriptors and handle; never throws (a failure
  /// is reported on stderr).
  ~CudnnConv();
  /// Not copyable: the object owns cuDNN and device resources.
  CudnnConv(const CudnnConv&) = delete;
  /// Not copy-assignable: the object owns cuDNN and device resources.
  CudnnConv& operator=(const CudnnConv&) = delete;

  /// \return the shape this object was built for.
  const CudnnConvShape& shape() const;
  /// \return the arithmetic requested at construction.
  CudnnMath math() const;
  /// \return the output batch size cudnnGetConvolution2dForwardOutputDim
  ///         computed (equals shape().n).
  int out_n() const;
  /// \return the output channel count cudnnGetConvolution2dForwardOutputDim
  ///         computed (equals shape().k).
  int out_k() const;
  /// \return the output height cudnnGetConvolution2dForwardOutputDim computed.
  int out_h() const;
  /// \return the output width cudnnGetConvolution2dForwardOutputDim computed.
  int out_w() const;
  /// \return the number of floats in the input tensor (n * c * h * w).
  std::size_t input_elements() const;
  /// \return the number of floats in the filter tensor (k * c * r * s).
  std::size_t filter_elements() const;
  /// \return the number of floats in the output tensor
  ///         (n * k * out_h() * out_w()).
  std::size_t output_elements() const;

  /// Benchmarks every forward algorithm with cudnnFindConvolutionForwardAlgorithmEx
  /// on the given device buffers and keeps the fastest one that succeeded and
  /// whose math type fits the requested CudnnMath (with CudnnMath::fma, results
  /// that used tensor-op math are rejected). Allocates the workspace the chosen
  /// algorithm needs. May be called again; the new choice replaces the old.
  /// \param d_x device input of input_elements() floats.
  /// \param d_w device filter of filter_elements() floats.
  /// \param d_y device output of output_elements() floats; overwritten.
  /// \return the chosen algorithm's name, e.g. "IMPLICIT_PRECOMP_GEMM".
  /// \throws std::invalid_argument if a pointer is null.
  /// \throws CudnnError if a call fails or no algorithm qualifies.
  std::string choose_algorithm(const float* d_x, const float* d_w, float* d_y);

  /// Enqueues y = conv(x, w) (alpha 1, beta 0) with the chosen algorithm on
  /// \p stream; does not synchronise.
  /// \param d_x device input of input_elements() floats.
  /// \param d_w device filter of filter_elements() floats.
  /// \param d_y device output of output_elements() floats; overwritten.
  /// \param stream CUDA stream to run on (nullptr: the legacy default stream).
  /// \throws std::logic_error if choose_algorithm() has not been called.
  /// \throws std::invalid_argument if a pointer is null.
  /// \throws CudnnError if the launch fails.
  void run(const float* d_x, const float* d_w, float* d_y, cudaStream_t stream) const;

  /// \return the chosen algorithm's name (cuDNN's enum name without
  ///         CUDNN_CONVOLUTION_FWD_ALGO_), or "" before choose_algorithm().
  std::string algorithm_name() const;
  /// \return bytes of device workspace held for the chosen algorithm (0
  ///         before choose_algorithm()).
  std::size_t workspace_bytes() const;
  /// \return the time in milliseconds that cuDNN measured for the chosen
  ///         algorithm during choose_algorithm() (negative before it).
  float find_time_ms() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Reads the version of the cuDNN library loaded at run time
/// (cudnnGetVersion); needs no GPU.
/// \return "major.minor.patch", e.g. "9.14.0".
std::string cudnn_version_string();

}  // namespace convlab
