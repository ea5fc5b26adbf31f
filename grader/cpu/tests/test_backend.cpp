// The CPU backend's own tests: what a GPU would do, and what it reports when a
// kernel breaks the rules. Each kernel is CUDA source built through cu2cpp.
#include "backend_kernels.hpp"

#include <convlab_cpu/launch.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace backend_test {
namespace {

using convlab_cpu::Schedule;

// Device memory that frees itself (the tests check errors themselves).
template <class T>
struct Dev {
  T* p = nullptr;
  explicit Dev(std::size_t n) { EXPECT_EQ(cudaMalloc(&p, n * sizeof(T)), cudaSuccess); }
  Dev(const std::vector<T>& h) : Dev(h.size()) { cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice); }
  ~Dev() { cudaFree(p); }
  std::vector<T> get(std::size_t n) const {
    std::vector<T> h(n);
    cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
  }
};

std::vector<float> ramp(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = float((i * 37) % 101) / 16.0f - 3.0f;  // exact in float
  return v;
}

std::vector<float> conv_reference(const std::vector<float>& x, const std::vector<float>& f) {
  const int n = int(x.size());
  std::vector<float> y(n);
  for (int i = 0; i < n; ++i) {
    float s = 0;
    for (int k = 0; k < 2 * kRadius + 1; ++k) {
      const int j = i + k - kRadius;
      s += (j >= 0 && j < n ? x[j] : 0.0f) * f[k];
    }
    y[i] = s;
  }
  return y;
}

int count_wrong(const std::vector<float>& got, const std::vector<float>& want) {
  int wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) wrong += !(std::fabs(got[i] - want[i]) <= 1e-5f * (1 + std::fabs(want[i])));
  return wrong;
}

struct TiledRun {
  cudaError_t status;
  int wrong;
};

TiledRun run_tiled(Bug bug, Schedule schedule, std::uint64_t seed, int n = 1000, int block = 128) {
  convlab_cpu::set_schedule(schedule, seed);
  const auto x = ramp(n);
  const std::vector<float> f{0.5f, -1, 2, 0.25f, -0.75f, 1.5f, 1};
  Dev<float> dx(x), df(f), dy{std::size_t(n)};
  const cudaError_t st = tiled_conv1d(dx.p, df.p, dy.p, n, block, bug);
  return {st, st == cudaSuccess ? count_wrong(dy.get(n), conv_reference(x, f)) : -1};
}

TEST(Tiled, CorrectKernelPassesUnderEverySchedule) {
  for (Schedule s : {Schedule::in_order, Schedule::reverse, Schedule::shuffle})
    for (std::uint64_t seed : {1, 2, 3}) {
      const TiledRun r = run_tiled(kNone, s, seed);
      EXPECT_EQ(r.status, cudaSuccess);
      EXPECT_EQ(r.wrong, 0) << "schedule " << int(s) << " seed " << seed;
    }
}

TEST(Tiled, MissingSyncthreadsIsCaught) {
  const TiledRun r = run_tiled(kMissingSync, Schedule::shuffle, 7);
  EXPECT_EQ(r.status, cudaSuccess);
  EXPECT_GT(r.wrong, 0);
}

TEST(Tiled, HaloOffByOneIsCaught) {
  const TiledRun r = run_tiled(kHaloOffByOne, Schedule::shuffle, 7);
  EXPECT_EQ(r.status, cudaSuccess);
  EXPECT_GT(r.wrong, 0);
}

TEST(Tiled, EarlyReturnBeforeBarrierIsReportedAsDivergence) {
  for (Schedule s : {Schedule::in_order, Schedule::reverse, Schedule::shuffle}) {
    const TiledRun r = run_tiled(kEarlyReturn, s, 11, 1000, 128);  // 1000 is not a multiple of 128
    ASSERT_EQ(r.status, cudaErrorLaunchFailure);
    const std::string msg = cudaGetErrorString(r.status);
    EXPECT_NE(msg.find("barrier divergence in kernel tiled_conv1d_kernel"), std::string::npos) << msg;
    EXPECT_NE(msg.find("block (7,0,0)"), std::string::npos) << msg;  // the last block holds i >= 1000
    EXPECT_NE(msg.find("backend_kernels.cu:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("returned without reaching it"), std::string::npos) << msg;
    EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);  // recorded as the last error too
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);             // and cleared by reading it
  }
  // With n a multiple of the block, no thread returns early: no divergence.
  EXPECT_EQ(run_tiled(kEarlyReturn, Schedule::shuffle, 11, 1024, 128).status, cudaSuccess);
}

