// A failing GPU correctness grader, looked at again (issue 18). See recheck.hpp.
#include "grading/recheck.hpp"

#include "common/sandbox.hpp"
#include "common/util.hpp"

#include <convlab/runner_words.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

extern char** environ;

namespace convlab::cli {

namespace fs = std::filesystem;

namespace {

bool all_passed(const GraderRun& r) {
  return !r.tests.empty() && r.problem.empty() && r.not_run.empty() &&
         std::all_of(r.tests.begin(), r.tests.end(), [](const TestOutcome& t) { return t.passed && !t.skipped; });
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// "NAME:TYPE=value" of a CMake cache; "" when absent.
std::string cache_value(const std::string& build, const std::string& name) {
  std::error_code ec;
  if (!fs::exists(build + "/CMakeCache.txt", ec)) return "";
  std::istringstream in(read_file(build + "/CMakeCache.txt"));
  for (std::string line; std::getline(in, line);)
    if (starts_with(line, name + ":") && line.find('=') != std::string::npos) return line.substr(line.find('=') + 1);
  return "";
}

// The backend a build uses: CONVLAB_BACKEND_USED (what 'auto' chose), else CONVLAB_BACKEND.
std::string backend_of(const std::string& build) {
  const std::string used = cache_value(build, "CONVLAB_BACKEND_USED");
  return used.empty() ? cache_value(build, "CONVLAB_BACKEND") : used;
}

// What the policy does with a grader that passed with less optimisation, in words.
std::string policy_outcome(const CompilerRecheck& c) {
  if (!c.credited()) return "scored as measured, as if the kernel were wrong; ask your instructor to look at it";
  return c.review() ? "full points, flagged for your instructor's review" : "full points";
}

// convlab check: a long step, one line before and one after (the build's own output only on failure).
RunResult check_step(const std::string& what, RunSpec spec) {
  const double t0 = now_s();
  std::cout << "  " << what << " ..." << std::endl;
  spec.limits.open_files = 0;
  RunResult r = run_sandboxed(spec);
  std::cout << "  " << what << ": " << (r.ok() ? "done" : r.describe()) << " in " << fmt_seconds(now_s() - t0)
            << std::endl;
  return r;
}

}  // namespace

std::vector<DeviceOpt> lowered_levels(const std::string& current) {
  if (current == "G") return {};
  if (current == "O1") return {{"G", "-G"}};
  return {{"O1", "-Xptxas -O1"}, {"G", "-G"}};
}

std::vector<DeviceOpt> lowered_levels_for(const std::string& current, const std::vector<std::string>& sources,
                                          std::vector<std::string>* notes) {
  std::vector<DeviceOpt> levels = lowered_levels(current);
  const bool tells = std::any_of(sources.begin(), sources.end(),
                                 [](const std::string& text) { return text.find("__CUDACC_DEBUG__") != std::string::npos; });
  if (tells && !levels.empty() && levels.back().name == "G") {
    levels.pop_back();
    notes->push_back("-G: not tried (the source tests __CUDACC_DEBUG__, which -G defines)");
  }
  return levels;
}

std::string resolve_policy(const std::string& command_line, const LabSpec& spec) {
  const std::string p = !command_line.empty() ? command_line
                        : !spec.compiler_bug_policy.empty() ? spec.compiler_bug_policy
                                                            : std::string("review");
  if (p != "full" && p != "review" && p != "as-is")
    throw Error("compiler-bug policy must be full, review or as-is, not '" + p + "'");
  return p;
}

bool wants_recheck(const GraderSpec& g, const GraderRun& run) {
  if (g.kind != "correctness" || !run.not_run.empty()) return false;
  // A runner that could not even start (a sandbox or set-up fault: every test says so) is not a
  // kernel that computes wrong results, nor is a runner that died of a signal (its host code
  // crashed; a device fault is a CUDA error, not a signal): building it again with less device
  // optimisation tells nothing, and each look costs a build and a run of the grader.
  const std::string start_up = std::string("while running ") + runner_words::kStartUp;
  return std::any_of(run.tests.begin(), run.tests.end(), [&](const TestOutcome& t) {
    return t.recorded && !t.skipped && !t.passed && t.message.find(start_up) == std::string::npos &&
           t.message.find(runner_words::kEndedBySignal) == std::string::npos;
  });
}

std::string tests_summary(const GraderRun& run) {
  const int total = static_cast<int>(run.tests.size());
  int passed = 0, ran = 0;
  for (const auto& t : run.tests) {
    passed += t.passed && !t.skipped ? 1 : 0;
    ran += t.recorded && !t.skipped ? 1 : 0;
  }
  const std::string process = run.problem.empty() ? "" : " (the graders process " + run.problem + ")";
  if (!run.not_run.empty()) return "not run: " + run.not_run;
  if (total == 0) return "no test listed" + process;
  if (ran == 0) {
    const std::string why = trim(run.tests.front().message.substr(0, run.tests.front().message.find('\n')));
    return "no test ran" + (why.empty() ? process : " (" + why + ")");
  }
  if (passed == total) return "all " + std::to_string(total) + " tests passed" + process;
  return std::to_string(total - passed) + " of " + std::to_string(total) + " tests failed" + process;
}

CompilerRecheck recheck_grader(const GraderRun& failed, const std::vector<DeviceOpt>& levels, const std::string& policy,
                               const RecheckSteps& steps) {
  CompilerRecheck c;
  c.policy = policy;
  c.failed = tests_summary(failed);
  // Every test of one judge process shares its base seed: CONVLAB_SEED gives each test its inputs back.
  for (const auto& t : failed.tests)
    if (t.recorded && !t.skipped && !t.passed) {
      c.seed = t.base_seed;
      break;
    }
  std::string why;
  // As built, on the same inputs: a failure that does not repeat is the kernel's (a race, a read
  // of memory never written), whatever the optimisation.
  const std::string built = steps.build(DeviceOpt{}, &why);
  if (built.empty()) {
    c.tried.push_back("as built, again: not run (" + why + ")");
  } else {
    const GraderRun again = steps.run(Replay{"recheck-as-built", built, "", c.seed, ""});
    c.tried.push_back("as built, again: " + tests_summary(again));
    if (all_passed(again)) {
      c.flaky = true;
      if (steps.cpu) c.cpu = steps.cpu(c.seed);
      return c;
    }
  }
  int ran = 0;  // lowered builds that ran: with none, nothing was learnt
  for (const DeviceOpt& level : levels) {
    why.clear();
    const std::string runner = steps.build(level, &why);
    if (runner.empty()) {
      c.tried.push_back(level.flags + ": not built (" + why + ")");
      continue;
    }
    ++ran;
    const GraderRun r = steps.run(Replay{"recheck-" + level.name, runner, "", c.seed, ""});
    c.tried.push_back(level.flags + ": " + tests_summary(r));
    if (all_passed(r)) {
      c.passed_at = level.name;
      c.flags = level.flags;
      c.runner = runner;
      break;
    }
  }
  c.inconclusive = ran == 0;
  if (levels.empty()) c.tried.push_back("no lower device optimisation to try (the kernels were built with -G)");
  if (steps.cpu) c.cpu = steps.cpu(c.seed);
  return c;
}

std::string recheck_message(const CompilerRecheck& c, const std::string& grader_id, bool graded) {
  std::ostringstream m;
  const std::string seed = "CONVLAB_SEED=" + std::to_string(c.seed);
  const std::string cpu = c.cpu.empty() ? "" : "- The CPU backend, on the same inputs: " + c.cpu + ".\n";
  if (c.compiler_bug()) {
    m << "Your kernel computes the right result with less compiler optimisation.\n"
      << "As built, " << grader_id << " failed (" << c.failed << "). Built again from the same source with `"
      << c.flags << "` (less device optimisation) and run on the same inputs (" << seed
      << "), every test passed. This looks like a compiler bug, not a bug in your kernel.\n"
      << cpu << "- Tried: " << join(c.tried, "; ") << ".\n"
      << "- Build settings: your kernels are built with nvcc's default device optimisation; the CMake option "
      << "CONVLAB_DEVICE_OPT=" << c.passed_at << " builds them with `" << c.flags << "` (for example cmake --preset "
      << "default -D CONVLAB_DEVICE_OPT=" << c.passed_at << "), which you may use to go on working. The docs' page "
      << "\"Known issues\" (docs/known-issues.md) names the compiler bugs known so far.\n";
    if (graded)
      m << "- Graded under the course's compiler-bug policy '" << c.policy << "': " << policy_outcome(c) << ".\n";
    else
      m << "- When graded (convlab grade), the course's compiler-bug policy ('" << c.policy << "') gives this grader "
        << policy_outcome(c) << ".\n";
    return m.str();
  }
  if (c.flaky) {
    m << "Run again as built, on the same inputs (" << seed << "), " << grader_id
      << " passed: your kernel's result changes from run to run. That points at a race (a missing "
      << "__syncthreads()) or a read of memory never written, in the kernel, not at the compiler.\n"
      << cpu << "- Tried: " << join(c.tried, "; ") << ".\n";
    return m.str();
  }
  if (c.inconclusive) {
    m << grader_id << " could not be looked at again with less compiler optimisation (" << join(c.tried, "; ")
      << "), so nothing tells a compiler bug from a bug in the kernel here; it counts as failed.\n"
      << cpu;
    return m.str();
  }
  m << "Looked at again on the same inputs (" << seed << ") with less compiler optimisation, " << grader_id
    << " fails too (" << join(c.tried, "; ") << "): the fault is in the kernel, not the compiler.\n"
    << cpu;
  return m.str();
}

std::string gradebook_flag(const std::string& lab, const GraderResult& g) {
  if (!g.infrastructure.empty()) return lab + " " + g.id + ": infrastructure error (the harness's, not the student's); REGRADE";
  if (!g.recheck) return "";
  const CompilerRecheck& c = *g.recheck;
  if (c.compiler_bug())
    return lab + " " + g.id + ": compiler bug? passes with " + c.flags + " on the same inputs; policy " + c.policy +
           ": " + (c.credited() ? "full points" : "scored as measured") + (c.review() ? "; REVIEW" : "");
  if (c.flaky) return lab + " " + g.id + ": failed, then passed on the same inputs as built (a race?)";
  if (c.inconclusive) return lab + " " + g.id + ": failed; no recheck with less optimisation could be made (grade.log)";
  return "";
}

GraderRun run_judge(const JudgeRun& j) {
  GraderRun run;
  std::error_code ec;
  fs::remove_all(j.results, ec);
  make_dirs(j.results);
  RunSpec s;
  s.argv = {j.judge, "--gtest_filter=" + j.filter, "--convlab-impl=student", "--convlab-results=" + j.results};
  if (!j.runner.empty()) s.argv.push_back("--convlab-runner=" + j.runner);
  // The caller's environment, with the seed to replay and nothing that would move the records.
  for (char** e = environ; e && *e; ++e)
    if (!starts_with(*e, "CONVLAB_SEED=") && !starts_with(*e, "CONVLAB_RESULTS_DIR=")) s.env.push_back(*e);
  if (j.seed) s.env.push_back("CONVLAB_SEED=" + std::to_string(*j.seed));
  s.limits.idle_timeout_s = j.idle_timeout_s;
  s.limits.open_files = 0;
  s.progress_marker = "[ RUN      ]";
  const RunResult r = run_sandboxed(s);
  run.seconds = r.wall_s;
  bool every = true;
  for (const auto& name : j.tests) {
    TestOutcome t;
    const std::string path = j.results + "/" + safe_name(name) + ".json";
    if (fs::exists(path, ec)) {
      try {
        t = read_record(path);
      } catch (const Error& e) {
        t.message = e.what();
      }
    }
    if (t.name != name) t = TestOutcome{}, t.message = "not recorded: the graders process " + r.describe();
    t.name = name;
    every = every && t.passed;
    run.tests.push_back(t);
  }
  const bool killed = r.timed_out || r.idle_timed_out || r.output_exceeded || r.signal || r.start_failed;
  if (killed || (r.exit_code != 0 && r.exit_code != 1) || (r.exit_code == 0) != every) run.problem = r.describe();
  if (r.exit_code == 0 && !every && !killed) run.problem.clear();  // failures recorded
  return run;
}

namespace {

// What convlab check's rechecks share: the project, the lab, the build that failed and the CPU backend's.
struct CheckRecheck {
  const Project& p;
  const Lab& lab;
  const std::string& build;
  const std::string& preset;
  std::string judge;      // the failed build's graders
  std::string cpu_build;  // the CPU backend's build, if have_cpu
  bool have_cpu = false;
};

// The steps of one grader's recheck: builds with less optimisation, runs of its tests, the CPU backend's verdict.
RecheckSteps check_steps(const CheckRecheck& k, const GraderSpec& g, const std::vector<std::string>& names) {
  const Project& p = k.p;
  const Lab& lab = k.lab;
  const std::string& build = k.build;
  const std::string& preset = k.preset;
  const std::string& judge = k.judge;
  const std::string& cpu_build = k.cpu_build;
  RecheckSteps steps;
  steps.build = [&](const DeviceOpt& level, std::string* why) -> std::string {
    if (level.name.empty()) return build + "/" + lab.dir + "/" + lab.spec.lab + "_runner";
    const std::string dir = build + "-recheck-" + level.name;
    if (cache_value(dir, "CONVLAB_DEVICE_OPT") != level.name) {
      RunSpec s;
      // The student's preset (default for a build named by folder), on the GPU as the build that failed.
      s.argv = {"cmake", "--preset", preset.empty() ? std::string("default") : preset, "-B", dir,
                "-DCONVLAB_BACKEND=cuda", "-DCONVLAB_DEVICE_OPT=" + level.name, "-DCONVLAB_BENCHMARKS=OFF"};
      if (const std::string arch = cache_value(build, "CMAKE_CUDA_ARCHITECTURES"); !arch.empty())
        s.argv.push_back("-DCMAKE_CUDA_ARCHITECTURES=" + arch);  // the same code as the build that failed
      s.cwd = p.root;
      const RunResult r = check_step("configuring " + dir + " (CONVLAB_DEVICE_OPT=" + level.name + ")", s);
      if (!r.ok()) {
        *why = "cannot configure " + dir + ": " + trim(head_lines(r.output, 20));
        return "";
      }
    }
    RunSpec s;
    s.argv = {"cmake", "--build", dir, "--target", lab.spec.lab + "_runner"};
    s.cwd = p.root;
    const RunResult r = check_step("building your kernels with " + level.flags, s);
    if (!r.ok()) {
      *why = "the build failed: " + trim(r.output.substr(r.output.size() > 1500 ? r.output.size() - 1500 : 0));
      return "";
    }
    return dir + "/" + lab.dir + "/" + lab.spec.lab + "_runner";
  };
  steps.run = [&](const Replay& replay) {
    JudgeRun j;
    j.judge = replay.judge.empty() ? judge : replay.judge;
    j.runner = replay.runner;
    j.filter = lab.spec.lab + "." + g.id + ".*";
    j.tests = names;
    j.results = build + "/results/" + replay.tag;  // not read by convlab status
    j.seed = replay.seed;
    j.idle_timeout_s = lab.spec.test_timeout_s;
    const GraderRun r = run_judge(j);
    std::string what = "as built, again";
    for (const auto& level : lowered_levels())
      if (replay.tag == "recheck-" + level.name) what = "with " + level.flags;
    std::cout << "  " << what << ": " << tests_summary(r) << std::endl;
    return r;
  };
  if (k.have_cpu)
    steps.cpu = [&](std::uint64_t seed) -> std::string {
      RunSpec s;
      s.argv = {"cmake", "--build", cpu_build, "--target", lab.spec.lab + "_graders"};
      s.cwd = p.root;
      const RunResult r = check_step("building the CPU backend's graders (" + cpu_build + ")", s);
      if (!r.ok()) return "not run (its build failed)";
      JudgeRun j;
      j.judge = cpu_build + "/" + lab.dir + "/" + lab.spec.lab + "_graders";
      j.filter = lab.spec.lab + "." + g.id + ".*";
      j.tests = names;
      j.results = cpu_build + "/results/recheck-cpu";
      j.seed = seed;
      j.idle_timeout_s = lab.spec.test_timeout_s * 4.0;  // the CPU is slower
      return tests_summary(run_judge(j));
    };
  return steps;
}

// Rechecks grader g, whose tests failed in run, and says what was found.
CompilerRecheck recheck_in_check(const CheckRecheck& k, const GraderSpec& g, const GraderRun& run) {
  const Project& p = k.p;
  const Lab& lab = k.lab;
  std::vector<std::string> names;
  for (const auto& t : run.tests) names.push_back(t.name);
  std::cout << "\nLooking again at " << g.id << " (" << tests_summary(run)
            << "): is it the kernel, or the compiler? The same inputs, with less compiler optimisation."
            << std::endl;
  const RecheckSteps steps = check_steps(k, g, names);
  std::string policy;
  try {
    policy = resolve_policy("", lab.spec);
  } catch (const Error&) {
    policy = "review";
  }
  std::vector<std::string> sources, notes;
  for (const auto& f : lab.spec.files) {
    std::error_code ec;
    const std::string path = p.root + "/" + lab.starter + "/" + f;
    if (fs::exists(path, ec)) sources.push_back(read_file(path));
  }
  const auto levels = lowered_levels_for(cache_value(k.build, "CONVLAB_DEVICE_OPT"), sources, &notes);
  CompilerRecheck c = recheck_grader(run, levels, policy, steps);
  c.tried.insert(c.tried.end(), notes.begin(), notes.end());
  std::cout << "\n"
            << (c.compiler_bug() ? "A COMPILER BUG, IT SEEMS: "
                : c.inconclusive ? "COULD NOT TELL: "
                                 : "NOT THE COMPILER: ")
            << g.id << "\n";
  std::istringstream lines(recheck_message(c, g.id, false));
  for (std::string line; std::getline(lines, line);) std::cout << "  " << line << "\n";
  if (!k.have_cpu && c.compiler_bug())
    std::cout << "  (configure the CPU backend once, cmake --preset cpu, and convlab check shows its verdict too)\n";
  return c;
}

}  // namespace

std::map<std::string, CompilerRecheck> recheck_after_check(const Project& p, const Lab& lab, const std::string& build,
                                                           const std::string& preset,
                                                           const std::map<std::string, TestOutcome>& records) {
  std::map<std::string, CompilerRecheck> out;
  std::map<std::string, GraderRun> runs;
  for (const auto& [name, t] : records)
    if (const GraderSpec* g = lab.spec.grader_for_test(name)) runs[g->id].tests.push_back(t);
  // The CPU backend has no device optimisation to lower.
  if (backend_of(build) == "cpu") return out;
  CheckRecheck k{p, lab, build, preset, build + "/" + lab.dir + "/" + lab.spec.lab + "_graders", p.root + "/build/cpu", false};
  k.have_cpu = fs::absolute(k.cpu_build) != fs::absolute(build) && backend_of(k.cpu_build) == "cpu";
  for (const auto& g : lab.spec.graders) {
    if (!wants_recheck(g, runs[g.id])) continue;
    out[g.id] = recheck_in_check(k, g, runs[g.id]);
  }
  return out;
}

std::string GradeRechecker::build_at(const std::string& gpu, const Lab& lab, const std::string& level,
                                     const std::string& out, bool cpu, std::string* judge, std::string* why) {
  const std::string base = s_.work + "/gpu" + safe_name(gpu), src = base + "/src";
  const std::string build = base + "/build-" + level;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (broken_.count(build)) {
      *why = broken_[build];
      return "";
    }
  }
  const bool first = !fs::exists(build + "/CMakeCache.txt");
  if (first) {
    std::vector<std::string> argv = {"cmake", "-S", src, "-B", build};
    if (cpu) {
      argv.insert(argv.end(), {"--preset", "cpu", "-DCONVLAB_IMPL=student", "-DCONVLAB_SELFTEST=OFF",
                               "-DCONVLAB_BENCHMARKS=OFF"});
    } else {
      argv.insert(argv.end(), s_.configure.begin(), s_.configure.end());
      argv.push_back("-DCONVLAB_DEVICE_OPT=" + level);
    }
    const RunResult r = run_tool(argv, src, 900);
    if (s_.log) s_.log("---- recheck: configure " + build + "\n" + r.output + "\n");
    if (!r.ok()) {
      *why = "cannot configure a build with CONVLAB_DEVICE_OPT=" + level + " (" + r.describe() + ")";
      std::lock_guard<std::mutex> l(mu_);
      broken_[build] = *why;  // not again for every submission
      return "";
    }
  }
  RunSpec s;
  s.argv = {"cmake", "--build", build, "--target", lab.spec.lab + (cpu ? "_graders" : "_runner")};
  s.cwd = src;
  // The first build also builds the harness, which the submission has no part in.
  const double limit = s_.compile_timeout_cap_s > 0 ? std::min<double>(s_.compile_timeout_cap_s, lab.spec.compile_timeout_s)
                                                    : lab.spec.compile_timeout_s;
  s.limits.timeout_s = limit + (first ? 3600 : 0);
  s.limits.file_bytes = 1ll << 30;
  s.limits.open_files = 0;
  s.keep_head = 256 * 1024;
  const RunResult r = run_sandboxed(s);
  if (s_.log) s_.log("---- recheck: build " + build + " " + lab.spec.lab + "\n" + r.output + "\n");
  if (!r.ok()) {
    *why = r.timed_out ? "its build ran past the time limit" : "it did not build (" + r.describe() + ")";
    return "";
  }
  const std::string dir = build + "/" + lab.dir + "/";
  std::vector<std::string> sources;
  for (const auto& f : lab.spec.files) sources.push_back(src + "/" + lab.starter + "/" + f);
  if (s_.vet) {
    const std::string bad = s_.vet(lab, build, src, sources, dir + lab.spec.lab + "_runner");
    if (!bad.empty()) {
      *why = "this build was refused: " + bad;
      return "";
    }
  }
  // Copied next to the submission's other binaries, where the graders' user can read them.
  const std::string runner = out + "/" + lab.spec.lab + "_runner_" + level;
  std::vector<std::pair<std::string, std::string>> copies = {{dir + lab.spec.lab + "_runner", runner},
                                                             {dir + lab.spec.lab + "_runner.facts.json", runner + ".facts.json"}};
  if (cpu) copies.push_back({dir + lab.spec.lab + "_graders", out + "/" + lab.spec.lab + "_graders_" + level});
  for (const auto& [from, to] : copies) {
    std::error_code ec;
    if (!fs::exists(from, ec) && to.size() > 11 && to.compare(to.size() - 11, 11, ".facts.json") == 0) continue;
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      *why = "cannot copy " + from + ": " + ec.message();
      return "";
    }
    fs::permissions(to, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec, ec);
  }
  if (judge) *judge = cpu ? out + "/" + lab.spec.lab + "_graders_" + level : "";
  return runner;
}

