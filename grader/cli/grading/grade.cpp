// convlab grade: build each submission in a pristine tree, run its graders in
// limited processes, score, write the outputs. See grade.hpp and docs/grading.md.
#include "grading/grade.hpp"

#include "grading/batch.hpp"
#include "admin/doctor.hpp"
#include "fence.hpp"
#include "grading/gpus.hpp"
#include "common/hardware.hpp"
#include "grading/intake.hpp"
#include "grading/recheck.hpp"
#include "grading/reports.hpp"
#include "common/sandbox.hpp"
#include "grading/scoring.hpp"
#include "grading/submission.hpp"
#include "common/util.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <pwd.h>
#include <unistd.h>

namespace convlab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::atomic<bool> g_interrupted{false};
void on_interrupt(int) {
  g_interrupted = true;
  cancel_all_runs();
}

// The run's log: every line goes to OUT/grade.log, and to the terminal.
class Log {
public:
  explicit Log(const std::string& path) : file_(path, std::ios::app) {
    if (!file_) throw Error("cannot write the log " + path);
  }
  void line(const std::string& text, bool console = true) {
    std::lock_guard<std::mutex> lock(mu_);
    file_ << "[" << utc_now() << "] " << text << "\n";
    file_.flush();
    if (console) std::cout << text << std::endl;
    if (console) last_console_ = now_s();
  }
  // When a line last reached the terminal (now_s()).
  double last_console() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_console_;
  }
  void raw(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    file_ << text;
    file_.flush();
  }

private:
  std::mutex mu_;
  std::ofstream file_;
  double last_console_ = now_s();
};

// A queue that workers wait on; closed when no more items will come.
template <class T>
class Queue {
public:
  void push(T v) {
    {
      std::lock_guard<std::mutex> l(mu_);
      q_.push_back(std::move(v));
    }
    cv_.notify_one();
  }
  void close() {
    {
      std::lock_guard<std::mutex> l(mu_);
      closed_ = true;
    }
    cv_.notify_all();
  }
  std::optional<T> pop() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return closed_ || !q_.empty(); });
    if (q_.empty()) return std::nullopt;
    T v = std::move(q_.front());
    q_.pop_front();
    return v;
  }

private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> q_;
  bool closed_ = false;
};

// A lab of one submission, built and ready to run.
struct BuiltLab {
  const Lab* lab = nullptr;
  LabSpec spec;              // with the calibration applied
  bool submitted = false;
  std::string failure;       // lab-wide: no build, forbidden symbol, ...
  std::string details;
  std::vector<std::string> notes;
  std::string exe;           // the judge (the lab's graders), copied out of the slot
  std::string runner;        // its runner (the student's kernels), copied next to it
  std::string slot_src;      // the pristine tree it was built in
  double build_s = 0;
};

struct Job {
  std::size_t index = 0;
  Submission sub;
  std::string dir;           // WORK/subs/<student>
  std::string fingerprint;
  std::vector<BuiltLab> labs;
};

std::string strip_paths(std::string text, const std::string& prefix) {
  for (std::size_t p; !prefix.empty() && (p = text.find(prefix)) != std::string::npos;) text.erase(p, prefix.size());
  return text;
}

// The compiler's complaints, without the noise of the build tool.
std::string compiler_errors(const std::string& output, const std::string& src_prefix) {
  std::istringstream in(strip_paths(output, src_prefix));
  std::string line, out;
  int kept = 0;
  while (std::getline(in, line) && kept < 60) {
    if (starts_with(line, "[") || starts_with(line, "ninja: ") || starts_with(line, "FAILED: ") ||
        line.find("/nvcc ") != std::string::npos || line.find("/c++ ") != std::string::npos)
      continue;
    out += line + "\n";
    ++kept;
  }
  return out;
}

class Grader {
public:
  Grader(const Project& p, GradeOptions o) : project_(p), opt_(std::move(o)) {}
  int run();

private:
  // setup
  void resolve_labs();
  void choose_sandbox_user();
  void write_hardware();
  // building
  void build_worker(int slot);
  void setup_slot(int slot);
  std::vector<std::string> configure_options() const;
  GradeRechecker::Settings recheck_settings();
  void build_job(Job& job, int slot);
  BuiltLab build_lab(const Job& job, const Lab& lab, int slot);
  std::string check_dependencies(const std::string& build, const std::vector<std::string>& sources, const std::string& slot);
  std::string check_symbols(const Lab& lab, const std::string& build, const std::string& exe, bool link_stage);
  // running
  void run_worker(const GpuAssigned& gpu);
  LabResult run_lab(const Job& job, const BuiltLab& b, const std::string& gpu);
  RunSpec graders_spec(const Job& job, const BuiltLab& b, const std::string& gpu, const std::string& results) const;
  void add_runner_args(std::vector<std::string>& argv, const BuiltLab& b) const;
  void choose_runner_sandbox();
  GradersProcess graders_process(const Job& job, const BuiltLab& b, const std::vector<BatchGrader>& graders,
                                 const std::string& gpu, const std::string& results, const Replay* replay,
                                 const std::string& what, bool again);
  GraderRun run_grader(const Job& job, const BuiltLab& b, const GraderSpec& g, const std::vector<std::string>& tests,
                       const std::string& gpu, const Replay* replay = nullptr);
  std::map<std::string, BatchRun> run_graders(const Job& job, const BuiltLab& b, const std::vector<BatchGrader>& graders,
                                              const std::string& gpu, int* batches);
  std::string run_sanitizer(const Job& job, const BuiltLab& b, const GraderSpec& g, const std::string& tool,
                            const std::string& gpu, int ntests, std::string* note);
  void finish(Job& job, StudentResult result, const GpuAssigned* gpu = nullptr);
  // outputs
  int write_outputs();
  std::string phase_table() const;
  int compare_expectations();
  void prepare_dir(const std::string& dir) const;
  std::map<std::string, GraderRun> unreachable(const LabSpec& spec) const;
  void identify(StudentResult& r, std::size_t index) const;

