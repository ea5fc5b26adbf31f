/// @file scoring.hpp
/// @brief From what the graders recorded to points, as the lab's spec says.
///
/// The rules (docs/grading.md states them for students):
/// - a correctness grader earns its points only if every one of its tests passed;
/// - a speedup grader earns nothing unless the correctness grader that gates it
///   passed; otherwise each of its tests earns speed_points() for the speed-up it
///   measured (full at the threshold, linear from partial_from), and the grader
///   earns the mean over its tests;
/// - a test that did not run (no GPU, an earlier test hung, the process
///   crashed) earns nothing, with the reason;
/// - a lab-wide failure (no build, a forbidden symbol, tampering) earns nothing;
/// - a grader that needs a GPU, graded on the CPU backend (GraderRun::needs_gpu), earns nothing
///   and is not counted as possible in the gradebook: "needs a GPU: graded when your instructor
///   grades on one";
/// - a correctness grader that failed as built but passed, on the same inputs, with the kernels'
///   device optimisation lowered (GraderRun::recheck, a compiler bug) scores by its policy: full
///   points ("full"), full points flagged for review ("review"; also "full" when it passed only
///   with -G, which can hide a race), or as measured ("as-is").
#pragma once

#include "convlab/spec.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace convlab::cli {

/// One test's outcome, from its JSON record (convlab/record.hpp) or from the process that ran it.
struct TestOutcome {
  std::string name;                  ///< "lab01.correctness.conv1d.n1_r0"
  bool recorded = false;             ///< a record was written
  bool passed = false;               ///< no failure
  bool skipped = false;              ///< the test skipped itself (no GPU)
  std::string message;               ///< failure, skip or not-run message
  std::uint64_t seed = 0;            ///< the test's seed
  std::uint64_t base_seed = 0;       ///< CONVLAB_SEED replays it
  std::optional<double> ratio;       ///< measured speed-up
  std::optional<double> threshold;   ///< the threshold the process used
  std::optional<double> time_ms;     ///< the student's median time
  std::optional<double> baseline_ms; ///< the baseline's median time
  std::vector<std::string> kernels;  ///< the kernels the student's code launched in the test
  std::vector<std::string> judged;   ///< technique tests: the kernels its rules judged and passed
  std::string output;                ///< what the kernels' code printed in the test, as the judge cut it
  std::string escaped;               ///< work outside the given stream, in the speed grader's words (TestRecord::escaped)
  std::string off_technique;         ///< the slot's technique not used on this problem (TestRecord::off_technique)
  std::string counters_refused;      ///< why the GPU's counters were not read (TestRecord::counters_refused)
  std::string error_map;             ///< its error map image, relative to feedback/ ("alice/<test>.png"; "" = none)
  std::optional<double> seconds;     ///< the test's wall time, its record's "seconds" "total" (split_seconds(); not saved)
};

/// Reads a record file; throws Error if it is not a record. With a key (the one `convlab grade`
/// gave the judge), a record whose mac does not match is refused: the graders did not write it.
TestOutcome read_record(const std::string& path, const std::string& key = "");

/// A failing GPU correctness grader looked at again (issue 18, recheck.hpp): the same source built
/// with the kernels' device optimisation lowered, its tests run again on the same inputs.
struct CompilerRecheck {
  std::uint64_t seed = 0;          ///< the base seed of the failing run, replayed (CONVLAB_SEED)
  std::string failed;              ///< how the grader failed as built: "6 of 13 tests failed"
  std::string passed_at;           ///< "O1" or "G": the first lowered level at which every test passed ("" = none)
  std::string flags;               ///< that level's compiler flags: "-Xptxas -O1"
  std::vector<std::string> tried;  ///< one line per level tried: "-Xptxas -O1: 6 of 13 tests failed"
  std::string cpu;                 ///< the CPU backend's verdict on the same seed ("" = not run)
  std::string policy;              ///< full, review or as-is (compiler_bug_policy)
  bool flaky = false;              ///< run again as built on the same inputs, it passed: the kernel's result varies
  bool inconclusive = false;       ///< no lowered build could be made or run: nothing was learnt
  std::string runner;              ///< the runner built at passed_at (convlab grade times it; not saved)
  /// The grader passed with less optimisation: the optimised code, not the kernel, looks wrong.
  bool compiler_bug() const { return !passed_at.empty(); }
  /// The policy gives the grader its points (full or review).
  bool credited() const { return compiler_bug() && policy != "as-is"; }
  /// The instructor should look: policy review, or a pass only with -G (which can hide a race).
  bool review() const { return credited() && (policy != "full" || passed_at == "G"); }
};

