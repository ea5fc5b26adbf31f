// The students' commands. See student.hpp.
#include "student/student.hpp"

#include "student/lab_status.hpp"
#include "common/progress.hpp"
#include "grading/recheck.hpp"
#include "common/sandbox.hpp"
#include "grading/scoring.hpp"
#include "student/traffic.hpp"
#include "common/util.hpp"

#include <convlab/gate.hpp>
#include <convlab/roofline.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

namespace convlab::cli {

namespace fs = std::filesystem;

namespace {

// How many failures get their full report; the others get one line each.
constexpr int kFullReports = 3;

BuildInfo resolve(const Project& p, const StudentBuild& sb) {
  BuildInfo b = choose_build(p.root, sb.preset, sb.dir);
  std::cout << "convlab: " << b.describe() << std::endl;
  return b;
}

RunResult long_step(const std::string& what, RunSpec spec, int total = 0, const std::string& item_marker = "") {
  return run_with_progress(what, std::move(spec), total, item_marker, !item_marker.empty());
}

// Configures the build if it is not yet; prints the errors and returns false on failure.
bool configure(const Project& p, BuildInfo& b) {
  if (!b.configured) {
    RunSpec s;
    const std::string preset = b.preset.empty() ? "default" : b.preset;
    s.argv = {"cmake", "--preset", preset};
    if (b.dir != fs::absolute(p.root + "/build/" + preset).lexically_normal().string())
      s.argv.insert(s.argv.end(), {"-B", b.dir});
    s.cwd = p.root;
    s.limits.open_files = 0;
    const RunResult r = long_step("configuring (preset " + preset + ")", s);
    if (!r.ok()) {
      std::cout << head_lines(r.output, 60);
      return false;
    }
    const std::string chosen = b.chosen;
    b = read_build(p.root, b.dir, preset);
    b.chosen = chosen;
    std::cout << "convlab: " << b.describe() << std::endl;
    // The one line CMake printed about the backend it chose, when it chose one.
    for (const auto& line : split(r.output, '\n'))
      if (line.find("no usable NVIDIA GPU here") != std::string::npos) std::cout << trim(line) << "\n";
  }
  return true;
}

// Configures the build (once) and builds `target`; prints the errors and returns false on failure.
bool build(const Project& p, BuildInfo& b, const std::string& target) {
  if (!configure(p, b)) return false;
  RunSpec s;
  s.argv = {"cmake", "--build", b.dir, "--target", target};
  s.cwd = p.root;
  s.limits.open_files = 0;
  const RunResult r = long_step("building " + target, s);
  if (!r.ok()) {
    std::cout << "\nThe build failed. The compiler says:\n\n" << r.output << "\n";
    return false;
  }
  return true;
}

// Every lab's standing in build `b` (records of ctest runs and of convlab check).
std::vector<LabStatus> all_statuses(const Project& p, const BuildInfo& b) {
  std::vector<LabStatus> out;
  for (const auto& lab : p.labs) {
    const auto recs = newest_records({b.dir + "/results/student", b.dir + "/results/check"}, lab);
    out.push_back(lab_status(lab, recs, list_tests(graders_exe(b, lab)), b.cpu()));
  }
  return out;
}

// The gtest filter of one kernel (a grader variant) of a lab, or of all its graders.
std::string grader_filter(const Lab& lab, const std::string& only) {
  const std::string id = lab.spec.lab;
  if (only.empty()) return id + ".correctness.*:" + id + ".technique.*:" + id + ".speedup.*";
  std::set<std::string> variants;
  for (const auto& g : lab.spec.graders) variants.insert(g.id.substr(g.id.find('.') + 1));
  if (!variants.count(only)) {
    std::string known;
    for (const auto& v : variants) known += (known.empty() ? "" : ", ") + v;
    throw Error("--only: " + id + " has no kernel '" + only + "'; its kernels are: " + known);
  }
  return id + ".correctness." + only + ".*:" + id + ".technique." + only + ".*:" + id + ".speedup." + only + ".*";
}

// The failures of one check: the first few in full, the others one line each, smallest first.
void print_failures(const std::vector<TestOutcome>& failures, const BuildInfo& b) {
  int shown = 0;
  for (const auto& t : failures) {
    if (shown++ < kFullReports) {
      // The report without GoogleTest's scaffolding ("Failed", the trace) and its replay line:
      // the replay command follows, with the build folder.
      std::string report;
      bool trace = false;
      for (const auto& line : split(t.message, '\n')) {
        if (trim(line) == "Failed") continue;
        if (trim(line) == "Google Test trace:") {
          trace = true;
          continue;
        }
        if (trace && line.find("replay this exact test") != std::string::npos) continue;
        report += line + "\n";
      }
      std::cout << "\nFAILED " << t.name << "\n" << head_lines(report, 40);
      std::cout << "  replay it: " << replay_command(t, b) << "\n";
      continue;
    }
    if (shown == kFullReports + 1)
      std::cout << "\n" << failures.size() - kFullReports << " more failed (the full report of each: its replay "
                << "command, or convlab check with --only):\n";
    std::string why = first_informative_line(t.message);
    if (why.size() > 110) why = why.substr(0, 107) + "...";
    std::cout << "  FAILED " << t.name << ": " << why << "\n";
  }
}

// Whether grader `id` ("correctness.conv1d") checks kernel `only` ("" matches every kernel).
bool of_kernel(const std::string& id, const std::string& only) {
  return only.empty() || id.substr(id.find('.') + 1) == only;
}

// The lines of a lab's graders (of one kernel with `only`): pass, FAIL, needs a GPU, not run.
void print_lab_summary(const LabStatus& s, bool cpu, const std::string& only) {
  std::cout << "\n" << s.lab->spec.lab << " — " << s.lab->spec.title << "\n";
  for (const auto& g : s.score.graders) {
    if (!of_kernel(g.id, only)) continue;
    const std::string mark = g.passed ? "pass " : (cpu && g.kind == "speedup") ? "GPU  " : g.ran ? "FAIL " : "---- ";
    std::string reason = g.reason;
    if (reason.size() > 150) reason = reason.substr(0, 147) + "...";
    std::cout << "  " << mark << g.id << ": " << fmt_points(g.points) << " / " << fmt_points(g.max_points)
              << (g.extra_credit ? " extra credit" : "") << "  " << reason << "\n";
  }
  std::cout << "  points if graded now: " << fmt_points(s.score.score) << " / "
            << fmt_points(cpu ? s.reachable : s.score.max_score)
            << (cpu ? " reachable here (" + fmt_points(s.score.max_score) + " with the speed graders, which need a GPU)"
                    : std::string())
            << "\n";
}

}  // namespace

int status_main(const Project& p, const StudentBuild& sb) {
  const BuildInfo b = resolve(p, sb);
  if (!b.configured) {
    std::cout << "\nnext: set up and build, then check lab01: cmake --workflow --preset default\n";
    return 0;
  }
  const std::vector<LabStatus> labs = all_statuses(p, b);
  std::cout << "\n" << status_table(labs, b.cpu()) << "\n" << points_line(labs, b.cpu()) << "\n";
  std::cout << "\nnext: " << next_step(labs, b) << "\n"
            << "(from the results in " << b.shown << "/results; `convlab check LAB` brings them up to date)\n";
  return 0;
}

int check_main(const Project& p, const StudentBuild& sb, const std::string& name, const std::string& only) {
  const Lab& lab = p.find(name);
  const std::string filter = grader_filter(lab, only);
  BuildInfo b = resolve(p, sb);
  if (!build(p, b, lab.spec.lab + "_graders")) return 1;
  const std::string exe = graders_exe(b, lab);
  const std::vector<std::string> listed = list_tests(exe, filter);
  const std::string results = b.dir + "/results/check";
  make_dirs(results);
  std::error_code ec;
  for (const auto& t : listed) fs::remove(results + "/" + safe_name(t) + ".json", ec);  // this check's alone
  RunSpec s;
  s.argv = {exe, "--gtest_filter=" + filter, "--convlab-impl=student", "--convlab-results=" + results};
  s.cwd = b.dir;
  s.limits.idle_timeout_s = lab.spec.test_timeout_s;
  s.limits.open_files = 0;
  s.progress_marker = "[ RUN      ]";
  const RunResult r = long_step("running the " + lab.spec.lab + (only.empty() ? "" : " " + only) + " graders", s,
                                static_cast<int>(listed.size()), "[ RUN      ] ");
  std::map<std::string, TestOutcome> recs;
  for (auto& [test, t] : newest_records({results}, lab))
    if (std::find(listed.begin(), listed.end(), test) != listed.end()) recs[test] = t;
  const std::vector<TestOutcome> failures = failures_smallest_first(recs);
  print_failures(failures, b);
  int skipped = 0;
  for (const auto& [test, t] : recs) skipped += t.skipped ? 1 : 0;
  const int not_run = static_cast<int>(listed.size() - recs.size());
  if (!r.ok() && r.exit_code != 1)
    std::cout << "\nThe graders process " << r.describe() << "; its last lines:\n"
              << r.output.substr(r.output.size() > 2000 ? r.output.size() - 2000 : 0) << "\n";
  // A failing correctness grader: the kernel's fault, or the compiler's? (recheck.hpp, issue 18)
  if (!failures.empty() && !b.cpu()) recheck_after_check(p, lab, b.dir, b.preset, recs);
  std::cout << "\n" << lab.spec.lab << (only.empty() ? "" : " " + only) << ": " << listed.size() << " tests, "
            << failures.size() << " failed, " << skipped << " skipped" << (not_run ? ", " + std::to_string(not_run) + " not run" : "")
            << "\n";
  if (only.empty()) std::cout << "one kernel only: convlab check " << lab.spec.lab << " --only KERNEL\n";
  else
    std::cout << "the same with ctest: ctest --test-dir " << b.shown << " -R '^" << lab.spec.lab << "\\.[a-z]+\\." << only
              << "\\.'\n";
  const std::vector<LabStatus> labs = all_statuses(p, b);
  for (const auto& st : labs)
    if (st.lab == &lab) {
      print_lab_summary(st, b.cpu(), only);
      // The next step in the lab being checked (its kernel, with --only) while it is not done;
      // then the first lab not done.
      LabStatus here = st;
      here.score.graders.erase(std::remove_if(here.score.graders.begin(), here.score.graders.end(),
                                              [&](const GraderResult& g) { return !of_kernel(g.id, only); }),
                               here.score.graders.end());
      const bool open = std::any_of(here.score.graders.begin(), here.score.graders.end(), [&](const GraderResult& g) {
        return !g.passed && !g.extra_credit && !(b.cpu() && g.kind == "speedup");
      });
      here.done = !open;
      std::cout << "\nnext: " << next_step(open ? std::vector<LabStatus>{here} : labs, b) << "\n";
    }
  const bool ran = !listed.empty() && static_cast<int>(recs.size()) - skipped > 0;
  return failures.empty() && not_run == 0 && ran && (r.ok() || r.exit_code == 1) ? 0 : 1;
}

namespace {

// `convlab bench LAB --traffic`: the benchmark once under Nsight Compute (traffic.hpp).
int traffic_main(const Lab& lab, const BuildInfo& b) {
  const std::string ncu = find_ncu();
  const std::string cpu_way = "The CPU backend counts every load of your kernels exactly: cmake --workflow --preset cpu, "
                              "then convlab check " + lab.spec.lab + " (the technique graders print the counts).";
  if (ncu.empty()) {
    std::cout << "\nMemory traffic needs Nsight Compute (ncu), which is not on the PATH, in /usr/local/cuda/bin or in "
                 "/opt/nvidia/nsight-compute/.\n" << cpu_way << "\n";
    return 1;
  }
  const std::string dir = b.dir + "/results/bench";
  make_dirs(dir);
  const std::string report = dir + "/" + lab.spec.lab + ".traffic";
  std::string metrics;
  for (const std::string& m : kTrafficMetrics) metrics += (metrics.empty() ? "" : ",") + m;
  RunSpec s;
  s.argv = {ncu, "--profile-from-start", "off", "--target-processes", "all", "--metrics", metrics, "-f", "-o", report,
            b.dir + "/" + lab.dir + "/" + lab.spec.lab + "_bench", "--quick", "--traffic"};
  s.cwd = b.dir;
  s.limits.open_files = 0;
  const RunResult r = long_step("profiling " + lab.spec.lab + "'s kernels with Nsight Compute", s);
  const auto cannot = [&](const std::string& why) {
    std::cout << "\nNo memory traffic: " << why << ".\n" << cpu_way << "\n";
    return 1;
  };
  if (r.exit_code == 77 || r.output.find("skipped:") != std::string::npos)
    return cannot("no usable GPU at run time (" + trim(head_lines(r.output, 1)) + ")");
  if (!r.ok()) {
    const std::string why = ncu_failure(r.output);
    std::cout << head_lines(r.output, 20);
    return cannot(why.empty() ? "ncu " + r.describe() : why);
  }
  const std::vector<TrafficCall> calls = parse_traffic_calls(r.output);
  if (calls.empty())
    return cannot(lab.spec.lab + "'s benchmark marks no traffic calls (the benchmarks of labs 01 to 05 do; "
                                 "lab 06's layers do not)");
  RunSpec imp;
  // Base units: ncu otherwise scales each figure for reading ("16.78 Mbyte"); parse_ncu_csv also
  // reads the units row, so a version that ignores the option is still read right.
  imp.argv = {ncu, "-i", report + ".ncu-rep", "--csv", "--page", "raw", "--print-units", "base"};
  imp.cwd = b.dir;
  const RunResult csv = long_step("reading the profile", imp);
  if (!csv.ok()) {
    const std::string why = ncu_failure(csv.output);
    return cannot(why.empty() ? "ncu -i " + csv.describe() + ": " + trim(head_lines(csv.output, 3)) : why);
  }
  std::vector<CallTraffic> traffic;
  try {
    traffic = attribute(calls, parse_ncu_csv(csv.output));
  } catch (const Error& e) {
    const std::string why = ncu_failure(csv.output);
    return cannot(why.empty() ? e.what() : why);
  }
  std::cout << "\n" << lab.spec.lab << ": memory traffic per output (Nsight Compute, " << calls.size()
            << " profiled calls, the benchmark's small problems)\n\n"
            << traffic_table(traffic);
  write_file_atomic(dir + "/" + lab.spec.lab + ".traffic.json", traffic_json(traffic) + "\n");
  std::cout << "every number: " << dir << "/" << lab.spec.lab << ".traffic.json; the profile: " << report
            << ".ncu-rep (ncu-ui opens it)\n";
  return 0;
}

}  // namespace

int bench_main(const Project& p, const StudentBuild& sb, const std::string& name, const std::string& plot,
               bool traffic) {
  const Lab& lab = p.find(name);
  BuildInfo b = resolve(p, sb);
  const auto needs_gpu = [&] {
    std::cout << "\nBenchmarks need a GPU: " << b.shown << " uses the CPU backend (" << b.backend_reason
              << "), which checks your kernels but does not time them.\nOn a machine with an NVIDIA GPU: "
              << "cmake --workflow --preset default, then convlab bench " << lab.spec.lab << "\n";
    return 1;
  };
  if (b.configured && b.cpu()) return needs_gpu();
  if (!b.configured) {
    if (!configure(p, b)) return 1;  // and says which backend it chose
    if (b.cpu()) return needs_gpu();
  }
  if (!build(p, b, lab.spec.lab + "_bench")) return 1;
  if (traffic) return traffic_main(lab, b);
  const std::string json = b.dir + "/results/bench/" + lab.spec.lab + ".json";
  make_dirs(b.dir + "/results/bench");
  RunSpec s;
  s.argv = {b.dir + "/" + lab.dir + "/" + lab.spec.lab + "_bench", "--json", json};
  s.cwd = b.dir;
  s.limits.open_files = 0;
  const RunResult r = long_step("benchmarking " + lab.spec.lab, s);
  // The table (its progress lines were shown while it ran).
  for (const auto& line : split(r.output, '\n'))
    if (!starts_with(line, "bench: ") && !starts_with(line, "[")) std::cout << line << "\n";
  if (r.exit_code == 77) {
    std::cout << "(no usable GPU at run time: nothing was timed; see the line above)\n";
    return 1;
  }
  if (r.exit_code != 0) return 1;
  std::cout << "every number: " << json << "\n";
  if (!plot.empty()) return plot_main(json, plot);
  std::cout << "the roofline chart of this run: convlab bench " << lab.spec.lab << " --plot roofline.svg\n";
  return 0;
}

int plot_main(const std::string& json_path, const std::string& out) {
  if (out.empty()) throw Error("plot: the output file (.svg) is required");
  std::string svg;
  try {
    svg = roofline_svg(roofline_from_bench_json(read_file(json_path)));
  } catch (const std::invalid_argument& e) {
    throw Error(json_path + ": " + e.what());
  }
  write_file_atomic(out, svg);
  std::cout << "wrote the roofline chart " << out << " (open it in a browser)\n";
  return 0;
}

int watch_main(const Project& p, const StudentBuild& b, const std::string& name, int cycles, const std::string& only) {
  const Lab& lab = p.find(name);
  const auto snapshot = [&] {
    std::uint64_t h = 0;
    for (const std::string& dir : {lab.starter, lab.dir}) {
      std::error_code ec;
      for (const auto& e : fs::recursive_directory_iterator(p.root + "/" + dir, ec)) {
        const auto t = fs::last_write_time(e.path(), ec).time_since_epoch().count();
        h = fnv1a(e.path().string() + std::to_string(t), h);
      }
    }
    return h;
  };
  std::uint64_t last = snapshot();
  for (int n = 0; cycles <= 0 || n < cycles; ++n) {
    check_main(p, b, name, only);
    if (cycles > 0 && n + 1 >= cycles) break;
    std::cout << "\nwatching " << lab.starter << " and " << lab.dir << " (Ctrl-C to stop) ..." << std::endl;
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      const std::uint64_t now = snapshot();
      if (now != last) {
        last = now;
        break;
      }
    }
  }
  return 0;
}

