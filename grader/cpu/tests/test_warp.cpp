// CUDA's warp-level primitives on the CPU backend (convlab_cpu/warp.hpp): __syncwarp as a barrier
// of a warp's live lanes, the shuffles with PTX's lane arithmetic (width, out-of-range sources),
// the votes, the partial last warp, lanes that return early, a warp deadlock reported instead of
// a hang, the refusal of partial masks, and shuffles that count as no memory access. The kernels
// are CUDA source built through cu2cpp (warp_kernels.cu); every expectation is exact, and holds
// on a GPU for the same kernels (except the CPU backend's own messages and the value it gives for
// a lane that does not exist, which a GPU leaves undefined).
#include "warp_kernels.hpp"

#include <convlab_cpu/launch.hpp>
#include <convlab_cpu/records.hpp>
#include <convlab_cpu/warp.hpp>

#include <gtest/gtest.h>

#include "device_memory.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace warp_test {
namespace {

using convlab_cpu::Schedule;
using cpu_backend_test::Dev;

const Schedule kSchedules[] = {Schedule::in_order, Schedule::reverse, Schedule::shuffle};

// Resets the schedule the tests set (the other test files expect the default).
struct ScheduleGuard {
  ~ScheduleGuard() { convlab_cpu::set_schedule(Schedule::shuffle, 0, false); }
};

std::vector<int> iota_from(int first, std::size_t n) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = first + int(i);
  return v;
}

// One shuffle in every thread of 2 blocks of 64 threads, under every schedule; `want(i, lane)` is
// the index into in that thread i must read.
template <class Want>
void expect_shuffle(Shuffle op, int arg, int width, Want want) {
  ScheduleGuard guard;
  const int blocks = 2, threads = 64, n = blocks * threads;
  const auto x = iota_from(1000, n);
  Dev<int> in(x), out(n);
  for (Schedule s : kSchedules) {
    convlab_cpu::set_schedule(s, 3, false);
    ASSERT_EQ(shuffle_once(op, in.p, out.p, blocks, threads, 0xffffffffu, arg, width), cudaSuccess);
    const auto y = out.get(n);
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(y[i], x[want(i, i % 32)]) << "thread " << i << ", op " << int(op) << ", arg " << arg << ", width "
                                          << width << ", schedule " << int(s);
  }
}

TEST(Warp, ShuffleIdxReadsSrcLaneModuloWidthInItsSegment) {
  expect_shuffle(Shuffle::idx, 5, 32, [](int i, int lane) { return i - lane + 5; });
  expect_shuffle(Shuffle::idx, 37, 32, [](int i, int lane) { return i - lane + 5; });  // 37 mod 32
  expect_shuffle(Shuffle::idx, 3, 8, [](int i, int lane) { return i - lane % 8 + 3; });
  expect_shuffle(Shuffle::idx, -1, 16, [](int i, int lane) { return i - lane % 16 + 15; });  // -1 mod 16
  expect_shuffle(Shuffle::idx, 9, 1, [](int i, int) { return i; });
}

TEST(Warp, ShuffleUpAndDownKeepTheirOwnValueOutsideTheSegment) {
  expect_shuffle(Shuffle::up, 3, 32, [](int i, int lane) { return lane >= 3 ? i - 3 : i; });
  expect_shuffle(Shuffle::up, 3, 8, [](int i, int lane) { return lane % 8 >= 3 ? i - 3 : i; });
  expect_shuffle(Shuffle::down, 3, 16, [](int i, int lane) { return lane % 16 + 3 < 16 ? i + 3 : i; });
  expect_shuffle(Shuffle::down, 31, 32, [](int i, int lane) { return lane == 0 ? i + 31 : i; });
  expect_shuffle(Shuffle::down, 0, 32, [](int i, int) { return i; });
}

// Within the segment a xor pairs lanes; a laneMask reaching above the segment reads as PTX's
// shfl.sync.bfly does: a lane whose partner lies above the segment's end keeps its own value, one
// whose partner lies below reads it.
TEST(Warp, ShuffleXorPairsLanesAsPtxDoes) {
  expect_shuffle(Shuffle::xor_, 1, 32, [](int i, int lane) { return i - lane + (lane ^ 1); });
  expect_shuffle(Shuffle::xor_, 5, 8, [](int i, int lane) { return i - lane + (lane ^ 5); });
  expect_shuffle(Shuffle::xor_, 16, 16, [](int i, int lane) { return lane < 16 ? i : i - 16; });
}

