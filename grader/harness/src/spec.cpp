// The grading spec: parsing and validation. See convlab/spec.hpp.
#include "convlab/spec.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace convlab {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& origin, const std::string& where, const std::string& what) {
  throw SpecError(origin + ": " + where + ": " + what);
}

void only_keys(const json& obj, const std::set<std::string>& allowed, const std::string& origin,
               const std::string& where) {
  for (const auto& [key, value] : obj.items()) {
    (void)value;
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(origin, where, "unknown key '" + key + "' (allowed: " + list + ")");
    }
  }
}

const json& member(const json& obj, const std::string& key, json::value_t type, const std::string& origin,
                   const std::string& where) {
  if (!obj.contains(key)) fail(origin, where, "missing '" + key + "'");
  const json& v = obj.at(key);
  const bool ok = type == json::value_t::number_float ? v.is_number() : v.type() == type;
  if (!ok) fail(origin, where + "." + key, std::string("must be a ") + json(type).type_name() + ", is " + v.type_name());
  return v;
}

std::string text(const json& obj, const std::string& key, const std::string& origin, const std::string& where) {
  const auto& v = member(obj, key, json::value_t::string, origin, where).get<std::string>();
  if (v.empty()) fail(origin, where + "." + key, "must not be empty");
  return v;
}

