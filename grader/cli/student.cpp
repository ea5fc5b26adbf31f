// The students' commands. See student.hpp.
#include "student.hpp"

#include "sandbox.hpp"
#include "scoring.hpp"
#include "util.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

namespace convlab::cli {

namespace fs = std::filesystem;

namespace {

std::string build_dir(const Project& p, const StudentBuild& b) {
  return b.dir.empty() ? p.root + "/build/" + b.preset : fs::absolute(b.dir).string();
}

// Runs a long step: a spinner and its latest line on a terminal, plain lines otherwise.
RunResult long_step(const std::string& what, RunSpec spec) {
  const bool tty = stdout_is_tty();
  const double t0 = now_s();
  if (!tty) std::cout << what << " ..." << std::endl;
  if (tty)
    spec.on_line = [&](const std::string& line) {
      std::string l = line.substr(0, 70);
      std::printf("\r\033[K%s (%.0f s) %s", what.c_str(), now_s() - t0, l.c_str());
      std::fflush(stdout);
    };
  RunResult r = run_sandboxed(spec);
  if (tty) std::printf("\r\033[K");
  std::cout << what << ": " << (r.ok() ? "done" : r.describe()) << " in " << fmt_seconds(now_s() - t0) << std::endl;
  return r;
}

// Configures (once) and builds `target`; prints the errors and returns false on failure.
bool build(const Project& p, const StudentBuild& b, const std::string& target) {
  const std::string dir = build_dir(p, b);
  if (!fs::exists(dir + "/CMakeCache.txt")) {
    RunSpec s;
    s.argv = {"cmake", "--preset", b.preset};
    if (!b.dir.empty()) s.argv.insert(s.argv.end(), {"-B", dir});
    s.cwd = p.root;
    s.limits.open_files = 0;
    const RunResult r = long_step("configuring (preset " + b.preset + ")", s);
    if (!r.ok()) {
      std::cout << head_lines(r.output, 60);
      return false;
    }
  }
  RunSpec s;
  s.argv = {"cmake", "--build", dir, "--target", target};
  s.cwd = p.root;
  s.limits.open_files = 0;
  const RunResult r = long_step("building " + target, s);
  if (!r.ok()) {
    std::cout << "\nThe build failed. The compiler says:\n\n" << r.output << "\n";
    return false;
  }
  return true;
}

std::string lab_exe(const Project& p, const StudentBuild& b, const Lab& lab, const std::string& suffix) {
  return build_dir(p, b) + "/" + lab.dir + "/" + lab.spec.lab + suffix;
}

// The newest record of every test of `lab` in the build's results folders.
std::map<std::string, TestOutcome> records(const std::string& build, const Lab& lab) {
  std::map<std::string, std::pair<fs::file_time_type, TestOutcome>> best;
  std::error_code ec;
  for (const char* sub : {"results/student", "results/check"}) {
    const fs::path dir = fs::path(build) / sub;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (!starts_with(name, lab.spec.lab + ".") || e.path().extension() != ".json") continue;
      try {
        TestOutcome t = read_record(e.path().string());
        const auto when = fs::last_write_time(e.path(), ec);
        auto it = best.find(t.name);
        if (it == best.end() || it->second.first < when) best[t.name] = {when, t};
      } catch (const Error&) {
      }
    }
  }
  std::map<std::string, TestOutcome> out;
  for (auto& [name, v] : best) out[name] = v.second;
  return out;
}

LabResult score_records(const Lab& lab, const std::map<std::string, TestOutcome>& recs) {
  std::map<std::string, GraderRun> runs;
  for (const auto& [name, t] : recs)
    if (const GraderSpec* g = lab.spec.grader_for_test(name)) runs[g->id].tests.push_back(t);
  return score_lab(lab.spec, runs);
}

std::string ratio_text(const GraderResult& g) {
  char buf[64];
  if (g.ratio) std::snprintf(buf, sizeof buf, "%.2gx / %.2gx", *g.ratio, g.threshold);
  else std::snprintf(buf, sizeof buf, "- / %.2gx", g.threshold);
  return buf;
}

}  // namespace