  const Project& project_;
  GradeOptions opt_;
  std::vector<const Lab*> labs_;
  std::vector<Intake> intake_;            // the submissions, one per student (intake.hpp)
  bool cpu_backend_ = false;              // graded on the CPU backend: the speed graders need a GPU
  std::map<std::string, LabSpec> specs_;  // calibrated
  GpuContext gpu_context_;                // nvidia-smi's GPUs, convlab's own CUDA_VISIBLE_DEVICES (gpus.hpp)
  std::vector<GpuAssigned> gpus_;         // the GPUs of this run, checked; opt_.gpus holds their entries
  std::vector<std::string> gpu_notes_;    // what the check of the GPUs has to say, for the log
  json hardware_;                         // hardware.json, completed at the end with what each GPU graded
  std::map<std::string, std::vector<std::string>> graded_on_;  // GPU entry -> students it graded in this run
  std::string work_, calibration_copy_, user_, settings_hash_;
  std::string record_key_;       // signs the judges' records for this run
  std::string runner_sandbox_;   // the script that starts a runner in bubblewrap ("" if unavailable)
  std::string runner_sandbox_note_;
  std::vector<std::string> slot_files_, integrity_files_;
  std::uint64_t slot_hash_ = 0, root_hash_ = 0;
  std::vector<std::string> root_files_;
  std::unique_ptr<Log> log_;
  std::unique_ptr<GradeRechecker> rechecker_;  // a failing correctness grader, looked at again (issue 18)
  Queue<Job> build_q_, run_q_;
  std::mutex mu_, integrity_mu_;
  std::vector<std::optional<StudentResult>> results_;
  // Build slot k's folder: held (locked) by builder k from its first submission on, so that two
  // runs sharing a --slots-dir (or a --work-dir) never build in the same tree.
  std::string slots_base_;
  std::vector<SlotLease> slots_;  // each builder writes its own
  // Seconds by lab and phase over the submissions graded in this run (LabResult::phase_s, the build,
  // "graded": how many), for grade.log's closing table (issue 29, item 1).
  std::map<std::string, std::map<std::string, double>> phase_totals_;
  std::atomic<bool> fatal_{false};
  std::string fatal_message_;
  std::size_t total_ = 0;
  std::atomic<std::size_t> done_{0};
};

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

// The runner (the process holding a submission's kernels) starts in bubblewrap where it works: no
// network, no other processes, a private /tmp and /dev with the NVIDIA device nodes only, every
// file read-only, the course's reference/ and this run's outputs hidden.
void Grader::choose_runner_sandbox() {
  const std::string bwrap = opt_.runner_sandbox == "none" ? std::string() : which("bwrap");
  if (bwrap.empty()) {
    runner_sandbox_note_ = opt_.runner_sandbox == "none"
                               ? "none (--runner-sandbox none)"
                               : "none: bubblewrap (bwrap) is not installed; runners run with the graders' limits only";
    log_->line("runner sandbox: " + runner_sandbox_note_);
    return;
  }
  std::string script = "#!/bin/sh\n# convlab grade: starts a runner (a submission's kernels) in bubblewrap.\nexec '" +
                       bwrap + "' --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp";
  std::error_code ec;
  // The private /tmp hides whatever lies under /tmp, the runners themselves included when the
  // work folder is there (a mktemp -d grading): such folders are bound back, read-only.
  std::vector<std::string> under_tmp;
  for (const std::string& p : {work_, opt_.out, project_.root}) {
    const std::string c = fs::weakly_canonical(p, ec).string();
    if (!c.empty() && (c == "/tmp" || starts_with(c, "/tmp/"))) under_tmp.push_back(c);
  }
  std::sort(under_tmp.begin(), under_tmp.end());  // a folder before the folders inside it
  under_tmp.erase(std::unique(under_tmp.begin(), under_tmp.end()), under_tmp.end());
  for (const auto& p : under_tmp) script += " --ro-bind '" + p + "' '" + p + "'";
  for (const auto& e : fs::directory_iterator("/dev", ec))
    if (starts_with(e.path().filename().string(), "nvidia"))
      script += " --dev-bind '" + e.path().string() + "' '" + e.path().string() + "'";
  if (fs::exists(project_.root + "/reference", ec)) script += " --tmpfs '" + project_.root + "/reference'";
  for (const char* d : {"/results", "/feedback", "/state"}) script += " --tmpfs '" + opt_.out + d + "'";
  script += " --chdir / \"$@\"\n";
  const std::string path = work_ + "/runner-sandbox.sh";
  write_file_atomic(path, script);
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec, ec);
  // Probe it as the graders' user: it must start, hide reference/, and leave the GPU usable.
  // It must also see the work folder, where each runner is copied before it starts.
  std::string check = "test -w /tmp && ! test -e '" + project_.root + "/reference/README.md' && test -r '" + path + "'";
  const std::string smi = which("nvidia-smi");
  if (!smi.empty() && fs::exists("/dev/nvidiactl", ec)) check += " && '" + smi + "' -L >/dev/null";
  RunSpec probe;
  probe.argv = {path, "/bin/sh", "-c", check};
  probe.user = user_;
  probe.limits.timeout_s = 60;
  const RunResult r = run_sandboxed(probe);
  if (r.ok()) {
    runner_sandbox_ = path;
    runner_sandbox_note_ = "bubblewrap (" + bwrap + "): no network, private /tmp, only the NVIDIA device nodes, "
                           "files read-only, reference/ and the grading outputs hidden";
  } else {
    runner_sandbox_note_ = "none: bubblewrap could not start a runner here (" + r.describe() + ": " +
                           trim(head_lines(r.output, 2)) + "); runners run with the graders' limits only";
  }
  log_->line("runner sandbox: " + runner_sandbox_note_);
}

void Grader::add_runner_args(std::vector<std::string>& argv, const BuiltLab& b) const {
  argv.push_back("--convlab-runner=" + b.runner);
  if (!runner_sandbox_.empty()) argv.push_back("--convlab-runner-prefix=" + runner_sandbox_);
}

