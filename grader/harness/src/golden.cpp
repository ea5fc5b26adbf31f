// Golden models in double precision. See convlab/golden.hpp.
#include "convlab/golden.hpp"

#include "convlab/progress.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>

namespace convlab {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

}  // namespace

void parallel_ranges(long long count, double work, const std::function<void(long long, long long)>& body) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const long long threads = work < 4e6 ? 1 : std::min<long long>(hw, count);
  if (threads <= 1) {
    if (count > 0) body(0, count);
    return;
  }
  std::vector<std::thread> pool;
  const long long step = (count + threads - 1) / threads;
  for (long long t = 0; t < threads; ++t) {
    const long long begin = t * step, end = std::min(count, begin + step);
    if (begin < end) pool.emplace_back(body, begin, end);
  }
  for (auto& th : pool) th.join();
}

Golden conv1d_golden(const std::vector<float>& in, const std::vector<float>& filter, int radius) {
  require(radius >= 0, "conv1d_golden: radius must be >= 0, got " + std::to_string(radius));
  require(!in.empty(), "conv1d_golden: empty input");
  require(filter.size() == std::size_t(2 * radius + 1),
          "conv1d_golden: filter has " + std::to_string(filter.size()) + " taps, radius " +
              std::to_string(radius) + " needs " + std::to_string(2 * radius + 1));
  const long long n = static_cast<long long>(in.size());
  const ProgressStep step("computing the expected output of n = " + std::to_string(n) + ", r = " +
                          std::to_string(radius) + " on the CPU (double precision)");
  Golden g;
  g.terms = 2 * radius + 1;
  g.value.assign(in.size(), 0.0);
  g.magnitude.assign(in.size(), 0.0);
  parallel_ranges(n, double(n) * g.terms, [&](long long lo, long long hi) {
    for (long long i = lo; i < hi; ++i) {
      double sum = 0, mag = 0;
      for (int j = -radius; j <= radius; ++j) {
        const long long k = i + j;
        if (k < 0 || k >= n) continue;  // ghost cell: zero
        const double p = double(in[k]) * double(filter[j + radius]);
        sum += p;
        mag += std::fabs(p);
      }
      g.value[i] = sum;
      g.magnitude[i] = mag;
    }
  });
  return g;
}

Golden conv2d_golden(const std::vector<float>& in, int width, int height, const std::vector<float>& filter,
                     int radius) {
  require(radius >= 0, "conv2d_golden: radius must be >= 0, got " + std::to_string(radius));
  require(width >= 1 && height >= 1, "conv2d_golden: image must be at least 1x1");
  require(in.size() == std::size_t(width) * std::size_t(height), "conv2d_golden: input is not width*height");
  const int fw = 2 * radius + 1;
  require(filter.size() == std::size_t(fw) * fw, "conv2d_golden: filter is not (2r+1)^2 taps");
  // Minutes on a laptop for the benchmarks' largest problems: a heartbeat shows this step.
  const ProgressStep step("computing the expected output of " + std::to_string(width) + " x " +
                          std::to_string(height) + ", r = " + std::to_string(radius) + " on the CPU (double precision)");
  Golden g;
  g.terms = fw * fw;
  g.value.assign(in.size(), 0.0);
  g.magnitude.assign(in.size(), 0.0);
  parallel_ranges(height, double(width) * height * g.terms, [&](long long row_begin, long long row_end) {
    for (int y = int(row_begin); y < row_end; ++y)
      for (int x = 0; x < width; ++x) {
        double sum = 0, mag = 0;
        for (int dy = -radius; dy <= radius; ++dy) {
          const int yy = y + dy;
          if (yy < 0 || yy >= height) continue;
          for (int dx = -radius; dx <= radius; ++dx) {
            const int xx = x + dx;
            if (xx < 0 || xx >= width) continue;
            const double p = double(in[std::size_t(yy) * width + xx]) *
                             double(filter[std::size_t(dy + radius) * fw + (dx + radius)]);
            sum += p;
            mag += std::fabs(p);
          }
        }
        g.value[std::size_t(y) * width + x] = sum;
        g.magnitude[std::size_t(y) * width + x] = mag;
      }
  });
  return g;
}

std::vector<float> flip_filter(const std::vector<float>& filter) {
  return std::vector<float>(filter.rbegin(), filter.rend());
}

}  // namespace convlab
