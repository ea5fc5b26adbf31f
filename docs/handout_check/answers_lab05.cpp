// Lab 05's worked numbers: the stencil OP/B model (stencil_op_ratio.hpp), the
// boundary conditions through the golden model and its ghost() rule
// (stencil_golden.hpp), the stability limit through heat_coefficients_2d/3d(),
// tile sizes and the temporal-blocking traffic.
#include "answers.hpp"
#include "gpu_model.hpp"

#include "lab05.hpp"
#include "stencil_golden.hpp"
#include "stencil_op_ratio.hpp"

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace convlab::handout {

namespace {

using namespace convlab::lab05;

// One heat step of the 3 x 3 grid 1..9 with lambda = 1/8 along both axes
// (alpha = 1, dx = dy = 1, dt = 1/8), through the golden model: cell (0, 0).
double corner_after_one_step(Boundary bc) {
  HeatParams p;
  p.alpha = 1;
  p.dx = p.dy = 1;
  p.dt = 0.125;
  const Coeffs c = heat_coefficients_2d(p);
  golden::Shape s;
  s.nx = s.ny = 3;
  s.bc = bc;
  s.wall = 0;
  const golden::Field f = golden::run({1, 2, 3, 4, 5, 6, 7, 8, 9}, s, c, false, 1);
  return f.value[0];
}

// Distinct ghost cells of the seven-point stencil on an nx x ny x nz grid:
// every out-of-range neighbour position, counted once.
long long ghost_cells_3d(int nx, int ny, int nz) {
  std::set<std::tuple<int, int, int>> ghosts;
  const int d[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
        for (const auto& o : d) {
          const int xx = x + o[0], yy = y + o[1], zz = z + o[2];
          if (golden::ghost(xx, nx, Boundary::dirichlet) < 0 || golden::ghost(yy, ny, Boundary::dirichlet) < 0 ||
              golden::ghost(zz, nz, Boundary::dirichlet) < 0)
            ghosts.insert({xx, yy, zz});
        }
  return static_cast<long long>(ghosts.size());
}

// The largest stable dt for alpha = 1 and the given spacings, checked against
// the contract: heat_coefficients_*() accepts it and refuses 1 % more.
double largest_stable_dt(double dx, double dy, double dz, bool three_d) {
  const double dt = 0.5 / (1 / (dx * dx) + 1 / (dy * dy) + (three_d ? 1 / (dz * dz) : 0.0));
  HeatParams p{1.0, dt, dx, dy, dz};
  three_d ? heat_coefficients_3d(p) : heat_coefficients_2d(p);  // throws if the limit were wrong
  p.dt = dt * 1.01;
  try {
    three_d ? heat_coefficients_3d(p) : heat_coefficients_2d(p);
  } catch (const std::invalid_argument&) {
    return dt;
  }
  throw std::logic_error("heat_coefficients accepted a time step above the stability limit");
}

// A star stencil of radius R in 3D: 6R + 1 points, 2(6R + 1) - 1 operations.
int star3d_points(int radius) { return 6 * radius + 1; }
int star3d_ops(int radius) { return 2 * star3d_points(radius) - 1; }

// The reference's z walk (64 x 16 outputs per plane, Z_PER_BLOCK = 32) for a star
// stencil of radius R: cells loaded per plane (the tile and its ring of R cells on
// each side, no corners), planes loaded per block (Z + 2R) and OP/B.
int zwalk_loaded(int radius) { return 64 * 16 + 2 * radius * (64 + 16); }
double zwalk_op_ratio(int radius) {
  return double(star3d_ops(radius)) * 64 * 16 * 32 / (4.0 * zwalk_loaded(radius) * (32 + 2 * radius));
}
// Of a block's halo cells, those its neighbours in a 2 x 2 cluster hold: one side
// of 64 and one of 16, R cells deep.
int cluster_halo_cells(int radius) { return radius * (64 + 16); }

}  // namespace

std::vector<Answer> lab05_answers() {
  std::vector<Answer> a;
  // Question 1: OP/B of designs not in the table.
  a.push_back({"lab05.op_naive3d", fixed(naive_stencil_op_ratio(kOps3d, 7), 2)});
  a.push_back({"lab05.op_plane_32x32", fixed(plane_stencil_op_ratio(32, 32), 2)});
  a.push_back({"lab05.op_tiled3d_6", fixed(tiled3d_stencil_op_ratio(6), 2)});

  // Question 2: the three boundary conditions on one corner cell.
  a.push_back({"lab05.corner_dirichlet", fixed(corner_after_one_step(Boundary::dirichlet), 2)});
  a.push_back({"lab05.corner_neumann", fixed(corner_after_one_step(Boundary::neumann), 2)});
  a.push_back({"lab05.corner_periodic", fixed(corner_after_one_step(Boundary::periodic), 2)});

  // Question 3: ghost cells of a 64 x 48 x 32 grid.
  const long long ghosts = ghost_cells_3d(64, 48, 32);
  a.push_back({"lab05.ghost_cells_3d", grouped(ghosts)});
  a.push_back({"lab05.ghost_cells_3d_pct", fixed(100.0 * ghosts / (64.0 * 48 * 32), 1)});

  // Question 4: 3D tiles.
  a.push_back({"lab05.smem_18cube", grouped(4LL * 18 * 18 * 18)});
  a.push_back({"lab05.compute_frac_8", fixed(100.0 * kTile3d * kTile3d * kTile3d / (8.0 * 8 * 8), 1)});
  a.push_back({"lab05.loads_per_cell_8", fixed(8.0 * 8 * 8 / (kTile3d * kTile3d * kTile3d), 2)});

  // Question 5: the coarsened kernel's three planes of 32 x 16 ...
  a.push_back({"lab05.smem_coarsened", grouped(3LL * 32 * 16 * 4)});
  a.push_back({"lab05.compute_frac_plane", fixed(100.0 * 30 * 14 / (32.0 * 16), 1)});
  a.push_back({"lab05.halo_frac_plane", fixed(100.0 * (32 * 16 - 30 * 14) / (32.0 * 16), 1)});
  // ... its launch on 512^3 (the reference's grid: ceil(n / 30) x ceil(n / 14) x ceil(n / Z_PER_BLOCK)),
  // the planes one block loads, and the OP/B of a finite walk.
  const auto ceil_div = [](long long a_, long long b_) { return (a_ + b_ - 1) / b_; };
  a.push_back({"lab05.zwalk_blocks", grouped(ceil_div(512, 30) * ceil_div(512, 14) * ceil_div(512, 32))});
  a.push_back({"lab05.zwalk_planes_32", std::to_string(32 + 2)});
  a.push_back({"lab05.zwalk_op_32", fixed(zwalk_stencil_op_ratio(30 * 14, 32 * 16, 32), 2)});
  a.push_back({"lab05.zwalk_op_8", fixed(zwalk_stencil_op_ratio(30 * 14, 32 * 16, 8), 2)});

  // Question 7: temporal blocking, a 64 x 64 tile advanced 4 steps.
  const int tile = 64, steps = 4, out = tile - 2 * steps;
  a.push_back({"lab05.tb_cells", grouped(tile * tile + out * out)});
  a.push_back({"lab05.tb_separate_cells", grouped(2LL * steps * out * out)});
  a.push_back({"lab05.tb_ratio", fixed(2.0 * steps * out * out / (tile * tile + out * out), 2)});

  // Question 8: the stability limit, alpha = 1, dx = 0.01, dy = 0.02 (and dz = 0.01).
  a.push_back({"lab05.dt_max_2d", fixed(largest_stable_dt(0.01, 0.02, 0, false) * 1e5, 2)});
  a.push_back({"lab05.dt_max_3d", fixed(largest_stable_dt(0.01, 0.02, 0.01, true) * 1e5, 2)});

  // Question 9: Jacobi sweeps to shrink the slowest error mode a million-fold,
  // at the rate 1 - pi^2 h^2 / 2 per sweep of the handout.
  const auto sweeps = [](double h) {
    const double pi = std::acos(-1.0), rate = 1.0 - pi * pi * h * h / 2.0;
    return static_cast<long long>(std::ceil(std::log(1e-6) / std::log(rate)));
  };
  a.push_back({"lab05.jacobi_h32", grouped(sweeps(1.0 / 32))});
  a.push_back({"lab05.jacobi_h64", grouped(sweeps(1.0 / 64))});

  // Question 10 (predict, then measure): one sweep of 512^3 at the copy
  // bandwidth of the Results run (2861 GB/s), one read and one write per cell.
  a.push_back({"lab05.predict_register_ms", fixed(1e3 * 512.0 * 512 * 512 * 8 / 2861e9, 3)});

  // Question 10, its second part: global loads per cell update. Naive: the 7 points.
  // The reference's register-tiled sweep: each block's plane tile of 64 x 16 outputs is
  // loaded once with its halo ring of 2 (64 + 16) cells; z neighbours stay in registers.
  a.push_back({"lab05.loads_naive_3d", "7"});
  a.push_back({"lab05.loads_register_3d", fixed(1 + 2.0 * (64 + 16) / (64 * 16), 2)});

  // Background, "Higher-order stencils": 13-point (R = 2) and 25-point (R = 4) stars.
  for (int r : {2, 4}) {
    const std::string k = std::to_string(r);
    a.push_back({"lab05.ho_ops_r" + k, std::to_string(star3d_ops(r))});
    a.push_back({"lab05.ho_naive_op_r" + k, fixed(naive_stencil_op_ratio(star3d_ops(r), star3d_points(r)), 2)});
    a.push_back({"lab05.ho_ideal_op_r" + k, fixed(star3d_ops(r) / 8.0, 2)});
  }
  a.push_back({"lab05.ho_ridge", fixed(59.6e12 / 2861e9, 1)});
  for (int r : {1, 2, 4}) {
    const std::string k = std::to_string(r);
    a.push_back({"lab05.ho_loaded_r" + k, grouped(zwalk_loaded(r))});
    a.push_back({"lab05.ho_planes_r" + k, std::to_string(32 + 2 * r)});
    a.push_back({"lab05.ho_zwalk_op_r" + k, fixed(zwalk_op_ratio(r), 2)});
    a.push_back({"lab05.ho_halo_pct_r" + k, fixed(100.0 * 2 * r * (64 + 16) / zwalk_loaded(r), 1)});
  }
  a.push_back({"lab05.ho_window_r2", std::to_string(2 * 2 + 1)});
  a.push_back({"lab05.ho_window_r4", std::to_string(2 * 4 + 1)});
  a.push_back({"lab05.ho_ring_r4", std::to_string(2 * 4 + 3)});
  // Six more registers than R = 1's 48 (a ring of 11 values instead of 5).
  a.push_back({"lab05.ho_occ_regs_r4", std::to_string(48 + 6)});
  a.push_back({"lab05.ho_occ_blocks_r4", std::to_string(h100_occupancy(256, 48 + 6, 0).blocks)});
  a.push_back({"lab05.ho_occ_pct_r4", fixed(h100_occupancy(256, 48 + 6, 0).percent, 0)});

  // Background, "Asynchronous tile loads and thread-block clusters": TMA's 16-byte rule
  // on the graders' 8191-wide rows and on the z walk's plane box (64 + 2) x (16 + 2).
  a.push_back({"lab05.tma_stride_8191", grouped(8191LL * 4)});
  a.push_back({"lab05.tma_stride_8191_rem", std::to_string(8191 * 4 % 16)});
  const int box_w = (64 + 2 + 3) / 4 * 4;  // floats: box width x 4 bytes a multiple of 16
  a.push_back({"lab05.tma_box_w", std::to_string(box_w)});
  a.push_back({"lab05.tma_box_bytes", grouped(4LL * box_w * (16 + 2))});
  for (int r : {1, 4}) {
    const std::string k = std::to_string(r);
    a.push_back({"lab05.dsmem_cells_r" + k, std::to_string(cluster_halo_cells(r))});
    a.push_back({"lab05.dsmem_halo_pct_r" + k, fixed(100.0 * cluster_halo_cells(r) / (2 * r * (64 + 16)), 0)});
    a.push_back({"lab05.dsmem_loaded_pct_r" + k, fixed(100.0 * cluster_halo_cells(r) / zwalk_loaded(r), 1)});
  }

  // The measurement of lab05_async_tiles (labs/05-stencil/instructor/async_tiles.cu), question 3:
  // a 64 x 16 tile of float4 threads, shared planes of (16 + 2) x (64 + 8) floats.
  const int plane_bytes = 256 * 16 + 32 * 16 + 32 * 4;  // interior, halo rows (float4), halo columns
  if (plane_bytes != 4 * zwalk_loaded(1)) throw std::logic_error("lab05: the async plane is not the z walk's");
  const int shared_plane = 18 * 72 * 4;
  a.push_back({"lab05.async_plane_bytes", std::to_string(plane_bytes)});
  a.push_back({"lab05.async_ring_plain", grouped(3LL * shared_plane)});
  a.push_back({"lab05.async_ring_cp2", grouped(5LL * shared_plane)});
  const Occupancy plain = h100_occupancy(256, 32, 3 * shared_plane), cp2 = h100_occupancy(256, 32, 5 * shared_plane);
  if (plain.blocks != cp2.blocks) throw std::logic_error("lab05: the plain and cp.async rings differ in blocks per SM");
  a.push_back({"lab05.async_blocks_32", std::to_string(cp2.blocks)});
  a.push_back({"lab05.async_blocks_48", std::to_string(h100_occupancy(256, 48, 3 * shared_plane).blocks)});
  a.push_back({"lab05.async_flight_plain", grouped(1LL * plain.blocks * plane_bytes)});
  a.push_back({"lab05.async_flight_cp2", grouped(2LL * cp2.blocks * plane_bytes)});
  // Clusters along y: of 2, each block shares one halo row; of 4, the two inner blocks both.
  a.push_back({"lab05.async_cluster2_pct", fixed(100.0 * 64 / zwalk_loaded(1), 1)});
  a.push_back({"lab05.async_cluster4_pct", fixed(100.0 * (1 + 2 + 2 + 1) / 4 * 64 / zwalk_loaded(1), 1)});
  // 32-byte sectors a block requests per plane: 16 rows of 256 bytes, two halo rows, and one
  // sector for each of the 32 cells of the halo columns.
  a.push_back({"lab05.async_sectors", std::to_string(16 * 8 + 2 * 8 + 32)});
  a.push_back({"lab05.async_sectors_rows", std::to_string(2 * 8)});
  a.push_back({"lab05.async_sectors_cols", std::to_string(32)});
  return a;
}

}  // namespace convlab::handout
