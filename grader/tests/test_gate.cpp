// Correctness gates speed early: a speed test finds the failed correctness records of this
// build; records of an earlier build, of other kernels, or that passed do not stop it.
#include "convlab/gate.hpp"
#include "convlab/record.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace convlab {
namespace {

namespace fs = std::filesystem;

class Gate : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("convlab-gate-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Writes a record; `age` seconds in the past.
  void record(const std::string& test, bool passed, const std::string& message, int age = 0,
              const std::string& impl = "student") {
    TestRecord r;
    r.lab = "lab01";
    r.test = test;
    r.impl = impl;
    r.passed = passed;
    r.message = message;
    const std::string path = write_record(r, dir_.string());
    fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::seconds(age));
  }
  std::string gate(fs::file_time_type built) const {
    return failed_gate(dir_.string(), "lab01", "correctness.conv1d", "student", built);
  }
  fs::path dir_;
};

TEST_F(Gate, FailedCorrectnessOfThisBuildStopsTheSpeedTest) {
  const auto built = fs::file_time_type::clock::now() - std::chrono::seconds(60);
  record("lab01.correctness.conv1d.n1000003_r3", false, "Failed\n5 of 1000003 outputs are wrong\nmore");
  record("lab01.correctness.conv1d.n1_r3", false, "Failed\n1 of 1 outputs are wrong (1 never written)\n");
  record("lab01.correctness.conv1d.n7_r2", true, "");
  const std::string why = gate(built);
  EXPECT_NE(why.find("not timed: correctness.conv1d failed in this build (2 of its tests, first "
                     "lab01.correctness.conv1d.n1_r3: 1 of 1 outputs are wrong (1 never written))"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("correctness gates speed"), std::string::npos) << why;
}

TEST_F(Gate, NoEvidenceLetsItRun) {
  const auto built = fs::file_time_type::clock::now() - std::chrono::seconds(60);
  EXPECT_EQ(gate(built), "");  // nothing recorded yet: a speed test run alone
  record("lab01.correctness.conv1d.n1_r3", true, "");
  EXPECT_EQ(gate(built), "");  // passed
  record("lab01.correctness.conv1d.n7_r3", false, "Failed\nwrong", 3600);
  EXPECT_EQ(gate(built), "");  // failed, but before this build: other kernels
  record("lab01.correctness.conv2d.w1_h1_r0", false, "Failed\nwrong");
  EXPECT_EQ(gate(built), "");  // another grader
  record("lab01.correctness.conv1d.n9_r3", false, "Failed\nwrong", 0, "mutant:flipped");
  EXPECT_EQ(gate(built), "");  // other kernels (a planted bug's records)
  std::ofstream(dir_ / "lab01.correctness.conv1d.n5_r1.json") << "{ half a rec";
  EXPECT_EQ(gate(built), "");  // a record being written: no evidence
  EXPECT_EQ(failed_gate((dir_ / "missing").string(), "lab01", "correctness.conv1d", "student", built), "");
}

TEST(GateText, FirstInformativeLineSkipsGoogleTestScaffolding) {
  EXPECT_EQ(first_informative_line("Failed\n3 of 7 outputs are wrong\n"), "3 of 7 outputs are wrong");
  EXPECT_EQ(first_informative_line("\n  Failed  \n\nthe kernel launch failed: too many blocks"),
            "the kernel launch failed: too many blocks");
  EXPECT_EQ(first_informative_line("Value of: v.passed\n  Actual: false\nExpected: true\nspeed-up 0.5x is below"),
            "speed-up 0.5x is below");
  EXPECT_EQ(first_informative_line("Expected: true\n"), "Expected: true");  // nothing better
  EXPECT_EQ(first_informative_line(""), "");
  EXPECT_EQ(first_informative_line("Failed\n1D convolution, 31, radius 1:\n31 of 31 outputs are wrong\nmore"),
            "1D convolution, 31, radius 1: 31 of 31 outputs are wrong");
  EXPECT_EQ(first_informative_line("a heading:\n"), "a heading:");
}

TEST_F(Gate, CountsTheFailuresOfThisRun) {
  const auto start = fs::file_time_type::clock::now() - std::chrono::seconds(10);
  record("lab01.correctness.conv1d.n1_r3", false, "wrong", 3600);  // an earlier run
  record("lab01.correctness.conv1d.n7_r3", false, "wrong");
  record("lab01.correctness.conv1d.n9_r3", true, "");
  record("lab01.correctness.conv2d.w1_h1_r0", false, "wrong");
  record("lab01.correctness.conv2d.w2_h1_r0", false, "wrong", 0, "starter");
  EXPECT_EQ(failed_records_since(dir_.string(), "student", start), 2);
}

TEST(GateText, BriefFailureKeepsWhatIsWrongAndTheReplay) {
  const std::string message =
      "Failed\n2D convolution, 100 x 75, radius 3:\n7500 of 7500 outputs are wrong.\nfirst mismatches:\n  out(x=0...\n"
      "Google Test trace:\ntestbed.cpp:170: replay this exact test (seed 42): CONVLAB_SEED=42 ctest --test-dir build/cpu "
      "-R '^lab01.correctness.conv2d.w100_h75_r3$' --output-on-failure";
  EXPECT_EQ(brief_failure("lab01.correctness.conv2d.w100_h75_r3", message),
            "lab01.correctness.conv2d.w100_h75_r3: 2D convolution, 100 x 75, radius 3: 7500 of 7500 outputs are wrong.\n"
            "  (the full report: CONVLAB_SEED=42 ctest --test-dir build/cpu -R '^lab01.correctness.conv2d.w100_h75_r3$' "
            "--output-on-failure)");
  EXPECT_EQ(brief_failure("t", "Failed\nno replay here"), "t: no replay here");
}

TEST(GateText, CaseSizeSortsSmallestFirst) {
  EXPECT_EQ(case_size("lab01.correctness.conv1d.n1_r3"), 1);
  EXPECT_EQ(case_size("lab01.correctness.conv1d.n1000003_r3"), 1000003);
  EXPECT_EQ(case_size("lab01.correctness.conv2d.w1023_h517_r3"), 1023.0 * 517);
  EXPECT_EQ(case_size("lab05.correctness.naive3d.periodic_16x8x4"), 16.0 * 8 * 4);
  EXPECT_LT(case_size("lab01.correctness.conv1d.n1_r3"), case_size("lab01.correctness.conv1d.n1000003_r3"));
  EXPECT_GT(case_size("lab01.cpu.spec.graders_match_tests"), 1e300);
}

}  // namespace
}  // namespace convlab
