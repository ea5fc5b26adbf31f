// Lab grader executables: registration, seeds, skip rules and outcome records.
// See convlab/testbed.hpp.
#include "convlab/testbed.hpp"

#include "convlab/brief_failures.hpp"
#include "convlab/gate.hpp"
#include "convlab/gpu.hpp"
#include "convlab/random.hpp"
#include "convlab/record.hpp"
#include "convlab/remote.hpp"
#include "convlab/technique.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>

#include <unistd.h>

namespace convlab {
namespace {

std::string g_impl = "student";
std::string g_results_dir;
std::string g_record_key;  // CONVLAB_RECORD_KEY: records are signed with it (convlab grade)
std::uint64_t g_current_seed = 0;
bool g_held_failed = false;  // a held-back speed test failed on its counted call (the exit status says so)
int g_cpu_schedule = 0;  // the CPU backend's order of a block's threads: 0 shuffle, 1 in order, 2 reverse

// CONVLAB_CPU_SCHEDULE, read by the judge (the runner's environment has no CONVLAB_* settings).
int cpu_schedule_from_environment() {
  const char* env = std::getenv("CONVLAB_CPU_SCHEDULE");
  if (!env || !*env || std::strcmp(env, "shuffle") == 0) return 0;
  if (std::strcmp(env, "in-order") == 0) return 1;
  if (std::strcmp(env, "reverse") == 0) return 2;
  throw std::invalid_argument(std::string("CONVLAB_CPU_SCHEDULE must be shuffle, in-order or reverse, not '") + env + "'");
}

// The runner built next to this judge: <this executable's folder>/<lab>_runner.
std::string default_runner(const char* lab) {
  char self[PATH_MAX] = {};
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string(".");
  dir = dir.substr(0, dir.find_last_of('/'));
  return dir + "/" + lab + "_runner";
}

class FunctionTest : public ::testing::Test {
public:
  explicit FunctionTest(std::function<void()> body) : body_(std::move(body)) {}
  void TestBody() override { body_(); }

private:
  std::function<void()> body_;
};

// GoogleTest's status markers ("[  PASSED  ]", "[  SKIPPED ]": a '[', ten capitals or spaces, a
// ']') in a printed line, with parentheses for brackets: ctest's skip rule looks for one anywhere
// in a test's output.
std::string without_markers(std::string line) {
  for (std::size_t p = 0; p + 11 < line.size(); ++p) {
    if (line[p] != '[' || line[p + 11] != ']') continue;
    bool marker = true;
    for (std::size_t k = p + 1; k < p + 11; ++k) marker = marker && (line[k] == ' ' || (line[k] >= 'A' && line[k] <= 'Z'));
    if (marker) line[p] = '(', line[p + 11] = ')';
  }
  return line;
}

// Writes one JSON record per test, for `convlab` and for instructors' tools.
class RecordListener : public ::testing::EmptyTestEventListener {
public:
  explicit RecordListener(std::string lab) : lab_(std::move(lab)) {}
  void OnTestProgramStart(const ::testing::UnitTest& unit) override {
    list_speed_tests(unit);
    // A process that will run technique tests on a GPU starts their counting runner now, in the
    // background of the tests before them (issue 29: the profiler's start-up, about 1.5 s, was
    // every such process's wait). The filter has been applied: should_run() is this run's.
    // Not where speed tests run too (`convlab check`): each counts its timed call on the plain
    // runner, which needs the GPU's profiler to itself, so the counting runner would quit there.
    if (kCpuBackend || ::testing::GTEST_FLAG(list_tests)) return;
    bool technique = false;
    for (int i = 0; i < unit.total_test_suite_count(); ++i) {
      const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
      const std::string name = suite.name();
      const bool is_technique = name.find(".technique.") != std::string::npos,
                 is_speed = name.find(".speedup.") != std::string::npos;
      if (!is_technique && !is_speed) continue;
      for (int k = 0; k < suite.total_test_count(); ++k)
        if (suite.GetTestInfo(k)->should_run()) {
          if (is_speed) return;
          technique = true;
        }
    }
    if (technique) remote::prestart_counting();
  }
  // The speed tests this run will run, in order: a speed test's count may wait for the last.
  void list_speed_tests(const ::testing::UnitTest& unit) {
    for (int i = 0; i < unit.total_test_suite_count(); ++i) {
      const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
      if (std::string(suite.name()).find(".speedup.") == std::string::npos) continue;
      for (int k = 0; k < suite.total_test_count(); ++k)
        if (suite.GetTestInfo(k)->should_run())
          speed_tests_.push_back(std::string(suite.name()) + "." + suite.GetTestInfo(k)->name());
    }
  }
  void OnTestStart(const ::testing::TestInfo& info) override {
    reset_current_record();
    (void)remote::take_seconds();  // between tests: no test's
    started_ = std::chrono::steady_clock::now();
    auto& r = current_record();
    r.lab = lab_;
    r.test = std::string(info.test_suite_name()) + "." + info.name();
    r.impl = g_impl;
    r.base_seed = base_seed();
    r.seed = test_seed(r.test);
    const auto at = std::find(speed_tests_.begin(), speed_tests_.end(), r.test);
    set_speed_tests_after(at == speed_tests_.end() ? 0 : int(speed_tests_.end() - at) - 1);
  }
  void OnTestPartResult(const ::testing::TestPartResult& part) override {
    // The record holds the grader's words: front ends add the replay line for their build folder.
    const std::string text = failure_text(part.message());
    if (text.empty()) return;
    auto& r = current_record();
    if (!r.message.empty()) r.message += "\n";
    r.message += text;
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    auto& r = current_record();
    r.skipped = info.result()->Skipped();
    r.passed = info.result()->Passed();
    // What the kernels' code printed: into the record's own field, which no verdict reads, and
    // onto this process's output for a student's ctest, each line indented under a heading, so
    // that no printed line can pass for GoogleTest's ("[  PASSED  ]") or ctest's skip marker.
    r.output = remote::take_printed();
    r.seconds = remote::take_seconds();
    double waited = 0;
    for (const auto& [phase, s] : r.seconds) waited += s;
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    r.seconds["host"] = std::max(0.0, total - waited);
    r.seconds["total"] = total;
    if (!r.output.empty()) {
      std::string shown;
      for (std::size_t b = 0; b < r.output.size();) {
        const auto e = r.output.find('\n', b);
        std::string line = r.output.substr(b, e - b);
        shown += "  | " + without_markers(line) + "\n";
        b = e + 1;
      }
      std::printf("convlab: what your code printed in %s:\n%s", r.test.c_str(), shown.c_str());
      std::fflush(stdout);
    }
    // A speed test whose count waits is held back (technique.hpp); the records of those whose
    // counts were made in this test get their verdicts and are written now.
    if (r.count_deferred) held_[r.test] = r;
    else write(r);
    for (auto& [test, v] : take_deferred_verdicts()) {
      const auto it = held_.find(test);
      if (it == held_.end()) continue;
      TestRecord& h = it->second;
      if (!v.failure.empty()) {
        h.passed = false;
        h.message += (h.message.empty() ? "" : "\n") + v.failure;
        h.off_technique = v.off_technique;
        g_held_failed = true;
        std::printf("convlab: %s failed on its counted call (made after the process's last speed test):\n%s\n",
                    test.c_str(), v.failure.c_str());
      }
      if (!v.counters_refused.empty()) h.counters_refused = v.counters_refused;
      for (const auto& k : v.kernels)
        if (std::find(h.kernels.begin(), h.kernels.end(), k) == h.kernels.end()) h.kernels.push_back(k);
      if (h.escaped.empty()) h.escaped = v.escaped;
      write(h);
      held_.erase(it);
    }
  }
  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    for (const auto& [test, r] : held_)
      std::printf("convlab: %s: its timed call was never counted, so its record is not written (its runner was "
                  "replaced, or the count failed)\n",
                  test.c_str());
    std::fflush(stdout);
  }
  static void write(const TestRecord& r) {
    if (g_results_dir.empty()) return;
    try {
      write_record(r, g_results_dir, g_record_key);
    } catch (const std::exception& e) {
      std::cerr << "convlab: warning: " << e.what() << "\n";
    }
  }

private:
  std::string lab_;
  std::chrono::steady_clock::time_point started_;
  std::vector<std::string> speed_tests_;   // this run's speed tests, in order
  std::map<std::string, TestRecord> held_;  // speed tests' records waiting for their counts
};

// The automatic check that the lab's tests and its grading spec agree.
void check_spec_matches_tests(const Registry& reg) {
  const LabSpec& spec = reg.spec();
  std::set<std::string> used;
  for (const auto& name : reg.names()) {
    if (name.rfind(reg.lab() + ".cpu.", 0) == 0) continue;  // CPU checks are not graded
    const GraderSpec* g = spec.grader_for_test(name);
    EXPECT_NE(g, nullptr) << "test '" << name << "' belongs to no grader of " << spec.path;
    if (g) used.insert(g->id);
  }
  for (const auto& g : spec.graders) {
    if (kCpuBackend && g.kind == "speedup") continue;  // speed is not graded on the CPU backend
    EXPECT_TRUE(used.count(g.id)) << "grader '" << g.id << "' of " << spec.path << " has no test";
  }
  EXPECT_EQ(spec.lab, reg.lab()) << spec.path << " names lab '" << spec.lab << "'";
}

// The build folder for `ctest --test-dir` in a replay line: relative to the source tree when
// the build lies inside it (the README's commands run there), absolute otherwise.
std::string replay_build_dir() {
#if defined(CONVLAB_BINARY_DIR) && defined(CONVLAB_SOURCE_DIR)
  const std::string build = CONVLAB_BINARY_DIR, source = CONVLAB_SOURCE_DIR;
  if (build.rfind(source + "/", 0) == 0) return build.substr(source.size() + 1);
  return build;
#else
  return "<build dir>";
#endif
}

// When the kernels under test were built (the runner, which holds them, else this judge):
// records older than that judged other kernels.
std::filesystem::file_time_type kernels_built() {
  std::error_code ec;
  const std::string runner = remote::options().path;
  const auto t = std::filesystem::last_write_time(runner.empty() ? "/proc/self/exe" : runner, ec);
  return ec ? std::filesystem::file_time_type::max() : t;  // unknown: trust no record
}

}  // namespace

