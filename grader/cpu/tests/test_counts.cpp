// The CPU backend's records: each launch with exact counts of its memory accesses by
// memory space, and each memory call (convlab_cpu/records.hpp). The kernels are CUDA
// source built through cu2cpp, as a student's are; the expected counts are worked out
// from the kernels' code. Under AddressSanitizer (preset cpu-asan) the counts are not
// available, and the records must say so instead of reporting zeros.
#include "backend_kernels.hpp"
#include "count_kernels.hpp"

#include <convlab_cpu/launch.hpp>
#include <convlab_cpu/records.hpp>

#include <gtest/gtest.h>

#include "device_memory.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace count_test {
namespace {

using convlab_cpu::LaunchRecord;
using convlab_cpu::MemoryOp;
using convlab_cpu::MemoryRecord;
using convlab_cpu::MemorySpace;
using convlab_cpu::RangeAccess;

const bool kCounted = convlab_cpu::access_counts_available();

using cpu_backend_test::Dev;

std::vector<float> ramp(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = float((i * 37) % 101) / 16.0f - 3.0f;
  return v;
}

// The one launch of `kernel` since the last clear_records().
LaunchRecord only_launch(const std::string& kernel) {
  std::vector<LaunchRecord> found;
  for (const LaunchRecord& r : convlab_cpu::launch_records())
    if (r.kernel == kernel) found.push_back(r);
  EXPECT_EQ(found.size(), 1u) << "launches of " << kernel;
  return found.empty() ? LaunchRecord{} : found.front();
}

// The launch's accesses to the range at `base` (an allocation or a variable); zeros if none.
RangeAccess range_at(const LaunchRecord& r, const void* base) {
  for (const RangeAccess& a : r.ranges)
    if (a.base == base) return a;
  return RangeAccess{};
}

const RangeAccess* range_named(const LaunchRecord& r, const std::string& symbol) {
  for (const RangeAccess& a : r.ranges)
    if (a.symbol == symbol) return &a;
  return nullptr;
}

// Where counts are not available the record must say so and hold no counts.
void expect_not_counted(const LaunchRecord& r) {
  EXPECT_FALSE(r.counted);
  EXPECT_FALSE(r.global.any());
  EXPECT_FALSE(r.shared.any());
  EXPECT_FALSE(r.constant.any());
  EXPECT_TRUE(r.ranges.empty());
}

TEST(Counting, AvailableExceptUnderAddressSanitizer) {
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_FALSE(kCounted);
#else
  EXPECT_TRUE(kCounted);
#endif
}

TEST(Counting, NaiveKernelLoadsInputAndFilterOncePerTapInsideTheInput) {
  const int n = 1000, r = 4, block = 128;
  const auto x = ramp(n);
  const std::vector<float> f{0.5f, -1, 2, 0.25f, -0.75f, 1.5f, 1, 3, -2};
  Dev<float> in(x), filter(f), out{std::size_t(n)};
  convlab_cpu::clear_records();
  ASSERT_EQ(naive(in.p, filter.p, out.p, n, r, block), cudaSuccess);
  const LaunchRecord rec = only_launch("naive_kernel");
  EXPECT_EQ(rec.error, cudaSuccess);
  EXPECT_EQ(rec.grid.x, 8u);
  EXPECT_EQ(rec.block.x, 128u);
  EXPECT_EQ(rec.blocks_run, 8u);
  EXPECT_EQ(rec.threads_run, 8u * 128);
  EXPECT_EQ(rec.barriers, 0u);
  EXPECT_EQ(rec.dynamic_shared_bytes, 0u);
  EXPECT_EQ(rec.static_shared_bytes, 0u);
  EXPECT_EQ(rec.stream, nullptr);
  EXPECT_NE(rec.file.find("count_kernels.cu"), std::string::npos) << rec.file;
  if (!kCounted) return expect_not_counted(rec);
  ASSERT_TRUE(rec.counted);
  // Every tap reads the input and the filter, except the r(r+1)/2 taps at each end that fall outside.
  const std::uint64_t taps_inside = std::uint64_t(n) * (2 * r + 1) - std::uint64_t(r) * (r + 1);
  EXPECT_EQ(rec.global.loads, 2 * taps_inside);
  EXPECT_EQ(rec.global.load_bytes, 2 * taps_inside * sizeof(float));
  EXPECT_EQ(rec.global.stores, std::uint64_t(n));
  EXPECT_EQ(rec.global.store_bytes, std::uint64_t(n) * sizeof(float));
  EXPECT_EQ(rec.global.atomics, 0u);
  EXPECT_FALSE(rec.shared.any());
  EXPECT_FALSE(rec.constant.any());
  // Per allocation: which buffer was read and which written.
  ASSERT_EQ(rec.ranges.size(), 3u);
  EXPECT_EQ(range_at(rec, in.p).count.loads, taps_inside);
  EXPECT_EQ(range_at(rec, in.p).count.stores, 0u);
  EXPECT_EQ(range_at(rec, in.p).bytes, n * sizeof(float));
  EXPECT_EQ(range_at(rec, in.p).space, MemorySpace::global);
  EXPECT_EQ(range_at(rec, filter.p).count.loads, taps_inside);
  EXPECT_EQ(range_at(rec, out.p).count.loads, 0u);
  EXPECT_EQ(range_at(rec, out.p).count.stores, std::uint64_t(n));
}

TEST(Counting, TiledKernelReadsItsTileFromSharedMemoryAndItsFilterFromConstantMemory) {
  constexpr int R = kTiledRadius;
  const int n = 1000;  // not a multiple of the tile
  const int blocks = (n + kTile - 1) / kTile;
  const auto x = ramp(n);
  const std::vector<float> taps{1, -2, 3, 0.5f, -1, 2, 0.25f};
  Dev<float> in(x), out{std::size_t(n)};
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  convlab_cpu::clear_records();
  ASSERT_EQ(tiled(taps.data(), in.p, out.p, n, stream), cudaSuccess);
  const LaunchRecord rec = only_launch("tiled_kernel");
  const std::vector<MemoryRecord> mem = convlab_cpu::memory_records();
  // The result, so that the counts below are those of a working kernel.
  const auto y = out.get(n);
  for (int i = 0; i < n; ++i) {
    float want = 0;
    for (int k = 0; k <= 2 * R; ++k) want += (i - R + k >= 0 && i - R + k < n ? x[i - R + k] : 0.0f) * taps[k];
    ASSERT_NEAR(y[i], want, 1e-4f) << i;
  }
  EXPECT_EQ(rec.stream, stream);
  EXPECT_EQ(rec.blocks_run, std::uint64_t(blocks));
  EXPECT_EQ(rec.threads_run, std::uint64_t(blocks) * kTile);
  EXPECT_EQ(rec.barriers, std::uint64_t(blocks) * kTile);  // one per thread
  EXPECT_EQ(rec.static_shared_bytes, (kTile + 2 * R) * sizeof(float));
  // The filter's copy to constant memory, on the same stream, before the launch.
  ASSERT_EQ(mem.size(), 1u);
  EXPECT_EQ(mem[0].op, MemoryOp::memcpy_to_symbol);
  EXPECT_EQ(mem[0].symbol, "c_taps");
  EXPECT_EQ(mem[0].bytes, (2 * R + 1) * sizeof(float));
  EXPECT_EQ(mem[0].dst_space, MemorySpace::constant);
  EXPECT_EQ(mem[0].src_space, MemorySpace::other);
  EXPECT_EQ(mem[0].src, taps.data());
  EXPECT_TRUE(mem[0].async);
  EXPECT_EQ(mem[0].stream, stream);
  EXPECT_LT(mem[0].sequence, rec.sequence);
  cudaStreamDestroy(stream);
  if (!kCounted) return expect_not_counted(rec);
  // Global loads: one per output, plus the halo cells inside the input.
  std::uint64_t halo = 0;
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < R; ++t) {
      halo += b * kTile + t - R >= 0;                  // left halo of block b
      halo += b * kTile + (kTile - R + t) + R < n;  // right halo
    }
  EXPECT_EQ(rec.global.loads, std::uint64_t(n) + halo);
  EXPECT_LE(double(rec.global.loads) / n, 1.0 + 2.0 * R / kTile);
  EXPECT_EQ(rec.global.stores, std::uint64_t(n));
  EXPECT_EQ(range_at(rec, in.p).count.loads, std::uint64_t(n) + halo);
  EXPECT_EQ(range_at(rec, out.p).count.stores, std::uint64_t(n));
  // Every thread stores its element, the first and last R also a halo cell; 2R+1 taps per output.
  EXPECT_EQ(rec.shared.stores, std::uint64_t(blocks) * (kTile + 2 * R));
  EXPECT_EQ(rec.shared.loads, std::uint64_t(n) * (2 * R + 1));
  EXPECT_EQ(rec.shared.load_bytes, std::uint64_t(n) * (2 * R + 1) * sizeof(float));
  EXPECT_EQ(rec.constant.loads, std::uint64_t(n) * (2 * R + 1));
  EXPECT_EQ(rec.constant.stores, 0u);
  const RangeAccess* c = range_named(rec, "c_taps");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->space, MemorySpace::constant);
  EXPECT_EQ(c->bytes, (2 * R + 1) * sizeof(float));
  EXPECT_EQ(c->count.loads, std::uint64_t(n) * (2 * R + 1));
  EXPECT_EQ(rec.ranges.size(), 3u);  // input, output, c_taps: no filter in global memory
}

