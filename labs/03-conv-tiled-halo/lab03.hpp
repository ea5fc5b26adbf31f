/// @file lab03.hpp
/// @brief Lab 03's contract: what the student implements in
/// `starter_code/03-conv-tiled-halo/conv_tiled.cu`. Do not change this file:
/// the graders call exactly these functions, and name tile edges and halo
/// corners in their reports from the tile sizes fixed here.
///
/// The same convolution as labs 01 and 02 (cross-correlation, zero padding):
/// \f[ \text{out}_i = \sum_{j=-r}^{r} \text{in}_{i+j}\, f_{j+r} \f]
/// \f[ \text{out}_{y,x} = \sum_{i=-r}^{r}\sum_{j=-r}^{r} \text{in}_{y+i,\,x+j}\, f_{i+r,\,j+r} \f]
/// computed by blocks that first stage a tile of the input, halo included, in
/// shared memory. The filter is in constant memory, as in lab 02 (and PMPP's
/// figure 7.12). The launchers take the input and output on the device and the
/// filter on the host, copy the filter, enqueue the work on `stream` and return
/// without synchronising; they throw std::invalid_argument on a bad problem.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace convlab::lab03 {

/// A 1D problem: n inputs and outputs, a filter of 2r+1 taps.
struct Conv1dProblem {
  int n = 0;       ///< inputs (>= 1)
  int radius = 0;  ///< filter radius r (0 to kMaxRadius1d; may exceed n)
};

/// A 2D problem: a row-major width x height image, a row-major (2r+1)x(2r+1) filter.
struct Conv2dProblem {
  int width = 0;   ///< columns (>= 1)
  int height = 0;  ///< rows (1 to kMaxHeight)
  int radius = 0;  ///< filter radius r (0 to kMaxRadius2d)
};

/// 1D: a block has TILE_1D threads and computes TILE_1D outputs (its output
/// tile); its input tile in shared memory holds TILE_1D + 2r elements.
inline constexpr int TILE_1D = 256;

/// The largest 1D radius: each halo is at most half a tile, so the thread groups
/// that load the left halo (the first r threads) and the right halo (the last r
/// threads) never overlap, and no thread loads more than two elements.
inline constexpr int kMaxRadius1d = TILE_1D / 2;

/// 2D, conv2d_tiled_in() (PMPP figure 7.12): a block of IN_TILE_DIM x
/// IN_TILE_DIM threads loads an input tile of the same size, one element per
/// thread, and computes an output tile of out_tile_of_in() = IN_TILE_DIM - 2r
/// per side; the threads on the halo ring only load.
inline constexpr int IN_TILE_DIM = 32;

/// 2D, conv2d_tiled_out(): a block of OUT_TILE_DIM x OUT_TILE_DIM threads
/// computes an output tile of the same size, one output per thread, from an
/// input tile of in_tile_of_out() = OUT_TILE_DIM + 2r per side, so some threads
/// load several input elements.
inline constexpr int OUT_TILE_DIM = 32;

/// The largest 2D radius: conv2d_tiled_in()'s output tile keeps at least half
/// the input tile's side (16 of 32; then three threads in four only load).
inline constexpr int kMaxRadius2d = 8;

/// The output tile side of conv2d_tiled_in() for radius r.
constexpr int out_tile_of_in(int r) { return IN_TILE_DIM - 2 * r; }

/// The input tile side of conv2d_tiled_out() for radius r.
constexpr int in_tile_of_out(int r) { return OUT_TILE_DIM + 2 * r; }

/// The `__constant__` filter buffer, in floats: the larger of the largest 1D
/// filter (2 * 128 + 1 = 257 taps) and the largest 2D filter (17 x 17 = 289).
inline constexpr int kFilterCapacity = (2 * kMaxRadius2d + 1) * (2 * kMaxRadius2d + 1) > 2 * kMaxRadius1d + 1
                                           ? (2 * kMaxRadius2d + 1) * (2 * kMaxRadius2d + 1)
                                           : 2 * kMaxRadius1d + 1;