std::uint64_t current_seed() { return g_current_seed; }

std::string error_map_dir() {
  if (const char* env = std::getenv("CONVLAB_ERROR_MAP_DIR"); env && *env) return env;
  return g_results_dir.empty() ? std::string("convlab-error-maps") : g_results_dir + "/error-maps";
}

void expect_refused(const std::function<void()>& call, const std::string& message_part) {
  try {
    call();
    ADD_FAILURE() << "expected std::invalid_argument containing '" << message_part << "', but nothing was thrown";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(message_part), std::string::npos)
        << "the message '" << e.what() << "' does not contain '" << message_part << "'";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected std::invalid_argument containing '" << message_part << "', got: " << e.what();
  }
}

Registry::Registry(std::string lab, LabSpec spec) : lab_(std::move(lab)), spec_(std::move(spec)) {}

void Registry::gpu(const std::string& kind, const std::string& variant, const std::string& case_name,
                   std::function<void()> body) {
  add(true, kind, variant, case_name, std::move(body));
}

void Registry::cpu(const std::string& kind, const std::string& variant, const std::string& case_name,
                   std::function<void()> body) {
  add(false, kind, variant, case_name, std::move(body));
}

void Registry::add(bool needs_gpu, const std::string& kind, const std::string& variant, const std::string& case_name,
                   std::function<void()> body) {
  if (kCpuBackend && kind == "speedup") return;  // speed graders are not built for the CPU backend
  const std::string suite = lab_ + "." + kind + "." + variant;
  const std::string full = suite + "." + case_name;
  for (const auto& n : names_)
    if (n == full) throw std::logic_error("convlab: test '" + full + "' registered twice");
  names_.push_back(full);
  // Correctness and technique gate speed, early (convlab/gate.hpp): the graders to consult.
  std::vector<std::string> gates;
  if (kind == "speedup")
    if (const GraderSpec* g = spec_.grader_for_test(full)) gates = g->gated_by;
  auto wrapped = [needs_gpu, kind, full, gates, lab = lab_, body = std::move(body)] {
    // The process's last speed test counts the calls that waited for it, however it ends (skipped
    // by its gate, stopped early, or without a count of its own).
    struct LastSpeedTest {
      bool last;
      ~LastSpeedTest() {
        if (last) count_deferred_calls();
      }
    } last_speed{kind == "speedup" && speed_tests_after() == 0};
    g_current_seed = test_seed(full);
    // On the CPU backend the order of a block's threads between barriers follows the test's
    // seed, so a race shows up, and replays with it.
    remote::begin_test(g_cpu_schedule, g_current_seed);
    if (needs_gpu) {
      std::string reason;
      if (!gpu_available(&reason)) GTEST_SKIP() << "GPU test skipped: " << reason;
      // A technique test's calls are counted by the GPU's own counters (issue 27).
      if (kind == "technique" && !kCpuBackend) count_technique_calls();
    }
    // In a student's build, a speed test whose correctness or technique grader failed in this
    // build is not timed (it could earn nothing). Other kernels (the starter and planted bugs of the
    // self-test) must still fail their speed graders, so they are timed as before.
    if (g_impl == "student" && !g_results_dir.empty())
      for (const auto& gate : gates)
        if (const std::string why = failed_gate(g_results_dir, lab, gate, g_impl, kernels_built()); !why.empty())
          GTEST_SKIP() << why;
    SCOPED_TRACE("replay this exact test (seed " + std::to_string(base_seed()) + "): CONVLAB_SEED=" +
                 std::to_string(base_seed()) + " ctest --test-dir " + replay_build_dir() + " -R '^" + full +
                 "$' --output-on-failure");
    body();
  };
  ::testing::RegisterTest(suite.c_str(), case_name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [wrapped]() -> ::testing::Test* { return new FunctionTest(wrapped); });
}

