// What a student reads after `convlab grade` (issue 28): feedback/<student>.md and the Gradescope
// results name no folder of the grading machine, carry no GoogleTest scaffolding and one replay
// line per failure shown, say a lab-wide reason once, list fence findings one a line, link the
// error maps copied beside them, and show what the student's code printed, which scores nothing.
#include "grading/reports.hpp"
#include "grading/scoring.hpp"
#include "test_files.hpp"
#include "common/util.hpp"

#include <convlab/record.hpp>
#include <convlab/spec.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace convlab::cli {
namespace {

namespace fs = std::filesystem;
using testing_files::temp_dir;

const char* kSpec = R"({
  "lab": "lab07", "slug": "07-demo", "title": "Demo",
  "submission": {"files": ["demo.cu"]},
  "forbidden_symbols": [],
  "time_limits_s": {"compile": 60, "test": 30},
  "graders": [
    {"id": "correctness.a", "kind": "correctness", "points": 30},
    {"id": "speedup.a", "kind": "speedup", "points": 20, "threshold": 2.0, "partial_from": 1.0, "gated_by": "correctness.a"}
  ]})";

const std::string kRoot = "/srv/course", kOut = "/srv/grading/out", kWork = "/srv/grading/out/work";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

// A failure as the judge recorded it before issue 28 and as GoogleTest prints it: "Value of:"
// lines, the scoped trace with the grading tree's replay line, an error map in the work folder.
std::string gtest_message(const std::string& results) {
  return "Value of: v.passed\n  Actual: false\nExpected: true\n2D convolution, 100 x 75, radius 3:\n"
         "13 outputs are wrong\nerror map image (red: wrong, yellow: never written, blue: tile edges): " +
         results + "/error-maps/lab07.correctness.a.w100_h75_r3.png\nGoogle Test trace:\n" + kWork +
         "/slots/0/src/grader/src/testbed.cpp:193: replay this exact test (seed 7): CONVLAB_SEED=7 ctest "
         "--test-dir " + kWork + "/slots/0/build -R '^lab07.correctness.a.w100_h75_r3$' --output-on-failure";
}

StudentResult graded(const std::string& results_dir, const std::string& feedback_dir) {
  // The record, as read_record() reads the judge's file.
  const std::string record = results_dir + "/lab07.correctness.a.w100_h75_r3.json";
  nlohmann::json j = {{"test", "lab07.correctness.a.w100_h75_r3"}, {"passed", false}, {"base_seed", 7},
                      {"message", gtest_message(results_dir)}};
  write_file_atomic(record, j.dump());
  std::map<std::string, GraderRun> runs;
  runs["correctness.a"].tests = {read_record(record)};
  runs["correctness.a"].tests.front().output = "debug: grid 4 x 3\n";
  keep_error_maps(results_dir, feedback_dir, "alice", runs["correctness.a"].tests);
  StudentResult r;
  r.student = "alice";
  r.origin = kOut + "/../submissions/alice.tar.gz";
  r.kind = "tarball";
  r.labs.push_back(score_lab(parse_spec(kSpec, "test"), runs));
  r.labs.back().submitted = true;
  r.labs.back().details = kWork + "/slots/0/src/starter_code/07-demo/demo.cu:12:5: error: expected ';'\n";
  r.labs.back().notes = {"read " + kRoot + "/reference/07-demo/demo.cu"};
  strip_machine_paths(r, {kRoot, kOut, kWork});
  return r;
}

TEST(Feedback, NamesNoFolderOfTheGradingMachineAndNoGoogleTestScaffolding) {
  const std::string dir = temp_dir("feedback-paths");
  const std::string results = dir + "/results", feedback = dir + "/feedback";
  make_dirs(results + "/error-maps");
  write_file_atomic(results + "/error-maps/lab07.correctness.a.w100_h75_r3.png", "png");
  const StudentResult r = graded(results, feedback);
  const std::string md = feedback_markdown(r, "cpu"), gs = gradescope_json(r, "cpu");
  for (const std::string& text : {md, gs}) {
    for (const std::string& machine : {std::string("/srv/"), dir, std::string("slots/0")})
      EXPECT_EQ(text.find(machine), std::string::npos) << machine << " in:\n" << text;
    for (const char* scaffolding : {"Value of:", "Actual:", "Expected:", "Google Test trace", "testbed.cpp"})
      EXPECT_EQ(text.find(scaffolding), std::string::npos) << scaffolding << " in:\n" << text;
    // One replay line, the one a student types in their own build folder.
    EXPECT_EQ(count(text, "ctest --test-dir"), 1u) << text;
    EXPECT_NE(text.find("ctest --test-dir build/cpu -R '^lab07.correctness.a.w100_h75_r3$'"), std::string::npos);
    EXPECT_NE(text.find("13 outputs are wrong"), std::string::npos);  // the grader's own words stay
  }
  EXPECT_NE(md.find("Submission: `alice.tar.gz` (tarball)"), std::string::npos) << md;
  // A compiler's line names the file where the student has it; the course's files by their place.
  EXPECT_NE(md.find("starter_code/07-demo/demo.cu:12:5: error"), std::string::npos) << md;
  EXPECT_NE(md.find("read reference/07-demo/demo.cu"), std::string::npos) << md;
}

