// Lab 05 benchmark: the lab's sweeps (student's or reference, as built) next to the grader-owned
// naive sweeps, against the copy bandwidth measured in the same run. Per kernel and size it
// prints the median time, Gcells/s (cell updates per second, counting every step), the
// effective bandwidth (one read and one write of the grid per step, divided by the time) and its
// fraction of the copy bandwidth, and the speed-up over the naive baseline. The full run covers
// the reference's performance targets and prints, for each row that has one, whether it was met:
//   3D 512^3, one sweep        stencil3d_register and stencil3d_steps: >= 90 % of copy BW
//   2D 16384^2, one sweep      heat2d_steps (1 step): >= 90 % of copy BW
//   2D 8192^2, 8 steps         heat2d_temporal: >= 1.5x the cells*steps/s of heat2d_steps
//   lab05_bench [--quick] [--traffic] [--markdown FILE] [--json FILE]
// --quick: small problems, no targets (a smoke test, run by ctest). Exit 77 (skipped) without a
// GPU; exit 1 if a kernel's output is wrong. Unmet targets are reported, not fatal.
#include "lab05.hpp"
#include "stencil_golden.hpp"

#include <convlab/bench_run.hpp>
#include <convlab/compare.hpp>
#include <convlab/device_buffer.hpp>
#include <convlab/gpu.hpp>
#include <convlab/random.hpp>
#include <convlab/stencil_baselines.hpp>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace convlab;
using namespace convlab::lab05;

std::string impl(const std::string& kernel) { return kernel + " (" + CONVLAB_IMPL_NAME + ")"; }

// A grid on the device, its initial state, the golden state after `steps` steps, and the
// grader-owned naive sweep repeated `steps` times as the baseline.
struct Problem {
  golden::Shape s;
  bool three_d;
  int steps;
  Coeffs c;
  std::vector<float> h_in;
  Golden g;
  DeviceBuffer<float> d_init, d_u, d_tmp, b_u, b_tmp;
  Launch baseline;

  Problem(int nx, int ny, int nz, Boundary bc, int steps_, std::uint64_t seed)
      : three_d(nz > 0), steps(steps_) {
    s.nx = nx;
    s.ny = ny;
    s.nz = three_d ? nz : 1;
    s.bc = bc;
    s.wall = 0.25f;
    HeatParams p{1.0, 0.0, 1.0, 1.0, 1.0};
    p.dt = three_d ? 0.15 : 0.22;  // just inside the stability limits 1/6 and 1/4
    c = three_d ? heat_coefficients_3d(p) : heat_coefficients_2d(p);
    h_in = random_floats(s.cells(), seed);
    g = golden::comparator_golden(golden::run(h_in, s, c, three_d, steps), three_d ? 7 : 5);
    d_init = DeviceBuffer<float>(h_in);
    d_u = DeviceBuffer<float>(s.cells());
    d_tmp = DeviceBuffer<float>(s.cells());
    b_u = DeviceBuffer<float>(h_in);
    b_tmp = DeviceBuffer<float>(s.cells());
    baseline = [this](cudaStream_t st) {
      baseline::StencilArgs a;
      a.nx = s.nx;
      a.ny = s.ny;
      a.nz = s.nz;
      a.boundary = int(s.bc);
      a.wall = s.wall;
      a.c0 = c.c0;
      a.cx = c.cx;
      a.cy = c.cy;
      a.cz = three_d ? c.cz : 0.0f;
      a.stream = st;
      float* x = b_u.get();
      float* y = b_tmp.get();
      for (int t = 0; t < steps; ++t) {
        a.d_in = x;
        a.d_out = y;
        if (three_d) baseline::stencil3d_naive(a);
        else baseline::stencil2d_naive(a);
        std::swap(x, y);
      }
    };
  }
  Grid grid() const { return Grid{s.nx, s.ny * s.nz, 0}; }
  std::string size() const {
    std::string n = std::to_string(s.nx) + "x" + std::to_string(s.ny);
    if (three_d) n += "x" + std::to_string(s.nz);
    return n + (steps > 1 ? ", " + std::to_string(steps) + " steps" : "") + ", " + to_string(s.bc);
  }
  void reset(cudaStream_t st) {
    CONVLAB_CUDA_CHECK(cudaMemcpyAsync(d_u.get(), d_init.get(), d_u.bytes(), cudaMemcpyDeviceToDevice, st));
  }
};

