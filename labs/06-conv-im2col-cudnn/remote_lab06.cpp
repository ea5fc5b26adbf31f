// Lab 06's contract, for both processes of its graders: proxies in the judge, the table of the
// student's functions (and of the grader-owned naive baseline) in the runner. See
// convlab/remote_contract.hpp.
#include "baseline_lab06.hpp"
#include "lab06.hpp"

#if defined(CONVLAB_JUDGE)
#include <convlab/remote.hpp>  // the judge's remote::call, which CONVLAB_REMOTE's proxies call
#endif
#include <convlab/remote_contract.hpp>

#if defined(CONVLAB_HAVE_CUDNN) && !defined(CONVLAB_JUDGE)
#include <convlab/cudnn_conv.hpp>

#include <memory>
#endif

namespace convlab::remote {
// cudnn_info()'s result holds a string: sent field by field.
template <>
struct Codec<lab06::CudnnInfo> {
  static void encode(wire::Writer& w, const lab06::CudnnInfo& i) {
    encode_arg(w, i.algorithm);
    encode_arg(w, std::uint64_t(i.workspace_bytes));
    encode_arg(w, i.out_h);
    encode_arg(w, i.out_w);
  }
  static lab06::CudnnInfo decode(wire::Reader& r, ArgContext& c) {
    lab06::CudnnInfo i;
    i.algorithm = Codec<std::string>::decode(r, c);
    i.workspace_bytes = static_cast<std::size_t>(Codec<std::uint64_t>::decode(r, c));
    i.out_h = Codec<int>::decode(r, c);
    i.out_w = Codec<int>::decode(r, c);
    return i;
  }
};
}  // namespace convlab::remote