CompilerRecheck GradeRechecker::recheck(const std::string& gpu, const Lab& lab, const LabSpec& spec,
                                        const std::map<std::string, std::string>& files, const std::string& runner,
                                        const std::string& out, const GraderSpec& g, const GraderRun& failed,
                                        const std::function<GraderRun(const Replay&)>& run) {
  const std::string policy = resolve_policy(s_.policy, spec);
  const std::string src = s_.work + "/gpu" + safe_name(gpu) + "/src";
  bool tree_ready = false;
  // The grading tree, with this submission's files of the lab (the starter's for those it lacks).
  const auto prepare = [&] {
    if (tree_ready) return;
    sync_tree(s_.root, src, s_.files);
    for (const auto& f : spec.files) {
      const auto it = files.find(f);
      const std::string content = read_file(it != files.end() ? it->second : s_.root + "/" + lab.starter + "/" + f);
      const std::string dst = src + "/" + lab.starter + "/" + f;
      std::error_code ec;
      if (!fs::exists(dst, ec) || read_file(dst) != content) write_file_atomic(dst, content);
    }
    tree_ready = true;
  };
  std::string current;  // the grading builds' own level, if the instructor set one (-D CONVLAB_DEVICE_OPT=O1)
  for (const auto& a : s_.configure)
    if (starts_with(a, "-DCONVLAB_DEVICE_OPT=")) current = a.substr(std::strlen("-DCONVLAB_DEVICE_OPT="));
  RecheckSteps steps;
  steps.build = [&](const DeviceOpt& level, std::string* why) -> std::string {
    if (level.name.empty()) return runner;
    prepare();
    return build_at(gpu, lab, level.name, out, false, nullptr, why);
  };
  steps.run = run;
  if (s_.cpu)
    steps.cpu = [&](std::uint64_t seed) -> std::string {
      prepare();
      std::string judge, why;
      const std::string cpu_runner = build_at(gpu, lab, "cpu", out, true, &judge, &why);
      if (cpu_runner.empty()) return "not run (" + why + ")";
      return tests_summary(run(Replay{"recheck-cpu", cpu_runner, judge, seed, ""}));
    };
  const double t0 = now_s();
  CompilerRecheck c;
  try {
    std::vector<std::string> sources, notes;
    for (const auto& f : spec.files)
      if (files.count(f)) sources.push_back(read_file(files.at(f)));
    c = recheck_grader(failed, lowered_levels_for(current, sources, &notes), policy, steps);
    c.tried.insert(c.tried.end(), notes.begin(), notes.end());
  } catch (const std::exception& e) {  // a recheck that cannot be made leaves the grade as measured
    c = CompilerRecheck{};
    c.inconclusive = true;
    c.policy = policy;
    c.failed = tests_summary(failed);
    c.tried.push_back(std::string("the recheck could not be made: ") + e.what());
  }
  if (s_.log)
    s_.log("---- recheck of " + lab.spec.lab + " " + g.id + " (" + fmt_seconds(now_s() - t0) + "): " +
           (c.compiler_bug() ? "passes with " + c.flags : c.flaky ? "flaky" : "fails at every level") + "; " +
           join(c.tried, "; ") + (c.cpu.empty() ? "" : "; CPU backend: " + c.cpu) + "\n");
  return c;
}

