/// @file lab01.hpp
/// @brief Lab 01's contract: what the student implements in
/// `starter_code/01-conv-basic/conv_basic.cu`. Do not change this file: the
/// graders call exactly these functions.
///
/// Both functions compute cross-correlation with zero padding (ghost cells are 0):
/// \f[ \text{out}_i = \sum_{j=-r}^{r} \text{in}_{i+j}\, f_{j+r} \f]
/// \f[ \text{out}_{y,x} = \sum_{i=-r}^{r}\sum_{j=-r}^{r} \text{in}_{y+i,\,x+j}\, f_{i+r,\,j+r} \f]
/// They take device pointers, enqueue the work on `stream` and return without
/// synchronising; they check their launch and throw on bad input.
#pragma once

#include <convlab/contract.hpp>

#include <cuda_runtime_api.h>

namespace convlab::lab01 {

/// A 1D problem: n inputs and outputs, a filter of 2r+1 taps.
struct Conv1dProblem {
  int n = 0;       ///< inputs (>= 1)
  int radius = 0;  ///< filter radius r (>= 0; may exceed n)
};

/// A 2D problem: a row-major width x height image, a row-major (2r+1)x(2r+1) filter.
struct Conv2dProblem {
  int width = 0;   ///< columns (>= 1)
  int height = 0;  ///< rows (>= 1)
  int radius = 0;  ///< filter radius r (>= 0)
};

/// The largest radius the lab accepts (a (2r+1)^2 filter must stay small).
inline constexpr int kMaxRadius = 64;

/// Throws std::invalid_argument, naming the field, unless `p` is a valid problem:
/// n >= 1 and 0 <= radius <= kMaxRadius.
inline void validate(const Conv1dProblem& p) { require_conv1d_problem(p.n, p.radius, kMaxRadius); }

/// The tallest image: a grid has at most 65535 blocks along y (CUDA's limit), so a launcher
/// whose blocks span 8 rows or more covers 524280 rows in one launch. (The graders check images
/// taller than 65535 rows: blocks of one row each cannot launch them.)
inline constexpr int kMaxHeight = 8 * kMaxGridY;

/// Throws std::invalid_argument, naming the field, unless `p` is a valid problem: at least
/// 1 x 1, at most kMaxHeight rows, width * height fits in an int, 0 <= radius <= kMaxRadius.
inline void validate(const Conv2dProblem& p) {
  require_conv2d_problem(p.width, p.height, p.radius, kMaxRadius, kMaxHeight,
                         "a grid has at most 65535 blocks along y, of 8 rows each or more");
}

/// Naive 1D convolution: one thread per output, the filter read from global memory.
/// @param d_in      n inputs (device)
/// @param d_filter  2r+1 taps (device)
/// @param d_out     n outputs (device)
/// @param problem   sizes
/// @param stream    the stream to launch on
void conv1d_naive(const float* d_in, const float* d_filter, float* d_out, const Conv1dProblem& problem,
                  cudaStream_t stream);

/// Naive 2D convolution (PMPP figure 7.7): one thread per output pixel, a 2D grid
/// of 2D blocks, boundary checks for the ghost cells.
/// @param d_in      width*height inputs, row-major (device)
/// @param d_filter  (2r+1)^2 taps, row-major (device)
/// @param d_out     width*height outputs (device)
/// @param problem   sizes
/// @param stream    the stream to launch on
void conv2d_naive(const float* d_in, const float* d_filter, float* d_out, const Conv2dProblem& problem,
                  cudaStream_t stream);

}  // namespace convlab::lab01
