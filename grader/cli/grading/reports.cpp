// Gradebook, feedback, Gradescope results, saved state. See reports.hpp.
#include "grading/reports.hpp"

#include "grading/recheck.hpp"
#include "common/util.hpp"

#include <convlab/record.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>

namespace convlab::cli {

using nlohmann::json;

double StudentResult::total() const {
  double t = 0;
  for (const auto& l : labs) t += l.score;
  return t;
}

double StudentResult::max_total() const {
  double t = 0;
  for (const auto& l : labs) t += l.max_score;
  return t;
}

double StudentResult::possible_total() const {
  double t = 0;
  for (const auto& l : labs) t += l.max_score - unreachable_points(l);
  return t;
}

namespace {

json opt(const std::optional<double>& v) { return v && std::isfinite(*v) ? json(*v) : json(nullptr); }
std::optional<double> opt_in(const json& j, const char* k) {
  if (j.contains(k) && j.at(k).is_number()) return j.at(k).get<double>();
  return std::nullopt;
}

json test_json(const TestOutcome& t) {
  return {{"name", t.name},       {"recorded", t.recorded}, {"passed", t.passed},       {"skipped", t.skipped},
          {"message", t.message}, {"seed", t.seed},         {"base_seed", t.base_seed}, {"ratio", opt(t.ratio)},
          {"threshold", opt(t.threshold)}, {"time_ms", opt(t.time_ms)}, {"baseline_ms", opt(t.baseline_ms)},
          {"output", t.output}, {"error_map", t.error_map}};
}

TestOutcome test_in(const json& j) {
  TestOutcome t;
  t.name = j.at("name").get<std::string>();
  t.recorded = j.at("recorded").get<bool>();
  t.passed = j.at("passed").get<bool>();
  t.skipped = j.at("skipped").get<bool>();
  t.message = j.at("message").get<std::string>();
  t.seed = j.at("seed").get<std::uint64_t>();
  t.base_seed = j.at("base_seed").get<std::uint64_t>();
  t.ratio = opt_in(j, "ratio");
  t.threshold = opt_in(j, "threshold");
  t.time_ms = opt_in(j, "time_ms");
  t.baseline_ms = opt_in(j, "baseline_ms");
  t.output = j.value("output", std::string());        // absent from results saved before issue 28
  t.error_map = j.value("error_map", std::string());
  return t;
}

json recheck_json(const CompilerRecheck& c) {
  return {{"seed", c.seed},     {"failed", c.failed}, {"passed_at", c.passed_at}, {"flags", c.flags},
          {"tried", c.tried},   {"cpu", c.cpu},       {"policy", c.policy},       {"flaky", c.flaky},
          {"inconclusive", c.inconclusive}};
}

CompilerRecheck recheck_in(const json& j) {
  CompilerRecheck c;
  c.seed = j.at("seed").get<std::uint64_t>();
  c.failed = j.at("failed").get<std::string>();
  c.passed_at = j.at("passed_at").get<std::string>();
  c.flags = j.at("flags").get<std::string>();
  c.tried = j.at("tried").get<std::vector<std::string>>();
  c.cpu = j.at("cpu").get<std::string>();
  c.policy = j.at("policy").get<std::string>();
  c.flaky = j.at("flaky").get<bool>();
  c.inconclusive = j.value("inconclusive", false);
  return c;
}

// "passed", "failed", "not run"; a grade that a compiler bug decided says so.
std::string result_word(const GraderResult& g) {
  std::string w = g.passed ? "passed" : (g.ran ? "failed" : "not run");
  if (g.recheck && g.recheck->compiler_bug()) w += g.review ? " (compiler bug; for review)" : " (compiler bug)";
  return w;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string ratio_text(const std::optional<double>& r) {
  if (!r) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3gx", *r);
  return buf;
}

// Why a grader earned what it earned, where its lab's own reason is said once, above it.
std::string grader_reason(const LabResult& l, const GraderResult& g) {
  if (!l.failure.empty() && g.reason == "no points: " + l.failure) return "no points: the lab's reason above";
  return g.reason;
}

// A lab's reason for no points, where the submission's own reason is said once, above it.
std::string lab_failure(const StudentResult& r, const LabResult& l) {
  if (!r.failure.empty() && l.failure == "the submission could not be read: " + r.failure)
    return "the submission could not be read (above)";
  return l.failure;
}

std::string replay_line(const TestOutcome& t, const std::string& preset) {
  return "CONVLAB_SEED=" + std::to_string(t.base_seed) + " ctest --test-dir build/" + preset + " -R '^" + t.name +
         "$' --output-on-failure";
}

// The tests whose failure the feedback shows in full: the first few failing ones of a grader.
std::vector<const TestOutcome*> shown_failures(const GraderResult& g) {
  std::vector<const TestOutcome*> out;
  for (const auto& t : g.tests)
    if (!t.passed && out.size() < kFailuresShown) out.push_back(&t);
  return out;
}

// The test whose printing the feedback shows when no failure shown printed anything.
const TestOutcome* first_printing(const GraderResult& g) {
  for (const auto& t : g.tests)
    if (!t.output.empty()) return &t;
  return nullptr;
}

// A fenced block that no line of `text` can close.
std::string fenced(const std::string& text) {
  std::string fence = "```";
  while (text.find(fence) != std::string::npos) fence += '`';
  return fence + "text\n" + text + (text.empty() || text.back() == '\n' ? "" : "\n") + fence + "\n";
}

}  // namespace

std::string to_json(const StudentResult& r) {
  json labs = json::array();
  for (const auto& l : r.labs) {
    json graders = json::array();
    for (const auto& g : l.graders) {
      json tests = json::array();
      for (const auto& t : g.tests) tests.push_back(test_json(t));
      graders.push_back({{"id", g.id}, {"kind", g.kind}, {"description", g.description}, {"points", g.points},
                         {"max_points", g.max_points}, {"extra_credit", g.extra_credit}, {"passed", g.passed},
                         {"ran", g.ran}, {"reason", g.reason}, {"ratio", opt(g.ratio)}, {"threshold", g.threshold},
                         {"tests_passed", g.tests_passed}, {"tests_total", g.tests_total}, {"tests", tests},
                         {"review", g.review}, {"needs_gpu", g.needs_gpu}});
      if (!g.infrastructure.empty()) graders.back()["infrastructure"] = g.infrastructure;
      if (!g.on_gpu.empty()) graders.back()["on_gpu"] = g.on_gpu;
      if (g.recheck) graders.back()["recheck"] = recheck_json(*g.recheck);
    }
    labs.push_back({{"lab", l.lab}, {"title", l.title}, {"submitted", l.submitted}, {"failure", l.failure},
                    {"details", l.details}, {"notes", l.notes}, {"graders", graders}, {"score", l.score},
                    {"max_score", l.max_score}, {"build_s", l.build_s}, {"run_s", l.run_s}});
  }
  json j = {{"student", r.student}, {"id", r.id}, {"name", r.name}, {"email", r.email}, {"origin", r.origin},   {"kind", r.kind},       {"fingerprint", r.fingerprint},
            {"notes", r.notes},     {"failure", r.failure}, {"labs", labs},         {"seconds", r.seconds},
            {"total", r.total()},   {"max_total", r.max_total()}};
  return j.dump(2) + "\n";
}

StudentResult student_from_json(const std::string& text) {
  try {
    const json j = json::parse(text);
    StudentResult r;
    r.student = j.at("student").get<std::string>();
    r.id = j.value("id", std::string());  // absent from results saved before rosters
    r.name = j.value("name", std::string());
    r.email = j.value("email", std::string());
    r.origin = j.at("origin").get<std::string>();
    r.kind = j.at("kind").get<std::string>();
    r.fingerprint = j.at("fingerprint").get<std::string>();
    r.notes = j.at("notes").get<std::vector<std::string>>();
    r.failure = j.at("failure").get<std::string>();
    r.seconds = j.at("seconds").get<double>();
    for (const auto& lj : j.at("labs")) {
      LabResult l;
      l.lab = lj.at("lab").get<std::string>();
      l.title = lj.at("title").get<std::string>();
      l.submitted = lj.at("submitted").get<bool>();
      l.failure = lj.at("failure").get<std::string>();
      l.details = lj.at("details").get<std::string>();
      l.notes = lj.at("notes").get<std::vector<std::string>>();
      l.score = lj.at("score").get<double>();
      l.max_score = lj.at("max_score").get<double>();
      l.build_s = lj.at("build_s").get<double>();
      l.run_s = lj.at("run_s").get<double>();
      for (const auto& gj : lj.at("graders")) {
        GraderResult g;
        g.id = gj.at("id").get<std::string>();
        g.kind = gj.at("kind").get<std::string>();
        g.description = gj.at("description").get<std::string>();
        g.points = gj.at("points").get<double>();
        g.max_points = gj.at("max_points").get<double>();
        g.extra_credit = gj.at("extra_credit").get<bool>();
        g.passed = gj.at("passed").get<bool>();
        g.ran = gj.at("ran").get<bool>();
        g.reason = gj.at("reason").get<std::string>();
        g.ratio = opt_in(gj, "ratio");
        g.threshold = gj.at("threshold").get<double>();
        g.tests_passed = gj.at("tests_passed").get<int>();
        g.tests_total = gj.at("tests_total").get<int>();
        for (const auto& tj : gj.at("tests")) g.tests.push_back(test_in(tj));
        g.review = gj.value("review", false);  // absent from results saved before issue 18
        g.infrastructure = gj.value("infrastructure", std::string());
        g.needs_gpu = gj.value("needs_gpu", false);
        g.on_gpu = gj.value("on_gpu", std::string());
        if (gj.contains("recheck")) g.recheck = recheck_in(gj.at("recheck"));
        l.graders.push_back(std::move(g));
      }
      r.labs.push_back(std::move(l));
    }
    return r;
  } catch (const json::exception& e) {
    throw Error(std::string("not a saved grading result: ") + e.what());
  }
}

std::string gradebook_csv(const std::vector<StudentResult>& students, const std::vector<std::string>& labs,
                          const std::vector<double>& lab_max) {
  // A last column, "flags", only when a grade needs a word (a compiler bug found by a recheck):
  // a clean run's gradebook keeps the form learning-management systems import.
  std::vector<std::string> flags, not_graded;
  bool any_flag = false, any_not_graded = false, roster = false;
  // Graders this run could not grade (a GPU's, on the CPU backend) are not possible either: an LMS
  // reads a score as a share of the points possible, and 70 of 100 is not 70 % of what was graded.
  std::vector<double> possible = lab_max;
  std::vector<bool> seen(labs.size(), false);
  for (const auto& s : students) {
    std::string f, ng;
    roster = roster || !s.id.empty();
    for (const auto& l : s.labs) {
      std::vector<std::string> gpu, zero_on_gpu;
      const double gpu_points = unreachable_points(l);
      for (const auto& g : l.graders) {
        if (const std::string one = gradebook_flag(l.lab, g); !one.empty()) f += (f.empty() ? "" : " | ") + one;
        if (g.needs_gpu) gpu.push_back(g.id);
        if (g.needs_gpu && !g.on_gpu.empty()) zero_on_gpu.push_back(g.id);
      }
      if (!gpu.empty()) {
        std::string ids, zero;
        for (const auto& id : gpu) ids += (ids.empty() ? "" : ", ") + id;
        for (const auto& id : zero_on_gpu) zero += (zero.empty() ? "" : ", ") + id;
        ng += (ng.empty() ? "" : " | ") + l.lab + " " + ids + ": " + (gpu.size() > 1 ? "need" : "needs") + " a GPU (" +
              fmt_points(gpu_points) + " points)" +
              (zero.empty() ? "" : "; " + zero + " earn" + (zero_on_gpu.size() > 1 ? "" : "s") +
                                       " 0 there: work outside the stream given (see the feedback)");
      }
      for (std::size_t i = 0; i < labs.size(); ++i)
        if (labs[i] == l.lab && !seen[i]) possible[i] = lab_max[i] - gpu_points, seen[i] = true;
    }
    any_flag = any_flag || !f.empty();
    any_not_graded = any_not_graded || !ng.empty();
    flags.push_back(f);
    not_graded.push_back(ng);
  }
  std::ostringstream out;
  out << "student" << (roster ? ",id,email" : "");
  for (const auto& l : labs) out << "," << csv_field(l);
  out << ",total" << (any_flag ? ",flags" : "") << (any_not_graded ? ",not graded" : "") << "\n";
  out << "Points Possible" << (roster ? ",," : "");
  double max_total = 0;
  for (double m : possible) {
    out << "," << fmt_points(m);
    max_total += m;
  }
  out << "," << fmt_points(max_total) << (any_flag ? "," : "") << (any_not_graded ? "," : "") << "\n";
  std::size_t row = 0;
  for (const auto& s : students) {
    out << csv_field(s.name.empty() ? s.student : s.name);
    if (roster) out << "," << csv_field(s.id) << "," << csv_field(s.email);
    double total = 0;
    for (const auto& name : labs) {
      double score = 0;
      for (const auto& l : s.labs)
        if (l.lab == name) score = l.score;
      total += score;
      out << "," << fmt_points(score);
    }
    out << "," << fmt_points(total);
    if (any_flag) out << "," << csv_field(flags[row]);
    if (any_not_graded) out << "," << csv_field(not_graded[row]);
    out << "\n";
    ++row;
  }
  return out.str();
}

std::string feedback_markdown(const StudentResult& r, const std::string& preset) {
  std::ostringstream md;
  md << "# Grading feedback: " << r.student << "\n\n"
     << "Total: **" << fmt_points(r.total()) << " / " << fmt_points(r.max_total()) << "**";
  if (r.total() > r.max_total()) md << " (with extra credit)";
  md << "\n\nSubmission: `" << shown_origin(r.origin) << "` (" << r.kind << ")\n\n";
  if (!r.failure.empty()) md << "**Not graded:** " << r.failure << "\n\n";
  for (const auto& n : r.notes) md << "- Note: " << n << "\n";
  if (!r.notes.empty()) md << "\n";
  for (const auto& l : r.labs) {
    md << "## " << l.lab << " — " << l.title << ": " << fmt_points(l.score) << " / " << fmt_points(l.max_score) << "\n\n";
    if (!l.submitted) md << "No files of this lab in the submission.\n\n";
    if (!l.failure.empty()) md << "**No points for this lab:** " << lab_failure(r, l) << "\n\n";
    for (const auto& n : l.notes) md << "- Note: " << n << "\n";
    if (!l.notes.empty()) md << "\n";
    if (!l.details.empty()) md << fenced(l.details) << "\n";
    md << "| grader | result | points | speed-up | threshold |\n|---|---|---|---|---|\n";
    for (const auto& g : l.graders) {
      const std::string result = result_word(g);
      md << "| " << g.id << (g.extra_credit ? " (extra credit)" : "") << " | " << result << " | "
         << fmt_points(g.points) << " / " << fmt_points(g.max_points) << " | "
         << (g.kind == "speedup" ? ratio_text(g.ratio) : "") << " | "
         << (g.kind == "speedup" ? ratio_text(g.threshold) : "") << " |\n";
    }
    md << "\n";
    for (const auto& g : l.graders) {
      md << "### " << g.id << ": " << result_word(g) << "\n\n";
      if (!g.description.empty()) md << g.description << ".\n\n";
      md << grader_reason(l, g) << "\n\n";
      if (g.recheck) {  // looked at again with less device optimisation (recheck.hpp)
        std::istringstream lines(recheck_message(*g.recheck, g.id, true));
        for (std::string line; std::getline(lines, line);) md << "> " << line << "\n";
        md << "\n";
      }
      bool printed_shown = false;
      for (const TestOutcome* t : shown_failures(g)) {
        md << "- `" << t->name << "`" << (t->ratio ? " (speed-up " + ratio_text(t->ratio) + ")" : "") << "\n\n";
        const std::string message = failure_text(t->message);
        if (!message.empty()) md << fenced(head_lines(message, 40));
        if (!t->error_map.empty())
          md << "\n  ![error map of " << t->name << ": red wrong, yellow never written, blue tile edges](" << t->error_map
             << ")\n";
        if (t->recorded && !t->skipped) md << "\n  Replay: `" << replay_line(*t, preset) << "`\n";
        if (!t->output.empty()) {
          md << "\n  What your code printed in this test:\n\n" << fenced(head_lines(t->output, kPrintedLinesShown + 1));
          printed_shown = true;
        }
        md << "\n";
      }
      if (const TestOutcome* t = first_printing(g); t && !printed_shown)
        md << "What your code printed in `" << t->name << "` (printing costs no points):\n\n"
           << fenced(head_lines(t->output, kPrintedLinesShown + 1)) << "\n";
    }
  }
  return md.str();
}

std::string gradescope_json(const StudentResult& r, const std::string& preset) {
  json tests = json::array();
  std::string not_graded;  // a line per lab whose graders this backend could not run
  for (const auto& l : r.labs) {
    std::string unreachable, zero_on_gpu;
    for (const auto& g : l.graders) {
      // Not a test of these results (a speed grader on the CPU backend): Gradescope would count its
      // max_score as possible, and the gradebook does not. The output says which and why, and what
      // the GPU's grader will refuse already (issue 27, item 5).
      if (g.needs_gpu) {
        unreachable += (unreachable.empty() ? "" : ", ") + g.id;
        if (!g.on_gpu.empty()) zero_on_gpu += "\n  " + g.id + " " + g.on_gpu;
        continue;
      }
      std::string output = grader_reason(l, g);
      if (g.recheck) output += "\n\n" + recheck_message(*g.recheck, g.id, true);
      const TestOutcome* printed = nullptr;
      for (const auto& t : g.tests)
        if (!t.passed && t.recorded && !t.skipped) {
          std::string message = head_lines(failure_text(t.message), 30);
          // The error map's copy beside the feedback, named from the output folder.
          if (const auto p = t.error_map.empty() ? std::string::npos : message.find(t.error_map); p != std::string::npos)
            message.insert(p, "feedback/");
          output += "\n\n" + t.name + ":\n" + message + (message.empty() || message.back() == '\n' ? "" : "\n") +
                    "Replay: " + replay_line(t, preset);
          if (!t.output.empty()) printed = &t;
          break;
        }
      if (!printed) printed = first_printing(g);
      if (printed)
        output += "\n\nWhat your code printed in " + printed->name + " (printing costs no points):\n" +
                  head_lines(printed->output, kPrintedLinesShown + 1);
      tests.push_back({{"name", l.lab + " " + g.id + (g.description.empty() ? "" : ": " + g.description)},
                       {"score", g.points},
                       {"max_score", g.extra_credit ? 0.0 : g.max_points},
                       {"status", g.passed ? "passed" : "failed"},
                       {"output", output}});
    }
    if (!unreachable.empty())
      not_graded += "\n" + l.lab + " " + unreachable + " (" + fmt_points(unreachable_points(l)) + " points): " + kNeedsGpu +
                    zero_on_gpu;
  }
  // Out of the points possible on this backend, as the gradebook's row (70 / 70 for lab 01's
  // reference on the CPU backend, not 70 / 100).
  const double possible = r.possible_total();
  std::string summary = "convlab: " + fmt_points(r.total()) + " / " + fmt_points(possible);
  if (possible != r.max_total()) summary += " (of " + fmt_points(r.max_total()) + " with the graders that need a GPU)";
  if (!r.failure.empty()) summary += "\n" + r.failure;
  for (const auto& n : r.notes) summary += "\nNote: " + n;
  for (const auto& l : r.labs) {
    summary += "\n" + l.lab + ": " + fmt_points(l.score) + " / " + fmt_points(l.max_score - unreachable_points(l));
    if (!l.failure.empty()) summary += " — " + lab_failure(r, l);
    for (const auto& n : l.notes) summary += "\n  Note: " + n;
  }
  if (!not_graded.empty()) summary += "\nNot graded here, not counted as possible:" + not_graded;
  const json j = {{"score", r.total()}, {"max_score", possible}, {"tests", tests}, {"output", summary}};
  return j.dump(2) + "\n";
}

void keep_error_maps(const std::string& results, const std::string& feedback_dir, const std::string& student,
                     std::vector<TestOutcome>& tests) {
  namespace fs = std::filesystem;
  std::size_t shown = 0;
  for (auto& t : tests) {
    if (t.passed || shown++ >= kFailuresShown) continue;
    const std::string map = results + "/error-maps/" + safe_name(t.name) + ".png";
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(map, ec))) continue;  // the judge's file, never a link
    make_dirs(feedback_dir + "/" + student);
    const std::string copy = student + "/" + safe_name(t.name) + ".png";
    fs::copy_file(map, feedback_dir + "/" + copy, fs::copy_options::overwrite_existing, ec);
    if (ec) continue;
    t.error_map = copy;
    if (const auto p = t.message.find(map); p != std::string::npos) t.message.replace(p, map.size(), copy);
  }
}

