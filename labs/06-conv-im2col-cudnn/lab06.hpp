/// @file lab06.hpp
/// @brief Lab 06's contract: the multi-channel convolution of a CNN layer, five ways.
/// The student implements
/// `starter_code/06-conv-im2col-cudnn/conv_direct.cu` (one thread per output, then a kernel
/// specialised for few channels), `conv_im2col.cu` (unfold, then a tiled GEMM),
/// `conv_implicit_gemm.cu` (the GEMM's tiles gathered straight from the input),
/// `conv_tensor_core.cu` (the implicit GEMM on tensor cores, TF32) and `conv_cudnn.cu` (the same
/// layer through cuDNN). Do not change this file: the graders
/// call exactly these functions.
///
/// The layer: an NCHW input of N images with C channels of H x W, K filters of C x R x S
/// (KCRS), a stride, zero padding; the NKPQ output is the cross-correlation
/// \f[ y_{n,k,p,q} = \sum_{c=0}^{C-1}\sum_{r=0}^{R-1}\sum_{s=0}^{S-1}
///     x_{n,\,c,\; p\,\sigma_h - \pi_h + r,\; q\,\sigma_w - \pi_w + s}\; w_{k,c,r,s} \f]
/// with \f$x = 0\f$ outside the image, \f$\sigma\f$ the stride and \f$\pi\f$ the padding
/// (rows above and below, columns left and right: the padding is symmetric), and
/// \f[ P = \left\lfloor \frac{H + 2\pi_h - R}{\sigma_h} \right\rfloor + 1, \qquad
///     Q = \left\lfloor \frac{W + 2\pi_w - S}{\sigma_w} \right\rfloor + 1. \f]
/// All pointers are device pointers, FP32. Launchers enqueue their work on `stream` and
/// return without synchronising; they throw std::invalid_argument on a bad problem before
/// touching the GPU.
#pragma once

#include <convlab/contract.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace convlab::lab06 {

/// One convolution layer, padding already resolved (make_problem() turns VALID and SAME
/// into pads). Output size: out_h() x out_w().
struct ConvProblem {
  int n = 1;         ///< images in the batch (N)
  int c = 1;         ///< input channels (C)
  int h = 1;         ///< input height (H)
  int w = 1;         ///< input width (W)
  int k = 1;         ///< filters = output channels (K)
  int r = 1;         ///< filter height (R)
  int s = 1;         ///< filter width (S)
  int stride_h = 1;  ///< vertical stride
  int stride_w = 1;  ///< horizontal stride
  int pad_h = 0;     ///< zero rows added above and below
  int pad_w = 0;     ///< zero columns added left and right

  /// Output height P.
  int out_h() const { return (h + 2 * pad_h - r) / stride_h + 1; }
  /// Output width Q.
  int out_w() const { return (w + 2 * pad_w - s) / stride_w + 1; }
  /// Floats in the input, N C H W.
  std::size_t input_elements() const { return std::size_t(n) * c * h * w; }
  /// Floats in the filters, K C R S.
  std::size_t filter_elements() const { return std::size_t(k) * c * r * s; }
  /// Floats in the output, N K P Q.
  std::size_t output_elements() const { return std::size_t(n) * k * out_h() * out_w(); }
  /// Multiply-adds: N K P Q C R S.
  double macs() const { return double(output_elements()) * c * r * s; }
};

/// How the padding is chosen.
enum class Padding {
  explicit_pads,  ///< the pads given (pad_h, pad_w)
  valid,          ///< no padding: the window stays inside the image
  /// Output about input / stride: out = ceil(in / stride), pad = ((out - 1) stride + filter -
  /// in) / 2 rounded down (never negative), and the output recomputed from that pad
  /// (floor((in + 2 pad - filter) / stride) + 1), which is one smaller than ceil(in / stride)
  /// when the total padding is odd. Symmetric pads, as cuDNN takes them.
  same,
};

