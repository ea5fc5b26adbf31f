// A failing correctness grader looked at again (issue 18): the decision, the policies' points,
// the student's message, the gradebook, and a recheck through a fake judge process.
#include "grading/recheck.hpp"
#include "grading/reports.hpp"
#include "common/sandbox.hpp"
#include "grading/scoring.hpp"
#include "test_files.hpp"
#include "common/util.hpp"

#include <convlab/spec.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>

#include <sys/stat.h>
#include <unistd.h>

namespace convlab::cli {
namespace {

using testing_files::temp_dir;
using testing_files::write_executable;

const char* kSpec = R"({
  "lab": "lab07", "slug": "07-demo", "title": "Demo",
  "submission": {"files": ["demo.cu"]},
  "forbidden_symbols": ["cublas"],
  "time_limits_s": {"compile": 60, "test": 30},
  "graders": [
    {"id": "correctness.a", "kind": "correctness", "points": 30},
    {"id": "speedup.a", "kind": "speedup", "points": 20, "threshold": 2.0, "partial_from": 1.0, "gated_by": "correctness.a"}
  ]})";

TestOutcome outcome(const std::string& name, bool passed, std::uint64_t base_seed = 4242) {
  TestOutcome t;
  t.name = name;
  t.recorded = true;
  t.passed = passed;
  t.base_seed = base_seed;
  if (!passed) t.message = "254 of 255 outputs are wrong.";  // with the period, as the graders print it
  return t;
}

// correctness.a as a failing run: x passes, y fails (the first failing record carries the seed).
GraderRun failing_run() {
  GraderRun r;
  r.tests = {outcome("lab07.correctness.a.x", true), outcome("lab07.correctness.a.y", false)};
  return r;
}
GraderRun passing_run() {
  GraderRun r;
  r.tests = {outcome("lab07.correctness.a.x", true), outcome("lab07.correctness.a.y", true)};
  return r;
}

// Fake steps: which builds pass, and a log of what was asked.
struct Fake {
  std::map<std::string, bool> passes;           // level ("" = as built) -> every test passes
  std::set<std::string> unbuildable;            // levels whose build fails
  std::vector<std::string> built, runs;         // what was asked, in order
  std::vector<std::optional<std::uint64_t>> seeds;
  std::optional<std::uint64_t> cpu_seed;
  RecheckSteps steps(bool with_cpu = false) {
    RecheckSteps s;
    s.build = [this](const DeviceOpt& level, std::string* why) -> std::string {
      built.push_back(level.name);
      if (unbuildable.count(level.name)) {
        *why = "it did not build";
        return "";
      }
      return "runner-" + (level.name.empty() ? std::string("as-built") : level.name);
    };
    s.run = [this](const Replay& r) {
      runs.push_back(r.runner);
      seeds.push_back(r.seed);
      const std::string level = r.runner == "runner-as-built" ? "" : r.runner.substr(7);
      return passes[level] ? passing_run() : failing_run();
    };
    if (with_cpu)
      s.cpu = [this](std::uint64_t seed) {
        cpu_seed = seed;
        return std::string("all 2 tests passed");
      };
    return s;
  }
};

TEST(Recheck, LevelsBelowTheBuildsOwn) {
  const auto all = lowered_levels("");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "O1");
  EXPECT_EQ(all[0].flags, "-Xptxas -O1");
  EXPECT_EQ(all[1].name, "G");
  EXPECT_EQ(all[1].flags, "-G");
  ASSERT_EQ(lowered_levels("O1").size(), 1u);
  EXPECT_EQ(lowered_levels("O1")[0].name, "G");
  EXPECT_TRUE(lowered_levels("G").empty());
}

TEST(Recheck, MinusGIsNotTriedForASourceThatTestsForIt) {
  std::vector<std::string> notes;
  EXPECT_EQ(lowered_levels_for("", {"__global__ void k() {}"}, &notes).size(), 2u);
  EXPECT_TRUE(notes.empty());
  // Right only where -G defines its macro: no evidence of a compiler bug.
  const auto levels = lowered_levels_for("", {"#ifdef __CUDACC_DEBUG__\n  /* the right kernel */\n#endif"}, &notes);
  ASSERT_EQ(levels.size(), 1u);
  EXPECT_EQ(levels[0].name, "O1");
  EXPECT_EQ(notes, std::vector<std::string>{"-G: not tried (the source tests __CUDACC_DEBUG__, which -G defines)"});
}

TEST(Recheck, PolicyFromTheCommandLineThenTheSpecThenReview) {
  LabSpec spec = parse_spec(kSpec, "t");
  EXPECT_EQ(resolve_policy("", spec), "review");
  spec.compiler_bug_policy = "as-is";
  EXPECT_EQ(resolve_policy("", spec), "as-is");
  EXPECT_EQ(resolve_policy("full", spec), "full");
  EXPECT_THROW(resolve_policy("lenient", spec), Error);
}

