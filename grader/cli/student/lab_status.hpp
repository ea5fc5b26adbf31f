/// @file lab_status.hpp
/// @brief Where a student stands, from the records of their build: which build that is (the
/// preset they last built, its backend), each lab's graders and points (what the backend can
/// reach), the failures smallest case first, and the single next step with the command that
/// replays it. Shared by `convlab status`, `check`, `watch` and the summary that closes a
/// student's ctest run.
#pragma once

#include "common/project.hpp"
#include "grading/scoring.hpp"

#include <map>
#include <string>
#include <vector>

namespace convlab::cli {

/// A student's build folder and what it was configured as.
struct BuildInfo {
  std::string dir;             ///< absolute path
  std::string shown;           ///< as commands should name it: "build/cpu" inside the tree, else absolute
  std::string preset;          ///< the configure preset ("" for an explicit --build-dir)
  bool configured = false;     ///< it holds a CMakeCache.txt
  std::string backend;         ///< cuda or cpu ("" until configured)
  std::string backend_reason;  ///< why that backend ("no NVIDIA driver: ...", "found NVIDIA H100 ...")
  std::string chosen;          ///< why this build: "--preset cpu", "the build you ran last", ...
  /// True for the CPU backend (no timing: speed graders and benchmarks need a GPU).
  bool cpu() const { return backend == "cpu"; }
  /// One line for the start of a command: "build/cpu (CPU backend: no NVIDIA driver ...; the build you ran last)".
  std::string describe() const;
};

/// Reads what `dir` was configured as (its CMakeCache.txt): the backend and why.
BuildInfo read_build(const std::string& root, const std::string& dir, const std::string& preset);

/// The build a student command uses: `dir` if given, else build/`preset` if given, else the
/// student preset (default or cpu) built most recently, else `default` (whose backend is chosen
/// by what the machine has, so it works with or without a GPU).
BuildInfo choose_build(const std::string& root, const std::string& preset, const std::string& dir);

/// The newest record of every test of `lab` in `dirs` (folders of JSON records), written at or
/// after `since` (seconds since the epoch; 0 for all).
std::map<std::string, TestOutcome> newest_records(const std::vector<std::string>& dirs, const Lab& lab,
                                                  double since = 0);

/// The tests a lab's graders executable lists (`--gtest_list_tests`, with `filter` if not "").
/// Empty when the executable is missing or fails.
std::vector<std::string> list_tests(const std::string& exe, const std::string& filter = "");

/// A file's modification time in seconds since the epoch (0 when it does not exist).
double modified_at(const std::string& path);

/// The graders executable of `lab` in a build.
std::string graders_exe(const BuildInfo& b, const Lab& lab);

/// One lab, scored on what ran.
struct LabStatus {
  const Lab* lab = nullptr;
  LabResult score;                              ///< every grader (speed ones on the CPU backend: "needs a GPU")
  std::map<std::string, TestOutcome> records;   ///< the newest record per test
  int tests_expected = 0;                       ///< tests the graders list (or that have records)
  int tests_recorded = 0;                       ///< of them, with a record
  bool correctness_done = false;                ///< every correctness grader passed, all its tests recorded
  bool done = false;                            ///< every grader this backend can run passed
  double reachable = 0;                         ///< points reachable on this backend (extra credit left out)
  bool gpu_missing = false;                     ///< graders were skipped for want of a GPU
  std::string gpu_reason;                       ///< their skip message
};

/// Scores `lab` from its records; `listed` are the tests its graders list (empty: the records
/// alone); on the CPU backend speed graders earn nothing and are reported as needing a GPU.
LabStatus lab_status(const Lab& lab, const std::map<std::string, TestOutcome>& records,
                     const std::vector<std::string>& listed, bool cpu_backend);

/// The failed tests of a lab, smallest case first (the size read from the test name).
std::vector<TestOutcome> failures_smallest_first(const std::map<std::string, TestOutcome>& records);

/// The command that replays one test with its seed: CONVLAB_SEED=... ctest --test-dir ... -R '^test$'.
std::string replay_command(const TestOutcome& t, const BuildInfo& b);

/// The status table: a row per lab, columns sized to their contents (titles in full).
std::string status_table(const std::vector<LabStatus>& labs, bool cpu_backend);

/// What the points add up to: "0 of 600 points; 180 of them are speed points, which need a GPU".
std::string points_line(const std::vector<LabStatus>& labs, bool cpu_backend);

/// The single next step: the first lab not done, its first failing grader, the smallest failing
/// test and the command that replays it (or the command that runs it, if it has not run).
std::string next_step(const std::vector<LabStatus>& labs, const BuildInfo& b);

}  // namespace convlab::cli
