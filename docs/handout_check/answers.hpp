/// @file answers.hpp
/// @brief The numeric answers of each handout's worked examples and "Check
/// your understanding" questions, recomputed with the project's own code (the
/// golden models, the labs' contracts and OP/B models). Each function lists
/// the keys of one lab, in the order the handout uses them; the docs test
/// compares them with the <span data-answer="key"> numbers of the handout.
#pragma once

#include "handout.hpp"

#include <vector>

namespace convlab::handout {

std::vector<Answer> lab01_answers();  ///< labs/01-conv-basic/README.md
std::vector<Answer> lab02_answers();  ///< labs/02-conv-constant/README.md
std::vector<Answer> lab03_answers();  ///< labs/03-conv-tiled-halo/README.md
std::vector<Answer> lab04_answers();  ///< labs/04-conv-cached-halo/README.md
std::vector<Answer> lab05_answers();  ///< labs/05-stencil/README.md
std::vector<Answer> lab06_answers();  ///< labs/06-conv-im2col-cudnn/README.md

/// The cached-tap table of lab 04's handout (the share of a tile's taps that
/// fall outside the tile, 1 - a^2), counted tap by tap.
std::string lab04_cached_taps_table();

}  // namespace convlab::handout
