// CUDA's asynchronous copy primitives on the CPU backend (convlab_cpu/pipeline.hpp): a
// double-buffered tile lands in shared memory when its thread waits for it, so a missing wait
// shows on every run; zero fill, the GPU's alignment rules, and the counts a GPU's counters give.
// The kernels are CUDA source built through cu2cpp (pipeline_kernels.cu).
#include "pipeline_kernels.hpp"

#include <convlab_cpu/launch.hpp>
#include <convlab_cpu/records.hpp>

#include <gtest/gtest.h>

#include "device_memory.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace pipeline_test {
namespace {

using cpu_backend_test::Dev;

std::vector<float> ramp(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = float(int(i % 1000) - 500) / 8.0f;
  return v;
}

TEST(Pipeline, ADoubleBufferedTileIsRightUnderEverySchedule) {
  const int blocks = 3, tiles = 5;
  const auto x = ramp(std::size_t(blocks) * tiles * 512);
  Dev<float> in(x), out(x.size());
  for (auto s : {convlab_cpu::Schedule::in_order, convlab_cpu::Schedule::reverse, convlab_cpu::Schedule::shuffle}) {
    convlab_cpu::set_schedule(s, 9, false);
    ASSERT_EQ(cudaMemset(out.p, 0xFF, x.size() * sizeof(float)), cudaSuccess);
    ASSERT_EQ(double_through_shared(in.p, out.p, blocks, tiles, 1), cudaSuccess);
    const auto y = out.get(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], 2 * x[i]) << "element " << i << ", schedule " << int(s);
  }
  convlab_cpu::set_schedule(convlab_cpu::Schedule::shuffle, 0, false);
}

// Waiting for all but the newest two groups reads each tile before its copy landed: the first
// tile is unwritten shared memory, every later one the tile before it.
TEST(Pipeline, ReadingATileBeforeItsWaitShowsOnEveryRun) {
  const int blocks = 2, tiles = 4;
  const auto x = ramp(std::size_t(blocks) * tiles * 512);
  Dev<float> in(x), out(x.size());
  for (int run = 0; run < 3; ++run) {
    ASSERT_EQ(double_through_shared(in.p, out.p, blocks, tiles, 2), cudaSuccess);
    const auto y = out.get(x.size());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < x.size(); ++i) wrong += !(y[i] == 2 * x[i]);
    EXPECT_GE(wrong, x.size() / 2) << "run " << run;
  }
}

TEST(Pipeline, ZeroFillReplacesTheLastBytes) {
  Dev<float> in(std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f}), out(4);
  for (const auto& [zfill, want] : {std::pair<int, std::vector<float>>{0, {1.5f, 2.5f, 3.5f, 4.5f}},
                                    {4, {1.5f, 2.5f, 3.5f, 0.0f}},
                                    {12, {1.5f, 0.0f, 0.0f, 0.0f}},
                                    {16, {0.0f, 0.0f, 0.0f, 0.0f}}}) {
    ASSERT_EQ(copy_with_zfill(in.p, out.p, zfill), cudaSuccess) << "zfill " << zfill;
    EXPECT_EQ(out.get(4), want) << "zfill " << zfill;
  }
}

TEST(Pipeline, AMisalignedSourceIsTheGpusMisalignedAddress) {
  Dev<float> in(8), out(4);
  const cudaError_t e = copy_with_zfill(in.p + 1, out.p, 0);  // 4 bytes past a 16-byte boundary
  ASSERT_EQ(e, cudaErrorLaunchFailure);
  const std::string msg = cudaGetErrorString(e);
  EXPECT_NE(msg.find("__pipeline_memcpy_async: misaligned address (a copy of 16 bytes"), std::string::npos) << msg;
  cudaGetLastError();
}

// A copy counts as a GPU's counters see cp.async: one global load of 16 bytes when issued, one
// shared store of 16 bytes when it lands.
TEST(Pipeline, CopiesAreCountedAsAGlobalLoadAndASharedStoreEach) {
  if (!convlab_cpu::access_counts_available()) GTEST_SKIP() << "this build cannot count memory accesses";
  const int blocks = 1, tiles = 2;
  const auto x = ramp(std::size_t(tiles) * 512);
  Dev<float> in(x), out(x.size());
  convlab_cpu::clear_records();
  ASSERT_EQ(double_through_shared(in.p, out.p, blocks, tiles, 1), cudaSuccess);
  std::vector<convlab_cpu::LaunchRecord> found;
  for (const auto& r : convlab_cpu::launch_records())
    if (r.kernel == "double_kernel") found.push_back(r);
  ASSERT_EQ(found.size(), 1u);
  const auto& r = found[0];
  ASSERT_TRUE(r.counted);
  EXPECT_EQ(r.global.loads, 128u * tiles);
  EXPECT_EQ(r.global.load_bytes, 128u * tiles * 16);
  EXPECT_EQ(r.shared.stores, 128u * tiles);
  EXPECT_EQ(r.shared.store_bytes, 128u * tiles * 16);
  EXPECT_EQ(r.shared.loads, 128u * tiles * 4);
  EXPECT_EQ(r.global.stores, 128u * tiles * 4);
}

}  // namespace
}  // namespace pipeline_test
