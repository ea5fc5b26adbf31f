// convlab grade: build each submission in a pristine tree, run its graders in
// limited processes, score, write the outputs. See grade.hpp and docs/grading.md.
#include "grading/grade.hpp"
#include "grading/grade_internal.hpp"

#include "grading/doctor.hpp"
#include "common/hardware.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <pwd.h>
#include <unistd.h>

namespace convlab::cli {

namespace fs = std::filesystem;

namespace grade_internal {

std::atomic<bool> g_interrupted{false};

namespace {

void on_interrupt(int) {
  g_interrupted = true;
  cancel_all_runs();
}

}  // namespace

// ---- setup -----------------------------------------------------------------------

void Grader::resolve_labs() {
  if (opt_.labs.empty())
    for (const auto& l : project_.labs) labs_.push_back(&l);
  else
    for (const auto& name : opt_.labs) labs_.push_back(&project_.find(name));
  for (const Lab* l : labs_) {
    LabSpec s = l->spec;
    if (!opt_.calibration.empty()) {
      try {
        apply_calibration(s, calibration_copy_);
      } catch (const SpecError& e) {
        throw Error(e.what());
      }
    }
    specs_[s.lab] = s;
  }
}

// The graders this run cannot grade, marked so before anything runs: on the CPU backend the speed
// graders (they time kernels on a GPU). Every path to a lab's score starts from these, so that every
// student's gradebook row has the same points possible.
std::map<std::string, GraderRun> Grader::unreachable(const LabSpec& spec) const {
  std::map<std::string, GraderRun> runs;
  if (cpu_backend_)
    for (const auto& g : spec.graders)
      if (g.kind == "speedup") runs[g.id].needs_gpu = true;
  return runs;
}

// The roster's names for a result, new or resumed (a roster may be corrected between runs).
void Grader::identify(StudentResult& r, std::size_t index) const {
  r.id = intake_[index].id;
  r.name = intake_[index].display;
  r.email = intake_[index].email;
}

void Grader::prepare_dir(const std::string& dir) const {
  std::error_code ec;
  fs::remove_all(dir, ec);
  make_dirs(dir);
  if (!user_.empty()) {
    const passwd* pw = ::getpwnam(user_.c_str());
    if (pw && ::chown(dir.c_str(), pw->pw_uid, pw->pw_gid) != 0)
      throw Error("cannot hand " + dir + " to the user " + user_);
  }
}

void Grader::choose_sandbox_user() {
  const std::string want = opt_.sandbox_user;
  if (want == "none" || (want == "auto" && ::geteuid() != 0)) return;
  const std::string name = want == "auto" ? "nobody" : want;
  if (::geteuid() != 0) throw Error("--sandbox-user " + name + " needs convlab to run as root");
  if (!::getpwnam(name.c_str())) {
    if (want == "auto") return;
    throw Error("--sandbox-user: no user '" + name + "'");
  }
  // Can that user reach what the graders need: this work folder, the GPU?
  const std::string probe = work_ + "/probe";
  user_ = name;
  prepare_dir(probe);
  write_file_atomic(probe + "/readable", "ok\n");
  std::string script = "test -r '" + probe + "/readable' && touch '" + probe + "/written'";
  for (const char* dev : {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"})
    if (fs::exists(dev)) script += std::string(" && test -r ") + dev + " -a -w " + dev;
  RunSpec s;
  s.argv = {"/bin/sh", "-c", script};
  s.user = name;
  s.limits.timeout_s = 30;
  s.env = {"PATH=/usr/bin:/bin"};
  const RunResult r = run_sandboxed(s);
  if (!r.ok()) {
    log_->line("warning: the graders cannot run as '" + name + "' (it cannot use " + work_ +
               " or the GPU devices); they run as root, and RLIMIT_NPROC does not hold for root");
    user_.clear();
  }
}

void Grader::write_hardware() {
  json gpus = json::array();
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "?");
  std::string text = "host " + std::string(host) + "\n";
  try {
    for (auto& gpu : gpus_) {
      json h = probe_hardware(gpu.entry);
      // The graders of this GPU will run with its entry as their CUDA_VISIBLE_DEVICES, as the probe
      // did: they must see exactly one GPU, and the records name the one they see (gpus.hpp).
      if (gpu_context_.on_gpu && gpu.entry != GpuAssigned::kNoGpu) {
        const std::string note = confirm_gpu(gpu, h, gpu_context_);
        if (!note.empty()) log_->line("warning: " + note);
      }
      h["label"] = gpu.label();
      if (gpu.index >= 0) h["nvidia_smi_index"] = gpu.index;
      if (!gpu.uuid.empty()) h["uuid"] = gpu.uuid;
      gpus.push_back(h);
      text += gpu.label() + ": " + h.value("summary", std::string("?")) + "\n";
    }
    if (gpu_context_.on_gpu) refuse_shared_gpus(gpus_);  // two entries that turned out to be one GPU
  } catch (const Error& e) {
    log_->line(std::string("convlab: ") + e.what(), false);
    throw;
  }
  json all = {{"date", utc_now()}, {"host", host}, {"gpus", gpus}, {"jobs", opt_.jobs}, {"preset", opt_.preset}, {"cuda_arch", opt_.cuda_arch},
              {"sandbox_user", user_.empty() ? "(none: graders run as the invoking user)" : user_},
              {"runner_sandbox", runner_sandbox_note_}};
  // Is this toolchain fit to grade? The known miscompile cases, once per run (doctor.hpp).
  all["toolchain"] = doctor_in_child(project_.root, opt_.gpus.front(), opt_.cuda_arch, work_ + "/doctor");
  write_file_atomic(opt_.out + "/hardware.json", all.dump(2) + "\n");
  hardware_ = all;
  log_->line("hardware: " + trim(text));
  log_->line("toolchain (convlab doctor): " + all["toolchain"].value("summary", std::string("?")) +
             (all["toolchain"].contains("workaround") ? "; " + all["toolchain"]["workaround"].get<std::string>() : ""));
}

// ---- outputs -------------------------------------------------------------------------

int Grader::write_outputs() {
  std::vector<StudentResult> done;
  for (const auto& r : results_)
    if (r) done.push_back(*r);
  std::vector<std::string> names;
  std::vector<double> max;
  for (const Lab* l : labs_) {
    names.push_back(l->spec.lab);
    max.push_back(specs_.at(l->spec.lab).total_points());
  }
  write_file_atomic(opt_.out + "/gradebook.csv", gradebook_csv(done, names, max));
  std::ostringstream table;
  table << "\n" << std::left;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-28s", "student");
  table << buf;
  for (const auto& n : names) {
    std::snprintf(buf, sizeof buf, " %8s", n.c_str());
    table << buf;
  }
  table << "    total   seconds\n";
  for (const auto& s : done) {
    std::snprintf(buf, sizeof buf, "%-28s", s.student.c_str());
    table << buf;
    for (const auto& n : names) {
      double v = 0;
      for (const auto& l : s.labs)
        if (l.lab == n) v = l.score;
      std::snprintf(buf, sizeof buf, " %8s", fmt_points(v).c_str());
      table << buf;
    }
    std::snprintf(buf, sizeof buf, " %8s %9.1f\n", fmt_points(s.total()).c_str(), s.seconds);
    table << buf;
  }
  // With several GPUs, each one's figure (issue 29, item 6): a slower card shows.
  std::string by_gpu;
  if (gpus_.size() > 1) {
    by_gpu = "\nseconds per submission, by GPU (build and run of the submissions it graded in this run):\n";
    for (const auto& gpu : gpus_) {
      std::vector<const StudentResult*> mine;
      const auto it = graded_on_.find(gpu.entry);
      if (it != graded_on_.end())
        for (const auto& s : done)
          if (std::find(it->second.begin(), it->second.end(), s.student) != it->second.end()) mine.push_back(&s);
      by_gpu += "  " + gpu.label() + ": " + seconds_per_submission(mine) + "\n";
    }
  }
  log_->line(table.str() + phase_table() + by_gpu + "\noutputs: " + opt_.out + "/gradebook.csv, feedback/, results/, grade.log, hardware.json");
  return compare_expectations();
}

// Where the time went: per lab, the mean seconds per submission graded in this run, by phase
// (the build of the submission's files; the graders' listing; each kind of grader, a graders
// process's time shared out over its graders by their tests' durations (add_phase_seconds());
// sanitizers; compiler-bug rechecks; the rest).
std::string Grader::phase_table() const {
  if (phase_totals_.empty()) return "";
  static const char* kPhases[] = {"build", "list", "correctness", "technique", "speed", "sanitizer", "recheck", "other"};
  std::ostringstream t;
  char buf[64];
  t << "\nseconds per submission, by lab and phase (mean over the submissions graded in this run):\n";
  std::snprintf(buf, sizeof buf, "%-7s", "lab");
  t << buf;
  for (const char* p : kPhases) {
    std::snprintf(buf, sizeof buf, " %11s", p);
    t << buf;
  }
  t << "       total  graded\n";
  std::map<std::string, double> all;
  double max_graded = 0;
  for (const auto& [lab, p] : phase_totals_) {
    const double n = p.count("graded") ? p.at("graded") : 0;
    if (n <= 0) continue;
    max_graded = std::max(max_graded, n);
    std::snprintf(buf, sizeof buf, "%-7s", lab.c_str());
    t << buf;
    double total = 0;
    for (const char* ph : kPhases) {
      const double s = p.count(ph) ? p.at(ph) / n : 0;
      total += s;
      all[ph] += s;
      std::snprintf(buf, sizeof buf, " %11.1f", s);
      t << buf;
    }
    all["total"] += total;
    std::snprintf(buf, sizeof buf, " %11.1f %7.0f\n", total, n);
    t << buf;
  }
  std::snprintf(buf, sizeof buf, "%-7s", "all");
  t << buf;
  for (const char* ph : kPhases) {
    std::snprintf(buf, sizeof buf, " %11.1f", all[ph]);
    t << buf;
  }
  std::snprintf(buf, sizeof buf, " %11.1f\n", all["total"]);
  t << buf;
  return t.str();
}

int Grader::compare_expectations() {
  if (opt_.expect.empty()) return 0;
  std::vector<StudentResult> done;
  for (const auto& r : results_)
    if (r) done.push_back(*r);
  int bad = 0;
  log_->line(compare_with_expected(opt_.expect, done, &bad));
  return bad ? 1 : 0;
}

// Checks the command's options and the GPUs, before anything is written or built.
void Grader::check_options() {
  for (const auto& s : opt_.submissions)
    if (!fs::exists(s)) throw Error("submission '" + s + "' does not exist");
  if (opt_.submissions.empty()) throw Error("no submission to grade");
  if (opt_.out.empty()) throw Error("--out DIR is required");
  for (const auto& tool : opt_.sanitize) {
    if (tool != "memcheck" && tool != "racecheck" && tool != "initcheck" && tool != "synccheck")
      throw Error("--sanitize: unknown compute-sanitizer tool '" + tool + "'");
    if (which("compute-sanitizer").empty()) throw Error("--sanitize needs compute-sanitizer on PATH");
  }
  if (!opt_.expect.empty() && !fs::exists(opt_.expect)) throw Error("--expect: no file " + opt_.expect);
  {
    // The GPUs, checked before anything is written or built: they exist, each is named once, and
    // they were given to this run (gpus.hpp). The graders' backend says whether GPUs matter at all.
    const auto presets = [&](const std::string& name) {
      std::error_code ec;
      return fs::exists(project_.root + "/" + name, ec) ? read_file(project_.root + "/" + name) : std::string();
    };
    const std::string backend = grading_backend(opt_.preset, opt_.cmake_args, presets("CMakePresets.json"),
                                                presets("CMakeUserPresets.json"));
    gpu_context_ = read_gpu_context(backend != "cpu", opt_.gpus);
    cpu_backend_ = backend == "cpu";
    gpus_ = assign_gpus(opt_.gpus, gpu_context_, &gpu_notes_);
    opt_.gpus.clear();
    for (const auto& g : gpus_) opt_.gpus.push_back(g.entry);
  }
}

// Chooses the output, work and build-slot folders, makes them, opens grade.log, copies the calibration.
void Grader::prepare_folders() {
  opt_.out = fs::absolute(opt_.out).lexically_normal().string();
  work_ = fs::absolute(opt_.work.empty() ? opt_.out + "/work" : opt_.work).lexically_normal().string();
  // A shared slots folder holds a subfolder per course and build configuration: a run with other
  // options (another preset, CUDA architecture or -D option) never reuses a build made with these.
  if (opt_.slots.empty())
    if (const char* e = std::getenv("CONVLAB_SLOTS_DIR"); e && *e) opt_.slots = e;
  if (opt_.slots.empty()) {
    slots_base_ = work_ + "/slots";
  } else {
    std::string config = project_.root;
    for (const auto& o : configure_options()) config += "\n" + o;
    const std::string given = fs::absolute(opt_.slots).lexically_normal().string();
    const std::string rel = fs::path(given).lexically_relative(project_.root).generic_string();
    if (!rel.empty() && !starts_with(rel, "..") && (rel == "." || in_source_tree(rel, true, true)))
      throw Error("--slots-dir " + opt_.slots + " lies inside the course's tree, which every slot copies: give a "
                  "folder outside it (or under its build/ folder)");
    slots_base_ = given + "/" + hex64(fnv1a(config)).substr(0, 12);
  }
  for (const char* d : {"", "/feedback", "/results", "/state"}) make_dirs(opt_.out + d);
  make_dirs(work_);
  log_ = std::make_unique<Log>(opt_.out + "/grade.log");
  if (!opt_.calibration.empty()) {
    calibration_copy_ = work_ + "/calibration.json";
    write_file_atomic(calibration_copy_, read_file(opt_.calibration));
  }
}

// Turns the arguments into one submission per student; logs what the intake has to say.
void Grader::take_in_submissions() {
  // The submissions as they came (a bulk download, a roster): one per student, checked before
  // anything is built (intake.hpp).
  std::optional<Roster> roster;
  if (!opt_.roster.empty()) roster = read_roster(opt_.roster);
  std::vector<std::string> notes;
  intake_ = take_in(opt_.submissions, work_ + "/intake", project_, roster ? &*roster : nullptr, &notes);
  for (const auto& n : notes) log_->line("intake: " + n);
  if (intake_.size() != opt_.submissions.size() || roster)
    log_->line("intake: " + std::to_string(intake_.size()) + " submission(s) from " +
               std::to_string(opt_.submissions.size()) + " argument(s)" + (roster ? ", named by the roster " + opt_.roster : ""));
}

// Says in grade.log what this run grades and how; chooses the sandboxes and the judges' key; writes hardware.json.
void Grader::announce_run() {
  if (opt_.jobs <= 0) opt_.jobs = std::max(1, std::min(4, static_cast<int>(std::thread::hardware_concurrency()) / 2));
  log_->line("convlab grade: " + std::to_string(intake_.size()) + " submission(s), " +
             std::to_string(labs_.size()) + " lab(s), " + std::to_string(opt_.jobs) + " build slot(s), GPU(s) " +
             [&] {
               std::string g;
               for (const auto& x : opt_.gpus) g += (g.empty() ? "" : ",") + (x == GpuAssigned::kNoGpu ? "none" : x);
               return g;
             }() +
             ", preset " + opt_.preset + (opt_.cuda_arch.empty() ? "" : ", CUDA architectures " + opt_.cuda_arch) +
             (opt_.calibration.empty() ? "" : ", calibration " + opt_.calibration));
  for (const auto& note : gpu_notes_) log_->line(note);
  choose_sandbox_user();
  choose_runner_sandbox();
  {
    // The key the judges sign their records with, new for every run.
    std::random_device rd;
    char key[33];
    std::snprintf(key, sizeof key, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
    record_key_ = key;
  }
  log_->line(user_.empty() ? "sandbox: graders run as this user, with limits (no user switch)"
                           : "sandbox: graders run as user '" + user_ + "', with limits");
  write_hardware();
}

// Lists and hashes the pristine tree; returns the hash of the settings that a resumed result must match.
std::uint64_t Grader::hash_course() {
  // The pristine tree: the course without reference/, build outputs or the command's fixtures.
  slot_files_ = source_files(project_.root, true);
  for (const auto& f : slot_files_)
    if (!starts_with(f, "starter_code/")) integrity_files_.push_back(f);
  slot_hash_ = hash_files(project_.root, integrity_files_);
  root_files_ = source_files(project_.root, false);
  // Our own outputs may lie inside the course tree: they are not part of it.
  const std::string out_rel = fs::path(opt_.out).lexically_relative(project_.root).generic_string();
  const std::string work_rel = fs::path(work_).lexically_relative(project_.root).generic_string();
  root_files_.erase(std::remove_if(root_files_.begin(), root_files_.end(),
                                   [&](const std::string& f) {
                                     return (!starts_with(out_rel, "..") && starts_with(f, out_rel + "/")) ||
                                            (!starts_with(work_rel, "..") && starts_with(f, work_rel + "/"));
                                   }),
                    root_files_.end());
  root_hash_ = hash_files(project_.root, root_files_);
  rechecker_ = std::make_unique<GradeRechecker>(recheck_settings());
  std::uint64_t settings = fnv1a(opt_.preset + "|" + opt_.cuda_arch + "|" + fmt_points(opt_.test_timeout) + "|" +
                                 fmt_points(opt_.compile_timeout) + "|" + opt_.compiler_bug_policy);
  for (const auto& t : opt_.sanitize) settings = fnv1a(t + "|" + opt_.sanitize_exclude, settings);
  if (!calibration_copy_.empty()) settings = fnv1a(read_file(calibration_copy_), settings);
  settings = hash_files(project_.root, integrity_files_) ^ settings;
  return settings;
}

// Opens every submission, resumes what an earlier run finished, queues the rest for the builders.
void Grader::queue_submissions(std::uint64_t settings) {
  // Read every submission; resume what an earlier run finished.
  std::set<std::string> names;
  std::vector<Job> pending;
  results_.resize(intake_.size());
  total_ = intake_.size();
  for (std::size_t i = 0; i < intake_.size(); ++i) {
    std::string name = intake_[i].name;
    for (int k = 2; names.count(name); ++k) name = intake_[i].name + "-" + std::to_string(k);
    names.insert(name);
    Job job;
    job.index = i;
    job.dir = work_ + "/subs/" + name;
    job.sub = open_submission(intake_[i].path, job.dir + "/unpacked", project_);
    job.sub.origin = intake_[i].source;  // as given, or "class.zip: smith_12345_67890_lab.zip"
    job.sub.student = name;
    job.fingerprint = hex64(fnv1a(job.sub.fingerprint() + job.sub.failure, settings));
    const std::string state = opt_.out + "/state/" + name + ".json";
    if (!opt_.force && fs::exists(state)) {
      try {
        StudentResult saved = student_from_json(read_file(state));
        if (saved.fingerprint == job.fingerprint) {
          identify(saved, i);
          log_->line("resumed: " + name + " was graded by an earlier run (" + fmt_points(saved.total()) + " / " +
                     fmt_points(saved.max_total()) + "); --force grades it again");
          results_[i] = std::move(saved);
          --total_;
          continue;
        }
      } catch (const Error& e) {
        log_->line("warning: ignoring " + state + ": " + e.what());
      }
    }
    if (!job.sub.failure.empty()) {
      StudentResult r;
      r.student = name;
      r.origin = job.sub.origin;
      r.kind = job.sub.kind;
      r.fingerprint = job.fingerprint;
      r.failure = job.sub.failure;
      identify(r, i);
      for (const Lab* l : labs_) {
        const LabSpec& spec = specs_.at(l->spec.lab);
        r.labs.push_back(score_lab(spec, unreachable(spec), "the submission could not be read: " + job.sub.failure));
      }
      finish(job, std::move(r));
      continue;
    }
    pending.push_back(std::move(job));
  }
  for (auto& j : pending) build_q_.push(std::move(j));
  build_q_.close();
}

// Builds and runs the queued submissions in the build and GPU workers, with a progress line every 15 quiet seconds.
void Grader::grade_queued() {
  slots_.clear();
  slots_.resize(opt_.jobs);
  // Progress: the harness builds and the graders take minutes; a line whenever 15 s pass quietly.
  const double t0 = now_s();
  std::atomic<bool> finished{false};
  std::thread heartbeat([&] {
    while (!finished) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      if (!finished && now_s() - log_->last_console() >= 15)
        log_->line("grading: " + std::to_string(done_.load()) + " of " + std::to_string(total_) +
                   " submissions done, " + fmt_seconds(now_s() - t0) + " so far (building and running; grade.log has the details)");
    }
  });
  std::vector<std::thread> builders, runners;
  for (int k = 0; k < opt_.jobs; ++k) builders.emplace_back([this, k] { build_worker(k); });
  for (const auto& gpu : gpus_) runners.emplace_back([this, gpu] { run_worker(gpu); });
  for (auto& t : builders) t.join();
  run_q_.close();
  for (auto& t : runners) t.join();
  finished = true;
  heartbeat.join();
}

// The whole run, step by step: checks, folders, submissions, builds and graders, outputs.
int Grader::run() {
  check_options();
  prepare_folders();
  resolve_labs();
  take_in_submissions();
  announce_run();

  const std::uint64_t settings = hash_course();

  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  queue_submissions(settings);

  grade_queued();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  // The record of the machine says which submissions each GPU graded in this run.
  for (std::size_t i = 0; i < gpus_.size() && i < hardware_["gpus"].size(); ++i)
    hardware_["gpus"][i]["graded"] = graded_on_[gpus_[i].entry];
  write_file_atomic(opt_.out + "/hardware.json", hardware_.dump(2) + "\n");
  if (fatal_) throw Error(fatal_message_);
  const int status = write_outputs();
  if (g_interrupted) {
    log_->line("interrupted: run the same command again to grade the rest (finished submissions are kept)");
    return 130;
  }
  return status;
}

}  // namespace grade_internal

int grade_main(const Project& project, const GradeOptions& options) {
  grade_internal::Grader g(project, options);
  return g.run();
}

}  // namespace convlab::cli
