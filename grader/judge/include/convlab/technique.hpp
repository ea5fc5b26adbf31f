/// @file technique.hpp
/// @brief Technique graders: did the kernel use what the lab teaches (a shared-memory tile with a
/// barrier, a filter in constant memory, several outputs per thread, two passes, ...)?
///
/// A technique test runs the slot's launcher on one problem (the output must be right first) and
/// looks at what the runner saw: each launch's kernel, grid, block and shared memory; on a GPU,
/// what the kernel's compiled code does with each memory space (its PTX, read at build time by
/// convlab_ptxfacts into `<runner>.facts.json`); on the CPU backend, how many loads and stores of
/// each memory space the kernel executed, per output. Rules combine these facts; a failed rule says
/// what it saw, and the test says what the lab asks:
///
///     conv2d_tiled_in: conv2d_tiled_in_kernel has no shared-memory load or store in its code
///     (0 ld.shared, 0 st.shared); the lab asks for an input tile in shared memory, loaded once per
///     block, with a barrier before it is read
///
/// Every technique test also prints the kernel's memory traffic per output (counted on the CPU
/// backend), the chapter's OP/B made real.
#pragma once

#include "convlab/remote.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace convlab {

/// What a kernel's compiled code does with each memory space (instructions in the PTX, the device
/// functions it calls included).
struct CodeFacts {
  long ld_shared = 0, st_shared = 0, barriers = 0, ld_const = 0, ld_global = 0, st_global = 0, atomics = 0,
       ld_generic = 0, st_generic = 0, async_copies = 0;
  long mma = 0;  ///< tensor-core matrix multiply-accumulates (PTX wmma.mma, mma.sync, wgmma.mma_async)
};

/// The compiled code's facts of this judge's runner, by kernel name: read from the file given by
/// --convlab-facts (default `<runner>.facts.json`); empty where there is none (the CPU backend).
const std::map<std::string, CodeFacts>& code_facts();
/// Parses a facts file's text (convlab_ptxfacts's output); throws std::runtime_error if malformed.
std::map<std::string, CodeFacts> parse_code_facts(const std::string& json_text);

/// One launch, with every fact known about it.
struct KernelFacts {
  wire::KernelLaunch launch;       ///< the runner's record (counts when launch.counted)
  std::optional<CodeFacts> code;   ///< the compiled code's facts (GPU builds)
  /// Shared memory per block: static plus dynamic.
  std::uint64_t shared_bytes() const { return launch.static_shared + launch.dynamic_shared; }
};

/// What a technique grader looks at: the launches of the calls the test made.
class TechniqueView {
public:
  /// `outputs`: the problem's output elements; `taps`: filter taps (or stencil points) per output.
  TechniqueView(const std::vector<remote::CallRecord>& calls, double outputs, double taps);
  const std::vector<KernelFacts>& kernels() const { return kernels_; }
  const std::vector<remote::CallRecord>& calls() const { return calls_; }
  double outputs() const { return outputs_; }
  double taps() const { return taps_; }
  /// Execution counts exist (CPU backend, not under AddressSanitizer; on a GPU, from its counters
  /// when the test asked for them: remote::set_counting).
  bool counted() const;
  /// The counts are the GPU's counters: global and shared loads and stores only (constant loads and
  /// barriers stay the compiled code's facts).
  bool gpu_counts() const;
  /// Compiled-code facts exist for every kernel launched (GPU builds).
  bool has_code() const;
  /// Neither: this build cannot check a technique.
  bool blind() const { return !counted() && !has_code(); }
  /// A count summed over the launches, divided by the outputs (CPU backend).
  double per_output(std::uint64_t wire::KernelLaunch::*count) const;
  /// Threads launched, over all launches.
  std::uint64_t threads() const;
  /// "per output: 1.14 global loads, 25 shared loads, 0 constant loads; 0.031 barriers" (counts), or
  /// a line naming the kernels and their shared memory (code).
  std::string traffic() const;
  /// Transfers of the given kind in the calls.
  std::size_t transfers(wire::Transfer::Kind kind) const;

private:
  std::vector<remote::CallRecord> calls_;
  std::vector<KernelFacts> kernels_;
  double outputs_, taps_;
};

/// A rule: empty when it holds, else what it saw, in words ("conv1d_kernel reads no shared memory").
using TechniqueRule = std::function<std::string(const TechniqueView&)>;

/// All of `rules` (their findings joined by "; ").
TechniqueRule all_of(std::vector<TechniqueRule> rules);

