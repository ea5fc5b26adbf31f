/// @file remote_contract.hpp
/// @brief One file per lab, `labs/NN-slug/remote_labNN.cpp`, names the contract's functions for
/// both processes of the graders; this header gives it its two meanings.
///
/// Compiled into the judge (CONVLAB_JUDGE defined), each `CONVLAB_REMOTE(...)` defines the
/// contract function as a proxy that sends the call to the runner, so the graders call
/// `lab03::conv2d_tiled_in(...)` as if the student's code were linked in — it is not. Compiled
/// into the runner, `CONVLAB_REMOTE(...)` is empty (the student's file defines the function), and
/// `convlab_remote_entries()` is the table from which the runner calls it:
///
/// \code
/// namespace convlab::lab01 {
/// CONVLAB_REMOTE(void, conv1d_naive,
///                (const float* d_in, const float* d_filter, float* d_out, const Conv1dProblem& p, cudaStream_t s),
///                (d_in, d_filter, d_out, p, s))
/// }
/// void convlab_remote_entries(convlab::remote::Entries& e) {
///   e.add("conv1d_naive", &convlab::lab01::conv1d_naive);
/// }
/// \endcode
/// The last list is what is sent: a host pointer must be wrapped, `host_array(h_filter, taps)`
/// (see convlab/remote_codec.hpp for the rules). The name given to add() must be the function's.
#pragma once

#include "convlab/remote_codec.hpp"

#define CONVLAB_REMOTE_UNPAREN(...) __VA_ARGS__

namespace convlab::remote {
class Entries;  // the judge's (convlab/remote.hpp) or the runner's (convlab/runner.hpp)
}  // namespace convlab::remote

#if defined(CONVLAB_JUDGE)
/// The judge's proxy for one contract function. It calls the judge's remote::call and
/// host_array: the file that expands it includes the judge's convlab/remote.hpp (remote_labNN.cpp
/// does, under CONVLAB_JUDGE); this header, a layer below the judge, does not.
#define CONVLAB_REMOTE(ret, name, params, args)                                    \
  ret name params {                                                                \
    using ::convlab::remote::host_array;                                          \
    return ::convlab::remote::call<ret>(#name, CONVLAB_REMOTE_UNPAREN args);       \
  }
#else
#include "convlab/runner.hpp"
#define CONVLAB_REMOTE(ret, name, params, args)
#endif

/// The lab's table of entries: defined by remote_labNN.cpp, read by both sides.
void convlab_remote_entries(convlab::remote::Entries& entries);
