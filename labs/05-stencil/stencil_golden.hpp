/// @file stencil_golden.hpp
/// @brief Lab 05's golden models: stencil sweeps in double precision, with the float32
/// rounding-error bound of every cell carried along, for one step or many.
///
/// **One step.** A cell of a sweep is a sum of m products \f$w_k x_k\f$ (m = 5 in 2D, 7 in
/// 3D); in float32, in any order, with or without FMA, and with \f$c_x (a + b)\f$ grouped or not,
/// each product goes through at most m roundings, so (Higham, eq. 3.5)
/// \f$ |\hat u' - u'| \le \gamma_{m} \sum_k |w_k x_k| \f$; the graders allow \f$\gamma_{m+1}\f$, one
/// more rounding for the final store, as for convolution (compare.hpp).
///
/// **T steps.** Let \f$E^t = \hat u^t - u^t\f$ be the error after t computed steps and S the
/// sweep, \f$S_{|w|}\f$ the same sweep with |weights|. Then
/// \f$ E^{t+1} = S(E^t) + e^t \f$ with \f$ |e^t| \le \gamma\, S_{|w|}(|\hat u^t|) \le \gamma\,
/// S_{|w|}(|u^t| + |E^t|) \f$, so the bound \f$ B^{t+1} = (1+\gamma)\, S_{|w|}(B^t) + \gamma\,
/// S_{|w|}(|u^t|) \f$, \f$B^0 = 0\f$, holds cell by cell (a Dirichlet wall is exact and adds no
/// error). The golden model computes it next to the exact values; for the heat equation, whose
/// stable weights are all non-negative and sum to 1, it grows about linearly in T:
/// \f$B^T \approx T \gamma \max|u^0|\f$. A kernel that drops a neighbour, swaps the buffers wrongly
/// or updates in place is off by far more than that after a few steps.
#pragma once

#include "lab05.hpp"

#include <convlab/golden.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <thread>
#include <vector>

namespace convlab::lab05::golden {

/// Exact values and, per cell, the bound on the float32 error of a correct kernel.
struct Field {
  std::vector<double> value;  ///< u^T, in double from the float inputs
  std::vector<double> bound;  ///< B^T: the allowed |error| of each cell
};

/// A grid and its boundary condition (nz = 1 in 2D).
struct Shape {
  int nx = 1, ny = 1, nz = 1;          ///< sizes
  Boundary bc = Boundary::dirichlet;   ///< ghost cells
  float wall = 0;                      ///< Dirichlet value
  std::size_t cells() const { return std::size_t(nx) * ny * nz; }  ///< nx*ny*nz
};

/// \f$\gamma_m = m u/(1 - m u)\f$, u = 2^-24.
inline double gamma(int m) {
  const double mu = m * (1.0 / (1 << 24));
  return mu / (1.0 - mu);
}

/// The index a neighbour at i reads along a dimension of n cells, -1 for a Dirichlet wall.
inline int ghost(int i, int n, Boundary bc) {
  if (i >= 0 && i < n) return i;
  if (bc == Boundary::periodic) return ((i % n) + n) % n;
  if (bc == Boundary::neumann) return i < 0 ? 0 : n - 1;
  return -1;
}

/// Runs body(z) for z in [0, n) on the hardware threads (z-slabs, or rows in 2D).
template <class F>
void parallel_for(int n, const F& body) {
  const int threads = std::max(1, std::min<int>(n, std::min(16u, std::max(1u, std::thread::hardware_concurrency()))));
  if (threads == 1 || n < 8) {
    for (int i = 0; i < n; ++i) body(i);
    return;
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i = t; i < n; i += threads) body(i);
    });
  for (auto& th : pool) th.join();
}