/// The largest sizes the contract accepts (keep indices in int and the grid in range).
inline constexpr int kMaxFilter = 32;      ///< R and S at most
inline constexpr int kMaxStride = 16;      ///< stride at most
inline constexpr long long kMaxElements = 1LL << 30;  ///< floats in any one tensor

/// The pad of one dimension for SAME padding (see Padding::same).
/// @param input   the input's size in this dimension
/// @param filter  the filter's size in this dimension
/// @param stride  the stride in this dimension (>= 1)
/// @return the pad on each side
inline int same_pad(int input, int filter, int stride) {
  const int out = (input + stride - 1) / stride;
  const int total = (out - 1) * stride + filter - input;
  return total > 0 ? total / 2 : 0;
}

/// Throws std::invalid_argument, naming the field and the rule, unless `p` is a layer the
/// lab accepts: every size >= 1, R and S <= kMaxFilter, 1 <= stride <= kMaxStride,
/// 0 <= pad < filter (a window entirely inside the padding computes nothing), a filter that
/// fits the padded input (H + 2 pad_h >= R, W + 2 pad_w >= S), tensors of at most
/// kMaxElements floats.
/// @param p  the layer
inline void validate(const ConvProblem& p) {
  const auto fail = [](const std::string& m) { throw std::invalid_argument("lab06: " + m); };
  const auto num = [](long long v) { return std::to_string(v); };
  if (p.n < 1 || p.c < 1 || p.h < 1 || p.w < 1 || p.k < 1 || p.r < 1 || p.s < 1)
    fail("every size must be >= 1, got N " + num(p.n) + " C " + num(p.c) + " H " + num(p.h) + " W " + num(p.w) +
         " K " + num(p.k) + " R " + num(p.r) + " S " + num(p.s));
  if (p.r > kMaxFilter || p.s > kMaxFilter)
    fail("the filter must be at most " + num(kMaxFilter) + " x " + num(kMaxFilter) + ", got " + num(p.r) + " x " +
         num(p.s));
  if (p.stride_h < 1 || p.stride_w < 1 || p.stride_h > kMaxStride || p.stride_w > kMaxStride)
    fail("the stride must be in [1, " + num(kMaxStride) + "], got " + num(p.stride_h) + " x " + num(p.stride_w));
  if (p.pad_h < 0 || p.pad_w < 0) fail("the padding must be >= 0, got " + num(p.pad_h) + " x " + num(p.pad_w));
  if (p.pad_h >= p.r || p.pad_w >= p.s)
    fail("the padding must be smaller than the filter (pad_h < R, pad_w < S), got pad " + num(p.pad_h) + " x " +
         num(p.pad_w) + " for a " + num(p.r) + " x " + num(p.s) + " filter");
  if (p.h + 2 * p.pad_h < p.r || p.w + 2 * p.pad_w < p.s)
    fail("the filter (" + num(p.r) + " x " + num(p.s) + ") is larger than the padded input (" +
         num(p.h + 2 * p.pad_h) + " x " + num(p.w + 2 * p.pad_w) + ")");
  const long long in = 1LL * p.n * p.c * p.h * p.w, f = 1LL * p.k * p.c * p.r * p.s,
                  out = 1LL * p.n * p.k * p.out_h() * p.out_w();
  if (in > kMaxElements || f > kMaxElements || out > kMaxElements)
    fail("a tensor holds more than 2^30 floats (input " + num(in) + ", filters " + num(f) + ", output " + num(out) +
         ")");
}

