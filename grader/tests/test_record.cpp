// The JSON outcome record.
#include "convlab/record.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

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

// The records' signature is SipHash-2-4: the reference vectors of its paper (key 00..0f).
TEST(Record, MacIsSipHash24) {
  const std::string key = "0706050403020100" "0f0e0d0c0b0a0908";  // bytes 00..0f, read little-endian
  EXPECT_EQ(convlab::record_mac("", key), "726fdb47dd0e0e31");
  std::string fifteen;
  for (int i = 0; i < 15; ++i) fifteen += static_cast<char>(i);
  EXPECT_EQ(convlab::record_mac(fifteen, key), "a129ca6149be45e5");
  EXPECT_THROW(convlab::record_mac("x", "abc"), std::invalid_argument);
}

TEST(Record, SignedRecordsCarryAVerifiableMac) {
  const std::string dir = ::testing::TempDir() + "/convlab-signed";
  convlab::TestRecord r;
  r.lab = "lab01";
  r.test = "lab01.correctness.conv1d.n1_r0";
  r.passed = true;
  const std::string key = "00112233445566778899aabbccddeeff";
  const std::string path = convlab::write_record(r, dir, key);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::json::parse(text.str());
  ASSERT_TRUE(j.contains("mac"));
  EXPECT_EQ(j.at("mac").get<std::string>(), convlab::record_mac(convlab::record_signed_text(text.str()), key));
  // A forged verdict does not carry the same mac.
  auto forged = j;
  forged["passed"] = false;
  EXPECT_NE(j.at("mac").get<std::string>(), convlab::record_mac(convlab::record_signed_text(forged.dump()), key));
}
