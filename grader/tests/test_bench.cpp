// Benchmark tables: the target columns appear only when a row has a target.
#include "convlab/bench.hpp"

#include <gtest/gtest.h>

namespace convlab {
namespace {

BenchRow row(const std::string& kernel, double ms) {
  BenchRow r;
  r.kernel = kernel;
  r.size = "8192x8192";
  r.radius = 1;
  r.ms = summarize({ms});
  r.ideal_bytes = 2.0 * 8192 * 8192 * 4;
  r.flops = 2.0 * 8192 * 8192 * 9;
  return r;
}

TEST(BenchReport, NoTargetColumnsWithoutTargets) {
  BenchReport report("t", "GPU", 2800, 56000);
  report.add(row("a", 0.5));
  EXPECT_EQ(report.markdown().find("met?"), std::string::npos);
}

TEST(BenchReport, TargetsAndWhetherTheyWereMet) {
  BenchReport report("t", "GPU", 2800, 56000);
  BenchRow met = row("fast", 0.2), missed = row("slow", 0.5), unknown = row("no cudnn", 0.2), none = row("none", 1);
  met.target = ">= 90% of copy BW";
  met.target_met = true;
  missed.target = ">= 90% of copy BW";
  missed.target_met = false;
  unknown.target = ">= 2.5x cuDNN (no cuDNN here)";
  for (const auto& r : {met, missed, unknown, none}) report.add(r);
  const std::string md = report.markdown();
  EXPECT_NE(md.find("| target | met? |"), std::string::npos) << md;
  EXPECT_NE(md.find("| >= 90% of copy BW | yes |"), std::string::npos) << md;
  EXPECT_NE(md.find("| >= 90% of copy BW | **no** |"), std::string::npos) << md;
  EXPECT_NE(md.find("| >= 2.5x cuDNN (no cuDNN here) | ? |"), std::string::npos) << md;
  EXPECT_NE(md.find("| - | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("Targets met: 1 of 3 (1 not decidable here)."), std::string::npos) << md;
  const std::string js = report.json();
  EXPECT_NE(js.find("\"target_met\": false"), std::string::npos) << js;
}

}  // namespace
}  // namespace convlab