std::string shown_origin(const std::string& origin) {
  std::string o = origin;
  while (o.size() > 1 && o.back() == '/') o.pop_back();
  const auto slash = o.rfind('/');
  return slash == std::string::npos ? o : o.substr(slash + 1);
}

std::string strip_machine_paths(const std::string& text, const std::vector<std::string>& roots) {
  std::vector<std::string> sorted;
  std::string course;  // roots.front(): its own files are named by their place in the course
  for (const auto& root : roots) {
    std::string r = root;
    while (r.size() > 1 && r.back() == '/') r.pop_back();
    if (r.size() > 1 && r[0] == '/') sorted.push_back(r);
    if (&root == &roots.front()) course = r;
  }
  // The longest first: the work folder may lie inside the output folder, both inside the course.
  std::sort(sorted.begin(), sorted.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  const auto path_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '_' || c == '-' || c == '+';
  };
  std::string out = text;
  for (const auto& root : sorted) {
    for (std::size_t p = out.find(root); p != std::string::npos; p = out.find(root, p)) {
      const std::size_t after = p + root.size();
      if (after < out.size() && out[after] != '/' && path_char(out[after])) {  // /work/x is not /work/xy
        p = after;
        continue;
      }
      std::size_t end = after;
      while (end < out.size() && path_char(out[end])) ++end;
      const std::string rest = out.substr(after, end - after);  // "/slots/0/src/labs/lab01.hpp" or ""
      std::string shown;
      const auto src = rest.rfind("/src/"), build = rest.rfind("/build/");
      if (src != std::string::npos && (build == std::string::npos || src > build)) shown = rest.substr(src + 5);
      else if (build != std::string::npos) shown = "build/" + rest.substr(build + 7);
      else if (root == course && !rest.empty()) shown = rest.substr(1);
      else shown = rest.empty() ? std::string("the grading folder") : rest.substr(rest.rfind('/') + 1);
      out.replace(p, end - p, shown);
      p += shown.size();
    }
  }
  return out;
}

