// A lab's graders in one process (batch.hpp, issue 29 item 4): a process that ends well decides
// every grader; a fault in one grader's test costs that grader only, and the graders not yet run
// go on in a fresh process; a fault no test can be blamed for sends each grader to a process of
// its own, as before batches; the harness's leftovers are run again; the seconds are shared out.
#include "grading/batch.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace convlab::cli {
namespace {

// correctness.a (3 tests), technique.a (1), correctness.b (2), in spec order.
const std::vector<BatchGrader> kGraders = {
    {"correctness.a", "correctness", {"lab07.correctness.a.x", "lab07.correctness.a.y", "lab07.correctness.a.z"}},
    {"technique.a", "technique", {"lab07.technique.a.x"}},
    {"correctness.b", "correctness", {"lab07.correctness.b.x", "lab07.correctness.b.y"}},
};

TestOutcome record(const std::string& name, bool passed) {
  TestOutcome t;
  t.name = name;
  t.recorded = true;
  t.passed = passed;
  if (!passed) t.message = "254 of 255 outputs are wrong.";
  return t;
}

// A process that recorded `passed` and `failed` and ended as `r` says.
GradersProcess process(RunResult r, const std::vector<std::string>& passed, const std::vector<std::string>& failed = {}) {
  GradersProcess p;
  p.result = std::move(r);
  for (const auto& n : passed) p.records[n] = record(n, true);
  for (const auto& n : failed) p.records[n] = record(n, false);
  return p;
}

RunResult exited(int code, const std::string& running = "") {
  RunResult r;
  r.exit_code = code;
  if (!running.empty()) r.last_progress = "[ RUN      ] " + running;
  r.wall_s = 6;
  return r;
}

RunResult crashed(const std::string& running) {
  RunResult r = exited(-1, running);
  r.signal = 11;
  return r;
}

std::vector<std::string> all_tests() {
  std::vector<std::string> v;
  for (const auto& g : kGraders) v.insert(v.end(), g.tests.begin(), g.tests.end());
  return v;
}

TEST(Batch, AProcessThatEndsWellDecidesEveryGraderFromItsRecords) {
  std::vector<std::string> passed = all_tests();
  passed.erase(std::find(passed.begin(), passed.end(), "lab07.correctness.a.y"));
  // Status 1: correctness.a failed a test; the other graders are not charged for it.
  const BatchDecision d = judge_batch(kGraders, process(exited(1, "lab07.correctness.b.y"), passed, {"lab07.correctness.a.y"}));
  ASSERT_EQ(d.done.size(), 3u);
  EXPECT_TRUE(d.again.empty() && d.alone.empty() && d.why.empty());
  for (const auto& [id, run] : d.done) EXPECT_EQ(run.problem, "") << id;
  EXPECT_FALSE(d.done.at("correctness.a").tests[1].passed);
  EXPECT_EQ(d.done.at("correctness.a").tests[1].message, "254 of 255 outputs are wrong.");
  EXPECT_TRUE(d.done.at("technique.a").tests[0].passed);
  // Status 0 with every test passed: the same.
  EXPECT_EQ(judge_batch(kGraders, process(exited(0), all_tests())).done.size(), 3u);
}

TEST(Batch, ACrashInOneGradersTestCostsThatGraderOnly) {
  // correctness.a's x ran, y crashed the process: a is charged as a process of its own would be.
  const BatchDecision d = judge_batch(kGraders, process(crashed("lab07.correctness.a.y"), {"lab07.correctness.a.x"}));
  ASSERT_EQ(d.done.size(), 1u);
  const GraderRun& a = d.done.at("correctness.a");
  EXPECT_TRUE(a.tests[0].passed);
  EXPECT_EQ(a.tests[1].message, "this test crashed: killed by signal 11 (Segmentation fault)");
  EXPECT_EQ(a.tests[2].message, "not run: an earlier test of this grader crashed: killed by signal 11 (Segmentation fault)");
  EXPECT_EQ(a.problem, "crashed: killed by signal 11 (Segmentation fault)");
  // The graders not yet run go on in a fresh process, whole.
  EXPECT_EQ(d.again, (std::vector<std::string>{"technique.a", "correctness.b"}));
  EXPECT_TRUE(d.alone.empty());
  EXPECT_NE(d.why.find("charged to correctness.a alone"), std::string::npos) << d.why;
}

TEST(Batch, GradersWhoseTestsAllRanKeepTheirRecordsWhenALaterTestFails) {
  // correctness.a and technique.a done; correctness.b's y hangs: killed at its time limit.
  std::vector<std::string> passed = all_tests();
  passed.pop_back();
  RunResult r = exited(-1, "lab07.correctness.b.y");
  r.idle_timed_out = true;
  const BatchDecision d = judge_batch(kGraders, process(r, passed, {}));
  ASSERT_EQ(d.done.size(), 3u);
  EXPECT_EQ(d.done.at("correctness.a").problem, "");
  EXPECT_EQ(d.done.at("technique.a").problem, "");
  EXPECT_EQ(d.done.at("correctness.b").tests[1].message, "this test killed: one test ran past its time limit");
  EXPECT_EQ(d.done.at("correctness.b").problem, "killed: one test ran past its time limit");
  EXPECT_TRUE(d.again.empty() && d.alone.empty());
}

TEST(Batch, AFaultNoTestCanBeBlamedForSendsEachGraderToAProcessOfItsOwn) {
  const std::vector<std::string> every = {"correctness.a", "technique.a", "correctness.b"};
  // Processes of the submission's left behind: which grader's test started them?
  RunResult left = exited(0);
  left.leftover = 1;
  EXPECT_EQ(judge_batch(kGraders, process(left, all_tests())).alone, every);
  // Status 1 although every test passed.
  BatchDecision d = judge_batch(kGraders, process(exited(1), all_tests()));
  EXPECT_EQ(d.alone, every);
  EXPECT_TRUE(d.done.empty());
  EXPECT_NE(d.why.find("although every test passed"), std::string::npos) << d.why;
  // Killed before any test ran, or after a test that has its record.
  EXPECT_EQ(judge_batch(kGraders, process(crashed(""), {})).alone, every);
  EXPECT_EQ(judge_batch(kGraders, process(crashed("lab07.correctness.a.x"), {"lab07.correctness.a.x"})).alone, every);
  // The whole process's time limit (each test kept within its own): not the running test's fault.
  RunResult late = exited(-1, "lab07.correctness.b.x");
  late.timed_out = true;
  EXPECT_EQ(judge_batch(kGraders, process(late, {"lab07.correctness.a.x"})).alone, every);
  // A crash in a test, with processes of the submission's left too.
  RunResult both = crashed("lab07.technique.a.x");
  both.leftover = 2;
  both.leftover_harness = 1;
  EXPECT_EQ(judge_batch(kGraders, process(both, {"lab07.correctness.a.x"})).alone, every);
  // A normal exit with tests unrecorded, none of them running.
  EXPECT_EQ(judge_batch(kGraders, process(exited(0), {"lab07.correctness.a.x"})).alone, every);
}

TEST(Batch, ABatchOfOneIsAProcessOfItsOwn) {
  const std::vector<BatchGrader> one = {kGraders[0]};
  const BatchDecision d = judge_batch(one, process(exited(1), one[0].tests));
  ASSERT_EQ(d.done.size(), 1u);
  EXPECT_EQ(d.done.at("correctness.a").problem, "exited with status 1 although every test passed");
  const GraderRun r = grader_run(exited(0), one[0].tests, {{"lab07.correctness.a.x", record("lab07.correctness.a.x", true)}});
  EXPECT_EQ(r.tests[1].message, "not run: the graders process ended without recording it");
  EXPECT_EQ(r.problem, "");  // failures recorded honestly
}

// The driver with fake processes: what each round ran, and which graders ran alone.
struct Fake {
  std::vector<std::function<GradersProcess(const std::vector<BatchGrader>&)>> rounds;
  std::vector<std::vector<std::string>> ran;  // per round: the graders it ran
  std::vector<std::string> alone, log;
  BatchSteps steps() {
    BatchSteps s;
    s.run = [this](const std::vector<BatchGrader>& graders, int round) {
      std::vector<std::string> ids;
      for (const auto& g : graders) ids.push_back(g.id);
      ran.push_back(ids);
      GradersProcess p = rounds.at(static_cast<std::size_t>(round - 1))(graders);
      p.results = "results/batch" + std::to_string(round);
      return p;
    };
    s.alone = [this](const BatchGrader& g) {
      alone.push_back(g.id);
      GraderRun r;
      for (const auto& t : g.tests) r.tests.push_back(record(t, true));
      r.seconds = 1;
      return r;
    };
    s.log = [this](const std::string& line) { log.push_back(line); };
    return s;
  }
};

std::vector<std::string> tests_of(const std::vector<BatchGrader>& graders) {
  std::vector<std::string> v;
  for (const auto& g : graders) v.insert(v.end(), g.tests.begin(), g.tests.end());
  return v;
}

TEST(Batch, TheGradersAfterACrashAreRunAndRecordedInAFreshProcess) {
  Fake f;
  f.rounds.push_back([](const auto&) { return process(crashed("lab07.correctness.a.y"), {"lab07.correctness.a.x"}); });
  f.rounds.push_back([](const auto& graders) { return process(exited(0), tests_of(graders)); });
  const auto runs = run_batch(kGraders, f.steps());
  EXPECT_EQ(f.ran, (std::vector<std::vector<std::string>>{{"correctness.a", "technique.a", "correctness.b"},
                                                          {"technique.a", "correctness.b"}}));
  EXPECT_TRUE(f.alone.empty());
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_NE(runs.at("correctness.a").run.problem, "");
  EXPECT_EQ(runs.at("correctness.a").results, "results/batch1");
  for (const char* id : {"technique.a", "correctness.b"}) {
    EXPECT_EQ(runs.at(id).run.problem, "") << id;
    EXPECT_EQ(runs.at(id).results, "results/batch2") << id;
    for (const auto& t : runs.at(id).run.tests) EXPECT_TRUE(t.recorded && t.passed) << t.name;
  }
  ASSERT_EQ(f.log.size(), 1u);
  // Seconds: 6 s per process, shared by test counts (no durations): a 6 * 3/6 of the first;
  // technique.a 6 * 1/6 of the first and 6 * 1/3 of the second.
  EXPECT_DOUBLE_EQ(runs.at("correctness.a").run.seconds, 3);
  EXPECT_DOUBLE_EQ(runs.at("technique.a").run.seconds, 1 + 2);
}

TEST(Batch, TheLastGraderLeftRunsAlone) {
  Fake f;  // technique.a's test crashes after correctness.a ran: correctness.b is left alone
  f.rounds.push_back([](const auto&) {
    return process(crashed("lab07.technique.a.x"),
                   {"lab07.correctness.a.x", "lab07.correctness.a.y", "lab07.correctness.a.z"});
  });
  const auto runs = run_batch(kGraders, f.steps());
  EXPECT_EQ(f.ran.size(), 1u);
  EXPECT_EQ(f.alone, std::vector<std::string>{"correctness.b"});
  EXPECT_EQ(runs.at("correctness.a").run.problem, "");
  EXPECT_EQ(runs.at("technique.a").run.tests[0].message, "this test crashed: killed by signal 11 (Segmentation fault)");
  EXPECT_EQ(runs.at("correctness.b").results, "");
}

TEST(Batch, TheHarnesssLeftoversRunTheBatchAgainThenEachGraderAlone) {
  RunResult harness = exited(0);
  harness.leftover = harness.leftover_harness = 1;
  Fake once;  // once: run again, and that decides
  once.rounds.push_back([&](const auto&) { return process(harness, all_tests()); });
  once.rounds.push_back([](const auto& graders) { return process(exited(0), tests_of(graders)); });
  auto runs = run_batch(kGraders, once.steps());
  EXPECT_EQ(once.ran.size(), 2u);
  EXPECT_TRUE(once.alone.empty());
  EXPECT_EQ(runs.at("correctness.b").results, "results/batch2");
  Fake twice;  // twice: each alone (where a process of its own runs again and is flagged)
  twice.rounds.assign(2, [&](const std::vector<BatchGrader>&) { return process(harness, all_tests()); });
  runs = run_batch(kGraders, twice.steps());
  EXPECT_EQ(twice.ran.size(), 2u);
  EXPECT_EQ(twice.alone, (std::vector<std::string>{"correctness.a", "technique.a", "correctness.b"}));
}

TEST(Batch, SecondsAreSharedByTheTestsDurations) {
  GradersProcess p = process(exited(0), all_tests());
  p.result.wall_s = 10;
  p.test_seconds = {{"lab07.correctness.a.x", 2}, {"lab07.correctness.a.y", 2}, {"lab07.technique.a.x", 4}};
  auto s = split_seconds(kGraders, p);
  EXPECT_DOUBLE_EQ(s.at("correctness.a"), 5);
  EXPECT_DOUBLE_EQ(s.at("technique.a"), 5);
  EXPECT_DOUBLE_EQ(s.at("correctness.b"), 0);
  // A record's own duration comes first: technique.a's test took 1 s, not the 4 s till the next test.
  p.records["lab07.technique.a.x"].seconds = 1;
  s = split_seconds(kGraders, p);
  EXPECT_DOUBLE_EQ(s.at("correctness.a"), 8);
  EXPECT_DOUBLE_EQ(s.at("technique.a"), 2);
  // The phases: a batch's wall time by kind, in proportion to its graders' seconds.
  std::map<std::string, BatchRun> runs;
  runs["correctness.a"].run.seconds = 3;
  runs["technique.a"].run.seconds = 1;
  runs["correctness.b"].run.seconds = 0;
  std::map<std::string, double> phase = {{"list", 0.5}};
  add_phase_seconds(phase, kGraders, runs, 8);
  EXPECT_DOUBLE_EQ(phase.at("correctness"), 6);
  EXPECT_DOUBLE_EQ(phase.at("technique"), 2);
  EXPECT_DOUBLE_EQ(phase.at("list"), 0.5);
}

}  // namespace
}  // namespace convlab::cli
