/// @file remote.hpp
/// @brief The judge's end of the judge–runner split: starting the runner, calling the student's
/// contract in it, what the runner saw each call do, and timing inside the runner.
///
/// A lab's graders are two executables. The judge (`labNN_graders`, the one ctest runs) holds the
/// tests, the golden models, the tolerances and the records, and no student code. The runner
/// (`labNN_runner`) holds the student's kernels and the harness code that feeds them. The judge
/// starts the runner on its first device operation, talks to it through pipes and a shared memory
/// window (convlab/wire.hpp), and restarts it after it crashed. Whatever the runner sends is data
/// to be checked: it never writes a record and cannot change a verdict.
#pragma once

#include "convlab/remote_codec.hpp"
#include "convlab/stats.hpp"
#include "convlab/wire.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace convlab::remote {

/// How the judge starts its runner; set once by run_lab_main() from the command line.
struct RunnerOptions {
  std::string path;                 ///< the runner executable (--convlab-runner=PATH)
  std::vector<std::string> prefix;  ///< a command the runner is started under, e.g. a sandbox (--convlab-runner-prefix=PATH)
  std::string facts_path;           ///< the runner's compiled-code facts (--convlab-facts=PATH; default PATH.facts.json)
  double timeout_s = 600;           ///< the longest the runner may take to answer one request
  std::size_t window_bytes = std::size_t(64) << 20;  ///< the shared data window
};

/// Sets the options; a running runner is stopped.
void configure(const RunnerOptions& options);
/// The options in force.
const RunnerOptions& options();

/// The runner failed: it could not start, crashed, hung or broke the protocol. what() says which.
class RunnerError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// What the runner prints (its stdout and stderr: a student's debug output, printf in a kernel)
/// comes to the judge through a pipe of its own, never the judge's output or the reply channel,
/// and is kept apart from everything a verdict is read from: a printed "[  PASSED  ]" is text.
/// Per test the first kPrintedLines lines (at most kPrintedBytes bytes) are kept; the rest is
/// counted and dropped, and a runner that prints more than kPrintedStopBytes in one test (a print
/// in an endless loop) is stopped, which fails the test at "the output limit".
constexpr std::size_t kPrintedLines = 40;
constexpr std::size_t kPrintedBytes = 4096;
constexpr std::size_t kPrintedStopBytes = std::size_t(16) << 20;
/// What the runner printed since the last call, as readable text (control characters and bytes
/// that are not UTF-8 shown as '?'), ending with a line that says how much was cut, if any; "" if
/// it printed nothing. Forgets it.
std::string take_printed();

/// The runner's answer to hello (asking starts the runner).
struct DeviceStatus {
  std::string backend;               ///< "cuda" or "cpu"
  bool available = false;            ///< kernels can run
  std::string reason;                ///< why not
  std::string summary;               ///< the device, in one line
  std::vector<std::string> entries;  ///< the runner's entries
};
/// Starts the runner if needed and returns what it said; throws RunnerError if it cannot start.
const DeviceStatus& device_status();

/// The judge's view of the lab's table of entries (convlab_remote_entries()): the names only,
/// checked against the runner's when it starts.
class Entries {
public:
  template <class R, class... P>
  void add(const std::string& name, R (*)(P...)) {
    names_.push_back(name);
  }
  const std::vector<std::string>& names() const { return names_; }

private:
  std::vector<std::string> names_;
};

/// Called at the start of each test: a runner that crashed or lost its device context in an
/// earlier test is replaced, the evidence log is emptied, and `schedule`/`seed` order the threads of
/// a block on the CPU backend (0 shuffle, 1 in order, 2 reverse).
void begin_test(int schedule, std::uint64_t seed);

/// Runs `entry` in the runner with `args` (encoded) and returns its encoded result. What the
/// student's launcher threw is thrown again here with the same type (std::invalid_argument,
/// convlab::CudaError, std::runtime_error); cudaGetLastError() and the next synchronisation then
/// return the launch's and the run's errors, as they would in one process.
std::string call_raw(const std::string& entry, const std::string& args);

