// Lab 06's speed and technique checks (moved from test_lab06.cpp; the cases and the registration
// are there, the shared types in test_lab06.hpp).
#include "test_lab06.hpp"

#include "baseline_lab06.hpp"
#include "lab06.hpp"
#include "lab06_golden.hpp"
#include "technique_lab06.hpp"

#include <convlab/compare.hpp>
#include <convlab/device_buffer.hpp>
#include <convlab/evidence.hpp>
#include <convlab/gpu.hpp>
#include <convlab/random.hpp>
#include <convlab/record.hpp>
#include <convlab/remote.hpp>
#include <convlab/speed_check.hpp>
#include <convlab/technique.hpp>
#include <convlab/testbed.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace lab06_tests;
using lab06::tf32_scale;

// --- speed ----------------------------------------------------------------------------------------

// The tolerance of the check of every timed output against the baseline's output for the same
// fresh input. The speed grader refills x with uniform floats in [-1, 1) before each pair, so
// |x| <= 1, and output y[n][k][p][q] is a float32 dot product of at most m = C R S terms x w_k (the
// padding adds exact zeros) with sum |x w| <= sum_{c,r,s} |w[k][c][r][s]| =: W_k. Computed in any
// order (split into slices and added with atomics included), each kernel's result lies within
// gamma_{m+1} W_k of the exact value, the bound the correctness graders allow (tolerance_for()), so
// the student's and the baseline's differ by at most twice that. The check takes one tolerance for
// all outputs: the bound of the filter with the largest W_k. It stays far below what a result kept
// from another input is off by: the difference of two outputs of independent inputs has a standard
// deviation of sqrt(2/3 sum w^2) >= sqrt(2/3) W_k / sqrt(m), at least 170 times 2 gamma_{m+1} W_k on
// the timed layers (m = 216, 576 and 1152).
// TF32 (the tensor-core slot): the bound of a TF32 result is tf32_scale(m) times FP32's; against
// the naive baseline the check allows the TF32 and the FP32 bounds, against cuDNN with TF32 two TF32
// bounds, about 2^-8 W_k: still 6 times under that spread on the timed layers (m = 576, 1152).
double timed_tolerance(const Layer& L, Precision candidate, Precision baseline = Precision::fp32) {
  const std::size_t taps = lab06::im2col_rows(L.p);
  double largest = 0;
  for (int k = 0; k < L.p.k; ++k) {
    double sum = 0;
    for (std::size_t i = 0; i < taps; ++i) sum += std::fabs(double(L.w[std::size_t(k) * taps + i]));
    largest = std::max(largest, sum);
  }
  const double bound = tolerance_for(largest, int(taps));
  const auto scale = [&](Precision p) { return p == Precision::tf32 ? tf32_scale(int(taps)) : 1.0; };
  return bound * (scale(candidate) + scale(baseline));
}

}  // namespace

