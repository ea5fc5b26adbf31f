// The docs tests of the handouts (labs/NN-slug/README.md): every number of a
// worked answer is what the project's code computes, the "at a glance" box
// agrees with the grading spec and the contract, every chapter ends with its
// questions and their folded answers, and a student page links nowhere a
// student cannot follow. CTest names: docs.handouts.<lab>.<check>.
#include "answers.hpp"
#include "gpu_model.hpp"
#include "handout.hpp"
#include "stencil_op_ratio.hpp"

#include <convlab/spec.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace convlab::handout;

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += "  " + l + "\n";
  return s;
}

std::string readme(const std::string& slug) { return read_source_file("labs/" + slug + "/README.md"); }

// --- the "at a glance" box ---------------------------------------------------

std::string points_text(double p) {
  char buf[32];
  if (p == std::floor(p))
    std::snprintf(buf, sizeof buf, "%.0f", p);
  else
    std::snprintf(buf, sizeof buf, "%.1f", p);
  return buf;
}

// "100: correctness 70, speed 30", with "+ N extra credit: ...; extra credit: ..."
// when the lab has extra credit. Kinds in the order the spec lists them; a kind
// other than correctness and speedup (technique graders) is named as it is.
std::string expected_points(const convlab::LabSpec& spec) {
  const auto by_kind = [&](bool extra) {
    std::vector<std::pair<std::string, double>> kinds;
    double total = 0;
    for (const auto& g : spec.graders) {
      if (g.extra_credit != extra) continue;
      const std::string name = g.kind == "speedup" ? "speed" : g.kind;
      total += g.points;
      bool found = false;
      for (auto& k : kinds)
        if (k.first == name) k.second += g.points, found = true;
      if (!found) kinds.push_back({name, g.points});
    }
    std::string s;
    for (const auto& k : kinds) s += (s.empty() ? "" : ", ") + k.first + " " + points_text(k.second);
    return std::make_pair(total, s);
  };
  const auto [base, base_text] = by_kind(false);
  const auto [extra, extra_text] = by_kind(true);
  if (extra == 0) return points_text(base) + ": " + base_text;
  return points_text(base) + " + " + points_text(extra) + " extra credit: " + base_text + "; extra credit: " +
         extra_text;
}

// The problems of a handout's box against its spec and contract header.
std::vector<std::string> glance_problems(const std::string& text, const convlab::LabSpec& spec,
                                         const std::string& header) {
  std::vector<std::string> problems;
  std::string box;
  try {
    box = between_markers(text, "at_a_glance");
  } catch (const std::exception& e) {
    return {e.what()};
  }
  const auto rows = table_rows(box);
  const auto row = [&](const std::string& label) -> std::string {
    const auto it = rows.find(label);
    if (it == rows.end()) {
      problems.push_back("the box has no row '" + label + "'");
      return "";
    }
    return it->second;
  };
  // Files: exactly the submission's, as `starter_code/<slug>/<file>`.
  std::set<std::string> files, want;
  const std::string f = row("Files you edit");
  for (std::size_t b = f.find('`'); b != std::string::npos; b = f.find('`', f.find('`', b + 1) + 1)) {
    const std::size_t e = f.find('`', b + 1);
    if (e == std::string::npos) break;
    files.insert(f.substr(b + 1, e - b - 1));
  }
  for (const auto& file : spec.files) want.insert("starter_code/" + spec.slug + "/" + file);
  if (files != want) {
    std::string w;
    for (const auto& x : want) w += " `" + x + "`";
    problems.push_back("'Files you edit' lists other files than grading.json's submission.files:" + w);
  }
  // Functions: every convlab::labNN::name() is declared in the contract.
  const std::string fn = row("Functions you write");
  const std::string prefix = "convlab::" + spec.lab + "::";
  int named = 0;
  for (std::size_t p = fn.find(prefix); p != std::string::npos; p = fn.find(prefix, p + 1)) {
    const std::size_t b = p + prefix.size(), e = fn.find("()", b);
    if (e == std::string::npos) {
      problems.push_back("'Functions you write': " + fn.substr(p, 40) + "... has no ()");
      continue;
    }
    const std::string name = fn.substr(b, e - b);
    ++named;
    if (header.find(" " + name + "(") == std::string::npos)
      problems.push_back("'Functions you write' names " + name + "(), which " + spec.lab + ".hpp does not declare");
  }
  if (named == 0) problems.push_back("'Functions you write' names no function as " + prefix + "name()");
  // Points: as the spec adds them up.
  const std::string pts = row("Points"), want_pts = expected_points(spec);
  if (pts != want_pts) problems.push_back("'Points' says '" + pts + "'; grading.json gives '" + want_pts + "'");
  // Commands: the lab's own.
  const std::string check = row("Check your work"), bench = row("Time it"), cpu = row("Without a GPU");
  for (const auto& [cell, needle] : std::vector<std::pair<std::string, std::string>>{
           {check, "convlab check " + spec.lab}, {check, "-L " + spec.lab}, {bench, "convlab bench " + spec.lab},
           {cpu, "--preset cpu"}, {cpu, "-L " + spec.lab}})
    if (!cell.empty() && cell.find(needle) == std::string::npos)
      problems.push_back("a command row lacks '" + needle + "'");
  return problems;
}

