// The judge's grader-owned baselines: each runs in the runner (harness_entries.cpp there).
#include "convlab/baseline_codecs.hpp"
#include "convlab/baselines.hpp"
#include "convlab/remote.hpp"
#include "convlab/stencil_baselines.hpp"

namespace convlab::baseline {

void conv1d_naive(const Conv1dArgs& args) { remote::call<void>("baseline.conv1d_naive", args); }
void conv2d_naive(const Conv2dArgs& args) { remote::call<void>("baseline.conv2d_naive", args); }
void stencil2d_naive(const StencilArgs& args) { remote::call<void>("baseline.stencil2d_naive", args); }
void stencil3d_naive(const StencilArgs& args) { remote::call<void>("baseline.stencil3d_naive", args); }

}  // namespace convlab::baseline
