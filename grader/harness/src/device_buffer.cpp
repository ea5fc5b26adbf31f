// Guarded device buffers. See convlab/device_buffer.hpp.
#include "convlab/device_buffer.hpp"

#include <cstdio>

namespace convlab {
namespace {
std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
}  // namespace

GuardedBuffer::GuardedBuffer(std::size_t count, std::size_t guard)
    : storage_(count + 2 * guard), count_(count), guard_(guard) {}

void GuardedBuffer::upload(const std::vector<float>& host) {
  if (host.size() != count_) throw std::invalid_argument("GuardedBuffer::upload: size mismatch");
  const std::vector<float> g(guard_, guard_nan());
  float* base = storage_.get();
  if (guard_) {
    CONVLAB_CUDA_CHECK(cudaMemcpy(base, g.data(), guard_ * sizeof(float), cudaMemcpyHostToDevice));
    CONVLAB_CUDA_CHECK(cudaMemcpy(base + guard_ + count_, g.data(), guard_ * sizeof(float), cudaMemcpyHostToDevice));
  }
  if (count_) CONVLAB_CUDA_CHECK(cudaMemcpy(base + guard_, host.data(), count_ * sizeof(float), cudaMemcpyHostToDevice));
}

void GuardedBuffer::poison() {
  const std::vector<float> g(guard_, guard_nan());
  float* base = storage_.get();
  if (guard_) {
    CONVLAB_CUDA_CHECK(cudaMemcpy(base, g.data(), guard_ * sizeof(float), cudaMemcpyHostToDevice));
    CONVLAB_CUDA_CHECK(cudaMemcpy(base + guard_ + count_, g.data(), guard_ * sizeof(float), cudaMemcpyHostToDevice));
  }
  if (count_) CONVLAB_CUDA_CHECK(cudaMemset(base + guard_, 0xFF, count_ * sizeof(float)));
}

std::vector<float> GuardedBuffer::download() const {
  std::vector<float> host(count_);
  if (count_)
    CONVLAB_CUDA_CHECK(cudaMemcpy(host.data(), storage_.get() + guard_, count_ * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

std::string GuardedBuffer::check_guards() const {
  if (!guard_) return {};
  std::vector<float> before(guard_), after(guard_);
  CONVLAB_CUDA_CHECK(cudaMemcpy(before.data(), storage_.get(), guard_ * sizeof(float), cudaMemcpyDeviceToHost));
  CONVLAB_CUDA_CHECK(cudaMemcpy(after.data(), storage_.get() + guard_ + count_, guard_ * sizeof(float),
                                cudaMemcpyDeviceToHost));
  const std::uint32_t want = bits_of(guard_nan());
  std::size_t n_before = 0, n_after = 0;
  long long first_before = 0, first_after = -1;
  for (std::size_t i = 0; i < guard_; ++i)
    if (bits_of(before[i]) != want) {
      if (!n_before) first_before = static_cast<long long>(i) - static_cast<long long>(guard_);
      ++n_before;
    }
  for (std::size_t i = 0; i < guard_; ++i)
    if (bits_of(after[i]) != want) {
      if (first_after < 0) first_after = static_cast<long long>(i);
      ++n_after;
    }
  std::string msg;
  char buf[200];
  if (n_before) {
    std::snprintf(buf, sizeof buf, "the kernel wrote %zu element(s) before the start of the output (first at index %lld). ",
                  n_before, first_before);
    msg += buf;
  }
  if (n_after) {
    std::snprintf(buf, sizeof buf, "the kernel wrote %zu element(s) past the end of the output (first at index %zu+%lld). ",
                  n_after, count_, first_after);
    msg += buf;
  }
  return msg;
}

}  // namespace convlab
