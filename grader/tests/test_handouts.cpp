// The handouts quote the graders' real messages. Every quote of a message in the handouts
// (labs/*/README.md), the README and the docs' pages — a code line that starts like a report
// line, or a quoted phrase that names a report's words — must match what the graders print:
// the reports and hints made here for each kind of mistake, or a string in the graders' sources
// (a message built from pieces is matched piece by piece). Numbers stand for any number, and an
// ellipsis ("…" or "...") in a quote for any text.
#include "convlab/compare.hpp"
#include "convlab/golden.hpp"
#include "convlab/hints.hpp"
#include "convlab/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

#ifndef CONVLAB_SOURCE_DIR
#error "CONVLAB_SOURCE_DIR must name the source tree"
#endif

namespace convlab {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Numbers become '#', runs of white space one space, ellipses a wildcard (U+001F).
std::string normalize(const std::string& text) {
  std::string s = std::regex_replace(text, std::regex("\xE2\x80\xA6|\\.\\.\\."), "\x1F");
  // "…/lab04.correctness.cached2d.w100_h75_r3.png": a path the graders make at run time.
  s = std::regex_replace(s, std::regex("\x1F/[^ ]+"), "\x1F");
  s = std::regex_replace(s, std::regex("-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?"), "#");
  s = std::regex_replace(s, std::regex("\\s+"), " ");
  const auto b = s.find_first_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// --- what the graders print -------------------------------------------------------------

float poison() {
  const std::uint32_t b = 0xFFFFFFFFu;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// A 2D case whose output is right, to be spoiled by a scenario; report() and the hint of the result.
struct Scenario {
  int w, h, r;
  std::vector<float> in, f, out;
  Golden g;
  Grid grid;
  Scenario(int width, int height, int radius, int tile = 0, bool two_d = true)
      : w(width), h(height), r(radius), in(random_floats(std::size_t(w) * h, 5)),
        f(random_floats(two_d ? std::size_t(2 * r + 1) * (2 * r + 1) : std::size_t(2 * r + 1), 6)),
        g(two_d ? conv2d_golden(in, w, h, f, r) : conv1d_golden(in, f, r)), grid{w, h, r, tile, tile, two_d} {
    for (double v : g.value) out.push_back(static_cast<float>(v));
  }
  float& at(int x, int y) { return out[std::size_t(y) * w + x]; }
  std::string text() const {
    const Comparison c = compare(out, g, grid);
    return c.report() + conv_hints(c, HintProblem{w, h, r, grid.two_d, &in, &f, &out});
  }
};

std::vector<std::string> generated_messages() {
  std::vector<std::string> out;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  {  // nothing written, 1D and 2D
    Scenario a(50, 1, 2, 0, false), b(20, 10, 1);
    std::fill(a.out.begin(), a.out.end(), poison());
    std::fill(b.out.begin(), b.out.end(), poison());
    out.push_back(a.text());
    out.push_back(b.text());
  }
  {  // shared memory never written (CPU backend), at halo corners of 16 x 16 tiles
    Scenario s(64, 64, 2, 16);
    for (int y = 14; y < 62; y += 16)
      for (int x = 14; x < 62; x += 16) std::memcpy(&s.at(x, y), &kUnwrittenSharedBits, 4);
    out.push_back(s.text());
  }
  {  // the left and right borders wrong; reads outside at the right
    Scenario s(100, 40, 2);
    for (int y = 0; y < 40; ++y) s.at(0, y) += 1, s.at(99, y) += 1;
    out.push_back(s.text());
    Scenario t(100, 40, 2);
    for (int y = 0; y < 40; ++y) t.at(99, y) = nan;
    out.push_back(t.text());
  }
  {  // both ends of a 1D array wrong
    Scenario s(300, 1, 3, 0, false);
    for (int x : {0, 1, 2, 297, 298, 299}) s.at(x, 0) += 1;
    out.push_back(s.text());
  }
  {  // tile edges and halo corners, and a wrong interior output
    Scenario s(64, 64, 2, 16);
    for (int y = 2; y < 62; ++y) s.at(30, y) += 1;
    out.push_back(s.text());
    Scenario i(40, 30, 1);
    i.at(20, 15) += 1;
    out.push_back(i.text());
  }
  {  // outputs never written: columns, rows, scattered
    Scenario s(100, 40, 1), t(30, 40, 1), u(30, 40, 1);
    for (int y = 0; y < 40; ++y)
      for (int x = 96; x < 100; ++x) s.at(x, y) = poison();
    for (int y = 32; y < 40; ++y)
      for (int x = 0; x < 30; ++x) t.at(x, y) = poison();
    u.at(3, 3) = poison();
    out.push_back(s.text());
    out.push_back(t.text());
    out.push_back(u.text());
  }
  {  // the filter reversed, 1D and 2D
    Scenario s(30, 20, 2), t(60, 1, 3, 0, false);
    const Golden a = conv2d_golden(s.in, 30, 20, flip_filter(s.f), 2), b = conv1d_golden(t.in, flip_filter(t.f), 3);
    s.out.assign(a.value.begin(), a.value.end());
    t.out.assign(b.value.begin(), b.value.end());
    out.push_back(s.text());
    out.push_back(t.text());
  }
  {  // width and height swapped: read as h x w; rows past the bottom of a wide image read
    Scenario s(40, 25, 1);
    const Golden a = conv2d_golden(s.in, 25, 40, s.f, 1);
    s.out.assign(a.value.begin(), a.value.end());
    out.push_back(s.text());
    Scenario t(100, 75, 3);
    for (int y = 72; y < 75; ++y)
      for (int x = 0; x < 100; ++x) t.at(x, y) = nan;
    out.push_back(t.text());
  }
  return out;
}

// The messages of one statement of the graders' sources made of literals and values
// ("replay this exact test (seed " + seed + "): CONVLAB_SEED=" + ...): its literals, in order,
// as a regular expression in which any text stands for each value (see quoted_from()).
std::vector<std::regex>& statement_patterns() {
  static std::vector<std::regex> patterns;
  return patterns;
}

// The string literals of the graders' sources, adjacent literals joined: the messages that are
// not made here (lab 06's, the error map line, the replay line).
std::vector<std::string> source_literals() {
  std::vector<std::string> out;
  statement_patterns().clear();
  const fs::path root = CONVLAB_SOURCE_DIR;
  std::vector<fs::path> files;
  for (const auto& dir : {root / "grader" / "protocol" / "src", root / "grader" / "harness" / "src",
                          root / "grader" / "report" / "src", root / "grader" / "bench" / "src",
                          root / "grader" / "device" / "src", root / "labs"})
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.path().extension() == ".cpp" || e.path().extension() == ".cu") files.push_back(e.path());
  for (const char* testbed : {"testbed.cpp", "conv_testbed.cpp"}) files.push_back(root / "grader" / "judge" / "src" / testbed);
  const std::regex literal("\"((?:[^\"\\\\]|\\\\.)*)\"");
  for (const auto& f : files) {
    std::istringstream in(read(f));
    std::string joined;
    std::vector<std::string> statement;  // the literals of the statement being read
    const auto end_statement = [&] {
      std::size_t letters = 0;
      for (const auto& piece : statement) letters += piece.size();
      if (statement.size() >= 2 && letters >= 30) {
        std::string pattern;
        for (const auto& piece : statement) {
          const std::string n = normalize(std::regex_replace(piece, std::regex("\\\\n"), " "));
          if (n.empty()) continue;
          if (!pattern.empty()) pattern += ".*";
          for (char c : n) pattern += std::strchr("\\^$.|?*+()[]{}", c) ? std::string("\\") + c : std::string(1, c);
        }
        if (!pattern.empty()) statement_patterns().emplace_back(pattern);
      }
      statement.clear();
    };
    for (std::string line; std::getline(in, line);) {
      for (std::sregex_iterator it(line.begin(), line.end(), literal), end; it != end; ++it)
        statement.push_back((*it)[1].str());
      const std::string code = std::regex_replace(line, literal, "\"\"");
      if (code.find(';') != std::string::npos || code.find('{') != std::string::npos) end_statement();
      std::string pieces;
      bool only_literals = true;
      std::string rest = line;
      for (std::sregex_iterator it(line.begin(), line.end(), literal), end; it != end; ++it) pieces += (*it)[1].str();
      only_literals = std::regex_replace(line, literal, "").find_first_not_of(" \t;<>+,()") == std::string::npos;
      if (!pieces.empty()) joined += pieces;
      if (pieces.empty() || !only_literals) {
        if (!joined.empty()) out.push_back(std::regex_replace(joined, std::regex("\\\\n"), "\n"));
        joined.clear();
      }
    }
    if (!joined.empty()) out.push_back(joined);
    // A message made of pieces and values ("... a window whose top-left corner is " + ... +
    // " — check the padding offset"): a quote with an ellipsis may match its pieces in order.
    // The separator keeps a quote without one from running across two literals.
    std::string all;
    const std::string text = read(f);
    for (std::sregex_iterator it(text.begin(), text.end(), literal), end; it != end; ++it)
      all += (*it)[1].str() + " \x1E ";
    out.push_back(all);
  }
  return out;
}

// --- what the handouts quote --------------------------------------------------------------

struct Quote {
  std::string file;
  int line;
  std::string text;
};

bool names_a_message(const std::string& q) {
  static const char* kWords[] = {"hint:", "never written", "shared memory that no thread", "outputs are wrong",
                                 "next to tile edges", "filter reversed", "wrong outputs by region",
                                 "first mismatches", "error map image", "stored transposed", "taps spaced",
                                 "padding offset", "not accumulated", "replay this exact test"};
  for (const char* w : kWords)
    if (q.find(w) != std::string::npos) return true;
  return false;
}

bool starts_like_a_report_line(const std::string& t) {
  static const std::regex kStart(
      "^(hint: |wrong outputs by region:|first mismatches:|out\\(x=[0-9]+, y=[0-9]+\\) \\(|out\\[[0-9]+\\] \\(|[0-9]+ of "
      "[0-9]+ outputs are wrong|error map image|replay this exact test)");
  return std::regex_search(t, kStart);
}

std::vector<Quote> quotes_in(const fs::path& file) {
  std::vector<Quote> out;
  std::istringstream in(read(file));
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  bool fenced = false;
  std::string paragraph;
  int paragraph_line = 0;
  const auto flush = [&] {
    // Quoted phrases in the prose of one paragraph: `...` spans first (paired in order), then
    // "..." in the text outside them.
    std::string outside;
    const std::vector<std::string> ticks = [&] {
      std::vector<std::string> parts;
      std::string cur;
      for (char c : paragraph) {
        if (c == '`') {
          parts.push_back(cur);
          cur.clear();
        } else {
          cur += c;
        }
      }
      parts.push_back(cur);
      return parts;
    }();
    for (std::size_t k = 0; k < ticks.size(); ++k) {
      if (k % 2 == 1 && k + 1 < ticks.size()) {  // inside a code span
        if (names_a_message(ticks[k])) out.push_back({file.filename().string(), paragraph_line, ticks[k]});
      } else {
        outside += ticks[k] + " ";
      }
    }
    const std::vector<std::string> quoted = [&] {
      std::vector<std::string> parts;
      std::string cur;
      for (char c : outside) {
        if (c == '"') {
          parts.push_back(cur);
          cur.clear();
        } else {
          cur += c;
        }
      }
      parts.push_back(cur);
      return parts;
    }();
    for (std::size_t k = 1; k + 1 < quoted.size(); k += 2)
      if (names_a_message(quoted[k])) out.push_back({file.filename().string(), paragraph_line, quoted[k]});
    paragraph.clear();
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    const std::string t = l.substr(std::min(l.size(), l.find_first_not_of(' ')));
    if (t.rfind("```", 0) == 0) {
      flush();
      fenced = !fenced;
      continue;
    }
    const bool code = fenced || (l.size() - t.size() >= 4 && paragraph.empty() && !t.empty() &&
                                 t[0] != '-' && t[0] != '*' && !std::isdigit(static_cast<unsigned char>(t[0])));
    if (code) {
      if (starts_like_a_report_line(t)) out.push_back({file.filename().string(), int(i + 1), t});
      continue;
    }
    if (t.empty()) {
      flush();
      continue;
    }
    if (paragraph.empty()) paragraph_line = int(i + 1);
    paragraph += " " + t;
  }
  flush();
  return out;
}

std::vector<fs::path> documents() {
  const fs::path root = CONVLAB_SOURCE_DIR;
  std::vector<fs::path> docs = {root / "README.md", root / "docs" / "mainpage.md", root / "docs" / "grading.md"};
  for (const auto& e : fs::directory_iterator(root / "labs"))
    if (fs::exists(e.path() / "README.md")) docs.push_back(e.path() / "README.md");
  return docs;
}

// Whether `quote` matches some text of `corpus` (normalized with normalize()): its plain pieces
// (between the "..." it leaves out) appear in that order in one text. Searched piece by piece with
// std::string::find, the earliest place of each piece first (which finds a match whenever one
// exists); not with std::regex, whose recursive matcher overflows the stack on a long text with ".*"
// (AddressSanitizer's smaller stack did, on lab 06's handout, CI of 334f87b).
bool pieces_in_order(const std::string& text, const std::vector<std::string>& pieces) {
  std::size_t at = 0;
  for (const auto& p : pieces) {
    const auto found = text.find(p, at);
    if (found == std::string::npos) return false;
    at = found + p.size();
  }
  return true;
}

bool quoted_from(const std::string& quote, const std::vector<std::string>& corpus) {
  std::vector<std::string> pieces(1);
  for (char c : normalize(quote)) {
    if (c == '\x1F') pieces.emplace_back();
    else pieces.back() += c;
  }
  pieces.erase(std::remove(pieces.begin(), pieces.end(), std::string()), pieces.end());
  if (pieces.empty()) return false;
  for (const auto& text : corpus)
    if (pieces_in_order(text, pieces)) return true;
  // A whole message made of literals and values: the quote holds its literals in order.
  const std::string q = normalize(quote);
  for (const auto& statement : statement_patterns())
    if (std::regex_search(q, statement)) return true;
  return false;
}

std::vector<std::string> normalized(std::vector<std::string> texts) {
  for (auto& t : texts) t = normalize(t);
  return texts;
}

TEST(Handouts, FindTheQuotesOfMessages) {
  // The checker finds what it must: a report line in a code block, a quoted hint in prose.
  const fs::path tmp = fs::temp_directory_path() / "convlab-handout-quotes.md";
  std::ofstream(tmp) << "Some prose, and the grader says \"computed from shared memory that no\n"
                        "thread had written yet\" here.\n\n    wrong outputs by region:  left border: 3;\n\n"
                        "Plain prose about the filter reversed is no quote.\n";
  const auto q = quotes_in(tmp);
  fs::remove(tmp);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].text, "computed from shared memory that no thread had written yet");
  EXPECT_EQ(q[1].text, "wrong outputs by region:  left border: 3;");
}

