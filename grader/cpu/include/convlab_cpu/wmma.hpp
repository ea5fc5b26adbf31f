/// @file wmma.hpp
/// @brief CUDA's warp matrix API (`nvcuda::wmma`, `<mma.h>`) on the CPU backend: the TF32
/// fragments of shape m16n16k8 with float accumulators, the shape and precision a tensor-core
/// convolution in FP32 data uses (issue 30). Other shapes and types stop the build with a message.
///
/// On a GPU a fragment is spread over the 32 lanes of a warp, each holding a few elements in an
/// order CUDA leaves unspecified, and the `_sync` functions are collective. Here each thread
/// holds the whole tile (so `num_elements` is the tile's size: 128 for an A or B fragment, 256
/// for an accumulator, where a GPU has 4 and 8), and each `_sync` call does the whole warp's work
/// for itself: the threads of a block run one at a time between barriers, and every lane of a warp
/// computes the same tile from the same memory. Code that sets elements through `x[i]` one by
/// one, the same for every element (a scale, `__float_to_tf32`), means the same on both; code that
/// assumes which element a lane holds is not portable CUDA, and is not supported.
///
/// What the tensor cores do with FP32 data is emulated: `mma_sync` uses the upper 19 bits of each
/// A and B element (1 sign, 8 exponent, 10 mantissa bits; the rest ignored, as the hardware
/// does), multiplies exactly and accumulates in FP32; `__float_to_tf32` rounds to nearest, ties
/// away from zero (PTX `cvt.rna.tf32.f32`). The order of the accumulation within one `mma_sync` is
/// the hardware's own and may differ: results agree within the TF32 error bound.
///
/// Memory accesses are counted as a GPU's lanes make them: a fragment's load counts its tile's
/// elements once per warp (each lane its share of the addresses), not once per thread; stores
/// likewise. A tile's pointer is checked as a GPU faults on it (check_memory).
#pragma once

#include "convlab_cpu/launch.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

// The helpers are static: each file that includes this header keeps its own copies, so that no
// symbol of the CPU backend's namespace is defined in a student's kernels file (the symbol fence
// refuses those).
namespace convlab_cpu::wmma_detail {

// The upper 19 bits of x: what a tensor core reads of an FP32 operand in TF32 mode.
static inline float tf32_truncate(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u &= 0xFFFFE000u;
  std::memcpy(&x, &u, sizeof u);
  return x;
}

// Round to nearest, ties away from zero, to 10 mantissa bits (cvt.rna.tf32.f32); NaN and infinity
// kept. The result is an FP32 value whose lower 13 bits are zero.
static inline float tf32_round(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7F800000u) != 0x7F800000u) {  // finite: add half of the dropped unit, then drop
    u += 0x1000u;
    u &= 0xFFFFE000u;
  }
  std::memcpy(&x, &u, sizeof u);
  return x;
}

// The lane's number within its warp (threads are numbered x fastest, as on a GPU).
static inline unsigned lane() {
  const uint3 t = detail::thread_idx();
  const dim3 b = detail::block_dim();
  return (t.x + b.x * (t.y + b.y * t.z)) % 32u;
}

// A fragment's memory, checked as a GPU faults on it: a float pointer that is not 4-byte aligned
// is a misaligned address. CUDA documents more (a 32-byte aligned pointer, ldm a multiple of 4
// floats), which an H200 does not enforce for TF32 fragments (measured with CUDA 13: a tile at 4
// bytes past a 32-byte boundary, or ldm 10, loads and multiplies correctly): the emulation
// accepts what the GPU runs, so that both backends give the same verdicts.
static inline void check_memory(const void* p, const char* what) {
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(float) != 0)
    throw std::invalid_argument(std::string(what) + ": misaligned address (a float pointer " +
                                std::to_string(reinterpret_cast<std::uintptr_t>(p) % 32) +
                                " bytes past a 32-byte boundary; a float must be 4-byte aligned, and CUDA documents a "
                                "32-byte aligned pointer and ldm a multiple of 4 for wmma's tiles)");
}

// Element (r, c) of a rows x cols tile in memory: row-major (leading dimension ldm between rows)
// or column-major (between columns).
static inline std::size_t at(int r, int c, unsigned ldm, bool col_major) {
  return col_major ? std::size_t(c) * ldm + r : std::size_t(r) * ldm + c;
}

// The copies, uncounted (the runtime's work, not the kernel's: CONVLAB_CPU_NOT_COUNTED); the
// lane's share of the addresses is then touched by counted code (touch_share).
CONVLAB_CPU_NOT_COUNTED void copy_in(float* tile, const float* memory, int rows, int cols, unsigned ldm,
                                     bool col_major) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) tile[r * cols + c] = memory[at(r, c, ldm, col_major)];
}
CONVLAB_CPU_NOT_COUNTED void copy_out(float* memory, const float* tile, int rows, int cols, unsigned ldm,
                                      bool col_major) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) memory[at(r, c, ldm, col_major)] = tile[r * cols + c];
}

