/// @file batch.hpp
/// @brief A lab's graders in as few graders processes as may be (issue 29, item 4), each fault
/// charged as a process per grader would have charged it.
///
/// Every graders process costs a sandbox, a judge, a runner and (on a GPU) a CUDA context: about
/// 1 s on an H100, for graders whose tests take a fraction of that. So `convlab grade` runs a
/// lab's correctness and technique graders in one process (the union of their gtest filters,
/// `--gtest_filter=lab03.correctness.a.*:lab03.technique.a.*:...`), then the speed graders whose
/// gates passed in another. Each test still writes its own signed record, and each grader is still
/// scored from its own tests' records; how a process that ends badly is read is judge_batch()'s
/// rule. The graders of a batch share one seed (the process's), which a recheck replays per grader.
#pragma once

#include "common/sandbox.hpp"
#include "grading/scoring.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace convlab::cli {

/// One grader of a batch.
struct BatchGrader {
  std::string id;                  ///< "correctness.conv1d"
  std::string kind;                ///< correctness, technique or speedup (LabResult::phase_s's keys)
  std::vector<std::string> tests;  ///< its tests, as the graders list them
};

/// What one graders process left: how it ended and the records of its graders' tests.
struct GradersProcess {
  RunResult result;                             ///< how it ended
  std::map<std::string, TestOutcome> records;   ///< by test name: the records found (read_records)
  /// By test name: seconds from its "[ RUN      ]" line to the next one, or to the process's end
  /// (the judge's progress lines, which no submission can print): the durations of the tests
  /// whose records say none (a test running when the process failed, a judge that writes none).
  std::map<std::string, double> test_seconds;
  std::string results;                          ///< the folder of its records
};

/// The records of `tests` found in `results` (read_record() with `key`): a test without a record
/// file is absent; a file that is not its test's record, or is not signed with `key`, is there
/// with `recorded` false.
std::map<std::string, TestOutcome> read_records(const std::string& results, const std::vector<std::string>& tests,
                                                const std::string& key);

/// The test a process was running when it ended (its last "[ RUN      ]" line), "" if none.
std::string running_test(const RunResult& r);

/// Processes left behind that are all the harness's own (RunResult::leftover_harness): not the
/// submission's fault; the process is run once more.
bool harness_leftovers_only(const RunResult& r);

/// A grader's run as a process of its own tells it (and as a batch's process does for the grader
/// whose test it was running when it failed): each test's record; a test without one "this test
/// <how the process ended>" if it was running, else "not run: ..."; a fault of the process as the
/// grader's problem: killed (time, idle, output, signal), processes the submission left behind, an
/// exit status other than 0 and 1, or 1 although every test passed.
GraderRun grader_run(const RunResult& r, const std::vector<std::string>& tests,
                     const std::map<std::string, TestOutcome>& records);

/// What one process of a batch decided, grader by grader.
struct BatchDecision {
  std::map<std::string, GraderRun> done;  ///< decided by this process
  std::vector<std::string> again;         ///< tests not all run, no fault of theirs: a fresh process of the batch
  std::vector<std::string> alone;         ///< a fault no test can be blamed for: each in a process of its own
  std::string why;                        ///< what happened, for grade.log ("" when the process ended well)
};

/// Reads a process that ran `graders` (in spec order). The rule:
/// - It ended well (exit status 0 or 1 consistent with the records: 1 only if some test failed;
///   not killed; no process of the submission left; every test recorded): each grader has its
///   records, with no problem (exit status 1 is some grader's failure, not the others').
/// - It failed while a test was running (the last "[ RUN      ]" names a test of the batch that has
///   no record: killed at that test's time limit or the output limit, a signal, an exit in the
///   middle of it), and left no process of the submission behind: that test's grader is charged
///   exactly as in a process of its own (grader_run(): "this test ...", its later tests "not
///   run"). A grader whose tests all have records keeps them: they ran before the fault, in
///   other tests, and the judge signed them. A grader with tests not yet run runs again, whole,
///   in a fresh process (so that each grader's records come from one process and one seed).
/// - Any other fault cannot be laid on one test: processes of the submission left behind (which
///   of the graders started them?), an exit status at odds with records that are all there,
///   killed before the first test or after a test that has its record, the whole process's time
///   limit, tests without records after a normal exit. Then every grader of the batch runs again
///   in a process of its own, as before batches, so the fault falls on the grader(s) whose own
///   process shows it, and on no other.
/// A batch of one grader is a process of its own: grader_run().
BatchDecision judge_batch(const std::vector<BatchGrader>& graders, const GradersProcess& p);

/// A process's wall time split over the graders it ran, by their tests' durations (each test's
/// record's "seconds" "total", else GradersProcess::test_seconds; the start-up, the end and the
/// gaps between tests go in the same proportion), or by their numbers of tests where no test has
/// a duration.
std::map<std::string, double> split_seconds(const std::vector<BatchGrader>& graders, const GradersProcess& p);

/// What running a batch needs from its caller.
struct BatchSteps {
  /// Runs `graders` in one graders process, their records in a fresh folder (`round` 1, 2, ...).
  std::function<GradersProcess(const std::vector<BatchGrader>& graders, int round)> run;
  /// Runs one grader in a process of its own (with its own rerun for the harness's leftovers).
  std::function<GraderRun(const BatchGrader& grader)> alone;
  /// A line for grade.log.
  std::function<void(const std::string&)> log;
};

/// A grader's run from a batch.
struct BatchRun {
  GraderRun run;        ///< seconds: its share of every process it was in (split_seconds) and its own
  std::string results;  ///< the folder of the records it was scored from; "" when it ran alone (the step's own)
};

/// Runs `graders` (spec order): one process for all; while a process fails in one grader's test,
/// that grader is decided and the graders not yet run go on in a fresh process (each round decides
/// at least one grader, so there are at most as many rounds as graders); a process that left only
/// the harness's processes behind is run once more, and when that happens again each grader runs
/// alone (where it may be run once more again, and is flagged as the harness's fault); one grader
/// left runs alone.
std::map<std::string, BatchRun> run_batch(const std::vector<BatchGrader>& graders, const BatchSteps& steps);

/// Adds a batch's wall time `wall` (its processes and what convlab did around them) to `phase`
/// (LabResult::phase_s, keyed by kind: "correctness", "technique", "speed" for speedup graders),
/// split over its graders' kinds in proportion to their seconds (BatchRun: each process's wall
/// time shared out by its tests' durations, split_seconds()), or by their numbers of tests when
/// no process ran.
void add_phase_seconds(std::map<std::string, double>& phase, const std::vector<BatchGrader>& graders,
                       const std::map<std::string, BatchRun>& runs, double wall);

}  // namespace convlab::cli
