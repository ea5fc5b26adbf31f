// The JSON outcome record. See convlab/record.hpp.
#include "convlab/record.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace convlab {

std::string TestRecord::to_json() const {
  nlohmann::json j;
  j["lab"] = lab;
  j["test"] = test;
  j["impl"] = impl;
  j["passed"] = passed;
  j["skipped"] = skipped;
  j["message"] = message;
  j["seed"] = seed;
  j["base_seed"] = base_seed;
  const auto put = [&j](const char* key, const std::optional<double>& v) {
    j[key] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  put("max_error", max_error);
  put("max_error_ratio", max_error_ratio);
  put("time_ms", time_ms);
  put("baseline_ms", baseline_ms);
  put("ratio", ratio);
  put("threshold", threshold);
  // Infinite ratios (a NaN output) are written as null by nlohmann; keep a readable note.
  return j.dump(2);
}

TestRecord& current_record() {
  static TestRecord record;
  return record;
}

void reset_current_record() { current_record() = TestRecord{}; }

std::string write_record(const TestRecord& record, const std::string& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::string file;
  for (char ch : record.test) file += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-') ? ch : '_';
  const fs::path path = fs::path(dir) / (file + ".json");
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write the test record " + path.string());
  out << record.to_json() << "\n";
  return path.string();
}

}  // namespace convlab
