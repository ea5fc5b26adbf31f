/// @file record.hpp
/// @brief The machine-readable record of every grader's outcome.
///
/// Each grader test writes one JSON file, `<results dir>/<test name>.json`:
/// \code{.json}
/// { "lab": "lab01", "test": "lab01.correctness.conv1d.n1_r0", "impl": "student",
///   "passed": false, "skipped": false, "message": "...", "seed": 1234,
///   "max_error": 0.5, "max_error_ratio": 1.2e6, "time_ms": 0.51, "baseline_ms": 0.52,
///   "ratio": 1.02, "threshold": 0.5, "output": "what the kernels' code printed\n" }
/// \endcode
/// The results directory is given by `--convlab-results=DIR` (set by the build)
/// or the CONVLAB_RESULTS_DIR environment variable, which wins.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

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
  /// The kernels the student's code launched in this test (the graders' baselines left out): a
  /// technique verdict must hold for every launch of its slot, so `convlab grade` checks these
  /// against the technique test's `judged` (issue 27).
  std::vector<std::string> kernels;
  std::vector<std::string> judged;         ///< technique tests: the kernels the technique's rules judged, and passed
  /// The test's problem lies outside its slot's technique (a lab whose design falls back to a plain
  /// kernel there: lab 04's fast kernels above radius 8): its kernels are not recorded, not held
  /// to the technique. Set by the lab's test before the first call; not written.
  bool outside_technique = false;
  /// A speed test whose timed call's count waits for the process's last speed test
  /// (expect_traffic_vs_baseline's `again`): its record is written once the count is made. Not written.
  bool count_deferred = false;
  std::string output;                      ///< what the kernels' code printed during the test (remote::take_printed)
  /// Work the student's code did outside the stream the grader gave it (a launch on the legacy
  /// default stream, a stream of its own, work from another thread), in the GPU speed grader's
  /// words (escaped_work()); "" if none. The speed grader refuses it on a GPU; `convlab grade` on
  /// the CPU backend, where speed is not timed, says so with the same words (issue 27, item 5).
  std::string escaped;
  /// The slot's technique was not used on this test's problem, in words naming the counts (a speed
  /// test's sampled call counted by the GPU after the timed runs, issue 27): `convlab grade` fails
  /// the slot's technique grader with it, however its own problem went. "" if it was used, or not looked at.
  std::string off_technique;
  /// Why the GPU's counters could not be read in this test ("" = they were, or were not asked for):
  /// the amounts were not checked, and `convlab grade` flags the grade for the instructor's review.
  std::string counters_refused;
  /// Where the test's time went, in seconds (issue 29): "total" (the test's wall time), the
  /// judge's waits for its runner by phase (remote::take_seconds()), and "host": the rest, the
  /// judge's own work (inputs, golden models, comparisons).
  std::map<std::string, double> seconds;

  /// The record as a JSON object (text).
  std::string to_json() const;
};

/// A kernel's name without its template arguments: `conv2d_fast<3>` -> `conv2d_fast`. A kernel
/// template instantiated per radius is one design, and its instantiations are judged as one
/// (TestRecord::kernels against TestRecord::judged).
std::string kernel_family(const std::string& name);

/// A GoogleTest failure message as a student reads it: without the scoped traces (the replay
/// line, which each front end writes for its own build folder), without "Failed" and without the
/// "Value of: / Actual: / Expected:" lines that come before a grader's own words; a bare check
/// with no words of its own reads "a check failed: ...".
std::string failure_text(const std::string& gtest_message);

/// The record of the test running now; graders fill in what they measure.
TestRecord& current_record();

/// Starts a fresh current record.
void reset_current_record();

/// Writes `record` to `<dir>/<test>.json`, creating `dir`; returns the path. With a key (32 hex
/// digits: CONVLAB_RECORD_KEY, which `convlab grade` gives the judge and the judge hides from the
/// runner) the record carries `"mac"`, record_mac() of its other fields, so that a record the
/// graders did not write is recognised.
std::string write_record(const TestRecord& record, const std::string& dir, const std::string& key = "");

/// SipHash-2-4 of `text` under the 128-bit key `key_hex` (32 hex digits), as 16 hex digits;
/// throws std::invalid_argument for a malformed key.
std::string record_mac(const std::string& text, const std::string& key_hex);

/// The text a record's mac covers: its JSON object without "mac", serialised canonically.
std::string record_signed_text(const std::string& record_json);

}  // namespace convlab