// ---- building ------------------------------------------------------------------

// How every grading build is configured (after -S and -B).
std::vector<std::string> Grader::configure_options() const {
  std::vector<std::string> o = {"--preset", opt_.preset, "-DCONVLAB_IMPL=student", "-DCONVLAB_SELFTEST=OFF",
                                "-DCONVLAB_BENCHMARKS=OFF"};
  if (!opt_.cuda_arch.empty()) o.push_back("-DCMAKE_CUDA_ARCHITECTURES=" + opt_.cuda_arch);
  // The student's preset picks its backend by what the machine has; grading with it means the
  // GPU graders, always (grade with --preset cpu for the CPU backend's correctness graders).
  if (opt_.preset == "default") o.push_back("-DCONVLAB_BACKEND=cuda");
  // A compiler launcher from the grader's environment (CMAKE_CXX_COMPILER_LAUNCHER=ccache) would
  // serve objects and dependency lists compiled from other trees: the check of the files a
  // compilation read would then name another submission's, or the course's, files.
  for (const char* lang : {"C", "CXX", "CUDA"}) o.push_back(std::string("-DCMAKE_") + lang + "_COMPILER_LAUNCHER=");
  for (const auto& a : opt_.cmake_args) o.push_back(a);
  return o;
}

// A failing correctness grader is built again with less device optimisation in trees of its own,
// configured as the slots are and vetted as build_lab() vets a build (recheck.hpp, issue 18).
GradeRechecker::Settings Grader::recheck_settings() {
  GradeRechecker::Settings r;
  r.root = project_.root;
  r.files = slot_files_;
  r.configure = configure_options();
  r.work = work_ + "/recheck";
  r.policy = opt_.compiler_bug_policy;
  r.cpu = opt_.recheck_cpu;
  r.compile_timeout_cap_s = opt_.compile_timeout;
  r.vet = [this](const Lab& lab, const std::string& build, const std::string& src,
                 const std::vector<std::string>& sources, const std::string& runner) {
    std::string bad = check_dependencies(build, sources, src);
    std::error_code ec;
    for (fs::recursive_directory_iterator it(build + "/labs", ec), end; bad.empty() && !ec && it != end; it.increment(ec))
      if (it->path().filename() == "lib" + lab.spec.lab + "_kernels.a") bad = check_symbols(lab, build, it->path().string(), false);
    return bad.empty() ? check_symbols(lab, build, runner, true) : bad;
  };
  r.log = [this](const std::string& text) { log_->raw(text); };
  return r;
}

void Grader::setup_slot(int slot) {
  const double t0 = now_s();
  slots_[slot] = lease_slot(slots_base_);
  const std::string base = slots_[slot].dir();
  const std::string src = base + "/src", build = base + "/build";
  const auto changed = sync_tree(project_.root, src, slot_files_);
  std::vector<std::string> configure = {"cmake", "-S", src, "-B", build};
  for (const auto& a : configure_options()) configure.push_back(a);
  RunResult r = run_tool(configure, src, 900);
  log_->raw("---- slot " + std::to_string(slot) + ": configure\n" + r.output + "\n");
  if (!r.ok()) throw Error("cannot configure the grading tree (preset '" + opt_.preset + "'): " + r.describe() + "\n" +
                           head_lines(r.output.substr(r.output.size() > 4000 ? r.output.size() - 4000 : 0), 40));
  std::vector<std::string> targets = {"cmake", "--build", build, "--target"};
  for (const Lab* l : labs_) targets.push_back(l->spec.lab + "_graders");
  r = run_tool(targets, src, 3600);
  log_->raw("---- slot " + std::to_string(slot) + ": build of the harness\n" + r.output + "\n");
  if (!r.ok()) throw Error("cannot build the graders of the untouched tree: " + r.describe() + "\n" +
                           head_lines(r.output.substr(r.output.size() > 4000 ? r.output.size() - 4000 : 0), 40));
  log_->line("build slot " + std::to_string(slot) + " ready in " + fmt_seconds(now_s() - t0) + " (" +
             std::to_string(changed.size()) + " files copied" +
             (slots_[slot].reused() ? "; an earlier run's build, brought up to date" : "") + "): " + base);
}

std::string Grader::check_dependencies(const std::string& build, const std::vector<std::string>& sources,
                                       const std::string& slot_src) {
  // The compiler's own record of every file it read (ninja -t deps): a submission
  // that #includes the instructor's tree (reference/ solutions) or another
  // student's files is caught here, whatever the source looks like.
  const RunResult r = run_tool({"ninja", "-C", build, "-t", "deps"}, "", 120);
  if (!r.ok()) return "";
  std::istringstream in(r.output);
  std::string line, bad;
  std::vector<std::string> block;
  const auto judge = [&] {
    const bool ours = std::any_of(block.begin(), block.end(), [&](const std::string& d) {
      return std::find(sources.begin(), sources.end(), d) != sources.end();
    });
    if (!ours) return;
    for (const auto& d : block) {
      if (starts_with(d, slot_src + "/") || starts_with(d, build + "/")) continue;
      const bool inside_root = starts_with(d, project_.root + "/");
      // Another slot's tree is another submission's (of this run or of one sharing --slots-dir).
      const bool inside_work =
          starts_with(d, work_ + "/") || starts_with(d, opt_.out + "/") || starts_with(d, slots_base_ + "/");
      if (inside_root || inside_work || d.find("/reference/") != std::string::npos)
        if (bad.find(d) == std::string::npos) bad += (bad.empty() ? "" : ", ") + d;
    }
  };
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ') {
      judge();
      block.clear();
    } else if (!trim(line).empty()) {
      block.push_back(trim(line));
    }
  }
  judge();
  return bad;
}

