// The judge's remote: the public API (convlab/remote.hpp) over the runner process of remote.cpp,
// whose state and requests it shares through remote_internal.hpp.
#include "convlab/remote.hpp"
#include "remote_internal.hpp"

#include "convlab/check.hpp"
#include "convlab/record.hpp"
#include "convlab/exec_busy.hpp"
#include "convlab/remote_contract.hpp"
#include "convlab/runner_words.hpp"
#include "convlab/speed_check.hpp"
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace convlab::remote {

using namespace detail;

void configure(const RunnerOptions& options) {
  for (g_which = 1; g_which >= 0; --g_which)
    if (conn().started) stop(true);
  g_which = 0;
  g_options = options;
  g_status = DeviceStatus{};
}

const RunnerOptions& options() { return g_options; }

const DeviceStatus& device_status() {
  if (!conn().started) start();
  return g_status;
}

void begin_test(int schedule, std::uint64_t seed) {
  // Each test begins on the plain runner; a runner whose context was lost is replaced.
  for (g_which = 1; g_which >= 0; --g_which)
    if (conn().started && conn().restart) {
      const auto t = std::chrono::steady_clock::now();
      stop(true);
      g_seconds["startup"] += seconds_since(t);
    }
  // A plain runner that counted (Counted::on_this_runner) is never timed again: it becomes the
  // counting runner, its profiler set up and warm (measured on an H200: a counting runner started
  // afresh took 0.5 to 0.85 s before its first count), unless one runs; then it is replaced.
  if (g_runners[0].started && g_runners[0].counting) {
    if (!g_runners[1].started) {
      const std::uint64_t generation = g_runners[0].generation;
      g_runners[1] = std::move(g_runners[0]);
      g_runners[0] = Connection{};
      for (auto& [address, owner] : g_owner)
        if (owner.first == 0 && owner.second == generation) owner.first = 1;
    } else {
      const auto t = std::chrono::steady_clock::now();
      g_which = 0;
      stop(true);
      g_seconds["startup"] += seconds_since(t);
    }
  }
  g_which = 0;
  g_ended.clear();
  g_calls.clear();
  g_last_error = g_sync_error = cudaSuccess;
  g_schedule = schedule;
  g_schedule_seed = seed;
}

std::string call_raw(const std::string& entry, const std::string& args) {
  wire::Writer w;
  w.str(entry);
  w.u32(static_cast<std::uint32_t>(g_schedule));
  w.u64(g_schedule_seed);
  w.str(args);
  const Reply r = request(Op::call, w.take(), entry);
  if (r.status != Status::ok)
    throw CudaError(r.code, "the runner could not call " + entry + ": " + cudaGetErrorString(r.code));
  std::uint8_t kind = 0;
  std::string message, result;
  std::int64_t thrown = 0;
  try {
    wire::Reader rd(r.payload);
    kind = rd.u8();
    message = rd.str();
    thrown = rd.i64();
    const auto read_error = [&rd]() {
      const auto code = static_cast<cudaError_t>(rd.u32());
      std::string name = rd.str(), text = rd.str();
      if (code != cudaSuccess) g_error_text[code] = {std::move(name), std::move(text)};
      return code;
    };
    g_last_error = read_error();
    g_sync_error = read_error();
    if (rd.u8()) conn().restart = true;
    result = rd.str(wire::kMaxPayload);
    g_calls.push_back({entry, wire::Evidence::read(rd)});
    rd.finish();
    note_kernels(entry, g_calls.back().evidence);
  } catch (const wire::WireError& e) {
    fail(std::string("answered a call with garbage (") + e.what() + ") and was stopped", true);
  }
  if (kind > 4) fail("answered a call with an unknown outcome and was stopped", true);
  if (kind == 0) {
    wire::ProgramOp op;
    op.kind = wire::ProgramOp::Kind::call;
    op.entry = entry;
    op.args = args;
    note_op(std::move(op));
  }
  switch (kind) {
    case 1: throw std::invalid_argument(message);
    case 2: throw std::runtime_error(message);
    case 3: throw CudaError(static_cast<cudaError_t>(thrown), message);
    case 4: throw std::runtime_error(message);
    default: return result;
  }
}

const std::vector<CallRecord>& calls() { return g_calls; }

std::string take_printed() {
  drain_printed(std::size_t(1) << 20);
  const Printed p = std::exchange(g_printed, Printed{});
  std::string text;
  for (std::size_t i = 0; i < p.kept.size();) {
    const char c = p.kept[i];
    if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7F)) {
      text += c;
      ++i;
    } else if (const std::size_t n = utf8_length(p.kept, i)) {
      text += p.kept.substr(i, n);
      i += n;
    } else {
      if (c != '\r') text += '?';  // a terminal's control codes, a byte that is not text
      ++i;
    }
  }
  if (!text.empty() && text.back() != '\n') text += '\n';
  if (p.cut_bytes > 0)
    text += "[convlab: cut here; " + std::to_string(p.cut_lines) + " more lines (" + std::to_string(p.cut_bytes) +
            " bytes) not kept: the graders keep the first " + std::to_string(kPrintedLines) + " lines of each test]\n";
  return text;
}
void clear_calls() { g_calls.clear(); }
std::map<std::string, double> take_seconds() { return std::exchange(g_seconds, {}); }
const std::map<std::string, std::map<std::string, std::string>>& kernels_launched() { return g_kernels_launched; }