/// One sweep of values and bounds: dst = S(src) + source, dst_bound = (1+g) S_|w|(bound) +
/// g (S_|w|(|src|) + |source|) + m FLT_MIN. `three_d` selects the z terms; `source` may be empty.
inline void sweep(const Shape& s, const Coeffs& c, bool three_d, int m, const Field& src, Field& dst,
                  const std::vector<double>& source = {}) {
  const double g = gamma(m + 1);
  const double w0 = c.c0, wx = c.cx, wy = c.cy, wz = three_d ? c.cz : 0.0;
  const double wall = s.wall;
  dst.value.resize(s.cells());
  dst.bound.resize(s.cells());
  const int planes = three_d ? s.nz : 1;
  // 2D grids are split by rows, 3D grids by planes.
  const int units = three_d ? planes : s.ny;
  parallel_for(units, [&](int unit) {
    const int z_begin = three_d ? unit : 0, z_end = three_d ? unit + 1 : 1;
    const int y_begin = three_d ? 0 : unit, y_end = three_d ? s.ny : unit + 1;
    for (int z = z_begin; z < z_end; ++z)
      for (int y = y_begin; y < y_end; ++y)
        for (int x = 0; x < s.nx; ++x) {
          const std::size_t k = (std::size_t(z) * s.ny + y) * s.nx + x;
          double v = w0 * src.value[k], a = std::fabs(w0 * src.value[k]), b = std::fabs(w0) * src.bound[k];
          const auto add = [&](double w, int xx, int yy, int zz) {
            xx = ghost(xx, s.nx, s.bc);
            yy = ghost(yy, s.ny, s.bc);
            zz = ghost(zz, s.nz, s.bc);
            if (xx < 0 || yy < 0 || zz < 0) {
              v += w * wall;
              a += std::fabs(w * wall);
              return;
            }
            const std::size_t j = (std::size_t(zz) * s.ny + yy) * s.nx + xx;
            v += w * src.value[j];
            a += std::fabs(w * src.value[j]);
            b += std::fabs(w) * src.bound[j];
          };
          add(wx, x - 1, y, z);
          add(wx, x + 1, y, z);
          add(wy, x, y - 1, z);
          add(wy, x, y + 1, z);
          if (three_d) {
            add(wz, x, y, z - 1);
            add(wz, x, y, z + 1);
          }
          if (!source.empty()) {
            v += source[k];
            a += std::fabs(source[k]);
          }
          dst.value[k] = v;
          dst.bound[k] = (1 + g) * b + g * a + m * double(FLT_MIN);
        }
  });
}

/// The state after `steps` sweeps of the 2D (nz = 1, `three_d` false) or 3D stencil from `u0`.
inline Field run(const std::vector<float>& u0, const Shape& s, const Coeffs& c, bool three_d, int steps) {
  Field a, b;
  a.value.assign(u0.begin(), u0.end());
  a.bound.assign(u0.size(), 0.0);
  for (int t = 0; t < steps; ++t) {
    sweep(s, c, three_d, three_d ? 7 : 5, a, b);
    std::swap(a, b);
  }
  return a;
}

/// The largest per-cell bound of run()'s field after `steps` sweeps from a state of magnitudes at
/// most `largest`, without the field: the recursion above with every cell at its worst (W the
/// sweep's |weights| summed; the magnitudes \f$M \leftarrow W \max(M, |wall|)\f$, the bound
/// \f$B \leftarrow (1+\gamma) W B + \gamma W \max(M, |wall|) + m\,\mathrm{FLT\_MIN}\f$).
/// An upper bound of every cell's, for checks made on the device without the golden field.
inline double largest_bound(const Coeffs& c, float wall, bool three_d, int steps, double largest) {
  const int m = three_d ? 7 : 5;
  const double g = gamma(m + 1);
  const double w = std::fabs(double(c.c0)) + 2 * std::fabs(double(c.cx)) + 2 * std::fabs(double(c.cy)) +
                   (three_d ? 2 * std::fabs(double(c.cz)) : 0.0);
  double mag = largest, bound = 0;
  for (int t = 0; t < steps; ++t) {
    const double seen = std::max(mag, std::fabs(double(wall)));
    bound = (1 + g) * w * bound + g * w * seen + m * double(FLT_MIN);
    mag = w * seen;
  }
  return bound;
}

