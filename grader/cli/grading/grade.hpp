/// @file grade.hpp
/// @brief `convlab grade`: an instructor's batch grading (see docs/grading.md).
#pragma once

#include "common/project.hpp"

#include <string>
#include <vector>

namespace convlab::cli {

/// The settings of one grading run.
struct GradeOptions {
  std::vector<std::string> submissions;     ///< folders, archives, git repositories, LMS bulk downloads (intake.hpp)
  std::string roster;                       ///< the class list that names the gradebook's rows ("" = none)
  std::string out;                          ///< where the outputs go
  std::string work;                         ///< scratch ("" = OUT/work)
  std::string slots;                        ///< where the build slots live, shared by runs ("" = WORK/slots)
  std::vector<std::string> labs;            ///< labs to grade (empty = all)
  std::string preset = "default";           ///< the CMake configure preset the graders are built with
  std::string cuda_arch;                    ///< CMAKE_CUDA_ARCHITECTURES ("" = the preset's choice)
  std::vector<std::string> cmake_args;      ///< more -D options for the configure step
  int jobs = 0;                             ///< parallel builds (0 = from the core count)
  std::vector<std::string> gpus;            ///< GPUs to run on, one submission per GPU at a time (gpus.hpp;
                                            ///< empty: CUDA_VISIBLE_DEVICES's first, else GPU 0)
  double test_timeout = 0;                  ///< cap on the spec's time limit per test (0 = the spec's)
  double compile_timeout = 0;               ///< cap on the spec's compile time limit (0 = the spec's)
  std::string calibration;                  ///< calibration file (convlab calibrate)
  std::vector<std::string> sanitize;        ///< compute-sanitizer tools run on the correctness graders
  std::string sanitize_exclude;             ///< gtest patterns left out of sanitizer runs
  std::string sandbox_user = "auto";        ///< run graders as this user when root ("auto": nobody, "none")
  std::string runner_sandbox = "auto";      ///< start runners in bubblewrap where it works ("auto") or never ("none")
  bool force = false;                       ///< grade again what an earlier run finished
  std::string expect;                       ///< expected scores (JSON) to compare with
  long long output_limit = 64ll << 20;      ///< bytes a graders process may print before it is killed
  std::string compiler_bug_policy;          ///< full, review or as-is ("" = each spec's, else review; recheck.hpp)
  bool recheck_cpu = false;                 ///< a recheck also shows the CPU backend's verdict (builds it once)
};

/// Grades every submission; returns the exit status (0, or 1 when --expect found a difference).
int grade_main(const Project& project, const GradeOptions& options);

}  // namespace convlab::cli
