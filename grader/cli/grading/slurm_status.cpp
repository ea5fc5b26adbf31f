// convlab grade --slurm: what Slurm (sacct, squeue) and the task folders say of each array
// task, and the table of them. See slurm_internal.hpp and slurm.hpp.
#include "grading/slurm_internal.hpp"

#include "common/sandbox.hpp"
#include "common/util.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

namespace convlab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace slurm_internal {

// ---- what Slurm and the task folders say ---------------------------------------------------

Accounting query_states(const Manifest& m) {
  Accounting a;
  std::string ids;
  for (const auto& r : m.rounds)
    if (!r.array_job.empty()) ids += (ids.empty() ? "" : ",") + r.array_job;
  if (ids.empty()) {
    a.source = "nothing submitted yet";
    return a;
  }
  // sacct knows every job that ever ran (with slurmdbd); squeue only what slurmctld
  // still holds (MinJobAge, 5 minutes by default, after a job ended).
  std::string text;
  const RunResult r = run_tool({"sacct", "-X", "-P", "-n", "-j", ids, "--format=JobID,State,ExitCode,NodeList,Elapsed"}, "", 120);
  if (r.ok()) {
    a.source = "sacct";
    text = r.output;
  } else {
    // One query per array job: squeue refuses a whole list when one of its jobs is forgotten.
    a.source = "squeue (sacct: " + trim(head_lines(trim(r.output), 1)) + ")";
    for (const auto& id : split(ids, ',')) {
      const RunResult q = run_tool({"squeue", "-h", "-r", "--states=all", "-j", id, "-o", "%i|%T||%N|%M"}, "", 120);
      if (q.ok()) text += q.output + "\n";
    }
  }
  for (const auto& round : m.rounds) {
    if (round.array_job.empty()) continue;
    const auto states = slurm::parse_job_states(text, round.array_job);
    for (int k : round.tasks) {
      const auto it = states.find(k);
      if (it != states.end()) a.states[k] = it->second;
      else a.states.erase(k);  // a later round without a record replaces an earlier one's
    }
  }
  return a;
}

// The task's own record (OUT/tasks/K/slurm.json): one entry per time it started.
json read_task_record(const Manifest& m, int k) {
  const std::string path = task_dir(m, k) + "/slurm.json";
  if (!fs::exists(path)) return json{{"task", k}, {"attempts", json::array()}};
  try {
    json j = json::parse(read_file(path));
    if (!j.contains("attempts") || !j.at("attempts").is_array()) throw Error("no attempts");
    return j;
  } catch (const std::exception& e) {
    std::cerr << "convlab: warning: ignoring " << path << ": " << e.what() << "\n";
    return json{{"task", k}, {"attempts", json::array()}};
  }
}

bool has_result(const Manifest& m, int k, const std::string& student) {
  return fs::exists(task_dir(m, k) + "/state/" + student + ".json");
}

namespace {

std::string explain_state(const std::string& state) {
  const std::string word = state.substr(0, state.find(' '));
  if (word == "NODE_FAIL") return "the node failed";
  if (word == "TIMEOUT") return "it ran past its time limit (--time)";
  if (word == "PREEMPTED") return "a job of higher priority preempted it";
  if (word == "OUT_OF_MEMORY") return "the task ran out of memory";
  if (word == "CANCELLED") return "it was cancelled";
  if (word == "BOOT_FAIL") return "the node failed to boot";
  if (word == "DEADLINE") return "it reached its deadline";
  if (word == "FAILED") return "it exited with an error";
  if (word == "COMPLETED") return "it ended without a result for every submission";
  return "";
}

}  // namespace

std::vector<TaskStatus> task_statuses(const Manifest& m, const Accounting& acc) {
  std::vector<TaskStatus> out;
  for (const auto& share : m.shares) {
    TaskStatus t;
    t.index = share.index;
    t.total = share.students.size();
    std::string next;  // the first submission without a result: the one in progress when it stopped
    for (const auto& s : share.students) {
      if (has_result(m, share.index, s)) ++t.graded;
      else if (next.empty()) next = s;
    }
    const auto st = acc.states.find(share.index);
    if (st != acc.states.end()) t.slurm = st->second;
    std::string array_job;
    for (const auto& r : m.rounds)
      if (std::find(r.tasks.begin(), r.tasks.end(), share.index) != r.tasks.end()) array_job = r.array_job;
    if (!array_job.empty())
      t.log = m.out + "/slurm/logs/task-" + std::to_string(share.index) + "-job" + array_job + ".out";
    const json rec = read_task_record(m, share.index);
    const json last = rec.at("attempts").empty() ? json::object() : rec.at("attempts").back();
    const bool exited_ok = last.contains("exit_code") && last.at("exit_code") == 0;
    const std::string progress = std::to_string(t.graded) + " of " + std::to_string(t.total) + " graded";
    if (exited_ok && t.graded == t.total) {
      t.verdict = "done";
      t.why = progress;
    } else if (t.slurm && slurm::is_active(t.slurm->state)) {
      t.verdict = "active";
      t.why = t.slurm->state + (t.slurm->node.empty() || t.slurm->node == "None assigned" ? "" : " on " + t.slurm->node) +
              ", " + progress;
    } else if (array_job.empty()) {
      t.verdict = "not submitted";
      t.why = "never submitted (" + progress + ")";
    } else {
      t.verdict = "failed";
      if (t.slurm) {
        t.why = t.slurm->state;
        const std::string e = explain_state(t.slurm->state);
        if (!e.empty()) t.why += ": " + e;
      } else {
        t.why = "Slurm has no record of it (it never started, or ended long ago on a cluster without accounting)";
      }
      if (last.contains("exit_code") && last.at("exit_code") != 0)
        t.why += "; convlab grade exited with status " + last.at("exit_code").dump();
      t.why += "; " + progress;
      if (!next.empty() && t.graded > 0) t.why += ", it was grading " + next;
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string status_table(const std::vector<TaskStatus>& tasks, const std::string& source) {
  std::ostringstream t;
  t << "tasks (Slurm states from " << source << "):\n";
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-5s %-14s %-14s %s\n", "task", "verdict", "job", "why");
  t << buf;
  for (const auto& s : tasks) {
    std::snprintf(buf, sizeof buf, "  %-5d %-14s %-14s ", s.index, s.verdict.c_str(),
                  s.slurm ? s.slurm->job.c_str() : "-");
    t << buf << s.why << "\n";
    if (s.verdict == "failed" && !s.log.empty()) t << "        log: " << s.log << "\n";
  }
  return t.str();
}

}  // namespace slurm_internal

}  // namespace convlab::cli
