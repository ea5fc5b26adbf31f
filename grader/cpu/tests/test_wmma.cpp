// CUDA's warp matrix API on the CPU backend (convlab_cpu/wmma.hpp): what a GPU's tensor cores
// compute from FP32 data in TF32 mode, the API's rules as a GPU enforces them, and memory
// accesses counted once per warp, as a GPU's lanes make them. The kernels are CUDA source built
// through cu2cpp (wmma_kernels.cu).
#include "wmma_kernels.hpp"

#include <convlab_cpu/launch.hpp>
#include <convlab_cpu/records.hpp>

#include <gtest/gtest.h>

#include "device_memory.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace wmma_test {
namespace {

using cpu_backend_test::Dev;

std::uint32_t bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// Values with all 23 mantissa bits in use, in [-2, 2): TF32 changes them.
std::vector<float> values(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  std::uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = float(std::int32_t(s >> 8) - (1 << 23)) / float(1 << 22);
  }
  return v;
}

// The upper 19 bits (what the tensor cores read), and round to nearest, ties away (cvt.rna).
float truncate19(float x) {
  std::uint32_t u = bits(x) & 0xFFFFE000u;
  std::memcpy(&x, &u, sizeof u);
  return x;
}

// C = A B with each input first mapped by `in`, in double; and the FP32 accumulation's bound,
// gamma_k times the sum of |a||b| (k products and sums in FP32, each with error at most 2^-24).
struct Product {
  std::vector<double> c, bound;
};
template <class In>
Product product(const std::vector<float>& a, const std::vector<float>& b, int m, int n, int k, bool b_col, In in) {
  Product p{std::vector<double>(std::size_t(m) * n), std::vector<double>(std::size_t(m) * n)};
  const double gamma = k * std::ldexp(1.0, -24) / (1 - k * std::ldexp(1.0, -24));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0, abs = 0;
      for (int q = 0; q < k; ++q) {
        const double t = double(in(a[std::size_t(i) * k + q])) *
                         double(in(b_col ? b[std::size_t(j) * k + q] : b[std::size_t(q) * n + j]));
        s += t, abs += std::fabs(t);
      }
      p.c[std::size_t(i) * n + j] = s;
      p.bound[std::size_t(i) * n + j] = gamma * abs;
    }
  return p;
}

TEST(Wmma, FloatToTf32RoundsToNearestTiesAwayFromZero) {
  const float one = 1.0f, ulp10 = std::ldexp(1.0f, -10);
  const std::vector<float> in = {one + std::ldexp(1.0f, -11),                 // a tie: away from zero
                                 -(one + std::ldexp(1.0f, -11)),              // the same, negative
                                 one + std::ldexp(1.0f, -12),                 // below half: down
                                 one + 3 * std::ldexp(1.0f, -12),             // above half: up
                                 one + ulp10,                                 // TF32 already: kept
                                 std::numeric_limits<float>::infinity(),      // kept
                                 std::numeric_limits<float>::quiet_NaN(),     // still NaN
                                 std::numeric_limits<float>::denorm_min()};   // 2^-149: down to 0
  const std::vector<float> want = {one + ulp10, -(one + ulp10), one, one + ulp10, one + ulp10,
                                   std::numeric_limits<float>::infinity(), 0.0f /* unused */, 0.0f};
  Dev<float> d_in(in), d_out(in.size());
  ASSERT_EQ(round_to_tf32(d_in.p, d_out.p, int(in.size())), cudaSuccess);
  const std::vector<float> out = d_out.get(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (std::isnan(in[i])) {
      EXPECT_TRUE(std::isnan(out[i]));
      continue;
    }
    EXPECT_EQ(bits(out[i]), bits(want[i])) << "element " << i << ": " << in[i] << " -> " << out[i];
    EXPECT_EQ(bits(out[i]) & 0x1FFFu, 0u) << "element " << i;  // the lower 13 bits are zero
  }
}

// The tensor cores read the upper 19 bits of each FP32 operand; rounding first changes the result.
TEST(Wmma, MmaReadsTf32OperandsAndRoundingFirstChangesTheResult) {
  const int m = 16, n = 16, k = 24;
  const float a_value = 1.0f + 3 * std::ldexp(1.0f, -12);  // TF32: 1 truncated, 1 + 2^-10 rounded
  const std::vector<float> a(std::size_t(m) * k, a_value), b(std::size_t(k) * n, 1.0f);
  Dev<float> d_a(a), d_b(b), d_c(std::size_t(m) * n);
  ASSERT_EQ(gemm_global(d_a.p, d_b.p, d_c.p, m, n, k, false), cudaSuccess);
  for (float c : d_c.get(std::size_t(m) * n)) EXPECT_EQ(c, float(k));  // FP32 would give k(1 + 3 2^-12)
  ASSERT_EQ(gemm_global(d_a.p, d_b.p, d_c.p, m, n, k, true), cudaSuccess);
  for (float c : d_c.get(std::size_t(m) * n)) EXPECT_EQ(c, k * (1.0f + std::ldexp(1.0f, -10)));
}

