// Points from records. See scoring.hpp.
#include "grading/scoring.hpp"

#include "common/util.hpp"

#include <convlab/gate.hpp>
#include <convlab/record.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace convlab::cli {

using nlohmann::json;

namespace {

std::optional<double> number(const json& j, const char* key) {
  if (j.contains(key) && j.at(key).is_number()) return j.at(key).get<double>();
  return std::nullopt;
}

// The line of a message that says what happened: not GoogleTest's bare "Failed" that
// precedes a grader's own words (convlab/gate.hpp).
std::string first_line(const std::string& s) { return first_informative_line(s); }

// A failing speed test whose only fault is a speed-up below the threshold
// prints decide_speedup()'s message ("... is below the threshold ..." or
// "... is far below the threshold ..."); any other failure (a wrong output
// during timing, a crash) earns no speed points.
bool only_too_slow(const TestOutcome& t) {
  return t.message.find("below the threshold") != std::string::npos &&
         t.message.find("wrong") == std::string::npos && t.message.find("failed") == std::string::npos;
}

// A failing correctness grader looked at again (issue 18, recheck.hpp): with a compiler bug found,
// the policy decides its points. The reason keeps what failed and says what was found, in plain words.
void apply_compiler_bug_policy(const GraderSpec& g, const CompilerRecheck& c, GraderResult& r) {
  // What is added below continues the reason's sentence ("254 of 255 outputs are wrong; it passes ...").
  while (!r.reason.empty() && (r.reason.back() == '.' || r.reason.back() == ' ')) r.reason.pop_back();
  if (c.flaky) {
    r.reason += "; run again on the same inputs as built, it passed: the kernel's result changes from run to run "
                "(a race or a read of memory never written), which is the kernel's fault, not the compiler's";
    return;
  }
  if (c.inconclusive) {
    r.reason += "; it could not be built again with less device optimisation to look for a compiler bug, so it is "
                "scored as measured";
    return;
  }
  if (!c.compiler_bug()) {
    r.reason += "; built again with less device optimisation, it fails on the same inputs too, so the fault is "
                "in the kernel, not the compiler";
    return;
  }
  const std::string found = "; it passes every test when built with " + c.flags +
                            " (less device optimisation) on the same inputs: a compiler bug, it seems, not the kernel's";
  if (!c.credited()) {
    r.reason += found + "; scored as measured (compiler-bug policy 'as-is')";
    return;
  }
  r.points = g.points;
  r.passed = true;
  r.review = c.review();
  r.reason += found + "; full points (compiler-bug policy '" + c.policy + "'" +
              (r.review ? ", flagged for the instructor's review" : "") + ")";
}

// "lab03.correctness.conv2d_tiled_in.w3627_h3623_r1" -> "correctness.conv2d_tiled_in" (the test's grader
// part) and "w3627_h3623_r1" (its problem).
std::string problem_of(const std::string& test) {
  const auto dot = test.rfind('.');
  return dot == std::string::npos ? test : test.substr(dot + 1);
}

// A technique verdict holds for every launch of its slot (issue 27): the kernels that the slot's
// correctness and speed tests launched (their records' `kernels`, whichever graders process ran
// them) must all be kernels the technique test judged (its records' `judged`, by kernel family:
// a template instantiated per radius is one design). Returns what escaped, as one sentence.
std::string unjudged_in_slot(const std::string& variant, const std::map<std::string, GraderRun>& runs,
                             const GraderRun& technique) {
  std::set<std::string> judged;
  std::string judged_names, judged_on;
  for (const auto& t : technique.tests)
    for (const auto& k : t.judged)
      if (judged.insert(kernel_family(k)).second) {
        judged_names += (judged_names.empty() ? "" : ", ") + k;
        judged_on = problem_of(t.name);
      }
  if (judged.empty()) return {};  // a slot whose technique names no kernel of the student's (cuDNN's)
  std::string out;
  std::set<std::string> named;
  for (const char* kind : {"correctness.", "speedup."}) {
    const auto it = runs.find(kind + variant);
    if (it == runs.end()) continue;
    for (const auto& t : it->second.tests)
      for (const auto& k : t.kernels)
        if (!judged.count(kernel_family(k)) && named.insert(kernel_family(k)).second)
          out += (out.empty() ? "" : "; ") + std::string("on ") + problem_of(t.name) + " (" +
                 (kind[0] == 's' ? "the speed test" : "a correctness test") + ") " + k + " was launched";
  }
  if (out.empty()) return {};
  return variant + ": " + out + ", which the technique test never judged; on " + judged_on + " it judged " +
         judged_names + ". Every launch of the slot, on every problem size and every call, must use the technique";
}

// The slot's technique not used where another of its tests looked (a speed test's call counted by
// the GPU after its timed runs: TestRecord::off_technique), as "on <problem> (the speed test): <what>".
// The speed graders it gates count too (lab 05's speedup.sweep3d is gated by technique.steps3d).
std::string off_technique_in_slot(const LabSpec& spec, const std::string& variant,
                                  const std::map<std::string, GraderRun>& runs) {
  std::vector<std::string> ids = {"speedup." + variant, "correctness." + variant};
  for (const auto& g : spec.graders)
    if (g.kind == "speedup" && std::find(g.gated_by.begin(), g.gated_by.end(), "technique." + variant) != g.gated_by.end() &&
        std::find(ids.begin(), ids.end(), g.id) == ids.end())
      ids.push_back(g.id);
  for (const auto& id : ids) {
    const auto it = runs.find(id);
    if (it == runs.end()) continue;
    for (const auto& t : it->second.tests)
      if (!t.off_technique.empty())
        return "on " + problem_of(t.name) + " (" + (id[0] == 's' ? "the speed test" : "a correctness test") + ") " +
               t.off_technique;
  }
  return {};
}

}  // namespace

