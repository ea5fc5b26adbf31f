// Scoring, the calibration hook, and what grading writes.
#include "grading/reports.hpp"
#include "grading/recheck.hpp"
#include "grading/scoring.hpp"
#include "common/util.hpp"

#include <convlab/record.hpp>
#include <convlab/spec.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include <unistd.h>

namespace convlab::cli {
namespace {

const char* kSpec = R"({
  "lab": "lab07", "slug": "07-demo", "title": "Demo",
  "submission": {"files": ["demo.cu"]},
  "forbidden_symbols": ["cublas"],
  "time_limits_s": {"compile": 60, "test": 30},
  "graders": [
    {"id": "correctness.a", "kind": "correctness", "points": 30},
    {"id": "speedup.a", "kind": "speedup", "points": 20, "threshold": 2.0, "partial_from": 1.0, "gated_by": "correctness.a"},
    {"id": "correctness.bonus", "kind": "correctness", "points": 5, "extra_credit": true}
  ]})";

TestOutcome test(const std::string& name, bool passed, std::optional<double> ratio = {}, const std::string& msg = "") {
  TestOutcome t;
  t.name = name;
  t.recorded = true;
  t.passed = passed;
  t.ratio = ratio;
  t.message = msg;
  return t;
}

std::map<std::string, GraderRun> all_good() {
  std::map<std::string, GraderRun> runs;
  runs["correctness.a"].tests = {test("lab07.correctness.a.x", true), test("lab07.correctness.a.y", true)};
  runs["speedup.a"].tests = {test("lab07.speedup.a.big", true, 2.5), test("lab07.speedup.a.small", true, 3.0)};
  runs["correctness.bonus"].tests = {test("lab07.correctness.bonus.x", true)};
  return runs;
}

TEST(Scoring, FullMarksAndExtraCredit) {
  const LabSpec spec = parse_spec(kSpec, "test");
  const LabResult r = score_lab(spec, all_good());
  EXPECT_DOUBLE_EQ(r.max_score, 50);
  EXPECT_DOUBLE_EQ(r.score, 55);  // 30 + 20 + 5 extra
  for (const auto& g : r.graders) EXPECT_TRUE(g.passed) << g.id << ": " << g.reason;
  EXPECT_DOUBLE_EQ(*r.graders[1].ratio, 2.5);
}

TEST(Scoring, CorrectnessIsAllOrNothingAndGatesSpeed) {
  const LabSpec spec = parse_spec(kSpec, "test");
  auto runs = all_good();
  runs["correctness.a"].tests[1] = test("lab07.correctness.a.y", false, {}, "3 outputs are wrong\nmore");
  const LabResult r = score_lab(spec, runs);
  EXPECT_DOUBLE_EQ(r.graders[0].points, 0);
  EXPECT_EQ(r.graders[0].reason, "1 of 2 tests failed; the first: lab07.correctness.a.y: 3 outputs are wrong");
  EXPECT_DOUBLE_EQ(r.graders[1].points, 0);  // speed measured, but correctness gates it
  EXPECT_NE(r.graders[1].reason.find("correctness.a did not pass"), std::string::npos);
  EXPECT_DOUBLE_EQ(r.score, 5);
}

TEST(Scoring, PartialSpeedPointsBelowTheThreshold) {
  const LabSpec spec = parse_spec(kSpec, "test");
  auto runs = all_good();
  // 1.5x: halfway between partial_from 1 and threshold 2 -> half the points of this test.
  runs["speedup.a"].tests[0] = test("lab07.speedup.a.big", false, 1.5, "conv: speed-up 1.5x is below the threshold 2x");
  const LabResult r = score_lab(spec, runs);
  EXPECT_DOUBLE_EQ(r.graders[1].points, 20 * (0.5 + 1.0) / 2);
  EXPECT_FALSE(r.graders[1].passed);
  EXPECT_NE(r.graders[1].reason.find("lowest speed-up 1.5x"), std::string::npos);
}

