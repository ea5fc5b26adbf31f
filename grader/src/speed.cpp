// Repeated speed decisions (CONVLAB_SPEED_REPEAT): the same speed grader decided several
// times on the same data, so that the GPU check can show a grader is robust to noise.
#include "convlab/gpu.hpp"
#include "convlab/record.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace convlab {

int speed_repeats() {
  const char* env = std::getenv("CONVLAB_SPEED_REPEAT");
  if (env == nullptr || *env == '\0') return 1;
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  if (*end != '\0' || n < 1 || n > 100) {
    throw std::invalid_argument(std::string("CONVLAB_SPEED_REPEAT must be a whole number from 1 to 100, not '") +
                                env + "'");
  }
  return static_cast<int>(n);
}

SpeedVerdict check_speedup_repeated(const Launch& baseline, const Launch& candidate, const SpeedPolicy& policy,
                                    const std::string& what, const Launch& prepare) {
  const int repeats = speed_repeats();
  SpeedVerdict worst;
  for (int k = 0; k < repeats; ++k) {
    SpeedVerdict v = check_speedup(baseline, candidate, policy, what, prepare);
    if (repeats > 1) std::printf("repeat %d/%d: ", k + 1, repeats);
    std::printf("%s\n", v.message.c_str());
    if (k == 0 || (!v.passed && worst.passed) || (v.passed == worst.passed && v.ratio < worst.ratio))
      worst = std::move(v);
  }
  return worst;
}

void record_speed(const SpeedVerdict& verdict, double threshold) {
  auto& rec = current_record();
  if (!verdict.rounds.empty()) {
    rec.time_ms = verdict.rounds.back().candidate_ms.median;
    rec.baseline_ms = verdict.rounds.back().baseline_ms.median;
  }
  rec.ratio = verdict.ratio;
  rec.threshold = threshold;
}

}  // namespace convlab
