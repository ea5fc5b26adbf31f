/// @file contract.hpp
/// @brief Input validation shared by the labs' contracts: each lab's `validate()` calls these
/// with its own limits, so every lab refuses a bad problem with the same words.
#pragma once

#include <climits>
#include <stdexcept>
#include <string>

namespace convlab {

/// Throws std::invalid_argument unless `n >= 1` and `0 <= radius <= max_radius`.
inline void require_conv1d_problem(int n, int radius, int max_radius) {
  if (n < 1) throw std::invalid_argument("conv1d: n must be >= 1, got " + std::to_string(n));
  if (radius < 0 || radius > max_radius)
    throw std::invalid_argument("conv1d: radius must be in [0, " + std::to_string(max_radius) + "], got " +
                                std::to_string(radius));
}

/// CUDA's limit on the blocks of a grid along y (and z); along x it is 2^31 - 1.
inline constexpr int kMaxGridY = 65535;

/// Throws std::invalid_argument unless the image is at least 1 x 1, at most `max_height` rows,
/// width * height fits in an int, and `0 <= radius <= max_radius`. `height_limit` says where
/// `max_height` comes from (the refusal names it): a contract refuses what its launcher cannot
/// launch, so that the student reads the limit instead of a failed launch.
inline void require_conv2d_problem(int width, int height, int radius, int max_radius, int max_height = INT_MAX,
                                   const std::string& height_limit = "") {
  if (width < 1 || height < 1)
    throw std::invalid_argument("conv2d: width and height must be >= 1, got " + std::to_string(width) + " x " +
                                std::to_string(height));
  if (height > max_height)
    throw std::invalid_argument("conv2d: height must be <= " + std::to_string(max_height) +
                                (height_limit.empty() ? std::string() : " (" + height_limit + ")") + ", got " +
                                std::to_string(height));
  if (static_cast<long long>(width) * height > 0x7FFFFFFFLL)
    throw std::invalid_argument("conv2d: width * height must fit in an int");
  if (radius < 0 || radius > max_radius)
    throw std::invalid_argument("conv2d: radius must be in [0, " + std::to_string(max_radius) + "], got " +
                                std::to_string(radius));
}

}  // namespace convlab
