/// @file wgmma.hpp
/// @brief Hopper's warpgroup matrix multiply-accumulate (PTX `wgmma`, sm_90a) with TF32 operands:
/// the few PTX instructions a kernel needs, wrapped, and the host's test of whether a kernel may use them.
///
/// `wgmma.mma_async` exists on compute capability 9.0 only, and only in code compiled for the
/// architecture-specific target sm_90a. A lab whose kernels may use it is built for sm_90a where its
/// architectures hold 90 (`convlab_add_lab(... SM90A)`, cmake/ConvlabLab.cmake), and defines
/// CONVLAB_SM90A for its kernel files. In code compiled for any other target (and on the CPU
/// backend) the device wrappers below compile to nothing, so a kernel built on them computes nothing
/// there: launch it only where wgmma::loaded() says it may run.
///
/// The shapes here: `m64n64k8` products, A (64 x 8, the warpgroup's rows) from registers, laid out
/// per warp as `mma.sync.m16n8k8`'s A fragment (lane 4 g + t of warp w holds rows 16 w + g and
/// 16 w + g + 8, columns t and t + 4), B (8 x 64) read by the tensor cores from shared memory through
/// a matrix descriptor, the 32 accumulators of a lane as the PTX ISA lays them out: element i is row
/// 16 w + g + 8 (i / 2 % 2), column 8 (i / 4) + 2 t + i % 2.
#pragma once

#include <convlab/check.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CONVLAB_WGMMA_CODE 1  ///< defined in the device code compiled for sm_90a only
#endif

namespace convlab::wgmma {

/// The shared-memory matrix descriptor of a K-major TF32 operand without swizzling. Its core
/// matrices are 8 rows (along N) of 4 floats (along K), 128 contiguous bytes each; `k_step_bytes`
/// lies between core matrices next to each other along K (the descriptor's "leading dimension
/// byte offset"), `n_step_bytes` between core matrices next to each other along N (its "stride
/// dimension byte offset"). `tile`: the first core matrix, 16-byte aligned, in shared memory.
__device__ __forceinline__ std::uint64_t descriptor(const float* tile, unsigned k_step_bytes, unsigned n_step_bytes) {
#if defined(CONVLAB_WGMMA_CODE)
  const std::uint32_t address = std::uint32_t(__cvta_generic_to_shared(tile));
  return std::uint64_t((address & 0x3FFFF) >> 4) | (std::uint64_t(k_step_bytes >> 4) << 16) |
         (std::uint64_t(n_step_bytes >> 4) << 32);
#else
  (void)tile, (void)k_step_bytes, (void)n_step_bytes;
  return 0;
#endif
}

/// d += A B, one m64n64k8 TF32 product of the warpgroup, issued asynchronously (see commit() and
/// wait()). `a`: this lane's four A elements; `b`: B's descriptor; `d`: this lane's 32 accumulators.
/// The tensor cores read the operands' upper 19 bits (TF32, truncated).
__device__ __forceinline__ void mma_64x64x8(float (&d)[32], const float (&a)[4], std::uint64_t b) {
#if defined(CONVLAB_WGMMA_CODE)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "{%32, %33, %34, %35}, %36, p, 1, 1;\n}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])),
        "r"(__float_as_uint(a[3])), "l"(b), "r"(1));
#else
  (void)d, (void)a, (void)b;
#endif
}

/// Before the first product that reads registers written since the last products (the A operand,
/// the accumulators): orders those writes before the asynchronous reads.
__device__ __forceinline__ void fence() {
#if defined(CONVLAB_WGMMA_CODE)
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}

/// Closes a group of the products issued since the last commit.
__device__ __forceinline__ void commit() {
#if defined(CONVLAB_WGMMA_CODE)
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}

/// Waits until at most `N` committed groups are still running: their registers (A and the
/// accumulators) may not be read or written before.
template <int N>
__device__ __forceinline__ void wait() {
#if defined(CONVLAB_WGMMA_CODE)
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#endif
}

/// After shared memory written by the threads or by `cp.async` (the generic proxy), before
/// products read it through a descriptor (the async proxy): makes this thread's writes visible
/// to them. Then a barrier, for every thread's.
__device__ __forceinline__ void shared_writes_to_async_proxy() {
#if defined(CONVLAB_WGMMA_CODE)
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

/// Whether `kernel` (a `__global__` function built on these wrappers) runs its sm_90a code on the
/// current device: the file was built for sm_90a (CONVLAB_SM90A), the device is of compute capability
/// 9.0, and the driver loaded that code for the kernel, not a just-in-time compilation of an older
/// target's PTX (CUDA_FORCE_PTX_JIT=1 does that; the sm_90a code's PTX version is 9.0).
template <class Kernel>
bool loaded(Kernel* kernel) {
#if defined(CONVLAB_SM90A)
  int device = 0, major = 0, minor = 0;
  CONVLAB_CUDA_CHECK(cudaGetDevice(&device));
  CONVLAB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CONVLAB_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0) return false;
  cudaFuncAttributes attributes{};
  CONVLAB_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  return attributes.ptxVersion >= 90;
#else
  (void)kernel;
  return false;
#endif
}

}  // namespace convlab::wgmma
