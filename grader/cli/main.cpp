// The convlab command: a student's progress and feedback, an instructor's
// batch grading, calibration and release. `convlab --help` lists the commands.
#include "admin/admin.hpp"
#include "grading/doctor.hpp"
#include "grading/gpus.hpp"
#include "grading/grade.hpp"
#include "common/hardware.hpp"
#include "common/project.hpp"
#include "admin/release.hpp"
#include "common/sandbox.hpp"
#include "grading/slurm.hpp"
#include "student/student.hpp"
#include "common/util.hpp"

#include <CLI/CLI.hpp>

#include <cstring>
#include <iostream>

namespace convlab::cli {
namespace {

// The student's commands (status, check, bench, watch, plot) and the hidden steps of a student's
// ctest run: their options, and the subcommands to ask which was given.
struct StudentCommands {
  StudentBuild sb;
  std::string lab, only, plot, plot_json, run_build;
  bool traffic = false;
  int cycles = 0;
  CLI::App *status = nullptr, *check = nullptr, *bench = nullptr, *watch = nullptr, *plot_cmd = nullptr,
           *run_start = nullptr, *run_end = nullptr, *next_step = nullptr;
};

// Registers them on app, in the order --help lists them.
void add_student_commands(CLI::App& app, StudentCommands& s) {
  const auto student_opts = [&](CLI::App* c) {
    c->add_option("--preset", s.sb.preset,
                  "CMake configure preset of your build (default: the one you built last, default or cpu)");
    c->add_option("--build-dir", s.sb.dir, "build folder (default: build/PRESET)");
  };
  s.status = app.add_subcommand("status", "every lab: graders passed, speed reached, what to do next");
  student_opts(s.status);
  s.check = app.add_subcommand("check", "build and run a lab's graders; explain each failure");
  s.check->add_option("LAB", s.lab, "lab01, 01 or 01-conv-basic")->required();
  s.check->add_option("--only", s.only, "one kernel of the lab: conv1d, conv2d_tiled_in, ...");
  student_opts(s.check);
  s.bench = app.add_subcommand("bench", "a lab's benchmark: your kernels, the baseline, the GPU's limits");
  s.bench->add_option("LAB", s.lab, "the lab")->required();
  s.bench->add_option("--plot", s.plot, "also draw the run's roofline chart into this SVG file");
  s.bench->add_flag("--traffic", s.traffic,
                    "instead, each kernel's loads per output (global, shared) and DRAM bytes, read from Nsight Compute");
  student_opts(s.bench);
  s.watch = app.add_subcommand("watch", "check a lab again whenever one of its files changes");
  s.watch->add_option("LAB", s.lab, "the lab")->required();
  s.watch->add_option("--cycles", s.cycles, "stop after this many checks (0: never)");
  s.watch->add_option("--only", s.only, "one kernel of the lab");
  student_opts(s.watch);
  s.plot_cmd = app.add_subcommand("plot", "the roofline chart (SVG) of a saved benchmark run (<lab>_bench --json)");
  s.plot_cmd->add_option("BENCH_JSON", s.plot_json, "the benchmark's JSON")->required()->check(CLI::ExistingFile);
  s.plot_cmd->add_option("--out", s.plot, "the SVG file to write")->required();
  // The steps that open and close a student's ctest run (convlab.run_start, convlab.run_end), and
  // the summary after it (CTEST_CUSTOM_POST_TEST).
  s.run_start = app.add_subcommand("__run-start", "")->group("");
  s.run_start->add_option("--build-dir", s.run_build)->required();
  s.run_end = app.add_subcommand("__run-end", "")->group("");
  s.run_end->add_option("--build-dir", s.run_build)->required();
  s.next_step = app.add_subcommand("__next-step", "")->group("");
  s.next_step->add_option("--build-dir", s.run_build)->required();
}

// The instructor's grade command, its Slurm options, and the hidden commands its sbatch scripts run.
struct GradeCommand {
  GradeOptions go;
  std::string gpus, labs, sanitize;
  SlurmOptions slurm;        // --slurm and its options (slurm.hpp)
  SlurmCommands slurm_cmds;  // hidden: what the sbatch scripts run
  CLI::App* grade = nullptr;
};

// Registers it on app: grade's options, the Slurm ones among them, and the hidden commands.
void add_grade_command(CLI::App& app, GradeCommand& g) {
  g.grade = app.add_subcommand(
      "grade", "grade submissions (folders, .zip archives, tarballs, git repositories, LMS bulk downloads) into --out DIR");
  // Not required by the parser: `--slurm --resume` takes them from its manifest (grade_main refuses none).
  g.grade->add_option("SUBMISSION", g.go.submissions, "submissions");
  g.grade->add_option("--out", g.go.out, "output folder: gradebook.csv, feedback/, results/, grade.log, hardware.json")
      ->required();
  g.grade->add_option("--labs", g.labs, "labs to grade, comma-separated (default: all)");
  g.grade->add_option("--roster", g.go.roster,
                      "class list (CSV: id,name,email) that maps submissions to students and names the gradebook's rows");
  g.grade->add_option("--preset", g.go.preset, "CMake configure preset the graders are built with")->capture_default_str();
  g.grade->add_option("--cuda-arch", g.go.cuda_arch, "CMAKE_CUDA_ARCHITECTURES for the build (e.g. 90)");
  g.grade->add_option("-D", g.go.cmake_args, "more CMake cache settings, as -D NAME=VALUE");
  g.grade->add_option("--jobs,-j", g.go.jobs, "parallel builds (default: half the cores, at most 4)");
  g.grade->add_option("--gpus", g.gpus,
                      "GPUs to grade on, one submission per GPU at a time: indices as nvidia-smi numbers them, or UUIDs "
                      "(default: 0, or the first GPU of CUDA_VISIBLE_DEVICES)");
  g.grade->add_option("--test-timeout", g.go.test_timeout, "cap on the spec's time limit per test, seconds");
  g.grade->add_option("--compile-timeout", g.go.compile_timeout, "cap on the spec's compile time limit, seconds");
  g.grade->add_option("--calibration", g.go.calibration, "speed thresholds from `convlab calibrate`")->check(CLI::ExistingFile);
  g.grade->add_option("--sanitize", g.sanitize, "compute-sanitizer tools run on the correctness graders (memcheck,racecheck)");
  g.grade->add_option("--sanitize-exclude", g.go.sanitize_exclude, "gtest patterns left out of sanitizer runs (a:b)");
  g.grade->add_option("--sandbox-user", g.go.sandbox_user, "run graders as this user when root (auto: nobody; none)")
      ->capture_default_str();
  g.grade->add_option("--runner-sandbox", g.go.runner_sandbox,
                      "start each runner (the process with the submission's kernels) in bubblewrap: auto (where it works) or none")
      ->check(CLI::IsMember({"auto", "none"}))
      ->capture_default_str();
  g.grade->add_option("--output-limit", g.go.output_limit, "bytes a graders process may print")->capture_default_str();
  g.grade->add_option("--work-dir", g.go.work, "scratch folder (default: OUT/work)");
  g.grade->add_option("--slots-dir", g.go.slots,
                      "where the build slots (the harness built once, each submission compiled into it) live "
                      "(default: $CONVLAB_SLOTS_DIR, else WORK/slots); give the same folder to later runs and they rebuild "
                      "only what changed");
  g.grade->add_option("--expect", g.go.expect, "expected scores (JSON); exit 1 on a difference");
  g.grade->add_flag("--force", g.go.force, "grade again what an earlier run already graded");
  add_slurm_options(*g.grade, g.slurm);
  add_slurm_commands(app, g.slurm_cmds);
  g.grade->add_option("--compiler-bug-policy", g.go.compiler_bug_policy,
                      "a correctness grader that passes only with less device optimisation (a compiler bug) earns: "
                      "full, review (full, flagged) or as-is (default: the spec's compiler_bug_policy, else review)")
      ->check(CLI::IsMember({"full", "review", "as-is"}));
  g.grade->add_flag("--recheck-cpu", g.go.recheck_cpu,
                    "a grader looked at again for a compiler bug also shows the CPU backend's verdict (builds it once)");
}

// Runs convlab grade as given: through Slurm (--slurm), or here.
int run_grade(const Project& project, GradeCommand& g) {
  for (auto& a : g.go.cmake_args)
    if (!starts_with(a, "-D")) a = "-D" + a;
  g.go.labs = split(g.labs, ',');
  g.go.sanitize = split(g.sanitize, ',');
  if (g.slurm.enabled) return slurm_grade_main(project, g.go, g.slurm, *g.grade);
  refuse_slurm_options(*g.grade);
  if (g.grade->get_option("--gpus")->count() > 0) g.go.gpus = parse_gpu_list(g.gpus);  // exit 2 on a bad entry
  return grade_main(project, g.go);
}

// Course administration: calibrate, release, hardware, doctor, labs.
struct AdminCommands {
  CalibrateOptions co;
  std::string cal_labs;
  ReleaseOptions ro;
  bool as_json = false;
  DoctorOptions doc;
  CLI::App *calibrate = nullptr, *release = nullptr, *hardware = nullptr, *doctor = nullptr, *labs_cmd = nullptr;
};

// Registers them on app, in the order --help lists them.
void add_admin_commands(CLI::App& app, AdminCommands& a) {
  a.calibrate = app.add_subcommand("calibrate", "time the reference on this GPU and write speed thresholds");
  a.calibrate->add_option("--out", a.co.out, "the calibration file")->required();
  a.calibrate->add_option("--fraction", a.co.fraction, "thresholds = this fraction of the reference's speed-up")
      ->capture_default_str();
  a.calibrate->add_option("--preset", a.co.preset, "configure preset of the reference build")->capture_default_str();
  a.calibrate->add_option("--build-dir", a.co.build_dir, "build folder (default: build/calibrate)");
  a.calibrate->add_option("--cuda-arch", a.co.cuda_arch, "CMAKE_CUDA_ARCHITECTURES");
  a.calibrate->add_option("--labs", a.cal_labs, "labs, comma-separated (default: all)");

  a.release = app.add_subcommand(
      "release", "write the student copy: no reference/, baselines and cuDNN anchor compiled only, no instructor-only files");
  a.release->add_option("--out", a.ro.out, "the tarball to write (.tar.gz)")->required();
  a.release->add_option("--prefix", a.ro.prefix, "the folder inside the tarball")->capture_default_str();
  a.release->add_flag("--allow-dirty", a.ro.allow_dirty, "pack uncommitted edits of tracked files (refused without it)");
  a.release->add_option("--build-dir", a.ro.build_dir,
                        "where the prebuilt libraries are compiled, kept for the next release (default: build/release)");

  a.hardware = app.add_subcommand("hardware", "the GPU here: name, driver, clocks, measured copy bandwidth");
  a.hardware->add_flag("--json", a.as_json, "as JSON");

  a.doctor = app.add_subcommand("doctor", "is this GPU's CUDA toolchain fit to grade? Runs the known miscompile cases");
  a.doctor->add_option("--json", a.doc.json_out, "also write the result as JSON to this file");
  a.doctor->add_option("--gpu", a.doc.gpu, "the GPU to check (CUDA_VISIBLE_DEVICES)");
  a.doctor->add_option("--cuda-arch", a.doc.cuda_arch, "compile for this architecture, e.g. 90 (default: the GPU's own)");
  a.doctor->add_option("--nvcc", a.doc.nvcc, "the CUDA compiler (default: $CUDACXX, nvcc on PATH)");
  a.doctor->add_option("--build-dir", a.doc.build_dir, "run the cases built in this CMake build instead of compiling them");
  a.doctor->add_option("--work", a.doc.work, "where compiled cases are kept");

  a.labs_cmd = app.add_subcommand("labs", "list the labs this tree holds");
}

}  // namespace
}  // namespace convlab::cli