TEST(Recheck, OnlyRecordedCorrectnessFailuresAreLookedAtAgain) {
  const LabSpec spec = parse_spec(kSpec, "t");
  const GraderSpec& correctness = spec.grader("correctness.a");
  EXPECT_TRUE(wants_recheck(correctness, failing_run()));
  EXPECT_FALSE(wants_recheck(correctness, passing_run()));
  EXPECT_FALSE(wants_recheck(spec.grader("speedup.a"), failing_run()));  // speed is not a compiler's to break
  GraderRun skipped = failing_run();
  for (auto& t : skipped.tests) t.skipped = true, t.passed = false;
  EXPECT_FALSE(wants_recheck(correctness, skipped));  // no GPU: nothing ran
  GraderRun crashed;
  crashed.tests = {outcome("lab07.correctness.a.x", true), TestOutcome{}};
  crashed.tests[1].name = "lab07.correctness.a.y";
  crashed.problem = "killed by signal 11";
  EXPECT_FALSE(wants_recheck(correctness, crashed));  // no record of a failure
  GraderRun gated = failing_run();
  gated.not_run = "correctness.a did not pass";
  EXPECT_FALSE(wants_recheck(correctness, gated));
  // A runner that could not start (the sandbox, the set-up) is no kernel computing wrong results.
  GraderRun unstarted = failing_run();
  for (auto& t : unstarted.tests)
    if (!t.passed)
      t.message = "C++ exception with description \"the runner (the process that runs your kernels) exited with "
                  "status 1 while running its start-up\" thrown in the test body.";
  EXPECT_FALSE(wants_recheck(correctness, unstarted));
  unstarted.tests.back().message = "out[3] (interior): got 0.5, expected 0.25";
  unstarted.tests.back().passed = false;
  unstarted.tests.back().recorded = true;
  EXPECT_TRUE(wants_recheck(correctness, unstarted));  // one wrong output is enough
  // A runner whose host code crashed (a signal, here under the sandbox) is no compiler's doing:
  // the crash fixture took 52 s on the H100, rebuilt and rerun twice for nothing.
  GraderRun signalled = failing_run();
  signalled.tests.back().message =
      "the launcher failed: the runner (the process that runs your kernels) was ended by signal 11 (SIGSEGV: "
      "Segmentation fault) (exit status 139 from runner-sandbox.sh, which ran it) while running conv2d_naive";
  EXPECT_FALSE(wants_recheck(correctness, signalled));
}

TEST(Recheck, ACompilerBugPassesAtTheFirstLoweredLevelOnTheSameSeed) {
  Fake f;
  f.passes = {{"", false}, {"O1", true}, {"G", true}};
  const CompilerRecheck c = recheck_grader(failing_run(), lowered_levels(), "review", f.steps(true));
  EXPECT_TRUE(c.compiler_bug());
  EXPECT_FALSE(c.flaky);
  EXPECT_EQ(c.passed_at, "O1");
  EXPECT_EQ(c.flags, "-Xptxas -O1");
  EXPECT_EQ(c.runner, "runner-O1");
  EXPECT_EQ(c.seed, 4242u);
  EXPECT_EQ(c.failed, "1 of 2 tests failed");
  EXPECT_EQ(f.built, (std::vector<std::string>{"", "O1"}));  // -G was not needed
  ASSERT_EQ(f.seeds.size(), 2u);
  for (const auto& s : f.seeds) EXPECT_EQ(s, std::optional<std::uint64_t>(4242));
  EXPECT_EQ(f.cpu_seed, std::optional<std::uint64_t>(4242));
  EXPECT_EQ(c.cpu, "all 2 tests passed");
  EXPECT_EQ(c.tried, (std::vector<std::string>{"as built, again: 1 of 2 tests failed", "-Xptxas -O1: all 2 tests passed"}));
}

TEST(Recheck, AStudentBugFailsAtEveryLevel) {
  Fake f;  // a halo off by one: wrong however it is compiled
  const CompilerRecheck c = recheck_grader(failing_run(), lowered_levels(), "full", f.steps());
  EXPECT_FALSE(c.compiler_bug());
  EXPECT_FALSE(c.flaky);
  EXPECT_FALSE(c.inconclusive);
  EXPECT_FALSE(c.credited());
  EXPECT_EQ(f.built, (std::vector<std::string>{"", "O1", "G"}));
  EXPECT_EQ(c.tried.size(), 3u);
  EXPECT_TRUE(c.cpu.empty());  // no CPU build given
}