TEST(Scoring, SpeedTestFailingForAnotherReasonEarnsNothing) {
  const GraderSpec g = parse_spec(kSpec, "test").grader("speedup.a");
  EXPECT_DOUBLE_EQ(speed_test_fraction(g, test("t", false, 3.0, "the output of the last timed run is wrong")), 0);
  EXPECT_DOUBLE_EQ(speed_test_fraction(g, test("t", false, 1.5, "speed-up 1.5x is below the threshold 2x")), 0.5);
  EXPECT_DOUBLE_EQ(speed_test_fraction(g, test("t", true, 2.0)), 1);
  TestOutcome skipped = test("t", false, 5.0);
  skipped.skipped = true;
  EXPECT_DOUBLE_EQ(speed_test_fraction(g, skipped), 0);
}

TEST(Scoring, SkippedTestsAreNotRunWithTheReason) {
  const LabSpec spec = parse_spec(kSpec, "test");
  std::map<std::string, GraderRun> runs;
  TestOutcome t = test("lab07.correctness.a.x", false, {}, "GPU test skipped: no CUDA device");
  t.skipped = true;
  runs["correctness.a"].tests = {t};
  const LabResult r = score_lab(spec, runs);
  EXPECT_FALSE(r.graders[0].ran);
  EXPECT_EQ(r.graders[0].reason, "not run: GPU test skipped: no CUDA device");
  EXPECT_DOUBLE_EQ(r.score, 0);
}

TEST(Scoring, AMisbehavingProcessFailsTheGrader) {
  const LabSpec spec = parse_spec(kSpec, "test");
  auto runs = all_good();
  runs["correctness.a"].problem = "exited with status 0; it left 511 process(es) running, which were killed";
  runs["correctness.bonus"].sanitizer = "compute-sanitizer memcheck: Invalid __global__ read";
  const LabResult r = score_lab(spec, runs);
  EXPECT_DOUBLE_EQ(r.graders[0].points, 0);
  EXPECT_NE(r.graders[0].reason.find("left 511 process(es)"), std::string::npos);
  EXPECT_DOUBLE_EQ(r.graders[2].points, 0);
  EXPECT_NE(r.graders[2].reason.find("compute-sanitizer found errors"), std::string::npos);
}

// The harness's own fault, twice (grade_run.cpp retried once): the signed verdicts stand, the grade is
// flagged for a regrade, and the gradebook's flags column says so (issue 26).
TEST(Scoring, AnInfrastructureErrorCostsNothingAndIsFlagged) {
  const LabSpec spec = parse_spec(kSpec, "test");
  auto runs = all_good();
  runs["correctness.a"].infrastructure = "the grading harness left 1 of its own process(es) running, twice";
  const LabResult r = score_lab(spec, runs);
  EXPECT_DOUBLE_EQ(r.graders[0].points, r.graders[0].max_points);
  EXPECT_TRUE(r.graders[0].passed);
  EXPECT_TRUE(r.graders[0].review);
  EXPECT_NE(r.graders[0].reason.find("left 1 of its own"), std::string::npos) << r.graders[0].reason;
  EXPECT_NE(gradebook_flag("lab01", r.graders[0]).find("REGRADE"), std::string::npos);
  EXPECT_EQ(gradebook_flag("lab01", r.graders[1]), "");
}

// A technique verdict holds for every launch of its slot (issue 27): a kernel that the slot's
// correctness or speed tests launched, and that the technique test never judged, fails it, and
// the gate takes the speed points.
constexpr const char* kTechniqueSpec = R"({
  "lab": "lab07", "slug": "07-demo", "title": "Demo",
  "submission": {"files": ["demo.cu"]},
  "forbidden_symbols": [],
  "time_limits_s": {"compile": 60, "test": 30},
  "graders": [
    {"id": "correctness.tiled", "kind": "correctness", "points": 10},
    {"id": "technique.tiled", "kind": "technique", "points": 8},
    {"id": "speedup.tiled", "kind": "speedup", "points": 7, "threshold": 1.2, "partial_from": 1.0,
     "gated_by": ["correctness.tiled", "technique.tiled"]}
  ]})";

