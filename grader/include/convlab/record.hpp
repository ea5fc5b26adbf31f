/// @file record.hpp
/// @brief The machine-readable record of every grader's outcome.
///
/// Each grader test writes one JSON file, `<results dir>/<test name>.json`:
/// \code{.json}
/// { "lab": "lab01", "test": "lab01.correctness.conv1d.n1_r0", "impl": "student",
///   "passed": false, "skipped": false, "message": "...", "seed": 1234,
///   "max_error": 0.5, "max_error_ratio": 1.2e6, "time_ms": 0.51, "baseline_ms": 0.52,
///   "ratio": 1.02, "threshold": 0.5 }
/// \endcode
/// The results directory is given by `--convlab-results=DIR` (set by the build)
/// or the CONVLAB_RESULTS_DIR environment variable, which wins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace convlab {

/// What one grader test measured and concluded.
struct TestRecord {
  std::string lab;                         ///< "lab01"
  std::string test;                        ///< full test name
  std::string impl;                        ///< whose kernels: student, reference, starter, `mutant:<name>`
  bool passed = false;                     ///< no failure
  bool skipped = false;                    ///< not run (no GPU), with the reason in message
  std::string message;                     ///< failure or skip messages
  std::uint64_t seed = 0;                  ///< the test's seed
  std::uint64_t base_seed = 0;             ///< the process seed (CONVLAB_SEED replays it)
  std::optional<double> max_error;         ///< largest |error|
  std::optional<double> max_error_ratio;   ///< largest |error| / tolerance
  std::optional<double> time_ms;           ///< the student's median time
  std::optional<double> baseline_ms;       ///< the baseline's median time
  std::optional<double> ratio;             ///< the speed-up judged
  std::optional<double> threshold;         ///< the speed-up required

  /// The record as a JSON object (text).
  std::string to_json() const;
};

/// The record of the test running now; graders fill in what they measure.
TestRecord& current_record();

/// Starts a fresh current record.
void reset_current_record();

/// Writes `record` to `<dir>/<test>.json`, creating `dir`; returns the path.
std::string write_record(const TestRecord& record, const std::string& dir);

}  // namespace convlab
