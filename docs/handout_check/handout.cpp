#include "handout.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace convlab::handout {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

int line_of(const std::string& text, std::size_t pos) {
  int line = 1;
  for (std::size_t i = 0; i < pos && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

}  // namespace

std::string read_source_file(const std::string& relative_path) {
  const std::string path = std::string(CONVLAB_SOURCE_DIR) + "/" + relative_path;
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<AnswerSpan> answer_spans(const std::string& text) {
  static const std::string open = "<span data-answer=\"";
  std::vector<AnswerSpan> out;
  for (std::size_t pos = text.find(open); pos != std::string::npos; pos = text.find(open, pos + 1)) {
    AnswerSpan a;
    a.line = line_of(text, pos);
    const std::size_t key_begin = pos + open.size();
    const std::size_t key_end = text.find('"', key_begin);
    const std::size_t tag_end = key_end == std::string::npos ? key_end : text.find('>', key_end);
    const std::size_t close = tag_end == std::string::npos ? tag_end : text.find("</span>", tag_end);
    const std::size_t next_open = text.find(open, key_begin);
    if (key_end == std::string::npos || tag_end == std::string::npos || close == std::string::npos ||
        (next_open != std::string::npos && close > next_open) || text.find('\n', key_begin) < key_end) {
      a.key = "!malformed";
      a.value = "an answer span without its closing quote, '>' or </span>";
    } else {
      a.key = text.substr(key_begin, key_end - key_begin);
      a.value = trim(text.substr(tag_end + 1, close - tag_end - 1));
    }
    out.push_back(a);
  }
  return out;
}

std::vector<std::string> check_answers(const std::vector<AnswerSpan>& spans, const std::vector<Answer>& computed) {
  std::vector<std::string> problems;
  std::map<std::string, std::string> want;
  for (const auto& a : computed) want[a.key] = a.value;
  std::map<std::string, int> seen;
  for (const auto& s : spans) {
    const std::string where = "README.md:" + std::to_string(s.line) + ": ";
    if (s.key.rfind('!', 0) == 0) {
      problems.push_back(where + s.value);
      continue;
    }
    ++seen[s.key];  // a key may stand in several places (a figure quoted again); each is checked
    const auto it = want.find(s.key);
    if (it == want.end())
      problems.push_back(where + s.key + " is not an answer the code computes (a typo, or add it to answers_" +
                         s.key.substr(0, s.key.find('.')) + ".cpp)");
    else if (it->second != s.value)
      problems.push_back(where + s.key + " is " + s.value + ", the code computes " + it->second);
  }
  for (const auto& a : computed)
    if (!seen.count(a.key))
      problems.push_back(a.key + " (" + a.value + ") is computed but not in README.md: "
                         "write <span data-answer=\"" + a.key + "\">" + a.value + "</span> where the answer is");
  return problems;
}

std::string between_markers(const std::string& text, const std::string& name) {
  const std::string begin = "<!-- " + name + ":begin -->\n", end = "<!-- " + name + ":end -->";
  const auto b = text.find(begin);
  if (b == std::string::npos) throw std::runtime_error("README.md has no '" + trim(begin) + "' marker");
  const auto e = text.find(end, b);
  if (e == std::string::npos) throw std::runtime_error("README.md has no '" + end + "' marker after the begin one");
  return text.substr(b + begin.size(), e - b - begin.size());
}

std::map<std::string, std::string> table_rows(const std::string& table) {
  std::map<std::string, std::string> rows;
  std::istringstream in(table);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.size() < 2 || line.front() != '|') continue;
    if (n++ < 2) continue;  // header and |---|---|
    const auto mid = line.find('|', 1);
    if (mid == std::string::npos) continue;
    std::string label = trim(line.substr(1, mid - 1)), value = line.substr(mid + 1);
    if (!value.empty() && value.back() == '|') value.pop_back();
    if (label.size() > 4 && label.rfind("**", 0) == 0 && label.substr(label.size() - 2) == "**")
      label = label.substr(2, label.size() - 4);
    rows[label] = trim(value);
  }
  return rows;
}

std::string section(const std::string& text, const std::string& anchor) {
  const auto at = text.find("{#" + anchor + "}");
  if (at == std::string::npos) return "";
  const auto start = text.rfind('\n', at);
  const std::size_t body = text.find('\n', at);
  if (body == std::string::npos) return "";
  // The next level-1 heading ("# " at the start of a line, outside code blocks).
  std::size_t pos = body;
  bool in_code = false;
  while (pos != std::string::npos && pos + 1 < text.size()) {
    const std::size_t next = text.find('\n', pos + 1);
    const std::string line = text.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    if (line.rfind("```", 0) == 0) in_code = !in_code;
    if (!in_code && line.rfind("# ", 0) == 0) return text.substr(start == std::string::npos ? 0 : start, pos - start);
    pos = next;
  }
  return text.substr(start == std::string::npos ? 0 : start);
}

std::vector<Question> questions(const std::string& section_text) {
  std::vector<Question> out;
  std::istringstream in(section_text);
  std::string line;
  while (std::getline(in, line)) {
    // "12. **Title.** text": a number at the start of the line, a dot, a space, bold.
    std::size_t i = 0;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
    if (i > 0 && line.compare(i, 4, ". **") == 0) {
      Question q;
      const auto end = line.find("**", i + 4);
      q.title = line.substr(i + 4, end == std::string::npos ? std::string::npos : end - i - 4);
      out.push_back(q);
    } else if (!out.empty() && !line.empty() && line[0] != ' ' && line[0] != '\t') {
      continue;  // text between the items, not part of one
    }
    if (!out.empty()) out.back().body += line + "\n";
  }
  for (auto& q : out) {
    const auto d = q.body.find("<details><summary>");
    q.has_answer = d != std::string::npos && q.body.find("</summary>", d) != std::string::npos &&
                   q.body.find("</details>", d) != std::string::npos;
  }
  return out;
}

std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(needle) != std::string::npos) out.push_back("line " + std::to_string(n) + ": " + trim(line));
  return out;
}

std::string fixed(double x, int decimals) {
  const double scale = std::pow(10.0, decimals);
  const double r = std::round(x * scale) / scale;  // as lab 03's two_decimals()
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, r);
  return buf;
}

std::string grouped(long long x) {
  std::string digits = std::to_string(x < 0 ? -x : x);
  if (digits.size() > 4)
    for (int i = int(digits.size()) - 3; i > 0; i -= 3) digits.insert(std::size_t(i), ",");
  return (x < 0 ? "-" : "") + digits;
}

}  // namespace convlab::handout