TEST(Recheck, AFailureThatDoesNotRepeatIsTheKernels) {
  Fake f;
  f.passes = {{"", true}, {"O1", true}};  // passes when simply run again: a race
  const CompilerRecheck c = recheck_grader(failing_run(), lowered_levels(), "full", f.steps());
  EXPECT_TRUE(c.flaky);
  EXPECT_FALSE(c.compiler_bug());
  EXPECT_EQ(f.built, std::vector<std::string>{""});  // no lowered build: nothing to learn from one
}

TEST(Recheck, ALevelThatDoesNotBuildIsSkipped) {
  Fake f;
  f.passes = {{"G", true}};
  f.unbuildable = {"O1"};
  const CompilerRecheck c = recheck_grader(failing_run(), lowered_levels(), "full", f.steps());
  EXPECT_EQ(c.passed_at, "G");
  EXPECT_EQ(c.tried[1], "-Xptxas -O1: not built (it did not build)");
  EXPECT_TRUE(c.review());  // a pass only with -G is looked at even under 'full': it can hide a race
}

TEST(Recheck, NothingBuiltIsInconclusive) {
  Fake f;
  f.unbuildable = {"O1", "G"};
  const CompilerRecheck c = recheck_grader(failing_run(), lowered_levels(), "full", f.steps());
  EXPECT_TRUE(c.inconclusive);
  EXPECT_FALSE(c.compiler_bug());
  EXPECT_NE(recheck_message(c, "correctness.a", true).find("could not be looked at again"), std::string::npos);
}

// Scoring: the policies' points, and speed gated as the policy says.
LabResult score_with(const std::string& policy, const std::string& passed_at = "O1") {
  const LabSpec spec = parse_spec(kSpec, "t");
  std::map<std::string, GraderRun> runs;
  runs["correctness.a"] = failing_run();
  CompilerRecheck c;
  c.seed = 4242;
  c.failed = "1 of 2 tests failed";
  c.passed_at = passed_at;
  c.flags = passed_at == "G" ? "-G" : passed_at.empty() ? "" : "-Xptxas -O1";
  c.policy = policy;
  c.tried = {"as built, again: 1 of 2 tests failed", "-Xptxas -O1: all 2 tests passed"};
  runs["correctness.a"].recheck = c;
  TestOutcome speed = outcome("lab07.speedup.a.big", true);
  speed.ratio = 3.0;
  runs["speedup.a"].tests = {speed};
  return score_lab(spec, runs);
}

TEST(RecheckScoring, FullGivesThePointsWithoutAFlag) {
  const LabResult r = score_with("full");
  EXPECT_DOUBLE_EQ(r.graders[0].points, 30);
  EXPECT_TRUE(r.graders[0].passed);
  EXPECT_FALSE(r.graders[0].review);
  EXPECT_DOUBLE_EQ(r.graders[1].points, 20);  // correctness credited: speed counts
  EXPECT_DOUBLE_EQ(r.score, 50);
  EXPECT_NE(r.graders[0].reason.find("1 of 2 tests failed"), std::string::npos);  // what failed stays visible
  EXPECT_NE(r.graders[0].reason.find("-Xptxas -O1"), std::string::npos);
  EXPECT_NE(r.graders[0].reason.find("compiler-bug policy 'full'"), std::string::npos);
  // The sentence reads on: "... outputs are wrong; it passes ...", not "wrong.; it passes".
  EXPECT_NE(r.graders[0].reason.find("outputs are wrong; it passes every test"), std::string::npos)
      << r.graders[0].reason;
}

TEST(RecheckScoring, ReviewGivesThePointsFlagged) {
  const LabResult r = score_with("review");
  EXPECT_DOUBLE_EQ(r.score, 50);
  EXPECT_TRUE(r.graders[0].review);
  EXPECT_NE(r.graders[0].reason.find("flagged for the instructor's review"), std::string::npos);
}

TEST(RecheckScoring, AsIsScoresAsMeasuredAndGatesSpeed) {
  const LabResult r = score_with("as-is");
  EXPECT_DOUBLE_EQ(r.graders[0].points, 0);
  EXPECT_FALSE(r.graders[0].passed);
  EXPECT_FALSE(r.graders[0].review);
  EXPECT_DOUBLE_EQ(r.graders[1].points, 0);
  EXPECT_DOUBLE_EQ(r.score, 0);
  EXPECT_NE(r.graders[0].reason.find("scored as measured"), std::string::npos);
}

TEST(RecheckScoring, FullWithOnlyMinusGIsFlagged) {
  const LabResult r = score_with("full", "G");
  EXPECT_DOUBLE_EQ(r.score, 50);
  EXPECT_TRUE(r.graders[0].review);
}