bool GradeRechecker::wanted(const GraderSpec& g, const GraderRun& run, const std::string& slot_src) {
  if (!wants_recheck(g, run)) return false;
  std::lock_guard<std::mutex> l(mu_);
  const auto it = cpu_slots_.find(slot_src);
  const bool cpu = it != cpu_slots_.end()
                       ? it->second
                       : (cpu_slots_[slot_src] = backend_of((fs::path(slot_src).parent_path() / "build").string()) == "cpu");
  return !cpu;
}

bool credited_by_recheck(const GraderRun& run) { return run.recheck && run.recheck->credited(); }

std::optional<Replay> speed_replay(const GraderSpec& speed, const std::map<std::string, GraderRun>& runs) {
  const CompilerRecheck* lowest = nullptr;  // -G below -Xptxas -O1: the level every credited gate passed at
  std::string gate;
  for (const auto& id : speed.gated_by) {
    const auto it = runs.find(id);
    if (it == runs.end() || !credited_by_recheck(it->second)) continue;
    if (!lowest || it->second.recheck->passed_at == "G") {
      lowest = &*it->second.recheck;
      gate = id;
    }
  }
  if (!lowest || lowest->runner.empty()) return std::nullopt;
  return Replay{"lowered-" + lowest->passed_at, lowest->runner, "", std::nullopt,
                "timed with the kernels built with " + lowest->flags + ": as normally built they compute wrong results "
                "(a compiler bug, see " + gate + ")"};
}

}  // namespace convlab::cli