TEST(Schedule, InOrderHidesAMissingBarrierThatShufflingExposes) {
  const int n = 512, block = 256;
  const auto x = ramp(n);
  const auto shifted = [&](Schedule s, bool skip) {
    convlab_cpu::set_schedule(s, 5);
    Dev<float> dx(x), dy{std::size_t(n)};
    EXPECT_EQ(shift_through_shared(dx.p, dy.p, n, block, skip), cudaSuccess);
    const auto y = dy.get(n);
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += y[i] != (i % block == 0 ? -1.0f : x[i - 1]);
    return wrong;
  };
  EXPECT_EQ(shifted(Schedule::shuffle, false), 0);
  EXPECT_EQ(shifted(Schedule::in_order, true), 0);  // each thread's left neighbour ran first
  EXPECT_GT(shifted(Schedule::shuffle, true), 0);
  EXPECT_GT(shifted(Schedule::reverse, true), 0);
}

TEST(Launch, ConfigurationErrorsAreReportedLikeCuda) {
  EXPECT_EQ(launch_shape(dim3(1), dim3(256), 0), cudaSuccess);
  EXPECT_EQ(launch_shape(dim3(1), dim3(2048), 0), cudaErrorInvalidConfiguration);
  EXPECT_NE(std::string(cudaGetErrorString(cudaErrorInvalidConfiguration)).find("2048 threads"), std::string::npos);
  EXPECT_EQ(launch_shape(dim3(1), dim3(32, 32, 2), 0), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch_shape(dim3(1), dim3(1, 1, 65), 0), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch_shape(dim3(0), dim3(32), 0), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch_shape(dim3(1, 65536), dim3(32), 0), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // read by launch_shape already
}

TEST(Launch, DynamicSharedMemoryLimit) {
  EXPECT_EQ(launch_shape(dim3(1), dim3(32), 48 * 1024), cudaSuccess);
  EXPECT_EQ(launch_shape(dim3(1), dim3(32), 64 * 1024), cudaErrorInvalidValue);
  EXPECT_EQ(raise_shared_limit(300 * 1024), cudaErrorInvalidValue);  // above Hopper's 227 KB
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(raise_shared_limit(64 * 1024), cudaSuccess);
  EXPECT_EQ(launch_shape(dim3(1), dim3(32), 64 * 1024), cudaSuccess);
}

TEST(Memory, ConstantMemoryCopyIsBoundsChecked) {
  std::vector<float> coef(16);
  std::iota(coef.begin(), coef.end(), 1.0f);
  std::vector<float> data(100, 2.0f);
  Dev<float> d(data);
  ASSERT_EQ(constant_scale(coef.data(), 16, d.p, 100), cudaSuccess);
  const auto out = d.get(100);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(out[i], 2.0f * coef[i % 16]) << i;
  std::vector<float> too_many(17, 1.0f);
  EXPECT_EQ(constant_scale(too_many.data(), 17, d.p, 100), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

TEST(Memory, FreeingAnUnknownPointerIsAnError) {
  float x = 0;
  EXPECT_EQ(cudaFree(&x), cudaErrorInvalidDevicePointer);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevicePointer);
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 10), cudaSuccess);
  EXPECT_EQ(cudaFree(p), cudaSuccess);
  EXPECT_EQ(cudaFree(p), cudaErrorInvalidDevicePointer);  // twice
  cudaGetLastError();
}

TEST(Atomics, HistogramAcrossBlocksIsExact) {
  const int n = 200000;
  std::vector<int> v(n);
  std::vector<unsigned> want(256, 0);
  for (int i = 0; i < n; ++i) want[v[i] = (i * 7919) % 256]++;
  Dev<int> dv(v);
  Dev<unsigned> bins(std::vector<unsigned>(256, 0));
  ASSERT_EQ(histogram(dv.p, n, bins.p), cudaSuccess);
  EXPECT_EQ(bins.get(256), want);
}

TEST(Indexing, ThreeDimensionalGridsAndBlocksCoverEveryThreadOnce) {
  const dim3 grid(3, 2, 2), block(8, 4, 2);
  const std::size_t total = 3 * 2 * 2 * 8 * 4 * 2;
  Dev<unsigned> out(std::vector<unsigned>(total, 0xFFFFFFFFu));
  ASSERT_EQ(write_ids(out.p, grid, block), cudaSuccess);
  const auto ids = out.get(total);
  for (std::size_t i = 0; i < total; ++i) ASSERT_EQ(ids[i], i);
}

TEST(SharedMemory, UnwrittenStaticSharedMemoryReadsAsNaN) {
  Dev<float> out{std::size_t(256)};
  ASSERT_EQ(read_unwritten_shared(out.p, 256), cudaSuccess);
  for (float v : out.get(256)) {
    ASSERT_TRUE(std::isnan(v));
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    ASSERT_EQ(bits, convlab_cpu::kUnwrittenSharedBits);  // its own NaN, not the graders' output poison
  }
}

TEST(Events, ElapsedTimeIsMeasured) {
  cudaEvent_t a, b;
  ASSERT_EQ(cudaEventCreate(&a), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&b), cudaSuccess);
  float ms = -1;
  EXPECT_EQ(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);  // not recorded yet
  cudaGetLastError();
  ASSERT_EQ(cudaEventRecord(a), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(b), cudaSuccess);
  ASSERT_EQ(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
  EXPECT_GE(ms, 0.0f);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

}  // namespace
}  // namespace backend_test
