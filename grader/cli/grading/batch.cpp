// A lab's graders in as few graders processes as may be (issue 29, item 4). See batch.hpp.
#include "grading/batch.hpp"

#include "common/util.hpp"

#include <algorithm>
#include <filesystem>

namespace convlab::cli {

namespace fs = std::filesystem;

namespace {

bool killed(const RunResult& r) {
  return r.timed_out || r.idle_timed_out || r.output_exceeded || r.signal || r.start_failed;
}

bool recorded(const std::map<std::string, TestOutcome>& records, const std::string& test) {
  const auto it = records.find(test);
  return it != records.end() && it->second.recorded;
}

// A grader whose tests all have records, from a process that failed in another grader's test or
// ended well: its records, and no fault of the process's.
GraderRun recorded_run(const BatchGrader& g, const std::map<std::string, TestOutcome>& records) {
  GraderRun run;
  for (const auto& name : g.tests) run.tests.push_back(records.at(name));
  return run;
}

std::string ids(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& id : v) s += (s.empty() ? "" : ", ") + id;
  return s;
}

}  // namespace

std::map<std::string, TestOutcome> read_records(const std::string& results, const std::vector<std::string>& tests,
                                                const std::string& key) {
  std::map<std::string, TestOutcome> out;
  for (const auto& name : tests) {
    const std::string path = results + "/" + safe_name(name) + ".json";
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;
    TestOutcome t;
    try {
      t = read_record(path, key);
    } catch (const Error& e) {
      t.message = e.what();
    }
    if (t.name != name) t = TestOutcome{}, t.message = "its record names another test";
    t.name = name;
    out[name] = std::move(t);
  }
  return out;
}

std::string running_test(const RunResult& r) {
  return starts_with(r.last_progress, "[ RUN      ] ") ? trim(r.last_progress.substr(13)) : std::string();
}

bool harness_leftovers_only(const RunResult& r) { return r.leftover > 0 && r.leftover_harness == r.leftover; }

GraderRun grader_run(const RunResult& r, const std::vector<std::string>& tests,
                     const std::map<std::string, TestOutcome>& records) {
  GraderRun run;
  const int left_by_submission = r.leftover - r.leftover_harness;
  const std::string running = running_test(r);  // the test in progress when the process ended
  bool all_passed = true;
  for (const auto& name : tests) {
    const auto it = records.find(name);
    TestOutcome t = it != records.end() ? it->second : TestOutcome{};
    t.name = name;
    if (!t.recorded) {
      if (name == running) t.message = "this test " + r.describe();
      else if (!r.ok()) t.message = "not run: an earlier test of this grader " + r.describe();
      else t.message = "not run: the graders process ended without recording it";
    }
    all_passed = all_passed && t.passed;
    run.tests.push_back(std::move(t));
  }
  if (killed(r) || left_by_submission > 0 || (r.exit_code != 0 && r.exit_code != 1) || (r.exit_code == 0) != all_passed)
    run.problem = r.describe() + (r.exit_code == 1 && all_passed ? " although every test passed" : "");
  if (r.exit_code == 0 && !all_passed && !killed(r) && left_by_submission == 0) run.problem.clear();  // failures recorded honestly
  return run;
}

BatchDecision judge_batch(const std::vector<BatchGrader>& graders, const GradersProcess& p) {
  BatchDecision d;
  const RunResult& r = p.result;
  if (graders.size() == 1) {
    d.done[graders.front().id] = grader_run(r, graders.front().tests, p.records);
    return d;
  }
  bool all_recorded = true, all_passed = true;
  for (const auto& g : graders)
    for (const auto& t : g.tests) {
      all_recorded = all_recorded && recorded(p.records, t);
      all_passed = all_passed && recorded(p.records, t) && p.records.at(t).passed;
    }
  const int left_by_submission = r.leftover - r.leftover_harness;
  const bool ended_well = !killed(r) && left_by_submission == 0 && (r.exit_code == 0 || r.exit_code == 1) &&
                          !(r.exit_code == 1 && all_passed) && all_recorded;
  if (ended_well) {
    for (const auto& g : graders) d.done[g.id] = recorded_run(g, p.records);
    return d;
  }
  // The test running when it failed, if it has no record: its grader is the one to charge.
  const std::string running = running_test(r);
  const BatchGrader* blamed = nullptr;
  if (!running.empty() && !recorded(p.records, running))
    for (const auto& g : graders)
      if (std::find(g.tests.begin(), g.tests.end(), running) != g.tests.end()) blamed = &g;
  if (blamed && left_by_submission == 0 && !r.timed_out) {
    d.done[blamed->id] = grader_run(r, blamed->tests, p.records);
    for (const auto& g : graders) {
      if (&g == blamed) continue;
      if (std::all_of(g.tests.begin(), g.tests.end(), [&](const std::string& t) { return recorded(p.records, t); }))
        d.done[g.id] = recorded_run(g, p.records);
      else
        d.again.push_back(g.id);
    }
    d.why = "the graders process " + r.describe() + " in " + running + ": charged to " + blamed->id + " alone" +
            (d.again.empty() ? "" : "; " + ids(d.again) + " run again in a fresh process");
    return d;
  }
  for (const auto& g : graders) d.alone.push_back(g.id);
  const std::string detail = left_by_submission > 0 || r.timed_out ? ""
                             : r.exit_code == 1 && all_passed    ? " although every test passed"
                             : running.empty()                   ? " before any test ran"
                             : !all_recorded                     ? ", leaving tests without records"
                                                                 : "";
  d.why = "the graders process " + r.describe() + detail +
          ": no one test can be blamed, so each grader runs again in a process of its own";
  return d;
}

