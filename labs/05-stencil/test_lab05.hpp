// Lab 05's graders: what test_lab05.cpp (the correctness checks, the cases and the registration),
// test_lab05_checks.cpp (the speed and technique checks) and test_lab05_cpu.cpp (the CPU tests of
// the contract and the golden model) share. See test_lab05.cpp for what is checked and how.
#pragma once

#include "lab05.hpp"
#include "stencil_golden.hpp"

#include <convlab/check.hpp>
#include <convlab/technique.hpp>
#include <convlab/testbed.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lab05_tests {

using namespace convlab;
using namespace convlab::lab05;
using golden::Field;
using golden::Shape;

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { CONVLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
};

// --- cases ---------------------------------------------------------------------------------------

struct Case {
  int nx = 1, ny = 1, nz = 1;  // nz = 0 marks a 2D case
  Boundary bc = Boundary::dirichlet;
  int steps = 1;
  bool three_d() const { return nz > 0; }
  // "periodic_33x17x9" or "neumann_100x75_t7"
  std::string name() const {
    std::string n = std::string(to_string(bc)) + "_" + std::to_string(nx) + "x" + std::to_string(ny);
    if (three_d()) n += "x" + std::to_string(nz);
    if (steps != 1) n += "_t" + std::to_string(steps);
    return n;
  }
  Shape shape(float wall) const {
    Shape s;
    s.nx = nx;
    s.ny = ny;
    s.nz = three_d() ? nz : 1;
    s.bc = bc;
    s.wall = wall;
    return s;
  }
};

// Heat parameters drawn from the seed: different spacings along each axis (so a kernel that
// mixes up x and y, or y and z, is off), a time step between half and all of the largest stable
// one; and a wall temperature for Dirichlet.
struct Params {
  Coeffs c;
  float wall = 0;
};
Params draw_params(std::uint64_t seed, bool three_d);

// test_lab05.cpp: the comparison with the golden model, the run of a launcher (an error text, or
// empty), one sweep and many steps checked against the golden model (true if right), a run of Jacobi.

struct Report {
  std::size_t wrong = 0, unwritten = 0, from_shared = 0, on_boundary = 0;
  bool has_interior = false;  // the grid has cells off its boundary
  double max_ratio = 0, max_error = 0;
  std::string text;
  bool ok() const { return wrong == 0; }
};

Report compare_field(const std::vector<float>& got, const Field& g, const Shape& s, bool three_d, int tile = 0);

using Sweep2d = std::function<void(const float*, float*, const Grid2d&, const Coeffs&, cudaStream_t)>;
using Sweep3d = std::function<void(const float*, float*, const Grid3d&, const Coeffs&, cudaStream_t)>;
using Steps2d = std::function<float*(float*, float*, const Grid2d&, const Coeffs&, int, cudaStream_t)>;
using Steps3d = std::function<float*(float*, float*, const Grid3d&, const Coeffs&, int, cudaStream_t)>;

Grid2d grid2d(const Case& c, float wall);
Grid3d grid3d(const Case& c, float wall);

std::string run(const std::function<void(cudaStream_t)>& launch, cudaStream_t s);

bool check_sweep(const Case& c, int tile, const Sweep2d& k2, const Sweep3d& k3);

bool check_steps(const Case& c, const Steps2d& k2, const Steps3d& k3);

struct JacobiRun {
  JacobiResult result;
  std::vector<float> solution;
  std::string error;
};

JacobiRun run_jacobi(const std::vector<float>& u0, const std::vector<float>& f, const PoissonProblem& pp);

// test_lab05_checks.cpp: the speed and technique checks, and the technique rules the slots are held to.
void check_speed(const Case& c, const Steps2d& k2, const Steps3d& k3, const GraderSpec& grader,
                 const std::string& what);
Steps3d one_sweep(void (*fn)(const float*, float*, const Grid3d&, const Coeffs&, cudaStream_t));
TechniqueRule plane_tiles(double planes, const Case& c);
TechniqueRule walk_loads(const Case& c);
TechniqueRule z_from_registers();
TechniqueRule swapped_buffers(int steps);
TechniqueRule fused_steps(int steps);
TechniqueRule gpu_residual(int sweeps);
void check_sweep_technique(const Case& c, int tile, const Sweep2d& k2, const Sweep3d& k3, const std::string& slot,
                           const std::string& asks, const TechniqueRule& rule);
void check_steps_technique(const Case& c, const Steps2d& k2, const Steps3d& k3, const std::string& slot,
                           const std::string& asks, const TechniqueRule& rule);
void check_jacobi_technique(int n, int sweeps, int check_every, const std::string& asks, const TechniqueRule& rule);

// test_lab05_cpu.cpp: the CPU tests (the contract refusing bad problems and unstable parameters,
// the golden model worked by hand and its largest bound).
void register_lab05_cpu(Registry& reg);

}  // namespace lab05_tests
