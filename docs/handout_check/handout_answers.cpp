// Prints what the handouts' numbers and pasted tables must be, for the author
// of a handout:   ./build/<preset>/docs/handout_check/handout_answers [labNN]
// Each line is `key = value`, to write as <span data-answer="key">value</span>;
// the tables go between their markers (<!-- name:begin --> ... <!-- name:end -->).
#include "answers.hpp"
#include "stencil_op_ratio.hpp"

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  using namespace convlab::handout;
  const std::string only = argc > 1 ? argv[1] : "";
  const struct {
    const char* lab;
    std::vector<Answer> (*answers)();
  } labs[] = {{"lab01", lab01_answers}, {"lab02", lab02_answers}, {"lab03", lab03_answers},
              {"lab04", lab04_answers}, {"lab05", lab05_answers}, {"lab06", lab06_answers}};
  for (const auto& l : labs) {
    if (!only.empty() && only != l.lab) continue;
    for (const auto& a : l.answers()) std::printf("%s = %s\n", a.key.c_str(), a.value.c_str());
  }
  if (only.empty() || only == "lab04") std::printf("\ncached_taps (lab04):\n%s", lab04_cached_taps_table().c_str());
  if (only.empty() || only == "lab05")
    std::printf("\nstencil_op_ratio (lab05):\n%s", convlab::lab05::stencil_op_ratio_table_markdown().c_str());
  return 0;
}