int status_main(const Project& p, const StudentBuild& b) {
  const std::string dir = build_dir(p, b);
  std::printf("%-7s %-34s %-12s %-26s %-6s %s\n", "lab", "title", "correctness", "speed (reached / needed)", "extra",
              "points");
  std::string next;
  for (const auto& lab : p.labs) {
    const auto recs = records(dir, lab);
    const LabResult r = score_records(lab, recs);
    int c_pass = 0, c_total = 0;
    std::string speed, extra = "-";
    double extra_points = 0, extra_max = 0;
    for (const auto& g : r.graders) {
      if (g.extra_credit) {
        extra_points += g.points;
        extra_max += g.max_points;
        continue;
      }
      if (g.kind == "correctness" || g.kind == "technique") {
        ++c_total;
        c_pass += g.passed ? 1 : 0;
      } else {
        speed += (speed.empty() ? "" : ", ") + ratio_text(g);
      }
    }
    if (extra_max > 0) extra = fmt_points(extra_points) + "/" + fmt_points(extra_max);
    const std::string title = lab.spec.title.substr(0, 34);
    std::printf("%-7s %-34s %-12s %-26s %-6s %s / %s\n", lab.spec.lab.c_str(), title.c_str(),
                (std::to_string(c_pass) + " / " + std::to_string(c_total)).c_str(), speed.c_str(), extra.c_str(),
                fmt_points(r.score).c_str(), fmt_points(r.max_score).c_str());
    if (!next.empty()) continue;
    if (recs.empty()) {
      next = "run `convlab check " + lab.spec.lab + "` (no results yet for " + lab.spec.slug + ")";
      continue;
    }
    for (const auto& g : r.graders)
      if (!g.passed && next.empty()) {
        if (!g.ran) next = lab.spec.lab + " " + g.id + " has not run: " + g.reason;
        else if (g.kind == "correctness" || g.kind == "technique")
          next = "fix " + lab.spec.lab + " " + g.id + " (" + g.reason.substr(0, 160) + "), then `convlab check " +
                 lab.spec.lab + "`";
        else next = "make " + lab.spec.lab + " faster (" + g.reason.substr(0, 120) + "): `convlab bench " + lab.spec.lab + "`";
      }
  }
  std::cout << "\nnext: " << (next.empty() ? "every lab is done. Well done." : next) << "\n"
            << "(from the results in " << dir << "/results; `convlab check LAB` brings them up to date)\n";
  return 0;
}

int check_main(const Project& p, const StudentBuild& b, const std::string& name) {
  const Lab& lab = p.find(name);
  if (!build(p, b, lab.spec.lab + "_graders")) return 1;
  const std::string results = build_dir(p, b) + "/results/check";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(results, ec))
    if (starts_with(e.path().filename().string(), lab.spec.lab + ".")) fs::remove(e.path(), ec);
  make_dirs(results);
  RunSpec s;
  s.argv = {lab_exe(p, b, lab, "_graders"), "--gtest_filter=" + lab.spec.lab + ".correctness.*:" + lab.spec.lab +
                                                ".speedup.*",
            "--convlab-impl=student", "--convlab-results=" + results};
  s.cwd = build_dir(p, b);
  s.limits.idle_timeout_s = lab.spec.test_timeout_s;
  s.limits.open_files = 0;
  s.progress_marker = "[ RUN      ]";
  const RunResult r = long_step("running the " + lab.spec.lab + " graders", s);
  const auto recs = records(build_dir(p, b), lab);
  int failed = 0, skipped = 0;
  for (const auto& [test, t] : recs) {
    if (t.skipped) ++skipped;
    if (t.passed || t.skipped) continue;
    ++failed;
    std::cout << "\nFAILED " << test << "\n" << head_lines(t.message, 30);
    if (t.message.empty() || t.message.back() != '\n') std::cout << "\n";
    std::cout << "  seed " << t.seed << "; replay: CONVLAB_SEED=" << t.base_seed << " " << s.argv[0]
              << " --gtest_filter='" << test << "'\n";
    const std::string map = build_dir(p, b) + "/results/check/" + safe_name(test) + ".ppm";
    if (fs::exists(map)) std::cout << "  error map: " << map << "\n";
  }
  if (!r.ok() && r.exit_code != 1)
    std::cout << "\nThe graders process " << r.describe() << "; its last lines:\n" << r.output.substr(r.output.size() > 2000 ? r.output.size() - 2000 : 0) << "\n";
  const LabResult score = score_records(lab, recs);
  std::cout << "\n" << lab.spec.lab << " — " << lab.spec.title << ": " << recs.size() << " tests, " << failed
            << " failed, " << skipped << " skipped\n";
  for (const auto& g : score.graders)
    std::cout << "  " << (g.passed ? "pass " : (g.ran ? "FAIL " : "---- ")) << g.id << ": " << fmt_points(g.points)
              << " / " << fmt_points(g.max_points) << "  " << g.reason.substr(0, 150) << "\n";
  std::cout << "  points if graded now: " << fmt_points(score.score) << " / " << fmt_points(score.max_score) << "\n";
  if (skipped > 0 && skipped == static_cast<int>(recs.size()))
    std::cout << "  (no GPU here: the GPU tests were skipped, see the reason above)\n";
  return failed == 0 && (r.ok() || r.exit_code == 1) ? 0 : 1;
}

int bench_main(const Project& p, const StudentBuild& b, const std::string& name) {
  const Lab& lab = p.find(name);
  if (!build(p, b, lab.spec.lab + "_bench")) return 1;
  RunSpec s;
  s.argv = {lab_exe(p, b, lab, "_bench")};
  s.cwd = build_dir(p, b);
  s.limits.open_files = 0;
  const RunResult r = long_step("benchmarking " + lab.spec.lab, s);
  std::cout << r.output;
  if (r.exit_code == 77) {
    std::cout << "(no GPU here: nothing to time)\n";
    return 0;
  }
  return r.exit_code == 0 ? 0 : 1;
}

int watch_main(const Project& p, const StudentBuild& b, const std::string& name, int cycles) {
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
    check_main(p, b, name);
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

}  // namespace convlab::cli