TEST(Counting, ConstantStructFieldsAtConstantOffsetsAreCounted) {
  const int threads = 256;
  const Affine a{2.0f, 0.5f, 200};
  std::vector<float> h(threads, 1.0f);
  Dev<float> data(h);
  convlab_cpu::clear_records();
  ASSERT_EQ(affine(a, data.p, threads), cudaSuccess);
  const LaunchRecord rec = only_launch("affine_kernel");
  const auto mem = convlab_cpu::memory_records();
  const auto got = data.get(threads);
  for (int i = 0; i < threads; ++i) ASSERT_EQ(got[i], i < a.n ? 2.5f : 1.0f) << i;
  ASSERT_EQ(mem.size(), 1u);
  EXPECT_EQ(mem[0].symbol, "c_affine");
  EXPECT_EQ(mem[0].bytes, sizeof(Affine));
  EXPECT_FALSE(mem[0].async);
  if (!kCounted) return expect_not_counted(rec);
  // Every thread reads n; those below n also scale and bias.
  EXPECT_EQ(rec.constant.loads, std::uint64_t(threads) + 2 * a.n);
  EXPECT_EQ(rec.constant.load_bytes, (std::uint64_t(threads) + 2 * a.n) * 4);
  EXPECT_EQ(rec.global.loads, std::uint64_t(a.n));
  EXPECT_EQ(rec.global.stores, std::uint64_t(a.n));
}