std::map<std::string, GraderRun> tiled_runs(const std::vector<std::string>& speed_kernels) {
  std::map<std::string, GraderRun> runs;
  runs["correctness.tiled"].tests = {test("lab07.correctness.tiled.w5_h3_r1", true),
                                     test("lab07.correctness.tiled.w3627_h3623_r1", true)};
  runs["correctness.tiled"].tests[0].kernels = {"tiled_kernel<1>"};
  runs["correctness.tiled"].tests[1].kernels = {"tiled_kernel<1>"};
  runs["technique.tiled"].tests = {test("lab07.technique.tiled.w1000_h700_r3", true)};
  runs["technique.tiled"].tests[0].kernels = {"tiled_kernel<3>"};
  runs["technique.tiled"].tests[0].judged = {"tiled_kernel<3>"};
  runs["speedup.tiled"].tests = {test("lab07.speedup.tiled.w8191_h8193_r4", true, 1.5)};
  runs["speedup.tiled"].tests[0].kernels = speed_kernels;
  return runs;
}

TEST(Scoring, ATechniqueHoldsForEveryLaunchOfItsSlot) {
  const LabSpec spec = parse_spec(kTechniqueSpec, "test");
  // The same kernel template at other radii: one design, judged as one.
  const LabResult honest = score_lab(spec, tiled_runs({"tiled_kernel<4>"}));
  EXPECT_DOUBLE_EQ(honest.score, 25) << honest.graders[1].reason;

  // A plain kernel where the speed is timed: the technique fails, naming it and where it ran.
  const LabResult sw = score_lab(spec, tiled_runs({"plain_kernel"}));
  const GraderResult& t = sw.graders[1];
  EXPECT_FALSE(t.passed);
  EXPECT_DOUBLE_EQ(t.points, 0);
  EXPECT_NE(t.reason.find("on w8191_h8193_r4 (the speed test) plain_kernel was launched"), std::string::npos)
      << t.reason;
  EXPECT_NE(t.reason.find("on w1000_h700_r3 it judged tiled_kernel<3>"), std::string::npos) << t.reason;
  EXPECT_DOUBLE_EQ(sw.graders[2].points, 0);  // the technique gates speed
  EXPECT_DOUBLE_EQ(sw.graders[0].points, 10);  // the outputs were right

  // The same in a correctness test (a call-count switch: plain after the first call).
  auto runs = tiled_runs({"tiled_kernel<4>"});
  runs["correctness.tiled"].tests[1].kernels = {"plain_kernel"};
  const LabResult cc = score_lab(spec, runs);
  EXPECT_FALSE(cc.graders[1].passed);
  EXPECT_NE(cc.graders[1].reason.find("on w3627_h3623_r1 (a correctness test) plain_kernel"), std::string::npos)
      << cc.graders[1].reason;

  // A technique test that judged no kernel of the student's (a library's kernels): nothing to compare.
  runs = tiled_runs({"library_kernel_a"});
  runs["technique.tiled"].tests[0].judged.clear();
  EXPECT_TRUE(score_lab(spec, runs).graders[1].passed);
}

// A kernel the technique test judged, doing something else where it was timed (a size switch inside
// the tiled kernel, a device-side call counter): the speed test's counted call says so
// (TestRecord::off_technique), and the technique grader fails with its words (issue 27).
TEST(Scoring, TheTimedProblemsCountsFailTheTechniqueGrader) {
  const LabSpec spec = parse_spec(kTechniqueSpec, "test");
  auto runs = tiled_runs({"tiled_kernel<4>"});
  runs["speedup.tiled"].tests[0].passed = false;
  runs["speedup.tiled"].tests[0].off_technique =
      "tiled_kernel loaded 81 values per output from global memory and 0 from shared memory";
  const LabResult r = score_lab(spec, runs);
  EXPECT_FALSE(r.graders[1].passed);
  EXPECT_DOUBLE_EQ(r.graders[1].points, 0);
  EXPECT_NE(r.graders[1].reason.find("the technique test passed on its problem, but on w8191_h8193_r4 (the speed "
                                     "test) tiled_kernel loaded 81 values per output"),
            std::string::npos)
      << r.graders[1].reason;
  EXPECT_DOUBLE_EQ(r.graders[2].points, 0);

  // The CPU backend's side: a large correctness case counted.
  runs = tiled_runs({"tiled_kernel<4>"});
  runs["correctness.tiled"].tests[1].off_technique = "tiled_kernel loaded 9 values per output from global memory";
  const LabResult c = score_lab(spec, runs);
  EXPECT_FALSE(c.graders[1].passed);
  EXPECT_NE(c.graders[1].reason.find("on w3627_h3623_r1 (a correctness test) tiled_kernel loaded 9"), std::string::npos)
      << c.graders[1].reason;

  // Counters refused: the compiled code's verdict stands, flagged for the instructor's review.
  runs = tiled_runs({"tiled_kernel<4>"});
  runs["technique.tiled"].tests[0].counters_refused = "this machine does not let this user read the counters";
  const LabResult q = score_lab(spec, runs);
  EXPECT_TRUE(q.graders[1].passed);
  EXPECT_DOUBLE_EQ(q.graders[1].points, 8);
  EXPECT_TRUE(q.graders[1].review);
  EXPECT_NE(q.graders[1].reason.find("amounts were not counted: this machine does not let"), std::string::npos)
      << q.graders[1].reason;
}