/// The tallest image: CUDA limits a grid to 65535 blocks along y, and
/// conv2d_tiled_in() covers out_tile_of_in(kMaxRadius2d) = 16 rows per block.
inline constexpr int kMaxHeight = 65535 * out_tile_of_in(kMaxRadius2d);

/// Throws std::invalid_argument, naming the field, unless `p` is a valid problem.
inline void validate(const Conv1dProblem& p) {
  if (p.n < 1) throw std::invalid_argument("conv1d_tiled: n must be >= 1, got " + std::to_string(p.n));
  if (p.radius < 0 || p.radius > kMaxRadius1d)
    throw std::invalid_argument("conv1d_tiled: radius must be in [0, " + std::to_string(kMaxRadius1d) +
                                "] (half of TILE_1D = " + std::to_string(TILE_1D) + "), got " +
                                std::to_string(p.radius));
}

/// Throws std::invalid_argument, naming the field, unless `p` is a valid problem.
inline void validate(const Conv2dProblem& p) {
  if (p.width < 1 || p.height < 1)
    throw std::invalid_argument("conv2d_tiled: width and height must be >= 1, got " + std::to_string(p.width) +
                                " x " + std::to_string(p.height));
  if (static_cast<long long>(p.width) * p.height > 0x7FFFFFFFLL)
    throw std::invalid_argument("conv2d_tiled: width * height must fit in an int");
  if (p.height > kMaxHeight)
    throw std::invalid_argument("conv2d_tiled: height must be at most " + std::to_string(kMaxHeight) +
                                " (65535 blocks of 16 rows), got " + std::to_string(p.height));
  if (p.radius < 0 || p.radius > kMaxRadius2d)
    throw std::invalid_argument("conv2d_tiled: radius must be in [0, " + std::to_string(kMaxRadius2d) +
                                "] (IN_TILE_DIM - 2r >= " + std::to_string(IN_TILE_DIM / 2) + "), got " +
                                std::to_string(p.radius));
}

/// 1D tiled convolution, loading strategy 1: every thread loops over the input
/// tile (elements threadIdx.x, threadIdx.x + TILE_1D, ...). Blocks of TILE_1D threads.
/// @param d_in      n inputs (device)
/// @param h_filter  2r+1 taps (host), copied into constant memory on `stream`
/// @param d_out     n outputs (device)
/// @param problem   sizes
/// @param stream    the stream to launch on
void conv1d_tiled_loop(const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& problem,
                       cudaStream_t stream);

/// 1D tiled convolution, loading strategy 2: the body of the tile by every
/// thread, the left halo by the first r threads, the right halo by the last r.
/// Blocks of TILE_1D threads. Parameters as conv1d_tiled_loop().
void conv1d_tiled_groups(const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& problem,
                         cudaStream_t stream);

/// 2D tiled convolution with blocks the size of the input tile (PMPP figure
/// 7.12): IN_TILE_DIM x IN_TILE_DIM threads, each loads one input element, the
/// inner out_tile_of_in(r) x out_tile_of_in(r) compute one output each.
/// @param d_in      width*height inputs, row-major (device)
/// @param h_filter  (2r+1)^2 taps, row-major (host), copied into constant memory on `stream`
/// @param d_out     width*height outputs (device)
/// @param problem   sizes
/// @param stream    the stream to launch on
void conv2d_tiled_in(const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& problem,
                     cudaStream_t stream);

/// 2D tiled convolution with blocks the size of the output tile:
/// OUT_TILE_DIM x OUT_TILE_DIM threads, each computes one output; the
/// in_tile_of_out(r)^2 input elements are loaded by the threads together, some
/// of them loading several. Parameters as conv2d_tiled_in().
void conv2d_tiled_out(const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& problem,
                      cudaStream_t stream);

}  // namespace convlab::lab03
