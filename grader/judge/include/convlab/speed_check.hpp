/// @file speed_check.hpp
/// @brief The judge's speed grader: the work is recorded in the judge and timed in the runner,
/// where nothing the student's code does escapes the timer or the checks.
///
/// For each pair of a round the runner fills the input afresh (from a secret drawn here), flushes
/// the L2 cache (persisting lines included), times the grader-owned baseline, times the student's
/// launcher with the interval ending only when every stream it used has finished, and compares the
/// student's output with the baseline's, element by element. The judge then decides
/// (decide_speedup()) and fails the grader, with the reason, when:
///  - a timed run's output differs from the baseline's (a result kept from an earlier call, work
///    skipped);
///  - a kernel went to a stream other than the one given (the legacy default stream, a stream the
///    code created), or work was started from another thread;
///  - the median time is below what the data needs at the copy bandwidth measured in the same
///    runner (the timing cannot have seen all of the work).
#pragma once

#include "convlab/gpu.hpp"
#include "convlab/stats.hpp"
#include "convlab/wire.hpp"

#include <optional>
#include <string>

namespace convlab {

/// What a speed grader times and checks.
struct SpeedSetup {
  Launch baseline;                        ///< the grader-owned baseline, on the given stream
  Launch candidate;                       ///< the student's launcher, on the given stream
  Launch prepare;                         ///< before each candidate run, untimed (e.g. poison the output); optional
  cudaStream_t stream = nullptr;          ///< the stream given to both
  wire::Refresh refresh;                  ///< the input refilled before each pair (count 0: the same input)
  std::optional<wire::TimedCheck> check;  ///< the student's output against the baseline's, after every timed run
  double ideal_bytes = 0;                 ///< the least DRAM traffic of the problem (0: no floor)
};

/// The speed grader: records the three launches once (they run once, untimed), then decides
/// speed_repeats() times on measurements made in the runner; returns the worst verdict, failed
/// with its reason if any check above failed. Each verdict's message is printed.
SpeedVerdict check_speed(const SpeedSetup& setup, const SpeedPolicy& policy, const std::string& what);

/// Words for a stream handle the runner reported: "the legacy default stream", ...
std::string describe_stream(std::uint64_t handle);

/// What a call's launches and copies show that a speed or technique grader must not reward: kernels
/// on other streams, work from other threads. Empty if nothing.
std::string escaped_work(const wire::Evidence& evidence);

}  // namespace convlab
