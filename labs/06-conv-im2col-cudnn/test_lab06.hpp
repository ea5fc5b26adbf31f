// Lab 06's graders: what test_lab06.cpp (the cases, the correctness checks and the registration),
// test_lab06_checks.cpp (the speed and technique checks) and test_lab06_rules.cpp (the CPU tests)
// share. See test_lab06.cpp for what is checked and how.
#pragma once

#include "lab06.hpp"
#include "lab06_golden.hpp"

#include <convlab/compare.hpp>
#include <convlab/device_buffer.hpp>
#include <convlab/random.hpp>
#include <convlab/remote.hpp>
#include <convlab/technique.hpp>
#include <convlab/testbed.hpp>

#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace lab06_tests {

using namespace convlab;
using lab06::ConvProblem;
using lab06::Padding;
using lab06::Precision;

// No guard zones under AddressSanitizer: it then reports the first access out of bounds itself.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kGuard = 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr std::size_t kGuard = 0;
#else
constexpr std::size_t kGuard = 4096;
#endif
#else
constexpr std::size_t kGuard = 4096;
#endif

constexpr std::uint64_t kFilterStream = 0xF117E5ull;

// A layer as the tests name it: lab06.correctness.direct.n2_c3_9x11_k6_2x2_st1x1_same
struct Case {
  int n, c, h, w, k, r, s, stride_h, stride_w;
  Padding mode;
  int pad_h = 0, pad_w = 0;
  ConvProblem problem() const {
    return lab06::make_problem(n, c, h, w, k, r, s, stride_h, stride_w, mode, pad_h, pad_w);
  }
  std::string name() const {
    std::ostringstream o;
    o << "n" << n << "_c" << c << "_" << h << "x" << w << "_k" << k << "_" << r << "x" << s << "_st" << stride_h
      << "x" << stride_w << "_";
    if (mode == Padding::valid) o << "valid";
    else if (mode == Padding::same) o << "same";
    else o << "pad" << pad_h << "x" << pad_w;
    return o.str();
  }
};

using ConvFn = std::function<void(const float*, const float*, float*, const ConvProblem&, cudaStream_t)>;

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { CONVLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
};

std::string shape_text(const ConvProblem& p);

// One layer on the host and the device.
// Where a layer's input x is made: on the host, with the golden model (a correctness case), or on
// the device from the seed (a speed test's layer, checked against the baseline on the device: no
// golden model of a layer of gigaflops on the host, issue 29). The filters are made on the host.
enum class Inputs { host_with_golden, device };

// A layer's host side: its inputs, filters and golden model.
struct HostLayer {
  std::vector<float> x, w;
  Golden g;
};

struct Layer {
  ConvProblem p;
  std::vector<float> x, w;
  Golden g;
  GuardedBuffer dx, dw, dy;
  Stream stream;
  Layer(const ConvProblem& problem, std::uint64_t seed, Inputs inputs = Inputs::host_with_golden)
      : p(problem),
        x(inputs == Inputs::device ? std::vector<float>{} : random_floats(p.input_elements(), seed)),
        w(random_floats(p.filter_elements(), seed ^ kFilterStream)),
        g(inputs == Inputs::device ? Golden{} : lab06::conv_golden(x, w, p)),
        dx(p.input_elements(), kGuard), dw(w.size(), kGuard), dy(p.output_elements(), kGuard) {
    if (inputs == Inputs::device) {
      dx.poison();
      remote::random_fill(dx.data(), p.input_elements(), seed);
    } else {
      dx.upload(x);
    }
    dw.upload(w);
  }
  // A correctness case's layer from inputs and a golden model made already (shared_case_layer).
  Layer(const ConvProblem& problem, const HostLayer& host)
      : p(problem), x(host.x), w(host.w), g(host.g), dx(p.input_elements(), kGuard), dw(w.size(), kGuard),
        dy(p.output_elements(), kGuard) {
    dx.upload(x);
    dw.upload(w);
  }
};

constexpr Padding kValid = Padding::valid, kSame = Padding::same, kPad = Padding::explicit_pads;

// test_lab06.cpp: a run of a path, and a run checked against the layer's golden model.
std::string run_once(const ConvFn& fn, Layer& L, float* out);
bool run_and_compare(const ConvFn& fn, Layer& L, const std::string& when, Precision precision = Precision::fp32);
#ifdef CONVLAB_HAVE_CUDNN
void cudnn_path(const float* x, const float* w, float* y, const ConvProblem& p, cudaStream_t s);
#endif

// test_lab06_checks.cpp: the speed and technique checks.
// What a speed grader times the student's path against: the grader-owned naive direct kernel, or
// cuDNN with TF32 tensor cores allowed (the tensor-core slot: its fastest algorithm for the layer,
// chosen once before the timing; both results held to the TF32 bound).
enum class Against { naive, cudnn_tf32 };

void check_layer_speed(const ConvFn& candidate, const Case& cs, const GraderSpec& grader,
                       Precision precision = Precision::fp32, Against against = Against::naive);

constexpr const char* kFixCorrectnessFirst = ": the technique is checked on a correct output; fix correctness first";

void check_conv_technique(const std::string& slot, const ConvFn& fn, const Case& cs, const std::string& asks,
                          const TechniqueRule& rule, Precision precision = Precision::fp32);
void check_conv_technique(const std::string& slot, const ConvFn& fn, const std::vector<Case>& cases,
                          const std::string& asks, const std::function<TechniqueRule(const ConvProblem&)>& rule_for,
                          Precision precision);
void check_im2col_gemm_technique(const Case& cs, const std::string& asks, const TechniqueRule& rule);
#ifdef CONVLAB_HAVE_CUDNN
void check_cudnn_technique(const Case& cs, const std::string& asks);
#endif

// test_lab06_rules.cpp: the CPU tests (the shape function, the launchers refusing bad layers, the
// technique rules on launches as the runner records them, the golden model worked by hand).
void register_lab06_rules(Registry& reg);

}  // namespace lab06_tests
