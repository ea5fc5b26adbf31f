// convlab release: which files a student copy holds, the instructor-only regions it strips, the
// links into left-out pages it unlinks, and the presets it keeps (the whole release, built and
// unpacked, is release_check.sh's).
#include "admin/release.hpp"
#include "common/util.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace convlab::cli {
namespace {

TEST(Release, LeavesOutAnswersAndInstructorFiles) {
  for (const char* answer : {"grader/baselines/conv_naive.cu", "grader/baselines/stencil_naive.cu",
                             "grader/device/src/cudnn_conv.cpp", "labs/06-conv-im2col-cudnn/baseline_lab06.cu",
                             "labs/05-stencil/instructor/async_tiles.cu"})
    EXPECT_FALSE(in_student_copy(answer)) << answer;
  for (const char* instructor : {".ci/run", ".ci/gpu-check", "docs/instructor.md", "docs/instructors.md", "docs/quickstart.md",
                                 "grader/prebuilt/MANIFEST.json"})
    EXPECT_FALSE(in_student_copy(instructor)) << instructor;
  // A lab's baseline header stays (its tests and benchmark call the compiled baseline), and so do a
  // student's files that merely share the name's pattern.
  for (const char* shared : {"starter_code/01-conv-basic/conv_basic.cu", "grader/device/src/gpu.cu", "grader/harness/src/spec.cpp",
                             "grader/device/include/convlab/cudnn_conv.hpp", "docs/grading.md", "docs/mainpage.md", "README.md",
                             "labs/06-conv-im2col-cudnn/baseline_lab06.hpp", "labs/06-conv-im2col-cudnn/test_lab06.cpp",
                             "starter_code/06-conv-im2col-cudnn/baseline_mine.cu", "labs/baseline_x.cu",
                             "labs/05-stencil/instructor.md", "starter_code/05-stencil/instructor/notes.cu"})
    EXPECT_TRUE(in_student_copy(shared)) << shared;
}

TEST(Release, StripsInstructorOnlyRegions) {
  const std::string text =
      "# Title\nfor students\n<!-- instructor-only -->\n## Instructors\nsecret\n<!-- /instructor-only -->\n"
      "after\n<!-- instructor-only -->\nmore\n<!-- /instructor-only -->\nlast\n";
  EXPECT_EQ(strip_instructor_only(text, "README.md"), "# Title\nfor students\nafter\nlast\n");
  EXPECT_EQ(strip_instructor_only("no regions\n", "a.md"), "no regions\n");
}

TEST(Release, RefusesUnbalancedRegionsNamingTheLine) {
  try {
    strip_instructor_only("a\n<!-- instructor-only -->\nb\n", "docs/x.md");
    FAIL() << "an unclosed region was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("docs/x.md:2: the instructor-only region opened here is never closed"),
              std::string::npos)
        << e.what();
  }
  try {
    strip_instructor_only("a\nb\n<!-- /instructor-only -->\n", "README.md");
    FAIL() << "a closing marker alone was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("README.md:3: <!-- /instructor-only --> without"), std::string::npos) << e.what();
  }
  try {
    strip_instructor_only("<!-- instructor-only -->\n<!-- instructor-only -->\n<!-- /instructor-only -->\n", "a.md");
    FAIL() << "a nested region was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a.md:2: an instructor-only region opens inside the one opened at line 1"),
              std::string::npos)
        << e.what();
  }
}

TEST(Release, FindsAnchorsAndUnlinksReferencesToLeftOutOnes) {
  const auto a = doc_anchors("# Instructor notes {#instructor}\n## Lab 1 {#instructor_lab01}\n\\page other Other\n");
  EXPECT_EQ(a, (std::set<std::string>{"instructor", "instructor_lab01", "other"}));
  const std::string page = "how they were set: \\ref instructor_lab02\n  \"instructor notes\"). See \\ref lab02 \"Lab 2\".";
  EXPECT_EQ(unlink_refs(page, {"instructor_lab02"}, "labs/02/README.md"),
            "how they were set: instructor notes). See \\ref lab02 \"Lab 2\".");
  try {
    unlink_refs("line one\nsee \\ref instructor_lab02 for more\n", {"instructor_lab02"}, "labs/02/README.md");
    FAIL() << "a reference without link text was dropped silently";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("labs/02/README.md:2: \\ref instructor_lab02 points into instructor material"),
              std::string::npos)
        << e.what();
  }
}

TEST(Release, KeepsTheStudentPresetsOnly) {
  const std::string presets = R"({
    "version": 6,
    "configurePresets": [
      {"name": "base", "hidden": true, "generator": "Ninja"},
      {"name": "default", "inherits": "base", "cacheVariables": {"CONVLAB_IMPL": "student"}},
      {"name": "ci", "inherits": "base", "cacheVariables": {"CONVLAB_IMPL": "reference"}},
      {"name": "cpu", "inherits": "base", "cacheVariables": {"CONVLAB_BACKEND": "cpu", "CONVLAB_IMPL": "student"}}
    ],
    "buildPresets": [{"name": "default", "configurePreset": "default"}, {"name": "ci", "configurePreset": "ci"}],
    "testPresets": [
      {"name": "tbase", "hidden": true, "output": {}},
      {"name": "default", "inherits": "tbase", "configurePreset": "default"},
      {"name": "ci", "inherits": "tbase", "configurePreset": "ci"}
    ],
    "workflowPresets": [
      {"name": "default", "steps": [{"type": "configure", "name": "default"}, {"type": "build", "name": "default"},
                                    {"type": "test", "name": "default"}]},
      {"name": "ci", "steps": [{"type": "configure", "name": "ci"}, {"type": "build", "name": "ci"}]}
    ]})";
  const auto j = nlohmann::json::parse(student_presets(presets));
  const auto names = [&](const char* key) {
    std::vector<std::string> out;
    for (const auto& p : j[key]) out.push_back(p["name"]);
    return out;
  };
  EXPECT_EQ(names("configurePresets"), (std::vector<std::string>{"base", "default", "cpu"}));
  EXPECT_EQ(names("buildPresets"), (std::vector<std::string>{"default"}));
  EXPECT_EQ(names("testPresets"), (std::vector<std::string>{"tbase", "default"}));
  EXPECT_EQ(names("workflowPresets"), (std::vector<std::string>{"default"}));
  EXPECT_EQ(j["version"], 6);
}

TEST(Release, RefusesAStudentPresetThatInheritsAnInstructorOne) {
  const std::string presets = R"({"version": 6, "configurePresets": [
      {"name": "instructor", "cacheVariables": {"CONVLAB_IMPL": "reference"}},
      {"name": "default", "inherits": "instructor", "cacheVariables": {"CONVLAB_IMPL": "student"}}]})";
  try {
    student_presets(presets);
    FAIL() << "a student preset built on an instructor preset was kept";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'default' inherits from 'instructor', which is not a student's preset"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace convlab::cli