TEST(Counting, InitialisedConstantVariablesKeepTheirValuesAndAreCounted) {
  const int n = 100;
  Dev<float> out{std::size_t(n)};
  convlab_cpu::clear_records();
  ASSERT_EQ(lut(out.p, n), cudaSuccess);
  const LaunchRecord rec = only_launch("lut_kernel");
  const auto y = out.get(n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], float(i % 4 + 1) * 2) << i;
  if (!kCounted) return expect_not_counted(rec);
  EXPECT_EQ(rec.constant.loads, 2u * n);  // c_lut[i % 4] and c_stride
  ASSERT_NE(range_named(rec, "c_lut"), nullptr);
  ASSERT_NE(range_named(rec, "c_stride"), nullptr);
  EXPECT_EQ(range_named(rec, "c_stride")->count.loads, std::uint64_t(n));
}

TEST(Counting, BarriersAreCountedPerThread) {
  const dim3 grid(3, 2), block(8, 4);
  const std::size_t threads = 3 * 2 * 8 * 4;
  Dev<float> out{threads};
  convlab_cpu::clear_records();
  ASSERT_EQ(two_barriers(out.p, grid, block), cudaSuccess);
  const LaunchRecord rec = only_launch("two_barriers_kernel");
  EXPECT_EQ(rec.barriers, threads * 2);  // blocks x threads per block x barriers
  EXPECT_EQ(rec.blocks_run, 6u);
  EXPECT_EQ(rec.threads_run, threads);
  EXPECT_EQ(rec.grid.y, 2u);
  EXPECT_EQ(rec.block.y, 4u);
  EXPECT_EQ(rec.static_shared_bytes, 2 * 64 * sizeof(float));  // s_a and s_b, declared in one statement
  const auto y = out.get(threads);
  for (std::size_t i = 0; i < threads; ++i) ASSERT_EQ(y[i], float((i % 32 + 1) % 32)) << i;
  if (!kCounted) return expect_not_counted(rec);
  EXPECT_EQ(rec.shared.stores, 2 * threads);
  EXPECT_EQ(rec.shared.loads, 2 * threads);
  EXPECT_EQ(rec.global.stores, threads);
  EXPECT_EQ(rec.global.loads, 0u);
}