void strip_machine_paths(StudentResult& r, const std::vector<std::string>& roots) {
  const auto clean = [&](std::string& s) { s = strip_machine_paths(s, roots); };
  clean(r.failure);
  for (auto& n : r.notes) clean(n);
  for (auto& l : r.labs) {
    clean(l.failure);
    clean(l.details);
    for (auto& n : l.notes) clean(n);
    for (auto& g : l.graders) {
      clean(g.reason);
      for (auto& t : g.tests) {
        clean(t.message);
        clean(t.output);
      }
      if (g.recheck) {
        clean(g.recheck->failed);
        clean(g.recheck->cpu);
        for (auto& line : g.recheck->tried) clean(line);
      }
    }
  }
}

std::string fence_refusal(const std::vector<std::string>& findings, std::size_t most) {
  std::string out;
  std::vector<std::string> said;
  for (std::size_t i = 0; i < findings.size() && i < most; ++i) {
    std::string line = findings[i];
    // Its reason: the parenthesised tail, "(...)", which several findings often share.
    if (!line.empty() && line.back() == ')') {
      int depth = 0;
      std::size_t open = std::string::npos;
      for (std::size_t k = line.size(); k-- > 0;) {
        depth += line[k] == ')' ? 1 : line[k] == '(' ? -1 : 0;
        if (depth == 0) {
          open = k;
          break;
        }
      }
      if (open != std::string::npos && open > 0) {
        const std::string why = line.substr(open);
        if (std::find(said.begin(), said.end(), why) != said.end()) line = line.substr(0, open) + "(as above)";
        else said.push_back(why);
      }
    }
    out += (out.empty() ? "- " : "\n- ") + line;
  }
  if (findings.size() > most) out += "\n- and " + std::to_string(findings.size() - most) + " more";
  return out;
}