TEST(Warp, ADownShuffleReductionSumsEachWarp) {
  ScheduleGuard guard;
  const int blocks = 3, threads = 128, n = blocks * threads;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = float((i * 7) % 19) - 9.0f;  // small integers: every sum exact
  Dev<float> in(x), out(n / 32);
  for (Schedule s : kSchedules) {
    convlab_cpu::set_schedule(s, 21, false);
    ASSERT_EQ(warp_sum_down(in.p, out.p, blocks, threads), cudaSuccess);
    const auto y = out.get(n / 32);
    for (int w = 0; w < n / 32; ++w) {
      float want = 0;
      for (int k = 0; k < 32; ++k) want += x[w * 32 + k];
      EXPECT_EQ(y[w], want) << "warp " << w << ", schedule " << int(s);
    }
  }
}

TEST(Warp, AXorButterflyGivesEveryLaneItsSegmentsSum) {
  ScheduleGuard guard;
  const int blocks = 2, threads = 96, n = blocks * threads;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = float(i % 23);
  Dev<float> in(x), out(n);
  for (int width : {32, 16, 8}) {
    for (Schedule s : kSchedules) {
      convlab_cpu::set_schedule(s, 4, false);
      ASSERT_EQ(butterfly_sum(in.p, out.p, blocks, threads, width), cudaSuccess);
      const auto y = out.get(n);
      for (int i = 0; i < n; ++i) {
        const int first = i / width * width;
        float want = 0;
        for (int k = 0; k < width; ++k) want += x[first + k];
        ASSERT_EQ(y[i], want) << "thread " << i << ", width " << width << ", schedule " << int(s);
      }
    }
  }
}

TEST(Warp, AnUpShuffleScanGivesInclusivePrefixSums) {
  ScheduleGuard guard;
  const int blocks = 2, threads = 64, n = blocks * threads;
  std::vector<int> x(n);
  for (int i = 0; i < n; ++i) x[i] = (i * 13) % 7 - 2;
  Dev<int> in(x), out(n);
  for (Schedule s : kSchedules) {
    convlab_cpu::set_schedule(s, 8, false);
    ASSERT_EQ(warp_scan(in.p, out.p, blocks, threads), cudaSuccess);
    const auto y = out.get(n);
    int run = 0;
    for (int i = 0; i < n; ++i) {
      run = (i % 32 == 0 ? 0 : run) + x[i];
      ASSERT_EQ(y[i], run) << "thread " << i << ", schedule " << int(s);
    }
  }
}

TEST(Warp, BroadcastFromLane5ReachesEveryLaneOfAFullAndAPartialWarp) {
  ScheduleGuard guard;
  const int threads = 48;  // warp 1 has 16 lanes
  std::vector<double> x(threads);
  for (int i = 0; i < threads; ++i) x[i] = 1.0 + i / 1024.0 + 1e-12 * i;  // needs every bit of a double
  Dev<double> in(x), out(threads);
  for (unsigned last_mask : {0xffffffffu, 0x0000ffffu}) {  // both name the partial warp's lanes
    for (Schedule s : kSchedules) {
      convlab_cpu::set_schedule(s, 5, false);
      ASSERT_EQ(broadcast_lane5(in.p, out.p, threads, last_mask), cudaSuccess);
      const auto y = out.get(threads);
      for (int i = 0; i < threads; ++i)
        ASSERT_EQ(y[i], x[i / 32 * 32 + 5]) << "thread " << i << ", mask " << last_mask << ", schedule " << int(s);
    }
  }
}

// A block of 48: the second warp has lanes 0-15. Shuffles that stay among them are exact; a lane
// whose source would be lane 16 or above (which does not exist: CUDA leaves the value undefined)
// gets kUndefinedLaneBits, never a plausible number.
TEST(Warp, APartialLastWarpShufflesAmongTheLanesThatExist) {
  ScheduleGuard guard;
  const int threads = 48;
  const auto x = iota_from(500, threads);
  Dev<int> in(x), out(threads);
  for (Schedule s : kSchedules) {
    convlab_cpu::set_schedule(s, 6, false);
    ASSERT_EQ(shuffle_once(Shuffle::xor_, in.p, out.p, 1, threads, 0xffffffffu, 9, 16), cudaSuccess);
    auto y = out.get(threads);
    for (int i = 0; i < threads; ++i) ASSERT_EQ(y[i], x[(i / 16 * 16) + ((i % 16) ^ 9)]) << "thread " << i;
    ASSERT_EQ(shuffle_once(Shuffle::down, in.p, out.p, 1, threads, 0xffffffffu, 8, 32), cudaSuccess);
    y = out.get(threads);
    for (int i = 0; i < threads; ++i) {
      const int lane = i % 32;
      if (i >= 32 && lane + 8 >= 16) {
        EXPECT_EQ(std::uint32_t(y[i]), convlab_cpu::kUndefinedLaneBits) << "thread " << i;
      } else {
        EXPECT_EQ(y[i], lane + 8 < 32 ? x[i + 8] : x[i]) << "thread " << i;
      }
    }
  }
}

