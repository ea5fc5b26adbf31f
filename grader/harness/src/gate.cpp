// Correctness gates speed, early. See convlab/gate.hpp.
#include "convlab/gate.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

namespace convlab {

namespace fs = std::filesystem;

std::string first_informative_line(const std::string& message) {
  std::istringstream in(message);
  std::string line, fallback, heading;
  while (std::getline(in, line)) {
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    line = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
    // GoogleTest's own scaffolding: "Failed" (from ADD_FAILURE/FAIL with a message on the
    // next line), and the location line of a scoped trace.
    if (line == "Failed" || line == "Google Test trace:") continue;
    if (fallback.empty()) fallback = line;
    // "Expected: ..." / "Value of: ..." lines come before the explanation a grader streams.
    if (line.rfind("Expected", 0) == 0 || line.rfind("Value of:", 0) == 0 || line.rfind("Actual:", 0) == 0 ||
        line.rfind("Which is:", 0) == 0 || line.rfind("  Actual", 0) == 0)
      continue;
    // A heading ("2D convolution, 100 x 75, radius 3:") introduces the line that says what is wrong.
    if (heading.empty() && line.back() == ':' && line.size() < 80) {
      heading = line;
      continue;
    }
    return heading.empty() ? line : heading + " " + line;
  }
  return heading.empty() ? fallback : heading;
}

int failed_records_since(const std::string& results_dir, const std::string& impl, fs::file_time_type since) {
  std::error_code ec;
  int n = 0;
  for (const auto& e : fs::directory_iterator(results_dir, ec)) {
    if (e.path().extension() != ".json") continue;
    const auto when = fs::last_write_time(e.path(), ec);
    if (ec || when < since) continue;
    try {
      std::ifstream in(e.path());
      const nlohmann::json j = nlohmann::json::parse(in);
      if (j.value("impl", std::string()) == impl && !j.value("passed", true) && !j.value("skipped", false)) ++n;
    } catch (const std::exception&) {
    }
  }
  return n;
}

double case_size(const std::string& test_name) {
  const std::string last = test_name.substr(test_name.rfind('.') + 1);
  // Split at '_': "w1023_h517_r3" -> w1023, h517, r3; the radius does not count towards size.
  double size = 1;
  bool any = false;
  std::string part;
  std::istringstream in(last);
  while (std::getline(in, part, '_')) {
    if (!part.empty() && part[0] == 'r' && part.size() > 1 && std::isdigit(static_cast<unsigned char>(part[1])))
      continue;
    // Every number in the part: "8x16x32" multiplies its three.
    for (std::size_t i = 0; i < part.size();) {
      if (!std::isdigit(static_cast<unsigned char>(part[i]))) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < part.size() && std::isdigit(static_cast<unsigned char>(part[j]))) ++j;
      size *= std::stod(part.substr(i, j - i));
      any = true;
      i = j;
    }
  }
  return any ? size : std::numeric_limits<double>::infinity();
}

std::string failed_gate(const std::string& results_dir, const std::string& lab, const std::string& gate,
                        const std::string& impl, fs::file_time_type built) {
  const std::string prefix = lab + "." + gate + ".";
  std::error_code ec;
  struct Failure {
    double size;
    std::string test, line;
  };
  std::vector<Failure> failed;
  for (const auto& e : fs::directory_iterator(results_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || e.path().extension() != ".json") continue;
    const auto when = fs::last_write_time(e.path(), ec);
    if (ec || when < built) continue;  // a record of an earlier build says nothing about these kernels
    try {
      std::ifstream in(e.path());
      const nlohmann::json j = nlohmann::json::parse(in);
      if (j.value("impl", std::string()) != impl || j.value("passed", true) || j.value("skipped", false)) continue;
      const std::string test = j.value("test", std::string());
      if (test.rfind(prefix, 0) != 0) continue;
      failed.push_back({case_size(test), test, first_informative_line(j.value("message", std::string()))});
    } catch (const std::exception&) {
      continue;  // a record being written right now, or not a record: no evidence
    }
  }
  if (failed.empty()) return "";
  std::sort(failed.begin(), failed.end(),
            [](const Failure& a, const Failure& b) { return a.size != b.size ? a.size < b.size : a.test < b.test; });
  std::string line = failed.front().line;
  if (line.size() > 160) line = line.substr(0, 157) + "...";
  return "not timed: " + gate + " failed in this build (" + std::to_string(failed.size()) + " of its tests, first " +
         failed.front().test + (line.empty() ? "" : ": " + line) + ") — " +
         (gate.rfind("technique", 0) == 0 ? "the technique gates speed" : "correctness gates speed") +
         ", so fix that first";
}

std::string brief_failure(const std::string& test, const std::string& message) {
  std::string replay;
  std::istringstream in(message);
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find("CONVLAB_SEED=");
    if (line.find("replay") != std::string::npos && at != std::string::npos) replay = line.substr(at);
  }
  std::string why = first_informative_line(message);
  if (why.size() > 200) why = why.substr(0, 197) + "...";
  return test + ": " + why + (replay.empty() ? "" : "\n  (the full report: " + replay + ")");
}

}  // namespace convlab
