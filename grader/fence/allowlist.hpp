/// @file allowlist.hpp
/// @brief The fence's common allow-list (what every lab's kernels may call on
/// each backend), the words that explain a refusal, and the names nothing but
/// the graders may define. A lab adds to the allow-list in its grading.json
/// (`"fence": {"allow": [...]}`); the entries and their reasons are in allowlist.cpp.
#pragma once

#include <string>
#include <vector>

namespace convlab::fence {

struct Name;

/// Which backends an entry is for.
enum BackendMask : unsigned { kCuda = 1, kCpu = 2, kBoth = 3 };

/// Names (glob patterns over a symbol's key, see names.hpp) that a student's
/// object may reference, and why.
struct AllowGroup {
  unsigned backends;
  const char* why;
  std::vector<const char*> patterns;
};

/// The common allow-list: what the references and starters of every lab need,
/// and what a student plausibly needs beside it.
const std::vector<AllowGroup>& base_allow_list();

/// Names that are allowed only where nvcc's generated code uses them, and how
/// the fence recognises that code (see fence.cpp: nvcc_reference_ok).
struct NvccOnly {
  const char* pattern;
  const char* callers;  ///< "registration": nvcc's start-up functions; "device-stub": a __device__ function's host stub
};
const std::vector<NvccOnly>& nvcc_only();

/// On the CPU backend, the runtime's header templates (cudaMemcpyToSymbol, ...)
/// call internal functions: each is allowed where one of its API names is.
struct CpuAlias {
  const char* internal;
  std::vector<const char*> api;
};
const std::vector<CpuAlias>& cpu_aliases();

/// Why a name is refused, in words a student understands ("the graders fix every
/// setting before your code runs"). The first group with a matching pattern wins.
struct Reason {
  const char* why;
  std::vector<const char*> patterns;
};
const std::vector<Reason>& refusal_reasons();
/// The explanation for a name no reason names.
extern const char* const kDefaultReason;

/// Weak definitions that the headers a student may include produce outside the
/// student's own names (convlab::, convlab_cpu::, and the CPU runtime's global
/// templates): the inline helpers of convlab/contract.hpp, check.hpp and
/// device_buffer.hpp, and of the CPU backend's prelude.
struct HeaderDefinitions {
  unsigned backends;
  const char* header;
  std::vector<const char*> patterns;
};
const std::vector<HeaderDefinitions>& header_definitions();

/// C library variables that a global definition may not take the name of
/// (environ, stdout, optarg, ...).
const std::vector<const char*>& c_library_variables();

/// The graders' golden models and baseline kernels: they compute the answer the
/// kernels must compute, and some live in the lab's own namespace (lab 05's
/// convlab::lab05::golden, lab 06's convlab::lab06::baseline), where a submission
/// may otherwise define and call what it likes.
const std::vector<const char*>& graders_answers();
extern const char* const kGradersAnswersReason;

/// The CUDA driver API (cuInit, cuLaunchKernel, cuGetProcAddress, ...).
bool driver_api(const Name& n);
/// A name of the CUDA libraries and interfaces (cuda*, cudnn*, cublas*, ...): a definition of one
/// in the global namespace could stand in for the library's.
bool cuda_name(const std::string& base);
/// The name is one of graders_answers().
bool graders_answer(const Name& n);
/// Why `n` is refused: the first matching group of refusal_reasons(), kGradersAnswersReason, the
/// driver API's reason, or kDefaultReason.
std::string reason_for(const Name& n);

}  // namespace convlab::fence
