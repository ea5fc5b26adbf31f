/// @file spec.hpp
/// @brief A lab's grading spec (`labs/NN-slug/grading.json`): the one place for
/// points, speed thresholds, the files a submission may change, forbidden
/// symbols and time limits. Tests, benchmarks and tools read it; nothing
/// repeats its numbers.
///
/// Format:
/// \code{.json}
/// {
///   "lab": "lab01", "slug": "01-conv-basic", "title": "Naive 1D and 2D convolution",
///   "submission": { "files": ["conv_basic.cu"] },
///   "forbidden_symbols": ["cublas", "cudnn"],
///   "time_limits_s": { "compile": 300, "test": 120 },
///   "compiler_bug_policy": "review",
///   "graders": [
///     { "id": "correctness.conv1d", "kind": "correctness", "points": 30,
///       "description": "1D outputs match the golden model" },
///     { "id": "technique.conv1d", "kind": "technique", "points": 10,
///       "description": "the filter is read from __constant__ memory" },
///     { "id": "speedup.conv1d", "kind": "speedup", "points": 10,
///       "gated_by": ["correctness.conv1d", "technique.conv1d"], "threshold": 0.5, "partial_from": 0.25 }
///   ]
/// }
/// \endcode
/// A test named `lab01.speedup.conv1d.n67108867_r1` belongs to grader `speedup.conv1d`.
/// `gated_by` (speedup graders) is one grader id or a list: correctness and technique graders that
/// must all pass before the speed-up earns anything.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace convlab {

/// A malformed spec; the message names the file and the field.
class SpecError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One grader: a group of tests sharing an id prefix, worth some points.
struct GraderSpec {
  std::string id;            ///< "correctness.conv1d": tests `<lab>.<id>.<case>`
  std::string kind;          ///< "correctness", "technique" or "speedup"
  double points = 0;         ///< points when every test of the group passes
  std::string description;   ///< one line for feedback
  bool extra_credit = false; ///< points on top of the lab's total
  // speedup graders only
  double threshold = 0;      ///< full points at or above this speed-up over the baseline
  double partial_from = 0;   ///< partial points, linear, from this speed-up up to the threshold
  std::vector<std::string> gated_by;  ///< the correctness and technique graders that must pass first
  /// On a GPU, after the timed runs, one more call of the student's launcher and one of the
  /// baseline's are counted by the GPU's counters on the timed problem: the student's global loads
  /// per output must be at most this fraction of the baseline's, or the slot's technique was not
  /// used where it was timed (a kernel chosen by size or by call count; issue 27). 0: not checked.
  double traffic_vs_baseline = 0;
  /// What is compared: "words" (4-byte words loaded by the threads; a load that a whole warp makes
  /// of one address counts once: the right measure for tiles, whose halo loads diverge) or
  /// "instructions" (load instructions, each warp's counted for its 32 threads: a filter tap read
  /// from global memory counts for every thread; lab 2's measure).
  std::string traffic_count = "words";
};

/// A lab's whole spec.
struct LabSpec {
  std::string path;                            ///< where it was read from
  std::string lab;                             ///< "lab01"
  std::string slug;                            ///< "01-conv-basic"
  std::string title;                           ///< the handout's title
  std::vector<std::string> files;              ///< files a submission may change (in `starter_code/<slug>/`)
  std::vector<std::string> forbidden_symbols;  ///< substrings no symbol of a submission may contain
  /// Per submission file, the forbidden substrings that file's own object may use
  /// (`"allowed_symbols": {"conv_cudnn.cu": ["cudnn"]}`); every other file is still checked.
  std::map<std::string, std::vector<std::string>> allowed_symbols;
  /// How `convlab grade` scores a correctness grader that fails as built but passes, on the same
  /// inputs, with the kernels' device optimisation lowered (a compiler bug, issue 18): "full",
  /// "review" (full points, flagged for the instructor) or "as-is" (scored as measured); "" = the
  /// command's choice (`--compiler-bug-policy`, default review).
  std::string compiler_bug_policy;
  int compile_timeout_s = 0;                   ///< time limit for building a submission
  int test_timeout_s = 0;                      ///< time limit for one grader test
  std::vector<GraderSpec> graders;             ///< the graders, in order

  /// The grader with this id; throws SpecError if there is none.
  const GraderSpec& grader(std::string_view id) const;
  /// The grader with this id, or nullptr.
  const GraderSpec* find_grader(std::string_view id) const;
  /// The grader a test belongs to (`lab01.speedup.conv1d.x` -> speedup.conv1d), or nullptr.
  const GraderSpec* grader_for_test(std::string_view test_name) const;
  /// Sum of the points of the graders that are not extra credit.
  double total_points() const;
};

/// Parses and validates a spec; `origin` names it in error messages.
LabSpec parse_spec(const std::string& json_text, const std::string& origin);
/// Reads and parses a spec file.
LabSpec load_spec(const std::string& path);

/// Points of a speedup grader for a measured ratio: full at or above the
/// threshold, linear between partial_from and the threshold, none below.
double speed_points(const GraderSpec& grader, double ratio);

/// Replaces speed thresholds of `spec` with those an instructor measured on
/// their GPU (`convlab calibrate`); graders the file does not name keep the
/// spec's values. Returns how many graders changed; throws SpecError, naming
/// the file and the field, on a malformed file. The graders read it from the
/// environment variable CONVLAB_CALIBRATION. Format:
/// \code{.json}
/// { "convlab_calibration": 1, "fraction": 0.7, "device": "NVIDIA H100 80GB HBM3",
///   "labs": { "lab01": { "speedup.conv1d": { "threshold": 0.69, "partial_from": 0.14,
///                                            "reference_ratio": 0.99 } } } }
/// \endcode
int apply_calibration(LabSpec& spec, const std::string& path);

}  // namespace convlab
