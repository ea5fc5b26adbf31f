// Lab 04 example: filters a photograph with the lab's kernels (yours in a student build,
// the reference in an instructor build), one colour plane at a time, and writes a PNG,
// so that you can look at what a convolution does.
//
//   lab04_photo [--filter blur|box|sharpen|edge|emboss] [--radius R]
//               [--kernel cached|fast|separable] [--check] [--out FILE] [INPUT.png]
//
//   --filter   blur: Gaussian (sigma = R / 2); box: uniform mean; sharpen: the image plus
//              its difference from a box blur; edge: Laplacian of the grey image, |value|;
//              emboss: a diagonal derivative, offset to mid-grey. Default blur.
//   --radius   R, 1 .. 15 (the lab's maximum); sharpen, edge and emboss use R = 1 unless given.
//   --kernel   which launcher of lab04.hpp filters the image: conv2d_cached (default),
//              conv2d_fast, or conv2d_separable (blur and box only: the separable filters).
//   --check    also computes the image with the double-precision golden model and compares
//              every output under the graders' tolerance; exit 1 (and an error map image) if
//              any is wrong.
//   INPUT      a PNG (grey or colour); default: photo/chelsea.png (CC0, see photo/LICENSE.md).
//   --out      default: <filter>_r<R>_<kernel>.png in the working folder.
// Exit: 0 done, 1 wrong result (--check), 2 bad arguments, unreadable files or a CUDA error, 77 no GPU.
// Ghost cells are zeros, as in every lab: a blur darkens the image's borders. Look for it.
#include "lab04.hpp"

#include <convlab/check.hpp>
#include <convlab/compare.hpp>
#include <convlab/golden.hpp>
#include <convlab/image.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace convlab;

struct Options {
  std::string filter = "blur";
  int radius = -1;  // -1: the filter's default
  std::string kernel = "cached";
  bool check = false;
  std::string input = CONVLAB_PHOTO_DEFAULT;
  std::string out;
};

constexpr const char* kUsage =
    "usage: lab04_photo [--filter blur|box|sharpen|edge|emboss] [--radius R]\n"
    "                   [--kernel cached|fast|separable] [--check] [--out FILE] [INPUT.png]\n";

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "lab04_photo: %s\n%s", what.c_str(), kUsage);
  std::exit(2);
}

int parse_radius(const std::string& s) {
  char* end = nullptr;
  const long r = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || r < 1 || r > lab04::kMaxRadius)
    usage_error("--radius must be a whole number from 1 to " + std::to_string(lab04::kMaxRadius) + ", not '" + s +
                "'");
  return static_cast<int>(r);
}

Options parse(int argc, char** argv) {
  Options o;
  bool have_input = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--filter") o.filter = value();
    else if (a == "--radius") o.radius = parse_radius(value());
    else if (a == "--kernel") o.kernel = value();
    else if (a == "--out") o.out = value();
    else if (a == "--check") o.check = true;
    else if (a == "-h" || a == "--help") {
      std::printf("lab04_photo: filters a photograph with the lab's kernels (see the top of photo_filter.cpp)\n%s",
                  kUsage);
      std::exit(0);
    }
    else if (!a.empty() && a[0] == '-') usage_error("unknown option '" + a + "'");
    else if (have_input) usage_error("one input image only (got '" + o.input + "' and '" + a + "')");
    else o.input = a, have_input = true;
  }
  const std::vector<std::string> filters = {"blur", "box", "sharpen", "edge", "emboss"};
  if (std::find(filters.begin(), filters.end(), o.filter) == filters.end())
    usage_error("unknown filter '" + o.filter + "'; the filters are blur, box, sharpen, edge, emboss");
  if (o.kernel != "cached" && o.kernel != "fast" && o.kernel != "separable")
    usage_error("unknown kernel '" + o.kernel + "'; the kernels are cached, fast, separable");
  if (o.radius < 0) o.radius = (o.filter == "blur" || o.filter == "box") ? 3 : 1;
  if (o.kernel == "separable" && o.filter != "blur" && o.filter != "box")
    usage_error("the " + o.filter + " filter is not separable (not an outer product of two 1D filters): use "
                "--kernel cached or fast");
  if (o.out.empty()) o.out = o.filter + "_r" + std::to_string(o.radius) + "_" + o.kernel + ".png";
  return o;
}

// The 1D factor of the separable filters: Gaussian or box, summing to 1.
std::vector<float> factor(const std::string& filter, int r) {
  std::vector<float> f(2 * r + 1);
  const double sigma = std::max(0.5, r / 2.0);
  double sum = 0;
  for (int j = -r; j <= r; ++j) sum += filter == "box" ? 1.0 : std::exp(-0.5 * j * j / (sigma * sigma));
  for (int j = -r; j <= r; ++j)
    f[j + r] = static_cast<float>((filter == "box" ? 1.0 : std::exp(-0.5 * j * j / (sigma * sigma))) / sum);
  return f;
}

