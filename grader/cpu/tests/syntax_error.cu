// A kernel with a type error on line 9, launched with <<<>>> on line 12 (which
// cu2cpp rewrites). The compiler's message must name syntax_error.cu:9.
#include <cuda_runtime_api.h>

__global__ void broken(float* out, int n) {
  const int i = blockIdx.x * blockDim.x
                + threadIdx.x;
  if (i < n)
    out[i] = undeclared_variable;
}
void run(float* out, int n) {
  broken<<<(n + 255) / 256,
           256>>>(out, n);
}