TEST(Counting, SharedScalarAndSharedAtomicsAreCounted) {
  const int n = 1000, block = 128, blocks = 8;
  const auto x = ramp(n);
  Dev<float> in(x), sums{std::size_t(blocks)};
  convlab_cpu::clear_records();
  ASSERT_EQ(block_sum(in.p, sums.p, n, block), cudaSuccess);
  const LaunchRecord rec = only_launch("block_sum_kernel");
  EXPECT_EQ(rec.static_shared_bytes, sizeof(float));
  EXPECT_EQ(rec.barriers, std::uint64_t(blocks) * block * 2);
  if (!kCounted) return expect_not_counted(rec);
  EXPECT_EQ(rec.shared.stores, std::uint64_t(blocks));  // s_total = 0 by thread 0
  EXPECT_EQ(rec.shared.atomics, std::uint64_t(n));
  EXPECT_EQ(rec.shared.loads, std::uint64_t(blocks));   // read back by thread 0
  EXPECT_EQ(rec.global.loads, std::uint64_t(n));
  EXPECT_EQ(rec.global.stores, std::uint64_t(blocks));
  EXPECT_EQ(rec.global.atomics, 0u);
}

TEST(Counting, DeviceVariablesAreGlobalMemoryWithTheirName) {
  const int n = 1000;
  std::vector<int> flags(n);
  unsigned want = 0;
  for (int i = 0; i < n; ++i) want += (flags[i] = i % 3 == 0);
  Dev<int> d_flags(flags);
  unsigned hits = 0;
  convlab_cpu::clear_records();
  ASSERT_EQ(count_hits(d_flags.p, n, &hits), cudaSuccess);
  EXPECT_EQ(hits, want);
  const auto mem = convlab_cpu::memory_records();
  ASSERT_EQ(mem.size(), 2u);
  EXPECT_EQ(mem[0].op, MemoryOp::memcpy_to_symbol);
  EXPECT_EQ(mem[0].dst_space, MemorySpace::global);
  EXPECT_EQ(mem[1].op, MemoryOp::memcpy_from_symbol);
  EXPECT_EQ(mem[1].symbol, "d_hits");
  EXPECT_EQ(mem[1].src_space, MemorySpace::global);
  EXPECT_EQ(mem[1].dst, &hits);
  EXPECT_EQ(mem[1].kind, cudaMemcpyDeviceToHost);
  const LaunchRecord rec = only_launch("count_hits_kernel");
  if (!kCounted) return expect_not_counted(rec);
  EXPECT_EQ(rec.global.atomics, std::uint64_t(want));
  EXPECT_EQ(rec.global.loads, std::uint64_t(n));
  const RangeAccess* d = range_named(rec, "d_hits");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->space, MemorySpace::global);
  EXPECT_EQ(d->count.atomics, std::uint64_t(want));
  EXPECT_EQ(d->count.loads, 0u);
}

TEST(Counting, DynamicSharedMemoryDeclaredAtNamespaceScope) {
  const int blocks = 4, block = 64;
  const auto x = ramp(blocks * block);
  Dev<float> in(x), out{std::size_t(blocks * block)};
  convlab_cpu::clear_records();
  ASSERT_EQ(reverse_blocks(in.p, out.p, blocks, block), cudaSuccess);
  const auto y = out.get(blocks * block);
  for (int i = 0; i < blocks * block; ++i) ASSERT_EQ(y[i], x[i / block * block + block - 1 - i % block]) << i;
  const LaunchRecord rec = only_launch("reverse_kernel");
  EXPECT_EQ(rec.dynamic_shared_bytes, block * sizeof(float));
  EXPECT_EQ(rec.static_shared_bytes, 0u);
  if (!kCounted) return expect_not_counted(rec);
  EXPECT_EQ(rec.shared.stores, std::uint64_t(blocks * block));
  EXPECT_EQ(rec.shared.loads, std::uint64_t(blocks * block));
}

