/// @file remote_codec.hpp
/// @brief How the arguments and results of a contract function cross from the judge to the runner.
///
/// The judge calls a lab's contract (`lab03::conv2d_tiled_in(d_in, h_filter, d_out, problem,
/// stream)`) through a proxy that encodes each argument by its type (Codec<T>::encode); the runner
/// decodes them by the parameter types of the student's function (Codec<T>::decode) and calls it.
/// The rules, one per kind of parameter:
///  - a pointer is a device address that the runner allocated for the judge (the judge never
///    dereferences one), or, wrapped in host_array(), a host array the runner copies (a filter the
///    launcher uploads to constant memory);
///  - cudaStream_t is a stream the runner created;
///  - any trivially copyable value (a problem struct, an int) is sent as its bytes, and the sizes
///    must agree;
///  - other types (a struct holding pointers and host arrays, a result holding a string) specialise
///    Codec<T> next to their definition.
#pragma once

#include "convlab/wire.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace convlab::remote {

/// A host array passed by value: the runner receives a pointer to its own copy.
template <class T>
struct HostArray {
  const T* data = nullptr;  ///< the elements (may be null when count is 0)
  std::size_t count = 0;    ///< how many
};

/// Marks a host pointer argument of a proxy call: `host_array(h_filter, 2 * r + 1)`.
template <class T>
HostArray<T> host_array(const T* data, std::size_t count) {
  return {data, data ? count : 0};
}

/// The taps of a host filter of radius r in `dims` dimensions, (2r+1)^dims; 0 for a radius outside
/// [0, max_radius], which the launcher refuses before reading the filter (nothing is sent then).
inline std::size_t filter_taps(int radius, int dims, int max_radius = 64) {
  if (radius < 0 || radius > max_radius) return 0;
  std::size_t taps = 1;
  for (int d = 0; d < dims; ++d) taps *= std::size_t(2 * radius + 1);
  return taps;
}

/// The taps of the host filter to send with `problem`: (2r+1)^dims when the lab's contract
/// (its validate(), found by argument-dependent lookup) accepts the problem, else 0. A launcher
/// refuses a bad problem before it reads the filter; one that reads it anyway gets a null pointer
/// (and the test that expected a refusal fails). The judge never reads past a caller's array.
template <class Problem>
std::size_t filter_taps_if_valid(const Problem& problem, int dims) {
  try {
    validate(problem);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  return filter_taps(problem.radius, dims, 1 << 16);
}

/// The runner's side of decoding: where pointers and streams come from.
class ArgContext {
public:
  virtual ~ArgContext() = default;
  /// The pointer for `address` (0 is null); `writable` is false for a pointer-to-const parameter.
  /// Throws wire::WireError for an address the runner never handed out.
  virtual void* device_pointer(std::uint64_t address, bool writable) = 0;
  /// A copy of `n` bytes of a host array, aligned for any element type, alive during the call.
  virtual void* host_copy(const char* bytes, std::size_t n) = 0;
  /// The stream for `handle` (0 is the legacy default stream).
  virtual cudaStream_t stream(std::uint64_t handle) = 0;
  /// Called once every argument is decoded, right before the function runs.
  virtual void before_call() {}
};

/// The judge's side of decoding a result: addresses stay opaque numbers.
class OpaqueContext : public ArgContext {
public:
  void* device_pointer(std::uint64_t address, bool) override {
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
  }
  void* host_copy(const char*, std::size_t) override { throw wire::WireError("a result cannot be a host array"); }
  cudaStream_t stream(std::uint64_t handle) override {
    return reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(handle));
  }
};

namespace detail {
inline void expect_tag(wire::Reader& r, wire::Tag want, const char* what) {
  const auto got = static_cast<wire::Tag>(r.u8());
  if (got != want)
    throw wire::WireError(std::string("an argument of the wrong kind: expected ") + what + ", got tag '" +
                          static_cast<char>(got) + "'");
}
}  // namespace detail

/// Trivially copyable values: their bytes.
template <class T, class Enable = void>
struct Codec {
  static_assert(std::is_trivially_copyable_v<T>,
                "convlab::remote::Codec: this type is not trivially copyable: specialise Codec<T> for it");
  static void encode(wire::Writer& w, const T& v) {
    w.u8(static_cast<std::uint8_t>(wire::Tag::value));
    w.bytes(&v, sizeof v);
  }
  static T decode(wire::Reader& r, ArgContext&) {
    detail::expect_tag(r, wire::Tag::value, "a value");
    std::size_t n = 0;
    const char* p = r.bytes(&n, sizeof(T));
    if (n != sizeof(T))
      throw wire::WireError("a value of " + std::to_string(n) + " bytes where " + std::to_string(sizeof(T)) +
                            " were expected (the judge and the runner were built from different headers)");
    T v;
    std::memcpy(static_cast<void*>(&v), p, sizeof v);
    return v;
  }
};

/// Streams: a handle of a stream the runner created.
template <>
struct Codec<cudaStream_t> {
  static void encode(wire::Writer& w, cudaStream_t s) {
    w.u8(static_cast<std::uint8_t>(wire::Tag::stream));
    w.u64(static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(s)));
  }
  static cudaStream_t decode(wire::Reader& r, ArgContext& c) {
    detail::expect_tag(r, wire::Tag::stream, "a stream");
    return c.stream(r.u64());
  }
};

/// Pointers: a device address, or (decoding only) a host array's copy.
template <class T>
struct Codec<T*, std::enable_if_t<!std::is_same_v<T*, cudaStream_t>>> {
  static void encode(wire::Writer& w, T* p) {
    w.u8(static_cast<std::uint8_t>(wire::Tag::pointer));
    w.u64(static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p)));
  }
  static T* decode(wire::Reader& r, ArgContext& c) {
    const auto tag = static_cast<wire::Tag>(r.u8());
    if (tag == wire::Tag::pointer) return static_cast<T*>(c.device_pointer(r.u64(), !std::is_const_v<T>));
    if (tag == wire::Tag::host) {
      std::size_t n = 0;
      const char* p = r.bytes(&n, std::size_t(16) << 20);
      return n == 0 ? nullptr : static_cast<T*>(c.host_copy(p, n));
    }
    throw wire::WireError(std::string("an argument of the wrong kind: expected a pointer, got tag '") +
                          static_cast<char>(tag) + "'");
  }
};

/// Host arrays (encoding only: the runner's parameter is a pointer).
template <class T>
struct Codec<HostArray<T>> {
  static void encode(wire::Writer& w, const HostArray<T>& a) {
    w.u8(static_cast<std::uint8_t>(wire::Tag::host));
    w.bytes(a.data, a.count * sizeof(T));
  }
};

/// Text.
template <>
struct Codec<std::string> {
  static void encode(wire::Writer& w, const std::string& s) {
    w.u8(static_cast<std::uint8_t>(wire::Tag::text));
    w.str(s);
  }
  static std::string decode(wire::Reader& r, ArgContext&) {
    detail::expect_tag(r, wire::Tag::text, "a text");
    return r.str();
  }
};

/// Encodes one argument by its type.
template <class T>
void encode_arg(wire::Writer& w, const T& v) {
  Codec<std::decay_t<T>>::encode(w, v);
}

}  // namespace convlab::remote
