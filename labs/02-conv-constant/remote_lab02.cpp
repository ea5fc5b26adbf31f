// Lab 02's contract, for both processes of its graders: proxies in the judge, the table of the
// student's functions in the runner. See convlab/remote_contract.hpp.
#include "lab02.hpp"

#if defined(CONVLAB_JUDGE)
#include <convlab/remote.hpp>  // the judge's remote::call, which CONVLAB_REMOTE's proxies call
#endif
#include <convlab/remote_contract.hpp>

namespace convlab::lab02 {
// The filter is a host array here: the launcher copies it to constant memory.
CONVLAB_REMOTE(void, conv1d_constant,
               (const float* d_in, const float* h_filter, float* d_out, const Conv1dProblem& problem, cudaStream_t stream),
               (d_in, host_array(h_filter, remote::filter_taps_if_valid(problem, 1)), d_out, problem, stream))
CONVLAB_REMOTE(void, conv2d_constant,
               (const float* d_in, const float* h_filter, float* d_out, const Conv2dProblem& problem, cudaStream_t stream),
               (d_in, host_array(h_filter, remote::filter_taps_if_valid(problem, 2)), d_out, problem, stream))
}  // namespace convlab::lab02

void convlab_remote_entries(convlab::remote::Entries& e) {
  e.add("conv1d_constant", &convlab::lab02::conv1d_constant);
  e.add("conv2d_constant", &convlab::lab02::conv2d_constant);
}
