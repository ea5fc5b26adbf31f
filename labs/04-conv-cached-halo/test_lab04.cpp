// Lab 04's graders. The cases live here, in one place; the checking is the shared conv
// testbed (grader/judge/src/conv_testbed.cpp); points and thresholds are in grading.json.
#include "lab04.hpp"

#include <convlab/baselines.hpp>
#include <convlab/conv_technique.hpp>
#include <convlab/conv_testbed.hpp>
#include <convlab/device_buffer.hpp>
#include <convlab/record.hpp>
#include <convlab/testbed.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <iterator>
#include <memory>

namespace {

using namespace convlab;

void student_cached1d(const Conv1dArgs& a) {
  lab04::conv1d_cached(a.d_in, a.h_filter, a.d_out, {a.n, a.radius}, a.stream);
}
void student_cached2d(const Conv2dArgs& a) {
  lab04::conv2d_cached(a.d_in, a.h_filter, a.d_out, {a.width, a.height, a.radius}, a.stream);
}
void student_fast1d(const Conv1dArgs& a) { lab04::conv1d_fast(a.d_in, a.h_filter, a.d_out, {a.n, a.radius}, a.stream); }
void student_fast2d(const Conv2dArgs& a) {
  lab04::conv2d_fast(a.d_in, a.h_filter, a.d_out, {a.width, a.height, a.radius}, a.stream);
}

// The separable kernel's scratch buffer belongs to the grader: allocated once per problem
// size (the speed grader's first call is its correctness run, outside the timed region).
// For correctness it is filled with NaN before every call, so a row pass that leaves part
// of it unwritten shows in the output.
Conv2dFn student_separable(bool poison_scratch) {
  auto tmp = std::make_shared<DeviceBuffer<float>>();
  return [tmp, poison_scratch](const Conv2dArgs& a) {
    const std::size_t count = std::size_t(a.width) * a.height;
    if (tmp->size() != count) *tmp = DeviceBuffer<float>(count);
    if (poison_scratch) CONVLAB_CUDA_CHECK(cudaMemsetAsync(tmp->get(), 0xFF, tmp->bytes(), a.stream));
    lab04::conv2d_separable(a.d_in, a.h_row_filter, a.h_col_filter, tmp->get(), a.d_out,
                            {a.width, a.height, a.radius}, a.stream);
  };
}

// Tile sizes fixed by the contract: failures next to a tile edge are named as such.
const ConvCheckOptions kCached1dTiles{lab04::kTile1d, 0};
const ConvCheckOptions kCached2dTiles{lab04::kTileDim, lab04::kTileDim};
ConvCheckOptions separable_filter() {
  ConvCheckOptions o;
  o.filter = FilterKind::separable;
  return o;
}

// Shapes chosen to break the usual mistakes: one element, fewer elements than a tile,
// radius 0 and the largest (15), a radius larger than the input, sizes one off the tile
// (256 in 1D, 32 in 2D) and off a float4 (widths that are not multiples of 4 make row starts
// that are not 16-byte aligned; the grader's guard zones misalign the input pointer too),
// radii on both sides of the fast kernels' compiled range (0..8), and one input of 64 MB,
// larger than the L2 cache.
const Conv1dCase kCached1dCases[] = {
    {1, 0},     {1, 3},      {7, 2},      {100, 0},    {255, 4},        {256, 4},
    {257, 4},   {40, 15},    {513, 15},   {4097, 7},   {65537, 1},      {1000003, 3},
    {(1 << 24) + 5, 2},
};
const Conv2dCase kCached2dCases[] = {
    {1, 1, 0},   {1, 1, 2},     {1, 37, 1},    {37, 1, 1},    {5, 3, 4},       {31, 33, 1},
    {32, 32, 2}, {33, 31, 3},   {64, 64, 0},   {100, 75, 3},  {127, 129, 5},   {97, 70, 15},
    {1023, 517, 3}, {4099, 4001, 1},
    {3, 70001, 2},  // taller than 65535 rows: a grid that gives each row its own block in y cannot launch
};
const Conv2dCase kSeparableCases[] = {
    {1, 1, 0},    {1, 37, 2},     {37, 1, 2},    {5, 3, 4},     {33, 31, 1},     {100, 75, 3},
    {127, 129, 8}, {514, 17, 5},  {130, 67, 9},  {61, 43, 15},  {1023, 517, 6},  {4099, 4001, 2},
    {3, 70001, 2},
};
const Conv1dCase kFast1dCases[] = {
    {1, 0},    {1, 8},      {2, 1},      {3, 2},      {5, 3},      {6, 8},       {9, 4},
    {101, 5},  {1021, 6},   {4095, 7},   {4096, 8},   {4097, 1},   {8193, 2},    {40, 9},
    {12345, 15}, {1000003, 3}, {(1 << 24) + 5, 8},
};
const Conv2dCase kFast2dCases[] = {
    {1, 1, 0},     {1, 1, 8},     {2, 3, 1},      {3, 5, 2},     {5, 3, 3},       {7, 9, 4},
    {33, 17, 5},   {129, 33, 6},  {130, 34, 7},   {131, 35, 8},  {127, 65, 1},    {257, 97, 2},
    {95, 66, 9},   {61, 43, 15},  {1023, 517, 3}, {1031, 1029, 7}, {4099, 4001, 1},
};

// The fast kernels are compiled for radii 0 to 8 (the contract's FAST_MAX_RADIUS in the starter);
// above, the design falls back to one thread per output (the handout). Their technique graders
// judge every launch of the slot up to that radius; the fallback's launches are not held to
// register tiling (TestRecord::outside_technique).
constexpr int kFastCompiledRadius = 8;
void outside_technique_above_compiled(int radius) {
  if (radius > kFastCompiledRadius) current_record().outside_technique = true;
}

// Speed: inputs of 256 MB (five times a 50 MB L2), a small and a large radius.
const Conv1dCase kSpeed1d[] = {{(1 << 26) + 3, 1}, {(1 << 26) + 3, 8}};
const Conv2dCase kSpeedCached2d[] = {{8191, 8193, 1}, {8191, 8193, 4}};
const Conv2dCase kSpeedSeparable[] = {{8191, 8193, 2}, {8191, 8193, 8}};
const Conv2dCase kSpeedFast2d[] = {{8191, 8193, 1}, {8191, 8193, 7}};

void register_lab04(Registry& reg) {
  // The cached tiles' correctness on the common testbed: on the CPU backend, where no speed test
  // runs, a case of a million outputs or more is held to the speed grader's traffic rule
  // (traffic_vs_baseline), so a switch to a plain kernel on large problems fails there too.
  add_conv1d_correctness(reg, "cached1d", student_cached1d, {std::begin(kCached1dCases), std::end(kCached1dCases)},
                         [](int) { return kCached1dTiles; });
  add_conv2d_correctness(reg, "cached2d", student_cached2d, {std::begin(kCached2dCases), std::end(kCached2dCases)},
                         [](int) { return kCached2dTiles; });
  const GraderSpec* separable_speed = reg.spec().find_grader("speedup.separable");
  const double separable_traffic = separable_speed ? separable_speed->traffic_vs_baseline : 0;
  for (const auto& c : kSeparableCases)
    reg.gpu("correctness", "separable", c.name(),
            [c, separable_traffic] {
              outside_technique_above_compiled(c.radius);
              const double taps = double(2 * c.radius + 1) * double(2 * c.radius + 1);  // the direct 2D filter's
              if (check_conv2d(student_separable(true), c, separable_filter()))
                expect_counted_traffic_vs_naive("separable", c.name(), separable_traffic, false,
                                                double(c.width) * c.height, taps);
            });
  for (const auto& c : kFast1dCases)
    reg.gpu("correctness", "fast1d", c.name(), [c] {
      outside_technique_above_compiled(c.radius);
      check_conv1d(student_fast1d, c);
    });
  for (const auto& c : kFast2dCases)
    reg.gpu("correctness", "fast2d", c.name(), [c] {
      outside_technique_above_compiled(c.radius);
      check_conv2d(student_fast2d, c);
    });

  const LabSpec& spec = reg.spec();
  const std::string naive = "naive baseline";
  for (const auto& c : kSpeed1d) {
    reg.gpu("speedup", "cached1d", c.name(), [c, &spec, naive] {
      check_conv1d_speed(student_cached1d, baseline::conv1d_naive, naive, c, spec.grader("speedup.cached1d"));
    });
    reg.gpu("speedup", "fast1d", c.name(), [c, &spec, naive] {
      check_conv1d_speed(student_fast1d, baseline::conv1d_naive, naive, c, spec.grader("speedup.fast1d"));
    });
  }
  for (const auto& c : kSpeedCached2d)
    reg.gpu("speedup", "cached2d", c.name(), [c, &spec, naive] {
      check_conv2d_speed(student_cached2d, baseline::conv2d_naive, naive, c, spec.grader("speedup.cached2d"));
    });
  for (const auto& c : kSpeedSeparable)
    reg.gpu("speedup", "separable", c.name(), [c, &spec] {
      check_conv2d_speed(student_separable(false), baseline::conv2d_naive,
                         "naive baseline (direct 2D, the same outer-product filter)", c,
                         spec.grader("speedup.separable"), separable_filter());
    });
  for (const auto& c : kSpeedFast2d)
    reg.gpu("speedup", "fast2d", c.name(), [c, &spec, naive] {
      check_conv2d_speed(student_fast2d, baseline::conv2d_naive, naive, c, spec.grader("speedup.fast2d"));
    });

  // The techniques. Cached tiles: a shared tile of the block's own inputs (no halo in shared
  // memory), a barrier, most taps read from it and the halo taps from global memory (the caches).
  // The filter may sit in a __constant__ array or in the kernel's parameters (a constant bank too),
  // but never in global memory.
  const auto no_global_filter = [](const TechniqueView& v) -> std::string {
    std::uint64_t allocations = 0;
    for (const auto& c : v.calls()) allocations += c.evidence.allocations;
    if (allocations == 0 && v.transfers(wire::Transfer::Kind::to_device) == 0) return {};
    return "the launcher copied data to global memory it allocated (cudaMalloc + cudaMemcpy): the filter belongs in "
           "constant memory (a __constant__ array or the kernel's parameters)";
  };
  const int r = 4;
  const double taps1 = 2 * r + 1, taps2 = taps1 * taps1;
  add_conv1d_technique(reg, "cached1d", student_cached1d, {100003, r},
                       "a tile of the block's kTile1d inputs in shared memory, a __syncthreads() before it is read, "
                       "the taps inside the tile read from it and the halo taps from global memory (the caches)",
                       all_of({shared_tile(lab04::kTile1d * 4.0), taps_from_shared(0.7),
                               global_loads_per_output(1 + 0.5 * taps1), no_global_filter}));
  add_conv2d_technique(reg, "cached2d", student_cached2d, {1000, 700, r},
                       "a tile of the block's kTileDim x kTileDim inputs in shared memory, a __syncthreads() before "
                       "it is read, the taps inside the tile read from it and the halo taps from global memory",
                       all_of({shared_tile(double(lab04::kTileDim) * lab04::kTileDim * 4), taps_from_shared(0.5),
                               global_loads_per_output(1 + 0.5 * taps2), no_global_filter}),
                       kCached2dTiles);
  // Separable: two passes through d_tmp, each of 2r+1 taps per output: about 2(2r+1) loads per
  // output in all, where the direct computation makes (2r+1)^2.
  const auto two_pass_loads = [taps1](const TechniqueView& v) -> std::string {
    if (!v.counted()) return {};
    const double loads = v.per_output(&wire::KernelLaunch::global_loads) + v.per_output(&wire::KernelLaunch::shared_loads);
    if (loads <= 3 * taps1) return {};
    char buf[200];
    std::snprintf(buf, sizeof buf, "%.3g loads per output, where two passes of %.0f taps need about %.0f", loads, taps1,
                  2 * taps1);
    return buf;
  };
  add_separable_technique(
      reg, "separable",
      [](const Conv2dArgs& a, float* tmp) {
        lab04::conv2d_separable(a.d_in, a.h_row_filter, a.h_col_filter, tmp, a.d_out, {a.width, a.height, a.radius},
                                a.stream);
      },
      {1000, 700, r},
      "two passes of 2r+1 taps: a row pass into d_tmp, then a column pass from it (2(2r+1) multiply-adds per "
      "output instead of (2r+1)^2)",
      all_of({launches(2, 4), two_pass_loads, no_global_filter}));
  // The extra credit: register tiling, several outputs per thread.
  add_conv1d_technique(reg, "fast1d", student_fast1d, {1000003, r},
                       "register tiling: each thread computes several outputs from values it holds in registers",
                       outputs_per_thread(2));
  add_conv2d_technique(reg, "fast2d", student_fast2d, {1000, 700, r},
                       "register tiling: each thread computes several outputs from values it holds in registers",
                       outputs_per_thread(2));

  // The contract refuses bad problems before touching the GPU.
  reg.cpu("cpu", "contract", "rejects_bad_problems", [] {
    const float f[1] = {1.0f};
    for (const lab04::Conv1dProblem p : {lab04::Conv1dProblem{0, 1}, lab04::Conv1dProblem{10, -1},
                                         lab04::Conv1dProblem{10, lab04::kMaxRadius + 1}}) {
      EXPECT_THROW(lab04::conv1d_cached(nullptr, f, nullptr, p, nullptr), std::invalid_argument);
      EXPECT_THROW(lab04::conv1d_fast(nullptr, f, nullptr, p, nullptr), std::invalid_argument);
    }
    for (const lab04::Conv2dProblem p :
         {lab04::Conv2dProblem{0, 5, 1}, lab04::Conv2dProblem{5, 0, 1}, lab04::Conv2dProblem{65536, 65536, 1},
          lab04::Conv2dProblem{1, lab04::kMaxHeight + 1, 1}, lab04::Conv2dProblem{5, 5, -2},
          lab04::Conv2dProblem{5, 5, lab04::kMaxRadius + 1}}) {
      EXPECT_THROW(lab04::conv2d_cached(nullptr, f, nullptr, p, nullptr), std::invalid_argument);
      EXPECT_THROW(lab04::conv2d_fast(nullptr, f, nullptr, p, nullptr), std::invalid_argument);
      EXPECT_THROW(lab04::conv2d_separable(nullptr, f, f, nullptr, nullptr, p, nullptr), std::invalid_argument);
    }
  });

  // The separable graders' filter: the factors' products are exact in float, so the golden
  // model's 2D filter is exactly the one the two passes apply.
  reg.cpu("cpu", "testbed", "separable_filter_is_an_exact_outer_product", [] {
    const auto row = separable_factor(31, 1), col = separable_factor(31, 2);
    const auto f = outer_product(col, row);
    ASSERT_EQ(f.size(), 31u * 31u);
    for (std::size_t i = 0; i < col.size(); ++i)
      for (std::size_t j = 0; j < row.size(); ++j) {
        EXPECT_NE(row[j], 0.0f);
        EXPECT_EQ(double(f[i * 31 + j]), double(col[i]) * double(row[j])) << "tap (" << i << ", " << j << ")";
      }
    EXPECT_EQ(separable_factor(31, 1), row);  // seeded: the same taps every time
  });
}

}  // namespace

CONVLAB_LAB_MAIN(register_lab04)
