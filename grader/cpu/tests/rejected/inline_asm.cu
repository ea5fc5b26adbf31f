// Inline PTX: the CPU backend must refuse it where its compiler would see it, here in the branch
// a CPU build takes. (Inside `#if defined(__CUDA_ARCH__)`, with a portable fallback in its #else,
// it is accepted: lab 06's reference loads its fragments that way.)
__global__ void lane_of(unsigned* out) {
  unsigned lane = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
#else
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
#endif
  out[threadIdx.x] = lane;
}