TEST(Counting, AtomicsOnGlobalMemoryAreCountedApartFromLoadsAndStores) {
  const int n = 20000;
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = (i * 7919) % 256;
  Dev<int> values(v);
  Dev<unsigned> bins(std::vector<unsigned>(256, 0));
  convlab_cpu::clear_records();
  ASSERT_EQ(backend_test::histogram(values.p, n, bins.p), cudaSuccess);
  const LaunchRecord rec = only_launch("histogram_kernel");
  if (!kCounted) return expect_not_counted(rec);
  EXPECT_EQ(rec.global.atomics, std::uint64_t(n));
  EXPECT_EQ(range_at(rec, bins.p).count.atomics, std::uint64_t(n));
  EXPECT_EQ(range_at(rec, bins.p).count.loads, 0u);
  EXPECT_EQ(range_at(rec, bins.p).count.stores, 0u);
  EXPECT_EQ(range_at(rec, values.p).count.loads, std::uint64_t(n));
}

TEST(Records, FailedConfigurationIsRecordedWithNothingRun) {
  convlab_cpu::clear_records();
  EXPECT_EQ(backend_test::launch_shape(dim3(2), dim3(2048), 0), cudaErrorInvalidConfiguration);
  const LaunchRecord rec = only_launch("empty_kernel");
  EXPECT_EQ(rec.error, cudaErrorInvalidConfiguration);
  EXPECT_EQ(rec.block.x, 2048u);
  EXPECT_EQ(rec.blocks_run, 0u);
  EXPECT_EQ(rec.threads_run, 0u);
}

TEST(Records, MemoryCallsAreRecordedInOrderWithKindSizeAndStream) {
  convlab_cpu::clear_records();
  std::vector<float> h(64, 1.0f);
  void* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 256), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d, h.data(), 256, cudaMemcpyHostToDevice), cudaSuccess);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(h.data(), d, 128, cudaMemcpyDeviceToHost, s), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(d, 0, 64, s), cudaSuccess);
  ASSERT_EQ(cudaMemset(d, 7, 16), cudaSuccess);
  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 32), cudaSuccess);
  EXPECT_EQ(cudaFree(pinned), cudaErrorInvalidDevicePointer);  // not device memory
  cudaGetLastError();
  ASSERT_EQ(cudaFreeHost(pinned), cudaSuccess);
  ASSERT_EQ(cudaFree(d), cudaSuccess);
  EXPECT_EQ(cudaFree(d), cudaErrorInvalidDevicePointer);  // twice
  cudaGetLastError();
  cudaStreamDestroy(s);

  const std::vector<MemoryRecord> m = convlab_cpu::memory_records();
  ASSERT_EQ(m.size(), 10u);
  for (std::size_t i = 1; i < m.size(); ++i) EXPECT_LT(m[i - 1].sequence, m[i].sequence);
  EXPECT_EQ(m[0].op, MemoryOp::malloc);
  EXPECT_EQ(m[0].dst, d);
  EXPECT_EQ(m[0].bytes, 256u);
  EXPECT_EQ(m[0].dst_space, MemorySpace::global);

  EXPECT_EQ(m[1].op, MemoryOp::memcpy);
  EXPECT_EQ(m[1].kind, cudaMemcpyHostToDevice);
  EXPECT_EQ(m[1].dst, d);
  EXPECT_EQ(m[1].src, h.data());
  EXPECT_EQ(m[1].bytes, 256u);
  EXPECT_EQ(m[1].dst_space, MemorySpace::global);
  EXPECT_EQ(m[1].src_space, MemorySpace::other);
  EXPECT_FALSE(m[1].async);
  EXPECT_EQ(m[1].stream, nullptr);

  EXPECT_EQ(m[2].op, MemoryOp::memcpy);
  EXPECT_EQ(m[2].kind, cudaMemcpyDeviceToHost);
  EXPECT_EQ(m[2].bytes, 128u);
  EXPECT_EQ(m[2].src_space, MemorySpace::global);
  EXPECT_TRUE(m[2].async);
  EXPECT_EQ(m[2].stream, s);

  EXPECT_EQ(m[3].op, MemoryOp::memset);
  EXPECT_EQ(m[3].value, 0);
  EXPECT_EQ(m[3].bytes, 64u);
  EXPECT_TRUE(m[3].async);
  EXPECT_EQ(m[3].stream, s);
  EXPECT_EQ(m[4].op, MemoryOp::memset);
  EXPECT_EQ(m[4].value, 7);
  EXPECT_FALSE(m[4].async);

  EXPECT_EQ(m[5].op, MemoryOp::malloc_host);
  EXPECT_EQ(m[5].bytes, 32u);
  EXPECT_EQ(m[6].op, MemoryOp::free);  // cudaFree of pinned host memory: refused
  EXPECT_EQ(m[6].result, cudaErrorInvalidDevicePointer);
  EXPECT_EQ(m[7].op, MemoryOp::free_host);
  EXPECT_EQ(m[7].result, cudaSuccess);
  EXPECT_EQ(m[8].op, MemoryOp::free);
  EXPECT_EQ(m[8].dst, d);
  EXPECT_EQ(m[8].result, cudaSuccess);
  EXPECT_EQ(m[9].result, cudaErrorInvalidDevicePointer);
  EXPECT_STREQ(convlab_cpu::to_string(m[9].op), "free");

  convlab_cpu::clear_records();
  EXPECT_TRUE(convlab_cpu::memory_records().empty());
  EXPECT_TRUE(convlab_cpu::launch_records().empty());
}

