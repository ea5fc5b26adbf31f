// The students' side of the command: which build it follows, what the backend can reach, the
// order of failures, the status table, the single next step, progress lines.
#include "student/lab_status.hpp"
#include "common/progress.hpp"
#include "common/project.hpp"
#include "grading/reports.hpp"
#include "grading/scoring.hpp"
#include "student/student.hpp"
#include "common/util.hpp"

#include <convlab/spec.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

namespace convlab::cli {
namespace {

namespace fs = std::filesystem;

const char* kSpec = R"({
  "lab": "lab07", "slug": "07-demo", "title": "Demo of a lab with a long title, so that the table must not cut it",
  "submission": {"files": ["demo.cu"]},
  "forbidden_symbols": [],
  "time_limits_s": {"compile": 60, "test": 30},
  "graders": [
    {"id": "correctness.a", "kind": "correctness", "points": 30},
    {"id": "speedup.a", "kind": "speedup", "points": 20, "threshold": 2.0, "partial_from": 1.0, "gated_by": "correctness.a"},
    {"id": "correctness.bonus", "kind": "correctness", "points": 5, "extra_credit": true}
  ]})";

Lab demo_lab(const std::string& id = "lab07") {
  Lab lab;
  std::string text = kSpec;
  text.replace(text.find("lab07"), 5, id);
  text.replace(text.find("07-demo"), 2, id.substr(3));
  lab.spec = parse_spec(text, "test");
  lab.dir = "labs/07-demo";
  lab.starter = "starter_code/07-demo";
  return lab;
}

TestOutcome rec(const std::string& name, bool passed, const std::string& msg = "", std::uint64_t seed = 42) {
  TestOutcome t;
  t.name = name;
  t.recorded = true;
  t.passed = passed;
  t.message = msg;
  t.base_seed = seed;
  return t;
}

class TempDir : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("convlab-student-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void configure(const std::string& preset, const std::string& cache, int age_s) {
    const fs::path dir = root_ / "build" / preset;
    fs::create_directories(dir);
    std::ofstream(dir / "CMakeCache.txt") << cache;
    std::ofstream(dir / ".ninja_log") << "# ninja log v5\n";
    fs::last_write_time(dir / ".ninja_log", fs::file_time_type::clock::now() - std::chrono::seconds(age_s));
  }
  fs::path root_;
};

TEST_F(TempDir, FollowsTheBuildRunLast) {
  // Nothing built: the default preset, whose backend the machine decides.
  BuildInfo none = choose_build(root_.string(), "", "");
  EXPECT_EQ(none.shown, "build/default");
  EXPECT_FALSE(none.configured);
  EXPECT_NE(none.describe().find("not configured yet"), std::string::npos);
  // A CPU build only: that one.
  configure("cpu", "CONVLAB_BACKEND:STRING=cpu\nCONVLAB_BACKEND_USED:INTERNAL=cpu\n"
                   "CONVLAB_BACKEND_REASON:INTERNAL=set by CONVLAB_BACKEND\n", 60);
  BuildInfo cpu = choose_build(root_.string(), "", "");
  EXPECT_EQ(cpu.shown, "build/cpu");
  EXPECT_TRUE(cpu.cpu());
  EXPECT_EQ(cpu.backend_reason, "chosen by the preset");
  // A default build, built after it, that chose the CPU backend for want of a driver: that one.
  configure("default", "CONVLAB_BACKEND:STRING=auto\nCONVLAB_BACKEND_USED:INTERNAL=cpu\n"
                       "CONVLAB_BACKEND_REASON:INTERNAL=no NVIDIA driver: neither nvidia-smi nor libcuda.so.1 was found\n",
            5);
  BuildInfo last = choose_build(root_.string(), "", "");
  EXPECT_EQ(last.preset, "default");
  EXPECT_TRUE(last.cpu());
  EXPECT_NE(last.describe().find("the CPU backend (no NVIDIA driver"), std::string::npos) << last.describe();
  EXPECT_NE(last.chosen.find("the build you ran last"), std::string::npos);
  // --preset wins; a build configured before 'auto' existed still says its backend.
  configure("cpu", "CONVLAB_BACKEND:STRING=cpu\n", 1);
  EXPECT_EQ(choose_build(root_.string(), "default", "").preset, "default");
  EXPECT_TRUE(choose_build(root_.string(), "", "").cpu());
  EXPECT_EQ(choose_build(root_.string(), "", "").preset, "cpu");  // now the newest
}

