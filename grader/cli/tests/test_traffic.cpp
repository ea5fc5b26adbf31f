// `convlab bench --traffic` without a GPU: the benchmark's announced calls, ncu's raw CSV table,
// the pairing of calls and launches by the marker kernel, the table, and ncu's failures named.
#include "student/traffic.hpp"
#include "common/util.hpp"

#include <gtest/gtest.h>

namespace {

using namespace convlab::cli;

const char kBench[] =
    "bench: ceilings measured: copy bandwidth 3000 GB/s\n"
    "==PROF== Profiling \"convlab_traffic_marker\": 0%....100% - 4 passes\n"
    "bench: traffic call 1: baseline: naive, filter in global memory (grader) | 4194305 | r=2 | taps=5 | 4194305 outputs\n"
    "bench: traffic call 2: conv1d_tiled_loop (student) | 4194305 | r=2 | taps=5 | 4194305 outputs\n"
    "bench: traffic call 3: conv2d_separable (student) | 1031x1029 | r=1 | taps=6 | 1060899 outputs\n";

// ncu --csv --page raw: a header row, a units row, a row per launch. Kernel names hold commas;
// numbers may carry thousands separators. A launch before the first marker belongs to no call.
std::string csv() {
  const std::string head =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
      "\"dram__bytes_read.sum\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\","
      "\"smsp__sass_inst_executed_op_global_ld.sum\",\"smsp__sass_inst_executed_op_shared_ld.sum\"\n"
      "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"byte\",\"sector\",\"inst\",\"inst\"\n";
  const auto row = [](int id, const std::string& name, const std::string& dram, const std::string& sectors,
                      const std::string& gld, const std::string& sld) {
    return "\"" + std::to_string(id) + "\",\"77\",\"lab03_bench\",\"h\",\"" + name + "\",\"1\",\"14\",\"" + dram +
           "\",\"" + sectors + "\",\"" + gld + "\",\"" + sld + "\"\n";
  };
  return "==PROF== Disconnected from process 77\n" + head +
         row(0, "copy_float4(const float4 *, float4 *, unsigned long)", "1", "1", "1", "0") +
         row(1, "convlab::(anonymous namespace)::convlab_traffic_marker(int *, int)", "0", "0", "0", "0") +
         // naive 1D, r = 2: 5 input + 5 filter loads per thread, one warp instruction per 32 outputs each
         row(2, "convlab::baseline::conv1d_naive_kernel(const float *, const float *, float *, int, int)",
             "16,777,220", "2,621,441", "1,310,720", "0") +
         row(3, "convlab::(anonymous namespace)::convlab_traffic_marker(int *, int)", "0", "0", "0", "0") +
         row(4, "conv1d_tiled_loop_kernel(const float *, float *, int, int)", "16777220", "524288", "135169.5",
             "655360") +
         row(5, "convlab::(anonymous namespace)::convlab_traffic_marker(int *, int)", "0", "0", "0", "0") +
         row(6, "rows_pass(const float *, float *, int, int, int)", "4243596", "100", "33153", "99459") +
         row(7, "columns_pass(const float *, float *, int, int, int)", "4243596", "100", "33153", "99459");
}

TEST(Traffic, TheBenchmarksCallsAreRead) {
  const auto calls = parse_traffic_calls(kBench);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[1].kernel, "conv1d_tiled_loop (student)");
  EXPECT_EQ(calls[2].size, "1031x1029");
  EXPECT_EQ(calls[2].radius, 1);
  EXPECT_EQ(calls[2].taps, 6);  // two passes of 2r + 1 taps: the benchmark says so, the size cannot
  EXPECT_DOUBLE_EQ(calls[2].outputs, 1060899);
  EXPECT_THROW(parse_traffic_calls("bench: traffic call 1: no bars here\n"), Error);
  EXPECT_THROW(parse_traffic_calls("bench: traffic call 1: k | 5 | r=1 | taps=3 | none outputs\n"), Error);
  EXPECT_THROW(parse_traffic_calls("bench: traffic call 1: k | 5 | r=1 | 5 outputs\n"), Error);  // no taps
  EXPECT_THROW(parse_traffic_calls("bench: traffic call 1: k | 5 | r=1 | taps=x | 5 outputs\n"), Error);
}

TEST(Traffic, NcusTableIsReadWithQuotedCommasAndSeparators) {
  const auto k = parse_ncu_csv(csv());
  ASSERT_EQ(k.size(), 8u);  // the units row is no launch
  EXPECT_EQ(k[2].name, "convlab::baseline::conv1d_naive_kernel(const float *, const float *, float *, int, int)");
  EXPECT_DOUBLE_EQ(k[2].metrics.at("dram__bytes_read.sum"), 16777220);
  EXPECT_DOUBLE_EQ(k[4].metrics.at("smsp__sass_inst_executed_op_global_ld.sum"), 135169.5);
  EXPECT_THROW(parse_ncu_csv("==PROF== nothing profiled\n"), Error);
  EXPECT_THROW(parse_ncu_csv("\"ID\",\"Process ID\"\n\"1\",\"2\"\n"), Error);  // no Kernel Name column
}