TEST(Warp, EveryTypeCudaDocumentsShufflesWhole) {
  std::vector<int> i32(32);
  std::vector<unsigned> u32(32);
  std::vector<long long> i64(32);
  std::vector<unsigned long long> u64(32);
  std::vector<float> f32(32);
  std::vector<double> f64(32);
  for (int k = 0; k < 32; ++k) {
    i32[k] = -2147483647 + k * 1000003;
    u32[k] = 0xF0000000u + unsigned(k) * 0x01010101u;
    i64[k] = -0x7123456789ABCDEFll + k * 0x0101010101010101ll;
    u64[k] = 0xFEDCBA9876543210ull - unsigned(k) * 0x1111111111ull;
    f32[k] = -1.0e30f + float(k) * 3.0e28f;
    f64[k] = 1.0 / (k + 3) + 1e-300 * k;
  }
  const auto check = [](const auto& x) {
    using T = typename std::decay_t<decltype(x)>::value_type;
    Dev<T> in(x), out(32);
    ASSERT_EQ(swap_pairs(in.p, out.p), cudaSuccess);
    const auto y = out.get(32);
    for (int k = 0; k < 32; ++k)
      ASSERT_EQ(std::memcmp(&y[k], &x[k ^ 1], sizeof(T)), 0) << "lane " << k << ", " << sizeof(T) << "-byte type";
  };
  check(i32);
  check(u32);
  check(i64);
  check(u64);
  check(f32);
  check(f64);
}

TEST(Warp, SyncwarpOrdersSharedMemoryWithinAWarp) {
  ScheduleGuard guard;
  const int blocks = 2, threads = 128, n = blocks * threads;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = float(i) + 0.5f;
  Dev<float> in(x), out(2 * n);
  const auto wrong = [&](Schedule s, bool sync) {
    convlab_cpu::set_schedule(s, 12, false);
    EXPECT_EQ(rotate_through_shared(in.p, out.p, blocks, threads, sync), cudaSuccess);
    const auto y = out.get(2 * n);
    int bad = 0;
    for (int i = 0; i < n; ++i) {
      const int base = i / 32 * 32, lane = i % 32;
      bad += y[2 * i] != x[base + (lane + 1) % 32];
      bad += y[2 * i + 1] != 2.0f * x[base + (lane + 31) % 32];
    }
    return bad;
  };
  for (Schedule s : kSchedules) EXPECT_EQ(wrong(s, true), 0) << "schedule " << int(s);
  EXPECT_GT(wrong(Schedule::shuffle, false), 0);  // without the warp barriers the shuffled order shows
  EXPECT_GT(wrong(Schedule::reverse, false), 0);
}

// On a GPU (sm_70 and later) lanes that returned do not take part in __syncwarp: the others pass it.
// In order, thread 0 returns first, before any barrier: the block starts in the backend's direct
// mode and turns to fiber mode at the first __syncwarp.
TEST(Warp, LanesThatReturnedDoNotHoldUpSyncwarp) {
  ScheduleGuard guard;
  const auto x = iota_from(70, 32);
  Dev<int> in(x), out(32);
  for (Schedule s : kSchedules) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      convlab_cpu::set_schedule(s, seed, false);
      ASSERT_EQ(early_return_then_syncwarp(in.p, out.p), cudaSuccess) << "schedule " << int(s);
      const auto y = out.get(32);
      for (int lane = 0; lane < 32; ++lane) {
        int next = lane + 1;
        if (next % 3 == 0) ++next;
        const int want = lane % 3 == 0 ? -1 : next < 32 ? x[next] : x[1];
        ASSERT_EQ(y[lane], want) << "lane " << lane << ", schedule " << int(s);
      }
    }
  }
}

