// A __shared__ variable with an initializer (CUDA refuses it too): refused with the reason.
__global__ void k(float* out) {
  __shared__ float s_sum = 0.0f;
  out[threadIdx.x] = s_sum;
}