std::vector<std::string> strings(const json& obj, const std::string& key, const std::string& origin,
                                 const std::string& where) {
  std::vector<std::string> out;
  for (const auto& e : member(obj, key, json::value_t::array, origin, where)) {
    if (!e.is_string() || e.get<std::string>().empty())
      fail(origin, where + "." + key, "must hold non-empty strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

// The lab's name, slug and title, after the top level's keys are checked.
void read_header(const json& root, const std::string& origin, LabSpec& s) {
  only_keys(root,
            {"lab", "slug", "title", "submission", "forbidden_symbols", "allowed_symbols", "time_limits_s", "graders",
             "notes", "compiler_bug_policy", "fence"},  // "fence": read by the symbol fence (grader/fence/policy.cpp)
            origin, "top level");
  s.path = origin;
  s.lab = text(root, "lab", origin, "top level");
  if (!std::regex_match(s.lab, std::regex("lab[0-9]{2}"))) fail(origin, "lab", "must look like 'lab01'");
  s.slug = text(root, "slug", origin, "top level");
  if (s.slug.substr(0, 2) != s.lab.substr(3, 2)) fail(origin, "slug", "must start with the lab's number");
  s.title = text(root, "title", origin, "top level");
}

// What a student hands in: the files, the forbidden symbols and the per-file exceptions to them.
void read_submission(const json& root, const std::string& origin, LabSpec& s) {
  // Sections are copied: GCC 13 takes a reference to member()'s result for a dangling one (-Wdangling-reference).
  const json sub = member(root, "submission", json::value_t::object, origin, "top level");
  only_keys(sub, {"files"}, origin, "submission");
  s.files = strings(sub, "files", origin, "submission");
  if (s.files.empty()) fail(origin, "submission.files", "must name at least one file");
  for (const auto& f : s.files)
    if (f.find('/') != std::string::npos || f.find("..") != std::string::npos || f[0] == '.')
      fail(origin, "submission.files", "'" + f + "' must be a plain file name inside starter_code/" + s.slug);

  s.forbidden_symbols = strings(root, "forbidden_symbols", origin, "top level");
  if (root.contains("allowed_symbols")) {
    // Per file: forbidden substrings that this one file's object may use (lab 06's cuDNN path).
    const json allowed = member(root, "allowed_symbols", json::value_t::object, origin, "top level");
    for (const auto& item : allowed.items()) {
      const std::string& file = item.key();
      if (std::find(s.files.begin(), s.files.end(), file) == s.files.end())
        fail(origin, "allowed_symbols", "'" + file + "' is not one of submission.files");
      s.allowed_symbols[file] = strings(allowed, file, origin, "allowed_symbols");
      for (const auto& sym : s.allowed_symbols[file])
        if (std::find(s.forbidden_symbols.begin(), s.forbidden_symbols.end(), sym) == s.forbidden_symbols.end())
          fail(origin, "allowed_symbols." + file, "'" + sym + "' is not in forbidden_symbols");
    }
  }
}

// The compiler-bug policy and the time limits of a build and of a test.
void read_limits(const json& root, const std::string& origin, LabSpec& s) {
  if (root.contains("compiler_bug_policy")) {  // issue 18: a grader that passes only with less device optimisation
    s.compiler_bug_policy = text(root, "compiler_bug_policy", origin, "top level");
    if (s.compiler_bug_policy != "full" && s.compiler_bug_policy != "review" && s.compiler_bug_policy != "as-is")
      fail(origin, "compiler_bug_policy", "must be 'full', 'review' or 'as-is', not '" + s.compiler_bug_policy + "'");
  }

  const json lim = member(root, "time_limits_s", json::value_t::object, origin, "top level");
  only_keys(lim, {"compile", "test"}, origin, "time_limits_s");
  s.compile_timeout_s = member(lim, "compile", json::value_t::number_unsigned, origin, "time_limits_s").get<int>();
  s.test_timeout_s = member(lim, "test", json::value_t::number_unsigned, origin, "time_limits_s").get<int>();
  if (s.compile_timeout_s < 1 || s.test_timeout_s < 1) fail(origin, "time_limits_s", "limits must be >= 1 second");
}

// A speedup grader's band (threshold, partial_from), its traffic bound and the graders that gate it.
void read_speedup(const json& g, const std::string& origin, const std::string& where, GraderSpec& gs) {
  gs.threshold = member(g, "threshold", json::value_t::number_float, origin, where).get<double>();
  if (!(gs.threshold > 0)) fail(origin, where + ".threshold", "must be > 0");
  if (g.contains("partial_from")) {
    gs.partial_from = member(g, "partial_from", json::value_t::number_float, origin, where).get<double>();
    if (!(gs.partial_from >= 0 && gs.partial_from < gs.threshold))
      fail(origin, where + ".partial_from", "must be in [0, threshold)");
  }
  if (g.contains("traffic_vs_baseline")) {
    gs.traffic_vs_baseline = member(g, "traffic_vs_baseline", json::value_t::number_float, origin, where).get<double>();
    if (!(gs.traffic_vs_baseline > 0 && gs.traffic_vs_baseline <= 1))
      fail(origin, where + ".traffic_vs_baseline", "must be in (0, 1]: the student's global loads per output over the baseline's");
  }
  if (g.contains("traffic_count")) {
    gs.traffic_count = text(g, "traffic_count", origin, where);
    if (gs.traffic_count != "words" && gs.traffic_count != "instructions")
      fail(origin, where + ".traffic_count", "must be 'words' or 'instructions', not '" + gs.traffic_count + "'");
  }
  if (!g.contains("gated_by")) fail(origin, where + ".gated_by", "is missing (correctness gates speed)");
  const json& gate = g.at("gated_by");
  if (gate.is_string()) {
    gs.gated_by.push_back(gate.get<std::string>());
  } else if (gate.is_array() && !gate.empty()) {
    for (const auto& x : gate) {
      if (!x.is_string()) fail(origin, where + ".gated_by", "must list grader ids");
      gs.gated_by.push_back(x.get<std::string>());
    }
  } else {
    fail(origin, where + ".gated_by", "must be a grader id or a non-empty list of them");
  }
}

// One entry of "graders" (graders[I]); IDS holds the ids seen so far, to refuse a duplicate.
GraderSpec read_grader(const json& g, std::size_t i, const std::string& origin, std::set<std::string>& ids) {
  const std::string where = "graders[" + std::to_string(i) + "]";
  if (!g.is_object()) fail(origin, where, "must be an object");
  only_keys(g, {"id", "kind", "points", "description", "extra_credit", "threshold", "partial_from", "gated_by",
                "traffic_vs_baseline", "traffic_count"},
            origin, where);
  GraderSpec gs;
  gs.id = text(g, "id", origin, where);
  gs.kind = text(g, "kind", origin, where);
  if (gs.kind != "correctness" && gs.kind != "technique" && gs.kind != "speedup")
    fail(origin, where + ".kind", "must be 'correctness', 'technique' or 'speedup', not '" + gs.kind + "'");
  if (!std::regex_match(gs.id, std::regex("[a-z]+\\.[a-z0-9_]+")) || gs.id.substr(0, gs.id.find('.')) != gs.kind)
    fail(origin, where + ".id", "'" + gs.id + "' must read '<kind>.<variant>', e.g. '" + gs.kind + ".conv1d'");
  if (!ids.insert(gs.id).second) fail(origin, where + ".id", "duplicate id '" + gs.id + "'");
  gs.points = member(g, "points", json::value_t::number_float, origin, where).get<double>();
  if (!(gs.points >= 0)) fail(origin, where + ".points", "must be >= 0");
  if (g.contains("description")) gs.description = text(g, "description", origin, where);
  if (g.contains("extra_credit")) gs.extra_credit = member(g, "extra_credit", json::value_t::boolean, origin, where).get<bool>();
  if (gs.kind == "speedup") {
    read_speedup(g, origin, where, gs);
  } else if (g.contains("threshold") || g.contains("partial_from") || g.contains("gated_by") ||
             g.contains("traffic_vs_baseline") || g.contains("traffic_count")) {
    fail(origin, where, "threshold, partial_from, gated_by, traffic_vs_baseline and traffic_count belong to speedup "
                        "graders only");
  }
  return gs;
}

// Correctness gates speed: every gate names a correctness or technique grader of the lab, one at least a
// correctness grader.
void check_gates(const LabSpec& s, const std::string& origin) {
  for (const auto& g : s.graders) {
    bool has_correctness = g.gated_by.empty();
    for (const auto& id : g.gated_by) {
      const auto it = std::find_if(s.graders.begin(), s.graders.end(), [&](const GraderSpec& o) { return o.id == id; });
      if (it == s.graders.end() || (it->kind != "correctness" && it->kind != "technique"))
        fail(origin, "grader " + g.id + ".gated_by", "'" + id + "' is not a correctness or technique grader of this lab");
      has_correctness = has_correctness || it->kind == "correctness";
    }
    if (!has_correctness)
      fail(origin, "grader " + g.id + ".gated_by", "must name a correctness grader (correctness gates speed)");
  }
}

}  // namespace

LabSpec parse_spec(const std::string& json_text, const std::string& origin) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw SpecError(origin + ": not valid JSON: " + e.what());
  }
  if (!root.is_object()) fail(origin, "top level", "must be an object");
  LabSpec s;
  read_header(root, origin, s);
  read_submission(root, origin, s);
  read_limits(root, origin, s);

  const json graders = member(root, "graders", json::value_t::array, origin, "top level");
  if (graders.empty()) fail(origin, "graders", "must list at least one grader");
  std::set<std::string> ids;
  for (std::size_t i = 0; i < graders.size(); ++i) s.graders.push_back(read_grader(graders[i], i, origin, ids));
  check_gates(s, origin);
  return s;
}