// --- questions and the end of a chapter --------------------------------------

std::vector<std::string> question_problems(const std::string& text, const std::string& lab) {
  std::vector<std::string> problems;
  const std::string s = section(text, lab + "_check");
  if (s.empty()) return {"no section 'Check your understanding {#" + lab + "_check}'"};
  const auto qs = questions(s);
  if (qs.size() < 5 || qs.size() > 10)
    problems.push_back(std::to_string(qs.size()) + " questions; a chapter asks 5 to 10");
  bool predict = false;
  for (const auto& q : qs) {
    if (!q.has_answer)
      problems.push_back("question '" + q.title + "' has no folded answer (<details><summary>...</summary>)");
    if (q.title.find("Predict, then measure") != std::string::npos &&
        q.body.find("convlab bench " + lab) != std::string::npos)
      predict = true;
  }
  if (!predict)
    problems.push_back("no question titled 'Predict, then measure' that runs `convlab bench " + lab + "`");
  // The chapter closes with what the student should see, after the questions.
  const auto check_at = text.find("{#" + lab + "_check}"), results_at = text.find("{#" + lab + "_results}");
  if (results_at == std::string::npos)
    problems.push_back("no section 'What you should see {#" + lab + "_results}'");
  else if (results_at < check_at)
    problems.push_back("'What you should see' comes before 'Check your understanding'; it closes the chapter");
  else if (text.find("What you should see", results_at - 40) > results_at)
    problems.push_back("the section {#" + lab + "_results} is not titled 'What you should see'");
  // The box opens it.
  const auto glance_at = text.find("<!-- at_a_glance:begin -->"), goal_at = text.find("{#" + lab + "_goal}");
  if (glance_at == std::string::npos || goal_at == std::string::npos || glance_at > goal_at)
    problems.push_back("the 'at a glance' box does not open the chapter (before {#" + lab + "_goal})");
  return problems;
}