ProgramRecorder::ProgramRecorder() : outer_(g_recording) { g_recording = this; }
ProgramRecorder::~ProgramRecorder() { g_recording = outer_; }

MeasureReply measure(const MeasureRequest& q) {
  wire::Writer w;
  wire::write_program(w, q.baseline);
  wire::write_program(w, q.candidate);
  wire::write_program(w, q.prepare);
  w.u64(static_cast<std::uint64_t>(q.pairs));
  w.u64(addr(q.stream));
  w.u64(q.refresh.address);
  w.u64(q.refresh.count);
  // The fresh inputs' secret: drawn here for each round, never known to the runner in advance.
  std::random_device rd;
  w.u64((std::uint64_t(rd()) << 32) ^ rd());
  wire::write_program(w, q.refresh.copies);
  w.u8(q.check.has_value());
  const wire::TimedCheck c = q.check.value_or(wire::TimedCheck{});
  w.u64(c.candidate);
  w.u64(c.reference);
  w.u64(c.count);
  w.f64(c.tolerance);
  const Reply r = request(Op::measure, w.take(), "a timed round");
  if (r.status != Status::ok)
    throw CudaError(r.code, std::string("a timed run failed: ") + cudaGetErrorString(r.code));
  MeasureReply out;
  try {
    wire::Reader rd(r.payload);
    const std::uint64_t n = rd.u64();
    if (n != static_cast<std::uint64_t>(q.pairs)) throw wire::WireError("a round of another length");
    out.pairs.resize(n);
    for (auto& p : out.pairs) {
      p.baseline_ms = rd.f64();
      p.candidate_ms = rd.f64();
      p.mismatches = rd.u64();
      p.first = rd.u64();
      p.got = rd.f64();
      p.want = rd.f64();
      if (!(p.baseline_ms > 0) || !(p.candidate_ms >= 0)) throw wire::WireError("a time that is not a time");
    }
    out.evidence = wire::Evidence::read(rd);
    rd.finish();
    // The round's wait, split: the baseline's and the student's timed intervals, the rest (fresh
    // inputs, cache flushes, checks) left as the overhead.
    for (const auto& p : out.pairs) {
      g_seconds["timed_baseline"] += p.baseline_ms / 1e3;
      g_seconds["timed_student"] += p.candidate_ms / 1e3;
      g_seconds["timed_overhead"] -= (p.baseline_ms + p.candidate_ms) / 1e3;
    }
  } catch (const wire::WireError& e) {
    fail(std::string("answered a timed round with garbage (") + e.what() + ") and was stopped", true);
  }
  return out;
}

std::string set_counting(bool on, Counted where) {
  if (!on) {
    if (g_which == 1) drain_printed(std::size_t(1) << 20), g_which = 0;
    return {};
  }
  // The CPU backend counts every call in its one runner (its counts are the emulator's).
  if (device_status().backend != "cuda") {
    const Reply r = request(Op::counting, std::string(1, '\1'), "switching the counters");
    if (r.status != Status::ok) throw CudaError(r.code, "switching the counters failed");
    wire::Reader rd(r.payload);
    std::string why = rd.str(4096);
    rd.finish();
    return why;
  }
  if (!g_counters_refused.empty()) return g_counters_refused;
  const bool to_counting_runner = where == Counted::on_counting_runner && g_which == 0;
  if (to_counting_runner) drain_printed(std::size_t(1) << 20);
  RunnerChoice choice(to_counting_runner ? 1 : g_which);
  if (conn().started && !conn().pending.empty()) {  // started ahead (prestart_counting): its answers
    const auto t = std::chrono::steady_clock::now();
    settle();
    g_seconds["counting"] += seconds_since(t);
    if (!g_counters_refused.empty()) return g_counters_refused;
  }
  if (conn().started && conn().counting) {
    choice.keep();
    return {};
  }
  if (g_which == 0) {
    // The GPU's profiler serves one context at a time: while the counting runner holds it, the
    // plain runner's counters are refused as busy (CUPTI_ERROR_HARDWARE_BUSY, seen on an H100 in
    // a process that ran technique tests before speed tests: `convlab check`). That runner quits
    // first, and starts again when a later test counts there.
    if (g_runners[1].started) {
      const auto t = std::chrono::steady_clock::now();
      {
        RunnerChoice counting_runner(1);
        quit();
      }
      g_seconds["counting"] += seconds_since(t);
    }
    // The plain runner, asked to count, keeps the profiler from here on: it is never timed again
    // (begin_test makes it the counting runner).
  }
  const std::string why = counting_reply(request(Op::counting, std::string(1, '\1'), "switching the GPU's counters on"));
  if (why.empty()) choice.keep();
  return why;
}

