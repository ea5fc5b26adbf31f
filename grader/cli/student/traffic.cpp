// Memory traffic per output from Nsight Compute. See traffic.hpp.
#include "student/traffic.hpp"

#include "common/util.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace convlab::cli {

namespace fs = std::filesystem;

const char kMarkerKernel[] = "convlab_traffic_marker";
// Warp-level SASS instruction counts (each warp instruction once, whatever its lanes), the L1's
// global load sectors (32 bytes each) and the bytes read from DRAM (which the caches keep low
// even for a naive kernel: why loads, not DRAM bytes, tell a tiled kernel from a naive one).
const std::vector<std::string> kTrafficMetrics = {
    "smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_shared_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "dram__bytes_read.sum"};

namespace {

// One CSV record (RFC 4180 quoting: "a, b" is one field, "" inside quotes is a quote).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
      else if (c == '"') quoted = false;
      else cur += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// A number as ncu prints it ("1,234,567", "12.5"); false for anything else ("n/a", "").
bool parse_number(std::string s, double* v) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  s = trim(s);
  if (s.empty()) return false;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') return false;
  *v = d;
  return true;
}

// The factor that turns a value in ncu's `unit` into the metric's base unit: ncu scales its
// figures for reading ("16.78 Mbyte", "1.31 Minst") unless told --print-units base, and a table
// read without its units row is off by that factor (a DRAM read of 16 MB shown as 16.78 bytes).
// ncu's prefixes are decimal (K = 1000); an unknown unit counts as 1.
double unit_factor(const std::string& unit) {
  const std::string u = trim(unit);
  static const std::vector<std::pair<std::string, double>> prefixes = {{"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}};
  static const std::vector<std::string> bases = {"byte", "sector", "inst", "request", "warp"};
  for (const auto& [prefix, factor] : prefixes)
    for (const std::string& base : bases)
      if (u == prefix + base) return factor;
  if (u == "KB") return 1e3;
  if (u == "MB") return 1e6;
  if (u == "GB") return 1e9;
  return 1;
}

std::string fmt(double v, const char* f = "%.3g") {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// A metric per output, or "-" where it was not collected.
std::string per_output(const CallTraffic& t, const std::string& metric, double scale) {
  const auto it = t.sums.find(metric);
  if (it == t.sums.end() || t.call.outputs <= 0) return "-";
  return fmt(it->second * scale / t.call.outputs);
}

}  // namespace

std::vector<TrafficCall> parse_traffic_calls(const std::string& text) {
  std::vector<TrafficCall> calls;
  const std::string tag = "bench: traffic call ";
  for (const std::string& line : split(text, '\n')) {
    if (!starts_with(line, tag)) continue;
    // "bench: traffic call 3: conv1d_tiled_loop (student) | 4194305 | r=2 | taps=5 | 4194305 outputs"
    const std::size_t colon = line.find(": ", tag.size());
    if (colon == std::string::npos) throw Error("a malformed benchmark line: " + line);
    TrafficCall c;
    const std::vector<std::string> parts = split(line.substr(colon + 2), '|');
    double radius = 0, taps = 0;
    if (parts.size() != 5 || !starts_with(trim(parts[2]), "r=") || !starts_with(trim(parts[3]), "taps=") ||
        !parse_number(trim(parts[2]).substr(2), &radius) || !parse_number(trim(parts[3]).substr(5), &taps) || taps < 1)
      throw Error("a malformed benchmark line: " + line);
    c.kernel = trim(parts[0]);
    c.size = trim(parts[1]);
    c.radius = static_cast<int>(radius);
    c.taps = static_cast<int>(taps);
    if (!parse_number(split(trim(parts[4]), ' ').front(), &c.outputs) || c.outputs <= 0)
      throw Error("a malformed benchmark line (outputs): " + line);
    calls.push_back(c);
  }
  return calls;
}

std::vector<ProfiledKernel> parse_ncu_csv(const std::string& csv) {
  std::vector<ProfiledKernel> out;
  std::vector<std::string> header, units;  // units: the row right after the header
  int name_col = -1;
  for (const std::string& line : split(csv, '\n')) {
    if (line.empty() || starts_with(line, "==")) continue;  // ==PROF== and ==WARNING== lines
    const std::vector<std::string> f = csv_fields(line);
    if (header.empty()) {
      if (f.empty() || f[0] != "ID") continue;
      header = f;
      const auto it = std::find(header.begin(), header.end(), "Kernel Name");
      if (it == header.end()) throw Error("ncu's table has no 'Kernel Name' column");
      name_col = static_cast<int>(it - header.begin());
      continue;
    }
    double id = 0;
    if (f.size() == header.size() && units.empty() && trim(f[0]).empty()) {
      units = f;
      continue;
    }
    if (f.size() != header.size() || !parse_number(f[0], &id)) continue;  // a stray line
    ProfiledKernel k;
    k.name = f[name_col];
    for (std::size_t i = 0; i < header.size(); ++i) {
      double v = 0;
      if (std::find(kTrafficMetrics.begin(), kTrafficMetrics.end(), header[i]) != kTrafficMetrics.end() &&
          parse_number(f[i], &v))
        k.metrics[header[i]] = v * (i < units.size() ? unit_factor(units[i]) : 1.0);
    }
    out.push_back(std::move(k));
  }
  if (header.empty()) throw Error("ncu printed no table of kernels (no header row starting with \"ID\")");
  return out;
}

std::vector<CallTraffic> attribute(const std::vector<TrafficCall>& calls, const std::vector<ProfiledKernel>& kernels) {
  std::vector<CallTraffic> out;
  for (const ProfiledKernel& k : kernels) {
    if (k.name.find(kMarkerKernel) != std::string::npos) {
      if (out.size() == calls.size())
        throw Error("ncu profiled more marker kernels (" + std::to_string(out.size() + 1) + ") than the benchmark announced calls (" +
                    std::to_string(calls.size()) + ")");
      CallTraffic t;
      t.call = calls[out.size()];
      out.push_back(std::move(t));
      continue;
    }
    if (out.empty()) continue;  // before the first marker: not a traffic call's
    CallTraffic& t = out.back();
    const bool first = t.kernels.empty();
    t.kernels.push_back(k.name);
    // A metric counts only if every launch of the call has it (a sum over some launches misleads).
    for (const std::string& m : kTrafficMetrics) {
      const auto v = k.metrics.find(m);
      if (v == k.metrics.end()) t.sums.erase(m);
      else if (first) t.sums[m] = v->second;
      else if (t.sums.count(m)) t.sums[m] += v->second;
    }
  }
  if (out.size() != calls.size())
    throw Error("the benchmark announced " + std::to_string(calls.size()) + " traffic calls but ncu profiled " +
                std::to_string(out.size()) + " of their marker kernels");
  return out;
}

std::string traffic_table(const std::vector<CallTraffic>& calls) {
  std::ostringstream t;
  t << "| kernel | size | r | taps | launches | global loads / output | shared loads / output | "
       "global sectors / output | DRAM bytes / output |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const CallTraffic& c : calls) {
    t << "| " << c.call.kernel << " | " << c.call.size << " | " << c.call.radius << " | " << c.call.taps << " | "
      << c.kernels.size() << " | " << per_output(c, kTrafficMetrics[0], 32) << " | "
      << per_output(c, kTrafficMetrics[1], 32) << " | " << per_output(c, kTrafficMetrics[2], 1) << " | "
      << per_output(c, kTrafficMetrics[3], 1) << " |\n";
  }
  t << "\nLoads per output: load instructions executed, each warp instruction counted for its 32 lanes "
       "(an upper bound where lanes idle; a float4 load is one). A naive kernel makes one global load per tap "
       "for the input (and one for the filter if it reads it from global memory); a tiled one about "
       "(T + 2r) / T for a tile of T outputs, its taps coming from shared memory. Sectors are the 32-byte pieces "
       "the L1 fetched; DRAM bytes read stay near 4 per output (each input read once) for naive and tiled kernels "
       "alike: the caches absorb the reuse, which is why loads, not DRAM bytes, tell the designs apart.\n";
  return t.str();
}

std::string traffic_json(const std::vector<CallTraffic>& calls) {
  nlohmann::json j = nlohmann::json::array();
  for (const CallTraffic& c : calls) {
    nlohmann::json e = {{"kernel", c.call.kernel},   {"size", c.call.size},    {"radius", c.call.radius},
                        {"taps", c.call.taps},       {"outputs", c.call.outputs}, {"launches", c.kernels},
                        {"metrics", c.sums}};
    j.push_back(e);
  }
  return j.dump(1);
}

std::string ncu_failure(const std::string& out) {
  if (out.find("ERR_NVGPUCTRPERM") != std::string::npos)
    return "this machine does not let you read the GPU's performance counters (ncu: ERR_NVGPUCTRPERM; an "
           "administrator can allow it: NVreg_RestrictProfilingToAdminUsers=0)";
  if (out.find("No kernels were profiled") != std::string::npos)
    return "ncu profiled no kernel (the benchmark's profiling ranges were not seen)";
  if (out.find("Failed to find metric") != std::string::npos ||
      (out.find("metric") != std::string::npos && out.find("not found") != std::string::npos))
    return "this ncu does not know one of the metrics asked for (" + head_lines(out, 3) + ")";
  if (out.find("LibraryNotLoaded") != std::string::npos || out.find("Failed to initialize the profiler") != std::string::npos)
    return "ncu could not start its profiler here (" + trim(head_lines(out, 2)) + ")";
  return "";
}

std::string find_ncu() {
  if (const std::string p = which("ncu"); !p.empty()) return p;
  std::error_code ec;
  if (fs::exists("/usr/local/cuda/bin/ncu", ec)) return "/usr/local/cuda/bin/ncu";
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator("/opt/nvidia/nsight-compute", ec))
    if (fs::exists(e.path() / "ncu", ec)) found.push_back((e.path() / "ncu").string());
  std::sort(found.begin(), found.end());  // the newest version last
  return found.empty() ? std::string() : found.back();
}

}  // namespace convlab::cli
