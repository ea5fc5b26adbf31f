/// @file device_buffer.hpp
/// @brief RAII device memory, and guarded buffers that catch out-of-bounds accesses.
#pragma once

#include "convlab/check.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace convlab {

/// An exact-size device allocation of `count` elements of T, freed on destruction.
template <class T>
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  /// Allocates `count` elements (nothing for 0).
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) CONVLAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes()));
  }
  /// Allocates and uploads `host`.
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);  // never throws: a failure here has nowhere to go
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) { o.ptr_ = nullptr; o.count_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_) cudaFree(ptr_);
      ptr_ = o.ptr_; count_ = o.count_;
      o.ptr_ = nullptr; o.count_ = 0;
    }
    return *this;
  }

  T* get() noexcept { return ptr_; }                 ///< device pointer
  const T* get() const noexcept { return ptr_; }     ///< device pointer
  std::size_t size() const noexcept { return count_; }               ///< elements
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }  ///< bytes

  /// Copies `host` (exactly size() elements) to the device.
  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw std::invalid_argument("DeviceBuffer::upload: size mismatch");
    if (count_) CONVLAB_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  /// Copies the device contents back.
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_) CONVLAB_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  /// Sets every byte to `byte` (0xFF makes every float a NaN).
  void fill_bytes(int byte) {
    if (count_) CONVLAB_CUDA_CHECK(cudaMemset(ptr_, byte, bytes()));
  }

private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

/// The NaN that poisons outputs: a kernel that leaves an element unwritten leaves this.
inline float poison_nan() {
  const std::uint32_t bits = 0xFFFFFFFFu;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// A NaN with its own payload, written into the guard zones around a buffer.
inline float guard_nan() {
  const std::uint32_t bits = 0x7FC0DEADu;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// A float buffer with NaN guard zones before and after the data.
///
/// Inputs: a kernel that reads outside [0, n) (a missing boundary check) gets
/// NaN, and the NaN reaches its output, so the comparator flags the element.
/// Outputs: after the run, check_guards() reports any write outside [0, n).
class GuardedBuffer {
public:
  /// `count` data elements with `guard` guard elements on each side.
  GuardedBuffer(std::size_t count, std::size_t guard);
  float* data() noexcept { return storage_.get() + guard_; }              ///< the data, device pointer
  const float* data() const noexcept { return storage_.get() + guard_; }  ///< the data, device pointer
  std::size_t size() const noexcept { return count_; }                    ///< data elements
  std::size_t guard() const noexcept { return guard_; }                   ///< guard elements per side
  /// Uploads the data and refills both guards with guard_nan().
  void upload(const std::vector<float>& host);
  /// Fills the data with poison_nan() and the guards with guard_nan().
  void poison();
  /// Downloads the data.
  std::vector<float> download() const;
  /// Empty if both guards are intact; otherwise says where the first stray writes landed,
  /// e.g. "the kernel wrote outside the output: 3 elements after its end (first at index n+0)".
  std::string check_guards() const;

private:
  DeviceBuffer<float> storage_;
  std::size_t count_;
  std::size_t guard_;
};

}  // namespace convlab