TEST(Feedback, ErrorMapsAreCopiedBesideTheFeedbackAndLinkedRelatively) {
  const std::string dir = temp_dir("feedback-maps");
  const std::string results = dir + "/results", feedback = dir + "/feedback";
  make_dirs(results + "/error-maps");
  write_file_atomic(results + "/error-maps/lab07.correctness.a.w100_h75_r3.png", "png bytes");
  const StudentResult r = graded(results, feedback);
  const std::string link = "alice/lab07.correctness.a.w100_h75_r3.png";
  EXPECT_EQ(read_file(feedback + "/" + link), "png bytes");
  const std::string md = feedback_markdown(r, "cpu");
  EXPECT_NE(md.find("](" + link + ")"), std::string::npos) << md;  // relative to feedback/, where the .md is
  EXPECT_NE(gradescope_json(r, "cpu").find("feedback/" + link), std::string::npos);
  // No map written (a 1D test, no libpng): nothing linked.
  fs::remove(results + "/error-maps/lab07.correctness.a.w100_h75_r3.png");
  const StudentResult none = graded(results, dir + "/feedback2");
  EXPECT_EQ(feedback_markdown(none, "cpu").find("](alice/"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir + "/feedback2/alice"));
}

TEST(Feedback, ALabWideReasonIsSaidOnceAndFenceFindingsOneALine) {
  const std::string why = "(it reads or writes files, sockets or devices)";
  const std::string lines = fence_refusal({"demo.cu: calls fopen, which your kernels' file may not use " + why,
                                           "demo.cu: calls fclose, which your kernels' file may not use " + why,
                                           "demo.cu: calls setenv, which your kernels' file may not use (settings)"});
  EXPECT_EQ(lines,
            "- demo.cu: calls fopen, which your kernels' file may not use " + why + "\n"
            "- demo.cu: calls fclose, which your kernels' file may not use (as above)\n"
            "- demo.cu: calls setenv, which your kernels' file may not use (settings)");
  EXPECT_NE(fence_refusal(std::vector<std::string>(15, "x.cu: y"), 12).find("- and 3 more"), std::string::npos);
  StudentResult r;
  r.student = "bob";
  r.labs.push_back(score_lab(parse_spec(kSpec, "test"), {}, "refused by the symbol fence:\n" + lines));
  const std::string md = feedback_markdown(r), gs = gradescope_json(r);
  EXPECT_EQ(count(md, why), 1u) << md;  // not once more for each grader
  EXPECT_EQ(count(gs, "it reads or writes files"), 1u) << gs;
  EXPECT_NE(md.find("\n- demo.cu: calls fclose"), std::string::npos) << md;
  // A submission that could not be read: its reason once, not once more per lab and grader.
  StudentResult c;
  c.student = "erin";
  c.failure = "cannot unpack the tarball (exited with status 2): tar: This does not look like a tar archive";
  c.labs.push_back(score_lab(parse_spec(kSpec, "test"), {}, "the submission could not be read: " + c.failure));
  EXPECT_EQ(count(feedback_markdown(c), "does not look like a tar archive"), 1u) << feedback_markdown(c);
  EXPECT_EQ(count(gradescope_json(c), "does not look like a tar archive"), 1u) << gradescope_json(c);
}

