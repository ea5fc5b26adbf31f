/// @file grade_internal.hpp
/// @brief What the files of `convlab grade` share (grade.cpp, grade_build.cpp, grade_run.cpp):
/// the Grader and the jobs it passes between its build and GPU workers. Private to grader/cli/grading/.
#pragma once

#include "grading/grade.hpp"

#include "grading/batch.hpp"
#include "grading/gpus.hpp"
#include "grading/intake.hpp"
#include "grading/recheck.hpp"
#include "grading/reports.hpp"
#include "common/sandbox.hpp"
#include "grading/scoring.hpp"
#include "grading/submission.hpp"
#include "common/util.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace convlab::cli::grade_internal {

using nlohmann::json;

// Set by SIGINT and SIGTERM during a run (grade.cpp): the workers stop taking jobs.
extern std::atomic<bool> g_interrupted;

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

struct LabRun;  // what the steps of Grader::run_lab() share (grade_run.cpp)

class Grader {
public:
  Grader(const Project& p, GradeOptions o) : project_(p), opt_(std::move(o)) {}
  int run();

private:
  // setup: run()'s steps, in order, then what they call
  void check_options();
  void prepare_folders();
  void take_in_submissions();
  void announce_run();
  std::uint64_t hash_course();
  void queue_submissions(std::uint64_t settings);
  void grade_queued();
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
  std::vector<std::string> overlay_files(const Lab& lab, const std::map<std::string, std::string>& files,
                                         const std::string& src, BuiltLab& b) const;
  void copy_out(const Job& job, const Lab& lab, const std::string& build, BuiltLab& b);
  std::string check_dependencies(const std::string& build, const std::vector<std::string>& sources, const std::string& slot);
  std::string check_symbols(const Lab& lab, const std::string& build, const std::string& exe, bool link_stage);
  // running
  void run_worker(const GpuAssigned& gpu);
  LabResult run_lab(const Job& job, const BuiltLab& b, const std::string& gpu);
  RunResult list_tests(LabRun& s, const std::string& scratch, double t0);
  void run_checks(LabRun& s);
  void run_speed(LabRun& s);
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

}  // namespace convlab::cli::grade_internal