std::string Grader::check_symbols(const Lab& lab, const std::string& build, const std::string& file, bool link_stage) {
  if (!link_stage) {
    // The submission's objects: the symbol fence (grader/fence), the same check the
    // build runs, with the runner's own objects and libraries from its link line
    // (the kernels may not define a name they define). Its lines are the feedback.
    try {
      std::string backend = "cuda";
      std::istringstream cache(read_file(build + "/CMakeCache.txt"));
      for (std::string line; std::getline(cache, line);)
        if (starts_with(line, "CONVLAB_BACKEND:")) backend = trim(line.substr(line.find('=') + 1));
      std::vector<std::string> harness;
      const RunResult c = run_tool({"ninja", "-C", build, "-t", "commands", lab.spec.lab + "_runner"}, "", 120);
      if (c.ok()) {
        std::istringstream lines(c.output);
        std::string link;
        for (std::string line; std::getline(lines, line);)
          if (!trim(line).empty()) link = line;
        std::istringstream words(link);
        for (std::string w; words >> w;) {
          const bool object = w.size() > 2 && (w.compare(w.size() - 2, 2, ".o") == 0 || w.compare(w.size() - 2, 2, ".a") == 0);
          if (object && w[0] != '/' && w[0] != '-' && fs::path(w).filename() != fs::path(file).filename())
            harness.push_back(build + "/" + w);
        }
      }
      const auto findings = fence::check(fence::load_policy(project_.root + "/" + lab.dir + "/grading.json"),
                                         fence::parse_backend(backend), {file}, harness);
      std::vector<std::string> lines;
      for (const auto& f : findings) lines.push_back(f.line());
      return fence_refusal(lines);
    } catch (const std::exception& e) {
      return std::string("- cannot check the submission's compiled objects: ") + e.what();
    }
  }
  std::vector<std::string> found;
  // A forbidden substring that the spec allows one file ("allowed_symbols") may reach the
  // graders: the fence checked that only that file's object uses it, so its library may be linked.
  const auto allowed = [&](const std::string&, const std::string& f) {
    for (const auto& [allowed_file, subs] : lab.spec.allowed_symbols)
      if (std::find(subs.begin(), subs.end(), f) != subs.end()) return true;
    return false;
  };
  const auto scan = [&](const std::string& text, bool symbols) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      std::string name = line;
      if (symbols) {  // "conv_basic.cu.o: U cublasCreate_v2" or "lib.a:obj.o:0000 T name"
        const auto pos = line.find(' ', line.rfind(": ") == std::string::npos ? 0 : line.rfind(": ") + 2);
        name = trim(line.substr(pos == std::string::npos ? 0 : pos));
        if (name.size() > 2 && name[1] == ' ') name = name.substr(2);
      }
      for (const auto& f : lab.spec.forbidden_symbols)
        if (contains_icase(name, f) && !allowed(line, f)) found.push_back(trim(name) + " (forbidden: " + f + ")");
    }
  };
  // The linked graders: their imports, NEEDED libraries and link line.
  const RunResult u = run_tool({"nm", "-C", "-u", file}, "", 120);
  if (u.ok()) scan(u.output, true);
  const RunResult d = run_tool({"readelf", "-d", file}, "", 120);
  std::istringstream in(d.output);
  std::string line;
  while (std::getline(in, line))
    if (line.find("(NEEDED)") != std::string::npos) scan(line, false);
  const RunResult c = run_tool({"ninja", "-C", build, "-t", "commands", lab.spec.lab + "_runner"}, "", 120);
  if (c.ok()) {
    const std::string link = c.output.substr(c.output.rfind('\n', c.output.size() > 1 ? c.output.size() - 2 : 0) + 1);
    for (const auto& f : lab.spec.forbidden_symbols)
      if ((contains_icase(link, "-l" + f) || contains_icase(link, "/lib" + f)) && !allowed(link, f))
        found.push_back("the link line names lib" + f);
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  std::string out;
  for (std::size_t i = 0; i < found.size() && i < 6; ++i) out += (i ? "; " : "") + found[i];
  return out;
}

