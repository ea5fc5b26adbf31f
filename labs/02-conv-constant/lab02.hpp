/// @file lab02.hpp
/// @brief Lab 02's contract: what the student implements in
/// `starter_code/02-conv-constant/conv_constant.cu`. Do not change this file:
/// the graders call exactly these functions.
///
/// The same convolution as lab 01 (cross-correlation, zero padding), with the
/// filter in constant memory:
/// \f[ \text{out}_i = \sum_{j=-r}^{r} \text{in}_{i+j}\, f_{j+r} \f]
/// \f[ \text{out}_{y,x} = \sum_{i=-r}^{r}\sum_{j=-r}^{r} \text{in}_{y+i,\,x+j}\, f_{i+r,\,j+r} \f]
/// The launchers take the input and output on the device and the filter on the
/// host; they copy the filter into a `__constant__` buffer of kFilterCapacity
/// floats, enqueue the work on `stream` and return without synchronising. They
/// refuse, with std::invalid_argument, a problem whose filter does not fit.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace convlab::lab02 {

/// A 1D problem: n inputs and outputs, a filter of 2r+1 taps.
struct Conv1dProblem {
  int n = 0;       ///< inputs (>= 1)
  int radius = 0;  ///< filter radius r (>= 0, at most kMaxRadius1d; may exceed n)
};

/// A 2D problem: a row-major width x height image, a row-major (2r+1)x(2r+1) filter.
struct Conv2dProblem {
  int width = 0;   ///< columns (>= 1)
  int height = 0;  ///< rows (>= 1)
  int radius = 0;  ///< filter radius r (>= 0, at most kMaxRadius)
};

/// The constant memory a CUDA kernel can use: 64 KiB on every GPU generation so far.
inline constexpr int kConstantMemoryBytes = 64 * 1024;

/// The largest 2D radius: a 65 x 65 filter.
inline constexpr int kMaxRadius = 32;

/// The size of the `__constant__` filter buffer, in floats: room for the largest
/// 2D filter, (2 * 32 + 1)^2 = 4225 floats = 16,900 bytes, about a quarter of
/// the 64 KiB (lab 01's largest filter, radius 64, would need 66,564 bytes: more
/// than all of constant memory).
inline constexpr int kFilterCapacity = (2 * kMaxRadius + 1) * (2 * kMaxRadius + 1);
static_assert(kFilterCapacity * sizeof(float) <= kConstantMemoryBytes, "the filter buffer must fit constant memory");

/// The largest 1D radius: 2r + 1 taps fill the same buffer (r = 2112).
inline constexpr int kMaxRadius1d = (kFilterCapacity - 1) / 2;

/// Throws std::invalid_argument, naming the field, unless `p` is a valid problem
/// whose filter fits the constant buffer.
inline void validate(const Conv1dProblem& p) {
  if (p.n < 1) throw std::invalid_argument("conv1d_constant: n must be >= 1, got " + std::to_string(p.n));
  if (p.radius < 0)
    throw std::invalid_argument("conv1d_constant: radius must be >= 0, got " + std::to_string(p.radius));
  if (p.radius > kMaxRadius1d)
    throw std::invalid_argument("conv1d_constant: radius " + std::to_string(p.radius) + " needs " +
                                std::to_string(2LL * p.radius + 1) + " filter taps, but the constant-memory buffer " +
                                "holds " + std::to_string(kFilterCapacity) + " floats: radius must be at most " +
                                std::to_string(kMaxRadius1d));
}

/// The tallest image: a grid has at most 65535 blocks along y (CUDA's limit), so a launcher
/// whose blocks span 8 rows or more covers 524280 rows in one launch. (The graders check images
/// taller than 65535 rows: blocks of one row each cannot launch them.)
inline constexpr int kMaxHeight = 8 * 65535;

/// Throws std::invalid_argument, naming the field, unless `p` is a valid problem
/// (at most kMaxHeight rows) whose filter fits the constant buffer.
inline void validate(const Conv2dProblem& p) {
  if (p.width < 1 || p.height < 1)
    throw std::invalid_argument("conv2d_constant: width and height must be >= 1, got " + std::to_string(p.width) +
                                " x " + std::to_string(p.height));
  if (static_cast<long long>(p.width) * p.height > 0x7FFFFFFFLL)
    throw std::invalid_argument("conv2d_constant: width * height must fit in an int");
  if (p.height > kMaxHeight)
    throw std::invalid_argument("conv2d_constant: height must be <= " + std::to_string(kMaxHeight) +
                                " (a grid has at most 65535 blocks along y, of 8 rows each or more), got " +
                                std::to_string(p.height));
  if (p.radius < 0)
    throw std::invalid_argument("conv2d_constant: radius must be >= 0, got " + std::to_string(p.radius));
  if (p.radius > kMaxRadius) {
    const long long side = 2LL * p.radius + 1;
    throw std::invalid_argument("conv2d_constant: radius " + std::to_string(p.radius) + " needs " +
                                std::to_string(side) + " x " + std::to_string(side) + " = " +
                                std::to_string(side * side) + " filter taps, but the constant-memory buffer holds " +
                                std::to_string(kFilterCapacity) + " floats: radius must be at most " +
                                std::to_string(kMaxRadius));
  }
}

/// 1D convolution with the filter in constant memory: one thread per output.
/// @param d_in      n inputs (device)
/// @param h_filter  2r+1 taps (host): copied into constant memory, in order on
///                  `stream`, before the kernel; the buffer may be reused once
///                  the call returns
/// @param d_out     n outputs (device)
/// @param problem   sizes
/// @param stream    the stream to launch on
void conv1d_constant(const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& problem,
                     cudaStream_t stream);

/// 2D convolution with the filter in constant memory: one thread per output pixel.
/// @param d_in      width*height inputs, row-major (device)
/// @param h_filter  (2r+1)^2 taps, row-major (host), copied into constant memory
/// @param d_out     width*height outputs (device)
/// @param problem   sizes
/// @param stream    the stream to launch on
void conv2d_constant(const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& problem,
                     cudaStream_t stream);

}  // namespace convlab::lab02
