// The runner's own entries: the grader-owned baselines the speed graders time the student against.
#include "convlab/baseline_codecs.hpp"
#include "convlab/baselines.hpp"
#include "convlab/runner.hpp"
#include "convlab/stencil_baselines.hpp"

namespace convlab::runner {

void add_harness_entries(remote::Entries& e) {
  e.add("baseline.conv1d_naive", &baseline::conv1d_naive);
  e.add("baseline.conv2d_naive", &baseline::conv2d_naive);
  e.add("baseline.stencil2d_naive", &baseline::stencil2d_naive);
  e.add("baseline.stencil3d_naive", &baseline::stencil3d_naive);
}

}  // namespace convlab::runner