TEST(Wmma, GemmFromGlobalMemoryIsTheTf32ProductWithinFp32Accumulation) {
  const int m = 32, n = 48, k = 40;
  const auto a = values(std::size_t(m) * k, 1), b = values(std::size_t(k) * n, 2);
  Dev<float> d_a(a), d_b(b), d_c(std::size_t(m) * n);
  for (bool round : {false, true}) {
    ASSERT_EQ(gemm_global(d_a.p, d_b.p, d_c.p, m, n, k, round), cudaSuccess);
    const auto c = d_c.get(std::size_t(m) * n);
    const Product want = round ? product(a, b, m, n, k, false, [](float x) {
                                   // cvt.rna: round half away from zero at bit 13
                                   std::uint32_t u = bits(x) + 0x1000u;
                                   u &= 0xFFFFE000u;
                                   std::memcpy(&x, &u, sizeof u);
                                   return x;
                                 })
                               : product(a, b, m, n, k, false, truncate19);
    const Product fp32 = product(a, b, m, n, k, false, [](float x) { return x; });
    int differs_from_fp32 = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      EXPECT_LE(std::fabs(c[i] - want.c[i]), want.bound[i]) << "C[" << i << "], rounded inputs: " << round;
      differs_from_fp32 += std::fabs(c[i] - fp32.c[i]) > fp32.bound[i];
    }
    EXPECT_GT(differs_from_fp32, int(c.size()) / 2) << "the TF32 inputs should show in most outputs";
  }
}

// Tiles staged in shared memory by 4 warps, barriers between the steps, B column-major and C
// written through shared memory in column-major order; every schedule of the block's threads.
TEST(Wmma, GemmThroughSharedMemoryWithBarriersUnderEverySchedule) {
  const int m = 64, n = 96, k = 24;
  const auto a = values(std::size_t(m) * k, 3), b = values(std::size_t(k) * n, 4);  // b: column-major
  const Product want = product(a, b, m, n, k, true, [](float x) {
    std::uint32_t u = bits(x) + 0x1000u;
    u &= 0xFFFFE000u;
    std::memcpy(&x, &u, sizeof u);
    return x;
  });
  Dev<float> d_a(a), d_b(b), d_c(std::size_t(m) * n);
  for (auto s : {convlab_cpu::Schedule::in_order, convlab_cpu::Schedule::reverse, convlab_cpu::Schedule::shuffle}) {
    convlab_cpu::set_schedule(s, 5, false);
    ASSERT_EQ(cudaMemset(d_c.p, 0xFF, std::size_t(m) * n * sizeof(float)), cudaSuccess);
    ASSERT_EQ(gemm_shared(d_a.p, d_b.p, d_c.p, m, n, k), cudaSuccess);
    const auto c = d_c.get(std::size_t(m) * n);
    for (std::size_t i = 0; i < c.size(); ++i)
      ASSERT_LE(std::fabs(c[i] - want.c[i]), want.bound[i]) << "C[" << i << "], schedule " << int(s);
  }
  convlab_cpu::set_schedule(convlab_cpu::Schedule::shuffle, 0, false);
}

// A fragment's pointer as a GPU faults on it (measured on an H200 with CUDA 13): 4 bytes past a
// 32-byte boundary and ldm 10 run, and so do they here; a float pointer 2 bytes off is a
// misaligned address on both.
TEST(Wmma, AFragmentPointerIsCheckedAsTheGpuFaultsOnIt) {
  Dev<float> a(std::vector<float>(16 * 16, 0.5f)), c(16 * 16);
  for (const auto& [offset, ldm] : {std::pair<int, unsigned>{0, 16}, {1, 16}, {4, 16}, {0, 10}}) {
    ASSERT_EQ(load_at(a.p + offset, ldm, c.p), cudaSuccess) << "offset " << offset << ", ldm " << ldm;
    for (float v : c.get(16 * 16)) ASSERT_EQ(v, 4.0f);  // each row: 8 times 0.5
  }
  const auto* off = reinterpret_cast<const float*>(reinterpret_cast<const char*>(a.p) + 2);
  const cudaError_t e = load_at(off, 16, c.p);
  ASSERT_EQ(e, cudaErrorLaunchFailure);
  const std::string msg = cudaGetErrorString(e);
  EXPECT_NE(msg.find("wmma::load_matrix_sync: misaligned address"), std::string::npos) << msg;
  EXPECT_NE(msg.find("thread ("), std::string::npos) << msg;  // which thread, as for any failing thread
  cudaGetLastError();
}

// Each fragment's tile is loaded and stored once per warp, as the GPU's lanes share it: one warp
// computing one 16 x 16 tile of C with k = 24 loads 3 A and 3 B tiles of 128 floats and stores 256.
TEST(Wmma, AccessesAreCountedOncePerWarp) {
  if (!convlab_cpu::access_counts_available()) GTEST_SKIP() << "this build cannot count memory accesses";
  const int m = 16, n = 16, k = 24;
  const auto a = values(std::size_t(m) * k, 6), b = values(std::size_t(k) * n, 7);
  Dev<float> d_a(a), d_b(b), d_c(std::size_t(m) * n);
  convlab_cpu::clear_records();
  ASSERT_EQ(gemm_global(d_a.p, d_b.p, d_c.p, m, n, k, false), cudaSuccess);
  std::vector<convlab_cpu::LaunchRecord> found;
  for (const auto& r : convlab_cpu::launch_records())
    if (r.kernel == "gemm_global_kernel") found.push_back(r);
  ASSERT_EQ(found.size(), 1u);
  const convlab_cpu::LaunchRecord& r = found[0];
  ASSERT_TRUE(r.counted);
  EXPECT_EQ(r.global.loads, 3u * 128 + 3u * 128);
  EXPECT_EQ(r.global.load_bytes, (3u * 128 + 3u * 128) * sizeof(float));
  EXPECT_EQ(r.global.stores, 256u);
  EXPECT_FALSE(r.shared.any());
}

}  // namespace
}  // namespace wmma_test
