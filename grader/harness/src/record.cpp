// The JSON outcome record. See convlab/record.hpp.
#include "convlab/record.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <utility>
#include <vector>

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
  if (!kernels.empty()) j["kernels"] = kernels;
  if (!judged.empty()) j["judged"] = judged;
  if (!output.empty()) j["output"] = output;
  if (!escaped.empty()) j["escaped"] = escaped;
  if (!off_technique.empty()) j["off_technique"] = off_technique;
  if (!counters_refused.empty()) j["counters_refused"] = counters_refused;
  if (!seconds.empty()) {
    nlohmann::json t = nlohmann::json::object();
    for (const auto& [phase, s] : seconds) t[phase] = std::round(s * 1e4) / 1e4;
    j["seconds"] = t;
  }
  // Infinite ratios (a NaN output) are written as null by nlohmann; keep a readable note.
  return j.dump(2);
}

std::string kernel_family(const std::string& name) {
  std::string s = name.substr(0, name.find('<'));
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);
  return s;
}

namespace {

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

std::string failure_text(const std::string& gtest_message) {
  std::string m = gtest_message;
  for (const char* tail : {"\nGoogle Test trace:", "\nStack trace:"})
    if (const auto p = m.find(tail); p != std::string::npos) m.erase(p);
  if (starts_with(m, "Google Test trace:")) m.clear();
  // GoogleTest's own lines come first: "Failed"; "Value of: x", "  Actual: false", "Expected: true";
  // "Expected: (a) <= (b), actual: 1 vs 2"; "Expected equality of these values:" and its indented
  // operands. The grader's words follow them.
  std::vector<std::string> lines;
  for (std::size_t b = 0; b <= m.size();) {
    const auto e = m.find('\n', b);
    lines.push_back(m.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  std::size_t i = 0;
  std::string check;
  bool operands = false;
  for (; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    const std::string t = trimmed(l);
    if (t == "Failed") continue;
    const bool gtest = starts_with(l, "Value of: ") || starts_with(l, "  Actual: ") || starts_with(l, "Expected: ") ||
                       starts_with(t, "Which is: ") || l == "Expected equality of these values:" ||
                       (operands && starts_with(l, "  "));
    if (!gtest) break;
    operands = operands || l == "Expected equality of these values:";
    static const std::pair<const char*, const char*> labels[] = {
        {"Expected equality of these values:", "these should be equal:"}, {"Value of: ", ""},
        {"Actual: ", "actual "}, {"Expected: ", "expected "}, {"Which is: ", "= "}};
    std::string part = t;
    for (const auto& [label, said] : labels)
      if (starts_with(part, label)) {
        part = said + part.substr(std::string(label).size());
        break;
      }
    check += (check.empty() ? "" : " ") + part;
  }
  std::string words;
  for (std::size_t k = i; k < lines.size(); ++k) words += lines[k] + (k + 1 < lines.size() ? "\n" : "");
  while (!words.empty() && words.back() == '\n') words.pop_back();
  if (!trimmed(words).empty()) return words;
  return check.empty() ? std::string() : "a check failed: " + check;
}

TestRecord& current_record() {
  static TestRecord record;
  return record;
}

void reset_current_record() { current_record() = TestRecord{}; }

namespace {

std::uint64_t rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

void sip_round(std::uint64_t& v0, std::uint64_t& v1, std::uint64_t& v2, std::uint64_t& v3) {
  v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);
  v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;
  v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;
  v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);
}

}  // namespace

std::string record_mac(const std::string& text, const std::string& key_hex) {
  if (key_hex.size() != 32 || key_hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    throw std::invalid_argument("a record key must be 32 hex digits");
  const std::uint64_t k0 = std::stoull(key_hex.substr(0, 16), nullptr, 16);
  const std::uint64_t k1 = std::stoull(key_hex.substr(16), nullptr, 16);
  std::uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1, v2 = 0x6c7967656e657261ull ^ k0,
                v3 = 0x7465646279746573ull ^ k1;
  const std::size_t n = text.size();
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t m = 0;
    for (int b = 0; b < 8; ++b) m |= std::uint64_t(p[i + b]) << (8 * b);
    v3 ^= m;
    sip_round(v0, v1, v2, v3);
    sip_round(v0, v1, v2, v3);
    v0 ^= m;
  }
  std::uint64_t last = std::uint64_t(n & 0xFF) << 56;
  for (std::size_t b = 0; i + b < n; ++b) last |= std::uint64_t(p[i + b]) << (8 * b);
  v3 ^= last;
  sip_round(v0, v1, v2, v3);
  sip_round(v0, v1, v2, v3);
  v0 ^= last;
  v2 ^= 0xFF;
  for (int r = 0; r < 4; ++r) sip_round(v0, v1, v2, v3);
  const std::uint64_t h = v0 ^ v1 ^ v2 ^ v3;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string record_signed_text(const std::string& record_json) {
  nlohmann::json j = nlohmann::json::parse(record_json);
  j.erase("mac");
  return j.dump();  // keys sorted: the same text on both sides
}

std::string write_record(const TestRecord& record, const std::string& dir, const std::string& key) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::string file;
  for (char ch : record.test) file += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-') ? ch : '_';
  const fs::path path = fs::path(dir) / (file + ".json");
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write the test record " + path.string());
  std::string text = record.to_json();
  if (!key.empty()) {
    nlohmann::json j = nlohmann::json::parse(text);
    j["mac"] = record_mac(record_signed_text(text), key);
    text = j.dump(2);
  }
  out << text << "\n";
  return path.string();
}

}  // namespace convlab
