/// @file slurm_internal.hpp
/// @brief What the files of `convlab grade --slurm` share: the run's record (OUT/slurm/manifest.json)
/// and what Slurm and the task folders say of it. slurm.cpp: the decisions (unit-tested) and the
/// options; slurm_scripts.cpp: the manifest and the sbatch scripts; slurm_status.cpp: the tasks'
/// states; slurm_submit.cpp: submitting and resuming; slurm_jobs.cpp: what the scripts run (the
/// array task, the collector). Private to grader/cli/grading/; slurm.hpp is the interface.
#pragma once

#include "grading/slurm.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace convlab::cli {

namespace slurm {

// Whether `s` is a non-empty run of digits (slurm.cpp; sbatch's job ids, array indices).
bool all_digits(const std::string& s);

}  // namespace slurm

namespace slurm_internal {

using nlohmann::json;
using slurm::JobState;
using slurm::Share;

const char* const kGroup = "Slurm";
// The GPU the specs' shipped speed thresholds were calibrated on (docs/grading.md,
// "Calibration"); a --calibration file names its own.
const char* const kShippedThresholdsGpu = "NVIDIA H100 80GB HBM3";
constexpr int kDefaultPerTask = 10;
constexpr int kDefaultCpus = 4;
// Merging reads a few JSON files per student: minutes even for a large class.
const char* const kCollectorTime = "0:20:00";

// ---- the run's record: OUT/slurm/manifest.json (slurm_scripts.cpp) ---------------------------

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

std::string manifest_path(const std::string& out);
void save(const Manifest& m);
Manifest load_manifest(const std::string& out);
std::string task_dir(const Manifest& m, int k);
std::string intake_list_path(const Manifest& m, int k);
std::string task_work_dir(const Manifest& m, int k);

// ---- the sbatch scripts (slurm_scripts.cpp) ------------------------------------------------

std::string array_ranges(std::vector<int> k);
std::string task_script(const Manifest& m, const std::vector<int>& tasks, int round);
std::string collect_script(const Manifest& m, const std::string& dependency, int round);

// ---- what Slurm and the task folders say (slurm_status.cpp) --------------------------------

struct Accounting {
  std::map<int, JobState> states;  // array index -> its latest job's state
  std::string source;              // "sacct", "squeue" or why there is none
};

Accounting query_states(const Manifest& m);
json read_task_record(const Manifest& m, int k);
bool has_result(const Manifest& m, int k, const std::string& student);

struct TaskStatus {
  int index = 0;
  std::string verdict;       // done, active, failed, not submitted
  std::string why;           // for people
  std::size_t graded = 0, total = 0;
  std::optional<JobState> slurm;
  std::string log;           // Slurm's output file of its latest job
};

std::vector<TaskStatus> task_statuses(const Manifest& m, const Accounting& acc);
std::string status_table(const std::vector<TaskStatus>& tasks, const std::string& source);

// ---- submitting (slurm_submit.cpp) ---------------------------------------------------------

std::vector<std::string> task_command(const Manifest& m, int k, const std::string& gpu);

}  // namespace slurm_internal

}  // namespace convlab::cli
