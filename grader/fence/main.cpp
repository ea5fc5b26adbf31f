// convlab_fence: the symbol fence on the command line. See fence.hpp.
//
//   convlab_fence --spec labs/01-conv-basic/grading.json --backend cuda|cpu
//                 [--lab lab01] [--harness OBJECT...] [--] KERNELS.a|OBJECT.o...
//
// Exit status: 0 clean, 1 refused (one line per finding on standard output,
// naming the file and the symbol), 2 bad arguments or a tool that failed.
#include "fence.hpp"

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

const char* const kUsage =
    "usage: convlab_fence --spec GRADING.json --backend cuda|cpu [--lab labNN] [--harness OBJECT...] [--] "
    "KERNELS.a|OBJECT.o...\n"
    "Checks a lab's compiled kernels: what they call, what they define, what runs before main, and system calls.\n"
    "Exit status: 0 clean, 1 refused (one line per finding), 2 bad arguments or a tool error.\n";

int usage(const std::string& why) {
  std::cerr << "convlab_fence: " << why << "\n" << kUsage;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string spec, backend, lab;
  std::vector<std::string> inputs, harness;
  bool in_harness = false, only_inputs = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.empty()) continue;  // a build's empty list (no extra harness files) may pass one
    const auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    if (only_inputs) {
      inputs.push_back(a);
    } else if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--spec") {
      if (!value(spec)) return usage("--spec needs a file");
      in_harness = false;
    } else if (a == "--backend") {
      if (!value(backend)) return usage("--backend needs cuda or cpu");
      in_harness = false;
    } else if (a == "--lab") {
      if (!value(lab)) return usage("--lab needs a lab id");
      in_harness = false;
    } else if (a == "--harness") {
      in_harness = true;
    } else if (a == "--") {
      only_inputs = true;
      in_harness = false;
    } else if (a.size() > 1 && a[0] == '-') {
      return usage("unknown option " + a);
    } else {
      (in_harness ? harness : inputs).push_back(a);
    }
  }
  if (spec.empty()) return usage("--spec is required");
  if (backend.empty()) return usage("--backend is required");
  if (inputs.empty()) return usage("no kernels library or object to check");
  try {
    const auto policy = convlab::fence::load_policy(spec);
    if (!lab.empty() && lab != policy.lab)
      return usage("--lab " + lab + " does not match the spec's lab (" + policy.lab + ")");
    const auto findings = convlab::fence::check(policy, convlab::fence::parse_backend(backend), inputs, harness);
    for (const auto& f : findings) std::cout << f.line() << "\n";
    if (!findings.empty()) {
      std::cout << "convlab_fence: " << policy.lab << ": " << findings.size()
                << (findings.size() == 1 ? " finding" : " findings")
                << " in the compiled kernels; the graders refuse them (docs: Grading, \"The symbol fence\")\n";
      return 1;
    }
    return 0;
  } catch (const convlab::fence::FenceError& e) {
    std::cerr << "convlab_fence: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "convlab_fence: " << e.what() << "\n";
    return 2;
  }
}
