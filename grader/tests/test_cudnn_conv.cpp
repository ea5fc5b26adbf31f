// Tests for convlab::CudnnConv, the cuDNN baseline.
//
// - CudnnConvShapeValidation: bad shapes are rejected with a message naming
//   the field, before any CUDA or cuDNN call (runs without a GPU).
// - CudnnConvGpu: cuDNN's output on seeded random data matches a
//   double-precision direct convolution. Skipped when no CUDA device is
//   visible. CONVLAB_SEED=<n> replays a run with another seed.

#include "convlab/cudnn_conv.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

namespace {

using convlab::CudnnConv;
using convlab::CudnnConvShape;
using convlab::CudnnMath;

// ---------------------------------------------------------------------------
// CPU-only: shape validation

CudnnConvShape valid_shape() {
  CudnnConvShape s;
  s.n = 1;
  s.c = 2;
  s.h = 8;
  s.w = 8;
  s.k = 3;
  s.r = 3;
  s.s = 3;
  s.pad_h = 1;
  s.pad_w = 1;
  return s;
}

// A shape that slipped through validation would reach cudnnCreate and fail
// (no GPU) or succeed (GPU); either way the test fails with a clear message.
void expect_rejected(const CudnnConvShape& shape, const std::string& field) {
  try {
    CudnnConv conv(shape);
    ADD_FAILURE() << "a shape with a bad shape." << field << " was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("shape." + field + " "), std::string::npos)
        << "message does not name shape." << field << ": " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "bad shape." << field << " gave a " << typeid(e).name()
                  << " instead of std::invalid_argument: " << e.what();
  }
}

TEST(CudnnConvShapeValidation, RejectsNonPositiveSizesNamingTheField) {
  expect_rejected(CudnnConvShape{}, "h");  // h and w default to 0
  const struct {
    const char* field;
    int CudnnConvShape::*member;
    int bad;
  } cases[] = {
      {"n", &CudnnConvShape::n, 0},
      {"c", &CudnnConvShape::c, -1},
      {"h", &CudnnConvShape::h, 0},
      {"w", &CudnnConvShape::w, -3},
      {"k", &CudnnConvShape::k, 0},
      {"r", &CudnnConvShape::r, 0},
      {"s", &CudnnConvShape::s, -1},
      {"stride_h", &CudnnConvShape::stride_h, 0},
      {"stride_w", &CudnnConvShape::stride_w, -2},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.field);
    CudnnConvShape s = valid_shape();
    s.*tc.member = tc.bad;
    expect_rejected(s, tc.field);
  }
}

TEST(CudnnConvShapeValidation, RejectsNegativePaddingNamingTheField) {
  CudnnConvShape s = valid_shape();
  s.pad_h = -1;
  expect_rejected(s, "pad_h");
  s = valid_shape();
  s.pad_w = -1;
  expect_rejected(s, "pad_w");
}

TEST(CudnnConvShapeValidation, RejectsFilterLargerThanPaddedInput) {
  CudnnConvShape s = valid_shape();
  s.h = 3;
  s.pad_h = 0;
  s.r = 5;
  expect_rejected(s, "r");
  s = valid_shape();
  s.w = 2;
  s.pad_w = 1;  // padded width 4
  s.s = 5;
  expect_rejected(s, "s");
}

TEST(CudnnConvShapeValidation, RejectsTensorsTooLargeForCudnn) {
  CudnnConvShape s = valid_shape();
  s.n = 1 << 16;
  s.c = 1 << 8;
  s.h = 1 << 8;
  s.w = 1 << 8;
  try {
    CudnnConv conv(s);
    ADD_FAILURE() << "a 2^40-element input was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("n*c*h*w"), std::string::npos) << e.what();
  }
}

TEST(CudnnVersion, RuntimeLibraryIsCudnn9OrNewer) {
  const std::string v = convlab::cudnn_version_string();
  std::cout << "[ cudnn    ] runtime version " << v << "\n";
  ASSERT_FALSE(v.empty());
  EXPECT_GE(std::stoi(v.substr(0, v.find('.'))), 9) << v;
  EXPECT_EQ(std::count(v.begin(), v.end(), '.'), 2) << v;
}

// ---------------------------------------------------------------------------
// GPU: agreement with a double-precision direct convolution

#define CUDA_OK(call) cuda_ok((call), #call, __FILE__, __LINE__)

void cuda_ok(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess) {
    std::ostringstream os;
    os << call << " failed at " << file << ":" << line << ": " << cudaGetErrorString(err);
    throw std::runtime_error(os.str());
  }
}

