/// @file compare.hpp
/// @brief The comparator: per-element tolerance from the float32 rounding-error
/// bound of a dot product, and failure reports that locate the wrong outputs.
///
/// An output that is a sum of m products computed in float32, in any order,
/// with or without FMA, satisfies
/// \f[ |\hat y - y| \le \gamma_m \sum |x f|, \qquad \gamma_m = \frac{m u}{1 - m u},\; u = 2^{-24} \f]
/// (Higham, *Accuracy and Stability of Numerical Algorithms*, eq. 3.5). The
/// comparator allows \f$\gamma_{m+1}\f$ (one more rounding for a final store) plus
/// \f$m\f$ times the smallest normal float (flush-to-zero of tiny products). It
/// scales with m and with the data, so neither honest rounding nor a zero
/// output that should not be zero is misjudged.
#pragma once

#include "convlab/golden.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace convlab {

/// The NaN the CPU backend leaves in shared memory until a thread writes it
/// (convlab_cpu::kUnwrittenSharedBits). An output holding it was computed from shared
/// memory read before any thread wrote it: on a GPU the same code reads stale data.
inline constexpr std::uint32_t kUnwrittenSharedBits = 0x7FC0BAD5u;

/// Unit roundoff of float32.
inline constexpr double kFloatUnitRoundoff = 1.0 / (1 << 24);

/// \f$\gamma_m = m u / (1 - m u)\f$ for float32.
double gamma_m(int m);

/// The allowed |error| of one output of `terms` taps whose sum |x f| is `magnitude`.
double tolerance_for(double magnitude, int terms);

/// The shape of an output, for naming where a wrong element lies. A 1D output
/// has height 1. Tile sizes are optional (0 = unknown); labs whose contract fixes
/// a tile pass them, so that tile edges and halo corners can be named.
struct Grid {
  int width = 0;   ///< elements along x (n for 1D)
  int height = 1;  ///< rows (1 for 1D)
  int radius = 0;  ///< filter radius: outputs within r of an edge read ghost cells
  int tile_x = 0;  ///< output tile width, if the lab fixes one
  int tile_y = 0;  ///< output tile height, if the lab fixes one
  /// A 2D image, even of one row: its outputs have a top and a bottom border. Without it,
  /// a height of 1 means a 1D array.
  bool two_d = false;
  /// True for a 2D image: `two_d`, or more than one row.
  bool is_2d() const { return two_d || height > 1; }
};

/// Where (x, y) lies: "interior", "left border", "top-right corner", "top+bottom border"
/// (a one-row image), and with a tile: "right tile edge", "top-left tile corner (halo corner)"
/// (the side of its tile the output lies on), ...
std::string region_of(int x, int y, const Grid& grid);

/// One wrong output.
struct Mismatch {
  std::size_t index = 0;  ///< linear index
  int x = 0;              ///< column (i for 1D)
  int y = 0;              ///< row (0 for 1D)
  float got = 0;          ///< what the kernel wrote
  double expected = 0;    ///< the golden value
  double tolerance = 0;   ///< the allowed |error|
  std::string region;     ///< region_of(x, y)
  bool unwritten = false; ///< still the NaN poison: the kernel never wrote it
  bool from_unwritten_shared = false;  ///< kUnwrittenSharedBits: computed from unwritten shared memory
};

/// The outcome of a comparison.
struct Comparison {
  std::size_t checked = 0;     ///< outputs compared
  std::size_t wrong = 0;       ///< outputs outside their tolerance (NaN included)
  std::size_t unwritten = 0;   ///< outputs still holding the poison
  std::size_t from_unwritten_shared = 0;  ///< outputs holding kUnwrittenSharedBits (CPU backend)
  double max_error = 0;        ///< largest |error| among finite outputs
  double max_error_ratio = 0;  ///< largest |error| / tolerance (infinite for a NaN)
  std::vector<Mismatch> first; ///< the first few wrong outputs, in index order
  std::map<std::string, std::size_t> wrong_by_region;  ///< counts per region
  Grid grid;                   ///< the shape compared
  std::vector<unsigned char> wrong_mask;  ///< per output: 0 right, 1 wrong value, 2 never written (error maps)

  /// True when every output is within its tolerance.
  bool ok() const { return wrong == 0; }
  /// A multi-line report: counts, regions, the first mismatches with
  /// coordinates, and for 2D a map of where the wrong outputs are.
  std::string report() const;
};

/// Compares a kernel's output with the golden model.
Comparison compare(const std::vector<float>& got, const Golden& golden, const Grid& grid,
                   std::size_t max_listed = 8);

/// A text map of the wrong outputs, at most `cols` x `rows` characters:
/// '#' where any output in the cell is wrong, '.' elsewhere.
std::string error_map(const std::vector<unsigned char>& wrong_mask, const Grid& grid, int cols = 64,
                      int rows = 24);

}  // namespace convlab