TEST(Warp, LanesSplitBetweenSyncwarpAndSyncthreadsFailAsADeadlock) {
  ScheduleGuard guard;
  Dev<int> out(64);
  for (Schedule s : kSchedules) {
    convlab_cpu::set_schedule(s, 2, false);
    const cudaError_t e = split_barriers(out.p);
    ASSERT_EQ(e, cudaErrorLaunchFailure) << "schedule " << int(s);
    const std::string msg = cudaGetErrorString(e);
    EXPECT_NE(msg.find("warp deadlock in kernel split_barriers_kernel"), std::string::npos) << msg;
    EXPECT_NE(msg.find("block (0,0,0), warp 0: thread ("), std::string::npos) << msg;
    EXPECT_NE(msg.find("warp_kernels.cu:92)"), std::string::npos) << msg;  // __syncwarp()
    EXPECT_NE(msg.find("waits at __syncthreads() ("), std::string::npos) << msg;
    EXPECT_NE(msg.find("warp_kernels.cu:94)"), std::string::npos) << msg;  // __syncthreads()
    EXPECT_NE(msg.find("neither barrier can complete"), std::string::npos) << msg;
    EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
}

TEST(Warp, VotesSeeTheLanesThatExist) {
  ScheduleGuard guard;
  const int threads = 40;  // warp 1 has 8 lanes
  std::vector<int> x(threads, 0);
  for (int i = 0; i < threads; ++i) x[i] = (i % 5 == 1) ? i : 0;
  for (int i = 32; i < threads; ++i) x[i] = 7;  // warp 1: every lane votes yes
  Dev<int> in(x), any(threads), all(threads);
  Dev<unsigned> ballots(threads);
  unsigned want0 = 0;
  for (int k = 0; k < 32; ++k) want0 |= (x[k] != 0 ? 1u : 0u) << k;
  for (bool exact : {false, true}) {
    for (Schedule s : kSchedules) {
      convlab_cpu::set_schedule(s, 7, false);
      ASSERT_EQ(votes(in.p, ballots.p, any.p, all.p, threads, exact), cudaSuccess);
      const auto b = ballots.get(threads);
      const auto a = any.get(threads), l = all.get(threads);
      for (int i = 0; i < threads; ++i) {
        EXPECT_EQ(b[i], i < 32 ? want0 : 0xFFu) << "thread " << i;
        EXPECT_EQ(a[i] != 0, true) << "thread " << i;
        EXPECT_EQ(l[i] != 0, i >= 32) << "thread " << i;
      }
    }
  }
}

TEST(Warp, APartialMaskIsRefusedWithTheKernelAndLine) {
  Dev<float> data(32);
  const cudaError_t e = partial_mask_shuffle(data.p);
  ASSERT_EQ(e, cudaErrorLaunchFailure);
  const std::string msg = cudaGetErrorString(e);
  EXPECT_NE(msg.find("kernel partial_mask_kernel"), std::string::npos) << msg;
  EXPECT_NE(msg.find("__shfl_down_sync at "), std::string::npos) << msg;
  EXPECT_NE(msg.find("warp_kernels.cu:111: mask 0x0000ffff: partial masks are not supported on the CPU backend"),
            std::string::npos)
      << msg;
  cudaGetLastError();
}

TEST(Warp, AWidthThatIsNotAPowerOfTwoIsRefused) {
  Dev<int> in(iota_from(0, 32)), out(32);
  const cudaError_t e = shuffle_once(Shuffle::idx, in.p, out.p, 1, 32, 0xffffffffu, 0, 12);
  ASSERT_EQ(e, cudaErrorLaunchFailure);
  const std::string msg = cudaGetErrorString(e);
  EXPECT_NE(msg.find("__shfl_sync at "), std::string::npos) << msg;
  EXPECT_NE(msg.find("width 12: it must be a power of two from 1 to 32"), std::string::npos) << msg;
  cudaGetLastError();
}

// A shuffle is no memory access: the reduction counts one global load per thread and one global
// store per warp, and nothing in shared memory, as a GPU's counters show.
TEST(Warp, ShufflesAreNotCountedAsMemoryAccesses) {
  if (!convlab_cpu::access_counts_available()) GTEST_SKIP() << "this build cannot count memory accesses";
  const int blocks = 2, threads = 64, n = blocks * threads;
  Dev<float> in(std::vector<float>(n, 1.0f)), out(n / 32);
  convlab_cpu::clear_records();
  ASSERT_EQ(warp_sum_down(in.p, out.p, blocks, threads), cudaSuccess);
  std::vector<convlab_cpu::LaunchRecord> found;
  for (const auto& r : convlab_cpu::launch_records())
    if (r.kernel == "warp_sum_down_kernel") found.push_back(r);
  ASSERT_EQ(found.size(), 1u);
  const auto& r = found[0];
  ASSERT_TRUE(r.counted);
  EXPECT_EQ(r.global.loads, std::uint64_t(n));
  EXPECT_EQ(r.global.stores, std::uint64_t(n / 32));
  EXPECT_EQ(r.shared.loads, 0u);
  EXPECT_EQ(r.shared.stores, 0u);
  EXPECT_EQ(r.barriers, 0u);  // warp barriers are not __syncthreads()
  EXPECT_EQ(out.get(n / 32), std::vector<float>(n / 32, 32.0f));
}

}  // namespace
}  // namespace warp_test
