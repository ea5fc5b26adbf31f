// A variable template in constant memory: not supported by the CPU backend.
template <int N>
__constant__ float c_taps[N];

__global__ void k(float* out) { out[threadIdx.x] = c_taps<4>[threadIdx.x % 4]; }