BuiltLab Grader::build_lab(const Job& job, const Lab& lab, int slot) {
  BuiltLab b;
  b.lab = &lab;
  b.spec = specs_.at(lab.spec.lab);
  const std::string base = slots_[slot].dir();
  const std::string src = base + "/src", build = base + "/build";
  b.slot_src = src;
  const auto it = job.sub.files.find(lab.spec.lab);
  b.submitted = it != job.sub.files.end() && !it->second.empty();
  if (!b.submitted) {
    b.failure = "the submission holds no file of this lab (starter_code/" + lab.spec.slug + "/)";
    return b;
  }
  const double t0 = now_s();
  // Overlay: only the files the spec allows; the starter's version for those not submitted.
  std::vector<std::string> sources;
  for (const auto& f : lab.spec.files) {
    const std::string dst = src + "/" + lab.starter + "/" + f;
    const auto sub = it->second.find(f);
    const std::string from = sub != it->second.end() ? sub->second : project_.root + "/" + lab.starter + "/" + f;
    if (sub == it->second.end()) b.notes.push_back(f + " was not submitted: the starter's version was used");
    const std::string content = read_file(from);
    std::error_code ec;
    if (!fs::exists(dst, ec) || read_file(dst) != content) write_file_atomic(dst, content);
    sources.push_back(dst);
  }
  const double limit = opt_.compile_timeout > 0 ? std::min<double>(opt_.compile_timeout, lab.spec.compile_timeout_s)
                                                : lab.spec.compile_timeout_s;
  const auto compile = [&](const std::string& target) {
    RunSpec s;
    s.argv = {"cmake", "--build", build, "--target", target};
    s.cwd = src;
    s.limits.timeout_s = limit;
    s.limits.file_bytes = 1ll << 30;
    s.limits.open_files = 0;
    s.keep_head = 256 * 1024;
    return run_sandboxed(s);
  };
  RunResult r = compile(lab.spec.lab + "_kernels");
  log_->raw("---- " + job.sub.student + " " + lab.spec.lab + ": compile\n" + r.output + "\n");
  if (!r.ok()) {
    b.failure = r.timed_out ? "the compilation ran past its time limit of " + fmt_points(limit) + " s"
                            : "did not compile";
    b.details = compiler_errors(r.output, src + "/");
  }
  if (b.failure.empty()) {
    const std::string bad = check_dependencies(build, sources, src);
    if (!bad.empty())
      b.failure = "the code reads files outside the submission while compiling (" + strip_paths(bad, "") +
                  "): reading the course's solutions or another submission is not allowed";
  }
  if (b.failure.empty()) {
    std::string lib;
    for (const auto& e : fs::recursive_directory_iterator(build + "/labs"))
      if (e.path().filename() == "lib" + lab.spec.lab + "_kernels.a") lib = e.path().string();
    const std::string bad = lib.empty() ? "the kernels library was not built" : check_symbols(lab, build, lib, false);
    if (!bad.empty()) b.failure = "refused by the symbol fence:\n" + bad;
  }
  if (b.failure.empty()) {
    r = compile(lab.spec.lab + "_graders");
    log_->raw("---- " + job.sub.student + " " + lab.spec.lab + ": link\n" + r.output + "\n");
    if (!r.ok()) {
      b.failure = r.timed_out ? "the build ran past its time limit" : "did not link with the graders";
      b.details = compiler_errors(r.output, src + "/");
    }
  }
  if (b.failure.empty()) {
    // The student's code is linked into the runner only: that is the binary to check.
    const std::string dir = build + "/" + lab.dir + "/";
    const std::string bad = check_symbols(lab, build, dir + lab.spec.lab + "_runner", true);
    if (!bad.empty()) b.failure = "links a forbidden library: " + bad;
    make_dirs(job.dir + "/" + lab.spec.lab);
    b.exe = job.dir + "/" + lab.spec.lab + "/" + lab.spec.lab + "_graders";
    b.runner = job.dir + "/" + lab.spec.lab + "/" + lab.spec.lab + "_runner";
    // The judge, its runner, and the runner's compiled-code facts (technique graders; GPU builds).
    for (const auto& [from, to] : {std::pair{dir + lab.spec.lab + "_graders", b.exe},
                                   std::pair{dir + lab.spec.lab + "_runner", b.runner},
                                   std::pair{dir + lab.spec.lab + "_runner.facts.json", b.runner + ".facts.json"}}) {
      std::error_code ec;
      if (!fs::exists(from, ec) && starts_with(to, b.runner + ".facts")) continue;
      fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
      if (ec) throw Error("cannot copy " + from + ": " + ec.message());
      fs::permissions(to, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec, ec);
    }
  }
  b.build_s = now_s() - t0;
  return b;
}

void Grader::build_job(Job& job, int slot) {
  if (!slots_[slot].held()) setup_slot(slot);
  // Every submission starts from the pristine tree: anything changed is put back.
  const std::string src = slots_[slot].dir() + "/src";
  const auto restored = sync_tree(project_.root, src, slot_files_);
  for (const auto& f : restored)
    if (!starts_with(f, "starter_code/")) log_->line("slot " + std::to_string(slot) + ": restored " + f, false);
  for (const Lab* l : labs_) job.labs.push_back(build_lab(job, *l, slot));
  // Without --labs, a submission is graded for the labs it holds files of, and reported out of
  // their points (a lab 01 submission: "77.5 / 100", not out of every lab's points).
  const bool any = std::any_of(job.labs.begin(), job.labs.end(), [](const BuiltLab& b) { return b.submitted; });
  if (opt_.labs.empty() && any) {
    std::string absent;
    for (const auto& b : job.labs)
      if (!b.submitted) absent += (absent.empty() ? "" : ", ") + b.spec.lab;
    job.labs.erase(std::remove_if(job.labs.begin(), job.labs.end(), [](const BuiltLab& b) { return !b.submitted; }),
                   job.labs.end());
    if (!absent.empty())
      job.sub.notes.push_back("graded for the labs it holds files of; no files of " + absent +
                              " (grade with --labs to count those too)");
  }
}

void Grader::build_worker(int slot) {
  while (auto job = build_q_.pop()) {
    if (g_interrupted || fatal_) break;
    try {
      build_job(*job, slot);
      run_q_.push(std::move(*job));
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> l(mu_);
      if (!fatal_) fatal_message_ = e.what();
      fatal_ = true;
      cancel_all_runs();
      break;
    }
  }
}

// ---- running ---------------------------------------------------------------------

RunSpec Grader::graders_spec(const Job& job, const BuiltLab& b, const std::string& gpu, const std::string& results) const {
  RunSpec s;
  const std::string scratch = job.dir + "/" + b.spec.lab;
  s.cwd = scratch + "/run";
  s.env = {"PATH=/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin", "HOME=" + scratch + "/home",
           "TMPDIR=" + scratch + "/tmp", "LANG=C", "GTEST_COLOR=no", "CUDA_DEVICE_ORDER=PCI_BUS_ID",
           "CUDA_VISIBLE_DEVICES=" + gpu, "CONVLAB_RESULTS_DIR=" + results,
           // The judge signs its records with this key and hides it from the runner: a record the
           // graders did not write is refused (read_record).
           "CONVLAB_RECORD_KEY=" + record_key_};
  if (const char* ld = std::getenv("LD_LIBRARY_PATH")) s.env.push_back(std::string("LD_LIBRARY_PATH=") + ld);
  if (!calibration_copy_.empty()) s.env.push_back("CONVLAB_CALIBRATION=" + calibration_copy_);
  s.user = user_;
  s.limits.file_bytes = 64ll << 20;
  s.limits.processes = 256;
  s.limits.open_files = 1024;
  s.limits.output_kill_bytes = opt_.output_limit;
  s.progress_marker = "[ RUN      ]";
  // The harness's own processes (the judge, the runner, bubblewrap around it) end with the judge;
  // on a loaded machine that takes a moment, which must not be charged to the submission.
  s.grace_s = 5;
  s.harness = {b.exe, b.runner};
  if (!runner_sandbox_.empty()) s.harness.push_back(which("bwrap"));
  return s;
}