/// The proxies' call: encodes `args` by their types, calls, decodes the result.
template <class R, class... A>
R call(const char* entry, const A&... args) {
  wire::Writer w;
  (encode_arg(w, args), ...);
  const std::string result = call_raw(entry, w.take());
  if constexpr (std::is_void_v<R>) {
    return;
  } else {
    wire::Reader r(result);
    OpaqueContext none;
    R v = Codec<std::decay_t<R>>::decode(r, none);
    r.finish();
    return v;
  }
}

/// One call the runner made, and what it saw.
struct CallRecord {
  std::string entry;        ///< the entry called
  wire::Evidence evidence;  ///< its launches, copies, allocations
};
/// Every call since the test began (or since clear_calls()).
const std::vector<CallRecord>& calls();
/// Forgets the calls so far.
void clear_calls();

/// Where the time went since the last take (issue 29): seconds the judge waited for the runner, by
/// phase: "startup" (starting and replacing runners, their CUDA context, the device's ceilings),
/// "memory" (allocations, streams), "copies" (to and from the device, fills), "calls" (the
/// student's and the baselines' untimed calls), "counting" (calls counted by the GPU's counters,
/// with their replays), "timed_baseline" and "timed_student" (the timed intervals of speed tests),
/// "timed_overhead" (the rest of a timed round: fresh inputs, cache flushes, checks). Forgets them.
std::map<std::string, double> take_seconds();

/// Where a kernel of the student's code was launched in this process: for each slot (the variant
/// in the test's name, `lab03.correctness.conv2d_tiled_in.w1_h1_r0` -> `conv2d_tiled_in`), each
/// kernel launched by the student's entries (the graders' `baseline.*` entries left out) and the
/// first test that launched it. Kept across tests, so that a technique test sees the kernels that
/// the slot's correctness and speed tests ran before it in the same process; `convlab grade`, which
/// runs the speed graders in another process than the technique graders, also checks the records'
/// `kernels` (issue 27).
const std::map<std::string, std::map<std::string, std::string>>& kernels_launched();

// ---- timing inside the runner --------------------------------------------------------------

/// While alive, every call and device-to-device copy or memset made through the proxies is also
/// appended to a program (they still run as usual), which measure() replays inside the timed
/// interval. Host transfers cannot be recorded (a timed run moves no host data).
class ProgramRecorder {
public:
  ProgramRecorder();
  ~ProgramRecorder();
  ProgramRecorder(const ProgramRecorder&) = delete;
  ProgramRecorder& operator=(const ProgramRecorder&) = delete;
  /// The program recorded so far.
  const wire::Program& program() const { return program_; }
  /// Adds an operation (the proxies and the runtime functions do).
  void append(wire::ProgramOp op) { program_.push_back(std::move(op)); }

private:
  wire::Program program_;
  ProgramRecorder* outer_;
};

/// One timed round, as the runner measures it: for each pair, a fresh input (when asked), the
/// baseline timed from a cold cache, `prepare` untimed, the candidate timed from a cold cache
/// with its end joined to every stream it used, then its output checked against the baseline's.
struct MeasureRequest {
  wire::Program baseline, candidate, prepare;
  int pairs = 1;
  cudaStream_t stream = nullptr;  ///< the stream the programs were recorded on (the one "given")
  wire::Refresh refresh;          ///< fresh input before each pair (count 0: none)
  std::optional<wire::TimedCheck> check;  ///< the check of every timed output
};

/// What one pair measured.
struct TimedPair {
  double baseline_ms = 0, candidate_ms = 0;
  std::uint64_t mismatches = 0, first = 0;  ///< the check: wrong elements, the first of them
  double got = 0, want = 0;                 ///< its values (candidate, baseline)
};

