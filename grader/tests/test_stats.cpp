// Statistics and the speed grader's decision rule, driven by synthetic timings.
#include "convlab/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace convlab {
namespace {

TEST(Stats, MedianAndPercentiles) {
  const Stats s = summarize({5, 1, 3, 2, 4});
  EXPECT_EQ(s.count, 5);
  EXPECT_EQ(s.median, 3);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.p10, 1.4);
  EXPECT_DOUBLE_EQ(s.p90, 4.6);
  EXPECT_EQ(summarize({1, 2, 3, 4}).median, 2.5);
  EXPECT_THROW(summarize({}), std::invalid_argument);
  EXPECT_THROW(summarize({1, NAN}), std::invalid_argument);
}

// A fake measurement: every round reports `ratios[k]` (k = round index, last repeated).
struct Fake {
  std::vector<double> ratios;
  std::vector<int> pairs_asked = {};
  SpeedRound operator()(int pairs) {
    const double r = ratios[std::min(pairs_asked.size(), ratios.size() - 1)];
    pairs_asked.push_back(pairs);
    std::vector<double> b(pairs, 1.0), c(pairs, 1.0 / r), q(pairs, r);
    return {summarize(b), summarize(c), summarize(q)};
  }
};

TEST(SpeedDecision, ClearPassTakesOneFullRound) {
  Fake f{{1.0, 1.0}, {}};
  SpeedPolicy p;
  p.threshold = 0.5;
  const SpeedVerdict v = decide_speedup(std::ref(f), p, "x");
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(f.pairs_asked, (std::vector<int>{p.quick_pairs, p.pairs}));
  EXPECT_NE(v.message.find("reaches the threshold"), std::string::npos);
}

TEST(SpeedDecision, FarMissFailsAfterTheQuickRound) {
  Fake f{{0.01}, {}};
  SpeedPolicy p;
  p.threshold = 0.5;
  const SpeedVerdict v = decide_speedup(std::ref(f), p, "conv2d");
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(f.pairs_asked.size(), 1u);
  EXPECT_NE(v.message.find("far below the threshold 0.5x"), std::string::npos) << v.message;
}

TEST(SpeedDecision, NearMissIsMeasuredAgain) {
  Fake f{{0.9, 0.9, 1.05}, {}};  // quick 0.9, first full 0.9 (near miss of 1.0), second full 1.05
  SpeedPolicy p;
  p.threshold = 1.0;
  const SpeedVerdict v = decide_speedup(std::ref(f), p, "x");
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(f.pairs_asked.size(), 3u);
  EXPECT_NE(v.message.find("measured again"), std::string::npos);
}

TEST(SpeedDecision, PersistentNearMissFailsAfterMaxRounds) {
  Fake f{{0.9}, {}};
  SpeedPolicy p;
  p.threshold = 1.0;
  const SpeedVerdict v = decide_speedup(std::ref(f), p, "x");
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(int(f.pairs_asked.size()), 1 + p.max_rounds);
  EXPECT_DOUBLE_EQ(v.ratio, 0.9);
}

TEST(SpeedDecision, ClearMissAfterQuickRoundIsNotRepeated) {
  Fake f{{0.6, 0.6}, {}};  // above far_miss*threshold (0.5) but below near_miss*threshold (0.85)
  SpeedPolicy p;
  p.threshold = 1.0;
  const SpeedVerdict v = decide_speedup(std::ref(f), p, "x");
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(f.pairs_asked.size(), 2u);
}

TEST(SpeedDecision, RejectsBadPolicy) {
  Fake f{{1}, {}};
  SpeedPolicy p;
  p.threshold = 0;
  EXPECT_THROW(decide_speedup(std::ref(f), p, "x"), std::invalid_argument);
}

}  // namespace
}  // namespace convlab
