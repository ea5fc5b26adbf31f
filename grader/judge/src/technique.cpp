// Technique graders: rules over the launches the runner saw. See convlab/technique.hpp.
#include "convlab/technique.hpp"

#include "convlab/speed_check.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "convlab/record.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace convlab {

std::map<std::string, CodeFacts> parse_code_facts(const std::string& text) {
  std::map<std::string, CodeFacts> out;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("the code facts are not valid JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("kernels") || !j.at("kernels").is_object())
    throw std::runtime_error("the code facts have no 'kernels' object");
  for (const auto& [name, k] : j.at("kernels").items()) {
    CodeFacts f;
    const auto get = [&k](const char* key) { return k.contains(key) ? k.at(key).get<long>() : 0L; };
    f.ld_shared = get("ld_shared");
    f.st_shared = get("st_shared");
    f.barriers = get("barriers");
    f.ld_const = get("ld_const");
    f.ld_global = get("ld_global");
    f.st_global = get("st_global");
    f.atomics = get("atomics");
    f.ld_generic = get("ld_generic");
    f.st_generic = get("st_generic");
    f.async_copies = get("async_copies");
    f.mma = get("mma");
    out[name] = f;
  }
  return out;
}

const std::map<std::string, CodeFacts>& code_facts() {
  static std::map<std::string, CodeFacts> facts;
  static std::string loaded_for;
  const std::string path = remote::options().facts_path.empty() ? remote::options().path + ".facts.json"
                                                                   : remote::options().facts_path;
  if (path != loaded_for) {
    loaded_for = path;
    facts.clear();
    std::ifstream in(path);
    if (in) {
      std::ostringstream text;
      text << in.rdbuf();
      facts = parse_code_facts(text.str());
    }
  }
  return facts;
}

TechniqueView::TechniqueView(const std::vector<remote::CallRecord>& calls, double outputs, double taps)
    : calls_(calls), outputs_(outputs), taps_(taps) {
  const auto& facts = code_facts();
  for (const auto& c : calls_)
    for (const auto& l : c.evidence.launches) {
      KernelFacts k;
      k.launch = l;
      if (const auto it = facts.find(l.name); it != facts.end()) k.code = it->second;
      kernels_.push_back(std::move(k));
    }
}

bool TechniqueView::counted() const {
  // Every call's records must carry counts, and every launch must have been counted: a build
  // that counts nothing reports zeros that are not counts.
  if (calls_.empty()) return false;
  for (const auto& c : calls_)
    if (!c.evidence.counts_available) return false;
  for (const auto& k : kernels_)
    if (!k.launch.counted) return false;
  return true;
}

bool TechniqueView::gpu_counts() const {
  for (const auto& c : calls_)
    if (c.evidence.counted_on_gpu) return true;
  return false;
}

bool TechniqueView::has_code() const {
  if (kernels_.empty()) return !code_facts().empty();
  for (const auto& k : kernels_)
    if (!k.code) return false;
  return true;
}

double TechniqueView::per_output(std::uint64_t wire::KernelLaunch::*count) const {
  double sum = 0;
  for (const auto& k : kernels_) sum += double(k.launch.*count);
  return outputs_ > 0 ? sum / outputs_ : 0;
}

std::uint64_t TechniqueView::threads() const {
  std::uint64_t t = 0;
  for (const auto& k : kernels_) t += k.launch.threads_launched();
  return t;
}

std::size_t TechniqueView::transfers(wire::Transfer::Kind kind) const {
  std::size_t n = 0;
  for (const auto& c : calls_)
    for (const auto& t : c.evidence.transfers) n += t.kind == kind;
  return n;
}

std::string TechniqueView::traffic() const {
  char buf[512];
  // The tensor cores' multiply-adds, where they were counted (CPU backend, or a GPU's profiler).
  const auto tensor_work = [this]() -> std::string {
    const double macs = per_output(&wire::KernelLaunch::tensor_macs);
    if (macs <= 0) return {};
    char t[96];
    std::snprintf(t, sizeof t, "; %.4g tensor-core multiply-adds per output", macs);
    return t;
  };
  if (counted() && gpu_counts()) {
    std::snprintf(buf, sizeof buf,
                  "per output, counted by the GPU: %.3g global loads, %.3g global stores, %.3g shared loads, %.3g "
                  "shared stores (4-byte words; %zu launches, %.3g outputs per thread)",
                  per_output(&wire::KernelLaunch::global_loads), per_output(&wire::KernelLaunch::global_stores),
                  per_output(&wire::KernelLaunch::shared_loads), per_output(&wire::KernelLaunch::shared_stores),
                  kernels_.size(), threads() ? outputs_ / double(threads()) : 0.0);
    return buf + tensor_work();
  }
  if (counted()) {
    std::snprintf(buf, sizeof buf,
                  "per output: %.3g global loads, %.3g global stores, %.3g shared loads, %.3g shared stores, "
                  "%.3g constant loads, %.3g barriers (%zu launches, %.3g outputs per thread)",
                  per_output(&wire::KernelLaunch::global_loads), per_output(&wire::KernelLaunch::global_stores),
                  per_output(&wire::KernelLaunch::shared_loads), per_output(&wire::KernelLaunch::shared_stores),
                  per_output(&wire::KernelLaunch::constant_loads), per_output(&wire::KernelLaunch::barriers),
                  kernels_.size(), threads() ? outputs_ / double(threads()) : 0.0);
    return buf + tensor_work();
  }
  std::string out;
  for (const auto& k : kernels_) {
    std::snprintf(buf, sizeof buf, "%s%s: grid (%u,%u,%u), block (%u,%u,%u), %llu B shared", out.empty() ? "" : "; ",
                  k.launch.name.c_str(), k.launch.grid[0], k.launch.grid[1], k.launch.grid[2], k.launch.block[0],
                  k.launch.block[1], k.launch.block[2], static_cast<unsigned long long>(k.shared_bytes()));
    out += buf;
    if (k.code) {
      std::snprintf(buf, sizeof buf, " (code: %ld ld.shared, %ld st.shared, %ld barriers, %ld ld.const, %ld ld.global)",
                    k.code->ld_shared, k.code->st_shared, k.code->barriers, k.code->ld_const, k.code->ld_global);
      out += buf;
    }
  }
  return out.empty() ? "no kernel launched" : out;
}

TechniqueRule all_of(std::vector<TechniqueRule> rules) {
  return [rules = std::move(rules)](const TechniqueView& v) {
    std::string out;
    for (const auto& r : rules)
      if (const std::string f = r(v); !f.empty()) out += (out.empty() ? "" : "; ") + f;
    return out;
  };
}

namespace {

std::string bytes_text(double b) {
  char buf[64];
  if (b >= 1024) std::snprintf(buf, sizeof buf, "%.3g KB", b / 1024);
  else std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}

}  // namespace

TechniqueRule shared_tile(double expected_bytes, double low, double high) {
  return [=](const TechniqueView& v) -> std::string {
    if (v.kernels().empty()) return "no kernel was launched";
    std::string best;
    for (const auto& k : v.kernels()) {
      bool writes = false, reads = false, waits = false;
      std::string seen;
      char buf[256];
      if (k.code) {
        writes = k.code->st_shared + k.code->async_copies > 0;
        reads = k.code->ld_shared > 0;
        waits = k.code->barriers > 0;
        std::snprintf(buf, sizeof buf, "%ld ld.shared, %ld st.shared, %ld barriers in its code", k.code->ld_shared,
                      k.code->st_shared + k.code->async_copies, k.code->barriers);
      } else if (k.launch.counted) {
        writes = k.launch.shared_stores > 0;
        reads = k.launch.shared_loads > 0;
        waits = k.launch.barriers > 0;
        std::snprintf(buf, sizeof buf, "%.3g shared loads, %.3g shared stores and %.3g barriers per output",
                      double(k.launch.shared_loads) / v.outputs(), double(k.launch.shared_stores) / v.outputs(),
                      double(k.launch.barriers) / v.outputs());
      } else {
        continue;
      }
      seen = buf;
      const double bytes = double(k.shared_bytes());
      if (writes && reads && waits && bytes >= low * expected_bytes && bytes <= high * expected_bytes) return {};
      std::string why;
      if (!writes || !reads) why = k.launch.name + " keeps no tile in shared memory (" + seen + ")";
      else if (!waits) why = k.launch.name + " never waits at a barrier between filling its tile and reading it (" + seen + ")";
      else
        why = k.launch.name + " holds " + bytes_text(bytes) + " of shared memory per block of " +
              std::to_string(k.launch.threads_per_block()) + " threads, where the design implies about " +
              bytes_text(expected_bytes);
      if (best.empty() || (writes && reads)) best = why;
    }
    return best.empty() ? "no record of the kernels' code or memory accesses" : best;
  };
}

TechniqueRule taps_from_shared(double fraction) {
  return [=](const TechniqueView& v) -> std::string {
    if (!v.counted()) return {};  // a GPU counts nothing per access: the code facts decide
    const double loads = v.per_output(&wire::KernelLaunch::shared_loads);
    if (loads >= fraction * v.taps()) return {};
    char buf[256];
    std::snprintf(buf, sizeof buf, "each output read %.3g of its %.0f taps' inputs from shared memory", loads, v.taps());
    return buf;
  };
}

TechniqueRule global_loads_per_output(double at_most) {
  return [=](const TechniqueView& v) -> std::string {
    if (!v.counted()) return {};
    const double loads = v.per_output(&wire::KernelLaunch::global_loads);
    if (loads <= at_most) return {};
    char buf[256];
    std::snprintf(buf, sizeof buf, "%.3g global loads per output (at most %.3g for this design; %.0f means every tap "
                  "reads global memory)", loads, at_most, v.taps());
    return buf;
  };
}

TechniqueRule constant_filter() {
  return [](const TechniqueView& v) -> std::string {
    std::string out;
    if (v.transfers(wire::Transfer::Kind::to_symbol) == 0)
      out = "the launcher uploaded nothing to a __constant__ symbol (cudaMemcpyToSymbol)";
    std::uint64_t allocations = 0;
    for (const auto& c : v.calls()) allocations += c.evidence.allocations;
    if (allocations > 0 || v.transfers(wire::Transfer::Kind::to_device) > 0)
      out += std::string(out.empty() ? "" : "; ") +
             "the launcher copied data to global memory it allocated (cudaMalloc + cudaMemcpy): the filter belongs "
             "in constant memory";
    for (const auto& k : v.kernels()) {
      char buf[256];
      if (k.code && k.code->ld_const == 0) {
        std::snprintf(buf, sizeof buf, "%s has no constant-memory load (ld.const) in its code", k.launch.name.c_str());
        out += std::string(out.empty() ? "" : "; ") + buf;
      } else if (!k.code && k.launch.counted && !v.gpu_counts() &&
                 double(k.launch.constant_loads) < 0.9 * v.taps() * v.outputs()) {
        std::snprintf(buf, sizeof buf, "%s read %.3g values from constant memory per output, for a filter of %.0f taps",
                      k.launch.name.c_str(), double(k.launch.constant_loads) / v.outputs(), v.taps());
        out += std::string(out.empty() ? "" : "; ") + buf;
      }
    }
    return out;
  };
}

TechniqueRule outputs_per_thread(double at_least) {
  return [=](const TechniqueView& v) -> std::string {
    const std::uint64_t t = v.threads();
    if (t == 0) return "no kernel was launched";
    const double per = v.outputs() / double(t);
    if (per >= at_least) return {};
    char buf[256];
    std::snprintf(buf, sizeof buf, "%llu threads for %.0f outputs: %.3g outputs per thread (at least %.3g asked)",
                  static_cast<unsigned long long>(t), v.outputs(), per, at_least);
    return buf;
  };
}

TechniqueRule launches(int at_least, int at_most) {
  return [=](const TechniqueView& v) -> std::string {
    const int n = static_cast<int>(v.kernels().size());
    if (n >= at_least && n <= at_most) return {};
    std::string names;
    for (const auto& k : v.kernels()) names += (names.empty() ? "" : ", ") + k.launch.name;
    return std::to_string(n) + " kernel launches" + (names.empty() ? "" : " (" + names + ")") + ", where " +
           (at_least == at_most ? std::to_string(at_least) : std::to_string(at_least) + " to " + std::to_string(at_most)) +
           " are expected";
  };
}

TechniqueRule on_given_stream() {
  return [](const TechniqueView& v) -> std::string {
    std::string out;
    for (const auto& c : v.calls())
      if (const std::string w = escaped_work(c.evidence); !w.empty() && out.find(w) == std::string::npos)
        out += (out.empty() ? "" : "; ") + w;
    return out;
  };
}

TechniqueRule countable_calls() {
  return [](const TechniqueView& v) -> std::string {
    for (const auto& c : v.calls())
      if (c.evidence.launches.size() > wire::kMaxCountedLaunches) return wire::too_many_launches(c.evidence.launches.size());
    return {};
  };
}

void expect_technique(const std::string& slot, const std::string& asks, const TechniqueRule& rule, double outputs,
                      double taps) {
  expect_technique(slot, asks, {JudgedProblem{"", remote::calls(), outputs, taps, rule}});
}

void expect_technique(const std::string& slot, const std::string& asks, const std::vector<JudgedProblem>& problems) {
  std::vector<remote::CallRecord> all;
  double outputs = 0;
  for (const JudgedProblem& p : problems) {
    all.insert(all.end(), p.calls.begin(), p.calls.end());
    outputs += p.outputs;
  }
  const TechniqueView v(all, outputs, problems.empty() ? 0 : problems.front().taps);
  if (v.calls().empty()) {
    ADD_FAILURE() << slot << ": the launcher was not called (a harness error)";
    return;
  }
  if (v.blind())
    GTEST_SKIP() << "technique not checked: this build records neither the kernels' compiled code nor their memory "
                    "accesses (AddressSanitizer builds count nothing; GPU builds need "
                 << remote::options().path << ".facts.json)";
  std::string found;
  for (const JudgedProblem& p : problems) {
    const TechniqueView pv(p.calls, p.outputs, p.taps);
    const std::string on = p.name.empty() ? "" : " on " + p.name;
    std::printf("%s%s: %s\n", slot.c_str(), on.c_str(), pv.traffic().c_str());
    // A call with more launches than the GPU counts is judged on that alone (its amounts would be
    // partial on a GPU, and on the CPU backend every launch would repeat the rules' findings).
    std::string f = countable_calls()(pv);
    if (f.empty()) f = all_of({p.rule, on_given_stream()})(pv);
    if (!f.empty()) found += (found.empty() ? "" : "; ") + f + (on.empty() ? "" : " (" + on.substr(1) + ")");
  }
  if (found.empty()) found = unjudged_kernels(slot, v);
  if (!found.empty()) ADD_FAILURE() << slot << ": " << found << "; the lab asks for " << asks;
  else record_judged(v);
}

std::string unjudged_kernels(const std::string& slot, const TechniqueView& v) {
  const auto& all = remote::kernels_launched();
  const auto it = all.find(slot);
  if (it == all.end()) return {};
  std::set<std::string> judged;
  std::string judged_names;
  for (const auto& k : v.kernels())
    if (judged.insert(kernel_family(k.launch.name)).second)
      judged_names += (judged_names.empty() ? "" : ", ") + k.launch.name;
  std::string out;
  for (const auto& [kernel, test] : it->second)
    if (!judged.count(kernel_family(kernel)))
      out += (out.empty() ? "" : "; ") + kernel + " was launched in " + test;
  if (out.empty()) return {};
  return out + ", and this technique test never judged it (it judged " +
         (judged_names.empty() ? std::string("no kernel") : judged_names) +
         "): every launch of the slot, on every problem size and every call, must use the technique";
}

namespace {
// The view's kernels by name, each once: "conv2d_tiled_out_kernel, fix_kernel" ("no kernel" if none).
std::string kernel_names(const TechniqueView& v) {
  std::string names;
  for (const auto& k : v.kernels())
    if (names.find(k.launch.name) == std::string::npos) names += (names.empty() ? "" : ", ") + k.launch.name;
  return names.empty() ? "no kernel" : names;
}
}  // namespace

void count_technique_calls() {
  if (const std::string why = remote::set_counting(true); !why.empty()) {
    std::printf("note: the amounts of this technique test are not counted: %s\n", why.c_str());
    current_record().counters_refused = why;
  }
}

namespace {

// A speed test's count left for later (expect_traffic_vs_baseline's `again`).
struct Deferred {
  std::string test, slot, problem;
  double fraction = 0, outputs = 0;
  bool by_instructions = false;
  ProblemAgain again;
  std::uint64_t runner = 0;  // the plain runner's start that timed it
  Yardstick yardstick;
};
std::vector<Deferred> g_deferred;
std::map<std::string, DeferredVerdict> g_verdicts;
int g_speed_tests_after = 0;

// Counts one call of each of `baseline` and `student` (counting is on) and compares their global
// loads per output: the failure's words, "" if the student's are within `fraction` of the
// baseline's; a note when the counters did not match the launches.
std::string counted_traffic(const std::string& slot, const std::string& problem, double fraction,
                            bool by_instructions, double outputs, const std::function<void()>& student,
                            const std::function<void()>& baseline, const Yardstick& yardstick) {
  const auto counted_call = [](const std::function<void()>& call, double n) {
    remote::clear_calls();
    call();
    return TechniqueView(remote::calls(), n, 1);
  };
  // The baseline's loads per output: on a smaller problem of the same kind where one is given.
  std::optional<TechniqueView> yard;
  if (yardstick) yardstick([&](const std::function<void()>& call, double n) { yard.emplace(counted_call(call, n)); });
  else yard.emplace(counted_call(baseline, outputs));
  const TechniqueView s = counted_call(student, outputs);
  if (!yard) {
    std::printf("note: the naive baseline was not counted for the timed problem %s; its loads were not compared\n",
                problem.c_str());
    return {};
  }
  const TechniqueView& b = *yard;
  if (!s.counted() || !b.counted()) {
    std::printf("note: the GPU's counters did not match the recorded launches on the timed problem %s; its loads "
                "were not compared\n",
                problem.c_str());
    return {};
  }
  // Words by default: a tile's halo loads diverge (a warp instruction for a few lanes), which the
  // instruction counts would take for 32 loads. Instructions where the filter's place is the
  // technique (lab 2): the baseline's filter taps are one address per warp, a word in the byte counts.
  const auto field = by_instructions ? &wire::KernelLaunch::global_load_instructions : &wire::KernelLaunch::global_loads;
  const double sg = s.per_output(field), bg = b.per_output(field);
  const double ss = s.per_output(&wire::KernelLaunch::shared_loads);
  const std::string names = kernel_names(s);
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "%s loaded %.3g values per output from global memory and %.3g from shared memory (%s, counted by "
                "the GPU on the launcher's call after the timed runs), where the naive baseline loads %.3g: more than "
                "%.2g times the baseline's, so the slot's technique was not what ran when it was timed",
                names.c_str(), sg, ss,
                by_instructions ? "load instructions, each warp's counted for its 32 threads" : "4-byte words", bg,
                fraction);
  std::printf("%s on %s: counted by the GPU, per output: %.3g global %s (baseline %.3g%s; at most %.2g times it), %.3g "
              "shared loads\n",
              slot.c_str(), problem.c_str(), sg, by_instructions ? "load instructions" : "loads (words)", bg,
              yardstick ? " on a smaller problem of the same kind" : "", fraction, ss);
  return sg > fraction * bg ? std::string(buf) : std::string();
}

// Counting on the plain runner, which is never timed again (the next test makes it the counting
// runner); back to plain (uncounted) work at the scope's end.
struct CountingOff {
  ~CountingOff() {
    try {
      remote::set_counting(false);
    } catch (...) {
    }
  }
};

// The waiting counts, each on a problem made again, into g_verdicts (counting is on, on the runner
// that timed them). A count that throws ends the rest: the runner may be gone; those stay unwritten.
void count_waiting(std::vector<Deferred>& waiting) {
  for (auto& d : waiting) {
    DeferredVerdict v;
    // The calls are the waiting test's: the kernels they launch are noted in its record, and in the
    // process's ledger under its slot (remote::kernels_launched), not under the test running now.
    struct Borrowed {
      TestRecord saved = current_record();
      explicit Borrowed(const std::string& test) {
        current_record() = TestRecord{};
        current_record().test = test;
        current_record().lab = saved.lab;
        current_record().impl = saved.impl;
      }
      ~Borrowed() { current_record() = saved; }
    };
    try {
      Borrowed as(d.test);
      d.again([&](const std::function<void()>& student, const std::function<void()>& baseline) {
        v.failure = counted_traffic(d.slot, d.problem, d.fraction, d.by_instructions, d.outputs, student, baseline,
                                    d.yardstick);
      });
      v.kernels = current_record().kernels;
      v.escaped = current_record().escaped;
    } catch (const std::exception& e) {
      std::printf("note: the count of %s's timed call failed (%s): its record is not written\n", d.test.c_str(),
                  e.what());
      break;
    }
    if (!v.failure.empty()) {
      v.off_technique = v.failure;
      v.failure = d.slot + ": on the timed problem " + d.problem + " " + v.failure;
    }
    g_verdicts[d.test] = v;
  }
  remote::clear_calls();
}

// The waiting counts that the plain runner now running timed; the others' notes (their records
// stay unwritten: that runner, and what its calls did, is gone).
std::vector<Deferred> timed_here(std::vector<Deferred> waiting) {
  const std::uint64_t runner = remote::plain_runner_generation();
  std::vector<Deferred> here;
  for (auto& d : waiting) {
    if (d.runner == runner && runner != 0) here.push_back(std::move(d));
    else std::printf("note: the runner that timed %s was replaced before its call was counted: its record is not "
                     "written\n", d.test.c_str());
  }
  return here;
}

}  // namespace

