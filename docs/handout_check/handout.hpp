/// @file handout.hpp
/// @brief Reads a lab's handout (labs/NN-slug/README.md) the way the docs tests
/// check it: the numbers of its worked answers, its "at a glance" box, its
/// questions, and the links a student could not follow.
///
/// A numeric answer in a handout is written
///
///     <span data-answer="lab03.op_ratio_24_r2">8.68</span>
///
/// (Doxygen keeps the span; the browser shows just the number). The docs test
/// recomputes every such key with the project's own code (answers_labNN.cpp)
/// and compares the text, so a number changed in either place fails it.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace convlab::handout {

/// The text of `labs/<slug>/README.md` (or any file under the source tree).
/// Throws std::runtime_error, with the path, if it cannot be read.
std::string read_source_file(const std::string& relative_path);

/// One `<span data-answer="key">value</span>` of a handout.
struct AnswerSpan {
  std::string key;    ///< "lab03.op_ratio_24_r2"
  std::string value;  ///< the text between the tags, trimmed
  int line = 0;       ///< 1-based line of the opening tag
};

/// Every answer span of `text`, in order. A malformed span (no closing quote,
/// no </span>) is reported as a span whose key starts with "!" and whose value
/// says what is wrong, so the check fails on it instead of skipping it.
std::vector<AnswerSpan> answer_spans(const std::string& text);

/// One numeric answer the code computes: the key and the exact text expected.
struct Answer {
  std::string key;    ///< as in the span
  std::string value;  ///< as the handout must print it
};

/// The problems of a handout's answers against the computed ones, one line
/// each: a value that differs ("README.md:412: lab03.x is 8.67, the code
/// computes 8.68"), a key the code does not know, a key the handout lacks.
/// A key may appear several times; every occurrence must agree. Empty when
/// everything agrees.
std::vector<std::string> check_answers(const std::vector<AnswerSpan>& spans, const std::vector<Answer>& computed);

/// The text between `<!-- name:begin -->` and `<!-- name:end -->` (exclusive),
/// or throws std::runtime_error naming the missing marker.
std::string between_markers(const std::string& text, const std::string& name);

/// The rows of a two-column Markdown table: first cell (trimmed, without **)
/// to second cell (trimmed). The header and separator rows are skipped.
std::map<std::string, std::string> table_rows(const std::string& table);

/// The text of the level-1 section whose heading carries `{#anchor}`, up to
/// the next level-1 heading; empty if there is no such section.
std::string section(const std::string& text, const std::string& anchor);

/// A question of a "Check your understanding" section: a numbered item that
/// starts with a bold title, and its folded answer.
struct Question {
  std::string title;   ///< the bold text after the number
  std::string body;    ///< the item's text, answer included
  bool has_answer = false;  ///< a <details><summary>…</summary> … </details> inside
};

/// The numbered questions of a section ("1. **Title.** ...").
std::vector<Question> questions(const std::string& section_text);

/// Lines of `text` containing `needle`, as "line N: <line>".
std::vector<std::string> lines_with(const std::string& text, const std::string& needle);

/// `x` with `decimals` decimals, halves rounded away from zero (as the
/// handouts and PMPP print ratios: 3.125 -> "3.13").
std::string fixed(double x, int decimals);

/// An integer with commas between groups of three digits ("1,806,336"); plain
/// below 10,000 ("4096").
std::string grouped(long long x);

}  // namespace convlab::handout