/// The grader-side shape function: a layer from its sizes and a padding mode (pads are
/// read only for Padding::explicit_pads). Throws std::invalid_argument as validate() does.
/// @param n, c, h, w         the input: N images of C channels of H x W
/// @param k, r, s            K filters of C x R x S
/// @param stride_h, stride_w the strides
/// @param mode               how the pads are chosen
/// @param pad_h, pad_w       the pads, for Padding::explicit_pads only
/// @return the layer, pads resolved
inline ConvProblem make_problem(int n, int c, int h, int w, int k, int r, int s, int stride_h, int stride_w,
                                Padding mode, int pad_h = 0, int pad_w = 0) {
  ConvProblem p{n, c, h, w, k, r, s, stride_h, stride_w, 0, 0};
  if (stride_h < 1 || stride_w < 1)
    throw std::invalid_argument("lab06: the stride must be >= 1, got " + std::to_string(stride_h) + " x " +
                                std::to_string(stride_w));
  if (mode == Padding::explicit_pads) {
    p.pad_h = pad_h;
    p.pad_w = pad_w;
  } else if (mode == Padding::same) {
    p.pad_h = same_pad(h, r, stride_h);
    p.pad_w = same_pad(w, s, stride_w);
  }
  validate(p);
  return p;
}

// --- conv_direct.cu ---------------------------------------------------------------------------

/// Direct (sliding-window) convolution: y = conv(x, w). The reference uses one thread per
/// output for the general case and a kernel for few channels and filters (K C R S small:
/// filters in constant memory, several outputs per thread).
/// @param d_x      N C H W inputs
/// @param d_w      K C R S filter taps
/// @param d_y      N K P Q outputs
/// @param problem  the layer
/// @param stream   the stream to launch on
void conv_direct(const float* d_x, const float* d_w, float* d_y, const ConvProblem& problem, cudaStream_t stream);

// --- conv_im2col.cu ---------------------------------------------------------------------------

/// Rows of one image's column matrix: C R S (row c R S + r S + s holds the tap (c, r, s)).
/// @param p  the layer
inline std::size_t im2col_rows(const ConvProblem& p) { return std::size_t(p.c) * p.r * p.s; }
/// Columns of one image's column matrix: P Q (column p Q + q holds the window of output (p, q)).
/// @param p  the layer
inline std::size_t im2col_cols(const ConvProblem& p) { return std::size_t(p.out_h()) * p.out_w(); }
/// Floats of the workspace conv_im2col() needs: one image's column matrix.
/// @param p  the layer
inline std::size_t im2col_workspace_floats(const ConvProblem& p) { return im2col_rows(p) * im2col_cols(p); }

/// Unfolds image `image` of `d_x` into its column matrix `d_col` (row-major,
/// im2col_rows() x im2col_cols()): col[(c R + r) S + s][p Q + q] = x[image][c][p stride_h -
/// pad_h + r][q stride_w - pad_w + s], 0 in the padding.
/// @param d_x      N C H W inputs
/// @param image    which image to unfold, 0 <= image < N
/// @param d_col    im2col_workspace_floats() floats: the column matrix
/// @param problem  the layer
/// @param stream   the stream to launch on
void im2col(const float* d_x, int image, float* d_col, const ConvProblem& problem, cudaStream_t stream);

/// Your tiled shared-memory SGEMM, row-major: C (m x n) = A (m x kd) B (kd x n). Any sizes
/// >= 1, not only tile multiples.
/// @param d_a     m x kd floats
/// @param d_b     kd x n floats
/// @param d_c     m x n floats, overwritten
/// @param m, n, kd the sizes
/// @param stream  the stream to launch on
void gemm(const float* d_a, const float* d_b, float* d_c, int m, int n, int kd, cudaStream_t stream);

/// im2col + GEMM: for each image, im2col() into `d_col` (im2col_workspace_floats() floats,
/// owned by the caller), then y[image] (K x PQ) = w (K x CRS) col (CRS x PQ) with gemm().
/// @param d_x      N C H W inputs
/// @param d_w      K C R S filter taps
/// @param d_col    the workspace: im2col_workspace_floats() floats
/// @param d_y      N K P Q outputs
/// @param problem  the layer
/// @param stream   the stream to launch on
void conv_im2col(const float* d_x, const float* d_w, float* d_col, float* d_y, const ConvProblem& problem,
                 cudaStream_t stream);

// --- conv_implicit_gemm.cu --------------------------------------------------------------------

