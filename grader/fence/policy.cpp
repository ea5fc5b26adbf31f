// The fence's view of a lab's grading spec: its files, forbidden substrings and
// the lab's additions to the allow-list ("fence" section). See fence.hpp.
#include "fence.hpp"

#include "convlab/spec.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace convlab::fence {

using nlohmann::json;

Backend parse_backend(const std::string& name) {
  if (name == "cuda") return Backend::cuda;
  if (name == "cpu") return Backend::cpu;
  throw FenceError("the backend must be 'cuda' or 'cpu', not '" + name + "'");
}

namespace {

[[noreturn]] void bad(const std::string& origin, const std::string& where, const std::string& what) {
  throw FenceError(origin + ": " + where + ": " + what);
}

std::vector<std::string> strings(const json& obj, const std::string& key, const std::string& origin,
                                 const std::string& where, bool required) {
  std::vector<std::string> out;
  if (!obj.contains(key)) {
    if (required) bad(origin, where, "missing '" + key + "'");
    return out;
  }
  const json& v = obj.at(key);
  if (!v.is_array() || v.empty()) bad(origin, where + "." + key, "must be a non-empty list of strings");
  for (const auto& e : v) {
    if (!e.is_string() || e.get<std::string>().empty()) bad(origin, where + "." + key, "must hold non-empty strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace

Policy parse_policy(const std::string& text, const std::string& origin) {
  Policy p;
  LabSpec spec;
  try {
    spec = parse_spec(text, origin);
  } catch (const SpecError& e) {
    throw FenceError(e.what());
  }
  p.lab = spec.lab;
  p.files = spec.files;
  p.forbidden = spec.forbidden_symbols;
  p.allowed_substrings = spec.allowed_symbols;
  const json root = json::parse(text);  // valid: parse_spec read it
  if (!root.contains("fence")) return p;
  const json fence = root.at("fence");
  if (!fence.is_object()) bad(origin, "fence", "must be an object");
  for (const auto& [key, value] : fence.items()) {
    (void)value;
    if (key != "allow" && key != "notes") bad(origin, "fence", "unknown key '" + key + "' (allowed: allow, notes)");
  }
  if (!fence.contains("allow")) return p;
  const json allow = fence.at("allow");
  if (!allow.is_array()) bad(origin, "fence.allow", "must be a list");
  for (std::size_t i = 0; i < allow.size(); ++i) {
    const json& e = allow[i];
    const std::string where = "fence.allow[" + std::to_string(i) + "]";
    if (!e.is_object()) bad(origin, where, "must be an object");
    for (const auto& [key, value] : e.items()) {
      (void)value;
      if (key != "symbols" && key != "files" && key != "backends" && key != "why")
        bad(origin, where, "unknown key '" + key + "' (allowed: symbols, files, backends, why)");
    }
    AllowEntry a;
    a.symbols = strings(e, "symbols", origin, where, true);
    a.files = strings(e, "files", origin, where, false);
    a.backends = strings(e, "backends", origin, where, false);
    // Every addition says why the lab needs it: the list is read by people.
    if (!e.contains("why") || !e.at("why").is_string() || e.at("why").get<std::string>().empty())
      bad(origin, where, "needs 'why': a sentence saying what in this lab needs these names");
    a.why = e.at("why").get<std::string>();
    for (const auto& f : a.files)
      if (std::find(p.files.begin(), p.files.end(), f) == p.files.end())
        bad(origin, where + ".files", "'" + f + "' is not one of submission.files");
    for (const auto& b : a.backends)
      if (b != "cuda" && b != "cpu") bad(origin, where + ".backends", "must be 'cuda' or 'cpu', not '" + b + "'");
    p.allow.push_back(a);
  }
  return p;
}

Policy load_policy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FenceError("cannot read the grading spec " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse_policy(text.str(), path);
}

}  // namespace convlab::fence