TEST(LabStatus, OnTheCpuBackendSpeedNeedsAGpuAndTheReachablePointsAreStated) {
  const Lab lab = demo_lab();
  std::map<std::string, TestOutcome> recs = {{"lab07.correctness.a.n1_r0", rec("lab07.correctness.a.n1_r0", true)},
                                             {"lab07.correctness.a.n9_r0", rec("lab07.correctness.a.n9_r0", true)}};
  const LabStatus s = lab_status(lab, recs, {"lab07.correctness.a.n1_r0", "lab07.correctness.a.n9_r0"}, true);
  EXPECT_TRUE(s.correctness_done);
  EXPECT_TRUE(s.done);  // everything this backend can run passed
  EXPECT_DOUBLE_EQ(s.reachable, 30);
  EXPECT_DOUBLE_EQ(s.score.max_score, 50);
  EXPECT_EQ(s.score.graders[1].reason, "needs a GPU (the CPU backend does not time kernels)");
  const std::string table = status_table({s}, true);
  EXPECT_NE(table.find("needs a GPU"), std::string::npos) << table;
  EXPECT_NE(table.find("30 / 30 (of 50)"), std::string::npos) << table;
  EXPECT_NE(points_line({s}, true).find("30 of 30 reachable on this machine; the other 20 of the 50 are speed points"),
            std::string::npos)
      << points_line({s}, true);
}

TEST(LabStatus, TestsNotRunYetKeepALabOpen) {
  const Lab lab = demo_lab();
  const LabStatus s = lab_status(lab, {{"lab07.correctness.a.n1_r0", rec("lab07.correctness.a.n1_r0", true)}},
                                 {"lab07.correctness.a.n1_r0", "lab07.correctness.a.n9_r0"}, true);
  EXPECT_FALSE(s.correctness_done);
  EXPECT_EQ(s.tests_expected, 2);
  EXPECT_EQ(s.tests_recorded, 1);
  BuildInfo b;
  b.shown = "build/cpu";
  b.backend = "cpu";
  EXPECT_NE(next_step({s}, b).find("correctness.a has tests that have not run yet: convlab check lab07"),
            std::string::npos)
      << next_step({s}, b);
}

TEST(LabStatus, FailuresSmallestFirstAndTheNextStepNamesTheSmallest) {
  const Lab lab = demo_lab();
  std::map<std::string, TestOutcome> recs;
  for (const char* n : {"lab07.correctness.a.n1000003_r3", "lab07.correctness.a.n1_r3", "lab07.correctness.a.n257_r4"})
    recs[n] = rec(n, false, std::string("Failed\n1D convolution, x:\nsome outputs are wrong (") + n + ")\nmore");
  const auto failures = failures_smallest_first(recs);
  ASSERT_EQ(failures.size(), 3u);
  EXPECT_EQ(failures[0].name, "lab07.correctness.a.n1_r3");
  EXPECT_EQ(failures[1].name, "lab07.correctness.a.n257_r4");
  EXPECT_EQ(failures[2].name, "lab07.correctness.a.n1000003_r3");
  BuildInfo b;
  b.shown = "build/cpu";
  b.backend = "cpu";
  const LabStatus s = lab_status(lab, recs, {}, true);
  const std::string next = next_step({s}, b);
  EXPECT_NE(next.find("lab07 — fix correctness.a in starter_code/07-demo/demo.cu: 3 of 3 tests fail; the smallest, "
                      "lab07.correctness.a.n1_r3: 1D convolution, x: some outputs are wrong"),
            std::string::npos)
      << next;
  EXPECT_NE(next.find("replay it: CONVLAB_SEED=42 ctest --test-dir build/cpu -R '^lab07.correctness.a.n1_r3$' "
                      "--output-on-failure"),
            std::string::npos)
      << next;
  // The grader's reason names the smallest failure too, not gtest's bare "Failed".
  EXPECT_NE(s.score.graders[0].reason.find("the first: lab07.correctness.a.n1_r3: 1D convolution, x: some outputs"),
            std::string::npos)
      << s.score.graders[0].reason;
}

