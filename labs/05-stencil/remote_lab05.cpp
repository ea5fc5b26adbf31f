// Lab 05's contract, for both processes of its graders: proxies in the judge, the table of the
// student's functions in the runner. See convlab/remote_contract.hpp.
#include "lab05.hpp"

#if defined(CONVLAB_JUDGE)
#include <convlab/remote.hpp>  // the judge's remote::call, which CONVLAB_REMOTE's proxies call
#endif
#include <convlab/remote_contract.hpp>

namespace convlab::lab05 {
#define LAB05_SWEEP(name, Grid)                                                                            \
  CONVLAB_REMOTE(void, name, (const float* d_in, float* d_out, const Grid& grid, const Coeffs& c, cudaStream_t stream), \
                 (d_in, d_out, grid, c, stream))
#define LAB05_STEPS(name, Grid)                                                                            \
  CONVLAB_REMOTE(float*, name,                                                                             \
                 (float* d_u, float* d_tmp, const Grid& grid, const Coeffs& c, int steps, cudaStream_t stream), \
                 (d_u, d_tmp, grid, c, steps, stream))
LAB05_SWEEP(heat2d_naive, Grid2d)
LAB05_SWEEP(heat2d_tiled, Grid2d)
LAB05_STEPS(heat2d_steps, Grid2d)
LAB05_STEPS(heat2d_temporal, Grid2d)
LAB05_SWEEP(stencil3d_naive, Grid3d)
LAB05_SWEEP(stencil3d_tiled, Grid3d)
LAB05_SWEEP(stencil3d_coarsened, Grid3d)
LAB05_SWEEP(stencil3d_register, Grid3d)
LAB05_STEPS(stencil3d_steps, Grid3d)
CONVLAB_REMOTE(JacobiResult, poisson_jacobi,
               (float* d_u, float* d_tmp, const float* d_f, const PoissonProblem& p, cudaStream_t stream),
               (d_u, d_tmp, d_f, p, stream))
}  // namespace convlab::lab05

void convlab_remote_entries(convlab::remote::Entries& e) {
  using namespace convlab::lab05;
  e.add("heat2d_naive", &heat2d_naive);
  e.add("heat2d_tiled", &heat2d_tiled);
  e.add("heat2d_steps", &heat2d_steps);
  e.add("heat2d_temporal", &heat2d_temporal);
  e.add("stencil3d_naive", &stencil3d_naive);
  e.add("stencil3d_tiled", &stencil3d_tiled);
  e.add("stencil3d_coarsened", &stencil3d_coarsened);
  e.add("stencil3d_register", &stencil3d_register);
  e.add("stencil3d_steps", &stencil3d_steps);
  e.add("poisson_jacobi", &poisson_jacobi);
}
