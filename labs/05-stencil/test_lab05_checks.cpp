// Lab 05's speed and technique checks (moved from test_lab05.cpp; the correctness checks, the cases
// and the registration are there, the shared types in test_lab05.hpp).
#include "test_lab05.hpp"

#include "lab05.hpp"
#include "stencil_golden.hpp"

#include <convlab/check.hpp>
#include <convlab/device_buffer.hpp>
#include <convlab/evidence.hpp>
#include <convlab/gpu.hpp>
#include <convlab/random.hpp>
#include <convlab/record.hpp>
#include <convlab/remote.hpp>
#include <convlab/speed_check.hpp>
#include <convlab/stencil_baselines.hpp>
#include <convlab/technique.hpp>
#include <convlab/testbed.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace lab05_tests;

// --- speed ---------------------------------------------------------------------------------------

baseline::StencilArgs baseline_args(const Case& c, const Params& p, const float* in, float* out, cudaStream_t s) {
  baseline::StencilArgs a;
  a.d_in = in;
  a.d_out = out;
  a.nx = c.nx;
  a.ny = c.ny;
  a.nz = c.three_d() ? c.nz : 1;
  a.boundary = int(c.bc);
  a.wall = p.wall;
  a.c0 = p.c.c0;
  a.cx = p.c.cx;
  a.cy = p.c.cy;
  a.cz = c.three_d() ? p.c.cz : 0.0f;
  a.stream = s;
  return a;
}

// The naive baseline's c.steps sweeps from `a` (a and b swapped after each).
void baseline_steps(const Case& c, const Params& p, float* a, float* b, cudaStream_t s) {
  for (int t = 0; t < c.steps; ++t) {
    if (c.three_d()) baseline::stencil3d_naive(baseline_args(c, p, a, b, s));
    else baseline::stencil2d_naive(baseline_args(c, p, a, b, s));
    std::swap(a, b);
  }
}

}  // namespace

