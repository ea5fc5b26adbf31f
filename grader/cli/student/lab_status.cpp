// Where a student stands. See lab_status.hpp.
#include "student/lab_status.hpp"

#include "common/sandbox.hpp"
#include "common/util.hpp"

#include <convlab/gate.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include <sys/stat.h>

namespace convlab::cli {

namespace fs = std::filesystem;

namespace {

// Seconds since the epoch of a file's modification time (0 when it has none).
double mtime_s(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return 0;
  return double(st.st_mtim.tv_sec) + 1e-9 * double(st.st_mtim.tv_nsec);
}

// When a build folder was last built: ninja's log, else its cache.
double built_at(const std::string& dir) {
  const double ninja = mtime_s(fs::path(dir) / ".ninja_log");
  return ninja > 0 ? ninja : mtime_s(fs::path(dir) / "CMakeCache.txt");
}

std::string cache_value(const std::string& cache, const std::string& name) {
  std::istringstream in(cache);
  for (std::string line; std::getline(in, line);) {
    if (!starts_with(line, name + ":")) continue;
    const auto eq = line.find('=');
    if (eq != std::string::npos) return line.substr(eq + 1);
  }
  return "";
}

std::string pad(const std::string& s, std::size_t width) {
  // Width in characters as a terminal shows them: UTF-8 continuation bytes take no column.
  std::size_t cols = 0;
  for (unsigned char c : s) cols += (c & 0xC0) != 0x80;
  return s + std::string(width > cols ? width - cols : 0, ' ');
}

std::size_t columns(const std::string& s) {
  std::size_t cols = 0;
  for (unsigned char c : s) cols += (c & 0xC0) != 0x80;
  return cols;
}

std::string speed_text(const GraderResult& g) {
  char buf[64];
  if (g.ratio) std::snprintf(buf, sizeof buf, "%.2gx / %.2gx", *g.ratio, g.threshold);
  else std::snprintf(buf, sizeof buf, "- / %.2gx", g.threshold);
  return buf;
}

std::string files_of(const Lab& lab) {
  std::string out;
  for (const auto& f : lab.spec.files) out += (out.empty() ? "" : ", ") + lab.starter + "/" + f;
  return out;
}

}  // namespace

std::string BuildInfo::describe() const {
  std::string s = shown;
  if (!configured)
    return s + " (not configured yet: its first build uses this machine's GPU, or the CPU backend without one)";
  if (backend == "cpu") s += " — the CPU backend (" + backend_reason + "): correctness graders only, no timing";
  else if (backend == "cuda") s += " — the CUDA backend" + (backend_reason.empty() ? "" : " (" + backend_reason + ")");
  if (!chosen.empty()) s += "; " + chosen;
  return s;
}

BuildInfo read_build(const std::string& root, const std::string& dir, const std::string& preset) {
  BuildInfo b;
  b.dir = fs::absolute(dir).lexically_normal().string();
  const std::string prefix = fs::path(root).lexically_normal().string() + "/";
  b.shown = starts_with(b.dir, prefix) ? b.dir.substr(prefix.size()) : b.dir;
  b.preset = preset;
  std::error_code ec;
  const fs::path cache = fs::path(b.dir) / "CMakeCache.txt";
  if (!fs::exists(cache, ec)) return b;
  b.configured = true;
  std::string text;
  try {
    text = read_file(cache.string());
  } catch (const Error&) {
    return b;
  }
  b.backend = cache_value(text, "CONVLAB_BACKEND_USED");
  b.backend_reason = cache_value(text, "CONVLAB_BACKEND_REASON");
  if (b.backend.empty()) b.backend = cache_value(text, "CONVLAB_BACKEND");  // a build configured before 'auto'
  if (b.backend_reason == "set by CONVLAB_BACKEND")
    b.backend_reason = b.backend == "cpu" ? "chosen by the preset" : "";
  if (b.backend == "cpu" && b.backend_reason.empty()) b.backend_reason = "chosen by the preset";
  return b;
}

BuildInfo choose_build(const std::string& root, const std::string& preset, const std::string& dir) {
  if (!dir.empty()) {
    BuildInfo b = read_build(root, dir, preset);
    b.chosen = "--build-dir";
    return b;
  }
  if (!preset.empty()) {
    BuildInfo b = read_build(root, root + "/build/" + preset, preset);
    b.chosen = "--preset " + preset;
    return b;
  }
  std::vector<std::pair<double, std::string>> built;
  for (const char* p : {"default", "cpu"}) {
    const std::string d = root + "/build/" + p;
    if (fs::exists(d + "/CMakeCache.txt")) built.push_back({built_at(d), p});
  }
  if (built.empty()) {
    BuildInfo b = read_build(root, root + "/build/default", "default");
    b.chosen = "no build yet";
    return b;
  }
  std::sort(built.begin(), built.end());
  BuildInfo b = read_build(root, root + "/build/" + built.back().second, built.back().second);
  b.chosen = built.size() > 1 ? "the build you ran last (of build/default and build/cpu)" : "the student build here";
  return b;
}

std::map<std::string, TestOutcome> newest_records(const std::vector<std::string>& dirs, const Lab& lab, double since) {
  std::map<std::string, std::pair<double, TestOutcome>> best;
  std::error_code ec;
  for (const auto& d : dirs) {
    if (!fs::is_directory(d, ec)) continue;
    for (const auto& e : fs::directory_iterator(d, ec)) {
      const std::string name = e.path().filename().string();
      if (!starts_with(name, lab.spec.lab + ".") || e.path().extension() != ".json") continue;
      const double when = mtime_s(e.path());
      if (since > 0 && when < since) continue;
      try {
        TestOutcome t = read_record(e.path().string());
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

std::vector<std::string> list_tests(const std::string& exe, const std::string& filter) {
  std::error_code ec;
  if (!fs::exists(exe, ec)) return {};
  std::vector<std::string> argv = {exe, "--gtest_list_tests"};
  if (!filter.empty()) argv.push_back("--gtest_filter=" + filter);
  const RunResult r = run_tool(argv, "", 60);
  if (!r.ok()) return {};
  std::vector<std::string> out;
  std::string suite;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || starts_with(line, "convlab:")) continue;
    if (line[0] != ' ') suite = trim(line);
    else out.push_back(suite + trim(line).substr(0, trim(line).find(' ')));
  }
  return out;
}

double modified_at(const std::string& path) { return mtime_s(path); }

std::string graders_exe(const BuildInfo& b, const Lab& lab) { return b.dir + "/" + lab.dir + "/" + lab.spec.lab + "_graders"; }

LabStatus lab_status(const Lab& lab, const std::map<std::string, TestOutcome>& records,
                     const std::vector<std::string>& listed, bool cpu_backend) {
  LabStatus s;
  s.lab = &lab;
  s.records = records;
  std::set<std::string> names(listed.begin(), listed.end());
  if (listed.empty())
    for (const auto& [name, t] : records) names.insert(name);
  std::map<std::string, GraderRun> runs;
  for (const auto& name : names) {
    const GraderSpec* g = lab.spec.grader_for_test(name);
    if (!g || (cpu_backend && g->kind == "speedup")) continue;
    ++s.tests_expected;
    TestOutcome t;
    const auto it = records.find(name);
    if (it != records.end()) {
      t = it->second;
      ++s.tests_recorded;
      if (t.skipped && t.message.find("GPU test skipped") != std::string::npos) {
        s.gpu_missing = true;
        if (s.gpu_reason.empty()) s.gpu_reason = first_informative_line(t.message);
      }
    } else {
      t.name = name;
      t.message = "not run yet";
    }
    runs[g->id].tests.push_back(t);
  }
  // The first failing test a reason names is the smallest case.
  for (auto& [id, run] : runs)
    std::stable_sort(run.tests.begin(), run.tests.end(), [](const TestOutcome& a, const TestOutcome& b) {
      return case_size(a.name) < case_size(b.name);
    });
  s.score = score_lab(lab.spec, runs);
  s.correctness_done = true;
  bool technique_done = true, speed_done = true;
  for (std::size_t i = 0; i < s.score.graders.size(); ++i) {
    GraderResult& g = s.score.graders[i];
    const bool counts = !g.extra_credit;
    if (g.kind == "speedup" && cpu_backend) {
      g.points = 0;
      g.passed = false;
      g.ran = false;
      g.reason = "needs a GPU (the CPU backend does not time kernels)";
      continue;
    }
    // A technique grader whose every test was skipped for what this build cannot record (its
    // evidence comes from a GPU build's compiled code): not reachable here.
    const bool all_recorded =
        std::all_of(g.tests.begin(), g.tests.end(), [](const TestOutcome& t) { return t.recorded; });
    const bool unreachable =
        g.kind == "technique" && !g.tests.empty() && all_recorded &&
        std::all_of(g.tests.begin(), g.tests.end(), [](const TestOutcome& t) {
          return t.skipped && t.message.find("GPU test skipped") == std::string::npos;
        });
    if (unreachable) {
      g.reason = "not checked on this build: " + first_informative_line(g.tests.front().message);
      continue;
    }
    if (counts) s.reachable += g.max_points;
    if (g.kind == "correctness" && counts && !(g.passed && all_recorded)) s.correctness_done = false;
    if (g.kind == "technique" && counts && !g.passed) technique_done = false;
    if (g.kind == "speedup" && counts && !g.passed) speed_done = false;
  }
  if (s.tests_expected == 0) s.correctness_done = false;
  s.done = s.correctness_done && technique_done && (cpu_backend || speed_done);
  return s;
}

std::vector<TestOutcome> failures_smallest_first(const std::map<std::string, TestOutcome>& records) {
  std::vector<TestOutcome> out;
  for (const auto& [name, t] : records)
    if (t.recorded && !t.passed && !t.skipped) out.push_back(t);
  std::stable_sort(out.begin(), out.end(), [](const TestOutcome& a, const TestOutcome& b) {
    const double sa = case_size(a.name), sb = case_size(b.name);
    return sa != sb ? sa < sb : a.name < b.name;
  });
  return out;
}

std::string replay_command(const TestOutcome& t, const BuildInfo& b) {
  return "CONVLAB_SEED=" + std::to_string(t.base_seed) + " ctest --test-dir " + b.shown + " -R '^" + t.name +
         "$' --output-on-failure";
}

std::string status_table(const std::vector<LabStatus>& labs, bool cpu_backend) {
  // The title goes last: it is the long column, and a terminal can wrap it without breaking the others.
  bool any_technique = false;
  for (const auto& s : labs)
    for (const auto& g : s.score.graders) any_technique |= g.kind == "technique";
  std::vector<std::vector<std::string>> rows = {{"lab", "correctness", "technique",
                                                 cpu_backend ? "speed" : "speed (reached / needed)", "extra", "points",
                                                 "title"}};
  for (const auto& s : labs) {
    int c_pass = 0, c_total = 0, t_pass = 0, t_total = 0;
    std::string speed, extra = "-";
    double extra_points = 0, extra_max = 0;
    for (const auto& g : s.score.graders) {
      if (g.extra_credit) {
        extra_points += g.points;
        extra_max += g.max_points;
        continue;
      }
      if (g.kind == "correctness") {
        ++c_total;
        c_pass += g.passed ? 1 : 0;
      } else if (g.kind == "technique") {
        ++t_total;
        t_pass += g.passed ? 1 : 0;
      } else if (!cpu_backend) {
        speed += (speed.empty() ? "" : ", ") + speed_text(g);
      }
    }
    if (cpu_backend) speed = "needs a GPU";
    if (extra_max > 0) extra = fmt_points(extra_points) + " / " + fmt_points(extra_max);
    std::string points = fmt_points(s.score.score) + " / " + fmt_points(cpu_backend ? s.reachable : s.score.max_score);
    if (cpu_backend) points += " (of " + fmt_points(s.score.max_score) + ")";
    std::string correctness = std::to_string(c_pass) + " / " + std::to_string(c_total);
    if (s.tests_recorded == 0) correctness += " (not run)";
    const std::string technique = t_total ? std::to_string(t_pass) + " / " + std::to_string(t_total) : "-";
    rows.push_back(
        {s.lab->spec.lab, correctness, technique, speed.empty() ? "-" : speed, extra, points, s.lab->spec.title});
  }
  if (!any_technique)
    for (auto& r : rows) r.erase(r.begin() + 2);
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], columns(r[i]));
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) line += (i ? "  " : "") + (i + 1 < r.size() ? pad(r[i], width[i]) : r[i]);
    out += line + "\n";
  }
  return out;
}