namespace lab06_tests {

void check_layer_speed(const ConvFn& candidate, const Case& cs, const GraderSpec& grader,
                       Precision precision, Against against) {
  Layer L(cs.problem(), current_seed(), Inputs::device);
  // A launcher that fails, or computes elsewhere than on the device, is not timed. Whether its
  // outputs are right is checked against the baseline's after every timed run (the first round's
  // first run included): a wrong kernel earns no speed-up.
  L.dy.poison();
  if (const std::string err = run_once(candidate, L, L.dy.data()); !err.empty()) {
    ADD_FAILURE() << "speed not measured: " << err << "\nlayer: " << shape_text(L.p);
    return;
  }
  const ConvProblem p = L.p;
  DeviceBuffer<float> base_out(p.output_elements());
  SpeedPolicy policy;
  policy.threshold = grader.threshold;
  SpeedSetup setup;
  setup.baseline = [&](cudaStream_t s) { lab06::baseline::conv_naive(L.dx.data(), L.dw.data(), base_out.get(), p, s); };
  std::string baseline_name = "the naive direct baseline (one thread per output)";
  double tolerance = timed_tolerance(L, precision);
#ifdef CONVLAB_HAVE_CUDNN
  struct CudnnBaseline {
    lab06::baseline::CudnnTf32* state = nullptr;
    ~CudnnBaseline() {
      if (state) lab06::baseline::cudnn_tf32_destroy(state);
    }
  } cudnn;
  if (against == Against::cudnn_tf32) {
    try {
      cudnn.state = lab06::baseline::cudnn_tf32_create(p, L.dx.data(), L.dw.data(), base_out.get());
    } catch (const std::exception& e) {
      ADD_FAILURE() << "speed not measured: the baseline, cuDNN with TF32 allowed, could not be set up on this GPU "
                       "(the grader's fault, not yours: tell your instructor): "
                    << e.what() << "\nlayer: " << shape_text(L.p);
      return;
    }
    setup.baseline = [&](cudaStream_t s) {
      lab06::baseline::cudnn_tf32_forward(cudnn.state, L.dx.data(), L.dw.data(), base_out.get(), s);
    };
    baseline_name = "cuDNN with TF32 tensor cores allowed (" + lab06::baseline::cudnn_tf32_algorithm(cudnn.state) + ")";
    tolerance = timed_tolerance(L, precision, Precision::tf32);
  }
#else
  if (against == Against::cudnn_tf32) {
    GTEST_SKIP() << "this speed grader times the tensor-core path against cuDNN, which was not found when this build "
                    "was configured";
  }
#endif
  setup.candidate = [&](cudaStream_t s) { candidate(L.dx.data(), L.dw.data(), L.dy.data(), p, s); };
  // The output is poisoned before every timed run, outside the timed region.
  setup.prepare = [&](cudaStream_t s) {
    CONVLAB_CUDA_CHECK(cudaMemsetAsync(L.dy.data(), 0xFF, p.output_elements() * sizeof(float), s));
  };
  setup.stream = L.stream.s;
  // A fresh input x before every pair (the filters stay), and every timed output checked against the
  // baseline's for that input: a result kept from an earlier call, or work skipped, fails.
  setup.refresh.address = reinterpret_cast<std::uintptr_t>(L.dx.data());
  setup.refresh.count = p.input_elements();
  setup.check = wire::TimedCheck{reinterpret_cast<std::uintptr_t>(L.dy.data()),
                                 reinterpret_cast<std::uintptr_t>(base_out.get()), p.output_elements(),
                                 tolerance};
  // The least DRAM traffic of the layer: x and w read once, y written once.
  setup.ideal_bytes = 4.0 * double(p.input_elements() + p.filter_elements() + p.output_elements());
  // CONVLAB_SPEED_REPEAT=N makes N independent decisions (the worst counts).
  const SpeedVerdict v =
      convlab::check_speed(setup, policy, cs.name() + " vs " + baseline_name);
  record_speed(v, grader.threshold);
  EXPECT_TRUE(v.passed) << v.message;
  // Nothing written outside the output in any timed run.
  if (const std::string g = L.dy.check_guards(); !g.empty()) ADD_FAILURE() << "no speed-up is awarded: in the timed runs " << g;
}

// --- technique ------------------------------------------------------------------------------------


// A conv path's technique: it runs on the layer (its output must be right), then `rule` judges what
// the runner saw (convlab/technique.hpp).
void check_conv_technique(const std::string& slot, const ConvFn& fn, const Case& cs, const std::string& asks,
                          const TechniqueRule& rule, Precision precision) {
  Layer L(cs.problem(), current_seed());
  if (!run_and_compare(fn, L, "", precision)) {
    ADD_FAILURE() << slot << kFixCorrectnessFirst;
    return;
  }
  expect_technique(slot, asks, rule, double(L.p.output_elements()), double(lab06::im2col_rows(L.p)));
}

// The same on several layers, each judged by the rule made for it (its own C R S and K), together
// in one test: a slot whose design takes another kernel for another kind of layer (the tensor-core
// reference's gather kernel where the stride is not 1, its mma kernel past 64 channels) has each
// kernel judged, where judging one layer would leave the others' kernels unjudged (technique.hpp,
// unjudged_kernels).
void check_conv_technique(const std::string& slot, const ConvFn& fn, const std::vector<Case>& cases,
                          const std::string& asks, const std::function<TechniqueRule(const ConvProblem&)>& rule_for,
                          Precision precision) {
  std::vector<JudgedProblem> judged;
  for (const Case& cs : cases) {
    Layer L(cs.problem(), current_seed());
    if (!run_and_compare(fn, L, "", precision)) {
      ADD_FAILURE() << slot << kFixCorrectnessFirst << " (layer " << shape_text(L.p) << ")";
      return;
    }
    judged.push_back({shape_text(L.p), remote::calls(), double(L.p.output_elements()),
                      double(lab06::im2col_rows(L.p)), rule_for(L.p)});
  }
  expect_technique(slot, asks, judged);
}

}  // namespace lab06_tests

