// `convlab bench LAB --traffic`: each kernel's memory traffic per output on a GPU, read from
// Nsight Compute (issue 13, item 2: the chapter's "global loads per output" measured). The lab's
// benchmark runs once under ncu with --traffic (BenchOptions::traffic): after timing a problem it
// runs the baseline and each kernel once more in a profiling range, announces each call on stdout
// ("bench: traffic call N: KERNEL | SIZE | r=R | taps=T | OUTPUTS outputs") and opens it with a marker
// kernel, so that the kernels ncu lists can be told apart by call, however many a launcher starts.
// Without ncu, or where the GPU's counters may not be read, it says so and names the CPU backend,
// which counts every load exactly (README: "What it measures").
#pragma once

#include <map>
#include <string>
#include <vector>

namespace convlab::cli {

/// One profiled call of a benchmark, as it announced it.
struct TrafficCall {
  std::string kernel, size;
  int radius = 0;
  int taps = 1;        ///< the taps of one output: what a naive kernel loads from global memory per output
  double outputs = 0;  ///< outputs the call computed (cell updates, for a stencil of several steps)
};

/// One kernel launch in ncu's raw CSV page: its name and the metrics collected.
struct ProfiledKernel {
  std::string name;
  std::map<std::string, double> metrics;  ///< metric name -> value (absent: not collected)
};

/// A call with the launches that followed its marker, the metrics summed over them.
struct CallTraffic {
  TrafficCall call;
  std::vector<std::string> kernels;       ///< the launches' names, in order
  std::map<std::string, double> sums;     ///< metric -> sum over the launches (a metric every launch had)
};

/// The metrics asked of ncu, and the marker kernel's name.
extern const std::vector<std::string> kTrafficMetrics;
extern const char kMarkerKernel[];

/// The benchmark's announced calls, from its stdout (other lines ignored).
std::vector<TrafficCall> parse_traffic_calls(const std::string& bench_stdout);
/// ncu's `--csv --page raw` output: a header row (ID, ..., Kernel Name, ..., metrics), a units
/// row, then a row per launch. Lines before the header (ncu's own ==PROF== lines) are skipped.
/// Values are turned into base units by the units row ("Mbyte": x 10^6).
/// Throws Error when no such table is there.
std::vector<ProfiledKernel> parse_ncu_csv(const std::string& csv);
/// Each call with the launches after its marker (launches before the first marker are dropped).
/// Throws Error when the markers and the calls do not pair up one to one.
std::vector<CallTraffic> attribute(const std::vector<TrafficCall>& calls, const std::vector<ProfiledKernel>& kernels);
/// The table: per call, its taps per output (the naive design's input loads per output),
/// launches, global and shared load instructions per output (each warp instruction counted for
/// its 32 lanes), global load sectors and DRAM bytes read per output.
std::string traffic_table(const std::vector<CallTraffic>& calls);
/// The same as JSON (every number), for tools.
std::string traffic_json(const std::vector<CallTraffic>& calls);
/// Why ncu could not profile, in plain words, from its output; empty when no known cause shows.
std::string ncu_failure(const std::string& ncu_output);
/// ncu on this machine: PATH, /usr/local/cuda/bin, /opt/nvidia/nsight-compute/*/; empty if none.
std::string find_ncu();

}  // namespace convlab::cli