namespace detail {

// The runner's answer to Op::counting: "" and the connection counting, or why the GPU refuses its
// counters (then refused to every later test of this judge).
std::string counting_reply(const Reply& r) {
  if (r.status != Status::ok) throw CudaError(r.code, "switching the GPU's counters on failed");
  wire::Reader rd(r.payload);
  std::string why = rd.str(4096);
  rd.finish();
  if (!why.empty()) {
    g_counters_refused = why;
    return why;
  }
  conn().counting = true;
  return {};
}

// Reads the replies of the requests sent ahead to the current runner, in order.
void settle() {
  while (!conn().pending.empty()) {
    const Op op = conn().pending.front();
    conn().pending.erase(conn().pending.begin());
    g_current = op == Op::hello ? std::string(runner_words::kStartUp) : "switching the GPU's counters on";
    const Reply r = receive_reply(g_current);
    if (op == Op::hello) hello_reply(r);
    else counting_reply(r);
  }
}

}  // namespace detail

std::uint64_t plain_runner_generation() { return g_runners[0].started ? g_runners[0].generation : 0; }

void prepare_counting() {
#ifndef CONVLAB_BACKEND_CPU
  // Not while a counting runner holds the profiler: the set-up would wait for it (busy counters)
  // until set_counting ends it, and give up after a minute of timed runs.
  if (g_which != 0 || !conn().started || conn().counting || conn().preparing || g_runners[1].started ||
      !g_counters_refused.empty() || device_status().backend != "cuda")
    return;
  const Reply r = request(Op::counting, std::string(1, '\3'), "setting the GPU's counters up");
  if (r.status != Status::ok) throw CudaError(r.code, "setting the GPU's counters up failed");
  wire::Reader rd(r.payload);
  rd.str(4096);  // "" (a failure shows when the counters are turned on)
  rd.finish();
  conn().preparing = true;
#endif
}

void prestart_counting() {
#ifndef CONVLAB_BACKEND_CPU
  if (g_runners[1].started || !g_counters_refused.empty()) return;
  RunnerChoice counting_runner(1);
  try {
    start(true);  // its hello is read when the runner is first used
    send_request(Op::counting, std::string(1, '\2'));  // counters on, and a first session to warm up
    conn().pending.push_back(Op::counting);
  } catch (const std::exception&) {
    if (conn().started) stop(true);  // it starts again, as before, when a test counts
  }
#endif
}

void random_fill(float* device, std::size_t count, std::uint64_t nonce) {
  if (count == 0) return;
  wire::Writer w;
  w.u64(addr(device));
  w.u64(count);
  w.u64(nonce);
  const Reply r = request(Op::random_fill, w.take(), "a fill of the input on the device");
  if (r.status != Status::ok) throw CudaError(r.code, "filling the input on the device failed");
}

void note_owner(std::uint64_t address) { g_owner[address] = {g_which, conn().generation}; }

OwnerScope::OwnerScope(std::uint64_t address) : was_(g_which) {
  const auto it = g_owner.find(address);
  if (it == g_owner.end()) {  // not one of ours: the current runner answers for it
    alive_ = conn().started;
    return;
  }
  const auto [which, generation] = it->second;
  g_owner.erase(it);
  alive_ = g_runners[which].started && g_runners[which].generation == generation;  // else gone, with its memory
  if (alive_) g_which = which;
}

OwnerScope::~OwnerScope() { g_which = was_; }

std::pair<double, double> ceilings() {
  // Measured once per judge: its runners all run on the one device it was given, and a plain
  // runner that counted serves no plain work after its test (begin_test): a fresh one would
  // measure them again.
  static std::optional<std::pair<double, double>> measured;
  if (measured) return *measured;
  const Reply r = request(Op::ceilings, "", "the measurement of the copy bandwidth and FP32 peak");
  if (r.status != Status::ok) throw CudaError(r.code, "measuring the device's ceilings failed");
  wire::Reader rd(r.payload);
  const double bw = rd.f64(), peak = rd.f64();
  rd.finish();
  measured = std::pair<double, double>{bw, peak};
  return *measured;
}

}  // namespace convlab::remote
