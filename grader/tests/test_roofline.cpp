// The roofline of a benchmark run, from a benchmark's JSON written by hand as
// BenchReport::json() writes it: each kernel at its intensity and speed, the baseline and
// cuDNN once per problem, the measured ceilings drawn and labelled.
#include "convlab/bench.hpp"
#include "convlab/roofline.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace convlab {
namespace {

// Two problems (r = 1 and r = 7 on 8192 x 8192), two kernels of the student's, cuDNN on r = 7.
const char* kBench = R"json({
  "title": "Lab 04 <test>", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "copy_gbs": 3000.0,
  "fp32_peak_gflops": 60000.0,
  "rows": [
    {"kernel": "conv2d_cached (student)", "size": "8192x8192", "radius": 1, "median_ms": 0.2,
     "p10_ms": 0.19, "p90_ms": 0.21, "ideal_bytes": 536870912, "flops": 1207959552, "effective_gbs": 2684,
     "note": "", "baseline_ms": 0.4, "cudnn_ms": null, "target": "", "target_met": null},
    {"kernel": "conv2d_fast (student)", "size": "8192x8192", "radius": 1, "median_ms": 0.18,
     "p10_ms": 0.17, "p90_ms": 0.19, "ideal_bytes": 536870912, "flops": 1207959552, "effective_gbs": 2982,
     "note": "", "baseline_ms": 0.42, "cudnn_ms": null, "target": "", "target_met": null},
    {"kernel": "conv2d_fast (student)", "size": "8192x8192", "radius": 7, "median_ms": 1.0,
     "p10_ms": 0.9, "p90_ms": 1.1, "ideal_bytes": 536870912, "flops": 30198988800, "effective_gbs": 536,
     "note": "", "baseline_ms": 8.0, "cudnn_ms": 9.0, "target": "", "target_met": null}
  ]
})json";

const RooflinePoint* find(const Roofline& r, const std::string& label) {
  for (const auto& p : r.points)
    if (p.label == label) return &p;
  return nullptr;
}

TEST(Roofline, PointsAtTheirIntensityAndSpeed) {
  const Roofline r = roofline_from_bench_json(kBench);
  EXPECT_EQ(r.copy_gbs, 3000);
  EXPECT_EQ(r.peak_gflops, 60000);
  ASSERT_EQ(r.points.size(), 6u);  // 3 rows, 2 baselines (one per problem), 1 cuDNN
  const RooflinePoint* cached = find(r, "conv2d_cached r=1");
  ASSERT_NE(cached, nullptr);
  EXPECT_EQ(cached->series, "your kernels");
  EXPECT_EQ(cached->kernel, "conv2d_cached");
  EXPECT_EQ(cached->problem, "r=1");
  EXPECT_NEAR(cached->intensity, 1207959552.0 / 536870912.0, 1e-12);  // 2.25 FLOP/byte
  EXPECT_NEAR(cached->gflops, 1207959552.0 / 0.2e-3 / 1e9, 1e-6);
  const RooflinePoint* naive = find(r, "naive r=1");
  ASSERT_NE(naive, nullptr);
  EXPECT_EQ(naive->series, "naive baseline (grader)");
  EXPECT_NEAR(naive->gflops, 1207959552.0 / 0.41e-3 / 1e9, 1e-6);  // the median of 0.4 and 0.42 ms
  const RooflinePoint* cudnn = find(r, "cuDNN r=7");
  ASSERT_NE(cudnn, nullptr);
  EXPECT_NEAR(cudnn->gflops, 30198988800.0 / 9e-3 / 1e9, 1e-6);
  EXPECT_EQ(find(r, "cuDNN r=1"), nullptr);  // no cuDNN time for r = 1
}

