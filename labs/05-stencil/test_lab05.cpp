// Lab 05's graders. The cases live here, in one place; the golden models are
// stencil_golden.hpp; points and thresholds are in grading.json. The sections: correctness (one
// sweep, many steps, Jacobi), then the cases; the speed and technique checks are in
// test_lab05_checks.cpp, the CPU tests in test_lab05_cpu.cpp, what they share in test_lab05.hpp.
//
// Every correctness test draws the grid and the heat parameters from its seed (printed; replay
// with CONVLAB_SEED), puts NaN guard zones around the device buffers (an out-of-bounds read
// turns an output into NaN, a stray write is reported), poisons every output with NaN, and
// compares each cell with the double-precision golden model within the rounding-error bound that
// the golden model carries along (stencil_golden.hpp derives it, for one step and for many).
#include "test_lab05.hpp"
#include "lab05.hpp"
#include "stencil_golden.hpp"

#include <convlab/check.hpp>
#include <convlab/compare.hpp>
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
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace lab05_tests;

// Guard zones of NaN around the test buffers; none under AddressSanitizer, which then reports
// the first out-of-bounds access itself, with its line.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kGuardZones = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kGuardZones = false;
#else
constexpr bool kGuardZones = true;
#endif
#else
constexpr bool kGuardZones = true;
#endif

constexpr std::uint64_t kParamStream = 0x4EA7ull;  // the heat parameters' seed differs from the grid's

}  // namespace

namespace lab05_tests {

Params draw_params(std::uint64_t seed, bool three_d) {
  Rng rng(seed ^ kParamStream);
  HeatParams p;
  p.alpha = rng.uniform(0.5, 2.0);
  p.dx = rng.uniform(0.5, 1.0);
  p.dy = rng.uniform(1.0, 2.0);
  p.dz = rng.uniform(0.7, 1.4);
  const double sum = p.alpha * (1 / (p.dx * p.dx) + 1 / (p.dy * p.dy) + (three_d ? 1 / (p.dz * p.dz) : 0.0));
  p.dt = rng.uniform(0.5, 1.0) * 0.5 / sum;
  Params out;
  out.c = three_d ? heat_coefficients_3d(p) : heat_coefficients_2d(p);
  out.wall = float(rng.uniform(-1.0, 1.0));
  if (out.wall == 0.0f) out.wall = 0.5f;
  return out;
}

}  // namespace lab05_tests

namespace {

// --- comparison, with reports that locate the wrong cells ----------------------------------------

std::string region_of(int x, int y, int z, const Shape& s, bool three_d, int tile) {
  std::vector<std::string> faces;
  const auto face = [&faces](char axis, int v, int n) {
    if (v == 0 && n == 1) faces.push_back(std::string(1, axis) + " = 0 = n" + axis + "-1");
    else if (v == 0) faces.push_back(std::string(1, axis) + " = 0");
    else if (v == n - 1) faces.push_back(std::string(1, axis) + " = n" + axis + "-1");
  };
  face('x', x, s.nx);
  face('y', y, s.ny);
  if (three_d) face('z', z, s.nz);
  if (!faces.empty()) {
    std::string joined;
    for (const auto& f : faces) joined += (joined.empty() ? "" : ", ") + f;
    const char* kind = faces.size() == 1 ? "boundary face" : faces.size() == 2 ? "boundary edge" : "boundary corner";
    if (!three_d) kind = faces.size() == 1 ? "boundary edge" : "boundary corner";
    return std::string(kind) + " (" + joined + ")";
  }
  if (tile > 0) {
    const auto near = [tile](int v) { return v % tile == 0 || v % tile == tile - 1; };
    if (near(x) || near(y) || (three_d && near(z))) return "tile edge";
  }
  return "interior";
}

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

}  // namespace