int run_start_main(const Project& p, const std::string& build_dir) {
  const BuildInfo b = read_build(p.root, build_dir, "");
  const std::string results = b.dir + "/results/student";
  make_dirs(results);
  write_file_atomic(results + "/.run-start", utc_now() + "\n");
  std::cout << "convlab: " << b.describe() << "\n";
  return 0;
}

namespace {

// What the graders of this run did: tests that ran, failed, were skipped for want of a GPU.
struct RunCounts {
  int ran = 0, failed = 0, gpu_skipped = 0;
  std::string gpu_reason;
};

RunCounts count_run(const Project& p, const std::string& results) {
  RunCounts c;
  const double since = modified_at(results + "/.run-start");
  if (since <= 0) return c;
  for (const auto& lab : p.labs)
    for (const auto& [name, t] : newest_records({results}, lab, since)) {
      if (!lab.spec.grader_for_test(name)) continue;  // the lab's own CPU checks are not graders
      if (t.skipped && t.message.find("GPU test skipped") != std::string::npos) {
        ++c.gpu_skipped;
        if (c.gpu_reason.empty()) c.gpu_reason = first_informative_line(t.message);
        continue;
      }
      ++c.ran;
      c.failed += t.recorded && !t.passed && !t.skipped ? 1 : 0;
    }
  return c;
}

}  // namespace