TEST(LabStatus, TheNextStepMovesOnToTheNextLab) {
  BuildInfo b;
  b.shown = "build/cpu";
  b.backend = "cpu";
  const Lab one = demo_lab("lab07"), two = demo_lab("lab08");
  const LabStatus done = lab_status(one, {{"lab07.correctness.a.x", rec("lab07.correctness.a.x", true)}}, {}, true);
  const LabStatus fresh = lab_status(two, {}, {"lab08.correctness.a.x"}, true);
  const std::string next = next_step({done, fresh}, b);
  EXPECT_EQ(next.rfind("lab08 — ", 0), 0u) << next;
  EXPECT_NE(next.find("not checked yet"), std::string::npos) << next;
  EXPECT_NE(next.find("convlab check lab08"), std::string::npos) << next;
  // Never "not run:" twice, never the impossible speed grader on the CPU backend.
  EXPECT_EQ(next.find("not run: not run"), std::string::npos);
  EXPECT_EQ(next.find("speedup"), std::string::npos);
  const LabStatus two_done = lab_status(two, {{"lab08.correctness.a.x", rec("lab08.correctness.a.x", true)}}, {}, true);
  EXPECT_NE(next_step({done, two_done}, b).find("every correctness grader passes. The speed graders need a GPU"),
            std::string::npos);
}

TEST(LabStatus, GradersThatCouldNotRunSayWhyAndWhatWorks) {
  BuildInfo b;
  b.shown = "build/default";
  b.backend = "cuda";
  TestOutcome t = rec("lab07.correctness.a.x", false, "GPU test skipped: no NVIDIA driver is installed (...)");
  t.skipped = true;
  const Lab lab = demo_lab();  // a LabStatus points at its lab: it must outlive it
  const LabStatus s = lab_status(lab, {{t.name, t}}, {}, false);
  EXPECT_TRUE(s.gpu_missing);
  const std::string next = next_step({s}, b);
  EXPECT_NE(next.find("the graders could not run: GPU test skipped: no NVIDIA driver is installed"), std::string::npos)
      << next;
  EXPECT_NE(next.find("cmake --workflow --preset cpu"), std::string::npos) << next;
}

TEST(LabStatus, TheTableIsAlignedAndTitlesAreWhole) {
  const Lab one = demo_lab("lab07"), two = demo_lab("lab08");
  const std::string table = status_table({lab_status(one, {}, {}, false), lab_status(two, {}, {}, false)}, false);
  std::vector<std::string> lines = split(table, '\n');
  ASSERT_EQ(lines.size(), 3u);
  // Every column starts at the same place in every line: "points" and the titles line up.
  const auto col = [](const std::string& line, const std::string& what) { return line.find(what); };
  EXPECT_EQ(col(lines[0], "title"), col(lines[1], "Demo of a lab"));
  EXPECT_EQ(col(lines[1], "Demo of a lab"), col(lines[2], "Demo of a lab"));
  EXPECT_NE(table.find("so that the table must not cut it"), std::string::npos);
  EXPECT_EQ(col(lines[0], "points"), col(lines[1], "0 / 50"));
}

TEST(Progress, Lines) {
  EXPECT_EQ(progress_line("running", 5, 20, 12.4, "lab01.x"), "running [#####...............] 5/20  12 s  lab01.x");
  EXPECT_EQ(progress_line("building", 0, 0, 3, "[45/105] Building"), "building  3 s  [45/105] Building");
  EXPECT_EQ(progress_line("w", 1, 2, 0, std::string(200, 'x'), 40).size(), 40u);
}

TEST(Progress, PlainLinesWhenNotATerminal) {
  // Not a terminal: a line at the start, one per quiet period, one at the end; no escape codes.
  testing::internal::CaptureStdout();
  {
    Progress p("building lab01_graders", 0, false, 0.2);
    p.note("[3/10] Building CXX object a.o");
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    p.finish("done");
  }
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out.rfind("building lab01_graders ...\n", 0), 0u) << out;
  EXPECT_NE(out.find("[######..............] 3/10"), std::string::npos) << out;
  EXPECT_NE(out.find("Building CXX object a.o"), std::string::npos) << out;
  EXPECT_NE(out.find("building lab01_graders: done in "), std::string::npos) << out;
  EXPECT_EQ(out.find("\033["), std::string::npos) << out;
}