namespace lab05_tests {

// Times `student` (c.steps sweeps from the initial state in d_u; returns the buffer holding the
// result) against the grader-owned naive sweep repeated c.steps times, interleaved, after
// checking the student's result on the timed problem (correctness gates speed). The runner times
// both (convlab/speed_check.hpp): before every pair it draws a fresh initial state into d_init and
// copies it into the baseline's first buffer, and after every timed run of the student's it
// compares the buffer the student returns with the baseline's result, cell by cell.
void check_speed(const Case& c, const Steps2d& k2, const Steps3d& k3, const GraderSpec& grader,
                 const std::string& what) {
  const Params p = draw_params(current_seed(), c.three_d());
  const Shape s = c.shape(p.wall);
  // The initial state is drawn on the device (|x| in [2^-8, 1], random sign): no golden model of
  // the timed grid on the host (issue 29); every timed result is checked against the baseline's.
  DeviceBuffer<float> d_init(s.cells()), d_u(s.cells()), d_tmp(s.cells()), b_u(s.cells()), b_tmp(s.cells());
  remote::random_fill(d_init.get(), s.cells(), current_seed());
  CONVLAB_CUDA_CHECK(cudaMemcpy(b_u.get(), d_init.get(), b_u.bytes(), cudaMemcpyDeviceToDevice));
  float* result = nullptr;
  const auto student = [&](cudaStream_t st) {
    result = c.three_d() ? k3(d_u.get(), d_tmp.get(), grid3d(c, p.wall), p.c, c.steps, st)
                         : k2(d_u.get(), d_tmp.get(), grid2d(c, p.wall), p.c, c.steps, st);
  };
  // Before each student run, outside the timed region: the initial state, a poisoned scratch.
  const auto prepare = [&](cudaStream_t st) {
    CONVLAB_CUDA_CHECK(cudaMemcpyAsync(d_u.get(), d_init.get(), d_u.bytes(), cudaMemcpyDeviceToDevice, st));
    CONVLAB_CUDA_CHECK(cudaMemsetAsync(d_tmp.get(), 0xFF, d_tmp.bytes(), st));
  };
  const auto baseline = [&](cudaStream_t st) { baseline_steps(c, p, b_u.get(), b_tmp.get(), st); };
  Stream stream;
  prepare(stream.s);
  if (const std::string err = run(student, stream.s); !err.empty()) {
    ADD_FAILURE() << "speed not measured: " << err;
    return;
  }
  if (result != d_u.get() && result != d_tmp.get()) {
    ADD_FAILURE() << "speed not measured, the kernel is wrong on the timed problem: the pointer returned is neither "
                     "d_u nor d_tmp";
    return;
  }
  DeviceBuffer<float>& baseline_out = c.steps % 2 == 0 ? b_u : b_tmp;  // the baseline swaps after every sweep

  SpeedSetup setup;
  setup.baseline = baseline;
  setup.candidate = student;
  setup.prepare = prepare;
  setup.stream = stream.s;
  // A fresh initial state before every pair: drawn into d_init (prepare copies it into d_u for the
  // student), and copied into b_u, where the baseline starts, before the baseline runs.
  setup.refresh.address = reinterpret_cast<std::uintptr_t>(d_init.get());
  setup.refresh.count = s.cells();
  wire::ProgramOp to_baseline;
  to_baseline.kind = wire::ProgramOp::Kind::copy;
  to_baseline.dst = reinterpret_cast<std::uintptr_t>(b_u.get());
  to_baseline.src = reinterpret_cast<std::uintptr_t>(d_init.get());
  to_baseline.bytes = b_u.bytes();
  setup.refresh.copies.push_back(to_baseline);
  // Every timed run's result against the baseline's for the same state. The student's result is in
  // the buffer its first run returned (a launcher that returns the other one on a later call fails
  // the check: that buffer holds the poison or a stale state). Tolerance: each kernel is within the
  // golden model's per-cell bound of the exact result (stencil_golden.hpp), so the two differ by at
  // most twice the bound; the bound of every cell is at most largest_bound() of the state's largest
  // magnitude, 1, and the wall; twice that again is the margin.
  setup.check = wire::TimedCheck{reinterpret_cast<std::uintptr_t>(result),
                                 reinterpret_cast<std::uintptr_t>(baseline_out.get()), s.cells(),
                                 4 * golden::largest_bound(p.c, p.wall, c.three_d(), c.steps, 1.0)};
  // The least traffic: one read and one write of the grid (temporal blocking may fuse every step).
  setup.ideal_bytes = 2.0 * double(s.cells()) * sizeof(float);
  SpeedPolicy policy;
  policy.threshold = grader.threshold;
  // CONVLAB_SPEED_REPEAT=N makes N independent decisions (the worst counts).
  const SpeedVerdict v = convlab::check_speed(setup, policy, what);
  record_speed(v, grader.threshold);
  EXPECT_TRUE(v.passed) << v.message;
  // The same problem made again (fresh buffers, the same parameters), for a count that waits for
  // the process's last speed test.
  const ProblemAgain again = [c, k2, k3, p, s, seed = current_seed()](const ProblemUse& use) {
    DeviceBuffer<float> u(s.cells()), tmp(s.cells()), bu(s.cells()), btmp(s.cells());
    remote::random_fill(u.get(), s.cells(), seed);
    CONVLAB_CUDA_CHECK(cudaMemcpy(bu.get(), u.get(), bu.bytes(), cudaMemcpyDeviceToDevice));
    Stream st;
    use(
        [&] {
          if (c.three_d()) k3(u.get(), tmp.get(), grid3d(c, p.wall), p.c, c.steps, st.s);
          else k2(u.get(), tmp.get(), grid2d(c, p.wall), p.c, c.steps, st.s);
        },
        [&] { baseline_steps(c, p, bu.get(), btmp.get(), st.s); });
  };
  // The baseline's loads per output, for that count, on a grid of about 4 M points of the same kind
  // (its boundary, coefficients and steps): the yardstick of technique.hpp.
  const Yardstick yardstick = [c, p, seed = current_seed()](const BaselineUse& use) {
    Case small = c;
    if (c.three_d()) small.nx = std::min(c.nx, 161), small.ny = std::min(c.ny, 159), small.nz = std::min(c.nz, 163);
    else small.nx = std::min(c.nx, 2053), small.ny = std::min(c.ny, 2047);
    const std::size_t cells = std::size_t(small.nx) * small.ny * (small.three_d() ? small.nz : 1);
    DeviceBuffer<float> bu(cells), btmp(cells);
    remote::random_fill(bu.get(), cells, seed);
    Stream st;
    use([&] { baseline_steps(small, p, bu.get(), btmp.get(), st.s); }, double(cells) * small.steps);
  };
  // What ran when the slot was timed must be its technique: one more call of each, counted by the GPU.
  expect_traffic_vs_baseline(grader.id.substr(grader.id.find('.') + 1), what.substr(0, what.find(" vs ")),
                             grader.traffic_vs_baseline, grader.traffic_count == "instructions",
                             double(s.cells()) * c.steps,
                             [&] {
                               prepare(stream.s);
                               student(stream.s);
                             },
                             [&] { baseline(stream.s); }, again, yardstick);
}

// A single-sweep kernel as a one-step "steps" function (for the speed graders).
Steps3d one_sweep(void (*fn)(const float*, float*, const Grid3d&, const Coeffs&, cudaStream_t)) {
  return [fn](float* u, float* tmp, const Grid3d& g, const Coeffs& c, int, cudaStream_t s) {
    fn(u, tmp, g, c, s);
    return tmp;
  };
}

}  // namespace lab05_tests