namespace lab05_tests {

Report compare_field(const std::vector<float>& got, const Field& g, const Shape& s, bool three_d, int tile) {
  Report r;
  r.has_interior = s.nx > 2 && s.ny > 2 && (!three_d || s.nz > 2);
  std::map<std::string, std::size_t> by_region;
  std::ostringstream first;
  int listed = 0;
  char buf[320];
  for (std::size_t k = 0; k < got.size(); ++k) {
    const float v = got[k];
    const double err = std::isfinite(v) ? std::fabs(double(v) - g.value[k]) : INFINITY;
    const double ratio = g.bound[k] > 0 ? err / g.bound[k] : (err > 0 ? INFINITY : 0.0);
    if (std::isfinite(err)) r.max_error = std::max(r.max_error, err);
    r.max_ratio = std::max(r.max_ratio, ratio);
    if (err <= g.bound[k]) continue;
    ++r.wrong;
    const bool unwritten = bits_of(v) == 0xFFFFFFFFu;
    const bool from_shared = bits_of(v) == kUnwrittenSharedBits;
    r.unwritten += unwritten;
    r.from_shared += from_shared;
    const int x = int(k % s.nx), y = int((k / s.nx) % s.ny), z = int(k / (std::size_t(s.nx) * s.ny));
    const std::string region = region_of(x, y, z, s, three_d, tile);
    r.on_boundary += region.rfind("boundary", 0) == 0;
    ++by_region[region.substr(0, region.find(" ("))];
    if (listed++ >= 8) continue;
    if (three_d) std::snprintf(buf, sizeof buf, "  u(x=%d, y=%d, z=%d) (%s): ", x, y, z, region.c_str());
    else std::snprintf(buf, sizeof buf, "  u(x=%d, y=%d) (%s): ", x, y, region.c_str());
    first << buf;
    if (unwritten)
      std::snprintf(buf, sizeof buf, "never written (NaN poison), expected %.7g\n", g.value[k]);
    else if (from_shared)
      std::snprintf(buf, sizeof buf,
                    "got NaN, expected %.7g: computed from shared memory that no thread had written yet\n",
                    g.value[k]);
    else if (std::isnan(v))
      std::snprintf(buf, sizeof buf,
                    "got NaN, expected %.7g: the kernel read outside the grid, or memory it never wrote (both hold NaN)\n",
                    g.value[k]);
    else
      std::snprintf(buf, sizeof buf, "got %.7g, expected %.7g, error %.3g > tolerance %.3g\n", double(v), g.value[k],
                    err, g.bound[k]);
    first << buf;
  }
  if (r.wrong == 0) return r;
  std::ostringstream os;
  std::snprintf(buf, sizeof buf, "%zu of %zu outputs are wrong (%zu never written: still the NaN poison).\n", r.wrong,
                got.size(), r.unwritten);
  os << buf << "wrong outputs by region:";
  for (const auto& [region, n] : by_region) os << "  " << region << ": " << n << ";";
  os << "\nfirst mismatches:\n" << first.str();
  r.text = os.str();
  return r;
}

}  // namespace lab05_tests

namespace {

// Words a student can act on, from what the wrong cells have in common.
std::string hints(const Report& r, std::size_t cells, Boundary bc, bool one_sweep = true) {
  std::string h;
  if (r.unwritten == cells)
    return "hint: no output was written at all — is the kernel still a TODO, is it launched with a non-empty grid, "
           "does it store to the output?\n";
  if (r.unwritten > 0)
    h += "hint: some outputs were never written — does the grid of blocks cover every cell (round up), and does "
         "every cell that a block owns get stored, boundary cells included?\n";
  if (r.from_shared > 0)
    h += "hint: a value was read from shared memory before any thread wrote it — is a __syncthreads() missing "
         "between the loads into shared memory and the reads from it?\n";
  if (one_sweep && r.has_interior && r.on_boundary == r.wrong && r.unwritten == 0) {
    h += "hint: every wrong output lies on the boundary of the grid, so the interior is right and the boundary "
         "condition is not. ";
    if (bc == Boundary::dirichlet) h += "Dirichlet: a neighbour outside the grid holds the fixed value `wall`.\n";
    if (bc == Boundary::neumann)
      h += "Neumann (zero gradient): a neighbour outside the grid holds the nearest cell's value, u[-1] = u[0], "
           "u[n] = u[n-1].\n";
    if (bc == Boundary::periodic)
      h += "periodic: the index wraps, u[-1] = u[n-1] and u[n] = u[0] — check the wrap for an off-by-one.\n";
  }
  return h;
}

// --- one sweep -------------------------------------------------------------------------------

std::size_t guard_for(const Case& c) {
  if (!kGuardZones) return 0;
  // Covers a read one row (2D) or one plane (3D) beyond either end, capped at 16 M elements.
  const std::size_t reach = c.three_d() ? std::size_t(c.nx) * c.ny + c.nx + 64 : std::size_t(c.nx) + 64;
  return std::min<std::size_t>(reach, std::size_t(16) << 20);
}

}  // namespace

namespace lab05_tests {

Grid2d grid2d(const Case& c, float wall) { return Grid2d{c.nx, c.ny, c.bc, wall}; }
Grid3d grid3d(const Case& c, float wall) { return Grid3d{c.nx, c.ny, c.nz, c.bc, wall}; }

}  // namespace lab05_tests

