/// @file lab04.hpp
/// @brief Lab 04's contract: what the student implements in
/// `starter_code/04-conv-cached-halo/conv_cached.cu` (tiles whose halo comes from the
/// caches, PMPP figure 7.15) and `starter_code/04-conv-cached-halo/conv_fast.cu`
/// (separable filters, and the extra-credit register-tiled kernels). Do not change this
/// file: the graders call exactly these functions.
///
/// Every function computes cross-correlation with zero padding (ghost cells are 0):
/// \f[ \text{out}_i = \sum_{j=-r}^{r} \text{in}_{i+j}\, f_{j+r} \f]
/// \f[ \text{out}_{y,x} = \sum_{i=-r}^{r}\sum_{j=-r}^{r} \text{in}_{y+i,\,x+j}\, f_{i+r,\,j+r} \f]
/// Images and arrays are device pointers; **filters are host pointers**: the launchers put
/// the taps into constant memory themselves (a `__constant__` array filled with
/// `cudaMemcpyToSymbolAsync` on `stream`, or the kernel's own parameters, which live in a
/// constant bank too). The launchers enqueue the work on `stream` and return without
/// synchronising; the host filter may be reused as soon as they return. They check their
/// launch and throw std::invalid_argument on a bad problem before touching the GPU.
///
/// Constant memory is one per device: calls that run at the same time on different
/// streams must not need different filters in the same `__constant__` array.
#pragma once

#include <convlab/contract.hpp>

#include <cuda_runtime_api.h>

namespace convlab::lab04 {

/// A 1D problem: n inputs and outputs, a filter of 2r+1 taps.
struct Conv1dProblem {
  int n = 0;       ///< inputs (>= 1)
  int radius = 0;  ///< filter radius r (0 <= r <= kMaxRadius; may exceed n)
};

/// A 2D problem: a row-major width x height image, a row-major (2r+1)x(2r+1) filter.
struct Conv2dProblem {
  int width = 0;   ///< columns (>= 1)
  int height = 0;  ///< rows (1 <= height <= kMaxHeight)
  int radius = 0;  ///< filter radius r (0 <= r <= kMaxRadius)
};

/// The largest radius the lab accepts. A 2D filter of radius 15 has 31 x 31 = 961 taps,
/// 3844 bytes: it fits the 64 KB of constant memory and the 4 KB of a kernel's parameters.
inline constexpr int kMaxRadius = 15;

/// The tallest image accepted: with tiles of 16 rows or more, a grid needs at most 32768
/// blocks in y, within CUDA's limit of 65535.
inline constexpr int kMaxHeight = 1 << 19;

/// conv2d_cached()'s tile: TILE_DIM x TILE_DIM threads compute a TILE_DIM x TILE_DIM output
/// tile from an input tile of the same size (PMPP figure 7.15). The graders use it to name
/// the outputs next to a tile edge.
inline constexpr int kTileDim = 32;

/// conv1d_cached()'s tile: kTile1d threads compute kTile1d outputs from kTile1d inputs
/// staged in shared memory; the 2r halo elements come through the caches.
inline constexpr int kTile1d = 256;

/// Throws std::invalid_argument, naming the field, unless `p` is a valid problem:
/// n >= 1 and 0 <= radius <= kMaxRadius.
inline void validate(const Conv1dProblem& p) { require_conv1d_problem(p.n, p.radius, kMaxRadius); }

/// Throws std::invalid_argument, naming the field, unless `p` is a valid problem: at least
/// 1 x 1, at most kMaxHeight rows, width * height fits in an int, 0 <= radius <= kMaxRadius.
inline void validate(const Conv2dProblem& p) {
  require_conv2d_problem(p.width, p.height, p.radius, kMaxRadius, kMaxHeight);
}

// --- conv_cached.cu: PMPP figure 7.15 ---------------------------------------------------------

/// 1D tiled convolution whose halo comes from the caches: a block of kTile1d threads stages
/// its kTile1d inputs in shared memory; taps that fall outside the tile read global memory
/// (L1/L2 hits: they are the neighbouring tiles' inputs). Filter in constant memory.
/// @param d_in      n inputs (device)
/// @param h_filter  2r+1 taps (host)
/// @param d_out     n outputs (device)
/// @param problem   sizes
/// @param stream    the stream to launch on
void conv1d_cached(const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& problem,
                   cudaStream_t stream);

/// 2D tiled convolution whose halo comes from the caches (PMPP figure 7.15): kTileDim x
/// kTileDim blocks stage the interior of their tile in shared memory; halo and ghost taps
/// go to global memory (through L1/L2) or are skipped. Filter in constant memory.
/// @param d_in      width*height inputs, row-major (device)
/// @param h_filter  (2r+1)^2 taps, row-major (host)
/// @param d_out     width*height outputs (device)
/// @param problem   sizes
/// @param stream    the stream to launch on
void conv2d_cached(const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& problem,
                   cudaStream_t stream);

// --- conv_fast.cu: fewer operations, fewer instructions ---------------------------------------

/// Separable 2D convolution: the filter is the outer product of a column filter and a row
/// filter, \f$ f_{i+r,\,j+r} = c_{i+r}\, w_{j+r} \f$, so it is applied as a row pass
/// (\f$ t_{y,x} = \sum_j \text{in}_{y,x+j} w_{j+r} \f$, into `d_tmp`) followed by a column pass
/// (\f$ \text{out}_{y,x} = \sum_i t_{y+i,x} c_{i+r} \f$): 2(2r+1) multiply-adds per pixel
/// instead of (2r+1)^2. Zero padding in both passes gives exactly the zero-padded 2D result.
/// @param d_in          width*height inputs, row-major (device)
/// @param h_row_filter  2r+1 taps applied along a row (x) (host)
/// @param h_col_filter  2r+1 taps applied along a column (y) (host)
/// @param d_tmp         width*height floats of scratch for the row pass (device, caller-owned;
///                      overwritten; must not overlap d_in or d_out)
/// @param d_out         width*height outputs (device)
/// @param problem       sizes
/// @param stream        the stream to launch on
void conv2d_separable(const float* d_in, const float* h_row_filter, const float* h_col_filter, float* d_tmp,
                      float* d_out, const Conv2dProblem& problem, cudaStream_t stream);

/// Extra credit: the fastest 1D convolution you can write (the reference: float4 loads, a
/// shared tile, 16 outputs per thread, radius a compile-time constant for r <= 8).
/// Same arguments as conv1d_cached().
void conv1d_fast(const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& problem,
                 cudaStream_t stream);

/// Extra credit: the fastest 2D convolution you can write (the reference: register tiles of
/// 4 x 4 outputs per thread, float4 loads, taps as immediate operands for r <= 8).
/// Same arguments as conv2d_cached().
void conv2d_fast(const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& problem,
                 cudaStream_t stream);

}  // namespace convlab::lab04
