// A kernel the CPU backend must refuse at build time (__activemask: which lanes run together is
// the GPU's scheduling). The '__activemask' in this comment and in the string below must not count.
__global__ void warp_sum(float* data) {
  const char* note = "__activemask is only mentioned here";
  (void)note;
  float v = data[threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(__activemask(), v, offset);
  data[threadIdx.x] = v;
}