// ncu scales its figures for reading unless told --print-units base ("16.78 Mbyte"): the units
// row says by how much. Seen on the H100: DRAM bytes per output read as 4e-06 without it.
TEST(Traffic, ScaledUnitsAreTurnedIntoBaseUnits) {
  const std::string scaled =
      "\"ID\",\"Kernel Name\",\"dram__bytes_read.sum\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\","
      "\"smsp__sass_inst_executed_op_global_ld.sum\",\"smsp__sass_inst_executed_op_shared_ld.sum\"\n"
      "\"\",\"\",\"Mbyte\",\"Ksector\",\"Minst\",\"inst\"\n"
      "\"0\",\"k(float *)\",\"16.78\",\"2,621.44\",\"1.31\",\"0\"\n";
  const auto k = parse_ncu_csv(scaled);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_NEAR(k[0].metrics.at("dram__bytes_read.sum"), 16.78e6, 1e-3);
  EXPECT_NEAR(k[0].metrics.at("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 2621440, 1e-3);
  EXPECT_NEAR(k[0].metrics.at("smsp__sass_inst_executed_op_global_ld.sum"), 1.31e6, 1e-3);
  EXPECT_DOUBLE_EQ(k[0].metrics.at("smsp__sass_inst_executed_op_shared_ld.sum"), 0);
}

TEST(Traffic, LaunchesBelongToTheCallOfTheMarkerBeforeThem) {
  const auto t = attribute(parse_traffic_calls(kBench), parse_ncu_csv(csv()));
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].kernels.size(), 1u);  // the copy kernel before the first marker is nobody's
  EXPECT_EQ(t[2].kernels.size(), 2u);  // a launcher of two passes: both counted
  EXPECT_DOUBLE_EQ(t[2].sums.at("smsp__sass_inst_executed_op_shared_ld.sum"), 2 * 99459);
  // More markers than calls, or fewer, is a mismatch said as such.
  auto fewer = parse_traffic_calls(kBench);
  fewer.pop_back();
  EXPECT_THROW(attribute(fewer, parse_ncu_csv(csv())), Error);
  auto more = parse_traffic_calls(kBench);
  more.push_back(more.back());
  EXPECT_THROW(attribute(more, parse_ncu_csv(csv())), Error);
}

TEST(Traffic, TheTableGivesLoadsPerOutput) {
  const std::string table = traffic_table(attribute(parse_traffic_calls(kBench), parse_ncu_csv(csv())));
  // naive 1D, r = 2: 1310720 warp loads x 32 / 4194305 outputs = 10 (5 taps of input, 5 of filter)
  EXPECT_NE(table.find("| baseline: naive, filter in global memory (grader) | 4194305 | 2 | 5 | 1 | 10 | 0 | 0.625 | 4 |"),
            std::string::npos)
      << table;
  // the tiled kernel: about one global load per output, its taps from shared memory
  EXPECT_NE(table.find("| conv1d_tiled_loop (student) | 4194305 | 2 | 5 | 1 | 1.03 | 5 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| conv2d_separable (student) | 1031x1029 | 1 | 6 | 2 |"), std::string::npos) << table;
  const std::string json = traffic_json(attribute(parse_traffic_calls(kBench), parse_ncu_csv(csv())));
  EXPECT_NE(json.find("\"launches\""), std::string::npos);
}

TEST(Traffic, AMetricSomeLaunchesLackIsNotSummed) {
  std::vector<ProfiledKernel> k(3);
  k[0].name = kMarkerKernel;
  k[1].name = "a";
  k[1].metrics = {{kTrafficMetrics[0], 10}, {kTrafficMetrics[1], 4}};
  k[2].name = "b";
  k[2].metrics = {{kTrafficMetrics[0], 6}};
  TrafficCall c;
  c.outputs = 32;
  const auto t = attribute({c}, k);
  EXPECT_DOUBLE_EQ(t[0].sums.at(kTrafficMetrics[0]), 16);
  EXPECT_EQ(t[0].sums.count(kTrafficMetrics[1]), 0u);  // only a's: shown as "-"
}

TEST(Traffic, NcusFailuresAreNamed) {
  EXPECT_NE(ncu_failure("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                        "Performance Counters").find("performance counters"),
            std::string::npos);
  EXPECT_NE(ncu_failure("==WARNING== No kernels were profiled.").find("no kernel"), std::string::npos);
  EXPECT_NE(ncu_failure("==ERROR== Failed to find metric smsp__x").find("does not know"), std::string::npos);
  EXPECT_NE(ncu_failure("==ERROR== Failed to initialize the profiler: LibraryNotLoaded").find("could not start"),
            std::string::npos);
  EXPECT_EQ(ncu_failure("all is well"), "");
}

}  // namespace