namespace {

std::string describe(const Case& c, const Params& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s stencil, %d x %d%s, %s boundary%s, c0 = %.6g, cx = %.6g, cy = %.6g%s%s",
                c.three_d() ? "3D seven-point" : "2D five-point", c.nx, c.ny,
                c.three_d() ? (" x " + std::to_string(c.nz)).c_str() : "", to_string(c.bc),
                c.bc == Boundary::dirichlet ? (" (wall = " + std::to_string(p.wall) + ")").c_str() : "", double(p.c.c0),
                double(p.c.cx), double(p.c.cy), c.three_d() ? (", cz = " + std::to_string(p.c.cz)).c_str() : "",
                c.steps != 1 ? (", " + std::to_string(c.steps) + " steps").c_str() : "");
  return buf;
}

}  // namespace

namespace lab05_tests {

// Runs a launcher; an error text if it threw, the kernel failed, or the runner saw the result
// computed anywhere but in kernels on the device (convlab/evidence.hpp). remote::calls() then holds
// what this call did, for the technique graders.
std::string run(const std::function<void(cudaStream_t)>& launch, cudaStream_t s) {
  remote::clear_calls();
  try {
    launch(s);
  } catch (const std::exception& e) {
    return std::string("the launcher failed: ") + e.what();
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    return std::string("the kernel launch failed: ") + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) +
           ") — check the grid and block sizes (at most 1024 threads per block, 65535 blocks in y and z)";
  if (cudaError_t e = cudaStreamSynchronize(s); e != cudaSuccess)
    return std::string("the kernel failed while running: ") + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) +
           ") — an illegal address usually means an index outside an array; run it under compute-sanitizer";
  if (const std::string why = not_computed_on_device(remote::calls()); !why.empty()) return why;
  // Work on another stream is checked after it ended (the runner waits for every stream), so the
  // result is right; the speed and technique graders award nothing for it.
  for (const auto& call : remote::calls())
    if (const std::string w = escaped_work(call.evidence); !w.empty()) std::printf("note: %s\n", w.c_str());
  return {};
}

}  // namespace lab05_tests

namespace {

void record_error(const Report& r) {
  auto& rec = current_record();
  rec.max_error = r.max_error;
  if (std::isfinite(r.max_ratio)) rec.max_error_ratio = r.max_ratio;
}

}  // namespace

namespace lab05_tests {

// One sweep of a 2D or 3D kernel on a poisoned output, against the one-step golden model; true if
// it is right.
bool check_sweep(const Case& c, int tile, const Sweep2d& k2, const Sweep3d& k3) {
  const Params p = draw_params(current_seed(), c.three_d());
  const Shape s = c.shape(p.wall);
  const std::vector<float> h_in = random_floats(s.cells(), current_seed());
  const Field g = golden::run(h_in, s, p.c, c.three_d(), 1);
  GuardedBuffer d_in(s.cells(), guard_for(c)), d_out(s.cells(), guard_for(c));
  d_in.upload(h_in);
  d_out.poison();
  Stream stream;
  const std::string err = run(
      [&](cudaStream_t st) {
        if (c.three_d()) k3(d_in.data(), d_out.data(), grid3d(c, p.wall), p.c, st);
        else k2(d_in.data(), d_out.data(), grid2d(c, p.wall), p.c, st);
      },
      stream.s);
  if (!err.empty()) {
    ADD_FAILURE() << describe(c, p) << ": " << err;
    return false;
  }
  const Report r = compare_field(d_out.download(), g, s, c.three_d(), tile);
  record_error(r);
  const std::string guards = d_out.check_guards();
  if (r.ok() && guards.empty()) return true;
  ADD_FAILURE() << describe(c, p) << ", one sweep:\n"
                << r.text << (guards.empty() ? "" : guards + "\n") << hints(r, s.cells(), c.bc)
                << (d_in.check_guards().empty() ? "" : "the kernel wrote into its input's guard zone\n");
  return false;
}

}  // namespace lab05_tests

namespace {

// --- many steps --------------------------------------------------------------------------------

// What a wrong multi-step result resembles: the state after another number of steps.
std::string step_hints(const std::vector<float>& got, const std::vector<float>& h_in, const Shape& s, const Params& p,
                       bool three_d, int steps) {
  std::string h;
  for (int t : {0, 1, steps - 1, steps + 1}) {
    if (t < 0 || t == steps || (t == 1 && steps == 2)) continue;
    const Field alt = golden::run(h_in, s, p.c, three_d, t);
    if (!compare_field(got, alt, s, three_d).ok()) continue;
    if (t == 0)
      h += "hint: the result equals the initial state: no step reached the buffer returned — are the buffers "
           "swapped between steps, and is the buffer returned the one written last?\n";
    else if (t == 1)
      h += "hint: the result equals a single step: every step read the initial state — are the buffers swapped "
           "between steps?\n";
    else
      h += "hint: the result equals " + std::to_string(t) + " steps instead of " + std::to_string(steps) +
           ": check the loop count, and which buffer is returned after the last swap.\n";
  }
  return h;
}

}  // namespace