// One graders process: the tests of `graders` (the union of their gtest filters), their records in
// `results` (emptied first). `what` names them in grade.log's line for it, "---- STUDENT LAB WHAT on
// GPU N: how it ended", and `again` says it is a rerun.
GradersProcess Grader::graders_process(const Job& job, const BuiltLab& b, const std::vector<BatchGrader>& graders,
                                       const std::string& gpu, const std::string& results, const Replay* replay,
                                       const std::string& what, bool again) {
  prepare_dir(results);
  const double per_test = opt_.test_timeout > 0 ? std::min<double>(opt_.test_timeout, b.spec.test_timeout_s)
                                                : b.spec.test_timeout_s;
  RunSpec s = graders_spec(job, b, gpu, results);
  // A replay (recheck.hpp) runs another build of the kernels, on the failing run's seed.
  BuiltLab rb = b;
  if (replay) rb.exe = replay->judge.empty() ? b.exe : replay->judge, rb.runner = replay->runner;
  if (replay && replay->seed) s.env.push_back("CONVLAB_SEED=" + std::to_string(*replay->seed));
  std::string filter;
  std::vector<std::string> tests;
  for (const auto& g : graders) {
    filter += (filter.empty() ? "" : ":") + b.spec.lab + "." + g.id + ".*";
    tests.insert(tests.end(), g.tests.begin(), g.tests.end());
  }
  s.argv = {rb.exe, "--gtest_filter=" + filter, "--convlab-impl=student"};
  add_runner_args(s.argv, rb);
  s.harness.push_back(rb.exe);
  s.harness.push_back(rb.runner);
  // The time limits of a process per grader, added up: each test its own (idle), the whole its
  // tests' worth and one slack.
  s.limits.idle_timeout_s = per_test;
  s.limits.timeout_s = per_test * tests.size() + 30;
  s.limits.cpu_s = static_cast<long>(per_test * tests.size() + 60);
  // Each grader may print what a process of its own could (its tests' share of the output).
  constexpr std::size_t kRunLine = 13;  // "[ RUN      ] "
  if (graders.size() > 1)
    s.output_share = [&](const std::string& line) {
      const GraderSpec* g = line.size() > kRunLine ? b.spec.grader_for_test(trim(line.substr(kRunLine))) : nullptr;
      return g ? g->id : std::string();
    };
  // Each test's wall time, from its progress line to the next (split_seconds()).
  GradersProcess p;
  std::string current;
  double since = 0;
  s.on_line = [&](const std::string& line) {
    if (!starts_with(line, "[ RUN      ] ")) return;
    const double now = now_s();
    if (!current.empty()) p.test_seconds[current] += now - since;
    current = trim(line.substr(kRunLine));
    since = now;
  };
  p.result = run_sandboxed(s);
  if (!current.empty()) p.test_seconds[current] += now_s() - since;
  p.results = results;
  const std::string where = gpu == GpuAssigned::kNoGpu ? std::string("no GPU") : "GPU " + gpu;
  log_->raw("---- " + job.sub.student + " " + b.spec.lab + " " + what + " on " + where + (again ? " (again)" : "") + ": " +
            p.result.describe() + "\n" + p.result.output + "\n");
  p.records = read_records(results, tests, record_key_);
  return p;
}

GraderRun Grader::run_grader(const Job& job, const BuiltLab& b, const GraderSpec& g, const std::vector<std::string>& tests,
                             const std::string& gpu, const Replay* replay) {
  const std::string results = job.dir + "/" + b.spec.lab + "/results/" + g.id + (replay ? "." + replay->tag : "");
  const std::vector<BatchGrader> one = {{g.id, g.kind, tests}};
  GradersProcess p = graders_process(job, b, one, gpu, results, replay, g.id, false);
  double seconds = p.result.wall_s;
  std::string infrastructure;
  // Processes left behind that are all the harness's own: its fault, not the submission's. Run the
  // grader once more; if that happens again, its tests' verdicts stand (the judge signed them) and
  // the grade is flagged as an infrastructure error, for a regrade.
  if (harness_leftovers_only(p.result)) {
    log_->line(job.sub.student + " " + b.spec.lab + " " + g.id + ": the harness left " +
                   std::to_string(p.result.leftover) + " of its own process(es) behind; running the grader again",
               false);
    p = graders_process(job, b, one, gpu, results, replay, g.id, true);
    seconds += p.result.wall_s;
    if (harness_leftovers_only(p.result))
      infrastructure = "the grading harness left " + std::to_string(p.result.leftover) +
                       " of its own process(es) running, twice (not your submission's fault): flagged for a regrade";
  }
  GraderRun run = grader_run(p.result, tests, p.records);
  run.seconds = seconds;
  run.infrastructure = infrastructure;
  if (!replay) keep_error_maps(results, opt_.out + "/feedback", job.sub.student, run.tests);
  if (replay) run.note = replay->note;
  return run;
}

// Graders in as few processes as may be (batch.hpp): all in one, a grader charged for its own
// test's fault only, the graders not yet run going on in a fresh process (results/batchN).
std::map<std::string, BatchRun> Grader::run_graders(const Job& job, const BuiltLab& b, const std::vector<BatchGrader>& graders,
                                                    const std::string& gpu, int* batches) {
  BatchSteps steps;
  steps.run = [&](const std::vector<BatchGrader>& some, int) {
    std::string what;
    std::size_t n = 0;
    for (const auto& g : some) what += (what.empty() ? "" : ", ") + g.id, n += g.tests.size();
    const std::string results = job.dir + "/" + b.spec.lab + "/results/batch" + std::to_string(++*batches);
    return graders_process(job, b, some, gpu, results, nullptr,
                           what + " (" + std::to_string(some.size()) + " graders, " + std::to_string(n) + " tests, one process)",
                           false);
  };
  steps.alone = [&](const BatchGrader& g) { return run_grader(job, b, b.spec.grader(g.id), g.tests, gpu); };
  steps.log = [&](const std::string& text) { log_->line(job.sub.student + " " + b.spec.lab + ": " + text, false); };
  std::map<std::string, BatchRun> runs = run_batch(graders, steps);
  for (auto& [id, r] : runs)
    if (!r.results.empty()) keep_error_maps(r.results, opt_.out + "/feedback", job.sub.student, r.run.tests);
  return runs;
}

