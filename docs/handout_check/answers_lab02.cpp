// Lab 02's worked numbers: constant-memory capacity (from the contract's
// kConstantMemoryBytes), warp-wide constant reads, the OP/B model of lab 03's
// op_ratio.hpp, and the 3D-convolution exercise.
#include "answers.hpp"

#include "lab02.hpp"
#include "op_ratio.hpp"

#include <set>
#include <string>
#include <vector>

namespace convlab::handout {

namespace {

// The largest radius whose filter of (2r+1)^dims floats fits in `bytes`.
int largest_radius(long long bytes, int dims) {
  int r = 0;
  const auto taps = [dims](int rr) {
    long long t = 1;
    for (int d = 0; d < dims; ++d) t *= 2 * rr + 1;
    return t;
  };
  while (taps(r + 1) * 4 <= bytes) ++r;
  return r;
}

// Distinct constant-memory addresses one warp reads when lane t reads index(t):
// the constant cache serves one address per request, so this is the number of
// serialized reads.
template <class F>
int distinct_addresses(F index) {
  std::set<int> s;
  for (int t = 0; t < 32; ++t) s.insert(index(t));
  return int(s.size());
}

long long cube(long long x) { return x * x * x; }

}  // namespace

std::vector<Answer> lab02_answers() {
  std::vector<Answer> a;
  // Background: PMPP's "radius <= 7; 3D filters of at most 343 taps".
  a.push_back({"lab02.taps_3d_r3", std::to_string(cube(2 * 3 + 1))});
  a.push_back({"lab02.taps_3d_r7", grouped(cube(2 * 7 + 1))});

  // Question 1: what fits in the 64 KB of constant memory.
  a.push_back({"lab02.max_r_2d", std::to_string(largest_radius(lab02::kConstantMemoryBytes, 2))});
  a.push_back({"lab02.max_r_2d_bytes",
               grouped(4LL * (2 * largest_radius(lab02::kConstantMemoryBytes, 2) + 1) *
                       (2 * largest_radius(lab02::kConstantMemoryBytes, 2) + 1))});
  a.push_back({"lab02.max_r_3d", std::to_string(largest_radius(lab02::kConstantMemoryBytes, 3))});
  a.push_back({"lab02.max_r_3d_bytes",
               grouped(4 * cube(2 * largest_radius(lab02::kConstantMemoryBytes, 3) + 1))});
  a.push_back({"lab02.buffer_bytes", grouped(4LL * lab02::kFilterCapacity)});

  // Question 2: serialized constant reads per warp-wide load.
  a.push_back({"lab02.reads_uniform", std::to_string(distinct_addresses([](int) { return 4; }))});
  a.push_back({"lab02.reads_mod4", std::to_string(distinct_addresses([](int t) { return t % 4; }))});
  a.push_back({"lab02.reads_div8", std::to_string(distinct_addresses([](int t) { return t / 8; }))});
  a.push_back({"lab02.reads_tid", std::to_string(distinct_addresses([](int t) { return t; }))});

  // Question 3: filter loads of lab 1's kernel at 8192 x 8192, r = 3.
  a.push_back({"lab02.filter_loads_r3", fixed(8192.0 * 8192.0 * 49 / 1e9, 2)});

  // Question 4: the roofline bounds of the OP/B model at the copy bandwidth of
  // the Results run (2864 GB/s).
  a.push_back({"lab02.bound_naive", fixed(lab03::kNaiveOpRatio * 2864e9 / 1e12, 2)});
  a.push_back({"lab02.bound_constant", fixed(lab03::kConstantFilterOpRatio * 2864e9 / 1e12, 2)});

  // Question 5: 3D convolution, a 256^3 volume with a 5 x 5 x 5 filter.
  a.push_back({"lab02.taps_3d_r2", std::to_string(cube(5))});
  a.push_back({"lab02.macs_3d", fixed(cube(256) * 125.0 / 1e9, 2)});
  a.push_back({"lab02.filter_bytes_3d_r2", std::to_string(4 * cube(5))});
  a.push_back({"lab02.ghost_3d", grouped(cube(256 + 4) - cube(256))});

  // Question 6 (predict, then measure): the model's speed-up and the measured range.
  a.push_back({"lab02.predicted_speedup",
               fixed(lab03::kConstantFilterOpRatio / lab03::kNaiveOpRatio, 1)});

  // Question 8 (predict, then measure): global loads per output, naive (one input and one
  // filter load per tap) and with the filter in constant memory (the input's only).
  a.push_back({"lab02.loads_naive_1d_r8", std::to_string(2 * (2 * 8 + 1))});
  a.push_back({"lab02.loads_constant_1d_r8", std::to_string(2 * 8 + 1)});
  a.push_back({"lab02.loads_naive_2d_r3", std::to_string(2 * 7 * 7)});
  a.push_back({"lab02.loads_constant_2d_r3", std::to_string(7 * 7)});
  return a;
}

}  // namespace convlab::handout