namespace lab05_tests {

// `c.steps` sweeps from a random state, against the golden model run as many steps; true if right.
bool check_steps(const Case& c, const Steps2d& k2, const Steps3d& k3) {
  const Params p = draw_params(current_seed(), c.three_d());
  const Shape s = c.shape(p.wall);
  const std::vector<float> h_in = random_floats(s.cells(), current_seed());
  const Field g = golden::run(h_in, s, p.c, c.three_d(), c.steps);
  GuardedBuffer d_u(s.cells(), guard_for(c)), d_tmp(s.cells(), guard_for(c));
  d_u.upload(h_in);
  d_tmp.poison();
  Stream stream;
  float* result = nullptr;
  const std::string err = run(
      [&](cudaStream_t st) {
        result = c.three_d() ? k3(d_u.data(), d_tmp.data(), grid3d(c, p.wall), p.c, c.steps, st)
                             : k2(d_u.data(), d_tmp.data(), grid2d(c, p.wall), p.c, c.steps, st);
      },
      stream.s);
  if (!err.empty()) {
    ADD_FAILURE() << describe(c, p) << ": " << err;
    return false;
  }
  if (result != d_u.data() && result != d_tmp.data()) {
    ADD_FAILURE() << describe(c, p) << ": the pointer returned is neither d_u nor d_tmp: return the buffer that "
                  << "holds the state after the last step";
    return false;
  }
  const std::vector<float> got = (result == d_u.data() ? d_u : d_tmp).download();
  const Report r = compare_field(got, g, s, c.three_d());
  record_error(r);
  const std::string guards = d_u.check_guards() + d_tmp.check_guards();
  if (r.ok() && guards.empty()) return true;
  ADD_FAILURE() << describe(c, p) << ", the state returned (" << (result == d_u.data() ? "d_u" : "d_tmp")
                << "), tolerance grown over the steps (stencil_golden.hpp):\n"
                << r.text << (guards.empty() ? "" : guards + "\n") << hints(r, s.cells(), c.bc, false)
                << (r.unwritten == s.cells() ? "" : step_hints(got, h_in, s, p, c.three_d(), c.steps));
  return false;
}

}  // namespace lab05_tests

// --- Jacobi ------------------------------------------------------------------------------------

namespace lab05_tests {

JacobiRun run_jacobi(const std::vector<float>& u0, const std::vector<float>& f, const PoissonProblem& pp) {
  const std::size_t cells = u0.size();
  const std::size_t guard = kGuardZones ? std::size_t(pp.n) + 64 : 0;
  GuardedBuffer d_u(cells, guard), d_tmp(cells, guard), d_f(cells, guard);
  d_u.upload(u0);
  d_tmp.poison();
  d_f.upload(f);
  Stream stream;
  JacobiRun out;
  out.error = run([&](cudaStream_t st) { out.result = poisson_jacobi(d_u.data(), d_tmp.data(), d_f.data(), pp, st); },
                  stream.s);
  if (!out.error.empty()) return out;
  if (out.result.d_solution != d_u.data() && out.result.d_solution != d_tmp.data()) {
    out.error = "JacobiResult::d_solution is neither d_u nor d_tmp";
    return out;
  }
  out.solution = (out.result.d_solution == d_u.data() ? d_u : d_tmp).download();
  const std::string guards = d_u.check_guards() + d_tmp.check_guards();
  if (!guards.empty()) out.error = guards;
  return out;
}

}  // namespace lab05_tests