TEST(RecheckScoring, AStudentBugStaysTheStudents) {
  const LabResult r = score_with("full", "");  // failed at every level
  EXPECT_DOUBLE_EQ(r.score, 0);
  EXPECT_FALSE(r.graders[0].review);
  EXPECT_NE(r.graders[0].reason.find("the fault is in the kernel, not the compiler"), std::string::npos);
}

TEST(RecheckMessages, TheStudentIsToldInPlainWords) {
  const LabResult r = score_with("review");
  CompilerRecheck c = *r.graders[0].recheck;
  c.cpu = "all 2 tests passed";
  const std::string m = recheck_message(c, "correctness.a", true);
  for (const char* words : {"Your kernel computes the right result with less compiler optimisation",
                            "this looks like a compiler bug, not a bug in your kernel", "`-Xptxas -O1`",
                            "CONVLAB_SEED=4242", "CONVLAB_DEVICE_OPT=O1", "docs/known-issues.md", "Known issues",
                            "The CPU backend, on the same inputs: all 2 tests passed",
                            "compiler-bug policy 'review': full points, flagged for your instructor's review"})
    EXPECT_TRUE(contains_icase(m, words)) << "missing: " << words << "\n" << m;
  const std::string check = recheck_message(c, "correctness.a", false);
  EXPECT_NE(check.find("When graded (convlab grade)"), std::string::npos);
  c.policy = "as-is";
  EXPECT_NE(recheck_message(c, "correctness.a", true).find("scored as measured"), std::string::npos);

  CompilerRecheck bug;  // the student's own
  bug.seed = 7;
  bug.tried = {"as built, again: 1 of 2 tests failed", "-Xptxas -O1: 1 of 2 tests failed", "-G: 1 of 2 tests failed"};
  const std::string own = recheck_message(bug, "correctness.a", true);
  EXPECT_NE(own.find("the fault is in the kernel, not the compiler"), std::string::npos);
  EXPECT_EQ(own.find("compiler bug"), std::string::npos);
  bug.flaky = true;
  EXPECT_NE(recheck_message(bug, "correctness.a", true).find("changes from run to run"), std::string::npos);
}

StudentResult student(const std::string& name, const LabResult& lab) {
  StudentResult s;
  s.student = name;
  s.origin = "/subs/" + name;
  s.kind = "folder";
  s.fingerprint = "f";
  s.labs = {lab};
  s.labs[0].submitted = true;
  return s;
}

TEST(RecheckReports, GradebookFeedbackAndSavedState) {
  const StudentResult flagged = student("carol", score_with("review"));
  const StudentResult plain = student("dave", score_with("full", ""));
  const std::string csv = gradebook_csv({flagged, plain}, {"lab07"}, {50});
  EXPECT_EQ(csv,
            "student,lab07,total,flags\n"
            "Points Possible,50,50,\n"
            "carol,50,50,lab07 correctness.a: compiler bug? passes with -Xptxas -O1 on the same inputs; policy review: "
            "full points; REVIEW\n"
            "dave,0,0,\n");
  // Without a flag the gradebook keeps its usual columns.
  EXPECT_EQ(gradebook_csv({plain}, {"lab07"}, {50}), "student,lab07,total\nPoints Possible,50,50\ndave,0,0\n");

  const std::string md = feedback_markdown(flagged);
  EXPECT_NE(md.find("| correctness.a | passed (compiler bug; for review) | 30 / 30 |"), std::string::npos) << md;
  EXPECT_NE(md.find("> Your kernel computes the right result with less compiler optimisation."), std::string::npos);
  const std::string own = feedback_markdown(plain);
  EXPECT_NE(own.find("the fault is in the kernel, not the compiler"), std::string::npos);

  const auto gs = nlohmann::json::parse(gradescope_json(flagged));
  EXPECT_NE(gs.at("tests")[0].at("output").get<std::string>().find("less compiler optimisation"), std::string::npos);

  const StudentResult back = student_from_json(to_json(flagged));
  ASSERT_TRUE(back.labs[0].graders[0].recheck.has_value());
  EXPECT_EQ(back.labs[0].graders[0].recheck->passed_at, "O1");
  EXPECT_TRUE(back.labs[0].graders[0].review);
  EXPECT_EQ(to_json(back), to_json(flagged));
}