TEST(Roofline, ReferenceBuildsAndBaselineRows) {
  const Roofline r = roofline_from_bench_json(R"json({"title": "t", "copy_gbs": 100, "fp32_peak_gflops": 1000, "rows": [
    {"kernel": "baseline: naive, filter in global memory (grader)", "size": "4096", "radius": 2, "median_ms": 2,
     "ideal_bytes": 1e6, "flops": 1e7, "baseline_ms": 2},
    {"kernel": "conv1d_tiled (reference)", "size": "4096", "radius": 2, "median_ms": 1, "ideal_bytes": 1e6,
     "flops": 1e7, "baseline_ms": 2.1}]})json");
  ASSERT_EQ(r.points.size(), 2u);  // the baseline row stands for the problem's baseline
  EXPECT_EQ(r.points[0].series, "naive baseline (grader)");
  EXPECT_EQ(r.points[1].series, "reference kernels");
  EXPECT_EQ(r.points[1].label, "conv1d_tiled r=2");
}

TEST(Roofline, BadInputIsRefusedWithTheReason) {
  const auto refusal = [](const std::string& text) {
    try {
      roofline_from_bench_json(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refusal("{ nope").find("not JSON"), std::string::npos);
  EXPECT_NE(refusal("{}").find("no 'rows' array"), std::string::npos);
  EXPECT_NE(refusal(R"json({"rows": [], "fp32_peak_gflops": 1})json").find("'copy_gbs'"), std::string::npos);
  EXPECT_NE(refusal(R"json({"rows": [], "copy_gbs": 1, "fp32_peak_gflops": 1})json").find("no rows"), std::string::npos);
  EXPECT_NE(refusal(R"json({"copy_gbs": 1, "fp32_peak_gflops": 1, "rows": [{"kernel": "k", "median_ms": 0,
    "ideal_bytes": 1, "flops": 1}]})json").find("row 1 (k) needs a positive number 'median_ms'"),
            std::string::npos);
}

TEST(Roofline, TheChartShowsCeilingsPointsAndLegend) {
  const std::string svg = roofline_svg(roofline_from_bench_json(kBench));
  EXPECT_NE(svg.find("Roofline: Lab 04 &lt;test&gt;"), std::string::npos);
  EXPECT_NE(svg.find("NVIDIA H100 80GB HBM3 (sm_90) — ceilings measured in this run"), std::string::npos);
  EXPECT_NE(svg.find(">copy bandwidth 3,000 GB/s</text>"), std::string::npos);
  EXPECT_NE(svg.find(">FP32 FMA peak 60.0 TFLOP/s</text>"), std::string::npos);
  for (const char* label : {">conv2d_cached<", ">conv2d_fast<", ">r=1<", ">r=7<", ">your kernels<",
                            ">naive baseline (grader)<", ">cuDNN<", ">measured ceilings<"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  EXPECT_EQ(svg.find(">naive r=7<"), std::string::npos);  // the baseline is named by the legend, not per point
  // The axes cover the points and the ridge (20 FLOP/byte): intensity up to 100, GFLOP/s to 100k.
  EXPECT_NE(svg.find(">100<"), std::string::npos);
  EXPECT_NE(svg.find(">100k<"), std::string::npos);
  EXPECT_NE(svg.find("arithmetic intensity (FLOP per ideal DRAM byte)"), std::string::npos);
}

TEST(Roofline, ReadsWhatBenchReportWrites) {
  BenchReport report("Lab 01", "GPU", 2000, 40000);
  BenchRow row;
  row.kernel = "conv1d_naive (student)";
  row.size = "67108867";
  row.radius = 8;
  row.ms.median = 1.5;
  row.ideal_bytes = 5.4e8;
  row.flops = 2.3e9;
  row.baseline_ms = 1.6;
  report.add(row);
  const Roofline r = roofline_from_bench_json(report.json());
  ASSERT_EQ(r.points.size(), 2u);
  EXPECT_EQ(r.points[0].label, "conv1d_naive r=8");
  EXPECT_NEAR(r.points[0].intensity, 2.3e9 / 5.4e8, 1e-12);
}

}  // namespace
}  // namespace convlab
