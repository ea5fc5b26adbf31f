/// @file student.hpp
/// @brief The students' commands: status, check, bench, watch, plot; and the two steps that
/// open and close a student's ctest run (run-start, next-step).
#pragma once

#include "common/project.hpp"

#include <string>

namespace convlab::cli {

/// Which build a student command uses. Both empty: the student preset built last (default
/// or cpu), or `default` when there is none yet (see choose_build()).
struct StudentBuild {
  std::string preset;  ///< CMake configure preset ("" = the one built last)
  std::string dir;     ///< build folder ("" = ROOT/build/PRESET)
};

/// `convlab status`: a table of every lab, the points reachable here, and the single next step. Always 0.
int status_main(const Project& p, const StudentBuild& b);
/// `convlab check LAB [--only KERNEL]`: builds and runs the lab's graders (one kernel's with
/// `only`), explains the failures smallest case first, ends with the lab's summary and the
/// next step. 0 if every test ran and passed.
int check_main(const Project& p, const StudentBuild& b, const std::string& lab, const std::string& only = "");
/// `convlab bench LAB [--plot FILE.svg]`: the lab's benchmark table, and its roofline chart.
/// On the CPU backend it says that benchmarks need a GPU (exit 1). Else the benchmark's status.
/// `traffic`: instead, each kernel's memory traffic per output from Nsight Compute (traffic.hpp).
int bench_main(const Project& p, const StudentBuild& b, const std::string& lab, const std::string& plot = "",
               bool traffic = false);
/// `convlab watch LAB`: check, then check again whenever a file of the lab changes
/// (`cycles` > 0 stops after that many checks).
int watch_main(const Project& p, const StudentBuild& b, const std::string& lab, int cycles,
               const std::string& only = "");
/// `convlab plot BENCH.json --out FILE.svg`: the roofline chart of a saved benchmark run.
int plot_main(const std::string& json_path, const std::string& out);
/// The first test of a student's ctest run (convlab.run_start): marks when the run started.
int run_start_main(const Project& p, const std::string& build_dir);
/// The last test of a student's ctest run (convlab.run_end): 1 when graders of this run were
/// skipped for want of a GPU (such a run never ends green), with the reason and the command
/// that works; else 0.
int run_end_main(const Project& p, const std::string& build_dir);
/// After a student's ctest run (CTEST_CUSTOM_POST_TEST): the labs' summary and the single next
/// step; marks the labs whose correctness graders all pass, so that the next run in lab order
/// checks the next lab. Always 0: the tests decide the run's verdict.
int next_step_main(const Project& p, const std::string& build_dir);

}  // namespace convlab::cli