TEST(RecheckSpeed, TheCreditedBuildIsTheOneTimed) {
  const LabSpec spec = parse_spec(kSpec, "t");
  std::map<std::string, GraderRun> runs;
  runs["correctness.a"] = failing_run();
  EXPECT_FALSE(speed_replay(spec.grader("speedup.a"), runs).has_value());
  CompilerRecheck c;
  c.passed_at = "O1";
  c.flags = "-Xptxas -O1";
  c.runner = "/w/lab07_runner_O1";
  c.policy = "review";
  runs["correctness.a"].recheck = c;
  EXPECT_TRUE(credited_by_recheck(runs["correctness.a"]));
  const auto replay = speed_replay(spec.grader("speedup.a"), runs);
  ASSERT_TRUE(replay.has_value());
  EXPECT_EQ(replay->runner, "/w/lab07_runner_O1");
  EXPECT_FALSE(replay->seed.has_value());  // speed takes fresh inputs
  EXPECT_NE(replay->note.find("-Xptxas -O1"), std::string::npos);
  runs["correctness.a"].recheck->policy = "as-is";
  EXPECT_FALSE(credited_by_recheck(runs["correctness.a"]));
  EXPECT_FALSE(speed_replay(spec.grader("speedup.a"), runs).has_value());
}

// ---- through a process: a fake judge that writes records as the real one does ----------------

// The fake judge reads its "kernels" from the runner file: right, wrong (test y fails: a halo off by
// one), or crash. A run without the failing run's seed (CONVLAB_SEED=4242) fails every test.
const char* kFakeJudge = R"(#!/bin/sh
for a in "$@"; do
  case $a in
    --convlab-results=*) dir=${a#*=} ;;
    --convlab-runner=*) runner=${a#*=} ;;
  esac
done
mode=$(cat "${runner:-$(dirname "$0")/lab07_runner}")
echo "convlab: lab07 graders (student), base seed ${CONVLAB_SEED:-1}"
[ "$mode" = crash ] && kill -SEGV $$
status=0
for t in x y; do
  passed=true
  if [ "$mode" = wrong ] && [ $t = y ]; then passed=false; fi
  if [ "${CONVLAB_SEED:-}" != 4242 ]; then passed=false; fi
  [ $passed = true ] || status=1
  printf '{"test": "lab07.correctness.a.%s", "passed": %s, "seed": 9, "base_seed": %s, "message": "%s"}\n' \
    $t $passed "${CONVLAB_SEED:-1}" "$mode" >"$dir/lab07.correctness.a.$t.json"
done
exit $status
)";

struct FakeJudge {
  std::string dir = temp_dir("recheck-judge");
  std::string judge = dir + "/lab07_graders";
  FakeJudge() { write_executable(judge, kFakeJudge); }
  // A runner whose kernels behave as `mode` says.
  std::string runner(const std::string& name, const std::string& mode) const {
    write_file_atomic(dir + "/" + name, mode + "\n");
    return dir + "/" + name;
  }
  RecheckSteps steps(const std::map<std::string, std::string>& modes) const {
    RecheckSteps s;
    s.build = [this, modes](const DeviceOpt& level, std::string*) {
      return runner("runner-" + (level.name.empty() ? std::string("built") : level.name), modes.at(level.name));
    };
    s.run = [this](const Replay& r) {
      JudgeRun j;
      j.judge = judge;
      j.runner = r.runner;
      j.filter = "lab07.correctness.a.*";
      j.tests = {"lab07.correctness.a.x", "lab07.correctness.a.y"};
      j.results = dir + "/results-" + r.tag;
      j.seed = r.seed;
      j.idle_timeout_s = 30;
      return run_judge(j);
    };
    return s;
  }
};

TEST(RecheckProcess, TheFakeJudgesRecordsAreRead) {
  const FakeJudge f;
  JudgeRun j;
  j.judge = f.judge;
  j.runner = f.runner("r", "wrong");
  j.filter = "lab07.correctness.a.*";
  j.tests = {"lab07.correctness.a.x", "lab07.correctness.a.y"};
  j.results = f.dir + "/results";
  j.seed = 4242;
  const GraderRun r = run_judge(j);
  ASSERT_EQ(r.tests.size(), 2u);
  EXPECT_TRUE(r.tests[0].passed);
  EXPECT_FALSE(r.tests[1].passed);
  EXPECT_EQ(r.tests[1].base_seed, 4242u);
  EXPECT_TRUE(r.problem.empty()) << r.problem;  // exit 1 with failures recorded: honest
  j.seed.reset();
  EXPECT_EQ(tests_summary(run_judge(j)), "2 of 2 tests failed");  // without the seed, other inputs
  j.runner = f.runner("r", "crash");
  const GraderRun crashed = run_judge(j);
  EXPECT_FALSE(crashed.tests[0].recorded);
  EXPECT_NE(crashed.problem.find("signal"), std::string::npos) << crashed.problem;
}

