/// @file recheck.hpp
/// @brief A failing GPU correctness grader, looked at again (issue 18): is it the kernel, or the
/// compiler?
///
/// A correct kernel can fail because the compiler's optimised device code is wrong (lab 01's loop
/// summed downward, built by CUDA 13.0 for an H100: docs/known-issues.md). So when a correctness
/// grader fails, `convlab check` and `convlab grade` run its tests again on the same inputs (the
/// judge's base seed, through CONVLAB_SEED):
///   1. as built: the failure must repeat, or the kernel's result changes from run to run (a race,
///      uninitialised memory), which is the kernel's fault;
///   2. built again from the same source with the kernels' device optimisation lowered
///      (CONVLAB_DEVICE_OPT: `-Xptxas -O1`, then `-G`), in a build folder of its own.
/// If every test passes at a lowered level, the grader passed "with less optimisation": a compiler
/// bug, which the student is told in plain words and which `convlab grade` scores by the course's
/// policy (CompilerRecheck, scoring.hpp). If it fails at every level, the fault is the kernel's.
/// The CPU backend's verdict on the same seed is shown beside it where a CPU build is at hand.
///
/// The decision (recheck_grader) takes its building and running as functions (RecheckSteps), so
/// that check and grade each bring their own and the tests bring fakes.
#pragma once

#include "common/project.hpp"
#include "grading/scoring.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace convlab::cli {

/// A device optimisation level: CONVLAB_DEVICE_OPT's value and the flags it means.
struct DeviceOpt {
  std::string name;   ///< "" (as built), "O1" or "G"
  std::string flags;  ///< "", "-Xptxas -O1", "-G"
};

/// The lowered levels a recheck tries, in order, below the build's own (`current`, its
/// CONVLAB_DEVICE_OPT): O1 then G from the default; G from O1; none from G.
std::vector<DeviceOpt> lowered_levels(const std::string& current = "");

/// lowered_levels() for a submission whose files hold `sources`: -G is left out (with a line in
/// `*notes`) when a source tests __CUDACC_DEBUG__, the macro -G defines, since such a kernel can
/// be right only when built with -G.
std::vector<DeviceOpt> lowered_levels_for(const std::string& current, const std::vector<std::string>& sources,
                                          std::vector<std::string>* notes);

/// The policy for a lab: `command_line` (`--compiler-bug-policy`) if given, else the spec's
/// compiler_bug_policy, else "review". Throws Error for a value other than full, review or as-is.
std::string resolve_policy(const std::string& command_line, const LabSpec& spec);

/// Whether a grader's failure is one to look at again: a correctness grader with a test that ran
/// (not skipped) and failed with a record. Crashes and time-outs are not rechecked.
bool wants_recheck(const GraderSpec& grader, const GraderRun& run);

/// "6 of 13 tests failed", "all 13 tests passed", "no test ran (...)".
std::string tests_summary(const GraderRun& run);

/// Running a grader's tests once more.
struct Replay {
  std::string tag;                    ///< names its results ("recheck-O1")
  std::string runner;                 ///< the runner (the student's kernels) to start
  std::string judge;                  ///< another judge ("" = the same one): the CPU backend's
  std::optional<std::uint64_t> seed;  ///< CONVLAB_SEED (none: a fresh seed, as a speed grader takes)
  std::string note;                   ///< a remark for the grader's result ("timed with ...")
};

/// What a recheck needs from its caller.
struct RecheckSteps {
  /// The runner built at `level` (level.name "" = the build as graded), or "" with `*why` set.
  std::function<std::string(const DeviceOpt& level, std::string* why)> build;
  /// Runs the grader's tests with `replay`.
  std::function<GraderRun(const Replay& replay)> run;
  /// The CPU backend's verdict on `seed` ("every test passed", ...); "" or unset when there is no CPU build.
  std::function<std::string(std::uint64_t seed)> cpu;
};

/// Looks again at `failed` (a run for which wants_recheck() holds): replays it as built, then per
/// level builds and replays until every test passes. `policy` is recorded for scoring.
CompilerRecheck recheck_grader(const GraderRun& failed, const std::vector<DeviceOpt>& levels,
                               const std::string& policy, const RecheckSteps& steps);

/// The student's explanation of a recheck, in plain words (several lines). `graded`: what the
/// policy did (convlab grade); otherwise what convlab grade would do (convlab check).
std::string recheck_message(const CompilerRecheck& c, const std::string& grader_id, bool graded);

