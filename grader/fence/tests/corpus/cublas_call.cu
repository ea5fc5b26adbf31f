// A library the lab forbids (the spec's forbidden_symbols, checked by substring as before).
// fence-backends: cuda
// fence-expect: cublas_call\.cu: uses cublasCreate_v2, and this lab forbids cublas \(its grading.json lists "cublas" in forbidden_symbols\)
#include <cublas_v2.h>

namespace convlab::lab01 {
bool try_cublas() {
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return false;
  cublasDestroy(h);
  return true;
}
}  // namespace convlab::lab01