// Lines that cite a source by its number ("seed article 003", "Seed 004",
// also broken over two lines) instead of by title and author.
std::vector<std::string> source_numbers(std::string text) {
  for (auto& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (std::size_t p = text.find("seed\narticle"); p != std::string::npos; p = text.find("seed\narticle", p))
    text.replace(p, 12, "seed article\n");  // joined on the first line, the line count kept
  std::vector<std::string> out;
  for (const char* needle : {"seed article", "seed 00"})
    for (const auto& l : lines_with(text, needle)) out.push_back(l);
  return out;
}

// What a student page must not contain: links to files a student does not
// have (the project's shared notes, the instructor's GPU script, the reference
// solutions), the instructor's build, and sources cited by number.
std::vector<std::string> student_link_problems(const std::string& text) {
  std::vector<std::string> problems;
  for (const char* needle : {"shared/", "perf-anchors", ".ci/", "reference/", "build/instructor", "--preset instructor",
                             "commit `"})
    for (const auto& l : lines_with(text, needle)) problems.push_back("'" + std::string(needle) + "' on " + l);
  for (const auto& l : source_numbers(text)) problems.push_back("a source cited by number on " + l);
  // A lab notebook's phrases: when and in which run a figure was taken, what was once seen.
  // A student page teaches; the notebook lives in docs/instructor.md and docs/maintainers.md.
  std::string lower = text;
  for (auto& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (const char* needle : {"earlier run", "same day", "is not known", "once scored"})
    for (const auto& l : lines_with(lower, needle)) problems.push_back("a lab-notebook phrase '" + std::string(needle) + "' on " + l);
  return problems;
}

// --- predictions: what answers a "Predict, then measure" question stays behind it -------

// The problems of a chapter's predictions: a measured figure that answers one of its
// "Predict, then measure" questions (`measured`, as the handout prints it) must not appear
// before the questions, where a student reads it before predicting; each such question
// that times with `convlab bench` links to "What you should see", and that section says
// which questions it answers.
std::vector<std::string> prediction_problems(const std::string& text, const std::string& lab,
                                             const std::vector<std::string>& measured) {
  std::vector<std::string> problems;
  const auto check_at = text.find("{#" + lab + "_check}");
  if (check_at == std::string::npos) return {"no section 'Check your understanding {#" + lab + "_check}'"};
  const std::string before = text.substr(0, check_at);
  for (const auto& m : measured)
    for (const auto& l : lines_with(before, m))
      problems.push_back("'" + m + "' answers a 'Predict, then measure' question but stands before the questions, " + l);
  for (const auto& q : questions(section(text, lab + "_check"))) {
    if (q.title.find("Predict, then measure") == std::string::npos) continue;
    const std::string asked = q.body.substr(0, q.body.find("<details>"));
    // A question that times with `convlab bench labNN` finds the reference's times in
    // "What you should see"; one that only counts loads (--traffic) has them in its answer.
    if (asked.find("`convlab bench " + lab + "`") == std::string::npos) continue;
    if (asked.find("\\ref " + lab + "_results") == std::string::npos)
      problems.push_back("question '" + q.title + "' does not link to \\ref " + lab +
                         "_results (\"open it after you predicted\") before its answer");
  }
  if (section(text, lab + "_results").find("\\ref " + lab + "_check") == std::string::npos)
    problems.push_back("'What you should see' does not say which questions of \\ref " + lab + "_check it answers");
  return problems;
}

struct Lab {
  std::string lab, slug;
  std::function<std::vector<Answer>()> answers;
  std::vector<std::string> measured;  ///< the figures that answer its "Predict, then measure" questions
};

const Lab kLabs[] = {
    {"lab01", "01-conv-basic", lab01_answers, {"0.920"}},
    {"lab02", "02-conv-constant", lab02_answers, {"0.96x", "1.23x", "5–7 %", "98.8", "50.1"}},
    {"lab03", "03-conv-tiled-halo", lab03_answers, {"6.8285", "4.2600", "4.260", "0.738", "1.60x"}},
    {"lab04", "04-conv-cached-halo", lab04_answers, {"0.7846", "0.785", "0.371", "2.11"}},
    {"lab05", "05-stencil", lab05_answers, {"0.399", "0.398", "0.759", "0.748", "6.96", "94 %", "49 %", "0.4724", "0.4578", "0.4448"}},
    {"lab06", "06-conv-im2col-cudnn", lab06_answers, {"1.5823", "1.58 ms"}},
};

void check_answers_of(const Lab& l) {
  const auto problems = check_answers(answer_spans(readme(l.slug)), l.answers());
  EXPECT_TRUE(problems.empty()) << "labs/" << l.slug << "/README.md: the numbers of the answers are not what the "
                                << "code computes (docs/handout_check/answers_" << l.lab << ".cpp):\n"
                                << join(problems);
}

void check_glance_of(const Lab& l) {
  const auto spec = convlab::load_spec(std::string(CONVLAB_SOURCE_DIR) + "/labs/" + l.slug + "/grading.json");
  const auto problems = glance_problems(readme(l.slug), spec, read_source_file("labs/" + l.slug + "/" + l.lab + ".hpp"));
  EXPECT_TRUE(problems.empty()) << "labs/" << l.slug << "/README.md, the 'at a glance' box:\n" << join(problems);
}

void check_questions_of(const Lab& l) {
  const auto problems = question_problems(readme(l.slug), l.lab);
  EXPECT_TRUE(problems.empty()) << "labs/" << l.slug << "/README.md:\n" << join(problems);
}

void check_predictions_of(const Lab& l) {
  const auto problems = prediction_problems(readme(l.slug), l.lab, l.measured);
  EXPECT_TRUE(problems.empty()) << "labs/" << l.slug << "/README.md: the measurements give the predictions away:\n"
                                << join(problems);
}

void check_links_of(const Lab& l) {
  const auto problems = student_link_problems(readme(l.slug));
  EXPECT_TRUE(problems.empty()) << "labs/" << l.slug << "/README.md is a student page; move these to "
                                << "docs/instructor.md or cite the fact itself:\n"
                                << join(problems);
}

#define CONVLAB_HANDOUT_TESTS(index, lab)                          \
  TEST(lab, answers) { check_answers_of(kLabs[index]); }           \
  TEST(lab, at_a_glance) { check_glance_of(kLabs[index]); }        \
  TEST(lab, questions) { check_questions_of(kLabs[index]); }       \
  TEST(lab, predictions) { check_predictions_of(kLabs[index]); }   \
  TEST(lab, student_links) { check_links_of(kLabs[index]); }

CONVLAB_HANDOUT_TESTS(0, lab01)
CONVLAB_HANDOUT_TESTS(1, lab02)
CONVLAB_HANDOUT_TESTS(2, lab03)
CONVLAB_HANDOUT_TESTS(3, lab04)
CONVLAB_HANDOUT_TESTS(4, lab05)
CONVLAB_HANDOUT_TESTS(5, lab06)

// Tables pasted into a handout, as lab 03's OP/B tables are (handout_answers prints them).
TEST(lab04, cached_taps_table) {
  EXPECT_EQ(between_markers(readme("04-conv-cached-halo"), "cached_taps"), lab04_cached_taps_table())
      << "paste the cached_taps table that handout_answers prints";
}
TEST(lab05, stencil_op_ratio_table) {
  EXPECT_EQ(between_markers(readme("05-stencil"), "stencil_op_ratio"),
            convlab::lab05::stencil_op_ratio_table_markdown())
      << "paste the stencil_op_ratio table that handout_answers prints";
}

// The student pages that are not chapters follow the chapters' rules (docs/maintainers.md,
// docs/instructor*.md and docs/grading.md are not student pages).
TEST(site, student_pages_for_students) {
  std::vector<std::string> problems;
  for (const char* page : {"docs/mainpage.md", "docs/chapters.md", "docs/commands.md", "docs/known-issues.md"})
    for (const auto& l : student_link_problems(read_source_file(page))) problems.push_back(std::string(page) + " " + l);
  EXPECT_TRUE(problems.empty()) << "a student page; move these to docs/maintainers.md or cite the fact itself:\n"
                                << join(problems);
}

// The other pages of the site cite their sources by title and author too.
TEST(site, sources_cited_by_name) {
  std::vector<std::string> problems;
  for (const char* page : {"docs/mainpage.md", "docs/instructor.md", "docs/chapters.md"})
    for (const auto& l : source_numbers(read_source_file(page))) problems.push_back(std::string(page) + " " + l);
  EXPECT_TRUE(problems.empty()) << "cite a source by title and author (docs/mainpage.md, Sources), not by number:\n"
                                << join(problems);
}

// The instructor notes say what to run and what it shows; when and in which session a
// figure was taken, the commits and the CI script's runs are the lab notebook's
// (docs/maintainers.md, outside the navigation of students and instructors alike).
TEST(site, instructor_notes_are_not_a_notebook) {
  std::string text = read_source_file("docs/instructor.md");
  for (auto& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
  std::vector<std::string> problems;
  for (const char* needle : {"2026-", "2025-", ".ci/", "commit `", "earlier run", "same day", "same session",
                             "this session", "is not known", "not recorded", "notebook entry"})
    for (const auto& l : lines_with(text, needle)) problems.push_back("'" + std::string(needle) + "' on " + l);
  EXPECT_TRUE(problems.empty()) << "docs/instructor.md reads as a lab notebook; move these to docs/maintainers.md "
                                << "(Lab notebook) and say what to run and what it shows:\n"
                                << join(problems);
}

// A page sits under one parent in the navigation: `\subpage X` twice puts it there twice.
TEST(site, one_parent_per_page) {
  std::vector<std::string> pages = {"docs/mainpage.md",    "docs/chapters.md",   "docs/commands.md",
                                    "docs/instructors.md", "docs/instructor.md", "docs/grading.md",
                                    "docs/known-issues.md", "docs/maintainers.md", "docs/quickstart.md",
                                    "docs/architecture.md"};
  for (const auto& l : kLabs) pages.push_back("labs/" + l.slug + "/README.md");
  std::map<std::string, std::vector<std::string>> parents;
  for (const auto& page : pages) {
    const std::string text = read_source_file(page);
    for (std::size_t p = text.find("\\subpage "); p != std::string::npos; p = text.find("\\subpage ", p + 1)) {
      std::size_t b = p + 9, e = b;
      while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_')) ++e;
      parents[text.substr(b, e - b)].push_back(page);
    }
  }
  std::vector<std::string> problems;
  for (const auto& [child, from] : parents)
    if (from.size() > 1) {
      std::string where;
      for (const auto& f : from) where += " " + f;
      problems.push_back(child + " is a \\subpage of" + where);
    }
  EXPECT_TRUE(problems.empty()) << "link to a page with \\ref where it is not its parent:\n" << join(problems);
}

// Doxygen ends the text of `\ref anchor "text"` at the end of the line: a text
// broken over two lines turns the rest of the page into raw text, without a
// warning (docs.render then finds its anchors missing). One line each.
std::vector<std::string> split_ref_texts(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    for (std::size_t p = line.find("\\ref "); p != std::string::npos; p = line.find("\\ref ", p + 1)) {
      std::size_t q = p + 5;
      while (q < line.size() && (std::isalnum(static_cast<unsigned char>(line[q])) || line[q] == '_')) ++q;
      if (line.compare(q, 2, " \"") == 0 && line.find('"', q + 2) == std::string::npos)
        out.push_back("line " + std::to_string(n) + ": " + line);
    }
  return out;
}

TEST(site, ref_texts_on_one_line) {
  std::vector<std::string> problems;
  std::vector<std::string> pages = {"docs/mainpage.md",   "docs/chapters.md",     "docs/commands.md",
                                    "docs/instructors.md", "docs/instructor.md",   "docs/grading.md",
                                    "docs/known-issues.md", "docs/maintainers.md", "docs/architecture.md"};
  for (const auto& l : kLabs) pages.push_back("labs/" + l.slug + "/README.md");
  for (const auto& page : pages)
    for (const auto& l : split_ref_texts(read_source_file(page))) problems.push_back(page + " " + l);
  EXPECT_TRUE(problems.empty()) << "a \\ref's quoted text must end on its own line (Doxygen drops the rest of the "
                                << "page otherwise):\n"
                                << join(problems);
}

// --- the checks themselves: each catches what it is for ------------------------

TEST(checker, answers_catch_a_wrong_number) {
  const std::string text =
      "a\n<span data-answer=\"x.a\">8.68</span> b <span data-answer=\"x.b\">3</span>\n"
      "<span data-answer=\"x.typo\">1</span>\n<span data-answer=\"x.a\">8.69</span>\n";
  const auto p = check_answers(answer_spans(text), {{"x.a", "8.68"}, {"x.b", "3"}, {"x.missing", "7"}});
  const std::string all = join(p);
  EXPECT_EQ(p.size(), 3u) << all;
  EXPECT_NE(all.find("README.md:4: x.a is 8.69, the code computes 8.68"), std::string::npos) << all;
  EXPECT_NE(all.find("README.md:3: x.typo is not an answer the code computes"), std::string::npos) << all;
  EXPECT_NE(all.find("x.missing (7) is computed but not in README.md"), std::string::npos) << all;
  EXPECT_TRUE(check_answers(answer_spans("<span data-answer=\"x.a\"> 8.68 </span>"), {{"x.a", "8.68"}}).empty());
}

TEST(checker, answers_catch_a_malformed_span) {
  const auto p = check_answers(answer_spans("<span data-answer=\"x.a>8.68</span>\n"), {});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("README.md:1: an answer span without"), std::string::npos) << p[0];
  EXPECT_EQ(answer_spans("<span data-answer=\"k\">1 <span data-answer=\"j\">2</span>")[0].key, "!malformed");
}

TEST(checker, glance_catches_wrong_points_files_and_functions) {
  convlab::LabSpec spec;
  spec.lab = "lab09";
  spec.slug = "09-x";
  spec.files = {"a.cu", "b.cu"};
  const auto grader = [](const char* kind, double points, bool extra) {
    convlab::GraderSpec g;
    g.kind = kind;
    g.points = points;
    g.extra_credit = extra;
    return g;
  };
  spec.graders = {grader("correctness", 60, false), grader("speedup", 40, false), grader("speedup", 10, true)};
  EXPECT_EQ(expected_points(spec), "100 + 10 extra credit: correctness 60, speed 40; extra credit: speed 10");
  const std::string header = "void conv_a(int x);\n";
  const auto box = [](const std::string& files, const std::string& fns, const std::string& pts) {
    return "<!-- at_a_glance:begin -->\n| At a glance | |\n|---|---|\n| **Files you edit** | " + files +
           " |\n| **Functions you write** | " + fns + " |\n| **Points** | " + pts +
           " |\n| **Check your work** | `convlab check lab09`, `ctest -L lab09` |\n| **Time it** | "
           "`convlab bench lab09` |\n| **Without a GPU** | `ctest --preset cpu -L lab09` |\n<!-- at_a_glance:end -->\n";
  };
  const std::string pts = expected_points(spec);
  EXPECT_TRUE(glance_problems(box("`starter_code/09-x/a.cu`, `starter_code/09-x/b.cu`", "convlab::lab09::conv_a()", pts),
                              spec, header)
                  .empty());
  EXPECT_EQ(glance_problems(box("`starter_code/09-x/a.cu`", "convlab::lab09::conv_a()", pts), spec, header).size(), 1u);
  EXPECT_EQ(glance_problems(box("`starter_code/09-x/a.cu`, `starter_code/09-x/b.cu`", "convlab::lab09::conv_b()", pts),
                            spec, header)
                .size(),
            1u);
  EXPECT_EQ(glance_problems(box("`starter_code/09-x/a.cu`, `starter_code/09-x/b.cu`", "convlab::lab09::conv_a()",
                                "100: correctness 60, speed 40"),
                            spec, header)
                .size(),
            1u);
  EXPECT_EQ(glance_problems("no box here", spec, header).size(), 1u);
}

TEST(checker, questions_need_answers_and_a_prediction) {
  const auto chapter = [](const std::string& questions) {
    return "<!-- at_a_glance:begin -->\n<!-- at_a_glance:end -->\n# Goal {#lab09_goal}\n\n"
           "# Check your understanding {#lab09_check}\n\n" +
           questions + "\n# What you should see {#lab09_results}\n\ntext\n";
  };
  std::string five;
  for (int i = 1; i <= 4; ++i)
    five += std::to_string(i) + ". **Q" + std::to_string(i) + ".** Ask.\n   <details><summary>Answer</summary>\n   A.\n"
            "   </details>\n";
  const std::string predict =
      "5. **Predict, then measure.** Run `convlab bench lab09`.\n   <details><summary>Answer</summary>\n   A.\n"
      "   </details>\n";
  EXPECT_TRUE(question_problems(chapter(five + predict), "lab09").empty()) << join(question_problems(chapter(five + predict), "lab09"));
  EXPECT_EQ(question_problems(chapter(five), "lab09").size(), 2u);  // 4 questions, no prediction
  std::string unanswered = five + "5. **Predict, then measure.** Run `convlab bench lab09`.\n";
  EXPECT_EQ(question_problems(chapter(unanswered), "lab09").size(), 1u);
  EXPECT_EQ(question_problems("# Goal {#lab09_goal}\n", "lab09").size(), 1u);
}

TEST(checker, predictions_stay_behind_their_questions) {
  const std::string questions =
      "# Check your understanding {#lab09_check}\n\n1. **Predict, then measure.** Predict, run `convlab bench lab09`. See \\ref lab09_results.\n"
      "   <details><summary>Answer</summary>\n   It took 0.920 ms.\n   </details>\n\n";
  const std::string results = "# What you should see {#lab09_results}\n\nAnswers question 1 of \\ref lab09_check.\n"
                              "| r | time |\n| 2 | 0.920 |\n";
  EXPECT_TRUE(prediction_problems("# Background {#lab09_b}\n\ntext\n" + questions + results, "lab09", {"0.920"}).empty())
      << join(prediction_problems("# Background {#lab09_b}\n\ntext\n" + questions + results, "lab09", {"0.920"}));
  // the measurement in the background, the question without its link, the results without theirs
  EXPECT_EQ(prediction_problems("# Background\nr = 2 takes 0.920 ms\n" + questions + results, "lab09", {"0.920"}).size(), 1u);
  std::string unlinked = questions;
  const std::string link = "See \\ref lab09_results.";
  unlinked.replace(unlinked.find(link), link.size(), "");
  EXPECT_EQ(prediction_problems(unlinked + results, "lab09", {"0.920"}).size(), 1u);
  EXPECT_EQ(prediction_problems(questions + "# What you should see {#lab09_results}\n\n| 2 | 0.920 |\n", "lab09", {"0.920"}).size(), 1u);
}

// The SM model behind the banks and occupancy answers, on cases known from elsewhere.
TEST(checker, gpu_model_banks_and_occupancy) {
  std::vector<long long> row, column, broadcast;
  for (int k = 0; k < 32; ++k) row.push_back(100 + k), column.push_back(32LL * k), broadcast.push_back(7);
  EXPECT_EQ(bank_passes(row), 1);
  EXPECT_EQ(bank_passes(column), 32);
  EXPECT_EQ(bank_passes(broadcast), 1);  // one word for all lanes: a broadcast, not a conflict
  // Lab 06's implicit GEMM as Nsight Compute saw it: 128 registers, 256 threads, 2 blocks
  // of 8 warps per SM, "25 % possible".
  const Occupancy gemm = h100_occupancy(256, 128, 21 * 1024);
  EXPECT_EQ(gemm.blocks, 2);
  EXPECT_EQ(gemm.limiter, "registers");
  EXPECT_DOUBLE_EQ(gemm.percent, 25.0);
  // The other limits: shared memory (100 KB blocks), threads (1024-thread blocks, few
  // registers) and the 32-block cap (32-thread blocks).
  EXPECT_EQ(h100_occupancy(128, 32, 100 * 1024).limiter, "shared memory");
  EXPECT_EQ(h100_occupancy(128, 32, 100 * 1024).blocks, 2);
  EXPECT_EQ(h100_occupancy(1024, 16, 0).blocks, 2);
  EXPECT_EQ(h100_occupancy(1024, 16, 0).limiter, "threads");
  EXPECT_EQ(h100_occupancy(32, 16, 0).blocks, 32);
  EXPECT_EQ(h100_registers_for(256, 5), 48);
  EXPECT_EQ(h100_registers_for(32, 1), 255);  // a thread may use at most 255
}

TEST(checker, student_links_catch_what_a_student_cannot_open) {
  EXPECT_TRUE(student_link_problems("the reference kernels, `starter_code/01/a.cu`, \\ref lab02").empty());
  EXPECT_EQ(student_link_problems("see `shared/perf-anchors.md`\nrun .ci/gpu-check\nin reference/06/x.cu\n").size(), 4u);
  EXPECT_EQ(student_link_problems("(seed article 003, §7.4)").size(), 1u);
  EXPECT_EQ(student_link_problems("as Seed\narticle 000 says; seed 004's layer").size(), 2u);
  EXPECT_EQ(student_link_problems("In an Earlier run of the same day it chose X;\nwhy is not known.").size(), 3u);
}

TEST(checker, split_ref_texts_are_found) {
  EXPECT_TRUE(split_ref_texts("see \\ref lab01 \"Lab 1\" and \\ref lab02.\n").empty());
  EXPECT_EQ(split_ref_texts("ok\nsee \\ref lab01_check \"Check your\nunderstanding\"\n").size(), 1u);
}

TEST(checker, sections_and_formatting) {
  const std::string t = "# A {#a}\nx\n```\n# not a heading\n```\n## sub\ny\n# B {#b}\nz\n";
  EXPECT_NE(section(t, "a").find("# not a heading"), std::string::npos);
  EXPECT_EQ(section(t, "a").find("# B"), std::string::npos);
  EXPECT_EQ(section(t, "nope"), "");
  EXPECT_EQ(fixed(3.125, 2), "3.13");
  EXPECT_EQ(fixed(8.6805, 2), "8.68");
  EXPECT_EQ(grouped(1806336), "1,806,336");
  EXPECT_EQ(grouped(4096), "4096");
  EXPECT_EQ(grouped(-25088), "-25,088");
  const auto rows = table_rows("| a | b |\n|---|---|\n| **Points** | 100: x |\n| Files | `f` |\n");
  EXPECT_EQ(rows.at("Points"), "100: x");
  EXPECT_EQ(rows.at("Files"), "`f`");
}

}  // namespace