TestOutcome read_record(const std::string& path, const std::string& key) {
  json j;
  const std::string text = read_file(path);
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(path + ": not a test record: " + e.what());
  }
  if (!j.is_object() || !j.contains("test") || !j.at("test").is_string() || !j.contains("passed"))
    throw Error(path + ": not a test record (no 'test' or 'passed')");
  if (!key.empty()) {
    const bool signed_ok = j.contains("mac") && j.at("mac").is_string() &&
                           j.at("mac").get<std::string>() == record_mac(record_signed_text(text), key);
    if (!signed_ok) throw Error("its record was not written by the graders (no valid signature): ignored");
  }
  TestOutcome t;
  t.name = j.at("test").get<std::string>();
  t.recorded = true;
  t.passed = j.value("passed", false);
  t.skipped = j.value("skipped", false);
  // GoogleTest's scaffolding, from a judge built before the records held the graders' words only.
  t.message = failure_text(j.value("message", std::string()));
  if (j.contains("output") && j.at("output").is_string()) t.output = j.at("output").get<std::string>();
  if (j.contains("escaped") && j.at("escaped").is_string()) t.escaped = j.at("escaped").get<std::string>();
  for (auto [key, field] : {std::pair{"off_technique", &TestOutcome::off_technique},
                            std::pair{"counters_refused", &TestOutcome::counters_refused}})
    if (j.contains(key) && j.at(key).is_string()) t.*field = j.at(key).get<std::string>();
  if (j.contains("seed") && j.at("seed").is_number_unsigned()) t.seed = j.at("seed").get<std::uint64_t>();
  if (j.contains("base_seed") && j.at("base_seed").is_number_unsigned())
    t.base_seed = j.at("base_seed").get<std::uint64_t>();
  t.ratio = number(j, "ratio");
  t.threshold = number(j, "threshold");
  t.time_ms = number(j, "time_ms");
  if (j.contains("seconds") && j.at("seconds").is_object()) t.seconds = number(j.at("seconds"), "total");
  t.baseline_ms = number(j, "baseline_ms");
  for (const char* key : {"kernels", "judged"})
    if (j.contains(key) && j.at(key).is_array())
      for (const auto& k : j.at(key))
        if (k.is_string()) (key[0] == 'k' ? t.kernels : t.judged).push_back(k.get<std::string>());
  return t;
}

double speed_test_fraction(const GraderSpec& g, const TestOutcome& t) {
  if (!t.recorded || t.skipped || !t.ratio || g.points <= 0) return 0;
  if (!t.passed && !only_too_slow(t)) return 0;
  return speed_points(g, *t.ratio) / g.points;
}

double unreachable_points(const LabResult& lab) {
  double points = 0;
  for (const auto& g : lab.graders)
    if (g.needs_gpu && !g.extra_credit) points += g.max_points;
  return points;
}