using StepsFn = std::function<float*(Problem&, cudaStream_t)>;

class Bench {
public:
  Bench(BenchReport& report, const BenchOptions& o, const BenchCeilings& ceilings)
      : report_(report), pairs_(o.quick ? 3 : 20), targets_(!o.quick), ceilings_(ceilings) {}

  // Times `fn` against the problem's baseline, checks its result, adds the row; returns the
  // row's cell updates per second.
  double row(Problem& p, const std::string& kernel, const StepsFn& fn, double copy_target,
             const std::string& other_target = {}, double other_ratio = 0, double other_rate = 0) {
    float* result = nullptr;
    const Launch launch = [&](cudaStream_t st) { result = fn(p, st); };
    const SpeedRound round = measure_round(p.baseline, launch, pairs_);
    // Verify one run from the initial state (the timed runs started from evolving states).
    p.reset(nullptr);
    launch(nullptr);
    CONVLAB_CUDA_CHECK(cudaDeviceSynchronize());
    const DeviceBuffer<float>& out = result == p.d_u.get() ? p.d_u : p.d_tmp;
    verify_output(out, p.g, p.grid(), kernel + " on " + p.size());
    BenchRow r;
    r.size = p.size();
    r.radius = 1;
    r.ms = round.candidate_ms;
    r.baseline_ms = round.baseline_ms.median;
    const double cells = double(p.s.cells()) * p.steps;
    r.ideal_bytes = 2.0 * cells * sizeof(float);  // one read and one write of the grid per step
    r.flops = cells * (p.three_d ? 13 : 9);       // 2m - 1 operations per cell update
    const double rate = cells / (r.ms.median * 1e-3);
    char buf[96];
    std::snprintf(buf, sizeof buf, ": %.1f Gcells/s", rate / 1e9);
    r.kernel = impl(kernel) + buf;  // the table has no column of its own for cell updates per second
    if (targets_ && copy_target > 0) {
      std::snprintf(buf, sizeof buf, ">= %.0f%% of copy BW", 100 * copy_target);
      r.target = buf;
      r.target_met = r.ideal_bytes / (r.ms.median * 1e-3) / 1e9 >= copy_target * ceilings_.copy_gbs;
    }
    if (targets_ && !other_target.empty()) {
      r.target += (r.target.empty() ? "" : ", ") + other_target;
      const bool met = other_rate > 0 && rate >= other_ratio * other_rate;
      r.target_met = r.target_met.value_or(true) && met;
    }
    // With --traffic (convlab bench lab05 --traffic): the problem's baseline once, then the kernel,
    // each once more in a profiling range; every cell update is an output, of 7 (3D) or 5 (2D) taps.
    const int taps = p.three_d ? 7 : 5;
    if (p.size() != traffic_problem_)
      bench_traffic_call("baseline: naive stencil (grader)", p.size(), 1, taps, cells, p.baseline);
    traffic_problem_ = p.size();  // the size names the problem: grid, steps, boundary
    bench_traffic_call(impl(kernel), p.size(), 1, taps, cells, launch);
    report_.add(r);
    return rate;
  }

private:
  BenchReport& report_;
  int pairs_;
  bool targets_;
  BenchCeilings ceilings_;
  std::string traffic_problem_;  // the problem whose baseline was last profiled (--traffic)
};

