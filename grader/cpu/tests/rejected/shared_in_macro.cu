// A __shared__ declaration hidden in a macro: cu2cpp could not rewrite it, so it is refused.
#define TILE_DECL __shared__ float s_tile[256]

__global__ void k(float* out) {
  TILE_DECL;
  out[threadIdx.x] = s_tile[threadIdx.x];
}
