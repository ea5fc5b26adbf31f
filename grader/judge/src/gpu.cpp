// The judge's view of the GPU: whether the runner has one, and the speed graders, which record
// the work here and time it in the runner. See convlab/speed_check.hpp.
#include "convlab/gpu.hpp"

#include "convlab/check.hpp"
#include "convlab/record.hpp"
#include "convlab/remote.hpp"
#include "convlab/speed_check.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>

namespace convlab {

bool gpu_available(std::string* reason) {
  const remote::DeviceStatus& s = remote::device_status();
  if (!s.available && reason) *reason = s.reason;
  return s.available;
}

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

void record_speed(const SpeedVerdict& verdict, double threshold) {
  auto& rec = current_record();
  if (!verdict.rounds.empty()) {
    rec.time_ms = verdict.rounds.back().candidate_ms.median;
    rec.baseline_ms = verdict.rounds.back().baseline_ms.median;
  }
  rec.ratio = verdict.ratio;
  rec.threshold = threshold;
}

std::string describe_stream(std::uint64_t handle) {
  if (handle == 0 || handle == 1) return "the legacy default stream (a launch without a stream argument)";
  if (handle == 2) return "the per-thread default stream";
  return "a stream your code created";
}

std::string escaped_work(const wire::Evidence& e) {
  std::string out;
  std::set<std::string> seen;
  for (const auto& k : e.launches) {
    if (k.on_given_stream || !seen.insert(k.name).second) continue;
    out += "kernel " + k.name + " was launched on " + describe_stream(k.stream) +
           ", not on the stream the grader passed to your launcher; ";
  }
  std::size_t copies = 0;
  for (const auto& t : e.transfers) copies += !t.on_given_stream;
  if (copies) out += std::to_string(copies) + " asynchronous copies or memsets went to another stream; ";
  if (e.stray_launches)
    out += std::to_string(e.stray_launches) +
           " launches or copies were made from another thread (the graders see only what your launcher does "
           "before it returns); ";
  if (!out.empty()) {
    out.erase(out.size() - 2);
    out += ". Launch every kernel on the stream you are given: kernel<<<grid, block, shared_bytes, stream>>>(...).";
  }
  return out;
}

namespace {

wire::Program record(const Launch& launch, cudaStream_t stream) {
  remote::ProgramRecorder rec;
  if (launch) launch(stream);
  return rec.program();
}

}  // namespace

SpeedVerdict check_speed(const SpeedSetup& s, const SpeedPolicy& policy, const std::string& what) {
  // The work, recorded as it runs once (untimed); what the student's run did is kept.
  remote::clear_calls();
  const wire::Program base = record(s.baseline, s.stream);
  const wire::Program prep = record(s.prepare, s.stream);
  const std::size_t first_candidate_call = remote::calls().size();
  const wire::Program cand = record(s.candidate, s.stream);
  CONVLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream));
  std::string problems;
  for (std::size_t i = first_candidate_call; i < remote::calls().size(); ++i)
    if (const std::string w = escaped_work(remote::calls()[i].evidence); !w.empty() && problems.find(w) == std::string::npos)
      problems += w + "\n";

  double floor_ms = 0, copy_gbs = 0;
  if (s.ideal_bytes > 0) {
    copy_gbs = remote::ceilings().first;
    if (copy_gbs > 0) floor_ms = 0.8 * s.ideal_bytes / (copy_gbs * 1e9) * 1e3;  // 20 % below the copy kernel's time
  }

  const auto measure = [&](int pairs) {
    remote::MeasureRequest q;
    q.baseline = base;
    q.candidate = cand;
    q.prepare = prep;
    q.pairs = pairs;
    q.stream = s.stream;
    q.refresh = s.refresh;
    q.check = s.check;
    const remote::MeasureReply r = remote::measure(q);
    std::vector<double> b, c, ratio;
    for (std::size_t i = 0; i < r.pairs.size(); ++i) {
      const auto& p = r.pairs[i];
      b.push_back(p.baseline_ms);
      c.push_back(p.candidate_ms);
      ratio.push_back(p.candidate_ms > 0 ? p.baseline_ms / p.candidate_ms : 1e9);
      if (p.mismatches && problems.find("timed run") == std::string::npos) {
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "timed run %zu: %llu outputs differ from the baseline's for the same input, the first at index "
                      "%llu (%.7g, the baseline %.7g): the kernel is wrong on the timed problem, or does not compute its "
                      "whole result from the input it is given (the graders change the input between timed runs: a "
                      "result kept from an earlier call, or work skipped, shows here)\n",
                      i + 1, static_cast<unsigned long long>(p.mismatches), static_cast<unsigned long long>(p.first),
                      p.got, p.want);
        problems += buf;
      }
    }
    if (const std::string w = escaped_work(r.evidence); !w.empty() && problems.find(w) == std::string::npos)
      problems += w + "\n";
    return SpeedRound{summarize(b), summarize(c), summarize(ratio)};
  };

  const int repeats = speed_repeats();
  SpeedVerdict worst;
  for (int k = 0; k < repeats; ++k) {
    SpeedVerdict v = decide_speedup(measure, policy, what);
    if (!problems.empty()) {
      v.passed = false;
      v.message = "no speed-up is awarded: " + problems + v.message;
    }
    if (floor_ms > 0 && !v.rounds.empty() && v.rounds.back().candidate_ms.median < floor_ms) {
      char buf[512];
      std::snprintf(buf, sizeof buf,
                    "no speed-up is awarded: the median time, %.4g ms, is below %.4g ms, the least time in which %.0f MB "
                    "can be read and written at the copy bandwidth measured in this run (%.0f GB/s): the timing cannot "
                    "have seen all of the work.\n",
                    v.rounds.back().candidate_ms.median, floor_ms, s.ideal_bytes / 1e6, copy_gbs);
      v.passed = false;
      v.message = buf + v.message;
    }
    if (repeats > 1) std::printf("repeat %d/%d: ", k + 1, repeats);
    std::printf("%s\n", v.message.c_str());
    if (k == 0 || (!v.passed && worst.passed) || (v.passed == worst.passed && v.ratio < worst.ratio))
      worst = std::move(v);
  }
  return worst;
}

SpeedVerdict check_speedup_repeated(const Launch& baseline, const Launch& candidate, const SpeedPolicy& policy,
                                    const std::string& what, const Launch& prepare) {
  cudaStream_t stream = nullptr;
  CONVLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct Destroy {
    cudaStream_t s;
    ~Destroy() { cudaStreamDestroy(s); }
  } destroy{stream};
  SpeedSetup s;
  s.baseline = baseline;
  s.candidate = candidate;
  s.prepare = prepare;
  s.stream = stream;
  return check_speed(s, policy, what);
}

}  // namespace convlab