namespace convlab::lab06 {
CONVLAB_REMOTE(void, conv_direct,
               (const float* d_x, const float* d_w, float* d_y, const ConvProblem& problem, cudaStream_t stream),
               (d_x, d_w, d_y, problem, stream))
CONVLAB_REMOTE(void, im2col, (const float* d_x, int image, float* d_col, const ConvProblem& problem, cudaStream_t stream),
               (d_x, image, d_col, problem, stream))
CONVLAB_REMOTE(void, gemm, (const float* d_a, const float* d_b, float* d_c, int m, int n, int kd, cudaStream_t stream),
               (d_a, d_b, d_c, m, n, kd, stream))
CONVLAB_REMOTE(void, conv_im2col,
               (const float* d_x, const float* d_w, float* d_col, float* d_y, const ConvProblem& problem,
                cudaStream_t stream),
               (d_x, d_w, d_col, d_y, problem, stream))
CONVLAB_REMOTE(void, conv_implicit_gemm,
               (const float* d_x, const float* d_w, float* d_y, const ConvProblem& problem, cudaStream_t stream),
               (d_x, d_w, d_y, problem, stream))
CONVLAB_REMOTE(void, conv_tensor_core,
               (const float* d_x, const float* d_w, float* d_y, const ConvProblem& problem, cudaStream_t stream),
               (d_x, d_w, d_y, problem, stream))
#ifdef CONVLAB_HAVE_CUDNN
CONVLAB_REMOTE(CudnnState*, cudnn_create, (const ConvProblem& problem, const float* d_x, const float* d_w, float* d_y),
               (problem, d_x, d_w, d_y))
CONVLAB_REMOTE(void, cudnn_forward, (CudnnState* state, const float* d_x, const float* d_w, float* d_y, cudaStream_t stream),
               (state, d_x, d_w, d_y, stream))
CONVLAB_REMOTE(CudnnInfo, cudnn_info, (const CudnnState* state), (state))
#ifdef CONVLAB_JUDGE
// noexcept: a runner that is gone has freed everything with it.
void cudnn_destroy(CudnnState* state) noexcept {
  try {
    remote::call<void>("cudnn_destroy", state);
  } catch (...) {
  }
}
#endif
#endif
namespace baseline {
// The grader-owned baseline, under a "baseline." entry like the harness's own (grader/runner's
// harness_entries.cpp): its kernels are not the student's, and every test's record of the kernels
// the student's code launched leaves them out (remote.cpp, note_kernels).
#if defined(CONVLAB_JUDGE)
void conv_naive(const float* d_x, const float* d_w, float* d_y, const ConvProblem& problem, cudaStream_t stream) {
  remote::call<void>("baseline.conv_naive", d_x, d_w, d_y, problem, stream);
}
#endif
#ifdef CONVLAB_HAVE_CUDNN
// cuDNN with TF32 tensor cores allowed (its fastest algorithm, cudnnFind, through the grader's own
// wrapper grader/device/src/cudnn_conv.cpp): the tensor-core slot's speed baseline, made and run in the
// runner like the naive one.
#if defined(CONVLAB_JUDGE)
CudnnTf32* cudnn_tf32_create(const ConvProblem& problem, const float* d_x, const float* d_w, float* d_y) {
  return remote::call<CudnnTf32*>("baseline.cudnn_tf32_create", problem, d_x, d_w, d_y);
}
void cudnn_tf32_forward(CudnnTf32* state, const float* d_x, const float* d_w, float* d_y, cudaStream_t stream) {
  remote::call<void>("baseline.cudnn_tf32_forward", state, d_x, d_w, d_y, stream);
}
std::string cudnn_tf32_algorithm(const CudnnTf32* state) {
  return remote::call<std::string>("baseline.cudnn_tf32_algorithm", state);
}
void cudnn_tf32_destroy(CudnnTf32* state) noexcept {
  try {
    remote::call<void>("baseline.cudnn_tf32_destroy", state);
  } catch (...) {  // a runner that is gone has freed everything with it
  }
}
#else
struct CudnnTf32 {
  std::unique_ptr<CudnnConv> conv;
};
namespace {
CudnnConvShape shape_of(const ConvProblem& p) {
  CudnnConvShape s;
  s.n = p.n, s.c = p.c, s.h = p.h, s.w = p.w, s.k = p.k, s.r = p.r, s.s = p.s;
  s.pad_h = p.pad_h, s.pad_w = p.pad_w, s.stride_h = p.stride_h, s.stride_w = p.stride_w;
  return s;
}
}  // namespace
CudnnTf32* cudnn_tf32_create(const ConvProblem& problem, const float* d_x, const float* d_w, float* d_y) {
  auto state = std::make_unique<CudnnTf32>();
  state->conv = std::make_unique<CudnnConv>(shape_of(problem), CudnnMath::tf32_allowed);
  state->conv->choose_algorithm(d_x, d_w, d_y);
  return state.release();
}
void cudnn_tf32_forward(CudnnTf32* state, const float* d_x, const float* d_w, float* d_y, cudaStream_t stream) {
  state->conv->run(d_x, d_w, d_y, stream);
}
std::string cudnn_tf32_algorithm(const CudnnTf32* state) { return state->conv->algorithm_name(); }
void cudnn_tf32_destroy(CudnnTf32* state) noexcept { delete state; }
#endif
#endif
}  // namespace baseline
}  // namespace convlab::lab06

void convlab_remote_entries(convlab::remote::Entries& e) {
  using namespace convlab::lab06;
  e.add("conv_direct", &conv_direct);
  e.add("im2col", &im2col);
  e.add("gemm", &gemm);
  e.add("conv_im2col", &conv_im2col);
  e.add("conv_implicit_gemm", &conv_implicit_gemm);
  e.add("conv_tensor_core", &conv_tensor_core);
#ifdef CONVLAB_HAVE_CUDNN
  e.add("cudnn_create", &cudnn_create);
  e.add("cudnn_forward", &cudnn_forward);
  e.add("cudnn_info", &cudnn_info);
  e.add("cudnn_destroy", &cudnn_destroy);
#endif
  e.add("baseline.conv_naive", &convlab::lab06::baseline::conv_naive);  // the grader-owned baselines
#ifdef CONVLAB_HAVE_CUDNN
  e.add("baseline.cudnn_tf32_create", &convlab::lab06::baseline::cudnn_tf32_create);
  e.add("baseline.cudnn_tf32_forward", &convlab::lab06::baseline::cudnn_tf32_forward);
  e.add("baseline.cudnn_tf32_algorithm", &convlab::lab06::baseline::cudnn_tf32_algorithm);
  e.add("baseline.cudnn_tf32_destroy", &convlab::lab06::baseline::cudnn_tf32_destroy);
#endif
}
