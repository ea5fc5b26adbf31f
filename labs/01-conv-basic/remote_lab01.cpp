// Lab 01's contract, for both processes of its graders: proxies in the judge, the table of the
// student's functions in the runner. See convlab/remote_contract.hpp.
#include "lab01.hpp"

#if defined(CONVLAB_JUDGE)
#include <convlab/remote.hpp>  // the judge's remote::call, which CONVLAB_REMOTE's proxies call
#endif
#include <convlab/remote_contract.hpp>

namespace convlab::lab01 {
CONVLAB_REMOTE(void, conv1d_naive,
               (const float* d_in, const float* d_filter, float* d_out, const Conv1dProblem& problem, cudaStream_t stream),
               (d_in, d_filter, d_out, problem, stream))
CONVLAB_REMOTE(void, conv2d_naive,
               (const float* d_in, const float* d_filter, float* d_out, const Conv2dProblem& problem, cudaStream_t stream),
               (d_in, d_filter, d_out, problem, stream))
}  // namespace convlab::lab01

void convlab_remote_entries(convlab::remote::Entries& e) {
  e.add("conv1d_naive", &convlab::lab01::conv1d_naive);
  e.add("conv2d_naive", &convlab::lab01::conv2d_naive);
}
