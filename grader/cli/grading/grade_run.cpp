// convlab grade, running: a built lab's graders in limited processes (the runner in bubblewrap
// where it works), rechecks and sanitizers, scored; the GPU workers. See grade_internal.hpp.
#include "grading/grade_internal.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace convlab::cli {

namespace fs = std::filesystem;

namespace grade_internal {

// ---- running ---------------------------------------------------------------------

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

// What the steps of run_lab() share: the lab being run, its graders' runs, the tests each lists, the seconds by phase.
// (run_checks and run_speed bind every member by name: auto& [job, b, gpu, runs, ...] = s; keep the
// members in this order.)
struct LabRun {
  LabRun(const Job& j, const BuiltLab& bl, const std::string& g, std::map<std::string, GraderRun> r)
      : job(j), b(bl), gpu(g), runs(std::move(r)) {}
  const Job& job;
  const BuiltLab& b;
  const std::string& gpu;
  std::map<std::string, GraderRun> runs;
  std::map<std::string, double> phase;  // LabResult::phase_s
  std::map<std::string, std::vector<std::string>> tests;  // grader id -> its tests, as the graders list them
  int batches = 0;
};

// Lists the graders' tests (the "list" phase) into s.tests; returns the listing process's result.
RunResult Grader::list_tests(LabRun& s, const std::string& scratch, double t0) {
  const Job& job = s.job;
  const BuiltLab& b = s.b;
  const std::string& gpu = s.gpu;
  std::map<std::string, double>& phase = s.phase;
  std::map<std::string, std::vector<std::string>>& tests = s.tests;
  // The tests, as the graders list them.
  RunSpec list = graders_spec(job, b, gpu, scratch + "/tmp");
  list.argv = {b.exe, "--gtest_list_tests"};
  list.limits.timeout_s = 60;
  list.limits.output_kill_bytes = 1 << 20;
  const RunResult lr = run_sandboxed(list);
  phase["list"] = now_s() - t0;
  std::string suite;
  std::istringstream in(lr.output);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || starts_with(line, "convlab:")) continue;
    if (line[0] != ' ') suite = trim(line);
    else if (const GraderSpec* g = b.spec.grader_for_test(suite + trim(line).substr(0, trim(line).find(' '))))
      tests[g->id].push_back(suite + trim(line).substr(0, trim(line).find(' ')));
  }
  return lr;
}

// Runs the correctness and technique graders in one process, then their rechecks and sanitizers.
void Grader::run_checks(LabRun& s) {
  auto& [job, b, gpu, runs, phase, tests, batches] = s;
  // The correctness and technique graders first, in one process (batch.hpp): they gate speed.
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
}

// Runs the speed graders whose gates passed (or marks them not run); one with a rebuilt runner on its own.
void Grader::run_speed(LabRun& s) {
  auto& [job, b, gpu, runs, phase, tests, batches] = s;
  double t = 0;
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
}

LabResult Grader::run_lab(const Job& job, const BuiltLab& b, const std::string& gpu) {
  const std::string scratch = job.dir + "/" + b.spec.lab;
  for (const char* d : {"run", "home", "tmp"}) prepare_dir(scratch + "/" + d);
  const double t0 = now_s();
  LabRun s(job, b, gpu, unreachable(b.spec));
  const RunResult lr = list_tests(s, scratch, t0);
  std::map<std::string, GraderRun>& runs = s.runs;
  if (!lr.ok()) {
    for (const auto& g : b.spec.graders)
      runs[g.id].not_run = "the graders process could not start (" + lr.describe() + "): " + trim(head_lines(lr.output, 3));
    LabResult res = score_lab(b.spec, runs);
    res.run_s = now_s() - t0;
    return res;
  }
  run_checks(s);
  run_speed(s);
  LabResult res = score_lab(b.spec, runs);
  res.run_s = now_s() - t0;
  res.phase_s = std::move(s.phase);
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

}  // namespace grade_internal

}  // namespace convlab::cli
