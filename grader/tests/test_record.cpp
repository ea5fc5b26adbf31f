// The JSON outcome record.
#include "convlab/record.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace convlab {
namespace {

TEST(Record, WritesEveryField) {
  TestRecord r;
  r.lab = "lab01";
  r.test = "lab01.speedup.conv2d.w8191_h8193_r1";
  r.impl = "reference";
  r.passed = true;
  r.message = "ok";
  r.seed = 77;
  r.base_seed = 5;
  r.time_ms = 0.5;
  r.baseline_ms = 0.55;
  r.ratio = 1.1;
  r.threshold = 0.5;
  const auto dir = (std::filesystem::temp_directory_path() / "convlab_record_test").string();
  const std::string path = write_record(r, dir);
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["lab"], "lab01");
  EXPECT_EQ(j["test"], r.test);
  EXPECT_EQ(j["impl"], "reference");
  EXPECT_EQ(j["passed"], true);
  EXPECT_EQ(j["skipped"], false);
  EXPECT_EQ(j["seed"], 77);
  EXPECT_EQ(j["base_seed"], 5);
  EXPECT_DOUBLE_EQ(j["ratio"].get<double>(), 1.1);
  EXPECT_DOUBLE_EQ(j["threshold"].get<double>(), 0.5);
  EXPECT_TRUE(j["max_error"].is_null());  // not measured by a speed test
  EXPECT_EQ(std::filesystem::path(path).filename(), r.test + ".json");
  std::filesystem::remove_all(dir);
}

TEST(Record, CurrentRecordResets) {
  current_record().message = "left over";
  reset_current_record();
  EXPECT_TRUE(current_record().message.empty());
}

}  // namespace
}  // namespace convlab
