// A kernel the CPU backend must refuse at build time (warp shuffle): cu2cpp's test.
// The '__shfl_down_sync' in this comment and in the string below must not count.
__global__ void warp_sum(float* data) {
  const char* note = "__shfl_down_sync is only mentioned here";
  (void)note;
  float v = data[threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  data[threadIdx.x] = v;
}
