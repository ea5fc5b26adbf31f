// Full failure reports for the first few failures of a student's run only. See
// convlab/brief_failures.hpp.
#include "convlab/brief_failures.hpp"

#include "convlab/gate.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>

namespace convlab {
namespace {

namespace fs = std::filesystem;

// Forwards every event to GoogleTest's own printer, except the failures of a test that runs
// after the run has reported kFullFailureReports failures: those are printed in short.
class BriefPrinter : public ::testing::TestEventListener {
public:
  BriefPrinter(::testing::TestEventListener* inner, std::string results, fs::file_time_type run_start)
      : inner_(inner), results_(std::move(results)), run_start_(run_start) {}
  void OnTestProgramStart(const ::testing::UnitTest& u) override { inner_->OnTestProgramStart(u); }
  void OnTestIterationStart(const ::testing::UnitTest& u, int i) override { inner_->OnTestIterationStart(u, i); }
  void OnEnvironmentsSetUpStart(const ::testing::UnitTest& u) override { inner_->OnEnvironmentsSetUpStart(u); }
  void OnEnvironmentsSetUpEnd(const ::testing::UnitTest& u) override { inner_->OnEnvironmentsSetUpEnd(u); }
  void OnTestSuiteStart(const ::testing::TestSuite& s) override { inner_->OnTestSuiteStart(s); }
  void OnTestStart(const ::testing::TestInfo& t) override {
    // Decided once per test: this test's failures are the run's next ones.
    brief_ = failed_records_since(results_, "student", run_start_) >= kFullFailureReports;
    test_ = std::string(t.test_suite_name()) + "." + t.name();
    inner_->OnTestStart(t);
  }
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!brief_ || !r.failed()) return inner_->OnTestPartResult(r);
    std::printf("%s\n", brief_failure(test_, r.message()).c_str());
    std::fflush(stdout);
  }
  void OnTestEnd(const ::testing::TestInfo& t) override { inner_->OnTestEnd(t); }
  void OnTestSuiteEnd(const ::testing::TestSuite& s) override { inner_->OnTestSuiteEnd(s); }
  void OnEnvironmentsTearDownStart(const ::testing::UnitTest& u) override { inner_->OnEnvironmentsTearDownStart(u); }
  void OnEnvironmentsTearDownEnd(const ::testing::UnitTest& u) override { inner_->OnEnvironmentsTearDownEnd(u); }
  void OnTestIterationEnd(const ::testing::UnitTest& u, int i) override { inner_->OnTestIterationEnd(u, i); }
  void OnTestProgramEnd(const ::testing::UnitTest& u) override { inner_->OnTestProgramEnd(u); }

private:
  std::unique_ptr<::testing::TestEventListener> inner_;
  std::string results_;
  fs::file_time_type run_start_;
  bool brief_ = false;
  std::string test_;
};

}  // namespace

void install_brief_failures(const std::string& results_dir, const std::string& impl) {
  if (impl != "student" || results_dir.empty()) return;
  std::error_code ec;
  const auto start = fs::last_write_time(fs::path(results_dir) / ".run-start", ec);
  if (ec) return;  // not a student's ctest run
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  ::testing::TestEventListener* inner = listeners.Release(listeners.default_result_printer());
  if (inner) listeners.Append(new BriefPrinter(inner, results_dir, start));
}

}  // namespace convlab
