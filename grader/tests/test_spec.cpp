// The grading spec parser: every lab's spec is valid, and bad specs are refused
// with a message that names the field.
#include "convlab/spec.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

namespace convlab {
namespace {

const char* kGood = R"({
  "lab": "lab07", "slug": "07-demo", "title": "Demo",
  "submission": {"files": ["demo.cu"]},
  "forbidden_symbols": ["cublas"],
  "time_limits_s": {"compile": 60, "test": 30},
  "graders": [
    {"id": "correctness.conv1d", "kind": "correctness", "points": 10},
    {"id": "speedup.conv1d", "kind": "speedup", "points": 5, "threshold": 2.0, "partial_from": 1.0,
     "gated_by": "correctness.conv1d"},
    {"id": "correctness.bonus", "kind": "correctness", "points": 3, "extra_credit": true}
  ]})";

std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return text.replace(pos, from.size(), to);
}

void expect_error(const std::string& text, const std::string& fragment) {
  try {
    parse_spec(text, "test.json");
    ADD_FAILURE() << "accepted a bad spec; expected an error containing '" << fragment << "'";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Spec, ParsesAGoodSpec) {
  const LabSpec s = parse_spec(kGood, "test.json");
  EXPECT_EQ(s.lab, "lab07");
  EXPECT_EQ(s.files, std::vector<std::string>{"demo.cu"});
  EXPECT_EQ(s.test_timeout_s, 30);
  ASSERT_EQ(s.graders.size(), 3u);
  EXPECT_EQ(s.grader("speedup.conv1d").threshold, 2.0);
  EXPECT_EQ(s.total_points(), 15);
  EXPECT_EQ(s.grader_for_test("lab07.speedup.conv1d.n5_r1")->id, "speedup.conv1d");
  EXPECT_EQ(s.grader_for_test("lab07.speedup.conv2d.n5_r1"), nullptr);
  EXPECT_EQ(s.grader_for_test("lab07.speedup.conv1d"), nullptr);  // no case part
  EXPECT_THROW(s.grader("nope"), SpecError);
}

TEST(Spec, AllowsAForbiddenSymbolInOneFile) {
  const std::string two = with(with(kGood, R"("files": ["demo.cu"])", R"("files": ["demo.cu", "lib.cu"])"),
                               R"("forbidden_symbols": ["cublas"])",
                               R"("forbidden_symbols": ["cublas", "cudnn"], "allowed_symbols": {"lib.cu": ["cudnn"]})");
  const LabSpec s = parse_spec(two, "test.json");
  ASSERT_EQ(s.allowed_symbols.count("lib.cu"), 1u);
  EXPECT_EQ(s.allowed_symbols.at("lib.cu"), std::vector<std::string>{"cudnn"});
  EXPECT_EQ(s.allowed_symbols.count("demo.cu"), 0u);
  expect_error(with(two, R"({"lib.cu": ["cudnn"]})", R"({"other.cu": ["cudnn"]})"), "not one of submission.files");
  expect_error(with(two, R"({"lib.cu": ["cudnn"]})", R"({"lib.cu": ["cufft"]})"), "not in forbidden_symbols");
}

TEST(Spec, RefusesBadSpecsNamingTheField) {
  expect_error("{", "not valid JSON");
  expect_error(with(kGood, R"("lab": "lab07")", R"("lab": "7")"), "must look like 'lab01'");
  expect_error(with(kGood, R"("slug": "07-demo")", R"("slug": "08-demo")"), "slug");
  expect_error(with(kGood, R"("files": ["demo.cu"])", R"("files": ["../grader/x.cu"])"), "plain file name");
  expect_error(with(kGood, R"("files": ["demo.cu"])", R"("files": [])"), "at least one file");
  expect_error(with(kGood, R"("test": 30)", R"("test": 0)"), "time_limits_s");
  expect_error(with(kGood, R"("points": 10)", R"("points": -1)"), "graders[0].points");
  expect_error(with(kGood, R"("threshold": 2.0)", R"("threshold": 0)"), "graders[1].threshold");
  expect_error(with(kGood, R"("partial_from": 1.0)", R"("partial_from": 3.0)"), "partial_from");
  expect_error(with(kGood, R"("gated_by": "correctness.conv1d")", R"("gated_by": "correctness.nope")"), "gated_by");
  expect_error(with(kGood, R"("kind": "correctness", "points": 10)", R"("kind": "style", "points": 10)"),
               "must be 'correctness', 'technique' or 'speedup'");
  expect_error(with(kGood, R"("id": "speedup.conv1d")", R"("id": "correctness.conv1d")"), "id");
  expect_error(with(kGood, R"("title": "Demo")", R"("title": "Demo", "tresholds": 1)"), "unknown key 'tresholds'");
  expect_error(with(kGood, R"("id": "correctness.conv1d", "kind": "correctness", "points": 10)",
                    R"("id": "correctness.conv1d", "kind": "correctness", "points": 10, "threshold": 1)"),
               "speedup graders only");
  expect_error(with(kGood, R"("time_limits_s": {"compile": 60, "test": 30},)", ""), "missing 'time_limits_s'");
  expect_error(with(kGood, R"("threshold": 2.0)", R"("threshold": 2.0, "traffic_vs_baseline": 1.5)"),
               "graders[1].traffic_vs_baseline");
  expect_error(with(kGood, R"("threshold": 2.0)", R"("threshold": 2.0, "traffic_vs_baseline": 0.0)"),
               "graders[1].traffic_vs_baseline");
  expect_error(with(kGood, R"("id": "correctness.conv1d", "kind": "correctness", "points": 10)",
                    R"("id": "correctness.conv1d", "kind": "correctness", "points": 10, "traffic_vs_baseline": 0.5)"),
               "speedup graders only");
}

// The timed problem's loads, counted after the timed runs (issue 27): a fraction of the baseline's.
TEST(Spec, TrafficVsBaselineIsAFractionOfASpeedGrader) {
  EXPECT_DOUBLE_EQ(parse_spec(kGood, "t").graders[1].traffic_vs_baseline, 0.0);  // not checked
  const LabSpec s = parse_spec(with(kGood, R"("threshold": 2.0)", R"("threshold": 2.0, "traffic_vs_baseline": 0.35)"), "t");
  EXPECT_DOUBLE_EQ(s.graders[1].traffic_vs_baseline, 0.35);
  ASSERT_NE(s.find_grader("speedup.conv1d"), nullptr);
  EXPECT_DOUBLE_EQ(s.find_grader("speedup.conv1d")->traffic_vs_baseline, 0.35);
  EXPECT_EQ(s.find_grader("speedup.nope"), nullptr);
  EXPECT_EQ(s.graders[1].traffic_count, "words");  // the default
  const LabSpec i = parse_spec(
      with(kGood, R"("threshold": 2.0)", R"("threshold": 2.0, "traffic_vs_baseline": 0.75, "traffic_count": "instructions")"),
      "t");
  EXPECT_EQ(i.graders[1].traffic_count, "instructions");
  expect_error(with(kGood, R"("threshold": 2.0)", R"("threshold": 2.0, "traffic_count": "bytes")"),
               "must be 'words' or 'instructions'");
}

TEST(Spec, CompilerBugPolicyIsOptionalAndChecked) {
  EXPECT_EQ(parse_spec(kGood, "t").compiler_bug_policy, "");  // the command's default
  for (const char* policy : {"full", "review", "as-is"}) {
    const std::string text = with(kGood, R"("title": "Demo")", std::string(R"("title": "Demo", "compiler_bug_policy": ")") + policy + "\"");
    EXPECT_EQ(parse_spec(text, "t").compiler_bug_policy, policy);
  }
  expect_error(with(kGood, R"("title": "Demo")", R"("title": "Demo", "compiler_bug_policy": "lenient")"),
               "compiler_bug_policy: must be 'full', 'review' or 'as-is', not 'lenient'");
  expect_error(with(kGood, R"("title": "Demo")", R"("title": "Demo", "compiler_bug_policy": 1)"), "compiler_bug_policy");
}

TEST(Spec, SpeedPointsBand) {
  const LabSpec spec = parse_spec(kGood, "t");
  const GraderSpec& g = spec.grader("speedup.conv1d");  // threshold 2, partial from 1, 5 points
  EXPECT_EQ(speed_points(g, 2.0), 5);
  EXPECT_EQ(speed_points(g, 9.0), 5);
  EXPECT_DOUBLE_EQ(speed_points(g, 1.5), 2.5);
  EXPECT_EQ(speed_points(g, 1.0), 0);
  EXPECT_EQ(speed_points(g, 0.2), 0);
  EXPECT_EQ(speed_points(g, NAN), 0);
}

TEST(Spec, MissingFileIsAClearError) {
  try {
    load_spec("/nonexistent/grading.json");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/grading.json: cannot open"), std::string::npos);
  }
}

// Every lab in the repository has a valid spec whose kernel files exist in starter_code/.
TEST(Spec, EveryLabSpecIsValid) {
  namespace fs = std::filesystem;
  const fs::path root(CONVLAB_SOURCE_DIR);
  int labs = 0;
  for (const auto& entry : fs::directory_iterator(root / "labs")) {
    if (!entry.is_directory()) continue;
    const fs::path spec_path = entry.path() / "grading.json";
    ASSERT_TRUE(fs::exists(spec_path)) << entry.path() << " has no grading.json";
    const LabSpec s = load_spec(spec_path.string());
    EXPECT_EQ(s.slug, entry.path().filename().string());
    for (const auto& f : s.files)
      EXPECT_TRUE(fs::exists(root / "starter_code" / s.slug / f)) << "starter_code/" << s.slug << "/" << f;
    EXPECT_GT(s.total_points(), 0);
    ++labs;
  }
  EXPECT_GE(labs, 1);
}

}  // namespace
}  // namespace convlab
