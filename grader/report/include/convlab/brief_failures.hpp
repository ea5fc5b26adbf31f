/// @file brief_failures.hpp
/// @brief In a student's ctest run, the full failure report of the first few failures only: a
/// run over an untouched starter fails every test of a lab, and thirty full reports of "nothing
/// was written" bury the one the student needs. Later failures of the same run print one line,
/// what is wrong and the command that shows the full report.
///
/// A student's run is marked by `<results>/.run-start`, which the run's first test
/// (convlab.run_start) writes; the failures so far are the failed records written since.
/// Outside such a run (a graders executable run by hand, `convlab check`, grading, the
/// self-test) every failure is printed in full.
#pragma once

#include "convlab/gate.hpp"

#include <string>

namespace convlab {

/// Failures of a run that are printed in full before later ones are shortened.
inline constexpr int kFullFailureReports = 3;

/// Replaces GoogleTest's result printer by one that shortens failures after the first
/// kFullFailureReports of a student's run (impl "student", results in `results_dir`, which holds
/// a .run-start marker). Call after InitGoogleTest; does nothing outside a student's run.
void install_brief_failures(const std::string& results_dir, const std::string& impl);

}  // namespace convlab