std::string Grader::run_sanitizer(const Job& job, const BuiltLab& b, const GraderSpec& g, const std::string& tool,
                                  const std::string& gpu, int ntests, std::string* note) {
  const std::string results = job.dir + "/" + b.spec.lab + "/results/sanitize-" + tool + "-" + g.id;
  prepare_dir(results);
  RunSpec s = graders_spec(job, b, gpu, results);
  std::string filter = b.spec.lab + "." + g.id + ".*";
  if (!opt_.sanitize_exclude.empty()) filter += "-" + opt_.sanitize_exclude;
  s.argv = {which("compute-sanitizer"), "--tool", tool, "--target-processes", "all", "--error-exitcode", "86", "--print-limit", "20",
            b.exe, "--gtest_filter=" + filter, "--convlab-impl=student"};
  add_runner_args(s.argv, b);
  const double per_test = opt_.test_timeout > 0 ? std::min<double>(opt_.test_timeout, b.spec.test_timeout_s)
                                                : b.spec.test_timeout_s;
  s.limits.idle_timeout_s = per_test * 5;
  s.limits.timeout_s = per_test * ntests * 5 + 60;
  const RunResult r = run_sandboxed(s);
  log_->raw("---- " + job.sub.student + " " + b.spec.lab + " " + g.id + " compute-sanitizer " + tool + ": " +
            r.describe() + "\n" + r.output + "\n");
  if (r.exit_code == 86 || r.signal) {
    std::istringstream in(r.output);
    std::string line, found;
    int n = 0;
    while (std::getline(in, line) && n < 12)
      if (starts_with(line, "=========") && line.find("COMPUTE-SANITIZER") == std::string::npos) {
        found += line + "\n";
        ++n;
      }
    return "compute-sanitizer " + tool + ": " + (found.empty() ? r.describe() : found);
  }
  if (!r.ok()) *note += (note->empty() ? "" : "; ") + ("compute-sanitizer " + tool + " " + r.describe() + "; not counted");
  return "";
}

LabResult Grader::run_lab(const Job& job, const BuiltLab& b, const std::string& gpu) {
  const std::string scratch = job.dir + "/" + b.spec.lab;
  for (const char* d : {"run", "home", "tmp"}) prepare_dir(scratch + "/" + d);
  const double t0 = now_s();
  std::map<std::string, GraderRun> runs = unreachable(b.spec);
  // The tests, as the graders list them.
  RunSpec list = graders_spec(job, b, gpu, scratch + "/tmp");
  list.argv = {b.exe, "--gtest_list_tests"};
  list.limits.timeout_s = 60;
  list.limits.output_kill_bytes = 1 << 20;
  const RunResult lr = run_sandboxed(list);
  std::map<std::string, double> phase;  // LabResult::phase_s
  phase["list"] = now_s() - t0;
  std::map<std::string, std::vector<std::string>> tests;
  std::string suite;
  std::istringstream in(lr.output);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || starts_with(line, "convlab:")) continue;
    if (line[0] != ' ') suite = trim(line);
    else if (const GraderSpec* g = b.spec.grader_for_test(suite + trim(line).substr(0, trim(line).find(' '))))
      tests[g->id].push_back(suite + trim(line).substr(0, trim(line).find(' ')));
  }
  if (!lr.ok()) {
    for (const auto& g : b.spec.graders)
      runs[g.id].not_run = "the graders process could not start (" + lr.describe() + "): " + trim(head_lines(lr.output, 3));
    LabResult res = score_lab(b.spec, runs);
    res.run_s = now_s() - t0;
    return res;
  }
  // The correctness and technique graders first, in one process (batch.hpp): they gate speed.
  int batches = 0;
  std::vector<BatchGrader> checks;
  for (const auto& g : b.spec.graders)
    if (g.kind != "speedup") checks.push_back({g.id, g.kind, tests[g.id]});
  double t = now_s();
  std::map<std::string, BatchRun> checked = run_graders(job, b, checks, gpu, &batches);
  add_phase_seconds(phase, checks, checked, now_s() - t);
  bool gpu_present = false;
  for (const auto& g : b.spec.graders) {
    if (g.kind == "speedup") continue;
    GraderRun run = std::move(checked.at(g.id).run);
    t = now_s();
    if (rechecker_->wanted(g, run, b.slot_src))  // the kernel's fault, or the compiler's? (recheck.hpp)
      run.recheck = rechecker_->recheck(gpu, *b.lab, b.spec, job.sub.files.at(b.spec.lab), b.runner, job.dir + "/" + b.spec.lab,
                                        g, run, [&](const Replay& r) { return run_grader(job, b, g, tests[g.id], gpu, &r); });
    phase["recheck"] += now_s() - t;
    t = now_s();
    for (const auto& t : run.tests) gpu_present = gpu_present || (t.recorded && !t.skipped);
    const bool passed = !run.tests.empty() && run.problem.empty() &&
                        std::all_of(run.tests.begin(), run.tests.end(), [](const TestOutcome& t) { return t.passed; });
    if (passed && gpu_present)
      for (const auto& tool : opt_.sanitize) {
        run.sanitizer = run_sanitizer(job, b, g, tool, gpu, static_cast<int>(run.tests.size()), &run.note);
        if (!run.sanitizer.empty()) break;
      }
    phase["sanitizer"] += now_s() - t;
    runs[g.id] = std::move(run);
  }
  // Then the speed graders whose gates passed, in one process; one timed with a rebuilt runner
  // (a gate passed only with less optimisation, speed_replay()) in a process of its own.
  std::vector<BatchGrader> timed;
  for (const auto& g : b.spec.graders) {
    if (g.kind != "speedup" || runs[g.id].needs_gpu) continue;
    std::string failed_gate;
    for (const auto& id : g.gated_by) {
      const auto gate = runs.find(id);
      const bool ok = gate != runs.end() && gate->second.sanitizer.empty() && !gate->second.tests.empty() &&
                      (credited_by_recheck(gate->second) ||  // passed with less optimisation (recheck.hpp)
                       (gate->second.problem.empty() &&
                        std::all_of(gate->second.tests.begin(), gate->second.tests.end(),
                                    [](const TestOutcome& t) { return t.passed; })));
      if (!ok && failed_gate.empty()) failed_gate = id;
    }
    if (!failed_gate.empty()) {
      GraderRun skip;
      for (const auto& name : tests[g.id]) {
        TestOutcome t;
        t.name = name;
        skip.tests.push_back(t);
      }
      skip.not_run = failed_gate + " did not pass, so speed is not measured (" +
                     (failed_gate.rfind("technique", 0) == 0 ? "the technique" : "correctness") + " gates speed)";
      runs[g.id] = std::move(skip);
      continue;
    }
    if (const std::optional<Replay> lowered = speed_replay(g, runs)) {
      t = now_s();
      runs[g.id] = run_grader(job, b, g, tests[g.id], gpu, &*lowered);
      phase["speed"] += now_s() - t;
    } else {
      timed.push_back({g.id, g.kind, tests[g.id]});
    }
  }
  if (!timed.empty()) {
    t = now_s();
    for (auto& [id, r] : run_graders(job, b, timed, gpu, &batches)) runs[id] = std::move(r.run);
    phase["speed"] += now_s() - t;
  }
  LabResult res = score_lab(b.spec, runs);
  res.run_s = now_s() - t0;
  res.phase_s = std::move(phase);
  return res;
}