void set_speed_tests_after(int count) { g_speed_tests_after = std::max(0, count); }

int speed_tests_after() { return g_speed_tests_after; }

std::map<std::string, DeferredVerdict> take_deferred_verdicts() { return std::exchange(g_verdicts, {}); }

std::size_t deferred_calls_waiting() { return g_deferred.size(); }

void count_deferred_calls() {
  if (g_deferred.empty()) return;
  std::vector<Deferred> here = timed_here(std::exchange(g_deferred, {}));
  if (here.empty()) return;
  try {
    if (const std::string why = remote::set_counting(true, remote::Counted::on_this_runner); !why.empty()) {
      for (const auto& d : here) g_verdicts[d.test].counters_refused = why;
      std::printf("note: the timed problems' loads were not counted: %s\n", why.c_str());
      return;
    }
    CountingOff off;
    count_waiting(here);
  } catch (const std::exception& e) {
    std::printf("note: the waiting counts were not made (%s): their records are not written\n", e.what());
  }
}

void expect_traffic_vs_baseline(const std::string& slot, const std::string& problem, double fraction,
                                bool by_instructions, double outputs, const std::function<void()>& student,
                                const std::function<void()>& baseline, const ProblemAgain& again,
                                const Yardstick& yardstick) {
  if (fraction <= 0 || remote::device_status().backend != "cuda") return;
  // More speed tests follow in this process: the count waits for the last of them (header).
  if (again && g_speed_tests_after > 0 && remote::plain_runner_generation() != 0) {
    g_deferred.push_back(Deferred{current_record().test, slot, problem, fraction, outputs, by_instructions, again,
                                  remote::plain_runner_generation(), yardstick});
    current_record().count_deferred = true;
    std::printf("%s on %s: the call after the timed runs is counted after the process's last speed test\n",
                slot.c_str(), problem.c_str());
    remote::prepare_counting();  // the profiler's set-up, meanwhile
    return;
  }
  // Its own call now; the calls that waited for it after it, at the test's end (count_deferred_calls).
  if (const std::string why = remote::set_counting(true, remote::Counted::on_this_runner); !why.empty()) {
    std::printf("note: the timed problem's loads were not counted: %s\n", why.c_str());
    current_record().counters_refused = why;
    return;
  }
  CountingOff off;
  const std::string found =
      counted_traffic(slot, problem, fraction, by_instructions, outputs, student, baseline, yardstick);
  if (!found.empty()) {
    current_record().off_technique = found;
    ADD_FAILURE() << slot << ": on the timed problem " << problem << " " << found;
  }
}