int run_end_main(const Project& p, const std::string& build_dir) {
  const BuildInfo b = read_build(p.root, build_dir, "");
  const RunCounts c = count_run(p, b.dir + "/results/student");
  // For the summary after the run (next_step_main), which cannot tell by itself whether this
  // ctest invocation ran graders at all.
  write_file_atomic(b.dir + "/results/student/.run-end", std::to_string(c.ran) + " " + std::to_string(c.failed) + " " +
                                                              std::to_string(c.gpu_skipped) + "\n");
  std::cout << "convlab: this run: " << c.ran << " graders ran, " << c.failed << " failed";
  if (c.gpu_skipped == 0) {
    std::cout << "\n";
    return 0;
  }
  std::cout << ", " << c.gpu_skipped << " could not run: " << c.gpu_reason << "\n"
            << "Without a usable GPU, check your kernels on the CPU backend: cmake --workflow --preset cpu\n";
  return 1;
}

int next_step_main(const Project& p, const std::string& build_dir) {
  try {
    const BuildInfo b = read_build(p.root, build_dir, "");
    const std::string results = b.dir + "/results/student";
    // The counts convlab.run_end left, once: a ctest run without graders (`-R docs`) has none.
    std::string counts;
    try {
      counts = read_file(results + "/.run-end");
    } catch (const Error&) {
    }
    std::error_code gone;
    fs::remove(results + "/.run-end", gone);
    RunCounts c;
    const bool graders_ran = std::sscanf(counts.c_str(), "%d %d %d", &c.ran, &c.failed, &c.gpu_skipped) == 3;
    std::vector<LabStatus> labs;
    for (const auto& lab : p.labs) {
      labs.push_back(lab_status(lab, newest_records({results}, lab), list_tests(graders_exe(b, lab)), b.cpu()));
      // The next run in lab order (label 'next') goes on to the next lab once this one's
      // correctness graders all pass.
      const std::string marker = results + "/" + lab.spec.lab + ".done";
      std::error_code ec;
      if (labs.back().correctness_done) write_file_atomic(marker, utc_now() + "\n");
      else fs::remove(marker, ec);
    }
    std::cout << "\nconvlab: ";
    if (graders_ran)
      std::cout << c.ran << " graders ran in this run, " << c.failed << " failed"
                << (c.gpu_skipped ? ", " + std::to_string(c.gpu_skipped) + " could not run for want of a GPU" : "")
                << "; ";
    std::cout << "where you stand (" << b.shown << "):\n\n"
              << status_table(labs, b.cpu()) << points_line(labs, b.cpu()) << "\n\nnext: " << next_step(labs, b)
              << "\n";
  } catch (const std::exception& e) {
    // After the tests: a summary that cannot be made must not turn the run red.
    std::cout << "convlab: no summary: " << e.what() << "\n";
  }
  return 0;
}

}  // namespace convlab::cli
