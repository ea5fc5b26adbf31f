/// @file random.hpp
/// @brief Seeded, replayable test data.
///
/// Every process draws one base seed (or takes CONVLAB_SEED from the
/// environment); each test derives its own seed from the base seed and its
/// name, so `CONVLAB_SEED=<base> ctest -R <test>` replays exactly that test.
/// The generator is specified here (SplitMix64), not taken from the standard
/// library, so every platform and backend draws the same numbers.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace convlab {

/// The process's base seed: CONVLAB_SEED if set (decimal or 0x-hex), else fresh entropy.
/// Throws std::invalid_argument if CONVLAB_SEED is set but not a number.
std::uint64_t base_seed();

/// True when the base seed came from CONVLAB_SEED.
bool seed_from_environment();

/// The seed of one test: a mix of base_seed() and the test's full name.
std::uint64_t test_seed(std::string_view test_name);

/// SplitMix64: small, fast, and identical everywhere.
class Rng {
public:
  /// Starts the sequence at `seed`.
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  /// Next 64 random bits.
  std::uint64_t next_u64();
  /// Uniform in [0, 1) with 24 random bits, exactly representable as a float.
  double next_unit();
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * next_unit(); }

private:
  std::uint64_t state_;
};

/// `count` floats uniform in [-1, 1] with no exact zeros (a zero would hide
/// a tap that is skipped); the magnitudes vary over the whole range so that
/// a wrong weight or a wrong neighbour changes the result.
std::vector<float> random_floats(std::size_t count, std::uint64_t seed);

/// `count` random filter taps with 12 significant bits each (none zero), so that the product
/// of two of them is exact in float: the factors of a FilterKind::separable filter.
std::vector<float> separable_factor(std::size_t count, std::uint64_t seed);

/// The outer product \f$ f_{i,j} = c_i\, w_j \f$ of a column filter c and a row filter w, row-major.
std::vector<float> outer_product(const std::vector<float>& col, const std::vector<float>& row);

}  // namespace convlab
