// cuDNN forward-convolution baseline: descriptors, algorithm search, launch.
//
// Every cuDNN and CUDA runtime call goes through CONVLAB_CUDNN_CHECK /
// CONVLAB_CUDNN_CUDA_CHECK (which throw convlab::CudnnError) or, in
// destructors, through the *_WARN forms (which report on stderr and never
// throw). Shape validation runs before the first such call so that bad shapes
// are rejected on machines without a GPU.

#include "convlab/cudnn_conv.hpp"

#include <cudnn.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <sstream>
#include <type_traits>
#include <vector>

// The descriptor API used here is marked deprecated in cuDNN 9 (in favour of
// the graph API) but is still shipped and supported. The attributes only fire
// when CUDNN_WARN_DEPRECATED is defined; keep such builds warning-free too.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

namespace convlab {
namespace {

std::string cudnn_status_text(cudnnStatus_t status) {
  std::ostringstream os;
  os << cudnnGetErrorString(status) << " (" << static_cast<int>(status) << ")";
  return os.str();
}

[[noreturn]] void throw_cudnn(cudnnStatus_t status, const char* call, const char* file,
                              int line) {
  std::ostringstream os;
  os << call << " failed at " << file << ":" << line << ": " << cudnn_status_text(status);
  // cuDNN 9 keeps a more specific message for the last failure of this thread.
  char detail[512] = {};
  cudnnGetLastErrorString(detail, sizeof(detail));
  if (detail[0] != '\0') os << " [" << detail << "]";
  throw CudnnError(os.str());
}

void check_cudnn(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status != CUDNN_STATUS_SUCCESS) throw_cudnn(status, call, file, line);
}

void check_cuda(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  std::ostringstream os;
  os << call << " failed at " << file << ":" << line << ": " << cudaGetErrorName(err) << ": "
     << cudaGetErrorString(err);
  throw CudnnError(os.str());
}

void warn_cudnn(cudnnStatus_t status, const char* call, const char* file, int line) noexcept {
  if (status != CUDNN_STATUS_SUCCESS) {
    std::fprintf(stderr, "convlab: %s failed at %s:%d: %s\n", call, file, line,
                 cudnnGetErrorString(status));
  }
}

void warn_cuda(cudaError_t err, const char* call, const char* file, int line) noexcept {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "convlab: %s failed at %s:%d: %s\n", call, file, line,
                 cudaGetErrorString(err));
  }
}

}  // namespace
}  // namespace convlab

#define CONVLAB_CUDNN_CHECK(call) ::convlab::check_cudnn((call), #call, __FILE__, __LINE__)
#define CONVLAB_CUDNN_CUDA_CHECK(call) ::convlab::check_cuda((call), #call, __FILE__, __LINE__)
#define CONVLAB_CUDNN_WARN(call) ::convlab::warn_cudnn((call), #call, __FILE__, __LINE__)
#define CONVLAB_CUDNN_CUDA_WARN(call) ::convlab::warn_cuda((call), #call, __FILE__, __LINE__)

