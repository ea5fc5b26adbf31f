// convlab grade --slurm: the manifest, the sbatch scripts, the array task and
// the collector. See slurm.hpp for the layout of a run and docs/grading.md.
// The rest of the layer: slurm_scripts.cpp, slurm_status.cpp, slurm_submit.cpp, slurm_jobs.cpp
// (slurm_internal.hpp).
#include "grading/slurm.hpp"
#include "grading/slurm_internal.hpp"

#include "grading/submission.hpp"
#include "common/util.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <sstream>

namespace convlab::cli {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace slurm_internal;

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

}  // namespace

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

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

}  // namespace convlab::cli