void expect_counted_traffic_vs_naive(const std::string& slot, const std::string& problem, double fraction,
                                     bool by_instructions, double outputs, double taps) {
  // Small filters are left out: at r = 0 a tile loads what a naive kernel loads (one value), and a
  // naive kernel's loads are the yardstick only where its taps dominate.
  if (fraction <= 0 || outputs < kLargeCase || taps < 5 || remote::device_status().backend != "cpu") return;
  const double naive_loads = by_instructions ? 2 * taps : taps;
  const TechniqueView v(remote::calls(), outputs, 1);
  if (!v.counted() || v.kernels().empty()) return;
  const double g = v.per_output(&wire::KernelLaunch::global_loads), s = v.per_output(&wire::KernelLaunch::shared_loads);
  if (g <= fraction * naive_loads) return;
  const std::string names = kernel_names(v);
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "%s loaded %.3g values per output from global memory and %.3g from shared memory (counted on the CPU "
                "backend), where a naive kernel loads about %.3g (%s): more than %.2g times that, so the slot's "
                "technique was not what ran on this problem",
                names.c_str(), g, s, naive_loads, by_instructions ? "its taps and its filter" : "its taps", fraction);
  current_record().off_technique = buf;
  ADD_FAILURE() << slot << ": on " << problem << " " << buf;
}

void record_judged(const TechniqueView& v) {
  auto& judged = current_record().judged;
  for (const auto& k : v.kernels())
    if (std::find(judged.begin(), judged.end(), k.launch.name) == judged.end()) judged.push_back(k.launch.name);
}

}  // namespace convlab
