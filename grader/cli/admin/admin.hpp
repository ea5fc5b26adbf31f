/// @file admin.hpp
/// @brief The instructor's commands besides grading and release (release.hpp): calibrate.
#pragma once

#include "common/project.hpp"

#include <string>
#include <vector>

namespace convlab::cli {

/// Settings of `convlab calibrate`.
struct CalibrateOptions {
  std::string out;                   ///< the calibration file to write
  double fraction = 0.7;             ///< thresholds = fraction x the reference's speed-up
  std::string preset = "instructor"; ///< configure preset of the reference build
  std::string build_dir;             ///< "" = ROOT/build/calibrate
  std::string cuda_arch;             ///< CMAKE_CUDA_ARCHITECTURES ("" = the preset's)
  std::vector<std::string> labs;     ///< labs to calibrate (empty = all)
};

/// `convlab calibrate`: times the reference's speed graders on this GPU and
/// writes thresholds that `convlab grade --calibration` and the graders
/// (CONVLAB_CALIBRATION) use instead of the spec's defaults.
int calibrate_main(const Project& p, const CalibrateOptions& o);

}  // namespace convlab::cli