int main(int argc, char** argv) {
  using namespace convlab::cli;
  if (argc >= 2 && std::strcmp(argv[1], "__supervise") == 0) return supervise_main(argc, argv);

  CLI::App app{"convlab: GPU convolution labs — check your kernels, see your progress; grade, calibrate, release"};
  app.require_subcommand(1);
  std::string root;
  app.add_option("--root", root, "the convlab tree (default: the one around the working folder)");
  StudentCommands s;
  add_student_commands(app, s);
  GradeCommand g;
  add_grade_command(app, g);
  AdminCommands a;
  add_admin_commands(app, a);

  CLI11_PARSE(app, argc, argv);
  try {
    if (a.hardware->parsed()) return hardware_main(a.as_json);
    if (s.plot_cmd->parsed()) return plot_main(s.plot_json, s.plot);
    const Project project = load_project(find_root(root));
    if (a.labs_cmd->parsed()) {
      for (const auto& l : project.labs)
        std::cout << l.spec.lab << "  " << l.spec.slug << "  " << l.spec.title << "  (" << l.spec.total_points()
                  << " points)\n";
      return 0;
    }
    if (a.doctor->parsed()) return doctor_main(project, a.doc);
    if (s.status->parsed()) return status_main(project, s.sb);
    if (s.check->parsed()) return check_main(project, s.sb, s.lab, s.only);
    if (s.bench->parsed()) return bench_main(project, s.sb, s.lab, s.plot, s.traffic);
    if (s.watch->parsed()) return watch_main(project, s.sb, s.lab, s.cycles, s.only);
    if (s.run_start->parsed()) return run_start_main(project, s.run_build);
    if (s.run_end->parsed()) return run_end_main(project, s.run_build);
    if (s.next_step->parsed()) return next_step_main(project, s.run_build);
    if (g.grade->parsed()) return run_grade(project, g);
    if (g.slurm_cmds.task->parsed()) return slurm_task_main(project, g.slurm_cmds.out, g.slurm_cmds.task_index);
    if (g.slurm_cmds.collect->parsed()) return slurm_collect_main(project, g.slurm_cmds.out);
    if (a.calibrate->parsed()) {
      a.co.labs = split(a.cal_labs, ',');
      return calibrate_main(project, a.co);
    }
    if (a.release->parsed()) return release_main(project, a.ro);
  } catch (const Error& e) {
    std::cerr << "convlab: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "convlab: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
