// A static __shared__ array at namespace scope: the CPU backend needs it inside the kernel.
__shared__ float s_tile[256];

__global__ void k(float* out) {
  s_tile[threadIdx.x] = 1.0f;
  out[threadIdx.x] = s_tile[threadIdx.x];
}
