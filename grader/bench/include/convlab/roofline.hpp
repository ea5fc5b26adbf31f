/// @file roofline.hpp
/// @brief The roofline picture of a benchmark run: the ceilings measured in the same run (copy
/// bandwidth, FP32 FMA peak), and every kernel at its arithmetic intensity (FLOP per ideal DRAM
/// byte) and its achieved GFLOP/s: the naive baseline, the lab's kernels as built (the
/// student's, or the reference in an instructor's build), and cuDNN where it ran.
///
/// `convlab bench LAB --plot FILE.svg` draws it from the benchmark's JSON (BenchReport::json()).
#pragma once

#include <string>
#include <vector>

namespace convlab {

/// One measured kernel on one problem.
struct RooflinePoint {
  std::string label;        ///< "conv2d_cached r=3 8192x8192"
  std::string kernel;       ///< "conv2d_cached" (the point's label in the chart)
  std::string problem;      ///< "r=3 8192x8192" (the label of its column of points)
  std::string series;       ///< "naive baseline", "your kernels", "reference kernels", "cuDNN", ...
  double intensity = 0;     ///< FLOP per ideal byte
  double gflops = 0;        ///< achieved GFLOP/s
};

/// A benchmark run as the roofline sees it.
struct Roofline {
  std::string title;             ///< the benchmark's title
  std::string device;            ///< the GPU
  double copy_gbs = 0;           ///< copy bandwidth measured in the run, GB/s
  double peak_gflops = 0;        ///< FP32 FMA peak measured in the run, GFLOP/s
  std::vector<RooflinePoint> points;  ///< every kernel of every row, baselines once per problem
};

/// Reads a benchmark's JSON. A row's kernel name ending in "(student)" or "(reference)" says
/// whose kernel it is; rows named "baseline..." and every row's baseline_ms give the naive
/// baseline (once per problem); cudnn_ms gives cuDNN's point. Throws std::invalid_argument,
/// naming what is wrong, for text that is not such a JSON or has no usable row.
Roofline roofline_from_bench_json(const std::string& json_text);

/// The chart as an SVG document: log-log axes, the bandwidth roof up to the ridge point and the
/// compute roof after it, both labelled with their measured values, a point per kernel and
/// problem (the lab's kernels labelled by name; the baseline and cuDNN by their markers), each
/// column of points labelled with its problem at the foot of the plot, a legend.
std::string roofline_svg(const Roofline& r);

}  // namespace convlab
