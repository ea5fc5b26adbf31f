// Benchmark tables. See convlab/bench.hpp.
#include "convlab/bench.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>

namespace convlab {

BenchReport::BenchReport(std::string title, std::string device, double copy_gbs, double peak_gflops)
    : title_(std::move(title)), device_(std::move(device)), copy_gbs_(copy_gbs), peak_gflops_(peak_gflops) {}

std::string BenchReport::row_line(const BenchRow& r) {
  char buf[512];
  const double s = r.ms.median * 1e-3;
  std::snprintf(buf, sizeof buf, "%s %s r=%d: %.4g ms, %.0f GB/s, %.0f GFLOP/s", r.kernel.c_str(), r.size.c_str(),
                r.radius, r.ms.median, s > 0 ? r.ideal_bytes / s / 1e9 : 0.0, s > 0 ? r.flops / s / 1e9 : 0.0);
  std::string line = buf;
  if (r.baseline_ms && r.ms.median > 0) {
    std::snprintf(buf, sizeof buf, " (%.2fx the baseline)", *r.baseline_ms / r.ms.median);
    line += buf;
  }
  return line;
}

std::string BenchReport::markdown() const {
  std::ostringstream os;
  char buf[512];
  os << "### " << title_ << "\n\n" << device_ << "\n\n";
  std::snprintf(buf, sizeof buf,
                "Measured in this run: copy bandwidth %.0f GB/s (float4 copy, bytes read + written), FP32 FMA peak "
                "%.1f TFLOP/s. Times are medians with the 10th-90th percentile; the L2 cache is flushed before "
                "every run; ratios come from interleaved runs.\n\n",
                copy_gbs_, peak_gflops_ / 1e3);
  os << buf;
  bool targets = false;  // the target columns appear only when some row has a target
  for (const auto& r : rows_) targets |= !r.target.empty();
  os << "| kernel | size | r | time (ms) | p10-p90 (ms) | effective GB/s | % of copy BW | GFLOP/s | % of FP32 peak "
        "| vs baseline | vs cuDNN |"
     << (targets ? " target | met? |" : "") << "\n";
  os << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" << (targets ? "---|---|" : "") << "\n";
  for (const auto& r : rows_) {
    const double s = r.ms.median * 1e-3;
    const double gbs = r.ideal_bytes / s / 1e9, gflops = r.flops / s / 1e9;
    std::snprintf(buf, sizeof buf, "| %s | %s | %d | %.4f | %.4f-%.4f | %.0f | %.1f%% | %.0f | %.1f%% | ", r.kernel.c_str(),
                  r.size.c_str(), r.radius, r.ms.median, r.ms.p10, r.ms.p90, gbs, 100 * gbs / copy_gbs_, gflops,
                  100 * gflops / peak_gflops_);
    os << buf;
    if (r.baseline_ms) {
      std::snprintf(buf, sizeof buf, "%.2fx", *r.baseline_ms / r.ms.median);
      os << buf;
    } else {
      os << "-";
    }
    os << " | ";
    if (r.cudnn_ms) {
      std::snprintf(buf, sizeof buf, "%.2fx (cuDNN %.4f ms%s%s)", *r.cudnn_ms / r.ms.median, *r.cudnn_ms,
                    r.note.empty() ? "" : ", ", r.note.c_str());
      os << buf;
    } else {
      os << "-";
    }
    os << " |";
    if (targets)
      os << " " << (r.target.empty() ? "-" : r.target) << " | "
         << (r.target.empty() ? "-" : !r.target_met ? "?" : *r.target_met ? "yes" : "**no**") << " |";
    os << "\n";
  }
  if (targets) {
    int met = 0, missed = 0, unknown = 0;
    for (const auto& r : rows_)
      if (!r.target.empty()) (!r.target_met ? unknown : *r.target_met ? met : missed) += 1;
    os << "\nTargets met: " << met << " of " << met + missed + unknown;
    if (unknown) os << " (" << unknown << " not decidable here)";
    os << ".\n";
  }
  return os.str();
}

std::string BenchReport::json() const {
  nlohmann::json j;
  j["title"] = title_;
  j["device"] = device_;
  j["copy_gbs"] = copy_gbs_;
  j["fp32_peak_gflops"] = peak_gflops_;
  j["rows"] = nlohmann::json::array();
  for (const auto& r : rows_) {
    nlohmann::json row{{"kernel", r.kernel},         {"size", r.size},
                       {"radius", r.radius},         {"median_ms", r.ms.median},
                       {"p10_ms", r.ms.p10},         {"p90_ms", r.ms.p90},
                       {"ideal_bytes", r.ideal_bytes}, {"flops", r.flops},
                       {"effective_gbs", r.ideal_bytes / (r.ms.median * 1e-3) / 1e9},
                       {"note", r.note}};
    row["baseline_ms"] = r.baseline_ms ? nlohmann::json(*r.baseline_ms) : nlohmann::json(nullptr);
    row["cudnn_ms"] = r.cudnn_ms ? nlohmann::json(*r.cudnn_ms) : nlohmann::json(nullptr);
    row["target"] = r.target;
    row["target_met"] = r.target_met ? nlohmann::json(*r.target_met) : nlohmann::json(nullptr);
    j["rows"].push_back(row);
  }
  return j.dump(2);
}

}  // namespace convlab
