// convlab grade --slurm: what the sbatch scripts run, `convlab slurm-task` (an array task's
// share graded by `convlab grade`) and `convlab slurm-collect` (the tasks' results merged).
// See slurm_internal.hpp and slurm.hpp.
#include "grading/slurm_internal.hpp"

#include "grading/reports.hpp"
#include "grading/scoring.hpp"
#include "common/util.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

namespace convlab::cli {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace slurm_internal;

namespace slurm_internal {

namespace {

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

// ---- slurm-collect's steps ---------------------------------------------------------------

// What slurm-collect gathers from the tasks' folders: each student's result, the attempt that
// graded it and its GPU, and each task's figure.
struct Gathered {
  std::map<std::string, StudentResult> results;
  std::map<std::string, std::string> maps_from;  // student -> the feedback/<student>/ folder of its task
  json hw_tasks = json::array();
  json models = json::object(), flagged = json::array();
  std::map<std::string, std::string> notes;  // student -> calibration note, if graded on another model
  std::map<std::string, json> where;         // ... and where
  std::vector<std::string> problems;
  std::vector<std::string> task_seconds;          // each task's figure, a line each
  std::vector<const StudentResult*> graded_all;  // the results of every task
};

// A task's attempts for hardware.json, each with the GPU it graded on; notes the students each
// graded under their GPU model, and those graded on another model than the calibration's.
json attempt_entries(const Manifest& m, const Share& share, const json& rec, Gathered& g) {
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
      g.models[model.empty() ? "(no GPU)" : model].push_back(student);
      if (!note.empty()) {
        g.notes[student] = note;
        g.where[student] = {{"student", student}, {"graded_on", model}, {"task", share.index},
                            {"node", a.value("node", std::string())}};
      }
    }
    attempts.push_back(entry);
  }
  return attempts;
}

// The results the task wrote (a file that does not read is a problem for the log); returns those it graded.
std::vector<const StudentResult*> read_results(const Manifest& m, const Share& share, Gathered& g) {
  std::vector<const StudentResult*> graded_here;
  for (const auto& student : share.students) {
    const std::string path = task_dir(m, share.index) + "/state/" + student + ".json";
    if (!fs::exists(path)) continue;
    try {
      g.results[student] = student_from_json(read_file(path));
      g.maps_from[student] = task_dir(m, share.index) + "/feedback/" + student;
      graded_here.push_back(&g.results[student]);  // a map: its elements stay put
    } catch (const Error& e) {
      g.problems.push_back(path + ": " + e.what());
    }
  }
  return graded_here;
}

// One task gathered: its attempts and status for hardware.json, its results, its figure.
void gather_task(const Manifest& m, const Share& share, const TaskStatus& st, Gathered& g) {
  json rec = read_task_record(m, share.index);
  close_attempt(m, share, rec);  // the last attempt, if it was killed: what it did finish
  const json attempts = attempt_entries(m, share, rec, g);
  g.hw_tasks.push_back({{"task", share.index},
                        {"verdict", st.verdict},
                        {"why", st.why},
                        {"slurm", st.slurm ? json{{"job", st.slurm->job}, {"state", st.slurm->state},
                                                  {"exit_code", st.slurm->exit_code}, {"node", st.slurm->node},
                                                  {"elapsed", st.slurm->elapsed}}
                                           : json()},
                        {"students", share.students},
                        {"attempts", attempts}});
  const std::vector<const StudentResult*> graded_here = read_results(m, share, g);
  // The task's figure (issue 29, item 6): where it ran (its last attempt's node and GPU) and the
  // mean seconds of the submissions it graded.
  std::string where_run = "never started";
  if (!attempts.empty()) {
    const json& last = attempts.back();
    const std::string node = last.value("node", std::string());
    where_run = "node " + (node.empty() ? std::string("?") : node) + ", " +
                (last.value("gpu_model", json()).is_string() ? last.at("gpu_model").get<std::string>() : "no GPU");
  }
  g.task_seconds.push_back("  task " + std::to_string(share.index) + " (" + where_run + "): " +
                           seconds_per_submission(graded_here));
  g.graded_all.insert(g.graded_all.end(), graded_here.begin(), graded_here.end());
}

// Each graded student's feedback and results under OUT, in the manifest's order (flagged where
// graded on another GPU model); the students with no result go to `missing`.
std::vector<StudentResult> write_feedback(const std::string& out, const Manifest& m, Gathered& g,
                                          std::vector<std::string>& missing) {
  make_dirs(out + "/feedback");
  make_dirs(out + "/results");
  std::vector<StudentResult> ordered;
  for (const auto& student : m.students) {
    auto it = g.results.find(student);
    if (it == g.results.end()) {
      missing.push_back(student);
      continue;
    }
    StudentResult r = it->second;
    // Flagged only where a speed grader ran: a submission that never got that far owes its
    // points to nothing the GPU model changes.
    const bool speed_measured = std::any_of(r.labs.begin(), r.labs.end(), [](const LabResult& l) {
      return std::any_of(l.graders.begin(), l.graders.end(),
                         [](const GraderResult& gr) { return gr.kind == "speedup" && gr.ran; });
    });
    if (g.notes.count(student) && speed_measured) {
      r.notes.push_back(g.notes[student]);
      g.flagged.push_back(g.where[student]);
    }
    // The error maps its feedback links to, feedback/<student>/, from the task that graded it.
    if (std::error_code ec; fs::is_directory(g.maps_from[student], ec))
      fs::copy(g.maps_from[student], out + "/feedback/" + student,
               fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
    // In the words one local `convlab grade` with the same options writes (its replay lines name
    // the student's build folder of the preset graded with: build/cpu for --preset cpu).
    const std::string preset = slurm::preset_of(m.grade_options);
    write_file_atomic(out + "/feedback/" + student + ".md", feedback_markdown(r, preset));
    write_file_atomic(out + "/results/" + student + ".json", gradescope_json(r, preset));
    ordered.push_back(std::move(r));
  }
  return ordered;
}

// The log's head: the run, the tasks' states and each task's own grade.log.
void log_tasks(std::ostringstream& log, const std::string& out, const Manifest& m,
               const std::vector<TaskStatus>& tasks, const Accounting& acc) {
  log << "[" << utc_now() << "] convlab slurm-collect: " << m.submissions.size() << " submission(s) in "
      << m.shares.size() << " array task(s) (" << manifest_path(out) << ")\n"
      << status_table(tasks, acc.source);
  for (const auto& share : m.shares) {
    const std::string path = task_dir(m, share.index) + "/grade.log";
    log << "\n==== task " << share.index << ": " << path << "\n";
    if (fs::exists(path)) log << read_file(path);
    else log << "(no log: the task never started)\n";
  }
}

// The log's merged part: intake notes, problems, GPU models, seconds per submission, the flagged.
void log_merged(std::ostringstream& log, const Manifest& m, const Gathered& g) {
  log << "\n==== merged\n";
  for (const auto& n : m.intake_notes) log << "intake: " << n << "\n";
  for (const auto& pr : g.problems) log << "warning: " << pr << "\n";
  log << "GPU models (the speed thresholds were calibrated on "
      << (m.calibrated_on.empty() ? "an unknown GPU" : m.calibrated_on) << ", from " << m.calibrated_on_source << "):\n";
  for (const auto& [model, students] : g.models.items())
    log << "  " << model << ": " << students.size() << " submission(s)\n";
  log << "seconds per submission, by task (build and run of the submissions it graded):\n";
  for (const auto& line : g.task_seconds) log << line << "\n";
  log << "  all tasks: " << seconds_per_submission(g.graded_all) << "\n";
  for (const auto& f : g.flagged)
    log << "flagged: " << f.at("student").get<std::string>() << " was graded on an "
        << f.at("graded_on").get<std::string>() << " (task " << f.at("task") << ", node "
        << f.at("node").get<std::string>() << ")\n";
}

// The gradebook, only once every submission has a result, and the comparison with --expect;
// returns the command's status (1: a submission without a result, or a score not as expected).
int write_gradebook(std::ostringstream& log, const std::string& out, const Manifest& m,
                    const std::vector<StudentResult>& ordered, const std::vector<std::string>& missing) {
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
  return status;
}

}  // namespace

}  // namespace slurm_internal

// ---- the commands ------------------------------------------------------------------------------

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
  Gathered g;
  for (const auto& share : m.shares) gather_task(m, share, tasks[share.index], g);
  std::vector<std::string> missing;
  const std::vector<StudentResult> ordered = write_feedback(out, m, g, missing);

  std::ostringstream log;
  log_tasks(log, out, m, tasks, acc);
  log_merged(log, m, g);
  const int status = write_gradebook(log, out, m, ordered, missing);
  const json hw = {{"date", utc_now()},
                   {"calibrated_on", m.calibrated_on},
                   {"calibrated_on_source", m.calibrated_on_source},
                   {"gpu_models", g.models},
                   {"flagged", g.flagged},
                   {"slurm_states_from", acc.source},
                   {"tasks", g.hw_tasks}};
  write_file_atomic(out + "/hardware.json", hw.dump(2) + "\n");
  write_file_atomic(out + "/grade.log", log.str());
  const std::string text = log.str();
  std::cout << text.substr(0, text.find("\n==== task ")) << text.substr(text.find("\n==== merged"));
  return status;
}

}  // namespace convlab::cli