class DeviceFloats {
 public:
  explicit DeviceFloats(std::size_t count) : count_(count) {
    CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(float)));
  }
  ~DeviceFloats() {
    if (cudaFree(ptr_) != cudaSuccess) std::cerr << "cudaFree failed in ~DeviceFloats\n";
  }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  float* get() const { return ptr_; }
  std::size_t bytes() const { return count_ * sizeof(float); }

 private:
  float* ptr_ = nullptr;
  std::size_t count_ = 0;
};

class Stream {
 public:
  Stream() { CUDA_OK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (cudaStreamDestroy(stream_) != cudaSuccess) std::cerr << "cudaStreamDestroy failed\n";
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

std::uint32_t test_seed() {
  if (const char* env = std::getenv("CONVLAB_SEED")) {
    return static_cast<std::uint32_t>(std::strtoul(env, nullptr, 10));
  }
  return 20240917u;
}

std::vector<float> random_floats(std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

// Sizes and in-range coordinates are non-negative ints; index math is size_t.
std::size_t z(int v) { return static_cast<std::size_t>(v); }

int out_dim(int in, int pad, int filter, int stride) {
  return (in + 2 * pad - filter) / stride + 1;
}

// Direct cross-correlation in double. `magnitude` is the sum of |x*w| over
// each output's terms: the scale that rounding errors grow with, so the
// tolerance stays meaningful where the sum itself cancels to near zero.
void reference_conv(const CudnnConvShape& s, const std::vector<float>& x,
                    const std::vector<float>& w, std::vector<double>& y,
                    std::vector<double>& magnitude) {
  const int oh = out_dim(s.h, s.pad_h, s.r, s.stride_h);
  const int ow = out_dim(s.w, s.pad_w, s.s, s.stride_w);
  y.assign(z(s.n) * z(s.k) * z(oh) * z(ow), 0.0);
  magnitude.assign(y.size(), 0.0);
  for (int n = 0; n < s.n; ++n)
    for (int k = 0; k < s.k; ++k)
      for (int p = 0; p < oh; ++p)
        for (int q = 0; q < ow; ++q) {
          double acc = 0.0, mag = 0.0;
          for (int c = 0; c < s.c; ++c)
            for (int r = 0; r < s.r; ++r)
              for (int t = 0; t < s.s; ++t) {
                const int ih = p * s.stride_h - s.pad_h + r;
                const int iw = q * s.stride_w - s.pad_w + t;
                if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
                const double term =
                    double(x[((z(n) * z(s.c) + z(c)) * z(s.h) + z(ih)) * z(s.w) + z(iw)]) *
                    double(w[((z(k) * z(s.c) + z(c)) * z(s.r) + z(r)) * z(s.s) + z(t)]);
                acc += term;
                mag += std::fabs(term);
              }
          const std::size_t i = ((z(n) * z(s.k) + z(k)) * z(oh) + z(p)) * z(ow) + z(q);
          y[i] = acc;
          magnitude[i] = mag;
        }
}

struct GpuCase {
  const char* name;
  CudnnConvShape shape;
  CudnnMath math;
  double rtol;
};

CudnnConvShape make_shape(int n, int c, int h, int w, int k, int r, int s, int pad, int stride) {
  CudnnConvShape sh;
  sh.n = n;
  sh.c = c;
  sh.h = h;
  sh.w = w;
  sh.k = k;
  sh.r = r;
  sh.s = s;
  sh.pad_h = sh.pad_w = pad;
  sh.stride_h = sh.stride_w = stride;
  return sh;
}

// FP32 FMA math is held to 1e-4. TF32 keeps 10 mantissa bits, so each
// product may be off by about 1e-3 of its size: it gets 5e-3.
const GpuCase kGpuCases[] = {
    {"n2_c3_h17_w13_k4_r3s3_pad1_stride1_fma", make_shape(2, 3, 17, 13, 4, 3, 3, 1, 1),
     CudnnMath::fma, 1e-4},
    {"n1_c1_h64_w64_k1_r5s5_pad2_stride2_fma", make_shape(1, 1, 64, 64, 1, 5, 5, 2, 2),
     CudnnMath::fma, 1e-4},
    {"n2_c3_h17_w13_k4_r3s3_pad1_stride1_tf32", make_shape(2, 3, 17, 13, 4, 3, 3, 1, 1),
     CudnnMath::tf32_allowed, 5e-3},
    {"n1_c1_h64_w64_k1_r5s5_pad2_stride2_tf32", make_shape(1, 1, 64, 64, 1, 5, 5, 2, 2),
     CudnnMath::tf32_allowed, 5e-3},
};

class CudnnConvGpu : public ::testing::TestWithParam<GpuCase> {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) GTEST_SKIP() << "no CUDA device: " << cudaGetErrorString(err);
    if (count == 0) GTEST_SKIP() << "no CUDA device: cudaGetDeviceCount reported 0 devices";
  }
};

TEST_P(CudnnConvGpu, MatchesDoublePrecisionDirectConvolution) {
  const GpuCase& tc = GetParam();
  const CudnnConvShape& s = tc.shape;
  const std::uint32_t seed = test_seed();
  std::cout << "[ seed     ] " << seed << " (CONVLAB_SEED=" << seed << " replays this run)\n";
  RecordProperty("seed", std::to_string(seed));

  CudnnConv conv(s, tc.math);
  const int oh = out_dim(s.h, s.pad_h, s.r, s.stride_h);
  const int ow = out_dim(s.w, s.pad_w, s.s, s.stride_w);
  ASSERT_EQ(conv.out_n(), s.n);
  ASSERT_EQ(conv.out_k(), s.k);
  ASSERT_EQ(conv.out_h(), oh);
  ASSERT_EQ(conv.out_w(), ow);
  ASSERT_EQ(conv.output_elements(), z(s.n) * z(s.k) * z(oh) * z(ow));

  std::mt19937 rng(seed);
  const std::vector<float> h_x = random_floats(conv.input_elements(), rng);
  const std::vector<float> h_w = random_floats(conv.filter_elements(), rng);
  DeviceFloats d_x(h_x.size()), d_w(h_w.size()), d_y(conv.output_elements());
  CUDA_OK(cudaMemcpy(d_x.get(), h_x.data(), d_x.bytes(), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d_w.get(), h_w.data(), d_w.bytes(), cudaMemcpyHostToDevice));
  Stream stream;

  EXPECT_THROW(conv.run(d_x.get(), d_w.get(), d_y.get(), stream.get()), std::logic_error);
  EXPECT_THROW(conv.choose_algorithm(nullptr, d_w.get(), d_y.get()), std::invalid_argument);
  EXPECT_TRUE(conv.algorithm_name().empty());

  const std::string algo = conv.choose_algorithm(d_x.get(), d_w.get(), d_y.get());
  std::cout << "[ cudnn    ] " << convlab::cudnn_version_string() << " chose " << algo << " ("
            << conv.find_time_ms() << " ms, " << conv.workspace_bytes()
            << " B workspace)\n";
  EXPECT_FALSE(algo.empty());
  EXPECT_EQ(algo, conv.algorithm_name());
  EXPECT_GE(conv.find_time_ms(), 0.0f);

  // All-ones bytes are NaNs: a run() that writes nothing cannot pass.
  CUDA_OK(cudaMemset(d_y.get(), 0xFF, d_y.bytes()));
  conv.run(d_x.get(), d_w.get(), d_y.get(), stream.get());
  CUDA_OK(cudaStreamSynchronize(stream.get()));
  std::vector<float> h_y(conv.output_elements());
  CUDA_OK(cudaMemcpy(h_y.data(), d_y.get(), d_y.bytes(), cudaMemcpyDeviceToHost));

  std::vector<double> ref, magnitude;
  reference_conv(s, h_x, h_w, ref, magnitude);
  ASSERT_EQ(ref.size(), h_y.size());
  std::size_t bad = 0;
  double worst = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double err = std::fabs(double(h_y[i]) - ref[i]);
    const double scale = std::max(magnitude[i], 1e-30);
    const double rel = err / scale;
    if (!(rel <= tc.rtol)) {  // also catches NaN
      if (++bad <= 5) {
        ADD_FAILURE() << "y[" << i << "] = " << h_y[i] << ", expected " << ref[i]
                      << " (relative error " << rel << " > " << tc.rtol << ", seed " << seed
                      << ")";
      }
    } else {
      worst = std::max(worst, rel);
    }
  }
  EXPECT_EQ(bad, 0u) << "of " << ref.size() << " outputs (seed " << seed << ")";
  std::cout << "[ accuracy ] worst relative error " << worst << " (tolerance " << tc.rtol
            << ")\n";
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudnnConvGpu, ::testing::ValuesIn(kGpuCases),
                         [](const ::testing::TestParamInfo<GpuCase>& param_info) {
                           return std::string(param_info.param.name);
                         });

}  // namespace
