// Lab grader executables: registration, seeds, skip rules and outcome records.
// See convlab/testbed.hpp.
#include "convlab/testbed.hpp"

#include "convlab/gpu.hpp"
#include "convlab/random.hpp"
#include "convlab/record.hpp"

#include <gtest/gtest.h>
#ifdef CONVLAB_BACKEND_CPU
#include <convlab_cpu/launch.hpp>
#endif

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>
#include <stdexcept>

namespace convlab {
namespace {

std::string g_impl = "student";
std::string g_results_dir;
std::uint64_t g_current_seed = 0;

class FunctionTest : public ::testing::Test {
public:
  explicit FunctionTest(std::function<void()> body) : body_(std::move(body)) {}
  void TestBody() override { body_(); }

private:
  std::function<void()> body_;
};

// Writes one JSON record per test, for `convlab` and for instructors' tools.
class RecordListener : public ::testing::EmptyTestEventListener {
public:
  explicit RecordListener(std::string lab) : lab_(std::move(lab)) {}
  void OnTestStart(const ::testing::TestInfo& info) override {
    reset_current_record();
    auto& r = current_record();
    r.lab = lab_;
    r.test = std::string(info.test_suite_name()) + "." + info.name();
    r.impl = g_impl;
    r.base_seed = base_seed();
    r.seed = test_seed(r.test);
  }
  void OnTestPartResult(const ::testing::TestPartResult& part) override {
    auto& r = current_record();
    if (!r.message.empty()) r.message += "\n";
    r.message += part.message();
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    auto& r = current_record();
    r.skipped = info.result()->Skipped();
    r.passed = info.result()->Passed();
    if (g_results_dir.empty()) return;
    try {
      write_record(r, g_results_dir);
    } catch (const std::exception& e) {
      std::cerr << "convlab: warning: " << e.what() << "\n";
    }
  }

private:
  std::string lab_;
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
  auto wrapped = [needs_gpu, full, body = std::move(body)] {
    g_current_seed = test_seed(full);
#ifdef CONVLAB_BACKEND_CPU
    // The order of a block's threads between barriers follows the test's seed,
    // so a race shows up, and replays with it.
    convlab_cpu::set_schedule(convlab_cpu::Schedule::shuffle, g_current_seed);
#endif
    if (needs_gpu) {
      std::string reason;
      if (!gpu_available(&reason)) GTEST_SKIP() << "GPU test skipped: " << reason;
    }
    SCOPED_TRACE("seed " + std::to_string(g_current_seed) + "; replay this exact test with: CONVLAB_SEED=" +
                 std::to_string(base_seed()) + " ctest --test-dir <build dir> -R '^" + full + "$' --output-on-failure");
    body();
  };
  ::testing::RegisterTest(suite.c_str(), case_name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [wrapped]() -> ::testing::Test* { return new FunctionTest(wrapped); });
}

int run_lab_main(int argc, char** argv, const char* lab, const char* spec_path, void (*register_tests)(Registry&)) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strncmp(a, "--convlab-impl=", 15) == 0) g_impl = a + 15;
    else if (std::strncmp(a, "--convlab-results=", 18) == 0) g_results_dir = a + 18;
    else args.push_back(argv[i]);
  }
  if (const char* env = std::getenv("CONVLAB_RESULTS_DIR"); env && *env) g_results_dir = env;
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);  // argv[argc] is null: GoogleTest's flag parser relies on it
  ::testing::InitGoogleTest(&n, args.data());
  try {
    const std::uint64_t seed = base_seed();  // rejects a malformed CONVLAB_SEED before any test runs
    if (!::testing::GTEST_FLAG(list_tests))  // test discovery reads the listing: keep it clean
      std::cout << "convlab: " << lab << " graders (" << g_impl << "), base seed " << seed
                << (seed_from_environment() ? " (from CONVLAB_SEED)" : " (fresh; CONVLAB_SEED=<seed> replays a run)")
                << "\n";
    LabSpec spec = load_spec(spec_path);
    // An instructor's calibration (convlab calibrate) replaces the default speed thresholds.
    if (const char* cal = std::getenv("CONVLAB_CALIBRATION"); cal && *cal) {
      const int changed = apply_calibration(spec, cal);
      if (!::testing::GTEST_FLAG(list_tests))
        std::cout << "convlab: " << changed << " speed threshold(s) from the calibration " << cal << "\n";
    }
    Registry reg(lab, std::move(spec));
    register_tests(reg);
    reg.cpu("cpu", "spec", "graders_match_tests", [&reg] { check_spec_matches_tests(reg); });
    ::testing::UnitTest::GetInstance()->listeners().Append(new RecordListener(lab));
    return RUN_ALL_TESTS();
  } catch (const std::exception& e) {
    std::cerr << "convlab: cannot set up the graders of " << lab << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace convlab
