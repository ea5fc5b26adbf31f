// The judge against a misbehaving runner (fake_runner.cpp): whatever the runner does — crash,
// hang, garbage, a reply too long, an early exit, a flood of output — the call fails with a
// RunnerError that says what happened, within the time limit, and the judge goes on.
#include "convlab/record.hpp"
#include "convlab/remote.hpp"
#include "convlab/technique.hpp"
#include "convlab/runner_words.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

void convlab_remote_entries(convlab::remote::Entries&) {}  // the fake runner's entries are not the judge's

namespace {

using namespace convlab;

void use_fake(double timeout_s = 5, const std::string& prefix = "") {
  remote::RunnerOptions o;
  o.path = FAKE_RUNNER;
  if (!prefix.empty()) o.prefix = {prefix};
  o.timeout_s = timeout_s;
  o.window_bytes = 1 << 20;
  remote::configure(o);
  remote::begin_test(0, 1);
}

std::string failure_of(const std::string& entry) {
  try {
    remote::call_raw(entry, "");
  } catch (const remote::RunnerError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Remote, AProperRunnerAnswers) {
  use_fake();
  EXPECT_EQ(remote::device_status().summary, "a fake runner");
  EXPECT_NO_THROW(remote::call_raw("ok", ""));
  ASSERT_EQ(remote::calls().size(), 1u);
  EXPECT_EQ(remote::calls()[0].evidence.launches.at(0).name, "fake_kernel");
}

TEST(Remote, ACrashIsNamed) {
  use_fake();
  const std::string why = failure_of("crash");
  EXPECT_NE(why.find("was ended by signal 11 (SIGSEGV"), std::string::npos) << why;
  // The words convlab grade reads back (no compiler-bug recheck of a crashed runner).
  EXPECT_NE(why.find(runner_words::kEndedBySignal), std::string::npos) << why;
}

// The grading sandbox (bubblewrap) runs the runner as its child and exits with 128 + N when the
// runner dies of signal N: the judge names the signal, not "exited with status 139".
TEST(Remote, ACrashUnderASandboxIsNamed) {
  const std::string prefix =
      (std::filesystem::temp_directory_path() / ("convlab-test-prefix-" + std::to_string(::getpid()) + ".sh")).string();
  {
    std::ofstream f(prefix);
    f << "#!/bin/sh\n# like bwrap: the runner is a child, its death by signal N becomes exit 128 + N\n\"$@\"\nexit $?\n";
  }
  std::filesystem::permissions(prefix, std::filesystem::perms::owner_all);
  use_fake(5, prefix);
  const std::string why = failure_of("crash");
  use_fake(5, prefix);
  const std::string exit0 = failure_of("exit0");  // an ordinary exit status is still one
  std::remove(prefix.c_str());
  EXPECT_NE(why.find("was ended by signal 11 (SIGSEGV"), std::string::npos) << why;
  EXPECT_NE(why.find("exit status 139 from convlab-test-prefix-"), std::string::npos) << why;
  EXPECT_NE(exit0.find("exited with status 0 while running exit0"), std::string::npos) << exit0;
}

TEST(Remote, AHangIsStoppedAtTheTimeLimit) {
  use_fake(1.5);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string why = failure_of("hang");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(why.find("did not answer within 2 s"), std::string::npos) << why;
  EXPECT_NE(why.find("while running hang"), std::string::npos) << why;
  EXPECT_LT(s, 10.0);
}

TEST(Remote, GarbageIsRefused) {
  use_fake();
  EXPECT_NE(failure_of("garbage").find("sent a malformed reply"), std::string::npos);
  use_fake();
  EXPECT_NE(failure_of("huge").find("sent a malformed reply"), std::string::npos);
}

TEST(Remote, AnEarlyExitIsNamed) {
  use_fake();
  EXPECT_NE(failure_of("exit0").find("exited with status 0 while running exit0"), std::string::npos)
      << failure_of("exit0");
}

TEST(Remote, AShortReplyIsNamed) {
  use_fake();
  const std::string why = failure_of("short");
  EXPECT_NE(why.find("exited with status 0"), std::string::npos) << why;
}

TEST(Remote, OutputOfTheRunnerIsNotAReply) {
  use_fake();
  EXPECT_NO_THROW(remote::call_raw("noise", ""));
}

TEST(Remote, PrintedTextIsKeptApartCutAndNeverAVerdict) {
  use_fake();
  (void)remote::take_printed();
  // The call succeeds as the runner answered it: what it printed decides nothing.
  EXPECT_NO_THROW(remote::call_raw("fake_verdict", ""));
  const std::string printed = remote::take_printed();
  EXPECT_NE(printed.find("[  PASSED  ] 13 tests.\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("[  SKIPPED ] 1 test\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("?[2J?\n"), std::string::npos) << printed;  // a terminal code and a byte that is not text
  std::size_t lines = 0;
  for (char c : printed) lines += c == '\n';
  EXPECT_EQ(lines, remote::kPrintedLines + 1) << printed;  // the first lines, and what was cut
  EXPECT_NE(printed.find("[convlab: cut here; 64 more lines"), std::string::npos) << printed;
  EXPECT_EQ(remote::take_printed(), "");  // taken once
}

TEST(Remote, AFloodOfPrintingIsStoppedAtTheOutputLimit) {
  use_fake(60);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string why = failure_of("flood");
  EXPECT_NE(why.find("stopped at the output limit"), std::string::npos) << why;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));  // not at the time limit
  EXPECT_NE(remote::take_printed().find("debug: printing forever"), std::string::npos);
  remote::begin_test(0, 2);
  EXPECT_NO_THROW(remote::call_raw("ok", ""));
}

TEST(Remote, AfterACrashTheTestStopsAndTheNextTestGetsAFreshRunner) {
  use_fake();
  (void)failure_of("crash");
  // The rest of this test cannot go on: its addresses belonged to the runner that crashed.
  EXPECT_NE(failure_of("ok").find("earlier in this test"), std::string::npos);
  remote::begin_test(0, 2);  // the next test
  EXPECT_NO_THROW(remote::call_raw("ok", ""));
}

TEST(Remote, AMissingRunnerIsReported) {
  remote::RunnerOptions o;
  o.path = "/nonexistent/lab01_runner";
  remote::configure(o);
  remote::begin_test(0, 1);
  try {
    remote::device_status();
    FAIL() << "no error";
  } catch (const remote::RunnerError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be run"), std::string::npos) << e.what();
  }
}

// The GPU's profiler serves one process at a time (CUPTI_ERROR_HARDWARE_BUSY to another, seen on an
// H100): a speed test that counts its timed call on the plain runner after a technique test
// started the counting runner (`convlab check` runs both in one process) finds it free, because
// the counting runner quits first; a later technique test starts it again.
TEST(Remote, ThePlainRunnerCountsOnceTheCountingRunnerHasQuit) {
  const std::string lock = ::testing::TempDir() + "fake-profiler-" + std::to_string(::getpid());
  ::setenv("FAKE_RUNNER_PROFILER", lock.c_str(), 1);
  use_fake();
  EXPECT_EQ(remote::device_status().backend, "cuda");
  EXPECT_EQ(remote::set_counting(true), "");  // a technique test: the counting runner holds the profiler
  EXPECT_EQ(remote::set_counting(false), "");
  remote::begin_test(0, 2);
  EXPECT_NO_THROW(remote::call_raw("ok", ""));  // a speed test's timed runs, on the plain runner
  EXPECT_EQ(remote::set_counting(true, remote::Counted::on_this_runner), "");  // its call, counted there
  EXPECT_EQ(remote::set_counting(false), "");
  const std::uint64_t timed_on = remote::plain_runner_generation();
  remote::begin_test(0, 3);  // the plain runner that counted is never timed again: it becomes the counting runner
  EXPECT_EQ(remote::plain_runner_generation(), 0u);
  EXPECT_EQ(remote::set_counting(true), "");  // another technique test: the counting runner again
  EXPECT_EQ(remote::set_counting(false), "");
  EXPECT_NO_THROW(remote::call_raw("ok", ""));  // plain work: a fresh plain runner
  EXPECT_NE(remote::plain_runner_generation(), 0u);
  EXPECT_NE(remote::plain_runner_generation(), timed_on);
  ::unsetenv("FAKE_RUNNER_PROFILER");
  use_fake();  // the runners end; the next test's start without the profiler
  std::filesystem::remove(lock);
}

// The plain runner that counted a speed test's call keeps its profiler, set up and warm, as the
// counting runner of the tests that follow (issue 27, item 7: a counting runner started afresh took
// 0.5 to 0.85 s on an H200 before its first count): the count after it is made by the same process,
// which still holds the fake profiler; had the judge started another counting runner while that
// one ran, the other would have found the profiler busy. Its set-up may start while the plain
// runner still times (prepare_counting), which takes nothing from a counting runner.
TEST(Remote, ThePlainRunnerThatCountedCountsTheTechniqueTestsAfterIt) {
  const std::string lock = ::testing::TempDir() + "fake-profiler-handover-" + std::to_string(::getpid());
  ::setenv("FAKE_RUNNER_PROFILER", lock.c_str(), 1);
  use_fake();
  remote::begin_test(0, 1);
  EXPECT_NO_THROW(remote::call_raw("ok", ""));  // a speed test's timed runs, on the plain runner
  EXPECT_NO_THROW(remote::prepare_counting());  // its count waits: the profiler's set-up meanwhile
  EXPECT_NO_THROW(remote::call_raw("ok", ""));  // the next speed test's timed runs
  EXPECT_EQ(remote::set_counting(true, remote::Counted::on_this_runner), "");
  remote::clear_calls();
  remote::call_raw("loads_7", "");
  ASSERT_EQ(remote::calls().size(), 1u);
  ASSERT_EQ(remote::calls()[0].evidence.launches.size(), 1u);
  EXPECT_TRUE(remote::calls()[0].evidence.launches[0].counted);
  const std::uint64_t counted_by = remote::calls()[0].evidence.launches[0].threads;  // the fake's process
  EXPECT_EQ(remote::set_counting(false), "");
  remote::begin_test(0, 2);  // a technique test
  EXPECT_EQ(remote::plain_runner_generation(), 0u);
  EXPECT_EQ(remote::set_counting(true), "");  // the runner that counted: it holds the profiler
  remote::clear_calls();
  remote::call_raw("loads_9", "");
  ASSERT_EQ(remote::calls().size(), 1u);
  ASSERT_EQ(remote::calls()[0].evidence.launches.size(), 1u);
  EXPECT_TRUE(remote::calls()[0].evidence.launches[0].counted);
  EXPECT_EQ(remote::calls()[0].evidence.launches[0].global_loads, 9u);
  EXPECT_EQ(remote::calls()[0].evidence.launches[0].threads, counted_by);  // the same process
  EXPECT_EQ(remote::set_counting(false), "");
  ::unsetenv("FAKE_RUNNER_PROFILER");
  use_fake();
  std::filesystem::remove(lock);
}

// A speed test's count waits for the process's last speed test (technique.hpp, issue 29): the
// profiler's start in the runner that timed is paid once, after every timed run. The waiting
// test's record is held back; the last one counts its own call, then the waiting call on a problem
// made again at its end, on the same runner, and the waiting test gets its verdict there.
struct FakeProfiler {
  std::string lock = ::testing::TempDir() + "fake-profiler-deferred-" + std::to_string(::getpid());
  FakeProfiler() {
    ::setenv("FAKE_RUNNER_PROFILER", lock.c_str(), 1);
    use_fake();
  }
  ~FakeProfiler() {
    ::unsetenv("FAKE_RUNNER_PROFILER");
    set_speed_tests_after(0);
    (void)take_deferred_verdicts();
    use_fake();
    std::filesystem::remove(lock);
  }
};

void speed_test(const std::string& name, int after) {
  reset_current_record();
  current_record().test = name;
  set_speed_tests_after(after);
  remote::begin_test(0, 1);
  remote::call_raw("ok", "");  // its timed runs, on the plain runner
}

TEST(DeferredCounts, AWaitingCountIsMadeByTheLastSpeedTestOnTheRunnerThatTimed) {
  FakeProfiler fake;
  int made = 0;
  // A launcher that loads 9 words per output where the baseline loads 1: off its technique.
  const ProblemAgain again = [&made](const ProblemUse& use) {
    ++made;
    use([] { remote::call_raw("loads_900", ""); }, [] { remote::call_raw("loads_100", ""); });
  };
  const auto student = [] { remote::call_raw("loads_10", ""); };
  const auto baseline = [] { remote::call_raw("loads_100", ""); };
  speed_test("lab.speedup.b.first", 1);
  expect_traffic_vs_baseline("b", "the first problem", 0.5, false, 100, student, baseline, again);
  EXPECT_TRUE(current_record().count_deferred);
  EXPECT_EQ(deferred_calls_waiting(), 1u);
  EXPECT_EQ(made, 0);
  speed_test("lab.speedup.a.last", 0);
  expect_traffic_vs_baseline("a", "the last problem", 0.5, false, 100, student, baseline, again);
  EXPECT_FALSE(current_record().count_deferred);
  EXPECT_EQ(current_record().off_technique, "");  // its own call: 0.1 of the baseline's loads
  EXPECT_EQ(made, 0);
  count_deferred_calls();  // the last speed test's end (the graders' test wrapper)
  EXPECT_EQ(made, 1);
  EXPECT_EQ(deferred_calls_waiting(), 0u);
  const auto verdicts = take_deferred_verdicts();
  ASSERT_EQ(verdicts.count("lab.speedup.b.first"), 1u);
  const DeferredVerdict& v = verdicts.at("lab.speedup.b.first");
  EXPECT_NE(v.failure.find("b: on the timed problem the first problem"), std::string::npos) << v.failure;
  // Its call's kernels are its own: in its verdict, and in the process's ledger under its slot.
  EXPECT_EQ(v.kernels, std::vector<std::string>{"counted_kernel"});
  ASSERT_TRUE(remote::kernels_launched().count("b"));
  EXPECT_EQ(remote::kernels_launched().at("b").at("counted_kernel"), "lab.speedup.b.first");
  EXPECT_EQ(current_record().test, "lab.speedup.a.last");
  EXPECT_NE(v.off_technique.find("loaded 9 values per output from global memory"), std::string::npos) << v.off_technique;
  EXPECT_NE(v.off_technique.find("the naive baseline loads 1"), std::string::npos) << v.off_technique;
  EXPECT_EQ(v.counters_refused, "");
}

// The baseline's loads per output are counted on the yardstick's smaller problem where one is
// given (its full-size call is not made); the student's on the timed problem.
TEST(DeferredCounts, TheBaselineIsCountedOnTheYardsticksProblem) {
  FakeProfiler fake;
  int full_baseline = 0, small_baseline = 0;
  const ProblemAgain again = [&full_baseline](const ProblemUse& use) {
    use([] { remote::call_raw("loads_900", ""); }, [&full_baseline] { ++full_baseline; remote::call_raw("loads_100", ""); });
  };
  const Yardstick yardstick = [&small_baseline](const BaselineUse& use) {
    ++small_baseline;
    use([] { remote::call_raw("loads_40", ""); }, 20);  // 2 words per output on 20 outputs
  };
  speed_test("lab.speedup.b.first", 1);
  expect_traffic_vs_baseline("b", "the first problem", 0.5, false, 100, [] {}, [&full_baseline] { ++full_baseline; },
                             again, yardstick);
  speed_test("lab.speedup.a.last", 0);
  count_deferred_calls();
  EXPECT_EQ(full_baseline, 0);
  EXPECT_EQ(small_baseline, 1);
  const auto verdicts = take_deferred_verdicts();
  ASSERT_EQ(verdicts.count("lab.speedup.b.first"), 1u);
  const DeferredVerdict& v = verdicts.at("lab.speedup.b.first");
  EXPECT_NE(v.off_technique.find("loaded 9 values per output from global memory"), std::string::npos) << v.off_technique;
  EXPECT_NE(v.off_technique.find("the naive baseline loads 2"), std::string::npos) << v.off_technique;
}

// A yardstick that makes no call leaves the loads uncompared (a note), never a verdict on nothing.
TEST(DeferredCounts, AYardstickThatCountsNothingComparesNothing) {
  FakeProfiler fake;
  speed_test("lab.speedup.a.only", 0);
  expect_traffic_vs_baseline("a", "p", 0.5, false, 100, [] { remote::call_raw("loads_900", ""); },
                             [] { remote::call_raw("loads_100", ""); }, {}, [](const BaselineUse&) {});
  EXPECT_EQ(current_record().off_technique, "");
}

TEST(DeferredCounts, ACountWhoseRunnerWasReplacedIsNeverMade) {
  FakeProfiler fake;
  int made = 0;
  const ProblemAgain again = [&made](const ProblemUse& use) {
    ++made;
    use([] { remote::call_raw("loads_100", ""); }, [] { remote::call_raw("loads_100", ""); });
  };
  speed_test("lab.speedup.a.first", 1);
  expect_traffic_vs_baseline("a", "p", 0.5, false, 100, [] {}, [] {}, again);
  EXPECT_EQ(deferred_calls_waiting(), 1u);
  // The next speed test crashes its runner: the runner that timed the first is gone.
  speed_test("lab.speedup.a.last", 0);
  EXPECT_THROW(remote::call_raw("crash", ""), remote::RunnerError);
  remote::begin_test(0, 2);
  remote::call_raw("ok", "");
  count_deferred_calls();  // the last speed test's end
  EXPECT_EQ(made, 0);
  EXPECT_EQ(deferred_calls_waiting(), 0u);
  EXPECT_TRUE(take_deferred_verdicts().empty());  // no verdict: its record is never written
}

TEST(DeferredCounts, WithoutALaterSpeedTestTheCountIsMadeAtOnce) {
  FakeProfiler fake;
  int made = 0;
  const ProblemAgain again = [&made](const ProblemUse&) { ++made; };
  speed_test("lab.speedup.a.only", 0);
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter catcher(::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD,
                                                        &failures);
    expect_traffic_vs_baseline("a", "p", 0.5, false, 100, [] { remote::call_raw("loads_900", ""); },
                               [] { remote::call_raw("loads_100", ""); }, again);
  }
  ASSERT_EQ(failures.size(), 1);  // the test itself fails, at once
  EXPECT_NE(std::string(failures.GetTestPartResult(0).message()).find("a: on the timed problem p"), std::string::npos);
  EXPECT_FALSE(current_record().count_deferred);
  EXPECT_NE(current_record().off_technique.find("loaded 9 values per output"), std::string::npos);
  EXPECT_EQ(made, 0);
  EXPECT_EQ(deferred_calls_waiting(), 0u);
}

}  // namespace