namespace {

// What scoring one grader looks at: its lab, its spec, every grader's run, and its own.
struct GraderScoring {
  const LabSpec& spec;
  const GraderSpec& g;
  const std::map<std::string, GraderRun>& runs;
  const GraderRun& run;
};

// A grader's result before it is scored: its spec, its tests, whether any ran, the lowest speed-up.
GraderResult grader_result(const GraderSpec& g, const GraderRun& run) {
  GraderResult r;
  r.id = g.id;
  r.kind = g.kind;
  r.description = g.description;
  r.max_points = g.points;
  r.extra_credit = g.extra_credit;
  r.threshold = g.threshold;
  r.tests = run.tests;
  r.tests_total = static_cast<int>(run.tests.size());
  for (const auto& t : run.tests) {
    r.tests_passed += t.passed ? 1 : 0;
    r.ran = r.ran || (t.recorded && !t.skipped);
  }
  for (const auto& t : run.tests)
    if (t.ratio && (!r.ratio || *t.ratio < *r.ratio)) r.ratio = t.ratio;
  return r;
}

// A grader that needs a GPU: why it is not run here, and what would earn it 0 on a GPU.
void explain_needs_gpu(const GraderScoring& s, GraderResult& r) {
  const GraderSpec& g = s.g;
  const auto& runs = s.runs;
  r.needs_gpu = true;
  r.reason = kNeedsGpu;
  // What the GPU's speed grader refuses whatever the time, the CPU backend sees too (issue 27,
  // item 5): a slot whose kernels went to another stream earns nothing on a GPU, in these words.
  const std::string variant = g.id.substr(g.id.find('.') + 1);
  for (const char* kind : {"correctness.", "technique."}) {
    const auto other = runs.find(kind + variant);
    if (other == runs.end() || !r.on_gpu.empty()) continue;
    for (const auto& t : other->second.tests)
      if (!t.escaped.empty()) {
        r.on_gpu = "earns 0 on a GPU: " + t.escaped + " (seen on the CPU backend in " + t.name + ")";
        r.reason = kNeedsGpu + std::string("; it ") + r.on_gpu;
        break;
      }
  }
}

// A correctness or technique grader whose tests ran: full points when all pass, else the first failure.
void score_correctness(const GraderScoring& s, GraderResult& r) {
  const LabSpec& spec = s.spec;
  const GraderSpec& g = s.g;
  const auto& runs = s.runs;
  const GraderRun& run = s.run;
  r.passed = r.tests_passed == r.tests_total && run.sanitizer.empty() && run.problem.empty();
  const std::string variant = g.id.substr(g.id.find('.') + 1);
  const std::string unjudged = g.kind == "technique" && r.passed ? unjudged_in_slot(variant, runs, run) : "";
  const std::string off = g.kind == "technique" && r.passed ? off_technique_in_slot(spec, variant, runs) : "";
  std::string refused;
  if (g.kind == "technique")
    for (const auto& t : run.tests)
      if (refused.empty() && !t.counters_refused.empty()) refused = t.counters_refused;
  if (!unjudged.empty()) {
    r.passed = false;
    r.reason = "the technique test passed on its problem, but " + unjudged;
  } else if (!off.empty()) {
    r.passed = false;
    r.reason = "the technique test passed on its problem, but " + off;
  } else if (r.passed && !refused.empty()) {
    r.points = g.points;
    r.review = true;
    r.reason = "all " + std::to_string(r.tests_total) + " tests passed on the compiled code's facts, but the "
               "amounts were not counted: " + refused + "; flagged for the instructor's review";
  } else if (r.passed) {
    r.points = g.points;
    r.reason = "all " + std::to_string(r.tests_total) + " tests passed";
  } else if (r.tests_passed == r.tests_total && !run.sanitizer.empty()) {
    r.reason = "every test passed, but compute-sanitizer found errors: " + first_line(run.sanitizer);
  } else if (r.tests_passed == r.tests_total) {
    r.reason = "every test passed, but the graders process " + run.problem;
  } else {
    const auto bad = std::find_if(run.tests.begin(), run.tests.end(), [](const TestOutcome& t) { return !t.passed; });
    r.reason = std::to_string(r.tests_total - r.tests_passed) + " of " + std::to_string(r.tests_total) +
               " tests failed; the first: " + bad->name + ": " +
               (bad->message.empty() ? std::string("failed") : first_line(bad->message));
    if (!run.problem.empty()) r.reason += " (the graders process " + run.problem + ")";
    if (run.recheck) apply_compiler_bug_policy(g, *run.recheck, r);
  }
}

// A speed grader whose tests ran: points from each test's speed-up against the threshold.
void score_speed(const GraderScoring& s, GraderResult& r) {
  const GraderSpec& g = s.g;
  const GraderRun& run = s.run;
  double sum = 0;
  for (const auto& t : run.tests) sum += speed_test_fraction(g, t);
  r.points = run.problem.empty() ? g.points * sum / r.tests_total : 0.0;
  r.passed = r.tests_passed == r.tests_total && r.points >= g.points - 1e-9;
  char buf[256];
  if (r.ratio)
    std::snprintf(buf, sizeof buf, "lowest speed-up %.3gx against a threshold of %.3gx (partial points from %.3gx)",
                  *r.ratio, g.threshold, g.partial_from);
  else
    std::snprintf(buf, sizeof buf, "no speed-up measured (threshold %.3gx)", g.threshold);
  r.reason = std::string(buf) + "; " + std::to_string(r.tests_passed) + " of " + std::to_string(r.tests_total) +
             " tests passed";
  const auto bad = std::find_if(run.tests.begin(), run.tests.end(),
                                [&](const TestOutcome& t) { return !t.passed && speed_test_fraction(g, t) == 0; });
  if (bad != run.tests.end())
    r.reason += "; " + bad->name + ": " + (bad->message.empty() ? std::string("failed") : first_line(bad->message));
  if (!run.problem.empty()) r.reason += " (the graders process " + run.problem + ")";
}

// One grader of the lab, scored: its points and the reason for them, in the gradebook's words.
GraderResult score_grader(const LabSpec& spec, const GraderSpec& g, const std::map<std::string, GraderRun>& runs,
                          const std::string& failure) {
  const auto it = runs.find(g.id);
  const GraderRun empty;
  const GraderRun& run = it == runs.end() ? empty : it->second;
  GraderResult r = grader_result(g, run);
  const GraderScoring s{spec, g, runs, run};

  if (run.needs_gpu) {
    explain_needs_gpu(s, r);
  } else if (!failure.empty()) {
    r.reason = "no points: " + failure;
  } else if (!run.not_run.empty()) {
    r.reason = "not run: " + run.not_run;
  } else if (run.tests.empty()) {
    r.reason = "not run: the graders process listed no test of this grader" +
               (run.problem.empty() ? std::string() : " (" + run.problem + ")");
  } else if (!r.ran) {
    const auto& t = run.tests.front();
    const std::string why = t.message.empty() ? run.problem : first_line(t.message);
    r.reason = starts_with(why, "not run") || starts_with(why, "not timed") ? why : "not run: " + why;
  } else if (g.kind == "correctness" || g.kind == "technique") {
    score_correctness(s, r);
  } else {
    score_speed(s, r);
  }
  if (!run.note.empty()) r.reason += " (" + run.note + ")";
  if (!run.infrastructure.empty()) {
    r.reason += " (" + run.infrastructure + ")";
    r.review = true;
    r.infrastructure = run.infrastructure;
  }
  r.recheck = run.recheck;
  return r;
}

// Correctness and technique gate speed: a speed grader whose gate did not pass earns nothing.
void apply_gates(const LabSpec& spec, const std::string& failure, LabResult& lab) {
  for (std::size_t i = 0; i < spec.graders.size(); ++i) {
    const GraderSpec& g = spec.graders[i];
    GraderResult& r = lab.graders[i];
    if (!failure.empty() || r.needs_gpu) continue;
    for (const auto& id : g.gated_by) {
      const auto gate = std::find_if(lab.graders.begin(), lab.graders.end(),
                                     [&](const GraderResult& o) { return o.id == id; });
      if (gate != lab.graders.end() && !gate->passed && (r.points > 0 || r.reason.rfind("not run", 0) != 0)) {
        r.points = 0;
        r.passed = false;
        r.reason = "no points: " + id + " did not pass, and " +
                   (id.rfind("technique", 0) == 0 ? "the technique gates speed" : "correctness gates speed") +
                   (r.ran ? " (" + r.reason + ")" : std::string());
        break;
      }
    }
  }
}

}  // namespace

LabResult score_lab(const LabSpec& spec, const std::map<std::string, GraderRun>& runs, const std::string& failure) {
  LabResult lab;
  lab.lab = spec.lab;
  lab.title = spec.title;
  lab.failure = failure;
  for (const auto& g : spec.graders) lab.graders.push_back(score_grader(spec, g, runs, failure));
  // Correctness and technique gate speed, whatever the speed graders measured.
  apply_gates(spec, failure, lab);
  for (std::size_t i = 0; i < spec.graders.size(); ++i) {
    lab.score += lab.graders[i].points;
    if (!spec.graders[i].extra_credit) lab.max_score += spec.graders[i].points;
  }
  return lab;
}

}  // namespace convlab::cli