TEST(RecheckProcess, TheDownwardLoopIsACompilerBug) {
  const FakeJudge f;
  const GraderRun failed = f.steps({{"", "wrong"}}).run(Replay{"first", f.runner("first", "wrong"), "", 4242, ""});
  ASSERT_EQ(tests_summary(failed), "1 of 2 tests failed");
  const CompilerRecheck c =
      recheck_grader(failed, lowered_levels(), "review", f.steps({{"", "wrong"}, {"O1", "right"}, {"G", "right"}}));
  EXPECT_EQ(c.passed_at, "O1");
  EXPECT_EQ(c.seed, 4242u);
}

TEST(RecheckProcess, AHaloOffByOneStaysTheStudents) {
  const FakeJudge f;
  const GraderRun failed = f.steps({{"", "wrong"}}).run(Replay{"first", f.runner("first", "wrong"), "", 4242, ""});
  const CompilerRecheck c =
      recheck_grader(failed, lowered_levels(), "full", f.steps({{"", "wrong"}, {"O1", "wrong"}, {"G", "wrong"}}));
  EXPECT_FALSE(c.compiler_bug());
  EXPECT_FALSE(c.inconclusive);
  EXPECT_EQ(c.tried, (std::vector<std::string>{"as built, again: 1 of 2 tests failed", "-Xptxas -O1: 1 of 2 tests failed",
                                               "-G: 1 of 2 tests failed"}));
  // A lowered build that crashes is no pass either.
  const CompilerRecheck crash =
      recheck_grader(failed, lowered_levels(), "full", f.steps({{"", "wrong"}, {"O1", "crash"}, {"G", "crash"}}));
  EXPECT_FALSE(crash.compiler_bug());
}

// ---- convlab grade's side: a tree per GPU, a build folder per level, with a fake CMake project -----

// A project whose "runner" is a text file: "wrong" as normally built when the source says
// "miscompiled" and "right" with any CONVLAB_DEVICE_OPT; "wrong" whenever the source says "halo".
const char* kFakeProject = R"(cmake_minimum_required(VERSION 3.25)
project(fake NONE)
set(CONVLAB_DEVICE_OPT "" CACHE STRING "")
set(CONVLAB_BACKEND "cuda" CACHE STRING "")
set(opt "${CONVLAB_DEVICE_OPT}")
if(CONVLAB_BACKEND STREQUAL "cpu")
  set(opt cpu)  # the CPU backend computes the downward loop right
endif()
set(src "${CMAKE_SOURCE_DIR}/starter_code/07-demo/demo.cu")
set(out "${CMAKE_BINARY_DIR}/labs/07-demo/lab07_runner")
add_custom_command(OUTPUT "${out}"
  COMMAND "${CMAKE_COMMAND}" -DSRC=${src} -DOUT=${out} -DOPT=${opt} -P "${CMAKE_SOURCE_DIR}/runner.cmake"
  DEPENDS "${src}")
add_custom_target(lab07_runner DEPENDS "${out}")
# The judge (convlab check runs the one of the student's build, and the CPU build's).
add_custom_target(lab07_graders
  COMMAND "${CMAKE_COMMAND}" -E copy "${CMAKE_SOURCE_DIR}/judge.sh" "${CMAKE_BINARY_DIR}/labs/07-demo/lab07_graders")
add_dependencies(lab07_graders lab07_runner)
)";
const char* kFakePresets = R"({"version": 6, "configurePresets": [
  {"name": "fake", "generator": "Ninja", "binaryDir": "${sourceDir}/build/fake"},
  {"name": "cpu", "generator": "Ninja", "binaryDir": "${sourceDir}/build/cpu", "cacheVariables": {"CONVLAB_BACKEND": "cpu"}}]})";
const char* kFakeRunnerScript = R"(file(READ "${SRC}" text)
set(mode right)
if(text MATCHES "halo" OR (text MATCHES "miscompiled" AND OPT STREQUAL ""))
  set(mode wrong)
endif()
file(WRITE "${OUT}" "${mode}\n")
)";

