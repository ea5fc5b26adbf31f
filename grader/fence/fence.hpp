/// @file fence.hpp
/// @brief The symbol fence: what a submission's compiled kernels may reference,
/// define and run before `main`, checked on their objects with binutils.
///
/// A submission's objects run inside the graders' process, next to the code that
/// uploads inputs, launches, times and downloads outputs. The fence refuses what
/// could subvert that code from the inside:
///  1. references (calls and data) not on an allow-list: the common list of
///     allowlist.cpp for the backend, plus the lab's additions in its grading.json
///     (`"fence": {"allow": [{"symbols": [...], "why": "..."}]}`); the spec's
///     `forbidden_symbols` substrings (cuBLAS, cuDNN, ...) and their per-file
///     `allowed_symbols` exemptions are checked here too;
///  2. global definitions that could take the place of something the graders use:
///     C-linkage functions, names in std::, testing::, convlab:: (outside the lab's
///     convlab::labNN and the inline helpers of the headers a student may include),
///     CUDA runtime and C library names, operator new/delete, and (with the
///     graders' own objects given) any name the graders' objects define;
///  3. global constructors and destructors: every .init_array/.fini_array (and
///     .ctors/.dtors/.preinit_array) entry must be nvcc's registration function;
///  4. system-call instructions in host code, and executable sections the
///     compiler would not produce.
/// The build runs it on every kernels library (cmake/ConvlabLab.cmake), and
/// `convlab grade` runs it on each submission (grader/cli/grading/grade_build.cpp).
#pragma once

#include "objects.hpp"

#include <map>
#include <string>
#include <vector>

namespace convlab::fence {

/// Where the kernels run: nvcc's objects, or the CPU backend's rewritten C++.
enum class Backend { cuda, cpu };
/// "cuda" or "cpu"; throws FenceError otherwise.
Backend parse_backend(const std::string& name);

/// A lab's addition to the allow-list (grading.json: fence.allow[i]).
struct AllowEntry {
  std::vector<std::string> symbols;   ///< patterns, as in allowlist.hpp
  std::vector<std::string> files;     ///< the submission files it is for; empty: all
  std::vector<std::string> backends;  ///< "cuda", "cpu"; empty: both
  std::string why;                    ///< why the lab needs it
};

/// What the fence needs of a lab's grading spec.
struct Policy {
  std::string lab;                 ///< "lab01": its contract namespace is convlab::lab01
  std::vector<std::string> files;  ///< submission.files
  std::vector<std::string> forbidden;                                 ///< forbidden_symbols
  std::map<std::string, std::vector<std::string>> allowed_substrings;  ///< allowed_symbols
  std::vector<AllowEntry> allow;   ///< fence.allow
};

/// Reads the lab's grading spec (convlab::load_spec, and its "fence" section).
/// Throws FenceError with the file and the key on a bad spec.
Policy load_policy(const std::string& spec_path);
/// The same from the spec's text; `origin` names it in errors.
Policy parse_policy(const std::string& json_text, const std::string& origin);

/// One thing the fence refuses, in a student's words:
/// `conv_basic.cu: calls setenv, which your kernels' file may not use (...)`.
struct Finding {
  std::string file;    ///< the submission file ("conv_basic.cu"), or the object's name
  std::string symbol;  ///< the name it is about (may be empty)
  std::string what;    ///< the rest of the line
  std::string line() const { return file + ": " + what; }
};

/// Checks `objects` (the kernels library's members). `harness`, if not empty,
/// holds the graders' own objects of the lab: a submission may not define a
/// name they define, beyond the inline code both compile from the same headers.
std::vector<Finding> check_objects(const Policy& policy, Backend backend, const std::vector<ObjectFile>& objects,
                                   const std::vector<ObjectFile>& harness = {});

/// Reads `inputs` (archives and objects) and `harness_inputs`, then checks them.
/// Throws FenceError if they cannot be read.
std::vector<Finding> check(const Policy& policy, Backend backend, const std::vector<std::string>& inputs,
                           const std::vector<std::string>& harness_inputs = {});

}  // namespace convlab::fence
