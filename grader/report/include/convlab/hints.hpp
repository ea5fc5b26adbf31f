/// @file hints.hpp
/// @brief What a failed convolution check suggests, in words a student can act on: one hint,
/// the most specific that fits the evidence.
///
/// The hints are pure functions of the comparison (convlab/compare.hpp) and of the problem
/// (its input, filter and sizes), so they are tested on the CPU with hand-made mistakes.
/// In order of specificity, the first that fits is given:
/// 1. no output written at all;
/// 2. outputs computed from shared memory no thread had written (the CPU backend's NaN);
/// 3. the result of a recognisable wrong computation: the filter reversed (true convolution),
///    width and height swapped (the image read as height x width, or rows tested against the
///    width, or columns against the height);
/// 4. outputs never written, with the rows or columns they lie in (the grid's coverage);
/// 5. wrong outputs only next to tile edges, naming the tile edges (left, right, top, bottom);
/// 6. wrong outputs only within r of the image's edges, naming the sides.
#pragma once

#include "convlab/compare.hpp"

#include <string>
#include <vector>

namespace convlab {

/// The problem a convolution check ran: sizes, and the host data the hints may recompute
/// alternative results from (null pointers turn those hints off).
struct HintProblem {
  int width = 0;   ///< elements (1D) or columns (2D)
  int height = 1;  ///< rows (1 for 1D)
  int radius = 0;  ///< filter radius
  bool two_d = false;                          ///< a 2D convolution (even of one row)
  const std::vector<float>* input = nullptr;   ///< the input, row-major
  const std::vector<float>* filter = nullptr;  ///< 2r+1 taps (1D) or (2r+1)^2 row-major (2D)
  const std::vector<float>* got = nullptr;     ///< what the kernel wrote
};

/// The one most specific hint for a failed comparison (a line starting with "hint: " and
/// ending in a newline), or "" when nothing recognisable stands out. `c` must come from
/// compare() on the same problem.
std::string conv_hints(const Comparison& c, const HintProblem& p);

/// The sides of the image (or the array) that the wrong outputs of `c` lie next to, in the
/// order left, right, top, bottom, read from its regions: "left and top". Empty when none.
std::string wrong_sides(const Comparison& c);

/// The tile edges the wrong outputs lie next to, read from its regions ("right and bottom").
/// Empty when none, or when the regions do not say which side of the tile.
std::string wrong_tile_edges(const Comparison& c);

}  // namespace convlab