struct FakeCourse {
  FakeJudge judge;
  std::string root = temp_dir("recheck-course");
  std::string work = temp_dir("recheck-work");
  Lab lab;
  std::vector<std::string> vetted;  // build folders vetted
  std::string refuse;               // what vet says ("" = clean)
  FakeCourse() {
    write_file_atomic(root + "/CMakeLists.txt", kFakeProject);
    write_file_atomic(root + "/runner.cmake", kFakeRunnerScript);
    write_file_atomic(root + "/starter_code/07-demo/demo.cu", "// TODO(student)\n");
    lab.spec = parse_spec(kSpec, "t");
    lab.dir = "labs/07-demo";
    lab.starter = "starter_code/07-demo";
  }
  GradeRechecker rechecker(const std::string& policy = "") {
    GradeRechecker::Settings s;
    s.root = root;
    s.files = {"CMakeLists.txt", "runner.cmake", "starter_code/07-demo/demo.cu"};
    s.work = work + "/recheck";
    s.policy = policy;
    s.vet = [this](const Lab&, const std::string& build, const std::string&, const std::vector<std::string>& sources,
                   const std::string& runner) {
      vetted.push_back(build);
      EXPECT_EQ(sources.size(), 1u);
      EXPECT_TRUE(std::filesystem::exists(runner)) << runner;
      return refuse;
    };
    return GradeRechecker(s);
  }
  // A submission with `text` as its demo.cu, graded as built (the fake judge), then rechecked.
  CompilerRecheck grade(GradeRechecker& r, const std::string& name, const std::string& text) {
    const std::string sub = work + "/subs/" + name;
    write_file_atomic(sub + "/demo.cu", text);
    make_dirs(sub + "/out");
    const std::string built = judge.runner("built-" + name, text.find("miscompiled") != std::string::npos ||
                                                                      text.find("halo") != std::string::npos
                                                                  ? "wrong" : "right");
    const auto run = [&](const Replay& replay) {
      JudgeRun j;
      j.judge = judge.judge;
      j.runner = replay.runner;
      j.filter = "lab07.correctness.a.*";
      j.tests = {"lab07.correctness.a.x", "lab07.correctness.a.y"};
      j.results = sub + "/results-" + replay.tag;
      j.seed = replay.seed;
      j.idle_timeout_s = 30;
      return run_judge(j);
    };
    const GraderRun failed = run(Replay{"first", built, "", 4242, ""});
    return r.recheck("0", lab, lab.spec, {{"demo.cu", sub + "/demo.cu"}}, built, sub + "/out",
                     lab.spec.grader("correctness.a"), failed, run);
  }
};

TEST(RecheckGrade, BuildsTheLoweredLevelInATreeOfItsOwn) {
  FakeCourse course;
  GradeRechecker r = course.rechecker();
  const CompilerRecheck c = course.grade(r, "alice", "// a downward loop, miscompiled\n");
  EXPECT_EQ(c.passed_at, "O1") << ::testing::PrintToString(c.tried);
  EXPECT_EQ(c.policy, "review");  // neither the command line nor the spec says otherwise
  EXPECT_EQ(c.runner, course.work + "/subs/alice/out/lab07_runner_O1");
  EXPECT_EQ(read_file(c.runner), "right\n");
  ASSERT_EQ(course.vetted.size(), 1u);  // the lowered build is checked as the graded one was
  EXPECT_EQ(course.vetted[0], course.work + "/recheck/gpu0/build-O1");
  // The tree holds this submission's file, and the course's own tree is untouched.
  EXPECT_EQ(read_file(course.work + "/recheck/gpu0/src/starter_code/07-demo/demo.cu"), "// a downward loop, miscompiled\n");
  EXPECT_EQ(read_file(course.root + "/starter_code/07-demo/demo.cu"), "// TODO(student)\n");

  // The next submission reuses the tree: a halo bug fails at every level, the student's.
  const CompilerRecheck own = course.grade(r, "bob", "// a halo off by one\n");
  EXPECT_FALSE(own.compiler_bug());
  EXPECT_FALSE(own.inconclusive);
  EXPECT_EQ(own.tried.size(), 3u);
  EXPECT_EQ(read_file(course.work + "/recheck/gpu0/src/starter_code/07-demo/demo.cu"), "// a halo off by one\n");
}

