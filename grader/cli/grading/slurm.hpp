/// @file slurm.hpp
/// @brief `convlab grade --slurm`: a class graded on a Slurm cluster as a job
/// array, one GPU per array task, each task running today's `convlab grade` on
/// its share of the submissions; then a collector job merges the tasks' outputs.
///
/// The run lives in the output folder OUT (on a file system the nodes share):
///
///     OUT/slurm/manifest.json     array index -> submissions, the grading options, the jobs submitted
///     OUT/slurm/intake/           the submissions taken in as a local grade takes them (a bulk download
///                                 unpacked, a roster read): task-K.json, array task K's intake list
///     OUT/slurm/round-N/*.sh      the sbatch scripts of each submission round (N = 1, then one per --resume)
///     OUT/slurm/logs/             Slurm's output of each task and collector job
///     OUT/tasks/K/                array task K's `convlab grade --out` folder (state/ resumes it),
///                                 and slurm.json: its job, node, GPU and exit status
///     OUT/gradebook.csv, feedback/, results/, grade.log, hardware.json   merged by the collector
///
/// A task is *done* when its `convlab grade` exited 0 and every submission of its
/// share has a result. Anything else is an infrastructure failure, never a
/// student's (a submission that crashes, hangs or floods its output is scored
/// inside the task); Slurm's accounting (`sacct`, or `squeue` where there is no
/// accounting) says which: NODE_FAIL, TIMEOUT, PREEMPTED, OUT_OF_MEMORY,
/// CANCELLED, FAILED. `--resume` resubmits exactly the tasks that are not done
/// and not still pending or running; a resubmitted task keeps the submissions it
/// had finished. See docs/grading.md, section "Grading on a Slurm cluster".
#pragma once

#include "grading/grade.hpp"
#include "common/project.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace convlab::cli {

/// The Slurm options of `convlab grade` (group "Slurm").
struct SlurmOptions {
  bool enabled = false;                  ///< --slurm
  bool resume = false;                   ///< --resume: continue the run in --out
  bool dry_run = false;                  ///< --dry-run: print, submit nothing
  std::string partition;                 ///< --partition
  std::string account;                   ///< --account
  std::string gpu_type;                  ///< --gpu-type: --gres=gpu:TYPE:1
  std::string constraint;                ///< --constraint (node features)
  bool no_gpu = false;                   ///< --no-gpu: no --gres (CPU-only grading, as CI does)
  std::string time;                      ///< --time per task ("" = from the share's size)
  int per_task = 0;                      ///< --per-task: submissions per array task (0 = 10)
  int tasks_at_once = 0;                 ///< --tasks-at-once: the array's %N throttle (0 = none)
  int cpus_per_task = 0;                 ///< --cpus-per-task (0 = 4)
  std::vector<std::string> sbatch_args;  ///< --sbatch-arg: more sbatch options for every job
};

/// Adds --slurm and its options to the `grade` command, in the group "Slurm".
void add_slurm_options(CLI::App& grade, SlurmOptions& o);

/// `convlab grade ... --slurm`: writes OUT/slurm/manifest.json and the scripts
/// and submits the array and the collector (with --resume: resubmits what did
/// not finish; with --dry-run: prints them). `grade` is the parsed command, whose
/// grading options are forwarded to every task as they were given. Returns the
/// exit status; throws Error on bad input.
int slurm_grade_main(const Project& p, const GradeOptions& go, const SlurmOptions& so, const CLI::App& grade);

/// Throws Error if an option of the group "Slurm" was given without --slurm.
void refuse_slurm_options(const CLI::App& grade);

/// The hidden commands the sbatch scripts run.
struct SlurmCommands {
  CLI::App* task = nullptr;     ///< `convlab slurm-task OUT [--task K]`
  CLI::App* collect = nullptr;  ///< `convlab slurm-collect OUT`
  std::string out;              ///< OUT
  int task_index = -1;          ///< --task K (-1: $SLURM_ARRAY_TASK_ID)
};
/// Registers `slurm-task` and `slurm-collect` (hidden from --help).
void add_slurm_commands(CLI::App& app, SlurmCommands& c);