TEST(Records, ListsAreBoundedAndSayWhatTheyDropped) {
  Dev<float> d{4};
  convlab_cpu::clear_records();
  convlab_cpu::set_record_limit(3);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(cudaMemset(d.p, i, 16), cudaSuccess);
  const auto m = convlab_cpu::memory_records();
  convlab_cpu::set_record_limit(0);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[2].value, 2);  // the first three are kept
  EXPECT_EQ(convlab_cpu::dropped_records(), 2u);
  convlab_cpu::clear_records();
  EXPECT_EQ(convlab_cpu::dropped_records(), 0u);
}

TEST(Records, SpaceOfAnAddress) {
  Dev<float> d{16};
  float host = 0;
  EXPECT_EQ(convlab_cpu::space_of(d.p), MemorySpace::global);
  EXPECT_EQ(convlab_cpu::space_of(d.p + 15), MemorySpace::global);
  EXPECT_EQ(convlab_cpu::space_of(&host), MemorySpace::other);
  EXPECT_STREQ(convlab_cpu::to_string(MemorySpace::constant), "constant");
}

TEST(SharedMemoryLimits, StaticSharedMemoryOver48KBFailsTheLaunch) {
  Dev<float> out{1024};
  convlab_cpu::clear_records();
  ASSERT_EQ(too_much_static_shared(out.p), cudaErrorLaunchFailure);
  const std::string msg = cudaGetErrorString(cudaErrorLaunchFailure);
  EXPECT_NE(msg.find("too_much_static_shared_kernel"), std::string::npos) << msg;
  EXPECT_NE(msg.find("52000 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("48 KB"), std::string::npos) << msg;
  EXPECT_EQ(only_launch("too_much_static_shared_kernel").error, cudaErrorLaunchFailure);
  cudaGetLastError();
}

TEST(SharedMemoryLimits, StaticPlusDynamicSharedMemoryFollowsTheGpuRule) {
  Dev<float> out{1024};
  // 40 KB static + 8 KB dynamic = 48 KB: allowed.
  ASSERT_EQ(static_and_dynamic(out.p, 8 * 1024, 0), cudaSuccess);
  EXPECT_EQ(out.get(32)[5], 5.0f);
  // 40 KB + 16 KB without raising the kernel's limit: refused, as by a GPU.
  ASSERT_EQ(static_and_dynamic(out.p, 16 * 1024, 0), cudaErrorLaunchFailure);
  const std::string msg = cudaGetErrorString(cudaErrorLaunchFailure);
  EXPECT_NE(msg.find("cudaFuncAttributeMaxDynamicSharedMemorySize"), std::string::npos) << msg;
  cudaGetLastError();
  // Raised to 64 KB: 40 KB + 64 KB fit in 227 KB.
  convlab_cpu::clear_records();
  ASSERT_EQ(static_and_dynamic(out.p, 64 * 1024, 64 * 1024), cudaSuccess);
  const LaunchRecord rec = only_launch("static_and_dynamic_kernel");
  EXPECT_EQ(rec.static_shared_bytes, 40u * 1024);
  EXPECT_EQ(rec.dynamic_shared_bytes, 64u * 1024);
}

}  // namespace
}  // namespace count_test
