/// @file lab06_golden.hpp
/// @brief Lab 06's golden models (double precision, on the CPU) for the graders and the
/// benchmark: the multi-channel convolution, one image's column matrix, and a matrix product.
/// Each returns, per output, \f$\sum |x w|\f$ and the number of terms m = C R S, from which the
/// comparator allows \f$\gamma_{m+1} \sum |x w|\f$ (Higham's bound for a float32 dot product).
#pragma once

#include "lab06.hpp"

#include <convlab/compare.hpp>
#include <convlab/golden.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace convlab::lab06 {

/// A way of computing the layer that is not the right one, for naming a mistake: the
/// window's corner (p stride_h - off_h, q stride_w - off_w), taps spaced by (dil_h, dil_w),
/// and only channel `only_channel` summed (-1: all).
struct ConvVariant {
  int off_h = -1, off_w = -1;  ///< -1: the problem's pads
  int dil_h = 1, dil_w = 1;    ///< 1: adjacent taps
  int only_channel = -1;       ///< -1: every channel
  bool flip = false;           ///< the filter reversed (true convolution)
};

/// y = conv(x, w) in double, with sum |x w| per output. Uses all hardware threads.
/// @param x  N C H W inputs
/// @param w  K C R S taps
/// @param p  the layer
/// @param v  the computation (the right one by default)
inline Golden conv_golden(const std::vector<float>& x, const std::vector<float>& w, const ConvProblem& p,
                          const ConvVariant& v = {}) {
  const int P = p.out_h(), Q = p.out_w();
  const int off_h = v.off_h < 0 ? p.pad_h : v.off_h, off_w = v.off_w < 0 ? p.pad_w : v.off_w;
  Golden g;
  g.terms = p.c * p.r * p.s;
  g.value.assign(p.output_elements(), 0.0);
  g.magnitude.assign(p.output_elements(), 0.0);
  // One unit per output row of each (image, filter) plane: a layer of one plane (one filter on one
  // image) still uses every hardware thread.
  const long long rows = static_cast<long long>(p.n) * p.k * P;
  parallel_ranges(rows, p.macs(), [&](long long first, long long last) {
    for (long long unit = first; unit < last; ++unit) {
      const int nk = int(unit / P), oh = int(unit % P);
      const int n = nk / p.k, k = nk % p.k;
      for (int q = 0; q < Q; ++q) {
        double sum = 0, mag = 0;
        for (int c = 0; c < p.c; ++c) {
          if (v.only_channel >= 0 && c != v.only_channel) continue;
          for (int r = 0; r < p.r; ++r) {
            const int ih = oh * p.stride_h - off_h + r * v.dil_h;
            if (ih < 0 || ih >= p.h) continue;
            for (int s = 0; s < p.s; ++s) {
              const int iw = q * p.stride_w - off_w + s * v.dil_w;
              if (iw < 0 || iw >= p.w) continue;
              const int fr = v.flip ? p.r - 1 - r : r, fs = v.flip ? p.s - 1 - s : s;
              const double xv = x[((std::size_t(n) * p.c + c) * p.h + ih) * p.w + iw];
              const double wv = w[((std::size_t(k) * p.c + c) * p.r + fr) * p.s + fs];
              sum += xv * wv;
              mag += std::fabs(xv * wv);
            }
          }
        }
        const std::size_t at = (std::size_t(nk) * P + oh) * Q + q;
        g.value[at] = sum;
        g.magnitude[at] = mag;
      }
    }
  });
  return g;
}

/// One image's column matrix (im2col_rows() x im2col_cols(), row-major): exact copies, so the
/// tolerance is that of a single term.
/// @param x      N C H W inputs
/// @param image  which image
/// @param p      the layer
inline Golden im2col_golden(const std::vector<float>& x, int image, const ConvProblem& p) {
  const int P = p.out_h(), Q = p.out_w();
  const std::size_t rows = im2col_rows(p), cols = im2col_cols(p);
  Golden g;
  g.terms = 1;
  g.value.assign(rows * cols, 0.0);
  g.magnitude.assign(rows * cols, 0.0);
  for (std::size_t row = 0; row < rows; ++row) {
    const int c = int(row / (p.r * p.s)), r = int(row / p.s) % p.r, s = int(row % p.s);
    for (int oh = 0; oh < P; ++oh)
      for (int q = 0; q < Q; ++q) {
        const int ih = oh * p.stride_h - p.pad_h + r, iw = q * p.stride_w - p.pad_w + s;
        if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
        const double xv = x[((std::size_t(image) * p.c + c) * p.h + ih) * p.w + iw];
        g.value[row * cols + std::size_t(oh) * Q + q] = xv;
        g.magnitude[row * cols + std::size_t(oh) * Q + q] = std::fabs(xv);
      }
  }
  return g;
}

/// C (m x n) = A (m x kd) B (kd x n), row-major, in double. Uses all hardware threads.
/// @param a, b      the operands
/// @param m, n, kd  the sizes
inline Golden gemm_golden(const std::vector<float>& a, const std::vector<float>& b, int m, int n, int kd) {
  Golden g;
  g.terms = kd;
  g.value.assign(std::size_t(m) * n, 0.0);
  g.magnitude.assign(std::size_t(m) * n, 0.0);
  parallel_ranges(m, double(m) * n * kd, [&](long long first, long long last) {
    for (long long i = first; i < last; ++i)
      for (int l = 0; l < kd; ++l) {
        const double av = a[std::size_t(i) * kd + l];
        for (int j = 0; j < n; ++j) {
          const double t = av * b[std::size_t(l) * n + j];
          g.value[std::size_t(i) * n + j] += t;
          g.magnitude[std::size_t(i) * n + j] += std::fabs(t);
        }
      }
  });
  return g;
}

/// The arithmetic a path is held to: FP32 throughout, or TF32 products (the tensor-core slot).
enum class Precision { fp32, tf32 };

/// The TF32 error bound of an output of m = C R S products, as a multiple of the FP32 one
/// (tolerance_for(): \f$\gamma_{m+1} \sum |x w|\f$). TF32 keeps 10 mantissa bits: an operand rounded
/// to nearest is off by at most u = 2^-11 of itself, one truncated (what a tensor core does with
/// FP32 bits it is given unrounded) by less than 2^-10; u = 2^-10 covers both. The product of two
/// such operands is exact in FP32 (11 + 11 significant bits) and off by at most (2u + u^2) |x w|;
/// the FP32 sum of m of them adds gamma_m (1 + 2u + u^2) sum |x w|, the final store one more
/// rounding. So
///   |y^ - y| <= ((2u + u^2)(1 + gamma_m) + gamma_{m+1}) sum |x w|,
/// about 2^-9 sum |x w|: from 28 times FP32's bound (m = 1152) to 16000 times (m = 1).
inline double tf32_scale(int m) {
  const double u = 1.0 / 1024;
  return ((2 * u + u * u) * (1 + gamma_m(m)) + gamma_m(m + 1)) / gamma_m(m + 1);
}

/// A golden model whose tolerances (tolerance_for(magnitude, terms)) are the TF32 bound.
inline Golden held_to(Golden g, Precision precision) {
  if (precision == Precision::tf32)
    for (double& m : g.magnitude) m *= tf32_scale(g.terms);
  return g;
}

}  // namespace convlab::lab06