/// `convlab slurm-task OUT`: grades array task K's share with `convlab grade`
/// into OUT/tasks/K and records the job, node, GPU and exit status in
/// OUT/tasks/K/slurm.json. Outside Slurm, `--task K` runs one share by hand.
int slurm_task_main(const Project& p, const std::string& out, int task);

/// `convlab slurm-collect OUT`: merges the tasks' results into OUT's gradebook.csv
/// (only when every submission has one), feedback/, results/, grade.log and
/// hardware.json. Returns 0, or 1 when a task did not finish or --expect differs.
int slurm_collect_main(const Project& p, const std::string& out);

/// The parts of the Slurm layer that decide something, for the unit tests.
namespace slurm {

/// One array task's share of the submissions.
struct Share {
  int index = 0;                          ///< the array index
  std::vector<std::string> submissions;   ///< as given, in the order given
  std::vector<std::string> students;      ///< the names they are graded under
};

/// The names `convlab grade` gives submissions whose own names are `names` (the intake's: a file
/// or folder name, or a roster id): the first keeps its name, repeats get -2, -3, ..., in order.
std::vector<std::string> unique_names(const std::vector<std::string>& names);

/// The names `convlab grade` gives `submissions`, one student's each (student_name(), with -2,
/// -3, ... for repeats, in order).
std::vector<std::string> student_names(const std::vector<std::string>& submissions);

/// Splits `submissions` into shares of about `per_task`, keeping the order. Names
/// that could collide (alice, alice, alice-2) stay in one share, so that each task
/// names its submissions exactly as one local `convlab grade` of all of them would.
/// `base_names` are the submissions' own names (the intake's); without, student_name()'s.
std::vector<Share> split_shares(const std::vector<std::string>& submissions, const std::vector<std::string>& base_names,
                                int per_task);
std::vector<Share> split_shares(const std::vector<std::string>& submissions, int per_task);

/// The options of `grade` as they were given, as words ("--labs", "lab01"), leaving
/// out positionals and the options whose long name is in `skip` or in the group "Slurm".
std::vector<std::string> given_options(const CLI::App& grade, const std::set<std::string>& skip);

/// What Slurm says about one array task.
struct JobState {
  std::string job;        ///< "123_4"
  std::string state;      ///< "COMPLETED", "CANCELLED by 0", "TIMEOUT", ...
  std::string exit_code;  ///< "0:0" (sacct) or "" (squeue)
  std::string node;       ///< "gpu17"
  std::string elapsed;    ///< "00:12:31"
};

/// Parses `sacct -X -P -n --format=JobID,State,ExitCode,NodeList,Elapsed` or
/// `squeue -h -r -o %i|%T||%N|%M` output into array index -> state, for the
/// array job `array_job` (pending ranges such as `123_[4-6%2]` are expanded).
std::map<int, JobState> parse_job_states(const std::string& text, const std::string& array_job);

/// Whether a Slurm job state is not final (PENDING, RUNNING, REQUEUED, ...).
bool is_active(const std::string& state);

/// The GPU model from a device description: "NVIDIA H100 80GB HBM3 (sm_90, ...)"
/// -> "NVIDIA H100 80GB HBM3".
std::string gpu_model(const std::string& description);

/// The note a student graded on `graded_on` gets when the speed thresholds were
/// calibrated on another model `calibrated_on` ("" when they agree, or when no
/// GPU ran: then no speed was measured).
std::string calibration_note(const std::string& graded_on, const std::string& calibrated_on);

/// The default --time of a task: 20 minutes to set up its build slot, plus 3
/// minutes per submission and lab (lab 01 grades in about 20 s and the others in
/// 20 to 65 s on an H100). Slurm's format, "H:MM:00".
std::string default_time(std::size_t submissions, std::size_t labs);

/// `s` in single quotes for a shell script.
std::string shell_quote(const std::string& s);
/// The preset the tasks graded with, from the options forwarded to them ("--preset=cpu"; "default"
/// when none was given): the collector's feedback names the student's build folder by it.
std::string preset_of(const std::vector<std::string>& grade_options);

}  // namespace slurm

}  // namespace convlab::cli