/// The golden values and bounds as the comparator's convlab::Golden (convlab/compare.hpp), for
/// a sweep of `m` terms (7 in 3D, 5 in 2D): its tolerance, \f$\gamma_{m+1}\f$ times the magnitude
/// plus m FLT_MIN, is then at least the bound carried by the golden model.
inline convlab::Golden comparator_golden(const Field& f, int m) {
  convlab::Golden g;
  g.value = f.value;
  g.terms = m;
  g.magnitude.resize(f.bound.size());
  const double gm = gamma(m + 1);
  for (std::size_t k = 0; k < f.bound.size(); ++k) g.magnitude[k] = f.bound[k] / gm;
  return g;
}

/// Jacobi sweeps for \f$\nabla^2 u = f\f$ on an n x n grid, u = 0 outside, one at a time:
/// u' = (sum of neighbours - h^2 f)/4; the bound counts m = 6 roundings per term (the four
/// neighbours, h*h and its product with f).
class JacobiIteration {
 public:
  JacobiIteration(const std::vector<float>& u0, const std::vector<float>& f, int n, float h) : source_(f.size()) {
    s_.nx = s_.ny = n;
    c_.c0 = 0;
    c_.cx = c_.cy = 0.25f;
    const double h2 = double(h) * double(h);
    for (std::size_t k = 0; k < f.size(); ++k) source_[k] = -0.25 * h2 * f[k];
    a_.value.assign(u0.begin(), u0.end());
    a_.bound.assign(u0.size(), 0.0);
  }
  void sweep() {
    golden::sweep(s_, c_, false, 6, a_, b_, source_);
    std::swap(a_, b_);
  }
  const Field& field() const { return a_; }

 private:
  Shape s_;
  Coeffs c_;
  std::vector<double> source_;
  Field a_, b_;
};

/// The state after `iters` Jacobi sweeps (JacobiIteration).
inline Field jacobi(const std::vector<float>& u0, const std::vector<float>& f, int n, float h, int iters) {
  JacobiIteration it(u0, f, n, h);
  for (int t = 0; t < iters; ++t) it.sweep();
  return it.field();
}

/// The relative residual \f$\|f - \nabla_h^2 u\|_2 / \|f\|_2\f$ of poisson_jacobi() in double,
/// and the bound on what a float32 computation of it may be off by (see test_lab05.cpp).
struct Residual {
  double value = 0;  ///< the exact relative residual of `u`
  double bound = 0;  ///< allowed |error| of a computed one
};

/// The residual of `u` (values as given) for the problem (n, h, f).
inline Residual residual(const std::vector<double>& u, const std::vector<float>& f, int n, float h) {
  const double inv_h2 = 1.0 / (double(h) * double(h));
  double rr = 0, mm = 0, ff = 0;
  const auto at = [&](int i, int j) { return (i < 0 || i >= n || j < 0 || j >= n) ? 0.0 : u[std::size_t(j) * n + i]; };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const std::size_t k = std::size_t(j) * n + i;
      const double lap = (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1) - 4 * at(i, j)) * inv_h2;
      const double r = f[k] - lap;
      // What rounding can change in r: every term of it, in magnitude.
      const double m = std::fabs(f[k]) + (std::fabs(at(i - 1, j)) + std::fabs(at(i + 1, j)) + std::fabs(at(i, j - 1)) +
                                          std::fabs(at(i, j + 1)) + 4 * std::fabs(at(i, j))) * inv_h2;
      rr += r * r;
      mm += m * m;
      ff += double(f[k]) * f[k];
    }
  const double scale = ff > 0 ? 1.0 / std::sqrt(ff) : 1.0;
  const std::size_t cells = std::size_t(n) * n;
  Residual res;
  res.value = std::sqrt(rr) * scale;
  // |r_hat - r| <= gamma_9 m per cell (seven terms, a multiplication by 1/h^2, h*h), so the norm
  // moves by at most gamma_9 ||m||; summing N squares in any order adds a relative gamma_{N+1},
  // halved by the square root, and ||f|| likewise; a final division and square root, 2u more.
  const double gn = gamma(int(std::min<std::size_t>(cells + 2, (1u << 23))));
  res.bound = (gamma(9) * std::sqrt(mm)) * scale + (gn + 2 * gamma(2)) * res.value;
  return res;
}

}  // namespace convlab::lab05::golden