// convlab check's side: the student's build, a lowered build beside it, the CPU build's verdict.
TEST(RecheckCheck, TellsTheStudentAndShowsTheCpuVerdict) {
  FakeCourse course;
  write_file_atomic(course.root + "/CMakePresets.json", kFakePresets);
  write_executable(course.root + "/judge.sh", kFakeJudge);
  write_file_atomic(course.root + "/starter_code/07-demo/demo.cu", "// a downward loop, miscompiled\n");
  Project p;
  p.root = course.root;
  p.labs = {course.lab};
  // The student's build as configured and built (the judge, and the runner as built: wrong).
  const std::string build = course.root + "/build/fake";
  for (const std::string preset : {"fake", "cpu"}) {
    const RunResult r = run_tool({"cmake", "--preset", preset}, course.root, 120);
    ASSERT_TRUE(r.ok()) << r.output;
  }
  ASSERT_TRUE(run_tool({"cmake", "--build", build, "--target", "lab07_graders", "lab07_runner"}, course.root, 120).ok());
  ASSERT_EQ(read_file(build + "/labs/07-demo/lab07_runner"), "wrong\n");
  std::map<std::string, TestOutcome> records;
  for (const auto& t : failing_run().tests) records[t.name] = t;
  testing::internal::CaptureStdout();
  const auto found = recheck_after_check(p, course.lab, build, "fake", records);
  const std::string out = testing::internal::GetCapturedStdout();
  ASSERT_EQ(found.count("correctness.a"), 1u) << out;
  const CompilerRecheck& c = found.at("correctness.a");
  EXPECT_EQ(c.passed_at, "O1") << out;
  EXPECT_EQ(c.cpu, "all 2 tests passed") << out;
  EXPECT_EQ(read_file(build + "-recheck-O1/CMakeCache.txt").find("CONVLAB_DEVICE_OPT:STRING=O1") != std::string::npos, true);
  for (const char* words : {"Looking again at correctness.a", "A COMPILER BUG, IT SEEMS: correctness.a",
                            "Your kernel computes the right result with less compiler optimisation",
                            "The CPU backend, on the same inputs: all 2 tests passed", "When graded (convlab grade)"})
    EXPECT_NE(out.find(words), std::string::npos) << "missing: " << words << "\n" << out;
  // Its records stay out of the folders convlab status reads.
  EXPECT_FALSE(std::filesystem::exists(build + "/results/check"));
  EXPECT_TRUE(std::filesystem::exists(build + "/results/recheck-O1"));

  // A halo off by one: the same lowered build, and the student is told it is theirs.
  write_file_atomic(course.root + "/starter_code/07-demo/demo.cu", "// a halo off by one\n");
  testing::internal::CaptureStdout();
  const auto own = recheck_after_check(p, course.lab, build, "fake", records);
  const std::string out2 = testing::internal::GetCapturedStdout();
  EXPECT_FALSE(own.at("correctness.a").compiler_bug()) << out2;
  EXPECT_NE(out2.find("the fault is in the kernel, not the compiler"), std::string::npos) << out2;
  EXPECT_EQ(out2.find("COMPILER BUG"), std::string::npos) << out2;

  // On the CPU backend there is no device optimisation to lower: nothing is rebuilt.
  testing::internal::CaptureStdout();
  EXPECT_TRUE(recheck_after_check(p, course.lab, course.root + "/build/cpu", "cpu", records).empty());
  testing::internal::GetCapturedStdout();
}

TEST(RecheckGrade, OnlyGpuBuildsAreLookedAtAgain) {
  FakeCourse course;
  GradeRechecker r = course.rechecker();
  const GraderSpec& g = course.lab.spec.grader("correctness.a");
  for (const std::string backend : {"cuda", "cpu"}) {
    const std::string slot = course.work + "/slots/" + backend;
    write_file_atomic(slot + "/build/CMakeCache.txt", "CONVLAB_BACKEND:STRING=" + backend + "\n");
    EXPECT_EQ(r.wanted(g, failing_run(), slot + "/src"), backend == "cuda") << backend;
    EXPECT_FALSE(r.wanted(g, passing_run(), slot + "/src"));
  }
  // The student's preset decides at configure time ('auto'): what it chose counts.
  const std::string slot = course.work + "/slots/auto";
  write_file_atomic(slot + "/build/CMakeCache.txt", "CONVLAB_BACKEND:STRING=auto\nCONVLAB_BACKEND_USED:INTERNAL=cpu\n");
  EXPECT_FALSE(r.wanted(g, failing_run(), slot + "/src"));
}

TEST(RecheckGrade, ARefusedBuildIsNoPass) {
  FakeCourse course;
  course.refuse = "uses a forbidden symbol: cublasCreate";  // e.g. only when built with -G
  GradeRechecker r = course.rechecker("full");
  const CompilerRecheck c = course.grade(r, "mallory", "// miscompiled\n");
  EXPECT_FALSE(c.compiler_bug());
  EXPECT_TRUE(c.inconclusive);
  EXPECT_NE(c.tried[1].find("this build was refused: uses a forbidden symbol"), std::string::npos) << c.tried[1];
}

TEST(RecheckGrade, ATreeThatDoesNotConfigureIsTriedOnce) {
  FakeCourse course;
  write_file_atomic(course.root + "/CMakeLists.txt", "this is not CMake(\n");
  GradeRechecker r = course.rechecker();
  const CompilerRecheck c = course.grade(r, "carol", "// miscompiled\n");
  EXPECT_TRUE(c.inconclusive);
  EXPECT_NE(c.tried[1].find("cannot configure"), std::string::npos) << c.tried[1];
  const double t0 = now_s();
  const CompilerRecheck again = course.grade(r, "dave", "// miscompiled\n");
  EXPECT_TRUE(again.inconclusive);
  EXPECT_EQ(again.tried[1], c.tried[1]);  // remembered, not configured again
  EXPECT_LT(now_s() - t0, 5.0);
}

}  // namespace
}  // namespace convlab::cli
