/// @file stats.hpp
/// @brief Summary statistics and the speed-grader's decision rule (pure C++, testable on a CPU).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace convlab {

/// Median and spread of a sample.
struct Stats {
  int count = 0;      ///< samples
  double median = 0;  ///< median
  double min = 0;     ///< smallest
  double max = 0;     ///< largest
  double p10 = 0;     ///< 10th percentile (linear interpolation)
  double p90 = 0;     ///< 90th percentile
};

/// Summarises `samples`; throws std::invalid_argument if it is empty or holds a NaN.
Stats summarize(std::vector<double> samples);

/// One measuring round of a speed grader: interleaved pairs (baseline, candidate).
struct SpeedRound {
  Stats baseline_ms;   ///< baseline times
  Stats candidate_ms;  ///< candidate (student) times
  Stats ratio;         ///< per-pair baseline / candidate: the speed-up
};

/// How a speed grader decides.
struct SpeedPolicy {
  double threshold = 1.0;   ///< the speed-up to reach (baseline time / candidate time)
  int quick_pairs = 5;      ///< pairs in the first, quick round
  int pairs = 25;           ///< pairs in a full round
  double far_miss = 0.5;    ///< a quick round below far_miss * threshold fails at once
  double near_miss = 0.85;  ///< a full round within [near_miss, 1) * threshold is measured again
  int max_rounds = 3;       ///< full rounds at most
};

/// The verdict, with every round measured.
struct SpeedVerdict {
  bool passed = false;             ///< reached the threshold
  double ratio = 0;                ///< the speed-up judged (median of the best full round)
  std::vector<SpeedRound> rounds;  ///< all rounds, the quick one first
  std::string message;             ///< one paragraph for the student
};

/// Applies the policy: a quick round, then full rounds, measuring again on a
/// near miss; passes as soon as one full round's median ratio reaches the
/// threshold. `measure(pairs)` runs one interleaved round of that many pairs.
/// `what` names the comparison in the message ("conv2d vs the naive baseline").
SpeedVerdict decide_speedup(const std::function<SpeedRound(int pairs)>& measure, const SpeedPolicy& policy,
                            const std::string& what);

}  // namespace convlab
