// The convlab command: a student's progress and feedback, an instructor's
// batch grading, calibration and release. `convlab --help` lists the commands.
#include "admin/admin.hpp"
#include "admin/doctor.hpp"
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

int main(int argc, char** argv) {
  using namespace convlab::cli;
  if (argc >= 2 && std::strcmp(argv[1], "__supervise") == 0) return supervise_main(argc, argv);

  CLI::App app{"convlab: GPU convolution labs — check your kernels, see your progress; grade, calibrate, release"};
  app.require_subcommand(1);
  std::string root;
  app.add_option("--root", root, "the convlab tree (default: the one around the working folder)");

  StudentBuild sb;
  const auto student_opts = [&](CLI::App* c) {
    c->add_option("--preset", sb.preset,
                  "CMake configure preset of your build (default: the one you built last, default or cpu)");
    c->add_option("--build-dir", sb.dir, "build folder (default: build/PRESET)");
  };
  std::string lab, only, plot;
  auto* status = app.add_subcommand("status", "every lab: graders passed, speed reached, what to do next");
  student_opts(status);
  auto* check = app.add_subcommand("check", "build and run a lab's graders; explain each failure");
  check->add_option("LAB", lab, "lab01, 01 or 01-conv-basic")->required();
  check->add_option("--only", only, "one kernel of the lab: conv1d, conv2d_tiled_in, ...");
  student_opts(check);
  auto* bench = app.add_subcommand("bench", "a lab's benchmark: your kernels, the baseline, the GPU's limits");
  bench->add_option("LAB", lab, "the lab")->required();
  bench->add_option("--plot", plot, "also draw the run's roofline chart into this SVG file");
  bool traffic = false;
  bench->add_flag("--traffic", traffic,
                  "instead, each kernel's loads per output (global, shared) and DRAM bytes, read from Nsight Compute");
  student_opts(bench);
  int cycles = 0;
  auto* watch = app.add_subcommand("watch", "check a lab again whenever one of its files changes");
  watch->add_option("LAB", lab, "the lab")->required();
  watch->add_option("--cycles", cycles, "stop after this many checks (0: never)");
  watch->add_option("--only", only, "one kernel of the lab");
  student_opts(watch);
  std::string plot_json;
  auto* plot_cmd = app.add_subcommand("plot", "the roofline chart (SVG) of a saved benchmark run (<lab>_bench --json)");
  plot_cmd->add_option("BENCH_JSON", plot_json, "the benchmark's JSON")->required()->check(CLI::ExistingFile);
  plot_cmd->add_option("--out", plot, "the SVG file to write")->required();
  // The steps that open and close a student's ctest run (convlab.run_start, convlab.run_end), and
  // the summary after it (CTEST_CUSTOM_POST_TEST).
  std::string run_build;
  auto* run_start = app.add_subcommand("__run-start", "")->group("");
  run_start->add_option("--build-dir", run_build)->required();
  auto* run_end = app.add_subcommand("__run-end", "")->group("");
  run_end->add_option("--build-dir", run_build)->required();
  auto* next_step = app.add_subcommand("__next-step", "")->group("");
  next_step->add_option("--build-dir", run_build)->required();

  GradeOptions go;
  std::string gpus, labs, sanitize;
  auto* grade = app.add_subcommand(
      "grade", "grade submissions (folders, .zip archives, tarballs, git repositories, LMS bulk downloads) into --out DIR");
  // Not required by the parser: `--slurm --resume` takes them from its manifest (grade_main refuses none).
  grade->add_option("SUBMISSION", go.submissions, "submissions");
  grade->add_option("--out", go.out, "output folder: gradebook.csv, feedback/, results/, grade.log, hardware.json")
      ->required();
  grade->add_option("--labs", labs, "labs to grade, comma-separated (default: all)");
  grade->add_option("--roster", go.roster,
                    "class list (CSV: id,name,email) that maps submissions to students and names the gradebook's rows");
  grade->add_option("--preset", go.preset, "CMake configure preset the graders are built with")->capture_default_str();
  grade->add_option("--cuda-arch", go.cuda_arch, "CMAKE_CUDA_ARCHITECTURES for the build (e.g. 90)");
  grade->add_option("-D", go.cmake_args, "more CMake cache settings, as -D NAME=VALUE");
  grade->add_option("--jobs,-j", go.jobs, "parallel builds (default: half the cores, at most 4)");
  grade->add_option("--gpus", gpus,
                    "GPUs to grade on, one submission per GPU at a time: indices as nvidia-smi numbers them, or UUIDs "
                    "(default: 0, or the first GPU of CUDA_VISIBLE_DEVICES)");
  grade->add_option("--test-timeout", go.test_timeout, "cap on the spec's time limit per test, seconds");
  grade->add_option("--compile-timeout", go.compile_timeout, "cap on the spec's compile time limit, seconds");
  grade->add_option("--calibration", go.calibration, "speed thresholds from `convlab calibrate`")->check(CLI::ExistingFile);
  grade->add_option("--sanitize", sanitize, "compute-sanitizer tools run on the correctness graders (memcheck,racecheck)");
  grade->add_option("--sanitize-exclude", go.sanitize_exclude, "gtest patterns left out of sanitizer runs (a:b)");
  grade->add_option("--sandbox-user", go.sandbox_user, "run graders as this user when root (auto: nobody; none)")
      ->capture_default_str();
  grade->add_option("--runner-sandbox", go.runner_sandbox,
                    "start each runner (the process with the submission's kernels) in bubblewrap: auto (where it works) or none")
      ->check(CLI::IsMember({"auto", "none"}))
      ->capture_default_str();
  grade->add_option("--output-limit", go.output_limit, "bytes a graders process may print")->capture_default_str();
  grade->add_option("--work-dir", go.work, "scratch folder (default: OUT/work)");
  grade->add_option("--slots-dir", go.slots,
                    "where the build slots (the harness built once, each submission compiled into it) live "
                    "(default: $CONVLAB_SLOTS_DIR, else WORK/slots); give the same folder to later runs and they rebuild "
                    "only what changed");
  grade->add_option("--expect", go.expect, "expected scores (JSON); exit 1 on a difference");
  grade->add_flag("--force", go.force, "grade again what an earlier run already graded");
  SlurmOptions slurm;  // --slurm and its options (slurm.hpp)
  add_slurm_options(*grade, slurm);
  SlurmCommands slurm_cmds;  // hidden: what the sbatch scripts run
  add_slurm_commands(app, slurm_cmds);
  grade->add_option("--compiler-bug-policy", go.compiler_bug_policy,
                    "a correctness grader that passes only with less device optimisation (a compiler bug) earns: "
                    "full, review (full, flagged) or as-is (default: the spec's compiler_bug_policy, else review)")
      ->check(CLI::IsMember({"full", "review", "as-is"}));
  grade->add_flag("--recheck-cpu", go.recheck_cpu,
                  "a grader looked at again for a compiler bug also shows the CPU backend's verdict (builds it once)");

  CalibrateOptions co;
  std::string cal_labs;
  auto* calibrate = app.add_subcommand("calibrate", "time the reference on this GPU and write speed thresholds");
  calibrate->add_option("--out", co.out, "the calibration file")->required();
  calibrate->add_option("--fraction", co.fraction, "thresholds = this fraction of the reference's speed-up")
      ->capture_default_str();
  calibrate->add_option("--preset", co.preset, "configure preset of the reference build")->capture_default_str();
  calibrate->add_option("--build-dir", co.build_dir, "build folder (default: build/calibrate)");
  calibrate->add_option("--cuda-arch", co.cuda_arch, "CMAKE_CUDA_ARCHITECTURES");
  calibrate->add_option("--labs", cal_labs, "labs, comma-separated (default: all)");

  ReleaseOptions ro;
  auto* release = app.add_subcommand(
      "release", "write the student copy: no reference/, baselines and cuDNN anchor compiled only, no instructor-only files");
  release->add_option("--out", ro.out, "the tarball to write (.tar.gz)")->required();
  release->add_option("--prefix", ro.prefix, "the folder inside the tarball")->capture_default_str();
  release->add_flag("--allow-dirty", ro.allow_dirty, "pack uncommitted edits of tracked files (refused without it)");
  release->add_option("--build-dir", ro.build_dir,
                      "where the prebuilt libraries are compiled, kept for the next release (default: build/release)");

  bool as_json = false;
  auto* hardware = app.add_subcommand("hardware", "the GPU here: name, driver, clocks, measured copy bandwidth");
  hardware->add_flag("--json", as_json, "as JSON");

  DoctorOptions doc;
  auto* doctor = app.add_subcommand("doctor", "is this GPU's CUDA toolchain fit to grade? Runs the known miscompile cases");
  doctor->add_option("--json", doc.json_out, "also write the result as JSON to this file");
  doctor->add_option("--gpu", doc.gpu, "the GPU to check (CUDA_VISIBLE_DEVICES)");
  doctor->add_option("--cuda-arch", doc.cuda_arch, "compile for this architecture, e.g. 90 (default: the GPU's own)");
  doctor->add_option("--nvcc", doc.nvcc, "the CUDA compiler (default: $CUDACXX, nvcc on PATH)");
  doctor->add_option("--build-dir", doc.build_dir, "run the cases built in this CMake build instead of compiling them");
  doctor->add_option("--work", doc.work, "where compiled cases are kept");

  auto* labs_cmd = app.add_subcommand("labs", "list the labs this tree holds");

  CLI11_PARSE(app, argc, argv);
  try {
    if (hardware->parsed()) return hardware_main(as_json);
    if (plot_cmd->parsed()) return plot_main(plot_json, plot);
    const Project project = load_project(find_root(root));
    if (labs_cmd->parsed()) {
      for (const auto& l : project.labs)
        std::cout << l.spec.lab << "  " << l.spec.slug << "  " << l.spec.title << "  (" << l.spec.total_points()
                  << " points)\n";
      return 0;
    }
    if (doctor->parsed()) return doctor_main(project, doc);
    if (status->parsed()) return status_main(project, sb);
    if (check->parsed()) return check_main(project, sb, lab, only);
    if (bench->parsed()) return bench_main(project, sb, lab, plot, traffic);
    if (watch->parsed()) return watch_main(project, sb, lab, cycles, only);
    if (run_start->parsed()) return run_start_main(project, run_build);
    if (run_end->parsed()) return run_end_main(project, run_build);
    if (next_step->parsed()) return next_step_main(project, run_build);
    if (grade->parsed()) {
      for (auto& a : go.cmake_args)
        if (!starts_with(a, "-D")) a = "-D" + a;
      go.labs = split(labs, ',');
      go.sanitize = split(sanitize, ',');
      if (slurm.enabled) return slurm_grade_main(project, go, slurm, *grade);
      refuse_slurm_options(*grade);
      if (grade->get_option("--gpus")->count() > 0) go.gpus = parse_gpu_list(gpus);  // exit 2 on a bad entry
      return grade_main(project, go);
    }
    if (slurm_cmds.task->parsed()) return slurm_task_main(project, slurm_cmds.out, slurm_cmds.task_index);
    if (slurm_cmds.collect->parsed()) return slurm_collect_main(project, slurm_cmds.out);
    if (calibrate->parsed()) {
      co.labs = split(cal_labs, ',');
      return calibrate_main(project, co);
    }
    if (release->parsed()) return release_main(project, ro);
  } catch (const Error& e) {
    std::cerr << "convlab: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "convlab: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