void Grader::finish(Job& job, StudentResult result, const GpuAssigned* gpu) {
  // Its own time: building and running, not the wait for a free GPU.
  result.seconds = 0;
  for (const auto& l : result.labs) result.seconds += l.build_s + l.run_s;
  // What a student reads names no folder of this machine (the course first: its files keep their
  // place), nor where the submissions lie (tar names the archive in its complaints).
  std::error_code ec;
  const std::string from = fs::absolute(result.origin, ec).lexically_normal().parent_path().string();
  strip_machine_paths(result, {project_.root, opt_.out, work_, slots_base_, from});
  write_file_atomic(opt_.out + "/state/" + result.student + ".json", to_json(result));
  write_file_atomic(opt_.out + "/feedback/" + result.student + ".md", feedback_markdown(result, opt_.preset));
  write_file_atomic(opt_.out + "/results/" + result.student + ".json", gradescope_json(result, opt_.preset));
  std::string line = "[" + std::to_string(++done_) + "/" + std::to_string(total_) + "] " + result.student + ": " +
                     fmt_points(result.total()) + " / " + fmt_points(result.max_total());
  const auto short_text = [](const std::string& s) {
    const std::string first = s.substr(0, s.find('\n'));
    return first.size() > 110 ? first.substr(0, 107) + "..." : first;
  };
  for (const auto& l : result.labs) {
    line += "  " + l.lab + " " + fmt_points(l.score) + " (build " + fmt_seconds(l.build_s) + ", run " +
            fmt_seconds(l.run_s) + ")";
    if (!l.failure.empty() && result.failure.empty()) line += " — " + short_text(l.failure);
  }
  if (!result.failure.empty()) line += " — " + short_text(result.failure);
  log_->line(line + "; " + fmt_seconds(result.seconds) + " in all" + (gpu ? ", on " + gpu->short_label() : ""));
  std::lock_guard<std::mutex> l(mu_);
  if (gpu) graded_on_[gpu->entry].push_back(result.student);
  for (const auto& l : result.labs) {
    if (l.phase_s.empty() && l.build_s == 0) continue;  // not built: nothing of it ran
    auto& p = phase_totals_[l.lab];
    p["build"] += l.build_s;
    double phases = 0;
    for (const auto& [name, s] : l.phase_s) p[name] += s, phases += s;
    p["other"] += std::max(0.0, l.run_s - phases);
    p["graded"] += 1;
  }
  results_[job.index] = std::move(result);
}

void Grader::run_worker(const GpuAssigned& gpu) {
  while (auto job = run_q_.pop()) {
    if (g_interrupted) continue;
    StudentResult result;
    result.student = job->sub.student;
    result.origin = job->sub.origin;
    result.kind = job->sub.kind;
    result.fingerprint = job->fingerprint;
    result.notes = job->sub.notes;
    identify(result, job->index);
    try {
      for (const auto& b : job->labs) {
        LabResult lab;
        if (!b.failure.empty() || b.exe.empty()) {
          lab = score_lab(b.spec, unreachable(b.spec), b.failure);
        } else {
          lab = run_lab(*job, b, gpu.entry);
          // Did it write where it must not? The tree it was built from, and ours.
          std::vector<std::string> changed;
          std::lock_guard<std::mutex> l(integrity_mu_);
          if (hash_files(b.slot_src, integrity_files_) != slot_hash_) changed.push_back("the grading tree");
          if (hash_files(project_.root, root_files_) != root_hash_) changed.push_back("the course tree " + project_.root);
          if (!changed.empty()) {
            LabResult bad = score_lab(b.spec, unreachable(b.spec), "files outside the submission's folder changed while its graders ran (" +
                                                      changed.front() + "): modifying the graders is not allowed");
            bad.run_s = lab.run_s;
            lab = bad;
            root_hash_ = hash_files(project_.root, root_files_);
          }
        }
        lab.submitted = b.submitted;
        lab.details = b.details;
        lab.notes = b.notes;
        lab.build_s = b.build_s;
        result.labs.push_back(std::move(lab));
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> l(mu_);
      if (!fatal_) fatal_message_ = e.what();
      fatal_ = true;
      cancel_all_runs();
      continue;
    }
    if (g_interrupted) continue;  // graded again on resume
    finish(*job, std::move(result), &gpu);
  }
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

int Grader::run() {
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
  resolve_labs();
  {
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

  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
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

}  // namespace

int grade_main(const Project& project, const GradeOptions& options) {
  Grader g(project, options);
  return g.run();
}

}  // namespace convlab::cli