namespace {

// The residual that poisson_jacobi() reports for `u` (its own final iterate) must be the
// relative residual of u, within the rounding bound of stencil_golden.hpp's residual().
void expect_residual(const JacobiRun& run, const std::vector<float>& f, const PoissonProblem& p, const char* what) {
  const std::vector<double> u(run.solution.begin(), run.solution.end());
  const golden::Residual res = golden::residual(u, f, p.n, p.h);
  EXPECT_LE(std::fabs(run.result.residual - res.value), res.bound)
      << what << ": the residual reported, " << run.result.residual << ", is not the relative residual of the "
      << "solution returned, " << res.value << " (allowed error " << res.bound
      << ") — check the reduction: does every block's partial sum reach the total, each cell counted once?";
}

// Random u and f, no sweep: the residual of the initial guess, computed on the GPU.
void check_jacobi_residual(int n) {
  const auto u0 = random_floats(std::size_t(n) * n, current_seed());
  const auto f = random_floats(std::size_t(n) * n, current_seed() ^ 0xF00Dull);
  PoissonProblem p{n, 1.0f / (n + 1), 0.0f, 0, 1};
  const JacobiRun run = run_jacobi(u0, f, p);
  ASSERT_TRUE(run.error.empty()) << "poisson_jacobi, n = " << n << ", max_iters = 0: " << run.error;
  EXPECT_EQ(run.result.iterations, 0) << "max_iters = 0 must do no sweep";
  expect_residual(run, f, p, ("n = " + std::to_string(n) + ", max_iters = 0").c_str());
}

// A fixed number of sweeps (tol 0): the iterate against the golden model, cell by cell.
void check_jacobi_sweeps(int n, int iters, int check_every) {
  const auto u0 = random_floats(std::size_t(n) * n, current_seed());
  const auto f = random_floats(std::size_t(n) * n, current_seed() ^ 0xF00Dull);
  PoissonProblem p{n, 1.0f / (n + 1), 0.0f, iters, check_every};
  const JacobiRun run = run_jacobi(u0, f, p);
  ASSERT_TRUE(run.error.empty()) << "poisson_jacobi, n = " << n << ": " << run.error;
  EXPECT_EQ(run.result.iterations, iters) << "with tol = 0 every one of max_iters sweeps must run";
  Shape s;
  s.nx = s.ny = n;
  const Field g = golden::jacobi(u0, f, n, p.h, iters);
  const Report r = compare_field(run.solution, g, s, false);
  record_error(r);
  EXPECT_TRUE(r.ok()) << "Jacobi, " << n << " x " << n << ", " << iters << " sweeps, u = 0 outside the grid:\n"
                      << r.text << hints(r, s.cells(), Boundary::dirichlet);
  expect_residual(run, f, p, "after the last sweep");
}

// The stopping rule: the same number of sweeps as the golden model's Jacobi in double (within
// one check interval: residuals near tol may round either way), and a residual <= tol.
void check_jacobi_stops(int n, float tol, int check_every) {
  std::vector<float> f(std::size_t(n) * n);
  const double h = 1.0 / (n + 1);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      f[std::size_t(j) * n + i] = float(-2 * M_PI * M_PI * std::sin(M_PI * (i + 1) * h) * std::sin(M_PI * (j + 1) * h));
  const std::vector<float> u0(f.size(), 0.0f);
  const int cap = 20000;
  PoissonProblem p{n, float(h), tol, cap, check_every};
  const JacobiRun run = run_jacobi(u0, f, p);
  ASSERT_TRUE(run.error.empty()) << "poisson_jacobi: " << run.error;
  // The golden model's own stopping point.
  int expected = -1;
  golden::JacobiIteration golden_run(u0, f, n, p.h);
  for (int it = 1; it <= cap && expected < 0; ++it) {
    golden_run.sweep();
    if (it % check_every == 0 && golden::residual(golden_run.field().value, f, n, p.h).value <= tol) expected = it;
  }
  ASSERT_GT(expected, 0) << "the golden model did not converge (a bad case)";
  EXPECT_TRUE(run.result.converged) << "Jacobi, n = " << n << ", tol = " << tol << ": not converged after "
                                    << run.result.iterations << " sweeps (the golden model needs " << expected << ")";
  EXPECT_LE(run.result.residual, tol);
  EXPECT_EQ(run.result.iterations % check_every, 0)
      << "the residual is checked every " << check_every << " sweeps, so the iteration count stops on a multiple";
  EXPECT_LE(std::abs(run.result.iterations - expected), check_every)
      << "stopped after " << run.result.iterations << " sweeps; the golden model in double stops after " << expected
      << " (check every " << check_every << ")";
  expect_residual(run, f, p, "at the stop");
}

// Against the analytic solution u = sin(pi x) sin(pi y) of lap u = -2 pi^2 sin(pi x) sin(pi y):
// the error of the converged discrete solution falls as h^2 (the five-point Laplacian's
// truncation error); the observed order log2(e(h) / e(h/2)) must lie in [1.8, 2.2].
void check_jacobi_order() {
  std::vector<double> errors;
  std::vector<int> sizes = {7, 15, 31};  // h = 1/8, 1/16, 1/32
  for (int n : sizes) {
    const double h = 1.0 / (n + 1);
    std::vector<float> f(std::size_t(n) * n);
    std::vector<double> exact(f.size());
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double s = std::sin(M_PI * (i + 1) * h) * std::sin(M_PI * (j + 1) * h);
        exact[std::size_t(j) * n + i] = s;
        f[std::size_t(j) * n + i] = float(-2 * M_PI * M_PI * s);
      }
    // Jacobi's slowest mode decays as (1 - pi^2 h^2 / 2) per sweep: 14 e-foldings take about
    // 28 / (pi^2 h^2) sweeps, and leave the iteration error 1e-6 of the discretisation's.
    PoissonProblem p{n, float(h), 1e-6f, int(30 / (M_PI * M_PI * h * h)) + 100, 50};
    const JacobiRun run = run_jacobi(std::vector<float>(f.size(), 0.0f), f, p);
    ASSERT_TRUE(run.error.empty()) << "poisson_jacobi, n = " << n << ": " << run.error;
    double e = 0;
    for (std::size_t k = 0; k < f.size(); ++k) e = std::max(e, std::fabs(double(run.solution[k]) - exact[k]));
    errors.push_back(e);
    std::printf("n = %d (h = 1/%d): %d sweeps, residual %.3g, max error %.4g\n", n, n + 1, run.result.iterations,
                run.result.residual, e);
  }
  for (std::size_t i = 0; i + 1 < errors.size(); ++i) {
    const double order = std::log2(errors[i] / errors[i + 1]);
    std::printf("observed order between h = 1/%d and 1/%d: %.3f\n", sizes[i] + 1, sizes[i + 1] + 1, order);
    EXPECT_TRUE(order >= 1.8 && order <= 2.2)
        << "the error against the analytic solution u = sin(pi x) sin(pi y) should fall as h^2: errors "
        << errors[i] << " at h = 1/" << sizes[i] + 1 << " and " << errors[i + 1] << " at h = 1/" << sizes[i + 1] + 1
        << " give an order of " << order << " (expected 1.8 .. 2.2)";
  }
}