// The (2r+1)^2 filter, row-major.
std::vector<float> filter_2d(const std::string& filter, int r) {
  const int w = 2 * r + 1;
  std::vector<float> f(static_cast<std::size_t>(w) * w, 0.0f);
  if (filter == "blur" || filter == "box") {
    const std::vector<float> g = factor(filter, r);
    for (int i = 0; i < w; ++i)
      for (int j = 0; j < w; ++j) f[i * w + j] = g[i] * g[j];
  } else if (filter == "sharpen") {  // 2 x identity - box mean: detail added back once
    for (float& v : f) v = -1.0f / (w * w);
    f[r * w + r] += 2.0f;
  } else if (filter == "edge") {  // Laplacian: the centre against the mean of its neighbours
    for (float& v : f) v = -1.0f;
    f[r * w + r] = static_cast<float>(w * w - 1);
  } else {  // emboss: + below-right, - above-left
    for (int k = 1; k <= r; ++k) {
      f[(r + k) * w + (r + k)] = 1.0f;
      f[(r - k) * w + (r - k)] = -1.0f;
    }
  }
  return f;
}

int run(const Options& o) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("lab04_photo: SKIPPED: no CUDA device here\n");
    return 77;
  }
  const Image in = read_png(o.input);
  const bool grey_out = o.filter == "edge" || in.channels == 1;
  const int w = in.width, h = in.height;
  const std::size_t n = static_cast<std::size_t>(w) * h;
  const std::vector<float> f2 = filter_2d(o.filter, o.radius);
  const std::vector<float> f1 = factor(o.filter, o.radius);
  std::printf("lab04_photo: %s, %d x %d, %s filter, r = %d (%d x %d taps), conv2d_%s (%s kernels)\n",
              o.input.c_str(), w, h, o.filter.c_str(), o.radius, 2 * o.radius + 1, 2 * o.radius + 1,
              o.kernel.c_str(), CONVLAB_IMPL_NAME);

  // The planes to filter: R, G, B, or one grey plane (the luminance, for edges).
  std::vector<std::vector<float>> planes;
  if (grey_out) {
    std::vector<float> grey(n);
    for (std::size_t i = 0; i < n; ++i)
      grey[i] = in.channels == 1 ? in.pixels[i]
                                 : 0.299f * in.pixels[3 * i] + 0.587f * in.pixels[3 * i + 1] +
                                       0.114f * in.pixels[3 * i + 2];
    planes.push_back(std::move(grey));
  } else {
    for (int c = 0; c < 3; ++c) {
      std::vector<float> p(n);
      for (std::size_t i = 0; i < n; ++i) p[i] = in.pixels[3 * i + c];
      planes.push_back(std::move(p));
    }
  }

  float *d_in = nullptr, *d_out = nullptr, *d_tmp = nullptr;
  CONVLAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&d_in), n * sizeof(float)));
  CONVLAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&d_out), n * sizeof(float)));
  CONVLAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&d_tmp), n * sizeof(float)));
  const lab04::Conv2dProblem problem{w, h, o.radius};
  Image out{w, h, grey_out ? 1 : 3, {}};
  out.pixels.resize(n * out.channels);
  bool all_right = true;
  for (std::size_t c = 0; c < planes.size(); ++c) {
    CONVLAB_CUDA_CHECK(cudaMemcpy(d_in, planes[c].data(), n * sizeof(float), cudaMemcpyHostToDevice));
    if (o.kernel == "cached") lab04::conv2d_cached(d_in, f2.data(), d_out, problem, nullptr);
    else if (o.kernel == "fast") lab04::conv2d_fast(d_in, f2.data(), d_out, problem, nullptr);
    else lab04::conv2d_separable(d_in, f1.data(), f1.data(), d_tmp, d_out, problem, nullptr);
    CONVLAB_CUDA_CHECK(cudaGetLastError());
    CONVLAB_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> result(n);
    CONVLAB_CUDA_CHECK(cudaMemcpy(result.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    if (o.check) {
      // The separable kernel computes the outer product of f1 with itself: the golden model gets
      // exactly that filter (f2 was built from the same factors).
      const Golden g = conv2d_golden(planes[c], w, h, f2, o.radius);
      const Comparison cmp = compare(result, g, Grid{w, h, o.radius, lab04::kTileDim, lab04::kTileDim});
      if (!cmp.ok()) {
        all_right = false;
        std::printf("plane %zu is wrong:\n%s", c, cmp.report().c_str());
        if (png_available()) {
          const std::string map = o.out + ".errors.png";
          write_png(map, render_error_map(cmp));
          std::printf("error map image: %s\n", map.c_str());
        }
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      float v = result[i];
      if (o.filter == "edge") v = std::fabs(v);
      if (o.filter == "emboss") v += 128.0f;
      const float clamped = std::isnan(v) ? 0.0f : std::min(255.0f, std::max(0.0f, std::round(v)));
      out.pixels[i * out.channels + c] = static_cast<std::uint8_t>(clamped);
    }
  }
  CONVLAB_CUDA_CHECK(cudaFree(d_in));
  CONVLAB_CUDA_CHECK(cudaFree(d_out));
  CONVLAB_CUDA_CHECK(cudaFree(d_tmp));
  write_png(o.out, out);
  std::printf("wrote %s (%d x %d, %s)%s\n", o.out.c_str(), w, h, grey_out ? "grey" : "RGB",
              o.check ? (all_right ? "; every output matches the golden model" : "; WRONG outputs, see above")
                      : "");
  return all_right ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lab04_photo: %s\n", e.what());
    return 2;
  }
}
