// Statistics and the speed grader's decision rule. See convlab/stats.hpp.
#include "convlab/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace convlab {
namespace {

double percentile(const std::vector<double>& sorted, double q) {
  const double pos = q * double(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - double(lo));
}

std::string describe_round(const SpeedRound& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "student %.4g ms, baseline %.4g ms (medians); speed-up %.3gx, 10th-90th percentile %.3g-%.3gx over %d "
                "interleaved pairs",
                r.candidate_ms.median, r.baseline_ms.median, r.ratio.median, r.ratio.p10, r.ratio.p90, r.ratio.count);
  return buf;
}

}  // namespace

Stats summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize: no samples");
  for (double s : samples)
    if (std::isnan(s)) throw std::invalid_argument("summarize: NaN sample");
  std::sort(samples.begin(), samples.end());
  Stats st;
  st.count = static_cast<int>(samples.size());
  st.min = samples.front();
  st.max = samples.back();
  st.median = percentile(samples, 0.5);
  st.p10 = percentile(samples, 0.1);
  st.p90 = percentile(samples, 0.9);
  return st;
}

SpeedVerdict decide_speedup(const std::function<SpeedRound(int)>& measure, const SpeedPolicy& p,
                            const std::string& what) {
  if (!(p.threshold > 0) || p.quick_pairs < 1 || p.pairs < 1 || p.max_rounds < 1)
    throw std::invalid_argument("decide_speedup: bad policy");
  SpeedVerdict v;
  char buf[256];
  // A quick round first: a kernel many times too slow fails without a long measurement.
  v.rounds.push_back(measure(p.quick_pairs));
  if (v.rounds.back().ratio.median < p.far_miss * p.threshold) {
    v.ratio = v.rounds.back().ratio.median;
    std::snprintf(buf, sizeof buf, "%s: speed-up %.3gx is far below the threshold %.3gx (", what.c_str(), v.ratio,
                  p.threshold);
    v.message = buf + describe_round(v.rounds.back()) + ").";
    return v;
  }
  for (int round = 0; round < p.max_rounds; ++round) {
    v.rounds.push_back(measure(p.pairs));
    const double r = v.rounds.back().ratio.median;
    v.ratio = std::max(v.ratio, r);
    if (r >= p.threshold) {
      v.passed = true;
      v.ratio = r;
      std::snprintf(buf, sizeof buf, "%s: speed-up %.3gx reaches the threshold %.3gx (", what.c_str(), r,
                    p.threshold);
      v.message = buf + describe_round(v.rounds.back()) + (round > 0 ? "; measured again after a near miss)." : ").");
      return v;
    }
    if (r < p.near_miss * p.threshold) break;  // a clear miss: measuring again would not change it
  }
  std::snprintf(buf, sizeof buf, "%s: speed-up %.3gx is below the threshold %.3gx after %d full round(s) (",
                what.c_str(), v.ratio, p.threshold, int(v.rounds.size()) - 1);
  v.message = buf + describe_round(v.rounds.back()) + ").";
  return v;
}

}  // namespace convlab