TEST(Feedback, ReplayNamesTheGradedPresetsBuildFolder) {
  StudentResult s;
  s.student = "alice";
  std::map<std::string, GraderRun> runs;
  runs["correctness.a"].tests = {rec("lab07.correctness.a.n1_r0", false, "Failed\nwrong")};
  s.labs.push_back(score_lab(demo_lab().spec, runs));
  const std::string md = feedback_markdown(s, "cpu");
  EXPECT_NE(md.find("ctest --test-dir build/cpu -R '^lab07.correctness.a.n1_r0$'"), std::string::npos) << md;
  EXPECT_EQ(md.find("build/default"), std::string::npos);
  // gtest's bare "Failed" is not the reason.
  EXPECT_NE(md.find("lab07.correctness.a.n1_r0: wrong"), std::string::npos) << md;
}

}  // namespace
}  // namespace convlab::cli

namespace convlab::cli {
namespace {

// A convlab tree with one lab, and a build folder whose results a run wrote.
class StudentRun : public TempDir {
protected:
  void SetUp() override {
    TempDir::SetUp();
    fs::create_directories(root_ / "labs" / "07-demo");
    fs::create_directories(root_ / "starter_code" / "07-demo");
    std::ofstream(root_ / "CMakePresets.json") << "{}";
    std::ofstream(root_ / "labs" / "07-demo" / "grading.json") << kSpec;
    configure("cpu", "CONVLAB_BACKEND_USED:INTERNAL=cpu\nCONVLAB_BACKEND_REASON:INTERNAL=set by CONVLAB_BACKEND\n", 0);
    results_ = root_ / "build" / "cpu" / "results" / "student";
    fs::create_directories(results_);
  }
  void record(const std::string& test, bool passed, bool skipped, const std::string& message) {
    nlohmann::json j = {{"lab", "lab07"}, {"test", test}, {"impl", "student"}, {"passed", passed},
                        {"skipped", skipped}, {"message", message}, {"seed", 1}, {"base_seed", 7}};
    std::ofstream(results_ / (test + ".json")) << j.dump();
  }
  std::string build() const { return (root_ / "build" / "cpu").string(); }
  fs::path results_;
};

TEST_F(StudentRun, ARunWhoseGradersCouldNotRunIsNeverGreen) {
  const Project p = load_project(root_.string());
  ASSERT_EQ(run_start_main(p, build()), 0);
  record("lab07.correctness.a.n1_r0", false, true, "GPU test skipped: no NVIDIA driver is installed (...)");
  testing::internal::CaptureStdout();
  const int rc = run_end_main(p, build());
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("1 could not run: GPU test skipped: no NVIDIA driver is installed"), std::string::npos) << out;
  EXPECT_NE(out.find("cmake --workflow --preset cpu"), std::string::npos) << out;
  // The summary after the run: the same, and the next step; it never fails the run itself.
  testing::internal::CaptureStdout();
  EXPECT_EQ(next_step_main(p, build()), 0);
  const std::string summary = testing::internal::GetCapturedStdout();
  EXPECT_NE(summary.find("0 graders ran in this run, 0 failed, 1 could not run for want of a GPU"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("next: the graders could not run"), std::string::npos) << summary;
}

TEST_F(StudentRun, FailuresDoNotFailTheRunEndAndALabDoneIsMarked) {
  const Project p = load_project(root_.string());
  ASSERT_EQ(run_start_main(p, build()), 0);
  record("lab07.correctness.a.n1_r0", false, false, "Failed\nwrong");
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_end_main(p, build()), 0);  // the failed test itself makes the run red
  EXPECT_EQ(next_step_main(p, build()), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("1 graders ran in this run, 1 failed"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(results_ / "lab07.done"));
  // Fixed: the lab is done, and the next run in lab order goes on to the next lab.
  record("lab07.correctness.a.n1_r0", true, false, "");
  testing::internal::CaptureStdout();
  EXPECT_EQ(next_step_main(p, build()), 0);
  const std::string after = testing::internal::GetCapturedStdout();
  EXPECT_TRUE(fs::exists(results_ / "lab07.done"));
  EXPECT_EQ(after.find("graders ran in this run"), std::string::npos) << after;  // no run_end since: no count
  EXPECT_NE(after.find("next: every correctness grader passes"), std::string::npos) << after;
}

}  // namespace
}  // namespace convlab::cli