/// What running one grader's tests produced.
struct GraderRun {
  std::vector<TestOutcome> tests;  ///< every test of the grader, recorded or not
  std::string problem;             ///< the process's fault ("crashed: ...", "killed: ..."), if any
  std::string not_run;             ///< why the grader was not run at all, if it was not
  std::string sanitizer;           ///< compute-sanitizer's findings, if it found errors
  std::string note;                ///< a remark that costs nothing (e.g. a sanitizer run that did not finish)
  std::string infrastructure;      ///< the harness's own fault, twice (costs nothing; the grade is flagged for a regrade)
  bool needs_gpu = false;          ///< cannot run on this backend (a speed grader on the CPU backend)
  double seconds = 0;              ///< wall time of its runs
  std::optional<CompilerRecheck> recheck;  ///< a failing correctness grader, looked at again (issue 18)
};

/// The verdict on one grader.
struct GraderResult {
  std::string id;                  ///< "speedup.conv1d"
  std::string kind;                ///< correctness or speedup
  std::string description;         ///< from the spec
  double points = 0;               ///< earned
  double max_points = 0;           ///< possible
  bool extra_credit = false;       ///< counts on top of the lab's total
  bool passed = false;             ///< earned all its points
  bool ran = false;                ///< at least one of its tests ran
  std::string reason;              ///< why it earned what it earned, one paragraph
  std::optional<double> ratio;     ///< the lowest speed-up measured (speedup graders)
  double threshold = 0;            ///< the threshold applied (speedup graders)
  int tests_passed = 0;            ///< tests that passed
  int tests_total = 0;             ///< tests it has
  std::vector<TestOutcome> tests;  ///< for the feedback
  std::optional<CompilerRecheck> recheck;  ///< looked at again with less device optimisation (issue 18)
  bool review = false;             ///< the instructor should look at this grade (the gradebook's flags column)
  std::string infrastructure;      ///< the harness's own fault (GraderRun::infrastructure): regrade
  bool needs_gpu = false;          ///< not gradable on the backend it was graded on: not possible there either
  /// A grader that needs a GPU, whose verdict there is known already: "earns 0 on a GPU: <why>"
  /// (a kernel on another stream, which the speed grader refuses whatever the time); "" if none.
  std::string on_gpu;
};

/// The verdict on one lab of one submission.
struct LabResult {
  std::string lab;                    ///< "lab01"
  std::string title;                  ///< the lab's title
  bool submitted = false;             ///< the submission holds files of this lab
  std::string failure;                ///< a lab-wide reason for no points ("did not compile: ...")
  std::string details;                ///< e.g. the compiler's errors
  std::vector<std::string> notes;     ///< warnings that cost nothing (files ignored, ...)
  std::vector<GraderResult> graders;  ///< in spec order
  double score = 0;                   ///< points earned, extra credit included
  double max_score = 0;               ///< the lab's total (extra credit left out)
  double build_s = 0;                 ///< seconds to build
  double run_s = 0;                   ///< seconds to run the graders
  /// run_s by phase (issue 29, item 1): "list" (the graders' listing), "correctness", "technique",
  /// "speed" (the graders' processes, each process's time shared out by its tests' durations:
  /// add_phase_seconds() in batch.hpp), "sanitizer", "recheck" (compiler-bug rechecks). This run's
  /// only: not saved with the result.
  std::map<std::string, double> phase_s;
};

/// Scores a lab: `runs` maps grader ids to their runs; a non-empty `failure`
/// gives every grader 0 with that reason.
LabResult score_lab(const LabSpec& spec, const std::map<std::string, GraderRun>& runs, const std::string& failure = "");

/// The points of `lab`'s graders that this run could not grade (GraderResult::needs_gpu; extra
/// credit left out): not possible on the backend it was graded on, in the gradebook and in the
/// Gradescope results alike.
double unreachable_points(const LabResult& lab);

/// What a grader that needs a GPU says on the CPU backend, in its feedback.
inline constexpr const char* kNeedsGpu = "needs a GPU: graded when your instructor grades on one";

/// The fraction of a speed test's points its record earns (0 when it failed for
/// another reason than a speed-up below the threshold).
double speed_test_fraction(const GraderSpec& grader, const TestOutcome& test);

}  // namespace convlab::cli
