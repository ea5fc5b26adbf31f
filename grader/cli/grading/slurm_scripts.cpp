// convlab grade --slurm: the run's record (OUT/slurm/manifest.json) and the sbatch scripts
// of each round. See slurm_internal.hpp and slurm.hpp.
#include "grading/slurm_internal.hpp"

#include "common/util.hpp"

#include <algorithm>
#include <filesystem>

namespace convlab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace slurm_internal {

// ---- the run's record: OUT/slurm/manifest.json -------------------------------------------

std::string manifest_path(const std::string& out) { return out + "/slurm/manifest.json"; }

namespace {

json slurm_to_json(const SlurmOptions& s) {
  return {{"partition", s.partition},         {"account", s.account},          {"gpu_type", s.gpu_type},
          {"constraint", s.constraint},       {"no_gpu", s.no_gpu},            {"time", s.time},
          {"per_task", s.per_task},           {"tasks_at_once", s.tasks_at_once}, {"cpus_per_task", s.cpus_per_task},
          {"sbatch_args", s.sbatch_args}};
}

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace slurm_internal

}  // namespace convlab::cli
