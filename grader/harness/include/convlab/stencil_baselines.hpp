/// @file stencil_baselines.hpp
/// @brief Grader-owned naive stencil sweeps (lab 05's speed graders time a student's kernels
/// against these; they live in the harness, never in a starter or a reference).
///
/// One sweep of the five-point (2D) or seven-point (3D) stencil
/// \f$ u' = c_0 u + c_x (u_{x-1} + u_{x+1}) + c_y (u_{y-1} + u_{y+1}) + c_z (u_{z-1} + u_{z+1}) \f$,
/// x contiguous, ghost cells given by the boundary condition (0: Dirichlet, the fixed value
/// `wall`; 1: Neumann, the nearest cell; 2: periodic, the index wraps): lab 05's contract.
#pragma once

#include <cuda_runtime_api.h>

namespace convlab::baseline {

/// What a naive stencil sweep is given (device pointers).
struct StencilArgs {
  const float* d_in = nullptr;  ///< nx*ny*nz cells
  float* d_out = nullptr;       ///< nx*ny*nz cells (never overlapping d_in)
  int nx = 1;                   ///< cells along x (contiguous)
  int ny = 1;                   ///< cells along y
  int nz = 1;                   ///< cells along z (1 in 2D)
  int boundary = 0;             ///< 0 Dirichlet, 1 Neumann, 2 periodic
  float wall = 0;               ///< the Dirichlet ghost value
  float c0 = 1;                 ///< weight of the cell
  float cx = 0;                 ///< weight of each x neighbour
  float cy = 0;                 ///< weight of each y neighbour
  float cz = 0;                 ///< weight of each z neighbour (3D)
  cudaStream_t stream = nullptr;  ///< where to launch
};

/// Naive 2D five-point sweep: one thread per cell, 32 x 8 blocks, five global loads per cell
/// (PMPP fig. 8.6's design).
void stencil2d_naive(const StencilArgs& args);

/// Naive 3D seven-point sweep: one thread per cell, 32 x 4 x 2 blocks, seven global loads per cell.
/// On an H100 at 512^3: 0.598 ms (224 Gcells/s, 64 % of the copy bandwidth; shared/perf-anchors.md).
void stencil3d_naive(const StencilArgs& args);

}  // namespace convlab::baseline
