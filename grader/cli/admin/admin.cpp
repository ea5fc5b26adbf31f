// calibrate. See admin.hpp.
#include "admin/admin.hpp"

#include "common/hardware.hpp"
#include "common/progress.hpp"
#include "common/sandbox.hpp"
#include "grading/scoring.hpp"
#include "common/util.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include <unistd.h>

extern char** environ;

namespace convlab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The reference build in `build` (configured with --preset, its graders built for `labs`).
void build_reference(const Project& p, const CalibrateOptions& o, const std::vector<const Lab*>& labs,
                     const std::string& build) {
  std::vector<std::string> configure = {"cmake", "-S", p.root, "-B", build, "--preset", o.preset,
                                        "-DCONVLAB_IMPL=reference", "-DCONVLAB_SELFTEST=OFF", "-DCONVLAB_BENCHMARKS=OFF"};
  if (!o.cuda_arch.empty()) configure.push_back("-DCMAKE_CUDA_ARCHITECTURES=" + o.cuda_arch);
  const auto tool = [&](std::vector<std::string> argv, double timeout_s) {
    RunSpec s;
    s.argv = std::move(argv);
    s.cwd = p.root;
    s.limits.timeout_s = timeout_s;
    s.limits.open_files = 0;
    return s;
  };
  RunResult r = run_with_progress("configuring the reference build in " + build, tool(configure, 900));
  if (!r.ok()) throw Error("cannot configure the reference build: " + r.describe() + "\n" + r.output);
  std::vector<std::string> targets = {"cmake", "--build", build, "--target"};
  for (const Lab* l : labs) targets.push_back(l->spec.lab + "_graders");
  r = run_with_progress("building the reference graders", tool(targets, 3600));
  if (!r.ok()) throw Error("cannot build the reference graders: " + r.describe() + "\n" + r.output);
}

// The lab's speed tests run on the reference, their records written to `results`; how it ended.
RunResult time_reference(const Lab& l, const std::string& build, const std::string& results) {
  RunSpec s;
  s.argv = {build + "/" + l.dir + "/" + l.spec.lab + "_graders", "--gtest_filter=" + l.spec.lab + ".speedup.*",
            "--convlab-impl=reference", "--convlab-results=" + results};
  s.cwd = build;
  s.limits.idle_timeout_s = l.spec.test_timeout_s;
  s.limits.open_files = 0;
  for (char** e = ::environ; *e; ++e)
    if (!starts_with(*e, "CONVLAB_CALIBRATION=") && !starts_with(*e, "CONVLAB_RESULTS_DIR=")) s.env.emplace_back(*e);
  // A bar over the lab's speed tests: each takes seconds to minutes.
  int speed_tests = 0;
  {
    const RunResult list = run_tool({s.argv[0], "--gtest_list_tests", s.argv[1]}, "", 60);
    for (const auto& line : split(list.output, '\n')) speed_tests += starts_with(line, "  ") ? 1 : 0;
  }
  return run_with_progress("timing the reference of " + l.spec.lab, s, speed_tests, "[ RUN      ] ");
}

// A lab's calibrated thresholds: each speed grader's from the lowest speed-up the reference reached
// in its tests, printed as a line of the table.
json calibrate_lab(const Lab& l, const CalibrateOptions& o, const std::string& build) {
  const std::string results = build + "/results/calibrate";
  std::error_code ec;
  fs::remove_all(results, ec);
  make_dirs(results);
  const RunResult r = time_reference(l, build, results);
  std::map<std::string, double> lowest;
  for (const auto& e : fs::directory_iterator(results, ec)) {
    const TestOutcome t = read_record(e.path().string());
    const GraderSpec* g = l.spec.grader_for_test(t.name);
    if (!g || g->kind != "speedup") continue;
    if (t.skipped) throw Error("calibrate: " + t.name + " was skipped: " + t.message);
    if (!t.ratio || !(*t.ratio > 0)) throw Error("calibrate: " + t.name + " measured no speed-up: " + t.message);
    if (!lowest.count(g->id) || *t.ratio < lowest[g->id]) lowest[g->id] = *t.ratio;
  }
  json lab = json::object();
  for (const auto& g : l.spec.graders) {
    if (g.kind != "speedup") continue;
    if (!lowest.count(g.id)) throw Error("calibrate: no speed measured for " + l.spec.lab + " " + g.id + " (" + r.describe() + ")");
    const double threshold = o.fraction * lowest[g.id];
    const double partial = threshold * g.partial_from / g.threshold;
    lab[g.id] = {{"threshold", threshold}, {"partial_from", partial}, {"reference_ratio", lowest[g.id]}};
    std::printf("%-7s %-18s %11.3gx %11.3gx %11.3gx\n", l.spec.lab.c_str(), g.id.c_str(), lowest[g.id], g.threshold,
                threshold);
  }
  return lab;
}

}  // namespace

int calibrate_main(const Project& p, const CalibrateOptions& o) {
  if (o.out.empty()) throw Error("calibrate: --out FILE is required");
  if (!(o.fraction > 0 && o.fraction <= 1)) throw Error("calibrate: --fraction must be in (0, 1]");
  if (!p.has_reference()) throw Error("calibrate needs the reference solutions (reference/), absent from this copy");
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const json hw = probe_hardware(visible && *visible ? visible : "0");
  if (!hw.value("available", false))
    throw Error("calibrate needs a GPU to time the reference on: " + hw.value("summary", std::string("none found")));
  std::vector<const Lab*> labs;
  if (o.labs.empty())
    for (const auto& l : p.labs) labs.push_back(&l);
  else
    for (const auto& n : o.labs) labs.push_back(&p.find(n));

  const std::string build = o.build_dir.empty() ? p.root + "/build/calibrate" : fs::absolute(o.build_dir).string();
  build_reference(p, o, labs, build);

  json out_labs = json::object();
  std::printf("\n%-7s %-18s %12s %12s %12s\n", "lab", "grader", "reference", "default", "calibrated");
  for (const Lab* l : labs) out_labs[l->spec.lab] = calibrate_lab(*l, o, build);
  const json file = {{"convlab_calibration", 1},
                     {"fraction", o.fraction},
                     {"device", hw.value("summary", std::string())},
                     {"created", utc_now()},
                     {"rule", "threshold = fraction x the lowest speed-up the reference reached on this GPU; "
                              "partial_from keeps the spec's proportion"},
                     {"labs", out_labs}};
  write_file_atomic(o.out, file.dump(2) + "\n");
  std::printf("\nthresholds are %.0f%% of what the reference reached on %s.\nwrote %s; use it with "
              "`convlab grade --calibration %s` (the graders read it from CONVLAB_CALIBRATION).\n",
              o.fraction * 100, hw.value("summary", std::string("this GPU")).c_str(), o.out.c_str(), o.out.c_str());
  return 0;
}

}  // namespace convlab::cli