// --- the cases -----------------------------------------------------------------------------------

constexpr Boundary kAllBc[] = {Boundary::dirichlet, Boundary::neumann, Boundary::periodic};

// 2D shapes: one cell, one row, one column, smaller than a tile, tile multiples and one off
// (16 and 18 for the tiled kernel's 16 x 16 output tile, 32 for a warp), odd sizes.
const int kShapes2d[][2] = {{1, 1}, {1, 37}, {37, 1}, {2, 2}, {5, 3},     {16, 16},
                            {17, 15}, {18, 18}, {33, 31}, {100, 75}, {257, 129}, {1023, 517}};
// 3D shapes: one cell; 1 cell thick along each axis; smaller than a tile; the tiled kernel's
// 6 (output) and 8 (input) and one off; a few blocks; a 64^3 cube.
const int kShapes3d[][3] = {{1, 1, 1},  {1, 1, 40},  {40, 1, 1},  {1, 40, 1},   {7, 5, 3},   {6, 6, 6},
                            {8, 8, 8},  {13, 1, 9},  {33, 17, 9}, {31, 33, 35}, {70, 20, 45}, {64, 64, 64}};
// Steps: several, odd and even (a wrong final buffer shows on one parity), on shapes with
// several tiles, 1 cell thick, and smaller than one tile.
const int kSteps2d[][3] = {{2, 1, 3}, {40, 1, 4}, {33, 17, 2}, {100, 75, 7}, {57, 61, 13}, {257, 129, 20}};
const int kSteps3d[][4] = {{1, 1, 2, 3}, {9, 7, 5, 2}, {1, 20, 30, 5}, {33, 17, 40, 6}, {64, 48, 35, 11}};

// Speed: grids several times the 50 MB L2 of an H100.
const Case kSpeed3d[] = {{512, 512, 512, Boundary::dirichlet, 1}, {512, 512, 512, Boundary::periodic, 1}};
const Case kSpeedSteps3d[] = {{512, 512, 512, Boundary::neumann, 4}};
const Case kSpeedTemporal[] = {{8192, 8192, 0, Boundary::dirichlet, 8}, {8192, 8192, 0, Boundary::periodic, 8}};