float* one(Problem& p, cudaStream_t st,
           void (*fn3)(const float*, float*, const Grid3d&, const Coeffs&, cudaStream_t),
           void (*fn2)(const float*, float*, const Grid2d&, const Coeffs&, cudaStream_t)) {
  if (p.three_d) fn3(p.d_u.get(), p.d_tmp.get(), Grid3d{p.s.nx, p.s.ny, p.s.nz, p.s.bc, p.s.wall}, p.c, st);
  else fn2(p.d_u.get(), p.d_tmp.get(), Grid2d{p.s.nx, p.s.ny, p.s.bc, p.s.wall}, p.c, st);
  return p.d_tmp.get();
}

void bench_3d(Bench& b, int n, Boundary bc) {
  Problem p(n, n, n, bc, 1, 11);
  p.reset(nullptr);
  b.row(p, "stencil3d_naive", [](Problem& q, cudaStream_t st) { return one(q, st, stencil3d_naive, nullptr); }, 0);
  b.row(p, "stencil3d_tiled", [](Problem& q, cudaStream_t st) { return one(q, st, stencil3d_tiled, nullptr); }, 0);
  b.row(p, "stencil3d_coarsened",
        [](Problem& q, cudaStream_t st) { return one(q, st, stencil3d_coarsened, nullptr); }, 0);
  b.row(p, "stencil3d_register", [](Problem& q, cudaStream_t st) { return one(q, st, stencil3d_register, nullptr); },
        0.90);
  Problem q(n, n, n, bc, 4, 12);
  q.reset(nullptr);
  b.row(q, "stencil3d_steps", [](Problem& r, cudaStream_t st) {
    return stencil3d_steps(r.d_u.get(), r.d_tmp.get(), Grid3d{r.s.nx, r.s.ny, r.s.nz, r.s.bc, r.s.wall}, r.c, r.steps, st);
  }, 0.90);
}

void bench_2d(Bench& b, int n, Boundary bc) {
  Problem p(n, n, 0, bc, 1, 13);
  p.reset(nullptr);
  b.row(p, "heat2d_naive", [](Problem& q, cudaStream_t st) { return one(q, st, nullptr, heat2d_naive); }, 0);
  b.row(p, "heat2d_tiled", [](Problem& q, cudaStream_t st) { return one(q, st, nullptr, heat2d_tiled); }, 0);
  b.row(p, "heat2d_steps (1 step)", [](Problem& q, cudaStream_t st) {
    return heat2d_steps(q.d_u.get(), q.d_tmp.get(), Grid2d{q.s.nx, q.s.ny, q.s.bc, q.s.wall}, q.c, 1, st);
  }, 0.90);
}

void bench_temporal(Bench& b, int n, int steps, Boundary bc) {
  Problem p(n, n, 0, bc, steps, 14);
  p.reset(nullptr);
  const double best = b.row(p, "heat2d_steps", [](Problem& q, cudaStream_t st) {
    return heat2d_steps(q.d_u.get(), q.d_tmp.get(), Grid2d{q.s.nx, q.s.ny, q.s.bc, q.s.wall}, q.c, q.steps, st);
  }, 0);
  b.row(p, "heat2d_temporal", [](Problem& q, cudaStream_t st) {
    return heat2d_temporal(q.d_u.get(), q.d_tmp.get(), Grid2d{q.s.nx, q.s.ny, q.s.bc, q.s.wall}, q.c, q.steps, st);
  }, 0, ">= 1.5x heat2d_steps' Gcells/s", 1.5, best);
}

}  // namespace

int main(int argc, char** argv) {
  return run_benchmark(
      argc, argv, "lab05_bench", "Lab 05 — stencils: 2D heat equation, 3D seven-point sweeps, temporal blocking",
      [](BenchReport& report, const BenchOptions& options, const BenchCeilings& ceilings) {
        Bench b(report, options, ceilings);
        const bool quick = options.quick;
        bench_3d(b, quick ? 96 : 512, Boundary::dirichlet);
        if (!quick) bench_3d(b, 512, Boundary::periodic);
        bench_2d(b, quick ? 1031 : 16384, Boundary::dirichlet);
        bench_temporal(b, quick ? 1031 : 8192, 8, Boundary::dirichlet);
        if (!quick) bench_temporal(b, 8192, 8, Boundary::periodic);
      });
}