TEST(Feedback, WhatTheCodePrintedIsShownAndScoresNothing) {
  // A passing grader whose launcher printed: full points, and the output in its feedback.
  std::map<std::string, GraderRun> runs;
  TestOutcome pass;
  pass.name = "lab07.correctness.a.x";
  pass.recorded = pass.passed = true;
  pass.output = "launching 4 blocks\n";
  runs["correctness.a"].tests = {pass};
  // A speed test that was too slow and printed a fake verdict and the words only_too_slow() reads.
  TestOutcome slow;
  slow.name = "lab07.speedup.a.big";
  slow.recorded = true;
  slow.ratio = 0.5;
  slow.message = "speed-up 0.5x is below the threshold 2x";
  slow.output = "[  PASSED  ] 2 tests.\n[       OK ] lab07.speedup.a.big\nspeed-up 9x is below the threshold\n";
  runs["speedup.a"].tests = {slow};
  const LabResult honest = [&] {
    auto quiet = runs;
    quiet["speedup.a"].tests[0].output.clear();
    quiet["correctness.a"].tests[0].output.clear();
    return score_lab(parse_spec(kSpec, "test"), quiet);
  }();
  StudentResult r;
  r.student = "carol";
  r.labs.push_back(score_lab(parse_spec(kSpec, "test"), runs));
  EXPECT_DOUBLE_EQ(r.labs[0].score, honest.score);  // printing changes no score
  EXPECT_DOUBLE_EQ(r.labs[0].graders[0].points, 30);
  EXPECT_FALSE(r.labs[0].graders[1].passed);
  const std::string md = feedback_markdown(r), gs = gradescope_json(r);
  EXPECT_NE(md.find("launching 4 blocks"), std::string::npos) << md;
  EXPECT_NE(gs.find("launching 4 blocks"), std::string::npos) << gs;
  EXPECT_NE(md.find("[  PASSED  ] 2 tests."), std::string::npos);  // shown as printed, inside a code block
  // Saved and resumed, the output and the error map stay.
  r.labs[0].graders[0].tests[0].error_map = "carol/x.png";
  const StudentResult back = student_from_json(to_json(r));
  EXPECT_EQ(back.labs[0].graders[0].tests[0].output, "launching 4 blocks\n");
  EXPECT_EQ(back.labs[0].graders[0].tests[0].error_map, "carol/x.png");
}

TEST(Feedback, FailureTextKeepsTheGradersWordsOnly) {
  EXPECT_EQ(failure_text("Failed\n1D convolution, n = 5:\n2 outputs are wrong\nGoogle Test trace:\n"
                         "a/testbed.cpp:1: replay this exact test (seed 1): ..."),
            "1D convolution, n = 5:\n2 outputs are wrong");
  EXPECT_EQ(failure_text("Value of: v.passed\n  Actual: false\nExpected: true\nspeed-up 0.5x is below"),
            "speed-up 0.5x is below");
  // A bare check keeps what it compared, in words.
  EXPECT_EQ(failure_text("Expected: (run.result.residual) <= (tol), actual: 0.5 vs 0.01"),
            "a check failed: expected (run.result.residual) <= (tol), actual: 0.5 vs 0.01");
  EXPECT_EQ(failure_text("Expected equality of these values:\n  a\n    Which is: 1\n  b\n    Which is: 2\nwhy"), "why");
  EXPECT_EQ(failure_text("Google Test trace:\nx.cpp:1: replay"), "");
  EXPECT_EQ(failure_text("the runner crashed"), "the runner crashed");
}

TEST(Feedback, ShownOriginIsTheNameNotThePath) {
  EXPECT_EQ(shown_origin("/srv/lms/alice.tar.gz"), "alice.tar.gz");
  EXPECT_EQ(shown_origin("/srv/lms/bob/"), "bob");
  EXPECT_EQ(shown_origin("carol"), "carol");
  // Paths under no root are left alone; a root's sibling with a longer name is not the root.
  EXPECT_EQ(strip_machine_paths("see /srv/coursework/x.cu", {"/srv/course"}), "see /srv/coursework/x.cu");
  EXPECT_EQ(strip_machine_paths("in /srv/out/work/subs/a/lab01/run: x", {"/srv/course", "/srv/out"}), "in run: x");
}


// The closing summary's figure per GPU and per Slurm task (issue 29, item 6): the mean build and
// run seconds of the submissions that were built or run; one that never was is not counted.
TEST(Reports, SecondsPerSubmissionAreTheMeansOfWhatWasBuiltAndRun) {
  const auto result = [](std::vector<std::pair<double, double>> labs) {
    StudentResult r;
    for (const auto& [build, run] : labs) {
      LabResult l;
      l.build_s = build;
      l.run_s = run;
      r.labs.push_back(l);
    }
    return r;
  };
  const StudentResult a = result({{2, 3}, {4, 5}}), b = result({{1, 1}}), never = result({{0, 0}});
  EXPECT_EQ(seconds_per_submission({}), "no submission graded");
  EXPECT_EQ(seconds_per_submission({&never}), "no submission graded");
  EXPECT_EQ(seconds_per_submission({&a}), "1 submission, 14.0 s each (build 6.0, run 8.0)");
  EXPECT_EQ(seconds_per_submission({&a, &b, &never}), "2 submissions, 8.0 s each (build 3.5, run 4.5)");
}

}  // namespace
}  // namespace convlab::cli