// This lane's share of a tile's elements: rows*cols/32 of them, counted as loads (or stores of the
// values the tile holds there) where the file counts memory accesses.
static inline void load_share(const float* memory, int rows, int cols, unsigned ldm, bool col_major) {
  const int per_lane = rows * cols / 32, first = int(lane()) * per_lane;
  for (int e = first; e < first + per_lane; ++e)
    (void)*static_cast<const volatile float*>(&memory[at(e / cols, e % cols, ldm, col_major)]);
}
static inline void store_share(float* memory, const float* tile, int rows, int cols, unsigned ldm, bool col_major) {
  const int per_lane = rows * cols / 32, first = int(lane()) * per_lane;
  for (int e = first; e < first + per_lane; ++e)
    *static_cast<volatile float*>(&memory[at(e / cols, e % cols, ldm, col_major)]) = tile[e];
}

template <class>
constexpr bool kUnsupported = false;

}  // namespace convlab_cpu::wmma_detail

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
namespace precision {
struct tf32 {};
}  // namespace precision

/// A fragment: on the CPU backend, the whole tile in each thread (see the file's comment).
template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
  static_assert(convlab_cpu::wmma_detail::kUnsupported<Use>,
                "the convlab CPU backend emulates wmma's TF32 fragments only: fragment<matrix_a, 16, 16, 8, "
                "precision::tf32, row_major or col_major>, fragment<matrix_b, 16, 16, 8, precision::tf32, ...> and "
                "fragment<accumulator, 16, 16, 8, float>; other shapes and types need the CUDA backend (an NVIDIA GPU)");
};

namespace detail {
// An A or B operand: rows x cols floats, and its layout in memory.
template <int Rows, int Cols, class Layout>
class tf32_operand {
public:
  static_assert(std::is_same_v<Layout, row_major> || std::is_same_v<Layout, col_major>,
                "a matrix_a or matrix_b fragment needs a layout: row_major or col_major");
  using element_type = float;
  static constexpr int rows = Rows, cols = Cols;
  static constexpr int num_elements = rows * cols;
  float x[num_elements];
};
}  // namespace detail

template <class Layout>
class fragment<matrix_a, 16, 16, 8, precision::tf32, Layout> : public detail::tf32_operand<16, 8, Layout> {};  // M x K
template <class Layout>
class fragment<matrix_b, 16, 16, 8, precision::tf32, Layout> : public detail::tf32_operand<8, 16, Layout> {};  // K x N

template <>
class fragment<accumulator, 16, 16, 8, float, void> {
public:
  using element_type = float;
  static constexpr int rows = 16, cols = 16;  // M x N
  static constexpr int num_elements = rows * cols;
  float x[num_elements];
};

/// Rounds an FP32 value to TF32 (to nearest, ties away from zero), kept in a float.
inline float __float_to_tf32(float x) { return convlab_cpu::wmma_detail::tf32_round(x); }

template <class Use, int M, int N, int K, class T, class Layout>
inline void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, float value) {
  for (float& e : f.x) e = value;
}

template <class Use, class Layout>
inline void load_matrix_sync(fragment<Use, 16, 16, 8, precision::tf32, Layout>& f, const float* p, unsigned ldm) {
  using F = fragment<Use, 16, 16, 8, precision::tf32, Layout>;
  constexpr bool col = std::is_same_v<Layout, col_major>;
  convlab_cpu::wmma_detail::check_memory(p, "wmma::load_matrix_sync");
  convlab_cpu::wmma_detail::copy_in(f.x, p, F::rows, F::cols, ldm, col);
  convlab_cpu::wmma_detail::load_share(p, F::rows, F::cols, ldm, col);
}

inline void load_matrix_sync(fragment<accumulator, 16, 16, 8, float>& f, const float* p, unsigned ldm, layout_t layout) {
  convlab_cpu::wmma_detail::check_memory(p, "wmma::load_matrix_sync");
  convlab_cpu::wmma_detail::copy_in(f.x, p, 16, 16, ldm, layout == mem_col_major);
  convlab_cpu::wmma_detail::load_share(p, 16, 16, ldm, layout == mem_col_major);
}

inline void store_matrix_sync(float* p, const fragment<accumulator, 16, 16, 8, float>& f, unsigned ldm,
                              layout_t layout) {
  convlab_cpu::wmma_detail::check_memory(p, "wmma::store_matrix_sync");
  // Every lane writes the whole tile (uncounted), then its share again, counted: the same values.
  convlab_cpu::wmma_detail::copy_out(p, f.x, 16, 16, ldm, layout == mem_col_major);
  convlab_cpu::wmma_detail::store_share(p, f.x, 16, 16, ldm, layout == mem_col_major);
}

/// d = a b + c, the products of TF32 operands (each A and B element's upper 19 bits) accumulated
/// in FP32. d may be c.
template <class LayoutA, class LayoutB>
inline void mma_sync(fragment<accumulator, 16, 16, 8, float>& d,
                     const fragment<matrix_a, 16, 16, 8, precision::tf32, LayoutA>& a,
                     const fragment<matrix_b, 16, 16, 8, precision::tf32, LayoutB>& b,
                     const fragment<accumulator, 16, 16, 8, float>& c) {
  using convlab_cpu::wmma_detail::tf32_truncate;
  float out[16 * 16];
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      float s = c.x[i * 16 + j];
      for (int k = 0; k < 8; ++k) s += tf32_truncate(a.x[i * 8 + k]) * tf32_truncate(b.x[k * 16 + j]);
      out[i * 16 + j] = s;
    }
  std::memcpy(d.x, out, sizeof out);
  if (convlab_cpu::wmma_detail::lane() == 0) ::convlab_cpu::detail::count_tensor_macs(16 * 16 * 8);  // once a warp
}

}  // namespace wmma
}  // namespace nvcuda
