/// @file golden.hpp
/// @brief CPU golden models in double precision.
///
/// Convolution in convlab is cross-correlation with zero padding:
/// \f[ y_i = \sum_{j=-r}^{r} x_{i+j}\, f_{j+r}, \qquad x_k = 0 \text{ for } k \notin [0, n). \f]
/// Each model also returns, per output, \f$\sum |x f|\f$ over the same taps:
/// the scale of the float32 rounding error that the comparator allows.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace convlab {

/// Exact (double) outputs and the per-output magnitude sum |x f|.
struct Golden {
  std::vector<double> value;      ///< y, computed in double from the float inputs
  std::vector<double> magnitude;  ///< sum of |x f| over the taps of each output
  int terms = 0;                  ///< filter taps per output (the m of the error bound)
};

/// 1D: n inputs, a filter of 2r+1 taps. Any n >= 1 and r >= 0 (r may exceed n).
Golden conv1d_golden(const std::vector<float>& in, const std::vector<float>& filter, int radius);

/// 2D: a row-major width x height image, a row-major (2r+1)x(2r+1) filter.
/// Uses all hardware threads for large images.
Golden conv2d_golden(const std::vector<float>& in, int width, int height,
                     const std::vector<float>& filter, int radius);

/// Runs body(begin, end) over [0, count) in contiguous ranges, one per hardware thread, when the
/// work is large (`work`, in operations, 4e6 or more); else in one call on this thread. For the
/// golden models: each range writes its own outputs.
void parallel_ranges(long long count, double work, const std::function<void(long long, long long)>& body);

/// The same filter reversed (true convolution instead of cross-correlation):
/// used to recognise the flipped-filter mistake in a failure report.
std::vector<float> flip_filter(const std::vector<float>& filter);

}  // namespace convlab
