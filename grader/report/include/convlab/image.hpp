/// @file image.hpp
/// @brief 8-bit images and PNG files: the error map a failing 2D grader draws, and
/// the photographs of the photo-filter example.
///
/// PNG support comes from libpng (found at configure time); without it
/// png_available() is false, reading or writing throws a std::runtime_error
/// saying so, and the graders print their text map only.
#pragma once
#include "convlab/compare.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace convlab {

/// An 8-bit image, rows top to bottom, `channels` interleaved values per pixel
/// (1: grey, 3: RGB).
struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<std::uint8_t> pixels;  ///< width * height * channels values

  /// The value of channel `c` of pixel (x, y).
  std::uint8_t& at(int x, int y, int c = 0) {
    return pixels[(static_cast<std::size_t>(y) * width + x) * channels + c];
  }
  std::uint8_t at(int x, int y, int c = 0) const {
    return pixels[(static_cast<std::size_t>(y) * width + x) * channels + c];
  }
};

/// True when this build can read and write PNG files.
bool png_available();

/// Reads a PNG file as grey (channels = 1) or RGB (channels = 3; alpha is dropped,
/// palettes are expanded). Throws std::runtime_error naming the file on any failure.
Image read_png(const std::string& path);

/// Writes `image` (1 or 3 channels) as a PNG file, creating its folder. Throws
/// std::runtime_error naming the file on any failure.
void write_png(const std::string& path, const Image& image);

/// The colours of an error map.
struct ErrorMapColours {
  static constexpr std::uint8_t right[3] = {40, 40, 40};        ///< a right output: dark grey
  static constexpr std::uint8_t wrong[3] = {230, 40, 40};       ///< a wrong value: red
  static constexpr std::uint8_t unwritten[3] = {255, 210, 0};   ///< never written (still NaN poison): yellow
  static constexpr std::uint8_t tile_line[3] = {70, 110, 200};  ///< a tile boundary: blue
};

/// Draws the wrong outputs of a 2D comparison: one cell per output (outputs are
/// grouped into cells when the image is larger than `max_side` pixels; a cell is lit
/// if any of its outputs is wrong, yellow if any was never written), small images
/// enlarged to about `min_side` pixels, and the tile boundaries of grid.tile_x/tile_y
/// drawn as blue lines where tiles are at least 4 pixels wide in the picture.
/// Uses c.wrong_mask (1: wrong value, 2: never written).
Image render_error_map(const Comparison& c, int max_side = 1024, int min_side = 512);

}  // namespace convlab