TEST(Scoring, RecordsCarryTheKernelsLaunchedAndJudged) {
  const std::string dir = testing::TempDir() + "records_kernels";
  std::filesystem::create_directories(dir);
  convlab::TestRecord rec;
  rec.lab = "lab07";
  rec.test = "lab07.technique.tiled.w1000_h700_r3";
  rec.passed = true;
  rec.kernels = {"tiled_kernel<3>", "other"};
  rec.judged = {"tiled_kernel<3>"};
  rec.off_technique = "plain where timed";
  rec.counters_refused = "counters refused";
  const std::string key = "00112233445566778899aabbccddeeff";
  const TestOutcome t = read_record(convlab::write_record(rec, dir, key), key);
  EXPECT_EQ(t.off_technique, "plain where timed");
  EXPECT_EQ(t.counters_refused, "counters refused");
  EXPECT_EQ(t.kernels, rec.kernels);
  EXPECT_EQ(t.judged, rec.judged);
  EXPECT_EQ(convlab::kernel_family("tiled_kernel<3>"), "tiled_kernel");
  EXPECT_EQ(convlab::kernel_family("void plain_kernel"), "plain_kernel");
  std::filesystem::remove_all(dir);
}

TEST(Scoring, ALabWideFailureGivesNothing) {
  const LabSpec spec = parse_spec(kSpec, "test");
  const LabResult r = score_lab(spec, all_good(), "did not compile");
  EXPECT_DOUBLE_EQ(r.score, 0);
  EXPECT_DOUBLE_EQ(r.max_score, 50);
  for (const auto& g : r.graders) EXPECT_EQ(g.reason, "no points: did not compile");
}

TEST(Scoring, SpecPointsMatchSpeedPoints) {
  // Lab 01's real spec: 0.3x with partial_from 0.1 and threshold 0.5 earns half.
  const LabSpec spec = load_spec(std::string(CONVLAB_SOURCE_DIR) + "/labs/01-conv-basic/grading.json");
  const GraderSpec& g = spec.grader("speedup.conv1d");
  EXPECT_NEAR(speed_test_fraction(g, test("t", false, 0.3, "speed-up 0.3x is below the threshold 0.5x")), 0.5, 1e-12);
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = std::filesystem::temp_directory_path().string() + "/" + name + std::to_string(::getpid());
  write_file_atomic(path, text);
  return path;
}

TEST(Calibration, ReplacesThresholdsOfTheNamedGraders) {
  LabSpec spec = parse_spec(kSpec, "test");
  const std::string path = write_temp("cal", R"({"convlab_calibration": 1, "fraction": 0.7,
    "labs": {"lab07": {"speedup.a": {"threshold": 3.5, "partial_from": 1.75, "reference_ratio": 5}},
             "lab99": {"speedup.z": {"threshold": 1}}}})");
  EXPECT_EQ(apply_calibration(spec, path), 1);
  EXPECT_DOUBLE_EQ(spec.grader("speedup.a").threshold, 3.5);
  EXPECT_DOUBLE_EQ(spec.grader("speedup.a").partial_from, 1.75);
  std::filesystem::remove(path);
}

