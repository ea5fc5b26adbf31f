// convlab grade --slurm: the manifest, the sbatch scripts, the array task and
// the collector. See slurm.hpp for the layout of a run and docs/grading.md.
#include "grading/slurm.hpp"

#include "grading/intake.hpp"
#include "grading/reports.hpp"
#include "common/sandbox.hpp"
#include "grading/submission.hpp"
#include "common/util.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

namespace convlab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* const kGroup = "Slurm";
// The GPU the specs' shipped speed thresholds were calibrated on (docs/grading.md,
// "Calibration"); a --calibration file names its own.
const char* const kShippedThresholdsGpu = "NVIDIA H100 80GB HBM3";
constexpr int kDefaultPerTask = 10;
constexpr int kDefaultCpus = 4;
// Merging reads a few JSON files per student: minutes even for a large class.
const char* const kCollectorTime = "0:20:00";

}  // namespace

// ---- the parts that decide something (unit-tested) ---------------------------------

namespace slurm {

std::vector<std::string> unique_names(const std::vector<std::string>& names) {
  // As Grader::run() names them: the first keeps its name, repeats get -2, -3, ...
  std::set<std::string> taken;
  std::vector<std::string> out;
  for (const auto& base : names) {
    std::string name = base;
    for (int k = 2; taken.count(name); ++k) name = base + "-" + std::to_string(k);
    taken.insert(name);
    out.push_back(name);
  }
  return out;
}

std::vector<std::string> student_names(const std::vector<std::string>& submissions) {
  std::vector<std::string> base;
  for (const auto& s : submissions) base.push_back(student_name(s));
  return unique_names(base);
}

namespace {

// alice, alice-2 and alice-2-3 can turn into one another's "-k" names; names of
// different families never can.
std::string name_family(std::string name) {
  for (;;) {
    const auto dash = name.rfind('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 == name.size()) return name;
    if (!std::all_of(name.begin() + static_cast<long>(dash) + 1, name.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; }))
      return name;
    name.resize(dash);
  }
}

// Splits on `sep`, keeping empty fields (sacct prints them).
std::vector<std::string> fields(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

std::vector<Share> split_shares(const std::vector<std::string>& submissions, int per_task) {
  std::vector<std::string> base;
  for (const auto& s : submissions) base.push_back(student_name(s));
  return split_shares(submissions, base, per_task);
}

std::vector<Share> split_shares(const std::vector<std::string>& submissions, const std::vector<std::string>& base_names,
                                int per_task) {
  if (per_task < 1) throw Error("--per-task must be at least 1");
  if (base_names.size() != submissions.size()) throw Error("split_shares: a name for every submission is needed");
  const std::vector<std::string> names = unique_names(base_names);
  std::vector<std::vector<std::size_t>> families;
  std::map<std::string, std::size_t> family_of;
  for (std::size_t i = 0; i < submissions.size(); ++i) {
    const std::string key = name_family(base_names[i]);
    const auto it = family_of.find(key);
    if (it == family_of.end()) {
      family_of[key] = families.size();
      families.push_back({i});
    } else {
      families[it->second].push_back(i);
    }
  }
  std::vector<Share> shares;
  std::vector<std::size_t> current;
  const auto flush = [&] {
    if (current.empty()) return;
    std::sort(current.begin(), current.end());
    Share s;
    s.index = static_cast<int>(shares.size());
    for (std::size_t i : current) {
      s.submissions.push_back(submissions[i]);
      s.students.push_back(names[i]);
    }
    shares.push_back(std::move(s));
    current.clear();
  };
  for (const auto& f : families) {
    // A family larger than a share stays whole: its names depend on one another.
    if (!current.empty() && current.size() + f.size() > static_cast<std::size_t>(per_task)) flush();
    current.insert(current.end(), f.begin(), f.end());
  }
  flush();
  return shares;
}

std::vector<std::string> given_options(const CLI::App& grade, const std::set<std::string>& skip) {
  std::vector<std::string> out;
  for (const CLI::Option* o : grade.get_options()) {
    if (o->count() == 0 || o->get_group() == kGroup) continue;
    if (o->get_lnames().empty() && o->get_snames().empty()) continue;  // a positional
    const bool is_long = !o->get_lnames().empty();
    const std::string name = is_long ? "--" + o->get_lnames().front() : "-" + o->get_snames().front();
    if (skip.count(name)) continue;
    if (o->get_items_expected_max() == 0) {  // a flag, given count() times
      for (std::size_t k = 0; k < o->count(); ++k) out.push_back(name);
      continue;
    }
    // One word per value, so that a value starting with '-' is never read as an option.
    for (const auto& v : o->results()) out.push_back(is_long ? name + "=" + v : name + v);
  }
  return out;
}

std::string preset_of(const std::vector<std::string>& grade_options) {
  std::string preset = "default";
  for (const auto& o : grade_options)
    if (starts_with(o, "--preset=")) preset = o.substr(9);
  return preset;
}

std::map<int, JobState> parse_job_states(const std::string& text, const std::string& array_job) {
  std::map<int, JobState> out;
  std::istringstream in(text);
  std::string line;
  const std::string prefix = array_job + "_";
  while (std::getline(in, line)) {
    const auto f = fields(trim(line), '|');
    if (f.size() < 2 || !starts_with(f[0], prefix)) continue;
    std::string rest = f[0].substr(prefix.size());
    std::vector<int> indices;
    if (!rest.empty() && rest.front() == '[' && rest.back() == ']') {  // pending: 123_[4-6,9%2]
      rest = rest.substr(1, rest.size() - 2);
      rest = rest.substr(0, rest.find('%'));
      for (const auto& piece : split(rest, ',')) {
        const auto dash = piece.find('-');
        const std::string a = piece.substr(0, dash), b = dash == std::string::npos ? a : piece.substr(dash + 1);
        if (!all_digits(a) || !all_digits(b)) continue;
        for (int k = std::stoi(a); k <= std::stoi(b) && k - std::stoi(a) < 100000; ++k) indices.push_back(k);
      }
    } else if (all_digits(rest)) {  // 123_4 (not a step such as 123_4.batch)
      indices.push_back(std::stoi(rest));
    }
    JobState s;
    s.job = f[0];
    s.state = trim(f[1]);
    if (f.size() > 2) s.exit_code = trim(f[2]);
    if (f.size() > 3) s.node = trim(f[3]);
    if (f.size() > 4) s.elapsed = trim(f[4]);
    for (int k : indices) {
      JobState one = s;
      if (indices.size() > 1) one.job = array_job + "_" + std::to_string(k);
      out[k] = one;
    }
  }
  return out;
}

bool is_active(const std::string& state) {
  static const std::set<std::string> active = {"PENDING",    "RUNNING",      "REQUEUED",     "REQUEUE_FED",
                                               "REQUEUE_HOLD", "RESIZING",   "SUSPENDED",    "CONFIGURING",
                                               "COMPLETING", "STAGE_OUT",    "SIGNALING",    "RESV_DEL_HOLD",
                                               "SPECIAL_EXIT", "STOPPED"};
  return active.count(state.substr(0, state.find(' '))) > 0;
}

std::string gpu_model(const std::string& description) { return trim(description.substr(0, description.find(" ("))); }

std::string calibration_note(const std::string& graded_on, const std::string& calibrated_on) {
  if (graded_on.empty() || calibrated_on.empty() || graded_on == calibrated_on) return "";
  return "graded on an " + graded_on + ", but the speed thresholds were calibrated on an " + calibrated_on +
         ": its speed points were measured against another GPU's thresholds, so they may differ from those of "
         "submissions graded on an " +
         calibrated_on + " (grade it there with --gpu-type or --constraint, or calibrate for this GPU)";
}

std::string default_time(std::size_t submissions, std::size_t labs) {
  const std::size_t minutes = 20 + 3 * submissions * std::max<std::size_t>(labs, 1);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%zu:%02zu:00", minutes / 60, minutes % 60);
  return buf;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace slurm

// ---- the run's record: OUT/slurm/manifest.json -------------------------------------------

namespace {

using slurm::JobState;
using slurm::Share;

// One sbatch of the array (and of its collector): the first, then one per --resume.
struct Round {
  int number = 0;
  std::string array_job;      // "" if sbatch refused it
  std::string collector_job;  // "" if sbatch refused it
  std::vector<int> tasks;
  std::string submitted;
  std::string dir;            // OUT/slurm/round-N: its scripts
};

struct Manifest {
  std::string out, root, convlab, cwd, created;
  std::vector<std::string> grade_options;  // forwarded to every task's `convlab grade`
  std::vector<std::string> labs;           // lab ids, in gradebook order
  std::vector<double> lab_points;
  std::string calibration;                 // OUT/slurm/calibration.json, or ""
  std::string calibrated_on;               // the GPU model its thresholds were measured on
  std::string calibrated_on_source;
  std::string expect;                      // OUT/slurm/expect.json, or ""
  std::string work_dir;                    // --work-dir base, or "" (OUT/tasks/K/work)
  std::vector<std::string> arguments;      // the submissions as given (bulk downloads, archives, folders)
  std::vector<std::string> submissions, students;  // one student's each, as the intake found them, and their names
  std::string intake_dir;                  // OUT/slurm/intake: the tasks' intake lists ("" in runs made before them)
  std::vector<std::string> intake_notes;   // what the intake said (files left out, students without a submission)
  std::vector<Share> shares;
  SlurmOptions slurm;
  std::vector<Round> rounds;
};

std::string manifest_path(const std::string& out) { return out + "/slurm/manifest.json"; }

json slurm_to_json(const SlurmOptions& s) {
  return {{"partition", s.partition},         {"account", s.account},          {"gpu_type", s.gpu_type},
          {"constraint", s.constraint},       {"no_gpu", s.no_gpu},            {"time", s.time},
          {"per_task", s.per_task},           {"tasks_at_once", s.tasks_at_once}, {"cpus_per_task", s.cpus_per_task},
          {"sbatch_args", s.sbatch_args}};
}

void save(const Manifest& m) {
  json shares = json::array(), rounds = json::array();
  for (const auto& s : m.shares)
    shares.push_back({{"index", s.index}, {"submissions", s.submissions}, {"students", s.students}});
  for (const auto& r : m.rounds)
    rounds.push_back({{"round", r.number}, {"array_job", r.array_job}, {"collector_job", r.collector_job},
                      {"tasks", r.tasks}, {"submitted", r.submitted}, {"scripts", r.dir}});
  const json j = {{"convlab_slurm", 1},
                  {"about", "convlab grade --slurm: array index -> submissions; see docs/grading.md"},
                  {"created", m.created},
                  {"out", m.out},
                  {"root", m.root},
                  {"convlab", m.convlab},
                  {"cwd", m.cwd},
                  {"grade_options", m.grade_options},
                  {"labs", m.labs},
                  {"lab_points", m.lab_points},
                  {"calibration", m.calibration},
                  {"calibrated_on", m.calibrated_on},
                  {"calibrated_on_source", m.calibrated_on_source},
                  {"expect", m.expect},
                  {"work_dir", m.work_dir},
                  {"arguments", m.arguments},
                  {"intake_dir", m.intake_dir},
                  {"intake_notes", m.intake_notes},
                  {"submissions", m.submissions},
                  {"students", m.students},
                  {"tasks", shares},
                  {"slurm", slurm_to_json(m.slurm)},
                  {"rounds", rounds}};
  write_file_atomic(manifest_path(m.out), j.dump(2) + "\n");
}

Manifest load_manifest(const std::string& out) {
  const std::string path = manifest_path(out);
  if (!fs::exists(path))
    throw Error(out + " holds no Slurm grading run (no " + path + "); start one with `convlab grade ... --slurm --out " +
                out + "`");
  try {
    const json j = json::parse(read_file(path));
    if (j.value("convlab_slurm", 0) != 1) throw Error(path + " is not a manifest of `convlab grade --slurm`");
    Manifest m;
    m.out = j.at("out").get<std::string>();
    m.root = j.at("root").get<std::string>();
    m.convlab = j.at("convlab").get<std::string>();
    m.cwd = j.at("cwd").get<std::string>();
    m.created = j.at("created").get<std::string>();
    m.grade_options = j.at("grade_options").get<std::vector<std::string>>();
    m.labs = j.at("labs").get<std::vector<std::string>>();
    m.lab_points = j.at("lab_points").get<std::vector<double>>();
    m.calibration = j.at("calibration").get<std::string>();
    m.calibrated_on = j.at("calibrated_on").get<std::string>();
    m.calibrated_on_source = j.at("calibrated_on_source").get<std::string>();
    m.expect = j.at("expect").get<std::string>();
    m.work_dir = j.at("work_dir").get<std::string>();
    m.submissions = j.at("submissions").get<std::vector<std::string>>();
    m.students = j.at("students").get<std::vector<std::string>>();
    // Runs made before the intake lists gave each task the arguments themselves.
    m.arguments = j.value("arguments", m.submissions);
    m.intake_dir = j.value("intake_dir", std::string());
    m.intake_notes = j.value("intake_notes", std::vector<std::string>());
    for (const auto& t : j.at("tasks")) {
      Share s;
      s.index = t.at("index").get<int>();
      s.submissions = t.at("submissions").get<std::vector<std::string>>();
      s.students = t.at("students").get<std::vector<std::string>>();
      if (s.index != static_cast<int>(m.shares.size()) || s.submissions.size() != s.students.size())
        throw Error(path + ": task " + std::to_string(s.index) + " is malformed");
      m.shares.push_back(std::move(s));
    }
    const json& s = j.at("slurm");
    m.slurm.enabled = true;
    m.slurm.partition = s.at("partition").get<std::string>();
    m.slurm.account = s.at("account").get<std::string>();
    m.slurm.gpu_type = s.at("gpu_type").get<std::string>();
    m.slurm.constraint = s.at("constraint").get<std::string>();
    m.slurm.no_gpu = s.at("no_gpu").get<bool>();
    m.slurm.time = s.at("time").get<std::string>();
    m.slurm.per_task = s.at("per_task").get<int>();
    m.slurm.tasks_at_once = s.at("tasks_at_once").get<int>();
    m.slurm.cpus_per_task = s.at("cpus_per_task").get<int>();
    m.slurm.sbatch_args = s.at("sbatch_args").get<std::vector<std::string>>();
    for (const auto& r : j.at("rounds")) {
      Round x;
      x.number = r.at("round").get<int>();
      x.array_job = r.at("array_job").get<std::string>();
      x.collector_job = r.at("collector_job").get<std::string>();
      x.tasks = r.at("tasks").get<std::vector<int>>();
      x.submitted = r.at("submitted").get<std::string>();
      x.dir = r.at("scripts").get<std::string>();
      m.rounds.push_back(std::move(x));
    }
    return m;
  } catch (const json::exception& e) {
    throw Error(path + ": not a valid manifest: " + e.what());
  }
}

std::string task_dir(const Manifest& m, int k) { return m.out + "/tasks/" + std::to_string(k); }

// Task K's share, as its `convlab grade` reads it (intake.hpp).
std::string intake_list_path(const Manifest& m, int k) { return m.intake_dir + "/task-" + std::to_string(k) + ".json"; }

// Where task K builds: its own folder, so that tasks sharing a node (or a --work-dir
// on node-local disk) never share a build slot.
std::string task_work_dir(const Manifest& m, int k) {
  if (m.work_dir.empty()) return task_dir(m, k) + "/work";
  return m.work_dir + "/" + safe_name(fs::path(m.out).filename().string()) + "-" + hex64(fnv1a(m.out)).substr(0, 8) +
         "/task-" + std::to_string(k);
}

// ---- the sbatch scripts ----------------------------------------------------------------

// "0-3,5,7-8": the indices as Slurm's --array wants them.
std::string array_ranges(std::vector<int> k) {
  std::sort(k.begin(), k.end());
  std::string out;
  for (std::size_t i = 0; i < k.size();) {
    std::size_t j = i;
    while (j + 1 < k.size() && k[j + 1] == k[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(k[i]) + (j > i ? "-" + std::to_string(k[j]) : "");
    i = j + 1;
  }
  return out;
}

std::string task_time(const Manifest& m) {
  if (!m.slurm.time.empty()) return m.slurm.time;
  std::size_t largest = 0;
  for (const auto& s : m.shares) largest = std::max(largest, s.submissions.size());
  return slurm::default_time(largest, m.labs.size());
}

std::string common_directives(const Manifest& m, int cpus, const std::string& time) {
  std::string d;
  if (!m.slurm.partition.empty()) d += "#SBATCH --partition=" + m.slurm.partition + "\n";
  if (!m.slurm.account.empty()) d += "#SBATCH --account=" + m.slurm.account + "\n";
  d += "#SBATCH --cpus-per-task=" + std::to_string(cpus) + "\n";
  d += "#SBATCH --time=" + time + "\n";
  d += "#SBATCH --chdir=" + m.cwd + "\n";
  return d;
}

std::string extra_directives(const Manifest& m) {
  std::string d;
  for (const auto& a : m.slurm.sbatch_args) d += "#SBATCH " + a + "\n";
  return d;
}

std::string command_line(const Manifest& m, const std::string& command) {
  return "exec " + slurm::shell_quote(m.convlab) + " --root " + slurm::shell_quote(m.root) + " " + command + " " +
         slurm::shell_quote(m.out) + "\n";
}

std::string task_script(const Manifest& m, const std::vector<int>& tasks, int round) {
  std::string s = "#!/bin/bash\n";
  s += "# convlab grade --slurm, round " + std::to_string(round) + ": each array task grades its share of the\n" +
       "# submissions with `convlab grade`, " + (m.slurm.no_gpu ? "without a GPU (--no-gpu)" : "on one GPU") +
       ", into OUT/tasks/<index>/ (OUT: " + m.out + ").\n" +
       "# The shares are in OUT/slurm/manifest.json. Written by convlab; if tasks fail (node failure,\n" +
       "# time limit, preemption, out of memory): convlab grade --slurm --resume --out OUT\n";
  s += "#SBATCH --job-name=convlab-grade\n";
  s += "#SBATCH --array=" + array_ranges(tasks) +
       (m.slurm.tasks_at_once > 0 ? "%" + std::to_string(m.slurm.tasks_at_once) : "") + "\n";
  if (!m.slurm.no_gpu) s += "#SBATCH --gres=gpu:" + (m.slurm.gpu_type.empty() ? "" : m.slurm.gpu_type + ":") + "1\n";
  if (!m.slurm.constraint.empty()) s += "#SBATCH --constraint=" + m.slurm.constraint + "\n";
  s += common_directives(m, m.slurm.cpus_per_task > 0 ? m.slurm.cpus_per_task : kDefaultCpus, task_time(m));
  s += "#SBATCH --output=" + m.out + "/slurm/logs/task-%a-job%A.out\n";
  s += extra_directives(m);
  return s + command_line(m, "slurm-task");
}

std::string collect_script(const Manifest& m, const std::string& dependency, int round) {
  std::string s = "#!/bin/bash\n";
  s += "# convlab grade --slurm, round " + std::to_string(round) + ": once the array job has ended (afterany: whether\n" +
       "# its tasks finished or not), merges every task's results into OUT (" + m.out + "):\n" +
       "# gradebook.csv, feedback/, results/, grade.log and hardware.json. Written by convlab.\n";
  s += "#SBATCH --job-name=convlab-collect\n";
  s += "#SBATCH --dependency=" + dependency + "\n";
  s += common_directives(m, 1, kCollectorTime);
  s += "#SBATCH --output=" + m.out + "/slurm/logs/collect-job%j.out\n";
  s += extra_directives(m);
  return s + command_line(m, "slurm-collect");
}

// `sbatch --parsable SCRIPT` -> the job id.
std::string sbatch(const std::string& script) {
  const RunResult r = run_tool({"sbatch", "--parsable", script}, "", 120);
  std::istringstream in(r.output);
  std::string line, id;
  while (std::getline(in, line)) {
    const std::string first = trim(line).substr(0, trim(line).find(';'));  // "123" or "123;cluster"
    if (slurm::all_digits(first)) id = first;
  }
  if (!r.ok() || id.empty()) throw Error("sbatch " + script + " failed (" + r.describe() + "):\n" + trim(r.output));
  return id;
}

// ---- what Slurm and the task folders say ---------------------------------------------------

struct Accounting {
  std::map<int, JobState> states;  // array index -> its latest job's state
  std::string source;              // "sacct", "squeue" or why there is none
};

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

struct TaskStatus {
  int index = 0;
  std::string verdict;       // done, active, failed, not submitted
  std::string why;           // for people
  std::size_t graded = 0, total = 0;
  std::optional<JobState> slurm;
  std::string log;           // Slurm's output file of its latest job
};

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

// ---- submitting ------------------------------------------------------------------------------

void check_path_for_sbatch(const std::string& what, const std::string& path) {
  // #SBATCH lines are split at blanks, and '%' starts Slurm's file name patterns.
  if (path.find_first_of(" \t\n'\"%\\") != std::string::npos)
    throw Error(what + " '" + path + "' holds a blank, a quote, a backslash or '%', which sbatch scripts cannot carry; "
                "use another folder");
}

void check_slurm_word(const std::string& option, const std::string& value) {
  if (value.find_first_of(" \t\n'\"") != std::string::npos)
    throw Error(option + " '" + value + "': a Slurm value has no blanks or quotes");
}

// The collector waits for the new array and for the arrays whose tasks are still pending or running.
std::string dependency(const std::string& array_job, const std::vector<std::string>& also_wait_for) {
  std::string d = "afterany:" + array_job;
  for (const auto& j : also_wait_for) d += ":" + j;
  return d;
}

// Submits the array for `tasks` and its collector, recording both in the manifest.
void submit_round(Manifest& m, const std::vector<int>& tasks, const std::vector<std::string>& also_wait_for) {
  Round r;
  r.number = static_cast<int>(m.rounds.size()) + 1;
  r.tasks = tasks;
  r.dir = m.out + "/slurm/round-" + std::to_string(r.number);
  make_dirs(r.dir);
  make_dirs(m.out + "/slurm/logs");
  write_file_atomic(r.dir + "/task.sh", task_script(m, tasks, r.number));
  r.array_job = sbatch(r.dir + "/task.sh");
  r.submitted = utc_now();
  m.rounds.push_back(r);
  save(m);  // the array is in the queue: never lose its id
  const std::string waits = dependency(r.array_job, also_wait_for);
  write_file_atomic(r.dir + "/collect.sh", collect_script(m, waits, r.number));
  try {
    m.rounds.back().collector_job = sbatch(r.dir + "/collect.sh");
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "\nthe array job " + r.array_job +
                " was submitted; once it ends, merge its results with `convlab slurm-collect " + m.out + "`");
  }
  save(m);
  std::cout << "submitted array job " << r.array_job << " (tasks " << array_ranges(tasks) << ") and collector job "
            << m.rounds.back().collector_job << " (" << waits << ")\n"
            << "scripts: " << r.dir << "/task.sh, collect.sh; Slurm's output: " << m.out << "/slurm/logs/\n"
            << "when the collector has run: " << m.out << "/gradebook.csv, feedback/, results/, grade.log, hardware.json;"
            << " if a task fails: convlab grade --slurm --resume --out " << m.out << "\n";
}

// Task K's `convlab grade`: today's pipeline on its share, into its own folder.
std::vector<std::string> task_command(const Manifest& m, int k, const std::string& gpu) {
  const Share& share = m.shares.at(k);
  std::vector<std::string> argv = {m.convlab, "--root", m.root, "grade"};
  argv.insert(argv.end(), m.grade_options.begin(), m.grade_options.end());
  if (m.intake_dir.empty()) argv.insert(argv.end(), share.submissions.begin(), share.submissions.end());
  else argv.push_back(intake_list_path(m, k));  // its students, named as the whole run names them
  argv.insert(argv.end(), {"--out", task_dir(m, k), "--work-dir", task_work_dir(m, k)});
  if (!m.calibration.empty()) argv.insert(argv.end(), {"--calibration", m.calibration});
  if (!m.slurm.no_gpu) argv.insert(argv.end(), {"--gpus", gpu});
  // One build slot unless --jobs says otherwise: the GPU, not the build, is what a
  // task waits for, and each slot builds the harness once.
  if (std::none_of(m.grade_options.begin(), m.grade_options.end(),
                   [](const std::string& o) { return starts_with(o, "--jobs="); }))
    argv.insert(argv.end(), {"--jobs", "1"});
  return argv;
}

void print_dry_run(const Manifest& m, const std::vector<int>& tasks, const std::vector<std::string>& also_wait_for) {
  std::cout << "dry run: nothing written, nothing submitted.\n\n";
  if (m.rounds.empty()) {
    for (const auto& n : m.intake_notes) std::cout << "intake: " << n << "\n";
    std::cout << m.out << "/slurm/manifest.json would hold " << m.submissions.size() << " submission(s) in "
              << m.shares.size() << " array task(s):\n";
  } else {
    std::cout << "the array would grade again:\n";
  }
  for (const auto& s : m.shares) {
    if (std::find(tasks.begin(), tasks.end(), s.index) == tasks.end()) continue;
    std::string names;
    for (const auto& n : s.students) names += (names.empty() ? "" : " ") + n;
    std::cout << "  task " << s.index << ": " << names << "\n";
  }
  std::cout << "task " << tasks.front() << " runs:";
  for (const auto& w : task_command(m, tasks.front(), "<the GPU Slurm gives it>"))
    std::cout << " " << (w.find_first_of(" *?'\"<>") == std::string::npos ? w : slurm::shell_quote(w));
  std::cout << "\n";
  const int round = static_cast<int>(m.rounds.size()) + 1;
  std::cout << "\n==== " << m.out << "/slurm/round-" << round << "/task.sh (sbatch --parsable)\n"
            << task_script(m, tasks, round) << "\n==== " << m.out << "/slurm/round-" << round
            << "/collect.sh (sbatch --parsable, once the array job's id is known)\n"
            << collect_script(m, dependency("<the array job>", also_wait_for), round);
}

// Slurm options given on the command line replace the manifest's (on --resume).
void take_given(SlurmOptions& into, const SlurmOptions& given, const CLI::App& grade) {
  const auto was = [&](const char* name) { return grade.get_option(name)->count() > 0; };
  if (was("--partition")) into.partition = given.partition;
  if (was("--account")) into.account = given.account;
  if (was("--gpu-type")) into.gpu_type = given.gpu_type;
  if (was("--constraint")) into.constraint = given.constraint;
  if (was("--no-gpu")) into.no_gpu = given.no_gpu;
  if (was("--time")) into.time = given.time;
  if (was("--tasks-at-once")) into.tasks_at_once = given.tasks_at_once;
  if (was("--cpus-per-task")) into.cpus_per_task = given.cpus_per_task;
  if (was("--sbatch-arg")) into.sbatch_args = given.sbatch_args;
  if (was("--per-task")) throw Error("--per-task cannot change on --resume: the manifest's shares are fixed");
}

void check_slurm_options(const SlurmOptions& so) {
  if (so.per_task < 0) throw Error("--per-task must be at least 1");
  if (so.tasks_at_once < 0) throw Error("--tasks-at-once must be at least 1");
  if (so.cpus_per_task < 0) throw Error("--cpus-per-task must be at least 1");
  if (so.no_gpu && !so.gpu_type.empty()) throw Error("--no-gpu and --gpu-type contradict each other");
  check_slurm_word("--partition", so.partition);
  check_slurm_word("--account", so.account);
  check_slurm_word("--gpu-type", so.gpu_type);
  check_slurm_word("--constraint", so.constraint);
  check_slurm_word("--time", so.time);
  if (!so.time.empty() && so.time.find_first_not_of("0123456789:-") != std::string::npos)
    throw Error("--time '" + so.time + "': Slurm's formats are minutes, H:MM:SS or D-HH:MM:SS");
  for (const auto& a : so.sbatch_args)
    if (!starts_with(a, "-") || a.find('\n') != std::string::npos)
      throw Error("--sbatch-arg '" + a + "': an sbatch option, e.g. --sbatch-arg=--qos=short");
}

int resume(const Project& p, const GradeOptions& go, const SlurmOptions& so, const CLI::App& grade, const std::string& out) {
  Manifest m = load_manifest(out);
  if (!go.submissions.empty()) {
    std::vector<std::string> given = go.submissions;
    if (given != m.arguments)
      throw Error("--resume continues the run in " + out + " with the submissions of its manifest; these differ. "
                  "Leave them out, or grade them into a new --out folder");
  }
  const auto changed = slurm::given_options(grade, {"--out"});
  if (!changed.empty())
    throw Error("--resume takes the grading options from " + manifest_path(out) + "; only Slurm options may be given (not " +
                changed.front().substr(0, changed.front().find('=')) + ")");
  take_given(m.slurm, so, grade);
  check_slurm_options(m.slurm);

  const Accounting acc = query_states(m);
  const auto tasks = task_statuses(m, acc);
  std::cout << status_table(tasks, acc.source);
  std::vector<int> again;
  std::set<std::string> active_arrays;
  for (const auto& t : tasks) {
    if (t.verdict == "failed" || t.verdict == "not submitted") again.push_back(t.index);
    if (t.verdict == "active" && t.slurm) active_arrays.insert(t.slurm->job.substr(0, t.slurm->job.find('_')));
  }
  if (again.empty()) {
    if (!active_arrays.empty()) {
      std::cout << "nothing to resubmit: the other tasks are done, and those still pending or running will be merged by "
                   "the collector job "
                << m.rounds.back().collector_job << "\n";
      return 0;
    }
    std::cout << "every task is done: merging their results now\n";
    return so.dry_run ? 0 : slurm_collect_main(p, out);
  }
  std::cout << "resubmitting task(s) " << array_ranges(again) << "; their finished submissions are kept\n";
  if (so.dry_run) {
    print_dry_run(m, again, {active_arrays.begin(), active_arrays.end()});
    return 0;
  }
  if (which("sbatch").empty()) throw Error("--slurm needs sbatch on PATH: run it on the cluster's login node");
  submit_round(m, again, {active_arrays.begin(), active_arrays.end()});
  return 0;
}

// ---- the task's child process ------------------------------------------------------------

volatile sig_atomic_t g_task_signal = 0;
void on_task_signal(int sig) { g_task_signal = sig; }

// Runs argv (a path and its arguments) with this process's stdout, stderr and
// environment, and waits for it. SIGTERM and SIGINT (scancel, preemption, the time
// limit) reach the child from Slurm directly; this process only waits, so that it can
// record how the child ended.
int run_child(const std::vector<std::string>& argv) {
  struct sigaction sa {};
  sa.sa_handler = on_task_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("cannot start convlab grade: ") + std::strerror(errno));
  if (pid == 0) {
    ::execv(args[0], args.data());  // caught signals are reset to their defaults by exec
    std::fprintf(stderr, "convlab: cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// Which of the share's submissions have a result now, and which of those no earlier attempt claimed.
std::vector<std::string> newly_graded(const Manifest& m, const Share& share, const json& attempts) {
  std::set<std::string> before;
  for (const auto& a : attempts)
    if (a.contains("graded"))
      for (const auto& s : a.at("graded")) before.insert(s.get<std::string>());
  std::vector<std::string> out;
  for (const auto& s : share.students)
    if (!before.count(s) && has_result(m, share.index, s)) out.push_back(s);
  return out;
}

json read_json_or_null(const std::string& path) {
  try {
    return fs::exists(path) ? json::parse(read_file(path)) : json();
  } catch (const std::exception&) {
    return json();
  }
}

// Closes an attempt: the GPU it graded on (the hardware.json its `convlab grade` wrote)
// and the submissions it finished.
void close_attempt(const Manifest& m, const Share& share, json& rec) {
  json& attempts = rec["attempts"];
  if (attempts.empty() || attempts.back().contains("graded")) return;
  json& last = attempts.back();
  last["hardware"] = read_json_or_null(task_dir(m, share.index) + "/hardware.json");
  json earlier = attempts;
  earlier.erase(earlier.size() - 1);
  last["graded"] = newly_graded(m, share, earlier);
}

}  // namespace

// ---- the commands ------------------------------------------------------------------------------

void add_slurm_options(CLI::App& grade, SlurmOptions& o) {
  grade.add_flag("--slurm", o.enabled, "grade as a Slurm job array (one GPU per task), then merge in a collector job");
  grade.add_option("--partition", o.partition, "Slurm partition")->group(kGroup);
  grade.add_option("--account", o.account, "Slurm account")->group(kGroup);
  grade.add_option("--gpu-type", o.gpu_type, "GPU type: --gres=gpu:TYPE:1 (e.g. h100)")->group(kGroup);
  grade.add_option("--constraint", o.constraint, "node features Slurm must match (--constraint)")->group(kGroup);
  grade.add_flag("--no-gpu", o.no_gpu, "ask Slurm for no GPU (CPU-only grading: GPU graders are not run)")->group(kGroup);
  grade.add_option("--time", o.time, "time limit per array task (default: 20 min + 3 min per submission and lab)")
      ->group(kGroup);
  grade.add_option("--per-task", o.per_task, "submissions per array task (default 10)")->group(kGroup);
  grade.add_option("--tasks-at-once", o.tasks_at_once, "at most this many tasks at a time (the array's %N)")
      ->group(kGroup);
  grade.add_option("--cpus-per-task", o.cpus_per_task, "CPU cores per task (default 4)")->group(kGroup);
  // One value per --sbatch-arg, so that the submissions after it are not taken for more.
  grade.add_option("--sbatch-arg", o.sbatch_args, "another sbatch option for every job (--sbatch-arg=--qos=short)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(kGroup);
  grade.add_flag("--resume", o.resume, "continue the Slurm run in --out: resubmit the tasks that failed or never ran")
      ->group(kGroup);
  grade.add_flag("--dry-run", o.dry_run, "print the shares and the sbatch scripts; write and submit nothing")
      ->group(kGroup);
  grade.get_option("--slurm")->group(kGroup);
}

void add_slurm_commands(CLI::App& app, SlurmCommands& c) {
  // Run by the sbatch scripts (or by hand, see docs/grading.md); not listed by --help.
  c.task = app.add_subcommand("slurm-task", "grade one array task's share of a --slurm run");
  c.task->add_option("OUT", c.out, "the run's --out folder")->required();
  c.task->add_option("--task", c.task_index, "the array index (default: $SLURM_ARRAY_TASK_ID)");
  c.task->group("");
  c.collect = app.add_subcommand("slurm-collect", "merge the tasks' results of a --slurm run");
  c.collect->add_option("OUT", c.out, "the run's --out folder")->required();
  c.collect->group("");
}

void refuse_slurm_options(const CLI::App& grade) {
  for (const CLI::Option* o : grade.get_options())
    if (o->get_group() == kGroup && o->count() > 0)
      throw Error("--" + o->get_lnames().front() + " is an option of --slurm, which was not given");
}

int slurm_grade_main(const Project& p, const GradeOptions& go, const SlurmOptions& so, const CLI::App& grade) {
  check_slurm_options(so);
  if (grade.get_option("--gpus")->count() > 0)
    throw Error("--gpus: with --slurm each task grades on the one GPU Slurm gives it (--gpu-type, --constraint choose it)");
  if (grade.get_option("--force")->count() > 0)
    throw Error("--force: a --slurm run always starts in a new --out folder, so there is nothing to grade again");
  if (go.out.empty()) throw Error("--out DIR is required");
  const std::string out = fs::absolute(go.out).lexically_normal().string();
  check_path_for_sbatch("--out", out);
  if (so.resume) return resume(p, go, so, grade, out);

  if (fs::exists(manifest_path(out)))
    throw Error(out + " already holds a Slurm grading run: `--resume` continues it; a new run needs a new --out folder");
  if (fs::exists(out + "/state") || fs::exists(out + "/gradebook.csv"))
    throw Error(out + " holds a local grading run; grade through Slurm into a new --out folder");
  if (go.submissions.empty()) throw Error("no submission to grade");
  for (const auto& s : go.submissions)
    if (!fs::exists(s)) throw Error("submission '" + s + "' does not exist");
  if (!so.dry_run && which("sbatch").empty()) throw Error("--slurm needs sbatch on PATH: run it on the cluster's login node");

  Manifest m;
  m.out = out;
  m.root = p.root;
  m.convlab = self_exe();
  m.cwd = fs::current_path().string();
  check_path_for_sbatch("the working folder", m.cwd);
  m.created = utc_now();
  m.slurm = so;
  m.slurm.per_task = so.per_task > 0 ? so.per_task : kDefaultPerTask;
  // Every grading option given is passed on as given; these are the Slurm layer's to set per task
  // (the roster is read here, once: each task's intake list names its students).
  m.grade_options = slurm::given_options(grade, {"--out", "--work-dir", "--calibration", "--expect", "--roster"});
  if (go.labs.empty()) {
    for (const auto& l : p.labs) m.labs.push_back(l.spec.lab);
  } else {
    for (const auto& name : go.labs) m.labs.push_back(p.find(name).spec.lab);
  }
  for (const auto& l : m.labs) m.lab_points.push_back(p.find(l).spec.total_points());
  if (!go.work.empty()) m.work_dir = fs::absolute(go.work).lexically_normal().string();

  // The submissions as one local `convlab grade` takes them in (intake.hpp), here, once: a bulk
  // download becomes a submission per student (unpacked under OUT/slurm/intake/, which the nodes
  // share), named by the roster if one is given, and each task grades its students from an intake
  // list, so that names, ids and origins are those of a local grading of the whole class. A dry run
  // unpacks into a temporary folder, removed when it ends.
  std::optional<Roster> roster;
  if (!go.roster.empty()) roster = read_roster(go.roster);
  const RemoveOnExit dry_scratch{so.dry_run ? fs::temp_directory_path().string() + "/convlab-slurm-dry-run-" +
                                                  std::to_string(::getpid())
                                            : std::string()};
  m.intake_dir = out + "/slurm/intake";
  std::vector<Intake> intake;
  const bool out_existed = fs::exists(out);
  try {
    intake = take_in(go.submissions, so.dry_run ? dry_scratch.path : m.intake_dir + "/unpacked", p,
                     roster ? &*roster : nullptr, &m.intake_notes);
  } catch (const Error&) {
    std::error_code ec;  // refused: nothing of this run is left behind
    fs::remove_all(out_existed ? out + "/slurm" : out, ec);
    throw;
  }
  std::vector<std::string> base_names;
  for (const auto& i : intake) {
    m.submissions.push_back(i.path);
    base_names.push_back(i.name);
  }
  m.arguments = go.submissions;
  m.students = slurm::unique_names(base_names);
  m.shares = slurm::split_shares(m.submissions, base_names, m.slurm.per_task);
  // The model the speed thresholds belong to: a flag for submissions graded on another.
  if (!go.calibration.empty()) {
    LabSpec probe = p.labs.front().spec;
    try {
      apply_calibration(probe, go.calibration);
    } catch (const SpecError& e) {
      throw Error(e.what());
    }
    const json cal = json::parse(read_file(go.calibration));
    m.calibrated_on = slurm::gpu_model(cal.value("device", std::string()));
    m.calibrated_on_source = "the calibration file " + go.calibration;
  } else {
    m.calibrated_on = kShippedThresholdsGpu;
    m.calibrated_on_source = "the specs' shipped thresholds (docs/grading.md, Calibration)";
  }
  if (!go.expect.empty() && !fs::exists(go.expect)) throw Error("--expect: no file " + go.expect);
  std::vector<int> all;
  for (const auto& s : m.shares) all.push_back(s.index);
  if (so.dry_run) {
    // The calibration and expectations are copied into OUT/slurm/ by a real run.
    if (!go.calibration.empty()) m.calibration = m.out + "/slurm/calibration.json";
    print_dry_run(m, all, {});
    return 0;
  }
  make_dirs(out + "/slurm");
  // Each task's intake list: its students under the names the whole run gives them.
  std::map<std::string, Intake> by_name;
  for (std::size_t i = 0; i < intake.size(); ++i) {
    by_name[m.students[i]] = intake[i];
    by_name[m.students[i]].name = m.students[i];
  }
  for (const auto& s : m.shares) {
    std::vector<Intake> list;
    for (const auto& student : s.students) list.push_back(by_name.at(student));
    write_file_atomic(intake_list_path(m, s.index), intake_list_json(list));
  }
  // Copies: the file given may change or vanish before the last task runs.
  if (!go.calibration.empty()) {
    m.calibration = out + "/slurm/calibration.json";
    write_file_atomic(m.calibration, read_file(go.calibration));
  }
  if (!go.expect.empty()) {
    m.expect = out + "/slurm/expect.json";
    write_file_atomic(m.expect, read_file(go.expect));
  }
  save(m);
  std::cout << "convlab grade --slurm: " << m.submissions.size() << " submission(s)"
            << (m.arguments.size() != m.submissions.size() || roster
                    ? " from " + std::to_string(m.arguments.size()) + " argument(s)" +
                          (roster ? ", named by the roster " + go.roster : "")
                    : "")
            << " in " << m.shares.size() << " array task(s) of up to " << m.slurm.per_task << "; manifest "
            << manifest_path(out) << "\n";
  for (const auto& n : m.intake_notes) std::cout << "intake: " << n << "\n";
  if (m.calibrated_on.empty())
    std::cout << "warning: the calibration file names no GPU: submissions graded on another GPU model cannot be flagged\n";
  submit_round(m, all, {});
  return 0;
}

int slurm_task_main(const Project& p, const std::string& out_arg, int task) {
  (void)p;
  const std::string out = fs::absolute(out_arg).lexically_normal().string();
  const Manifest m = load_manifest(out);
  if (task < 0) {
    const std::string id = env_or("SLURM_ARRAY_TASK_ID", "");
    if (!slurm::all_digits(id)) throw Error("slurm-task: no --task K and no SLURM_ARRAY_TASK_ID: not in an array job");
    task = std::stoi(id);
  }
  if (task >= static_cast<int>(m.shares.size()))
    throw Error("slurm-task: task " + std::to_string(task) + " does not exist (the run has " +
                std::to_string(m.shares.size()) + ")");
  const Share& share = m.shares[task];
  const std::string dir = task_dir(m, task);
  make_dirs(dir);
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "?");

  json rec = read_task_record(m, task);
  close_attempt(m, share, rec);  // an earlier attempt that was killed before it could
  const std::string visible = env_or("CUDA_VISIBLE_DEVICES", "");
  json attempt = {{"job_id", env_or("SLURM_JOB_ID", "")},
                  {"array_job", env_or("SLURM_ARRAY_JOB_ID", "")},
                  {"node", env_or("SLURMD_NODENAME", host)},
                  {"partition", env_or("SLURM_JOB_PARTITION", "")},
                  {"restart_count", env_or("SLURM_RESTART_COUNT", "0")},
                  {"cuda_visible_devices", visible},
                  {"slurm_job_gpus", env_or("SLURM_JOB_GPUS", "")},
                  {"started", utc_now()}};
  rec["task"] = task;
  rec["attempts"].push_back(attempt);
  write_file_atomic(dir + "/slurm.json", rec.dump(2) + "\n");

  // The GPU Slurm gave this task (with ConstrainDevices it is the only one it can see).
  const auto gpus = split(visible, ',');
  if (!m.slurm.no_gpu && gpus.empty())
    std::cout << "convlab slurm-task: warning: Slurm set no CUDA_VISIBLE_DEVICES; grading on GPU 0\n";
  const std::vector<std::string> argv = task_command(m, task, gpus.empty() ? "0" : gpus.front());

  std::cout << "convlab slurm-task " << task << " on " << attempt["node"].get<std::string>() << " (job "
            << attempt["job_id"].get<std::string>() << "): " << share.submissions.size() << " submission(s)\n";
  const int rc = run_child(argv);
  rec = read_task_record(m, task);
  if (!rec["attempts"].empty()) {
    rec["attempts"].back()["exit_code"] = rc;
    rec["attempts"].back()["ended"] = utc_now();
    close_attempt(m, share, rec);
    write_file_atomic(dir + "/slurm.json", rec.dump(2) + "\n");
  }
  std::cout << "convlab slurm-task " << task << ": convlab grade exited with status " << rc
            << (g_task_signal ? " (this task was signalled: " + std::string(strsignal(g_task_signal)) + ")" : "") << "\n";
  return rc;
}

int slurm_collect_main(const Project& p, const std::string& out_arg) {
  (void)p;
  const std::string out = fs::absolute(out_arg).lexically_normal().string();
  const Manifest m = load_manifest(out);
  const Accounting acc = query_states(m);
  const auto tasks = task_statuses(m, acc);

  // Each student's result, the attempt that graded it and its GPU.
  std::map<std::string, StudentResult> results;
  std::map<std::string, std::string> maps_from;  // student -> the feedback/<student>/ folder of its task
  json hw_tasks = json::array();
  json models = json::object(), flagged = json::array();
  std::map<std::string, std::string> notes;  // student -> calibration note, if graded on another model
  std::map<std::string, json> where;         // ... and where
  std::vector<std::string> problems;
  std::vector<std::string> task_seconds;          // each task's figure, a line each
  std::vector<const StudentResult*> graded_all;  // the results of every task
  for (const auto& share : m.shares) {
    json rec = read_task_record(m, share.index);
    close_attempt(m, share, rec);  // the last attempt, if it was killed: what it did finish
    json attempts = json::array();
    for (const auto& a : rec.at("attempts")) {
      const json hw = a.value("hardware", json());
      json gpu = hw.is_object() && hw.contains("gpus") && !hw.at("gpus").empty() ? hw.at("gpus").at(0) : json();
      const bool ran_on_gpu = gpu.is_object() && gpu.value("available", false);
      const std::string model = ran_on_gpu ? gpu.value("name", std::string()) : "";
      const std::string note = slurm::calibration_note(model, m.calibrated_on);
      json entry = a;
      entry.erase("hardware");
      entry["host"] = hw.is_object() ? hw.value("host", std::string()) : "";
      entry["gpu"] = gpu;
      entry["gpu_model"] = model.empty() ? json() : json(model);
      entry["matches_calibration"] = model.empty() || m.calibrated_on.empty() ? json() : json(model == m.calibrated_on);
      for (const auto& s : a.value("graded", json::array())) {
        const std::string student = s.get<std::string>();
        models[model.empty() ? "(no GPU)" : model].push_back(student);
        if (!note.empty()) {
          notes[student] = note;
          where[student] = {{"student", student}, {"graded_on", model}, {"task", share.index},
                            {"node", a.value("node", std::string())}};
        }
      }
      attempts.push_back(entry);
    }
    const TaskStatus& st = tasks[share.index];
    hw_tasks.push_back({{"task", share.index},
                        {"verdict", st.verdict},
                        {"why", st.why},
                        {"slurm", st.slurm ? json{{"job", st.slurm->job}, {"state", st.slurm->state},
                                                  {"exit_code", st.slurm->exit_code}, {"node", st.slurm->node},
                                                  {"elapsed", st.slurm->elapsed}}
                                           : json()},
                        {"students", share.students},
                        {"attempts", attempts}});
    std::vector<const StudentResult*> graded_here;
    for (const auto& student : share.students) {
      const std::string path = task_dir(m, share.index) + "/state/" + student + ".json";
      if (!fs::exists(path)) continue;
      try {
        results[student] = student_from_json(read_file(path));
        maps_from[student] = task_dir(m, share.index) + "/feedback/" + student;
        graded_here.push_back(&results[student]);  // a map: its elements stay put
      } catch (const Error& e) {
        problems.push_back(path + ": " + e.what());
      }
    }
    // The task's figure (issue 29, item 6): where it ran (its last attempt's node and GPU) and the
    // mean seconds of the submissions it graded.
    std::string where_run = "never started";
    if (!attempts.empty()) {
      const json& last = attempts.back();
      const std::string node = last.value("node", std::string());
      where_run = "node " + (node.empty() ? std::string("?") : node) + ", " +
                  (last.value("gpu_model", json()).is_string() ? last.at("gpu_model").get<std::string>() : "no GPU");
    }
    task_seconds.push_back("  task " + std::to_string(share.index) + " (" + where_run + "): " +
                           seconds_per_submission(graded_here));
    graded_all.insert(graded_all.end(), graded_here.begin(), graded_here.end());
  }

  make_dirs(out + "/feedback");
  make_dirs(out + "/results");
  std::vector<StudentResult> ordered;
  std::vector<std::string> missing;
  for (const auto& student : m.students) {
    auto it = results.find(student);
    if (it == results.end()) {
      missing.push_back(student);
      continue;
    }
    StudentResult r = it->second;
    // Flagged only where a speed grader ran: a submission that never got that far owes its
    // points to nothing the GPU model changes.
    const bool speed_measured = std::any_of(r.labs.begin(), r.labs.end(), [](const LabResult& l) {
      return std::any_of(l.graders.begin(), l.graders.end(),
                         [](const GraderResult& g) { return g.kind == "speedup" && g.ran; });
    });
    if (notes.count(student) && speed_measured) {
      r.notes.push_back(notes[student]);
      flagged.push_back(where[student]);
    }
    // The error maps its feedback links to, feedback/<student>/, from the task that graded it.
    if (std::error_code ec; fs::is_directory(maps_from[student], ec))
      fs::copy(maps_from[student], out + "/feedback/" + student,
               fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
    // In the words one local `convlab grade` with the same options writes (its replay lines name
    // the student's build folder of the preset graded with: build/cpu for --preset cpu).
    const std::string preset = slurm::preset_of(m.grade_options);
    write_file_atomic(out + "/feedback/" + student + ".md", feedback_markdown(r, preset));
    write_file_atomic(out + "/results/" + student + ".json", gradescope_json(r, preset));
    ordered.push_back(std::move(r));
  }

  std::ostringstream log;
  log << "[" << utc_now() << "] convlab slurm-collect: " << m.submissions.size() << " submission(s) in "
      << m.shares.size() << " array task(s) (" << manifest_path(out) << ")\n"
      << status_table(tasks, acc.source);
  for (const auto& share : m.shares) {
    const std::string path = task_dir(m, share.index) + "/grade.log";
    log << "\n==== task " << share.index << ": " << path << "\n";
    if (fs::exists(path)) log << read_file(path);
    else log << "(no log: the task never started)\n";
  }
  log << "\n==== merged\n";
  for (const auto& n : m.intake_notes) log << "intake: " << n << "\n";
  for (const auto& pr : problems) log << "warning: " << pr << "\n";
  log << "GPU models (the speed thresholds were calibrated on "
      << (m.calibrated_on.empty() ? "an unknown GPU" : m.calibrated_on) << ", from " << m.calibrated_on_source << "):\n";
  for (const auto& [model, students] : models.items())
    log << "  " << model << ": " << students.size() << " submission(s)\n";
  log << "seconds per submission, by task (build and run of the submissions it graded):\n";
  for (const auto& line : task_seconds) log << line << "\n";
  log << "  all tasks: " << seconds_per_submission(graded_all) << "\n";
  for (const auto& f : flagged)
    log << "flagged: " << f.at("student").get<std::string>() << " was graded on an "
        << f.at("graded_on").get<std::string>() << " (task " << f.at("task") << ", node "
        << f.at("node").get<std::string>() << ")\n";
  int status = 0;
  const std::string gradebook = out + "/gradebook.csv";
  if (missing.empty()) {
    write_file_atomic(gradebook, gradebook_csv(ordered, m.labs, m.lab_points));
    log << "every submission graded: " << gradebook << ", feedback/, results/, hardware.json\n";
  } else {
    std::error_code ec;
    fs::remove(gradebook, ec);  // never a gradebook that silently lacks students
    std::string names;
    for (std::size_t i = 0; i < missing.size() && i < 20; ++i) names += (i ? ", " : "") + missing[i];
    if (missing.size() > 20) names += ", ...";
    log << "INCOMPLETE: " << missing.size() << " of " << m.submissions.size()
        << " submission(s) have no result yet (" << names << "), so no gradebook.csv was written;\n"
        << "feedback/ and results/ hold the others. Resubmit the tasks that did not finish with:\n"
        << "  convlab grade --slurm --resume --out " << out << "\n";
    status = 1;
  }
  if (!m.expect.empty() && missing.empty()) {
    int bad = 0;
    log << compare_with_expected(m.expect, ordered, &bad);
    if (bad) status = 1;
  } else if (!m.expect.empty()) {
    log << "expected scores (" << m.expect << "): compared once every submission has a result\n";
  }
  const json hw = {{"date", utc_now()},
                   {"calibrated_on", m.calibrated_on},
                   {"calibrated_on_source", m.calibrated_on_source},
                   {"gpu_models", models},
                   {"flagged", flagged},
                   {"slurm_states_from", acc.source},
                   {"tasks", hw_tasks}};
  write_file_atomic(out + "/hardware.json", hw.dump(2) + "\n");
  write_file_atomic(out + "/grade.log", log.str());
  const std::string text = log.str();
  std::cout << text.substr(0, text.find("\n==== task ")) << text.substr(text.find("\n==== merged"));
  return status;
}

}  // namespace convlab::cli