LabSpec load_spec(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SpecError(path + ": cannot open the grading spec");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_spec(text.str(), path);
}

const GraderSpec* LabSpec::find_grader(std::string_view id) const {
  for (const auto& g : graders)
    if (g.id == id) return &g;
  return nullptr;
}

const GraderSpec& LabSpec::grader(std::string_view id) const {
  if (const GraderSpec* g = find_grader(id)) return *g;
  throw SpecError(path + ": no grader '" + std::string(id) + "'");
}

const GraderSpec* LabSpec::grader_for_test(std::string_view test) const {
  for (const auto& g : graders) {
    const std::string prefix = lab + "." + g.id + ".";
    if (test.size() > prefix.size() && test.substr(0, prefix.size()) == prefix) return &g;
  }
  return nullptr;
}

double LabSpec::total_points() const {
  double sum = 0;
  for (const auto& g : graders)
    if (!g.extra_credit) sum += g.points;
  return sum;
}

double speed_points(const GraderSpec& g, double ratio) {
  if (g.kind != "speedup") throw std::invalid_argument("speed_points: '" + g.id + "' is not a speedup grader");
  if (!(ratio > 0)) return 0;
  if (ratio >= g.threshold) return g.points;
  if (ratio <= g.partial_from || g.partial_from <= 0) return 0;
  return g.points * (ratio - g.partial_from) / (g.threshold - g.partial_from);
}

int apply_calibration(LabSpec& spec, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SpecError(path + ": cannot open the calibration file");
  json root;
  try {
    root = json::parse(in);
  } catch (const json::parse_error& e) {
    throw SpecError(path + ": not valid JSON: " + e.what());
  }
  if (!root.is_object() || !root.contains("labs") || !root.at("labs").is_object())
    fail(path, "top level", "must be an object with a 'labs' object");
  if (!root.at("labs").contains(spec.lab)) return 0;
  const json& lab = root.at("labs").at(spec.lab);
  if (!lab.is_object()) fail(path, "labs." + spec.lab, "must be an object");
  int changed = 0;
  for (const auto& item : lab.items()) {
    const std::string id = item.key();
    const json& value = item.value();
    const std::string where = "labs." + spec.lab + "." + id;
    const auto it = std::find_if(spec.graders.begin(), spec.graders.end(), [&](const GraderSpec& g) { return g.id == id; });
    if (it == spec.graders.end() || it->kind != "speedup") fail(path, where, "is not a speedup grader of " + spec.path);
    if (!value.is_object()) fail(path, where, "must be an object");
    only_keys(value, {"threshold", "partial_from", "reference_ratio"}, path, where);
    const double threshold = member(value, "threshold", json::value_t::number_float, path, where).get<double>();
    const double partial = value.contains("partial_from")
                               ? member(value, "partial_from", json::value_t::number_float, path, where).get<double>()
                               : 0.0;
    if (!(threshold > 0) || !(partial >= 0 && partial < threshold))
      fail(path, where, "needs threshold > 0 and 0 <= partial_from < threshold");
    it->threshold = threshold;
    it->partial_from = partial;
    ++changed;
  }
  return changed;
}

}  // namespace convlab
