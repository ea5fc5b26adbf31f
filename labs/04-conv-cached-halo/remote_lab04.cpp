// Lab 04's contract, for both processes of its graders: proxies in the judge, the table of the
// student's functions in the runner. See convlab/remote_contract.hpp.
#include "lab04.hpp"

#if defined(CONVLAB_JUDGE)
#include <convlab/remote.hpp>  // the judge's remote::call, which CONVLAB_REMOTE's proxies call
#endif
#include <convlab/remote_contract.hpp>

namespace convlab::lab04 {
#define LAB04_1D(name)                                                                                  \
  CONVLAB_REMOTE(void, name,                                                                            \
                 (const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& problem, \
                  cudaStream_t stream),                                                                 \
                 (d_in, host_array(h_filter, remote::filter_taps_if_valid(problem, 1)), d_out, \
                  problem, stream))
#define LAB04_2D(name)                                                                                  \
  CONVLAB_REMOTE(void, name,                                                                            \
                 (const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& problem, \
                  cudaStream_t stream),                                                                 \
                 (d_in, host_array(h_filter, remote::filter_taps_if_valid(problem, 2)), d_out, \
                  problem, stream))
LAB04_1D(conv1d_cached)
LAB04_2D(conv2d_cached)
LAB04_1D(conv1d_fast)
LAB04_2D(conv2d_fast)
CONVLAB_REMOTE(void, conv2d_separable,
               (const float* d_in, const float* h_row_filter, const float* h_col_filter, float* d_tmp, float* d_out,
                const Conv2dProblem& problem, cudaStream_t stream),
               (d_in, host_array(h_row_filter, remote::filter_taps_if_valid(problem, 1)),
                host_array(h_col_filter, remote::filter_taps_if_valid(problem, 1)), d_tmp, d_out, problem,
                stream))
}  // namespace convlab::lab04

void convlab_remote_entries(convlab::remote::Entries& e) {
  e.add("conv1d_cached", &convlab::lab04::conv1d_cached);
  e.add("conv2d_cached", &convlab::lab04::conv2d_cached);
  e.add("conv2d_separable", &convlab::lab04::conv2d_separable);
  e.add("conv1d_fast", &convlab::lab04::conv1d_fast);
  e.add("conv2d_fast", &convlab::lab04::conv2d_fast);
}