namespace {

// --- technique ---------------------------------------------------------------------------------
//
// What each slot teaches, checked on what the runner saw while the slot's launcher computed one
// problem right (convlab/technique.hpp): its launches (kernel, grid, block, shared memory) and
// copies, plus the kernels' compiled code (GPU builds: shared loads and stores, barriers in the PTX)
// or the loads and stores of each memory space they executed (the CPU backend, which counts memory
// instructions: a float4 load is one). A failed rule says what it saw; the test says what the lab asks.

constexpr double kPoints2d = 5, kPoints3d = 7;  // stencil points per output, 2D and 3D

// The kernel that did the work: the launch with the most threads.
const KernelFacts* main_kernel(const TechniqueView& v) {
  const KernelFacts* best = nullptr;
  for (const auto& k : v.kernels())
    if (!best || k.launch.threads_launched() > best->launch.threads_launched()) best = &k;
  return best;
}

// The cells of one plane that a block walking up z computes: nx * ny / (grid.x * grid.y) (the
// in-plane output tile; edge blocks that reach past the grid make this estimate smaller than it).
double in_plane_tile(const KernelFacts& k, const Case& c) {
  return double(c.nx) * c.ny / (double(std::max(1u, k.launch.grid[0])) * std::max(1u, k.launch.grid[1]));
}

}  // namespace

namespace lab05_tests {

// Shared memory as the z-walking designs imply for the launch's block: `planes` planes of its tile,
// three for the coarsened sweep (previous, current, next; PMPP fig. 8.10), one for register tiling
// (fig. 8.12; two where it is double-buffered), with the halo: shared_tile() allows 0.5x to 4x.
TechniqueRule plane_tiles(double planes, const Case& c) {
  return [planes, c](const TechniqueView& v) -> std::string {
    const KernelFacts* k = main_kernel(v);
    if (!k) return "no kernel was launched";
    return shared_tile(planes * in_plane_tile(*k, c) * sizeof(float))(v);
  };
}

// Global loads per output of a z-walking sweep that loads each plane of its tile once: a block loads
// its in-plane tile with a one-cell halo, (sqrt(P) + 2)^2 cells for a square tile of P, for each of
// its planes and one below and one above them; 25 % more and a quarter of a load per output of
// slack (a thin tile, blocks at the grid's edge). The naive sweep makes 7. Counts only.
TechniqueRule walk_loads(const Case& c) {
  return [c](const TechniqueView& v) -> std::string {
    const KernelFacts* k = main_kernel(v);
    if (!v.counted() || !k) return {};
    const double plane = in_plane_tile(*k, c), planes = double(c.nz) / std::max(1u, k->launch.grid[2]);
    const double side = std::sqrt(plane);
    const double implied = (side + 2) * (side + 2) / plane * (planes + 2) / planes;
    return global_loads_per_output(1.25 * implied + 0.25)(v);
  };
}

// Register tiling: the z neighbours come from registers, so an output reads at most its four
// in-plane neighbours and itself from shared memory; the coarsened sweep reads all 7 points there.
// Counts only.
TechniqueRule z_from_registers() {
  return [](const TechniqueView& v) -> std::string {
    if (!v.counted()) return {};
    const double loads = v.per_output(&wire::KernelLaunch::shared_loads);
    if (loads <= 5) return {};
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "each output read %.3g values from shared memory (at most 5 with the z neighbours in registers; "
                  "the coarsened sweep reads all 7 points there)",
                  loads);
    return buf;
  };
}

}  // namespace lab05_tests