namespace convlab {
namespace {

// Find...Ex benchmarks every algorithm inside one workspace; an algorithm that
// wants more than this is skipped rather than letting a huge FFT workspace
// crowd out the rest of the GPU.
constexpr std::size_t kFindWorkspaceCap = std::size_t{1} << 30;  // 1 GiB

struct HandleDeleter {
  void operator()(cudnnHandle_t h) const noexcept { CONVLAB_CUDNN_WARN(cudnnDestroy(h)); }
};
struct TensorDescDeleter {
  void operator()(cudnnTensorDescriptor_t d) const noexcept {
    CONVLAB_CUDNN_WARN(cudnnDestroyTensorDescriptor(d));
  }
};
struct FilterDescDeleter {
  void operator()(cudnnFilterDescriptor_t d) const noexcept {
    CONVLAB_CUDNN_WARN(cudnnDestroyFilterDescriptor(d));
  }
};
struct ConvDescDeleter {
  void operator()(cudnnConvolutionDescriptor_t d) const noexcept {
    CONVLAB_CUDNN_WARN(cudnnDestroyConvolutionDescriptor(d));
  }
};
struct CudaFreeDeleter {
  void operator()(void* p) const noexcept { CONVLAB_CUDNN_CUDA_WARN(cudaFree(p)); }
};

using HandlePtr = std::unique_ptr<std::remove_pointer_t<cudnnHandle_t>, HandleDeleter>;
using TensorDescPtr =
    std::unique_ptr<std::remove_pointer_t<cudnnTensorDescriptor_t>, TensorDescDeleter>;
using FilterDescPtr =
    std::unique_ptr<std::remove_pointer_t<cudnnFilterDescriptor_t>, FilterDescDeleter>;
using ConvDescPtr =
    std::unique_ptr<std::remove_pointer_t<cudnnConvolutionDescriptor_t>, ConvDescDeleter>;
using DeviceBuffer = std::unique_ptr<void, CudaFreeDeleter>;

DeviceBuffer device_alloc(std::size_t bytes) {
  if (bytes == 0) return DeviceBuffer{};
  void* p = nullptr;
  CONVLAB_CUDNN_CUDA_CHECK(cudaMalloc(&p, bytes));
  return DeviceBuffer{p};
}

[[noreturn]] void bad_field(const std::string& field, const std::string& why) {
  throw std::invalid_argument("convlab::CudnnConv: shape." + field + " " + why);
}

void require_positive(const char* field, int value) {
  if (value <= 0) bad_field(field, "must be positive, got " + std::to_string(value));
}

void require_fits_int(const char* what, long long elements) {
  if (elements > INT_MAX) {
    throw std::invalid_argument(std::string("convlab::CudnnConv: ") + what + " = " +
                                std::to_string(elements) +
                                " elements does not fit in int, which cuDNN's 4-D "
                                "descriptors need");
  }
}

// Runs before any CUDA or cuDNN call: the CPU-only test depends on that.
const CudnnConvShape& validated(const CudnnConvShape& sh) {
  require_positive("n", sh.n);
  require_positive("c", sh.c);
  require_positive("h", sh.h);
  require_positive("w", sh.w);
  require_positive("k", sh.k);
  require_positive("r", sh.r);
  require_positive("s", sh.s);
  require_positive("stride_h", sh.stride_h);
  require_positive("stride_w", sh.stride_w);
  if (sh.pad_h < 0) bad_field("pad_h", "must be non-negative, got " + std::to_string(sh.pad_h));
  if (sh.pad_w < 0) bad_field("pad_w", "must be non-negative, got " + std::to_string(sh.pad_w));
  const long long padded_h = static_cast<long long>(sh.h) + 2LL * sh.pad_h;
  const long long padded_w = static_cast<long long>(sh.w) + 2LL * sh.pad_w;
  if (sh.r > padded_h) {
    bad_field("r", "= " + std::to_string(sh.r) + " is larger than the padded input height h + " +
                       "2*pad_h = " + std::to_string(padded_h));
  }
  if (sh.s > padded_w) {
    bad_field("s", "= " + std::to_string(sh.s) + " is larger than the padded input width w + " +
                       "2*pad_w = " + std::to_string(padded_w));
  }
  const long long n = sh.n, c = sh.c, k = sh.k;
  require_fits_int("shape.n*c*h*w", n * c * sh.h * sh.w);
  require_fits_int("shape.k*c*r*s", k * c * sh.r * sh.s);
  require_fits_int("padded input n*c*(h+2*pad_h)*(w+2*pad_w)", n * c * padded_h * padded_w);
  return sh;
}

const char* algo_name(cudnnConvolutionFwdAlgo_t algo) {
  switch (algo) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    case CUDNN_CONVOLUTION_FWD_ALGO_COUNT: break;
  }
  return "UNKNOWN";
}

const char* math_name(cudnnMathType_t math) {
  switch (math) {
    case CUDNN_DEFAULT_MATH: return "DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH: return "FMA_MATH";
  }
  return "UNKNOWN_MATH";
}

bool uses_tensor_ops(cudnnMathType_t math) {
  return math == CUDNN_TENSOR_OP_MATH || math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

// cuDNN 9 status codes are category + detail (e.g. 3007 is one kind of
// NOT_SUPPORTED), so compare categories, not exact values.
bool means_algo_unavailable(cudnnStatus_t status) {
  const int category = CUDNN_STATUS_CATEGORY(static_cast<int>(status));
  return category == CUDNN_STATUS_NOT_SUPPORTED || category == CUDNN_STATUS_BAD_PARAM;
}

}  // namespace

struct CudnnConv::Impl {
  CudnnConvShape shape;
  CudnnMath math = CudnnMath::fma;
  HandlePtr handle;
  TensorDescPtr x_desc;
  FilterDescPtr w_desc;
  ConvDescPtr conv_desc;
  TensorDescPtr y_desc;
  int out_n = 0, out_k = 0, out_h = 0, out_w = 0;

  bool chosen = false;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  float find_time_ms = -1.0f;
  DeviceBuffer workspace;
  std::size_t workspace_bytes = 0;

  std::size_t find_workspace_bytes() const;
};

CudnnConv::CudnnConv(const CudnnConvShape& shape, CudnnMath math)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.shape = validated(shape);
  m.math = math;

  // NCHW tensors and KCRS filters, or NHWC and KRSC (the descriptors take the sizes in N C H W and
  // K C R S order either way).
  const cudnnTensorFormat_t layout = shape.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  cudnnHandle_t handle = nullptr;
  CONVLAB_CUDNN_CHECK(cudnnCreate(&handle));
  m.handle.reset(handle);

