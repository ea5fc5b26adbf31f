// Progress of long computations: the step is named, restored, and a quiet process beats.
#include "convlab/progress.hpp"

#include "convlab/bench.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace convlab {
namespace {

TEST(Progress, StepsNestAndRestore) {
  progress_step("outer");
  {
    const ProgressStep inner("inner");
    EXPECT_EQ(current_progress_step(), "inner");
  }
  EXPECT_EQ(current_progress_step(), "outer");
  progress_step("");
}

TEST(Progress, HeartbeatText) {
  EXPECT_EQ(heartbeat_text(35.2, "computing the expected output"), "[  35 s] computing the expected output ...");
  EXPECT_EQ(heartbeat_text(0, ""), "[   0 s] working ...");
}

TEST(Progress, AQuietProcessBeatsAndALineResetsTheTimer) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Heartbeat hb(f, 0.3);
    const ProgressStep step("a long step");
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    EXPECT_GE(hb.beats(), 2);
    hb.line("bench: row 1: done");
  }
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  std::fclose(f);
  EXPECT_NE(text.find("a long step ..."), std::string::npos) << text;  // a file is not a terminal: plain lines
  EXPECT_NE(text.find("bench: row 1: done\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("\033["), std::string::npos) << text;
}

TEST(Progress, BenchRowsReportAsTheyAreAdded) {
  BenchReport report("t", "d", 1000, 10000);
  std::vector<std::string> lines;
  report.on_row([&](const BenchRow& r) { lines.push_back(BenchReport::row_line(r)); });
  BenchRow row;
  row.kernel = "k (student)";
  row.size = "1024x1024";
  row.radius = 3;
  row.ms.median = 2.0;
  row.ideal_bytes = 2e9;
  row.flops = 4e9;
  row.baseline_ms = 4.0;
  report.add(row);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "k (student) 1024x1024 r=3: 2 ms, 1000 GB/s, 2000 GFLOP/s (2.00x the baseline)");
}

}  // namespace
}  // namespace convlab
