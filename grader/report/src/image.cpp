// 8-bit images, PNG files through libpng's simplified API, and the error map image.
#include "convlab/image.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#ifdef CONVLAB_HAVE_PNG
#include <png.h>
#endif

namespace convlab {

bool png_available() {
#ifdef CONVLAB_HAVE_PNG
  return true;
#else
  return false;
#endif
}

Image read_png(const std::string& path) {
#ifdef CONVLAB_HAVE_PNG
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path.c_str()))
    throw std::runtime_error("cannot read the PNG file '" + path + "': " + img.message);
  const bool colour = (img.format & PNG_FORMAT_FLAG_COLOR) != 0;
  img.format = colour ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  Image out;
  out.width = static_cast<int>(img.width);
  out.height = static_cast<int>(img.height);
  out.channels = colour ? 3 : 1;
  out.pixels.resize(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, out.pixels.data(), 0, nullptr)) {
    const std::string why = img.message;
    png_image_free(&img);
    throw std::runtime_error("cannot decode the PNG file '" + path + "': " + why);
  }
  return out;
#else
  throw std::runtime_error("cannot read '" + path + "': this build has no PNG support (libpng was not found)");
#endif
}

void write_png(const std::string& path, const Image& image) {
  if (image.width < 1 || image.height < 1 || (image.channels != 1 && image.channels != 3) ||
      image.pixels.size() != static_cast<std::size_t>(image.width) * image.height * image.channels)
    throw std::runtime_error("cannot write '" + path + "': the image is malformed");
#ifdef CONVLAB_HAVE_PNG
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  img.width = static_cast<png_uint_32>(image.width);
  img.height = static_cast<png_uint_32>(image.height);
  img.format = image.channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  if (!png_image_write_to_file(&img, path.c_str(), 0, image.pixels.data(), 0, nullptr))
    throw std::runtime_error("cannot write the PNG file '" + path + "': " + img.message);
#else
  throw std::runtime_error("cannot write '" + path + "': this build has no PNG support (libpng was not found)");
#endif
}

Image render_error_map(const Comparison& c, int max_side, int min_side) {
  const Grid& g = c.grid;
  const int w = std::max(g.width, 1), h = std::max(g.height, 1);
  if (c.wrong_mask.size() != static_cast<std::size_t>(w) * h)
    throw std::invalid_argument("render_error_map: the comparison has no mask of its grid's size");
  // `group` x `group` outputs per cell when the image is large; `zoom` pixels per cell when small.
  const int longest = std::max(w, h);
  const int group = std::max(1, (longest + max_side - 1) / max_side);
  const int cells_x = (w + group - 1) / group, cells_y = (h + group - 1) / group;
  const int zoom = std::max(1, min_side / std::max(cells_x, cells_y));
  Image img;
  img.width = cells_x * zoom;
  img.height = cells_y * zoom;
  img.channels = 3;
  img.pixels.resize(static_cast<std::size_t>(img.width) * img.height * 3);
  // The worst state of each cell: 0 right, 1 wrong, 2 never written.
  std::vector<unsigned char> cell(static_cast<std::size_t>(cells_x) * cells_y, 0);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      unsigned char& s = cell[static_cast<std::size_t>(y / group) * cells_x + x / group];
      s = std::max(s, c.wrong_mask[static_cast<std::size_t>(y) * w + x]);
    }
  const auto paint = [&](int px, int py, const std::uint8_t* rgb) {
    for (int k = 0; k < 3; ++k) img.at(px, py, k) = rgb[k];
  };
  for (int py = 0; py < img.height; ++py)
    for (int px = 0; px < img.width; ++px) {
      const unsigned char s = cell[static_cast<std::size_t>(py / zoom) * cells_x + px / zoom];
      paint(px, py, s == 2 ? ErrorMapColours::unwritten : s == 1 ? ErrorMapColours::wrong : ErrorMapColours::right);
    }
  // Tile boundaries: the first pixel column (row) of the cell where a tile starts, over the right cells
  // only, so that no wrong output is hidden; only where tiles are at least 4 pixels apart.
  const double px_per_output = static_cast<double>(zoom) / group;
  if (g.tile_x > 0 && g.tile_x * px_per_output >= 4)
    for (int x0 = g.tile_x; x0 < w; x0 += g.tile_x) {
      const int px = static_cast<int>(static_cast<long long>(x0) * zoom / group);
      for (int py = 0; py < img.height; ++py)
        if (img.at(px, py, 0) == ErrorMapColours::right[0] && img.at(px, py, 1) == ErrorMapColours::right[1])
          paint(px, py, ErrorMapColours::tile_line);
    }
  if (g.tile_y > 0 && g.tile_y * px_per_output >= 4)
    for (int y0 = g.tile_y; y0 < h; y0 += g.tile_y) {
      const int py = static_cast<int>(static_cast<long long>(y0) * zoom / group);
      for (int px = 0; px < img.width; ++px)
        if (img.at(px, py, 0) == ErrorMapColours::right[0] && img.at(px, py, 1) == ErrorMapColours::right[1])
          paint(px, py, ErrorMapColours::tile_line);
    }
  return img;
}

}  // namespace convlab