namespace {

// What d_col holds after conv_im2col(): empty if it is the column matrix of one of the images (which
// one stays there depends on the design: the reference's is the last image's), else what it holds.
// Read on every backend: it needs no record of the kernels.
std::string column_matrix_seen(const Layer& L, const GuardedBuffer& col) {
  const ConvProblem& p = L.p;
  if (std::string guards = col.check_guards(); !guards.empty())
    return "d_col, a buffer of im2col_workspace_floats() = " + std::to_string(col.size()) + " floats: " + guards;
  const std::vector<float> got = col.download();
  const int rows = int(lab06::im2col_rows(p)), cols = int(lab06::im2col_cols(p)), Q = p.out_w();
  std::optional<Comparison> closest;
  int closest_image = 0;
  for (int image = 0; image < p.n; ++image) {
    const Comparison c = compare(got, lab06::im2col_golden(L.x, image, p), Grid{cols, rows, 0}, 1);
    if (c.ok()) return {};
    if (c.unwritten == c.checked)
      return "d_col was never written (it still holds the NaN it was filled with): the layer was not computed "
             "through the column matrix";
    if (!closest || c.wrong < closest->wrong) closest = c, closest_image = image;
  }
  const Mismatch& m = closest->first.front();
  const int row = int(m.index / cols), column = int(m.index % cols);
  std::ostringstream o;
  o << "d_col holds the column matrix of no image: " << closest->wrong << " of its " << rows << " x " << cols
    << " elements differ from image " << closest_image << "'s (the closest), the first col[" << row << "][" << column
    << "] (tap c=" << row / (p.r * p.s) << ", r=" << row / p.s % p.r << ", s=" << row % p.s << " of output p="
    << column / Q << ", q=" << column % Q << "): ";
  if (m.unwritten) o << "never written";
  else o << "got " << m.got;
  o << ", expected " << m.expected;
  return o.str();
}

}  // namespace

namespace lab06_tests {

// im2col + GEMM's technique: the grader's d_col (im2col_workspace_floats(), NaN-filled before the
// call) must hold an image's column matrix after it, as the contract documents, and `rule` must hold.
void check_im2col_gemm_technique(const Case& cs, const std::string& asks, const TechniqueRule& rule) {
  Layer L(cs.problem(), current_seed());
  GuardedBuffer col(lab06::im2col_workspace_floats(L.p), kGuard);
  col.poison();
  const ConvFn fn = [&col](const float* x, const float* w, float* y, const ConvProblem& p, cudaStream_t s) {
    lab06::conv_im2col(x, w, col.data(), y, p, s);
  };
  if (!run_and_compare(fn, L, "")) {
    ADD_FAILURE() << "im2col_gemm" << kFixCorrectnessFirst;
    return;
  }
  const double outputs = double(L.p.output_elements()), taps = double(lab06::im2col_rows(L.p));
  std::string found = column_matrix_seen(L, col);
  if (found.empty()) {
    expect_technique("im2col_gemm", asks, rule, outputs, taps);
    return;
  }
  const TechniqueView v(remote::calls(), outputs, taps);
  if (!v.blind()) {
    std::printf("im2col_gemm: %s\n", v.traffic().c_str());
    if (const std::string more = all_of({rule, on_given_stream()})(v); !more.empty()) found += "; " + more;
  }
  ADD_FAILURE() << "im2col_gemm: " << found << "; the lab asks for " << asks;
}

#ifdef CONVLAB_HAVE_CUDNN
// The cuDNN path's technique: cudnn_forward's output comes from cuDNN (see technique::from_cudnn()).
void check_cudnn_technique(const Case& cs, const std::string& asks) {
  Layer L(cs.problem(), current_seed());
  if (!run_and_compare(cudnn_path, L, "")) {
    ADD_FAILURE() << "cudnn" << kFixCorrectnessFirst;
    return;
  }
  for (const auto& c : remote::calls())
    if (!c.evidence.recorded)
      GTEST_SKIP() << "technique not checked: this runner records no launches (" << remote::options().path << ")";
  const int y_arg = 3;  // cudnn_forward(state, d_x, d_w, d_y, stream): d_y is its fourth pointer
  if (const std::string found = lab06::technique::from_cudnn(remote::calls(), y_arg); !found.empty())
    ADD_FAILURE() << "cudnn: " << found << "; the lab asks for " << asks;
}
#endif

}  // namespace lab06_tests