TEST(Handouts, TheMatcherTellsRealFromStale) {
  const std::vector<std::string> corpus = normalized(generated_messages());
  EXPECT_TRUE(quoted_from("computed from shared memory that no thread had written yet", corpus));
  EXPECT_TRUE(quoted_from("wrong outputs by region: left border: 207; right border: 207", corpus));
  EXPECT_TRUE(quoted_from("out(x=97, y=0) (top-right corner): got 1.93, expected 2.29", corpus));
  EXPECT_TRUE(quoted_from("the wrong outputs lie next to tile edges …", corpus));
  EXPECT_FALSE(quoted_from("summed shared memory that no thread had written", corpus));  // the old words
  EXPECT_FALSE(quoted_from("out(x=29, y=29) (tile corner (halo corner)): got NaN", corpus));  // the side is named now
  // Pieces in order, over a text far longer than any message (a recursive regex overflowed the stack here).
  const std::string filler(200000, 'x');
  const std::vector<std::string> long_text = {"the first piece " + filler + " and the second piece"};
  EXPECT_TRUE(quoted_from("the first piece ... the second piece", long_text));
  EXPECT_FALSE(quoted_from("the second piece ... the first piece", long_text));
  EXPECT_FALSE(quoted_from("the first piece ... a third piece", long_text));
}

TEST(Handouts, QuoteTheGradersRealMessages) {
  std::vector<std::string> corpus = generated_messages();
  for (auto& s : source_literals()) corpus.push_back(std::move(s));
  corpus = normalized(std::move(corpus));
  int quotes = 0;
  for (const auto& doc : documents())
    for (const auto& q : quotes_in(doc)) {
      ++quotes;
      EXPECT_TRUE(quoted_from(q.text, corpus))
          << doc.parent_path().filename().string() << "/" << q.file << ":" << q.line
          << " quotes a message the graders do not print:\n  " << q.text;
    }
  EXPECT_GT(quotes, 10);  // the handouts do quote the graders; a checker that finds none checks nothing
}

}  // namespace
}  // namespace convlab