/// Some kernel keeps a tile in shared memory: it stores to and loads from shared memory, waits at a
/// barrier, and holds between `low` and `high` times `expected_bytes` per block.
TechniqueRule shared_tile(double expected_bytes, double low = 0.5, double high = 4.0);
/// Most of each output's taps are read from shared memory (at least `fraction` of them; counts only).
TechniqueRule taps_from_shared(double fraction);
/// At most `at_most` global loads per output over all launches (counts only).
TechniqueRule global_loads_per_output(double at_most);
/// The filter is read from __constant__ memory: the launcher uploads a symbol, allocates no global
/// copy, and its kernels read constant memory (code: ld.const; counts: a constant load per tap).
TechniqueRule constant_filter();
/// The threads launched compute at least `at_least` outputs each on average.
TechniqueRule outputs_per_thread(double at_least);
/// The call launches between `at_least` and `at_most` kernels.
TechniqueRule launches(int at_least, int at_most);
/// Every launch went to the stream the launcher was given, from the launcher's own thread.
TechniqueRule on_given_stream();
/// No call launched more kernels than the GPU's counters count in one (wire::kMaxCountedLaunches).
/// On a GPU the runner fails such a call itself; this says the same on the CPU backend.
TechniqueRule countable_calls();

/// Runs `rule` on the calls made since the test began (remote::calls()) and records a failure,
/// "<slot>: <what it saw>; the lab asks for <asks>", if it does not hold; prints the traffic line.
/// Skips the test, saying why, when this build can see neither code nor counts. It also fails if
/// a kernel the slot launched elsewhere in this process (unjudged_kernels) was not judged here,
/// and records the kernels it judged (TestRecord::judged) for `convlab grade`'s same check.
void expect_technique(const std::string& slot, const std::string& asks, const TechniqueRule& rule, double outputs,
                      double taps);
/// One problem of a technique test that judges several: its calls (each problem's run clears
/// remote::calls(), so the test keeps them), its outputs and taps per output, and the rule made for
/// it (its own amounts per output: C R S, K).
struct JudgedProblem {
  std::string name;                       ///< as the failure names it, e.g. "N1 C128 8x8 K128 3x3"
  std::vector<remote::CallRecord> calls;  ///< the calls of its run
  double outputs = 0, taps = 0;
  TechniqueRule rule;
};
/// The same on several problems, each judged by its own rule on its own calls (a finding names its
/// problem); the slot's kernels launched elsewhere in this process must be judged on one of them.
/// A slot whose design takes another kernel for another kind of problem (lab 06's tensor-core
/// reference: by stride, filter size, channels and GPU) has each kernel judged on a problem of its kind.
void expect_technique(const std::string& slot, const std::string& asks, const std::vector<JudgedProblem>& problems);

/// The kernels `slot` launched in this process (remote::kernels_launched()) that the technique
/// test judged none of (by kernel_family), with where each was first seen, as one sentence: a
/// kernel chosen by problem size or by call count escapes a verdict drawn from one problem. Empty
/// when every launch was judged. `v`: the technique problem's calls.
std::string unjudged_kernels(const std::string& slot, const TechniqueView& v);

/// Records `v`'s kernels as judged (TestRecord::judged): the technique test passed on them.
void record_judged(const TechniqueView& v);

/// A technique test's start on a GPU: the runner counts each kernel of the test's calls with the
/// GPU's counters, so the rules on amounts (taps_from_shared, global_loads_per_output) judge what
/// the GPU did, not only what the code contains (issue 27: a shared array and a barrier that do no
/// work pass a check of the code). Where the counters are refused, says so and records why
/// (TestRecord::counters_refused: `convlab grade` flags the grade for review).
void count_technique_calls();