/// A measured round.
struct MeasureReply {
  std::vector<TimedPair> pairs;
  wire::Evidence evidence;  ///< everything the candidate's calls did in the timed runs
};

/// Measures one round in the runner; the secret for fresh inputs is drawn here, unknown to it.
MeasureReply measure(const MeasureRequest& request);

/// Where counted work runs (set_counting).
enum class Counted {
  /// The counting runner: a second runner of the same kernels whose context keeps CUPTI's profiler
  /// on for the rest of the judge's life, started on first use. The work that follows goes there
  /// (memory and streams belong to the runner that made them: the counted work makes its own).
  /// For a test that counts from its start (a technique test): no runner is replaced for it.
  on_counting_runner,
  /// The plain runner itself, which then counts and is never timed again: for the work of a test
  /// that already ran there (a speed test's latest call of the launcher, after its timed runs: what
  /// a launcher does on its N-th call shows on that runner only). At the next test it becomes the
  /// counting runner (its profiler's set-up and first session, about half a second, are not paid
  /// again), and a fresh plain runner starts when one is needed. The GPU's profiler serves one
  /// context at a time: a counting runner that runs quits first.
  on_this_runner,
};

/// Counts each kernel of the calls that follow with the GPU's own counters (issue 27): the calls'
/// evidence then carries per-launch loads and stores of global and shared memory in 4-byte words
/// (wire::Evidence::counted_on_gpu). No timed run ever shares a context with the profiler. `off`
/// sends the work back to the plain runner. Each test begins on the plain runner. Returns "" when
/// counting is on (or off, as asked), else why the GPU refuses its counters, in words for the
/// grade (the work then stays where it was, uncounted; asked once per judge). The CPU backend
/// counts every call in its one runner ("" always).
std::string set_counting(bool on, Counted where = Counted::on_counting_runner);

/// Which start of the plain runner serves the tests (0: none is running): a speed test's count
/// that waits must be made on the runner that timed it (technique.hpp).
std::uint64_t plain_runner_generation();

/// Tells the plain runner that it will count soon (Counted::on_this_runner): the host side of the
/// profiler's set-up (0.2 to 0.7 s on an H200) starts in a thread of its own there while the tests
/// go on timing (nothing is enabled on its context until set_counting). For a speed test whose
/// count waits for the process's last one; nothing on the CPU backend, or where the counters were
/// refused. A failure shows when set_counting turns the counters on.
void prepare_counting();

/// Starts the counting runner ahead of its first use, without waiting: its start-up, the
/// profiler's and a first counted session (on a kernel of the harness) happen while the plain
/// runner serves the tests before it (issue 29). For a graders process that will run technique
/// tests on a GPU; nothing on the CPU backend. Its answers are read when a test first counts (a
/// failure shows there, as a start on first use would have shown it).
void prestart_counting();

/// Frees and stream ends go to the runner that made the address, whichever is current (a
/// destructor's call, after set_counting switched): the scope of one such request.
class OwnerScope {
public:
  explicit OwnerScope(std::uint64_t address);
  ~OwnerScope();
  OwnerScope(const OwnerScope&) = delete;
  OwnerScope& operator=(const OwnerScope&) = delete;
  bool alive() const { return alive_; }  ///< its runner still runs (else its memory went with it)

private:
  int was_;
  bool alive_ = false;
};
/// Remembers that the current runner made `address` (an allocation, a stream).
void note_owner(std::uint64_t address);

/// Fills `count` floats at `device` with uniform values in [-1, 1) made on the device from `nonce`
/// (the same nonce, the same values), without a copy from the host.
void random_fill(float* device, std::size_t count, std::uint64_t nonce);

/// The copy bandwidth (GB/s, read + written) and FP32 FMA peak (GFLOP/s) the runner measured on
/// its device, once per judge process; zeros on the CPU backend.
std::pair<double, double> ceilings();

}  // namespace convlab::remote