  cudnnTensorDescriptor_t x_desc = nullptr;
  CONVLAB_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_desc));
  m.x_desc.reset(x_desc);
  CONVLAB_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x_desc, layout, CUDNN_DATA_FLOAT,
                                                 shape.n, shape.c, shape.h, shape.w));

  cudnnFilterDescriptor_t w_desc = nullptr;
  CONVLAB_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_desc));
  m.w_desc.reset(w_desc);
  CONVLAB_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_desc, CUDNN_DATA_FLOAT, layout,
                                                 shape.k, shape.c, shape.r, shape.s));

  cudnnConvolutionDescriptor_t conv_desc = nullptr;
  CONVLAB_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv_desc));
  m.conv_desc.reset(conv_desc);
  CONVLAB_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
      conv_desc, shape.pad_h, shape.pad_w, shape.stride_h, shape.stride_w, /*dilation_h=*/1,
      /*dilation_w=*/1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CONVLAB_CUDNN_CHECK(cudnnSetConvolutionMathType(
      conv_desc, math == CudnnMath::fma ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH));

  CONVLAB_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv_desc, x_desc, w_desc, &m.out_n,
                                                            &m.out_k, &m.out_h, &m.out_w));
  if (m.out_n != shape.n || m.out_k != shape.k || m.out_h <= 0 || m.out_w <= 0) {
    std::ostringstream os;
    os << "cudnnGetConvolution2dForwardOutputDim returned an unexpected output shape " << m.out_n
       << "x" << m.out_k << "x" << m.out_h << "x" << m.out_w << " at " << __FILE__ << ":"
       << __LINE__;
    throw CudnnError(os.str());
  }

  cudnnTensorDescriptor_t y_desc = nullptr;
  CONVLAB_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_desc));
  m.y_desc.reset(y_desc);
  CONVLAB_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y_desc, layout, CUDNN_DATA_FLOAT,
                                                 m.out_n, m.out_k, m.out_h, m.out_w));
}

// Members are destroyed in reverse order: workspace, descriptors, then handle.
CudnnConv::~CudnnConv() = default;

const CudnnConvShape& CudnnConv::shape() const { return impl_->shape; }
CudnnMath CudnnConv::math() const { return impl_->math; }
int CudnnConv::out_n() const { return impl_->out_n; }
int CudnnConv::out_k() const { return impl_->out_k; }
int CudnnConv::out_h() const { return impl_->out_h; }
int CudnnConv::out_w() const { return impl_->out_w; }

std::size_t CudnnConv::input_elements() const {
  const CudnnConvShape& s = impl_->shape;
  return std::size_t(s.n) * std::size_t(s.c) * std::size_t(s.h) * std::size_t(s.w);
}

std::size_t CudnnConv::filter_elements() const {
  const CudnnConvShape& s = impl_->shape;
  return std::size_t(s.k) * std::size_t(s.c) * std::size_t(s.r) * std::size_t(s.s);
}

std::size_t CudnnConv::output_elements() const {
  const Impl& m = *impl_;
  return std::size_t(m.out_n) * std::size_t(m.out_k) * std::size_t(m.out_h) *
         std::size_t(m.out_w);
}

std::size_t CudnnConv::Impl::find_workspace_bytes() const {
  std::size_t wanted = 0;
  for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++a) {
    std::size_t bytes = 0;
    const cudnnStatus_t status = cudnnGetConvolutionForwardWorkspaceSize(
        handle.get(), x_desc.get(), w_desc.get(), conv_desc.get(), y_desc.get(),
        static_cast<cudnnConvolutionFwdAlgo_t>(a), &bytes);
    if (status == CUDNN_STATUS_SUCCESS) {
      wanted = std::max(wanted, bytes);
    } else if (!means_algo_unavailable(status)) {
      // An algorithm that does not apply to this shape is expected; anything
      // else (out of memory, internal error) is a real failure.
      throw_cudnn(status, "cudnnGetConvolutionForwardWorkspaceSize", __FILE__, __LINE__);
    }
  }
  std::size_t free_bytes = 0, total_bytes = 0;
  CONVLAB_CUDNN_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return std::min({wanted, kFindWorkspaceCap, free_bytes / 2});
}