/// After a speed test's timed runs (issue 27): `student` and `baseline` each make one more call on
/// the timed problem, counted by the GPU's counters; the student's global loads per output must be
/// at most `fraction` of the baseline's. Otherwise the test fails naming both counts, and records
/// the finding (TestRecord::off_technique) for `convlab grade` to fail the slot's technique grader:
/// the technique was not what ran when the slot was timed (a kernel chosen by problem size, by call
/// count or by backend). The student's call is the launcher's latest, after every timed call.
/// Nothing is checked on the CPU backend (no speed test runs there) or where counters are refused
/// (said, and recorded as in count_technique_calls).
/// `by_instructions`: compare load instructions (each warp's counted for its 32 threads) instead of
/// 4-byte words (GraderSpec::traffic_count).
///
/// `again`, where given, lets the count wait (issue 29): the profiler's start in the runner that
/// timed costs about 1 s, once per runner, and a runner that counted times nothing more. So where
/// more speed tests follow in this process (set_speed_tests_after()), the test does not count: it
/// leaves `again`, which makes the same problem afresh (its shape, filter and parameters; fresh
/// inputs) and hands its student and baseline calls to the function it is given, and its record
/// is held back (TestRecord::count_deferred). The last speed test of the process counts its own
/// call, and at its end each one left (count_deferred_calls(), from the graders' test wrapper), on
/// the same runner, after every timed run of the process; each
/// held record then gets its verdict (take_deferred_verdicts()) and is written. A record whose
/// count could not be made (the runner that timed it was replaced, or died while counting) is
/// never written: `convlab grade` runs its grader again (batch.hpp), as for a test that did not run.
///
/// `yardstick`, where given, makes a smaller problem of the same kind (the same radius or stencil,
/// filter, boundary and steps; a few million outputs) and hands its baseline call and its outputs
/// to the function it is given: the baseline's loads per output are counted there instead of on
/// the timed problem. The baseline is the harness's own naive kernel, whose loads per output
/// hardly depend on the size (only its boundary's share changes: under 1 % at 2048 x 2048 and
/// radius 7), and the profiler's instrumentation slows a kernel that loads every tap by 50 to 100
/// times (measured on an H200: lab 3's baseline on its 8191 x 8193 problem at radius 7, 0.33 s).
/// The student's call is always counted on the timed problem.
using ProblemUse = std::function<void(const std::function<void()>& student, const std::function<void()>& baseline)>;
using ProblemAgain = std::function<void(const ProblemUse& use)>;
using BaselineUse = std::function<void(const std::function<void()>& baseline, double outputs)>;
using Yardstick = std::function<void(const BaselineUse& use)>;
void expect_traffic_vs_baseline(const std::string& slot, const std::string& problem, double fraction,
                                bool by_instructions, double outputs, const std::function<void()>& student,
                                const std::function<void()>& baseline, const ProblemAgain& again = {},
                                const Yardstick& yardstick = {});

/// How many speed tests this process runs after the one starting (the graders' listener sets it
/// at each test's start; 0 where nobody does: every count is made at once).
void set_speed_tests_after(int count);
/// The count set last (set_speed_tests_after()).
int speed_tests_after();

/// A held-back speed test's verdict on its counted call (expect_traffic_vs_baseline's `again`).
struct DeferredVerdict {
  std::string failure;           ///< the failure, in the grader's words ("" if the count passed)
  std::string off_technique;     ///< TestRecord::off_technique
  std::string counters_refused;  ///< TestRecord::counters_refused
  std::vector<std::string> kernels;  ///< the kernels its counted call launched (TestRecord::kernels)
  std::string escaped;               ///< TestRecord::escaped of that call
};
/// The verdicts reached since the last call, by test name (the listener writes their records).
std::map<std::string, DeferredVerdict> take_deferred_verdicts();
/// Counts every call still waiting, on the runner that timed them (a speed test's end, when no
/// speed test follows in the process: also where the last one did not count, skipped by its gate
/// or stopped early). Never throws; a count that cannot be made is left out, its record unwritten.
void count_deferred_calls();
/// Speed tests whose calls still wait for their count (none after count_deferred_calls()).
std::size_t deferred_calls_waiting();

/// The CPU backend's side of the same rule, where no speed test runs: a correctness case of at
/// least kLargeCase outputs, whose call the CPU backend counted (remote::calls()), must load at
/// most `fraction` of a naive kernel's values per output from global memory: its `taps` words
/// (the GPU's word counts see its filter taps once per warp), or with `by_instructions` its taps
/// and its filter, 2 x `taps`. Fails and records TestRecord::off_technique otherwise; does nothing
/// on a GPU (the speed test samples the timed problem there), on cases under kLargeCase outputs or
/// 5 taps, or without counts.
void expect_counted_traffic_vs_naive(const std::string& slot, const std::string& problem, double fraction,
                                     bool by_instructions, double outputs, double taps);
/// Outputs from which a correctness case is large enough for expect_counted_traffic_vs_naive (a
/// tile's edge effects below a few per cent).
constexpr double kLargeCase = 1e6;

}  // namespace convlab
