/// @file conv_technique.hpp
/// @brief Technique graders of the single-channel convolution labs (02–04), on the shared conv
/// testbed: one problem, its output checked first, then the rules of convlab/technique.hpp.
#pragma once

#include "convlab/conv_testbed.hpp"
#include "convlab/technique.hpp"

#include <string>

namespace convlab {

/// Registers `<lab>.technique.<variant>.<case>`: runs `kernel` on the case (its output must be
/// right), then checks `rule` on what the runner saw; `asks` says in one phrase what the lab asks
/// ("an input tile in shared memory, loaded once per block, with a barrier before it is read").
void add_conv1d_technique(Registry& reg, const std::string& variant, const Conv1dFn& kernel, const Conv1dCase& c,
                          const std::string& asks, const TechniqueRule& rule);

/// The same for 2D; `options.filter` says how the filter is drawn (separable for two-pass kernels).
void add_conv2d_technique(Registry& reg, const std::string& variant, const Conv2dFn& kernel, const Conv2dCase& c,
                          const std::string& asks, const TechniqueRule& rule, const ConvCheckOptions& options = {});

/// The separable grader's extra rule: after the call, `d_tmp` (the kernel's scratch, its 4th
/// pointer argument) holds one of the two 1D passes of the input, the row pass or the column pass,
/// so the work was done in two passes of 2r+1 taps. Registers `<lab>.technique.<variant>.<case>`.
void add_separable_technique(Registry& reg, const std::string& variant,
                             const std::function<void(const Conv2dArgs&, float* d_tmp)>& kernel, const Conv2dCase& c,
                             const std::string& asks, const TechniqueRule& rule);

}  // namespace convlab