void register_lab05(Registry& reg) {
  for (Boundary bc : kAllBc) {
    for (const auto& sh : kShapes2d) {
      const Case c{sh[0], sh[1], 0, bc, 1};
      reg.gpu("correctness", "naive2d", c.name(), [c] { check_sweep(c, 0, heat2d_naive, {}); });
      reg.gpu("correctness", "tiled2d", c.name(), [c] { check_sweep(c, kTile2d, heat2d_tiled, {}); });
    }
    for (const auto& sh : kShapes3d) {
      const Case c{sh[0], sh[1], sh[2], bc, 1};
      reg.gpu("correctness", "naive3d", c.name(), [c] { check_sweep(c, 0, {}, stencil3d_naive); });
      reg.gpu("correctness", "tiled3d", c.name(), [c] { check_sweep(c, kTile3d, {}, stencil3d_tiled); });
      reg.gpu("correctness", "coarsened3d", c.name(), [c] { check_sweep(c, 0, {}, stencil3d_coarsened); });
      reg.gpu("correctness", "register3d", c.name(), [c] { check_sweep(c, 0, {}, stencil3d_register); });
    }
    for (const auto& sh : kSteps2d) {
      const Case c{sh[0], sh[1], 0, bc, sh[2]};
      reg.gpu("correctness", "steps2d", c.name(), [c] { check_steps(c, heat2d_steps, {}); });
      reg.gpu("correctness", "temporal2d", c.name(), [c] { check_steps(c, heat2d_temporal, {}); });
    }
    // Temporal blocking: step counts that are not multiples of a fused block.
    const Case extra{130, 70, 0, bc, 5};
    reg.gpu("correctness", "temporal2d", extra.name(), [extra] { check_steps(extra, heat2d_temporal, {}); });
    for (const auto& sh : kSteps3d) {
      const Case c{sh[0], sh[1], sh[2], bc, sh[3]};
      reg.gpu("correctness", "steps3d", c.name(), [c] { check_steps(c, {}, stencil3d_steps); });
    }
  }
  // Launch geometry: a grid of more rows than a launch may have blocks along y (65535), so a design
  // with one row of threads per block fails, on a GPU and on the CPU backend alike (it refuses such
  // a grid as a GPU does); 3 columns keep it cheap on the CPU backend. In 3D the contract bounds ny
  // and nz by 65535, so blocks of at least one row and one plane always fit.
  const Case tall{3, 70000, 0, Boundary::periodic, 1}, tall_steps{3, 70000, 0, Boundary::periodic, 3};
  reg.gpu("correctness", "naive2d", tall.name(), [tall] { check_sweep(tall, 0, heat2d_naive, {}); });
  reg.gpu("correctness", "tiled2d", tall.name(), [tall] { check_sweep(tall, kTile2d, heat2d_tiled, {}); });
  reg.gpu("correctness", "steps2d", tall_steps.name(), [tall_steps] { check_steps(tall_steps, heat2d_steps, {}); });
  reg.gpu("correctness", "temporal2d", tall_steps.name(),
          [tall_steps] { check_steps(tall_steps, heat2d_temporal, {}); });
  // Jacobi: the GPU residual of random data; sweeps against the golden model; the stopping
  // rule; the order of accuracy against the analytic solution.
  for (int n : {1, 7, 100, 181})
    reg.gpu("correctness", "jacobi", "residual_n" + std::to_string(n), [n] { check_jacobi_residual(n); });
  for (const auto& [n, iters, every] : {std::tuple{2, 5, 1}, std::tuple{31, 50, 7}, std::tuple{100, 40, 40}})
    reg.gpu("correctness", "jacobi", "sweeps_n" + std::to_string(n) + "_it" + std::to_string(iters),
            [n = n, iters = iters, every = every] { check_jacobi_sweeps(n, iters, every); });
  reg.gpu("correctness", "jacobi", "stops_n31_tol0.001", [] { check_jacobi_stops(31, 1e-3f, 10); });
  reg.gpu("correctness", "jacobi", "stops_n15_tol0.00001", [] { check_jacobi_stops(15, 1e-5f, 25); });
  reg.gpu("correctness", "jacobi", "analytic_order2", [] { check_jacobi_order(); });

  const LabSpec& spec = reg.spec();
  const std::string naive = "naive baseline";
  for (const Case& c : kSpeed3d) {
    reg.gpu("speedup", "coarsened3d", c.name(), [c, &spec] {
      check_speed(c, {}, one_sweep(stencil3d_coarsened), spec.grader("speedup.coarsened3d"),
                  "stencil3d_coarsened " + c.name() + " vs the naive baseline");
    });
    reg.gpu("speedup", "register3d", c.name(), [c, &spec] {
      check_speed(c, {}, one_sweep(stencil3d_register), spec.grader("speedup.register3d"),
                  "stencil3d_register " + c.name() + " vs the naive baseline");
    });
  }
  for (const Case& c : kSpeedSteps3d)
    reg.gpu("speedup", "sweep3d", c.name(), [c, &spec] {
      check_speed(c, {}, stencil3d_steps, spec.grader("speedup.sweep3d"),
                  "stencil3d_steps " + c.name() + " vs the naive baseline, " + std::to_string(c.steps) + " sweeps");
    });
  for (const Case& c : kSpeedTemporal)
    reg.gpu("speedup", "temporal2d", c.name(), [c, &spec] {
      check_speed(c, heat2d_temporal, {}, spec.grader("speedup.temporal2d"),
                  "heat2d_temporal " + c.name() + " vs the naive baseline, " + std::to_string(c.steps) + " sweeps");
    });

  // The techniques, one grader per slot that teaches one, each on a problem of whole tiles of the
  // reference (periodic: every cell of a tile, ghosts included, is a load). naive2d and naive3d teach
  // none beyond what every correctness test checks (kernels on the device compute the output).
  const Case tile2d{16 * kTile2d, 6 * kTile2d, 0, Boundary::periodic, 1};
  const double in2 = kTile2d + 2, in3 = kTile3d + 2;
  reg.gpu("technique", "tiled2d", tile2d.name(), [tile2d, in2] {
    check_sweep_technique(
        tile2d, kTile2d, heat2d_tiled, {}, "tiled2d",
        "an input tile of (kTile2d + 2)^2 cells in shared memory, one per thread, a __syncthreads() before it is "
        "read, and every stencil point read from it (PMPP fig. 8.8)",
        all_of({shared_tile(in2 * in2 * sizeof(float)), taps_from_shared(0.7),
                // each cell loaded once by the block whose tile holds it, plus the halo its neighbours load again
                global_loads_per_output(in2 * in2 / (kTile2d * kTile2d) + 0.25)}));
  });
  const Case tile3d{8 * kTile3d, 6 * kTile3d, 4 * kTile3d, Boundary::periodic, 1};
  reg.gpu("technique", "tiled3d", tile3d.name(), [tile3d, in3] {
    check_sweep_technique(
        tile3d, kTile3d, {}, stencil3d_tiled, "tiled3d",
        "an input tile of (kTile3d + 2)^3 cells in shared memory, one per thread, a __syncthreads() before it is "
        "read, and every stencil point read from it (PMPP fig. 8.8 in 3D)",
        all_of({shared_tile(in3 * in3 * in3 * sizeof(float)), taps_from_shared(0.7),
                global_loads_per_output(in3 * in3 * in3 / (kTile3d * kTile3d * kTile3d) + 0.25)}));
  });
  // The z-walking sweeps: two of the coarsened reference's 30 x 14 plane tiles across and two up,
  // two blocks of Z_PER_BLOCK = 32 planes each.
  const Case walk{60, 28, 64, Boundary::periodic, 1};
  reg.gpu("technique", "coarsened3d", walk.name(), [walk] {
    check_sweep_technique(walk, 0, {}, stencil3d_coarsened, "coarsened3d",
                          "thread coarsening along z: a 2D block walks up a column of planes, each thread computing "
                          "several output planes, with the previous, current and next planes of the input tile in "
                          "shared memory and a __syncthreads() between loading a plane and reading it (PMPP fig. 8.10)",
                          all_of({outputs_per_thread(2), plane_tiles(3, walk), taps_from_shared(0.7), walk_loads(walk)}));
  });
  reg.gpu("technique", "register3d", walk.name(), [walk] {
    check_sweep_technique(walk, 0, {}, stencil3d_register, "register3d",
                          "register tiling: each thread computes several output planes, keeps the previous and next "
                          "planes (the z neighbours) in registers, and only the current plane of the tile is in shared "
                          "memory, with a __syncthreads() before it is read (PMPP fig. 8.12)",
                          all_of({outputs_per_thread(2), plane_tiles(1, walk), z_from_registers(), walk_loads(walk)}));
  });
  const std::string swap_asks =
      "double buffering: each step reads one buffer and writes the other, then the two pointers swap (no copies, "
      "at most one launch per step)";
  const Case steps2d{130, 70, 0, Boundary::neumann, 6};
  reg.gpu("technique", "steps2d", steps2d.name(), [steps2d, swap_asks] {
    check_steps_technique(steps2d, heat2d_steps, {}, "steps2d", swap_asks, swapped_buffers(steps2d.steps));
  });
  const Case steps3d{33, 17, 20, Boundary::neumann, 5};
  reg.gpu("technique", "steps3d", steps3d.name(), [steps3d, swap_asks] {
    check_steps_technique(steps3d, {}, stencil3d_steps, "steps3d", swap_asks, swapped_buffers(steps3d.steps));
  });
  // Temporal blocking: 4 x 2 of the reference's 56 x 56 output tiles, 8 steps.
  const Case temporal{224, 112, 0, Boundary::periodic, 8};
  reg.gpu("technique", "temporal2d", temporal.name(), [temporal] {
    check_steps_technique(temporal, heat2d_temporal, {}, "temporal2d",
                          "temporal blocking: several steps fused in each launch, a tile loaded once and advanced "
                          "several steps on chip before it is stored",
                          fused_steps(temporal.steps));
  });
  reg.gpu("technique", "jacobi", "residual_on_gpu_n32_it10", [] {
    check_jacobi_technique(32, 10, 5,
                           "the residual reduced on the GPU: a reduction kernel sums the squares and the host reads "
                           "only the sum, a few bytes per check",
                           gpu_residual(10));
  });

  // The CPU tests: the contract and the golden model (test_lab05_cpu.cpp).
  register_lab05_cpu(reg);
}

}  // namespace

CONVLAB_LAB_MAIN(register_lab05)
