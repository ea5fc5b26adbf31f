// Lab 03's contract, for both processes of its graders: proxies in the judge, the table of the
// student's functions in the runner. See convlab/remote_contract.hpp.
#include "lab03.hpp"

#if defined(CONVLAB_JUDGE)
#include <convlab/remote.hpp>  // the judge's remote::call, which CONVLAB_REMOTE's proxies call
#endif
#include <convlab/remote_contract.hpp>

namespace convlab::lab03 {
#define LAB03_1D(name)                                                                                     \
  CONVLAB_REMOTE(void, name,                                                                               \
                 (const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& problem,    \
                  cudaStream_t stream),                                                                    \
                 (d_in, host_array(h_filter, remote::filter_taps_if_valid(problem, 1)), d_out, \
                  problem, stream))
#define LAB03_2D(name)                                                                                     \
  CONVLAB_REMOTE(void, name,                                                                               \
                 (const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& problem,    \
                  cudaStream_t stream),                                                                    \
                 (d_in, host_array(h_filter, remote::filter_taps_if_valid(problem, 2)), d_out, \
                  problem, stream))
LAB03_1D(conv1d_tiled_loop)
LAB03_1D(conv1d_tiled_groups)
LAB03_2D(conv2d_tiled_in)
LAB03_2D(conv2d_tiled_out)
}  // namespace convlab::lab03

void convlab_remote_entries(convlab::remote::Entries& e) {
  e.add("conv1d_tiled_loop", &convlab::lab03::conv1d_tiled_loop);
  e.add("conv1d_tiled_groups", &convlab::lab03::conv1d_tiled_groups);
  e.add("conv2d_tiled_in", &convlab::lab03::conv2d_tiled_in);
  e.add("conv2d_tiled_out", &convlab::lab03::conv2d_tiled_out);
}
