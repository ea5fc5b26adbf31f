// convlab grade --slurm: the manifest of a new run, the array and its collector submitted
// with sbatch (or printed: --dry-run), a run resumed. See slurm_internal.hpp and slurm.hpp.
#include "grading/slurm_internal.hpp"

#include "grading/intake.hpp"
#include "common/sandbox.hpp"
#include "common/util.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include <unistd.h>

namespace convlab::cli {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace slurm_internal;

namespace slurm_internal {

namespace {

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

}  // namespace

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

namespace {

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

// A new run's preconditions: OUT holds no run yet, every submission exists, and sbatch is on PATH
// (unless --dry-run).
void check_new_run(const GradeOptions& go, const SlurmOptions& so, const std::string& out) {
  if (fs::exists(manifest_path(out)))
    throw Error(out + " already holds a Slurm grading run: `--resume` continues it; a new run needs a new --out folder");
  if (fs::exists(out + "/state") || fs::exists(out + "/gradebook.csv"))
    throw Error(out + " holds a local grading run; grade through Slurm into a new --out folder");
  if (go.submissions.empty()) throw Error("no submission to grade");
  for (const auto& s : go.submissions)
    if (!fs::exists(s)) throw Error("submission '" + s + "' does not exist");
  if (!so.dry_run && which("sbatch").empty()) throw Error("--slurm needs sbatch on PATH: run it on the cluster's login node");
}

// A new run's manifest as the command line gives it: where it runs, its Slurm options, the grading
// options every task passes on, the labs and their points.
Manifest new_manifest(const Project& p, const GradeOptions& go, const SlurmOptions& so, const CLI::App& grade,
                      const std::string& out) {
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
  return m;
}

// The submissions taken in (under OUT/slurm/intake/, or `scratch` on a dry run), and the
// manifest's submissions, students and shares from them; a refused intake leaves nothing of this
// run behind.
std::vector<Intake> take_in_run(const Project& p, const GradeOptions& go, const SlurmOptions& so, const Roster* roster,
                                const std::string& scratch, Manifest& m) {
  const std::string& out = m.out;
  m.intake_dir = out + "/slurm/intake";
  std::vector<Intake> intake;
  const bool out_existed = fs::exists(out);
  try {
    intake = take_in(go.submissions, so.dry_run ? scratch : m.intake_dir + "/unpacked", p, roster, &m.intake_notes);
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
  return intake;
}

// The model the speed thresholds belong to: a flag for submissions graded on another.
void set_calibrated_on(const Project& p, const GradeOptions& go, Manifest& m) {
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
}

// OUT/slurm/ of a new run: each task's intake list, copies of the calibration and expectations,
// and the manifest.
void write_run(const GradeOptions& go, const std::vector<Intake>& intake, Manifest& m) {
  const std::string& out = m.out;
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
}

// What the new run holds: its submissions, tasks and manifest, the intake's notes.
void print_new_run(const Manifest& m, const GradeOptions& go, bool roster) {
  const std::string& out = m.out;
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
}

}  // namespace

}  // namespace slurm_internal

// ---- the command ------------------------------------------------------------------------------

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

  check_new_run(go, so, out);
  Manifest m = new_manifest(p, go, so, grade, out);
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
  const std::vector<Intake> intake = take_in_run(p, go, so, roster ? &*roster : nullptr, dry_scratch.path, m);
  set_calibrated_on(p, go, m);
  if (!go.expect.empty() && !fs::exists(go.expect)) throw Error("--expect: no file " + go.expect);
  std::vector<int> all;
  for (const auto& s : m.shares) all.push_back(s.index);
  if (so.dry_run) {
    // The calibration and expectations are copied into OUT/slurm/ by a real run.
    if (!go.calibration.empty()) m.calibration = m.out + "/slurm/calibration.json";
    print_dry_run(m, all, {});
    return 0;
  }
  write_run(go, intake, m);
  print_new_run(m, go, roster.has_value());
  submit_round(m, all, {});
  return 0;
}

}  // namespace convlab::cli
