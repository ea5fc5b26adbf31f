// Device memory that frees itself, for the CPU backend's tests (each call's status checked).
#pragma once

#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace cpu_backend_test {

template <class T>
struct Dev {
  T* p = nullptr;
  explicit Dev(std::size_t n) { EXPECT_EQ(cudaMalloc(&p, n * sizeof(T)), cudaSuccess); }
  explicit Dev(const std::vector<T>& h) : Dev(h.size()) {
    EXPECT_EQ(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  std::vector<T> get(std::size_t n) const {
    std::vector<T> h(n);
    EXPECT_EQ(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
};

}  // namespace cpu_backend_test