namespace {

// The copies the calls made between device buffers or with the host (memsets aside), and their bytes.
std::pair<std::size_t, std::uint64_t> copies_of(const TechniqueView& v) {
  std::size_t n = 0;
  std::uint64_t bytes = 0;
  for (const auto& call : v.calls())
    for (const auto& t : call.evidence.transfers)
      if (t.kind == wire::Transfer::Kind::on_device || t.kind == wire::Transfer::Kind::to_host ||
          t.kind == wire::Transfer::Kind::to_device) {
        ++n;
        bytes += t.bytes;
      }
  return {n, bytes};
}

}  // namespace

namespace lab05_tests {

// Double buffering: each step reads one buffer and writes the other, then the two pointers swap:
// no copy between the buffers or through the host, and at most one launch per step (fewer where
// steps are fused).
TechniqueRule swapped_buffers(int steps) {
  return [steps](const TechniqueView& v) -> std::string {
    std::string out;
    char buf[256];
    if (const auto [n, bytes] = copies_of(v); n > 0) {
      std::snprintf(buf, sizeof buf,
                    "%zu copies (cudaMemcpy, %.3g MB in all) in %d steps, where swapping the two pointers moves "
                    "nothing",
                    n, double(bytes) / 1e6, steps);
      out = buf;
    }
    if (const std::size_t launches = v.kernels().size(); launches > std::size_t(steps)) {
      std::snprintf(buf, sizeof buf, "%zu kernel launches for %d steps (one sweep a step needs one launch)", launches,
                    steps);
      out += (out.empty() ? "" : "; ") + std::string(buf);
    }
    return out;
  };
}

// Temporal blocking: on average at least two steps per launch, and, counted, fewer global loads
// and stores per cell and step than one sweep per step makes: that reads and writes every cell at
// least once each step, 2 accesses per cell-step one element at a time (a sweep with vector
// accesses makes fewer, but then it needs a launch per step). `outputs` of the view: cells x steps.
TechniqueRule fused_steps(int steps) {
  return [steps](const TechniqueView& v) -> std::string {
    std::string out;
    char buf[320];
    if (const std::size_t launches = v.kernels().size(); launches > std::size_t(steps / 2)) {
      std::snprintf(buf, sizeof buf,
                    "%zu kernel launches for %d steps: %s (at most %d launches, two or more steps fused in each)",
                    launches, steps, launches >= std::size_t(steps) ? "one sweep per step" : "too few steps per launch",
                    steps / 2);
      out = buf;
    }
    if (v.counted()) {
      const double traffic =
          v.per_output(&wire::KernelLaunch::global_loads) + v.per_output(&wire::KernelLaunch::global_stores);
      if (traffic >= 2) {
        std::snprintf(buf, sizeof buf,
                      "%.3g global loads and stores per cell and step, no fewer than one sweep per step makes (each "
                      "step reads and writes every cell: 2), where a fused tile is loaded and stored once for several "
                      "steps",
                      traffic);
        out += (out.empty() ? "" : "; ") + std::string(buf);
      }
    }
    return out;
  };
}

// Jacobi's residual reduced on the GPU: the host reads a few bytes per check (the reduced sum,
// never the field), and kernels besides the sweeps do the reduction.
constexpr std::uint64_t kResidualReadBytes = 64;
TechniqueRule gpu_residual(int sweeps) {
  return [sweeps](const TechniqueView& v) -> std::string {
    std::string out;
    char buf[320];
    std::uint64_t largest = 0, total = 0;
    std::size_t reads = 0;
    for (const auto& call : v.calls())
      for (const auto& t : call.evidence.transfers)
        if (t.kind == wire::Transfer::Kind::to_host) {
          largest = std::max<std::uint64_t>(largest, t.bytes);
          total += t.bytes;
          ++reads;
        }
    if (largest > kResidualReadBytes) {
      std::snprintf(buf, sizeof buf,
                    "poisson_jacobi copied up to %llu bytes at once from the device to the host (%zu copies, %.3g KB "
                    "in all): the host must read only the reduced residual, at most %llu bytes a check",
                    static_cast<unsigned long long>(largest), reads, double(total) / 1e3,
                    static_cast<unsigned long long>(kResidualReadBytes));
      out = buf;
    }
    if (const std::size_t launches = v.kernels().size(); launches <= std::size_t(sweeps)) {
      std::snprintf(buf, sizeof buf,
                    "%zu kernel launches for %d sweeps: no kernel besides the sweeps reduced the residual", launches,
                    sweeps);
      out += (out.empty() ? "" : "; ") + std::string(buf);
    }
    return out;
  };
}

// A technique test of a sweep slot: the output must be right first (a wrong one says nothing about
// the design), then `rule` is checked on what the runner saw.
void check_sweep_technique(const Case& c, int tile, const Sweep2d& k2, const Sweep3d& k3, const std::string& slot,
                           const std::string& asks, const TechniqueRule& rule) {
  if (!check_sweep(c, tile, k2, k3)) {
    ADD_FAILURE() << slot << ": the technique is checked on a correct output; fix correctness first";
    return;
  }
  const double cells = double(c.nx) * c.ny * (c.three_d() ? c.nz : 1);
  expect_technique(slot, asks, rule, cells, c.three_d() ? kPoints3d : kPoints2d);
}

// The same for a slot that takes steps; per output means per cell and step.
void check_steps_technique(const Case& c, const Steps2d& k2, const Steps3d& k3, const std::string& slot,
                           const std::string& asks, const TechniqueRule& rule) {
  if (!check_steps(c, k2, k3)) {
    ADD_FAILURE() << slot << ": the technique is checked on a correct output; fix correctness first";
    return;
  }
  const double cells = double(c.nx) * c.ny * (c.three_d() ? c.nz : 1);
  expect_technique(slot, asks, rule, cells * c.steps, c.three_d() ? kPoints3d : kPoints2d);
}

// Jacobi: a fixed number of sweeps on random data, the iterate right against the golden model,
// then the rule. The grid is small (n = 32: 4 KB), so that a residual computed on the host stays
// under the correctness graders' allowance for host reads and its copies are this grader's finding.
void check_jacobi_technique(int n, int sweeps, int check_every, const std::string& asks, const TechniqueRule& rule) {
  const auto u0 = random_floats(std::size_t(n) * n, current_seed());
  const auto f = random_floats(std::size_t(n) * n, current_seed() ^ 0xF00Dull);
  const PoissonProblem p{n, 1.0f / (n + 1), 0.0f, sweeps, check_every};
  const JacobiRun run = run_jacobi(u0, f, p);
  bool right = run.error.empty() && run.result.iterations == sweeps;
  if (!run.error.empty()) ADD_FAILURE() << "poisson_jacobi, n = " << n << ": " << run.error;
  else if (!right)
    ADD_FAILURE() << "poisson_jacobi did " << run.result.iterations << " sweeps; with tol = 0 every one of max_iters = "
                  << sweeps << " sweeps must run";
  if (right) {
    Shape s;
    s.nx = s.ny = n;
    const Report r = compare_field(run.solution, golden::jacobi(u0, f, n, p.h, sweeps), s, false);
    if (!r.ok()) ADD_FAILURE() << "Jacobi, " << n << " x " << n << ", " << sweeps << " sweeps:\n" << r.text;
    right = r.ok();
  }
  if (!right) {
    ADD_FAILURE() << "jacobi: the technique is checked on a correct output; fix correctness first";
    return;
  }
  expect_technique("jacobi", asks, rule, double(n) * n * sweeps, kPoints2d);
}

}  // namespace lab05_tests