TEST(Calibration, RefusesMalformedFiles) {
  LabSpec spec = parse_spec(kSpec, "test");
  const auto refused = [&](const std::string& text, const std::string& why) {
    const std::string path = write_temp("calbad", text);
    try {
      apply_calibration(spec, path);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const SpecError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
  };
  refused("{", "not valid JSON");
  refused(R"({"labs": {"lab07": {"correctness.a": {"threshold": 1}}}})", "is not a speedup grader");
  refused(R"({"labs": {"lab07": {"speedup.a": {"threshold": -1}}}})", "threshold > 0");
  refused(R"({"labs": {"lab07": {"speedup.a": {"threshold": 1, "partial_from": 2}}}})", "partial_from < threshold");
  refused(R"({"labs": {"lab07": {"speedup.a": {"threshold": 1, "extra": 2}}}})", "unknown key 'extra'");
  refused(R"({"nolabs": 1})", "'labs' object");
  EXPECT_THROW(apply_calibration(spec, "/nonexistent/calibration.json"), SpecError);
}

StudentResult sample() {
  StudentResult s;
  s.student = "alice";
  s.origin = "subs/alice.tar.gz";
  s.kind = "tarball";
  s.fingerprint = "abc";
  s.notes = {"tampering ignored: labs/x"};
  auto runs = all_good();
  runs["speedup.a"].tests[0] = test("lab07.speedup.a.big", false, 1.5, "speed-up 1.5x is below the threshold 2x");
  s.labs.push_back(score_lab(parse_spec(kSpec, "test"), runs));
  s.labs.back().submitted = true;
  return s;
}

TEST(Reports, GradebookHasARowPerStudentAndAColumnPerLab) {
  StudentResult b = sample();
  b.student = "bob, jr.";
  b.labs[0] = score_lab(parse_spec(kSpec, "test"), {}, "did not compile");
  const std::string csv = gradebook_csv({sample(), b}, {"lab07", "lab08"}, {50, 40});
  EXPECT_EQ(csv,
            "student,lab07,lab08,total\n"
            "Points Possible,50,40,90\n"
            "alice,50,0,50\n"
            "\"bob, jr.\",0,0,0\n");
}

// On the CPU backend the speed graders cannot run: they say so, earn nothing, and the gradebook's
// points possible leave them out (an LMS computes 30 of 30, not 30 of 50), with a column naming them.
TEST(Reports, CpuGradebookCountsOnlyWhatCouldBeGraded) {
  const LabSpec spec = parse_spec(kSpec, "test");
  auto runs = all_good();
  runs["speedup.a"] = GraderRun{};
  runs["speedup.a"].needs_gpu = true;
  const LabResult lab = score_lab(spec, runs);
  EXPECT_TRUE(lab.graders[1].needs_gpu);
  EXPECT_EQ(lab.graders[1].reason, "needs a GPU: graded when your instructor grades on one");
  EXPECT_DOUBLE_EQ(lab.graders[1].points, 0);
  EXPECT_DOUBLE_EQ(lab.score, 35);  // 30 + 5 extra
  // A lab that did not compile says the same of its speed grader, so every row has one possible.
  std::map<std::string, GraderRun> unreachable;
  unreachable["speedup.a"].needs_gpu = true;
  const LabResult broken = score_lab(spec, unreachable, "did not compile");
  EXPECT_TRUE(broken.graders[1].needs_gpu);
  EXPECT_EQ(broken.graders[0].reason, "no points: did not compile");
  // A failed gate does not turn the GPU's grader into a correctness failure.
  runs["correctness.a"].tests[0].passed = false;
  EXPECT_EQ(score_lab(spec, runs).graders[1].reason, "needs a GPU: graded when your instructor grades on one");

  StudentResult a;
  a.student = "alice";
  a.labs = {lab};
  StudentResult b;
  b.student = "bob";
  b.labs = {broken};
  EXPECT_EQ(gradebook_csv({a, b}, {"lab07"}, {50}),
            "student,lab07,total,not graded\n"
            "Points Possible,30,30,\n"
            "alice,35,35,lab07 speedup.a: needs a GPU (20 points)\n"
            "bob,0,0,lab07 speedup.a: needs a GPU (20 points)\n");
  // Saved and resumed, it still says so.
  EXPECT_TRUE(student_from_json(to_json(a)).labs[0].graders[1].needs_gpu);
}

// CPU parity (issue 27, item 5): a kernel launched outside the stream the grader gave, seen by the
// CPU backend in a correctness test, is what the GPU's speed grader refuses whatever the time. On
// the CPU backend that grader still needs a GPU (not possible there), but says, in the GPU's words,
// that it earns 0 there; the gradebook's column says so too.
TEST(Reports, CpuBackendSaysWhatTheGpuSpeedGraderWillRefuse) {
  const LabSpec spec = parse_spec(kSpec, "test");
  auto runs = all_good();
  runs["speedup.a"] = GraderRun{};
  runs["speedup.a"].needs_gpu = true;
  const std::string words =
      "kernel conv1d_naive_kernel was launched on the legacy default stream (a launch without a stream argument), "
      "not on the stream the grader passed to your launcher";
  runs["correctness.a"].tests[0].escaped = words;
  const LabResult lab = score_lab(spec, runs);
  EXPECT_TRUE(lab.graders[1].needs_gpu);
  EXPECT_DOUBLE_EQ(lab.graders[1].points, 0);
  EXPECT_NE(lab.graders[1].reason.find("needs a GPU"), std::string::npos) << lab.graders[1].reason;
  EXPECT_NE(lab.graders[1].reason.find("earns 0 on a GPU: " + words + " (seen on the CPU backend in " +
                                       runs["correctness.a"].tests[0].name + ")"),
            std::string::npos)
      << lab.graders[1].reason;
  EXPECT_DOUBLE_EQ(lab.score, 35);  // what the CPU backend can award is unchanged
  StudentResult a;
  a.student = "alice";
  a.labs = {lab};
  EXPECT_EQ(gradebook_csv({a}, {"lab07"}, {50}),
            "student,lab07,total,not graded\n"
            "Points Possible,30,30,\n"
            "alice,35,35,lab07 speedup.a: needs a GPU (20 points); speedup.a earns 0 there: work outside the stream "
            "given (see the feedback)\n");
  EXPECT_EQ(student_from_json(to_json(a)).labs[0].graders[1].on_gpu, lab.graders[1].on_gpu);
  // The Gradescope results say it too, where they name the graders left out.
  const std::string output = nlohmann::json::parse(gradescope_json(a, "cpu")).at("output").get<std::string>();
  EXPECT_NE(output.find("speedup.a earns 0 on a GPU: " + words), std::string::npos) << output;
  // Without such a launch, nothing is said.
  runs["correctness.a"].tests[0].escaped.clear();
  EXPECT_EQ(score_lab(spec, runs).graders[1].reason, "needs a GPU: graded when your instructor grades on one");
}

// The Gradescope results of a CPU grading are as honest as its gradebook: a grader that needs a GPU
// is no test of them (Gradescope would count its max_score as possible), the points possible are the
// gradebook's, and the output says which graders were left out and why.
TEST(Reports, CpuGradescopeResultsCountOnlyWhatCouldBeGraded) {
  const LabSpec spec = parse_spec(kSpec, "test");
  auto runs = all_good();
  runs["speedup.a"] = GraderRun{};
  runs["speedup.a"].needs_gpu = true;
  StudentResult a;
  a.student = "alice";
  a.labs = {score_lab(spec, runs)};
  EXPECT_DOUBLE_EQ(unreachable_points(a.labs[0]), 20);
  EXPECT_DOUBLE_EQ(a.possible_total(), 30);

  const auto j = nlohmann::json::parse(gradescope_json(a, "cpu"));
  EXPECT_DOUBLE_EQ(j.at("score").get<double>(), 35);  // 30 + 5 extra, the gradebook's total
  EXPECT_DOUBLE_EQ(j.at("max_score").get<double>(), 30);
  double possible = 0;
  for (const auto& t : j.at("tests")) {
    EXPECT_EQ(t.at("name").get<std::string>().find("speedup.a"), std::string::npos) << t.dump();
    possible += t.at("max_score").get<double>();
  }
  EXPECT_EQ(j.at("tests").size(), 2u);  // correctness.a and the extra credit
  // The sum Gradescope makes of its tests is the gradebook's points possible for the lab.
  const std::string csv = gradebook_csv({a}, {"lab07"}, {50});
  EXPECT_NE(csv.find("Points Possible," + fmt_points(possible) + ","), std::string::npos) << csv;
  const std::string output = j.at("output").get<std::string>();
  EXPECT_NE(output.find("convlab: 35 / 30 (of 50 with the graders that need a GPU)"), std::string::npos) << output;
  EXPECT_NE(output.find("lab07: 35 / 30"), std::string::npos) << output;
  EXPECT_NE(output.find("lab07 speedup.a (20 points): needs a GPU: graded when your instructor grades on one"),
            std::string::npos)
      << output;

  // Graded on a GPU, every grader is a test and the labs' full totals are possible.
  const auto gpu = nlohmann::json::parse(gradescope_json(sample()));
  EXPECT_EQ(gpu.at("tests").size(), 3u);
  EXPECT_DOUBLE_EQ(gpu.at("max_score").get<double>(), 50);
  EXPECT_EQ(gpu.at("output").get<std::string>().find("Not graded"), std::string::npos);
}

// With a roster, the rows carry the names, ids and e-mails an LMS matches on.
TEST(Reports, RosterGradebookHasIdAndEmailColumns) {
  StudentResult a = sample();
  a.student = "12345";
  a.id = "12345";
  a.name = "Smith, Alice";
  a.email = "asmith@example.edu";
  StudentResult c = sample();
  c.student = "c7";
  c.id = "c7";
  EXPECT_EQ(gradebook_csv({a, c}, {"lab07"}, {50}),
            "student,id,email,lab07,total\n"
            "Points Possible,,,50,50\n"
            "\"Smith, Alice\",12345,asmith@example.edu,50,50\n"
            "c7,c7,,50,50\n");
  const StudentResult back = student_from_json(to_json(a));
  EXPECT_EQ(back.id, "12345");
  EXPECT_EQ(back.name, "Smith, Alice");
  EXPECT_EQ(back.email, "asmith@example.edu");
}

TEST(Reports, GradescopeResultsFormat) {
  const auto j = nlohmann::json::parse(gradescope_json(sample()));
  EXPECT_DOUBLE_EQ(j.at("score").get<double>(), 50);  // 30 + 15 + 5 extra
  EXPECT_DOUBLE_EQ(j.at("max_score").get<double>(), 50);
  ASSERT_EQ(j.at("tests").size(), 3u);
  const auto& speed = j.at("tests")[1];
  EXPECT_EQ(speed.at("name"), "lab07 speedup.a");
  EXPECT_DOUBLE_EQ(speed.at("score").get<double>(), 15);
  EXPECT_DOUBLE_EQ(speed.at("max_score").get<double>(), 20);
  EXPECT_EQ(speed.at("status"), "failed");
  EXPECT_NE(speed.at("output").get<std::string>().find("threshold of 2x"), std::string::npos);
  EXPECT_DOUBLE_EQ(j.at("tests")[2].at("max_score").get<double>(), 0);  // extra credit
  EXPECT_NE(j.at("output").get<std::string>().find("tampering ignored"), std::string::npos);
}

TEST(Reports, FeedbackNamesEveryGraderWithRatioAndThreshold) {
  const std::string md = feedback_markdown(sample());
  EXPECT_NE(md.find("# Grading feedback: alice"), std::string::npos);
  EXPECT_NE(md.find("Total: **50 / 50**"), std::string::npos);
  EXPECT_NE(md.find("| correctness.a | passed | 30 / 30 |"), std::string::npos);
  EXPECT_NE(md.find("| speedup.a | failed | 15 / 20 | 1.5x | 2x |"), std::string::npos);
  EXPECT_NE(md.find("Note: tampering ignored"), std::string::npos);
  EXPECT_NE(md.find("Replay: `CONVLAB_SEED="), std::string::npos);
}

TEST(Reports, SavedStateRoundTrips) {
  const StudentResult a = sample();
  const StudentResult b = student_from_json(to_json(a));
  EXPECT_EQ(to_json(a), to_json(b));
  EXPECT_THROW(student_from_json("{}"), Error);
  EXPECT_THROW(student_from_json("not json"), Error);
}

}  // namespace
}  // namespace convlab::cli