std::map<std::string, double> split_seconds(const std::vector<BatchGrader>& graders, const GradersProcess& p) {
  std::map<std::string, double> by_duration, by_count, out;
  double durations = 0, counts = 0;
  for (const auto& g : graders) {
    for (const auto& t : g.tests)
      if (const auto r = p.records.find(t); r != p.records.end() && r->second.recorded && r->second.seconds)
        by_duration[g.id] += *r->second.seconds;
      else if (const auto it = p.test_seconds.find(t); it != p.test_seconds.end())
        by_duration[g.id] += it->second;
    by_count[g.id] = static_cast<double>(g.tests.size());
    durations += by_duration[g.id];
    counts += by_count[g.id];
  }
  for (const auto& g : graders) {
    const double share = durations > 0 ? by_duration[g.id] / durations
                         : counts > 0  ? by_count[g.id] / counts
                                       : 1.0 / static_cast<double>(graders.size());
    out[g.id] = p.result.wall_s * share;
  }
  return out;
}

std::map<std::string, BatchRun> run_batch(const std::vector<BatchGrader>& graders, const BatchSteps& steps) {
  std::map<std::string, BatchRun> out;
  std::map<std::string, double> seconds;  // each grader's shares of the batch's processes
  const auto find = [&](const std::string& id) -> const BatchGrader& {
    return *std::find_if(graders.begin(), graders.end(), [&](const BatchGrader& g) { return g.id == id; });
  };
  std::vector<BatchGrader> pending = graders;
  bool again_for_harness = false;  // this set of graders already ran once more for the harness's leftovers
  int round = 0;
  // Each round decides a grader (the one whose test failed) or sends all to processes of their
  // own, so the loop ends within graders.size() rounds (twice that with the harness's reruns).
  while (!pending.empty()) {
    if (pending.size() == 1) {
      out[pending.front().id].run = steps.alone(pending.front());
      break;
    }
    const GradersProcess p = steps.run(pending, ++round);
    for (const auto& [id, s] : split_seconds(pending, p)) seconds[id] += s;
    std::vector<std::string> alone, again;
    if (harness_leftovers_only(p.result) && !again_for_harness) {
      again_for_harness = true;
      if (steps.log)
        steps.log("the harness left " + std::to_string(p.result.leftover) +
                  " of its own process(es) behind; running the graders again");
      continue;
    }
    if (harness_leftovers_only(p.result)) {
      for (const auto& g : pending) alone.push_back(g.id);
      if (steps.log)
        steps.log("the harness left " + std::to_string(p.result.leftover) +
                  " of its own process(es) behind again: each grader runs again in a process of its own");
    } else {
      BatchDecision d = judge_batch(pending, p);
      if (!d.why.empty() && steps.log) steps.log(d.why);
      for (auto& [id, run] : d.done) out[id] = BatchRun{std::move(run), p.results};
      alone = std::move(d.alone);
      again = std::move(d.again);
    }
    for (const auto& id : alone) out[id] = BatchRun{steps.alone(find(id)), ""};
    std::vector<BatchGrader> next;
    for (const auto& g : pending)
      if (std::find(again.begin(), again.end(), g.id) != again.end()) next.push_back(g);
    if (next.size() == pending.size()) {  // nothing decided (judge_batch always decides one): never loop
      for (const auto& g : next) out[g.id] = BatchRun{steps.alone(g), ""};
      next.clear();
    }
    again_for_harness = false;
    pending = std::move(next);
  }
  for (auto& [id, b] : out) b.run.seconds += seconds[id];
  return out;
}

void add_phase_seconds(std::map<std::string, double>& phase, const std::vector<BatchGrader>& graders,
                       const std::map<std::string, BatchRun>& runs, double wall) {
  std::map<std::string, double> by_seconds, by_count;
  double seconds = 0, counts = 0;
  for (const auto& g : graders) {
    const std::string key = g.kind == "speedup" ? "speed" : g.kind;
    if (const auto it = runs.find(g.id); it != runs.end()) by_seconds[key] += it->second.run.seconds, seconds += it->second.run.seconds;
    by_count[key] += static_cast<double>(g.tests.size());
    counts += static_cast<double>(g.tests.size());
  }
  for (const auto& [key, n] : by_count)
    if (seconds > 0) phase[key] += wall * by_seconds[key] / seconds;
    else if (counts > 0) phase[key] += wall * n / counts;
}

}  // namespace convlab::cli