std::string CudnnConv::choose_algorithm(const float* d_x, const float* d_w, float* d_y) {
  if (d_x == nullptr || d_w == nullptr || d_y == nullptr) {
    throw std::invalid_argument("convlab::CudnnConv::choose_algorithm: null device pointer");
  }
  Impl& m = *impl_;
  m.chosen = false;
  m.workspace.reset();
  m.workspace_bytes = 0;
  m.find_time_ms = -1.0f;

  int max_algos = 0;
  CONVLAB_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(m.handle.get(), &max_algos));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max_algos, 1)));
  int returned = 0;
  {
    const std::size_t find_bytes = m.find_workspace_bytes();
    DeviceBuffer find_workspace = device_alloc(find_bytes);
    // Find...Ex times on the handle's stream; start from an idle device so
    // that pending work on other streams does not land in its timings.
    CONVLAB_CUDNN_CUDA_CHECK(cudaDeviceSynchronize());
    CONVLAB_CUDNN_CHECK(cudnnSetStream(m.handle.get(), nullptr));
    CONVLAB_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(
        m.handle.get(), m.x_desc.get(), d_x, m.w_desc.get(), d_w, m.conv_desc.get(),
        m.y_desc.get(), d_y, static_cast<int>(perf.size()), &returned, perf.data(),
        find_workspace.get(), find_bytes));
    CONVLAB_CUDNN_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // Each entry carries its own status: an algorithm that does not support the
  // shape, or needed more workspace than was offered, is just skipped.
  const cudnnConvolutionFwdAlgoPerf_t* best = nullptr;
  std::ostringstream rejected;
  for (int i = 0; i < returned; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t& p = perf[static_cast<std::size_t>(i)];
    if (p.status != CUDNN_STATUS_SUCCESS) {
      rejected << " " << algo_name(p.algo) << ": " << cudnn_status_text(p.status) << ";";
      continue;
    }
    if (m.math == CudnnMath::fma && uses_tensor_ops(p.mathType)) {
      rejected << " " << algo_name(p.algo) << ": " << math_name(p.mathType)
               << " not allowed with CudnnMath::fma;";
      continue;
    }
    if (p.time < 0.0f) {
      rejected << " " << algo_name(p.algo) << ": no time reported;";
      continue;
    }
    if (best == nullptr || p.time < best->time) best = &p;
  }
  if (best == nullptr) {
    std::ostringstream os;
    os << "cudnnFindConvolutionForwardAlgorithmEx at " << __FILE__ << ":" << __LINE__
       << " found no usable forward algorithm among " << returned << " results:" << rejected.str();
    throw CudnnError(os.str());
  }

  // cuDNN wants the descriptor's math type to match the result being run. With
  // fma the descriptor stays FMA_MATH: a DEFAULT_MATH result run under
  // DEFAULT_MATH could pick a TF32 kernel.
  if (m.math == CudnnMath::tf32_allowed) {
    CONVLAB_CUDNN_CHECK(cudnnSetConvolutionMathType(m.conv_desc.get(), best->mathType));
  }
  std::size_t run_bytes = 0;
  CONVLAB_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(
      m.handle.get(), m.x_desc.get(), m.w_desc.get(), m.conv_desc.get(), m.y_desc.get(),
      best->algo, &run_bytes));
  run_bytes = std::max(run_bytes, best->memory);
  m.workspace = device_alloc(run_bytes);
  m.workspace_bytes = run_bytes;
  m.algo = best->algo;
  m.find_time_ms = best->time;
  m.chosen = true;
  return algo_name(m.algo);
}

void CudnnConv::run(const float* d_x, const float* d_w, float* d_y, cudaStream_t stream) const {
  const Impl& m = *impl_;
  if (!m.chosen) {
    throw std::logic_error(
        "convlab::CudnnConv::run called before choose_algorithm(): no algorithm has been chosen");
  }
  if (d_x == nullptr || d_w == nullptr || d_y == nullptr) {
    throw std::invalid_argument("convlab::CudnnConv::run: null device pointer");
  }
  const float alpha = 1.0f;
  const float beta = 0.0f;
  CONVLAB_CUDNN_CHECK(cudnnSetStream(m.handle.get(), stream));
  CONVLAB_CUDNN_CHECK(cudnnConvolutionForward(m.handle.get(), &alpha, m.x_desc.get(), d_x,
                                              m.w_desc.get(), d_w, m.conv_desc.get(), m.algo,
                                              m.workspace.get(), m.workspace_bytes, &beta,
                                              m.y_desc.get(), d_y));
}

std::string CudnnConv::algorithm_name() const {
  return impl_->chosen ? std::string(algo_name(impl_->algo)) : std::string();
}

std::size_t CudnnConv::workspace_bytes() const { return impl_->workspace_bytes; }

float CudnnConv::find_time_ms() const { return impl_->find_time_ms; }

std::string cudnn_version_string() {
  // cuDNN 9 encodes major*10000 + minor*100 + patch; cuDNN 8 used major*1000.
  const std::size_t v = cudnnGetVersion();
  const std::size_t major = v >= 90000 ? v / 10000 : v / 1000;
  const std::size_t minor = v >= 90000 ? (v % 10000) / 100 : (v % 1000) / 100;
  const std::size_t patch = v % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace convlab

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