std::string compare_with_expected(const std::string& expect_path, const std::vector<StudentResult>& results,
                                  int* differences) {
  json expect;
  try {
    expect = json::parse(read_file(expect_path));
  } catch (const json::exception& e) {
    throw Error(expect_path + ": not valid JSON: " + e.what());
  }
  int bad = 0;
  std::ostringstream t;
  t << "\nexpected scores (" << expect_path << "):\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-28s %-7s %9s %9s  %s\n", "student", "lab", "expected", "actual", "");
  t << buf;
  for (const auto& [student, labs] : expect.items()) {
    if (starts_with(student, "_")) continue;  // comments
    const StudentResult* r = nullptr;
    for (const auto& x : results)
      if (x.student == student) r = &x;
    for (const auto& [lab, want] : labs.items()) {
      if (lab == "reason") continue;
      std::optional<double> got;
      if (r)
        for (const auto& l : r->labs)
          if (l.lab == lab) got = l.score;
      // A number, or a list of acceptable numbers (where the sandbox decides, e.g. a write refused or detected).
      bool ok = false;
      std::string wanted;
      for (const auto& w : want.is_array() ? want : json::array({want})) {
        if (!w.is_number()) continue;
        wanted += (wanted.empty() ? "" : "|") + fmt_points(w.get<double>());
        ok = ok || (got && std::abs(*got - w.get<double>()) < 0.01);
      }
      bad += ok ? 0 : 1;
      std::snprintf(buf, sizeof buf, "%-28s %-7s %9s %9s  %s\n", student.c_str(), lab.c_str(), wanted.c_str(),
                    got ? fmt_points(*got).c_str() : "missing", ok ? "ok" : "DIFFERENT");
      t << buf;
      if (ok && r && labs.contains("reason")) {
        const std::string needle = labs.at("reason").get<std::string>();
        std::string all = to_json(*r);
        if (all.find(needle) == std::string::npos) {
          ++bad;
          t << "  " << student << ": no reason mentions '" << needle << "'  DIFFERENT\n";
        }
      }
    }
  }
  t << (bad ? std::to_string(bad) + " difference(s)" : std::string("every score as expected")) << "\n";
  *differences = bad;
  return t.str();
}


std::string seconds_per_submission(const std::vector<const StudentResult*>& results) {
  double build = 0, run = 0;
  std::size_t n = 0;
  for (const StudentResult* r : results) {
    double b = 0, u = 0;
    for (const auto& l : r->labs) b += l.build_s, u += l.run_s;
    if (b + u <= 0) continue;  // nothing of it was built or run (an unreadable submission)
    build += b, run += u, ++n;
  }
  if (n == 0) return "no submission graded";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%zu submission%s, %.1f s each (build %.1f, run %.1f)", n, n == 1 ? "" : "s",
                (build + run) / n, build / n, run / n);
  return buf;
}

}  // namespace convlab::cli