/// The gradebook's flags column for one grader ("" when there is nothing to flag).
std::string gradebook_flag(const std::string& lab, const GraderResult& g);

/// One run of a judge for convlab check (and the tests): the grader's tests with `filter`, its
/// records read from `results`.
struct JudgeRun {
  std::string judge;                  ///< the lab's graders
  std::string runner;                 ///< --convlab-runner ("" = the one next to the judge)
  std::string filter;                 ///< gtest filter: "lab01.correctness.conv1d.*"
  std::vector<std::string> tests;     ///< the test names whose records count
  std::string results;                ///< records folder (emptied first)
  std::optional<std::uint64_t> seed;  ///< CONVLAB_SEED
  double idle_timeout_s = 0;          ///< per test
};
/// Runs it; a test without a record did not pass (with the process's fate as its message).
GraderRun run_judge(const JudgeRun& j);

/// convlab check's hook: for each failing correctness grader among `records` (the check's
/// records), builds the lab again in `<build>-recheck-<level>` (same preset, CONVLAB_DEVICE_OPT),
/// replays it, asks the CPU build (ROOT/build/cpu, if configured) for its verdict, and prints
/// what it found. Returns the rechecks by grader id.
std::map<std::string, CompilerRecheck> recheck_after_check(const Project& project, const Lab& lab,
                                                           const std::string& build, const std::string& preset,
                                                           const std::map<std::string, TestOutcome>& records);

/// convlab grade's side: for each GPU a tree of its own (WORK/recheck/gpu<N>) with a build folder
/// per lowered level, built on demand for the submission whose grader failed.
class GradeRechecker {
public:
  struct Settings {
    std::string root;                    ///< the course tree
    std::vector<std::string> files;      ///< the grading tree's files (no reference/)
    std::vector<std::string> configure;  ///< cmake options of the grading builds (--preset, -D...)
    std::string work;                    ///< WORK/recheck
    std::string policy;                  ///< --compiler-bug-policy ("" = each lab's spec, else review)
    bool cpu = false;                    ///< also build the CPU backend and show its verdict
    double compile_timeout_cap_s = 0;    ///< cap on the spec's compile time limit (0 = the spec's)
    /// Vets a build as the graded one was (the files its compiler read, its symbols); "" = clean.
    std::function<std::string(const Lab& lab, const std::string& build, const std::string& src,
                              const std::vector<std::string>& sources, const std::string& runner)> vet;
    std::function<void(const std::string&)> log;  ///< grade.log
  };
  explicit GradeRechecker(Settings s) : s_(std::move(s)) {}

  /// Whether to look again at `run`: wants_recheck(), and the grading build (the slot whose
  /// sources are `slot_src`) runs kernels on a GPU; the CPU backend has no device optimisation.
  bool wanted(const GraderSpec& g, const GraderRun& run, const std::string& slot_src);

  /// Looks again at `failed`, grader `g` of `lab` for a submission whose files are `files` (spec
  /// name -> path), built as graded into `runner`; `out` is the submission's folder for this lab.
  /// `run` runs the grader's tests with a replay (grade's own runner of graders).
  CompilerRecheck recheck(const std::string& gpu, const Lab& lab, const LabSpec& spec,
                          const std::map<std::string, std::string>& files, const std::string& runner,
                          const std::string& out, const GraderSpec& g, const GraderRun& failed,
                          const std::function<GraderRun(const Replay&)>& run);

private:
  std::string build_at(const std::string& gpu, const Lab& lab, const std::string& level, const std::string& out,
                       bool cpu, std::string* judge, std::string* why);
  Settings s_;
  std::mutex mu_;
  std::map<std::string, std::string> broken_;  // build folder -> why it cannot be configured
  std::map<std::string, bool> cpu_slots_;      // slot source folder -> built for the CPU backend
};

/// Whether `run` (a gate of a speed grader) earns its points through a recheck (policy not as-is).
bool credited_by_recheck(const GraderRun& run);

/// For a speed grader whose gate was credited through a recheck: time the runner that computed
/// right (its note says so); none otherwise.
std::optional<Replay> speed_replay(const GraderSpec& speed, const std::map<std::string, GraderRun>& runs);

}  // namespace convlab::cli
