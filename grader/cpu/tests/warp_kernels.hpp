// Host wrappers of the CPU backend's warp-level test kernels (warp_kernels.cu): __syncwarp, the
// shuffles and the votes, as a student's warp reduction or register-tiled stencil uses them. Each
// returns the launch's error, else the synchronisation's.
#pragma once

#include <cuda_runtime_api.h>

namespace warp_test {

enum class Shuffle : int { idx, up, down, xor_ };

/// out[i] = one shuffle of in[i] in every thread of `blocks` blocks of `threads` threads:
/// __shfl_sync (arg: srcLane), __shfl_up_sync / __shfl_down_sync (arg: delta) or __shfl_xor_sync
/// (arg: laneMask), with `mask` and `width`.
cudaError_t shuffle_once(Shuffle op, const int* in, int* out, int blocks, int threads, unsigned mask, int arg,
                         int width);
/// out[b * warps + w] = the sum of in over warp w of block b, by __shfl_down_sync (offsets 16, 8, 4, 2, 1);
/// lane 0 writes it. Every thread loads one element and no shared memory is used.
cudaError_t warp_sum_down(const float* in, float* out, int blocks, int threads);
/// out[i] = the sum of in over the segment of `width` lanes holding i, in every lane: a butterfly of
/// __shfl_xor_sync within the segment.
cudaError_t butterfly_sum(const float* in, float* out, int blocks, int threads, int width);
/// out[i] = in[warp's first] + ... + in[i]: an inclusive scan of the warp with __shfl_up_sync.
cudaError_t warp_scan(const int* in, int* out, int blocks, int threads);
/// out[i] = in[lane 5 of i's warp], by __shfl_sync(mask, v, 5).
cudaError_t broadcast_lane5(const double* in, double* out, int threads, unsigned mask);
/// out[i] = in[i ^ 1] through __shfl_xor_sync(0xffffffff, v, 1), one warp, for each type CUDA documents.
cudaError_t swap_pairs(const int* in, int* out);
cudaError_t swap_pairs(const unsigned* in, unsigned* out);
cudaError_t swap_pairs(const long long* in, long long* out);
cudaError_t swap_pairs(const unsigned long long* in, unsigned long long* out);
cudaError_t swap_pairs(const float* in, float* out);
cudaError_t swap_pairs(const double* in, double* out);
/// Each warp writes in[i] to shared memory, then (after __syncwarp() when `sync`) each lane reads its
/// right neighbour's slot in its own warp, then (after __syncwarp() again) overwrites its slot with
/// its own value doubled and reads its left neighbour's: out[2 i] and out[2 i + 1].
cudaError_t rotate_through_shared(const float* in, float* out, int blocks, int threads, bool sync);
/// One warp; lanes with lane % 3 == 0 return at once; the others write their value to shared memory,
/// __syncwarp(), and read the next live lane's (out[i], -1 for those that returned).
cudaError_t early_return_then_syncwarp(const int* in, int* out);
/// A block of 64: lanes 0-15 of warp 0 wait at __syncwarp(), every other thread at __syncthreads().
cudaError_t split_barriers(int* out);
/// ballots[i] = __ballot_sync(mask, in[i] != 0), any[i] = __any_sync, all[i] = __all_sync, with the
/// full mask, or the partial warp's mask when `exact_mask`.
cudaError_t votes(const int* in, unsigned* ballots, int* any, int* all, int threads, bool exact_mask);
/// A full warp's __shfl_down_sync with the partial mask 0x0000ffff (the CPU backend refuses it).
cudaError_t partial_mask_shuffle(float* data);

}  // namespace warp_test