int run_lab_main(int argc, char** argv, const char* lab, const char* spec_path, void (*register_tests)(Registry&)) {
  std::vector<char*> args;
  remote::RunnerOptions runner;
  runner.path = default_runner(lab);
  for (int i = 0; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strncmp(a, "--convlab-impl=", 15) == 0) g_impl = a + 15;
    else if (std::strncmp(a, "--convlab-results=", 18) == 0) g_results_dir = a + 18;
    else if (std::strncmp(a, "--convlab-runner=", 17) == 0) runner.path = a + 17;
    else if (std::strncmp(a, "--convlab-runner-prefix=", 24) == 0) runner.prefix = {a + 24};
    else if (std::strncmp(a, "--convlab-facts=", 16) == 0) runner.facts_path = a + 16;
    else args.push_back(argv[i]);
  }
  if (const char* env = std::getenv("CONVLAB_RESULTS_DIR"); env && *env) g_results_dir = env;
  // The signing key is the judge's alone: gone from the environment before any runner starts.
  if (const char* env = std::getenv("CONVLAB_RECORD_KEY"); env && *env) {
    g_record_key = env;
    ::unsetenv("CONVLAB_RECORD_KEY");
  }
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);  // argv[argc] is null: GoogleTest's flag parser relies on it
  ::testing::InitGoogleTest(&n, args.data());
  try {
    const std::uint64_t seed = base_seed();  // rejects a malformed CONVLAB_SEED before any test runs
    if (!::testing::GTEST_FLAG(list_tests))  // test discovery reads the listing: keep it clean
      std::cout << "convlab: " << lab << " graders (" << g_impl << "), base seed " << seed
                << (seed_from_environment() ? " (from CONVLAB_SEED)" : " (fresh; CONVLAB_SEED=<seed> replays a run)")
                << "\n";
    g_cpu_schedule = cpu_schedule_from_environment();
    LabSpec spec = load_spec(spec_path);
    // A request the runner does not answer within the test's time limit has hung.
    runner.timeout_s = spec.test_timeout_s;
    remote::configure(runner);
    // An instructor's calibration (convlab calibrate) replaces the default speed thresholds.
    if (const char* cal = std::getenv("CONVLAB_CALIBRATION"); cal && *cal) {
      const int changed = apply_calibration(spec, cal);
      if (!::testing::GTEST_FLAG(list_tests))
        std::cout << "convlab: " << changed << " speed threshold(s) from the calibration " << cal << "\n";
    }
    Registry reg(lab, std::move(spec));
    register_tests(reg);
    reg.cpu("cpu", "spec", "graders_match_tests", [&reg] { check_spec_matches_tests(reg); });
    install_brief_failures(g_results_dir, g_impl);  // a student's run: full reports for its first failures
    ::testing::UnitTest::GetInstance()->listeners().Append(new RecordListener(lab));
    const int status = RUN_ALL_TESTS();
    return status == 0 && g_held_failed ? 1 : status;
  } catch (const std::exception& e) {
    std::cerr << "convlab: cannot set up the graders of " << lab << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace convlab
