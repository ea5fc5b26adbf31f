// Lab 05's CPU tests (moved from test_lab05.cpp, which registers them where they stood): the
// contract refusing bad problems and unstable parameters before touching the GPU, the golden model
// against values worked by hand, and the speed tests' tolerance against the golden model's bounds.
#include "test_lab05.hpp"

#include "lab05.hpp"
#include "stencil_golden.hpp"

#include <convlab/random.hpp>
#include <convlab/testbed.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace lab05_tests {

void register_lab05_cpu(Registry& reg) {
  // The contract refuses bad problems and unstable parameters before touching the GPU.
  reg.cpu("cpu", "contract", "rejects_bad_problems", [] {
    const Coeffs c;
    for (const Grid2d g : {Grid2d{0, 5}, Grid2d{5, 0}, Grid2d{65536, 65536}, Grid2d{1, 8 * kMaxDim + 1}}) {
      expect_refused([&] { heat2d_naive(nullptr, nullptr, g, c, nullptr); }, "stencil2d");
      expect_refused([&] { heat2d_tiled(nullptr, nullptr, g, c, nullptr); }, "stencil2d");
      expect_refused([&] { heat2d_steps(nullptr, nullptr, g, c, 1, nullptr); }, "stencil2d");
      expect_refused([&] { heat2d_temporal(nullptr, nullptr, g, c, 1, nullptr); }, "stencil2d");
    }
    for (const Grid3d g : {Grid3d{0, 5, 5}, Grid3d{5, 5, 0}, Grid3d{2048, 2048, 1024}, Grid3d{1, 1, kMaxDim + 1}}) {
      expect_refused([&] { stencil3d_naive(nullptr, nullptr, g, c, nullptr); }, "stencil3d");
      expect_refused([&] { stencil3d_tiled(nullptr, nullptr, g, c, nullptr); }, "stencil3d");
      expect_refused([&] { stencil3d_coarsened(nullptr, nullptr, g, c, nullptr); }, "stencil3d");
      expect_refused([&] { stencil3d_register(nullptr, nullptr, g, c, nullptr); }, "stencil3d");
      expect_refused([&] { stencil3d_steps(nullptr, nullptr, g, c, 1, nullptr); }, "stencil3d");
    }
    expect_refused([&] { heat2d_steps(nullptr, nullptr, Grid2d{4, 4}, c, -1, nullptr); }, "steps must be >= 0");
    expect_refused([&] { stencil3d_steps(nullptr, nullptr, Grid3d{4, 4, 4}, c, -1, nullptr); }, "steps must be >= 0");
    for (const PoissonProblem p : {PoissonProblem{0, 0.5f, 0, 1, 1}, PoissonProblem{4, 0.0f, 0, 1, 1},
                                   PoissonProblem{4, 0.2f, -1, 1, 1}, PoissonProblem{4, 0.2f, 0, -1, 1},
                                   PoissonProblem{4, 0.2f, 0, 1, 0}})
      expect_refused([&] { poisson_jacobi(nullptr, nullptr, nullptr, p, nullptr); }, "poisson");
  });
  reg.cpu("cpu", "contract", "heat_stability_limit", [] {
    // alpha dt / dx^2 = 1/4 is the 2D limit with equal spacings; just above it is refused.
    const Coeffs c = heat_coefficients_2d({1.0, 0.25, 1.0, 1.0, 0});
    EXPECT_EQ(c.c0, 0.0f);
    EXPECT_EQ(c.cx, 0.25f);
    EXPECT_EQ(c.cy, 0.25f);
    expect_refused([] { heat_coefficients_2d({1.0, 0.2501, 1.0, 1.0, 0}); }, "alpha*dt/dx^2 = 0.250100 > 1/4");
    const Coeffs c3 = heat_coefficients_3d({2.0, 0.01, 0.5, 0.5, 0.5});  // lambda = 0.08 per axis
    EXPECT_FLOAT_EQ(c3.c0, 1.0f - 6 * 0.08f);
    EXPECT_FLOAT_EQ(c3.cz, 0.08f);
    expect_refused([] { heat_coefficients_3d({1.0, 1.0 / 6 + 1e-4, 1.0, 1.0, 1.0}); }, "> 1/6");
    expect_refused([] { heat_coefficients_2d({1.0, -1.0, 1.0, 1.0, 0}); }, "must all be > 0");
  });
  // The golden model against values worked by hand, for each boundary condition.
  reg.cpu("cpu", "golden", "worked_by_hand", [] {
    // 3 x 1 grid u = (1, 2, 4), c0 = 0.5, cx = 0.25, cy = 0.125: y neighbours are ghosts.
    const std::vector<float> u = {1, 2, 4};
    Coeffs c;
    c.c0 = 0.5f;
    c.cx = 0.25f;
    c.cy = 0.125f;
    Shape s;
    s.nx = 3;
    s.ny = 1;
    s.wall = 8;
    s.bc = Boundary::dirichlet;  // ghosts 8: 0.5 u + 0.25 (l + r) + 0.125 * 16
    EXPECT_EQ(golden::run(u, s, c, false, 1).value, (std::vector<double>{0.5 + 0.25 * 10 + 2, 1 + 0.25 * 5 + 2, 2 + 0.25 * 10 + 2}));
    s.bc = Boundary::neumann;  // ghosts: the nearest cell
    EXPECT_EQ(golden::run(u, s, c, false, 1).value,
              (std::vector<double>{0.5 + 0.25 * 3 + 0.25, 1 + 0.25 * 5 + 0.5, 2 + 0.25 * 6 + 1}));
    s.bc = Boundary::periodic;  // ghosts wrap
    EXPECT_EQ(golden::run(u, s, c, false, 1).value,
              (std::vector<double>{0.5 + 0.25 * 6 + 0.25, 1 + 0.25 * 5 + 0.5, 2 + 0.25 * 3 + 1}));
    // Two steps are the one-step model applied twice, and the bound grows.
    s.bc = Boundary::neumann;
    const Field one = golden::run(u, s, c, false, 1), two = golden::run(u, s, c, false, 2);
    std::vector<float> u1(one.value.begin(), one.value.end());
    EXPECT_EQ(golden::run(u1, s, c, false, 1).value, two.value);
    for (std::size_t k = 0; k < u.size(); ++k) EXPECT_GT(two.bound[k], one.bound[k]);
  });
  // The speed tests' tolerance (largest_bound, no field) covers every cell's bound of the golden
  // field, for each boundary condition, in 2D and 3D, and is less than 50 times the largest of them
  // (a bound far too large would let wrong results through the timed runs' check).
  reg.cpu("cpu", "golden", "largest_bound_covers_every_cell", [] {
    for (const bool three_d : {false, true})
      for (const Boundary bc : {Boundary::dirichlet, Boundary::neumann, Boundary::periodic}) {
        const std::uint64_t seed = test_seed(std::string("lab05.cpu.largest_bound.") + (three_d ? "3d." : "2d.") +
                                             to_string(bc));
        const Params p = draw_params(seed, three_d);
        Shape s;
        s.nx = 13;
        s.ny = 11;
        s.nz = three_d ? 7 : 1;
        s.bc = bc;
        s.wall = p.wall;
        const std::vector<float> u0 = random_floats(s.cells(), seed);
        for (const int steps : {1, 4, 9}) {
          const Field f = golden::run(u0, s, p.c, three_d, steps);
          const double most = *std::max_element(f.bound.begin(), f.bound.end());
          const double bound = golden::largest_bound(p.c, p.wall, three_d, steps, 1.0);
          EXPECT_GE(bound, most) << "seed " << seed << ", " << steps << " steps";
          EXPECT_LT(bound, 50 * most) << "seed " << seed << ", " << steps << " steps";
        }
      }
  });
}

}  // namespace lab05_tests