std::string points_line(const std::vector<LabStatus>& labs, bool cpu_backend) {
  double earned = 0, reachable = 0, total = 0;
  for (const auto& s : labs) {
    earned += s.score.score;
    reachable += s.reachable;
    total += s.score.max_score;
  }
  std::string line = "points: " + fmt_points(earned) + " of " + fmt_points(cpu_backend ? reachable : total);
  if (cpu_backend)
    line += " reachable on this machine; the other " + fmt_points(total - reachable) + " of the " + fmt_points(total) +
            " are speed points, which need a GPU";
  return line;
}

std::string next_step(const std::vector<LabStatus>& labs, const BuildInfo& b) {
  for (const auto& s : labs) {
    const Lab& lab = *s.lab;
    const std::string id = lab.spec.lab;
    if (s.gpu_missing)
      return "the graders could not run: " + s.gpu_reason +
             "\n  Without a usable GPU, run them on the CPU backend: cmake --workflow --preset cpu";
    if (s.tests_recorded == 0)
      return id + " — " + lab.spec.title + ": not checked yet. Fill in the TODO(student) regions of " + files_of(lab) +
             " (the handout: " + lab.dir + "/README.md), then: convlab check " + id;
    if (s.done) continue;
    for (const auto& g : s.score.graders) {
      if (g.extra_credit || g.passed || (g.kind == "speedup" && b.cpu())) continue;
      const auto failed = std::find_if(g.tests.begin(), g.tests.end(),
                                       [](const TestOutcome& t) { return t.recorded && !t.passed && !t.skipped; });
      if ((g.kind == "correctness" || g.kind == "technique") && failed != g.tests.end()) {
        const int n = static_cast<int>(std::count_if(g.tests.begin(), g.tests.end(), [](const TestOutcome& t) {
          return t.recorded && !t.passed && !t.skipped;
        }));
        std::string why = first_informative_line(failed->message);
        if (why.size() > 150) why = why.substr(0, 147) + "...";
        return id + " — fix " + g.id + " in " + files_of(lab) + ": " + std::to_string(n) + " of " +
               std::to_string(g.tests.size()) + " tests fail; the smallest, " + failed->name + ": " + why +
               "\n  replay it: " + replay_command(*failed, b);
      }
      if (g.kind == "technique" && g.reason.rfind("not checked on this build", 0) == 0) continue;
      if (g.kind == "correctness" || g.kind == "technique")
        return id + " — " + g.id + " has tests that have not run yet: convlab check " + id;
      // A speed grader (CUDA backend): correctness passed, the kernel is too slow.
      if (g.ratio)
        return id + " — make " + g.id.substr(g.id.find('.') + 1) + " faster: " + speed_text(g) +
               " (reached / needed). See where it stands: convlab bench " + id;
      return id + " — " + g.id + " has not been timed yet: convlab check " + id;
    }
  }
  if (b.cpu())
    return "every correctness grader passes. The speed graders need a GPU: run `cmake --workflow --preset default` "
           "on a machine with one.";
  return "every lab is done. Well done.";
}

}  // namespace convlab::cli