/// Implicit GEMM: the GEMM of conv_im2col() over the whole batch (M = K, N = N P Q, K = C R S),
/// with each tile of the column matrix gathered straight from x with the im2col index
/// mapping: no column matrix in memory.
/// @param d_x      N C H W inputs
/// @param d_w      K C R S filter taps
/// @param d_y      N K P Q outputs
/// @param problem  the layer
/// @param stream   the stream to launch on
void conv_implicit_gemm(const float* d_x, const float* d_w, float* d_y, const ConvProblem& problem,
                        cudaStream_t stream);

// --- conv_tensor_core.cu ----------------------------------------------------------------------

/// Implicit GEMM on tensor cores: the GEMM of conv_implicit_gemm() with its products on the
/// tensor cores, TF32 inputs and FP32 accumulation (the warp matrix API, nvcuda::wmma, m16n16k8
/// fragments of precision::tf32; or mma.sync). Laid out for the fragments: M = N P Q output pixels,
/// N = K filters, K_gemm = C R S taps; no column matrix in memory. TF32 keeps 10 of FP32's 23
/// mantissa bits: each output may differ from the exact sum by the TF32 bound (the handout derives
/// it; the graders compute it per output), not only by FP32's rounding. Needs a GPU of compute
/// capability 8.0 or newer: throws std::runtime_error on an older one.
/// @param d_x      N C H W inputs
/// @param d_w      K C R S filter taps
/// @param d_y      N K P Q outputs
/// @param problem  the layer
/// @param stream   the stream to launch on
void conv_tensor_core(const float* d_x, const float* d_w, float* d_y, const ConvProblem& problem, cudaStream_t stream);

// --- conv_cudnn.cu ----------------------------------------------------------------------------
// Compiled only where cuDNN was found (CONVLAB_HAVE_CUDNN): never on the CPU backend.

/// The cuDNN objects of one layer, defined by the student in conv_cudnn.cu.
struct CudnnState;

/// What cudnn_create() chose.
struct CudnnInfo {
  std::string algorithm;      ///< cuDNN's name without CUDNN_CONVOLUTION_FWD_ALGO_, e.g. "IMPLICIT_PRECOMP_GEMM"
  std::size_t workspace_bytes = 0;  ///< the workspace held for it
  int out_h = 0;              ///< P, from cudnnGetConvolution2dForwardOutputDim
  int out_w = 0;              ///< Q, from cudnnGetConvolution2dForwardOutputDim
};

/// Creates the handle and the tensor, filter and convolution descriptors (FP32, NCHW,
/// cross-correlation, CUDNN_FMA_MATH), takes the output size from cuDNN, chooses the fastest
/// algorithm with cudnnFindConvolutionForwardAlgorithmEx on the given buffers (d_y is
/// overwritten) and allocates its workspace. Every status is checked: a failure throws
/// std::runtime_error naming the call.
/// @param problem  the layer
/// @param d_x      N C H W inputs
/// @param d_w      K C R S filter taps
/// @param d_y      N K P Q outputs (overwritten while cuDNN times its algorithms)
/// @return the state, to free with cudnn_destroy()
CudnnState* cudnn_create(const ConvProblem& problem, const float* d_x, const float* d_w, float* d_y);
/// y = conv(x, w) with the chosen algorithm, on `stream`.
/// @param state    from cudnn_create()
/// @param d_x      N C H W inputs
/// @param d_w      K C R S filter taps
/// @param d_y      N K P Q outputs
/// @param stream   the stream to run on
void cudnn_forward(CudnnState* state, const float* d_x, const float* d_w, float* d_y, cudaStream_t stream);
/// What was chosen.
/// @param state  from cudnn_create()
/// @return the algorithm, its workspace and the output size
CudnnInfo cudnn_info(const CudnnState* state);
/// Frees everything; never throws.
/// @param state  from cudnn_create(), or null
void cudnn_destroy(CudnnState* state) noexcept;

}  // namespace convlab::lab06
