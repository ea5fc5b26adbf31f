/// @file testbed.hpp
/// @brief Registering a lab's graders as GoogleTest tests named like paths.
///
/// A lab's test file defines `void register_labNN(convlab::Registry&)` that adds
/// its cases, and ends with `CONVLAB_LAB_MAIN(register_labNN)`. Test names read
/// `<lab>.<kind>.<variant>.<case>`: `lab01.correctness.conv2d.w1023_h517_r3`.
#pragma once

#include "convlab/spec.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace convlab {

/// True when kernels run on the CPU backend (CONVLAB_BACKEND=cpu): correctness
/// graders run on the CPU; speed graders are not registered.
#ifdef CONVLAB_BACKEND_CPU
inline constexpr bool kCpuBackend = true;
#else
inline constexpr bool kCpuBackend = false;
#endif

/// Collects a lab's tests.
class Registry {
public:
  /// `lab` is the lab id ("lab01"); `spec` its grading spec.
  Registry(std::string lab, LabSpec spec);
  /// A GPU grader: reported as skipped, with the reason, when no CUDA device is
  /// present. On the CPU backend it runs on the CPU, except speed graders (kind
  /// "speedup"), which are not registered there.
  void gpu(const std::string& kind, const std::string& variant, const std::string& case_name,
           std::function<void()> body);
  /// A test that runs anywhere (spec checks, host-side validation).
  void cpu(const std::string& kind, const std::string& variant, const std::string& case_name,
           std::function<void()> body);
  /// The lab's grading spec.
  const LabSpec& spec() const { return spec_; }
  /// The lab id.
  const std::string& lab() const { return lab_; }
  /// Names of the tests registered so far.
  const std::vector<std::string>& names() const { return names_; }

private:
  void add(bool needs_gpu, const std::string& kind, const std::string& variant, const std::string& case_name,
           std::function<void()> body);
  std::string lab_;
  LabSpec spec_;
  std::vector<std::string> names_;
};

/// The seed of the running test (printed with every failure).
std::uint64_t current_seed();

/// Where a failing 2D grader writes its error map image: `<results>/error-maps` when the
/// graders record results (--convlab-results or CONVLAB_RESULTS_DIR), else
/// `convlab-error-maps` in the working folder; CONVLAB_ERROR_MAP_DIR overrides both.
std::string error_map_dir();

/// Expects `call` to throw std::invalid_argument with `message_part` in its
/// message (a contract refusing a bad problem); records a failure otherwise.
void expect_refused(const std::function<void()>& call, const std::string& message_part);

/// The main of a lab's grader executable: loads the spec, registers the tests,
/// records every outcome as JSON, runs GoogleTest.
int run_lab_main(int argc, char** argv, const char* lab, const char* spec_path,
                 void (*register_tests)(Registry&));

}  // namespace convlab

/// Defines main() for a lab's grader executable. CONVLAB_LAB_ID and
/// CONVLAB_SPEC_PATH are set by convlab_add_lab().
#define CONVLAB_LAB_MAIN(register_fn)                                                  \
  int main(int argc, char** argv) {                                                    \
    return ::convlab::run_lab_main(argc, argv, CONVLAB_LAB_ID, CONVLAB_SPEC_PATH, register_fn); \
  }
