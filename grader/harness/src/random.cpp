// Seeds and the data generator. See convlab/random.hpp.
#include "convlab/random.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

namespace convlab {
namespace {

struct BaseSeed {
  std::uint64_t value = 0;
  bool from_env = false;
};

BaseSeed make_base_seed() {
  if (const char* env = std::getenv("CONVLAB_SEED"); env && *env) {
    const std::string text(env);
    std::size_t used = 0;
    std::uint64_t v = 0;
    try {
      v = std::stoull(text, &used, 0);  // decimal, or 0x-prefixed hex
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || text[0] == '-')
      throw std::invalid_argument("CONVLAB_SEED must be a non-negative integer, got '" + text + "'");
    return {v, true};
  }
  std::random_device rd;
  const auto now = static_cast<std::uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
  // Keep seeds short enough to type: 32 bits of entropy is plenty for test data.
  return {((std::uint64_t(rd()) << 16) ^ now) & 0xFFFFFFFFull, false};
}

const BaseSeed& the_base_seed() {
  static const BaseSeed seed = make_base_seed();
  return seed;
}

std::uint64_t mix(std::uint64_t z) {  // SplitMix64's finaliser
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::uint64_t base_seed() { return the_base_seed().value; }
bool seed_from_environment() { return the_base_seed().from_env; }

std::uint64_t test_seed(std::string_view test_name) {
  std::uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a of the name
  for (unsigned char ch : test_name) h = (h ^ ch) * 0x100000001B3ull;
  return mix(base_seed() ^ mix(h));
}

std::uint64_t Rng::next_u64() {
  state_ += 0x9E3779B97F4A7C15ull;
  return mix(state_);
}

double Rng::next_unit() { return double(next_u64() >> 40) / double(1ull << 24); }

std::vector<float> random_floats(std::size_t count, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(count);
  for (auto& x : v) {
    // |x| in [2^-8, 1], sign random: no zeros, magnitudes spread over the range.
    const double mag = 1.0 / 256.0 + (1.0 - 1.0 / 256.0) * rng.next_unit();
    x = static_cast<float>((rng.next_u64() & 1) ? mag : -mag);
  }
  return v;
}

std::vector<float> separable_factor(std::size_t count, std::uint64_t seed) {
  std::vector<float> v = random_floats(count, seed);
  for (float& x : v) {
    int e = 0;
    const double m = std::frexp(double(x), &e);              // |m| in [0.5, 1)
    x = float(std::ldexp(std::nearbyint(m * 4096.0), e - 12));  // 12 significant bits, never 0
  }
  return v;
}

std::vector<float> outer_product(const std::vector<float>& col, const std::vector<float>& row) {
  std::vector<float> f;
  f.reserve(col.size() * row.size());
  for (float c : col)
    for (float w : row) f.push_back(c * w);  // exact for separable_factor() taps
  return f;
}

}  // namespace convlab
