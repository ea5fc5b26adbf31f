/// @file bench.hpp
/// @brief Benchmark tables: time, effective bandwidth and its fraction of the
/// copy bandwidth measured in the same run, GFLOP/s and its fraction of the
/// measured FP32 peak, and speed-ups over the baseline and cuDNN.
#pragma once

#include "convlab/stats.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace convlab {

/// One measured kernel on one problem.
struct BenchRow {
  std::string kernel;                  ///< "conv2d_naive (reference)"
  std::string size;                    ///< "8192x8192"
  int radius = 0;                      ///< filter radius
  Stats ms;                            ///< the kernel's times
  double ideal_bytes = 0;              ///< the fewest DRAM bytes: each input read once, each output written once
  double flops = 0;                    ///< 2 per tap per output
  std::optional<double> baseline_ms;   ///< the grader-owned baseline, same run, interleaved
  std::optional<double> cudnn_ms;      ///< cuDNN's best algorithm, same run, interleaved
  std::string note;                    ///< e.g. the cuDNN algorithm chosen
  std::string target;                  ///< what this row must reach, e.g. ">= 90% of copy BW"; empty: none
  std::optional<bool> target_met;      ///< whether it did; empty when it cannot be told (no cuDNN)
};

/// A benchmark's table and the ceilings it is read against.
class BenchReport {
public:
  /// `copy_gbs` and `peak_gflops` were measured in this run.
  BenchReport(std::string title, std::string device, double copy_gbs, double peak_gflops);
  /// Adds a row (and tells the row callback, if any).
  void add(BenchRow row) {
    rows_.push_back(std::move(row));
    if (on_row_) on_row_(rows_.back());
  }
  /// Called with every row as it is added: a benchmark shows its progress row by row.
  void on_row(std::function<void(const BenchRow&)> callback) { on_row_ = std::move(callback); }
  /// One line for a finished row: "conv2d_cached (student) 8192x8192 r=3: 1.234 ms, 812 GB/s (2.10x the baseline)".
  static std::string row_line(const BenchRow& row);
  /// The copy bandwidth measured in this run, GB/s.
  double copy_gbs() const { return copy_gbs_; }
  /// The FP32 FMA peak measured in this run, GFLOP/s.
  double peak_gflops() const { return peak_gflops_; }
  /// The rows so far.
  const std::vector<BenchRow>& rows() const { return rows_; }
  /// The table in Markdown, with a header naming the device and the ceilings; when rows
  /// have targets, two more columns (target, met?) and a count of the targets met.
  std::string markdown() const;
  /// The table as JSON (every number), for tools and the handouts.
  std::string json() const;

private:
  std::string title_, device_;
  double copy_gbs_, peak_gflops_;
  std::vector<BenchRow> rows_;
  std::function<void(const BenchRow&)> on_row_;
};

}  // namespace convlab
